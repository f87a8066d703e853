/*
 * numtext.c — see numtext.h.
 *
 * Parsing: a decimal with mantissa M (up to 19 digits) and exponent E is
 * exact in double arithmetic when M < 2^53 and |E| <= 22 (one correctly
 * rounded multiplication or division by an exact power of ten). Otherwise,
 * on x86-64, M and 10^|E| (|E| <= 27) are exact in the 64-bit mantissa of
 * long double, so M * 10^E is rounded once to 64 bits; rounding that to 53
 * bits is correct unless the 64-bit result sits within one unit of a 53-bit
 * halfway point, which is detected and sent to strtod.
 *
 * Printing: the result is the shortest p such that v correctly rounded to
 * p significant digits (ties to even) reads back as v, printed like repr().
 * When v is not a power of two its rounding interval is symmetric, so the
 * rounding to p + 1 digits, at least as close to v, reads back whenever the
 * one to p digits does: "reads back" is monotone in p. Three paths, the
 * first that can decide:
 *  - exact (1e-11 <= v < 1e17): v and the ends of its rounding interval
 *    times 10^k (k = 0..27) are exact 128-bit integers over a power of two;
 *    the shortest p comes from the interval's integers and the digits from
 *    rounding, no read-back check needed (exact_shortest);
 *  - scaled (other normal v, not a power of two, x86 long double): the
 *    interval scaled by a correctly rounded 10^k estimates p, then digits at
 *    p and p - 1, each rounded from a long double product known to 2^-63 of
 *    itself, are confirmed by read-back checks, what long double cannot
 *    decide done exactly in big integers (scaled_shortest, common/bigcmp.h);
 *  - general (subnormals, other powers of two, values within 2^-59 of a
 *    power of ten): digits in long double by binary search on the
 *    precision, each check done with the exact parser above, snprintf for
 *    values whose scaling needs powers of ten beyond 10^27 (shortest,
 *    shortest_by_snprintf). This was the only path before; for the powers
 *    of two it still takes it finds the shortest p too (exhaustively
 *    checked: reading back is not monotone for eight of them, 2^149 and
 *    2^-499 among them, all of which it sends to snprintf).
 * tests/test_numtext.c holds the printer to the general path alone
 * (tests/numtext_reference.h) byte for byte.
 */
#include "common/numtext.h"

#include "common/bigcmp.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double exact_pow10[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if LDBL_MANT_DIG == 64
/* 10^k = 5^k * 2^k, exact in a 64-bit mantissa up to 5^27 */
static const long double pow10l_table[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};

static long double pow10l_exact(int k)
{
    return pow10l_table[k];
}

/* M * 10^e, when rounding through long double is provably exact; 0 else. */
static int scale_long_double(uint64_t m, int e, double *out)
{
    if (e > 27 || e < -27)
        return 0;
    long double p = pow10l_exact(e < 0 ? -e : e);
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
static int scale_long_double(uint64_t m, int e, double *out)
{
    (void)m;
    (void)e;
    (void)out;
    return 0;
}
#endif

static double parse_by_strtod(const char *s, size_t n)
{
    char tmp[128];
    if (n < sizeof tmp) {
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        return strtod(tmp, NULL);
    }
    char *big = malloc(n + 1);
    if (!big)
        return NAN;
    memcpy(big, s, n);
    big[n] = '\0';
    double v = strtod(big, NULL);
    free(big);
    return v;
}

/* m * 10^e correctly rounded; s/n is the text for the slow path. */
static double compose(uint64_t m, int e, int negative, int exact_m, const char *s, size_t n)
{
    double v;
    if (m == 0)
        v = 0;
    else if (exact_m && m < ((uint64_t)1 << 53) && e >= -22 && e <= 22)
        v = e < 0 ? (double)m / exact_pow10[-e] : (double)m * exact_pow10[e];
    else if (!(exact_m && scale_long_double(m, e, &v)))
        return parse_by_strtod(s, n);
    return negative ? -v : v;
}

size_t numtext_parse(const char *s, size_t len, double *out)
{
    size_t i = 0;
    int negative = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        negative = s[i++] == '-';
    uint64_t m = 0;
    int digits = 0, dropped = 0, frac = 0, any = 0, exact_m = 1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(s[i] - '0');
            digits += m != 0;
        } else {
            dropped++;
            exact_m &= s[i] == '0';
        }
    }
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(s[i] - '0');
                digits += m != 0;
                frac++;
            } else {
                exact_m &= s[i] == '0';
            }
        }
    }
    if (!any)
        return 0;
    long e = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        int eneg = 0;
        if (j < len && (s[j] == '-' || s[j] == '+'))
            eneg = s[j++] == '-';
        if (j < len && s[j] >= '0' && s[j] <= '9') {
            for (; j < len && s[j] >= '0' && s[j] <= '9'; j++)
                if (e < 100000)
                    e = e * 10 + (s[j] - '0');
            if (eneg)
                e = -e;
            i = j;
        }
    }
    long total = e - frac + dropped;
    if (total < -100000 || total > 100000)
        exact_m = 0;
    *out = compose(m, (int)total, negative, exact_m, s, i);
    return i;
}

/* ---- printing ------------------------------------------------------------ */

/* Does digits d (an integer) times 10^e read back as v (> 0)? */
static int reads_back(uint64_t d, int e, double v)
{
    double back;
    if (d < ((uint64_t)1 << 53) && e >= -22 && e <= 22)
        back = e < 0 ? (double)d / exact_pow10[-e] : (double)d * exact_pow10[e];
    else if (!scale_long_double(d, e, &back)) {
        char tmp[48];
        snprintf(tmp, sizeof tmp, "%llue%d", (unsigned long long)d, e);
        back = strtod(tmp, NULL);
    }
    return back == v;
}

#if LDBL_MANT_DIG == 64
/* v rounded to p significant digits: d with 10^(p-1) <= d < 10^p and the
 * decimal exponent of d's last digit in *e. 0 when out of the fast range. */
static int digits_at(double v, int e10, int p, uint64_t *d, int *e)
{
    int k = p - 1 - e10; /* v * 10^k has p digits before the point */
    if (k > 27 || k < -27)
        return 0;
    long double scaled = k >= 0 ? (long double)v * pow10l_exact(k) : (long double)v / pow10l_exact(-k);
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
static int digits_at(double v, int e10, int p, uint64_t *d, int *e)
{
    (void)v, (void)e10, (void)p, (void)d, (void)e;
    return 0;
}
#endif

/* Shortest digits by binary search; falls back to snprintf. */
/* Digits at precision p if they read back as v: 1; they do not: 0;
 * undecidable here: -1. */
static int try_precision(double v, int e10, int p, uint64_t *d, int *e)
{
    int at = digits_at(v, e10, p, d, e);
    if (at == 0)
        return -1;
    return at == 1 && reads_back(*d, *e, v);
}

/* ---- printing, exact path ---------------------------------------------- */

static const uint64_t ten_to[18] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
    1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
    1000000000000ULL, 10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
    10000000000000000ULL, 100000000000000000ULL};

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 numtext_u128;

static const uint64_t five_to[28] = {1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL,
    78125ULL, 390625ULL, 1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL, 1220703125ULL,
    6103515625ULL, 30517578125ULL, 152587890625ULL, 762939453125ULL, 3814697265625ULL,
    19073486328125ULL, 95367431640625ULL, 476837158203125ULL, 2384185791015625ULL,
    11920928955078125ULL, 59604644775390625ULL, 298023223876953125ULL,
    1490116119384765625ULL, 7450580596923828125ULL};

/* v * 10^k = x + frac / 2^d rounded to a multiple of 10^j (ties to even):
 * the multiple's digits (10^(17-j) when rounding carries) */
static uint64_t exact_round(uint64_t x, numtext_u128 frac, int d, int j)
{
    if (j == 0) {
        numtext_u128 half = d ? (numtext_u128)1 << (d - 1) : 0;
        return x + (uint64_t)(d && (frac > half || (frac == half && (x & 1))));
    }
    /* 16 and 17 digits, the most common lengths, divide by a constant */
    uint64_t unit = ten_to[j], digs = j == 1 ? x / 10 : x / unit, rest = x - digs * unit;
    uint64_t half = unit / 2;
    return digs + (uint64_t)(rest > half || (rest == half && (frac != 0 || (digs & 1))));
}

/* Shortest digits of v = m * 2^q (m of 53 bits) in exact integer
 * arithmetic, when v * 10^k with k = 16 - floor(log10 v) needs
 * 0 <= k <= 27, i.e. 1e-11 <= v < 1e17: 5^k < 2^63, so v * 10^k and the
 * ends of v's rounding interval scaled alike ((2m -+ 1) * 2^(q-1) * 10^k;
 * the lower one (4m - 1) * 2^(q-2) * 10^k when m = 2^52, a power of two)
 * are exact 128-bit fractions over 2^d. The interval holds all decimals that
 * read back as v (its ends too when m is even: ties go to even). No p below
 * 17 - j reads back, for the largest j such that a multiple of 10^j lies in
 * it. When the interval is symmetric (m > 2^52), v correctly rounded to
 * p = 17 - j digits, the multiple nearest to v, is inside as well; for a
 * power of two each p from there up is checked until it is (17 always is:
 * the lower half-width is 2^-54 v * 10^k > 1/2). e10 is floor(e2 log10 2)
 * or one more. 0: outside that range. */
static int exact_shortest(uint64_t m, int q, int e10, uint64_t *digits, int *exp10)
{
    int k = 16 - e10, d, pow2 = m == (uint64_t)1 << 52;
    numtext_u128 n, f;
    uint64_t x;
    for (;;) {
        if (k < 0 || k > 27)
            return 0;
        int t = q + k - 1 - pow2; /* v * 10^k = n * 2^t */
        f = five_to[k];
        n = (numtext_u128)(m << (1 + pow2)) * f;
        if (t >= 0) { /* a whole number below 10^18: no fraction */
            n <<= t;
            f <<= t;
            d = 0;
        } else {
            d = -t; /* <= 2 + 89 for v >= 1e-11: below 128 */
        }
        x = (uint64_t)(n >> d);
        if (x < ten_to[17])
            break;
        k--;
        e10++;
    }
    if (x < ten_to[16])
        return 0; /* e10 above floor(log10 v): not expected */
    numtext_u128 mask = d ? ((numtext_u128)1 << d) - 1 : 0;
    numtext_u128 lo = n - f, hi = n + (f << pow2), frac = n & mask;
    int ends_in = (m & 1) == 0;
    /* the integers of the interval are (below, top] */
    uint64_t top = (uint64_t)(hi >> d), below = (uint64_t)(lo >> d);
    if (!ends_in && (hi & mask) == 0)
        top--;
    if (ends_in && (lo & mask) == 0)
        below--;
    uint64_t first = below + 1, last = top; /* kept for the power of two */
    int j = 0;
    if (top / 100000000 > below / 100000000) { /* 9 digits or fewer */
        top /= 100000000;
        below /= 100000000;
        j = 8;
    }
    while (j < 16 && top / 10 > below / 10) {
        top /= 10;
        below /= 10;
        j++;
    }
    uint64_t digs = exact_round(x, frac, d, j);
    if (pow2) { /* asymmetric: the nearest multiple may lie outside */
        while (j > 0 && (digs * ten_to[j] < first || digs * ten_to[j] > last))
            digs = exact_round(x, frac, d, --j);
    }
    int p = 17 - j, e = j - k;
    if (digs == ten_to[p]) { /* rounding carried into a new digit */
        digs /= 10;
        e++;
    }
    *digits = digs;
    *exp10 = e;
    return 1;
}
#else
static int exact_shortest(uint64_t m, int q, int e10, uint64_t *digits, int *exp10)
{
    (void)m, (void)q, (void)e10, (void)digits, (void)exp10;
    return 0;
}
#endif

/* ---- printing, scaled path (x86 long double) --------------------------- */

#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#include "common/numtext_pow10.h"

/* 10^k rounded to long double, |k| <= 330 */
static long double fast_pow10l(int k)
{
    return numtext_pow10l[k - NUMTEXT_POW10_MIN];
}

/* The x87 extended format: the 64-bit mantissa (explicit leading bit), then
 * sign and 15-bit exponent biased by 16383. */
static uint64_t ld_mantissa(long double x)
{
    uint64_t m;
    memcpy(&m, &x, sizeof m);
    return m;
}

static int ld_exponent(long double x)
{
    unsigned char b[sizeof(long double)];
    memcpy(b, &x, sizeof b);
    return ((b[9] & 0x7f) << 8 | b[8]) - 16383;
}

/* 2^e as long double (e within the normal range of long double) */
static long double ld_pow2(int e)
{
    long double x = 0;
    unsigned char b[sizeof(long double)];
    memcpy(b, &x, sizeof b);
    uint64_t m = (uint64_t)1 << 63;
    memcpy(b, &m, sizeof m);
    b[8] = (unsigned char)((e + 16383) & 0xff);
    b[9] = (unsigned char)((e + 16383) >> 8);
    memcpy(&x, b, sizeof b);
    return x;
}

/* Nearest integer to s (ties to even), 0 <= s < 2^63: adding 2^63 leaves a
 * unit of 1 in the last place, so the sum is s rounded, plus 2^63. */
static uint64_t ld_round(long double s)
{
    return ld_mantissa(s + 0x1p63L) - ((uint64_t)1 << 63);
}

/* v = m * 2^q, m of 53 bits (v normal) */
static void split_double(double v, uint64_t *m, int *q)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    *m = (bits & (((uint64_t)1 << 52) - 1)) | (uint64_t)1 << 52;
    *q = (int)(bits >> 52 & 0x7ff) - 1075;
}

/* Does d * 10^e read back as v (normal, > 0, not a power of two)? Exactly,
 * in big integers: d * 10^e lies inside v's rounding interval
 * (2m -+ 1) * 2^(q-1), its ends included when m is even (ties to even).
 * -1: numbers too large (not expected). */
static int exact_reads_back(uint64_t d, int e, double v)
{
    uint64_t m;
    int q, below, above;
    split_double(v, &m, &q);
    if (!bigcmp_scaled(d, e, e, 2 * m - 1, q - 1, 0, &below) ||
        !bigcmp_scaled(d, e, e, 2 * m + 1, q - 1, 0, &above))
        return -1;
    int ends_in = (m & 1) == 0;
    return (below > 0 || (below == 0 && ends_in)) && (above < 0 || (above == 0 && ends_in));
}

/* Does d * 10^e read back as v (normal, > 0, not a power of two)? 1 / 0;
 * -1 when it cannot be decided. r = d * rnd(10^e) rounded is within 2^-63 r
 * of the exact product (two roundings of 2^-64, one when 10^e is exact),
 * which is at most 2 units of r's 64-bit last place; 3 units away from a
 * 53-bit halfway point, the exact product rounds to the same double as r.
 * Closer than that, or beyond the normal range, exact_reads_back decides. */
static int fast_reads_back(uint64_t d, int e, double v)
{
    if (d < ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        double back = e < 0 ? (double)d / exact_pow10[-e] : (double)d * exact_pow10[e];
        return back == v;
    }
    if (e < NUMTEXT_POW10_MIN || e > NUMTEXT_POW10_MAX)
        return exact_reads_back(d, e, v);
    long double r = (long double)d * fast_pow10l(e);
    int ex = ld_exponent(r);
    if (ex < DBL_MIN_EXP || ex > DBL_MAX_EXP - 1)
        return exact_reads_back(d, e, v);
    unsigned low = (unsigned)(ld_mantissa(r) & 0x7ff);
    if (low >= 0x400 - 3 && low <= 0x400 + 3)
        return exact_reads_back(d, e, v);
    return (double)r == v;
}

/* v correctly rounded to p significant digits (ties to even), given
 * e10 = floor(log10 v): digits *d (10^(p-1) <= d < 10^p) times 10^*e.
 * v * 10^k is known from its long double value s to 2^-63 s (see
 * fast_reads_back); when s lies within 2^-61 s of a halfway point, big
 * integers compare v * 10^k with it. 0: not decided (not expected). */
static int fast_digits(double v, int e10, int p, uint64_t *d, int *e)
{
    int k = p - 1 - e10;
    long double s = (long double)v * fast_pow10l(k);
    if (!(s < 0x1p62L))
        return 0;
    uint64_t x = ld_round(s);
    long double off = s - (long double)x; /* exact, |off| <= 1/2 */
    if (0.5L - fabsl(off) <= s * 0x1p-61L) {
        uint64_t below = off < 0 ? x - 1 : x, m; /* floor of v * 10^k */
        int q, sign;
        split_double(v, &m, &q);
        /* m * 2^q * 10^k against below + 1/2 */
        if (!bigcmp_scaled(m, q + k, k, 2 * below + 1, -1, 0, &sign))
            return 0;
        x = below + (sign > 0 || (sign == 0 && (below & 1)));
    }
    if (x == ten_to[p]) { /* rounding carried into a new digit */
        x /= 10;
        k--;
    }
    if (x < ten_to[p - 1] || x >= ten_to[p])
        return 0; /* e10 was not floor(log10 v): not expected */
    *d = x;
    *e = -k;
    return 1;
}

/* Digits at precision p if they read back as v: 1; they do not: 0;
 * undecidable here: -1. 17 digits always read back. */
static int fast_try(double v, int e10, int p, uint64_t *d, int *e)
{
    if (!fast_digits(v, e10, p, d, e))
        return -1;
    return p == 17 ? 1 : fast_reads_back(*d, *e, v);
}

/* The shortest length from the rounding interval: the interval's ends,
 * scaled to 17 digits before the point, are known to about 2^-62 of their
 * size; the largest j such that a multiple of 10^j lies between them gives
 * 17 - j digits. An estimate only: fast_shortest() confirms it. */
static int fast_estimate(long double lo_end, long double hi_end)
{
    uint64_t hi = ld_round(hi_end), lo = ld_round(lo_end);
    hi -= (long double)hi > hi_end; /* floor */
    lo -= (long double)lo >= lo_end; /* ceil - 1: multiples in (lo, hi] */
    int j = 0;
    if (hi / 100000000 > lo / 100000000) { /* 9 digits or fewer */
        hi /= 100000000;
        lo /= 100000000;
        j = 8;
    }
    while (j < 16 && hi / 10 > lo / 10) {
        hi /= 10;
        lo /= 10;
        j++;
    }
    return 17 - j;
}

/* Shortest digits for a normal v > 0 that is not a power of two (whose
 * rounding interval is symmetric, so "reads back" is monotone in p: the
 * correctly rounded p + 1 digits are at least as close to v): estimate p from
 * the interval, then step until p reads back and p - 1 does not, every step
 * decided exactly. 0: decide elsewhere. */
static int scaled_shortest(double v, int e2, int e10, uint64_t *digits, int *exp10)
{
    long double lv = v, pw = fast_pow10l(16 - e10);
    long double scaled = lv * pw;
    if (scaled >= 1e17L) {
        e10++;
        pw = fast_pow10l(16 - e10);
        scaled = lv * pw;
    }
    /* scaled is within 2^-62 of itself from v * 10^(16-e10): outside these
     * margins e10 is exact; values this close to a power of ten (10^n
     * itself, for one) go to the general path */
    if (!(scaled > 1e16L * (1 + 0x1p-59L) && scaled < 1e17L * (1 - 0x1p-59L)))
        return 0;
    long double half_ulp = ld_pow2(e2 - 53);
    int p = fast_estimate((lv - half_ulp) * pw, (lv + half_ulp) * pw);
    uint64_t d, best_d;
    int e, best_e;
    int ok = fast_try(v, e10, p, &d, &e);
    if (ok < 0)
        return 0;
    if (ok) {
        best_d = d;
        best_e = e;
        while (p > 1 && (ok = fast_try(v, e10, p - 1, &d, &e)) == 1) {
            p--;
            best_d = d;
            best_e = e;
        }
        if (ok < 0)
            return 0;
    } else {
        do {
            ok = fast_try(v, e10, ++p, &d, &e);
            if (ok < 0)
                return 0;
        } while (!ok);
        best_d = d;
        best_e = e;
    }
    *digits = best_d;
    *exp10 = best_e;
    return 1;
}
#else
static int scaled_shortest(double v, int e2, int e10, uint64_t *digits, int *exp10)
{
    (void)v, (void)e2, (void)e10, (void)digits, (void)exp10;
    return 0;
}
#endif

/* Shortest digits of a normal v > 0 by the exact path or (not for powers
 * of two) the scaled one; 0: decide elsewhere. */
static int fast_shortest(double v, uint64_t *digits, int *exp10)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int biased = (int)(bits >> 52);
    uint64_t fraction = bits & (((uint64_t)1 << 52) - 1);
    if (biased == 0)
        return 0;
    int e2 = biased - 1023;
    /* floor(e2 log10 2), exact for |e2| <= 1100 (tests/test_numtext.c);
     * the shift of a negative number is arithmetic on the compilers this
     * builds with */
    int e10 = (e2 * 78913) >> 18;
    return exact_shortest(fraction | (uint64_t)1 << 52, e2 - 52, e10, digits, exp10) ||
           (fraction != 0 && scaled_shortest(v, e2, e10, digits, exp10));
}

/* ---- printing, general path ------------------------------------------- */

/* Shortest digits: 17 always read back; most computed values need 16 or 17,
 * so 16 and 15 are tried first, then a binary search below 15. 0 sends the
 * value to snprintf. */
static int shortest(double v, uint64_t *digits, int *exp10)
{
    int e10 = (int)floor(log10(v));
    /* every precision 1..17 must scale by at most 10^27 */
    if (e10 > 26 || e10 < -10)
        return 0;
    /* make e10 exact: 10^e10 <= v < 10^(e10+1) */
    uint64_t d;
    int e, rc = digits_at(v, e10, 17, &d, &e);
    if (rc == -1 || rc == -2) {
        e10 += rc == -1 ? 1 : -1;
        rc = digits_at(v, e10, 17, &d, &e);
    }
    if (rc != 1)
        return 0;
    /* correctly rounded to 17 digits (digits_at refuses what it cannot round) */
    uint64_t best_d = d;
    int best_e = e;
    int hi = 17;
    for (int p = 16; p >= 15; p--) {
        int ok = try_precision(v, e10, p, &d, &e);
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
        int ok = try_precision(v, e10, mid, &d, &e);
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

static int shortest_by_snprintf(double v, uint64_t *digits, int *exp10)
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

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Writes exactly 8 digits of x (< 10^8, leading zeros kept) ending just
 * before end. */
static void put_8_digits(uint32_t x, char *end)
{
    uint32_t hi = x / 10000, lo = x % 10000;
    memcpy(end - 2, digit_pairs + 2 * (lo % 100), 2);
    memcpy(end - 4, digit_pairs + 2 * (lo / 100), 2);
    memcpy(end - 6, digit_pairs + 2 * (hi % 100), 2);
    memcpy(end - 8, digit_pairs + 2 * (hi / 100), 2);
}

/* Writes the decimal digits of d (> 0) ending just before end; returns
 * their count. Eight digits at a time from the right: two short
 * dependency chains instead of one long one. */
static int put_digits(uint64_t d, char *end)
{
    char *p = end;
    while (d >= 100000000) {
        put_8_digits((uint32_t)(d % 100000000), p);
        d /= 100000000;
        p -= 8;
    }
    uint32_t x = (uint32_t)d;
    while (x >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * x, 2);
    } else {
        *--p = (char)('0' + x);
    }
    return (int)(end - p);
}

int numtext_format_shortest(double v, char *buf)
{
    char *out = buf;
    if (isnan(v)) {
        memcpy(buf, "nan", 4);
        return 3;
    }
    if (signbit(v)) {
        *out++ = '-';
        v = -v;
    }
    if (isinf(v)) {
        memcpy(out, "inf", 4);
        return (int)(out - buf) + 3;
    }
    if (v == 0) {
        memcpy(out, "0.0", 4);
        return (int)(out - buf) + 3;
    }
    uint64_t d;
    int e;
    if (!fast_shortest(v, &d, &e) && !shortest(v, &d, &e))
        shortest_by_snprintf(v, &d, &e);
    while (d % 10 == 0 && d) {
        d /= 10;
        e++;
    }
    char space[24];
    int n = put_digits(d, space + sizeof space);
    const char *digits = space + sizeof space - n;
    int point = n + e; /* decimal point after this many digits */
    int sci = point - 1; /* exponent in scientific notation */
    if (sci < -4 || sci >= 16) {
        *out++ = digits[0];
        if (n > 1) {
            *out++ = '.';
            memcpy(out, digits + 1, (size_t)(n - 1));
            out += n - 1;
        }
        *out++ = 'e';
        *out++ = sci < 0 ? '-' : '+';
        int a = sci < 0 ? -sci : sci;
        if (a >= 100) {
            *out++ = (char)('0' + a / 100);
            a %= 100;
        }
        *out++ = (char)('0' + a / 10);
        *out++ = (char)('0' + a % 10);
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
