/*
 * cube_values.c — one Cube metric's index and data members into exclusive
 * values per call-tree position and location.
 *
 * The index ("CUBEX.INDEX", the int 1 that gives the byte order, version,
 * type, count, then count tree positions) says which call-tree positions have
 * values; the data holds count x locations elements of the metric's dtype,
 * raw ("CUBEX.DATA") or as zlib blocks ("ZCUBEX.DATA", a count of blocks and
 * per block its uncompressed offset, compressed offset and compressed size).
 * Tree positions of exclusive metrics count the cnodes depth-first (document
 * order); those of inclusive metrics follow pycubexr's other enumeration
 * (cube_wide_order). Inclusive values become exclusive by subtracting each
 * child's values in turn, in the metric's own type: unsigned differences that
 * would wrap give 0, min/max metrics combine with min/max (pycubexr's rules).
 * The expected size is known from the index and the anchor before the data is
 * read, and decompression never writes past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ingest/cube_internal.h"

#define MAX_U64_DOUBLE 0xFFFFFFFFFFFFFBFFull

typedef union cube_cell {
    uint64_t u;
    int64_t i;
    double f;
} cube_cell;

cube_vtype cube_dtype(const char *d)
{
    static const struct {
        const char *name;
        int size;
        cube_vkind kind;
    } types[] = {
        {"CHAR", 1, CUBE_U},          {"DOUBLE", 8, CUBE_F},
        {"FLOAT", 8, CUBE_F},         {"INT", 4, CUBE_I},
        {"INT16", 2, CUBE_I},         {"INT32", 4, CUBE_I},
        {"INT64", 8, CUBE_I},         {"INT8", 1, CUBE_I},
        {"INTEGER", 8, CUBE_I},       {"MAXDOUBLE", 8, CUBE_FMAX},
        {"MINDOUBLE", 8, CUBE_FMIN},  {"SHORT INT", 2, CUBE_I},
        {"SIGNED INT", 4, CUBE_I},    {"SIGNED INTEGER", 8, CUBE_I},
        {"SIGNED SHORT INT", 2, CUBE_I}, {"UINT16", 2, CUBE_U},
        {"UINT32", 4, CUBE_U},        {"UINT64", 8, CUBE_U},
        {"UINT8", 1, CUBE_U},         {"UNSIGNED INT", 4, CUBE_U},
        {"UNSIGNED INTEGER", 8, CUBE_U}, {"UNSIGNED SHORT INT", 2, CUBE_U},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(d, types[i].name))
            return (cube_vtype){types[i].size, types[i].kind,
                                !strcmp(d, "UINT64") || !strcmp(d, "UNSIGNED INTEGER")};
    return (cube_vtype){0, CUBE_F, 0};
}

static uint64_t load(const unsigned char *p, int size, int big)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
    return v;
}

static cube_cell decode(const unsigned char *p, cube_vtype t, int big)
{
    uint64_t raw = load(p, t.size, big);
    cube_cell c;
    switch (t.kind) {
    case CUBE_U:
        c.u = t.clamp_u64 && raw > MAX_U64_DOUBLE ? 0 : raw;
        break;
    case CUBE_I: {
        int shift = 64 - 8 * t.size;
        c.i = shift ? (int64_t)(raw << shift) >> shift : (int64_t)raw;
        break;
    }
    default:
        memcpy(&c.f, &raw, sizeof c.f);
        break;
    }
    return c;
}

/* Decodes n elements, a loop per element width (the hot path of a read). */
static void decode_all(const unsigned char *b, size_t n, cube_vtype t, int big, cube_cell *out)
{
    if (t.size == 8) {
        for (size_t i = 0; i < n; i++) {
            uint64_t raw;
            memcpy(&raw, b + 8 * i, 8);
            if (big)
                raw = __builtin_bswap64(raw);
            if (t.kind == CUBE_U && t.clamp_u64 && raw > MAX_U64_DOUBLE)
                raw = 0;
            out[i].u = raw;
        }
        return;
    }
    if (t.size == 4 && !big) {
        for (size_t i = 0; i < n; i++) {
            uint32_t raw;
            memcpy(&raw, b + 4 * i, 4);
            if (t.kind == CUBE_I)
                out[i].i = (int32_t)raw;
            else
                out[i].u = raw;
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = decode(b + i * (size_t)t.size, t, big);
}

/* Parses the index: tree positions into cnode indices (*pos, n). */
static long read_index(const cube_anchor *a, const cube_metric_decl *m, const unsigned char *ix,
                       size_t ilen, int *big, int **pos, char *msg, size_t msgcap)
{
    static const char magic[] = "CUBEX.INDEX";
    if (ilen < 22 || memcmp(ix, magic, 11)) {
        snprintf(msg, msgcap, "index: not a Cube index (%zu bytes, no CUBEX.INDEX header)", ilen);
        return -1;
    }
    *big = load(ix + 11, 4, 0) != 1;
    if (*big && load(ix + 11, 4, 1) != 1) {
        snprintf(msg, msgcap, "index: byte 11: the byte-order marker is not 1");
        return -1;
    }
    uint64_t n = load(ix + 18, 4, *big);
    if (n > (uint64_t)a->ncnodes || ilen != 22 + 4 * n) {
        snprintf(msg, msgcap,
                 "index: byte 18: %llu positions in %zu bytes, for a call tree of %d cnodes",
                 (unsigned long long)n, ilen, a->ncnodes);
        return -1;
    }
    int *order = NULL;
    if (m->inclusive) {
        order = malloc(sizeof(int) * (size_t)a->ncnodes);
        if (!order || cube_wide_order(a, order) < 0) {
            free(order);
            snprintf(msg, msgcap, "out of memory");
            return -1;
        }
    }
    int *p = malloc(sizeof(int) * (n ? n : 1));
    char *seen = calloc((size_t)a->ncnodes, 1);
    if (!p || !seen) {
        free(order), free(p), free(seen);
        snprintf(msg, msgcap, "out of memory");
        return -1;
    }
    for (uint64_t k = 0; k < n; k++) {
        uint64_t t = load(ix + 22 + 4 * k, 4, *big);
        if (t >= (uint64_t)a->ncnodes || seen[order ? (uint64_t)order[t] : t]) {
            snprintf(msg, msgcap, "index: byte %llu: tree position %llu is %s",
                     (unsigned long long)(22 + 4 * k), (unsigned long long)t,
                     t >= (uint64_t)a->ncnodes ? "outside the call tree" : "listed twice");
            free(order), free(p), free(seen);
            return -1;
        }
        p[k] = order ? order[t] : (int)t;
        seen[p[k]] = 1;
    }
    free(order);
    free(seen);
    *pos = p;
    return (long)n;
}

/* The data's element bytes into out[0..need), raw or inflated. */
static int read_data(const unsigned char *d, size_t dlen, int big, unsigned char *out, size_t need,
                     char *msg, size_t msgcap)
{
    if (dlen >= 10 && !memcmp(d, "CUBEX.DATA", 10)) {
        if (dlen - 10 != need) {
            snprintf(msg, msgcap, "data: %zu bytes of values where the index and the locations "
                     "need %zu", dlen - 10, need);
            return -1;
        }
        memcpy(out, d + 10, need);
        return 0;
    }
    if (dlen < 19 || memcmp(d, "ZCUBEX.DATA", 11)) {
        snprintf(msg, msgcap, "data: no CUBEX.DATA or ZCUBEX.DATA header");
        return -1;
    }
    uint64_t nblocks = load(d + 11, 8, big);
    size_t at = 19;
    if (nblocks > (dlen - at) / 24) {
        snprintf(msg, msgcap, "data: byte 11: %llu compressed blocks cannot fit in %zu bytes",
                 (unsigned long long)nblocks, dlen);
        return -1;
    }
    size_t hdr = at;
    at += 24 * nblocks;
    size_t got = 0;
    for (uint64_t b = 0; b < nblocks; b++) {
        uint64_t csize = load(d + hdr + 24 * b + 16, 8, big);
        if (csize == 0)
            continue;
        if (csize > dlen - at) {
            snprintf(msg, msgcap, "data: byte %zu: block %llu of %llu bytes runs past the end",
                     hdr + 24 * b + 16, (unsigned long long)b, (unsigned long long)csize);
            return -1;
        }
        z_stream z = {0};
        if (inflateInit(&z) != Z_OK) {
            snprintf(msg, msgcap, "data: zlib cannot start");
            return -1;
        }
        z.next_in = (unsigned char *)d + at;
        z.avail_in = (uInt)(csize > 0xFFFFFFFFu ? 0xFFFFFFFFu : csize);
        z.next_out = out + got;
        z.avail_out = (uInt)(need - got > 0xFFFFFFFFu ? 0xFFFFFFFFu : need - got);
        int zr = inflate(&z, Z_FINISH);
        size_t produced = (size_t)z.total_out;
        inflateEnd(&z);
        if (zr != Z_STREAM_END) {
            snprintf(msg, msgcap, "data: byte %zu: block %llu is %s", at, (unsigned long long)b,
                     zr == Z_BUF_ERROR && got + produced == need
                         ? "larger than the index and the locations allow"
                         : "corrupt or truncated zlib data");
            return -1;
        }
        got += produced;
        at += csize;
    }
    if (got != need) {
        snprintf(msg, msgcap, "data: %zu bytes of values where the index and the locations "
                 "need %zu", got, need);
        return -1;
    }
    return 0;
}

/* Subtracts the children's values from each listed inclusive position. */
static int make_exclusive(const cube_anchor *a, cube_vtype t, const int *pos, long n,
                          long nloc, const cube_cell *in, cube_cell *out)
{
    int *slot = malloc(sizeof(int) * (size_t)a->ncnodes);
    if (!slot)
        return -1;
    for (int i = 0; i < a->ncnodes; i++)
        slot[i] = -1;
    for (long k = 0; k < n; k++)
        slot[pos[k]] = (int)k;
    for (long k = 0; k < n; k++) {
        cube_cell *v = out + k * nloc;
        memcpy(v, in + k * nloc, sizeof *v * (size_t)nloc);
        for (int c = a->cnodes[pos[k]].first_child; c >= 0; c = a->cnodes[c].next_sibling) {
            if (slot[c] < 0)
                continue; /* zeros: nothing changes, for min/max neither */
            const cube_cell *ch = in + (long)slot[c] * nloc;
            int allzero = 1;
            for (long l = 0; l < nloc && allzero; l++)
                allzero = ch[l].u == 0;
            for (long l = 0; l < nloc; l++) {
                switch (t.kind) {
                case CUBE_U:
                    v[l].u -= ch[l].u > v[l].u ? v[l].u : ch[l].u;
                    break;
                case CUBE_I: {
                    int64_t r;
                    if (__builtin_sub_overflow(v[l].i, ch[l].i, &r))
                        r = ch[l].i < 0 ? INT64_MAX : INT64_MIN;
                    v[l].i = r;
                    break;
                }
                case CUBE_FMIN:
                    if (!allzero && ch[l].f < v[l].f)
                        v[l].f = ch[l].f;
                    break;
                case CUBE_FMAX:
                    if (!allzero && ch[l].f > v[l].f)
                        v[l].f = ch[l].f;
                    break;
                default:
                    v[l].f -= ch[l].f;
                    break;
                }
            }
        }
    }
    free(slot);
    return 0;
}

long cube_metric_decode(const cube_anchor *a, const cube_metric_decl *m, cube_vtype t,
                        const unsigned char *index, size_t ilen, const unsigned char *data,
                        size_t dlen, size_t max_bytes, int **pos, double **vals, char *msg,
                        size_t msgcap)
{
    int big;
    *pos = NULL;
    *vals = NULL;
    long n = read_index(a, m, index, ilen, &big, pos, msg, msgcap);
    if (n < 0)
        return -1;
    long nloc = a->nlocations;
    /* n <= cnodes and nloc are bounded by the anchor's node limit; their
     * product is checked against the member limit before allocating */
    unsigned __int128 need128 = (unsigned __int128)n * (unsigned long)nloc * (unsigned)t.size;
    unsigned __int128 cells128 = (unsigned __int128)n * (unsigned long)nloc * sizeof(cube_cell);
    if (need128 > max_bytes || cells128 > (unsigned __int128)max_bytes * 2) {
        snprintf(msg, msgcap, "data: %ld positions x %ld locations exceed the limit of %zu bytes",
                 n, nloc, max_bytes);
        free(*pos);
        *pos = NULL;
        return -1;
    }
    size_t need = (size_t)need128, ncell = (size_t)n * (size_t)nloc;
    unsigned char *bytes = malloc(need ? need : 1);
    cube_cell *cells = malloc(sizeof *cells * (ncell ? ncell : 1));
    cube_cell *excl = m->inclusive ? malloc(sizeof *excl * (ncell ? ncell : 1)) : NULL;
    double *out = malloc(sizeof *out * (ncell ? ncell : 1));
    int rc = bytes && cells && out && (excl || !m->inclusive) ? 0 : -1;
    if (rc)
        snprintf(msg, msgcap, "out of memory");
    if (!rc)
        rc = read_data(data, dlen, big, bytes, need, msg, msgcap);
    if (!rc) {
        decode_all(bytes, ncell, t, big, cells);
        if (m->inclusive && make_exclusive(a, t, *pos, n, nloc, cells, excl) < 0) {
            rc = -1;
            snprintf(msg, msgcap, "out of memory");
        }
    }
    if (!rc) {
        const cube_cell *src = m->inclusive ? excl : cells;
        for (size_t i = 0; i < ncell; i++)
            out[i] = t.kind == CUBE_U ? (double)src[i].u
                     : t.kind == CUBE_I ? (double)src[i].i
                                        : src[i].f;
    }
    free(bytes);
    free(cells);
    free(excl);
    if (rc) {
        free(out);
        free(*pos);
        *pos = NULL;
        return -1;
    }
    *vals = out;
    return n;
}
