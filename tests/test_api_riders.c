/*
 * test_api_riders.c — uploads posted concurrently while refits run, through
 * the server (real HTTP, a private PostgreSQL): whether a job was refit on
 * its own or taken over by a running refit (it then rides with it), every
 * job reaches "done" with a model set holding its upload's data, and a
 * client that saw its job done reads models at least that new in its next
 * request (read-your-writes); the newest set, whose refit started again
 * and kept the rows it had read, equals a refit of the same data alone.
 */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

#define POINTS 5
#define RANKS 4
#define CALLPATHS 60
#define STEPS 8
#define CLIENTS 6

static const int xs[POINTS] = {2, 4, 8, 16, 32};

static char *rank_profile(int x, int rank, size_t *len)
{
    size_t cap = 256 + (size_t)STEPS * CALLPATHS * 140;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%d},\"ranks\":[{\"rank\":%d,"
                                        "\"steps\":[", x, rank);
    for (int s = 0; s < STEPS; s++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                              s ? "," : "");
        for (int c = 0; c < CALLPATHS; c++)
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s{\"name\":\"kernel_%03d\",\"category\":\"%s\","
                                  "\"metrics\":{\"time\":%.9f}}",
                                  c ? "," : "", c, c % 10 == 3 ? "comm" : "comp",
                                  1e-4 * (c + 1) * (1 + 0.05 * x * (c % 3)) *
                                      (1 + 0.001 * (double)((x * 31 + rank * 7 + s) % 97)));
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    snprintf(b + n, cap - n, "]}]}");
    *len = strlen(b);
    return b;
}

typedef struct posting {
    harness *h;
    char path[96];
    pthread_mutex_t mu;
    int next;
    long jobs[POINTS * RANKS];
    int status[POINTS * RANKS];
} posting;

static void *poster(void *arg)
{
    posting *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= POINTS * RANKS)
            return NULL;
        size_t len;
        char *body = rank_profile(xs[k / RANKS], k % RANKS, &len);
        harness_response r;
        int rc = harness_request(p->h, "POST", p->path, "Content-Type: application/json\r\n",
                                 body, len, &r);
        free(body);
        long job = 0;
        if (rc == 0 && r.status == 202) {
            json_t *j = harness_json(&r);
            job = (long)json_integer_value(json_object_get(j, "job"));
            json_decref(j);
        }
        p->jobs[k] = job;
        p->status[k] = rc == 0 ? r.status : -1;
        if (rc == 0)
            harness_response_free(&r);
    }
}

/* The job's state and model set number; "" when unreadable. */
static void job_state(harness *h, long job, char *state, size_t cap, long *number)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    harness_response r;
    state[0] = '\0';
    *number = 0;
    if (harness_get(h, path, &r))
        return;
    json_t *j = harness_json(&r);
    snprintf(state, cap, "%s", json_string_value(json_object_get(j, "state")) ?: "");
    *number = (long)json_integer_value(json_object_get(j, "model_set"));
    json_decref(j);
    harness_response_free(&r);
}

/* The model set number GET .../models answers with. */
static long models_number(harness *h, long exp)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models", exp);
    harness_response r;
    if (harness_get(h, path, &r))
        return -1;
    json_t *j = harness_json(&r);
    long n = (long)json_integer_value(json_object_get(j, "model_set"));
    json_decref(j);
    harness_response_free(&r);
    return n;
}

int main(void)
{
    const char *env[] = {"PERFCAST_MAX_UPLOADS=64", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness did not start");
    if (!h)
        return check_summary();
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"riders\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                 "\"data_parallel\":\"ranks\"}}",
                 &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    check(exp > 0, "experiment created");

    posting p = {.h = h};
    pthread_mutex_init(&p.mu, NULL);
    snprintf(p.path, sizeof p.path, "/v1/experiments/%ld/profiles", exp);
    pthread_t th[CLIENTS];
    int started = 0;
    for (int i = 0; i < CLIENTS; i++)
        started += pthread_create(&th[i], NULL, poster, &p) == 0;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int k = 0; k < POINTS * RANKS; k++)
        check(p.status[k] == 202 && p.jobs[k] > 0, "upload %d acknowledged: %d", k, p.status[k]);

    /* every job reaches done; the client that sees it reads models at
     * least as new as its job's set in its next request */
    for (int k = 0; k < POINTS * RANKS; k++) {
        if (!p.jobs[k])
            continue;
        char state[32] = "";
        long number = 0;
        double t0 = harness_now();
        while (harness_now() - t0 < 300) {
            job_state(h, p.jobs[k], state, sizeof state, &number);
            if (!strcmp(state, "done") || !strcmp(state, "failed"))
                break;
            harness_sleep(0.01);
        }
        check(!strcmp(state, "done"), "upload %d's job %ld done: %s", k, p.jobs[k], state);
        if (strcmp(state, "done"))
            continue;
        long now = models_number(h, exp);
        check(now >= number, "upload %d: models read after done are set %ld, job's set %ld", k,
              now, number);
        /* the job's set holds this upload's point and rank */
        long held = harness_sql_long(
            h,
            "SELECT count(*) FROM jobs j JOIN measurements m ON m.model_set_id = j.model_set_id "
            "WHERE j.id = %ld AND m.level = 'application' AND m.name = 'epoch' "
            "AND m.point = ARRAY[%d]::float8[] AND %d = ANY (m.rank_ids)",
            p.jobs[k], xs[k / RANKS], k % RANKS);
        check(held > 0, "upload %d (ranks=%d, rank %d) is in its job's set", k, xs[k / RANKS],
              k % RANKS);
    }
    long jobs = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp);
    long riders = harness_sql_long(
        h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND rides_with IS NOT NULL", exp);
    check(harness_sql_long(h,
                           "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state <> "
                           "'done'",
                           exp) == 0,
          "no job left behind");
    printf("# %ld jobs, %ld of them taken over by a running refit\n", jobs, riders);

    /* the newest set, refit with the rows of earlier passes kept, is the
     * one a refit of the same data alone gives */
    long newest = harness_sql_long(h, "SELECT max(model_set_id) FROM jobs WHERE experiment_id = %ld",
                                   exp);
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_request(h, "POST", path, NULL, NULL, 0, &r);
    j = harness_json(&r);
    long refit = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    harness_response_free(&r);
    char state[32] = "";
    long number = 0;
    double t0 = harness_now();
    while (harness_now() - t0 < 300) {
        job_state(h, refit, state, sizeof state, &number);
        if (!strcmp(state, "done") || !strcmp(state, "failed"))
            break;
        harness_sleep(0.01);
    }
    check(!strcmp(state, "done"), "refit alone done: %s", state);
    long alone = harness_sql_long(h, "SELECT model_set_id FROM jobs WHERE id = %ld", refit);
    check(alone > newest && newest > 0, "two sets to compare (%ld, %ld)", newest, alone);
#define MODEL_COLS "level, name, metric, category, function, model::text, points, reason"
#define MEAS_COLS "point, level, name, metric, phase, value, rank_values, rank_ids"
    long models = harness_sql_long(h, "SELECT count(*) FROM models WHERE model_set_id = %ld", alone);
    long differ = harness_sql_long(
        h,
        "SELECT count(*) FROM ((SELECT " MODEL_COLS " FROM models WHERE model_set_id = %ld "
        "EXCEPT ALL SELECT " MODEL_COLS " FROM models WHERE model_set_id = %ld) UNION ALL "
        "(SELECT " MODEL_COLS " FROM models WHERE model_set_id = %ld EXCEPT ALL SELECT " MODEL_COLS
        " FROM models WHERE model_set_id = %ld)) d",
        newest, alone, alone, newest);
    check(models > 0 && differ == 0, "the same %ld models (%ld differ)", models, differ);
    long meas = harness_sql_long(h, "SELECT count(*) FROM measurements WHERE model_set_id = %ld",
                                 alone);
    differ = harness_sql_long(
        h,
        "SELECT count(*) FROM ((SELECT " MEAS_COLS " FROM measurements WHERE model_set_id = %ld "
        "EXCEPT ALL SELECT " MEAS_COLS " FROM measurements WHERE model_set_id = %ld) UNION ALL "
        "(SELECT " MEAS_COLS " FROM measurements WHERE model_set_id = %ld EXCEPT ALL SELECT "
        MEAS_COLS " FROM measurements WHERE model_set_id = %ld)) d",
        newest, alone, alone, newest);
    check(meas > 0 && differ == 0, "the same %ld measurements (%ld differ)", meas, differ);
    pthread_mutex_destroy(&p.mu);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
