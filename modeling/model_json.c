/*
 * model_json.c — fitted models to JSON and back (see model_json.h).
 */
#include "modeling/model_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *terms_json(const pmnf_function *f, const char *const *names)
{
    json_t *terms = json_array();
    for (int t = 0; terms && t < f->nterms; t++) {
        const pmnf_term *term = &f->terms[t];
        json_t *factors = json_array();
        for (int k = 0; factors && k < term->nfactors; k++)
            json_array_append_new(factors, json_pack("{s:s, s:f, s:f}", "parameter",
                                                     names[term->factors[k].param], "poly",
                                                     term->factors[k].poly, "log",
                                                     term->factors[k].log));
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
    return json_pack("{s:i, s:f, s:f, s:o*}", "dof", m->dof, "sigma2", m->sigma2, "t975", m->t975,
                     "cov", cov);
}

json_t *api_model_to_json(const pmnf_model *m, const char *const *names, int with_interval)
{
    char text[2048];
    pmnf_format(&m->f, names, text, sizeof text);
    json_t *warnings = json_array();
    for (unsigned bit = 1; warnings && bit <= PMNF_WARN_LAST; bit <<= 1)
        if (m->warnings & bit)
            json_array_append_new(warnings, json_string(pmnf_warning_text(bit)));
    json_t *o = json_pack("{s:s, s:f, s:o*, s:f, s:f, s:f, s:f, s:i, s:o*}", "function", text,
                          "constant", m->f.constant, "terms", terms_json(&m->f, names), "rss",
                          m->rss, "smape", m->smape, "adjusted_r2", m->ar2, "cv_smape",
                          m->cv_smape, "points", m->npoints, "warnings", warnings);
    if (o)
        json_object_set_new(o, "modeler", json_string(pmnf_modeler_name(m->modeler)));
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

static int read_terms(const json_t *terms, const char *const *names, int nparams, pmnf_function *f)
{
    if (!json_is_array(terms) || json_array_size(terms) > PMNF_MAX_TERMS)
        return -1;
    int ok = 1;
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
        }
    }
    return ok ? 0 : -1;
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
    if (!ok || read_terms(json_object_get(doc, "terms"), names, nparams, &m->f) < 0)
        return -1;
    const json_t *iv = json_object_get(doc, "interval");
    const json_t *cov = json_object_get(iv, "cov");
    m->ncoef = m->f.nterms + 1;
    m->dof = (int)number(iv, "dof", &ok);
    m->sigma2 = number(iv, "sigma2", &ok);
    m->t975 = number(iv, "t975", &ok);
    if (!ok || !json_is_array(cov) || json_array_size(cov) != (size_t)(m->ncoef * m->ncoef))
        return -1;
    for (int i = 0; i < m->ncoef * m->ncoef; i++)
        m->cov[i] = json_number_value(json_array_get(cov, (size_t)i));
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
