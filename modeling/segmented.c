/*
 * segmented.c — Extra-P 4.2.5's segmented single-parameter modeler, and the
 * two-regime test the robust modeler uses.
 *
 * The points are sorted by coordinate. Every window of 5 consecutive points
 * gets Extra-P's basic single-parameter model (single.c) and its nRSS: for a
 * model chosen by leave-one-out cross-validation Extra-P's running sum
 * sum_i sqrt(RSS_1..i) / mean(training_i) / n over the left-out points, for
 * the constant sqrt(RSS) / mean. The data have two regimes when the largest
 * nRSS exceeds 0.5 or some window's nRSS is more than 4 times the previous
 * one's (+1e-16). The windows with nRSS >= 0.1 or such a jump mark the
 * change: with 3 marked windows the middle point of the middle one is a
 * change point both segments share, otherwise the middle two points of the
 * window before the middle marked one enclose it (Python's index -1, the
 * last window, included). Each segment is then modeled alone. Without two
 * regimes the model is the basic modeler's on the sorted points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/modeler_internal.h"

#define SEG_WINDOW 5           /* Extra-P's min_measurement_points */
#define SEG_THETA 0.5          /* theta_threshold */
#define SEG_NRSS 0.1           /* n_rss_threshold */
#define SEG_EPSILON 4.0        /* epsilon_threshold */
#define SEG_ETA 1e-16          /* eta */

typedef struct xy {
    double x, y;
    int i;
} xy;

static int xy_cmp(const void *a, const void *b)
{
    const xy *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i); /* stable, as Python's sorted() */
}

/* numpy.mean of a few values: a plain running sum below 8 values (numpy's
 * pairwise summation unrolls by 8 only from there). */
static double np_mean(const double *v, int n, int skip)
{
    double s = 0;
    int m = 0;
    if (n - (skip >= 0) < 8) {
        for (int i = 0; i < n; i++)
            if (i != skip) {
                s += v[i];
                m++;
            }
        return s / m;
    }
    /* numpy's pairwise sum for 8 to 128 values: eight accumulators */
    double r[8] = {0}, buf[256];
    for (int i = 0; i < n; i++)
        if (i != skip)
            buf[m++] = v[i];
    int i = 0;
    for (int k = 0; k < 8; k++)
        r[k] = buf[k];
    for (i = 8; i < m - (m % 8); i += 8)
        for (int k = 0; k < 8; k++)
            r[k] += buf[i + k];
    s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < m; i++)
        s += buf[i];
    return s / m;
}

/* Extra-P's nRSS of the model single_fit chose for x, y (n points). */
static double model_nrss(pmnf_modeler *m, const double *x, const double *y, int n,
                         const pmnf_model *model)
{
    if (model->f.nterms == 0 || !m->opt.use_crossvalidation) {
        double rss = 0;
        for (int i = 0; i < n; i++) {
            double d = pmnf_eval(&model->f, &x[i]) - y[i];
            rss += d * d;
        }
        double mean = np_mean(y, n, -1);
        return mean != 0 ? sqrt(rss) / mean : NAN;
    }
    double nrss = 0, rss = 0, pred[64];
    if (n > 64 || single_loo_predictions(m, x, y, n, model, pred) < 0)
        return NAN;
    for (int i = 0; i < n; i++) {
        double d = pred[i] - y[i];
        rss += d * d;
        nrss += sqrt(rss) / np_mean(y, n, i) / n;
    }
    return nrss;
}

/* Extra-P's SegmentedModeler.create_model on sorted points; 1 with the
 * change point in *lo_idx, *hi_idx (equal when shared), 0 without two
 * regimes, -1 out of memory. */
static int find_change(pmnf_modeler *m, const double *x, const double *y, int n, int *lo_idx,
                       int *hi_idx)
{
    int nsub = n - (SEG_WINDOW - 1);
    if (nsub < 1)
        return 0; /* Extra-P fails here; one segment */
    double *nrss = malloc(sizeof(double) * 2 * (size_t)nsub);
    if (!nrss)
        return -1;
    double *eps = nrss + nsub, theta = -INFINITY;
    int theta_nan = 0;
    for (int s = 0; s < nsub; s++) {
        pmnf_model sub;
        if (single_fit(m, x + s, y + s, SEG_WINDOW, 0, 1, &sub) < 0) {
            free(nrss);
            return -1;
        }
        nrss[s] = fabs(model_nrss(m, x + s, y + s, SEG_WINDOW, &sub));
        if (isnan(nrss[s]))
            theta_nan = 1;
        else if (nrss[s] > theta)
            theta = nrss[s];
    }
    double epsmax = -INFINITY;
    eps[0] = -INFINITY;
    for (int s = 1; s < nsub; s++) {
        eps[s] = nrss[s] / (nrss[s - 1] + SEG_ETA);
        if (!isnan(eps[s]) && eps[s] > epsmax)
            epsmax = eps[s];
    }
    /* np.max propagates NaN: theta is then NaN and not > 0.5 */
    int segmented = (!theta_nan && theta > SEG_THETA) || epsmax > SEG_EPSILON;
    int rc = 0;
    if (segmented) {
        int ones = 0, marked[64], nm = 0;
        for (int s = 0; s < nsub; s++) {
            int on = nrss[s] >= SEG_NRSS || eps[s] > SEG_EPSILON;
            ones += on;
            if (on && nm < 64)
                marked[nm++] = s;
        }
        int index = marked[ones / 2 < nm ? ones / 2 : nm - 1];
        if (ones == SEG_WINDOW - 2) {
            *lo_idx = *hi_idx = index + SEG_WINDOW / 2;
        } else {
            int s = index - 1 < 0 ? nsub - 1 : index - 1;
            *lo_idx = s + SEG_WINDOW / 2;
            *hi_idx = s + SEG_WINDOW / 2 + 1;
        }
        rc = 1;
    }
    free(nrss);
    return rc;
}

/* Copies a segment's function and interval data into the second slot. */
static void take_upper(pmnf_model *out, const pmnf_model *up)
{
    out->f2 = up->f;
    out->dof2 = up->dof;
    out->ncoef2 = up->ncoef;
    out->sigma2_2 = up->sigma2;
    out->t975_2 = up->t975;
    memcpy(out->cov2, up->cov, sizeof out->cov2);
}

int segmented_fit(pmnf_modeler *m, const double *x0, const double *y0, int n, pmnf_model *out)
{
    xy *p = malloc(sizeof *p * (size_t)(n ? n : 1));
    double *x = malloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    if (!p || !x) {
        free(p);
        free(x);
        return -1;
    }
    double *y = x + n;
    for (int i = 0; i < n; i++)
        p[i] = (xy){x0[i], y0[i], i};
    qsort(p, (size_t)n, sizeof *p, xy_cmp);
    for (int i = 0; i < n; i++) {
        x[i] = p[i].x;
        y[i] = p[i].y;
    }
    free(p);
    int lo = 0, hi = 0, rc = n > 64 ? 0 : find_change(m, x, y, n, &lo, &hi);
    if (rc <= 0) {
        if (rc == 0)
            rc = single_fit(m, x, y, n, 0, 1, out);
        out->modeler = PMNF_MODELER_SEGMENTED;
        free(x);
        return rc;
    }
    pmnf_model below, above;
    if (single_fit(m, x, y, lo + 1, 0, 1, &below) < 0 ||
        single_fit(m, x + hi, y + hi, n - hi, 0, 1, &above) < 0) {
        free(x);
        return -1;
    }
    *out = below;
    out->modeler = PMNF_MODELER_SEGMENTED;
    out->npoints = n;
    out->nsegments = 2;
    out->break_lo = x[lo];
    out->break_hi = x[hi];
    out->warnings |= above.warnings;
    take_upper(out, &above);
    double *pred = modeler_scratch(m, n);
    if (!pred) {
        free(x);
        return -1;
    }
    for (int i = 0; i < n; i++)
        pred[i] = pmnf_model_eval(out, &x[i]);
    quality_measure(out, pred, y, n);
    out->cv_smape = out->smape;
    free(x);
    return 0;
}

int segmented_detect(pmnf_modeler *m, const double *x0, const double *y0, int n, double *break_lo,
                     double *break_hi, double *rss_segments)
{
    if (n < 2 * SEG_WINDOW - 1 || n > 64)
        return 0;
    pmnf_model seg;
    int rc = segmented_fit(m, x0, y0, n, &seg);
    if (rc < 0)
        return -1;
    if (seg.nsegments != 2)
        return 0;
    *break_lo = seg.break_lo;
    *break_hi = seg.break_hi;
    *rss_segments = seg.rss;
    return 1;
}
