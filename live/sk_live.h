/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live settings: what an operator may change while the dataplane runs -
 * rate limits (the per-user attempt limit included), the token keys (a key
 * ring, by kid), the deny lists and the log level - in one block of shared memory (the DPDK memzone
 * SK_LIVE_MEMZONE, created by the dataplane at start, attached by the
 * control plane; unit tests use plain memory).
 *
 * Publication by generation. The block holds two settings slots; the
 * settings of generation g are slot[g & 1]. The one writer (the control
 * plane, under its own lock) copies the current slot into the spare one
 * (sk_live_begin()), changes it, checks it whole (sk_live_check(): a bad
 * change names its key and publishes nothing) and publishes it with one
 * release store of the generation (sk_live_publish()). Each lcore loads
 * the generation once per burst (relaxed; acquire on change,
 * sk_live_changed()), applies the new slot between bursts, and then
 * publishes the generation it runs on (sk_live_ack()). Nothing per packet
 * beyond that one load.
 *
 * Reuse of the spare slot and of the spare deny buffer: sk_live_begin()
 * refuses (-EBUSY) until every lcore runs on the current generation, so no
 * lcore can still read the slot or deny buffer about to be overwritten. An
 * lcore switches within one pass of its loop (microseconds; an idle lcore
 * within its idle sleep), so the writer waits bounded (sk_live_quiescent()).
 *
 * Thread-safety: one writer at a time (the caller's lock); any number of
 * readers, each reading only its own lcore block. Nothing here allocates,
 * locks or makes a system call.
 */
#ifndef SK_LIVE_H
#define SK_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_common.h"
#include "sk_token.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Name of the memzone that holds the block. */
#define SK_LIVE_MEMZONE "sk_live"

/** Magic and version of the block's layout (checked by sk_live_attach()). */
#define SK_LIVE_MAGIC	0x53564c4b534b4c56ULL
#define SK_LIVE_VERSION 1u

/** The kid of the key of seckill.secret_file (the default key at start). */
#define SK_LIVE_KID_DEFAULT "default"

/** Most lcores a block serves. */
#define SK_LIVE_LCORES_MAX 128u

/** Room of a change's description, NUL included. */
#define SK_LIVE_WHAT_MAX 96

/** Largest rate or burst accepted (as SK_RL_BURST_MAX). */
#define SK_LIVE_RATE_MAX 1000000000ULL

/** Log levels accepted: enum sk_log_level (log/sk_logfmt.h), 0 debug .. 5 crit. */
#define SK_LIVE_LOG_MIN 0u
#define SK_LIVE_LOG_MAX 5u

/**
 * The rate limits (buys per second, 0 = off; a burst of 0 is one second's
 * worth). Global and item values are for the whole appliance; IP and user
 * values per lcore (sk_ratelimit.h).
 */
struct sk_live_limits {
	uint64_t global_rate, global_burst;
	uint64_t item_rate, item_burst;
	uint64_t ip_rate, ip_burst;
	uint64_t user_rate, user_burst; /**< attempts of one user on one item */
};

/** One generation's settings. All-zero is not valid: see sk_live_check(). */
struct sk_live_settings {
	uint64_t gen;		     /**< generation these settings are */
	int64_t when_ns;	     /**< wall clock of the change, ns */
	char what[SK_LIVE_WHAT_MAX]; /**< the change, for logs and status (no secret) */
	struct sk_live_limits limits;
	uint32_t log_level;		    /**< SK_LIVE_LOG_MIN..SK_LIVE_LOG_MAX */
	uint32_t deny_buf;		    /**< deny buffer in use: 0 or 1 */
	uint64_t deny_users, deny_prefixes; /**< entries in it (informational) */
	struct sk_token_ring keys; /**< token keys (their HMAC states: secret-equivalent) */
} sk_cache_aligned;

/** What one lcore publishes: the generation it runs on, and its counters. */
struct sk_live_lcore {
	_Atomic uint64_t gen;  /**< written by the lcore (release), read by the writer */
	uint64_t denied;       /**< buys refused 403 by a deny list */
	uint64_t user_limited; /**< buys refused 429 by the per-user limit */
} sk_cache_aligned;

/** The block (at the start of the memzone; deny buffers follow). */
struct sk_live_zone {
	uint64_t magic;
	uint32_t version;
	uint32_t nlcores;
	uint64_t size;			       /**< bytes of the whole block */
	uint64_t deny_off[2];		       /**< offsets of the two deny buffers from the zone */
	uint64_t deny_size;		       /**< bytes of each */
	uint64_t deny_cap;		       /**< entries of each kind each holds */
	_Atomic uint64_t gen sk_cache_aligned; /**< the published generation */
	struct sk_live_settings slot[2];
	struct sk_live_lcore lcore[SK_LIVE_LCORES_MAX];
};

/**
 * sk_live_size - bytes of a block whose deny buffers hold @p deny_cap
 * entries of each kind (0: no deny lists).
 * @return the size, or 0 if @p deny_cap is too large (sk_deny.h).
 */
size_t sk_live_size(uint32_t deny_cap);

/**
 * sk_live_init - lay out a block in @p mem (@p size bytes, 64-byte aligned,
 * at least sk_live_size(@p deny_cap)) with @p first as generation 1 (its
 * gen, deny_buf and counts are set here; the deny buffers start empty).
 * Every lcore starts on generation 1.
 * @return the block (== @p mem), or NULL: bad argument, @p size too small,
 *         @p nlcores 0 or above SK_LIVE_LCORES_MAX, @p first invalid.
 */
struct sk_live_zone *sk_live_init(void *mem, size_t size, uint32_t nlcores, uint32_t deny_cap,
				  const struct sk_live_settings *first);

/**
 * sk_live_attach - check a block made by sk_live_init() (another process).
 * @return the block, or NULL with a reason in @p err.
 */
struct sk_live_zone *sk_live_attach(void *mem, size_t size, char *err, size_t errlen);

/**
 * sk_live_check - check @p s whole. 0, or -EINVAL with the name of the
 * first bad key ("user_rate", "log_level", ...) in *@p key.
 */
int sk_live_check(const struct sk_live_settings *s, const char **key);

/** sk_live_current - the settings now published (the writer's view). */
const struct sk_live_settings *sk_live_current(const struct sk_live_zone *z);

/**
 * sk_live_quiescent - true when every lcore runs on the published
 * generation (the spare slot and the spare deny buffer are free).
 */
bool sk_live_quiescent(const struct sk_live_zone *z);

/**
 * sk_live_begin - the writer's first step: a copy of the current settings
 * in the spare slot, for the caller to change and then publish.
 * @return the spare slot, or NULL with errno EBUSY (an lcore still runs on
 *         an older generation: retry after a moment).
 */
struct sk_live_settings *sk_live_begin(struct sk_live_zone *z);

/**
 * sk_live_publish - check the slot of sk_live_begin() and publish it as
 * the next generation, @p what describing the change (no secret).
 * @return the new generation, or -EINVAL with the bad key in *@p key
 *         (nothing published; the spare slot is simply reused later).
 */
int64_t sk_live_publish(struct sk_live_zone *z, struct sk_live_settings *s, const char *what,
			int64_t now_ns, const char **key);

/**
 * sk_live_deny_buf - deny buffer @p i (0 or 1) of @p z, sk_live_zone::deny_size
 * bytes; NULL when the block has none.
 */
void *sk_live_deny_buf(struct sk_live_zone *z, uint32_t i);

/**
 * sk_live_changed - the lcore's per-burst check: the published generation
 * if it differs from @p mine (with an acquire fence: the new slot may be
 * read), else 0. One relaxed load when nothing changed.
 */
static inline uint64_t
sk_live_changed(const struct sk_live_zone *z, uint64_t mine)
{
	uint64_t g = atomic_load_explicit(&((struct sk_live_zone *)z)->gen, memory_order_relaxed);

	if (sk_likely(g == mine))
		return 0;
	atomic_thread_fence(memory_order_acquire);
	return g;
}

/** sk_live_slot - the settings of generation @p gen (read-only for lcores). */
static inline const struct sk_live_settings *
sk_live_slot(const struct sk_live_zone *z, uint64_t gen)
{
	return &z->slot[gen & 1];
}

/**
 * sk_live_ack - lcore @p lcore now runs on @p gen (release: it no longer
 * reads the previous slot or deny buffer).
 */
static inline void
sk_live_ack(struct sk_live_zone *z, uint32_t lcore, uint64_t gen)
{
	atomic_store_explicit(&z->lcore[lcore].gen, gen, memory_order_release);
}

#ifdef __cplusplus
}
#endif

#endif /* SK_LIVE_H */
