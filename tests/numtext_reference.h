/*
 * numtext_reference.h — the previous implementation of
 * numtext_format_shortest() (long double scaling, binary search on the
 * precision, snprintf for the rest), kept verbatim as the reference the
 * current one must equal byte for byte: tests/test_numtext.c compares the
 * two on millions of values, bench/bench_numtext.c times them side by side
 * and tests/fuzz/fuzz_numtext.c compares them on fuzzed bit patterns.
 * Everything here is static; include it from one translation unit.
 */
#ifndef PERFCAST_NUMTEXT_REFERENCE_H
#define PERFCAST_NUMTEXT_REFERENCE_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double numtext_ref_exact_pow10[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if LDBL_MANT_DIG == 64
/* 10^k = 5^k * 2^k, exact in a 64-bit mantissa up to 5^27 */
static const long double numtext_ref_pow10l_table[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};

static long double numtext_ref_pow10l_exact(int k)
{
    return numtext_ref_pow10l_table[k];
}

/* M * 10^e, when rounding through long double is provably exact; 0 else. */
static int numtext_ref_scale_long_double(uint64_t m, int e, double *out)
{
    if (e > 27 || e < -27)
        return 0;
    long double p = numtext_ref_pow10l_exact(e < 0 ? -e : e);
    long double r = e < 0 ? (long double)m / p : (long double)m * p;
    int ex;
    long double frac = frexpl(r, &ex); /* r = frac * 2^ex, frac in [0.5, 1) */
    if (ex < DBL_MIN_EXP + 1 || ex > DBL_MAX_EXP - 1)
        return 0;
    uint64_t bits = (uint64_t)ldexpl(frac, 64);
    unsigned low = (unsigned)(bits & 0x7ff);
    if (low >= 0x3ff && low <= 0x401)
        return 0;
    *out = (double)r;
    return 1;
}
#else
static int numtext_ref_scale_long_double(uint64_t m, int e, double *out)
{
    (void)m;
    (void)e;
    (void)out;
    return 0;
}
#endif

/* ---- printing ------------------------------------------------------------ */

/* Does digits d (an integer) times 10^e read back as v (> 0)? */
static int numtext_ref_reads_back(uint64_t d, int e, double v)
{
    double back;
    if (d < ((uint64_t)1 << 53) && e >= -22 && e <= 22)
        back = e < 0 ? (double)d / numtext_ref_exact_pow10[-e] : (double)d * numtext_ref_exact_pow10[e];
    else if (!numtext_ref_scale_long_double(d, e, &back)) {
        char tmp[48];
        snprintf(tmp, sizeof tmp, "%llue%d", (unsigned long long)d, e);
        back = strtod(tmp, NULL);
    }
    return back == v;
}

#if LDBL_MANT_DIG == 64
/* v rounded to p significant digits: d with 10^(p-1) <= d < 10^p and the
 * decimal exponent of d's last digit in *e. 0 when out of the fast range. */
static int numtext_ref_digits_at(double v, int e10, int p, uint64_t *d, int *e)
{
    int k = p - 1 - e10; /* v * 10^k has p digits before the point */
    if (k > 27 || k < -27)
        return 0;
    long double scaled = k >= 0 ? (long double)v * numtext_ref_pow10l_exact(k) : (long double)v / numtext_ref_pow10l_exact(-k);
    /* scaled is the exact product rounded once (v and 10^k are exact), so
     * it is off by at most half a unit of its last place: within one unit of
     * a halfway point the exact product's rounding cannot be known from it */
    /* floorl() and casts to integers switch the x87 rounding mode, which
     * costs more than all the rest; rintl()/llrintl() round in the current
     * mode (to nearest), and the floor follows from the nearest integer */
    long double r = rintl(scaled); /* ties to even, as repr() */
    long double below = r > scaled ? r - 1 : r;
    long double half_gap = fabsl(scaled - below - 0.5L);
    if (half_gap <= scaled * 0x1p-63L) /* >= 2^(ilogb(scaled) - 63): refuses no less */
        return 0;
    static const uint64_t pow10_u64[18] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
        1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
        100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
        1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL};
    if (p < 1 || p > 17 || !(r < 0x1p63L))
        return 0;
    uint64_t lo = pow10_u64[p - 1], hi = lo * 10;
    uint64_t x = (uint64_t)llrintl(r);
    if (x == hi) { /* rounding carried into a new digit: 10^p */
        x /= 10;
        k--;
    }
    if (x > hi)
        return -1; /* e10 was too small */
    if (x < lo)
        return -2; /* e10 was too large */
    *d = x;
    *e = -k;
    return 1;
}
#else
static int numtext_ref_digits_at(double v, int e10, int p, uint64_t *d, int *e)
{
    (void)v, (void)e10, (void)p, (void)d, (void)e;
    return 0;
}
#endif

/* Shortest digits by binary search; falls back to snprintf. */
/* Digits at precision p if they read back as v: 1; they do not: 0;
 * undecidable here: -1. */
static int numtext_ref_try_precision(double v, int e10, int p, uint64_t *d, int *e)
{
    int at = numtext_ref_digits_at(v, e10, p, d, e);
    if (at == 0)
        return -1;
    return at == 1 && numtext_ref_reads_back(*d, *e, v);
}

/* Shortest digits: 17 always read back; most computed values need 16 or 17,
 * so 16 and 15 are tried first, then a binary search below 15. 0 sends the
 * value to snprintf. */
static int numtext_ref_shortest(double v, uint64_t *digits, int *exp10)
{
    int e10 = (int)floor(log10(v));
    /* every precision 1..17 must scale by at most 10^27 */
    if (e10 > 26 || e10 < -10)
        return 0;
    /* make e10 exact: 10^e10 <= v < 10^(e10+1) */
    uint64_t d;
    int e, rc = numtext_ref_digits_at(v, e10, 17, &d, &e);
    if (rc == -1 || rc == -2) {
        e10 += rc == -1 ? 1 : -1;
        rc = numtext_ref_digits_at(v, e10, 17, &d, &e);
    }
    if (rc != 1)
        return 0;
    /* correctly rounded to 17 digits (numtext_ref_digits_at refuses what it cannot round) */
    uint64_t best_d = d;
    int best_e = e;
    int hi = 17;
    for (int p = 16; p >= 15; p--) {
        int ok = numtext_ref_try_precision(v, e10, p, &d, &e);
        if (ok < 0)
            return 0;
        if (!ok)
            goto done;
        best_d = d;
        best_e = e;
        hi = p;
    }
    for (int lo = 1; lo < hi;) {
        int mid = (lo + hi) / 2;
        int ok = numtext_ref_try_precision(v, e10, mid, &d, &e);
        if (ok < 0)
            return 0; /* undecidable here: let snprintf do it */
        if (ok) {
            hi = mid;
            best_d = d;
            best_e = e;
        } else {
            lo = mid + 1;
        }
    }
done:
    *digits = best_d;
    *exp10 = best_e;
    return 1;
}

static int numtext_ref_shortest_by_snprintf(double v, uint64_t *digits, int *exp10)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (strtod(tmp, NULL) == v || prec == 17)
            break;
    }
    uint64_t d = 0;
    int n = 0;
    const char *p = tmp;
    for (; *p && *p != 'e'; p++) {
        if (*p >= '0' && *p <= '9') {
            d = d * 10 + (uint64_t)(*p - '0');
            n++;
        }
    }
    *digits = d;
    *exp10 = atoi(p + 1) - (n - 1);
    return 1;
}

static int numtext_ref_format_shortest(double v, char *buf)
{
    char *out = buf;
    if (isnan(v))
        return sprintf(buf, "nan");
    if (signbit(v)) {
        *out++ = '-';
        v = -v;
    }
    if (isinf(v))
        return (int)(out - buf) + sprintf(out, "inf");
    if (v == 0)
        return (int)(out - buf) + sprintf(out, "0.0");
    uint64_t d;
    int e;
    if (!numtext_ref_shortest(v, &d, &e))
        numtext_ref_shortest_by_snprintf(v, &d, &e);
    while (d % 10 == 0 && d) {
        d /= 10;
        e++;
    }
    char digits[24];
    int n = 0;
    uint64_t x = d;
    do {
        digits[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    for (int i = 0; i < n / 2; i++) {
        char t = digits[i];
        digits[i] = digits[n - 1 - i];
        digits[n - 1 - i] = t;
    }
    int point = n + e; /* decimal point after this many digits */
    int sci = point - 1; /* exponent in scientific notation */
    if (sci < -4 || sci >= 16) {
        *out++ = digits[0];
        if (n > 1) {
            *out++ = '.';
            memcpy(out, digits + 1, (size_t)(n - 1));
            out += n - 1;
        }
        out += sprintf(out, "e%c%02d", sci < 0 ? '-' : '+', sci < 0 ? -sci : sci);
    } else if (point <= 0) {
        *out++ = '0';
        *out++ = '.';
        for (int i = 0; i < -point; i++)
            *out++ = '0';
        memcpy(out, digits, (size_t)n);
        out += n;
    } else if (point >= n) {
        memcpy(out, digits, (size_t)n);
        out += n;
        for (int i = n; i < point; i++)
            *out++ = '0';
        *out++ = '.';
        *out++ = '0';
    } else {
        memcpy(out, digits, (size_t)point);
        out += point;
        *out++ = '.';
        memcpy(out, digits + point, (size_t)(n - point));
        out += n - point;
    }
    *out = '\0';
    return (int)(out - buf);
}


#endif
