/*
 * extrap_scan.c — byte-level helpers shared by the Extra-P readers.
 *
 * Line splitting follows Python's universal newlines (Extra-P opens files in
 * text mode), whitespace follows str.split(), and numbers are what Python's
 * float() accepts minus the spellings perfcast refuses (nan, inf, hex,
 * underscores). Buffers are never assumed NUL-terminated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/numtext.h"
#include "ingest/extrap_internal.h"

void ingest_lines_init(ingest_lines *it, const char *buf, size_t len)
{
    it->buf = buf;
    it->len = len;
    it->pos = 0;
    it->lineno = 0;
}

int ingest_lines_next(ingest_lines *it, const char **line, size_t *n)
{
    if (it->pos >= it->len)
        return 0;
    const char *start = it->buf + it->pos;
    size_t left = it->len - it->pos;
    const char *nl = memchr(start, '\n', left);
    size_t i = nl ? (size_t)(nl - start) : left;
    const char *cr = memchr(start, '\r', i);
    if (cr)
        i = (size_t)(cr - start);
    *line = start;
    *n = i;
    if (i < left) {
        if (start[i] == '\r' && i + 1 < left && start[i + 1] == '\n')
            i++;
        i++;
    }
    it->pos += i;
    it->lineno++;
    return 1;
}

int ingest_is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ingest_is_space(s[i]))
            return 0;
    return 1;
}

/* Matches [+-]?(nan|inf|infinity), any case: what float() reads as non-finite. */
static int spells_nonfinite(const char *s, size_t n)
{
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        s++;
        n--;
    }
    return (n == 3 && (strncasecmp(s, "nan", 3) == 0 || strncasecmp(s, "inf", 3) == 0)) ||
           (n == 8 && strncasecmp(s, "infinity", 8) == 0);
}

/* Checks the decimal grammar; fills the parts the fast path needs. */
typedef struct number_shape {
    int negative;
    uint64_t mantissa;   /* significant digits, when they fit */
    int digits;          /* significant digits counted (leading zeros skipped) */
    long exp10;          /* exponent to apply to mantissa */
} number_shape;

static int scan_decimal(const char *s, size_t n, number_shape *sh)
{
    size_t i = 0;
    int int_digits = 0, frac_digits = 0;
    memset(sh, 0, sizeof(*sh));
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        sh->negative = s[i] == '-';
        i++;
    }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, int_digits++) {
        if (sh->digits == 0 && s[i] == '0')
            continue;
        if (sh->digits < 19)
            sh->mantissa = sh->mantissa * 10 + (uint64_t)(s[i] - '0');
        else
            sh->exp10++;
        sh->digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, frac_digits++) {
            if (sh->digits == 0 && s[i] == '0') {
                sh->exp10--;
                continue;
            }
            if (sh->digits < 19) {
                sh->mantissa = sh->mantissa * 10 + (uint64_t)(s[i] - '0');
                sh->exp10--;
            }
            sh->digits++;
        }
    }
    if (int_digits + frac_digits == 0)
        return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        long e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i >= n || s[i] < '0' || s[i] > '9')
            return -1;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
        sh->exp10 += eneg ? -e : e;
    }
    return i == n ? 0 : -1;
}

/* Clinger's fast path: exact when the mantissa and the power of ten are both
 * exactly representable, so one correctly rounded operation gives the result. */
static int fast_decimal(const number_shape *sh, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (sh->digits > 19 || sh->mantissa > (UINT64_C(1) << 53) || sh->exp10 < -22 ||
        sh->exp10 > 22)
        return -1;
    double m = (double)sh->mantissa;
    double v = sh->exp10 < 0 ? m / pow10[-sh->exp10] : m * pow10[sh->exp10];
    *out = sh->negative ? -v : v;
    return 0;
}

ingest_number_status ingest_parse_number(const char *s, size_t n, locale_t c_locale, double *out)
{
    number_shape sh;
    if (scan_decimal(s, n, &sh) < 0)
        return spells_nonfinite(s, n) ? INGEST_NUMBER_NONFINITE : INGEST_NUMBER_INVALID;
    if (fast_decimal(&sh, out) == 0)
        return INGEST_NUMBER_OK;
    double v;
    if (numtext_parse(s, n, &v) == n) { /* exact, mostly without strtod */
        if (!isfinite(v))
            return INGEST_NUMBER_NONFINITE;
        *out = v;
        return INGEST_NUMBER_OK;
    }

    char small[128];
    char *copy = n < sizeof(small) ? small : malloc(n + 1);
    if (!copy)
        return INGEST_NUMBER_INVALID;
    memcpy(copy, s, n);
    copy[n] = '\0';
    v = strtod_l(copy, NULL, c_locale);
    if (copy != small)
        free(copy);
    if (!isfinite(v))
        return INGEST_NUMBER_NONFINITE;
    *out = v;
    return INGEST_NUMBER_OK;
}

int ingest_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        /* Eight plain ASCII bytes at a time: no high bit, no zero byte. */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            uint64_t high = w & UINT64_C(0x8080808080808080);
            uint64_t zero = (w - UINT64_C(0x0101010101010101)) & ~w & UINT64_C(0x8080808080808080);
            if (high | zero)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        unsigned c = p[i];
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t extra;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) {
            extra = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            extra = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            extra = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (n - i <= extra)
            return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += extra + 1;
    }
    return 1;
}
