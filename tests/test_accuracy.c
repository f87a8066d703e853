/*
 * test_accuracy.c — percentage errors and their median (modeling/accuracy.h),
 * by hand: |42 - 46.2| / 46.2 = 9.0909 %, NaN for a measured 0, the median
 * over finite values only.
 */
#include <math.h>

#include "modeling/accuracy.h"
#include "tests/check.h"

int main(void)
{
    check(check_close(acc_error_pct(42, 46.2), 4.2 / 46.2 * 100, 1e-14, 0), "9.09 %%");
    check(acc_error_pct(50, 40) == 25 && acc_error_pct(30, 40) == 25, "above and below");
    check(acc_error_pct(-3, -4) == 25, "negative measured values: relative to |measured|");
    check(isnan(acc_error_pct(1, 0)) && isnan(acc_error_pct(NAN, 1)) && isnan(acc_error_pct(1, INFINITY)),
          "undefined errors are NaN");
    double v[] = {9, NAN, 1, 4}, scratch[8];
    check(acc_median(v, 4, scratch) == 4, "median of {9, 1, 4} = 4");
    double w[] = {0, 9.0909};
    check(check_close(acc_median(w, 2, scratch), 4.54545, 1e-12, 0), "median of two");
    double none[] = {NAN};
    check(isnan(acc_median(none, 1, scratch)) && isnan(acc_median(v, 0, scratch)), "no value: NaN");
    return check_summary();
}
