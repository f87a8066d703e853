/*
 * test_sensitivity.c — the Taguchi sensitivity of a measured series
 * (analysis/sensitivity.h) without a server or a database: S/N ratios and
 * level means computed by hand, the efficiency over a baseline, the factor
 * columns, and each refusal naming its row.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sensitivity.h"
#include "tests/check.h"

static const char params[2][64] = {"ranks", "threads"};
static const char factors[1][65] = {"dataloader"};

typedef struct fixture {
    double point[8][2];
    double reps[8][3];
    store_measurement_row rows[8];
} fixture;

/* rows of (ranks, threads) = (4,2), (2,1), (4,1), (2,2) (not in order), two
 * repetitions each, levels per row (NULL: "[]") */
static void make(fixture *f, int n, const double pts[][2], const double ys[][2],
                 const char *const *levels)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < n; i++) {
        memcpy(f->point[i], pts[i], sizeof f->point[i]);
        memcpy(f->reps[i], ys[i], sizeof(double) * 2);
        f->rows[i] = (store_measurement_row){.point = f->point[i], .nparams = 2,
                                             .level = "application", .name = "epoch",
                                             .category = "", .metric = "time", .phase = "epoch",
                                             .reps = f->reps[i], .nreps = 2,
                                             .levels = levels ? (char *)levels[i] : "[]"};
    }
}

static double sn_smaller(double a, double b)
{
    return -10 * log10((a * a + b * b) / 2);
}

static const double pts4[4][2] = {{4, 2}, {2, 1}, {4, 1}, {2, 2}};
static const double ys4[4][2] = {{3, 3.2}, {10, 10.4}, {5, 5.2}, {6, 6.1}};

static void test_time(void)
{
    fixture f;
    make(&f, 4, pts4, ys4, NULL);
    noisy_names nm = {params, 2, factors, 0};
    sens_request rq = {.larger = 0};
    sens_result r;
    int bad;
    char err[200];
    int rc = sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_OK && r.n == 4 && r.ncols == 2, "solved: %d (%s)", rc, err);
    /* runs by point: (2,1), (2,2), (4,1), (4,2) */
    check(r.rows[0].point[0] == 2 && r.rows[0].point[1] == 1 && r.rows[1].point[1] == 2 &&
              r.rows[2].point[0] == 4 && r.rows[3].point[1] == 2,
          "runs ordered by point");
    double s21 = sn_smaller(10, 10.4), s22 = sn_smaller(6, 6.1), s41 = sn_smaller(5, 5.2),
           s42 = sn_smaller(3, 3.2);
    check(check_close(r.r.sn[0], s21, 1e-12, 0) && check_close(r.r.sn[3], s42, 1e-12, 0),
          "S/N = -10 log10(mean y^2): %g, want %g", r.r.sn[0], s21);
    /* ranks: levels 2 and 4, mean S/N of their runs; range = |difference| */
    const sweep_sn_factor *fr = &r.r.factors[0], *ft = &r.r.factors[1];
    double r2 = (s21 + s22) / 2, r4 = (s41 + s42) / 2, t1 = (s21 + s41) / 2,
           t2 = (s22 + s42) / 2;
    check(fr->nlevels == 2 && check_close(fr->mean_sn[0], r2, 1e-12, 0) &&
              check_close(fr->mean_sn[1], r4, 1e-12, 0) &&
              check_close(fr->range, fabs(r4 - r2), 1e-12, 0),
          "ranks' level means %g %g", fr->mean_sn[0], fr->mean_sn[1]);
    check(check_close(ft->range, fabs(t2 - t1), 1e-12, 0), "threads' range");
    double total = fabs(r4 - r2) + fabs(t2 - t1);
    check(check_close(fr->normalized, fabs(r4 - r2) / total, 1e-12, 0), "normalized range");
    json_t *fj = sens_factors_json(&nm, &r);
    json_t *first = json_array_get(fj, 0);
    const char *top = fabs(r4 - r2) > fabs(t2 - t1) ? "ranks" : "threads";
    check(json_array_size(fj) == 2 &&
              !strcmp(json_string_value(json_object_get(first, "factor")) ?: "", top) &&
              json_integer_value(json_object_get(first, "rank")) == 1 &&
              !strcmp(json_string_value(json_object_get(first, "kind")) ?: "", "parameter"),
          "factors ranked, %s first", top);
    json_t *best = json_object_get(json_array_get(fj, 0), "best_level");
    check(json_number_value(best) == (!strcmp(top, "ranks") ? (r4 > r2 ? 4 : 2) : (t2 > t1 ? 2 : 1)),
          "best level: the higher mean S/N");
    json_decref(fj);
    sens_result_free(&r);
}

static void test_efficiency(void)
{
    fixture f;
    make(&f, 4, pts4, ys4, NULL);
    noisy_names nm = {params, 2, factors, 0};
    sens_request rq = {.larger = 1, .efficiency = 1, .q = 0};
    sens_result r;
    int bad;
    char err[200];
    int rc = sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_OK && r.n == 4 && r.left_out == 0, "efficiency along ranks: %d", rc);
    /* run (4,1) against the baseline (2,1), mean 10.2: SE = 10.2 / y per repetition */
    int k = -1;
    for (int i = 0; i < r.n; i++)
        k = r.rows[i].point[0] == 4 && r.rows[i].point[1] == 1 ? i : k;
    double a = 10.2 / 5, b = 10.2 / 5.2;
    double want = -10 * log10((1 / (a * a) + 1 / (b * b)) / 2); /* larger is better */
    check(k >= 0 && check_close(r.r.sn[k], want, 1e-12, 0), "S/N of SE at (4,1): %g, want %g",
          k >= 0 ? r.r.sn[k] : NAN, want);
    sens_result_free(&r);
    /* a baseline nobody measured */
    make(&f, 4, pts4, ys4, NULL);
    double three = 3;
    rq.baseline = &three;
    check(sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err) == SENS_NO_BASELINE,
          "baseline 3: none measured");
    sens_result_free(&r);
    /* only the threads=1 group has ranks 2 measured: the other is left out */
    const double pts3[3][2] = {{2, 1}, {4, 1}, {4, 2}};
    const double ys3[3][2] = {{10, 10.4}, {5, 5.2}, {3, 3.2}};
    make(&f, 3, pts3, ys3, NULL);
    double two = 2;
    rq.baseline = &two;
    rc = sens_compute(&nm, f.rows, 3, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_OK && r.n == 2 && r.left_out == 1, "a run without its baseline is left out");
    sens_result_free(&r);
}

static void test_refusals(void)
{
    fixture f;
    double ys[4][2];
    memcpy(ys, ys4, sizeof ys);
    ys[2][1] = 0; /* (4,1), the third run by point */
    make(&f, 4, pts4, ys, NULL);
    noisy_names nm = {params, 2, factors, 0};
    sens_request rq = {0};
    sens_result r;
    int bad;
    char err[200];
    int rc = sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_BAD_VALUE && bad == 2 && r.rows[bad].point[0] == 4 &&
              r.rows[bad].point[1] == 1,
          "a zero repetition names its run: %d, bad %d", rc, bad);
    sens_result_free(&r);
    /* factor columns: a level that is not declared */
    const char *lv[4] = {"[\"cpu\"]", "[\"dali\"]", "[\"gpu\"]", "[\"cpu\"]"};
    make(&f, 4, pts4, ys4, lv);
    nm.nfactors = 1;
    rq.factor_columns = 1;
    rq.factors_spec = "{\"factors\":{\"dataloader\":[\"cpu\",\"dali\"]}}";
    rc = sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_UNDECLARED && bad >= 0 && !strcmp(r.rows[bad].levels, "[\"gpu\"]"),
          "an undeclared level names its run: %d", rc);
    sens_result_free(&r);
    /* declared: a third column of two levels */
    lv[2] = "[\"dali\"]";
    make(&f, 4, pts4, ys4, lv);
    rc = sens_compute(&nm, f.rows, 4, &rq, &r, &bad, err, sizeof err);
    check(rc == SENS_OK && r.ncols == 3 && r.nlevels[2] == 2, "the factor is a column: %d", rc);
    json_t *fj = sens_factors_json(&nm, &r);
    int found = 0;
    for (size_t i = 0; i < json_array_size(fj); i++)
        found += !strcmp(json_string_value(json_object_get(json_array_get(fj, i), "kind")) ?: "",
                         "factor");
    check(found == 1, "the factor among the ranked ones");
    json_decref(fj);
    sens_result_free(&r);
}

int main(void)
{
    test_time();
    test_efficiency();
    test_refusals();
    return check_summary();
}
