/*
 * test_plan.c — a sweep definition against an experiment's uploads
 * (analysis/plan.h) and the plan's runs in order (sweep/sweep_plan.h's
 * sweep_runs_next, sweep_def_runs_check), without a server or a database:
 * the names checked against the experiment, each run's status, the page of
 * commands, and the price of the missing runs by a known epoch time.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plan.h"
#include "tests/check.h"

static const char *const names[2] = {"ranks", "threads"};

static sweep_def parse(const char *text)
{
    sweep_def d;
    json_t *doc = json_loads(text, 0, NULL);
    char field[200], err[400];
    int rc = sweep_def_parse(doc, &d, field, sizeof field, err, sizeof err);
    check(rc == 0, "definition parsed: %s %s", field, err);
    json_decref(doc);
    return d;
}

/* T = 10 / ranks + threads s per epoch, ranks = ranks, 2 cores per rank */
static int calls;
static int epoch(void *ctx, const double *point, const char *levels, const char *const *values,
                 int nf, double t[3], double *ranks, double *cores)
{
    (void)ctx;
    (void)values;
    calls++;
    if (nf && !strcmp(levels, "[\"gpu\"]"))
        return -1; /* no models at this combination */
    t[0] = 10 / point[0] + point[1];
    t[1] = 0.5 * t[0];
    t[2] = 2 * t[0];
    *ranks = point[0];
    *cores = 2;
    return 0;
}

static void test_walk(void)
{
    sweep_def d = parse("{\"parameters\":{\"ranks\":[1,2,4],\"threads\":[1,2]},"
                        "\"legal\":\"ranks * threads <= 4\",\"repetitions\":2,\"command\":\"x\"}");
    long legal;
    char msg[200];
    check(sweep_def_runs_check(&d, &legal, msg, sizeof msg) == 0 && legal == 5,
          "5 legal points of 6");
    sweep_runs w;
    sweep_runs_start(&w);
    int n = 0, points = 0, ordered = 1;
    double last = 0;
    while (sweep_runs_next(&d, &w)) {
        double key = d.vars[0].values[w.idx[0]] * 10 + d.vars[1].values[w.idx[1]];
        ordered &= w.rep == 1 ? key > last : key == last;
        points += w.rep == 1;
        last = key;
        check(d.vars[0].values[w.idx[0]] * d.vars[1].values[w.idx[1]] <= 4, "legal only");
        n++;
    }
    check(n == 10 && points == 5 && ordered, "10 runs: 5 points x 2 repetitions, in order");
    sweep_def_free(&d);
    json_t *vals = json_array();
    for (int v = 1; v <= 1000; v++)
        json_array_append_new(vals, json_integer(v));
    json_t *doc = json_pack("{s:{s:o}, s:i, s:s}", "parameters", "ranks", vals, "repetitions",
                            101, "command", "x");
    char *text = json_dumps(doc, JSON_COMPACT);
    d = parse(text);
    free(text);
    json_decref(doc);
    check(sweep_def_runs_check(&d, &legal, msg, sizeof msg) < 0 &&
              !strcmp(msg, "1000 legal points × 101 repetitions is more than 100000 runs"),
          "the cap: %s", msg);
    sweep_def_free(&d);
}

static void test_match(void)
{
    json_t *spec = json_loads("{\"factors\":{\"dataloader\":[\"cpu\",\"dali\"]}}", 0, NULL);
    struct {
        const char *def, *field;
    } bad[] = {
        {"{\"parameters\":{\"ranks\":[1],\"nodes\":[1]},\"factors\":{\"dataloader\":[\"cpu\"]},"
         "\"command\":\"x\"}",
         "parameters.nodes"},
        {"{\"parameters\":{\"ranks\":[1]},\"factors\":{\"dataloader\":[\"cpu\"]},\"command\":\"x\"}",
         "parameters"},
        {"{\"parameters\":{\"ranks\":[1],\"threads\":[1]},\"command\":\"x\"}", "factors"},
        {"{\"parameters\":{\"ranks\":[1],\"threads\":[1]},\"factors\":{\"dataloader\":[\"gpu\"]},"
         "\"command\":\"x\"}",
         "factors.dataloader[0]"},
        {"{\"parameters\":{\"ranks\":[1],\"threads\":[1]},\"factors\":{\"precision\":[\"fp16\"]},"
         "\"command\":\"x\"}",
         "factors.precision"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sweep_def d = parse(bad[i].def);
        plan_map map;
        an_problem p;
        int rc = plan_match(&d, names, 2, spec, &map, &p);
        check(rc < 0 && p.status == 400 && !strcmp(p.field, bad[i].field),
              "refused naming %s: %s (%s)", bad[i].field, p.field, p.msg);
        sweep_def_free(&d);
    }
    /* threads as a constant; the factor varied */
    sweep_def d = parse("{\"parameters\":{\"ranks\":[2,4]},\"constants\":{\"threads\":2},"
                        "\"factors\":{\"dataloader\":[\"cpu\",\"dali\"]},\"command\":\"x\"}");
    plan_map map;
    an_problem p;
    check(plan_match(&d, names, 2, spec, &map, &p) == 0 &&
              map.param[0] == 0 && map.param[1] == -1 && map.nfactors == 1 && map.factor[0] == 1,
          "ranks varied, threads the first constant, dataloader the second var");
    sweep_def_free(&d);
    json_decref(spec);
}

/* A legal point where the experiment's training set-up gives no ranks
 * (ranks = -4 or 0 with data_parallel "ranks") is a run no upload could
 * store: the plan is refused naming the parameter, not priced at 0
 * core-hours with its command listed. Excluded by "legal", it plans. */
static void test_runnable(void)
{
    json_t *spec = json_loads("{\"training\":{\"train_samples\":51200,\"validation_samples\":0,"
                              "\"batch_size\":256,\"data_parallel\":\"ranks\"}}",
                              0, NULL);
    sweep_def d = parse("{\"parameters\":{\"ranks\":[2,-4,0],\"threads\":[1]},"
                        "\"command\":\"srun -n {ranks}\"}");
    plan_map map;
    an_problem p;
    check(plan_match(&d, names, 2, spec, &map, &p) == 0, "matched");
    int rc = plan_check_runnable(&d, names, 2, &map, spec, &p);
    check(rc < 0 && p.status == 400 && !strcmp(p.field, "parameters.ranks") &&
              strstr(p.msg, "training.data_parallel") && strstr(p.msg, "ranks=-4"),
          "ranks -4 refused: %s %s", p.field, p.msg);
    sweep_def_free(&d);
    d = parse("{\"parameters\":{\"ranks\":[2,-4,0],\"threads\":[1]},\"legal\":\"ranks > 0\","
              "\"command\":\"srun -n {ranks}\"}");
    check(plan_match(&d, names, 2, spec, &map, &p) == 0 &&
              plan_check_runnable(&d, names, 2, &map, spec, &p) == 0,
          "excluded by legal: planned");
    sweep_def_free(&d);
    /* a parameter that is not the ranks may be 0 or negative, as Extra-P's */
    d = parse("{\"parameters\":{\"ranks\":[2],\"threads\":[-1,0]},\"command\":\"x\"}");
    check(plan_match(&d, names, 2, spec, &map, &p) == 0 &&
              plan_check_runnable(&d, names, 2, &map, spec, &p) == 0,
          "threads <= 0 planned");
    sweep_def_free(&d);
    json_decref(spec);
    /* without a training set-up nothing to check */
    spec = json_object();
    d = parse("{\"parameters\":{\"ranks\":[-4],\"threads\":[1]},\"command\":\"x\"}");
    check(plan_match(&d, names, 2, spec, &map, &p) == 0 &&
              plan_check_runnable(&d, names, 2, &map, spec, &p) == 0,
          "no training set-up");
    sweep_def_free(&d);
    json_decref(spec);
}

/* The definition alone (perfcast sweep plan FILE): "ranks", varied or a
 * constant, is the rank count; a legal point where it is <= 0 is refused
 * with the service's field and rule; left out by "legal", or without
 * "ranks", it plans. */
static void test_ranks_alone(void)
{
    static const struct {
        const char *def;
        int refused;
        const char *field, *at;
    } cases[] = {
        {"{\"parameters\":{\"threads\":[1],\"ranks\":[2,-4,0]},\"command\":\"x\"}", 1,
         "parameters.ranks", "at ranks=-4 it is not"},
        {"{\"parameters\":{\"ranks\":[0.5,0]},\"command\":\"x\"}", 1, "parameters.ranks",
         "at ranks=0 it is not"},
        {"{\"parameters\":{\"t\":[1]},\"constants\":{\"ranks\":-2},\"command\":\"x\"}", 1,
         "parameters", "at ranks=-2 it is not"},
        {"{\"parameters\":{\"ranks\":[2,-4,0]},\"legal\":\"ranks >= 1\",\"command\":\"x\"}", 0,
         NULL, NULL},
        {"{\"parameters\":{\"ranks\":[0.5],\"t\":[-1,0]},\"command\":\"x\"}", 0, NULL, NULL},
        {"{\"parameters\":{\"gpus\":[-1,0]},\"command\":\"x\"}", 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sweep_def d = parse(cases[i].def);
        an_problem p = {0};
        int rc = plan_check_ranks(&d, &p);
        if (cases[i].refused)
            check(rc < 0 && p.status == 400 && !strcmp(p.field, cases[i].field) &&
                      strstr(p.msg, "training.data_parallel: must be > 0 at every coordinate") &&
                      strstr(p.msg, cases[i].at) && strstr(p.msg, "rank count"),
                  "case %zu refused naming %s: %s %s", i, cases[i].field, p.field, p.msg);
        else
            check(rc == 0, "case %zu planned: %s", i, p.msg);
        sweep_def_free(&d);
    }
}

static void test_answer(void)
{
    sweep_def d = parse("{\"parameters\":{\"ranks\":[1,2],\"threads\":[1,2]},\"repetitions\":2,"
                        "\"epochs_per_run\":0.5,\"command\":\"run {ranks} {threads} {repetition}\"}");
    json_t *spec = json_object();
    plan_map map;
    an_problem p;
    plan_match(&d, names, 2, spec, &map, &p);
    /* stored: (1,1) rep 1 and 2 measured, (2,2) rep 1 failed */
    double p11[2] = {1, 1}, p22[2] = {2, 2};
    store_run runs[3] = {{p11, 1, 1, 0, "[]"}, {p11, 2, 1, 0, "[]"}, {p22, 1, 0, 1, "[]"}};
    plan_pricing pr = {1, 1, 4, "", epoch, NULL};
    calls = 0;
    json_t *doc = plan_answer(&d, 9, names, 2, &map, runs, 3, 0, 3, &pr);
    check(json_integer_value(json_object_get(doc, "measured")) == 2 &&
              json_integer_value(json_object_get(doc, "failed")) == 1 &&
              json_integer_value(json_object_get(doc, "missing")) == 5 &&
              json_integer_value(json_object_get(doc, "runs")) == 8 &&
              json_is_false(json_object_get(doc, "complete")),
          "8 runs: 2 measured, 1 failed, 5 missing");
    json_t *items = json_object_get(doc, "items");
    json_t *third = json_array_get(items, 2);
    check(json_array_size(items) == 3 &&
              !strcmp(json_string_value(json_object_get(third, "status")) ?: "", "missing") &&
              !strcmp(json_string_value(json_object_get(third, "command")) ?: "", "run 1 2 1") &&
              json_array_size(json_object_get(doc, "commands")) == 1 &&
              json_integer_value(json_object_get(doc, "next_offset")) == 3,
          "a page of 3: the missing run's command; next_offset 3");
    /* price: per missing or failed run 0.5 · T · ranks · 2 / 3600; (1,2) x2, (2,1) x2, (2,2) x2 */
    double want = 0.5 * 2 / 3600 * (2 * (10.0 + 2) * 1 + 2 * (5.0 + 1) * 2 + 2 * (5.0 + 2) * 2);
    json_t *mc = json_object_get(doc, "missing_cost");
    check(check_close(json_number_value(json_object_get(json_object_get(mc, "core_hours"), "value")),
                      want, 1e-12, 0) &&
              json_integer_value(json_object_get(mc, "runs")) == 6 &&
              json_integer_value(json_object_get(mc, "model_set")) == 4 && calls == 6,
          "the missing runs' core-hours: %g", want);
    json_decref(doc);
    /* the last page: nothing further */
    doc = plan_answer(&d, 9, names, 2, &map, runs, 3, 6, 3, &pr);
    check(json_array_size(json_object_get(doc, "items")) == 2 &&
              json_is_null(json_object_get(doc, "next_offset")),
          "the last page");
    json_decref(doc);
    /* no models: the reason instead of a price */
    plan_pricing none = {0, 0, 0, "no model set yet", epoch, NULL};
    doc = plan_answer(&d, 9, names, 2, &map, runs, 3, 0, 3, &none);
    mc = json_object_get(doc, "missing_cost");
    check(json_is_null(json_object_get(mc, "core_hours")) &&
              !strcmp(json_string_value(json_object_get(mc, "reason")) ?: "", "no model set yet"),
          "unpriced: the reason");
    json_decref(doc);
    json_decref(spec);
    sweep_def_free(&d);
}

int main(void)
{
    test_walk();
    test_match();
    test_runnable();
    test_ranks_alone();
    test_answer();
    return check_summary();
}
