/*
 * robust.c — the robust modeler: hypothesis search, model averaging for the
 * interval, and the fallback to Extra-P's modeler.
 *
 * The series comes from robust_noise.c (a center and a noise variance per
 * coordinate, from the repetitions). Every hypothesis is a weighted
 * least-squares fit scored by AICc (robust_wls.c), so a term is only kept
 * when it explains more than the measured noise, and a hypothesis without a
 * constant (one coefficient fewer) wins when the data allow it.
 *
 * One parameter: every building block b of the search space (Extra-P's,
 * negative exponents included when asked for) as c0 + c1 b(x) and c1 b(x),
 * and the constant; the lowest criterion wins.
 *
 * Several parameters: for each parameter, every block is scored on all lines
 * of points along which only that parameter varies (the sum over the lines
 * of the best of c_L + d_L b(x) and d_L b(x), each line with its own
 * coefficients: the shape of a parameter is the same on every line whether
 * the parameters add or multiply). The best few blocks per parameter (and
 * "does not grow") are then combined into sums and products, with and
 * without a constant, and fitted on all points; the lowest criterion wins.
 *
 * Interval: the chosen model's coefficient covariance (weighted, scaled by
 * the reduced chi-square when the fit is worse than the noise) is widened by
 * the spread of the competing hypotheses: with Akaike weights w_h, at the
 * reference point 4x the largest coordinate of every parameter,
 *   kappa^2 = sum_h w_h ((mu_h - mu)^2 + v_h) / v
 * (mu, v: the chosen model's mean and variance there), and the covariance is
 * multiplied by max(1, kappa^2). So the interval reflects both the noise and
 * the doubt about which growth class is the right one.
 *
 * Too few points (fewer than 4 along a parameter) for the criterion: the
 * model is Extra-P's, with the warning PMNF_WARN_ROBUST_FALLBACK.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "modeling/robust_internal.h"

#define MIN_LINE_POINTS 4
#define REF_FACTOR 4.0
#define MAX_COMBO_FITS 4096

/* Akaike-weighted moments of the competing hypotheses' predictions at the
 * reference point, accumulated relative to the best criterion seen so far. */
typedef struct mixture {
    int n, cap;
    double *crit, *mu, *var;
} mixture;

static int mixture_add(mixture *mx, double crit, double mu, double var)
{
    if (!isfinite(crit) || !isfinite(mu) || !isfinite(var))
        return 0;
    if (mx->n == mx->cap) {
        int cap = mx->cap ? 2 * mx->cap : 128;
        double *c = realloc(mx->crit, sizeof(double) * (size_t)cap * 3);
        if (!c)
            return -1;
        mx->crit = c;
        mx->mu = c + cap;
        mx->var = c + 2 * cap;
        /* the three arrays share one block: move the old parts apart */
        memmove(mx->var, c + 2 * mx->cap, sizeof(double) * (size_t)mx->n);
        memmove(mx->mu, c + mx->cap, sizeof(double) * (size_t)mx->n);
        mx->cap = cap;
    }
    mx->crit[mx->n] = crit;
    mx->mu[mx->n] = mu;
    mx->var[mx->n] = var;
    mx->n++;
    return 0;
}

/* max(1, kappa^2) for the chosen model (crit0, mu0, var0). */
static double mixture_kappa2(const mixture *mx, double crit0, double mu0, double var0)
{
    double sw = 0, s = 0;
    for (int i = 0; i < mx->n; i++) {
        double w = exp(-(mx->crit[i] - crit0) / 2);
        if (w < 1e-6)
            continue;
        double d = mx->mu[i] - mu0;
        sw += w;
        s += w * (d * d + mx->var[i]);
    }
    if (!(var0 > 0) || !(sw > 0))
        return 1;
    double k2 = s / sw / var0;
    return isfinite(k2) && k2 > 1 ? k2 : 1;
}

/* ---- closed-form fits of c0 + c1 g and c1 g ------------------------------ */

typedef struct fit2 {
    double c0, c1, chi2;
    double v00, v01, v11; /* (A'WA)^-1 */
    int ok;
} fit2;

static fit2 fit_two(const double *y, const double *w, const double *g, int m, int has_const)
{
    fit2 f = {0};
    double sw = 0, swg = 0, swy = 0;
    for (int i = 0; i < m; i++) {
        sw += w[i];
        swg += w[i] * g[i];
        swy += w[i] * y[i];
    }
    if (has_const) {
        double gb = swg / sw, yb = swy / sw, sgg = 0, sgy = 0;
        for (int i = 0; i < m; i++) {
            double dg = g[i] - gb;
            sgg += w[i] * dg * dg;
            sgy += w[i] * dg * (y[i] - yb);
        }
        if (!(sgg > 0) || sgg < 1e-24 * (swg * swg / sw))
            return f;
        f.c1 = sgy / sgg;
        f.c0 = yb - f.c1 * gb;
        f.v11 = 1 / sgg;
        f.v01 = -gb / sgg;
        f.v00 = 1 / sw + gb * gb / sgg;
    } else {
        double sgg = 0, sgy = 0;
        for (int i = 0; i < m; i++) {
            sgg += w[i] * g[i] * g[i];
            sgy += w[i] * g[i] * y[i];
        }
        if (!(sgg > 0))
            return f;
        f.c1 = sgy / sgg;
        f.v11 = 1 / sgg;
    }
    for (int i = 0; i < m; i++) {
        double r = y[i] - f.c0 - f.c1 * g[i];
        f.chi2 += w[i] * r * r;
    }
    f.ok = isfinite(f.chi2) && isfinite(f.c0) && isfinite(f.c1);
    return f;
}

static double fit_const_chi2(const double *y, const double *w, int m, double *c0, double *v00)
{
    double sw = 0, swy = 0, chi2 = 0;
    for (int i = 0; i < m; i++) {
        sw += w[i];
        swy += w[i] * y[i];
    }
    *c0 = swy / sw;
    *v00 = 1 / sw;
    for (int i = 0; i < m; i++)
        chi2 += w[i] * (y[i] - *c0) * (y[i] - *c0);
    return chi2;
}

/* ---- the search space ------------------------------------------------------ */

/* Extra-P's are_measurements_log_capable for the values x[0..n). */
static int log_capable(const double *x, int n, int negative_exponents)
{
    for (int i = 0; i < n; i++)
        if (negative_exponents ? x[i] <= 1.0 : x[i] < 1.0)
            return 0;
    return 1;
}

/* Block b's values at x[0..n) into g; 0 when some is not finite or all are
 * equal (then the block is the constant). */
static int block_column(const pmnf_block *b, int param, const double *x, int n, double *g)
{
    pmnf_factor f = {param, b->poly, b->log};
    int varies = 0;
    for (int i = 0; i < n; i++) {
        g[i] = pmnf_factor_eval(&f, x[i]);
        if (!isfinite(g[i]))
            return 0;
        varies |= g[i] != g[0];
    }
    return varies;
}

static double max_coord(const rb_series *s, int p)
{
    double m = -INFINITY;
    for (int i = 0; i < s->n; i++)
        if (s->coords[(size_t)i * s->nparams + p] > m)
            m = s->coords[(size_t)i * s->nparams + p];
    return m;
}

static void reference_point(const rb_series *s, double *ref)
{
    for (int p = 0; p < s->nparams; p++) {
        double m = max_coord(s, p);
        ref[p] = m > 0 ? m * REF_FACTOR : m;
    }
}

/* ---- one parameter ---------------------------------------------------------- */

/* The best single-parameter hypothesis on all points into best (shapes only;
 * robust_fit refits it). Every candidate goes into mx. */
static int search_single(const pmnf_modeler *m, const rb_series *s, const double *ref,
                         rb_hyp *best, double *best_crit, mixture *mx, double *g)
{
    int n = s->n;
    const double *x = s->coords;
    double c0, v00;
    double chi2 = fit_const_chi2(s->y, s->w, n, &c0, &v00);
    memset(best, 0, sizeof *best);
    best->f.nparams = 1;
    best->has_const = 1;
    *best_crit = rb_score(s, chi2, 1, n, c0 < 0);
    if (mixture_add(mx, *best_crit, c0, v00 * rb_noise_scale(s, chi2, 1, n)) < 0)
        return -1;
    int logs = log_capable(x, n, m->opt.allow_negative_exponents);
    for (int b = 0; b < m->nblocks; b++) {
        const pmnf_block *blk = &m->blocks[b];
        if ((blk->log != 0 && !logs) || !block_column(blk, 0, x, n, g))
            continue;
        pmnf_factor fac = {0, blk->poly, blk->log};
        double gr = pmnf_factor_eval(&fac, ref[0]);
        for (int hc = 1; hc >= 0; hc--) {
            fit2 f = fit_two(s->y, s->w, g, n, hc);
            if (!f.ok)
                continue;
            int k = 1 + hc;
            double crit = rb_score(s, f.chi2, k, n, f.c0 < 0 || f.c1 < 0);
            double var = (f.v00 + 2 * gr * f.v01 + gr * gr * f.v11) *
                         rb_noise_scale(s, f.chi2, k, n);
            if (mixture_add(mx, crit, f.c0 + f.c1 * gr, var) < 0)
                return -1;
            if (crit < *best_crit) {
                *best_crit = crit;
                memset(best, 0, sizeof *best);
                best->f.nparams = 1;
                best->has_const = hc;
                best->f.nterms = 1;
                best->f.terms[0].coef = 1;
                best->f.terms[0].nfactors = 1;
                best->f.terms[0].factors[0] = fac;
            }
        }
    }
    return 0;
}

/* ---- several parameters ----------------------------------------------------- */

/* The lines of points along parameter p: points grouped by their other
 * coordinates, groups with at least MIN_LINE_POINTS distinct values of p. */
typedef struct lines {
    int nlines;
    int *start; /* nlines + 1 */
    int *idx;
} lines;

static int same_others(const rb_series *s, int i, int j, int p)
{
    for (int q = 0; q < s->nparams; q++)
        if (q != p && s->coords[(size_t)i * s->nparams + q] != s->coords[(size_t)j * s->nparams + q])
            return 0;
    return 1;
}

static int distinct_values(const rb_series *s, const int *idx, int m, int p)
{
    int d = 0;
    for (int a = 0; a < m; a++) {
        int seen = 0;
        for (int b = 0; b < a && !seen; b++)
            seen = s->coords[(size_t)idx[a] * s->nparams + p] ==
                   s->coords[(size_t)idx[b] * s->nparams + p];
        d += !seen;
    }
    return d;
}

static int lines_build(const rb_series *s, int p, lines *L)
{
    int n = s->n;
    int *group = malloc(sizeof(int) * (size_t)n * 3 + sizeof(int));
    L->start = malloc(sizeof(int) * (size_t)(n + 1));
    L->idx = malloc(sizeof(int) * (size_t)n);
    L->nlines = 0;
    if (!group || !L->start || !L->idx) {
        free(group);
        free(L->start);
        free(L->idx);
        return -1;
    }
    int *rep = group + n, *members = rep + n, ng = 0;
    for (int i = 0; i < n; i++) {
        int g = -1;
        for (int k = 0; k < ng && g < 0; k++)
            if (same_others(s, i, rep[k], p))
                g = k;
        if (g < 0) {
            g = ng;
            rep[ng++] = i;
        }
        group[i] = g;
    }
    int used = 0;
    L->start[0] = 0;
    for (int k = 0; k < ng; k++) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (group[i] == k)
                members[m++] = i;
        if (distinct_values(s, members, m, p) < MIN_LINE_POINTS)
            continue;
        memcpy(L->idx + used, members, sizeof(int) * (size_t)m);
        used += m;
        L->start[++L->nlines] = used;
    }
    free(group);
    return 0;
}

static void lines_free(lines *L)
{
    free(L->start);
    free(L->idx);
}

/* A parameter's best blocks by their score summed over its lines. */
#define MAX_TOP 4
typedef struct ranking {
    int ntop;
    int block[MAX_TOP];
    double score[MAX_TOP];
    double const_score; /* the parameter does not matter */
} ranking;

static void ranking_insert(ranking *r, int cap, int b, double score)
{
    int pos = r->ntop;
    while (pos > 0 && score < r->score[pos - 1])
        pos--;
    if (pos >= cap)
        return;
    int last = r->ntop < cap ? r->ntop : cap - 1;
    for (int i = last; i > pos; i--) {
        r->block[i] = r->block[i - 1];
        r->score[i] = r->score[i - 1];
    }
    r->block[pos] = b;
    r->score[pos] = score;
    if (r->ntop < cap)
        r->ntop++;
}

/* Scores every block for parameter p on its lines. buf: 4n doubles. */
static void rank_parameter(const pmnf_modeler *m, const rb_series *s, const lines *L, int p,
                           int cap, ranking *r, double *buf)
{
    int n = s->n;
    double *x = buf, *y = buf + n, *w = buf + 2 * n, *g = buf + 3 * n;
    int total = L->start[L->nlines];
    for (int a = 0; a < total; a++) {
        int i = L->idx[a];
        x[a] = s->coords[(size_t)i * s->nparams + p];
        y[a] = s->y[i];
        w[a] = s->w[i];
    }
    memset(r, 0, sizeof *r);
    for (int l = 0; l < L->nlines; l++) {
        int o = L->start[l], len = L->start[l + 1] - o;
        double c0, v00, chi2 = fit_const_chi2(y + o, w + o, len, &c0, &v00);
        r->const_score += rb_score(s, chi2, 1, len, c0 < 0);
    }
    int logs = log_capable(x, total, m->opt.allow_negative_exponents);
    for (int b = 0; b < m->nblocks; b++) {
        const pmnf_block *blk = &m->blocks[b];
        if ((blk->log != 0 && !logs) || !block_column(blk, p, x, total, g))
            continue;
        double score = 0;
        for (int l = 0; l < L->nlines && isfinite(score); l++) {
            int o = L->start[l], len = L->start[l + 1] - o;
            double bestl = INFINITY;
            for (int hc = 1; hc >= 0; hc--) {
                fit2 f = fit_two(y + o, w + o, g + o, len, hc);
                if (!f.ok)
                    continue;
                double c = rb_score(s, f.chi2, 1 + hc, len, f.c0 < 0 || f.c1 < 0);
                if (c < bestl)
                    bestl = c;
            }
            score += bestl;
        }
        if (isfinite(score))
            ranking_insert(r, cap, b, score);
    }
}

/* The hypothesis of one combination: choice[p] = index into the ranking of
 * parameter p, or -1 (absent); form 0 sum, 1 product. */
static int combo_shape(const pmnf_modeler *m, const ranking *rk, const int *choice, int nparams,
                       int form, int has_const, rb_hyp *h)
{
    memset(h, 0, sizeof *h);
    h->f.nparams = nparams;
    h->has_const = has_const;
    int active = 0;
    for (int p = 0; p < nparams; p++) {
        if (choice[p] < 0)
            continue;
        const pmnf_block *blk = &m->blocks[rk[p].block[choice[p]]];
        pmnf_factor fac = {p, blk->poly, blk->log};
        pmnf_term *t = form == 1 && active ? &h->f.terms[0] : &h->f.terms[h->f.nterms++];
        t->coef = 1;
        t->factors[t->nfactors++] = fac;
        active++;
    }
    return active;
}

static int search_multi(const pmnf_modeler *m, const rb_series *s, const double *ref,
                        rb_hyp *best, double *best_crit, mixture *mx, double *buf, double *work)
{
    int np = s->nparams, n = s->n;
    int cap = np <= 2 ? 4 : np == 3 ? 2 : 1;
    ranking rk[PMNF_MAX_PARAMS];
    for (int p = 0; p < np; p++) {
        lines L;
        if (lines_build(s, p, &L) < 0)
            return -1;
        rank_parameter(m, s, &L, p, cap, &rk[p], buf);
        lines_free(&L);
    }
    /* the constant */
    rb_hyp h;
    memset(best, 0, sizeof *best);
    best->f.nparams = np;
    best->has_const = 1;
    *best_crit = INFINITY;
    int choice[PMNF_MAX_PARAMS];
    for (int p = 0; p < np; p++)
        choice[p] = -1;
    int fits = 0;
    for (;;) {
        int active = 0;
        for (int p = 0; p < np; p++)
            active += choice[p] >= 0;
        for (int form = 0; form < (active >= 2 ? 2 : 1); form++) {
            for (int hc = 1; hc >= (active ? 0 : 1); hc--) {
                combo_shape(m, rk, choice, np, form, hc, &h);
                if (fits++ > MAX_COMBO_FITS || rb_fit(s, NULL, n, &h, NULL, work) < 0)
                    continue;
                double crit = rb_criterion(s, &h, n);
                double mu = pmnf_eval(&h.f, ref);
                if (mixture_add(mx, crit, mu, rb_mean_variance(s, &h, n, ref)) < 0)
                    return -1;
                if (crit < *best_crit) {
                    *best_crit = crit;
                    *best = h;
                }
            }
        }
        /* next combination: an odometer over -1 .. ntop-1 per parameter */
        int p = 0;
        while (p < np && ++choice[p] >= rk[p].ntop) {
            choice[p] = -1;
            p++;
        }
        if (p == np)
            break;
    }
    return 0;
}

/* ---- the model ----------------------------------------------------------------- */

static int enough_points(const rb_series *s, int *ok)
{
    *ok = 1;
    if (s->nparams == 1) {
        *ok = s->n >= MIN_LINE_POINTS;
        if (*ok) {
            int *all = malloc(sizeof(int) * (size_t)s->n);
            if (!all)
                return -1;
            for (int i = 0; i < s->n; i++)
                all[i] = i;
            *ok = distinct_values(s, all, s->n, 0) >= MIN_LINE_POINTS;
            free(all);
        }
        return 0;
    }
    for (int p = 0; p < s->nparams && *ok; p++) {
        lines L;
        if (lines_build(s, p, &L) < 0)
            return -1;
        *ok = L.nlines > 0;
        lines_free(&L);
    }
    return 0;
}

static void finish_model(const rb_series *s, const rb_hyp *best, double kappa2, pmnf_model *out,
                         double *pred)
{
    int n = s->n;
    out->f = best->f;
    for (int i = 0; i < n; i++)
        pred[i] = pmnf_eval(&out->f, s->coords + (size_t)i * s->nparams);
    quality_measure(out, pred, s->y, n);
    out->cv_smape = out->smape;
    /* interval: t * sqrt(sigma2 (1 + g' C g)) with sigma2 the variance of the
     * least noisy measured mean, so that sigma2 * C is the covariance */
    int nc = 1 + best->f.nterms;
    double scale = rb_noise_scale(s, best->chi2, best->k, n) * kappa2;
    double sigma2 = INFINITY;
    for (int i = 0; i < n; i++)
        if (s->var[i] < sigma2)
            sigma2 = s->var[i];
    sigma2 *= s->have_reps ? 1 : rb_noise_scale(s, best->chi2, best->k, n);
    double dof = s->have_reps ? s->dof : n - best->k;
    out->ncoef = nc;
    out->dof = (int)dof;
    if (!(dof >= 1) || !(sigma2 > 0) || !isfinite(sigma2) || !isfinite(scale)) {
        out->warnings |= PMNF_WARN_NO_INTERVAL;
        return;
    }
    out->sigma2 = sigma2;
    out->t975 = gsl_cdf_tdist_Pinv(0.975, dof);
    for (int i = 0; i < nc * nc; i++) {
        out->cov[i] = best->cov[i] * scale / sigma2;
        if (!isfinite(out->cov[i])) {
            memset(out->cov, 0, sizeof out->cov);
            out->sigma2 = 0;
            out->t975 = 0;
            out->warnings |= PMNF_WARN_NO_INTERVAL;
            return;
        }
    }
}

static int fall_back(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out, char *err,
                     size_t errcap)
{
    pmnf_modeler_kind k = m->opt.modeler;
    m->opt.modeler = PMNF_MODELER_EXTRAP;
    int rc = pmnf_fit(m, d, out, err, errcap);
    m->opt.modeler = k;
    out->warnings |= PMNF_WARN_ROBUST_FALLBACK;
    out->modeler = PMNF_MODELER_EXTRAP;
    return rc;
}

int robust_fit(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps, pmnf_model *out,
               char *err, size_t errcap)
{
    rb_series s;
    if (rb_series_build(&s, d, reps) < 0)
        goto oom;
    int ok;
    if (enough_points(&s, &ok) < 0) {
        rb_series_free(&s);
        goto oom;
    }
    if (!ok) {
        rb_series_free(&s);
        return fall_back(m, d, out, err, errcap);
    }
    int n = d->npoints;
    double *buf = malloc(sizeof(double) * ((size_t)n * 4 + rb_work_size(n)));
    mixture mx = {0};
    rb_hyp best;
    double crit, ref[PMNF_MAX_PARAMS];
    reference_point(&s, ref);
    int rc = buf ? 0 : -1;
    if (!rc && d->nparams == 1) {
        rc = search_single(m, &s, ref, &best, &crit, &mx, buf);
        if (!rc && rb_fit(&s, NULL, n, &best, NULL, buf) < 0)
            rc = -2;
    } else if (!rc) {
        rc = search_multi(m, &s, ref, &best, &crit, &mx, buf, buf + 4 * (size_t)n);
        if (!rc && !isfinite(crit))
            rc = -2;
    }
    if (rc == 0) {
        memset(out, 0, sizeof *out);
        out->npoints = n;
        out->modeler = PMNF_MODELER_ROBUST;
        if (!s.have_reps)
            out->warnings |= PMNF_WARN_NO_REPETITIONS;
        double mu = pmnf_eval(&best.f, ref), var = rb_mean_variance(&s, &best, n, ref);
        finish_model(&s, &best, mixture_kappa2(&mx, crit, mu, var), out, buf);
    }
    free(buf);
    free(mx.crit);
    rb_series_free(&s);
    if (rc == -2)
        return fall_back(m, d, out, err, errcap);
    if (rc < 0)
        goto oom;
    return 0;
oom:
    snprintf(err, errcap, "out of memory");
    return -1;
}
