/*
 * test_simgraph.c — the readers of the simulator's inputs (ingest/simgraph.h)
 * on the files in tests/data/simulate/ (a hand-written step graph of a
 * four-layer model, the same model as a TensorFlow timeline and a Kineto
 * trace with c10d send/recv, all synthetic) and on bad input: every fault
 * names the operation and the field, and nothing is returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "ingest/simgraph.h"
#include "tests/check.h"

static int find(const sim_step *st, const char *id)
{
    for (int i = 0; i < st->nops; i++)
        if (!strcmp(st->ops[i].id, id))
            return i;
    return -1;
}

static int has_dep(const sim_step *st, int i, int j)
{
    for (int d = 0; i >= 0 && d < st->ops[i].ndeps; d++)
        if (st->ops[i].deps[d] == j)
            return 1;
    return 0;
}

static void test_stepgraph_file(void)
{
    size_t len;
    char *buf = harness_read_file("tests/data/simulate/stepgraph.json", &len);
    check(buf != NULL, "fixture");
    simgraph_doc d;
    sim_error e;
    int rc = simgraph_read(buf, len, &d, &e);
    check(rc == 0, "read: %s %s %s", e.op, e.field, e.msg);
    if (rc) {
        free(buf);
        return;
    }
    check(!strcmp(d.source, "stepgraph") && d.graph.nsteps == 2 && d.graph.steps[0].nops == 20 &&
              d.graph.batch_size == 32,
          "shape");
    const sim_step *st = &d.graph.steps[0];
    int f1 = find(st, "fwd_conv1"), r1 = find(st, "recv_conv1"), f0 = find(st, "fwd_conv0");
    check(has_dep(st, f1, r1) && has_dep(st, f1, f0) && st->ops[f1].ndeps == 2, "deps by id");
    check(st->ops[r1].res == SIM_DOWNLINK && st->ops[r1].bytes == 36992, "transfer");
    /* α, β satisfy the normal equations of the four pairs: residuals sum to 0
     * and are orthogonal to the sizes */
    double x[4] = {1000, 100000, 1000000, 4000000}, y[4] = {5.2e-5, 2.5e-4, 2.05e-3, 8.0e-3};
    double s0 = 0, s1 = 0;
    for (int i = 0; i < 4; i++) {
        double r = y[i] - (d.alpha * x[i] + d.beta);
        s0 += r;
        s1 += r * x[i];
    }
    check(d.has_overhead && d.npairs == 4 && fabs(s0) < 1e-15 && fabs(s1) < 1e-9,
          "least squares: alpha %g beta %g (%g %g)", d.alpha, d.beta, s0, s1);
    /* the writer's text reads back to the same graph */
    char *text = simgraph_to_json(&d);
    simgraph_doc d2;
    check(text && simgraph_read_json(text, strlen(text), &d2, &e) == 0, "round trip");
    if (text && d2.graph.nsteps == 2) {
        const sim_step *s2 = &d2.graph.steps[1];
        const sim_step *s1 = &d.graph.steps[1];
        int same = s2->nops == s1->nops;
        for (int i = 0; same && i < s1->nops; i++)
            same = !strcmp(s1->ops[i].id, s2->ops[i].id) && s1->ops[i].res == s2->ops[i].res &&
                   s1->ops[i].duration == s2->ops[i].duration &&
                   s1->ops[i].ndeps == s2->ops[i].ndeps;
        check(same, "same operations after the round trip");
        simgraph_doc_free(&d2);
    }
    free(text);
    simgraph_doc_free(&d);
    free(buf);
}

static void test_tf_timeline(void)
{
    size_t len;
    char *buf = harness_read_file("tests/data/simulate/tf_timeline.json", &len);
    simgraph_doc d;
    sim_error e;
    int rc = simgraph_read(buf, len, &d, &e);
    check(rc == 0, "tf: %s %s %s", e.op, e.field, e.msg);
    if (rc) {
        free(buf);
        return;
    }
    const sim_step *st = &d.graph.steps[0];
    check(!strcmp(d.source, "tensorflow") && d.graph.nsteps == 1 && st->nops == 20,
          "16 worker ops + 4 server updates (the server's _Recv skipped): %d", st->nops);
    int n[4] = {0};
    for (int i = 0; i < st->nops; i++)
        n[st->ops[i].res]++;
    check(n[SIM_DOWNLINK] == 4 && n[SIM_UPLINK] == 4 && n[SIM_WORKER] == 8 && n[SIM_PS] == 4,
          "resources %d %d %d %d", n[0], n[1], n[2], n[3]);
    int recv = find(st, "fc0/weights/_recv#2"), fwd = -1, grad = -1, send = -1, apply = -1;
    for (int i = 0; i < st->nops; i++) {
        if (!strncmp(st->ops[i].id, "fc0/fwd#", 8))
            fwd = i;
        if (!strncmp(st->ops[i].id, "fc0/grad#", 9))
            grad = i;
        if (!strncmp(st->ops[i].id, "fc0/grad/_send#", 15))
            send = i;
        if (!strncmp(st->ops[i].id, "fc0/apply#", 10))
            apply = i;
    }
    check(recv >= 0 && st->ops[recv].bytes == 3211520 && st->ops[recv].server == 0,
          "a downlink with its size and server");
    check(send >= 0 && st->ops[send].bytes == 3211520, "size from tensor_description");
    check(has_dep(st, fwd, recv), "the forward op waits for its parameters");
    check(has_dep(st, send, grad), "the transfer waits for the op producing its tensor");
    check(has_dep(st, apply, send), "the update waits for the uplink before it");
    simgraph_doc_free(&d);
    /* a transfer without a size: refused, naming it */
    const char *nosize = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"_Recv\",\"pid\":1,\"tid\":0,"
                         "\"ts\":0,\"dur\":5,\"args\":{\"name\":\"w/_recv\",\"op\":\"_Recv\"}}]}";
    rc = simgraph_read(nosize, strlen(nosize), &d, &e);
    check(rc == -1 && !strcmp(e.op, "w/_recv#0") && !strcmp(e.field, "bytes"),
          "no size: %s %s %s", e.op, e.field, e.msg);
    free(buf);
}

static void test_kineto(void)
{
    size_t len;
    char *buf = harness_read_file("tests/data/simulate/kineto_ps.json", &len);
    simgraph_doc d;
    sim_error e;
    int rc = simgraph_read(buf, len, &d, &e);
    check(rc == 0, "kineto: %s %s %s", e.op, e.field, e.msg);
    if (!rc) {
        check(!strcmp(d.source, "kineto") && d.graph.nsteps == 2, "two ProfilerSteps");
        const sim_step *st = &d.graph.steps[1];
        int n[4] = {0};
        for (int i = 0; i < st->nops; i++)
            n[st->ops[i].res]++;
        check(st->nops == 16 && n[SIM_DOWNLINK] == 4 && n[SIM_UPLINK] == 4 && n[SIM_WORKER] == 8,
              "4 recv, 4 send, 8 kernels (runtime calls dropped): %d", st->nops);
        check(st->ops[0].res == SIM_DOWNLINK && st->ops[0].bytes == 3456, "bytes from Input Dims");
        /* the first kernel waits for the last recv that ended before it */
        int k = 4;
        check(st->ops[k].res == SIM_WORKER && has_dep(st, k, 3), "kernel after the downlinks");
        simgraph_doc_free(&d);
    }
    free(buf);
}

typedef struct bad_case {
    const char *what, *json, *op, *field;
} bad_case;

static void test_bad(void)
{
    static const bad_case cases[] = {
        {"cycle", "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1,"
                  "\"deps\":[\"b\"]},{\"id\":\"b\",\"resource\":\"worker\",\"duration\":1,"
                  "\"deps\":[\"a\"]}]}]}", "a", "deps"},
        {"dangling", "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1,"
                     "\"deps\":[\"ghost\"]}]}]}", "a", "deps"},
        {"negative", "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"ps\",\"duration\":-2}]}]}",
         "n", "duration"},
        {"NaN as text", "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\","
                        "\"duration\":\"NaN\"}]}]}", "n", "duration"},
        {"no duration", "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\"}]}]}", "n",
         "duration"},
        {"transfer without size", "{\"steps\":[{\"ops\":[{\"id\":\"t\",\"resource\":\"uplink\","
                                  "\"duration\":0.1}]}]}", "t", "bytes"},
        {"negative bytes", "{\"steps\":[{\"ops\":[{\"id\":\"t\",\"resource\":\"downlink\","
                           "\"bytes\":-5}]}]}", "t", "bytes"},
        {"unknown resource", "{\"steps\":[{\"ops\":[{\"id\":\"g\",\"resource\":\"gpu\","
                             "\"duration\":1}]}]}", "g", "resource"},
        {"server out of range", "{\"servers\":2,\"steps\":[{\"ops\":[{\"id\":\"t\",\"resource\":"
                                "\"downlink\",\"bytes\":5,\"server\":2}]}]}", "t", "server"},
        {"duplicate id", "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1},"
                         "{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1}]}]}", "a", "id"},
        {"unknown member", "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\","
                           "\"duraton\":1}]}]}", "a", "duraton"},
        {"no steps", "{\"steps\":[]}", "", "steps"},
        {"servers 0", "{\"servers\":0,\"steps\":[]}", "", "servers"},
        {"syntax", "{\"steps\":[", "", ""},
        {"one pair", "{\"overhead\":{\"pairs\":[[1,2]]},\"steps\":[{\"ops\":[{\"id\":\"a\","
                     "\"resource\":\"worker\",\"duration\":1}]}]}", "", "overhead.pairs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        simgraph_doc d;
        sim_error e;
        memset(&e, 0, sizeof e);
        int rc = simgraph_read(cases[i].json, strlen(cases[i].json), &d, &e);
        check(rc == -1 && !strcmp(e.op, cases[i].op) && !strcmp(e.field, cases[i].field),
              "%s: rc %d op '%s' field '%s': %s", cases[i].what, rc, e.op, e.field, e.msg);
        check(d.graph.steps == NULL && d.graph.nsteps == 0, "%s: nothing returned",
              cases[i].what);
    }
    /* deep nesting is refused before the parser */
    char deep[4096];
    memset(deep, '[', sizeof deep);
    simgraph_doc d;
    sim_error e;
    check(simgraph_read_json(deep, sizeof deep, &d, &e) == -1, "deep nesting");
}

/* Where each fault is, as the API's "field" and the CLI name it
 * (sim_error_field): an operation's field under its step and id, a step's
 * field under its step (of several, the one at fault), "body" with the byte
 * offset for a document that is not JSON, a member of the document by its
 * name. */
static void test_fault_field(void)
{
    static const struct {
        const char *what, *json, *field;
        long offset;
    } cases[] = {
        {"an operation's", "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\","
                           "\"duration\":1,\"deps\":[\"a\"]}]}]}", "steps[0].ops[a].deps", -1},
        {"a step of zero-duration computations only",
         "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1}]},"
         "{\"ops\":[{\"id\":\"z\",\"resource\":\"worker\",\"duration\":0}]}]}",
         "steps[1].ops[z].duration", -1},
        {"an empty step", "{\"steps\":[{\"ops\":[]}]}", "steps[0].ops", -1},
        {"the second step without ops",
         "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1}]},{}]}",
         "steps[1].ops", -1},
        {"no steps", "{\"steps\":[]}", "steps", -1},
        {"servers", "{\"servers\":0,\"steps\":[]}", "servers", -1},
        /* {"steps":[ is 10 bytes: the input ends there */
        {"cut short", "{\"steps\":[", "body", 10},
        /* 1e400 starts at byte 59 and is read when it ends, at 64 */
        {"number out of range", "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\","
                                "\"duration\":1e400}]}]}", "body", 64},
        /* the parser stops on the N at byte 59, having read it */
        {"NaN is not JSON", "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\","
                            "\"duration\":NaN}]}]}", "body", 60},
        {"text after the document", "{\"steps\":[]} x", "body", 14},
        /* the } at byte 22 is read, then refused */
        {"a trace that is not JSON", "{\"traceEvents\":[{\"ph\":}]}", "body", 23},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        simgraph_doc d;
        sim_error e;
        memset(&e, 0, sizeof e);
        int rc = simgraph_read(cases[i].json, strlen(cases[i].json), &d, &e);
        char field[256];
        sim_error_field(&e, field, sizeof field);
        check(rc == -1 && !strcmp(field, cases[i].field) && e.offset == cases[i].offset,
              "%s: rc %d field '%s' offset %ld, want '%s' %ld (%s)", cases[i].what, rc, field,
              e.offset, cases[i].field, cases[i].offset, e.msg);
        if (!rc)
            simgraph_doc_free(&d);
    }
}

/* The reader fed one byte at a time (as a stored graph comes back in
 * pieces) builds the graph it builds from the whole text; ids repeated over
 * the steps are interned (one copy), forward references resolve, members
 * come in any order; a fault in a piece is the fault of the whole. */
static void test_pieces(void)
{
    const char *text =
        "{\"steps\":[{\"ops\":[{\"deps\":[\"a\"],\"id\":\"b\",\"duration\":2,"
        "\"resource\":\"worker\"},{\"resource\":\"downlink\",\"id\":\"a\",\"bytes\":8,"
        "\"name\":\"RecvTensor\"}]},{\"ops\":[{\"id\":\"a\",\"resource\":\"downlink\","
        "\"bytes\":16,\"name\":\"RecvTensor\"},{\"id\":\"b\",\"resource\":\"worker\","
        "\"duration\":3,\"deps\":[\"a\"]}]}],\"servers\":1,\"batch_size\":4}";
    simgraph_doc d;
    sim_error e = {0};
    simgraph_reader *r = simgraph_reader_new(&d, &e);
    int rc = r ? 0 : -1;
    for (size_t i = 0; !rc && text[i]; i++)
        rc = simgraph_reader_feed(r, text + i, 1);
    if (!rc)
        rc = simgraph_reader_finish(r);
    simgraph_reader_free(r);
    check(rc == 0, "byte by byte: %s %s", e.field, e.msg);
    if (rc)
        return;
    const sim_graph *g = &d.graph;
    check(g->nsteps == 2 && g->steps[0].nops == 2 && g->batch_size == 4, "shape");
    /* step 0: b (index 0) waits for a (index 1), declared after it */
    check(g->steps[0].ops[0].ndeps == 1 && g->steps[0].ops[0].deps[0] == 1, "forward reference");
    check(g->steps[0].ops[1].bytes == 8 && g->steps[1].ops[0].bytes == 16 &&
              g->steps[1].ops[1].duration == 3,
          "values");
    /* interned: the same id and name over the steps is one copy */
    check(g->steps[0].ops[1].id == g->steps[1].ops[0].id &&
              g->steps[0].ops[1].name == g->steps[1].ops[0].name &&
              !strcmp(g->steps[1].ops[0].name, "RecvTensor"),
          "ids and names interned");
    check(g->pool && sim_graph_pool_bytes(g) > 0, "the graph lives in its pool");
    simgraph_doc_free(&d);

    /* a fault split over pieces: the unknown member's name straddles them */
    const char *bad = "{\"steps\":[{\"ops\":[{\"id\":\"x\",\"resource\":\"worker\","
                      "\"duratoin\":1}]}]}";
    memset(&e, 0, sizeof e);
    r = simgraph_reader_new(&d, &e);
    size_t cut = strstr(bad, "duratoin") - bad + 4;
    rc = simgraph_reader_feed(r, bad, cut) || simgraph_reader_feed(r, bad + cut, strlen(bad) - cut) ||
         simgraph_reader_finish(r);
    simgraph_reader_free(r);
    check(rc && !strcmp(e.op, "x") && !strcmp(e.field, "duratoin"), "split fault: %s %s %s",
          e.op, e.field, e.msg);
    /* trailing bytes after the graph, in a later piece */
    memset(&e, 0, sizeof e);
    r = simgraph_reader_new(&d, &e);
    const char *ok = "{\"steps\":[{\"ops\":[{\"id\":\"x\",\"resource\":\"worker\",\"duration\":1}]}]}";
    rc = simgraph_reader_feed(r, ok, strlen(ok)) || simgraph_reader_feed(r, " \n x", 4) ||
         simgraph_reader_finish(r);
    simgraph_reader_free(r);
    check(rc && strstr(e.msg, "byte"), "trailing garbage in a later piece: %s", e.msg);
    /* duplicate keys are refused as Jansson refused them */
    const char *dup = "{\"steps\":[{\"ops\":[{\"id\":\"x\",\"id\":\"y\",\"resource\":\"worker\","
                      "\"duration\":1}]}]}";
    check(simgraph_read_json(dup, strlen(dup), &d, &e) == -1 && strstr(e.msg, "duplicate"),
          "duplicate key: %s", e.msg);
    /* a number too large for a double is a syntax fault, not infinity */
    const char *huge = "{\"steps\":[{\"ops\":[{\"id\":\"x\",\"resource\":\"worker\","
                       "\"duration\":1e400}]}]}";
    check(simgraph_read_json(huge, strlen(huge), &d, &e) == -1 && strstr(e.msg, "out of range"),
          "1e400: %s", e.msg);
}

/* simgraph_read_pieces: text of several SIMGRAPH_PIECEs (about 3.5 of them)
 * gives the graph the whole read gives, the caller hears each piece's end
 * in order up to the text's length, and a fault in a later piece names the
 * same operation, field and message as the whole read. */
typedef struct seen {
    size_t last, calls;
    int ordered;
} seen;

static void note_done(void *arg, size_t upto)
{
    seen *s = arg;
    s->ordered = s->ordered && upto > s->last;
    s->last = upto;
    s->calls++;
}

static char *big_graph(size_t target, size_t *len, long *nops)
{
    size_t cap = target + 1000 * 128 + 4096, n = 0; /* a step past target */
    char *b = malloc(cap);
    n += (size_t)snprintf(b, cap, "{\"batch_size\":8,\"steps\":[");
    long k = 0;
    for (int s = 0; n < target; s++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"ops\":[", s ? "," : "");
        for (int i = 0; i < 1000; i++, k++)
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s{\"id\":\"op%d\",\"resource\":\"worker\",\"duration\":%g%s}",
                                  i ? "," : "", i, 1e-4 * (i % 7 + 1),
                                  i ? ",\"deps\":[\"op0\"]" : "");
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    *nops = k;
    return b;
}

static void test_read_pieces(void)
{
    size_t len;
    long nops;
    char *text = big_graph(SIMGRAPH_PIECE * 7 / 2, &len, &nops);
    simgraph_doc whole, pieces;
    sim_error e = {0};
    check(simgraph_read(text, len, &whole, &e) == 0, "whole: %s", e.msg);
    seen s = {.ordered = 1};
    check(simgraph_read_pieces(text, len, &pieces, &e, note_done, &s) == 0, "pieces: %s", e.msg);
    check((long)sim_graph_nops(&pieces.graph) == nops &&
              sim_graph_nops(&whole.graph) == sim_graph_nops(&pieces.graph) &&
              whole.graph.nsteps == pieces.graph.nsteps && !strcmp(pieces.source, "stepgraph"),
          "the same graph: %zu ops of %ld", sim_graph_nops(&pieces.graph), nops);
    check(s.calls == (len + SIMGRAPH_PIECE - 1) / SIMGRAPH_PIECE && s.ordered && s.last == len,
          "each piece heard in order: %zu calls, last at %zu of %zu", s.calls, s.last, len);
    simgraph_doc_free(&whole);
    simgraph_doc_free(&pieces);
    /* a fault in the last piece: a duration that is a string */
    char *at = strstr(text + len - SIMGRAPH_PIECE / 2, "\"duration\":");
    memcpy(at + 11, "\"abc\" ", 6); /* in place of a 6-character number */
    sim_error ew = {0}, ep = {0};
    int rw = simgraph_read(text, len, &whole, &ew);
    int rp = simgraph_read_pieces(text, len, &pieces, &ep, NULL, NULL);
    check(rw && rp && !strcmp(ew.op, ep.op) && !strcmp(ew.field, ep.field) &&
              !strcmp(ew.msg, ep.msg) && !strcmp(ep.field, "duration"),
          "the same fault: %s %s %s / %s %s %s", ew.op, ew.field, ew.msg, ep.op, ep.field, ep.msg);
    free(text);
}

int main(void)
{
    test_read_pieces();
    test_pieces();
    test_stepgraph_file();
    test_tf_timeline();
    test_kineto();
    test_bad();
    test_fault_field();
    return check_summary();
}
