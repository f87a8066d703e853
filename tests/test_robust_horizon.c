/*
 * test_robust_horizon.c — what the robust modeler may not answer, and the
 * segmented modeler, on Extra-P's own test data (tests/data/extrap-audit,
 * copied unmodified with Extra-P's licence) and on constructed series:
 *
 *  - the path to the horizon (modeling/horizon.c): its ends are the smallest
 *    measured coordinate and exactly 8x the largest (pow(8, 12/12) = 8), and
 *    its rules on hand-made values;
 *  - strong scaling (725, 505, 319, 179, 82 s at x = 20..60, Extra-P's
 *    2512 - 412 log2(x) that is -333 s at x = 120): the robust model stays
 *    positive and falling up to 8x; the two-parameter file at 8x both;
 *    every series of Extra-P's test data: no impossible time anywhere on the
 *    path (the goal is at most 3);
 *  - negative exponents searched by default on falling data: 7 + 1200/x
 *    noise-free is recovered exactly (constant 7, term x^(-1)), although it
 *    falls below half the smallest measurement before 8x: it fits within
 *    the noise, so the data support that;
 *  - exact constants give the constant: 42 everywhere is "42", no term;
 *  - the same points and repetitions in any order give the same bytes
 *    (function text and the prediction with its interval at 8x, printed with
 *    17 digits), over random permutations of noisy one- and two-parameter
 *    series;
 *  - the interval is for a measured value: the corner of two_parameter_1
 *    left out is predicted within its interval;
 *  - the segmented modeler against what Extra-P 4.2.5 printed for
 *    one_parameter_segmented_1..6 (tests/data/extrap/expected_segmented):
 *    the same segments, change points exactly, exponents exactly,
 *    coefficients to 1e-6 relative (or 1e-9 of the largest value: the
 *    noise-free data leave constants of rounding size, 5e-15 against
 *    Extra-P's 6e-15); predictions take the segment holding the point;
 *  - the robust modeler warns two_regimes on one_parameter_segmented_1 with
 *    Extra-P's change point p = 6, and on two_parameter_segmented_1 along x
 *    within Extra-P's 50..60;
 *  - `perfcast model --modeler segmented` prints Extra-P's segments on one
 *    line, "f for p<=6.0, g for p>=6.0", and refuses an unknown modeler
 *    with exit status 2 naming the three.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/harness.h"
#include "ingest/extrap.h"
#include "modeling/modeler.h"
#include "tests/check.h"

#define AUDIT "tests/data/extrap-audit/"

static int read_experiment(const char *path, ingest_experiment *e)
{
    size_t len;
    char *data = harness_read_file(path, &len);
    ingest_error ie;
    int rc = data ? ingest_extrap_read(data, len, ingest_extrap_format_from_path(path, data, len),
                                       e, &ie)
                  : -1;
    free(data);
    check(rc == 0, "read %s", path);
    return rc;
}

/* A series as the CLI passes it: coordinates, means, repetitions. */
typedef struct series {
    int np, n;
    double coords[4096], means[1024], reps[8192];
    int start[1025];
} series;

static int series_of(const ingest_experiment *e, int k, series *s)
{
    const ingest_series *is = &e->series[k];
    s->np = e->nparams;
    s->n = is->npoints;
    if (s->n > 1024 || is->rep_start[s->n] > 8192 || s->n * s->np > 4096)
        return -1;
    double scratch[64];
    for (int j = 0; j < s->n; j++) {
        memcpy(s->coords + j * s->np, e->coords + (size_t)is->coord[j] * s->np,
               sizeof(double) * (size_t)s->np);
        s->means[j] = pmnf_aggregate(is->values + is->rep_start[j],
                                     is->rep_start[j + 1] - is->rep_start[j], PMNF_MEASURE_MEAN,
                                     scratch);
        s->start[j] = is->rep_start[j];
    }
    s->start[s->n] = is->rep_start[s->n];
    memcpy(s->reps, is->values, sizeof(double) * (size_t)s->start[s->n]);
    return 0;
}

static int fit(pmnf_modeler *m, const series *s, pmnf_model *out)
{
    char err[256];
    pmnf_data d = {s->np, s->n, s->coords, s->means};
    int rc = pmnf_fit_reps(m, &d, &(pmnf_reps){s->start, s->reps}, out, err, sizeof err);
    check(rc == 0, "fit: %s", rc ? err : "");
    return rc;
}

static pmnf_modeler *modeler(pmnf_modeler_kind k)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = k;
    return pmnf_modeler_new(&o);
}

static void test_path(void)
{
    double coords[3] = {20, 40, 60}, values[3] = {30, 20, 10};
    pmnf_data d = {1, 3, coords, values};
    pmnf_path P;
    pmnf_path_init(&P, &d);
    check(P.dir[0] == -1 && P.all_positive && P.ymin == 10, "falling, positive, smallest 10");
    check(pmnf_path_x(&P, 0, 0) == 20 && pmnf_path_x(&P, 0, PMNF_PATH_IN - 1) == 60,
          "the measured range first");
    check(pmnf_path_x(&P, 0, PMNF_PATH_LINE - 1) == 60 * PMNF_HORIZON, "then up to 8x: %g",
          pmnf_path_x(&P, 0, PMNF_PATH_LINE - 1));
    double v[PMNF_PATH_MAX];
    for (int k = 0; k < PMNF_PATH_LINE; k++)
        v[k] = 5 + 100.0 / (k + 1);
    check(pmnf_path_judge(&P, v) == 0, "positive, falling, above half the smallest: kept");
    v[PMNF_PATH_LINE - 1] = -1;
    check(pmnf_path_judge(&P, v) == (PMNF_PATH_NONPOSITIVE | PMNF_PATH_FLOOR),
          "one value below 0: nonpositive and below half the smallest (%u)",
          pmnf_path_judge(&P, v));
    v[PMNF_PATH_LINE - 1] = 4.9;
    check(pmnf_path_judge(&P, v) == PMNF_PATH_FLOOR, "4.9 < 10 / 2: below the floor, falling");
    v[PMNF_PATH_LINE - 1] = 50;
    check(pmnf_path_judge(&P, v) == PMNF_PATH_REVERSED, "rising again beyond falling data");
    values[0] = 10;
    values[2] = 30;
    pmnf_path_init(&P, &d);
    for (int k = 0; k < PMNF_PATH_LINE; k++)
        v[k] = 10 + k;
    v[PMNF_PATH_LINE - 1] = 4; /* below half the smallest (5) */
    check(pmnf_path_judge(&P, v) == (PMNF_PATH_COLLAPSE | PMNF_PATH_REVERSED | PMNF_PATH_FLOOR),
          "growing data collapsing: %u", pmnf_path_judge(&P, v));
    values[1] = -1;
    pmnf_path_init(&P, &d);
    check(pmnf_path_judge(&P, v) == 0, "a value <= 0 measured: no rule applies");
}

static void test_strong_scaling(void)
{
    static const char *const files[] = {AUDIT "strong_scaling/one_parameter_1.txt",
                                        AUDIT "strong_scaling/two_parameter_1.txt"};
    pmnf_modeler *m = modeler(PMNF_MODELER_ROBUST);
    for (int f = 0; f < 2; f++) {
        ingest_experiment e;
        if (read_experiment(files[f], &e) < 0)
            continue;
        series *s = malloc(sizeof *s);
        pmnf_model md;
        if (s && series_of(&e, 0, s) == 0 && fit(m, s, &md) == 0) {
            pmnf_data d = {s->np, s->n, s->coords, s->means};
            pmnf_path P;
            pmnf_path_init(&P, &d);
            check(pmnf_path_check(&P, &md) == 0, "%s: kept to 8x (%u)", files[f],
                  pmnf_path_check(&P, &md));
            double at[2] = {120, 0}, v, lo, hi;
            if (s->np == 2)
                at[0] = 8 * P.hi[0], at[1] = 8 * P.hi[1];
            pmnf_predict(&md, at, &v, &lo, &hi);
            check(v > 0, "%s: positive at the asked point (%g)", files[f], v);
            check(!(md.warnings & PMNF_WARN_NEGATIVE_PREDICTION), "no negative warning");
        }
        free(s);
        ingest_experiment_free(&e);
    }
    pmnf_modeler_free(m);
}

/* Every series of Extra-P's text test data: no impossible time. */
static void test_no_impossible(void)
{
    static const char *const files[] = {
        "one_parameter_1.txt", "one_parameter_2.txt", "one_parameter_3.txt",
        "one_parameter_4.txt", "one_parameter_5.txt", "one_parameter_6.txt",
        "one_parameter_7.txt", "two_parameter_1.txt", "two_parameter_2.txt",
        "two_parameter_3.txt", "two_parameter_4.txt", "two_parameter_5.txt",
        "two_parameter_6.txt", "two_parameter_7.txt", "three_parameter_1.txt",
        "three_parameter_2.txt", "three_parameter_3.txt", "strong_scaling/one_parameter_1.txt",
        "strong_scaling/one_parameter_2.txt", "strong_scaling/one_parameter_6.txt",
        "strong_scaling/two_parameter_1.txt", "strong_scaling/two_parameter_2.txt",
        "strong_scaling/two_parameter_7.txt"};
    pmnf_modeler *m = modeler(PMNF_MODELER_ROBUST);
    int impossible = 0, total = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[256];
        snprintf(path, sizeof path, AUDIT "%s", files[f]);
        ingest_experiment e;
        if (read_experiment(path, &e) < 0)
            continue;
        series *s = malloc(sizeof *s);
        for (int k = 0; s && k < e.nseries; k++) {
            pmnf_model md;
            if (series_of(&e, k, s) < 0 || fit(m, s, &md) < 0)
                continue;
            pmnf_data d = {s->np, s->n, s->coords, s->means};
            pmnf_path P;
            pmnf_path_init(&P, &d);
            unsigned fl = pmnf_path_check(&P, &md);
            total++;
            if (fl & (PMNF_PATH_NONPOSITIVE | PMNF_PATH_COLLAPSE)) {
                impossible++;
                fprintf(stderr, "impossible: %s series %d\n", path, k);
            }
        }
        free(s);
        ingest_experiment_free(&e);
    }
    check(total >= 70 && impossible == 0, "%d of %d series predict an impossible time", impossible,
          total);
    pmnf_modeler_free(m);
}

static void test_negative_and_constant(void)
{
    static const double x[6] = {2, 4, 8, 16, 32, 64};
    double y[6], reps[18];
    int start[7];
    pmnf_modeler *m = modeler(PMNF_MODELER_ROBUST);
    const char *names[] = {"x"};
    char text[256], err[128];
    for (int i = 0; i < 6; i++) {
        y[i] = 7 + 1200 / x[i];
        start[i] = 3 * i;
        reps[3 * i] = reps[3 * i + 1] = reps[3 * i + 2] = y[i];
    }
    start[6] = 18;
    pmnf_data d = {1, 6, x, y};
    pmnf_model md;
    if (pmnf_fit_reps(m, &d, &(pmnf_reps){start, reps}, &md, err, sizeof err) == 0) {
        pmnf_format(&md.f, names, text, sizeof text);
        check(md.f.nterms == 1 && md.f.terms[0].factors[0].poly == -1 &&
                  md.f.terms[0].factors[0].log == 0,
              "7 + 1200/x by default: x^(-1): %s", text);
        check(check_close(md.f.constant, 7, 1e-6, 1), "constant 7: %s", text);
    }
    for (int i = 0; i < 18; i++)
        reps[i] = 42;
    for (int i = 0; i < 6; i++)
        y[i] = 42;
    if (pmnf_fit_reps(m, &d, &(pmnf_reps){start, reps}, &md, err, sizeof err) == 0) {
        pmnf_format(&md.f, names, text, sizeof text);
        check(md.f.nterms == 0 && md.f.constant == 42, "42 everywhere: %s", text);
    }
    /* without repetitions too */
    if (pmnf_fit(m, &d, &md, err, sizeof err) == 0) {
        pmnf_format(&md.f, names, text, sizeof text);
        check(md.f.nterms == 0 && md.f.constant == 42, "42 everywhere, one value each: %s", text);
    }
    pmnf_modeler_free(m);
}

/* xorshift for the permutations and the noise: deterministic */
static unsigned long long rng_state = 88172645463325252ULL;
static double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void answer(const pmnf_model *md, const series *s, char *buf, size_t cap)
{
    static const char *const names[] = {"a", "b"};
    double at[2] = {0, 0}, v, lo, hi;
    for (int i = 0; i < s->n; i++)
        for (int p = 0; p < s->np; p++)
            if (s->coords[i * s->np + p] * 8 > at[p])
                at[p] = s->coords[i * s->np + p] * 8;
    size_t len = pmnf_format(&md->f, names, buf, cap);
    pmnf_predict(md, at, &v, &lo, &hi);
    snprintf(buf + len, cap - len, " %.17g %.17g %.17g %u", v, lo, hi, md->warnings);
}

static void shuffle_series(const series *a, series *b)
{
    int perm[1024];
    for (int i = 0; i < a->n; i++)
        perm[i] = i;
    for (int i = a->n - 1; i > 0; i--) {
        int j = (int)(rnd() * (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    b->np = a->np;
    b->n = a->n;
    b->start[0] = 0;
    for (int k = 0; k < a->n; k++) {
        int i = perm[k], r = a->start[i + 1] - a->start[i];
        memcpy(b->coords + k * a->np, a->coords + i * a->np, sizeof(double) * (size_t)a->np);
        b->means[k] = a->means[i];
        for (int q = 0; q < r; q++) /* the repetitions rotated */
            b->reps[b->start[k] + q] = a->reps[a->start[i] + (q + k) % r];
        b->start[k + 1] = b->start[k] + r;
    }
}

static void test_order(void)
{
    pmnf_modeler *m = modeler(PMNF_MODELER_ROBUST);
    series *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    int differ = 0, fits = 0;
    for (int trial = 0; a && b && trial < 24; trial++) {
        int np = 1 + trial % 2, side = np == 1 ? 7 : 5;
        a->np = np;
        a->n = np == 1 ? side : side * side;
        a->start[0] = 0;
        double growth = 0.5 + rnd() * 2, c = 1 + rnd() * 100;
        for (int i = 0; i < a->n; i++) {
            double x0 = 4 << (i % side), x1 = 10 * (1 + i / side);
            a->coords[i * np] = x0;
            if (np == 2)
                a->coords[i * np + 1] = x1;
            double truth = c + pow(x0, growth) * (np == 2 ? log2(x1) : 1), sum = 0;
            for (int r = 0; r < 5; r++) {
                a->reps[5 * i + r] = truth * (1 + 0.1 * (rnd() - 0.5));
                sum += a->reps[5 * i + r];
            }
            a->means[i] = sum / 5;
            a->start[i + 1] = 5 * (i + 1);
        }
        pmnf_model ma, mb;
        char ra[1024], rb[1024];
        if (fit(m, a, &ma) < 0)
            continue;
        answer(&ma, a, ra, sizeof ra);
        for (int p = 0; p < 4; p++) {
            shuffle_series(a, b);
            /* the means of the rotated repetitions as a caller computes them */
            for (int i = 0; i < b->n; i++) {
                double s = 0;
                for (int r = b->start[i]; r < b->start[i + 1]; r++)
                    s += b->reps[r];
                b->means[i] = s / (b->start[i + 1] - b->start[i]);
            }
            if (fit(m, b, &mb) < 0)
                continue;
            answer(&mb, b, rb, sizeof rb);
            fits++;
            if (strcmp(ra, rb)) {
                differ++;
                fprintf(stderr, "order changed the answer:\n  %s\n  %s\n", ra, rb);
            }
        }
    }
    check(fits == 96 && differ == 0, "%d of %d permutations changed the bytes", differ, fits);
    free(a);
    free(b);
    pmnf_modeler_free(m);
}

static void test_interval_measured(void)
{
    pmnf_modeler *m = modeler(PMNF_MODELER_ROBUST);
    ingest_experiment e;
    series *s = malloc(sizeof *s);
    if (s && read_experiment(AUDIT "two_parameter_1.txt", &e) == 0) {
        pmnf_model md;
        if (series_of(&e, 0, s) == 0 && s->n == 25) {
            /* the corner (60, 5) is the last point of the file */
            double corner[2] = {s->coords[48], s->coords[49]}, want = s->means[24], v, lo, hi;
            s->n = 24;
            if (fit(m, s, &md) == 0) {
                int none = pmnf_predict(&md, corner, &v, &lo, &hi);
                check(!none && lo <= want && want <= hi, "corner %g in [%g, %g]", want, lo, hi);
                check(md.noise_rel2 > 0, "the interval carries the measured noise");
            }
        }
        ingest_experiment_free(&e);
    }
    free(s);
    pmnf_modeler_free(m);
}

/* Extra-P's "f for p<=b" or "f", the segments split, compared term by term. */
static void compare_function(const pmnf_function *got, const char *want_text, double scale,
                             const char *what)
{
    const char *names[] = {"p"};
    pmnf_function want;
    char err[128];
    if (pmnf_parse(want_text, names, 1, &want, err, sizeof err) < 0) {
        check(0, "%s: cannot parse \"%s\": %s", what, want_text, err);
        return;
    }
    check(got->nterms == want.nterms, "%s: %d terms, Extra-P %d", what, got->nterms, want.nterms);
    check(fabs(got->constant - want.constant) <= 1e-6 * fabs(want.constant) + 1e-9 * scale,
          "%s: constant %.17g, Extra-P %.17g", what, got->constant, want.constant);
    for (int t = 0; t < got->nterms && t < want.nterms; t++) {
        const pmnf_term *a = &got->terms[t], *b = &want.terms[t];
        check(a->nfactors == b->nfactors && a->factors[0].poly == b->factors[0].poly &&
                  a->factors[0].log == b->factors[0].log,
              "%s: term %d exponents", what, t);
        check(fabs(a->coef - b->coef) <= 1e-6 * fabs(b->coef) + 1e-9 * scale,
              "%s: coefficient %.17g, Extra-P %.17g", what, a->coef, b->coef);
    }
}

static void test_segmented(void)
{
    pmnf_modeler *m = modeler(PMNF_MODELER_SEGMENTED);
    int compared = 0, segmented = 0;
    for (int f = 1; f <= 6; f++) {
        char in[256], ex[256];
        snprintf(in, sizeof in, AUDIT "one_parameter_segmented_%d.txt", f);
        snprintf(ex, sizeof ex, "tests/data/extrap/expected_segmented/one_parameter_segmented_%d.txt.models", f);
        size_t len;
        char *expected = harness_read_file(ex, &len);
        ingest_experiment e;
        if (!expected || read_experiment(in, &e) < 0) {
            check(0, "%s: no expected models", ex);
            free(expected);
            continue;
        }
        series *s = malloc(sizeof *s);
        char *save = NULL;
        char *line = strtok_r(expected, "\n", &save);
        for (int k = 0; s && k < e.nseries && line; k++, line = strtok_r(NULL, "\n", &save)) {
            pmnf_model md;
            if (series_of(&e, k, s) < 0 || fit(m, s, &md) < 0)
                continue;
            double scale = 0;
            for (int i = 0; i < s->n; i++)
                scale = fmax(scale, fabs(s->means[i]));
            char *fn = strchr(strchr(line, ';') + 1, ';') + 1, *sep = strstr(fn, " for p<=");
            check(md.modeler == PMNF_MODELER_SEGMENTED, "names its modeler");
            compared++;
            if (!sep) {
                check(md.nsegments == 0, "%s series %d: one function like Extra-P", in, k);
                compare_function(&md.f, fn, scale, in);
                continue;
            }
            segmented++;
            double lo = strtod(sep + 8, NULL);
            char *second = strstr(sep, ", ") + 2, *sep2 = strstr(second, " for p>=");
            double hi = strtod(sep2 + 8, NULL);
            *sep = '\0';
            *sep2 = '\0';
            check(md.nsegments == 2 && md.break_lo == lo && md.break_hi == hi,
                  "%s series %d: change point %g..%g, Extra-P %g..%g", in, k, md.break_lo,
                  md.break_hi, lo, hi);
            compare_function(&md.f, fn, scale, in);
            compare_function(&md.f2, second, scale, in);
            /* the segment holding the point answers */
            double below = lo, above = hi + 1, v, l, h;
            pmnf_predict(&md, &below, &v, &l, &h);
            check(v == pmnf_eval(&md.f, &below), "at the change point: the first segment");
            pmnf_predict(&md, &above, &v, &l, &h);
            check(v == pmnf_eval(&md.f2, &above), "beyond it: the second");
        }
        free(s);
        free(expected);
        ingest_experiment_free(&e);
    }
    check(compared == 10 && segmented == 7, "%d series compared, %d segmented (10, 7)", compared,
          segmented);
    pmnf_modeler_free(m);

    /* the robust modeler names the break of one_parameter_segmented_1 */
    m = modeler(PMNF_MODELER_ROBUST);
    ingest_experiment e;
    series *s = malloc(sizeof *s);
    if (s && read_experiment(AUDIT "one_parameter_segmented_1.txt", &e) == 0) {
        pmnf_model md;
        if (series_of(&e, 0, s) == 0 && fit(m, s, &md) == 0)
            check((md.warnings & PMNF_WARN_TWO_REGIMES) && md.break_lo == 6 && md.break_hi == 6,
                  "two regimes, change at p = 6: %u %g %g", md.warnings, md.break_lo,
                  md.break_hi);
        ingest_experiment_free(&e);
    }
    /* two parameters: Extra-P's segmented test on the lines along x, whose
     * change Extra-P puts between x = 50 and x = 60 */
    if (s && read_experiment(AUDIT "two_parameter_segmented_1.txt", &e) == 0) {
        pmnf_model md;
        if (series_of(&e, 0, s) == 0 && fit(m, s, &md) == 0)
            check((md.warnings & PMNF_WARN_TWO_REGIMES) && md.break_param == 0 &&
                      md.break_lo >= 50 && md.break_hi <= 60,
                  "two regimes along x between 50 and 60: %u %d %g %g", md.warnings,
                  md.break_param, md.break_lo, md.break_hi);
        ingest_experiment_free(&e);
    }
    free(s);
    check(!strcmp(pmnf_warning_code(PMNF_WARN_TWO_REGIMES), "two_regimes") &&
              strstr(pmnf_warning_text(PMNF_WARN_TWO_REGIMES), "break_lo"),
          "the warning's code and text");
    pmnf_modeler_free(m);
}

static void test_cli(void)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[512], out[1024] = "";
    snprintf(cmd, sizeof cmd, "%s model --modeler segmented " AUDIT "one_parameter_segmented_1.txt",
             bin);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    check(st == 0 && !strncmp(out, "main;runtime;", 13) && strstr(out, "p^(2) for p<=6.0, ") &&
              strstr(out, " * p^(1) for p>=6.0\n"),
          "segmented on the command line: %s", out);
    snprintf(cmd, sizeof cmd, "%s model --modeler nope " AUDIT "one_parameter_1.txt 2>&1", bin);
    p = popen(cmd, "r");
    n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    st = p ? pclose(p) : -1;
    check(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(out, "segmented"),
          "unknown modeler: %s", out);
}

int main(void)
{
    test_path();
    test_strong_scaling();
    test_no_impossible();
    test_negative_and_constant();
    test_order();
    test_interval_measured();
    test_segmented();
    test_cli();
    return check_summary();
}
