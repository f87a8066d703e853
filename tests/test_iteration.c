/*
 * test_iteration.c — paper 004's iteration model (modeling/iteration.h) on
 * two ranks and two steps computed by hand:
 *
 *   step 0  rank 0: io 1 h2d 2 md 0.5 f 3 b 4 u 1 c 2   rank 1: f 5, c 1, else the same
 *           means: io 1 h2d 2 md 0.5 f 4 b 4 u 1 c 1.5; max(f+b+c) = max(9, 10) = 10
 *           Eq.1 12  Eq.2 13.5  Eq.3 14.5  Eq.4 12.5  Eq.5 max(9, 3.5) = 9
 *   step 1  both ranks: io 1 h2d 2 md 0.5 f 3 b 4 u 1 c 2; max(f+b+c) = 9
 *           Eq.1 11  Eq.2 13  Eq.3 13.5  Eq.4 11.5  Eq.5 8
 *   over the two iterations: t_f 3.5 ± sqrt(0.5), Eq.3 14 ± sqrt(0.5), ...
 */
#include <math.h>
#include <string.h>

#include "modeling/iteration.h"
#include "tests/check.h"

int main(void)
{
    it_row rows[32];
    size_t n = 0;
    const double base[IT_NPHASES] = {1, 2, 0.5, 3, 4, 1, 2};
    for (int step = 0; step < 2; step++)
        for (int rank = 0; rank < 2; rank++)
            for (int p = 0; p < IT_NPHASES; p++) {
                double v = base[p];
                if (step == 0 && rank == 1 && p == IT_F)
                    v = 5;
                if (step == 0 && rank == 1 && p == IT_C)
                    v = 1;
                rows[n++] = (it_row){1, rank, step, p, v};
            }
    /* the forward time of step 1, rank 0 split over two rows (3 = 1 + 2) */
    for (size_t i = 0; i < n; i++)
        if (rows[i].step == 1 && rows[i].rank == 0 && rows[i].phase == IT_F)
            rows[i].value = 1;
    rows[n++] = (it_row){1, 0, 1, IT_F, 2};
    it_result r;
    check(it_coordinate(rows, n, &r) == 0 && r.iterations == 2, "two iterations");
    const struct {
        int q;
        double mean, sd;
    } want[] = {
        {IT_IO, 1, 0},          {IT_F, 3.5, sqrt(0.5)},  {IT_C, 1.75, sqrt(0.125)},
        {IT_EQ1, 11.5, sqrt(0.5)}, {IT_EQ2, 13.25, sqrt(0.125)}, {IT_EQ3, 14, sqrt(0.5)},
        {IT_EQ4, 12, sqrt(0.5)},   {IT_EQ5, 8.5, sqrt(0.5)},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const it_stats *s = &r.q[want[i].q];
        check(check_close(s->mean, want[i].mean, 1e-12, 1e-12) &&
                  check_close(s->sd, want[i].sd, 1e-12, 1e-12) &&
                  check_close(s->median, want[i].mean, 1e-12, 1e-12),
              "%s: %g ± %g (median %g), want %g ± %g", it_name(want[i].q), s->mean, s->sd,
              s->median, want[i].mean, want[i].sd);
    }
    check(!strcmp(it_name(IT_EQ3), "eq3") && !strcmp(it_name(IT_H2D), "t_h2d"), "names");
    /* Eq. 6: 4 GPUs at 5 s against 1 GPU at 10 s: 4·10/5 = 8 */
    check(it_speedup(1, 10, 4, 5) == 8 && it_speedup(2, 10, 4, 10) == 2, "speedups");
    check(it_coordinate(rows, 0, &r) == 0 && r.iterations == 0, "no rows");
    return check_summary();
}
