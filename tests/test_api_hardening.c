/*
 * test_api_hardening.c — the service against hostile and careless clients,
 * each attack reproduced at a scale a test can afford, over real HTTP
 * against a real server and PostgreSQL (tests/harness.h). Behaviour is
 * asserted, not timings (bench/bench_hostile.c measures those):
 *
 *   - refused from the headers: uploads declaring 64 MiB with no token, an
 *     invalid token or a read-only token are answered 401/403 while the
 *     client has sent almost none of the body, and the connection closes;
 *   - invalid tokens from one address are limited (429 past the burst);
 *   - slow clients: a header block trickling in is cut at its deadline, a
 *     body trickling in likewise; connections of one address beyond the
 *     cap get 429 except for /health; 200 slow connections against a table
 *     of 64 leave /health answering;
 *   - conflicting data: other bytes at a stored coordinate, repetition and
 *     ranks get 409 naming them; the same bytes stay a no-op;
 *     ?replace=true and DELETE .../profiles/{pid} replace on purpose;
 *   - caps: callpaths per upload and per experiment, events per trace,
 *     answered 413 naming the variable;
 *   - deleting an experiment during its refit cancels the job quietly;
 *   - creation refuses degrees and cost formulas that are never usable;
 *     POST /v1/tokens refuses unknown fields; a gzip body of whitespace says
 *     it holds no JSON value.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/check.h"
#include "tests/harness.h"

#define HEADER_TIMEOUT 2  /* PERFCAST_HEADER_TIMEOUT of this server */
#define MAX_CONNECTIONS 64
#define PER_ADDRESS 16
#define MAX_CALLPATHS 50
#define MAX_EXP_CALLPATHS 80
#define MAX_EVENTS 1000

static const char *bin(void)
{
    return getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
}

/* A TCP connection to the server from source address src ("127.0.0.N"). */
static int connect_from(harness *h, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in b = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &b.sin_addr);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)harness_port(h))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&b, sizeof b) || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads what the server sends within seconds into buf (NUL-terminated).
 * Returns 1 when the server closed the connection, 0 when it is still open
 * at the end, -1 on a reset. */
static int read_until_close(int fd, char *buf, size_t cap, double seconds)
{
    size_t n = 0;
    double t0 = harness_now();
    buf[0] = '\0';
    while (harness_now() - t0 < seconds) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        char tmp[4096];
        ssize_t got = recv(fd, tmp, sizeof tmp, 0);
        if (got == 0)
            return 1;
        if (got < 0)
            return errno == ECONNRESET ? -1 : 1;
        size_t k = (size_t)got < cap - 1 - n ? (size_t)got : cap - 1 - n;
        memcpy(buf + n, tmp, k);
        n += k;
        buf[n] = '\0';
    }
    return 0;
}

static int status_in(const char *text)
{
    int st = 0;
    return sscanf(text, "HTTP/1.1 %d", &st) == 1 ? st : 0;
}

static void call(harness *h, const char *method, const char *path, const char *token,
                 const char *body, harness_response *r)
{
    char hdr[256] = "";
    if (token)
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", token);
    harness_request(h, method, path, *hdr ? hdr : NULL, body, body ? strlen(body) : 0, r);
}

static long create(harness *h, const char *name, const char *training_extra, const char *cost)
{
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":50000,\"batch_size\":256%s},"
             "\"cost\":%s}",
             name, training_extra ? training_extra : ",\"data_parallel\":\"ranks\"",
             cost ? cost : "{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}");
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    json_t *d = harness_json(&r);
    long id = r.status == 201 ? (long)json_integer_value(json_object_get(d, "id")) : 0;
    json_decref(d);
    harness_response_free(&r);
    return id;
}

/* A perfcast JSON profile at ranks=x, repetition rep, ranks 0..nranks-1,
 * ncp callpaths named prefix_k, every value scaled by scale. */
static char *profile(int x, int rep, int nranks, int ncp, const char *prefix, double scale)
{
    size_t cap = 512 + (size_t)nranks * (size_t)ncp * 160;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%d},\"repetition\":%d,\"ranks\":[",
                                x, rep);
    for (int r = 0; r < nranks; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[{\"phase\":\"train\","
                              "\"callpaths\":[", r ? "," : "", r);
        for (int k = 0; k < ncp; k++)
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s{\"name\":\"%s_%d\",\"category\":\"comp\",\"metrics\":"
                                  "{\"time\":%.6f}}",
                                  k ? "," : "", prefix, k, scale * 0.001 * (k + 1));
        n += (size_t)snprintf(b + n, cap - n, "]}]}");
    }
    snprintf(b + n, cap - n, "]}");
    return b;
}

static void upload(harness *h, long exp, const char *query, const char *body, harness_response *r)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query ? query : "");
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body), r);
}

/* ---- conflicting data --------------------------------------------------- */

static void test_conflicts(harness *h)
{
    long exp = create(h, "conflicts", NULL, NULL);
    check(exp > 0, "experiment for the conflict tests");
    char *first = profile(2, 1, 2, 3, "k", 1.0), *other = profile(2, 1, 2, 3, "k", 200.0);
    harness_response r;
    upload(h, exp, NULL, first, &r);
    json_t *j = harness_json(&r);
    long pid = (long)json_integer_value(json_object_get(j, "profile"));
    check(r.status == 202 && pid > 0, "first upload: %d", r.status);
    json_decref(j);
    harness_response_free(&r);

    /* the same bytes: the idempotent no-op */
    upload(h, exp, NULL, first, &r);
    j = harness_json(&r);
    check(r.status == 200 && json_is_true(json_object_get(j, "duplicate")) &&
              json_integer_value(json_object_get(j, "profile")) == pid,
          "same bytes again: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);

    /* other numbers at ranks=2, repetition 1, ranks 0 and 1: 409 naming them */
    upload(h, exp, NULL, other, &r);
    j = harness_json(&r);
    json_t *ranks = json_object_get(j, "ranks");
    check(r.status == 409 && json_real_value(json_object_get(json_object_get(j, "point"), "ranks")) == 2 &&
              json_integer_value(json_object_get(j, "repetition")) == 1 &&
              json_array_size(ranks) == 2 && json_integer_value(json_array_get(ranks, 0)) == 0 &&
              json_integer_value(json_array_get(ranks, 1)) == 1 &&
              json_integer_value(json_object_get(j, "profile")) == pid && r.body &&
              strstr(r.body, "ranks=2") && strstr(r.body, "repetition 1") &&
              strstr(r.body, "ranks 0,1"),
          "other bytes at a stored coordinate: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp) == 1,
          "the conflicting upload stored nothing");

    /* one rank that overlaps conflicts too; another repetition or rank does not */
    char *rank1 = profile(2, 1, 2, 3, "k", 3.0);
    char *p = strstr(rank1, "{\"rank\":0"); /* drop rank 0: keep "ranks":[{rank 1}] */
    char *q = strstr(rank1, ",{\"rank\":1");
    memmove(p, q + 1, strlen(q + 1) + 1);
    upload(h, exp, NULL, rank1, &r);
    check(r.status == 409 && r.body && strstr(r.body, "ranks 1 "), "rank 1 alone conflicts: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);
    upload(h, exp, "?repetition=2", other, &r);
    check(r.status == 400, "the body says repetition 1, the query 2: %d", r.status);
    harness_response_free(&r);
    char *rep2 = profile(2, 2, 2, 3, "k", 200.0);
    upload(h, exp, NULL, rep2, &r);
    check(r.status == 202, "the same numbers as repetition 2: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);

    /* replace on purpose */
    upload(h, exp, "?replace=true", other, &r);
    j = harness_json(&r);
    long replaced_by = (long)json_integer_value(json_object_get(j, "profile"));
    check(r.status == 202 && json_integer_value(json_object_get(j, "replaced")) == 1 &&
              replaced_by != pid,
          "?replace=true: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id = %ld", pid) == 0,
          "the replaced profile is gone");
    upload(h, exp, "?replace=maybe", other, &r);
    check(r.status == 400 && r.body && strstr(r.body, "replace"), "?replace=maybe: %d", r.status);
    harness_response_free(&r);

    /* DELETE one, then its coordinate takes other bytes */
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld", exp, replaced_by);
    harness_delete(h, path, &r);
    j = harness_json(&r);
    char loc[64] = "";
    harness_header(&r, "Location", loc, sizeof loc);
    check(r.status == 202 && json_is_true(json_object_get(j, "deleted")) &&
              json_integer_value(json_object_get(j, "job")) > 0 && !strncmp(loc, "/v1/jobs/", 9),
          "DELETE a profile: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    harness_delete(h, path, &r);
    check(r.status == 404, "DELETE it again: %d", r.status);
    harness_response_free(&r);
    upload(h, exp, NULL, first, &r);
    check(r.status == 202, "the first bytes again after the DELETE: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(first);
    free(other);
    free(rank1);
    free(rep2);
}

/* ---- caps ------------------------------------------------------------- */

/* A Kineto trace of n kernel events in one step, gzip'ed. */
static unsigned char *gzip_of(const char *text, size_t len, size_t *out_len)
{
    z_stream z = {0};
    size_t cap = len + len / 100 + 1024;
    unsigned char *out = malloc(cap);
    deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static void test_caps(harness *h)
{
    long exp = create(h, "caps", NULL, NULL);
    harness_response r;
    char *b = profile(2, 1, 1, MAX_CALLPATHS + 1, "a", 1.0);
    upload(h, exp, NULL, b, &r);
    check(r.status == 413 && r.body && strstr(r.body, "PERFCAST_MAX_CALLPATHS") &&
              strstr(r.body, "51 distinct callpaths") && strstr(r.body, "limit is 50"),
          "one callpath over the upload cap: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(b);
    b = profile(2, 1, 1, MAX_CALLPATHS, "a", 1.0);
    upload(h, exp, NULL, b, &r);
    check(r.status == 202, "just at the upload cap: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(b);
    /* 50 stored + 31 new names = 81 > 80 */
    b = profile(4, 1, 1, 31, "b", 1.0);
    upload(h, exp, NULL, b, &r);
    check(r.status == 413 && r.body && strstr(r.body, "PERFCAST_MAX_EXPERIMENT_CALLPATHS") &&
              strstr(r.body, "81"),
          "over the experiment's cap: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(b);
    b = profile(4, 1, 1, 30, "b", 1.0);
    upload(h, exp, NULL, b, &r);
    check(r.status == 202, "just at the experiment's cap: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(b);

    /* a gzip'ed trace of more events than the cap */
    size_t cap = 256 + (size_t)(MAX_EVENTS + 1) * 120, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, "{\"traceEvents\":[");
    for (int i = 0; i <= MAX_EVENTS; i++)
        n += (size_t)snprintf(t + n, cap - n,
                              "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":%d,"
                              "\"dur\":1,\"pid\":0,\"tid\":7}",
                              i ? "," : "", 10 * i);
    n += (size_t)snprintf(t + n, cap - n, "]}");
    size_t gzlen;
    unsigned char *gz = gzip_of(t, n, &gzlen);
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=8", exp);
    harness_request(h, "POST", path, "Content-Type: application/gzip\r\n", (const char *)gz, gzlen,
                    &r);
    check(r.status == 413 && r.body && strstr(r.body, "PERFCAST_MAX_TRACE_EVENTS") &&
              strstr(r.body, "1000"),
          "a trace of more events than the cap: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(gz);
    free(t);

    /* a gzip body of nothing but whitespace */
    size_t wlen = (size_t)9 << 20;
    char *ws = malloc(wlen);
    memset(ws, ' ', wlen);
    gz = gzip_of(ws, wlen, &gzlen);
    harness_request(h, "POST", path, "Content-Type: application/gzip\r\n", (const char *)gz, gzlen,
                    &r);
    check(r.status == 400 && r.body && strstr(r.body, "no JSON value"),
          "gzip of whitespace: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(gz);
    free(ws);
}

/* ---- creation-time checks ------------------------------------------------ */

static void test_creation(harness *h)
{
    static const struct {
        const char *training, *cost, *field;
    } bad[] = {
        {",\"data_parallel\":\"ranks/0\"", NULL, "training.data_parallel"},
        {",\"data_parallel\":\"ranks-ranks\"", NULL, "training.data_parallel"},
        {",\"data_parallel\":\"ranks\",\"model_parallel\":\"0*ranks\"", NULL,
         "training.model_parallel"},
        {NULL, "{\"cores_per_rank\":8,\"price_per_core_hour\":0.05,\"formula\":\"T/0\"}",
         "cost.formula"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "{\"name\":\"never-%zu\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":50000,\"batch_size\":256%s},\"cost\":%s}",
                 i, bad[i].training ? bad[i].training : ",\"data_parallel\":\"ranks\"",
                 bad[i].cost ? bad[i].cost : "{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}");
        harness_response r;
        harness_post(h, "/v1/experiments", doc, &r);
        json_t *j = harness_json(&r);
        const char *field = json_string_value(json_object_get(j, "field"));
        check(r.status == 400 && field && !strcmp(field, bad[i].field),
              "%s never usable: %d %s", bad[i].field, r.status, r.body ? r.body : "");
        json_decref(j);
        harness_response_free(&r);
    }
    /* usable ones still pass: a ratio, and a formula that divides by a parameter */
    check(create(h, "ratio-ok", ",\"data_parallel\":\"ranks/4\",\"model_parallel\":\"4\"",
                 "{\"cores_per_rank\":8,\"price_per_core_hour\":0.05,\"formula\":\"T*ranks/3600\"}") > 0,
          "ranks/4 x 4 and T*ranks/3600 are accepted");

    harness_response r;
    harness_post(h, "/v1/tokens", "{\"scope\":\"read\",\"tenant\":\"beta\"}", &r);
    json_t *j = harness_json(&r);
    const char *field = json_string_value(json_object_get(j, "field"));
    check(r.status == 400 && field && !strcmp(field, "tenant"),
          "POST /v1/tokens with an unknown field: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
}

/* ---- refused from the headers ------------------------------------------- */

/* Declares a body of declared bytes, sends only the first KiB, and reads
 * the answer: the status, or 0 when none came (the server waited for the
 * body). *closed: the server closed the connection afterwards. */
static int refused_early(harness *h, const char *path, const char *token, size_t declared,
                         int *closed)
{
    int fd = connect_from(h, "127.0.0.1");
    if (fd < 0)
        return -1;
    char head[512], auth[256] = "";
    if (token)
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    snprintf(head, sizeof head,
             "POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             path, auth, declared);
    char chunk[1024];
    memset(chunk, ' ', sizeof chunk);
    send_all(fd, head, strlen(head));
    send_all(fd, chunk, sizeof chunk);
    char buf[8192];
    int c = read_until_close(fd, buf, sizeof buf, 10);
    *closed = c != 0;
    close(fd);
    return status_in(buf);
}

typedef struct early_job {
    harness *h;
    const char *path;
    int status, closed;
} early_job;

static void *early_thread(void *arg)
{
    early_job *j = arg;
    j->status = refused_early(j->h, j->path, NULL, (size_t)64 << 20, &j->closed);
    return NULL;
}

static int cli_token(harness *h, const char *scope, char *out, size_t cap)
{
    char cmd[1024], file[300];
    snprintf(file, sizeof file, "%s/token.txt", harness_dir(h));
    snprintf(cmd, sizeof cmd,
             "env DATABASE_URL='%s' %s token create --tenant hardening --scope %s >%s 2>/dev/null",
             harness_database_url(h), bin(), scope, file);
    int rc = system(cmd);
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    while (n && out[n - 1] == '\n')
        out[--n] = '\0';
    return rc == 0 && !strncmp(out, "pcf_", 4) ? 0 : -1;
}

static void test_refused_from_headers(harness *h)
{
    char admin[128], reader[128];
    check(!cli_token(h, "admin", admin, sizeof admin) && !cli_token(h, "read", reader, sizeof reader),
          "tokens from the CLI: every request needs one from now on");
    /* an experiment of the tokens' tenant */
    harness_response r;
    const char *doc = "{\"name\":\"guarded\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                      "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                      "\"data_parallel\":\"ranks\"}}";
    call(h, "POST", "/v1/experiments", admin, doc, &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    check(r.status == 201 && exp > 0, "experiment of the tenant: %d", r.status);
    json_decref(j);
    harness_response_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=2", exp);

    /* six anonymous 64 MiB uploads at once: each answered 401 with 1 KiB sent */
    enum { N = 6 };
    early_job jobs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (early_job){.h = h, .path = path};
        pthread_create(&th[i], NULL, early_thread, &jobs[i]);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += jobs[i].status == 401 && jobs[i].closed;
    }
    check(ok == N, "%d of %d anonymous 64 MiB uploads answered 401 before their body, closed", ok,
          N);
    int closed = 0;
    int st = refused_early(h, path, "pcf_1_0000000000000000000000000000000000000000000000000000000000000000",
                           (size_t)64 << 20, &closed);
    check(st == 401 && closed, "an invalid token's 64 MiB upload: %d before its body", st);
    st = refused_early(h, path, reader, (size_t)64 << 20, &closed);
    check(st == 403 && closed, "a read token's 64 MiB upload: %d before its body", st);
    st = refused_early(h, "/v1/experiments/999999/profiles?ranks=2", admin, (size_t)64 << 20,
                       &closed);
    check(st == 404 && closed, "an upload to no experiment: %d before its body", st);
    /* over the non-upload routes' limit: 413 from Content-Length, as before */
    st = refused_early(h, "/v1/experiments", admin, (size_t)64 << 20, &closed);
    check(st == 413, "a 64 MiB experiment document: %d before its body", st);

    /* the admitted upload still works end to end (and is spooled: > 1 MiB) */
    char *b = profile(2, 1, 2, 3, "k", 1.0);
    size_t blen = strlen(b), padded = blen + ((size_t)3 << 20);
    char *big = malloc(padded + 1);
    memcpy(big, b, blen);
    memset(big + blen, ' ', padded - blen); /* trailing whitespace: still one JSON value */
    big[padded] = '\0';
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\nContent-Type: application/json\r\n",
             admin);
    harness_request(h, "POST", path, hdr, big, padded, &r);
    check(r.status == 202, "a 3 MiB authorised upload, spooled: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(big);
    free(b);

    /* invalid tokens from one address: limited past the burst (20) */
    int limited = 0, unauthorized = 0;
    for (int i = 0; i < 30; i++) {
        call(h, "GET", "/v1/experiments", "pcf_1_00", NULL, &r);
        limited += r.status == 429;
        unauthorized += r.status == 401;
        harness_response_free(&r);
    }
    check(limited >= 5 && unauthorized >= 15 && limited + unauthorized == 30,
          "30 invalid tokens from one address: %d answered 401, %d 429", unauthorized, limited);
}

/* ---- slow clients ------------------------------------------------------- */

static void test_slow_header_and_body(harness *h)
{
    /* one header byte every 0.25 s: the idle timeout (5 s) never fires, the
     * header deadline (2 s) does */
    int fd = connect_from(h, "127.0.0.30");
    const char *head = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    int cut = 0;
    double t0 = harness_now();
    for (size_t i = 0; fd >= 0 && i < strlen(head) && harness_now() - t0 < 4 * HEADER_TIMEOUT; i++) {
        if (send(fd, head + i, 1, MSG_NOSIGNAL) != 1) {
            cut = 1;
            break;
        }
        char c;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 250) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0) {
            cut = 1;
            break;
        }
    }
    check(cut, "a header block trickling in is cut at its deadline");
    if (fd >= 0)
        close(fd);

    /* a body trickling in at a byte a second: below 1 KiB/s, cut */
    fd = connect_from(h, "127.0.0.31");
    const char *post = "POST /v1/fit HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n";
    send_all(fd, post, strlen(post));
    cut = 0;
    t0 = harness_now();
    while (fd >= 0 && harness_now() - t0 < 6 * HEADER_TIMEOUT) {
        if (send(fd, " ", 1, MSG_NOSIGNAL) != 1) {
            cut = 1;
            break;
        }
        char c;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 500) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0) {
            cut = 1;
            break;
        }
    }
    check(cut, "a body trickling in below PERFCAST_MIN_BODY_RATE is cut");
    if (fd >= 0)
        close(fd);
}

static void test_per_address_cap(harness *h)
{
    int fds[PER_ADDRESS];
    for (int i = 0; i < PER_ADDRESS; i++)
        fds[i] = connect_from(h, "127.0.0.40");
    harness_sleep(0.2);
    /* the next one from that address: a probe is served, anything else 429 */
    const char *reqs[] = {"GET /v1/experiments HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                          "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"};
    int got[2] = {0, 0};
    char body[2][4096];
    for (int k = 0; k < 2; k++) {
        int fd = connect_from(h, "127.0.0.40");
        send_all(fd, reqs[k], strlen(reqs[k]));
        read_until_close(fd, body[k], sizeof body[k], 5);
        got[k] = status_in(body[k]);
        close(fd);
    }
    check(got[0] == 429 && strstr(body[0], "PERFCAST_MAX_CONNECTIONS_PER_ADDRESS"),
          "a 17th connection of one address: %d", got[0]);
    check(got[1] == 200, "a probe on a 17th connection of one address: %d", got[1]);
    /* another address is not affected */
    harness_response r;
    harness_get(h, "/v1/experiments?limit=1", &r);
    check(r.status != 429, "another address meanwhile: %d", r.status);
    harness_response_free(&r);
    for (int i = 0; i < PER_ADDRESS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void test_table_full(harness *h)
{
    /* 200 slow connections from 13 addresses (at most 16 each) against a
     * table of 64: /health keeps answering */
    enum { N = 200 };
    static int fds[N];
    int open_n = 0;
    for (int i = 0; i < N; i++) {
        char src[32];
        snprintf(src, sizeof src, "127.0.1.%d", 1 + i / PER_ADDRESS);
        fds[i] = connect_from(h, src);
        open_n += fds[i] >= 0;
    }
    check(open_n == N, "%d slow connections open (the kernel queues what the server has not taken)",
          open_n);
    const char *head = "POST /v1/fit HTTP/1.1\r\nHost: x\r\n";
    int answered = 0, probes = 0;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && send(fds[i], head + round, 1, MSG_NOSIGNAL) != 1) {
                close(fds[i]);
                fds[i] = -1;
            }
        harness_response r;
        harness_get(h, "/health", &r);
        probes++;
        answered += r.status == 200;
        harness_response_free(&r);
        harness_sleep(0.5);
    }
    check(answered == probes, "/health answered %d of %d probes among %d slow connections", answered,
          probes, N);
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* ---- deleting an experiment during its refit ------------------------------ */

static int log_has(harness *h, const char *text)
{
    char path[512], line[4096];
    snprintf(path, sizeof path, "%s/server.log", harness_dir(h));
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return found;
}

static void test_cancel(void)
{
    const char *env[] = {"PERFCAST_JOB_LEASE=3", "PERFCAST_WORKERS=1", "PERFCAST_DB_POOL=4", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness for the cancel test");
    if (!h)
        return;
    long exp = create(h, "deleted-while-fitting", NULL, NULL);
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int stored = 0;
    for (int x = 2; x <= 10; x += 2) {
        char *b = profile(x, 1, 1, 6000, "kernel", 1.0 + 0.1 * x);
        harness_response r;
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", b, strlen(b), &r);
        stored += r.status == 202;
        harness_response_free(&r);
        free(b);
    }
    check(stored == 5, "five profiles of 6,000 callpaths: %d stored", stored);
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_response r;
    harness_request(h, "POST", path, NULL, NULL, 0, &r);
    json_t *j = harness_json(&r);
    long job = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    harness_response_free(&r);
    int running = 0;
    for (int i = 0; i < 200 && !running; i++) {
        running = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE id = %ld AND state = 'running'",
                                   job) == 1;
        if (!running)
            harness_sleep(0.05);
    }
    check(running, "the refit runs");
    snprintf(path, sizeof path, "/v1/experiments/%ld", exp);
    harness_delete(h, path, &r);
    check(r.status == 204, "DELETE the experiment during its refit: %d", r.status);
    harness_response_free(&r);
    int cancelled = 0;
    double t0 = harness_now();
    while (!cancelled && harness_now() - t0 < 30) {
        cancelled = log_has(h, "\"msg\":\"job cancelled\"");
        if (!cancelled)
            harness_sleep(0.2);
    }
    check(cancelled, "the worker says the job is cancelled");
    check(!log_has(h, "job failed") && !log_has(h, "cannot record") &&
              !log_has(h, "cannot extend") && !log_has(h, "\"level\":\"error\""),
          "and logs no failure for it");
    check(harness_wait_status(h, "/health", 200, 5), "the server goes on");
    harness_close(h, check_failed_count > 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *env[] = {"PERFCAST_HEADER_TIMEOUT=2",
                         "PERFCAST_HTTP_TIMEOUT=5",
                         "PERFCAST_MAX_CONNECTIONS=64",
                         "PERFCAST_MAX_CONNECTIONS_PER_ADDRESS=16",
                         "PERFCAST_MIN_BODY_RATE=1024",
                         "PERFCAST_MAX_CALLPATHS=50",
                         "PERFCAST_MAX_EXPERIMENT_CALLPATHS=80",
                         "PERFCAST_MAX_TRACE_EVENTS=1000",
                         "PERFCAST_DB_POOL=8",
                         NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness: PostgreSQL and the server did not start");
    if (!h)
        return check_summary();
    /* open mode (no token yet) */
    test_conflicts(h);
    test_caps(h);
    test_creation(h);
    test_slow_header_and_body(h);
    test_per_address_cap(h);
    test_table_full(h);
    /* tokens from here on */
    test_refused_from_headers(h);
    harness_close(h, check_failed_count > 0);
    test_cancel();
    return check_summary();
}
