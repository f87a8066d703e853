/*
 * test_model_cache.c — the blob part of api/model_cache: a blob is found by
 * its key until it is dropped; the blobs held stay within
 * MODEL_CACHE_BLOB_BUDGET, the least recently used going first; a blob
 * larger than the budget is handed back but not kept; a blob dropped while
 * a request holds it stays valid until released (its data is freed once,
 * then); a blob holding another (data borrowed from it) keeps the other's
 * data until it is freed itself. Sizes are the builders' estimates, so no
 * test allocates them.
 * Rendered pages: the newest answer is kept even when earlier ones (of sets
 * no longer current) have filled the page budget.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_cache.h"
#include "tests/check.h"

static int freed;

static void count_free(void *p)
{
    freed++;
    free(p);
}

/* puts a blob of `bytes` under key and releases the caller's reference */
static void put(model_cache *c, const char *key, size_t bytes)
{
    const cache_blob *b = model_cache_blob_put(c, key, malloc(8), bytes, count_free);
    check(b != NULL, "%s stored", key);
    model_cache_blob_release(c, b);
}

/* 1 when key is held (the lookup counts as a use) */
static int held(model_cache *c, const char *key)
{
    const cache_blob *b = model_cache_blob_get(c, key);
    model_cache_blob_release(c, b);
    return b != NULL;
}

static void test_budget_drops_least_recent(void)
{
    model_cache *c = model_cache_new(1000);
    size_t third = MODEL_CACHE_BLOB_BUDGET / 3;
    freed = 0;
    put(c, "a", third);
    put(c, "b", third);
    put(c, "c", third);
    check(held(c, "a") && held(c, "b") && held(c, "c"), "three thirds fit the budget");
    check(held(c, "a"), "a used last"); /* order of use now: b, c, a */
    put(c, "d", third);
    check(!held(c, "b"), "b, the least recently used, made room for d");
    check(held(c, "a") && held(c, "c") && held(c, "d"), "the others stay");
    check(freed == 1, "the dropped blob's data freed once (%d)", freed);
    model_cache_free(c);
    check(freed == 4, "every blob's data freed with the cache (%d)", freed);
}

static void test_oversized_not_kept(void)
{
    model_cache *c = model_cache_new(1000);
    freed = 0;
    put(c, "small", 1000);
    const cache_blob *big =
        model_cache_blob_put(c, "big", malloc(8), MODEL_CACHE_BLOB_BUDGET + 1, count_free);
    check(big && big->data, "an oversized blob is handed back");
    check(!held(c, "big"), "but not kept");
    check(held(c, "small"), "and it dropped nothing");
    model_cache_blob_release(c, big);
    check(freed == 1, "its data freed on release (%d)", freed);
    model_cache_free(c);
}

static void test_held_blob_outlives_drop(void)
{
    model_cache *c = model_cache_new(1000);
    freed = 0;
    const cache_blob *a = model_cache_blob_put(c, "a", malloc(8), MODEL_CACHE_BLOB_BUDGET / 2 + 1,
                                               count_free);
    put(c, "b", MODEL_CACHE_BLOB_BUDGET / 2 + 1);
    check(!held(c, "a"), "a dropped for b");
    check(freed == 0 && a && a->data, "a request's reference keeps a's data");
    model_cache_blob_release(c, a);
    check(freed == 1, "freed on the last release (%d)", freed);
    model_cache_free(c);
}

static void test_pages_keep_the_newest(void)
{
    model_cache *c = model_cache_new(1000);
    size_t len = 4u << 20; /* 40 pages of 4 MB: far beyond the 64 MB budget */
    char *body = malloc(len);
    memset(body, 'x', len);
    int kept = 0;
    for (int i = 0; i < 40; i++) {
        char key[32];
        snprintf(key, sizeof key, "set%d|predict", i);
        body[0] = (char)('a' + i % 26);
        char *copy = malloc(len);
        memcpy(copy, body, len);
        api_shared *s = api_shared_wrap(copy, len);
        model_cache_page_put(c, key, s);
        api_shared_release(s);
        api_shared *got = model_cache_page_get(c, key);
        size_t got_len = 0;
        const char *text = got ? api_shared_text(got, &got_len) : NULL;
        if (got && got_len == len && text[0] == body[0])
            kept++;
        api_shared_release(got);
    }
    check(kept == 40, "every newest page kept once the budget is full: %d of 40", kept);
    free(body);
    model_cache_free(c);
}

/* A page being sent outlives its eviction: the answer holds a reference
 * (under AddressSanitizer a freed text would be reported here). */
static void test_page_outlives_eviction(void)
{
    model_cache *c = model_cache_new(1000);
    size_t len = 4u << 20;
    char *first = malloc(len);
    memset(first, 'a', len);
    api_shared *s = api_shared_wrap(first, len);
    model_cache_page_put(c, "set0|statistics", s);
    api_shared_release(s);
    api_shared *sending = model_cache_page_get(c, "set0|statistics");
    for (int i = 1; i < 40; i++) { /* fills the budget: set0's page is dropped */
        char key[32], *b = malloc(len);
        memset(b, 'b', len);
        snprintf(key, sizeof key, "set%d|statistics", i);
        api_shared *o = api_shared_wrap(b, len);
        model_cache_page_put(c, key, o);
        api_shared_release(o);
    }
    api_shared *again = model_cache_page_get(c, "set0|statistics");
    check(again == NULL, "the oldest page was dropped from the cache");
    api_shared_release(again);
    size_t got = 0;
    const char *text = sending ? api_shared_text(sending, &got) : NULL;
    check(text && got == len && text[0] == 'a' && text[len - 1] == 'a',
          "the answer being sent still reads its whole text");
    api_shared_release(sending);
    model_cache_free(c);
}

/* "rows" is held by "stats" (built from it): dropped from the cache, its
 * data lives until "stats" goes; a holder that loses to a blob kept first
 * under its key takes no reference. */
static void test_holding_blob_keeps_its_source(void)
{
    model_cache *c = model_cache_new(1000);
    freed = 0;
    size_t third = MODEL_CACHE_BLOB_BUDGET / 3;
    const cache_blob *rows = model_cache_blob_put(c, "rows", malloc(8), third, count_free);
    const cache_blob *stats =
        model_cache_blob_put_holding(c, "stats", malloc(8), third, count_free, rows);
    const cache_blob *again =
        model_cache_blob_put_holding(c, "stats", malloc(8), third, count_free, rows);
    check(again == stats && freed == 1, "the second builder's data freed, the first kept");
    model_cache_blob_release(c, again);
    model_cache_blob_release(c, stats);
    model_cache_blob_release(c, rows);
    put(c, "x", third);
    put(c, "y", third); /* over the budget: rows, the least recently used, is dropped */
    check(!held(c, "rows") && held(c, "stats"), "rows dropped, stats kept");
    check(freed == 1, "rows' data still alive while stats holds it (%d freed)", freed);
    put(c, "z", MODEL_CACHE_BLOB_BUDGET); /* drops x, y and stats, and with stats rows */
    check(!held(c, "stats") && freed == 5, "stats dropped: its data and rows' freed (%d)", freed);
    model_cache_free(c);
}

int main(void)
{
    test_budget_drops_least_recent();
    test_oversized_not_kept();
    test_held_blob_outlives_drop();
    test_pages_keep_the_newest();
    test_holding_blob_keeps_its_source();
    test_page_outlives_eviction();
    return check_summary();
}
