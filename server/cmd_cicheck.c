/*
 * cmd_cicheck.c — `perfcast ci-check`: did the head commit make scaling
 * worse than the base commit? Asks a perfcast server's
 * GET /v1/experiments/{id}/regressions (api/regressions.c) and prints a
 * readable table (default), a Markdown summary for a pull-request comment
 * (--markdown) or the API's JSON document (--json).
 *
 * Exit status: 0 no regression, 1 a regression, 2 usage or a request the
 * server refused (4xx: unknown commit, base = head, bad threshold; its
 * detail is printed), 3 the server could not be asked or failed (5xx).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/cicheck_render.h"
#include "server/commands.h"
#include "server/http_client.h"

typedef struct ci_args {
    const char *url, *experiment, *base, *head, *threshold, *at, *token, *metric;
    int json, markdown, timeout, wait;
} ci_args;

static const char ci_usage_text[] =
    "usage: perfcast ci-check --url URL --experiment ID --base REF --head REF\n"
    "                         [--threshold 5%] [--at ranks=512] [--metric time]\n"
    "                         [--token TOKEN] [--json | --markdown] [--timeout SECONDS]\n"
    "                         [--wait SECONDS]\n"
    "\n"
    "Compares the models of two commits (REF: a commit uploaded with ?commit=, or a\n"
    "model set number) callpath by callpath at the measured points and at the target\n"
    "scale --at (default 4x the largest measured value). A change is significant when\n"
    "the 95% intervals separate and it exceeds --threshold; a significant increase at a\n"
    "measured point is a regression (a change at the target alone is reported as\n"
    "diverges, not counted). Each line names the point it was judged at, with the\n"
    "base and head values there. --wait waits up to SECONDS for the experiment's newest\n"
    "refit to finish (and, for a commit, for a model set of the head) before asking.\n"
    "The token may also come from PERFCAST_TOKEN.\n"
    "exit status: 0 no regression, 1 regression, 2 usage or request refused,\n"
    "             3 the server could not be asked\n";

static void ci_check_usage(FILE *to)
{
    fputs(ci_usage_text, to);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("perfcast ci-check: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(ci_usage_text, stderr);
    return 2;
}

/* "5", "5%", "0.5%" */
static int threshold_ok(const char *t)
{
    char *end = NULL;
    double v = strtod(t, &end);
    if (end == t || !isfinite(v) || v < 0 || v > 1000)
        return 0;
    if (*end == '%')
        end++;
    return *end == '\0';
}

/* "0" .. "86400" */
static int seconds_ok(const char *t, int *out)
{
    char *end = NULL;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 0 || v > 86400)
        return 0;
    *out = (int)v;
    return 1;
}

/* Returns 0 ok, 1 help shown, 2 usage error (printed). */
static int parse_args(int argc, char **argv, ci_args *a)
{
    memset(a, 0, sizeof *a);
    a->timeout = 60;
    a->token = getenv("PERFCAST_TOKEN");
    struct {
        const char *flag;
        const char **dst;
    } vals[] = {{"--url", &a->url},         {"--experiment", &a->experiment},
                {"--base", &a->base},       {"--head", &a->head},
                {"--threshold", &a->threshold}, {"--at", &a->at},
                {"--token", &a->token},     {"--metric", &a->metric}};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            ci_check_usage(stdout);
            return 1;
        }
        if (!strcmp(s, "--json")) {
            a->json = 1;
            continue;
        }
        if (!strcmp(s, "--markdown")) {
            a->markdown = 1;
            continue;
        }
        int known = 0;
        for (size_t k = 0; k < sizeof vals / sizeof *vals && !known; k++)
            if (!strcmp(s, vals[k].flag)) {
                known = 1;
                if (i + 1 >= argc)
                    return usage_error("%s needs a value", s);
                *vals[k].dst = argv[++i];
            }
        if (!known && !strcmp(s, "--timeout")) {
            known = 1;
            if (i + 1 >= argc || (a->timeout = atoi(argv[++i])) < 1)
                return usage_error("%s needs a number of seconds >= 1", s);
        }
        if (!known && !strcmp(s, "--wait")) {
            known = 1;
            if (i + 1 >= argc || !seconds_ok(argv[i + 1], &a->wait))
                return usage_error("%s needs a number of seconds from 0 to 86400", s);
            i++;
        }
        if (!known)
            return usage_error(strncmp(s, "-", 1) ? "unexpected argument \"%s\""
                                                  : "unknown option %s",
                               s);
    }
    if (!a->url)
        return usage_error("%s is required", "--url");
    if (!a->experiment)
        return usage_error("%s is required", "--experiment");
    if (!a->base)
        return usage_error("%s is required", "--base");
    if (!a->head)
        return usage_error("%s is required", "--head");
    if (strspn(a->experiment, "0123456789") != strlen(a->experiment) || !*a->experiment)
        return usage_error("--experiment: expected a positive integer id, got \"%s\"",
                           a->experiment);
    if (a->threshold && !threshold_ok(a->threshold))
        return usage_error("--threshold: expected a percentage such as 5%% or 2.5, got \"%s\"",
                           a->threshold);
    if (a->json && a->markdown)
        return usage_error("%s", "--json and --markdown exclude each other");
    if (!strcmp(a->base, a->head))
        return usage_error("--head: the same reference as --base (\"%s\"): nothing to compare",
                           a->head);
    return 0;
}

static int build_path(const ci_args *a, char *p, size_t cap)
{
    size_t n = (size_t)snprintf(p, cap, "/v1/experiments/%s/regressions?base=", a->experiment);
    n = cli_url_encode(p, n, cap, a->base);
    if (n + 6 < cap)
        n += (size_t)snprintf(p + n, cap - n, "&head=");
    n = cli_url_encode(p, n, cap, a->head);
    if (a->threshold && n + 11 < cap) {
        n += (size_t)snprintf(p + n, cap - n, "&threshold=");
        n = cli_url_encode(p, n, cap, a->threshold);
    }
    if (a->metric && n + 8 < cap) {
        n += (size_t)snprintf(p + n, cap - n, "&metric=");
        n = cli_url_encode(p, n, cap, a->metric);
    }
    if (a->at && n + 4 < cap) {
        n += (size_t)snprintf(p + n, cap - n, "&at=");
        n = cli_url_encode(p, n, cap, a->at);
    }
    return n < cap ? 0 : -1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 when the model sets document shows the head ready: the newest refit
 * job is neither queued nor running and, when the head is not a model set
 * number, a model set carries it as its commit. *state gets the job's state. */
static int head_ready(const json_t *doc, const char *head, const char **state)
{
    const json_t *job = json_object_get(doc, "newest_job");
    *state = json_is_object(job) ? json_string_value(json_object_get(job, "state")) : NULL;
    if (*state && (!strcmp(*state, "queued") || !strcmp(*state, "running")))
        return 0;
    if (strspn(head, "0123456789") == strlen(head))
        return 1;
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(doc, "model_sets"), i, s)
    {
        const char *c = json_string_value(json_object_get(s, "commit"));
        if (c && !strcmp(c, head))
            return 1;
    }
    return 0;
}

/* --wait: polls the experiment's model sets until the head's refit is
 * done. 0 ready; 2 the server refused (printed); 3 unreachable, the refit
 * failed or the wait ran out (printed). */
static int wait_for_head(const ci_args *a, const cli_url *u)
{
    char path[256], err[300];
    snprintf(path, sizeof path, "/v1/experiments/%s/model_sets?limit=1000", a->experiment);
    double deadline = now_seconds() + a->wait;
    const char *last = "no refit";
    char last_buf[32] = "";
    for (;;) {
        int status = 0;
        char *body = NULL;
        size_t len = 0;
        if (cli_http_get(u, path, a->token, a->timeout, &status, &body, &len, err, sizeof err)) {
            fprintf(stderr, "perfcast ci-check: %s\n", err);
            return 3;
        }
        json_t *doc = json_loadb(body, len, 0, NULL);
        free(body);
        if (status != 200) {
            const char *detail = json_string_value(json_object_get(doc, "detail"));
            fprintf(stderr, "perfcast ci-check: --wait: the server answered %d: %s\n", status,
                    detail ? detail : "(no detail)");
            json_decref(doc);
            return status >= 400 && status < 500 ? 2 : 3;
        }
        const char *state = NULL;
        int ready = head_ready(doc, a->head, &state);
        if (state)
            snprintf(last_buf, sizeof last_buf, "%s", state), last = last_buf;
        int failed = ready && state && !strcmp(state, "failed");
        long long job = (long long)json_integer_value(
            json_object_get(json_object_get(doc, "newest_job"), "id"));
        json_decref(doc);
        if (failed) {
            fprintf(stderr, "perfcast ci-check: the experiment's newest refit (job %lld) failed; "
                            "see GET /v1/jobs/%lld\n", job, job);
            return 3;
        }
        if (ready)
            return 0;
        if (now_seconds() >= deadline) {
            fprintf(stderr, "perfcast ci-check: --wait %d: the head's refit did not finish in time "
                            "(newest job: %s)\n", a->wait, last);
            return 3;
        }
        struct timespec pause = {0, 250 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

int cmd_cicheck(int argc, char **argv)
{
    ci_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : 2;
    cli_url u;
    char err[300], path[2048];
    if (cli_url_parse(a.url, &u, err, sizeof err))
        return usage_error("--url: %s", err);
    if (build_path(&a, path, sizeof path))
        return usage_error("%s", "the references are too long");
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    if (a.wait && (rc = wait_for_head(&a, &u)) != 0)
        return rc;
    if (cli_http_get(&u, path, a.token, a.timeout, &status, &body, &len, err, sizeof err)) {
        fprintf(stderr, "perfcast ci-check: %s\n", err);
        return 3;
    }
    json_t *doc = json_loadb(body, len, 0, NULL);
    if (status != 200) {
        const char *detail = json_string_value(json_object_get(doc, "detail"));
        const char *field = json_string_value(json_object_get(doc, "field"));
        fprintf(stderr, "perfcast ci-check: the server answered %d%s%s%s: %s\n", status,
                field ? " (field " : "", field ? field : "", field ? ")" : "",
                detail ? detail : body);
        json_decref(doc);
        free(body);
        return status >= 400 && status < 500 ? 2 : 3;
    }
    free(body);
    if (!json_is_object(doc)) {
        fprintf(stderr, "perfcast ci-check: the answer is not a JSON object\n");
        json_decref(doc);
        return 3;
    }
    if (a.json) {
        char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        if (text)
            puts(text);
        free(text);
    } else if (a.markdown) {
        cicheck_print_markdown(stdout, doc);
    } else {
        cicheck_print_text(stdout, doc);
    }
    rc = json_is_true(json_object_get(doc, "regression")) ? 1 : 0;
    json_decref(doc);
    return rc;
}
