/*
 * numtext_samples.h — doubles that exercise shortest-decimal printing, by
 * kind, for tests/test_numtext.c and bench/bench_numtext.c: random bit
 * patterns, few-digit decimals, computed statistics (sums, means, standard
 * deviations, confidence bounds, ratios), powers of two and ten and their
 * neighbours, subnormals, huge and tiny exponents, integers near 2^53 and
 * halfway cases (dyadic fractions whose decimals end in 5). Deterministic
 * from a caller-owned xorshift state; everything static, header only.
 */
#ifndef PERFCAST_NUMTEXT_SAMPLES_H
#define PERFCAST_NUMTEXT_SAMPLES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

enum numtext_kind {
    NUMTEXT_RANDOM_BITS, /* any finite bit pattern */
    NUMTEXT_FEW_DIGITS,  /* k / 10^j and k * 10^j, k of 1..6 digits */
    NUMTEXT_COMPUTED,    /* means, SDs, CI bounds, sums and ratios */
    NUMTEXT_POWERS,      /* 2^e, 10^e and their neighbours */
    NUMTEXT_SUBNORMAL,   /* below 2^-1022 */
    NUMTEXT_EXTREME,     /* exponents beyond 10^+-250 */
    NUMTEXT_NEAR_2P53,   /* integers and halves around 2^53 */
    NUMTEXT_HALFWAY,     /* k / 2^j: decimals ending in 5 */
    NUMTEXT_KINDS
};

static uint64_t numtext_sample_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double numtext_sample_bits(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* A statistic of a few measurements with three decimals, as the service
 * reports them: mean, standard deviation, a 95% bound, a sum or a ratio. */
static double numtext_sample_statistic(uint64_t *s)
{
    int n = 3 + (int)(numtext_sample_next(s) % 30);
    double scale = pow(10, (int)(numtext_sample_next(s) % 9) - 4);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        double x = (double)(numtext_sample_next(s) % 1000000) / 1000 * scale;
        sum += x;
        sq += x * x;
    }
    double mean = sum / n, var = (sq - n * mean * mean) / (n - 1);
    double sd = var > 0 ? sqrt(var) : 0;
    switch (numtext_sample_next(s) % 5) {
    case 0: return mean;
    case 1: return sd;
    case 2: return mean + 1.96 * sd / sqrt(n);
    case 3: return sum;
    default: return sum / (1 + (double)(numtext_sample_next(s) % 100000) / 7);
    }
}

static double numtext_sample(uint64_t *s, enum numtext_kind kind)
{
    uint64_t r = numtext_sample_next(s);
    double v;
    switch (kind) {
    case NUMTEXT_RANDOM_BITS:
        do
            v = numtext_sample_bits(numtext_sample_next(s));
        while (!isfinite(v));
        return v;
    case NUMTEXT_FEW_DIGITS: {
        static const uint64_t mod[] = {10, 100, 1000, 10000, 100000, 1000000};
        double k = (double)(1 + r % mod[numtext_sample_next(s) % 6]);
        int j = (int)(numtext_sample_next(s) % 40);
        return j < 25 ? k / pow(10, j) : k * pow(10, j - 25);
    }
    case NUMTEXT_COMPUTED:
        return numtext_sample_statistic(s);
    case NUMTEXT_POWERS: {
        int two = r & 1;
        double p = two ? ldexp(1, (int)(numtext_sample_next(s) % 2098) - 1074)
                       : pow(10, (int)(numtext_sample_next(s) % 632) - 323);
        for (int steps = (int)(numtext_sample_next(s) % 5) - 2; steps; steps += steps < 0 ? 1 : -1)
            p = nextafter(p, steps < 0 ? 0 : INFINITY);
        return p == 0 || isinf(p) ? 1 : p;
    }
    case NUMTEXT_SUBNORMAL:
        return numtext_sample_bits(1 + r % (((uint64_t)1 << 52) - 1));
    case NUMTEXT_EXTREME: {
        uint64_t exp = r & 1 ? 1 + numtext_sample_next(s) % 200 : 1846 + numtext_sample_next(s) % 200;
        return numtext_sample_bits(exp << 52 | (numtext_sample_next(s) >> 12));
    }
    case NUMTEXT_NEAR_2P53: {
        double base = 9007199254740992.0 + (double)((int64_t)(r % 4001) - 2000) * 2;
        return ldexp(base, (int)(numtext_sample_next(s) % 5) - 2);
    }
    case NUMTEXT_HALFWAY:
    default: {
        int j = 1 + (int)(r % 60);
        uint64_t k = 1 + 2 * (numtext_sample_next(s) % ((uint64_t)1 << 40));
        return ldexp((double)k, -j) * (numtext_sample_next(s) % 3 ? 1 : pow(10, (int)(r % 9) - 4));
    }
    }
}

#endif
