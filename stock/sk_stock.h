/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Items and their stock: the part of the engine that decides whether a unit
 * can be sold.
 *
 * An item's units live in three places: a shared @c pool, one @c bucket per
 * lcore (its own cache line), and - for a few nanoseconds - "in transit"
 * between the pool and a bucket. A buy on lcore c takes from bucket[c]
 * (uncontended, so cheap); an empty bucket refills from the pool in a batch
 * that shrinks as the pool shrinks; an empty pool makes the buyer steal from
 * the other buckets. The item is declared sold out only when the pool, every
 * bucket and the transit counter all read zero, and the declaring core
 * re-checks after raising the flag. See docs/stock.md for the protocol and
 * why it never strands a unit.
 *
 * Invariant at any quiescent point (no call in progress):
 *
 *     total + added - removed == pool + sum(bucket) + (sum(sold) - returned)
 *
 * Memory: a struct sk_item holds no pointers, so the item table can live in a
 * DPDK memzone shared by the dataplane (primary) and the control plane
 * (secondary), or in plain memory in unit tests.
 *
 * Thread-safety: every function here is lock-free and may be called
 * concurrently, with one rule: an lcore index is used by one thread at a
 * time (its bucket's @c sold counter has a single writer).
 */
#ifndef SK_STOCK_H
#define SK_STOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_common.h"

/** Highest number of lcores (buckets per item). */
#define SK_MAX_LCORES 64

/** Largest quantity of one buy line. */
#define SK_STOCK_MAX_QTY 1000

/** Largest stock an item may ever hold (total + added), 2^48 units. */
#define SK_STOCK_MAX_UNITS (UINT64_C(1) << 48)

/** Default cap on the units a bucket takes from the pool at once. */
#define SK_STOCK_BATCH_MAX_DEFAULT 256

/**
 * Administrative state of an item slot. Written by the control plane only
 * (compare-and-set; closed is final); the dataplane reads it on every buy.
 */
enum sk_item_state {
	SK_ITEM_FREE = 0, /**< slot unused */
	SK_ITEM_ACTIVE,	  /**< selling within [start_ns, end_ns) */
	SK_ITEM_CLOSED,	  /**< closed by an operator: refuse everything, for good */
	SK_ITEM_PAUSED,	  /**< paused by an operator: refuse buys until resumed */
};

/** One lcore's share of an item: written mostly by its owner. */
struct sk_bucket {
	_Atomic uint64_t avail;	     /**< units ready to sell; owner and thieves CAS it */
	_Atomic uint64_t sold;	     /**< units sold by this lcore; owner writes only */
	_Atomic uint64_t restocking; /**< buys of a cluster item answered "restocking" by
					  this lcore (its demand while empty here); owner
					  writes only */
} sk_cache_aligned;

/**
 * An item on sale. All fields are written by the control plane (or the
 * standalone loader) before the item is published, except the atomics.
 *
 * Layout, one cache line per kind of access (checked below):
 *   line 0     everything a request reads: every lcore keeps it shared in
 *              its cache. Its writes are rare state changes (sold out,
 *              pause, extend, cluster sold out), a handful per sale;
 *   line 1     the pool and the counters of refills, returns, restocks and
 *              removals: written once per refill batch, never read on the
 *              fast path;
 *   bucket[c]  one line per lcore, written by its owner on every buy.
 */
struct sk_item {
	/* Cache line 0: read on every request. */
	uint32_t id;		   /**< item id, non-zero */
	_Atomic uint32_t state;	   /**< enum sk_item_state */
	_Atomic uint32_t sold_out; /**< 1 once pool, buckets and transit read zero */
	uint32_t per_user_limit;   /**< units one user may hold, >= 1 */
	int64_t start_ns;	   /**< sale opens (wall clock, ns since epoch) */
	_Atomic int64_t end_ns;	   /**< sale ends (wall clock); INT64_MAX = never; moved
					later only, by the control plane (extend): read it
					with sk_stock_end_ns() */
	uint64_t price;		   /**< price in minor units (cents) */
	uint64_t dedup_off;	   /**< first slot of this item's dedup slice */
	uint32_t dedup_mask;	   /**< slice size - 1 (a power of two, at most 2^31) */
	uint32_t nlcores;	   /**< buckets in use, 1..SK_MAX_LCORES */
	uint8_t cluster;	   /**< 1: units leased from a cluster pool (docs/cluster.md):
					an empty item is sold out only once @c cluster_sold_out says
					so everywhere; until then buyers are told to retry */
	uint8_t gate;		   /**< 1: a buyer's token must carry the item's gate claim */
	uint8_t reserved_only;	   /**< 1: only users in the item's reservation set may buy */
	uint8_t flags_pad;	   /**< zero */
	_Atomic uint32_t cluster_sold_out; /**< 1: sold out on every appliance (set by the
						control plane from the Redis broadcast) */

	/* Cache line 1: shared counters, touched on refills and returns only. */
	_Atomic uint64_t pool sk_cache_aligned; /**< units not yet in any bucket */
	_Atomic uint64_t transit;		/**< cores moving units pool -> bucket right now */
	_Atomic uint64_t returned;		/**< units given back (timeouts, refunds) */
	_Atomic uint64_t added;			/**< units added by restocks after preheat */
	_Atomic uint64_t removed;		/**< unsold units taken back (removals) */
	uint64_t total;				/**< units put on sale at preheat */
	uint32_t batch_max;			/**< cap of one pool -> bucket refill */

	struct sk_bucket bucket[SK_MAX_LCORES];
};

/* SK_ITEM_LINE0 - true if field @f of struct sk_item lies in its first line. */
#define SK_ITEM_LINE0(f)                                                                           \
	(offsetof(struct sk_item, f) + sizeof(((struct sk_item *)0)->f) <= SK_CACHE_LINE)

_Static_assert(SK_ITEM_LINE0(id) && SK_ITEM_LINE0(state) && SK_ITEM_LINE0(sold_out) &&
		       SK_ITEM_LINE0(per_user_limit) && SK_ITEM_LINE0(start_ns) &&
		       SK_ITEM_LINE0(end_ns) && SK_ITEM_LINE0(price) && SK_ITEM_LINE0(dedup_off) &&
		       SK_ITEM_LINE0(dedup_mask) && SK_ITEM_LINE0(nlcores) &&
		       SK_ITEM_LINE0(cluster) && SK_ITEM_LINE0(gate) &&
		       SK_ITEM_LINE0(reserved_only) && SK_ITEM_LINE0(cluster_sold_out),
	       "what a request reads of an item must fit one cache line");
_Static_assert(offsetof(struct sk_item, pool) == SK_CACHE_LINE &&
		       offsetof(struct sk_item, batch_max) + sizeof(uint32_t) <= 2 * SK_CACHE_LINE,
	       "the pool and its counters: the item's second line, apart from the first");
_Static_assert(offsetof(struct sk_item, bucket) == 2 * SK_CACHE_LINE &&
		       sizeof(struct sk_bucket) == SK_CACHE_LINE,
	       "one cache line per lcore's bucket, none shared with the pool");
_Static_assert(sizeof(struct sk_item) % SK_CACHE_LINE == 0,
	       "items of the table must not share a line");

/** Outcome of a stock operation. */
enum sk_stock_result {
	SK_STOCK_OK = 0,   /**< the units were taken */
	SK_STOCK_SOLD_OUT, /**< no unit is left anywhere */
	SK_STOCK_SHORT,	   /**< some units are left, fewer than asked */
	SK_STOCK_BUSY,	   /**< lost too many races in a row; nothing taken, retry */
};

/** Parameters of sk_stock_init(). */
struct sk_stock_conf {
	uint32_t id;		 /**< non-zero */
	uint32_t per_user_limit; /**< >= 1 */
	int64_t start_ns;
	int64_t end_ns;
	uint64_t price;
	uint64_t total;	    /**< <= SK_STOCK_MAX_UNITS */
	uint32_t nlcores;   /**< 1..SK_MAX_LCORES */
	uint32_t batch_max; /**< 0 = SK_STOCK_BATCH_MAX_DEFAULT */
	bool gate;	    /**< the item's gate claim is required (sk_item::gate) */
	bool reserved_only; /**< reserved users only (sk_item::reserved_only) */
};

/**
 * sk_stock_init - lay out an item with all its units in the pool.
 *
 * Not thread-safe: the item must not be visible to other threads yet.
 * Leaves the dedup slice fields to the caller (sk_shm).
 *
 * @param it    item to initialise (zeroed first)
 * @param conf  its parameters
 * @return 0, or -EINVAL if a parameter is out of range (id 0, limit 0,
 *         nlcores 0 or > SK_MAX_LCORES, total > SK_STOCK_MAX_UNITS,
 *         end_ns <= start_ns).
 */
int sk_stock_init(struct sk_item *it, const struct sk_stock_conf *conf);

/**
 * sk_stock_take - take @p qty units for a buy on lcore @p lcore.
 *
 * Fast path: one CAS on the lcore's own bucket. Slow path: refill from the
 * pool, steal from other buckets, and - only when every place reads zero -
 * declare the item sold out. The work is bounded: a fixed number of rounds
 * over at most nlcores buckets.
 *
 * @param it     the item
 * @param lcore  caller's lcore index, < it->nlcores
 * @param qty    units wanted, 1..SK_STOCK_MAX_QTY
 * @return SK_STOCK_OK (units taken, counted as sold on @p lcore),
 *         SK_STOCK_SOLD_OUT, SK_STOCK_SHORT (fewer than @p qty left, nothing
 *         taken), SK_STOCK_BUSY (raced too often, nothing taken), or
 *         -EINVAL for a bad @p qty or @p lcore.
 */
int sk_stock_take(struct sk_item *it, unsigned lcore, uint32_t qty);

/**
 * sk_stock_untake - undo a successful sk_stock_take() of the same lcore
 * (a later step of the buy failed: cart line, full order ring).
 *
 * The units go back to the lcore's bucket and its sold counter drops; this is
 * not a "return" (nothing was sold). Clears the sold-out flag if it was set.
 *
 * @param it     the item
 * @param lcore  the lcore that took the units
 * @param qty    exactly what that take got
 */
void sk_stock_untake(struct sk_item *it, unsigned lcore, uint32_t qty);

/**
 * sk_stock_return - give back units of a sold order (payment timeout,
 * refund) so they can be sold again.
 *
 * The caller owns the order's record and passes its returned counter; the
 * engine refuses to return more than the order took. Idempotence across
 * callers (two cancellers of one order) is the caller's business: it moves
 * the order's status with a compare-and-set first.
 *
 * @param it         the item
 * @param returned   the order line's running count of returned units
 *                   (updated on success); single writer
 * @param order_qty  units the order line took
 * @param n          units to return now, >= 1
 * @return 0, -EINVAL if @p n is 0, -ERANGE if *returned + n > order_qty.
 */
int sk_stock_return(struct sk_item *it, uint32_t *returned, uint32_t order_qty, uint32_t n);

/**
 * sk_stock_add - restock: add @p n units to the pool and reopen a sold-out
 * item.
 *
 * @return 0, -EINVAL if @p n is 0, -EOVERFLOW if total + added would exceed
 *         SK_STOCK_MAX_UNITS.
 */
int sk_stock_add(struct sk_item *it, uint64_t n);

/**
 * sk_stock_remove - take @p n unsold units back (an operator's removal):
 * out of the pool, then the buckets (with a CAS, as a thief does), all or
 * nothing, and count them in @c removed. Units sold, or in a buyer's hands
 * (a refill or gather in progress), are never taken. When nothing is left
 * afterwards the item is declared sold out at once (with the usual
 * re-scan). The control plane's call: one remover at a time (it holds its
 * write lock); lock-free against every lcore.
 *
 * A remover that finds fewer than @p n units gives back what it gathered
 * (to the pool, clearing the sold-out flag, as a return does): a buyer may
 * meanwhile have been refused "sold out" by a scan that ran while the units
 * were in the remover's hands, which reads like arriving just before a
 * return.
 *
 * @param it      the item
 * @param n       units, 1..SK_STOCK_MAX_UNITS
 * @param unsold  [out] the units found unsold when the call answers
 *                SK_STOCK_SHORT (a snapshot); may be NULL
 * @return SK_STOCK_OK (removed), SK_STOCK_SHORT (fewer than @p n unsold:
 *         nothing removed), SK_STOCK_BUSY (enough units, but the lcores
 *         moved them faster than the remover could gather: nothing removed,
 *         retry), or -EINVAL (@p n 0 or too large).
 */
int sk_stock_remove(struct sk_item *it, uint64_t n, uint64_t *unsold);

/**
 * sk_stock_unremove - give back @p n removed units (a removal the store
 * never recorded: the control plane died between the item table and the
 * store): removed -= n, the units to the pool, the sold-out flag cleared.
 * @return 0, -EINVAL (@p n 0), -ERANGE (@p n above @c removed).
 */
int sk_stock_unremove(struct sk_item *it, uint64_t n);

/**
 * sk_stock_pause - pause (@p paused true: state active -> paused) or resume
 * (paused -> active) the item, by compare-and-set. The dataplane reads the
 * state on every buy: one relaxed load, the buys after it are refused.
 * A buy that read "active" just before may still complete; its order's sale
 * time is before the pause.
 * @return 0 (the item is in the asked state, now or already), -EPERM (the
 *         item is closed or free: nothing changed).
 */
int sk_stock_pause(struct sk_item *it, bool paused);

/**
 * sk_stock_end_ns - the sale's end (wall clock, INT64_MAX = never): one
 * relaxed load, for the hot path.
 */
static inline int64_t
sk_stock_end_ns(const struct sk_item *it)
{
	return atomic_load_explicit(&((struct sk_item *)it)->end_ns, memory_order_relaxed);
}

/**
 * sk_stock_set_end - move the sale's end to @p end_ns (extend); the
 * dataplane sees it on its next read. The control plane's call.
 */
static inline void
sk_stock_set_end(struct sk_item *it, int64_t end_ns)
{
	atomic_store_explicit(&it->end_ns, end_ns, memory_order_relaxed);
}

/**
 * sk_stock_remaining - units not yet sold (pool + every bucket). A snapshot:
 * exact only when no call is in progress.
 */
uint64_t sk_stock_remaining(const struct sk_item *it);

/** sk_stock_sold - units sold minus units returned (snapshot). */
uint64_t sk_stock_sold(const struct sk_item *it);

/**
 * sk_stock_is_sold_out - true if the item refuses every buy because no unit
 * is left. One relaxed load: the hot check of the 99% case.
 */
static inline bool
sk_stock_is_sold_out(const struct sk_item *it)
{
	return atomic_load_explicit(&it->sold_out, memory_order_relaxed) != 0;
}

/**
 * sk_stock_sold_out_everywhere - for an item that reads sold out: true if
 * no appliance has a unit left either (always, for an item of one
 * appliance), false if units may still come from the cluster pool. One
 * relaxed load.
 */
static inline bool
sk_stock_sold_out_everywhere(const struct sk_item *it)
{
	return it->cluster == 0 ||
	       atomic_load_explicit(&it->cluster_sold_out, memory_order_relaxed) != 0;
}

/**
 * sk_stock_count_restocking - lcore @p lcore answered a buy of cluster item
 * @p it "restocking" (the demand the control plane leases for). Owner-only
 * relaxed add: no contention, no atomic read-modify-write.
 */
static inline void
sk_stock_count_restocking(struct sk_item *it, unsigned lcore)
{
	_Atomic uint64_t *c = &it->bucket[lcore].restocking;

	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/**
 * sk_stock_restocking - the "restocking" answers of @p it over every lcore
 * (a snapshot). Any thread.
 */
uint64_t sk_stock_restocking(const struct sk_item *it);

/**
 * sk_stock_check - check the accounting invariant of a quiescent item.
 * @return true if total + added - removed == pool + sum(bucket) + sold -
 *         returned and the sold-out flag is set only when no unit is left.
 */
bool sk_stock_check(const struct sk_item *it);

#endif /* SK_STOCK_H */
