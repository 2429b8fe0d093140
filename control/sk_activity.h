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
 * conflict. What a running sale can take is a restock (more units) and
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
};

/**
 * sk_activity_result_name - "done", "unchanged", "conflict", "closed",
 * "unknown", "no_room", "invalid", "ended"; "error" for a negative value.
 * Static.
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
 *         store.
 */
int sk_control_stock_add(struct sk_control *ctl, uint32_t item, uint64_t restock_id, uint64_t units,
			 int64_t now_ns);

/** What one sk_control_preheat() did. */
struct sk_control_preheat_info {
	uint32_t recorded; /**< arena items (from the dataplane's config) stored as activities */
	uint32_t loaded;   /**< activities put on sale in the arena */
	uint32_t synced;   /**< arena items changed (restocked or closed) */
	uint32_t failed;   /**< activities the arena could not take (logged) */
};

/**
 * sk_control_preheat - one pass that brings the arena in line with the
 * store: items the dataplane loaded from its config but the store does not
 * know are recorded as activities; every open activity not yet in the arena
 * whose sale has not ended is put on sale (sk_preheat_item()); items in the
 * arena get their restocks and closing (sk_preheat_sync()). Idempotent: a
 * second pass right after changes nothing. Failures of one activity (no
 * room, more live units than stock) are written to @p log (may be NULL) and
 * counted; the pass goes on with the others.
 * @param ctl     the control plane
 * @param now_ns  wall clock
 * @param log     where to write one line per failure; may be NULL
 * @param info    [out] what was done; may be NULL
 * @return 0, or a negative errno of the store (-ENOMEM, -EIO ...).
 */
int sk_control_preheat(struct sk_control *ctl, int64_t now_ns, FILE *log,
		       struct sk_control_preheat_info *info);

#endif /* SK_ACTIVITY_H */
