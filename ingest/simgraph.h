/*
 * simgraph.h — readers of the inputs of the asynchronous-SGD simulator
 * (simulate/): perfcast's own step-graph JSON (simgraph_json.c) and
 * converters from Chrome-trace JSON written by TensorFlow's timeline or by
 * the PyTorch profiler (Kineto) (simgraph_trace.c). All produce a checked
 * sim_graph; a fault names the operation and the field (sim_error) and
 * nothing is returned half-built.
 */
#ifndef PERFCAST_INGEST_SIMGRAPH_H
#define PERFCAST_INGEST_SIMGRAPH_H

#include <stddef.h>

#include "simulate/sim_graph.h"

#define SIMGRAPH_MAX_OPS 2000000 /* operations over all steps */
#define SIMGRAPH_MAX_STEPS 10000
#define SIMGRAPH_MAX_PAIRS 100000

typedef struct simgraph_doc {
    sim_graph graph;
    int has_overhead;  /* α, β given ("alpha"/"beta") or fitted ("pairs") */
    double alpha, beta;
    int npairs;        /* (size, overhead) pairs fitted; 0 when given */
    const char *source; /* "stepgraph", "tensorflow" or "kineto" */
} simgraph_doc;

/* Step-graph JSON:
 *   {"batch_size": 32, "servers": 1,
 *    "overhead": {"alpha": 2e-9, "beta": 5e-5} | {"pairs": [[bytes, seconds], ...]},
 *    "steps": [{"ops": [{"id": "recv_w1", "name": "RecvTensor", "resource": "downlink",
 *                        "bytes": 37632, "server": 0, "duration": 0.0012},
 *                       {"id": "conv1", "resource": "worker", "duration": 0.0031,
 *                        "deps": ["recv_w1"]}, ...]}, ...]}
 * Durations in seconds; "server" optional (assigned by size when absent).
 * Returns 0, or -1 with e. */
int simgraph_read_json(const char *buf, size_t len, simgraph_doc *out, sim_error *e);

/* The same read in pieces, for text that is not in memory at once:
 *   simgraph_reader *r = simgraph_reader_new(&doc, &e);
 *   simgraph_reader_feed(r, piece, n) ...; simgraph_reader_finish(r);
 *   simgraph_reader_free(r);
 * feed and finish return 0, or -1 with e (then doc is freed by
 * simgraph_reader_free); on success doc is the caller's. new returns NULL
 * with e when out of memory. */
typedef struct simgraph_reader simgraph_reader;
simgraph_reader *simgraph_reader_new(simgraph_doc *out, sim_error *e);
int simgraph_reader_feed(simgraph_reader *r, const char *buf, size_t len);
int simgraph_reader_finish(simgraph_reader *r);
void simgraph_reader_free(simgraph_reader *r);

/* Chrome trace JSON of one worker (an object with "traceEvents", or an
 * array of such objects: one step each) -> step graph; see simgraph_trace.c.
 * Returns 0, or -1 with e. */
int simgraph_read_trace(const char *buf, size_t len, simgraph_doc *out, sim_error *e);

/* Either, by the bytes: an object with "traceEvents" or an array is a
 * trace, anything else a step graph. */
int simgraph_read(const char *buf, size_t len, simgraph_doc *out, sim_error *e);

/* The same for text the caller can let go of as it is read (an upload
 * mapped from its spool file): a step graph is fed to the reader in pieces
 * of SIMGRAPH_PIECE bytes, front to back, and done(arg, upto) is called
 * after each with the bytes read so far (done may be NULL), so that the
 * text's pages need not stay in memory beside the graph; the nesting is
 * checked by the reader as it goes, not by a scan before. A trace is read
 * whole, as by simgraph_read(). simgraph_read_json_pieces() is the step-graph
 * half alone. */
#define SIMGRAPH_PIECE ((size_t)4 << 20)
int simgraph_read_pieces(const char *buf, size_t len, simgraph_doc *out, sim_error *e,
                         void (*done)(void *arg, size_t upto), void *arg);
int simgraph_read_json_pieces(const char *buf, size_t len, simgraph_doc *out, sim_error *e,
                              void (*done)(void *arg, size_t upto), void *arg);

void simgraph_doc_free(simgraph_doc *d);

/* The step graph as JSON text (the format above, without "overhead" unless
 * the document has one). malloc'd, NULL when out of memory. */
char *simgraph_to_json(const simgraph_doc *d);

/* Nesting of arrays/objects in buf is at most max_depth (before any JSON
 * parser recurses); 0 or -1. */
int simgraph_check_depth(const char *buf, size_t len, int max_depth);

#endif
