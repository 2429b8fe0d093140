/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the stock engine's single-threaded contracts: items and
 * buckets (sk_stock), the dedup set (sk_dedup) and the shared arena
 * (sk_shm). Plain memory, no EAL.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_dedup.h"
#include "sk_shm.h"
#include "sk_stock.h"
#include "sk_test.h"
#include "sk_test_arena.h"

static struct sk_item *
new_item(uint64_t total, uint32_t nlcores, uint32_t limit)
{
	struct sk_item *it = aligned_alloc(SK_CACHE_LINE, sizeof(*it));
	struct sk_stock_conf c = {
		.id = 7,
		.per_user_limit = limit,
		.start_ns = 0,
		.end_ns = INT64_MAX,
		.price = 100,
		.total = total,
		.nlcores = nlcores,
	};

	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(sk_stock_init(it, &c), 0);
	return it;
}

/* ------------------------------------------------------------------ stock */

START_TEST(init_rejects_bad_conf)
{
	struct sk_item it;
	const struct sk_stock_conf ok = {
		.id = 1, .per_user_limit = 1, .end_ns = 10, .total = 5, .nlcores = 2};
	struct sk_stock_conf c;

	c = ok;
	ck_assert_int_eq(sk_stock_init(&it, &c), 0);
	c = ok, c.id = 0;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
	c = ok, c.per_user_limit = 0;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
	c = ok, c.nlcores = 0;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
	c = ok, c.nlcores = SK_MAX_LCORES + 1;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
	c = ok, c.total = SK_STOCK_MAX_UNITS + 1;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
	c = ok, c.end_ns = c.start_ns;
	ck_assert_int_eq(sk_stock_init(&it, &c), -EINVAL);
}
END_TEST

START_TEST(stock_zero_is_sold_out)
{
	struct sk_item *it = new_item(0, 2, 1);

	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(stock_one)
{
	struct sk_item *it = new_item(1, 2, 1);

	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_sold(it), 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 0);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(stock_huge)
{
	const uint64_t total = UINT64_C(1) << 40;
	struct sk_item *it = new_item(total, 4, 1);

	for (int i = 0; i < 100000; i++)
		ck_assert_int_eq(sk_stock_take(it, (unsigned)i % 4, 1 + i % 3), SK_STOCK_OK);
	/* batches are capped: the pool keeps nearly everything */
	ck_assert_uint_ge(atomic_load(&it->pool), total - 100000 * 3 - 4 * it->batch_max);
	ck_assert_uint_eq(sk_stock_remaining(it) + sk_stock_sold(it), total);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(qty_larger_than_stock)
{
	struct sk_item *it = new_item(3, 2, 5);

	ck_assert_int_eq(sk_stock_take(it, 0, 4), SK_STOCK_SHORT);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_take(it, 0, 3), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(bad_args)
{
	struct sk_item *it = new_item(3, 2, 5);

	ck_assert_int_eq(sk_stock_take(it, 0, 0), -EINVAL);
	ck_assert_int_eq(sk_stock_take(it, 0, SK_STOCK_MAX_QTY + 1), -EINVAL);
	ck_assert_int_eq(sk_stock_take(it, 2, 1), -EINVAL);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	free(it);
}
END_TEST

START_TEST(refill_batches_shrink)
{
	struct sk_item *it = new_item(1000, 2, 1);

	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	/* first refill: min(batch_max, 1000 / (2*2)) = 250, one sold */
	ck_assert_uint_eq(atomic_load(&it->bucket[0].avail), 249);
	ck_assert_uint_eq(atomic_load(&it->pool), 750);
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	ck_assert_uint_eq(atomic_load(&it->bucket[1].avail), 186); /* 750/4 = 187 */
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(steal_path)
{
	struct sk_item *it = new_item(8, 2, 1);

	/* lcore 0 pulls units into its bucket, then the pool is drained */
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	uint64_t b0 = atomic_load(&it->bucket[0].avail);
	uint64_t pool = atomic_load(&it->pool);
	ck_assert_uint_gt(b0, 0);
	for (uint64_t i = 0; i < pool; i++)
		ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	ck_assert_uint_eq(atomic_load(&it->pool), 0);
	/* lcore 1's bucket and the pool are empty: it must steal from lcore 0 */
	uint64_t left = sk_stock_remaining(it);
	ck_assert_uint_eq(left, b0 + atomic_load(&it->bucket[1].avail));
	for (uint64_t i = 0; i < left; i++)
		ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	ck_assert_uint_eq(atomic_load(&it->bucket[0].avail), 0);
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_SOLD_OUT);
	ck_assert_uint_eq(atomic_load(&it->bucket[1].sold), 8 - 1);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(multi_unit_across_buckets)
{
	struct sk_item *it = new_item(4, 4, 5);

	/* spread one unit into each bucket */
	for (unsigned c = 0; c < 4; c++) {
		atomic_store(&it->bucket[c].avail, 1);
	}
	atomic_store(&it->pool, 0);
	ck_assert_int_eq(sk_stock_take(it, 2, 3), SK_STOCK_OK);
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert_int_eq(sk_stock_take(it, 2, 2), SK_STOCK_SHORT);
	ck_assert_uint_eq(sk_stock_remaining(it), 1); /* gathered unit went back */
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(return_and_over_return)
{
	struct sk_item *it = new_item(2, 2, 2);
	uint32_t returned = 0;

	ck_assert_int_eq(sk_stock_take(it, 0, 2), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 0), -EINVAL);
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 3), -ERANGE);
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 1), 0);
	ck_assert(!sk_stock_is_sold_out(it)); /* a return reopens the item */
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 2), -ERANGE);
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 1), 0);
	ck_assert_int_eq(sk_stock_return(it, &returned, 2, 1), -ERANGE);
	ck_assert_uint_eq(returned, 2);
	ck_assert_uint_eq(sk_stock_sold(it), 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_stock_take(it, 1, 2), SK_STOCK_OK);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(restock_reopens)
{
	struct sk_item *it = new_item(1, 2, 1);

	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_add(it, 0), -EINVAL);
	ck_assert_int_eq(sk_stock_add(it, SK_STOCK_MAX_UNITS), -EOVERFLOW);
	ck_assert_int_eq(sk_stock_add(it, 5), 0);
	ck_assert(!sk_stock_is_sold_out(it));
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(sk_stock_take(it, (unsigned)i % 2, 1), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_SOLD_OUT);
	ck_assert_uint_eq(atomic_load(&it->added), 5);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(untake_restores)
{
	struct sk_item *it = new_item(1, 1, 1);

	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_SOLD_OUT);
	sk_stock_untake(it, 0, 1);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_sold(it), 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(check_detects_corruption)
{
	struct sk_item *it = new_item(10, 2, 1);

	ck_assert(sk_stock_check(it));
	atomic_fetch_add(&it->bucket[1].avail, 1); /* a unit from nowhere */
	ck_assert(!sk_stock_check(it));
	atomic_fetch_sub(&it->bucket[1].avail, 1);
	atomic_store(&it->sold_out, 1); /* flag with units left */
	ck_assert(!sk_stock_check(it));
	free(it);
}
END_TEST

/* ------------------------------------------------------------------ dedup */

struct dedup_fixture {
	struct sk_dedup_slot *mem;
	struct sk_dedup d;
};

static void
dedup_new(struct dedup_fixture *f, uint64_t slots)
{
	f->mem = calloc(slots, sizeof(*f->mem));
	ck_assert_ptr_nonnull(f->mem);
	f->d.slot = f->mem;
	f->d.mask = slots - 1;
}

START_TEST(dedup_limit_one)
{
	struct dedup_fixture f;
	struct sk_dedup_slot *s, *s2;
	uint64_t order = 99;

	dedup_new(&f, 1024);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 0, 1, 1, &s, &order), -EINVAL);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 42, 0, 1, &s, &order), -EINVAL);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 42, 1, 1, &s, &order), SK_DEDUP_OK);
	/* same user while the first buy is in flight */
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 42, 1, 1, &s2, &order), SK_DEDUP_PENDING);
	ck_assert_ptr_eq(s, s2);
	sk_dedup_commit(s, 1, 0x1234);
	order = 0;
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 42, 1, 1, &s2, &order), SK_DEDUP_LIMIT);
	ck_assert_uint_eq(order, 0x1234);
	uint32_t units;
	ck_assert_int_eq(sk_dedup_lookup(&f.d, 42, &units, &order), 0);
	ck_assert_uint_eq(units, 1);
	ck_assert_int_eq(sk_dedup_lookup(&f.d, 43, &units, &order), -ENOENT);
	free(f.mem);
}
END_TEST

START_TEST(dedup_limit_five)
{
	struct dedup_fixture f;
	struct sk_dedup_slot *s;
	uint64_t order;

	dedup_new(&f, 1024);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 7, 3, 5, &s, &order), SK_DEDUP_OK);
	sk_dedup_commit(s, 3, 1);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 7, 3, 5, &s, &order), SK_DEDUP_LIMIT);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 7, 2, 5, &s, &order), SK_DEDUP_OK);
	sk_dedup_commit(s, 2, 2);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 7, 1, 5, &s, &order), SK_DEDUP_LIMIT);
	ck_assert_uint_eq(order, 2);
	/* a failed buy holds nothing */
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 8, 5, 5, &s, &order), SK_DEDUP_OK);
	sk_dedup_abort(s);
	uint32_t units = 9;
	ck_assert_int_eq(sk_dedup_lookup(&f.d, 8, &units, NULL), 0);
	ck_assert_uint_eq(units, 0);
	/* release lets the user buy again; over-release refused */
	ck_assert_int_eq(sk_dedup_release(&f.d, 7, 6), -ERANGE);
	ck_assert_int_eq(sk_dedup_release(&f.d, 7, 3), 0);
	ck_assert_int_eq(sk_dedup_release(&f.d, 99, 1), -ENOENT);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 7, 3, 5, &s, &order), SK_DEDUP_OK);
	/* release during a pending buy composes with the commit */
	ck_assert_int_eq(sk_dedup_release(&f.d, 7, 2), 0);
	sk_dedup_commit(s, 3, 3);
	ck_assert_int_eq(sk_dedup_lookup(&f.d, 7, &units, &order), 0);
	ck_assert_uint_eq(units, 3);
	ck_assert_uint_eq(order, 3);
	free(f.mem);
}
END_TEST

START_TEST(dedup_table_full)
{
	struct dedup_fixture f;
	struct sk_dedup_slot *s;
	uint64_t order;
	uint64_t user;

	dedup_new(&f, 16);
	for (user = 1; user <= 16; user++)
		ck_assert_int_eq(sk_dedup_acquire(&f.d, user, 1, 1, &s, &order), SK_DEDUP_OK);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 17, 1, 1, &s, &order), SK_DEDUP_FULL);
	ck_assert_int_eq(sk_dedup_restore(&f.d, 17, 1, 5), SK_DEDUP_FULL);
	/* existing users still found in a full table */
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 16, 1, 1, &s, &order), SK_DEDUP_PENDING);
	free(f.mem);
}
END_TEST

START_TEST(dedup_restore)
{
	struct dedup_fixture f;
	struct sk_dedup_slot *s;
	uint64_t order = 0;

	dedup_new(&f, 1024);
	ck_assert_int_eq(sk_dedup_restore(&f.d, 0, 1, 5), -EINVAL);
	ck_assert_int_eq(sk_dedup_restore(&f.d, 5, 1, 77), 0);
	ck_assert_int_eq(sk_dedup_acquire(&f.d, 5, 1, 1, &s, &order), SK_DEDUP_LIMIT);
	ck_assert_uint_eq(order, 77);
	free(f.mem);
}
END_TEST

/* ------------------------------------------------------------------ shm */

static struct sk_shm *
new_shm(uint32_t max_items, uint64_t dedup, struct sk_test_arena *a)
{
	struct sk_shm_conf c = {.nlcores = 2,
				.max_items = max_items,
				.dedup_slots = dedup,
				.status_bits = 12,
				.epoch = SK_ORDER_EPOCH_BASE + 1000};

	return sk_test_arena_init(a, &c);
}

START_TEST(shm_conf_validation)
{
	struct sk_shm_conf c = {.nlcores = 2,
				.max_items = 4,
				.dedup_slots = 4096,
				.status_bits = 12,
				.epoch = SK_ORDER_EPOCH_BASE + 1,
				.member = SK_ORDER_MEMBER_MAX};
	struct sk_shm_conf b;

	ck_assert_uint_gt(sk_shm_size(&c), 0);
	b = c, b.nlcores = 0;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.max_items = 0;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.dedup_slots = 10;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.status_bits = SK_ORDER_SEQ_BITS + 1;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.epoch = 0;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	/* the epoch must fit the ids' 30 bits after SK_ORDER_EPOCH_BASE */
	b = c, b.epoch = SK_ORDER_EPOCH_BASE;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.epoch = SK_ORDER_EPOCH_BASE + (UINT32_C(1) << SK_ORDER_EPOCH_BITS);
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.epoch = SK_ORDER_EPOCH_BASE + (UINT32_C(1) << SK_ORDER_EPOCH_BITS) - 1;
	ck_assert_uint_gt(sk_shm_size(&b), 0);
	/* the member number must fit its 5 bits */
	b = c, b.member = SK_ORDER_MEMBER_MAX + 1;
	ck_assert_uint_eq(sk_shm_size(&b), 0);
	b = c, b.dedup_slots = UINT64_MAX / 2; /* size overflow */
	ck_assert_uint_eq(sk_shm_size(&b), 0);

	char small[256] __attribute__((aligned(64)));
	ck_assert_ptr_null(sk_shm_init(small, sizeof(small), &c));
}
END_TEST

/* prepare lays an item out unseen; publish shows it; an add in between wins. */
START_TEST(shm_prepare_publish)
{
	struct sk_test_arena a;
	struct sk_shm *shm = new_shm(3, 4096, &a);
	struct sk_stock_conf c = {.id = 21, .per_user_limit = 1, .end_ns = 1, .total = 10};
	struct sk_item *it, *other;

	ck_assert_int_eq(sk_shm_item_prepare(shm, &c, 0, &it), 0);
	ck_assert_ptr_null(sk_shm_item_find(shm, 21));
	ck_assert_ptr_null(sk_shm_item_at(shm, 0));
	ck_assert_uint_eq(atomic_load(&shm->dedup_used), 0);
	ck_assert_int_eq(sk_stock_add(it, 5), 0); /* seeded before anyone sees it */
	ck_assert_int_eq(sk_shm_item_publish(shm, it), 0);
	ck_assert_ptr_eq(sk_shm_item_find(shm, 21), it);
	ck_assert_uint_eq(sk_stock_remaining(it), 15);
	ck_assert_uint_eq(atomic_load(&shm->dedup_used), 1024);
	ck_assert_int_eq(sk_shm_item_publish(shm, it), -EINVAL); /* not the prepared slot */
	ck_assert_int_eq(sk_shm_item_prepare(shm, &c, 0, &other), -EEXIST);

	/* an abandoned prepare leaves no trace; an add in between invalidates one */
	c.id = 22;
	ck_assert_int_eq(sk_shm_item_prepare(shm, &c, 0, &it), 0);
	c.id = 23;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, &other), 0);
	ck_assert_ptr_eq(other, it); /* same slot, now item 23's */
	ck_assert_int_eq(sk_shm_item_publish(shm, it), -EINVAL);
	ck_assert_ptr_null(sk_shm_item_find(shm, 22));
	ck_assert_uint_eq(sk_shm_item_find(shm, 23)->id, 23);
	ck_assert_uint_eq(atomic_load(&shm->nitems), 2);
	sk_test_arena_fini(&a);
}
END_TEST

START_TEST(shm_items)
{
	struct sk_test_arena a;
	struct sk_shm *shm = new_shm(3, 4096, &a);
	struct sk_stock_conf c = {.id = 11, .per_user_limit = 1, .end_ns = 1, .total = 100};
	struct sk_item *it;

	ck_assert_ptr_eq(sk_shm_attach(a.mem, shm->size, NULL, 0), shm);
	ck_assert_ptr_null(sk_shm_attach(a.mem, shm->size - 1, NULL, 0));
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, &it), 0);
	ck_assert_uint_eq(it->nlcores, 2);
	ck_assert_uint_eq(it->dedup_mask + 1, 1024); /* 8 x 100 -> 1024 */
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, NULL), -EEXIST);
	c.id = 12;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 2000, &it), 0);
	ck_assert_uint_eq(it->dedup_mask + 1, 2048);
	ck_assert_uint_eq(it->dedup_off, 1024);
	c.id = 13;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 2048, NULL), -ENOSPC); /* dedup left: 1024 */
	c.id = 0;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, NULL), -EINVAL);
	c.id = 13;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, &it), 0);
	c.id = 14;
	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, NULL), -ENOSPC); /* item slots */
	ck_assert_ptr_eq(sk_shm_item_find(shm, 13), it);
	ck_assert_uint_eq(sk_shm_item_find(shm, 11)->id, 11);
	ck_assert_ptr_null(sk_shm_item_find(shm, 14));
	ck_assert_uint_eq(sk_shm_item_at(shm, 1)->id, 12);
	ck_assert_ptr_null(sk_shm_item_at(shm, 3));

	struct sk_dedup d1, d2;
	sk_shm_dedup(shm, sk_shm_item_find(shm, 11), &d1);
	sk_shm_dedup(shm, sk_shm_item_find(shm, 12), &d2);
	ck_assert_ptr_eq(d1.slot + 1024, d2.slot); /* slices do not overlap */

	/* settled ids start at each lcore's first id and only move forward */
	uint64_t first1 = sk_order_id_make(shm->epoch, shm->member, 1, 1);
	ck_assert_uint_eq(sk_shm_settled(shm, 1), first1);
	sk_shm_settle(shm, 1, first1 + 10);
	sk_shm_settle(shm, 1, first1 + 7);
	ck_assert_uint_eq(sk_shm_settled(shm, 1), first1 + 10);
	ck_assert_uint_eq(sk_shm_settled(shm, 0), sk_order_id_make(shm->epoch, shm->member, 0, 1));

	struct sk_status st;
	sk_shm_status(shm, &st);
	ck_assert_uint_eq(st.epoch, SK_ORDER_EPOCH_BASE + 1000);
	/* the status bytes, then a user tag per slot, end the arena */
	ck_assert_ptr_eq((void *)(st.base + (2u << 12)), (void *)st.users);
	ck_assert_ptr_eq((void *)(st.users + (2u << 12)), (void *)((char *)shm + shm->size));
	sk_test_arena_fini(&a);
}
END_TEST

static Suite *
stock_suite(void)
{
	Suite *s = suite_create("stock");
	TCase *tc = tcase_create("stock");

	tcase_add_test(tc, init_rejects_bad_conf);
	tcase_add_test(tc, stock_zero_is_sold_out);
	tcase_add_test(tc, stock_one);
	tcase_add_test(tc, stock_huge);
	tcase_add_test(tc, qty_larger_than_stock);
	tcase_add_test(tc, bad_args);
	tcase_add_test(tc, refill_batches_shrink);
	tcase_add_test(tc, steal_path);
	tcase_add_test(tc, multi_unit_across_buckets);
	tcase_add_test(tc, return_and_over_return);
	tcase_add_test(tc, restock_reopens);
	tcase_add_test(tc, untake_restores);
	tcase_add_test(tc, check_detects_corruption);
	suite_add_tcase(s, tc);

	tc = tcase_create("dedup");
	tcase_add_test(tc, dedup_limit_one);
	tcase_add_test(tc, dedup_limit_five);
	tcase_add_test(tc, dedup_table_full);
	tcase_add_test(tc, dedup_restore);
	suite_add_tcase(s, tc);

	tc = tcase_create("shm");
	tcase_add_test(tc, shm_conf_validation);
	tcase_add_test(tc, shm_items);
	tcase_add_test(tc, shm_prepare_publish);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(stock_suite)
