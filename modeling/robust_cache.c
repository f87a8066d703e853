/*
 * robust_cache.c — the robust modeler's building-block columns.
 *
 * Every block of the search space evaluated at every point, per parameter,
 * and at the reference points (2x, 4x and 8x the largest coordinate of each
 * parameter: the range forecasts typically reach). They depend only on the coordinates, which all callpaths of an
 * experiment share, so the modeler keeps the columns of the last coordinate
 * set and rebuilds them only when another one arrives. A block is usable for
 * a parameter when its values are finite, vary over the points, and it has
 * no logarithm while some coordinate is below 1 (at most 1 with negative
 * exponents), as in Extra-P. The lines of points along each parameter
 * (points that differ only in that parameter, with at least
 * RB_MIN_LINE_POINTS distinct values of it) are kept too, and every block's
 * values on the path from the data to the extrapolation horizon (horizon.c).
 *
 * The blocks are the modeler's, plus, unless the options give exponents or
 * already ask for negative ones, Extra-P's negative exponents for strong
 * scaling: robust.c uses those only along parameters the data fall with.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/robust_internal.h"

static const double ref_factor[RB_NREF] = {2, 4, 8}; /* pmnf_model.widen's distances */

/* The lines of points along parameter p: points grouped by their other
 * coordinates, groups with at least RB_MIN_LINE_POINTS distinct values of p. */
static int same_others(const double *coords, int nparams, int i, int j, int p)
{
    for (int q = 0; q < nparams; q++)
        if (q != p && coords[(size_t)i * nparams + q] != coords[(size_t)j * nparams + q])
            return 0;
    return 1;
}

static int distinct_values(const double *coords, int nparams, const int *idx, int m, int p)
{
    int d = 0;
    for (int a = 0; a < m; a++) {
        int seen = 0;
        for (int b = 0; b < a && !seen; b++)
            seen = coords[(size_t)idx[a] * nparams + p] == coords[(size_t)idx[b] * nparams + p];
        d += !seen;
    }
    return d;
}

static int lines_build(const double *coords, int n, int nparams, int p, rb_lines *L)
{
    int *group = malloc(sizeof(int) * (size_t)n * 3 + sizeof(int));
    L->start = malloc(sizeof(int) * (size_t)(n + 1));
    L->idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    L->nlines = 0;
    if (!group || !L->start || !L->idx) {
        free(group);
        free(L->start);
        free(L->idx);
        L->start = NULL;
        L->idx = NULL;
        return -1;
    }
    int *rep = group + n, *members = rep + n, ng = 0;
    for (int i = 0; i < n; i++) {
        int g = -1;
        for (int k = 0; k < ng && g < 0; k++)
            if (same_others(coords, nparams, i, rep[k], p))
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
        if (distinct_values(coords, nparams, members, m, p) < RB_MIN_LINE_POINTS)
            continue;
        memcpy(L->idx + used, members, sizeof(int) * (size_t)m);
        used += m;
        L->start[++L->nlines] = used;
    }
    free(group);
    return 0;
}

static void lines_free(rb_lines *L)
{
    free(L->start);
    free(L->idx);
}

void rb_cache_free(rb_cache *c)
{
    if (!c)
        return;
    for (int p = 0; p < c->nparams; p++)
        lines_free(&c->lines[p]);
    rb_mixture_free(&c->mx);
    free(c->blocks);
    free(c->negative);
    free(c->gmono);
    free(c->coords);
    free(c->usable);
    free(c->storage);
    free(c);
}

/* Extra-P's are_measurements_log_capable along parameter p. */
static int log_capable(const double *coords, int n, int nparams, int p, int negative_exponents)
{
    for (int i = 0; i < n; i++) {
        double x = coords[(size_t)i * nparams + p];
        if (negative_exponents ? x <= 1.0 : x < 1.0)
            return 0;
    }
    return 1;
}

int rb_logs_excluded(const pmnf_modeler *m, const pmnf_data *d)
{
    int has_logs = 0;
    for (int b = 0; b < m->nblocks; b++)
        has_logs |= m->blocks[b].log != 0;
    for (int p = 0; has_logs && p < d->nparams; p++)
        if (!log_capable(d->coords, d->npoints, d->nparams, p, m->opt.allow_negative_exponents))
            return 1;
    return 0;
}

static void fill_parameter(rb_cache *c, const pmnf_modeler *m, int p)
{
    int n = c->n, logs = log_capable(c->coords, n, c->nparams, p, m->opt.allow_negative_exponents);
    double top = -INFINITY;
    for (int i = 0; i < n; i++)
        if (c->coords[(size_t)i * c->nparams + p] > top)
            top = c->coords[(size_t)i * c->nparams + p];
    for (int r = 0; r < RB_NREF; r++)
        c->ref[r][p] = top > 0 ? top * ref_factor[r] : top;
    for (int b = 0; b < c->nblocks; b++) {
        pmnf_factor f = {p, c->blocks[b].poly, c->blocks[b].log};
        double *g = c->g + ((size_t)p * c->nblocks + b) * n;
        int ok = logs || f.log == 0, varies = 0;
        for (int i = 0; i < n && ok; i++) {
            g[i] = pmnf_factor_eval(&f, c->coords[(size_t)i * c->nparams + p]);
            ok = isfinite(g[i]) != 0;
            varies |= g[i] != g[0];
        }
        for (int r = 0; r < RB_NREF; r++)
            c->gref[((size_t)p * c->nblocks + b) * RB_NREF + r] = pmnf_factor_eval(&f, c->ref[r][p]);
        c->usable[(size_t)p * c->nblocks + b] = ok && varies;
        double *gp = c->gpath + ((size_t)p * c->nblocks + b) * PMNF_PATH_LINE;
        int up = 1, down = 1;
        for (int k = 0; k < PMNF_PATH_LINE; k++) {
            gp[k] = pmnf_factor_eval(&f, pmnf_path_x(&c->path, p, k));
            if (k > 0) {
                up &= gp[k] >= gp[k - 1];
                down &= gp[k] <= gp[k - 1];
            }
        }
        c->gmono[(size_t)p * c->nblocks + b] = (signed char)(up ? 1 : down ? -1 : 0);
    }
}

/* The modeler's blocks and, when it has neither user exponents nor negative
 * ones, Extra-P's negative blocks marked as such. */
static int cache_blocks(rb_cache *c, const pmnf_modeler *m)
{
    pmnf_block *neg = NULL;
    int nneg = 0;
    if (!m->opt.allow_negative_exponents && m->opt.npoly == 0 && m->opt.nlog == 0) {
        pmnf_options o = m->opt;
        o.allow_negative_exponents = 1;
        nneg = blocks_from_options(&o, &neg);
        if (nneg < 0)
            return -1;
    }
    c->blocks = malloc(sizeof *c->blocks * (size_t)(m->nblocks + nneg + 1));
    c->negative = calloc((size_t)(m->nblocks + nneg + 1), 1);
    if (!c->blocks || !c->negative) {
        free(neg);
        return -1;
    }
    memcpy(c->blocks, m->blocks, sizeof *c->blocks * (size_t)m->nblocks);
    c->nblocks = m->nblocks;
    for (int b = 0; b < nneg; b++) {
        if (neg[b].poly >= 0 && neg[b].log >= 0)
            continue;
        c->negative[c->nblocks] = 1;
        c->blocks[c->nblocks++] = neg[b];
    }
    free(neg);
    return 0;
}

static rb_cache *cache_build(const pmnf_modeler *m, const pmnf_data *d)
{
    rb_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (cache_blocks(c, m) < 0) {
        rb_cache_free(c);
        return NULL;
    }
    size_t np = (size_t)d->nparams, n = (size_t)d->npoints, nb = (size_t)c->nblocks;
    c->nparams = d->nparams;
    c->n = d->npoints;
    c->coords = malloc(sizeof(double) * np * n);
    c->usable = malloc(np * (nb ? nb : 1));
    c->gmono = malloc(np * (nb ? nb : 1));
    c->storage = malloc(sizeof(double) *
                        (np * nb * n + np * nb * RB_NREF + np * nb * PMNF_PATH_LINE + 1));
    if (!c->coords || !c->usable || !c->gmono || !c->storage) {
        rb_cache_free(c);
        return NULL;
    }
    memcpy(c->coords, d->coords, sizeof(double) * np * n);
    for (int p = 0; p < d->nparams; p++) {
        if (lines_build(c->coords, c->n, c->nparams, p, &c->lines[p]) < 0) {
            rb_cache_free(c);
            return NULL;
        }
    }
    c->g = c->storage;
    c->gref = c->g + np * nb * n;
    c->gpath = c->gref + np * nb * RB_NREF;
    pmnf_path_init(&c->path, d);
    for (int p = 0; p < d->nparams; p++)
        fill_parameter(c, m, p);
    return c;
}

rb_cache *rb_cache_get(pmnf_modeler *m, const pmnf_data *d)
{
    rb_cache *c = m->robust;
    if (c && c->nparams == d->nparams && c->n == d->npoints &&
        !memcmp(c->coords, d->coords, sizeof(double) * (size_t)d->nparams * d->npoints))
        return c;
    rb_cache *fresh = cache_build(m, d);
    if (!fresh)
        return NULL;
    rb_cache_free(c);
    m->robust = fresh;
    return fresh;
}
