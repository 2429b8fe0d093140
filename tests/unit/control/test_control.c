/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the control plane (control/sk_control.h, sk_admin.h) and of
 * the seckillctl binary, in one process with the EAL in --no-huge mode: an
 * arena in plain memory, real rte_rings, buys through sk_buy(), and an LMDB
 * store in a temporary directory per test.
 *
 *   drain:     every sold order lands in LMDB, confirmed, settled advanced;
 *              carts never split; the linger timer; the attach-by-name layer
 *   crashes:   replay after commit (before finish, with and without status
 *              moves), the consumer-head reset (peek without finish), repair
 *              of a cancel or pay the arena missed
 *   refusals:  oversell guard and a full map -> failed, units returned
 *   deadlines: exactly the units come back and a second wave buys exactly
 *              them; orders of an earlier run; pay racing the timeout (one
 *              winner per order); pay of a cancelled / failed / queued order
 *   views:     metrics text parses; every admin route and status; seckillctl
 *              over TCP and a unix socket, exit codes, reconcile
 *
 * argv[1] is the seckillctl binary.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_activity.h"
#include "sk_admin.h"
#include "sk_exporter.h"
#include "sk_payments_consumer.h"
#include "sk_buy.h"
#include "sk_control.h"
#include "sk_member.h"
#include "sk_recover.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"
#include "sk_test_metrics.h"

#define EPOCH	 1764000000u
#define S	 INT64_C(1000000000)
#define MS	 INT64_C(1000000)
#define T0	 ((int64_t)EPOCH * S + 5 * S) /* sale time of every buy */
#define TIMEOUT	 (60 * S)		      /* payment timeout of the fixture */
#define NLCORES	 2
#define RING_SZ	 1024
#define MAX_LINE 4096

static const char *seckillctl_path;

struct fx {
	struct sk_test_arena arena; /* NLCORES lcores: rings, buy contexts */
	struct sk_control *ctl;
	struct sk_control_conf conf;
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
};

static struct fx F;

/* ------------------------------------------------------------------ fixture */

static void
ctl_open(void)
{
	char err[SK_CONTROL_ERR_MAX];
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &F.conf, err,
				 sizeof(err));

	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
}

/* ctl_restart - a new control plane on the same arena, rings and store. */
static void
ctl_restart(void)
{
	sk_control_close(F.ctl);
	F.ctl = NULL;
	ctl_open();
}

static void
fx_setup_with(uint32_t batch_max, uint64_t map_size)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 8,
				.dedup_slots = 16384,
				.status_bits = 12,
				.epoch = EPOCH};

	memset(&F, 0, sizeof(F));
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, RING_SZ);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-control-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	F.conf = (struct sk_control_conf){.store_dir = F.store,
					  .store_flags = SK_STORE_NOSYNC,
					  .store_map_size = map_size,
					  .pay_timeout_ns = TIMEOUT,
					  .batch_max = batch_max};
	ctl_open();
}

static void
fx_setup(void)
{
	fx_setup_with(0, 0);
}

static void
fx_setup_small_batch(void)
{
	fx_setup_with(16, 0); /* 8 records per ring per drain */
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
add_item(uint32_t id, uint64_t total, uint32_t limit)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = limit,
				  .end_ns = INT64_MAX,
				  .price = 1999,
				  .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	return it;
}

static enum sk_buy_status
buy_lines(unsigned lcore, uint64_t user, struct sk_buy_line *l, unsigned n, uint64_t *order)
{
	struct sk_buy_req r = {.user = user, .client_ip = 0x020012c6, .now_ns = T0};

	return sk_buy(&F.arena.lc[lcore], &r, l, n, order);
}

static enum sk_buy_status
buy_one(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;

	return buy_lines(lcore, user, &l, 1, &id);
}

/* buy - one unit of @it for @user on @lcore; the order id (asserts success). */
static uint64_t
buy(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;
	enum sk_buy_status s = buy_lines(lcore, user, &l, 1, &id);

	ck_assert_msg(s == SK_BUY_OK, "buy user %lu: %s", (unsigned long)user,
		      sk_buy_status_name(s));
	return id;
}

static int
drain_now(struct sk_control_drain_info *di)
{
	return sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, di);
}

static unsigned
store_state(uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;
	int rc = sk_store_order_get(sk_control_store(F.ctl), id, l, SK_STORE_MAX_LINES, &n);

	return rc == 0 ? l[0].state : SK_ORDER_NONE;
}

static unsigned
arena_state(uint64_t id)
{
	return sk_control_order_status(F.ctl, id);
}

static void
assert_store_ok(void)
{
	char err[SK_STORE_ERR_MAX];
	int rc = sk_store_verify(sk_control_store(F.ctl), err, sizeof(err));

	ck_assert_msg(rc == 0, "store verify: %d %s", rc, err);
}

/* assert_books - arena accounting holds and the store's live units equal sold - returned. */
static void
assert_books(struct sk_item *it)
{
	struct sk_control_item ci;

	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_control_item_get(F.ctl, it->id, &ci), 0);
	ck_assert_uint_eq(ci.total + ci.added, ci.remaining + ci.sold - ci.returned);
	ck_assert_uint_eq(sk_store_ledger_live(&ci.ledger), ci.sold - ci.returned);
}

static struct sk_control_stats
stats(void)
{
	struct sk_control_stats s;

	sk_control_stats(F.ctl, &s);
	return s;
}

/* ------------------------------------------------------------------- drain */

START_TEST(drain_commits_every_order)
{
	struct sk_item *a = add_item(1, 100, 1), *b = add_item(2, 100, 2);
	uint64_t ids[40];
	uint32_t last_seq[NLCORES] = {0};
	struct sk_control_drain_info di;

	for (unsigned u = 0; u < 30; u++)
		ids[u] = buy(u % NLCORES, 1000 + u, a);
	for (unsigned u = 0; u < 10; u++) { /* two-line carts */
		struct sk_buy_line l[2] = {{b, 2}, {a, 1}};
		ck_assert_int_eq(buy_lines(u % NLCORES, 5000 + u, l, 2, &ids[30 + u]), SK_BUY_OK);
	}
	for (unsigned i = 0; i < 40; i++)
		last_seq[sk_order_id_lcore(ids[i])] = sk_order_id_seq(ids[i]);
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
		ck_assert_uint_eq(sk_shm_settled(F.arena.shm, l), last_seq[l] + 1);
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

	/* 3-line carts: 8-record peeks end inside a cart most of the time. */
	for (unsigned u = 0; u < 40; u++) {
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
	ck_assert_uint_eq(orders, 40);
	ck_assert_uint_gt(stats().batches, 5);
	assert_store_ok();
	for (unsigned i = 0; i < 3; i++)
		assert_books(it[i]);
}
END_TEST

START_TEST(drain_waits_for_linger)
{
	struct sk_item *it = add_item(1, 10, 1);

	sk_control_close(F.ctl);
	F.conf.batch_linger_ns = 5 * MS;
	ctl_open();
	buy(0, 1, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, 0, NULL), 0);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 4 * MS, 0, NULL), 0);
	ck_assert_uint_eq(sk_control_ring_depth(F.ctl, 0), 1);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 5 * MS, 0, NULL), 1);
	/* A full per-ring share is committed at once. */
	for (unsigned u = 0; u < 9; u++)
		buy(0, 10 + u, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 6 * MS, 0, NULL), 0);
	sk_control_close(F.ctl);
	F.conf.batch_max = 16; /* quota 8 per ring */
	ctl_open();
	ck_assert_int_eq(sk_control_drain(F.ctl, T0 + 6 * MS, 0, NULL), 8);
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
		ck_assert_uint_eq(sk_shm_settled(F.arena.shm, l), 11);
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
	ck_assert_uint_eq(sk_shm_settled(F.arena.shm, 0), sk_order_id_seq(ids[9]) + 1);
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
	for (unsigned i = 0; i < n; i++) {
		unsigned a = arena_state(ids[i]), s = store_state(ids[i]);
		if (a == SK_ORDER_CONFIRMED && s == SK_ORDER_CONFIRMED)
			confirmed++;
		else if (a == SK_ORDER_FAILED && s == SK_ORDER_NONE)
			failed++;
		else
			ck_abort_msg("order %u: arena %u store %u", i, a, s);
	}
	ck_assert_uint_gt(confirmed, 0);
	ck_assert_uint_gt(failed, 0); /* the small map filled up */
	ck_assert_uint_eq(sk_stock_remaining(it), 4000 - confirmed);
	assert_books(it);
}
END_TEST

static void
fx_setup_small_map(void)
{
	fx_setup_with(64, 256 * 1024);
}

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

#define RACE_ORDERS 300

struct payer {
	const uint64_t *ids;
	bool by_message;       /* seckill.payments messages, not sk_control_pay() */
	bool won[RACE_ORDERS]; /* the payment came first */
};

static void *
pay_thread(void *arg)
{
	struct payer *p = arg;

	for (unsigned i = 0; i < RACE_ORDERS; i++) {
		if (!p->by_message) {
			int res = sk_control_pay(F.ctl, p->ids[i], T0 + TIMEOUT, 0);
			ck_assert(res == SK_CONTROL_PAY_DONE || res == SK_CONTROL_PAY_CANCELLED);
			p->won[i] = res == SK_CONTROL_PAY_DONE;
			continue;
		}
		char buf[160];
		struct sk_control_pm_result r;
		snprintf(buf, sizeof(buf),
			 "{\"v\":1,\"request\":\"race-%u\",\"order\":\"%llu\",\"kind\":\"paid\"}",
			 i, (unsigned long long)p->ids[i]);
		ck_assert_int_eq(sk_payments_handle(F.ctl, buf, strlen(buf), T0 + TIMEOUT, &r),
				 SK_PAYMENTS_APPLIED);
		/* A payment that lost is a conflict: no unit taken back. */
		ck_assert(r.outcome == SK_CONTROL_PM_DONE || r.outcome == SK_CONTROL_PM_CONFLICT);
		p->won[i] = r.outcome == SK_CONTROL_PM_DONE;
	}
	return NULL;
}

/* race_timeout - 300 payments against the deadline pass: one winner each. */
static void
race_timeout(bool by_message)
{
	struct sk_item *it = add_item(1, RACE_ORDERS, 1);
	static uint64_t ids[RACE_ORDERS];
	static struct payer p;
	pthread_t t;
	unsigned paid = 0, cancelled = 0;
	int expired = 0, rc;

	for (unsigned u = 0; u < RACE_ORDERS; u++)
		ids[u] = buy(u % NLCORES, 1 + u, it);
	ck_assert_int_eq(drain_now(NULL), RACE_ORDERS);
	sk_control_close(F.ctl);
	F.conf.expire_max = 7; /* many small passes interleave with the payer */
	ctl_open();

	p.ids = ids;
	p.by_message = by_message;
	ck_assert_int_eq(pthread_create(&t, NULL, pay_thread, &p), 0);
	while ((rc = sk_control_expire(F.ctl, T0 + TIMEOUT)) > 0)
		expired += rc;
	ck_assert_int_eq(rc, 0);
	pthread_join(t, NULL);
	expired += sk_control_expire(F.ctl, T0 + TIMEOUT);

	for (unsigned i = 0; i < RACE_ORDERS; i++) {
		unsigned s = store_state(ids[i]);
		ck_assert_uint_eq(arena_state(ids[i]), s);
		ck_assert_uint_eq(s, p.won[i] ? SK_ORDER_PAID : SK_ORDER_CANCELLED);
		paid += p.won[i];
		cancelled += !p.won[i];
	}
	ck_assert_uint_eq(paid + cancelled, RACE_ORDERS);
	ck_assert_int_eq(expired, (int)cancelled);
	ck_assert_uint_eq(sk_stock_remaining(it), cancelled);
	if (by_message)
		ck_assert_uint_eq(stats().payments[0][SK_CONTROL_PM_CONFLICT], cancelled);
	ck_assert_uint_eq(stats().anomalies, 0);
	assert_books(it);
	assert_store_ok();
}

START_TEST(pay_races_timeout)
{
	race_timeout(false);
}
END_TEST

/* The same with seckill.payments messages: paid, or a conflict. */
START_TEST(payment_races_timeout)
{
	race_timeout(true);
}
END_TEST

/* ------------------------------------------------------------------- views */

/* One sample line: name{label="v",...} value */
static const char metric_re[] =
	"^[a-zA-Z_:][a-zA-Z0-9_:]*"
	"(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\")*\\})?"
	" (-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?|\\+Inf|-Inf|NaN)$";

static char *
metrics_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_control_metrics(F.ctl, f), 0);
	fclose(f);
	return buf;
}

static void
assert_metrics_parse(const char *text)
{
	regex_t re;
	char *copy = strdup(text), *save = NULL, *types[128];
	unsigned ntypes = 0, samples = 0;

	ck_assert_int_eq(regcomp(&re, metric_re, REG_EXTENDED | REG_NOSUB), 0);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0)
			continue;
		if (strncmp(line, "# TYPE ", 7) == 0) {
			for (unsigned i = 0; i < ntypes; i++)
				ck_assert_msg(strcmp(types[i], line) != 0, "TYPE twice: %s", line);
			ck_assert_uint_lt(ntypes, 128);
			types[ntypes++] = line;
			continue;
		}
		ck_assert_msg(regexec(&re, line, 0, NULL, 0) == 0, "bad metric line: '%s'", line);
		samples++;
	}
	ck_assert_uint_gt(samples, 20);
	regfree(&re);
	free(copy);
}

START_TEST(metrics_text_parses)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it);

	buy(1, 2, it);
	buy(1, 3, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 3);
	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0, 0), SK_CONTROL_PAY_DONE);
	buy(0, 4, it); /* one left queued */

	char *m = metrics_text();
	assert_metrics_parse(m);
	static const char *const want[] = {
		"seckill_orders_committed_total 3\n",
		"seckill_commit_seconds_bucket{le=\"+Inf\"} 1\n",
		"seckill_commit_seconds_count 1\n",
		"seckill_ring_depth{lcore=\"0\"} 1\n",
		"seckill_ring_depth{lcore=\"1\"} 0\n",
		"seckill_orders{state=\"queued\"} 1\n",
		"seckill_orders{state=\"confirmed\"} 2\n",
		"seckill_orders{state=\"paid\"} 1\n",
		"seckill_stock_remaining{item=\"1\"} 6\n",
		"seckill_stock_sold{item=\"1\"} 4\n",
		"seckill_store_live_units{item=\"1\"} 3\n",
		"seckill_pay_requests_total{result=\"paid\"} 1\n",
		"# TYPE seckill_commit_seconds histogram\n",
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(want); i++)
		ck_assert_msg(strstr(m, want[i]) != NULL, "missing: %s", want[i]);
	free(m);
}
END_TEST

static json_t *
handle(const char *method, const char *path, unsigned want_status, struct sk_admin_reply *out)
{
	struct sk_admin_reply r;
	json_error_t e;

	ck_assert_int_eq(sk_admin_handle(F.ctl, method, path, NULL, 0, 0, &r), 0);
	ck_assert_msg(r.status == want_status, "%s %s: %u, want %u: %s", method, path, r.status,
		      want_status, r.body);
	ck_assert_uint_eq(strlen(r.body), r.len);
	json_t *j =
		strcmp(r.content_type, "application/json") == 0 ? json_loads(r.body, 0, &e) : NULL;
	if (out != NULL)
		*out = r;
	else
		free(r.body);
	return j;
}

START_TEST(admin_routes)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it), q;
	struct sk_admin_reply r;
	char path[96];
	json_t *j;

	ck_assert_int_eq(drain_now(NULL), 2);
	q = buy(0, 3, it);

	handle("GET", "/healthz", 200, &r);
	ck_assert_str_eq(r.body, "ok\n");
	free(r.body);
	json_decref(handle("POST", "/healthz", 405, &r));
	ck_assert_str_eq(r.allow, "GET, HEAD");
	free(r.body);
	json_decref(handle("GET", "/nope", 404, NULL));

	snprintf(path, sizeof(path), "/v1/orders/%lu", (unsigned long)a);
	j = handle("GET", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "confirmed");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "deadline_ns")), T0 + TIMEOUT);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "lines")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "client_ip")), "198.18.0.2");
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)a);
	j = handle("POST", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
	ck_assert_ptr_null(json_object_get(j, "already"));
	json_decref(j);
	j = handle("POST", path, 200, NULL);
	ck_assert(json_is_true(json_object_get(j, "already")));
	json_decref(j);
	json_decref(handle("GET", path, 405, NULL));

	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 1);
	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)b);
	j = handle("POST", path, 409, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "cancelled");
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/orders/%lu", (unsigned long)q);
	j = handle("GET", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "queued");
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)q);
	j = handle("POST", path, 409, &r);
	ck_assert_uint_eq(r.retry_after, 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "queued");
	free(r.body);
	json_decref(j);

	json_decref(handle("GET", "/v1/orders/77", 404, NULL));
	json_decref(handle("POST", "/v1/orders/77/pay", 404, NULL));
	json_decref(handle("GET", "/v1/orders/abc", 400, NULL));
	json_decref(handle("GET", "/v1/orders/99999999999999999999999", 400, NULL));
	json_decref(handle("GET", "/v1/orders/0", 400, NULL));

	j = handle("GET", "/v1/items", 200, NULL);
	json_t *items = json_object_get(j, "items");
	ck_assert_uint_eq(json_array_size(items), 1);
	json_t *i0 = json_array_get(items, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "remaining")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "sold")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "returned")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(i0, "ledger"), "live")),
			 1);
	json_decref(j);
	j = handle("GET", "/v1/items/1?x=y", 200, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "item")), 1);
	json_decref(j);
	json_decref(handle("GET", "/v1/items/2", 404, NULL));
	json_decref(handle("GET", "/v1/items/x", 400, NULL));

	handle("GET", "/metrics", 200, &r);
	ck_assert_ptr_nonnull(strstr(r.body, "seckill_orders_committed_total 2\n"));
	ck_assert_ptr_nonnull(strstr(r.content_type, "version=0.0.4"));
	free(r.body);
}
END_TEST

/* ------------------------------------------------------------- activities */

/* activity - a definition for item @id: @total units from T0, no end. */
static struct sk_store_activity
activity(uint32_t id, uint64_t total)
{
	struct sk_store_activity a = {.item = id,
				      .per_user_limit = 1,
				      .total = total,
				      .price = 500,
				      .start_ns = T0,
				      .end_ns = INT64_MAX};

	snprintf(a.name, sizeof(a.name), "sale %u", id);
	return a;
}

/* stored_order - an order of an earlier run for @item, put in the store directly. */
static void
stored_order(uint32_t item, uint64_t user, uint32_t seq)
{
	struct sk_order_rec r = {.id = sk_order_id_make(EPOCH - 100, 0, 0, seq),
				 .user = user,
				 .price = 500,
				 .time_ns = T0,
				 .item = item,
				 .qty = 1,
				 .nlines = 1};

	ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), &r, 1, 0, T0, NULL, NULL), 0);
}

START_TEST(preheat_records_and_loads)
{
	struct sk_store *st = sk_control_store(F.ctl);
	struct sk_store_activity a = activity(2, 5), got;
	struct sk_control_preheat_info pi;
	struct sk_item *cfg = add_item(1, 10, 1), *it;

	/* item 2: stored with a restock and two live orders of an earlier run */
	ck_assert_int_eq(sk_store_activity_put(st, &a, T0), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 2, 77, 3, T0), 0);
	stored_order(2, 700, 1);
	stored_order(2, 701, 2);

	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.recorded, 1); /* item 1 of the "config" */
	ck_assert_uint_eq(pi.loaded, 1);
	ck_assert_uint_eq(pi.synced, 0);
	ck_assert_uint_eq(pi.failed, 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &got, NULL), 0);
	ck_assert_uint_eq(got.total, 10);
	ck_assert_uint_eq(got.price, cfg->price);

	it = sk_shm_item_find(F.arena.shm, 2);
	ck_assert_ptr_nonnull(it);
	ck_assert_uint_eq(it->total, 5);
	ck_assert_uint_eq(atomic_load(&it->added), 3);
	ck_assert_uint_eq(sk_stock_remaining(it), 6); /* 5 + 3 - 2 live */
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 700, it)), "duplicate");
	buy(1, 702, it);
	ck_assert_int_eq(drain_now(NULL), 1);
	assert_books(it);

	/* a second pass changes nothing */
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.recorded + pi.loaded + pi.synced + pi.failed, 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);

	/* a restock and a close made in the store alone reach the arena */
	ck_assert_int_eq(sk_store_activity_restock(st, 2, 78, 4, T0), 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 9);
	ck_assert_int_eq(sk_store_activity_close(st, 2, T0), 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_CLOSED);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 703, it)), "closed");
	assert_books(it);
	ck_assert_uint_eq(stats().activities_recorded, 1);
	ck_assert_uint_eq(stats().activities_loaded, 1);
	ck_assert_uint_eq(stats().units_restocked, 4);
}
END_TEST

START_TEST(preheat_skips_ended_loads_sold_out)
{
	struct sk_store *st = sk_control_store(F.ctl);
	struct sk_store_activity ended = activity(3, 5), small = activity(4, 2);
	struct sk_control_preheat_info pi;

	ended.end_ns = T0 + S;
	ck_assert_int_eq(sk_store_activity_put(st, &ended, T0), 0);
	ck_assert_int_eq(sk_store_activity_put(st, &small, T0), 0);
	stored_order(4, 800, 1);
	stored_order(4, 801, 2);
	/* a lost restock: the store holds orders beyond the stock it knows */
	small.total = 1;
	ck_assert_int_eq(sk_store_activity_put(st, &small, T0), -ERANGE);

	ck_assert_int_eq(sk_control_preheat(F.ctl, T0 + 2 * S, true, &pi), 0);
	ck_assert_uint_eq(pi.loaded, 1); /* item 4, sold out */
	ck_assert_ptr_null(sk_shm_item_find(F.arena.shm, 3));
	ck_assert(sk_stock_is_sold_out(sk_shm_item_find(F.arena.shm, 4)));
	ck_assert_uint_eq(pi.failed, 0); /* nothing to log */
}
END_TEST

START_TEST(activity_add_close_restock)
{
	struct sk_store_activity a = activity(5, 3), b;
	struct sk_item *it;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 5);
	ck_assert_ptr_nonnull(it);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_UNCHANGED);
	b = a, b.total = 4;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_CONFLICT);
	b = a, b.end_ns = T0 - S, b.start_ns = T0 - 2 * S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_INVALID);
	b = a, b.total = 0;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_INVALID);

	for (uint64_t u = 1; u <= 3; u++)
		buy(u % NLCORES, u, it);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 4, it)), "sold_out");
	ck_assert_int_eq(drain_now(NULL), 3);

	/* restock: once per id, the units reach the pool, a sold-out item reopens */
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 2, T0), SK_ACTIVITY_DONE);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 2, T0), SK_ACTIVITY_UNCHANGED);
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 3, T0), SK_ACTIVITY_CONFLICT);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 0, 3, T0), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 2, 0, T0), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 9, 2, 1, T0), SK_ACTIVITY_UNKNOWN);
	b = activity(8, 1), b.end_ns = T0 + S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 8, 1, 1, T0 + S), SK_ACTIVITY_ENDED);
	ck_assert_str_eq(sk_activity_result_name(SK_ACTIVITY_ENDED), "ended");
	buy(0, 4, it);
	ck_assert_int_eq(drain_now(NULL), 1);
	assert_books(it);

	/* close: for good */
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 5, T0), SK_ACTIVITY_DONE);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 5, it)), "closed");
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 5, T0), SK_ACTIVITY_UNCHANGED);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 3, 1, T0), SK_ACTIVITY_CLOSED);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_CLOSED);
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 9, T0), SK_ACTIVITY_UNKNOWN);
	assert_books(it);

	/* an item of the dataplane's config: close and restock record it first */
	struct sk_item *cfg = add_item(6, 2, 1);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 6, 1, 5, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(sk_stock_remaining(cfg), 7);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 6, 2, SK_STOCK_MAX_UNITS, T0),
			 SK_ACTIVITY_INVALID); /* more than the engine holds: nothing stored */
	ck_assert_uint_eq(sk_stock_remaining(cfg), 7);
	assert_books(cfg);

	/* no room: nothing is stored */
	for (uint32_t id = 10; sk_shm_item_find(F.arena.shm, 17) == NULL; id++) {
		b = activity(id, 1);
		ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_DONE);
		if (atomic_load(&F.arena.shm->nitems) == F.arena.shm->max_items)
			break;
	}
	b = activity(99, 1);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_NO_ROOM);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 99, NULL, NULL), -ENOENT);
	ck_assert_str_eq(sk_activity_result_name(SK_ACTIVITY_NO_ROOM), "no_room");
	ck_assert_str_eq(sk_activity_result_name(-EIO), "error");
}
END_TEST

/* handle_body - sk_admin_handle() with a JSON body. */
static json_t *
handle_body(const char *method, const char *path, const char *body, unsigned want_status)
{
	struct sk_admin_reply r;
	json_error_t e;

	ck_assert_int_eq(sk_admin_handle(F.ctl, method, path, body, body ? strlen(body) : 0, 0, &r),
			 0);
	ck_assert_msg(r.status == want_status, "%s %s %s: %u, want %u: %s", method, path,
		      body ? body : "", r.status, want_status, r.body);
	json_t *j = json_loads(r.body, 0, &e);
	free(r.body);
	ck_assert_ptr_nonnull(j);
	return j;
}

/* error_has - the reply's "error" contains @s. */
static void
error_has(json_t *j, const char *s)
{
	const char *e = json_string_value(json_object_get(j, "error"));

	ck_assert_msg(e != NULL && strstr(e, s) != NULL, "error %s lacks %s", e ? e : "(none)", s);
	json_decref(j);
}

START_TEST(admin_activity_routes)
{
	char body[512];
	json_t *j;

	snprintf(body, sizeof(body),
		 "{\"item\":7,\"name\":\"phone\",\"total\":4,\"price\":199900,"
		 "\"per_user_limit\":2,\"start_ns\":%lld,\"end_ns\":null,\"pay_timeout_ns\":%lld}",
		 (long long)(T0 + 60 * S), (long long)(5 * 60 * S));
	j = handle_body("POST", "/v1/activities", body, 201);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "done");
	ck_assert(json_is_true(json_object_get(j, "in_arena")));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 4);
	json_t *act = json_object_get(j, "activity");
	ck_assert_str_eq(json_string_value(json_object_get(act, "name")), "phone");
	ck_assert_int_eq(json_integer_value(json_object_get(act, "pay_timeout_ns")), 5 * 60 * S);
	ck_assert_int_eq(json_integer_value(json_object_get(act, "end_ns")), INT64_MAX);
	json_decref(j);
	j = handle_body("POST", "/v1/activities", body, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities",
			      "{\"item\":7,\"total\":5,\"name\":\"phone\"}", 409),
		  "another definition");

	/* bad input: each names what is wrong, nothing is stored */
	error_has(handle_body("POST", "/v1/activities", NULL, 400), "body is required");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,", 400), "body:");
	error_has(handle_body("POST", "/v1/activities", "[1]", 400), "not a JSON object");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8}", 400), "total: required");
	error_has(handle_body("POST", "/v1/activities", "{\"total\":8}", 400), "item: required");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"totl\":2}", 400),
		  "totl: unknown field");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":-1}", 400),
		  "total: must be an integer");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"price\":\"x\"}",
			      400),
		  "price: must be an integer");
	error_has(handle_body("POST", "/v1/activities",
			      "{\"item\":8,\"total\":1,\"start_ns\":10,\"end_ns\":5}", 400),
		  "end: must be after start");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"item\":9}", 400),
		  "body:");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"name\":7}", 400),
		  "name: must be a string");
	error_has(handle_body("GET", "/v1/activities/8", NULL, 404), "unknown activity");

	/* no start: "now" at creation, the stored start on a retry (not a conflict) */
	j = handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2}", 201);
	json_decref(j);
	usleep(2000);
	j = handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2,\"start_ns\":5}",
			      409),
		  "another definition");

	j = handle_body("GET", "/v1/activities", NULL, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "activities")), 2);
	json_decref(j);

	/* restock and close */
	j = handle_body("POST", "/v1/activities/7/restock", "{\"units\":3,\"restock_id\":42}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "done");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 7);
	json_decref(j);
	j = handle_body("POST", "/v1/activities/7/restock", "{\"units\":3,\"restock_id\":42}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 7);
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":4,\"restock_id\":42}",
			      409),
		  "restock_id was used before");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":4}", 400),
		  "restock_id: required");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"restock_id\":4}", 400),
		  "units: required");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":0,\"restock_id\":4}",
			      400),
		  "units: must be an integer 1..");
	error_has(handle_body("POST", "/v1/activities/8/restock", "{\"units\":1,\"restock_id\":4}",
			      404),
		  "unknown activity");
	j = handle_body("POST", "/v1/activities/7/close", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "closed");
	ck_assert(json_is_true(json_object_get(json_object_get(j, "activity"), "closed")));
	json_decref(j);
	j = handle_body("POST", "/v1/activities/7/close", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":1,\"restock_id\":5}",
			      409),
		  "closed");
	error_has(handle_body("POST", "/v1/activities/8/close", NULL, 404), "unknown activity");
	error_has(handle_body("GET", "/v1/activities/7/close", NULL, 405), "method not allowed");
	error_has(handle_body("PUT", "/v1/activities", NULL, 405), "method not allowed");
	error_has(handle_body("GET", "/v1/activities/x", NULL, 400), "bad item id");
}
END_TEST

/* ----------------------------------------------------------------- export */

static int
exporter_metrics(void *arg, FILE *out)
{
	return sk_exporter_metrics(arg, out);
}

/* in_table - whether @name is a family of table @t. */
static bool
in_table(const struct sk_prom_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].name, name) == 0)
			return true;
	return false;
}

/* Families absent from sk_control_metrics() without a member and the admin server. */
static bool
member_or_admin(const char *name)
{
	return in_table(&sk_member_table, name) || in_table(&sk_admin_table, name);
}

/* ... without a member and the Kafka exporter. */
static bool
member_or_export(const char *name)
{
	return in_table(&sk_member_table, name) || in_table(&sk_exporter_table, name);
}

/* The export thread over the control plane's store, to a mock Kafka cluster. */
START_TEST(export_thread_and_metrics)
{
	char e[256], err[SK_EXPORT_ERR_MAX];
	rd_kafka_conf_t *kc = rd_kafka_conf_new();
	rd_kafka_t *mrk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, e, sizeof(e));
	ck_assert_ptr_nonnull(mrk);
	rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 1);
	ck_assert_ptr_nonnull(mc);
	struct sk_export_conf c = {.bootstrap = rd_kafka_mock_cluster_bootstraps(mc)};
	struct sk_exporter *x;
	struct sk_item *it = add_item(1, 10, 1);
	struct sk_admin_reply r;

	for (uint64_t u = 1; u <= 5; u++)
		buy((unsigned)(u % NLCORES), u, it);
	ck_assert_int_eq(drain_now(NULL), 5);
	ck_assert_int_eq(sk_exporter_start(&x, sk_control_store(F.ctl), &c, err, sizeof(err)), 0);
	sk_control_metrics_extra(F.ctl, exporter_metrics, x);

	bool done = false;
	for (int i = 0; i < 500 && !done; i++) { /* 5 s at most */
		handle("GET", "/metrics", 200, &r);
		done = strstr(r.body, "seckill_export_delivered_total 5\n") != NULL &&
		       strstr(r.body, "seckill_export_backlog 0\n") != NULL;
		free(r.body);
		usleep(10000);
	}
	ck_assert_msg(done, "the export did not deliver the 5 orders");
	/* every row of the tables once, with HELP and TYPE: all but the member's
	 * and the admin server's, which this control plane does not have */
	char *list = NULL;
	sk_test_metrics_list(sk_control_metrics_list, &list);
	handle("GET", "/metrics", 200, &r);
	ck_assert_uint_eq(sk_test_metrics_check(list, r.body, member_or_admin),
			  sk_test_metrics_count(list, "\n") - sk_member_table.n - sk_admin_table.n);
	free(r.body);
	free(list);
	sk_control_metrics_extra(F.ctl, NULL, NULL);
	/* a stop right after a commit still exports it */
	for (uint64_t u = 6; u <= 8; u++)
		buy(0, u, it);
	ck_assert_int_eq(drain_now(NULL), 3);
	sk_exporter_stop(x, 5000);

	uint64_t cursor = 0;
	ck_assert_int_eq(sk_store_cursor_get(sk_control_store(F.ctl), SK_EXPORT_CURSOR, &cursor),
			 0);
	ck_assert_uint_eq(cursor, 8);
	handle("GET", "/metrics", 200, &r);
	ck_assert_ptr_null(strstr(r.body, "seckill_export_")); /* hook removed */
	free(r.body);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(mrk);
}
END_TEST

/* --------------------------------------------------------------- seckillctl */

/* run_cli - run seckillctl with @args (NULL-terminated); its exit code, stdout in @out. */
static int
run_cli(char *out, size_t outlen, const char *const *args)
{
	char tmpl[PATH_MAX + 32];
	const char *argv[32];
	int n = 0, status;

	snprintf(tmpl, sizeof(tmpl), "%s/cli-out-XXXXXX", F.dir);
	int fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	argv[n++] = seckillctl_path;
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(devnull, 2);
		execv(seckillctl_path, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ssize_t got = pread(fd, out, outlen - 1, 0);
	out[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(tmpl);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

#define CLI(...) run_cli(out, sizeof(out), (const char *const[]){__VA_ARGS__, NULL})

START_TEST(seckillctl_against_admin)
{
	static char out[65536];
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it);
	char port[16], sock[PATH_MAX + 32], ida[24], idb[24];
	struct sk_admin *adm;
	char err[SK_CONTROL_ERR_MAX];

	ck_assert_int_eq(drain_now(NULL), 2);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT - S), 0);
	char tok[PATH_MAX + 32], bad_tok[PATH_MAX + 32];

	snprintf(sock, sizeof(sock), "%s/admin.sock", F.dir);
	snprintf(tok, sizeof(tok), "%s/admin.token", F.dir);
	snprintf(bad_tok, sizeof(bad_tok), "%s/other.token", F.dir);
	ck_assert_int_eq(sk_test_write_file(tok, "Y3RsLXRlc3QtdG9rZW4tMDEyMzQ1Njc4OQ==\n", 0600),
			 0);
	ck_assert_int_eq(
		sk_test_write_file(bad_tok, "Y3RsLXRlc3QtdG9rZW4tMDEyMzQ1Njc4OA==\n", 0600), 0);
	struct sk_admin_conf ac = {.tcp = true, .port = 0, .token_file = tok, .socket_path = sock};
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), 0);
	ck_assert_uint_ne(sk_admin_port(adm), 0);
	snprintf(port, sizeof(port), "%u", sk_admin_port(adm));
	snprintf(ida, sizeof(ida), "%lu", (unsigned long)a);
	snprintf(idb, sizeof(idb), "%lu", (unsigned long)b);

	/* A second server on the same socket is refused. */
	struct sk_admin *adm2;
	struct sk_admin_conf ac2 = {.socket_path = sock};
	ck_assert_int_eq(sk_admin_start(&adm2, F.ctl, &ac2, err, sizeof(err)), -EADDRINUSE);

	/* TCP: the token from --token-file or the file $SECKILLCTL_TOKEN_FILE names */
	ck_assert_int_eq(unsetenv("SECKILLCTL_TOKEN_FILE"), 0);
	ck_assert_int_eq(CLI("--port", port, "items"), 1); /* 401 */
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 1);
	ck_assert_int_eq(CLI("--port", port, "--token-file", bad_tok, "order", "pay", ida), 1);
	ck_assert_int_eq(sk_admin_unauthorized(adm), 3);
	ck_assert_int_eq(CLI("--port", port, "--token-file", sock, "items"),
			 2); /* no token in it */
	ck_assert_int_eq(CLI("--port", port, "--token-file", "/nonexistent/t", "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "--token-file", tok, "items"), 0);
	ck_assert_int_eq(CLI("--port", port, "--token-file=", "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "--socket", sock, "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "metrics"), 0); /* open to scrapers */
	ck_assert_ptr_nonnull(strstr(out, "seckill_admin_unauthorized_total 3\n"));
	char *list = NULL;
	sk_test_metrics_list(sk_control_metrics_list, &list);
	ck_assert_uint_eq(sk_test_metrics_check(list, out, member_or_export),
			  sk_test_metrics_count(list, "\n") - sk_member_table.n -
				  sk_exporter_table.n);
	ck_assert_ptr_nonnull(strstr(out, "# TYPE seckill_admin_unauthorized_total counter\n"));
	free(list);
	ck_assert_int_eq(setenv("SECKILLCTL_TOKEN_FILE", tok, 1), 0);
	ck_assert_int_eq(CLI("--port", port, "items"), 0);
	ck_assert_ptr_nonnull(strstr(out, "REMAINING"));
	ck_assert_int_eq(CLI("--port", port, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "confirmed"));
	ck_assert_int_eq(CLI("--port", port, "--json", "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"status\":\"confirmed\""));
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "paid"));
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "already"));
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 1);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", idb), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "show", "4242"), 4);
	ck_assert_int_eq(CLI("--port", port, "item", "1"), 0);
	ck_assert_int_eq(CLI("--port", port, "item", "2"), 4);
	ck_assert_int_eq(CLI("--port", port, "metrics"), 0);
	ck_assert_ptr_nonnull(strstr(out, "seckill_orders_committed_total 2\n"));
	ck_assert_int_eq(CLI("--socket", sock, "items"), 0);
	ck_assert_int_eq(CLI("--socket", sock, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "paid"));

	/* order refund: refused for the cancelled order, done once per request id */
	ck_assert_int_eq(CLI("--port", port, "order", "refund", idb), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--units", "2"), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--units", "x"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida, "--units", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--request R"));
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--request", "cli-1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "1 units refunded, now refunded (request cli-1)"));
	ck_assert_int_eq(
		CLI("--port", port, "--json", "order", "refund", ida, "--request", "cli-1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"duplicate\":true"));
	ck_assert_int_eq(CLI("--port", port, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "refunded (arena: refunded)"));
	ck_assert_ptr_nonnull(strstr(out, "REFUNDED"));

	ck_assert_int_eq(CLI("--port", port, "reconcile"), 0);
	ck_assert_ptr_nonnull(strstr(out, "reconcile: ok"));
	ck_assert_int_eq(CLI("--port", port, "--json", "reconcile"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"ok\": true"));
	atomic_fetch_add(&it->returned, 1); /* break the books */
	ck_assert_int_eq(CLI("--port", port, "reconcile"), 1);
	ck_assert_ptr_nonnull(strstr(out, "MISMATCH"));
	atomic_fetch_sub(&it->returned, 1);

	/* activities: add (idempotent), list, show, restock (once per id), close */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "30", "--total", "5", "--price",
			     "1999", "--name", "phone", "--start", "+1h", "--end", "never"),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 30: created"));
	ck_assert_ptr_nonnull(strstr(out, "remaining        5"));
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "30", "--total", "5", "--price",
			     "1999", "--name", "phone", "--start", "+1h"),
			 5); /* another start: a conflict */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "31", "--total=2",
			     "--start=2030-01-01T00:00:00Z", "--end=1924992000", "--limit", "2"),
			 0);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "31", "--total=2",
			     "--start=2030-01-01T00:00:00Z", "--end=1924992000", "--limit", "2"),
			 0);
	ck_assert_int_eq(CLI("--port", port, "--json", "activity", "show", "31"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"start_ns\":1893456000000000000"));
	ck_assert_int_eq(CLI("--port", port, "activity", "list"), 0);
	ck_assert_ptr_nonnull(strstr(out, "phone"));
	ck_assert_ptr_nonnull(strstr(out, "on_sale"));
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "7", "--request-id", "9"), 0);
	ck_assert_ptr_nonnull(strstr(out, "restocked, 7 units (request id 9)"));
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "7", "--request-id", "9"), 0);
	ck_assert_ptr_nonnull(strstr(out, "unchanged"));
	ck_assert_uint_eq(sk_stock_remaining(sk_shm_item_find(F.arena.shm, 30)), 12);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "8", "--request-id", "9"), 5);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1"), 0); /* random id */
	ck_assert_uint_eq(sk_stock_remaining(sk_shm_item_find(F.arena.shm, 30)), 13);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "77", "1"), 4);
	/* a rerun without --start is the same definition */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "33", "--total", "2"), 0);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "33", "--total", "2"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 33: unchanged"));
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "30"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 30: closed"));
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "30"), 0);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1"), 5);
	ck_assert_int_eq(CLI("--port", port, "activity", "show", "77"), 4);
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "77"), 4);
	/* bad input never reaches the daemon (exit 2) */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "32"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "32", "--total", "0"), 2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--start", "tomorrow"),
		2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--end", "now"), 2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--limit", "1001"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "list", "--total", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "x"), 2);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1", "--total", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "frob", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: seckillctl activity add ID --total N"));
	ck_assert_int_eq(CLI("stock", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--request-id"));
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 32, NULL, NULL), -ENOENT);

	/* usage errors and help */
	ck_assert_int_eq(CLI("--port", port), 2);
	ck_assert_int_eq(CLI("--port", port, "frobnicate"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", "12x"), 2);
	ck_assert_int_eq(CLI("--port", "0", "items"), 2);
	ck_assert_int_eq(CLI("--bogus", "items"), 2);
	ck_assert_int_eq(CLI("order", "pay", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: seckillctl order pay ID"));
	ck_assert_int_eq(CLI("reconcile", "--help"), 0);
	ck_assert_int_eq(CLI("--help"), 0);

	sk_admin_stop(adm);
	ck_assert_int_ne(access(sock, F_OK), 0); /* removed */
	ck_assert_int_eq(CLI("--port", port, "items"), 3);
	ck_assert_int_eq(CLI("--socket", sock, "items"), 3);
}
END_TEST

/* ------------------------------------------------------------------- runner */

/* ---------------------------------------------------------------- payments */

/* msg - apply one hand-made seckill.payments message; its verdict. */
static int
msg(const char *json, struct sk_control_pm_result *res)
{
	return sk_payments_handle(F.ctl, json, strlen(json), T0 + 2 * S, res);
}

/* msg_ok - apply a message that must be read; its outcome. */
static unsigned
msg_ok(const char *fmt, uint64_t order, struct sk_control_pm_result *res)
{
	char buf[256];
	struct sk_control_pm_result r;

	snprintf(buf, sizeof(buf), fmt, (unsigned long long)order);
	ck_assert_int_eq(msg(buf, &r), SK_PAYMENTS_APPLIED);
	if (res != NULL)
		*res = r;
	return r.outcome;
}

START_TEST(payment_messages)
{
	struct sk_item *one = add_item(1, 2, 1);  /* limit 1 */
	struct sk_item *many = add_item(2, 5, 5); /* limit 5 */
	struct sk_buy_line l = {.item = many, .qty = 4};
	struct sk_control_pm_result r;
	uint64_t a = buy(0, 10, one), b, c = buy(1, 11, one);

	ck_assert_int_eq(buy_lines(0, 12, &l, 1, &b), SK_BUY_OK);
	ck_assert_int_eq(drain_now(NULL), 3);

	/* paid, its redelivery, a second payment of the same order */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"p-a\",\"order\":\"%llu\",\"kind\":\"paid\"}", a, &r),
		SK_CONTROL_PM_DONE);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_PAID);
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"p-a\",\"order\":\"%llu\",\"kind\":\"paid\"}", a, &r),
		SK_CONTROL_PM_DONE);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(msg_ok("{\"kind\":\"paid\",\"order\":%llu,\"request\":\"p-a2\",\"v\":1,"
				 "\"extra\":[1]}",
				 a, NULL),
			  SK_CONTROL_PM_ALREADY);
	msg_ok("{\"v\":1,\"request\":\"p-b\",\"order\":\"%llu\",\"kind\":\"paid\"}", b, NULL);

	/* refund of an unpaid order: refused, nothing moves */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-c\",\"order\":\"%llu\",\"kind\":\"refund\"}", c,
		       NULL),
		SK_CONTROL_PM_STATE);
	ck_assert_uint_eq(arena_state(c), SK_ORDER_CONFIRMED);

	/* limit 1, refunded in full: the unit is back and the buyer may buy again */
	ck_assert_int_eq(buy_one(0, 13, one), SK_BUY_SOLD_OUT);
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-a\",\"order\":\"%llu\",\"kind\":\"refund\"}", a,
		       &r),
		SK_CONTROL_PM_DONE);
	ck_assert_uint_eq(r.units, 1);
	ck_assert_uint_eq(r.state, SK_ORDER_REFUNDED);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(store_state(a), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(sk_stock_remaining(one), 1);
	assert_books(one);
	/* redelivered: the unit goes back once */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-a\",\"order\":\"%llu\",\"kind\":\"refund\"}", a,
		       &r),
		SK_CONTROL_PM_DONE);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(sk_stock_remaining(one), 1);
	uint64_t again;
	struct sk_buy_line l1 = {.item = one, .qty = 1};
	ck_assert_int_eq(buy_lines(1, 10, &l1, 1, &again), SK_BUY_OK);
	ck_assert_uint_ne(again, a);
	ck_assert_int_eq(buy_one(0, 13, one), SK_BUY_SOLD_OUT);

	/* partial refunds of 4 units: 1, too many (4), 3, and an id reused */
	static const struct {
		const char *req;
		unsigned units, item, outcome, status;
		uint64_t remaining;
	} steps[] = {
		{"r-b1", 1, 0, SK_CONTROL_PM_DONE, SK_ORDER_PAID, 2},
		{"r-b2", 4, 2, SK_CONTROL_PM_TOO_MANY, SK_ORDER_PAID, 2},
		{"r-b3", 3, 2, SK_CONTROL_PM_DONE, SK_ORDER_REFUNDED, 5},
		{"r-b3", 2, 2, SK_CONTROL_PM_REUSED, SK_ORDER_REFUNDED, 5},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(steps); i++) {
		char fmt[160];
		snprintf(fmt, sizeof(fmt),
			 "{\"v\":1,\"request\":\"%s\",\"order\":\"%%llu\",\"kind\":\"refund\","
			 "\"units\":%u%s}",
			 steps[i].req, steps[i].units, steps[i].item ? ",\"item\":2" : "");
		ck_assert_msg(msg_ok(fmt, b, NULL) == steps[i].outcome, "step %zu", i);
		ck_assert_uint_eq(arena_state(b), steps[i].status);
		ck_assert_uint_eq(sk_stock_remaining(many), steps[i].remaining);
	}
	assert_books(many);
	/* unknown order: nothing recorded */
	ck_assert_uint_eq(msg_ok("{\"v\":1,\"request\":\"u\",\"order\":\"%llu\",\"kind\":\"paid\"}",
				 sk_order_id_make(EPOCH, 0, 0, 999), NULL),
			  SK_CONTROL_PM_UNKNOWN);

	/* malformed: skipped, counted, never applied */
	static const char *const bad[] = {
		"",
		"not json",
		"[1]",
		"{\"v\":2,\"request\":\"m\",\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"order\":\"1\",\"kind\":\"refund\"}", /* a refund needs its id */
		"{\"v\":1,\"request\":\"\",\"order\":\"1\",\"kind\":\"refund\"}",
		"{\"v\":1,\"request\":null,\"order\":\"1\",\"kind\":\"refund\",\"units\":1}",
		"{\"v\":1,\"request\":\"has space\",\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"x1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"0\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"gift\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"refund\",\"units\":0}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"refund\",\"item\":\"2\"}",
		"{\"v\":1,\"request\":\"m\",\"request\":\"n\",\"order\":\"1\",\"kind\":\"paid\"}",
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++)
		ck_assert_msg(msg(bad[i], &r) == SK_PAYMENTS_MALFORMED, "%s", bad[i]);
	ck_assert_int_eq(sk_payments_handle(F.ctl, NULL, 0, T0, &r), SK_PAYMENTS_MALFORMED);

	struct sk_control_stats s = stats();
	ck_assert_uint_eq(s.payments_malformed, SK_ARRAY_SIZE(bad) + 1);
	ck_assert_uint_eq(s.payments[0][SK_CONTROL_PM_DONE], 2);
	ck_assert_uint_eq(s.payments[1][SK_CONTROL_PM_DONE], 3);
	ck_assert_uint_eq(s.payments[1][SK_CONTROL_PM_TOO_MANY], 1);
	ck_assert_uint_eq(s.payments_dup, 2); /* p-a, r-a */
	ck_assert_uint_eq(s.units_refunded, 5);
	ck_assert_uint_eq(s.anomalies, 0);
	char *m = metrics_text();
	ck_assert_ptr_nonnull(
		strstr(m, "seckill_payments_total{kind=\"refund\",outcome=\"done\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(m, "seckill_payments_malformed_total 16\n"));
	ck_assert_ptr_nonnull(strstr(m, "seckill_orders{state=\"refunded\"} 2\n"));
	assert_metrics_parse(m);
	free(m);
	assert_store_ok();
}
END_TEST

/* A refund the store made but the arena never followed (a crash between). */
START_TEST(refund_repaired_at_attach)
{
	struct sk_item *it = add_item(1, 4, 1);
	uint64_t id = buy(0, 7, it);
	struct sk_store_pay_result res;

	ck_assert_int_eq(drain_now(NULL), 1);
	ck_assert_int_eq(sk_control_pay(F.ctl, id, T0 + S, 0), SK_CONTROL_PAY_DONE);
	struct sk_store_payment p = {.request = "lost", .order = id, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_store_payment_apply(sk_control_store(F.ctl), &p, T0 + 2 * S, &res), 0);
	ck_assert_uint_eq(res.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(arena_state(id), SK_ORDER_PAID);
	ctl_restart();
	ck_assert_uint_eq(arena_state(id), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(stats().repaired, 1);
	/* Unsold until a rebuild: not on sale, never sold twice. */
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert(sk_stock_check(it));
	ck_assert_uint_eq(stats().anomalies, 0);
	/* The message redelivered to the new control plane changes nothing. */
	struct sk_control_pm_result r;
	struct sk_control_payment cp = {
		.request = "lost", .order = id, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_control_payment(F.ctl, &cp, T0 + 3 * S, 0, &r), 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	assert_store_ok();
}
END_TEST

START_TEST(admin_refund_route)
{
	struct sk_item *it = add_item(2, 5, 5);
	struct sk_buy_line l = {.item = it, .qty = 3};
	char path[96], body[160];
	uint64_t id;
	json_t *j;

	ck_assert_int_eq(buy_lines(0, 12, &l, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(drain_now(NULL), 1);
	snprintf(path, sizeof(path), "/v1/orders/%llu/refund", (unsigned long long)id);
	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-0\"}",
			409); /* not paid yet */
	ck_assert_str_eq(json_string_value(json_object_get(j, "outcome")), "state");
	json_decref(j);
	ck_assert_int_eq(sk_control_pay(F.ctl, id, T0 + S, 0), SK_CONTROL_PAY_DONE);

	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\"}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "units")), 1);
	ck_assert(json_is_false(json_object_get(j, "duplicate")));
	json_decref(j);
	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\"}", 200); /* retried */
	ck_assert(json_is_true(json_object_get(j, "duplicate")));
	json_decref(j);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	error_has(handle_body("POST", path, "{\"units\":5,\"request\":\"adm-5\"}", 409),
		  "more units");
	/* no request id: refused, nothing refunded (a retry would refund again) */
	error_has(handle_body("POST", path, "{\"units\":1}", 400), "request: required");
	error_has(handle_body("POST", path, NULL, 400), "request: required");
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	error_has(handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\",\"item\":3}", 409),
		  "another refund");
	error_has(handle_body("POST", path, "{\"units\":0}", 400), "units");
	error_has(handle_body("POST", path, "{\"units\":1,\"request\":\"a b\"}", 400), "request");
	error_has(handle_body("POST", path, "{\"unit\":1}", 400), "unknown field");
	error_has(handle_body("POST", path, "[]", 400), "body");
	error_has(handle_body("GET", path, NULL, 405), "method");
	snprintf(body, sizeof(body), "/v1/orders/%llu/refund",
		 (unsigned long long)sk_order_id_make(EPOCH, 0, 0, 999));
	error_has(handle_body("POST", body, "{\"request\":\"adm-x\"}", 404), "unknown order");

	/* the rest, without units: refunded */
	j = handle_body("POST", path, "{\"request\":\"adm-2\"}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "refunded");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "units")), 2);
	json_decref(j);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	snprintf(path, sizeof(path), "/v1/orders/%llu", (unsigned long long)id);
	j = handle_body("GET", path, NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "refunded");
	ck_assert_str_eq(json_string_value(json_object_get(j, "arena_status")), "refunded");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "refunded_units")), 3);
	json_t *l0 = json_array_get(json_object_get(j, "lines"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(l0, "refunded")), 3);
	json_decref(j);
	assert_books(it);
	assert_store_ok();
}
END_TEST

static Suite *
control_suite(void)
{
	Suite *s = suite_create("control");
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

	tc = tcase_create("payments");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, payment_messages);
	tcase_add_test(tc, payment_races_timeout);
	tcase_add_test(tc, refund_repaired_at_attach);
	tcase_add_test(tc, admin_refund_route);
	suite_add_tcase(s, tc);

	tc = tcase_create("activities");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, preheat_records_and_loads);
	tcase_add_test(tc, preheat_skips_ended_loads_sold_out);
	tcase_add_test(tc, activity_add_close_restock);
	tcase_add_test(tc, admin_activity_routes);
	suite_add_tcase(s, tc);

	tc = tcase_create("views");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, metrics_text_parses);
	tcase_add_test(tc, admin_routes);
	tcase_add_test(tc, export_thread_and_metrics);
	if (seckillctl_path != NULL)
		tcase_add_test(tc, seckillctl_against_admin);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	seckillctl_path = argc > 1 ? argv[1] : NULL;
	return sk_test_eal_main(control_suite(), "test_control");
}
