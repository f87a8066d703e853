/*
 * simgraph_doc.c — around the step-graph readers (simgraph.h): which reader
 * a text goes to (simgraph_read: a Chrome trace or a step graph), the
 * nesting check done before any parser recurses, freeing a document, and
 * perfcast's step-graph JSON written from a graph (simgraph_to_json): what
 * a trace converted to a step graph is stored as, read back by
 * simgraph_json.c. The text grows in one buffer
 * without a document tree, so a graph of a million operations costs its
 * text and no more; reals are written as Jansson writes them with 17
 * significant digits, so the text reads back to the same doubles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/simgraph.h"

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

static int is_trace(const char *buf, size_t len)
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
    return trace;
}

int simgraph_read(const char *buf, size_t len, simgraph_doc *out, sim_error *e)
{
    return is_trace(buf, len) ? simgraph_read_trace(buf, len, out, e)
                              : simgraph_read_json(buf, len, out, e);
}

int simgraph_read_pieces(const char *buf, size_t len, simgraph_doc *out, sim_error *e,
                         void (*done)(void *arg, size_t upto), void *arg)
{
    return is_trace(buf, len) ? simgraph_read_trace(buf, len, out, e)
                              : simgraph_read_json_pieces(buf, len, out, e, done, arg);
}

typedef struct sg_text {
    char *b;
    size_t n, cap;
    int bad;
} sg_text;

static void put(sg_text *t, const char *s, size_t n)
{
    if (t->bad)
        return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->n + n + 1 > cap)
            cap *= 2;
        char *b = realloc(t->b, cap);
        if (!b) {
            t->bad = 1;
            return;
        }
        t->b = b;
        t->cap = cap;
    }
    memcpy(t->b + t->n, s, n);
    t->n += n;
    t->b[t->n] = 0;
}

static void puts_(sg_text *t, const char *s) { put(t, s, strlen(s)); }

static void put_string(sg_text *t, const char *s)
{
    put(t, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(t, run, (size_t)(s - run));
        char esc[8];
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof esc, "\\%c", c);
        else
            snprintf(esc, sizeof esc, "\\u%04x", c);
        puts_(t, esc);
        run = s + 1;
    }
    put(t, run, (size_t)(s - run));
    put(t, "\"", 1);
}

/* A real as Jansson writes it with 17 digits: always with '.' or 'e'. */
static void put_real(sg_text *t, double v)
{
    char num[40];
    int n = snprintf(num, sizeof num, "%.17g", v);
    if (!strpbrk(num, ".eEn"))
        snprintf(num + n, sizeof num - (size_t)n, ".0");
    puts_(t, num);
}

char *simgraph_to_json(const simgraph_doc *d)
{
    const sim_graph *g = &d->graph;
    sg_text t = {0};
    char num[64];
    puts_(&t, "{\"batch_size\":");
    put_real(&t, g->batch_size);
    snprintf(num, sizeof num, ",\"servers\":%d", g->servers);
    puts_(&t, num);
    if (d->has_overhead) {
        puts_(&t, ",\"overhead\":{\"alpha\":");
        put_real(&t, d->alpha);
        puts_(&t, ",\"beta\":");
        put_real(&t, d->beta);
        puts_(&t, "}");
    }
    puts_(&t, ",\"steps\":[");
    for (int s = 0; s < g->nsteps; s++) {
        const sim_step *st = &g->steps[s];
        puts_(&t, s ? ",{\"ops\":[" : "{\"ops\":[");
        for (int i = 0; i < st->nops; i++) {
            const sim_op *op = &st->ops[i];
            puts_(&t, i ? ",{\"id\":" : "{\"id\":");
            put_string(&t, op->id);
            if (op->name && strcmp(op->name, op->id)) {
                puts_(&t, ",\"name\":");
                put_string(&t, op->name);
            }
            puts_(&t, ",\"resource\":\"");
            puts_(&t, sim_res_name(op->res));
            puts_(&t, "\"");
            if (op->duration >= 0) {
                puts_(&t, ",\"duration\":");
                put_real(&t, op->duration);
            }
            if (sim_res_is_link(op->res)) {
                puts_(&t, ",\"bytes\":");
                put_real(&t, op->bytes);
            }
            if (op->server >= 0) {
                snprintf(num, sizeof num, ",\"server\":%d", op->server);
                puts_(&t, num);
            }
            if (op->ndeps) {
                puts_(&t, ",\"deps\":[");
                for (int k = 0; k < op->ndeps; k++) {
                    if (k)
                        puts_(&t, ",");
                    put_string(&t, st->ops[op->deps[k]].id);
                }
                puts_(&t, "]");
            }
            puts_(&t, "}");
        }
        puts_(&t, "]}");
    }
    puts_(&t, "]}");
    if (t.bad) {
        free(t.b);
        return NULL;
    }
    return t.b;
}
