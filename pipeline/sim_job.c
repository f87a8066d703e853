/*
 * sim_job.c — a simulation run over a stored step graph (sim_job.h).
 */
#include "pipeline/sim_job.h"

#include <stdio.h>
#include <string.h>

#include "common/memtrim.h"

/* The reader a stored graph is fed to, and the bytes it was fed. */
typedef struct feed {
    simgraph_reader *rd;
    size_t bytes;
} feed;

static int feed_piece(void *ctx, const char *bytes, size_t len)
{
    feed *f = ctx;
    f->bytes += len;
    return simgraph_reader_feed(f->rd, bytes, len);
}

/* The graph of a stored profile with the simulation's batch size and
 * overhead where the graph has none: read piece by piece into the compact
 * graph, never whole as text. */
static int load_graph(PGconn *c, int64_t sim, int64_t *profile, simgraph_doc *d,
                      size_t *bytes, store_error *err, sim_error *e)
{
    store_sim s;
    int rc = store_sim_get(c, sim, &s, err);
    if (rc)
        return rc;
    simgraph_reader *rd = simgraph_reader_new(d, e);
    if (!rd) {
        store_sim_free(&s);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    feed f = {rd, 0};
    rc = store_sim_profile_read(c, sim, profile, feed_piece, &f, err);
    *bytes = f.bytes;
    int bad = !rc && simgraph_reader_finish(rd);
    simgraph_reader_free(rd);
    if (rc || bad)
        simgraph_doc_free(d);
    if (rc && !(rc == STORE_INTERNAL && e->msg[0])) {
        store_sim_free(&s);
        return rc;
    }
    bad = bad || rc;
    if (!bad) {
        if (!(d->graph.batch_size > 0))
            d->graph.batch_size = json_real_value(json_object_get(s.spec, "batch_size"));
        json_t *o = json_object_get(s.spec, "overhead");
        if (!d->has_overhead && o) {
            d->alpha = json_real_value(json_object_get(o, "alpha"));
            d->beta = json_real_value(json_object_get(o, "beta"));
            d->has_overhead = 1;
        }
    }
    store_sim_free(&s);
    return bad ? store_error_set(err, STORE_INTERNAL, "stored graph unreadable: %s", e->msg)
               : STORE_OK;
}

json_t *sim_job_run(store *db, int64_t sim, int64_t *profile, const api_sim_request *r,
                    store_error *err, sim_error *e)
{
    simgraph_doc d;
    memset(err, 0, sizeof *err);
    PGconn *c = store_acquire(db, err);
    size_t bytes = 0;
    int rc = c ? load_graph(c, sim, profile, &d, &bytes, err, e) : err->code;
    store_release_sized(db, c, bytes); /* its buffers would stay at a piece */
    if (rc) {
        if (!err->code)
            store_error_set(err, STORE_INTERNAL, "the graph could not be read");
        return NULL;
    }
    json_t *doc = api_sim_run(&d, r, e);
    simgraph_doc_free(&d);
    /* the graph, the simulator's state and the pieces read go back to the
     * system, this thread's arena top included */
    memtrim();
    return doc;
}

json_t *sim_job_run_claimed(store *db, const store_sim_run *run, char *why, size_t cap)
{
    api_sim_request q;
    api_sim_request_default(&q);
    char field[64], msg[256];
    if (api_sim_request_parse(run->request, &q, field, sizeof field, msg, sizeof msg)) {
        snprintf(why, cap, "%s: %s", field, msg);
        return NULL;
    }
    store_error err;
    sim_error e = {0};
    int64_t profile = run->profile_id;
    json_t *doc = sim_job_run(db, run->sim_id, &profile, &q, &err, &e);
    if (!doc && err.code)
        snprintf(why, cap, "%s", err.msg);
    else if (!doc)
        snprintf(why, cap, "%s%s%s", e.field, e.field[0] ? ": " : "",
                 e.msg[0] ? e.msg : "out of memory");
    return doc;
}
