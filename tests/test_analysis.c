/*
 * test_analysis.c — the pure pieces of the analyses: load-imbalance factor
 * and its summary, the per-repetition rank matrix of the aggregation, the
 * regression of time on parameters and LIF, Extra-Deep's speedup and
 * efficiency, the configuration search (grid, feasibility, recommendation,
 * Pareto front, closest candidates) and cost formulas.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula.h"
#include "modeling/aggregate.h"
#include "modeling/configs.h"
#include "modeling/imbalance.h"
#include "modeling/scaling.h"
#include "tests/check.h"

static void test_lif(void)
{
    /* paper 004 Eq. 8: one rank 30% slower among N */
    for (int n = 1; n <= 64; n *= 2) {
        double v[64];
        for (int i = 0; i < n; i++)
            v[i] = i == 0 ? 1.3 : 1.0;
        check(fabs(imb_lif(v, n, 1) - 1.3 / (1 + 0.3 / n)) < 1e-12, "LIF straggler N=%d", n);
    }
    double balanced[4] = {2, 2, 2, 2};
    check(imb_lif(balanced, 4, 1) == 1, "balanced: 1");
    double missing[4] = {NAN, 3, 1, NAN};
    check(fabs(imb_lif(missing, 4, 1) - 1.5) < 1e-15, "NaN skipped: 3/2");
    double none[2] = {NAN, NAN}, zeros[2] = {0, 0};
    check(isnan(imb_lif(none, 2, 1)) && isnan(imb_lif(zeros, 2, 1)), "nothing to balance: NaN");
    /* rank-major matrix, 3 ranks x 2 repetitions */
    double m[6] = {1, 2, 1, 1, 1, 4};
    double out[2];
    imb_lif_reps(m, 3, 2, out);
    check(out[0] == 1 && fabs(out[1] - 4 / (7.0 / 3)) < 1e-15, "per repetition: %g %g", out[0],
          out[1]);
    double s[5] = {1.2, NAN, 1.1, 1.5, 1.3}, scratch[5];
    imb_summary sum;
    imb_summarize(s, 5, scratch, &sum);
    check(sum.n == 4 && fabs(sum.median - 1.25) < 1e-15 && sum.min == 1.1 && sum.max == 1.5,
          "summary: median of 4, range");
}

static void test_rank_matrix(void)
{
    /* 2 repetitions; rank 1 missing from repetition 2; 3 steps, the first warm-up */
    agg_row rows[64];
    size_t n = 0;
    for (int rep = 1; rep <= 2; rep++)
        for (int rank = 0; rank < 3; rank++) {
            if (rep == 2 && rank == 1)
                continue;
            for (int step = 0; step < 3; step++)
                rows[n++] = (agg_row){rep, rank, 0, step, 0, 0,
                                      (step == 0 ? 10.0 : 1.0) * (rank + 1) * rep};
        }
    agg_result r;
    check(agg_coordinate(rows, n, 1, &r) == 0 && r.nvalues == 1, "aggregated");
    const agg_value *v = &r.values[0];
    check(v->nranks == 3 && v->nreps == 2, "3 ranks, 2 repetitions");
    double want[6] = {1, 2, 2, NAN, 3, 6};
    int same = 1;
    for (int i = 0; i < 6; i++)
        same &= isnan(want[i]) ? isnan(v->rank_reps[i]) : v->rank_reps[i] == want[i];
    check(same, "rank-major values per repetition, NaN where a rank is missing");
    double lif[2];
    imb_lif_reps(v->rank_reps, v->nranks, v->nreps, lif);
    check(lif[0] == 1.5 && fabs(lif[1] - 6 / 4.0) < 1e-15, "LIF per repetition %g %g", lif[0],
          lif[1]);
    agg_result_free(&r);
}

static void test_regression(void)
{
    /* y = 3 + 2·x + 50·lif exactly, lif varying independently of x */
    double x[40], y[20];
    uint64_t s = 1;
    for (int i = 0; i < 20; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double xi = 2 + i % 5 * 2, lif = 1 + (double)(s >> 40) / (1 << 24) * 0.5;
        x[2 * i] = xi;
        x[2 * i + 1] = lif;
        y[i] = 3 + 2 * xi + 50 * lif;
    }
    imb_regression r;
    char err[200];
    check(imb_regress(x, 2, y, 20, &r, err, sizeof err) == 0, "fit: %s", err);
    check(fabs(r.coef[0] - 3) < 1e-9 && fabs(r.coef[1] - 2) < 1e-10 && fabs(r.coef[2] - 50) < 1e-9,
          "coefficients %g %g %g", r.coef[0], r.coef[1], r.coef[2]);
    check(fabs(r.r2 - 1) < 1e-12 && r.nobs == 20 && r.dof == 17, "R² = 1, dof 17");
    /* a LIF that never changes is collinear with the intercept */
    for (int i = 0; i < 20; i++)
        x[2 * i + 1] = 1.1;
    check(imb_regress(x, 2, y, 20, &r, err, sizeof err) < 0 && strstr(err, "collinear"),
          "collinear refused: %s", err);
    check(imb_regress(x, 2, y, 2, &r, err, sizeof err) < 0, "fewer observations than coefficients");
    y[3] = NAN;
    check(imb_regress(x, 2, y, 20, &r, err, sizeof err) < 0, "NaN refused");
}

static void test_scaling(void)
{
    /* Extra-Deep Eq. 11/13 */
    check(scl_speedup_pct(100, 50) == 50 && scl_speedup_pct(100, 120) == -20, "Δ");
    check(scl_ideal_speedup_pct(2, 4) == 100 && scl_ideal_speedup_pct(2, 2) == 0, "Δ_t");
    check(scl_efficiency_pct(50, 100) == 50 && scl_efficiency_pct(0, 0) == 100, "ε, 100 at P_1");
    /* perfect strong scaling: conventional efficiency 1, Extra-Deep's ε = x1/xk */
    check(scl_efficiency(100, 25, 2, 8, 1) == 1, "conventional strong efficiency");
    check(scl_efficiency(100, 125, 2, 8, 0) == 0.8, "weak efficiency T1/Tk");
    double d = scl_speedup_pct(100, 25), dt = scl_ideal_speedup_pct(2, 8);
    check(fabs(scl_efficiency_pct(d, dt) - 25) < 1e-12, "ε = 25%% for ideal 2 -> 8");
}

/* P_1 per series along x_1 with two parameters, and Δ/ε/core-hours of one
 * series (Eq. 11-14 per kernel). Coordinates (x1, x2), ascending:
 * (2,32) (2,64) (4,32) (4,64) (8,32) (8,64); times 100 90 60 50 40 30. */
static void test_series_baseline(void)
{
    const double coords[] = {2, 32, 2, 64, 4, 32, 4, 64, 8, 32, 8, 64};
    double t[] = {100, 90, 60, 50, 40, 30};
    const double p84[] = {8, 64}, p832[] = {8, 32}, p816[] = {8, 16};
    check(scl_series_baseline(coords, 6, 2, p84, t) == 1, "P_1 of (8,64) is (2,64)");
    check(scl_series_baseline(coords, 6, 2, p832, t) == 0, "P_1 of (8,32) is (2,32)");
    check(scl_series_baseline(coords, 6, 2, p816, t) == -1, "no series at x2 = 16");
    t[1] = NAN;
    check(scl_series_baseline(coords, 6, 2, p84, t) == 3, "not measured at (2,64): (4,64)");
    check(scl_series_baseline(coords, 6, 2, p84, NULL) == 1, "without values");
    t[1] = 90;
    const double ranks[] = {2, 2, 4, 4, 8, 8};
    double d[6], e[6], ch[6];
    scl_series_derived(coords, 6, 2, t, ranks, 4, d, e, ch);
    /* x2 = 32: Δ = 0, (100-60)/1 = 40, 60; Δ_t = 0, 100, 300; ε = 100, 40, 20
     * x2 = 64: Δ = 0, (90-50)/0.9 = 44.4.., (90-30)/0.9 = 66.6..; ε = 100, 44.4.., 22.2.. */
    check(d[0] == 0 && d[2] == 40 && d[4] == 60 && e[0] == 100 && e[2] == 40 && e[4] == 20,
          "x2 = 32: Δ %g %g %g, ε %g %g %g", d[0], d[2], d[4], e[0], e[2], e[4]);
    check(d[1] == 0 && check_close(d[3], 400.0 / 9, 1e-12, 0) &&
              check_close(d[5], 600.0 / 9, 1e-12, 0) && check_close(e[5], 200.0 / 9, 1e-12, 0),
          "x2 = 64 against its own P_1: Δ %g %g, ε %g", d[3], d[5], e[5]);
    /* core-hours T·ranks·ρ/3600 */
    check(check_close(ch[4], 40.0 * 8 * 4 / 3600, 1e-12, 0), "core-hours %g", ch[4]);
}

static cfg_candidate cand(double ranks, double time, double ch, double cost, double eff)
{
    return (cfg_candidate){.ranks = ranks, .time = time, .core_hours = ch, .cost = cost,
                           .efficiency = eff, .valid = 1};
}

static void test_configs(void)
{
    double a[3] = {2, 4, 8}, b[2] = {16, 32};
    cfg_range r[2] = {{3, a}, {2, b}};
    check(cfg_grid_size(r, 2) == 6, "grid 3 x 2");
    double p[2];
    cfg_grid_point(r, 2, 3, p);
    check(p[0] == 4 && p[1] == 32, "index 3 = (4, 32): last parameter fastest");
    double big[1] = {1};
    cfg_range huge[8];
    for (int i = 0; i < 8; i++)
        huge[i] = (cfg_range){1 << 20, big};
    check(cfg_grid_size(huge, 8) == SIZE_MAX, "overflow saturates");

    cfg_candidate c[5] = {cand(2, 100, 10, NAN, 1.0), cand(4, 60, 12, NAN, 0.83),
                          cand(8, 40, 16, NAN, 0.62), cand(16, 35, 28, NAN, 0.36),
                          cand(32, 36, 60, NAN, 0.17)};
    cfg_limits l = {80, 30, INFINITY};
    cfg_check(&l, c, 5);
    check(!c[0].feasible && c[1].feasible && c[2].feasible && c[3].feasible && !c[4].feasible,
          "feasible: time <= 80 and core-h <= 30");
    check(fabs(c[0].violation - 1.25) < 1e-15 && fabs(c[4].violation - 2) < 1e-15,
          "violation: largest ratio");
    cfg_objective used;
    check(cfg_recommend(c, 5, CFG_AUTO, 1, &used) == 1 && used == CFG_EFFICIENT,
          "strong: highest efficiency among the feasible");
    check(cfg_recommend(c, 5, CFG_AUTO, 0, &used) == 1 && used == CFG_SMALLEST,
          "weak: smallest feasible allocation");
    check(cfg_recommend(c, 5, CFG_FASTEST, 1, &used) == 3, "fastest feasible");
    check(cfg_recommend(c, 5, CFG_CHEAPEST, 1, &used) == 1, "cheapest: core-hours without price");
    int front[5];
    int nf = cfg_pareto(c, 5, front);
    check(nf == 4 && front[0] == 3 && front[1] == 2 && front[2] == 1 && front[3] == 0,
          "Pareto front by ascending time; 32 ranks dominated by 16");
    int closest[3];
    cfg_limits tight = {10, 1, INFINITY};
    cfg_check(&tight, c, 5);
    check(cfg_recommend(c, 5, CFG_AUTO, 1, &used) == -1, "nothing feasible: -1");
    int nc = cfg_closest(c, 5, 3, closest);
    check(nc == 3 && closest[0] == 0 && closest[1] == 1 && closest[2] == 2,
          "closest by violation: %d %d %d", closest[0], closest[1], closest[2]);
    c[2].valid = 0;
    cfg_check(&l, c, 5);
    check(!c[2].feasible && cfg_pareto(c, 5, front) == 3, "an invalid prediction is never chosen");
    cfg_candidate priced[2] = {cand(2, 10, 5, 1.0, 1), cand(4, 8, 6, NAN, 1)};
    cfg_limits money = {INFINITY, INFINITY, 2};
    cfg_check(&money, priced, 2);
    check(priced[0].feasible && !priced[1].feasible, "a cost limit needs a cost");
}

static void test_formula(void)
{
    const char *params[2] = {"ranks", "batch"};
    formula f;
    char err[300];
    check(formula_compile("T*ranks*(8*0.02 + 0.9)/3600", params, 2, &f, err, sizeof err) == 0,
          "compiles: %s", err);
    double pt[2] = {32, 64};
    check(fabs(formula_eval(&f, 100, 32, 8, 0.02, pt) - 100 * 32 * 1.06 / 3600) < 1e-12,
          "GPUs billed apart");
    formula_free(&f);
    check(formula_compile("T*cores_per_rank*price_per_core_hour*ranks/3600 + batch/64", params, 2,
                          &f, err, sizeof err) == 0,
          "builtins and parameters");
    /* a parameter named ranks takes the place of the builtin */
    double pt4[2] = {4, 64};
    check(fabs(formula_eval(&f, 3600, 999, 2, 0.5, pt4) - (4 + 1)) < 1e-12, "= 5");
    formula_free(&f);
    check(formula_compile("T*nodes", params, 2, &f, err, sizeof err) < 0 && strstr(err, "nodes"),
          "unknown variable named: %s", err);
    check(formula_compile("T*(ranks", params, 2, &f, err, sizeof err) < 0, "syntax: %s", err);
    check(formula_compile("", params, 2, &f, err, sizeof err) < 0, "empty");
    check(formula_compile("sqrt(T) + log(ranks)", params, 2, &f, err, sizeof err) == 0,
          "functions");
    check(fabs(formula_eval(&f, 4, 1, 1, 0, pt) - (2 + log(32))) < 1e-12, "sqrt(4) + log(32)");
    formula_free(&f);
}

int main(void)
{
    test_lif();
    test_rank_matrix();
    test_regression();
    test_scaling();
    test_series_baseline();
    test_configs();
    test_formula();
    return check_summary();
}
