/*
 * simulations.c — queries of the simulator's tables (store/simulations.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/jobs.h"
#include "store/simulations.h"
#include "common/jsonb.h"

#define SIM_COLS "id, tenant_id, name, spec::text, " \
                 "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define TS(col) "coalesce(to_char(" col " AT TIME ZONE 'UTC', " \
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), '')"
#define PROFILE_COLS "id, sim_experiment_id, source, steps, ops, servers, " TS("created_at")
#define RUN_COLS "id, sim_experiment_id, profile_id, state, request::text, result, error, " \
                 TS("created_at") ", " TS("finished_at") ", attempts, coalesce(worker, '')" 

void store_sim_free(store_sim *s)
{
    if (!s)
        return;
    free(s->name);
    json_decref(s->spec);
    memset(s, 0, sizeof *s);
}

void store_sim_list_free(store_sim *v, int n)
{
    for (int i = 0; i < n; i++)
        store_sim_free(&v[i]);
    free(v);
}

static int sim_from_row(PGresult *r, int i, store_sim *s, store_error *err)
{
    memset(s, 0, sizeof *s);
    s->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    s->tenant_id = strtoll(PQgetvalue(r, i, 1), NULL, 10);
    s->name = strdup(PQgetvalue(r, i, 2));
    s->spec = jsonb_parse(PQgetvalue(r, i, 3), 0);
    snprintf(s->created_at, sizeof s->created_at, "%s", PQgetvalue(r, i, 4));
    if (s->name && s->spec)
        return STORE_OK;
    store_sim_free(s);
    return store_error_set(err, STORE_INTERNAL, "cannot read simulation row (out of memory?)");
}

int store_sim_create(PGconn *c, store_sim *s, store_error *err)
{
    char tenant[24], *spec = json_dumps(s->spec, JSON_COMPACT);
    if (!spec)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    store_idtext(tenant, s->tenant_id);
    const char *vals[] = {tenant, s->name, spec};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO sim_experiments (tenant_id, name, spec) "
                               "VALUES ($1, $2, $3::jsonb) RETURNING id, "
                               "to_char(created_at AT TIME ZONE 'UTC', "
                               "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
                               3, NULL, vals, NULL, NULL, 0);
    free(spec);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int rc = store_fail(c, r, err);
        if (rc == STORE_CONFLICT) { /* the tenant's simulation of that name */
            const char *key[] = {tenant, s->name};
            PGresult *q = PQexecParams(
                c, "SELECT id FROM sim_experiments WHERE tenant_id = $1 AND name = $2", 2, NULL,
                key, NULL, NULL, 0);
            if (PQresultStatus(q) == PGRES_TUPLES_OK && PQntuples(q) == 1)
                s->id = strtoll(PQgetvalue(q, 0, 0), NULL, 10);
            PQclear(q);
        }
        return rc;
    }
    s->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    snprintf(s->created_at, sizeof s->created_at, "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    return STORE_OK;
}

int store_sim_get(PGconn *c, int64_t id, store_sim *out, store_error *err)
{
    char key[24];
    store_idtext(key, id);
    const char *vals[] = {key};
    PGresult *r = PQexecParams(c, "SELECT " SIM_COLS " FROM sim_experiments WHERE id = $1", 1,
                               NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1 ? sim_from_row(r, 0, out, err)
                               : store_error_set(err, STORE_NOT_FOUND, "no simulation with id %s",
                                                 key);
    PQclear(r);
    return rc;
}

int store_sim_list(PGconn *c, int64_t tenant, int64_t after, int limit, store_sim **out, int *n,
                   store_error *err)
{
    PGresult *r = store_page_query(c,
                                   "SELECT " SIM_COLS " FROM sim_experiments WHERE tenant_id = $1 "
                                   "AND id > $2 ORDER BY id LIMIT $3",
                                   tenant, after, limit, err);
    if (!r)
        return err->code;
    int rows = PQntuples(r);
    *out = calloc(rows ? (size_t)rows : 1, sizeof **out);
    *n = 0;
    if (!*out) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++) {
        if (sim_from_row(r, i, &(*out)[i], err)) {
            store_sim_list_free(*out, *n);
            *out = NULL;
            PQclear(r);
            return STORE_INTERNAL;
        }
        (*n)++;
    }
    PQclear(r);
    return STORE_OK;
}

int store_sim_delete(PGconn *c, int64_t id, int64_t tenant, store_error *err)
{
    char k[24], t[24];
    store_idtext(k, id);
    store_idtext(t, tenant);
    const char *vals[] = {k, t};
    PGresult *r = PQexecParams(c, "DELETE FROM sim_experiments WHERE id = $1 AND tenant_id = $2",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int rc = strcmp(PQcmdTuples(r), "1") ? store_error_set(err, STORE_NOT_FOUND,
                                                           "no simulation with id %s", k)
                                         : STORE_OK;
    PQclear(r);
    return rc;
}

int store_sim_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err)
{
    char k[24];
    store_idtext(k, id);
    const char *vals[] = {k};
    PGresult *r = PQexecParams(c, "SELECT tenant_id FROM sim_experiments WHERE id = $1", 1, NULL,
                               vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) == 1)
        *tenant = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        rc = store_error_set(err, STORE_NOT_FOUND, "no simulation with id %s", k);
    PQclear(r);
    return rc;
}

static void profile_from_row(PGresult *r, int i, store_sim_profile *p)
{
    memset(p, 0, sizeof *p);
    p->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    p->sim_id = strtoll(PQgetvalue(r, i, 1), NULL, 10);
    snprintf(p->source, sizeof p->source, "%s", PQgetvalue(r, i, 2));
    p->steps = atoi(PQgetvalue(r, i, 3));
    p->ops = atoi(PQgetvalue(r, i, 4));
    p->servers = atoi(PQgetvalue(r, i, 5));
    snprintf(p->created_at, sizeof p->created_at, "%s", PQgetvalue(r, i, 6));
}

/* Uploads are sent in pieces of this many bytes, so that libpq's buffers of
 * a pooled connection never grow to the size of an upload and stay so. */
#define SIM_PIECE (4u << 20)

static int exec_cmd(PGconn *c, const char *sql, store_error *err)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

static int rollback(PGconn *c, int rc)
{
    PQclear(PQexec(c, "ROLLBACK"));
    return rc;
}

/* One piece of the raw bytes (binary) or of the graph text into the
 * transaction's temporary table. */
static int put_piece(PGconn *c, int n, const char *bytes, size_t len, int is_raw,
                     store_error *err)
{
    char num[24];
    store_idtext(num, n);
    const char *vals[] = {num, bytes};
    int lens[] = {0, (int)len};
    int fmts[] = {0, 1};
    PGresult *r = PQexecParams(c,
                               is_raw ? "INSERT INTO sim_piece (n, raw) VALUES ($1, $2)"
                                      : "INSERT INTO sim_piece (n, graph) "
                                        "VALUES ($1, convert_from($2, 'UTF8'))",
                               2, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

/* Text is cut at a UTF-8 character's first byte. */
static size_t text_piece(const char *s, size_t len)
{
    if (len <= SIM_PIECE)
        return len;
    size_t n = SIM_PIECE;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n ? n : SIM_PIECE;
}

static int profile_row(PGresult *r, store_sim_profile *p, int *duplicate, store_error *err)
{
    int rc = STORE_OK;
    if (PQntuples(r) == 1) {
        profile_from_row(r, 0, p);
        *duplicate = !strcmp(PQgetvalue(r, 0, 7), "t");
    } else {
        rc = store_error_set(err, STORE_CONFLICT, "the profile could not be stored; retry");
    }
    PQclear(r);
    return rc;
}

#define PROFILE_INSERT(RAW, GRAPH)                                                               \
    "WITH ins AS (INSERT INTO sim_profiles (sim_experiment_id, source, sha256, raw, graph, "    \
    "steps, ops, servers) SELECT $1, $2, $3, " RAW ", " GRAPH ", $4, $5, $6 "                    \
    "ON CONFLICT (sim_experiment_id, sha256) DO NOTHING RETURNING id, sim_experiment_id, "      \
    "source, steps, ops, servers, created_at) "                                                 \
    "SELECT " PROFILE_COLS ", false FROM ins UNION ALL "                                         \
    "SELECT " PROFILE_COLS ", true FROM sim_profiles WHERE sim_experiment_id = $1 "             \
    "AND sha256 = $3 AND NOT EXISTS (SELECT 1 FROM ins)"

/* A large upload: its pieces into a temporary table, then one row made of
 * them, in one transaction. */
static int add_in_pieces(PGconn *c, store_sim_profile *p, const char *const *head,
                         const char *raw, size_t rawlen, const char *graph, int *duplicate,
                         store_error *err)
{
    int rc = exec_cmd(c, "BEGIN", err);
    if (rc)
        return rc;
    rc = exec_cmd(c, "CREATE TEMPORARY TABLE sim_piece (n integer, raw bytea, graph text) "
                     "ON COMMIT DROP", err);
    int n = 0;
    for (size_t at = 0; !rc && at < rawlen; at += SIM_PIECE) {
        size_t len = rawlen - at < SIM_PIECE ? rawlen - at : SIM_PIECE;
        rc = put_piece(c, n++, raw + at, len, 1, err);
    }
    size_t glen = strlen(graph);
    for (size_t at = 0; !rc && at < glen;) {
        size_t len = text_piece(graph + at, glen - at);
        rc = put_piece(c, n++, graph + at, len, 0, err);
        at += len;
    }
    if (rc)
        return rollback(c, rc);
    const char *vals[] = {head[0], head[1], head[2], head[3], head[4], head[5]};
    int lens[] = {0, 0, 32, 0, 0, 0};
    int fmts[] = {0, 0, 1, 0, 0, 0};
    PGresult *r = PQexecParams(
        c,
        PROFILE_INSERT("(SELECT coalesce(string_agg(raw, ''::bytea ORDER BY n), ''::bytea) "
                       "FROM sim_piece WHERE raw IS NOT NULL)",
                       "(SELECT coalesce(string_agg(graph, '' ORDER BY n), '') FROM sim_piece "
                       "WHERE graph IS NOT NULL)"),
        6, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return rollback(c, store_fail(c, r, err));
    rc = profile_row(r, p, duplicate, err);
    if (rc)
        return rollback(c, rc);
    rc = exec_cmd(c, "COMMIT", err);
    return rc ? rollback(c, rc) : STORE_OK;
}

int store_sim_profile_add(PGconn *c, store_sim_profile *p, const void *raw, size_t rawlen,
                          const unsigned char sha256[32], const char *graph, int *duplicate,
                          store_error *err)
{
    char sim[24], steps[24], ops[24], servers[24];
    store_idtext(sim, p->sim_id);
    store_idtext(steps, p->steps);
    store_idtext(ops, p->ops);
    store_idtext(servers, p->servers);
    const char *head[] = {sim, p->source, (const char *)sha256, steps, ops, servers};
    if (rawlen + strlen(graph) > SIM_PIECE)
        return add_in_pieces(c, p, head, raw, rawlen, graph, duplicate, err);
    const char *vals[] = {sim, p->source, (const char *)sha256, steps, ops, servers, raw, graph};
    int lens[] = {0, 0, 32, 0, 0, 0, (int)rawlen, 0};
    int fmts[] = {0, 0, 1, 0, 0, 0, 1, 0};
    /* one statement: insert, or find the same bytes stored before */
    PGresult *r = PQexecParams(c, PROFILE_INSERT("$7", "$8"), 8, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    return profile_row(r, p, duplicate, err);
}

int store_sim_profile_list(PGconn *c, int64_t sim, store_sim_profile **out, int *n,
                           store_error *err)
{
    char k[24];
    store_idtext(k, sim);
    const char *vals[] = {k};
    PGresult *r = PQexecParams(c,
                               "SELECT " PROFILE_COLS " FROM sim_profiles "
                               "WHERE sim_experiment_id = $1 ORDER BY id",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    *out = calloc(rows ? (size_t)rows : 1, sizeof **out);
    if (!*out) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++)
        profile_from_row(r, i, &(*out)[i]);
    *n = rows;
    PQclear(r);
    return STORE_OK;
}

static uint64_t be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (unsigned char)p[i];
    return v;
}

int store_sim_profile_read(PGconn *c, int64_t sim, int64_t *id, store_sim_sink sink, void *ctx,
                           store_error *err)
{
    char s[24], p[24], piece[24];
    store_idtext(s, sim);
    store_idtext(p, *id);
    store_idtext(piece, SIM_PIECE);
    const char *vals[] = {s, p, piece};
    /* one row per piece, each sent alone (single-row mode): the graph text,
     * or the raw bytes where the upload was a step graph kept only once */
    if (!PQsendQueryParams(c,
                           "SELECT p.id, g, substring(CASE WHEN p.graph = '' THEN p.raw "
                           "ELSE convert_to(p.graph, 'UTF8') END FROM g::integer FOR $3::integer) "
                           "FROM (SELECT id, raw, graph FROM sim_profiles "
                           "WHERE sim_experiment_id = $1 AND ($2::bigint = 0 OR id = $2) "
                           "ORDER BY id DESC LIMIT 1) p, "
                           "generate_series(1::bigint, greatest(1, CASE WHEN p.graph = '' "
                           "THEN octet_length(p.raw) ELSE octet_length(p.graph) END), "
                           "$3::bigint) g",
                           3, NULL, vals, NULL, NULL, 1) ||
        !PQsetSingleRowMode(c))
        return store_fail(c, NULL, err);
    int rc = STORE_OK, rows = 0, stopped = 0;
    uint64_t next = 1;
    PGresult *r;
    while ((r = PQgetResult(c))) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE && !rc && !stopped) {
            uint64_t at = be64(PQgetvalue(r, 0, 1));
            *id = (int64_t)be64(PQgetvalue(r, 0, 0));
            if (at != next) {
                rc = store_error_set(err, STORE_INTERNAL, "stored graph read out of order");
            } else if (sink(ctx, PQgetvalue(r, 0, 2), (size_t)PQgetlength(r, 0, 2))) {
                stopped = 1;
            }
            next += SIM_PIECE;
            rows++;
        } else if (st != PGRES_TUPLES_OK && st != PGRES_SINGLE_TUPLE && !rc) {
            rc = store_error_set(err, STORE_INTERNAL, "%s", PQresultErrorMessage(r));
        }
        PQclear(r);
    }
    if (rc)
        return rc;
    if (!rows)
        return *id ? store_error_set(err, STORE_NOT_FOUND, "no profile %s in simulation %s", p, s)
                   : store_error_set(err, STORE_NOT_FOUND, "simulation %s has no profile yet", s);
    return stopped ? store_error_set(err, STORE_INTERNAL, "the stored graph was refused")
                   : STORE_OK;
}

void store_sim_run_free(store_sim_run *r)
{
    if (!r)
        return;
    json_decref(r->request);
    free(r->result);
    free(r->error);
    memset(r, 0, sizeof *r);
}

static int run_from_row(PGresult *r, int i, store_sim_run *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    out->sim_id = strtoll(PQgetvalue(r, i, 1), NULL, 10);
    out->profile_id = strtoll(PQgetvalue(r, i, 2), NULL, 10);
    snprintf(out->state, sizeof out->state, "%s", PQgetvalue(r, i, 3));
    out->request = jsonb_parse(PQgetvalue(r, i, 4), 0);
    if (!PQgetisnull(r, i, 5))
        out->result = strdup(PQgetvalue(r, i, 5));
    if (!PQgetisnull(r, i, 6))
        out->error = strdup(PQgetvalue(r, i, 6));
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, i, 7));
    snprintf(out->finished_at, sizeof out->finished_at, "%s", PQgetvalue(r, i, 8));
    out->attempts = atoi(PQgetvalue(r, i, 9));
    snprintf(out->worker, sizeof out->worker, "%s", PQgetvalue(r, i, 10));
    if (out->request && (PQgetisnull(r, i, 5) || out->result) &&
        (PQgetisnull(r, i, 6) || out->error))
        return STORE_OK;
    store_sim_run_free(out);
    return store_error_set(err, STORE_INTERNAL, "cannot read run row (out of memory?)");
}

int store_sim_run_add(PGconn *c, store_sim_run *run, store_error *err)
{
    char sim[24], prof[24], *req = json_dumps(run->request, JSON_COMPACT);
    if (!req)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    store_idtext(sim, run->sim_id);
    store_idtext(prof, run->profile_id);
    const char *vals[] = {sim, prof, req, run->state, run->result};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO sim_runs (sim_experiment_id, profile_id, request, "
                               "state, result, started_at, finished_at) VALUES ($1, $2, "
                               "$3::jsonb, $4, $5, CASE WHEN $4 = 'done' THEN now() END, "
                               "CASE WHEN $4 = 'done' THEN now() END) RETURNING id, "
                               TS("created_at") ", " TS("finished_at"),
                               5, NULL, vals, NULL, NULL, 0);
    free(req);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    run->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    snprintf(run->created_at, sizeof run->created_at, "%s", PQgetvalue(r, 0, 1));
    snprintf(run->finished_at, sizeof run->finished_at, "%s", PQgetvalue(r, 0, 2));
    PQclear(r);
    if (strcmp(run->state, "done")) /* wake the workers (autocommit: sent now) */
        PQclear(PQexec(c, "SELECT pg_notify('" STORE_JOBS_CHANNEL "', '')"));
    return STORE_OK;
}

int store_sim_run_get(PGconn *c, int64_t sim, int64_t id, store_sim_run *out, store_error *err)
{
    char s[24], k[24];
    store_idtext(s, sim);
    store_idtext(k, id);
    const char *vals[] = {s, k};
    PGresult *r = PQexecParams(c,
                               "SELECT " RUN_COLS " FROM sim_runs WHERE sim_experiment_id = $1 "
                               "AND id = $2",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1 ? run_from_row(r, 0, out, err)
                               : store_error_set(err, STORE_NOT_FOUND,
                                                 "no run %s in simulation %s", k, s);
    PQclear(r);
    return rc;
}

/* Fails the running runs whose lease expired with no attempts left. */
static int reap_runs(PGconn *c, store_error *err)
{
    PGresult *r = PQexecParams(
        c,
        "UPDATE sim_runs SET state = 'failed', finished_at = now(), lease_until = NULL, "
        "error = 'lease expired: worker ' || coalesce(worker, '?') || ' stopped during attempt ' "
        "|| attempts || ' of ' || max_attempts "
        "WHERE state = 'running' AND lease_until < clock_timestamp() AND attempts >= max_attempts",
        0, NULL, NULL, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_sim_run_claim(PGconn *c, const char *worker, double lease_seconds, store_sim_run *out,
                        store_error *err)
{
    int rc = reap_runs(c, err);
    if (rc)
        return rc;
    char lease[32];
    snprintf(lease, sizeof lease, "%.3f", lease_seconds);
    const char *vals[] = {worker, lease};
    PGresult *r = PQexecParams(
        c,
        "UPDATE sim_runs SET state = 'running', started_at = now(), attempts = attempts + 1, "
        "worker = $1, lease_until = clock_timestamp() + make_interval(secs => $2::float8) "
        "WHERE id = (SELECT id FROM sim_runs WHERE state = 'queued' OR (state = 'running' "
        "AND lease_until < clock_timestamp() AND attempts < max_attempts) "
        "ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING " RUN_COLS,
        2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    rc = PQntuples(r) == 1 ? run_from_row(r, 0, out, err)
                           : store_error_set(err, STORE_NOT_FOUND, "no claimable run");
    PQclear(r);
    return rc;
}

/* Runs sql on run id held by (worker, attempt) with one more parameter $4;
 * no row -> STORE_CONFLICT. */
static int held_update(PGconn *c, const char *sql, int64_t id, const char *worker, int attempt,
                       const char *p4, const char *p5, int nparams, store_error *err)
{
    int n = 0;
    int rc = store_run_update(c, sql, id, worker, attempt, p4, p5, nparams, &n, err);
    if (rc == STORE_OK && n != 1)
        return store_error_set(err, STORE_CONFLICT,
                               "run %" PRId64 " attempt %d is no longer held by %s (lease lost)",
                               id, attempt, worker);
    return rc;
}

#define HELD "WHERE id = $1 AND state = 'running' AND worker = $2 AND attempts = $3::int"

int store_sim_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                            double lease_seconds, store_error *err)
{
    char lease[32];
    snprintf(lease, sizeof lease, "%.3f", lease_seconds);
    return held_update(c,
                       "UPDATE sim_runs SET lease_until = clock_timestamp() + "
                       "make_interval(secs => $4::float8) " HELD,
                       id, worker, attempt, lease, NULL, 4, err);
}

int store_sim_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                         const char *result, const char *error, store_error *err)
{
    return held_update(c,
                       "UPDATE sim_runs SET state = CASE WHEN $4::text IS NULL THEN "
                       "'failed' ELSE 'done' END, result = $4, error = $5, lease_until = NULL, "
                       "finished_at = now() " HELD,
                       id, worker, attempt, result, error, 5, err);
}
