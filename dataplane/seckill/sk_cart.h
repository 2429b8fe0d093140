/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * POST /v1/cart: up to SK_CART_LINES_MAX items bought at once, all or
 * nothing, under one order id (the engine's cart path, sk_buy_lines()).
 *
 * The request carries Content-Type: application/json (else 415) and the
 * body {"lines":[{"item":N,"qty":N},...]} (http/sk_cart_body.h; a refusal
 * is 400 {"status":"bad_request","line":K,"detail":"..."}, K the 0-based
 * line or -1 for the envelope; a body over the parser's body_max is the
 * HTTP parser's 413). Then the checks of a buy (sk_seckill.h), cheapest
 * first, each over every line where it is about an item:
 *
 *   address deny (403 denied) → Content-Type → body → per line: item
 *   (404), sold out (410, or 503 restocking for a cluster item), paused
 *   (503), window (425 / 403) → rate limits: the address and the global
 *   limit once, each line's item limit (429) → identity, once (a token
 *   without an item claim; one with a claim is refused 401) → user deny
 *   (403) → per-user attempt limit of each line (429) → sk_buy_lines().
 *
 * Answers: 202 {"status":"queued","order":"<id>"} (the one answer that
 * carries an order to park on with ack = durable); the refusals about one
 * line name its item: 409 {"status":"duplicate","item":N,"order":"<id>"}
 * (a limit-1 item the user holds already, in that order: the cart is not
 * bought), 409 {"status":"limit","item":N[,"order":"<id>"]}, 410
 * {"status":"sold_out","item":N} or {"status":"short","item":N}, 503
 * {"status":"paused"|"restocking","item":N}, 404/425/403 likewise; 429
 * busy, 503 unavailable as a buy. Outcomes are counted with the buy's, in
 * the lcore's arena block (a short counts as sold_out, a 415 as
 * bad_request).
 *
 * Nothing here allocates, locks or makes a system call; a refused cart
 * touches no stock.
 *
 * Thread-safety: the owning lcore of @p lc, as sk_seckill.h.
 */
#ifndef SK_CART_H
#define SK_CART_H

#include <stdint.h>

#include "sk_client.h"
#include "sk_http.h"
#include "sk_seckill.h"

/**
 * sk_cart_buy - POST /v1/cart.
 * @param lc      this lcore's seckill state
 * @param req     the parsed request, body included (SK_HTTP_DONE)
 * @param client  the client (sk_client_id_of()): its key for the per-IP
 *                limit, its address for the deny list and the order
 * @param now_ns  wall clock, ns since the epoch
 * @param now_tsc TSC now (rate limits)
 * @param out     the answer; out->order is the order id of a 202, else 0
 * @return the outcome, counted in lc->astats.
 */
enum sk_seckill_outcome sk_cart_buy(struct sk_seckill_lcore *lc, const struct sk_http_request *req,
				    struct sk_client_id client, int64_t now_ns, uint64_t now_tsc,
				    struct sk_seckill_reply *out);

#endif /* SK_CART_H */
