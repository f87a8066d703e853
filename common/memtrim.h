/*
 * memtrim.h — freed heap memory given back to the system after large work,
 * the free top of the calling thread's malloc arena included.
 *
 * glibc's malloc_trim(0) releases the free pages inside every arena and the
 * free top of the main arena, but never the free top of a thread's arena:
 * that shrinks only when a free() leaves it above M_TRIM_THRESHOLD. The
 * server sets that threshold to 64 MB (memtrim_init) so that the pages of
 * large answers are reused; a thread arena's heap is at most 64 MB, so its
 * top never reaches it, and each HTTP or worker thread would keep its arena
 * at the largest size any request or job on it ever needed (8 to 13 MB per
 * thread after a run of a 1,000,000-operation step graph, which reads it in
 * 4 MiB pieces through libpq). memtrim() after an upload or a job gives that
 * back as well; between them, the threshold keeps the pages as before.
 */
#ifndef PERFCAST_MEMTRIM_H
#define PERFCAST_MEMTRIM_H

#include <stddef.h>

/* glibc's own trim threshold (128 KiB), restored by memtrim() in a process
 * that never called memtrim_init(). */
#define MEMTRIM_DEFAULT_THRESHOLD ((size_t)128 << 10)

/* Sets malloc's M_TRIM_THRESHOLD (the free heap top an arena keeps) to
 * threshold bytes and remembers it for memtrim(). Call it before other
 * threads start. */
void memtrim_init(size_t threshold);

/* Gives the free heap memory back to the system: the free top of the
 * calling thread's arena (the threshold lowered for one free() in it, then
 * restored), then malloc_trim(0) for the free pages of every arena and the
 * main arena's top. Call it from the thread that did the large work. */
void memtrim(void);

/* Runs release(arg) with the threshold lowered, then malloc_trim(0): a
 * block of 64 KiB or more that release frees gives back the free top of the
 * arena it came from, whichever thread's arena that is. For memory another
 * thread allocated: a pooled connection's libpq buffers are grown in the
 * arena of the thread that opened it, by every thread that uses it. */
void memtrim_release(void (*release)(void *), void *arg);

#endif
