/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The LMDB map of the order store, grown online (docs/storage.md, "The map
 * grows online").
 *
 * The map is the most the data file may reach; a write that needs more
 * fails with -ENOSPC (MDB_MAP_FULL). The control plane measures the map
 * (sk_store_map_info()), decides (sk_store_map_target(), a pure function)
 * and grows it (sk_store_map_grow()) between two group commits, before it
 * is full.
 *
 * Threads: mdb_env_set_mapsize() unmaps the memory every transaction of
 * this process reads, so sk_store_map_grow() waits until no transaction of
 * this handle is open (every store call holds the handle's map lock shared
 * for its transaction; the grow takes it exclusive, waiting at most the
 * time it is given). While it waits, new store calls wait for it, except
 * on a thread already inside one (a walk's callback), which goes ahead:
 * a stream of reads cannot starve a grow, and a callback cannot deadlock
 * with it. Other processes (seckillctl, the
 * dataplane's rebuild, the MySQL writer's verify) adopt the new size at
 * their next transaction: LMDB answers MDB_MAP_RESIZED once the data
 * outgrew their map, and the store takes the new size and begins again.
 */
#ifndef SK_STORE_MAP_H
#define SK_STORE_MAP_H

#include <stdint.h>

#include "sk_store.h"

/** Default threshold of sk_store_map_policy.grow_at_pct. */
#define SK_STORE_MAP_GROW_AT_DEFAULT 80

/** The map's size, its use, and the room left on the store's file system. */
struct sk_store_map_info {
	uint64_t map_size;   /**< bytes the data file may reach now */
	uint64_t used_bytes; /**< (last page + 1) x page size */
	uint64_t disk_free;  /**< bytes an unprivileged writer may still use (statvfs) */
	uint32_t page_size;  /**< bytes */
};

/** When and how much the map grows. An all-zero policy is the default. */
struct sk_store_map_policy {
	/** grow once used_bytes reaches this percent of the map; 0 = default (80) */
	uint32_t grow_at_pct;
	/** bytes added by a grow; 0 = double the map */
	uint64_t step;
	/** the largest map; 0 = no cap but the file system's free space */
	uint64_t max_size;
};

/**
 * sk_store_map_info - the map's size and use (no transaction: LMDB's
 * environment info) and the free bytes of the store's file system
 * (statvfs(), f_bavail x f_frsize).
 * @param st   an open store (read-only or not)
 * @param mi   [out] filled on success
 * @return 0, or -errno of statvfs(), or an LMDB error as a negative errno.
 *         Any thread.
 */
int sk_store_map_info(struct sk_store *st, struct sk_store_map_info *mi);

/**
 * sk_store_map_target - the size the map should grow to now, or 0 when it
 * need not or cannot grow.
 *
 * Below grow_at_pct percent used: 0. Else the map plus the step (or
 * doubled), capped by max_size and by what the file can still reach on its
 * file system (used_bytes + disk_free), rounded down to a whole page; 0 if
 * that is not above the map (the cap is reached: a full map then fails
 * writes as before). Pure: no store, no clock.
 * @param p   the policy (NULL: the defaults)
 * @param mi  a measure from sk_store_map_info()
 * @return bytes, or 0.
 */
uint64_t sk_store_map_target(const struct sk_store_map_policy *p,
			     const struct sk_store_map_info *mi);

/**
 * sk_store_map_grow - set the map of @p st to @p size bytes
 * (mdb_env_set_mapsize()), once no transaction of this handle is open.
 *
 * Waits at most @p wait_ns for the open transactions (reads of other
 * threads, a write in progress) to end; new ones wait for the grow, whose
 * remap itself takes well under a millisecond (an munmap and an mmap). The new
 * size reaches the file's meta page with the next commit, and other
 * processes with their next transaction. Must not be called with a
 * transaction of this handle open on the calling thread (e.g. from a walk's
 * callback): it would wait for itself until -EBUSY.
 * @param st       a store opened for writing
 * @param size     the new map size in bytes; above the data in use
 * @param wait_ns  longest wait for the open transactions; 0 = try once
 * @param held_ns  [out] how long new store calls of this handle were held
 *                 back (the wait for the open ones plus the remap); may be
 *                 NULL
 * @return 0; -EBUSY (transactions still open after @p wait_ns: try again
 *         later; nothing changed), -EINVAL (NULL store, a read-only store,
 *         a size not above the data in use), or an LMDB error.
 *         Any thread, not inside a store call.
 */
int sk_store_map_grow(struct sk_store *st, uint64_t size, int64_t wait_ns, int64_t *held_ns);

#endif /* SK_STORE_MAP_H */
