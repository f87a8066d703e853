/*
 * limits.c — token buckets per token and upload counts per tenant (see
 * api/limits.h), each in a small open-addressing table under one mutex.
 * A full table gives the slot of its least recently used key to a new one:
 * a forgotten bucket starts full again, which errs on the side of serving.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "api/limits.h"

#define SLOTS 4096
#define PROBE 16

typedef struct slot {
    int64_t key; /* token id + 1 (0: free), or tenant id + 1 */
    double tokens;
    double last; /* seconds, monotonic */
    int uploads;
} slot;

struct api_limits {
    double rate, burst;
    int uploads;
    double bad_rate, bad_burst; /* failed token checks per client address */
    pthread_mutex_t mu;
    slot buckets[SLOTS];
    slot tenants[SLOTS];
    slot addresses[SLOTS]; /* keyed by a hash of the numeric address */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

api_limits *api_limits_new(double rate, double burst, int uploads)
{
    api_limits *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->rate = rate;
    l->burst = burst < 1 ? 1 : burst;
    l->uploads = uploads;
    l->bad_rate = API_LIMITS_BAD_TOKEN_RATE;
    l->bad_burst = API_LIMITS_BAD_TOKEN_BURST;
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

void api_limits_free(api_limits *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* The slot of key in table (new ones initialised by the caller: *fresh). */
static slot *find(slot *table, int64_t key, double now, int *fresh)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    slot *victim = NULL;
    for (int i = 0; i < PROBE; i++) {
        slot *s = &table[(h + (uint64_t)i) % SLOTS];
        if (s->key == key) {
            *fresh = 0;
            return s;
        }
        if (!s->key) {
            if (!victim || victim->key) /* a free slot beats any used one */
                victim = s;
        } else if (!s->uploads && (!victim || (victim->key && s->last < victim->last))) {
            victim = s;
        }
    }
    *fresh = 1;
    if (!victim) /* every slot busy with an upload: share the first */
        victim = &table[h % SLOTS];
    *victim = (slot){.key = key, .last = now};
    return victim;
}

static void too_many(api_response *resp, double wait_s, const char *what)
{
    int after = (int)ceil(wait_s);
    if (after < 1)
        after = 1;
    api_problem(resp, 429, NULL, "%s; retry in %d s", what, after);
    api_add_header(resp, "Retry-After", "%d", after);
}

int api_limits_request(api_limits *l, const api_request *req, api_response *resp)
{
    if (!l || l->rate <= 0 || !req->token_id) /* open mode: no token to limit */
        return 0;
    double now = now_s(), wait = 0;
    pthread_mutex_lock(&l->mu);
    int fresh;
    slot *s = find(l->buckets, req->token_id + 1, now, &fresh);
    if (fresh)
        s->tokens = l->burst;
    s->tokens += (now - s->last) * l->rate;
    if (s->tokens > l->burst)
        s->tokens = l->burst;
    s->last = now;
    if (s->tokens >= 1)
        s->tokens -= 1;
    else
        wait = (1 - s->tokens) / l->rate;
    pthread_mutex_unlock(&l->mu);
    if (wait > 0) {
        too_many(resp, wait, "too many requests with this token (PERFCAST_RATE_LIMIT)");
        return -1;
    }
    return 0;
}

int api_limits_upload_begin(api_limits *l, const api_request *req, api_response *resp)
{
    if (!l || l->uploads <= 0)
        return 0;
    int refused = 0;
    pthread_mutex_lock(&l->mu);
    int fresh;
    slot *s = find(l->tenants, req->tenant_id + 1, now_s(), &fresh);
    if (s->uploads >= l->uploads)
        refused = 1;
    else
        s->uploads++;
    s->last = now_s();
    pthread_mutex_unlock(&l->mu);
    if (refused)
        too_many(resp, 1, "too many uploads of this tenant in progress (PERFCAST_MAX_UPLOADS)");
    return refused ? -1 : 0;
}

void api_limits_upload_end(api_limits *l, const api_request *req)
{
    if (!l || l->uploads <= 0)
        return;
    pthread_mutex_lock(&l->mu);
    int fresh;
    slot *s = find(l->tenants, req->tenant_id + 1, now_s(), &fresh);
    if (s->uploads > 0)
        s->uploads--;
    pthread_mutex_unlock(&l->mu);
}

void api_limits_set_bad_tokens(api_limits *l, double rate, double burst)
{
    l->bad_rate = rate;
    l->bad_burst = burst < 1 ? 1 : burst;
}

/* A client address as a table key: FNV-1a, never 0. */
static int64_t address_key(const char *addr)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)addr; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    h &= 0x7fffffffffffffffULL;
    return h ? (int64_t)h : 1;
}

/* The address's bucket of failed token checks, refilled to now. Under mu. */
static slot *address_bucket(api_limits *l, const char *addr, double now)
{
    int fresh;
    slot *s = find(l->addresses, address_key(addr), now, &fresh);
    if (fresh)
        s->tokens = l->bad_burst;
    s->tokens += (now - s->last) * l->bad_rate;
    if (s->tokens > l->bad_burst)
        s->tokens = l->bad_burst;
    s->last = now;
    return s;
}

int api_limits_bad_token_check(api_limits *l, const char *addr, api_response *resp)
{
    if (!l || l->bad_rate <= 0 || !addr)
        return 0;
    double wait = 0;
    pthread_mutex_lock(&l->mu);
    slot *s = address_bucket(l, addr, now_s());
    if (s->tokens < 1)
        wait = (1 - s->tokens) / l->bad_rate;
    pthread_mutex_unlock(&l->mu);
    if (wait > 0) {
        too_many(resp, wait,
                 "too many invalid tokens from this address (PERFCAST_BAD_TOKEN_RATE)");
        return -1;
    }
    return 0;
}

void api_limits_bad_token_note(api_limits *l, const char *addr)
{
    if (!l || l->bad_rate <= 0 || !addr)
        return;
    pthread_mutex_lock(&l->mu);
    slot *s = address_bucket(l, addr, now_s());
    s->tokens -= 1;
    pthread_mutex_unlock(&l->mu);
}
