/*
 * audit.h — how often a model or a prediction is doubtful without saying
 * so, on Extra-P's own test data (tests/data/extrap-audit/, copied from
 * Extra-P 4.2.5's tests/data/text with its licence). Shared by `make audit`
 * (bench/bench_audit.c, which prints the counts) and tests/test_audit.c
 * (which asserts that no problem goes without its warning).
 *
 * Every (callpath, metric) series of every file is fitted with both
 * modelers (the robust one on the repetitions) and checked for:
 *   impossible   a prediction at 2x, 4x or 8x the largest measured value of
 *                every parameter <= 0 or below half the smallest measurement
 *                (warned: negative_prediction or implausible_extrapolation on
 *                that prediction)
 *   two_regimes  a file of Extra-P's segmented tests (warned: two_regimes)
 *   poor_fit     SMAPE > 20%, or adjusted R^2 < 0.5 on data varying > 1.5x
 *                (warned: poor_fit)
 *   constant     a constant model on data varying > 2x (constant_on_varying)
 *   few_values   fewer than 5 distinct values of a parameter (few_points)
 *   interval     the farthest point left out, fitted without it and
 *                predicted: outside the 95% interval (interval_unreliable on
 *                the model or prediction without the point)
 *   order        the points and repetitions in reverse order give another
 *                model (no warning can say so: every one is silent)
 * A problem is "warned" when the relevant coded warning is there, "silent"
 * otherwise.
 */
#ifndef PERFCAST_TESTS_AUDIT_H
#define PERFCAST_TESTS_AUDIT_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/harness.h"
#include "ingest/extrap.h"
#include "modeling/assess.h"
#include "modeling/modeler.h"

enum {
    AUDIT_IMPOSSIBLE,
    AUDIT_TWO_REGIMES,
    AUDIT_POOR_FIT,
    AUDIT_CONSTANT,
    AUDIT_FEW_VALUES,
    AUDIT_INTERVAL,
    AUDIT_ORDER,
    AUDIT_NCAT
};

static const char *const audit_category[AUDIT_NCAT] = {
    "impossible", "two_regimes", "poor_fit", "constant", "few_values", "interval", "order",
};

typedef struct audit_count {
    int problems, warned, silent;
} audit_count;

typedef struct audit_result {
    int files, series, failed;
    audit_count c[2][AUDIT_NCAT]; /* [modeler: 0 extrap, 1 robust][category] */
} audit_result;

/* One series in the order of the file, and in reverse. */
typedef struct audit_series {
    int nparams, n;
    double *coords, *values, *reps;
    int *start;
} audit_series;

static void audit_series_free(audit_series *s)
{
    free(s->coords);
    free(s->values);
    free(s->reps);
    free(s->start);
    memset(s, 0, sizeof *s);
}

/* The series' points except skip (-1: all), in order or reversed (the
 * repetitions of each point reversed too). */
static int audit_series_make(const ingest_experiment *e, const ingest_series *s, int skip,
                             int reverse, audit_series *out)
{
    int k = e->nparams, n = s->npoints - (skip >= 0);
    memset(out, 0, sizeof *out);
    out->nparams = k;
    out->n = n;
    out->coords = malloc(sizeof(double) * (size_t)(n + 1) * (size_t)k);
    out->values = malloc(sizeof(double) * (size_t)(n + 1));
    out->start = malloc(sizeof(int) * (size_t)(n + 2));
    out->reps = malloc(sizeof(double) * (size_t)(s->rep_start[s->npoints] + 1));
    if (!out->coords || !out->values || !out->start || !out->reps) {
        audit_series_free(out);
        return -1;
    }
    int j = 0;
    out->start[0] = 0;
    for (int q = 0; q < s->npoints; q++) {
        int i = reverse ? s->npoints - 1 - q : q;
        if (i == skip)
            continue;
        int r0 = s->rep_start[i], nr = s->rep_start[i + 1] - r0;
        memcpy(out->coords + (size_t)j * k, e->coords + (size_t)s->coord[i] * k,
               sizeof(double) * (size_t)k);
        double sum = 0;
        for (int r = 0; r < nr; r++) {
            double v = s->values[r0 + (reverse ? nr - 1 - r : r)];
            out->reps[out->start[j] + r] = v;
            sum += v;
        }
        out->values[j] = sum / nr;
        out->start[j + 1] = out->start[j] + nr;
        j++;
    }
    return 0;
}

static int audit_fit(pmnf_modeler *m, const audit_series *s, pmnf_model *out)
{
    char err[256];
    pmnf_data d = {s->nparams, s->n, s->coords, s->values};
    pmnf_reps r = {s->start, s->reps};
    return pmnf_fit_reps(m, &d, &r, out, err, sizeof err);
}

/* The farthest point of the series: the largest sum of positions in each
 * parameter's measured range (the largest point for one parameter). */
static int audit_farthest(const ingest_experiment *e, const ingest_series *s)
{
    double lo[PMNF_MAX_PARAMS], hi[PMNF_MAX_PARAMS];
    int k = e->nparams, best = 0;
    for (int p = 0; p < k; p++) {
        lo[p] = INFINITY;
        hi[p] = -INFINITY;
        for (int i = 0; i < s->npoints; i++) {
            double x = e->coords[(size_t)s->coord[i] * k + p];
            lo[p] = fmin(lo[p], x);
            hi[p] = fmax(hi[p], x);
        }
    }
    double best_pos = -INFINITY;
    for (int i = 0; i < s->npoints; i++) {
        double pos = 0;
        for (int p = 0; p < k; p++) {
            double x = e->coords[(size_t)s->coord[i] * k + p];
            pos += hi[p] > lo[p] ? (x - lo[p]) / (hi[p] - lo[p]) : 0;
        }
        if (pos > best_pos) {
            best_pos = pos;
            best = i;
        }
    }
    return best;
}

static void audit_count_one(audit_result *r, int mk, int cat, int problem, int warned,
                            const char *what, FILE *log)
{
    if (!problem)
        return;
    audit_count *c = &r->c[mk][cat];
    c->problems++;
    if (warned) {
        c->warned++;
        return;
    }
    c->silent++;
    if (log)
        fprintf(log, "silent %s %s: %s\n", mk ? "robust" : "extrap", audit_category[cat], what);
}

/* Equal to 9 significant digits: sums over the points in another order
 * differ in their last bits, which is not another model. */
static int audit_close(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) || fabs(a - b) < 1e-300;
}

static int audit_same_model(const pmnf_model *a, const pmnf_model *b)
{
    if (a->f.nterms != b->f.nterms || !audit_close(a->f.constant, b->f.constant))
        return 0;
    for (int t = 0; t < a->f.nterms; t++)
        if (!audit_close(a->f.terms[t].coef, b->f.terms[t].coef) ||
            memcmp(a->f.terms[t].factors, b->f.terms[t].factors,
                   sizeof(pmnf_factor) * (size_t)a->f.terms[t].nfactors))
            return 0;
    return 1;
}

/* The checks of one series with one modeler. -1: a fit failed. */
static int audit_series_check(pmnf_modeler *m, int mk, const ingest_experiment *e,
                              const ingest_series *s, int segmented, const char *name,
                              audit_result *r, FILE *log)
{
    audit_series all, rev, less;
    pmnf_model model, other, left;
    char what[1400];
    snprintf(what, sizeof what, "%.600s %.300s;%.300s", name, e->callpaths[s->callpath],
             e->metrics[s->metric]);
    memset(&model, 0, sizeof model);
    if (audit_series_make(e, s, -1, 0, &all) < 0)
        return -1;
    int rc = audit_fit(m, &all, &model);
    const pmnf_diagnostics *g = &model.diag;
    unsigned w = model.warnings;
    /* impossible predictions within 8x */
    int impossible = 0, warned = 1;
    for (int f = 2; rc == 0 && f <= 8; f *= 2) {
        double pt[PMNF_MAX_PARAMS];
        for (int p = 0; p < e->nparams; p++)
            pt[p] = f * g->hi[p];
        pmnf_point_check pc;
        pmnf_assess_point(&model, pt, &pc);
        if (!(pc.value > 0) || (g->vmin > 0 && pc.value < PMNF_IMPLAUSIBLE_FRACTION * g->vmin)) {
            impossible = 1;
            warned &= (pc.warnings & (PMNF_WARN_NEGATIVE_PREDICTION |
                                      PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION)) != 0;
        }
    }
    double spread = g->vmin > 0 ? g->vmax / g->vmin : (g->vmax > g->vmin ? INFINITY : 1);
    int few = 0;
    for (int p = 0; p < e->nparams; p++)
        few |= g->distinct[p] < 5;
    if (rc == 0) {
        audit_count_one(r, mk, AUDIT_IMPOSSIBLE, impossible, warned, what, log);
        audit_count_one(r, mk, AUDIT_TWO_REGIMES, segmented, w & PMNF_WARN_TWO_REGIMES, what, log);
        audit_count_one(r, mk, AUDIT_POOR_FIT,
                        (g->vmin > 0 && model.smape > 20) || (model.ar2 < 0.5 && spread > 1.5),
                        w & PMNF_WARN_POOR_FIT, what, log);
        audit_count_one(r, mk, AUDIT_CONSTANT, model.f.nterms == 0 && spread > 2,
                        w & PMNF_WARN_CONSTANT_ON_VARYING, what, log);
        audit_count_one(r, mk, AUDIT_FEW_VALUES, few, w & PMNF_WARN_FEW_POINTS, what, log);
    }
    /* the farthest point left out and predicted */
    int far = audit_farthest(e, s);
    if (rc == 0 && s->npoints > 2 && audit_series_make(e, s, far, 0, &less) == 0) {
        if (audit_fit(m, &less, &left) == 0) {
            const double *x = e->coords + (size_t)s->coord[far] * e->nparams;
            double v, lo, hi, y = 0;
            int nr = s->rep_start[far + 1] - s->rep_start[far];
            for (int q = s->rep_start[far]; q < s->rep_start[far + 1]; q++)
                y += s->values[q];
            y /= nr;
            pmnf_point_check pc;
            pmnf_assess_point(&left, x, &pc);
            if (pmnf_predict(&left, x, &v, &lo, &hi) == 0)
                audit_count_one(r, mk, AUDIT_INTERVAL, y < lo || y > hi,
                                (left.warnings | pc.warnings) & PMNF_WARN_INTERVAL_UNRELIABLE,
                                what, log);
        }
        audit_series_free(&less);
    }
    /* another order */
    if (rc == 0 && audit_series_make(e, s, -1, 1, &rev) == 0) {
        if (audit_fit(m, &rev, &other) == 0)
            audit_count_one(r, mk, AUDIT_ORDER, !audit_same_model(&model, &other), 0, what, log);
        audit_series_free(&rev);
    }
    audit_series_free(&all);
    return rc;
}

/* Every series of one Extra-P text file; name is its path under the audit
 * folder. */
static void audit_file(pmnf_modeler *mods[2], const char *path, const char *name,
                       audit_result *r, FILE *log)
{
    size_t len;
    char *buf = harness_read_file(path, &len);
    ingest_experiment e;
    ingest_error ie;
    if (!buf || ingest_extrap_read(buf, len, INGEST_FORMAT_EXTRAP_TEXT, &e, &ie) < 0) {
        if (log)
            fprintf(log, "%s: cannot read: %s\n", name, buf ? ie.msg : "no such file");
        free(buf);
        r->failed++;
        return;
    }
    free(buf);
    r->files++;
    int segmented = strstr(name, "segmented") != NULL;
    for (int i = 0; i < e.nseries; i++) {
        r->series++;
        for (int mk = 0; mk < 2; mk++)
            if (audit_series_check(mods[mk], mk, &e, &e.series[i], segmented, name, r, log) < 0)
                r->failed++;
    }
    ingest_experiment_free(&e);
}

static int audit_is_text(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".txt");
}

/* Every .txt file under dir (recursively, in name order). */
static void audit_dir_walk(pmnf_modeler *mods[2], const char *dir, const char *prefix,
                           audit_result *r, FILE *log)
{
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0) {
        r->failed++;
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        char path[1024], name[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        snprintf(name, sizeof name, "%s%s", prefix, nm);
        if (nm[0] != '.' && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                strncat(name, "/", sizeof name - strlen(name) - 1);
                audit_dir_walk(mods, path, name, r, log);
            } else if (audit_is_text(nm)) {
                audit_file(mods, path, name, r, log);
            }
        }
        free(list[i]);
    }
    free(list);
}

/* The whole audit of the folder; silent problems and unreadable files are
 * listed on log (may be NULL). 0, or -1 when out of memory. */
static int audit_run(const char *dir, audit_result *r, FILE *log)
{
    memset(r, 0, sizeof *r);
    pmnf_options o;
    pmnf_modeler *mods[2];
    pmnf_options_default(&o);
    mods[0] = pmnf_modeler_new(&o);
    o.modeler = PMNF_MODELER_ROBUST;
    mods[1] = pmnf_modeler_new(&o);
    if (mods[0] && mods[1])
        audit_dir_walk(mods, dir, "", r, log);
    int rc = mods[0] && mods[1] ? 0 : -1;
    pmnf_modeler_free(mods[0]);
    pmnf_modeler_free(mods[1]);
    return rc;
}

#endif
