/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Recovery: rebuild what a sale already sold from the order store into a
 * fresh arena, before any lcore sells.
 *
 * After a restart of the dataplane the arena is new: every item holds its
 * full stock and nobody holds anything. The store holds the truth of the
 * orders that were durable (confirmed or paid) - every order that was ever
 * answered 200. For each item, sk_recover_item() takes those orders' units
 * out of the pool (counting them as sold on lcore 0's counter, so the
 * accounting invariant of docs/stock.md holds), and puts each buyer's holding
 * back into the dedup set, so a winner of an earlier run cannot buy again and
 * a duplicate request still gets its order id. Orders that were only queued
 * when the process died are not in the store: their units stay in the pool
 * and are sold again (their buyers were answered 202, never 200).
 *
 * Thread-safety: for start-up only: no lcore may be selling the item.
 */
#ifndef SK_RECOVER_H
#define SK_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_shm.h"
#include "sk_store.h"

/** What sk_recover_item() restored. */
struct sk_recover_stats {
	uint64_t units; /**< live units taken out of the pool */
	uint64_t users; /**< holdings put back into the dedup set */
};

/**
 * sk_recover_item - restore @p it's sold units and holdings from @p st.
 *
 * @param st   the order store (a read-only handle is enough)
 * @param shm  the arena holding @p it
 * @param it   a freshly added item (nothing sold yet)
 * @param out  [out] what was restored (may be NULL)
 * @return 0, -ERANGE (the store holds more live units than the item has:
 *         refuse to sell it rather than oversell), -ENOSPC (the item's
 *         dedup slice is too small for the holdings), -EBUSY (the item has
 *         sold already), or an error of sk_store_holdings_foreach().
 */
int sk_recover_item(struct sk_store *st, struct sk_shm *shm, struct sk_item *it,
		    struct sk_recover_stats *out);

/**
 * sk_recover_marks - the high-water marks of the order store: for each
 * (epoch, lcore) of member @p member that has an order in @p st, the
 * highest such order id (ids are epoch | member | lcore | seq, so a mark
 * is the last durable order of one lcore in one epoch). The orders of a
 * dataplane run reach the store in the order each lcore made them, so
 * after a crash an id of that run above its group's mark was never stored
 * (its buyer got 202, the unit was sold again), and one at or below it was
 * (or failed, and its unit went back).
 *
 * An archive deletes orders from the store (sk_store_archive.h), but the
 * purge keeps each group's highest purged id in the store's meta table, so
 * the marks stay what they were before the archive.
 *
 * One cursor seek per (epoch, member, lcore) group in the store, from the
 * newest: O(groups x log n), plus one walk of the archives' marks; it
 * allocates a scratch array (at start, never per packet).
 *
 * @param st      the order store (read-only is enough)
 * @param member  the member number whose ids count (0: standalone)
 * @param marks   [out] up to @p max marks, ascending
 * @param max     room in @p marks
 * @param n       [out] marks written
 * @param more    [out] true if older groups were left out (then only the
 *                epochs above the oldest mark's are fully covered)
 * @return 0, -ENOMEM, or a negative errno of the store.
 */
int sk_recover_marks(struct sk_store *st, unsigned member, uint64_t *marks, uint32_t max,
		     uint32_t *n, bool *more);

#endif /* SK_RECOVER_H */
