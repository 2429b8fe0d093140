/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Activities (sales) through the control plane: create, close, restock, and
 * preheat - keeping the arena's item table in line with the store.
 *
 * The store (sk_store.h) holds every activity durably; the arena holds the
 * items on sale. Every change goes to the store first (durable), then to the
 * arena, under the control plane's write lock, so a crash between the two
 * leaves the store ahead, and the next sk_control_preheat() (the control
 * plane runs it at start and every second) finishes the job. An activity is
 * put on sale as soon as it is known - the dataplane answers 425 until its
 * start - with total + restocked - live units (sk_preheat.h).
 *
 * Once an activity exists its definition does not change: adding it again
 * with the same definition is an idempotent success, with another one a
 * conflict. What a running sale can take is a restock (more units), a
 * removal (unsold units back), a pause and a resume, a later end, and
 * closing it for good.
 *
 * Thread-safety: every function here may be called from any thread of the
 * control plane (the admin API's, the main loop's); they serialise on the
 * control plane's write lock.
 */
#ifndef SK_ACTIVITY_H
#define SK_ACTIVITY_H

#include <stdint.h>

#include "sk_control.h"

/** Outcomes of the activity calls (>= 0; errors of the store are < 0). */
enum sk_activity_result {
	SK_ACTIVITY_DONE = 0,  /**< created, closed or restocked now */
	SK_ACTIVITY_UNCHANGED, /**< the same request was applied before: a success */
	SK_ACTIVITY_CONFLICT,  /**< exists with another definition; restock id reused */
	SK_ACTIVITY_CLOSED,    /**< the activity is closed: nothing can change */
	SK_ACTIVITY_UNKNOWN,   /**< no such activity */
	SK_ACTIVITY_NO_ROOM,   /**< the arena has no item slot or dedup room left */
	SK_ACTIVITY_INVALID,   /**< a parameter is out of range */
	SK_ACTIVITY_ENDED,     /**< the sale is over (its end has passed): no restock */
	SK_ACTIVITY_SHORT,     /**< fewer units unsold than asked: nothing removed */
	SK_ACTIVITY_BUSY,      /**< the buyers moved the units faster than a removal
				    could gather them: nothing removed, retry */
	SK_ACTIVITY_CLUSTER,   /**< a cluster sale's units live in the Redis pool:
				    no removal here; or a cluster sale asked of a
				    control plane without a cluster */
	SK_ACTIVITY_REDIS,     /**< a cluster sale's restock: the Redis pool is
				    not reachable or not made yet; nothing
				    changed, retry */
};

/**
 * sk_activity_result_name - "done", "unchanged", "conflict", "closed",
 * "unknown", "no_room", "invalid", "ended", "short", "busy", "cluster", "redis"; "error" for a
 * negative value. Static.
 */
const char *sk_activity_result_name(int result);

/**
 * sk_activity_valid - check a new activity's definition.
 * @param a       the definition (a->added and the timestamps are ignored)
 * @param now_ns  wall clock: the sale must end after it
 * @param why     [out] on failure, the field at fault and the rule, as a
 *                static string ("total: 1..2^48"); may be NULL
 * @return true if valid. Pure.
 */
bool sk_activity_valid(const struct sk_store_activity *a, int64_t now_ns, const char **why);

/**
 * sk_control_activity_add - create activity @p a (store, then the arena).
 *
 * Nothing is written unless the arena has room for it (an item slot and a
 * dedup slice of 8 x total slots, see sk_shm_item_prepare()).
 *
 * @param ctl     the control plane
 * @param a       the definition; a->added and the timestamps are ignored
 * @param now_ns  wall clock (recorded as the creation time)
 * @return SK_ACTIVITY_DONE, _UNCHANGED (same definition already stored),
 *         _CONFLICT (stored with another definition, or the arena sells the
 *         item id with another one), _CLOSED, _NO_ROOM, _INVALID (see
 *         sk_activity_valid()), or a negative errno of the store (-ENOSPC,
 *         -EIO, -EACCES ...; nothing changed).
 */
int sk_control_activity_add(struct sk_control *ctl, const struct sk_store_activity *a,
			    int64_t now_ns);

/**
 * sk_control_activity_close - close the activity of @p item for good: the
 * store records it, the arena refuses every buy of the item from then on
 * (403 "ended"). Its orders stay; their payments and deadlines go on.
 * @return SK_ACTIVITY_DONE, _UNCHANGED (already closed), _UNKNOWN, or a
 *         negative errno of the store.
 */
int sk_control_activity_close(struct sk_control *ctl, uint32_t item, int64_t now_ns);

/**
 * sk_control_stock_add - restock: @p units more of @p item, once per
 * @p restock_id (the caller names each restock so that a retried request is
 * applied once). Store first, then the arena's pool (a sold-out item
 * reopens).
 * @return SK_ACTIVITY_DONE, _UNCHANGED (@p restock_id applied before with
 *         the same units), _CONFLICT (@p restock_id applied with other
 *         units), _UNKNOWN, _CLOSED, _ENDED (the sale's end is at or before
 *         @p now_ns: units added then could never sell), _INVALID (@p units or @p restock_id 0,
 *         or the item would exceed 2^48 units), or a negative errno of the
 *         store. A cluster sale's units go to the Redis pool instead
 *         (sk_control_cluster_restock()), with its outcomes.
 */
int sk_control_stock_add(struct sk_control *ctl, uint32_t item, uint64_t restock_id, uint64_t units,
			 int64_t now_ns);

/**
 * sk_control_cluster_restock - @p units more of cluster item @p item, once
 * per @p restock_id, added to the Redis pool (sk_member_restock()), where
 * every member leases them; a sold-out item reopens everywhere. Not under
 * the write lock; blocks for at most the Redis timeout. Only Redis keeps
 * the restock (docs/cluster.md): the caller retries with the same id if
 * unsure.
 * @return SK_ACTIVITY_DONE, _UNCHANGED (applied before), _CONFLICT (@p
 *         restock_id used with other units), _INVALID (units above the
 *         pool's limit), _CLUSTER (this control plane is not a member),
 *         _REDIS (Redis unreachable, or no pool yet).
 */
int sk_control_cluster_restock(struct sk_control *ctl, uint32_t item, uint64_t restock_id,
			       uint64_t units);

/**
 * sk_control_stock_remove - take @p units unsold units of @p item back
 * (the operator takes them off the sale), once per @p request_id (shared
 * with the restock ids of the item: an id names one stock change).
 *
 * All or nothing, only units nobody bought: the item table gives them
 * first (sk_stock_remove(): out of the pool and the lcores' buckets, never
 * units sold - queued, confirmed or paid - nor units in a buyer's hands),
 * then the store records the removal durably (sk_store_activity_remove());
 * if the store refuses, the units go back on sale. A repeat of an applied
 * @p request_id changes nothing. An item the arena lacks (not loaded, or
 * ended before the dataplane's start) is removed in the store alone, from
 * what the store counts unsold. A crash between the item table and the
 * store leaves the units off sale until the next sk_control_preheat() (at
 * the next control plane's start) gives them back; the removal was never
 * answered, and its retry applies it once.
 *
 * @param ctl         the control plane
 * @param item        item id
 * @param request_id  names the removal, 1..2^63-1
 * @param units       units to take back, 1..2^48
 * @param now_ns      wall clock (recorded)
 * @param unsold      [out] on SK_ACTIVITY_SHORT, the units unsold when the
 *                    call looked (a snapshot while buyers buy); may be NULL
 * @return SK_ACTIVITY_DONE, _UNCHANGED (@p request_id applied before with
 *         the same units), _CONFLICT (@p request_id used with other units,
 *         or by a restock), _SHORT (fewer than @p units unsold: nothing
 *         removed), _BUSY (retry), _CLOSED, _UNKNOWN, _INVALID (@p units or
 *         @p request_id 0 or too large), or a negative errno of the store.
 *         A sale that has ended may still give its unsold units back.
 */
int sk_control_stock_remove(struct sk_control *ctl, uint32_t item, uint64_t request_id,
			    uint64_t units, int64_t now_ns, uint64_t *unsold);

/**
 * sk_control_activity_pause - pause (@p paused true) or resume the sale of
 * @p item: the store records it (durable: a restarted control plane or
 * dataplane keeps it paused), then the item table's state moves (one flag
 * the dataplane reads on every buy: from then on every buy is answered 503
 * "paused", a holder's retry still gets its order; no unit is sold until
 * the resume). Orders, payments, deadlines and restocks go on meanwhile.
 * @return SK_ACTIVITY_DONE, _UNCHANGED (already paused, or already
 *         selling), _CLOSED, _ENDED (the sale's end has passed: nothing to
 *         pause or resume), _UNKNOWN, or a negative errno of the store.
 */
int sk_control_activity_pause(struct sk_control *ctl, uint32_t item, bool paused, int64_t now_ns);

/**
 * sk_control_activity_extend - move the end of the sale of @p item to
 * @p end_ns (INT64_MAX = never), later than the current end: store first,
 * then the item table (the dataplane reads the end on every buy).
 * @return SK_ACTIVITY_DONE, _UNCHANGED (the end is @p end_ns already),
 *         _CONFLICT (@p end_ns is before the current end: an end only moves
 *         later), _ENDED (the current end has passed: an ended sale stays
 *         ended; create a new activity), _CLOSED, _UNKNOWN, _INVALID
 *         (@p end_ns <= 0), or a negative errno of the store.
 */
int sk_control_activity_extend(struct sk_control *ctl, uint32_t item, int64_t end_ns,
			       int64_t now_ns);

/*
 * A cluster activity's stock moves (docs/cluster.md), for the member
 * (sk_member.h): each is the lease journal's step (sk_store_cluster.h)
 * under the write lock, with the item table kept in line. Errors are the
 * store's (negative errnos, SK_STORE_UNCHANGED for an op ended before).
 */

/** sk_control_cluster_lease_begin - sk_store_cluster_lease_begin() under the lock. */
int sk_control_cluster_lease_begin(struct sk_control *ctl, uint32_t item, uint64_t want,
				   int64_t now_ns, uint64_t *seq);

/**
 * sk_control_cluster_lease_end - sk_store_cluster_lease_end(), then the
 * granted units go on sale in the item table (a sold-out item reopens).
 */
int sk_control_cluster_lease_end(struct sk_control *ctl, uint32_t item, uint64_t seq,
				 uint64_t granted, int64_t now_ns);

/**
 * sk_control_cluster_giveback_begin - take @p units unsold units off sale:
 * the item table first (sk_stock_remove(): never units sold or in a buyer's
 * hands), then sk_store_cluster_giveback_begin(); if the store refuses, the
 * units go back on sale.
 * @return 0, -EAGAIN (the buyers moved the units faster: retry), -ERANGE
 *         (fewer unsold units), or an error of the store.
 */
int sk_control_cluster_giveback_begin(struct sk_control *ctl, uint32_t item, uint64_t units,
				      int64_t now_ns, uint64_t *seq);

/** sk_control_cluster_giveback_end - sk_store_cluster_giveback_end() under the lock. */
int sk_control_cluster_giveback_end(struct sk_control *ctl, uint32_t item, uint64_t seq,
				    int64_t now_ns);

/**
 * sk_control_cluster_enable - this control plane is a cluster member: it
 * accepts cluster activities (sk_control_activity_add() refuses them with
 * SK_ACTIVITY_CLUSTER otherwise). Call before the admin API starts.
 */
void sk_control_cluster_enable(struct sk_control *ctl);

/** What one sk_control_preheat() did. */
struct sk_control_preheat_info {
	uint32_t recorded; /**< arena items (from the dataplane's config) stored as activities */
	uint32_t loaded;   /**< activities put on sale in the arena */
	uint32_t synced;   /**< arena items changed (restocks, removals, pause, end, close) */
	uint32_t failed;   /**< activities the arena could not take (logged) */
};

/**
 * sk_control_preheat - one pass that brings the arena in line with the
 * store: items the dataplane loaded from its config but the store does not
 * know are recorded as activities; every open activity not yet in the arena
 * whose sale has not ended is put on sale (sk_preheat_item()); items in the
 * arena get their restocks, removals, pause, end and closing
 * (sk_preheat_sync()). Idempotent: a
 * second pass right after changes nothing. Failures of one activity (no
 * room, more live units than stock) are counted and, if @p log, written as
 * one warn line each (event=preheat, sk_logfmt.h) the first pass they
 * appear; the pass goes on with the others.
 * @param ctl     the control plane
 * @param now_ns  wall clock
 * @param log     log the failures
 * @param info    [out] what was done; may be NULL
 * @return 0, or a negative errno of the store (-ENOMEM, -EIO ...).
 */
int sk_control_preheat(struct sk_control *ctl, int64_t now_ns, bool log,
		       struct sk_control_preheat_info *info);

#endif /* SK_ACTIVITY_H */
