/*
 * robust_order.c — the robust modeler's canonical order of a series.
 *
 * The same measurements in another order must give the same model to the
 * last bit: floating-point sums depend on their order. So before anything
 * else the points are sorted by their coordinates (then by value; equal
 * points are interchangeable) and each point's repetitions ascending, and
 * robust.c fits the sorted copy.
 */
#include <stdlib.h>
#include <string.h>

#include "modeling/robust_internal.h"

/* The series in a canonical order: points by their coordinates (then by
 * value), each point's repetitions ascending, so that the model does not
 * depend on the order the measurements came in, to the last bit. */
typedef struct canon_key {
    const pmnf_data *d;
    const pmnf_reps *r;
} canon_key;

static int point_cmp(const canon_key *k, int a, int b)
{
    int np = k->d->nparams;
    for (int p = 0; p < np; p++) {
        double x = k->d->coords[(size_t)a * np + p], y = k->d->coords[(size_t)b * np + p];
        if (x != y)
            return x < y ? -1 : 1;
    }
    double u = k->d->values[a], v = k->d->values[b];
    if (u != v)
        return u < v ? -1 : 1;
    return (a > b) - (a < b); /* equal points: any order gives the same data */
}

static int cmp_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int rb_canon_build(canon *cn, const pmnf_data *d, const pmnf_reps *reps)
{
    int n = d->npoints, np = d->nparams;
    int nreps = reps ? reps->start[n] : 0;
    memset(cn, 0, sizeof *cn);
    cn->storage = malloc(sizeof(double) * ((size_t)n * (np + 1) + (size_t)nreps + 1));
    cn->istorage = malloc(sizeof(int) * (2 * (size_t)n + 1));
    if (!cn->storage || !cn->istorage)
        return -1;
    int *order = cn->istorage, *start = order + n;
    canon_key k = {d, reps};
    for (int i = 0; i < n; i++) { /* insertion sort: stable, and points are few */
        int j = i;
        for (; j > 0 && point_cmp(&k, order[j - 1], i) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    double *coords = cn->storage, *values = coords + (size_t)n * np, *rv = values + n;
    start[0] = 0;
    for (int a = 0; a < n; a++) {
        int i = order[a];
        memcpy(coords + (size_t)a * np, d->coords + (size_t)i * np, sizeof(double) * (size_t)np);
        values[a] = d->values[i];
        int m = reps ? reps->start[i + 1] - reps->start[i] : 0;
        if (m > 0) {
            memcpy(rv + start[a], reps->values + reps->start[i], sizeof(double) * (size_t)m);
            qsort(rv + start[a], (size_t)m, sizeof(double), cmp_doubles);
        }
        start[a + 1] = start[a] + m;
    }
    cn->d = (pmnf_data){np, n, coords, values};
    cn->r = (pmnf_reps){start, rv};
    cn->has_reps = reps != NULL;
    return 0;
}

void rb_canon_free(canon *cn)
{
    free(cn->storage);
    free(cn->istorage);
}
