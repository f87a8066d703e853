/*
 * fuzz_profile_json.c — libFuzzer target for perfcast's JSON profile reader
 * (ingest/profile.h, ingest/profile_json.c). Each input is handed over as an
 * exact-size buffer; a success must give a consistent profile (every index in
 * range, finite values, non-negative time/visits/bytes, rows strictly sorted
 * by cell, named levels non-empty), a failure a zeroed profile and a terminated message in clean
 * UTF-8; a second read of the same bytes gives the same answer (the reader's
 * duplicate-key sets hash with a seed drawn per call). Any breach
 * aborts so libFuzzer reports it. Seeds: tests/fuzz/corpus/profile_json/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/profile.h"

static int row_cmp(const profile_row *a, const profile_row *b)
{
    const int x[] = {a->rank, a->phase, a->step, a->callpath, a->metric};
    const int y[] = {b->rank, b->phase, b->step, b->callpath, b->metric};
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void check_profile(const profile *p)
{
    if (p->repetition < 1 || p->nranks < 1 || p->nrows < 1 || p->ncallpaths < 1 ||
        p->nmetrics < 1 || p->nparams < 0)
        abort();
    for (int i = 0; i < p->nparams; i++)
        if (!p->param_names[i] || !p->param_names[i][0] || !isfinite(p->point[i]))
            abort();
    /* "levels": names and levels, both non-empty */
    if (p->nlevels < 0 || p->nlevels > 64 || (p->nlevels > 0) != (p->level_names != NULL))
        abort();
    for (int i = 0; i < p->nlevels; i++)
        if (!p->level_names[i] || !p->level_names[i][0] || !p->level_values[i] ||
            !p->level_values[i][0])
            abort();
    for (int i = 0; i < p->ncallpaths; i++) {
        size_t n = strlen(p->callpaths[i].name);
        if (n == 0 || n > 4096 || !profile_category_name(p->callpaths[i].category))
            abort();
    }
    for (int i = 0; i < p->nmetrics; i++)
        if (!p->metrics[i][0])
            abort();
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        if (r->rank < 0 || !profile_phase_name(r->phase) || r->step < 0 || r->callpath < 0 ||
            r->callpath >= p->ncallpaths || r->metric < 0 || r->metric >= p->nmetrics ||
            !isfinite(r->value))
            abort();
        const char *m = p->metrics[r->metric];
        if ((!strcmp(m, "time") || !strcmp(m, "visits") || !strcmp(m, "bytes")) && r->value < 0)
            abort();
        if (i > 0 && row_cmp(&p->rows[i - 1], r) >= 0)
            abort();
    }
}

/* 1 when msg is well-formed UTF-8 without control characters: messages end
 * up in JSON problem documents and log lines. */
static int clean_message(const char *msg)
{
    const unsigned char *s = (const unsigned char *)msg;
    while (*s) {
        int n = *s < 0x80 ? 1 : *s >= 0xC2 && *s <= 0xDF ? 2 : *s >= 0xE0 && *s <= 0xEF ? 3
              : *s >= 0xF0 && *s <= 0xF4 ? 4 : 0;
        if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F)))
            return 0;
        for (int i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return 0;
        s += n;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: any read past size trips AddressSanitizer. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    profile p, again;
    ingest_error err, err2;
    int rc = ingest_profile_json(buf, size, &p, &err);
    int rc2 = ingest_profile_json(buf, size, &again, &err2);
    if (rc != rc2 || (rc != 0 && strcmp(err.msg, err2.msg) != 0) ||
        (rc == 0 && (p.nrows != again.nrows ||
                     memcmp(p.rows, again.rows, p.nrows * sizeof(*p.rows)) != 0)))
        abort();
    if (rc2 == 0)
        profile_free(&again);
    if (rc == 0) {
        check_profile(&p);
        profile_free(&p);
    } else {
        static const profile zero;
        if (memcmp(&p, &zero, sizeof(zero)) != 0 || err.msg[0] == '\0' ||
            memchr(err.msg, '\0', sizeof(err.msg)) == NULL || !clean_message(err.msg))
            abort();
    }
    free(buf);
    return 0;
}
