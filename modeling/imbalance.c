/*
 * imbalance.c — load-imbalance factor, its summary over repetitions, and the
 * regression of epoch time on the parameters and the LIF (see imbalance.h).
 *
 * The regression is GSL's least squares by singular value decomposition with
 * column balancing; singular values below 1e-10 of the largest count as
 * zero, and a fit that loses a column that way is refused rather than
 * answered with arbitrary coefficients.
 */
#include "modeling/imbalance.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double imb_lif(const double *v, int n, int stride)
{
    double max = -INFINITY, sum = 0;
    int count = 0;
    for (int i = 0; i < n; i++) {
        double x = v[(size_t)i * (size_t)stride];
        if (isnan(x))
            continue;
        sum += x;
        if (x > max)
            max = x;
        count++;
    }
    if (count == 0 || !(sum > 0) || !isfinite(sum))
        return NAN;
    return max / (sum / count);
}

int imb_lif_bound(double value, double *lo, double *hi)
{
    if (!(value >= 1))
        return 1;
    if (*lo < 1)
        *lo = 1;
    (void)hi; /* at least the value, so at least 1 */
    return 0;
}

void imb_lif_reps(const double *m, int nranks, int nreps, double *out)
{
    for (int r = 0; r < nreps; r++)
        out[r] = imb_lif(m + r, nranks, nreps);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void imb_summarize(const double *v, int n, double *scratch, imb_summary *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]))
            scratch[k++] = v[i];
    out->n = k;
    if (k == 0) {
        out->median = out->min = out->max = NAN;
        return;
    }
    qsort(scratch, (size_t)k, sizeof *scratch, cmp_double);
    out->min = scratch[0];
    out->max = scratch[k - 1];
    out->median = k % 2 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
}

int imb_regress(const double *x, int nreg, const double *y, int nobs, imb_regression *out,
                char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    int p = nreg + 1;
    if (nreg < 1 || nreg > IMB_MAX_REGRESSORS) {
        snprintf(err, errcap, "1 to %d regressors, got %d", IMB_MAX_REGRESSORS, nreg);
        return -1;
    }
    if (nobs < p) {
        snprintf(err, errcap, "%d observation(s) for %d coefficients", nobs, p);
        return -1;
    }
    for (int i = 0; i < nobs; i++) {
        int ok = isfinite(y[i]);
        for (int j = 0; j < nreg && ok; j++)
            ok = isfinite(x[(size_t)i * nreg + j]);
        if (!ok) {
            snprintf(err, errcap, "observation %d is not a finite number", i + 1);
            return -1;
        }
    }
    gsl_matrix *X = gsl_matrix_alloc((size_t)nobs, (size_t)p);
    gsl_vector *Y = gsl_vector_alloc((size_t)nobs), *c = gsl_vector_alloc((size_t)p);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)nobs, (size_t)p);
    int rc = -1;
    if (!X || !Y || !c || !cov || !w) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    for (int i = 0; i < nobs; i++) {
        gsl_matrix_set(X, (size_t)i, 0, 1.0);
        for (int j = 0; j < nreg; j++)
            gsl_matrix_set(X, (size_t)i, (size_t)j + 1, x[(size_t)i * nreg + j]);
        gsl_vector_set(Y, (size_t)i, y[i]);
    }
    double chisq;
    size_t rank;
    /* GSL's handler is off for the process (pmnf_numeric_init): the status
     * says whether it worked */
    int status = gsl_multifit_linear_tsvd(X, Y, 1e-10, c, cov, &chisq, &rank, w);
    if (status || rank < (size_t)p) {
        snprintf(err, errcap,
                 "the regressors are collinear (rank %zu of %d): a regressor is constant or a "
                 "combination of the others",
                 status ? 0 : rank, p);
        goto done;
    }
    double mean = 0, tss = 0;
    for (int i = 0; i < nobs; i++)
        mean += y[i];
    mean /= nobs;
    for (int i = 0; i < nobs; i++)
        tss += (y[i] - mean) * (y[i] - mean);
    out->nobs = nobs;
    out->ncoef = p;
    out->dof = nobs - p;
    out->rss = chisq;
    out->r2 = tss > 0 ? 1 - chisq / tss : 1;
    out->adjusted_r2 = out->dof > 0 && tss > 0
                           ? 1 - (chisq / out->dof) / (tss / (nobs - 1))
                           : out->r2;
    for (int j = 0; j < p; j++) {
        out->coef[j] = gsl_vector_get(c, (size_t)j);
        /* GSL scales the covariance by chisq / dof, which is 0/0 without dof */
        double v = out->dof > 0 ? gsl_matrix_get(cov, (size_t)j, (size_t)j) : 0;
        out->se[j] = isfinite(v) && v > 0 ? sqrt(v) : 0;
    }
    rc = 0;
done:
    gsl_matrix_free(X);
    gsl_vector_free(Y);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
    if (w)
        gsl_multifit_linear_free(w);
    return rc;
}
