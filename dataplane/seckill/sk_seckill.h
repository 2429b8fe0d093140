/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The seckill API of the front door (design §4), independent of the network:
 * each call takes a parsed HTTP request and the route's argument and decides
 * the answer - status, JSON body, Retry-After - in the order that makes the
 * 99% case cheapest:
 *
 *   POST /v1/seckill/{item}:  IP deny list (403 denied) → item lookup →
 *     sold out (410; a claimed
 *     holder's retry pays the per-IP limit before its token is verified) →
 *     time window (425 not_started / 403 ended) → rate limits (429 +
 *     Retry-After; the address is charged) → identity (Bearer JWT, or
 *     X-User-Id when auth is off; 401) → user deny list (403 denied) →
 *     gate claim, on an item that requires it (403 gate; the claim is read
 *     with the identity, in the token's one pass; X-User-Id has none, so
 *     with auth off a gated item refuses every buyer) →
 *     reservation set of a reserved_only item (403 not_reserved) →
 *     per-user attempt limit (429) → item and global limits charged →
 *     sk_buy() → 202 queued | 200/202 duplicate | 409 limit | 410 | 429 | 503.
 *
 * Every refusal that needs no verified user comes before the token's HMAC,
 * the one costly step: a flood of forged tokens from one address gets 429
 * once its burst is spent, without an HMAC (token_verifies counts them).
 *   POST /v1/cart:            the same checks over every line of a cart
 *     (sk_cart.h, which shares this file's answers: sk_seckill_impl.h).
 *   GET /v1/orders/{id}:      the status table (404 if unknown to this run).
 *   GET /v1/items/{item}:     state and remaining units merged over lcores.
 *
 * A refused request never touches stock: everything before sk_buy() reads
 * only. Nothing here allocates, locks or makes a system call.
 *
 * Counters: every buy outcome, order poll and item read is counted in the
 * lcore's stats block of the arena (struct sk_shm_lcore_stats, read by the
 * control plane's /metrics); outcomes and token results also in
 * sk_seckill_lcore::stats.
 *
 * Thread-safety: one struct sk_seckill_lcore per lcore, used by that lcore
 * only; the conf (and its token key) is shared read-only. Stats may be read
 * by another thread (plain 64-bit counters, possibly a little stale; the
 * arena block with relaxed atomic loads, sk_shm_stat_read()).
 */
#ifndef SK_SECKILL_H
#define SK_SECKILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_buy.h"
#include "sk_client.h"
#include "sk_deny.h"
#include "sk_http.h"
#include "sk_live.h"
#include "sk_ratelimit.h"
#include "sk_reserve.h"
#include "sk_shm_abi.h"
#include "sk_token.h"

/** Largest JSON body an answer carries. */
#define SK_SECKILL_BODY_MAX 192

/** How the front door identifies buyers. */
struct sk_seckill_conf {
	bool auth;			/**< true: Bearer JWT; false: X-User-Id */
	uint32_t token_skew_s;		/**< clock skew allowed on exp/nbf */
	const struct sk_token_key *key; /**< required when auth; not owned */
};

/*
 * The outcomes of the buy route (enum sk_seckill_outcome) are numbered in
 * the shared-memory ABI, stock/sk_shm_abi.h: the control plane reads the
 * counters by that numbering.
 */

/**
 * Private counters of one lcore. Buy outcomes, order polls and item reads
 * are counted in the arena only (sk_seckill_lcore::astats), where the
 * control plane reads them too.
 */
struct sk_seckill_stats {
	uint64_t token[SK_TOKEN__COUNT]; /**< verification results (a missing or
					      non-Bearer Authorization counts as
					      malformed, unverified) */
	uint64_t token_verifies;	 /**< sk_token_verify() calls: an upper
					      bound of the HMAC-SHA256 computed */
};

/** Per-lcore state. */
struct sk_seckill_lcore {
	struct sk_buy_lcore buy;	    /**< the engine, this lcore's part */
	const struct sk_seckill_conf *conf; /**< shared, read-only */
	struct sk_ratelimit *rl;	    /**< this lcore's limiter; NULL: none */
	uint64_t tsc_hz;		    /**< for Retry-After */
	struct sk_shm_lcore_stats *astats;  /**< this lcore's block in the arena */
	struct sk_live_zone *live;	    /**< live settings; NULL: none */
	uint64_t live_gen;		    /**< the generation this lcore runs on */
	const struct sk_deny *deny;	    /**< deny lists of live_gen; NULL: none */
	const struct sk_token_ring *ring;   /**< token keys of live_gen; NULL: conf->key */
	uint32_t log_level;		    /**< log level of live_gen */
	struct sk_reserve_zone *reserve;    /**< reservation sets; NULL: none (all refused) */
	uint64_t reserve_gen;		    /**< the sets' generation this lcore acknowledged */
	struct sk_seckill_stats stats;
} sk_cache_aligned;

_Static_assert(_Alignof(struct sk_seckill_lcore) >= SK_CACHE_LINE,
	       "lcores' states must not share a cache line");

/** Retry-After of the answer to a buy of a paused item (503 "paused"), seconds. */
#define SK_SECKILL_PAUSED_RETRY_S 1

/**
 * An answer: a prebuilt response (@c canned >= 0: an enum sk_http_canned_id,
 * sent in the variant matching the connection), or @c status with the JSON
 * @c body and an optional Retry-After.
 */
struct sk_seckill_reply {
	uint16_t status;      /**< HTTP status */
	int16_t canned;	      /**< enum sk_http_canned_id, or -1 */
	uint32_t retry_after; /**< seconds; 0: no Retry-After */
	uint64_t order;	      /**< order id of a won, duplicate or limit answer; else 0 */
	uint16_t body_len;
	char body[SK_SECKILL_BODY_MAX];
};

/**
 * sk_seckill_lcore_init - set up lcore @p lcore's state.
 * @param shm    the arena; its items are looked up per request, the
 *               requests are counted in its stats block of @p lcore
 * @param ring   the lcore's order ring (not owned)
 * @param conf   identification settings (kept by pointer)
 * @param rl     the lcore's rate limiter, or NULL for none (kept by pointer)
 * @param tsc_hz TSC frequency
 * @return 0, -EINVAL (bad lcore or ring; auth without a key; tsc_hz 0).
 */
int sk_seckill_lcore_init(struct sk_seckill_lcore *lc, struct sk_shm *shm, unsigned lcore,
			  struct rte_ring *ring, const struct sk_seckill_conf *conf,
			  struct sk_ratelimit *rl, uint64_t tsc_hz);

/**
 * sk_seckill_live_attach - follow the live settings of @p z from now on
 * (applies its current generation at once, sk_seckill_live_apply()). Call
 * before the lcore runs.
 * @return 0, or -EINVAL (no limiter while the block has limits, or the
 *         lcore index is beyond the block's lcores).
 */
int sk_seckill_live_attach(struct sk_seckill_lcore *lc, struct sk_live_zone *z);

/**
 * sk_seckill_live_apply - switch to generation @p gen: the rate limits
 * reshaped (their state kept), the deny lists of its buffer, its log level
 * noted; then publish that this lcore runs on it. Owning lcore, between
 * bursts (sk_seckill_live_poll()).
 */
void sk_seckill_live_apply(struct sk_seckill_lcore *lc, uint64_t gen);

/**
 * sk_seckill_reserve_attach - read the reservation sets of @p z from now on
 * (its current generation acknowledged at once). Call before the lcore
 * runs. Without it a reserved_only item refuses every buyer.
 * @return 0, or -EINVAL (@p z NULL, or the lcore index beyond its lcores).
 */
int sk_seckill_reserve_attach(struct sk_seckill_lcore *lc, struct sk_reserve_zone *z);

/**
 * sk_seckill_live_poll - the once-per-burst check: one relaxed load of each
 * block; a new generation of the live settings is applied
 * (sk_seckill_live_apply()), one of the reservation sets acknowledged
 * (this lcore holds no table pointer between bursts).
 * @return the new live generation, or 0 when the live settings did not change.
 */
static inline uint64_t
sk_seckill_live_poll(struct sk_seckill_lcore *lc)
{
	uint64_t g;

	if (lc->reserve != NULL &&
	    sk_unlikely((g = sk_reserve_changed(lc->reserve, lc->reserve_gen)) != 0)) {
		lc->reserve_gen = g;
		sk_reserve_ack(lc->reserve, lc->buy.lcore, g);
	}
	if (lc->live == NULL || (g = sk_live_changed(lc->live, lc->live_gen)) == 0)
		return 0;
	sk_seckill_live_apply(lc, g);
	return g;
}

/**
 * sk_seckill_buy - POST /v1/seckill/{item}.
 * @param arg       the path after "/v1/seckill/" (the item id, decimal)
 * @param arg_len   its length
 * @param req       the parsed request (Authorization / X-User-Id read)
 * @param client_ip IPv4 of the client, network byte order (0: none); the
 *                  limit key and the order's address (sk_seckill_buy_from()
 *                  takes a client of either family)
 * @param now_ns    wall clock, ns since the epoch
 * @param now_tsc   TSC now (rate limits)
 * @param out       the answer
 * @return the outcome (also counted in lc->stats and lc->astats).
 */
enum sk_seckill_outcome sk_seckill_buy(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
				       const struct sk_http_request *req, uint32_t client_ip,
				       int64_t now_ns, uint64_t now_tsc,
				       struct sk_seckill_reply *out);

/**
 * sk_seckill_buy_from - sk_seckill_buy() for a client of either family
 * (the real client behind a proxy, sk_client.h): the per-IP limit keys on
 * @p client.key and the order records @p client.addr as it is.
 * @param client  sk_client_id_of() the client's address
 * @return the outcome, as sk_seckill_buy().
 */
enum sk_seckill_outcome sk_seckill_buy_from(struct sk_seckill_lcore *lc, const char *arg,
					    size_t arg_len, const struct sk_http_request *req,
					    struct sk_client_id client, int64_t now_ns,
					    uint64_t now_tsc, struct sk_seckill_reply *out);

/**
 * sk_seckill_order - GET /v1/orders/{id}: 200 with the order's status
 * while it is in the status table; 200 {"status":"settled"} for an order
 * whose slot was reused, or of an earlier run at or below its lcore's mark
 * (stored, or failed: the store has its state); 410
 * {"status":"not_placed","detail":"buy again"} for an order of an earlier
 * run above its mark (answered 202, lost with a crash: its unit was sold
 * again); 404 for anything else. Arena reads only, no syscall.
 */
void sk_seckill_order(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
		      struct sk_seckill_reply *out);

/** What sk_seckill_follow() found: an order its requester may follow. */
struct sk_seckill_follow {
	uint64_t order;	 /**< the order id */
	uint64_t user;	 /**< the requester, its owner */
	unsigned status; /**< enum sk_order_status now; SK_ORDER_NONE: settled (slot reused) */
};

/**
 * sk_seckill_follow - the checks of GET /v1/orders/{id}/events (the order
 * events stream): the id, the per-IP limit (auth on: before the HMAC, as a
 * buy), the requester's identity as for a buy (Bearer token or X-User-Id)
 * except that a token's item claim may be any item, and ownership: the
 * user tag of the order's status slot must be the requester's.
 * @param f    on 1: the order, its owner and its status now
 * @param out  on 0: the answer - 404 (bad id, unknown order, or another
 *             user's: the same answer, so a stranger learns nothing), 401
 *             (no identity), 429 {"status":"busy"} (per-IP limit), 410
 *             not_placed (an order of an earlier run lost with a crash,
 *             as the poll)
 * @return 1: follow it (also an order of this run settled and whose slot
 *   was reused: status SK_ORDER_NONE, which the poll tells anyone); 0: answer
 *   @p out. Arena reads and at most one HMAC; no syscall.
 */
int sk_seckill_follow(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len,
		      const struct sk_http_request *req, struct sk_client_id client, int64_t now_ns,
		      uint64_t now_tsc, struct sk_seckill_follow *f, struct sk_seckill_reply *out);

/**
 * sk_seckill_item - GET /v1/items/{item}: 200 with state (scheduled, open,
 * sold_out, paused, ended), remaining units (pool + every bucket) and the
 * window, or 404.
 */
void sk_seckill_item(struct sk_seckill_lcore *lc, const char *arg, size_t arg_len, int64_t now_ns,
		     struct sk_seckill_reply *out);

/**
 * sk_seckill_settled_reply - the answer to a winner whose connection was
 * parked (ack = durable) until its order @p order settled or the wait ran
 * out: 200 {"status":"confirmed"} once durable (or paid), 202
 * {"status":"queued"} if still queued, 503 {"status":"failed"} with
 * Retry-After if the control plane could not store it (its unit went back).
 * With @p duplicate (the parked request was a winner's retry) the body
 * says "duplicate":true. 200 {"status":"settled"} if the order settled and
 * its status slot was reused before this answer. Reads the arena only.
 */
void sk_seckill_settled_reply(struct sk_seckill_lcore *lc, uint64_t order, bool duplicate,
			      struct sk_seckill_reply *out);

/**
 * sk_seckill_outcome_name - metrics label of an outcome ("won", "sold_out",
 * ...; sk_shm_outcome_name()), or "unknown" for a value that is no outcome.
 * Never NULL; thread-safe.
 */
const char *sk_seckill_outcome_name(unsigned outcome);

#endif /* SK_SECKILL_H */
