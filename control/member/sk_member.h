/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The cluster member: the control plane's side of docs/cluster.md. One
 * thread that keeps each cluster activity's local stock fed from the Redis
 * pool (leases at preheat and under the low-water mark, sized by the
 * selling rate), gives unsold units back when the sale here stops (idle,
 * closed, ended, paused, shutting down, or another member is dry), resends
 * the lease journal's pending op after a crash, syncs after a fence, and
 * carries the sold-out broadcast to the dataplane's item table.
 *
 * Every stock move is durable first (sk_activity.h's cluster calls, over
 * the store's lease journal): Redis down means selling what is held, never
 * more.
 *
 * Thread-safety: sk_member_start() and sk_member_stop() from the thread
 * that owns the control plane; sk_member_metrics() and sk_member_view()
 * from any thread (the admin API's).
 */
#ifndef SK_MEMBER_H
#define SK_MEMBER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_control.h"
#include "sk_cpool.h"
#include "sk_prom.h"

/** Most cluster activities one member follows at once (a sale over here
 * that owes the pool nothing gives its slot up: docs/cluster.md). */
#define SK_MEMBER_ITEMS_MAX 64

/** How a member runs. */
struct sk_member_conf {
	struct sk_cpool_config redis;		   /**< where Redis is, and this member's id */
	const char *members[SK_CPOOL_MEMBERS_MAX]; /**< every member's id (this one too) */
	uint32_t nmembers;
	int64_t idle_ns; /**< give back after this long without a sale (0: 5 s) */
	int64_t tick_ns; /**< the loop's period (0: 20 ms) */
};

struct sk_member;

/**
 * sk_member_parse_redis - "HOST:PORT" or "unix:PATH" into @p c (pointers
 * into @p s, which must outlive @p c).
 * @return 0, -EINVAL (malformed: no port, port 0 or above 65535, empty path).
 */
int sk_member_parse_redis(char *s, struct sk_cpool_config *c);

/**
 * sk_member_parse_members - the comma-separated ids of @p s (modified in
 * place) into @p conf->members.
 * @return 0, -EINVAL (an id not valid for sk_cpool_member_valid(), or a
 *         repeated one), -E2BIG (more than SK_CPOOL_MEMBERS_MAX).
 */
int sk_member_parse_members(char *s, struct sk_member_conf *conf);

/**
 * sk_member_number - this member's number: the position of
 * @p conf->redis.member in @p conf->members, from 1 (so 1..16); 0 if it is
 * not there. It is in every order id the member's dataplane mints
 * ([cluster] member_id), so every member must be given the same
 * --cluster-members in the same order. Pure; thread-safe.
 */
uint32_t sk_member_number(const struct sk_member_conf *conf);

/**
 * sk_member_claim - claim this member's number (sk_member_number()) in
 * Redis on a connection of its own (sk_cpool_claim()): what the control
 * plane does at start, before it attaches, so that two members that would
 * mint the same order ids (their --cluster-members disagree) are refused.
 * The member's loop claims it again itself (sk_member_start()). Blocks for
 * at most a few times the Redis timeout; any thread.
 * @param err  [out] on error, the words for the log (both ids and the
 *             number on -EEXIST); may be NULL
 * @return 0 (claimed now, or held already), -EEXIST (another member holds
 *         the number, or this one holds another), -EINVAL (this member is
 *         not among the members, or a bad config), -ENOTCONN/-ETIMEDOUT
 *         (Redis does not answer: nothing known), or another error of
 *         sk_cpool_open()/sk_cpool.h.
 */
int sk_member_claim(const struct sk_member_conf *conf, char *err, size_t errlen);

/**
 * sk_member_start - make @p ctl a cluster member (sk_control_cluster_enable())
 * and start its thread. Redis need not be up: the thread leases nothing
 * until it has claimed this member's number (sk_member_claim()), which it
 * does again every 10 s and after Redis went down, a fence or a lost
 * pool; a refused claim stops its leases (logged, retried each second).
 * @param out  [out] the member, owned by the caller (sk_member_stop())
 * @return 0, -EINVAL (this member's id not among the members, a bad id, no
 *         members), -ENOMEM, or a pthread error (negative).
 */
int sk_member_start(struct sk_member **out, struct sk_control *ctl,
		    const struct sk_member_conf *conf);

/**
 * sk_member_stop - give every unsold unit back (as far as Redis answers
 * within @p giveback_ns), stop the thread, free @p m (NULL is fine).
 */
void sk_member_stop(struct sk_member *m, int64_t giveback_ns);

/**
 * sk_member_metrics - the member's Prometheus lines (seckill_redis_up,
 * seckill_cluster_*, the histogram seckill_cluster_broadcast_delay_seconds
 * of the sold-out broadcasts' delay from Redis's flip) on @p out.
 * @return 0, or -EIO if a write failed.
 */
int sk_member_metrics(struct sk_member *m, FILE *out);

/** The member's metrics table (what sk_member_metrics() writes, in order). */
extern const struct sk_prom_table sk_member_table;

/**
 * sk_member_restock - the operator adds @p units to cluster item @p item
 * (request @p request_id): sk_cpool_restock() on a connection of its own.
 * The units go to the Redis pool, not to this appliance: every member
 * leases them as it sells. Any thread; blocks for at most the Redis
 * timeout.
 * @param repeat  [out] true if the request was applied before; may be NULL
 * @return 0, -EEXIST (the request id was used with other units),
 *         -EOVERFLOW (the total would pass SK_CPOOL_UNITS_MAX), -ENOENT
 *         (Redis has no pool for the item: no member has preheated it yet,
 *         or Redis lost it and no member has made it again), -EINVAL, or a
 *         shared error of sk_cpool.h (-ENOTCONN, -ETIMEDOUT ...).
 */
int sk_member_restock(struct sk_member *m, uint32_t item, uint64_t request_id, uint64_t units,
		      bool *repeat);

/**
 * sk_member_get_units - read Redis key @p key (a shop's "stock:{sku}") as
 * a count of units, on a connection of its own (sk_cpool_get_units()):
 * what `activity add --total-from KEY` makes the total. Any thread;
 * blocks for at most the Redis timeout.
 * @param units  [out] the count (1..SK_CPOOL_UNITS_MAX)
 * @param why    [out] on error, a text for the operator (cap bytes)
 * @return 0, -ENOENT (no such key), -EINVAL (not a count), -EPROTO (not
 *         a string), or a shared error of sk_cpool.h (-ENOTCONN,
 *         -ETIMEDOUT, -ENOMEM).
 */
int sk_member_get_units(struct sk_member *m, const char *key, uint64_t *units, char *why,
			size_t cap);

/**
 * sk_member_redis - the member's Redis settings (static while @p m lives),
 * for a connection of the caller's own.
 */
const struct sk_cpool_config *sk_member_redis(const struct sk_member *m);

/** sk_member_id - this member's id (static while @p m lives). */
const char *sk_member_id(const struct sk_member *m);

/**
 * sk_member_forget - the operator declares member @p gone gone for good from
 * cluster item @p item, holding @p held units (its last durable word, from
 * its LMDB or its last `cluster show`): sk_cpool_forget() on a connection
 * of its own (the loop's is not shared), so a pool fenced by a Redis that
 * lost writes can be rebuilt without it; then kept in this member's LMDB
 * (sk_store_cluster_forget(); a failure there is logged, and the loop
 * learns it from the pool instead), so that every init sends it. Any
 * thread; blocks for at most the Redis timeout.
 * @return 0, -EINVAL (@p gone is this member, or not a valid id), -ENOENT
 *         (no pool, or @p gone is not a member), -EOVERFLOW (the members
 *         would hold more than the total), or a shared error of sk_cpool.h
 *         (-ENOTCONN, -ETIMEDOUT ...).
 */
int sk_member_forget(struct sk_member *m, uint32_t item, const char *gone, uint64_t held);

/** What the member knows of one cluster item (sk_member_view()). */
struct sk_member_item {
	uint32_t item;
	bool redis_up;		   /**< the last call reached Redis */
	struct sk_cpool_view pool; /**< Redis's side, as last read */
	int64_t pool_read_ns;	   /**< when (0: never) */
	uint64_t held;		   /**< this member's durable word (LMDB) */
	uint64_t pending_seq;	   /**< the journal's pending op (0: none) */
	uint8_t pending_kind;	   /**< enum sk_store_cluster_kind */
	uint64_t pending_units;
	double rate; /**< units sold per second here (smoothed) */
};

/**
 * sk_member_view - the last state of cluster item @p item (read from Redis
 * by the member's loop, at most one tick old, and from LMDB now).
 * @return 0, -ENOENT (not a cluster item this member follows: none, or
 *         one whose sale is over here and owes the pool nothing).
 */
int sk_member_view(struct sk_member *m, uint32_t item, struct sk_member_item *out);

#endif /* SK_MEMBER_H */
