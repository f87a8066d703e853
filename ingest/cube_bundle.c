/*
 * cube_bundle.c — a whole Cube profile set in one tar or zip archive (one
 * HTTP upload), into one normalized profile per run.
 *
 * Members named ".../<run directory>/<name>.cubex" (the name not starting
 * with '.') are runs; the run directory's name gives the parameters as on disk
 * (ingest_cube_dir_params) and, when it ends in ".r<N>", the repetition.
 * Other members are ignored, as Extra-P ignores other files; a member whose
 * name is absolute or climbs out with ".." is refused. Every run must name the
 * same parameters in the same order. Each .cubex is read by ingest_cube_read
 * (its own limits apply inside); the sizes of the members are checked against
 * the limits before they are read. A fault names the member.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/cube.h"

static int fail(ingest_error *err, const char *fmt, const char *a, const char *b)
{
    memset(err, 0, sizeof *err);
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, fmt, a, b);
    return -1;
}

static int escapes(const char *name)
{
    if (name[0] == '/' || name[0] == '\\')
        return 1;
    for (const char *p = name; *p;) {
        size_t l = strcspn(p, "/\\");
        if (l == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += l + (p[l] != '\0');
    }
    return 0;
}

/* The run directory of a member ".../<dir>/<file>.cubex", or NULL. */
static char *run_dir(const char *name)
{
    size_t n = strlen(name);
    const char *slash = strrchr(name, '/');
    if (!slash || n < 7 || strcmp(name + n - 6, ".cubex") || slash[1] == '.' || slash[1] == '\0')
        return NULL;
    const char *d = slash;
    while (d > name && d[-1] != '/')
        d--;
    if (d == slash)
        return NULL;
    return strndup(d, (size_t)(slash - d));
}

static int repetition_of(const char *dir)
{
    const char *r = strstr(dir, ".r");
    if (!r)
        return 0;
    char *end;
    long v = strtol(r + 2, &end, 10);
    return end > r + 2 && *end == '\0' && v >= 1 && v < 1000000 ? (int)v : 0;
}

static int add_run(cube_bundle *b, const char *member, char *dir, const unsigned char *data,
                   size_t len, const cube_limits *lim, ingest_error *err)
{
    cube_bundle_run *runs = realloc(b->runs, sizeof *runs * (size_t)(b->n + 1));
    if (!runs) {
        free(dir);
        return fail(err, "out of memory%s%s", "", "");
    }
    b->runs = runs;
    cube_bundle_run *r = &b->runs[b->n];
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->member = strdup(member);
    char msg[200];
    r->np = ingest_cube_dir_params(dir, &r->store, r->names, r->values, CUBE_MAX_PARAMS, msg,
                                   sizeof msg);
    b->n++; /* owned from here: freed with the bundle */
    if (!r->member)
        return fail(err, "out of memory%s%s", "", "");
    if (r->np < 0)
        return fail(err, "%.100s: %.150s", member, msg);
    const cube_bundle_run *first = &b->runs[0];
    int same = first->np == r->np;
    for (int i = 0; same && i < r->np; i++)
        same = !strcmp(first->names[i], r->names[i]);
    if (!same)
        return fail(err, "%.80s names other parameters than %.80s (every run must name the "
                    "same ones in the same order)", member, first->member);
    r->repetition = repetition_of(dir);
    if (!(r->raw = malloc(len ? len : 1)))
        return fail(err, "out of memory%s%s", "", "");
    memcpy(r->raw, data, len);
    r->raw_len = len;
    cube_profile c;
    ingest_error ce;
    if (ingest_cube_read(data, len, lim, &c, &ce) < 0)
        return fail(err, "%.100s: %.150s", member, ce.msg);
    int rc = ingest_cube_to_profile(&c, &r->prof, &ce);
    cube_profile_free(&c);
    return rc ? fail(err, "%.100s: %.150s", member, ce.msg) : 0;
}

int ingest_cube_bundle_read(const void *buf, size_t len, const cube_limits *o, cube_bundle *out,
                            ingest_error *err)
{
    memset(out, 0, sizeof *out);
    cube_limits lim = {(size_t)1 << 30, (size_t)1 << 32, 10000000};
    if (o && o->max_member)
        lim.max_member = o->max_member;
    if (o && o->max_total)
        lim.max_total = o->max_total;
    if (o && o->max_nodes)
        lim.max_nodes = o->max_nodes;
    struct archive *ar = archive_read_new();
    if (!ar)
        return fail(err, "out of memory%s%s", "", "");
    archive_read_support_format_tar(ar);
    archive_read_support_format_zip(ar);
    archive_read_support_filter_gzip(ar);
    if (archive_read_open_memory(ar, buf, len) != ARCHIVE_OK) {
        fail(err, "not a tar or zip archive: %.120s%s", archive_error_string(ar), "");
        archive_read_free(ar);
        return -1;
    }
    struct archive_entry *ent;
    int r, rc = 0;
    size_t total = 0;
    while ((r = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
        const char *name = archive_entry_pathname(ent);
        if (!name)
            continue;
        if (escapes(name)) {
            rc = fail(err, "member \"%.100s\" leaves the archive (absolute or \"..\")%s", name, "");
            break;
        }
        char *dir = archive_entry_filetype(ent) == AE_IFREG ? run_dir(name) : NULL;
        if (!dir)
            continue;
        la_int64_t size = archive_entry_size(ent);
        if (!archive_entry_size_is_set(ent) || size < 0 || (uint64_t)size > lim.max_member ||
            (size_t)size > lim.max_total - total) {
            free(dir);
            rc = fail(err, "%.100s: its size is unknown or beyond the limit%s", name, "");
            break;
        }
        unsigned char *data = malloc(size ? (size_t)size : 1);
        size_t got = 0;
        while (data && got < (size_t)size) {
            la_ssize_t n = archive_read_data(ar, data + got, (size_t)size - got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (!data || got != (size_t)size) {
            free(data);
            free(dir);
            rc = fail(err, "%.100s: %s", name, data ? "truncated" : "out of memory");
            break;
        }
        total += got;
        rc = add_run(out, name, dir, data, got, &lim, err);
        free(data);
        if (rc)
            break;
    }
    if (!rc && r != ARCHIVE_EOF)
        rc = fail(err, "corrupt or truncated archive: %.120s%s",
                  archive_error_string(ar) ? archive_error_string(ar) : "", "");
    if (!rc && out->n == 0)
        rc = fail(err, "no run in the archive: expected members like "
                  "\"mm.x10y1z1.r1/profile.cubex\"%s%s", "", "");
    archive_read_free(ar);
    if (rc)
        ingest_cube_bundle_free(out);
    return rc;
}

void ingest_cube_bundle_free(cube_bundle *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->runs[i].dir);
        free(b->runs[i].member);
        free(b->runs[i].store);
        free(b->runs[i].raw);
        profile_free(&b->runs[i].prof);
    }
    free(b->runs);
    memset(b, 0, sizeof *b);
}
