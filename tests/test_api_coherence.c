/*
 * test_api_coherence.c — what the servers keep in memory (model sets,
 * rendered answers, token verifications, experiment owners; see
 * api/model_cache.h, api/auth_cache.h, api/cache_sync.h) never shows a
 * client something the database no longer says. Two real server processes
 * (A and B) on one real PostgreSQL, over loopback HTTP:
 *
 *  - read-your-writes: with B's answers cached for model set 1, a new
 *    upload through A whose job is seen done through A is read through B in
 *    the very next request (set 2; B heard the notice), and through A; the
 *    same for a job seen done through B itself.
 *  - revocation: a read token whose verification B holds (it just answered
 *    200) answers 401 on A at once and on B within 1 s of the revocation.
 *  - delete: an experiment deleted through A answers 404 on B within 1 s,
 *    although B held its models and owner.
 *  - open mode: B, serving without tokens while none exists, asks for one
 *    within 1 s of a token being created through A.
 *
 * The expected model-set numbers come from the uploads made (each finished
 * job makes the experiment's next set), not from a previous answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

static char auth[256]; /* "Authorization: Bearer <admin token>\r\n" */

static int request(harness *h, const char *method, const char *path, const char *hdr,
                   const char *body, harness_response *r)
{
    return harness_request(h, method, path, hdr ? hdr : auth, body, body ? strlen(body) : 0, r);
}

static long json_long(const harness_response *r, const char *name)
{
    json_t *doc = harness_json(r);
    long v = (long)json_integer_value(json_object_get(doc, name));
    json_decref(doc);
    return v;
}

/* A profile at ranks = x: 2 ranks x 3 steps, comp/comm/mem callpaths whose
 * times grow with x (repetition rep). */
static char *profile(double x, int rep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "{\"point\":{\"ranks\":%g},\"repetition\":%d,\"ranks\":[", x, rep);
    for (int r = 0; r < 2; r++) {
        fprintf(f, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < 3; s++)
            fprintf(f,
                    "%s{\"callpaths\":[{\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":"
                    "{\"time\":%.6f}},{\"name\":\"allreduce\",\"category\":\"comm\",\"metrics\":"
                    "{\"time\":%.6f}},{\"name\":\"h2d\",\"category\":\"mem\",\"metrics\":"
                    "{\"time\":%.6f}}]}",
                    s ? "," : "", 1.0 + 0.001 * (s + r + rep), 0.1 * x * (1 + 0.001 * s),
                    0.05 + 0.0001 * s);
        fputs("]}", f);
    }
    fputs("]}", f);
    fclose(f);
    return text;
}

/* Uploads through h; the job's id, 0 on failure. */
static long upload(harness *h, long exp, double x, int rep)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    char *body = profile(x, rep);
    harness_response r;
    request(h, "POST", path, NULL, body, &r);
    free(body);
    long job = r.status == 202 ? json_long(&r, "job") : 0;
    check(job > 0, "upload x=%g rep %d: %d %s", x, rep, r.status, r.body);
    harness_response_free(&r);
    return job;
}

/* Polls GET /v1/jobs/{job} through h (with the token) until done; 1 / 0. */
static int wait_done(harness *h, long job)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    double t0 = harness_now();
    while (harness_now() - t0 < 60) {
        harness_response r;
        request(h, "GET", path, NULL, NULL, &r);
        int done = r.status == 200 && strstr(r.body, "\"state\":\"done\"");
        int failed = r.status != 200 || strstr(r.body, "\"state\":\"failed\"");
        if (failed)
            fprintf(stderr, "job %ld: %d %s\n", job, r.status, r.body);
        harness_response_free(&r);
        if (done)
            return 1;
        if (failed)
            return 0;
        harness_sleep(0.01);
    }
    return 0;
}

/* The model_set of predict?ranks=40 through h, or -status. */
static long predicted_set(harness *h, long exp, const char *hdr)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    harness_response r;
    request(h, "GET", path, hdr, NULL, &r);
    long set = r.status == 200 ? json_long(&r, "model_set") : -r.status;
    harness_response_free(&r);
    return set;
}

/* Seconds until predict through h answers want_status (polling every 10 ms
 * for up to 3 s), or -1. */
static double until_status(harness *h, long exp, const char *hdr, int want_status)
{
    double t0 = harness_now();
    while (harness_now() - t0 < 3) {
        if (predicted_set(h, exp, hdr) == -want_status)
            return harness_now() - t0;
        harness_sleep(0.01);
    }
    return -1;
}

static void read_your_writes(harness *a, harness *b, long exp)
{
    const double xs[] = {2, 4, 6, 8, 10};
    long job = 0;
    for (int i = 0; i < 5; i++)
        job = upload(a, exp, xs[i], 1);
    check(wait_done(a, job), "first job %ld done", job);
    /* one job covers the five uploads or each makes a set: count them */
    long sets = harness_sql_long(a, "SELECT count(*) FROM model_sets WHERE experiment_id = %ld",
                                 exp);
    check(predicted_set(b, exp, NULL) == sets, "B answers set %ld", sets);
    check(predicted_set(b, exp, NULL) == sets, "B again (from memory): set %ld", sets);
    check(predicted_set(a, exp, NULL) == sets, "A answers set %ld", sets);

    /* a new upload through A, seen done through A, read through B at once */
    job = upload(a, exp, 4, 2);
    check(wait_done(a, job), "second job %ld done", job);
    long want = harness_sql_long(a, "SELECT count(*) FROM model_sets WHERE experiment_id = %ld",
                                 exp);
    check(want == sets + 1, "one more model set: %ld -> %ld", sets, want);
    long got = predicted_set(b, exp, NULL);
    check(got == want, "B's next answer after the job is done through A: set %ld, got %ld", want,
          got);
    check(predicted_set(a, exp, NULL) == want, "A too: set %ld", want);

    /* and seen done through B, read through B */
    job = upload(a, exp, 6, 2);
    check(wait_done(b, job), "third job %ld done", job);
    got = predicted_set(b, exp, NULL);
    check(got == want + 1, "B after seeing the job done itself: set %ld, got %ld", want + 1, got);
}

static void revocation(harness *a, harness *b, long exp)
{
    harness_response r;
    request(a, "POST", "/v1/tokens", NULL, "{\"scope\":\"read\"}", &r);
    json_t *doc = harness_json(&r);
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n",
             json_string_value(json_object_get(doc, "token")) ?: "");
    long id = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    check(id > 0, "read token created");
    check(predicted_set(b, exp, hdr) > 0, "B answers the read token");
    check(predicted_set(b, exp, hdr) > 0, "B again (its verification held)");
    check(predicted_set(a, exp, hdr) > 0, "A answers the read token");
    char path[64];
    snprintf(path, sizeof path, "/v1/tokens/%ld", id);
    double t0 = harness_now();
    request(a, "DELETE", path, NULL, NULL, &r);
    check(r.status == 204, "revoke: %d %s", r.status, r.body);
    harness_response_free(&r);
    check(predicted_set(a, exp, hdr) == -401, "A refuses the revoked token at once");
    double waited = until_status(b, exp, hdr, 401);
    double since = harness_now() - t0;
    check(waited >= 0 && since <= 1.0 + 0.2,
          "B refuses the revoked token within 1 s of the revocation (after %.3f s)", since);
    harness_sleep(0.6); /* past any held verification: still refused */
    check(predicted_set(b, exp, hdr) == -401, "B still refuses it");
}

static void deletion(harness *a, harness *b, long exp)
{
    check(predicted_set(b, exp, NULL) > 0, "B answers before the delete");
    char path[64];
    snprintf(path, sizeof path, "/v1/experiments/%ld", exp);
    harness_response r;
    request(a, "DELETE", path, NULL, NULL, &r);
    check(r.status == 204, "delete: %d %s", r.status, r.body);
    harness_response_free(&r);
    check(predicted_set(a, exp, NULL) == -404, "A: 404 at once");
    double waited = until_status(b, exp, NULL, 404);
    check(waited >= 0 && waited <= 1.0, "B: 404 within 1 s (after %.3f s)", waited);
}

int main(void)
{
    harness *a = harness_open(NULL);
    if (!a) {
        check(0, "harness");
        return check_summary();
    }
    harness *b = harness_second(a);
    check(b != NULL, "second server on the same PostgreSQL");
    harness_response r;
    int open_b = 0;
    for (int i = 0; b && i < 2; i++) { /* the second from what B holds */
        harness_get(b, "/v1/experiments", &r);
        open_b += r.status == 200;
        harness_response_free(&r);
    }
    check(open_b == 2, "B serves without a token while none exists");
    harness_request(a, "POST", "/v1/tokens", NULL, "{\"scope\":\"admin\"}", 17, &r);
    double created = harness_now();
    json_t *doc = harness_json(&r);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n",
             json_string_value(json_object_get(doc, "token")) ?: "");
    json_decref(doc);
    check(r.status == 201, "admin token: %d %s", r.status, r.body);
    harness_response_free(&r);
    int status = 0;
    while (b && status != 401 && harness_now() - created < 3) {
        harness_get(b, "/v1/experiments", &r);
        status = r.status;
        harness_response_free(&r);
    }
    check(!b || (status == 401 && harness_now() - created <= 1.0),
          "B asks for a token within 1 s of the first one's creation (%d after %.3f s)", status,
          harness_now() - created);
    request(a, "POST", "/v1/experiments", NULL,
            "{\"name\":\"coherence\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
            "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
            "\"data_parallel\":\"ranks\",\"warmup_steps\":0}}",
            &r);
    long exp = r.status == 201 ? json_long(&r, "id") : 0;
    check(exp > 0, "experiment: %d %s", r.status, r.body);
    harness_response_free(&r);
    if (b && exp > 0) {
        read_your_writes(a, b, exp);
        revocation(a, b, exp);
        deletion(a, b, exp);
    }
    int failed = check_failed_count > 0;
    if (b)
        harness_close(b, failed);
    harness_close(a, failed);
    return check_summary();
}
