/*
 * test_upload_check.c — what an upload must be for its experiment
 * (analysis/upload_check.h), without a server: values beyond the modeler's
 * range named by their metric, a coordinate where the training set-up gives
 * no step (floor(1000 / (64·ranks)) = 0 from ranks = 16) refused naming the
 * set-up's field, a trace of 128 ranks uploaded at ranks = 2 refused 409,
 * Cube runs placed at their coordinates, checked as a single upload is
 * (a value of 1e155 refused naming the run) and numbered as repetitions, the
 * coordinate from the body and the query, each disagreement named.
 */
#include <math.h>
#include <string.h>

#include "analysis/upload_check.h"
#include "ingest/trace.h"
#include "tests/check.h"

int main(void)
{
    const char *params[] = {"ranks"};
    json_t *spec = json_loads("{\"training\":{\"train_samples\":1000,\"validation_samples\":0,"
                              "\"batch_size\":64,\"data_parallel\":\"ranks\","
                              "\"model_parallel\":\"1\",\"warmup_steps\":0}}",
                              0, NULL);
    upload_experiment e = {params, 1, spec};
    profile_callpath cps[] = {{.name = "conv"}};
    char *metrics[] = {"time"};
    profile_row rows[] = {{.rank = 0, .phase = PROFILE_TRAIN, .step = 0, .value = 1.5},
                          {.rank = 0, .phase = PROFILE_BETWEEN, .step = 0, .value = 0.5}};
    profile p = {.ncallpaths = 1, .callpaths = cps, .nmetrics = 1, .metrics = metrics,
                 .nrows = 2, .rows = rows};
    an_problem pr;
    double at2[] = {2}, at16[] = {16}, huge[] = {1e60};
    check(upload_check_magnitudes(&p, &e, at2, &pr) == 0, "in range");
    check(upload_check_magnitudes(&p, &e, huge, &pr) < 0 && !strcmp(pr.field, "point.ranks") &&
              pr.status == 400,
          "a coordinate beyond the range: %s", pr.field);
    rows[0].value = 1e55;
    check(upload_check_magnitudes(&p, &e, at2, &pr) < 0 && !strcmp(pr.field, "metrics.time") &&
              strstr(pr.msg, "callpath \"conv\""),
          "a value beyond the range named by its metric and callpath: %s", pr.msg);
    rows[0].value = 1.5;
    check(upload_check_training(&e, at2, &pr) == 0, "floor(1000/128) = 7 steps at ranks 2");
    check(upload_check_training(&e, at16, &pr) < 0 && pr.status == 400 &&
              strstr(pr.msg, "(the experiment's training set-up)") &&
              !strncmp(pr.field, "training.", 9),
          "no step at ranks 16: %s %s", pr.field, pr.msg);
    check(upload_check_world_size(&e, at2, 2, &pr) == 0 &&
              upload_check_world_size(&e, at2, 0, &pr) == 0,
          "2 workers at ranks 2; a trace that does not say");
    check(upload_check_world_size(&e, at2, 128, &pr) < 0 && pr.status == 409 &&
              !strcmp(pr.field, "world_size") && strstr(pr.msg, "gives 2 workers"),
          "128 ranks at ranks 2: %s", pr.msg);
    upload_force_phase(&p, INGEST_PHASE_VALIDATION);
    check(rows[0].phase == PROFILE_VALIDATION && rows[1].phase == PROFILE_BETWEEN,
          "a forced phase leaves the rows between steps");

    cube_bundle_run runs[3] = {
        {.dir = "mm.ranks2", .member = "a", .np = 1, .names = {"ranks"}, .values = {2}},
        {.dir = "mm.ranks2", .member = "b", .np = 1, .names = {"ranks"}, .values = {2}},
        {.dir = "mm.x4", .member = "c", .np = 1, .names = {"x"}, .values = {4}, .repetition = 0},
    };
    cube_bundle b = {2, runs};
    double points[3];
    int rep[3];
    check(upload_run_point(&e, &runs[0], &points[0], &pr) == 0 &&
              upload_run_point(&e, &runs[1], &points[1], &pr) == 0 && points[1] == 2,
          "runs placed");
    upload_repetitions(&b, points, 1, rep);
    check(rep[0] == 1 && rep[1] == 2, "two runs at one point: repetitions 1 and 2");
    check(upload_run_point(&e, &runs[2], &points[2], &pr) < 0 && !strcmp(pr.field, "parameters") &&
              strstr(pr.msg, "\"ranks\""),
          "a run without the parameter: %s", pr.msg);
    /* a run of a set is checked as a single upload is: a value of 1e155
     * (its squares overflow) or a coordinate beyond the modeler's range, and
     * a coordinate without a training step, each named with the run */
    runs[0].prof = p;
    rows[0].value = 1e155;
    check(upload_run_point(&e, &runs[0], &points[0], &pr) < 0 && pr.status == 400 &&
              !strcmp(pr.field, "metrics.time") && !strncmp(pr.msg, "a: callpath \"conv\"", 18),
          "a run's value of 1e155: %s %s", pr.field, pr.msg);
    rows[0].value = 1.5;
    check(upload_run_point(&e, &runs[0], &points[0], &pr) == 0, "in range again");
    runs[0].values[0] = 1e60;
    check(upload_run_point(&e, &runs[0], &points[0], &pr) < 0 && !strcmp(pr.field, "point.ranks"),
          "a run's coordinate of 1e60: %s", pr.field);
    runs[0].values[0] = 16;
    check(upload_run_point(&e, &runs[0], &points[0], &pr) < 0 && !strncmp(pr.field, "training.", 9) &&
              !strncmp(pr.msg, "a: ", 3),
          "no step at ranks 16 in a set: %s %s", pr.field, pr.msg);
    runs[0].values[0] = 2;

    /* the coordinate: body, query, both agreeing; each fault named */
    const char *p2names[] = {"ranks", "batch"};
    upload_experiment e2 = {p2names, 2, spec};
    char *bn[] = {"ranks"};
    double bv[] = {8};
    profile body = {.nparams = 1, .param_names = bn, .point = bv};
    double pt[2] = {0, 0};
    const char *qn[] = {"batch", "ranks"}, *qv[] = {"32", "8"};
    check(upload_point(&body, &e2, qn, qv, 2, pt, &pr) == 0 && pt[0] == 8 && pt[1] == 32,
          "ranks from the body (and the query, agreeing), batch from the query");
    qv[1] = "16";
    check(upload_point(&body, &e2, qn, qv, 2, pt, &pr) < 0 && !strcmp(pr.field, "ranks") &&
              strstr(pr.msg, "the body's point says 8, the query 16"),
          "body and query disagree: %s", pr.msg);
    check(upload_point(&body, &e2, qn, qv, 0, pt, &pr) < 0 && !strcmp(pr.field, "point.batch"),
          "batch given nowhere: %s", pr.field);
    const char *qn2[] = {"batch", "batch"}, *qv2[] = {"32", "64"};
    check(upload_point(&body, &e2, qn2, qv2, 2, pt, &pr) < 0 && strstr(pr.msg, "given twice"),
          "twice in the query: %s", pr.msg);
    const char *qn3[] = {"colour"}, *qv3[] = {"1"};
    check(upload_point(&body, &e2, qn3, qv3, 1, pt, &pr) < 0 && !strcmp(pr.field, "colour") &&
              strstr(pr.msg, "(parameters: ranks, batch)"),
          "not a parameter: %s", pr.msg);
    const char *qv4[] = {"1e999"};
    check(upload_point(&body, &e2, qn, qv4, 1, pt, &pr) < 0 && strstr(pr.msg, "finite number"),
          "not finite: %s", pr.msg);
    json_decref(spec);
    return check_summary();
}
