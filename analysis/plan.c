/*
 * plan.c — a sweep definition against the uploads: names, run statuses,
 * commands and the price of what is missing (plan.h).
 */
#include "analysis/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/training.h"

/* a varied factor: declared by the experiment, with declared levels */
static int match_factor(const sweep_var *v, const json_t *factors, an_problem *p)
{
    char field[160];
    const json_t *decl = json_object_get(factors, v->name);
    snprintf(field, sizeof field, "factors.%s", v->name);
    if (!decl)
        return an_problem_set(p, 400, field, "the experiment declares no factor \"%s\"", v->name);
    for (int l = 0; l < v->nvalues; l++) {
        int ok = 0;
        for (size_t k = 0; k < json_array_size(decl) && !ok; k++)
            ok = !strcmp(json_string_value(json_array_get(decl, k)) ?: "", v->levels[l]);
        if (!ok) {
            char *list = json_dumps(decl, JSON_COMPACT);
            snprintf(field, sizeof field, "factors.%s[%d]", v->name, l);
            an_problem_set(p, 400, field, "\"%.64s\" is not a declared level of %s: %s", v->levels[l],
                   v->name, list ? list : "");
            free(list);
            return -1;
        }
    }
    return 0;
}

int plan_match(const sweep_def *d, const char *const *names, int nparams, const json_t *spec,
               plan_map *map, an_problem *p)
{
    const json_t *factors = json_object_get(spec, "factors");
    for (int v = 0; v < d->nvars; v++) {
        if (d->vars[v].levels) {
            if (match_factor(&d->vars[v], factors, p) < 0)
                return -1;
            continue;
        }
        int found = 0;
        for (int i = 0; i < nparams; i++)
            found |= !strcmp(names[i], d->vars[v].name);
        if (!found) {
            char list[300] = "", f[160];
            size_t used = 0;
            for (int i = 0; i < nparams && used < sizeof list; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                         names[i]);
            snprintf(f, sizeof f, "parameters.%s", d->vars[v].name);
            return an_problem_set(p, 400, f, "not a parameter of the experiment (its parameters: %s)", list);
        }
    }
    for (int i = 0; i < nparams; i++) {
        map->param[i] = 0x7fffffff;
        for (int v = 0; v < d->nparams; v++)
            if (!strcmp(d->vars[v].name, names[i]))
                map->param[i] = v;
        for (int k = 0; k < d->nconst && map->param[i] == 0x7fffffff; k++)
            if (!strcmp(d->const_names[k], names[i]))
                map->param[i] = -1 - k;
        if (map->param[i] == 0x7fffffff)
            return an_problem_set(p, 400, "parameters",
                          "parameter \"%s\" of the experiment is neither varied nor a constant",
                          names[i]);
    }
    const char *fnames[LEVELS_MAX_FACTORS];
    map->nfactors = (int)levels_names(spec, fnames);
    for (int k = 0; k < map->nfactors; k++) {
        map->factor[k] = -1;
        for (int v = d->nparams; v < d->nvars; v++)
            if (!strcmp(d->vars[v].name, fnames[k]))
                map->factor[k] = v;
        if (map->factor[k] < 0)
            return an_problem_set(p, 400, "factors",
                          "factor \"%s\" of the experiment is not varied: name the levels to "
                          "plan (\"factors\":{\"%s\":[...]})",
                          fnames[k], fnames[k]);
    }
    return 0;
}

/* The experiment's coordinate of the legal point idx into point. */
static void plan_point(const sweep_def *d, const plan_map *map, int nparams, const int *idx,
                       double *point)
{
    for (int i = 0; i < nparams; i++)
        point[i] = map->param[i] >= 0 ? d->vars[map->param[i]].values[idx[map->param[i]]]
                                      : d->const_values[-1 - map->param[i]];
}

/* The first legal point of d (matched by map) where the set-up s is not
 * valid (its degrees alone: degrees_only) refused: 0, or -1 with p naming
 * the varied parameter at fault (the first whose value is <= 0), else
 * "parameters"; whose says where s comes from. */
static int check_points(const sweep_def *d, const char *const *names, int nparams,
                        const plan_map *map, const training_setup *s, int degrees_only,
                        const char *whose, an_problem *p)
{
    char field[64], msg[400];
    double point[PMNF_MAX_PARAMS], n_t, n_v;
    sweep_runs w;
    sweep_runs_start(&w);
    while (sweep_runs_next(d, &w)) {
        if (w.rep != 1)
            continue;
        plan_point(d, map, nparams, w.idx, point);
        if ((degrees_only ? training_degrees_at(s, point, names, nparams, field, sizeof field,
                                                msg, sizeof msg)
                          : training_steps_at(s, point, names, nparams, &n_t, &n_v, field,
                                              sizeof field, msg, sizeof msg)) == 0)
            continue;
        char f[160] = "parameters";
        for (int i = 0; i < nparams; i++)
            if (map->param[i] >= 0 && !(point[i] > 0)) {
                snprintf(f, sizeof f, "parameters.%s", names[i]);
                break;
            }
        return an_problem_set(p, 400, f,
                              "a legal point of this plan could never be uploaded: %s: %s (%s); "
                              "leave the value out or exclude it with \"legal\"",
                              field, msg, whose);
    }
    return 0;
}

int plan_check_runnable(const sweep_def *d, const char *const *names, int nparams,
                        const plan_map *map, const json_t *spec, an_problem *p)
{
    const json_t *t = json_object_get(spec, "training");
    training_setup s;
    char field[64], msg[400];
    if (!json_is_object(t) ||
        training_compile(t, names, nparams, &s, field, sizeof field, msg, sizeof msg) < 0)
        return 0; /* nothing to check against; the refit says what is wrong */
    return check_points(d, names, nparams, map, &s, 0, "the experiment's training set-up", p);
}

int plan_check_ranks(const sweep_def *d, an_problem *p)
{
    static const char *const names[1] = {"ranks"};
    plan_map map = {.nfactors = 0};
    map.param[0] = 0x7fffffff;
    for (int v = 0; v < d->nparams; v++)
        if (!strcmp(d->vars[v].name, names[0]))
            map.param[0] = v;
    for (int k = 0; k < d->nconst; k++)
        if (!strcmp(d->const_names[k], names[0]))
            map.param[0] = -1 - k;
    if (map.param[0] == 0x7fffffff)
        return 0; /* no rank count named: nothing known to check */
    training_setup s;
    char why[200];
    memset(&s, 0, sizeof s);
    if (expr_compile(names[0], names, 1, &s.e[TRAINING_G], why, sizeof why) < 0 ||
        expr_compile("1", names, 1, &s.e[TRAINING_M], why, sizeof why) < 0)
        return an_problem_set(p, 500, NULL, "%s", why);
    return check_points(d, names, 1, &map, &s, 1,
                        "\"ranks\" is the rank count, data_parallel × model_parallel, of every "
                        "experiment with a parameter of that name",
                        p);
}

static int cmp_run(const double *a, const double *b, int np)
{
    for (int i = 0; i < np; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* The stored run of point, repetition and levels (a JSON array text), or
 * NULL (runs ordered by point, repetition, levels). */
static const store_run *find_run(const store_run *runs, int n, int np, const double *point,
                                 int rep, const char *levels)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = cmp_run(runs[mid].point, point, np);
        if (!c)
            c = runs[mid].repetition < rep ? -1 : runs[mid].repetition > rep;
        if (!c)
            c = strcmp(runs[mid].levels, levels);
        if (!c)
            return &runs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

typedef struct plan_cost {
    double value, lo, hi;
    long runs, unpriced;
} plan_cost;

/* A missing run at point (levels: its combination) priced. */
static void cost_add(plan_cost *c, const plan_pricing *p, const double *point,
                     const char *levels, const char *const *values, int nf, double epochs)
{
    c->runs++;
    double t[3], ranks, cores;
    if (!p->priced || !p->has_models ||
        p->epoch(p->ctx, point, levels, values, nf, t, &ranks, &cores) < 0) {
        c->unpriced++;
        return;
    }
    double k = epochs * ranks * cores / 3600;
    if (!isfinite(t[0]) || ranks <= 0) {
        c->unpriced++;
        return;
    }
    c->value += t[0] * k;
    c->lo += t[1] * k;
    c->hi += t[2] * k;
}

static json_t *number_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *cost_json(const plan_cost *c, const sweep_def *d, const plan_pricing *p, int nf)
{
    if (!p->priced)
        return json_pack("{s:n, s:I, s:s}", "core_hours", "runs", (json_int_t)c->runs, "reason",
                         p->reason ? p->reason : "");
    json_t *o = json_pack("{s:{s:f, s:[o, o]}, s:I, s:f, s:i, s:s}", "core_hours", "value",
                          c->value, "interval", number_json(c->lo), number_json(c->hi), "runs",
                          (json_int_t)c->runs, "epochs_per_run", d->epochs_per_run, "model_set",
                          p->set_number, "basis",
                          "per run: predicted epoch time × ranks × cores_per_rank / 3600 × "
                          "epochs_per_run; the interval sums the runs' bounds");
    if (o && c->unpriced)
        json_object_set_new(o, "unpriced_runs", json_integer(c->unpriced));
    if (o && nf && c->unpriced)
        json_object_set_new(o, "reason", json_string("runs of level combinations without a "
                                                     "model of the epoch time are unpriced"));
    return o;
}

static json_t *point_json(const char *const *names, int nparams, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; o && i < nparams; i++)
        json_object_set_new(o, names[i], json_real(point[i]));
    return o;
}

/* The JSON array text of the levels of point idx, in factor-name order
 * (map), as the store writes them ("[\"cpu\",\"fp16\"]"); values[k] the
 * k-th level. Levels need no escaping (analysis/levels.h). */
static void levels_text(const sweep_def *d, const int *idx, const plan_map *map, char *buf,
                        size_t cap, const char **values)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < map->nfactors && n < cap; k++) {
        values[k] = d->vars[map->factor[k]].levels[idx[map->factor[k]]];
        n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", k ? "," : "", values[k]);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* a listed run: {"point", "repetition", "status", "levels"?, "command"?} */
static json_t *item_json(const sweep_def *d, const char *const *names, int nparams,
                         const sweep_runs *w, const double *point, int st, const char *cmd)
{
    static const char *const status_names[3] = {"measured", "missing", "failed"};
    json_t *o = json_pack("{s:o, s:i, s:s}", "point", point_json(names, nparams, point),
                          "repetition", w->rep, "status", status_names[st]);
    if (o && d->nvars > d->nparams) {
        json_t *lv = json_object();
        for (int v = d->nparams; v < d->nvars; v++)
            json_object_set_new(lv, d->vars[v].name, json_string(d->vars[v].levels[w->idx[v]]));
        json_object_set_new(o, "levels", lv);
    }
    if (o && cmd)
        json_object_set_new(o, "command", json_string(cmd));
    return o;
}

json_t *plan_answer(const sweep_def *d, int64_t experiment, const char *const *names,
                    int nparams, const plan_map *map, const store_run *runs, int nruns,
                    long offset, long limit, const plan_pricing *pricing)
{
    plan_cost cost = {0};
    char ltext[LEVELS_MAX_FACTORS * (LEVELS_MAX_TEXT + 3) + 3] = "[]";
    const char *lvalues[LEVELS_MAX_FACTORS];
    double point[PMNF_MAX_PARAMS];
    long legal = 0, counts[3] = {0, 0, 0}, run_no = 0;
    int nf = map->nfactors;
    json_t *items = json_array(), *commands = json_array();
    size_t cap = 8192;
    char *cmd = malloc(cap);
    sweep_runs w;
    sweep_runs_start(&w);
    while (sweep_runs_next(d, &w)) {
        if (w.rep == 1) { /* a new legal point */
            legal++;
            plan_point(d, map, nparams, w.idx, point);
            if (nf)
                levels_text(d, w.idx, map, ltext, sizeof ltext, lvalues);
        }
        const store_run *r = find_run(runs, nruns, nparams, point, w.rep, ltext);
        int st = r && r->ok ? 0 : r && r->failed ? 2 : 1;
        counts[st]++;
        /* every run is counted and priced; only the page's are listed */
        int listed = run_no >= offset && run_no < offset + limit;
        run_no++;
        if (st != 0)
            cost_add(&cost, pricing, point, ltext, lvalues, nf, d->epochs_per_run);
        if (!listed)
            continue;
        const char *c = NULL;
        if (st != 0 && cmd && sweep_def_command(d, w.idx, w.rep, cmd, cap) >= 0) {
            c = cmd;
            json_array_append_new(commands, json_string(cmd));
        }
        json_array_append_new(items, item_json(d, names, nparams, &w, point, st, c));
    }
    free(cmd);
    json_t *doc = json_pack(
        "{s:I, s:{s:I, s:I, s:I}, s:i, s:I, s:I, s:I, s:I, s:b, s:o, s:o, s:o}", "experiment",
        (json_int_t)experiment, "points", "product", (json_int_t)d->product, "legal",
        (json_int_t)legal, "illegal", (json_int_t)(d->product - legal), "repetitions",
        d->repetitions, "runs", (json_int_t)(legal * d->repetitions), "measured",
        (json_int_t)counts[0], "missing", (json_int_t)counts[1], "failed", (json_int_t)counts[2],
        "complete", counts[1] + counts[2] == 0, "items", items, "commands", commands,
        "missing_cost", cost_json(&cost, d, pricing, nf));
    if (!doc)
        return NULL;
    json_object_set_new(doc, "offset", json_integer(offset));
    json_object_set_new(doc, "next_offset",
                        offset + limit < run_no ? json_integer(offset + limit) : json_null());
    return doc;
}
