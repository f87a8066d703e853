/*
 * sweep_sensitivity.c — Taguchi S/N ratios and the ranking of factors by
 * the range of their levels' mean S/N (sweep_sensitivity.h).
 */
#include "sweep/sweep_sensitivity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scaled by m (the largest |y| when smaller is better, the smallest when
 * larger is): -10·log10((1/N)·Σ y²) = -20·log10(m) - 10·log10((1/N)·Σ (y/m)²),
 * and the same with m/y for 1/y², so that no square overflows or underflows
 * for any finite y (1e200 and 1e-200 alike: -4000 dB). */
double sweep_sn_ratio(const double *y, int n, int larger_is_better)
{
    double m = fabs(y[0]);
    for (int i = 1; i < n; i++)
        if (larger_is_better ? fabs(y[i]) < m : fabs(y[i]) > m)
            m = fabs(y[i]);
    if (!(m > 0) || !isfinite(m))
        return larger_is_better ? -INFINITY : m == 0 ? INFINITY : -INFINITY;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double r = larger_is_better ? m / y[i] : y[i] / m;
        s += r * r;
    }
    double sn = -10.0 * log10(s / n);
    return larger_is_better ? sn + 20.0 * log10(m) : sn - 20.0 * log10(m);
}

void sweep_sensitivity_free(sweep_sn_result *r)
{
    if (!r)
        return;
    for (int f = 0; r->factors && f < r->nfactors; f++) {
        free(r->factors[f].mean_sn);
        free(r->factors[f].runs);
    }
    free(r->factors);
    free(r->sn);
    free(r->order);
    memset(r, 0, sizeof *r);
}

static int check_runs(const sweep_sn_problem *p, int *bad_run, char *err, size_t errcap)
{
    for (int i = 0; i < p->nruns; i++) {
        if (p->offset[i + 1] <= p->offset[i]) {
            *bad_run = i;
            snprintf(err, errcap, "run %d has no observations", i);
            return -1;
        }
        for (int j = p->offset[i]; j < p->offset[i + 1]; j++)
            if (!(p->y[j] > 0) || !isfinite(p->y[j])) {
                *bad_run = i;
                snprintf(err, errcap,
                         "observation %d of run %d is %g: S/N ratios need values > 0", j - p->offset[i] + 1,
                         i, p->y[j]);
                return -1;
            }
        for (int f = 0; f < p->nfactors; f++) {
            int l = p->level[(size_t)i * p->nfactors + f];
            if (l < 0 || l >= p->nlevels[f]) {
                *bad_run = i;
                snprintf(err, errcap, "run %d: level %d of factor %d is out of range", i, l, f);
                return -1;
            }
        }
    }
    return 0;
}

int sweep_sensitivity(const sweep_sn_problem *p, sweep_sn_result *out, int *bad_run, char *err,
                      size_t errcap)
{
    memset(out, 0, sizeof *out);
    *bad_run = -1;
    if (check_runs(p, bad_run, err, errcap) < 0)
        return -1;
    out->nfactors = p->nfactors;
    out->sn = malloc(sizeof(double) * (size_t)(p->nruns ? p->nruns : 1));
    out->factors = calloc((size_t)(p->nfactors ? p->nfactors : 1), sizeof *out->factors);
    out->order = malloc(sizeof(int) * (size_t)(p->nfactors ? p->nfactors : 1));
    int oom = !out->sn || !out->factors || !out->order;
    for (int f = 0; !oom && f < p->nfactors; f++) {
        int nl = p->nlevels[f] ? p->nlevels[f] : 1;
        out->factors[f].nlevels = p->nlevels[f];
        out->factors[f].mean_sn = calloc((size_t)nl, sizeof(double));
        out->factors[f].runs = calloc((size_t)nl, sizeof(int));
        oom = !out->factors[f].mean_sn || !out->factors[f].runs;
    }
    if (oom) {
        sweep_sensitivity_free(out);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (int i = 0; i < p->nruns; i++) {
        out->sn[i] = sweep_sn_ratio(p->y + p->offset[i], p->offset[i + 1] - p->offset[i],
                                    p->larger_is_better);
        for (int f = 0; f < p->nfactors; f++) {
            int l = p->level[(size_t)i * p->nfactors + f];
            out->factors[f].mean_sn[l] += out->sn[i];
            out->factors[f].runs[l]++;
        }
    }
    double total = 0;
    for (int f = 0; f < p->nfactors; f++) {
        sweep_sn_factor *fa = &out->factors[f];
        double lo = INFINITY, hi = -INFINITY;
        fa->best_level = -1;
        for (int l = 0; l < fa->nlevels; l++) {
            if (!fa->runs[l]) {
                fa->mean_sn[l] = NAN;
                continue;
            }
            fa->mean_sn[l] /= fa->runs[l];
            lo = fmin(lo, fa->mean_sn[l]);
            if (fa->mean_sn[l] > hi) {
                hi = fa->mean_sn[l];
                fa->best_level = l;
            }
        }
        fa->range = fa->best_level >= 0 ? hi - lo : 0;
        total += fa->range;
        out->order[f] = f;
    }
    /* rank by range, descending; ties keep the factors' order (insertion sort: stable) */
    for (int i = 1; i < p->nfactors; i++) {
        int x = out->order[i], j = i - 1;
        while (j >= 0 && out->factors[out->order[j]].range < out->factors[x].range) {
            out->order[j + 1] = out->order[j];
            j--;
        }
        out->order[j + 1] = x;
    }
    for (int r = 0; r < p->nfactors; r++) {
        sweep_sn_factor *fa = &out->factors[out->order[r]];
        fa->rank = r + 1;
        fa->normalized = total > 0 ? fa->range / total : 0;
    }
    return 0;
}

int sweep_levels_of(const double *v, int n, int stride, double *distinct, int *level_out,
                    int level_stride)
{
    int nd = 0;
    for (int i = 0; i < n; i++) {
        double x = v[(size_t)i * stride];
        int lo = 0, hi = nd;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (distinct[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nd || distinct[lo] != x) {
            memmove(distinct + lo + 1, distinct + lo, sizeof(double) * (size_t)(nd - lo));
            distinct[lo] = x;
            nd++;
        }
    }
    for (int i = 0; i < n; i++) {
        double x = v[(size_t)i * stride];
        int lo = 0, hi = nd - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (distinct[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        level_out[(size_t)i * level_stride] = lo;
    }
    return nd;
}
