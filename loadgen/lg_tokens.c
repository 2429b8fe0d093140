/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_tokens.c - the pre-minted JWT pool (see lg_tokens.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk_common.h"

#include "lg_tokens.h"
#include "sk_config.h"
#include "sk_token.h"

int
lg_tokens_mint(struct lg_tokens *t, const char *secret_file, uint32_t n, uint64_t user_base,
	       uint64_t item, uint32_t ttl_s, uint32_t gate_pct, char *err, size_t errlen)
{
	static uint8_t secret[SK_CONFIG_TOKEN_SECRET_MAX];
	struct sk_token_key *key = NULL;
	struct sk_token_claims c;
	int64_t now = (int64_t)time(NULL);
	size_t len = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = sk_config_read_secret(secret_file, secret, &len, err, errlen);
	if (rc == 0) {
		rc = sk_token_key_create(secret, len, &key);
		if (rc != 0)
			sk_set_err(err, errlen, "--secret-file %s: %s", secret_file,
				   rc == -EINVAL ? "secret shorter than 32 bytes"
						 : "cannot build the key");
	}
	memset(secret, 0, sizeof(secret));
	if (rc != 0)
		return rc;
	t->buf = malloc((size_t)n * LG_TOKEN_STRIDE);
	t->len = malloc((size_t)n * sizeof(*t->len));
	if (t->buf == NULL || t->len == NULL) {
		sk_set_err(err, errlen, "--tokens %u: out of memory", n);
		rc = -ENOMEM;
		goto err;
	}
	memset(&c, 0, sizeof(c));
	c.item = item;
	c.has_item = true;
	c.exp = now + ttl_s;
	c.nbf = now - 60; /* the appliance's clock may be a little behind */
	c.has_nbf = true;
	for (uint32_t i = 0; i < n; i++) {
		size_t tl;

		c.user = user_base + i;
		c.gate = item;
		c.has_gate = item != 0 && lg_tokens_gated(i, gate_pct);
		rc = sk_token_mint(key, &c, t->buf + (size_t)i * LG_TOKEN_STRIDE, LG_TOKEN_STRIDE,
				   &tl);
		if (rc != 0) {
			sk_set_err(err, errlen, "--tokens: cannot mint the token of user %llu: %s",
				   (unsigned long long)c.user, strerror(-rc));
			goto err;
		}
		t->len[i] = (uint16_t)tl;
	}
	t->n = n;
	sk_token_key_free(key);
	return 0;
err:
	sk_token_key_free(key);
	lg_tokens_free(t);
	return rc;
}

void
lg_tokens_free(struct lg_tokens *t)
{
	free(t->buf);
	free(t->len);
	memset(t, 0, sizeof(*t));
}
