/*
 * grow.h — room for `need` elements in a realloc'ed array, doubling: the
 * readers of uploads append to arrays whose size they learn as they go.
 */
#ifndef PERFCAST_GROW_H
#define PERFCAST_GROW_H

#include <stddef.h>

/* Makes *p (capacity *cap elements of `size` bytes, may be NULL) hold at
 * least need elements: 0, or -1 when out of memory or beyond what size_t
 * can count (*p and *cap left as they were). */
int grow_array(void **p, size_t *cap, size_t need, size_t size);

#endif
