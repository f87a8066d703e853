/*
 * auth.h — who is asking: API tokens and the per-route check that
 * api_dispatch() runs before a /v1 handler.
 *
 * A token reads "pcf_<id>_<64 hex digits>": the id names the row in the
 * tokens table (store/tokens.h), the hex digits are 32 bytes from
 * RAND_bytes. Only SHA-256 of the secret part is stored, and the hash of
 * what a client sends is compared with CRYPTO_memcmp. Every request reads
 * its token's row, so a revocation or an expiry counts from the next
 * request on.
 *
 * Open mode: while no token has ever been created and the server may run
 * open (it listens on loopback, or was started --insecure), a request
 * without Authorization acts as an admin of the default tenant. The first
 * token created (CLI or POST /v1/tokens) ends open mode for good.
 */
#ifndef PERFCAST_API_AUTH_H
#define PERFCAST_API_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_TOKEN_PREFIX "pcf_"
#define AUTH_SECRET_BYTES 32
#define AUTH_TOKEN_MAX 96 /* "pcf_" + id + "_" + 64 hex + NUL fits */

/* Creating a token: auth_secret_new() (32 random bytes as hex, and the
 * SHA-256 of that hex text, which is what gets stored), insert the row,
 * then auth_token_text() with the row's id. 0, or -1 when the random
 * generator failed. */
int auth_secret_new(char hex[2 * AUTH_SECRET_BYTES + 1], unsigned char sha256[32]);
void auth_token_text(int64_t id, const char *hex, char *out, size_t cap);

/* Splits a token text into its id and the SHA-256 of its secret part.
 * 0, or -1 when it is not shaped like a token. */
int auth_token_parse(const char *token, int64_t *id, unsigned char sha256[32]);

/* The token of an "Authorization: Bearer <token>" value, NULL when the
 * value is not a bearer credential. */
const char *auth_bearer(const char *authorization);

/* Constant-time equality of two SHA-256 digests. */
int auth_hash_equal(const unsigned char a[32], const unsigned char b[32]);

/* "30d", "12h", "90m", "45s", "3600" -> seconds; -1 when malformed. */
long long auth_parse_duration(const char *s);

#endif
