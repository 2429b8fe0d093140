/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The shared-memory arena: the one block that the dataplane creates and the
 * control plane maps. It holds, at fixed offsets recorded in its header:
 *
 *   - the item table (struct sk_item[max_items]) and an id -> index hash,
 *   - the dedup slot array, handed out to items in power-of-two slices,
 *   - the order status table (nlcores << status_bits bytes),
 *
 * and, in the header itself, one block per lcore of each side: the control
 * plane's progress (struct sk_shm_progress) and the dataplane's request
 * counters and buy latency histogram (struct sk_shm_lcore_stats), which the
 * control plane turns into Prometheus metrics.
 *
 * Nothing in the arena is a pointer, so it means the same in every process
 * whatever address it is mapped at. In the dataplane the arena is the
 * memzone SK_SHM_MEMZONE; unit tests use plain memory. What both processes
 * must agree on (the header, the blocks, the outcome numbering, the layout
 * fingerprint) is in sk_shm_abi.h; this header lays the arena out and
 * finds things in it.
 *
 * Thread-safety: sk_shm_init() and the item adders (prepare, publish, add)
 * are for one writer at a time: the dataplane during start-up (before its
 * order rings exist), then the control plane's preheat. Items become visible
 * to readers atomically, fully initialised. Lookups are lock-free and may run
 * on any thread concurrently with one adder.
 */
#ifndef SK_SHM_H
#define SK_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_dedup.h"
#include "sk_order.h"
#include "sk_shm_abi.h"
#include "sk_stock.h"

/** Smallest dedup slice given to an item. */
#define SK_SHM_DEDUP_MIN 1024

/** Sizes of an arena. */
struct sk_shm_conf {
	uint32_t nlcores;     /**< dataplane lcores, 1..SK_MAX_LCORES */
	uint32_t max_items;   /**< item slots, >= 1 */
	uint64_t dedup_slots; /**< dedup slots shared by all items, >= SK_SHM_DEDUP_MIN */
	uint32_t status_bits; /**< log2 of the status slots per lcore, 10..SK_ORDER_SEQ_BITS */
	uint32_t epoch;	      /**< this run's order-id epoch, unix s: sk_order_epoch_valid() */
	uint32_t member;      /**< cluster member number, 0..SK_ORDER_MEMBER_MAX (0: standalone) */
};

/**
 * sk_shm_size - bytes needed for an arena of @p conf.
 * @return the size, or 0 if @p conf is invalid or the size overflows.
 */
size_t sk_shm_size(const struct sk_shm_conf *conf);

/**
 * sk_shm_init - lay out an empty arena in @p mem (zeroed by this call), its
 * header stamped with SK_SHM_MAGIC, SK_SHM_VERSION and this build's
 * sk_shm_abi_fingerprint().
 * @param mem  at least sk_shm_size(conf) bytes, 64-byte aligned
 * @param len  bytes at @p mem
 * @return the arena, or NULL if @p conf is invalid or @p len too small.
 */
struct sk_shm *sk_shm_init(void *mem, size_t len, const struct sk_shm_conf *conf);

/**
 * sk_shm_attach - check that @p mem holds an arena made by a build of the
 * same layout (the control plane, before it reads anything else).
 *
 * Checks, in this order: the magic, the ABI version, the layout fingerprint
 * (sk_shm_abi_fingerprint()), the lcore count, and that the arena's size
 * fits in @p len. Reads the header only; no allocation.
 *
 * @param mem     the mapped arena (not owned)
 * @param len     bytes mapped at @p mem
 * @param err     where to write one line saying why on failure (may be
 *                NULL); a version or fingerprint mismatch names both
 *                values and says "built from another version: rebuild both"
 * @param errlen  size of @p err
 * @return the arena, or NULL if any check fails.
 */
struct sk_shm *sk_shm_attach(void *mem, size_t len, char *err, size_t errlen);

/**
 * sk_shm_item_prepare - lay out a new item and its dedup slice in the next
 * free item slot without publishing it: readers cannot find it yet, so the
 * caller may seed it (restocks, sk_recover_item()) single-threaded, then
 * sk_shm_item_publish() it. Nothing is reserved: an item that is never
 * published is simply overwritten by the next prepare.
 *
 * @param shm    the arena
 * @param conf   the item (conf->nlcores is forced to the arena's)
 * @param dedup  slots for its dedup slice, rounded up to a power of two;
 *               0 = automatic: 8 x total, at least SK_SHM_DEDUP_MIN, at most
 *               what is left
 * @param out    [out] the item, set on success only
 * @return 0, -EEXIST (id already published), -ENOSPC (no item slot, hash
 *         slot or not enough dedup slots left), -EINVAL (bad item
 *         parameters).
 */
int sk_shm_item_prepare(struct sk_shm *shm, const struct sk_stock_conf *conf, uint64_t dedup,
			struct sk_item **out);

/**
 * sk_shm_item_publish - make an item from sk_shm_item_prepare() visible to
 * every reader, fully initialised (release stores), and reserve its slot
 * and dedup slice for good. No other add, prepare or publish may have run
 * since its prepare.
 * @return 0, -EINVAL (@p it is not the prepared slot: another item was
 *         added in between), -ENOSPC (the id hash filled in between).
 */
int sk_shm_item_publish(struct sk_shm *shm, struct sk_item *it);

/**
 * sk_shm_item_add - sk_shm_item_prepare() then sk_shm_item_publish(): a new
 * item, visible at once with all its units in the pool.
 * @param out  [out] the item (may be NULL)
 * @return as sk_shm_item_prepare().
 */
int sk_shm_item_add(struct sk_shm *shm, const struct sk_stock_conf *conf, uint64_t dedup,
		    struct sk_item **out);

/** sk_shm_item_find - the item with id @p id, or NULL. Lock-free, O(1) expected. */
struct sk_item *sk_shm_item_find(const struct sk_shm *shm, uint32_t id);

/** sk_shm_item_at - the @p i-th published item (0 <= i < nitems), or NULL. */
struct sk_item *sk_shm_item_at(const struct sk_shm *shm, uint32_t i);

/** sk_shm_dedup - fill @p d with the dedup slice of @p it. */
void sk_shm_dedup(const struct sk_shm *shm, const struct sk_item *it, struct sk_dedup *d);

/** sk_shm_status - fill @p st with a view of the arena's status table. */
void sk_shm_status(const struct sk_shm *shm, struct sk_status *st);

/**
 * sk_shm_settle - control plane: every order of @p lcore with an id below
 * @p id is now confirmed or failed (pass the last settled order's id + 1).
 * Monotonic: a lower value than the current one is ignored. Single writer
 * (the control plane's drain thread).
 */
static inline void
sk_shm_settle(struct sk_shm *shm, unsigned lcore, uint64_t id)
{
	_Atomic uint64_t *s = &shm->progress[lcore].settled;

	if (id > atomic_load_explicit(s, memory_order_relaxed))
		atomic_store_explicit(s, id, memory_order_release);
}

/**
 * sk_shm_settled - the first order id of @p lcore not yet settled; orders
 * below it are durable or failed (their status is in the status table while
 * their slot is not reused, in the store anyway).
 */
static inline uint64_t
sk_shm_settled(const struct sk_shm *shm, unsigned lcore)
{
	return atomic_load_explicit(&((struct sk_shm *)shm)->progress[lcore].settled,
				    memory_order_acquire);
}

/** What the arena knows of an order id of an earlier run (sk_shm_earlier()). */
enum sk_shm_earlier {
	SK_SHM_EARLIER_UNKNOWN =
		0,	       /**< not of an earlier run of this member, or older than the marks */
	SK_SHM_EARLIER_STORED, /**< at or below its group's mark: stored (or failed) */
	SK_SHM_EARLIER_LOST,   /**< above it (or no order of its group stored): never
				    stored, its unit sold again - the buyer may buy again */
};

/**
 * sk_shm_set_marks - dataplane, at start before any lcore sells: the
 * earlier runs' high-water marks (sk_recover_marks()), @p n ascending ids of
 * this arena's member; @p more: older groups were left out.
 * @return 0, or -EINVAL (too many, not ascending, another member's).
 */
int sk_shm_set_marks(struct sk_shm *shm, const uint64_t *marks, uint32_t n, bool more);

/**
 * sk_shm_earlier - whether order @p id of an earlier run (an epoch below
 * the arena's) reached the store, by the marks: a binary search, no
 * syscall, thread-safe once the marks are set.
 */
enum sk_shm_earlier sk_shm_earlier(const struct sk_shm *shm, uint64_t id);

/**
 * sk_shm_lstats - the stats block of dataplane lcore @p lcore
 * (< SK_MAX_LCORES; blocks at and above shm->nlcores stay zero).
 */
static inline struct sk_shm_lcore_stats *
sk_shm_lstats(struct sk_shm *shm, unsigned lcore)
{
	return &shm->lstats[lcore];
}

/**
 * sk_shm_stat_add - add @p n to counter @p c of a stats block. Only the
 * block's writer may call it: a relaxed load and store, no locked
 * instruction, so a reader in another process never sees a torn value.
 */
static inline void
sk_shm_stat_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/** sk_shm_stat_read - counter @p c of a stats block (relaxed load). Any thread. */
static inline uint64_t
sk_shm_stat_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/**
 * sk_shm_lat_bucket - the latency bucket of @p ns: the first b with
 * ns <= sk_shm_lat_bounds_ns[b], or SK_SHM_LAT_BUCKETS - 1 (+Inf). At most
 * SK_SHM_LAT_BUCKETS - 1 comparisons.
 */
static inline unsigned
sk_shm_lat_bucket(uint64_t ns)
{
	return sk_bucket_of(sk_shm_lat_bounds_ns, SK_SHM_LAT_BUCKETS - 1, ns);
}

/**
 * sk_shm_lat_observe - count one buy answer that took @p ns in @p s. The
 * block's writer only (see sk_shm_stat_add()).
 */
static inline void
sk_shm_lat_observe(struct sk_shm_lcore_stats *s, uint64_t ns)
{
	sk_shm_stat_add(&s->lat_bucket[sk_shm_lat_bucket(ns)], 1);
	sk_shm_stat_add(&s->lat_sum_ns, ns);
}

#endif /* SK_SHM_H */
