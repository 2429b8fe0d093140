/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Preheat: put an activity of the order store on sale in the arena.
 *
 * The store is the truth about a sale: its activity (total, restocked units,
 * price, per-user limit, window, closed mark) and its live orders. An item
 * in the arena is a cache of that truth, rebuilt from it whenever the arena
 * is new (dataplane start) and kept in line afterwards (control plane).
 *
 * sk_preheat_item() builds the item unseen - sk_shm_item_prepare(), the
 * restocked units added, the removed units and the live orders' units and
 * holdings taken out (sk_recover_item()), paused if the activity is - and
 * publishes it only then, so the first buyer to find it sees exactly
 * total + added - removed - live sellable units and every earlier winner
 * already holding. Re-running it for a published item changes nothing
 * (-EEXIST); sk_preheat_sync() applies what changed since: restocks,
 * removals, a pause or resume, a later end, closing.
 *
 * Thread-safety: the caller is the arena's one item writer (see sk_shm.h):
 * the dataplane at start-up, or the control plane under its write lock.
 * sk_preheat_sync() may run while lcores sell the item (it adds or removes
 * unsold units, moves the state and the end: lock-free operations of the
 * engine).
 */
#ifndef SK_PREHEAT_H
#define SK_PREHEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_recover.h"
#include "sk_shm.h"
#include "sk_store.h"

/**
 * sk_preheat_conf - the stock engine's parameters for activity @p a.
 * @param a          the activity
 * @param batch_max  refill cap (0 = the engine's default)
 * @param out        [out] the item's parameters (nlcores left 0: the arena
 *                   sets it)
 */
void sk_preheat_conf(const struct sk_store_activity *a, uint32_t batch_max,
		     struct sk_stock_conf *out);

/**
 * sk_preheat_item - put activity @p a on sale: a new item holding
 * a->total + a->added - a->removed units, minus the live units of @p st's
 * orders for it, with their buyers' holdings in its dedup slice, paused if
 * a->paused_ns is set; published last.
 *
 * @param st         the order store, or NULL (nothing sold yet: no recovery)
 * @param shm        the arena
 * @param a          the activity (a->closed_ns is not looked at: the caller
 *                   decides whether a closed activity is loaded)
 * @param dedup      dedup slice slots, 0 = automatic (sk_shm_item_prepare())
 * @param batch_max  refill cap, 0 = the engine's default
 * @param out        [out] the published item, may be NULL
 * @param rs         [out] what recovery restored, may be NULL
 * @return 0, -EEXIST (already in the arena), -ENOSPC (no item slot, or not
 *         enough dedup slots for the item or for its holdings), -ERANGE (the
 *         store holds more live units than total + added - removed, or
 *         more removed units than total + added: refused rather than
 *         oversold), -EOVERFLOW (total + added too large), -EINVAL (bad
 *         activity parameters), or an error of the store (-EIO ...). On
 *         error nothing is published.
 */
int sk_preheat_item(struct sk_store *st, struct sk_shm *shm, const struct sk_store_activity *a,
		    uint64_t dedup, uint32_t batch_max, struct sk_item **out,
		    struct sk_recover_stats *rs);

/** What sk_preheat_sync() changed. */
struct sk_preheat_sync {
	uint64_t added;	    /**< restocked units added to the pool now */
	uint64_t removed;   /**< unsold units taken out now (a removal the item lacked) */
	uint64_t unremoved; /**< removed units put back on sale now (a removal the
				 store never recorded: its remover died) */
	bool closed;	    /**< the item was closed now */
	bool paused;	    /**< the item was paused now */
	bool resumed;	    /**< the item was resumed now */
	bool extended;	    /**< the item's end moved now */
};

/**
 * sk_preheat_sync - bring published item @p it in line with its activity
 * @p a, in this order: a closed activity closes the item (every buy refused
 * from then on); an open one pauses or resumes it as a->paused_ns says; the
 * item's end becomes a->end_ns; units restocked in the store beyond
 * it->added go to the pool (and reopen a sold-out item); removed units
 * follow a->removed (the difference taken out, sk_stock_remove(), or given
 * back, sk_stock_unremove()). Idempotent: a second call with the same
 * @p a changes nothing.
 *
 * @param it   the item (it->id == a->item)
 * @param a    the activity as the store has it now
 * @param out  [out] what changed; may be NULL
 * @return 0, -EINVAL (ids differ), -ERANGE (the item holds more restocked
 *         units than the store: the store lost a restock?, or the store
 *         removed units the item cannot find unsold: the restocks and
 *         removals are not applied; the state and end are),
 *         -EBUSY (the removal raced the buyers: retry), -EOVERFLOW (from
 *         sk_stock_add()).
 */
int sk_preheat_sync(struct sk_item *it, const struct sk_store_activity *a,
		    struct sk_preheat_sync *out);

#endif /* SK_PREHEAT_H */
