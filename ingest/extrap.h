/*
 * extrap.h — readers of Extra-P's four input formats.
 *
 * Text (PARAMETER/POINTS/REGION/METRIC/DATA lines), JSON (the current layout
 * {"parameters","measurements"} and the legacy one with "callpaths",
 * "coordinates", ids), JSON Lines ({"params","callpath","metric","value"} per
 * line) and TaLPas (JSON-ish lines with ';' separators and "parameters").
 *
 * Each reader turns the bytes of one file into an ingest_experiment: named
 * parameters, coordinates, callpaths, metrics and, per (callpath, metric), the
 * repetitions measured at each coordinate. Readers know formats, not models:
 * nothing here fits anything. Malformed input is rejected with the line (or
 * byte offset) and what was expected; nothing is returned half-built.
 *
 * What a reader accepts, Extra-P 4.2.5 accepts too and reads into the same
 * parameters, coordinates, callpaths, metrics, series and values, in the same
 * orders. Beyond Extra-P's own checks the readers refuse NaN and infinite
 * numbers, non-numeric values, repeated JSON keys, repeated parameters,
 * points or series where Extra-P would silently merge or misalign them,
 * JSON Lines whose parameters differ from the first line's, an experiment
 * without measurements, and empty or truncated input.
 */
#ifndef PERFCAST_INGEST_EXTRAP_H
#define PERFCAST_INGEST_EXTRAP_H

#include <stddef.h>

typedef enum ingest_format {
    INGEST_FORMAT_UNKNOWN = 0,
    INGEST_FORMAT_EXTRAP_TEXT,
    INGEST_FORMAT_EXTRAP_JSON,  /* either JSON layout; JSON Lines content is detected too */
    INGEST_FORMAT_EXTRAP_JSONL,
    INGEST_FORMAT_TALPAS,
} ingest_format;

/* One (callpath, metric) series, points in the order the file gives them. */
typedef struct ingest_series {
    int callpath;   /* index into ingest_experiment.callpaths */
    int metric;     /* index into ingest_experiment.metrics */
    int npoints;
    int *coord;     /* npoints indices into ingest_experiment.coords */
    int *rep_start; /* npoints + 1 offsets into values */
    double *values; /* the repetitions, point after point */
} ingest_series;

typedef struct ingest_experiment {
    int nparams;
    char **params;
    int ncoords;
    double *coords; /* ncoords x nparams, row-major, in order of first appearance */
    int ncallpaths;
    char **callpaths;
    int nmetrics;
    char **metrics;
    int nseries;
    ingest_series *series; /* in Extra-P's order of measurement sets */
} ingest_experiment;

/* msg starts with "line N: " when line > 0 (text, JSON Lines, TaLPas, JSON
 * syntax errors); other JSON errors name the JSON path, e.g.
 * 'measurements["sweep"]["time"][3].values[0]: expected a number'. offset is
 * the start of the faulty line, or the exact byte of a JSON syntax error. */
typedef struct ingest_error {
    long line;   /* 1-based line of the fault, 0 when not line-oriented */
    long offset; /* byte offset of the fault, -1 when unknown */
    char msg[256];
    int limit;   /* 1: a configured limit was passed (e.g. max_events), not a fault of
                    the input; the caller zeroes it, the reader sets it */
} ingest_error;

/* Format by file name: .txt -> text (TaLPas when the first non-blank
 * character is '{'), .json/.JSON -> JSON, .jsonl -> JSON Lines. */
ingest_format ingest_extrap_format_from_path(const char *path, const char *buf, size_t len);
/* "extrap-text", "extrap-json", "extrap-jsonl", "talpas" (the names every
 * command and route uses; "text", "json", "jsonl" kept as aliases) ->
 * format; UNKNOWN otherwise. */
ingest_format ingest_extrap_format_from_name(const char *name);
/* The canonical name of a format ("extrap-text"), "unknown" for none. */
const char *ingest_extrap_format_name(ingest_format f);

/* Reads buf[0..len) (need not be NUL-terminated). Returns 0 and fills out
 * (free with ingest_experiment_free), or -1 with err filled and out zeroed. */
int ingest_extrap_read(const char *buf, size_t len, ingest_format fmt, ingest_experiment *out,
                       ingest_error *err);

void ingest_experiment_free(ingest_experiment *e);

#endif
