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

int
sk_token_key_create(const void *secret, size_t len, struct sk_token_key **out)
{
	uint8_t k[SK_HMAC_BLOCK], pad[SK_HMAC_BLOCK];
	struct sk_token_key *key;
	size_t i;

	if (secret == NULL || out == NULL || len < SK_TOKEN_SECRET_MIN)
		return -EINVAL;
	key = calloc(1, sizeof(*key));
	if (key == NULL)
		return -ENOMEM;

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
	*out = key;
	return 0;
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
