/*
 * score_models.c — scores fitted models against a gen_pmnf truth file.
 *
 *   score_models TRUTH.json MODELS
 *
 * MODELS is either JSON lines with "callpath" and "function" keys (as
 * `perfcast model FILE --json` prints them; a callpath seen twice counts
 * by its last line) or one function per line in Extra-P's syntax, in the
 * truth file's callpath order. Each function is read with pmnf_parse using
 * the truth's parameter names.
 *
 * Prints one JSON line:
 *   models                    callpaths in the truth file
 *   missing                   callpaths without a model (or with one that
 *                             does not parse; those are named on stderr)
 *   term_recovery             share of callpaths whose lead exponents equal
 *                             the truth's building blocks: per parameter, the
 *                             largest (poly, log) pair over all terms, poly
 *                             rounded to 1e-4, compared lexicographically
 *   extrapolation_ape_median  absolute percentage errors at the held-out
 *   extrapolation_ape_p90     points, sorted: element n/2 and int(n*0.9)
 * Rounding and printing follow the reference scorer (Python's round() and
 * repr()); a figure that is undefined or infinite is printed as null.
 */
#include "modeling/pmnf.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct score {
    long models, missing, hits;
    double *errs;
    size_t nerrs, caperrs;
} score;

/* ---- inputs ------------------------------------------------------------ */

/* The truth's parameter names into names[]; returns their count, or -1. */
static int truth_names(json_t *truth, const char **names)
{
    json_t *params = json_object_get(truth, "parameters");
    int n = json_is_array(params) ? (int)json_array_size(params) : -1;
    if (n < 1 || n > PMNF_MAX_PARAMS)
        return -1;
    for (int i = 0; i < n; i++)
        if (!(names[i] = json_string_value(json_array_get(params, (size_t)i))))
            return -1;
    return n;
}

static char *strip(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Reads the JSON lines of a models file into an object callpath -> function. */
static void index_json_line(json_t *by, const char *line, long lineno)
{
    json_error_t e;
    json_t *o = json_loads(line, 0, &e);
    const char *cp = json_string_value(json_object_get(o, "callpath"));
    json_t *fn = json_object_get(o, "function");
    if (cp && json_is_string(fn))
        json_object_set(by, cp, fn);
    else
        fprintf(stderr, "score_models: models line %ld: no \"callpath\" and \"function\"%s%s\n",
                lineno, o ? "" : ": ", o ? "" : e.text);
    json_decref(o);
}

/* One function string (or NULL) per truth callpath, all strdup'ed. */
static char **load_models(const char *path, json_t *callpaths)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return NULL;
    }
    size_t n = json_array_size(callpaths), nplain = 0;
    char **funcs = calloc(n ? n : 1, sizeof *funcs);
    json_t *by = NULL; /* JSON lines: callpath -> function */
    char *buf = NULL;
    size_t cap = 0;
    long lineno = 0;
    while (funcs && getline(&buf, &cap, f) >= 0) {
        char *line = strip(buf);
        lineno++;
        if (!*line)
            continue;
        if (!by && !nplain && *line == '{')
            by = json_object();
        if (by)
            index_json_line(by, line, lineno);
        else if (nplain < n)
            funcs[nplain++] = strdup(line);
    }
    free(buf);
    fclose(f);
    for (size_t i = 0; by && funcs && i < n; i++) {
        const char *cp = json_string_value(json_object_get(json_array_get(callpaths, i), "callpath"));
        const char *fs = cp ? json_string_value(json_object_get(by, cp)) : NULL;
        funcs[i] = fs ? strdup(fs) : NULL;
    }
    json_decref(by);
    return funcs;
}

/* ---- scoring ----------------------------------------------------------- */

/* An exponent on the 1e-4 grid, so that equal exponents compare equal. */
static long long exponent_key(double e)
{
    return llround(e * 1e4);
}

/* Largest (poly, log) exponent pair of parameter p over the terms of f;
 * (0, 0) when no term grows in p. */
static void lead_exponents(const pmnf_function *f, int p, long long key[2])
{
    key[0] = key[1] = 0;
    for (int k = 0; k < f->nterms; k++) {
        double poly, log;
        pmnf_term_exponents(&f->terms[k], p, &poly, &log);
        long long kp = exponent_key(poly), kl = exponent_key(log);
        if (kp > key[0] || (kp == key[0] && kl > key[1])) {
            key[0] = kp;
            key[1] = kl;
        }
    }
}

/* Does each parameter's lead exponent pair equal the truth's block [num, den, log]? */
static int terms_recovered(const pmnf_function *f, json_t *blocks, int nparams)
{
    for (int p = 0; p < nparams; p++) {
        json_t *b = json_array_get(blocks, (size_t)p);
        double num = json_number_value(json_array_get(b, 0));
        double den = json_number_value(json_array_get(b, 1));
        double log = json_number_value(json_array_get(b, 2));
        long long got[2];
        lead_exponents(f, p, got);
        if (den == 0 || got[0] != exponent_key(num / den) || got[1] != exponent_key(log))
            return 0;
    }
    return 1;
}

static int add_error(score *s, double ape)
{
    if (s->nerrs == s->caperrs) {
        size_t cap = s->caperrs ? 2 * s->caperrs : 1024;
        double *e = realloc(s->errs, cap * sizeof *e);
        if (!e)
            return -1;
        s->errs = e;
        s->caperrs = cap;
    }
    s->errs[s->nerrs++] = isnan(ape) ? INFINITY : ape;
    return 0;
}

/* Absolute percentage error of f at each of the callpath's held-out points. */
static int add_errors(score *s, const pmnf_function *f, json_t *evals, int nparams)
{
    size_t i;
    json_t *e;
    json_array_foreach(evals, i, e) {
        json_t *pt = json_object_get(e, "point");
        double point[PMNF_MAX_PARAMS];
        for (int p = 0; p < nparams; p++)
            point[p] = json_number_value(json_array_get(pt, (size_t)p));
        double want = json_number_value(json_object_get(e, "value"));
        if (add_error(s, fabs(pmnf_eval(f, point) - want) / fabs(want) * 100))
            return -1;
    }
    return 0;
}

static int score_callpath(score *s, json_t *c, const char *fs, const char *const *names,
                          int nparams)
{
    pmnf_function f;
    char err[160];
    if (!fs) {
        s->missing++;
        return 0;
    }
    if (pmnf_parse(fs, names, nparams, &f, err, sizeof err)) {
        fprintf(stderr, "score_models: %s: cannot read \"%s\": %s\n",
                json_string_value(json_object_get(c, "callpath")), fs, err);
        s->missing++;
        return 0;
    }
    s->hits += terms_recovered(&f, json_object_get(c, "blocks"), nparams);
    return add_errors(s, &f, json_object_get(c, "eval"), nparams);
}

/* ---- output ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Python's round(v, nd) then repr(), or "null" when v is not finite. */
static void format_rounded(double v, int nd, char *buf)
{
    char tmp[400];
    if (!isfinite(v)) {
        strcpy(buf, "null");
        return;
    }
    snprintf(tmp, sizeof tmp, "%.*f", nd, v);
    pmnf_format_double(strtod(tmp, NULL), buf);
}

static void print_score(score *s)
{
    char rec[32], med[32], p90[32];
    if (s->nerrs)
        qsort(s->errs, s->nerrs, sizeof *s->errs, cmp_double);
    format_rounded(s->models ? (double)s->hits / (double)s->models : NAN, 4, rec);
    format_rounded(s->nerrs ? s->errs[s->nerrs / 2] : NAN, 3, med);
    format_rounded(s->nerrs ? s->errs[(size_t)((double)s->nerrs * 0.9)] : NAN, 3, p90);
    printf("{\"models\": %ld, \"missing\": %ld, \"term_recovery\": %s, "
           "\"extrapolation_ape_median\": %s, \"extrapolation_ape_p90\": %s}\n",
           s->models, s->missing, rec, med, p90);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: score_models TRUTH.json MODELS\n");
        return 2;
    }
    json_error_t e;
    json_t *truth = json_load_file(argv[1], 0, &e);
    json_t *callpaths = json_object_get(truth, "callpaths");
    const char *names[PMNF_MAX_PARAMS];
    int nparams = truth_names(truth, names);
    if (!truth || !json_is_array(callpaths) || nparams < 0) {
        fprintf(stderr, "score_models: %s: not a truth file%s%s\n", argv[1], truth ? "" : ": ",
                truth ? "" : e.text);
        json_decref(truth);
        return 2;
    }
    char **funcs = load_models(argv[2], callpaths);
    score s = {.models = (long)json_array_size(callpaths)};
    int rc = funcs ? 0 : 2;
    for (size_t i = 0; funcs && i < json_array_size(callpaths); i++) {
        if (!rc && score_callpath(&s, json_array_get(callpaths, i), funcs[i], names, nparams))
            rc = 1;
        free(funcs[i]);
    }
    if (!rc)
        print_score(&s);
    free(funcs);
    free(s.errs);
    json_decref(truth);
    return rc;
}
