/*
 * security_matrix.h — the isolation matrix's table for
 * tests/test_api_security.c: what the owning tenant's token gets for every
 * operation of api/openapi.json. A route added to the router needs a line
 * here, or the test fails. Header-only, included once.
 */
#ifndef PERFCAST_TESTS_SECURITY_MATRIX_H
#define PERFCAST_TESTS_SECURITY_MATRIX_H

/* What the owning tenant's token gets when its scope suffices: one entry per
 * operation of api/openapi.json. A query string and body where needed. */
static const struct {
    const char *method, *path, *query, *body;
    int status;
} expect[] = {
    {"GET", "/health", "", NULL, 200},
    {"GET", "/ready", "", NULL, 200},
    {"GET", "/metrics", "", NULL, 200},
    {"GET", "/openapi.json", "", NULL, 200},
    {"GET", "/v1/experiments", "", NULL, 200},
    {"POST", "/v1/experiments", "", "*create*", 201},
    {"GET", "/v1/experiments/{id}", "", NULL, 200},
    {"DELETE", "/v1/experiments/{id}", "", NULL, 204},
    {"POST", "/v1/experiments/{id}/profiles", "", "*profile*", 200},
    {"DELETE", "/v1/experiments/{id}/profiles/{pid}", "", NULL, 202},
    {"GET", "/v1/experiments/{id}/profiles", "", NULL, 200},
    {"GET", "/v1/jobs/{id}", "", NULL, 200},
    {"POST", "/v1/experiments/{id}/refit", "", NULL, 202},
    {"GET", "/v1/experiments/{id}/measurements", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/export", "?format=extra-p", NULL, 200},
    {"GET", "/v1/experiments/{id}/models", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/predict", "?ranks=16", NULL, 200},
    {"GET", "/v1/experiments/{id}/scaling", "?from=2&to=16&step=2", NULL, 200},
    {"GET", "/v1/experiments/{id}/bottlenecks", "?at=ranks:16", NULL, 200},
    {"GET", "/v1/experiments/{id}/cost", "?ranks=16", NULL, 200},
    {"POST", "/v1/experiments/{id}/configurations", "",
     "{\"candidates\":{\"ranks\":{\"values\":[2,4,8]}}}", 200},
    {"GET", "/v1/experiments/{id}/imbalance", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/speedups", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/accuracy", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/statistics", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/sensitivity", "", NULL, 200},
    {"POST", "/v1/experiments/{id}/sweep/plan", "",
     "{\"parameters\":{\"ranks\":[2,4]},\"command\":\"run {ranks}\"}", 200},
    {"POST", "/v1/experiments/{id}/advice", "",
     "{\"target\":{\"ranks\":64},\"budget_core_hours\":1}", 200},
    {"GET", "/v1/experiments/{id}/efficiency", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/iterations", "", NULL, 200},
    {"POST", "/v1/fit", "",
     "{\"parameters\":[\"ranks\"],\"points\":[{\"point\":[2],\"values\":[5]},{\"point\":[4],"
     "\"values\":[9]},{\"point\":[8],\"values\":[17]},{\"point\":[16],\"values\":[33]},"
     "{\"point\":[32],\"values\":[65]}]}",
     200},
    {"POST", "/v1/tokens", "", "{\"scope\":\"read\"}", 201},
    {"GET", "/v1/tokens", "", NULL, 200},
    {"DELETE", "/v1/tokens/{id}", "", NULL, 204},
    /* per-iteration analysis: {id} is the experiment's id, which names no overhead set, and
     * {profile} stays unfilled; a set body without profiles or set is a 400 */
    {"POST", "/v1/overhead-sets", "", "{\"name\":\"m\"}", 400},
    {"GET", "/v1/overhead-sets", "", NULL, 200},
    {"GET", "/v1/overhead-sets/{id}", "", NULL, 404},
    {"DELETE", "/v1/overhead-sets/{id}", "", NULL, 404},
    {"GET", "/v1/devices", "", NULL, 200},
    {"POST", "/v1/devices", "", "{\"name\":\"x\"}", 400},
    {"DELETE", "/v1/devices/{id}", "", NULL, 404},
    {"POST", "/v1/experiments/{id}/profiles/{profile}/iteration", "", NULL, 404},
    {"GET", "/v1/experiments/{id}/profiles/{profile}/breakdown", "", NULL, 404},
    {"GET", "/v1/experiments/{id}/analyses/{run}", "", NULL, 404},
    {"GET", "/v1/analyses/{run}", "", NULL, 404},
    {"GET", "/v1/experiments/{id}/searches/{run}", "", NULL, 404},
    {"POST", "/v1/experiments/{id}/iteration-model", "", "{\"profiles\":[],\"at\":4}", 400},
    {"POST", "/v1/simulations", "", "*simcreate*", 201},
    {"GET", "/v1/simulations", "", NULL, 200},
    {"GET", "/v1/simulations/{id}", "", NULL, 200},
    {"DELETE", "/v1/simulations/{id}", "", NULL, 204},
    {"POST", "/v1/simulations/{id}/profiles", "", "*simgraph*", 200},
    {"POST", "/v1/simulations/{id}/runs", "",
     "{\"workers\":2,\"bandwidth\":\"1Gbit\",\"steps\":2,\"replications\":1}", 201},
    {"GET", "/v1/simulations/{id}/runs/{run}", "", NULL, 200},
    {"GET", "/v1/simulations/{id}/runs", "", NULL, 200},
    {"GET", "/v1/experiments/{id}/model_sets", "", NULL, 200},
    /* base = head: the owner's answer is 400, the others' their 401/403/404 */
    {"GET", "/v1/experiments/{id}/regressions", "?base=1&head=1", NULL, 400},
    {"GET", "/v1/experiments/{id}/curve", "?level=application&name=epoch&values=16", NULL, 200},
};

#endif
