/*
 * test_scaling_axis.c — the values of a scaling answer's varied parameter
 * (analysis/scaling_axis.h), without a server: a list, a range (2 to 64 in
 * steps of 2: 32 values), the measured values once each in their order,
 * and each fault named (a count of 1e300 points in a short message).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/scaling_axis.h"
#include "tests/check.h"

static void expect(scaling_axis_input in, const char *field, const char *what)
{
    double *v = NULL;
    an_problem p = {0};
    int n = scaling_axis_values(&in, &v, &p);
    check(n < 0 && p.status == 400 && !strcmp(p.field, field), "%s: want 400 %s, got %d %s (%s)",
          what, field, p.status, p.field, p.msg);
    free(v);
}

int main(void)
{
    /* coordinates (x, y): x = 2, 4, 2, 8 */
    double coords[] = {2, 1, 4, 1, 2, 3, 8, 1};
    scaling_axis_input in = {.coords = coords, .npoints = 4, .nparams = 2, .param = 0};
    double *v = NULL;
    an_problem p;
    int n = scaling_axis_values(&in, &v, &p);
    check(n == 3 && v[0] == 2 && v[1] == 4 && v[2] == 8, "measured values once each: %d", n);
    free(v);
    in.values = "16,32.5";
    n = scaling_axis_values(&in, &v, &p);
    check(n == 2 && v[1] == 32.5, "a list");
    free(v);
    in.values = NULL;
    in.from = "2";
    in.to = "64";
    in.step = "2";
    n = scaling_axis_values(&in, &v, &p);
    check(n == 32 && v[0] == 2 && v[31] == 64, "2 to 64 in steps of 2: %d values", n);
    free(v);
    in.step = NULL;
    in.to = "2.5";
    n = scaling_axis_values(&in, &v, &p);
    check(n == 1 && v[0] == 2, "step 1 by default: 2 to 2.5 is one value");
    free(v);
    expect((scaling_axis_input){.values = "2", .from = "1"}, "values", "both forms");
    expect((scaling_axis_input){.values = "2,-4"}, "values", "a negative value");
    expect((scaling_axis_input){.values = "2,,4"}, "values", "an empty value");
    /* values= with nothing: no point to answer, said (was a 200 with no points) */
    expect((scaling_axis_input){.values = ""}, "values", "no value at all");
    expect((scaling_axis_input){.to = "4"}, "from", "no from");
    expect((scaling_axis_input){.from = "8", .to = "4"}, "to", "to below from");
    expect((scaling_axis_input){.from = "1", .to = "4", .step = "0"}, "step", "step 0");
    expect((scaling_axis_input){.from = "1", .to = "1e6", .step = "1"}, "step",
           "a million points");
    /* a count of 1e300 points is said short, not in 301 digits */
    scaling_axis_input far = {.from = "1", .to = "1e300", .step = "1"};
    an_problem q = {0};
    v = NULL;
    check(scaling_axis_values(&far, &v, &q) < 0 && strstr(q.msg, "1e+300") &&
              strlen(q.msg) < 100,
          "to 1e300: a short message: %s", q.msg);
    free(v);
    double x;
    check(an_parse_positive("3.5", &x) == 0 && x == 3.5 && an_parse_positive(" 3", &x) < 0 &&
              an_parse_positive("3x", &x) < 0 && an_parse_positive("0", &x) < 0 &&
              an_parse_positive("inf", &x) < 0,
          "the number reader");
    return check_summary();
}
