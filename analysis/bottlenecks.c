/*
 * bottlenecks.c — the callpaths that will dominate at a target point, with
 * their predictions, shares and coded warnings (bottlenecks.h).
 */
#include "analysis/bottlenecks.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "analysis/finite_point.h"

static const char *const categories[] = {"comp", "comm", "mem", "host", NULL};

int bn_category_known(const char *category)
{
    for (int i = 0; category && categories[i]; i++)
        if (!strcmp(categories[i], category))
            return 1;
    return 0;
}

static int cmp_item(const void *x, const void *y)
{
    const bn_item *a = x, *b = y;
    if (a->negative != b->negative)
        return a->negative - b->negative;
    if (a->c->growth_poly != b->c->growth_poly)
        return a->c->growth_poly > b->c->growth_poly ? -1 : 1;
    if (a->c->growth_log != b->c->growth_log)
        return a->c->growth_log > b->c->growth_log ? -1 : 1;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return strcmp(a->c->name, b->c->name);
}

static int wanted(const ad_callpath *c, const char *category)
{
    return category ? !strcmp(c->category, category) : strcmp(c->category, "host") != 0;
}

static double pct(double part, double whole)
{
    return whole != 0 ? 100 * part / whole : NAN;
}

/* The prediction, shares and warnings of one modeled callpath. */
static int rank_one(const ad_callpath *c, const bn_query *q, bn_item *it)
{
    const pmnf_model *m = &c->model.model;
    it->c = c;
    it->has_interval = pmnf_predict(m, q->at, &it->value, &it->lo, &it->hi) == 0;
    unsigned bits = 0;
    it->warnings = cpw_model_warnings(m, q->at, q->names, &bits);
    if (!it->warnings)
        return -1;
    it->negative = (bits & PMNF_WARN_NEGATIVE_PREDICTION) || !(it->value > 0);
    it->share_now_pct = pct(c->now, q->epoch_now);
    it->share_pct = pct(it->value, q->epoch_at);
    it->share_lo = pct(it->lo, q->epoch_at);
    it->share_hi = pct(it->hi, q->epoch_at);
    return 0;
}

int bn_rank(const ad_callpaths *cps, const bn_query *q, bn_ranking *out)
{
    memset(out, 0, sizeof *out);
    out->v = calloc((size_t)(cps->n ? cps->n : 1), sizeof *out->v);
    if (!out->v)
        return -1;
    for (int i = 0; i < cps->n; i++) {
        const ad_callpath *c = &cps->v[i];
        if (!wanted(c, q->category))
            continue;
        if (!c->model.present) {
            out->unmodeled++;
            continue;
        }
        bn_item *it = &out->v[out->n++];
        if (rank_one(c, q, it) < 0 || cpw_tally_add(&out->tally, it->warnings) < 0) {
            bn_ranking_free(out);
            return -1;
        }
    }
    qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_item);
    return 0;
}

json_t *bn_warnings_summary(const bn_ranking *r)
{
    return cpw_summary_json(&r->tally, r->n, "ranked callpaths");
}

void bn_ranking_free(bn_ranking *r)
{
    for (int i = 0; r->v && i < r->n; i++)
        json_decref(r->v[i].warnings);
    free(r->v);
    cpw_tally_free(&r->tally);
    memset(r, 0, sizeof *r);
}

int bn_check_finite(const bn_ranking *r, const char *const *names, int nparams, const double *at,
                    const char *field, an_problem *p)
{
    const char *fields[PMNF_MAX_PARAMS];
    for (int i = 0; i < nparams && i < PMNF_MAX_PARAMS; i++)
        fields[i] = field;
    for (int i = 0; i < r->n; i++) {
        char what[300];
        snprintf(what, sizeof what, "the model of callpath %.200s", r->v[i].c->name);
        fp_value v = {what, r->v[i].value};
        if (finite_point_check(&v, 1, names, nparams, at, fields, p) < 0)
            return -1;
    }
    return 0;
}
