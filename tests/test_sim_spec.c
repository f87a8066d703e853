/*
 * test_sim_spec.c — a simulation experiment's creation document
 * (analysis/sim_spec.h) without a server or a database: the spec kept, the
 * overhead fitted by the step-graph reader, each refusal naming its member.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

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
    return check_summary();
}
