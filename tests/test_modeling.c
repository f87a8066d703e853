/*
 * test_modeling.c — the numerics of modeling/: printing and parsing PMNF,
 * exact recovery of noise-free functions for every building block and for
 * multi-parameter shapes, ill-conditioned and degenerate inputs, options,
 * and the coverage of the 95% prediction interval.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/lsq.h"
#include "modeling/modeler.h"
#include "tests/check.h"

static const char *const names_x[] = {"x"};
static const char *const names_xyz[] = {"x", "y", "z"};

/* xorshift64*, deterministic noise for the tests */
static double uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double normal(uint64_t *s)
{
    double u1 = uniform(s), u2 = uniform(s);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void test_format_double(void)
{
    struct {
        double v;
        const char *want;
    } cases[] = {
        {1.0, "1.0"},
        {0.1, "0.1"},
        {1e-05, "1e-05"},
        {0.0001, "0.0001"},
        {1e16, "1e+16"},
        {1e15, "1000000000000000.0"},
        {-0.8897934098062803, "-0.8897934098062803"},
        {2.3749999999999702, "2.3749999999999702"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {0.0, "0.0"},
        {-2.5e-10, "-2.5e-10"},
        {179.86379677728632, "179.86379677728632"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pmnf_format_double(cases[i].v, buf);
        check(!strcmp(buf, cases[i].want), "format_double(%.17g) = %s, want %s", cases[i].v, buf,
              cases[i].want);
    }
    pmnf_format_exponent(1.5, buf);
    check(!strcmp(buf, "3/2"), "exponent 1.5 -> %s", buf);
    pmnf_format_exponent(2, buf);
    check(!strcmp(buf, "2"), "exponent 2 -> %s", buf);
    pmnf_format_exponent(-0.25, buf);
    check(!strcmp(buf, "-1/4"), "exponent -0.25 -> %s", buf);
    pmnf_format_exponent(0.8, buf);
    check(!strcmp(buf, "4/5"), "exponent 0.8 -> %s", buf);
}

static void test_format_and_parse(void)
{
    pmnf_function f = {.nparams = 1, .constant = -0.8897934098062803, .nterms = 1};
    f.terms[0] = (pmnf_term){.coef = 0.20168243826499177, .nfactors = 1};
    f.terms[0].factors[0] = (pmnf_factor){0, 2, 0};
    char buf[256];
    pmnf_format(&f, names_x, buf, sizeof buf);
    check(!strcmp(buf, "-0.8897934098062803 + 0.20168243826499177 * x^(2)"), "got %s", buf);

    const char *multi = "179.86379677728632 + 0.013594615565864668 * x^(2/3) * log2(x)^(2) * "
                        "y^(4/3) * log2(y)^(1) * z^(1) + 122.94417164426191 * y^(4/3) * log2(y)^(1)";
    pmnf_function g;
    char err[128];
    check(pmnf_parse(multi, names_xyz, 3, &g, err, sizeof err) == 0, "parse: %s", err);
    check(g.nterms == 2 && g.terms[0].nfactors == 3 && g.terms[1].nfactors == 1,
          "parsed %d terms", g.nterms);
    check(fabs(g.terms[0].factors[0].poly - 2.0 / 3) < 1e-15 && g.terms[0].factors[0].log == 2,
          "x factor");
    pmnf_format(&g, names_xyz, buf, sizeof buf);
    check(!strcmp(buf, multi), "round trip: %s", buf);

    /* a coefficient of exactly 1 is left out, a zero constant too */
    pmnf_function h = {.nparams = 1, .constant = 0, .nterms = 1};
    h.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1};
    h.terms[0].factors[0] = (pmnf_factor){0, 0, 1};
    pmnf_format(&h, names_x, buf, sizeof buf);
    check(!strcmp(buf, "log2(x)^(1)"), "got %s", buf);
    pmnf_function c = {.nparams = 1, .constant = 0};
    pmnf_format(&c, names_x, buf, sizeof buf);
    check(!strcmp(buf, "0.0"), "constant zero prints %s", buf);
    /* truncation still reports the needed length and terminates */
    char small[8];
    size_t need = pmnf_format(&f, names_x, small, sizeof small);
    check(need == strlen("-0.8897934098062803 + 0.20168243826499177 * x^(2)") &&
              strlen(small) == 7,
          "need %zu", need);
    check(pmnf_parse("1 + 2 * q^(2)", names_x, 1, &g, err, sizeof err) < 0, "unknown name");
    check(pmnf_parse("1 + * x", names_x, 1, &g, err, sizeof err) < 0, "syntax error");
}

static int fit1(pmnf_modeler *m, const double *x, const double *y, int n, pmnf_model *out)
{
    char err[128];
    pmnf_data d = {1, n, x, y};
    return pmnf_fit(m, &d, out, err, sizeof err);
}

static const double blocks[][2] = {
    {0, 1},       {0, 2},       {0.25, 0},    {1.0 / 3, 0}, {0.25, 1},    {1.0 / 3, 1},
    {0.25, 2},    {1.0 / 3, 2}, {0.5, 0},     {0.5, 1},     {0.5, 2},     {2.0 / 3, 0},
    {0.75, 0},    {2.0 / 3, 1}, {0.75, 1},    {0.8, 0},     {2.0 / 3, 2}, {0.75, 2},
    {1, 0},       {1, 1},       {1, 2},       {1.25, 0},    {1.25, 1},    {4.0 / 3, 0},
    {4.0 / 3, 1}, {1.5, 0},     {1.5, 1},     {1.5, 2},     {5.0 / 3, 0}, {1.75, 0},
    {2, 0},       {2, 1},       {2, 2},       {2.25, 0},    {7.0 / 3, 0}, {2.5, 0},
    {2.5, 1},     {2.5, 2},     {8.0 / 3, 0}, {2.75, 0},    {3, 0},       {3, 1},
};

/* Every default building block, noise-free, is recovered exactly. */
static void test_exact_recovery_single(void)
{
    pmnf_options o;
    pmnf_options_default(&o);
    pmnf_modeler *m = pmnf_modeler_new(&o);
    const double x[] = {4, 8, 16, 32, 64, 128};
    int nblocks = (int)(sizeof blocks / sizeof blocks[0]);
    check(nblocks == 42, "42 building blocks");
    int recovered = 0;
    for (int b = 0; b < nblocks; b++) {
        pmnf_factor fac = {0, blocks[b][0], blocks[b][1]};
        for (int withc = 0; withc < 2; withc++) {
            double c0 = withc ? 37.5 : 0, c1 = 2.5;
            double y[6];
            for (int i = 0; i < 6; i++)
                y[i] = c0 + c1 * pmnf_factor_eval(&fac, x[i]);
            pmnf_model mod;
            check(fit1(m, x, y, 6, &mod) == 0, "fit");
            int ok = mod.f.nterms == 1 && mod.f.terms[0].factors[0].poly == blocks[b][0] &&
                     mod.f.terms[0].factors[0].log == blocks[b][1] &&
                     check_close(mod.f.terms[0].coef, c1, 1e-9, 0) &&
                     fabs(mod.f.constant - c0) <= 1e-9 * fabs(y[5]);
            char buf[128];
            pmnf_format(&mod.f, names_x, buf, sizeof buf);
            check(ok, "block (%g, %g) c0=%g: got %s", blocks[b][0], blocks[b][1], c0, buf);
            recovered += ok;
            check(mod.rss < 1e-12 * y[5] * y[5] && mod.smape < 1e-9, "exact fit has rss %g", mod.rss);
        }
    }
    check(recovered == 84, "recovered %d of 84", recovered);
    pmnf_modeler_free(m);
}

static void test_multi_parameter(void)
{
    pmnf_options o;
    pmnf_options_default(&o);
    pmnf_modeler *m = pmnf_modeler_new(&o);
    const double xs[] = {4, 8, 16, 32, 64}, ys[] = {10, 20, 30, 40, 50};
    double coords[25 * 2], y1[25], y2[25];
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 5; j++) {
            int k = i * 5 + j;
            coords[2 * k] = xs[i];
            coords[2 * k + 1] = ys[j];
            y1[k] = 2 + 3 * sqrt(xs[i]) * ys[j];                /* multiplicative */
            y2[k] = 1 + xs[i] * xs[i] + 4 * log2(ys[j]);        /* additive */
        }
    }
    char err[128], buf[256];
    const char *names[] = {"x", "y"};
    pmnf_model mod;
    pmnf_data d = {2, 25, coords, y1};
    check(pmnf_fit(m, &d, &mod, err, sizeof err) == 0, "fit");
    pmnf_format(&mod.f, names, buf, sizeof buf);
    check(mod.f.nterms == 1 && mod.f.terms[0].nfactors == 2 &&
              mod.f.terms[0].factors[0].poly == 0.5 && mod.f.terms[0].factors[1].poly == 1 &&
              check_close(mod.f.terms[0].coef, 3, 1e-9, 0) && check_close(mod.f.constant, 2, 1e-9, 1),
          "multiplicative: %s", buf);
    d.values = y2;
    check(pmnf_fit(m, &d, &mod, err, sizeof err) == 0, "fit");
    pmnf_format(&mod.f, names, buf, sizeof buf);
    check(mod.f.nterms == 2 && check_close(mod.f.terms[0].coef, 1, 1e-9, 0) &&
              mod.f.terms[0].factors[0].poly == 2 && mod.f.terms[1].factors[0].log == 1 &&
              check_close(mod.f.terms[1].coef, 4, 1e-9, 0),
          "additive: %s", buf);
    double pt[2] = {128, 100}, v, lo, hi;
    pmnf_predict(&mod, pt, &v, &lo, &hi);
    double truth = 1 + 128.0 * 128 + 4 * log2(100.0);
    check(check_close(v, truth, 1e-9, 0) && lo <= v && v <= hi, "predict %g want %g", v, truth);

    /* sparse: only a cross of points through (4, 10) */
    double sc[9 * 2], sv[9];
    int n = 0;
    for (int i = 0; i < 5; i++) {
        sc[2 * n] = xs[i];
        sc[2 * n + 1] = 10;
        sv[n++] = 5 + 2 * xs[i] + 3 * ys[0];
    }
    for (int j = 1; j < 5; j++) {
        sc[2 * n] = 4;
        sc[2 * n + 1] = ys[j];
        sv[n++] = 5 + 2 * 4 + 3 * ys[j];
    }
    pmnf_data sd = {2, n, sc, sv};
    check(pmnf_fit(m, &sd, &mod, err, sizeof err) == 0, "sparse fit");
    pmnf_format(&mod.f, names, buf, sizeof buf);
    check(mod.f.nterms == 2 && mod.f.terms[0].factors[0].poly == 1 &&
              mod.f.terms[1].factors[0].poly == 1 && check_close(mod.f.constant, 5, 1e-9, 1),
          "sparse cross: %s", buf);

    /* three parameters: x*y*z + x */
    double c3[125 * 3], v3[125];
    n = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 5; k++) {
                double x = xs[i], y = ys[j], z = k + 1;
                c3[3 * n] = x;
                c3[3 * n + 1] = y;
                c3[3 * n + 2] = z;
                v3[n++] = 7 + 0.5 * x * y * z + 2 * x;
            }
    pmnf_data d3 = {3, n, c3, v3};
    check(pmnf_fit(m, &d3, &mod, err, sizeof err) == 0, "3p fit");
    pmnf_format(&mod.f, names_xyz, buf, sizeof buf);
    check(mod.f.nterms == 2 && mod.f.terms[0].nfactors == 3 && mod.f.terms[1].nfactors == 1 &&
              check_close(mod.f.terms[0].coef, 0.5, 1e-9, 0) &&
              check_close(mod.f.terms[1].coef, 2, 1e-9, 0),
          "3 parameters: %s", buf);
    pmnf_modeler_free(m);
}

static int model_is_finite(const pmnf_model *m)
{
    if (!isfinite(m->f.constant) || !isfinite(m->rss) || !isfinite(m->smape) ||
        !isfinite(m->ar2) || !isfinite(m->cv_smape))
        return 0;
    for (int t = 0; t < m->f.nterms; t++)
        if (!isfinite(m->f.terms[t].coef))
            return 0;
    return 1;
}

static void test_ill_conditioned(void)
{
    pmnf_options o;
    pmnf_options_default(&o);
    pmnf_modeler *m = pmnf_modeler_new(&o);
    pmnf_model mod;
    char buf[256];
    /* coordinates up to 1e6, values up to 1e12 */
    const double x[] = {1e2, 1e3, 1e4, 1e5, 1e6};
    double y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 5e3 + 1e-6 * x[i] * x[i] * x[i];
    check(fit1(m, x, y, 5, &mod) == 0 && model_is_finite(&mod), "finite");
    pmnf_format(&mod.f, names_x, buf, sizeof buf);
    check(mod.f.nterms == 1 && mod.f.terms[0].factors[0].poly == 3 &&
              check_close(mod.f.terms[0].coef, 1e-6, 1e-6, 0),
          "x^3 at 1e6: %s", buf);
    double v, lo, hi, pt = 5e5;
    pmnf_predict(&mod, &pt, &v, &lo, &hi);
    check(check_close(v, 5e3 + 1e-6 * pt * pt * pt, 1e-6, 0) && isfinite(lo) && isfinite(hi),
          "prediction %g", v);

    /* constant data: a constant model, zero error */
    const double xc[] = {2, 4, 8, 16, 32}, yc[] = {7, 7, 7, 7, 7};
    check(fit1(m, xc, yc, 5, &mod) == 0 && mod.f.nterms == 0 && mod.f.constant == 7 &&
              mod.smape == 0,
          "constant data");
    /* all zeros */
    const double yz[] = {0, 0, 0, 0, 0};
    check(fit1(m, xc, yz, 5, &mod) == 0 && mod.f.nterms == 0 && mod.f.constant == 0 &&
              model_is_finite(&mod),
          "zeros");
    /* some zeros: relative contributions divide by zero */
    const double yz2[] = {0, 0, 3, 0, 9};
    check(fit1(m, xc, yz2, 5, &mod) == 0 && model_is_finite(&mod), "some zeros");
    /* duplicated points */
    const double xd[] = {4, 4, 8, 8, 16}, yd[] = {3, 3.1, 5, 5.2, 9};
    check(fit1(m, xd, yd, 5, &mod) == 0 && model_is_finite(&mod), "duplicates");
    const double xdd[] = {4, 4, 4, 4, 4}, ydd[] = {3, 3.1, 5, 5.2, 9};
    check(fit1(m, xdd, ydd, 5, &mod) == 0 && model_is_finite(&mod), "one coordinate repeated");
    /* coordinates below 1: no log terms, and the warning */
    const double xs[] = {0.125, 0.25, 0.5, 1, 2}, ys[] = {1, 2, 4, 8, 16};
    check(fit1(m, xs, ys, 5, &mod) == 0 && (mod.warnings & PMNF_WARN_NO_LOG_TERMS) &&
              model_is_finite(&mod),
          "below one");
    for (int t = 0; t < mod.f.nterms; t++)
        check(mod.f.terms[t].factors[0].log == 0, "no log term below 1");
    /* zero and negative coordinates: terms that are not finite are skipped */
    const double xn[] = {-4, -1, 0, 1, 4}, yn[] = {1, 2, 3, 4, 5};
    check(fit1(m, xn, yn, 5, &mod) == 0 && model_is_finite(&mod), "non-positive coordinates");
    /* fewer than 5 points: a model with Extra-P's warning */
    check(fit1(m, xc, ys, 3, &mod) == 0 && (mod.warnings & PMNF_WARN_FEW_POINTS) &&
              model_is_finite(&mod),
          "3 points");
    check(strstr(pmnf_warning_text(PMNF_WARN_FEW_POINTS), "at least 5") != NULL, "warning text");
    check(fit1(m, xc, ys, 2, &mod) == 0 && model_is_finite(&mod), "2 points");
    check(fit1(m, xc, ys, 1, &mod) == 0 && mod.f.nterms == 0 && mod.f.constant == ys[0] &&
              (mod.warnings & PMNF_WARN_NO_INTERVAL),
          "1 point");
    /* invalid input is refused */
    const double ybad[] = {1, NAN, 3, 4, 5};
    check(fit1(m, xc, ybad, 5, &mod) < 0, "NaN refused");
    const double xbad[] = {1, 2, INFINITY, 4, 5};
    check(fit1(m, xbad, ys, 5, &mod) < 0, "inf coordinate refused");
    check(fit1(m, xc, ys, 0, &mod) < 0, "no points refused");
    /* random garbage never yields NaN or inf */
    uint64_t s = 42;
    int finite = 1;
    for (int trial = 0; trial < 300; trial++) {
        double gx[7], gy[7];
        for (int i = 0; i < 7; i++) {
            gx[i] = trial % 3 ? 1 + floor(uniform(&s) * 1e3) : (uniform(&s) - 0.3) * 10;
            gy[i] = (uniform(&s) - 0.2) * pow(10, floor(uniform(&s) * 24) - 12);
        }
        if (fit1(m, gx, gy, 7, &mod) < 0 || !model_is_finite(&mod)) {
            finite = 0;
            break;
        }
        double v2, lo2, hi2;
        pmnf_predict(&mod, &gx[0], &v2, &lo2, &hi2);
        if (isfinite(v2) && (!isfinite(lo2) || !isfinite(hi2)))
            finite = 0;
    }
    check(finite, "garbage in, finite numbers out");
    pmnf_modeler_free(m);
}

static void test_options(void)
{
    pmnf_options o;
    char err[128];
    pmnf_options_default(&o);
    check(pmnf_options_set(&o, "allow_negative_exponents", "true", err, sizeof err) == 0, "opt");
    check(pmnf_options_set(&o, "nonsense", "1", err, sizeof err) < 0 && strstr(err, "nonsense"),
          "unknown option named: %s", err);
    check(pmnf_options_set(&o, "use_crossvalidation", "maybe", err, sizeof err) < 0, "bad bool");
    pmnf_modeler *m = pmnf_modeler_new(&o);
    const double x[] = {2, 4, 8, 16, 32, 64};
    double y[6];
    for (int i = 0; i < 6; i++)
        y[i] = 5 + 100 / x[i];
    pmnf_model mod;
    check(fit1(m, x, y, 6, &mod) == 0 && mod.f.nterms == 1 &&
              mod.f.terms[0].factors[0].poly == -1 && check_close(mod.f.terms[0].coef, 100, 1e-9, 0),
          "strong scaling 100/x recovered");
    pmnf_modeler_free(m);

    /* user exponents replace the defaults */
    pmnf_options_default(&o);
    check(pmnf_options_set(&o, "poly_exponents", "1,2", err, sizeof err) == 0, "poly");
    check(pmnf_options_set(&o, "log_exponents", "1", err, sizeof err) == 0, "log");
    m = pmnf_modeler_new(&o);
    for (int i = 0; i < 6; i++)
        y[i] = 1 + 3 * pow(x[i], 1.5);
    check(fit1(m, x, y, 6, &mod) == 0 && mod.f.nterms == 1 &&
              mod.f.terms[0].factors[0].poly != 1.5,
          "x^(3/2) is not among the user's exponents");
    for (int i = 0; i < 6; i++)
        y[i] = 1 + 3 * x[i] * x[i] * log2(x[i]);
    check(fit1(m, x, y, 6, &mod) == 0 && mod.f.terms[0].factors[0].poly == 2 &&
              mod.f.terms[0].factors[0].log == 1,
          "x^2 log x from the combinations");
    pmnf_modeler_free(m);

    /* without cross-validation and with RSS */
    pmnf_options_default(&o);
    pmnf_options_set(&o, "use_crossvalidation", "false", err, sizeof err);
    pmnf_options_set(&o, "compare_with_rss", "true", err, sizeof err);
    m = pmnf_modeler_new(&o);
    for (int i = 0; i < 6; i++)
        y[i] = 4 + 0.5 * x[i] * log2(x[i]);
    check(fit1(m, x, y, 6, &mod) == 0 && mod.f.terms[0].factors[0].poly == 1 &&
              mod.f.terms[0].factors[0].log == 1,
          "no CV, RSS");
    pmnf_modeler_free(m);

    double scratch[5];
    const double v[] = {5, 1, 4, 2, 3};
    check(pmnf_aggregate(v, 5, PMNF_MEASURE_MEDIAN, scratch) == 3, "median odd");
    check(pmnf_aggregate(v, 4, PMNF_MEASURE_MEDIAN, scratch) == 3, "median even");
    check(pmnf_aggregate(v, 5, PMNF_MEASURE_MEAN, scratch) == 3, "mean");
}

/* The 95% prediction interval for a new observation covers it ~95% of the
 * time when the model's shape is right and the noise normal. */
static void test_interval_coverage(void)
{
    pmnf_options o;
    char err[128];
    pmnf_options_default(&o);
    pmnf_options_set(&o, "poly_exponents", "1", err, sizeof err);
    pmnf_modeler *m = pmnf_modeler_new(&o);
    const double x[] = {2, 4, 6, 8, 10, 12, 14, 16};
    uint64_t s = 7;
    int covered = 0, trials = 2000, linear = 0;
    for (int t = 0; t < trials; t++) {
        double y[8];
        for (int i = 0; i < 8; i++)
            y[i] = 10 + 2 * x[i] + normal(&s);
        pmnf_model mod;
        fit1(m, x, y, 8, &mod);
        if (mod.f.nterms != 1)
            continue;
        linear++;
        double pt = 20, v, lo, hi;
        pmnf_predict(&mod, &pt, &v, &lo, &hi);
        double fresh = 10 + 2 * pt + normal(&s);
        covered += lo <= fresh && fresh <= hi;
    }
    double rate = (double)covered / linear;
    check(linear > trials * 0.99, "linear model chosen %d times", linear);
    /* binomial sd at 95%: sqrt(.95*.05/2000) = 0.5%; allow 4 sd */
    check(rate > 0.93 && rate < 0.97, "coverage %.3f", rate);
    pmnf_modeler_free(m);
}

/* Numbers at the edges: least squares with columns near DBL_MAX (whose
 * squares overflow) and dependent huge columns (GSL's SVD), coordinates and
 * values at and beyond PMNF_MAX_MAGNITUDE. Nothing aborts (GSL's handler is
 * off: tests/numeric_init.c), every model is finite. */
/* The interval of a constant 10 with sigma2 100, (A'A)^-1 = 1 and t 2 is
 * 10 +- 2 sqrt(100 + 100) = [-18.28, 38.28]; for data measured above 0
 * everywhere (vmin 5) its lower end stops at 0, for data that reach below
 * 0 (vmin -1), for a prediction below 0 (-5: [-33.28, 23.28], the lower end
 * above it would be no interval) and for a model without diagnostics it
 * stays. */
static void test_interval_floor(void)
{
    pmnf_model m;
    memset(&m, 0, sizeof m);
    m.f.nparams = 1;
    m.f.constant = 10;
    m.ncoef = 1;
    m.cov[0] = 1;
    m.sigma2 = 100;
    m.t975 = 2;
    m.dof = 3;
    m.diag.known = 1;
    m.diag.vmin = 5;
    double pt = 64, v, lo, hi, half = 2 * sqrt(200.0);
    int rc = pmnf_predict(&m, &pt, &v, &lo, &hi);
    check(rc == 0 && v == 10 && lo == 0 && check_close(hi, 10 + half, 1e-12, 0),
          "measured above 0: %g [%g, %g]", v, lo, hi);
    m.diag.vmin = -1;
    rc = pmnf_predict(&m, &pt, &v, &lo, &hi);
    check(rc == 0 && check_close(lo, 10 - half, 1e-12, 0),
          "measured below 0: lower end %g", lo);
    /* a prediction below 0 (warned elsewhere) keeps its interval around it */
    m.diag.vmin = 5;
    m.f.constant = -5;
    rc = pmnf_predict(&m, &pt, &v, &lo, &hi);
    check(rc == 0 && check_close(lo, -5 - half, 1e-12, 0) && check_close(hi, -5 + half, 1e-12, 0),
          "a prediction below 0: [%g, %g] around it", lo, hi);
    m.f.constant = 10;
    m.diag.known = 0;
    rc = pmnf_predict(&m, &pt, &v, &lo, &hi);
    check(rc == 0 && check_close(lo, 10 - half, 1e-12, 0),
          "no diagnostics: lower end %g", lo);
}

static void test_extreme_numbers(void)
{
    /* y = 2 + 3e-300 x at x near 1e300: column norms computed without overflow */
    double a[10], y[5], x[2], storage[64];
    for (int i = 0; i < 5; i++) {
        a[i] = 1;
        a[5 + i] = (i + 1) * 2e299;
        y[i] = 2 + 3e-300 * a[5 + i];
    }
    lsq_factor f;
    check(lsq_factorize(a, 5, 2, &f, storage) == 0, "columns near 1e300 factorize");
    lsq_solve(&f, y, x);
    check(check_close(x[0], 2, 1e-9, 0) && check_close(x[1], 3e-300, 1e-9, 0),
          "solution at 1e300: %.17g %.17g", x[0], x[1]);
    /* two dependent columns of 1e307s: the SVD fallback, finite or LSQ_NUMERIC */
    for (int i = 0; i < 5; i++) {
        a[i] = (i + 1) * 1e307;
        a[5 + i] = 2 * a[i];
    }
    int rc = lsq_factorize(a, 5, 2, &f, storage);
    check(rc == 0 || rc == LSQ_NUMERIC, "dependent columns near 1e308: %d", rc);
    if (rc == 0) {
        lsq_solve(&f, y, x);
        check(isfinite(x[0]) && isfinite(x[1]), "finite minimum-norm solution");
    }

    /* the points that made GSL abort: refused past the limit, modelled at it */
    double c[5] = {1e308, 5e307, 3.3333333333333334e307, 2.5e307, 2e307};
    double v[5] = {0, 1, 2, 3, 4};
    char err[256];
    pmnf_model out;
    for (int k = 0; k < 2; k++) {
        pmnf_options o;
        pmnf_options_default(&o);
        o.modeler = k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP;
        pmnf_modeler *m = pmnf_modeler_new(&o);
        pmnf_data d = {1, 5, c, v};
        check(pmnf_fit(m, &d, &out, err, sizeof err) == -1 && strstr(err, "beyond"),
              "coordinates near 1e308 refused: %s", err);
        double cl[5] = {1e50, 5e49, 3.3333333333333334e49, 2.5e49, 2e49};
        d.coords = cl;
        int frc = pmnf_fit(m, &d, &out, err, sizeof err);
        double val, lo, hi;
        pmnf_predict(&out, cl, &val, &lo, &hi);
        check(frc == 0 && isfinite(out.f.constant) && isfinite(out.rss) && isfinite(val),
              "coordinates at 1e50 (%s): %d %s", k ? "robust" : "extrap", frc, err);
        double big[5] = {1e50, -1e50, 4.9406564584124654e-324, 1e50, -0.0};
        double x5[5] = {1, 2, 3, 4, 5};
        d.coords = x5;
        d.values = big;
        frc = pmnf_fit(m, &d, &out, err, sizeof err);
        check(frc == 0 && isfinite(out.rss) && isfinite(out.sigma2) && isfinite(out.smape),
              "values at +-1e50 and subnormal: %d %s", frc, err);
        big[0] = 1e51;
        check(pmnf_fit(m, &d, &out, err, sizeof err) == -1 && strstr(err, "value 0"),
              "a value past the limit refused: %s", err);
        pmnf_modeler_free(m);
    }
    check(pmnf_warning_text(PMNF_WARN_NUMERIC_FAILURE)[0] &&
              !strcmp(pmnf_warning_code(PMNF_WARN_NUMERIC_FAILURE), "numeric_failure"),
          "numeric_failure has a text and a code");
}

int main(void)
{
    test_format_double();
    test_format_and_parse();
    test_exact_recovery_single();
    test_multi_parameter();
    test_ill_conditioned();
    test_options();
    test_interval_coverage();
    test_extreme_numbers();
    test_interval_floor();
    return check_summary();
}
