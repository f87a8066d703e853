/*
 * memtrim.c — freed heap memory given back after large work, the calling
 * thread's arena top included (memtrim.h).
 *
 * A thread arena's top is shrunk by glibc only inside free(), when the
 * chunk freed (merged with its free neighbours) is 64 KiB or more and the
 * top is at least M_TRIM_THRESHOLD. memtrim() sets the threshold to 0,
 * frees such a chunk of its own in the calling thread's arena, and sets the
 * threshold back. The threshold is one process-wide setting: the calls are
 * serialized here, and another thread freeing a large chunk in that moment
 * trims its own arena too, which costs it nothing but the pages.
 */
#include "common/memtrim.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

/* Above glibc's 64 KiB at which free() trims, below its smallest dynamic
 * mmap threshold (128 KiB): taken from the heap of this thread's arena. */
#define MEMTRIM_PROBE ((size_t)96 << 10)

static pthread_mutex_t memtrim_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t memtrim_threshold = MEMTRIM_DEFAULT_THRESHOLD;

void memtrim_init(size_t threshold)
{
    pthread_mutex_lock(&memtrim_mu);
    memtrim_threshold = threshold;
    mallopt(M_TRIM_THRESHOLD, (int)threshold);
    pthread_mutex_unlock(&memtrim_mu);
}

void memtrim_release(void (*release)(void *), void *arg)
{
    pthread_mutex_lock(&memtrim_mu);
    mallopt(M_TRIM_THRESHOLD, 0);
    release(arg);
    mallopt(M_TRIM_THRESHOLD, (int)memtrim_threshold);
    pthread_mutex_unlock(&memtrim_mu);
    malloc_trim(0);
}

/* A block of this thread's arena, freed: its top is trimmed. */
static void free_probe(void *unused)
{
    (void)unused;
    void *probe = malloc(MEMTRIM_PROBE);
    if (probe)
        ((volatile char *)probe)[0] = 0; /* kept: the free below must happen */
    free(probe);
}

void memtrim(void)
{
    memtrim_release(free_probe, NULL);
}
