/*
 * iteration.c — paper 004's iteration model from per-step phase times
 * (iteration.h).
 */
#include "modeling/iteration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/aggregate.h"

static const char *const names[IT_NQ] = {"t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u", "t_c",
                                         "eq1",  "eq2",   "eq3",  "eq4", "eq5"};

const char *it_name(int q)
{
    return q >= 0 && q < IT_NQ ? names[q] : "";
}

double it_speedup(double n1, double t1, double nk, double tk)
{
    return nk / n1 * t1 / tk;
}

static int cmp_row(const void *a, const void *b)
{
    const it_row *x = a, *y = b;
    if (x->repetition != y->repetition)
        return x->repetition < y->repetition ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return 0;
}

/* The equations from one iteration's mean phase times and Eq. 3's max. */
static void equations(double *v, double max_fbc)
{
    double io = v[IT_IO], h2d = v[IT_H2D], md = v[IT_MD], f = v[IT_F], b = v[IT_B], u = v[IT_U],
           c = v[IT_C];
    v[IT_EQ1] = io + h2d + f + b + u;
    v[IT_EQ2] = io + h2d + f + b + c + u;
    v[IT_EQ3] = io + h2d + md + max_fbc + u;
    v[IT_EQ4] = io + h2d + md + f + b + u;
    v[IT_EQ5] = fmax(f + b + u, io + h2d + md);
}

static void stats(const double *v, int n, double *scratch, it_stats *out)
{
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    out->mean = mean;
    out->sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
    out->median = agg_median(v, (size_t)n, scratch);
}

int it_coordinate(const it_row *rows, size_t n, it_result *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return 0;
    it_row *s = malloc(n * sizeof *s);
    double *per = malloc(n * IT_NQ * sizeof *per), *col = malloc(2 * n * sizeof *col);
    if (!s || !per || !col) {
        free(s);
        free(per);
        free(col);
        return -1;
    }
    memcpy(s, rows, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_row);
    int iters = 0;
    for (size_t i = 0; i < n;) {
        /* one iteration: (repetition, step); its ranks in order */
        size_t j = i;
        while (j < n && s[j].repetition == s[i].repetition && s[j].step == s[i].step)
            j++;
        double sum[IT_NPHASES] = {0}, max_fbc = -INFINITY;
        int nranks = 0;
        for (size_t k = i; k < j;) {
            size_t e = k;
            double r[IT_NPHASES] = {0};
            while (e < j && s[e].rank == s[k].rank) {
                if (s[e].phase >= 0 && s[e].phase < IT_NPHASES)
                    r[s[e].phase] += s[e].value;
                e++;
            }
            for (int p = 0; p < IT_NPHASES; p++)
                sum[p] += r[p];
            max_fbc = fmax(max_fbc, r[IT_F] + r[IT_B] + r[IT_C]);
            nranks++;
            k = e;
        }
        double *v = per + (size_t)iters * IT_NQ;
        for (int p = 0; p < IT_NPHASES; p++)
            v[p] = sum[p] / nranks;
        equations(v, max_fbc);
        iters++;
        i = j;
    }
    out->iterations = iters;
    for (int q = 0; q < IT_NQ; q++) {
        for (int i = 0; i < iters; i++)
            col[i] = per[(size_t)i * IT_NQ + q];
        stats(col, iters, col + n, &out->q[q]);
    }
    free(s);
    free(per);
    free(col);
    return 0;
}
