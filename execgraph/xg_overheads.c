/*
 * xg_overheads.c — T1–T5 samples from execution graphs and their summary
 * (xg_overheads.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_overheads.h"
#include "execgraph/xg_syncwait.h"

void xg_ov_options_default(xg_ov_options *o)
{
    o->cpu_profiler_us = 2;
    o->gpu_profiler_us = 4;
    o->keep_outliers = 0;
}

const char *xg_ov_type_name(int type)
{
    static const char *const n[] = {"T1", "T2", "T3", "T4", "T5"};
    return type >= 0 && type < XG_NTYPES ? n[type] : "?";
}

int xg_ov_type_parse(const char *s)
{
    for (int i = 0; i < XG_NTYPES; i++)
        if (!strcmp(s, xg_ov_type_name(i)))
            return i;
    return -1;
}

void xg_ov_samples_init(xg_ov_samples *s, const xg_ov_options *o)
{
    memset(s, 0, sizeof *s);
    xg_trace_init(&s->names);
    xg_ov_options_default(&s->opt);
    if (o && o->cpu_profiler_us >= 0)
        s->opt.cpu_profiler_us = o->cpu_profiler_us;
    if (o && o->gpu_profiler_us >= 0)
        s->opt.gpu_profiler_us = o->gpu_profiler_us;
    if (o)
        s->opt.keep_outliers = o->keep_outliers;
}

void xg_ov_samples_free(xg_ov_samples *s)
{
    xg_trace_free(&s->names);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The samples' id of the trace's name id, interned once per graph. */
static int sample_name(xg_ov_samples *s, const xg_trace *t, int name, xg_error *err)
{
    if (s->map[name] < 0) {
        const char *nm = xg_name(t, name);
        s->map[name] = xg_trace_name(&s->names, nm, strlen(nm), err);
    }
    return s->map[name];
}

static int push(xg_ov_samples *s, const xg_trace *t, int type, int name, double v,
                double profiler, xg_error *err)
{
    int id = sample_name(s, t, name, err);
    if (id < 0)
        return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct xg_sample *p = realloc(s->v, cap * sizeof *p);
        if (!p) {
            xg_error_set(err, -1, NULL, "out of memory");
            return -1;
        }
        s->v = p;
        s->cap = cap;
    }
    v -= profiler;
    s->v[s->n++] = (struct xg_sample){.type = type, .name = id, .v = v > 0 ? v : 0};
    return 0;
}

/* The samples of one op. *prev_end is the end of the previous op of the
 * step; *dev_end the latest end of device work launched so far. */
static int op_samples(xg_ov_samples *s, const xg_graph *g, const xg_op *op, double *prev_end,
                      double *dev_end, double sync_wait, xg_error *err)
{
    const xg_trace *t = g->t;
    double cpu = s->opt.cpu_profiler_us, gpu = s->opt.gpu_profiler_us;
    double gap = op->ts - *prev_end;
    /* a wait for other ranks is no overhead (xg_syncwait.h) */
    if (sync_wait <= 0 && push(s, t, XG_T1, op->name, gap > 0 ? gap : 0, cpu, err) < 0)
        return -1;
    if (op->end > *prev_end)
        *prev_end = op->end;
    if (op->nlaunch == 0)
        return push(s, t, XG_T5, op->name, op->end - op->ts, cpu, err);
    const xg_event *last = NULL;
    for (int i = 0; i < op->ncalls; i++) {
        const xg_call *c = &g->calls[op->call_first + i];
        if (!(c->flags & (XG_CALL_LAUNCH | XG_CALL_SYNC)))
            continue;
        const xg_event *e = &t->ev[c->ev];
        if (!last) {
            if (push(s, t, XG_T2, op->name, e->ts - op->ts, cpu, err) < 0)
                return -1;
        } else if (push(s, t, XG_T5, op->name, e->ts - (last->ts + last->dur), cpu, err) < 0) {
            return -1;
        }
        double own_end = -INFINITY;
        for (int d = 0; d < c->ndev; d++) {
            const xg_event *k = &t->ev[g->dev[c->dev_first + d]];
            if (k->ts + k->dur > own_end)
                own_end = k->ts + k->dur;
        }
        double t4 = e->dur;
        if (c->flags & XG_CALL_SYNC) {
            double awaited = c->ndev > 0 ? own_end : *dev_end;
            double from = awaited > e->ts ? awaited : e->ts;
            t4 = e->ts + e->dur - from;
        }
        if (push(s, t, XG_T4, e->name, t4 > 0 ? t4 : 0, c->ndev > 0 ? gpu : cpu, err) < 0)
            return -1;
        if (own_end > *dev_end)
            *dev_end = own_end;
        last = e;
    }
    return push(s, t, XG_T3, op->name, op->end - (last->ts + last->dur), cpu, err);
}

int xg_ov_collect(xg_ov_samples *s, const xg_graph *g, xg_error *err)
{
    s->map = malloc(((size_t)g->t->nnames + 1) * sizeof *s->map);
    if (!s->map) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    for (int i = 0; i < g->t->nnames; i++)
        s->map[i] = -1;
    double *waits = xg_sync_waits(g, NULL);
    if (!waits) {
        free(s->map);
        s->map = NULL;
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int st = 0; st < g->nsteps && rc == 0; st++) {
        const xg_step *step = &g->steps[st];
        double prev_end = step->ts, dev_end = -INFINITY;
        for (int i = 0; i < step->nops && rc == 0; i++)
            rc = op_samples(s, g, &g->ops[step->op_first + i], &prev_end, &dev_end,
                            waits[step->op_first + i], err);
    }
    free(waits);
    free(s->map);
    s->map = NULL;
    if (rc < 0)
        return -1;
    s->traces++;
    return 0;
}

int xg_ov_host_steps(const xg_graph *g, const xg_ov_options *o, double *host, xg_error *err)
{
    xg_ov_samples s;
    xg_ov_samples_init(&s, o);
    s.map = malloc(((size_t)g->t->nnames + 1) * sizeof *s.map);
    double *waits = s.map ? xg_sync_waits(g, NULL) : NULL;
    int rc = waits ? 0 : -1;
    if (rc < 0)
        xg_error_set(err, -1, NULL, "out of memory");
    for (int i = 0; i < g->t->nnames && s.map; i++)
        s.map[i] = -1;
    for (int st = 0; st < g->nsteps && rc == 0; st++) {
        const xg_step *step = &g->steps[st];
        double prev_end = step->ts, dev_end = -INFINITY, sum = 0;
        s.n = 0;
        for (int i = 0; i < step->nops && rc == 0; i++)
            rc = op_samples(&s, g, &g->ops[step->op_first + i], &prev_end, &dev_end,
                            waits[step->op_first + i], err);
        for (size_t i = 0; i < s.n; i++)
            sum += s.v[i].v;
        host[st] = sum * 1e-6;
    }
    free(waits);
    free(s.map);
    s.map = NULL;
    xg_ov_samples_free(&s);
    return rc;
}

/* ---- summary ------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Quantile q of sorted v[0..n) by linear interpolation (numpy's default). */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] + f * (v[i + 1] - v[i]) : v[n - 1];
}

/* Fills st's statistics from sorted samples v[0..n), seconds from us. */
static void stats(const double *v, size_t n, xg_ovstat *st)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = n ? sum / (double)n : 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    st->mean = mean * 1e-6;
    st->median = n ? quantile(v, n, 0.5) * 1e-6 : 0;
    st->std = n > 1 ? sqrt(ss / (double)(n - 1)) * 1e-6 : 0;
    st->count = (long long)n;
}

static int cmp_stat(const void *a, const void *b)
{
    const xg_ovstat *x = a, *y = b;
    if (x->type != y->type)
        return x->type - y->type;
    if (!x->name || !y->name)
        return (x->name != NULL) - (y->name != NULL);
    return strcmp(x->name, y->name);
}

void xg_ov_sort(xg_overheads *ov)
{
    if (ov->n > 1)
        qsort(ov->s, ov->n, sizeof *ov->s, cmp_stat);
}

int xg_ov_add(xg_overheads *ov, const xg_ovstat *st)
{
    xg_ovstat *p = realloc(ov->s, (ov->n + 1) * sizeof *p);
    if (!p)
        return -1;
    ov->s = p;
    ov->s[ov->n] = *st;
    ov->s[ov->n].name = NULL;
    if (st->name && !(ov->s[ov->n].name = strdup(st->name)))
        return -1;
    ov->n++;
    return 0;
}

void xg_overheads_free(xg_overheads *ov)
{
    for (size_t i = 0; i < ov->n; i++)
        free(ov->s[i].name);
    free(ov->s);
    memset(ov, 0, sizeof *ov);
}

/* The samples' values grouped by (type, name), each group a slice of one
 * array (a counting sort: 8 bytes a sample, where a sorted copy of the
 * samples took 16 and the sort as much again as scratch). start[g] is where
 * group g = type * nnames + name begins; start[ngroups] == s->n. */
static int group_values(const xg_ov_samples *s, size_t nnames, size_t **start_out,
                        double **val_out, size_t ntype[XG_NTYPES])
{
    size_t ngroups = (size_t)XG_NTYPES * nnames;
    size_t *start = calloc(ngroups + 1, sizeof *start);
    double *val = malloc(s->n * sizeof *val);
    if (!start || !val) {
        free(start);
        free(val);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        start[(size_t)s->v[i].type * nnames + (size_t)s->v[i].name + 1]++;
        ntype[s->v[i].type]++;
    }
    for (size_t g = 0; g < ngroups; g++)
        start[g + 1] += start[g];
    for (size_t i = 0; i < s->n; i++)
        val[start[(size_t)s->v[i].type * nnames + (size_t)s->v[i].name]++] = s->v[i].v;
    /* each start[g] now holds the end of g: shift back to the beginnings */
    for (size_t g = ngroups; g > 0; g--)
        start[g] = start[g - 1];
    start[0] = 0;
    *start_out = start;
    *val_out = val;
    return 0;
}

/* The statistics of one group's values v[0..n) (sorted here), its kept
 * values appended to the type's bytype[..ntype); 0, or -1 out of memory. */
static int summarise_group(const xg_ov_samples *s, int type, int name, double *v, size_t n,
                           double *bytype, size_t *ntype, long long *dropped, xg_overheads *out)
{
    qsort(v, n, sizeof *v, cmp_double);
    double lo = -INFINITY, hi = INFINITY;
    if (n >= 4 && !s->opt.keep_outliers) {
        double q1 = quantile(v, n, 0.25), q3 = quantile(v, n, 0.75);
        lo = q1 - 1.5 * (q3 - q1);
        hi = q3 + 1.5 * (q3 - q1);
    }
    double *kept = bytype + *ntype;
    size_t k = 0;
    for (size_t m = 0; m < n; m++)
        if (v[m] >= lo && v[m] <= hi)
            kept[k++] = v[m];
    xg_ovstat st = {.type = type, .name = (char *)xg_name(&s->names, name),
                    .dropped = (long long)(n - k), .fenced = 1, .lo_fence = lo * 1e-6,
                    .hi_fence = hi * 1e-6};
    stats(kept, k, &st);
    *ntype += k;
    *dropped += (long long)(n - k);
    return xg_ov_add(out, &st);
}

static int summarise(const xg_ov_samples *s, xg_ov_samples *release, xg_overheads *out,
                     xg_error *err);

int xg_ov_summarise(const xg_ov_samples *s, xg_overheads *out, xg_error *err)
{
    return summarise(s, NULL, out, err);
}

int xg_ov_summarise_release(xg_ov_samples *s, xg_overheads *out, xg_error *err)
{
    return summarise(s, s, out, err);
}

/* release: the samples whose values go once grouped (NULL: none). */
static int summarise(const xg_ov_samples *s, xg_ov_samples *release, xg_overheads *out,
                     xg_error *err)
{
    memset(out, 0, sizeof *out);
    out->cpu_profiler_us = s->opt.cpu_profiler_us;
    out->gpu_profiler_us = s->opt.gpu_profiler_us;
    out->keep_outliers = s->opt.keep_outliers;
    out->traces = s->traces;
    if (s->n == 0) {
        xg_error_set(err, -1, NULL, "no top-level operators in the trace(s): no overheads to "
                                    "measure");
        return -1;
    }
    size_t nnames = s->names.nnames > 0 ? (size_t)s->names.nnames : 1;
    size_t *start = NULL;
    double *val = NULL;
    double *bytype[XG_NTYPES] = {0};
    size_t total[XG_NTYPES] = {0}, ntype[XG_NTYPES] = {0};
    long long droptype[XG_NTYPES] = {0};
    int rc = -1;
    if (group_values(s, nnames, &start, &val, total) < 0)
        goto done;
    if (release) {
        free(release->v);
        release->v = NULL;
        release->n = release->cap = 0;
    }
    for (int ty = 0; ty < XG_NTYPES; ty++)
        if (!(bytype[ty] = malloc((total[ty] ? total[ty] : 1) * sizeof(double))))
            goto done;
    for (int ty = 0; ty < XG_NTYPES; ty++)
        for (size_t nm = 0; nm < nnames; nm++) {
            size_t g = (size_t)ty * nnames + nm, n = start[g + 1] - start[g];
            if (n && summarise_group(s, ty, (int)nm, val + start[g], n, bytype[ty], &ntype[ty],
                                     &droptype[ty], out) < 0)
                goto done;
        }
    free(val); /* the per-type statistics below need only the kept values */
    val = NULL;
    for (int ty = 0; ty < XG_NTYPES; ty++) {
        if (ntype[ty] == 0)
            continue;
        qsort(bytype[ty], ntype[ty], sizeof(double), cmp_double);
        xg_ovstat st = {.type = ty, .name = NULL, .dropped = droptype[ty]};
        stats(bytype[ty], ntype[ty], &st);
        if (xg_ov_add(out, &st) < 0)
            goto done;
    }
    xg_ov_sort(out);
    rc = 0;
done:
    if (rc < 0) {
        xg_overheads_free(out);
        xg_error_set(err, -1, NULL, "out of memory");
    }
    for (int ty = 0; ty < XG_NTYPES; ty++)
        free(bytype[ty]);
    free(start);
    free(val);
    return rc;
}

/* Median of v[0..n) (n > 0; sorted here): the middle one, or the mean of
 * the middle two. */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The entries of sets[0..n) with (type, name) of ref, each set's found once
 * (the sets are sorted): into st, their count returned. */
static int pool_entry(const xg_overheads *sets, int n, const xg_ovstat *ref, double *buf,
                      xg_ovstat *st)
{
    double *mean = buf, *med = buf + n, *sd = buf + 2 * n, *lo = buf + 3 * n, *hi = buf + 4 * n;
    int m = 0, fenced = 1;
    *st = (xg_ovstat){.type = ref->type, .name = ref->name};
    for (int j = 0; j < n; j++) {
        const xg_ovstat *e = bsearch(ref, sets[j].s, sets[j].n, sizeof *sets[j].s, cmp_stat);
        if (!e)
            continue;
        mean[m] = e->mean;
        med[m] = e->median;
        sd[m] = e->std;
        lo[m] = e->lo_fence;
        hi[m] = e->hi_fence;
        fenced &= e->fenced;
        st->count += e->count;
        st->dropped += e->dropped;
        m++;
    }
    st->mean = median_of(mean, (size_t)m);
    st->median = median_of(med, (size_t)m);
    st->std = median_of(sd, (size_t)m);
    st->fenced = fenced;
    st->lo_fence = fenced ? median_of(lo, (size_t)m) : 0;
    st->hi_fence = fenced ? median_of(hi, (size_t)m) : 0;
    return m;
}

int xg_ov_pool(const xg_overheads *sets, int n, xg_overheads *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    if (n < 1) {
        xg_error_set(err, -1, NULL, "no overhead sets to pool");
        return -1;
    }
    out->cpu_profiler_us = sets[0].cpu_profiler_us;
    out->gpu_profiler_us = sets[0].gpu_profiler_us;
    out->keep_outliers = sets[0].keep_outliers;
    double *buf = malloc(5 * (size_t)n * sizeof *buf);
    if (!buf)
        goto oom;
    for (int j = 0; j < n; j++) {
        out->traces += sets[j].traces;
        for (size_t i = 0; i < sets[j].n; i++) {
            const xg_ovstat *e = &sets[j].s[i];
            int seen = 0; /* pooled from an earlier set already */
            for (int q = 0; q < j && !seen; q++)
                seen = bsearch(e, sets[q].s, sets[q].n, sizeof *e, cmp_stat) != NULL;
            xg_ovstat st;
            if (!seen && pool_entry(sets + j, n - j, e, buf, &st) > 0 && xg_ov_add(out, &st) < 0)
                goto oom;
        }
    }
    free(buf);
    xg_ov_sort(out);
    return 0;
oom:
    free(buf);
    xg_overheads_free(out);
    xg_error_set(err, -1, NULL, "out of memory");
    return -1;
}

int xg_ov_scaled(const xg_overheads *ov, double f, xg_overheads *out)
{
    memset(out, 0, sizeof *out);
    out->cpu_profiler_us = ov->cpu_profiler_us;
    out->gpu_profiler_us = ov->gpu_profiler_us;
    out->keep_outliers = ov->keep_outliers;
    out->traces = ov->traces;
    for (size_t i = 0; i < ov->n; i++) {
        xg_ovstat st = ov->s[i];
        st.mean *= f;
        st.median *= f;
        st.std *= f;
        if (xg_ov_add(out, &st) < 0) {
            xg_overheads_free(out);
            return -1;
        }
    }
    return 0;
}

double xg_ov_lookup(const xg_overheads *ov, int type, const char *name, int *found)
{
    xg_ovstat key = {.type = type, .name = (char *)name};
    if (!ov->n) { /* an empty set (s is NULL, which bsearch must not get) */
        if (found)
            *found = 0;
        return 0;
    }
    const xg_ovstat *hit = name ? bsearch(&key, ov->s, ov->n, sizeof *ov->s, cmp_stat) : NULL;
    if (hit) {
        if (found)
            *found = 2;
        return hit->mean;
    }
    key.name = NULL;
    hit = bsearch(&key, ov->s, ov->n, sizeof *ov->s, cmp_stat);
    if (found)
        *found = hit ? 1 : 0;
    return hit ? hit->mean : 0;
}

double xg_ov_dropped(const xg_overheads *ov, const xg_graph *g, int step, double *by_type)
{
    for (int ty = 0; ty < XG_NTYPES && by_type; ty++)
        by_type[ty] = 0;
    int fenced = 0;
    for (size_t i = 0; i < ov->n && !fenced; i++)
        fenced = ov->s[i].fenced;
    if (!fenced || ov->keep_outliers || step < 0 || step >= g->nsteps)
        return NAN;
    /* the step's samples taken again, as xg_ov_collect took them */
    xg_ov_options o = {ov->cpu_profiler_us, ov->gpu_profiler_us, 0};
    xg_ov_samples s;
    xg_ov_samples_init(&s, &o);
    s.map = malloc(((size_t)g->t->nnames + 1) * sizeof *s.map);
    double *waits = s.map ? xg_sync_waits(g, NULL) : NULL;
    xg_error err;
    int rc = waits ? 0 : -1;
    for (int i = 0; i < g->t->nnames && s.map; i++)
        s.map[i] = -1;
    const xg_step *st = &g->steps[step];
    double prev_end = st->ts, dev_end = -INFINITY, sum[XG_NTYPES] = {0}, all = 0;
    for (int i = 0; i < st->nops && rc == 0; i++)
        rc = op_samples(&s, g, &g->ops[st->op_first + i], &prev_end, &dev_end,
                        waits[st->op_first + i], &err);
    for (size_t i = 0; i < s.n && rc == 0; i++) {
        xg_ovstat key = {.type = s.v[i].type, .name = (char *)xg_name(&s.names, s.v[i].name)};
        const xg_ovstat *hit = bsearch(&key, ov->s, ov->n, sizeof *ov->s, cmp_stat);
        double v = s.v[i].v * 1e-6;
        if (hit && hit->fenced && (v > hit->hi_fence || v < hit->lo_fence))
            sum[s.v[i].type] += v;
    }
    free(waits);
    free(s.map);
    s.map = NULL;
    xg_ov_samples_free(&s);
    if (rc < 0)
        return NAN;
    for (int ty = 0; ty < XG_NTYPES; ty++) {
        all += sum[ty];
        if (by_type)
            by_type[ty] = sum[ty];
    }
    return all;
}
