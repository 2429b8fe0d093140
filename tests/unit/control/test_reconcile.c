/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the reconcile (control/sk_reconcile.h): the rule as a
 * table, and the control plane's periodic run on an arena in plain memory
 * with real rte_rings (EAL in --no-huge mode) and an LMDB store in a
 * temporary directory:
 *
 *   rule:      stock and store verdicts and differences, in-flight bounds,
 *              counters near 2^64
 *   in flight: orders waiting in the rings (whole, or more than one
 *              drain's share) are no mismatch; a drain changes nothing
 *   planted:   units sold without an order, units invented in the pool,
 *              units returned while LMDB holds them live: suspect at once,
 *              reported SK_RECONCILE_CONFIRM_NS later (metrics: mismatch 1
 *              and the difference), cleared by the first run that adds up
 *   sale:      two buyer threads sell (lcores 0 and 1) while the main
 *              thread drains every 20 ms and reconciles on the wall clock
 *              for 2.5 s: never a mismatch, at most 1 run in 20 with orders
 *              in flight suspect, and most runs did see orders in flight
 *   metrics:   the reconcile families, ring capacity, dataplane up
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ring.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_reconcile.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"

#define EPOCH	1764000000u
#define S	INT64_C(1000000000)
#define MS	INT64_C(1000000)
#define T0	((int64_t)EPOCH * S + 5 * S)
#define NLCORES 2
#define RING_SZ 1024

static struct {
	struct sk_test_arena arena;
	struct sk_control *ctl;
	struct sk_control_conf conf;
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
} F;

/* ------------------------------------------------------------------ fixture */

static void
fx_setup_with(uint32_t batch_max)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 8,
				.dedup_slots = 1u << 20,
				.status_bits = 20,
				.epoch = EPOCH};
	char err[SK_CONTROL_ERR_MAX];

	memset(&F, 0, sizeof(F));
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, RING_SZ);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-reconcile-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	F.conf = (struct sk_control_conf){.store_dir = F.store,
					  .store_flags = SK_STORE_NOSYNC,
					  .pay_timeout_ns = 3600 * S,
					  .batch_max = batch_max};
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &F.conf, err,
				 sizeof(err));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
}

static void
fx_setup(void)
{
	fx_setup_with(0);
}

static void
fx_setup_small_batch(void)
{
	fx_setup_with(16); /* 8 records per ring per drain, raised to one cart (16) */
}

static void
fx_teardown(void)
{
	sk_control_close(F.ctl);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

/* ------------------------------------------------------------------ helpers */

static struct sk_item *
add_item(uint32_t id, uint64_t total)
{
	struct sk_stock_conf c = {
		.id = id, .per_user_limit = 1, .end_ns = INT64_MAX, .price = 100, .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	return it;
}

/* buy - one unit of @it for @user on @lcore; asserts success. */
static void
buy(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};
	uint64_t id;
	enum sk_buy_status s = sk_buy(&F.arena.lc[lcore], &r, &l, 1, &id);

	ck_assert_msg(s == SK_BUY_OK, "buy user %" PRIu64 ": %s", user, sk_buy_status_name(s));
}

/* run - one reconcile run at @now; its info (asserts success). */
static struct sk_reconcile_info
run(int64_t now)
{
	struct sk_reconcile_info ri;

	ck_assert_int_eq(sk_control_reconcile(F.ctl, now, &ri), 0);
	return ri;
}

/* raw_gap - sold - returned - LMDB live of item @id: the units in flight at rest. */
static int64_t
raw_gap(uint32_t id)
{
	struct sk_control_item ci;

	ck_assert_int_eq(sk_control_item_get(F.ctl, id, &ci), 0);
	return (int64_t)(ci.sold - ci.returned - sk_store_ledger_live(&ci.ledger));
}

static char *
metrics_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_control_metrics(F.ctl, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* assert_metric - the metrics text holds the sample line @line. */
static void
assert_metric(const char *line)
{
	char *m = metrics_text(), want[256];
	bool found;

	ck_assert_ptr_nonnull(m);
	snprintf(want, sizeof(want), "\n%s\n", line);
	found = strstr(m, want) != NULL;
	if (!found)
		fputs(m, stderr);
	ck_assert_msg(found, "no line '%s' in the metrics (printed above)", line);
	free(m);
}

static int64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * S + ts.tv_nsec;
}

/* --------------------------------------------------------------------- rule */

START_TEST(rule_table)
{
	static const struct {
		struct sk_reconcile_in in;
		int64_t stock, store;
	} t[] = {
		/* at rest, all agree */
		{{100, 0, 60, 40, 0, 40, 0, 0, 0}, 0, 0},
		{{100, 20, 70, 60, 10, 50, 0, 0, 0}, 0, 0},
		/* stock: a unit missing from the arena, a unit invented */
		{{100, 0, 59, 40, 0, 40, 0, 0, 0}, 1, 0},
		{{100, 0, 61, 40, 0, 40, 0, 0, 0}, -1, 0},
		/* store: 3 units sold whose orders LMDB lacks; 2 more live than sold */
		{{100, 0, 57, 43, 0, 40, 0, 0, 0}, 0, 3},
		{{100, 0, 62, 38, 0, 40, 0, 0, 0}, 0, -2},
		/* in flight: inside [min, max] is fine, outside by how much */
		{{100, 0, 50, 50, 0, 40, 10, 10, 0}, 0, 0},
		{{100, 0, 50, 50, 0, 40, 8, 12, 0}, 0, 0},
		{{100, 0, 50, 50, 0, 40, 11, 12, 0}, 0, -1},
		{{100, 0, 50, 50, 0, 40, 2, 7, 0}, 0, 3},
		{{100, 0, 50, 50, 0, 40, 0, UINT64_MAX, 0}, 0, 0},
		{{100, 0, 62, 38, 0, 40, 0, UINT64_MAX, 0}, 0, -2},
		{{100, 0, 62, 38, 0, 40, 5, UINT64_MAX, 0}, 0, -7},
		/* returns: units back in the pool, LMDB's live units down as well */
		{{100, 0, 65, 40, 5, 35, 0, 0, 0}, 0, 0},
		{{100, 0, 65, 40, 5, 40, 0, 0, 0}, 0, -5},
		/* near 2^64: exact differences, no overflow */
		{{UINT64_MAX - 10, 5, UINT64_MAX - 10, 5, 0, 5, 0, 0, 0}, 0, 0},
		{{UINT64_MAX - 10, 5, UINT64_MAX - 11, 5, 0, 5, 0, 0, 0}, 1, 0},
		{{0, 0, 0, 0, 0, UINT64_C(1) << 61, 0, 0, 0}, 0, -(INT64_C(1) << 61)},
		/* removals: unsold units taken back are neither remaining nor sold */
		{{100, 20, 50, 60, 10, 50, 0, 0, 20}, 0, 0},
		{{100, 20, 70, 60, 10, 50, 0, 0, 20}, -20, 0},
		{{100, 0, 0, 40, 0, 40, 0, 0, 61}, -1, 0},
	};

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sk_reconcile_out o;

		memset(&o, 0xa5, sizeof(o));
		sk_reconcile_item(&t[i].in, &o);
		ck_assert_msg(o.stock_diff == t[i].stock && o.store_diff == t[i].store,
			      "case %u: stock %" PRId64 " store %" PRId64 ", want %" PRId64
			      " %" PRId64,
			      i, o.stock_diff, o.store_diff, t[i].stock, t[i].store);
		ck_assert_int_eq(o.stock_ok, t[i].stock == 0);
		ck_assert_int_eq(o.store_ok, t[i].store == 0);
	}
}
END_TEST

/* --------------------------------------------------------------- in flight */

START_TEST(orders_in_flight_are_no_mismatch)
{
	struct sk_item *it = add_item(1, 100);
	struct sk_reconcile_info ri;

	for (uint64_t u = 1; u <= 30; u++)
		buy(u % NLCORES, u, it);
	ck_assert_int_eq(raw_gap(1), 30); /* the rings hold them: LMDB has none */
	for (int k = 0; k < 3; k++) {
		ri = run(T0 + k * S);
		ck_assert_uint_eq(ri.items, 1);
		ck_assert_uint_eq(ri.suspect, 0);
		ck_assert_uint_eq(ri.mismatches, 0);
		ck_assert(!ri.partial);
	}
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 30);
	ck_assert_int_eq(raw_gap(1), 0);
	for (uint64_t u = 31; u <= 40; u++)
		buy(0, u, it);
	ri = run(T0 + 5 * S);
	ck_assert_uint_eq(ri.suspect, 0);
	assert_metric("seckill_reconcile_mismatch{item=\"1\"} 0");
	assert_metric("seckill_reconcile_runs_total{result=\"ok\"} 4");
	assert_metric("seckill_reconcile_runs_total{result=\"mismatch\"} 0");
	assert_metric("seckill_reconcile_last_run_timestamp_seconds 1764000010.000");
}
END_TEST

START_TEST(deep_ring_is_partial_not_mismatch)
{
	struct sk_item *it = add_item(1, 100);
	struct sk_reconcile_info ri;

	/* 40 records in lcore 0's ring; one drain takes its quota per ring,
	 * the batch (8) raised to a whole cart (SK_BUY_MAX_LINES, 16): 24
	 * are left, more than a quota */
	for (uint64_t u = 1; u <= 40; u++)
		buy(0, u, it);
	ri = run(T0);
	ck_assert(ri.partial);
	ck_assert_uint_eq(ri.suspect, 0);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), SK_BUY_MAX_LINES);
	ri = run(T0 + 2 * S);
	ck_assert(ri.partial);
	ck_assert_uint_eq(ri.suspect, 0);
	assert_metric("seckill_reconcile_runs_total{result=\"partial\"} 2");

	/* a partial run still sees LMDB holding more than the arena sold */
	atomic_fetch_add(&it->returned, 30);
	atomic_fetch_add(&it->pool, 30);
	ri = run(T0 + 3 * S);
	ck_assert(ri.partial);
	ck_assert_uint_eq(ri.suspect, 1);
	ri = run(T0 + 4 * S);
	ck_assert_uint_eq(ri.mismatches, 1);
	ck_assert_int_lt(raw_gap(1), 0);
}
END_TEST

/* ----------------------------------------------------------------- planted */

/* plant - one way the counters can go wrong, and its undoing. */
struct plant {
	const char *what;
	int64_t pool, sold, returned; /* added to the item's counters (sold: lcore 0) */
	const char *check;	      /* the check that reports it */
	int64_t diff;		      /* the difference it reports */
};

static void
apply(struct sk_item *it, const struct plant *p, int sign)
{
	atomic_fetch_add(&it->pool, (uint64_t)(sign * p->pool));
	atomic_fetch_add(&it->bucket[0].sold, (uint64_t)(sign * p->sold));
	atomic_fetch_add(&it->returned, (uint64_t)(sign * p->returned));
}

START_TEST(planted_mismatch_is_reported)
{
	static const struct plant plants[] = {
		{"3 units sold without an order", -3, 3, 0, "store", 3},
		{"5 units invented in the pool", 5, 0, 0, "stock", -5},
		{"2 units returned that LMDB holds live", 2, 0, 2, "store", -2},
		{"a unit missing from the arena", -1, 0, 0, "stock", 1},
	};
	struct sk_item *it = add_item(7, 1000);
	struct sk_reconcile_info ri;
	char line[160];
	int64_t t = T0;

	for (uint64_t u = 1; u <= 12; u++)
		buy(u % NLCORES, u, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 12);
	for (uint64_t u = 13; u <= 16; u++) /* and some in flight */
		buy(u % NLCORES, u, it);

	for (unsigned i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		const struct plant *p = &plants[i];

		apply(it, p, 1);
		ri = run(t);
		ck_assert_msg(ri.suspect == 1 && ri.mismatches == 0, "%s: suspect %u reported %u",
			      p->what, ri.suspect, ri.mismatches);
		assert_metric("seckill_reconcile_mismatch{item=\"7\"} 0");
		ri = run(t + SK_RECONCILE_CONFIRM_NS / 2);
		ck_assert_msg(ri.mismatches == 0, "%s: reported before the delay", p->what);
		ri = run(t + SK_RECONCILE_CONFIRM_NS);
		ck_assert_msg(ri.mismatches == 1, "%s: not reported", p->what);
		assert_metric("seckill_reconcile_mismatch{item=\"7\"} 1");
		snprintf(line, sizeof(line),
			 "seckill_reconcile_difference_units{item=\"7\",check=\"%s\"} %" PRId64,
			 p->check, p->diff);
		assert_metric(line);
		snprintf(line, sizeof(line),
			 "seckill_reconcile_difference_units{item=\"7\",check=\"%s\"} 0",
			 strcmp(p->check, "stock") == 0 ? "store" : "stock");
		assert_metric(line);

		apply(it, p, -1);
		ri = run(t + 2 * S);
		ck_assert_msg(ri.suspect == 0 && ri.mismatches == 0, "%s: not cleared", p->what);
		assert_metric("seckill_reconcile_mismatch{item=\"7\"} 0");
		t += 10 * S;
	}
	assert_metric("seckill_reconcile_runs_total{result=\"mismatch\"} 4");
}
END_TEST

START_TEST(only_the_bad_item_is_reported)
{
	struct sk_item *a = add_item(1, 50), *b = add_item(2, 50);
	struct sk_reconcile_info ri;

	for (uint64_t u = 1; u <= 10; u++) {
		buy(0, u, a);
		buy(1, u, b);
	}
	atomic_fetch_add(&b->bucket[1].sold, 4); /* four units of b sold twice */
	atomic_fetch_sub(&b->pool, 4);
	run(T0);
	ri = run(T0 + 2 * S);
	ck_assert_uint_eq(ri.items, 2);
	ck_assert_uint_eq(ri.mismatches, 1);
	assert_metric("seckill_reconcile_mismatch{item=\"1\"} 0");
	assert_metric("seckill_reconcile_mismatch{item=\"2\"} 1");
	assert_metric("seckill_reconcile_difference_units{item=\"2\",check=\"store\"} 4");
	/* the rings drain: the four units still have no order */
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 20);
	ri = run(T0 + 3 * S);
	ck_assert_uint_eq(ri.mismatches, 1);
	ck_assert_int_eq(raw_gap(2), 4);
}
END_TEST

/* -------------------------------------------------------------------- sale */

struct buyer {
	unsigned lcore;
	struct sk_item *it;
	uint64_t user0;
	volatile int *stop;
	uint64_t won, busy;
};

/* buyer_main - buys of 1 or 2 units by new users, 16 a millisecond, until stopped. */
static void *
buyer_main(void *arg)
{
	struct buyer *b = arg;
	struct sk_buy_req r = {.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};
	const struct timespec pace = {0, 1000000};

	for (uint64_t u = 0; u < 1000000 && !__atomic_load_n(b->stop, __ATOMIC_ACQUIRE); u++) {
		struct sk_buy_line l = {.item = b->it, .qty = 1 + (unsigned)(u % 3 == 0)};
		uint64_t id;

		r.user = b->user0 + u;
		enum sk_buy_status s = sk_buy(&F.arena.lc[b->lcore], &r, &l, 1, &id);
		if (s == SK_BUY_OK)
			b->won++;
		else if (s == SK_BUY_BUSY)
			b->busy++;
		else if (s == SK_BUY_SOLD_OUT)
			break;
		if (u % 16 == 15)
			nanosleep(&pace, NULL);
	}
	return NULL;
}

START_TEST(sale_running_no_false_mismatch)
{
	/* limit 2 so that the 2-unit buys pass */
	struct sk_stock_conf c = {
		.id = 9, .per_user_limit = 2, .end_ns = INT64_MAX, .price = 100, .total = 150000};
	struct sk_item *it;
	volatile int stop = 0;
	struct buyer b[NLCORES];
	pthread_t th[NLCORES];
	unsigned runs = 0, runs_in_flight = 0, suspect_runs = 0;
	const struct timespec pace = {0, 200000};
	int64_t start = wall_ns(), last_drain = start, elapsed = 0;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	for (unsigned l = 0; l < NLCORES; l++) {
		b[l] = (struct buyer){
			.lcore = l, .it = it, .user0 = 1 + l * 10000000ull, .stop = &stop};
		ck_assert_int_eq(pthread_create(&th[l], NULL, buyer_main, &b[l]), 0);
	}
	/*
	 * 2.5 s of wall clock (the confirmation delay is 1 s): a drain every
	 * 20 ms, so the rings hold orders most of the time, and a run every
	 * 0.2 ms; 100,000 passes at most.
	 */
	for (unsigned pass = 0; pass < 100000 && elapsed < 5 * S / 2; pass++) {
		struct sk_reconcile_info ri;
		unsigned depth = 0;
		int64_t now = wall_ns();

		if (now - last_drain >= 20 * MS) {
			ck_assert_int_ge(sk_control_drain(F.ctl, now, SK_CONTROL_DRAIN_NOW, NULL),
					 0);
			last_drain = now;
		}
		for (unsigned l = 0; l < NLCORES; l++)
			depth += sk_control_ring_depth(F.ctl, l);
		ri = run(wall_ns());
		runs++;
		runs_in_flight += depth > 0;
		suspect_runs += ri.suspect > 0;
		ck_assert_msg(ri.mismatches == 0, "pass %u: a mismatch reported during the sale",
			      pass);
		nanosleep(&pace, NULL);
		elapsed = wall_ns() - start;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (unsigned l = 0; l < NLCORES; l++)
		ck_assert_int_eq(pthread_join(th[l], NULL), 0);
	printf("sale: %u runs in %.2f s, %u with orders in flight, %u suspect; won %" PRIu64
	       "+%" PRIu64 ", busy %" PRIu64 "+%" PRIu64 "\n",
	       runs, (double)elapsed / 1e9, runs_in_flight, suspect_runs, b[0].won, b[1].won,
	       b[0].busy, b[1].busy);
	/* the sale kept orders in flight through most runs, for longer than the delay */
	ck_assert_int_ge(elapsed, 2 * S);
	ck_assert_uint_ge(runs_in_flight, 100);
	ck_assert_uint_ge(2 * runs_in_flight, runs);
	/* a snapshot torn by a buy in progress is rare; in-flight orders never count */
	ck_assert_uint_le(20 * suspect_runs, runs_in_flight);

	/* at rest: drained, one run adds up at once */
	for (int k = 0; k < 1000; k++)
		if (sk_control_drain(F.ctl, wall_ns(), SK_CONTROL_DRAIN_NOW, NULL) == 0)
			break;
	ck_assert_int_eq(raw_gap(9), 0);
	struct sk_reconcile_info ri = run(wall_ns());
	ck_assert_uint_eq(ri.suspect, 0);
	ck_assert_uint_eq(ri.mismatches, 0);
}
END_TEST

/* ----------------------------------------------------------------- metrics */

START_TEST(metrics_families)
{
	char line[128];
	char *m;

	assert_metric("seckill_reconcile_last_run_timestamp_seconds 0.000");
	m = metrics_text();
	ck_assert_ptr_null(strstr(m, "seckill_reconcile_mismatch{")); /* nothing checked yet */
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_reconcile_mismatch gauge\n"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_reconcile_difference_units gauge\n"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_reconcile_runs_total counter\n"));
	ck_assert_ptr_nonnull(
		strstr(m, "# TYPE seckill_reconcile_last_run_timestamp_seconds gauge\n"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_ring_capacity gauge\n"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_dataplane_up gauge\n"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE seckill_stock_initial gauge\n"));
	free(m);
	for (unsigned l = 0; l < NLCORES; l++) {
		snprintf(line, sizeof(line), "seckill_ring_capacity{lcore=\"%u\"} %u", l,
			 rte_ring_get_capacity(F.arena.ring[l]));
		assert_metric(line);
	}
	assert_metric("seckill_ring_capacity{lcore=\"0\"} 1023");
	assert_metric("seckill_dataplane_up 1"); /* arena given by pointer: this process */
	add_item(3, 10);
	run(T0);
	assert_metric("seckill_reconcile_mismatch{item=\"3\"} 0");
	assert_metric("seckill_reconcile_difference_units{item=\"3\",check=\"stock\"} 0");
	assert_metric("seckill_reconcile_difference_units{item=\"3\",check=\"store\"} 0");
	assert_metric("seckill_stock_initial{item=\"3\"} 10");
}
END_TEST

static Suite *
reconcile_suite(void)
{
	Suite *s = suite_create("reconcile");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, rule_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, orders_in_flight_are_no_mismatch);
	tcase_add_test(tc, planted_mismatch_is_reported);
	tcase_add_test(tc, only_the_bad_item_is_reported);
	tcase_add_test(tc, sale_running_no_false_mismatch);
	tcase_add_test(tc, metrics_families);
	suite_add_tcase(s, tc);

	tc = tcase_create("small_batch");
	tcase_add_checked_fixture(tc, fx_setup_small_batch, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, deep_ring_is_partial_not_mismatch);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(reconcile_suite, "test_reconcile")
