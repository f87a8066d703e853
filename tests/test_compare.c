/*
 * test_compare.c — modeling/compare.c by hand: when a change between two
 * predictions with 95% intervals is significant (the intervals separate
 * and the relative change exceeds the threshold), its sign, a change from
 * zero, and the order of growth of two models.
 */
#include <math.h>

#include "modeling/compare.h"
#include "tests/check.h"

static compare_value v(double value, double lo, double hi)
{
    return (compare_value){value, lo, hi};
}

int main(void)
{
    /* 100 [99, 101] -> 110 [109, 111]: +10%, separated, over 5% */
    compare_result r = compare_values(v(100, 99, 101), v(110, 109, 111), 5);
    check(fabs(r.change_pct - 10) < 1e-12 && r.separated && r.significant && r.direction == 1,
          "+10%% separated: %g %d %d %d", r.change_pct, r.separated, r.significant, r.direction);
    /* the same under a 15% threshold: separated, not significant */
    r = compare_values(v(100, 99, 101), v(110, 109, 111), 15);
    check(r.separated && !r.significant && r.direction == 0, "+10%% under 15%%");
    /* +10% with overlapping intervals [95, 105] and [104, 116]: not significant */
    r = compare_values(v(100, 95, 105), v(110, 104, 116), 5);
    check(!r.separated && !r.significant && r.direction == 0, "overlapping intervals");
    /* touching intervals (105 = 105) do not separate */
    r = compare_values(v(100, 95, 105), v(110, 105, 115), 5);
    check(!r.separated, "touching intervals");
    /* a decrease: 100 -> 80, -20% */
    r = compare_values(v(100, 99, 101), v(80, 79, 81), 5);
    check(fabs(r.change_pct + 20) < 1e-12 && r.significant && r.direction == -1, "-20%%");
    /* a negative base: the change is relative to |base| */
    r = compare_values(v(-10, -10.5, -9.5), v(-8, -8.5, -7.5), 5);
    check(fabs(r.change_pct - 20) < 1e-12 && r.direction == 1, "from -10 to -8: +20%%: %g",
          r.change_pct);
    /* from zero: no percentage, significant when separated */
    r = compare_values(v(0, 0, 0), v(3, 2, 4), 5);
    check(isnan(r.change_pct) && r.significant && r.direction == 1, "from 0 to 3");
    r = compare_values(v(0, 0, 0), v(0, 0, 0), 5);
    check(r.change_pct == 0 && !r.significant, "0 to 0");
    /* no intervals (lo = hi = value): any difference separates */
    r = compare_values(v(100, 100, 100), v(100.1, 100.1, 100.1), 0.05);
    check(r.separated && r.significant, "+0.1%% without intervals over 0.05%%");
    /* growth: poly first, then log */
    check(compare_growth(1, 0, 1, 1) == 1, "p -> p log p grows faster");
    check(compare_growth(1, 1, 1, 0) == -1, "p log p -> p grows slower");
    check(compare_growth(2.0 / 3, 2, 1, 0) == 1, "p^(2/3) log^2 p -> p grows faster");
    check(compare_growth(0.5, 0, 0.5 + 1e-12, 0) == 0, "equal to 1e-9");
    check(compare_growth(0, 0, 0, 0) == 0, "constants");
    return check_summary();
}
