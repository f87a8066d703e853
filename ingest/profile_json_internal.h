/*
 * profile_json_internal.h — the state of the perfcast-JSON profile reader
 * (ingest/profile_json.c), shared by its three parts: the document walk
 * (profile_json.c), the checks of the bytes and the faults it reports
 * (profile_json_check.c), and the normalized profile built from what was
 * read (profile_json_rows.c). Not for use outside them.
 */
#ifndef PERFCAST_INGEST_PROFILE_JSON_INTERNAL_H
#define PERFCAST_INGEST_PROFILE_JSON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "ingest/profile.h"

#define PJ_MAX_NAME 4096 /* bytes in a callpath, metric or parameter name */
#define PJ_MAX_DEPTH 32  /* nesting of arrays and objects; the format needs 8 */
#define PJ_SHOWN 40      /* bytes of a name quoted in a message */
#define PJ_PATH 160      /* room for the longest index-only JSON path */
#define PJ_MAX_LEVELS 64 /* factors named in "levels" (an experiment declares at most 8) */
#define PJ_KEY 12        /* components of a fault's place in the order of checks */
#define PJ_RECENT 8      /* distinct metric names looked up before one is copied again */
#define PJ_STR_(x) #x
#define PJ_STR(x) PJ_STR_(x)

/* One entry of a "callpaths" array, in document order. */
typedef struct pj_occ {
    size_t name;      /* offset in pj_reader.text */
    int category;
    int between;      /* 1 under "between_steps" */
    size_t rank_i, step_i, cp_i; /* array positions, for messages */
} pj_occ;

/* One metric of one callpath entry, before duplicates are summed. */
typedef struct pj_raw {
    int rank, phase, step;
    int callpath;         /* set once callpaths are interned */
    int metric;           /* set once metrics are interned */
    uint32_t metric_name; /* index into pj_reader.mnames */
    size_t occ;           /* its pj_occ */
    double value;
} pj_raw;

/* A rank number and where it was given, to find duplicates by sorting. */
typedef struct pj_rank {
    int rank;
    size_t index;
} pj_rank;

/* The keys of one object, to refuse a duplicate: NUL-terminated one after
 * another in text, found through an open-addressing table (offset + 1). */
typedef struct pj_keyset {
    char *text;
    size_t len, cap;
    size_t *slot, nslot, n;
} pj_keyset;

/* What an open object or array is, in the format. */
enum {
    PJ_ROOT, PJ_POINT, PJ_LEVELS, PJ_RANKS, PJ_RANK, PJ_STEPS, PJ_STEP, PJ_CPS, PJ_CP,
    PJ_METRICS,
    PJ_SKIP /* a value the format does not read (refused or unknown) */
};

/* Members of the objects with fixed members (bits of pj_frame.seen). */
enum {
    PJ_M_POINT, PJ_M_REPETITION, PJ_M_LEVELS, PJ_M_RANKS, /* root */
    PJ_M_RANK, PJ_M_STEPS, PJ_M_BETWEEN,                  /* rank */
    PJ_M_PHASE, PJ_M_CALLPATHS,                           /* step */
    PJ_M_NAME, PJ_M_CATEGORY, PJ_M_METRICS,               /* callpath */
    PJ_M_FREE,   /* a key that is a name (point, levels, metrics) */
    PJ_M_UNKNOWN /* an unknown member: its value is skipped */
};

typedef struct pj_frame {
    int kind;      /* PJ_ROOT ... PJ_SKIP */
    int object;    /* 1 object, 0 array */
    int member;    /* object: PJ_M_* of the value that comes next */
    unsigned seen; /* fixed members seen */
    size_t count;  /* members or elements so far */
    pj_keyset keys;
} pj_frame;

/* A JSON number as Jansson would keep it. */
typedef struct pj_num {
    int integer; /* no fraction, no exponent */
    long long i;
    double d;
} pj_num;

enum { PJ_V_NULL, PJ_V_BOOL, PJ_V_NUM, PJ_V_STR, PJ_V_OBJ, PJ_V_ARR };

typedef struct pj_value {
    int type; /* PJ_V_* */
    pj_num num;
    const char *s; /* string: n bytes, not NUL-terminated */
    size_t n;
} pj_value;

typedef struct pj_reader {
    ingest_error *err;
    profile *out;
    const char *buf;
    size_t len;
    yajl_handle h;
    uint64_t seed;
    /* collected */
    pj_occ *occ;
    size_t nocc, occ_cap;
    pj_raw *raw;
    size_t nraw, raw_cap;
    char *text; /* callpath and metric names */
    size_t ntext, text_cap;
    size_t *mnames; /* the metric names kept, offsets in text */
    size_t nmnames, mnames_cap;
    uint32_t recent[PJ_RECENT]; /* indexes into mnames */
    size_t *byslot; /* callpath name last kept per position in "callpaths" */
    size_t nbyslot, byslot_cap;
    int nrecent, next_recent;
    pj_rank *ranks;
    size_t nranks, ranks_cap;
    size_t point_cap;
    /* where the parser is */
    pj_frame frame[PJ_MAX_DEPTH + 1];
    int depth;
    char *key; /* the last key, NUL-terminated */
    size_t key_len, key_cap;
    size_t rank_i, step_i, cp_i; /* positions of the rank, step, callpath being read */
    int between;                 /* the steps being read are "between_steps" */
    int rank, has_rank;
    int count[2];                /* steps per phase in this rank */
    int phase;
    size_t rank_raw, step_raw;   /* the raw rows of this rank and step begin here */
    size_t cp_name;
    int cp_category;
    /* the first \u escape to refuse (from check_depth), (size_t)-1 when none */
    size_t escape_at;
    unsigned escape_code;
    /* outcome */
    size_t start, root_end; /* the top value begins and ends here */
    int stop;               /* a syntax error or out of memory is in err */
    int bad;                /* a semantic fault is in err ... */
    size_t bad_at[PJ_KEY];  /* ... at this place in the order of checks */
} pj_reader;


/* profile_json_check.c and profile_json_rows.c, for the walk */
int pj_callpath_name(pj_reader *r, const char *s, size_t n);
int pj_check_depth(pj_reader *r, const char *buf, size_t len);
int pj_check_string(pj_reader *r);
void pj_cp_path(const pj_reader *r, char *out, size_t cap);
int pj_key_cp(const pj_reader *r, size_t *k);
int pj_key_rank(const pj_reader *r, size_t *k);
int pj_key_step(const pj_reader *r, size_t *k);
int pj_keyset_add(pj_keyset *k, uint64_t seed, const char *s, size_t n);
void pj_keyset_free(pj_keyset *k);
void pj_keyset_reset(pj_keyset *k);
int pj_lex_number(pj_reader *r, const char *s, size_t n, pj_num *v);
int pj_metric_name(pj_reader *r, const char *s, size_t n, uint32_t *at);
void pj_metric_path(char *out, size_t cap, const char *path, const char *key);
const char *pj_name_fault(const char *s, size_t n);
int pj_nonnegative_metric(const char *name);
void pj_occ_path(char *out, size_t cap, const pj_occ *o);
void pj_path_key(char *out, size_t cap, const char *path, const char *key);
int pj_fail(pj_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t pj_here(const pj_reader *r);
int pj_nomem(pj_reader *r);
void pj_refuse(pj_reader *r, const size_t *key, int n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pj_stop_nomem(pj_reader *r);
int pj_syntax(pj_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pj_refuse_at(pj_reader *r, size_t *k, int n, size_t last, const char *path,
                  const char *what);
void pj_sanitize(char *msg);
int pj_shown(const char *s);
void pj_step_path(const pj_reader *r, char *out, size_t cap);
int pj_build_rows(pj_reader *r, profile *out);
int pj_check_unique_ranks(pj_reader *r, pj_rank *ranks, size_t n);
int pj_intern_callpaths(pj_reader *r, profile *out);
int pj_intern_metrics(pj_reader *r, profile *out);

#endif
