/*
 * configs.c — candidate grid, feasibility, recommendation, Pareto front
 * (see configs.h).
 */
#include "modeling/configs.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

size_t cfg_grid_size(const cfg_range *r, int nparams)
{
    size_t n = 1;
    for (int i = 0; i < nparams; i++) {
        size_t k = r[i].nvalues > 0 ? (size_t)r[i].nvalues : 0;
        if (k && n > SIZE_MAX / k)
            return SIZE_MAX;
        n *= k;
    }
    return n;
}

void cfg_grid_point(const cfg_range *r, int nparams, size_t index, double *point)
{
    for (int i = nparams - 1; i >= 0; i--) {
        size_t k = (size_t)r[i].nvalues;
        point[i] = r[i].values[index % k];
        index /= k;
    }
}

static double ratio(double value, double limit)
{
    if (isinf(limit))
        return 0;
    if (isnan(value))
        return INFINITY;
    return limit > 0 ? value / limit : (value <= 0 ? 0 : INFINITY);
}

/* value within limit (none set: INFINITY); a NaN value meets no limit */
static int within(double value, double limit)
{
    return isinf(limit) || (!isnan(value) && value <= limit);
}

/* the upper end of an interval around value: hi, or value where hi is NaN or below it */
static double upper(double value, double hi)
{
    return hi > value ? hi : value;
}

void cfg_check(const cfg_limits *l, cfg_candidate *c, int n)
{
    for (int i = 0; i < n; i++) {
        double v = ratio(c[i].time, l->max_time);
        double h = ratio(c[i].core_hours, l->max_core_hours);
        double m = ratio(c[i].cost, l->max_cost);
        double worst = v > h ? v : h;
        worst = worst > m ? worst : m;
        c[i].violation = c[i].valid ? worst : INFINITY;
        c[i].feasible = c[i].valid && within(c[i].time, l->max_time) &&
                        within(c[i].core_hours, l->max_core_hours) &&
                        within(c[i].cost, l->max_cost);
        c[i].feasible_at_upper =
            c[i].feasible && within(upper(c[i].time, c[i].time_hi), l->max_time) &&
            within(upper(c[i].core_hours, c[i].core_hours_hi), l->max_core_hours) &&
            within(upper(c[i].cost, c[i].cost_hi), l->max_cost);
    }
}

double cfg_cost_axis(const cfg_candidate *c)
{
    /* core-hours stand in for money only in a search without a price:
     * in a priced one, a candidate without money (its formula has no value
     * there) compared by its core-hours against the others' money was
     * recommended as the cheapest */
    return isnan(c->cost) && !c->priced ? c->core_hours : c->cost;
}

/* -1, 0 or 1 as a is smaller than, equal to or larger than b, a key that
 * is not a number (an efficiency model without a value at the point, a cost
 * formula without one) after every number; two such keys tie. Compared as
 * numbers, NaN lost every comparison both ways, so a NaN listed first kept
 * the lead against every candidate after it. */
static int key_cmp(double a, double b)
{
    int na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na - nb;
    return a < b ? -1 : a > b;
}

/* <0 when a is better than b under rule. Ties: faster, cheaper, smaller. */
static int compare(const cfg_candidate *a, const cfg_candidate *b, cfg_objective rule)
{
    double ka = 0, kb = 0;
    switch (rule) {
    case CFG_CHEAPEST: ka = cfg_cost_axis(a); kb = cfg_cost_axis(b); break;
    case CFG_FASTEST: ka = a->time; kb = b->time; break;
    case CFG_EFFICIENT: ka = -a->efficiency; kb = -b->efficiency; break;
    case CFG_SMALLEST: ka = a->ranks; kb = b->ranks; break;
    case CFG_AUTO: break;
    }
    int k = key_cmp(ka, kb);
    if (!k)
        k = key_cmp(a->time, b->time);
    if (!k)
        k = key_cmp(cfg_cost_axis(a), cfg_cost_axis(b));
    if (!k)
        k = key_cmp(a->ranks, b->ranks);
    return k;
}

int cfg_recommend(const cfg_candidate *c, int n, cfg_objective objective, int strong,
                  cfg_objective *used)
{
    cfg_objective rule = objective;
    if (rule == CFG_AUTO)
        rule = strong ? CFG_EFFICIENT : CFG_SMALLEST;
    *used = rule;
    /* a candidate feasible by its point estimate only misses a limit inside
     * its interval about as often as not: one feasible at the upper end is
     * preferred when there is one */
    int robust = 0;
    for (int i = 0; i < n && !robust; i++)
        robust = c[i].feasible_at_upper;
    int best = -1;
    for (int i = 0; i < n; i++)
        if ((robust ? c[i].feasible_at_upper : c[i].feasible) &&
            (best < 0 || compare(&c[i], &c[best], rule) < 0))
            best = i;
    return best;
}

typedef struct keyed {
    double time, cost;
    int index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return x->index - y->index;
}

int cfg_pareto(const cfg_candidate *c, int n, int *out)
{
    keyed *k = malloc(sizeof *k * (size_t)(n > 0 ? n : 1));
    if (!k)
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (c[i].valid && !isnan(c[i].time) && !isnan(cfg_cost_axis(&c[i])))
            k[m++] = (keyed){c[i].time, cfg_cost_axis(&c[i]), i};
    qsort(k, (size_t)m, sizeof *k, cmp_keyed);
    /* by ascending time: a candidate is on the front when it is cheaper than
     * everything faster (or as fast) */
    int count = 0;
    double cheapest = INFINITY;
    for (int i = 0; i < m; i++) {
        if (k[i].cost < cheapest) {
            out[count++] = k[i].index;
            cheapest = k[i].cost;
        }
    }
    free(k);
    return count;
}

int cfg_closest(const cfg_candidate *c, int n, int k, int *out)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        /* insertion into the k best so far */
        int at = count < k ? count : k;
        while (at > 0 && (c[i].violation < c[out[at - 1]].violation ||
                          (c[i].violation == c[out[at - 1]].violation &&
                           compare(&c[i], &c[out[at - 1]], CFG_FASTEST) < 0)))
            at--;
        if (at >= k)
            continue;
        int last = count < k ? count : k - 1;
        for (int j = last; j > at; j--)
            out[j] = out[j - 1];
        out[at] = i;
        if (count < k)
            count++;
    }
    return count;
}
