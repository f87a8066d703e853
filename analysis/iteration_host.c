/*
 * iteration_host.c — the host side of a step at another size
 * (iteration_host.h): the overheads pooled over the traces, the spread of
 * the host's time between them, its share of the step, Kruskal–Wallis.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_host.h"

double iteration_host_steps_with(const xg_graph *g, const xg_cp_options *co, double *per)
{
    xg_cp_options o = *co;
    o.top = 1;
    xg_cp_result r;
    xg_error err;
    if (xg_critpath(g, &o, &r, &err) < 0)
        return NAN;
    double s = 0;
    for (int i = 0; i < r.nsteps; i++) {
        s += r.steps[i].predicted;
        if (per)
            per[i] = r.steps[i].predicted;
    }
    double m = r.nsteps ? s / r.nsteps : NAN;
    xg_cp_result_free(&r);
    return m;
}

/* Algorithm 1 on g with ov and dev_us alone. */
static double steps_of(const xg_graph *g, const xg_overheads *ov, const double *dev_us,
                       double *per)
{
    xg_cp_options co = {.ov = ov, .dev_us = dev_us, .launch_gap_us = -1};
    return iteration_host_steps_with(g, &co, per);
}

double iteration_host_step(const xg_graph *g, const xg_overheads *ov, const double *dev_us)
{
    return steps_of(g, ov, dev_us, NULL);
}

double iteration_host_device_steps(const xg_graph *g, const xg_overheads *ov,
                                   const double *dev_us, double *per)
{
    xg_overheads zero;
    if (xg_ov_scaled(ov, 0, &zero) < 0)
        return NAN;
    double m = steps_of(g, &zero, dev_us, per);
    xg_overheads_free(&zero);
    return m;
}

int iteration_host_own(const xg_graph *g, const xg_ov_options *prof, xg_overheads *out,
                       xg_error *err)
{
    xg_ov_samples s;
    xg_ov_samples_init(&s, prof);
    int rc = xg_ov_collect(&s, g, err);
    if (rc == 0)
        rc = xg_ov_summarise_release(&s, out, err);
    xg_ov_samples_free(&s);
    return rc;
}

int iteration_host_pool(const xg_graph *const *g, int n, const xg_ov_options *prof,
                        xg_overheads *out, xg_error *err)
{
    xg_overheads *own = calloc((size_t)(n > 0 ? n : 1), sizeof *own);
    if (!own) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    int rc = 0, done = 0;
    for (; done < n && rc == 0; done++)
        rc = iteration_host_own(g[done], prof, &own[done], err);
    if (rc == 0)
        rc = xg_ov_pool(own, n, out, err);
    for (int j = 0; j < done; j++)
        xg_overheads_free(&own[j]);
    free(own);
    return rc;
}

typedef struct ranked {
    double v;
    int group;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double iteration_host_kruskal(const double *const *v, const int *ns, int k, double *stat)
{
    *stat = NAN;
    int N = 0;
    for (int j = 0; j < k; j++) {
        if (ns[j] < 1)
            return NAN;
        N += ns[j];
    }
    if (k < 2 || N <= k)
        return NAN;
    ranked *r = malloc((size_t)N * sizeof *r);
    double *rs = calloc((size_t)k, sizeof *rs);
    if (!r || !rs) {
        free(r);
        free(rs);
        return NAN;
    }
    int m = 0;
    for (int j = 0; j < k; j++)
        for (int i = 0; i < ns[j]; i++)
            r[m++] = (ranked){v[j][i], j};
    qsort(r, (size_t)N, sizeof *r, cmp_ranked);
    double ties = 0;
    for (int i = 0; i < N;) {
        int e = i;
        while (e + 1 < N && r[e + 1].v == r[i].v)
            e++;
        double rank = (i + e) / 2.0 + 1, t = e - i + 1;
        ties += t * t * t - t;
        for (int q = i; q <= e; q++)
            rs[r[q].group] += rank;
        i = e + 1;
    }
    double h = 0, dn = N;
    for (int j = 0; j < k; j++)
        h += rs[j] * rs[j] / ns[j];
    h = 12 / (dn * (dn + 1)) * h - 3 * (dn + 1);
    double corr = 1 - ties / (dn * dn * dn - dn);
    free(r);
    free(rs);
    if (!(corr > 0))
        return NAN; /* every value the same: nothing to rank */
    *stat = h / corr;
    return gsl_cdf_chisq_Q(*stat > 0 ? *stat : 0, k - 1);
}

void iteration_host_spread(const double *const *h, const int *ns, int k, iteration_host *out)
{
    memset(out, 0, sizeof *out);
    out->p = NAN;
    double *med = malloc((size_t)(k > 0 ? k : 1) * sizeof *med);
    double *tmp = NULL;
    int maxn = 0, m = 0, steps2 = 1;
    for (int j = 0; j < k; j++) {
        maxn = ns[j] > maxn ? ns[j] : maxn;
        steps2 &= ns[j] >= 2;
    }
    if (!med || !(tmp = malloc((size_t)(maxn > 0 ? maxn : 1) * sizeof *tmp))) {
        free(med);
        return;
    }
    for (int j = 0; j < k; j++) {
        int c = 0;
        for (int i = 0; i < ns[j]; i++)
            if (h[j][i] > 0)
                tmp[c++] = h[j][i];
        if (c == 0)
            continue;
        qsort(tmp, (size_t)c, sizeof *tmp, cmp_double);
        med[m++] = c % 2 ? tmp[c / 2] : (tmp[c / 2 - 1] + tmp[c / 2]) / 2;
    }
    out->k = m;
    if (m > 0) {
        double mean = 0, ss = 0;
        for (int j = 0; j < m; j++)
            mean += log(med[j]) / m;
        for (int j = 0; j < m; j++)
            ss += (log(med[j]) - mean) * (log(med[j]) - mean);
        out->s_H = m >= 2 ? sqrt(ss / (m - 1)) : 0;
        qsort(med, (size_t)m, sizeof *med, cmp_double);
        out->centre = m % 2 ? med[m / 2] : (med[m / 2 - 1] + med[m / 2]) / 2;
    }
    double stat;
    if (steps2 && m == k)
        out->p = iteration_host_kruskal(h, ns, k, &stat);
    free(med);
    free(tmp);
}

/* The share *e of the step of g carried by the host (iteration_host.h;
 * NAN when Algorithm 1 fails). 0, or -1 out of memory. */
static int host_share(const xg_graph *g, const xg_overheads *ov, const double *dev_us, double d,
                      double *e)
{
    xg_overheads up, down;
    if (xg_ov_scaled(ov, exp(d), &up) < 0)
        return -1;
    if (xg_ov_scaled(ov, exp(-d), &down) < 0) {
        xg_overheads_free(&up);
        return -1;
    }
    double pu = iteration_host_step(g, &up, dev_us), pd = iteration_host_step(g, &down, dev_us);
    xg_overheads_free(&up);
    xg_overheads_free(&down);
    *e = pu > 0 && pd > 0 ? (log(pu) - log(pd)) / (2 * d) : NAN;
    return 0;
}

int iteration_host_measure(const xg_graph *const *g, int n, const xg_ov_options *prof,
                           const xg_overheads *ov, const double *dev_us, iteration_host *out,
                           xg_error *err)
{
    memset(out, 0, sizeof *out);
    out->p = NAN;
    double **h = calloc((size_t)(n > 0 ? n : 1), sizeof *h);
    int *ns = calloc((size_t)(n > 0 ? n : 1), sizeof *ns);
    int rc = -1, j = 0;
    if (!h || !ns)
        goto oom;
    for (; j < n; j++) {
        ns[j] = g[j]->nsteps;
        if (!(h[j] = malloc((size_t)(ns[j] > 0 ? ns[j] : 1) * sizeof **h)))
            goto oom;
        if (xg_ov_host_steps(g[j], prof, h[j], err) < 0) {
            j++;
            goto done;
        }
    }
    iteration_host_spread((const double *const *)h, ns, n, out);
    double e;
    if (host_share(g[0], ov, dev_us, out->s_H > 0 ? out->s_H : 0.1, &e) < 0)
        goto oom;
    out->share = isfinite(e) ? fmax(0, e) : 0;
    out->s_host = out->share * out->s_H;
    rc = 0;
    goto done;
oom:
    xg_error_set(err, -1, NULL, "out of memory");
done:
    for (int q = 0; q < j && h; q++)
        free(h[q]);
    free(h);
    free(ns);
    return rc;
}
