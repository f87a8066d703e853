/*
 * test_robust_interval.c — the robust modeler's prediction interval where
 * the data do not follow its hypotheses, and the warning interval_unreliable
 * (modeling/robust.c, robust_mixture.c, assess.c):
 *
 *  - lack of fit: y = p^2/1e6 + log2(p/500) measured at p = 1000..8000 with
 *    1% noise (no single-term hypothesis fits it within the noise): left out,
 *    the value at 16000 (261) must lie in the interval the four others give.
 *    The chi-square per degree of freedom of the best hypothesis is then far
 *    above its 1% quantile, the weights of the hypotheses are taken with the
 *    chi-square divided by it (quasi-likelihood), and their spread widens the
 *    interval; without that the interval is +-9% around 220;
 *  - points on one curve: p and q doubled together at every point give the
 *    single-parameter model along p with parameters_confounded, and predict
 *    the next point on the curve (p^2 / 1e6: 1024 at (32000, 320)) inside a
 *    narrow interval, where Extra-P's modeler (and the fallback to it) gave
 *    a constant; the points in reverse order give the same model;
 *  - three values of a parameter: the fallback to Extra-P's model carries no
 *    interval (no_interval; pmnf_predict returns 1 with lo = hi = value);
 *  - interval_unreliable on robust models: not on four noisy values that
 *    follow their model (few_points alone no longer makes the robust interval
 *    unreliable); a series whose largest point jumps far off the curve of
 *    the others gets an interval wider than the value beyond the range.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modeling/modeler.h"
#include "tests/check.h"

#define NREP 5

/* Relative offsets of the repetitions: mean 0, spread about 1% x scale. */
static const double jitter[NREP] = {-0.01, 0.005, 0, 0.01, -0.005};

/* Fits n points of (np x n) coords with value f_i and NREP repetitions
 * f_i (1 + scale jitter_r). */
static int fit_reps(pmnf_modeler *m, int np, int n, const double *coords, const double *f,
                    double scale, pmnf_model *out)
{
    double y[16], reps[16 * NREP];
    int start[17];
    for (int i = 0; i < n; i++) {
        start[i] = i * NREP;
        y[i] = f[i];
        for (int r = 0; r < NREP; r++)
            reps[i * NREP + r] = f[i] * (1 + scale * jitter[r]);
    }
    start[n] = n * NREP;
    char err[160];
    pmnf_data d = {np, n, coords, y};
    pmnf_reps rp = {start, reps};
    int rc = pmnf_fit_reps(m, &d, &rp, out, err, sizeof err);
    check(rc == 0, "fit: %s", rc ? err : "");
    return rc;
}

static pmnf_modeler *robust(void)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_ROBUST;
    return pmnf_modeler_new(&o);
}

static void test_lack_of_fit(pmnf_modeler *m)
{
    static const double p[4] = {1000, 2000, 4000, 8000};
    double f[4];
    for (int i = 0; i < 4; i++)
        f[i] = p[i] * p[i] / 1e6 + log2(p[i] / 500);
    pmnf_model mod;
    if (fit_reps(m, 1, 4, p, f, 1, &mod) < 0)
        return;
    double at = 16000, v, lo, hi, want = 256 + 5;
    check(pmnf_predict(&mod, &at, &v, &lo, &hi) == 0, "an interval");
    check(lo <= want && want <= hi, "261 at 16000 in [%g, %g] (predicted %g)", lo, hi, v);
    check(mod.lack_of_fit > 10, "lack of fit %g: far beyond the noise", mod.lack_of_fit);
    check(mod.selection > 1, "the competing hypotheses widen the interval (%g)", mod.selection);
}

static void test_one_curve(pmnf_modeler *m)
{
    double c[2 * 5], f[5];
    for (int i = 0; i < 5; i++) {
        c[2 * i] = 1000 << i;
        c[2 * i + 1] = 10 << i;
        f[i] = c[2 * i] * c[2 * i] / 1e6;
    }
    pmnf_model mod;
    if (fit_reps(m, 2, 5, c, f, 0.1, &mod) < 0)
        return;
    check(mod.warnings & PMNF_WARN_PARAMETERS_CONFOUNDED, "parameters_confounded (%u)",
          mod.warnings);
    check(!(mod.warnings & PMNF_WARN_ROBUST_FALLBACK), "no fallback (%u)", mod.warnings);
    check(mod.f.nparams == 2 && mod.f.nterms == 1 && mod.f.terms[0].nfactors == 1 &&
              mod.f.terms[0].factors[0].param == 0 && mod.f.terms[0].factors[0].poly == 2,
          "the model is c p^2 (%d terms)", mod.f.nterms);
    double at[2] = {32000, 320}, v, lo, hi;
    check(pmnf_predict(&mod, at, &v, &lo, &hi) == 0, "an interval");
    check(fabs(v - 1024) < 0.01 * 1024 && lo <= 1024 && 1024 <= hi && hi - lo < 0.1 * 1024,
          "1024 at (32000, 320): %g in [%g, %g]", v, lo, hi);
    /* the same points in reverse order: the same model, to the last bit */
    double rc[2 * 5], rf[5];
    for (int i = 0; i < 5; i++) {
        rc[2 * i] = c[2 * (4 - i)];
        rc[2 * i + 1] = c[2 * (4 - i) + 1];
        rf[i] = f[4 - i];
    }
    pmnf_model rev;
    if (fit_reps(m, 2, 5, rc, rf, 0.1, &rev) == 0)
        check(rev.f.nterms == mod.f.nterms && rev.f.constant == mod.f.constant &&
                  rev.f.terms[0].coef == mod.f.terms[0].coef,
              "reversed points: the same model");
    check(!strcmp(pmnf_warning_code(PMNF_WARN_PARAMETERS_CONFOUNDED), "parameters_confounded") &&
              strstr(pmnf_warning_text(PMNF_WARN_PARAMETERS_CONFOUNDED), "together"),
          "code and text");
}

static void test_three_values(pmnf_modeler *m)
{
    static const double x[3] = {10, 20, 40};
    const double f[3] = {406, 510, 617};
    pmnf_model mod;
    if (fit_reps(m, 1, 3, x, f, 0.1, &mod) < 0)
        return;
    check((mod.warnings & PMNF_WARN_ROBUST_FALLBACK) && (mod.warnings & PMNF_WARN_NO_INTERVAL),
          "fallback without an interval (%u)", mod.warnings);
    double at = 50, v, lo, hi;
    check(pmnf_predict(&mod, &at, &v, &lo, &hi) == 1 && lo == v && hi == v,
          "no interval: lo = hi = value");
    check(!(mod.warnings & PMNF_WARN_INTERVAL_UNRELIABLE), "no interval to distrust");
}

static void test_unreliable(pmnf_modeler *m)
{
    /* four values, 2% noise, on 3 + 2 x: the interval holds, no warning */
    static const double x4[4] = {4, 8, 16, 32};
    double f4[4];
    for (int i = 0; i < 4; i++)
        f4[i] = 3 + 2 * x4[i];
    pmnf_model mod;
    if (fit_reps(m, 1, 4, x4, f4, 2, &mod) == 0) {
        check(mod.warnings & PMNF_WARN_FEW_POINTS, "4 values: few_points");
        check(!(mod.warnings & PMNF_WARN_INTERVAL_UNRELIABLE),
              "4 values on the model's curve: the interval is not unreliable (%u)", mod.warnings);
    }
    /* the largest point jumps to 3x the curve of the other five: no
     * hypothesis fits within the noise, and the interval at twice the
     * measured range says so by its width (more than the value itself) */
    static const double x6[6] = {4, 8, 16, 32, 64, 128};
    double f6[6];
    for (int i = 0; i < 6; i++)
        f6[i] = (3 + 2 * x6[i]) * (i == 5 ? 3 : 1);
    if (fit_reps(m, 1, 6, x6, f6, 1, &mod) == 0) {
        double at = 256, v = 0, lo = 0, hi = 0;
        check(pmnf_predict(&mod, &at, &v, &lo, &hi) == 0 && hi - lo > 2 * v,
              "the largest point off the curve: [%g, %g] around %g", lo, hi, v);
    }
}

int main(void)
{
    pmnf_modeler *m = robust();
    check(m != NULL, "modeler");
    if (m) {
        test_lack_of_fit(m);
        test_one_curve(m);
        test_three_values(m);
        test_unreliable(m);
    }
    pmnf_modeler_free(m);
    return check_summary();
}
