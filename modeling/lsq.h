/*
 * lsq.h — small dense linear least squares for the modelers.
 *
 * A design matrix A (m rows, k <= PMNF_MAX_COEFS columns) is factorized once
 * and the factorization solved against many right-hand sides: the columns
 * depend only on the coordinates, which all callpaths of an experiment share.
 * Columns are scaled to unit norm and orthogonalized (Gram-Schmidt, twice),
 * so the solution is accurate even for coordinates up to 1e6 and terms like
 * x^3. When the columns are (numerically) dependent the factorization falls
 * back to the minimum-norm solution of the unscaled problem with numpy's
 * default cut-off (eps * max(m, k) * largest singular value), which is what
 * Extra-P gets from numpy.linalg.lstsq.
 *
 * Storage for a factorization comes from the caller (lsq_storage_size()
 * doubles), so a modeler can keep thousands of them in one allocation.
 */
#ifndef PERFCAST_LSQ_H
#define PERFCAST_LSQ_H

#include <stddef.h>

typedef struct lsq_factor {
    int m, k;
    int rank_deficient; /* 1: q holds the k x m pseudo-inverse, r and scale unused */
    double *q;          /* k x m: rows are Q's columns (orthonormal) */
    double *r;          /* k x k upper triangular, row-major */
    double *scale;      /* k column norms */
} lsq_factor;

size_t lsq_storage_size(int m, int k);

/* What lsq_factorize returns when the arithmetic failed (an SVD that did
 * not converge, a pseudo-inverse that is not finite). */
#define LSQ_NUMERIC (-2)

/* a is m x k column-major (column j at a + j*m). Returns 0, -1 when a
 * holds a NaN or infinity or no memory for the fallback, or LSQ_NUMERIC. */
int lsq_factorize(const double *a, int m, int k, lsq_factor *f, double *storage);

/* x[k] = argmin |A x - b| for b[m]. */
void lsq_solve(const lsq_factor *f, const double *b, double *x);

/* The k x m solution operator P (x = P b) into p, row-major. */
void lsq_pinv(const lsq_factor *f, double *p);

/* (A'A)^-1 into cov (k x k, row-major). Returns -1 when rank deficient. */
int lsq_inverse_normal(const lsq_factor *f, double *cov);

#endif
