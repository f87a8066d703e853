/*
 * trace_scan_internal.h — the state of the Chrome trace-event scanner
 * (trace_scan.c), shared by its two levels: the skeleton, the carry and the
 * scanner's entry points (trace_scan.c), and the recursive-descent parser of
 * one unit, with the error messages (trace_scan_unit.c). Not for use outside
 * them.
 */
#ifndef PERFCAST_INGEST_TRACE_SCAN_INTERNAL_H
#define PERFCAST_INGEST_TRACE_SCAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/trace_scan.h"

enum { P_OK = 0, P_MORE, P_ERR };

/* the outer state: what the skeleton expects next */
enum {
    O_START = 0,  /* the top-level value */
    O_ROOT_FIRST, /* after "{": a key or "}" */
    O_ROOT_KEY,   /* after ",": a key */
    O_ROOT_COLON, /* after a key */
    O_ROOT_VALUE, /* after ":" */
    O_ROOT_NEXT,  /* after a member: "," or "}" */
    O_EV_FIRST,   /* after "[": an event or "]" */
    O_EV_VALUE,   /* after ",": an event */
    O_EV_NEXT,    /* after an event: "," or "]" */
    O_DONE,       /* the top-level value ended */
};

/* units: values parsed as a whole */
enum { U_NONE = 0, U_TOP, U_ROOT_KEY, U_ROOT_VALUE, U_EVENT };

#define TS_ARGS 0xFE   /* key id of "args" in an event */
#define TS_EVENTS 0xFD /* key id of "traceEvents" at the top level */
#define TS_NOKEY 0xFF

typedef struct ts_key {
    const char *name;
    unsigned len;
    unsigned char id;
} ts_keydef;

typedef struct ts_keytab {
    ts_keydef k[TSCAN_MAX_FIELDS + 1];
    int n;
    uint64_t lens; /* bit l: a key of length l (< 64) */
} ts_keytab;

struct tscan {
    const tscan_schema *sc;
    void *ctx;
    ingest_error *err;
    ts_keytab ev_keys, args_keys, root_keys, member_keys;
    uint32_t capture;

    /* outer state */
    int state;
    int bare;              /* the top-level value is the events array itself */
    int seen_events;
    int root_key;          /* -2 traceEvents, -1 skipped, else index in root_keys */
    int any;               /* a byte other than whitespace was seen */
    long long nevents;
    unsigned long long base; /* offset of the chunk being fed */

    /* the unit being parsed */
    int unit;
    const char *end;       /* end of the bytes at hand */
    const char *at0;       /* a pointer ... */
    unsigned long long off0; /* ... and its offset in the input */
    int final;             /* the bytes at hand end the unit */
    int perr;
    int escaped;           /* the last string read had escapes */
    const char *key;       /* the last key read (NULL when escaped) and its length */
    uint32_t keylen;
    unsigned seq;          /* members read in the record */
    tscan_record rec;
    char *arena;           /* unescaped strings of the record */
    size_t alen, acap;
    tscan_token *tok;
    int ntok, tokcap;
    char keybuf[256];      /* an escaped key, unescaped */

    /* a unit cut by the end of a chunk */
    int carrying;
    char *carry;
    size_t clen, ccap;
    unsigned long long cstart;
    int fmode;             /* finder: 0 container, 1 string, 2 scalar */
    int fdepth, fstr, fesc, fbase;
    size_t ftok;           /* bytes of the current string or scalar */
};

/* the offset in the input of q, a pointer into the bytes at hand */
static inline unsigned long long ts_off(const tscan *s, const char *q)
{
    return s->off0 + (unsigned long long)(q - s->at0);
}

static inline int ts_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}

/* a fault at q: the message into err, NULL returned */
#define TS_FAIL(s, q, ...) ts_fail_at((s), ts_off((s), (q)), __VA_ARGS__)

/* trace_scan_unit.c */
const char *ts_fail_at(tscan *s, unsigned long long at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ts_key(tscan *s, const char *q, const ts_keytab *t, int level, int *id);
void ts_keytab_init(ts_keytab *t, const char *const *names, int id0);
int ts_reader_failed(tscan *s, unsigned long long at);
const char *ts_record(tscan *s, const char *q, int depth, const ts_keytab *t,
                     const ts_keytab *args_tab, int capture);
void ts_record_start(tscan *s);
int ts_reserve(tscan *s, size_t n);
const char *ts_value(tscan *s, const char *q, int depth, int capture);

#endif
