/*
 * model_json.c — fitted models to JSON and back (see model_json.h).
 */
#include "modeling/model_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/warning_json.h"

static json_t *terms_json(const pmnf_function *f, const char *const *names);

/* One segment of parameter p's segmented factor as a function of p. */
static pmnf_function segment_function(const pmnf_segment *g, int p, int nparams)
{
    pmnf_function one = {.nparams = nparams, .constant = g->constant, .nterms = g->nterms};
    one.terms[0] = (pmnf_term){.coef = g->coef, .nfactors = 1, .factors = {{p, g->poly, g->log}}};
    return one;
}

/* A segmented factor's "segments": [{"function","constant","terms","upto"},
 * {"function","constant","terms","from"}], the form of a segmented model's. */
static json_t *segfn_json(const pmnf_segfn *s, int p, int nparams, const char *const *names)
{
    json_t *arr = json_array();
    for (int k = 0; arr && k < 2; k++) {
        pmnf_function one = segment_function(&s->s[k], p, nparams);
        char *text = pmnf_format_dup(&one, names);
        json_t *seg = text ? json_pack("{s:s, s:f, s:o*, s:f}", "function", text, "constant",
                                       one.constant, "terms", terms_json(&one, names),
                                       k ? "from" : "upto", k ? s->from : s->upto)
                           : NULL;
        free(text);
        if (!seg || json_array_append_new(arr, seg) < 0) { /* never a segment left out */
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *terms_json(const pmnf_function *f, const char *const *names)
{
    json_t *terms = json_array();
    for (int t = 0; terms && t < f->nterms; t++) {
        const pmnf_term *term = &f->terms[t];
        json_t *factors = json_array();
        for (int k = 0; factors && k < term->nfactors; k++) {
            int p = term->factors[k].param;
            json_t *fa = json_pack("{s:s, s:f, s:f}", "parameter", names[p], "poly",
                                   term->factors[k].poly, "log", term->factors[k].log);
            if (fa && (f->segmented & (1u << p)))
                json_object_set_new(fa, "segments", segfn_json(&f->seg[p], p, f->nparams, names));
            json_array_append_new(factors, fa);
        }
        json_array_append_new(terms, json_pack("{s:f, s:o*}", "coefficient", term->coef, "factors",
                                               factors));
    }
    return terms;
}

static json_t *interval_json(const pmnf_model *m)
{
    json_t *cov = json_array();
    for (int i = 0; cov && i < m->ncoef * m->ncoef; i++)
        json_array_append_new(cov, json_real(m->cov[i]));
    json_t *o = json_pack("{s:i, s:f, s:f, s:o*}", "dof", m->dof, "sigma2", m->sigma2, "t975",
                          m->t975, "cov", cov);
    if (o && m->noise_rel2 > 0)
        json_object_set_new(o, "noise_rel2", json_real(m->noise_rel2));
    if (o && m->widen[PMNF_WIDEN_AT - 1] > 0) {
        json_t *w = json_array();
        for (int r = 0; w && r < PMNF_WIDEN_AT; r++)
            json_array_append_new(w, json_real(m->widen[r]));
        json_object_set_new(o, "widening", w);
    }
    return o;
}

/* The upper segment's interval data, in interval_json's form. */
static json_t *interval2_json(const pmnf_model *m)
{
    json_t *cov = json_array();
    for (int i = 0; cov && i < m->ncoef2 * m->ncoef2; i++)
        json_array_append_new(cov, json_real(m->cov2[i]));
    return json_pack("{s:i, s:f, s:f, s:o*}", "dof", m->dof2, "sigma2", m->sigma2_2, "t975",
                     m->t975_2, "cov", cov);
}

/* see model_json.h */
char *api_model_text(const pmnf_model *m, const char *const *names)
{
    if (m->nsegments != 2)
        return pmnf_format_dup(&m->f, names);
    char *t1 = pmnf_format_dup(&m->f, names), *t2 = pmnf_format_dup(&m->f2, names);
    char b1[32], b2[32], *text = NULL;
    pmnf_format_double(m->break_lo, b1);
    pmnf_format_double(m->break_hi, b2);
    static const char form[] = "%s for %s<=%s, %s for %s>=%s";
    int need = t1 && t2 ? snprintf(NULL, 0, form, t1, names[0], b1, t2, names[0], b2) : -1;
    if (need >= 0 && (text = malloc((size_t)need + 1)))
        snprintf(text, (size_t)need + 1, form, t1, names[0], b1, t2, names[0], b2);
    free(t1);
    free(t2);
    return text;
}

/* A segmented model's segments, Extra-P's "f for p<=b" each, and the
 * change point ("break") of segmented models and of models warned
 * two_regimes. -1 when out of memory. */
static int segments_json(json_t *o, const pmnf_model *m, const char *const *names,
                         int with_interval)
{
    if (m->nsegments == 2) {
        char *t1 = pmnf_format_dup(&m->f, names), *t2 = pmnf_format_dup(&m->f2, names);
        char *text = api_model_text(m, names);
        if (!t1 || !t2 || !text || json_object_set_new(o, "function", json_string(text)) < 0) {
            free(t1);
            free(t2);
            free(text);
            return -1; /* never the one-segment text under a two-segment model */
        }
        free(text);
        json_t *up = json_pack("{s:s, s:f, s:o*, s:f}", "function", t2, "constant",
                               m->f2.constant, "terms", terms_json(&m->f2, names), "from",
                               m->break_hi);
        if (up && with_interval)
            json_object_set_new(up, "interval", interval2_json(m));
        json_object_set_new(o, "segments",
                            json_pack("[{s:s, s:f, s:o*, s:f}, o*]", "function", t1, "constant",
                                      m->f.constant, "terms", terms_json(&m->f, names), "upto",
                                      m->break_lo, up));
        free(t1);
        free(t2);
    }
    if (m->nsegments == 2 || m->f.segmented || (m->warnings & PMNF_WARN_TWO_REGIMES))
        json_object_set_new(o, "break",
                            json_pack("{s:s, s:f, s:f}", "parameter", names[m->break_param],
                                      "low", m->break_lo, "high", m->break_hi));
    return 0;
}

static json_t *finite_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *api_model_diagnostics_json(const pmnf_model *m, const char *const *names)
{
    const pmnf_diagnostics *g = &m->diag;
    json_t *o = json_pack("{s:o, s:o, s:o}", "smape", finite_or_null(m->smape), "adjusted_r2",
                          finite_or_null(m->ar2), "rss", finite_or_null(m->rss));
    if (!o)
        return NULL;
    /* Extra-P's modeler chooses by its own cross-validation score; every
     * model has the leave-one-out error of its terms */
    if (m->modeler == PMNF_MODELER_EXTRAP)
        json_object_set_new(o, "cv_smape", finite_or_null(m->cv_smape));
    if (!g->known)
        return o;
    json_object_set_new(o, "cross_validated_smape", finite_or_null(g->loo_smape));
    json_t *params = json_object();
    for (int p = 0; params && p < m->f.nparams; p++)
        json_object_set_new(params, names[p],
                            json_pack("{s:f, s:f, s:i}", "min", g->lo[p], "max", g->hi[p],
                                      "distinct", g->distinct[p]));
    json_object_set_new(o, "parameters", params);
    json_object_set_new(o, "measurements",
                        json_pack("{s:o, s:o}", "min", finite_or_null(g->vmin), "max", finite_or_null(g->vmax)));
    json_object_set_new(o, "farthest_point",
                        json_pack("{s:o, s:o}", "left_out_error", finite_or_null(g->far_loo_error),
                                  "interval_half_width", finite_or_null(g->far_half_width)));
    return o;
}

/* Reads the diagnostics back (a model stored before them: known = 0). */
/* A robust model's widening profile (pmnf_model.widen): PMNF_WIDEN_AT
 * finite numbers of at least 1, or none kept (all 0: one widening). */
static void read_widening(const json_t *w, pmnf_model *m)
{
    double k[PMNF_WIDEN_AT];
    if (!json_is_array(w) || json_array_size(w) != PMNF_WIDEN_AT)
        return;
    for (int r = 0; r < PMNF_WIDEN_AT; r++) {
        k[r] = json_number_value(json_array_get(w, (size_t)r));
        if (!json_is_number(json_array_get(w, (size_t)r)) || !isfinite(k[r]) || !(k[r] >= 1))
            return;
    }
    memcpy(m->widen, k, sizeof k);
}

static void read_diagnostics(const json_t *o, const char *const *names, int nparams,
                             pmnf_diagnostics *g)
{
    memset(g, 0, sizeof *g);
    const json_t *params = json_object_get(o, "parameters");
    const json_t *meas = json_object_get(o, "measurements");
    const json_t *far = json_object_get(o, "farthest_point");
    if (!json_is_object(params) || !json_is_object(meas))
        return;
    for (int p = 0; p < nparams; p++) {
        const json_t *q = json_object_get(params, names[p]);
        if (!json_is_number(json_object_get(q, "min")) || !json_is_number(json_object_get(q, "max")))
            return;
        g->lo[p] = json_number_value(json_object_get(q, "min"));
        g->hi[p] = json_number_value(json_object_get(q, "max"));
        g->distinct[p] = (int)json_integer_value(json_object_get(q, "distinct"));
    }
    const json_t *vmin = json_object_get(meas, "min"), *vmax = json_object_get(meas, "max");
    g->vmin = json_is_number(vmin) ? json_number_value(vmin) : NAN;
    g->vmax = json_is_number(vmax) ? json_number_value(vmax) : NAN;
    const json_t *loo = json_object_get(o, "cross_validated_smape");
    g->loo_smape = json_is_number(loo) ? json_number_value(loo) : NAN;
    const json_t *e = json_object_get(far, "left_out_error"),
                 *h = json_object_get(far, "interval_half_width");
    g->far_loo_error = json_is_number(e) ? json_number_value(e) : NAN;
    g->far_half_width = json_is_number(h) ? json_number_value(h) : NAN;
    g->known = 1;
}

json_t *api_model_to_json(const pmnf_model *m, const char *const *names, int with_interval)
{
    /* segmented factors repeat their segments in every term: sized, not cut */
    char *text = pmnf_format_dup(&m->f, names);
    if (!text)
        return NULL;
    json_t *warnings = pmnf_warnings_json(m, names, NULL);
    json_t *o = json_pack("{s:s, s:f, s:o*, s:f, s:f, s:f, s:f, s:i, s:o*}", "function", text,
                          "constant", m->f.constant, "terms", terms_json(&m->f, names), "rss",
                          m->rss, "smape", m->smape, "adjusted_r2", m->ar2, "cv_smape",
                          m->cv_smape, "points", m->npoints, "warnings", warnings);
    free(text);
    if (o) {
        json_object_set_new(o, "modeler", json_string(pmnf_modeler_name(m->modeler)));
        json_object_set_new(o, "diagnostics", api_model_diagnostics_json(m, names));
        if (segments_json(o, m, names, with_interval) < 0) { /* out of memory */
            json_decref(o);
            return NULL;
        }
    }
    if (o && with_interval) {
        json_object_set_new(o, "interval", interval_json(m));
        json_object_set_new(o, "warning_bits", json_integer(m->warnings));
    }
    return o;
}

static int param_index(const char *name, const char *const *names, int nparams)
{
    if (!name)
        return -1;
    for (int i = 0; i < nparams; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

static double number(const json_t *o, const char *key, int *ok)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        *ok = 0;
        return 0;
    }
    return json_number_value(v);
}

static int read_terms(const json_t *terms, const char *const *names, int nparams, pmnf_function *f,
                      int allow_segments);

/* A segmented factor's "segments" back (segfn_json): two functions of
 * parameter p, a constant and at most one term each. */
static int read_segfn(const json_t *arr, int p, const char *const *names, int nparams,
                      pmnf_segfn *s)
{
    int ok = 1;
    if (!json_is_array(arr) || json_array_size(arr) != 2)
        return -1;
    for (int k = 0; k < 2; k++) {
        const json_t *js = json_array_get(arr, (size_t)k);
        pmnf_function one = {.nparams = nparams};
        one.constant = number(js, "constant", &ok);
        double bound = number(js, k ? "from" : "upto", &ok);
        if (!ok || read_terms(json_object_get(js, "terms"), names, nparams, &one, 0) < 0 ||
            one.nterms > 1 ||
            (one.nterms == 1 &&
             (one.terms[0].nfactors != 1 || one.terms[0].factors[0].param != p)))
            return -1;
        pmnf_segment *g = &s->s[k];
        *g = (pmnf_segment){.constant = one.constant, .nterms = one.nterms};
        if (one.nterms) {
            g->coef = one.terms[0].coef;
            g->poly = one.terms[0].factors[0].poly;
            g->log = one.terms[0].factors[0].log;
        }
        if (k)
            s->from = bound;
        else
            s->upto = bound;
    }
    return isfinite(s->upto) && isfinite(s->from) && s->upto <= s->from ? 0 : -1;
}

static int read_terms(const json_t *terms, const char *const *names, int nparams, pmnf_function *f,
                      int allow_segments)
{
    if (!json_is_array(terms) || json_array_size(terms) > PMNF_MAX_TERMS)
        return -1;
    int ok = 1;
    unsigned plain = 0; /* parameters with a factor that is not segmented */
    for (size_t t = 0; t < json_array_size(terms); t++) {
        const json_t *jt = json_array_get(terms, t);
        const json_t *factors = json_object_get(jt, "factors");
        pmnf_term *term = &f->terms[f->nterms++];
        term->coef = number(jt, "coefficient", &ok);
        if (!json_is_array(factors) || json_array_size(factors) > PMNF_MAX_PARAMS)
            return -1;
        for (size_t k = 0; k < json_array_size(factors); k++) {
            const json_t *jf = json_array_get(factors, k);
            int p = param_index(json_string_value(json_object_get(jf, "parameter")), names,
                                nparams);
            if (p < 0)
                return -1;
            term->factors[term->nfactors++] =
                (pmnf_factor){p, number(jf, "poly", &ok), number(jf, "log", &ok)};
            const json_t *segs = json_object_get(jf, "segments");
            if (!segs)
                plain |= 1u << p;
            if (segs && !allow_segments)
                return -1;
            if (segs) {
                pmnf_segfn s;
                if (read_segfn(segs, p, names, nparams, &s) < 0 ||
                    ((f->segmented & (1u << p)) && !pmnf_segfn_equal(&f->seg[p], &s)))
                    return -1;
                f->segmented |= 1u << p;
                f->seg[p] = s;
            }
        }
    }
    /* every factor of a segmented parameter is the segmented function */
    if (plain & f->segmented)
        return -1;
    for (int p = 0; p < nparams; p++)
        if (f->segmented & (1u << p))
            pmnf_set_segmented(f, p, &f->seg[p]);
    return ok ? 0 : -1;
}

/* The change point and a segmented model's upper segment (segments_json). */
static int segments_from_json(const json_t *doc, const char *const *names, int nparams,
                              pmnf_model *m)
{
    const json_t *brk = json_object_get(doc, "break");
    const json_t *segs = json_object_get(doc, "segments");
    int ok = 1;
    if (brk) {
        m->break_lo = number(brk, "low", &ok);
        m->break_hi = number(brk, "high", &ok);
        int p = param_index(json_string_value(json_object_get(brk, "parameter")), names, nparams);
        m->break_param = p > 0 ? p : 0;
    }
    if (!segs)
        return ok ? 0 : -1;
    const json_t *up = json_array_get(segs, 1);
    const json_t *iv = json_object_get(up, "interval");
    const json_t *cov = json_object_get(iv, "cov");
    if (!json_is_array(segs) || json_array_size(segs) != 2 || !up || !brk || nparams != 1)
        return -1;
    m->nsegments = 2;
    m->f2.nparams = nparams;
    m->f2.constant = number(up, "constant", &ok);
    if (!ok || read_terms(json_object_get(up, "terms"), names, nparams, &m->f2, 0) < 0)
        return -1;
    m->ncoef2 = m->f2.nterms + 1;
    m->dof2 = (int)number(iv, "dof", &ok);
    m->sigma2_2 = number(iv, "sigma2", &ok);
    m->t975_2 = number(iv, "t975", &ok);
    if (!ok || !json_is_array(cov) || json_array_size(cov) != (size_t)(m->ncoef2 * m->ncoef2))
        return -1;
    for (int i = 0; i < m->ncoef2 * m->ncoef2; i++)
        m->cov2[i] = json_number_value(json_array_get(cov, (size_t)i));
    return 0;
}

int api_model_from_json(const json_t *doc, const char *const *names, int nparams, pmnf_model *m)
{
    memset(m, 0, sizeof *m);
    m->f.nparams = nparams;
    int ok = 1;
    m->f.constant = number(doc, "constant", &ok);
    m->rss = number(doc, "rss", &ok);
    m->smape = number(doc, "smape", &ok);
    m->ar2 = number(doc, "adjusted_r2", &ok);
    m->cv_smape = number(doc, "cv_smape", &ok);
    m->npoints = (int)number(doc, "points", &ok);
    m->warnings = (unsigned)json_integer_value(json_object_get(doc, "warning_bits"));
    /* documents stored before there were two modelers are Extra-P's */
    const char *modeler = json_string_value(json_object_get(doc, "modeler"));
    if (modeler && pmnf_modeler_parse(modeler, &m->modeler) < 0)
        return -1;
    if (!ok || read_terms(json_object_get(doc, "terms"), names, nparams, &m->f, 1) < 0)
        return -1;
    read_diagnostics(json_object_get(doc, "diagnostics"), names, nparams, &m->diag);
    const json_t *iv = json_object_get(doc, "interval");
    const json_t *cov = json_object_get(iv, "cov");
    m->ncoef = m->f.nterms + 1;
    m->dof = (int)number(iv, "dof", &ok);
    m->sigma2 = number(iv, "sigma2", &ok);
    m->t975 = number(iv, "t975", &ok);
    m->noise_rel2 = json_number_value(json_object_get(iv, "noise_rel2"));
    if (!ok || !json_is_array(cov) || json_array_size(cov) != (size_t)(m->ncoef * m->ncoef))
        return -1;
    for (int i = 0; i < m->ncoef * m->ncoef; i++)
        m->cov[i] = json_number_value(json_array_get(cov, (size_t)i));
    read_widening(json_object_get(iv, "widening"), m);
    if (segments_from_json(doc, names, nparams, m) < 0)
        return -1;
    /* a segmented factor's change point names the break (its first) */
    for (int p = 0; p < nparams && !json_object_get(doc, "break"); p++)
        if (m->f.segmented & (1u << p)) {
            m->break_param = p;
            m->break_lo = m->f.seg[p].upto;
            m->break_hi = m->f.seg[p].from;
            break;
        }
    return 0;
}

void api_model_growth(const pmnf_function *f, double *poly, double *log)
{
    *poly = 0;
    *log = 0;
    for (int t = 0; t < f->nterms; t++) {
        double p = 0, l = 0;
        for (int k = 0; k < f->terms[t].nfactors; k++) {
            p += f->terms[t].factors[k].poly;
            l += f->terms[t].factors[k].log;
        }
        if (t == 0 || p > *poly || (p == *poly && l > *log)) {
            *poly = p;
            *log = l;
        }
    }
}
