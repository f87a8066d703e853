/*
 * cmd_sweep.c — sweeps and their measurements from the command line:
 *
 *   perfcast sweep plan FILE     FILE is a sweep definition (sweep/sweep_plan.h):
 *                                print the command of every legal point ×
 *                                repetition, one per line; or the answer of
 *                                POST /v1/experiments/{id}/sweep/plan: print
 *                                its commands (the runs still missing), so
 *                                `curl ... | perfcast sweep plan -` feeds a
 *                                scheduler.
 *   perfcast sensitivity FILE    FILE is an Extra-P input file: Taguchi's S/N
 *                                ranking of the parameters per (callpath,
 *                                metric), one line per parameter:
 *                                callpath;metric;rank;parameter;range;normalized;best
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap.h"
#include "server/commands.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"

static const char sweep_usage_text[] =
    "usage: perfcast sweep plan FILE\n"
    "Prints the commands of a sweep definition (every legal point x repetition), or of a\n"
    "plan answered by the service (its missing runs), one per line (\"-\": stdin).\n";
static const char sensitivity_usage_text[] =
    "usage: perfcast sensitivity FILE [--goal smaller|larger]\n"
    "Taguchi S/N ranking of the parameters of an Extra-P input file per (callpath, metric).\n";

static int sweep_usage(const char *msg)
{
    fprintf(stderr, "perfcast sweep: %s\n%s", msg, sweep_usage_text);
    return 2;
}

/* --help or -h as the only argument: usage on stdout, exit 0. */
static int asks_help(int argc, char **argv, const char *text)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(text, stdout);
        return 1;
    }
    return 0;
}

static int print_commands(const json_t *cmds, const char *path)
{
    size_t i;
    json_t *c;
    json_array_foreach(cmds, i, c)
    {
        if (!json_is_string(c)) {
            fprintf(stderr, "perfcast sweep: %s: commands[%zu] is not a string\n", path, i);
            return 2;
        }
        puts(json_string_value(c));
    }
    return 0;
}

static int print_definition(const json_t *doc, const char *path)
{
    sweep_def d;
    char field[200], err[400];
    if (sweep_def_parse(doc, &d, field, sizeof field, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sweep: %s: %s%s%s\n", path, field, *field ? ": " : "", err);
        return 2;
    }
    /* the service's limit: a plan the service would refuse is refused here */
    long legal;
    if (sweep_def_runs_check(&d, &legal, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sweep: %s: repetitions: %s\n", path, err);
        sweep_def_free(&d);
        return 2;
    }
    size_t cap = 8192;
    char *cmd = malloc(cap);
    int rc = cmd ? 0 : 1;
    sweep_runs w; /* the plan's runs, in the service's order */
    sweep_runs_start(&w);
    while (!rc && sweep_runs_next(&d, &w)) {
        if (sweep_def_command(&d, w.idx, w.rep, cmd, cap) < 0) {
            fprintf(stderr, "perfcast sweep: %s: a command is longer than %zu bytes\n", path,
                    cap);
            rc = 2;
        } else {
            puts(cmd);
        }
    }
    free(cmd);
    sweep_def_free(&d);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    if (asks_help(argc, argv, sweep_usage_text))
        return 0;
    if (argc != 3 || strcmp(argv[1], "plan"))
        return sweep_usage("expected: plan FILE");
    const char *path = argv[2];
    cli_file in;
    char err[512];
    if (cli_file_open(path, &in, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sweep: %s\n", err);
        return 2;
    }
    json_error_t je;
    json_t *doc = json_loadb(in.data, in.len, JSON_REJECT_DUPLICATES, &je);
    cli_file_close(&in);
    if (!doc) {
        fprintf(stderr, "perfcast sweep: %s: line %d, column %d (byte %d): %s\n", path, je.line,
                je.column, je.position, je.text);
        return 2;
    }
    const json_t *cmds = json_object_get(doc, "commands");
    int rc = json_is_array(cmds) ? print_commands(cmds, path) : print_definition(doc, path);
    json_decref(doc);
    fflush(stdout);
    return rc;
}

/* ---- perfcast sensitivity ---------------------------------------------------- */

static int sensitivity_series(const ingest_experiment *e, const ingest_series *s, int larger,
                              const char *path)
{
    int np = e->nparams, n = s->npoints;
    int *level = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)np);
    int *nlevels = malloc(sizeof(int) * (size_t)np);
    double *distinct = malloc(sizeof(double) * (size_t)(n ? n : 1) * (size_t)np);
    double *col = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int rc = 1;
    if (!level || !nlevels || !distinct || !col)
        goto done;
    for (int k = 0; k < np; k++) {
        for (int i = 0; i < n; i++)
            col[i] = e->coords[(size_t)s->coord[i] * np + k];
        nlevels[k] = sweep_levels_of(col, n, 1, distinct + (size_t)k * n, level + k, np);
    }
    sweep_sn_problem p = {np, n, nlevels, level, s->values, s->rep_start, larger};
    sweep_sn_result r;
    int bad;
    char err[200];
    if (sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sensitivity: %s: callpath \"%s\", metric \"%s\", point %d: %s\n",
                path, e->callpaths[s->callpath], e->metrics[s->metric], bad + 1, err);
        rc = 2;
        goto done;
    }
    for (int k = 0; k < np; k++) {
        int f = r.order[k];
        const sweep_sn_factor *fa = &r.factors[f];
        printf("%s;%s;%d;%s;%.17g;%.17g;%.17g\n", e->callpaths[s->callpath],
               e->metrics[s->metric], fa->rank, e->params[f], fa->range, fa->normalized,
               fa->best_level >= 0 ? distinct[(size_t)f * n + fa->best_level] : 0.0);
    }
    sweep_sensitivity_free(&r);
    rc = 0;
done:
    if (rc == 1)
        fprintf(stderr, "perfcast sensitivity: out of memory\n");
    free(level);
    free(nlevels);
    free(distinct);
    free(col);
    return rc;
}

int cmd_sensitivity(int argc, char **argv)
{
    if (asks_help(argc, argv, sensitivity_usage_text))
        return 0;
    const char *path = NULL;
    int larger = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--goal") && i + 1 < argc) {
            const char *g = argv[++i];
            if (strcmp(g, "smaller") && strcmp(g, "larger")) {
                fprintf(stderr, "perfcast sensitivity: --goal must be smaller or larger\n");
                return 2;
            }
            larger = !strcmp(g, "larger");
        } else if (!path && (argv[i][0] != '-' || !argv[i][1])) {
            path = argv[i];
        } else {
            fprintf(stderr, "perfcast sensitivity: unexpected \"%s\"\nusage: perfcast "
                            "sensitivity FILE [--goal smaller|larger]\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: perfcast sensitivity FILE [--goal smaller|larger]\n");
        return 2;
    }
    cli_file in;
    char err[512];
    if (cli_file_open(path, &in, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sensitivity: %s\n", err);
        return 2;
    }
    ingest_format fmt = ingest_extrap_format_from_path(path, in.data, in.len);
    ingest_experiment e;
    ingest_error ie;
    if (fmt == INGEST_FORMAT_UNKNOWN || ingest_extrap_read(in.data, in.len, fmt, &e, &ie) < 0) {
        cli_file_close(&in);
        fprintf(stderr, "perfcast sensitivity: %s: %s\n", path,
                fmt == INGEST_FORMAT_UNKNOWN ? "not an Extra-P input file (.txt, .json, .jsonl)"
                                             : ie.msg);
        return 2;
    }
    cli_file_close(&in);
    int rc = 0;
    for (int i = 0; i < e.nseries && !rc; i++)
        rc = sensitivity_series(&e, &e.series[i], larger, path);
    fflush(stdout);
    ingest_experiment_free(&e);
    return rc;
}
