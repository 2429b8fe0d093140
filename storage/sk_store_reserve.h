/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The order store's reservation sets (sk_store.h, "reservations"): per
 * item, the user ids allowed to buy it when it is reserved_only. The
 * durable copy of the sets the control plane loads into shared memory
 * (reserve/sk_reserve.h) at its start. One LMDB database, `reservations`:
 * key the item (4 bytes, big-endian), one sorted duplicate per user id
 * (8 bytes, big-endian); docs/storage.md. Added with schema 4.1: a store
 * of an older schema gets it at its first writable open; read-only it
 * reads as empty.
 * Split from sk_store.h along its seam; the threading, durability and
 * multi-process rules of sk_store.h apply unchanged.
 */
#ifndef SK_STORE_RESERVE_H
#define SK_STORE_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include "sk_store.h"

/**
 * sk_store_reserve_add - add @p n user ids to item @p item's set, in one
 * durable write transaction. Ids already stored (or repeated) count once.
 * @param added [out] ids new to the set, may be NULL
 * @return 0, -EINVAL (a user id 0 or @p item 0: nothing written), -EACCES
 *         (read-only), or an error of sk_store.h (nothing written).
 */
int sk_store_reserve_add(struct sk_store *st, uint32_t item, const uint64_t *users, size_t n,
			 uint64_t *added);

/**
 * sk_store_reserve_count - the ids stored for item @p item (0: none).
 * @return 0, or an error of sk_store.h.
 */
int sk_store_reserve_count(struct sk_store *st, uint32_t item, uint64_t *count);

/**
 * sk_store_reserve_read - every id stored for item @p item, ascending, in
 * *@p users (malloc'd, the caller frees it; NULL when *@p n is 0).
 * @return 0, -ENOMEM, or an error of sk_store.h.
 */
int sk_store_reserve_read(struct sk_store *st, uint32_t item, uint64_t **users, size_t *n);

/** Callback of sk_store_reserve_foreach(): non-zero stops the walk (returned). */
typedef int (*sk_store_reserve_cb)(uint32_t item, uint64_t count, void *arg);

/**
 * sk_store_reserve_foreach - call @p cb for every item with a set, by item
 * id, with its count. The callback may call the store (sk_store.h).
 * @return 0, the callback's non-zero value, or an error of sk_store.h.
 */
int sk_store_reserve_foreach(struct sk_store *st, sk_store_reserve_cb cb, void *arg);

/**
 * sk_store_reserve_drop - delete item @p item's set (durable).
 * @return 0, SK_STORE_UNCHANGED (no set), -EACCES, or an error of sk_store.h.
 */
int sk_store_reserve_drop(struct sk_store *st, uint32_t item);

#endif /* SK_STORE_RESERVE_H */
