/*
 * phase.h — which steps of a profiler trace are validation steps (Extra-Deep
 * Eq. 3-4 need n_v·Ṽ_v, so a trace must say which steps validated).
 *
 * A step is a validation step when its own name (an NVTX step range such as
 * "val_step 3") or a range around it (a PyTorch record_function /
 * user_annotation, an NVTX range, an epoch marker: "validation", "eval")
 * matches one of the patterns: comma-separated name parts, matched without
 * regard to case at the start of a word (the name's start, after a
 * non-letter, or a lower-to-upper case change), so "val" finds "val_step",
 * "Validation", "runValidation" and "model.val" but not "interval" or
 * "retrieval". Defaults: "val,eval". Pure: no I/O, no globals.
 */
#ifndef PERFCAST_INGEST_PHASE_H
#define PERFCAST_INGEST_PHASE_H

#include <stddef.h>

#define INGEST_PHASE_DEFAULT "val,eval"
#define INGEST_PHASE_MAX_PATTERNS 16

typedef struct ingest_phase_patterns {
    int n;
    char pat[INGEST_PHASE_MAX_PATTERNS][64];
    size_t len[INGEST_PHASE_MAX_PATTERNS];
} ingest_phase_patterns;

/* Compiles text ("val,eval"; NULL or "" for the defaults); spaces around
 * parts are dropped, parts beyond 63 bytes cut, beyond 16 ignored. */
void ingest_phase_compile(const char *text, ingest_phase_patterns *out);

/* 1 when a pattern matches name[0..len) at the start of a word. */
int ingest_phase_match(const ingest_phase_patterns *p, const char *name, size_t len);

/* Checks patterns text as the API takes it: 1 to 256 bytes, comma-separated
 * non-empty parts. 0, or -1. */
int ingest_phase_check(const char *text);

#endif
