/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, drain: every sold order lands in LMDB, confirmed, settled advanced; carts never
 * split; the linger timer; the attach-by-name layer; init refusals; member number and group;
 * one lcore selling for ever through status-slot reuse and epoch rolls (tcases "drain",
 * "small_batch", "for_ever" of the suite in test_control.c).
 */
#include "sk_reconcile.h"
#include "test_control.h"

#define MS INT64_C(1000000)

static void
fx_setup_small_batch(void)
{
	fx_setup_with(16, 0); /* SK_BUY_MAX_LINES (16) records per ring per drain */
}

/* ------------------------------------------------------------------- drain */

START_TEST(drain_commits_every_order)
{
	struct sk_item *a = add_item(1, 100, 1), *b = add_item(2, 100, 2);
	uint64_t ids[40];
	uint64_t last_id[NLCORES] = {0};
	struct sk_control_drain_info di;

	for (unsigned u = 0; u < 30; u++)
		ids[u] = buy(u % NLCORES, 1000 + u, a);
	for (unsigned u = 0; u < 10; u++) { /* two-line carts */
		struct sk_buy_line l[2] = {{b, 2}, {a, 1}};
		ck_assert_int_eq(buy_lines(u % NLCORES, 5000 + u, l, 2, &ids[30 + u]), SK_BUY_OK);
	}
	for (unsigned i = 0; i < 40; i++)
		last_id[sk_order_id_lcore(ids[i])] = ids[i];
	ck_assert_uint_eq(sk_control_ring_depth(F.ctl, 0) + sk_control_ring_depth(F.ctl, 1), 50);

	ck_assert_int_eq(drain_now(&di), 50);
	ck_assert_uint_eq(di.records, 50);
	ck_assert_uint_eq(di.orders_new, 40);
	ck_assert_uint_eq(di.orders_dup + di.orders_failed, 0);
	for (unsigned i = 0; i < 40; i++) {
		ck_assert_uint_eq(store_state(ids[i]), SK_ORDER_CONFIRMED);
		ck_assert_uint_eq(arena_state(ids[i]), SK_ORDER_CONFIRMED);
	}
	for (unsigned l = 0; l < NLCORES; l++) {
		ck_assert_uint_eq(sk_shm_settled(F.arena.shm, l), last_id[l] + 1);
		ck_assert_uint_eq(rte_ring_count(F.arena.ring[l]), 0);
		ck_assert_uint_eq(F.arena.ring[l]->cons.head, F.arena.ring[l]->cons.tail);
	}
	struct sk_control_stats s = stats();
	ck_assert_uint_eq(s.orders_committed, 40);
	ck_assert_uint_eq(s.units_committed, 60);
	ck_assert_uint_eq(s.batches, 1);
	ck_assert_uint_eq(s.commit_count, 1);
	ck_assert_uint_eq(s.anomalies, 0);

	/* The payment deadline is the sale time plus the timeout. */
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;
	ck_assert_int_eq(sk_store_order_get(sk_control_store(F.ctl), ids[35], l, 8, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(l[0].deadline_ns, T0 + TIMEOUT);

	ck_assert_int_eq(drain_now(&di), 0); /* nothing left */
	assert_store_ok();
	assert_books(a);
	assert_books(b);
}
END_TEST

START_TEST(drain_never_splits_a_cart)
{
	struct sk_item *it[3] = {add_item(1, 100, 50), add_item(2, 100, 50), add_item(3, 100, 50)};
	unsigned orders = 0, records = 0;

	/* 1..3-line carts: 16-record peeks end inside a cart most of the time. */
	for (unsigned u = 0; u < 100; u++) {
		struct sk_buy_line l[3] = {{it[0], 1}, {it[1], 1}, {it[2], 1}};
		uint64_t id;
		ck_assert_int_eq(buy_lines(u % NLCORES, 100 + u, l, u % 3 + 1, &id), SK_BUY_OK);
		records += u % 3 + 1;
	}
	for (int rounds = 0; rounds < 100 && records > 0; rounds++) {
		struct sk_control_drain_info di;
		int rc = drain_now(&di);
		ck_assert_int_ge(rc, 1);
		ck_assert_uint_eq(di.orders_failed, 0);
		orders += di.orders_new;
		records -= (unsigned)rc;
	}
	ck_assert_uint_eq(records, 0);
	ck_assert_uint_eq(orders, 100);
	ck_assert_uint_gt(stats().batches, 5);
	assert_store_ok();
	for (unsigned i = 0; i < 3; i++)
		assert_books(it[i]);
}
END_TEST

START_TEST(drain_waits_for_linger)
{
	struct sk_item *it = add_item(1, 20, 1);

	sk_control_close(F.ctl);
	F.conf.batch_linger_ns = 5 * MS;
	ctl_open();
	buy(0, 1, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, 0, NULL), 0);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 4 * MS, 0, NULL), 0);
	ck_assert_uint_eq(sk_control_ring_depth(F.ctl, 0), 1);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 5 * MS, 0, NULL), 1);
	/* A full per-ring share is committed at once. */
	for (unsigned u = 0; u < 17; u++)
		buy(0, 10 + u, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 6 * MS, 0, NULL), 0);
	sk_control_close(F.ctl);
	F.conf.batch_max = 32; /* quota 16 per ring */
	ctl_open();
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 6 * MS, 0, NULL), 16);
}
END_TEST

START_TEST(attach_by_name)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 4,
				.dedup_slots = 4096,
				.status_bits = 10,
				.epoch = EPOCH + 7};
	size_t sz = sk_shm_size(&c);
	struct rte_ring *rings[NLCORES];
	struct sk_control *ctl = NULL;
	char err[SK_CONTROL_ERR_MAX];

	ck_assert_int_eq(sk_control_attach(&ctl, &F.conf, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "file-prefix"));

	const struct rte_memzone *mz =
		rte_memzone_reserve_aligned(SK_SHM_MEMZONE, sz, SOCKET_ID_ANY, 0, SK_CACHE_LINE);
	ck_assert_ptr_nonnull(mz);
	struct sk_shm *shm = sk_shm_init(mz->addr, mz->len, &c);
	ck_assert_ptr_nonnull(shm);
	rings[0] = sk_order_ring_create(0, 64, SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(rings[0]);
	ck_assert_int_eq(sk_control_attach(&ctl, &F.conf, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "sk_orders_1"));
	rings[1] = sk_order_ring_create(1, 64, SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(rings[1]);

	sk_control_close(F.ctl); /* one store user at a time keeps this simple */
	F.ctl = NULL;
	ck_assert_int_eq(sk_control_attach(&ctl, &F.conf, err, sizeof(err)), 0);
	ck_assert_ptr_eq(sk_control_shm(ctl), shm);
	ck_assert_uint_eq(sk_control_nrings(ctl), NLCORES);

	struct sk_buy_lcore lc;
	struct sk_item *it;
	struct sk_stock_conf ic = {.id = 9, .per_user_limit = 1, .end_ns = INT64_MAX, .total = 5};
	ck_assert_int_eq(sk_shm_item_add(shm, &ic, 0, &it), 0);
	ck_assert_int_eq(sk_buy_lcore_init(&lc, shm, 1, rings[1]), 0);
	struct sk_buy_req r = {.user = 77, .now_ns = T0};
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;
	ck_assert_int_eq(sk_buy(&lc, &r, &l, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(sk_control_drain(ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 1);
	ck_assert_uint_eq(sk_control_order_status(ctl, id), SK_ORDER_CONFIRMED);
	sk_control_heartbeat(ctl, T0 + 3);
	ck_assert_uint_eq(atomic_load(&shm->progress[0].heartbeat_ns), (uint64_t)(T0 + 3));

	sk_control_close(ctl);
	rte_ring_free(rings[0]);
	rte_ring_free(rings[1]);
	rte_memzone_free(mz);
	ctl_open();
}
END_TEST

START_TEST(init_rejects_bad_arguments)
{
	struct sk_control *ctl = NULL;
	struct sk_control_conf c = F.conf;
	char err[SK_CONTROL_ERR_MAX];

	ck_assert_int_eq(sk_control_init(&ctl, F.arena.shm, F.arena.ring, 1, &c, err, sizeof(err)),
			 -EINVAL);
	c.store_dir = NULL;
	ck_assert_int_eq(
		sk_control_init(&ctl, F.arena.shm, F.arena.ring, NLCORES, &c, err, sizeof(err)),
		-EINVAL);
	c = F.conf;
	struct rte_ring *mc = rte_ring_create_elem("sk_test_mc", sizeof(struct sk_order_rec), 64,
						   SOCKET_ID_ANY, 0);
	struct rte_ring *rings[NLCORES] = {F.arena.ring[0], mc};
	ck_assert_ptr_nonnull(mc);
	ck_assert_int_eq(sk_control_init(&ctl, F.arena.shm, rings, NLCORES, &c, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "single-consumer"));
	rte_ring_free(mc);
	ck_assert_ptr_null(ctl);
}
END_TEST

/* The dataplane mints ids with its [cluster] member_id: a control plane of
 * another member number (standalone included) is refused, both ways. */
START_TEST(init_refuses_other_member)
{
	struct sk_control *ctl = NULL;
	struct sk_control_conf c = F.conf;
	char err[SK_CONTROL_ERR_MAX];

	c.member = 2;
	ck_assert_int_eq(
		sk_control_init(&ctl, F.arena.shm, F.arena.ring, NLCORES, &c, err, sizeof(err)),
		-EXDEV);
	ck_assert_ptr_nonnull(strstr(err, "cluster member 0 ([cluster] member_id)"));
	ck_assert_ptr_nonnull(strstr(err, "this control plane is member 2"));
	F.arena.shm->member = 2;
	c.member = 0;
	ck_assert_int_eq(
		sk_control_init(&ctl, F.arena.shm, F.arena.ring, NLCORES, &c, err, sizeof(err)),
		-EXDEV);
	ck_assert_ptr_nonnull(strstr(err, "cluster member 2"));
	F.arena.shm->member = 0;
	ck_assert_ptr_null(ctl);
}
END_TEST

/* A member's number is its position in --cluster-members, from 1; its
 * default payments group is its own, so every member reads every payment. */
START_TEST(member_number_and_group)
{
	char list[] = "a,b,c", group[SK_PAYMENTS_GROUP_MAX];
	struct sk_member_conf mc = {.redis = {.member = "c"}};
	struct sk_payments_conf pc = {.bootstrap = "x"};

	ck_assert_int_eq(sk_member_parse_members(list, &mc), 0);
	ck_assert_uint_eq(sk_member_number(&mc), 3);
	mc.redis.member = "a";
	ck_assert_uint_eq(sk_member_number(&mc), 1);
	mc.redis.member = "z";
	ck_assert_uint_eq(sk_member_number(&mc), 0);

	ck_assert_str_eq(sk_payments_group(&pc, group), SK_PAYMENTS_GROUP_DEFAULT);
	pc.member = "b";
	ck_assert_str_eq(sk_payments_group(&pc, group), "seckill-control-b");
	pc.group = "mine";
	ck_assert_str_eq(sk_payments_group(&pc, group), "mine");
}
END_TEST

/* ---------------------------------------------------------------- for ever */

#define FOREVER_BUYS  13000u /* > 3 epochs of 2^12 sequences, > 3 turns of the status ring */
#define FOREVER_USERS 1000u

/*
 * fx_setup_for_ever - F with lcore 0 rolling its epoch every 2^12 orders
 * (the status table's size): the 2^23 sequences of a real epoch, shrunk.
 */
static void
fx_setup_for_ever(void)
{
	fx_setup();
	F.arena.shm->win[0].seq_bits = 12;
	ck_assert_int_eq(sk_buy_lcore_init(&F.arena.lc[0], F.arena.shm, 0, F.arena.ring[0]), 0);
}

/* drain_all - drain until every ring is empty (bounded). */
static void
drain_all(void)
{
	for (unsigned i = 0; i < 64 && sk_control_ring_depth(F.ctl, 0) > 0; i++)
		ck_assert_int_ge(drain_now(NULL), 0);
	ck_assert_uint_eq(sk_control_ring_depth(F.ctl, 0), 0);
}

/*
 * One lcore sells more orders than its status table holds and than its
 * epoch's sequences: every buy wins, ids are unique and growing, every
 * order is in the store, the books and the reconcile agree; a settled order
 * whose slot was reused is paid and cancelled through the store only.
 */
START_TEST(one_lcore_sells_for_ever)
{
	static uint64_t ids[FOREVER_BUYS];
	struct sk_item *it = add_item(1, FOREVER_BUYS, FOREVER_BUYS / FOREVER_USERS + 1);

	for (unsigned i = 0; i < FOREVER_BUYS; i++) {
		if (i % 512 == 511)
			drain_all();
		ids[i] = buy(0, 1 + i % FOREVER_USERS, it);
		ck_assert(i == 0 || ids[i] > ids[i - 1]);
	}
	drain_all();
	ck_assert_uint_eq(sk_stock_remaining(it), 0);
	ck_assert_uint_ge(sk_order_id_epoch(ids[FOREVER_BUYS - 1]), EPOCH + 5 + 2);
	for (unsigned i = 0; i < FOREVER_BUYS; i++)
		ck_assert_uint_eq(store_state(ids[i]), SK_ORDER_CONFIRMED);
	/* the last 2^12 are in the status table, the first are not */
	ck_assert_uint_eq(arena_state(ids[FOREVER_BUYS - 1]), SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(arena_state(ids[FOREVER_BUYS - 4096]), SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(arena_state(ids[FOREVER_BUYS - 4097]), SK_ORDER_NONE);
	ck_assert_uint_eq(arena_state(ids[0]), SK_ORDER_NONE);
	assert_books(it);
	struct sk_reconcile_info ri;
	ck_assert_int_eq(sk_control_reconcile(F.ctl, T0 + 2 * S, &ri), 0);
	ck_assert_uint_eq(ri.items, 1);
	ck_assert_uint_eq(ri.suspect, 0);

	/* a recycled order: paid in the store, the arena untouched */
	ck_assert_int_eq(sk_control_pay(F.ctl, ids[0], T0 + 2 * S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_uint_eq(store_state(ids[0]), SK_ORDER_PAID);
	/* the others of the first turn expire: cancelled in the store, units back */
	int n = sk_control_expire(F.ctl, T0 + TIMEOUT + S);
	ck_assert_int_ge(n, 1);
	for (unsigned i = 0; i < 64 && n > 0; i++)
		n = sk_control_expire(F.ctl, T0 + TIMEOUT + S);
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(store_state(ids[1]), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(store_state(ids[FOREVER_BUYS - 1]), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(arena_state(ids[FOREVER_BUYS - 1]), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(sk_stock_remaining(it), FOREVER_BUYS - 1);
	assert_books(it);
	ck_assert_uint_eq(stats().anomalies, 0);
	ck_assert_int_eq(sk_control_reconcile(F.ctl, T0 + TIMEOUT + 2 * S, &ri), 0);
	ck_assert_uint_eq(ri.suspect, 0);
	assert_store_ok();
}
END_TEST

void
test_control_add_drain(Suite *s)
{
	TCase *tc;

	tc = tcase_create("drain");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, drain_commits_every_order);
	tcase_add_test(tc, drain_waits_for_linger);
	tcase_add_test(tc, attach_by_name);
	tcase_add_test(tc, init_rejects_bad_arguments);
	tcase_add_test(tc, init_refuses_other_member);
	tcase_add_test(tc, member_number_and_group);
	suite_add_tcase(s, tc);

	tc = tcase_create("small_batch");
	tcase_add_checked_fixture(tc, fx_setup_small_batch, fx_teardown);
	tcase_add_test(tc, drain_never_splits_a_cart);
	suite_add_tcase(s, tc);

	tc = tcase_create("for_ever");
	tcase_add_checked_fixture(tc, fx_setup_for_ever, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_lcore_sells_for_ever);
	suite_add_tcase(s, tc);
}
