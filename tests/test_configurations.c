/*
 * test_configurations.c — the configuration search (analysis/configurations.h)
 * without a server or a database: the request document's checks, and the
 * search over a known law T(x) = 100/x + 1 s per epoch at x ranks (strong
 * scaling, measured at x = 1): predictions, feasibility, the recommendation,
 * the Pareto front and the closest candidates when nothing is feasible; an
 * efficiency model or a cost formula without a value at a candidate never
 * wins, and a cost formula without one says so; a candidate where the
 * prediction overflows is refused.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/configurations.h"
#include "tests/check.h"

static const char *const params[1] = {"ranks"};

static configs_estimate epoch(const void *models, const double *point)
{
    (void)models;
    double t = 100 / point[0] + 1;
    return (configs_estimate){t, 0.9 * t, 1.1 * t, 1};
}

static double ranks(const void *models, const double *point)
{
    (void)models;
    return point[0];
}

static int beyond(const void *models, const double *point)
{
    (void)models;
    return point[0] > 4;
}

static int calls_all, calls_point;
static void warnings(json_t *doc, const void *models, const double *point, int all)
{
    (void)models;
    (void)point;
    (void)doc;
    calls_all += all;
    calls_point += !all;
}

static const configs_ops ops = {epoch, ranks, beyond, warnings, NULL};

/* ranks x - 2 (a data_parallel of "ranks-2"): none at x = 1, 2 */
static double ranks_minus_two(const void *models, const double *point)
{
    (void)models;
    return point[0] - 2 > 0 ? point[0] - 2 : 0;
}

static const configs_ops ops_minus_two = {epoch, ranks_minus_two, beyond, warnings, NULL};

/* 400's field of a request, "" when accepted */
static const char *refused(const char *text, int priced, char *field, size_t cap)
{
    json_t *doc = json_loads(text, 0, NULL);
    configs_request r;
    an_problem p;
    int rc = configs_request_parse(doc, params, 1, priced, &r, &p);
    configs_request_free(&r);
    json_decref(doc);
    snprintf(field, cap, "%.150s", rc == 0 ? "" : p.status == 400 ? p.field : "?");
    return field;
}

static void test_request(void)
{
    char f[160];
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}},\"budget\":1}", 1, f,
                          sizeof f), "budget"), "an unknown member is named");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}},\"max_cost\":5}", 0,
                          f, sizeof f), "max_cost"), "max_cost needs a price");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}},\"max_cost\":5}", 1,
                          f, sizeof f), ""), "max_cost with a price");
    check(!strcmp(refused("{\"candidates\":{}}", 1, f, sizeof f), "candidates.ranks"),
          "a parameter without candidates");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"values\":[1,-2]}}}", 1, f, sizeof f),
                  "candidates.ranks.values[1]"), "a value <= 0 is named by its index");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":100000}}}", 1, f,
                          sizeof f), "candidates.ranks"), "more than the cap");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}},\"epochs\":0}", 1, f,
                          sizeof f), "epochs"), "epochs >= 1");
    check(!strcmp(refused("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}},\"objective\":\"x\"}",
                          1, f, sizeof f), "objective"), "an unknown objective");
    json_t *doc = json_loads("{\"candidates\":{\"ranks\":{\"min\":2,\"max\":64,\"factor\":2}}}", 0,
                             NULL);
    configs_request r;
    an_problem p;
    int rc = configs_request_parse(doc, params, 1, 1, &r, &p);
    check(rc == 0 && r.ranges[0].nvalues == 6 && r.ranges[0].values[5] == 64 && r.epochs == 1 &&
              isinf(r.limits.max_time),
          "factor 2 from 2 to 64: six values");
    configs_request_free(&r);
    json_decref(doc);
}

static json_t *search_ops(const char *text, cost_eval *ce, const configs_ops *o);

static json_t *search(const char *text, cost_eval *ce)
{
    return search_ops(text, ce, &ops);
}

static json_t *search_ops(const char *text, cost_eval *ce, const configs_ops *o)
{
    static double coords[1] = {1}, rk[1] = {1}, v[1] = {101};
    ad_app app;
    memset(&app, 0, sizeof app);
    app.nparams = 1;
    app.npoints = 1;
    app.coords = coords;
    app.ranks = rk;
    app.value[AD_GROUPS - 1] = v;
    configs_combo combo = {NULL, &app, NULL};
    json_t *doc = json_loads(text, 0, NULL);
    configs_request r;
    an_problem p;
    json_t *out = NULL;
    if (configs_request_parse(doc, params, 1, 1, &r, &p) == 0) {
        configs_search_in in = {7, 3, "strong", params, 1, o, &combo, 1, ce, 0, NULL};
        out = configs_search(&in, &r);
    }
    configs_request_free(&r);
    json_decref(doc);
    return out;
}

static void test_search(void)
{
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5};
    calls_all = calls_point = 0;
    json_t *out = search("{\"max_time_s\":30,\"candidates\":{\"ranks\":{\"min\":1,\"max\":8}}}", &ce);
    check(out && json_integer_value(json_object_get(out, "searched")) == 8 &&
              json_integer_value(json_object_get(out, "feasible")) == 5 &&
              json_integer_value(json_object_get(out, "experiment")) == 7,
          "100/x + 1 <= 30 from x = 4: 5 of 8 feasible");
    json_t *c3 = json_array_get(json_object_get(out, "candidates"), 2); /* x = 3 */
    double t3 = 100.0 / 3 + 1;
    check(check_close(json_number_value(json_object_get(c3, "time_s")), t3, 1e-12, 0) &&
              check_close(json_number_value(json_object_get(c3, "core_hours")), t3 * 3 * 2 / 3600,
                          1e-12, 0) &&
              check_close(json_number_value(json_object_get(c3, "cost")), t3 * 3 * 2 / 3600 * 0.5,
                          1e-12, 0) &&
              check_close(json_number_value(json_object_get(c3, "efficiency")),
                          101.0 / (t3 * 3), 1e-12, 0) &&
              json_is_false(json_object_get(c3, "feasible")),
          "x = 3: time, core-hours, cost, efficiency (T_1·x_1)/(T_k·x_k)");
    json_t *iv = json_object_get(json_object_get(c3, "interval"), "time_s");
    check(check_close(json_number_value(json_array_get(iv, 0)), 0.9 * t3, 1e-12, 0),
          "the time's interval");
    json_t *rec = json_object_get(out, "recommended");
    check(json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")) == 4 &&
              !strncmp(json_string_value(json_object_get(rec, "reason")) ?: "",
                       "strong scaling: the highest parallel efficiency", 47),
          "strong scaling: the most efficient feasible candidate, x = 4");
    check(json_is_true(json_object_get(json_array_get(json_object_get(out, "candidates"), 4),
                                       "beyond_4x")),
          "x = 5 is beyond 4x");
    check(json_array_size(json_object_get(out, "pareto")) == 8, "time falls, cost grows: all on "
                                                                 "the front");
    check(json_number_value(json_object_get(json_object_get(out, "baseline"), "time_s")) == 101,
          "the baseline measured");
    check(calls_point == 9 && calls_all == 1,
          "each full candidate's prediction warnings, the recommendation's models once (%d, %d)",
          calls_point, calls_all);
    json_decref(out);

    out = search("{\"max_time_s\":5,\"epochs\":2,\"objective\":\"fastest\","
                 "\"candidates\":{\"ranks\":{\"values\":[1,2,4,8]}}}",
                 &ce);
    json_t *nf = json_object_get(out, "nothing_feasible");
    json_t *closest = json_object_get(nf, "closest");
    check(json_is_null(json_object_get(out, "recommended")) && json_array_size(closest) == 4 &&
              json_number_value(json_object_get(json_object_get(json_array_get(closest, 0),
                                                                "point"),
                                                "ranks")) == 8 &&
              check_close(json_number_value(json_object_get(json_array_get(closest, 0),
                                                            "violation")),
                          2 * (100.0 / 8 + 1) / 5, 1e-12, 0),
          "nothing feasible: the closest first (x = 8, violation 2·13.5/5)");
    json_decref(out);
}

/* A candidate without a rank count (ranks - 2 at ranks 1 and 2: 0 ranks)
 * has no core-hours, cost or efficiency (null, never 0 or negative), is
 * never feasible and says why (no_ranks); the cheapest feasible one is
 * ranks 3: T = 100/3 + 1 on 1 rank, 2 cores, (100/3 + 1)·2/3600 core-hours. */
static void test_no_ranks(void)
{
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5};
    json_t *out = search_ops("{\"max_time_s\":1e9,\"objective\":\"cheapest\","
                             "\"candidates\":{\"ranks\":{\"min\":1,\"max\":4}}}",
                             &ce, &ops_minus_two);
    json_t *c1 = json_array_get(json_object_get(out, "candidates"), 0);
    json_t *w = json_array_get(json_object_get(c1, "warnings"), 0);
    check(out && json_is_null(json_object_get(c1, "core_hours")) &&
              json_is_null(json_object_get(c1, "cost")) &&
              json_is_null(json_object_get(c1, "efficiency")) &&
              json_is_false(json_object_get(c1, "feasible")) &&
              !strcmp(json_string_value(json_object_get(w, "code")) ?: "", "no_ranks"),
          "ranks 1 without a rank count: core-hours %g",
          json_number_value(json_object_get(c1, "core_hours")));
    json_t *rec = json_object_get(out, "recommended");
    double t3 = 100.0 / 3 + 1;
    check(json_integer_value(json_object_get(out, "feasible")) == 2 &&
              json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")) == 3 &&
              check_close(json_number_value(json_object_get(rec, "core_hours")), t3 * 2 / 3600,
                          1e-12, 0),
          "the cheapest with ranks: 3");
    json_decref(out);
}

/* Strong scaling chooses by the efficiency model ε(x) when there is one.
 * ε(x) = 50 + 10·log2(x)^(-1) (a negative power of the logarithm, which
 * the strong-scaling search space holds) has no value at x = 1 (10/0): it
 * is 60% at 2 and 55% at 4, so the most efficient candidate of 1, 2, 4 is
 * x = 2. An infinite ε at x = 1 must not win, and is shown as null. */
static void test_efficiency_model_without_value(void)
{
    static double coords[1] = {1}, rk[1] = {1}, v[1] = {101};
    ad_app app;
    memset(&app, 0, sizeof app);
    app.nparams = 1;
    app.npoints = 1;
    app.coords = coords;
    app.ranks = rk;
    app.value[AD_GROUPS - 1] = v;
    char err[200];
    app.efficiency.present =
        pmnf_parse("50 + 10 * log2(ranks)^(-1)", params, 1, &app.efficiency.model.f, err,
                   sizeof err) == 0;
    check(app.efficiency.present, "ε model parsed: %s", err);
    check(isinf(pmnf_model_eval(&app.efficiency.model, (double[]){1})) &&
              check_close(pmnf_model_eval(&app.efficiency.model, (double[]){2}), 60, 1e-12, 0),
          "premise: ε(1) infinite, ε(2) = 60");
    configs_combo combo = {NULL, &app, NULL};
    json_t *doc = json_loads("{\"candidates\":{\"ranks\":{\"values\":[1,2,4]}}}", 0, NULL);
    configs_request r;
    an_problem p;
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5};
    json_t *out = NULL;
    if (configs_request_parse(doc, params, 1, 1, &r, &p) == 0) {
        configs_search_in in = {7, 3, "strong", params, 1, &ops, &combo, 1, &ce, 0, NULL};
        out = configs_search(&in, &r);
    }
    json_t *rec = json_object_get(out, "recommended");
    json_t *c1 = json_array_get(json_object_get(out, "candidates"), 0);
    check(json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")) == 2 &&
              check_close(json_number_value(json_object_get(rec, "efficiency_pct_model")), 60,
                          1e-12, 0),
          "recommended: x = 2 (ε 60%%), not x = 1 (no ε): %g",
          json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")));
    check(json_is_null(json_object_get(c1, "efficiency_pct_model")), "x = 1: ε null");
    json_decref(out);
    configs_request_free(&r);
    json_decref(doc);
}

/* A cost formula with no value at some candidates: money =
 * T·ranks/3600·100·sqrt(ranks − 3), NaN at ranks 2 (sqrt(−1)). With T =
 * 100/x + 1: x = 2: T = 51, no money (core-hours 51·2·2/3600 = 0.0567);
 * x = 4: T = 26, 26·4/3600·100·1 = 2.8889; x = 8: T = 13.5,
 * 13.5·8/3600·100·sqrt(5) = 6.7082. The cheapest is x = 4: x = 2 has no
 * cost, and its core-hours are no money (they were compared with the
 * others' money, and x = 2 recommended); it is not on the time/cost
 * Pareto front, which is x = 8 then x = 4; it says why it has no cost
 * (cost_invalid), as the answer does when it recommends it. */
static void test_formula_without_value(void)
{
    const char *cost_names[1] = {"ranks"};
    cost_setup cs = {1, 2, 0.5, "T*ranks/3600*100*sqrt(ranks-3)", cost_names, 1};
    cost_eval ce;
    char err[300];
    check(cost_open(&ce, &cs, err, sizeof err) == 0, "formula compiles: %s", err);
    json_t *out = search("{\"objective\":\"cheapest\",\"candidates\":{\"ranks\":{\"values\":[2,4,8]}}}",
                         &ce);
    json_t *cands = json_object_get(out, "candidates");
    json_t *c2 = json_array_get(cands, 0), *c4 = json_array_get(cands, 1);
    check(json_is_null(json_object_get(c2, "cost")) &&
              check_close(json_number_value(json_object_get(c4, "cost")), 26.0 * 4 / 3600 * 100,
                          1e-12, 0),
          "x = 2 without money, x = 4 at 26·4/3600·100");
    json_t *rec = json_object_get(out, "recommended");
    check(json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")) == 4,
          "cheapest: x = 4, not x = 2 (no cost): %g",
          json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")));
    json_t *front = json_object_get(out, "pareto");
    check(json_array_size(front) == 2 &&
              json_number_value(json_object_get(json_object_get(json_array_get(front, 0), "point"),
                                                "ranks")) == 8 &&
              json_number_value(json_object_get(json_object_get(json_array_get(front, 1), "point"),
                                                "ranks")) == 4,
          "the front: 8 then 4, without the candidate that has no cost (%zu points)",
          json_array_size(front));
    json_t *w = json_object_get(c2, "warnings");
    int said = 0;
    for (size_t i = 0; i < json_array_size(w); i++)
        said |= !strcmp(json_string_value(json_object_get(json_array_get(w, i), "code")) ?: "",
                        "cost_invalid");
    check(said, "x = 2 says why it has no cost");
    json_decref(out);

    /* fastest: x = 8, with money; asked among 2 only: x = 2 recommended without a cost, said */
    out = search("{\"objective\":\"fastest\",\"candidates\":{\"ranks\":{\"values\":[2]}}}", &ce);
    w = json_object_get(out, "warnings");
    said = 0;
    for (size_t i = 0; i < json_array_size(w); i++)
        said |= !strcmp(json_string_value(json_object_get(json_array_get(w, i), "code")) ?: "",
                        "cost_invalid");
    check(said, "a recommendation without a cost: the answer says so");
    json_decref(out);
    cost_close(&ce);
}

static int has_code(const json_t *warnings, const char *code)
{
    for (size_t i = 0; i < json_array_size(warnings); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(warnings, i), "code")) ?: "",
                    code))
            return 1;
    return 0;
}

static json_t *warning_of(json_t *warnings, const char *code)
{
    for (size_t i = 0; i < json_array_size(warnings); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(warnings, i), "code")) ?: "",
                    code))
            return json_array_get(warnings, i);
    return NULL;
}

/* T(x) = 100/x + 1 in [0.9·T, 1.1·T]. Deadline 27 s: x = 4 (T = 26 in
 * [23.4, 28.6]) meets it by its point estimate only, x = 5 (21 in [18.9,
 * 23.1]) at its upper end too. Core-hours T·x·2/3600 grow with x, so the
 * cheapest by the point estimate is 4; preferred is 5. x = 4 says
 * limit_within_interval with the limit and its interval; x = 3 (34.3 in
 * [30.9, 37.7]) has the deadline below its interval: no warning. With a
 * deadline of 25, x = 4 misses it but its interval's lower end meets it:
 * warned too, not feasible. */
static void test_upper_end(void)
{
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5};
    json_t *out = search("{\"max_time_s\":27,\"objective\":\"cheapest\","
                         "\"candidates\":{\"ranks\":{\"min\":3,\"max\":6}}}",
                         &ce);
    json_t *cands = json_object_get(out, "candidates");
    json_t *c3 = json_array_get(cands, 0), *c4 = json_array_get(cands, 1),
           *c5 = json_array_get(cands, 2);
    check(json_is_true(json_object_get(c4, "feasible")) &&
              json_is_false(json_object_get(c4, "feasible_at_upper")) &&
              json_is_true(json_object_get(c5, "feasible_at_upper")) &&
              json_is_false(json_object_get(c3, "feasible_at_upper")),
          "4 feasible by its point estimate only, 5 at its upper end");
    json_t *w = warning_of(json_object_get(c4, "warnings"), "limit_within_interval");
    json_t *iv = json_object_get(w, "interval");
    check(w && !strcmp(json_string_value(json_object_get(w, "field")) ?: "", "max_time_s") &&
              json_number_value(json_object_get(w, "limit")) == 27 &&
              check_close(json_number_value(json_array_get(iv, 0)), 0.9 * 26, 1e-12, 0) &&
              check_close(json_number_value(json_array_get(iv, 1)), 1.1 * 26, 1e-12, 0) &&
              strstr(json_string_value(json_object_get(w, "message")) ?: "", "may miss it"),
          "4: limit_within_interval, max_time_s = 27 inside [23.4, 28.6]");
    check(!has_code(json_object_get(c3, "warnings"), "limit_within_interval") &&
              !has_code(json_object_get(c5, "warnings"), "limit_within_interval"),
          "3 (interval above 27) and 5 (below) say nothing");
    json_t *rec = json_object_get(out, "recommended");
    check(json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")) == 5 &&
              json_integer_value(json_object_get(out, "feasible")) == 3 &&
              json_integer_value(json_object_get(out, "feasible_at_upper")) == 2 &&
              strstr(json_string_value(json_object_get(rec, "reason")) ?: "", "upper ends"),
          "cheapest: 5, feasible at its upper end, not 4: %g (%s)",
          json_number_value(json_object_get(json_object_get(rec, "point"), "ranks")),
          json_string_value(json_object_get(rec, "reason")));
    json_decref(out);

    out = search("{\"max_time_s\":25,\"candidates\":{\"ranks\":{\"values\":[4]}}}", &ce);
    c4 = json_array_get(json_object_get(out, "candidates"), 0);
    w = warning_of(json_object_get(c4, "warnings"), "limit_within_interval");
    check(json_is_false(json_object_get(c4, "feasible")) && w &&
              strstr(json_string_value(json_object_get(w, "message")) ?: "", "lower end meets"),
          "4 under 25: missed by the prediction, met by the lower end: warned");
    json_decref(out);

    /* a cost limit inside the cost's interval: 4 costs 26·4·2/3600·0.5 =
     * 0.02889 in [0.026, 0.03178] */
    out = search("{\"max_cost\":0.03,\"candidates\":{\"ranks\":{\"values\":[4]}}}", &ce);
    c4 = json_array_get(json_object_get(out, "candidates"), 0);
    w = warning_of(json_object_get(c4, "warnings"), "limit_within_interval");
    check(w && !strcmp(json_string_value(json_object_get(w, "field")) ?: "", "max_cost") &&
              !strcmp(json_string_value(json_object_get(w, "quantity")) ?: "", "cost") &&
              has_code(json_object_get(json_object_get(out, "recommended"), "warnings"),
                       "limit_within_interval"),
          "max_cost inside the cost's interval: named, also on the recommendation");
    json_decref(out);
}

/* data_parallel x/2 × model_parallel 2: x ranks, but at odd x half a
 * data-parallel group */
static int halves(const void *models, const double *point, double *dp, double *mp)
{
    (void)models;
    *dp = point[0] / 2;
    *mp = 2;
    return 0;
}

static const configs_ops ops_halves = {epoch, ranks, beyond, warnings, halves};

typedef int (*search_check)(const configs_search_in *, const configs_request *, an_problem *);

/* "" with the check passed (configs_check_whole or configs_check_finite),
 * else the 400's field; its message into msg */
static const char *check_field(const char *text, const configs_ops *o, search_check fn,
                               char *field, size_t cap, char *msg, size_t msgcap)
{
    static double coords[1] = {1}, rk[1] = {1}, v[1] = {101};
    ad_app app;
    memset(&app, 0, sizeof app);
    app.nparams = 1;
    app.npoints = 1;
    app.coords = coords;
    app.ranks = rk;
    app.value[AD_GROUPS - 1] = v;
    configs_combo combo = {NULL, &app, NULL};
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 8, .price_per_core_hour = 0.5};
    json_t *doc = json_loads(text, 0, NULL);
    configs_request r;
    an_problem p;
    snprintf(field, cap, "?");
    msg[0] = '\0';
    if (configs_request_parse(doc, params, 1, 0, &r, &p) == 0) {
        configs_search_in in = {7, 3, "strong", params, 1, o, &combo, 1, &ce, 0, NULL};
        int rc = fn(&in, &r, &p);
        snprintf(field, cap, "%.150s", rc == 0 ? "" : p.field);
        snprintf(msg, msgcap, "%.300s", rc == 0 ? "" : p.msg);
    }
    configs_request_free(&r);
    json_decref(doc);
    return field;
}

/* 0 with the search's ranks check passed, else the 400's field */
static const char *whole_field(const char *text, const configs_ops *o, char *field, size_t cap)
{
    char msg[400];
    return check_field(text, o, configs_check_whole, field, cap, msg, sizeof msg);
}

/* Core-hours T·x·8/3600 overflow at x = 1e308 (T ≈ 1): a search with
 * such a candidate is refused naming candidates.ranks (not answered with
 * null core-hours); one whose totals overflow (1e305 ranks for 1e9
 * epochs) names epochs; a candidate left out (1e-308 ranks, no whole
 * count) is not checked; near the data, searched. */
static void test_finite_candidates(void)
{
    char f[160], msg[400];
    check(!strcmp(check_field("{\"candidates\":{\"ranks\":{\"values\":[2,4,1e308]}}}", &ops,
                              configs_check_finite, f, sizeof f, msg, sizeof msg),
                  "candidates.ranks") &&
              strstr(msg, "not finite") && strstr(msg, "ranks=1e+308") &&
              strstr(msg, "core-hours"),
          "1e308: refused naming candidates.ranks: %s", msg);
    check(!strcmp(check_field("{\"candidates\":{\"ranks\":{\"values\":[2,4]}}}", &ops,
                              configs_check_finite, f, sizeof f, msg, sizeof msg),
                  ""),
          "2 and 4: searched (%s)", msg);
    check(!strcmp(check_field("{\"epochs\":1000000000,"
                              "\"candidates\":{\"ranks\":{\"values\":[1e305]}}}",
                              &ops, configs_check_finite, f, sizeof f, msg, sizeof msg),
                  "epochs"),
          "1e305 ranks for 1e9 epochs: the totals overflow, epochs named (%s)", f);
    check(!strcmp(check_field("{\"candidates\":{\"ranks\":{\"values\":[2,1e-308]}}}", &ops,
                              configs_check_finite, f, sizeof f, msg, sizeof msg),
                  ""),
          "1e-308 ranks, left out as no whole count, is not checked (%s: %s)", f, msg);
    check(!strcmp(whole_field("{\"candidates\":{\"ranks\":{\"values\":[1e-12]}}}", &ops, f,
                              sizeof f), "candidates.ranks"),
          "1e-12 ranks round to none: no whole count (%s)", f);
}

/* factor 1.5 from 2 to 32: 2, 3, 4.5, 6.75, 10.125, 15.1875, 22.78125
 * ranks: 2 and 3 are searched, the five others left out, counted and said
 * (ranks_not_whole, first among the answer's warnings, naming 4.5), and
 * never recommended; all fractional: refused naming candidates.ranks. A
 * range stepped by 0.1 reaches 3 as 3.0000000000000004: whole. With
 * data_parallel x/2 × model_parallel 2, 5 ranks are 2.5 groups: left out. */
static void test_whole_ranks(void)
{
    cost_eval ce = {.has_cost = 1, .cores_per_rank = 2, .price_per_core_hour = 0.5};
    json_t *out = search("{\"candidates\":{\"ranks\":{\"min\":2,\"max\":32,\"factor\":1.5}}}",
                         &ce);
    json_t *cands = json_object_get(out, "candidates");
    json_t *w = json_array_get(json_object_get(out, "warnings"), 0);
    check(json_integer_value(json_object_get(out, "searched")) == 2 &&
              json_array_size(cands) == 2 &&
              json_integer_value(json_object_get(out, "left_out")) == 5 &&
              json_number_value(json_object_get(json_array_get(cands, 1), "ranks")) == 3,
          "factor 1.5: 2 and 3 searched, 5 left out (%zu listed)", json_array_size(cands));
    check(!strcmp(json_string_value(json_object_get(w, "code")) ?: "", "ranks_not_whole") &&
              json_integer_value(json_object_get(w, "candidates")) == 5 &&
              json_number_value(json_object_get(json_object_get(w, "point"), "ranks")) == 4.5,
          "ranks_not_whole first: 5 candidates, the first at 4.5");
    double rec = json_number_value(
        json_object_get(json_object_get(json_object_get(out, "recommended"), "point"), "ranks"));
    check(rec == 2 || rec == 3, "a whole recommendation: %g", rec);
    json_decref(out);
    char f[160];
    check(!strcmp(whole_field("{\"candidates\":{\"ranks\":{\"min\":2,\"max\":32,\"factor\":1.5}}}",
                              &ops, f, sizeof f), ""),
          "some whole: searched");
    check(!strcmp(whole_field("{\"candidates\":{\"ranks\":{\"values\":[2.5,4.5]}}}", &ops, f,
                              sizeof f), "candidates.ranks"),
          "none whole: refused naming candidates.ranks (%s)", f);
    out = search("{\"candidates\":{\"ranks\":{\"min\":0.1,\"max\":3,\"step\":0.1}}}", &ce);
    check(json_integer_value(json_object_get(out, "searched")) == 3 &&
              json_integer_value(json_object_get(out, "left_out")) == 27,
          "0.1 to 3 by 0.1: 1, 2 and 3 (3.0000000000000004) searched: %lld",
          (long long)json_integer_value(json_object_get(out, "searched")));
    json_decref(out);
    out = search_ops("{\"candidates\":{\"ranks\":{\"values\":[4,5,6]}}}", &ce, &ops_halves);
    w = warning_of(json_object_get(out, "warnings"), "ranks_not_whole");
    check(json_integer_value(json_object_get(out, "left_out")) == 1 && w &&
              strstr(json_string_value(json_object_get(w, "message")) ?: "",
                     "data_parallel 2.5 × model_parallel 2 = 5 ranks"),
          "5 ranks as 2.5 × 2: left out, said: %s",
          json_string_value(json_object_get(w, "message")));
    json_decref(out);
    check(!strcmp(whole_field("{\"candidates\":{\"ranks\":{\"values\":[5]}}}", &ops_halves, f,
                              sizeof f), "candidates.ranks"),
          "5 alone as 2.5 × 2: refused");
    /* a candidate without a rank count is kept (no_ranks), not left out */
    out = search_ops("{\"candidates\":{\"ranks\":{\"values\":[1,2,3]}}}", &ce, &ops_minus_two);
    check(json_integer_value(json_object_get(out, "searched")) == 3 &&
              json_integer_value(json_object_get(out, "left_out")) == 0,
          "no rank count at 1 and 2 (x - 2 <= 0): kept, never feasible");
    json_decref(out);
}

/* max 1e300 by step 1: the count is said short */
static void test_short_numbers(void)
{
    json_t *doc = json_loads("{\"candidates\":{\"ranks\":{\"min\":1,\"max\":1e300}}}", 0, NULL);
    configs_request r;
    an_problem p;
    int rc = configs_request_parse(doc, params, 1, 1, &r, &p);
    check(rc < 0 && strstr(p.msg, "1e+300") && strlen(p.msg) < 100, "1e300 values: %s", p.msg);
    configs_request_free(&r);
    json_decref(doc);
}

int main(void)
{
    test_request();
    test_search();
    test_no_ranks();
    test_efficiency_model_without_value();
    test_formula_without_value();
    test_upper_end();
    test_whole_ranks();
    test_short_numbers();
    test_finite_candidates();
    return check_summary();
}
