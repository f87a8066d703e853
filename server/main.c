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
 *   perfcast upload [...] FILE  send profiles to a server (cmd_upload.c)
 *   perfcast ci-check [...]     compare two commits' models (cmd_cicheck.c)
 *   perfcast help [CMD], perfcast CMD --help, perfcast --version
 *
 * main() turns GSL's aborting error handler off first (pmnf_numeric_init),
 * for the server and every command. Each subcommand lives in its own file
 * (cmd_*.c) and returns the process exit status: 0 success, 1 failure of the machine, 2 invalid input or usage.
 */
#include <stdio.h>
#include <string.h>

#include "common/version.h"
#include "ingest/format.h"
#include "modeling/modeler.h"
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
          "  sensitivity FILE [--goal smaller|larger] [--over time|efficiency]\n"
          "        Taguchi S/N ranking of the parameters of an Extra-P input file per\n"
          "        (callpath, metric): 'callpath;metric;rank;parameter;range;normalized;best';\n"
          "        --over efficiency [--parameter P] [--baseline V]: of the scaling efficiency\n"
          "        SE = t_baseline / t of each repetition along P (paper 003 §3.2)\n"
          "  iteration TRACE [--overheads NAME|FILE] [--kernel-times FILE] [--json]\n"
          "        per step of a PyTorch profiler trace: the execution graph, host overheads\n"
          "        T1-T5, the time predicted on the critical path (with what-if kernel\n"
          "        times) against the measured one, and the GPU time breakdown\n"
          "  simulate GRAPH --bandwidth 10Gbit [--workers 1..16] [--servers 1,2] [--json]\n"
          "        simulate asynchronous SGD with W workers and M parameter servers from one\n"
          "        worker's step graph or trace (see perfcast simulate --help)\n"
          "  upload --url URL --experiment ID [--point ranks=8] [--commit SHA] [--branch B]\n"
          "         [--ci-run R] [--token T] FILE...\n"
          "        send profiles to a perfcast server (one upload per file)\n"
          "  ci-check --url URL --experiment ID --base REF --head REF [--threshold 5%]\n"
          "           [--at ranks=512] [--token T] [--json|--markdown]\n"
          "        compare the models of two commits; exit 1 on a scaling regression\n"
          "  help [COMMAND]   this text, or a command's usage (also COMMAND --help)\n"
          "  --version, -V    the version\n",
          to);
    fprintf(to, "\ningest formats: %s\n", ingest_kind_names());
}

typedef int (*command_fn)(int argc, char **argv);

static const struct {
    const char *name;
    command_fn fn;
} commands[] = {
    {"serve", cmd_serve},   {"migrate", cmd_migrate}, {"token", cmd_token},
    {"model", cmd_model},   {"ingest", cmd_ingest},   {"ci-check", cmd_cicheck},
    {"upload", cmd_upload}, {"sweep", cmd_sweep},     {"sensitivity", cmd_sensitivity},
    {"iteration", cmd_iteration}, {"simulate", cmd_simulate},
};

static command_fn find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(commands[i].name, name))
            return commands[i].fn;
    return NULL;
}

/* `perfcast help CMD`: the command's own --help. */
static int help_of(const char *name)
{
    command_fn fn = find_command(name);
    if (!fn) {
        fprintf(stderr, "perfcast: unknown command \"%s\"\n", name);
        usage(stderr);
        return 2;
    }
    char *args[] = {(char *)name, "--help", NULL};
    return fn(2, args);
}

int main(int argc, char **argv)
{
    /* before any thread: numeric faults in GSL are statuses, never aborts */
    pmnf_numeric_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    command_fn fn = find_command(cmd);
    if (fn)
        return fn(argc - 1, argv + 1);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        printf("perfcast %s\n", PERFCAST_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") && argc > 2)
        return help_of(argv[2]);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "perfcast: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
