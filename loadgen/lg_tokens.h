/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The pool of pre-minted JWTs of seckill-loadgen's buy_jwt requests: one
 * token per user user_base .. user_base + n - 1, each restricted to the
 * item, minted at start-up with the project's token code (sk_token_mint())
 * and the sale's secret file (docs/tokens.md).
 *
 * Set-up allocates; reading a token (lg_tokens_get()) does not.
 */
#ifndef LG_TOKENS_H
#define LG_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes kept per token (the minted ones are ~190 bytes). */
#define LG_TOKEN_STRIDE 320

struct lg_tokens {
	char *buf;     /**< n tokens, LG_TOKEN_STRIDE bytes apart */
	uint16_t *len; /**< their lengths */
	uint32_t n;    /**< number of tokens, 0 = none */
};

/**
 * lg_tokens_mint - read the secret from @p secret_file and mint @p n tokens
 * for users @p user_base.., item @p item, valid from now - 60 s to now +
 * @p ttl_s. Token @c i carries the item's gate claim (`"gate":"<item>"`)
 * when i mod 100 < @p gate_pct (0: none, 100: all; see lg_tokens_gated()).
 *
 * @return 0, or a negative errno with a message in @p err: the errors of
 *   sk_config_read_secret() and sk_token_key_create() (-EINVAL: secret
 *   shorter than 32 bytes), -ENOMEM, -ENOSPC (a token longer than the stride).
 */
int lg_tokens_mint(struct lg_tokens *t, const char *secret_file, uint32_t n, uint64_t user_base,
		   uint64_t item, uint32_t ttl_s, uint32_t gate_pct, char *err, size_t errlen);

/** lg_tokens_gated - whether token @p i of a pool minted with @p gate_pct has the gate claim. */
static inline bool
lg_tokens_gated(uint32_t i, uint32_t gate_pct)
{
	return i % 100 < gate_pct;
}

/** lg_tokens_get - token @p i (< t->n) and its length in @p len. */
static inline const char *
lg_tokens_get(const struct lg_tokens *t, uint32_t i, size_t *len)
{
	*len = t->len[i];
	return t->buf + (size_t)i * LG_TOKEN_STRIDE;
}

/** lg_tokens_free - free the pool (wiping nothing: tokens are not secrets). */
void lg_tokens_free(struct lg_tokens *t);

#ifdef __cplusplus
}
#endif

#endif /* LG_TOKENS_H */
