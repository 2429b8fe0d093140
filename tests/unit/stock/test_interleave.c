/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deterministic interleavings of the stock protocol. A hook stops one core
 * inside a window of the protocol and runs another core's steps there - the
 * schedules a model checker finds, replayed on the real code. Each test
 * fails on the version of the protocol without the guard it names.
 */
#include <check.h>
#include <stdlib.h>

#include "sk_stock.h"
#include "sk_stock_test.h"
#include "sk_test.h"

static struct sk_item *it;
static int fired;
static int inner_rc;

static struct sk_item *
item_with(uint64_t pool, const uint64_t *buckets, uint32_t nlcores)
{
	struct sk_stock_conf c = {
		.id = 1, .per_user_limit = 9, .end_ns = 1, .total = 0, .nlcores = nlcores};
	struct sk_item *x = aligned_alloc(SK_CACHE_LINE, sizeof(*x));

	ck_assert_int_eq(sk_stock_init(x, &c), 0);
	/* shape the stock as if earlier refills had happened */
	uint64_t sum = pool;
	atomic_store(&x->pool, pool);
	for (uint32_t i = 0; i < nlcores; i++) {
		atomic_store(&x->bucket[i].avail, buckets[i]);
		sum += buckets[i];
	}
	atomic_store(&x->added, sum);
	atomic_store(&x->sold_out, 0);
	return x;
}

/*
 * Guard: the transit counter. Core 0 wants 2 units, gathers the only one
 * (stolen from core 1) and holds it privately; core 2 scans right then and
 * sees zero everywhere. It must not declare sold out, because core 0 gives
 * the unit back when it cannot get a second one.
 */
static void
hook_scan_while_held(struct sk_item *x, unsigned lcore, enum sk_stock_hook_point p)
{
	if (p == SK_STOCK_HOOK_GATHERED && lcore == 0 && !fired) {
		fired = 1;
		inner_rc = sk_stock_take(x, 2, 1);
	}
}

START_TEST(scan_while_units_held)
{
	const uint64_t b[3] = {0, 1, 0};

	it = item_with(0, b, 3);
	fired = 0;
	sk_stock_test_hook = hook_scan_while_held;
	ck_assert_int_eq(sk_stock_take(it, 0, 2), SK_STOCK_SHORT);
	sk_stock_test_hook = NULL;
	ck_assert_int_eq(fired, 1);
	ck_assert_int_ne(inner_rc, SK_STOCK_SOLD_OUT);
	ck_assert_int_eq(inner_rc, SK_STOCK_BUSY);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_stock_take(it, 2, 1), SK_STOCK_OK);
	free(it);
}
END_TEST

/*
 * Guard: a credit clears the flag. The flag goes up (by a core whose scans
 * finished just before core 0 raised transit) while core 0 holds a unit; when
 * core 0 puts it back into its bucket it must clear the flag.
 */
static void
hook_flag_while_held(struct sk_item *x, unsigned lcore, enum sk_stock_hook_point p)
{
	if (p == SK_STOCK_HOOK_GATHERED && lcore == 0 && !fired) {
		fired = 1;
		atomic_store(&x->sold_out, 1);
	}
}

START_TEST(credit_clears_flag)
{
	const uint64_t b[2] = {0, 1};

	it = item_with(0, b, 2);
	fired = 0;
	sk_stock_test_hook = hook_flag_while_held;
	ck_assert_int_eq(sk_stock_take(it, 0, 2), SK_STOCK_SHORT);
	sk_stock_test_hook = NULL;
	ck_assert_int_eq(fired, 1);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

/*
 * Guard: the re-scan after raising the flag. Between core 1's scan and its
 * flag store, another core credited a unit and checked the flag (not yet
 * set), so it did not clear it. The declaring core's re-scan must find the
 * unit, lower the flag and sell it.
 */
static void
hook_late_credit(struct sk_item *x, unsigned lcore, enum sk_stock_hook_point p)
{
	(void)lcore;
	if (p == SK_STOCK_HOOK_FLAG_RAISED && !fired) {
		fired = 1;
		atomic_fetch_add(&x->bucket[0].avail, 1);
	}
}

START_TEST(rescan_after_flag)
{
	const uint64_t b[2] = {0, 0};

	it = item_with(0, b, 2);
	atomic_store(&it->added, 1); /* the unit about to be credited */
	fired = 0;
	sk_stock_test_hook = hook_late_credit;
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	sk_stock_test_hook = NULL;
	ck_assert_int_eq(fired, 1);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 0);
	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_SOLD_OUT);
	ck_assert(sk_stock_is_sold_out(it));
	free(it);
}
END_TEST

/*
 * Liveness: a core that finds nothing to gather stays out of transit. At the
 * end of a sale every lcore's take came to the slow path at once; each
 * gather held transit above zero while it found nothing, so no core's
 * declaration could see the item empty and the buys were answered busy for
 * a long while (16 threads on 16 cpus: 244,000 cycles per unit sold).
 */
static int gathers;

static void
hook_count_gathers(struct sk_item *x, unsigned lcore, enum sk_stock_hook_point p)
{
	(void)x;
	(void)lcore;
	gathers += p == SK_STOCK_HOOK_GATHERED;
}

START_TEST(empty_hand_stays_out_of_transit)
{
	const uint64_t b[4] = {0, 0, 0, 0};

	it = item_with(0, b, 4);
	gathers = 0;
	sk_stock_test_hook = hook_count_gathers;
	ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_SOLD_OUT);
	sk_stock_test_hook = NULL;
	ck_assert_int_eq(gathers, 0);
	ck_assert_uint_eq(atomic_load(&it->transit), 0);
	ck_assert(sk_stock_is_sold_out(it));
	free(it);
}
END_TEST

static Suite *
interleave_suite(void)
{
	Suite *s = suite_create("interleave");
	TCase *tc = tcase_create("windows");

	tcase_add_test(tc, scan_while_units_held);
	tcase_add_test(tc, credit_clears_flag);
	tcase_add_test(tc, rescan_after_flag);
	tcase_add_test(tc, empty_hand_stays_out_of_transit);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(interleave_suite)
