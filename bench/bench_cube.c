/*
 * bench_cube.c — Score-P Cube read throughput (`make bench`, figure "cube").
 *
 * Generates (in --dir) one large .cubex (--big-cnodes call-tree nodes x
 * --big-locations locations x 4 metrics, half of them zlib-compressed) and a
 * profile set of --runs runs ("mm.x<i>y1z1.r1/profile.cubex", 30 callpaths,
 * 3 metrics, 4 threads each), then measures in this process:
 *   big_mb_per_s     .cubex bytes read per second by ingest_cube_read
 *   set_profiles_per_s  runs per second read and built into the experiment
 *                    (ingest_cube_set_*: what `perfcast model DIR` reads)
 * against two baselines measured in the same run:
 *   text_profiles_per_s  the same values as one Extra-P text file, read by
 *                    perfcast's Extra-P text reader (equivalent data)
 *   extrap_profiles_per_s  Extra-P 4.2.5's CubeFileReader2 on --extrap-runs
 *                    (50) of the same runs (it reads a few per second),
 *                    when python3 can import it (--extrap SRC and --pycubexr
 *                    SRC, e.g. the public sources with Debian's numpy); -1 and
 *                    a reason otherwise
 * and the peak RSS of this process. One JSON line.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "tests/harness.h"
#include "ingest/cube.h"
#include "ingest/extrap.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct buf {
    char *b;
    size_t len, cap;
} buf;

static void put(buf *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 4096;
        o->b = realloc(o->b, o->cap);
    }
    memcpy(o->b + o->len, p, n);
    o->len += n;
}

static void putf(buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(o, tmp, (size_t)n);
}

/* anchor.xml: main with ncn-1 children, nloc threads, metrics time (inclusive,
 * DOUBLE), visits (exclusive, UINT64), bytes (exclusive, UINT64), flops
 * (inclusive, UINT64). */
static void anchor(buf *o, int ncn, int nloc)
{
    putf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cube version=\"4.3\">\n<metrics>\n");
    static const char *names[] = {"time", "visits", "bytes", "flops"};
    static const char *types[] = {"INCLUSIVE", "EXCLUSIVE", "EXCLUSIVE", "INCLUSIVE"};
    static const char *dt[] = {"DOUBLE", "UINT64", "UINT64", "UINT64"};
    for (int m = 0; m < 4; m++)
        putf(o, "<metric id=\"%d\" type=\"%s\"><disp_name>%s</disp_name><uniq_name>%s</uniq_name>"
                "<dtype>%s</dtype><uom>sec</uom><url></url><descr></descr></metric>\n",
             m, types[m], names[m], names[m], dt[m]);
    putf(o, "</metrics>\n<program>\n");
    for (int r = 0; r < ncn; r++)
        putf(o, "<region id=\"%d\" mod=\"m.c\" begin=\"1\" end=\"2\"><name>%s%d</name></region>\n",
             r, r ? "kernel_" : "main", r ? r : 0);
    putf(o, "<cnode id=\"0\" calleeId=\"0\">\n");
    for (int c = 1; c < ncn; c++)
        putf(o, "<cnode id=\"%d\" calleeId=\"%d\"></cnode>\n", c, c);
    putf(o, "</cnode>\n</program>\n<system><systemtreenode Id=\"0\"><name>machine</name>"
            "<class>machine</class><locationgroup Id=\"0\"><name>Process</name><rank>0</rank>"
            "<type>process</type>\n");
    for (int l = 0; l < nloc; l++)
        putf(o, "<location Id=\"%d\"><name>thread %d</name><rank>%d</rank><type>thread</type>"
                "</location>\n", l, l, l);
    putf(o, "</locationgroup></systemtreenode></system>\n</cube>\n");
}

static void add_member(struct archive *a, const char *name, const void *p, size_t n)
{
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)n);
    archive_write_header(a, e);
    archive_write_data(a, p, n);
    archive_entry_free(e);
}

/* Writes a .cubex to path; the value of (metric m, cnode c, location l) is
 * value(m, c, l, x). Returns its size. */
static double value(int m, int c, int l, double x)
{
    double v = (1 + c % 7) * (1e-3 * x + 0.5) * (1 + 0.01 * l);
    return m == 0 ? v : (double)(long)(v * 100 + m);
}

static size_t write_cubex(const char *path, int ncn, int nloc, double x, int compress_half)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
        fprintf(stderr, "bench_cube: %s: %s\n", path, archive_error_string(a));
        exit(1);
    }
    buf an = {0};
    anchor(&an, ncn, nloc);
    add_member(a, "anchor.xml", an.b, an.len);
    free(an.b);
    size_t n = (size_t)ncn * (size_t)nloc;
    unsigned char *raw = malloc(n * 8);
    for (int m = 0; m < 4; m++) {
        buf ix = {0};
        put(&ix, "CUBEX.INDEX", 11);
        int32_t one = 1, cnt = ncn;
        int16_t ver = 0;
        put(&ix, &one, 4);
        put(&ix, &ver, 2);
        put(&ix, "\0", 1);
        put(&ix, &cnt, 4);
        for (int32_t c = 0; c < ncn; c++)
            put(&ix, &c, 4);
        for (int c = 0; c < ncn; c++)
            for (int l = 0; l < nloc; l++) {
                /* inclusive metrics: main holds the sum of its children */
                double v = value(m, c, l, x);
                if (c == 0 && (m == 0 || m == 3))
                    for (int k = 1; k < ncn; k++)
                        v += value(m, k, l, x);
                if (m == 0) {
                    memcpy(raw + ((size_t)c * nloc + l) * 8, &v, 8);
                } else {
                    uint64_t u = (uint64_t)v;
                    memcpy(raw + ((size_t)c * nloc + l) * 8, &u, 8);
                }
            }
        buf da = {0};
        if (compress_half && m % 2) {
            uLongf cl = compressBound(n * 8);
            unsigned char *cz = malloc(cl);
            compress2(cz, &cl, raw, n * 8, 1);
            int64_t blocks = 1, hdr[3] = {0, 0, (int64_t)cl};
            put(&da, "ZCUBEX.DATA", 11);
            put(&da, &blocks, 8);
            put(&da, hdr, 24);
            put(&da, cz, cl);
            free(cz);
        } else {
            put(&da, "CUBEX.DATA", 10);
            put(&da, raw, n * 8);
        }
        char name[32];
        snprintf(name, sizeof name, "%d.index", m);
        add_member(a, name, ix.b, ix.len);
        snprintf(name, sizeof name, "%d.data", m);
        add_member(a, name, da.b, da.len);
        free(ix.b);
        free(da.b);
    }
    free(raw);
    archive_write_close(a);
    archive_write_free(a);
    struct stat st;
    stat(path, &st);
    return (size_t)st.st_size;
}

int main(int argc, char **argv)
{
    const char *dir = "build/bench-data", *extrap = NULL, *pycubexr = NULL;
    int runs = 1000, big_cn = 4000, big_loc = 256, reps = 3, extrap_runs = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--big-cnodes"))
            big_cn = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--big-locations"))
            big_loc = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--extrap"))
            extrap = argv[i + 1];
        else if (!strcmp(argv[i], "--extrap-runs"))
            extrap_runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pycubexr"))
            pycubexr = argv[i + 1];
    }
    char path[1024], set[1024];
    snprintf(path, sizeof path, "%s/cube_big.cubex", dir);
    mkdir(dir, 0755);
    size_t big = write_cubex(path, big_cn, big_loc, 10, 1);
    size_t len;
    char *bytes = harness_read_file(path, &len);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        cube_profile p;
        ingest_error err;
        if (ingest_cube_read(bytes, len, NULL, &p, &err) < 0) {
            fprintf(stderr, "bench_cube: %s\n", err.msg);
            return 1;
        }
        double t = now() - t0;
        best = t < best ? t : best;
        cube_profile_free(&p);
    }
    free(bytes);
    double big_mbps = big / 1e6 / best;

    /* the set */
    snprintf(set, sizeof set, "%s/cube_set", dir);
    mkdir(set, 0755);
    buf text = {0};
    putf(&text, "PARAMETER x\n\nPOINTS");
    for (int i = 1; i <= runs; i++) {
        char d[1200], f[1300];
        snprintf(d, sizeof d, "%s/mm.x%dy1z1.r1", set, i);
        mkdir(d, 0755);
        snprintf(f, sizeof f, "%s/profile.cubex", d);
        write_cubex(f, 30, 4, i, 1);
        putf(&text, " %d", i);
    }
    putf(&text, "\n\n");
    /* the equivalent text: the same exclusive values, 4 per point */
    static const char *mn[] = {"time", "visits", "bytes", "flops"};
    for (int c = 0; c < 30; c++) {
        putf(&text, "REGION %s%d\n", c ? "main->kernel_" : "main", c ? c : 0);
        for (int m = 0; m < 4; m++) {
            putf(&text, "METRIC %s\n", mn[m]);
            for (int i = 1; i <= runs; i++) {
                putf(&text, "DATA");
                for (int l = 0; l < 4; l++)
                    putf(&text, " %.17g", value(m, c, l, i));
                putf(&text, "\n");
            }
        }
    }
    double t0 = now();
    cube_set *s = ingest_cube_set_new();
    ingest_error err;
    for (int i = 1; i <= runs; i++) {
        char d[64], f[1300];
        snprintf(d, sizeof d, "mm.x%dy1z1.r1", i);
        snprintf(f, sizeof f, "%s/%s/profile.cubex", set, d);
        char *b = harness_read_file(f, &len);
        cube_profile p;
        if (!b || ingest_cube_read(b, len, NULL, &p, &err) < 0 ||
            ingest_cube_set_add(s, d, &p, &err) < 0) {
            fprintf(stderr, "bench_cube: %s: %s\n", f, err.msg);
            return 1;
        }
        free(b);
    }
    ingest_experiment e;
    if (ingest_cube_set_finish(s, &e, &err) < 0) {
        fprintf(stderr, "bench_cube: %s\n", err.msg);
        return 1;
    }
    double set_s = now() - t0;
    ingest_cube_set_free(s);
    int nseries = e.nseries;
    ingest_experiment_free(&e);

    t0 = now();
    ingest_experiment te;
    if (ingest_extrap_read(text.b, text.len, INGEST_FORMAT_EXTRAP_TEXT, &te, &err) < 0) {
        fprintf(stderr, "bench_cube: text: %s\n", err.msg);
        return 1;
    }
    double text_s = now() - t0;
    ingest_experiment_free(&te);
    free(text.b);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss_mb = ru.ru_maxrss / 1024.0;

    /* Extra-P on the same set, when it can run here */
    double extrap_rate = -1;
    const char *why = "no --extrap and --pycubexr sources given";
    if (extrap && pycubexr) {
        char meta[1200], cmd[4096], set2[1100];
        /* Extra-P reads ~3 runs/s here: a smaller set of the same runs */
        snprintf(set2, sizeof set2, "%s/cube_set_extrap", dir);
        mkdir(set2, 0755);
        for (int i = 1; i <= extrap_runs; i++) {
            char d[1200], f[1300];
            snprintf(d, sizeof d, "%s/mm.x%dy1z1.r1", set2, i);
            mkdir(d, 0755);
            snprintf(f, sizeof f, "%s/profile.cubex", d);
            write_cubex(f, 30, 4, i, 1);
        }
        snprintf(meta, sizeof meta, "%s/pycubexr-dist/pycubexr-2.1.1.dist-info", dir);
        snprintf(cmd, sizeof cmd, "mkdir -p %s && printf 'Metadata-Version: 2.1\\nName: pycubexr\\n"
                 "Version: 2.1.1\\n' > %s/METADATA", meta, meta);
        if (system(cmd) != 0)
            why = "cannot prepare pycubexr's metadata";
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -W ignore -c \"import sys, time; sys.path[:0] = ['%s/pycubexr-dist', "
                 "'%s', '%s']; from extrap.fileio.file_reader.cube_file_reader2 import "
                 "CubeFileReader2; t = time.monotonic(); e = CubeFileReader2().read_experiment('%s'); "
                 "print(time.monotonic() - t, len(e.measurements))\" 2>/dev/null",
                 dir, pycubexr, extrap, set2);
        FILE *p = popen(cmd, "r");
        double secs = 0;
        int keys = 0;
        if (p && fscanf(p, "%lf %d", &secs, &keys) == 2 && secs > 0) {
            extrap_rate = extrap_runs / secs;
            why = NULL;
            if (keys != nseries)
                why = "Extra-P read a different number of series";
        } else {
            why = "python3 cannot import Extra-P 4.2.5 (numpy, marshmallow, tqdm, packaging)";
        }
        if (p)
            pclose(p);
    }
    printf("{\"figure\": \"cube\", \"big_bytes\": %zu, \"big_cnodes\": %d, \"big_locations\": %d, "
           "\"big_mb_per_s\": %.1f, \"runs\": %d, \"set_s\": %.4f, \"set_profiles_per_s\": %.1f, "
           "\"text_profiles_per_s\": %.1f, \"ratio_vs_text\": %.2f, \"extrap_profiles_per_s\": %.1f, "
           "\"ratio_vs_extrap\": %.1f, \"extrap_runs\": %d, \"extrap_note\": \"%s\", \"series\": %d, "
           "\"max_rss_mb\": %.1f}\n",
           big, big_cn, big_loc, big_mbps, runs, set_s, runs / set_s, runs / text_s,
           (runs / set_s) / (runs / text_s), extrap_rate,
           extrap_rate > 0 ? (runs / set_s) / extrap_rate : -1, extrap_runs, why ? why : "", nseries,
           rss_mb);
    return 0;
}
