/*
 * epoch_imbalance.c — the epoch's imbalance part, its model and its
 * warning (see epoch_imbalance.h).
 */
#include "analysis/epoch_imbalance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/set_data.h"
#include "modeling/combine.h"
#include "modeling/pmnf.h"
#include "modeling/warning_json.h"

/* the application groups' indices (analysis/set_data.h's order) */
enum { EI_COMP, EI_COMM, EI_MEM, EI_EPOCH, EI_NAMES = AD_GROUPS };

void ei_result_clear(ei_result *r)
{
    free(r->function);
    r->function = NULL;
    r->present = 0;
}

int ei_composable(const pmnf_model *const *parts, const pmnf_model *imb, int imb_needed)
{
    return parts[0] && parts[1] && parts[2] && (imb || !imb_needed);
}

int ei_epoch_at(const pmnf_model *const *parts, const pmnf_model *imb, int imb_needed,
                const double *point, double *v, double *lo, double *hi, int *interval)
{
    if (!ei_composable(parts, imb, imb_needed))
        return -1;
    const pmnf_model *m[4] = {parts[0], parts[1], parts[2], imb};
    double pv[4], plo[4], phi[4];
    int n = imb ? 4 : 3;
    *interval = 1;
    for (int i = 0; i < n; i++)
        *interval &= pmnf_predict(m[i], point, &pv[i], &plo[i], &phi[i]) == 0;
    pmnf_combine_sum(pv, plo, phi, n, v, lo, hi);
    return 0;
}

double ei_share(double imbalance, double epoch)
{
    return isfinite(imbalance) && isfinite(epoch) && epoch > 0 ? imbalance / epoch : NAN;
}

/* The per-coordinate series: coordinates into c, I into v; their number,
 * or -1 when a coordinate has a part twice (rows of several level
 * combinations: which sum is which cannot be told). */
static int series(const ei_input *in, const store_measurement_row **by, int n, double *c,
                  double *v, double *max_share)
{
    int np = 0;
    *max_share = 0;
    for (int i = 0; i < n;) {
        double part[EI_NAMES] = {NAN, NAN, NAN, NAN};
        int seen[EI_NAMES] = {0};
        int j = i;
        for (; j < n && ad_cmp_point(by[j]->point, by[i]->point, in->nparams) == 0; j++) {
            int k = ad_group_of(by[j]->name);
            if (seen[k]++)
                return -1;
            part[k] = by[j]->value;
        }
        double sum = part[EI_COMP] + part[EI_COMM] + part[EI_MEM];
        double imb = part[EI_EPOCH] - sum;
        if (isfinite(imb) && isfinite(part[EI_EPOCH])) {
            /* rounding of the two ways of adding up alike ranks is no imbalance */
            if (fabs(imb) <= 1e-9 * fabs(part[EI_EPOCH]))
                imb = 0;
            memcpy(c + (size_t)np * in->nparams, by[i]->point,
                   sizeof(double) * (size_t)in->nparams);
            v[np++] = imb;
            double s = ei_share(imb, part[EI_EPOCH]);
            if (isfinite(s) && s > *max_share)
                *max_share = s;
        }
        i = j;
    }
    return np;
}

static int fit(const ei_input *in, const double *c, const double *v, int np, ei_result *out)
{
    int distinct = pmnf_fewest_distinct(c, np, in->nparams);
    if (distinct < EI_MIN_VALUES) {
        snprintf(out->reason, sizeof out->reason,
                 "measured at %d coordinate(s) with %d distinct value(s) of a parameter; at least "
                 "%d values of every parameter are needed",
                 np, distinct, EI_MIN_VALUES);
        return 0;
    }
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = in->strong;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    if (!mod)
        return -1;
    char err[200];
    int rc = 0;
    if (pmnf_fit(mod, &(pmnf_data){in->nparams, np, c, v}, &out->model, err, sizeof err) < 0) {
        snprintf(out->reason, sizeof out->reason, "%s", err);
    } else {
        out->function = pmnf_format_dup(&out->model.f, in->params);
        out->present = out->function != NULL;
        rc = out->present ? 0 : -1;
    }
    pmnf_modeler_free(mod);
    return rc;
}

int ei_fit(const ei_input *in, const store_measurement_row *rows, int nrows, ei_result *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = (size_t)(nrows ? nrows : 1);
    const store_measurement_row **by = malloc(sizeof *by * cap);
    double *c = malloc(sizeof(double) * cap * (size_t)(in->nparams ? in->nparams : 1));
    double *v = malloc(sizeof(double) * cap);
    if (!by || !c || !v) {
        free(by);
        free(c);
        free(v);
        return -1;
    }
    int n = ad_rows_by_point(rows, nrows, in->nparams, by);
    out->npoints = series(in, by, n, c, v, &out->max_share);
    if (out->npoints < 0) { /* several level combinations: none (the parts' sum) */
        out->npoints = 0;
        out->max_share = 0;
    }
    out->included = out->max_share >= EI_INCLUDE_SHARE;
    int rc = out->included ? fit(in, c, v, out->npoints, out) : 0;
    free(by);
    free(c);
    free(v);
    if (rc < 0)
        ei_result_clear(out);
    return rc;
}

json_t *ei_warning_json(double imbalance, double epoch, const char *metric, const char *unit)
{
    double share = ei_share(imbalance, epoch);
    if (!(share >= EI_WARN_SHARE))
        return NULL;
    char text[400], model[80];
    snprintf(text, sizeof text,
             "Load imbalance: the epoch is its slowest rank's, %.3g%% (%.6g %s) above the sum of "
             "its parts, each a median over the ranks; that share is the time the other ranks "
             "wait. The epoch includes it (the part \"imbalance\"); the parts alone understate "
             "the wall-clock epoch. The imbalance answer names the callpaths behind it.",
             100 * share, imbalance, unit);
    snprintf(model, sizeof model, "epoch %.60s", metric);
    json_t *w = pmnf_warning_json(EI_WARNING, text);
    if (w && json_object_update_new(w, json_pack("{s:s, s:f, s:f, s:f, s:f}", "model", model,
                                                 "share", share, "imbalance", imbalance,
                                                 "parts_sum", epoch - imbalance, "limit",
                                                 EI_WARN_SHARE)) < 0) {
        json_decref(w);
        return NULL;
    }
    return w;
}
