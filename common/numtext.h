/*
 * numtext.h — decimal text to double and back, fast and exact.
 *
 * Readers of measurement files parse millions of numbers and the model
 * printer writes millions of coefficients; glibc's strtod and printf are
 * exact but slow (multi-precision arithmetic for every number). These take
 * exact shortcuts for the common cases (up to 19 significant digits, moderate
 * exponents) and fall back to glibc for the rest, so results are always
 * those of a correctly rounding implementation. Pure functions, no state.
 */
#ifndef PERFCAST_NUMTEXT_H
#define PERFCAST_NUMTEXT_H

#include <stddef.h>

/* Parses a decimal number ("-12.5", "3e-7", "1E+5", ".5") at s, reading at
 * most len bytes. Returns the number of bytes used (0: no number there) and
 * the value in *out, correctly rounded. "inf"/"nan" are not numbers here. */
size_t numtext_parse(const char *s, size_t len, double *out);

/* The shortest decimal that reads back as v, laid out like Python's repr():
 * "1.0", "0.1", "1e-05", "1.5e+16", "-0.0", "inf", "nan". buf needs 32 bytes.
 * Returns the length. */
int numtext_format_shortest(double v, char *buf);

#endif
