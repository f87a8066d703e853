/*
 * test_ingest_phase.c — validation steps in profiler traces (ingest/phase.h,
 * ingest/stepsum.c, ingest/kineto.c): the name patterns, steps inside a
 * record_function range named "validation" becoming phase validation,
 * operator names that merely contain "eval" not counting, custom patterns,
 * and the upload's override of every step's phase.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ingest/phase.h"
#include "ingest/trace.h"
#include "tests/check.h"

static void test_patterns(void)
{
    ingest_phase_patterns p;
    ingest_phase_compile(NULL, &p);
    check(p.n == 2 && !strcmp(p.pat[0], "val") && !strcmp(p.pat[1], "eval"), "defaults");
    static const struct {
        const char *name;
        int want;
    } cases[] = {
        {"validation", 1},       {"Validation", 1},     {"val_step 3", 1},
        {"runValidation", 1},    {"model.eval", 1},     {"Evaluate", 1},
        {"epoch 2 / val", 1},    {"interval", 0},       {"retrieval", 0},
        {"ProfilerStep#4", 0},   {"train_step", 0},     {"forward", 0},
        {"", 0},                 {"va", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(ingest_phase_match(&p, cases[i].name, strlen(cases[i].name)) == cases[i].want,
              "\"%s\": want %d", cases[i].name, cases[i].want);
    ingest_phase_compile(" holdout , Dev ", &p);
    check(p.n == 2 && !strcmp(p.pat[0], "holdout") && !strcmp(p.pat[1], "dev"), "custom parts");
    /* a word's start, not a whole word: "dev" finds "device" too */
    check(ingest_phase_match(&p, "HoldOut set", 11) && ingest_phase_match(&p, "dev_loop", 8) &&
              !ingest_phase_match(&p, "validation", 10) && ingest_phase_match(&p, "device", 6),
          "custom matching");
    check(ingest_phase_check("val,eval") == 0 && ingest_phase_check("") < 0 &&
              ingest_phase_check(NULL) < 0 && ingest_phase_check(",val") < 0 &&
              ingest_phase_check("val,,eval") < 0 && ingest_phase_check("val,") < 0,
          "pattern text checks");
}

/* Four ProfilerSteps [0,100) .. [300,400) us; in each an "aten::mm" op of
 * 10 us at +10; a record_function "annot" over [195, 400); an autograd op
 * named "...evaluate_function..." over [0, 200) that must not count. */
static char *trace(const char *annot)
{
    static char buf[4096];
    size_t n = (size_t)snprintf(buf, sizeof buf, "{\"traceEvents\":[");
    for (int s = 0; s < 4; s++)
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
                              "\"ts\":%d,\"dur\":100},"
                              "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"ts\":%d,"
                              "\"dur\":10},",
                              s + 1, s * 100, s * 100 + 10);
    snprintf(buf + n, sizeof buf - n,
             "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"%s\",\"ts\":195,\"dur\":205},"
             "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: "
             "MmBackward0\",\"ts\":0,\"dur\":200}]}",
             annot);
    return buf;
}

/* phase of each step 0..3 from the rows of aten::mm (-1: none) */
static void phases(const profile *p, int out[4])
{
    int mm = -1;
    for (int i = 0; i < p->ncallpaths; i++)
        if (!strcmp(p->callpaths[i].name, "aten::mm"))
            mm = i;
    for (int s = 0; s < 4; s++)
        out[s] = -1;
    for (size_t i = 0; i < p->nrows; i++)
        if (p->rows[i].callpath == mm && p->rows[i].step >= 0 && p->rows[i].step < 4 &&
            p->rows[i].phase != PROFILE_BETWEEN)
            out[p->rows[i].step] = p->rows[i].phase;
}

static int read_trace(const char *annot, const char *patterns, int phase, int got[4],
                      ingest_trace_info *info)
{
    const char *t = trace(annot);
    ingest_input in = {t, strlen(t), -1};
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    o.validation = patterns;
    o.phase = phase;
    profile p;
    ingest_error err;
    memset(info, 0, sizeof *info);
    int rc = ingest_kineto(&in, &o, &p, info, &err);
    check(rc == 0, "read: %s", rc ? err.msg : "");
    if (rc)
        return -1;
    phases(&p, got);
    profile_free(&p);
    return 0;
}

static void test_kineto(void)
{
    ingest_trace_info info;
    int got[4];
    const int T = PROFILE_TRAIN, V = PROFILE_VALIDATION;
    /* midpoints 50, 150, 250, 350: the last two lie in [195, 400) */
    if (read_trace("validation", NULL, INGEST_PHASE_AUTO, got, &info) == 0)
        check(got[0] == T && got[1] == T && got[2] == V && got[3] == V && info.nsteps == 4 &&
                  info.nvalidation == 2,
              "validation range: %d %d %d %d (%d validation)", got[0], got[1], got[2], got[3],
              info.nvalidation);
    ingest_trace_info_free(&info);
    /* not a validation name: every step trains (the evaluate_function op is ignored) */
    if (read_trace("data_loading", NULL, INGEST_PHASE_AUTO, got, &info) == 0)
        check(got[0] == T && got[1] == T && got[2] == T && got[3] == T && info.nvalidation == 0,
              "no validation range: %d %d %d %d", got[0], got[1], got[2], got[3]);
    ingest_trace_info_free(&info);
    /* custom patterns */
    if (read_trace("holdout pass", "holdout", INGEST_PHASE_AUTO, got, &info) == 0)
        check(got[2] == V && got[3] == V && got[0] == T && info.nvalidation == 2,
              "custom pattern: %d %d %d %d", got[0], got[1], got[2], got[3]);
    ingest_trace_info_free(&info);
    if (read_trace("validation", "holdout", INGEST_PHASE_AUTO, got, &info) == 0)
        check(got[2] == T && info.nvalidation == 0, "custom pattern replaces the defaults");
    ingest_trace_info_free(&info);
    /* the upload's override */
    if (read_trace("data_loading", NULL, INGEST_PHASE_VALIDATION, got, &info) == 0)
        check(got[0] == V && got[1] == V && got[2] == V && got[3] == V && info.nvalidation == 4,
              "?phase=validation: %d %d %d %d", got[0], got[1], got[2], got[3]);
    ingest_trace_info_free(&info);
    if (read_trace("validation", NULL, INGEST_PHASE_TRAIN, got, &info) == 0)
        check(got[2] == T && got[3] == T && info.nvalidation == 0, "?phase=train");
    ingest_trace_info_free(&info);
}

int main(void)
{
    test_patterns();
    test_kineto();
    return check_summary();
}
