/*
 * sim_units.c — parsing of bandwidths, sizes and count lists (sim_units.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_units.h"

/* Multiplier of a prefix at *p (advanced past it); 1 when none. */
static double prefix(const char **p)
{
    static const struct { char c; double dec, bin; } t[] = {
        {'k', 1e3, 1024.0}, {'K', 1e3, 1024.0}, {'M', 1e6, 1048576.0},
        {'G', 1e9, 1073741824.0}, {'T', 1e12, 1099511627776.0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (**p == t[i].c) {
            (*p)++;
            if (**p == 'i') {
                (*p)++;
                return t[i].bin;
            }
            return t[i].dec;
        }
    return 1;
}

static int number(const char *s, double *v, const char **rest)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno || !isfinite(*v) || !(*v > 0))
        return -1;
    while (*end == ' ')
        end++;
    *rest = end;
    return 0;
}

int sim_parse_bandwidth(const char *s, double *out)
{
    double v;
    const char *u;
    if (number(s, &v, &u))
        return -1;
    v *= prefix(&u);
    static const char *const bits[] = {"bit", "bps", "b/s", "bit/s", "bits/s", "b"};
    static const char *const bytes[] = {"", "B", "B/s", "Bps", "byte/s", "bytes/s"};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (!strcmp(u, bits[i])) {
            *out = v / 8;
            return isfinite(*out) && *out > 0 ? 0 : -1;
        }
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
        if (!strcmp(u, bytes[i])) {
            *out = v;
            return isfinite(*out) ? 0 : -1;
        }
    return -1;
}

int sim_parse_size(const char *s, double *out)
{
    double v;
    const char *u;
    if (number(s, &v, &u))
        return -1;
    v *= prefix(&u);
    if (strcmp(u, "") && strcmp(u, "B"))
        return -1;
    *out = v;
    return isfinite(v) ? 0 : -1;
}

static int integer(const char **p, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(*p, &end, 10);
    if (end == *p || errno || x < -1000000000L || x > 1000000000L)
        return -1;
    *v = (int)x;
    *p = end;
    return 0;
}

int sim_parse_list(const char *s, int lo, int hi, int *out, int max)
{
    if (!s || !*s)
        return -1;
    const char *p = s;
    int n = 0;
    for (;;) {
        /* one item: a, or a..b, or a..b:step */
        int a, b, step = 1;
        if (integer(&p, &a))
            return -1;
        b = a;
        if (!strncmp(p, "..", 2)) {
            p += 2;
            if (integer(&p, &b))
                return -1;
            if (*p == ':') {
                p++;
                if (integer(&p, &step) || step < 1)
                    return -1;
            }
            if (b < a)
                return -1;
        }
        if (a < lo || b > hi)
            return -1;
        for (long x = a; x <= b; x += step) {
            if (n == max || (n && x <= out[n - 1]))
                return -1;
            out[n++] = (int)x;
        }
        if (!*p)
            return n;
        if (*p != ',')
            return -1;
        p++;
    }
}
