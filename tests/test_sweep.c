/*
 * test_sweep.c — the pure sweep module (sweep/): repetition statistics,
 * Taguchi S/N sensitivity, legality rules and sweep definitions, with
 * expectations computed by hand (and the t quantiles from GSL and a table).
 */
#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_advice.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_legal.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"
#include "sweep/sweep_stats.h"
#include "tests/check.h"

static sweep_quantiles q;

static void test_stats(void)
{
    double v[5] = {10, 12, 11, 13, 14}, scratch[16];
    int out[16];
    sweep_stats s;
    sweep_stats_compute(v, 5, 0.05, &q, scratch, out, &s);
    /* mean 12, squares 4+0+1+1+4 = 10, SD = sqrt(10/4) */
    check(s.n == 5 && s.mean == 12 && s.median == 12, "n, mean, median");
    check(check_close(s.sd, sqrt(2.5), 1e-15, 0), "sd %g", s.sd);
    check(check_close(s.cv, sqrt(2.5) / 12, 1e-15, 0), "cv %g", s.cv);
    /* t(0.975, 4) = 2.7764451051977987 (tables); GSL agrees */
    check(check_close(sweep_t975(&q, 4), 2.7764451051977987, 1e-12, 0), "t(4) %.17g",
          sweep_t975(&q, 4));
    check(check_close(sweep_t975(&q, 4), gsl_cdf_tdist_Pinv(0.975, 4), 1e-15, 0), "t(4) = GSL");
    double h = 2.7764451051977987 * sqrt(2.5) / sqrt(5.0); /* 1.9632432... */
    check(s.has_mean_ci && check_close(s.mean_lo, 12 - h, 1e-12, 0) &&
              check_close(s.mean_hi, 12 + h, 1e-12, 0),
          "mean CI [%g, %g], want 12 -+ %g", s.mean_lo, s.mean_hi, h);
    check(check_close(s.rel_half_width, h / 12, 1e-12, 0), "relative half-width");
    check(!s.has_median_ci, "5 values: no distribution-free 95%% interval of the median");
    check(s.noutliers == 0, "no outliers");
    /* repetitions for ±5%: the smallest m with t(m-1)·cv/sqrt(m) <= 0.05, by brute force */
    long want = 2;
    while (gsl_cdf_tdist_Pinv(0.975, (double)(want - 1)) * s.cv / sqrt((double)want) > 0.05)
        want++;
    check(s.reps_needed == want && want == 30, "reps needed %ld, brute force %ld (by hand 30)",
          s.reps_needed, want);

    /* 1..9 and 100: Q1 = 3.25, Q3 = s[6] + .75·(s[7]-s[6]) = 7.75, fence 14.5 -> 100 out */
    double w[10] = {5, 100, 3, 9, 1, 7, 2, 8, 4, 6};
    sweep_stats_compute(w, 10, 0.05, &q, scratch, out, &s);
    check(s.q1 == 3.25 && s.q3 == 7.75, "quartiles %g %g", s.q1, s.q3);
    check(s.noutliers == 1 && out[0] == 1, "the 100 (index 1) is the outlier");
    check(s.median == 5.5, "median %g", s.median);
    /* n = 10: 2·P(B <= 1) = 2·11/1024 <= .05 < 2·P(B <= 2) = 2·56/1024 -> k = 2:
     * [x_(2), x_(9)] = [2, 9], coverage 1 - 22/1024 */
    check(s.has_median_ci && s.median_lo == 2 && s.median_hi == 9, "median CI [%g, %g]",
          s.median_lo, s.median_hi);
    check(check_close(s.median_coverage, 1 - 22.0 / 1024, 1e-12, 0), "coverage %.12g",
          s.median_coverage);
    /* n = 6: 2/64 <= .05 -> k = 1, the extremes, coverage 1 - 2/64 */
    double c6;
    check(sweep_median_rank(&q, 6, &c6) == 1 && check_close(c6, 1 - 2.0 / 64, 1e-12, 0),
          "n = 6: k 1, coverage %g", c6);
    check(sweep_median_rank(&q, 5, &c6) == 0, "n = 5: none");

    double one = 3;
    sweep_stats_compute(&one, 1, 0.05, &q, scratch, out, &s);
    check(s.n == 1 && s.mean == 3 && !s.has_mean_ci && isnan(s.sd) && s.reps_needed == -1,
          "one value: no spread, no interval");
    double same[3] = {2, 2, 2};
    sweep_stats_compute(same, 3, 0.05, &q, scratch, out, &s);
    check(s.sd == 0 && s.reps_needed == 2 && s.mean_lo == 2 && s.mean_hi == 2,
          "identical values: zero width");
}

/* Values whose squares overflow a double: S/N and statistics still finite.
 * Smaller is better, y = 1e200 twice: -10·log10(1e400) = -4000 dB; y = 1e200,
 * 3e200: -10·log10((1e400 + 9e400)/2) = -4000 - 10·log10(5) = -4006.9897 dB;
 * larger is better, y = 1e-200 twice: -10·log10(1e400) = -4000 dB.
 * Statistics of 1e300, 3e300: mean 2e300, SD sqrt(2·1e600/1) = 1.41421e300. */
static void test_huge_values(void)
{
    double a[2] = {1e200, 1e200}, b[2] = {1e200, 3e200}, c[2] = {1e-200, 1e-200};
    check(check_close(sweep_sn_ratio(a, 2, 0), -4000, 1e-12, 0), "S/N of 1e200: %.17g",
          sweep_sn_ratio(a, 2, 0));
    check(check_close(sweep_sn_ratio(b, 2, 0), -4000 - 10 * log10(5.0), 1e-12, 0),
          "S/N of 1e200, 3e200: %.17g", sweep_sn_ratio(b, 2, 0));
    check(check_close(sweep_sn_ratio(c, 2, 1), -4000, 1e-12, 0), "larger, 1e-200: %.17g",
          sweep_sn_ratio(c, 2, 1));
    /* the plain form still: y = 10, 20 smaller: -10·log10(250) */
    double d[2] = {10, 20};
    check(check_close(sweep_sn_ratio(d, 2, 0), -10 * log10(250.0), 1e-14, 0), "S/N of 10, 20");
    double v[2] = {1e300, 3e300}, scratch[4];
    int out[4];
    sweep_stats st;
    sweep_stats_compute(v, 2, 0.05, &q, scratch, out, &st);
    check(check_close(st.mean, 2e300, 1e-15, 0) && check_close(st.median, 2e300, 1e-15, 0) &&
              check_close(st.sd, sqrt(2.0) * 1e300, 1e-15, 0) &&
              check_close(st.cv, sqrt(2.0) / 2, 1e-15, 0),
          "1e300, 3e300: mean %g median %g sd %g cv %g", st.mean, st.median, st.sd, st.cv);
}

static void test_sensitivity(void)
{
    /* 2x2 full factorial, two repetitions each, smaller is better:
     * (A0,B0) y=1 -> S/N 0; (A0,B1) y=10 -> -20; (A1,B0) y=2 -> -6.0206; (A1,B1) y=20 -> -26.0206
     * A: means -10, -16.0206 -> range 6.0206; B: -3.0103, -23.0103 -> range 20 */
    int nlevels[2] = {2, 2};
    int level[8] = {0, 0, 0, 1, 1, 0, 1, 1};
    double y[8] = {1, 1, 10, 10, 2, 2, 20, 20};
    int offset[5] = {0, 2, 4, 6, 8};
    sweep_sn_problem p = {2, 4, nlevels, level, y, offset, 0};
    sweep_sn_result r;
    int bad;
    char err[200];
    check(sweep_sensitivity(&p, &r, &bad, err, sizeof err) == 0, "solves: %s", err);
    double l2 = 10 * log10(2.0) * 2; /* 6.0206 */
    check(r.sn[0] == 0 && check_close(r.sn[1], -20, 1e-12, 0) &&
              check_close(r.sn[2], -l2, 1e-12, 0) && check_close(r.sn[3], -20 - l2, 1e-12, 0),
          "S/N per run %g %g %g %g", r.sn[0], r.sn[1], r.sn[2], r.sn[3]);
    check(check_close(r.factors[0].range, l2, 1e-12, 0), "A range %g", r.factors[0].range);
    check(check_close(r.factors[1].range, 20, 1e-12, 0), "B range %g", r.factors[1].range);
    check(r.order[0] == 1 && r.factors[1].rank == 1 && r.factors[0].rank == 2, "B first");
    check(check_close(r.factors[1].normalized, 20 / (20 + l2), 1e-12, 0) &&
              check_close(r.factors[0].normalized + r.factors[1].normalized, 1, 1e-15, 0),
          "normalised %g", r.factors[1].normalized);
    check(r.factors[0].best_level == 0 && r.factors[1].best_level == 0, "best levels");
    check(check_close(r.factors[1].mean_sn[0], -l2 / 2, 1e-12, 0), "B0 mean %g",
          r.factors[1].mean_sn[0]);
    sweep_sensitivity_free(&r);

    /* y = {1, 3}: smaller: -10·log10(5) = -6.9897; larger: -10·log10((1 + 1/9)/2) = 2.5527 */
    double v[2] = {1, 3};
    check(check_close(sweep_sn_ratio(v, 2, 0), -10 * log10(5.0), 1e-14, 0), "smaller");
    check(check_close(sweep_sn_ratio(v, 2, 1), -10 * log10(5.0 / 9), 1e-14, 0), "larger %g",
          sweep_sn_ratio(v, 2, 1));

    y[5] = 0;
    check(sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0 && bad == 2 && strstr(err, "> 0"),
          "a zero observation is refused naming run 2: %s", err);
    y[5] = -1;
    p.larger_is_better = 1;
    check(sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0 && bad == 2, "negative refused");

    double vals[5] = {8, 2, 8, 4, 2}, distinct[5];
    int lv[5];
    int nd = sweep_levels_of(vals, 5, 1, distinct, lv, 1);
    check(nd == 3 && distinct[0] == 2 && distinct[2] == 8 && lv[0] == 2 && lv[1] == 0 &&
              lv[3] == 1,
          "levels of numbers");
}

static void test_legal(void)
{
    const char *names[3] = {"ranks", "batch_size", "nodes"};
    sweep_legal l;
    char err[300];
    check(sweep_legal_compile("batch_size * ranks <= 1024 && ranks >= nodes || batch_size == 16",
                              names, 3, &l, err, sizeof err) == 0,
          "compiles: %s", err);
    double r[7] = {1, 2, 4, 8, 16, 32, 64}, b[5] = {16, 32, 64, 128, 256};
    int count = 0, brute = 0;
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 5; j++) {
            double v[3] = {r[i], b[j], 2};
            count += sweep_legal_eval(&l, v);
            brute += (b[j] * r[i] <= 1024 && r[i] >= 2) || b[j] == 16;
        }
    check(count == brute && brute == 21, "legal points %d, brute force %d (by hand 7+5+4+3+2)", count, brute);
    sweep_legal_free(&l);

    struct {
        const char *text;
        const char *want;
    } bad[] = {
        {"batch_size * rank <= 5", "offset 13: unknown parameter \"rank\""},
        {"ranks", "offset 0: expected a comparison"},
        {"ranks < 2 < 3", "offset 10: a second comparison"},
        {"ranks <= 4 && ", "offset 13:"},
        {"ranks = 4", "offset 6: '=' is no comparison"},
        {"(ranks < 4) && ranks > 1", "offset 0: expected a comparison"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = sweep_legal_compile(bad[i].text, names, 3, &l, err, sizeof err);
        check(rc < 0 && !strncmp(err, bad[i].want, strlen(bad[i].want)), "\"%s\": %s",
              bad[i].text, rc < 0 ? err : "accepted");
    }
}

static int parse(const char *text, sweep_def *d, char *field, char *err)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    int rc = sweep_def_parse(doc, d, field, 64, err, 300);
    json_decref(doc);
    return rc;
}

static void test_plan(void)
{
    sweep_def d;
    char field[64], err[300];
    int rc = parse("{\"parameters\":{\"ranks\":[1,2,4,8,16,32,64],\"batch_size\":[16,32,64,128,256]},"
                   "\"factors\":{\"precision\":[\"fp16\",\"fp32\"]},\"constants\":{\"nodes\":2},"
                   "\"legal\":\"batch_size * ranks <= 1024 && ranks >= nodes || batch_size == 16\","
                   "\"repetitions\":3,"
                   "\"command\":\"srun -n {ranks} train.py --bs {batch_size} --p {precision} "
                   "--seed {repetition} {not a placeholder} {}\"}",
                   &d, field, err);
    check(rc == 0, "parses: %s: %s", field, err);
    if (rc)
        return;
    check(d.product == 70 && d.repetitions == 3 && d.nparams == 2 && d.nvars == 3, "shape");
    int idx[SWEEP_MAX_VARS], legal = 0;
    char cmd[512], first[512] = "";
    sweep_def_first(&d, idx);
    do {
        if (sweep_def_legal(&d, idx)) {
            if (!legal)
                sweep_def_command(&d, idx, 3, first, sizeof first);
            legal++;
        }
    } while (sweep_def_next(&d, idx));
    check(legal == 2 * 21, "legal points %d = 2 precisions x 21 (brute force above)", legal);
    check(!strcmp(first, "srun -n 1 train.py --bs 16 --p fp16 --seed 3 {not a placeholder} {}"),
          "first command: %s", first);
    sweep_def_first(&d, idx);
    idx[0] = 2;
    idx[1] = 1;
    idx[2] = 1;
    sweep_def_command(&d, idx, 1, cmd, sizeof cmd);
    check(!strcmp(cmd, "srun -n 4 train.py --bs 32 --p fp32 --seed 1 {not a placeholder} {}"),
          "%s", cmd);
    check(sweep_def_command(&d, idx, 1, cmd, 10) == -1, "too small a buffer");
    sweep_def_free(&d);

    /* the shell's ${x} is kept as written (not "$64"), {{ writes a brace,
     * read left to right: {{{x} is a brace and then {x}, {{{{x} two braces
     * and x}; ${{x}} is the shell's too; }} stays */
    rc = parse("{\"parameters\":{\"x\":[64]},\"command\":\"run ${x} {x} {{x} $HOME {{{x} "
               "{{{{x} ${{x}} }} {x}}\"}",
               &d, field, err);
    check(rc == 0, "shell braces parse: %s: %s", field, err);
    if (rc == 0) {
        sweep_def_first(&d, idx);
        sweep_def_command(&d, idx, 1, cmd, sizeof cmd);
        check(!strcmp(cmd, "run ${x} 64 {x} $HOME {64 {{x} ${{x}} }} 64}"), "shell braces: %s",
              cmd);
        sweep_def_free(&d);
    }
    /* {{{other} is a brace and {other}: refused like {other}, at its offset */
    rc = parse("{\"parameters\":{\"x\":[1]},\"command\":\"run {{{other}\"}", &d, field, err);
    check(rc < 0 && !strcmp(field, "command") && strstr(err, "offset 6: {other} names no"),
          "{{{other}: %s %s", field, err);
    if (rc == 0)
        sweep_def_free(&d);
    /* ${other} is the shell's too: no refusal for a name the sweep lacks */
    rc = parse("{\"parameters\":{\"x\":[1]},\"command\":\"run ${other} {{other}\"}", &d, field,
               err);
    check(rc == 0, "${other} and {{other} accepted: %s", err);
    if (rc == 0)
        sweep_def_free(&d);

    struct {
        const char *text, *field, *msg;
    } bad[] = {
        {"{\"command\":\"x\"}", "parameters", "must be"},
        {"{\"parameters\":{\"ranks\":[2,4]},\"command\":\"srun {rank}\"}", "command",
         "offset 5: {rank} names no"},
        {"{\"parameters\":{\"ranks\":[2,4]},\"command\":\"srun {other}\"}", "command",
         "write {{ for a literal brace; ${...} is left to the shell"},
        {"{\"parameters\":{\"ranks\":[2,4]},\"command\":\"x\",\"legal\":\"nodes < 2\"}", "legal",
         "offset 0: unknown parameter \"nodes\""},
        {"{\"parameters\":{\"ranks\":[2,\"4\"]},\"command\":\"x\"}", "parameters.ranks[1]",
         "must be a finite"},
        {"{\"parameters\":{\"ranks\":[2,2]},\"command\":\"x\"}", "parameters.ranks[1]", "twice"},
        {"{\"parameters\":{\"ranks\":[2,1e300]},\"command\":\"x\"}", "parameters.ranks[1]",
         "within +-1e+50"},
        {"{\"parameters\":{\"ranks\":[2]},\"factors\":{\"ranks\":[\"a\"]},\"command\":\"x\"}",
         "factors.ranks", "named twice"},
        {"{\"parameters\":{\"ranks\":[2]},\"command\":\"x\",\"repetitions\":0}", "repetitions",
         "must be"},
        {"{\"parameters\":{\"ranks\":[2]},\"command\":\"x\",\"extra\":1}", "extra", "unknown"},
        {"{\"parameters\":{\"ranks\":[2]},\"factors\":{\"p\":[]},\"command\":\"x\"}", "factors.p",
         "must be an array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = parse(bad[i].text, &d, field, err);
        check(rc < 0 && !strcmp(field, bad[i].field) && strstr(err, bad[i].msg),
              "%s -> %s: %s", bad[i].text, field, err);
    }
}

/* y = c0 + c1·x measured once at x = 1, 2, absolute noise 1, target 10:
 * M = [[2,3],[3,5]], M⁻¹ = [[5,-3],[-3,2]], v = (1,10)M⁻¹(1,10)' = 5 - 60 + 200 = 145.
 * A run at 4: M⁻¹g = (-7, 5), g(t)'M⁻¹g = 43, g'M⁻¹g = 13: Δv = 43²/(1 + 13) = 132.07;
 * at 3: M⁻¹g = (-4, 3), 26, 5: Δv = 26²/6 = 112.67. */
static void test_advice(void)
{
    pmnf_function f = {.nparams = 1, .constant = 1, .nterms = 1};
    f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    double coords[2] = {1, 2}, target[1] = {10}, cand[4] = {1, 2, 3, 4}, cost[4] = {1, 1, 1, 1};
    int reps[2] = {1, 1};
    sweep_adv_series s = {&f, 2, coords, reps, 0, 1, 0};
    sweep_adv_problem p = {1, 1, &s, target, 4, cand, cost, 1, 1000, 0, 0, 0};
    sweep_adv_result r;
    char err[200];
    check(sweep_advise(&p, &r, err, sizeof err) == 0, "advises: %s", err);
    check(check_close(r.var_before, 145, 1e-9, 0), "variance before %g", r.var_before);
    check(r.npicks == 1 && r.picks[0].cand == 3 && r.picks[0].runs == 1, "equal costs: x = 4");
    check(check_close(r.var_after, 145 - 1849.0 / 14, 1e-9, 0), "after %g, want %g", r.var_after,
          145 - 1849.0 / 14);
    check(r.spent == 1, "one core-hour spent");
    sweep_advice_free(&r);
    cost[3] = 2; /* 132.07/2 < 112.67/1: the run at 3 is worth more per core-hour */
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.npicks == 1 && r.picks[0].cand == 2 &&
              check_close(r.var_after, 145 - 676.0 / 6, 1e-9, 0),
          "cost decides: x = 3");
    sweep_advice_free(&r);
    p.budget = 20;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.spent <= 20 && r.nruns > 1 &&
              r.var_after < r.var_before / 10,
          "a larger budget buys more runs (%d, %g core-hours)", r.nruns, r.spent);
    sweep_advice_free(&r);
    double one[1] = {1};
    s.npoints = 1;
    s.coords = one;
    check(sweep_advise(&p, &r, err, sizeof err) < 0 && strstr(err, "coefficients"),
          "one point cannot determine two coefficients: %s", err);
}

/* test_advice's design (f = 1 + x at 1 and 2, target 10, candidates 1..4)
 * with the run at 4 priced 1.1 against a budget of 1: its 132.07 per 1.1
 * core-hours beats the 112.67 of the run at 3, which is what the budget
 * buys: the advice takes 3 and says that 4 lay beyond the budget. The grid
 * it replaces costs 1 + 1 + 1 + 1.1 = 4.1; the measured runs at 1 and 2
 * (one each) 2, with the run at 3 3: not costlier; with two runs each 4:
 * no run fits the 0.1 left (grid_bound), with three each 6 > 4.1:
 * costlier_than_grid, nothing planned; against a grid of 10 given by the
 * caller, the run at 3. Nothing beyond the budget when the run at 4 fits it. */
static void test_advice_grid(void)
{
    pmnf_function f = {.nparams = 1, .constant = 1, .nterms = 1};
    f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    double coords[2] = {1, 2}, target[1] = {10}, cand[4] = {1, 2, 3, 4}, cost[4] = {1, 1, 1, 1.1};
    int reps[2] = {1, 1};
    sweep_adv_series s = {&f, 2, coords, reps, 0, 1, 0};
    sweep_adv_problem p = {1, 1, &s, target, 4, cand, cost, 1, 1000, 0, 0, 0};
    sweep_adv_result r = {0};
    char err[200];
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.npicks == 1 && r.picks[0].cand == 2 &&
              r.beyond_budget == 3 && r.beyond_budget_core_hours == 1.1 &&
              check_close(r.grid_core_hours, 4.1, 1e-12, 0) && r.measured_core_hours == 2 &&
              !r.costlier_than_grid,
          "x = 3 bought, 4 beyond the budget (%d), grid %g, measured %g, costlier %d",
          r.beyond_budget, r.grid_core_hours, r.measured_core_hours, r.costlier_than_grid);
    sweep_advice_free(&r);
    reps[0] = reps[1] = 2;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.measured_core_hours == 4 &&
              r.nruns == 0 && r.grid_bound && !r.costlier_than_grid,
          "4 measured: no run of 1 fits the grid's 4.1 (%d runs, bound %d)", r.nruns,
          r.grid_bound);
    reps[0] = reps[1] = 3; /* 6 measured, already past the grid: costlier, nothing planned */
    sweep_advice_free(&r);
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.nruns == 0 && r.costlier_than_grid,
          "6 measured > the grid's 4.1: costlier (%d)", r.costlier_than_grid);
    reps[0] = reps[1] = 2;
    sweep_advice_free(&r);
    p.grid_core_hours = 10;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.grid_core_hours == 10 &&
              !r.costlier_than_grid && r.nruns == 1 && r.picks[0].cand == 2 && !r.grid_bound,
          "against the caller's grid of 10: the run at 3, not costlier");
    sweep_advice_free(&r);
    p.budget = 1.1;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.beyond_budget == -1 &&
              r.picks[0].cand == 3,
          "the run at 4 within the budget: taken, nothing beyond (%d)", r.beyond_budget);
    sweep_advice_free(&r);
}

/* Never costlier than the grid. test_advice's design (f = 1 + x measured
 * once at 1 and 2, noise 1, target 10, candidates 1..4) with the run at 4
 * priced 4 and the others 1: the grid costs 1 + 1 + 1 + 4 = 7, the measured
 * runs 2. Asked ten times with a budget of 1 each (the runs taken as
 * advised), the advice buys five runs of 1, 2 + 5 = 7, and then nothing:
 * every further run would pass the grid's 7 (grid_bound). Unbounded, ten
 * calls bought ten runs: 2 + 10 = 12 > 7. Every run at 1 and a budget of
 * 20: two runs (2 + 2 = the grid's 4), where twenty were bought before. The
 * caller's measured cost of 3.5 against the grid of 4: no run of 1 fits. */
static void test_advice_within_grid(void)
{
    pmnf_function f = {.nparams = 1, .constant = 1, .nterms = 1};
    f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    double coords[4] = {1, 2}, target[1] = {10}, cand[4] = {1, 2, 3, 4}, cost[4] = {1, 1, 1, 4};
    int reps[4] = {1, 1};
    sweep_adv_series s = {&f, 2, coords, reps, 0, 1, 0};
    sweep_adv_problem p = {1, 1, &s, target, 4, cand, cost, 1, 1000, 0, 0, 0};
    sweep_adv_result r = {0};
    char err[200];
    double total = 2; /* core-hours measured at the candidates */
    int ok = 1, bound = 0, empty = 0;
    for (int call = 0; call < 10 && ok; call++) {
        ok = sweep_advise(&p, &r, err, sizeof err) == 0 &&
             check_close(r.measured_core_hours, total, 1e-12, 0) &&
             check_close(r.grid_core_hours, 7, 1e-12, 0) && !r.costlier_than_grid;
        for (int i = 0; ok && i < r.npicks; i++) {
            double x = cand[r.picks[i].cand];
            int k = 0;
            while (k < s.npoints && coords[k] != x)
                k++;
            if (k == s.npoints) {
                coords[s.npoints] = x;
                reps[s.npoints++] = 0;
            }
            reps[k] += r.picks[i].runs;
            total += r.picks[i].core_hours;
        }
        empty += r.nruns == 0;
        bound = r.grid_bound;
        sweep_advice_free(&r);
    }
    check(ok && check_close(total, 7, 1e-12, 0) && empty == 5 && bound,
          "ten calls of 1: %g core-hours of the grid's 7, %d calls with nothing, then bound (%d)",
          total, empty, bound);

    s.npoints = 2;
    reps[0] = reps[1] = 1;
    cost[3] = 1;
    p.budget = 20;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.nruns == 2 && r.spent == 2 &&
              r.grid_bound && !r.costlier_than_grid && check_close(r.grid_core_hours, 4, 0, 0),
          "a budget of 20: two runs, then the grid is spent (%d runs, %g)", r.nruns, r.spent);
    sweep_advice_free(&r);
    p.measured_core_hours = 3.5;
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.nruns == 0 && r.grid_bound &&
              r.measured_core_hours == 3.5,
          "the caller's 3.5 measured: no run of 1 fits the grid's 4 (%d runs)", r.nruns);
    sweep_advice_free(&r);
}

/* The same design with f(x) = x as the scale, noise 1, misfit 0.5: the mean
 * of n runs at x has variance 1/n + 0.25·x², weight w = 1/that: at x = 1
 * (one run) 0.8, at x = 2 0.5. M = 0.8·(1,1)(1,1)' + 0.5·(1,2)(1,2)' =
 * [[1.3,1.8],[1.8,2.8]], det 0.4, M⁻¹ = [[7,-4.5],[-4.5,3.25]], v = 7 - 90 + 325 = 242.
 * A first run at 4 adds w = 1/(1 + 4) = 0.2; M⁻¹g = (-11, 8.5), c = 74, d = 23:
 * Δv = 0.2·74²/(1 + 0.2·23) = 1369/7. A second run at 1 adds 4/3 - 0.8 = 8/15;
 * M⁻¹g = (2.5, -1.25), c = -10, d = 1.25: Δv = (8/15)·100/(1 + 2/3) = 32.
 * n runs at 1 in all: M = w·(1,1)(1,1)' + [[0.5,1],[1,2]], det 0.5·w,
 * v = 162 + 64/w, which stays above 162 + 64/4 = 178 (w <= 1/0.25). Without
 * misfit the weights are 1001 at 1 and 1 at 2: det 1001, v = 81 + 64/1001. */
static void test_advice_misfit(void)
{
    check(check_close(sweep_advice_shrink(0.2, 74, 23), 1369.0 / 7, 1e-12, 0) &&
              check_close(sweep_advice_shrink(8.0 / 15, -10, 1.25), 32, 1e-12, 0) &&
              sweep_advice_shrink(0, 5, 1) == 0,
          "shrink = w·c²/(1 + w·d)");
    pmnf_function f = {.nparams = 1, .constant = 0, .nterms = 1};
    f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    double coords[2] = {1, 2}, target[1] = {10}, cand[2] = {1, 4}, cost[2] = {1, 1};
    int reps[2] = {1, 1};
    sweep_adv_series s = {&f, 2, coords, reps, 0, 1, 0.5};
    /* the criterion alone: a grid (the caller's) too large to bound the runs */
    sweep_adv_problem p = {1, 1, &s, target, 2, cand, cost, 1, 1000, 0, 1e9, 0};
    sweep_adv_result r;
    char err[200];
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && check_close(r.var_before, 242, 1e-9, 0),
          "misfit weights the measured points: %g", r.var_before);
    check(r.npicks == 1 && r.picks[0].cand == 1 && check_close(r.var_after, 325.0 / 7, 1e-9, 0),
          "the new point 4: after %g", r.var_after);
    sweep_advice_free(&r);
    cost[1] = 7; /* (1369/7)/7 < 32: the repetition at 1 */
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.npicks == 1 && r.picks[0].cand == 0 &&
              check_close(r.var_after, 210, 1e-9, 0),
          "a cheap repetition: after %g", r.var_after);
    sweep_advice_free(&r);
    p.ncand = 1; /* only repetitions at 1: 1001 runs there */
    p.budget = 1e6;
    double w = 1 / (1.0 / 1001 + 0.25);
    check(sweep_advise(&p, &r, err, sizeof err) == 0 && r.nruns == 1000 &&
              check_close(r.var_after, 162 + 64 / w, 1e-9, 0) && r.var_after > 178,
          "repetitions saturate at the misfit: %g", r.var_after);
    sweep_advice_free(&r);
    s.misfit = 0;
    int rc = sweep_advise(&p, &r, err, sizeof err);
    check(rc == 0 && check_close(r.var_after, 81 + 64.0 / 1001, 1e-9, 0),
          "without misfit they do not: %g (%s)", r.var_after, rc ? err : "");
    sweep_advice_free(&r);
    /* misfit from the residuals: mean |f| 1.5, sigma 0.3: 0.2 relative; means of 4 runs
     * with cv 0.1 explain 0.1²/4 of its square: sqrt(0.04 - 0.0025) */
    int four[2] = {4, 4};
    check(check_close(sweep_advice_misfit(&f, coords, four, 2, 0.1, 0.3), sqrt(0.0375), 1e-12, 0),
          "lack of fit beyond the noise");
    check(check_close(sweep_advice_misfit(&f, coords, four, 2, 0.1, 0.03), 0.05, 1e-12, 0),
          "a fit within the noise: the floor, half the cv");
    check(check_close(sweep_advice_misfit(&f, coords, four, 2, 0, 0.3), 0.1, 1e-12, 0),
          "no cv: half the relative residual");
}

/* base 222·(0.99, 1, 1.01), N 112·(...): SE = 222/112; each side's 97.5% t interval
 * (t(0.9875, 2) = 6.2053468, tables; GSL agrees), the ratio's ends from theirs */
static void test_efficiency(void)
{
    double b[3] = {222 * 0.99, 222, 222 * 1.01}, y[3] = {112 * 0.99, 112, 112 * 1.01};
    sweep_ratio r = sweep_efficiency(b, 3, y, 3);
    double t = gsl_cdf_tdist_Pinv(0.9875, 2);
    check(check_close(t, 6.205346816, 1e-8, 0), "t(0.9875, 2) = %.10g", t);
    double hb = t * 2.22 / sqrt(3.0), hy = t * 1.12 / sqrt(3.0);
    check(check_close(r.value, 222.0 / 112, 1e-12, 0), "SE %g", r.value);
    check(r.has_interval && check_close(r.lo, (222 - hb) / (112 + hy), 1e-9, 0) &&
              check_close(r.hi, (222 + hb) / (112 - hy), 1e-9, 0),
          "SE interval [%g, %g]", r.lo, r.hi);
    r = sweep_efficiency(b, 1, y, 3);
    check(!r.has_interval && check_close(r.value, 222 * 0.99 / 112, 1e-12, 0),
          "one baseline repetition: no interval");
}

/* The baselines of S/N over scaling efficiency, along parameter 0 (ranks),
 * by hand: (ranks, threads) = (2,1) 10, 10.4 and (4,1) 5 share threads=1:
 * baseline mean 10.2; (2,2) 6, 6.2 and (4,2) 3: 6.1; (8,3) is alone in its
 * group, its own baseline by default (1) and none at ranks=2; (2,1) and
 * (4,1) again under another level combination (group 1): 20 and 12, their
 * own baseline 20 (at ranks=4: 12, and 5 and 3 for the others). */
static void test_se_baselines(void)
{
    const double pts[7][2] = {{2, 1}, {4, 1}, {2, 2}, {4, 2}, {8, 3}, {4, 1}, {2, 1}};
    const int group[7] = {0, 0, 0, 0, 0, 1, 1};
    const double y[] = {10, 10.4, 5, 6, 6.2, 3, 1, 12, 20};
    const int off[8] = {0, 2, 3, 5, 6, 7, 8, 9};
    double base[7];
    int k = sweep_se_baselines(&pts[0][0], 2, 7, group, 0, NULL, y, off, base);
    const double want[7] = {10.2, 10.2, 6.1, 6.1, 1, 20, 20};
    int ok = k == 7;
    for (int i = 0; i < 7; i++)
        ok = ok && check_close(base[i], want[i], 1e-15, 0);
    check(ok, "default baselines: %d kept, %g %g %g %g %g %g %g", k, base[0], base[1], base[2],
          base[3], base[4], base[5], base[6]);
    double two = 2;
    k = sweep_se_baselines(&pts[0][0], 2, 7, group, 0, &two, y, off, base);
    check(k == 6 && isnan(base[4]) && check_close(base[5], 20, 0, 0) &&
              check_close(base[3], 6.1, 1e-15, 0),
          "baseline 2: (8,3) has none: %d kept", k);
    double four = 4;
    k = sweep_se_baselines(&pts[0][0], 2, 7, group, 0, &four, y, off, base);
    check(k == 6 && base[0] == 5 && base[1] == 5 && base[2] == 3 && base[3] == 3 &&
              isnan(base[4]) && base[5] == 12 && base[6] == 12,
          "baseline 4: %d kept, %g %g %g", k, base[0], base[2], base[6]);
    /* without the groups' key, (2,1) and (4,1) of both groups are one group */
    k = sweep_se_baselines(&pts[0][0], 2, 7, NULL, 0, &four, y, off, base);
    check(k == 6 && (base[0] == 5 || base[0] == 12) && base[0] == base[6],
          "no key: one group of threads=1");
    /* a baseline of 0 is no baseline */
    const double yz[] = {0, 0, 5, 6, 6.2, 3, 1, 12, 20};
    k = sweep_se_baselines(&pts[0][0], 2, 7, group, 0, NULL, yz, off, base);
    check(k == 5 && isnan(base[0]) && isnan(base[1]) && base[2] == 6.1, "zero baseline: %d", k);
}

/* The cap of 1,000,000 points is on the product, before the legality rule:
 * 1,000 x 1,001 values are refused naming "parameters" although the rule
 * leaves one point; 1,000 x 1,000 are planned (one legal point). */
static void test_points_cap(void)
{
    for (int nb = 1001; nb >= 1000; nb--) {
        json_t *a = json_array(), *b = json_array();
        for (int v = 1; v <= 1000; v++)
            json_array_append_new(a, json_integer(v));
        for (int v = 1; v <= nb; v++)
            json_array_append_new(b, json_integer(v));
        json_t *doc = json_pack("{s:{s:o, s:o}, s:s, s:s}", "parameters", "a", a, "b", b, "legal",
                                "a < 2 && b < 2", "command", "run {a} {b}");
        sweep_def d;
        char field[64], err[300];
        int rc = sweep_def_parse(doc, &d, field, sizeof field, err, sizeof err);
        json_decref(doc);
        if (nb == 1001) {
            check(rc < 0 && !strcmp(field, "parameters") &&
                      strstr(err, "more than 1000000 points"),
                  "1,001,000 points refused before the rule: %d %s %s", rc, field, err);
            if (rc == 0)
                sweep_def_free(&d);
        } else {
            check(rc == 0 && d.product == 1000000 && sweep_def_legal_points(&d) == 1,
                  "1,000,000 points planned, one legal: %d %s", rc, err);
            if (rc == 0)
                sweep_def_free(&d);
        }
    }
}

int main(void)
{
    test_advice_grid();
    sweep_quantiles_init(&q);
    test_stats();
    test_huge_values();
    test_sensitivity();
    test_legal();
    test_plan();
    test_advice();
    test_advice_misfit();
    test_advice_within_grid();
    test_efficiency();
    test_se_baselines();
    test_points_cap();
    return check_summary();
}
