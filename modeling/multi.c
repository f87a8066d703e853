/*
 * multi.c — Extra-P's multi-parameter modeler.
 *
 * 1. For each parameter, pick a line of points along which only that
 *    parameter varies (Extra-P's "auto" selection: the longest such lines,
 *    averaged per coordinate; or the lines through the smallest other
 *    coordinates) and fit a single-parameter model on it (single.c; with
 *    the segmented modeler segmented.c, whose model of a line with two
 *    regimes is the whole segmented function, constants included).
 * 2. Keep the leading term of every parameter whose model is not constant
 *    (a segmented model as one factor of coefficient 1 and constant 0, as
 *    Extra-P's SegmentedFunction offers itself to its multi-parameter
 *    modeler).
 *    None: the model is the mean. One: the better (by SMAPE) of the line's
 *    coefficients and a least-squares refit on all points.
 * 3. Otherwise combine the terms into hypotheses (all multiplied, all added,
 *    and for two and three parameters the mixed sums of products), fit each
 *    by least squares on all points, drop those with a term contributing
 *    less than the minimum, and keep the lowest SMAPE (first wins ties).
 * Sparse point sets work: only the lines and the points present are used.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/modeler_internal.h"

/* ---- grouping points into lines ----------------------------------------- */

static int same_except(const double *a, const double *b, int nparams, int except)
{
    for (int q = 0; q < nparams; q++)
        if (q != except && a[q] != b[q])
            return 0;
    return 1;
}

static int lower_except(const double *a, const double *b, int nparams, int except)
{
    for (int q = 0; q < nparams; q++)
        if (q != except && !(a[q] <= b[q]))
            return 0;
    return 1;
}

/* Groups of point indices; group g holds idx[start[g] .. start[g+1]). */
typedef struct grouping {
    int ngroups;
    int *start;
    int *idx;
} grouping;

/* Groups points by an equivalence, groups and members in order of first
 * appearance. key(i, j) says whether points i and j belong together. */
static int group_points(const int *points, int n, const double *coords, int nparams, int p,
                        int by_value, grouping *g)
{
    int *group_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *rep = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *count = calloc((size_t)(n ? n : 1), sizeof(int));
    g->start = malloc(sizeof(int) * (size_t)(n + 1));
    g->idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!group_of || !rep || !count || !g->start || !g->idx) {
        free(group_of);
        free(rep);
        free(count);
        free(g->start);
        free(g->idx);
        return -1;
    }
    int ng = 0;
    for (int a = 0; a < n; a++) {
        const double *ca = coords + (size_t)points[a] * nparams;
        int found = -1;
        for (int k = 0; k < ng && found < 0; k++) {
            const double *ck = coords + (size_t)points[rep[k]] * nparams;
            if (by_value ? ca[p] == ck[p] : same_except(ca, ck, nparams, p))
                found = k;
        }
        if (found < 0) {
            found = ng;
            rep[ng++] = a;
        }
        group_of[a] = found;
        count[found]++;
    }
    g->ngroups = ng;
    g->start[0] = 0;
    for (int k = 0; k < ng; k++)
        g->start[k + 1] = g->start[k] + count[k];
    memset(count, 0, sizeof(int) * (size_t)ng);
    for (int a = 0; a < n; a++)
        g->idx[g->start[group_of[a]] + count[group_of[a]]++] = points[a];
    free(group_of);
    free(rep);
    free(count);
    return 0;
}

static void grouping_free(grouping *g)
{
    free(g->start);
    free(g->idx);
}

static int slice_alloc(mp_slices *s, int p, int npoints, int nmembers)
{
    s->npoint[p] = npoints;
    s->x[p] = malloc(sizeof(double) * (size_t)(npoints ? npoints : 1));
    s->start[p] = malloc(sizeof(int) * (size_t)(npoints + 1));
    s->member[p] = malloc(sizeof(int) * (size_t)(nmembers ? nmembers : 1));
    return s->x[p] && s->start[p] && s->member[p] ? 0 : -1;
}

/* Extra-P's find_best_measurement_points for parameter p. */
static int slice_longest_lines(mp_slices *s, const double *coords, int n, int nparams, int p)
{
    int *all = malloc(sizeof(int) * (size_t)n);
    if (!all)
        return -1;
    for (int i = 0; i < n; i++)
        all[i] = i;
    grouping lines;
    if (group_points(all, n, coords, nparams, p, 0, &lines) < 0) {
        free(all);
        return -1;
    }
    /* the longest lines, in order */
    int longest = 0, ncand = 0;
    for (int k = 0; k < lines.ngroups; k++) {
        int len = lines.start[k + 1] - lines.start[k];
        if (len > longest)
            longest = len;
    }
    for (int k = 0; k < lines.ngroups; k++)
        if (lines.start[k + 1] - lines.start[k] == longest)
            for (int a = lines.start[k]; a < lines.start[k + 1]; a++)
                all[ncand++] = lines.idx[a];
    grouping byx;
    int rc = group_points(all, ncand, coords, nparams, p, 1, &byx);
    grouping_free(&lines);
    free(all);
    if (rc < 0)
        return -1;
    /* keep in every x-group only the lines the first x-group has */
    const int *first = byx.idx;
    int nfirst = byx.start[1] - byx.start[0];
    if (slice_alloc(s, p, byx.ngroups, ncand) < 0) {
        grouping_free(&byx);
        return -1;
    }
    int np = 0, nm = 0;
    s->start[p][0] = 0;
    for (int k = 0; k < byx.ngroups; k++) {
        int kept = 0;
        for (int a = byx.start[k]; a < byx.start[k + 1]; a++) {
            const double *ca = coords + (size_t)byx.idx[a] * nparams;
            int common = k == 0;
            for (int f = 0; f < nfirst && !common; f++)
                common = same_except(ca, coords + (size_t)first[f] * nparams, nparams, p);
            if (common) {
                s->member[p][nm++] = byx.idx[a];
                kept++;
            }
        }
        if (kept) {
            s->x[p][np] = coords[(size_t)byx.idx[byx.start[k]] * nparams + p];
            s->start[p][++np] = nm;
        }
    }
    s->npoint[p] = np;
    grouping_free(&byx);
    return 0;
}

/* Extra-P's find_first_measurement_points for parameter p. */
static int slice_smallest_line(mp_slices *s, const double *coords, int n, int nparams, int p)
{
    if (slice_alloc(s, p, n, n) < 0)
        return -1;
    double minc[PMNF_MAX_PARAMS];
    for (int q = 0; q < nparams; q++)
        minc[q] = INFINITY;
    int np = 0;
    s->start[p][0] = 0;
    for (int i = 0; i < n; i++) {
        const double *c = coords + (size_t)i * nparams;
        if (same_except(c, minc, nparams, p)) {
            /* append */
        } else if (lower_except(c, minc, nparams, p)) {
            np = 0;
            memcpy(minc, c, sizeof(double) * (size_t)nparams);
        } else {
            continue;
        }
        s->x[p][np] = c[p];
        s->member[p][np] = i;
        np++;
        s->start[p][np] = np;
    }
    s->npoint[p] = np;
    return 0;
}

int slices_build(mp_slices *s, const double *coords, int npoints, int nparams,
                 pmnf_point_selection sel)
{
    memset(s, 0, sizeof *s);
    s->nparams = nparams;
    for (int p = 0; p < nparams; p++) {
        int rc = sel == PMNF_POINTS_SMALLEST ? slice_smallest_line(s, coords, npoints, nparams, p)
                                             : slice_longest_lines(s, coords, npoints, nparams, p);
        if (rc < 0) {
            slices_free(s);
            return -1;
        }
    }
    return 0;
}

void slices_free(mp_slices *s)
{
    for (int p = 0; p < s->nparams; p++) {
        free(s->x[p]);
        free(s->start[p]);
        free(s->member[p]);
    }
    memset(s, 0, sizeof *s);
}

/* ---- hypotheses ---------------------------------------------------------- */

typedef struct pair {
    pmnf_factor factor; /* the leading term of one parameter's line model */
    double coef;
    double constant;    /* of the line model */
    int segmented;      /* the line model is segmented: the factor is seg */
    pmnf_segfn seg;
} pair;

/* The segmented factors of the pairs into f (those f has a factor of). */
static void apply_segments(const pair *pairs, int npairs, pmnf_function *f)
{
    for (int i = 0; i < npairs; i++)
        if (pairs[i].segmented)
            pmnf_set_segmented(f, pairs[i].factor.param, &pairs[i].seg);
}

/* The term multiplying the pairs whose bit is set in mask (coefficient 1). */
static pmnf_term term_of(const pair *pairs, int npairs, unsigned mask)
{
    pmnf_term t = {.coef = 1};
    for (int i = 0; i < npairs; i++)
        if (mask & (1u << i))
            t.factors[t.nfactors++] = pairs[i].factor;
    return t;
}

/* Extra-P's hypothesis list, as lists of term masks over the pairs (bit i =
 * pair i); 0 ends a hypothesis. */
static const unsigned two_pair_masks[][4] = {{3}, {1, 2}, {1, 3}, {2, 3}};
static const unsigned three_pair_masks[][4] = {
    {7},       {1, 2, 4}, {7, 1},    {7, 2},    {7, 4},    {7, 3},    {7, 6},    {7, 5},
    {7, 3, 4}, {7, 6, 1}, {7, 5, 2}, {7, 1, 2}, {7, 1, 4}, {7, 2, 4}, {3, 4},    {3, 4, 2},
    {3, 4, 1}, {5, 2},    {5, 2, 1}, {5, 2, 4}, {6, 1},    {6, 1, 2}, {6, 1, 4},
};

static int build_hypotheses(const pair *pairs, int npairs, int nparams, int combinations,
                            pmnf_function *out)
{
    int n = 0;
    unsigned all = (1u << npairs) - 1;
    if (combinations && npairs == 2) {
        for (int h = 0; h < 4; h++, n++) {
            out[n] = (pmnf_function){.nparams = nparams};
            for (int t = 0; t < 4 && two_pair_masks[h][t]; t++)
                out[n].terms[out[n].nterms++] = term_of(pairs, npairs, two_pair_masks[h][t]);
            apply_segments(pairs, npairs, &out[n]);
        }
        return n;
    }
    if (combinations && npairs == 3) {
        for (int h = 0; h < 23; h++, n++) {
            out[n] = (pmnf_function){.nparams = nparams};
            for (int t = 0; t < 4 && three_pair_masks[h][t]; t++)
                out[n].terms[out[n].nterms++] = term_of(pairs, npairs, three_pair_masks[h][t]);
            apply_segments(pairs, npairs, &out[n]);
        }
        return n;
    }
    out[n] = (pmnf_function){.nparams = nparams};
    out[n].terms[out[n].nterms++] = term_of(pairs, npairs, all);
    apply_segments(pairs, npairs, &out[n]);
    n++;
    out[n] = (pmnf_function){.nparams = nparams};
    for (int i = 0; i < npairs; i++)
        out[n].terms[out[n].nterms++] = term_of(pairs, npairs, 1u << i);
    apply_segments(pairs, npairs, &out[n]);
    return n + 1;
}

typedef struct scored {
    pmnf_function f;
    double rss, smape;
    const mp_design *design;
    int valid;
} scored;

/* Extra-P's MultiParameterHypothesis.compute_cost: SMAPE over all points. */
static void score(scored *s, const double *pred, const double *y, int n)
{
    s->rss = 0;
    for (int i = 0; i < n; i++)
        s->rss += (pred[i] - y[i]) * (pred[i] - y[i]);
    s->smape = quality_smape(pred, y, n, 0);
}

static void predict_design(const mp_design *d, const double *coef, double *pred)
{
    for (int i = 0; i < d->m; i++) {
        double v = 0;
        for (int j = 0; j < d->k; j++)
            v += coef[j] * d->cols[(size_t)j * d->m + i];
        pred[i] = v;
    }
}

/* Least squares of shape on all points. */
static int fit_shape(pmnf_modeler *m, const pmnf_function *shape, const double *y, double *pred,
                     scored *s)
{
    mp_design *d = modeler_design(m, shape);
    if (!d)
        return -1;
    s->f = *shape;
    s->design = d;
    s->valid = d->ok;
    if (d->numeric_failure)
        m->fit_warnings |= PMNF_WARN_NUMERIC_FAILURE;
    if (!d->ok)
        return 0;
    double coef[PMNF_MAX_COEFS];
    lsq_solve(&d->f, y, coef);
    s->f.constant = coef[0];
    for (int t = 0; t < shape->nterms; t++)
        s->f.terms[t].coef = coef[t + 1];
    predict_design(d, coef, pred);
    score(s, pred, y, d->m);
    s->valid = isfinite(s->rss) != 0;
    return 0;
}

static int contributions_big_enough(const scored *s, const double *y, double minimum)
{
    const mp_design *d = s->design;
    for (int t = 0; t < s->f.nterms; t++) {
        double c = s->f.terms[t].coef;
        if (c == 0 || quality_max_contribution(d->cols + (size_t)(t + 1) * d->m, c, y, d->m) < minimum)
            return 0;
    }
    return 1;
}

/* Lower score wins. Hypotheses whose scores agree to 1e-9 relative are ties
 * (on point sets shaped like a cross several hypotheses span the same column
 * space and predict identically at every point; which one a strict '<'
 * prefers is then decided by rounding noise): the earlier one is kept. */
static int better(const pmnf_options *o, const scored *a, const scored *best)
{
    double mine = o->compare_with_rss ? a->rss : a->smape;
    double theirs = o->compare_with_rss ? best->rss : best->smape;
    return mine < theirs - 1e-9 * fabs(theirs);
}

/* One parameter matters: its line's coefficients or a refit on all points. */
static int choose_single_pair(pmnf_modeler *m, const pair *pr, const pmnf_data *d, double *pred,
                              scored *best)
{
    pmnf_function shape = {.nparams = d->nparams, .nterms = 1};
    shape.terms[0] = term_of(pr, 1, 1);
    apply_segments(pr, 1, &shape);
    scored refit;
    if (fit_shape(m, &shape, d->values, pred, &refit) < 0)
        return -1;
    scored reused = refit;
    reused.f.constant = pr->constant;
    reused.f.terms[0].coef = pr->coef;
    double coef[2] = {pr->constant, pr->coef};
    if (refit.design->ok) {
        predict_design(refit.design, coef, pred);
    } else {
        for (int i = 0; i < d->npoints; i++)
            pred[i] = pmnf_eval(&reused.f, d->coords + (size_t)i * d->nparams);
    }
    score(&reused, pred, d->values, d->npoints);
    reused.valid = isfinite(reused.rss) != 0;
    *best = reused;
    if (refit.valid && ((m->opt.compare_with_rss && refit.rss < reused.rss) ||
                        refit.smape < reused.smape))
        *best = refit;
    return 0;
}

static int choose_combination(pmnf_modeler *m, const pair *pairs, int npairs, const pmnf_data *d,
                              double *pred, scored *best)
{
    pmnf_function shapes[23];
    int nh = build_hypotheses(pairs, npairs, d->nparams, m->opt.allow_combinations, shapes);
    best->valid = 0;
    for (int h = 0; h < nh; h++) {
        scored s;
        if (fit_shape(m, &shapes[h], d->values, pred, &s) < 0)
            return -1;
        if (!s.valid)
            continue;
        if (!best->valid) {
            *best = s; /* Extra-P starts from the first hypothesis unchecked */
            if (h == 0)
                continue;
        }
        if (!contributions_big_enough(&s, d->values, m->opt.min_term_contribution))
            continue;
        if (better(&m->opt, &s, best))
            *best = s;
    }
    return 0;
}

/* The mean of the values averaged into each point of parameter p's line. */
static void line_values(const mp_slices *s, int p, const double *values, double *out)
{
    for (int k = 0; k < s->npoint[p]; k++) {
        double sum = 0;
        int a = s->start[p][k], b = s->start[p][k + 1];
        for (int i = a; i < b; i++)
            sum += values[s->member[p][i]];
        out[k] = b - a == 1 ? sum : sum / (b - a);
    }
}

/* Parameter p's line model: Extra-P's basic modeler's, or with the
 * segmented modeler its segmented one. 0 and the pair in *pr (*has 0 when
 * the model is a constant), or -1 out of memory. */
static int line_pair(pmnf_modeler *m, const mp_slices *s, int p, int nparams, const double *y,
                     pair *pr, int *has, unsigned *warnings)
{
    pmnf_model line;
    int segmented = m->opt.modeler == PMNF_MODELER_SEGMENTED;
    *has = 0;
    if (s->npoint[p] < 1 ||
        (segmented ? segmented_fit(m, s->x[p], y, s->npoint[p], &line)
                   : single_fit(m, s->x[p], y, s->npoint[p], p, nparams, &line)) < 0)
        return -1;
    *warnings |= line.warnings &
                 (PMNF_WARN_FEW_POINTS | PMNF_WARN_NO_LOG_TERMS | PMNF_WARN_NUMERIC_FAILURE);
    memset(pr, 0, sizeof *pr);
    if (line.nsegments == 2) {
        const pmnf_function *f[2] = {&line.f, &line.f2};
        pr->segmented = 1;
        pr->seg.upto = line.break_lo;
        pr->seg.from = line.break_hi;
        for (int k = 0; k < 2; k++) {
            pmnf_segment *g = &pr->seg.s[k];
            g->constant = f[k]->constant;
            g->nterms = f[k]->nterms > 0;
            if (g->nterms) {
                g->coef = f[k]->terms[0].coef;
                g->poly = f[k]->terms[0].factors[0].poly;
                g->log = f[k]->terms[0].factors[0].log;
            }
        }
        pr->factor = (pmnf_factor){p, 0, 0};
        pr->coef = 1;
        pr->constant = 0;
        *has = 1;
    } else if (line.f.nterms > 0) {
        pr->factor = line.f.terms[0].factors[0];
        pr->factor.param = p;
        pr->coef = line.f.terms[0].coef;
        pr->constant = line.f.constant;
        *has = 1;
    }
    return 0;
}

/* The change point of a model with a segmented factor: its first. */
static void note_break(pmnf_model *out)
{
    for (int p = 0; p < out->f.nparams; p++)
        if (out->f.segmented & (1u << p)) {
            out->break_param = p;
            out->break_lo = out->f.seg[p].upto;
            out->break_hi = out->f.seg[p].from;
            return;
        }
}

int multi_fit(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out)
{
    const mp_slices *s = &m->slices;
    int n = d->npoints;
    unsigned warnings = n < 5 ? PMNF_WARN_FEW_POINTS : 0;
    pair pairs[PMNF_MAX_PARAMS];
    int npairs = 0;
    double *buf = malloc(sizeof(double) * (size_t)(n + 1) * 2);
    if (!buf)
        return -1;
    for (int p = 0; p < d->nparams; p++) {
        int has;
        line_values(s, p, d->values, buf);
        if (line_pair(m, s, p, d->nparams, buf, &pairs[npairs], &has, &warnings) < 0) {
            free(buf);
            return -1;
        }
        npairs += has;
    }
    scored best = {.valid = 0};
    int rc = 0;
    if (npairs == 1)
        rc = choose_single_pair(m, pairs, d, buf, &best);
    else if (npairs > 1)
        rc = choose_combination(m, pairs, npairs, d, buf, &best);
    memset(out, 0, sizeof *out);
    out->npoints = n;
    if (rc == 0 && best.valid) {
        out->f = best.f;
        for (int i = 0; i < n; i++)
            buf[i] = pmnf_eval(&out->f, d->coords + (size_t)i * d->nparams);
        out->warnings = warnings;
        quality_measure(out, buf, d->values, n);
        out->cv_smape = out->smape;
        quality_interval(out, best.design->ok ? &best.design->f : NULL);
        note_break(out);
    } else if (rc == 0) {
        /* constant: the mean of all values */
        out->f = (pmnf_function){.nparams = d->nparams};
        for (int i = 0; i < n; i++)
            out->f.constant += d->values[i];
        out->f.constant /= n;
        for (int i = 0; i < n; i++)
            buf[i] = out->f.constant;
        out->warnings = warnings;
        quality_measure(out, buf, d->values, n);
        out->cv_smape = out->smape;
        quality_interval(out, NULL);
    }
    free(buf);
    modeler_drop_transient_designs(m);
    return rc;
}
