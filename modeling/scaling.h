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
 * x is the number of ranks. Pure functions of numbers: no I/O, no globals.
 */
#ifndef PERFCAST_SCALING_H
#define PERFCAST_SCALING_H

double scl_speedup_pct(double t1, double tk);
double scl_ideal_speedup_pct(double x1, double xk);
/* 100·Δ_a/Δ_t; 100 when Δ_t is 0 (the baseline itself). */
double scl_efficiency_pct(double delta_a, double delta_t);
double scl_speedup(double t1, double tk);
double scl_efficiency(double t1, double tk, double x1, double xk, int strong);

/* The range of f(T) for T in [lo, hi] when f is monotone in T: f at both
 * ends, ordered. */
void scl_range(double f_lo, double f_hi, double *lo, double *hi);

#endif
