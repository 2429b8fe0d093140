/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cluster member's loop (control/member/sk_member.c) against a
 * real redis-server (sk_test_redis.h: a unix socket in a temporary folder,
 * stopped by its PID), over a control plane on an arena in plain memory
 * with its own LMDB store. The other members are played by the test with
 * sk_cpool clients. Every wait is for a condition, bounded by WAIT_MS.
 *
 *   slots:     more cluster sales than SK_MEMBER_ITEMS_MAX over time, most
 *              of them closed: a new one still leases;
 *   give-back: a give-back applied by Redis, its answer lost, then a
 *              fence: the member does not sync while it does not know
 *              (counted neither twice nor lost);
 *   forget:    a member forgotten holding N units, then Redis loses every
 *              key: the pool the member makes again counts the N as gone;
 *   numbers:   a member whose number another member claimed is refused
 *              at start and leases nothing; a number lost with Redis's
 *              keys is claimed again.
 *
 * sk_cpool_giveback() is wrapped (-Wl,--wrap): the test decides, per call,
 * whether it reaches Redis and what the member is told.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "sk_activity.h"
#include "sk_control.h"
#include "sk_cpool.h"
#include "sk_member.h"
#include "sk_store_cluster.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define EPOCH	   1764000000u
#define S	   INT64_C(1000000000)
#define MS	   INT64_C(1000000)
#define WAIT_MS	   20000
#define TIMEOUT_MS 3000

struct fx {
	struct sk_test_arena arena;
	struct sk_control *ctl;
	struct sk_member *m;
	struct sk_test_redis rs;
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
	char redis_dir[PATH_MAX + 16];
};

static struct fx F;

/* ------------------------------------------------- the wrapped give-back */

int __real_sk_cpool_giveback(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t units);
int __wrap_sk_cpool_giveback(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t units);

enum gb_mode {
	GB_PASS = 0,	/* to Redis, its answer told */
	GB_APPLY_FENCE, /* to Redis, then the pool fenced; the member told
			   -ETIMEDOUT (the answer lost); then GB_LOST */
	GB_LOST,	/* not sent; -ETIMEDOUT (Redis unreachable for it) */
};
static _Atomic int gb_mode;
static atomic_uint gb_calls;

static void redis_cmd(char *out, size_t cap, const char *cmd);

int
__wrap_sk_cpool_giveback(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t units)
{
	char out[64], cmd[96];
	int rc;

	atomic_fetch_add(&gb_calls, 1);
	switch (atomic_load(&gb_mode)) {
	case GB_APPLY_FENCE:
		rc = __real_sk_cpool_giveback(p, item, seq, units);
		ck_assert_int_eq(rc, 0);
		snprintf(cmd, sizeof(cmd), "HSET seckill:{%u}:pool boot another-redis", item);
		redis_cmd(out, sizeof(out), cmd);
		atomic_store(&gb_mode, GB_LOST);
		return -ETIMEDOUT;
	case GB_LOST:
		return -ETIMEDOUT;
	default:
		return __real_sk_cpool_giveback(p, item, seq, units);
	}
}

/* ------------------------------------------------------------- fixture */

static void
redis_cmd(char *out, size_t cap, const char *cmd)
{
	struct timeval tv = {.tv_sec = 3};
	redisContext *c = redisConnectUnixWithTimeout(F.rs.sock, tv);
	redisReply *r;

	ck_assert(c != NULL && c->err == 0);
	r = redisCommand(c, cmd);
	ck_assert_ptr_nonnull(r);
	sk_test_redis_reply_str(r, out, cap);
	freeReplyObject(r);
	redisFree(c);
}

static void
fx_setup(void)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 128,
				.dedup_slots = 131072, /* SK_SHM_DEDUP_MIN per item */
				.status_bits = 12,
				.epoch = EPOCH};
	char err[SK_CONTROL_ERR_MAX];
	struct sk_control_conf conf = {0};

	memset(&F, 0, sizeof(F));
	atomic_store(&gb_mode, GB_PASS);
	atomic_store(&gb_calls, 0);
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, 64);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-member-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	snprintf(F.redis_dir, sizeof(F.redis_dir), "%s/redis", F.dir);
	ck_assert_int_eq(mkdir(F.redis_dir, 0700), 0);
	ck_assert_int_eq(sk_test_redis_start(&F.rs, F.redis_dir), 0);
	conf.store_dir = F.store;
	conf.store_flags = SK_STORE_NOSYNC;
	conf.pay_timeout_ns = 60 * S;
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, 1, &conf, err, sizeof(err));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
}

static void
fx_teardown(void)
{
	sk_member_stop(F.m, 0);
	sk_control_close(F.ctl);
	sk_test_redis_stop(&F.rs, SIGKILL);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

/* member_start - member "a" of @members (a comma list), idle after
 * @idle_ms without a sale, ticking every 5 ms. */
static void
member_start(const char *members, int64_t idle_ms)
{
	static char list[64];
	struct sk_member_conf mc = {.idle_ns = idle_ms * MS, .tick_ns = 5 * MS};

	snprintf(list, sizeof(list), "%s", members);
	ck_assert_int_eq(sk_member_parse_members(list, &mc), 0);
	mc.redis = (struct sk_cpool_config){
		.unix_path = F.rs.sock, .member = "a", .timeout_ms = TIMEOUT_MS};
	ck_assert_int_eq(sk_member_start(&F.m, F.ctl, &mc), 0);
}

static struct sk_cpool *
client(const char *member)
{
	struct sk_cpool_config c = {
		.unix_path = F.rs.sock, .member = member, .timeout_ms = TIMEOUT_MS};
	struct sk_cpool *p;

	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	return p;
}

static int64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * S + ts.tv_nsec;
}

/* add_sale - cluster activity @item of @total units, open from now on. */
static void
add_sale(uint32_t item, uint64_t total)
{
	int64_t now = wall_ns();
	struct sk_store_activity a = {.item = item,
				      .per_user_limit = 1,
				      .total = total,
				      .price = 100,
				      .start_ns = now - S,
				      .end_ns = now + 3600 * S,
				      .cluster = true};

	snprintf(a.name, sizeof(a.name), "sale %u", item);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, now), SK_ACTIVITY_DONE);
}

/* journal - the member's lease journal of @item (LMDB). */
static struct sk_store_cluster
journal(uint32_t item)
{
	struct sk_store_cluster j;

	ck_assert_int_eq(sk_store_cluster_get(sk_control_store(F.ctl), item, &j), 0);
	return j;
}

static bool
pool_view(struct sk_cpool *p, uint32_t item, struct sk_cpool_view *v)
{
	return sk_cpool_view(p, item, v) == 0;
}

static uint64_t
held_of(const struct sk_cpool_view *v, const char *m)
{
	for (uint32_t i = 0; i < v->members; i++)
		if (strcmp(v->member[i], m) == 0)
			return v->held[i];
	return 0;
}

#define WAIT_FOR(cond, what)                                                                       \
	do {                                                                                       \
		long long end_ = sk_test_redis_now_ms() + WAIT_MS;                                 \
		while (!(cond) && sk_test_redis_now_ms() < end_)                                   \
			poll(NULL, 0, 5);                                                          \
		ck_assert_msg((cond), "waited %d ms for %s", WAIT_MS, what);                       \
	} while (0)

/* ---------------------------------------------------------------- tests */

/* 70 cluster sales, closed one after the other (each init, sync and
 * report made), then a new one: it leases, though more sales than slots
 * were ever followed. */
START_TEST(slots_free_again)
{
	struct sk_cpool *obs = client("obs");
	struct sk_cpool_view v;

	member_start("a", 60000);
	for (uint32_t item = 1; item <= 70; item++) {
		add_sale(item, 4);
		ck_assert_int_eq(sk_control_activity_close(F.ctl, item, wall_ns()),
				 SK_ACTIVITY_DONE);
	}
	add_sale(100, 40);
	WAIT_FOR(journal(100).granted > 0, "a lease of the 71st sale");
	ck_assert(pool_view(obs, 100, &v));
	ck_assert(!v.fenced);
	ck_assert_uint_eq(held_of(&v, "a"), journal(100).granted);
	/* Every closed sale made its pool and synced it (followed once). */
	for (uint32_t item = 1; item <= 70; item += 23) {
		WAIT_FOR(pool_view(obs, item, &v) && !v.fenced, "a closed sale synced");
	}
	sk_cpool_close(obs);
}
END_TEST

/* a leases, goes idle and gives its units back; Redis applies the
 * give-back but the answer is lost, and the pool is fenced (another Redis).
 * While the resend gets no answer, a must not sync: its word would count
 * the units Redis already took back. Once the resend is answered (a
 * replay), a syncs what it holds: the pool has every unit back. */
START_TEST(giveback_unresolved_at_fence)
{
	struct sk_cpool *b = client("b");
	struct sk_cpool_view v;
	bool unf;

	member_start("a,b", 300);
	add_sale(5, 100);
	WAIT_FOR(pool_view(b, 5, &v), "a's init");
	ck_assert_int_eq(sk_cpool_sync(b, 5, v.epoch, 0, &unf), 0);
	WAIT_FOR(journal(5).granted > 0, "a's lease");
	uint64_t granted = journal(5).granted;
	atomic_store(&gb_mode, GB_APPLY_FENCE);
	WAIT_FOR(atomic_load(&gb_calls) >= 6, "the give-back sent and resent");
	ck_assert(pool_view(b, 5, &v));
	ck_assert(v.fenced);
	ck_assert_uint_eq(journal(5).pending_kind, SK_STORE_CLUSTER_GIVEBACK);
	ck_assert_uint_eq(journal(5).pending_units, granted);
	/* Redis answers again; b syncs. */
	atomic_store(&gb_mode, GB_PASS);
	ck_assert_int_eq(sk_cpool_sync(b, 5, v.epoch, 0, &unf), 0);
	WAIT_FOR(pool_view(b, 5, &v) && !v.fenced && journal(5).pending_kind == 0,
		 "the rebuild and the give-back's end");
	ck_assert_uint_eq(journal(5).given_back, granted);
	ck_assert_uint_eq(held_of(&v, "a"), 0); /* LMDB's word: granted - given back */
	ck_assert_uint_eq(v.free, 100);		/* not one unit lost */
	sk_cpool_close(b);
}
END_TEST

/* c leases 30 and is forgotten through a (the operator's call); Redis
 * then loses every key. a makes the pool again: c's 30 units stay counted,
 * c is no member, and the pool is rebuilt by a alone. */
START_TEST(forget_survives_loss)
{
	struct sk_cpool *c = client("c");
	struct sk_cpool_view v;
	char out[64];
	uint64_t g;
	bool unf;

	member_start("a,c", 60000);
	add_sale(6, 100);
	WAIT_FOR(pool_view(c, 6, &v), "a's init");
	ck_assert_int_eq(sk_cpool_sync(c, 6, v.epoch, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_lease(c, 6, 1, 30, &g), 0);
	ck_assert_uint_eq(g, 30);
	WAIT_FOR(journal(6).granted > 0, "a's lease");
	ck_assert_int_eq(sk_member_forget(F.m, 6, "c", 30), 0);
	/* Every key lost (FLUSHALL: a Redis restarted without persistence). */
	redis_cmd(out, sizeof(out), "FLUSHALL");
	WAIT_FOR(pool_view(c, 6, &v) && !v.fenced, "the pool made again and rebuilt");
	ck_assert_uint_eq(v.active, 1);
	ck_assert_uint_eq(held_of(&v, "c"), 30);
	ck_assert_uint_eq(v.free + held_of(&v, "a") + 30, 100);
	ck_assert_uint_le(v.free, 100 - 30);
	sk_cpool_close(c);
}
END_TEST

/* metric_is - the member's /metrics has line "@name @value". */
static bool
metric_is(const char *name, const char *value)
{
	char *buf = NULL, line[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool found;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_member_metrics(F.m, f), 0);
	fclose(f);
	snprintf(line, sizeof(line), "\n%s %s\n", name, value);
	found = strstr(buf, line) != NULL;
	free(buf);
	return found;
}

static bool
pool_view_exists(uint32_t item)
{
	char out[64], cmd[64];

	snprintf(cmd, sizeof(cmd), "EXISTS seckill:{%u}:pool", item);
	redis_cmd(out, sizeof(out), cmd);
	return strcmp(out, "1") == 0;
}

static int64_t
pool_read_ns(uint32_t item)
{
	struct sk_member_item mi;

	return sk_member_view(F.m, item, &mi) == 0 && !mi.pool.fenced ? mi.pool_read_ns : 0;
}

/* c runs with --cluster-members c,a,b and claimed number 1; a is given
 * "a" (number 1 too: their order ids would collide). The control plane's
 * claim at start is refused, naming both; a member started anyway leases
 * nothing, though its pool is ready, until the operator clears c's claim. */
START_TEST(number_conflict)
{
	struct sk_member_conf mc = {0};
	struct sk_cpool *c = client("c");
	char list[8] = "a", err[256], out[64];

	ck_assert_int_eq(sk_cpool_claim(c, 1, NULL), 0);
	ck_assert_int_eq(sk_member_parse_members(list, &mc), 0);
	mc.redis = (struct sk_cpool_config){
		.unix_path = F.rs.sock, .member = "a", .timeout_ms = TIMEOUT_MS};
	ck_assert_int_eq(sk_member_claim(&mc, err, sizeof(err)), -EEXIST);
	ck_assert_msg(strstr(err, "member a") != NULL && strstr(err, "member c") != NULL &&
			      strstr(err, "number 1") != NULL,
		      "err: %s", err);
	member_start("a", 60000);
	add_sale(8, 100);
	WAIT_FOR(metric_is("seckill_cluster_number_conflict", "1"), "the loop's refusal");
	WAIT_FOR(pool_read_ns(8) != 0, "the pool synced, as the member read it");
	int64_t t0 = pool_read_ns(8);
	WAIT_FOR(pool_read_ns(8) > t0, "a tick acting on the ready pool");
	ck_assert_uint_eq(journal(8).ops, 0);
	ck_assert_uint_eq(journal(8).granted, 0);
	ck_assert(metric_is("seckill_cluster_number_claimed", "0"));
	/* The operator clears the stale claim: a claims 1 and leases. */
	redis_cmd(out, sizeof(out), "HDEL seckill:member_numbers number:1 member:c");
	WAIT_FOR(journal(8).granted > 0, "a's lease once its number is claimed");
	ck_assert(metric_is("seckill_cluster_number_conflict", "0"));
	ck_assert(metric_is("seckill_cluster_number_claimed", "1"));
	redis_cmd(out, sizeof(out), "HGET seckill:member_numbers number:1");
	ck_assert_str_eq(out, "a");
	ck_assert_int_eq(sk_member_claim(&mc, err, sizeof(err)), 0); /* a restart */
	sk_cpool_close(c);
}
END_TEST

/* Redis loses every key: the member claims its number again (before its
 * next lease), so a member with another list is refused again. */
START_TEST(number_claimed_again)
{
	char out[64];

	member_start("x,a", 60000);
	add_sale(9, 100);
	WAIT_FOR((redis_cmd(out, sizeof(out), "HGET seckill:member_numbers number:2"),
		  strcmp(out, "a") == 0),
		 "the claim at the first tick");
	WAIT_FOR(pool_view_exists(9), "a's init");
	redis_cmd(out, sizeof(out), "FLUSHALL");
	WAIT_FOR(pool_view_exists(9), "the pool made again");
	WAIT_FOR((redis_cmd(out, sizeof(out), "HGET seckill:member_numbers member:a"),
		  strcmp(out, "2") == 0),
		 "the claim made again");
}
END_TEST

static Suite *
member_suite(void)
{
	Suite *s = suite_create("member");
	TCase *tc = tcase_create("redis");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, slots_free_again);
	tcase_add_test(tc, giveback_unresolved_at_fence);
	tcase_add_test(tc, forget_survives_loss);
	tcase_add_test(tc, number_conflict);
	tcase_add_test(tc, number_claimed_again);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(member_suite, "test_member")
