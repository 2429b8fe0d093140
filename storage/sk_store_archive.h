/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Per-activity archive of the order store (docs/storage.md, "Archive").
 *
 * The orders of an activity that is over and settled leave the main store
 * for a file of their own, `<store>/archive/item-<item>.jsonl`: one JSON
 * object per order line, in order id order, written to a temporary file,
 * fsync()ed, renamed and the directory fsync()ed. The store then keeps one
 * small record per archived activity (in `items`, under the tag
 * ITEM_TAG_ARCHIVE) and deletes the orders, their `by_user`,
 * `user_orders` and `state_orders` entries in slices of short write
 * transactions; the freed pages are reused by LMDB.
 *
 * Three steps, each safe to crash in:
 *   1. sk_store_archive_export() writes the file from one read snapshot (no
 *      writer is held; a file without a record is never read);
 *   2. sk_store_archive_mark() checks in one write transaction that nothing
 *      of the item changed since the snapshot (its ledger is the same), then
 *      records the archive (state PURGING), closes the activity and appends
 *      SK_STORE_EV_ACTIVITY_ARCHIVED. From this commit on the listings of the
 *      item come from the file alone, so an order still in the store is
 *      never listed twice;
 *   3. sk_store_archive_purge() deletes up to N orders per transaction; the
 *      last slice sets the record DONE. After a crash the caller finds
 *      PURGING records (sk_store_archive_foreach()) and purges on.
 *
 * An archived item's ledger is kept as it was (sold, returned, paid): the
 * item table, reconcile and verify still add up. Its payments are refused
 * as of an unknown order (a paid order of an archived activity is not
 * refunded through the store any more).
 *
 * Errors are negative errnos as in sk_store.h. Thread-safety: as the store;
 * every call runs its own transactions. The caller serialises
 * sk_store_archive_mark() and _purge() with its other writers as it does
 * every write (they are writes).
 */
#ifndef SK_STORE_ARCHIVE_H
#define SK_STORE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Folder of the archive files, inside the store's directory. */
#define SK_STORE_ARCHIVE_DIR "archive"
/**
 * How long after its end (or its close, if earlier) an activity counts as
 * over: orders sold just before the end may still sit in the dataplane's
 * rings for a few milliseconds.
 */
#define SK_STORE_ARCHIVE_GRACE_NS (INT64_C(5) * 1000000000)

/** States of an archive record. The numbers are stored: never renumber. */
enum sk_store_archive_state {
	SK_STORE_ARCHIVE_PURGING = 1, /**< file written; orders still leaving the store */
	SK_STORE_ARCHIVE_DONE = 2,    /**< every order of the item is in the file only */
};

/** One archived activity. */
struct sk_store_archive_info {
	uint32_t item;
	uint8_t state;	     /**< enum sk_store_archive_state */
	uint64_t orders;     /**< orders (= lines: carts are not archived) in the file */
	uint64_t first_id;   /**< smallest order id in the file (0: none) */
	uint64_t last_id;    /**< largest order id in the file */
	int64_t archived_ns; /**< when it was marked (caller's clock) */
};

/** What sk_store_archive_export() saw: sk_store_archive_mark()'s input. */
struct sk_store_archive_snap {
	uint32_t item;
	struct sk_store_ledger ledger; /**< the item's ledger in the snapshot */
	uint64_t orders, first_id, last_id;
	uint64_t file_bytes; /**< size of the file written */
};

/**
 * sk_store_archive_export - check that the activity of @p item can be
 * archived and write its archive file, from one read snapshot.
 *
 * Archivable: an activity exists; it is over (the earlier of its end and
 * its close at least SK_STORE_ARCHIVE_GRACE_NS before @p now_ns); no order
 * of it is confirmed (every one paid, cancelled or refunded); no order of
 * it is a cart (lines of several items); and, when @p exported_below is
 * non-zero, no event of the item has seq >= @p exported_below (the
 * exporter has sent them all; pass its cursor + 1).
 *
 * @param why     [out] on -EINPROGRESS or -EBUSY, why in a short phrase
 *                (NUL-terminated); may be NULL
 * @param snap    [out] what the file holds, for sk_store_archive_mark()
 * @return 0 (file durable), -ENOENT (no activity for @p item), -EALREADY
 *         (archived already), -EINPROGRESS (not over), -EBUSY (not settled,
 *         not exported, or a cart), -EINVAL (@p item 0, @p snap NULL), or an
 *         error of the store or the file system.
 */
int sk_store_archive_export(struct sk_store *st, uint32_t item, int64_t now_ns,
			    uint64_t exported_below, struct sk_store_archive_snap *snap, char *why,
			    size_t whylen);

/**
 * sk_store_archive_mark - record the archive that sk_store_archive_export()
 * wrote (one durable write transaction): state PURGING, the activity closed
 * if it was not, SK_STORE_EV_ACTIVITY_ARCHIVED appended.
 * @return 0, -EALREADY (archived already), -EAGAIN (an order of the item
 *         changed since the snapshot: export again), -ENOENT (no activity),
 *         -ENOSPC, -EACCES.
 */
int sk_store_archive_mark(struct sk_store *st, const struct sk_store_archive_snap *snap,
			  int64_t now_ns);

/**
 * sk_store_archive_purge - delete up to @p max orders of the archived
 * @p item from the store, in one durable write transaction; the slice that
 * finds none left sets the record DONE.
 * @param purged  [out] orders deleted; may be NULL
 * @return 0 (DONE: nothing of the item left, also when it was DONE
 *         already), 1 (more to purge), -ENOENT (@p item is not archived),
 *         -EINVAL (@p max 0), -ENOSPC, -EACCES.
 */
int sk_store_archive_purge(struct sk_store *st, uint32_t item, uint32_t max, uint64_t *purged);

/**
 * sk_store_archive_get - the archive record of @p item.
 * @return 0, -ENOENT (not archived), -EIO (a damaged record).
 */
int sk_store_archive_get(struct sk_store *st, uint32_t item, struct sk_store_archive_info *info);

/** Callback of sk_store_archive_foreach(); non-zero stops the walk and is returned. */
typedef int (*sk_store_archive_cb)(const struct sk_store_archive_info *info, void *arg);

/**
 * sk_store_archive_foreach - every archive record, in item order.
 * @return 0, the callback's non-zero value, or an error.
 */
int sk_store_archive_foreach(struct sk_store *st, sk_store_archive_cb cb, void *arg);

/**
 * sk_store_archive_order_get - order @p id read from the archive files (a
 * binary search in each file whose id range holds it), like
 * sk_store_order_get().
 * @return 0, -ENOENT (in no archive), -ENOSPC (@p max too small), -EIO (a
 *         damaged file), or an error of the file system.
 */
int sk_store_archive_order_get(struct sk_store *st, uint64_t id, struct sk_store_line *lines,
			       unsigned max, unsigned *nlines);

/**
 * sk_store_archive_find - sk_store_orders_find() answered from the archive
 * file of the archived q->item (sk_store_orders_find() calls it for every
 * archived item). O(orders of the item) when filtered by user or state.
 * @return as sk_store_orders_find(); -ENOENT when q->item is not archived.
 */
int sk_store_archive_find(struct sk_store *st, const struct sk_store_order_query *q,
			  sk_store_order_cb cb, void *arg, bool *more);

/**
 * sk_store_archive_path - the file of @p item's archive into @p buf.
 * @return 0, -ENAMETOOLONG (@p cap too small).
 */
int sk_store_archive_path(struct sk_store *st, uint32_t item, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SK_STORE_ARCHIVE_H */
