/*
 * bench_modeler_audit.c — what the modelers answer on real data nobody here wrote:
 * every series of Extra-P's own test files (tests/data/extrap-audit/).
 *
 *   bench_modeler_audit FILE...
 *
 * (bench_audit.c counts the coded warnings on the same data.) Per modeler
 * (extrap on the means, robust on the repetitions) it counts
 *   - impossible: series whose model predicts a time <= 0, or a growing
 *     series below half its smallest measurement, somewhere on the path from
 *     the data to PMNF_HORIZON (8x) the largest measured coordinates
 *     (modeling/horizon.c);
 *   - loo_missed / loo_tested: the point with the largest coordinates left
 *     out, the series fitted again, and its measured mean outside the 95%
 *     prediction interval at that point (series with an interval);
 *   - loo_warned / loo_missed_warned: of those refits, how many carry
 *     interval_unreliable, and how many of the missed ones do;
 *   - order_dependent: the same points and repetitions in other orders
 *     (reversed, rotated, interleaved) giving other bytes (function text and
 *     prediction with interval at the horizon);
 *   - two_regimes: series carrying PMNF_WARN_TWO_REGIMES.
 * Prints one JSON line per modeler and one line per series with a problem
 * ("figure": "modeler_audit_series") so that a change can be traced.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap.h"
#include "modeling/modeler.h"

typedef struct counts {
    int series, impossible, loo_tested, loo_missed, order_dependent, two_regimes;
    int loo_tested_1p, loo_missed_1p; /* the same for one-parameter series */
    int loo_warned, loo_missed_warned; /* left-out fits carrying interval_unreliable: all, missed */
} counts;

typedef struct series_view {
    int np, n;
    double *coords, *means, *reps;
    int *start;
} series_view;

static int view_build(const ingest_experiment *e, const ingest_series *s, series_view *v)
{
    v->np = e->nparams;
    v->n = s->npoints;
    v->coords = malloc(sizeof(double) * (size_t)v->n * v->np);
    v->means = malloc(sizeof(double) * (size_t)v->n);
    v->start = malloc(sizeof(int) * (size_t)(v->n + 1));
    v->reps = malloc(sizeof(double) * (size_t)(s->rep_start[s->npoints] + 1));
    if (!v->coords || !v->means || !v->start || !v->reps)
        return -1;
    double scratch[4096];
    for (int j = 0; j < v->n; j++) {
        int r = s->rep_start[j + 1] - s->rep_start[j];
        memcpy(v->coords + (size_t)j * v->np, e->coords + (size_t)s->coord[j] * v->np,
               sizeof(double) * (size_t)v->np);
        v->means[j] = r > 0 && r <= 4096 ? pmnf_aggregate(s->values + s->rep_start[j], r,
                                                          PMNF_MEASURE_MEAN, scratch)
                                         : 0;
        v->start[j] = s->rep_start[j];
    }
    v->start[v->n] = s->rep_start[v->n];
    memcpy(v->reps, s->values, sizeof(double) * (size_t)s->rep_start[s->npoints]);
    return 0;
}

static void view_free(series_view *v)
{
    free(v->coords);
    free(v->means);
    free(v->start);
    free(v->reps);
}

/* The series without point skip (-1: all), in the order perm (NULL: as is),
 * each point's repetitions reversed when flip. */
static int view_pick(const series_view *v, int skip, const int *perm, int flip, series_view *o)
{
    o->np = v->np;
    o->n = v->n - (skip >= 0);
    o->coords = malloc(sizeof(double) * (size_t)(o->n + 1) * v->np);
    o->means = malloc(sizeof(double) * (size_t)(o->n + 1));
    o->start = malloc(sizeof(int) * (size_t)(o->n + 1));
    o->reps = malloc(sizeof(double) * (size_t)(v->start[v->n] + 1));
    if (!o->coords || !o->means || !o->start || !o->reps)
        return -1;
    int a = 0;
    o->start[0] = 0;
    for (int k = 0; k < v->n; k++) {
        int i = perm ? perm[k] : k;
        if (i == skip)
            continue;
        memcpy(o->coords + (size_t)a * v->np, v->coords + (size_t)i * v->np,
               sizeof(double) * (size_t)v->np);
        o->means[a] = v->means[i];
        int r = v->start[i + 1] - v->start[i];
        for (int q = 0; q < r; q++)
            o->reps[o->start[a] + q] = v->reps[v->start[i] + (flip ? r - 1 - q : q)];
        o->start[a + 1] = o->start[a] + r;
        a++;
    }
    return 0;
}

static int fit(pmnf_modeler *m, pmnf_modeler_kind k, const series_view *v, pmnf_model *out)
{
    char err[256];
    pmnf_data d = {v->np, v->n, v->coords, v->means};
    if (k == PMNF_MODELER_ROBUST)
        return pmnf_fit_reps(m, &d, &(pmnf_reps){v->start, v->reps}, out, err, sizeof err);
    return pmnf_fit(m, &d, out, err, sizeof err);
}

/* The bytes a client sees: the function and the prediction at the horizon,
 * whole (malloc'ed: the caller frees it); NULL when out of memory. */
static char *answer_text(const pmnf_model *md, const series_view *v)
{
    static const char *const names[PMNF_MAX_PARAMS] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    double point[PMNF_MAX_PARAMS], val, lo, hi;
    for (int p = 0; p < v->np; p++) {
        point[p] = -INFINITY;
        for (int i = 0; i < v->n; i++)
            if (v->coords[(size_t)i * v->np + p] > point[p])
                point[p] = v->coords[(size_t)i * v->np + p];
        point[p] *= PMNF_HORIZON;
    }
    char *f = pmnf_format_dup(&md->f, names);
    char *f2 = md->nsegments == 2 ? pmnf_format_dup(&md->f2, names) : NULL;
    char *text = NULL;
    pmnf_predict(md, point, &val, &lo, &hi);
    if (f && (md->nsegments != 2 || f2) &&
        asprintf(&text, "%s%s @%.17g [%.17g, %.17g] w%u", f, f2 ? f2 : "", val, lo, hi,
                 md->warnings) < 0)
        text = NULL;
    free(f);
    free(f2);
    return text;
}

/* The point with the largest coordinates (sum of their logarithms relative
 * to the smallest, the first of equals). */
static int largest_point(const series_view *v)
{
    int best = 0;
    double bestv = -INFINITY;
    for (int i = 0; i < v->n; i++) {
        double s = 0;
        for (int p = 0; p < v->np; p++) {
            double x = v->coords[(size_t)i * v->np + p];
            s += x > 0 ? log(x) : x;
        }
        if (s > bestv) {
            bestv = s;
            best = i;
        }
    }
    return best;
}

static void audit_series(pmnf_modeler *m, pmnf_modeler_kind k, const series_view *v,
                         const char *label, counts *c)
{
    pmnf_model md, again;
    if (fit(m, k, v, &md) < 0)
        return;
    c->series++;
    pmnf_data d = {v->np, v->n, v->coords, v->means};
    pmnf_path P;
    pmnf_path_init(&P, &d);
    unsigned flags = pmnf_path_check(&P, &md);
    int impossible = (flags & (PMNF_PATH_NONPOSITIVE | PMNF_PATH_COLLAPSE | PMNF_PATH_FLOOR)) != 0;
    c->impossible += impossible;
    c->two_regimes += (md.warnings & PMNF_WARN_TWO_REGIMES) != 0;
    /* leave the largest point out */
    int big = largest_point(v), missed = 0;
    series_view o = {0};
    if (v->n >= 4 && view_pick(v, big, NULL, 0, &o) == 0 && fit(m, k, &o, &again) == 0) {
        double val, lo, hi;
        if (pmnf_predict(&again, v->coords + (size_t)big * v->np, &val, &lo, &hi) == 0) {
            c->loo_tested++;
            missed = !(v->means[big] >= lo && v->means[big] <= hi);
            c->loo_missed += missed;
            int warned = (again.warnings & PMNF_WARN_INTERVAL_UNRELIABLE) != 0;
            c->loo_warned += warned;
            c->loo_missed_warned += warned && missed;
            c->loo_tested_1p += v->np == 1;
            c->loo_missed_1p += missed && v->np == 1;
        }
    }
    view_free(&o);
    /* other orders */
    char *ref = answer_text(&md, v);
    int *perm = malloc(sizeof(int) * (size_t)v->n), differs = 0;
    for (int variant = 0; ref && perm && variant < 3 && !differs; variant++) {
        for (int i = 0; i < v->n; i++)
            perm[i] = variant == 0 ? v->n - 1 - i
                      : variant == 1 ? (i + v->n / 2) % v->n
                                     : (i % 2 ? v->n - 1 - i / 2 : i / 2);
        series_view pv = {0};
        if (view_pick(v, -1, perm, variant != 1, &pv) == 0 && fit(m, k, &pv, &again) == 0) {
            char *alt = answer_text(&again, &pv);
            differs = alt && strcmp(ref, alt) != 0;
            free(alt);
        }
        view_free(&pv);
    }
    free(perm);
    free(ref);
    c->order_dependent += differs;
    if (impossible || missed || differs)
        printf("{\"figure\": \"modeler_audit_series\", \"modeler\": \"%s\", \"series\": \"%s\", "
               "\"params\": %d, \"impossible\": %d, \"loo_missed\": %d, \"order_dependent\": %d}\n",
               pmnf_modeler_name(k), label, v->np, impossible, missed, differs);
}

static int audit_file(const char *path, pmnf_modeler *ms[2], counts c[2])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)len + 1);
    if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) {
        free(data);
        fclose(f);
        return -1;
    }
    fclose(f);
    ingest_experiment e;
    ingest_error ie;
    ingest_format fmt = ingest_extrap_format_from_path(path, data, (size_t)len);
    if (fmt == INGEST_FORMAT_UNKNOWN || ingest_extrap_read(data, (size_t)len, fmt, &e, &ie) < 0) {
        free(data);
        return 1; /* not a file perfcast reads: skipped */
    }
    free(data);
    for (int i = 0; i < e.nseries; i++) {
        series_view v = {0};
        char label[512];
        snprintf(label, sizeof label, "%s:%s;%s", path, e.callpaths[e.series[i].callpath],
                 e.metrics[e.series[i].metric]);
        for (char *q = label; *q; q++)
            if (*q == '"' || *q == '\\')
                *q = '\'';
        if (e.series[i].npoints > 0 && view_build(&e, &e.series[i], &v) == 0)
            for (int k = 0; k < 2; k++)
                audit_series(ms[k], k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP, &v, label,
                             &c[k]);
        view_free(&v);
    }
    ingest_experiment_free(&e);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_modeler_audit FILE...\n");
        return 2;
    }
    pmnf_options o;
    pmnf_modeler *ms[2];
    for (int k = 0; k < 2; k++) {
        pmnf_options_default(&o);
        o.modeler = k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP;
        ms[k] = pmnf_modeler_new(&o);
        if (!ms[k])
            return 1;
    }
    counts c[2] = {{0}};
    int files = 0;
    for (int i = 1; i < argc; i++)
        files += audit_file(argv[i], ms, c) == 0;
    for (int k = 0; k < 2; k++) {
        printf("{\"figure\": \"modeler_audit\", \"modeler\": \"%s\", \"files\": %d, \"series\": %d, "
               "\"impossible\": %d, \"loo_tested\": %d, \"loo_missed\": %d, "
               "\"loo_tested_1p\": %d, \"loo_missed_1p\": %d, "
               "\"loo_warned\": %d, \"loo_missed_warned\": %d, "
               "\"order_dependent\": %d, \"two_regimes\": %d, \"horizon\": %g}\n",
               k ? "robust" : "extrap", files, c[k].series, c[k].impossible, c[k].loo_tested,
               c[k].loo_missed, c[k].loo_tested_1p, c[k].loo_missed_1p, c[k].loo_warned,
               c[k].loo_missed_warned, c[k].order_dependent,
               c[k].two_regimes, PMNF_HORIZON);
        pmnf_modeler_free(ms[k]);
    }
    return 0;
}
