/*
 * cmd_token.c — `perfcast token`: API tokens from the command line, for the
 * operator bootstrapping a deployment (the first admin token) or cleaning
 * up. Talks to DATABASE_URL directly and applies pending migrations first.
 *
 *   perfcast token create --tenant T --scope read|write|admin [--expires 30d]
 *       prints the token on stdout, once: only its SHA-256 is stored
 *   perfcast token list [--tenant T]
 *       one JSON object per token (never a secret)
 *   perfcast token revoke ID
 *       effective from the service's next request: servers that hear the
 *       revocation's notice drop the token at once, and none keeps a token
 *       it read more than AUTH_CACHE_TOKEN_MS ago (api/auth_cache.h), so the
 *       command returns only once that time has passed since its commit:
 *       from then on every server refuses the token, whether or not the
 *       notice reached it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/auth.h"
#include "api/auth_cache.h"
#include "server/commands.h"
#include "store/tokens.h"

static void usage(FILE *to)
{
    fputs("usage: perfcast token create --tenant NAME --scope read|write|admin [--expires 30d]\n"
          "       perfcast token list [--tenant NAME]\n"
          "       perfcast token revoke ID\n"
          "Manages API tokens in DATABASE_URL (or --database-url URL). A created token is\n"
          "printed once; the database keeps only its SHA-256. Scopes include the ones\n"
          "before them (admin > write > read); --expires takes s, m, h or d.\n",
          to);
}

static int create(PGconn *c, const char *tenant, const char *scope_name, const char *expires)
{
    int scope = store_scope_from_name(scope_name);
    long long secs = expires ? auth_parse_duration(expires) : 0;
    if (!tenant || !*tenant || !scope || secs < 0) {
        fprintf(stderr, "perfcast token create: %s\n",
                !tenant || !*tenant ? "--tenant NAME is required"
                : !scope            ? "--scope must be read, write or admin"
                                    : "--expires must be a duration such as 30d, 12h or 90m");
        return 2;
    }
    char hex[2 * AUTH_SECRET_BYTES + 1], token[AUTH_TOKEN_MAX];
    unsigned char sha[32];
    if (auth_secret_new(hex, sha)) {
        fprintf(stderr, "perfcast token create: the random generator failed\n");
        return 1;
    }
    store_error err;
    int64_t tid = 0, id = 0;
    if (store_tenant_ensure(c, tenant, &tid, &err) ||
        store_token_create(c, tid, scope, sha, secs, &id, &err)) {
        fprintf(stderr, "perfcast token create: %s\n", err.msg);
        return 1;
    }
    auth_token_text(id, hex, token, sizeof token);
    printf("%s\n", token);
    fprintf(stderr, "token %" PRId64 " of tenant \"%s\", scope %s%s%s; it is shown only now\n", id,
            tenant, store_scope_name(scope), expires ? ", expires in " : "",
            expires ? expires : "");
    memset(token, 0, sizeof token);
    memset(hex, 0, sizeof hex);
    return 0;
}

static int list(PGconn *c, const char *tenant)
{
    store_error err;
    int64_t tid = 0;
    if (tenant && store_tenant_find(c, tenant, &tid, &err)) {
        fprintf(stderr, "perfcast token list: %s\n", err.msg);
        return err.code == STORE_NOT_FOUND ? 2 : 1;
    }
    json_t *v = NULL;
    if (store_token_list(c, tid, &v, &err)) {
        fprintf(stderr, "perfcast token list: %s\n", err.msg);
        return 1;
    }
    size_t i;
    json_t *t;
    json_array_foreach(v, i, t)
    {
        char *line = json_dumps(t, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (line)
            printf("%s\n", line);
        free(line);
    }
    json_decref(v);
    return 0;
}

static int revoke(PGconn *c, const char *idtext)
{
    char *end = NULL;
    long long id = idtext ? strtoll(idtext, &end, 10) : 0;
    if (id <= 0 || !end || *end) {
        fprintf(stderr, "perfcast token revoke: ID must be a token id (see perfcast token list)\n");
        return 2;
    }
    store_error err;
    if (store_token_revoke(c, id, 0, &err)) {
        fprintf(stderr, "perfcast token revoke: %s\n", err.msg);
        return err.code == STORE_NOT_FOUND ? 2 : 1;
    }
    /* no server's cache may hold what it read before the commit after this */
    struct timespec wait = {0, (AUTH_CACHE_TOKEN_MS + 20) * 1000000L};
    while (nanosleep(&wait, &wait) && errno == EINTR)
        ;
    fprintf(stderr, "token %lld revoked\n", id);
    return 0;
}

int cmd_token(int argc, char **argv)
{
    const char *action = argc > 1 ? argv[1] : NULL;
    const char *tenant = NULL, *scope = NULL, *expires = NULL, *id = NULL;
    const char *url = getenv("DATABASE_URL");
    if (!action || !strcmp(action, "--help") || !strcmp(action, "-h")) {
        usage(action ? stdout : stderr);
        return action ? 0 : 2;
    }
    for (int i = 2; i < argc; i++) {
        const char **slot = !strcmp(argv[i], "--tenant")         ? &tenant
                            : !strcmp(argv[i], "--scope")        ? &scope
                            : !strcmp(argv[i], "--expires")      ? &expires
                            : !strcmp(argv[i], "--database-url") ? &url
                                                                 : NULL;
        if (slot && i + 1 < argc) {
            *slot = argv[++i];
        } else if (!slot && !id && argv[i][0] != '-') {
            id = argv[i];
        } else {
            fprintf(stderr, "perfcast token: unexpected argument \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    int known = !strcmp(action, "create") || !strcmp(action, "list") || !strcmp(action, "revoke");
    if (!known || (id && strcmp(action, "revoke"))) {
        fprintf(stderr, "perfcast token: unknown action or argument \"%s\"\n", id ? id : action);
        usage(stderr);
        return 2;
    }
    if (!url || !*url) {
        fprintf(stderr, "perfcast token: no database: set DATABASE_URL or pass --database-url\n");
        return 2;
    }
    store *db = store_open(url, 1);
    store_error err;
    int rc = 1;
    if (!db) {
        fprintf(stderr, "perfcast token: out of memory\n");
        return 1;
    }
    if (store_migrate(db, &err)) {
        fprintf(stderr, "perfcast token: %s\n", err.msg);
        store_close(db);
        return 1;
    }
    PGconn *c = store_acquire(db, &err);
    if (!c)
        fprintf(stderr, "perfcast token: %s\n", err.msg);
    else if (!strcmp(action, "create"))
        rc = create(c, tenant, scope, expires);
    else if (!strcmp(action, "list"))
        rc = list(c, tenant);
    else
        rc = revoke(c, id);
    store_release(db, c);
    store_close(db);
    return rc;
}
