/*
 * test_api_security.c — tenants, tokens and hostile clients against a real
 * server and PostgreSQL:
 *
 *   - open mode on loopback while no token exists, its end with the first
 *     token, and the refusal to serve 0.0.0.0 without tokens (--insecure);
 *   - `perfcast token create/list/revoke`, /v1/tokens, expiry, revocation
 *     taking effect on the next request, 401 with WWW-Authenticate;
 *   - the isolation matrix: every operation of api/openapi.json, called
 *     with no token, another tenant's admin token, and the owning tenant's
 *     read, write and admin tokens, each answer's status asserted; every
 *     operation needs an entry in `expect` (tests/security_matrix.h), so a
 *     new route cannot be left out, and the scope openapi.json states must
 *     be the router's;
 *   - injection and traversal in names and queries, the rate limit, a
 *     tenant's concurrent uploads, a huge declared Content-Length, an
 *     upload cut off halfway, long headers and queries, deep JSON, slow
 *     clients, and the audit lines.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "store/tokens.h"
#include "tests/check.h"
#include "tests/harness.h"
#include "tests/security_matrix.h"

static const char *bin(void)
{
    return getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
}

/* A request with token (NULL: none). */
static void call(harness *h, const char *method, const char *path, const char *token,
                 const char *body, harness_response *r)
{
    char hdr[256] = "";
    if (token)
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", token);
    harness_request(h, method, path, *hdr ? hdr : NULL, body, body ? strlen(body) : 0, r);
}

static int status_of(harness *h, const char *method, const char *path, const char *token,
                     const char *body)
{
    harness_response r;
    call(h, method, path, token, body, &r);
    int s = r.status;
    harness_response_free(&r);
    return s;
}

/* Runs `perfcast ARGS` with the test's DATABASE_URL; stdout into out. Exit status. */
static int cli(harness *h, const char *args, char *out, size_t cap)
{
    char cmd[1024], file[300];
    snprintf(file, sizeof file, "%s/cli-out.txt", harness_dir(h));
    snprintf(cmd, sizeof cmd, "env DATABASE_URL='%s' %s %s >%s 2>%s.err", harness_database_url(h),
             bin(), args, file, file);
    int rc = system(cmd);
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    while (n && out[n - 1] == '\n')
        out[--n] = '\0';
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A token from the CLI (static storage per slot). */
static void new_token(harness *h, const char *tenant, const char *scope, const char *extra,
                      char *out, size_t cap)
{
    char args[256];
    snprintf(args, sizeof args, "token create --tenant %s --scope %s %s", tenant, scope,
             extra ? extra : "");
    int rc = cli(h, args, out, cap);
    check(rc == 0 && !strncmp(out, "pcf_", 4), "token create %s %s: exit %d, \"%s\"", tenant,
          scope, rc, out);
}

static long create_experiment(harness *h, const char *token, const char *name)
{
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
             "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":1},"
             "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}}",
             name);
    harness_response r;
    call(h, "POST", "/v1/experiments", token, doc, &r);
    json_t *d = harness_json(&r);
    long id = r.status == 201 ? (long)json_integer_value(json_object_get(d, "id")) : 0;
    check(id > 0, "create %s: %d %s", name, r.status, r.body ? r.body : "");
    json_decref(d);
    harness_response_free(&r);
    return id;
}

/* Uploads examples/profile-ranks-{2..10}.json; returns the last job. */
static long upload_examples(harness *h, const char *token, long exp)
{
    long job = 0;
    for (int x = 2; x <= 10; x += 2) {
        char file[64], path[96];
        size_t len;
        snprintf(file, sizeof file, "examples/profile-ranks-%d.json", x);
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
        char *body = harness_read_file(file, &len);
        check(body != NULL, "read %s", file);
        if (!body)
            return 0;
        harness_response r;
        call(h, "POST", path, token, body, &r);
        json_t *d = harness_json(&r);
        check(r.status == 202, "upload %s: %d %s", file, r.status, r.body ? r.body : "");
        job = (long)json_integer_value(json_object_get(d, "job"));
        json_decref(d);
        harness_response_free(&r);
        free(body);
    }
    return job;
}

/* Polls the job with token until it is done (1) or 60 s pass (0). */
static int wait_job(harness *h, const char *token, long job)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    for (double t0 = harness_now(); harness_now() - t0 < 60; usleep(50000)) {
        harness_response r;
        call(h, "GET", path, token, NULL, &r);
        json_t *d = harness_json(&r);
        const char *state = json_string_value(json_object_get(d, "state"));
        int done = state && !strcmp(state, "done"), failed = state && !strcmp(state, "failed");
        json_decref(d);
        harness_response_free(&r);
        if (done || failed)
            return done;
    }
    return 0;
}

/* --- open mode ---------------------------------------------------------- */

static void test_open_mode(harness *h)
{
    check(status_of(h, "GET", "/v1/experiments", NULL, NULL) == 200,
          "open mode: no token needed on loopback while no token exists");
    check(create_experiment(h, NULL, "open-mode-exp") > 0, "open mode: create");
    char log[256];
    snprintf(log, sizeof log, "grep -q 'OPEN MODE' %s/server.log", harness_dir(h));
    check(system(log) == 0, "the log says the server runs open");

    /* 0.0.0.0 without tokens: refused, unless --insecure */
    char out[4096];
    int rc = cli(h, "serve --listen 0.0.0.0:0 2>&1", out, sizeof out);
    char errfile[320], cmd[1024];
    snprintf(errfile, sizeof errfile, "%s/cli-out.txt.err", harness_dir(h));
    snprintf(cmd, sizeof cmd, "grep -q 'refusing to serve without tokens' %s", errfile);
    check(rc == 2 && system(cmd) == 0, "serve on 0.0.0.0 without tokens: exit %d", rc);
    snprintf(cmd, sizeof cmd,
             "env DATABASE_URL='%s' timeout -s TERM 3 %s serve --listen 0.0.0.0:0 --insecure "
             "--workers 0 >%s 2>&1",
             harness_database_url(h), bin(), errfile);
    rc = system(cmd);
    snprintf(cmd, sizeof cmd, "grep -q '\"msg\":\"listening\"' %s && grep -q 'OPEN MODE' %s",
             errfile, errfile);
    check(system(cmd) == 0, "serve on 0.0.0.0 --insecure starts, open (exit %d)", rc);
}

/* --- tokens ------------------------------------------------------------- */

static char alpha_admin[128], alpha_write[128], alpha_read[128], beta_admin[128];

static void test_tokens(harness *h, long open_exp)
{
    char out[4096];
    check(cli(h, "token create --tenant alpha --scope sudo", out, sizeof out) == 2,
          "token create with an unknown scope: usage error");
    check(cli(h, "token create --scope read", out, sizeof out) == 2,
          "token create without a tenant: usage error");
    new_token(h, "alpha", "admin", NULL, alpha_admin, sizeof alpha_admin);
    new_token(h, "alpha", "write", "--expires 30d", alpha_write, sizeof alpha_write);
    new_token(h, "alpha", "read", NULL, alpha_read, sizeof alpha_read);
    new_token(h, "beta", "admin", NULL, beta_admin, sizeof beta_admin);

    /* stored only as hashes */
    char n[64];
    harness_sql(h, "SELECT count(*) FROM tokens WHERE length(secret_sha256) = 32", n, sizeof n);
    check(atoi(n) == 4, "four tokens stored as 32-byte hashes: %s", n);
    char q[512];
    snprintf(q, sizeof q,
             "SELECT count(*) FROM tokens WHERE encode(secret_sha256, 'hex') = '%s' OR "
             "encode(secret_sha256, 'escape') LIKE '%%%s%%'",
             alpha_admin + 4, alpha_admin + 10);
    harness_sql(h, q, n, sizeof n);
    check(atoi(n) == 0, "no token secret in the database");

    check(cli(h, "token list --tenant alpha", out, sizeof out) == 0 && strstr(out, "\"admin\"") &&
              strstr(out, "\"write\"") && !strstr(out, "beta") && !strstr(out, alpha_admin + 10),
          "token list --tenant alpha: %s", out);
    check(cli(h, "token list --tenant nobody", out, sizeof out) == 2, "token list of an unknown tenant");

    /* open mode is over */
    harness_response r;
    call(h, "GET", "/v1/experiments", NULL, NULL, &r);
    char www[256] = "";
    harness_header(&r, "WWW-Authenticate", www, sizeof www);
    check(r.status == 401 && !strncmp(www, "Bearer", 6), "no token after the first: %d \"%s\"",
          r.status, www);
    harness_response_free(&r);
    const char *bad[] = {"pcf_1_00", "nonsense", "pcf_999_0000000000000000000000000000000000000000000000000000000000000000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        call(h, "GET", "/v1/experiments", bad[i], NULL, &r);
        harness_header(&r, "WWW-Authenticate", www, sizeof www);
        check(r.status == 401 && strstr(www, "invalid_token"), "token %s: %d \"%s\"", bad[i],
              r.status, www);
        harness_response_free(&r);
    }
    /* a right id with a wrong secret */
    char forged[128];
    snprintf(forged, sizeof forged, "%s", alpha_admin);
    forged[strlen(forged) - 1] = forged[strlen(forged) - 1] == '0' ? '1' : '0';
    check(status_of(h, "GET", "/v1/experiments", forged, NULL) == 401, "a forged secret: 401");
    harness_request(h, "GET", "/v1/experiments", "Authorization: Basic YWxwaGE6YmV0YQ==\r\n",
                    NULL, 0, &r);
    check(r.status == 401, "Basic credentials: %d", r.status);
    harness_response_free(&r);
    /* the default tenant's experiment is not alpha's */
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld", open_exp);
    check(status_of(h, "GET", path, alpha_admin, NULL) == 404, "the open-mode experiment is the default tenant's");

    /* /v1/tokens: create, list, revoke */
    call(h, "POST", "/v1/tokens", alpha_admin, "{\"scope\":\"read\",\"expires_in\":\"1h\"}", &r);
    json_t *d = harness_json(&r);
    const char *tok = json_string_value(json_object_get(d, "token"));
    long tid = (long)json_integer_value(json_object_get(d, "id"));
    char api_tok[128] = "";
    snprintf(api_tok, sizeof api_tok, "%s", tok ? tok : "");
    check(r.status == 201 && tok && tid > 0, "POST /v1/tokens: %d %s", r.status, r.body);
    json_decref(d);
    harness_response_free(&r);
    check(status_of(h, "GET", "/v1/experiments", api_tok, NULL) == 200, "the API-made token reads");
    check(status_of(h, "POST", "/v1/tokens", alpha_write, "{\"scope\":\"admin\"}") == 403,
          "a write token cannot make tokens");
    check(status_of(h, "POST", "/v1/tokens", alpha_admin, "{\"scope\":\"root\"}") == 400,
          "an unknown scope: 400");
    check(status_of(h, "POST", "/v1/tokens", alpha_admin, "{\"scope\":\"read\",\"expires_in\":\"soon\"}") == 400,
          "a bad expiry: 400");
    call(h, "GET", "/v1/tokens", alpha_admin, NULL, &r);
    check(r.status == 200 && r.body && !strstr(r.body, "beta") && !strstr(r.body, api_tok + 10) &&
              !strstr(r.body, "sha256"),
          "GET /v1/tokens: alpha's, no secrets: %s", r.body);
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/tokens/%ld", tid);
    check(status_of(h, "DELETE", path, beta_admin, NULL) == 404, "beta cannot revoke alpha's token");
    check(status_of(h, "GET", "/v1/experiments", api_tok, NULL) == 200, "still usable");
    check(status_of(h, "DELETE", path, alpha_admin, NULL) == 204, "alpha revokes it");
    check(status_of(h, "GET", "/v1/experiments", api_tok, NULL) == 401, "revoked: 401 at once");

    /* CLI revoke, effective at once (see also tests/test_api_revocation.c) */
    char temp[128], idtext[32];
    new_token(h, "alpha", "read", NULL, temp, sizeof temp);
    check(status_of(h, "GET", "/v1/experiments", temp, NULL) == 200, "a fresh CLI token reads");
    snprintf(idtext, sizeof idtext, "token revoke %.*s", (int)(strchr(temp + 4, '_') - temp - 4),
             temp + 4);
    check(cli(h, idtext, out, sizeof out) == 0, "%s", idtext);
    check(status_of(h, "GET", "/v1/experiments", temp, NULL) == 401, "CLI revocation: 401 at once");
    check(cli(h, "token revoke 999999", out, sizeof out) == 2, "revoking an unknown token");

    /* expiry */
    new_token(h, "alpha", "read", "--expires 1s", temp, sizeof temp);
    check(status_of(h, "GET", "/v1/experiments", temp, NULL) == 200, "a token before its expiry");
    sleep(2);
    check(status_of(h, "GET", "/v1/experiments", temp, NULL) == 401, "an expired token: 401");
    check(cli(h, "token create --tenant alpha --scope read --expires forever", out, sizeof out) == 2,
          "--expires forever: usage error");
}

/* --- the isolation matrix ----------------------------------------------- */

/* the owner's expected status per operation: tests/security_matrix.h */

/* A step graph for the simulation routes (uploaded once before the matrix:
 * the same bytes again answer 200). */
static const char sim_graph[] =
    "{\"steps\":[{\"ops\":[{\"id\":\"w\",\"resource\":\"downlink\",\"bytes\":1000},"
    "{\"id\":\"f\",\"resource\":\"worker\",\"duration\":0.01,\"deps\":[\"w\"]}]}]}";

/* A simulation of alpha with sim_graph and one run: its id and the run's. */
static long create_simulation(harness *h, const char *name, long *run)
{
    harness_response r;
    char doc[128], path[96];
    snprintf(doc, sizeof doc, "{\"name\":\"%s\"}", name);
    call(h, "POST", "/v1/simulations", alpha_write, doc, &r);
    json_t *d = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    check(r.status == 201 && id > 0, "create simulation %s: %d", name, r.status);
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", id);
    call(h, "POST", path, alpha_write, sim_graph, &r);
    check(r.status == 201, "simulation profile: %d", r.status);
    harness_response_free(&r);
    if (run) {
        snprintf(path, sizeof path, "/v1/simulations/%ld/runs", id);
        call(h, "POST", path, alpha_write, "{\"workers\":1,\"bandwidth\":\"1Gbit\",\"steps\":1}",
             &r);
        d = harness_json(&r);
        *run = (long)json_integer_value(json_object_get(d, "id"));
        json_decref(d);
        check(r.status == 201 && *run > 0, "simulation run: %d", r.status);
        harness_response_free(&r);
    }
    return id;
}

static void test_matrix(harness *h)
{
    long exp = create_experiment(h, alpha_write, "alpha-matrix");
    long job = upload_examples(h, alpha_write, exp);
    long sim_run = 0, sim = create_simulation(h, "alpha-sim", &sim_run);
    check(job > 0 && wait_job(h, alpha_read, job), "the matrix experiment's refit finishes");
    char *profile;
    size_t plen;
    profile = harness_read_file("examples/profile-ranks-2.json", &plen); /* a duplicate: 200 */
    json_error_t je;
    json_t *doc = json_loadb(api_openapi_json, api_openapi_json_len, 0, &je);
    json_t *paths = json_object_get(doc, "paths");
    size_t nroutes;
    const api_route *routes = api_routes(&nroutes);
    const char *path;
    json_t *item;
    int cells = 0, ops = 0, serial = 0;
    json_object_foreach(paths, path, item)
    {
        const char *m;
        json_t *op;
        json_object_foreach(item, m, op)
        {
            if (strcmp(m, "get") && strcmp(m, "post") && strcmp(m, "delete") && strcmp(m, "put") &&
                strcmp(m, "patch"))
                continue;
            char method[8];
            for (size_t i = 0; i <= strlen(m); i++)
                method[i] = (char)(m[i] >= 'a' && m[i] <= 'z' ? m[i] - 32 : m[i]);
            ops++;
            int e = -1;
            for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
                if (!strcmp(expect[i].method, method) && !strcmp(expect[i].path, path))
                    e = (int)i;
            check(e >= 0, "%s %s has no entry in the isolation matrix's table", method, path);
            const api_route *route = NULL;
            for (size_t i = 0; i < nroutes; i++)
                if (!strcmp(routes[i].method, method) && !strcmp(routes[i].pattern, path))
                    route = &routes[i];
            if (e < 0 || !route)
                continue;
            const char *sname = json_string_value(json_object_get(op, "x-perfcast-scope"));
            int scope = sname ? store_scope_from_name(sname) : 0;
            check(scope == route->scope, "%s %s: openapi.json says scope %s, the router %s", method,
                  path, sname ? sname : "(open)", store_scope_name(route->scope));
            check(!strncmp(path, "/v1/", 4) == !!route->scope, "%s %s: every /v1 route, and only those, needs a token",
                  method, path);
            static const char *const who[] = {"no token", "beta admin", "alpha read", "alpha write",
                                              "alpha admin"};
            const char *tokens[] = {NULL, beta_admin, alpha_read, alpha_write, alpha_admin};
            int scopes[] = {0, STORE_SCOPE_ADMIN, STORE_SCOPE_READ, STORE_SCOPE_WRITE,
                            STORE_SCOPE_ADMIN};
            for (int c = 0; c < 5; c++) {
                /* fresh victims for destructive operations */
                long id = exp;
                if (route->flags & API_ROUTE_JOB)
                    id = job;
                if (route->flags & API_ROUTE_SIMULATION)
                    id = sim;
                if (!strcmp(method, "DELETE") && (route->flags & API_ROUTE_SIMULATION)) {
                    char name[64];
                    snprintf(name, sizeof name, "sim-victim-%d", ++serial);
                    id = create_simulation(h, name, NULL);
                }
                if (!strcmp(method, "DELETE") && (route->flags & API_ROUTE_EXPERIMENT)) {
                    char name[64];
                    snprintf(name, sizeof name, "victim-%d", ++serial);
                    id = create_experiment(h, alpha_write, name);
                }
                long pid = 0; /* a profile of the victim, for .../profiles/{pid} */
                if (strstr(path, "{pid}")) {
                    char ppath[96];
                    snprintf(ppath, sizeof ppath, "/v1/experiments/%ld/profiles", id);
                    harness_response pr;
                    call(h, "POST", ppath, alpha_write, profile, &pr);
                    json_t *pd = harness_json(&pr);
                    pid = (long)json_integer_value(json_object_get(pd, "profile"));
                    json_decref(pd);
                    harness_response_free(&pr);
                }
                if (!strcmp(path, "/v1/tokens/{id}")) {
                    harness_response tr;
                    call(h, "POST", "/v1/tokens", alpha_admin, "{\"scope\":\"read\"}", &tr);
                    json_t *td = harness_json(&tr);
                    id = (long)json_integer_value(json_object_get(td, "id"));
                    json_decref(td);
                    harness_response_free(&tr);
                }
                char url[512], idtext[32], name_doc[1024];
                snprintf(idtext, sizeof idtext, "%ld", id);
                const char *brace = strstr(path, "{id}");
                if (brace)
                    snprintf(url, sizeof url, "%.*s%s%s%s", (int)(brace - path), path, idtext,
                             brace + 4, expect[e].query);
                else
                    snprintf(url, sizeof url, "%s%s", path, expect[e].query);
                char *run_brace = strstr(url, "{run}");
                if (run_brace) {
                    char rest[256];
                    snprintf(rest, sizeof rest, "%s", run_brace + 5);
                    snprintf(run_brace, sizeof url - (size_t)(run_brace - url), "%ld%s", sim_run,
                             rest);
                }
                char *pbrace = strstr(url, "{pid}");
                if (pbrace) {
                    char tail[256];
                    snprintf(tail, sizeof tail, "%s", pbrace + 5);
                    snprintf(pbrace, sizeof url - (size_t)(pbrace - url), "%ld%s", pid, tail);
                }
                const char *body = expect[e].body;
                size_t blen = body ? strlen(body) : 0;
                if (body && !strcmp(body, "*create*")) {
                    snprintf(name_doc, sizeof name_doc,
                             "{\"name\":\"matrix-%d\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                             "\"training\":{\"train_samples\":50000,\"validation_samples\":0,"
                             "\"batch_size\":256,\"data_parallel\":\"ranks\",\"model_parallel\":\"1\","
                             "\"warmup_steps\":1}}",
                             ++serial);
                    body = name_doc;
                    blen = strlen(body);
                } else if (body && !strcmp(body, "*simcreate*")) {
                    snprintf(name_doc, sizeof name_doc, "{\"name\":\"sim-matrix-%d\"}", ++serial);
                    body = name_doc;
                    blen = strlen(body);
                } else if (body && !strcmp(body, "*simgraph*")) {
                    body = sim_graph;
                    blen = strlen(body);
                } else if (body && !strcmp(body, "*profile*")) {
                    body = profile;
                    blen = plen;
                }
                int want;
                if (!route->scope)
                    want = expect[e].status;
                else if (!tokens[c])
                    want = 401;
                else if (scopes[c] < route->scope)
                    want = 403;
                else if (c == 1 && (route->flags & (API_ROUTE_EXPERIMENT | API_ROUTE_JOB |
                                                    API_ROUTE_SIMULATION)))
                    want = 404;
                else if (c == 1 && !strcmp(path, "/v1/tokens/{id}"))
                    want = 404; /* alpha's token, beta's revoke */
                else
                    want = expect[e].status;
                char hdr[256] = "";
                if (tokens[c])
                    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", tokens[c]);
                harness_response r;
                harness_request(h, method, url, *hdr ? hdr : NULL, body, blen, &r);
                check(r.status == want, "%s %s as %s: %d, want %d (%.200s)", method, url, who[c],
                      r.status, want, r.body ? r.body : "");
                if (want == 401) {
                    char www[128] = "";
                    check(harness_header(&r, "WWW-Authenticate", www, sizeof www) &&
                              !strncmp(www, "Bearer", 6),
                          "%s %s: 401 without WWW-Authenticate: Bearer", method, url);
                }
                if (c == 1 && want == 200 && r.body)
                    check(!strstr(r.body, "alpha-matrix"), "%s %s: beta sees alpha's experiment",
                          method, url);
                harness_response_free(&r);
                if (c == 4 && want >= 200 && want < 300 && strcmp(method, "DELETE")) {
                    /* every route names a query parameter it does not take */
                    char bogus[600];
                    snprintf(bogus, sizeof bogus, "%s%czz_bogus=1", url, strchr(url, '?') ? '&' : '?');
                    harness_request(h, method, bogus, hdr, body, blen, &r);
                    check(r.status == 400 && r.body && strstr(r.body, "zz_bogus"),
                          "%s %s: an unknown query parameter gives %d (%.200s)", method, bogus,
                          r.status, r.body ? r.body : "");
                    harness_response_free(&r);
                }
                cells++;
            }
        }
    }
    check(ops == (int)nroutes, "openapi.json has %d operations, the router %zu", ops, nroutes);
    check(cells == 5 * ops, "%d cells", cells);
    json_decref(doc);
    free(profile);
    /* beta's list does not show alpha's experiments, nor alpha's beta's */
    long bexp = create_experiment(h, beta_admin, "alpha-matrix"); /* names are per tenant */
    check(bexp > 0 && bexp != exp, "beta may use a name alpha uses");
    harness_response r;
    call(h, "GET", "/v1/experiments?limit=1000", beta_admin, NULL, &r);
    json_t *list = harness_json(&r);
    size_t i;
    json_t *x;
    int theirs = 0, mine = 0;
    json_array_foreach(json_object_get(list, "experiments"), i, x)
    {
        long xid = (long)json_integer_value(json_object_get(x, "id"));
        theirs += xid == exp;
        mine += xid == bexp;
    }
    check(r.status == 200 && !theirs && mine == 1, "beta lists only its own: %s", r.body);
    /* a cursor naming alpha's model set, on beta's own experiment */
    char q[128], set[32];
    snprintf(q, sizeof q, "SELECT max(id) FROM model_sets WHERE experiment_id = %ld", exp);
    harness_sql(h, q, set, sizeof set);
    check(atol(set) > 0, "alpha has a model set");
    static const char *const lists[] = {"models", "measurements"};
    for (int k = 0; k < 2; k++) {
        char url[160];
        snprintf(url, sizeof url, "/v1/experiments/%ld/%s?cursor=%s.0", bexp, lists[k], set);
        harness_response cr;
        call(h, "GET", url, beta_admin, NULL, &cr);
        check(cr.status == 400 && cr.body && !strstr(cr.body, "kernel") && !strstr(cr.body, "ncclKernel") &&
                  !strstr(cr.body, "volta"),
              "%s with another tenant's model set as cursor: %d %.200s", lists[k], cr.status,
              cr.body ? cr.body : "");
        harness_response_free(&cr);
        snprintf(url, sizeof url, "/v1/experiments/%ld/%s?cursor=%s.0", exp, lists[k], set);
        check(status_of(h, "GET", url, alpha_read, NULL) == 200, "%s: the owner's own cursor works",
              lists[k]);
    }
    json_decref(list);
    harness_response_free(&r);
}

/* --- injection and traversal -------------------------------------------- */

static void test_injection(harness *h)
{
    static const char *const names[] = {
        "O'Brien \\\"quoted\\\"", "'; DROP TABLE experiments; --", "../../etc/passwd",
        "..%2F..%2Fetc", "Robert'); DELETE FROM tokens; --", "\\u00e9t\\u00e9 \\u2603",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        long id = create_experiment(h, alpha_write, names[i]);
        char path[64];
        snprintf(path, sizeof path, "/v1/experiments/%ld", id);
        harness_response r;
        call(h, "GET", path, alpha_read, NULL, &r);
        json_t *d = harness_json(&r);
        json_t *want = json_loads("\"x\"", JSON_DECODE_ANY, NULL);
        char quoted[256];
        snprintf(quoted, sizeof quoted, "\"%s\"", names[i]);
        json_decref(want);
        want = json_loads(quoted, JSON_DECODE_ANY, NULL);
        check(r.status == 200 && json_equal(json_object_get(d, "name"), want),
              "name %s returned literally: %s", names[i], r.body);
        json_decref(want);
        json_decref(d);
        harness_response_free(&r);
    }
    char n[32];
    harness_sql(h, "SELECT count(*) FROM tokens", n, sizeof n);
    check(atoi(n) > 0, "tokens survive");
    /* a NUL in a name: refused, not truncated */
    int s = status_of(h, "POST", "/v1/experiments", alpha_write,
                      "{\"name\":\"nul\\u0000byte\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"}");
    check(s == 400 || s == 201, "a NUL in a name: %d (400 or stored literally)", s);
    /* a 1 MB name */
    size_t big = 1 << 20;
    char *doc = malloc(big + 256);
    int k = snprintf(doc, 256, "{\"name\":\"");
    memset(doc + k, 'x', big);
    snprintf(doc + k + big, 200, "\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\"}");
    s = status_of(h, "POST", "/v1/experiments", alpha_write, doc);
    check(s == 400 || s == 201, "a 1 MB name: %d, never 5xx", s);
    free(doc);
    /* traversal and injection in paths */
    static const char *const paths[] = {"/v1/experiments/..%2F..%2Fetc%2Fpasswd",
                                        "/v1/experiments/1%27%20OR%201=1",
                                        "/v1/experiments/%00", "/v1/experiments/1;DROP",
                                        "/v1/jobs/-1", "/v1/experiments/99999999999999999999"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        s = status_of(h, "GET", paths[i], alpha_read, NULL);
        check(s == 404 || s == 400, "%s: %d", paths[i], s);
    }
    /* and in query parameters: refused or not found, never executed, never a 5xx */
    long exp = create_experiment(h, alpha_write, "query-injection");
    static const char *const queries[] = {
        "models?metric=%27%3B%20DROP%20TABLE%20models%3B--", "models?callpath=..%2F..%2F",
        "predict?ranks=1%27%20OR%20%271%27=%271", "measurements?name=%00",
        "scaling?values=1,2%27", "bottlenecks?at=ranks:%27",
        "imbalance?metric=x%22%7D", "cost?ranks=1e400"};
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
        char url[256];
        snprintf(url, sizeof url, "/v1/experiments/%ld/%s", exp, queries[i]);
        s = status_of(h, "GET", url, alpha_read, NULL);
        check(s >= 200 && s < 500, "%s: %d", url, s);
    }
    harness_sql(h, "SELECT count(*) FROM models", n, sizeof n);
    check(*n >= '0' && *n <= '9', "the models table is still there: %s", n);
}

/* --- hostile clients ---------------------------------------------------- */

static int connect_to(harness *h)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)harness_port(h))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static void test_rate_limit(harness *h)
{
    /* this server: 50/s, burst 100 (the defaults) */
    int limited = 0, served = 0;
    double t0 = harness_now();
    char retry[32] = "";
    for (int i = 0; i < 10000 && harness_now() - t0 < 60; i++) {
        harness_response r;
        call(h, "GET", "/v1/experiments?limit=1", alpha_read, NULL, &r);
        if (r.status == 429) {
            limited++;
            if (!*retry)
                harness_header(&r, "Retry-After", retry, sizeof retry);
        } else if (r.status == 200) {
            served++;
        }
        harness_response_free(&r);
        if (i % 1000 == 999)
            check(status_of(h, "GET", "/v1/experiments?limit=1", beta_admin, NULL) == 200,
                  "another token is served while the first is limited (%d)", i + 1);
    }
    double secs = harness_now() - t0;
    check(limited > 0 && atoi(retry) >= 1, "over the rate: %d answered 429, Retry-After %s",
          limited, retry);
    check(served <= 100 + (int)(secs * 50) + 5, "served %d in %.1f s: at most burst + rate", served,
          secs);
    check(status_of(h, "GET", "/v1/experiments?limit=1", beta_admin, NULL) == 200,
          "another token is served");
}

static void test_limits(harness *h)
{
    char path[96];
    long exp = create_experiment(h, alpha_write, "limits");
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    /* 10 GB declared: refused before reading */
    char req[512];
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                     "Content-Length: 10737418240\r\nContent-Type: application/json\r\n\r\n{",
                     path, alpha_write);
    harness_response r;
    double t0 = harness_now();
    harness_raw(h, req, (size_t)n, &r);
    check(r.status == 413 && harness_now() - t0 < 2, "10 GB Content-Length: %d in %.2f s", r.status,
          harness_now() - t0);
    harness_response_free(&r);

    /* an upload cut off halfway stores nothing */
    size_t plen;
    char *profile = harness_read_file("examples/profile-ranks-4.json", &plen);
    char before[32], after[32];
    harness_sql(h, "SELECT count(*) FROM profiles", before, sizeof before);
    int fd = connect_to(h);
    n = snprintf(req, sizeof req,
                 "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                 "Content-Length: %zu\r\nContent-Type: application/json\r\n\r\n",
                 path, alpha_write, plen);
    check(fd >= 0 && write(fd, req, (size_t)n) == n && write(fd, profile, plen / 2) == (ssize_t)(plen / 2),
          "half an upload sent");
    close(fd);
    usleep(300000);
    harness_sql(h, "SELECT count(*) FROM profiles", after, sizeof after);
    check(!strcmp(before, after), "an aborted upload stores nothing: %s -> %s", before, after);
    free(profile);

    /* a body over the non-upload limit */
    size_t big = (16u << 20) + 1;
    char *blob = malloc(big);
    memset(blob, ' ', big);
    harness_request(h, "POST", "/v1/experiments", "Authorization: Bearer x\r\n", blob, big, &r);
    check(r.status == 413, "a 16 MiB + 1 experiment document: %d", r.status);
    harness_response_free(&r);
    free(blob);

    /* a header block over the connection's memory */
    size_t hb = 64 << 10;
    char *hdr = malloc(hb + 64);
    int k = snprintf(hdr, 64, "X-Big: ");
    memset(hdr + k, 'a', hb);
    memcpy(hdr + k + hb, "\r\n", 3);
    harness_request(h, "GET", "/health", hdr, NULL, 0, &r);
    check(r.status == 431, "a 64 KiB header: %d, want 431", r.status);
    harness_response_free(&r);
    free(hdr);

    /* a 32 KiB query string */
    size_t qn = 32 << 10;
    char *url = malloc(qn + 32);
    k = snprintf(url, 32, "/health?x=");
    memset(url + k, 'q', qn);
    url[k + qn] = '\0';
    harness_request(h, "GET", url, NULL, NULL, 0, &r);
    check(r.status == 414, "a 32 KiB query: %d, want 414", r.status);
    harness_response_free(&r);
    free(url);
    check(status_of(h, "GET", "/health", NULL, NULL) == 200, "the server lives on");

    /* deep JSON */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    int s = status_of(h, "POST", "/v1/fit", alpha_write, deep);
    check(s == 400, "100,000 nested arrays: %d", s);
    free(deep);
}

/* Uploads of one tenant at once, over PERFCAST_MAX_UPLOADS (1 on this
 * server): a slow (large) profile sent by several threads together. */
typedef struct upload_job {
    harness *h;
    const char *path, *body;
    size_t len;
    int status;
    char retry[16];
} upload_job;

static void *upload_thread(void *arg)
{
    upload_job *u = arg;
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", alpha_write);
    harness_response r;
    harness_request(u->h, "POST", u->path, hdr, u->body, u->len, &r);
    u->status = r.status;
    harness_header(&r, "Retry-After", u->retry, sizeof u->retry);
    harness_response_free(&r);
    return NULL;
}

static void test_upload_concurrency(harness *h)
{
    long exp = create_experiment(h, alpha_write, "concurrent-uploads");
    /* uploads of earlier tests cut off by the slow-client deadlines may
     * still hold the tenant's one slot: wait until a small upload is taken */
    {
        char probe_path[96], hdr[256];
        snprintf(probe_path, sizeof probe_path, "/v1/experiments/%ld/profiles?refit=defer", exp);
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", alpha_write);
        static const char probe[] =
            "{\"point\":{\"ranks\":4},\"repetition\":1,\"ranks\":[{\"rank\":0,\"steps\":[{"
            "\"phase\":\"train\",\"callpaths\":[{\"name\":\"k\",\"category\":\"comp\","
            "\"metrics\":{\"time\":1}}]}]}]}";
        for (int i = 0; i < 300; i++) {
            harness_response pr;
            harness_request(h, "POST", probe_path, hdr, probe, strlen(probe), &pr);
            int busy = pr.status == 429;
            harness_response_free(&pr);
            if (!busy)
                break;
            harness_sleep(0.1);
        }
    }
    size_t cap = 8 << 20, n = 0;
    char *body = malloc(cap);
    n += (size_t)snprintf(body + n, cap - n,
                          "{\"point\":{\"ranks\":2},\"repetition\":1,\"ranks\":[{\"rank\":0,"
                          "\"steps\":[{\"phase\":\"train\",\"callpaths\":[");
    for (int i = 0; i < 40000 && n + 200 < cap; i++)
        n += (size_t)snprintf(body + n, cap - n,
                              "%s{\"name\":\"kernel_%d\",\"category\":\"comp\",\"metrics\":"
                              "{\"time\":%d.5,\"visits\":3}}",
                              i ? "," : "", i, i % 97 + 1);
    n += (size_t)snprintf(body + n, cap - n, "]}]}]}");
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    enum { T = 8 };
    upload_job jobs[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (upload_job){.h = h, .path = path, .body = body, .len = n};
        pthread_create(&th[i], NULL, upload_thread, &jobs[i]);
    }
    int refused = 0, stored = 0, other = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].status == 429 && atoi(jobs[i].retry) >= 1)
            refused++;
        else if (jobs[i].status == 202 || jobs[i].status == 200)
            stored++;
        else
            other++;
    }
    printf("# %d concurrent uploads of one tenant, 1 allowed: %d answered 429, %d taken\n", T,
           refused, stored);
    check(refused > 0 && stored > 0 && !other,
          "%d uploads of one tenant at once, 1 allowed: %d refused with 429, %d taken, %d else",
          T, refused, stored, other);
    check(status_of(h, "GET", "/v1/experiments?limit=1", beta_admin, NULL) == 200,
          "another tenant is served meanwhile");
    free(body);
    /* one upload after another never finds the slot taken: it is free
     * before the answer to the previous one leaves */
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", alpha_write);
    int sequential_refused = 0;
    for (int i = 0; i < 30; i++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"point\":{\"ranks\":8},\"repetition\":%d,\"ranks\":[{\"rank\":0,\"steps\":[{"
                 "\"phase\":\"train\",\"callpaths\":[{\"name\":\"k\",\"category\":\"comp\","
                 "\"metrics\":{\"time\":1}}]}]}]}",
                 i + 1);
        harness_response r;
        harness_request(h, "POST", path, hdr, doc, strlen(doc), &r);
        sequential_refused += r.status == 429;
        harness_response_free(&r);
    }
    check(!sequential_refused, "30 uploads one after another, 1 allowed at once: %d refused",
          sequential_refused);
}

/* 200 connections trickling one byte a second do not slow /health down. */
static void test_slow_clients(harness *h)
{
    enum { N = 200 };
    int fds[N], open_n = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = connect_to(h);
        open_n += fds[i] >= 0;
    }
    check(open_n == N, "%d slow connections open", open_n);
    const char *head = "POST /v1/fit HTTP/1.1\r\nHost: x\r\n";
    double worst = 0;
    for (int sec = 0; sec < 3; sec++) {
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && write(fds[i], head + sec, 1) != 1) {
                close(fds[i]);
                fds[i] = -1;
            }
        for (int k = 0; k < 5; k++) {
            double t0 = harness_now();
            int st = status_of(h, "GET", "/health", NULL, NULL);
            double dt = harness_now() - t0;
            check(st == 200, "/health among slow clients: %d", st);
            if (dt > worst)
                worst = dt;
            usleep(200000);
        }
    }
    check(worst < 0.1, "GET /health took at most %.1f ms among %d slow clients", worst * 1e3, N);
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* the server forgets them once it has seen them close: until then new
     * connections from this address may be over PERFCAST_MAX_CONNECTIONS_PER_ADDRESS */
    check(harness_wait_status(h, "/v1/experiments", 401, 10),
          "connections from this address taken again after the slow ones closed");
}

static void test_audit(harness *h)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "grep '\"level\":\"audit\"' %s/server.log | grep -q '\"profile_sha256\":\"[0-9a-f]\\{64\\}\"'",
             harness_dir(h));
    check(system(cmd) == 0, "an audit line names an upload's profile sha256");
    snprintf(cmd, sizeof cmd, "grep -c 'pcf_[0-9]*_[0-9a-f]\\{64\\}' %s/server.log >/dev/null",
             harness_dir(h));
    check(system(cmd) != 0, "no token text in the server log");
    snprintf(cmd, sizeof cmd,
             "grep '\"level\":\"audit\"' %s/server.log | grep -q '\"route\":\"/v1/experiments\".*\"tenant\":[0-9]*.*\"token\":[0-9]*.*\"status\":201'",
             harness_dir(h));
    check(system(cmd) == 0, "an audit line per write: tenant, token id, route, status");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* the server may close a slow connection under a write */
    const char *env[] = {"PERFCAST_DB_POOL=8", "PERFCAST_HTTP_TIMEOUT=5", "PERFCAST_MAX_UPLOADS=1",
                         /* the concurrent uploads are slow ones of 40,000 callpaths */
                         "PERFCAST_MAX_CALLPATHS=50000", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness: PostgreSQL and the server did not start");
    if (!h)
        return check_summary();
    test_open_mode(h);
    char id[32];
    harness_sql(h, "SELECT id FROM experiments WHERE name = 'open-mode-exp'", id, sizeof id);
    test_tokens(h, atol(id));
    test_matrix(h);
    test_injection(h);
    test_limits(h);
    test_slow_clients(h);
    test_upload_concurrency(h);
    test_audit(h);
    test_rate_limit(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
