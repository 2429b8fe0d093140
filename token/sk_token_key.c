/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token_key.c - the HMAC-SHA256 key of the tokens: the SHA-256 states
 * after absorbing K^ipad and K^opad (sk_token_key_create()), and the HMAC
 * of a message resumed from them (sk_token_hmac()). The only file of
 * token/ that calls OpenSSL's SHA-256.
 */

/*
 * OpenSSL 3 marks the low-level SHA256_Init/Update/Final deprecated in favour
 * of EVP. EVP cannot do what HMAC with precomputed states needs without
 * allocating: resuming from a saved midstate means EVP_MD_CTX_copy_ex(),
 * whose provider dupctx() mallocs on every call, and EVP_MAC re-derives the
 * pads per message. The low-level functions still exist in every OpenSSL 3
 * build that does not define OPENSSL_NO_DEPRECATED_3_0 (Debian's does not),
 * use the same assembly (SHA-NI when present) and a SHA256_CTX is a plain
 * struct we can copy. So silence the deprecation for this file only.
 * bench/token measures the difference against the one-shot HMAC().
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "sk_token.h"
#include "sk_token_priv.h"

#if defined(OPENSSL_NO_DEPRECATED_3_0)
#error "sk_token needs the low-level SHA256 functions (OpenSSL built without deprecated API)"
#endif

/* ------------------------------------------------------------------------
 * HMAC key: SHA-256 states after absorbing K^ipad and K^opad.
 */

struct sk_token_key {
	SHA256_CTX inner; /* state after (K ^ ipad), one block absorbed */
	SHA256_CTX outer; /* state after (K ^ opad), one block absorbed */
};

_Static_assert(sizeof(struct sk_token_key) <= SK_TOKEN_KEY_SIZE, "SK_TOKEN_KEY_SIZE too small");
_Static_assert(_Alignof(struct sk_token_key) <= 8, "a key slot is 8-byte aligned");

size_t
sk_token_key_size(void)
{
	return sizeof(struct sk_token_key);
}

/* key_fill - the two midstates of @secret into @key. */
static void
key_fill(struct sk_token_key *key, const void *secret, size_t len)
{
	uint8_t k[SK_HMAC_BLOCK], pad[SK_HMAC_BLOCK];
	size_t i;

	memset(k, 0, sizeof(k));
	if (len > SK_HMAC_BLOCK)
		SHA256(secret, len, k);
	else
		memcpy(k, secret, len);

	for (i = 0; i < SK_HMAC_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	SHA256_Init(&key->inner);
	SHA256_Update(&key->inner, pad, sizeof(pad));
	for (i = 0; i < SK_HMAC_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	SHA256_Init(&key->outer);
	SHA256_Update(&key->outer, pad, sizeof(pad));

	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
}

int
sk_token_key_create(const void *secret, size_t len, struct sk_token_key **out)
{
	struct sk_token_key *key;

	if (secret == NULL || out == NULL || len < SK_TOKEN_SECRET_MIN)
		return -EINVAL;
	key = calloc(1, sizeof(*key));
	if (key == NULL)
		return -ENOMEM;
	key_fill(key, secret, len);
	*out = key;
	return 0;
}

const struct sk_token_key *
sk_token_key_init(void *mem, size_t size, const void *secret, size_t len)
{
	if (mem == NULL || secret == NULL || size < sizeof(struct sk_token_key) ||
	    ((uintptr_t)mem & 7) != 0 || len < SK_TOKEN_SECRET_MIN)
		return NULL;
	key_fill(mem, secret, len);
	return mem;
}

const struct sk_token_key *
sk_token_key_copy(void *mem, size_t size, const struct sk_token_key *src)
{
	if (mem == NULL || src == NULL || size < sizeof(struct sk_token_key) ||
	    ((uintptr_t)mem & 7) != 0)
		return NULL;
	memcpy(mem, src, sizeof(*src));
	return mem;
}

void
sk_token_key_free(struct sk_token_key *key)
{
	if (key == NULL)
		return;
	OPENSSL_cleanse(key, sizeof(*key));
	free(key);
}

void
sk_token_hmac(const struct sk_token_key *key, const void *msg, size_t len, uint8_t mac[SK_MAC_LEN])
{
	uint8_t ih[SK_MAC_LEN];
	SHA256_CTX c;

	c = key->inner;
	SHA256_Update(&c, msg, len);
	SHA256_Final(ih, &c);
	c = key->outer;
	SHA256_Update(&c, ih, sizeof(ih));
	SHA256_Final(mac, &c);
}
