/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_seckill_impl.h - private to the seckill routes (sk_seckill.c,
 * sk_cart.c): the answers and checks the buy and the cart share, so that a
 * rule has one home. Same thread-safety as sk_seckill.h: the owning lcore.
 */
#ifndef SK_SECKILL_IMPL_H
#define SK_SECKILL_IMPL_H

#include <stdarg.h>
#include <stdint.h>

#include "sk_seckill.h"

/**
 * sk_seckill_vjson - set @p out to @p status with the JSON body printed
 * from @p fmt (it must fit SK_SECKILL_BODY_MAX: asserted), Retry-After
 * @p retry_after (0: none), no order.
 */
void sk_seckill_vjson(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after,
		      const char *fmt, va_list ap);

/**
 * sk_seckill_identify - the buyer's user id, or 0 (401): X-User-Id, or the
 * Bearer token verified for @p item (0: a token with an item claim is
 * refused, one without is accepted); *@p gate its gate claim (0: none, and
 * always 0 with X-User-Id). With auth on this is the request's one HMAC,
 * counted in lc->stats.
 */
uint64_t sk_seckill_identify(struct sk_seckill_lcore *lc, const struct sk_http_request *req,
			     uint32_t item, int64_t now_ns, uint64_t *gate);

/**
 * sk_seckill_claimed_user - the user @p req claims, NOT authenticated:
 * X-User-Id with auth off, else the Bearer token's "sub" read without its
 * signature (sk_token_peek_user()); 0: none or malformed. Only for steps a
 * verification confirms or that change no answer (a prefetch). No HMAC.
 */
uint64_t sk_seckill_claimed_user(const struct sk_seckill_lcore *lc,
				 const struct sk_http_request *req);

/** sk_seckill_canned - set @p out to the prebuilt answer @p id (HTTP @p status). */
void sk_seckill_canned(struct sk_seckill_reply *out, uint16_t status, enum sk_http_canned_id id);

/**
 * sk_seckill_rate_limited - the 429 {"status":"busy"} of a limiter refusal
 * that asks to wait @p wait TSC cycles. @return SK_SECKILL_RATE_LIMITED.
 */
enum sk_seckill_outcome sk_seckill_rate_limited(struct sk_seckill_lcore *lc, uint64_t wait,
						struct sk_seckill_reply *out);

/**
 * sk_seckill_denied - the 403 {"status":"denied"} of a deny list, counted
 * in the live block (lc->live must be set: a deny list came from it).
 * @return SK_SECKILL_ENDED (the outcome counter of every 403).
 */
enum sk_seckill_outcome sk_seckill_denied(struct sk_seckill_lcore *lc,
					  struct sk_seckill_reply *out);

/** sk_seckill_item_slot - @p it's index in the arena: its rate-limit slot. */
uint32_t sk_seckill_item_slot(const struct sk_seckill_lcore *lc, const struct sk_item *it);

/**
 * sk_seckill_gate_ok - whether a buyer whose token's gate claim is @p gate
 * (0: none, and always none with X-User-Id) may buy @p it: the item needs
 * no claim, or the claim names it. Pure.
 */
static inline bool
sk_seckill_gate_ok(const struct sk_item *it, uint64_t gate)
{
	return sk_likely(!it->gate) || gate == it->id;
}

/**
 * sk_seckill_reserved - whether @p user may buy @p it: the item is not
 * reserved_only, or @p user is in its reservation set (sk_reserve_has();
 * no set attached: nobody is). Reads only.
 */
static inline bool
sk_seckill_reserved(const struct sk_seckill_lcore *lc, const struct sk_item *it, uint64_t user)
{
	return sk_likely(!it->reserved_only) ||
	       (lc->reserve != NULL && sk_reserve_has(lc->reserve, it->id, user));
}

#endif /* SK_SECKILL_IMPL_H */
