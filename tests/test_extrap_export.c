/*
 * test_extrap_export.c — a model set's measurements as an Extra-P
 * experiment document (analysis/extrap_export.h), without a server: series
 * named as Extra-P shows them, one measurement per row with the mean of its
 * repetitions, rows without repetitions left out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extrap_export.h"
#include "tests/check.h"

int main(void)
{
    const char *params[] = {"ranks"};
    json_t *doc = extrap_export_new(params, 1);
    double p2[] = {2}, p4[] = {4}, reps[] = {1.0, 2.0, 3.0};
    store_measurement_row rows[] = {
        {.point = p2, .nparams = 1, .level = "callpath", .name = "conv", .metric = "time",
         .phase = "train", .reps = reps, .nreps = 3},
        {.point = p4, .nparams = 1, .level = "callpath", .name = "conv", .metric = "time",
         .phase = "validation", .reps = reps, .nreps = 2},
        {.point = p4, .nparams = 1, .level = "category", .name = "comm", .metric = "time",
         .phase = "train", .reps = reps, .nreps = 1},
        {.point = p4, .nparams = 1, .level = "application", .name = "epoch", .metric = "time",
         .phase = "train", .reps = reps, .nreps = 0},
    };
    check(doc && extrap_export_add(doc, rows, 4) == 0, "rows added");
    json_t *ms = json_object_get(doc, "measurements");
    json_t *conv = json_object_get(json_object_get(ms, "conv"), "time");
    check(json_array_size(conv) == 1 && json_object_get(ms, "conv (validation)") &&
              json_object_get(ms, "category:comm") && !json_object_get(ms, "application:epoch"),
          "series named as Extra-P shows them, empty rows left out");
    check(!strcmp(json_string_value(json_object_get(doc, "Extra-P")), "4.2.5") &&
              !strcmp(json_string_value(json_array_get(json_object_get(doc, "parameters"), 0)),
                      "ranks"),
          "the header");
    /* repetitions 1, 2, 3: mean and median 2, population std sqrt(2/3) */
    json_t *m = json_array_get(conv, 0);
    check(json_number_value(json_object_get(m, "mean")) == 2 &&
              json_number_value(json_object_get(m, "median")) == 2 &&
              fabs(json_number_value(json_object_get(m, "std")) - sqrt(2.0 / 3)) < 1e-12 &&
              json_integer_value(json_object_get(m, "repetitions")) == 3,
          "the statistics of repetitions 1, 2, 3");
    json_decref(doc);
    return check_summary();
}
