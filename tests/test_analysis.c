/*
 * test_analysis.c — the pure pieces of the analyses: load-imbalance factor
 * and its summary, the per-repetition rank matrix of the aggregation, the
 * regression of time on parameters and LIF, Extra-Deep's speedup and
 * efficiency, the configuration search (grid, feasibility also at the
 * intervals' upper ends, recommendation, Pareto front, closest candidates),
 * cost formulas and the cost of an epoch (analysis/cost.h; refused where it
 * overflows), the too-noisy points of a model set
 * (analysis/noisy.h), the speedup table per kernel and part
 * (analysis/speedups.h), paper 004's iteration model over profile rows
 * (analysis/iterations.h), the data the analyses read of a model set
 * (analysis/set_data.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cost.h"
#include "analysis/finite_point.h"
#include "analysis/formula.h"
#include "analysis/iterations.h"
#include "analysis/noisy.h"
#include "analysis/rank_count.h"
#include "analysis/set_data.h"
#include "analysis/speedups.h"
#include "ingest/profile.h"
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
    /* P_1 where no series was measured at the other values (x2 = 16): the
     * point at the smallest measured x1, 2, with x2 = 16, for the caller to
     * predict (Extra-Deep's T_1 = F(x_1,1)), never another series' P_1 */
    double base[2];
    check(scl_baseline_point(coords, 6, 2, p816, t, base) == -1 && base[0] == 2 && base[1] == 16,
          "P_1 of (8,16): (2,16), not measured: (%g,%g)", base[0], base[1]);
    check(scl_baseline_point(coords, 6, 2, p84, t, base) == 3 && base[0] == 4 && base[1] == 64,
          "P_1 of (8,64) measured: (4,64) while (2,64) has no value");
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

/* A rank count of 0 or below (a coordinate <= 0 read as the ranks) has no
 * ideal speedup, no efficiency against it and no core-hours: each is NaN
 * (null in JSON), never 0% or 0 core-hours. With x_1 = 0 ranks the old
 * Δ_t = (4 - 0) / (0/100) = inf made ε = 100·40/inf = 0%; with x_k = -4,
 * Δ_t = (-4 - 2)/(2/100) = -300% and ε = 100·40/-300 = -13.3%. */
static void test_scaling_no_ranks(void)
{
    check(isnan(scl_ideal_speedup_pct(0, 4)) && isnan(scl_ideal_speedup_pct(2, 0)) &&
              isnan(scl_ideal_speedup_pct(2, -4)) && isnan(scl_ideal_speedup_pct(-2, 4)),
          "Δ_t without a rank count: %g %g", scl_ideal_speedup_pct(0, 4),
          scl_ideal_speedup_pct(2, -4));
    check(isnan(scl_efficiency_pct(40, scl_ideal_speedup_pct(0, 4))), "ε against 0 ranks");
    check(isnan(scl_efficiency(100, 25, 0, 8, 1)) && isnan(scl_efficiency(100, 25, 2, -8, 1)),
          "strong T1·x1/(Tk·xk) without a rank count");
    check(scl_efficiency(100, 125, 0, 8, 0) == 0.8, "weak T1/Tk reads no ranks");
    /* a series at ranks 0, 2, 4 (times 100, 60, 40): P_1 is the first point;
     * Δ = 0, 40, 60 (measured, still valid); Δ_t, ε and core-hours of the
     * point at 0 ranks and ε against it: NaN */
    const double coords[] = {0, 2, 4}, t[] = {100, 60, 40}, ranks[] = {0, 2, 4};
    double d[3], e[3], ch[3];
    scl_series_derived(coords, 3, 1, t, ranks, 4, d, e, ch);
    check(d[0] == 0 && d[1] == 40 && d[2] == 60, "Δ %g %g %g", d[0], d[1], d[2]);
    check(e[0] == 100 && isnan(e[1]) && isnan(e[2]), "ε %g %g %g", e[0], e[1], e[2]);
    check(isnan(ch[0]) && check_close(ch[1], 60.0 * 2 * 4 / 3600, 1e-12, 0),
          "core-hours %g %g", ch[0], ch[1]);
}

/* analysis/rank_count.h: a point without a rank count refused, naming the
 * field and the point. */
static void test_rank_count(void)
{
    const char *const names[2] = {"gpus", "size"};
    const double pt[2] = {1, -2};
    an_problem p;
    check(rank_count_check(0.5, names, 2, pt, "gpus", &p) == 0, "0.5 ranks is a count");
    check(rank_count_check(0, names, 2, pt, "gpus", &p) < 0 && p.status == 400 &&
              !strcmp(p.field, "gpus") && strstr(p.msg, "at gpus=1, size=-2") &&
              strstr(p.msg, "must be a number > 0"),
          "0 ranks refused: %s %s", p.field, p.msg);
    check(rank_count_check(-3, names, 2, pt, "values", &p) < 0 && !strcmp(p.field, "values"),
          "negative ranks refused");
    check(rank_count_check(NAN, names, 2, pt, "values", &p) < 0, "NaN ranks refused");
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
    /* an efficiency that is not a number (an efficiency model without a
     * value at the point) ranks after every number, wherever it stands:
     * first in the list, it must not keep the lead by failing every
     * comparison (it did: candidate 0 was recommended) */
    cfg_candidate e[3] = {cand(2, 50, 5, NAN, NAN), cand(4, 40, 6, NAN, 0.9),
                          cand(8, 30, 7, NAN, 0.5)};
    cfg_limits none = {INFINITY, INFINITY, INFINITY};
    cfg_check(&none, e, 3);
    check(cfg_recommend(e, 3, CFG_EFFICIENT, 1, &used) == 1,
          "efficient: 0.9 over 0.5 and over no number (listed first)");
    cfg_candidate e2[3] = {cand(4, 40, 6, NAN, 0.9), cand(2, 50, 5, NAN, NAN),
                           cand(8, 30, 7, NAN, 0.5)};
    cfg_check(&none, e2, 3);
    check(cfg_recommend(e2, 3, CFG_EFFICIENT, 1, &used) == 0,
          "efficient: 0.9, whatever the order");
    cfg_candidate e3[2] = {cand(2, 50, 5, NAN, NAN), cand(4, 40, 6, NAN, NAN)};
    cfg_check(&none, e3, 2);
    check(cfg_recommend(e3, 2, CFG_EFFICIENT, 1, &used) == 1,
          "no efficiency anywhere: the ties' order (the faster)");
    cfg_candidate priced[2] = {cand(2, 10, 5, 1.0, 1), cand(4, 8, 6, NAN, 1)};
    cfg_limits money = {INFINITY, INFINITY, 2};
    cfg_check(&money, priced, 2);
    check(priced[0].feasible && !priced[1].feasible, "a cost limit needs a cost");
}

/* A limit inside an interval: feasible by the point estimate is not
 * feasible at the upper end, and the recommendation prefers the candidates
 * feasible at their upper ends. Deadline 142 s: 4 ranks predicted 142.0 s
 * in [140.3, 143.7] (feasible, not at the upper end), 8 ranks 100 s in
 * [98, 102] (both); cheapest by core-hours is 4 (14.2 against 20), but 8
 * is the one that meets the deadline at its upper end too. With 4 alone
 * feasible at its point estimate, 4 is still recommended. Without an
 * interval (upper end NaN, or 0: below the value) the value is the upper
 * end. */
static void test_configs_upper(void)
{
    cfg_candidate c[3] = {cand(2, 200, 11, NAN, 1), cand(4, 142.0, 14.2, NAN, 0.7),
                          cand(8, 100, 20, NAN, 0.5)};
    c[0].time_hi = 205;
    c[1].time_hi = 143.7;
    c[2].time_hi = 102;
    cfg_limits l = {142, INFINITY, INFINITY};
    cfg_check(&l, c, 3);
    check(!c[0].feasible && c[1].feasible && !c[1].feasible_at_upper && c[2].feasible &&
              c[2].feasible_at_upper,
          "142.0 in [140.3, 143.7] under 142: feasible, not at the upper end");
    cfg_objective used;
    check(cfg_recommend(c, 3, CFG_CHEAPEST, 1, &used) == 2,
          "cheapest: 8 ranks (feasible at the upper end), not 4");
    check(cfg_recommend(c, 3, CFG_AUTO, 0, &used) == 2, "weak: the smallest robust one, 8");
    c[2].time_hi = 150;
    cfg_check(&l, c, 3);
    check(cfg_recommend(c, 3, CFG_CHEAPEST, 1, &used) == 1,
          "none feasible at its upper end: the point estimate decides (4)");
    /* core-hours and cost have their upper ends too */
    cfg_candidate m[2] = {cand(2, 10, 5, 1.0, 1), cand(4, 8, 6, 1.5, 1)};
    m[0].cost_hi = 2.5;
    m[1].cost_hi = 1.9;
    m[1].core_hours_hi = NAN;
    cfg_limits money = {INFINITY, INFINITY, 2};
    cfg_check(&money, m, 2);
    check(m[0].feasible && !m[0].feasible_at_upper && m[1].feasible_at_upper &&
              cfg_recommend(m, 2, CFG_CHEAPEST, 1, &used) == 1,
          "cost 1.0 in [.., 2.5] under 2: not at the upper end; 1.5 up to 1.9 is");
    cfg_limits hours = {INFINITY, 5.5, INFINITY};
    m[0].core_hours_hi = 6;
    cfg_check(&hours, m, 2);
    check(m[0].feasible && !m[0].feasible_at_upper && !m[1].feasible,
          "core-hours 5 up to 6 under 5.5");
    cfg_candidate plain[1] = {cand(2, 10, 5, NAN, 1)};
    cfg_check(&l, plain, 1);
    check(plain[0].feasible_at_upper, "no interval: the value is the upper end");
}

/* A prediction that overflows at a point is refused naming the parameter
 * (the one farthest from 1 on a log scale), one whose totals overflow
 * naming epochs; NaN core-hours (no rank count) and money without a value
 * are answered, as null with their reasons. */
static void test_cost_finite(void)
{
    const char *names[2] = {"ranks", "batch"};
    double far[2] = {1e308, 64}, near[2] = {32, 64}, small[2] = {2, 1e-300};
    an_problem p;
    check(cost_check_finite(100, 2, 0.1, 1, names, 2, near, &p) == 0, "finite: answered");
    check(cost_check_finite(100, NAN, NAN, 90, names, 2, near, &p) == 0,
          "no rank count, no money: answered with nulls");
    check(cost_check_finite(100, 2, INFINITY, 90, names, 2, near, &p) == 0,
          "a formula's division by 0: answered (cost_invalid)");
    check(cost_check_finite(INFINITY, NAN, NAN, 1, names, 2, far, &p) < 0 && p.status == 400 &&
              !strcmp(p.field, "ranks") && strstr(p.msg, "not finite") &&
              strstr(p.msg, "ranks=1e+308") && strlen(p.msg) < 300,
          "time overflows at ranks 1e308: %s: %s", p.field, p.msg);
    check(cost_check_finite(NAN, NAN, NAN, 1, names, 2, small, &p) < 0 &&
              !strcmp(p.field, "batch"),
          "batch 1e-300 is the coordinate farthest from 1: %s", p.field);
    check(cost_check_finite(2e4, INFINITY, NAN, 1, names, 2, far, &p) < 0 &&
              !strcmp(p.field, "ranks") && strstr(p.msg, "core-hours"),
          "finite time, overflowing core-hours: %s", p.msg);
    check(cost_check_finite(1e300, 1e300, 1e299, 1e9, names, 2, near, &p) < 0 &&
              !strcmp(p.field, "epochs"),
          "totals over 1e9 epochs overflow: %s: %s", p.field, p.msg);
    check(cost_check_finite(100, 1, 1e300, 1e9, names, 2, near, &p) < 0 &&
              !strcmp(p.field, "epochs"),
          "money's total overflows: %s", p.field);
}

/* The rule every prediction at a named point keeps: a value that is not
 * finite is refused naming the field the farthest coordinate came from (a
 * caller's field for it, else the parameter), the value and the point. */
static void test_finite_point(void)
{
    const char *names[2] = {"ranks", "batch"};
    double far[2] = {1e308, 64}, small[2] = {2, 1e-300};
    fp_value ok[2] = {{"the model of the epoch time", 20464}, {"the model of comp time", 2e-305}};
    fp_value bad[2] = {{"the model of the epoch time", 20464}, {"the model of comm time", INFINITY}};
    an_problem p;
    check(finite_point_check(ok, 2, names, 2, far, NULL, &p) == 0, "finite values: answered");
    check(finite_point_check(bad, 2, names, 2, far, NULL, &p) < 0 && p.status == 400 &&
              !strcmp(p.field, "ranks") && strstr(p.msg, "the model of comm time gives inf") &&
              strstr(p.msg, "ranks=1e+308, batch=64") && strlen(p.msg) < 300,
          "an overflowing part: 400 naming ranks: %s: %s", p.field, p.msg);
    const char *fields[2] = {"values", NULL};
    check(finite_point_check(bad, 2, names, 2, far, fields, &p) < 0 && !strcmp(p.field, "values"),
          "the caller's field for ranks: %s", p.field);
    check(finite_point_check(bad, 2, names, 2, small, fields, &p) < 0 &&
              !strcmp(p.field, "batch"),
          "batch 1e-300 farthest from 1, no field given for it: %s", p.field);
    fp_value nan = {"the model of the speedup", NAN};
    check(finite_point_check(&nan, 1, names, 2, far, NULL, &p) < 0, "NaN is not a number either");
    check(finite_point_far(2, small) == 1 && finite_point_far(1, far) == 0, "the farthest");
}

/* A rank count a scheduler can allocate: whole, and so are its degrees
 * (to 1e-9 relative, the rounding of a range's steps); one not > 0 is
 * rank_count_check's. The warning of a what-if names the count. */
static void test_rank_count_whole(void)
{
    check(rank_count_whole(8, 8, 1) && rank_count_whole(8, NAN, NAN) &&
              rank_count_whole(3.0000000000000004, NAN, NAN) && rank_count_whole(0, NAN, NAN),
          "whole counts (and no count) pass");
    check(!rank_count_whole(10.125, 10.125, 1) && !rank_count_whole(8, 2.5, 3.2) &&
              !rank_count_whole(8.5, NAN, NAN),
          "a fractional count or degree does not");
    const char *names[1] = {"ranks"};
    double at[1] = {10.125};
    json_t *w = rank_count_whole_warning(10.125, 10.125, 1, names, 1, at);
    const char *msg = json_string_value(json_object_get(w, "message")) ?: "";
    check(w && !strcmp(json_string_value(json_object_get(w, "code")) ?: "", "ranks_not_whole") &&
              json_number_value(json_object_get(w, "ranks")) == 10.125 &&
              strstr(msg, "data_parallel 10.125 × model_parallel 1 = 10.125 ranks") &&
              strstr(msg, "At ranks=10.125"),
          "ranks_not_whole: %s", msg);
    json_decref(w);
    at[0] = 10;
    check(rank_count_whole_warning(10, 10, 1, names, 1, at) == NULL, "10 ranks: no warning");
}

/* A series' model that overflows at the point is refused; one without a
 * model (its measured value there, or none) is not. */
static void test_speedups_finite(void)
{
    const char *names[1] = {"ranks"};
    double at[1] = {1e308};
    sp_series s[2];
    memset(s, 0, sizeof s);
    s[0].name = "epoch";
    s[1].name = "allreduce";
    s[0].present[0] = s[1].present[0] = s[1].present[2] = 1;
    s[0].at[0] = 50;
    s[0].at[1] = NAN; /* no model of ε: answered null with its reason */
    s[1].at[0] = -30;
    s[1].at[2] = 4;
    sp_table w = {.nparams = 1, .s = s, .ns = 2};
    an_problem p;
    check(sp_check_finite(&w, names, at, &p) == 0, "finite models, a missing one: answered");
    s[1].at[2] = INFINITY;
    check(sp_check_finite(&w, names, at, &p) < 0 && !strcmp(p.field, "ranks") &&
              strstr(p.msg, "allreduce's core-hours"),
          "allreduce's core-hours overflow: %s", p.msg);
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

/* Extra-Deep Eq. 14: core-hours T·ranks·ρ/3600, money by price or formula */
static void test_cost(void)
{
    const char *params[2] = {"ranks", "batch"};
    char err[256];
    cost_eval c;
    cost_setup priced = {.has_cost = 1, .cores_per_rank = 4, .price_per_core_hour = 0.5,
                         .formula = "", .params = params, .nparams = 2};
    double pt[2] = {16, 64};
    check(cost_open(&c, &priced, err, sizeof err) == 0 && !c.has_formula, "priced: opens");
    check(fabs(cost_core_hours(&c, 900, 16) - 900.0 * 16 * 4 / 3600) < 1e-12, "core-hours 16");
    check(fabs(cost_money(&c, 900, 16, pt) - 16 * 0.5) < 1e-12, "money: 16 core-hours at 0.5");
    /* no rank count: no core-hours and no money, never 0 or negative */
    check(isnan(cost_core_hours(&c, 900, 0)) && isnan(cost_core_hours(&c, 900, -4)) &&
              isnan(cost_money(&c, 900, 0, pt)) && isnan(cost_money(&c, 900, -4, pt)),
          "0 or -4 ranks: %g %g core-hours", cost_core_hours(&c, 900, 0),
          cost_core_hours(&c, 900, -4));
    cost_close(&c);
    cost_setup none = {.has_cost = 0, .cores_per_rank = 1, .price_per_core_hour = NAN,
                       .formula = "", .params = params, .nparams = 2};
    check(cost_open(&c, &none, err, sizeof err) == 0, "no cost set-up: opens");
    check(fabs(cost_core_hours(&c, 3600, 8) - 8) < 1e-12, "core-hours with rho 1");
    check(isnan(cost_money(&c, 3600, 8, pt)), "no price, no formula: NaN");
    cost_close(&c);
    /* the formula wins over the price and sees T, ranks and the parameters */
    cost_setup formula = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5,
                          .formula = "T*ranks*cores_per_rank*price_per_core_hour/3600 + batch/64",
                          .params = params, .nparams = 2};
    check(cost_open(&c, &formula, err, sizeof err) == 0 && c.has_formula, "formula: %s", err);
    check(fabs(cost_money(&c, 3600, 16, pt) - (16 * 2 * 0.5 + 1)) < 1e-12, "formula: 17");
    cost_close(&c);
    cost_setup bad = formula;
    bad.formula = "T*nodes";
    check(cost_open(&c, &bad, err, sizeof err) < 0 && strstr(err, "nodes"), "unknown name: %s",
          err);
}

/* only application epoch rows with 2+ repetitions whose mean's 95% interval
 * passes ±5% are named, with their coordinate and levels */
static void test_noisy(void)
{
    static const char params[1][64] = {"ranks"};
    static const char factors[1][65] = {"dataloader"};
    noisy_names nm = {params, 1, factors, 1};
    double p8 = 8, p16 = 16, p32 = 32;
    double calm[3] = {1, 1.001, 0.999}, wild[3] = {1, 2, 3}, one[1] = {5};
    store_measurement_row rows[4] = {
        {.point = &p8, .nparams = 1, .level = "application", .name = "epoch", .metric = "time",
         .phase = "epoch", .reps = calm, .nreps = 3, .levels = "[\"cpu\"]"},
        {.point = &p16, .nparams = 1, .level = "application", .name = "epoch", .metric = "time",
         .phase = "epoch", .reps = wild, .nreps = 3, .levels = "[\"dali\"]"},
        {.point = &p16, .nparams = 1, .level = "callpath", .name = "gemm", .metric = "time",
         .phase = "epoch", .reps = wild, .nreps = 3},
        {.point = &p32, .nparams = 1, .level = "application", .name = "epoch", .metric = "time",
         .phase = "epoch", .reps = one, .nreps = 1},
    };
    noisy_points np;
    noisy_points_scan(&nm, rows, 4, &np);
    check(np.count == 1 && np.named == 1, "one too-noisy point: %d", np.count);
    check(strstr(np.text[0], "ranks=16 [dataloader=dali] epoch time (phase epoch)") != NULL,
          "named with coordinate and levels: %s", np.text[0]);
    /* mean 2, SD 1, t(0.975, 2) = 4.303: ±124.2% of the mean */
    check(strstr(np.text[0], "±124.2%") != NULL, "the interval's width: %s", np.text[0]);
}

static double ranks_first(const void *ctx, const double *point)
{
    (void)ctx;
    return point[0];
}

/* perfect strong scaling of the epoch and of "gemm" (T ∝ 1/x), a constant
 * "allreduce": Δ = (T_1 - T_k)/(T_1/100) against x = 2, models of Δ, ranking */
static void test_speedups(void)
{
    double x[6] = {2, 4, 8, 16, 32, 64};
    store_measurement_row rows[18];
    for (int i = 0; i < 6; i++) {
        rows[i] = (store_measurement_row){.point = &x[i], .nparams = 1, .level = "application",
                                          .name = "epoch", .category = "", .value = 64 / x[i]};
        rows[6 + i] = (store_measurement_row){.point = &x[i], .nparams = 1, .level = "callpath",
                                              .name = "gemm", .category = "comp",
                                              .value = 32 / x[i]};
        rows[12 + i] = (store_measurement_row){.point = &x[i], .nparams = 1, .level = "callpath",
                                               .name = "allreduce", .category = "comm",
                                               .value = 1};
    }
    sp_table t = {0};
    check(sp_build(&t, rows, 18, 1, ranks_first, NULL) == 0 && t.np == 6 && t.ns == 3,
          "6 coordinates, 3 series: %d %d", t.np, t.ns);
    check(!strcmp(t.s[0].name, "epoch") && !t.s[0].category && !strcmp(t.s[1].name, "allreduce"),
          "the application part first, then the kernels by name");
    double at[1];
    sp_largest(&t, at);
    check(at[0] == 64, "the largest coordinate: %g", at[0]);
    check(sp_compute(&t, at, 1, 1, 2) == 0, "computed");
    check(fabs(t.s[0].delta[1] - 50) < 1e-12 && fabs(t.s[0].delta[5] - 96.875) < 1e-12,
          "epoch: Δ 50%% at 4, 96.875%% at 64: %g %g", t.s[0].delta[1], t.s[0].delta[5]);
    check(fabs(t.s[0].ch[3] - 64.0 * 2 / 3600) < 1e-15, "core-hours T·ranks·ρ/3600: %g",
          t.s[0].ch[3]);
    check(t.s[0].present[0] && fabs(t.s[0].at[0] - 96.875) < 1e-6,
          "Δ's model at 64: %g (%s)", t.s[0].at[0], t.s[0].reason[0]);
    check(t.s[1].delta[5] == 0, "allreduce does not speed up");
    sp_series *order[3];
    int nk = sp_ranking(&t, order);
    check(nk == 2 && !strcmp(order[0]->name, "gemm") && !strcmp(order[1]->name, "allreduce"),
          "ranked by Δ: gemm first");
    sp_table_free(&t);
    /* too few coordinates for a model; cost only from time */
    check(sp_build(&t, rows, 4, 1, ranks_first, NULL) == 0 && t.np == 4, "4 coordinates");
    sp_largest(&t, at);
    check(sp_compute(&t, at, 1, 0, 1) == 0 && !t.s[0].present[0] &&
              strstr(t.s[0].reason[0], "at least 5 values") &&
              !strcmp(t.s[0].reason[2], "cost is modeled from metric time") && isnan(t.s[0].at[2]),
          "reasons: %s / %s", t.s[0].reason[0], t.s[0].reason[2]);
    check(fabs(t.s[0].at[0] - t.s[0].delta[3]) < 1e-12, "no model: the measured Δ at the point");
    check(!t.s[0].at_interval[0], "a measured value: no interval");
    sp_table_free(&t);

    /* the models' values at a point carry their 95% intervals, and Δ's stays
     * at most 100% (T_k >= 0): an epoch 64/x ±3% (alternating) measured at
     * 2..64, Δ ≈ 100 − 200/x, asked at x = 4096: Δ ≈ 99.95 */
    for (int i = 0; i < 6; i++)
        rows[i].value = 64 / x[i] * (i % 2 ? 1.03 : 0.97);
    check(sp_build(&t, rows, 6, 1, ranks_first, NULL) == 0 && t.np == 6, "noisy epoch");
    at[0] = 4096;
    check(sp_compute(&t, at, 1, 1, 2) == 0 && t.s[0].present[0], "computed at 4096");
    for (int k = 0; k < 3; k++)
        check(!t.s[0].present[k] ||
                  (t.s[0].at_interval[k] && t.s[0].at_lo[k] <= t.s[0].at[k] &&
                   t.s[0].at[k] <= t.s[0].at_hi[k]),
              "model %d at 4096: %g in [%g, %g]", k, t.s[0].at[k], t.s[0].at_lo[k],
              t.s[0].at_hi[k]);
    check(t.s[0].at[0] <= 100 && t.s[0].at_hi[0] <= 100,
          "Δ at 4096: %g, interval [%g, %g], never above 100%%", t.s[0].at[0], t.s[0].at_lo[0],
          t.s[0].at_hi[0]);
    sp_table_free(&t);
}

/* phases by the default name parts, t_c from the communication callpaths,
 * warm-up steps left out, Eq. 6 against x = 1 scaled by the ranks */
static void test_iterations(void)
{
    enum { NP = 5, NCP = 4 };
    static const char *const names[1] = {"ranks"};
    char *callpaths[NCP] = {"DataLoader.__next__", "Forward", "autograd::engine::evaluate_function",
                            "nccl:all_reduce"};
    int categories[NCP] = {PROFILE_HOST, PROFILE_COMP, PROFILE_COMP, PROFILE_COMM};
    char *metrics[1] = {"time"};
    double points[NP] = {1, 2, 4, 8, 16};
    store_fit_row rows[NP * 3 * NCP];
    size_t n = 0;
    for (int p = 0; p < NP; p++)
        for (int step = 0; step < 3; step++) /* step 0 is warm-up: 100x slower */
            for (int c = 0; c < NCP; c++) {
                double t = (c == 3 ? 0.5 : 1.0 / points[p]) * (step == 0 ? 100 : 1);
                rows[n++] = (store_fit_row){.point = p, .repetition = 0, .rank = 0,
                                            .phase = PROFILE_TRAIN, .step = step, .callpath = c,
                                            .metric = 0, .value = t};
            }
    store_fit_data d = {.nparams = 1, .npoints = NP, .points = points, .ncallpaths = NCP,
                        .callpaths = callpaths, .categories = categories, .nmetrics = 1,
                        .metrics = metrics, .nrows = n, .rows = rows};
    json_t *tr = json_pack("{s:i, s:i, s:s, s:i}", "train_samples", 1000, "batch_size", 10,
                           "data_parallel", "ranks", "warmup_steps", 1);
    training_setup ts;
    char field[64], msg[256];
    check(training_compile(tr, names, 1, &ts, field, sizeof field, msg, sizeof msg) == 0,
          "training: %s %s", field, msg);
    it_table t = {0};
    check(it_table_build(&t, &d, NULL, &ts) == 0 && t.np == NP, "5 coordinates: %d", t.np);
    check(t.cp_phase[0] == IT_IO && t.cp_phase[1] == IT_F && t.cp_phase[2] == IT_B &&
              t.cp_phase[3] == IT_C,
          "phases: %d %d %d %d", t.cp_phase[0], t.cp_phase[1], t.cp_phase[2], t.cp_phase[3]);
    check(!strcmp(t.matched[IT_F], "forward") && t.matched[IT_H2D][0] == '\0',
          "forward matched by a name part, h2d by none: %s", t.matched[IT_F]);
    check(t.res[2].iterations == 2 && fabs(t.res[2].q[IT_F].median - 0.25) < 1e-12,
          "warm-up left out: t_f at 4 ranks %g over %d", t.res[2].q[IT_F].median,
          t.res[2].iterations);
    /* Eq. 6: S = (N_k/N_1)·t_1/t_k on Eq. 3's t_iter, N = G·M = ranks */
    const double *s6 = it_series(&t, IT_NQ), *eq3 = it_series(&t, IT_EQ3);
    check(t.ranks[4] == 16 && fabs(s6[4] - 16 * eq3[0] / eq3[4]) < 1e-12 * s6[4],
          "Eq. 6 at 16 ranks: %g", s6[4]);
    check(fabs(s6[0] - 1) < 1e-12, "Eq. 6 at the baseline: 1");
    check(!strcmp(it_phase_key(IT_F), "forward") && it_phase_key(IT_C) == NULL, "phase keys");
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = 1;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    pmnf_model model;
    char why[200];
    int few = -1;
    check(it_fit(mod, &t, it_series(&t, IT_F), &model, why, sizeof why, &few) == 0 && few == 0 &&
              fabs(pmnf_eval(&model.f, (double[]){32}) - 1.0 / 32) < 1e-6,
          "t_f's model at 32: %s", why);
    pmnf_modeler_free(mod);
    /* the answer's document: a point per coordinate, the models, h2d unmatched */
    it_doc doc;
    check(it_document(&t, &d, names, 1, &doc) == 0, "document");
    json_t *p4 = json_array_get(doc.points, 4);
    check(json_array_size(doc.points) == NP &&
              json_number_value(json_object_get(json_object_get(p4, "point"), names[0])) ==
                  t.coords[4] &&
              fabs(json_number_value(json_object_get(p4, "speedup_eq6")) - s6[4]) < 1e-12 * s6[4],
          "point 4 with its Eq. 6 speedup");
    const char *fn = json_string_value(
        json_object_get(json_object_get(doc.models, it_name(IT_F)), "function"));
    check(fn && strstr(fn, "^(-1)"), "t_f modelled as falling with x: %s", fn ? fn : "(none)");
    json_t *w0 = json_array_get(doc.warnings, 0);
    check(json_array_size(doc.warnings) >= 1 &&
              !strcmp(json_string_value(json_object_get(w0, "code")), IT_WARN_PHASE_UNMATCHED) &&
              json_is_null(json_object_get(json_object_get(doc.phases, it_name(IT_H2D)),
                                           "matched")),
          "h2d matches nothing: warned, matched null");
    it_doc_free(&doc);
    it_table_free(&t);
    json_decref(tr);
}

/* the epoch of perfect strong scaling over x = 1..16 ranks: P_1 at x = 1,
 * Δ = (T_1 - T_k)/(T_1/100), ε = Δ/Δ_t, core-hours T·ranks·ρ/3600 */
static void test_set_data(void)
{
    static const char *const params[1] = {"ranks"};
    double x[5] = {16, 1, 4, 2, 8}; /* any order: sorted by the builder */
    store_measurement_row rows[10];
    for (int i = 0; i < 5; i++) {
        rows[i] = (store_measurement_row){.point = &x[i], .nparams = 1, .level = "application",
                                          .name = "epoch", .value = 16 / x[i]};
        rows[5 + i] = (store_measurement_row){.point = &x[i], .nparams = 1,
                                              .level = "application", .name = "comp",
                                              .value = 12 / x[i]};
    }
    ad_set set = {.nparams = 1, .params = params, .strong = 1, .cores_per_rank = 2,
                  .metric = "time", .ranks = ranks_first};
    ad_app *a = ad_app_build(&set, rows, 10);
    check(a && a->npoints == 5 && a->coords[0] == 1 && a->coords[4] == 16, "5 sorted coordinates");
    if (!a)
        return;
    check(a->baseline == 0 && a->largest == 4, "P_1 and the largest: %d %d", a->baseline,
          a->largest);
    check(fabs(a->speedup_pct[4] - 93.75) < 1e-12 && fabs(a->efficiency_pct[4] - 6.25) < 1e-12 &&
              a->efficiency_pct[0] == 100,
          "Δ %g, ε %g at 16", a->speedup_pct[4], a->efficiency_pct[4]);
    check(fabs(a->core_hours[2] - 32.0 / 3600) < 1e-15, "core-hours %g", a->core_hours[2]);
    check(a->value[0][3] == 1.5 && isnan(a->value[1][3]), "comp measured, comm not");
    check(a->cost.present && fabs(pmnf_eval(&a->cost.model.f, (double[]){32}) - 32.0 / 3600) < 1e-9,
          "cost model: constant (%s)", a->cost.reason);
    check(ad_point_index(a, (double[]){8}) == 3 && ad_point_index(a, (double[]){3}) == -1,
          "point index");
    ad_app_free(a);
}

/* scl_apart: two 95% intervals of one quantity contradict each other only
 * when they do not meet; touching ends meet; a NaN end compares nothing. */
static void test_apart(void)
{
    check(scl_apart(1, 2, 3, 4) && scl_apart(3, 4, 1, 2), "[1, 2] and [3, 4] are apart");
    check(!scl_apart(1, 2, 2, 3) && !scl_apart(1, 5, 2, 3), "touching or nested intervals meet");
    check(scl_apart(-247.2, -170.7, -320.8, -315.1), "the case study's Δ at 64 ranks");
    check(!scl_apart(NAN, 2, 3, 4) && !scl_apart(1, 2, 3, NAN), "a NaN end: nothing to compare");
}

int main(void)
{
    test_lif();
    test_apart();
    test_rank_matrix();
    test_regression();
    test_scaling();
    test_series_baseline();
    test_scaling_no_ranks();
    test_rank_count();
    test_configs();
    test_configs_upper();
    test_cost_finite();
    test_finite_point();
    test_rank_count_whole();
    test_speedups_finite();
    test_formula();
    test_cost();
    test_noisy();
    test_speedups();
    test_iterations();
    test_set_data();
    return check_summary();
}
