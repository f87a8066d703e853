/*
 * test_ingest_nsys.c — the Nsight Systems SQLite export reader
 * (ingest/nsys.c) on databases built here with the tables and columns of
 * NVIDIA's documented export schema (nsys 2021-2024): no real export is in
 * the fixtures.
 *
 * One export with two NVTX steps inside an epoch range, kernels launched in
 * one step and run in the next, an NCCL kernel, memcpy and memset with
 * bytes, CUDA runtime calls, an NVTX user range, an NVTX mark, an MPI
 * collective and a kernel whose launch is missing: every sum checked, read
 * from a file and from bytes in memory alike. Then custom step markers, no
 * markers (one step), and every refusal: not SQLite, truncated, no tables,
 * no StringIds, a missing column, a newer schema version, a view in place
 * of a table, kernels of two processes, a marker range that never ends,
 * crossing markers, a name id missing from StringIds.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/format.h"
#include "ingest/trace.h"
#include "tests/check.h"

/* The documented tables (columns as nsys 2021-2024 export them). */
static const char *const schema =
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT NOT NULL);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
    " shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,"
    " registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,"
    " gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,"
    " blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,"
    " dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,"
    " localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,"
    " graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
    " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
    " copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,"
    " srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,"
    " migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " graphNodeId INTEGER, memKind INTEGER);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
    " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
    " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,"
    " int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,"
    " floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
    "CREATE TABLE MPI_COLLECTIVES_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " globalTid INTEGER, textId INTEGER NOT NULL, commHandle INTEGER, rootRank INTEGER,"
    " size INTEGER, recvSize INTEGER);";

#define KERNEL(start, end, corr, name)                                                             \
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"           \
    " correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY,"       \
    " gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,"                     \
    " localMemoryPerThread, localMemoryTotal, gridId) VALUES (" #start ", " #end ", 0, 1, 7, "    \
    #corr ", 72057594037927936, " #name ", " #name ", 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1);"
#define RUNTIME(start, end, corr, name)                                                            \
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,"   \
    " nameId, returnValue) VALUES (" #start ", " #end ", 1, 72057594037927937, " #corr ", " #name  \
    ", 0);"
#define NVTX(start, end, type, text, textid)                                                       \
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid) VALUES (" #start     \
    ", " #end ", " #type ", " text ", " #textid ", 72057594037927937);"

static const char *const standard_rows =
    "INSERT INTO StringIds VALUES (1, 'sm80_gemm_kernel'),"
    " (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, ncclDevKernelArgs*)'),"
    " (3, 'cudaLaunchKernel_v7000'), (4, 'cudaMemcpyAsync_v3020'), (5, 'unused'),"
    " (6, 'forward'), (7, 'MPI_Allreduce'), (8, 'cudaMemsetAsync_v3020'), (9, 'epoch 0');"
    "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION_MAJOR', '3'),"
    " ('EXPORT_SCHEMA_VERSION_MINOR', '11'), ('EXPORT_SCHEMA_VERSION_MICRO', '0');"
    /* an epoch around two steps; a user range; a mark */
    NVTX(0, 3000, 60, "NULL", 9)
    NVTX(100, 1100, 59, "'Train Step 0'", NULL)
    NVTX(1100, 2100, 59, "'Train Step 1'", NULL)
    NVTX(150, 600, 59, "NULL", 6)
    NVTX(200, NULL, 34, "'a mark'", NULL)
    /* launches: in step 0, step 1, step 0, step 0, after step 1 */
    RUNTIME(1000, 1005, 1, 3) RUNTIME(1500, 1507, 2, 3) RUNTIME(200, 230, 3, 4)
    RUNTIME(300, 304, 4, 8) RUNTIME(2500, 2502, 5, 3)
    /* the gemm launched in step 0 runs in step 1; one kernel without launch */
    KERNEL(1050, 1150, 1, 1) KERNEL(1600, 1900, 2, 2) KERNEL(2600, 2700, 5, 1)
    KERNEL(1200, 1210, 99, 1)
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,"
    " correlationId, bytes, copyKind) VALUES (210, 260, 0, 1, 7, 3, 4096, 1);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,"
    " correlationId, value, bytes) VALUES (310, 320, 0, 1, 7, 4, 0, 512);"
    "INSERT INTO MPI_COLLECTIVES_EVENTS (start, end, globalTid, textId) VALUES (700, 900, 1, 7);";

/* A database from sql, as bytes (sqlite3_serialize). */
static unsigned char *build(const char *sql, size_t *len)
{
    sqlite3 *db;
    *len = 0;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return NULL;
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "building a test database: %s\n", msg);
        sqlite3_free(msg);
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_int64 n = 0;
    unsigned char *s = sqlite3_serialize(db, "main", &n, 0);
    sqlite3_close(db);
    unsigned char *copy = s ? malloc((size_t)n) : NULL;
    if (copy) {
        memcpy(copy, s, (size_t)n);
        *len = (size_t)n;
    }
    sqlite3_free(s);
    return copy;
}

static char *join(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    strcpy(s, a);
    strcat(s, b);
    return s;
}

static int callpath_id(const profile *p, const char *name)
{
    for (int i = 0; i < p->ncallpaths; i++)
        if (!strcmp(p->callpaths[i].name, name))
            return i;
    return -1;
}

static double value_of(const profile *p, int phase, int step, const char *cp, const char *metric)
{
    int c = callpath_id(p, cp), m = -1;
    for (int i = 0; i < p->nmetrics; i++)
        if (!strcmp(p->metrics[i], metric))
            m = i;
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        if (r->phase == phase && r->step == step && r->callpath == c && r->metric == m)
            return r->value;
    }
    return NAN;
}

static int close_to(double got, double want)
{
    return check_close(got, want, 1e-12, 1e-300);
}

static void test_standard(void)
{
    char *sql = join(schema, standard_rows);
    size_t len;
    unsigned char *db = build(sql, &len);
    free(sql);
    check(db != NULL, "build the standard export");
    if (!db)
        return;
    check(ingest_sniff(db, len) == INGEST_KIND_NSYS, "sniffed as nsys");
    char path[] = "/tmp/perfcast-nsys-XXXXXX";
    int fd = mkstemp(path);
    check(fd >= 0 && write(fd, db, len) == (ssize_t)len, "write the export");
    if (fd >= 0)
        close(fd);
    for (int way = 0; way < 2; way++) {
        profile p;
        ingest_trace_info info;
        ingest_error err;
        ingest_trace_options o;
        ingest_trace_options_default(&o);
        o.rank = 5;
        int rc = way == 0 ? ingest_nsys_path(path, &o, &p, &info, &err)
                          : ingest_nsys_memory(db, len, &o, &p, &info, &err);
        check(rc == 0, "standard export (%s): %s", way ? "memory" : "file", err.msg);
        if (rc)
            continue;
        check(info.nsteps == 2 && !strcmp(info.steps[0].label, "Train Step 0") &&
                  !strcmp(info.steps[1].label, "Train Step 1"),
              "two steps inside the epoch: %d", info.nsteps);
        check(close_to(info.steps[1].start, 1100e-9), "step times in seconds");
        check(!strcmp(info.schema, "3.11.0"), "schema version %s", info.schema);
        check(info.rank == 5 && p.rows[0].rank == 5, "the caller's rank");
        check(info.unmatched == 1, "unmatched %lld", info.unmatched);
        const char *nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, ncclDevKernelArgs*)";
        check(close_to(value_of(&p, PROFILE_TRAIN, 0, "sm80_gemm_kernel", "time"), 100e-9) &&
                  value_of(&p, PROFILE_TRAIN, 0, "sm80_gemm_kernel", "visits") == 1,
              "gemm launched in step 0 counts there");
        check(close_to(value_of(&p, PROFILE_TRAIN, 1, "sm80_gemm_kernel", "time"), 10e-9),
              "the kernel without launch by its own start");
        check(close_to(value_of(&p, PROFILE_BETWEEN, 2, "sm80_gemm_kernel", "time"), 100e-9),
              "launched after the last step: gap 2");
        check(close_to(value_of(&p, PROFILE_TRAIN, 1, nccl, "time"), 300e-9), "nccl kernel");
        check(p.callpaths[callpath_id(&p, nccl)].category == PROFILE_COMM, "nccl is comm");
        check(p.callpaths[callpath_id(&p, "sm80_gemm_kernel")].category == PROFILE_COMP, "comp");
        check(value_of(&p, PROFILE_TRAIN, 0, "Memcpy HtoD", "bytes") == 4096 &&
                  close_to(value_of(&p, PROFILE_TRAIN, 0, "Memcpy HtoD", "time"), 50e-9) &&
                  p.callpaths[callpath_id(&p, "Memcpy HtoD")].category == PROFILE_MEM,
              "memcpy");
        check(value_of(&p, PROFILE_TRAIN, 0, "Memset", "bytes") == 512, "memset bytes");
        check(close_to(value_of(&p, PROFILE_TRAIN, 0, "MPI_Allreduce", "time"), 200e-9) &&
                  p.callpaths[callpath_id(&p, "MPI_Allreduce")].category == PROFILE_COMM,
              "MPI is comm");
        check(value_of(&p, PROFILE_TRAIN, 0, "cudaLaunchKernel", "visits") == 1 &&
                  value_of(&p, PROFILE_TRAIN, 1, "cudaLaunchKernel", "visits") == 1 &&
                  value_of(&p, PROFILE_BETWEEN, 2, "cudaLaunchKernel", "visits") == 1 &&
                  p.callpaths[callpath_id(&p, "cudaLaunchKernel")].category == PROFILE_HOST,
              "runtime calls, version suffix dropped");
        check(close_to(value_of(&p, PROFILE_TRAIN, 0, "forward", "time"), 450e-9) &&
                  p.callpaths[callpath_id(&p, "forward")].category == PROFILE_HOST,
              "NVTX user range through textId");
        check(callpath_id(&p, "epoch 0") < 0 && callpath_id(&p, "Train Step 0") < 0 &&
                  callpath_id(&p, "a mark") < 0,
              "markers and marks are not callpaths");
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* other markers: the "Train Step" ranges become user ranges, "epoch 0" the step */
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    o.markers = " Epoch ";
    profile p;
    ingest_trace_info info;
    ingest_error err;
    int rc = ingest_nsys_memory(db, len, &o, &p, &info, &err);
    check(rc == 0 && info.nsteps == 1 && !strcmp(info.steps[0].label, "epoch 0") &&
              value_of(&p, PROFILE_TRAIN, 0, "Train Step 1", "visits") == 1,
          "custom markers: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* no marker matches: one step */
    o.markers = "iteration";
    rc = ingest_nsys_memory(db, len, &o, &p, &info, &err);
    check(rc == 0 && info.nsteps == 0 &&
              value_of(&p, PROFILE_TRAIN, 0, "sm80_gemm_kernel", "visits") == 3,
          "no markers, one step: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* a truncated file */
    rc = ingest_nsys_memory(db, len / 2, NULL, &p, &info, &err);
    check(rc < 0, "truncated database accepted");
    unlink(path);
    free(db);
}

static void expect_error(const char *what, const char *sql, const char *needle)
{
    size_t len;
    unsigned char *db = build(sql, &len);
    check(db != NULL, "%s: build", what);
    if (!db)
        return;
    profile p;
    ingest_trace_info info;
    ingest_error err;
    int rc = ingest_nsys_memory(db, len, NULL, &p, &info, &err);
    check(rc < 0, "%s: accepted", what);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    } else {
        static const profile zero;
        check(!memcmp(&p, &zero, sizeof zero) && info.steps == NULL, "%s: not zeroed", what);
        check(strstr(err.msg, needle) != NULL, "%s: \"%s\" lacks \"%s\"", what, err.msg, needle);
    }
    free(db);
}

static void test_refusals(void)
{
    profile p;
    ingest_trace_info info;
    ingest_error err;
    const char junk[] = "definitely not a database, but long enough";
    check(ingest_nsys_memory(junk, sizeof junk, NULL, &p, &info, &err) < 0 &&
              strstr(err.msg, "not a SQLite database"),
          "junk: %s", err.msg);
    check(ingest_nsys_path("/nonexistent/x.sqlite", NULL, &p, &info, &err) < 0 &&
              strstr(err.msg, "cannot open"),
          "missing file: %s", err.msg);
    expect_error("no tables", "CREATE TABLE other (x INTEGER);", "none of the Nsight Systems");
    expect_error("no StringIds",
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
                 " demangledName INTEGER);",
                 "no StringIds");
    expect_error("kernel without start",
                 "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin_ns INTEGER, end INTEGER,"
                 " demangledName INTEGER);",
                 "has no column \"start\"");
    expect_error("kernel without a name column",
                 "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER);",
                 "no demangledName");
    char *sql = join(schema, "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '4.0.1');");
    expect_error("newer schema", sql, "4.0.1\" is not supported");
    free(sql);
    expect_error("a view",
                 "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                 "CREATE TABLE t (start INTEGER, end INTEGER, demangledName INTEGER);"
                 "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM t;",
                 "is a view");
    sql = join(schema, KERNEL(1, 2, 1, 1) "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 7;"
                       KERNEL(3, 4, 2, 1) "INSERT INTO StringIds VALUES (1, 'k');");
    expect_error("two processes", sql, "kernels of 2 processes");
    free(sql);
    sql = join(schema, NVTX(10, NULL, 59, "'step 1'", NULL) "INSERT INTO StringIds VALUES (1, 'k');"
                       KERNEL(11, 12, 1, 1));
    expect_error("marker never ends", sql, "never ends");
    free(sql);
    sql = join(schema, NVTX(0, 100, 59, "'step 1'", NULL) NVTX(50, 150, 59, "'step 2'", NULL));
    expect_error("crossing markers", sql, "overlap");
    free(sql);
    sql = join(schema, KERNEL(1, 2, 1, 42));
    expect_error("name id missing", sql, "not in StringIds");
    free(sql);
    sql = join(schema, KERNEL(5, 2, 1, 1) "INSERT INTO StringIds VALUES (1, 'k');");
    expect_error("ends before it starts", sql, "ends (2) before it starts (5)");
    free(sql);
    sql = join(schema, "INSERT INTO StringIds VALUES (1, 'k');"
                       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId,"
                       " streamId, bytes, copyKind) VALUES (1, 2, 0, 0, 0, 'many', 1);");
    expect_error("bytes not a number", sql, "bytes is not a number");
    free(sql);
    expect_error("empty export", schema, "no kernels, copies or host events");
}

/* Validation steps: an NVTX range "validation" around the second step
 * makes it a validation step; so does a step range named "Val Step 1";
 * the override sets every step. The NCCL kernel launched in step 1 (300 ns)
 * lands in that step's phase. */
static void test_validation_steps(void)
{
    static const struct {
        const char *extra, *patterns;
        int phase, want1, nval;
    } cases[] = {
        {NVTX(1100, 2100, 59, "'validation'", NULL), NULL, INGEST_PHASE_AUTO, PROFILE_VALIDATION, 1},
        {"UPDATE NVTX_EVENTS SET text = 'Val Step 1' WHERE text = 'Train Step 1';", NULL,
         INGEST_PHASE_AUTO, PROFILE_VALIDATION, 1},
        {"", NULL, INGEST_PHASE_AUTO, PROFILE_TRAIN, 0},
        {NVTX(1100, 2100, 59, "'validation'", NULL), "holdout", INGEST_PHASE_AUTO, PROFILE_TRAIN, 0},
        {"", NULL, INGEST_PHASE_VALIDATION, PROFILE_VALIDATION, 2},
    };
    const char *nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, ncclDevKernelArgs*)";
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *a = join(schema, standard_rows), *sql = join(a, cases[i].extra);
        free(a);
        size_t len;
        unsigned char *db = build(sql, &len);
        free(sql);
        profile p;
        ingest_trace_info info;
        ingest_error err;
        ingest_trace_options o;
        ingest_trace_options_default(&o);
        o.validation = cases[i].patterns;
        o.phase = cases[i].phase;
        int rc = db ? ingest_nsys_memory(db, len, &o, &p, &info, &err) : -1;
        check(rc == 0, "case %zu: %s", i, rc ? err.msg : "");
        free(db);
        if (rc)
            continue;
        double v = value_of(&p, cases[i].want1, 1, nccl, "time");
        check(close_to(v, 300e-9) && info.nvalidation == cases[i].nval,
              "case %zu: NCCL kernel of step 1 in phase %d: %g, %d validation steps", i,
              cases[i].want1, v, info.nvalidation);
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
}

/* OS runtime, cuBLAS and cuDNN calls (tables as the schema reference
 * documents them): host callpaths, placed by their start; cuBLAS/cuDNN
 * names lose their version suffix. Step 0 is [100, 1100), step 1 [1100, 2100). */
static void test_library_tables(void)
{
    char *a = join(schema, standard_rows);
    char *sql = join(a,
                     "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                     " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER,"
                     " nameId INTEGER NOT NULL, returnValue INTEGER, nestingLevel INTEGER,"
                     " callchainId INTEGER);"
                     "CREATE TABLE CUBLAS_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                     " eventClass INTEGER, globalTid INTEGER, nameId INTEGER NOT NULL);"
                     "CREATE TABLE CUDNN_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                     " eventClass INTEGER, globalTid INTEGER, nameId INTEGER NOT NULL);"
                     "INSERT INTO StringIds VALUES (20, 'pthread_mutex_lock'),"
                     " (21, 'cublasSgemm_v2'), (22, 'cudnnConvolutionForward');"
                     "INSERT INTO OSRT_API (start, end, nameId) VALUES (150, 160, 20), (1200, 1240, 20);"
                     "INSERT INTO CUBLAS_EVENTS (start, end, nameId) VALUES (400, 450, 21);"
                     "INSERT INTO CUDNN_EVENTS (start, end, nameId) VALUES (1300, 1400, 22);");
    free(a);
    size_t len;
    unsigned char *db = build(sql, &len);
    free(sql);
    profile p;
    ingest_trace_info info;
    ingest_error err;
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    int rc = db ? ingest_nsys_memory(db, len, &o, &p, &info, &err) : -1;
    free(db);
    check(rc == 0, "library tables: %s", rc ? err.msg : "");
    if (rc)
        return;
    check(close_to(value_of(&p, PROFILE_TRAIN, 0, "pthread_mutex_lock", "time"), 10e-9) &&
              close_to(value_of(&p, PROFILE_TRAIN, 1, "pthread_mutex_lock", "time"), 40e-9),
          "OS runtime per step: %g %g", value_of(&p, PROFILE_TRAIN, 0, "pthread_mutex_lock", "time"),
          value_of(&p, PROFILE_TRAIN, 1, "pthread_mutex_lock", "time"));
    check(close_to(value_of(&p, PROFILE_TRAIN, 0, "cublasSgemm", "time"), 50e-9) &&
              value_of(&p, PROFILE_TRAIN, 0, "cublasSgemm", "visits") == 1,
          "cuBLAS call, version suffix dropped");
    check(close_to(value_of(&p, PROFILE_TRAIN, 1, "cudnnConvolutionForward", "time"), 100e-9),
          "cuDNN call in step 1");
    int c = callpath_id(&p, "cudnnConvolutionForward");
    check(c >= 0 && p.callpaths[c].category == PROFILE_HOST, "host category");
    profile_free(&p);
    ingest_trace_info_free(&info);

    /* an export of the library tables alone is one */
    sql = join(schema, "CREATE TABLE CUDNN_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                       " nameId INTEGER NOT NULL);"
                       "INSERT INTO StringIds VALUES (1, 'cudnnConvolutionForward');"
                       "INSERT INTO CUDNN_EVENTS VALUES (0, 10, 1);");
    db = build(sql, &len);
    free(sql);
    rc = db ? ingest_nsys_memory(db, len, &o, &p, &info, &err) : -1;
    free(db);
    check(rc == 0 && info.nsteps == 0 && close_to(value_of(&p, PROFILE_TRAIN, 0,
                                                           "cudnnConvolutionForward", "time"),
                                                  10e-9),
          "cuDNN only: %s", rc ? err.msg : "");
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
}

int main(void)
{
    test_standard();
    test_refusals();
    test_validation_steps();
    test_library_tables();
    return check_summary();
}
