/*
 * bench_modeler.c — how much sharing one pmnf_modeler across callpaths gains.
 *
 *   bench_modeler [--series1 N] [--series2 N] [--noise F] [--seed S] [--min-time SECONDS]
 *
 * Generates N single-parameter and N two-parameter series in memory with
 * gen_core.h (the data of bench/gen_pmnf.c, repetitions averaged with
 * pmnf_aggregate) and times pmnf_fit over them twice: with one modeler for
 * all series (coordinate-dependent caches reused: the fast path) and with a
 * fresh modeler per series (nothing reused: the baseline). Each pass repeats
 * until it has run at least --min-time seconds. Prints one JSON line per
 * parameter count with both rates, their ratio, and how many series the two
 * ways fitted to different functions (should be 0). The shared modeler's
 * time is also given in CPU time of the fitting thread (shared_cpu_us_per_
 * model, shared_cpu_models_per_s): on a machine shared with other work the
 * wall-clock rates vary by 2x or more between runs, the CPU time much less.
 */
#include "bench/gen_core.h"
#include "modeling/modeler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct series_set {
    gen_layout layout;
    long n;
    double coords[GEN_MAX_POINTS * GEN_MAX_PARAMS];
    double *values; /* n x layout.npoints */
} series_set;

typedef struct bench_args {
    long series[2];
    double noise, min_time;
    unsigned long long seed;
} bench_args;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n series for nparams parameters, 5 repetitions per point averaged. */
static int series_make(series_set *s, int nparams, long n, double noise, unsigned long long seed)
{
    enum { REPS = 5 };
    double reps[REPS], scratch[REPS];
    gen_rng r;
    gen_truth t;
    if (gen_layout_init(&s->layout, nparams))
        return -1;
    const gen_layout *l = &s->layout;
    for (int i = 0; i < l->npoints; i++)
        for (int p = 0; p < nparams; p++)
            s->coords[i * nparams + p] = l->points[i][p];
    s->n = n;
    s->values = malloc(sizeof *s->values * (size_t)(n ? n : 1) * (size_t)l->npoints);
    if (!s->values)
        return -1;
    gen_rng_seed(&r, seed);
    for (long k = 0; k < n; k++) {
        gen_truth_draw(&r, nparams, &t);
        for (int i = 0; i < l->npoints; i++) {
            gen_measure(&r, gen_truth_eval(&t, nparams, l->points[i]), noise, REPS, reps);
            s->values[k * l->npoints + i] = pmnf_aggregate(reps, REPS, PMNF_MEASURE_MEAN, scratch);
        }
    }
    return 0;
}

static pmnf_data series_data(const series_set *s, long k)
{
    return (pmnf_data){s->layout.nparams, s->layout.npoints, s->coords,
                       s->values + k * s->layout.npoints};
}

/* Fits every series once, with m, or with a fresh modeler each when m is
 * NULL; models[k] receives series k's model. Returns the failures. */
static long fit_all(const series_set *s, pmnf_modeler *m, const pmnf_options *o, pmnf_model *models)
{
    long failed = 0;
    char err[160];
    for (long k = 0; k < s->n; k++) {
        pmnf_data d = series_data(s, k);
        pmnf_modeler *use = m ? m : pmnf_modeler_new(o);
        if (!use || pmnf_fit(use, &d, &models[k], err, sizeof err))
            failed++;
        if (!m)
            pmnf_modeler_free(use);
    }
    return failed;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Fits per second, repeating whole passes for at least min_time seconds;
 * *cpu_rate: fits per second of this thread's CPU time. */
static double fit_rate(const series_set *s, int shared, const pmnf_options *o, double min_time,
                       pmnf_model *models, long *failed, double *cpu_rate)
{
    pmnf_modeler *m = shared ? pmnf_modeler_new(o) : NULL;
    long fits = 0;
    double t0 = now_s(), c0 = cpu_s(), elapsed;
    *cpu_rate = 0;
    *failed = 0;
    if (shared && !m)
        return 0;
    do {
        *failed += fit_all(s, m, o, models);
        fits += s->n;
        elapsed = now_s() - t0;
    } while (elapsed < min_time && s->n > 0);
    pmnf_modeler_free(m);
    double cpu = cpu_s() - c0;
    *cpu_rate = cpu > 0 ? (double)fits / cpu : 0;
    return elapsed > 0 ? (double)fits / elapsed : 0;
}

/* Series whose two models print differently. */
static long count_differing(const series_set *s, const pmnf_model *a, const pmnf_model *b)
{
    long n = 0;
    for (long k = 0; k < s->n; k++) {
        /* whole texts: two models alike in their first bytes may differ after */
        char *fa = pmnf_format_dup(&a[k].f, s->layout.names);
        char *fb = pmnf_format_dup(&b[k].f, s->layout.names);
        n += !fa || !fb || strcmp(fa, fb) != 0;
        free(fa);
        free(fb);
    }
    return n;
}

static int bench_set(int nparams, const bench_args *a, const pmnf_options *o)
{
    series_set s;
    long fail_shared, fail_fresh;
    if (series_make(&s, nparams, a->series[nparams - 1], a->noise, a->seed + (unsigned)nparams)) {
        fprintf(stderr, "bench_modeler: out of memory\n");
        return -1;
    }
    pmnf_model *shared = calloc((size_t)(s.n ? s.n : 1), sizeof *shared);
    pmnf_model *fresh = calloc((size_t)(s.n ? s.n : 1), sizeof *fresh);
    if (!shared || !fresh) {
        free(shared);
        free(fresh);
        free(s.values);
        return -1;
    }
    double cpu_shared, cpu_fresh;
    double r_shared = fit_rate(&s, 1, o, a->min_time, shared, &fail_shared, &cpu_shared);
    double r_fresh = fit_rate(&s, 0, o, a->min_time, fresh, &fail_fresh, &cpu_fresh);
    printf("{\"figure\": \"modeler_cache\", \"params\": %d, \"series\": %ld, "
           "\"shared_models_per_s\": %.1f, \"fresh_models_per_s\": %.1f, \"speedup\": %.3f, "
           "\"shared_cpu_models_per_s\": %.1f, \"shared_cpu_us_per_model\": %.3f, "
           "\"failed\": %ld, \"differing_models\": %ld}\n",
           nparams, s.n, r_shared, r_fresh, r_fresh > 0 ? r_shared / r_fresh : 0.0, cpu_shared,
           cpu_shared > 0 ? 1e6 / cpu_shared : 0.0,
           fail_shared + fail_fresh, count_differing(&s, shared, fresh));
    free(shared);
    free(fresh);
    free(s.values);
    return 0;
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){{2000, 500}, 0.05, 0.5, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        char *end;
        if (!strcmp(k, "--series1"))
            a->series[0] = strtol(v, &end, 10);
        else if (!strcmp(k, "--series2"))
            a->series[1] = strtol(v, &end, 10);
        else if (!strcmp(k, "--noise"))
            a->noise = strtod(v, &end);
        else if (!strcmp(k, "--seed"))
            a->seed = strtoull(v, &end, 10);
        else if (!strcmp(k, "--min-time"))
            a->min_time = strtod(v, &end);
        else
            return -1;
        if (end == v || *end)
            return -1;
    }
    return argc % 2 == 1 && a->series[0] >= 0 && a->series[1] >= 0 && a->noise >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_args a;
    pmnf_options o;
    if (parse_args(argc, argv, &a)) {
        fprintf(stderr, "usage: bench_modeler [--series1 N] [--series2 N] [--noise F] [--seed S] "
                        "[--min-time SECONDS]\n");
        return 2;
    }
    pmnf_options_default(&o);
    for (int p = 1; p <= 2; p++)
        if (bench_set(p, &a, &o))
            return 1;
    return 0;
}
