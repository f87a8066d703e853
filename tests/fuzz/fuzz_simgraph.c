/*
 * fuzz_simgraph.c — libFuzzer target for the simulator's input readers
 * (ingest/simgraph.h: step-graph JSON, TensorFlow timeline and Kineto
 * traces) and, on what they accept, the simulator itself. A success must be
 * a graph sim_graph_check() accepts; a failure must return nothing and a
 * terminated message. Accepted small graphs are simulated with two workers
 * on two servers for two steps: the run must end with finite, positive
 * throughput. Any breach aborts. Seeds: tests/fuzz/corpus/simgraph/.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/simgraph.h"
#include "simulate/sim_run.h"

static void simulate_small(const simgraph_doc *d)
{
    if (sim_graph_nops(&d->graph) > 2000)
        return;
    sim_program p;
    sim_error e;
    if (sim_prepare(&d->graph, 2, d->alpha, d->beta, &p, &e))
        abort();
    sim_config c = {.workers = 2, .bandwidth = 1e6, .win = 1000, .flow_control = 1, .steps = 2,
                    .seed = 3};
    sim_result r;
    if (sim_run(&p, &c, &r, &e))
        abort();
    if (r.steps != 4 || !(r.makespan >= 0) || isnan(r.steps_per_s) || r.events < 1)
        abort();
    sim_program_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    simgraph_doc d;
    sim_error e;
    memset(&e, 0, sizeof e);
    /* the step-graph reader fed in pieces (as a stored graph is read back)
     * must agree with it fed whole */
    simgraph_doc whole, pieces;
    sim_error ew, ep;
    int rw = simgraph_read_json(buf, size, &whole, &ew);
    simgraph_reader *rd = simgraph_reader_new(&pieces, &ep);
    if (rd) {
        size_t cut = size ? (size_t)data[0] % (size + 1) : 0, cut2 = cut + (size - cut) / 2;
        int rp = simgraph_reader_feed(rd, buf, cut) || simgraph_reader_feed(rd, buf + cut, cut2 - cut) ||
                 simgraph_reader_feed(rd, buf + cut2, size - cut2) || simgraph_reader_finish(rd);
        /* deep nesting is refused before the whole text is parsed, by a scan the
         * pieces do not get; every other outcome must match */
        if (!strstr(ew.msg, "nested deeper") &&
            ((rp != 0) != (rw != 0) ||
             (!rw && sim_graph_nops(&whole.graph) != sim_graph_nops(&pieces.graph))))
            abort();
        simgraph_reader_free(rd);
        if (!rp)
            simgraph_doc_free(&pieces);
    }
    if (!rw)
        simgraph_doc_free(&whole);
    if (simgraph_read(buf, size, &d, &e) == 0) {
        sim_error e2;
        if (sim_graph_check(&d.graph, &e2))
            abort();
        simulate_small(&d);
        simgraph_doc_free(&d);
    } else {
        if (d.graph.steps || d.graph.nsteps || !memchr(e.msg, 0, sizeof e.msg) ||
            !memchr(e.op, 0, sizeof e.op) || !memchr(e.field, 0, sizeof e.field))
            abort();
    }
    free(buf);
    return 0;
}
