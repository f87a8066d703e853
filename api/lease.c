/*
 * lease.c — the lease keeper of claimed runs (api/lease.h).
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <time.h>

#include "api/lease.h"

static void *keeper(void *arg)
{
    api_lease *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double every = l->seconds / 3 > 0.05 ? l->seconds / 3 : 0.05;
        long long ns = until.tv_nsec + (long long)(every * 1e9);
        until.tv_sec += (time_t)(ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!l->done && pthread_cond_timedwait(&l->done_cv, &l->mu, &until) != ETIMEDOUT)
            ;
        if (l->done)
            break;
        pthread_mutex_unlock(&l->mu);
        store_error err;
        PGconn *c = store_acquire(l->db, &err);
        if (c)
            l->beat(c, l->run, l->worker, l->attempt, l->seconds, &err);
        store_release(l->db, c);
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

void api_lease_start(api_lease *l)
{
    l->done = 0;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->done_cv, NULL);
    l->started = pthread_create(&l->thread, NULL, keeper, l) == 0;
}

void api_lease_stop(api_lease *l)
{
    if (l->started) {
        pthread_mutex_lock(&l->mu);
        l->done = 1;
        pthread_cond_signal(&l->done_cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->thread, NULL);
    }
    pthread_cond_destroy(&l->done_cv);
    pthread_mutex_destroy(&l->mu);
    l->started = 0;
}

void api_lease_worker_name(char *buf, size_t cap, const char *kind)
{
    char host[64] = "";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "host");
    snprintf(buf, cap, "%s:%ld:%s-%lx", host, (long)getpid(), kind, (unsigned long)pthread_self());
}
