/*
 * sweep_advice.h — which measurement to take next: the runs (points and
 * repetitions) that most narrow the 95% interval of a prediction at a target
 * point per core-hour, within a budget.
 *
 * The prediction at the target is a sum of series (the epoch's parts comp,
 * comm and mem), each a PMNF function whose terms were chosen by the
 * modeler. With those terms fixed, a series is a linear model
 * y(x) = g(x)·c, g(x) = (1, term shapes at x); its coefficients' precision
 * is M = Σ_runs g(x_i) g(x_i)ᵀ / s(x_i)², s(x) the noise of one
 * repetition at x (relative, cv·|f(x)|, when repetitions tell the
 * run-to-run variation; else the fit's residual spread), and the variance
 * of the predicted mean at the target t is v = g(t)ᵀ M⁻¹ g(t). One more run
 * at x adds g(x) g(x)ᵀ / s(x)² to M (a repetition of a measured point and a
 * new point alike), which lowers v by
 *     Δv = (g(t)ᵀ M⁻¹ g(x))² / (s(x)² + g(x)ᵀ M⁻¹ g(x))
 * (Sherman–Morrison). The advisor greedily takes the run with the largest
 * Σ_series Δv per core-hour that still fits the budget, updates M⁻¹, and
 * repeats (a c-optimal design, cost-weighted). Extra-P's advisor instead
 * ranks candidates by a Gaussian process's variance at the candidate
 * itself against cost²; here the criterion is the variance where the
 * answer is wanted, in the model's own terms.
 *
 * Repetitions average the noise but not the model's misfit: with `misfit`
 * b, the mean of n runs at x has variance s(x)²/n + (b·f(x))², so its
 * weight w(n) = 1/(s²/n + b²f²) saturates and one more run adds
 * w(n+1) - w(n) (the rank-one update then uses that weight:
 * Δv = w·c²/(1 + w·d), c = g(t)ᵀM⁻¹g(x), d = g(x)ᵀM⁻¹g(x)). Cheap small
 * points still get repetitions while noise dominates, and the design moves
 * on to new (often larger or intermediate) points once more repetitions
 * there would only average noise the misfit swamps. With b = 0 every run
 * counts alike (the plain c-optimal design).
 *
 * A wrong choice of terms (model error) is not in v, and a design for the
 * fitted terms alone puts every run on as many points as there are
 * coefficients, so the modeler could never learn it chose wrong. With
 * `robust`, the criterion is the variance of a larger model: the fitted
 * terms plus, per parameter, challengers next to its leading term
 * (exponent + 1/2 and - 1/2, one more log2 factor); the answer's variances
 * stay the fitted model's.
 *
 * Never costlier than the grid, by construction: the grid G is one run at
 * every priceable candidate (or the caller's `grid_core_hours`), the
 * measured runs what the runs already taken at the candidates cost (or the
 * caller's `measured_core_hours`: what they did cost). A run at candidate c
 * (a new point or a repetition) is admissible only if
 *     measured + planned + cost(c) ≤ G,
 * planned: the runs recommended before it; so advice followed call after
 * call, each with the measured runs of the calls before, never spends more
 * than G in all. When only that bound keeps a run that would narrow the
 * interval and fits the budget out, the answer says so (`grid_bound`): the
 * grid's cost is spent, and more runs cost more than the grid would have.
 *
 * Pure: no I/O, no globals; the result is allocated (sweep_advice_free).
 */
#ifndef PERFCAST_SWEEP_ADVICE_H
#define PERFCAST_SWEEP_ADVICE_H

#include <stddef.h>

#include "modeling/pmnf.h"

typedef struct sweep_adv_series {
    const pmnf_function *f;
    int npoints;
    const double *coords;   /* npoints x nparams: the measured coordinates */
    const int *reps;        /* repetitions per measured coordinate (>= 1) */
    double cv;              /* run-to-run variation (SD/mean) of one repetition; <= 0: unknown */
    double sigma;           /* absolute SD of one repetition when cv is unknown (> 0) */
    double misfit;          /* relative SD of a point's mean that repetitions cannot lower
                               (the model's misfit); 0: none, every run counts alike */
} sweep_adv_series;

typedef struct sweep_adv_problem {
    int nparams;
    int nseries;
    const sweep_adv_series *series;
    const double *target;   /* nparams */
    int ncand;
    const double *cand;     /* ncand x nparams: where a run may be taken */
    const double *cost;     /* ncand: core-hours of one run there (> 0) */
    double budget;          /* core-hours */
    int max_runs;           /* stop after this many runs (e.g. 1000) */
    int robust;             /* 1: choose by the variance of the fitted terms plus challengers */
    double grid_core_hours; /* what the grid the advice replaces costs; <= 0: one run at
                               every priceable candidate */
    double measured_core_hours; /* what the runs already taken cost; <= 0: cost[] times the
                                   repetitions measured at the candidates */
} sweep_adv_problem;

typedef struct sweep_adv_pick {
    int cand;               /* candidate index */
    int runs;               /* repetitions recommended there */
    double core_hours;
    double gain;            /* reduction of the target's variance these runs bring, in order */
} sweep_adv_pick;

typedef struct sweep_adv_result {
    double var_before, var_after; /* variance of the predicted mean at the target */
    double spent;                 /* core-hours of all picks */
    /* the run that lowers the variance most per core-hour when it costs more
     * than the budget (then every pick is a lesser run the budget allows):
     * its candidate and core-hours; -1 when it fits */
    int beyond_budget;
    double beyond_budget_core_hours;
    /* the grid the advice replaces (one run at every priceable candidate,
     * or the caller's) and what the runs already taken cost: the picks
     * never take measured + spent past grid */
    double grid_core_hours, measured_core_hours;
    int costlier_than_grid;       /* measured + spent > grid: only when the runs measured
                                     before the advice already cost more (a coded warning) */
    int grid_bound;               /* the grid's cost kept out a run that would narrow the
                                     interval within the budget (a coded warning) */
    int robust;                   /* the challengers were used (the points determine them) */
    int nruns;
    int npicks;
    sweep_adv_pick *picks;        /* by candidate, in the order first picked */
} sweep_adv_result;

/* 0, or -1 with a message (a singular design: fewer distinct points than
 * a series' coefficients; out of memory; bad input). */
int sweep_advise(const sweep_adv_problem *p, sweep_adv_result *out, char *err, size_t errcap);
/* Δv of one run whose weight (inverse variance) adds w, c = g(t)ᵀM⁻¹g(x),
 * d = g(x)ᵀM⁻¹g(x): w·c² / (1 + w·d). */
double sweep_advice_shrink(double w, double c, double d);

/* The misfit of a series (sweep_adv_series.misfit): the relative spread of
 * the fit's residuals (sigma, absolute, over the mean |f| at the points)
 * beyond what the run-to-run variation explains for means of reps[i] runs,
 *     sqrt(max(0, (sigma/mean|f|)² - cv²·mean(1/reps))),
 * and at least SWEEP_ADV_MISFIT_FLOOR·cv (SWEEP_ADV_MISFIT_FLOOR times the
 * relative residual when cv is unknown): a point's mean is never taken to
 * be known better than half a repetition's noise, so that repetitions
 * beyond about four at one point buy less than a new point would. */
#define SWEEP_ADV_MISFIT_FLOOR 0.5
double sweep_advice_misfit(const pmnf_function *f, const double *coords, const int *reps, int n,
                           double cv, double sigma);
void sweep_advice_free(sweep_adv_result *r);

#endif
