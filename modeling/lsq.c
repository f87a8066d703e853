/*
 * lsq.c — least squares by scaled, re-orthogonalized Gram-Schmidt, with an
 * SVD fallback (GSL) for dependent columns. See lsq.h.
 *
 * Column norms whose sum of squares would overflow (or underflow) are taken
 * after dividing by the column's largest magnitude, so columns up to DBL_MAX
 * have a finite norm; the SVD works on the matrix times a power of two when
 * its entries are that large or small. Where neither happens the arithmetic
 * is the same as it always was, to the last bit.
 * GSL's status is checked: a decomposition that does not converge is
 * LSQ_NUMERIC, never an abort (pmnf_numeric_init() turns GSL's handler off).
 */
#include "modeling/lsq.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "modeling/pmnf.h"

size_t lsq_storage_size(int m, int k)
{
    return (size_t)k * (size_t)m + (size_t)k * (size_t)k + (size_t)k;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Largest |a[i]|. */
static double max_abs(const double *a, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

/* sqrt(sum a[i]^2) without overflow or underflow: the plain sum where it
 * is safe (the same rounding as always), else scaled by the largest. */
static double norm2(const double *a, int n)
{
    double plain = dot(a, a, n);
    if (isfinite(plain) && plain > 0x1p-900)
        return sqrt(plain);
    double m = max_abs(a, n);
    if (m == 0 || !isfinite(m))
        return m;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double t = a[i] / m;
        s += t * t;
    }
    return m * sqrt(s);
}

static int all_finite(const double *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return 0;
    return 1;
}

/* Minimum-norm solution operator via SVD, with numpy's default singular
 * value cut-off (eps * max(m, k) * largest singular value). The matrix is
 * multiplied by a power of two that brings its largest magnitude near 1
 * when it is beyond 2^+-500, which changes no singular value's ratio (and so
 * no cut-off) and keeps the arithmetic finite for entries up to DBL_MAX; the
 * pseudo-inverse is multiplied back. Writes the k x m pseudo-inverse into q. 0, LSQ_NUMERIC
 * when GSL's decomposition does not converge, -1 without memory. */
static int factorize_by_svd(const double *a, int m, int k, lsq_factor *f)
{
    /* GSL's SVD wants rows >= columns: pad with zero rows if needed. */
    int rows = m >= k ? m : k;
    gsl_matrix *u = gsl_matrix_calloc((size_t)rows, (size_t)k);
    gsl_matrix *v = gsl_matrix_alloc((size_t)k, (size_t)k);
    gsl_vector *s = gsl_vector_alloc((size_t)k);
    if (!u || !v || !s) {
        gsl_matrix_free(u);
        gsl_matrix_free(v);
        gsl_vector_free(s);
        return -1;
    }
    int e2 = 0;
    double big = max_abs(a, m * k);
    if (big > 0x1p500 || (big > 0 && big < 0x1p-500))
        frexp(big, &e2);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < k; j++)
            gsl_matrix_set(u, (size_t)i, (size_t)j, ldexp(a[j * m + i], -e2));
    int status = gsl_linalg_SV_decomp_jacobi(u, v, s);
    double smax = 0;
    for (int j = 0; j < k; j++)
        smax = fmax(smax, gsl_vector_get(s, (size_t)j));
    if (status || !isfinite(smax)) {
        gsl_matrix_free(u);
        gsl_matrix_free(v);
        gsl_vector_free(s);
        return LSQ_NUMERIC;
    }
    double cutoff = DBL_EPSILON * (m > k ? m : k) * smax;
    /* pinv = V diag(1/s) U', times the power of two back */
    for (int j = 0; j < k; j++) {
        for (int i = 0; i < m; i++) {
            double sum = 0;
            for (int l = 0; l < k; l++) {
                double sl = gsl_vector_get(s, (size_t)l);
                if (sl > cutoff)
                    sum += gsl_matrix_get(v, (size_t)j, (size_t)l) *
                           gsl_matrix_get(u, (size_t)i, (size_t)l) / sl;
            }
            f->q[j * m + i] = ldexp(sum, -e2);
        }
    }
    gsl_matrix_free(u);
    gsl_matrix_free(v);
    gsl_vector_free(s);
    f->rank_deficient = 1;
    return all_finite(f->q, (size_t)k * m) ? 0 : LSQ_NUMERIC;
}

int lsq_factorize(const double *a, int m, int k, lsq_factor *f, double *storage)
{
    f->m = m;
    f->k = k;
    f->rank_deficient = 0;
    f->q = storage;
    f->r = storage + (size_t)k * m;
    f->scale = f->r + (size_t)k * k;
    memset(f->r, 0, sizeof(double) * (size_t)k * k);
    if (!all_finite(a, (size_t)m * k))
        return -1;
    if (m < k)
        return factorize_by_svd(a, m, k, f);
    for (int j = 0; j < k; j++) {
        const double *col = a + (size_t)j * m;
        double *qj = f->q + (size_t)j * m;
        double norm = norm2(col, m);
        f->scale[j] = norm;
        if (norm == 0)
            return factorize_by_svd(a, m, k, f);
        for (int i = 0; i < m; i++)
            qj[i] = col[i] / norm;
        for (int pass = 0; pass < 2; pass++) {
            for (int l = 0; l < j; l++) {
                double *ql = f->q + (size_t)l * m;
                double c = dot(ql, qj, m);
                f->r[l * k + j] += c;
                for (int i = 0; i < m; i++)
                    qj[i] -= c * ql[i];
            }
        }
        double rjj = norm2(qj, m);
        /* the scaled column had norm 1: what is left is its independent part */
        if (!(rjj > 1e-13))
            return factorize_by_svd(a, m, k, f);
        f->r[j * k + j] = rjj;
        for (int i = 0; i < m; i++)
            qj[i] /= rjj;
    }
    return 0;
}

void lsq_solve(const lsq_factor *f, const double *b, double *x)
{
    int m = f->m, k = f->k;
    if (f->rank_deficient) {
        for (int j = 0; j < k; j++)
            x[j] = dot(f->q + (size_t)j * m, b, m);
        return;
    }
    double t[PMNF_MAX_COEFS];
    for (int j = 0; j < k; j++)
        t[j] = dot(f->q + (size_t)j * m, b, m);
    for (int j = k - 1; j >= 0; j--) {
        double s = t[j];
        for (int l = j + 1; l < k; l++)
            s -= f->r[j * k + l] * t[l];
        t[j] = s / f->r[j * k + j];
    }
    for (int j = 0; j < k; j++)
        x[j] = t[j] / f->scale[j];
}

void lsq_pinv(const lsq_factor *f, double *p)
{
    int m = f->m, k = f->k;
    if (f->rank_deficient) {
        memcpy(p, f->q, sizeof(double) * (size_t)k * m);
        return;
    }
    /* P = D^-1 R^-1 Q': row j = (q_j - sum_{l>j} r_jl row'_l) / r_jj, unscaled after */
    for (int j = k - 1; j >= 0; j--) {
        double *row = p + (size_t)j * m;
        memcpy(row, f->q + (size_t)j * m, sizeof(double) * (size_t)m);
        for (int l = j + 1; l < k; l++) {
            const double *other = p + (size_t)l * m;
            double r = f->r[j * k + l];
            for (int i = 0; i < m; i++)
                row[i] -= r * other[i];
        }
        for (int i = 0; i < m; i++)
            row[i] /= f->r[j * k + j];
    }
    for (int j = 0; j < k; j++)
        for (int i = 0; i < m; i++)
            p[(size_t)j * m + i] /= f->scale[j];
}

int lsq_inverse_normal(const lsq_factor *f, double *cov)
{
    int k = f->k;
    if (f->rank_deficient)
        return -1;
    /* Rinv: upper triangular inverse of R */
    double rinv[PMNF_MAX_COEFS * PMNF_MAX_COEFS] = {0};
    for (int j = 0; j < k; j++) {
        rinv[j * k + j] = 1.0 / f->r[j * k + j];
        for (int i = j - 1; i >= 0; i--) {
            double s = 0;
            for (int l = i + 1; l <= j; l++)
                s += f->r[i * k + l] * rinv[l * k + j];
            rinv[i * k + j] = -s / f->r[i * k + i];
        }
    }
    /* (A'A)^-1 = D^-1 Rinv Rinv' D^-1 */
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < k; j++) {
            double s = 0;
            for (int l = (i > j ? i : j); l < k; l++)
                s += rinv[i * k + l] * rinv[j * k + l];
            double d = f->scale[i] * f->scale[j];
            cov[i * k + j] = isfinite(d) && d > 0 ? s / d : s / f->scale[i] / f->scale[j];
        }
    }
    return 0;
}
