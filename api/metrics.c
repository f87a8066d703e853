/*
 * metrics.c — request counters, latency histograms and collectors for
 * GET /metrics (see api/metrics.h).
 *
 * Label values are literals (route patterns, methods from a fixed list), so
 * entries are found by pointer comparison; there are a few dozen at most and
 * a linear scan under one mutex is cheaper than anything cleverer.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/metrics.h"

typedef struct counter {
    const char *route;
    const char *method;
    int status;
    uint64_t n;
} counter;

typedef struct route_hist {
    const char *route;
    api_histogram h;
} route_hist;

typedef struct collector {
    api_metrics_collector fn;
    void *arg;
} collector;

struct api_metrics {
    pthread_mutex_t mu;
    counter *counters;
    size_t ncounters, capcounters;
    route_hist *hists;
    size_t nhists, caphists;
    collector *collectors;
    size_t ncollectors;
};

static const double bounds[API_HISTOGRAM_NBOUNDS] = API_HISTOGRAM_BOUNDS;

void api_histogram_observe(api_histogram *h, double seconds)
{
    int b = 0;
    while (b < API_HISTOGRAM_NBOUNDS && seconds > bounds[b])
        b++;
    h->counts[b]++;
    h->count++;
    h->sum += seconds;
}

void api_histogram_write(const api_histogram *h, FILE *out, const char *name, const char *labels)
{
    const char *sep = *labels ? "," : "";
    uint64_t cum = 0;
    for (int b = 0; b < API_HISTOGRAM_NBOUNDS; b++) {
        cum += h->counts[b];
        fprintf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[b],
                (unsigned long long)cum);
    }
    fprintf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
            (unsigned long long)h->count);
    fprintf(out, "%s_sum{%s} %.9g\n", name, labels, h->sum);
    fprintf(out, "%s_count{%s} %llu\n", name, labels, (unsigned long long)h->count);
}

api_metrics *api_metrics_new(void)
{
    api_metrics *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void api_metrics_free(api_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m->counters);
    free(m->hists);
    free(m->collectors);
    free(m);
}

const char *api_metrics_method(const char *method)
{
    static const char *const known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; method && i < sizeof known / sizeof *known; i++)
        if (!strcmp(method, known[i]))
            return known[i];
    return "other";
}

/* Grows *v (of element size sz) to hold one more; 0 or -1. */
static int reserve(void **v, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *nv = realloc(*v, ncap * sz);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

void api_metrics_observe(api_metrics *m, const char *route, const char *method, int status,
                         double seconds)
{
    pthread_mutex_lock(&m->mu);
    size_t i = 0;
    while (i < m->ncounters && !(m->counters[i].route == route && m->counters[i].method == method &&
                                 m->counters[i].status == status))
        i++;
    if (i < m->ncounters)
        m->counters[i].n++;
    else if (!reserve((void **)&m->counters, m->ncounters, &m->capcounters, sizeof *m->counters))
        m->counters[m->ncounters++] = (counter){route, method, status, 1};

    size_t j = 0;
    while (j < m->nhists && m->hists[j].route != route)
        j++;
    if (j == m->nhists &&
        !reserve((void **)&m->hists, m->nhists, &m->caphists, sizeof *m->hists))
        m->hists[m->nhists++] = (route_hist){.route = route};
    if (j < m->nhists)
        api_histogram_observe(&m->hists[j].h, seconds);
    pthread_mutex_unlock(&m->mu);
}

int api_metrics_add_collector(api_metrics *m, api_metrics_collector fn, void *arg)
{
    collector *nc = realloc(m->collectors, (m->ncollectors + 1) * sizeof *nc);
    if (!nc)
        return -1;
    m->collectors = nc;
    m->collectors[m->ncollectors++] = (collector){fn, arg};
    return 0;
}

int api_metrics_write(api_metrics *m, FILE *out)
{
    /* copy under the lock, format outside it */
    pthread_mutex_lock(&m->mu);
    size_t nc = m->ncounters, nh = m->nhists;
    counter *c = malloc((nc ? nc : 1) * sizeof *c);
    route_hist *h = malloc((nh ? nh : 1) * sizeof *h);
    if (c && h) {
        memcpy(c, m->counters, nc * sizeof *c);
        memcpy(h, m->hists, nh * sizeof *h);
    }
    pthread_mutex_unlock(&m->mu);
    if (!c || !h) {
        free(c);
        free(h);
        return -1;
    }
    fputs("# HELP perfcast_http_requests_total HTTP requests by route, method and status.\n"
          "# TYPE perfcast_http_requests_total counter\n",
          out);
    for (size_t i = 0; i < nc; i++)
        fprintf(out, "perfcast_http_requests_total{route=\"%s\",method=\"%s\",status=\"%d\"} %llu\n",
                c[i].route, c[i].method, c[i].status, (unsigned long long)c[i].n);
    fputs("# HELP perfcast_http_request_duration_seconds Time from the request line to the last "
          "byte of the response, by route.\n"
          "# TYPE perfcast_http_request_duration_seconds histogram\n",
          out);
    for (size_t i = 0; i < nh; i++) {
        char labels[300];
        snprintf(labels, sizeof labels, "route=\"%s\"", h[i].route);
        api_histogram_write(&h[i].h, out, "perfcast_http_request_duration_seconds", labels);
    }
    free(c);
    free(h);
    for (size_t i = 0; i < m->ncollectors; i++)
        m->collectors[i].fn(m->collectors[i].arg, out);
    return ferror(out) ? -1 : 0;
}
