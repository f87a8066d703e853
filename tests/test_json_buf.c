/*
 * test_json_buf.c — api/json_buf: the buffer writer gives the text
 * api_json_text() gives for the same document (shortest reals, null for
 * non-finite ones, escapes, insertion order), whole numbers through its
 * short path exactly as numtext writes them, and insertion in front.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/http.h"
#include "api/json_buf.h"
#include "common/numtext.h"
#include "tests/check.h"

static void test_document(void)
{
    json_t *doc = json_pack("{s:i, s:f, s:s, s:[f, f, b, n], s:{s:s}}", "n", -42, "x", 0.05,
                            "text", "a\"b\\c\n\x01", "list", 1.0, 1e301, 1, "o", "k", "v");
    jbuf b = {0};
    JBUF_LIT(&b, "{");
    jbuf_members(&b, doc);
    JBUF_LIT(&b, "}");
    size_t len, ref_len;
    char *text = jbuf_take(&b, &len), *ref = api_json_text(doc, &ref_len);
    check(text && ref && len == ref_len && !strcmp(text, ref), "members = api_json_text: %s | %s",
          text, ref);
    check(ref && !strcmp(ref, "{\"n\":-42,\"x\":0.05,\"text\":\"a\\\"b\\\\c\\n\\u0001\","
                              "\"list\":[1.0,1e+301,true,null],\"o\":{\"k\":\"v\"}}"),
          "the text: %s", ref);
    free(text);
    free(ref);
    json_decref(doc);
}

static void test_numbers(void)
{
    static const double vals[] = {1, -1, 7, 100, 4096, 123456789012345, -999999999999999,
                                  9007199254740992.0 /* 2^53, above the short path */,
                                  1e15, 0.0, -0.0, 0.5, 1e-7, 2.5e-300};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        jbuf b = {0};
        jbuf_real(&b, vals[i]);
        size_t len;
        char *t = jbuf_take(&b, &len), want[32];
        numtext_format_shortest(vals[i], want);
        check(t && !strcmp(t, want), "%.17g: %s, numtext %s", vals[i], t, want);
        free(t);
    }
    jbuf b = {0};
    jbuf_real(&b, INFINITY);
    JBUF_LIT(&b, ",");
    jbuf_real(&b, NAN);
    JBUF_LIT(&b, ",");
    jbuf_int(&b, INT64_MIN);
    JBUF_LIT(&b, ",");
    jbuf_int(&b, 0);
    size_t len;
    char *t = jbuf_take(&b, &len);
    check(t && !strcmp(t, "null,null,-9223372036854775808,0"),
          "non-finite reals and integers: %s", t);
    free(t);
}

static void test_insert(void)
{
    jbuf b = {0};
    jbuf_reserve(&b, 4);
    for (int i = 0; i < 1000; i++)
        JBUF_LIT(&b, "0123456789");
    jbuf_insert(&b, 0, "head:", 5);
    jbuf_insert(&b, b.len, ":tail", 5);
    size_t len;
    char *t = jbuf_take(&b, &len);
    check(t && len == 10010 && !strncmp(t, "head:0123", 9) && !strcmp(t + len - 8, "789:tail"),
          "insert in front and at the end (%zu bytes)", len);
    free(t);
}

int main(void)
{
    test_document();
    test_numbers();
    test_insert();
    return check_summary();
}
