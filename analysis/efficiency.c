/*
 * efficiency.c — the scaling efficiency of a measured series, per group of
 * runs (efficiency.h).
 */
#include "analysis/efficiency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/levels.h"
#include "sweep/sweep_efficiency.h"

static json_t *number_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* rows by group: the other parameters' values, then the level combination */
static int cmp_group(const store_measurement_row *a, const store_measurement_row *b, int q)
{
    for (int i = 0; i < a->nparams; i++)
        if (i != q && a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* by group, then along parameter q; equal rows keep their order */
static int row_before(const store_measurement_row *x, const store_measurement_row *y, int q)
{
    int c = cmp_group(x, y, q);
    return c < 0 || (c == 0 && x->point[q] < y->point[q]);
}

/* A stable merge sort (bottom-up, into tmp and back): rows may be many */
static int sort_rows(store_measurement_row *rows, int n, int q)
{
    store_measurement_row *tmp = malloc(sizeof *tmp * (size_t)(n ? n : 1));
    if (!tmp)
        return -1;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = row_before(&rows[j], &rows[i], q) ? rows[j++] : rows[i++];
            while (i < mid)
                tmp[k++] = rows[i++];
            while (j < hi)
                tmp[k++] = rows[j++];
        }
        memcpy(rows, tmp, sizeof *rows * (size_t)n);
    }
    free(tmp);
    return 0;
}

static json_t *ratio_json(const sweep_ratio *r)
{
    return json_pack("{s:o, s:o}", "value", number_json(r->value), "interval",
                     r->has_interval ? json_pack("[o, o]", number_json(r->lo), number_json(r->hi))
                                     : json_null());
}

static json_t *group_json(const noisy_names *nm, const store_measurement_row *rows, int a, int b,
                          int q, const double *baseline)
{
    json_t *fixed = json_object();
    for (int i = 0; i < nm->nparams; i++)
        if (i != q)
            json_object_set_new(fixed, nm->params[i], json_real(rows[a].point[i]));
    int base = -1;
    for (int i = a; i < b; i++)
        if (baseline ? rows[i].point[q] == *baseline : base < 0)
            base = i;
    json_t *pts = json_array();
    for (int i = a; i < b; i++) {
        double mean = 0;
        for (int k = 0; k < rows[i].nreps; k++)
            mean += rows[i].reps[k] / rows[i].nreps;
        json_t *o = json_pack("{s:f, s:f, s:i}", nm->params[q], rows[i].point[q], "mean", mean,
                              "n", rows[i].nreps);
        if (base >= 0) {
            sweep_ratio r = sweep_efficiency(rows[base].reps, rows[base].nreps, rows[i].reps,
                                             rows[i].nreps);
            json_object_set_new(o, "se", ratio_json(&r));
        } else {
            json_object_set_new(o, "se", json_null());
        }
        json_array_append_new(pts, o);
    }
    json_t *g = json_pack("{s:o, s:o, s:o}", "fixed", fixed, "baseline",
                          base >= 0 ? json_real(rows[base].point[q]) : json_null(), "points", pts);
    if (g && nm->nfactors) { /* the group's level combination */
        const char *names[LEVELS_MAX_FACTORS];
        int nf = nm->nfactors < LEVELS_MAX_FACTORS ? nm->nfactors : LEVELS_MAX_FACTORS;
        for (int k = 0; k < nf; k++)
            names[k] = nm->factors[k];
        json_t *lv = levels_object(names, (size_t)nf, rows[a].levels ? rows[a].levels : "");
        json_object_set_new(g, "levels", lv ? lv : json_null());
    }
    if (g && base < 0)
        json_object_set_new(g, "reason", json_string("the baseline was not measured with these "
                                                     "values of the other parameters"));
    return g;
}

json_t *eff_groups(const noisy_names *nm, store_measurement_row *rows, int n, int q,
                   const double *baseline, int *found)
{
    *found = 0;
    if (sort_rows(rows, n, q) < 0)
        return NULL;
    json_t *groups = json_array();
    for (int a = 0; groups && a < n;) {
        int b = a + 1;
        while (b < n && cmp_group(&rows[a], &rows[b], q) == 0)
            b++;
        json_t *g = group_json(nm, rows, a, b, q, baseline);
        if (!g) {
            json_decref(groups);
            return NULL;
        }
        *found |= !json_is_null(json_object_get(g, "baseline"));
        json_array_append_new(groups, g);
        a = b;
    }
    return groups;
}
