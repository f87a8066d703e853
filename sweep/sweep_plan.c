/*
 * sweep_plan.c — parsing, enumerating and rendering sweep definitions
 * (sweep_plan.h).
 */
#include "sweep/sweep_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"
#include "modeling/modeler.h"

static int fail(char *field, size_t fieldcap, char *err, size_t errcap, const char *f,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int fail(char *field, size_t fieldcap, char *err, size_t errcap, const char *f,
                const char *fmt, ...)
{
    snprintf(field, fieldcap, "%s", f);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errcap, fmt, ap);
    va_end(ap);
    return -1;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SWEEP_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int name_taken(const sweep_def *d, const char *name)
{
    for (int i = 0; i < d->nvars; i++)
        if (!strcmp(d->vars[i].name, name))
            return 1;
    for (int i = 0; i < d->nconst; i++)
        if (!strcmp(d->const_names[i], name))
            return 1;
    return !strcmp(name, "repetition");
}

void sweep_def_free(sweep_def *d)
{
    for (int i = 0; i < d->nvars; i++) {
        free(d->vars[i].values);
        for (int j = 0; d->vars[i].levels && j < d->vars[i].nvalues; j++)
            free(d->vars[i].levels[j]);
        free(d->vars[i].levels);
    }
    sweep_legal_free(&d->legal);
    free(d->command);
    memset(d, 0, sizeof *d);
}

/* One varying name: an array of numbers (parameter) or of strings (factor). */
static int parse_var(const char *section, const char *name, const json_t *v, int factor,
                     sweep_def *d, char *field, size_t fieldcap, char *err, size_t errcap)
{
    char f[160];
    snprintf(f, sizeof f, "%s.%s", section, name);
    if (!valid_name(name))
        return fail(field, fieldcap, err, errcap, f,
                    "a name is a letter or _ followed by letters, digits or _ (at most %d bytes)",
                    SWEEP_NAME_MAX - 1);
    if (name_taken(d, name))
        return fail(field, fieldcap, err, errcap, f, "\"%s\" is named twice", name);
    if (d->nvars == SWEEP_MAX_VARS)
        return fail(field, fieldcap, err, errcap, f, "more than %d varying names",
                    SWEEP_MAX_VARS);
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > SWEEP_MAX_VALUES)
        return fail(field, fieldcap, err, errcap, f, "must be an array of 1 to %d %s",
                    SWEEP_MAX_VALUES, factor ? "level names" : "numbers");
    sweep_var *x = &d->vars[d->nvars];
    snprintf(x->name, sizeof x->name, "%s", name);
    if (factor)
        x->levels = calloc(n, sizeof(char *));
    else
        x->values = malloc(sizeof(double) * n);
    if (factor ? !x->levels : !x->values)
        return fail(field, fieldcap, err, errcap, f, "out of memory");
    d->nvars++;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        char fi[200];
        snprintf(fi, sizeof fi, "%s[%zu]", f, i);
        if (factor) {
            const char *s = json_string_value(e);
            if (!s || !*s || strlen(s) > 200)
                return fail(field, fieldcap, err, errcap, fi,
                            "a level is a non-empty string of at most 200 bytes");
            for (size_t j = 0; j < i; j++)
                if (!strcmp(x->levels[j], s))
                    return fail(field, fieldcap, err, errcap, fi, "level \"%s\" is listed twice",
                                s);
            if (!(x->levels[i] = strdup(s)))
                return fail(field, fieldcap, err, errcap, fi, "out of memory");
        } else {
            if (!json_is_number(e) || !(fabs(json_number_value(e)) <= PMNF_MAX_MAGNITUDE))
                return fail(field, fieldcap, err, errcap, fi,
                            "must be a finite number within +-%g (the largest coordinate "
                            "perfcast models)", PMNF_MAX_MAGNITUDE);
            x->values[i] = json_number_value(e);
            for (size_t j = 0; j < i; j++)
                if (x->values[j] == x->values[i])
                    return fail(field, fieldcap, err, errcap, fi, "value %g is listed twice",
                                x->values[i]);
        }
        x->nvalues = (int)i + 1;
    }
    return 0;
}

/* The template read left to right, one piece at a time. */
enum { PIECE_TEXT, PIECE_BRACE, PIECE_NAME };

/* The piece at p: PIECE_TEXT, *skip bytes kept as written ("$" with the
 * braces right after it: "${...}" is the shell's); PIECE_BRACE, "{{" for a
 * literal '{' (*skip 2); PIECE_NAME, "{name}" (a name of letters, digits
 * and '_' not starting with a digit; *skip its length with the braces). */
static int template_piece(const char *p, size_t *skip)
{
    if (*p == '$') {
        size_t n = 1;
        while (p[n] == '{')
            n++;
        *skip = n;
        return PIECE_TEXT;
    }
    if (*p == '{' && p[1] == '{') {
        *skip = 2;
        return PIECE_BRACE;
    }
    if (*p == '{') {
        const char *e = p + 1;
        while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_' ||
               (e > p + 1 && *e >= '0' && *e <= '9'))
            e++;
        if (*e == '}' && e > p + 1) {
            *skip = (size_t)(e - p) + 1;
            return PIECE_NAME;
        }
    }
    *skip = 1;
    return PIECE_TEXT;
}

/* Every {name} of the template names something the point has. */
static int check_template(const sweep_def *d, char *field, size_t fieldcap, char *err,
                          size_t errcap)
{
    const char *t = d->command;
    size_t skip;
    for (const char *p = t; *p; p += skip) {
        if (template_piece(p, &skip) != PIECE_NAME)
            continue; /* kept as written, or a literal brace */
        size_t len = skip - 2;
        char name[SWEEP_NAME_MAX + 1];
        if (len >= sizeof name ||
            (snprintf(name, sizeof name, "%.*s", (int)len, p + 1), !name_taken(d, name)))
            return fail(field, fieldcap, err, errcap, "command",
                        "offset %zu: {%.*s} names no parameter, factor, constant or repetition "
                        "(the rule: {name} is replaced by the point's value of that name or by "
                        "{repetition}; write {{ for a literal brace; ${...} is left to the shell)",
                        (size_t)(p - t), (int)(len > 64 ? 64 : len), p + 1);
    }
    return 0;
}

static int parse_body(const json_t *doc, sweep_def *d, char *field, size_t fieldcap, char *err,
                      size_t errcap)
{
    if (!json_is_object(doc))
        return fail(field, fieldcap, err, errcap, "", "a sweep definition is a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v)
    {
        static const char *const known[] = {"parameters", "factors", "constants", "legal",
                                            "repetitions", "command", "epochs_per_run", NULL};
        int ok = 0;
        for (int i = 0; known[i]; i++)
            ok |= !strcmp(known[i], key);
        if (!ok)
            return fail(field, fieldcap, err, errcap, key,
                        "unknown field (known: parameters, factors, constants, legal, "
                        "repetitions, command, epochs_per_run)");
    }
    const json_t *params = json_object_get(doc, "parameters");
    if (!json_is_object(params) || json_object_size(params) == 0)
        return fail(field, fieldcap, err, errcap, "parameters",
                    "must be an object of at least one name with its values");
    json_object_foreach((json_t *)params, key, v) if (parse_var("parameters", key, v, 0, d, field,
                                                                fieldcap, err, errcap) < 0) return -1;
    d->nparams = d->nvars;
    const json_t *factors = json_object_get(doc, "factors");
    if (factors && !json_is_object(factors))
        return fail(field, fieldcap, err, errcap, "factors",
                    "must be an object of names with their levels");
    json_object_foreach((json_t *)factors, key, v) if (parse_var("factors", key, v, 1, d, field,
                                                                 fieldcap, err, errcap) < 0) return -1;
    const json_t *consts = json_object_get(doc, "constants");
    if (consts && !json_is_object(consts))
        return fail(field, fieldcap, err, errcap, "constants", "must be an object of numbers");
    json_object_foreach((json_t *)consts, key, v)
    {
        char f[160];
        snprintf(f, sizeof f, "constants.%s", key);
        if (!valid_name(key) || name_taken(d, key) || d->nconst == SWEEP_MAX_VARS)
            return fail(field, fieldcap, err, errcap, f,
                        "not a valid new name, or more than %d constants", SWEEP_MAX_VARS);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return fail(field, fieldcap, err, errcap, f, "must be a finite number");
        snprintf(d->const_names[d->nconst], SWEEP_NAME_MAX, "%s", key);
        d->const_values[d->nconst++] = json_number_value(v);
    }
    const json_t *reps = json_object_get(doc, "repetitions");
    d->repetitions = 1;
    if (reps) {
        if (!json_is_integer(reps) || json_integer_value(reps) < 1 ||
            json_integer_value(reps) > SWEEP_MAX_REPETITIONS)
            return fail(field, fieldcap, err, errcap, "repetitions",
                        "must be an integer from 1 to %d", SWEEP_MAX_REPETITIONS);
        d->repetitions = (int)json_integer_value(reps);
    }
    const json_t *epr = json_object_get(doc, "epochs_per_run");
    d->epochs_per_run = 1;
    if (epr) {
        if (!json_is_number(epr) || !(json_number_value(epr) > 0) ||
            !isfinite(json_number_value(epr)))
            return fail(field, fieldcap, err, errcap, "epochs_per_run",
                        "must be a number > 0 (the share of an epoch one run takes: 0.01 for "
                        "a run of 1%% of an epoch's steps)");
        d->epochs_per_run = json_number_value(epr);
    }
    const char *cmd = json_string_value(json_object_get(doc, "command"));
    if (!cmd || !*cmd || strlen(cmd) > 4096)
        return fail(field, fieldcap, err, errcap, "command",
                    "must be a non-empty string of at most 4096 bytes, e.g. \"srun -n {ranks} "
                    "train.py\"");
    if (!(d->command = strdup(cmd)))
        return fail(field, fieldcap, err, errcap, "command", "out of memory");
    if (check_template(d, field, fieldcap, err, errcap) < 0)
        return -1;
    d->product = 1;
    for (int i = 0; i < d->nvars; i++) {
        d->product *= d->vars[i].nvalues;
        if (d->product > SWEEP_MAX_POINTS)
            return fail(field, fieldcap, err, errcap, "parameters",
                        "the product of the values has more than %d points", SWEEP_MAX_POINTS);
    }
    const json_t *legal = json_object_get(doc, "legal");
    if (legal && !json_is_null(legal)) {
        const char *text = json_string_value(legal);
        if (!text)
            return fail(field, fieldcap, err, errcap, "legal",
                        "must be a string such as \"batch_size * ranks <= 65536\"");
        const char *names[2 * SWEEP_MAX_VARS];
        int nn = 0;
        for (int i = 0; i < d->nparams; i++)
            names[nn++] = d->vars[i].name;
        for (int i = 0; i < d->nconst; i++)
            names[nn++] = d->const_names[i];
        char e[300];
        if (sweep_legal_compile(text, names, nn, &d->legal, e, sizeof e) < 0)
            return fail(field, fieldcap, err, errcap, "legal",
                        "%s (names: the numeric parameters and constants)", e);
        d->has_legal = 1;
    }
    return 0;
}

int sweep_def_parse(const json_t *doc, sweep_def *out, char *field, size_t fieldcap, char *err,
                    size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (parse_body(doc, out, field, fieldcap, err, errcap) < 0) {
        sweep_def_free(out);
        return -1;
    }
    return 0;
}

void sweep_def_first(const sweep_def *d, int *idx)
{
    for (int i = 0; i < d->nvars; i++)
        idx[i] = 0;
}

int sweep_def_next(const sweep_def *d, int *idx)
{
    for (int i = d->nvars - 1; i >= 0; i--) {
        if (++idx[i] < d->vars[i].nvalues)
            return 1;
        idx[i] = 0;
    }
    return 0;
}

int sweep_def_legal(const sweep_def *d, const int *idx)
{
    if (!d->has_legal)
        return 1;
    double values[2 * SWEEP_MAX_VARS];
    int n = 0;
    for (int i = 0; i < d->nparams; i++)
        values[n++] = d->vars[i].values[idx[i]];
    for (int i = 0; i < d->nconst; i++)
        values[n++] = d->const_values[i];
    return sweep_legal_eval(&d->legal, values);
}

int sweep_def_number(const sweep_def *d, const int *idx, const char *name, double *out)
{
    for (int i = 0; i < d->nparams; i++)
        if (!strcmp(d->vars[i].name, name)) {
            *out = d->vars[i].values[idx[i]];
            return 1;
        }
    for (int i = 0; i < d->nconst; i++)
        if (!strcmp(d->const_names[i], name)) {
            *out = d->const_values[i];
            return 1;
        }
    return 0;
}

void sweep_format_number(double v, char *buf)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, 32, "%.0f", v);
    else
        numtext_format_shortest(v, buf);
}

/* The text {name} stands for at idx, rep; NULL when none. */
static const char *placeholder(const sweep_def *d, const int *idx, int rep, const char *name,
                               size_t len, char num[32])
{
    if (len == 10 && !memcmp(name, "repetition", 10)) {
        snprintf(num, 32, "%d", rep);
        return num;
    }
    for (int i = 0; i < d->nvars; i++)
        if (strlen(d->vars[i].name) == len && !memcmp(d->vars[i].name, name, len)) {
            if (d->vars[i].levels)
                return d->vars[i].levels[idx[i]];
            sweep_format_number(d->vars[i].values[idx[i]], num);
            return num;
        }
    for (int i = 0; i < d->nconst; i++)
        if (strlen(d->const_names[i]) == len && !memcmp(d->const_names[i], name, len)) {
            sweep_format_number(d->const_values[i], num);
            return num;
        }
    return NULL;
}

long sweep_def_legal_points(const sweep_def *d)
{
    long legal = 0;
    int idx[SWEEP_MAX_VARS];
    sweep_def_first(d, idx);
    do
        legal += sweep_def_legal(d, idx);
    while (sweep_def_next(d, idx));
    return legal;
}

int sweep_def_runs_check(const sweep_def *d, long *legal, char *msg, size_t cap)
{
    *legal = sweep_def_legal_points(d);
    if (*legal * d->repetitions <= SWEEP_MAX_RUNS)
        return 0;
    snprintf(msg, cap, "%ld legal points × %d repetitions is more than %d runs", *legal,
             d->repetitions, SWEEP_MAX_RUNS);
    return -1;
}

void sweep_runs_start(sweep_runs *w)
{
    memset(w, 0, sizeof *w);
}

int sweep_runs_next(const sweep_def *d, sweep_runs *w)
{
    if (w->started && w->rep < d->repetitions) {
        w->rep++;
        return 1;
    }
    if (!w->started) {
        w->started = 1;
        sweep_def_first(d, w->idx);
        if (sweep_def_legal(d, w->idx)) {
            w->rep = 1;
            return 1;
        }
    }
    while (sweep_def_next(d, w->idx))
        if (sweep_def_legal(d, w->idx)) {
            w->rep = 1;
            return 1;
        }
    return 0;
}

int sweep_def_command(const sweep_def *d, const int *idx, int rep, char *buf, size_t cap)
{
    size_t n = 0, skip;
    char num[32];
    for (const char *p = d->command; *p; p += skip) {
        int kind = template_piece(p, &skip);
        const char *val = kind == PIECE_BRACE ? "{"
                          : kind == PIECE_NAME ? placeholder(d, idx, rep, p + 1, skip - 2, num)
                                               : NULL;
        size_t len = val ? strlen(val) : skip;
        if (n + len + 1 > cap)
            return -1;
        memcpy(buf + n, val ? val : p, len);
        n += len;
    }
    buf[n] = '\0';
    return (int)n;
}
