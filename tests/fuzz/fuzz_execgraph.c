/*
 * fuzz_execgraph.c — libFuzzer target for the execution graph builder and
 * everything built on it (ingest/kineto_events.c, execgraph/, the analysis
 * of api/iteration.c): each input is read as a Kineto trace from an
 * exact-size buffer in the calling thread; when it loads, the graph, the
 * overheads, the critical path (with a what-if table halving the first
 * kernel), the operator model (the trace at two sizes), the waits for other
 * ranks and the breakdowns run, and the analysis's document
 * (iteration_analyse) with each step's interval (analysis/iteration_trust.h).
 * Checks: a failure leaves a terminated message; a success gives finite,
 * non-negative times, breakdown parts that add up to their window, a
 * graph whose indices are in range, and intervals that hold their
 * predictions (null only with fewer than 2 steps).
 * Any breach aborts. Seeds: tests/fuzz/corpus/execgraph/ (those of the
 * Kineto reader); dictionary: tests/fuzz/kineto.dict.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration.h"
#include "ingest/kineto_xg.h"
#include "execgraph/xg_opmodel.h"
#include "execgraph/xg_syncwait.h"

static void must(int ok)
{
    if (!ok)
        abort();
}

static void check_graph(const xg_graph *g)
{
    const xg_trace *t = g->t;
    for (int s = 0; s < g->nsteps; s++) {
        const xg_step *st = &g->steps[s];
        must(st->nops == 0 || (st->op_first >= 0 && st->op_first + st->nops <= g->nops));
        must(st->ndev == 0 || (st->dev_first >= 0 && st->dev_first + st->ndev <= g->nstep_dev));
    }
    for (int i = 0; i < g->nops; i++) {
        const xg_op *op = &g->ops[i];
        must(op->ev >= 0 && (size_t)op->ev < t->n);
        must(op->ncalls == 0 || (op->call_first >= 0 && op->call_first + op->ncalls <= g->ncalls));
        must(op->nlaunch <= op->ncalls);
    }
    for (int i = 0; i < g->ncalls; i++) {
        const xg_call *c = &g->calls[i];
        must(c->ev >= 0 && (size_t)c->ev < t->n && t->ev[c->ev].kind == XG_RUNTIME);
        must(c->ndev == 0 || (c->dev_first >= 0 && c->dev_first + c->ndev <= g->ndev));
    }
    for (int i = 0; i < g->ndev; i++)
        must(g->dev[i] >= 0 && (size_t)g->dev[i] < t->n);
}

static void check_breakdown(const xg_graph *g, int step)
{
    xg_breakdown b;
    xg_error err;
    if (xg_breakdown_compute(g, step, -1, &b, &err) < 0)
        return;
    double sum = b.comp + b.comm + b.mem + b.other + b.idle;
    must(isfinite(sum) && b.comp >= 0 && b.comm >= -1e-9 * fabs(b.window) - 1e-12 &&
         b.mem >= -1e-9 * fabs(b.window) - 1e-12);
    must(fabs(sum - b.window) <= 1e-6 * fabs(b.window) + 1e-9);
    xg_breakdown_free(&b);
}

/* The analysis's document: each step's interval, where there is one, finite
 * and holding its prediction; none only with fewer than 2 steps. */
static void check_interval(const xg_trace *t, int keep)
{
    iteration_opts o = {.prof = {2, 4, keep}};
    xg_error err;
    json_t *doc = iteration_analyse(t, &o, &err);
    if (!doc) {
        must(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        return;
    }
    const json_t *steps = json_object_get(doc, "steps");
    must(json_is_object(json_object_get(doc, "interval")));
    size_t i;
    json_t *s;
    json_array_foreach(steps, i, s) {
        const json_t *iv = json_object_get(s, "interval");
        must(iv != NULL);
        if (json_is_null(iv)) {
            must(json_array_size(steps) < 2);
            continue;
        }
        double lo = json_number_value(json_array_get(iv, 0));
        double hi = json_number_value(json_array_get(iv, 1));
        double p = json_number_value(json_object_get(s, "predicted"));
        must(isfinite(lo) && isfinite(hi) && lo >= 0 && lo <= p && p <= hi);
    }
    json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    xg_trace t;
    xg_trace_init(&t);
    t.max_events = 100000;
    xg_error err;
    ingest_input in = {.data = buf, .len = size, .fd = -1};
    if (iteration_load(&in, 1, &t, &err) < 0) {
        must(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        goto done;
    }
    xg_graph g;
    if (xg_graph_build(&t, &g, &err) < 0) {
        must(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        goto done;
    }
    check_graph(&g);
    xg_ov_samples s;
    xg_ov_options o = {.cpu_profiler_us = 2, .gpu_profiler_us = 4, .keep_outliers = size & 1};
    xg_ov_samples_init(&s, &o);
    xg_overheads ov = {0};
    if (xg_ov_collect(&s, &g, &err) == 0 && xg_ov_summarise(&s, &ov, &err) == 0) {
        xg_kt_entry half = {.name = g.ndev ? xg_name(&t, t.ev[g.dev[0]].name) : "", .scale = 0.5};
        xg_cp_options co = {.ov = &ov, .kt = g.ndev ? &half : NULL, .nkt = g.ndev ? 1 : 0,
                            .launch_gap_us = -1};
        xg_cp_result r;
        if (xg_critpath(&g, &co, &r, &err) == 0) {
            for (int i = 0; i < r.nsteps; i++)
                must(isfinite(r.steps[i].predicted) && r.steps[i].predicted >= 0 &&
                     r.steps[i].cpu_time >= 0 && r.steps[i].idle >= -1e-9 * r.steps[i].predicted - 1e-12);
            xg_cp_result_free(&r);
        }
        /* what the treatment dropped: its types summing to it, within the step */
        for (int i = 0; i < g.nsteps && i < 4; i++) {
            double by[XG_NTYPES], sum = 0;
            double d = xg_ov_dropped(&ov, &g, i, by);
            for (int ty = 0; ty < XG_NTYPES; ty++) {
                must(by[ty] >= 0 && isfinite(by[ty]));
                sum += by[ty];
            }
            must(isnan(d) ? sum == 0 : d == sum);
        }
    }
    xg_overheads_free(&ov);
    xg_ov_samples_free(&s);
    /* the operator model with the trace at two sizes (shapes, attribution,
     * fits), and the waits for other ranks: finite, non-negative times */
    const xg_graph *two[2] = {&g, &g};
    double xs[2] = {1, 2}, total = 0;
    xg_opm_result om;
    if (xg_opmodel(two, xs, 2, 4, &om, &err) == 0) {
        for (size_t i = 0; i < t.n; i++)
            must(isnan(om.dev_us[i]) || (isfinite(om.dev_us[i]) && om.dev_us[i] >= 0));
        must(isfinite(om.predicted_us) && om.unmatched_us >= 0);
        xg_opm_result_free(&om);
    }
    double *waits = xg_sync_waits(&g, &total);
    for (int i = 0; waits && i < g.nops; i++)
        must(waits[i] >= 0 && isfinite(waits[i]));
    free(waits);
    check_breakdown(&g, -1);
    for (int i = 0; i < g.nsteps && i < 4; i++)
        check_breakdown(&g, i);
    xg_graph_free(&g);
    check_interval(&t, size & 1);
done:
    xg_trace_free(&t);
    free(buf);
    return 0;
}
