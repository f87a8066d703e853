/*
 * regressions.c — the comparison of two model sets, callpath by callpath,
 * at the measured points and at a target (analysis/regressions.h).
 */
#include "analysis/regressions.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/expr.h"

typedef struct reg_ctx {
    const reg_input *in;
    double points[REG_MAX_POINTS][PMNF_MAX_PARAMS];
    int npoints;
    double at[PMNF_MAX_PARAMS];
    int regressions, improvements, diverging;
    int epoch_regression; /* the application epoch counted as a regression */
} reg_ctx;

static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int find(const reg_side *s, const char *level, const char *name)
{
    for (int i = 0; i < s->nrows; i++)
        if (!strcmp(s->rows[i].level, level) && !strcmp(s->rows[i].name, name))
            return i;
    return -1;
}

static compare_value predict_entry(const reg_side *s, int i, const double *pt)
{
    return s->predict(s->models, i, pt);
}

static compare_value predict_epoch_of(const reg_side *s, const double *pt)
{
    return predict_entry(s, find(s, "application", "epoch"), pt);
}

static json_t *point_json(const reg_ctx *x, const double *pt)
{
    json_t *o = json_object();
    for (int q = 0; q < x->in->np; q++)
        json_object_set_new(o, x->in->names[q], json_real(pt[q]));
    return o;
}

static json_t *value_json(compare_value v)
{
    if (!isfinite(v.value))
        return json_null();
    return json_pack("{s:o, s:[o, o]}", "value", number(v.value), "interval", number(v.lo),
                     number(v.hi));
}

static json_t *change_json(compare_value b, compare_value h, compare_result r)
{
    return json_pack("{s:o, s:o, s:o, s:b, s:b}", "base", value_json(b), "head", value_json(h),
                     "change_pct", number(r.change_pct), "separated", r.separated,
                     "significant", r.significant);
}

static json_t *growth_json(const store_model_row *r)
{
    return json_pack("{s:f, s:f}", "poly", r->growth_poly, "log", r->growth_log);
}

/* The changes at the measured points; *worse, *better whether any counts. */
static json_t *measured_changes(const reg_ctx *x, const reg_side *b, int bi, const reg_side *h,
                                int hi, int *worse, int *better)
{
    json_t *pts = json_array();
    for (int k = 0; k < x->npoints; k++) {
        compare_value bv = predict_entry(b, bi, x->points[k]);
        compare_value hv = predict_entry(h, hi, x->points[k]);
        compare_result r = compare_values(bv, hv, x->in->threshold);
        json_t *c = change_json(bv, hv, r);
        json_object_set_new(c, "point", point_json(x, x->points[k]));
        json_array_append_new(pts, c);
        *worse |= r.direction > 0;
        *better |= r.direction < 0;
    }
    return pts;
}

/* One callpath or application part present in both sets. */
static json_t *compare_entry(reg_ctx *x, const reg_side *b, int bi, const reg_side *h, int hi)
{
    const store_model_row *br = &b->rows[bi], *hr = &h->rows[hi];
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o}", "level", br->level, "name", br->name,
                          "category", br->category ? json_string(br->category) : json_null(),
                          "base_function", br->function ? json_string(br->function) : json_null(),
                          "head_function", hr->function ? json_string(hr->function) : json_null());
    int both = b->ok[bi] && h->ok[hi];
    int worse = 0, better = 0, target_dir = 0;
    if (both) {
        compare_value bv = predict_entry(b, bi, x->at), hv = predict_entry(h, hi, x->at);
        compare_result r = compare_values(bv, hv, x->in->threshold);
        json_object_set_new(o, "at", change_json(bv, hv, r));
        target_dir = r.direction;
        json_object_set_new(o, "measured", measured_changes(x, b, bi, h, hi, &worse, &better));
        int g = compare_growth(br->growth_poly, br->growth_log, hr->growth_poly, hr->growth_log);
        json_object_set_new(o, "complexity",
                            json_pack("{s:o, s:o, s:s}", "base", growth_json(br), "head",
                                      growth_json(hr), "change",
                                      g > 0 ? "grows faster" : g < 0 ? "grows slower" : "same"));
    }
    /* the measured points decide; a change at the target alone is two
     * extrapolations parting, which noise produces too: reported, not counted */
    int diverges = !worse && !better && target_dir != 0;
    const char *status = !both      ? "unmodeled"
                         : worse    ? "regression"
                         : better   ? "improvement"
                         : diverges ? "diverges"
                                    : "unchanged";
    json_object_set_new(o, "status", json_string(status));
    x->regressions += worse;
    x->improvements += !worse && better;
    x->diverging += diverges;
    if (worse && !strcmp(br->level, "application") && !strcmp(br->name, "epoch"))
        x->epoch_regression = 1;
    return o;
}

int regressions_threshold_parse(const char *text, double *out)
{
    if (!text)
        return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0 || v > 1000)
        return -1;
    if (*end == '%')
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

/* "ranks:512" or "ranks=512", parameters separated by commas, every one
 * once. 0, or -1 with why. */
static int parse_at(reg_ctx *x, const char *text, char *why, size_t cap)
{
    int have[PMNF_MAX_PARAMS] = {0};
    const char *s = text;
    const char *const *names = x->in->names;
    while (*s) {
        const char *sep = s + strcspn(s, ":=");
        const char *end = strchrnul(s, ',');
        if (!*sep || sep > end) {
            snprintf(why, cap, "expected NAME:VALUE[,NAME:VALUE], got \"%.60s\"", text);
            return -1;
        }
        int q = -1;
        for (int i = 0; i < x->in->np; i++)
            if (strlen(names[i]) == (size_t)(sep - s) && !strncmp(names[i], s, sep - s))
                q = i;
        if (q < 0) {
            snprintf(why, cap, "\"%.*s\" is not a parameter of this experiment", (int)(sep - s),
                     s);
            return -1;
        }
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)(end - sep - 1), sep + 1);
        if (an_parse_positive(num, &x->at[q])) {
            snprintf(why, cap, "%s: expected a number > 0, got \"%.40s\"", names[q], num);
            return -1;
        }
        have[q] = 1;
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < x->in->np; i++)
        if (!have[i]) {
            snprintf(why, cap, "no value for parameter %s", names[i]);
            return -1;
        }
    return 0;
}

/* a before b, coordinates compared in parameter order */
static int point_less(const double *a, const double *b, int np)
{
    for (int q = 0; q < np; q++)
        if (a[q] != b[q])
            return a[q] < b[q];
    return 0;
}

/* The measured points of both sets (distinct, ascending), and the default
 * target. */
static void collect_points(reg_ctx *x, const reg_side *b, const reg_side *h)
{
    const reg_side *sides[] = {b, h};
    int np = x->in->np;
    double maxv[PMNF_MAX_PARAMS] = {0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sides[s]->nmeas; i++) {
            const store_measurement_row *m = &sides[s]->meas[i];
            if (m->nparams != np)
                continue;
            int seen = 0;
            for (int k = 0; k < x->npoints && !seen; k++)
                seen = !memcmp(x->points[k], m->point, sizeof(double) * (size_t)np);
            if (!seen && x->npoints < REG_MAX_POINTS)
                memcpy(x->points[x->npoints++], m->point, sizeof(double) * (size_t)np);
            for (int q = 0; q < np; q++)
                maxv[q] = m->point[q] > maxv[q] ? m->point[q] : maxv[q];
        }
    for (int q = 0; q < np; q++)
        x->at[q] = maxv[q] * REG_EXTRAPOLATION_FACTOR;
    /* insertion sort: a few dozen points at most */
    for (int i = 1; i < x->npoints; i++)
        for (int k = i; k > 0 && point_less(x->points[k], x->points[k - 1], np); k--) {
            double t[PMNF_MAX_PARAMS];
            memcpy(t, x->points[k], sizeof t);
            memcpy(x->points[k], x->points[k - 1], sizeof t);
            memcpy(x->points[k - 1], t, sizeof t);
        }
}

/* Core-hours per epoch at the target from the epoch prediction. */
static json_t *cost_json(reg_ctx *x, const reg_side *b, const reg_side *h)
{
    const json_t *t = json_object_get(x->in->spec, "training");
    const char *g = json_string_value(json_object_get(t, "data_parallel"));
    const char *mp = json_string_value(json_object_get(t, "model_parallel"));
    const json_t *cost = json_object_get(x->in->spec, "cost");
    double rho = json_is_object(cost) ? json_number_value(json_object_get(cost, "cores_per_rank"))
                                      : 1;
    const char *const *names = x->in->names;
    expr eg, em;
    char why[160];
    double gv = 0, mv = 0;
    if (expr_compile(g ? g : names[0], names, x->in->np, &eg, why, sizeof why) ||
        expr_compile(mp ? mp : "1", names, x->in->np, &em, why, sizeof why) ||
        expr_eval(&eg, x->at, &gv) || expr_eval(&em, x->at, &mv) || !(rho > 0))
        return json_null();
    double f = gv * mv * rho / 3600.0;
    compare_value bv = predict_epoch_of(b, x->at), hv = predict_epoch_of(h, x->at);
    bv = (compare_value){bv.value * f, bv.lo * f, bv.hi * f};
    hv = (compare_value){hv.value * f, hv.lo * f, hv.hi * f};
    compare_result r = compare_values(bv, hv, x->in->threshold);
    /* the cost follows the epoch: counted when the epoch's change is */
    x->regressions += r.direction > 0 && x->epoch_regression;
    json_t *o = change_json(bv, hv, r);
    json_object_set_new(o, "ranks", number(gv * mv));
    json_object_set_new(o, "unit", json_string("core-h per epoch"));
    return o;
}

/* Entries for every level/name of b and h. */
static void compare_all(reg_ctx *x, const reg_side *b, const reg_side *h, reg_result *out)
{
    for (int i = 0; i < b->nrows; i++) {
        const store_model_row *r = &b->rows[i];
        int j = find(h, r->level, r->name);
        int app = !strcmp(r->level, "application");
        if (j < 0 || (!app && b->ok[i] && !h->ok[j])) {
            if (!app && b->ok[i])
                json_array_append_new(out->vanished, json_string(r->name));
            continue;
        }
        if (!app && !b->ok[i]) {
            if (h->ok[j])
                json_array_append_new(out->appeared, json_string(r->name));
            continue;
        }
        json_array_append_new(app ? out->application : out->callpaths,
                              compare_entry(x, b, i, h, j));
    }
    for (int j = 0; j < h->nrows; j++)
        if (!strcmp(h->rows[j].level, "callpath") && h->ok[j] &&
            find(b, "callpath", h->rows[j].name) < 0)
            json_array_append_new(out->appeared, json_string(h->rows[j].name));
}

/* Regressions first, then improvements, by the change at the target. */
static int entry_order(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    static const char *const rank[] = {"regression", "improvement", "diverges", "unchanged",
                                       "unmodeled"};
    int ra = 5, rb = 5;
    for (int i = 0; i < 5; i++) {
        if (!strcmp(json_string_value(json_object_get(a, "status")), rank[i]))
            ra = i;
        if (!strcmp(json_string_value(json_object_get(b, "status")), rank[i]))
            rb = i;
    }
    if (ra != rb)
        return ra - rb;
    double ca = json_number_value(json_object_get(json_object_get(a, "at"), "change_pct"));
    double cb = json_number_value(json_object_get(json_object_get(b, "at"), "change_pct"));
    return (fabs(cb) > fabs(ca)) - (fabs(cb) < fabs(ca));
}

static void sort_entries(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = malloc(sizeof *v * (n ? n : 1));
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, entry_order);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

int regressions_compare(const reg_input *in, const reg_side *base, const reg_side *head,
                        reg_result *out, an_problem *p)
{
    memset(out, 0, sizeof *out);
    reg_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return an_problem_set(p, 500, NULL, "out of memory");
    x->in = in;
    collect_points(x, base, head);
    char why[200];
    if (in->at && parse_at(x, in->at, why, sizeof why)) {
        free(x);
        return an_problem_set(p, 400, "at", "%s", why);
    }
    out->callpaths = json_array();
    out->application = json_array();
    out->appeared = json_array();
    out->vanished = json_array();
    compare_all(x, base, head, out);
    sort_entries(out->callpaths);
    out->cost = cost_json(x, base, head);
    out->measured_points = json_array();
    for (int k = 0; k < x->npoints; k++)
        json_array_append_new(out->measured_points, point_json(x, x->points[k]));
    out->at = point_json(x, x->at);
    out->regressions = x->regressions;
    out->improvements = x->improvements;
    out->diverging = x->diverging;
    free(x);
    return 0;
}

void regressions_result_free(reg_result *r)
{
    json_t *all[] = {r->at, r->measured_points, r->application, r->callpaths,
                     r->appeared, r->vanished, r->cost};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        json_decref(all[i]);
    memset(r, 0, sizeof *r);
}
