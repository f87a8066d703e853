/*
 * extrap_table.c — the hash table the readers look names, coordinates,
 * series and points up in.
 *
 * Inputs may hold hundreds of thousands of callpaths and series, so every
 * "have we seen this before" question goes through an ingest_idtab: open
 * addressing with linear probing, at most half full, storing for each slot
 * the key's 32-bit hash and the id of the entry in the caller's own array.
 * The table never sees keys; the caller compares candidates itself. Hashes
 * are seeded per read so that input crafted to collide for one seed does not
 * collide for the next.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ingest/extrap_internal.h"

void ingest_idtab_free(ingest_idtab *t)
{
    free(t->slot);
    t->slot = NULL;
    t->mask = 0;
    t->count = 0;
}

int32_t ingest_idtab_first(const ingest_idtab *t, uint32_t hash, ingest_probe *p)
{
    p->hash = hash;
    p->pos = hash & t->mask;
    return ingest_idtab_next(t, p);
}

int32_t ingest_idtab_next(const ingest_idtab *t, ingest_probe *p)
{
    if (t->slot == NULL)
        return -1;
    for (;;) {
        const ingest_slot *s = &t->slot[p->pos];
        if (s->id < 0)
            return -1;
        p->pos = (p->pos + 1) & t->mask;
        if (s->hash == p->hash)
            return s->id;
    }
}

static void idtab_place(ingest_slot *slot, size_t mask, uint32_t hash, int32_t id)
{
    size_t pos = hash & mask;
    while (slot[pos].id >= 0)
        pos = (pos + 1) & mask;
    slot[pos].hash = hash;
    slot[pos].id = id;
}

/* Doubles the slot count (or allocates the first 16) and re-places entries. */
static int idtab_grow(ingest_idtab *t)
{
    size_t old_slots = t->slot ? t->mask + 1 : 0;
    size_t slots = old_slots ? old_slots * 2 : 16;
    if (slots > SIZE_MAX / sizeof(ingest_slot) / 2)
        return -1;
    ingest_slot *slot = malloc(slots * sizeof(*slot));
    if (!slot)
        return -1;
    for (size_t i = 0; i < slots; i++)
        slot[i].id = -1;
    for (size_t i = 0; i < old_slots; i++)
        if (t->slot[i].id >= 0)
            idtab_place(slot, slots - 1, t->slot[i].hash, t->slot[i].id);
    free(t->slot);
    t->slot = slot;
    t->mask = slots - 1;
    return 0;
}

int ingest_idtab_add(ingest_idtab *t, uint32_t hash, int32_t id)
{
    if (t->slot == NULL || (t->count + 1) * 2 > t->mask + 1) {
        if (idtab_grow(t) < 0)
            return -1;
    }
    idtab_place(t->slot, t->mask, hash, id);
    t->count++;
    return 0;
}

/* The 64-bit finalizer of MurmurHash3: spreads every input bit. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

uint64_t ingest_hash_seed(void)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&ts);
    }
    return seed;
}

uint32_t ingest_hash_bytes(uint64_t seed, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = seed ^ 0xcbf29ce484222325ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, len);
    h = mix64(h ^ tail ^ ((uint64_t)len << 56));
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t ingest_hash_pair(uint64_t seed, uint32_t a, uint32_t b)
{
    uint64_t h = mix64(mix64(seed ^ a) ^ b);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t ingest_hash_doubles(uint64_t seed, const double *v, int n)
{
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < n; i++) {
        double d = v[i] == 0.0 ? 0.0 : v[i];
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        h = mix64(h ^ bits) + (uint64_t)i;
    }
    return (uint32_t)(h ^ (h >> 32));
}
