/*
 * test_experiment_doc.c — an experiment's creation document
 * (analysis/experiment_doc.h), without a server: a set-up normalized with
 * its defaults, and each fault answered 400 naming its field, among them
 * the ones only the sample coordinates reveal (a degree never > 0, a set-up
 * with no training step anywhere, a cost formula never finite).
 */
#include <string.h>

#include "analysis/experiment_doc.h"
#include "tests/check.h"

static int validate(const char *text, experiment_doc *d, an_problem *p)
{
    json_t *doc = json_loads(text, 0, NULL);
    check(doc != NULL, "test document parses: %s", text);
    memset(d, 0, sizeof *d);
    int rc = doc ? experiment_doc_validate(doc, d, p) : -1;
    json_decref(doc);
    return rc;
}

static void expect(const char *text, const char *field, const char *part)
{
    experiment_doc d;
    an_problem p = {0};
    int rc = validate(text, &d, &p);
    check(rc < 0 && p.status == 400 && !strcmp(p.field, field) && strstr(p.msg, part),
          "%s: want 400 %s \"%s\", got %d %s \"%s\"", text, field, part, p.status, p.field,
          p.msg);
    experiment_doc_free(&d);
}

#define TR "\"training\":{\"train_samples\":50000,\"batch_size\":64,\"data_parallel\":\"ranks\"}"

int main(void)
{
    experiment_doc d;
    an_problem p;
    check(validate("{\"name\":\"resnet\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR
                   ",\"cost\":{\"cores_per_rank\":4,\"price_per_core_hour\":0.1}}",
                   &d, &p) == 0,
          "a valid document");
    json_t *tr = json_object_get(d.spec, "training");
    check(d.nparams == 1 && !strcmp(d.parameters[0], "ranks") && !strcmp(d.scaling, "weak") &&
              json_integer_value(json_object_get(tr, "validation_samples")) == 0 &&
              !strcmp(json_string_value(json_object_get(tr, "model_parallel")), "1") &&
              json_integer_value(json_object_get(tr, "warmup_steps")) == 0 &&
              !strcmp(json_string_value(json_object_get(d.spec, "modeler")), "robust") &&
              json_number_value(json_object_get(json_object_get(d.spec, "cost"),
                                                "cores_per_rank")) == 4,
          "normalized: defaults filled, the robust modeler named");
    json_t *v = json_object();
    check(experiment_doc_view_spec(v, d.spec) == 0, "view");
    const char *first = json_object_iter_key(json_object_iter(v));
    check(first && !strcmp(first, "training") &&
              !strcmp(json_object_iter_key(json_object_iter(json_object_get(v, "training"))),
                      "train_samples"),
          "the view's keys in the document's order");
    json_decref(v);
    experiment_doc_free(&d);
    v = json_object();
    json_t *old = json_loads("{\"training\":{}}", 0, NULL);
    experiment_doc_view_spec(v, old);
    check(!strcmp(json_string_value(json_object_get(v, "modeler")), "extrap") &&
              json_is_null(json_object_get(v, "cost")),
          "a spec stored before the modeler choice: Extra-P's, no cost");
    json_decref(v);
    json_decref(old);

    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR ",\"colour\":1}",
           "colour", "unknown field");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\",\"ranks\"],\"scaling\":\"weak\"," TR "}",
           "parameters[1]", "repeated");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"both\"," TR "}", "scaling",
           "weak");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
           "{\"train_samples\":50000,\"batch_size\":-3,\"data_parallel\":\"ranks\"}}",
           "training.batch_size", "got -3");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
           "{\"train_samples\":50000,\"batch_size\":64,\"data_parallel\":\"ranks-ranks\"}}",
           "training.data_parallel", "never a finite number > 0");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
           "{\"train_samples\":10,\"batch_size\":64,\"data_parallel\":\"ranks\"}}",
           "training.train_samples", "");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR
           ",\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":1,\"formula\":\"T/0\"}}",
           "cost.formula", "never a finite number");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR
           ",\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":1,\"currency\":\"usd\"}}",
           "cost.currency", "capital letters");
    expect("{\"name\":\"a\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR
           ",\"modeler\":\"guess\"}",
           "modeler", "unknown modeler");
    expect("{\"name\":\"\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"," TR "}", "name",
           "1 to 200");
    return check_summary();
}
