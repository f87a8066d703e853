/*
 * robust.c — the robust modeler: hypothesis search, choice and interval,
 * and the explicit fallback to Extra-P's modeler.
 *
 * The series comes from robust_noise.c (a center and a noise variance per
 * coordinate, from the repetitions). Every hypothesis is a weighted
 * least-squares fit scored by AICc with a prior against negative
 * coefficients and towards simple growth classes (robust_wls.c), so a term
 * is only kept when it explains more than the measured noise, and a
 * hypothesis without a constant (one coefficient fewer) wins when the data
 * allow it.
 *
 * One parameter: every building block b of the search space (Extra-P's,
 * negative exponents included when asked for) as c0 + c1 b(x) and c1 b(x),
 * and the constant.
 *
 * Several parameters: for each parameter, every block is scored on all lines
 * of points along which only that parameter varies (the sum over the lines
 * of the best of c_L + d_L b(x) and d_L b(x), each line with its own
 * coefficients: a parameter's shape is the same on every line whether the
 * parameters add or multiply). The best few blocks per parameter, or its
 * absence, are combined into sums and products, with and without a
 * constant, and fitted on all points.
 *
 * Of all hypotheses fitted, the model is the weighted median prediction at
 * the reference point, and its interval is widened by the spread of the
 * others (robust_mixture.c). The interval is stored in pmnf_model's terms,
 * y +- t * sqrt(sigma2 g' C g + max(sigma2, noise_rel2 y^2)): sigma2 is the
 * variance of the least noisy measured center, sigma2 * C the covariance of
 * the coefficients and noise_rel2 the relative variance of a measured
 * center (pooled from the repetitions, scaled up by a lack of fit), so that
 * the interval holds a measured value where it is asked.
 *
 * Among the hypotheses, those whose predictions stay positive and keep the
 * measured direction from the data to the extrapolation horizon (8x the
 * largest coordinates, horizon.c) are preferred: an impossible time is only
 * answered when no hypothesis avoids it (the predictions' warnings say so,
 * assess.c); below half the smallest measurement only when the hypothesis
 * fits the measurements within their noise. Negative exponents
 * (strong scaling) are searched along parameters the data fall with. Exact
 * constants give the constant. Points are put in a canonical order first
 * (robust_order.c), so the model does not depend on the order of the
 * measurements to the last bit. Two regimes along a parameter (Extra-P's
 * segmented test, segmented.c) give the warning two_regimes with the
 * change point in the model.
 *
 * Too few points (fewer than 4 distinct values along a parameter) for the
 * criterion: the model is Extra-P's, with the warning
 * PMNF_WARN_ROBUST_FALLBACK, and without an interval (PMNF_WARN_NO_INTERVAL:
 * with at most one residual degree of freedom per hypothesis nothing bounds
 * the error of the growth class chosen). Points on one curve (every
 * parameter rising with every step) cannot separate the parameters: the
 * model is the single-parameter one along the first parameter, with
 * PMNF_WARN_PARAMETERS_CONFOUNDED.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "modeling/robust_internal.h"
#include "modeling/trend.h"


/* ---- closed-form fits of c0 + c1 g and c1 g ------------------------------ */

typedef struct fit2 {
    double c0, c1, chi2;
    double v00, v01, v11; /* (A'WA)^-1 */
    int ok;
} fit2;

/* Both c0 + c1 g (into f[1]) and c1 g (into f[0]) by weighted least squares,
 * from centered sums (two passes over the points). */
static void fit_two(const double *y, const double *w, const double *g, int m, fit2 f[2])
{
    double sw = 0, swg = 0, swy = 0;
    for (int i = 0; i < m; i++) {
        sw += w[i];
        swg += w[i] * g[i];
        swy += w[i] * y[i];
    }
    double gb = swg / sw, yb = swy / sw;
    double cgg = 0, cgy = 0, cyy = 0;
    for (int i = 0; i < m; i++) {
        double dg = g[i] - gb, dy = y[i] - yb;
        cgg += w[i] * dg * dg;
        cgy += w[i] * dg * dy;
        cyy += w[i] * dy * dy;
    }
    /* raw sums from the centered ones: sum w g^2 = cgg + sw gb^2, ... */
    double sgg = cgg + sw * gb * gb, sgy = cgy + sw * gb * yb, syy = cyy + sw * yb * yb;
    memset(f, 0, 2 * sizeof *f);
    if (cgg > 1e-24 * sw * gb * gb && cgg > 0) {
        f[1].c1 = cgy / cgg;
        f[1].c0 = yb - f[1].c1 * gb;
        f[1].v11 = 1 / cgg;
        f[1].v01 = -gb / cgg;
        f[1].v00 = 1 / sw + gb * gb / cgg;
        f[1].chi2 = cyy - f[1].c1 * cgy;
        if (f[1].chi2 < 0)
            f[1].chi2 = 0;
        f[1].ok = isfinite(f[1].chi2) && isfinite(f[1].c0) && isfinite(f[1].c1);
    }
    if (sgg > 0) {
        f[0].c1 = sgy / sgg;
        f[0].v11 = 1 / sgg;
        f[0].chi2 = syy - f[0].c1 * sgy;
        if (f[0].chi2 < 0)
            f[0].chi2 = 0;
        f[0].ok = isfinite(f[0].chi2) && isfinite(f[0].c1);
    }
}

static double fit_const(const double *y, const double *w, int m, double *c0, double *v00)
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

/* Criterion of a fit2 of block b (hc: with constant) on m points. */
static double fit2_crit(const rb_series *s, const rb_cache *c, int b, const fit2 *f, int hc,
                        int npts)
{
    return rb_score(s, f->chi2, 1 + hc, npts, f->c0 < 0 || f->c1 < 0) +
           rb_block_penalty(c->blocks[b].poly, c->blocks[b].log);
}

/* Block b may describe parameter p of this series: the modeler's own
 * blocks always, the added negative ones where the data fall with p. */
static int block_allowed(const rb_cache *c, const rb_series *s, int p, int b)
{
    return c->usable[(size_t)p * c->nblocks + b] && (!c->negative[b] || s->path.dir[p] < 0);
}

/* How many blocks may describe parameter p of this series. */
static int allowed_blocks(const rb_cache *c, const rb_series *s, int p)
{
    int k = 0;
    for (int b = 0; b < c->nblocks; b++)
        k += block_allowed(c, s, p, b);
    return k;
}

/* The RB_OK_* bits of a path judgement (horizon.c). */
static int ok_bits(unsigned flags)
{
    int ok = 0;
    if (!(flags & (PMNF_PATH_NONPOSITIVE | PMNF_PATH_COLLAPSE | PMNF_PATH_REVERSED)))
        ok |= RB_OK_STRICT;
    if (!(flags & PMNF_PATH_FLOOR))
        ok |= RB_OK_FLOOR;
    return ok;
}

/* RB_FITS when chi2 with k coefficients on the series' points is within the
 * measured noise (reduced chi-square at most RB_FIT_ADEQUATE), or its
 * residuals are small anyway: at most RB_FIT_RELATIVE of the values (root
 * mean square; the weights are 1 / (relative variance x scale^2), so
 * chi2 x cv2 / (n - k) is the mean squared relative residual of a center,
 * and without repetitions chi2 / (n - k) is). */
#define RB_FIT_RELATIVE 0.05
static int fits_bit(const rb_series *s, double chi2, int k)
{
    if (s->n <= k)
        return 0;
    double red = chi2 / (s->n - k);
    double rel2 = s->have_reps ? red * s->cv2 : red;
    if ((s->have_reps && red <= RB_FIT_ADEQUATE) || rel2 <= RB_FIT_RELATIVE * RB_FIT_RELATIVE)
        return RB_FITS;
    return 0;
}

/* The RB_OK_* bits of c0 + c1 g(x) on the path to the horizon (one
 * parameter). Where g is monotone on the path (almost every block) so is
 * the hypothesis: its ends decide positivity and the floor and its slope
 * the direction; only a slope against the data's direction, or a growing
 * series low at its largest coordinate, needs the values one by one. */
static int single_plausible(const rb_series *s, const rb_cache *c, int b, double c0, double c1)
{
    const pmnf_path *P = &s->path;
    if (!P->all_positive)
        return RB_OK_STRICT | RB_OK_FLOOR;
    if (b < 0)
        return (c0 > 0 ? RB_OK_STRICT : 0) | (c0 >= 0.5 * P->ymin ? RB_OK_FLOOR : 0);
    const double *gp = c->gpath + (size_t)b * PMNF_PATH_LINE;
    int mono = c->gmono[b];
    if (mono != 0) {
        double v0 = c0 + c1 * gp[0], vl = c0 + c1 * gp[PMNF_PATH_LINE - 1];
        double vh = c0 + c1 * gp[PMNF_PATH_IN - 1];
        double slope = c1 * mono, lo = v0 < vl ? v0 : vl;
        if (!(lo > 0))
            return 0;
        int against = (P->dir[0] > 0 && slope < 0) || (P->dir[0] < 0 && slope > 0);
        if (!against && !(P->dir[0] > 0 && vh < 0.5 * P->ymin))
            return RB_OK_STRICT | (lo >= 0.5 * P->ymin ? RB_OK_FLOOR : 0);
    }
    double v[PMNF_PATH_LINE];
    for (int k = 0; k < PMNF_PATH_LINE; k++)
        v[k] = c0 + c1 * gp[k];
    return ok_bits(pmnf_path_judge(P, v));
}

static void single_shape(const rb_cache *c, int tag, rb_hyp *h)
{
    memset(h, 0, sizeof *h);
    h->f.nparams = 1;
    h->has_const = 1;
    if (tag < 0)
        return;
    h->has_const = tag % 2;
    h->f.nterms = 1;
    h->f.terms[0].coef = 1;
    h->f.terms[0].nfactors = 1;
    h->f.terms[0].factors[0] = (pmnf_factor){0, c->blocks[tag / 2].poly, c->blocks[tag / 2].log};
}

/* The RB_OK_* and RB_FITS bits of the constant c0 (chi2 on the series).
 * Without repetitions nothing measures the noise but the residuals, and
 * with few points the criterion's charge for a coefficient and the
 * constant's class prior can make a constant win on data that rise or fall
 * in order at every step (1, 2, 3, 4, 5 with a coordinate below 1, where
 * log terms are left out, was the constant 1.53 under AICc's whole term).
 * When the order of the values along the parameter is significant
 * (Kendall's test, trend.h, at TREND_ALPHA) and the constant does not fit
 * within RB_FIT_RELATIVE, it does not keep the measured direction: it
 * loses RB_OK_STRICT, and is only weighed when no hypothesis keeps the
 * rules. On bench_robust's one-parameter series without repetitions at 15%
 * noise the p90 is 41.9% with the rule and 76.4% without (Extra-P's
 * 56.1%). With repetitions the noise is measured and the criterion
 * decides. */
#define TREND_ALPHA 0.05
static int constant_plausible(const rb_series *s, const rb_cache *c, double c0, double chi2)
{
    int ok = single_plausible(s, c, -1, c0, 0) | fits_bit(s, chi2, 1);
    if (!s->have_reps && !(ok & RB_FITS) && pmnf_trend_p(s->coords, s->y, s->n) < TREND_ALPHA)
        ok &= ~RB_OK_STRICT;
    return ok;
}

/* Every single-parameter hypothesis into c->mx (tag 2b + has_const, -1 for
 * the constant, which carries the prior of a whole class:
 * rb_constant_prior), then the chosen one's shape into best. */
static int search_single(const rb_series *s, rb_cache *c, rb_hyp *best)
{
    int n = s->n;
    double c0, v00, chi2 = fit_const(s->y, s->w, n, &c0, &v00);
    double crit = rb_score(s, chi2, 1, n, c0 < 0);
    double prior = rb_constant_prior(allowed_blocks(c, s, 0));
    double mu[RB_NREF], var[RB_NREF];
    for (int r = 0; r < RB_NREF; r++) {
        mu[r] = c0;
        var[r] = v00 * rb_noise_scale(s, chi2, 1, n);
    }
    if (rb_mixture_add(&c->mx, crit, prior, s->have_reps ? chi2 : 0, n - 1, mu, var, -1,
                       constant_plausible(s, c, c0, chi2)) < 0)
        return -1;
    for (int b = 0; b < c->nblocks; b++) {
        if (!block_allowed(c, s, 0, b))
            continue;
        const double *g = rb_col(c, 0, b), *gr = c->gref + (size_t)b * RB_NREF;
        fit2 both[2];
        fit_two(s->y, s->w, g, n, both);
        for (int hc = 1; hc >= 0; hc--) {
            const fit2 f = both[hc];
            if (!f.ok)
                continue;
            double scale = rb_noise_scale(s, f.chi2, 1 + hc, n);
            for (int r = 0; r < RB_NREF; r++) {
                mu[r] = f.c0 + f.c1 * gr[r];
                var[r] = (f.v00 + 2 * gr[r] * f.v01 + gr[r] * gr[r] * f.v11) * scale;
            }
            if (rb_mixture_add(&c->mx, fit2_crit(s, c, b, &f, hc, n), 0, s->have_reps ? f.chi2 : 0,
                               n - 1 - hc, mu, var, 2 * b + hc,
                               single_plausible(s, c, b, f.c0, f.c1) |
                                   fits_bit(s, f.chi2, 1 + hc)) < 0)
                return -1;
        }
    }
    int tag = -1;
    rb_mixture_pick(&c->mx, &tag);
    single_shape(c, tag, best);
    return 0;
}

/* ---- several parameters ----------------------------------------------------- */

/* A parameter's best blocks by their score summed over its lines. */
#define MAX_TOP 4
typedef struct ranking {
    int ntop;
    int block[MAX_TOP];
    double score[MAX_TOP];
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

/* Scores every block for parameter p on its lines. buf: 3n doubles. */
static void rank_parameter(const rb_series *s, const rb_cache *c, const rb_lines *L, int p,
                           int cap, ranking *r, double *buf)
{
    int n = s->n, total = L->start[L->nlines];
    double *y = buf, *w = buf + n, *g = buf + 2 * n;
    for (int a = 0; a < total; a++) {
        y[a] = s->y[L->idx[a]];
        w[a] = s->w[L->idx[a]];
    }
    memset(r, 0, sizeof *r);
    for (int b = 0; b < c->nblocks; b++) {
        if (!block_allowed(c, s, p, b))
            continue;
        const double *col = rb_col(c, p, b);
        for (int a = 0; a < total; a++)
            g[a] = col[L->idx[a]];
        double score = 0;
        for (int l = 0; l < L->nlines && isfinite(score); l++) {
            int o = L->start[l], len = L->start[l + 1] - o;
            double bestl = INFINITY;
            fit2 both[2];
            fit_two(y + o, w + o, g + o, len, both);
            for (int hc = 1; hc >= 0; hc--) {
                const fit2 *f = &both[hc];
                double crit = f->ok ? fit2_crit(s, c, b, f, hc, len) : INFINITY;
                if (crit < bestl)
                    bestl = crit;
            }
            score += bestl;
        }
        if (isfinite(score))
            ranking_insert(r, cap, b, score);
    }
}

/* One combination: per parameter an index into its ranking or -1 (absent),
 * form 0 sum, 1 product, with or without a constant. */
typedef struct combo {
    signed char choice[PMNF_MAX_PARAMS];
    signed char form, has_const;
} combo;

/* The hypothesis of a combination, its term columns into col (m points)
 * and, when gref is given, its term shapes at the reference points into
 * gref (RB_NREF x nterms). */
static void combo_shape(const rb_cache *c, const ranking *rk, const combo *cb, int nparams,
                        rb_hyp *h, double *col, double *gref)
{
    if (gref) { /* the search: only what the fit reads (the hypothesis is 2 KiB) */
        h->f.constant = 0;
        h->f.nterms = 0;
    } else {
        memset(h, 0, sizeof *h);
    }
    h->f.nparams = nparams;
    h->has_const = cb->has_const;
    int n = c->n, active = 0;
    for (int p = 0; p < nparams; p++) {
        if (cb->choice[p] < 0)
            continue;
        int b = rk[p].block[(int)cb->choice[p]];
        pmnf_factor fac = {p, c->blocks[b].poly, c->blocks[b].log};
        int t = cb->form == 1 && active ? 0 : h->f.nterms++;
        pmnf_term *term = &h->f.terms[t];
        if (t == h->f.nterms - 1 && !(cb->form == 1 && active))
            term->nfactors = 0;
        term->coef = 1;
        term->factors[term->nfactors++] = fac;
        const double *g = rb_col(c, p, b);
        double *dst = col + (size_t)t * n;
        for (int i = 0; i < n; i++)
            dst[i] = term->nfactors == 1 ? g[i] : dst[i] * g[i];
        for (int r = 0; gref && r < RB_NREF; r++) {
            double v = c->gref[((size_t)p * c->nblocks + b) * RB_NREF + r];
            gref[r * PMNF_MAX_TERMS + t] = term->nfactors == 1 ? v : gref[r * PMNF_MAX_TERMS + t] * v;
        }
        active++;
    }
}

static double combo_penalty(const rb_cache *c, const ranking *rk, const combo *cb, int np)
{
    double pen = 0;
    for (int p = 0; p < np; p++)
        if (cb->choice[p] >= 0) {
            const pmnf_block *b = &c->blocks[rk[p].block[(int)cb->choice[p]]];
            pen += rb_block_penalty(b->poly, b->log);
        }
    return pen;
}

/* Advances an odometer over -1 .. ntop-1 per parameter; 0 when done. */
static int next_choice(combo *cb, const ranking *rk, int np)
{
    int p = 0;
    while (p < np && ++cb->choice[p] >= rk[p].ntop) {
        cb->choice[p] = -1;
        p++;
    }
    return p < np;
}

/* Block b's factor of parameter p at path point i (horizon.c's layout). */
static double path_factor(const rb_cache *c, int p, int b, int i)
{
    int np = c->nparams, k;
    if (i < np * PMNF_PATH_LINE)
        k = i / PMNF_PATH_LINE == p ? i % PMNF_PATH_LINE : PMNF_PATH_IN - 1;
    else
        k = PMNF_PATH_IN + (i - np * PMNF_PATH_LINE);
    return c->gpath[((size_t)p * c->nblocks + b) * PMNF_PATH_LINE + k];
}

/* The combination has non-negative coefficients and blocks that never fall
 * on the path, and the data fall along no parameter: it never falls. */
static int combo_monotone(const rb_series *s, const rb_cache *c, const ranking *rk,
                          const combo *cb, const rb_hyp *h)
{
    if (h->f.constant < 0)
        return 0;
    for (int t = 0; t < h->f.nterms; t++)
        if (h->f.terms[t].coef < 0)
            return 0;
    for (int p = 0; p < s->nparams; p++) {
        if (s->path.dir[p] < 0)
            return 0;
        if (cb->choice[p] >= 0 &&
            c->gmono[(size_t)p * c->nblocks + rk[p].block[(int)cb->choice[p]]] != 1)
            return 0;
    }
    return 1;
}

/* The RB_OK_* bits of a fitted combination on the path to the horizon. */
static int combo_plausible(const rb_series *s, const rb_cache *c, const ranking *rk,
                           const combo *cb, const rb_hyp *h)
{
    if (!s->path.all_positive)
        return RB_OK_STRICT | RB_OK_FLOOR;
    int np = s->nparams, total = pmnf_path_npoints(&s->path);
    if (combo_monotone(s, c, rk, cb, h)) {
        /* non-decreasing along every parameter: the smallest values are at
         * the starts of the lines, the largest data point's at the top */
        int t = 0, floor = 1;
        for (int p = 0; p < np; p++) {
            double v0 = h->f.constant, vt = h->f.constant, prod0 = 1, prodt = 1;
            t = 0;
            for (int q = 0; q < np; q++) {
                if (cb->choice[q] < 0)
                    continue;
                int b = rk[q].block[(int)cb->choice[q]];
                double g0 = path_factor(c, q, b, p * PMNF_PATH_LINE);
                double gt = path_factor(c, q, b, p * PMNF_PATH_LINE + PMNF_PATH_IN - 1);
                if (cb->form == 1) {
                    prod0 *= g0;
                    prodt *= gt;
                } else {
                    v0 += h->f.terms[t].coef * g0;
                    vt += h->f.terms[t++].coef * gt;
                }
            }
            if (cb->form == 1 && h->f.nterms == 1) {
                v0 += h->f.terms[0].coef * prod0;
                vt += h->f.terms[0].coef * prodt;
            }
            if (!(v0 > 0) || (s->path.dir[p] > 0 && vt < 0.5 * s->path.ymin))
                goto full;
            floor &= v0 >= 0.5 * s->path.ymin;
        }
        return RB_OK_STRICT | (floor ? RB_OK_FLOOR : 0);
    }
full:;
    double v[PMNF_PATH_MAX];
    for (int i = 0; i < total; i++) {
        double sum = h->f.constant, prod = 1;
        int t = 0, any = 0;
        for (int p = 0; p < np; p++) {
            if (cb->choice[p] < 0)
                continue;
            double g = path_factor(c, p, rk[p].block[(int)cb->choice[p]], i);
            if (cb->form == 1) {
                prod *= g;
                any = 1;
            } else {
                sum += h->f.terms[t++].coef * g;
            }
        }
        v[i] = any ? sum + h->f.terms[0].coef * prod : sum;
    }
    return ok_bits(pmnf_path_judge(&s->path, v));
}

/* Fits every combination into c->mx (tag: index into combos). */
static int fit_combos(const rb_series *s, rb_cache *c, const ranking *rk, combo *combos,
                      int *ncombos, double *col)
{
    int np = s->nparams, n = s->n;
    combo cb = {.form = 0};
    double absent[PMNF_MAX_PARAMS]; /* the prior of parameter p's absence */
    for (int p = 0; p < np; p++) {
        absent[p] = rb_constant_prior(allowed_blocks(c, s, p));
        cb.choice[p] = -1;
    }
    rb_hyp h;
    do {
        int active = 0;
        double prior = 0;
        for (int p = 0; p < np; p++) {
            active += cb.choice[p] >= 0;
            prior += cb.choice[p] < 0 ? absent[p] : 0;
        }
        for (cb.form = 0; cb.form < (active >= 2 ? 2 : 1); cb.form++) {
            for (cb.has_const = 1; cb.has_const >= (active ? 0 : 1); cb.has_const--) {
                double gref[RB_NREF * PMNF_MAX_TERMS];
                combo_shape(c, rk, &cb, np, &h, col, gref);
                if (rb_fit_normal(s, &h, col) < 0)
                    continue;
                double crit = rb_criterion(s, &h, n) + combo_penalty(c, rk, &cb, np);
                double mu[RB_NREF], var[RB_NREF];
                for (int r = 0; r < RB_NREF; r++) {
                    const double *gr = gref + r * PMNF_MAX_TERMS;
                    mu[r] = h.f.constant;
                    for (int t = 0; t < h.f.nterms; t++)
                        mu[r] += h.f.terms[t].coef * gr[t];
                    var[r] = rb_mean_variance_g(s, &h, n, gr);
                }
                combos[*ncombos] = cb;
                if (rb_mixture_add(&c->mx, crit, prior, s->have_reps ? h.chi2 : 0, n - h.k, mu, var,
                                   *ncombos,
                                   combo_plausible(s, c, rk, &cb, &h) |
                                       fits_bit(s, h.chi2, h.k)) < 0)
                    return -1;
                ++*ncombos;
            }
        }
    } while (next_choice(&cb, rk, np));
    return 0;
}

static int combos_bound(const ranking *rk, int np)
{
    int total = 1;
    for (int p = 0; p < np; p++)
        total *= rk[p].ntop + 1;
    return total * 4;
}

static int search_multi(const rb_series *s, rb_cache *c, rb_hyp *best, double *buf)
{
    int np = s->nparams, n = s->n;
    int cap = np <= 2 ? 3 : np == 3 ? 2 : 1; /* blocks kept per parameter: combinations stay few */
    ranking rk[PMNF_MAX_PARAMS];
    for (int p = 0; p < np; p++)
        rank_parameter(s, c, &c->lines[p], p, cap, &rk[p], buf);
    combo *combos = malloc(sizeof *combos * (size_t)combos_bound(rk, np));
    double *col = malloc(sizeof(double) * (size_t)n * PMNF_MAX_TERMS);
    int ncombos = 0, rc = -1, tag = -1;
    if (combos && col && fit_combos(s, c, rk, combos, &ncombos, col) == 0) {
        rc = 0;
        if (rb_mixture_pick(&c->mx, &tag) < 0) {
            memset(best, 0, sizeof *best);
            best->f.nparams = np;
            best->has_const = 1;
        } else {
            combo_shape(c, rk, &combos[tag], np, best, col, NULL);
        }
    }
    free(combos);
    free(col);
    return rc;
}

/* ---- the model ----------------------------------------------------------------- */

/* Every parameter has a line of at least RB_MIN_LINE_POINTS distinct values. */
static int enough_points(const rb_cache *c)
{
    for (int p = 0; p < c->nparams; p++)
        if (c->lines[p].nlines == 0)
            return 0;
    return 1;
}

static void no_interval(pmnf_model *out)
{
    memset(out->cov, 0, sizeof out->cov);
    out->sigma2 = 0;
    out->t975 = 0;
    out->warnings |= PMNF_WARN_NO_INTERVAL;
}

/* Student t quantile 0.975 for dof, remembered in c: it costs more than a fit. */
static double t975(rb_cache *c, double dof)
{
    if (c->t_dof != dof) {
        c->t975 = gsl_cdf_tdist_Pinv(0.975, dof);
        c->t_dof = dof;
    }
    return c->t975;
}

static void finish_model(rb_cache *c, const rb_series *s, const rb_hyp *best, double kappa2,
                         pmnf_model *out, double *pred)
{
    int n = s->n;
    out->f = best->f;
    for (int i = 0; i < n; i++)
        pred[i] = pmnf_eval(&out->f, s->coords + (size_t)i * s->nparams);
    quality_measure(out, pred, s->y, n);
    out->cv_smape = out->smape;
    int nc = 1 + best->f.nterms;
    double scale = rb_noise_scale(s, best->chi2, best->k, n) * kappa2;
    double sigma2 = INFINITY;
    for (int i = 0; i < n; i++)
        if (s->var[i] < sigma2)
            sigma2 = s->var[i];
    if (!s->have_reps)
        sigma2 *= rb_noise_scale(s, best->chi2, best->k, n);
    double dof = s->have_reps ? s->dof : n - best->k;
    out->ncoef = nc;
    out->dof = (int)dof;
    if (!(dof >= 1) || !(sigma2 > 0) || !isfinite(sigma2) || !isfinite(scale)) {
        no_interval(out);
        return;
    }
    out->sigma2 = sigma2;
    out->t975 = t975(c, dof);
    /* the noise of a measured value where it is asked: relative, a center of
     * the typical number of repetitions, scaled up by a lack of fit */
    double rbar = s->have_reps ? (s->dof + n) / n : 1;
    out->noise_rel2 = (s->have_reps ? s->cv2 / rbar : 1) * rb_noise_scale(s, best->chi2, best->k, n);
    if (!isfinite(out->noise_rel2))
        out->noise_rel2 = 0;
    for (int i = 0; i < nc * nc; i++) {
        out->cov[i] = best->cov[i] * scale / sigma2;
        if (!isfinite(out->cov[i])) {
            no_interval(out);
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

/* A direction (horizon.c) only where the data show it: with repetitions,
 * the mean of the centers at a parameter's largest coordinate and at its
 * smallest must differ by more than twice the standard error of their
 * difference; otherwise the parameter has none (no direction rule, no
 * negative exponents), so that noise on a parameter with little effect
 * does not rule out its true, growing term. */
static void significant_directions(rb_series *s)
{
    if (!s->have_reps)
        return;
    int np = s->nparams;
    for (int p = 0; p < np; p++) {
        double sum[2] = {0, 0}, var[2] = {0, 0};
        int cnt[2] = {0, 0};
        for (int i = 0; i < s->n; i++) {
            double x = s->coords[(size_t)i * np + p];
            int side = x == s->path.hi[p] ? 1 : x == s->path.lo[p] ? 0 : -1;
            if (side < 0)
                continue;
            sum[side] += s->y[i];
            var[side] += s->var[i];
            cnt[side]++;
        }
        if (!cnt[0] || !cnt[1])
            continue;
        double diff = sum[1] / cnt[1] - sum[0] / cnt[0];
        double se2 = var[1] / ((double)cnt[1] * cnt[1]) + var[0] / ((double)cnt[0] * cnt[0]);
        if (!(diff * diff > 4 * se2))
            s->path.dir[p] = 0;
    }
}

/* Every measured value (and repetition) is the same number. */
static int exactly_constant(const pmnf_data *d, const pmnf_reps *reps)
{
    for (int i = 0; i < d->npoints; i++)
        if (d->values[i] != d->values[0])
            return 0;
    for (int r = 0; reps && r < reps->start[d->npoints]; r++)
        if (reps->values[r] != d->values[0])
            return 0;
    return 1;
}

/* Searches, refits the chosen hypothesis and fills out. -2: no hypothesis. */
static int fit_series(rb_cache *c, const rb_series *s, int constant, pmnf_model *out, double *buf)
{
    int n = s->n;
    double *work = buf + 3 * (size_t)n;
    rb_hyp best;
    c->mx.n = 0;
    c->mx.small_m = s->have_reps ? 0 : n;
    int rc = 0;
    if (constant) { /* exact data: the constant, not a constant plus rounding noise */
        memset(&best, 0, sizeof best);
        best.f.nparams = s->nparams;
        best.has_const = 1;
        double mu[RB_NREF], var[RB_NREF] = {0};
        for (int r = 0; r < RB_NREF; r++)
            mu[r] = s->y[0];
        rc = rb_mixture_add(&c->mx, 0, 0, 0, s->n - 1, mu, var, -1, RB_OK_STRICT | RB_OK_FLOOR | RB_FITS);
    } else {
        rc = s->nparams == 1 ? search_single(s, c, &best) : search_multi(s, c, &best, buf);
    }
    if (rc < 0)
        return -1;
    if (rb_fit(s, NULL, n, &best, NULL, work) < 0)
        return -2;
    if (constant)
        best.f.constant = s->y[0]; /* not the least-squares rounding of it */
    memset(out, 0, sizeof *out);
    out->npoints = n;
    out->modeler = PMNF_MODELER_ROBUST;
    if (!s->have_reps)
        out->warnings |= PMNF_WARN_NO_REPETITIONS;
    double mu[RB_NREF], var[RB_NREF];
    for (int r = 0; r < RB_NREF; r++) {
        mu[r] = pmnf_eval(&best.f, c->ref[r]);
        var[r] = rb_mean_variance(s, &best, n, c->ref[r]);
    }
    double each[RB_NREF];
    double kappa2 = rb_mixture_kappa2(&c->mx, mu, var, each);
    finish_model(c, s, &best, kappa2, out, buf);
    out->selection = kappa2;
    for (int r = 0; r < RB_NREF; r++)
        out->widen[r] = each[r];
    out->lack_of_fit = rb_mixture_overdispersion(&c->mx);
    return 0;
}



/* Extra-P's segmented modeler's test for two regimes (segmented.c) on the
 * centers along one parameter: the whole series with one parameter, else
 * every line of points along which only that parameter varies. A line has
 * two regimes when the test finds a change point and its two segments
 * leave less than a quarter of the model's residual sum of squares there
 * (with noise alone two more coefficients on ten points take about a
 * fifth); a parameter has them when at least half of its lines do. Then
 * PMNF_WARN_TWO_REGIMES with the parameter and the change point of its
 * first such line in break_param/break_lo/break_hi. 0, or -1 out of memory. */
#define TWO_REGIMES_RSS_RATIO 0.25
static int line_regimes(pmnf_modeler *m, const pmnf_data *d, const pmnf_model *out, const int *idx,
                        int len, int p, double *x, double *y, double *lo, double *hi)
{
    double own = 0, rss;
    for (int a = 0; a < len; a++) {
        const double *pt = d->coords + (size_t)idx[a] * d->nparams;
        x[a] = pt[p];
        y[a] = d->values[idx[a]];
        double e = pmnf_eval(&out->f, pt) - y[a];
        own += e * e;
    }
    int rc = segmented_detect(m, x, y, len, lo, hi, &rss);
    return rc <= 0 ? rc : rss < TWO_REGIMES_RSS_RATIO * own;
}

static int two_regimes(pmnf_modeler *m, const rb_cache *c, const pmnf_data *d, pmnf_model *out)
{
    int n = d->npoints, rc = 0;
    int *all = malloc(sizeof(int) * (size_t)n);
    double *buf = malloc(sizeof(double) * 2 * (size_t)n);
    if (!all || !buf) {
        free(all);
        free(buf);
        return -1;
    }
    for (int i = 0; i < n; i++)
        all[i] = i;
    for (int p = 0; p < d->nparams && rc == 0 && !(out->warnings & PMNF_WARN_TWO_REGIMES); p++) {
        const rb_lines *L = &c->lines[p];
        int nl = d->nparams == 1 ? 1 : L->nlines, found = 0;
        double lo = 0, hi = 0, l1 = 0, h1 = 0;
        for (int l = 0; l < nl && rc >= 0; l++) {
            const int *idx = d->nparams == 1 ? all : L->idx + L->start[l];
            int len = d->nparams == 1 ? n : L->start[l + 1] - L->start[l];
            rc = line_regimes(m, d, out, idx, len, p, buf, buf + n, &lo, &hi);
            if (rc == 1 && found++ == 0) {
                l1 = lo;
                h1 = hi;
            }
        }
        if (rc >= 0)
            rc = 0;
        if (found > 0 && 2 * found >= nl) {
            out->warnings |= PMNF_WARN_TWO_REGIMES;
            out->break_param = p;
            out->break_lo = l1;
            out->break_hi = h1;
        }
    }
    free(all);
    free(buf);
    return rc;
}

static int robust_fit_canon(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps,
                            pmnf_model *out, char *err, size_t errcap);

/* Distinct points when every parameter rises with every step from one
 * point to the next (in the canonical order, sorted by the first
 * parameter): the points lie on one curve, measured with all parameters
 * changing together; 0 when they do not. */
static int one_curve(const pmnf_data *d)
{
    int np = d->nparams, distinct = d->npoints > 0;
    for (int i = 1; np > 1 && i < d->npoints; i++) {
        const double *a = d->coords + (size_t)(i - 1) * np, *b = a + np;
        int same = 0, up = 0;
        for (int p = 0; p < np; p++) {
            same += b[p] == a[p];
            up += b[p] > a[p];
        }
        if (same != np && up != np)
            return 0;
        distinct += up == np;
    }
    return np > 1 ? distinct : 0;
}

/* Points on one curve cannot tell the parameters apart (any split of the
 * growth between them fits equally): the model is the single-parameter
 * model along the first parameter, which predicts along the curve, with
 * PMNF_WARN_PARAMETERS_CONFOUNDED: off the curve the data say nothing. */
static int fit_one_curve(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps,
                         pmnf_model *out, char *err, size_t errcap)
{
    double *x = malloc(sizeof(double) * (size_t)d->npoints);
    if (!x) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (int i = 0; i < d->npoints; i++)
        x[i] = d->coords[(size_t)i * d->nparams];
    pmnf_data one = {1, d->npoints, x, d->values};
    int rc = robust_fit_canon(m, &one, reps, out, err, errcap);
    free(x);
    if (rc < 0)
        return rc;
    out->f.nparams = d->nparams; /* its factors name parameter 0 */
    out->f2.nparams = d->nparams;
    out->warnings |= PMNF_WARN_PARAMETERS_CONFOUNDED;
    return 0;
}

static int robust_fit_canon(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps,
                            pmnf_model *out, char *err, size_t errcap)
{
    if (one_curve(d) >= RB_MIN_LINE_POINTS)
        return fit_one_curve(m, d, reps, out, err, errcap);
    rb_cache *c = rb_cache_get(m, d);
    if (!c)
        goto oom;
    if (!enough_points(c)) {
        /* with fewer than 4 values along a parameter every two-coefficient
         * hypothesis keeps at most one residual degree of freedom: nothing
         * tells the growth classes apart, so no interval can say how far
         * the chosen one may be off when extrapolating */
        int rc = fall_back(m, d, out, err, errcap);
        if (rc == 0) {
            no_interval(out);
            out->warnings &= ~(unsigned)PMNF_WARN_INTERVAL_UNRELIABLE;
        }
        return rc;
    }
    rb_series s;
    if (rb_series_build(&s, d, reps) < 0)
        goto oom;
    pmnf_path_init(&s.path, d);
    significant_directions(&s);
    int n = d->npoints;
    double *buf = malloc(sizeof(double) * ((size_t)n * 3 + rb_work_size(n)));
    int rc = buf ? fit_series(c, &s, exactly_constant(d, reps), out, buf) : -1;
    free(buf);
    rb_series_free(&s);
    if (rc == -2)
        rc = fall_back(m, d, out, err, errcap);
    else if (rc < 0)
        goto oom;
    if (rc == 0 && two_regimes(m, c, d, out) < 0)
        goto oom;
    return rc;
oom:
    snprintf(err, errcap, "out of memory");
    return -1;
}

int robust_fit(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps, pmnf_model *out,
               char *err, size_t errcap)
{
    canon cn;
    if (rb_canon_build(&cn, d, reps) < 0) {
        rb_canon_free(&cn);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int rc = robust_fit_canon(m, &cn.d, cn.has_reps ? &cn.r : NULL, out, err, errcap);
    if (rc == 0 && rb_logs_excluded(m, &cn.d))
        out->warnings |= PMNF_WARN_NO_LOG_TERMS;
    rb_canon_free(&cn);
    return rc;
}
