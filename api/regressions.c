/*
 * regressions.c — GET /v1/experiments/{id}/regressions?base=REF&head=REF:
 * did the head commit make scaling worse than the base commit?
 *
 * A REF is a commit (the newest model set of the profiles uploaded with
 * ?commit=) or a model set's number within the experiment. Callpath by
 * callpath (per-epoch models of ?metric=, default time) and for the
 * application parts (epoch composed of comp + comm + mem as predict does,
 * and each part), both models are evaluated with their 95% intervals at
 * every measured point of either set and at the target ?at=ranks:512
 * (default: 4x the largest measured value of each parameter). A change
 * is significant (modeling/compare.h) when the two intervals separate and
 * it exceeds ?threshold= (percent, default 5%). The measured points
 * decide: a significant increase at one of them is a regression, a
 * decrease an improvement. A significant change at the target alone is
 * two extrapolations parting where the data do not differ, which noise
 * produces too (the modeler picking a tiny high-order term for a constant
 * callpath under 0.5% noise, 16x beyond the measurements): it is reported
 * as "diverges" and not counted. Complexity-class changes (leading
 * exponents) are reported; the cost at the target counts when the epoch's
 * change does. Callpaths modeled in one set only are listed as appeared or
 * vanished. The cost at the target (core-hours T·ranks·ρ/3600) is compared
 * like a value. "regression": true when anything counts as a regression.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/commits.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/set_models.h"
#include "modeling/compare.h"
#include "modeling/expr.h"
#include "store/commits.h"
#include "store/experiments.h"
#include "store/models.h"

#define MAX_POINTS 256

typedef struct side {
    store_set_info info;
    set_models sm;
    store_measurement_row *meas;
    int nmeas;
} side;

typedef struct reg_ctx {
    const store_experiment *e;
    const char *names[PMNF_MAX_PARAMS];
    int np;
    double threshold;
    double points[MAX_POINTS][PMNF_MAX_PARAMS];
    int npoints;
    double at[PMNF_MAX_PARAMS];
    int regressions, improvements, diverging;
    int epoch_regression; /* the application epoch counted as a regression */
} reg_ctx;

static void side_free(side *s)
{
    set_models_free(&s->sm);
    store_measurement_rows_free(s->meas, s->nmeas);
}

static int side_load(PGconn *c, const reg_ctx *x, const char *metric, side *s, store_error *err)
{
    int rc = set_models_load(c, s->info.id, metric, NULL, NULL, x->names, x->np, &s->sm, err);
    store_model_filter fm = {.metric = metric, .level = "application", .name = "epoch",
                             .limit = 100000};
    if (!rc)
        rc = store_measurements_read(c, s->info.id, &fm, &s->meas, &s->nmeas, err);
    return rc;
}

static compare_value predict_entry(const side *s, int i, const double *pt)
{
    prediction p = set_models_predict(&s->sm, i, pt);
    return (compare_value){p.value, p.lo, p.hi};
}

static compare_value predict_epoch_of(const side *s, const double *pt)
{
    return predict_entry(s, set_models_find(&s->sm, "application", "epoch"), pt);
}

static json_t *point_json(const reg_ctx *x, const double *pt)
{
    json_t *o = json_object();
    for (int q = 0; q < x->np; q++)
        json_object_set_new(o, x->names[q], json_real(pt[q]));
    return o;
}

static json_t *value_json(compare_value v)
{
    if (!isfinite(v.value))
        return json_null();
    return json_pack("{s:o, s:[o, o]}", "value", predict_number(v.value), "interval",
                     predict_number(v.lo), predict_number(v.hi));
}

static json_t *change_json(compare_value b, compare_value h, compare_result r)
{
    return json_pack("{s:o, s:o, s:o, s:b, s:b}", "base", value_json(b), "head", value_json(h),
                     "change_pct", predict_number(r.change_pct), "separated", r.separated,
                     "significant", r.significant);
}

static json_t *growth_json(const store_model_row *r)
{
    return json_pack("{s:f, s:f}", "poly", r->growth_poly, "log", r->growth_log);
}

/* One callpath or application part present in both sets. */
static json_t *compare_entry(reg_ctx *x, const side *b, int bi, const side *h, int hi)
{
    const store_model_row *br = &b->sm.rows[bi], *hr = &h->sm.rows[hi];
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o}", "level", br->level, "name", br->name,
                          "category", br->category ? json_string(br->category) : json_null(),
                          "base_function", br->function ? json_string(br->function) : json_null(),
                          "head_function", hr->function ? json_string(hr->function) : json_null());
    int both = b->sm.ok[bi] && h->sm.ok[hi];
    int worse = 0, better = 0, target_dir = 0;
    if (both) {
        compare_value bv = predict_entry(b, bi, x->at), hv = predict_entry(h, hi, x->at);
        compare_result r = compare_values(bv, hv, x->threshold);
        json_object_set_new(o, "at", change_json(bv, hv, r));
        target_dir = r.direction;
        json_t *pts = json_array();
        for (int k = 0; k < x->npoints; k++) {
            bv = predict_entry(b, bi, x->points[k]);
            hv = predict_entry(h, hi, x->points[k]);
            r = compare_values(bv, hv, x->threshold);
            json_t *c = change_json(bv, hv, r);
            json_object_set_new(c, "point", point_json(x, x->points[k]));
            json_array_append_new(pts, c);
            worse |= r.direction > 0;
            better |= r.direction < 0;
        }
        json_object_set_new(o, "measured", pts);
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

/* "5", "5%", "0.5%": percent, 0 to 1000. */
static int parse_threshold(const char *text, double *out)
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
    while (*s) {
        const char *sep = s + strcspn(s, ":=");
        const char *end = strchrnul(s, ',');
        if (!*sep || sep > end) {
            snprintf(why, cap, "expected NAME:VALUE[,NAME:VALUE], got \"%.60s\"", text);
            return -1;
        }
        int q = -1;
        for (int i = 0; i < x->np; i++)
            if (strlen(x->names[i]) == (size_t)(sep - s) && !strncmp(x->names[i], s, sep - s))
                q = i;
        if (q < 0) {
            snprintf(why, cap, "\"%.*s\" is not a parameter of this experiment", (int)(sep - s),
                     s);
            return -1;
        }
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)(end - sep - 1), sep + 1);
        if (predict_positive(num, &x->at[q])) {
            snprintf(why, cap, "%s: expected a number > 0, got \"%.40s\"", x->names[q], num);
            return -1;
        }
        have[q] = 1;
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < x->np; i++)
        if (!have[i]) {
            snprintf(why, cap, "no value for parameter %s", x->names[i]);
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

/* The measured points of both sets (distinct), and the default target. */
static void collect_points(reg_ctx *x, const side *b, const side *h)
{
    const side *sides[] = {b, h};
    double maxv[PMNF_MAX_PARAMS] = {0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sides[s]->nmeas; i++) {
            const store_measurement_row *m = &sides[s]->meas[i];
            if (m->nparams != x->np)
                continue;
            int seen = 0;
            for (int k = 0; k < x->npoints && !seen; k++)
                seen = !memcmp(x->points[k], m->point, sizeof(double) * (size_t)x->np);
            if (!seen && x->npoints < MAX_POINTS)
                memcpy(x->points[x->npoints++], m->point, sizeof(double) * (size_t)x->np);
            for (int q = 0; q < x->np; q++)
                maxv[q] = m->point[q] > maxv[q] ? m->point[q] : maxv[q];
        }
    for (int q = 0; q < x->np; q++)
        x->at[q] = maxv[q] * PREDICT_EXTRAPOLATION_FACTOR;
    /* insertion sort: a few dozen points at most */
    for (int i = 1; i < x->npoints; i++)
        for (int k = i; k > 0 && point_less(x->points[k], x->points[k - 1], x->np); k--) {
            double t[PMNF_MAX_PARAMS];
            memcpy(t, x->points[k], sizeof t);
            memcpy(x->points[k], x->points[k - 1], sizeof t);
            memcpy(x->points[k - 1], t, sizeof t);
        }
}

static json_t *set_json(const char *ref, const store_set_info *s)
{
    return json_pack("{s:s, s:i, s:o, s:o, s:o, s:s}", "ref", ref, "model_set", s->number,
                     "commit", s->has_commit ? json_string(s->commit) : json_null(), "branch",
                     s->has_branch ? json_string(s->branch) : json_null(), "ci_run",
                     s->has_ci_run ? json_string(s->ci_run) : json_null(), "created_at",
                     s->created_at);
}

/* Core-hours per epoch at the target from the epoch prediction. */
static json_t *cost_json(reg_ctx *x, const side *b, const side *h)
{
    const json_t *t = json_object_get(x->e->spec, "training");
    const char *g = json_string_value(json_object_get(t, "data_parallel"));
    const char *mp = json_string_value(json_object_get(t, "model_parallel"));
    const json_t *cost = json_object_get(x->e->spec, "cost");
    double rho = json_is_object(cost) ? json_number_value(json_object_get(cost, "cores_per_rank"))
                                      : 1;
    expr eg, em;
    char why[160];
    double gv = 0, mv = 0;
    if (expr_compile(g ? g : x->names[0], x->names, x->np, &eg, why, sizeof why) ||
        expr_compile(mp ? mp : "1", x->names, x->np, &em, why, sizeof why) ||
        expr_eval(&eg, x->at, &gv) || expr_eval(&em, x->at, &mv) || !(rho > 0))
        return json_null();
    double f = gv * mv * rho / 3600.0;
    compare_value bv = predict_epoch_of(b, x->at), hv = predict_epoch_of(h, x->at);
    bv = (compare_value){bv.value * f, bv.lo * f, bv.hi * f};
    hv = (compare_value){hv.value * f, hv.lo * f, hv.hi * f};
    compare_result r = compare_values(bv, hv, x->threshold);
    /* the cost follows the epoch: counted when the epoch's change is */
    x->regressions += r.direction > 0 && x->epoch_regression;
    json_t *o = change_json(bv, hv, r);
    json_object_set_new(o, "ranks", predict_number(gv * mv));
    json_object_set_new(o, "unit", json_string("core-h per epoch"));
    return o;
}

static int query_ok(const api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"base", "head", "threshold", "at", "metric"};
    for (size_t k = 0; k < req->nquery; k++) {
        int ok = 0;
        for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
            ok |= req->query[k].name && !strcmp(req->query[k].name, allowed[i]);
        if (!ok) {
            api_problem(resp, 400, req->query[k].name ? req->query[k].name : "",
                        "unknown query parameter; regressions takes base, head, threshold, at, "
                        "metric");
            return -1;
        }
    }
    return 0;
}

static int resolve(PGconn *c, int64_t id, const char *field, const char *ref, side *s,
                   api_response *resp)
{
    if (!ref || !*ref) {
        api_problem(resp, 400, field, "required: a commit or a model set number");
        return -1;
    }
    if (!api_tag_valid(ref, 1)) {
        api_problem(resp, 400, field,
                    "expected a commit (A-Z a-z 0-9 . _ / -, at most 100) or a model set number");
        return -1;
    }
    store_error err;
    int rc = store_set_find(c, id, ref, &s->info, &err);
    if (rc == STORE_NOT_FOUND) {
        api_problem(resp, 404, field, "%s", err.msg);
        return -1;
    }
    if (rc) {
        api_store_problem(resp, &err);
        return -1;
    }
    return 0;
}

/* Entries for every level/name of b and h. */
static void compare_all(reg_ctx *x, const side *b, const side *h, json_t *callpaths,
                        json_t *application, json_t *appeared, json_t *vanished)
{
    for (int i = 0; i < b->sm.nrows; i++) {
        const store_model_row *r = &b->sm.rows[i];
        int j = set_models_find(&h->sm, r->level, r->name);
        int app = !strcmp(r->level, "application");
        if (j < 0 || (!app && b->sm.ok[i] && !h->sm.ok[j])) {
            if (!app && b->sm.ok[i])
                json_array_append_new(vanished, json_string(r->name));
            continue;
        }
        if (!app && !b->sm.ok[i]) {
            if (h->sm.ok[j])
                json_array_append_new(appeared, json_string(r->name));
            continue;
        }
        json_array_append_new(app ? application : callpaths, compare_entry(x, b, i, h, j));
    }
    for (int j = 0; j < h->sm.nrows; j++)
        if (!strcmp(h->sm.rows[j].level, "callpath") && h->sm.ok[j] &&
            set_models_find(&b->sm, "callpath", h->sm.rows[j].name) < 0)
            json_array_append_new(appeared, json_string(h->sm.rows[j].name));
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

void api_regressions(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) || query_ok(req, resp))
        return;
    reg_ctx *x = calloc(1, sizeof *x);
    side b = {0}, h = {0};
    store_experiment e = {0};
    store_error err;
    if (!x) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    x->threshold = 5;
    if (parse_threshold(api_query(req, "threshold"), &x->threshold)) {
        api_problem(resp, 400, "threshold",
                    "expected a percentage from 0 to 1000 such as 5 or 5%%, got \"%.40s\"",
                    api_query(req, "threshold"));
        free(x);
        return;
    }
    const char *metric = api_query(req, "metric");
    metric = metric ? metric : "time";
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_experiment_get(c, id, &e, &err)) {
        api_store_problem(resp, &err);
        goto done;
    }
    x->e = &e;
    x->np = e.nparams < PMNF_MAX_PARAMS ? e.nparams : PMNF_MAX_PARAMS;
    for (int i = 0; i < x->np; i++)
        x->names[i] = e.parameters[i];
    if (resolve(c, id, "base", api_query(req, "base"), &b, resp) ||
        resolve(c, id, "head", api_query(req, "head"), &h, resp))
        goto done;
    if (b.info.id == h.info.id) {
        api_problem(resp, 400, "head", "names the same model set (%d) as base: nothing to compare",
                    b.info.number);
        goto done;
    }
    if (side_load(c, x, metric, &b, &err) || side_load(c, x, metric, &h, &err)) {
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    c = NULL;
    if (b.sm.nrows == 0 || h.sm.nrows == 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in the %s model set",
                    metric, b.sm.nrows == 0 ? "base" : "head");
        goto done;
    }
    collect_points(x, &b, &h);
    const char *at = api_query(req, "at");
    char why[200];
    if (at && parse_at(x, at, why, sizeof why)) {
        api_problem(resp, 400, "at", "%s", why);
        goto done;
    }
    json_t *callpaths = json_array(), *application = json_array(), *appeared = json_array(),
           *vanished = json_array();
    compare_all(x, &b, &h, callpaths, application, appeared, vanished);
    sort_entries(callpaths);
    json_t *cost = cost_json(x, &b, &h);
    json_t *pts = json_array();
    for (int k = 0; k < x->npoints; k++)
        json_array_append_new(pts, point_json(x, x->points[k]));
    json_t *doc = json_pack(
        "{s:I, s:s, s:f, s:o, s:o, s:o, s:o, s:b, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:s}",
        "experiment", (json_int_t)id, "metric", metric, "threshold_pct", x->threshold, "base",
        set_json(api_query(req, "base"), &b.info), "head", set_json(api_query(req, "head"), &h.info),
        "at", point_json(x, x->at), "measured_points", pts, "regression", x->regressions > 0,
        "regressions", x->regressions, "improvements", x->improvements, "diverging",
        x->diverging, "application", application, "callpaths", callpaths, "appeared", appeared, "vanished", vanished, "cost",
        cost, "rule",
        "a change counts when the 95% intervals of base and head separate at a measured point "
        "and it exceeds the threshold there; an increase is a regression; a change at the "
        "target alone (status diverges) is reported, not counted");
    api_send_json(resp, 200, doc);
done:
    store_release(ctx->db, c);
    side_free(&b);
    side_free(&h);
    store_experiment_free(&e);
    free(x);
}
