/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Per-user dedup set: who holds how many units of an item, and under which
 * order id.
 *
 * A lock-free open-addressing table keyed by user id. Each item owns a
 * power-of-two slice of one shared slot array (struct sk_item's dedup_off and
 * dedup_mask), so the key within a slice is just the user. A slot is claimed
 * by one CAS on its user word and never freed: a user who tried and failed
 * keeps a slot holding zero units, and comes back to the same slot. So there
 * are no tombstones and no ABA; the price is that a slice must be sized for
 * the distinct users who reach the stock step while units remain (those who
 * come after the sold-out flag never get here). A full slice is reported, not
 * silently accepted.
 *
 * A buy runs: sk_dedup_acquire() (marks the slot pending, checks the limit)
 * -> take stock -> sk_dedup_commit() or sk_dedup_abort(). While a slot is
 * pending, a second request of the same user gets SK_DEDUP_PENDING: one
 * user's buys on one item are serialised without a lock.
 *
 * Slots hold no pointers: the array lives in shared memory.
 *
 * Thread-safety: all functions are lock-free and may run concurrently on any
 * threads; a slot handed out by sk_dedup_acquire() must be finished (commit
 * or abort) by the same caller.
 */
#ifndef SK_DEDUP_H
#define SK_DEDUP_H

#include <stdatomic.h>
#include <stdint.h>

#include "sk_common.h"

/** Longest probe sequence before a slice counts as full. */
#define SK_DEDUP_MAX_PROBE 128

/** One slot: 32 bytes, two per cache line. */
struct sk_dedup_slot {
	_Atomic uint64_t user; /**< 0 = empty; claimed once, never released */
	_Atomic uint32_t ctl;  /**< units held (low 31 bits) | SK_DEDUP_CTL_PENDING */
	uint32_t reserved;
	_Atomic uint64_t order; /**< id of the user's latest order, 0 = none */
	uint64_t reserved2;
};

_Static_assert(SK_CACHE_LINE % sizeof(struct sk_dedup_slot) == 0,
	       "a dedup slot must not straddle two cache lines");

#define SK_DEDUP_CTL_PENDING UINT32_C(0x80000000)

/** A dedup slice: the slots of one item. */
struct sk_dedup {
	struct sk_dedup_slot *slot; /**< first slot of the slice */
	uint64_t mask;		    /**< slice size - 1 */
};

/** Outcome of sk_dedup_acquire(). */
enum sk_dedup_result {
	SK_DEDUP_OK = 0,  /**< slot pending for this buy; finish with commit/abort */
	SK_DEDUP_LIMIT,	  /**< the user already holds as many units as allowed */
	SK_DEDUP_PENDING, /**< another buy of this user is in flight */
	SK_DEDUP_FULL,	  /**< no free slot within SK_DEDUP_MAX_PROBE */
};

/**
 * sk_dedup_acquire - find or claim @p user's slot and reserve @p qty more
 * units against @p limit.
 *
 * @param d      the item's slice
 * @param user   user id, non-zero
 * @param qty    units this buy wants, >= 1
 * @param limit  units a user may hold, >= 1
 * @param slot   [out] the user's slot (set for OK and LIMIT and PENDING)
 * @param order  [out] the user's latest order id, 0 if none (set for LIMIT)
 * @return SK_DEDUP_OK, SK_DEDUP_LIMIT, SK_DEDUP_PENDING, SK_DEDUP_FULL, or
 *         -EINVAL for user 0 or qty 0.
 */
int sk_dedup_acquire(const struct sk_dedup *d, uint64_t user, uint32_t qty, uint32_t limit,
		     struct sk_dedup_slot **slot, uint64_t *order);

/**
 * sk_dedup_commit - the buy succeeded: record @p order and @p qty more units
 * and end the pending state.
 */
void sk_dedup_commit(struct sk_dedup_slot *slot, uint32_t qty, uint64_t order);

/** sk_dedup_abort - the buy failed: end the pending state, nothing held. */
void sk_dedup_abort(struct sk_dedup_slot *slot);

/**
 * sk_dedup_release - @p qty units of @p user's came back (order cancelled),
 * so the user may buy again.
 *
 * May run while a buy of the same user is pending.
 *
 * @return 0, -ENOENT if the user has no slot, -ERANGE if the user holds
 *         fewer than @p qty units.
 */
int sk_dedup_release(const struct sk_dedup *d, uint64_t user, uint32_t qty);

/**
 * sk_dedup_lookup - read @p user's holding without changing it.
 *
 * @param units  [out] units held (may be NULL)
 * @param order  [out] latest order id, 0 if none (may be NULL)
 * @return 0, or -ENOENT if the user has no slot.
 */
int sk_dedup_lookup(const struct sk_dedup *d, uint64_t user, uint32_t *units, uint64_t *order);

/**
 * sk_dedup_restore - recovery: set @p user's holding to @p units with latest
 * order @p order (rebuilding the set from the order store).
 * Not for use while buys run on the same item.
 * @return 0, -EINVAL for user 0, SK_DEDUP_FULL if no slot is free.
 */
int sk_dedup_restore(const struct sk_dedup *d, uint64_t user, uint32_t units, uint64_t order);

#endif /* SK_DEDUP_H */
