/*
 * experiment_doc.c — the creation document of an experiment, checked field
 * by field and normalized (analysis/experiment_doc.h), and the view of a
 * stored spec.
 */
#include "analysis/experiment_doc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula.h"
#include "analysis/levels.h"
#include "analysis/param_names.h"
#include "analysis/training.h"
#include "ingest/phase.h"
#include "modeling/expr.h"
#include "modeling/modeler.h"

#define MAX_PARAMS EXPERIMENT_MAX_PARAMS
#define MAX_NAME 200
#define MAX_PARAM_NAME 64
#define MAX_DEGREE (EXPR_MAX_TEXT + 1)

/* The fields of the creation document, in the order views show them. */
static const char *const top_keys[] = {"name", "parameters", "scaling", "training", "cost",
                                       "markers", "measure", "validation_markers", "modeler",
                                       "iteration_phases", "factors", NULL};
/* The modeler of experiments created without one: the robust modeler, which
 * bench/bench_robust.c shows extrapolating better than Extra-P's on noisy
 * data and no worse on clean data. Experiments stored before there was a
 * choice have no "modeler" in their spec and keep Extra-P's. */
#define DEFAULT_MODELER pmnf_modeler_name(PMNF_MODELER_DEFAULT)
#define STORED_DEFAULT_MODELER "extrap"
#define MAX_MARKERS 256
static const char *const training_keys[] = {"train_samples", "validation_samples", "batch_size",
                                            "data_parallel", "model_parallel", "warmup_steps",
                                            NULL};
static const char *const cost_keys[] = {"cores_per_rank", "price_per_core_hour", "formula",
                                        "currency", NULL};

/* --- validation ---------------------------------------------------------- */

/* A short description of a JSON value for messages: "a string", "-3". */
static void describe(const json_t *v, char *buf, size_t cap)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: snprintf(buf, cap, "an object"); break;
    case JSON_ARRAY: snprintf(buf, cap, "an array"); break;
    case JSON_STRING: snprintf(buf, cap, "a string"); break;
    case JSON_INTEGER: snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: snprintf(buf, cap, "%.17g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, cap, "true"); break;
    case JSON_FALSE: snprintf(buf, cap, "false"); break;
    default: snprintf(buf, cap, "null"); break;
    }
}

/* One validation run: where the first fault goes. */
typedef struct checker {
    an_problem *p;
    int failed;
} checker;

static int fault(checker *ck, const char *field, const char *msg, const json_t *got)
{
    if (ck->failed)
        return -1;
    char what[64] = "";
    if (got)
        describe(got, what, sizeof what);
    if (got)
        an_problem_set(ck->p, 400, field, "%s, got %s", msg, what);
    else
        an_problem_set(ck->p, 400, field, "%s", msg);
    ck->failed = 1;
    return -1;
}

/* Every key of obj must be in allowed (NULL-terminated). prefix: "" or
 * "training." for the field name in the message. */
static int only_known(checker *ck, const json_t *obj, const char *prefix,
                      const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = !strcmp(key, *a);
        if (!ok) {
            char field[160];
            snprintf(field, sizeof field, "%s%s", prefix, key);
            return fault(ck, field, "unknown field", NULL);
        }
    }
    return 0;
}

/* An integer >= min; absent -> *out = dflt, unless dflt < 0 (required). */
static int get_int(checker *ck, const json_t *obj, const char *key, const char *field,
                   json_int_t min, json_int_t dflt, json_int_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = dflt;
        return dflt < 0 ? fault(ck, field, "is required", NULL) : 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min) {
        char msg[64];
        snprintf(msg, sizeof msg, "must be an integer >= %" JSON_INTEGER_FORMAT, min);
        return fault(ck, field, msg, v);
    }
    *out = json_integer_value(v);
    return 0;
}

/* A finite number > 0 (positive) or >= 0; required. */
static int get_number(checker *ck, const json_t *obj, const char *key, const char *field,
                      int positive, double *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return fault(ck, field, "is required", NULL);
    double x = json_number_value(v);
    if (!json_is_number(v) || (positive ? !(x > 0) : !(x >= 0)))
        return fault(ck, field, positive ? "must be a number > 0" : "must be a number >= 0", v);
    *out = x;
    return 0;
}

static int valid_param_name(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* The sample coordinates a created experiment's expressions are tried at:
 * trial t gives parameter i the value 2^((7t(i+1) + 3i) mod 21), so the
 * diagonal (all equal) and mixed coordinates from 1 to 2^20 both occur. */
#define SAMPLE_TRIALS 64
static void sample_point(int t, int nnames, double *point)
{
    for (int i = 0; i < nnames; i++)
        point[i] = ldexp(1.0, (7 * t * (i + 1) + 3 * i) % 21);
}

/* Is e a finite number > 0 at one of the sample coordinates? */
static int degree_positive_somewhere(const expr *e, int nnames, double *point)
{
    for (int t = 0; t < SAMPLE_TRIALS; t++) {
        double v;
        sample_point(t, nnames, point);
        if (!expr_eval(e, point, &v) && isfinite(v) && v > 0)
            return 1;
    }
    return 0;
}

/* Checks one degree of parallelism (data_parallel G, model_parallel M): an
 * arithmetic expression over the experiment's parameters (modeling/expr.h),
 * e.g. "ranks", "ranks/4", "4". One without parameters must be > 0. Returns
 * 0, or -1 with a message (with the byte offset of a syntax fault). */
static int check_degree(const char *text, const char *const *names, int nnames, char *msg,
                        size_t msgcap)
{
    expr e;
    if (expr_compile(text, names, nnames, &e, msg, msgcap))
        return -1;
    int uses = 0;
    for (int i = 0; i < nnames; i++)
        uses |= expr_uses(&e, i);
    double zeros[MAX_PARAMS] = {0}, v;
    if (!uses) {
        if (expr_eval(&e, zeros, &v) || !(v > 0)) {
            snprintf(msg, msgcap, "must be > 0");
            return -1;
        }
        return 0;
    }
    /* One over parameters must be a finite number > 0 somewhere, else no
     * coordinate has a positive number of steps per epoch ("ranks/0",
     * "ranks-ranks") and every analysis would fail later */
    double point[MAX_PARAMS];
    if (degree_positive_somewhere(&e, nnames, point))
        return 0;
    snprintf(msg, msgcap, "is never a finite number > 0 (tried every parameter at 1 to 2^20): "
                          "no coordinate would have a positive number of steps per epoch");
    return -1;
}

/* A degree given as a string or a positive integer; normalized to text into
 * out. Absent -> dflt, or required when dflt is NULL. */
static int get_degree(checker *ck, const json_t *obj, const char *key, const char *field,
                      const char *const *names, int nnames, const char *dflt, char *out,
                      size_t outcap)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (!dflt)
            return fault(ck, field, "is required", NULL);
        snprintf(out, outcap, "%s", dflt);
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) > 0) {
        snprintf(out, outcap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    }
    if (!json_is_string(v))
        return fault(ck, field, "must be a parameter name, an expression or an integer > 0", v);
    const char *s = json_string_value(v);
    if (!*s || strlen(s) >= outcap) {
        char msg[96];
        snprintf(msg, sizeof msg, "must be 1 to %zu characters", outcap - 1);
        return fault(ck, field, msg, NULL);
    }
    char msg[256];
    if (check_degree(s, names, nnames, msg, sizeof msg))
        return fault(ck, field, msg, NULL);
    snprintf(out, outcap, "%s", s);
    return 0;
}

/* A sample count or batch size (train_samples, validation_samples,
 * batch_size): an integer >= min, or an expression of the parameters
 * (modeling/expr.h) such as "50000*x1" or "x2". One without parameters must
 * be >= min too. Absent -> dflt, or required when dflt < 0. *out: a new
 * reference to what is stored (the integer, or the text). */
static int get_quantity(checker *ck, const json_t *obj, const char *key, const char *field,
                        const char *const *names, int nnames, json_int_t min, json_int_t dflt,
                        json_t **out)
{
    const json_t *v = json_object_get(obj, key);
    char msg[256];
    *out = NULL;
    if (!v) {
        if (dflt < 0)
            return fault(ck, field, "is required", NULL);
        *out = json_integer(dflt);
        return 0;
    }
    snprintf(msg, sizeof msg, "must be an integer >= %" JSON_INTEGER_FORMAT
             " or an expression of the parameters", min);
    if (json_is_integer(v)) {
        if (json_integer_value(v) < min)
            return fault(ck, field, msg, v);
        *out = json_integer(json_integer_value(v));
        return 0;
    }
    if (!json_is_string(v))
        return fault(ck, field, msg, v);
    const char *s = json_string_value(v);
    if (!*s || strlen(s) > EXPR_MAX_TEXT) {
        snprintf(msg, sizeof msg, "must be 1 to %d characters", EXPR_MAX_TEXT);
        return fault(ck, field, msg, NULL);
    }
    expr e;
    if (expr_compile(s, names, nnames, &e, msg, sizeof msg))
        return fault(ck, field, msg, NULL);
    int uses = 0;
    for (int i = 0; i < nnames; i++)
        uses |= expr_uses(&e, i);
    double zeros[MAX_PARAMS] = {0}, x;
    if (!uses && (expr_eval(&e, zeros, &x) || !(x >= (double)min))) {
        snprintf(msg, sizeof msg, "must be >= %" JSON_INTEGER_FORMAT, min);
        return fault(ck, field, msg, NULL);
    }
    *out = json_string(s);
    return 0;
}

/* The set-up as a whole: when nothing in it depends on a parameter, it must
 * give at least one training step per epoch. One that depends on parameters
 * must give one somewhere: at some probe point with every parameter 2^k,
 * k = 0..20 (a set-up with steps nowhere is refused; each uploaded
 * coordinate is checked again, api/profiles.c). */
static int check_steps(checker *ck, const json_t *training, const char *const *names, int nnames)
{
    training_setup s;
    char field[64], msg[400];
    if (training_compile(training, names, nnames, &s, field, sizeof field, msg, sizeof msg))
        return fault(ck, field, msg, NULL);
    int constant = 1;
    for (int k = 0; k < TRAINING_NEXPR; k++)
        constant &= training_is_constant(&s, k, nnames);
    double point[MAX_PARAMS] = {0}, n_t, n_v;
    if (constant) {
        if (training_steps_at(&s, point, NULL, 0, &n_t, &n_v, field, sizeof field, msg,
                              sizeof msg))
            return fault(ck, field, msg, NULL);
        return 0;
    }
    char first_field[64] = "", first_msg[400] = "";
    for (int k = 0; k <= 20; k++) {
        for (int i = 0; i < nnames; i++)
            point[i] = (double)(1L << k);
        if (training_steps_at(&s, point, names, nnames, &n_t, &n_v, field, sizeof field, msg,
                              sizeof msg) == 0)
            return 0;
        if (!first_field[0]) {
            snprintf(first_field, sizeof first_field, "%s", field);
            snprintf(first_msg, sizeof first_msg, "%s", msg);
        }
    }
    char why[600];
    snprintf(why, sizeof why,
             "gives no positive step count at any probe point (every parameter 1, 2, 4, ..., "
             "2^20); at the first: %s",
             first_msg);
    return fault(ck, first_field, why, NULL);
}

int experiment_doc_validate(const json_t *doc, experiment_doc *e, an_problem *p)
{
    checker ck = {p, 0};
    char field[96];

    if (only_known(&ck, doc, "", top_keys))
        return -1;

    const json_t *name = json_object_get(doc, "name");
    if (!name)
        return fault(&ck, "name", "is required", NULL);
    if (!json_is_string(name))
        return fault(&ck, "name", "must be a string", name);
    const char *nm = json_string_value(name);
    size_t nlen = strlen(nm);
    if (nlen == 0 || nlen > MAX_NAME)
        return fault(&ck, "name", "must be 1 to 200 bytes long", NULL);
    for (const char *p = nm; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return fault(&ck, "name", "must not contain control characters", NULL);

    const json_t *params = json_object_get(doc, "parameters");
    if (!params)
        return fault(&ck, "parameters", "is required", NULL);
    if (!json_is_array(params))
        return fault(&ck, "parameters", "must be an array of parameter names", params);
    size_t np = json_array_size(params);
    if (np < 1 || np > MAX_PARAMS)
        return fault(&ck, "parameters", "must name 1 to 8 parameters", NULL);
    const char *names[MAX_PARAMS];
    for (size_t i = 0; i < np; i++) {
        const json_t *p = json_array_get(params, i);
        snprintf(field, sizeof field, "parameters[%zu]", i);
        if (!json_is_string(p))
            return fault(&ck, field, "must be a string", p);
        names[i] = json_string_value(p);
        if (strlen(names[i]) > MAX_PARAM_NAME || !valid_param_name(names[i]))
            return fault(&ck, field,
                         "must match [A-Za-z_][A-Za-z0-9_]* and be at most 64 characters", NULL);
        char why[300];
        if (param_name_check(names[i], why, sizeof why))
            return fault(&ck, field, why, NULL);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j])) {
                char msg[128];
                snprintf(msg, sizeof msg, "\"%s\" is repeated (also parameters[%zu])", names[i],
                         j);
                return fault(&ck, field, msg, NULL);
            }
    }

    /* categorical factors: name -> declared levels (api/levels.h) */
    const json_t *factors = json_object_get(doc, "factors");
    if (factors) {
        char ffield[160], fmsg[200];
        if (levels_validate(factors, names, (int)np, ffield, sizeof ffield, fmsg, sizeof fmsg))
            return fault(&ck, ffield, fmsg, NULL);
    }

    const json_t *scaling = json_object_get(doc, "scaling");
    if (!scaling)
        return fault(&ck, "scaling", "is required", NULL);
    const char *sc = json_string_value(scaling);
    if (!sc || (strcmp(sc, "weak") && strcmp(sc, "strong")))
        return fault(&ck, "scaling", "must be \"weak\" or \"strong\"",
                     json_is_string(scaling) ? NULL : scaling);

    const json_t *tr = json_object_get(doc, "training");
    if (!tr)
        return fault(&ck, "training", "is required", NULL);
    if (!json_is_object(tr))
        return fault(&ck, "training", "must be an object", tr);
    if (only_known(&ck, tr, "training.", training_keys))
        return -1;
    json_int_t warmup;
    json_t *train = NULL, *valid = NULL, *batch = NULL;
    char dp[MAX_DEGREE], mp[MAX_DEGREE];
    if (get_quantity(&ck, tr, "train_samples", "training.train_samples", names, (int)np, 1, -1,
                     &train) ||
        get_quantity(&ck, tr, "validation_samples", "training.validation_samples", names,
                     (int)np, 0, 0, &valid) ||
        get_quantity(&ck, tr, "batch_size", "training.batch_size", names, (int)np, 1, -1,
                     &batch) ||
        get_degree(&ck, tr, "data_parallel", "training.data_parallel", names, (int)np, NULL, dp,
                   sizeof dp) ||
        get_degree(&ck, tr, "model_parallel", "training.model_parallel", names, (int)np, "1", mp,
                   sizeof mp) ||
        get_int(&ck, tr, "warmup_steps", "training.warmup_steps", 0, 0, &warmup)) {
        json_decref(train);
        json_decref(valid);
        json_decref(batch);
        return -1;
    }
    json_t *normalized = json_pack("{s:o, s:o, s:o, s:s, s:s, s:I}", "train_samples", train,
                                   "validation_samples", valid, "batch_size", batch,
                                   "data_parallel", dp, "model_parallel", mp, "warmup_steps",
                                   warmup);
    if (!normalized) {
        return an_problem_set(p, 500, NULL, "out of memory");
    }
    /* e owns it from here, whatever comes */
    e->spec = json_pack("{s:o}", "training", normalized);
    if (!e->spec) {
        return an_problem_set(p, 500, NULL, "out of memory");
    }
    if (check_steps(&ck, normalized, names, (int)np))
        return -1;
    int ranks_at;
    char ranks_why[600];
    if (param_ranks_check(names, (int)np, dp, mp, &ranks_at, ranks_why, sizeof ranks_why)) {
        snprintf(field, sizeof field, "parameters[%d]", ranks_at);
        return fault(&ck, field, ranks_why, NULL);
    }

    const json_t *cost = json_object_get(doc, "cost");
    double cores = 0, price = 0;
    const json_t *formula_text = NULL;
    if (cost) {
        if (!json_is_object(cost))
            return fault(&ck, "cost", "must be an object", cost);
        if (only_known(&ck, cost, "cost.", cost_keys) ||
            get_number(&ck, cost, "cores_per_rank", "cost.cores_per_rank", 1, &cores) ||
            get_number(&ck, cost, "price_per_core_hour", "cost.price_per_core_hour", 0, &price))
            return -1;
        /* the unit of money of the price ("USD", "EUR"): answers and the
         * dashboard name it; absent, money is in "price units" */
        const json_t *currency = json_object_get(cost, "currency");
        const char *cur = json_string_value(currency);
        if (currency && (!cur || strlen(cur) < 1 || strlen(cur) > 8 ||
                         strspn(cur, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(cur)))
            return fault(&ck, "cost.currency",
                         "must be a currency code of 1 to 8 capital letters (ISO 4217: \"USD\", "
                         "\"EUR\")",
                         currency);
        /* money per epoch over T, ranks and the parameters (api/formula.h) */
        formula_text = json_object_get(cost, "formula");
        if (formula_text && !json_is_string(formula_text))
            return fault(&ck, "cost.formula", "must be a string", formula_text);
        if (formula_text) {
            formula f;
            char msg[256];
            if (formula_compile(json_string_value(formula_text), names, (int)np, &f, msg,
                                sizeof msg))
                return fault(&ck, "cost.formula", msg, NULL);
            /* money must come out finite somewhere ("T/0" never does) */
            int finite = 0;
            double point[MAX_PARAMS];
            for (int t = 0; t < SAMPLE_TRIALS && !finite; t++) {
                sample_point(t, (int)np, point);
                double ranks = ldexp(1.0, t % 21);
                finite = isfinite(formula_eval(&f, 100.0 * (t + 1), ranks, cores, price, point));
            }
            formula_free(&f);
            if (!finite)
                return fault(&ck, "cost.formula",
                             "is never a finite number (tried T from 100 to 6400 s, ranks and "
                             "every parameter at 1 to 2^20): a division by zero?",
                             NULL);
        }
    }

    /* step/epoch markers of Nsight Systems exports: comma-separated name parts */
    const json_t *markers = json_object_get(doc, "markers");
    if (markers) {
        const char *mk = json_string_value(markers);
        size_t len = mk ? strlen(mk) : 0;
        int empty_part = !mk || len == 0 || mk[0] == ',' || mk[len - 1] == ',' || strstr(mk, ",,");
        if (!mk || len > MAX_MARKERS || empty_part)
            return fault(&ck, "markers",
                         "must be a string of 1 to 256 bytes: comma-separated, non-empty parts "
                         "of NVTX range names (e.g. \"step,epoch\")",
                         mk ? NULL : markers);
    }

    /* the modeler of its refits (a refit can still ask for the other) */
    const json_t *modeler = json_object_get(doc, "modeler");
    pmnf_modeler_kind kind;
    if (modeler && (!json_is_string(modeler) ||
                    pmnf_modeler_parse(json_string_value(modeler), &kind) < 0))
        return fault(&ck, "modeler", "unknown modeler: must be \"robust\" or \"extrap\"", modeler);

    if (e->spec && cost) {
        json_t *c = json_pack("{s:f, s:f}", "cores_per_rank", cores, "price_per_core_hour", price);
        if (c && formula_text)
            json_object_set(c, "formula", (json_t *)formula_text);
        if (c && json_object_get(cost, "currency"))
            json_object_set(c, "currency", json_object_get(cost, "currency"));
        json_object_set_new(e->spec, "cost", c);
    }
    if (e->spec && markers)
        json_object_set(e->spec, "markers", (json_t *)markers);
    /* name parts of validation steps in traces (ingest/phase.h) */
    const json_t *vmarkers = json_object_get(doc, "validation_markers");
    if (vmarkers) {
        if (ingest_phase_check(json_string_value(vmarkers)))
            return fault(&ck, "validation_markers",
                         "must be a string of 1 to 256 bytes: comma-separated, non-empty parts "
                         "of the names of validation steps or of ranges around them (e.g. "
                         "\"val,eval\")",
                         json_is_string(vmarkers) ? NULL : vmarkers);
        if (e->spec)
            json_object_set(e->spec, "validation_markers", (json_t *)vmarkers);
    }
    /* name parts of the S-SGD phases (paper 004; api/iterations.c) */
    const json_t *iphases = json_object_get(doc, "iteration_phases");
    if (iphases) {
        static const char *const keys[] = {"io", "h2d", "md", "forward", "backward", "update",
                                           NULL};
        if (!json_is_object(iphases))
            return fault(&ck, "iteration_phases", "must be an object", iphases);
        if (only_known(&ck, iphases, "iteration_phases.", keys))
            return -1;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)iphases, k, v)
        {
            if (ingest_phase_check(json_string_value(v))) {
                char f[64];
                snprintf(f, sizeof f, "iteration_phases.%s", k);
                return fault(&ck, f,
                             "must be a string of 1 to 256 bytes: comma-separated, non-empty "
                             "name parts, preferred first (e.g. \"forward,fwd\")",
                             json_is_string(v) ? NULL : v);
            }
        }
        if (e->spec)
            json_object_set(e->spec, "iteration_phases", (json_t *)iphases);
    }
    /* how steps and ranks are summarized: the median (Extra-Deep), or the
     * mean, for periodic work (a kernel every 4th step) */
    const json_t *measure = json_object_get(doc, "measure");
    if (measure) {
        const char *ms = json_string_value(measure);
        if (!ms || (strcmp(ms, "median") && strcmp(ms, "mean")))
            return fault(&ck, "measure", "must be \"median\" or \"mean\"",
                         ms ? NULL : measure);
        if (e->spec)
            json_object_set(e->spec, "measure", (json_t *)measure);
    }
    if (e->spec)
        json_object_set_new(e->spec, "modeler",
                            json_string(modeler ? json_string_value(modeler) : DEFAULT_MODELER));
    if (factors && e->spec)
        json_object_set(e->spec, "factors", (json_t *)factors);
    e->name = strdup(nm);
    e->scaling = strdup(sc);
    e->parameters = calloc(np, sizeof *e->parameters);
    int ok = e->spec && e->name && e->scaling && e->parameters;
    if (ok)
        e->nparams = (int)np;
    for (size_t i = 0; ok && i < np; i++)
        ok = (e->parameters[i] = strdup(names[i])) != NULL;
    if (!ok) {
        return an_problem_set(p, 500, NULL, "out of memory");
    }
    return 0;
}

void experiment_doc_free(experiment_doc *e)
{
    free(e->name);
    free(e->scaling);
    for (int i = 0; e->parameters && i < e->nparams; i++)
        free(e->parameters[i]);
    free(e->parameters);
    json_decref(e->spec);
    memset(e, 0, sizeof *e);
}

/* Sets into dst the keys of src: those in order first, in that order, then
 * the others as they come (jsonb hands keys back sorted by length). */
static void copy_ordered(json_t *dst, const json_t *src, const char *const *order)
{
    for (const char *const *k = order; *k; k++) {
        json_t *v = json_object_get(src, *k);
        if (v)
            json_object_set(dst, *k, v);
    }
    json_object_update_missing(dst, (json_t *)src);
}

int experiment_doc_view_spec(json_t *v, const json_t *spec)
{
    json_t *training = json_object(), *cost = json_object();
    if (!training || !cost) {
        json_decref(training);
        json_decref(cost);
        return -1;
    }
    const json_t *spec_cost = json_object_get(spec, "cost");
    copy_ordered(training, json_object_get(spec, "training"), training_keys);
    copy_ordered(cost, spec_cost, cost_keys);
    json_object_set_new(v, "training", training);
    json_object_set_new(v, "cost", spec_cost ? cost : json_null());
    if (!spec_cost)
        json_decref(cost);
    const char *modeler = json_string_value(json_object_get(spec, "modeler"));
    json_object_set_new(v, "modeler", json_string(modeler ? modeler : STORED_DEFAULT_MODELER));
    json_object_update_missing(v, (json_t *)spec); /* keys later features add */
    return 0;
}
