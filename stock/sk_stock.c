/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-core stock buckets with a shared pool, stealing, and a sold-out
 * declaration that cannot strand units.
 *
 * All atomics are sequentially consistent except the owner-only sold counter
 * and the hot-path sold-out load: the protocol's argument (docs/stock.md) is
 * made for a single total order of the pool, bucket, transit and flag
 * operations, and on x86 a seq_cst CAS costs the same as any other locked
 * instruction.
 */
#include <errno.h>
#include <string.h>

#include "sk_stock.h"

/* Rounds of refill/steal/declare before giving up with SK_STOCK_BUSY. */
#define SK_STOCK_ROUNDS 8
/* CAS attempts on one counter before counting the round as lost. */
#define SK_STOCK_CAS_TRIES 64

#define ld(p)	     atomic_load(p)
#define cas(p, e, d) atomic_compare_exchange_weak(p, e, d)
#define fadd(p, v)   atomic_fetch_add(p, v)
#define fsub(p, v)   atomic_fetch_sub(p, v)

/*
 * Test hooks: a unit test compiles this file with SK_STOCK_TEST_HOOKS to
 * stop a core inside the protocol's windows and run another core's steps
 * there, deterministically. Release builds have no hook.
 */
#ifdef SK_STOCK_TEST_HOOKS
#include "sk_stock_test.h"
sk_stock_test_hook_fn *sk_stock_test_hook;
#define TEST_HOOK(it, lcore, point)                                                                \
	do {                                                                                       \
		if (sk_stock_test_hook != NULL)                                                    \
			sk_stock_test_hook(it, lcore, point);                                      \
	} while (0)
#else
#define TEST_HOOK(it, lcore, point) ((void)0)
#endif

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

int
sk_stock_init(struct sk_item *it, const struct sk_stock_conf *conf)
{
	if (conf->id == 0 || conf->per_user_limit == 0 || conf->nlcores == 0 ||
	    conf->nlcores > SK_MAX_LCORES || conf->total > SK_STOCK_MAX_UNITS ||
	    conf->end_ns <= conf->start_ns)
		return -EINVAL;

	memset(it, 0, sizeof(*it));
	it->id = conf->id;
	it->per_user_limit = conf->per_user_limit;
	it->start_ns = conf->start_ns;
	atomic_init(&it->end_ns, conf->end_ns);
	it->price = conf->price;
	it->total = conf->total;
	it->nlcores = conf->nlcores;
	it->gate = conf->gate;
	it->reserved_only = conf->reserved_only;
	it->batch_max = conf->batch_max ? conf->batch_max : SK_STOCK_BATCH_MAX_DEFAULT;
	atomic_init(&it->pool, conf->total);
	atomic_init(&it->sold_out, conf->total == 0);
	atomic_init(&it->state, SK_ITEM_ACTIVE);
	return 0;
}

/* sold is written by its owner only: a plain load and store suffice. */
static inline void
sold_add(struct sk_bucket *b, int64_t delta)
{
	uint64_t v = atomic_load_explicit(&b->sold, memory_order_relaxed);
	atomic_store_explicit(&b->sold, v + (uint64_t)delta, memory_order_relaxed);
}

/*
 * clear_sold_out - called after units became visible somewhere (credit to a
 * bucket, return or restock to the pool). A flag that was raised before the
 * units appeared must not survive them.
 */
static inline void
clear_sold_out(struct sk_item *it)
{
	if (ld(&it->sold_out))
		atomic_store(&it->sold_out, 0);
}

/*
 * grab - take up to @want units from counter @c. Returns what was taken
 * (0 if it read zero or lost SK_STOCK_CAS_TRIES races).
 */
static uint64_t
grab(_Atomic uint64_t *c, uint64_t want)
{
	uint64_t v = ld(c);

	for (int i = 0; v != 0 && i < SK_STOCK_CAS_TRIES; i++) {
		uint64_t t = v < want ? v : want;
		if (cas(c, &v, v - t))
			return t;
	}
	return 0;
}

/*
 * refill_batch - how much to move from a pool holding @p units into one
 * bucket: shrinks with the pool so that the last units are not all parked
 * on one core, never less than the @need of the current buy.
 */
static inline uint64_t
refill_batch(const struct sk_item *it, uint64_t p, uint64_t need)
{
	uint64_t b = p / (2 * (uint64_t)it->nlcores);

	if (b > it->batch_max)
		b = it->batch_max;
	if (b < need)
		b = need;
	return b < p ? b : p;
}

/* nothing_to_gather - the pool and every bucket read zero (transit not read). */
static bool
nothing_to_gather(const struct sk_item *it)
{
	if (ld(&it->pool) != 0)
		return false;
	for (uint32_t i = 0; i < it->nlcores; i++)
		if (ld(&it->bucket[i].avail) != 0)
			return false;
	return true;
}

/*
 * everything_empty - one scan of pool, buckets and transit. The pool and
 * buckets are read before transit: a unit that left the pool after our pool
 * read is either still in its mover's hands (transit > 0 when we read it)
 * or already back in a bucket. A unit can also move from a place not yet
 * read to one already read and leave transit before we read it; its mover
 * then clears the flag before leaving transit, which declare_sold_out()
 * checks with a last load of the flag (docs/stock-model.md, finding 1).
 */
static bool
everything_empty(const struct sk_item *it)
{
	return nothing_to_gather(it) && ld(&it->transit) == 0;
}

/*
 * declare_sold_out - raise the flag if everything reads empty, then look
 * again: anything that reappeared in between clears it.
 * Returns true if the item is (still) sold out.
 */
static bool
declare_sold_out(struct sk_item *it)
{
	if (!everything_empty(it))
		return false;
	atomic_store(&it->sold_out, 1);
	TEST_HOOK(it, 0, SK_STOCK_HOOK_FLAG_RAISED);
	if (everything_empty(it))
		/* A mover lowers the flag before it leaves transit (gather()):
		 * if the flag is down, a unit moved behind this scan. */
		return ld(&it->sold_out) != 0;
	atomic_store(&it->sold_out, 0);
	return false;
}

/*
 * gather - one round of the slow path: collect @qty units from the own
 * bucket, the pool and the other buckets. Units held privately here are
 * covered by the transit counter, so no scan can miss them. On success the
 * units are sold; on failure what was gathered goes back to the own bucket.
 * Returns the units gathered (qty on success).
 */
static uint64_t
gather(struct sk_item *it, unsigned lcore, uint64_t qty)
{
	struct sk_bucket *mine = &it->bucket[lcore];
	uint64_t got = 0;
	bool credited = false;

	fadd(&it->transit, 1);

	got += grab(&mine->avail, qty);

	for (int i = 0; got < qty && i < SK_STOCK_CAS_TRIES; i++) {
		uint64_t p = ld(&it->pool);
		if (p == 0)
			break;
		uint64_t b = refill_batch(it, p, qty - got);
		if (!cas(&it->pool, &p, p - b))
			continue;
		uint64_t use = b < qty - got ? b : qty - got;
		got += use;
		if (b > use) {
			fadd(&mine->avail, b - use);
			credited = true;
		}
	}

	for (uint32_t k = 1; got < qty && k < it->nlcores; k++) {
		uint32_t victim = (lcore + k) % it->nlcores;
		got += grab(&it->bucket[victim].avail, qty - got);
	}

	TEST_HOOK(it, lcore, SK_STOCK_HOOK_GATHERED);
	if (got < qty && got > 0) {
		fadd(&mine->avail, got);
		credited = true;
	}
	/* Clear before leaving transit: a scan that reads transit as zero
	 * after this also finds the flag down, so it cannot answer sold out
	 * while the credited units sit in a bucket it already read
	 * (tests/model, finding 1). */
	if (credited)
		clear_sold_out(it);
	fsub(&it->transit, 1);
	return got;
}

int
sk_stock_take(struct sk_item *it, unsigned lcore, uint32_t qty)
{
	if (sk_unlikely(qty == 0 || qty > SK_STOCK_MAX_QTY || lcore >= it->nlcores))
		return -EINVAL;

	struct sk_bucket *mine = &it->bucket[lcore];
	uint64_t v = ld(&mine->avail);

	if (sk_likely(v >= qty) && cas(&mine->avail, &v, v - qty)) {
		sold_add(mine, qty);
		return SK_STOCK_OK;
	}

	for (int round = 0; round < SK_STOCK_ROUNDS; round++) {
		/* Nothing to gather: stay out of transit. At the end of a sale on
		 * many lcores, empty-handed gatherers kept transit above zero, so
		 * every declaration failed and buys were answered busy instead of
		 * sold out (16 threads: 244,000 cycles per unit). Only
		 * declare_sold_out() answers sold out, as before. */
		if (nothing_to_gather(it)) {
			if (declare_sold_out(it))
				return SK_STOCK_SOLD_OUT;
			cpu_relax();
			continue;
		}
		uint64_t got = gather(it, lcore, qty);
		if (got == qty) {
			sold_add(mine, qty);
			return SK_STOCK_OK;
		}
		if (got > 0) {
			/* Units exist: too few, or others hold them right now. */
			if (sk_stock_remaining(it) < qty)
				return SK_STOCK_SHORT;
		} else if (declare_sold_out(it)) {
			return SK_STOCK_SOLD_OUT;
		}
		cpu_relax();
	}
	return SK_STOCK_BUSY;
}

void
sk_stock_untake(struct sk_item *it, unsigned lcore, uint32_t qty)
{
	struct sk_bucket *mine = &it->bucket[lcore];

	SK_DEBUG_ASSERT(lcore < it->nlcores);
	SK_DEBUG_ASSERT(atomic_load_explicit(&mine->sold, memory_order_relaxed) >= qty);
	fadd(&mine->avail, qty);
	sold_add(mine, -(int64_t)qty);
	clear_sold_out(it);
}

int
sk_stock_return(struct sk_item *it, uint32_t *returned, uint32_t order_qty, uint32_t n)
{
	if (n == 0)
		return -EINVAL;
	if (*returned > order_qty || n > order_qty - *returned)
		return -ERANGE;
	*returned += n;
	/* returned before pool: a unit resold in between must not make
	 * sold - returned read above the stock (docs/stock-model.md, finding 3) */
	fadd(&it->returned, n);
	fadd(&it->pool, n);
	clear_sold_out(it);
	return 0;
}

int
sk_stock_add(struct sk_item *it, uint64_t n)
{
	if (n == 0)
		return -EINVAL;
	/* Restocks are rare operator actions: a CAS loop on 'added' keeps the
	 * cap exact even with two concurrent restocks. */
	uint64_t a = ld(&it->added);
	do {
		if (it->total + a > SK_STOCK_MAX_UNITS || n > SK_STOCK_MAX_UNITS - it->total - a)
			return -EOVERFLOW;
	} while (!cas(&it->added, &a, a + n));
	fadd(&it->pool, n);
	clear_sold_out(it);
	return 0;
}

int
sk_stock_remove(struct sk_item *it, uint64_t n, uint64_t *unsold)
{
	if (n == 0 || n > SK_STOCK_MAX_UNITS)
		return -EINVAL;
	for (int round = 0; round < SK_STOCK_ROUNDS; round++) {
		uint64_t left = sk_stock_remaining(it), got = 0, t;

		if (left < n) {
			if (unsold != NULL)
				*unsold = left;
			return SK_STOCK_SHORT;
		}
		/* Each grab is counted as removed at once, so that a remover
		 * that dies here leaves the units counted, never lost. */
		t = grab(&it->pool, n);
		fadd(&it->removed, t);
		got += t;
		for (uint32_t i = 0; got < n && i < it->nlcores; i++) {
			t = grab(&it->bucket[i].avail, n - got);
			fadd(&it->removed, t);
			got += t;
		}
		if (got == n) {
			if (sk_stock_remaining(it) == 0)
				(void)declare_sold_out(it); /* tell the buyers at once */
			return SK_STOCK_OK;
		}
		/* Short by a race: everything back, as a return does. */
		fadd(&it->pool, got);
		fsub(&it->removed, got);
		clear_sold_out(it);
		cpu_relax();
	}
	return SK_STOCK_BUSY;
}

int
sk_stock_unremove(struct sk_item *it, uint64_t n)
{
	uint64_t r = ld(&it->removed);

	if (n == 0)
		return -EINVAL;
	do {
		if (n > r)
			return -ERANGE;
	} while (!cas(&it->removed, &r, r - n));
	fadd(&it->pool, n);
	clear_sold_out(it);
	return 0;
}

int
sk_stock_pause(struct sk_item *it, bool paused)
{
	uint32_t from = paused ? SK_ITEM_ACTIVE : SK_ITEM_PAUSED;
	uint32_t to = paused ? SK_ITEM_PAUSED : SK_ITEM_ACTIVE;
	uint32_t s = from;

	if (atomic_compare_exchange_strong(&it->state, &s, to) || s == to)
		return 0;
	return -EPERM;
}

uint64_t
sk_stock_remaining(const struct sk_item *it)
{
	uint64_t r = ld(&it->pool);

	for (uint32_t i = 0; i < it->nlcores; i++)
		r += ld(&it->bucket[i].avail);
	return r;
}

uint64_t
sk_stock_sold(const struct sk_item *it)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < it->nlcores; i++)
		s += atomic_load_explicit(&it->bucket[i].sold, memory_order_relaxed);
	return s - ld(&it->returned);
}

uint64_t
sk_stock_restocking(const struct sk_item *it)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < it->nlcores; i++)
		s += atomic_load_explicit(&it->bucket[i].restocking, memory_order_relaxed);
	return s;
}

bool
sk_stock_check(const struct sk_item *it)
{
	uint64_t left = sk_stock_remaining(it);

	if (it->total + ld(&it->added) - ld(&it->removed) != left + sk_stock_sold(it))
		return false;
	if (ld(&it->transit) != 0)
		return false;
	return !(ld(&it->sold_out) && left != 0);
}
