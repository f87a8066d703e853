/*
 * modeler.c — the pmnf_modeler object: options, caches, pmnf_fit() and
 * pmnf_predict().
 *
 * The caches hold everything that depends only on coordinates:
 *   - single-parameter plans, one per distinct coordinate vector (LRU);
 *   - for multi-parameter fits, the grouping of the experiment's points into
 *     lines per parameter and one factorized design per hypothesis shape
 *     (a shape with a segmented factor, whose segments come from the
 *     series' values, gets a design of its own for the one fit).
 * The multi-parameter caches belong to one coordinate set and are dropped
 * when a series arrives with other coordinates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "modeling/assess.h"
#include "modeling/modeler_internal.h"
#include "modeling/robust_internal.h"

pmnf_modeler *pmnf_modeler_new(const pmnf_options *o)
{
    pmnf_modeler *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->opt = *o;
    m->nblocks = blocks_from_options(o, &m->blocks);
    if (m->nblocks < 0) {
        free(m);
        return NULL;
    }
    return m;
}

static void plan_free(single_plan *p)
{
    if (!p)
        return;
    free(p->x);
    free(p->blocks);
    free(p->g);
    free(p->usable);
    free(p->full);
    free(p->full_pinv);
    free(p->loo_pinv);
    free(p->storage);
    free(p);
}

static void design_free(mp_design *d)
{
    if (!d)
        return;
    free(d->key);
    free(d->cols);
    free(d->storage);
    free(d);
}

static void drop_multi_caches(pmnf_modeler *m)
{
    for (int i = 0; i < m->design_cap; i++)
        design_free(m->designs[i]);
    free(m->designs);
    m->designs = NULL;
    m->design_cap = 0;
    m->ndesigns = 0;
    if (m->slices_ready)
        slices_free(&m->slices);
    m->slices_ready = 0;
    free(m->mp_coords);
    m->mp_coords = NULL;
    m->mp_npoints = 0;
    m->mp_nparams = 0;
}

void pmnf_modeler_free(pmnf_modeler *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nplans; i++)
        plan_free(m->plans[i]);
    drop_multi_caches(m);
    modeler_drop_transient_designs(m);
    free(m->transient);
    free(m->blocks);
    free(m->scratch);
    rb_cache_free(m->robust);
    free(m);
}

double *modeler_scratch(pmnf_modeler *m, int n)
{
    if (n > m->scratch_cap) {
        double *s = realloc(m->scratch, sizeof(double) * (size_t)n);
        if (!s)
            return NULL;
        m->scratch = s;
        m->scratch_cap = n;
    }
    return m->scratch;
}

/* ---- single-parameter plans --------------------------------------------- */

/* Extra-P's are_measurements_log_capable. */
static int log_capable(const double *x, int n, int negative_exponents)
{
    for (int i = 0; i < n; i++)
        if (negative_exponents ? x[i] <= 1.0 : x[i] < 1.0)
            return 0;
    return 1;
}

static int plan_select_blocks(const pmnf_modeler *m, single_plan *p)
{
    p->blocks = malloc(sizeof *p->blocks * (size_t)(m->nblocks ? m->nblocks : 1));
    if (!p->blocks)
        return -1;
    int keep_logs = log_capable(p->x, p->n, m->opt.allow_negative_exponents);
    p->nblocks = 0;
    for (int b = 0; b < m->nblocks; b++) {
        if (!keep_logs && m->blocks[b].log != 0) {
            p->warnings |= PMNF_WARN_NO_LOG_TERMS;
            continue;
        }
        p->blocks[p->nblocks++] = m->blocks[b];
    }
    return 0;
}

/* Factorizes [1, g] on all points and keeps the solution operators on all
 * points and with each point left out. tmp holds 2n + storage doubles. */
static void plan_factorize_block(single_plan *p, int b, double *a, double **store, double *tmp)
{
    int n = p->n;
    const double *g = p->g + (size_t)b * n;
    for (int i = 0; i < n; i++) {
        a[i] = 1;
        a[n + i] = g[i];
    }
    int rc = lsq_factorize(a, n, 2, &p->full[b], *store);
    p->usable[b] = rc == 0;
    if (rc == LSQ_NUMERIC)
        p->warnings |= PMNF_WARN_NUMERIC_FAILURE;
    *store += lsq_storage_size(n, 2);
    if (p->usable[b])
        lsq_pinv(&p->full[b], p->full_pinv + (size_t)b * 2 * n);
    double *pinv = tmp, *fstore = tmp + 2 * n;
    for (int out = 0; out < n && p->usable[b]; out++) {
        int r = 0;
        for (int i = 0; i < n; i++) {
            if (i == out)
                continue;
            a[r] = 1;
            a[(n - 1) + r] = g[i];
            r++;
        }
        lsq_factor f;
        rc = lsq_factorize(a, n - 1, 2, &f, fstore);
        if (rc < 0) {
            p->usable[b] = 0;
            if (rc == LSQ_NUMERIC)
                p->warnings |= PMNF_WARN_NUMERIC_FAILURE;
            break;
        }
        lsq_pinv(&f, pinv);
        double *dst = p->loo_pinv + ((size_t)b * n + out) * 2 * n;
        for (int row = 0; row < 2; row++)
            for (int i = 0, j = 0; i < n; i++)
                dst[row * n + i] = i == out ? 0 : pinv[row * (n - 1) + j++];
    }
}

static single_plan *plan_build(const pmnf_modeler *m, const double *x, int n)
{
    single_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    p->x = malloc(sizeof(double) * (size_t)n);
    if (!p->x)
        goto fail;
    memcpy(p->x, x, sizeof(double) * (size_t)n);
    if (plan_select_blocks(m, p) < 0)
        goto fail;
    size_t nb = (size_t)(p->nblocks ? p->nblocks : 1);
    size_t tmp_size = 2 * (size_t)n + lsq_storage_size(n, 2);
    p->g = malloc(sizeof(double) * nb * n);
    p->usable = calloc(nb, 1);
    p->full = calloc(nb, sizeof *p->full);
    p->full_pinv = malloc(sizeof(double) * nb * 2 * n);
    p->loo_pinv = malloc(sizeof(double) * nb * n * 2 * n);
    p->storage = malloc(sizeof(double) * (nb * lsq_storage_size(n, 2) + lsq_storage_size(n, 1) +
                                          2 * (size_t)n + tmp_size));
    if (!p->g || !p->usable || !p->full || !p->full_pinv || !p->loo_pinv || !p->storage)
        goto fail;
    double *store = p->storage;
    double *a = store; /* design scratch */
    store += 2 * (size_t)n;
    double *tmp = store;
    store += tmp_size;
    for (int i = 0; i < n; i++)
        a[i] = 1;
    lsq_factorize(a, n, 1, &p->constant, store);
    store += lsq_storage_size(n, 1);
    for (int b = 0; b < p->nblocks; b++) {
        pmnf_factor f = {0, p->blocks[b].poly, p->blocks[b].log};
        int finite = 1;
        for (int i = 0; i < n; i++) {
            double v = pmnf_factor_eval(&f, x[i]);
            p->g[(size_t)b * n + i] = v;
            finite &= isfinite(v) != 0;
        }
        if (finite)
            plan_factorize_block(p, b, a, &store, tmp);
        else
            store += lsq_storage_size(n, 2);
    }
    return p;
fail:
    plan_free(p);
    return NULL;
}

single_plan *modeler_plan(pmnf_modeler *m, const double *x, int n)
{
    m->clock++;
    for (int i = 0; i < m->nplans; i++) {
        single_plan *p = m->plans[i];
        if (p->n == n && memcmp(p->x, x, sizeof(double) * (size_t)n) == 0) {
            p->last_used = m->clock;
            return p;
        }
    }
    single_plan *p = plan_build(m, x, n);
    if (!p)
        return NULL;
    p->last_used = m->clock;
    if (m->nplans < MODELER_MAX_PLANS) {
        m->plans[m->nplans++] = p;
    } else {
        int oldest = 0;
        for (int i = 1; i < m->nplans; i++)
            if (m->plans[i]->last_used < m->plans[oldest]->last_used)
                oldest = i;
        plan_free(m->plans[oldest]);
        m->plans[oldest] = p;
    }
    return p;
}

/* ---- multi-parameter designs -------------------------------------------- */

static int design_key(const pmnf_function *shape, double *key)
{
    int n = 0, np = shape->nparams;
    key[n++] = shape->nterms;
    for (int t = 0; t < shape->nterms; t++) {
        for (int p = 0; p < np; p++) {
            double poly, log;
            pmnf_term_exponents(&shape->terms[t], p, &poly, &log);
            key[n++] = poly;
            key[n++] = log;
        }
    }
    return n;
}

static uint64_t hash_doubles(const double *k, int n)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i < sizeof(double) * (size_t)n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static mp_design *design_build(const pmnf_modeler *m, const pmnf_function *shape, const double *key,
                               int keylen, uint64_t hash)
{
    mp_design *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    int rows = m->mp_npoints, k = shape->nterms + 1;
    d->keylen = keylen;
    d->hash = hash;
    d->m = rows;
    d->k = k;
    d->key = malloc(sizeof(double) * (size_t)keylen);
    d->cols = malloc(sizeof(double) * (size_t)k * rows);
    d->storage = malloc(sizeof(double) * lsq_storage_size(rows, k));
    if (!d->key || !d->cols || !d->storage) {
        design_free(d);
        return NULL;
    }
    memcpy(d->key, key, sizeof(double) * (size_t)keylen);
    for (int i = 0; i < rows; i++) {
        const double *pt = m->mp_coords + (size_t)i * m->mp_nparams;
        d->cols[i] = 1;
        for (int t = 0; t < shape->nterms; t++)
            d->cols[(size_t)(t + 1) * rows + i] = pmnf_term_shape(shape, &shape->terms[t], pt);
    }
    int rc = lsq_factorize(d->cols, rows, k, &d->f, d->storage);
    d->ok = rc == 0;
    d->numeric_failure = rc == LSQ_NUMERIC;
    return d;
}

static int designs_grow(pmnf_modeler *m)
{
    int cap = m->design_cap ? m->design_cap * 2 : 64;
    mp_design **t = calloc((size_t)cap, sizeof *t);
    if (!t)
        return -1;
    for (int i = 0; i < m->design_cap; i++) {
        mp_design *d = m->designs[i];
        if (!d)
            continue;
        size_t j = d->hash & (size_t)(cap - 1);
        while (t[j])
            j = (j + 1) & (size_t)(cap - 1);
        t[j] = d;
    }
    free(m->designs);
    m->designs = t;
    m->design_cap = cap;
    return 0;
}

void modeler_drop_transient_designs(pmnf_modeler *m)
{
    for (int i = 0; i < m->ntransient; i++)
        design_free(m->transient[i]);
    m->ntransient = 0;
}

static mp_design *transient_design(pmnf_modeler *m, const pmnf_function *shape)
{
    if (m->ntransient == m->transient_cap) {
        int cap = m->transient_cap ? 2 * m->transient_cap : 32;
        mp_design **t = realloc(m->transient, sizeof *t * (size_t)cap);
        if (!t)
            return NULL;
        m->transient = t;
        m->transient_cap = cap;
    }
    double key = 0;
    mp_design *d = design_build(m, shape, &key, 1, 0);
    if (d)
        m->transient[m->ntransient++] = d;
    return d;
}

mp_design *modeler_design(pmnf_modeler *m, const pmnf_function *shape)
{
    if (shape->segmented)
        return transient_design(m, shape);
    double key[1 + PMNF_MAX_TERMS * PMNF_MAX_PARAMS * 2];
    int keylen = design_key(shape, key);
    uint64_t h = hash_doubles(key, keylen);
    if (2 * (m->ndesigns + 1) > m->design_cap && designs_grow(m) < 0)
        return NULL;
    size_t mask = (size_t)m->design_cap - 1;
    size_t j = h & mask;
    for (; m->designs[j]; j = (j + 1) & mask) {
        mp_design *d = m->designs[j];
        if (d->hash == h && d->keylen == keylen &&
            memcmp(d->key, key, sizeof(double) * (size_t)keylen) == 0)
            return d;
    }
    mp_design *d = design_build(m, shape, key, keylen, h);
    if (!d)
        return NULL;
    m->designs[j] = d;
    m->ndesigns++;
    return d;
}

/* Makes the multi-parameter caches belong to d's coordinates. */
static int adopt_coordinates(pmnf_modeler *m, const pmnf_data *d)
{
    size_t bytes = sizeof(double) * (size_t)d->npoints * d->nparams;
    if (m->mp_coords && m->mp_nparams == d->nparams && m->mp_npoints == d->npoints &&
        memcmp(m->mp_coords, d->coords, bytes) == 0)
        return 0;
    drop_multi_caches(m);
    m->mp_coords = malloc(bytes);
    if (!m->mp_coords)
        return -1;
    memcpy(m->mp_coords, d->coords, bytes);
    m->mp_nparams = d->nparams;
    m->mp_npoints = d->npoints;
    if (slices_build(&m->slices, d->coords, d->npoints, d->nparams, m->opt.point_selection) < 0)
        return -1;
    m->slices_ready = 1;
    return 0;
}

/* ---- the public entry points -------------------------------------------- */

static int validate(const pmnf_data *d, char *err, size_t errcap)
{
    if (d->npoints < 1) {
        snprintf(err, errcap, "no measurements to model");
        return -1;
    }
    if (d->nparams < 1 || d->nparams > PMNF_MAX_PARAMS) {
        snprintf(err, errcap, "%d parameters: between 1 and %d are supported", d->nparams,
                 PMNF_MAX_PARAMS);
        return -1;
    }
    for (int i = 0; i < d->npoints; i++) {
        if (!isfinite(d->values[i])) {
            snprintf(err, errcap, "value %d is not a finite number", i);
            return -1;
        }
        if (fabs(d->values[i]) > PMNF_MAX_MAGNITUDE) {
            snprintf(err, errcap, "value %d is %g: beyond +-%g, the largest magnitude modeled",
                     i, d->values[i], PMNF_MAX_MAGNITUDE);
            return -1;
        }
        for (int p = 0; p < d->nparams; p++) {
            double x = d->coords[(size_t)i * d->nparams + p];
            if (!isfinite(x)) {
                snprintf(err, errcap, "coordinate %d of point %d is not a finite number", p, i);
                return -1;
            }
            if (fabs(x) > PMNF_MAX_MAGNITUDE) {
                snprintf(err, errcap,
                         "coordinate %d of point %d is %g: beyond +-%g, the largest "
                         "magnitude modeled",
                         p, i, x, PMNF_MAX_MAGNITUDE);
                return -1;
            }
        }
    }
    return 0;
}

/* Repetitions, when given: counts that add up and finite values. */
static int validate_reps(const pmnf_data *d, const pmnf_reps *reps, char *err, size_t errcap)
{
    if (!reps)
        return 0;
    if (reps->start[0] != 0) {
        snprintf(err, errcap, "repetitions of point 0 do not start at 0");
        return -1;
    }
    for (int i = 0; i < d->npoints; i++) {
        if (reps->start[i + 1] < reps->start[i]) {
            snprintf(err, errcap, "repetitions of point %d have a negative count", i);
            return -1;
        }
        for (int r = reps->start[i]; r < reps->start[i + 1]; r++) {
            if (!isfinite(reps->values[r])) {
                snprintf(err, errcap, "repetition %d of point %d is not a finite number",
                         r - reps->start[i], i);
                return -1;
            }
        }
    }
    return 0;
}

/* A model that is only the mean: the last resort when every candidate
 * failed numerically, so that no NaN or infinity reaches an output. */
static void fall_back_to_mean(pmnf_model *out, const pmnf_data *d, unsigned why)
{
    unsigned warnings = out->warnings;
    memset(out, 0, sizeof *out);
    out->f.nparams = d->nparams;
    out->npoints = d->npoints;
    out->warnings = warnings;
    double mean = 0;
    for (int i = 0; i < d->npoints; i++)
        mean += d->values[i];
    out->f.constant = mean / d->npoints;
    double rss = 0;
    for (int i = 0; i < d->npoints; i++)
        rss += (d->values[i] - out->f.constant) * (d->values[i] - out->f.constant);
    out->rss = rss;
    out->ar2 = rss == 0 ? 1 : 0;
    out->warnings |= why;
    quality_interval(out, NULL);
}

/* The model-level warnings and diagnostics of every fit (assess.h). */
static int assess(pmnf_model *out, const pmnf_data *d, char *err, size_t errcap)
{
    if (pmnf_assess_model(out, d) < 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    return 0;
}

static int model_is_finite(const pmnf_model *o)
{
    if (!isfinite(o->f.constant) || !isfinite(o->rss) || !isfinite(o->smape) ||
        !isfinite(o->cv_smape) || !isfinite(o->ar2) || !isfinite(o->sigma2) ||
        !isfinite(o->t975))
        return 0;
    for (int t = 0; t < o->f.nterms; t++)
        if (!isfinite(o->f.terms[t].coef))
            return 0;
    for (int i = 0; i < o->ncoef * o->ncoef; i++)
        if (!isfinite(o->cov[i]))
            return 0;
    return 1;
}

/* The end of every fit: a model with a number that is not finite becomes
 * the mean (numeric_failure); when not even that is finite, the fit fails
 * with the warning set, and so does a fit whose arithmetic failed on the
 * way (a decomposition that did not converge) but left no model. */
static int finish_fit(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out, char *err,
                      size_t errcap)
{
    out->warnings |= m->fit_warnings;
    if (!model_is_finite(out))
        fall_back_to_mean(out, d, PMNF_WARN_NUMERIC_FAILURE);
    if (!model_is_finite(out)) {
        memset(out, 0, sizeof *out);
        out->npoints = d->npoints;
        out->f.nparams = d->nparams;
        out->warnings = PMNF_WARN_NUMERIC_FAILURE;
        snprintf(err, errcap, "numeric failure: %s", pmnf_warning_text(PMNF_WARN_NUMERIC_FAILURE));
        return -1;
    }
    return 0;
}

void pmnf_numeric_init(void)
{
    gsl_set_error_handler_off();
}

int pmnf_fit(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out, char *err, size_t errcap)
{
    return pmnf_fit_reps(m, d, NULL, out, err, errcap);
}

int pmnf_fit_reps(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps, pmnf_model *out,
                  char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (validate(d, err, errcap) < 0)
        return -1;
    m->fit_warnings = 0;
    int rc;
    if (m->opt.modeler == PMNF_MODELER_ROBUST) {
        if (validate_reps(d, reps, err, errcap) < 0 || robust_fit(m, d, reps, out, err, errcap) < 0)
            return -1;
        if (finish_fit(m, d, out, err, errcap) < 0)
            return -1;
        return assess(out, d, err, errcap);
    }
    if (d->nparams == 1 && m->opt.modeler == PMNF_MODELER_SEGMENTED) {
        rc = segmented_fit(m, d->coords, d->values, d->npoints, out);
    } else if (d->nparams == 1) {
        rc = single_fit(m, d->coords, d->values, d->npoints, 0, 1, out);
    } else {
        rc = adopt_coordinates(m, d);
        if (rc == 0)
            rc = multi_fit(m, d, out);
    }
    if (rc < 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    if (finish_fit(m, d, out, err, errcap) < 0)
        return -1;
    if (m->opt.modeler == PMNF_MODELER_SEGMENTED)
        out->modeler = PMNF_MODELER_SEGMENTED;
    return assess(out, d, err, errcap);
}

/* Segment of a segmented model at point: 1 for f2. */
static int upper_segment(const pmnf_model *m, const double *point)
{
    return m->nsegments == 2 && point[0] > m->break_lo;
}

double pmnf_model_eval(const pmnf_model *m, const double *point)
{
    return pmnf_eval(upper_segment(m, point) ? &m->f2 : &m->f, point);
}

/* The share of the widening cov carries that holds at point, for a robust
 * model that is a constant (pmnf_model.widen): the largest kappa^2 of the
 * profile up to the point's distance d (the largest ratio of a coordinate
 * to its largest measured value), interpolated in log2 d between 2x, 4x
 * and 8x, over the largest of all. Up to 2x the 2x value (interpolation
 * included), from 8x on all of it. A constant's covariance has no shape in
 * x, so the widening alone carries the distance: a flat series measured
 * with 0.1% noise got +-30% at 2x, its spread 8x out. A growing model's
 * covariance grows with the distance by itself, and with the profile its
 * interval lost coverage near the data (Extra-P's test data: 5 instead of
 * 1-2 left-out points outside), so it keeps all of it, as do a coordinate
 * below the measured range (downward extrapolation, which the reference
 * points do not look at), a profile not kept and an unknown range (1). */
static double widening_share(const pmnf_model *m, const double *point)
{
    const double *k = m->widen;
    if (!(k[PMNF_WIDEN_AT - 1] > 0) || !m->diag.known || m->f.nterms > 0)
        return 1;
    double d = 0, full = 1;
    for (int p = 0; p < m->f.nparams; p++) {
        if (!(m->diag.hi[p] > 0) || !(point[p] >= m->diag.lo[p]))
            return 1;
        if (point[p] / m->diag.hi[p] > d)
            d = point[p] / m->diag.hi[p];
    }
    for (int r = 0; r < PMNF_WIDEN_AT; r++)
        full = k[r] > full ? k[r] : full;
    double at = k[0] > 1 ? k[0] : 1, ld = log2(d);
    for (int r = 1; r < PMNF_WIDEN_AT && ld > r; r++) {
        double t = ld >= r + 1 ? 1 : ld - r;
        double v = k[r - 1] + t * (k[r] - k[r - 1]);
        at = v > at ? v : at;
    }
    return at < full ? at / full : 1;
}

int pmnf_predict(const pmnf_model *m, const double *point, double *value, double *lo, double *hi)
{
    int up = upper_segment(m, point);
    const pmnf_function *f = up ? &m->f2 : &m->f;
    const double *cov = up ? m->cov2 : m->cov;
    int ncoef = up ? m->ncoef2 : m->ncoef;
    double sigma2 = up ? m->sigma2_2 : m->sigma2, t = up ? m->t975_2 : m->t975;
    double v = pmnf_eval(f, point);
    *value = v;
    *lo = *hi = v;
    if (m->warnings & PMNF_WARN_NO_INTERVAL || ncoef < 1 || (up && !(t > 0)))
        return 1;
    double g[PMNF_MAX_COEFS];
    g[0] = 1;
    for (int i = 0; i < f->nterms; i++)
        g[i + 1] = pmnf_term_shape(f, &f->terms[i], point);
    double q = 0;
    for (int i = 0; i < ncoef; i++)
        for (int j = 0; j < ncoef; j++)
            q += g[i] * cov[i * ncoef + j] * g[j];
    if (!up)
        q *= widening_share(m, point);
    double noise = sigma2, rel = up ? 0 : m->noise_rel2 * v * v;
    if (rel > noise)
        noise = rel;
    double half = t * sqrt(sigma2 * (q > 0 ? q : 0) + noise);
    if (!isfinite(half) || !isfinite(v))
        return 1;
    *lo = v - half;
    *hi = v + half;
    /* a quantity measured above 0 everywhere (a time, a count) is not
     * predicted below 0: the lower end of a positive prediction stops
     * there (a prediction below 0 keeps its interval, and its warning) */
    if (m->diag.known && m->diag.vmin > 0 && v > 0 && *lo < 0)
        *lo = 0;
    return 0;
}

const char *pmnf_warning_text(unsigned bit)
{
    switch (bit) {
    case PMNF_WARN_FEW_POINTS:
        return "Number of measurements for a parameter needs to be at least 5 in order to create "
               "a performance model.";
    case PMNF_WARN_NO_LOG_TERMS:
        return "Your measurements contained a point value below one, therefore, Extra-P does not "
               "use logarithmic terms for modeling.";
    case PMNF_WARN_RANK_DEFICIENT:
        return "The coordinates cannot separate the terms; the model is the mean.";
    case PMNF_WARN_NO_INTERVAL:
        return "Too few measurements for a prediction interval.";
    case PMNF_WARN_ROBUST_FALLBACK:
        return "Too few points along a parameter for the robust modeler (at least 4 distinct "
               "values); the model is Extra-P's.";
    case PMNF_WARN_NO_REPETITIONS:
        return "No repetitions: the robust modeler estimated the noise from the residuals.";
    case PMNF_WARN_POOR_FIT:
        return "The model fits the measurements poorly (SMAPE above 20% on positive data, or "
               "adjusted R^2 below 0.5 on data that vary more than 1.5x): measure more points or "
               "repetitions, or check the data for a change of behaviour.";
    case PMNF_WARN_NEGATIVE_PREDICTION:
        return "The model predicts a value <= 0 between the measured range and this point: "
               "do not use the prediction; measure closer to the point.";
    case PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION:
        return "Between the measured range and this point the model falls below half the "
               "smallest measurement, or a metric that grows falls: measure closer to the "
               "point before relying on the prediction.";
    case PMNF_WARN_EXTRAPOLATION_FAR:
        return "The point lies beyond 4x the measured range of a parameter: prediction errors "
               "grow with the distance.";
    case PMNF_WARN_TWO_REGIMES:
        return "The measurements have two regimes with a change point between break_lo and "
               "break_hi; the function describes them as one. Use the segmented modeler, or "
               "model each regime on its own measurements.";
    case PMNF_WARN_CONSTANT_ON_VARYING:
        return "The model is a constant although the measurements vary more than 2x: measure "
               "more points or repetitions.";
    case PMNF_WARN_INTERVAL_UNRELIABLE:
        return "Left out, the farthest measured point falls outside the 95% interval the other "
               "points give: do not rely on the interval when extrapolating.";
    case PMNF_WARN_NUMERIC_FAILURE:
        return "The arithmetic of some hypotheses failed (a decomposition did not converge or a "
               "number was not finite); they were left out, and where nothing was left the model "
               "is the mean.";
    case PMNF_WARN_PARAMETERS_CONFOUNDED:
        return "The parameters were only measured changing together, so the data cannot tell "
               "their effects apart: the model follows the first parameter along the measured "
               "points; predictions off that curve are not backed by measurements.";
    default:
        return "";
    }
}

const char *pmnf_warning_code(unsigned bit)
{
    switch (bit) {
    case PMNF_WARN_FEW_POINTS:
        return "few_points";
    case PMNF_WARN_NO_LOG_TERMS:
        return "no_log_terms";
    case PMNF_WARN_RANK_DEFICIENT:
        return "rank_deficient";
    case PMNF_WARN_NO_INTERVAL:
        return "no_interval";
    case PMNF_WARN_ROBUST_FALLBACK:
        return "robust_fallback";
    case PMNF_WARN_NO_REPETITIONS:
        return "no_repetitions";
    case PMNF_WARN_POOR_FIT:
        return "poor_fit";
    case PMNF_WARN_NEGATIVE_PREDICTION:
        return "negative_prediction";
    case PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION:
        return "implausible_extrapolation";
    case PMNF_WARN_EXTRAPOLATION_FAR:
        return "extrapolation_far";
    case PMNF_WARN_TWO_REGIMES:
        return "two_regimes";
    case PMNF_WARN_CONSTANT_ON_VARYING:
        return "constant_on_varying";
    case PMNF_WARN_INTERVAL_UNRELIABLE:
        return "interval_unreliable";
    case PMNF_WARN_NUMERIC_FAILURE:
        return "numeric_failure";
    case PMNF_WARN_PARAMETERS_CONFOUNDED:
        return "parameters_confounded";
    default:
        return "";
    }
}

int pmnf_fewest_distinct(const double *coords, int n, int nparams)
{
    int fewest = n;
    for (int q = 0; q < nparams; q++) {
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = coords[(size_t)j * nparams + q] == coords[(size_t)i * nparams + q];
            distinct += !seen;
        }
        if (distinct < fewest)
            fewest = distinct;
    }
    return fewest;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pmnf_aggregate(const double *values, int n, pmnf_measure measure, double *scratch)
{
    if (measure == PMNF_MEASURE_MEDIAN) {
        memcpy(scratch, values, sizeof(double) * (size_t)n);
        qsort(scratch, (size_t)n, sizeof(double), compare_doubles);
        return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
    }
    double s = 0;
    for (int i = 0; i < n; i++)
        s += values[i];
    return s / n;
}
