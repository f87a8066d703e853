/*
 * sim_units.h — the quantities users type for a simulation: bandwidths
 * ("10Gbit", "1Gbps", "125MB/s", "1e9" bytes/s), sizes ("28MB", "64KiB",
 * "3") and lists of counts ("1..16", "1,2,4", "1..32:2"). Pure.
 */
#ifndef PERFCAST_SIM_UNITS_H
#define PERFCAST_SIM_UNITS_H

/* Bytes per second; decimal prefixes k/K, M, G, T (and Ki, Mi, Gi, Ti);
 * "bit", "bps", "b/s", "bit/s" are bits, "B", "B/s", "Bps" bytes, no unit
 * bytes/s. Returns 0, or -1 when s is not a positive finite bandwidth. */
int sim_parse_bandwidth(const char *s, double *out);

/* Bytes: the same prefixes, with "B" or nothing. -1 unless positive. */
int sim_parse_size(const char *s, double *out);

/* A comma-separated list of items, each a number or a range "a..b" or
 * "a..b:step" ("1..4,8,32", "1,2,4", "2..16:2,32") into out[0..max),
 * strictly ascending over the whole list; each in [lo, hi]. Returns the
 * count, or -1 (bad syntax, out of range, not ascending, more than max). */
int sim_parse_list(const char *s, int lo, int hi, int *out, int max);

#endif
