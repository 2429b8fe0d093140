/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, crashes and refusals: replay after commit (before finish, with and without status
 * moves), the consumer-head reset, repair at attach; the oversell guard and a full map fail orders
 * and return their units (tcases "crashes", "refusals", "full_map" of the suite in
 * test_control.c).
 */
#include "test_control.h"

/* ----------------------------------------------------------------- crashes */

/*
 * predecessor_commit - what a control plane that died after its commit but
 * before finishing the dequeue leaves: records peeked (head ahead of tail),
 * in the store, optionally confirmed in the status table.
 */
static unsigned
predecessor_commit(bool moved_status)
{
	struct sk_order_rec recs[2][64];
	unsigned got[NLCORES];

	for (unsigned l = 0; l < NLCORES; l++) {
		got[l] = rte_ring_dequeue_burst_elem_start(F.arena.ring[l], recs[l],
							   sizeof(recs[l][0]), 64, NULL);
		ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), recs[l], got[l],
						     TIMEOUT, T0, NULL, NULL),
				 0);
		if (moved_status) {
			struct sk_status st;
			sk_shm_status(F.arena.shm, &st);
			for (unsigned i = 0; i < got[l]; i++)
				(void)sk_status_move(&st, recs[l][i].id, SK_ORDER_QUEUED,
						     SK_ORDER_CONFIRMED);
		}
		ck_assert_uint_ne(F.arena.ring[l]->cons.head, F.arena.ring[l]->cons.tail);
	}
	return got[0] + got[1];
}

static void
replay_case(bool moved_status)
{
	struct sk_item *it = add_item(1, 50, 1);
	uint64_t ids[20];
	struct sk_control_drain_info di;

	for (unsigned u = 0; u < 20; u++)
		ids[u] = buy(u % NLCORES, 1 + u, it);
	ck_assert_uint_eq(predecessor_commit(moved_status), 20);

	ctl_restart();
	for (unsigned l = 0; l < NLCORES; l++) {
		ck_assert_uint_eq(F.arena.ring[l]->cons.head, F.arena.ring[l]->cons.tail);
		ck_assert_uint_eq(rte_ring_count(F.arena.ring[l]), 10);
	}
	ck_assert_int_eq(drain_now(&di), 20);
	ck_assert_uint_eq(di.orders_new, 0);
	ck_assert_uint_eq(di.orders_dup, 20);
	for (unsigned u = 0; u < 20; u++) {
		ck_assert_uint_eq(store_state(ids[u]), SK_ORDER_CONFIRMED);
		ck_assert_uint_eq(arena_state(ids[u]), SK_ORDER_CONFIRMED);
	}
	for (unsigned l = 0; l < NLCORES; l++) {
		ck_assert_uint_eq(sk_shm_settled(F.arena.shm, l), ids[18 + l] + 1);
		ck_assert_uint_eq(rte_ring_count(F.arena.ring[l]), 0);
	}
	struct sk_control_item ci;
	ck_assert_int_eq(sk_control_item_get(F.ctl, 1, &ci), 0);
	ck_assert_uint_eq(ci.ledger.sold, 20); /* stored once */
	ck_assert_uint_eq(stats().anomalies, 0);
	assert_store_ok();
	assert_books(it);
}

START_TEST(replay_after_commit)
{
	replay_case(false);
}
END_TEST

START_TEST(replay_after_status_moves)
{
	replay_case(true);
}
END_TEST

START_TEST(head_reset_after_peek)
{
	struct sk_item *it = add_item(1, 50, 1);
	struct sk_order_rec recs[16];
	uint64_t ids[5];

	for (unsigned u = 0; u < 5; u++)
		ids[u] = buy(0, 1 + u, it);
	/* Died between dequeue_start and the commit. */
	ck_assert_uint_eq(
		rte_ring_dequeue_burst_elem_start(F.arena.ring[0], recs, sizeof(recs[0]), 16, NULL),
		5);
	ck_assert_uint_eq(F.arena.ring[0]->cons.head - F.arena.ring[0]->cons.tail, 5);

	ctl_restart();
	ck_assert_uint_eq(F.arena.ring[0]->cons.head, F.arena.ring[0]->cons.tail);
	ck_assert_int_eq(drain_now(NULL), 5);
	for (unsigned u = 0; u < 5; u++)
		ck_assert_uint_eq(store_state(ids[u]), SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(stats().orders_committed, 5);
	assert_books(it);
}
END_TEST

START_TEST(repair_at_attach)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it), c = buy(0, 3, it);
	unsigned cur;

	ck_assert_int_eq(drain_now(NULL), 3);
	/* A predecessor moved the store and died before the arena move. */
	ck_assert_int_eq(sk_store_order_move(sk_control_store(F.ctl), a, SK_ORDER_CONFIRMED,
					     SK_ORDER_CANCELLED, T0, &cur),
			 0);
	ck_assert_int_eq(sk_store_order_move(sk_control_store(F.ctl), b, SK_ORDER_CONFIRMED,
					     SK_ORDER_PAID, T0, &cur),
			 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 7);

	ctl_restart();
	ck_assert_uint_eq(arena_state(a), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(arena_state(b), SK_ORDER_PAID);
	ck_assert_uint_eq(arena_state(c), SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(sk_stock_remaining(it), 8);
	ck_assert_uint_eq(stats().repaired, 2);
	ck_assert_uint_eq(stats().anomalies, 0);
	buy(1, 1, it); /* the cancelled user may buy again */
	ck_assert_int_eq(drain_now(NULL), 1);
	assert_books(it);
}
END_TEST

/* ---------------------------------------------------------------- refusals */

START_TEST(store_refusal_fails_order)
{
	struct sk_item *it = add_item(1, 10, 1);
	struct sk_store_activity act = {
		.item = 1, .per_user_limit = 1, .total = 6, .end_ns = INT64_MAX, .name = "guarded"};
	uint64_t ids[10];
	struct sk_control_drain_info di;

	ck_assert_int_eq(sk_store_activity_put(sk_control_store(F.ctl), &act, T0), 0);
	for (unsigned u = 0; u < 10; u++)
		ids[u] = buy(0, 1 + u, it);
	ck_assert_int_eq(buy_one(0, 99, it), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(drain_now(&di), 10);
	ck_assert_uint_eq(di.orders_new, 6);
	ck_assert_uint_eq(di.orders_failed, 4);
	for (unsigned u = 0; u < 10; u++) {
		ck_assert_uint_eq(arena_state(ids[u]),
				  u < 6 ? SK_ORDER_CONFIRMED : SK_ORDER_FAILED);
		ck_assert_uint_eq(store_state(ids[u]), u < 6 ? SK_ORDER_CONFIRMED : SK_ORDER_NONE);
	}
	ck_assert_uint_eq(sk_shm_settled(F.arena.shm, 0), ids[9] + 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 4); /* failed units back */
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(stats().orders_failed, 4);
	ck_assert_int_eq(sk_control_pay(F.ctl, ids[7], T0, 0), SK_CONTROL_PAY_FAILED);
	assert_books(it);

	/* A failed order re-read after a crash is not stored again. */
	struct sk_order_rec r = {.id = ids[8],
				 .user = 9,
				 .price = 1999,
				 .time_ns = T0,
				 .item = 1,
				 .qty = 1,
				 .nlines = 1};
	ck_assert_int_eq(rte_ring_sp_enqueue_elem(F.arena.ring[0], &r, sizeof(r)), 0);
	ck_assert_int_eq(drain_now(&di), 1);
	ck_assert_uint_eq(store_state(ids[8]), SK_ORDER_NONE);
	ck_assert_uint_eq(stats().orders_failed, 4);
	assert_books(it);
	assert_store_ok();
}
END_TEST

START_TEST(full_map_fails_orders)
{
	struct sk_item *it = add_item(1, 4000, 1);
	uint64_t ids[1500];
	unsigned n = 0, confirmed = 0, failed = 0;

	for (unsigned round = 0; round < 3; round++) {
		for (unsigned u = 0; u < 500; u++, n++)
			ids[n] = buy(n % NLCORES, 1 + n, it);
		for (int k = 0; k < 200 && (rte_ring_count(F.arena.ring[0]) ||
					    rte_ring_count(F.arena.ring[1]));
		     k++)
			ck_assert_int_ge(drain_now(NULL), 0);
	}
	count_confirmed_failed(ids, n, &confirmed, &failed);
	ck_assert_uint_gt(confirmed, 0);
	ck_assert_uint_gt(failed, 0); /* the small map filled up */
	ck_assert_uint_eq(stats().map_grows, 0);
	ck_assert_uint_eq(stats().map_capped, 1); /* what the alert reads */
	ck_assert_uint_eq(sk_stock_remaining(it), 4000 - confirmed);
	assert_books(it);
}
END_TEST

/* A 256 KiB map that may not grow (capped at its size): full stays full. */
static void
fx_setup_small_map(void)
{
	fx_setup_with(64, 256 * 1024);
	sk_control_close(F.ctl);
	F.conf.map_grow.max_size = 256 * 1024;
	ctl_open();
}

void
test_control_add_crash(Suite *s)
{
	TCase *tc;

	tc = tcase_create("crashes");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, replay_after_commit);
	tcase_add_test(tc, replay_after_status_moves);
	tcase_add_test(tc, head_reset_after_peek);
	tcase_add_test(tc, repair_at_attach);
	suite_add_tcase(s, tc);

	tc = tcase_create("refusals");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, store_refusal_fails_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("full_map");
	tcase_add_checked_fixture(tc, fx_setup_small_map, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, full_map_fails_orders);
	suite_add_tcase(s, tc);
}
