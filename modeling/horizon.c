/*
 * horizon.c — the extrapolation horizon and what a prediction may not do on
 * the way there.
 *
 * A forecast is asked for somewhere between the measured points and some
 * multiple of the largest measured coordinate. perfcast checks a function on
 * a fixed path from the data to PMNF_HORIZON (8) times the largest measured
 * value of every parameter: per parameter, PMNF_PATH_IN points spread
 * (geometrically when positive) over its measured range and PMNF_PATH_OUT
 * points beyond it up to the horizon, the other parameters at their largest
 * measured values; with several parameters also PMNF_PATH_OUT points where
 * all of them grow together. Where every measured value is positive (run
 * times, counts, bytes), a prediction on that path is
 *   - impossible when it is <= 0 (PMNF_PATH_NONPOSITIVE), or when along a
 *     parameter the data grow with the prediction beyond the data falls
 *     below half the smallest measurement (PMNF_PATH_COLLAPSE);
 *   - below its floor when it falls below half the smallest measurement
 *     anywhere (PMNF_PATH_FLOOR): for data that fall with a parameter a
 *     collapse only a model fitting the measurements within their noise
 *     supports (a run time keeps a floor of serial and communication work);
 *   - against the measured direction when along a parameter the data grow
 *     (fall) with, the prediction beyond the data falls (rises)
 *     (PMNF_PATH_REVERSED).
 * The direction of parameter p is the sign of the difference between the
 * mean value at its largest and at its smallest measured coordinate.
 * The robust modeler prefers hypotheses without any of the three; the audit
 * bench counts the impossible ones.
 */
#include <math.h>
#include <string.h>

#include "modeling/modeler.h"

void pmnf_path_init(pmnf_path *P, const pmnf_data *d)
{
    memset(P, 0, sizeof *P);
    int np = d->nparams, n = d->npoints;
    P->nparams = np;
    P->all_positive = n > 0;
    P->ymin = INFINITY;
    for (int i = 0; i < n; i++) {
        P->all_positive &= d->values[i] > 0;
        if (d->values[i] < P->ymin)
            P->ymin = d->values[i];
    }
    for (int p = 0; p < np; p++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            double x = d->coords[(size_t)i * np + p];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        double slo = 0, shi = 0;
        int nlo = 0, nhi = 0;
        for (int i = 0; i < n; i++) {
            double x = d->coords[(size_t)i * np + p];
            if (x == lo) {
                slo += d->values[i];
                nlo++;
            }
            if (x == hi) {
                shi += d->values[i];
                nhi++;
            }
        }
        P->lo[p] = lo;
        P->hi[p] = hi;
        double mlo = nlo ? slo / nlo : 0, mhi = nhi ? shi / nhi : 0;
        P->dir[p] = hi > lo ? (mhi > mlo) - (mhi < mlo) : 0;
    }
}

double pmnf_path_x(const pmnf_path *P, int p, int k)
{
    double lo = P->lo[p], hi = P->hi[p];
    if (k < PMNF_PATH_IN) {
        double t = (double)k / (PMNF_PATH_IN - 1);
        if (k == PMNF_PATH_IN - 1)
            return hi;
        return lo > 0 ? lo * pow(hi / lo, t) : lo + (hi - lo) * t;
    }
    int j = k - PMNF_PATH_IN + 1;
    if (!(hi > 0))
        return hi;
    return hi * pow(PMNF_HORIZON, (double)j / PMNF_PATH_OUT);
}

int pmnf_path_npoints(const pmnf_path *P)
{
    return P->nparams * PMNF_PATH_LINE + (P->nparams > 1 ? PMNF_PATH_OUT : 0);
}

void pmnf_path_point(const pmnf_path *P, int i, double *point)
{
    int np = P->nparams;
    if (i < np * PMNF_PATH_LINE) {
        int p = i / PMNF_PATH_LINE, k = i % PMNF_PATH_LINE;
        for (int q = 0; q < np; q++)
            point[q] = q == p ? pmnf_path_x(P, p, k) : P->hi[q];
        return;
    }
    int j = i - np * PMNF_PATH_LINE;
    for (int q = 0; q < np; q++)
        point[q] = pmnf_path_x(P, q, PMNF_PATH_IN + j);
}

unsigned pmnf_path_judge(const pmnf_path *P, const double *v)
{
    if (!P->all_positive)
        return 0;
    unsigned flags = 0;
    int total = pmnf_path_npoints(P);
    for (int i = 0; i < total; i++) {
        if (!(v[i] > 0))
            flags |= PMNF_PATH_NONPOSITIVE;
        if (!(v[i] >= 0.5 * P->ymin))
            flags |= PMNF_PATH_FLOOR;
    }
    for (int p = 0; p < P->nparams; p++) {
        const double *line = v + (size_t)p * PMNF_PATH_LINE;
        for (int k = PMNF_PATH_IN; k < PMNF_PATH_LINE; k++) {
            double prev = line[k - 1], tol = 1e-9 * fabs(prev);
            if (P->dir[p] > 0 && line[k] < prev - tol)
                flags |= PMNF_PATH_REVERSED;
            if (P->dir[p] < 0 && line[k] > prev + tol)
                flags |= PMNF_PATH_REVERSED;
            if (P->dir[p] > 0 && line[k] < 0.5 * P->ymin)
                flags |= PMNF_PATH_COLLAPSE;
        }
    }
    return flags;
}

unsigned pmnf_path_check(const pmnf_path *P, const pmnf_model *m)
{
    double v[PMNF_PATH_MAX], point[PMNF_MAX_PARAMS];
    int total = pmnf_path_npoints(P);
    for (int i = 0; i < total; i++) {
        pmnf_path_point(P, i, point);
        v[i] = pmnf_model_eval(m, point);
    }
    return pmnf_path_judge(P, v);
}
