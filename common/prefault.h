/*
 * prefault.h — the pages of a large new block mapped in one call.
 *
 * Memory a process has not touched yet costs a page fault per 4 KiB the
 * first time it is written: about 13 µs each on the virtual machines
 * perfcast runs on (64 MB: 210 ms touched page by page, 62 ms mapped in
 * one call and then written). Writers of blocks of a megabyte or more (an
 * answer's text, the rows of 10,000 measurements) map them first.
 */
#ifndef PERFCAST_PREFAULT_H
#define PERFCAST_PREFAULT_H

#include <stddef.h>

/* Blocks below this are left to fault in as they are written. */
#define PREFAULT_MIN ((size_t)1 << 20)

/* Maps the whole pages of [p, p + n) for writing when n >= PREFAULT_MIN.
 * Best effort: kernels without MADV_POPULATE_WRITE (before 5.14) refuse,
 * and the pages fault in as before. */
void prefault_write(void *p, size_t n);

#endif
