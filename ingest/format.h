/*
 * format.h — which reader an input needs: by name (?format=, --format), by
 * Content-Type, or sniffed from the first bytes; and one entry point that
 * reads a profile upload in any of the profile formats.
 *
 *   perfcast      perfcast's JSON profile (profile.h)
 *   kineto        PyTorch profiler Chrome trace JSON, plain or gzip (trace.h)
 *   nsys          Nsight Systems SQLite export (trace.h)
 *   cube          Score-P Cube profile (.cubex, a tar archive; cube.h): one
 *                 row per location (rank) and callpath
 *   extrap-text, extrap-json, extrap-jsonl, talpas
 *                 Extra-P's input formats (extrap.h): aggregated points, not
 *                 profiles of one run
 *
 * Sniffing looks at magic numbers first (gzip 1f 8b -> kineto; "SQLite
 * format 3\0" -> nsys; "ustar" at byte 257, a tar archive -> cube), then at the first top-level keys of a JSON object
 * ("traceEvents", "schemaVersion", "distributedInfo", ... -> kineto;
 * "ranks", "point", "repetition" -> perfcast; "parameters"/"measurements"/
 * "callpaths"/"coordinates" -> extrap-json, or talpas when the members are
 * separated by ';'; "params" -> extrap-jsonl), a top-level array (a bare
 * Chrome trace) -> kineto, and Extra-P's text keywords (PARAMETER, POINTS,
 * REGION, METRIC, DATA) -> extrap-text.
 */
#ifndef PERFCAST_INGEST_FORMAT_H
#define PERFCAST_INGEST_FORMAT_H

#include <stddef.h>

#include "ingest/extrap.h"
#include "ingest/profile.h"
#include "ingest/trace.h"

typedef enum ingest_kind {
    INGEST_KIND_UNKNOWN = 0,
    INGEST_KIND_PERFCAST,
    INGEST_KIND_KINETO,
    INGEST_KIND_NSYS,
    INGEST_KIND_EXTRAP_TEXT,
    INGEST_KIND_EXTRAP_JSON,
    INGEST_KIND_EXTRAP_JSONL,
    INGEST_KIND_TALPAS,
    INGEST_KIND_CUBE, /* a Score-P Cube profile (.cubex: tar), ingest/cube.h */
} ingest_kind;

/* "kineto" -> INGEST_KIND_KINETO ...; UNKNOWN for anything else. */
ingest_kind ingest_kind_from_name(const char *name);
/* The name, or "unknown". */
const char *ingest_kind_name(ingest_kind k);
/* "kineto|nsys|perfcast|extrap-text|extrap-json|extrap-jsonl|talpas|cube" */
const char *ingest_kind_names(void);

/* From the first bytes (any length; up to 1 MiB is looked at). */
ingest_kind ingest_sniff(const void *buf, size_t len);

/* What a Content-Type says: KINETO for application/gzip or x-gzip, NSYS for
 * application/vnd.sqlite3 or x-sqlite3, CUBE for application/x-tar; UNKNOWN with *sniff = 1 for types
 * that leave it to the bytes (application/json, application/octet-stream,
 * text/plain, none); UNKNOWN with *sniff = 0 for types no reader takes. */
ingest_kind ingest_kind_from_content_type(const char *ct, int *sniff);

/* 1 for the formats that are one profile (perfcast, kineto, nsys, cube). */
int ingest_kind_is_profile(ingest_kind k);

/* The extrap.h format of an Extra-P kind (UNKNOWN otherwise). */
ingest_format ingest_kind_extrap_format(ingest_kind k);

/* Reads buf[0..len) of a profile kind into out. o may be NULL (defaults);
 * info (may be NULL) is filled for kineto and nsys. 0 or -1 with err. */
int ingest_read_profile(ingest_kind k, const char *buf, size_t len,
                        const ingest_trace_options *o, profile *out, ingest_trace_info *info,
                        ingest_error *err);

#endif
