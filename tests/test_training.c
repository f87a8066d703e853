/*
 * test_training.c — the training set-up as expressions of the parameters
 * (api/training.h): steps per epoch n_t = floor(D_t·M/(G·B)) computed by
 * hand for the papers' set-ups, and the field named for each fault.
 */
#include <math.h>
#include <string.h>

#include "analysis/training.h"
#include "tests/check.h"

static int compile(const char *doc, const char *const *names, int n, training_setup *s,
                   char *field, size_t fcap)
{
    json_t *t = json_loads(doc, 0, NULL);
    char msg[400];
    int rc = training_compile(t, names, n, s, field, fcap, msg, sizeof msg);
    json_decref(t);
    return rc;
}

/* Extra-Deep's weak-scaling case study: D_t = 50000·x1, G = x1, B = 256:
 * n_t = floor(50000·x1 / x1 / 256) = floor(195.3125) = 195 at every x1. */
static void test_weak_scaling_case_study(void)
{
    const char *names[] = {"x1"};
    training_setup s;
    char field[64] = "", msg[400];
    check(compile("{\"train_samples\":\"50000*x1\",\"validation_samples\":\"10000*x1\","
                  "\"batch_size\":256,\"data_parallel\":\"x1\"}",
                  names, 1, &s, field, sizeof field) == 0,
          "compile: %s", field);
    const double xs[] = {1, 2, 4, 6, 8, 10, 12, 64, 1000};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        double n_t = -1, n_v = -1;
        int rc = training_steps_at(&s, &xs[i], names, 1, &n_t, &n_v, field, sizeof field, msg,
                                   sizeof msg);
        /* n_v = floor(10000·x1/x1/256) = floor(39.0625) = 39 */
        check(rc == 0 && n_t == 195 && n_v == 39, "x1=%g: n_t %g n_v %g (%s)", xs[i], n_t, n_v,
              rc ? msg : "");
    }
    /* the constant data set of the same study: n_t = floor(50000/x1/256) */
    check(compile("{\"train_samples\":50000,\"batch_size\":256,\"data_parallel\":\"x1\"}", names,
                  1, &s, field, sizeof field) == 0,
          "compile constant");
    double x = 8, n_t, n_v;
    training_steps_at(&s, &x, names, 1, &n_t, &n_v, field, sizeof field, msg, sizeof msg);
    check(n_t == 24 && n_v == 0, "constant D_t at 8: n_t %g (want floor(24.41) = 24)", n_t);
}

/* Batch size as a modelled parameter (x2 in {32..512}), model parallelism:
 * n_t = floor(D_t·M/(G·B)). */
static void test_batch_parameter(void)
{
    const char *names[] = {"x1", "x2"};
    training_setup s;
    char field[64] = "", msg[400];
    check(compile("{\"train_samples\":60000,\"batch_size\":\"x2\",\"data_parallel\":\"x1\","
                  "\"model_parallel\":\"2\"}",
                  names, 2, &s, field, sizeof field) == 0,
          "compile: %s", field);
    struct {
        double x1, x2, n_t;
    } cases[] = {
        {4, 32, 937},  /* 60000·2/(4·32) = 937.5 */
        {4, 512, 58},  /* 60000·2/(4·512) = 58.59 */
        {8, 128, 117}, /* 60000·2/(8·128) = 117.19 */
        {16, 256, 29}, /* 60000·2/(16·256) = 29.30 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double pt[2] = {cases[i].x1, cases[i].x2}, n_t = -1, n_v = -1;
        int rc = training_steps_at(&s, pt, names, 2, &n_t, &n_v, field, sizeof field, msg,
                                   sizeof msg);
        check(rc == 0 && n_t == cases[i].n_t && n_v == 0, "x1=%g x2=%g: n_t %g want %g",
              cases[i].x1, cases[i].x2, n_t, cases[i].n_t);
    }
}

/* Faults name the field of the set-up. */
static void test_faults(void)
{
    const char *names[] = {"x1"};
    training_setup s;
    char field[64] = "", msg[400];
    check(compile("{\"train_samples\":\"50000*nodes\",\"batch_size\":1}", names, 1, &s, field,
                  sizeof field) < 0 &&
              !strcmp(field, "training.train_samples"),
          "unknown parameter: field %s", field);
    check(compile("{\"train_samples\":1,\"batch_size\":\"x1*\"}", names, 1, &s, field,
                  sizeof field) < 0 &&
              !strcmp(field, "training.batch_size"),
          "syntax: field %s", field);
    check(compile("{\"train_samples\":1,\"batch_size\":true}", names, 1, &s, field,
                  sizeof field) < 0 &&
              !strcmp(field, "training.batch_size"),
          "boolean: field %s", field);
    check(compile("{\"batch_size\":1}", names, 1, &s, field, sizeof field) < 0 &&
              !strcmp(field, "training.train_samples"),
          "missing: field %s", field);

    struct {
        const char *doc;
        double x1;
        const char *field;
    } at[] = {
        {"{\"train_samples\":1000,\"batch_size\":\"x1-2\"}", 2, "training.batch_size"},
        {"{\"train_samples\":\"1000-x1\",\"batch_size\":1}", 1000, "training.train_samples"},
        {"{\"train_samples\":1000,\"validation_samples\":\"10-x1\",\"batch_size\":1}", 11,
         "training.validation_samples"},
        {"{\"train_samples\":1000,\"batch_size\":1,\"data_parallel\":\"x1/0\"}", 1,
         "training.data_parallel"},
        /* 1000 / 4 / 256 = 0.98: no step */
        {"{\"train_samples\":1000,\"batch_size\":256}", 4, "training.train_samples"},
    };
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        double n_t, n_v;
        check(compile(at[i].doc, names, 1, &s, field, sizeof field) == 0, "compile %s", at[i].doc);
        int rc = training_steps_at(&s, &at[i].x1, names, 1, &n_t, &n_v, field, sizeof field, msg,
                                   sizeof msg);
        check(rc < 0 && !strcmp(field, at[i].field) && strstr(msg, "x1="), "%s at %g: %s %s",
              at[i].doc, at[i].x1, field, msg);
    }
}

/* The degrees alone: G and M > 0 with training_steps_at's field and
 * message, whatever the samples and batch size give (a point with no step
 * passes); G·M = 0.5 is a count. */
static void test_degrees(void)
{
    const char *names[] = {"x1"};
    training_setup s;
    char field[64] = "", msg[400] = "", f2[64], m2[400];
    double n_t, n_v;
    check(compile("{\"train_samples\":1,\"batch_size\":256,\"data_parallel\":\"x1\","
                  "\"model_parallel\":\"x1+3\"}",
                  names, 1, &s, field, sizeof field) == 0,
          "compiled");
    double x = 0.5;
    check(training_degrees_at(&s, &x, names, 1, field, sizeof field, msg, sizeof msg) == 0,
          "x1 = 0.5: degrees > 0 although no step: %s", msg);
    x = 0;
    int rc = training_degrees_at(&s, &x, names, 1, field, sizeof field, msg, sizeof msg);
    training_steps_at(&s, &x, names, 1, &n_t, &n_v, f2, sizeof f2, m2, sizeof m2);
    check(rc < 0 && !strcmp(field, "training.data_parallel") &&
              !strcmp(msg, "must be > 0 at every coordinate; at x1=0 it is not") &&
              !strcmp(field, f2) && !strcmp(msg, m2),
          "x1 = 0: data_parallel, as training_steps_at: %s %s", field, msg);
    x = -3.5;
    rc = training_degrees_at(&s, &x, names, 1, field, sizeof field, msg, sizeof msg);
    check(rc < 0 && !strcmp(field, "training.data_parallel") && strstr(msg, "x1=-3.5"),
          "x1 = -3.5: %s %s", field, msg);
    check(compile("{\"train_samples\":1,\"batch_size\":1,\"data_parallel\":2,"
                  "\"model_parallel\":\"x1-4\"}",
                  names, 1, &s, field, sizeof field) == 0,
          "compiled");
    x = 4;
    rc = training_degrees_at(&s, &x, names, 1, field, sizeof field, msg, sizeof msg);
    check(rc < 0 && !strcmp(field, "training.model_parallel") && strstr(msg, "x1=4 it is not"),
          "M = 0 at x1 = 4: %s %s", field, msg);
}

int main(void)
{
    test_weak_scaling_case_study();
    test_batch_parameter();
    test_faults();
    test_degrees();
    return check_summary();
}
