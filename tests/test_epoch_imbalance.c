/*
 * test_epoch_imbalance.c — the epoch's imbalance part
 * (analysis/epoch_imbalance.h) by hand, without a server:
 *   - epoch 101 + 13·x against parts 100, 10·x and 1 at x = 2..32: the part
 *     is I = 3·x, its model 3·x (96 at 32), the largest share 96/517;
 *   - ranks alike (epoch = the parts' sum, up to rounding): no part, and
 *     no model fitted;
 *   - a spread below EI_INCLUDE_SHARE (0.05% of the epoch): no part;
 *   - an imbalance at fewer than 5 values of the parameter: the part is
 *     needed but has no model, and says why;
 *   - rows of other names and coordinates missing a part are left out;
 *     rows of two level combinations at the same coordinates give no part;
 *   - the warning: at 18.6% epoch_imbalance with share, imbalance,
 *     parts_sum and limit; at 0.99% none; at 1% one; none for an epoch <= 0;
 *   - the epoch composed (ei_epoch_at), one fitted model (the imbalance
 *     3·x off by ±2%) standing for every part: at 32 four parts give 4
 *     times its value and three 3 times, each end moved by sqrt(n) times
 *     one part's distance to it; a missing part, or an imbalance needed
 *     without a model, cannot be composed.
 */
#include <math.h>
#include <string.h>

#include "analysis/epoch_imbalance.h"
#include "tests/check.h"

#define MAXROWS 128

typedef struct rows {
    store_measurement_row v[MAXROWS];
    double pts[MAXROWS];
    int n;
} rows;

static void add(rows *r, const char *name, double x, double value)
{
    store_measurement_row *m = &r->v[r->n];
    memset(m, 0, sizeof *m);
    r->pts[r->n] = x;
    m->point = &r->pts[r->n];
    m->nparams = 1;
    m->name = (char *)name;
    m->level = (char *)"application";
    m->metric = (char *)"time";
    m->phase = (char *)"epoch";
    m->value = value;
    r->n++;
}

/* the laws at xs: parts 100, 10·x, 1 and the epoch 101 + (10 + k)·x·(1 + eps) */
static void laws(rows *r, const double *xs, int nx, double k, double eps)
{
    r->n = 0;
    for (int i = 0; i < nx; i++) {
        double x = xs[i];
        add(r, "epoch", x, (101 + (10 + k) * x) * (1 + eps));
        add(r, "comp", x, 100);
        add(r, "comm", x, 10 * x);
        add(r, "mem", x, 1);
        add(r, "between", x, 7); /* not a part of the sum */
    }
}

static const char *const names[1] = {"ranks"};
static const ei_input in = {1, names, 0};

static void test_imbalanced(void)
{
    rows r;
    const double xs[5] = {2, 4, 8, 16, 32};
    laws(&r, xs, 5, 3, 0);
    add(&r, "comp", 64, 100); /* a coordinate without the epoch: left out */
    ei_result e;
    check(ei_fit(&in, r.v, r.n, &e) == 0, "fits");
    double v, lo, hi;
    pmnf_predict(&e.model, (double[]){32}, &v, &lo, &hi);
    check(e.npoints == 5 && e.included && e.present && check_close(v, 96, 1e-9, 0) &&
              check_close(e.max_share, 96.0 / 517, 1e-12, 0),
          "I = 3·x: %d points, at 32 %.12g (96), largest share %.9g (%.9g)", e.npoints, v,
          e.max_share, 96.0 / 517);
    pmnf_predict(&e.model, (double[]){64}, &v, &lo, &hi);
    check(check_close(v, 192, 1e-9, 0) && e.function && strstr(e.function, "ranks"),
          "at 64: %.12g (192), %s", v, e.function ? e.function : "(none)");
    /* the composition, each part the same model: n parts' ends move by
     * sqrt(n) times one part's distance (modeling/combine.h); a model with
     * an interval of some width: the imbalance 3·x off by ±2% at the
     * coordinates in turn */
    rows rn;
    laws(&rn, xs, 5, 3, 0);
    for (int i = 0; i < rn.n; i++)
        if (!strcmp(rn.v[i].name, "epoch"))
            rn.v[i].value += 3 * rn.pts[i] * 0.02 * (i % 2 ? 1 : -1);
    ei_result en;
    check(ei_fit(&in, rn.v, rn.n, &en) == 0 && en.present, "the noisy imbalance fits");
    const pmnf_model *parts[3] = {&en.model, &en.model, &en.model};
    double s, slo, shi;
    int iv;
    pmnf_predict(&en.model, (double[]){32}, &v, &lo, &hi);
    int rc = ei_epoch_at(parts, &en.model, 1, (double[]){32}, &s, &slo, &shi, &iv);
    check(rc == 0 && hi - lo > 0.5 && check_close(s, 4 * v, 1e-12, 0) &&
              check_close(4 * v - slo, 2 * (v - lo), 1e-9, 0) &&
              check_close(shi - 4 * v, 2 * (hi - v), 1e-9, 0),
          "four parts at 32: %.12g [%.12g, %.12g] (4 x %.12g, ends 2x one part's [%.12g, %.12g])",
          s, slo, shi, v, lo, hi);
    rc = ei_epoch_at(parts, NULL, 0, (double[]){32}, &s, &slo, &shi, &iv);
    check(rc == 0 && check_close(s, 3 * v, 1e-12, 0) &&
              check_close(3 * v - slo, sqrt(3) * (v - lo), 1e-9, 0),
          "three parts at 32: %.12g [%.12g, %.12g] (3 x %.12g)", s, slo, shi, v);
    check(ei_epoch_at(parts, NULL, 1, (double[]){32}, &s, &slo, &shi, &iv) == -1,
          "an imbalance needed without a model: not composed");
    const pmnf_model *missing[3] = {&en.model, NULL, &en.model};
    check(ei_epoch_at(missing, &en.model, 0, (double[]){32}, &s, &slo, &shi, &iv) == -1,
          "a part missing: not composed");
    check(ei_composable(parts, NULL, 0) && ei_composable(parts, &en.model, 1) &&
              !ei_composable(parts, NULL, 1) && !ei_composable(missing, &en.model, 0),
          "ei_composable says the same of the four");
    ei_result_clear(&en);
    ei_result_clear(&e);
    check(e.function == NULL && !e.present, "cleared");
}

static void test_alike(void)
{
    rows r;
    const double xs[5] = {2, 4, 8, 16, 32};
    laws(&r, xs, 5, 0, 1e-15); /* the two sums differ by rounding only */
    ei_result e;
    int rc = ei_fit(&in, r.v, r.n, &e);
    check(rc == 0 && !e.included && !e.present && e.max_share == 0 &&
              e.function == NULL,
          "ranks alike: no part (largest share %g)", e.max_share);
    laws(&r, xs, 5, 0, 0.0005); /* 0.05%: within the models' accuracy */
    rc = ei_fit(&in, r.v, r.n, &e);
    check(rc == 0 && !e.included && !e.present &&
              check_close(e.max_share, 0.0005 / 1.0005, 1e-9, 0),
          "0.05%%: no part (largest share %g)", e.max_share);
}

static void test_too_few(void)
{
    rows r;
    const double xs[4] = {2, 4, 8, 16};
    laws(&r, xs, 4, 3, 0);
    ei_result e;
    int rc = ei_fit(&in, r.v, r.n, &e);
    check(rc == 0 && e.included && !e.present &&
              strstr(e.reason, "at least 5"),
          "4 values: needed, no model: %s", e.reason);
    ei_result_clear(&e);
}

/* Rows of two level combinations at the same coordinates: no part. */
static void test_two_combinations(void)
{
    rows r;
    const double xs[5] = {2, 4, 8, 16, 32};
    laws(&r, xs, 5, 3, 0);
    rows more;
    laws(&more, xs, 5, 6, 0);
    for (int i = 0; i < more.n && r.n < MAXROWS; i++)
        add(&r, more.v[i].name, more.pts[i], more.v[i].value);
    ei_result e;
    int rc = ei_fit(&in, r.v, r.n, &e);
    check(rc == 0 && !e.included && !e.present, "two combinations mixed: no part");
}

static void test_warning(void)
{
    json_t *w = ei_warning_json(96, 517, "time", "s");
    check(w && !strcmp(json_string_value(json_object_get(w, "code")) ?: "", EI_WARNING) &&
              check_close(json_number_value(json_object_get(w, "share")), 96.0 / 517, 1e-12, 0) &&
              json_number_value(json_object_get(w, "imbalance")) == 96 &&
              json_number_value(json_object_get(w, "parts_sum")) == 421 &&
              json_number_value(json_object_get(w, "limit")) == EI_WARN_SHARE &&
              !strcmp(json_string_value(json_object_get(w, "model")) ?: "", "epoch time") &&
              strstr(json_string_value(json_object_get(w, "message")) ?: "", "18.6%"),
          "18.6%%: epoch_imbalance with its share");
    json_decref(w);
    w = ei_warning_json(0.99, 100, "time", "s");
    check(w == NULL, "0.99%%: none");
    w = ei_warning_json(1, 100, "time", "s");
    check(w != NULL, "1%%: the limit warns");
    json_decref(w);
    check(ei_warning_json(5, 0, "time", "s") == NULL && ei_warning_json(NAN, 10, "time", "s") == NULL,
          "no share without an epoch > 0 and a number");
    check(isnan(ei_share(1, -2)) && ei_share(1, 4) == 0.25, "ei_share");
}

int main(void)
{
    test_imbalanced();
    test_alike();
    test_too_few();
    test_two_combinations();
    test_warning();
    return check_summary();
}
