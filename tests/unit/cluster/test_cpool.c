/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cluster pool's Redis client (sk_cpool) against a real
 * redis-server started by each test on a unix socket in a temporary folder
 * (--port 0: no TCP), with an AOF (appendfsync everysec), stopped by its
 * PID (sk_test_redis.h): member ids, init, fencing at start and after a
 * restart, leases (full, partial, zero), idempotent replays, stale and
 * reused seqs, give backs, the sold-out flag, its key and its broadcast,
 * reopen, restocks, a stock key read, Redis killed (fast errors, the backoff), a restart that lost
 * grants, a total loss, members holding more than the total, forget, the
 * view, the subscriber's reconnect, NOSCRIPT; the members' numbers
 * (claimed, idempotent, refused when two members would share one).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "sk_cpool.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define ITEM	   7u
#define TOTAL	   100u
#define TIMEOUT_MS 3000
/* Bound of every wait for a condition. */
#define WAIT_MS 15000

static char dir[PATH_MAX];
static struct sk_test_redis rs;
static const char *const ab[] = {"a", "b"};

/* The runner's folder (unchecked fixture, in the runner process) holds
 * each test's; a failed assertion ends the test's process with _exit(),
 * without the checked teardown: the server goes with it
 * (PR_SET_PDEATHSIG), the folder with the runner's. */
static char base[PATH_MAX];

static void
base_setup(void)
{
	ck_assert_int_eq(sk_test_tmpdir(base, sizeof(base), "sk-cpool"), 0);
}

static void
base_teardown(void)
{
	sk_test_rmtree(base);
}

static void
setup(void)
{
	int n = snprintf(dir, sizeof(dir), "%s/t-XXXXXX", base);

	ck_assert(n > 0 && (size_t)n < sizeof(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(sk_test_redis_start(&rs, dir), 0);
}

static void
teardown(void)
{
	sk_test_redis_stop(&rs, SIGKILL);
	sk_test_rmtree(dir);
}

static struct sk_cpool_config
cfg_of(const char *member)
{
	return (struct sk_cpool_config){
		.unix_path = rs.sock, .member = member, .timeout_ms = TIMEOUT_MS};
}

static struct sk_cpool *
open_member(const char *member)
{
	struct sk_cpool_config c = cfg_of(member);
	struct sk_cpool *p;

	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	return p;
}

/* redis_cmd: a command of the test's own on a fresh connection; the reply
 * as a string ("" for nil, the integer in decimal), into @out. */
static void
redis_cmd(char *out, size_t cap, const char *cmd)
{
	struct timeval tv = {.tv_sec = 3};
	redisContext *c = redisConnectUnixWithTimeout(rs.sock, tv);
	redisReply *r;

	ck_assert(c != NULL && c->err == 0);
	r = redisCommand(c, cmd);
	ck_assert_ptr_nonnull(r);
	sk_test_redis_reply_str(r, out, cap);
	freeReplyObject(r);
	redisFree(c);
}

/* ready: item ITEM with members a, b, both synced (not fenced). */
static void
ready(struct sk_cpool *a, struct sk_cpool *b)
{
	bool unf;

	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 0, &unf), 0);
	ck_assert(!unf);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(unf);
}

static struct sk_cpool_view
view(struct sk_cpool *p)
{
	struct sk_cpool_view v;

	ck_assert_int_eq(sk_cpool_view(p, ITEM, &v), 0);
	return v;
}

static uint64_t
held_of(const struct sk_cpool_view *v, const char *m)
{
	for (uint32_t i = 0; i < v->members; i++) {
		if (strcmp(v->member[i], m) == 0)
			return v->held[i];
	}
	ck_abort_msg("no member %s in the view", m);
	return 0;
}

/* The invariant of docs/cluster.md when not fenced. */
static void
check_sum(struct sk_cpool *p)
{
	struct sk_cpool_view v = view(p);
	uint64_t sum = v.free;

	ck_assert(!v.fenced);
	for (uint32_t i = 0; i < v.members; i++)
		sum += v.held[i];
	ck_assert_uint_eq(sum, v.total);
}

/* restart: kill -9 the server and start it again on the same AOF. */
static void
restart(void)
{
	ck_assert_int_eq(sk_test_redis_stop(&rs, SIGKILL), 0);
	ck_assert_int_eq(sk_test_redis_start(&rs, dir), 0);
}

/* aof_has: true if a file of the server's AOF folder holds @needle (what
 * Redis wrote to it; appendfsync everysec may hold a write back a while). */
static bool
aof_has(const char *needle)
{
	char path[PATH_MAX + 320], buf[1 << 16];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/appendonlydir", dir);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < 64 && !found && (de = readdir(d)) != NULL; i++) {
		FILE *f;
		size_t n;

		if (strstr(de->d_name, ".incr.aof") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/appendonlydir/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		found = memmem(buf, n, needle, strlen(needle)) != NULL;
	}
	closedir(d);
	return found;
}

/* wait_aof: until the AOF holds @needle (bounded). */
static void
wait_aof(const char *needle)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;

	while (!aof_has(needle) && sk_test_redis_now_ms() < end)
		poll(NULL, 0, 20);
	ck_assert_msg(aof_has(needle), "the AOF never got '%s'", needle);
}

/* view_up: the view once the client reconnected (waits out its backoff). */
static struct sk_cpool_view
view_up(struct sk_cpool *p)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;
	struct sk_cpool_view v;
	int rc;

	do {
		rc = sk_cpool_view(p, ITEM, &v);
		if (rc == 0)
			return v;
		ck_assert_msg(rc == -ENOTCONN || rc == -ETIMEDOUT, "view: %d", rc);
		poll(NULL, 0, 20);
	} while (sk_test_redis_now_ms() < end);
	ck_abort_msg("no reconnect within %d ms", WAIT_MS);
	return v;
}

/* ---------------------------------------------------------------- basics */

START_TEST(member_ids)
{
	char long_id[SK_CPOOL_MEMBER_MAX + 2];

	ck_assert(sk_cpool_member_valid("a"));
	ck_assert(sk_cpool_member_valid("node-1_x"));
	memset(long_id, 'a', sizeof(long_id));
	long_id[SK_CPOOL_MEMBER_MAX] = '\0';
	ck_assert(sk_cpool_member_valid(long_id));
	long_id[SK_CPOOL_MEMBER_MAX] = 'a';
	long_id[SK_CPOOL_MEMBER_MAX + 1] = '\0';
	ck_assert(!sk_cpool_member_valid(long_id));
	ck_assert(!sk_cpool_member_valid(""));
	ck_assert(!sk_cpool_member_valid(NULL));
	ck_assert(!sk_cpool_member_valid("A"));
	ck_assert(!sk_cpool_member_valid("a b"));
	ck_assert(!sk_cpool_member_valid("a:b"));
	ck_assert(!sk_cpool_member_valid("{a}"));
	ck_assert(!sk_cpool_member_valid("\xc3\xa9"));
}
END_TEST

START_TEST(open_refuses)
{
	struct sk_cpool_config c = cfg_of("a");
	struct sk_cpool *p = (struct sk_cpool *)&c;
	struct sk_cpool_sub *s;

	c.member = "Bad";
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	ck_assert_ptr_null(p);
	c = cfg_of("a");
	c.timeout_ms = 0;
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	c = cfg_of("a");
	c.unix_path = NULL;
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	c.host = "127.0.0.1";
	c.port = 0;
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	c = cfg_of("a");
	c.prefix = "sk{x}";
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	c.prefix = "";
	ck_assert_int_eq(sk_cpool_sub_open(&s, &c), -EINVAL);
	c.prefix = "a b";
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	/* Redis is not needed to open. */
	c = cfg_of("a");
	c.unix_path = "/nonexistent/redis.sock";
	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	ck_assert(!sk_cpool_up(p));
	ck_assert_int_eq(sk_cpool_view(p, ITEM, &(struct sk_cpool_view){0}), -ENOTCONN);
	ck_assert(strstr(sk_cpool_errstr(p), "/nonexistent/redis.sock") != NULL);
	sk_cpool_close(p);
	sk_cpool_close(NULL);
	sk_cpool_sub_close(NULL);
}
END_TEST

START_TEST(init_idempotent)
{
	struct sk_cpool *a = open_member("a");
	const char *const bad[] = {"a", "B"};
	const char *const abc[] = {"a", "b", "c"};
	const char *many[SK_CPOOL_MEMBERS_MAX + 1];
	struct sk_cpool_view v;
	char out[64];

	for (int i = 0; i <= SK_CPOOL_MEMBERS_MAX; i++)
		many[i] = "m";
	ck_assert_int_eq(sk_cpool_view(a, ITEM, &v), -ENOENT);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	ck_assert(sk_cpool_up(a));
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL + 1, ab, 2), -EEXIST);
	ck_assert(strstr(sk_cpool_errstr(a), "total 100") != NULL);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 0), -EINVAL);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, bad, 2), -EINVAL);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, 0, ab, 2), -EINVAL);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, SK_CPOOL_UNITS_MAX + 1, ab, 2), -EINVAL);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, many, SK_CPOOL_MEMBERS_MAX + 1), -EINVAL);
	v = view(a);
	ck_assert_uint_eq(v.total, TOTAL);
	ck_assert_uint_eq(v.free, TOTAL);
	ck_assert_uint_eq(v.epoch, 1);
	ck_assert(v.fenced);
	ck_assert(!v.sold_out);
	ck_assert_uint_eq(v.version, 0);
	ck_assert_uint_eq(v.members, 2);
	/* A re-init adds members; the keys are the documented ones. */
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, abc, 3), 0);
	ck_assert_uint_eq(view(a).members, 3);
	redis_cmd(out, sizeof(out), "SCARD seckill:{7}:members");
	ck_assert_str_eq(out, "3");
	redis_cmd(out, sizeof(out), "GET seckill:soldout:{7}");
	ck_assert_str_eq(out, "0:0");
	redis_cmd(out, sizeof(out), "HGET seckill:{7}:pool total");
	ck_assert_str_eq(out, "100");
	sk_cpool_close(a);
}
END_TEST

START_TEST(fenced_at_start)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	uint64_t g = 99;
	bool unf = true;

	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 10, &g), -ENOENT);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 10, &g), -EAGAIN);
	ck_assert_uint_eq(g, 0);
	ck_assert(strstr(sk_cpool_errstr(a), "FENCED") != NULL);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 1, 1), -EAGAIN);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 0, &unf), -ESTALE);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 0, &unf), 0);
	ck_assert(!unf);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 10, &g), -EAGAIN);
	ck_assert(view(a).fenced);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(unf);
	/* Again while not fenced: nothing changes. */
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 5, &unf), 0);
	ck_assert(unf);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 10, &g), 0);
	ck_assert_uint_eq(g, 10);
	ck_assert_uint_eq(view(a).free, TOTAL - 10);
	check_sum(a);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

START_TEST(lease_sizes)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b"), *x = open_member("x");
	struct sk_cpool_view v;
	uint64_t g;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 30, &g), 0); /* full */
	ck_assert_uint_eq(g, 30);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 50, &g), 0);
	ck_assert_uint_eq(g, 50);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 2, 50, &g), 0); /* partial */
	ck_assert_uint_eq(g, 20);
	ck_assert_uint_eq(view(a).want_ms, 0);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 5, &g), 0); /* zero: asks for returns */
	ck_assert_uint_eq(g, 0);
	v = view(a);
	ck_assert_uint_eq(v.free, 0);
	ck_assert_int_gt(v.want_ms, 0);
	ck_assert_uint_eq(held_of(&v, "a"), 30);
	ck_assert_uint_eq(held_of(&v, "b"), 70);
	check_sum(a);
	/* Bad arguments, a stranger. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 0, 5, &g), -EINVAL);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 3, 0, &g), -EINVAL);
	ck_assert_int_eq(sk_cpool_lease(x, ITEM, 1, 5, &g), -ENOENT);
	ck_assert(strstr(sk_cpool_errstr(x), "NOMEMBER") != NULL);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM + 1, 3, 5, &g), -ENOENT);
	sk_cpool_close(a);
	sk_cpool_close(b);
	sk_cpool_close(x);
}
END_TEST

START_TEST(replay_stale_reuse)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	char out[64];
	uint64_t g;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 5, 10, &g), 0);
	ck_assert_uint_eq(g, 10);
	/* The same op again (a resend after a crash): its result, nothing more. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 5, 10, &g), 0);
	ck_assert_uint_eq(g, 10);
	ck_assert_uint_eq(view(a).free, TOTAL - 10);
	redis_cmd(out, sizeof(out), "HGET seckill:{7}:ops a");
	ck_assert_str_eq(out, "5:lease:10:10");
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 4, 10, &g), -ESTALE);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 4, 1), -ESTALE);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 5, 11, &g), -EEXIST);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 5, 10), -EEXIST);
	/* A replay while fenced (another Redis incarnation wrote the pool). */
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:pool boot 0000");
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 5, 10, &g), 0);
	ck_assert_uint_eq(g, 10);
	ck_assert(view(a).fenced);
	ck_assert_uint_eq(view(a).epoch, 2);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 6, 10, &g), -EAGAIN);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 4, 10, &g), -ESTALE);
	/* seqs beyond 2^53 compare exactly (decimal strings, not doubles) */
	{
		bool unf;

		ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 10, &unf), 0);
		ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 0, &unf), 0);
		ck_assert(unf);
	}
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, UINT64_C(18014398509481985), 1, &g), 0);
	ck_assert_uint_eq(g, 1);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, UINT64_C(18014398509481984), 1, &g), -ESTALE);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, UINT64_C(18014398509481986), 1, &g), 0);
	ck_assert_uint_eq(g, 1);
	check_sum(a);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

START_TEST(giveback)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_view v;
	uint64_t g;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 40, &g), 0);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 2, 15), 0);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 2, 15), 0); /* replay */
	v = view(a);
	ck_assert_uint_eq(v.free, TOTAL - 25);
	ck_assert_uint_eq(held_of(&v, "a"), 25);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 3, 26), -ERANGE);
	ck_assert(strstr(sk_cpool_errstr(a), "holds 25") != NULL);
	ck_assert_int_eq(sk_cpool_giveback(b, ITEM, 1, 1), -ERANGE);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 4, SK_CPOOL_UNITS_MAX + 1), -ERANGE);
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 3, 0), -EINVAL);
	ck_assert_uint_eq(view(a).free, TOTAL - 25); /* nothing applied */
	/* The refused op was not recorded: seq 3 is still free to use. */
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 3, 25), 0);
	v = view(a);
	ck_assert_uint_eq(v.free, TOTAL);
	ck_assert_uint_eq(held_of(&v, "a"), 0);
	check_sum(a);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* ---------------------------------------------------- sold out, reopen */

#define EV_MAX 16
/* The subscriber's messages: the flips (sold-out channel) in ev, the pool
 * channel's in pool. */
struct evs {
	int n, npool;
	struct sk_cpool_event ev[EV_MAX], pool[EV_MAX];
};

static void
on_event(const struct sk_cpool_event *ev, void *arg)
{
	struct evs *e = arg;

	if (ev->kind == SK_CPOOL_EV_POOL) {
		if (e->npool < EV_MAX)
			e->pool[e->npool] = *ev;
		e->npool++;
		return;
	}
	ck_assert_int_eq(ev->kind, SK_CPOOL_EV_FLAG);
	if (e->n < EV_MAX)
		e->ev[e->n] = *ev;
	e->n++;
}

/* wait_pool: poll @s until @e holds @n pool messages (bounded); the last
 * says @free and @want. */
static void
wait_pool(struct sk_cpool_sub *s, struct evs *e, int n, uint64_t free, bool want)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;

	while (e->npool < n && sk_test_redis_now_ms() < end)
		ck_assert_int_ge(sk_cpool_sub_poll(s, 200, on_event, e, NULL), 0);
	ck_assert_int_eq(e->npool, n);
	ck_assert_uint_eq(e->pool[n - 1].item, ITEM);
	ck_assert_uint_eq(e->pool[n - 1].free, free);
	ck_assert(e->pool[n - 1].want == want);
}

/* recent_us: @at_us (Redis's clock in a message) is within 10 s of now. */
static bool
recent_us(int64_t at_us)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	return at_us > 0 && at_us <= now_us + 1000000 && now_us - at_us < 10000000;
}

/* wait_events: poll @s until @e holds @n events (bounded). */
static void
wait_events(struct sk_cpool_sub *s, struct evs *e, int n)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;

	while (e->n < n && sk_test_redis_now_ms() < end) {
		int rc = sk_cpool_sub_poll(s, 200, on_event, e, NULL);

		ck_assert_int_ge(rc, 0);
	}
	ck_assert_int_eq(e->n, n);
}

static struct sk_cpool_sub *
subscribed(void)
{
	struct sk_cpool_config c = cfg_of("a");
	struct sk_cpool_sub *s;
	struct evs none = {0};
	bool resub = false;

	ck_assert_int_eq(sk_cpool_sub_open(&s, &c), 0);
	ck_assert_int_eq(sk_cpool_sub_poll(s, 100, on_event, &none, &resub), 0);
	ck_assert(resub);
	return s;
}

START_TEST(sold_out_and_reopen)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_sub *s = subscribed();
	struct evs e = {0};
	bool so = true;
	uint64_t g, ver = 99;
	char out[64];

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 60, &g), 0);
	ck_assert_int_eq(sk_cpool_sub_poll(s, 0, on_event, &e, NULL), 0); /* free 100 -> 40 */
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 60, &g), 0);
	ck_assert_uint_eq(g, 40);
	/* The grant emptied the pool: told on the pool channel. */
	wait_pool(s, &e, 1, 0, false);
	ck_assert(recent_us(e.pool[0].at_us));
	/* a is empty, b still holds units: not sold out. */
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, &so, &ver), 0);
	ck_assert(!so);
	ck_assert_uint_eq(ver, 0);
	ck_assert_int_eq(sk_cpool_sub_poll(s, 0, on_event, &e, NULL), 0);
	/* b reports 0: the pool and every member are empty. */
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, &so, &ver), 0);
	ck_assert(so);
	ck_assert_uint_eq(ver, 1);
	ck_assert(view(a).sold_out);
	ck_assert_uint_eq(view(a).want_ms, 0);
	redis_cmd(out, sizeof(out), "GET seckill:soldout:{7}");
	ck_assert_str_eq(out, "1:1");
	wait_events(s, &e, 1);
	ck_assert_uint_eq(e.ev[0].item, ITEM);
	ck_assert(e.ev[0].sold_out);
	ck_assert_uint_eq(e.ev[0].version, 1);
	ck_assert(recent_us(e.ev[0].at_us));
	ck_assert_int_eq(e.npool, 1);
	/* Again: no flip, no broadcast. */
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, NULL, NULL), 0);
	/* A give back reopens. */
	ck_assert_int_eq(sk_cpool_giveback(a, ITEM, 2, 3), 0);
	ck_assert(!view(a).sold_out);
	redis_cmd(out, sizeof(out), "GET seckill:soldout:{7}");
	ck_assert_str_eq(out, "0:2");
	wait_events(s, &e, 2);
	ck_assert(!e.ev[1].sold_out);
	ck_assert_uint_eq(e.ev[1].version, 2);
	ck_assert(e.ev[1].at_us >= e.ev[0].at_us);
	wait_pool(s, &e, 2, 3, false); /* units again */
	/* b leases them (emptied again), sells out again; a unit comes back
	 * at b (a payment timeout): dry with units reopens. */
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 2, 10, &g), 0);
	ck_assert_uint_eq(g, 3);
	wait_pool(s, &e, 3, 0, false);
	/* a asks the empty pool: want, told to the others. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 3, 5, &g), 0);
	ck_assert_uint_eq(g, 0);
	wait_pool(s, &e, 4, 0, true);
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, &so, &ver), 0);
	ck_assert(so);
	ck_assert_uint_eq(ver, 3);
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 1, &so, &ver), 0);
	ck_assert(!so);
	ck_assert_uint_eq(ver, 4);
	wait_events(s, &e, 4);
	ck_assert(e.ev[2].sold_out && !e.ev[3].sold_out);
	ck_assert_uint_eq(e.ev[3].version, 4);
	/* Strangers' messages on the channels are skipped (a '-', at_us 0
	 * or out of range); an older member's flip (no at_us) is taken,
	 * with at_us 0. */
	redis_cmd(out, sizeof(out), "PUBLISH seckill:soldout hello");
	redis_cmd(out, sizeof(out), "PUBLISH seckill:pool {\"item\":7,\"free\":-1,\"want\":true}");
	redis_cmd(
		out, sizeof(out),
		"PUBLISH seckill:soldout {\"item\":7,\"sold_out\":true,\"version\":9,\"at_us\":0}");
	/* at_us * 1000 would overflow the ns of the delay: skipped. */
	redis_cmd(out, sizeof(out),
		  "PUBLISH seckill:soldout "
		  "{\"item\":7,\"sold_out\":true,\"version\":9,\"at_us\":9223372036854776}");
	ck_assert_int_eq(sk_cpool_sub_poll(s, 200, on_event, &e, NULL), 0);
	ck_assert_int_eq(e.n, 4);
	redis_cmd(out, sizeof(out),
		  "PUBLISH seckill:soldout {\"item\":7,\"sold_out\":true,\"version\":9}");
	wait_events(s, &e, 5);
	ck_assert(e.ev[4].sold_out && e.ev[4].version == 9 && e.ev[4].at_us == 0);
	ck_assert_int_eq(e.npool, 4);
	check_sum(a);
	sk_cpool_sub_close(s);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* ------------------------------------------------------- Redis faults */

/* A listener of the test's own at the server's socket path, counting the
 * connections the client makes while Redis is gone (closed at once). */
struct counter {
	int fd;
	atomic_int accepts;
	atomic_bool stop;
};

static void *
count_accepts(void *arg)
{
	struct counter *k = arg;

	for (int i = 0; i < 100000 && !atomic_load(&k->stop); i++) {
		struct pollfd pfd = {.fd = k->fd, .events = POLLIN};

		if (poll(&pfd, 1, 50) == 1) {
			int c = accept(k->fd, NULL, NULL);

			if (c >= 0) {
				atomic_fetch_add(&k->accepts, 1);
				close(c);
			}
		}
	}
	return NULL;
}

START_TEST(killed_backoff)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct counter k = {.fd = -1};
	pthread_t th;
	long long t0, t, end;
	uint64_t g;
	int calls = 0, rc;

	ready(a, b);
	ck_assert(sk_cpool_up(a));
	ck_assert_int_eq(sk_test_redis_stop(&rs, SIGKILL), 0);
	/* The broken connection: an error at once, not after the timeout. */
	t0 = sk_test_redis_now_ms();
	rc = sk_cpool_lease(a, ITEM, 1, 1, &g);
	ck_assert_msg(rc == -ENOTCONN, "lease: %d", rc);
	ck_assert_int_lt(sk_test_redis_now_ms() - t0, 1000);
	ck_assert(!sk_cpool_up(a));
	/* Redis' socket path now leads to a counter: 1.6 s of calls in a tight
	 * loop connect 3 or 4 times (after 100, 300, 700, 1500 ms), not per call. */
	unlink(rs.sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", rs.sock);
	k.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(k.fd, 0);
	ck_assert_int_eq(bind(k.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(k.fd, 64), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, count_accepts, &k), 0);
	end = t0 + 1600;
	while ((t = sk_test_redis_now_ms()) < end && calls < 10000000) {
		rc = sk_cpool_view(a, ITEM, &(struct sk_cpool_view){0});
		ck_assert_msg(rc == -ENOTCONN || rc == -ETIMEDOUT, "view: %d", rc);
		ck_assert_int_lt(sk_test_redis_now_ms() - t, 1000);
		calls++;
	}
	atomic_store(&k.stop, true);
	pthread_join(th, NULL);
	close(k.fd);
	unlink(rs.sock);
	ck_assert_int_gt(calls, 100);
	ck_assert_msg(atomic_load(&k.accepts) >= 2 && atomic_load(&k.accepts) <= 5,
		      "%d connects in 1.6 s", atomic_load(&k.accepts));
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* A Redis that takes the connection and never answers: -ETIMEDOUT after
 * the configured timeout, not a hang. The listener never accepts (the
 * kernel completes unix connects up to the backlog). */
START_TEST(timeout)
{
	struct sk_cpool_config c = cfg_of("a");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sk_cpool *p;
	long long t0, dt;
	int fd, rc, n;

	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/mute.sock", dir);
	ck_assert(n > 0 && (size_t)n < sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	c.unix_path = sa.sun_path;
	c.timeout_ms = 300;
	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	t0 = sk_test_redis_now_ms();
	rc = sk_cpool_view(p, ITEM, &(struct sk_cpool_view){0});
	dt = sk_test_redis_now_ms() - t0;
	ck_assert_msg(rc == -ETIMEDOUT, "view: %d (%s)", rc, sk_cpool_errstr(p));
	ck_assert_msg(dt >= 250 && dt < 5000, "timed out after %lld ms", dt);
	ck_assert(strstr(sk_cpool_errstr(p), "timed out") != NULL);
	/* In backoff now: the next call fails at once. */
	t0 = sk_test_redis_now_ms();
	ck_assert_int_eq(sk_cpool_view(p, ITEM, &(struct sk_cpool_view){0}), -ENOTCONN);
	ck_assert_int_lt(sk_test_redis_now_ms() - t0, 250);
	sk_cpool_close(p);
	close(fd);
}
END_TEST

START_TEST(restart_fences)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_view v;
	uint64_t g;
	bool unf;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 30, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 20, &g), 0);
	ck_assert_int_eq(sk_cpool_giveback(b, ITEM, 2, 5), 0);
	wait_aof("2:give:5:5"); /* kill -9 after everysec wrote it */
	restart();
	v = view_up(a);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.epoch, 2);
	ck_assert_uint_eq(v.synced[0] + v.synced[1], 0);
	/* The ops survived in the AOF: a resend replays. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 30, &g), 0);
	ck_assert_uint_eq(g, 30);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 30, &g), -EAGAIN);
	/* Every member's durable word; the pool is rebuilt from them. */
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 30, &unf), -ESTALE);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 30, &unf), 0);
	ck_assert(!unf);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 15, &unf), 0);
	ck_assert(unf);
	v = view(a);
	ck_assert_uint_eq(v.free, TOTAL - 45);
	ck_assert_uint_eq(v.synced[0], 2);
	check_sum(a);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 30, &g), 0);
	ck_assert_uint_eq(g, 30);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* lost_grants: Redis comes back from an older AOF (a failover to a replica
 * that was behind, or writes lost after their answer): grants the members
 * recorded are gone from Redis. After every member's sync no unit is
 * counted twice: free == total - what the members hold. */
START_TEST(lost_grants)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	char old[PATH_MAX];
	struct sk_cpool_view v;
	uint64_t g, held_a = 0, held_b = 0;
	bool unf;
	int n;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 30, &g), 0);
	held_a += g;
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 20, &g), 0);
	held_b += g;
	wait_aof("1:lease:20:20"); /* b's op is in the AOF: the copy has it */
	n = snprintf(old, sizeof(old), "%s/t-XXXXXX", base);
	ck_assert(n > 0 && (size_t)n < sizeof(old));
	ck_assert_ptr_nonnull(mkdtemp(old));
	ck_assert_int_eq(sk_test_redis_copy_aof(dir, old), 0);
	/* After the copy: grants the members record (their LMDB), then lost. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 25, &g), 0);
	held_a += g;
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 2, 25, &g), 0);
	held_b += g;
	ck_assert_uint_eq(view(a).free, TOTAL - 100);
	ck_assert_int_eq(sk_test_redis_stop(&rs, SIGKILL), 0);
	ck_assert_int_eq(sk_test_redis_copy_aof(old, dir), 0);
	sk_test_rmtree(old);
	ck_assert_int_eq(sk_test_redis_start(&rs, dir), 0);
	v = view_up(a);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.free, TOTAL - 50); /* Redis forgot 50 granted units */
	/* a's pending op (seq 3, never answered) is refused while fenced. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 3, 10, &g), -EAGAIN);
	/* A lost op resent is not replayed (Redis has seq 1): fenced too. */
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 2, 25, &g), -EAGAIN);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, v.epoch, held_a, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, v.epoch, held_b, &unf), 0);
	ck_assert(unf);
	v = view(a);
	ck_assert_uint_eq(v.free, TOTAL - held_a - held_b);
	ck_assert_uint_eq(v.free, 0);
	check_sum(a);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 3, 10, &g), 0);
	ck_assert_uint_eq(g, 0); /* nothing granted twice */
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* total_loss: Redis lost everything (FLUSHALL, then a restart): init again,
 * fenced at epoch 1, the members' words rebuild the pool. */
START_TEST(total_loss)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_view v;
	char out[64];
	uint64_t g;
	bool unf;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 30, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 20, &g), 0);
	redis_cmd(out, sizeof(out), "FLUSHALL");
	wait_aof("FLUSHALL");
	restart();
	/* The old connection broke: the call makes a new one at once. */
	ck_assert_int_eq(sk_cpool_view(a, ITEM, &v), -ENOENT);
	{
		long long end = sk_test_redis_now_ms() + WAIT_MS;
		int rc;

		do {
			rc = sk_cpool_lease(a, ITEM, 2, 5, &g);
		} while (rc == -ENOTCONN && sk_test_redis_now_ms() < end && poll(NULL, 0, 20) == 0);
		ck_assert_int_eq(rc, -ENOENT);
	}
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	v = view(a);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.epoch, 1);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 30, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 20, &unf), 0);
	ck_assert(unf);
	ck_assert_uint_eq(view(a).free, TOTAL - 50);
	check_sum(a);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

START_TEST(oversold)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	char out[64];
	bool unf = true;

	ready(a, b);
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:pool boot 0000");
	ck_assert_uint_eq(view(a).epoch, 2);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 60, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 41, &unf), -EOVERFLOW);
	ck_assert(!unf);
	ck_assert(strstr(sk_cpool_errstr(b), "hold 101 of 100") != NULL);
	ck_assert(view(a).fenced);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, SK_CPOOL_UNITS_MAX + 1, &unf), -EOVERFLOW);
	/* b's corrected word: the rebuild goes through. */
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 40, &unf), 0);
	ck_assert(unf);
	ck_assert_uint_eq(view(a).free, 0);
	check_sum(a);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* A pool fenced OVERSOLD (every member synced, they hold more than the
 * total): a restock that covers the difference rebuilds it at once and it
 * sells again; one too small leaves it fenced, and a forget retries. */
START_TEST(oversold_restock)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_view v;
	char out[64];
	uint64_t g;
	bool unf = true;

	ready(a, b);
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:pool boot 0000");
	ck_assert_uint_eq(view(a).epoch, 2);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 70, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 40, &unf), -EOVERFLOW);
	ck_assert(view(a).fenced);
	/* 5 units: still 5 short, stays fenced (the restock is applied). */
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 1, 5, NULL), 0);
	v = view(a);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.total, TOTAL + 5);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 1, &g), -EAGAIN);
	/* 8 more: 113 - 110 = 3 free, unfenced, a lease is granted. */
	ck_assert_int_eq(sk_cpool_restock(b, ITEM, 2, 8, NULL), 0);
	v = view(a);
	ck_assert(!v.fenced);
	ck_assert_uint_eq(v.free, 3);
	check_sum(a);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 5, &g), 0);
	ck_assert_uint_eq(g, 3);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* An operator's restock: total and free grow, a sold-out item reopens
 * (broadcast), the same request again changes nothing, another size under
 * its id is refused; init still accepts the base total; while fenced only
 * total grows and the rebuild counts it; the limits. */
START_TEST(restock)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_sub *s = subscribed();
	struct evs e = {0};
	struct sk_cpool_view v;
	uint64_t g;
	bool so, rep = true, unf;
	char out[64];

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 60, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 60, &g), 0);
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, &so, NULL), 0);
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, &so, NULL), 0);
	ck_assert(so);
	wait_events(s, &e, 1);
	/* Reopened by 30 more units. */
	ck_assert_int_eq(sk_cpool_restock(b, ITEM, 5, 30, &rep), 0);
	ck_assert(!rep);
	v = view(a);
	ck_assert_uint_eq(v.total, TOTAL + 30);
	ck_assert_uint_eq(v.free, 30);
	ck_assert(!v.sold_out);
	ck_assert_uint_eq(v.version, 2);
	wait_events(s, &e, 2);
	ck_assert(!e.ev[1].sold_out);
	ck_assert_uint_eq(e.ev[1].version, 2);
	check_sum(a);
	/* The same request: nothing; its id with another size: refused. */
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 5, 30, &rep), 0);
	ck_assert(rep);
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 5, 31, &rep), -EEXIST);
	ck_assert_uint_eq(view(a).total, TOTAL + 30);
	/* A member's init (a restart) still names the base total. */
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ab, 2), 0);
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL + 30, ab, 2), -EEXIST);
	/* Fenced (as by another Redis): only total grows; the rebuild
	 * counts it: free = 140 - (60 + 40). */
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:pool boot another-redis");
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 6, 10, NULL), 0);
	v = view(a);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.total, TOTAL + 40);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, v.epoch, 60, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, v.epoch, 40, &unf), 0);
	ck_assert(unf);
	ck_assert_uint_eq(view(a).free, 40);
	check_sum(a);
	/* Limits and bad calls: nothing applied. */
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 7, SK_CPOOL_UNITS_MAX, NULL), -EOVERFLOW);
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 7, SK_CPOOL_UNITS_MAX + 1, NULL), -EINVAL);
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 0, 1, NULL), -EINVAL);
	ck_assert_int_eq(sk_cpool_restock(a, ITEM, 8, 0, NULL), -EINVAL);
	ck_assert_int_eq(sk_cpool_restock(a, ITEM + 1, 9, 1, NULL), -ENOENT);
	ck_assert_uint_eq(view(a).total, TOTAL + 40);
	sk_cpool_sub_close(s);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* A shop's stock key read as a count of units; everything else refused. */
START_TEST(get_units)
{
	struct sk_cpool *a = open_member("a");
	uint64_t u = 7;
	char out[64];

	redis_cmd(out, sizeof(out), "SET stock:{sku42} 1500");
	ck_assert_int_eq(sk_cpool_get_units(a, "stock:{sku42}", &u), 0);
	ck_assert_uint_eq(u, 1500);
	redis_cmd(out, sizeof(out), "SET big 9007199254740992");
	ck_assert_int_eq(sk_cpool_get_units(a, "big", &u), 0);
	ck_assert_uint_eq(u, SK_CPOOL_UNITS_MAX);
	u = 7;
	ck_assert_int_eq(sk_cpool_get_units(a, "stock:{none}", &u), -ENOENT);
	static const char *const bad[] = {
		"0", "-5", "12x", "", " 3", "007", "9007199254740993", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "SET bad \"%s\"", bad[i]);
		redis_cmd(out, sizeof(out), cmd);
		ck_assert_msg(sk_cpool_get_units(a, "bad", &u) == -EINVAL, "value '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(sk_cpool_errstr(a), "not a count"));
	}
	redis_cmd(out, sizeof(out), "HSET ahash f 1");
	ck_assert_int_eq(sk_cpool_get_units(a, "ahash", &u), -EPROTO);
	ck_assert_ptr_nonnull(strstr(sk_cpool_errstr(a), "WRONGTYPE"));
	ck_assert_int_eq(sk_cpool_get_units(a, "", &u), -EINVAL);
	ck_assert_uint_eq(u, 7);
	/* The slot of a key: its hash tag, else all of it (Redis Cluster's
	 * test vector: crc16("123456789") is 0x31c3). */
	ck_assert_uint_eq(sk_cpool_key_slot("123456789"), 0x31c3 % SK_CPOOL_SLOTS);
	ck_assert_uint_eq(sk_cpool_key_slot("x{123456789}y"), 0x31c3 % SK_CPOOL_SLOTS);
	ck_assert_uint_ne(sk_cpool_key_slot("{}123456789"),
			  0x31c3 % SK_CPOOL_SLOTS); /* empty tag: all */
	ck_assert_uint_eq(sk_cpool_key_slot("seckill:{7}:pool"), sk_cpool_slot(7));
	sk_cpool_close(a);
}
END_TEST

START_TEST(forget)
{
	const char *const abc[] = {"a", "b", "c"};
	struct sk_cpool *a = open_member("a"), *b = open_member("b"), *c = open_member("c");
	struct sk_cpool_view v;
	uint64_t g;
	bool unf;

	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, abc, 3), 0);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(!unf);
	/* c never comes: the operator forgets it while fenced. */
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "c", 0), 0);
	v = view(a);
	ck_assert(!v.fenced);
	ck_assert_uint_eq(v.free, TOTAL);
	ck_assert_uint_eq(v.members, 3); /* c still counted in the leases */
	ck_assert_int_eq(sk_cpool_lease(c, ITEM, 1, 1, &g), -ENOENT);
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "c", 0), -ENOENT);
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "C", 0), -EINVAL);
	/* Not fenced: b holds 40 in Redis, its last word is 35 (a give back
	 * lost on the way): 5 units come back to the pool. */
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 40, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 60, &g), 0);
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "b", 41), -EOVERFLOW);
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "b", 35), 0);
	v = view(a);
	ck_assert_uint_eq(v.free, 5);
	ck_assert_uint_eq(held_of(&v, "b"), 35);
	check_sum(a);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 2, 1, &g), -ENOENT);
	/* With b gone, a alone decides the sold-out flag. */
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 10, &g), 0);
	ck_assert_uint_eq(g, 5);
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, NULL, NULL), 0);
	ck_assert(view(a).sold_out);
	sk_cpool_close(a);
	sk_cpool_close(b);
	sk_cpool_close(c);
}
END_TEST

/* A member forgotten holding 30 units, then Redis loses everything: the
 * pool made again by an init that names it (from a member's LMDB) counts
 * its 30 units as gone; an init that does not (another member's) never
 * makes it a member again. Redis back from before the forget (fenced, the
 * gone member still a member): the init forgets it again. */
START_TEST(forget_then_loss)
{
	const char *const abc[] = {"a", "b", "c"};
	const struct sk_cpool_forgotten gone[] = {{"c", 30}};
	struct sk_cpool *a = open_member("a"), *b = open_member("b"), *c = open_member("c");
	struct sk_cpool_view v;
	char out[64];
	uint64_t g;
	bool unf;

	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, abc, 3), 0);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(c, ITEM, 1, 0, &unf), 0);
	ck_assert(unf);
	ck_assert_int_eq(sk_cpool_lease(c, ITEM, 1, 30, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 20, &g), 0);
	ck_assert_int_eq(sk_cpool_forget(a, ITEM, "c", 30), 0);
	v = view(a);
	ck_assert_uint_eq(v.active, 2);
	ck_assert_uint_eq(v.members, 3);
	ck_assert_str_eq(v.member[2], "c");
	ck_assert_uint_eq(v.held[2], 30);
	/* Every key lost. b's init (it knows of no forget) makes the pool,
	 * a's names c: c's units are counted, c is no member. */
	redis_cmd(out, sizeof(out), "FLUSHALL");
	ck_assert_int_eq(sk_cpool_init(b, ITEM, TOTAL, abc, 3), 0);
	ck_assert_int_eq(sk_cpool_init_forgotten(a, ITEM, TOTAL, abc, 3, gone, 1), 0);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 20, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(unf);
	v = view(a);
	ck_assert_uint_eq(v.free, TOTAL - 20 - 30);
	ck_assert_uint_eq(v.active, 2);
	check_sum(a);
	/* b's init again (a restart): c stays out. */
	ck_assert_int_eq(sk_cpool_init(b, ITEM, TOTAL, abc, 3), 0);
	ck_assert_uint_eq(view(a).active, 2);
	ck_assert_int_eq(sk_cpool_lease(c, ITEM, 2, 1, &g), -ENOENT);
	/* Lost again, the pool made by b alone: c is a member, it never
	 * syncs; a's init forgets it again and the pool is rebuilt. */
	redis_cmd(out, sizeof(out), "FLUSHALL");
	ck_assert_int_eq(sk_cpool_init(b, ITEM, TOTAL, abc, 3), 0);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 20, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(!unf);
	ck_assert_int_eq(sk_cpool_init_forgotten(a, ITEM, TOTAL, abc, 3, gone, 1), 0);
	v = view(a);
	ck_assert(!v.fenced);
	ck_assert_uint_eq(v.free, TOTAL - 20 - 30);
	/* Bad forgotten entries: refused before Redis. */
	const struct sk_cpool_forgotten bad[] = {{"C", 1}, {"c", SK_CPOOL_UNITS_MAX + 1}};
	ck_assert_int_eq(sk_cpool_init_forgotten(a, ITEM, TOTAL, abc, 3, bad, 1), -EINVAL);
	ck_assert_int_eq(sk_cpool_init_forgotten(a, ITEM, TOTAL, abc, 3, bad + 1, 1), -EINVAL);
	sk_cpool_close(a);
	sk_cpool_close(b);
	sk_cpool_close(c);
}
END_TEST

/* After a fence every dry report is void: sold out only once the members
 * report again. */
START_TEST(fence_voids_dry)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	char out[64];
	uint64_t g;
	bool so, unf;

	ready(a, b);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 50, &g), 0);
	ck_assert_int_eq(sk_cpool_lease(b, ITEM, 1, 50, &g), 0);
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, &so, NULL), 0);
	ck_assert(!so);
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:pool boot 0000");
	/* Fenced: a report is recorded but never flips (free is not known). */
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, &so, NULL), 0);
	ck_assert(!so);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 50, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 50, &unf), 0);
	ck_assert(unf);
	ck_assert(!view(a).sold_out); /* a's report was voided by the fence */
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, &so, NULL), 0);
	ck_assert(so);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

START_TEST(sub_reconnect)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	struct sk_cpool_sub *s = subscribed();
	struct evs e = {0};
	long long end;
	bool resub = false;
	uint64_t g;
	int rc;

	ready(a, b);
	wait_aof("fenced\r\n$1\r\n0"); /* the pool survives the kill */
	ck_assert_int_eq(sk_test_redis_stop(&rs, SIGKILL), 0);
	rc = sk_cpool_sub_poll(s, 1000, on_event, &e, &resub);
	ck_assert_msg(rc == -ENOTCONN, "poll: %d", rc);
	ck_assert(!resub);
	ck_assert(sk_cpool_sub_errstr(s)[0] != '\0');
	ck_assert_int_eq(sk_test_redis_start(&rs, dir), 0);
	end = sk_test_redis_now_ms() + WAIT_MS;
	while (!resub && sk_test_redis_now_ms() < end) {
		rc = sk_cpool_sub_poll(s, 200, on_event, &e, &resub);
		ck_assert(rc >= 0 || rc == -ENOTCONN);
	}
	ck_assert(resub);
	/* Subscribed again: the fence (a new Redis) is told on the pool
	 * channel, and the next flip arrives. */
	(void)view_up(a);
	wait_pool(s, &e, 1, TOTAL, false);
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 2, 0, &resub), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 2, 0, &resub), 0);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, TOTAL, &g), 0);
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, NULL, NULL), 0);
	wait_events(s, &e, 1);
	ck_assert(e.ev[0].sold_out);
	sk_cpool_sub_close(s);
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

START_TEST(noscript_reload)
{
	struct sk_cpool *a = open_member("a"), *b = open_member("b");
	char out[64];
	uint64_t g;

	ready(a, b);
	redis_cmd(out, sizeof(out), "SCRIPT FLUSH");
	ck_assert_str_eq(out, "OK");
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, 10, &g), 0);
	ck_assert_uint_eq(g, 10);
	ck_assert(sk_cpool_up(a));
	sk_cpool_close(a);
	sk_cpool_close(b);
}
END_TEST

/* The view holds SK_CPOOL_MEMBERS_MAX names: one more (a forgotten member
 * still counted in the leases) is -ENOSPC, not a truncated view. */
START_TEST(view_full)
{
	static char names[SK_CPOOL_MEMBERS_MAX][8];
	const char *ids[SK_CPOOL_MEMBERS_MAX];
	struct sk_cpool *a = open_member("m0");
	struct sk_cpool_view v;
	char out[64];

	for (int i = 0; i < SK_CPOOL_MEMBERS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "m%d", i);
		ids[i] = names[i];
	}
	ck_assert_int_eq(sk_cpool_init(a, ITEM, TOTAL, ids, SK_CPOOL_MEMBERS_MAX), 0);
	v = view(a);
	ck_assert_uint_eq(v.members, SK_CPOOL_MEMBERS_MAX);
	redis_cmd(out, sizeof(out), "HSET seckill:{7}:leases gone 0");
	ck_assert_int_eq(sk_cpool_view(a, ITEM, &v), -ENOSPC);
	ck_assert(strstr(sk_cpool_errstr(a), "members") != NULL);
	sk_cpool_close(a);
}
END_TEST

START_TEST(prefix)
{
	struct sk_cpool_config c = cfg_of("a");
	struct sk_cpool *p;
	char out[64];

	c.prefix = "shop1";
	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	ck_assert_int_eq(sk_cpool_init(p, ITEM, TOTAL, ab, 2), 0);
	redis_cmd(out, sizeof(out), "EXISTS shop1:{7}:pool");
	ck_assert_str_eq(out, "1");
	redis_cmd(out, sizeof(out), "EXISTS seckill:{7}:pool");
	ck_assert_str_eq(out, "0");
	redis_cmd(out, sizeof(out), "GET shop1:soldout:{7}");
	ck_assert_str_eq(out, "0:0");
	sk_cpool_close(p);
}
END_TEST

/* claim: @member claims number @n; its result, and what Redis held. */
static int
claim(const char *member, uint32_t n, struct sk_cpool_claim *c)
{
	struct sk_cpool *p = open_member(member);
	int rc = sk_cpool_claim(p, n, c);

	if (rc == -EEXIST) /* the words name both ids and the number */
		ck_assert_msg(strstr(sk_cpool_errstr(p), member) != NULL &&
				      strstr(sk_cpool_errstr(p), "number") != NULL,
			      "errstr: %s", sk_cpool_errstr(p));
	sk_cpool_close(p);
	return rc;
}

/* Members given the same list claim their numbers; each claim again (a
 * restart) changes nothing; after Redis lost the hash they claim again. */
START_TEST(numbers_agree)
{
	static const char *const list[] = {"c", "a", "b"};
	struct sk_cpool_claim c;
	char out[64];

	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(claim(list[i], i + 1, &c), 0);
		ck_assert(c.fresh);
		ck_assert_str_eq(c.holder, "");
		ck_assert_uint_eq(c.held, 0);
	}
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(claim(list[i], i + 1, &c), 0);
		ck_assert(!c.fresh);
		ck_assert_str_eq(c.holder, list[i]);
		ck_assert_uint_eq(c.held, i + 1);
	}
	redis_cmd(out, sizeof(out), "HGET seckill:member_numbers number:1");
	ck_assert_str_eq(out, "c");
	redis_cmd(out, sizeof(out), "HGET seckill:member_numbers member:b");
	ck_assert_str_eq(out, "3");
	redis_cmd(out, sizeof(out), "HLEN seckill:member_numbers");
	ck_assert_str_eq(out, "6");
	redis_cmd(out, sizeof(out), "FLUSHALL");
	ck_assert_int_eq(claim("a", 2, &c), 0);
	ck_assert(c.fresh);
	ck_assert_int_eq(claim("a", 0, &c), -EINVAL);
	ck_assert_int_eq(claim("a", SK_CPOOL_MEMBERS_MAX + 1, &c), -EINVAL);
}
END_TEST

/* c runs with --cluster-members c,a,b (number 1), a with a,b (number 1
 * too): their order ids would collide. a's claim is refused, naming c, and
 * nothing is written; b, number 3 for c's list and 2 for a's, likewise;
 * either way round. */
START_TEST(numbers_conflict)
{
	struct sk_cpool_claim c;
	char out[64];

	ck_assert_int_eq(claim("c", 1, &c), 0);
	ck_assert_int_eq(claim("b", 3, &c), 0);
	ck_assert_int_eq(claim("a", 1, &c), -EEXIST);
	ck_assert(!c.fresh);
	ck_assert_str_eq(c.holder, "c");
	ck_assert_uint_eq(c.held, 0);
	redis_cmd(out, sizeof(out), "HEXISTS seckill:member_numbers member:a");
	ck_assert_str_eq(out, "0");
	ck_assert_int_eq(claim("b", 2, &c), -EEXIST);
	ck_assert_str_eq(c.holder, "");
	ck_assert_uint_eq(c.held, 3);
	redis_cmd(out, sizeof(out), "HEXISTS seckill:member_numbers number:2");
	ck_assert_str_eq(out, "0");
	/* a may take 2 (nobody's), then never 1 */
	ck_assert_int_eq(claim("a", 2, &c), 0);
	ck_assert_int_eq(claim("a", 1, &c), -EEXIST);
	ck_assert_str_eq(c.holder, "c");
	ck_assert_uint_eq(c.held, 2);
	/* The other way round: a first with a,b, then c with c,a,b. */
	redis_cmd(out, sizeof(out), "DEL seckill:member_numbers");
	ck_assert_int_eq(claim("a", 1, &c), 0);
	ck_assert_int_eq(claim("c", 1, &c), -EEXIST);
	ck_assert_str_eq(c.holder, "a");
	redis_cmd(out, sizeof(out), "HGET seckill:member_numbers number:1");
	ck_assert_str_eq(out, "a");
}
END_TEST

static Suite *
cpool_suite(void)
{
	Suite *s = suite_create("cpool");
	TCase *t = tcase_create("redis");

	tcase_add_unchecked_fixture(t, base_setup, base_teardown);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, member_ids);
	tcase_add_test(t, open_refuses);
	tcase_add_test(t, init_idempotent);
	tcase_add_test(t, fenced_at_start);
	tcase_add_test(t, lease_sizes);
	tcase_add_test(t, replay_stale_reuse);
	tcase_add_test(t, giveback);
	tcase_add_test(t, sold_out_and_reopen);
	tcase_add_test(t, killed_backoff);
	tcase_add_test(t, timeout);
	tcase_add_test(t, restart_fences);
	tcase_add_test(t, lost_grants);
	tcase_add_test(t, total_loss);
	tcase_add_test(t, oversold);
	tcase_add_test(t, restock);
	tcase_add_test(t, oversold_restock);
	tcase_add_test(t, get_units);
	tcase_add_test(t, forget);
	tcase_add_test(t, forget_then_loss);
	tcase_add_test(t, fence_voids_dry);
	tcase_add_test(t, sub_reconnect);
	tcase_add_test(t, noscript_reload);
	tcase_add_test(t, view_full);
	tcase_add_test(t, prefix);
	tcase_add_test(t, numbers_agree);
	tcase_add_test(t, numbers_conflict);
	suite_add_tcase(s, t);
	return s;
}

SK_TEST_MAIN(cpool_suite)
