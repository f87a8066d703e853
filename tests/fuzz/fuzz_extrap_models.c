/*
 * fuzz_extrap_models.c — libFuzzer target for the reader of the models
 * Extra-P stores in a saved experiment (ingest/extrap_exp.h,
 * extrap_exp_model.c): any bytes as experiment.json (its zip around it is
 * fuzz_cube.c's), every stored model of every modeler read for the
 * experiment's parameter count. A model read must print (its text whole);
 * one refused must say why. Seeds: tests/fuzz/corpus/extrap_models/ (the
 * experiment.json of tests/data/extrap/segmented_exp/*.extra-p, made by
 * Extra-P 4.2.5, without their measurements: constant, single-,
 * multi-parameter and segmented models).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"
#include "modeling/model_json.h"

static void one(const json_t *fn, int nparams, const char *const *names)
{
    pmnf_model m;
    char err[200] = "";
    if (ingest_extrap_exp_model(fn, nparams, &m, err, sizeof err) == 0) {
        char *text = api_model_text(&m, names);
        if (!text)
            abort();
        free(text);
    } else if (!err[0]) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (!doc)
        return 0;
    static const char *const names[PMNF_MAX_PARAMS] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    size_t np = json_array_size(json_object_get(doc, "parameters"));
    int nparams = np < 1 ? 1 : np > PMNF_MAX_PARAMS ? PMNF_MAX_PARAMS : (int)np;
    size_t i;
    const json_t *mg;
    json_array_foreach(json_object_get(doc, "modelers"), i, mg) {
        const char *cp;
        json_t *by;
        json_object_foreach(json_object_get(mg, "models"), cp, by) {
            const char *metric;
            json_t *m;
            json_object_foreach(by, metric, m)
                one(json_object_get(json_object_get(m, "hypothesis"), "function"), nparams, names);
        }
    }
    json_decref(doc);
    return 0;
}
