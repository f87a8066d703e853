/*
 * test_api_revocation.c — a revoked token is refused by the very next
 * request, whoever revoked it, also while other clients keep using it (so
 * that the server holds it in its cache and reloads it meanwhile):
 *
 *   - `perfcast token revoke`, which writes to the database, not to a
 *     server: the server hears a notice, and the command returns only once
 *     no server may still hold what it read before the commit
 *     (AUTH_CACHE_TOKEN_MS, api/auth_cache.h), so the check right after it
 *     does not depend on when the notice is heard;
 *   - DELETE /v1/tokens/{id} on the server: it drops its own entry before
 *     it answers.
 * Each for several rounds; real server and PostgreSQL (tests/harness.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/check.h"
#include "tests/harness.h"

#define ROUNDS 3

static int status_of(harness *h, const char *method, const char *path, const char *token)
{
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", token);
    harness_response r;
    harness_request(h, method, path, hdr, NULL, 0, &r);
    int s = r.status;
    harness_response_free(&r);
    return s;
}

/* `perfcast ARGS` with the test's DATABASE_URL; its stdout's first line into
 * out; the exit status. */
static int cli(harness *h, const char *args, char *out, size_t cap)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[1024], file[300];
    snprintf(file, sizeof file, "%s/cli-out.txt", harness_dir(h));
    snprintf(cmd, sizeof cmd, "env DATABASE_URL='%s' %s %s >%s 2>%s.err", harness_database_url(h),
             bin, args, file, file);
    int rc = system(cmd);
    size_t n = 0;
    char *text = harness_read_file(file, &n);
    snprintf(out, cap, "%s", text ? text : "");
    free(text);
    out[strcspn(out, "\n")] = '\0';
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Another client using a token until told to stop, or refused (a refused
 * token is not sent again: the per-address limit of bad tokens). */
typedef struct user {
    harness *h;
    const char *token;
    _Atomic int stop;
    int ok;
} user;

static void *use_token(void *arg)
{
    user *u = arg;
    while (!u->stop && status_of(u->h, "GET", "/v1/experiments", u->token) == 200)
        u->ok++;
    return NULL;
}

/* A fresh token of tenant "alpha" with scope, from the CLI; its id. */
static long new_token(harness *h, const char *scope, char *tok, size_t cap)
{
    char args[128];
    snprintf(args, sizeof args, "token create --tenant alpha --scope %s", scope);
    int rc = cli(h, args, tok, cap);
    check(rc == 0 && !strncmp(tok, "pcf_", 4), "token create: exit %d, \"%s\"", rc, tok);
    return strncmp(tok, "pcf_", 4) ? 0 : atol(tok + 4);
}

/* revoke(h, id, admin) revokes token id; 0 when it says it did. */
static void rounds(harness *h, const char *how, const char *admin,
                   int (*revoke)(harness *, long, const char *))
{
    for (int round = 0; round < ROUNDS; round++) {
        char tok[128];
        long id = new_token(h, "read", tok, sizeof tok);
        check(status_of(h, "GET", "/v1/experiments", tok) == 200, "%s: a fresh token reads", how);
        user u = {.h = h, .token = tok};
        pthread_t th;
        pthread_create(&th, NULL, use_token, &u);
        harness_sleep(0.3); /* cached, and reloaded in the background (cache_sync) */
        int rc = revoke(h, id, admin);
        int st = status_of(h, "GET", "/v1/experiments", tok);
        u.stop = 1;
        pthread_join(th, NULL);
        check(rc == 0, "%s: token %ld revoked", how, id);
        check(u.ok > 0, "%s: the other client used the token before (%d requests)", how, u.ok);
        check(st == 401, "%s, round %d: the next request is refused: %d", how, round, st);
    }
}

static int revoke_cli(harness *h, long id, const char *admin)
{
    (void)admin;
    char args[64], out[64];
    snprintf(args, sizeof args, "token revoke %ld", id);
    return cli(h, args, out, sizeof out);
}

static int revoke_api(harness *h, long id, const char *admin)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/tokens/%ld", id);
    return status_of(h, "DELETE", path, admin) == 204 ? 0 : -1;
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness started");
    if (!h)
        return check_summary();
    char admin[128];
    new_token(h, "admin", admin, sizeof admin);
    rounds(h, "perfcast token revoke", admin, revoke_cli);
    rounds(h, "DELETE /v1/tokens/{id}", admin, revoke_api);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
