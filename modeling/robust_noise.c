/*
 * robust_noise.c — what the repetitions of a series say about its noise.
 *
 * Per coordinate, the center is the mean of the repetitions after dropping
 * outliers (farther from the median than 4 of the point's scaled median
 * absolute deviations and 5 of the whole series' pooled relative ones,
 * point_stats; the mean is kept for its efficiency on well-behaved noise). The
 * noise of run-time measurements grows with the value, so the relative
 * variance of one repetition is pooled over all coordinates (a coefficient
 * of variation cv2 with sum(r_i - 1) degrees of freedom), and the variance
 * of coordinate i's center is var_i = cv2 * m_i^2 / r_i, m_i a power law
 * fitted through the centers (smooth_scale). (Each coordinate's
 * own variance has only r_i - 1 degrees of freedom, four with five
 * repetitions: weights from it alone, or shrunk towards the pooled value,
 * made the fits worse on every generated set.) The weights of the
 * least-squares fits are 1 / var_i.
 *
 * Without repetitions (one value per coordinate) the weights are relative,
 * 1 / y_i^2, and the scale is left to the fit (have_reps = 0).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/robust_internal.h"

/* Sorts v[0..n) (insertion sort: repetitions are few). */
static void sort_small(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The median of the sorted a[0..n), n > 0. */
static double median_sorted(const double *a, int n)
{
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

/* The median of v[0..r), sorted into tmp. */
static double median_of(const double *v, int r, double *tmp)
{
    memcpy(tmp, v, sizeof(double) * (size_t)r);
    sort_small(tmp, r);
    return median_sorted(tmp, r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The relative spread of one repetition over the whole series, robustly:
 * 1.4826 times the median of |v - med_i| / |med_i| over every repetition of
 * every point with at least 3 (med_i its point's median; for an odd count
 * the median itself, whose distance is 0 by construction, is left out).
 * 0 when no point has 3 repetitions. buf holds the total count of
 * repetitions, tmp the largest count of one point. */
static double pooled_rel_mad(const pmnf_reps *reps, int n, double *buf, double *tmp)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const double *v = reps->values + reps->start[i];
        int r = reps->start[i + 1] - reps->start[i];
        if (r < 3)
            continue;
        double med = median_of(v, r, tmp);
        if (!(fabs(med) > 0))
            continue;
        int skipped = r % 2 == 0;
        for (int j = 0; j < r; j++) {
            if (!skipped && v[j] == med) {
                skipped = 1;
                continue;
            }
            buf[m++] = fabs(v[j] - med) / fabs(med);
        }
    }
    if (m == 0)
        return 0;
    qsort(buf, (size_t)m, sizeof *buf, cmp_double);
    return 1.4826 * median_sorted(buf, m);
}

/* Center, variance of one repetition and the repetitions kept, of v[0..r).
 * A repetition is an outlier, and left out, when it lies farther from the
 * point's median than OUTLIER_MADS median absolute deviations of its own
 * point and also farther than OUTLIER_POOLED times the series' pooled
 * relative spread (rel_mad, pooled_rel_mad) of the median. The point's own
 * deviation alone comes from a handful of values: with five repetitions its
 * median absolute deviation is often far below the noise, and that test
 * alone threw out plain measurements (with uniform 15% noise and five
 * repetitions, one point in six lost one, in three series of five, and the
 * p90 extrapolation error rose from about 16% to 20%). Against the pooled
 * spread, five robust standard deviations: a repetition of normal noise lies
 * that far once in about two million. */
#define OUTLIER_MADS 4.0
#define OUTLIER_POOLED 5.0
/* Where both spreads are 0 (repetitions that agree exactly, as counts and
 * times on a coarse clock do), a repetition is still an outlier beyond this
 * relative distance from its point's median: 40, 400, 40 among exact
 * repetitions is not a measurement of 160. */
#define OUTLIER_EXACT 0.05
static void point_stats(const double *v, int r, double rel_mad, double *tmp, double *center,
                        double *var, int *kept)
{
    double med = median_of(v, r, tmp);
    for (int i = 0; i < r; i++)
        tmp[i] = fabs(v[i] - med);
    sort_small(tmp, r);
    double mad = 1.4826 * median_sorted(tmp, r);
    double limit = fmax(OUTLIER_MADS * mad, OUTLIER_POOLED * rel_mad * fabs(med));
    if (!(limit > 0))
        limit = OUTLIER_EXACT * fabs(med);
    int test = r >= 3 && limit > 0;
    double sum = 0;
    int k = 0;
    for (int i = 0; i < r; i++) {
        if (test && fabs(v[i] - med) > limit)
            continue;
        sum += v[i];
        k++;
    }
    double mean = sum / k, ss = 0;
    for (int i = 0; i < r; i++) {
        if (test && fabs(v[i] - med) > limit)
            continue;
        ss += (v[i] - mean) * (v[i] - mean);
    }
    *center = mean;
    *var = k > 1 ? ss / (k - 1) : 0;
    *kept = k;
}

static double max_abs(const double *y, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        if (fabs(y[i]) > m)
            m = fabs(y[i]);
    return m;
}

/* The scale of point i for relative noise, kept away from 0. */
static double rel_scale2(double y, double floor2)
{
    double s = y * y;
    return s > floor2 ? s : floor2;
}

/* The scale the relative noise applies to: a power law fitted through the
 * centers (log y on 1 and log x_p by least squares), so that a point
 * measured low by chance does not get a larger weight, and one measured
 * high a smaller one; the centers themselves when some value or coordinate
 * is not positive or the fit is not possible. 0 or -1 (out of memory). */
static int smooth_scale(const rb_series *s, double *out)
{
    int n = s->n, np = s->nparams, k = 1 + np, ok = n > k;
    for (int i = 0; i < n; i++) {
        out[i] = s->y[i];
        ok &= s->y[i] > 0;
        for (int p = 0; p < np; p++)
            ok &= s->coords[(size_t)i * np + p] > 0;
    }
    if (!ok)
        return 0;
    double *a = malloc(sizeof(double) * ((size_t)n * (k + 1) + lsq_storage_size(n, k)));
    if (!a)
        return -1;
    double *b = a + (size_t)n * k, *store = b + n, x[PMNF_MAX_COEFS];
    for (int i = 0; i < n; i++) {
        a[i] = 1;
        for (int p = 0; p < np; p++)
            a[(size_t)(1 + p) * n + i] = log(s->coords[(size_t)i * np + p]);
        b[i] = log(s->y[i]);
    }
    lsq_factor f;
    if (lsq_factorize(a, n, k, &f, store) == 0) {
        lsq_solve(&f, b, x);
        for (int i = 0; i < n; i++) {
            double l = x[0];
            for (int p = 0; p < np; p++)
                l += x[1 + p] * a[(size_t)(1 + p) * n + i];
            if (isfinite(exp(l)))
                out[i] = exp(l);
        }
    }
    free(a);
    return 0;
}

int rb_series_build(rb_series *s, const pmnf_data *d, const pmnf_reps *reps)
{
    int n = d->npoints;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->nparams = d->nparams;
    s->coords = d->coords;
    int maxr = 1;
    for (int i = 0; reps && i < n; i++)
        if (reps->start[i + 1] - reps->start[i] > maxr)
            maxr = reps->start[i + 1] - reps->start[i];
    int total = reps ? reps->start[n] - reps->start[0] : 0;
    s->storage = malloc(sizeof(double) * ((size_t)n * 6 + (size_t)maxr + (size_t)total));
    if (!s->storage)
        return -1;
    s->y = s->storage;
    s->var = s->y + n;
    s->w = s->var + n;
    double *v1 = s->w + n, *tmp = v1 + 2 * n;
    s->ones = tmp + maxr;
    for (int i = 0; i < n; i++)
        s->ones[i] = 1;
    double *devs = s->ones + n; /* total: the repetitions' relative deviations */
    double rel_mad = reps ? pooled_rel_mad(reps, n, devs, tmp) : 0;
    double pooled = 0, pooled_dof = 0;
    for (int i = 0; i < n; i++) {
        int r = reps ? reps->start[i + 1] - reps->start[i] : 0;
        int kept = 1;
        v1[i] = 0;
        if (r >= 1)
            point_stats(reps->values + reps->start[i], r, rel_mad, tmp, &s->y[i], &v1[i], &kept);
        else
            s->y[i] = d->values[i];
        s->var[i] = kept; /* repetitions behind the center, for now */
        if (kept > 1 && s->y[i] != 0) {
            pooled += (kept - 1) * v1[i] / (s->y[i] * s->y[i]);
            pooled_dof += kept - 1;
        }
    }
    double floor2 = max_abs(s->y, n) * 1e-6;
    floor2 = floor2 > 0 ? floor2 * floor2 : 1e-300;
    s->have_reps = pooled_dof > 0;
    s->dof = pooled_dof;
    s->cv2 = s->have_reps ? pooled / pooled_dof : 0;
    /* relative noise below 1e-6 (noise-free or rounded measurements) counts
     * as 1e-6, so that the sums of the fits stay well inside double range */
    if (s->have_reps && s->cv2 < 1e-12)
        s->cv2 = 1e-12;
    double *smooth = v1; /* v1 is not needed any more */
    if (smooth_scale(s, smooth) < 0) {
        rb_series_free(s);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        double scale2 = rel_scale2(smooth[i], floor2), r = s->var[i];
        if (!s->have_reps) {
            s->var[i] = scale2;
        } else {
            s->var[i] = s->cv2 * scale2 / r;
        }
        s->w[i] = 1 / s->var[i];
    }
    return 0;
}

void rb_series_free(rb_series *s)
{
    free(s->storage);
    memset(s, 0, sizeof *s);
}
