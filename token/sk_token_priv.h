/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token_priv.h - private to token/: what the files of the token library
 * share (sk_token.c verifies and mints with the HMAC of sk_token_key.c, the
 * codec of sk_token_b64.c and the checks of sk_token_claims.c). Not
 * installed, not for other folders: sk_token.h is the interface.
 *
 * Every function here works on buffers the caller owns, allocates nothing,
 * takes no lock, makes no system call and may run on any thread at once.
 */
#ifndef SK_TOKEN_PRIV_H
#define SK_TOKEN_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sk_token.h"

#define SK_HMAC_BLOCK 64 /* SHA-256 block size */
#define SK_MAC_LEN    32 /* SHA-256 output size */

/* Longest decoded segment: 3/4 of the longest token. */
#define SK_SEG_MAX ((SK_TOKEN_MAX_LEN / 4 + 1) * 3)

/* ------------------------------------------------------------------------
 * HMAC (sk_token_key.c)
 */

/*
 * sk_token_hmac - HMAC-SHA256 of @msg (@len bytes) under @key into @mac:
 * resumes from the key's two SHA-256 midstates (copies them; @key is only
 * read).
 */
void sk_token_hmac(const struct sk_token_key *key, const void *msg, size_t len,
		   uint8_t mac[SK_MAC_LEN]);

/* sk_token_key_size - bytes of a struct sk_token_key (for the static check of SK_TOKEN_KEY_SIZE).
 */
size_t sk_token_key_size(void);

/* ------------------------------------------------------------------------
 * base64url, unpadded (sk_token_b64.c)
 */

/*
 * sk_token_b64_decode - decode @n chars of @in into @out (capacity @cap).
 * Refuses padding, any byte outside the alphabet, a length of 1 mod 4 and
 * non-zero unused bits in the last char (so each byte string has exactly one
 * accepted encoding). Returns the decoded length, or -1 (also when @cap is
 * too small).
 */
ssize_t sk_token_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap);

/*
 * sk_token_b64_encode - encode @n bytes of @in into @out, unpadded; returns
 * the chars written (sk_token_b64_len(@n)). Room is checked by the caller.
 */
size_t sk_token_b64_encode(const uint8_t *in, size_t n, char *out);

/* sk_token_b64_len - chars needed for @n bytes, unpadded. */
static inline size_t
sk_token_b64_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

/* ------------------------------------------------------------------------
 * Header and claims (sk_token_claims.c)
 */

/* What sk_token_check_payload() found; zero it before the call. */
struct sk_claims_seen {
	uint64_t sub, item, gate;
	int64_t exp, nbf;
	bool has_sub, bad_sub, has_item, has_exp, has_nbf, has_gate;
};

/*
 * sk_token_check_header - the decoded JOSE header @h (@n bytes): a JSON
 * object with "alg":"HS256", typ "JWT" if present, no crit, no duplicate.
 * A kid, of any value, sets *@kid non-NULL: pointing into @h with its
 * length in *@kid_len when it is a key id, else with length 0 (it matches
 * no key); NULL, 0 without a kid. Returns SK_TOKEN_OK, SK_TOKEN_E_HEADER or SK_TOKEN_E_ALG.
 */
enum sk_token_status sk_token_check_header(const uint8_t *h, size_t n, const uint8_t **kid,
					   size_t *kid_len);

/*
 * sk_token_check_payload - scan the decoded claims @p (@n bytes) into @c:
 * sub, item, exp, nbf, gate (each at most once, of the right type; gate a
 * string of a decimal id 1..UINT64_MAX); any other claim is skipped. Returns SK_TOKEN_OK or
 * SK_TOKEN_E_MALFORMED; a sub that is valid JSON but not a user id sets @c->bad_sub instead.
 */
enum sk_token_status sk_token_check_payload(const uint8_t *p, size_t n, struct sk_claims_seen *c);

#endif /* SK_TOKEN_PRIV_H */
