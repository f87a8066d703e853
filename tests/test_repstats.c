/*
 * test_repstats.c — the repetition statistics answers rest on and their
 * coded warnings (analysis/repstats.h), without a server or a database:
 * which measurements are too noisy for a target, the single-repetition
 * ones, the counts and the details each warning carries.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/repstats.h"
#include "tests/check.h"

static const char params[1][64] = {"ranks"};

static const char *code_of(json_t *w)
{
    return json_string_value(json_object_get(w, "code")) ?: "";
}

int main(void)
{
    /* ranks 2: 100 ± 1 (±2.5% at 95% over 3: 4.303·1/√3/100), ranks 4: 50, 60, 70 (±49.7%),
     * ranks 8: one repetition */
    double p[3] = {2, 4, 8};
    double r0[3] = {99, 100, 101}, r1[3] = {50, 60, 70}, r2[1] = {42};
    store_measurement_row rows[3] = {
        {.point = &p[0], .nparams = 1, .reps = r0, .nreps = 3, .name = "epoch", .metric = "time",
         .phase = "epoch"},
        {.point = &p[1], .nparams = 1, .reps = r1, .nreps = 3, .name = "epoch", .metric = "time",
         .phase = "epoch"},
        {.point = &p[2], .nparams = 1, .reps = r2, .nreps = 1, .name = "epoch", .metric = "time",
         .phase = "epoch"}};
    noisy_names nm = {params, 1, NULL, 0};
    repstats st;
    check(repstats_compute(&nm, rows, 3, 0.05, &st) == 0, "computed");
    check(st.nitems == 3 && st.noisy == 1 && st.single == 1 && !st.items[0].noisy &&
              st.items[1].noisy,
          "ranks 4 is too noisy at ±5%%, ranks 8 has one repetition");
    double half = 4.302652729911275 * 10 / sqrt(3.0) / 60;
    json_t *w = st.warnings;
    json_t *w0 = json_array_get(w, 0), *w1 = json_array_get(w, 1);
    check(json_array_size(w) == 2 && !strcmp(code_of(w0), "noisy_measurement") &&
              !strcmp(code_of(w1), "single_repetition"),
          "two coded warnings");
    check(json_number_value(json_object_get(json_object_get(w0, "point"), "ranks")) == 4 &&
              check_close(json_number_value(json_object_get(w0, "relative_half_width")), half,
                          1e-9, 0) &&
              json_number_value(json_object_get(w0, "target")) == 0.05 &&
              json_integer_value(json_object_get(w0, "repetitions")) == 3,
          "the noisy one's details");
    const char *msg = json_string_value(json_object_get(w0, "message"));
    char want[120];
    snprintf(want, sizeof want, "too noisy: ranks=4 epoch time (phase epoch): the mean's 95%% "
             "interval is ±%.1f%% (target ±5.0%%)", 100 * half);
    check(msg && !strncmp(msg, want, strlen(want)), "its message: %s", msg ? msg : "-");
    check(!strcmp(json_string_value(json_object_get(w1, "message")) ?: "",
                  "one repetition: ranks=8 epoch time (phase epoch) has no interval"),
          "the single one's message");
    repstats_free(&st);
    /* at ±60% nothing is too noisy */
    repstats_compute(&nm, rows, 3, 0.6, &st);
    check(st.noisy == 0 && json_array_size(st.warnings) == 1, "±60%%: only the single one");
    repstats_free(&st);

    /* the warnings of sensitivity and efficiency: at ±5% */
    w = repstats_noisy_warnings(&nm, rows, 3);
    check(json_array_size(w) == 2 && !strcmp(code_of(json_array_get(w, 0)), "noisy_measurement") &&
              !strcmp(code_of(json_array_get(w, 1)), "single_repetition") &&
              json_integer_value(json_object_get(json_array_get(w, 1), "count")) == 1 &&
              json_integer_value(json_object_get(json_array_get(w, 1), "points")) == 3,
          "noisy and single-repetition warnings, with counts");
    check(!strcmp(json_string_value(json_object_get(json_array_get(w, 1), "message")) ?: "",
                  "1 of 3 points have one repetition: their run-to-run variation is unknown"),
          "the count's message");
    json_decref(w);

    /* more than REPSTATS_NAMED_MAX noisy rows: the first are named, then the count */
    enum { N = REPSTATS_NAMED_MAX + 5 };
    double pp[N];
    store_measurement_row many[N];
    for (int i = 0; i < N; i++) {
        pp[i] = i + 1;
        many[i] = rows[1];
        many[i].point = &pp[i];
    }
    w = repstats_noisy_warnings(&nm, many, N);
    json_t *lastw = json_array_get(w, json_array_size(w) - 1);
    check(json_array_size(w) == REPSTATS_NAMED_MAX + 1 &&
              json_integer_value(json_object_get(lastw, "count")) == N &&
              !strcmp(code_of(lastw), "noisy_measurement"),
          "%d named, then the count of %d", REPSTATS_NAMED_MAX, N);
    json_decref(w);
    repstats_compute(&nm, many, N, 0.05, &st);
    lastw = json_array_get(st.warnings, json_array_size(st.warnings) - 1);
    check(st.noisy == N && json_array_size(st.warnings) == REPSTATS_NAMED_MAX + 1 &&
              json_integer_value(json_object_get(lastw, "noisy")) == N,
          "statistics: the same, counted");
    repstats_free(&st);
    return check_summary();
}
