/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_token.c - libFuzzer target for sk_token_verify(), sk_token_verify_claims()
 * and sk_token_peek_user().
 *
 * The first input byte picks a mode:
 *   even  the rest is a raw token. Verify must not crash, and if it accepts,
 *         the signature segment must be the HMAC (OpenSSL's one-shot HMAC())
 *         of the signing input under the key: nothing is accepted that was
 *         not signed with the key.
 *   odd   the rest is "header JSON" 0xff "payload JSON"; the harness encodes
 *         and signs it with the key, so the fuzzer reaches the claim
 *         scanner. An accepted token must have a non-zero user and be
 *         expired at the end of time; a token signed with the key is never
 *         refused for its signature; the same token with one signature bit flipped, or
 *         signed with another key, must be refused.
 * Every token is copied into a buffer of exactly its length so ASan catches
 * any overread. sk_token_verify() and sk_token_verify_claims() must agree
 * (status and user) on every input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sk_token.h"

#define NOW  1700000000LL
#define SKEW 30u
#define ITEM 7u

static const char secret[] = "fuzz-secret-0123456789-abcdefghijklmnopq";
static const char other[] = "fuzz-other-0123456789-abcdefghijklmnopqr";

static size_t
b64url(const uint8_t *in, size_t n, char *out)
{
	size_t i, len = (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);

	while (len > 0 && out[len - 1] == '=')
		len--;
	for (i = 0; i < len; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	return len;
}

static enum sk_token_status
verify_exact(const struct sk_token_key *k, const char *tok, size_t len, int64_t now, uint64_t *user)
{
	char *copy = malloc(len ? len : 1);
	enum sk_token_status st;

	if (copy == NULL)
		abort();
	memcpy(copy, tok, len);
	st = sk_token_verify(k, copy, len, ITEM, now, SKEW, user);

	struct sk_token_verified v = {0, 0};
	if (sk_token_verify_claims(k, copy, len, ITEM, now, SKEW, &v) != st ||
	    (st == SK_TOKEN_OK && v.user != *user))
		abort();
	free(copy);
	return st;
}

/*
 * peek_agrees - sk_token_peek_user() on an exact-size copy of @tok: it must
 * not crash, and for a token that verified as @user it must read @user
 * (its fast path for a leading "sub" and its full parse agree with verify).
 */
static void
peek_agrees(const char *tok, size_t len, enum sk_token_status st, uint64_t user)
{
	char *copy = malloc(len ? len : 1);
	uint64_t peeked = 0;

	if (copy == NULL)
		abort();
	memcpy(copy, tok, len);
	int rc = sk_token_peek_user(copy, len, &peeked);
	free(copy);
	if (st == SK_TOKEN_OK && (rc != 0 || peeked != user))
		abort();
}

/* signed_by - the last segment of @tok is base64url(HMAC(@key, rest)). */
static int
signed_by(const char *key, const char *tok, size_t len)
{
	unsigned char mac[32];
	unsigned int maclen;
	char enc[64];
	const char *dot = NULL;
	size_t i, el;

	for (i = 0; i < len; i++)
		if (tok[i] == '.')
			dot = tok + i;
	if (dot == NULL)
		return 0;
	HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)tok, (size_t)(dot - tok),
	     mac, &maclen);
	el = b64url(mac, 32, enc);
	return len - (size_t)(dot + 1 - tok) == el && memcmp(dot + 1, enc, el) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sk_token_key *key;
	static char tok[4 * SK_TOKEN_MAX_LEN];
	const uint8_t *split;
	unsigned char mac[32];
	unsigned int maclen;
	uint64_t user = 0;
	enum sk_token_status st;
	size_t o, hl, pl;

	if (key == NULL && sk_token_key_create(secret, strlen(secret), &key) != 0)
		abort();
	if (size < 1)
		return 0;

	if ((data[0] & 1) == 0) {
		st = verify_exact(key, (const char *)data + 1, size - 1, NOW, &user);
		if (st == SK_TOKEN_OK &&
		    (!signed_by(secret, (const char *)data + 1, size - 1) || user == 0))
			abort();
		peek_agrees((const char *)data + 1, size - 1, st, user);
		return 0;
	}

	data++;
	size--;
	if (size > SK_TOKEN_MAX_LEN)
		return 0;
	split = memchr(data, 0xff, size);
	if (split == NULL)
		return 0;
	hl = (size_t)(split - data);
	pl = size - hl - 1;
	o = b64url(data, hl, tok);
	tok[o++] = '.';
	o += b64url(split + 1, pl, tok + o);
	HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)tok, o, mac, &maclen);
	tok[o++] = '.';
	o += b64url(mac, 32, tok + o);

	st = verify_exact(key, tok, o, NOW, &user);
	if (st == SK_TOKEN_OK && user == 0)
		abort();
	peek_agrees(tok, o, st, user);
	/* exp is required and bounded: no accepted token is valid for ever */
	if (st == SK_TOKEN_OK && verify_exact(key, tok, o, SK_TOKEN_TIME_MAX + SK_TOKEN_SKEW_MAX,
					      &user) != SK_TOKEN_E_EXPIRED)
		abort();
	if (st == SK_TOKEN_E_SIGNATURE && o <= SK_TOKEN_MAX_LEN)
		abort(); /* signed with the key: a signature refusal is a bug */

	/* one flipped signature bit: never accepted */
	tok[o - 3] = tok[o - 3] == 'A' ? 'Q' : 'A';
	if (verify_exact(key, tok, o, NOW, &user) == SK_TOKEN_OK)
		abort();
	tok[o - 3] = tok[o - 3] == 'A' ? 'Q' : 'A';

	/* signed with another key: never accepted */
	o -= 43;
	HMAC(EVP_sha256(), other, (int)strlen(other), (unsigned char *)tok, o - 1, mac, &maclen);
	o += b64url(mac, 32, tok + o);
	if (verify_exact(key, tok, o, NOW, &user) == SK_TOKEN_OK)
		abort();
	return 0;
}
