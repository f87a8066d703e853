/*
 * sim_spec.h — the creation document of a simulation experiment (POST
 * /v1/simulations): {"name", "batch_size", "overhead"}, checked, and the
 * spec the store keeps ({"batch_size": samples per step and worker (0: the
 * graph's), "overhead": {"alpha", "beta", "pairs"}}, the overhead checked
 * and fitted by the step-graph reader, ingest/simgraph.h). The service's
 * handler (api/simulations.c) stores it. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_SIM_SPEC_H
#define PERFCAST_ANALYSIS_SIM_SPEC_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/problem.h"

#define SIM_SPEC_MAX_NAME 200

/* The name (borrowed from body) and the spec to keep (a new reference).
 * 0, or -1 with p (400 naming the member at fault). */
int sim_spec_parse(const json_t *body, const char **name, json_t **spec, an_problem *p);

#endif
