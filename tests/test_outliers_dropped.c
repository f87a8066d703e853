/*
 * test_outliers_dropped.c — what the paper's treatment of the overheads
 * drops from a step, as the per-iteration analysis reports it
 * (execgraph/xg_overheads.h xg_ov_dropped, analysis/iteration.c):
 *   - a hand-made one-rank step (profiler overhead 0): six ops "B" without
 *     launches of 10 us and a seventh of 1,000 us (T5 {10 x6, 1000}: Q1 =
 *     Q3 = 10, the 1,000 us dropped), each starting where the previous
 *     ended but one, 500 us late (T1 {0 x6, 500}: the 500 us dropped). The
 *     step is 60 + 1000 + 500 = 1,560 us; dropped T1 500 us, T5 1,000 us,
 *     1,500 / 1,560 = 96.15% of it: the outliers_dropped warning;
 *   - the same step with its outliers kept: nothing dropped (null);
 *   - the DDP fixtures (tests/data/kineto/ddp128_rank*.json.gz): the
 *     samples of every type the treatment drops, at least the T1 gaps
 *     alone, each type within the step; both traces above 10% of a step,
 *     so both warned (rank 1's T1 gaps alone are 7.1%).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration.h"
#include "ingest/kineto_xg.h"
#include "tests/check.h"
#include "tests/warning_code.h"
#include "tests/trace_load.h"

#define US 1e-6

/* Seven ops "B" of one step; the fifth starts 500 us late, the last runs 1,000 us. */
static const char *hand_trace(void)
{
    static char buf[4096];
    int n = snprintf(buf, sizeof buf,
                     "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\","
                     "\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1560}");
    double ts = 0;
    for (int i = 0; i < 7; i++) {
        if (i == 4)
            ts += 500;
        double dur = i == 6 ? 1000 : 10;
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,"
                      "\"ts\":%g,\"dur\":%g}",
                      ts, dur);
        ts += dur;
    }
    snprintf(buf + n, sizeof buf - (size_t)n, "]}");
    return buf;
}

static double num(const json_t *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');
    if (!dot)
        return json_number_value(json_object_get(o, path));
    snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
    return num(json_object_get(o, key), dot + 1);
}

/* j as compact JSON, for a check's message (the last two kept). */
static const char *dump(const json_t *j)
{
    static char buf[2][1024];
    static int k;
    k ^= 1;
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    snprintf(buf[k], sizeof buf[k], "%s", s ? s : "-");
    free(s);
    return buf[k];
}

static void test_hand(void)
{
    xg_trace t;
    xg_graph g;
    xg_error err;
    check(trace_load_text(hand_trace(), &t, "hand") == 0 && xg_graph_build(&t, &g, &err) == 0,
          "hand trace");
    xg_ov_options po = {0, 0, 0};
    xg_ov_samples s;
    xg_ov_samples_init(&s, &po);
    xg_overheads ov;
    check(xg_ov_collect(&s, &g, &err) == 0 && xg_ov_summarise(&s, &ov, &err) == 0, "ov");
    xg_ov_samples_free(&s);
    double by[XG_NTYPES];
    double d = xg_ov_dropped(&ov, &g, 0, by);
    check(check_close(d, 1500 * US, 1e-12, 0) && check_close(by[XG_T1], 500 * US, 1e-12, 0) &&
              check_close(by[XG_T5], 1000 * US, 1e-12, 0) && by[XG_T2] == 0 && by[XG_T3] == 0 &&
              by[XG_T4] == 0,
          "dropped %g us: T1 %g, T5 %g (want 1500: 500, 1000)", d / US, by[XG_T1] / US,
          by[XG_T5] / US);
    xg_overheads_free(&ov);
    xg_graph_free(&g);

    iteration_opts o = {.prof = {0, 0, 0}};
    json_t *doc = iteration_analyse(&t, &o, &err);
    json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
    json_t *sum = json_object_get(doc, "summary");
    check(doc && check_close(num(s0, "outliers_dropped.seconds"), 1500 * US, 1e-12, 0) &&
              check_close(num(s0, "outliers_dropped.share"), 1500.0 / 1560, 1e-12, 0) &&
              check_close(num(s0, "outliers_dropped.by_type.T1"), 500 * US, 1e-12, 0) &&
              check_close(num(s0, "outliers_dropped.by_type.T5"), 1000 * US, 1e-12, 0) &&
              warning_has_code(json_object_get(sum, "warnings"), "outliers_dropped"),
          "the step's outliers_dropped and the warning: %s",
          dump(json_object_get(s0, "outliers_dropped")));
    json_decref(doc);

    o.prof.keep_outliers = 1;
    doc = iteration_analyse(&t, &o, &err);
    s0 = json_array_get(json_object_get(doc, "steps"), 0);
    sum = json_object_get(doc, "summary");
    check(doc && json_is_null(json_object_get(s0, "outliers_dropped")) &&
              !warning_has_code(json_object_get(sum, "warnings"), "outliers_dropped"),
          "outliers kept: none dropped, no warning");
    /* one step: nothing measures how a step varies */
    check(doc && warning_has_code(json_object_get(sum, "warnings"), "no_interval") &&
              json_is_null(json_object_get(s0, "interval")),
          "one step: no interval, and the warning");
    json_decref(doc);
    xg_trace_free(&t);
}

static void test_ddp(void)
{
    static const char *const files[] = {"tests/data/kineto/ddp128_rank0.json.gz",
                                        "tests/data/kineto/ddp128_rank1.json.gz"};
    for (int f = 0; f < 2; f++) {
        xg_trace t;
        xg_graph g;
        xg_error err;
        check(trace_load_file(files[f], &t) == 0 && xg_graph_build(&t, &g, &err) == 0, "%s",
              files[f]);
        xg_ov_options po = {2, 4, 0};
        xg_ov_samples s;
        xg_ov_samples_init(&s, &po);
        xg_overheads ov;
        check(xg_ov_collect(&s, &g, &err) == 0 && xg_ov_summarise(&s, &ov, &err) == 0, "ov");
        xg_ov_samples_free(&s);
        for (int st = 0; st < g.nsteps; st++) {
            double by[XG_NTYPES], total = 0;
            double d = xg_ov_dropped(&ov, &g, st, by);
            double len = (g.steps[st].end - g.steps[st].ts) * US;
            for (int ty = 0; ty < XG_NTYPES; ty++)
                total += by[ty];
            /* more than the T1 gaps alone (7.1% to 13.8% of a step) */
            check(check_close(d, total, 1e-12, 0) && by[XG_T1] > 0 && by[XG_T5] > 0 &&
                      d > 0.1 * len && d < len,
                  "%s step %d: %.1f ms dropped of %.1f ms (T1 %.1f, T5 %.1f)", files[f], st,
                  d * 1e3, len * 1e3, by[XG_T1] * 1e3, by[XG_T5] * 1e3);
            printf("%s step %d: %.1f ms dropped of %.1f ms (%.1f%%): T1 %.1f, T2 %.1f, T3 %.1f, "
                   "T4 %.1f, T5 %.1f ms\n",
                   files[f], st, d * 1e3, len * 1e3, 100 * d / len, by[XG_T1] * 1e3,
                   by[XG_T2] * 1e3, by[XG_T3] * 1e3, by[XG_T4] * 1e3, by[XG_T5] * 1e3);
        }
        xg_overheads_free(&ov);
        xg_graph_free(&g);
        iteration_opts o = {.prof = {2, 4, 0}};
        json_t *doc = iteration_analyse(&t, &o, &err);
        json_t *w = json_object_get(json_object_get(doc, "summary"), "warnings");
        check(warning_has_code(w, "outliers_dropped") &&
                  num(json_array_get(w, 0), "share") > 0.1,
              "%s: outliers_dropped warned: %s", files[f],
              dump(w));
        json_decref(doc);
        xg_trace_free(&t);
    }
}

int main(void)
{
    test_hand();
    test_ddp();
    return check_summary();
}
