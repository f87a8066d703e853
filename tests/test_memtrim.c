/*
 * test_memtrim.c — common/memtrim: with the server's malloc settings (64 MB
 * trim threshold, blocks up to 32 MB from the heap), a thread that freed
 * 16 MiB of 256 KiB blocks keeps them as its arena's free top (malloc_trim
 * alone gives none of it back); memtrim() from that thread gives it back to
 * within a page pad, and leaves the threshold as it was, so the same work
 * again is kept again until the next memtrim(). Blocks another thread
 * allocated (as a pooled connection's libpq buffers) and this one frees in
 * memtrim_release() give back that thread's arena top, which free() and
 * malloc_trim alone keep. Sizes are read from mallinfo2() (bytes the arenas
 * hold from the system); no times.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/memtrim.h"
#include "tests/check.h"
#include "tests/under_asan.h"


#define BLOCK ((size_t)256 << 10)
#define NBLOCKS 64 /* 16 MiB */
#define MIB (1024.0 * 1024.0)

typedef struct sizes {
    double before;       /* the arenas' bytes before the work */
    double freed;        /* after the blocks were freed */
    double trimmed_libc; /* after malloc_trim(0) alone */
    double trimmed;      /* after memtrim() */
    double again;        /* after the same work again */
    double end;          /* after memtrim() again */
    int no_memory;
} sizes;

static double arena_bytes(void)
{
    return (double)mallinfo2().arena;
}

/* Allocates, writes and frees NBLOCKS blocks; 0, or -1 out of memory. */
static int work(void)
{
    void *b[NBLOCKS];
    int n = 0;
    for (; n < NBLOCKS; n++) {
        b[n] = malloc(BLOCK);
        if (!b[n])
            break;
        memset(b[n], n + 1, BLOCK);
    }
    for (int i = n - 1; i >= 0; i--)
        free(b[i]);
    return n == NBLOCKS ? 0 : -1;
}

static void *thread_main(void *arg)
{
    sizes *s = arg;
    free(malloc(64)); /* this thread's arena exists before the first figure */
    s->before = arena_bytes();
    s->no_memory |= work();
    s->freed = arena_bytes();
    malloc_trim(0);
    s->trimmed_libc = arena_bytes();
    memtrim();
    s->trimmed = arena_bytes();
    s->no_memory |= work();
    s->again = arena_bytes();
    memtrim();
    s->end = arena_bytes();
    return NULL;
}

static void __attribute__((unused)) test_thread_arena(void)
{
    sizes s = {0};
    pthread_t t;
    check(!pthread_create(&t, NULL, thread_main, &s), "thread started");
    pthread_join(t, NULL);
    check(!s.no_memory, "the blocks were allocated");
    printf("arenas: %.1f MiB before, %.1f freed, %.1f after malloc_trim, %.1f after memtrim, "
           "%.1f again, %.1f at the end\n",
           s.before / MIB, s.freed / MIB, s.trimmed_libc / MIB, s.trimmed / MIB, s.again / MIB,
           s.end / MIB);
    /* the scenario: the thread's arena keeps what it freed */
    check(s.freed - s.before >= 15 * MIB, "freed blocks kept as the arena's top: +%.1f MiB",
          (s.freed - s.before) / MIB);
    /* given back, but for glibc's pad of the top (128 KiB) and pages */
    check(s.trimmed - s.before <= 1 * MIB, "memtrim gave the top back: +%.1f MiB left",
          (s.trimmed - s.before) / MIB);
    /* the threshold is the server's again: the same work is kept for reuse */
    check(s.again - s.trimmed >= 15 * MIB, "threshold restored: +%.1f MiB kept again",
          (s.again - s.trimmed) / MIB);
    check(s.end - s.before <= 1 * MIB, "given back again: +%.1f MiB left",
          (s.end - s.before) / MIB);
}

/* The blocks of another thread's arena, allocated there and left to the
 * caller. */
typedef struct blocks {
    void *b[NBLOCKS];
    int n;
} blocks;

static void *alloc_main(void *arg)
{
    blocks *k = arg;
    free(malloc(64));
    for (k->n = 0; k->n < NBLOCKS; k->n++) {
        k->b[k->n] = malloc(BLOCK);
        if (!k->b[k->n])
            break;
        memset(k->b[k->n], k->n + 1, BLOCK);
    }
    return NULL;
}

static void free_blocks(void *arg)
{
    blocks *k = arg;
    for (int i = k->n - 1; i >= 0; i--)
        free(k->b[i]);
    k->n = 0;
}

/* Frees, from this thread, 16 MiB another thread allocated: plainly (then
 * malloc_trim) or in memtrim_release; the arenas' bytes after, against
 * before. */
static double left_after_free(int released, double before)
{
    blocks k = {.n = 0};
    pthread_t t;
    if (pthread_create(&t, NULL, alloc_main, &k))
        return -1;
    pthread_join(t, NULL);
    if (k.n != NBLOCKS) {
        free_blocks(&k);
        return -1;
    }
    if (released) {
        memtrim_release(free_blocks, &k);
    } else {
        free_blocks(&k);
        malloc_trim(0);
    }
    return arena_bytes() - before;
}

static void __attribute__((unused)) test_other_thread(void)
{
    double before = arena_bytes();
    double plain = left_after_free(0, before);
    /* the second thread is given the first one's arena, its top included */
    double released = left_after_free(1, before);
    printf("another thread's 16 MiB freed here: %.1f MiB left after free and malloc_trim, "
           "%.1f after memtrim_release\n", plain / MIB, released / MIB);
    check(plain >= 15 * MIB, "free and malloc_trim keep the other arena's top: +%.1f MiB",
          plain / MIB);
    check(released > -1 * MIB && released <= 1 * MIB,
          "memtrim_release gave the other arena's top back: +%.1f MiB left", released / MIB);
}

int main(void)
{
#ifdef TESTS_UNDER_ASAN
    /* AddressSanitizer's allocator replaces glibc's arenas */
    printf("test_memtrim: glibc's arenas are not in use under AddressSanitizer\n");
    memtrim();
    check(1, "memtrim runs");
#else
    memtrim_init((size_t)64 << 20); /* as server/cmd_serve.c */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    test_thread_arena();
    test_other_thread();
#endif
    return check_summary();
}
