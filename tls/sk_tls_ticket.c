/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tls_ticket.c - the session-ticket keys: derived from the secret and
 * the period number, so that every lcore (and every appliance with the same
 * secret) makes the same keys without talking to the others, and the keys
 * rotate with the wall clock. This period's key encrypts; the previous
 * period's still decrypts (and the ticket is renewed); older ones do not.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sk_tls_impl.h"

/* derive - HMAC-SHA256(secret, label || period, big-endian) into @out. */
static void
derive(const struct sk_tls_ticket_keys *k, const char *label, uint64_t period, uint8_t *out,
       size_t len)
{
	uint8_t msg[32], md[EVP_MAX_MD_SIZE];
	size_t ll = strlen(label);
	unsigned mdlen = 0;

	memcpy(msg, label, ll);
	for (int i = 0; i < 8; i++)
		msg[ll + (size_t)i] = (uint8_t)(period >> (56 - 8 * i));
	HMAC(EVP_sha256(), k->secret, (int)k->secret_len, msg, ll + 8, md, &mdlen);
	memcpy(out, md, len);
	OPENSSL_cleanse(md, sizeof(md));
}

static void
key_of(const struct sk_tls_ticket_keys *k, uint64_t period, struct sk_tls_ticket_key *key)
{
	key->period = period;
	derive(k, "seckill ticket name", period, key->name, sizeof(key->name));
	derive(k, "seckill ticket aes", period, key->aes_key, sizeof(key->aes_key));
	derive(k, "seckill ticket mac", period, key->hmac_key, sizeof(key->hmac_key));
}

void
sk_tls_ticket_keys_at(struct sk_tls_ticket_keys *k, uint64_t now_s)
{
	uint64_t p = now_s / k->rotate_s;

	/* period 0 is never current (the epoch's first hour): keys not made yet */
	if (p == k->cur.period && p != 0)
		return;
	if (p != 0 && p == k->cur.period + 1)
		k->prev = k->cur;
	else
		key_of(k, p - 1, &k->prev);
	key_of(k, p, &k->cur);
}

const struct sk_tls_ticket_key *
sk_tls_ticket_key_find(const struct sk_tls_ticket_keys *k, const uint8_t name[16], bool *renew)
{
	*renew = false;
	if (CRYPTO_memcmp(name, k->cur.name, sizeof(k->cur.name)) == 0)
		return &k->cur;
	if (CRYPTO_memcmp(name, k->prev.name, sizeof(k->prev.name)) == 0) {
		*renew = true;
		return &k->prev;
	}
	return NULL;
}
