/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cluster pool's Redis client (sk_cpool) on a real Redis
 * Cluster: three masters on 127.0.0.1 made by `redis-cli --cluster
 * create` (sk_test_redis.h), one cluster for the whole case, each test on
 * items of its own: the slot of an item is Redis' own (CLUSTER KEYSLOT);
 * items on every master work through a client that knows one node (MOVED
 * followed, then straight to the owner), the sold-out broadcast reaches a
 * subscriber on another node; an item resharded to another master while
 * it sells (refused during the move, MOVED after it, nothing lost); a
 * master killed.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "sk_cpool.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define TOTAL	   100u
#define TIMEOUT_MS 3000
#define WAIT_MS	   15000

static char base[PATH_MAX];
static struct sk_test_rcluster rc;
static const char *const ab[] = {"a", "b"};

/* One cluster for the case, in the runner process (unchecked fixture); a
 * test that fails ends its own process only. */
static void
cluster_setup(void)
{
	ck_assert_int_eq(sk_test_tmpdir(base, sizeof(base), "sk-rcluster"), 0);
	ck_assert_int_eq(sk_test_rcluster_start(&rc, base, 3), 0);
}

static void
cluster_teardown(void)
{
	sk_test_rcluster_stop(&rc);
	sk_test_rmtree(base);
}

/* open_at: member @m's client that knows node @node only. */
static struct sk_cpool *
open_at(const char *m, unsigned node)
{
	struct sk_cpool_config c = {
		.host = "127.0.0.1", .port = rc.port[node], .member = m, .timeout_ms = TIMEOUT_MS};
	struct sk_cpool *p;

	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	return p;
}

/* node_cmd: @cmd on node @node (after ASKING if @asking); the reply as a
 * string ("" for nil, integers in decimal, errors as they are). */
static void
node_cmd(unsigned node, bool asking, char *out, size_t cap, const char *cmd)
{
	redisContext *c = sk_test_rcluster_node(&rc, node);
	redisReply *r;

	ck_assert_ptr_nonnull(c);
	if (asking) {
		r = redisCommand(c, "ASKING");
		ck_assert_ptr_nonnull(r);
		freeReplyObject(r);
	}
	r = redisCommand(c, cmd);
	ck_assert_ptr_nonnull(r);
	sk_test_redis_reply_str(r, out, cap);
	freeReplyObject(r);
	redisFree(c);
}

/* item_on: the first item >= @from whose slot node @node serves. */
static uint32_t
item_on(unsigned node, uint32_t from)
{
	for (uint32_t i = from; i < from + 1000; i++)
		if (sk_test_rcluster_owner(&rc, sk_cpool_slot(i)) == (int)node)
			return i;
	ck_abort_msg("no item on node %u", node);
	return 0;
}

/* sell_out: members a and b take all of @item's units and both report
 * their local stock empty: the flag is up, version 1. */
static void
sell_out(struct sk_cpool *a, struct sk_cpool *b, uint32_t item)
{
	uint64_t g, ver;
	bool unf, so;

	ck_assert_int_eq(sk_cpool_init(a, item, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_sync(a, item, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, item, 1, 0, &unf), 0);
	ck_assert(unf);
	ck_assert_int_eq(sk_cpool_lease(a, item, 1, 60, &g), 0);
	ck_assert_uint_eq(g, 60);
	ck_assert_int_eq(sk_cpool_lease(b, item, 1, 60, &g), 0);
	ck_assert_uint_eq(g, 40);
	ck_assert_int_eq(sk_cpool_dry(a, item, 0, &so, &ver), 0);
	ck_assert(!so);
	ck_assert_int_eq(sk_cpool_dry(b, item, 0, &so, &ver), 0);
	ck_assert(so);
	ck_assert_uint_eq(ver, 1);
}

/* ------------------------------------------------------------- the tests */

/* Our slot of an item is the one Redis computes for each of its keys. */
START_TEST(slots_match)
{
	char out[64], cmd[128];

	for (uint32_t item = 1; item < 5000; item += 7) {
		snprintf(cmd, sizeof(cmd), "CLUSTER KEYSLOT seckill:{%" PRIu32 "}:pool", item);
		node_cmd(0, false, out, sizeof(out), cmd);
		ck_assert_uint_eq(strtoul(out, NULL, 10), sk_cpool_slot(item));
		snprintf(cmd, sizeof(cmd), "CLUSTER KEYSLOT seckill:soldout:{%" PRIu32 "}", item);
		node_cmd(0, false, out, sizeof(out), cmd);
		ck_assert_uint_eq(strtoul(out, NULL, 10), sk_cpool_slot(item));
	}
	/* Any key: its slot is Redis' too, and it is read where it lives. */
	static const char *const keys[] = {"stock:{sku1}", "stock:{sku2}",    "stock:{sku3}",
					   "stock:{sku4}", "plain-stock-key", "a{}b"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct sk_cpool *a = open_at("a", 0);
		uint64_t u = 0;
		int owner;

		snprintf(cmd, sizeof(cmd), "CLUSTER KEYSLOT %s", keys[i]);
		node_cmd(0, false, out, sizeof(out), cmd);
		ck_assert_uint_eq(strtoul(out, NULL, 10), sk_cpool_key_slot(keys[i]));
		owner = sk_test_rcluster_owner(&rc, sk_cpool_key_slot(keys[i]));
		ck_assert_int_ge(owner, 0);
		snprintf(cmd, sizeof(cmd), "SET %s %zu", keys[i], 100 + i);
		node_cmd((unsigned)owner, false, out, sizeof(out), cmd);
		ck_assert_str_eq(out, "OK");
		ck_assert_int_eq(sk_cpool_get_units(a, keys[i], &u), 0);
		ck_assert_uint_eq(u, 100 + i);
		sk_cpool_close(a);
	}
	/* An id's slot is spread: the three masters each serve some. */
	ck_assert_uint_ne(item_on(0, 1), 0);
	ck_assert_uint_ne(item_on(1, 1), 0);
	ck_assert_uint_ne(item_on(2, 1), 0);
}
END_TEST

struct evs {
	unsigned n;
	struct sk_cpool_event ev[8];
};

static void
on_event(const struct sk_cpool_event *ev, void *arg)
{
	struct evs *e = arg;

	if (ev->kind == SK_CPOOL_EV_FLAG && e->n < 8) /* the pool channel's: test_cpool */
		e->ev[e->n++] = *ev;
}

/* Items on each master, through clients that know node 0 (a) and node 1
 * (b); the broadcasts reach a subscriber of node 2. */
START_TEST(every_master)
{
	struct sk_cpool *a = open_at("a", 0), *b = open_at("b", 1);
	struct sk_cpool_config sc = {
		.host = "127.0.0.1", .port = rc.port[2], .member = "a", .timeout_ms = TIMEOUT_MS};
	struct sk_cpool_sub *s;
	struct evs e = {0};
	uint32_t items[3];
	char out[64], cmd[128];
	bool resub = false;

	ck_assert_int_eq(sk_cpool_sub_open(&s, &sc), 0);
	ck_assert_int_eq(sk_cpool_sub_poll(s, 100, on_event, &e, &resub), 0);
	ck_assert(resub);
	for (unsigned k = 0; k < 3; k++) {
		struct sk_cpool_view v;
		uint64_t calls;

		items[k] = item_on(k, 100 + 100 * k);
		sell_out(a, b, items[k]);
		/* The keys are on the slot's master. */
		snprintf(cmd, sizeof(cmd), "HGET seckill:{%" PRIu32 "}:pool free", items[k]);
		node_cmd(k, false, out, sizeof(out), cmd);
		ck_assert_str_eq(out, "0");
		snprintf(cmd, sizeof(cmd), "GET seckill:soldout:{%" PRIu32 "}", items[k]);
		node_cmd(k, false, out, sizeof(out), cmd);
		ck_assert_str_eq(out, "1:1");
		/* The route is known now: one call, straight to the owner. */
		calls = sk_cpool_calls(a);
		ck_assert_int_eq(sk_cpool_view(a, items[k], &v), 0);
		ck_assert_uint_eq(sk_cpool_calls(a), calls + 1);
		ck_assert_uint_eq(v.total, TOTAL);
		ck_assert_uint_eq(v.free + v.held[0] + v.held[1], TOTAL);
		ck_assert(v.sold_out && !v.fenced);
		ck_assert_str_eq(sk_cpool_errstr(a), "");
	}
	for (long long end = sk_test_redis_now_ms() + WAIT_MS;
	     e.n < 3 && sk_test_redis_now_ms() < end;)
		ck_assert_int_ge(sk_cpool_sub_poll(s, 200, on_event, &e, NULL), 0);
	ck_assert_uint_eq(e.n, 3);
	/* One flip per item; their order is not kept across masters (two
	 * come over the cluster bus, one from the subscriber's own node). */
	for (unsigned k = 0; k < 3; k++) {
		unsigned seen = 0;

		for (unsigned i = 0; i < 3; i++) {
			if (e.ev[i].item != items[k])
				continue;
			seen++;
			ck_assert(e.ev[i].sold_out);
			ck_assert_uint_eq(e.ev[i].version, 1);
		}
		ck_assert_uint_eq(seen, 1);
	}
	/* A give-back reopens an item on node 1, heard on node 2. */
	ck_assert_int_eq(sk_cpool_giveback(b, items[1], 2, 10), 0);
	for (long long end = sk_test_redis_now_ms() + WAIT_MS;
	     e.n < 4 && sk_test_redis_now_ms() < end;)
		ck_assert_int_ge(sk_cpool_sub_poll(s, 200, on_event, &e, NULL), 0);
	ck_assert_uint_eq(e.n, 4);
	ck_assert(!e.ev[3].sold_out);
	ck_assert_uint_eq(e.ev[3].version, 2);
	sk_cpool_sub_close(s);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* setslot: CLUSTER SETSLOT @slot @how on node @node. */
static void
setslot(unsigned node, uint16_t slot, const char *how)
{
	char out[256], cmd[128];

	snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %u %s", (unsigned)slot, how);
	node_cmd(node, false, out, sizeof(out), cmd);
	ck_assert_msg(strcmp(out, "OK") == 0, "%s on node %u: %s", cmd, node, out);
}

/* migrate_keys: MIGRATE every key of @slot from node @from to node @to. */
static void
migrate_keys(unsigned from, unsigned to, uint16_t slot)
{
	redisContext *c = sk_test_rcluster_node(&rc, from);
	redisReply *keys, *r;
	const char *argv[16];
	char port[16];
	size_t argc = 0;

	ck_assert_ptr_nonnull(c);
	keys = redisCommand(c, "CLUSTER GETKEYSINSLOT %u 16", (unsigned)slot);
	ck_assert(keys != NULL && keys->type == REDIS_REPLY_ARRAY);
	ck_assert_uint_ge(keys->elements, 3); /* pool, leases, members at least */
	ck_assert_uint_le(keys->elements, 8);
	snprintf(port, sizeof(port), "%d", rc.port[to]);
	argv[argc++] = "MIGRATE";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = port;
	argv[argc++] = "";
	argv[argc++] = "0";
	argv[argc++] = "5000";
	argv[argc++] = "KEYS";
	for (size_t i = 0; i < keys->elements; i++)
		argv[argc++] = keys->element[i]->str;
	r = redisCommandArgv(c, (int)argc, argv, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(r->type == REDIS_REPLY_STATUS, "MIGRATE: %s", r->str != NULL ? r->str : "?");
	freeReplyObject(r);
	freeReplyObject(keys);
	redisFree(c);
}

/* An item whose slot is resharded from node 1 to node 2 while it sells:
 * during the move an op is refused as "Redis not reachable" (TRYAGAIN,
 * after an ASK when the source redirects: nothing applied, the member
 * retries); once the slot is node 2's, the route learnt before (node 1)
 * gets a MOVED and is corrected; node 2 fences the item (another run_id)
 * until the members sync, and it sells on from node 2, nothing lost. */
START_TEST(resharded)
{
	struct sk_cpool *a = open_at("a", 0), *b = open_at("b", 0);
	uint32_t item = item_on(1, 2000);
	uint16_t slot = sk_cpool_slot(item);
	struct sk_cpool_view v;
	char out[64], cmd[128], how[96];
	uint64_t calls, g;
	bool unf;
	int rc2;

	ck_assert_int_eq(sk_cpool_init(a, item, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_sync(a, item, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, item, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_lease(a, item, 1, 30, &g), 0);
	ck_assert_uint_eq(g, 30);
	/* The move starts. */
	snprintf(how, sizeof(how), "IMPORTING %s", rc.id[1]);
	setslot(2, slot, how);
	snprintf(how, sizeof(how), "MIGRATING %s", rc.id[2]);
	setslot(1, slot, how);
	calls = sk_cpool_calls(b);
	rc2 = sk_cpool_lease(b, item, 1, 20, &g);
	ck_assert_msg(rc2 == -ENOTCONN && strstr(sk_cpool_errstr(b), "TRYAGAIN") != NULL,
		      "lease while moving: %d (%s)", rc2, sk_cpool_errstr(b));
	ck_assert_uint_ge(sk_cpool_calls(b), calls + 1);
	/* The keys go, then the slot. */
	migrate_keys(1, 2, slot);
	snprintf(how, sizeof(how), "NODE %s", rc.id[2]);
	for (unsigned k = 0; k < 3; k++)
		setslot(k, slot, how);
	/* a's route still says node 1: MOVED, then node 2. */
	calls = sk_cpool_calls(a);
	ck_assert_int_eq(sk_cpool_view(a, item, &v), 0);
	ck_assert_uint_ge(sk_cpool_calls(a), calls + 2);
	/* Node 2 is another Redis (another run_id): the item is fenced as
	 * after a restart, and rebuilt from the members' words (a holds 30). */
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.epoch, 2);
	ck_assert_int_eq(sk_cpool_lease(b, item, 1, 20, &g), -EAGAIN);
	ck_assert_int_eq(sk_cpool_sync(a, item, 2, 30, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, item, 2, 0, &unf), 0);
	ck_assert(unf);
	ck_assert_int_eq(sk_cpool_view(a, item, &v), 0);
	ck_assert_uint_eq(v.free, 70);
	/* The op refused during the move, resent with its seq. */
	ck_assert_int_eq(sk_cpool_lease(b, item, 1, 20, &g), 0);
	ck_assert_uint_eq(g, 20);
	calls = sk_cpool_calls(a);
	ck_assert_int_eq(sk_cpool_view(a, item, &v), 0);
	ck_assert_uint_eq(sk_cpool_calls(a), calls + 1);
	ck_assert_uint_eq(v.free, 50);
	snprintf(cmd, sizeof(cmd), "HGET seckill:{%" PRIu32 "}:pool free", item);
	node_cmd(2, false, out, sizeof(out), cmd);
	ck_assert_str_eq(out, "50");
	node_cmd(1, false, out, sizeof(out), cmd);
	ck_assert_msg(strncmp(out, "MOVED ", 6) == 0, "node 1: %s", out);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* A master killed (no replica): its items fail fast with a clear error
 * and are asked of the configured node again; nothing is granted. */
START_TEST(master_killed)
{
	struct sk_cpool *a = open_at("a", 0), *b = open_at("b", 0);
	uint32_t item = item_on(2, 3000);
	uint64_t g = 0;
	bool unf;
	int rc2;

	ck_assert_int_eq(sk_cpool_init(a, item, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_sync(a, item, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, item, 1, 0, &unf), 0);
	ck_assert_int_eq(kill(rc.pid[2], SIGKILL), 0);
	rc2 = sk_cpool_lease(a, item, 1, 10, &g);
	ck_assert_msg(rc2 == -ENOTCONN || rc2 == -ETIMEDOUT, "lease: %d (%s)", rc2,
		      sk_cpool_errstr(a));
	ck_assert_uint_eq(g, 0);
	ck_assert(!sk_cpool_up(a));
	ck_assert_str_ne(sk_cpool_errstr(a), "");
	/* Asked of node 0 again, which still names node 2: down too. */
	rc2 = sk_cpool_lease(a, item, 1, 10, &g);
	ck_assert_msg(rc2 == -ENOTCONN || rc2 == -ETIMEDOUT, "lease again: %d", rc2);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* The members' numbers hash (no hash tag) lives on its own slot's node:
 * clients that know each node claim there, through a MOVED where needed;
 * a clash is refused wherever it is asked. */
START_TEST(numbers_routed)
{
	static const char *const ids[] = {"a", "b", "c"};
	char out[64], cmd[128];
	int owner = sk_test_rcluster_owner(&rc, sk_cpool_key_slot("seckill:member_numbers"));

	ck_assert_int_ge(owner, 0);
	for (unsigned k = 0; k < 3; k++) {
		struct sk_cpool *p = open_at(ids[k], k);

		ck_assert_msg(sk_cpool_claim(p, k + 1, NULL) == 0, "%s", sk_cpool_errstr(p));
		ck_assert_int_eq(sk_cpool_claim(p, k + 1, NULL), 0);
		sk_cpool_close(p);
	}
	for (unsigned k = 0; k < 3; k++) {
		struct sk_cpool *p = open_at("d", k);

		ck_assert_int_eq(sk_cpool_claim(p, 2, NULL), -EEXIST);
		sk_cpool_close(p);
	}
	snprintf(cmd, sizeof(cmd), "HGET seckill:member_numbers number:3");
	node_cmd((unsigned)owner, false, out, sizeof(out), cmd);
	ck_assert_str_eq(out, "c");
}
END_TEST

static Suite *
rcluster_suite(void)
{
	Suite *s = suite_create("cpool_rcluster");
	TCase *t = tcase_create("redis-cluster");

	tcase_add_unchecked_fixture(t, cluster_setup, cluster_teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, slots_match);
	tcase_add_test(t, every_master);
	tcase_add_test(t, resharded);
	tcase_add_test(t, numbers_routed);
	tcase_add_test(t, master_killed); /* last: the cluster is left broken */
	suite_add_tcase(s, t);
	return s;
}

SK_TEST_MAIN(rcluster_suite)
