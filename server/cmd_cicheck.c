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

#include "server/commands.h"
#include "server/http_client.h"

typedef struct ci_args {
    const char *url, *experiment, *base, *head, *threshold, *at, *token, *metric;
    int json, markdown, timeout;
} ci_args;

static const char ci_usage_text[] =
    "usage: perfcast ci-check --url URL --experiment ID --base REF --head REF\n"
    "                         [--threshold 5%] [--at ranks=512] [--metric time]\n"
    "                         [--token TOKEN] [--json | --markdown] [--timeout SECONDS]\n"
    "\n"
    "Compares the models of two commits (REF: a commit uploaded with ?commit=, or a\n"
    "model set number) callpath by callpath at the measured points and at the target\n"
    "scale --at (default 4x the largest measured value). A change is significant when\n"
    "the 95% intervals separate and it exceeds --threshold; a significant increase at a\n"
    "measured point is a regression (a change at the target alone is reported as\n"
    "diverges, not counted). The token may also come from PERFCAST_TOKEN.\n"
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

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "256.1 [250.3, 261.9]" or "-" */
static void fmt_value(const json_t *v, char *buf, size_t cap)
{
    if (!json_is_object(v)) {
        snprintf(buf, cap, "-");
        return;
    }
    const json_t *iv = json_object_get(v, "interval");
    snprintf(buf, cap, "%.4g [%.4g, %.4g]", num(v, "value"),
             json_number_value(json_array_get(iv, 0)), json_number_value(json_array_get(iv, 1)));
}

static void fmt_change(const json_t *at, char *buf, size_t cap)
{
    double c = num(at, "change_pct");
    if (!json_is_object(at))
        snprintf(buf, cap, "-");
    else if (isnan(c))
        snprintf(buf, cap, "new");
    else
        snprintf(buf, cap, "%+.1f%%%s", c, json_is_true(json_object_get(at, "significant")) ? "" : " ~");
}

static const char *complexity_of(const json_t *e)
{
    const char *s = json_string_value(json_object_get(json_object_get(e, "complexity"), "change"));
    return s ? s : "-";
}

static void point_text(const json_t *pt, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)pt, k, v)
    {
        if (n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s=%g", n ? "," : "", k,
                                  json_number_value(v));
    }
}

static void print_entries_text(FILE *out, const json_t *arr, const char *kind)
{
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e)
    {
        char b[80], h[80], c[32];
        const json_t *at = json_object_get(e, "at");
        fmt_value(json_object_get(at, "base"), b, sizeof b);
        fmt_value(json_object_get(at, "head"), h, sizeof h);
        fmt_change(at, c, sizeof c);
        fprintf(out, "%-12s %-12s %-28s %-28s %-13s %s%s\n",
                json_string_value(json_object_get(e, "status")), c, b, h, complexity_of(e), kind,
                json_string_value(json_object_get(e, "name")));
    }
}

static void print_text(FILE *out, const json_t *d)
{
    const json_t *b = json_object_get(d, "base"), *h = json_object_get(d, "head");
    char at[200];
    point_text(json_object_get(d, "at"), at, sizeof at);
    fprintf(out,
            "perfcast ci-check: experiment %lld, base %s (model set %lld) -> head %s (model set "
            "%lld)\nmetric %s, target %s, threshold %g%% (significant: the 95%% intervals separate "
            "and the change exceeds the threshold; ~ = not significant; the measured points "
            "decide)\n\n",
            (long long)num(d, "experiment"), json_string_value(json_object_get(b, "ref")),
            (long long)num(b, "model_set"), json_string_value(json_object_get(h, "ref")),
            (long long)num(h, "model_set"), json_string_value(json_object_get(d, "metric")), at,
            num(d, "threshold_pct"));
    fprintf(out, "%-12s %-12s %-28s %-28s %-13s %s\n", "STATUS", "AT TARGET", "BASE [95%]",
            "HEAD [95%]", "COMPLEXITY", "NAME");
    print_entries_text(out, json_object_get(d, "application"), "application: ");
    print_entries_text(out, json_object_get(d, "callpaths"), "");
    const json_t *cost = json_object_get(d, "cost");
    if (json_is_object(cost)) {
        char cb[80], ch[80], cc[32];
        fmt_value(json_object_get(cost, "base"), cb, sizeof cb);
        fmt_value(json_object_get(cost, "head"), ch, sizeof ch);
        fmt_change(cost, cc, sizeof cc);
        fprintf(out, "%-12s %-12s %-28s %-28s %-13s %s\n",
                json_is_true(json_object_get(cost, "significant")) && num(cost, "change_pct") > 0
                    ? "regression"
                    : "-",
                cc, cb, ch, "-", "cost: core-h per epoch");
    }
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(d, "appeared"), i, v)
        fprintf(out, "%-12s %-12s %-28s %-28s %-13s %s\n", "appeared", "-", "-", "-", "-",
                json_string_value(v));
    json_array_foreach(json_object_get(d, "vanished"), i, v)
        fprintf(out, "%-12s %-12s %-28s %-28s %-13s %s\n", "vanished", "-", "-", "-", "-",
                json_string_value(v));
    fprintf(out, "\n%s: %lld regression(s), %lld improvement(s), %lld diverging only beyond the "
                 "measurements (not counted)\n",
            json_is_true(json_object_get(d, "regression")) ? "REGRESSION" : "OK",
            (long long)num(d, "regressions"), (long long)num(d, "improvements"),
            (long long)num(d, "diverging"));
}

static void print_markdown(FILE *out, const json_t *d)
{
    const json_t *b = json_object_get(d, "base"), *h = json_object_get(d, "head");
    char at[200];
    point_text(json_object_get(d, "at"), at, sizeof at);
    int reg = json_is_true(json_object_get(d, "regression"));
    fprintf(out, "### perfcast: %s\n\n",
            reg ? ":x: scaling regression" : ":white_check_mark: no scaling regression");
    fprintf(out,
            "Base `%s` (model set %lld) → head `%s` (model set %lld), metric `%s`, target `%s`, "
            "threshold %g%%: %lld regression(s), %lld improvement(s).\n\n",
            json_string_value(json_object_get(b, "ref")), (long long)num(b, "model_set"),
            json_string_value(json_object_get(h, "ref")), (long long)num(h, "model_set"),
            json_string_value(json_object_get(d, "metric")), at, num(d, "threshold_pct"),
            (long long)num(d, "regressions"), (long long)num(d, "improvements"));
    fputs("| status | change at target | base [95%] | head [95%] | complexity | name |\n"
          "| --- | ---: | ---: | ---: | --- | --- |\n",
          out);
    const char *kinds[] = {"application", "callpaths"};
    for (int k = 0; k < 2; k++) {
        size_t i;
        const json_t *e;
        json_array_foreach(json_object_get(d, kinds[k]), i, e)
        {
            char bv[80], hv[80], c[32];
            const json_t *a = json_object_get(e, "at");
            fmt_value(json_object_get(a, "base"), bv, sizeof bv);
            fmt_value(json_object_get(a, "head"), hv, sizeof hv);
            fmt_change(a, c, sizeof c);
            const char *st = json_string_value(json_object_get(e, "status"));
            fprintf(out, "| %s%s%s | %s | %s | %s | %s | %s`%s` |\n",
                    !strcmp(st, "regression") ? "**" : "", st,
                    !strcmp(st, "regression") ? "**" : "", c, bv, hv, complexity_of(e),
                    k ? "" : "application ", json_string_value(json_object_get(e, "name")));
        }
    }
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(d, "appeared"), i, v)
        fprintf(out, "| appeared | | | | | `%s` |\n", json_string_value(v));
    json_array_foreach(json_object_get(d, "vanished"), i, v)
        fprintf(out, "| vanished | | | | | `%s` |\n", json_string_value(v));
    fputs("\n`~`: not significant (the 95% intervals overlap or the change is below the "
          "threshold). The measured points decide; `diverges`: the models part only beyond "
          "them, not counted.\n",
          out);
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
        print_markdown(stdout, doc);
    } else {
        print_text(stdout, doc);
    }
    rc = json_is_true(json_object_get(doc, "regression")) ? 1 : 0;
    json_decref(doc);
    return rc;
}
