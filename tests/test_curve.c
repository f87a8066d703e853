/*
 * test_curve.c — one model along one parameter (analysis/curve.h), without
 * a server: the default sweep 65 points evenly in log from the smallest
 * measured value to 8x the largest, the other parameters at their largest
 * measured value unless fixed, values from the model, the extrapolation
 * mark beyond 4x, and the values= list's faults.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/curve.h"
#include "tests/check.h"

/* f(x, y) = 3x + y, ±10% */
static curve_value model(const void *m, const double *pt)
{
    (void)m;
    double v = 3 * pt[0] + pt[1];
    return (curve_value){v, 0.9 * v, 1.1 * v, 1};
}

int main(void)
{
    double p[3][2] = {{2, 10}, {4, 20}, {16, 5}};
    store_measurement_row meas[3];
    for (int i = 0; i < 3; i++)
        meas[i] = (store_measurement_row){.point = p[i], .nparams = 2};
    const char *names[] = {"x", "y"};
    double fixed[2] = {0, 0};
    int has_fixed[2] = {0, 0};
    curve_input in = {names, 2, 0, fixed, has_fixed, NULL, 0, meas, 3, model, NULL};
    curve_result r;
    check(curve_build(&in, &r) == 0, "build");
    json_t *pts = r.points;
    double x0 = json_number_value(json_object_get(json_array_get(pts, 0), "x"));
    double xl = json_number_value(json_object_get(json_array_get(pts, 64), "x"));
    double x32 = json_number_value(json_object_get(json_array_get(pts, 32), "x"));
    check(json_array_size(pts) == CURVE_DEFAULT_POINTS && fabs(x0 - 2) < 1e-12 &&
              fabs(xl - 128) < 1e-9 && fabs(x32 - 16) < 1e-9,
          "65 points from 2 to 8 x 16 = 128, log-midpoint 16: %g %g %g", x0, xl, x32);
    check(json_number_value(json_object_get(r.fixed, "y")) == 20 && !json_object_get(r.fixed, "x"),
          "y at its largest measured value");
    json_t *mid = json_array_get(pts, 32);
    check(fabs(json_number_value(json_object_get(mid, "value")) - (3 * 16 + 20)) < 1e-9 &&
              fabs(json_number_value(json_array_get(json_object_get(mid, "interval"), 1)) -
                   1.1 * 68) < 1e-9,
          "value and interval from the model");
    check(!json_is_true(json_object_get(mid, "beyond_4x")) &&
              json_is_true(json_object_get(json_array_get(pts, 64), "beyond_4x")),
          "beyond 4 x 16 = 64 marked");
    check(r.min_measured == 2 && r.max_measured == 16 && r.extrapolation_from == 64,
          "measured range and the extrapolation mark");
    curve_result_free(&r);

    double *vals = NULL;
    int n = 0;
    char why[160];
    check(curve_values_parse("1,2.5,1e3", &vals, &n, why, sizeof why) == 0 && n == 3 &&
              vals[1] == 2.5,
          "values read");
    fixed[1] = 7;
    has_fixed[1] = 1;
    in.values = vals;
    in.nvalues = n;
    check(curve_build(&in, &r) == 0 && json_array_size(r.points) == 3 &&
              json_number_value(json_object_get(json_array_get(r.points, 0), "value")) == 10,
          "given values, y fixed at 7: 3 + 7 = 10");
    curve_result_free(&r);
    free(vals);
    const char *bad[] = {"", "1,,2", "0", "-1", "1,x", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vals = NULL;
        check(curve_values_parse(bad[i], &vals, &n, why, sizeof why) < 0, "\"%s\" refused", bad[i]);
        free(vals);
    }
    return check_summary();
}
