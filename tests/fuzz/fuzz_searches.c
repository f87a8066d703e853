/*
 * fuzz_searches.c — libFuzzer target for the request documents of the
 * searches and plans (analysis/): a configuration search
 * (analysis/configurations.h), the advice (analysis/advice.h), a sweep
 * definition matched against an experiment's parameters and factors
 * (analysis/plan.h) and a simulation experiment's creation document
 * (analysis/sim_spec.h). An input that parses to an object goes to each. A
 * refusal must name a 4xx or 500 status and carry a terminated message
 * (400s naming their member); a success must give what its header
 * promises: candidate ranges within the caps, sorted distinct advice
 * values, a complete parameter map, a spec with its batch size. Any breach
 * aborts. Seeds: tests/fuzz/corpus/searches/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advice.h"
#include "analysis/configurations.h"
#include "analysis/plan.h"
#include "analysis/sim_spec.h"

static const char *const params[2] = {"ranks", "threads"};

static void check_problem(int rc, const an_problem *p)
{
    if (rc < 0 && ((p->status != 400 && p->status != 500) ||
                   !memchr(p->msg, '\0', sizeof p->msg) || !memchr(p->field, '\0', sizeof p->field) ||
                   (p->status == 400 && !p->field[0] && !p->msg[0])))
        abort();
}

static void configurations(const json_t *doc)
{
    configs_request r;
    an_problem p;
    int rc = configs_request_parse(doc, params, 2, 1, &r, &p);
    check_problem(rc, &p);
    if (rc == 0 && (cfg_grid_size(r.ranges, 2) > CONFIGS_MAX_CANDIDATES || r.epochs < 1))
        abort();
    for (int i = 0; rc == 0 && i < 2; i++)
        for (int k = 0; k < r.ranges[i].nvalues; k++)
            if (!(r.ranges[i].values[k] > 0))
                abort();
    configs_request_free(&r);
}

static void advice(const json_t *doc)
{
    double pts[3][2] = {{2, 1}, {4, 2}, {8, 1}};
    store_measurement_row rows[3];
    for (int i = 0; i < 3; i++)
        rows[i] = (store_measurement_row){.point = pts[i], .nparams = 2, .name = "epoch"};
    advice_request a;
    an_problem p;
    int rc = advice_request_parse(doc, params, 2, rows, 3, &a, &p);
    check_problem(rc, &p);
    for (int i = 0; rc == 0 && i < 2; i++) {
        if (a.nvalues[i] < 1 || a.nvalues[i] > ADVICE_MAX_VALUES || !(a.target[i] > 0))
            abort();
        for (int k = 1; k < a.nvalues[i]; k++)
            if (!(a.values[i][k - 1] < a.values[i][k]))
                abort();
    }
    advice_request_free(&a);
}

static void plan(const json_t *doc)
{
    sweep_def d;
    char field[200], err[400];
    if (sweep_def_parse(doc, &d, field, sizeof field, err, sizeof err) < 0)
        return;
    json_t *spec = json_pack("{s:{s:[s, s]}}", "factors", "dataloader", "cpu", "dali");
    plan_map map;
    an_problem p;
    int rc = plan_match(&d, params, 2, spec, &map, &p);
    check_problem(rc, &p);
    for (int i = 0; rc == 0 && i < 2; i++)
        if (map.param[i] >= d.nparams || map.param[i] < -d.nconst)
            abort();
    if (rc == 0 && (map.nfactors != 1 || map.factor[0] < d.nparams || map.factor[0] >= d.nvars))
        abort();
    json_decref(spec);
    sweep_def_free(&d);
}

static void simulation(const json_t *doc)
{
    const char *name;
    json_t *spec;
    an_problem p;
    int rc = sim_spec_parse(doc, &name, &spec, &p);
    check_problem(rc, &p);
    if (rc == 0 && (!name || !json_is_number(json_object_get(spec, "batch_size"))))
        abort();
    if (rc == 0)
        json_decref(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (json_is_object(doc)) {
        configurations(doc);
        advice(doc);
        plan(doc);
        simulation(doc);
    }
    json_decref(doc);
    return 0;
}
