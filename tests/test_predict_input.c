/*
 * test_predict_input.c — bad input to the step at another batch size
 * (analysis/iteration_predict.h) on the real ResNet-18 traces of
 * tests/data/gpu at 64 (the reference), 32 and 16:
 *   - two traces at one value: refused naming the later one (bad 2 for
 *     64, 32, 32), its field "value";
 *   - the same trace given twice (the bytes at 64 read again, called 32):
 *     refused naming the copy (bad 1), not modelled as two sizes;
 *   - a size so far out that the operators' models give no finite time
 *     (1e20, 1e-30: NaN where a model overflows): refused naming "at",
 *     where the answer lost its "modelled" part and kept the measured
 *     kernel times; 128 and 1e-10 still answer with it;
 *   - one trace without operator shapes among shaped ones: kernel names,
 *     and the shapes_missing warning names that trace (index 2);
 *   - the DLRM trace at 512 among them: another job, refused naming it by
 *     operators, by kernel names, and where the traces lack shapes.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_predict.h"
#include "ingest/kineto_xg.h"
#include "tests/check.h"
#include "tests/trace_load.h"

#define GPU "tests/data/gpu/"

static const json_t *warning(const json_t *doc, const char *code)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(json_object_get(doc, "modelled"), "warnings"), i, w)
        if (!strcmp(json_string_value(json_object_get(w, "code")) ?: "", code))
            return w;
    return NULL;
}

int main(void)
{
    static const char *const files[] = {GPU "resnet18_bs64.json.gz", GPU "resnet18_bs32.json.gz",
                                        GPU "resnet18_bs16.json.gz"};
    xg_trace t[4];
    for (int i = 0; i < 3; i++)
        check(trace_load_file(files[i], &t[i]) == 0, "%s", files[i]);
    check(trace_load_file(files[0], &t[3]) == 0, "%s again", files[0]);
    iteration_opts o = {.prof = {2, 4, 0}};
    xg_error err;
    int bad;

    const xg_trace *tp[3] = {&t[0], &t[1], &t[2]};
    json_t *doc = iteration_predict_at(tp, (const double[]){64, 32, 32}, 3, 128, &o,
                                       ITERATION_BY_OPERATORS, &bad, &err);
    check(!doc && bad == 2 && !strcmp(err.field, "value") && strstr(err.msg, "32") &&
              strstr(err.msg, "trace 1"),
          "two traces at 32: the later named (%d, %s): %s", bad, err.field, err.msg);
    json_decref(doc);

    const xg_trace *twice[3] = {&t[0], &t[3], &t[2]};
    doc = iteration_predict_at(twice, (const double[]){64, 32, 16}, 3, 128, &o,
                               ITERATION_BY_OPERATORS, &bad, &err);
    check(!doc && bad == 1 && strstr(err.msg, "trace 0"),
          "the trace at 64 given again as 32: refused naming it (%d): %s", bad, err.msg);
    json_decref(doc);
    doc = iteration_predict_at(twice, (const double[]){64, 32, 16}, 3, 128, &o,
                               ITERATION_BY_KERNEL_NAMES, &bad, &err);
    check(!doc && bad == 1, "by kernel names too (%d): %s", bad, err.msg);
    json_decref(doc);

    const double xs[3] = {64, 32, 16};
    static const double far[] = {1e20, 1e-30}, near[] = {128, 1e-10};
    for (int k = 0; k < 2; k++) {
        doc = iteration_predict_at(tp, xs, 3, far[k], &o, ITERATION_BY_OPERATORS, &bad, &err);
        check(!doc && bad < 0 && !strcmp(err.field, "at"), "at %g: refused naming at (%s): %s",
              far[k], err.field, doc ? "answered" : err.msg);
        json_decref(doc);
        doc = iteration_predict_at(tp, xs, 3, near[k], &o, ITERATION_BY_OPERATORS, &bad, &err);
        json_t *m = json_object_get(doc, "modelled");
        check(doc && m && isfinite(json_number_value(json_object_get(m, "gpu_time_at"))),
              "at %g: modelled", near[k]);
        json_decref(doc);
    }

    /* trace 2 as if recorded without shapes */
    for (size_t k = 0; k < t[2].ninfo; k++)
        t[2].info[k].nin = 0;
    doc = iteration_predict_at(tp, xs, 3, 128, &o, ITERATION_BY_OPERATORS, &bad, &err);
    const json_t *w = warning(doc, "shapes_missing");
    const json_t *which = json_object_get(w, "traces");
    check(doc && w && json_array_size(which) == 1 &&
              json_integer_value(json_array_get(which, 0)) == 2 &&
              !strcmp(json_string_value(json_object_get(json_object_get(doc, "modelled"),
                                                        "method")),
                      "kernel_names"),
          "one trace without shapes: kernel names, the warning names trace 2");
    json_decref(doc);

    /* another job's trace, by kernel names too: refused naming it (the
     * DLRM trace at 512 among the ResNet-18 ones) */
    xg_trace dlrm;
    check(trace_load_file(GPU "dlrm_bs512.json.gz", &dlrm) == 0, "dlrm");
    const xg_trace *mix[3] = {&t[0], &dlrm, &t[1]};
    static const int methods[] = {ITERATION_BY_OPERATORS, ITERATION_BY_KERNEL_NAMES};
    for (int k = 0; k < 2; k++) {
        doc = iteration_predict_at(mix, (const double[]){64, 512, 32}, 3, 128, &o, methods[k],
                                   &bad, &err);
        check(!doc && bad == 1 && strstr(err.msg, "not the same job"),
              "another job's trace, %s: refused naming it (%d): %s",
              k ? "by kernel names" : "by operators", bad, doc ? "answered" : err.msg);
        json_decref(doc);
    }
    /* and where the reference has no shapes (kernel names by necessity) */
    for (size_t k = 0; k < t[0].ninfo; k++)
        t[0].info[k].nin = 0;
    doc = iteration_predict_at(mix, (const double[]){64, 512, 32}, 3, 128, &o,
                               ITERATION_BY_OPERATORS, &bad, &err);
    check(!doc && bad == 1 && strstr(err.msg, "not the same job"),
          "another job's trace among traces without shapes: refused naming it (%d): %s", bad,
          doc ? "answered" : err.msg);
    json_decref(doc);
    xg_trace_free(&dlrm);

    for (int i = 0; i < 4; i++)
        xg_trace_free(&t[i]);
    return check_summary();
}
