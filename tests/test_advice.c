/*
 * test_advice.c — the advice on which runs to take next (analysis/advice.h)
 * without a server or a database: the request document (its checks and the
 * default candidates), and the advice over a known epoch model T(x) = 1 + x
 * measured at x = 1, 2: the runs' prices, the budget, the prediction at the
 * target and the refusals; no run recommended where the rank count is not
 * a whole number.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/advice.h"
#include "tests/check.h"

static const char *const params[2] = {"x", "y"};

static advice_estimate epoch(const void *models, const double *point)
{
    (void)models;
    return (advice_estimate){1 + point[0], point[0], 2 + point[0], 1};
}

static double ranks(const void *models, const double *point)
{
    (void)models;
    (void)point;
    return 1;
}

static json_t *extrapolation(const void *models, const double *point)
{
    (void)models;
    return json_pack("{s:b}", "beyond_4x", point[0] > 8);
}

static const advice_ops ops = {epoch, ranks, extrapolation, NULL};

/* ranks x - 1 (a data_parallel of "x-1"): none at x = 1 */
static double ranks_minus_one(const void *models, const double *point)
{
    (void)models;
    return point[0] - 1 > 0 ? point[0] - 1 : 0;
}

static const advice_ops ops_minus_one = {epoch, ranks_minus_one, extrapolation, NULL};

static double px[2] = {1, 2}, r1[1] = {2}, r2[1] = {3};
static store_measurement_row rows[2] = {
    {.point = &px[0], .nparams = 1, .name = "epoch", .reps = r1, .nreps = 1},
    {.point = &px[1], .nparams = 1, .name = "epoch", .reps = r2, .nreps = 1}};

static int parse(const char *text, int nparams, advice_request *a, char *field, size_t cap)
{
    json_t *doc = json_loads(text, 0, NULL);
    an_problem p;
    int rc = advice_request_parse(doc, params, nparams, rows, 2, a, &p);
    json_decref(doc);
    snprintf(field, cap, "%.150s", rc == 0 ? "" : p.status == 400 ? p.field : "?");
    return rc;
}

static void test_request(void)
{
    advice_request a;
    char f[160];
    int rc = parse("{\"target\":{\"x\":10},\"budget_core_hours\":5}", 1, &a, f, sizeof f);
    check(rc == 0 && a.nvalues[0] == 4 && a.values[0][0] == 1 && a.values[0][1] == 2 &&
              a.values[0][2] == 4 && a.values[0][3] == 8 && a.max_runs == 200 &&
              a.epochs_per_run == 1,
          "default candidates: measured 1, 2, then 4, 8 below the target 10");
    advice_request_free(&a);
    struct {
        const char *body, *field;
        int nparams;
    } bad[] = {
        {"{\"target\":{\"x\":10}}", "budget_core_hours", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"max_runs\":0}", "max_runs", 1},
        {"{\"target\":{},\"budget_core_hours\":1}", "target.x", 1},
        {"{\"target\":{\"x\":10,\"z\":1},\"budget_core_hours\":1}", "target.z", 1},
        {"{\"target\":{\"x\":-1},\"budget_core_hours\":1}", "target.x", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"candidates\":{\"z\":[1]}}",
         "candidates.z", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"candidates\":{\"x\":[]}}",
         "candidates.x", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"extra\":1}", "extra", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"grid_core_hours\":0}",
         "grid_core_hours", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"grid_core_hours\":\"x\"}",
         "grid_core_hours", 1},
        /* beyond the largest coordinate perfcast models (1e50): no prediction there */
        {"{\"target\":{\"x\":1e300},\"budget_core_hours\":1}", "target.x", 1},
        {"{\"target\":{\"x\":10},\"budget_core_hours\":1,\"candidates\":{\"x\":[2,1e51]}}",
         "candidates.x", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = parse(bad[i].body, bad[i].nparams, &a, f, sizeof f);
        check(rc == -1 && !strcmp(f, bad[i].field), "refused naming %s: %d %s", bad[i].field, rc,
              f);
        advice_request_free(&a);
    }
    /* 101 x 101 candidates: more than the cap */
    json_t *xs = json_array();
    for (int v = 1; v <= 101; v++)
        json_array_append_new(xs, json_integer(v));
    json_t *doc = json_pack("{s:{s:i, s:i}, s:i, s:{s:O, s:O}}", "target", "x", 10, "y", 10,
                            "budget_core_hours", 1, "candidates", "x", xs, "y", xs);
    char msg[300];
    an_problem p;
    rc = advice_request_parse(doc, params, 2, rows, 0, &a, &p);
    check(rc == 0 && advice_candidates(&a, 2) > ADVICE_MAX_CANDIDATES, "10,201 candidates");
    pmnf_model none = {0};
    advice_in in = {1, 1, params, 2, 3600, {NULL, NULL, NULL, &none}, &ops, NULL, rows, 0};
    json_t *out;
    check(advice_compute(&in, &a, &out, msg, sizeof msg) == ADVICE_TOO_MANY && !out,
          "more than the cap: refused");
    advice_request_free(&a);
    json_decref(xs);
    json_decref(doc);
}

static void test_advice(void)
{
    pmnf_model m = {0};
    m.f = (pmnf_function){.nparams = 1, .constant = 1, .nterms = 1};
    m.f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    m.sigma2 = 1;
    advice_request a;
    char f[160], msg[300];
    parse("{\"target\":{\"x\":10},\"budget_core_hours\":20,\"epochs_per_run\":0.5,"
          "\"candidates\":{\"x\":[1,2,3,4]}}",
          1, &a, f, sizeof f);
    advice_in in = {7, 2, params, 1, 3600, {NULL, NULL, NULL, &m}, &ops, NULL, rows, 2};
    json_t *out;
    int rc = advice_compute(&in, &a, &out, msg, sizeof msg);
    check(rc == ADVICE_OK && out, "advises: %d %s", rc, msg);
    double spent = json_number_value(json_object_get(out, "spent_core_hours")), sum = 0;
    int priced = 1, measured = 1;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(out, "recommendations"), i, x)
    {
        double at = json_number_value(json_object_get(json_object_get(x, "point"), "x"));
        sum += json_number_value(json_object_get(x, "core_hours"));
        /* a run: epochs_per_run × T × ranks × cores_per_rank / 3600 = 0.5·(1 + x) */
        priced &= check_close(json_number_value(json_object_get(x, "core_hours_per_run")),
                              0.5 * (1 + at), 1e-12, 0);
        measured &= json_integer_value(json_object_get(x, "measured_repetitions")) ==
                    (at <= 2 ? 1 : 0);
    }
    /* the grid: one run at each candidate, 0.5·(2+3+4+5) = 7 core-hours, the measured runs
     * at 1 and 2 2.5: the runs recommended stay within the 4.5 left, and stop where not even
     * the cheapest (1 core-hour at x = 1) fits any more */
    check(json_array_size(json_object_get(out, "recommendations")) > 0 && spent > 3.5 &&
              spent <= 4.5 + 1e-12 && check_close(sum, spent, 1e-12, 0),
          "within the grid's 7 - 2.5 measured: %g core-hours", spent);
    check(priced && measured, "runs priced by the model, measured repetitions named");
    json_t *pred = json_object_get(out, "prediction");
    check(json_number_value(json_object_get(pred, "value")) == 11 &&
              json_integer_value(json_object_get(out, "candidates")) == 4 &&
              json_integer_value(json_object_get(out, "experiment")) == 7,
          "the prediction at the target, T(10) = 11");
    double now = json_number_value(json_object_get(json_object_get(out, "mean_half_width_s"), "now"));
    double after =
        json_number_value(json_object_get(json_object_get(out, "mean_half_width_s"), "after"));
    check(after < now && check_close(json_number_value(json_object_get(out, "expected_shrink_pct")),
                                     100 * (1 - after / now), 1e-9, 0),
          "the interval shrinks: %g -> %g", now, after);
    check(!strcmp(json_string_value(json_object_get(json_object_get(json_object_get(out, "noise"),
                                                                     "epoch"),
                                                     "from")) ?: "",
                  "the fit's residual spread (no repetitions)"),
          "noise from the residuals without repetitions");
    /* the budget of 20 would buy more: a coded warning says the grid's cost stopped it */
    json_t *w = json_array_get(json_object_get(out, "warnings"), 0);
    check(!strcmp(json_string_value(json_object_get(w, "code")) ?: "", "grid_cost_reached") &&
              check_close(json_number_value(json_object_get(w, "grid_core_hours")), 7, 1e-12, 0) &&
              check_close(json_number_value(json_object_get(w, "measured_core_hours")), 2.5,
                          1e-12, 0) &&
              check_close(json_number_value(json_object_get(w, "planned_core_hours")), spent, 1e-12,
                          0),
          "stopped by the grid's cost: %s", json_string_value(json_object_get(w, "code")) ?: "none");
    json_decref(out);
    /* a grid of 100 core-hours named: the budget of 20 is what binds */
    advice_request_free(&a);
    parse("{\"target\":{\"x\":10},\"budget_core_hours\":20,\"epochs_per_run\":0.5,"
          "\"candidates\":{\"x\":[1,2,3,4]},\"grid_core_hours\":100}",
          1, &a, f, sizeof f);
    rc = advice_compute(&in, &a, &out, msg, sizeof msg);
    spent = json_number_value(json_object_get(out, "spent_core_hours"));
    check(rc == ADVICE_OK && a.grid == 100 && spent > 19 && spent <= 20 &&
              json_array_size(json_object_get(out, "warnings")) == 0,
          "the caller's grid of 100: %g core-hours of the budget's 20, %zu warnings", spent,
          json_array_size(json_object_get(out, "warnings")));
    json_decref(out);
    /* a model that fits poorly (an outlier among the repetitions can make one): the
     * advice resting on it says so, after its own warnings, naming the model */
    m.warnings = PMNF_WARN_POOR_FIT;
    rc = advice_compute(&in, &a, &out, msg, sizeof msg);
    json_t *pw = json_array_get(json_object_get(out, "warnings"), 0);
    check(rc == ADVICE_OK && json_array_size(json_object_get(out, "warnings")) == 1 &&
              !strcmp(json_string_value(json_object_get(pw, "code")) ?: "", "poor_fit") &&
              strstr(json_string_value(json_object_get(pw, "model")) ?: "", "epoch time"),
          "the epoch model's poor fit in the advice: %s",
          json_string_value(json_object_get(pw, "code")) ?: "none");
    json_decref(out);
    m.warnings = 0;
    /* candidates without a rank count (x = 1: 0 ranks) are left out and the
     * answer says so first (no_ranks), not priced at 0 core-hours */
    advice_in nr = in;
    nr.ops = &ops_minus_one;
    rc = advice_compute(&nr, &a, &out, msg, sizeof msg);
    json_t *nw = json_array_get(json_object_get(out, "warnings"), 0);
    int at1 = 0;
    json_array_foreach(json_object_get(out, "recommendations"), i, x)
        at1 |= json_number_value(json_object_get(json_object_get(x, "point"), "x")) == 1;
    check(rc == ADVICE_OK && !strcmp(json_string_value(json_object_get(nw, "code")) ?: "", "no_ranks") &&
              json_integer_value(json_object_get(nw, "candidates")) == 1 &&
              json_number_value(json_object_get(json_object_get(nw, "point"), "x")) == 1 && !at1 &&
              json_array_size(json_object_get(out, "recommendations")) > 0,
          "x = 1 without ranks: %s, recommended there %d",
          json_string_value(json_object_get(nw, "code")) ?: "none", at1);
    json_decref(out);
    /* no model of any part: nothing to advise on */
    advice_in none = in;
    none.parts[3] = NULL;
    check(advice_compute(&none, &a, &out, msg, sizeof msg) == ADVICE_NO_MODEL, "no model");
    /* one measured point cannot determine two coefficients */
    none = in;
    none.nrows = 1;
    check(advice_compute(&none, &a, &out, msg, sizeof msg) == ADVICE_FAILED && msg[0],
          "one point: refused, %s", msg);
    advice_request_free(&a);
}

/* ranks x as data_parallel x/2 × model_parallel 2: at odd x half a group */
static double ranks_x(const void *models, const double *point)
{
    (void)models;
    return point[0];
}

static int halves(const void *models, const double *point, double *dp, double *mp)
{
    (void)models;
    *dp = point[0] / 2;
    *mp = 2;
    return 0;
}

static const advice_ops ops_halves = {epoch, ranks_x, extrapolation, halves};

/* A run at a rank count no scheduler can allocate is never recommended:
 * at x = 1 and 3 (0.5 and 1.5 data-parallel groups) the candidates are
 * left out and the answer says so (ranks_not_whole, the first at x = 1);
 * candidates none of which can be allocated are refused naming
 * candidates.x. */
static void test_not_whole(void)
{
    pmnf_model m = {0};
    m.f = (pmnf_function){.nparams = 1, .constant = 1, .nterms = 1};
    m.f.terms[0] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{0, 1, 0}}};
    m.sigma2 = 1;
    advice_request a;
    char f[160], msg[300];
    parse("{\"target\":{\"x\":10},\"budget_core_hours\":20,\"epochs_per_run\":0.5,"
          "\"candidates\":{\"x\":[1,2,3,4]},\"grid_core_hours\":100}",
          1, &a, f, sizeof f);
    advice_in in = {7, 2, params, 1, 3600, {NULL, NULL, NULL, &m}, &ops_halves, NULL, rows, 2};
    an_problem p;
    check(advice_check_whole(&in, &a, &p) == 0, "2 and 4 can be allocated");
    json_t *out;
    int rc = advice_compute(&in, &a, &out, msg, sizeof msg);
    int odd = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(out, "recommendations"), i, x)
    {
        double at = json_number_value(json_object_get(json_object_get(x, "point"), "x"));
        odd += at == 1 || at == 3;
    }
    json_t *w = json_array_get(json_object_get(out, "warnings"), 0);
    const char *text = json_string_value(json_object_get(w, "message")) ?: "";
    check(rc == ADVICE_OK && json_array_size(json_object_get(out, "recommendations")) > 0 &&
              odd == 0,
          "runs recommended, none at x = 1 or 3 (%d)", odd);
    check(!strcmp(json_string_value(json_object_get(w, "code")) ?: "", "ranks_not_whole") &&
              json_integer_value(json_object_get(w, "candidates")) == 2 &&
              json_number_value(json_object_get(json_object_get(w, "point"), "x")) == 1 &&
              strstr(text, "data_parallel 0.5 × model_parallel 2 = 1 ranks"),
          "ranks_not_whole first: 2 candidates, the first at x = 1: %s", text);
    json_decref(out);
    advice_request_free(&a);
    parse("{\"target\":{\"x\":10},\"budget_core_hours\":20,\"candidates\":{\"x\":[1,3]}}", 1, &a,
          f, sizeof f);
    check(advice_check_whole(&in, &a, &p) < 0 && p.status == 400 &&
              !strcmp(p.field, "candidates.x") && strstr(p.msg, "no candidate can be allocated"),
          "1 and 3 only: refused naming %s: %s", p.field, p.msg);
    advice_request_free(&a);
}

int main(void)
{
    test_request();
    test_advice();
    test_not_whole();
    return check_summary();
}
