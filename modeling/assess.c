/*
 * assess.c — the checks behind the coded warnings of models and predictions
 * (see assess.h for what each one means and its threshold).
 *
 * The leave-one-out errors come from the hat matrix of the model's terms,
 * h_ii = g_i' (A'A)^-1 g_i with g_i = (1, term shapes at point i): point i's
 * residual had it been left out is r_i / (1 - h_ii). This holds exactly for
 * a least-squares refit with the same terms, whichever modeler chose them,
 * and needs no refit.
 */
#include "modeling/assess.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Distinct values of column p of d's coordinates; -1 when out of memory. */
static int count_distinct(const pmnf_data *d, int p)
{
    int n = d->npoints, k = d->nparams;
    double *v = malloc(sizeof(double) * (size_t)n);
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = d->coords[(size_t)i * k + p];
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    int distinct = n > 0;
    for (int i = 1; i < n; i++)
        distinct += v[i] != v[i - 1];
    free(v);
    return distinct;
}

/* Inverts the k x k matrix a (row-major) into inv by Gauss-Jordan with
 * partial pivoting. 0, or -1 when it is singular. */
static int invert(double *a, double *inv, int k)
{
    for (int i = 0; i < k * k; i++)
        inv[i] = i % (k + 1) == 0;
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r * k + c]) > fabs(a[piv * k + c]))
                piv = r;
        if (!(fabs(a[piv * k + c]) > 1e-12))
            return -1;
        for (int j = 0; j < k; j++) {
            double t = a[c * k + j];
            a[c * k + j] = a[piv * k + j];
            a[piv * k + j] = t;
            t = inv[c * k + j];
            inv[c * k + j] = inv[piv * k + j];
            inv[piv * k + j] = t;
        }
        double d = a[c * k + c];
        for (int j = 0; j < k; j++) {
            a[c * k + j] /= d;
            inv[c * k + j] /= d;
        }
        for (int r = 0; r < k; r++) {
            if (r == c || a[r * k + c] == 0)
                continue;
            double f = a[r * k + c];
            for (int j = 0; j < k; j++) {
                a[r * k + j] -= f * a[c * k + j];
                inv[r * k + j] -= f * inv[c * k + j];
            }
        }
    }
    return 0;
}

/* g = (1, term shapes at x), each column divided by scale (the hat matrix
 * does not depend on column scales; scaling keeps A'A well conditioned). */
static void design_row(const pmnf_function *f, const double *x, const double *scale, double *g)
{
    g[0] = 1;
    for (int t = 0; t < f->nterms; t++)
        g[t + 1] = pmnf_term_shape(f, &f->terms[t], x) / scale[t + 1];
}

/* The hat matrix' diagonal into h (n), of the least-squares fit weighted
 * by w (n; NULL: unweighted): h_i = w_i g_i' (A'WA)^-1 g_i. -1 when A'WA
 * is singular. */
static int hat_diagonal(const pmnf_function *f, const pmnf_data *d, const double *w, double *h)
{
    int k = f->nterms + 1, n = d->npoints;
    double scale[PMNF_MAX_COEFS], g[PMNF_MAX_COEFS];
    double ata[PMNF_MAX_COEFS * PMNF_MAX_COEFS] = {0}, inv[PMNF_MAX_COEFS * PMNF_MAX_COEFS];
    for (int j = 0; j < k; j++)
        scale[j] = 0;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < f->nterms; t++) {
            double s = fabs(pmnf_term_shape(f, &f->terms[t], d->coords + (size_t)i * d->nparams));
            if (s > scale[t + 1])
                scale[t + 1] = s;
        }
    scale[0] = 1;
    for (int j = 0; j < k; j++)
        if (!(scale[j] > 0) || !isfinite(scale[j]))
            return -1;
    for (int i = 0; i < n; i++) {
        design_row(f, d->coords + (size_t)i * d->nparams, scale, g);
        double wi = w ? w[i] : 1;
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k; b++)
                ata[a * k + b] += wi * g[a] * g[b];
    }
    if (invert(ata, inv, k) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        design_row(f, d->coords + (size_t)i * d->nparams, scale, g);
        double q = 0;
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k; b++)
                q += g[a] * inv[a * k + b] * g[b];
        h[i] = w ? w[i] * q : q;
    }
    return 0;
}

/* The point farthest out: the largest sum over the parameters of its
 * position in the measured range (log scale, 0 at the smallest, 1 at the
 * largest value). */
static int farthest_point(const pmnf_diagnostics *g, const pmnf_data *d)
{
    int best = 0;
    double best_pos = -INFINITY;
    for (int i = 0; i < d->npoints; i++) {
        double pos = 0;
        for (int p = 0; p < d->nparams; p++) {
            double x = d->coords[(size_t)i * d->nparams + p];
            double span = g->hi[p] - g->lo[p];
            pos += span > 0 ? (x - g->lo[p]) / span : 0;
        }
        if (pos > best_pos) {
            best_pos = pos;
            best = i;
        }
    }
    return best;
}

/* 1 when x lies at the largest measured value of some parameter. */
static int on_edge(const pmnf_diagnostics *g, const double *x, int k)
{
    for (int p = 0; p < k; p++)
        if (x[p] == g->hi[p] && g->hi[p] > g->lo[p])
            return 1;
    return 0;
}

/* The 95% half-width at x of the interval of the model refitted without
 * the point at x, in pmnf_predict()'s terms: t * sqrt(sigma2 q / (1 - h) +
 * noise), q = g' C g the model's own variance factor there, h its leverage
 * (for least squares q = h, and q / (1 - h) is the variance factor of the
 * prediction of a point the fit did not see), and noise the variance of a
 * measured value at v: sigma2, or for the robust modeler's relative noise
 * max(sigma2, noise_rel2 v^2). */
static double loo_half_width(const pmnf_model *m, const double *x, double lev, double v)
{
    double gv[PMNF_MAX_COEFS], q = 0;
    gv[0] = 1;
    for (int t = 0; t < m->f.nterms; t++)
        gv[t + 1] = pmnf_term_shape(&m->f, &m->f.terms[t], x);
    for (int a = 0; a < m->ncoef; a++)
        for (int b = 0; b < m->ncoef; b++)
            q += gv[a] * m->cov[a * m->ncoef + b] * gv[b];
    q = q > 0 ? q : 0;
    if (!(lev > 1e-9))
        return INFINITY;
    double rel = m->noise_rel2 * v * v;
    if (!(rel > m->sigma2))
        return m->t975 * sqrt(m->sigma2 * (1 + q / lev));
    return m->t975 * sqrt(m->sigma2 * q / lev + rel);
}

/* Leave-one-out errors: loo_smape over all points; and, of the points at
 * the largest measured value of a parameter, the one whose left-out
 * residual is largest against the 95% interval's half-width there (both
 * relative to the measurement). */
static int leave_one_out(pmnf_model *m, const pmnf_data *d)
{
    pmnf_diagnostics *g = &m->diag;
    int n = d->npoints;
    g->loo_smape = m->smape;
    g->far_loo_error = NAN;
    g->far_half_width = NAN;
    if (n <= m->f.nterms + 1)
        return 0;
    double *h = malloc(sizeof(double) * 2 * (size_t)n), *w = NULL;
    if (!h)
        return -1;
    /* the robust modeler's fits are weighted by the inverse noise of each
     * value (relative noise: its variance grows with the value squared),
     * and so are their leverages */
    if (m->modeler == PMNF_MODELER_ROBUST && m->noise_rel2 > 0) {
        w = h + n;
        for (int i = 0; i < n; i++) {
            double v = pmnf_model_eval(m, d->coords + (size_t)i * d->nparams);
            double var = m->noise_rel2 * v * v;
            w[i] = 1 / (var > m->sigma2 ? var : m->sigma2);
            if (!isfinite(w[i]) || !(w[i] > 0))
                w = NULL;
            if (!w)
                break;
        }
    }
    if (hat_diagonal(&m->f, d, w, h) < 0) {
        free(h);
        return 0;
    }
    double sum = 0, worst = -INFINITY;
    int far = farthest_point(g, d);
    for (int i = 0; i < n; i++) {
        const double *x = d->coords + (size_t)i * d->nparams;
        double fit = pmnf_model_eval(m, x), y = d->values[i];
        double lev = 1 - h[i];
        double loo = lev > 1e-9 ? y - (y - fit) / lev : INFINITY;
        double abssum = fabs(y) + fabs(loo);
        if (abssum > 0)
            sum += isfinite(loo) ? 2 * fabs(loo - y) / abssum : 2;
        if (y == 0 || (i != far && !on_edge(g, x, d->nparams)) ||
            (m->warnings & PMNF_WARN_NO_INTERVAL) || m->ncoef != m->f.nterms + 1)
            continue;
        double e = isfinite(loo) ? fabs(loo - y) / fabs(y) : INFINITY;
        double half = loo_half_width(m, x, lev, loo) / fabs(y);
        double ratio = half > 0 ? e / half : INFINITY;
        if (ratio > worst || isnan(ratio)) {
            worst = ratio;
            g->far_loo_error = e;
            g->far_half_width = half;
        }
    }
    g->loo_smape = sum / n * 100;
    free(h);
    return 0;
}

int pmnf_assess_model(pmnf_model *m, const pmnf_data *d)
{
    pmnf_diagnostics *g = &m->diag;
    memset(g, 0, sizeof *g);
    if (d->npoints < 1)
        return 0;
    for (int p = 0; p < d->nparams; p++) {
        g->lo[p] = g->hi[p] = d->coords[p];
        for (int i = 1; i < d->npoints; i++) {
            double x = d->coords[(size_t)i * d->nparams + p];
            g->lo[p] = x < g->lo[p] ? x : g->lo[p];
            g->hi[p] = x > g->hi[p] ? x : g->hi[p];
        }
        g->distinct[p] = count_distinct(d, p);
        if (g->distinct[p] < 0)
            return -1;
    }
    g->vmin = g->vmax = d->values[0];
    for (int i = 1; i < d->npoints; i++) {
        g->vmin = d->values[i] < g->vmin ? d->values[i] : g->vmin;
        g->vmax = d->values[i] > g->vmax ? d->values[i] : g->vmax;
    }
    if (leave_one_out(m, d) < 0)
        return -1;
    g->known = 1;

    unsigned w = 0;
    /* how much the data vary: largest over smallest, for positive data */
    double spread = g->vmin > 0 ? g->vmax / g->vmin
                                : (g->vmax > g->vmin ? INFINITY : 1);
    /* SMAPE means nothing on data that reach 0 (a speedup in percent
     * starting at 0): there only adjusted R^2 judges */
    if ((g->vmin > 0 && m->smape > PMNF_POOR_FIT_SMAPE) ||
        (m->ar2 < PMNF_POOR_FIT_AR2 && spread > PMNF_POOR_FIT_SPREAD))
        w |= PMNF_WARN_POOR_FIT;
    if (m->f.nterms == 0 && spread > PMNF_CONSTANT_SPREAD)
        w |= PMNF_WARN_CONSTANT_ON_VARYING;
    for (int p = 0; p < d->nparams; p++)
        if (g->distinct[p] < PMNF_FEW_VALUES)
            w |= PMNF_WARN_FEW_POINTS;
    /* had the farthest point been left out, the interval would have missed
     * it; or (Extra-P's intervals, which know only the residuals of the
     * chosen function) the interval rests on too few values of a parameter.
     * The robust modeler's intervals include the spread of the competing
     * hypotheses, and with 4 values they held as often as with more */
    int few = (w & PMNF_WARN_FEW_POINTS) && m->modeler != PMNF_MODELER_ROBUST;
    if (!(m->warnings & PMNF_WARN_NO_INTERVAL) &&
        (few || (isfinite(g->far_half_width) && !(g->far_loo_error <= g->far_half_width))))
        w |= PMNF_WARN_INTERVAL_UNRELIABLE;
    m->warnings |= w;
    return 0;
}

static void walk_path(const pmnf_model *m, const double *point, pmnf_point_check *out)
{
    const pmnf_diagnostics *g = &m->diag;
    int k = m->f.nparams;
    double c[PMNF_MAX_PARAMS], back[PMNF_MAX_PARAMS], x[PMNF_MAX_PARAMS];
    int outside = 0;
    for (int p = 0; p < k; p++) {
        c[p] = point[p] < g->lo[p] ? g->lo[p] : point[p] > g->hi[p] ? g->hi[p] : point[p];
        back[p] = point[p] > g->hi[p] ? g->lo[p] : point[p] < g->lo[p] ? g->hi[p] : c[p];
        outside |= c[p] != point[p];
        double r = g->lo[p] > 0 ? fmax(point[p] / g->hi[p], g->lo[p] / point[p]) : 1;
        if (r > out->far_factor) {
            out->far_factor = r;
            out->far_param = r > 1 ? p : -1;
        }
    }
    out->edge_value = pmnf_model_eval(m, c);
    out->min_value = out->edge_value;
    memcpy(out->min_at, c, sizeof(double) * (size_t)k);
    if (outside)
        out->growing = out->edge_value > pmnf_model_eval(m, back);
    for (int s = 1; outside && s <= PMNF_PATH_STEPS; s++) {
        double t = (double)s / PMNF_PATH_STEPS;
        for (int p = 0; p < k; p++)
            x[p] = s == PMNF_PATH_STEPS ? point[p]
                   : c[p] > 0   ? c[p] * pow(point[p] / c[p], t)
                                : c[p] + (point[p] - c[p]) * t;
        double v = pmnf_model_eval(m, x);
        if (v < out->min_value || isnan(v)) {
            out->min_value = v;
            memcpy(out->min_at, x, sizeof(double) * (size_t)k);
        }
    }
}

void pmnf_assess_point(const pmnf_model *m, const double *point, pmnf_point_check *out)
{
    memset(out, 0, sizeof *out);
    out->far_param = -1;
    out->value = pmnf_model_eval(m, point);
    out->min_value = out->value;
    out->edge_value = out->value;
    memcpy(out->min_at, point, sizeof(double) * (size_t)m->f.nparams);
    if (m->diag.known) {
        out->far_factor = 1;
        walk_path(m, point, out);
    }
    if (!(out->min_value > 0))
        out->warnings |= PMNF_WARN_NEGATIVE_PREDICTION;
    if (!m->diag.known)
        return;
    const pmnf_diagnostics *g = &m->diag;
    double fall = out->edge_value - PMNF_GROWTH_FALL * fabs(out->edge_value);
    if ((g->vmin > 0 && out->min_value < PMNF_IMPLAUSIBLE_FRACTION * g->vmin) ||
        (out->growing && out->min_value < fall))
        out->warnings |= PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION;
    if (out->far_factor > PMNF_FAR_FACTOR)
        out->warnings |= PMNF_WARN_EXTRAPOLATION_FAR;
}

void pmnf_assess_horizon(const pmnf_model *m, pmnf_point_check *out)
{
    double point[PMNF_MAX_PARAMS];
    for (int p = 0; p < m->f.nparams; p++)
        point[p] = m->diag.known ? PMNF_HORIZON * m->diag.hi[p] : 1;
    pmnf_assess_point(m, point, out);
    out->warnings &= ~(unsigned)PMNF_WARN_EXTRAPOLATION_FAR;
}
