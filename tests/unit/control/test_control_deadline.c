/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, deadlines: exactly the units come back and a second wave buys exactly them; orders
 * of an earlier run and of the old id layout; pay results; pay of a queued order; pay racing the
 * timeout (one winner per order) (tcase "deadlines" of the suite in test_control.c).
 */
#include "test_control.h"

/* --------------------------------------------------------------- deadlines */

START_TEST(expire_returns_exactly_the_units)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t ids[10];

	for (unsigned u = 0; u < 10; u++)
		ids[u] = buy(u % NLCORES, 1 + u, it);
	ck_assert_int_eq(buy_one(1, 99, it), SK_BUY_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_int_eq(drain_now(NULL), 10);
	for (unsigned u = 0; u < 3; u++)
		ck_assert_int_eq(sk_control_pay(F.ctl, ids[u], T0 + S, 0), SK_CONTROL_PAY_DONE);

	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT - 1), 0);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 7);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT + S), 0);
	for (unsigned u = 0; u < 10; u++) {
		unsigned want = u < 3 ? SK_ORDER_PAID : SK_ORDER_CANCELLED;
		ck_assert_uint_eq(arena_state(ids[u]), want);
		ck_assert_uint_eq(store_state(ids[u]), want);
	}
	ck_assert_uint_eq(sk_stock_remaining(it), 7);
	ck_assert_uint_eq(atomic_load(&it->returned), 7);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(stats().cancels, 7);
	ck_assert_uint_eq(stats().units_returned, 7);
	assert_books(it);

	/* Second wave: cancelled users and new ones get exactly the 7 units. */
	uint64_t id;
	struct sk_buy_line l = {.item = it, .qty = 1};
	ck_assert_int_eq(buy_lines(0, 1, &l, 1, &id), SK_BUY_DUPLICATE); /* paid user */
	for (unsigned u = 3; u < 10; u++) {
		unsigned user = u < 6 ? 1 + u : 100 + u; /* 3 old, 4 new */
		buy(u % NLCORES, user, it);
	}
	ck_assert_int_eq(buy_lines(1, 999, &l, 1, &id), SK_BUY_SOLD_OUT);
	ck_assert_int_eq(drain_now(NULL), 7);
	assert_books(it);
	assert_store_ok();
}
END_TEST

START_TEST(expire_foreign_order)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t old = sk_order_id_make(EPOCH - 100, 0, 0, 5);
	struct sk_order_rec r = {.id = old,
				 .user = 42,
				 .price = 1999,
				 .time_ns = T0 - 200 * S,
				 .item = 1,
				 .qty = 1,
				 .nlines = 1};
	struct sk_dedup d;

	/* As recovery would leave it: the earlier run's unit counted as sold, the user holding it.
	 */
	ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), &r, 1, TIMEOUT, T0 - 200 * S,
					     NULL, NULL),
			 0);
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	sk_shm_dedup(F.arena.shm, it, &d);
	ck_assert_int_eq(sk_dedup_restore(&d, 42, 1, old), 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 9);

	ck_assert_int_eq(sk_control_expire(F.ctl, T0), 1);
	ck_assert_uint_eq(store_state(old), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(sk_stock_remaining(it), 10);
	ck_assert_uint_eq(stats().cancels_foreign, 1);
	ck_assert_int_eq(sk_control_pay(F.ctl, old, T0, 0), SK_CONTROL_PAY_CANCELLED);
	buy(0, 42, it); /* released: the user may buy again */
	ck_assert(sk_stock_check(it));
	assert_store_ok();
}
END_TEST

/* OLD_ID - an order id of the layout before issue 26 item 13: unix second << 32 | lcore 6 | seq 26.
 */
#define OLD_ID(sec, lc, seq) ((uint64_t)(sec) << 32 | (uint64_t)(lc) << 26 | (seq))

/*
 * An upgraded appliance: its store holds orders of a run that minted ids of
 * the old layout. Recovery, pay, refund, expiry, a winner's retry and the
 * books all work on them; a new sale gets a new-layout id that sorts below
 * them.
 */
START_TEST(upgrade_old_layout_orders)
{
	struct sk_item *it = add_item(1, 10, 1);
	const uint32_t old_run = EPOCH - 86400; /* the day before, with the old code */
	const uint64_t a = OLD_ID(old_run, 0, 1), b = OLD_ID(old_run, 1, 1),
		       c = OLD_ID(old_run, 0, 2);
	struct sk_store *st = sk_control_store(F.ctl);
	struct sk_order_rec r = {.price = 1999, .item = 1, .qty = 1, .nlines = 1};
	struct sk_recover_stats rs;
	struct sk_control_pm_result pm;
	struct sk_control_payment refund = {
		.request = "upgrade-1", .order = a, .kind = SK_STORE_PAY_REFUND};
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;

	/* a and b with a payment deadline (T0 - 140 s), c without. */
	r.id = a, r.user = 41, r.time_ns = T0 - 200 * S;
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, TIMEOUT, T0 - 200 * S, NULL, NULL), 0);
	r.id = b, r.user = 42;
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, TIMEOUT, T0 - 200 * S, NULL, NULL), 0);
	r.id = c, r.user = 43;
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, T0 - 200 * S, NULL, NULL), 0);
	/* The decoders read them as a run in 2037-2038, never this one. */
	ck_assert_uint_ne(sk_order_id_epoch(a), EPOCH);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_NONE);

	/* The dataplane's start: the three holdings come back. */
	ck_assert_int_eq(sk_recover_item(st, F.arena.shm, it, &rs), 0);
	ck_assert_uint_eq(rs.units, 3);
	ck_assert_uint_eq(rs.users, 3);
	ck_assert_uint_eq(sk_stock_remaining(it), 7);

	/* a: paid, then refunded (units back on sale). */
	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0 - 150 * S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(store_state(a), SK_ORDER_PAID);
	ck_assert_int_eq(sk_control_payment(F.ctl, &refund, T0 - 100 * S, 0, &pm), 0);
	ck_assert_uint_eq(pm.outcome, SK_CONTROL_PM_DONE);
	ck_assert_uint_eq(store_state(a), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(sk_stock_remaining(it), 8);

	/* b: unpaid at its deadline, cancelled as an order of another run. */
	ck_assert_int_eq(sk_control_expire(F.ctl, T0), 1);
	ck_assert_uint_eq(store_state(b), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(stats().cancels_foreign, 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 9);
	/* Paying it late changes nothing: its unit is not given back twice. */
	ck_assert_int_eq(sk_control_pay(F.ctl, b, T0, 0), SK_CONTROL_PAY_CANCELLED);
	ck_assert_int_eq(sk_control_pay(F.ctl, b, T0, 0), SK_CONTROL_PAY_CANCELLED);
	ck_assert_uint_eq(sk_stock_remaining(it), 9);

	/* c: its winner's retry gets the old id back; it is still payable. */
	ck_assert_int_eq(buy_lines(0, 43, &l, 1, &id), SK_BUY_DUPLICATE);
	ck_assert_uint_eq(id, c);
	ck_assert_uint_eq(store_state(c), SK_ORDER_CONFIRMED);

	/* A new sale (a's and b's users buy again) gets new-layout ids below the old ones. */
	uint64_t n1 = buy(0, 41, it), n2 = buy(1, 42, it);
	ck_assert_int_eq(drain_now(NULL), 2);
	ck_assert_uint_eq(store_state(n1), SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(store_state(n2), SK_ORDER_CONFIRMED);
	ck_assert_uint_lt(n1, c);
	ck_assert_uint_eq(sk_order_id_epoch(n1), EPOCH);
	ck_assert_int_eq(sk_control_pay(F.ctl, c, T0 + S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(store_state(c), SK_ORDER_PAID);
	ck_assert_uint_eq(sk_stock_remaining(it), 7);
	ck_assert_uint_eq(stats().anomalies, 0);
	assert_books(it);
	assert_store_ok();
}
END_TEST

START_TEST(pay_results)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it);

	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0, 0), SK_CONTROL_PAY_QUEUED);
	ck_assert_int_eq(sk_control_pay(F.ctl, sk_order_id_make(EPOCH, 0, 0, 999), T0, 0),
			 SK_CONTROL_PAY_UNKNOWN);
	ck_assert_int_eq(sk_control_pay(F.ctl, 12345, T0, 0), SK_CONTROL_PAY_UNKNOWN);
	ck_assert_int_eq(drain_now(NULL), 2);
	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0 + S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_PAID);
	ck_assert_uint_eq(store_state(a), SK_ORDER_PAID);
	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0 + 2 * S, 0), SK_CONTROL_PAY_ALREADY);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 1); /* b only */
	ck_assert_uint_eq(arena_state(a), SK_ORDER_PAID);
	ck_assert_int_eq(sk_control_pay(F.ctl, b, T0 + TIMEOUT, 0), SK_CONTROL_PAY_CANCELLED);
	ck_assert_uint_eq(arena_state(b), SK_ORDER_CANCELLED);
	struct sk_control_stats s = stats();
	ck_assert_uint_eq(s.pay[SK_CONTROL_PAY_DONE], 1);
	ck_assert_uint_eq(s.pay[SK_CONTROL_PAY_ALREADY], 1);
	ck_assert_uint_eq(s.pay[SK_CONTROL_PAY_CANCELLED], 1);
	ck_assert_uint_eq(s.pay[SK_CONTROL_PAY_QUEUED], 1);
	ck_assert_uint_eq(s.pay[SK_CONTROL_PAY_UNKNOWN], 2);
	ck_assert_str_eq(sk_control_pay_result_name(SK_CONTROL_PAY_ALREADY), "already_paid");
	assert_books(it);
}
END_TEST

struct drainer {
	volatile bool stop;
};

static void *
drain_thread(void *arg)
{
	struct drainer *d = arg;

	while (!d->stop) {
		ck_assert_int_ge(sk_control_drain(F.ctl, T0 + S, 0, NULL), 0);
		usleep(2000);
	}
	return NULL;
}

START_TEST(pay_waits_for_queued_order)
{
	struct sk_item *it = add_item(1, 10, 1);
	struct drainer d = {0};
	pthread_t t;
	uint64_t id = buy(0, 1, it);

	ck_assert_int_eq(pthread_create(&t, NULL, drain_thread, &d), 0);
	int res = sk_control_pay(F.ctl, id, T0 + S, 1000);
	d.stop = true;
	pthread_join(t, NULL);
	ck_assert_int_eq(res, SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(arena_state(id), SK_ORDER_PAID);
}
END_TEST

START_TEST(pay_races_timeout)
{
	race_timeout(false);
}
END_TEST

void
test_control_add_deadline(Suite *s)
{
	TCase *tc;

	tc = tcase_create("deadlines");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, expire_returns_exactly_the_units);
	tcase_add_test(tc, expire_foreign_order);
	tcase_add_test(tc, upgrade_old_layout_orders);
	tcase_add_test(tc, pay_results);
	tcase_add_test(tc, pay_waits_for_queued_order);
	tcase_add_test(tc, pay_races_timeout);
	suite_add_tcase(s, tc);
}
