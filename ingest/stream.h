/*
 * stream.h — the bytes of a trace as a sequence of chunks, gunzipped on the
 * fly when they start with the gzip magic, with bounded memory: a few
 * fixed-size buffers whatever the size of the input. Readers that need to
 * see the input twice (kineto.c, when a trace's order defeats one pass) call
 * ingest_stream_rewind().
 *
 * Gzip input is inflated in a helper thread a few buffers ahead of the
 * parser (two cores then work on one trace), or in the calling thread when
 * asked. Concatenated gzip members are read as one stream, as gunzip does.
 */
#ifndef PERFCAST_INGEST_STREAM_H
#define PERFCAST_INGEST_STREAM_H

#include <stddef.h>

#include "ingest/trace.h"

typedef struct ingest_stream ingest_stream;

/* Opens in (which must outlive the stream). max_bytes bounds the bytes after
 * gunzip (0: no bound). Returns NULL with err filled on failure. */
ingest_stream *ingest_stream_open(const ingest_input *in, int no_threads, size_t max_bytes,
                                  ingest_error *err);

/* The next chunk: 1 with *p and *n set (valid until the next call), 0 at the end,
 * -1 with err filled (truncated or corrupt gzip, a read error, the limit). */
int ingest_stream_next(ingest_stream *s, const char **p, size_t *n, ingest_error *err);

/* Starts again from the first byte. 0 or -1 with err filled. */
int ingest_stream_rewind(ingest_stream *s, ingest_error *err);

int ingest_stream_is_gzip(const ingest_stream *s);

void ingest_stream_close(ingest_stream *s);

/* 1 when the bytes start with the gzip magic (1f 8b). */
int ingest_is_gzip(const void *data, size_t len);

#endif
