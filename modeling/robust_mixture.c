/*
 * robust_mixture.c — the competing hypotheses of one robust fit, as the
 * reference point sees them.
 *
 * Every hypothesis the search fits leaves its criterion and its prediction
 * (mean and variance) at the reference point, 4x beyond the largest measured
 * coordinate of every parameter (the middle, on a log scale, of the 2-8x a
 * forecast typically reaches). With Akaike weights w_h = exp(-(crit_h -
 * crit_min) / 2) they form a model average, used twice:
 *   - the model is the plausible hypothesis whose prediction is the weighted
 *     median of all (least weighted absolute log distance to the others):
 *     the choice that minimizes the expected absolute extrapolation error
 *     over what the data leave plausible, and a single PMNF function;
 *   - the interval is widened by kappa^2 = sum_h w_h ((mu_h - mu)^2 + v_h) /
 *     (v sum_h w_h), the model average's variance over the chosen model's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/robust_internal.h"

#define PLAUSIBLE 14.0 /* criterion distance beyond which a hypothesis weighs nothing (e^-7) */

int rb_mixture_add(rb_mixture *mx, double crit, double mu, double var, int tag)
{
    if (!isfinite(crit) || !isfinite(mu) || !isfinite(var))
        return 0;
    if (mx->n == mx->cap) {
        int cap = mx->cap ? 2 * mx->cap : 128;
        double *c = realloc(mx->crit, sizeof(double) * (size_t)cap * 5);
        if (!c)
            return -1;
        /* the arrays share one block: move the old parts apart, last first */
        for (int a = 4; a >= 1; a--)
            memmove(c + (size_t)a * cap, c + (size_t)a * mx->cap, sizeof(double) * (size_t)mx->n);
        mx->crit = c;
        mx->mu = c + cap;
        mx->var = c + 2 * cap;
        mx->tag = c + 3 * cap;
        mx->w = c + 4 * cap;
        mx->cap = cap;
    }
    mx->crit[mx->n] = crit;
    mx->mu[mx->n] = mu;
    mx->var[mx->n] = var;
    mx->tag[mx->n] = tag;
    mx->n++;
    return 0;
}

void rb_mixture_free(rb_mixture *mx)
{
    free(mx->crit);
    memset(mx, 0, sizeof *mx);
}

/* Weights relative to the best criterion; 0 beyond PLAUSIBLE. */
static void weigh(rb_mixture *mx)
{
    double c0 = INFINITY;
    for (int i = 0; i < mx->n; i++)
        if (mx->crit[i] < c0)
            c0 = mx->crit[i];
    for (int i = 0; i < mx->n; i++)
        mx->w[i] = mx->crit[i] - c0 < PLAUSIBLE ? exp(-(mx->crit[i] - c0) / 2) : 0;
}

int rb_mixture_pick(rb_mixture *mx, int *tag)
{
    weigh(mx);
    int positive = 1, best = -1;
    for (int i = 0; i < mx->n; i++)
        if (mx->w[i] > 0)
            positive &= mx->mu[i] > 0;
    double bestd = INFINITY;
    for (int i = 0; i < mx->n; i++) {
        if (mx->w[i] == 0)
            continue;
        double d = 0, li = positive ? log(mx->mu[i]) : mx->mu[i];
        for (int j = 0; j < mx->n; j++)
            if (mx->w[j] > 0)
                d += mx->w[j] * fabs(li - (positive ? log(mx->mu[j]) : mx->mu[j]));
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    if (best < 0)
        return -1;
    *tag = (int)mx->tag[best];
    return best;
}

double rb_mixture_kappa2(const rb_mixture *mx, double mu0, double var0)
{
    double sw = 0, s = 0;
    for (int i = 0; i < mx->n; i++) {
        if (mx->w[i] == 0)
            continue;
        double d = mx->mu[i] - mu0;
        sw += mx->w[i];
        s += mx->w[i] * (d * d + mx->var[i]);
    }
    if (!(var0 > 0) || !(sw > 0))
        return 1;
    double k2 = s / sw / var0;
    return isfinite(k2) && k2 > 1 ? k2 : 1;
}
