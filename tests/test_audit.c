/*
 * test_audit.c — the coded warnings of models and predictions
 * (modeling/assess.c), and the audit on Extra-P's own test data
 * (tests/audit.h, tests/data/extrap-audit/):
 *
 *  - strong_scaling/one_parameter_1.txt (725, 505, 319, 179, 82 s at
 *    x = 20..60) becomes c0 - c1 log2(x) with Extra-P's modeler; at x = 120
 *    it predicts a negative time, which must carry negative_prediction and
 *    implausible_extrapolation, and x = 240 (4x) extrapolation_far too;
 *    x = 40 inside the range carries none of them; the robust modeler keeps
 *    its predictions positive up to the horizon (8x), so none of the two;
 *  - a growing metric that falls: 10 + 10x - 0.12x^2 measured at 1..20
 *    (growing there) falls below its value at 20 on the way to 80;
 *  - a constant fitted to 256, 64, 16, 4, 1 is constant_on_varying and
 *    poor_fit; four values of x are few_points and interval_unreliable;
 *    exact data 2x + 1 at 8 points none of these;
 *  - diagnostics: measured range, distinct values, smallest and largest
 *    measurement; the leave-one-out SMAPE of c0 + c1 x on y = 1,2,3,4,10 is
 *    the SMAPE of the residuals r_i / (1 - h_ii), computed here by hand;
 *  - the audit: every impossible prediction within 8x, poor fit, constant
 *    on varying data and too few values carries its warning with both
 *    modelers (0 silent); the robust modeler's interval misses the left-out
 *    point in at most 2 series (Extra-P's: at most 1 miss silent).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modeling/assess.h"
#include "modeling/modeler.h"
#include "tests/audit.h"
#include "tests/check.h"

static int fit(pmnf_modeler_kind kind, int n, const double *x, const double *y, pmnf_model *out)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = kind;
    pmnf_modeler *m = pmnf_modeler_new(&o);
    char err[200];
    pmnf_data d = {1, n, x, y};
    int rc = m ? pmnf_fit(m, &d, out, err, sizeof err) : -1;
    check(rc == 0, "fit: %s", rc ? err : "");
    pmnf_modeler_free(m);
    return rc;
}

static void test_strong_scaling(void)
{
    size_t len;
    char *buf = harness_read_file("tests/data/extrap-audit/strong_scaling/one_parameter_1.txt", &len);
    ingest_experiment e;
    ingest_error ie;
    if (!buf || ingest_extrap_read(buf, len, INGEST_FORMAT_EXTRAP_TEXT, &e, &ie) < 0) {
        check(0, "strong_scaling/one_parameter_1.txt: %s", buf ? ie.msg : "missing");
        free(buf);
        return;
    }
    free(buf);
    for (int k = 0; k < 2; k++) {
        pmnf_options o;
        pmnf_options_default(&o);
        o.modeler = k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP;
        pmnf_modeler *mod = pmnf_modeler_new(&o);
        audit_series s;
        pmnf_model m;
        int rc = mod && audit_series_make(&e, &e.series[0], -1, 0, &s) == 0 ? 0 : -1;
        if (rc == 0) {
            rc = audit_fit(mod, &s, &m);
            audit_series_free(&s);
        }
        pmnf_modeler_free(mod);
        check(rc == 0, "fit");
        if (rc < 0)
            continue;
        pmnf_point_check pc;
        double at = 120;
        pmnf_assess_point(&m, &at, &pc);
        if (k) { /* the robust modeler: positive up to the horizon */
            pmnf_point_check hz;
            pmnf_assess_horizon(&m, &hz);
            check(pc.value > 0 && !(pc.warnings & PMNF_WARN_NEGATIVE_PREDICTION) &&
                      !(hz.warnings & PMNF_WARN_NEGATIVE_PREDICTION),
                  "robust: x=120 predicts %g, positive to 8x (warnings %u, %u)", pc.value,
                  pc.warnings, hz.warnings);
            continue;
        }
        check(pc.value < 0, "%s: x=120 predicts %g, a negative time", k ? "robust" : "extrap",
              pc.value);
        check(pc.warnings & PMNF_WARN_NEGATIVE_PREDICTION, "negative_prediction at x=120");
        check(pc.warnings & PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION, "implausible at x=120");
        check(!(pc.warnings & PMNF_WARN_EXTRAPOLATION_FAR), "120 = 2x is not far");
        check(pc.min_value <= pc.value && pc.min_at[0] > 60, "min %g at %g", pc.min_value,
              pc.min_at[0]);
        at = 240.5;
        pmnf_assess_point(&m, &at, &pc);
        check(pc.warnings & PMNF_WARN_EXTRAPOLATION_FAR, "240.5 > 4 x 60 is far");
        check(fabs(pc.far_factor - 240.5 / 60) < 1e-12 && pc.far_param == 0, "far factor %g",
              pc.far_factor);
        at = 40;
        pmnf_assess_point(&m, &at, &pc);
        check(pc.warnings == 0, "inside the range: no warning (got %u)", pc.warnings);
        /* the model's diagnostics */
        check(m.diag.known && m.diag.lo[0] == 20 && m.diag.hi[0] == 60 && m.diag.distinct[0] == 5,
              "range 20..60, 5 values");
        /* the means of the repetitions, which the issue rounds to 82 and 725 */
        check(fabs(m.diag.vmin - 82) < 1 && fabs(m.diag.vmax - 725) < 1, "values %g..%g",
              m.diag.vmin, m.diag.vmax);
        pmnf_point_check h;
        pmnf_assess_horizon(&m, &h);
        check((h.warnings & PMNF_WARN_NEGATIVE_PREDICTION) && !(h.warnings & PMNF_WARN_EXTRAPOLATION_FAR),
              "the horizon (8x) sees the negative prediction");
    }
    ingest_experiment_free(&e);
}

static void test_growing_falls(void)
{
    double x[20], y[20];
    for (int i = 0; i < 20; i++) {
        x[i] = i + 1;
        y[i] = 10 + 10 * x[i] - 0.12 * x[i] * x[i];
    }
    pmnf_model m;
    memset(&m, 0, sizeof m);
    /* the exact function, whichever the modeler would choose */
    m.f.nparams = 1;
    m.f.constant = 10;
    m.f.nterms = 2;
    m.f.terms[0] = (pmnf_term){10, 1, {{0, 1, 0}}};
    m.f.terms[1] = (pmnf_term){-0.12, 1, {{0, 2, 0}}};
    m.warnings = PMNF_WARN_NO_INTERVAL;
    pmnf_data d = {1, 20, x, y};
    check(pmnf_assess_model(&m, &d) == 0, "assess");
    double at = 60; /* 10 + 600 - 432 = 178 < f(20) = 162? no: f(60) = 178 */
    pmnf_point_check pc;
    pmnf_assess_point(&m, &at, &pc);
    /* f(20) = 162, maximum f(41.7) = 218, f(60) = 178: no fall below 162 */
    check(pc.growing && !(pc.warnings & PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION),
          "f(60) = %g above f(20) = %g", pc.value, pc.edge_value);
    at = 80; /* f(80) = 42 < 162 - 5% */
    pmnf_assess_point(&m, &at, &pc);
    check(fabs(pc.value - 42) < 1e-9, "f(80) = %g", pc.value);
    check(pc.warnings & PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION, "a growing metric falls to 42");
    check(!(pc.warnings & PMNF_WARN_NEGATIVE_PREDICTION), "but stays positive");
}

static void test_model_warnings(void)
{
    const double x[] = {1, 2, 4, 8, 16}, y[] = {256, 64, 16, 4, 1};
    pmnf_model m;
    memset(&m, 0, sizeof m);
    m.f.nparams = 1;
    m.f.constant = 68.2;
    m.smape = 124;
    m.ar2 = 0;
    m.warnings = PMNF_WARN_NO_INTERVAL;
    pmnf_data d = {1, 5, x, y};
    check(pmnf_assess_model(&m, &d) == 0, "assess");
    check(m.warnings & PMNF_WARN_CONSTANT_ON_VARYING, "a constant on 1..256: constant_on_varying");
    check(m.warnings & PMNF_WARN_POOR_FIT, "SMAPE 124%%: poor_fit");
    check(!(m.warnings & PMNF_WARN_FEW_POINTS), "5 values are enough");

    const double x4[] = {1, 2, 3, 4}, y4[] = {3, 5, 7, 9.5};
    pmnf_model m4;
    if (fit(PMNF_MODELER_EXTRAP, 4, x4, y4, &m4) == 0) {
        check(m4.warnings & PMNF_WARN_FEW_POINTS, "4 values: few_points");
        check(!(m4.warnings & PMNF_WARN_NO_INTERVAL) ? (m4.warnings & PMNF_WARN_INTERVAL_UNRELIABLE) != 0 : 1,
              "4 values: the interval is unreliable");
    }

    const double x8[] = {1, 2, 3, 4, 5, 6, 7, 8};
    double y8[8];
    for (int i = 0; i < 8; i++)
        y8[i] = 2 * x8[i] + 1;
    for (int k = 0; k < 2; k++) {
        pmnf_model e;
        if (fit(k ? PMNF_MODELER_ROBUST : PMNF_MODELER_EXTRAP, 8, x8, y8, &e) < 0)
            continue;
        unsigned bad = PMNF_WARN_POOR_FIT | PMNF_WARN_CONSTANT_ON_VARYING | PMNF_WARN_FEW_POINTS;
        check(!(e.warnings & bad), "%s: exact 2x + 1: no fit warning (%u)", k ? "robust" : "extrap",
              e.warnings);
        check(e.diag.loo_smape < 1e-6, "exact data: leave-one-out SMAPE %g", e.diag.loo_smape);
    }
}

/* c0 + c1 x on 1,2,3,4,10: r_i / (1 - h_ii), h_ii = 1/n + (x_i - mean)^2 / Sxx */
static void test_leave_one_out(void)
{
    const double x[] = {1, 2, 3, 4, 5}, y[] = {1, 2, 3, 4, 10};
    double mx = 3, my = 4, sxx = 10, sxy = 0;
    for (int i = 0; i < 5; i++)
        sxy += (x[i] - mx) * (y[i] - my);
    double b = sxy / sxx, a = my - b * mx;
    pmnf_model m;
    memset(&m, 0, sizeof m);
    m.f.nparams = 1;
    m.f.constant = a;
    m.f.nterms = 1;
    m.f.terms[0] = (pmnf_term){b, 1, {{0, 1, 0}}};
    m.warnings = PMNF_WARN_NO_INTERVAL;
    pmnf_data d = {1, 5, x, y};
    check(pmnf_assess_model(&m, &d) == 0, "assess");
    double sum = 0;
    for (int i = 0; i < 5; i++) {
        double h = 0.2 + (x[i] - mx) * (x[i] - mx) / sxx;
        double loo = y[i] - (y[i] - (a + b * x[i])) / (1 - h);
        sum += 2 * fabs(loo - y[i]) / (fabs(y[i]) + fabs(loo));
    }
    check(fabs(m.diag.loo_smape - sum / 5 * 100) < 1e-9, "loo SMAPE %g, by hand %g",
          m.diag.loo_smape, sum / 5 * 100);
}

static void test_audit(void)
{
    audit_result r;
    check(audit_run("tests/data/extrap-audit", &r, stderr) == 0, "audit ran");
    check(r.failed == 0 && r.files == 56 && r.series == 129, "%d files, %d series, %d failed",
          r.files, r.series, r.failed);
    for (int mk = 0; mk < 2; mk++) {
        const char *name = mk ? "robust" : "extrap";
        static const int guarded[] = {AUDIT_IMPOSSIBLE, AUDIT_POOR_FIT, AUDIT_CONSTANT,
                                      AUDIT_FEW_VALUES};
        for (size_t i = 0; i < sizeof guarded / sizeof guarded[0]; i++) {
            const audit_count *c = &r.c[mk][guarded[i]];
            check(c->silent == 0 && c->warned == c->problems, "%s %s: %d problems, %d silent",
                  name, audit_category[guarded[i]], c->problems, c->silent);
        }
        /* the data have these problems: the audit sees them */
        if (mk) /* the robust modeler avoids them (at most 3, the goal) */
            check(r.c[mk][AUDIT_IMPOSSIBLE].problems <= 3, "robust: %d impossible predictions",
                  r.c[mk][AUDIT_IMPOSSIBLE].problems);
        else
            check(r.c[mk][AUDIT_IMPOSSIBLE].problems >= 15, "%s: impossible predictions found",
                  name);
        check(r.c[mk][AUDIT_FEW_VALUES].problems == 16, "%s: 16 series with < 5 values", name);
    }
    /* the robust modeler's interval holds the left-out point in all but at
     * most 2 series (the goal; mpa/1_param_gpr falls from 835 to 574 after
     * five points on one line, which nothing in them foretells) */
    check(r.c[1][AUDIT_INTERVAL].problems <= 2, "robust: %d left-out points outside the interval",
          r.c[1][AUDIT_INTERVAL].problems);
    check(r.c[0][AUDIT_INTERVAL].silent <= 1, "extrap: at most 1 missed interval silent (%d)",
          r.c[0][AUDIT_INTERVAL].silent);
}

int main(void)
{
    test_strong_scaling();
    test_growing_falls();
    test_model_warnings();
    test_leave_one_out();
    test_audit();
    return check_summary();
}
