/*
 * cube.c — one .cubex file into a cube_profile (cube.h), and that into
 * perfcast's normalized profile.
 *
 * The tar archive is read from memory with libarchive. Only regular members
 * named "anchor.xml", "<id>.index" and "<id>.data" are kept; a member whose
 * name is absolute or has a ".." component is refused, and every kept member's
 * size (from its header) is checked against the limits before it is read.
 * anchor.xml may be gzip-compressed (Score-P writes it so); it is inflated up
 * to the member limit. Then, for each top-level metric in anchor order, the
 * index and data members are decoded (cube_values.c); a metric without an
 * index member, or of a type that holds no plain number, is skipped and named.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ingest/cube_internal.h"
#include "ingest/extrap_internal.h"

typedef struct member {
    char *name;
    unsigned char *data;
    size_t len;
} member;

typedef struct members {
    member *m;
    int n;
    size_t cap;
} members;

static void members_free(members *ms)
{
    for (int i = 0; i < ms->n; i++) {
        free(ms->m[i].name);
        free(ms->m[i].data);
    }
    free(ms->m);
    memset(ms, 0, sizeof *ms);
}

static const member *members_get(const members *ms, const char *name)
{
    for (int i = 0; i < ms->n; i++)
        if (!strcmp(ms->m[i].name, name))
            return &ms->m[i];
    return NULL;
}

static void set_err(ingest_error *err, const char *fmt, const char *a, const char *b)
{
    memset(err, 0, sizeof *err);
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, fmt, a, b);
}

/* 1 for "anchor.xml" and "<digits>.index|data". */
static int wanted(const char *name)
{
    if (!strcmp(name, "anchor.xml"))
        return 1;
    const char *p = name;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > name && p - name < 12 && (!strcmp(p, ".index") || !strcmp(p, ".data"));
}

/* 1 when the name is absolute or climbs out with "..". */
static int escapes(const char *name)
{
    if (name[0] == '/' || name[0] == '\\')
        return 1;
    for (const char *p = name; *p;) {
        const char *e = p + strcspn(p, "/\\");
        if (e - p == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p = *e ? e + 1 : e;
    }
    return 0;
}

static int read_members(const void *buf, size_t len, const cube_limits *lim, members *ms,
                        ingest_error *err)
{
    struct archive *ar = archive_read_new();
    if (!ar) {
        set_err(err, "out of memory%s%s", "", "");
        return -1;
    }
    archive_read_support_format_tar(ar);
    archive_read_support_filter_gzip(ar);
    int rc = 0;
    size_t total = 0;
    if (archive_read_open_memory(ar, buf, len) != ARCHIVE_OK) {
        set_err(err, "not a tar archive: %s%s", archive_error_string(ar), "");
        archive_read_free(ar);
        return -1;
    }
    struct archive_entry *ent;
    int r;
    while ((r = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
        const char *name = archive_entry_pathname(ent);
        if (!name)
            name = "";
        if (escapes(name)) {
            set_err(err, "member \"%.80s\" leaves the archive (absolute or \"..\")%s", name, "");
            rc = -1;
            break;
        }
        if (archive_entry_filetype(ent) != AE_IFREG || !wanted(name))
            continue;
        if (members_get(ms, name)) {
            set_err(err, "member \"%.80s\" appears twice%s", name, "");
            rc = -1;
            break;
        }
        la_int64_t size = archive_entry_size(ent);
        if (size < 0 || (uint64_t)size > lim->max_member || (size_t)size > lim->max_total - total) {
            char lims[64];
            snprintf(lims, sizeof lims, "%lld bytes", (long long)size);
            set_err(err, "%.80s: %s exceed the size limit", name, lims);
            rc = -1;
            break;
        }
        if ((size_t)ms->n >= ms->cap) {
            size_t nc = ms->cap ? ms->cap * 2 : 32;
            member *m = realloc(ms->m, nc * sizeof *m);
            if (!m) {
                set_err(err, "out of memory%s%s", "", "");
                rc = -1;
                break;
            }
            ms->m = m;
            ms->cap = nc;
        }
        member *m = &ms->m[ms->n];
        m->name = strdup(name);
        m->data = malloc(size ? (size_t)size : 1);
        m->len = 0;
        ms->n++;
        if (!m->name || !m->data) {
            set_err(err, "out of memory%s%s", "", "");
            rc = -1;
            break;
        }
        while (m->len < (size_t)size) {
            la_ssize_t got = archive_read_data(ar, m->data + m->len, (size_t)size - m->len);
            if (got <= 0)
                break;
            m->len += (size_t)got;
        }
        if (m->len != (size_t)size) {
            set_err(err, "%.80s: truncated (%s)", name,
                    archive_error_string(ar) ? archive_error_string(ar) : "fewer bytes than its header says");
            rc = -1;
            break;
        }
        total += m->len;
    }
    if (!rc && r != ARCHIVE_EOF) {
        set_err(err, "corrupt or truncated tar archive: %.120s%s",
                archive_error_string(ar) ? archive_error_string(ar) : "unreadable header", "");
        rc = -1;
    }
    archive_read_free(ar);
    if (rc)
        members_free(ms);
    return rc;
}

/* The anchor's XML text: the member itself, or its gunzipped bytes. */
static int anchor_text(const member *m, size_t max, unsigned char **out, size_t *outlen,
                       ingest_error *err)
{
    *out = NULL;
    if (m->len >= 5 && !memcmp(m->data, "<?xml", 5)) {
        *outlen = m->len;
        return 0;
    }
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        set_err(err, "anchor.xml: zlib cannot start%s%s", "", "");
        return -1;
    }
    size_t cap = m->len * 4 < 65536 ? 65536 : m->len * 4, len = 0;
    if (cap > max)
        cap = max;
    unsigned char *buf = malloc(cap ? cap : 1);
    z.next_in = m->data;
    z.avail_in = (uInt)m->len;
    int zr = Z_OK;
    while (buf) {
        z.next_out = buf + len;
        z.avail_out = (uInt)(cap - len > 0x40000000 ? 0x40000000 : cap - len);
        size_t before = z.total_out;
        zr = inflate(&z, Z_NO_FLUSH);
        len += z.total_out - before;
        if (zr != Z_OK || z.avail_in == 0)
            break;
        if (len == cap) {
            if (cap >= max) {
                zr = Z_MEM_ERROR;
                break;
            }
            size_t nc = cap * 2 > max ? max : cap * 2;
            unsigned char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = nc;
        }
    }
    inflateEnd(&z);
    if (!buf || zr != Z_STREAM_END) {
        free(buf);
        set_err(err, "anchor.xml: %s%s",
                !buf ? "out of memory"
                : zr == Z_MEM_ERROR ? "inflates beyond the size limit"
                : m->len >= 2 && m->data[0] == 0x1f && m->data[1] == 0x8b
                    ? "corrupt or truncated gzip data"
                    : "neither XML (\"<?xml\") nor gzip",
                "");
        return -1;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

/* Callpath names from the call tree: parent->child, interned in order. */
static int name_callpaths(cube_anchor *a, cube_profile *p, ingest_error *err)
{
    ingest_names names = {0};
    names.index.seed = ingest_hash_seed();
    char **full = calloc((size_t)a->ncnodes, sizeof *full);
    int rc = full ? 0 : -1;
    for (int i = 0; i < a->ncnodes && !rc; i++) {
        const cube_cnode *c = &a->cnodes[i];
        const char *rn = a->regions[c->region].name;
        const char *pn = c->parent >= 0 ? full[c->parent] : NULL;
        size_t len = strlen(rn) + (pn ? strlen(pn) + 2 : 0);
        if (len > 1 << 20) {
            set_err(err, "anchor.xml: a callpath longer than 1 MiB%s%s", "", "");
            rc = -2;
            break;
        }
        full[i] = malloc(len + 1);
        if (!full[i]) {
            rc = -1;
            break;
        }
        snprintf(full[i], len + 1, "%s%s%s", pn ? pn : "", pn ? "->" : "", rn);
        int id, added;
        if (ingest_names_intern(&names, full[i], len, &id, &added) < 0)
            rc = -1;
        a->cnodes[i].callpath = id;
    }
    if (rc == -1)
        set_err(err, "out of memory%s%s", "", "");
    for (int i = 0; full && i < a->ncnodes; i++)
        free(full[i]);
    free(full);
    ingest_idtab_free(&names.index);
    p->callpaths = names.name;
    p->ncallpaths = names.n;
    return rc ? -1 : 0;
}

static int push_name(char ***arr, int *n, const char *s)
{
    char **a = realloc(*arr, sizeof **arr * (size_t)(*n + 1));
    if (!a)
        return -1;
    *arr = a;
    if (!(a[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

/* Decodes one metric into series of p. */
static int add_metric(const cube_anchor *a, const cube_metric_decl *m, const members *ms,
                      size_t max, cube_profile *p, ingest_error *err)
{
    char iname[40], dname[40];
    snprintf(iname, sizeof iname, "%ld.index", m->id);
    snprintf(dname, sizeof dname, "%ld.data", m->id);
    const member *ix = members_get(ms, iname), *dx = members_get(ms, dname);
    cube_vtype t = cube_dtype(m->dtype);
    if (!ix || !t.size)
        return push_name(&p->skipped, &p->nskipped, m->name) < 0 ? -1 : 0;
    if (!dx) {
        set_err(err, "%s: missing, though %.80s is listed", dname, iname);
        return -1;
    }
    int *pos;
    double *vals;
    char msg[200];
    long n = cube_metric_decode(a, m, t, ix->data, ix->len, dx->data, dx->len, max, &pos, &vals,
                                msg, sizeof msg);
    if (n < 0) {
        /* msg starts with "index: " or "data: ": name the member */
        int isdata = !strncmp(msg, "data", 4);
        const char *rest = strchr(msg, ':') ? strchr(msg, ':') + 2 : msg;
        snprintf(err->msg, sizeof err->msg, "%s (metric \"%.60s\"): %.120s",
                 isdata ? dname : iname, m->name, rest);
        err->offset = -1;
        err->line = 0;
        return -1;
    }
    if (n == 0) {
        free(pos);
        free(vals);
        return push_name(&p->skipped, &p->nskipped, m->name) < 0 ? -1 : 0;
    }
    int rc = push_name(&p->metrics, &p->nmetrics, m->name);
    cube_series *s = rc ? NULL : realloc(p->series, sizeof *s * (size_t)(p->nseries + n));
    if (!s) {
        free(pos);
        free(vals);
        return -1;
    }
    p->series = s;
    for (long k = 0; k < n; k++) {
        double *v = malloc(sizeof *v * (size_t)a->nlocations);
        if (!v) {
            rc = -1;
            break;
        }
        memcpy(v, vals + k * a->nlocations, sizeof *v * (size_t)a->nlocations);
        p->series[p->nseries++] =
            (cube_series){a->cnodes[pos[k]].callpath, p->nmetrics - 1, v};
    }
    free(pos);
    free(vals);
    return rc;
}

int ingest_cube_read(const void *buf, size_t len, const cube_limits *o, cube_profile *out,
                     ingest_error *err)
{
    cube_limits lim = {(size_t)1 << 30, (size_t)1 << 32, 10000000};
    if (o && o->max_member)
        lim.max_member = o->max_member;
    if (o && o->max_total)
        lim.max_total = o->max_total;
    if (o && o->max_nodes)
        lim.max_nodes = o->max_nodes;
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    err->offset = -1;
    members ms = {0};
    if (read_members(buf, len, &lim, &ms, err) < 0)
        return -1;
    const member *am = members_get(&ms, "anchor.xml");
    if (!am) {
        set_err(err, "no anchor.xml in the archive: not a Cube profile%s%s", "", "");
        members_free(&ms);
        return -1;
    }
    unsigned char *xml;
    size_t xlen;
    if (anchor_text(am, lim.max_member, &xml, &xlen, err) < 0) {
        members_free(&ms);
        return -1;
    }
    cube_anchor a;
    char msg[220];
    int rc = cube_anchor_parse(xml ? (const char *)xml : (const char *)am->data, xlen,
                               lim.max_nodes, &a, msg, sizeof msg);
    free(xml);
    if (rc < 0) {
        snprintf(err->msg, sizeof err->msg, "anchor.xml: %s", msg);
        members_free(&ms);
        return -1;
    }
    out->nlocations = (int)a.nlocations;
    rc = name_callpaths(&a, out, err);
    for (int i = 0; i < a.nmetrics && !rc; i++)
        if (a.metrics[i].toplevel) {
            rc = add_metric(&a, &a.metrics[i], &ms, lim.max_member, out, err);
            if (rc && !err->msg[0])
                set_err(err, "out of memory%s%s", "", "");
        }
    if (!rc && out->nmetrics == 0) {
        set_err(err, "no metric has data%s%s", "", "");
        rc = -1;
    }
    cube_anchor_free(&a);
    members_free(&ms);
    if (rc)
        cube_profile_free(out);
    return rc;
}

void cube_profile_free(cube_profile *p)
{
    for (int i = 0; i < p->ncallpaths; i++)
        free(p->callpaths[i]);
    for (int i = 0; i < p->nmetrics; i++)
        free(p->metrics[i]);
    for (int i = 0; i < p->nskipped; i++)
        free(p->skipped[i]);
    for (int i = 0; i < p->nseries; i++)
        free(p->series[i].values);
    free(p->callpaths);
    free(p->metrics);
    free(p->skipped);
    free(p->series);
    memset(p, 0, sizeof *p);
}

int ingest_cube_is_tar(const void *buf, size_t len)
{
    return len >= 262 && !memcmp((const char *)buf + 257, "ustar", 5);
}
