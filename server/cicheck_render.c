/*
 * cicheck_render.c — `perfcast ci-check`'s table and Markdown (see
 * cicheck_render.h): one verdict per callpath, judged at a named point, with
 * the numbers of that point beside the words.
 */
#include "server/cicheck_render.h"

#include <math.h>
#include <string.h>

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
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

/* "+200.0%", "new", "-" */
static void fmt_change(const json_t *cmp, char *buf, size_t cap)
{
    double c = num(cmp, "change_pct");
    if (!json_is_object(cmp))
        snprintf(buf, cap, "-");
    else if (isnan(c))
        snprintf(buf, cap, "new");
    else
        snprintf(buf, cap, "%+.1f%%", c);
}

/* The change at the target: "+12.0%" when significant there, "+0.4% (n.s.)" otherwise. */
static void fmt_target(const json_t *cmp, char *buf, size_t cap)
{
    char c[32];
    fmt_change(cmp, c, sizeof c);
    int sig = json_is_true(json_object_get(cmp, "significant"));
    snprintf(buf, cap, "%s%s", c, json_is_object(cmp) && !sig ? " (n.s.)" : "");
}

/* "ranks=8,nodes=2" */
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

/* "p^0.6667*log2(p)^2" of a leading growth {poly, log}; "constant" */
static void growth_text(const json_t *g, char *buf, size_t cap)
{
    double p = num(g, "poly"), l = num(g, "log");
    size_t n = 0;
    buf[0] = '\0';
    if (!(p != 0) && !(l != 0)) {
        snprintf(buf, cap, "constant");
        return;
    }
    if (p != 0)
        n += (size_t)snprintf(buf, cap, p == 1 ? "p" : "p^%.4g", p);
    if (l != 0 && n < cap)
        snprintf(buf + n, cap - n, l == 1 ? "%slog2(p)" : "%slog2(p)^%.4g", n ? "*" : "", l);
}

/* "same" or "p^0.5 -> p*log2(p)": the leading growth of base and head, as
 * numbers, so that it never reads as a verdict of its own */
static void complexity_text(const json_t *entry, char *buf, size_t cap)
{
    const json_t *c = json_object_get(entry, "complexity");
    if (!json_is_object(c)) {
        snprintf(buf, cap, "-");
        return;
    }
    if (!strcmp(str(c, "change"), "same")) {
        snprintf(buf, cap, "same");
        return;
    }
    char b[40], h[40];
    growth_text(json_object_get(c, "base"), b, sizeof b);
    growth_text(json_object_get(c, "head"), h, sizeof h);
    snprintf(buf, cap, "%.40s -> %.40s", b, h);
}

const json_t *cicheck_judged(const json_t *entry, int *at_target)
{
    const char *status = str(entry, "status");
    const json_t *measured = json_object_get(entry, "measured");
    *at_target = 0;
    if (!strcmp(status, "diverges")) {
        *at_target = 1;
        return json_object_get(entry, "at");
    }
    if (!json_is_array(measured) || json_array_size(measured) == 0)
        return NULL;
    int want = !strcmp(status, "regression") ? 1 : !strcmp(status, "improvement") ? -1 : 0;
    const json_t *best = NULL;
    double best_key = -INFINITY;
    size_t i;
    const json_t *m;
    json_array_foreach(measured, i, m)
    {
        double c = num(m, "change_pct");
        int sig = json_is_true(json_object_get(m, "significant"));
        if (want && (!sig || !(c * want > 0)))
            continue;
        double key = want ? c * want : fabs(c);
        if (isnan(key))
            key = -HUGE_VAL / 2; /* a point one side cannot evaluate: last resort */
        if (!best || key > best_key) {
            best = m;
            best_key = key;
        }
    }
    return best;
}

/* One line's cells. */
typedef struct row {
    char verdict[16], judged[120], change[32], base[80], head[80], target[48], complexity[96];
} row;

static void entry_row(const json_t *e, row *r)
{
    int at_target = 0;
    const json_t *j = cicheck_judged(e, &at_target);
    snprintf(r->verdict, sizeof r->verdict, "%s", str(e, "status"));
    if (!j) {
        snprintf(r->judged, sizeof r->judged, "-");
        snprintf(r->change, sizeof r->change, "-");
        snprintf(r->base, sizeof r->base, "-");
        snprintf(r->head, sizeof r->head, "-");
    } else {
        if (at_target)
            snprintf(r->judged, sizeof r->judged, "target only");
        else
            point_text(json_object_get(j, "point"), r->judged, sizeof r->judged);
        fmt_change(j, r->change, sizeof r->change);
        fmt_value(json_object_get(j, "base"), r->base, sizeof r->base);
        fmt_value(json_object_get(j, "head"), r->head, sizeof r->head);
    }
    fmt_target(json_object_get(e, "at"), r->target, sizeof r->target);
    complexity_text(e, r->complexity, sizeof r->complexity);
}

/* The cost is compared at the target alone (core-hours per epoch there). */
static int cost_row(const json_t *d, row *r)
{
    const json_t *cost = json_object_get(d, "cost");
    if (!json_is_object(cost))
        return 0;
    int counted = json_is_true(json_object_get(cost, "significant")) &&
                  num(cost, "change_pct") > 0 && json_is_true(json_object_get(d, "regression"));
    snprintf(r->verdict, sizeof r->verdict, "%s", counted ? "regression" : "reported");
    snprintf(r->judged, sizeof r->judged, "target");
    fmt_change(cost, r->change, sizeof r->change);
    fmt_value(json_object_get(cost, "base"), r->base, sizeof r->base);
    fmt_value(json_object_get(cost, "head"), r->head, sizeof r->head);
    fmt_target(cost, r->target, sizeof r->target);
    snprintf(r->complexity, sizeof r->complexity, "-");
    return 1;
}

static void header_lines(FILE *out, const json_t *d, const char *at)
{
    const json_t *b = json_object_get(d, "base"), *h = json_object_get(d, "head");
    fprintf(out,
            "perfcast ci-check: experiment %lld, base %s (model set %lld) -> head %s (model set "
            "%lld), metric %s\n",
            (long long)num(d, "experiment"), str(b, "ref"), (long long)num(b, "model_set"),
            str(h, "ref"), (long long)num(h, "model_set"), str(d, "metric"));
    fprintf(out,
            "A change counts where it was measured: at a measured point the 95%% intervals of base "
            "and head separate and the change exceeds %g%%. JUDGED AT names that point; CHANGE, "
            "BASE and HEAD are its numbers. The target %s lies beyond the measurements: its "
            "change is reported, not counted (n.s. = its intervals overlap).\n\n",
            num(d, "threshold_pct"), at);
}

static void text_row(FILE *out, const row *r, const char *prefix, const char *name)
{
    fprintf(out, "%-12s %-16s %-9s %-26s %-26s %-15s %-24s %s%s\n", r->verdict, r->judged,
            r->change, r->base, r->head, r->target, r->complexity, prefix, name);
}

static void text_entries(FILE *out, const json_t *arr, const char *prefix)
{
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e)
    {
        row r;
        entry_row(e, &r);
        text_row(out, &r, prefix, str(e, "name"));
    }
}

static void text_names(FILE *out, const json_t *arr, const char *verdict)
{
    size_t i;
    const json_t *v;
    row r = {.judged = "-", .change = "-", .base = "-", .head = "-", .target = "-",
             .complexity = "-"};
    snprintf(r.verdict, sizeof r.verdict, "%s", verdict);
    json_array_foreach(arr, i, v) text_row(out, &r, "", json_string_value(v));
}

void cicheck_print_text(FILE *out, const json_t *d)
{
    char at[200];
    point_text(json_object_get(d, "at"), at, sizeof at);
    header_lines(out, d, at);
    char target_head[64];
    snprintf(target_head, sizeof target_head, "AT %.60s", at);
    fprintf(out, "%-12s %-16s %-9s %-26s %-26s %-15s %-24s %s\n", "VERDICT", "JUDGED AT", "CHANGE",
            "BASE [95%]", "HEAD [95%]", target_head, "GROWTH", "NAME");
    text_entries(out, json_object_get(d, "application"), "application: ");
    text_entries(out, json_object_get(d, "callpaths"), "");
    row r;
    if (cost_row(d, &r))
        text_row(out, &r, "", "cost: core-h per epoch at the target");
    text_names(out, json_object_get(d, "appeared"), "appeared");
    text_names(out, json_object_get(d, "vanished"), "vanished");
    fprintf(out, "\n%s: %lld regression(s), %lld improvement(s) at the measured points; %lld "
                 "change(s) only beyond them (not counted)\n",
            json_is_true(json_object_get(d, "regression")) ? "REGRESSION" : "OK",
            (long long)num(d, "regressions"), (long long)num(d, "improvements"),
            (long long)num(d, "diverging"));
}

/* ---- Markdown ------------------------------------------------------------------- */

static void md_row(FILE *out, const row *r, const char *prefix, const char *name)
{
    int bold = !strcmp(r->verdict, "regression");
    fprintf(out, "| %s%s%s | %s | %s | %s | %s | %s | %s | %s`%s` |\n", bold ? "**" : "",
            r->verdict, bold ? "**" : "", r->judged, r->change, r->base, r->head, r->target,
            r->complexity, prefix, name);
}

static const char md_head[] = "| verdict | judged at | change | base [95%] | head [95%] | at "
                              "target | growth | name |\n"
                              "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n";

/* Rows of arr whose status is (unchanged == 0) not "unchanged", or (1) "unchanged". */
static int md_entries(FILE *out, const json_t *arr, const char *prefix, int unchanged)
{
    size_t i;
    const json_t *e;
    int n = 0;
    json_array_foreach(arr, i, e)
    {
        if ((strcmp(str(e, "status"), "unchanged") == 0) != unchanged)
            continue;
        if (out) {
            row r;
            entry_row(e, &r);
            md_row(out, &r, prefix, str(e, "name"));
        }
        n++;
    }
    return n;
}

void cicheck_print_markdown(FILE *out, const json_t *d)
{
    const json_t *b = json_object_get(d, "base"), *h = json_object_get(d, "head");
    const json_t *app = json_object_get(d, "application"), *cps = json_object_get(d, "callpaths");
    char at[200];
    point_text(json_object_get(d, "at"), at, sizeof at);
    int reg = json_is_true(json_object_get(d, "regression"));
    fprintf(out, "### perfcast: %s\n\n",
            reg ? ":x: scaling regression" : ":white_check_mark: no scaling regression");
    fprintf(out,
            "Base `%s` (model set %lld) → head `%s` (model set %lld), metric `%s`: **%lld "
            "regression(s), %lld improvement(s)** at the measured points; %lld change(s) only "
            "beyond them (not counted).\n\n",
            str(b, "ref"), (long long)num(b, "model_set"), str(h, "ref"),
            (long long)num(h, "model_set"), str(d, "metric"), (long long)num(d, "regressions"),
            (long long)num(d, "improvements"), (long long)num(d, "diverging"));
    int changed = md_entries(NULL, app, "", 0) + md_entries(NULL, cps, "", 0) +
                  (int)json_array_size(json_object_get(d, "appeared")) +
                  (int)json_array_size(json_object_get(d, "vanished"));
    row r;
    int has_cost = cost_row(d, &r);
    if (changed || has_cost) {
        fputs(md_head, out);
        md_entries(out, app, "application ", 0);
        md_entries(out, cps, "", 0);
        if (has_cost)
            md_row(out, &r, "", "cost: core-h per epoch");
        size_t i;
        const json_t *v;
        json_array_foreach(json_object_get(d, "appeared"), i, v)
            fprintf(out, "| appeared | | | | | | | `%s` |\n", json_string_value(v));
        json_array_foreach(json_object_get(d, "vanished"), i, v)
            fprintf(out, "| vanished | | | | | | | `%s` |\n", json_string_value(v));
    }
    int same = md_entries(NULL, app, "", 1) + md_entries(NULL, cps, "", 1);
    if (same) {
        fprintf(out, "\n<details><summary>%d unchanged</summary>\n\n%s", same, md_head);
        md_entries(out, app, "application ", 1);
        md_entries(out, cps, "", 1);
        fputs("\n</details>\n", out);
    }
    fprintf(out,
            "\nA change counts where it was measured: at the point in *judged at* the 95%% "
            "intervals separate and the change exceeds %g%%. *At target* is `%s`, beyond the "
            "measurements: reported, not counted (n.s. = its intervals overlap).\n",
            num(d, "threshold_pct"), at);
}
