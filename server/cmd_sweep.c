/*
 * cmd_sweep.c — sweeps and their measurements from the command line:
 *
 *   perfcast sweep plan FILE     FILE is a sweep definition (sweep/sweep_plan.h):
 *                                print the command of every legal point ×
 *                                repetition, one per line (refused, exit 2,
 *                                where a legal point has ranks <= 0, as the
 *                                service refuses it: analysis/plan.h); or the
 *                                answer of POST /v1/experiments/{id}/sweep/
 *                                plan: print
 *                                its commands (the runs still missing), so
 *                                `curl ... | perfcast sweep plan -` feeds a
 *                                scheduler.
 *   perfcast sensitivity FILE    FILE is an Extra-P input file: Taguchi's S/N
 *                                ranking of the parameters per (callpath,
 *                                metric), one line per parameter:
 *                                callpath;metric;rank;parameter;range;normalized;best
 *                                --over efficiency [--parameter P]
 *                                [--baseline V]: of the scaling efficiency
 *                                SE = t_baseline / t of each repetition
 *                                along P (paper 003 §3.2, Fig. 12;
 *                                sweep_se_baselines), larger is better.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plan.h"
#include "ingest/extrap.h"
#include "server/commands.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"

static const char sweep_usage_text[] =
    "usage: perfcast sweep plan FILE\n"
    "Prints the commands of a sweep definition (every legal point x repetition), or of a\n"
    "plan answered by the service (its missing runs), one per line (\"-\": stdin).\n"
    "A definition's parameter or constant \"ranks\" is the rank count: a legal point where\n"
    "it is 0 or below is refused (exit 2), as the service refuses the plan.\n";
static const char sensitivity_usage_text[] =
    "usage: perfcast sensitivity FILE [--goal smaller|larger]\n"
    "       perfcast sensitivity FILE --over efficiency [--parameter P] [--baseline V]\n"
    "Taguchi S/N ranking of the parameters of an Extra-P input file per (callpath, metric):\n"
    "of the values themselves (--over time, the default; smaller is better unless --goal\n"
    "larger), or of the scaling efficiency SE = t_baseline / t of each repetition along P\n"
    "(default the first parameter), t_baseline the mean at P = V (default the smallest\n"
    "measured) with the other parameters alike; larger is better.\n";

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
    /* ... and so is a legal point without ranks (ranks <= 0), nothing printed */
    an_problem p;
    if (plan_check_ranks(&d, &p) < 0) {
        fprintf(stderr, "perfcast sweep: %s: %s%s%s\n", path, p.field, *p.field ? ": " : "",
                p.msg);
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

/* How perfcast sensitivity reads a series. */
typedef struct sens_opts {
    int larger;
    int efficiency;        /* over the scaling efficiency along parameter q */
    int q;
    int has_baseline;
    double baseline;
} sens_opts;

/* The runs of s the S/N is over, with their points and observations: every
 * run with the values as measured, or (efficiency) the runs with a baseline,
 * each repetition's SE = t_baseline / t. Returns how many, -1 when out of
 * memory; orig[k] the index in s of run k, *left_out the runs without a
 * baseline. */
static int series_runs(const ingest_experiment *e, const ingest_series *s, const sens_opts *o,
                       double *pts, double *y, int *off, int *orig, int *left_out)
{
    int np = e->nparams, n = s->npoints, m = 0;
    double *base = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double *all = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)(np > 0 ? np : 1));
    if (!base || !all) {
        free(base);
        free(all);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        memcpy(all + (size_t)i * np, e->coords + (size_t)s->coord[i] * np,
               sizeof(double) * (size_t)np);
        base[i] = 1;
    }
    if (o->efficiency && sweep_se_baselines(all, np, n, NULL, o->q,
                                            o->has_baseline ? &o->baseline : NULL, s->values,
                                            s->rep_start, base) < 0) {
        free(base);
        free(all);
        return -1;
    }
    off[0] = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(base[i]))
            continue;
        memcpy(pts + (size_t)m * np, all + (size_t)i * np, sizeof(double) * (size_t)np);
        orig[m] = i;
        off[m + 1] = off[m];
        for (int k = s->rep_start[i]; k < s->rep_start[i + 1]; k++)
            y[off[m + 1]++] = o->efficiency ? base[i] / s->values[k] : s->values[k];
        m++;
    }
    *left_out = n - m;
    free(base);
    free(all);
    return m;
}

static int sensitivity_series(const ingest_experiment *e, const ingest_series *s,
                              const sens_opts *o, const char *path)
{
    int np = e->nparams, n = s->npoints;
    size_t n1 = n > 0 ? (size_t)n : 1, np1 = np > 0 ? (size_t)np : 1;
    size_t nv = (size_t)(n > 0 ? s->rep_start[n] : 0);
    int *level = malloc(sizeof(int) * n1 * np1);
    int *nlevels = malloc(sizeof(int) * np1);
    int *off = malloc(sizeof(int) * (n1 + 1)), *orig = malloc(sizeof(int) * n1);
    double *distinct = malloc(sizeof(double) * n1 * np1);
    double *col = malloc(sizeof(double) * n1);
    double *pts = malloc(sizeof(double) * n1 * np1);
    double *y = malloc(sizeof(double) * (nv ? nv : 1));
    int rc = 1, left_out = 0, m = -1;
    if (!level || !nlevels || !off || !orig || !distinct || !col || !pts || !y ||
        (m = series_runs(e, s, o, pts, y, off, orig, &left_out)) < 0)
        goto done;
    if (m == 0) {
        fprintf(stderr, "perfcast sensitivity: %s: callpath \"%s\", metric \"%s\": no run has its "
                        "baseline (%s = %.17g) measured\n",
                path, e->callpaths[s->callpath], e->metrics[s->metric], e->params[o->q],
                o->baseline);
        rc = 2;
        goto done;
    }
    if (left_out)
        fprintf(stderr, "perfcast sensitivity: %s: callpath \"%s\", metric \"%s\": %d of %d runs "
                        "left out: their baseline was not measured\n",
                path, e->callpaths[s->callpath], e->metrics[s->metric], left_out, n);
    for (int k = 0; k < np; k++) {
        for (int i = 0; i < m; i++)
            col[i] = pts[(size_t)i * np + k];
        nlevels[k] = sweep_levels_of(col, m, 1, distinct + (size_t)k * n1, level + k, np);
    }
    sweep_sn_problem p = {np, m, nlevels, level, y, off, o->larger};
    sweep_sn_result r;
    int bad;
    char err[200];
    if (sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast sensitivity: %s: callpath \"%s\", metric \"%s\", point %d: %s\n",
                path, e->callpaths[s->callpath], e->metrics[s->metric],
                bad >= 0 ? orig[bad] + 1 : 0, err);
        rc = 2;
        goto done;
    }
    for (int k = 0; k < np; k++) {
        int f = r.order[k];
        const sweep_sn_factor *fa = &r.factors[f];
        printf("%s;%s;%d;%s;%.17g;%.17g;%.17g\n", e->callpaths[s->callpath],
               e->metrics[s->metric], fa->rank, e->params[f], fa->range, fa->normalized,
               fa->best_level >= 0 ? distinct[(size_t)f * n1 + fa->best_level] : 0.0);
    }
    sweep_sensitivity_free(&r);
    rc = 0;
done:
    if (rc == 1)
        fprintf(stderr, "perfcast sensitivity: out of memory\n");
    free(level);
    free(nlevels);
    free(off);
    free(orig);
    free(distinct);
    free(col);
    free(pts);
    free(y);
    return rc;
}

static int sensitivity_fail(const char *msg, const char *arg)
{
    fprintf(stderr, "perfcast sensitivity: %s%s%s%s\n%s", msg, arg ? " \"" : "", arg ? arg : "",
            arg ? "\"" : "", sensitivity_usage_text);
    return 2;
}

int cmd_sensitivity(int argc, char **argv)
{
    if (asks_help(argc, argv, sensitivity_usage_text))
        return 0;
    const char *path = NULL, *goal = NULL, *over = NULL, *param = NULL, *baseline = NULL;
    for (int i = 1; i < argc; i++) {
        const char **opt = !strcmp(argv[i], "--goal")        ? &goal
                           : !strcmp(argv[i], "--over")      ? &over
                           : !strcmp(argv[i], "--parameter") ? &param
                           : !strcmp(argv[i], "--baseline")  ? &baseline
                                                             : NULL;
        if (opt && i + 1 < argc && !*opt)
            *opt = argv[++i];
        else if (opt)
            return sensitivity_fail(*opt ? "given twice:" : "a value is missing after", argv[i]);
        else if (!path && (argv[i][0] != '-' || !argv[i][1]))
            path = argv[i];
        else
            return sensitivity_fail("unexpected", argv[i]);
    }
    sens_opts o = {0};
    if (goal && strcmp(goal, "smaller") && strcmp(goal, "larger"))
        return sensitivity_fail("--goal must be smaller or larger, got", goal);
    if (over && strcmp(over, "time") && strcmp(over, "efficiency"))
        return sensitivity_fail("--over must be time or efficiency, got", over);
    o.efficiency = over && !strcmp(over, "efficiency");
    o.larger = goal ? !strcmp(goal, "larger") : o.efficiency;
    if (o.efficiency && goal && !o.larger)
        return sensitivity_fail("--over efficiency: larger efficiency is better, not --goal",
                                goal);
    if (!o.efficiency && (param || baseline))
        return sensitivity_fail(param ? "only with --over efficiency:" : "only with --over "
                                "efficiency:", param ? "--parameter" : "--baseline");
    if (baseline) {
        char *end = NULL;
        o.baseline = strtod(baseline, &end);
        if (!*baseline || *end || !isfinite(o.baseline) || !(o.baseline > 0))
            return sensitivity_fail("--baseline must be a number > 0, got", baseline);
        o.has_baseline = 1;
    }
    if (!path)
        return sensitivity_fail("no FILE", NULL);
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
    if (param) {
        o.q = -1;
        for (int k = 0; k < e.nparams; k++)
            o.q = !strcmp(e.params[k], param) ? k : o.q;
        if (o.q < 0) {
            fprintf(stderr, "perfcast sensitivity: %s: --parameter \"%s\" is not a parameter of "
                            "the file\n", path, param);
            rc = 2;
        }
    }
    for (int i = 0; i < e.nseries && !rc; i++)
        rc = sensitivity_series(&e, &e.series[i], &o, path);
    fflush(stdout);
    ingest_experiment_free(&e);
    return rc;
}
