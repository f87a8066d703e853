/*
 * prefault.c — see prefault.h.
 */
#include "common/prefault.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void prefault_write(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    if (!p || n < PREFAULT_MIN)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}
