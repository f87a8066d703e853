/*
 * auth.c — token secrets, hashing and parsing (see api/auth.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/auth.h"

int auth_secret_new(char hex[2 * AUTH_SECRET_BYTES + 1], unsigned char sha256[32])
{
    unsigned char raw[AUTH_SECRET_BYTES];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return -1;
    for (int i = 0; i < AUTH_SECRET_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    OPENSSL_cleanse(raw, sizeof raw);
    SHA256((const unsigned char *)hex, 2 * AUTH_SECRET_BYTES, sha256);
    return 0;
}

void auth_token_text(int64_t id, const char *hex, char *out, size_t cap)
{
    snprintf(out, cap, AUTH_TOKEN_PREFIX "%" PRId64 "_%s", id, hex);
}

int auth_token_parse(const char *token, int64_t *id, unsigned char sha256[32])
{
    size_t plen = strlen(AUTH_TOKEN_PREFIX);
    if (!token || strncmp(token, AUTH_TOKEN_PREFIX, plen))
        return -1;
    const char *p = token + plen;
    if (*p < '1' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno || v <= 0 || *end != '_')
        return -1;
    const char *hex = end + 1;
    size_t n = strlen(hex);
    if (n != 2 * AUTH_SECRET_BYTES)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)hex[i]) || isupper((unsigned char)hex[i]))
            return -1;
    *id = v;
    SHA256((const unsigned char *)hex, n, sha256);
    return 0;
}

const char *auth_bearer(const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7))
        return NULL;
    const char *t = authorization + 7;
    while (*t == ' ')
        t++;
    return *t ? t : NULL;
}

int auth_hash_equal(const unsigned char a[32], const unsigned char b[32])
{
    return CRYPTO_memcmp(a, b, 32) == 0;
}

long long auth_parse_duration(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long mul = !strcmp(end, "d") ? 86400 : !strcmp(end, "h") ? 3600
                  : !strcmp(end, "m") ? 60 : (!strcmp(end, "s") || !*end) ? 1 : 0;
    if (errno || !mul || v <= 0 || v > 100LL * 365 * 86400 / mul)
        return -1;
    return v * mul;
}
