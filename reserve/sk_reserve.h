/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Reservation sets: per item, the user ids allowed to buy it when the item
 * is reserved_only (sk_item::reserved_only). One block of shared memory
 * (the DPDK memzone SK_RESERVE_MEMZONE, created by the dataplane at start,
 * attached by the control plane; unit tests use plain memory).
 *
 * Layout. A header (directory, allocator, per-lcore acks) and a heap. Each
 * item with a set has one directory entry, found by open addressing on the
 * item id, whose descriptor names its table in the heap: an open-addressing
 * table of 8-byte user ids (0: empty slot), at most half full, probed
 * linearly from a multiply-shift position of the mixed id. A lookup is the
 * directory line plus, in the common case, one line of the table.
 *
 * Writer and readers. The one writer (the control plane, under its own
 * lock) inserts into a published table with atomic 8-byte stores (a reader
 * sees a slot either empty or whole; ids are never removed from a
 * published table). A table that must grow is rebuilt beside it in the
 * heap and published by one release store of the descriptor; the writer
 * then raises the block's generation and retires the old table's space
 * with that generation. Each lcore loads the generation once per burst
 * (relaxed, sk_reserve_changed()) and acknowledges it (sk_reserve_ack())
 * between bursts, when it holds no table pointer: the retired space is
 * reused only once every lcore acknowledged a generation at or above the
 * retirement's (sk_reserve_reclaim()) - the pattern of sk_live.h.
 *
 * Memory: 8 bytes per slot, at most half the slots used: 16 bytes per user
 * for a set loaded whole (sk_reserve_load()); a set grown by batches is
 * rebuilt at a third full (24 bytes per user) and fills back to half.
 *
 * Thread-safety: one writer at a time (the caller's lock); any number of
 * readers (sk_reserve_has(), sk_reserve_prefetch(), sk_reserve_changed(),
 * sk_reserve_ack() for the reader's own lcore). Nothing here allocates,
 * locks or makes a system call.
 */
#ifndef SK_RESERVE_H
#define SK_RESERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Name of the memzone that holds the block. */
#define SK_RESERVE_MEMZONE "sk_reserve"

/** Magic and version of the block's layout (checked by sk_reserve_attach()). */
#define SK_RESERVE_MAGIC   0x5652534552534b53ULL
#define SK_RESERVE_VERSION 1u

/** Most lcores a block serves. */
#define SK_RESERVE_LCORES_MAX 128u

/** Directory entries (a power of two); at most half hold an item. */
#define SK_RESERVE_DIR	     4096u
#define SK_RESERVE_ITEMS_MAX (SK_RESERVE_DIR / 2)

/** Smallest table, in slots (one cache line is 8 slots). */
#define SK_RESERVE_SLOTS_MIN 64u

/** Largest table, in slots (the descriptor holds 32 bits). */
#define SK_RESERVE_SLOTS_MAX 0xfffffff8u

/** Free or retired extents of the heap the allocator tracks. */
#define SK_RESERVE_EXTENTS (SK_RESERVE_DIR + 64u)

/** One item's entry. @c key and @c tab are read by lcores. */
struct sk_reserve_dirent {
	_Atomic uint64_t key; /**< item id + 1; 0: free (set once, never cleared) */
	_Atomic uint64_t tab; /**< (heap offset / 64) << 32 | slots; 0: empty set */
	uint64_t users;	      /**< ids in the set (writer's) */
	uint64_t pad;
};

/** A run of heap bytes: free, or retired at generation @c gen. */
struct sk_reserve_ext {
	uint64_t off, len, gen;
};

/** What one lcore publishes: the generation it runs on. */
struct sk_reserve_lcore {
	_Atomic uint64_t gen; /**< written by the lcore (release), read by the writer */
} sk_cache_aligned;

/** The block's header (the heap follows it). Writer's fields unless noted. */
struct sk_reserve_zone {
	uint64_t magic;
	uint32_t version;
	uint32_t nlcores;
	uint64_t size;			       /**< bytes of the whole block */
	uint64_t heap_off, heap_len;	       /**< the heap, from the block's start */
	uint64_t items;			       /**< directory entries in use */
	uint32_t nfree, nretired;	       /**< extents in free[] and retired[] */
	_Atomic uint64_t gen sk_cache_aligned; /**< the published generation (lcores read) */
	struct sk_reserve_lcore lcore[SK_RESERVE_LCORES_MAX];
	struct sk_reserve_dirent dir[SK_RESERVE_DIR];	   /**< lcores read */
	struct sk_reserve_ext free[SK_RESERVE_EXTENTS];	   /**< by offset, coalesced */
	struct sk_reserve_ext retired[SK_RESERVE_EXTENTS]; /**< in retirement order */
} sk_cache_aligned;

/**
 * sk_reserve_size - bytes of a block with a heap of @p heap_bytes (rounded
 * up to a cache line).
 * @return the size, or 0 on overflow.
 */
size_t sk_reserve_size(uint64_t heap_bytes);

/**
 * sk_reserve_init - lay out an empty block in @p mem (@p size bytes,
 * 64-byte aligned, at least sizeof(struct sk_reserve_zone)); the heap is
 * the rest. Every lcore starts on generation 1.
 * @return the block (== @p mem), or NULL: bad argument, @p size too small,
 *         @p nlcores 0 or above SK_RESERVE_LCORES_MAX.
 */
struct sk_reserve_zone *sk_reserve_init(void *mem, size_t size, uint32_t nlcores);

/**
 * sk_reserve_attach - check a block made by sk_reserve_init() (another
 * process).
 * @return the block, or NULL with a reason in @p err.
 */
struct sk_reserve_zone *sk_reserve_attach(void *mem, size_t size, char *err, size_t errlen);

/**
 * sk_reserve_add - add @p n user ids to item @p item's set (the writer).
 * Ids already in the set, or repeated in @p users, are counted once.
 * Growth builds the bigger table beside the old one and publishes it; the
 * old space is retired (sk_reserve_reclaim()).
 * @param added [out] ids new to the set, may be NULL
 * @return 0; -EINVAL (a user id 0, or @p n above SK_RESERVE_SLOTS_MAX / 3:
 *         nothing added); -ENOSPC (no room in the directory or the heap,
 *         even once retired space is reclaimed: nothing added); -EAGAIN
 *         (no room until the lcores acknowledge the latest generation:
 *         nothing added, retry after they did, sk_reserve_quiescent()).
 */
int sk_reserve_add(struct sk_reserve_zone *z, uint32_t item, const uint64_t *users, size_t n,
		   uint64_t *added);

/**
 * sk_reserve_load - make item @p item's set exactly @p users (@p n ids,
 * duplicates counted once), in a table built beside the current one and
 * sized at half full; publishes it, retires the old one. @p n 0 empties the
 * set. The loader of a set from the store.
 * @return 0, or -EINVAL, -ENOSPC, -EAGAIN as sk_reserve_add() (the set is
 *         then unchanged).
 */
int sk_reserve_load(struct sk_reserve_zone *z, uint32_t item, const uint64_t *users, size_t n);

/**
 * sk_reserve_count - ids in item @p item's set (0: none). Writer's view.
 */
uint64_t sk_reserve_count(const struct sk_reserve_zone *z, uint32_t item);

/**
 * sk_reserve_table_bytes - heap bytes of item @p item's table (0: none).
 */
uint64_t sk_reserve_table_bytes(const struct sk_reserve_zone *z, uint32_t item);

/**
 * sk_reserve_quiescent - true when every lcore acknowledged the published
 * generation (every retired extent can then be reclaimed).
 */
bool sk_reserve_quiescent(const struct sk_reserve_zone *z);

/**
 * sk_reserve_reclaim - return to the heap the retired extents every lcore
 * has moved past. The writer calls it; sk_reserve_add() and
 * sk_reserve_load() call it too.
 * @return the bytes still retired afterwards.
 */
uint64_t sk_reserve_reclaim(struct sk_reserve_zone *z);

/**
 * sk_reserve_recover - a new writer's first step on a block another writer
 * left (possibly killed in the middle of a change): the allocator rebuilt
 * from the published tables alone - every other heap byte retired at a new
 * generation, so it is reused only once every lcore moved on - and each
 * set's count recounted from its table. Tables and lookups are untouched.
 */
void sk_reserve_recover(struct sk_reserve_zone *z);

/** sk_reserve_free_bytes - heap bytes free now (retired ones not counted). */
uint64_t sk_reserve_free_bytes(const struct sk_reserve_zone *z);

/* ------------------------------------------------------------ readers */

/** sk_reserve_mix - the mixer of ids (murmur3's finaliser): every bit counts. */
static inline uint64_t
sk_reserve_mix(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ULL;
	v ^= v >> 33;
	return v;
}

/** sk_reserve_dir_find - item @p item's directory entry, or NULL. */
static inline const struct sk_reserve_dirent *
sk_reserve_dir_find(const struct sk_reserve_zone *z, uint32_t item)
{
	uint64_t key = (uint64_t)item + 1;
	uint32_t i = (uint32_t)sk_reserve_mix(key) & (SK_RESERVE_DIR - 1);

	for (uint32_t probes = 0; probes < SK_RESERVE_DIR; probes++) {
		const struct sk_reserve_dirent *d = &z->dir[i];
		uint64_t k = atomic_load_explicit(&((struct sk_reserve_dirent *)d)->key,
						  memory_order_acquire);
		if (k == key)
			return d;
		if (k == 0)
			return NULL;
		i = (i + 1) & (SK_RESERVE_DIR - 1);
	}
	return NULL;
}

/**
 * sk_reserve_first - the table of directory entry @p d (NULL: an empty set)
 * and, in *@p slots and *@p at, its size and the first slot a probe for
 * @p user reads: the one home of the slot rule of sk_reserve_has() and
 * sk_reserve_prefetch().
 */
static inline const _Atomic uint64_t *
sk_reserve_first(const struct sk_reserve_zone *z, const struct sk_reserve_dirent *d, uint64_t user,
		 uint64_t *slots, uint64_t *at)
{
	uint64_t t =
		atomic_load_explicit(&((struct sk_reserve_dirent *)d)->tab, memory_order_acquire);

	if (t == 0)
		return NULL;
	*slots = t & 0xffffffffu;
	*at = (uint64_t)(((unsigned __int128)sk_reserve_mix(user) * *slots) >> 64);
	return (const _Atomic uint64_t *)((const char *)z + z->heap_off + (t >> 32) * 64);
}

/**
 * sk_reserve_has - true if @p user is in item @p item's set. Lock-free, no
 * store; an id added concurrently may or may not be seen yet.
 */
static inline bool
sk_reserve_has(const struct sk_reserve_zone *z, uint32_t item, uint64_t user)
{
	const struct sk_reserve_dirent *d = sk_reserve_dir_find(z, item);
	uint64_t slots = 0, i = 0;

	if (d == NULL || user == 0)
		return false;
	const _Atomic uint64_t *s = sk_reserve_first(z, d, user, &slots, &i);
	if (s == NULL)
		return false;
	/* At most half full: an empty slot ends every probe long before. */
	for (uint64_t n = 0; n < slots; n++) {
		uint64_t v = atomic_load_explicit((_Atomic uint64_t *)&s[i], memory_order_relaxed);
		if (v == user)
			return true;
		if (v == 0)
			return false;
		if (++i == slots)
			i = 0;
	}
	return false;
}

/**
 * sk_reserve_prefetch - start loading, without waiting for it, the table
 * line a later sk_reserve_has(@p z, @p item, @p user) reads first, so that
 * the lookup finds it cached: a set of millions of users is far larger
 * than the cache, and its lookup is otherwise one memory miss. The caller
 * issues it as soon as it knows the item and a user, then does other work
 * (the token's HMAC) before the lookup.
 *
 * A hint only: it changes no result. @p user may be a claim not yet
 * verified (a token's "sub" read without its signature): the decision is
 * still sk_reserve_has() on the verified user. It reads the item's
 * directory entry (cached in the common case: one per item) and issues a
 * prefetch of one table line; no store, no fault (a prefetch of any
 * address is harmless), no allocation, lock or system call. An unknown
 * item, an empty set or a @p user of 0 prefetch nothing.
 *
 * Thread-safety: a reader, as sk_reserve_has(); the table it names may be
 * replaced at once (the line is then merely useless).
 */
static inline void
sk_reserve_prefetch(const struct sk_reserve_zone *z, uint32_t item, uint64_t user)
{
	const struct sk_reserve_dirent *d = sk_reserve_dir_find(z, item);
	uint64_t slots = 0, i = 0;

	if (d == NULL || user == 0)
		return;
	const _Atomic uint64_t *s = sk_reserve_first(z, d, user, &slots, &i);
	if (s != NULL)
		__builtin_prefetch((const void *)&s[i], 0, 3);
}

/**
 * sk_reserve_changed - the lcore's per-burst check: the published
 * generation if it differs from @p mine (with an acquire fence: the tables
 * it published may be read), else 0. One relaxed load when nothing changed.
 */
static inline uint64_t
sk_reserve_changed(const struct sk_reserve_zone *z, uint64_t mine)
{
	uint64_t g =
		atomic_load_explicit(&((struct sk_reserve_zone *)z)->gen, memory_order_relaxed);

	if (sk_likely(g == mine))
		return 0;
	atomic_thread_fence(memory_order_acquire);
	return g;
}

/**
 * sk_reserve_ack - lcore @p lcore holds no table pointer of a generation
 * older than @p gen any more (release).
 */
static inline void
sk_reserve_ack(struct sk_reserve_zone *z, uint32_t lcore, uint64_t gen)
{
	atomic_store_explicit(&z->lcore[lcore].gen, gen, memory_order_release);
}

#ifdef __cplusplus
}
#endif

#endif /* SK_RESERVE_H */
