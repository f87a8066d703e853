/*
 * test_regressions.c — the comparison of two model sets
 * (analysis/regressions.h), without a server or a database: sets whose
 * models are known functions with ±1% intervals, so that every status is
 * known in advance: a callpath twice as slow at every measured point is a
 * regression, one 10% faster an improvement, one the same unchanged, one
 * that differs only far beyond the measurements diverges (reported, not
 * counted); callpaths of one set only appear or vanish; the cost follows the
 * epoch; a bad target is 400 naming "at".
 */
#include <math.h>
#include <string.h>

#include "analysis/regressions.h"
#include "tests/check.h"

/* A set: per row f(x) = a·x + c·x² (c only beyond x = 16: a change there
 * alone is not in the data). */
typedef struct fake {
    double a[8], c[8];
} fake;

static compare_value predict(const void *models, int row, const double *pt)
{
    const fake *f = models;
    if (row < 0)
        return (compare_value){NAN, NAN, NAN};
    double x = pt[0];
    double v = f->a[row] * x + (x > 16 ? f->c[row] * (x - 16) * (x - 16) : 0);
    return (compare_value){v, v * 0.99, v * 1.01};
}

static store_model_row row(const char *level, const char *name)
{
    return (store_model_row){.level = (char *)level, .name = (char *)name, .function = "f",
                             .growth_poly = 1};
}

static const char *status_of(const json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) if (!strcmp(json_string_value(json_object_get(e, "name")), name))
        return json_string_value(json_object_get(e, "status"));
    return "(absent)";
}

static int has(const json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) if (!strcmp(json_string_value(e), name)) return 1;
    return 0;
}

int main(void)
{
    double pts[4][1] = {{1}, {2}, {4}, {8}};
    store_measurement_row meas[4];
    for (int i = 0; i < 4; i++)
        meas[i] = (store_measurement_row){.point = pts[i], .nparams = 1};
    store_model_row brows[] = {row("application", "epoch"), row("callpath", "slower"),
                               row("callpath", "faster"), row("callpath", "same"),
                               row("callpath", "far"), row("callpath", "gone")};
    store_model_row hrows[] = {row("application", "epoch"), row("callpath", "slower"),
                               row("callpath", "faster"), row("callpath", "same"),
                               row("callpath", "far"), row("callpath", "new")};
    int ok[] = {1, 1, 1, 1, 1, 1};
    fake bf = {.a = {10, 1, 1, 1, 1, 1}}, hf = {.a = {20, 2, 0.9, 1, 1, 1}, .c = {0, 0, 0, 0, 5}};
    reg_side b = {brows, ok, 6, predict, &bf, meas, 2};
    reg_side h = {hrows, ok, 6, predict, &hf, meas + 2, 2};
    const char *names[] = {"x"};
    json_t *spec = json_loads("{\"training\":{\"data_parallel\":\"x\"},\"cost\":"
                              "{\"cores_per_rank\":2}}",
                              0, NULL);
    reg_input in = {.names = names, .np = 1, .threshold = 5, .spec = spec};
    reg_result r;
    an_problem p;
    check(regressions_compare(&in, &b, &h, &r, &p) == 0, "compare");
    check(json_array_size(r.measured_points) == 4 &&
              json_number_value(json_object_get(json_array_get(r.measured_points, 3), "x")) == 8,
          "the points of both sets, ascending");
    check(json_number_value(json_object_get(r.at, "x")) == 32, "default target 4 x 8 = 32");
    check(!strcmp(status_of(r.callpaths, "slower"), "regression") &&
              !strcmp(status_of(r.callpaths, "faster"), "improvement") &&
              !strcmp(status_of(r.callpaths, "same"), "unchanged") &&
              !strcmp(status_of(r.callpaths, "far"), "diverges"),
          "statuses: %s %s %s %s", status_of(r.callpaths, "slower"),
          status_of(r.callpaths, "faster"), status_of(r.callpaths, "same"),
          status_of(r.callpaths, "far"));
    check(!strcmp(json_string_value(json_object_get(json_array_get(r.callpaths, 0), "status")),
                  "regression"),
          "regressions listed first");
    check(has(r.appeared, "new") && has(r.vanished, "gone"), "appeared and vanished");
    check(!strcmp(status_of(r.application, "epoch"), "regression"), "the epoch doubled");
    /* regressions: slower, the epoch, and the cost that follows the epoch */
    check(r.regressions == 3 && r.improvements == 1 && r.diverging == 1,
          "counts: %d regressions, %d improvements, %d diverging", r.regressions,
          r.improvements, r.diverging);
    /* cost at x = 32: 10·32 s × 32 ranks × 2 cores / 3600 = 5.69 core-h (base) */
    double cb = json_number_value(json_object_get(json_object_get(r.cost, "base"), "value"));
    check(fabs(cb - 10.0 * 32 * 32 * 2 / 3600) < 1e-9, "base cost %g core-h", cb);
    regressions_result_free(&r);

    in.at = "x:100";
    check(regressions_compare(&in, &b, &h, &r, &p) == 0 &&
              json_number_value(json_object_get(r.at, "x")) == 100,
          "a given target");
    regressions_result_free(&r);
    const char *bad[] = {"y:3", "x:-1", "x", "x:3,x:"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        in.at = bad[i];
        check(regressions_compare(&in, &b, &h, &r, &p) < 0 && p.status == 400 &&
                  !strcmp(p.field, "at"),
              "at=%s: 400 at (%s)", bad[i], p.msg);
        regressions_result_free(&r);
    }
    double t = 5;
    check(regressions_threshold_parse("0.5%", &t) == 0 && t == 0.5 &&
              regressions_threshold_parse("12", &t) == 0 && t == 12 &&
              regressions_threshold_parse("1001", &t) < 0 &&
              regressions_threshold_parse("5%%", &t) < 0 &&
              regressions_threshold_parse(NULL, &t) == 0 && t == 12,
          "thresholds");
    json_decref(spec);
    return check_summary();
}
