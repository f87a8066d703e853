/*
 * cube_internal.h — what the ingest/cube*.c files share; not a public API.
 *
 * cube_anchor.c parses anchor.xml (expat, no DOCTYPE) into a cube_anchor;
 * cube_values.c decodes a metric's index and data members against it;
 * cube.c opens the tar archive (libarchive) and assembles the cube_profile;
 * cube_set.c builds the experiment of a directory of runs.
 */
#ifndef PERFCAST_INGEST_CUBE_INTERNAL_H
#define PERFCAST_INGEST_CUBE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/cube.h"

typedef struct cube_metric_decl {
    long id;
    int inclusive; /* 1 INCLUSIVE, 0 EXCLUSIVE */
    int toplevel;  /* a direct child of <metrics> */
    char *name;    /* uniq_name */
    char *dtype;
} cube_metric_decl;

typedef struct cube_cnode {
    long id;
    long region_id;
    int region;   /* index into cube_anchor.regions, -1 until resolved */
    int parent;   /* index into cube_anchor.cnodes, -1 for a root */
    int first_child, next_sibling, last_child; /* -1 when none */
    int callpath; /* index into the profile's callpath names */
} cube_cnode;

typedef struct cube_region {
    long id;
    char *name;
} cube_region;

typedef struct cube_anchor {
    cube_metric_decl *metrics;
    int nmetrics;
    size_t metrics_cap;
    cube_region *regions;
    int nregions;
    size_t regions_cap;
    cube_cnode *cnodes; /* in document order: the depth-first enumeration */
    int ncnodes;
    size_t cnodes_cap;
    long nlocations;    /* locations under the first top-level system tree node */
} cube_anchor;

/* Parses xml[0..len) (already decompressed). 0, or -1 with msg set
 * ("line N: ..."). */
int cube_anchor_parse(const char *xml, size_t len, long max_nodes, cube_anchor *a, char *msg,
                      size_t msgcap);
void cube_anchor_free(cube_anchor *a);

/* The breadth-of-children enumeration of inclusive metrics (pycubexr's
 * "wide" order): out[k] = index of the cnode at tree position k. */
int cube_wide_order(const cube_anchor *a, int *out);

/* Element decoding of a dtype: size in bytes and kind, or size 0 when the
 * type carries no plain number (NDOUBLES, RATE, TAU_ATOMIC, unknown). */
typedef enum cube_vkind { CUBE_U = 0, CUBE_I, CUBE_F, CUBE_C, CUBE_FMIN, CUBE_FMAX } cube_vkind;
typedef struct cube_vtype {
    int size;
    cube_vkind kind;
    int clamp_u64; /* UINT64 / UNSIGNED INTEGER: values beyond 2^64-1025 read as 0 */
} cube_vtype;
cube_vtype cube_dtype(const char *dtype);

/* Decodes one metric: index[0..ilen) and data[0..dlen) into, per tree
 * position listed, nloc exclusive doubles. *pos gets the cnode index of each
 * listed position (n of them), *vals n*nloc values. Returns n >= 0, or -1 with
 * msg set (naming "index" or "data"). */
long cube_metric_decode(const cube_anchor *a, const cube_metric_decl *m, cube_vtype t,
                        const unsigned char *index, size_t ilen, const unsigned char *data,
                        size_t dlen, size_t max_bytes, int **pos, double **vals, char *msg,
                        size_t msgcap);

#endif
