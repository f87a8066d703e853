/*
 * sweep_advice.c — the cost-weighted greedy c-optimal design of
 * sweep_advice.h.
 */
#include "sweep/sweep_advice.h"

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K PMNF_MAX_COEFS

typedef struct series_state {
    int k;               /* coefficients */
    double minv[K * K];  /* M⁻¹ */
    double gt[K];        /* g(target) */
    pmnf_function f;     /* the terms of g */
} series_state;

/* The fitted terms plus challengers: per parameter, its leading exponent
 * raised by 1/2 (and lowered, when that stays >= 0) and the leading term
 * times log2 (what the modeler would have picked instead were the data a
 * little different). */
static pmnf_function challenged(const pmnf_function *f)
{
    pmnf_function a = *f;
    for (int l = 0; l < f->nparams && a.nterms + 2 <= PMNF_MAX_TERMS; l++) {
        double poly = 0, lg = 0;
        for (int t = 0; t < f->nterms; t++) {
            double tp, tl;
            pmnf_term_exponents(&f->terms[t], l, &tp, &tl);
            if (tp > poly || (tp == poly && tl > lg)) {
                poly = tp;
                lg = tl;
            }
        }
        a.terms[a.nterms++] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{l, poly + 0.5, lg}}};
        a.terms[a.nterms++] = (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{l, poly, lg + 1}}};
        if (poly >= 0.5 && a.nterms < PMNF_MAX_TERMS)
            a.terms[a.nterms++] =
                (pmnf_term){.coef = 1, .nfactors = 1, .factors = {{l, poly - 0.5, lg}}};
    }
    return a;
}

static int basis(const pmnf_function *f, const double *x, double *g)
{
    g[0] = 1;
    for (int t = 0; t < f->nterms; t++)
        g[t + 1] = pmnf_term_shape(&f->terms[t], x);
    for (int i = 0; i <= f->nterms; i++)
        if (!isfinite(g[i]))
            return -1;
    return 0;
}

/* SD of one repetition at x */
static double noise(const sweep_adv_series *s, const double *x)
{
    if (s->cv > 0) {
        double v = fabs(pmnf_eval(s->f, x)) * s->cv;
        return v > 0 ? v : s->sigma > 0 ? s->sigma : 1e-12;
    }
    return s->sigma > 0 ? s->sigma : 1e-12;
}

static int init_series(const sweep_adv_series *s, const pmnf_function *terms,
                       const double *target, series_state *st, char *err, size_t errcap)
{
    st->f = *terms;
    int k = st->f.nterms + 1;
    st->k = k;
    double m[K * K] = {0}, g[K];
    for (int i = 0; i < s->npoints; i++) {
        const double *x = s->coords + (size_t)i * s->f->nparams;
        if (basis(&st->f, x, g) < 0) {
            snprintf(err, errcap, "a term cannot be evaluated at a measured point");
            return -1;
        }
        double sd = noise(s, x), w = (s->reps ? s->reps[i] : 1) / (sd * sd);
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k; b++)
                m[a * k + b] += w * g[a] * g[b];
    }
    if (basis(&st->f, target, st->gt) < 0) {
        snprintf(err, errcap, "a term cannot be evaluated at the target");
        return -1;
    }
    /* invert by Cholesky; a pivot tiny against its diagonal entry: singular */
    double diag[K];
    for (int a = 0; a < k; a++)
        diag[a] = m[a * k + a];
    gsl_matrix_view mv = gsl_matrix_view_array(m, (size_t)k, (size_t)k);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_linalg_cholesky_decomp1(&mv.matrix);
    for (int a = 0; !rc && a < k; a++)
        if (!(m[a * k + a] * m[a * k + a] > 1e-10 * diag[a]))
            rc = 1;
    if (!rc)
        rc = gsl_linalg_cholesky_invert(&mv.matrix);
    gsl_set_error_handler(old);
    if (rc) {
        snprintf(err, errcap,
                 "the measured points do not determine the model's %d coefficients (%d points, first diagonal %g)", k, s->npoints, diag[0]);
        return -1;
    }
    memcpy(st->minv, m, sizeof(double) * (size_t)(k * k));
    return 0;
}

static double quad(const series_state *st, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < st->k; i++) {
        double r = 0;
        for (int j = 0; j < st->k; j++)
            r += st->minv[i * st->k + j] * b[j];
        s += a[i] * r;
    }
    return s;
}

/* the variance reduction of one run at x for series s */
static double gain(const sweep_adv_series *s, const series_state *st, const double *x)
{
    double g[K];
    if (basis(&st->f, x, g) < 0)
        return 0;
    double sd = noise(s, x), c = quad(st, st->gt, g), d = quad(st, g, g);
    return c * c / (sd * sd + d);
}

static void update(const sweep_adv_series *s, series_state *st, const double *x)
{
    double g[K], u[K];
    if (basis(&st->f, x, g) < 0)
        return;
    int k = st->k;
    double sd = noise(s, x), d = sd * sd;
    for (int i = 0; i < k; i++) {
        u[i] = 0;
        for (int j = 0; j < k; j++)
            u[i] += st->minv[i * k + j] * g[j];
    }
    double gu = 0;
    for (int i = 0; i < k; i++)
        gu += g[i] * u[i];
    d += gu;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            st->minv[i * k + j] -= u[i] * u[j] / d;
}

void sweep_advice_free(sweep_adv_result *r)
{
    free(r->picks);
    memset(r, 0, sizeof *r);
}

int sweep_advise(const sweep_adv_problem *p, sweep_adv_result *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (p->nseries < 1 || p->ncand < 0 || !(p->budget >= 0)) {
        snprintf(err, errcap, "nothing to advise on");
        return -1;
    }
    /* st[0..n): the fitted terms; st[n..2n): with challengers (the criterion when
     * the measured points determine them) */
    series_state *st = calloc((size_t)(2 * p->nseries), sizeof *st);
    int *slot = malloc(sizeof(int) * (size_t)(p->ncand ? p->ncand : 1));
    out->picks = calloc((size_t)(p->ncand ? p->ncand : 1), sizeof *out->picks);
    if (!st || !slot || !out->picks) {
        free(st);
        free(slot);
        sweep_advice_free(out);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int robust = p->robust;
    for (int s = 0; s < p->nseries; s++) {
        if (init_series(&p->series[s], p->series[s].f, p->target, &st[s], err, errcap) < 0) {
            free(st);
            free(slot);
            sweep_advice_free(out);
            return -1;
        }
        pmnf_function c = challenged(p->series[s].f);
        char e2[200];
        if (robust &&
            init_series(&p->series[s], &c, p->target, &st[p->nseries + s], e2, sizeof e2) < 0)
            robust = 0;
    }
    const series_state *crit = robust ? st + p->nseries : st; /* the criterion's states */
    out->robust = robust;
    for (int s = 0; s < p->nseries; s++)
        out->var_before += quad(&st[s], st[s].gt, st[s].gt);
    for (int c = 0; c < p->ncand; c++)
        slot[c] = -1;
    double left = p->budget, var = out->var_before;
    while (out->nruns < p->max_runs) {
        int best = -1;
        double best_rate = 0, best_gain = 0;
        for (int c = 0; c < p->ncand; c++) {
            if (!(p->cost[c] > 0) || p->cost[c] > left)
                continue;
            const double *x = p->cand + (size_t)c * p->nparams;
            double g = 0;
            for (int s = 0; s < p->nseries; s++)
                g += gain(&p->series[s], &crit[s], x);
            if (g / p->cost[c] > best_rate) {
                best_rate = g / p->cost[c];
                best_gain = g;
                best = c;
            }
        }
        if (best < 0 || best_gain <= 1e-12 * var)
            break;
        const double *x = p->cand + (size_t)best * p->nparams;
        double fitted_gain = 0;
        for (int s = 0; s < p->nseries; s++) {
            fitted_gain += gain(&p->series[s], &st[s], x);
            update(&p->series[s], &st[s], x);
            if (robust)
                update(&p->series[s], &st[p->nseries + s], x);
        }
        best_gain = fitted_gain;
        var -= best_gain;
        left -= p->cost[best];
        if (slot[best] < 0) {
            slot[best] = out->npicks++;
            out->picks[slot[best]].cand = best;
        }
        sweep_adv_pick *pk = &out->picks[slot[best]];
        pk->runs++;
        pk->core_hours += p->cost[best];
        pk->gain += best_gain;
        out->spent += p->cost[best];
        out->nruns++;
    }
    /* recompute rather than trust the running subtraction */
    out->var_after = 0;
    for (int s = 0; s < p->nseries; s++)
        out->var_after += quad(&st[s], st[s].gt, st[s].gt);
    free(st);
    free(slot);
    return 0;
}
