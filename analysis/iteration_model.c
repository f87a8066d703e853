/*
 * iteration_model.c — kernel times modelled across traces at several values
 * of a parameter (iteration_model.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_model.h"
#include "modeling/modeler.h"

/* Mean duration (us) of one launch per name id of t's graph g; count per name. */
static int launch_means(const xg_graph *g, double *sum, long long *cnt)
{
    const xg_trace *t = g->t;
    for (int i = 0; i < t->nnames; i++) {
        sum[i] = 0;
        cnt[i] = 0;
    }
    for (int d = 0; d < g->ndev; d++) {
        const xg_event *e = &t->ev[g->dev[d]];
        sum[e->name] += e->dur;
        cnt[e->name]++;
    }
    return 0;
}

double *iteration_kmodels_dev_us(const xg_graph *g, const xg_kt_entry *kt, int n)
{
    const xg_trace *t = g->t;
    double *us = malloc((t->n ? t->n : 1) * sizeof *us);
    int *entry = malloc((size_t)(t->nnames > 0 ? t->nnames : 1) * sizeof *entry);
    if (!us || !entry) {
        free(us);
        free(entry);
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++)
        us[i] = NAN;
    for (int i = 0; i < t->nnames; i++)
        entry[i] = -1;
    for (int k = 0; k < n; k++) {
        int id = xg_trace_find(t, kt[k].name, strlen(kt[k].name));
        if (id >= 0)
            entry[id] = k;
    }
    for (int d = 0; d < g->ndev; d++) {
        const xg_event *e = &t->ev[g->dev[d]];
        int k = entry[e->name];
        if (k >= 0)
            us[g->dev[d]] = kt[k].scale > 0 ? e->dur * kt[k].scale : kt[k].seconds * 1e6;
    }
    free(entry);
    return us;
}

void iteration_kmodels_free(iteration_kmodels *m)
{
    free(m->value);
    free(m->lo);
    free(m->hi);
    json_decref(m->models);
    memset(m, 0, sizeof *m);
}

int iteration_model_kernels(const xg_trace *const *traces, const double *x, int n, double at,
                            iteration_kmodels *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    err->event = -1;
    err->field[0] = '\0';
    if (n < 2) {
        xg_error_set(err, -1, "traces", "modelling kernel times needs traces at 2 or more values");
        return -1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (x[i] == x[j]) {
                xg_error_set(err, -1, "traces", "two traces at the same value %g", x[i]);
                return -1;
            }
    const xg_trace *ref = traces[0];
    int nn = ref->nnames;
    double *means = calloc((size_t)n * (size_t)(nn + 1), sizeof *means);
    double *sum = NULL;
    long long *cnt = NULL;
    xg_graph g;
    int rc = -1;
    pmnf_modeler *m = NULL;
    out->value = calloc((size_t)nn + 1, sizeof *out->value);
    out->lo = calloc((size_t)nn + 1, sizeof *out->lo);
    out->hi = calloc((size_t)nn + 1, sizeof *out->hi);
    out->models = json_array();
    if (!means || !out->value || !out->lo || !out->hi)
        goto oom;
    /* per trace, the mean launch of each of the reference's names (NAN: absent) */
    for (int i = 0; i < n; i++) {
        const xg_trace *t = traces[i];
        if (xg_graph_build(t, &g, err) < 0)
            goto done;
        sum = realloc(sum, ((size_t)t->nnames + 1) * sizeof *sum);
        cnt = realloc(cnt, ((size_t)t->nnames + 1) * sizeof *cnt);
        if (!sum || !cnt) {
            xg_graph_free(&g);
            goto oom;
        }
        launch_means(&g, sum, cnt);
        for (int k = 0; k < nn; k++) {
            const char *name = xg_name(ref, k);
            int id = t == ref ? k : xg_trace_find(t, name, strlen(name));
            means[(size_t)i * (size_t)nn + (size_t)k] =
                id >= 0 && cnt[id] > 0 ? sum[id] / (double)cnt[id] : NAN;
        }
        xg_graph_free(&g);
    }
    pmnf_options po;
    pmnf_options_default(&po);
    if (!(m = pmnf_modeler_new(&po)))
        goto oom;
    double *vals = malloc((size_t)n * sizeof *vals);
    if (!vals)
        goto oom;
    for (int k = 0; k < nn; k++) {
        if (isnan(means[k]))
            continue; /* not a launched device event of the reference */
        int all = 1;
        for (int i = 0; i < n; i++) {
            vals[i] = means[(size_t)i * (size_t)nn + (size_t)k];
            all &= !isnan(vals[i]);
        }
        if (!all) {
            out->skipped++;
            continue;
        }
        pmnf_data d = {.nparams = 1, .npoints = n, .coords = x, .values = vals};
        pmnf_model pm;
        char msg[160];
        if (pmnf_fit(m, &d, &pm, msg, sizeof msg) < 0) {
            out->skipped++;
            continue;
        }
        double v, lo, hi;
        pmnf_predict(&pm, &at, &v, &lo, &hi);
        v = v > 0 ? v : 0;
        lo = lo > 0 ? lo : 0;
        hi = hi > v ? hi : v;
        const char *name = xg_name(ref, k);
        out->value[out->n] = (xg_kt_entry){.name = name, .seconds = v * 1e-6};
        out->lo[out->n] = (xg_kt_entry){.name = name, .seconds = lo * 1e-6};
        out->hi[out->n] = (xg_kt_entry){.name = name, .seconds = hi * 1e-6};
        out->n++;
        const char *pn[] = {"x"};
        char *fn = pmnf_format_dup(&pm.f, pn);
        json_t *one = fn ? json_pack("{s:s, s:s, s:f, s:f, s:[f, f]}", "name", name,
                                     "function_us", fn, "smape", pm.smape, "at", v * 1e-6,
                                     "interval", lo * 1e-6, hi * 1e-6)
                         : NULL;
        free(fn);
        if (!one || json_array_append_new(out->models, one) < 0) {
            free(vals);
            goto oom;
        }
    }
    free(vals);
    rc = 0;
    goto done;
oom:
    xg_error_set(err, -1, NULL, "out of memory");
done:
    pmnf_modeler_free(m);
    free(means);
    free(sum);
    free(cnt);
    if (rc < 0)
        iteration_kmodels_free(out);
    return rc;
}
