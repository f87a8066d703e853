/*
 * test_limits.c — api/limits.c without a server: the token bucket of one
 * token empties after its burst and refills at its rate while other tokens
 * keep theirs, open mode (no token) is not limited, and a tenant's uploads
 * in progress stop at the limit until one ends.
 */
#include <string.h>
#include <unistd.h>

#include "api/limits.h"
#include "tests/check.h"

static const char *header(const api_response *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (!strcmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

static void test_bucket(void)
{
    api_limits *l = api_limits_new(20, 5, 0);
    api_request a = {.token_id = 7}, b = {.token_id = 8}, open = {.token_id = 0};
    api_response r = {0};
    int ok = 0;
    for (int i = 0; i < 5; i++)
        ok += !api_limits_request(l, &a, &r);
    check(ok == 5, "a burst of 5 passes: %d", ok);
    check(api_limits_request(l, &a, &r) == -1 && r.status == 429 && header(&r, "Retry-After"),
          "the 6th: %d, Retry-After %s", r.status, header(&r, "Retry-After") ? "set" : "missing");
    api_response_free(&r);
    check(!api_limits_request(l, &b, &r), "another token keeps its bucket");
    int open_ok = 0;
    for (int i = 0; i < 1000; i++)
        open_ok += !api_limits_request(l, &open, &r);
    check(open_ok == 1000, "open mode is not limited");
    usleep(120000); /* 20/s: two more */
    check(!api_limits_request(l, &a, &r), "refilled at the rate");
    api_response_free(&r);
    api_limits_free(l);

    l = api_limits_new(0, 5, 0);
    ok = 0;
    for (int i = 0; i < 1000; i++)
        ok += !api_limits_request(l, &a, &r);
    check(ok == 1000, "rate 0: no limit");
    api_limits_free(l);

    /* many tokens: the table forgets the least recently used, never fails */
    l = api_limits_new(1, 1, 0);
    for (int64_t t = 1; t <= 20000; t++) {
        api_request x = {.token_id = t};
        if (api_limits_request(l, &x, &r)) {
            check(0, "token %lld's first request refused", (long long)t);
            break;
        }
    }
    api_response_free(&r);
    api_limits_free(l);
}

static void test_uploads(void)
{
    api_limits *l = api_limits_new(0, 1, 2);
    api_request t1 = {.tenant_id = 1}, t2 = {.tenant_id = 2};
    api_response r = {0};
    check(!api_limits_upload_begin(l, &t1, &r) && !api_limits_upload_begin(l, &t1, &r),
          "two uploads of a tenant at once");
    check(api_limits_upload_begin(l, &t1, &r) == -1 && r.status == 429, "a third: %d", r.status);
    api_response_free(&r);
    check(!api_limits_upload_begin(l, &t2, &r), "another tenant uploads meanwhile");
    api_limits_upload_end(l, &t1);
    check(!api_limits_upload_begin(l, &t1, &r), "after one ends, the next may start");
    api_response_free(&r);
    api_limits_free(l);
}

int main(void)
{
    test_bucket();
    test_uploads();
    return check_summary();
}
