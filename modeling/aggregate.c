/*
 * aggregate.c — the values that get modeled, from the normalized rows of one
 * coordinate (design.md §3, Extra-Deep §2.2), and the epoch extrapolation's
 * step counts (Eq. 2-3).
 *
 * For each (callpath, metric, phase):
 *   1. per rank k and repetition r, the median over steps of the step sums
 *      -> v(k,r), a step in which the callpath did not run counting as 0
 *      (Eq. 1: the sum over no executions); warm-up train steps (index <
 *      warmup_steps) are left out unless they are all that rank has;
 *   2. per repetition, the median over ranks of v(k,r) -> V(r);
 *   3. the median over repetitions of V(r) -> V.
 * Per rank, the median over repetitions of v(k,r) is kept too, and v(k,r)
 * itself: the load-imbalance analysis needs the spread over ranks, which
 * step 2 hides, per repetition.
 *
 * Which steps and ranks there are comes from all rows of the coordinate, not
 * from the callpath's own (the frame): the steps of a (phase, repetition,
 * rank) are those in which anything was recorded, the ranks of a (phase,
 * repetition) those with any step of that phase. A callpath absent from one
 * of them counts 0 there, so a kernel that ran in 1 of 4 steps on 1 of 2
 * ranks is not charged as if it ran in every step. With AGG_MEAN, steps 1
 * and 2 take means instead of medians: the per-step share of periodic work
 * (a checkpoint every 4th step), which a median would read as 0.
 *
 * The rows are sorted once by (callpath, metric, phase, repetition, rank,
 * step), radix-sorted on a packed key when the ranges allow (the usual case),
 * so every median is taken over a contiguous run: linear-ish for the whole
 * coordinate whatever the numbers of ranks, steps and callpaths. Rows
 * of one (repetition, rank, phase, step, callpath, metric) cell are summed,
 * as a step sum is (Eq. 1). Medians of an even count are the mean of the two
 * middle values, as numpy.median, which Extra-Deep uses, has it.
 */
#include "modeling/aggregate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- medians --------------------------------------------------------------- */

/* Ascending, NaN last: a total order whatever the values, which qsort needs. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (x < y)
        return -1;
    if (x > y)
        return 1;
    return isnan(x) - isnan(y);
}

static void sort_doubles(double *v, size_t n)
{
    if (n > 32) {
        qsort(v, n, sizeof(*v), cmp_double);
        return;
    }
    for (size_t i = 1; i < n; i++) { /* the usual case: a handful of steps */
        double x = v[i];
        size_t j = i;
        while (j > 0 && cmp_double(&v[j - 1], &x) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

double agg_median(const double *v, size_t n, double *scratch)
{
    memcpy(scratch, v, n * sizeof(*v));
    sort_doubles(scratch, n);
    if (n % 2)
        return scratch[n / 2];
    return 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}

/* ---- grouping -------------------------------------------------------------- */

static int cmp_int(int a, int b)
{
    return (a > b) - (a < b);
}

static int cmp_row(const void *a, const void *b)
{
    const agg_row *x = a, *y = b;
    int c;
    if ((c = cmp_int(x->callpath, y->callpath)) || (c = cmp_int(x->metric, y->metric)) ||
        (c = cmp_int(x->phase, y->phase)) || (c = cmp_int(x->repetition, y->repetition)) ||
        (c = cmp_int(x->rank, y->rank)))
        return c;
    return cmp_int(x->step, y->step);
}

static int same_series(const agg_row *x, const agg_row *y)
{
    return x->callpath == y->callpath && x->metric == y->metric && x->phase == y->phase;
}

/* ---- sorting ---------------------------------------------------------------
 *
 * Rows are ordered by (callpath, metric, phase, repetition, rank, step). The
 * six fields usually span small ranges (a few hundred callpaths, a few ranks,
 * steps and repetitions), so each is stored as its offset from the minimum in
 * just enough bits of one 64-bit key and the (key, value) pairs are radix
 * sorted: a few linear passes instead of qsort's n log n indirect calls. When
 * the ranges do not fit in 64 bits, qsort with the comparator above. */

enum { NFIELDS = 6, RADIX_BITS = 11, RADIX = 1 << RADIX_BITS };

typedef struct keyed {
    uint64_t key;
    double value;
} keyed;

typedef struct key_layout {
    int min[NFIELDS];
    int shift[NFIELDS];
    uint64_t mask[NFIELDS];
    int bits; /* total */
} key_layout;

static void row_fields(const agg_row *r, int f[NFIELDS])
{
    f[0] = r->callpath;
    f[1] = r->metric;
    f[2] = r->phase;
    f[3] = r->repetition;
    f[4] = r->rank;
    f[5] = r->step;
}

/* Returns 0 when the fields' ranges fit in one 64-bit key, -1 otherwise. */
static int plan_keys(const agg_row *rows, size_t n, key_layout *k)
{
    int lo[NFIELDS], hi[NFIELDS], f[NFIELDS];
    row_fields(&rows[0], lo);
    memcpy(hi, lo, sizeof(hi));
    for (size_t i = 1; i < n; i++) {
        row_fields(&rows[i], f);
        for (int j = 0; j < NFIELDS; j++) {
            lo[j] = f[j] < lo[j] ? f[j] : lo[j];
            hi[j] = f[j] > hi[j] ? f[j] : hi[j];
        }
    }
    k->bits = 0;
    for (int j = NFIELDS - 1; j >= 0; j--) { /* step in the lowest bits */
        uint64_t range = (uint64_t)((int64_t)hi[j] - lo[j]);
        int b = 0;
        while (b < 64 && (range >> b) != 0)
            b++;
        k->min[j] = lo[j];
        k->shift[j] = k->bits;
        k->mask[j] = b ? (~(uint64_t)0 >> (64 - b)) : 0;
        k->bits += b;
    }
    return k->bits <= 64 ? 0 : -1;
}

static uint64_t row_key(const agg_row *r, const key_layout *k)
{
    int f[NFIELDS];
    uint64_t key = 0;
    row_fields(r, f);
    for (int j = 0; j < NFIELDS; j++)
        key |= (uint64_t)((int64_t)f[j] - k->min[j]) << k->shift[j];
    return key;
}

static agg_row key_row(uint64_t key, double value, const key_layout *k)
{
    int f[NFIELDS];
    for (int j = 0; j < NFIELDS; j++)
        f[j] = (int)((int64_t)k->min[j] + (int64_t)((key >> k->shift[j]) & k->mask[j]));
    return (agg_row){.callpath = f[0], .metric = f[1], .phase = f[2], .repetition = f[3],
                     .rank = f[4], .step = f[5], .value = value};
}

/* Stable LSD radix sort of a[0..n) on the low `bits` bits of the keys; tmp
 * holds n more. Returns the array that holds the result. */
static keyed *radix_sort(keyed *a, keyed *tmp, size_t n, int bits)
{
    static const size_t zero[RADIX];
    size_t count[RADIX];
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        memcpy(count, zero, sizeof(count));
        for (size_t i = 0; i < n; i++)
            count[(a[i].key >> shift) & (RADIX - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(a[i].key >> shift) & (RADIX - 1)]++] = a[i];
        keyed *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* sorted[0..n) = rows in (callpath, metric, phase, repetition, rank, step)
 * order. Returns -1 when out of memory. */
static int sort_rows(const agg_row *rows, size_t n, agg_row *sorted)
{
    key_layout k;
    if (plan_keys(rows, n, &k) < 0) {
        memcpy(sorted, rows, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_row);
        return 0;
    }
    keyed *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (keyed){row_key(&rows[i], &k), rows[i].value};
    const keyed *s = radix_sort(a, b, n, k.bits);
    for (size_t i = 0; i < n; i++)
        sorted[i] = key_row(s[i].key, s[i].value, &k);
    free(a);
    free(b);
    return 0;
}

/* ---- the frame: which steps and ranks there are (Eq. 1's absent = 0) ----------- */

/* The steps of one (phase, repetition, rank): frame.steps[s0..s1), ascending. */
typedef struct frame_cell {
    int phase, repetition, rank;
    size_t s0, s1;
} frame_cell;

typedef struct agg_frame {
    int *steps;
    frame_cell *cells; /* ascending (phase, repetition, rank) */
    size_t ncells;
} agg_frame;

static void frame_free(agg_frame *f)
{
    free(f->steps);
    free(f->cells);
    memset(f, 0, sizeof *f);
}

/* The distinct (phase, repetition, rank, step) of rows[0..n). */
static int frame_build(const agg_row *rows, size_t n, agg_frame *f)
{
    memset(f, 0, sizeof *f);
    agg_row *keys = malloc(n * sizeof(*keys)), *sorted = malloc(n * sizeof(*sorted));
    f->steps = malloc(n * sizeof(*f->steps));
    f->cells = malloc(n * sizeof(*f->cells));
    if (!keys || !sorted || !f->steps || !f->cells)
        goto fail;
    for (size_t i = 0; i < n; i++)
        keys[i] = (agg_row){.repetition = rows[i].repetition, .rank = rows[i].rank,
                            .phase = rows[i].phase, .step = rows[i].step};
    if (sort_rows(keys, n, sorted) < 0)
        goto fail;
    size_t nsteps = 0;
    for (size_t i = 0; i < n; i++) {
        const agg_row *r = &sorted[i];
        frame_cell *c = f->ncells ? &f->cells[f->ncells - 1] : NULL;
        if (!c || c->phase != r->phase || c->repetition != r->repetition || c->rank != r->rank) {
            c = &f->cells[f->ncells++];
            *c = (frame_cell){r->phase, r->repetition, r->rank, nsteps, nsteps};
        } else if (f->steps[nsteps - 1] == r->step) {
            continue;
        }
        f->steps[nsteps++] = r->step;
        c->s1 = nsteps;
    }
    free(keys);
    free(sorted);
    return 0;
fail:
    free(keys);
    free(sorted);
    frame_free(f);
    return -1;
}

/* First cell of phase (cells[ncells] when none). */
static size_t frame_phase_start(const agg_frame *f, int phase)
{
    size_t lo = 0, hi = f->ncells;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->cells[mid].phase < phase)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double mean_of(const double *v, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}

/* The median or, with AGG_MEAN, the mean of v[0..n) (n > 0). */
static double center(const double *v, size_t n, agg_measure m, double *scratch)
{
    return m == AGG_MEAN ? mean_of(v, n) : agg_median(v, n, scratch);
}

/* The step-median of one rank in one repetition. */
typedef struct rank_median {
    int repetition;
    int rank;
    double value;
} rank_median;

static int cmp_rank_median(const void *a, const void *b)
{
    const rank_median *x = a, *y = b;
    int c = cmp_int(x->rank, y->rank);
    return c ? c : cmp_int(x->repetition, y->repetition);
}

/* Work space for one aggregation, each array sized for all rows. */
typedef struct agg_work {
    double *steps;      /* step sums of one rank */
    int *step_index;
    double *scratch;    /* agg_median's copy */
    double *per_rep;    /* medians over ranks of one repetition */
    rank_median *kr;    /* v(k,r) of one series */
} agg_work;

static void work_free(agg_work *w)
{
    free(w->steps);
    free(w->step_index);
    free(w->scratch);
    free(w->per_rep);
    free(w->kr);
    memset(w, 0, sizeof(*w));
}

static int work_alloc(agg_work *w, size_t n)
{
    if (n == 0)
        n = 1;
    w->steps = malloc(n * sizeof(*w->steps));
    w->step_index = malloc(n * sizeof(*w->step_index));
    w->scratch = malloc(n * sizeof(*w->scratch));
    w->per_rep = malloc(n * sizeof(*w->per_rep));
    w->kr = malloc(n * sizeof(*w->kr));
    if (w->steps && w->step_index && w->scratch && w->per_rep && w->kr)
        return 0;
    work_free(w);
    return -1;
}

/* Fills v from the v(k,r) of one series (w->kr[0..nkr), ascending (repetition,
 * rank)): medians over ranks per repetition, over repetitions, and per rank. */
static int finish_value(agg_value *v, size_t nkr, agg_measure measure, agg_work *w)
{
    size_t nreps = 0, nranks = 0;
    /* the step medians are all taken: step_index holds the repetition numbers now */
    int *rep_ids = w->step_index;
    for (size_t i = 0; i < nkr;) {
        size_t j = i;
        while (j < nkr && w->kr[j].repetition == w->kr[i].repetition)
            j++;
        for (size_t k = i; k < j; k++)
            w->steps[k - i] = w->kr[k].value;
        rep_ids[nreps] = w->kr[i].repetition;
        w->per_rep[nreps++] = center(w->steps, j - i, measure, w->scratch);
        i = j;
    }
    qsort(w->kr, nkr, sizeof(*w->kr), cmp_rank_median);
    for (size_t i = 0; i < nkr; i++)
        nranks += i == 0 || w->kr[i].rank != w->kr[i - 1].rank;

    v->reps = malloc(nreps * sizeof(*v->reps));
    v->ranks = malloc(nranks * sizeof(*v->ranks));
    v->rank_ids = malloc(nranks * sizeof(*v->rank_ids));
    v->rank_reps = malloc(nranks * nreps * sizeof(*v->rank_reps));
    if (!v->reps || !v->ranks || !v->rank_ids || !v->rank_reps)
        return -1;
    for (size_t i = 0; i < nranks * nreps; i++)
        v->rank_reps[i] = NAN;
    memcpy(v->reps, w->per_rep, nreps * sizeof(*v->reps));
    v->nreps = (int)nreps;
    v->value = agg_median(w->per_rep, nreps, w->scratch);

    size_t r = 0;
    for (size_t i = 0; i < nkr;) {
        size_t j = i;
        while (j < nkr && w->kr[j].rank == w->kr[i].rank)
            j++;
        for (size_t k = i; k < j; k++) {
            w->steps[k - i] = w->kr[k].value;
            size_t lo = 0, hi = nreps; /* the repetition's position, by bisection */
            while (hi - lo > 1) {
                size_t mid = (lo + hi) / 2;
                if (rep_ids[mid] <= w->kr[k].repetition)
                    lo = mid;
                else
                    hi = mid;
            }
            v->rank_reps[r * nreps + lo] = w->kr[k].value;
        }
        v->rank_ids[r] = w->kr[i].rank;
        v->ranks[r++] = agg_median(w->steps, j - i, w->scratch);
        i = j;
    }
    v->nranks = (int)nranks;
    return 0;
}

/* v(k,r) of one cell for the series rows[*at..n): the step sums at the
 * cell's steps, 0 where the series has no row; train steps below warmup
 * dropped unless no other step is left; then their median (or mean).
 * Advances *at past the cell's rows. */
static double cell_value(const agg_row *rows, size_t n, size_t *at, const agg_frame *f,
                         const frame_cell *c, const agg_options *o, agg_work *w)
{
    size_t i = *at, nsteps = 0, kept = 0;
    for (size_t s = c->s0; s < c->s1; s++) {
        double sum = 0;
        while (i < n && rows[i].repetition == c->repetition && rows[i].rank == c->rank &&
               rows[i].step == f->steps[s])
            sum += rows[i++].value;
        w->step_index[nsteps] = f->steps[s];
        w->steps[nsteps++] = sum;
    }
    *at = i;
    if (c->phase == 0 && o->warmup_steps > 0) {
        for (size_t s = 0; s < nsteps; s++)
            if (w->step_index[s] >= o->warmup_steps)
                w->steps[kept++] = w->steps[s];
        if (kept > 0)
            nsteps = kept;
    }
    return center(w->steps, nsteps, o->measure, w->scratch);
}

/* Aggregates the series rows[0..n) (one callpath, metric and phase) over
 * every cell of its phase in the frame. */
static int aggregate_series(const agg_row *rows, size_t n, const agg_frame *f,
                            const agg_options *o, agg_work *w, agg_value *v)
{
    size_t nkr = 0, at = 0;
    v->callpath = rows[0].callpath;
    v->metric = rows[0].metric;
    v->phase = rows[0].phase;
    for (size_t c = frame_phase_start(f, v->phase); c < f->ncells && f->cells[c].phase == v->phase;
         c++) {
        const frame_cell *cell = &f->cells[c];
        w->kr[nkr++] = (rank_median){cell->repetition, cell->rank,
                                     cell_value(rows, n, &at, f, cell, o, w)};
    }
    return finish_value(v, nkr, o->measure, w);
}

/* ---- entry points ---------------------------------------------------------- */

void agg_result_free(agg_result *r)
{
    for (size_t i = 0; i < r->nvalues; i++) {
        free(r->values[i].reps);
        free(r->values[i].ranks);
        free(r->values[i].rank_ids);
        free(r->values[i].rank_reps);
    }
    free(r->values);
    memset(r, 0, sizeof(*r));
}

int agg_coordinate(const agg_row *rows, size_t nrows, int warmup_steps, agg_result *out)
{
    agg_options o = {warmup_steps, AGG_MEDIAN};
    return agg_coordinate_with(rows, nrows, &o, out);
}

int agg_coordinate_with(const agg_row *rows, size_t nrows, const agg_options *o,
                        agg_result *out)
{
    return agg_coordinate_framed(rows, nrows, rows, nrows, o, out);
}

int agg_coordinate_framed(const agg_row *rows, size_t nrows, const agg_row *frame,
                          size_t nframe, const agg_options *o, agg_result *out)
{
    agg_work w = {0};
    agg_frame f = {0};
    agg_row *sorted = NULL;
    size_t nseries = 0;
    memset(out, 0, sizeof(*out));
    if (nrows == 0)
        return 0;
    sorted = malloc(nrows * sizeof(*sorted));
    /* a series has at most one v(k,r) per cell and one step sum per step of
     * the frame: the work space holds the larger of rows and frame */
    if (!sorted || work_alloc(&w, nrows > nframe ? nrows : nframe) < 0 ||
        sort_rows(rows, nrows, sorted) < 0 || frame_build(frame, nframe, &f) < 0)
        goto fail;
    for (size_t i = 0; i < nrows; i++)
        nseries += i == 0 || !same_series(&sorted[i], &sorted[i - 1]);
    out->values = calloc(nseries, sizeof(*out->values));
    if (!out->values)
        goto fail;
    for (size_t i = 0; i < nrows;) {
        size_t j = i + 1;
        while (j < nrows && same_series(&sorted[j], &sorted[i]))
            j++;
        /* counted before filling, so agg_result_free sees this value's arrays */
        out->nvalues++;
        if (aggregate_series(sorted + i, j - i, &f, o, &w, &out->values[out->nvalues - 1]) < 0)
            goto fail;
        i = j;
    }
    free(sorted);
    work_free(&w);
    frame_free(&f);
    return 0;
fail:
    free(sorted);
    work_free(&w);
    frame_free(&f);
    agg_result_free(out);
    return -1;
}

int agg_steps_per_epoch(const agg_training *t, double g, double m, double *n_t, double *n_v)
{
    double b = t->batch_size;
    if (!(g > 0) || !(m > 0) || !(b > 0) || !isfinite(g) || !isfinite(m) || !isfinite(b) ||
        !(t->train_samples >= 0) || !(t->validation_samples >= 0))
        return -1;
    /* (D / (G/M)) / B as one division D*M / (G*B): when that is an integer
     * (the usual case, with integral D, G, M, B) it comes out exactly rather
     * than a rounding below it that floor() would turn into one step less. */
    double per = g * b;
    double t_steps = floor(t->train_samples * m / per);
    double v_steps = floor(t->validation_samples * m / per);
    if (!isfinite(t_steps) || !isfinite(v_steps))
        return -1;
    *n_t = t_steps;
    *n_v = v_steps;
    return 0;
}
