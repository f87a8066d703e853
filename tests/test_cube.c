/*
 * test_cube.c — the Cube profile reader, profile sets and .extra-p files.
 *
 * Values of single .cubex files against what pycubexr (Extra-P's reader)
 * gives for them; the parameter conventions of run directories; `perfcast
 * model` on the shared fixtures (../shared/fixtures/extrap-formats, when
 * present) against the models Extra-P 4.2.5 made of them; the round trip
 * perfcast -> .extra-p -> perfcast; and bad input: truncated and corrupt
 * archives, an XML bomb, absurd sizes in an index, members leaving the
 * archive, zlib data larger than the index allows — each refused with a
 * message naming the member and the fault.
 */
#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>

#include "tests/harness.h"
#include "ingest/cube.h"
#include "ingest/extrap_exp.h"
#include "tests/check.h"
#include "tests/model_compare.h"

#define INPUTS "tests/data/extrap/inputs"
#define SHARED "../shared/fixtures/extrap-formats"

static const char *bin(void)
{
    const char *b = getenv("PERFCAST_BIN");
    return b ? b : "build/perfcast";
}

static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    size_t cap = 1 << 16, len = 0, got;
    char *out = malloc(cap);
    while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2)
            out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* ---- archives built in the test -------------------------------------------- */

typedef struct entry {
    char name[64];
    unsigned char *data;
    size_t len;
} entry;

typedef struct tarball {
    entry e[64];
    int n;
} tarball;

static int unpack(const char *path, tarball *t)
{
    size_t len;
    char *buf = harness_read_file(path, &len);
    struct archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    t->n = 0;
    if (!buf || archive_read_open_memory(a, buf, len) != ARCHIVE_OK) {
        archive_read_free(a);
        free(buf);
        return -1;
    }
    struct archive_entry *ae;
    while (archive_read_next_header(a, &ae) == ARCHIVE_OK && t->n < 64) {
        entry *e = &t->e[t->n++];
        snprintf(e->name, sizeof e->name, "%s", archive_entry_pathname(ae));
        e->len = (size_t)archive_entry_size(ae);
        e->data = malloc(e->len + 1);
        archive_read_data(a, e->data, e->len);
    }
    archive_read_free(a);
    free(buf);
    return 0;
}

static void tarball_free(tarball *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->e[i].data);
    t->n = 0;
}

static entry *member(tarball *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->e[i].name, name))
            return &t->e[i];
    return NULL;
}

static void replace(entry *e, const void *data, size_t len)
{
    free(e->data);
    e->data = malloc(len + 1);
    memcpy(e->data, data, len);
    e->len = len;
}

/* Packs t into a malloc'ed tar; *len its size. */
static unsigned char *pack(const tarball *t, size_t *len)
{
    size_t cap = 1 << 22;
    unsigned char *buf = malloc(cap);
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_open_memory(a, buf, cap, len);
    for (int i = 0; i < t->n; i++) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, t->e[i].name);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)t->e[i].len);
        archive_write_header(a, ae);
        archive_write_data(a, t->e[i].data, t->e[i].len);
        archive_entry_free(ae);
    }
    archive_write_close(a);
    archive_write_free(a);
    return buf;
}

/* Reads the bytes; returns the error message ("" on success). */
static const char *read_msg(const unsigned char *buf, size_t len, ingest_error *err)
{
    cube_profile p;
    if (ingest_cube_read(buf, len, NULL, &p, err) == 0) {
        cube_profile_free(&p);
        err->msg[0] = '\0';
    }
    return err->msg;
}

/* ---- values ---------------------------------------------------------------- */

static const cube_series *find_series(const cube_profile *p, const char *cp, const char *m)
{
    for (int i = 0; i < p->nseries; i++)
        if (!strcmp(p->callpaths[p->series[i].callpath], cp) &&
            !strcmp(p->metrics[p->series[i].metric], m))
            return &p->series[i];
    return NULL;
}

static void test_values(void)
{
    size_t len;
    char *buf = harness_read_file(INPUTS "/cubeset_single_parameter/mm.x1000y1z1.r1/profile.cubex", &len);
    cube_profile p;
    ingest_error err;
    check(buf && ingest_cube_read(buf, len, NULL, &p, &err) == 0, "single: %s", err.msg);
    free(buf);
    check(p.nlocations == 1 && p.ncallpaths == 4 && p.nmetrics == 7 && p.nskipped == 2,
          "locations %d callpaths %d metrics %d skipped %d", p.nlocations, p.ncallpaths,
          p.nmetrics, p.nskipped);
    check(!strcmp(p.callpaths[0], "main") && !strcmp(p.callpaths[1], "main->init_mat") &&
              !strcmp(p.callpaths[3], "main->mat_mul"),
          "callpath names");
    /* pycubexr, exclusive: main 1.2488e-05 (inclusive time minus its children) */
    const cube_series *s = find_series(&p, "main", "time");
    check(s && fabs(s->values[0] - 1.2488e-05) < 1e-18, "main time %.17g",
          s ? s->values[0] : -1);
    s = find_series(&p, "main->init_mat", "visits");
    check(s && s->values[0] == 2, "init_mat visits");
    cube_profile_free(&p);

    buf = harness_read_file(INPUTS "/cubeset_simple_threaded/example.f3/cube-example3.cubex", &len);
    check(buf && ingest_cube_read(buf, len, NULL, &p, &err) == 0, "threaded: %s", err.msg);
    free(buf);
    const double omp[] = {10.5, 9.600000000000001, 10.2, 9.3}, mainv[] = {3.8999999999999986, 0,
                                                                            4.500000000000002, 0};
    const cube_series *so = find_series(&p, "main->omp parallel", "time");
    const cube_series *sm = find_series(&p, "main", "time");
    check(p.nlocations == 4 && so && sm, "4 threads");
    for (int l = 0; so && sm && l < 4; l++)
        check(fabs(so->values[l] - omp[l]) < 1e-12 && fabs(sm->values[l] - mainv[l]) < 1e-12,
              "thread %d: omp %.17g main %.17g", l, so->values[l], sm->values[l]);
    /* the normalized profile: one row per thread and (callpath, metric) */
    profile prof;
    check(ingest_cube_to_profile(&p, &prof, &err) == 0, "to profile");
    check(prof.nranks == 4 && prof.nrows == (size_t)p.nseries * 4, "rows %zu", prof.nrows);
    int found = 0;
    for (size_t i = 0; i < prof.nrows; i++)
        if (prof.rows[i].rank == 2 && !strcmp(prof.callpaths[prof.rows[i].callpath].name,
                                              "main->omp parallel") &&
            !strcmp(prof.metrics[prof.rows[i].metric], "time"))
            found = fabs(prof.rows[i].value - 10.2) < 1e-12;
    check(found, "rank 2 omp time row");
    profile_free(&prof);
    cube_profile_free(&p);
}

/* ---- directory names ------------------------------------------------------------ */

static void test_dir_names(void)
{
    static const struct {
        const char *name;
        double v[3];
    } ok[] = {
        {"mm.x1.1y1.1z1.1", {1.1, 1.1, 1.1}},   {"mm.x10y1z1.r1", {10, 1, 1}},
        {"mm.x1y1z1", {1, 1, 1}},               {"mm.x20,5.y20,5.z1,5.r1", {20.5, 20.5, 1.5}},
        {"mm.x21.5,y21,5,z1.15.r1", {21.5, 21.5, 1.15}}, {"mm.x22.5.y22.5.z1.25.r1", {22.5, 22.5, 1.25}},
        {"mm.x25.y25.z1.r1", {25, 25, 1}},      {"x10y1z1", {10, 1, 1}},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *store, *names[8], msg[200];
        double v[8];
        int n = ingest_cube_dir_params(ok[i].name, &store, names, v, 8, msg, sizeof msg);
        check(n == 3 && !strcmp(names[0], "x") && !strcmp(names[1], "y") &&
                  !strcmp(names[2], "z") && v[0] == ok[i].v[0] && v[1] == ok[i].v[1] &&
                  v[2] == ok[i].v[2],
              "%s: %d params %g %g %g (%s)", ok[i].name, n, v[0], v[1], v[2], n < 0 ? msg : "");
        free(store);
    }
    const char *bad[] = {"mm.nothing", "mm.10x", "mm.x10y", "mm.x1.2.3y1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *store, *names[8], msg[200] = "";
        double v[8];
        int n = ingest_cube_dir_params(bad[i], &store, names, v, 8, msg, sizeof msg);
        check(n < 0 && msg[0], "\"%s\" refused: %d %s", bad[i], n, msg);
    }
    /* a set whose runs name different parameters is refused, naming both */
    cube_set *s = ingest_cube_set_new();
    cube_profile empty = {0};
    ingest_error err;
    check(ingest_cube_set_add(s, "mm.x1y1z1.r1", &empty, &err) == 0, "first run");
    check(ingest_cube_set_add(s, "mm.y1x1z1.r1", &empty, &err) < 0 &&
              strstr(err.msg, "mm.y1x1z1.r1") && strstr(err.msg, "mm.x1y1z1.r1"),
          "mixed conventions: %s", err.msg);
    ingest_experiment e;
    check(ingest_cube_set_finish(s, &e, &err) < 0 && strstr(err.msg, "varies"),
          "one run, nothing varies: %s", err.msg);
    ingest_cube_set_free(s);
}

/* ---- the shared fixtures: Extra-P's models ------------------------------------------ */

static void compare_models(const char *input, const char *expected_path)
{
    size_t len;
    char *want = harness_read_file(expected_path, &len);
    if (!want)
        return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s model --modeler extrap %s 2>/dev/null", bin(), input);
    int st;
    char *got = run(cmd, &st);
    check(st == 0, "%s: exit %d", input, st);
    int n = 0;
    for (char *line = want; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *last = strrchr(line, ';');
        if (last) {
            size_t klen = (size_t)(last - line + 1);
            char model[2048] = "";
            int hit = 0;
            for (char *g = got; *g && !hit; g = strchr(g, '\n') ? strchr(g, '\n') + 1 : "")
                if (!strncmp(g, line, klen)) {
                    hit = 1;
                    snprintf(model, sizeof model, "%.*s", (int)strcspn(g + klen, "\n"), g + klen);
                }
            char why[256] = "";
            check(hit && same_model(model, last + 1, why, sizeof why), "%s %.*s: got %s want %s (%s)",
                  input, (int)klen, line, model, last + 1, why);
            n++;
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    check(n > 0, "%s: models compared", input);
    free(want);
    free(got);
}

static void test_shared_fixtures(void)
{
    FILE *f = fopen(SHARED "/README.md", "r");
    if (!f) {
        printf("test_cube: %s absent, the copies under %s are checked by test_parity\n", SHARED,
               INPUTS);
        return;
    }
    fclose(f);
    compare_models(SHARED "/single_parameter", SHARED "/single_parameter.extrap.models");
    compare_models(SHARED "/simple_threaded", SHARED "/simple_threaded.extrap.models");
    compare_models(SHARED "/exp_only_mean_median.extra-p",
                   SHARED "/exp_only_mean_median.extrap.models");
}

/* ---- round trip through .extra-p ------------------------------------------------ */

static void test_round_trip(void)
{
    char tmp[] = "/tmp/perfcast-cube-XXXXXX";
    check(mkdtemp(tmp) != NULL, "tmpdir");
    char cmd[1024], path[512];
    snprintf(path, sizeof path, "%s/mp.extra-p", tmp);
    snprintf(cmd, sizeof cmd,
             "%s model --modeler extrap %s/cubeset_multi_parameter --save %s 2>/dev/null", bin(),
             INPUTS, path);
    int st;
    char *direct = run(cmd, &st);
    check(st == 0, "--save exit %d", st);
    size_t len;
    char *zip = harness_read_file(path, &len);
    ingest_experiment e;
    ingest_error err;
    json_t *doc = NULL;
    check(zip && ingest_extrap_exp_read(zip, len, 0, &e, &doc, &err) == 0, "read back: %s",
          err.msg);
    free(zip);
    /* Extra-P's layout: the fields its ExperimentSchema loads */
    json_t *m0 = json_array_get(
        json_object_get(json_object_get(json_object_get(doc, "measurements"), "main"), "time"), 0);
    check(json_is_string(json_object_get(doc, "Extra-P")) &&
              json_array_size(json_object_get(doc, "parameters")) == 3 &&
              json_array_size(json_object_get(m0, "coordinate")) == 3 &&
              json_is_real(json_object_get(m0, "mean")) &&
              json_is_real(json_object_get(m0, "median")) &&
              json_is_real(json_object_get(m0, "std")) &&
              json_number_value(json_object_get(m0, "repetitions")) == 1,
          "experiment.json layout");
    json_decref(doc);
    check(e.nparams == 3 && e.ncoords == 27 && e.nseries == 28, "params %d coords %d series %d",
          e.nparams, e.ncoords, e.nseries);
    ingest_experiment_free(&e);
    /* the models of the saved experiment are those of the set */
    snprintf(cmd, sizeof cmd, "%s model --modeler extrap %s 2>/dev/null", bin(), path);
    char *again = run(cmd, &st);
    check(st == 0 && strlen(again) > 100, "model of the saved file");
    int lines = 0, same = 0;
    for (char *a = direct; *a; lines++) {
        char *na = strchr(a, '\n');
        if (!na)
            break;
        *na = '\0';
        char *ma = strrchr(a, ';');
        /* the same "callpath;metric;" line in the other output */
        for (char *b = again; ma && *b;) {
            size_t bl = strcspn(b, "\n");
            char why[256], mb[2048];
            if (!strncmp(b, a, (size_t)(ma - a + 1))) {
                snprintf(mb, sizeof mb, "%.*s", (int)(bl - (size_t)(ma - a + 1)), b + (ma - a + 1));
                same += same_model(ma + 1, mb, why, sizeof why);
                break;
            }
            b += bl + (b[bl] == '\n');
        }
        a = na + 1;
    }
    check(lines == 28 && same == 28, "round trip: %d of %d models the same", same, lines);
    free(direct);
    free(again);
    unlink(path);
    rmdir(tmp);
}

/* ---- bad input ---------------------------------------------------------------------- */

static void test_bad_input(void)
{
    const char *src = INPUTS "/cubeset_single_parameter/mm.x10y1z1.r1/profile.cubex";
    size_t len;
    char *orig = harness_read_file(src, &len);
    ingest_error err;
    /* truncated: the archive ends inside a member */
    const char *m = read_msg((unsigned char *)orig, len / 2, &err);
    check(strstr(m, "truncated") != NULL, "truncated: %s", m);
    /* not an archive */
    m = read_msg((const unsigned char *)"{\"not\": \"a tar\"}", 16, &err);
    check(m[0] != '\0', "not a tar: %s", m);
    free(orig);

    tarball t;
    check(unpack(src, &t) == 0 && member(&t, "anchor.xml") && member(&t, "1.index"), "unpack");
    size_t n;
    unsigned char *tar;
    /* the unmodified repack reads */
    tar = pack(&t, &n);
    check(read_msg(tar, n, &err)[0] == '\0', "repacked reads: %s", err.msg);
    free(tar);

    /* an XML bomb: refused at the DOCTYPE, nothing expanded */
    tarball bomb;
    unpack(src, &bomb);
    static const char xml[] =
        "<?xml version=\"1.0\"?>\n<!DOCTYPE cube [<!ENTITY a \"aaaaaaaaaa\">"
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
        "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\"><!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">"
        "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\"><!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">]>\n"
        "<cube><metrics><metric id=\"0\" type=\"EXCLUSIVE\"><uniq_name>&g;</uniq_name>"
        "<dtype>DOUBLE</dtype></metric></metrics></cube>";
    replace(member(&bomb, "anchor.xml"), xml, sizeof xml - 1);
    tar = pack(&bomb, &n);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    m = read_msg(tar, n, &err);
    getrusage(RUSAGE_SELF, &after);
    check(strstr(m, "anchor.xml") && strstr(m, "DOCTYPE"), "XML bomb: %s", m);
    check(after.ru_maxrss - before.ru_maxrss < 50 * 1024, "XML bomb grew RSS by %ld KiB",
          after.ru_maxrss - before.ru_maxrss);
    free(tar);
    tarball_free(&bomb);

    /* an index claiming 2^31 - 1 positions */
    tarball big;
    unpack(src, &big);
    entry *ix = member(&big, "1.index");
    unsigned char *b = malloc(ix->len);
    memcpy(b, ix->data, ix->len);
    b[18] = 0xff, b[19] = 0xff, b[20] = 0xff, b[21] = 0x7f;
    replace(ix, b, ix->len);
    free(b);
    tar = pack(&big, &n);
    m = read_msg(tar, n, &err);
    check(strstr(m, "1.index") && strstr(m, "2147483647 positions"), "absurd index: %s", m);
    free(tar);
    tarball_free(&big);

    /* a member that leaves the archive */
    tarball esc;
    unpack(src, &esc);
    snprintf(esc.e[esc.n].name, sizeof esc.e[0].name, "../../etc/evil");
    esc.e[esc.n].data = (unsigned char *)strdup("x");
    esc.e[esc.n++].len = 1;
    tar = pack(&esc, &n);
    m = read_msg(tar, n, &err);
    check(strstr(m, "../../etc/evil") && strstr(m, "leaves the archive"), "escape: %s", m);
    free(tar);
    tarball_free(&esc);

    /* zlib data that inflates beyond what the index and locations allow */
    tarball z;
    unpack(src, &z);
    unsigned char zeros[4096] = {0}, comp[8192];
    uLongf clen = sizeof comp;
    compress(comp, &clen, zeros, sizeof zeros);
    unsigned char data[8192];
    memcpy(data, "ZCUBEX.DATA", 11);
    uint64_t one = 1, zero = 0, csz = clen;
    memcpy(data + 11, &one, 8);
    memcpy(data + 19, &zero, 8);
    memcpy(data + 27, &zero, 8);
    memcpy(data + 35, &csz, 8);
    memcpy(data + 43, comp, clen);
    replace(member(&z, "1.data"), data, 43 + clen);
    tar = pack(&z, &n);
    m = read_msg(tar, n, &err);
    check(strstr(m, "1.data") && strstr(m, "larger than"), "zlib bomb: %s", m);
    free(tar);
    /* and corrupt zlib data */
    data[45] ^= 0x55;
    data[50] ^= 0x55;
    replace(member(&z, "1.data"), data, 43 + clen);
    tar = pack(&z, &n);
    m = read_msg(tar, n, &err);
    check(strstr(m, "1.data") != NULL && m[0], "corrupt zlib: %s", m);
    free(tar);
    tarball_free(&z);
    tarball_free(&t);

    /* the CLI: exit 2 naming the file */
    int st;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s model %s/cubeset_negative_example 2>&1 >/dev/null", bin(),
             INPUTS);
    char *out = run(cmd, &st);
    check(st == 2 && strstr(out, "cubeset_negative_example/") && strstr(out, "same parameters"),
          "mixed set: %d %s", st, out);
    free(out);
}

int main(void)
{
    test_values();
    test_dir_names();
    test_bad_input();
    test_round_trip();
    test_shared_fixtures();
    return check_summary();
}
