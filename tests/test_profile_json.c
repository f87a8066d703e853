/*
 * test_profile_json.c — perfcast's JSON profile reader (ingest/profile_json.c):
 * a multi-rank, multi-step profile read back row by row, interning of many
 * callpaths, a large generated profile (200,000 metric values) whose totals
 * are known, and every kind of malformed input refused with the JSON path
 * (or line and offset) in the message and nothing left behind; the fault
 * reported does not depend on the order of an object's members.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/profile.h"
#include "tests/check.h"

static int is_zero(const profile *p)
{
    static const profile zero;
    return memcmp(p, &zero, sizeof(zero)) == 0;
}

/* Reads text from an exact-size copy (no NUL after it). */
static int read_text(const char *text, profile *p, ingest_error *err)
{
    size_t n = strlen(text);
    char *buf = malloc(n ? n : 1);
    memcpy(buf, text, n);
    int rc = ingest_profile_json(buf, n, p, err);
    free(buf);
    return rc;
}

static const char *valid_profile =
    "{\"point\":{\"ranks\":8,\"batch\":256.5},\"repetition\":3,\n"
    " \"ranks\":[\n"
    "  {\"rank\":1,\n"
    "   \"steps\":[\n"
    "    {\"phase\":\"train\",\"callpaths\":[\n"
    "      {\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":0.5,\"visits\":4}},\n"
    "      {\"name\":\"allreduce\",\"category\":\"comm\",\"metrics\":{\"time\":0.25,\"bytes\":1024}},\n"
    "      {\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":0.125,\"visits\":2}}]},\n"
    "    {\"phase\":\"validation\",\"callpaths\":[\n"
    "      {\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":0.0625}}]},\n"
    "    {\"callpaths\":[\n"
    "      {\"name\":\"memcpy\",\"category\":\"mem\",\"metrics\":{\"time\":1e-3,\"bytes\":4096}}]}],\n"
    "   \"between_steps\":[\n"
    "    {\"callpaths\":[]},\n"
    "    {\"callpaths\":[{\"name\":\"cudaLaunch\",\"category\":\"host\",\n"
    "                   \"metrics\":{\"time\":2,\"custom\":-3.5}}]}]},\n"
    "  {\"rank\":0,\"steps\":[{\"callpaths\":[\n"
    "      {\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":-0.0}}]},\n"
    "    {\"callpaths\":[\n"
    "      {\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":0.75}}]}]}]}\n";

typedef struct want_row {
    int rank, phase, step;
    const char *callpath, *metric;
    double value;
} want_row;

static void test_valid(void)
{
    profile p;
    ingest_error err;
    int rc = read_text(valid_profile, &p, &err);
    check(rc == 0, "valid profile read: %s", err.msg);
    if (rc != 0)
        return;
    check(p.nparams == 2, "nparams %d", p.nparams);
    if (p.nparams == 2) {
        check(strcmp(p.param_names[0], "ranks") == 0 && p.point[0] == 8, "param 0");
        check(strcmp(p.param_names[1], "batch") == 0 && p.point[1] == 256.5, "param 1");
    }
    check(p.repetition == 3, "repetition %d", p.repetition);
    check(p.nranks == 2, "nranks %d", p.nranks);

    static const char *cps[] = {"gemm", "allreduce", "memcpy", "cudaLaunch"};
    static const int cats[] = {PROFILE_COMP, PROFILE_COMM, PROFILE_MEM, PROFILE_HOST};
    check(p.ncallpaths == 4, "ncallpaths %d", p.ncallpaths);
    for (int i = 0; i < p.ncallpaths && i < 4; i++)
        check(strcmp(p.callpaths[i].name, cps[i]) == 0 && p.callpaths[i].category == cats[i],
              "callpath %d: %s/%d", i, p.callpaths[i].name, p.callpaths[i].category);
    static const char *metrics[] = {"time", "visits", "bytes", "custom"};
    check(p.nmetrics == 4, "nmetrics %d", p.nmetrics);
    for (int i = 0; i < p.nmetrics && i < 4; i++)
        check(strcmp(p.metrics[i], metrics[i]) == 0, "metric %d: %s", i, p.metrics[i]);

    /* sorted by (rank, phase, step, callpath, metric); gemm's two entries in
     * rank 1's first step summed: time 0.5 + 0.125, visits 4 + 2 */
    static const want_row want[] = {
        {0, PROFILE_TRAIN, 0, "gemm", "time", 0.0},
        {0, PROFILE_TRAIN, 1, "gemm", "time", 0.75},
        {1, PROFILE_TRAIN, 0, "gemm", "time", 0.625},
        {1, PROFILE_TRAIN, 0, "gemm", "visits", 6},
        {1, PROFILE_TRAIN, 0, "allreduce", "time", 0.25},
        {1, PROFILE_TRAIN, 0, "allreduce", "bytes", 1024},
        {1, PROFILE_TRAIN, 1, "memcpy", "time", 1e-3},
        {1, PROFILE_TRAIN, 1, "memcpy", "bytes", 4096},
        {1, PROFILE_VALIDATION, 0, "gemm", "time", 0.0625},
        {1, PROFILE_BETWEEN, 1, "cudaLaunch", "time", 2},
        {1, PROFILE_BETWEEN, 1, "cudaLaunch", "custom", -3.5},
    };
    size_t nwant = sizeof(want) / sizeof(want[0]);
    check(p.nrows == nwant, "nrows %zu, want %zu", p.nrows, nwant);
    for (size_t i = 0; i < p.nrows && i < nwant; i++) {
        const profile_row *r = &p.rows[i];
        const want_row *w = &want[i];
        check(r->rank == w->rank && r->phase == w->phase && r->step == w->step &&
                  strcmp(p.callpaths[r->callpath].name, w->callpath) == 0 &&
                  strcmp(p.metrics[r->metric], w->metric) == 0 && r->value == w->value,
              "row %zu: rank %d phase %d step %d %s %s %g; want %d %d %d %s %s %g", i, r->rank,
              r->phase, r->step, p.callpaths[r->callpath].name, p.metrics[r->metric], r->value,
              w->rank, w->phase, w->step, w->callpath, w->metric, w->value);
    }
    check(!signbit(p.rows[0].value), "-0.0 time stored as +0");
    profile_free(&p);
    check(is_zero(&p), "profile_free zeroes");
}

static void test_minimal(void)
{
    profile p;
    ingest_error err;
    const char *text = "{\"ranks\":[{\"rank\":7,\"steps\":[{\"callpaths\":[{\"name\":\"k\","
                       "\"category\":\"comp\",\"metrics\":{\"time\":3}}]}]}]}";
    int rc = read_text(text, &p, &err);
    check(rc == 0, "minimal profile: %s", err.msg);
    if (rc != 0)
        return;
    check(p.nparams == 0 && p.param_names == NULL && p.point == NULL, "no point: nparams 0");
    check(p.repetition == 1, "default repetition 1, got %d", p.repetition);
    check(p.nrows == 1 && p.rows[0].rank == 7 && p.rows[0].value == 3.0 &&
              p.rows[0].phase == PROFILE_TRAIN,
          "one row");
    profile_free(&p);
}

/* "levels": factor name -> level, kept as given (the service checks them
 * against the experiment); none when absent. */
static void test_levels(void)
{
    profile p;
    ingest_error err;
    const char *text = "{\"levels\":{\"dataloader\":\"dali\",\"precision\":\"fp16\"},"
                       "\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"k\","
                       "\"category\":\"comp\",\"metrics\":{\"time\":3}}]}]}]}";
    int rc = read_text(text, &p, &err);
    check(rc == 0, "levels: %s", err.msg);
    if (rc != 0)
        return;
    check(p.nlevels == 2, "two levels, got %d", p.nlevels);
    for (int i = 0; i < p.nlevels; i++) {
        const char *want = !strcmp(p.level_names[i], "dataloader")  ? "dali"
                           : !strcmp(p.level_names[i], "precision") ? "fp16"
                                                                      : "?";
        check(!strcmp(p.level_values[i], want), "%s = %s", p.level_names[i], p.level_values[i]);
    }
    profile_free(&p);
    text = "{\"levels\":{},\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":"
           "\"k\",\"category\":\"comp\",\"metrics\":{\"time\":3}}]}]}]}";
    rc = read_text(text, &p, &err);
    check(rc == 0 && p.nlevels == 0 && !p.level_names, "empty levels: none");
    if (rc == 0)
        profile_free(&p);
}

/* 3 ranks x 2 steps x 500 callpaths, each step listing them in a different
 * order: ids must follow first appearance, every cell one row. */
static void test_many_callpaths(void)
{
    enum { NC = 500 };
    size_t cap = 3u * 2u * NC * 80u + 1024u, n = 0;
    char *buf = malloc(cap);
    n += (size_t)snprintf(buf + n, cap - n, "{\"ranks\":[");
    for (int r = 0; r < 3; r++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", 2 - r);
        for (int s = 0; s < 2; s++) {
            n += (size_t)snprintf(buf + n, cap - n, "%s{\"callpaths\":[", s ? "," : "");
            for (int c = 0; c < NC; c++) {
                int id = (r == 0 && s == 0) ? c : (c * 7 + r + s) % NC;
                n += (size_t)snprintf(buf + n, cap - n,
                                      "%s{\"name\":\"kernel_%d\",\"category\":\"comp\","
                                      "\"metrics\":{\"time\":%d}}",
                                      c ? "," : "", id, id + 1);
            }
            n += (size_t)snprintf(buf + n, cap - n, "]}");
        }
        n += (size_t)snprintf(buf + n, cap - n, "]}");
    }
    n += (size_t)snprintf(buf + n, cap - n, "]}");
    profile p;
    ingest_error err;
    int rc = ingest_profile_json(buf, n, &p, &err);
    check(rc == 0, "many callpaths: %s", err.msg);
    free(buf);
    if (rc != 0)
        return;
    check(p.ncallpaths == NC && p.nrows == 3u * 2u * NC && p.nranks == 3,
          "%d callpaths, %zu rows", p.ncallpaths, p.nrows);
    int names_ok = 1, rows_ok = 1;
    char want[32];
    for (int c = 0; c < p.ncallpaths; c++) {
        snprintf(want, sizeof(want), "kernel_%d", c);
        names_ok &= strcmp(p.callpaths[c].name, want) == 0;
    }
    for (size_t i = 0; i < p.nrows; i++) {
        const profile_row *r = &p.rows[i];
        rows_ok &= r->value == r->callpath + 1;
        rows_ok &= r->rank == (int)(i / (2 * NC)) && r->step == (int)(i / NC % 2) &&
                   r->callpath == (int)(i % NC);
    }
    check(names_ok, "callpaths numbered by first appearance");
    check(rows_ok, "rows sorted, values follow their callpath");
    profile_free(&p);
}

/* Wraps one callpath entry, or the array of a step, into a full profile. */
#define CP(x) "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[" x "]}]}]}"
#define TIME(v) CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":" v "}}")
#define CPPATH "ranks[0].steps[0].callpaths[0]"

typedef struct bad_case {
    const char *what;
    const char *json;
    const char *want; /* substring of the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"empty input", "", "line 1"},
    {"truncated", "{\"ranks\": [", "line 1"},
    {"trailing garbage", CP("") " x", "line 1"},
    {"root is an array", "[1,2]", "expected a JSON object"},
    {"duplicate key", "{\"ranks\":[],\"ranks\":[]}", "duplicate"},
    {"NaN literal", TIME("NaN"), "line 1"},
    {"Infinity literal", TIME("Infinity"), "line 1"},
    {"huge exponent", TIME("1e999"), "overflow"},
    {"time is a string", TIME("\"1\""), CPPATH ".metrics.time: expected a finite number >= 0"},
    {"time is null", TIME("null"), CPPATH ".metrics.time: expected a finite number >= 0"},
    {"negative time", TIME("-1e-9"), CPPATH ".metrics.time: expected a finite number >= 0"},
    {"negative visits",
     CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":1,\"visits\":-2}}"),
     CPPATH ".metrics.visits: expected a finite number >= 0"},
    {"negative bytes", CP("{\"name\":\"k\",\"category\":\"mem\",\"metrics\":{\"bytes\":-1}}"),
     CPPATH ".metrics.bytes: expected a finite number >= 0"},
    {"other metric not a number",
     CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"flops\":true}}"),
     CPPATH ".metrics.flops: expected a finite number"},
    {"odd metric name quoted",
     CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"a b\":[]}}"),
     CPPATH ".metrics[\"a b\"]: expected a finite number"},
    {"empty metric name", CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"\":1}}"),
     CPPATH ".metrics[\"\"]: expected a non-empty name"},
    {"no metrics", CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{}}"),
     CPPATH ".metrics: expected at least one metric"},
    {"missing metrics", CP("{\"name\":\"k\",\"category\":\"comp\"}"), CPPATH ".metrics: missing"},
    {"metrics not an object", CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":[1]}"),
     CPPATH ".metrics: expected an object"},
    {"negative rank", "{\"ranks\":[{\"rank\":-1,\"steps\":[]}]}",
     "ranks[0].rank: expected an integer >= 0"},
    {"fractional rank", "{\"ranks\":[{\"rank\":1.5}]}", "ranks[0].rank: expected an integer >= 0"},
    {"rank too large", "{\"ranks\":[{\"rank\":4294967296}]}",
     "ranks[0].rank: expected an integer >= 0"},
    {"missing rank", "{\"ranks\":[{\"steps\":[]}]}", "ranks[0].rank: missing"},
    {"duplicate rank",
     "{\"ranks\":[{\"rank\":0},{\"rank\":1},{\"rank\":0,\"steps\":[{\"callpaths\":[]}]}]}",
     "ranks[2].rank: rank 0 appears twice (also ranks[0])"},
    {"unknown category", CP("{\"name\":\"k\",\"category\":\"gpu\",\"metrics\":{\"time\":1}}"),
     CPPATH ".category: expected \"comp\", \"comm\", \"mem\" or \"host\""},
    {"category not a string", CP("{\"name\":\"k\",\"category\":0,\"metrics\":{\"time\":1}}"),
     CPPATH ".category: expected"},
    {"missing category", CP("{\"name\":\"k\",\"metrics\":{\"time\":1}}"),
     CPPATH ".category: missing"},
    {"two categories for one callpath",
     "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"k\",\"category\":\"comp\","
     "\"metrics\":{\"time\":1}}]},{\"callpaths\":[{\"name\":\"k\",\"category\":\"comm\","
     "\"metrics\":{\"time\":1}}]}]}]}",
     "ranks[0].steps[1].callpaths[0].category: \"comm\" but callpath \"k\" is \"comp\""},
    {"unknown phase",
     "{\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":\"test\",\"callpaths\":[]}]}]}",
     "ranks[0].steps[0].phase: expected \"train\" or \"validation\""},
    {"phase between is not a step phase",
     "{\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":\"between\",\"callpaths\":[]}]}]}",
     "ranks[0].steps[0].phase: expected"},
    {"missing name", CP("{\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     CPPATH ".name: missing"},
    {"empty name", CP("{\"name\":\"\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     CPPATH ".name: expected a non-empty name"},
    {"name not a string", CP("{\"name\":3,\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     CPPATH ".name: expected a string"},
    {"NUL in name", CP("{\"name\":\"a\\u0000b\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     "line 1"},
    {"repetition 0", "{\"repetition\":0,\"ranks\":[{\"rank\":0}]}", "repetition: expected an integer >= 1"},
    {"repetition fractional", "{\"repetition\":1.5,\"ranks\":[{\"rank\":0}]}",
     "repetition: expected an integer >= 1"},
    {"repetition string", "{\"repetition\":\"2\",\"ranks\":[{\"rank\":0}]}",
     "repetition: expected an integer >= 1"},
    {"point value not a number", "{\"point\":{\"ranks\":\"8\"},\"ranks\":[{\"rank\":0}]}",
     "point.ranks: expected a finite number"},
    {"point value overflows", "{\"point\":{\"ranks\":-1e400},\"ranks\":[{\"rank\":0}]}",
     "overflow"},
    {"point not an object", "{\"point\":[8],\"ranks\":[{\"rank\":0}]}", "point: expected an object"},
    {"levels not an object", "{\"levels\":[\"dali\"],\"ranks\":[{\"rank\":0}]}",
     "levels: expected an object"},
    {"level not a string", "{\"levels\":{\"dataloader\":7},\"ranks\":[{\"rank\":0}]}",
     "levels.dataloader: expected a string"},
    {"empty level", "{\"levels\":{\"dataloader\":\"\"},\"ranks\":[{\"rank\":0}]}",
     "levels.dataloader: expected a non-empty name"},
    {"missing ranks", "{\"point\":{\"ranks\":8}}", "missing \"ranks\""},
    {"zero ranks", "{\"ranks\":[]}", "ranks: expected at least one rank"},
    {"ranks not an array", "{\"ranks\":{}}", "ranks: expected an array"},
    {"rank not an object", "{\"ranks\":[3]}", "ranks[0]: expected an object"},
    {"steps not an array", "{\"ranks\":[{\"rank\":0,\"steps\":{}}]}",
     "ranks[0].steps: expected an array"},
    {"missing callpaths", "{\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":\"train\"}]}]}",
     "ranks[0].steps[0].callpaths: missing"},
    {"callpath not an object", CP("1"), CPPATH ": expected an object"},
    {"between gap with a phase",
     "{\"ranks\":[{\"rank\":0,\"between_steps\":[{\"phase\":\"train\",\"callpaths\":[]}]}]}",
     "ranks[0].between_steps[0]: unknown member \"phase\""},
    {"unknown top-level member", "{\"ranks\":[{\"rank\":0}],\"repetiton\":2}",
     "unknown member \"repetiton\""},
    {"unknown callpath member",
     CP("{\"name\":\"k\",\"category\":\"comp\",\"metric\":{},\"metrics\":{\"time\":1}}"),
     CPPATH ": unknown member \"metric\""},
    {"no measurements at all", "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[]}]}]}",
     "no callpath has a metric"},
    {"integer too big for a long long", TIME("99999999999999999999"), "line 1"},
    {"integer too big in an ignored value",
     "{\"ranks\":[{\"rank\":0}],\"x\":[-99999999999999999999]}", "too big negative integer"},
    {"repetition 1.0 is not an integer", "{\"repetition\":1.0,\"ranks\":[{\"rank\":0}]}",
     "repetition: expected an integer >= 1"},
    {"rank 0e0 is not an integer", "{\"ranks\":[{\"rank\":0e0}]}",
     "ranks[0].rank: expected an integer >= 0"},
    {"duplicate metric", CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":1,\"time\":2}}"),
     "duplicate object key"},
    {"duplicate callpath member",
     CP("{\"name\":\"k\",\"name\":\"j\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     "duplicate object key"},
    {"duplicate unknown member", "{\"ranks\":[{\"rank\":0}],\"x\":1,\"x\":2}",
     "duplicate object key"},
    {"duplicate key in an ignored value",
     "{\"ranks\":[{\"rank\":0}],\"x\":[{\"a\":1,\"b\":{\"c\":1,\"c\":1}}]}",
     "duplicate object key"},
    {"duplicate level", "{\"levels\":{\"a\":\"x\",\"a\":\"y\"},\"ranks\":[{\"rank\":0}]}",
     "duplicate object key"},
    {"duplicate point parameter", "{\"point\":{\"p\":1,\"p\":1},\"ranks\":[{\"rank\":0}]}",
     "duplicate object key"},
    {"lone high surrogate", CP("{\"name\":\"a\\ud800b\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     "line 1"},
    {"lone low surrogate", CP("{\"name\":\"a\\udc00\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
     "line 1"},
    {"unterminated string after the value", CP("{\"name\":\"k\",\"category\":\"comp\","
                                            "\"metrics\":{\"time\":1}}") " \"x", "line 1"},
    {"scalar at the top", "7", "line 1"},
    {"syntax error after a semantic fault", "{\"repetition\":0,\"ranks\":[{\"rank\":0}],}", "line 1"},
    {"sum over a step overflows",
     CP("{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":1.5e308}},"
        "{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":1.5e308}}"),
     "ranks[0].steps[0].callpaths[1].metrics.time: the sum over the step overflows"},
};

/* A surrogate pair is one character; names hold it as UTF-8. */
static void test_surrogate_pair(void)
{
    profile p;
    ingest_error err;
    int rc = read_text(CP("{\"name\":\"\\ud83d\\ude00\",\"category\":\"comp\","
                          "\"metrics\":{\"time\":1}}"), &p, &err);
    check(rc == 0 && strcmp(p.callpaths[0].name, "\xf0\x9f\x98\x80") == 0,
          "surrogate pair: %s", rc ? err.msg : p.callpaths[0].name);
    if (rc == 0)
        profile_free(&p);
}

/* Of several faults, the first in the order of the checks is reported
 * (point, repetition, levels, ranks; within an object its members in a fixed
 * order), whatever the order of the members in the text. */
static void test_fault_order(void)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"ranks\":[{\"rank\":-1}],\"repetition\":0}", "repetition: expected"},
        {"{\"ranks\":[{\"rank\":0}],\"levels\":7,\"point\":[]}", "point: expected"},
        {"{\"ranks\":[{\"rank\":-1}],\"bogus\":1}", "unknown member \"bogus\""},
        {"{\"ranks\":[{\"steps\":[{\"callpaths\":7}],\"rank\":-1}]}",
         "ranks[0].rank: expected an integer >= 0"},
        {"{\"ranks\":[{\"steps\":[{\"callpaths\":7,\"phase\":\"x\"}],\"rank\":0}]}",
         "ranks[0].steps[0].phase: expected"},
        {"{\"ranks\":[{\"rank\":0,\"between_steps\":7,\"steps\":7}]}",
         "ranks[0].steps: expected an array"},
        {CP("{\"metrics\":{\"time\":-1},\"category\":\"x\",\"name\":\"k\"}"),
         CPPATH ".category: expected"},
        {CP("{\"metrics\":{\"time\":-1},\"name\":\"k\"}"), CPPATH ".category: missing"},
        {"{\"ranks\":[{\"rank\":1},{\"rank\":0,\"x\":1}]}", "ranks[1]: unknown member \"x\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        profile p;
        ingest_error err;
        int rc = read_text(cases[i].json, &p, &err);
        check(rc == -1 && strstr(err.msg, cases[i].want) != NULL && err.offset == -1,
              "fault order %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
        if (rc == 0)
            profile_free(&p);
    }
}

/* 4 ranks x 500 steps x 50 callpaths x 2 metrics = 200,000 values, with the
 * members of each callpath in varying order and rank numbers given after
 * their steps: totals per metric and the row count are known exactly. */
static void test_large(void)
{
    enum { NR = 4, NS = 500, NC = 50 };
    size_t cap = (size_t)NR * NS * NC * 96 + 4096, n = 0;
    char *buf = malloc(cap);
    n += (size_t)snprintf(buf + n, cap - n, "{\"repetition\":2,\"ranks\":[");
    for (int r = 0; r < NR; r++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s{\"steps\":[", r ? "," : "");
        for (int s = 0; s < NS; s++) {
            n += (size_t)snprintf(buf + n, cap - n, "%s{\"callpaths\":[", s ? "," : "");
            for (int c = 0; c < NC; c++)
                n += (size_t)snprintf(buf + n, cap - n,
                                      (c + s) % 2 ? "%s{\"name\":\"k%d\",\"category\":\"comp\","
                                                    "\"metrics\":{\"time\":%d.25,\"visits\":%d}}"
                                                  : "%s{\"metrics\":{\"time\":%d.25,\"visits\":"
                                                    "%d},\"category\":\"comp\",\"name\":\"k%d\"}",
                                      c ? "," : "", (c + s) % 2 ? c : c % 7 + 1,
                                      (c + s) % 2 ? c % 7 + 1 : 3, (c + s) % 2 ? 3 : c);
            n += (size_t)snprintf(buf + n, cap - n, "],\"phase\":\"%s\"}",
                                  s % 5 == 4 ? "validation" : "train");
        }
        n += (size_t)snprintf(buf + n, cap - n, "],\"rank\":%d}", NR - 1 - r);
    }
    n += (size_t)snprintf(buf + n, cap - n, "]}");
    profile p;
    ingest_error err;
    int rc = ingest_profile_json(buf, n, &p, &err);
    free(buf);
    check(rc == 0, "large profile: %s", err.msg);
    if (rc != 0)
        return;
    check(p.nrows == (size_t)NR * NS * NC * 2 && p.ncallpaths == NC && p.nmetrics == 2 &&
              p.nranks == NR && p.repetition == 2,
          "large: %zu rows, %d callpaths, %d metrics", p.nrows, p.ncallpaths, p.nmetrics);
    double time = 0, visits = 0;
    size_t validation = 0, last_step_ok = 1;
    for (size_t i = 0; i < p.nrows; i++) {
        const profile_row *r = &p.rows[i];
        if (strcmp(p.metrics[r->metric], "time") == 0)
            time += r->value;
        else
            visits += r->value;
        validation += r->phase == PROFILE_VALIDATION;
        last_step_ok &= r->step < (r->phase == PROFILE_VALIDATION ? NS / 5 : NS - NS / 5);
    }
    /* time: every callpath c contributes c % 7 + 1 + 0.25 per step and rank; visits 3 */
    double per_step = 0;
    for (int c = 0; c < NC; c++)
        per_step += c % 7 + 1 + 0.25;
    check(time == per_step * NR * NS, "time total %.17g, want %.17g", time, per_step * NR * NS);
    check(visits == 3.0 * NR * NS * NC, "visits total %.17g", visits);
    check(validation == (size_t)NR * (NS / 5) * NC * 2 && last_step_ok,
          "validation rows %zu; steps numbered per phase", validation);
    check(p.rows[0].rank == 0 && p.rows[p.nrows - 1].rank == NR - 1, "ranks given after steps");
    profile_free(&p);
}

/* More distinct metric names than the reader looks up before copying one
 * again, cycling: each still one metric, numbered by first appearance. */
static void test_many_metrics(void)
{
    enum { NM = 20, NC = 60 };
    char buf[NC * 120 + 256];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[");
    for (int c = 0; c < NC; c++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "%s{\"name\":\"k%d\",\"category\":\"comp\",\"metrics\":{\"m%d\":%d,"
                              "\"m%d\":1}}",
                              c ? "," : "", c, (c * 3) % NM, c, (c * 3 + 1) % NM);
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "]}]}]}");
    profile p;
    ingest_error err;
    int rc = ingest_profile_json(buf, n, &p, &err);
    check(rc == 0, "many metrics: %s", err.msg);
    if (rc != 0)
        return;
    int order_ok = p.nmetrics == NM;
    char want[16];
    for (int m = 0; m < p.nmetrics && order_ok; m++) {
        snprintf(want, sizeof(want), "m%d", m % 2 == 0 ? (m / 2 * 3) % NM : (m / 2 * 3 + 1) % NM);
        order_ok = m >= 12 || strcmp(p.metrics[m], want) == 0;
    }
    check(order_ok, "%d metrics in order of first appearance", p.nmetrics);
    double total = 0;
    for (size_t i = 0; i < p.nrows; i++)
        total += p.rows[i].value;
    check(p.nrows == 2 * NC && total == NC * (NC - 1) / 2 + NC, "%zu rows, total %g", p.nrows,
          total);
    profile_free(&p);
}

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const bad_case *c = &bad_cases[i];
        profile p;
        ingest_error err;
        int rc = read_text(c->json, &p, &err);
        check(rc == -1, "%s: accepted", c->what);
        check(is_zero(&p), "%s: profile not zeroed", c->what);
        check(strstr(err.msg, c->want) != NULL, "%s: message \"%s\" lacks \"%s\"", c->what,
              err.msg, c->want);
        if (rc == 0)
            profile_free(&p);
    }
}

/* The line and byte offset of a syntax error come through. */
static void test_syntax_position(void)
{
    profile p;
    ingest_error err;
    const char *text = "{\n  \"ranks\": [\n    {\"rank\": 0,, }\n  ]\n}\n";
    check(read_text(text, &p, &err) == -1, "syntax error refused");
    check(err.line == 3, "syntax error line %ld", err.line);
    long comma = (long)(strstr(text, ",,") - text);
    check(err.offset >= comma && err.offset <= comma + 2, "syntax error offset %ld near %ld",
          err.offset, comma);
    check(strncmp(err.msg, "line 3", 6) == 0, "message starts with the line: %s", err.msg);
}

static char *long_name_profile(size_t n)
{
    const char *pre = "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"";
    const char *post = "\",\"category\":\"comp\",\"metrics\":{\"time\":1}}]}]}]}";
    char *s = malloc(strlen(pre) + n + strlen(post) + 1);
    strcpy(s, pre);
    memset(s + strlen(pre), 'x', n);
    strcpy(s + strlen(pre) + n, post);
    return s;
}

static void test_limits(void)
{
    profile p;
    ingest_error err;
    char *ok = long_name_profile(4096), *too_long = long_name_profile(4097);
    int rc = read_text(ok, &p, &err);
    check(rc == 0 && p.ncallpaths == 1 && strlen(p.callpaths[0].name) == 4096,
          "4096-byte name accepted: %s", err.msg);
    if (rc == 0)
        profile_free(&p);
    check(read_text(too_long, &p, &err) == -1 && is_zero(&p) &&
              strstr(err.msg, CPPATH ".name: name longer than 4096 bytes") != NULL,
          "4097-byte name refused: %s", err.msg);
    free(ok);
    free(too_long);

    /* deep nesting inside a value: refused before the parser sees it */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    check(read_text(deep, &p, &err) == -1 && strstr(err.msg, "nested deeper") != NULL &&
              err.offset == 32,
          "deep nesting refused: %s (offset %ld)", err.msg, err.offset);
    free(deep);
    /* brackets inside strings do not count */
    char name[200];
    memset(name, '[', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    char text[512];
    snprintf(text, sizeof(text), CP("{\"name\":\"%s\",\"category\":\"comp\",\"metrics\":{\"time\":1}}"),
             name);
    rc = read_text(text, &p, &err);
    check(rc == 0, "brackets in a string are not nesting: %s", err.msg);
    if (rc == 0)
        profile_free(&p);
}

/* 1 when s is well-formed UTF-8 without control characters. */
static int clean_utf8(const char *msg)
{
    const unsigned char *s = (const unsigned char *)msg;
    while (*s) {
        int n = *s < 0x80 ? 1 : *s >= 0xC2 && *s <= 0xDF ? 2 : *s >= 0xE0 && *s <= 0xEF ? 3
              : *s >= 0xF0 && *s <= 0xF4 ? 4 : 0;
        if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F)))
            return 0;
        for (int i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return 0;
        s += n;
    }
    return 1;
}

/* Messages go into JSON problem documents and log lines: no raw bytes of
 * the input that are not UTF-8, no cut multibyte characters. */
static void test_message_encoding(void)
{
    profile p;
    ingest_error err;
    /* 30 x "é" (2 bytes each): the 40-byte cut lands on a character boundary */
    char name[61 + 1] = {0}, text[512];
    for (int i = 0; i < 30; i++)
        memcpy(name + 2 * i, "\xc3\xa9", 2);
    name[60] = 'x';
    snprintf(text, sizeof(text),
             "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"%s\",\"category\":"
             "\"comp\",\"metrics\":{\"time\":1}}]},{\"callpaths\":[{\"name\":\"%s\",\"category\":"
             "\"mem\",\"metrics\":{\"time\":1}}]}]}]}",
             name, name);
    check(read_text(text, &p, &err) == -1 && strstr(err.msg, "\"mem\" but callpath") &&
              clean_utf8(err.msg),
          "long multibyte name quoted whole characters: %s", err.msg);
    /* shift by one byte so a naive 40-byte cut would split a character */
    name[0] = 'a';
    memmove(name + 1, name + 2, 59);
    name[59] = '\0';
    snprintf(text, sizeof(text),
             "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"k\",\"category\":"
             "\"comp\",\"metrics\":{\"%s\":\"x\"}}]}]}]}",
             name);
    check(read_text(text, &p, &err) == -1 && clean_utf8(err.msg) && !strchr(err.msg, '?'),
          "odd cut: %s", err.msg);
    /* invalid UTF-8 and control bytes in the input */
    check(read_text("{\"ranks\":[{\"rank\":0}],\"\xff\xfe\":1}", &p, &err) == -1 &&
              clean_utf8(err.msg),
          "invalid UTF-8 input: %s", err.msg);
    check(read_text("{\"ranks\":\x01\x02}", &p, &err) == -1 && clean_utf8(err.msg),
          "control bytes: %s", err.msg);
}

static void test_names(void)
{
    check(strcmp(profile_category_name(PROFILE_COMP), "comp") == 0, "comp");
    check(strcmp(profile_category_name(PROFILE_COMM), "comm") == 0, "comm");
    check(strcmp(profile_category_name(PROFILE_MEM), "mem") == 0, "mem");
    check(strcmp(profile_category_name(PROFILE_HOST), "host") == 0, "host");
    check(profile_category_name(4) == NULL && profile_category_name(-1) == NULL, "bad category");
    for (int c = 0; c <= PROFILE_HOST; c++)
        check(profile_category_from_name(profile_category_name(c)) == c, "round trip %d", c);
    check(profile_category_from_name("Comp") == -1 && profile_category_from_name("") == -1,
          "unknown category names");
    check(strcmp(profile_phase_name(PROFILE_TRAIN), "train") == 0, "train");
    check(strcmp(profile_phase_name(PROFILE_VALIDATION), "validation") == 0, "validation");
    check(strcmp(profile_phase_name(PROFILE_BETWEEN), "between") == 0, "between");
    check(profile_phase_name(3) == NULL, "bad phase");
}

int main(void)
{
    test_valid();
    test_minimal();
    test_levels();
    test_many_callpaths();
    test_bad();
    test_surrogate_pair();
    test_fault_order();
    test_large();
    test_many_metrics();
    test_syntax_position();
    test_limits();
    test_message_encoding();
    test_names();
    return check_summary();
}
