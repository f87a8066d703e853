/*
 * xg_opmodel.c — device time by operator across traces at several sizes
 * (xg_opmodel.h): attribution of device events to their launching
 * operators, keys matched across traces, shapes extrapolated, work from
 * shapes, weighted fits per instance, family slopes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_opmodel.h"

#define OPM_MAX_IN 32
#define OPM_MAX_RANK 8

/* An operator instance (or a kernel launched outside every operator) of one
 * trace: its key, its representative operator event, its device time summed
 * over the steps it appears in. */
typedef struct tinst {
    int name, is_op, occ;
    int op_ev;       /* -1 for a kernel key */
    int steps, last_step;
    double sum_us;
} tinst;

typedef struct tdata {
    const xg_graph *g;
    tinst *in;
    int n, cap;
    long long *hkey;   /* open addressing: key, -1 empty */
    int *hval;
    size_t hcap;
    int *dev_inst;     /* reference only: per event index, its instance, -1 */
} tdata;

static long long key_of(int name, int is_op, int occ)
{
    return ((long long)name << 32) | ((long long)occ << 1) | is_op;
}

static size_t hash_slot(long long k, size_t cap)
{
    unsigned long long h = (unsigned long long)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static int td_find(const tdata *d, int name, int is_op, int occ)
{
    if (!d->hcap || name < 0)
        return -1;
    long long k = key_of(name, is_op, occ);
    for (size_t s = hash_slot(k, d->hcap);; s = (s + 1) & (d->hcap - 1)) {
        if (d->hkey[s] == -1)
            return -1;
        if (d->hkey[s] == k)
            return d->hval[s];
    }
}

static int td_rehash(tdata *d, size_t cap)
{
    long long *k = malloc(cap * sizeof *k);
    int *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        k[i] = -1;
    for (int i = 0; i < d->n; i++) {
        long long key = key_of(d->in[i].name, d->in[i].is_op, d->in[i].occ);
        size_t s = hash_slot(key, cap);
        while (k[s] != -1)
            s = (s + 1) & (cap - 1);
        k[s] = key;
        v[s] = i;
    }
    free(d->hkey);
    free(d->hval);
    d->hkey = k;
    d->hval = v;
    d->hcap = cap;
    return 0;
}

/* The instance of a key, added when new. -1: out of memory. */
static int td_get(tdata *d, int name, int is_op, int occ, int op_ev)
{
    int i = td_find(d, name, is_op, occ);
    if (i >= 0)
        return i;
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 256;
        tinst *p = realloc(d->in, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        d->in = p;
        d->cap = cap;
    }
    d->in[d->n] = (tinst){.name = name, .is_op = is_op, .occ = occ, .op_ev = op_ev,
                          .last_step = -1};
    d->n++;
    if ((size_t)d->n * 2 > d->hcap && td_rehash(d, d->hcap ? d->hcap * 2 : 1024) < 0)
        return -1;
    if ((size_t)d->n * 2 <= d->hcap) {
        long long k = key_of(name, is_op, occ);
        size_t s = hash_slot(k, d->hcap);
        while (d->hkey[s] != -1 && d->hkey[s] != k)
            s = (s + 1) & (d->hcap - 1);
        d->hkey[s] = k;
        d->hval[s] = d->n - 1;
    }
    return d->n - 1;
}

static void td_free(tdata *d)
{
    free(d->in);
    free(d->hkey);
    free(d->hval);
    free(d->dev_inst);
}

/* ---- attribution: the innermost operator around each runtime call ------------------ */

typedef struct nest {
    long long tid;
    double ts, dur;
    int is_rt, ev;
} nest;

static int cmp_nest(const void *a, const void *b)
{
    const nest *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->is_rt != y->is_rt)
        return x->is_rt - y->is_rt;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return x->ev - y->ev;
}

/* owner[ev] for runtime events: the innermost operator containing it on its
 * thread (operators nest within a thread), else -1. owner has t->n entries. */
static int innermost(const xg_trace *t, int *owner)
{
    nest *v = malloc((t->n ? t->n : 1) * sizeof *v);
    int *stack = malloc((t->n ? t->n : 1) * sizeof *stack);
    if (!v || !stack) {
        free(v);
        free(stack);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        const xg_event *e = &t->ev[i];
        owner[i] = -1;
        if (e->kind == XG_OP || e->kind == XG_RUNTIME)
            v[m++] = (nest){e->tid, e->ts, e->dur, e->kind == XG_RUNTIME, (int)i};
    }
    qsort(v, m, sizeof *v, cmp_nest);
    int top = 0;
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && v[i].tid != v[i - 1].tid)
            top = 0;
        while (top > 0 && v[stack[top - 1]].ts + v[stack[top - 1]].dur < v[i].ts)
            top--;
        if (!v[i].is_rt)
            stack[top++] = (int)i;
        else
            owner[v[i].ev] = top > 0 ? v[stack[top - 1]].ev : -1;
    }
    free(v);
    free(stack);
    return 0;
}

/* Instances of every step of d->g. 0 or -1 (out of memory). */
static int collect(tdata *d, int want_dev)
{
    const xg_graph *g = d->g;
    const xg_trace *t = g->t;
    size_t nn = t->nnames ? (size_t)t->nnames : 1;
    int *owner = malloc((t->n ? t->n : 1) * sizeof *owner);
    int *inst_of = malloc((t->n ? t->n : 1) * sizeof *inst_of);
    int *cnt_op = calloc(nn, sizeof *cnt_op), *cnt_k = calloc(nn, sizeof *cnt_k);
    int rc = -1;
    if (!owner || !inst_of || !cnt_op || !cnt_k || innermost(t, owner) < 0)
        goto done;
    if (want_dev && !(d->dev_inst = malloc((t->n ? t->n : 1) * sizeof *d->dev_inst)))
        goto done;
    for (size_t i = 0; i < t->n; i++) {
        inst_of[i] = -1;
        if (want_dev)
            d->dev_inst[i] = -1;
    }
    for (int s = 0; s < g->nsteps; s++) {
        memset(cnt_op, 0, nn * sizeof *cnt_op);
        memset(cnt_k, 0, nn * sizeof *cnt_k);
        const xg_step *st = &g->steps[s];
        for (int o = 0; o < st->nops; o++) {
            const xg_op *op = &g->ops[st->op_first + o];
            for (int c = 0; c < op->ncalls; c++) {
                const xg_call *cl = &g->calls[op->call_first + c];
                int own = owner[cl->ev];
                for (int k = 0; k < cl->ndev; k++) {
                    int ev = g->dev[cl->dev_first + k];
                    int i;
                    if (own >= 0) {
                        if (inst_of[own] < 0) {
                            int nm = t->ev[own].name;
                            inst_of[own] = td_get(d, nm, 1, cnt_op[nm]++, own);
                            if (inst_of[own] < 0)
                                goto done;
                        }
                        i = inst_of[own];
                    } else {
                        int nm = t->ev[ev].name;
                        if ((i = td_get(d, nm, 0, cnt_k[nm]++, -1)) < 0)
                            goto done;
                    }
                    tinst *in = &d->in[i];
                    in->sum_us += t->ev[ev].dur;
                    if (in->last_step != s) {
                        in->last_step = s;
                        in->steps++;
                    }
                    if (want_dev)
                        d->dev_inst[ev] = i;
                }
            }
        }
    }
    rc = 0;
done:
    free(owner);
    free(inst_of);
    free(cnt_op);
    free(cnt_k);
    return rc;
}

/* ---- shapes and work ----------------------------------------------------------------- */

typedef struct shp {
    int nin;
    int rank[OPM_MAX_IN], elem[OPM_MAX_IN];
    double dim[OPM_MAX_IN][OPM_MAX_RANK];
} shp;

/* The shapes of operator event ev; 0, or -1 without (usable) shapes. */
static int shapes_of(const xg_trace *t, int ev, shp *s)
{
    const xg_info *inf = ev >= 0 ? xg_trace_info(t, ev) : NULL;
    if (!inf || inf->nin <= 0)
        return -1;
    s->nin = inf->nin < OPM_MAX_IN ? inf->nin : OPM_MAX_IN;
    for (int i = 0; i < s->nin; i++) {
        const xg_input *in = &t->inputs[inf->in_first + i];
        s->rank[i] = in->rank <= OPM_MAX_RANK ? in->rank : -1;
        s->elem[i] = in->elem;
        for (int k = 0; k < s->rank[i]; k++)
            s->dim[i][k] = t->dims[in->dim_first + k];
    }
    return 0;
}

static double prod(const shp *s, int i)
{
    double p = 1;
    for (int k = 0; k < s->rank[i]; k++)
        p *= s->dim[i][k];
    return p;
}

static int is_gemm(const char *name)
{
    const char *b = strrchr(name, ':');
    b = b ? b + 1 : name;
    static const char *const g[] = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear",
                                    "addbmm", "_addmm_activation", NULL};
    for (int i = 0; g[i]; i++)
        if (!strcmp(b, g[i]))
            return 1;
    return 0;
}

/* Work of an operator named name with shapes s: FLOPs or bytes (*kind), or
 * -1 when the shapes give none. */
static double work_of(const char *name, const shp *s, int *kind)
{
    int a = -1, b = -1;
    if (is_gemm(name)) {
        for (int i = 0; i < s->nin; i++)
            if (s->rank[i] >= 2) {
                if (a < 0) {
                    a = i;
                } else {
                    b = i;
                    break;
                }
            }
        if (b >= 0) {
            *kind = XG_OPM_FLOPS;
            return 2 * prod(s, a) * s->dim[b][s->rank[b] - 1];
        }
    } else if (strstr(name, "conv")) {
        for (int i = 0; i < s->nin; i++)
            if (s->rank[i] >= 3) {
                if (a < 0)
                    a = i;
                else
                    b = i;
            }
        if (b >= 0 && s->dim[a][1] > 0) {
            *kind = XG_OPM_FLOPS;
            return 2 * prod(s, a) / s->dim[a][1] * prod(s, b);
        }
    } else if (strstr(name, "embedding")) {
        double idx = 0;
        for (int i = 0; i < s->nin; i++) {
            if (s->rank[i] == 1 && s->dim[i][0] > idx)
                idx = s->dim[i][0];
            if (s->rank[i] == 2 && a < 0)
                a = i;
        }
        if (a >= 0 && idx > 0) {
            *kind = XG_OPM_BYTES;
            return idx * s->dim[a][1] * (s->elem[a] > 0 ? s->elem[a] : 4);
        }
    }
    double sum = 0, max = 0;
    for (int i = 0; i < s->nin; i++) {
        if (s->rank[i] < 0)
            continue;
        double v = prod(s, i) * s->elem[i];
        sum += v;
        if (v > max)
            max = v;
    }
    *kind = XG_OPM_BYTES;
    return sum > 0 ? sum + max : -1;
}

/* The shapes at `at` from the instances' shapes across traces (m of them,
 * at xs): each dimension affine in the parameter (to within half a unit) or
 * constant. 0, or -1 when they are not. */
static int shapes_at(const shp *s, const double *xs, int m, double at, shp *out)
{
    *out = s[0];
    for (int j = 1; j < m; j++) {
        if (s[j].nin != s[0].nin)
            return -1;
        for (int i = 0; i < s[0].nin; i++)
            if (s[j].rank[i] != s[0].rank[i])
                return -1;
    }
    double mx = 0;
    for (int j = 0; j < m; j++)
        mx += xs[j] / m;
    double sxx = 0;
    for (int j = 0; j < m; j++)
        sxx += (xs[j] - mx) * (xs[j] - mx);
    for (int i = 0; i < s[0].nin; i++)
        for (int k = 0; k < s[0].rank[i]; k++) {
            double my = 0, sxy = 0;
            for (int j = 0; j < m; j++)
                my += s[j].dim[i][k] / m;
            for (int j = 0; j < m; j++)
                sxy += (xs[j] - mx) * (s[j].dim[i][k] - my);
            double b = sxx > 0 ? sxy / sxx : 0, a = my - b * mx;
            for (int j = 0; j < m; j++)
                if (fabs(a + b * xs[j] - s[j].dim[i][k]) > 0.5)
                    return -1;
            double v = round(a + b * at);
            out->dim[i][k] = v >= 0 ? v : 0;
        }
    return 0;
}

/* ---- fits ---------------------------------------------------------------------------- */

/* Weighted least squares t = a + b r around rs (a, b >= 0), evaluated at rs;
 * *slope gets b (NAN when the points do not give one). */
static double fit_at(const double *r, const double *t, int m, double rs, double *slope)
{
    double sw = 0, rm = 0, tm = 0;
    double w[64];
    for (int j = 0; j < m; j++) {
        double l = r[j] > 0 && rs > 0 ? log2(r[j] / rs) : 0;
        w[j] = exp(-0.5 * l * l);
        sw += w[j];
        rm += w[j] * r[j];
        tm += w[j] * t[j];
    }
    rm /= sw;
    tm /= sw;
    double sxx = 0, sxy = 0;
    for (int j = 0; j < m; j++) {
        sxx += w[j] * (r[j] - rm) * (r[j] - rm);
        sxy += w[j] * (r[j] - rm) * (t[j] - tm);
    }
    *slope = NAN;
    if (!(sxx > 1e-12 * rm * rm * sw))
        return tm;
    double b = sxy / sxx, a = tm - b * rm;
    if (b < 0) {
        *slope = 0;
        return tm;
    }
    if (a < 0) {
        double num = 0, den = 0;
        for (int j = 0; j < m; j++) {
            num += w[j] * r[j] * t[j];
            den += w[j] * r[j] * r[j];
        }
        b = den > 0 ? num / den : 0;
        *slope = b;
        return b * rs;
    }
    *slope = b;
    return a + b * rs;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void xg_opm_result_free(xg_opm_result *r)
{
    free(r->dev_us);
    free(r->inst);
    memset(r, 0, sizeof *r);
    r->bad_trace = -1;
}

/* Per reference instance: where it is in each trace (-1 absent). */
static int match(tdata *td, int n, int **where)
{
    const xg_trace *ref = td[0].g->t;
    *where = malloc((size_t)(td[0].n ? td[0].n : 1) * (size_t)n * sizeof **where);
    int *nid = malloc((size_t)(ref->nnames ? ref->nnames : 1) * sizeof *nid);
    if (!*where || !nid) {
        free(nid);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        const xg_trace *t = td[j].g->t;
        for (int k = 0; k < ref->nnames; k++) {
            const char *nm = xg_name(ref, k);
            nid[k] = j == 0 ? k : xg_trace_find(t, nm, strlen(nm));
        }
        for (int i = 0; i < td[0].n; i++) {
            const tinst *in = &td[0].in[i];
            (*where)[(size_t)i * (size_t)n + (size_t)j] =
                j == 0 ? i : td_find(&td[j], nid[in->name], in->is_op, in->occ);
        }
    }
    free(nid);
    return 0;
}

/* The first trace after the reference whose matched instances carry less
 * than half of the reference's device time (a trace running other
 * operators: another job), with err; -1 when none. */
static int other_job(const tdata *td, const int *where, int n, xg_error *err)
{
    double total = 0;
    for (int i = 0; i < td[0].n; i++)
        total += td[0].in[i].sum_us;
    for (int j = 1; j < n && total > 0; j++) {
        double found = 0;
        for (int i = 0; i < td[0].n; i++)
            if (where[(size_t)i * (size_t)n + (size_t)j] >= 0)
                found += td[0].in[i].sum_us;
        if (found < 0.5 * total) {
            xg_error_set(err, -1, "traces",
                         "not the same job as the first trace: its operators match %.1f%% of "
                         "the first trace's device time",
                         100 * found / total);
            return j;
        }
    }
    return -1;
}

int xg_opmodel_same_job(const xg_graph *const *g, int n, int *bad, xg_error *err)
{
    *bad = -1;
    tdata *td = calloc((size_t)(n > 0 ? n : 1), sizeof *td);
    int *where = NULL, rc = -1;
    if (!td)
        goto done;
    for (int j = 0; j < n; j++) {
        td[j].g = g[j];
        if (collect(&td[j], 0) < 0)
            goto done;
    }
    if (match(td, n, &where) < 0)
        goto done;
    *bad = other_job(td, where, n, err);
    rc = *bad >= 0 ? -1 : 0;
done:
    if (rc < 0 && *bad < 0)
        xg_error_set(err, -1, NULL, "out of memory");
    if (td)
        for (int j = 0; j < n; j++)
            td_free(&td[j]);
    free(td);
    free(where);
    return rc;
}

/* Fits instance i of the reference: fills out->inst[i]; slope of its fit
 * (NAN without one) for the family medians. */
static void model_inst(tdata *td, const int *where, const double *x, int n, double at,
                       int i, shp *sh, xg_opm_inst *o, double *slope)
{
    const xg_trace *ref = td[0].g->t;
    const tinst *in0 = &td[0].in[i];
    double r[64] = {0}, t[64] = {0}, xs[64] = {0};
    shp sat;
    int m = 0, shaped = in0->is_op;
    o->name = xg_name(ref, in0->name);
    o->is_op = in0->is_op;
    o->occ = in0->occ;
    o->measured_us = in0->steps ? in0->sum_us / in0->steps : 0;
    for (int j = 0; j < n && m < 64; j++) {
        int k = where[(size_t)i * (size_t)n + (size_t)j];
        if (k < 0)
            continue;
        const tinst *in = &td[j].in[k];
        if (shaped && shapes_of(td[j].g->t, in->op_ev, &sh[m]) < 0)
            shaped = 0;
        xs[m] = x[j];
        t[m] = in->steps ? in->sum_us / in->steps : 0;
        m++;
    }
    o->points = m;
    o->regressor = XG_OPM_SIZE;
    double wat = at;
    if (shaped && shapes_at(sh, xs, m, at, &sat) == 0) {
        int kind = 0, kj;
        wat = work_of(o->name, &sat, &kind);
        for (int j = 0; j < m && wat > 0; j++) {
            r[j] = work_of(o->name, &sh[j], &kj);
            if (!(r[j] > 0) || kj != kind)
                wat = -1;
        }
        /* work that does not change across the traces explains no change
         * of time: the size is the regressor then */
        int changes = 0;
        for (int j = 1; j < m && wat > 0; j++)
            changes |= r[j] != r[0];
        if (wat > 0 && (changes || m < 2))
            o->regressor = kind;
    }
    if (o->regressor == XG_OPM_SIZE) {
        wat = at;
        for (int j = 0; j < m; j++)
            r[j] = xs[j];
    }
    o->work_ref = r[0];
    o->work_at = wat;
    *slope = NAN;
    int distinct = 0;
    for (int j = 1; j < m; j++)
        distinct |= r[j] != r[0];
    if (m >= 2 && (distinct || o->regressor != XG_OPM_SIZE)) {
        o->how = 0;
        o->predicted_us = fit_at(r, t, m, wat, slope);
    } else {
        o->how = 2;
        o->predicted_us = o->measured_us;
    }
}

/* The roofline bound (us) of instance o of the reference, whose operator
 * event is op_ev, at its work o->work_at: see xg_opmodel.h; 0 when there is
 * none. */
static double roofline_us(const xg_trace *ref, int op_ev, const xg_opm_inst *o,
                          const xg_device *dev)
{
    shp s;
    int kind;
    if (!o->is_op || !(o->work_at > 0) || shapes_of(ref, op_ev, &s) < 0 ||
        work_of(o->name, &s, &kind) <= 0 || kind != o->regressor)
        return 0;
    if (o->regressor == XG_OPM_FLOPS) {
        const xg_info *inf = xg_trace_info(ref, op_ev);
        int prec = inf ? inf->prec : -1;
        double peak = 0;
        for (int p = 0; p < XG_NPREC; p++)
            peak = fmax(peak, dev->peak[p]);
        if (prec == XG_FP64)
            peak = dev->peak[XG_FP64];
        else if (prec == XG_FP32 || prec == XG_TF32)
            peak = fmax(dev->peak[XG_FP32], dev->peak[XG_TF32]);
        else if (prec == XG_FP16)
            peak = dev->peak[XG_FP16];
        double area = 1;
        if (!is_gemm(o->name)) { /* a convolution: its weight's kernel area */
            int a = -1, b = -1;
            for (int i = 0; i < s.nin; i++)
                if (s.rank[i] >= 3) {
                    if (a < 0)
                        a = i;
                    else
                        b = i;
                }
            for (int k = 2; b >= 0 && k < s.rank[b]; k++)
                area *= s.dim[b][k] > 1 ? s.dim[b][k] : 1;
        }
        return peak > 0 ? o->work_at / area / peak * 1e6 : 0;
    }
    if (o->regressor != XG_OPM_BYTES || !(dev->dram_bw > 0))
        return 0;
    double frac = 1; /* an embedding's rows; else the largest tensor's share */
    if (!strstr(o->name, "embedding")) {
        double sum = 0, max = 0;
        for (int i = 0; i < s.nin; i++) {
            if (s.rank[i] < 0)
                continue;
            double v = prod(&s, i) * s.elem[i];
            sum += v;
            max = fmax(max, v);
        }
        frac = sum + max > 0 ? max / (sum + max) : 0;
    }
    return o->work_at * frac / dev->dram_bw * 1e6;
}

int xg_opmodel(const xg_graph *const *g, const double *x, int n, double at, xg_opm_result *out,
               xg_error *err)
{
    return xg_opmodel_dev(g, x, n, at, NULL, out, err);
}

int xg_opmodel_dev(const xg_graph *const *g, const double *x, int n, double at,
                   const xg_device *dev, xg_opm_result *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    out->bad_trace = -1;
    err->event = -1;
    err->field[0] = '\0';
    err->msg[0] = '\0';
    if (n < 2 || n > 64) {
        xg_error_set(err, -1, "traces", "modelling by operator needs traces at 2 to 64 values");
        return -1;
    }
    if (!(at > 0) || !isfinite(at)) {
        xg_error_set(err, -1, "at", "the value to predict at must be a number > 0");
        return -1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (x[i] == x[j]) {
                xg_error_set(err, -1, "traces", "two traces at the same value %g", x[i]);
                return -1;
            }
    tdata *td = calloc((size_t)n, sizeof *td);
    int *where = NULL, rc = -1;
    double *slopes = NULL, *fam = NULL;
    shp *sh = calloc(64, sizeof *sh);
    if (!td || !sh)
        goto oom;
    for (int j = 0; j < n; j++) {
        td[j].g = g[j];
        if (collect(&td[j], j == 0) < 0)
            goto oom;
        const xg_trace *t = g[j]->t;
        for (size_t k = 0; k < t->ninfo; k++)
            if (t->info[k].nin > 0) {
                out->shapes++;
                break;
            }
    }
    if (match(td, n, &where) < 0)
        goto oom;
    if ((out->bad_trace = other_job(td, where, n, err)) >= 0)
        goto done;
    out->ninst = td[0].n;
    out->inst = calloc((size_t)(td[0].n ? td[0].n : 1), sizeof *out->inst);
    slopes = malloc((size_t)(td[0].n ? td[0].n : 1) * sizeof *slopes);
    fam = malloc((size_t)(td[0].n ? td[0].n : 1) * sizeof *fam);
    const xg_trace *ref = g[0]->t;
    out->dev_us = malloc((ref->n ? ref->n : 1) * sizeof *out->dev_us);
    if (!out->inst || !slopes || !fam || !out->dev_us)
        goto oom;
    for (int i = 0; i < td[0].n; i++)
        model_inst(td, where, x, n, at, i, sh, &out->inst[i], &slopes[i]);
    /* one-point instances with work: their family's median slope */
    for (int i = 0; i < td[0].n; i++) {
        xg_opm_inst *o = &out->inst[i];
        if (o->how != 2 || !o->is_op)
            continue;
        shp s;
        int kind;
        if (shapes_of(ref, td[0].in[i].op_ev, &s) < 0 || work_of(o->name, &s, &kind) <= 0)
            continue;
        int nf = 0;
        for (int k = 0; k < td[0].n; k++)
            if (!isnan(slopes[k]) && out->inst[k].regressor == kind &&
                td[0].in[k].name == td[0].in[i].name)
                fam[nf++] = slopes[k];
        if (nf == 0)
            continue;
        qsort(fam, (size_t)nf, sizeof *fam, cmp_double);
        (void)s;
        /* its work at `at` scales as the size does (no other trace to say) */
        double w0 = work_of(o->name, &s, &kind);
        double wat = w0 * at / x[0];
        o->how = 1;
        o->regressor = kind;
        o->work_ref = w0;
        o->work_at = wat;
        o->predicted_us = fmax(0, o->measured_us + fam[nf / 2] * (wat - w0));
    }
    int steps = g[0]->nsteps > 0 ? g[0]->nsteps : 1;
    for (int i = 0; i < td[0].n && dev; i++) {
        xg_opm_inst *o = &out->inst[i];
        if (o->how == 2)
            continue;
        double bound = roofline_us(ref, td[0].in[i].op_ev, o, dev);
        if (bound > o->predicted_us) {
            out->roofline_raised++;
            out->roofline_us += (bound - o->predicted_us) * td[0].in[i].steps / steps;
            o->predicted_us = bound;
        }
    }
    for (size_t e = 0; e < ref->n; e++)
        out->dev_us[e] = NAN;
    for (size_t e = 0; e < ref->n; e++) {
        int i = td[0].dev_inst[e];
        if (i < 0)
            continue;
        const xg_opm_inst *o = &out->inst[i];
        out->dev_us[e] = o->measured_us > 0 ? ref->ev[e].dur * o->predicted_us / o->measured_us
                                            : ref->ev[e].dur;
    }
    for (int i = 0; i < td[0].n; i++) {
        const xg_opm_inst *o = &out->inst[i];
        double share = (double)td[0].in[i].steps / steps;
        out->gpu_us += o->measured_us * share;
        out->predicted_us += o->predicted_us * share;
        if (o->how == 2)
            out->unmatched_us += o->measured_us * share;
    }
    rc = 0;
    goto done;
oom:
    xg_error_set(err, -1, NULL, "out of memory");
done:
    if (td)
        for (int j = 0; j < n; j++)
            td_free(&td[j]);
    free(td);
    free(where);
    free(slopes);
    free(fam);
    free(sh);
    if (rc < 0) {
        int bad = out->bad_trace;
        xg_opm_result_free(out);
        out->bad_trace = bad;
    }
    return rc;
}
