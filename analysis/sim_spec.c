/*
 * sim_spec.c — a simulation experiment's creation document (sim_spec.h).
 */
#include "analysis/sim_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/simgraph.h"

int sim_spec_parse(const json_t *body, const char **name, json_t **spec, an_problem *p)
{
    const char *k;
    json_t *v;
    *spec = NULL;
    json_object_foreach((json_t *)body, k, v)
    {
        if (strcmp(k, "name") && strcmp(k, "batch_size") && strcmp(k, "overhead"))
            return an_problem_set(p, 400, k,
                          "unknown member (name, batch_size, overhead)");
    }
    json_t *n = json_object_get(body, "name");
    if (!json_is_string(n) || !json_string_length(n) ||
        json_string_length(n) > SIM_SPEC_MAX_NAME ||
        strlen(json_string_value(n)) != json_string_length(n))
        return an_problem_set(p, 400, "name", "a name of 1..%d bytes is required",
                      SIM_SPEC_MAX_NAME);
    *name = json_string_value(n);
    json_t *b = json_object_get(body, "batch_size");
    if (b && (!json_is_number(b) || !(json_number_value(b) >= 0) ||
              !isfinite(json_number_value(b))))
        return an_problem_set(p, 400, "batch_size",
                      "batch_size must be a number >= 0 (samples per step and worker)");
    *spec = json_pack("{s:f}", "batch_size", b ? json_number_value(b) : 0.0);
    json_t *o = json_object_get(body, "overhead");
    if (o) {
        /* the step-graph reader checks overhead: hand it a minimal graph */
        json_t *g = json_pack("{s:O, s:[{s:[{s:s, s:s, s:f}]}]}", "overhead", o, "steps", "ops",
                              "id", "x", "resource", "worker", "duration", 1.0);
        char *text = json_dumps(g, JSON_COMPACT);
        json_decref(g);
        simgraph_doc d;
        sim_error e;
        memset(&e, 0, sizeof e);
        int rc = text ? simgraph_read_json(text, strlen(text), &d, &e) : -1;
        free(text);
        if (rc) {
            json_decref(*spec);
            *spec = NULL;
            return an_problem_set(p, 400, e.field, "%s", e.msg);
        }
        json_object_set_new(*spec, "overhead", json_pack("{s:f, s:f, s:i}", "alpha", d.alpha,
                                                         "beta", d.beta, "pairs", d.npairs));
        simgraph_doc_free(&d);
    }
    return 0;
}
