/*
 * fuzz_trace_common.h — the checks the trace readers' libFuzzer targets
 * share (fuzz_kineto.c, fuzz_nsys.c): a success must give a consistent
 * single-rank profile (every index in range, finite non-negative time,
 * visits and bytes, rows strictly sorted by cell, one rank, steps in time
 * order), a failure a zeroed profile and info and a terminated message in
 * clean UTF-8. Any breach aborts so libFuzzer reports it.
 */
#ifndef PERFCAST_FUZZ_TRACE_COMMON_H
#define PERFCAST_FUZZ_TRACE_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/trace.h"

static int fz_row_cmp(const profile_row *a, const profile_row *b)
{
    const int x[] = {a->rank, a->phase, a->step, a->callpath, a->metric};
    const int y[] = {b->rank, b->phase, b->step, b->callpath, b->metric};
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void fz_check_profile(const profile *p, const ingest_trace_info *info)
{
    if (p->repetition != 1 || p->nranks != 1 || p->nrows < 1 || p->ncallpaths < 1 ||
        p->nmetrics < 2 || p->nparams != 0)
        abort();
    for (int i = 0; i < p->ncallpaths; i++) {
        size_t n = strlen(p->callpaths[i].name);
        if (n == 0 || n > 65536 + 7 || !profile_category_name(p->callpaths[i].category))
            abort();
    }
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        if (r->rank != info->rank || !profile_phase_name(r->phase) || r->phase == PROFILE_VALIDATION ||
            r->step < 0 || r->callpath < 0 || r->callpath >= p->ncallpaths || r->metric < 0 ||
            r->metric >= p->nmetrics || !isfinite(r->value) || r->value < 0)
            abort();
        if (r->phase == PROFILE_TRAIN && r->step >= (info->nsteps ? info->nsteps : 1))
            abort();
        if (r->phase == PROFILE_BETWEEN && r->step > info->nsteps)
            abort();
        if (i > 0 && fz_row_cmp(&p->rows[i - 1], r) >= 0)
            abort();
    }
    for (int i = 0; i < info->nsteps; i++)
        if (!(info->steps[i].end > info->steps[i].start) ||
            (i > 0 && info->steps[i].start < info->steps[i - 1].end))
            abort();
}

static int fz_clean_message(const char *msg)
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

static void fz_check(int rc, profile *p, ingest_trace_info *info, const ingest_error *err)
{
    if (rc == 0) {
        fz_check_profile(p, info);
        profile_free(p);
        ingest_trace_info_free(info);
        return;
    }
    static const profile zero;
    if (memcmp(p, &zero, sizeof zero) != 0 || info->steps != NULL || err->msg[0] == '\0' ||
        memchr(err->msg, '\0', sizeof err->msg) == NULL || !fz_clean_message(err->msg))
        abort();
}

#endif
