/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cart.c - POST /v1/cart (see sk_cart.h): the body read by
 * http/sk_cart_body.c, the buy's checks over every line, one sk_buy_lines().
 */
#include <stdarg.h>
#include <stdio.h>

#include "sk_cart.h"
#include "sk_cart_body.h"
#include "sk_seckill_impl.h"

_Static_assert(SK_CART_LINES_MAX <= SK_BUY_MAX_LINES, "a cart must fit the engine's cart");
_Static_assert(SK_CART_QTY_MAX <= SK_STOCK_MAX_QTY, "a line's qty must fit the engine's");

static void reply(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
reply(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_seckill_vjson(out, status, retry_after, fmt, ap);
	va_end(ap);
}

/* item_reply - {"status":"<name>","item":N}: a refusal about one line. */
static enum sk_seckill_outcome
item_reply(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after, const char *name,
	   uint32_t item, enum sk_seckill_outcome o)
{
	reply(out, status, retry_after, "{\"status\":\"%s\",\"item\":%u}", name, item);
	return o;
}

/* sold_out - the refusal of an empty item: 410, or 503 restocking while a
 * cluster item may get units from its peers (as a buy). */
static enum sk_seckill_outcome
sold_out(struct sk_seckill_lcore *lc, struct sk_item *it, const char *name,
	 struct sk_seckill_reply *out)
{
	if (!sk_stock_sold_out_everywhere(it)) {
		sk_stock_count_restocking(it, lc->buy.lcore);
		return item_reply(out, 503, SK_SECKILL_PAUSED_RETRY_S, "restocking", it->id,
				  SK_SECKILL_RESTOCKING);
	}
	return item_reply(out, 410, 0, name, it->id, SK_SECKILL_SOLD_OUT);
}

/*
 * line_open - the item checks of a buy for one line, before any limit:
 * known, not sold out, not paused, in its window, active. Returns
 * SK_SECKILL__COUNT when the line may be bought, else the refusal (@out set).
 */
static enum sk_seckill_outcome
line_open(struct sk_seckill_lcore *lc, uint32_t id, int64_t now_ns, struct sk_item **itp,
	  struct sk_seckill_reply *out)
{
	struct sk_item *it = sk_shm_item_find(lc->buy.shm, id);

	if (it == NULL)
		return item_reply(out, 404, 0, "not_found", id, SK_SECKILL_NOT_FOUND);
	if (sk_stock_is_sold_out(it))
		return sold_out(lc, it, "sold_out", out);
	uint32_t state = atomic_load_explicit(&it->state, memory_order_relaxed);
	int64_t end_ns = sk_stock_end_ns(it);
	if (sk_unlikely(state == SK_ITEM_PAUSED) && now_ns < end_ns)
		return item_reply(out, 503, SK_SECKILL_PAUSED_RETRY_S, "paused", id,
				  SK_SECKILL_PAUSED);
	if (now_ns < it->start_ns) {
		reply(out, 425, 0, "{\"status\":\"not_started\",\"item\":%u,\"starts_in_ms\":%lld}",
		      id, (long long)((it->start_ns - now_ns + 999999) / 1000000));
		return SK_SECKILL_NOT_STARTED;
	}
	if (now_ns >= end_ns || state != SK_ITEM_ACTIVE)
		return item_reply(out, 403, 0, "ended", id, SK_SECKILL_ENDED);
	*itp = it;
	return SK_SECKILL__COUNT;
}

/*
 * prefetch_reserved - the reserved lines' set lines start loading for the
 * claimed user, so that the checks after the HMAC find them cached (a
 * hint: the checks use the verified user; sk_reserve_prefetch()). Other
 * lines cost one byte test.
 */
static void
prefetch_reserved(const struct sk_seckill_lcore *lc, const struct sk_buy_line *lines, unsigned n,
		  const struct sk_http_request *req)
{
	uint64_t claim = 0;

	for (unsigned i = 0; i < n; i++)
		if (sk_unlikely(lines[i].item->reserved_only) && lc->reserve != NULL) {
			if (claim == 0)
				claim = sk_seckill_claimed_user(lc, req);
			sk_reserve_prefetch(lc->reserve, lines[i].item->id, claim);
		}
}

/*
 * limits_admit - the rate limits before the identity: the address and the
 * global limit once (with the first line's item), every other line's item
 * limit decided, nothing but the address charged (sk_ratelimit.h).
 */
static bool
limits_admit(struct sk_seckill_lcore *lc, const uint32_t *slot, unsigned n, uint32_t ip,
	     uint64_t now_tsc, uint64_t *wait)
{
	if (sk_ratelimit_admit(lc->rl, slot[0], ip, now_tsc, wait) != SK_RL_PASS)
		return false;
	for (unsigned i = 1; i < n; i++)
		if (sk_ratelimit_item_admit(lc->rl, slot[i], now_tsc, wait) != SK_RL_PASS)
			return false;
	return true;
}

/* user_limits - the buyer's own attempts on every line, then the item and
 * global limits charged. False (*wait set) when one line is over. */
static bool
user_limits(struct sk_seckill_lcore *lc, uint64_t user, const uint32_t *slot, unsigned n,
	    uint64_t now_tsc, uint64_t *wait)
{
	for (unsigned i = 0; i < n; i++)
		if (sk_ratelimit_user_take(lc->rl, user, slot[i], now_tsc, wait) != SK_RL_PASS) {
			if (lc->live != NULL)
				lc->live->lcore[lc->buy.lcore].user_limited++;
			return false;
		}
	sk_ratelimit_commit(lc->rl, slot[0], now_tsc);
	for (unsigned i = 1; i < n; i++)
		sk_ratelimit_item_commit(lc->rl, slot[i], now_tsc);
	return true;
}

/* bought - the answer of sk_buy_lines()'s outcome @s; @it the item of the
 * line at fault, or NULL. */
static enum sk_seckill_outcome
bought(struct sk_seckill_lcore *lc, enum sk_buy_status s, uint64_t order, struct sk_item *it,
       struct sk_seckill_reply *out)
{
	uint32_t item = it != NULL ? it->id : 0;

	switch (s) {
	case SK_BUY_OK:
		reply(out, 202, 0, "{\"status\":\"queued\",\"order\":\"%llu\"}",
		      (unsigned long long)order);
		out->order = order;
		return SK_SECKILL_WON;
	case SK_BUY_DUPLICATE:
		reply(out, 409, 0, "{\"status\":\"duplicate\",\"item\":%u,\"order\":\"%llu\"}",
		      item, (unsigned long long)order);
		return SK_SECKILL_DUPLICATE;
	case SK_BUY_LIMIT:
		if (order == 0)
			return item_reply(out, 409, 0, "limit", item, SK_SECKILL_LIMIT);
		reply(out, 409, 0, "{\"status\":\"limit\",\"item\":%u,\"order\":\"%llu\"}", item,
		      (unsigned long long)order);
		return SK_SECKILL_LIMIT;
	case SK_BUY_SOLD_OUT:
	case SK_BUY_SHORT:
		if (it == NULL)
			break;
		return sold_out(lc, it, s == SK_BUY_SHORT ? "short" : "sold_out", out);
	case SK_BUY_CLOSED:
		return item_reply(out, 403, 0, "ended", item, SK_SECKILL_ENDED);
	case SK_BUY_PAUSED:
		return item_reply(out, 503, SK_SECKILL_PAUSED_RETRY_S, "paused", item,
				  SK_SECKILL_PAUSED);
	case SK_BUY_BUSY:
		reply(out, 429, 1, "{\"status\":\"busy\"}");
		return SK_SECKILL_BUSY;
	case SK_BUY_FULL:
		reply(out, 503, 1, "{\"status\":\"unavailable\"}");
		return SK_SECKILL_UNAVAILABLE;
	default:
		break;
	}
	sk_seckill_canned(out, 400, SK_HTTP_CANNED_BAD_REQUEST);
	return SK_SECKILL_BAD_REQUEST;
}

static enum sk_seckill_outcome
cart(struct sk_seckill_lcore *lc, const struct sk_http_request *req, struct sk_client_id client,
     int64_t now_ns, uint64_t now_tsc, struct sk_seckill_reply *out)
{
	struct sk_buy_line lines[SK_CART_LINES_MAX];
	uint32_t slot[SK_CART_LINES_MAX] = {0}; /* n >= 1, but gcc cannot tell */
	struct sk_cart_error err;
	struct sk_cart_body body;
	enum sk_seckill_outcome o;
	uint64_t wait = 0, order;
	unsigned at;

	if (sk_unlikely(lc->deny != NULL) && sk_deny_addr(lc->deny, &client.addr))
		return sk_seckill_denied(lc, out);
	if (!sk_cart_content_type_ok(req->content_type, req->content_type_len)) {
		reply(out, 415, 0, "{\"status\":\"unsupported_media_type\"}");
		return SK_SECKILL_BAD_REQUEST;
	}
	if (sk_cart_body_parse(req->body, req->body_len, &body, &err) != 0) {
		reply(out, 400, 0, "{\"status\":\"bad_request\",\"line\":%d,\"detail\":\"%s\"}",
		      err.line, err.detail);
		return SK_SECKILL_BAD_REQUEST;
	}
	for (unsigned i = 0; i < body.n; i++) {
		o = line_open(lc, body.lines[i].item, now_ns, &lines[i].item, out);
		if (o != SK_SECKILL__COUNT)
			return o;
		lines[i].qty = body.lines[i].qty;
		slot[i] = sk_seckill_item_slot(lc, lines[i].item);
	}
	if (lc->rl != NULL && !limits_admit(lc, slot, body.n, client.key, now_tsc, &wait))
		return sk_seckill_rate_limited(lc, wait, out);

	prefetch_reserved(lc, lines, body.n, req);
	/* item 0: a token that names an item is for that item's buy only */
	uint64_t gate;
	struct sk_buy_req br = {.user = sk_seckill_identify(lc, req, 0, now_ns, &gate),
				.client = client.addr,
				.now_ns = now_ns};
	if (br.user == 0) {
		sk_seckill_canned(out, 401, SK_HTTP_CANNED_UNAUTHORIZED);
		return SK_SECKILL_UNAUTHORIZED;
	}
	if (sk_unlikely(lc->deny != NULL) && sk_deny_user(lc->deny, br.user))
		return sk_seckill_denied(lc, out);
	/* A gated line needs the token's gate claim of its item: one claim
	 * names one item, so a cart holds at most one gated item. */
	for (unsigned i = 0; i < body.n; i++) {
		if (!sk_seckill_gate_ok(lines[i].item, gate))
			return item_reply(out, 403, 0, "gate", lines[i].item->id, SK_SECKILL_GATE);
		if (!sk_seckill_reserved(lc, lines[i].item, br.user))
			return item_reply(out, 403, 0, "not_reserved", lines[i].item->id,
					  SK_SECKILL_NOT_RESERVED);
	}
	if (lc->rl != NULL && !user_limits(lc, br.user, slot, body.n, now_tsc, &wait))
		return sk_seckill_rate_limited(lc, wait, out);

	enum sk_buy_status s = sk_buy_lines(&lc->buy, &br, lines, body.n, &order, &at);
	return bought(lc, s, order, at < body.n ? lines[at].item : NULL, out);
}

enum sk_seckill_outcome
sk_cart_buy(struct sk_seckill_lcore *lc, const struct sk_http_request *req,
	    struct sk_client_id client, int64_t now_ns, uint64_t now_tsc,
	    struct sk_seckill_reply *out)
{
	enum sk_seckill_outcome o = cart(lc, req, client, now_ns, now_tsc, out);

	sk_shm_stat_add(&lc->astats->buy_outcome[o], 1);
	return o;
}
