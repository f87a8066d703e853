/*
 * gen_core.h — synthetic PMNF measurement series with known ground truth.
 *
 * The generator behind bench/gen_pmnf.c (which writes the series to Extra-P
 * text files plus a truth file) and bench/bench_modeler.c (which fits them in
 * memory). Each callpath is c0 + c1 * t(p) for one parameter, and for two
 * either c0 + c1 * t(p) * t(n) or c0 + c1 * t(p) + c2 * t(n), where each t is
 * one of Extra-P's 42 default building blocks x^(num/den) * log2(x)^log; the
 * repetitions carry uniform relative noise. The measured coordinates and the
 * held-out extrapolation points are fixed per parameter count.
 *
 * Randomness comes from xoshiro256** seeded through splitmix64, so a seed
 * gives the same data on every machine. Header-only: everything is static
 * inline and there is no state outside a gen_rng.
 */
#ifndef PERFCAST_BENCH_GEN_CORE_H
#define PERFCAST_BENCH_GEN_CORE_H

#include <math.h>
#include <stdint.h>

/* ---- random numbers ---------------------------------------------------- */

typedef struct gen_rng {
    uint64_t s[4];
} gen_rng;

static inline uint64_t gen_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void gen_rng_seed(gen_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = gen_splitmix64(&seed);
}

static inline uint64_t gen_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
static inline uint64_t gen_rng_next(gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = gen_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gen_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double gen_rng_double(gen_rng *r)
{
    return (double)(gen_rng_next(r) >> 11) * 0x1.0p-53;
}

static inline double gen_rng_uniform(gen_rng *r, double a, double b)
{
    return a + (b - a) * gen_rng_double(r);
}

/* Uniform integer in [0, n), n > 0 (bias below 2^-32 for the small n used here). */
static inline int gen_rng_below(gen_rng *r, int n)
{
    return (int)(((gen_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ---- building blocks ---------------------------------------------------- */

typedef struct gen_block {
    int num, den, log; /* x^(num/den) * log2(x)^log */
} gen_block;

/* Extra-P's default single-parameter building blocks, in Extra-P's order. */
static const gen_block GEN_BLOCKS[] = {
    {0, 1, 1}, {0, 1, 2}, {1, 4, 0}, {1, 3, 0}, {1, 4, 1}, {1, 3, 1}, {1, 4, 2}, {1, 3, 2},
    {1, 2, 0}, {1, 2, 1}, {1, 2, 2}, {2, 3, 0}, {3, 4, 0}, {2, 3, 1}, {3, 4, 1}, {4, 5, 0},
    {2, 3, 2}, {3, 4, 2}, {1, 1, 0}, {1, 1, 1}, {1, 1, 2}, {5, 4, 0}, {5, 4, 1}, {4, 3, 0},
    {4, 3, 1}, {3, 2, 0}, {3, 2, 1}, {3, 2, 2}, {5, 3, 0}, {7, 4, 0}, {2, 1, 0}, {2, 1, 1},
    {2, 1, 2}, {9, 4, 0}, {7, 3, 0}, {5, 2, 0}, {5, 2, 1}, {5, 2, 2}, {8, 3, 0}, {11, 4, 0},
    {3, 1, 0}, {3, 1, 1},
};
#define GEN_NBLOCKS ((int)(sizeof GEN_BLOCKS / sizeof GEN_BLOCKS[0]))

static inline double gen_block_eval(const gen_block *b, double x)
{
    double v = pow(x, (double)b->num / b->den);
    return b->log ? v * pow(log2(x), b->log) : v;
}

/* ---- coordinates -------------------------------------------------------- */

#define GEN_MAX_PARAMS 2
#define GEN_MAX_POINTS 25
#define GEN_MAX_EVAL 4

typedef struct gen_layout {
    int nparams;
    const char *names[GEN_MAX_PARAMS];
    int npoints;                             /* measured coordinates */
    double points[GEN_MAX_POINTS][GEN_MAX_PARAMS];
    int neval;                               /* held-out extrapolation points */
    double eval[GEN_MAX_EVAL][GEN_MAX_PARAMS];
} gen_layout;

/* nparams 1: p in {4..64}, evaluated at 128, 256, 512.
 * nparams 2: the 5x5 grid p in {4..64} x n in {10..50}, p outer; evaluated at
 * (128,100), (256,200), (128,50), (64,100). Returns 0, or -1 for other counts. */
static inline int gen_layout_init(gen_layout *l, int nparams)
{
    static const double xs[5] = {4, 8, 16, 32, 64}, ys[5] = {10, 20, 30, 40, 50};
    static const double eval1[3] = {128, 256, 512};
    static const double eval2[4][2] = {{128, 100}, {256, 200}, {128, 50}, {64, 100}};
    l->nparams = nparams;
    l->names[0] = "p";
    l->names[1] = "n";
    l->npoints = 0;
    if (nparams == 1) {
        for (int i = 0; i < 5; i++)
            l->points[l->npoints++][0] = xs[i];
        l->neval = 3;
        for (int i = 0; i < 3; i++)
            l->eval[i][0] = eval1[i];
        return 0;
    }
    if (nparams == 2) {
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) {
                l->points[l->npoints][0] = xs[i];
                l->points[l->npoints++][1] = ys[j];
            }
        l->neval = 4;
        for (int i = 0; i < 4; i++) {
            l->eval[i][0] = eval2[i][0];
            l->eval[i][1] = eval2[i][1];
        }
        return 0;
    }
    return -1;
}

/* ---- ground truth ------------------------------------------------------- */

typedef struct gen_truth {
    double c0, c1, c2;           /* c2 is 0 unless two parameters are added */
    int blocks[GEN_MAX_PARAMS];  /* indices into GEN_BLOCKS, one per parameter */
    int multiplicative;          /* two parameters: product instead of sum */
} gen_truth;

/* Draws one callpath's function: c0 is 0 or uniform in [1, 100) with equal
 * chance, one block per parameter, c1 and c2 uniform in [0.5, 20); with two
 * parameters the terms are multiplied with probability 1/2. */
static inline void gen_truth_draw(gen_rng *r, int nparams, gen_truth *t)
{
    double c0 = gen_rng_uniform(r, 1, 100);
    t->c0 = gen_rng_below(r, 2) ? c0 : 0.0;
    for (int i = 0; i < nparams; i++)
        t->blocks[i] = gen_rng_below(r, GEN_NBLOCKS);
    t->c1 = gen_rng_uniform(r, 0.5, 20);
    t->multiplicative = nparams == 2 && gen_rng_double(r) < 0.5;
    t->c2 = nparams == 2 && !t->multiplicative ? gen_rng_uniform(r, 0.5, 20) : 0.0;
}

static inline double gen_truth_eval(const gen_truth *t, int nparams, const double *point)
{
    double a = gen_block_eval(&GEN_BLOCKS[t->blocks[0]], point[0]);
    if (nparams == 1)
        return t->c0 + t->c1 * a;
    double b = gen_block_eval(&GEN_BLOCKS[t->blocks[1]], point[1]);
    if (t->multiplicative)
        return t->c0 + t->c1 * a * b;
    return t->c0 + t->c1 * a + t->c2 * b;
}

/* reps measurements of a true value v, each v * (1 + u), u uniform in [-noise, noise). */
static inline void gen_measure(gen_rng *r, double v, double noise, int reps, double *out)
{
    for (int i = 0; i < reps; i++)
        out[i] = v * (1 + gen_rng_uniform(r, -noise, noise));
}

#endif
