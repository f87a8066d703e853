/*
 * cmd_upload.c — `perfcast upload`: sends profiles to a perfcast server,
 * one POST /v1/experiments/{id}/profiles per file, with the coordinate,
 * repetition, rank, format and the commit, branch and CI run as query
 * parameters (what a CI job would otherwise write as a curl loop). Prints
 * the server's answer per file, one JSON document a line.
 *
 * Exit status: 0 every file stored (or a duplicate), 2 usage or a file the
 * server refused (4xx: its detail is printed), 3 the server could not be
 * asked or failed; 1 a file could not be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/commands.h"
#include "server/http_client.h"

static const char upload_usage_text[] =
    "usage: perfcast upload --url URL --experiment ID [--point NAME=VALUE[,NAME=VALUE]]\n"
    "                       [--repetition N] [--rank N] [--format kineto|nsys|perfcast]\n"
    "                       [--markers LIST] [--commit SHA [--branch NAME] [--ci-run ID]]\n"
    "                       [--refit defer] [--token TOKEN] [--timeout SECONDS] FILE...\n"
    "\n"
    "Uploads each FILE (a perfcast JSON profile, a Kineto trace, plain or gzip, or an\n"
    "Nsight Systems export of one rank) to the experiment; --commit makes the refit model\n"
    "that commit's profiles (perfcast ci-check compares commits). The token may also come\n"
    "from PERFCAST_TOKEN. Prints the server's answer per file.\n"
    "exit status: 0 stored, 1 a file unreadable, 2 usage or refused, 3 server unreachable\n";

typedef struct up_args {
    const char *url, *experiment, *point, *repetition, *rank, *format, *markers, *commit,
        *branch, *ci_run, *refit, *token;
    int timeout;
    int first_file;
} up_args;

static int up_usage(const char *fmt, const char *arg)
{
    fputs("perfcast upload: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(upload_usage_text, stderr);
    return 2;
}

static int parse_args(int argc, char **argv, up_args *a)
{
    memset(a, 0, sizeof *a);
    a->timeout = 300;
    a->token = getenv("PERFCAST_TOKEN");
    struct {
        const char *flag;
        const char **dst;
    } vals[] = {{"--url", &a->url},          {"--experiment", &a->experiment},
                {"--point", &a->point},      {"--repetition", &a->repetition},
                {"--rank", &a->rank},        {"--format", &a->format},
                {"--markers", &a->markers},  {"--commit", &a->commit},
                {"--branch", &a->branch},    {"--ci-run", &a->ci_run},
                {"--refit", &a->refit},      {"--token", &a->token}};
    int i = 1;
    for (; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(upload_usage_text, stdout);
            return 1;
        }
        if (!strcmp(s, "--")) {
            i++;
            break;
        }
        if (s[0] != '-' || !s[1])
            break;
        int known = 0;
        for (size_t k = 0; k < sizeof vals / sizeof *vals && !known; k++)
            if (!strcmp(s, vals[k].flag)) {
                known = 1;
                if (i + 1 >= argc)
                    return up_usage("%s needs a value", s);
                *vals[k].dst = argv[++i];
            }
        if (!known && !strcmp(s, "--timeout")) {
            known = 1;
            if (i + 1 >= argc || (a->timeout = atoi(argv[++i])) < 1)
                return up_usage("%s needs a number of seconds >= 1", s);
        }
        if (!known)
            return up_usage("unknown option %s", s);
    }
    a->first_file = i;
    if (!a->url)
        return up_usage("%s is required", "--url");
    if (!a->experiment || !*a->experiment ||
        strspn(a->experiment, "0123456789") != strlen(a->experiment))
        return up_usage("%s is required: the experiment's id (a positive integer)",
                        "--experiment");
    if (a->first_file >= argc)
        return up_usage("%s", "no FILE to upload");
    if ((a->branch || a->ci_run) && !a->commit)
        return up_usage("%s", "--branch and --ci-run describe a commit: give --commit too");
    return 0;
}

/* "&name=value" appended, value encoded. */
static size_t add(char *p, size_t n, size_t cap, const char *name, const char *value)
{
    if (!value || n >= cap)
        return n;
    n += (size_t)snprintf(p + n, cap - n, "%s%s=", strchr(p, '?') ? "&" : "?", name);
    return n < cap ? cli_url_encode(p, n, cap, value) : cap;
}

/* The query: the point's NAME=VALUE pairs become ?NAME=VALUE. */
static int build_path(const up_args *a, char *p, size_t cap)
{
    size_t n = (size_t)snprintf(p, cap, "/v1/experiments/%s/profiles", a->experiment);
    if (a->point) {
        char copy[512];
        snprintf(copy, sizeof copy, "%s", a->point);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            if (!eq || eq == tok || !eq[1])
                return -2;
            *eq = '\0';
            n = add(p, n, cap, tok, eq + 1);
        }
    }
    n = add(p, n, cap, "repetition", a->repetition);
    n = add(p, n, cap, "rank", a->rank);
    n = add(p, n, cap, "format", a->format);
    n = add(p, n, cap, "markers", a->markers);
    n = add(p, n, cap, "commit", a->commit);
    n = add(p, n, cap, "branch", a->branch);
    n = add(p, n, cap, "ci_run", a->ci_run);
    n = add(p, n, cap, "refit", a->refit);
    return n < cap ? 0 : -1;
}

int cmd_upload(int argc, char **argv)
{
    up_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : 2;
    cli_url u;
    char err[300], path[4096];
    if (cli_url_parse(a.url, &u, err, sizeof err))
        return up_usage("--url: %s", err);
    rc = build_path(&a, path, sizeof path);
    if (rc == -2)
        return up_usage("--point: expected NAME=VALUE[,NAME=VALUE], got \"%s\"", a.point);
    if (rc)
        return up_usage("%s", "the query is too long");
    int worst = 0;
    for (int i = a.first_file; i < argc; i++) {
        cli_file f;
        if (cli_file_open(argv[i], &f, err, sizeof err)) {
            fprintf(stderr, "perfcast upload: %s: %s\n", argv[i], err);
            worst = worst ? worst : 1;
            continue;
        }
        int status = 0;
        char *body = NULL;
        size_t len = 0;
        int sent = cli_http_request(&u, "POST", path, a.token, "application/octet-stream",
                                    f.data, f.len, a.timeout, &status, &body, &len, err,
                                    sizeof err);
        cli_file_close(&f);
        if (sent) {
            fprintf(stderr, "perfcast upload: %s: %s\n", argv[i], err);
            free(body);
            return 3;
        }
        if (status >= 200 && status < 300) {
            printf("%s\n", body);
        } else {
            fprintf(stderr, "perfcast upload: %s: the server answered %d: %s\n", argv[i], status,
                    body);
            worst = status >= 400 && status < 500 ? 2 : 3;
        }
        free(body);
        fflush(stdout);
        if (worst == 3)
            return 3;
    }
    return worst;
}
