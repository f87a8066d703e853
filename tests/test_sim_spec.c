/*
 * test_sim_spec.c — a simulation experiment's creation document
 * (analysis/sim_spec.h) without a server or a database: the spec kept, the
 * overhead fitted by the step-graph reader, each refusal naming its member;
 * and a run request's event count and the member a refusal for too many
 * events names (analysis/sim_request.h), by hand.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "analysis/sim_request.h"
#include "analysis/sim_spec.h"
#include "tests/check.h"

static int parse(const char *text, const char **name, json_t **spec, char *field, size_t cap)
{
    json_t *doc = json_loads(text, 0, NULL);
    an_problem p;
    int rc = sim_spec_parse(doc, name, spec, &p);
    snprintf(field, cap, "%.60s", rc ? p.field : "");
    if (rc == 0 && strcmp(*name, "r"))
        rc = 1;
    json_decref(doc);
    return rc;
}

/* The request text over the defaults; its event count per operation and
 * the member that weighs most. */
static const char *heaviest(const char *text, double *events)
{
    json_t *doc = json_loads(text, 0, NULL);
    api_sim_request r;
    api_sim_request_default(&r);
    char field[64], msg[256];
    int rc = api_sim_request_parse(doc, &r, field, sizeof field, msg, sizeof msg);
    json_decref(doc);
    check(rc == 0, "%s parsed: %s %s", text, rc ? field : "", rc ? msg : "");
    *events = api_sim_request_events_of(&r, 1);
    return rc ? "" : api_sim_request_heaviest(&r);
}

/* Events = ops x sum over W of W N_W x servers x replications x (1 + what-ifs).
 * The member named is the one whose reduction to its least (1 step, W = 1,
 * 1 replication, one M, no what-if) divides that most. */
static void test_heaviest(void)
{
    double ev;
    /* sum W = 255 over 1..128 in powers of 2: 1e5 x 255 x 100; steps divide by
     * 1e5, workers by 255, replications by 100 */
    const char *h = heaviest("{\"bandwidth\":\"1Gbit\",\"steps\":100000,"
                             "\"workers\":[1,2,4,8,16,32,64,128],\"replications\":100}", &ev);
    check(ev == 1e5 * 255 * 100 && !strcmp(h, "steps"), "steps weigh most: %g %s", ev, h);
    /* 1..1024: sum W = 524800 against 1000 steps */
    h = heaviest("{\"bandwidth\":\"1Gbit\",\"steps\":1000,\"workers\":1024,"
                 "\"replications\":100}", &ev);
    check(ev == 1000.0 * 524800 * 100 && !strcmp(h, "workers"), "workers weigh most: %g %s", ev,
          h);
    /* 2 steps on W = 1, 2: sum W N = 6; replications 100 divide by 100,
     * steps by 2, workers by 3 */
    h = heaviest("{\"bandwidth\":\"1Gbit\",\"steps\":2,\"workers\":2,"
                 "\"replications\":100}", &ev);
    check(ev == 6 * 100 && !strcmp(h, "replications"), "replications weigh most: %g %s", ev, h);
    /* total_steps 8 on W = 1, 2, 4: N = 8, 4, 2 and sum W N = 24, against 1 x 1 x 1
     * with one total step: the member named is total_steps */
    h = heaviest("{\"bandwidth\":\"1Gbit\",\"total_steps\":8,\"workers\":[1,2,4],"
                 "\"replications\":1}", &ev);
    check(ev == 24 && !strcmp(h, "total_steps"), "total_steps weigh most: %g %s", ev, h);
    /* 8 what-ifs (x9) and 9 servers (x9 against one): servers come first on the tie,
     * 1 step and W = 1 */
    h = heaviest("{\"bandwidth\":\"1Gbit\",\"steps\":1,\"workers\":1,\"replications\":1,"
                 "\"servers\":[1,2,3,4,5,6,7,8,9],\"what_if\":[{},{},{},{},{},{},{},{}]}",
                 &ev);
    check(ev == 81 && !strcmp(h, "servers"), "servers before what_if on a tie: %g %s", ev, h);
    h = heaviest("{\"bandwidth\":\"1Gbit\",\"steps\":1,\"workers\":1,\"replications\":1,"
                 "\"servers\":[1,2],\"what_if\":[{},{},{}]}", &ev);
    check(ev == 8 && !strcmp(h, "what_if"), "what_if weighs most: %g %s", ev, h);
}

int main(void)
{
    const char *name;
    json_t *spec;
    char field[64];
    check(parse("{\"name\":\"r\"}", &name, &spec, field, sizeof field) == 0 &&
              json_real_value(json_object_get(spec, "batch_size")) == 0 &&
              !json_object_get(spec, "overhead"),
          "a name alone: batch size 0 (the graph's)");
    json_decref(spec);
    check(parse("{\"name\":\"r\",\"batch_size\":32,\"overhead\":{\"alpha\":2e-9,\"beta\":5e-5}}",
                &name, &spec, field, sizeof field) == 0 &&
              json_real_value(json_object_get(spec, "batch_size")) == 32 &&
              json_real_value(json_object_get(json_object_get(spec, "overhead"), "alpha")) == 2e-9 &&
              json_real_value(json_object_get(json_object_get(spec, "overhead"), "beta")) == 5e-5,
          "batch size and overhead kept");
    json_decref(spec);
    struct {
        const char *doc, *field;
    } bad[] = {{"{\"name\":\"r\",\"size\":1}", "size"},
               {"{}", "name"},
               {"{\"name\":\"\"}", "name"},
               {"{\"name\":\"r\",\"batch_size\":-1}", "batch_size"},
               {"{\"name\":\"r\",\"overhead\":{\"alpha\":-1,\"beta\":1}}", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = parse(bad[i].doc, &name, &spec, field, sizeof field);
        check(rc == -1 && !spec &&
                  (bad[i].field ? !strcmp(field, bad[i].field) : !strncmp(field, "overhead", 8)),
              "%s refused naming %s", bad[i].doc, field);
    }
    test_heaviest();
    return check_summary();
}
