/*
 * test_bottlenecks.c — the bottleneck ranking (analysis/bottlenecks.h) and
 * the per-callpath coded warnings and their tally
 * (analysis/callpath_warnings.h), on models fitted here: no server, no
 * database. A falling series that Extra-P's modeler fits with a falling log
 * term (725, 505, 319, 179, 82 at x = 20..60: 2512 - 412·log2(x), -333 at
 * x = 120) must carry negative_prediction and be ranked after the
 * callpaths whose predictions are positive, whatever its growth.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/callpath_warnings.h"
#include "modeling/model_json.h"
#include "tests/check.h"
#include "tests/warning_code.h"

static const char *const names[] = {"x"};
static const double xs[5] = {20, 30, 40, 50, 60};

/* A callpath whose model Extra-P's modeler fits to values at xs. */
static void make_callpath(ad_callpath *c, const char *name, const char *category,
                          const double *values)
{
    memset(c, 0, sizeof *c);
    c->name = (char *)name;
    snprintf(c->category, sizeof c->category, "%s", category);
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_EXTRAP;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    pmnf_data d = {1, 5, xs, values};
    char err[200];
    c->model.present = mod && pmnf_fit(mod, &d, &c->model.model, err, sizeof err) == 0;
    check(c->model.present, "%s fitted", name);
    pmnf_modeler_free(mod);
    api_model_growth(&c->model.model.f, &c->growth_poly, &c->growth_log);
    c->now = values[4];
}

static void test_ranking(void)
{
    static const double grows[5] = {200, 300, 400, 500, 600};  /* 10 x */
    static const double falls[5] = {725, 505, 319, 179, 82};   /* docs/modeling.md */
    static const double flat[5] = {100, 100, 100, 100, 100};
    static const double host[5] = {900, 1350, 1800, 2250, 2700};
    ad_callpath v[5];
    make_callpath(&v[0], "allreduce", "comm", grows);
    make_callpath(&v[1], "backward", "comp", falls);
    make_callpath(&v[2], "copy", "mem", flat);
    make_callpath(&v[3], "cudaLaunch", "host", host);
    memset(&v[4], 0, sizeof v[4]);
    v[4].name = "rare";
    snprintf(v[4].category, sizeof v[4].category, "comp");
    snprintf(v[4].model.reason, sizeof v[4].model.reason, "too few points");
    v[4].now = NAN;
    ad_callpaths cps = {5, v, 5};
    check(v[1].growth_log > v[2].growth_log, "the falling series grows by its log term: %g",
          v[1].growth_log);

    double at[1] = {120};
    double epoch_at = 1200 + 100 - 333, epoch_now = 600 + 82 + 100;
    bn_query q = {NULL, at, names, epoch_at, epoch_now};
    bn_ranking r;
    check(bn_rank(&cps, &q, &r) == 0, "ranked");
    check(r.n == 3 && r.unmodeled == 1, "3 ranked (host left out), 1 unmodeled: %d %d", r.n,
          r.unmodeled);
    if (r.n == 3) {
        check(!strcmp(r.v[0].c->name, "allreduce") && !strcmp(r.v[1].c->name, "copy") &&
                  !strcmp(r.v[2].c->name, "backward"),
              "growing, flat, then the negative prediction last: %s %s %s", r.v[0].c->name,
              r.v[1].c->name, r.v[2].c->name);
        const bn_item *neg = &r.v[2], *top = &r.v[0];
        check(neg->negative && neg->value < 0, "negative at 120: %g", neg->value);
        check(fabs(neg->value - (-333)) <= 5, "-333 as docs/modeling.md says: %g", neg->value);
        check(warning_has_code(neg->warnings, "negative_prediction"),
              "it carries negative_prediction");
        check(!top->negative && !warning_has_code(top->warnings, "negative_prediction"),
              "the growing one does not");
        check(fabs(top->value - 1200) <= 1e-6 * 1200, "10·x at 120: %g", top->value);
        check(fabs(top->share_pct - 100 * top->value / epoch_at) <= 1e-9 &&
                  fabs(top->share_now_pct - 100 * 600 / epoch_now) <= 1e-9,
              "shares of the epoch at the point and now");
        check(!warning_has_code(top->warnings, "extrapolation_far"),
              "120 is 2x the range, not beyond 4x: no extrapolation_far");
        json_t *s = bn_warnings_summary(&r);
        int with = 0;
        for (int i = 0; i < r.n; i++)
            with += json_array_size(r.v[i].warnings) > 0;
        check(s && !strcmp(json_string_value(json_object_get(s, "code")) ?: "",
                           CPW_CODE) &&
                  json_integer_value(json_object_get(s, "count")) == with &&
                  json_integer_value(json_object_get(s, "of")) == 3 &&
                  warning_has_code(neg->warnings, "negative_prediction"),
              "the summary counts the items with warnings");
        int listed = 0;
        json_t *codes = json_object_get(s, "codes");
        for (size_t i = 0; i < json_array_size(codes); i++)
            listed |= !strcmp(json_string_value(json_array_get(codes, i)), "negative_prediction");
        check(listed, "the summary names negative_prediction");
        json_decref(s);
    }
    bn_ranking_free(&r);

    /* inside the measured range nothing is negative: growth order alone */
    at[0] = 40;
    q.epoch_at = 400 + 319 + 100;
    check(bn_rank(&cps, &q, &r) == 0 && r.n == 3, "ranked at 40");
    if (r.n == 3) {
        check(!r.v[1].negative && !strcmp(r.v[1].c->name, "backward"),
              "at 40 the falling series ranks by its growth: %s", r.v[1].c->name);
        check(!warning_has_code(r.v[1].warnings, "negative_prediction"),
              "no negative_prediction at 40");
    }
    bn_ranking_free(&r);

    /* beyond 4x the measured range: extrapolation_far on every item */
    at[0] = 300;
    q.epoch_at = 3000 + 100;
    check(bn_rank(&cps, &q, &r) == 0 && r.n == 3, "ranked at 300");
    for (int i = 0; i < r.n; i++)
        check(warning_has_code(r.v[i].warnings, "extrapolation_far"),
              "%s at 300: extrapolation_far", r.v[i].c->name);
    bn_ranking_free(&r);

    /* one category */
    q.category = "host";
    check(bn_rank(&cps, &q, &r) == 0 && r.n == 1 && !strcmp(r.v[0].c->name, "cudaLaunch") &&
              r.unmodeled == 0,
          "category=host: only the host callpath");
    bn_ranking_free(&r);
    check(bn_category_known("comm") && bn_category_known("host") && !bn_category_known("gpu") &&
              !bn_category_known(NULL),
          "categories");
}

static void test_tally(void)
{
    cpw_tally t = {0};
    json_t *none = json_array(), *one = json_array(), *two = json_array();
    json_array_append_new(one, json_pack("{s:s, s:s}", "code", "poor_fit", "message", "m"));
    json_array_append_new(two, json_pack("{s:s, s:s}", "code", "poor_fit", "message", "m"));
    json_array_append_new(two, json_pack("{s:s, s:s}", "code", "few_points", "message", "m"));
    check(cpw_tally_add(&t, none) == 0 && cpw_summary_json(&t, 1, "items") == NULL,
          "no warnings: no summary");
    cpw_tally_add(&t, one);
    cpw_tally_add(&t, two);
    json_t *s = cpw_summary_json(&t, 3, "items");
    check(s && json_integer_value(json_object_get(s, "count")) == 2 &&
              json_array_size(json_object_get(s, "codes")) == 2,
          "2 of 3 items, 2 codes once each");
    check(s && strstr(json_string_value(json_object_get(s, "message")) ?: "", "2 of 3 items"),
          "the message says how many: %s", json_string_value(json_object_get(s, "message")));
    json_decref(s);
    json_decref(none);
    json_decref(one);
    json_decref(two);
    cpw_tally_free(&t);
}

/* A ranked callpath whose model overflows at the point: refused naming
 * the query's field and the callpath; finite values pass. */
static void test_finite(void)
{
    ad_callpath c[2];
    memset(c, 0, sizeof c);
    c[0].name = (char *)"gemm";
    c[1].name = (char *)"allreduce";
    bn_item v[2];
    memset(v, 0, sizeof v);
    v[0].c = &c[0];
    v[0].value = 100;
    v[1].c = &c[1];
    v[1].value = 3e300;
    bn_ranking r = {.v = v, .n = 2};
    double at[1] = {1e300};
    an_problem p;
    check(bn_check_finite(&r, names, 1, at, "at", &p) == 0, "finite values: answered");
    v[1].value = INFINITY;
    check(bn_check_finite(&r, names, 1, at, "at", &p) < 0 && p.status == 400 &&
              !strcmp(p.field, "at") && strstr(p.msg, "callpath allreduce gives inf") &&
              strstr(p.msg, "x=1e+300"),
          "allreduce overflows: 400 naming at: %s", p.msg);
}

int main(void)
{
    test_ranking();
    test_tally();
    test_finite();
    return check_summary();
}
