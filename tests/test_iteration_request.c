/*
 * test_iteration_request.c — the request documents of the per-iteration
 * analyses and their size caps (analysis/iteration_request.h), without a
 * server: each option read, each fault answered with its status and member,
 * the caps' defaults, and a real trace read under an events cap one short
 * of its events refused 413 naming the cap, and read whole at its events.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "analysis/iteration_predict.h"
#include "analysis/iteration_request.h"
#include "ingest/kineto_xg.h"
#include "tests/check.h"

static json_t *doc(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    check(j != NULL, "test document: %s", text);
    return j;
}

static void test_trace_options(void)
{
    json_t *d = doc("{\"profiler_overhead_us\":{\"cpu\":1.5,\"gpu\":0},\"keep_outliers\":true,"
                    "\"top\":7,\"kernel_times\":{\"k\":{\"scale\":0.5}}}");
    iteration_opts o = {0};
    xg_kt_entry *kt = NULL;
    an_problem p;
    check(iteration_request_trace(d, &o, &kt, &p) == 0 && o.prof.cpu_profiler_us == 1.5 &&
              o.prof.gpu_profiler_us == 0 && o.prof.keep_outliers == 1 && o.top == 7 &&
              o.nkt == 1 && kt && !strcmp(kt[0].name, "k") && kt[0].scale == 0.5,
          "every option read");
    free(kt);
    json_decref(d);
    /* none: the defaults (xg_ov_options_default), top 0 */
    iteration_opts none = {0};
    xg_ov_options def;
    xg_ov_options_default(&def);
    check(iteration_request_trace(NULL, &none, &kt, &p) == 0 && none.top == 0 && !kt &&
              none.prof.cpu_profiler_us == def.cpu_profiler_us && !none.prof.keep_outliers,
          "no body: the defaults");
    const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"profiler_overhead_us\":{\"cpu\":-1}}", "profiler_overhead_us.cpu"},
        {"{\"profiler_overhead_us\":{\"gpu\":\"4\"}}", "profiler_overhead_us.gpu"},
        {"{\"keep_outliers\":1}", "keep_outliers"},
        {"{\"top\":0}", "top"},
        {"{\"top\":1001}", "top"},
        {"{\"kernel_times\":[1]}", "kernel_times"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        d = doc(bad[i].body);
        iteration_opts b = {0};
        kt = NULL;
        int rc = iteration_request_trace(d, &b, &kt, &p);
        check(rc < 0 && p.status == 400 && !strcmp(p.field, bad[i].field),
              "%s: want 400 %s, got %d %s", bad[i].body, bad[i].field, p.status, p.field);
        free(kt);
        json_decref(d);
    }
}

static void test_model_request(void)
{
    json_t *d = doc("{\"profiles\":[{\"profile\":3,\"value\":64},{\"profile\":4,\"value\":128}],"
                    "\"at\":256,\"method\":\"kernel_names\",\"top\":3}");
    iteration_opts o = {0};
    int method;
    double at, x;
    size_t n;
    int64_t id;
    an_problem p;
    check(iteration_request_model(d, &o, &method, &at, &n, &p) == 0 && n == 2 && at == 256 &&
              method == ITERATION_BY_KERNEL_NAMES && o.top == 3,
          "the model's request read");
    double m = 0;
    check(iteration_request_model_entry(d, 1, &id, &x, &m, &p) == 0 && id == 4 && x == 128 &&
              isnan(m),
          "entry 1: profile 4 at 128, no measured step");
    json_decref(d);
    d = doc("{\"profiles\":[{\"profile\":3,\"value\":64},{\"profile\":4,\"value\":128,"
            "\"measured_step\":0.0125}],\"at\":256}");
    check(iteration_request_model(d, &o, &method, &at, &n, &p) == 0 &&
              iteration_request_model_entry(d, 1, &id, &x, &m, &p) == 0 && m == 0.0125,
          "entry 1's measured step read: %g", m);
    json_decref(d);
    const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"profiles\":[{\"profile\":3,\"value\":1}],\"at\":2}", "profiles"},
        {"{\"profiles\":[{\"profile\":3,\"value\":1},{\"profile\":4,\"value\":2}],\"at\":0}", "at"},
        {"{\"profiles\":[{\"profile\":3,\"value\":1},{\"profile\":4,\"value\":2}],\"at\":2,"
         "\"method\":\"guess\"}",
         "method"},
        {"{\"profiles\":[{\"profile\":3,\"value\":1},{\"profile\":4,\"value\":2,"
         "\"measured_step\":-1}],\"at\":2}",
         "profiles[1].measured_step"},
        {"{\"profiles\":[{\"profile\":3,\"value\":1},{\"profile\":4,\"value\":2,"
         "\"measured_step\":true}],\"at\":2}",
         "profiles[1].measured_step"},
        {"{\"profiles\":[{\"profile\":3,\"value\":1,\"measured_step\":0.01},{\"profile\":4,"
         "\"value\":2}],\"at\":2,\"overheads\":\"a100\"}",
         "profiles[0].measured_step"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        d = doc(bad[i].body);
        check(iteration_request_model(d, &o, &method, &at, &n, &p) < 0 && p.status == 400 &&
                  !strcmp(p.field, bad[i].field),
              "%s: want 400 %s, got %d %s", bad[i].body, bad[i].field, p.status, p.field);
        json_decref(d);
    }
    d = doc("{\"profiles\":[{\"profile\":3,\"value\":1},{\"profile\":-4,\"value\":2}]}");
    check(iteration_request_model_entry(d, 1, &id, &x, NULL, &p) < 0 &&
              !strcmp(p.field, "profiles[1]"),
          "a bad entry named: %s", p.field);
    json_decref(d);
}

static void test_set_request(void)
{
    const char *name;
    xg_ov_options prof;
    an_problem p;
    json_t *d = doc("{\"name\":\"a100\",\"profiles\":[1,2]}");
    size_t n;
    int64_t id;
    check(iteration_request_set(d, &name, &prof, &p) == 0 && !strcmp(name, "a100") &&
              iteration_request_set_ids(json_object_get(d, "profiles"), &n, &p) == 0 && n == 2 &&
              iteration_request_set_id(json_object_get(d, "profiles"), 1, &id, &p) == 0 &&
              id == 2,
          "a set's request read");
    json_decref(d);
    d = doc("{\"name\":\"a100\"}");
    check(iteration_request_set(d, &name, &prof, &p) < 0 && !strcmp(p.field, "profiles"),
          "neither profiles nor set: %s", p.field);
    json_decref(d);
    d = doc("{\"name\":\"\",\"set\":{}}");
    check(iteration_request_set(d, &name, &prof, &p) < 0 && !strcmp(p.field, "name"),
          "an empty name");
    json_decref(d);
    d = doc("[1,\"x\"]");
    check(iteration_request_set_id(d, 1, &id, &p) < 0 && !strcmp(p.field, "profiles[1]"),
          "an id that is not one");
    json_decref(d);
    d = doc("[]");
    check(iteration_request_set_ids(d, &n, &p) < 0 && !strcmp(p.field, "profiles"),
          "no ids");
    json_decref(d);
    int ntraces;
    d = doc("{\"stats\":\"no\"}");
    check(!iteration_request_given_set(d, &ntraces, &p) && p.status == 400 &&
              !strcmp(p.field, "set"),
          "a given set that is not one: 400 set");
    json_decref(d);
}

static void test_caps(void)
{
    iteration_caps c = iteration_caps_effective((iteration_caps){0, 0});
    check(c.events == IT_DEFAULT_MAX_EVENTS && c.bytes == IT_DEFAULT_MAX_BYTES, "defaults");
    an_problem p;
    iteration_caps small = {.events = 100, .bytes = 1000};
    check(iteration_caps_bytes(&small, 7, 1000, "profiles[2]", &p) == 0, "at the bytes cap: in");
    check(iteration_caps_bytes(&small, 7, 1001, "profiles[2]", &p) < 0 && p.status == 413 &&
              !strcmp(p.field, "profiles[2]") && strstr(p.msg, "PERFCAST_MAX_ITERATION_BYTES") &&
              strstr(p.msg, "1001") && strstr(p.msg, "profile 7"),
          "one byte over: 413 naming the cap: %s", p.msg);
    check(iteration_caps_room(&small, 0) == 100 && iteration_caps_room(&small, 60) == 40 &&
              iteration_caps_room(&small, 100) == 1,
          "room left of the events cap");
}

/* A real trace under an events cap one short of its events: refused as
 * over the cap; at its events: read whole. */
static void test_events_cap_on_trace(void)
{
    const char *file = "tests/data/kineto/ddp128_rank0.json.gz";
    xg_trace t;
    xg_error err;
    int fd = open(file, O_RDONLY);
    ingest_input in = {.fd = fd};
    xg_trace_init(&t);
    int rc = iteration_load(&in, 1, &t, &err);
    long long n = (long long)t.n;
    xg_trace_free(&t);
    close(fd);
    check(rc == 0 && n > 1000, "%s read: %lld events", file, n);
    for (int over = 1; over >= 0; over--) {
        iteration_caps c = {.events = n - over};
        fd = open(file, O_RDONLY);
        in = (ingest_input){.fd = fd};
        xg_trace_init(&t);
        t.max_events = iteration_caps_room(&c, 0);
        rc = iteration_load(&in, 1, &t, &err);
        an_problem p;
        int hit = rc < 0 && iteration_caps_events_hit(&c, &t, 9, "profiles[0]", &p);
        if (over)
            check(hit && p.status == 413 && strstr(p.msg, "PERFCAST_MAX_ITERATION_EVENTS") &&
                      !strcmp(p.field, "profiles[0]"),
                  "a cap one short: 413 naming the cap (%s)", rc < 0 ? err.msg : "read whole");
        else
            check(rc == 0 && (long long)t.n == n, "at its events: read whole (%s)",
                  rc < 0 ? err.msg : "");
        xg_trace_free(&t);
        close(fd);
    }
}

static void test_breakdown_view(void)
{
    json_t *d = doc("{\"profile\":5,\"rank\":0,\"events\":9,\"steps\":[{\"index\":1,\"label\":"
                    "\"ProfilerStep#1\",\"measured\":2,\"breakdown\":{\"idle\":1},"
                    "\"efficiency\":null}],\"breakdown\":{\"idle\":3},\"efficiency\":{},"
                    "\"warnings\":[\"outliers_dropped: host time dropped as outliers of its "
                    "overheads (T1-T5) is 12.6% of a measured step\",\"3 device events without "
                    "a correlation id\"]}");
    json_t *v = iteration_breakdown_view(d);
    json_t *s0 = json_array_get(json_object_get(v, "steps"), 0);
    json_t *w = json_object_get(v, "warnings");
    check(json_integer_value(json_object_get(v, "profile")) == 5 && !json_object_get(v, "events") &&
              s0 && !json_object_get(s0, "measured") &&
              json_integer_value(json_object_get(json_object_get(s0, "breakdown"), "idle")) == 1,
          "the breakdown view keeps the breakdowns and drops the rest");
    /* the prediction's warning goes with the prediction; the trace's stays */
    check(json_array_size(w) == 1 &&
              !strncmp(json_string_value(json_array_get(w, 0)) ?: "", "3 device events", 15),
          "the breakdown view keeps the trace's warnings, not the prediction's (%zu)",
          json_array_size(w));
    json_decref(v);
}

int main(void)
{
    test_trace_options();
    test_model_request();
    test_set_request();
    test_caps();
    test_events_cap_on_trace();
    test_breakdown_view();
    return check_summary();
}
