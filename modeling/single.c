/*
 * single.c — Extra-P's basic single-parameter modeler.
 *
 * The constant hypothesis (mean of the values) comes first; if it fits
 * exactly it is the model. Otherwise every building block b gives a candidate
 * c0 + c1 * b(x), scored by leave-one-out cross-validation (fit on n-1
 * points, zero a constant that is tiny against the smallest training value,
 * add the SMAPE of the left-out point), then fitted on all points. A
 * candidate whose term has coefficient 0 or contributes less than the minimum
 * term contribution at every point is rejected; the lowest score wins, ties
 * keeping the earlier candidate. The least-squares factorizations come from a
 * plan cached per coordinate vector (modeler.c), so each candidate costs a
 * few dot products.
 */
#include <math.h>
#include <string.h>

#include "modeling/modeler_internal.h"

#define CLEAN_EPSILON_CV 0.0005 /* Extra-P's modeler epsilon */
#define CLEAN_EPSILON 1e-3      /* Extra-P's CLEAN_CONSTANT_EPSILON */

typedef struct candidate {
    int block; /* -1: the constant hypothesis */
    double c0, c1;
    double rss, smape;
} candidate;

/* Extra-P's clean_constant_coefficient. */
static double clean_constant(double c0, double minimum, double phi)
{
    if (minimum == 0)
        return fabs(c0 - minimum) < phi ? 0 : c0;
    return fabs(c0 / minimum) < phi ? 0 : c0;
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

static candidate constant_candidate(const double *y, int n)
{
    candidate c = {.block = -1};
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += y[i];
    mean /= n;
    double smape = 0;
    for (int i = 0; i < n; i++) {
        double d = mean - y[i];
        c.rss += d * d;
        double abssum = fabs(y[i]) + fabs(mean);
        if (abssum != 0)
            smape += fabs(d) / abssum * 2;
    }
    c.c0 = mean;
    c.smape = smape / n * 100;
    return c;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The smallest value without point i, for every i: min1 everywhere but at
 * the minimum's index, where it is the second smallest. */
typedef struct minima {
    int at;
    double min1, min2;
} minima;

static minima find_minima(const double *y, int n)
{
    minima mm = {0, y[0], INFINITY};
    for (int i = 1; i < n; i++) {
        if (y[i] < mm.min1) {
            mm.min1 = y[i];
            mm.at = i;
        }
    }
    for (int i = 0; i < n; i++)
        if (i != mm.at && y[i] < mm.min2)
            mm.min2 = y[i];
    return mm;
}

/* Leave-one-out score of block b, then its coefficients on all points.
 * Both scores only grow point by point (every term is >= 0), so once the
 * one compared (rss when by_rss, else smape) reaches bound the candidate
 * cannot win: 0 then, without finishing; 1 when scored. */
static int score_crossvalidated(const single_plan *p, int b, const double *y, const minima *mm,
                                candidate *c, int by_rss, double bound)
{
    int n = p->n;
    const double *g = p->g + (size_t)b * n;
    const double *loo = p->loo_pinv + (size_t)b * n * 2 * n;
    c->rss = 0;
    c->smape = 0;
    for (int i = 0; i < n; i++, loo += 2 * n) {
        double c0 = dot(loo, y, n), c1 = dot(loo + n, y, n);
        c0 = clean_constant(c0, i == mm->at ? mm->min2 : mm->min1, CLEAN_EPSILON_CV);
        double pred = c0 + c1 * g[i];
        double d = pred - y[i];
        c->rss += d * d;
        double abssum = fabs(y[i]) + fabs(pred);
        if (abssum != 0)
            c->smape += (fabs(d) / abssum * 2) / n * 100;
        if ((by_rss ? c->rss : c->smape) >= bound)
            return 0;
    }
    const double *full = p->full_pinv + (size_t)b * 2 * n;
    c->c0 = dot(full, y, n);
    c->c1 = dot(full + n, y, n);
    return 1;
}

/* Fit on all points, clean the constant, score on the same points. */
static void score_on_all(const single_plan *p, int b, const double *y, double *pred, candidate *c)
{
    int n = p->n;
    const double *g = p->g + (size_t)b * n;
    const double *full = p->full_pinv + (size_t)b * 2 * n;
    c->c0 = clean_constant(dot(full, y, n), min_of(y, n), CLEAN_EPSILON);
    c->c1 = dot(full + n, y, n);
    c->rss = 0;
    for (int i = 0; i < n; i++) {
        pred[i] = c->c0 + c->c1 * g[i];
        c->rss += (pred[i] - y[i]) * (pred[i] - y[i]);
    }
    c->smape = quality_smape(pred, y, n, 1);
}

static int better_than(const pmnf_options *o, const single_plan *p, const candidate *c,
                       const candidate *best, const double *y)
{
    if (!isfinite(c->rss))
        return 0; /* Extra-P: "numeric imprecision", the hypothesis is ignored */
    if (c->c1 == 0)
        return 0;
    int lower = o->compare_with_rss ? c->rss < best->rss : c->smape < best->smape;
    if (!lower)
        return 0;
    /* only then the (dearer) check that the term contributes enough */
    double contribution = quality_max_contribution(p->g + (size_t)c->block * p->n, c->c1, y, p->n);
    return !(contribution < o->min_term_contribution);
}

static candidate search_blocks(pmnf_modeler *m, const single_plan *p, const double *y,
                               candidate best)
{
    int n = p->n;
    double *buf = modeler_scratch(m, n);
    minima mm = find_minima(y, n);
    for (int b = 0; b < p->nblocks; b++) {
        if (!p->usable[b])
            continue;
        candidate c = {.block = b};
        if (m->opt.use_crossvalidation) {
            int by_rss = m->opt.compare_with_rss;
            if (!score_crossvalidated(p, b, y, &mm, &c, by_rss, by_rss ? best.rss : best.smape))
                continue; /* not lower than the best: better_than() would refuse it */
        } else {
            score_on_all(p, b, y, buf, &c);
        }
        if (better_than(&m->opt, p, &c, &best, y))
            best = c;
    }
    return best;
}

static void finish(pmnf_modeler *m, pmnf_model *out, const single_plan *p,
                   const candidate *best, const double *x, const double *y, int n, int param)
{
    out->f.constant = best->c0;
    if (best->block >= 0) {
        pmnf_term *t = &out->f.terms[0];
        t->coef = best->c1;
        t->nfactors = 1;
        t->factors[0] = (pmnf_factor){param, p->blocks[best->block].poly,
                                      p->blocks[best->block].log};
        out->f.nterms = 1;
    }
    double *pred = modeler_scratch(m, n);
    double point[PMNF_MAX_PARAMS] = {0};
    for (int i = 0; i < n; i++) {
        point[param] = x[i];
        pred[i] = pmnf_eval(&out->f, point);
    }
    quality_measure(out, pred, y, n);
    out->cv_smape = best->smape;
}

int single_fit(pmnf_modeler *m, const double *x, const double *y, int n, int param, int nparams,
               pmnf_model *out)
{
    memset(out, 0, sizeof *out);
    out->f.nparams = nparams;
    out->npoints = n;
    if (n < 5)
        out->warnings |= PMNF_WARN_FEW_POINTS;
    candidate best = constant_candidate(y, n);
    const single_plan *p = NULL;
    if (n >= 2 && best.rss != 0) {
        p = modeler_plan(m, x, n);
        if (!p)
            return -1;
        out->warnings |= p->warnings;
        best = search_blocks(m, p, y, best);
    }
    finish(m, out, p, &best, x, y, n, param);
    if (best.block >= 0) {
        quality_interval(out, &p->full[best.block]);
    } else if (p) {
        quality_interval(out, &p->constant);
    } else {
        quality_interval(out, NULL);
    }
    return 0;
}

int single_loo_predictions(pmnf_modeler *m, const double *x, const double *y, int n,
                           const pmnf_model *model, double *pred)
{
    if (model->f.nterms != 1 || n < 2)
        return -1;
    const single_plan *p = modeler_plan(m, x, n);
    if (!p)
        return -1;
    const pmnf_factor *fac = &model->f.terms[0].factors[0];
    int b = 0;
    while (b < p->nblocks && !(p->usable[b] && p->blocks[b].poly == fac->poly &&
                               p->blocks[b].log == fac->log))
        b++;
    if (b == p->nblocks)
        return -1;
    minima mm = find_minima(y, n);
    const double *g = p->g + (size_t)b * n;
    const double *loo = p->loo_pinv + (size_t)b * n * 2 * n;
    for (int i = 0; i < n; i++, loo += 2 * n) {
        double c0 = dot(loo, y, n), c1 = dot(loo + n, y, n);
        c0 = clean_constant(c0, i == mm.at ? mm.min2 : mm.min1, CLEAN_EPSILON_CV);
        pred[i] = c0 + c1 * g[i];
    }
    return 0;
}
