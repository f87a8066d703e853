/*
 * warning_json.c — the coded warnings of a model and of its predictions as
 * JSON objects (see warning_json.h).
 */
#include "modeling/warning_json.h"

#include <math.h>
#include <string.h>

json_t *pmnf_warning_json(const char *code, const char *message)
{
    return json_pack("{s:s, s:s}", "code", code, "message", message);
}

static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const double *x, int n, const char *const *names)
{
    json_t *o = json_object();
    for (int p = 0; o && p < n; p++)
        json_object_set_new(o, names[p], json_real(x[p]));
    return o;
}

/* The details of one model-level bit. */
static void model_details(json_t *w, unsigned bit, const pmnf_model *m, const char *const *names)
{
    const pmnf_diagnostics *g = &m->diag;
    switch (bit) {
    case PMNF_WARN_POOR_FIT:
        json_object_set_new(w, "smape", number(m->smape));
        json_object_set_new(w, "adjusted_r2", number(m->ar2));
        break;
    case PMNF_WARN_CONSTANT_ON_VARYING:
        if (g->known) {
            json_object_set_new(w, "smallest", number(g->vmin));
            json_object_set_new(w, "largest", number(g->vmax));
        }
        break;
    case PMNF_WARN_FEW_POINTS:
        if (g->known) {
            json_t *v = json_object();
            for (int p = 0; p < m->f.nparams; p++)
                if (g->distinct[p] < PMNF_FEW_VALUES)
                    json_object_set_new(v, names[p], json_integer(g->distinct[p]));
            json_object_set_new(w, "distinct_values", v);
        }
        break;
    case PMNF_WARN_INTERVAL_UNRELIABLE:
        if (g->known) {
            json_object_set_new(w, "left_out_error", number(g->far_loo_error));
            json_object_set_new(w, "interval_half_width", number(g->far_half_width));
        }
        break;
    default:
        break;
    }
}

json_t *pmnf_warnings_json(const pmnf_model *m, const char *const *names, const char *model)
{
    json_t *arr = json_array();
    for (unsigned bit = 1; arr && bit <= PMNF_WARN_LAST; bit <<= 1) {
        if (!(m->warnings & bit))
            continue;
        json_t *w = pmnf_warning_json(pmnf_warning_code(bit), pmnf_warning_text(bit));
        if (w && model)
            json_object_set_new(w, "model", json_string(model));
        if (w)
            model_details(w, bit, m, names);
        json_array_append_new(arr, w);
    }
    return arr;
}

unsigned pmnf_point_warnings_json(json_t *arr, const pmnf_model *m, const double *point,
                           const char *const *names, const char *model)
{
    pmnf_point_check pc;
    pmnf_assess_point(m, point, &pc);
    int k = m->f.nparams;
    for (unsigned bit = PMNF_WARN_NEGATIVE_PREDICTION; bit <= PMNF_WARN_EXTRAPOLATION_FAR;
         bit <<= 1) {
        if (!(pc.warnings & bit))
            continue;
        json_t *w = pmnf_warning_json(pmnf_warning_code(bit), pmnf_warning_text(bit));
        if (!w)
            continue;
        if (model)
            json_object_set_new(w, "model", json_string(model));
        if (bit == PMNF_WARN_EXTRAPOLATION_FAR) {
            json_object_set_new(w, "parameter", json_string(names[pc.far_param]));
            json_object_set_new(w, "factor", number(pc.far_factor));
            json_object_set_new(w, "limit", json_real(PMNF_FAR_FACTOR));
        } else {
            json_object_set_new(w, "lowest", number(pc.min_value));
            json_object_set_new(w, "lowest_at", point_json(pc.min_at, k, names));
            if (bit == PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION) {
                json_object_set_new(w, "edge_value", number(pc.edge_value));
                if (m->diag.known)
                    json_object_set_new(w, "smallest_measurement", number(m->diag.vmin));
            }
        }
        json_array_append_new(arr, w);
    }
    return pc.warnings;
}

