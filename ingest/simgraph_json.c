/*
 * simgraph_json.c — reader and writer of perfcast's step-graph JSON, the
 * input of the asynchronous-SGD simulator (simgraph.h). Dependencies are
 * given by id within the step and resolved by sorting the ids, so crafted
 * ids cannot make the reader quadratic; the graph is then checked
 * (sim_graph_check: cycles, values) before it is returned.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/simgraph.h"
#include "simulate/sim_prep.h"

#define SG_MAX_DEPTH 16
#define SG_MAX_ID 512

int simgraph_check_depth(const char *buf, size_t len, int max_depth)
{
    int depth = 0, in_string = 0, escaped = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return -1;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 0;
}

void simgraph_doc_free(simgraph_doc *d)
{
    if (d) {
        sim_graph_free(&d->graph);
        memset(d, 0, sizeof *d);
    }
}

typedef struct id_ref {
    const char *id;
    int index;
} id_ref;

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const id_ref *)a)->id, ((const id_ref *)b)->id);
}

/* A number member: absent -> dflt; present but not a number -> -1. */
static int get_number(json_t *o, const char *key, double dflt, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

static const char *const op_keys[] = {"id", "name", "resource", "duration", "bytes", "server",
                                      "deps", NULL};

static int known_key(const char *k, const char *const *keys)
{
    for (int i = 0; keys[i]; i++)
        if (!strcmp(k, keys[i]))
            return 1;
    return 0;
}

static int read_op(json_t *jo, int s, int i, sim_op *op, sim_error *e)
{
    char where[32];
    snprintf(where, sizeof where, "#%d", i);
    if (!json_is_object(jo)) {
        sim_error_set(e, where, s, "ops", "an operation must be an object");
        return -1;
    }
    json_t *jid = json_object_get(jo, "id");
    if (!json_is_string(jid) || !json_string_length(jid) || json_string_length(jid) > SG_MAX_ID ||
        strlen(json_string_value(jid)) != json_string_length(jid)) {
        sim_error_set(e, where, s, "id", "each operation needs an id: a non-empty string of at "
                      "most %d bytes", SG_MAX_ID);
        return -1;
    }
    const char *id = json_string_value(jid);
    const char *k;
    json_t *v;
    json_object_foreach(jo, k, v) if (!known_key(k, op_keys))
    {
        sim_error_set(e, id, s, k, "unknown member \"%.40s\"", k);
        return -1;
    }
    op->id = strdup(id);
    json_t *jn = json_object_get(jo, "name");
    if (jn && !json_is_string(jn)) {
        sim_error_set(e, id, s, "name", "name must be a string");
        return -1;
    }
    op->name = strdup(jn ? json_string_value(jn) : id);
    json_t *jr = json_object_get(jo, "resource");
    op->res = json_is_string(jr) ? sim_res_from_name(json_string_value(jr)) : -1;
    if (op->res < 0) {
        sim_error_set(e, id, s, "resource", "resource must be downlink, worker, uplink or ps");
        return -1;
    }
    int link = sim_res_is_link(op->res);
    if (get_number(jo, "duration", link ? -1 : NAN, &op->duration) ||
        (json_object_get(jo, "duration") && !json_is_null(json_object_get(jo, "duration")) &&
         !(op->duration >= 0))) {
        sim_error_set(e, id, s, "duration", "duration must be a finite number of seconds >= 0");
        return -1;
    }
    if (get_number(jo, "bytes", -1, &op->bytes) ||
        (json_object_get(jo, "bytes") && !(op->bytes > 0))) {
        sim_error_set(e, id, s, "bytes", "bytes must be a positive number");
        return -1;
    }
    if (!link && json_object_get(jo, "bytes"))
        op->bytes = -1; /* a computation's size does not matter */
    json_t *js = json_object_get(jo, "server");
    op->server = -1;
    if (js && !json_is_null(js)) {
        if (!json_is_integer(js) || json_integer_value(js) < 0 ||
            json_integer_value(js) >= SIM_MAX_SERVERS) {
            sim_error_set(e, id, s, "server", "server must be an integer 0..%d",
                          SIM_MAX_SERVERS - 1);
            return -1;
        }
        op->server = (int)json_integer_value(js);
    }
    return 0;
}

/* deps by id -> indices, through the sorted ids of the step */
static int resolve_deps(json_t *jops, sim_step *st, int s, sim_error *e)
{
    id_ref *r = malloc((size_t)st->nops * sizeof *r);
    if (!r) {
        sim_error_set(e, NULL, s, "", "out of memory");
        return -1;
    }
    for (int i = 0; i < st->nops; i++)
        r[i] = (id_ref){st->ops[i].id, i};
    qsort(r, (size_t)st->nops, sizeof *r, cmp_ref);
    for (int i = 0; i < st->nops; i++) {
        sim_op *op = &st->ops[i];
        json_t *jd = json_object_get(json_array_get(jops, (size_t)i), "deps");
        if (!jd || json_is_null(jd))
            continue;
        if (!json_is_array(jd) || json_array_size(jd) > (size_t)st->nops) {
            sim_error_set(e, op->id, s, "deps", "deps must be an array of operation ids");
            goto fail;
        }
        op->deps = malloc((json_array_size(jd) ? json_array_size(jd) : 1) * sizeof(int));
        if (!op->deps) {
            sim_error_set(e, op->id, s, "deps", "out of memory");
            goto fail;
        }
        for (size_t d = 0; d < json_array_size(jd); d++) {
            json_t *x = json_array_get(jd, d);
            if (!json_is_string(x)) {
                sim_error_set(e, op->id, s, "deps", "deps[%zu] must be an operation id", d);
                goto fail;
            }
            id_ref key = {json_string_value(x), 0};
            id_ref *hit = bsearch(&key, r, (size_t)st->nops, sizeof *r, cmp_ref);
            if (!hit) {
                sim_error_set(e, op->id, s, "deps", "deps[%zu] names \"%.60s\", which is not an "
                              "operation of step %d", d, key.id, s);
                goto fail;
            }
            op->deps[op->ndeps++] = hit->index;
        }
    }
    free(r);
    return 0;
fail:
    free(r);
    return -1;
}

static int read_overhead(json_t *jo, simgraph_doc *out, sim_error *e)
{
    if (!jo || json_is_null(jo))
        return 0;
    if (!json_is_object(jo)) {
        sim_error_set(e, NULL, -1, "overhead", "overhead must be an object");
        return -1;
    }
    json_t *pairs = json_object_get(jo, "pairs");
    if (pairs) {
        size_t n = json_is_array(pairs) ? json_array_size(pairs) : 0;
        if (n < 2 || n > SIMGRAPH_MAX_PAIRS) {
            sim_error_set(e, NULL, -1, "overhead.pairs", "pairs must be 2..%d [bytes, seconds] "
                          "arrays", SIMGRAPH_MAX_PAIRS);
            return -1;
        }
        double *x = malloc(2 * n * sizeof *x), *y = x + n;
        if (!x) {
            sim_error_set(e, NULL, -1, "overhead.pairs", "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(pairs, i);
            if (!json_is_array(p) || json_array_size(p) != 2 ||
                !json_is_number(json_array_get(p, 0)) || !json_is_number(json_array_get(p, 1))) {
                sim_error_set(e, NULL, -1, "overhead.pairs", "pairs[%zu] must be [bytes, seconds]",
                              i);
                free(x);
                return -1;
            }
            x[i] = json_number_value(json_array_get(p, 0));
            y[i] = json_number_value(json_array_get(p, 1));
        }
        int rc = sim_fit_overhead(x, y, (int)n, &out->alpha, &out->beta, e);
        free(x);
        if (rc) {
            snprintf(e->field, sizeof e->field, "overhead.pairs");
            return -1;
        }
        /* a fitted line may cross zero at small sizes; the model needs >= 0 */
        if (out->alpha < 0)
            out->alpha = 0;
        if (out->beta < 0)
            out->beta = 0;
        out->npairs = (int)n;
        out->has_overhead = 1;
        return 0;
    }
    if (get_number(jo, "alpha", 0, &out->alpha) || !(out->alpha >= 0) || !isfinite(out->alpha)) {
        sim_error_set(e, NULL, -1, "overhead.alpha", "alpha must be a number >= 0 (s per byte)");
        return -1;
    }
    if (get_number(jo, "beta", 0, &out->beta) || !(out->beta >= 0) || !isfinite(out->beta)) {
        sim_error_set(e, NULL, -1, "overhead.beta", "beta must be a number >= 0 (s)");
        return -1;
    }
    out->has_overhead = 1;
    return 0;
}

static int read_root(json_t *root, simgraph_doc *out, sim_error *e)
{
    sim_graph *g = &out->graph;
    if (!json_is_object(root)) {
        sim_error_set(e, NULL, -1, "", "a step graph is a JSON object with \"steps\"");
        return -1;
    }
    double servers, batch;
    if (get_number(root, "servers", 1, &servers) || servers != floor(servers) || servers < 1 ||
        servers > SIM_MAX_SERVERS) {
        sim_error_set(e, NULL, -1, "servers", "servers must be an integer 1..%d", SIM_MAX_SERVERS);
        return -1;
    }
    if (get_number(root, "batch_size", 0, &batch) || !(batch >= 0) || !isfinite(batch)) {
        sim_error_set(e, NULL, -1, "batch_size", "batch_size must be a number >= 0");
        return -1;
    }
    g->servers = (int)servers;
    g->batch_size = batch;
    if (read_overhead(json_object_get(root, "overhead"), out, e))
        return -1;
    json_t *steps = json_object_get(root, "steps");
    size_t ns = json_is_array(steps) ? json_array_size(steps) : 0;
    if (ns < 1 || ns > SIMGRAPH_MAX_STEPS) {
        sim_error_set(e, NULL, -1, "steps", "steps must be an array of 1..%d steps",
                      SIMGRAPH_MAX_STEPS);
        return -1;
    }
    if (!(g->steps = calloc(ns, sizeof *g->steps))) {
        sim_error_set(e, NULL, -1, "steps", "out of memory");
        return -1;
    }
    g->nsteps = (int)ns;
    size_t total = 0;
    for (size_t s = 0; s < ns; s++) {
        json_t *js = json_array_get(steps, s), *jops = json_object_get(js, "ops");
        size_t n = json_is_array(jops) ? json_array_size(jops) : 0;
        total += n;
        if (n < 1 || total > SIMGRAPH_MAX_OPS) {
            sim_error_set(e, NULL, (int)s, "ops", "each step needs \"ops\": an array of 1 or more "
                          "operations (at most %d over all steps)", SIMGRAPH_MAX_OPS);
            return -1;
        }
        sim_step *st = &g->steps[s];
        if (!(st->ops = calloc(n, sizeof *st->ops))) {
            sim_error_set(e, NULL, (int)s, "ops", "out of memory");
            return -1;
        }
        st->nops = (int)n;
        for (size_t i = 0; i < n; i++)
            if (read_op(json_array_get(jops, i), (int)s, (int)i, &st->ops[i], e))
                return -1;
        if (resolve_deps(jops, st, (int)s, e))
            return -1;
    }
    return sim_graph_check(g, e);
}

int simgraph_read_json(const char *buf, size_t len, simgraph_doc *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    out->source = "stepgraph";
    if (simgraph_check_depth(buf, len, SG_MAX_DEPTH)) {
        sim_error_set(e, NULL, -1, "", "JSON nested deeper than %d levels", SG_MAX_DEPTH);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        sim_error_set(e, NULL, -1, "", "invalid JSON at line %d, column %d (byte %d): %s", je.line,
                      je.column, je.position, je.text);
        return -1;
    }
    int rc = read_root(root, out, e);
    json_decref(root);
    if (rc)
        simgraph_doc_free(out);
    return rc;
}

int simgraph_read(const char *buf, size_t len, simgraph_doc *out, sim_error *e)
{
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
        i++;
    int trace = i < len && buf[i] == '[';
    if (!trace && i < len && buf[i] == '{') {
        /* "traceEvents" among the first bytes: a Chrome trace */
        size_t n = len - i < 4096 ? len - i : 4096;
        trace = memmem(buf + i, n, "\"traceEvents\"", 13) != NULL;
    }
    return trace ? simgraph_read_trace(buf, len, out, e) : simgraph_read_json(buf, len, out, e);
}

static json_t *op_json(const sim_op *op, const sim_step *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(op->id));
    if (op->name && strcmp(op->name, op->id))
        json_object_set_new(o, "name", json_string(op->name));
    json_object_set_new(o, "resource", json_string(sim_res_name(op->res)));
    if (op->duration >= 0)
        json_object_set_new(o, "duration", json_real(op->duration));
    if (sim_res_is_link(op->res))
        json_object_set_new(o, "bytes", json_real(op->bytes));
    if (op->server >= 0)
        json_object_set_new(o, "server", json_integer(op->server));
    if (op->ndeps) {
        json_t *d = json_array();
        for (int k = 0; k < op->ndeps; k++)
            json_array_append_new(d, json_string(st->ops[op->deps[k]].id));
        json_object_set_new(o, "deps", d);
    }
    return o;
}

char *simgraph_to_json(const simgraph_doc *d)
{
    const sim_graph *g = &d->graph;
    json_t *root = json_object(), *steps = json_array();
    json_object_set_new(root, "batch_size", json_real(g->batch_size));
    json_object_set_new(root, "servers", json_integer(g->servers));
    if (d->has_overhead)
        json_object_set_new(root, "overhead",
                            json_pack("{s:f,s:f}", "alpha", d->alpha, "beta", d->beta));
    for (int s = 0; s < g->nsteps; s++) {
        json_t *ops = json_array();
        for (int i = 0; i < g->steps[s].nops; i++)
            json_array_append_new(ops, op_json(&g->steps[s].ops[i], &g->steps[s]));
        json_array_append_new(steps, json_pack("{s:o}", "ops", ops));
    }
    json_object_set_new(root, "steps", steps);
    char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}
