/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of recovery (sk_recover): sold units and holdings come back
 * from the order store into a fresh arena; cancelled orders' units do not;
 * a store that holds more than the item refuses to start; the high-water
 * marks of earlier runs (one per epoch and lcore of this member).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sk_recover.h"
#include "sk_test.h"
#include "sk_test_arena.h"
#include "sk_test_store.h"

#define EPOCH 1764000003u

static struct sk_store *st;
static struct sk_test_arena arena;
static struct sk_shm *shm;

static void
setup(void)
{
	struct sk_shm_conf c = {.nlcores = 2,
				.max_items = 4,
				.dedup_slots = 4096,
				.status_bits = 10,
				.epoch = EPOCH};

	sk_test_store_setup();
	st = sk_test_store_open_test("recover");
	shm = sk_test_arena_init(&arena, &c);
}

static void
teardown(void)
{
	sk_store_close(st);
	sk_test_store_teardown();
	sk_test_arena_fini(&arena);
}

static struct sk_item *
add_item(uint32_t id, uint64_t total, uint32_t limit)
{
	struct sk_stock_conf c = {
		.id = id, .per_user_limit = limit, .end_ns = INT64_MAX, .price = 1, .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(shm, &c, 0, &it), 0);
	return it;
}

/* An order of an earlier run (epoch - 1), one line. */
static struct sk_order_rec
rec(uint32_t seq, uint32_t item, uint64_t user, uint16_t qty)
{
	return (struct sk_order_rec){.id = sk_order_id_make(EPOCH - 1, 0, 0, seq),
				     .user = user,
				     .price = 1,
				     .time_ns = 1,
				     .item = item,
				     .qty = qty,
				     .nlines = 1};
}

START_TEST(restores_units_and_holdings)
{
	struct sk_order_rec r[4] = {rec(1, 7, 100, 1), rec(2, 7, 101, 2), rec(3, 7, 102, 1),
				    rec(4, 8, 100, 1)};
	struct sk_recover_stats rs;

	ck_assert_int_eq(sk_store_put_orders(st, r, 4, 0, 1, NULL, NULL), 0);
	/* user 102 cancelled: its unit is not live */
	ck_assert_int_eq(
		sk_store_order_move(st, r[2].id, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 2, NULL),
		0);

	struct sk_item *it = add_item(7, 10, 2);
	ck_assert_int_eq(sk_recover_item(st, shm, it, &rs), 0);
	ck_assert_uint_eq(rs.units, 3);
	ck_assert_uint_eq(rs.users, 2);
	ck_assert_uint_eq(sk_stock_remaining(it), 7);
	ck_assert_uint_eq(sk_stock_sold(it), 3);
	ck_assert(sk_stock_check(it));
	ck_assert(!sk_stock_is_sold_out(it));

	struct sk_dedup d;
	uint32_t units;
	uint64_t order;
	sk_shm_dedup(shm, it, &d);
	ck_assert_int_eq(sk_dedup_lookup(&d, 101, &units, &order), 0);
	ck_assert_uint_eq(units, 2);
	ck_assert_uint_eq(order, r[1].id);
	ck_assert_int_eq(sk_dedup_lookup(&d, 102, &units, &order), -ENOENT);
	/* a second recovery of the same item is refused (it has sold) */
	ck_assert_int_eq(sk_recover_item(st, shm, it, NULL), -EBUSY);
}
END_TEST

START_TEST(sold_out_and_overfull)
{
	struct sk_order_rec r[3] = {rec(1, 7, 100, 1), rec(2, 7, 101, 1), rec(3, 8, 100, 1)};

	ck_assert_int_eq(sk_store_put_orders(st, r, 3, 0, 1, NULL, NULL), 0);
	struct sk_item *exact = add_item(7, 2, 1);
	ck_assert_int_eq(sk_recover_item(st, shm, exact, NULL), 0);
	ck_assert(sk_stock_is_sold_out(exact));
	ck_assert(sk_stock_check(exact));

	struct sk_item *small = add_item(8, 0, 1);
	ck_assert_int_eq(sk_recover_item(st, shm, small, NULL), -ERANGE);
	ck_assert_uint_eq(sk_stock_sold(small), 0); /* nothing half-applied */

	struct sk_item *none = add_item(9, 5, 1);
	ck_assert_int_eq(sk_recover_item(st, shm, none, NULL), 0);
	ck_assert_uint_eq(sk_stock_remaining(none), 5);
}
END_TEST

/* mk - a one-line order @id of item 7. */
static struct sk_order_rec
mk(uint64_t id, uint64_t user)
{
	return (struct sk_order_rec){
		.id = id, .user = user, .price = 1, .time_ns = 1, .item = 7, .qty = 1, .nlines = 1};
}

START_TEST(marks_per_epoch_and_lcore)
{
	uint64_t marks[8];
	uint32_t n = 99;
	bool more = true;

	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 8, &n, &more), 0);
	ck_assert_uint_eq(n, 0); /* an empty store */
	ck_assert(!more);

	/* a cart of two lines, other lcores, another member, a rolled epoch */
	struct sk_order_rec r[] = {
		mk(sk_order_id_make(EPOCH - 9, 0, 0, 1), 1),
		mk(sk_order_id_make(EPOCH - 9, 0, 0, 2), 2),
		mk(sk_order_id_make(EPOCH - 9, 0, 0, 3), 3),
		mk(sk_order_id_make(EPOCH - 9, 0, 0, 3), 3),
		mk(sk_order_id_make(EPOCH - 9, 0, 5, SK_ORDER_SEQ_MAX - 1), 4),
		mk(sk_order_id_make(EPOCH - 9, 2, 0, 9), 5),
		mk(sk_order_id_make(EPOCH - 4, 0, 0, 0), 6),
		mk(sk_order_id_make(EPOCH - 4, 0, 1, 7), 7),
	};
	r[3].item = 8;
	r[2].nlines = r[3].nlines = 2;
	r[3].line = 1;
	ck_assert_int_eq(sk_store_put_orders(st, r, SK_ARRAY_SIZE(r), 0, 1, NULL, NULL), 0);

	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 8, &n, &more), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(!more);
	ck_assert_uint_eq(marks[0], r[2].id);
	ck_assert_uint_eq(marks[1], r[4].id);
	ck_assert_uint_eq(marks[2], r[6].id);
	ck_assert_uint_eq(marks[3], r[7].id);
	ck_assert_int_eq(sk_shm_set_marks(shm, marks, n, more), 0);

	/* the newest first when they do not all fit */
	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 3, &n, &more), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(more);
	ck_assert_uint_eq(marks[0], r[4].id);
	ck_assert_int_eq(sk_recover_marks(st, 2, marks, 8, &n, &more), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(marks[0], r[5].id);
}
END_TEST

static Suite *
recover_suite(void)
{
	Suite *s = suite_create("recover");
	TCase *tc = tcase_create("recover");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, restores_units_and_holdings);
	tcase_add_test(tc, sold_out_and_overfull);
	tcase_add_test(tc, marks_per_epoch_and_lcore);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(recover_suite)
