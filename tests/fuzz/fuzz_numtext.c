/*
 * fuzz_numtext.c — libFuzzer target for the shortest-decimal printer
 * (common/numtext.h): numtext_format_shortest() must write the same bytes
 * as the previous implementation (tests/numtext_reference.h) and text that
 * numtext_parse() reads back as the same double.
 *
 * Input: every 8 bytes are a double's bit pattern (little-endian), printed
 * with its two neighbours on each side; the whole input, when it starts
 * with a decimal number, is parsed and that value printed too. Any
 * difference aborts. Seeds: tests/fuzz/corpus/numtext/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"
#include "tests/numtext_reference.h"

static void check_one(double v)
{
    char a[40], b[40];
    int na = numtext_format_shortest(v, a), nb = numtext_ref_format_shortest(v, b);
    if (na != nb || strcmp(a, b)) {
        fprintf(stderr, "%a: %s, the reference %s\n", v, a, b);
        abort();
    }
    if (isfinite(v)) {
        double back;
        if (numtext_parse(a, (size_t)na, &back) != (size_t)na || memcmp(&back, &v, sizeof v)) {
            fprintf(stderr, "%a: %s does not read back\n", v, a);
            abort();
        }
    }
}

static void check_around(double v)
{
    check_one(v);
    if (!isfinite(v))
        return;
    double lo = v, hi = v;
    for (int i = 0; i < 2; i++) {
        lo = nextafter(lo, -INFINITY);
        hi = nextafter(hi, INFINITY);
        check_one(lo);
        check_one(hi);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 8 <= size; i += 8) {
        uint64_t bits = 0;
        for (int k = 7; k >= 0; k--)
            bits = bits << 8 | data[i + (size_t)k];
        double v;
        memcpy(&v, &bits, sizeof v);
        check_around(v);
    }
    double parsed;
    if (numtext_parse((const char *)data, size, &parsed) > 0)
        check_around(parsed);
    return 0;
}
