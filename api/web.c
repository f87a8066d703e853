/*
 * web.c — the dashboard: static files from one folder (api_ctx.web_dir,
 * PERFCAST_WEB_DIR; web/ of the repository by default) served under / to
 * GET and HEAD requests that no API route matches. "/" is index.html.
 *
 * The path is confined to the folder: it is the decoded request path, and
 * any segment that is empty, "." or "..", starts with a dot, or holds a
 * backslash, '%' (an escape the server left encoded, such as %00), a
 * control character or a NUL answers 400; so does a path whose resolved
 * location (symbolic links followed) lies outside the folder. An encoded
 * slash (%2F) is decoded before the check, so "..%2F" is "../" and refused.
 * Only known types are served (html, js, css, png, svg, json, txt); the
 * rest is 404. Every answer carries a strict Content-Security-Policy: only
 * the folder's own scripts, styles and images, requests to this origin, no
 * frames, no inline script.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/handlers.h"
#include "api/web.h"

#define WEB_MAX_FILE (8 << 20)

const char api_web_csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                           "form-action 'none'; frame-ancestors 'none'";

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},   {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
    {".png", "image/png"},                   {".svg", "image/svg+xml"},
    {".json", "application/json"},           {".txt", "text/plain; charset=utf-8"},
};

static const char *type_of(const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && !strcmp(path + n - e, types[i].ext))
            return types[i].type;
    }
    return NULL;
}

/* 1 when every segment of rel (no leading '/') is a plain name. */
int api_web_path_ok(const char *rel)
{
    if (!*rel || strlen(rel) > 200)
        return 0;
    const char *s = rel;
    for (;;) {
        const char *e = strchrnul(s, '/');
        if (e == s || *s == '.')
            return 0;
        for (const char *p = s; p < e; p++) {
            unsigned char ch = (unsigned char)*p;
            if (ch < 0x20 || ch == 0x7f || ch == '\\' || ch == '%')
                return 0;
        }
        if (!*e)
            return 1;
        s = e + 1;
    }
}

static void add_headers(api_response *resp)
{
    api_add_header(resp, "Content-Security-Policy", "%s", api_web_csp);
    api_add_header(resp, "X-Content-Type-Options", "nosniff");
    api_add_header(resp, "Referrer-Policy", "no-referrer");
    api_add_header(resp, "Cache-Control", "no-cache");
}

void api_web(api_ctx *ctx, api_request *req, api_response *resp)
{
    const char *path = req->path;
    const char *rel = !strcmp(path, "/") ? "index.html" : path + 1;
    if (path[0] != '/' || !api_web_path_ok(rel)) {
        api_problem(resp, 400, "path",
                    "not a file of the dashboard: segments must be plain names (no \"..\", "
                    "leading dots, backslashes, escapes or control characters)");
        add_headers(resp);
        return;
    }
    const char *type = type_of(rel);
    char root[PATH_MAX], full[PATH_MAX + 256], real[PATH_MAX];
    if (!type || !ctx->web_dir || !realpath(ctx->web_dir, root)) {
        api_problem(resp, 404, NULL, "no such resource: %s", path);
        add_headers(resp);
        return;
    }
    snprintf(full, sizeof full, "%s/%s", root, rel);
    size_t rl = strlen(root);
    struct stat st;
    int fd = -1;
    if (!realpath(full, real) || strncmp(real, root, rl) || real[rl] != '/' ||
        (fd = open(real, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
        st.st_size > WEB_MAX_FILE) {
        if (fd >= 0)
            close(fd);
        api_problem(resp, 404, NULL, "no such resource: %s", path);
        add_headers(resp);
        return;
    }
    char *body = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (body && got < (size_t)st.st_size) {
        ssize_t n = read(fd, body + got, (size_t)st.st_size - got);
        if (n <= 0 && errno != EINTR)
            break;
        got += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    if (!body || got != (size_t)st.st_size) {
        free(body);
        api_problem(resp, 500, NULL, "cannot read %s", path);
        snprintf(resp->error, sizeof resp->error, "reading %.200s failed", real);
        return;
    }
    body[got] = '\0';
    api_send_body(resp, 200, type, body, got);
    add_headers(resp);
}
