/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_arena.c - the arena fixture (see sk_test_arena.h).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <rte_ring.h>

#include "sk_common.h"
#include "sk_order.h"
#include "sk_test_arena.h"

/* Ring numbers handed out so far; above every real lcore number. */
static unsigned ring_gen = 1000;

struct sk_shm *
sk_test_arena_init(struct sk_test_arena *a, const struct sk_shm_conf *conf)
{
	size_t sz = sk_shm_size(conf);

	memset(a, 0, sizeof(*a));
	ck_assert_uint_gt(sz, 0);
	a->mem = aligned_alloc(SK_CACHE_LINE, sk_align_up(sz, SK_CACHE_LINE));
	ck_assert_ptr_nonnull(a->mem);
	a->shm = sk_shm_init(a->mem, sz, conf);
	ck_assert_ptr_nonnull(a->shm);
	return a->shm;
}

void
sk_test_arena_rings(struct sk_test_arena *a, unsigned size)
{
	unsigned n = a->shm->nlcores;

	ck_assert_uint_le(n, SK_TEST_ARENA_LCORES);
	for (unsigned i = 0; i < n; i++) {
		a->ring[i] = sk_order_ring_create(ring_gen++, size, SOCKET_ID_ANY);
		ck_assert_ptr_nonnull(a->ring[i]);
		a->nrings = i + 1;
		ck_assert_int_eq(sk_buy_lcore_init(&a->lc[i], a->shm, i, a->ring[i]), 0);
	}
}

void
sk_test_arena_fini(struct sk_test_arena *a)
{
	for (unsigned i = 0; i < a->nrings; i++)
		rte_ring_free(a->ring[i]);
	free(a->mem);
	memset(a, 0, sizeof(*a));
}
