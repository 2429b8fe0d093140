/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_arena.h - the arena fixture of the stock, seckill, control and
 * store tests: an arena (stock/sk_shm.h) in plain memory instead of a
 * memzone, and optionally one order ring and one buy context per lcore, the
 * way the dataplane sets them up.
 *
 * Failures are Check assertions: call from a test or a checked fixture.
 * Rings need the EAL (sk_test_eal.h); the arena alone does not.
 */
#ifndef SK_TEST_ARENA_H
#define SK_TEST_ARENA_H

#include "sk_buy.h"
#include "sk_shm.h"

/** Most lcores a test arena gets rings for. */
#define SK_TEST_ARENA_LCORES 8

/** An arena in plain memory and its lcores' rings. All zero: nothing made. */
struct sk_test_arena {
	void *mem;	    /**< the arena's memory (cache-line aligned, owned) */
	struct sk_shm *shm; /**< the arena, inside @c mem */
	unsigned nrings;    /**< rings made, one per lcore of the arena */
	struct rte_ring *ring[SK_TEST_ARENA_LCORES];  /**< lcore i's order ring (owned) */
	struct sk_buy_lcore lc[SK_TEST_ARENA_LCORES]; /**< lcore i's buy context on ring[i] */
};

/**
 * sk_test_arena_init - zero @p a, allocate an arena of @p conf's size and
 * initialise it (asserts that @p conf is valid).
 * @return a->shm.
 */
struct sk_shm *sk_test_arena_init(struct sk_test_arena *a, const struct sk_shm_conf *conf);

/**
 * sk_test_arena_rings - for every lcore i of the arena (at most
 * SK_TEST_ARENA_LCORES): an order ring of @p size records (sk_order_ring_create
 * under a number unique in the process, so that fixtures may be made again
 * before the EAL frees names, and sk_orders_0.. stay free for the test) and
 * a buy context a->lc[i] on it. Needs the EAL.
 */
void sk_test_arena_rings(struct sk_test_arena *a, unsigned size);

/** sk_test_arena_fini - free the rings and the arena; @p a is zero after. */
void sk_test_arena_fini(struct sk_test_arena *a);

#endif /* SK_TEST_ARENA_H */
