/*
 * sim_rng.h — the seeded random numbers of the simulator (splitmix64): the
 * state is a value the caller owns and passes in, so a seed gives the same
 * sampled steps on every machine.
 */
#ifndef PERFCAST_SIM_RNG_H
#define PERFCAST_SIM_RNG_H

#include <stdint.h>

typedef struct sim_rng {
    uint64_t s;
} sim_rng;

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n >= 1 (the bias of the modulo is below 2^-40 for the
 * step counts the simulator sees). */
static inline int sim_rng_below(sim_rng *r, int n)
{
    return (int)(sim_rng_next(r) % (uint64_t)n);
}

/* The seed of replication k of a run seeded with seed. */
static inline uint64_t sim_rng_derive(uint64_t seed, uint64_t k)
{
    sim_rng r = {seed ^ (k * 0xd1b54a32d192ed03ULL)};
    return sim_rng_next(&r);
}

#endif
