/*
 * quality.c — how well a model fits: RSS, SMAPE, adjusted R^2, term
 * contributions, and the data a 95% prediction interval needs.
 *
 * SMAPE follows Extra-P: 2|p - a| / (|a| + |p|) per point, points where both
 * are 0 add nothing, the mean taken in percent.
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "modeling/modeler_internal.h"

/* skip_zero_in_count: divide by the number of points with |a|+|p| != 0 (as
 * Extra-P's vectorized single-parameter cost does) instead of by n. */
double quality_smape(const double *pred, const double *y, int n, int skip_zero_in_count)
{
    double sum = 0;
    int counted = 0;
    for (int i = 0; i < n; i++) {
        double abssum = fabs(y[i]) + fabs(pred[i]);
        if (abssum != 0) {
            sum += fabs(pred[i] - y[i]) / abssum * 2;
            counted++;
        }
    }
    int div = skip_zero_in_count ? counted : n;
    return div ? sum / div * 100 : 0;
}

void quality_measure(pmnf_model *out, const double *pred, const double *y, int n)
{
    double mean = 0, tss = 0, rss = 0;
    for (int i = 0; i < n; i++)
        mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++) {
        tss += (y[i] - mean) * (y[i] - mean);
        rss += (pred[i] - y[i]) * (pred[i] - y[i]);
    }
    out->rss = rss;
    out->smape = quality_smape(pred, y, n, 0);
    int p = out->f.nterms;
    double r2 = tss > 0 ? 1 - rss / tss : (rss == 0 ? 1 : 0);
    if (n - p - 1 > 0)
        out->ar2 = 1 - (1 - r2) * (n - 1.0) / (n - p - 1.0);
    else
        out->ar2 = r2;
    if (!isfinite(out->ar2))
        out->ar2 = 0;
}

/* Largest |coef * term / y| over the points; NaN when some point has 0/0,
 * which (as in Extra-P, where numpy's max propagates NaN) rejects nothing. */
double quality_max_contribution(const double *term, double coef, const double *y, int n)
{
    double best = -INFINITY;
    for (int i = 0; i < n; i++) {
        double c = fabs(coef * term[i] / y[i]);
        if (isnan(c))
            return NAN;
        if (c > best)
            best = c;
    }
    return best;
}

void quality_interval(pmnf_model *out, const lsq_factor *f)
{
    int k = out->f.nterms + 1;
    out->ncoef = k;
    out->dof = out->npoints - k;
    memset(out->cov, 0, sizeof out->cov);
    out->sigma2 = 0;
    out->t975 = 0;
    if (!f && k == 1 && out->dof > 0) {
        out->cov[0] = 1.0 / out->npoints; /* the mean's design: one column of ones */
    } else if (out->dof <= 0 || !f || f->k != k || lsq_inverse_normal(f, out->cov) < 0) {
        out->warnings |= PMNF_WARN_NO_INTERVAL;
        memset(out->cov, 0, sizeof out->cov);
        return;
    }
    out->sigma2 = out->rss / out->dof;
    out->t975 = gsl_cdf_tdist_Pinv(0.975, out->dof);
    for (int i = 0; i < k * k; i++) {
        if (!isfinite(out->cov[i]) || !isfinite(out->t975) || !isfinite(out->sigma2)) {
            out->warnings |= PMNF_WARN_NO_INTERVAL;
            memset(out->cov, 0, sizeof out->cov);
            out->sigma2 = 0;
            out->t975 = 0;
            return;
        }
    }
}
