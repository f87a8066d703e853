/*
 * fuzz_web.c — libFuzzer target for the names clients send that are not
 * JSON: the dashboard's static paths (api/web.c, against the repository's
 * real web/ folder: make fuzz runs from the repository's root), commit,
 * branch and CI-run names (api/commits.h) and experiment parameter names
 * with the degrees of parallelism the ranks rule evaluates
 * (api/param_names.h). The input's first line is the path, the second a
 * name, the third and fourth two degree expressions. Invariants: a file is
 * served (200) only for a path whose segments are plain names, every
 * answer carries the Content-Security-Policy and is a valid response.
 * Seeds: tests/fuzz/corpus/web/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/commits.h"
#include "api/handlers.h"
#include "analysis/param_names.h"
#include "api/web.h"

static char *line(char **s)
{
    char *start = *s, *nl = strchr(start, '\n');
    if (nl) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = start + strlen(start);
    }
    return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *s = buf;
    char *path = line(&s), *name = line(&s), *dp = line(&s), *mp = line(&s);

    api_ctx ctx = {.web_dir = "web"};
    api_request req = {.method = "GET", .path = path, .body = ""};
    api_response resp = {0};
    api_web(&ctx, &req, &resp);
    if (resp.status < 200 || resp.status > 599 || !resp.content_type)
        abort();
    if (resp.status == 200 && (path[0] != '/' || (strcmp(path, "/") && !api_web_path_ok(path + 1))))
        abort();
    int has_csp = 0;
    for (size_t i = 0; i < resp.nheaders; i++)
        has_csp |= !strcmp(resp.headers[i].name, "Content-Security-Policy");
    if (!has_csp && resp.status != 500)
        abort();
    api_response_free(&resp);

    if (api_tag_valid(name, 1) && strpbrk(name, " %\\?&#"))
        abort(); /* a commit name never needs escaping in a query */
    (void)api_tag_valid(name, 0);
    char msg[700];
    (void)param_name_check(name, msg, sizeof msg);
    const char *names[] = {"ranks", name[0] ? name : "x"};
    int at = -1;
    (void)param_ranks_check(names, 2, dp[0] ? dp : "ranks", mp[0] ? mp : "1", &at, msg,
                            sizeof msg);
    free(buf);
    return 0;
}
