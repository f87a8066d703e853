/*
 * noisy.c — the too-noisy points of a model set (noisy.h).
 */
#include "analysis/noisy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_plan.h"
#include "sweep/sweep_stats.h"
#include "common/jsonb.h"

/* " [dataloader=cpu, precision=fp16]" of a row's levels (a JSON array text
 * in factor-name order); nothing without factors */
static size_t levels_label(const noisy_names *nm, const char *levels, char *buf, size_t cap)
{
    json_t *arr = nm->nfactors && levels ? jsonb_parse(levels, JSON_DECODE_ANY) : NULL;
    size_t n = 0;
    for (int i = 0; i < nm->nfactors && (size_t)i < json_array_size(arr) && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? ", " : " [", nm->factors[i],
                              json_string_value(json_array_get(arr, (size_t)i)) ?: "?");
    if (n && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "]");
    json_decref(arr);
    return n < cap ? n : cap;
}

void noisy_point_label(const noisy_names *nm, const store_measurement_row *r, char *buf,
                       size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < nm->nparams && i < r->nparams && n < cap; i++) {
        char num[32];
        sweep_format_number(r->point[i], num);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? "," : "", nm->params[i], num);
    }
    if (n < cap)
        n += levels_label(nm, r->levels, buf + n, cap - n);
    if (n < cap)
        snprintf(buf + n, cap - n, " %s %s (phase %s)", r->name, r->metric, r->phase);
}

void noisy_points_scan(const noisy_names *nm, const store_measurement_row *rows, int n,
                       noisy_points *out)
{
    memset(out, 0, sizeof *out);
    int maxreps = 1;
    for (int i = 0; i < n; i++)
        maxreps = rows[i].nreps > maxreps ? rows[i].nreps : maxreps;
    sweep_quantiles *q = malloc(sizeof *q);
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    if (!q || !scratch) {
        free(q);
        free(scratch);
        return;
    }
    sweep_quantiles_init(q);
    for (int i = 0; i < n; i++) {
        const store_measurement_row *r = &rows[i];
        if (r->nreps < 2 || !r->level || strcmp(r->level, "application") || !r->name ||
            strcmp(r->name, "epoch"))
            continue;
        sweep_stats st;
        sweep_stats_compute(r->reps, r->nreps, NOISY_TARGET, q, scratch, NULL, &st);
        if (!(st.has_mean_ci && isfinite(st.rel_half_width) && st.rel_half_width > NOISY_TARGET))
            continue;
        if (out->count++ >= NOISY_NAMED_MAX)
            continue;
        char what[300];
        noisy_point_label(nm, r, what, sizeof what);
        snprintf(out->text[out->named++], sizeof out->text[0],
                 "too noisy: %.260s: the mean's 95%% interval is ±%.1f%% over %d repetitions "
                 "(more than ±%.0f%%; %ld needed: see statistics)",
                 what, 100 * st.rel_half_width, st.n, 100 * NOISY_TARGET, st.reps_needed);
    }
    free(q);
    free(scratch);
}
