/*
 * phase.c — validation-step patterns of profiler traces (phase.h).
 */
#include "ingest/phase.h"

#include <string.h>

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_alpha(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

void ingest_phase_compile(const char *text, ingest_phase_patterns *out)
{
    const char *s = text && *text ? text : INGEST_PHASE_DEFAULT;
    memset(out, 0, sizeof *out);
    while (*s && out->n < INGEST_PHASE_MAX_PATTERNS) {
        while (*s == ',' || *s == ' ')
            s++;
        size_t n = strcspn(s, ","), k = n;
        while (k > 0 && s[k - 1] == ' ')
            k--;
        if (k > 63)
            k = 63;
        if (k > 0) {
            for (size_t i = 0; i < k; i++)
                out->pat[out->n][i] = (char)lower((unsigned char)s[i]);
            out->len[out->n++] = k;
        }
        s += n;
    }
}

/* A word starts at i of name. */
static int word_start(const char *name, size_t i)
{
    if (i == 0)
        return 1;
    int prev = (unsigned char)name[i - 1], cur = (unsigned char)name[i];
    return !is_alpha(prev) || (prev >= 'a' && prev <= 'z' && cur >= 'A' && cur <= 'Z');
}

int ingest_phase_match(const ingest_phase_patterns *p, const char *name, size_t len)
{
    for (int k = 0; k < p->n; k++) {
        size_t m = p->len[k];
        for (size_t i = 0; i + m <= len; i++) {
            if (lower((unsigned char)name[i]) != p->pat[k][0] || !word_start(name, i))
                continue;
            size_t j = 1;
            while (j < m && lower((unsigned char)name[i + j]) == p->pat[k][j])
                j++;
            if (j == m)
                return 1;
        }
    }
    return 0;
}

int ingest_phase_check(const char *text)
{
    size_t len = text ? strlen(text) : 0;
    if (len == 0 || len > 256 || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,"))
        return -1;
    return 0;
}
