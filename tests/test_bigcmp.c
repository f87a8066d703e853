/*
 * test_bigcmp.c — common/bigcmp: exact comparison of A * 2^a2 * 5^a5 with
 * B * 2^b2 * 5^b5 against 128-bit integer arithmetic on small exponents,
 * identities and known orderings of large powers (5^300 lies between 2^696
 * and 2^697), equal values built two ways, and refusal beyond its size.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/bigcmp.h"
#include "tests/check.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* v * 2^(e2 + 24) * 5^e5, exact for |e2| <= 24, e5 <= 12, v < 2^24 */
static u128 scaled(uint64_t v, int e2, int e5)
{
    u128 x = v;
    for (int i = 0; i < e5; i++)
        x *= 5;
    return x << (e2 + 24);
}

static void test_small(void)
{
    uint64_t s = 0x853c49e6748fea9bULL;
    long bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t a = next(&s) % (1 << 24), b = next(&s) % (1 << 24);
        int a2 = (int)(next(&s) % 49) - 24, b2 = (int)(next(&s) % 49) - 24;
        int a5 = (int)(next(&s) % 13), b5 = (int)(next(&s) % 13);
        if (i % 4 == 0) { /* equal values: b * 2^b2 * 5^b5 rebuilt as a */
            b = a;
            b2 = a2;
            b5 = a5;
            if (a % 5 == 0 && a5 < 12) {
                b = a / 5;
                b5 = a5 + 1;
            }
        }
        u128 x = scaled(a, a2, a5), y = scaled(b, b2, b5);
        int want = x < y ? -1 : x > y, got = 2;
        if ((!bigcmp_scaled(a, a2, a5, b, b2, b5, &got) || got != want) && bad++ < 5)
            fprintf(stderr, "%llu*2^%d*5^%d vs %llu*2^%d*5^%d: %d, want %d\n", (unsigned long long)a,
                    a2, a5, (unsigned long long)b, b2, b5, got, want);
    }
    check(bad == 0, "%ld small comparisons wrong", bad);
}

static void test_large(void)
{
    int sign = 2;
    check(bigcmp_scaled(1, 0, 300, 1, 697, 0, &sign) && sign == -1, "5^300 < 2^697: %d", sign);
    check(bigcmp_scaled(1, 0, 300, 1, 696, 0, &sign) && sign == 1, "5^300 > 2^696: %d", sign);
    check(bigcmp_scaled(7, -1074, 340, 7, -1074, 340, &sign) && sign == 0, "equal: %d", sign);
    /* 10^k = 2^k * 5^k against the same number with the factors moved */
    check(bigcmp_scaled(1000, 330, 330, 1, 333, 333, &sign) && sign == 0, "10^333 two ways: %d",
          sign);
    check(bigcmp_scaled(999, 330, 330, 1, 333, 333, &sign) && sign == -1, "999e330 < 1e333: %d",
          sign);
    check(bigcmp_scaled(UINT64_MAX, 0, 0, UINT64_MAX - 1, 0, 0, &sign) && sign == 1,
          "64-bit values: %d", sign);
    check(bigcmp_scaled(0, 5, 5, 1, -3, 0, &sign) && sign == -1, "zero: %d", sign);
    check(!bigcmp_scaled(1, BIGCMP_BITS + 1, 0, 1, 0, 0, &sign), "too large refused");
    check(!bigcmp_scaled(3, 0, 2000, 1, 0, 0, &sign), "5^2000 refused");
}

int main(void)
{
    test_small();
    test_large();
    return check_summary();
}
