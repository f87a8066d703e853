/*
 * repstats.c — repetition statistics and their coded warnings (repstats.h).
 */
#include "analysis/repstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/levels.h"
#include "modeling/warning_json.h"

/* {"code", "message", "point": {...}, "levels": {...} (with factors)} of
 * row r; NULL when out of memory */
static json_t *row_warning(const noisy_names *nm, const char *code, const char *message,
                           const store_measurement_row *r)
{
    json_t *w = pmnf_warning_json(code, message), *pt = json_object();
    for (int i = 0; pt && i < nm->nparams && i < r->nparams; i++)
        json_object_set_new(pt, nm->params[i], json_real(r->point[i]));
    if (!w || !pt) {
        json_decref(w);
        json_decref(pt);
        return NULL;
    }
    json_object_set_new(w, "point", pt);
    if (nm->nfactors && r->levels) {
        const char *names[LEVELS_MAX_FACTORS];
        int nf = nm->nfactors < LEVELS_MAX_FACTORS ? nm->nfactors : LEVELS_MAX_FACTORS;
        for (int k = 0; k < nf; k++)
            names[k] = nm->factors[k];
        json_t *lv = levels_object(names, (size_t)nf, r->levels);
        if (lv)
            json_object_set_new(w, "levels", lv);
    }
    return w;
}

static void append(json_t *arr, json_t *w)
{
    if (w)
        json_array_append_new(arr, w);
}

void repstats_free(repstats *r)
{
    free(r->items);
    json_decref(r->warnings);
    memset(r, 0, sizeof *r);
}

int repstats_compute(const noisy_names *nm, const store_measurement_row *rows, int n,
                     double target, repstats *out)
{
    memset(out, 0, sizeof *out);
    int maxreps = 1;
    for (int i = 0; i < n; i++)
        maxreps = rows[i].nreps > maxreps ? rows[i].nreps : maxreps;
    sweep_quantiles *q = malloc(sizeof *q);
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    int *outl = malloc(sizeof(int) * (size_t)maxreps);
    out->items = calloc((size_t)(n ? n : 1), sizeof *out->items);
    out->warnings = json_array();
    if (!q || !scratch || !outl || !out->items || !out->warnings) {
        free(q);
        free(scratch);
        free(outl);
        return -1;
    }
    sweep_quantiles_init(q);
    char label[400], text[700];
    for (int i = 0; i < n; i++) {
        const store_measurement_row *r = &rows[i];
        if (r->nreps < 1)
            continue;
        repstats_item *it = &out->items[i];
        sweep_stats *s = &it->s;
        sweep_stats_compute(r->reps, r->nreps, target, q, scratch, outl, s);
        it->noisy = s->has_mean_ci && isfinite(s->rel_half_width) && s->rel_half_width > target;
        out->nitems++;
        out->outlying += s->noutliers > 0;
        if (it->noisy) {
            if (++out->noisy <= REPSTATS_NAMED_MAX) {
                noisy_point_label(nm, r, label, sizeof label);
                snprintf(text, sizeof text,
                         "too noisy: %s: the mean's 95%% interval is ±%.1f%% (target ±%.1f%%); "
                         "%ld repetitions needed, %d measured",
                         label, 100 * s->rel_half_width, 100 * target, s->reps_needed, s->n);
                json_t *w = row_warning(nm, REPSTATS_NOISY, text, r);
                if (w)
                    json_object_set_new(w, "relative_half_width", json_real(s->rel_half_width));
                if (w)
                    json_object_set_new(w, "target", json_real(target));
                if (w)
                    json_object_set_new(w, "repetitions", json_integer(s->n));
                if (w)
                    json_object_set_new(w, "repetitions_needed",
                                        s->reps_needed >= 0 ? json_integer(s->reps_needed)
                                                            : json_null());
                append(out->warnings, w);
            }
        } else if (s->n == 1 && ++out->single <= REPSTATS_NAMED_MAX) {
            noisy_point_label(nm, r, label, sizeof label);
            snprintf(text, sizeof text, "one repetition: %s has no interval", label);
            append(out->warnings, row_warning(nm, REPSTATS_SINGLE, text, r));
        }
    }
    if (out->noisy > REPSTATS_NAMED_MAX || out->single > REPSTATS_NAMED_MAX) {
        snprintf(text, sizeof text,
                 "%d too noisy and %d single-repetition measurements in all; the first %d of "
                 "each are named",
                 out->noisy, out->single, REPSTATS_NAMED_MAX);
        json_t *w = pmnf_warning_json(out->noisy > REPSTATS_NAMED_MAX ? REPSTATS_NOISY
                                                                      : REPSTATS_SINGLE,
                                      text);
        if (w) {
            json_object_set_new(w, "noisy", json_integer(out->noisy));
            json_object_set_new(w, "single_repetition", json_integer(out->single));
        }
        append(out->warnings, w);
    }
    free(q);
    free(scratch);
    free(outl);
    return 0;
}

json_t *repstats_noisy_warnings(const noisy_names *nm, const store_measurement_row *rows, int n)
{
    json_t *w = json_array();
    sweep_quantiles *q = malloc(sizeof *q);
    int maxreps = 1, single = 0, noisy = 0;
    for (int i = 0; i < n; i++)
        maxreps = rows[i].nreps > maxreps ? rows[i].nreps : maxreps;
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    if (!w || !q || !scratch) {
        free(q);
        free(scratch);
        json_decref(w);
        return NULL;
    }
    sweep_quantiles_init(q);
    char label[400], text[700];
    for (int i = 0; i < n; i++) {
        if (rows[i].nreps < 2) {
            single += rows[i].nreps == 1;
            continue;
        }
        sweep_stats st;
        sweep_stats_compute(rows[i].reps, rows[i].nreps, 0.05, q, scratch, NULL, &st);
        if (isfinite(st.rel_half_width) && st.rel_half_width > 0.05 &&
            ++noisy <= REPSTATS_NAMED_MAX) {
            noisy_point_label(nm, &rows[i], label, sizeof label);
            snprintf(text, sizeof text,
                     "too noisy: %s: the mean's 95%% interval is ±%.1f%% over %d repetitions",
                     label, 100 * st.rel_half_width, st.n);
            json_t *x = row_warning(nm, REPSTATS_NOISY, text, &rows[i]);
            if (x) {
                json_object_set_new(x, "relative_half_width", json_real(st.rel_half_width));
                json_object_set_new(x, "target", json_real(0.05));
                json_object_set_new(x, "repetitions", json_integer(st.n));
            }
            append(w, x);
        }
    }
    if (noisy > REPSTATS_NAMED_MAX) {
        snprintf(text, sizeof text, "%d too-noisy points in all; the first %d are named", noisy,
                 REPSTATS_NAMED_MAX);
        json_t *x = pmnf_warning_json(REPSTATS_NOISY, text);
        if (x)
            json_object_set_new(x, "count", json_integer(noisy));
        append(w, x);
    }
    if (single) {
        snprintf(text, sizeof text,
                 "%d of %d points have one repetition: their run-to-run variation is unknown",
                 single, n);
        json_t *x = pmnf_warning_json(REPSTATS_SINGLE, text);
        if (x) {
            json_object_set_new(x, "count", json_integer(single));
            json_object_set_new(x, "points", json_integer(n));
        }
        append(w, x);
    }
    free(q);
    free(scratch);
    return w;
}
