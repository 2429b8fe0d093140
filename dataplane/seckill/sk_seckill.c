/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The seckill API: buy, order poll, item read (see sk_seckill.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sk_client.h"
#include "sk_seckill.h"
#include "sk_seckill_impl.h"

const char *
sk_seckill_outcome_name(unsigned outcome)
{
	const char *name = sk_shm_outcome_name(outcome);

	return name != NULL ? name : "unknown";
}

int
sk_seckill_lcore_init(struct sk_seckill_lcore *lc, struct sk_shm *shm, unsigned lcore,
		      struct rte_ring *ring, const struct sk_seckill_conf *conf,
		      struct sk_ratelimit *rl, uint64_t tsc_hz)
{
	if (conf == NULL || (conf->auth && conf->key == NULL) || tsc_hz == 0)
		return -EINVAL;
	memset(lc, 0, sizeof(*lc));
	int rc = sk_buy_lcore_init(&lc->buy, shm, lcore, ring);
	if (rc != 0)
		return rc;
	lc->conf = conf;
	lc->rl = rl;
	lc->tsc_hz = tsc_hz;
	lc->astats = sk_shm_lstats(shm, lcore);
	return 0;
}

/* ------------------------------------------------------------ live settings */

void
sk_seckill_live_apply(struct sk_seckill_lcore *lc, uint64_t gen)
{
	const struct sk_live_settings *s = sk_live_slot(lc->live, gen);
	const struct sk_live_limits *l = &s->limits;
	struct sk_ratelimit_limits rl = {
		.global_rate = l->global_rate,
		.global_burst = l->global_burst ? l->global_burst : l->global_rate,
		.item_rate = l->item_rate,
		.item_burst = l->item_burst ? l->item_burst : l->item_rate,
		.ip_rate = l->ip_rate,
		.ip_burst = l->ip_burst ? l->ip_burst : l->ip_rate,
		.user_rate = l->user_rate,
		.user_burst = l->user_burst ? l->user_burst : l->user_rate,
	};
	const struct sk_deny *d = sk_live_deny_buf(lc->live, s->deny_buf);

	/* Checked by the writer (sk_live_check()): this cannot fail. */
	if (lc->rl != NULL)
		sk_ratelimit_reconfigure(lc->rl, &rl);
	lc->deny = d != NULL && !sk_deny_empty(d) ? d : NULL;
	lc->ring = s->keys.n != 0 ? &s->keys : NULL;
	lc->log_level = s->log_level;
	lc->live_gen = gen;
	sk_live_ack(lc->live, lc->buy.lcore, gen);
}

int
sk_seckill_live_attach(struct sk_seckill_lcore *lc, struct sk_live_zone *z)
{
	if (z == NULL || lc->buy.lcore >= z->nlcores || lc->rl == NULL)
		return -EINVAL;
	lc->live = z;
	sk_seckill_live_apply(lc, atomic_load_explicit(&z->gen, memory_order_acquire));
	return 0;
}

int
sk_seckill_reserve_attach(struct sk_seckill_lcore *lc, struct sk_reserve_zone *z)
{
	if (z == NULL || lc->buy.lcore >= z->nlcores)
		return -EINVAL;
	lc->reserve = z;
	lc->reserve_gen = atomic_load_explicit(&z->gen, memory_order_acquire);
	sk_reserve_ack(z, lc->buy.lcore, lc->reserve_gen);
	return 0;
}

/* ------------------------------------------------------------ helpers */

/* parse_u64 - strict decimal id, 1..UINT64_MAX (the X-User-Id rules). */
static inline bool
parse_u64(const char *s, size_t len, uint64_t *out)
{
	return sk_token_user_id_parse(s, len, out) == 0;
}

static struct sk_item *
find_item(const struct sk_seckill_lcore *lc, const char *arg, size_t len, uint64_t *id)
{
	if (!parse_u64(arg, len, id) || *id > UINT32_MAX)
		return NULL;
	return sk_shm_item_find(lc->buy.shm, (uint32_t)*id);
}

static void
canned(struct sk_seckill_reply *out, uint16_t status, enum sk_http_canned_id id)
{
	out->status = status;
	out->retry_after = 0;
	out->body_len = 0;
	out->order = 0;
	out->canned = (int16_t)id;
}

void
sk_seckill_vjson(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after,
		 const char *fmt, va_list ap)
{
	int n = vsnprintf(out->body, sizeof(out->body), fmt, ap);

	SK_ASSERT(n > 0 && (size_t)n < sizeof(out->body));
	out->status = status;
	out->retry_after = retry_after;
	out->canned = -1;
	out->order = 0;
	out->body_len = (uint16_t)n;
}

static void json(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
json(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_seckill_vjson(out, status, retry_after, fmt, ap);
	va_end(ap);
}

/*
 * order_json - {"status":"<name>","order":"<order>"} (with
 * ,"duplicate":true before the brace when @dup): the answer of every win,
 * retry and limit, built without printf (a third of a winning buy's cost
 * went to vsnprintf). The same bytes json() would write.
 */
static void
order_json(struct sk_seckill_reply *out, uint16_t status, uint32_t retry_after, const char *name,
	   uint64_t order, bool dup)
{
	static const char head[] = "{\"status\":\"", mid[] = "\",\"order\":\"",
			  dup_tail[] = "\",\"duplicate\":true}", tail[] = "\"}";
	size_t name_len = strlen(name), n = 0;
	char *b = out->body;

	SK_DEBUG_ASSERT(sizeof(head) + name_len + sizeof(mid) + SK_U64_DEC_MAX + sizeof(dup_tail) <=
			sizeof(out->body));
	memcpy(b, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	memcpy(b + n, name, name_len);
	n += name_len;
	memcpy(b + n, mid, sizeof(mid) - 1);
	n += sizeof(mid) - 1;
	n += sk_u64_dec(b + n, order);
	if (dup) {
		memcpy(b + n, dup_tail, sizeof(dup_tail) - 1);
		n += sizeof(dup_tail) - 1;
	} else {
		memcpy(b + n, tail, sizeof(tail) - 1);
		n += sizeof(tail) - 1;
	}
	out->status = status;
	out->retry_after = retry_after;
	out->canned = -1;
	out->order = order;
	out->body_len = (uint16_t)n;
}

/* bearer - the token of "Authorization: Bearer <token>", or NULL. */
static const char *
bearer(const struct sk_http_request *req, size_t *len)
{
	/* "Bearer" is case-insensitive (RFC 6750 §2.1, RFC 9110 §11.1) */
	if (req->authorization == NULL || req->authorization_len < 8 ||
	    strncasecmp(req->authorization, "Bearer ", 7) != 0)
		return NULL;
	const char *tok = req->authorization + 7;
	size_t n = req->authorization_len - 7;
	while (n > 0 && *tok == ' ')
		tok++, n--;
	*len = n;
	return tok;
}

/*
 * identify - the buyer's user id, or 0 (401); *@gate the token's gate claim
 * (0: none; always 0 with auth off: X-User-Id carries no claim). With auth
 * on this is the request's one HMAC (counted in token_verifies): every
 * cheap refusal must come before it.
 */
static uint64_t
identify(struct sk_seckill_lcore *lc, const struct sk_http_request *req, uint32_t item,
	 int64_t now_ns, uint64_t *gate)
{
	struct sk_token_verified v = {0, 0};
	uint64_t user = 0;
	const char *tok;
	size_t len;

	*gate = 0;
	if (!lc->conf->auth) {
		if (req->user_id == NULL ||
		    sk_token_user_id_parse(req->user_id, req->user_id_len, &user) != 0)
			return 0;
		return user;
	}
	tok = bearer(req, &len);
	if (tok == NULL) {
		lc->stats.token[SK_TOKEN_E_MALFORMED]++;
		return 0;
	}
	lc->stats.token_verifies++;
	enum sk_token_status st =
		lc->ring != NULL
			? sk_token_verify_ring_claims(lc->ring, tok, len, item, now_ns / 1000000000,
						      lc->conf->token_skew_s, &v)
			: sk_token_verify_claims(lc->conf->key, tok, len, item, now_ns / 1000000000,
						 lc->conf->token_skew_s, &v);
	lc->stats.token[st < SK_TOKEN__COUNT ? st : SK_TOKEN_E_MALFORMED]++;
	if (st != SK_TOKEN_OK)
		return 0;
	*gate = v.gate;
	return v.user;
}

/* The claimed user, NOT authenticated (sk_seckill_impl.h). */
uint64_t
sk_seckill_claimed_user(const struct sk_seckill_lcore *lc, const struct sk_http_request *req)
{
	uint64_t user = 0; /* both parsers leave it untouched on failure */
	const char *tok;
	size_t len;

	if (!lc->conf->auth) {
		if (req->user_id != NULL)
			(void)sk_token_user_id_parse(req->user_id, req->user_id_len, &user);
	} else if ((tok = bearer(req, &len)) != NULL) {
		(void)sk_token_peek_user(tok, len, &user);
	}
	return user;
}

/* Answer of holder_order(). */
enum holder {
	HOLDER_NO,	     /* not a holder (or its claim does not verify): 410 / paused */
	HOLDER_YES,	     /* *order is its order */
	HOLDER_RATE_LIMITED, /* a claimed holder over its address's limit: 429 */
};

/*
 * holder_order - on a sold-out or paused item with a per-user limit of 1,
 * the order of a requester who already holds one: a winner whose answer
 * was lost and who retries gets its order back rather than "sold out" or
 * "paused". Cheap for everybody else: the claimed user (X-User-Id, or the
 * token's "sub" read WITHOUT its signature) is looked up in the item's
 * dedup slice, and only a holder's token is then verified in full - so a
 * forged claim gets the refusal like anyone, never someone else's order.
 * Claims of a holder are the only such requests that cost an HMAC: before
 * it, they pay the per-IP limit (*wait: cycles to wait when refused), so a
 * flood of forged claims of a known winner's id is refused 429 like any
 * other forged flood.
 */
static enum holder
holder_order(struct sk_seckill_lcore *lc, const struct sk_item *it,
	     const struct sk_http_request *req, uint32_t client_ip, int64_t now_ns,
	     uint64_t now_tsc, uint64_t *order, uint64_t *wait)
{
	uint64_t user, o = 0, gate;
	uint32_t units = 0;
	struct sk_dedup d;

	if (it->per_user_limit != 1)
		return HOLDER_NO; /* a holder below its limit asks for one more: 410 */
	if ((user = sk_seckill_claimed_user(lc, req)) == 0)
		return HOLDER_NO;
	sk_shm_dedup(lc->buy.shm, it, &d);
	if (sk_dedup_lookup(&d, user, &units, &o) != 0 || units == 0 || o == 0)
		return HOLDER_NO;
	if (lc->conf->auth) {
		if (lc->rl != NULL &&
		    sk_ratelimit_ip_take(lc->rl, client_ip, now_tsc, wait) != SK_RL_PASS)
			return HOLDER_RATE_LIMITED;
		/* A holder of a gated item passed the gate to win: its retry
		 * gets its order whatever its token's gate claim says now. */
		if (identify(lc, req, it->id, now_ns, &gate) != user)
			return HOLDER_NO;
	}
	*order = o;
	return HOLDER_YES;
}

/* duplicate_reply - a winner's retry: its order as it stands now. */
static enum sk_seckill_outcome
duplicate_reply(struct sk_seckill_lcore *lc, uint64_t order, struct sk_seckill_reply *out)
{
	/* Not in the status table: an order of an earlier run (it came back
	 * from the store at start) or a settled one whose slot was reused.
	 * The user holds its units, so it is durable and not failed. */
	unsigned st = sk_status_get(&lc->buy.status, order);
	if (st == SK_ORDER_NONE)
		st = SK_ORDER_CONFIRMED;
	bool durable = st == SK_ORDER_CONFIRMED || st == SK_ORDER_PAID;

	order_json(out, durable ? 200 : 202, 0,
		   st == SK_ORDER_NONE ? "queued" : sk_order_status_name(st), order, true);
	return SK_SECKILL_DUPLICATE;
}

static uint32_t
item_slot(const struct sk_seckill_lcore *lc, const struct sk_item *it)
{
	return (uint32_t)(it - sk_shm_item_at(lc->buy.shm, 0));
}

/* rate_limited - the 429 of a limiter refusal, @wait cycles to wait. */
static enum sk_seckill_outcome
rate_limited(struct sk_seckill_lcore *lc, uint64_t wait, struct sk_seckill_reply *out)
{
	json(out, 429, sk_ratelimit_retry_after(wait, lc->tsc_hz), "{\"status\":\"busy\"}");
	return SK_SECKILL_RATE_LIMITED;
}

/*
 * refused_403 - a 403 with the prebuilt JSON @body (@len bytes), no printf:
 * the gate and the reservation refuse whole crowds, as often as a sold-out
 * sale does.
 */
static enum sk_seckill_outcome
refused_403(struct sk_seckill_reply *out, const char *body, size_t len, enum sk_seckill_outcome o)
{
	memcpy(out->body, body, len);
	out->body_len = (uint16_t)len;
	out->status = 403;
	out->retry_after = 0;
	out->canned = -1;
	out->order = 0;
	return o;
}

/* denied - the 403 of a deny list, counted in the live block too. */
static enum sk_seckill_outcome
denied(struct sk_seckill_lcore *lc, struct sk_seckill_reply *out)
{
	static const char body[] = "{\"status\":\"denied\"}";

	lc->live->lcore[lc->buy.lcore].denied++;
	return refused_403(out, body, sizeof(body) - 1, SK_SECKILL_DENIED);
}

/* not_reserved - the 403 of a reserved_only item to a buyer outside its set. */
static enum sk_seckill_outcome
not_reserved(struct sk_seckill_reply *out)
{
	static const char body[] = "{\"status\":\"not_reserved\"}";

	return refused_403(out, body, sizeof(body) - 1, SK_SECKILL_NOT_RESERVED);
}

/* gated - the 403 of an item that requires the gate claim. */
static enum sk_seckill_outcome
gated(struct sk_seckill_reply *out)
{
	static const char body[] = "{\"status\":\"gate\"}";

	return refused_403(out, body, sizeof(body) - 1, SK_SECKILL_GATE);
}

/*
 * holder_or - the answer to a buy of a sold-out, restocking or paused item: a holder's
 * retry gets its order back (holder_order()); everyone else @refusal.
 */
static enum sk_seckill_outcome
holder_or(struct sk_seckill_lcore *lc, const struct sk_item *it, const struct sk_http_request *req,
	  uint32_t client_ip, int64_t now_ns, uint64_t now_tsc, enum sk_seckill_outcome refusal,
	  struct sk_seckill_reply *out)
{
	static const char paused[] = "{\"status\":\"paused\"}";
	static const char restocking[] = "{\"status\":\"restocking\"}";
	uint64_t held, wait = 0;

	switch (holder_order(lc, it, req, client_ip, now_ns, now_tsc, &held, &wait)) {
	case HOLDER_YES:
		return duplicate_reply(lc, held, out);
	case HOLDER_RATE_LIMITED:
		return rate_limited(lc, wait, out);
	case HOLDER_NO:
	default:
		break;
	}
	if (refusal == SK_SECKILL_SOLD_OUT && !sk_stock_sold_out_everywhere(it))
		refusal = SK_SECKILL_RESTOCKING; /* a cluster item: units may come */
	if (refusal == SK_SECKILL_RESTOCKING)
		sk_stock_count_restocking((struct sk_item *)it, lc->buy.lcore);
	if (refusal == SK_SECKILL_SOLD_OUT) {
		canned(out, 410, SK_HTTP_CANNED_SOLD_OUT);
	} else {
		/* 503 + Retry-After: the sale goes on once resumed (or once
		 * this appliance leased more units). No printf: these are
		 * refused as often as a sold-out sale. */
		bool p = refusal == SK_SECKILL_PAUSED;
		size_t len = p ? sizeof(paused) - 1 : sizeof(restocking) - 1;
		memcpy(out->body, p ? paused : restocking, len);
		out->body_len = len;
		out->status = 503;
		out->retry_after = SK_SECKILL_PAUSED_RETRY_S;
		out->canned = -1;
		out->order = 0;
	}
	return refusal;
}

/* ------------------------------------------------------------ routes */

static enum sk_seckill_outcome
buy(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len, const struct sk_http_request *req,
    const struct sk_addr *record, uint32_t client_ip, int64_t now_ns, uint64_t now_tsc,
    struct sk_seckill_reply *out)
{
	uint64_t id, wait = 0, gate;

	/* Deny lists first: a denied address costs nothing more. */
	if (sk_unlikely(lc->deny != NULL) && sk_deny_addr(lc->deny, record))
		return denied(lc, out);

	struct sk_item *it = find_item(lc, arg, arg_len, &id);

	if (it == NULL) {
		canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
		return SK_SECKILL_NOT_FOUND;
	}
	/* The 99 %: one flag, a prebuilt answer (a holder's retry excepted). */
	if (sk_stock_is_sold_out(it))
		return holder_or(lc, it, req, client_ip, now_ns, now_tsc, SK_SECKILL_SOLD_OUT, out);
	/* Paused by an operator: one load of the state, read below anyway. */
	uint32_t state = atomic_load_explicit(&it->state, memory_order_relaxed);
	int64_t end_ns = sk_stock_end_ns(it);
	if (sk_unlikely(state == SK_ITEM_PAUSED) && now_ns < end_ns)
		return holder_or(lc, it, req, client_ip, now_ns, now_tsc, SK_SECKILL_PAUSED, out);
	if (now_ns < it->start_ns) {
		int64_t ms = (it->start_ns - now_ns + 999999) / 1000000;
		json(out, 425, 0, "{\"status\":\"not_started\",\"starts_in_ms\":%lld}",
		     (long long)ms);
		return SK_SECKILL_NOT_STARTED;
	}
	if (now_ns >= end_ns || state != SK_ITEM_ACTIVE) {
		canned(out, 403, SK_HTTP_CANNED_ENDED);
		return SK_SECKILL_ENDED;
	}

	/*
	 * Rate limits before the identity: a forged-token flood is refused
	 * here, before its HMAC. The address pays now (authentic or not); the
	 * item and global buckets only once the buyer is authenticated, so
	 * forged tokens cannot drain them (sk_ratelimit.h).
	 */
	if (lc->rl != NULL &&
	    sk_ratelimit_admit(lc->rl, item_slot(lc, it), client_ip, now_tsc, &wait) != SK_RL_PASS)
		return rate_limited(lc, wait, out);

	/* A reserved set's line, loading during the HMAC (a hint only). */
	if (sk_unlikely(it->reserved_only) && lc->reserve != NULL)
		sk_reserve_prefetch(lc->reserve, it->id, sk_seckill_claimed_user(lc, req));

	struct sk_buy_req br = {.user = identify(lc, req, it->id, now_ns, &gate),
				.client = *record,
				.now_ns = now_ns};
	if (br.user == 0) {
		canned(out, 401, SK_HTTP_CANNED_UNAUTHORIZED);
		return SK_SECKILL_UNAUTHORIZED;
	}
	if (sk_unlikely(lc->deny != NULL) && sk_deny_user(lc->deny, br.user))
		return denied(lc, out);
	/* The gate claim came with the identity, from the same pass over the
	 * token's claims: one byte of the item's first line and a compare.
	 * X-User-Id carries no claim, so with auth off a gated item refuses
	 * every buyer (docs/api.md). */
	if (!sk_seckill_gate_ok(it, gate))
		return gated(out);
	if (!sk_seckill_reserved(lc, it, br.user))
		return not_reserved(out);
	if (lc->rl != NULL) {
		/* The buyer's own attempts, before the stock is touched. */
		if (sk_ratelimit_user_take(lc->rl, br.user, item_slot(lc, it), now_tsc, &wait) !=
		    SK_RL_PASS) {
			if (lc->live != NULL)
				lc->live->lcore[lc->buy.lcore].user_limited++;
			return rate_limited(lc, wait, out);
		}
		sk_ratelimit_commit(lc->rl, item_slot(lc, it), now_tsc);
	}

	struct sk_buy_line line = {.item = it, .qty = 1};
	uint64_t order;
	enum sk_buy_status s = sk_buy(&lc->buy, &br, &line, 1, &order);
	switch (s) {
	case SK_BUY_OK:
		order_json(out, 202, 0, "queued", order, false);
		return SK_SECKILL_WON;
	case SK_BUY_DUPLICATE:
		return duplicate_reply(lc, order, out);
	case SK_BUY_LIMIT:
		order_json(out, 409, 0, "limit", order, false);
		return SK_SECKILL_LIMIT;
	case SK_BUY_SOLD_OUT:
	case SK_BUY_SHORT:
		if (!sk_stock_sold_out_everywhere(it))
			return holder_or(lc, it, req, client_ip, now_ns, now_tsc,
					 SK_SECKILL_RESTOCKING, out);
		canned(out, 410, SK_HTTP_CANNED_SOLD_OUT);
		return SK_SECKILL_SOLD_OUT;
	case SK_BUY_CLOSED:
		canned(out, 403, SK_HTTP_CANNED_ENDED);
		return SK_SECKILL_ENDED;
	case SK_BUY_PAUSED: /* paused since the check above */
		return holder_or(lc, it, req, client_ip, now_ns, now_tsc, SK_SECKILL_PAUSED, out);
	case SK_BUY_BUSY:
		json(out, 429, 1, "{\"status\":\"busy\"}");
		return SK_SECKILL_BUSY;
	case SK_BUY_FULL:
		json(out, 503, 1, "{\"status\":\"unavailable\"}");
		return SK_SECKILL_UNAVAILABLE;
	default:
		canned(out, 400, SK_HTTP_CANNED_BAD_REQUEST);
		return SK_SECKILL_BAD_REQUEST;
	}
}

enum sk_seckill_outcome
sk_seckill_buy(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
	       const struct sk_http_request *req, uint32_t client_ip, int64_t now_ns,
	       uint64_t now_tsc, struct sk_seckill_reply *out)
{
	struct sk_addr record = client_ip != 0 ? sk_addr_from_v4(client_ip) : (struct sk_addr){0};
	enum sk_seckill_outcome o =
		buy(lc, arg, arg_len, req, &record, client_ip, now_ns, now_tsc, out);

	sk_shm_stat_add(&lc->astats->buy_outcome[o], 1);
	return o;
}

enum sk_seckill_outcome
sk_seckill_buy_from(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
		    const struct sk_http_request *req, struct sk_client_id client, int64_t now_ns,
		    uint64_t now_tsc, struct sk_seckill_reply *out)
{
	enum sk_seckill_outcome o =
		buy(lc, arg, arg_len, req, &client.addr, client.key, now_ns, now_tsc, out);

	sk_shm_stat_add(&lc->astats->buy_outcome[o], 1);
	return o;
}

/*
 * settled_here - whether @id, not in the status table, is an order this
 * run made and settled (its slot reused since): below its lcore's settled
 * id and of an epoch of this run.
 */
static bool
settled_here(const struct sk_seckill_lcore *lc, uint64_t id)
{
	const struct sk_shm *shm = lc->buy.shm;
	unsigned l = sk_order_id_lcore(id);

	return sk_order_id_member(id) == shm->member && l < shm->nlcores &&
	       sk_order_id_epoch(id) >= shm->epoch &&
	       (sk_order_id_seq(id) >> shm->win[l].seq_bits) == 0 && id < sk_shm_settled(shm, l);
}

void
sk_seckill_settled_reply(struct sk_seckill_lcore *lc, uint64_t order, bool duplicate,
			 struct sk_seckill_reply *out)
{
	switch (sk_status_get(&lc->buy.status, order)) {
	case SK_ORDER_CONFIRMED:
	case SK_ORDER_PAID:
	case SK_ORDER_REFUNDED:
		order_json(out, 200, 0, "confirmed", order, duplicate);
		break;
	case SK_ORDER_FAILED:
	case SK_ORDER_CANCELLED:
		order_json(out, 503, 1, "failed", order, duplicate);
		break;
	case SK_ORDER_NONE:
		if (settled_here(lc, order)) {
			/* slot reused since: durable (or failed), see the store */
			order_json(out, 200, 0, "settled", order, duplicate);
			break;
		}
		/* fall through */
	default:
		order_json(out, 202, 0, "queued", order, duplicate);
		break;
	}
}

/* not_placed_or_unknown - the answer for order @id, not in the status
 * table and not stored, by what the marks say (@e): 410 not_placed for one
 * lost with a crash, else 404. */
static void
not_placed_or_unknown(struct sk_seckill_reply *out, uint64_t id, enum sk_shm_earlier e)
{
	if (e == SK_SHM_EARLIER_LOST)
		json(out, 410, 0,
		     "{\"order\":\"%llu\",\"status\":\"not_placed\",\"detail\":\"buy again\"}",
		     (unsigned long long)id);
	else
		canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
}

void
sk_seckill_order(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
		 struct sk_seckill_reply *out)
{
	uint64_t id;
	unsigned st = SK_ORDER_NONE;

	sk_shm_stat_add(&lc->astats->order_polls, 1);
	if (!parse_u64(arg, arg_len, &id)) {
		canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
		return;
	}
	st = sk_status_get(&lc->buy.status, id);
	if (st == SK_ORDER_NONE) {
		/* Not in the status table: settled and its slot reused, or of an
		 * earlier run, stored or lost with a crash (sk_shm_earlier()). */
		enum sk_shm_earlier e = settled_here(lc, id) ? SK_SHM_EARLIER_STORED
							     : sk_shm_earlier(lc->buy.shm, id);
		if (e == SK_SHM_EARLIER_STORED)
			json(out, 200, 0, "{\"order\":\"%llu\",\"status\":\"settled\"}",
			     (unsigned long long)id);
		else
			not_placed_or_unknown(out, id, e);
		return;
	}
	json(out, 200, 0, "{\"order\":\"%llu\",\"status\":\"%s\"}", (unsigned long long)id,
	     sk_order_status_name(st));
}

/*
 * follower - the user of a follow request, or 0. A follow is of an order,
 * not of an item: any item claim passes. sk_token_verify() checks the item
 * claim last, after the signature, sub and times, so SK_TOKEN_E_WRONG_ITEM
 * means a token valid in all else, whose signed sub is then read.
 */
static uint64_t
follower(struct sk_seckill_lcore *lc, const struct sk_http_request *req, int64_t now_ns)
{
	enum sk_token_status st;
	uint64_t user = 0;
	const char *tok;
	size_t len;

	if (!lc->conf->auth)
		return identify(lc, req, 0, now_ns, &user);
	tok = bearer(req, &len);
	if (tok == NULL) {
		lc->stats.token[SK_TOKEN_E_MALFORMED]++;
		return 0;
	}
	lc->stats.token_verifies++;
	st = lc->ring != NULL ? sk_token_verify_ring(lc->ring, tok, len, 0, now_ns / 1000000000,
						     lc->conf->token_skew_s, &user)
			      : sk_token_verify(lc->conf->key, tok, len, 0, now_ns / 1000000000,
						lc->conf->token_skew_s, &user);
	if (st == SK_TOKEN_E_WRONG_ITEM && sk_token_peek_user(tok, len, &user) == 0)
		st = SK_TOKEN_OK;
	lc->stats.token[st < SK_TOKEN__COUNT ? st : SK_TOKEN_E_MALFORMED]++;
	return st == SK_TOKEN_OK ? user : 0;
}

int
sk_seckill_follow(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
		  const struct sk_http_request *req, struct sk_client_id client, int64_t now_ns,
		  uint64_t now_tsc, struct sk_seckill_follow *f, struct sk_seckill_reply *out)
{
	uint64_t id, user, wait = 0;
	uint32_t tag = 0;
	unsigned st;

	if (!parse_u64(arg, arg_len, &id)) {
		canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
		return 0;
	}
	/* As a buy: a forged-token flood pays the per-IP limit before the HMAC. */
	if (lc->conf->auth && lc->rl != NULL &&
	    sk_ratelimit_ip_take(lc->rl, client.key, now_tsc, &wait) != SK_RL_PASS) {
		rate_limited(lc, wait, out);
		return 0;
	}
	user = follower(lc, req, now_ns);
	if (user == 0) {
		canned(out, 401, SK_HTTP_CANNED_UNAUTHORIZED);
		return 0;
	}
	st = sk_status_get_user(&lc->buy.status, id, &tag);
	if (st != SK_ORDER_NONE) {
		if (tag != sk_status_user_tag(user)) { /* someone else's: as if unknown */
			canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
			return 0;
		}
	} else if (!settled_here(lc, id)) {
		/* Of an earlier run: lost (410, as the poll), or unknown. */
		not_placed_or_unknown(out, id, sk_shm_earlier(lc->buy.shm, id));
		return 0;
	}
	f->order = id;
	f->user = user;
	f->status = st;
	return 1;
}

static const char *
item_state(const struct sk_item *it, int64_t now_ns)
{
	uint32_t state = atomic_load_explicit(&((struct sk_item *)it)->state, memory_order_relaxed);

	if ((state != SK_ITEM_ACTIVE && state != SK_ITEM_PAUSED) || now_ns >= sk_stock_end_ns(it))
		return "ended";
	if (state == SK_ITEM_PAUSED)
		return "paused";
	if (now_ns < it->start_ns)
		return "scheduled";
	if (!sk_stock_is_sold_out(it))
		return "open";
	return sk_stock_sold_out_everywhere(it) ? "sold_out" : "restocking";
}

void
sk_seckill_item(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len, int64_t now_ns,
		struct sk_seckill_reply *out)
{
	uint64_t id;
	const struct sk_item *it = find_item(lc, arg, arg_len, &id);

	sk_shm_stat_add(&lc->astats->item_reads, 1);
	if (it == NULL) {
		canned(out, 404, SK_HTTP_CANNED_NOT_FOUND);
		return;
	}
	char ends[24] = "null";
	int64_t end_ns = sk_stock_end_ns(it);
	if (end_ns != INT64_MAX)
		snprintf(ends, sizeof(ends), "%lld", (long long)(end_ns / 1000000));
	json(out, 200, 0,
	     "{\"item\":%u,\"state\":\"%s\",\"remaining\":%llu,\"starts_at\":%lld,\"ends_at\":%s}",
	     it->id, item_state(it, now_ns), (unsigned long long)sk_stock_remaining(it),
	     (long long)(it->start_ns / 1000000), ends);
}

/* ------------------------------------------------ shared with the cart route */

uint64_t
sk_seckill_identify(struct sk_seckill_lcore *lc, const struct sk_http_request *req, uint32_t item,
		    int64_t now_ns, uint64_t *gate)
{
	return identify(lc, req, item, now_ns, gate);
}

void
sk_seckill_canned(struct sk_seckill_reply *out, uint16_t status, enum sk_http_canned_id id)
{
	canned(out, status, id);
}

enum sk_seckill_outcome
sk_seckill_rate_limited(struct sk_seckill_lcore *lc, uint64_t wait, struct sk_seckill_reply *out)
{
	return rate_limited(lc, wait, out);
}

enum sk_seckill_outcome
sk_seckill_denied(struct sk_seckill_lcore *lc, struct sk_seckill_reply *out)
{
	return denied(lc, out);
}

uint32_t
sk_seckill_item_slot(const struct sk_seckill_lcore *lc, const struct sk_item *it)
{
	return item_slot(lc, it);
}
