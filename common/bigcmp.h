/*
 * bigcmp.h — exact comparison of A * 2^a2 * 5^a5 with B * 2^b2 * 5^b5 for
 * 64-bit A, B and exponents of either sign, in fixed-size big integers on
 * the stack. The shortest-decimal printer (common/numtext.c) decides with
 * it the rare roundings and read-backs its long double arithmetic cannot.
 * Pure, no allocation.
 */
#ifndef PERFCAST_BIGCMP_H
#define PERFCAST_BIGCMP_H

#include <stdint.h>

/* Sets *sign to -1, 0 or 1 as A * 2^a2 * 5^a5 is below, equal to or above
 * B * 2^b2 * 5^b5 and returns 1; returns 0 when the numbers need more than
 * BIGCMP_BITS bits once the common powers are divided out. */
enum { BIGCMP_BITS = 2560 };
int bigcmp_scaled(uint64_t a, int a2, int a5, uint64_t b, int b2, int b5, int *sign);

#endif
