/*
 * nsys.c — reader of Nsight Systems SQLite exports (`nsys export --type
 * sqlite`), one rank per report (trace.h says what it produces).
 *
 * Tables and columns read, as NVIDIA's "SQLite Export Schema Reference"
 * documents them for nsys 2021.x to 2024.x (times in ns):
 *
 *   StringIds (id, value)                  names of kernels and API calls
 *   CUPTI_ACTIVITY_KIND_KERNEL (start, end, correlationId,
 *       demangledName | shortName | name -> StringIds, [globalPid])
 *   CUPTI_ACTIVITY_KIND_MEMCPY (start, end, correlationId, bytes, [copyKind])
 *   CUPTI_ACTIVITY_KIND_MEMSET (start, end, correlationId, bytes)
 *   CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId, nameId -> StringIds)
 *   NVTX_EVENTS (start, end, text and/or textId -> StringIds, [eventType])
 *   MPI_P2P_EVENTS, MPI_COLLECTIVES_EVENTS, MPI_START_WAIT_EVENTS,
 *   MPI_OTHER_EVENTS (start, end, textId -> StringIds)
 *   OSRT_API, CUBLAS_EVENTS, CUDNN_EVENTS (start, end, nameId -> StringIds)
 *                                          OS runtime, cuBLAS and cuDNN calls
 *   META_DATA_EXPORT (name, value)         EXPORT_SCHEMA_VERSION[_MAJOR...]
 *
 * nsys creates tables lazily, so each is optional; a file that is not a
 * SQLite database, one with none of the activity tables, a table without
 * the columns above, or an export schema version above 3 is refused with a
 * message naming it. The names come from the documentation: no real export
 * was at hand to check them against.
 *
 * Mapping: kernels -> comp, or comm for NCCL/collective names; memcpy
 * ("Memcpy HtoD", ... by CUPTI's copy kind) and memset ("Memset") -> mem
 * with bytes; CUDA runtime calls (the version suffix "_v7000" dropped, as
 * Kineto names them) and NVTX push/pop and start/end ranges -> host; MPI
 * calls -> comm; OS runtime calls (pthread_mutex_lock, ioctl, ...), cuBLAS and
 * cuDNN API calls -> host (the version suffix of cuBLAS/cuDNN names dropped:
 * cublasSgemm_v2 -> cublasSgemm). Steps are NVTX ranges whose text contains one of the
 * marker substrings (default "step", "epoch"; case ignored); a marker range
 * that contains other marker ranges (an epoch around its steps) is not a
 * step itself, and marker ranges are not callpaths. Device work is placed
 * by the start of the runtime call with its correlationId (the earliest,
 * should ids repeat), other work by its own start. All steps are known
 * before any event is read, so one pass suffices.
 *
 * The database comes from the network: it is opened read-only (a file as
 * immutable, bytes through sqlite3_deserialize without a copy), in
 * defensive mode with its schema untrusted, and only plain tables are read,
 * never views or virtual tables, so a crafted file cannot run SQL of its
 * own. Corruption surfaces as SQLite's message with the table being read.
 */
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/stepsum.h"
#include "ingest/trace.h"

#define NS_MAX_MARKERS 16
#define NS_NVTX_RANGES "59, 60" /* NvtxPushPopRange, NvtxStartEndRange */

typedef struct ns_marker {
    double start, end;
    char label[64];
    size_t len;
} ns_marker;

typedef struct ns_markers {
    ns_marker *v;
    size_t n, cap, max;
} ns_markers;

typedef struct ns_reader {
    sqlite3 *db;
    const ingest_trace_options *opt;
    ingest_error *err;
    long long events; /* rows read from event tables, for max_events */
    ingest_sum *sum;
    char markers[NS_MAX_MARKERS][64];
    size_t marker_len[NS_MAX_MARKERS];
    int nmarkers;
    long long unmatched;
    ns_markers *found;  /* marker ranges being collected */
    /* the table being read and its row, for messages */
    const char *table;
    long long row;
} ns_reader;


static int ns_fail(ns_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ns_fail(ns_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
    va_end(ap);
    r->err->line = 0;
    r->err->offset = -1;
    return -1;
}

static int ns_sqlite_fail(ns_reader *r, const char *what)
{
    return ns_fail(r, "%s: %s", what, sqlite3_errmsg(r->db));
}

/* Prefixes a message a helper left in err with the table and row. */
static int ns_wrap(ns_reader *r)
{
    char msg[sizeof r->err->msg];
    memcpy(msg, r->err->msg, sizeof msg);
    return ns_fail(r, "%s row %lld: %s", r->table, r->row, msg);
}

/* ---- schema ------------------------------------------------------------------------ */

static int is_virtual_sql(const char *sql)
{
    while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r')
        sql++;
    if (strncasecmp(sql, "CREATE", 6))
        return 0;
    sql += 6;
    while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r')
        sql++;
    return !strncasecmp(sql, "VIRTUAL", 7);
}

/* 1 when name is a plain table, 0 when there is no such object, -1 (err)
 * when it is something else or the schema cannot be read. */
static int has_table(ns_reader *r, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT type, sql FROM sqlite_master WHERE name = ?1", -1, &st,
                           NULL) != SQLITE_OK)
        return ns_sqlite_fail(r, "reading the schema");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *sql = (const char *)sqlite3_column_text(st, 1);
        if (!type || strcmp(type, "table") || (sql && is_virtual_sql(sql))) {
            ns_fail(r, "%s is a %s, not a plain table: not an Nsight Systems export", name,
                    type && strcmp(type, "table") ? type : "virtual table");
            sqlite3_finalize(st);
            return -1;
        }
        found = 1;
    } else if (rc != SQLITE_DONE) {
        ns_sqlite_fail(r, "reading the schema");
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return found;
}

/* Sets bit i of *have for each want[i] that table has as a column. */
static int table_columns(ns_reader *r, const char *table, const char *const *want, int nwant,
                         unsigned *have)
{
    sqlite3_stmt *st;
    *have = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) !=
        SQLITE_OK)
        return ns_sqlite_fail(r, "reading the schema");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        for (int i = 0; c && i < nwant; i++)
            if (!strcmp(c, want[i]))
                *have |= 1u << i;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return ns_sqlite_fail(r, "reading the schema");
    return 0;
}

/* Refuses a table that lacks column want[i] for a bit i of need. */
static int need_columns(ns_reader *r, const char *table, const char *const *want, unsigned have,
                        unsigned need)
{
    for (int i = 0; i < 32; i++)
        if ((need >> i & 1) && !(have >> i & 1))
            return ns_fail(r, "%s has no column \"%s\": not the documented export schema",
                           table, want[i]);
    return 0;
}

/* The export schema version from META_DATA_EXPORT, when there is one.
 * Refuses majors above 3 (newer than the documented schema). */
static int check_version(ns_reader *r, ingest_trace_info *info)
{
    int t = has_table(r, "META_DATA_EXPORT");
    if (t <= 0)
        return t;
    static const char *const want[] = {"name", "value"};
    unsigned have;
    if (table_columns(r, "META_DATA_EXPORT", want, 2, &have) < 0)
        return -1;
    if (have != 3)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT name, value FROM META_DATA_EXPORT WHERE name IN "
                           "('EXPORT_SCHEMA_VERSION', 'EXPORT_SCHEMA_VERSION_MAJOR', "
                           "'EXPORT_SCHEMA_VERSION_MINOR', 'EXPORT_SCHEMA_VERSION_MICRO', "
                           "'EXPORT_SCHEMA_VERSION_PATCH')",
                           -1, &st, NULL) != SQLITE_OK)
        return ns_sqlite_fail(r, "reading META_DATA_EXPORT");
    char whole[64] = "", part[3][16] = {"", "", ""};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (!n || !v)
            continue;
        if (!strcmp(n, "EXPORT_SCHEMA_VERSION"))
            snprintf(whole, sizeof whole, "%.40s", v);
        else if (!strcmp(n, "EXPORT_SCHEMA_VERSION_MAJOR"))
            snprintf(part[0], sizeof part[0], "%.15s", v);
        else if (!strcmp(n, "EXPORT_SCHEMA_VERSION_MINOR"))
            snprintf(part[1], sizeof part[1], "%.15s", v);
        else
            snprintf(part[2], sizeof part[2], "%.15s", v);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return ns_sqlite_fail(r, "reading META_DATA_EXPORT");
    if (!whole[0] && part[0][0])
        snprintf(whole, sizeof whole, "%s%s%s%s%s", part[0], part[1][0] ? "." : "", part[1],
                 part[2][0] ? "." : "", part[2]);
    if (!whole[0])
        return 0;
    for (char *c = whole; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7F)
            *c = '?';
    snprintf(info->schema, sizeof info->schema, "%s", whole);
    char *end;
    long major = strtol(whole, &end, 10);
    if (end == whole || major < 1 || major > 3)
        return ns_fail(r, "export schema version \"%s\" is not supported: perfcast reads major "
                          "versions 1 to 3",
                       whole);
    return 0;
}

/* ---- rows --------------------------------------------------------------------------- */

typedef int (*ns_row_fn)(ns_reader *r, sqlite3_stmt *st);

static int ns_query(ns_reader *r, const char *table, const char *sql, ns_row_fn fn)
{
    sqlite3_stmt *st;
    r->table = table;
    r->row = 0;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
        char what[96];
        snprintf(what, sizeof what, "reading %s", table);
        return ns_sqlite_fail(r, what);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->row++;
        if (r->opt->max_events > 0 && ++r->events > r->opt->max_events) {
            sqlite3_finalize(st);
            ns_fail(r, "%s: more than %lld events (the limit)", table, r->opt->max_events);
            r->err->limit = 1;
            return -1;
        }
        if (fn(r, st) < 0) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        char what[96];
        snprintf(what, sizeof what, "reading %s", table);
        return ns_sqlite_fail(r, what);
    }
    return 0;
}

/* Column i as a number of ns; -1 (err) when it is not a number. */
static int col_time(ns_reader *r, sqlite3_stmt *st, int i, const char *name, double *out)
{
    int t = sqlite3_column_type(st, i);
    if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
        return ns_fail(r, "%s row %lld: %s is not a number", r->table, r->row, name);
    *out = sqlite3_column_double(st, i);
    if (!isfinite(*out))
        return ns_fail(r, "%s row %lld: %s is not finite", r->table, r->row, name);
    return 0;
}

/* start and end of a range; -1 (err) unless end >= start. */
static int col_range(ns_reader *r, sqlite3_stmt *st, double *start, double *end)
{
    if (col_time(r, st, 0, "start", start) < 0 || col_time(r, st, 1, "end", end) < 0)
        return -1;
    if (*end < *start)
        return ns_fail(r, "%s row %lld: ends (%.17g) before it starts (%.17g)", r->table, r->row,
                       *end, *start);
    return 0;
}

static int add_named(ns_reader *r, const char *name, size_t len, int category, double t,
                     double dur, double bytes)
{
    int cp = ingest_sum_callpath(r->sum, name, len, category, r->err);
    if (cp < 0 || ingest_sum_add(r->sum, t, cp, dur, bytes, r->err) < 0)
        return ns_wrap(r);
    return 0;
}

/* The launch time in column i, else the own start (counted). */
static double launch_or_own(ns_reader *r, sqlite3_stmt *st, int i, double start)
{
    int t = sqlite3_column_type(st, i);
    if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
        double v = sqlite3_column_double(st, i);
        if (isfinite(v))
            return v;
    }
    r->unmatched++;
    return start;
}

/* columns: start, end, name, launch */
static int kernel_row(ns_reader *r, sqlite3_stmt *st)
{
    double start, end;
    if (col_range(r, st, &start, &end) < 0)
        return -1;
    const char *name = (const char *)sqlite3_column_text(st, 2);
    if (!name)
        return ns_fail(r, "%s row %lld: the kernel's name is not in StringIds", r->table, r->row);
    size_t len = (size_t)sqlite3_column_bytes(st, 2);
    return add_named(r, name, len, ingest_kernel_category(name, len),
                     launch_or_own(r, st, 3, start), end - start, -1);
}

/* CUPTI_ActivityMemcpyKind */
static const char *memcpy_name(long long kind)
{
    static const char *const names[] = {"Memcpy", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                        "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD",
                                        "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH",
                                        "Memcpy PtoP"};
    if (kind < 0 || kind >= (long long)(sizeof names / sizeof *names))
        return names[0];
    return names[kind];
}

/* columns: start, end, bytes, launch, copyKind | 0 */
static int copy_row(ns_reader *r, sqlite3_stmt *st, const char *name)
{
    double start, end, bytes;
    if (col_range(r, st, &start, &end) < 0 || col_time(r, st, 2, "bytes", &bytes) < 0)
        return -1;
    if (bytes < 0)
        return ns_fail(r, "%s row %lld: bytes is negative", r->table, r->row);
    return add_named(r, name, strlen(name), PROFILE_MEM, launch_or_own(r, st, 3, start),
                     end - start, bytes);
}

static int memcpy_row(ns_reader *r, sqlite3_stmt *st)
{
    return copy_row(r, st, memcpy_name(sqlite3_column_int64(st, 4)));
}

static int memset_row(ns_reader *r, sqlite3_stmt *st)
{
    return copy_row(r, st, "Memset");
}

/* columns: start, end, name; category in the reader's table name */
static int named_row(ns_reader *r, sqlite3_stmt *st, int category, int strip_version)
{
    double start, end;
    if (col_range(r, st, &start, &end) < 0)
        return -1;
    const char *name = (const char *)sqlite3_column_text(st, 2);
    if (!name)
        return ns_fail(r, "%s row %lld: the name is not in StringIds", r->table, r->row);
    size_t len = (size_t)sqlite3_column_bytes(st, 2);
    if (strip_version) {
        /* cudaLaunchKernel_v7000 -> cudaLaunchKernel */
        size_t k = len;
        while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
            k--;
        if (k < len && k >= 3 && name[k - 1] == 'v' && name[k - 2] == '_')
            len = k - 2;
    }
    return add_named(r, name, len, category, start, end - start, -1);
}

static int runtime_row(ns_reader *r, sqlite3_stmt *st)
{
    return named_row(r, st, PROFILE_HOST, 1);
}

static int mpi_row(ns_reader *r, sqlite3_stmt *st)
{
    return named_row(r, st, PROFILE_COMM, 0);
}

static int osrt_row(ns_reader *r, sqlite3_stmt *st)
{
    return named_row(r, st, PROFILE_HOST, 0);
}

static int library_row(ns_reader *r, sqlite3_stmt *st)
{
    return named_row(r, st, PROFILE_HOST, 1);
}

static int is_marker(const ns_reader *r, const char *name, size_t len)
{
    for (int i = 0; i < r->nmarkers; i++)
        if (ingest_contains_nocase(name, len, r->markers[i], r->marker_len[i]))
            return 1;
    return 0;
}

/* columns: start, end, text. Ranges without text or end are not callpaths. */
static int nvtx_row(ns_reader *r, sqlite3_stmt *st)
{
    const char *name = (const char *)sqlite3_column_text(st, 2);
    size_t len = name ? (size_t)sqlite3_column_bytes(st, 2) : 0;
    if (!name || len == 0 || is_marker(r, name, len) || sqlite3_column_type(st, 1) == SQLITE_NULL)
        return 0;
    /* a range named like validation marks the steps it contains */
    double start, end;
    if (col_range(r, st, &start, &end) < 0)
        return -1;
    if (ingest_sum_range(r->sum, start, end, name, len, r->err) < 0)
        return ns_wrap(r);
    return named_row(r, st, PROFILE_HOST, 0);
}

/* ---- steps -------------------------------------------------------------------------- */

static int cmp_marker(const void *a, const void *b)
{
    const ns_marker *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* longer first */
}

static void parse_markers(ns_reader *r)
{
    const char *s = r->opt->markers && r->opt->markers[0] ? r->opt->markers : "step,epoch";
    while (*s && r->nmarkers < NS_MAX_MARKERS) {
        while (*s == ',' || *s == ' ')
            s++;
        size_t n = strcspn(s, ",");
        size_t k = n;
        while (k > 0 && s[k - 1] == ' ')
            k--;
        if (k > 0) {
            if (k > 63)
                k = 63;
            memcpy(r->markers[r->nmarkers], s, k);
            r->markers[r->nmarkers][k] = '\0';
            r->marker_len[r->nmarkers++] = k;
        }
        s += n;
    }
}

/* columns: start, end, text. Collects the marker ranges. */
static int marker_row(ns_reader *r, sqlite3_stmt *st)
{
    const char *name = (const char *)sqlite3_column_text(st, 2);
    size_t len = name ? (size_t)sqlite3_column_bytes(st, 2) : 0;
    if (!name || len == 0 || !is_marker(r, name, len))
        return 0;
    ns_markers *m = r->found;
    double start, end;
    if (col_time(r, st, 0, "start", &start) < 0)
        return -1;
    if (sqlite3_column_type(st, 1) == SQLITE_NULL)
        return ns_fail(r, "NVTX range \"%.60s\" (start %.17g) never ends", name, start);
    if (col_time(r, st, 1, "end", &end) < 0)
        return -1;
    if (!(end > start))
        return ns_fail(r, "NVTX range \"%.60s\" (start %.17g) never ends or has no duration",
                       name, start);
    if (m->n == m->max)
        return ns_fail(r, "more than %zu step or epoch marker ranges (the limit)", m->max);
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        ns_marker *v = realloc(m->v, cap * sizeof *v);
        if (!v)
            return ns_fail(r, "out of memory");
        m->v = v;
        m->cap = cap;
    }
    /* an epoch marker named like validation marks the steps it contains */
    if (ingest_sum_range(r->sum, start, end, name, len, r->err) < 0)
        return ns_wrap(r);
    ns_marker *k = &m->v[m->n++];
    k->start = start;
    k->end = end;
    k->len = len < sizeof k->label ? len : sizeof k->label - 1;
    memcpy(k->label, name, k->len);
    k->label[k->len] = '\0';
    return 0;
}

/* The NVTX query: start, end, text, for the range event types. */
static void nvtx_sql(char *sql, size_t cap, unsigned have)
{
    /* have: 1 text, 2 textId, 4 eventType */
    const char *text = (have & 3) == 3 ? "COALESCE(n.text, s.value)" : have & 1 ? "n.text"
                                                                              : "s.value";
    snprintf(sql, cap,
             "SELECT n.start, n.\"end\", %s FROM NVTX_EVENTS AS n %s %s", text,
             have & 2 ? "LEFT JOIN StringIds AS s ON s.id = n.textId" : "",
             have & 4 ? "WHERE n.eventType IN (" NS_NVTX_RANGES ")" : "");
}

/* Steps from the marker ranges: innermost ones only. */
static int read_steps(ns_reader *r, int has_nvtx, unsigned nvtx_have)
{
    ns_markers m = {.max = 2 * (size_t)(r->opt->max_steps > 0 ? r->opt->max_steps : 100000)};
    int rc = 0;
    if (has_nvtx) {
        char sql[320];
        nvtx_sql(sql, sizeof sql, nvtx_have);
        r->found = &m;
        rc = ns_query(r, "NVTX_EVENTS", sql, marker_row);
        r->found = NULL;
    }
    if (rc == 0 && m.n > 0) {
        qsort(m.v, m.n, sizeof *m.v, cmp_marker);
        for (size_t i = 0; i < m.n && rc == 0; i++) {
            /* sorted by start, longer first: what a range contains follows it */
            if (i + 1 < m.n && m.v[i + 1].start < m.v[i].end) {
                if (m.v[i + 1].end <= m.v[i].end)
                    continue; /* an epoch around steps */
                rc = ns_fail(r, "NVTX marker ranges \"%s\" and \"%s\" overlap without nesting",
                             m.v[i].label, m.v[i + 1].label);
                break;
            }
            if (ingest_sum_step(r->sum, m.v[i].start, m.v[i].end, m.v[i].label, m.v[i].len,
                                r->err) < 0)
                rc = -1;
        }
    }
    free(m.v);
    if (rc == 0)
        rc = ingest_sum_steps_done(r->sum, r->err);
    return rc;
}

/* ---- tables ------------------------------------------------------------------------- */

/* The subquery of launch times by correlation id, or NULL columns. */
static const char *launch_join(int has_runtime, int has_corr)
{
    if (!has_runtime || !has_corr)
        return "";
    return "LEFT JOIN (SELECT correlationId AS c, MIN(start) AS t FROM "
           "CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY correlationId) AS l ON l.c = x.correlationId";
}

static int read_kernels(ns_reader *r, int has_runtime)
{
    static const char *const want[] = {"start", "end", "correlationId", "demangledName",
                                       "shortName", "name", "globalPid"};
    unsigned have;
    const char *t = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (table_columns(r, t, want, 7, &have) < 0 || need_columns(r, t, want, have, 3) < 0)
        return -1;
    const char *namecol = have & 8 ? "demangledName" : have & 16 ? "shortName" : have & 32
                                                                                 ? "name"
                                                                                 : NULL;
    if (!namecol)
        return ns_fail(r, "%s has no demangledName, shortName or name column", t);
    if (have & 64) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(r->db,
                               "SELECT COUNT(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                               -1, &st, NULL) != SQLITE_OK)
            return ns_sqlite_fail(r, "reading CUPTI_ACTIVITY_KIND_KERNEL");
        int rc = sqlite3_step(st);
        long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
            return ns_sqlite_fail(r, "reading CUPTI_ACTIVITY_KIND_KERNEL");
        if (n > 1)
            return ns_fail(r, "the report holds kernels of %lld processes; perfcast reads one "
                              "rank per upload: profile each rank into its own report",
                           n);
    }
    char sql[512];
    int join = has_runtime && (have & 4);
    snprintf(sql, sizeof sql,
             "SELECT x.start, x.\"end\", s.value, %s FROM %s AS x "
             "LEFT JOIN StringIds AS s ON s.id = x.%s %s",
             join ? "l.t" : "NULL", t, namecol, launch_join(has_runtime, have & 4));
    return ns_query(r, t, sql, kernel_row);
}

static int read_copies(ns_reader *r, const char *t, int has_runtime, int is_memcpy)
{
    static const char *const want[] = {"start", "end", "bytes", "correlationId", "copyKind"};
    unsigned have;
    if (table_columns(r, t, want, 5, &have) < 0 || need_columns(r, t, want, have, 7) < 0)
        return -1;
    char sql[512];
    int join = has_runtime && (have & 8);
    snprintf(sql, sizeof sql, "SELECT x.start, x.\"end\", x.bytes, %s, %s FROM %s AS x %s",
             join ? "l.t" : "NULL", is_memcpy && (have & 16) ? "x.copyKind" : "0", t,
             launch_join(has_runtime, have & 8));
    return ns_query(r, t, sql, is_memcpy ? memcpy_row : memset_row);
}

static int read_named(ns_reader *r, const char *t, const char *idcol, ns_row_fn fn)
{
    const char *want[] = {"start", "end", idcol};
    unsigned have;
    if (table_columns(r, t, want, 3, &have) < 0 || need_columns(r, t, want, have, 7) < 0)
        return -1;
    char sql[320];
    snprintf(sql, sizeof sql,
             "SELECT x.start, x.\"end\", s.value FROM %s AS x LEFT JOIN StringIds AS s "
             "ON s.id = x.%s",
             t, idcol);
    return ns_query(r, t, sql, fn);
}

static int read_all(ns_reader *r, ingest_trace_info *info)
{
    static const char *const device[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                         "NVTX_EVENTS"};
    static const char *const mpi[] = {"MPI_P2P_EVENTS", "MPI_COLLECTIVES_EVENTS",
                                      "MPI_START_WAIT_EVENTS", "MPI_OTHER_EVENTS"};
    /* host libraries: OS runtime, cuBLAS, cuDNN (paper 000 Table 2) */
    static const char *const libs[] = {"OSRT_API", "CUBLAS_EVENTS", "CUDNN_EVENTS"};
    int present[5], mpi_present[4], lib_present[3], any = 0;
    int strings = has_table(r, "StringIds");
    if (strings < 0)
        return -1;
    for (int i = 0; i < 5; i++) {
        if ((present[i] = has_table(r, device[i])) < 0)
            return -1;
        any |= present[i];
    }
    for (int i = 0; i < 4; i++) {
        if ((mpi_present[i] = has_table(r, mpi[i])) < 0)
            return -1;
        any |= mpi_present[i];
    }
    for (int i = 0; i < 3; i++) {
        if ((lib_present[i] = has_table(r, libs[i])) < 0)
            return -1;
        any |= lib_present[i];
    }
    if (!any)
        return ns_fail(r, "none of the Nsight Systems tables (CUPTI_ACTIVITY_KIND_KERNEL, "
                          "..._MEMCPY, ..._MEMSET, ..._RUNTIME, NVTX_EVENTS, MPI_*_EVENTS, "
                          "OSRT_API, CUBLAS_EVENTS, CUDNN_EVENTS): "
                          "not an nsys SQLite export, or an empty report");
    if (!strings)
        return ns_fail(r, "no StringIds table: not the documented nsys export schema");
    {
        static const char *const want[] = {"id", "value"};
        unsigned have;
        if (table_columns(r, "StringIds", want, 2, &have) < 0 ||
            need_columns(r, "StringIds", want, have, 3) < 0)
            return -1;
    }
    if (check_version(r, info) < 0)
        return -1;
    int has_runtime = 0;
    if (present[3]) {
        static const char *const want[] = {"start", "end", "correlationId", "nameId"};
        unsigned have;
        if (table_columns(r, device[3], want, 4, &have) < 0 ||
            need_columns(r, device[3], want, have, 11) < 0)
            return -1;
        has_runtime = (have & 4) != 0;
    }
    unsigned nvtx_have = 0;
    if (present[4]) {
        static const char *const want[] = {"text", "textId", "eventType", "start", "end"};
        if (table_columns(r, "NVTX_EVENTS", want, 5, &nvtx_have) < 0 ||
            need_columns(r, "NVTX_EVENTS", want, nvtx_have, 24) < 0)
            return -1;
        if (!(nvtx_have & 3))
            return ns_fail(r, "NVTX_EVENTS has neither a text nor a textId column");
    }
    if (read_steps(r, present[4], nvtx_have) < 0)
        return -1;
    if (present[0] && read_kernels(r, has_runtime) < 0)
        return -1;
    if (present[1] && read_copies(r, device[1], has_runtime, 1) < 0)
        return -1;
    if (present[2] && read_copies(r, device[2], has_runtime, 0) < 0)
        return -1;
    if (present[3] && read_named(r, device[3], "nameId", runtime_row) < 0)
        return -1;
    if (present[4]) {
        char sql[320];
        nvtx_sql(sql, sizeof sql, nvtx_have);
        if (ns_query(r, "NVTX_EVENTS", sql, nvtx_row) < 0)
            return -1;
    }
    for (int i = 0; i < 4; i++)
        if (mpi_present[i] && read_named(r, mpi[i], "textId", mpi_row) < 0)
            return -1;
    for (int i = 0; i < 3; i++)
        if (lib_present[i] && read_named(r, libs[i], "nameId", i == 0 ? osrt_row : library_row) < 0)
            return -1;
    return 0;
}

/* ---- entry points ------------------------------------------------------------------- */

static int harden(ns_reader *r)
{
    sqlite3 *db = r->db;
    int ok = 1;
    ok &= sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL) == SQLITE_OK;
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    ok &= sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL) == SQLITE_OK;
#endif
    ok &= sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL) == SQLITE_OK;
    ok &= sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL) == SQLITE_OK;
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 24);
    if (!ok)
        return ns_fail(r, "cannot configure SQLite");
    if (sqlite3_exec(db, "PRAGMA query_only = 1; PRAGMA cache_size = -8192;", NULL, NULL,
                     NULL) != SQLITE_OK)
        return ns_sqlite_fail(r, "configuring SQLite");
    return 0;
}

static int nsys_read(ns_reader *r, profile *out, ingest_trace_info *info_out)
{
    ingest_trace_info info = {0};
    const ingest_trace_options *o = r->opt;
    int rc = -1;
    parse_markers(r);
    if (harden(r) < 0 || !(r->sum = ingest_sum_new(o, r->err)) || read_all(r, &info) < 0)
        goto done;
    info.rank = o->rank >= 0 ? o->rank : 0;
    info.passes = 1;
    info.unmatched = r->unmatched;
    if (ingest_sum_finish(r->sum, info.rank, 1e-9, out, &info, r->err) < 0)
        goto done;
    rc = 0;
done:
    ingest_sum_free(r->sum);
    if (rc < 0) {
        profile_free(out);
        ingest_trace_info_free(&info);
        ingest_clean_message(r->err->msg);
    }
    if (info_out)
        *info_out = info;
    else
        ingest_trace_info_free(&info);
    return rc;
}

static void ns_begin(ns_reader *r, const ingest_trace_options *o, ingest_trace_options *defaults,
                     profile *out, ingest_error *err)
{
    if (!o) {
        ingest_trace_options_default(defaults);
        o = defaults;
    }
    memset(r, 0, sizeof *r);
    r->opt = o;
    r->err = err;
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    err->offset = -1;
}

static int not_sqlite(ns_reader *r, ingest_trace_info *info)
{
    if (info)
        memset(info, 0, sizeof *info);
    return ns_fail(r, "not a SQLite database (an nsys export starts with \"SQLite format 3\")");
}

int ingest_nsys_path(const char *path, const ingest_trace_options *o, profile *out,
                     ingest_trace_info *info, ingest_error *err)
{
    ns_reader r;
    ingest_trace_options defaults;
    ns_begin(&r, o, &defaults, out, err);
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    if (!f)
        return ns_fail(&r, "cannot open the file");
    if (n < 16 || memcmp(head, "SQLite format 3", 16))
        return not_sqlite(&r, info);
    char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
    if (!uri)
        return ns_fail(&r, "out of memory");
    /* a path with URI syntax characters is opened as a plain name instead */
    int plain = strpbrk(path, "?#%") != NULL;
    int orc = sqlite3_open_v2(plain ? path : uri, &r.db,
                              SQLITE_OPEN_READONLY | (plain ? 0 : SQLITE_OPEN_URI), NULL);
    sqlite3_free(uri);
    int rc;
    if (orc != SQLITE_OK) {
        rc = ns_fail(&r, "cannot open the database: %s", r.db ? sqlite3_errmsg(r.db) : "no memory");
        if (info)
            memset(info, 0, sizeof *info);
    } else {
        rc = nsys_read(&r, out, info);
    }
    sqlite3_close(r.db);
    return rc;
}

int ingest_nsys_memory(const void *data, size_t len, const ingest_trace_options *o,
                       profile *out, ingest_trace_info *info, ingest_error *err)
{
    ns_reader r;
    ingest_trace_options defaults;
    ns_begin(&r, o, &defaults, out, err);
    if (len < 16 || memcmp(data, "SQLite format 3", 16))
        return not_sqlite(&r, info);
    if (len > (size_t)LLONG_MAX / 2)
        return ns_fail(&r, "the database is too large");
    int rc;
    if (sqlite3_open_v2(":memory:", &r.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = ns_fail(&r, "cannot open SQLite");
        if (info)
            memset(info, 0, sizeof *info);
    } else if (sqlite3_deserialize(r.db, "main", (unsigned char *)(uintptr_t)data,
                                   (sqlite3_int64)len, (sqlite3_int64)len,
                                   SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
        rc = ns_sqlite_fail(&r, "cannot read the database");
        if (info)
            memset(info, 0, sizeof *info);
    } else {
        rc = nsys_read(&r, out, info);
    }
    sqlite3_close(r.db);
    return rc;
}
