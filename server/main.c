/*
 * main.c — the perfcast executable: one binary, one subcommand per job.
 *
 *   perfcast serve [...]        the HTTP service (cmd_serve.c)
 *   perfcast migrate [...]      apply database migrations and exit
 *   perfcast token ACTION [...] create, list or revoke API tokens (cmd_token.c)
 *   perfcast model FILE [...]   fit PMNF models to an Extra-P input file
 *   perfcast ingest FILE [...]  what perfcast reads from a profile or trace
 *   perfcast sweep plan FILE    the commands of a sweep (cmd_sweep.c)
 *   perfcast sensitivity FILE   Taguchi S/N ranking of an Extra-P file's parameters
 *   perfcast iteration TRACE    per-step time on the critical path (cmd_iteration.c)
 *   perfcast simulate GRAPH [...] asynchronous-SGD throughput for W workers, M servers
 *
 * Each subcommand lives in its own file (cmd_*.c) and returns the process
 * exit status: 0 success, 1 failure of the machine, 2 invalid input or usage.
 */
#include <stdio.h>
#include <string.h>

#include "server/commands.h"

static void usage(FILE *to)
{
    fputs("usage: perfcast COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  serve [--listen HOST:PORT] [--database-url URL] [...]\n"
          "        serve the HTTP API (see perfcast serve --help; settings also from\n"
          "        DATABASE_URL and PERFCAST_* variables); applies migrations at start\n"
          "  migrate [--database-url URL]\n"
          "        apply pending database migrations and exit\n"
          "  token create --tenant NAME --scope read|write|admin [--expires 30d]\n"
          "  token list [--tenant NAME]\n"
          "  token revoke ID\n"
          "        manage API tokens (DATABASE_URL); a new token is printed once\n"
          "  model FILE [--format text|json|jsonl|talpas] [--measure mean|median]\n"
          "             [--options KEY=VALUE ...] [--json]\n"
          "        fit a PMNF model per (callpath, metric) of an Extra-P input file and print\n"
          "        'callpath;metric;model' lines (or JSON lines with --json)\n"
          "  ingest FILE [--format kineto|nsys|perfcast] [--rank N] [--markers LIST] [--json]\n"
          "        read a profile (PyTorch profiler trace, .json or .json.gz; Nsight Systems\n"
          "        SQLite export; perfcast JSON) and print its steps, categories and\n"
          "        callpaths (one JSON document with --json)\n"
          "  sweep plan FILE\n"
          "        print the commands of a sweep definition (every legal point x repetition),\n"
          "        or of a plan answered by the service (the missing runs), one per line\n"
          "  sensitivity FILE [--goal smaller|larger]\n"
          "        Taguchi S/N ranking of the parameters of an Extra-P input file per\n"
          "        (callpath, metric): 'callpath;metric;rank;parameter;range;normalized;best'\n"
          "  iteration TRACE [--overheads NAME|FILE] [--kernel-times FILE] [--json]\n"
          "        per step of a PyTorch profiler trace: the execution graph, host overheads\n"
          "        T1-T5, the time predicted on the critical path (with what-if kernel\n"
          "        times) against the measured one, and the GPU time breakdown\n"
          "  simulate GRAPH --bandwidth 10Gbit [--workers 1..16] [--servers 1,2] [--json]\n"
          "        simulate asynchronous SGD with W workers and M parameter servers from one\n"
          "        worker's step graph or trace (see perfcast simulate --help)\n"
          "  help   this text\n",
          to);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "migrate"))
        return cmd_migrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "token"))
        return cmd_token(argc - 1, argv + 1);
    if (!strcmp(cmd, "model"))
        return cmd_model(argc - 1, argv + 1);
    if (!strcmp(cmd, "ingest"))
        return cmd_ingest(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep"))
        return cmd_sweep(argc - 1, argv + 1);
    if (!strcmp(cmd, "sensitivity"))
        return cmd_sensitivity(argc - 1, argv + 1);
    if (!strcmp(cmd, "iteration"))
        return cmd_iteration(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate"))
        return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "perfcast: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
