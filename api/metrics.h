/*
 * metrics.h — the figures behind GET /metrics, in Prometheus' text format.
 *
 * The registry counts requests by (route, method, status) and keeps a latency
 * histogram per route; server/http.c records every finished request. Other
 * parts add their figures without touching this file: register a collector,
 * a callback that writes its own lines (with # HELP / # TYPE) on each scrape —
 * e.g. jobs by state from the database, or a fit-duration histogram that the
 * workers fill (api_histogram below, guarded by the collector's own lock).
 */
#ifndef PERFCAST_API_METRICS_H
#define PERFCAST_API_METRICS_H

#include <stdint.h>
#include <stdio.h>

/* Upper bounds in seconds; one more bucket (+Inf) follows. */
#define API_HISTOGRAM_BOUNDS \
    {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
#define API_HISTOGRAM_NBOUNDS 16

typedef struct api_histogram {
    uint64_t counts[API_HISTOGRAM_NBOUNDS + 1]; /* per bucket, not cumulative */
    uint64_t count;
    double sum;
} api_histogram;

/* Not thread-safe: the owner holds a lock around both. */
void api_histogram_observe(api_histogram *h, double seconds);
/* Writes name_bucket{labels,le=...}, name_sum{labels}, name_count{labels};
 * labels is "" or like `route="/health"`. No HELP/TYPE lines. */
void api_histogram_write(const api_histogram *h, FILE *out, const char *name, const char *labels);

typedef struct api_metrics api_metrics;

/* Writes lines for one scrape; called without the registry's lock held. */
typedef void (*api_metrics_collector)(void *arg, FILE *out);

api_metrics *api_metrics_new(void);
void api_metrics_free(api_metrics *m);

/* One finished request. route and method must be string literals (or live as
 * long as the registry): the router's pattern or "unmatched", and a method
 * from api_metrics_method(). */
void api_metrics_observe(api_metrics *m, const char *route, const char *method, int status,
                         double seconds);
/* The method as a literal: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS or
 * "other" (bounded label values). */
const char *api_metrics_method(const char *method);

/* Adds a collector; returns 0, -1 when out of memory. Register before the
 * server starts. */
int api_metrics_add_collector(api_metrics *m, api_metrics_collector fn, void *arg);

/* The whole exposition. Returns 0, -1 on write failure. */
int api_metrics_write(api_metrics *m, FILE *out);

#endif
