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
        if (f->segmented & (1u << l))
            continue; /* a segmented factor: its segments are not challenged */
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
        g[t + 1] = pmnf_term_shape(f, &f->terms[t], x);
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

/* The weight (inverse variance) of the mean of n runs at x: repetitions
 * lower the noise part s²/n, never the misfit part (misfit·|f(x)|)². */
static double point_weight(const sweep_adv_series *s, const double *x, int n)
{
    if (n <= 0)
        return 0;
    double sd = noise(s, x), v = sd * sd / n;
    if (s->misfit > 0) {
        double b = s->misfit * fabs(pmnf_eval(s->f, x));
        v += b > 0 ? b * b : s->misfit * s->misfit * sd * sd;
    }
    return 1 / v;
}

/* what one more run at x (n runs there so far) adds to the weight */
static double run_weight(const sweep_adv_series *s, const double *x, int n)
{
    if (!(s->misfit > 0)) {
        double sd = noise(s, x);
        return 1 / (sd * sd);
    }
    return point_weight(s, x, n + 1) - point_weight(s, x, n);
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
        double w = point_weight(s, x, s->reps ? s->reps[i] : 1);
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
    /* GSL's handler is off for the process (pmnf_numeric_init): the status
     * says whether it worked */
    int rc = gsl_linalg_cholesky_decomp1(&mv.matrix);
    for (int a = 0; !rc && a < k; a++)
        if (!(m[a * k + a] * m[a * k + a] > 1e-10 * diag[a]))
            rc = 1;
    if (!rc)
        rc = gsl_linalg_cholesky_invert(&mv.matrix);
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

double sweep_advice_shrink(double w, double c, double d)
{
    return w > 0 ? w * c * c / (1 + w * d) : 0;
}

/* the variance reduction of one run at x (n runs there so far) for series s */
static double gain(const sweep_adv_series *s, const series_state *st, const double *x, int n)
{
    double g[K];
    if (basis(&st->f, x, g) < 0)
        return 0;
    return sweep_advice_shrink(run_weight(s, x, n), quad(st, st->gt, g), quad(st, g, g));
}

static void update(const sweep_adv_series *s, series_state *st, const double *x, int n)
{
    double g[K], u[K];
    if (basis(&st->f, x, g) < 0)
        return;
    int k = st->k;
    double w = run_weight(s, x, n);
    if (!(w > 0))
        return;
    for (int i = 0; i < k; i++) {
        u[i] = 0;
        for (int j = 0; j < k; j++)
            u[i] += st->minv[i * k + j] * g[j];
    }
    double gu = 0;
    for (int i = 0; i < k; i++)
        gu += g[i] * u[i];
    double d = 1 / w + gu;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            st->minv[i * k + j] -= u[i] * u[j] / d;
}

/* runs[s * ncand + c]: the runs series s has at candidate c (measured ones
 * at the same coordinates); only the misfit makes them matter */
static void count_runs(const sweep_adv_problem *p, int *runs)
{
    for (int s = 0; s < p->nseries; s++) {
        const sweep_adv_series *se = &p->series[s];
        for (int c = 0; c < p->ncand; c++) {
            int *r = &runs[(size_t)s * p->ncand + c];
            *r = 0;
            if (!(se->misfit > 0))
                continue;
            const double *x = p->cand + (size_t)c * p->nparams;
            for (int i = 0; i < se->npoints; i++)
                if (!memcmp(se->coords + (size_t)i * p->nparams, x, sizeof(double) * (size_t)p->nparams)) {
                    *r = se->reps ? se->reps[i] : 1;
                    break;
                }
        }
    }
}

/* The grid's cost (one run at every priceable candidate) and the measured
 * runs' at candidates (the first series' repetitions: the series share
 * their runs). */
static void grid_costs(const sweep_adv_problem *p, sweep_adv_result *out)
{
    const sweep_adv_series *se = &p->series[0];
    for (int c = 0; c < p->ncand; c++) {
        if (!(p->cost[c] > 0))
            continue;
        out->grid_core_hours += p->cost[c];
        const double *x = p->cand + (size_t)c * p->nparams;
        for (int i = 0; i < se->npoints; i++)
            if (!memcmp(se->coords + (size_t)i * p->nparams, x,
                        sizeof(double) * (size_t)p->nparams)) {
                out->measured_core_hours += p->cost[c] * (se->reps ? se->reps[i] : 1);
                break;
            }
    }
}

double sweep_advice_misfit(const pmnf_function *f, const double *coords, const int *reps, int n,
                           double cv, double sigma)
{
    if (n < 1 || !(sigma >= 0))
        return 0;
    double mean = 0, inv = 0;
    for (int i = 0; i < n; i++) {
        mean += fabs(pmnf_eval(f, coords + (size_t)i * f->nparams)) / n;
        inv += 1.0 / (reps && reps[i] > 0 ? reps[i] : 1) / n;
    }
    if (!(mean > 0) || !isfinite(mean))
        return 0;
    double rel = sigma / mean;
    if (!(cv > 0)) /* the residuals are all we know: no lack of fit to tell apart */
        return SWEEP_ADV_MISFIT_FLOOR * rel;
    double b2 = rel * rel - cv * cv * inv, lack = b2 > 0 ? sqrt(b2) : 0;
    return fmax(lack, SWEEP_ADV_MISFIT_FLOOR * cv);
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
    int *runs = malloc(sizeof(int) * (size_t)(p->ncand ? p->ncand : 1) * (size_t)p->nseries);
    out->picks = calloc((size_t)(p->ncand ? p->ncand : 1), sizeof *out->picks);
    if (!st || !slot || !runs || !out->picks) {
        free(st);
        free(slot);
        free(runs);
        sweep_advice_free(out);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int robust = p->robust;
    for (int s = 0; s < p->nseries; s++) {
        if (init_series(&p->series[s], p->series[s].f, p->target, &st[s], err, errcap) < 0) {
            free(st);
            free(slot);
            free(runs);
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
    count_runs(p, runs);
    out->beyond_budget = -1;
    grid_costs(p, out);
    if (p->grid_core_hours > 0)
        out->grid_core_hours = p->grid_core_hours;
    if (p->measured_core_hours > 0)
        out->measured_core_hours = p->measured_core_hours;
    double left = p->budget, var = out->var_before;
    double tol = 1e-12 * out->grid_core_hours;
    while (out->nruns < p->max_runs) {
        int best = -1, best_any = -1, blocked = 0;
        double best_rate = 0, best_gain = 0, any_rate = 0;
        /* what the grid's cost leaves (see the header) */
        double room = out->grid_core_hours - out->measured_core_hours - out->spent + tol;
        for (int c = 0; c < p->ncand; c++) {
            if (!(p->cost[c] > 0))
                continue;
            const double *x = p->cand + (size_t)c * p->nparams;
            double g = 0;
            for (int s = 0; s < p->nseries; s++)
                g += gain(&p->series[s], &crit[s], x, runs[(size_t)s * p->ncand + c]);
            if (p->cost[c] > room) {
                blocked |= p->cost[c] <= left && g > 1e-12 * var;
                continue;
            }
            if (out->nruns == 0 && g / p->cost[c] > any_rate) {
                any_rate = g / p->cost[c];
                best_any = c;
            }
            if (p->cost[c] > left)
                continue;
            if (g / p->cost[c] > best_rate) {
                best_rate = g / p->cost[c];
                best_gain = g;
                best = c;
            }
        }
        if (out->nruns == 0 && best_any >= 0 && best_any != best &&
            p->cost[best_any] > left) {
            out->beyond_budget = best_any;
            out->beyond_budget_core_hours = p->cost[best_any];
        }
        if (best < 0 || best_gain <= 1e-12 * var) {
            out->grid_bound = blocked;
            break;
        }
        const double *x = p->cand + (size_t)best * p->nparams;
        double fitted_gain = 0;
        for (int s = 0; s < p->nseries; s++) {
            int *n = &runs[(size_t)s * p->ncand + best];
            fitted_gain += gain(&p->series[s], &st[s], x, *n);
            update(&p->series[s], &st[s], x, *n);
            if (robust)
                update(&p->series[s], &st[p->nseries + s], x, *n);
            ++*n;
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
    out->costlier_than_grid = out->grid_core_hours > 0 &&
                              out->measured_core_hours + out->spent > out->grid_core_hours;
    /* recompute rather than trust the running subtraction */
    out->var_after = 0;
    for (int s = 0; s < p->nseries; s++)
        out->var_after += quad(&st[s], st[s].gt, st[s].gt);
    free(st);
    free(slot);
    free(runs);
    return 0;
}
