/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's side of the reservation sets (reserve/sk_reserve.h):
 * it is their one writer, and keeps their durable copy in the store
 * (storage/sk_store_reserve.h). An addition goes to the shared sets first
 * (refused whole when they are full: nothing added anywhere), then to the
 * store in one durable transaction. At start, and whenever an item is put
 * on sale, the sets whose count differs from the store's are rebuilt from
 * the store (sk_control_reserve_sync()): after a restart of the dataplane
 * (empty sets) or of the control plane (a change it died in the middle of).
 * Closing an activity keeps its set; archiving it deletes the set from the
 * store and empties it in memory.
 *
 * Thread-safety: every function may be called from any thread; writes are
 * serialised by a mutex of their own, never the store write lock while
 * they wait for the lcores.
 */
#ifndef SK_RESERVE_CTL_H
#define SK_RESERVE_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "sk_control.h"
#include "sk_reserve.h"

/** Longest a writer waits for every lcore to move past a grown table, ms. */
#define SK_RESERVE_CTL_WAIT_MS 2000

/**
 * sk_control_reserve_attach - find the dataplane's reservation block (DPDK
 * secondary) and load the store's sets into it. Its absence is not an
 * error (seckill.reserve_mb = 0): additions are then refused.
 * @return 0 (found), -ENOENT (none), -EPROTO (not a block of this version),
 *         -ENOMEM.
 */
int sk_control_reserve_attach(struct sk_control *ctl, char *err, size_t errlen);

/**
 * sk_control_reserve_set - use @p z (a block in this process: tests). Call
 * before any other thread uses @p ctl. Loads nothing.
 * @return 0, or -ENOMEM (the mutex).
 */
int sk_control_reserve_set(struct sk_control *ctl, struct sk_reserve_zone *z);

/** sk_control_reserve - the block, or NULL when none is attached. */
struct sk_reserve_zone *sk_control_reserve(const struct sk_control *ctl);

/**
 * sk_control_reserve_add - add @p n user ids to item @p item's set: the
 * shared set, then the store.
 * @param added [out] ids new to the set
 * @param total [out] ids in the set afterwards
 * @return 0; -EINVAL (a user id 0: nothing added); -ENODEV (no block);
 *         -ENOSPC (the sets' memory or directory is full: nothing added,
 *         @p err says which); -EBUSY (an lcore did not move on in time:
 *         nothing added, retry); or an error of the store (-ENOSPC
 *         included: @p err says "store: ..."), after which the shared set
 *         is rebuilt from the store, so none of these ids may buy.
 */
int sk_control_reserve_add(struct sk_control *ctl, uint32_t item, const uint64_t *users, size_t n,
			   uint64_t *added, uint64_t *total, char *err, size_t errlen);

/**
 * sk_control_reserve_total - ids in item @p item's set: the shared set's
 * count, or the store's when no block is attached.
 * @return 0, or an error of the store.
 */
int sk_control_reserve_total(struct sk_control *ctl, uint32_t item, uint64_t *total);

/**
 * sk_control_reserve_sync - rebuild, from the store, every shared set whose
 * count differs from the store's (@p item 0), or item @p item's only.
 * @return 0, -ENODEV (no block: nothing to do), or the first error
 *         (-ENOSPC, -EBUSY, an error of the store); the other items are
 *         still synced.
 */
int sk_control_reserve_sync(struct sk_control *ctl, uint32_t item);

/**
 * sk_control_reserve_drop - delete item @p item's set: from the store,
 * then empty in memory (archiving an activity).
 * @return 0, SK_STORE_UNCHANGED (no set), or an error of the store.
 */
int sk_control_reserve_drop(struct sk_control *ctl, uint32_t item);

#endif /* SK_RESERVE_CTL_H */
