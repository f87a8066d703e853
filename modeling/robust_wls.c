/*
 * robust_wls.c — one hypothesis of the robust modeler: weighted least
 * squares, its criterion and the variance of its fitted mean.
 *
 * Rows are weighted by sqrt(1 / var_i) (robust_noise.c), so chi2 is the
 * weighted residual sum of squares; with repetitions it is a chi-square
 * statistic against the measured noise. The criterion is Akaike's: AIC =
 * chi2 + 2k when the noise is known from repetitions (for a linear model
 * with a known noise variance 2k is exactly the bias of chi2 as an estimate
 * of the expected discrepancy; the small-sample term of AICc,
 * 2k(k+1)/(m-k-1), corrects for a variance estimated from the residuals,
 * and on five points it charged a constant 6.7 where AIC charges 2), and
 * m ln(chi2/m) + 2(k+1) + half AICc's small-sample term for k+1 parameters
 * when the noise is estimated from the residuals (residual_noise_penalty).
 * Alone, AIC let chance fits of some of the
 * 84 growing one-parameter hypotheses outrank the constant on flat data;
 * the prior over the forms below is what keeps it (both measured in
 * docs/modeling.md). Run times are sums of non-negative costs, so a hypothesis
 * with a negative coefficient costs NEGATIVE_PENALTY more: it is only chosen
 * when no hypothesis with non-negative coefficients comes near the data.
 * A building block that multiplies a power by a logarithm costs LOG_PENALTY
 * per power of the logarithm (rb_block_penalty): a prior towards the
 * simpler growth classes, which with five noisy points are otherwise too
 * easily mimicked by a curved x^a log(x)^2.
 *
 * The prior over the hypotheses is uniform over their three forms (the
 * constant, c0 + c1 b(x), c1 b(x)) and then over the blocks of a form, not
 * uniform over all of them: the constant weighs as much as all the blocks
 * of one form together, 2 ln(blocks) less in the criterion
 * (rb_constant_prior). Uniform over all 85, the constant was one against 84
 * growing hypotheses, and on flat data the chance fits of some of them
 * outweighed it: with 15% noise 45% of the models of constant series grew
 * and 22% were off by more than 20% at 8x (AICc; with the prior and AIC 8%
 * and 4.6%, and the extrapolation error on growing series is lower).
 */
#include <math.h>
#include <string.h>

#include "modeling/robust_internal.h"

#define NEGATIVE_PENALTY 1000.0
#define NO_DOF_PENALTY 1e6
#define LOG_PENALTY 1.0

size_t rb_work_size(int m)
{
    return (size_t)m * (PMNF_MAX_COEFS + 1) + lsq_storage_size(m, PMNF_MAX_COEFS) + 8;
}

static double shape_at(const rb_series *s, const pmnf_function *f, int t, int i)
{
    return pmnf_term_shape(f, &f->terms[t], s->coords + (size_t)i * s->nparams);
}

int rb_fit(const rb_series *s, const int *idx, int m, rb_hyp *h, const double *col, double *work)
{
    int nt = h->f.nterms, hc = h->has_const;
    int k = hc + nt;
    h->k = k;
    h->ok = 0;
    if (k == 0 || m < k)
        return -1;
    double *a = work, *b = a + (size_t)m * k, *store = b + m;
    for (int r = 0; r < m; r++) {
        int i = idx ? idx[r] : r;
        double sw = sqrt(s->w[i]);
        b[r] = sw * s->y[i];
        if (hc)
            a[r] = sw;
        for (int t = 0; t < nt; t++) {
            double g = col ? col[(size_t)t * m + r] : shape_at(s, &h->f, t, i);
            a[(size_t)(hc + t) * m + r] = sw * g;
        }
    }
    lsq_factor f;
    if (lsq_factorize(a, m, k, &f, store) < 0 || f.rank_deficient)
        return -1;
    double x[PMNF_MAX_COEFS], c[PMNF_MAX_COEFS * PMNF_MAX_COEFS];
    lsq_solve(&f, b, x);
    if (lsq_inverse_normal(&f, c) < 0)
        return -1;
    /* the factorization overwrote nothing of a: residuals from a and b */
    double chi2 = 0;
    for (int r = 0; r < m; r++) {
        double p = 0;
        for (int j = 0; j < k; j++)
            p += a[(size_t)j * m + r] * x[j];
        chi2 += (b[r] - p) * (b[r] - p);
    }
    h->f.constant = hc ? x[0] : 0;
    for (int t = 0; t < nt; t++)
        h->f.terms[t].coef = x[hc + t];
    int nc = 1 + nt;
    memset(h->cov, 0, sizeof h->cov);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            h->cov[(i + !hc) * nc + (j + !hc)] = c[i * k + j];
    h->chi2 = chi2;
    h->ok = isfinite(chi2) && isfinite(h->f.constant);
    for (int t = 0; t < nt; t++)
        h->ok &= isfinite(h->f.terms[t].coef) != 0;
    return h->ok ? 0 : -1;
}

/* Without repetitions: Akaike's penalty 2k for k parameters (the variance
 * among them) plus SMALL_SAMPLE_SHARE of AICc's small-sample term
 * 2k(k+1)/(m-k-1), with the guard against a fit that leaves no residual
 * degree of freedom. The whole term charged a second coefficient 20 on
 * five points (AIC: 2), so c1 b(x) outranked c0 + c1 b(x) wherever the data
 * have an offset, and extrapolated 8x with twice to five times Extra-P's
 * p90 error at 2-5% noise; without the term flat series grew in a fifth of
 * the fits, even at 2% noise. Half of it keeps most of both (measured in
 * docs/modeling.md, "Without repetitions"). */
#define SMALL_SAMPLE_SHARE 0.5
static double residual_noise_penalty(int k, int m)
{
    if (m - k - 1 <= 0)
        return 2.0 * k + NO_DOF_PENALTY;
    return 2.0 * k + SMALL_SAMPLE_SHARE * 2.0 * k * (k + 1) / (m - k - 1);
}

/* Akaike's penalty with the noise known: 2k, with the same guard against a
 * fit that leaves no residual degree of freedom. */
static double aic_penalty(int k, int m)
{
    return m - k - 1 <= 0 ? 2.0 * k + NO_DOF_PENALTY : 2.0 * k;
}

double rb_small_sample_rest(int k, int m)
{
    int K = k + 1;
    return m - K - 1 > 0 ? (1 - SMALL_SAMPLE_SHARE) * 2.0 * K * (K + 1) / (m - K - 1) : 0;
}

double rb_constant_prior(int nblocks)
{
    return nblocks > 1 ? 2 * log((double)nblocks) : 0;
}

double rb_block_penalty(double poly, double log)
{
    return poly != 0 ? LOG_PENALTY * fabs(log) : 0;
}

double rb_score(const rb_series *s, double chi2, int k, int m, int negative)
{
    double c;
    if (s->have_reps) {
        c = chi2 + aic_penalty(k, m);
    } else {
        chi2 = chi2 > m * 1e-24 ? chi2 : m * 1e-24;
        c = m * log(chi2 / m) + residual_noise_penalty(k + 1, m);
    }
    return negative ? c + NEGATIVE_PENALTY : c;
}

double rb_criterion(const rb_series *s, const rb_hyp *h, int m)
{
    int negative = h->has_const && h->f.constant < 0;
    for (int t = 0; t < h->f.nterms; t++)
        negative |= h->f.terms[t].coef < 0;
    return rb_score(s, h->chi2, h->k, m, negative);
}

double rb_noise_scale(const rb_series *s, double chi2, int k, int m)
{
    double dof = m - k;
    if (s->have_reps)
        return dof > 0 && chi2 / dof > 1 ? chi2 / dof : 1;
    return dof > 0 ? chi2 / dof : INFINITY;
}

double rb_mean_variance(const rb_series *s, const rb_hyp *h, int m, const double *point)
{
    double g[PMNF_MAX_TERMS];
    for (int t = 0; t < h->f.nterms; t++)
        g[t] = pmnf_term_shape(&h->f, &h->f.terms[t], point);
    return rb_mean_variance_g(s, h, m, g);
}

double rb_mean_variance_g(const rb_series *s, const rb_hyp *h, int m, const double *shapes)
{
    int nc = 1 + h->f.nterms;
    double g[PMNF_MAX_COEFS];
    g[0] = 1;
    for (int t = 0; t < h->f.nterms; t++)
        g[t + 1] = shapes[t];
    double q = 0;
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < nc; j++)
            q += g[i] * h->cov[i * nc + j] * g[j];
    return q > 0 ? q * rb_noise_scale(s, h->chi2, h->k, m) : 0;
}

/* G (lower triangle), b = A'Wy and y'Wy in one pass over the points, the
 * column count a constant so that the compiler unrolls the inner loops. */
static inline __attribute__((always_inline)) void accumulate_k(const rb_series *s,
                                                               const double *const *cols, int k,
                                                               double *G, double *b, double *yy)
{
    for (int i = 0; i < s->n; i++) {
        double a[PMNF_MAX_COEFS], w = s->w[i], y = s->y[i];
        for (int p = 0; p < k; p++)
            a[p] = cols[p][i];
        for (int p = 0; p < k; p++) {
            double wa = w * a[p];
            b[p] += wa * y;
            for (int q = 0; q <= p; q++)
                G[p * k + q] += wa * a[q];
        }
        *yy += w * y * y;
    }
}

static void accumulate(const rb_series *s, const double *const *cols, int k, double *G, double *b,
                       double *yy)
{
    switch (k) {
    case 1:
        accumulate_k(s, cols, 1, G, b, yy);
        break;
    case 2:
        accumulate_k(s, cols, 2, G, b, yy);
        break;
    case 3:
        accumulate_k(s, cols, 3, G, b, yy);
        break;
    case 4:
        accumulate_k(s, cols, 4, G, b, yy);
        break;
    default:
        accumulate_k(s, cols, k, G, b, yy);
    }
}

/* The same as rb_fit on all points from the term columns col, by the
 * normal equations of the equilibrated design (Cholesky): several times
 * faster for the many small fits of the multi-parameter search; the chosen
 * hypothesis is refitted with rb_fit. */
int rb_fit_normal(const rb_series *s, rb_hyp *h, const double *col)
{
    int nt = h->f.nterms, hc = h->has_const, k = hc + nt, n = s->n;
    double G[PMNF_MAX_COEFS * PMNF_MAX_COEFS] = {0}, b[PMNF_MAX_COEFS] = {0};
    const double *cols[PMNF_MAX_COEFS];
    h->k = k;
    h->ok = 0;
    if (k == 0 || n <= k)
        return -1;
    for (int t = 0; t < nt; t++)
        cols[hc + t] = col + (size_t)t * n;
    if (hc)
        cols[0] = s->ones;
    double yy = 0;
    accumulate(s, cols, k, G, b, &yy);
    double d[PMNF_MAX_COEFS];
    for (int p = 0; p < k; p++) {
        if (!(G[p * k + p] > 0))
            return -1;
        d[p] = 1 / sqrt(G[p * k + p]);
    }
    /* equilibrate, then Cholesky L L' in the lower triangle */
    double L[PMNF_MAX_COEFS * PMNF_MAX_COEFS] = {0};
    for (int p = 0; p < k; p++)
        for (int q = 0; q <= p; q++)
            L[p * k + q] = G[p * k + q] * d[p] * d[q];
    for (int j = 0; j < k; j++) {
        double v = L[j * k + j];
        for (int l = 0; l < j; l++)
            v -= L[j * k + l] * L[j * k + l];
        if (!(v > 1e-10))
            return -1; /* (nearly) dependent columns */
        L[j * k + j] = sqrt(v);
        for (int i = j + 1; i < k; i++) {
            double u = L[i * k + j];
            for (int l = 0; l < j; l++)
                u -= L[i * k + l] * L[j * k + l];
            L[i * k + j] = u / L[j * k + j];
        }
    }
    /* inverse of the equilibrated matrix: column by column */
    double inv[PMNF_MAX_COEFS * PMNF_MAX_COEFS];
    for (int c = 0; c < k; c++) {
        double z[PMNF_MAX_COEFS];
        for (int i = 0; i < k; i++) {
            double u = i == c;
            for (int l = 0; l < i; l++)
                u -= L[i * k + l] * z[l];
            z[i] = u / L[i * k + i];
        }
        for (int i = k - 1; i >= 0; i--) {
            double u = z[i];
            for (int l = i + 1; l < k; l++)
                u -= L[l * k + i] * inv[l * k + c];
            inv[i * k + c] = u / L[i * k + i];
        }
    }
    double x[PMNF_MAX_COEFS];
    for (int p = 0; p < k; p++) {
        x[p] = 0;
        for (int q = 0; q < k; q++)
            x[p] += inv[p * k + q] * d[q] * b[q];
        x[p] *= d[p];
    }
    /* chi2 = y'Wy - 2 x'b + x'Gx, and Gx = b */
    double chi2 = yy;
    for (int p = 0; p < k; p++)
        chi2 -= x[p] * b[p];
    if (chi2 < 0)
        chi2 = 0;
    int nc = 1 + nt;
    memset(h->cov, 0, sizeof(double) * (size_t)nc * nc);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            h->cov[(i + !hc) * nc + (j + !hc)] = inv[i * k + j] * d[i] * d[j];
    h->f.constant = hc ? x[0] : 0;
    h->ok = isfinite(chi2) != 0;
    for (int t = 0; t < nt; t++) {
        h->f.terms[t].coef = x[hc + t];
        h->ok &= isfinite(x[hc + t]) != 0;
    }
    h->chi2 = chi2;
    return h->ok ? 0 : -1;
}
