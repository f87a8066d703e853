/*
 * bigcmp.c — see bigcmp.h. Little-endian 32-bit limbs, multiplication by
 * powers of five in steps of 5^13 (the largest below 2^32), shifts by whole
 * limbs and bits, comparison from the top limb.
 */
#include "common/bigcmp.h"

#include <string.h>

enum { LIMBS = BIGCMP_BITS / 32 };

typedef struct {
    uint32_t w[LIMBS];
    int n; /* limbs in use; w[n-1] != 0 unless n == 0 */
} big;

static void big_set(big *x, uint64_t v)
{
    x->n = 0;
    while (v) {
        x->w[x->n++] = (uint32_t)v;
        v >>= 32;
    }
}

static int big_mul32(big *x, uint32_t f)
{
    uint64_t carry = 0;
    for (int i = 0; i < x->n; i++) {
        uint64_t t = (uint64_t)x->w[i] * f + carry;
        x->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (x->n == LIMBS)
            return 0;
        x->w[x->n++] = (uint32_t)carry;
    }
    return 1;
}

static int big_shl(big *x, int bits)
{
    if (x->n == 0 || bits == 0)
        return 1;
    int limbs = bits / 32, rest = bits % 32;
    if (x->n + limbs + 1 > LIMBS)
        return 0;
    uint32_t top = rest ? x->w[x->n - 1] >> (32 - rest) : 0;
    for (int i = x->n - 1; i >= 0; i--) {
        uint32_t lower = rest && i > 0 ? x->w[i - 1] >> (32 - rest) : 0;
        x->w[i + limbs] = rest ? x->w[i] << rest | lower : x->w[i];
    }
    memset(x->w, 0, (size_t)limbs * sizeof x->w[0]);
    x->n += limbs;
    if (top)
        x->w[x->n++] = top;
    return 1;
}

static int big_cmp(const big *x, const big *y)
{
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    for (int i = x->n - 1; i >= 0; i--)
        if (x->w[i] != y->w[i])
            return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

/* x = v * 2^e2 * 5^e5, e2 and e5 >= 0 */
static int big_build(big *x, uint64_t v, int e2, int e5)
{
    big_set(x, v);
    for (; e5 >= 13; e5 -= 13)
        if (!big_mul32(x, 1220703125u))
            return 0;
    uint32_t f = 1;
    while (e5-- > 0)
        f *= 5;
    return big_mul32(x, f) && big_shl(x, e2);
}

int bigcmp_scaled(uint64_t a, int a2, int a5, uint64_t b, int b2, int b5, int *sign)
{
    int m2 = a2 < b2 ? a2 : b2, m5 = a5 < b5 ? a5 : b5;
    /* bound the exponents so that the bit counts below cannot overflow */
    if (a2 - m2 > BIGCMP_BITS || b2 - m2 > BIGCMP_BITS || a5 - m5 > BIGCMP_BITS ||
        b5 - m5 > BIGCMP_BITS)
        return 0;
    big x, y;
    if (!big_build(&x, a, a2 - m2, a5 - m5) || !big_build(&y, b, b2 - m2, b5 - m5))
        return 0;
    *sign = big_cmp(&x, &y);
    return 1;
}
