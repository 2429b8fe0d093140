/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The request mix of the clients (seckill-crowd and seckill-loadgen's
 * --mix): which share of the buys are carts (POST /v1/cart) and of how
 * many lines, the cart body they send, and which request is a cart.
 *
 * Thread-safety: no state; any thread.
 */
#ifndef SK_CROWD_MIX_H
#define SK_CROWD_MIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Most lines of a cart the clients send (the front door's limit). */
#define SK_CROWD_CART_LINES_MAX 16
/** Lines of a cart when --mix names none. */
#define SK_CROWD_CART_LINES_DEFAULT 3
/** Room for the largest cart body sk_crowd_cart_body() writes. */
#define SK_CROWD_CART_BODY_MAX (16 + SK_CROWD_CART_LINES_MAX * 32)

/** A mix; all-zero: every request a single-item buy. */
struct sk_crowd_mix {
	uint32_t cart_pct;   /**< 0..100: share of the buys that are carts */
	uint32_t cart_lines; /**< 1..SK_CROWD_CART_LINES_MAX lines per cart */
};

/**
 * sk_crowd_mix_parse - read "cart=PCT[,lines=K]" (PCT 0..100, K
 * 1..SK_CROWD_CART_LINES_MAX, default SK_CROWD_CART_LINES_DEFAULT).
 * @return 0 (@p m set), or -EINVAL (@p m untouched).
 */
int sk_crowd_mix_parse(const char *s, struct sk_crowd_mix *m);

/**
 * sk_crowd_mix_is_cart - whether the buyer @p key (a user index, say) sends
 * carts: a hash of @p seed and @p key below cart_pct of 100, so the same
 * buyer always sends the same kind (its retries included).
 */
bool sk_crowd_mix_is_cart(const struct sk_crowd_mix *m, uint64_t seed, uint64_t key);

/**
 * sk_crowd_cart_body - the body of a cart of @p lines lines, qty 1 each,
 * items @p first, @p first + 1, ...: {"lines":[{"item":N,"qty":1},...]}.
 * @return its length, or 0 if it does not fit @p cap (or @p lines is 0 or
 *         above SK_CROWD_CART_LINES_MAX, or the items pass UINT32_MAX).
 */
size_t sk_crowd_cart_body(char *out, size_t cap, uint64_t first, unsigned lines);

#endif /* SK_CROWD_MIX_H */
