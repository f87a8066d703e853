/*
 * combine.h — the prediction of a sum of independently modelled parts (the
 * epoch as computation + communication + memory), with its interval.
 *
 * The value is the sum of the parts' values. Each end of the interval is
 * the sum's value moved by the parts' distances to that end joined in
 * quadrature, each side on its own:
 *   lo = Σ v_i − sqrt(Σ (v_i − lo_i)²),   hi = Σ v_i + sqrt(Σ (hi_i − v_i)²).
 * A part's interval need not be symmetric: the lower end of a positive
 * quantity stops at 0 (pmnf_predict), and a symmetric half-width
 * (hi_i − lo_i)/2 on both sides would carry the sum below 0. Since
 * sqrt(Σ d²) <= Σ d, lo is never below Σ lo_i, so a sum of parts whose
 * lower ends are at least 0 has one too. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_MODELING_COMBINE_H
#define PERFCAST_MODELING_COMBINE_H

/* The sum of n parts (value[i], lo[i], hi[i]) into *v, *lo_out, *hi_out. */
void pmnf_combine_sum(const double *value, const double *lo, const double *hi, int n, double *v,
                      double *lo_out, double *hi_out);

#endif
