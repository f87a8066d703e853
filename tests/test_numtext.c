/*
 * test_numtext.c — common/numtext against glibc: parsing must equal strtod
 * bit for bit, printing must give the shortest string that reads back
 * (Python's repr), on random bit patterns, short decimals and wide ranges;
 * and printing must equal the previous implementation
 * (tests/numtext_reference.h) byte for byte on every kind of value of
 * tests/numtext_samples.h, all powers of two and ten and their neighbours.
 * bench/bench_numtext.c repeats the comparison on 20 million values.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"
#include "tests/check.h"
#include "tests/numtext_reference.h"
#include "tests/numtext_samples.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Python's repr by brute force: the shortest %.{p}e that reads back. */
static void repr_reference(double v, char *buf)
{
    char t[40], dig[24];
    int p, n = 0;
    for (p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*e", p - 1, v);
        if (strtod(t, NULL) == v)
            break;
    }
    const char *q = t;
    char *o = buf;
    if (*q == '-')
        *o++ = *q++;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            dig[n++] = *q;
    while (n > 1 && dig[n - 1] == '0')
        n--;
    int e = atoi(q + 1);
    if (e < -4 || e >= 16) {
        *o++ = dig[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, (size_t)(n - 1));
            o += n - 1;
        }
        sprintf(o, "e%c%02d", e < 0 ? '-' : '+', abs(e));
        return;
    }
    if (e < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++)
            *o++ = '0';
        memcpy(o, dig, (size_t)n);
        o += n;
    } else {
        for (int i = 0; i <= e; i++)
            *o++ = i < n ? dig[i] : '0';
        *o++ = '.';
        if (n > e + 1) {
            memcpy(o, dig + e + 1, (size_t)(n - e - 1));
            o += n - e - 1;
        } else {
            *o++ = '0';
        }
    }
    *o = '\0';
}

static double sample(uint64_t *s, long i)
{
    uint64_t r = next(s);
    double v;
    switch (i % 3) {
    case 0:
        memcpy(&v, &r, sizeof v);
        return v;
    case 1:
        return (double)(r % 100000) / (double)(1 + next(s) % 1000);
    default:
        return ((double)(r >> 11) / 9007199254740992.0) * pow(10, (int)(next(s) % 40) - 20);
    }
}

static void test_against_glibc(void)
{
    uint64_t s = 88172645463325252ULL;
    long fmt_bad = 0, parse_bad = 0, n = 0;
    char a[40], b[40], t[40];
    for (long i = 0; i < 400000; i++) {
        double v = sample(&s, i);
        if (!isfinite(v))
            continue;
        n++;
        numtext_format_shortest(v, a);
        repr_reference(v, b);
        if (strcmp(a, b) && fmt_bad++ < 5)
            fprintf(stderr, "format %.17g: %s, want %s\n", v, a, b);
        snprintf(t, sizeof t, "%.*g", (int)(next(&s) % 17) + 1, v);
        double x;
        size_t used = numtext_parse(t, strlen(t), &x);
        double y = strtod(t, NULL);
        if ((used != strlen(t) || memcmp(&x, &y, sizeof x)) && parse_bad++ < 5)
            fprintf(stderr, "parse %s: %.17g, want %.17g\n", t, x, y);
    }
    check(fmt_bad == 0, "%ld of %ld values printed differently from repr()", fmt_bad, n);
    check(parse_bad == 0, "%ld of %ld numbers parsed differently from strtod", parse_bad, n);
}

static void test_cases(void)
{
    struct {
        const char *text;
        size_t used;
        double want;
    } p[] = {
        {"82.00848518948744", 17, 82.00848518948744},
        {"-1.5e-3,", 7, -1.5e-3},
        {"1E+5 ", 4, 1e5},
        {".5", 2, 0.5},
        {"5.", 2, 5.0},
        {"0.000000000000000000000000000012345678901234567890123", 53,
         1.2345678901234567890123e-29},
        {"123456789012345678901234567890", 30, 1.2345678901234568e29},
        {"1e400", 5, INFINITY},
        {"4.9e-324", 8, 4.9e-324},
        {"abc", 0, 0},
        {"-", 0, 0},
        {"1e", 1, 1},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        double v = 0;
        size_t used = numtext_parse(p[i].text, strlen(p[i].text), &v);
        check(used == p[i].used && (used == 0 || v == p[i].want), "parse \"%s\": used %zu value %.17g",
              p[i].text, used, v);
    }
    /* never reads past len */
    double v;
    check(numtext_parse("12345", 2, &v) == 2 && v == 12, "stops at len");
    char buf[40];
    numtext_format_shortest(-0.0, buf);
    check(!strcmp(buf, "-0.0"), "-0.0: %s", buf);
    numtext_format_shortest(NAN, buf);
    check(!strcmp(buf, "nan"), "nan: %s", buf);
    numtext_format_shortest(-INFINITY, buf);
    check(!strcmp(buf, "-inf"), "-inf: %s", buf);
    numtext_format_shortest(5e-324, buf);
    check(!strcmp(buf, "5e-324"), "denormal: %s", buf);
    numtext_format_shortest(1e22, buf);
    check(!strcmp(buf, "1e+22"), "1e22: %s", buf);
    /* Python's repr(): powers of two, among them those whose read-back is
     * not monotone in the precision (2^149: 14 and 15 digits read back, 16
     * do not), short and long decimals */
    struct {
        double v;
        const char *text;
    } r[] = {
        {0x1p149, "7.1362384635298e+44"},     {0x1p-499, "6.10987272699921e-151"},
        {0x1p966, "6.237000967296e+290"},       {0.5, "0.5"},
        {0.125, "0.125"},                     {0x1p-36, "1.4551915228366852e-11"},
        {0x1p56, "7.205759403792794e+16"},    {0.1, "0.1"},
        {1e-05, "1e-05"},                     {1.5e16, "1.5e+16"},
        {123456789.125, "123456789.125"},     {9007199254740993.0, "9007199254740992.0"},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        numtext_format_shortest(r[i].v, buf);
        check(!strcmp(buf, r[i].text), "%a: %s, want %s", r[i].v, buf, r[i].text);
    }
}

/* new and reference text for v must be the same bytes */
static long compare_one(double v, long *bad)
{
    char a[40], b[40];
    int na = numtext_format_shortest(v, a), nb = numtext_ref_format_shortest(v, b);
    if ((na != nb || strcmp(a, b)) && (*bad)++ < 5)
        fprintf(stderr, "%a: %s, the reference %s\n", v, a, b);
    return 1;
}

static void test_against_reference(void)
{
    /* the reference takes microseconds (snprintf) on wide exponents and
     * subnormals: fewer of those, millions of the rest */
    static const long count[NUMTEXT_KINDS] = {
        [NUMTEXT_RANDOM_BITS] = 20000, [NUMTEXT_FEW_DIGITS] = 600000,
        [NUMTEXT_COMPUTED] = 600000, [NUMTEXT_POWERS] = 10000,
        [NUMTEXT_SUBNORMAL] = 4000, [NUMTEXT_EXTREME] = 10000,
        [NUMTEXT_NEAR_2P53] = 200000, [NUMTEXT_HALFWAY] = 400000,
    };
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    long bad = 0, n = 0;
    for (int kind = 0; kind < NUMTEXT_KINDS; kind++)
        for (long i = 0; i < count[kind]; i++)
            n += compare_one((i & 1 ? -1 : 1) * numtext_sample(&s, (enum numtext_kind)kind), &bad);
    /* every power of two and of ten, two neighbours each side */
    for (int e = -1074; e <= 1023; e++)
        for (int t = 0; t < 2; t++) {
            double p = t ? ldexp(1, e) : pow(10, e);
            if (p == 0 || isinf(p) || (!t && e > 308))
                continue;
            double lo = p, hi = p;
            n += compare_one(p, &bad);
            for (int k = 0; k < 2; k++) {
                lo = nextafter(lo, 0);
                hi = nextafter(hi, INFINITY);
                if (lo > 0)
                    n += compare_one(lo, &bad);
                if (isfinite(hi))
                    n += compare_one(hi, &bad);
            }
        }
    check(bad == 0, "%ld of %ld values printed differently from the reference", bad, n);
}

/* the printer's floor(log10 2^e) = (e * 78913) >> 18 over every binary
 * exponent a double has, against the exponent of 2^e printed by glibc */
static void test_exponent_estimate(void)
{
    long bad = 0;
    for (int e = -1074; e <= 1023; e++) {
        char t[40];
        snprintf(t, sizeof t, "%.17e", ldexp(1, e));
        int want = atoi(strchr(t, 'e') + 1), got = (e * 78913) >> 18;
        if (got != want && bad++ < 5)
            fprintf(stderr, "2^%d: estimate %d, want %d\n", e, got, want);
    }
    check(bad == 0, "%ld binary exponents with a wrong decimal exponent estimate", bad);
}

int main(void)
{
    test_exponent_estimate();
    test_cases();
    test_against_glibc();
    test_against_reference();
    return check_summary();
}
