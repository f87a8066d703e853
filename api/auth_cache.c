/*
 * auth_cache.c — token verifications and experiment owners in memory (see
 * auth_cache.h). Two direct-mapped tables under one mutex; an entry is a
 * few words, copied out under the lock.
 */
#include "api/auth_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN_SLOTS 1024
#define OWNER_SLOTS 4096

typedef struct token_entry {
    store_token t; /* t.id == 0: empty */
    int64_t loaded_ms;
    int used;      /* asked for since loaded */
} token_entry;

typedef struct owner_entry {
    int64_t experiment; /* 0: empty */
    int64_t tenant;
    int64_t loaded_ms;
} owner_entry;

struct auth_cache {
    pthread_mutex_t lock;
    int coherent;
    uint64_t epoch;
    int64_t no_tokens_ms; /* when "no token exists" was read; 0: not held */
    token_entry tokens[TOKEN_SLOTS];
    owner_entry owners[OWNER_SLOTS];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned slot_of(int64_t id, unsigned slots)
{
    return (unsigned)(((uint64_t)id * 11400714819323198485ULL) >> 40) % slots;
}

auth_cache *auth_cache_new(void)
{
    auth_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

void auth_cache_free(auth_cache *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

int auth_cache_token_get(auth_cache *c, int64_t id, store_token *t)
{
    token_entry *e = &c->tokens[slot_of(id, TOKEN_SLOTS)];
    int found = 0;
    int64_t now = now_ms();
    pthread_mutex_lock(&c->lock);
    if (id && e->t.id == id && now - e->loaded_ms <= AUTH_CACHE_TOKEN_MS) {
        *t = e->t;
        e->used = 1;
        found = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

auth_stamp auth_cache_epoch(auth_cache *c)
{
    auth_stamp st;
    pthread_mutex_lock(&c->lock);
    st.epoch = c->epoch;
    pthread_mutex_unlock(&c->lock);
    st.asked_ms = now_ms();
    return st;
}

void auth_cache_token_put(auth_cache *c, const store_token *t, auth_stamp epoch)
{
    token_entry *e = &c->tokens[slot_of(t->id, TOKEN_SLOTS)];
    pthread_mutex_lock(&c->lock);
    if (epoch.epoch == c->epoch) {
        e->t = *t;
        e->loaded_ms = epoch.asked_ms; /* its age counts from the read */
        e->used = 0;
    }
    pthread_mutex_unlock(&c->lock);
}

void auth_cache_token_forget(auth_cache *c, int64_t id)
{
    token_entry *e = &c->tokens[slot_of(id, TOKEN_SLOTS)];
    pthread_mutex_lock(&c->lock);
    if (e->t.id == id)
        memset(e, 0, sizeof *e);
    c->no_tokens_ms = 0; /* a token was created, perhaps */
    c->epoch++;
    pthread_mutex_unlock(&c->lock);
}

int auth_cache_token_due(auth_cache *c, int64_t age_ms, int64_t *ids, int max)
{
    int n = 0;
    int64_t now = now_ms();
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < TOKEN_SLOTS && n < max; i++) {
        token_entry *e = &c->tokens[i];
        if (e->t.id && e->used && now - e->loaded_ms > age_ms &&
            now - e->loaded_ms <= AUTH_CACHE_TOKEN_MS)
            ids[n++] = e->t.id;
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

int auth_cache_owner_get(auth_cache *c, int64_t experiment, int64_t *tenant)
{
    owner_entry *e = &c->owners[slot_of(experiment, OWNER_SLOTS)];
    int found = 0;
    int64_t now = now_ms();
    pthread_mutex_lock(&c->lock);
    if (experiment && e->experiment == experiment &&
        (c->coherent || now - e->loaded_ms <= AUTH_CACHE_OWNER_MS)) {
        *tenant = e->tenant;
        found = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

void auth_cache_owner_put(auth_cache *c, int64_t experiment, int64_t tenant, auth_stamp epoch)
{
    owner_entry *e = &c->owners[slot_of(experiment, OWNER_SLOTS)];
    pthread_mutex_lock(&c->lock);
    if (epoch.epoch == c->epoch)
        *e = (owner_entry){experiment, tenant, epoch.asked_ms};
    pthread_mutex_unlock(&c->lock);
}

void auth_cache_owner_forget(auth_cache *c, int64_t experiment)
{
    owner_entry *e = &c->owners[slot_of(experiment, OWNER_SLOTS)];
    pthread_mutex_lock(&c->lock);
    if (e->experiment == experiment)
        memset(e, 0, sizeof *e);
    c->epoch++;
    pthread_mutex_unlock(&c->lock);
}

int auth_cache_no_tokens(auth_cache *c)
{
    int64_t now = now_ms();
    pthread_mutex_lock(&c->lock);
    int held = c->no_tokens_ms && now - c->no_tokens_ms <= AUTH_CACHE_TOKEN_MS;
    pthread_mutex_unlock(&c->lock);
    return held;
}

void auth_cache_set_no_tokens(auth_cache *c, auth_stamp epoch)
{
    pthread_mutex_lock(&c->lock);
    if (epoch.epoch == c->epoch)
        c->no_tokens_ms = epoch.asked_ms ? epoch.asked_ms : 1;
    pthread_mutex_unlock(&c->lock);
}

void auth_cache_set_coherent(auth_cache *c, int coherent)
{
    pthread_mutex_lock(&c->lock);
    c->coherent = coherent;
    pthread_mutex_unlock(&c->lock);
}

void auth_cache_flush(auth_cache *c)
{
    pthread_mutex_lock(&c->lock);
    memset(c->tokens, 0, sizeof c->tokens);
    memset(c->owners, 0, sizeof c->owners);
    c->no_tokens_ms = 0;
    c->epoch++;
    pthread_mutex_unlock(&c->lock);
}
