/*
 * bench_robust.c — the robust modeler against Extra-P's on noisy data with
 * known truth, in one run.
 *
 *   bench_robust [--series1 N] [--series2 N] [--seeds S1,S2,...] [--min-time SECONDS]
 *
 * For each set (1 parameter at 2%, 10% and 15% noise, 2 parameters at 2% and
 * 10%, 5 repetitions per point; and without repetitions 1 parameter at 2%,
 * 5% and 15%, 2 parameters at 10%) and each seed, the series of bench/gen_pmnf.c
 * are generated in memory (gen_core.h: the same data gen_pmnf writes for the
 * same seed) and fitted by both modelers: Extra-P's on the means of the
 * repetitions, the robust one on the repetitions. Scoring follows
 * bench/score_models.c (and the reference score_models.py): term recovery
 * (each parameter's lead exponent pair equals the truth's block) and the
 * absolute percentage errors at the held-out points 2-8x beyond the
 * measured range (median and element int(0.9 n) of all errors pooled over
 * the seeds). Besides: how often the 95% prediction interval at those points
 * holds a new measurement there (the mean of 5 fresh repetitions from a
 * generator of its own: what a prediction interval promises, and the
 * coverage target) and the true value (overall and per held-out point,
 * nearest first), its mean width
 * in percent of the true value, how often the warning interval_unreliable
 * is on a model and how often a new measurement falls outside the interval
 * with and without it (miss_rate_warned, miss_rate_unwarned: the warning is
 * useful when the first is well above 5% and the second near or below it),
 * and the time per model (thread CPU time of
 * the fastest of alternating passes of the two modelers over the same
 * series). Prints one JSON line per set and modeler, then one line per set
 * comparing the two with the targets (robust p90 <= 0.7x Extra-P's and
 * recovery +10 points at 10-15% noise, p90 <= 7% for two parameters at 10%,
 * p90 within 0.2 points and recovery within 1 point at 2%; without
 * repetitions p90 and median no higher than Extra-P's; time <= 3x,
 * coverage 90-98%), and with the absolute goals where there are some (p90
 * <= 16% for one parameter at 15% noise, <= 3.5% for two at 10%).
 */
#include "bench/gen_core.h"
#include "modeling/modeler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 5
#define MAX_SEEDS 16

typedef struct bench_args {
    long series[2];
    unsigned long long seeds[MAX_SEEDS];
    int nseeds;
    double min_time;
} bench_args;

typedef struct set_data {
    gen_layout l;
    long n;
    double noise;
    int reps_per_point; /* 5, or 1 (no repetitions) */
    unsigned long long seed;
    double coords[GEN_MAX_POINTS * GEN_MAX_PARAMS];
    int rep_start[GEN_MAX_POINTS + 1];
    gen_truth *truth; /* n */
    double *reps;     /* n x npoints x reps */
    double *means;    /* n x npoints */
} set_data;

typedef struct tally {
    long models, hits, covered, intervals;
    long covered_measured; /* a fresh measured mean at the point inside the interval */
    double width_sum, seconds;
    long cov_at[4], n_at[4];
    long unreliable;                   /* models with interval_unreliable */
    long missed_warned, evals_warned;  /* new measurements outside the interval, with the warning */
    long missed_quiet, evals_quiet;    /* and without */
    long fits;
    double *errs;
    size_t nerrs, cap;
} tally;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: what other processes on a shared machine take
 * does not count against either modeler. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int set_make(set_data *s, int nparams, long n, double noise, int reps,
                    unsigned long long seed)
{
    gen_rng r;
    if (gen_layout_init(&s->l, nparams))
        return -1;
    int np = s->l.npoints;
    for (int i = 0; i < np; i++)
        for (int p = 0; p < nparams; p++)
            s->coords[i * nparams + p] = s->l.points[i][p];
    for (int i = 0; i <= np; i++)
        s->rep_start[i] = i * reps;
    s->n = n;
    s->noise = noise;
    s->reps_per_point = reps;
    s->seed = seed;
    s->truth = malloc(sizeof *s->truth * (size_t)(n ? n : 1));
    s->reps = malloc(sizeof *s->reps * (size_t)(n ? n : 1) * np * reps);
    s->means = malloc(sizeof *s->means * (size_t)(n ? n : 1) * np);
    if (!s->truth || !s->reps || !s->means)
        return -1;
    gen_rng_seed(&r, seed);
    double scratch[MAX_REPS];
    for (long k = 0; k < n; k++) {
        gen_truth_draw(&r, nparams, &s->truth[k]);
        for (int i = 0; i < np; i++) {
            double *rp = s->reps + ((size_t)k * np + i) * reps;
            gen_measure(&r, gen_truth_eval(&s->truth[k], nparams, s->l.points[i]), noise, reps, rp);
            s->means[k * np + i] = pmnf_aggregate(rp, reps, PMNF_MEASURE_MEAN, scratch);
        }
    }
    return 0;
}

static void set_free(set_data *s)
{
    free(s->truth);
    free(s->reps);
    free(s->means);
}

static int add_err(tally *t, double e)
{
    if (t->nerrs == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        double *v = realloc(t->errs, cap * sizeof *v);
        if (!v)
            return -1;
        t->errs = v;
        t->cap = cap;
    }
    t->errs[t->nerrs++] = isnan(e) ? INFINITY : e;
    return 0;
}

/* score_models.c's lead exponents: the largest (poly, log) pair of p on the 1e-4 grid. */
static int recovered(const pmnf_function *f, const gen_truth *t, int nparams)
{
    for (int p = 0; p < nparams; p++) {
        long long kp0 = 0, kl0 = 0;
        for (int k = 0; k < f->nterms; k++) {
            double poly, log;
            pmnf_term_exponents(&f->terms[k], p, &poly, &log);
            long long kp = llround(poly * 1e4), kl = llround(log * 1e4);
            if (kp > kp0 || (kp == kp0 && kl > kl0)) {
                kp0 = kp;
                kl0 = kl;
            }
        }
        const gen_block *b = &GEN_BLOCKS[t->blocks[p]];
        if (kp0 != llround((double)b->num / b->den * 1e4) || kl0 != llround(b->log * 1e4))
            return 0;
    }
    return 1;
}

static int score_model(tally *t, const pmnf_model *m, const set_data *s, long k)
{
    int np = s->l.nparams;
    int warned = (m->warnings & PMNF_WARN_INTERVAL_UNRELIABLE) != 0;
    t->models++;
    t->unreliable += warned;
    t->hits += recovered(&m->f, &s->truth[k], np);
    for (int e = 0; e < s->l.neval; e++) {
        double want = gen_truth_eval(&s->truth[k], np, s->l.eval[e]);
        double v, lo, hi;
        int none = pmnf_predict(m, s->l.eval[e], &v, &lo, &hi);
        if (add_err(t, fabs(v - want) / fabs(want) * 100))
            return -1;
        t->intervals++;
        t->covered += !none && lo <= want && want <= hi;
        /* what a prediction interval promises: a new measurement there (the
         * mean of as many repetitions as measured, from a generator of its own) */
        gen_rng r;
        int nr = s->reps_per_point;
        double rep[MAX_REPS], scratch[MAX_REPS];
        gen_rng_seed(&r, s->seed * 1000003ULL + (unsigned long long)k * 64 + (unsigned)e + 1);
        gen_measure(&r, want, s->noise, nr, rep);
        double meas = pmnf_aggregate(rep, nr, PMNF_MEASURE_MEAN, scratch);
        t->covered_measured += !none && lo <= meas && meas <= hi;
        if (!none) {
            int miss = !(lo <= meas && meas <= hi);
            t->missed_warned += warned && miss;
            t->evals_warned += warned;
            t->missed_quiet += !warned && miss;
            t->evals_quiet += !warned;
        }
        if (e < 4) {
            t->cov_at[e] += !none && lo <= want && want <= hi;
            t->n_at[e]++;
        }
        t->width_sum += none ? 0 : (hi - lo) / fabs(want) * 100;
    }
    return 0;
}

/* Fits all series of s with modeler kind, scoring them when t is given; returns fits or -1. */
static long fit_all(const set_data *s, pmnf_modeler_kind kind, tally *t)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = kind;
    pmnf_modeler *m = pmnf_modeler_new(&o);
    if (!m)
        return -1;
    int np = s->l.npoints;
    char err[160];
    for (long k = 0; k < s->n; k++) {
        pmnf_data d = {s->l.nparams, np, s->coords, s->means + k * np};
        pmnf_reps r = {s->rep_start, s->reps + (size_t)k * np * s->reps_per_point};
        pmnf_model model;
        int rc = kind == PMNF_MODELER_ROBUST ? pmnf_fit_reps(m, &d, &r, &model, err, sizeof err)
                                            : pmnf_fit(m, &d, &model, err, sizeof err);
        if (rc < 0 || (t && score_model(t, &model, s, k) < 0)) {
            pmnf_modeler_free(m);
            return -1;
        }
    }
    pmnf_modeler_free(m);
    return s->n;
}

/* Scores both modelers on s, then times them in alternating passes until
 * min_time has passed (at least 3 each); the fastest pass of each counts,
 * which keeps the ratio honest on a loaded machine. */
static int timed_fits(const set_data *s, double min_time, tally *t)
{
    if (fit_all(s, PMNF_MODELER_EXTRAP, &t[0]) < 0 || fit_all(s, PMNF_MODELER_ROBUST, &t[1]) < 0)
        return -1;
    double best[2] = {INFINITY, INFINITY}, t0 = now_s();
    for (int round = 0; round < 3 || now_s() - t0 < min_time; round++) {
        for (int k = 0; k < 2; k++) {
            double a = cpu_s();
            if (fit_all(s, k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP, NULL) < 0)
                return -1;
            double el = cpu_s() - a;
            if (el < best[k])
                best[k] = el;
        }
    }
    for (int k = 0; k < 2; k++) {
        t[k].seconds += best[k];
        t[k].fits += s->n;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct summary {
    double recovery, median, p90, coverage, coverage_measured, width, us_per_model;
    double unreliable, miss_warned, miss_quiet;
} summary;

static summary summarize(tally *t)
{
    summary r = {0};
    qsort(t->errs, t->nerrs, sizeof *t->errs, cmp_double);
    r.recovery = t->models ? (double)t->hits / (double)t->models : 0;
    r.median = t->nerrs ? t->errs[t->nerrs / 2] : NAN;
    r.p90 = t->nerrs ? t->errs[(size_t)((double)t->nerrs * 0.9)] : NAN;
    r.coverage = t->intervals ? (double)t->covered / (double)t->intervals : 0;
    r.coverage_measured = t->intervals ? (double)t->covered_measured / (double)t->intervals : 0;
    r.width = t->intervals ? t->width_sum / (double)t->intervals : 0;
    r.us_per_model = t->fits ? t->seconds / (double)t->fits * 1e6 : 0;
    r.unreliable = t->models ? (double)t->unreliable / (double)t->models : 0;
    r.miss_warned = t->evals_warned ? (double)t->missed_warned / (double)t->evals_warned : 0;
    r.miss_quiet = t->evals_quiet ? (double)t->missed_quiet / (double)t->evals_quiet : 0;
    return r;
}

static void print_summary(const char *set, const char *modeler, const summary *r, const tally *t)
{
    printf("{\"figure\": \"robust_modeler\", \"set\": \"%s\", \"modeler\": \"%s\", \"models\": %ld, "
           "\"term_recovery\": %.4f, \"extrapolation_ape_median\": %.3f, "
           "\"extrapolation_ape_p90\": %.3f, \"interval_coverage\": %.4f, "
           "\"interval_coverage_measured\": %.4f, "
           "\"interval_mean_width_pct\": %.2f, \"us_per_model\": %.2f, "
           "\"interval_unreliable_share\": %.4f, \"miss_rate_warned\": %.4f, "
           "\"miss_rate_unwarned\": %.4f, \"coverage_by_point\": [",
           set, modeler, t->models, r->recovery, r->median, r->p90, r->coverage,
           r->coverage_measured, r->width, r->us_per_model, r->unreliable, r->miss_warned,
           r->miss_quiet);
    for (int e = 0; e < 4 && t->n_at[e]; e++)
        printf("%s%.4f", e ? ", " : "", (double)t->cov_at[e] / (double)t->n_at[e]);
    printf("]}\n");
}

static int run_set(const bench_args *a, int nparams, double noise, int reps)
{
    tally t[2];
    memset(t, 0, sizeof t);
    int rc = 0;
    for (int i = 0; i < a->nseeds && !rc; i++) {
        set_data s;
        memset(&s, 0, sizeof s);
        if (set_make(&s, nparams, a->series[nparams - 1], noise, reps, a->seeds[i]) ||
            timed_fits(&s, a->min_time, t))
            rc = -1;
        set_free(&s);
    }
    if (rc) {
        free(t[0].errs);
        free(t[1].errs);
        return -1;
    }
    char set[64];
    snprintf(set, sizeof set, "%dp_noise%.0f%s", nparams, noise * 100, reps > 1 ? "" : "_norep");
    summary e = summarize(&t[0]), r = summarize(&t[1]);
    print_summary(set, "extrap", &e, &t[0]);
    print_summary(set, "robust", &r, &t[1]);

    int pass;
    if (reps == 1) /* without repetitions: more exact than Extra-P at both ends */
        pass = r.p90 <= e.p90 && r.median <= e.median;
    else if (noise <= 0.05)
        pass = r.p90 <= e.p90 + 0.2 && r.recovery >= e.recovery - 0.01;
    else if (nparams == 1)
        pass = r.p90 <= 0.7 * e.p90 && r.recovery >= e.recovery + 0.10;
    else
        pass = r.p90 <= 7.0 && r.recovery >= e.recovery + 0.10;
    double time_ratio = e.us_per_model > 0 ? r.us_per_model / e.us_per_model : 0;
    int cover_ok = r.coverage_measured >= 0.90 && r.coverage_measured <= 0.98;
    /* the absolute goals: p90 <= 16% with one parameter at 15% noise, <= 3.5% with two at 10% */
    double goal = reps == 1                                      ? 0
                  : nparams == 1 && fabs(noise - 0.15) < 1e-9   ? 16.0
                  : nparams == 2 && fabs(noise - 0.10) < 1e-9 ? 3.5
                                                              : 0;
    char goal_text[80] = "";
    if (goal > 0)
        snprintf(goal_text, sizeof goal_text, ", \"p90_goal\": %.1f, \"p90_goal_met\": %s", goal,
                 r.p90 <= goal ? "true" : "false");
    printf("{\"figure\": \"robust_vs_extrap\", \"set\": \"%s\", \"seeds\": %d, "
           "\"p90_ratio\": %.3f, \"recovery_gain_points\": %.1f, \"time_ratio\": %.2f, "
           "\"accuracy_target_met\": %s, \"time_target_met\": %s, \"coverage_target_met\": %s%s}\n",
           set, a->nseeds, e.p90 > 0 ? r.p90 / e.p90 : 0, (r.recovery - e.recovery) * 100,
           time_ratio, pass ? "true" : "false", time_ratio <= 3 ? "true" : "false",
           cover_ok ? "true" : "false", goal_text);
    free(t[0].errs);
    free(t[1].errs);
    return 0;
}

static int parse_seeds(const char *v, bench_args *a)
{
    a->nseeds = 0;
    while (*v && a->nseeds < MAX_SEEDS) {
        char *end;
        a->seeds[a->nseeds++] = strtoull(v, &end, 10);
        if (end == v || (*end && *end != ','))
            return -1;
        v = *end ? end + 1 : end;
    }
    return a->nseeds ? 0 : -1;
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){{1000, 300}, {11, 22, 33}, 3, 0.2};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        char *end = NULL;
        if (!strcmp(k, "--series1"))
            a->series[0] = strtol(v, &end, 10);
        else if (!strcmp(k, "--series2"))
            a->series[1] = strtol(v, &end, 10);
        else if (!strcmp(k, "--min-time"))
            a->min_time = strtod(v, &end);
        else if (!strcmp(k, "--seeds")) {
            if (parse_seeds(v, a))
                return -1;
            continue;
        } else
            return -1;
        if (end == v || *end)
            return -1;
    }
    return argc % 2 == 1 && a->series[0] >= 0 && a->series[1] >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench_args a;
    if (parse_args(argc, argv, &a)) {
        fprintf(stderr, "usage: bench_robust [--series1 N] [--series2 N] [--seeds S1,S2,...] "
                        "[--min-time SECONDS]\n");
        return 2;
    }
    static const struct {
        int nparams;
        double noise;
        int reps;
    } sets[] = {{1, 0.10, 5}, {1, 0.15, 5}, {1, 0.02, 5}, {2, 0.10, 5}, {2, 0.02, 5},
                {1, 0.02, 1}, {1, 0.05, 1}, {1, 0.15, 1}, {2, 0.10, 1}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (run_set(&a, sets[i].nparams, sets[i].noise, sets[i].reps)) {
            fprintf(stderr, "bench_robust: out of memory or a fit failed\n");
            return 1;
        }
    }
    return 0;
}
