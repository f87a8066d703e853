/*
 * test_api_cube.c — Score-P Cube profiles uploaded over HTTP against a real
 * PostgreSQL (tests/harness.h): a .cubex is one profile upload, sniffed from
 * application/octet-stream or named by ?format=cube, its coordinate from the
 * query; one row per location (thread) and callpath is stored. Truncated
 * archives and XML bombs are refused with 400 naming the member, and nothing
 * is stored. A whole set in one tar or zip (?format=cube-set) is one upload
 * creating one profile per run, coordinates and repetitions from the
 * directory names, all or nothing.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"
#include "tests/check.h"
#include "tests/harness.h"

#define SETS "tests/data/extrap/inputs/"

static long create(harness *h, const char *doc)
{
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    check(r.status == 201 && id > 0, "create: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return id;
}

static int post(harness *h, long exp, const char *query, const char *content_type,
                const char *body, size_t len, harness_response *r)
{
    char path[256], headers[128] = "";
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query);
    if (content_type)
        snprintf(headers, sizeof headers, "Content-Type: %s\r\n", content_type);
    return harness_request(h, "POST", path, headers, body, len, r);
}

static void test_uploads(harness *h)
{
    long exp = create(h, "{\"name\":\"mm\",\"parameters\":[\"x\"],\"scaling\":\"weak\",\"training\":{\"train_samples\":1000,\"batch_size\":10,\"data_parallel\":\"x\"}}");
    static const int xs[] = {1, 10, 25, 50, 100};
    for (int i = 0; i < 5; i++) {
        char path[256], query[64];
        snprintf(path, sizeof path, SETS "cubeset_single_parameter/mm.x%dy1z1.r1/profile.cubex",
                 xs[i]);
        size_t len;
        char *b = harness_read_file(path, &len);
        snprintf(query, sizeof query, i % 2 ? "?x=%d&format=cube" : "?x=%d&refit=defer", xs[i]);
        harness_response r;
        post(h, exp, query, i % 2 ? NULL : "application/octet-stream", b, len, &r);
        json_t *j = harness_json(&r);
        check(r.status == 202 && !strcmp(json_string_value(json_object_get(j, "format")), "cube"),
              "x=%d: %d %s", xs[i], r.status, r.body ? r.body : "");
        json_decref(j);
        harness_response_free(&r);
        free(b);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld AND "
                              "format = 'cube'", exp) == 5,
          "five cube profiles");
    /* 4 callpaths x 7 metrics with data, one location */
    check(harness_sql_long(h, "SELECT count(*) FROM profile_rows r JOIN profiles p ON "
                              "p.id = r.profile_id WHERE p.experiment_id = %ld AND p.point = "
                              "'{10}'", exp) == 28,
          "28 rows at x=10");
    check(harness_sql_long(h, "SELECT count(*) FROM callpaths WHERE experiment_id = %ld AND "
                              "name = 'main->init_mat'", exp) == 1,
          "Extra-P's callpath names");

    /* per-thread values: one rank per location */
    long exp2 = create(h, "{\"name\":\"threads\",\"parameters\":[\"f\"],\"scaling\":\"weak\",\"training\":{\"train_samples\":1000,\"batch_size\":10,\"data_parallel\":\"f\"}}");
    size_t len;
    char *b = harness_read_file(SETS "cubeset_simple_threaded/example.f3/cube-example3.cubex", &len);
    harness_response r;
    post(h, exp2, "?f=3", "application/octet-stream", b, len, &r);
    check(r.status == 202, "threaded: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(DISTINCT rank) FROM profile_rows r JOIN profiles p "
                              "ON p.id = r.profile_id WHERE p.experiment_id = %ld", exp2) == 4,
          "four threads, four ranks");

    /* truncated: 400 naming the fault, nothing stored */
    long before = harness_sql_long(h, "SELECT count(*) FROM profiles");
    post(h, exp2, "?f=4", "application/octet-stream", b, len / 2, &r);
    check(r.status == 400 && r.body && strstr(r.body, "truncated"), "truncated: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    /* an XML bomb inside a tar: refused at the DOCTYPE */
    char *bomb = malloc(len);
    memcpy(bomb, b, len);
    free(b);
    /* find anchor.xml's data (gzip) and replace the archive by one with a DOCTYPE anchor */
    static const char xml[] = "<?xml version=\"1.0\"?><!DOCTYPE c [<!ENTITY a \"aa\">"
                              "<!ENTITY b \"&a;&a;&a;&a;\">]><cube>&b;</cube>";
    char tar[2048] = {0};
    snprintf(tar, 100, "anchor.xml");
    memcpy(tar + 100, "0000644", 7);
    memcpy(tar + 108, "0000000", 7);
    memcpy(tar + 116, "0000000", 7);
    snprintf(tar + 124, 12, "%011o", (unsigned)(sizeof xml - 1));
    memcpy(tar + 136, "00000000000", 11);
    tar[156] = '0';
    memcpy(tar + 257, "ustar", 6);
    memcpy(tar + 263, "00", 2);
    memset(tar + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += (unsigned char)tar[i];
    snprintf(tar + 148, 8, "%06o", sum);
    memcpy(tar + 512, xml, sizeof xml - 1);
    post(h, exp2, "?f=5", "application/octet-stream", tar, sizeof tar, &r);
    check(r.status == 400 && r.body && strstr(r.body, "DOCTYPE"), "bomb: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(bomb);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before, "nothing stored");
}

/* A tar (zip when zip) of the runs of set dir, the members under "set/";
 * bad_run: that run's .cubex is cut in half; the run directory from (when
 * not NULL) is named to instead. */
static char *pack_set_as(const char *dir, int zip, const char *bad_run, const char *from,
                         const char *to, size_t *len)
{
    size_t cap = 8 << 20;
    char *out = malloc(cap);
    struct archive *a = archive_write_new();
    if (zip)
        archive_write_set_format_zip(a);
    else
        archive_write_set_format_pax_restricted(a);
    archive_write_open_memory(a, out, cap, len);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
        DIR *d2 = opendir(sub);
        struct dirent *f;
        while (d2 && (f = readdir(d2))) {
            size_t n = strlen(f->d_name);
            if (n < 7 || strcmp(f->d_name + n - 6, ".cubex"))
                continue;
            char path[1024], name[1024];
            snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
            snprintf(name, sizeof name, "set/%s/%s",
                     from && !strcmp(from, de->d_name) ? to : de->d_name, f->d_name);
            size_t blen;
            char *b = harness_read_file(path, &blen);
            if (bad_run && !strcmp(bad_run, de->d_name))
                blen /= 2;
            struct archive_entry *e = archive_entry_new();
            archive_entry_set_pathname(e, name);
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_perm(e, 0644);
            archive_entry_set_size(e, (la_int64_t)blen);
            archive_write_header(a, e);
            archive_write_data(a, b, blen);
            archive_entry_free(e);
            free(b);
        }
        if (d2)
            closedir(d2);
    }
    if (d)
        closedir(d);
    archive_write_close(a);
    archive_write_free(a);
    return out;
}

static char *pack_set(const char *dir, int zip, const char *bad_run, size_t *len)
{
    return pack_set_as(dir, zip, bad_run, NULL, NULL, len);
}

static void test_set_upload(harness *h)
{
    long exp = create(h, "{\"name\":\"mm-set\",\"parameters\":[\"x\"],\"scaling\":\"weak\","
                         "\"training\":{\"train_samples\":100000000,\"batch_size\":10,"
                         "\"data_parallel\":\"x\"}}");
    long before = harness_sql_long(h, "SELECT count(*) FROM profiles");
    size_t len;
    harness_response r;
    /* one run corrupt: nothing of the set is stored */
    char *bad = pack_set(SETS "cubeset_single_parameter", 0, "mm.x500y1z1.r1", &len);
    post(h, exp, "?format=cube-set", "application/x-tar", bad, len, &r);
    check(r.status == 400 && r.body && strstr(r.body, "mm.x500y1z1.r1/profile.cubex"),
          "corrupt run: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(bad);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before, "nothing stored");
    /* a run is checked as a single upload is: a coordinate of 1e60 (beyond
     * what the modeler takes), a coordinate where the training set-up gives
     * no step (floor(1e8 / 1e9 / 10) = 0): 400 naming the field and the
     * run, nothing of the set stored */
    static const struct {
        const char *dir, *field;
    } refused[] = {
        {"mm.x1000000000000000000000000000000000000000000000000000000000000y1z1.r1", "point.x"},
        {"mm.x1000000000y1z1.r1", "training.train_samples"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        bad = pack_set_as(SETS "cubeset_single_parameter", 0, NULL, "mm.x500y1z1.r1",
                          refused[i].dir, &len);
        post(h, exp, "?format=cube-set", "application/x-tar", bad, len, &r);
        json_t *pj = harness_json(&r);
        char member[160];
        snprintf(member, sizeof member, "set/%s/profile.cubex", refused[i].dir);
        check(r.status == 400 &&
                  !strcmp(json_string_value(json_object_get(pj, "field")) ?: "",
                          refused[i].field) &&
                  strstr(json_string_value(json_object_get(pj, "detail")) ?: "", member),
              "%s: %d %s", refused[i].field, r.status, r.body ? r.body : "");
        json_decref(pj);
        harness_response_free(&r);
        free(bad);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before, "nothing stored");
    /* the whole set as a zip */
    char *zip = pack_set(SETS "cubeset_single_parameter", 1, NULL, &len);
    post(h, exp, "", "application/zip", zip, len, &r);
    json_t *j = harness_json(&r);
    check(r.status == 202 && json_integer_value(json_object_get(j, "runs")) == 9 &&
              json_array_size(json_object_get(j, "profiles")) == 9,
          "set: %d %s", r.status, r.body ? r.body : "");
    long job = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    check(job > 0 && harness_wait_job(h, job, 120), "the set's refit finishes");
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld AND "
                              "format = 'cube' AND repetition = 1", exp) == 9,
          "nine profiles, repetition 1 from \".r1\"");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld AND "
                              "point = '{2000}'", exp) == 1,
          "x=2000 from mm.x2000y1z1.r1");
    /* the experiment as an Extra-P experiment: our reader reads it back */
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/export?format=extra-p", exp);
    harness_get(h, path, &r);
    check(r.status == 200 && r.body_len > 100, "export: %d", r.status);
    ingest_experiment e;
    ingest_error ie;
    json_t *doc = NULL;
    int ok = r.status == 200 && ingest_extrap_exp_read(r.body, r.body_len, 0, &e, &doc, &ie) == 0;
    check(ok, "the export reads back: %s", ok ? "" : ie.msg);
    if (ok) {
        int found = 0;
        for (int i = 0; i < e.ncallpaths; i++)
            found |= !strcmp(e.callpaths[i], "main->init_mat");
        check(e.nparams == 1 && !strcmp(e.params[0], "x") && e.ncoords == 9 && found,
              "export: %d params, %d points, main->init_mat %d", e.nparams, e.ncoords, found);
        ingest_experiment_free(&e);
        json_decref(doc);
    }
    harness_response_free(&r);
    /* the same set again: duplicates, nothing new */
    post(h, exp, "?format=cube-set", "application/zip", zip, len, &r);
    check(r.status == 202 && r.body && strstr(r.body, "\"duplicate\":true"), "again: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(zip);
    /* a set whose directories do not name the experiment's parameter */
    long exp2 = create(h, "{\"name\":\"threads-set\",\"parameters\":[\"ranks\"],\"scaling\":"
                          "\"weak\",\"training\":{\"train_samples\":1000,\"batch_size\":10,"
                          "\"data_parallel\":\"ranks\"}}");
    char *tar = pack_set(SETS "cubeset_simple_threaded", 0, NULL, &len);
    long before2 = harness_sql_long(h, "SELECT count(*) FROM profiles");
    post(h, exp2, "?format=cube-set", "application/x-tar", tar, len, &r);
    check(r.status == 400 && r.body && strstr(r.body, "ranks"), "unnamed parameter: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(tar);
    /* mixed conventions */
    tar = pack_set(SETS "cubeset_negative_example", 0, NULL, &len);
    post(h, exp2, "?format=cube-set", "application/x-tar", tar, len, &r);
    check(r.status == 400 && r.body && strstr(r.body, "same ones in the same order"),
          "mixed: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(tar);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before2, "nothing stored");
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness_open failed");
        return check_summary();
    }
    test_uploads(h);
    test_set_upload(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
