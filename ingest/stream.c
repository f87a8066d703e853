/*
 * stream.c — chunks of a trace's bytes, gunzipped on the fly (stream.h).
 *
 * Plain input in memory is handed out in place, in pieces of ST_PIECE bytes
 * (the parser's guards count bytes per piece); a plain file is read with
 * pread into one buffer. Gzip input is inflated with zlib into ST_NBUF
 * buffers of ST_CHUNK bytes: by a helper thread that stays up to ST_NBUF
 * buffers ahead of the consumer, or, with no_threads, in the caller's
 * thread. Whatever the input, the stream holds at most
 * ST_NBUF * ST_CHUNK + ST_IN bytes plus zlib's 32 KiB window.
 *
 * Faults are reported with the compressed byte offset: truncated gzip
 * ("ends early"), corrupt deflate data (zlib's message), bytes after the
 * last gzip member that are not another member, read errors, and more bytes
 * after gunzip than the caller allows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/stream.h"

#define ST_CHUNK (1u << 20)  /* bytes after gunzip per buffer */
#define ST_NBUF 4            /* buffers the helper thread may fill ahead */
#define ST_PIECE (4u << 20)  /* plain input handed out at a time */
#define ST_IN (256u << 10)   /* compressed bytes read from a file at a time */
#define ST_ZIN_MAX (1u << 30) /* zlib's avail_in is 32 bits: feed at most this */

struct ingest_stream {
    ingest_input in;
    int gzip;
    int threaded;
    size_t max_bytes;
    unsigned long long pos; /* next input byte to read (compressed for gzip) */
    char *plain;            /* plain file input: one buffer */

    /* gzip: touched only by the producer (the helper thread, or the caller
     * without threads) between rewinds */
    z_stream z;
    int z_ready;
    int member_end;         /* inflate ended a gzip member; more may follow */
    unsigned char *zin;     /* compressed bytes read from a file */
    unsigned long long out_total;

    /* the buffers and their hand-over, under mu */
    char *buf[ST_NBUF];
    size_t fill[ST_NBUF];
    int rd, wr, nready, held;
    int done, failed, stop, started;
    ingest_error perr;      /* the producer's error once failed */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

int ingest_is_gzip(const void *data, size_t len)
{
    const unsigned char *b = data;
    return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

static void st_error(ingest_error *err, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void st_error(ingest_error *err, long long offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->line = 0;
    err->offset = offset;
}

/* Reads up to cap bytes of the file at off; retries EINTR. */
static ssize_t st_pread(int fd, void *buf, size_t cap, unsigned long long off)
{
    for (;;) {
        ssize_t n = pread(fd, buf, cap, (off_t)off);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

/* ---- gzip (producer side) -------------------------------------------------- */

/* Gives zlib more compressed input. 0: some is there; 1: the input is over;
 * -1: read error (err). */
static int gz_input(ingest_stream *s, ingest_error *err)
{
    if (s->in.data) {
        if (s->pos >= s->in.len)
            return 1;
        size_t n = s->in.len - (size_t)s->pos;
        if (n > ST_ZIN_MAX)
            n = ST_ZIN_MAX;
        s->z.next_in = (unsigned char *)s->in.data + s->pos;
        s->z.avail_in = (uInt)n;
        s->pos += n;
        return 0;
    }
    ssize_t n = st_pread(s->in.fd, s->zin, ST_IN, s->pos);
    if (n < 0) {
        st_error(err, (long long)s->pos, "cannot read the input: %s", strerror(errno));
        return -1;
    }
    if (n == 0)
        return 1;
    s->z.next_in = s->zin;
    s->z.avail_in = (uInt)n;
    s->pos += (unsigned long long)n;
    return 0;
}

/* Compressed offset of the next byte zlib will read. */
static long long gz_offset(const ingest_stream *s)
{
    return (long long)(s->pos - s->z.avail_in);
}

/* Inflates into out[0..cap). 0 with *got bytes (0 < *got, or the end was
 * reached: *end = 1), -1 with err. */
static int gz_fill(ingest_stream *s, char *out, size_t cap, size_t *got, int *end,
                   ingest_error *err)
{
    *got = 0;
    *end = 0;
    s->z.next_out = (unsigned char *)out;
    s->z.avail_out = (uInt)cap;
    while (s->z.avail_out > 0) {
        if (s->z.avail_in == 0) {
            int r = gz_input(s, err);
            if (r < 0)
                return -1;
            if (r == 1) {
                if (s->member_end) {
                    *end = 1;
                    break;
                }
                st_error(err, gz_offset(s),
                         "gzip data ends early: truncated after %lld compressed bytes",
                         gz_offset(s));
                return -1;
            }
        }
        if (s->member_end) {
            /* more bytes after a complete member: only another member may follow */
            if (s->z.next_in[0] != 0x1f) {
                st_error(err, gz_offset(s),
                         "bytes after the end of the gzip data at compressed byte %lld",
                         gz_offset(s));
                return -1;
            }
            if (inflateReset(&s->z) != Z_OK) {
                st_error(err, gz_offset(s), "cannot restart zlib");
                return -1;
            }
            s->member_end = 0;
        }
        uInt in_before = s->z.avail_in, out_before = s->z.avail_out;
        int ret = inflate(&s->z, Z_NO_FLUSH);
        if (ret == Z_STREAM_END) {
            s->member_end = 1;
            continue;
        }
        if (ret == Z_MEM_ERROR) {
            st_error(err, gz_offset(s), "out of memory inflating gzip data");
            return -1;
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            st_error(err, gz_offset(s), "gzip data is corrupt at compressed byte %lld: %s",
                     gz_offset(s), s->z.msg ? s->z.msg : "invalid data");
            return -1;
        }
        if (ret == Z_BUF_ERROR && s->z.avail_in == in_before && s->z.avail_out == out_before &&
            s->z.avail_in > 0) {
            st_error(err, gz_offset(s), "gzip data is corrupt at compressed byte %lld",
                     gz_offset(s));
            return -1;
        }
    }
    *got = cap - s->z.avail_out;
    s->out_total += *got;
    if (s->max_bytes && s->out_total > s->max_bytes) {
        st_error(err, gz_offset(s), "more than %zu bytes after gunzip (the limit)", s->max_bytes);
        return -1;
    }
    return 0;
}

static void *gz_producer(void *arg)
{
    ingest_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->nready + s->held >= ST_NBUF)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        int slot = s->wr;
        pthread_mutex_unlock(&s->mu);
        size_t got;
        int end;
        ingest_error e = {0};
        int rc = gz_fill(s, s->buf[slot], ST_CHUNK, &got, &end, &e);
        pthread_mutex_lock(&s->mu);
        if (rc == 0 && got > 0) {
            s->fill[slot] = got;
            s->wr = (s->wr + 1) % ST_NBUF;
            s->nready++;
        }
        if (rc < 0) {
            s->perr = e;
            s->failed = 1;
        }
        if (end)
            s->done = 1;
        pthread_cond_broadcast(&s->cv);
        if (rc < 0 || end)
            break;
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void gz_stop(ingest_stream *s)
{
    if (!s->started)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    s->started = 0;
}

static int gz_next_threaded(ingest_stream *s, const char **p, size_t *n, ingest_error *err)
{
    if (!s->started) {
        if (pthread_create(&s->thread, NULL, gz_producer, s) != 0) {
            st_error(err, -1, "cannot start the gunzip thread");
            return -1;
        }
        s->started = 1;
    }
    pthread_mutex_lock(&s->mu);
    if (s->held) {
        s->held = 0;
        s->rd = (s->rd + 1) % ST_NBUF;
        pthread_cond_broadcast(&s->cv);
    }
    while (s->nready == 0 && !s->done && !s->failed)
        pthread_cond_wait(&s->cv, &s->mu);
    int rc;
    if (s->nready > 0) {
        *p = s->buf[s->rd];
        *n = s->fill[s->rd];
        s->nready--;
        s->held = 1;
        rc = 1;
    } else if (s->failed) {
        *err = s->perr;
        rc = -1;
    } else {
        rc = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int gz_next_inline(ingest_stream *s, const char **p, size_t *n, ingest_error *err)
{
    if (s->failed) {
        *err = s->perr;
        return -1;
    }
    if (s->done)
        return 0;
    size_t got;
    int end;
    if (gz_fill(s, s->buf[0], ST_CHUNK, &got, &end, &s->perr) < 0) {
        s->failed = 1;
        *err = s->perr;
        return -1;
    }
    s->done = end;
    if (got == 0)
        return 0;
    *p = s->buf[0];
    *n = got;
    return 1;
}

/* ---- the stream -------------------------------------------------------------- */

ingest_stream *ingest_stream_open(const ingest_input *in, int no_threads, size_t max_bytes,
                                  ingest_error *err)
{
    unsigned char head[2] = {0, 0};
    size_t nhead = 0;
    if (in->data) {
        nhead = in->len < 2 ? in->len : 2;
        memcpy(head, in->data, nhead);
    } else {
        ssize_t r = st_pread(in->fd, head, 2, 0);
        if (r < 0) {
            st_error(err, -1, "cannot read the input: %s", strerror(errno));
            return NULL;
        }
        nhead = (size_t)r;
    }
    ingest_stream *s = calloc(1, sizeof *s);
    if (!s) {
        st_error(err, -1, "out of memory");
        return NULL;
    }
    s->in = *in;
    s->gzip = ingest_is_gzip(head, nhead);
    s->threaded = !no_threads;
    s->max_bytes = max_bytes;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int ok = 1;
    if (s->gzip) {
        for (int i = 0; i < (s->threaded ? ST_NBUF : 1); i++)
            ok = ok && (s->buf[i] = malloc(ST_CHUNK)) != NULL;
        if (!in->data)
            ok = ok && (s->zin = malloc(ST_IN)) != NULL;
        if (ok && inflateInit2(&s->z, 16 + MAX_WBITS) == Z_OK)
            s->z_ready = 1;
        else
            ok = 0;
    } else if (!in->data) {
        ok = (s->plain = malloc(ST_CHUNK)) != NULL;
    }
    if (!ok) {
        ingest_stream_close(s);
        st_error(err, -1, "out of memory");
        return NULL;
    }
    return s;
}

int ingest_stream_is_gzip(const ingest_stream *s)
{
    return s->gzip;
}

int ingest_stream_next(ingest_stream *s, const char **p, size_t *n, ingest_error *err)
{
    if (s->gzip)
        return s->threaded ? gz_next_threaded(s, p, n, err) : gz_next_inline(s, p, n, err);
    if (s->max_bytes && s->pos > s->max_bytes) {
        st_error(err, (long long)s->max_bytes, "more than %zu bytes of JSON (the limit)",
                 s->max_bytes);
        return -1;
    }
    if (s->in.data) {
        if (s->pos >= s->in.len)
            return 0;
        size_t left = s->in.len - (size_t)s->pos;
        *p = s->in.data + s->pos;
        *n = left < ST_PIECE ? left : ST_PIECE;
        s->pos += *n;
        return 1;
    }
    ssize_t r = st_pread(s->in.fd, s->plain, ST_CHUNK, s->pos);
    if (r < 0) {
        st_error(err, (long long)s->pos, "cannot read the input: %s", strerror(errno));
        return -1;
    }
    if (r == 0)
        return 0;
    *p = s->plain;
    *n = (size_t)r;
    s->pos += (unsigned long long)r;
    return 1;
}

int ingest_stream_rewind(ingest_stream *s, ingest_error *err)
{
    s->pos = 0;
    if (!s->gzip)
        return 0;
    gz_stop(s);
    if (inflateReset(&s->z) != Z_OK) {
        st_error(err, -1, "cannot restart zlib");
        return -1;
    }
    s->z.avail_in = 0;
    s->z.next_in = NULL;
    s->member_end = 0;
    s->out_total = 0;
    s->rd = s->wr = s->nready = s->held = 0;
    s->done = s->failed = s->stop = 0;
    memset(&s->perr, 0, sizeof s->perr);
    return 0;
}

void ingest_stream_close(ingest_stream *s)
{
    if (!s)
        return;
    gz_stop(s);
    if (s->z_ready)
        inflateEnd(&s->z);
    for (int i = 0; i < ST_NBUF; i++)
        free(s->buf[i]);
    free(s->zin);
    free(s->plain);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
