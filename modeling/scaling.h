/*
 * scaling.h — speedup and parallel efficiency of a configuration relative to
 * a baseline (the first measured point P_1), as Extra-Deep defines them
 * (paper 000 §3.1-3.2), and the conventional ratios.
 *
 *   Δ_a = (T_1 - T_k) / (T_1/100)       speedup, percent (Eq. 11)
 *   Δ_t = (x_k - x_1) / (x_1/100)       ideal (theoretical) speedup, percent (Eq. 13)
 *   ε   = Δ_a / Δ_t                     efficiency, here in percent; 100 at P_1
 *   S   = T_1 / T_k                     conventional speedup
 *   E   = S · x_1/x_k (strong scaling), S (weak scaling)
 *
 * x is the number of ranks. A count of ranks that is not > 0 (a coordinate
 * 0 or negative read as the ranks) has no ideal speedup: Δ_t, ε against it,
 * E under strong scaling and the core-hours there are NaN (null in answers),
 * never 0% or 0 core-hours. Pure functions of numbers: no I/O, no globals.
 */
#ifndef PERFCAST_SCALING_H
#define PERFCAST_SCALING_H

double scl_speedup_pct(double t1, double tk);
double scl_ideal_speedup_pct(double x1, double xk);
/* 100·Δ_a/Δ_t; 100 when Δ_t is 0 (the baseline itself). */
double scl_efficiency_pct(double delta_a, double delta_t);
double scl_speedup(double t1, double tk);
double scl_efficiency(double t1, double tk, double x1, double xk, int strong);

/* P_1 of coordinate q (Extra-Deep §3.1): the first point of the series
 * along x_1 (parameter 0) through q, i.e. the coordinate with the same
 * values of the other parameters and the smallest x_1 where values[] is
 * finite (values may be NULL: every coordinate counts). coords: npoints x
 * nparams. Returns its index, or -1 when there is none. */
int scl_series_baseline(const double *coords, int npoints, int nparams, const double *point,
                        const double *values);

/* P_1 of the series along x_1 through point, as a coordinate into base
 * (nparams values): the measured one (scl_series_baseline), whose index is
 * returned; or, where no coordinate with the point's values of the other
 * parameters was measured (a value between or beyond the measured ones),
 * the point at the smallest measured x_1 with the point's other values,
 * and -1: its T_1 is then the model's prediction there (Extra-Deep §3.1:
 * T_1 = F(x_1,1)), never the time of another series' P_1 (at batch 100
 * with batches 16..256 measured, T_1 was the time at batch 16). Without
 * any measured coordinate, base is the point itself. */
int scl_baseline_point(const double *coords, int npoints, int nparams, const double *point,
                       const double *values, double *base);

/* Δ, ε (percent) and core-hours (T·ranks·ρ/3600) of one series (a kernel,
 * a part, the epoch) at each of its coordinates, against P_1 of the
 * coordinate's series along x_1 (scl_series_baseline over values): Eq.
 * 11-14 per kernel. values[i] NaN: not measured there (all three NaN);
 * ranks[i] not > 0: no core-hours there, no ε against it or of it. */
void scl_series_derived(const double *coords, int npoints, int nparams, const double *values,
                        const double *ranks, double cores_per_rank, double *speedup_pct,
                        double *efficiency_pct, double *core_hours);

/* A predicted Δ (a model of Eq. 11 at a point) with its interval [*lo,
 * *hi]: Δ = (T_1 − T_k)/(T_1/100) is never above 100% (T_k is never below
 * 0), so where the value is at most 100 the interval's upper end stops at
 * 100 (a value above 100 keeps its interval: the model does not hold
 * there). */
void scl_speedup_pct_bound(double value, double *lo, double *hi);

/* Whether two estimates of one quantity contradict each other: their 95%
 * intervals [lo1, hi1] and [lo2, hi2] do not meet (Δ derived from the
 * epoch's model against Δ's own PMNF model at a point). An end that is not
 * a number: 0, nothing to compare. */
int scl_apart(double lo1, double hi1, double lo2, double hi2);

/* The range of f(T) for T in [lo, hi] when f is monotone in T: f at both
 * ends, ordered. */
void scl_range(double f_lo, double f_hi, double *lo, double *hi);

#endif
