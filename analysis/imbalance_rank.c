/*
 * imbalance_rank.c — callpaths ranked by their load-imbalance factor now,
 * with the listed ones' coded warnings (see imbalance_rank.h); the LIF
 * groups' names. The imbalance answer (api/imbalance.c) renders the result.
 */
#include "analysis/imbalance_rank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/warning_json.h"

static const char *const group_names[AD_GROUPS] = {"comp", "comm", "mem", "step"};
static const int group_order[AD_GROUPS] = {3, 0, 1, 2};

const char *imr_group_name(int g)
{
    return g >= 0 && g < AD_GROUPS ? group_names[g] : NULL;
}

int imr_group(const char *name)
{
    for (int g = 0; name && g < AD_GROUPS; g++)
        if (!strcmp(name, group_names[g]))
            return g;
    return -1;
}

int imr_group_at(int k)
{
    return k >= 0 && k < AD_GROUPS ? group_order[k] : -1;
}

double imr_lif_now(const ad_callpath *c, int npoints, int largest)
{
    double now = NAN;
    for (int p = 0; p < npoints; p++)
        if (c->lif[p].n > 0)
            now = c->lif[p].median;
    if (npoints > 0 && largest >= 0 && largest < npoints && c->lif[largest].n > 0)
        now = c->lif[largest].median;
    return now;
}

/* larger LIF first, callpaths without one last, then by name */
static int cmp_items(const void *x, const void *y)
{
    const imr_item *a = x, *b = y;
    int an = isfinite(a->now), bn = isfinite(b->now);
    if (an != bn)
        return bn - an;
    if (an && a->now != b->now)
        return a->now > b->now ? -1 : 1;
    return strcmp(a->c->name, b->c->name);
}

int imr_rank(const ad_callpaths *cps, int largest, long limit, const double *at,
             const char *const *names, imr_ranking *out)
{
    memset(out, 0, sizeof *out);
    out->v = calloc((size_t)(cps->n ? cps->n : 1), sizeof *out->v);
    if (!out->v)
        return -1;
    for (int i = 0; i < cps->n; i++)
        out->v[i] = (imr_item){&cps->v[i], imr_lif_now(&cps->v[i], cps->npoints, largest), NULL};
    out->n = cps->n;
    qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_items);
    out->listed = limit < out->n ? (int)(limit > 0 ? limit : 0) : out->n;
    for (int i = 0; i < out->listed; i++) {
        const ad_fit *f = &out->v[i].c->lif_model;
        json_t *w = f->present ? cpw_model_warnings(&f->model, at, names, NULL) : json_array();
        out->v[i].warnings = w;
        if (w && f->present && at) {
            double v, lo, hi;
            int below;
            imr_lif_predict(&f->model, at, &v, &lo, &hi, &below);
            if (below && json_array_append_new(w, imr_lif_below_one_json(v)) < 0)
                w = NULL;
        }
        if (!w || cpw_tally_add(&out->tally, w) < 0) {
            imr_ranking_free(out);
            return -1;
        }
    }
    return 0;
}

int imr_lif_predict(const pmnf_model *m, const double *at, double *value, double *lo, double *hi,
                    int *below_one)
{
    int has_interval = pmnf_predict(m, at, value, lo, hi) == 0;
    *below_one = imb_lif_bound(*value, lo, hi);
    return has_interval;
}

json_t *imr_lif_below_one_json(double value)
{
    char text[300];
    snprintf(text, sizeof text,
             "The LIF model predicts %.6g here, below 1, the smallest load-imbalance factor "
             "there is (the slowest rank is never faster than the mean): its trend does not "
             "hold at this point; do not use the number, measure closer to the point.",
             value);
    json_t *w = pmnf_warning_json(IMR_LIF_BELOW_ONE, text);
    if (w && json_object_set_new(w, "value", isfinite(value) ? json_real(value) : json_null()) < 0) {
        json_decref(w);
        return NULL;
    }
    return w;
}

void imr_ranking_free(imr_ranking *r)
{
    if (r->v)
        for (int i = 0; i < r->listed; i++)
            json_decref(r->v[i].warnings);
    free(r->v);
    cpw_tally_free(&r->tally);
    memset(r, 0, sizeof *r);
}
