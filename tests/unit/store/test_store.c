/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the LMDB order store (storage/sk_store.h), each in its own
 * store under a temporary directory that the fixture removes: insert and
 * read back, idempotent replay, the (item, user) index, the order state
 * machine (every from/to pair, pay racing cancel), deadlines, the event log,
 * cursors across reopen, activities, the oversell guards, schema version
 * checks, a 10,000-order batch, kill -9 in the middle of writes, and a full
 * map. Most tests use SK_STORE_NOSYNC (kill -9 safe, not power-loss safe)
 * to keep the suite fast; the batch and crash tests use durable commits.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>

#include "sk_store.h"
#include "sk_store_payments.h"
#include "sk_test.h"
#include "sk_test_fs.h"

#define MS  ((int64_t)1000000)
#define MIN (60 * 1000 * MS)

/* ------------------------------------------------------------------ helpers */

static char base_dir[PATH_MAX];

static void
base_setup(void)
{
	int rc = sk_test_tmpdir(base_dir, sizeof(base_dir), "sk-store-test");

	if (rc != 0) {
		fprintf(stderr, "sk_test_tmpdir: %s\n", strerror(-rc));
		abort();
	}
}

static void
base_teardown(void)
{
	sk_test_rmtree(base_dir);
}

/* store_dir - a directory for the store of test @name (not created). */
static const char *
store_dir(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", base_dir, name);
	return path;
}

static struct sk_store *
open_at(const char *dir, unsigned flags, uint64_t map_size)
{
	struct sk_store_conf conf = {.map_size = map_size, .flags = flags};
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = NULL;
	int rc = sk_store_open(&st, dir, &conf, err, sizeof(err));

	ck_assert_msg(rc == 0, "open %s: %d %s", dir, rc, err);
	return st;
}

static struct sk_store *
open_test(const char *name)
{
	return open_at(store_dir(name), SK_STORE_NOSYNC, 0);
}

static void
assert_consistent(struct sk_store *st)
{
	char err[SK_STORE_ERR_MAX];
	int rc = sk_store_verify(st, err, sizeof(err));

	ck_assert_msg(rc == 0, "verify: %d %s", rc, err);
}

static struct sk_order_rec
rec(uint64_t id, uint64_t user, uint32_t item, uint16_t qty)
{
	return (struct sk_order_rec){.id = id,
				     .user = user,
				     .price = 100 * item,
				     .time_ns = 1000 * MS,
				     .item = item,
				     .client_ip = 0x0100007f,
				     .qty = qty,
				     .line = 0,
				     .nlines = 1};
}

/* cart - lines of one order over @items (distinct), qty 1 each. */
static void
cart(struct sk_order_rec *out, uint64_t id, uint64_t user, const uint32_t *items, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		out[j] = rec(id, user, items[j], 1);
		out[j].line = (uint8_t)j;
		out[j].nlines = (uint8_t)n;
	}
}

static void
put_ok(struct sk_store *st, const struct sk_order_rec *r, size_t n, struct sk_store_put_stats *s)
{
	int rc = sk_store_put_orders(st, r, n, 15 * MIN, 2000 * MS, NULL, s);

	ck_assert_int_eq(rc, 0);
}

static unsigned
state_of(struct sk_store *st, uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	ck_assert_int_eq(sk_store_order_get(st, id, l, SK_STORE_MAX_LINES, &n), 0);
	return l[0].state;
}

static struct sk_store_activity
activity(uint32_t item, uint64_t total, uint32_t limit)
{
	struct sk_store_activity a = {.item = item,
				      .per_user_limit = limit,
				      .total = total,
				      .price = 999,
				      .start_ns = 0,
				      .end_ns = INT64_MAX,
				      .pay_timeout_ns = 0};

	snprintf(a.name, sizeof(a.name), "item-%u", item);
	return a;
}

/* Collectors for the foreach calls. */
struct holdings {
	struct sk_store_holding h[64];
	unsigned n;
};

static int
collect_holding(const struct sk_store_holding *h, void *arg)
{
	struct holdings *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->h));
	c->h[c->n++] = *h;
	return 0;
}

static int
collect_holding_stop(const struct sk_store_holding *h, void *arg)
{
	(void)h, (void)arg;
	return 7;
}

struct deadlines {
	int64_t when[256];
	uint64_t order[256];
	unsigned n;
};

static int
collect_deadline(int64_t when, uint64_t order, void *arg)
{
	struct deadlines *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->when));
	c->when[c->n] = when;
	c->order[c->n++] = order;
	return 0;
}

struct events {
	struct sk_store_event ev[64];
	unsigned n;
	unsigned stop_after; /* 0: never */
};

static int
collect_event(const struct sk_store_event *ev, void *arg)
{
	struct events *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->ev));
	c->ev[c->n++] = *ev;
	return c->stop_after != 0 && c->n == c->stop_after ? 42 : 0;
}

/* ------------------------------------------------------------------ basics */

START_TEST(open_creates_and_reopens)
{
	struct sk_store *st = open_test("open");
	struct sk_store_info info;

	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	ck_assert_uint_eq(info.schema_minor, SK_STORE_SCHEMA_MINOR);
	ck_assert_uint_eq(info.map_size, SK_STORE_MAP_SIZE_DEFAULT);
	ck_assert_uint_eq(info.order_lines, 0);
	ck_assert_uint_eq(info.event_next, 1);
	assert_consistent(st);
	sk_store_close(st);

	st = open_test("open");
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	sk_store_close(st);
	sk_store_close(NULL);
}
END_TEST

START_TEST(open_bad_arguments)
{
	struct sk_store *st = NULL;
	struct sk_store_conf bad = {.flags = 1u << 7};
	char err[SK_STORE_ERR_MAX];

	ck_assert_int_eq(sk_store_open(&st, "", NULL, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(sk_store_open(&st, NULL, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(sk_store_open(&st, store_dir("bad"), &bad, err, sizeof(err)), -EINVAL);
	/* Read-only where nothing exists. */
	struct sk_store_conf ro = {.flags = SK_STORE_RDONLY};
	ck_assert_int_eq(sk_store_open(&st, store_dir("nothing"), &ro, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(st);
	/* A regular file where the directory should be. */
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s", store_dir("file"));
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_lt(sk_store_open(&st, path, NULL, err, sizeof(err)), 0);
	ck_assert_ptr_null(st);
}
END_TEST

/* Rewrite the schema record with raw LMDB, as another build would have. */
static void
stamp_schema(const char *dir, uint32_t major, uint32_t minor)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t v[12] = {'S', 'K', 'S', 'T', 0, 0, 0, (uint8_t)major, 0, 0, 0, (uint8_t)minor};
	MDB_val k = {.mv_size = 6, .mv_data = "schema"}, d = {.mv_size = 12, .mv_data = v};

	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 16), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &d, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

START_TEST(schema_version_checked)
{
	const char *dir = store_dir("schema");
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = open_at(dir, 0, 0);
	struct sk_order_rec r = rec(1, 1, 1, 1);

	put_ok(st, &r, 1, NULL);
	sk_store_close(st);

	/* Another major version: refused with a message that says so. */
	stamp_schema(dir, SK_STORE_SCHEMA_MAJOR + 1, 0);
	st = NULL;
	ck_assert_int_eq(sk_store_open(&st, dir, NULL, err, sizeof(err)), -EPROTO);
	ck_assert_ptr_null(st);
	char want[32];
	snprintf(want, sizeof(want), "schema %u.0", SK_STORE_SCHEMA_MAJOR + 1);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	ck_assert_msg(strstr(err, dir) != NULL, "%s", err);

	/* A newer minor version is readable (minor versions only add). */
	stamp_schema(dir, SK_STORE_SCHEMA_MAJOR, SK_STORE_SCHEMA_MINOR + 1);
	st = open_at(dir, 0, 0);
	ck_assert_uint_eq(state_of(st, 1), SK_ORDER_CONFIRMED);
	sk_store_close(st);

	/* An LMDB environment that is not ours. */
	const char *other = store_dir("not-ours");
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = {.mv_size = 1, .mv_data = "k"}, d = {.mv_size = 1, .mv_data = "v"};
	ck_assert_int_eq(mkdir(other, 0700), 0);
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_open(env, other, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &d, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	ck_assert_int_eq(sk_store_open(&st, other, NULL, err, sizeof(err)), -EPROTO);
	ck_assert_msg(strstr(err, "not a seckill store") != NULL, "%s", err);
}
END_TEST

START_TEST(insert_and_read_back)
{
	struct sk_store *st = open_test("insert");
	struct sk_order_rec r[5];
	const uint32_t items[3] = {7, 3, 9};
	uint8_t oc[5];
	struct sk_store_put_stats s;

	r[0] = rec(0x100, 11, 5, 2);
	r[1] = rec(0x101, 12, 5, 1);
	cart(&r[2], 0x102, 13, items, 3);
	ck_assert_int_eq(sk_store_put_orders(st, r, 5, 15 * MIN, 2000 * MS, oc, &s), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(oc[i], SK_STORE_NEW);
	ck_assert_uint_eq(s.orders_new, 3);
	ck_assert_uint_eq(s.lines_new, 5);
	ck_assert_uint_eq(s.units_new, 6);
	ck_assert_uint_eq(s.orders_dup, 0);
	ck_assert_uint_eq(s.orders_refused, 0);
	ck_assert_uint_eq(s.event_first, 1);
	ck_assert_uint_eq(s.event_last, 3);

	struct sk_store_line l[4];
	unsigned n = 0;
	ck_assert_int_eq(sk_store_order_get(st, 0x100, l, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(&l[0].rec, &r[0], sizeof(r[0]));
	ck_assert_uint_eq(l[0].state, SK_ORDER_CONFIRMED);
	ck_assert_int_eq(l[0].deadline_ns, r[0].time_ns + 15 * MIN);
	ck_assert_int_eq(l[0].stored_ns, 2000 * MS);
	ck_assert_int_eq(l[0].updated_ns, 2000 * MS);

	ck_assert_int_eq(sk_store_order_get(st, 0x102, l, 4, &n), 0);
	ck_assert_uint_eq(n, 3);
	for (unsigned j = 0; j < 3; j++) {
		ck_assert_mem_eq(&l[j].rec, &r[2 + j], sizeof(r[0]));
		ck_assert_uint_eq(l[j].state, SK_ORDER_CONFIRMED);
	}
	/* Too small an array: the count is still reported. */
	ck_assert_int_eq(sk_store_order_get(st, 0x102, l, 2, &n), -ENOSPC);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(sk_store_order_get(st, 0x999, l, 4, &n), -ENOENT);
	ck_assert_int_eq(sk_store_put_orders(st, NULL, 1, 0, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(sk_store_put_orders(st, NULL, 0, 0, 0, NULL, &s), 0);
	ck_assert_uint_eq(s.orders_new, 0);

	/* No deadline when no timeout applies. */
	struct sk_order_rec nd = rec(0x200, 14, 5, 1);
	ck_assert_int_eq(sk_store_put_orders(st, &nd, 1, 0, 3000 * MS, NULL, NULL), 0);
	ck_assert_int_eq(sk_store_order_get(st, 0x200, l, 4, &n), 0);
	ck_assert_int_eq(l[0].deadline_ns, 0);

	struct sk_store_info info;
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.order_lines, 6);
	ck_assert_uint_eq(info.holdings_entries, 6);
	ck_assert_uint_eq(info.deadlines, 3);
	ck_assert_uint_eq(info.events, 4);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(idempotent_reinsert)
{
	struct sk_store *st = open_test("reinsert");
	struct sk_order_rec r[4], again[6];
	const uint32_t items[2] = {1, 2};
	uint8_t oc[6];
	struct sk_store_put_stats s;

	r[0] = rec(10, 1, 1, 1);
	r[1] = rec(11, 2, 1, 3);
	cart(&r[2], 12, 3, items, 2);
	put_ok(st, r, 4, &s);
	ck_assert_uint_eq(s.orders_new, 3);

	/* The same batch again: all skipped, nothing appended. */
	ck_assert_int_eq(sk_store_put_orders(st, r, 4, 15 * MIN, 9000 * MS, oc, &s), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(oc[i], SK_STORE_DUP);
	ck_assert_uint_eq(s.orders_new, 0);
	ck_assert_uint_eq(s.orders_dup, 3);
	ck_assert_uint_eq(s.event_first, 0);

	/* A batch mixing a dup, a conflicting reuse of an id, a new order and
	 * the new order again (a replay inside one batch). */
	again[0] = r[0];
	again[1] = rec(11, 99, 1, 3); /* id 11 with another user */
	again[2] = rec(13, 4, 2, 1);
	again[3] = rec(13, 4, 2, 1);
	cart(&again[4], 12, 3, items, 2);
	again[5].qty = 2; /* line 1 of order 12 differs */
	ck_assert_int_eq(sk_store_put_orders(st, again, 6, 15 * MIN, 9000 * MS, oc, &s), 0);
	ck_assert_uint_eq(oc[0], SK_STORE_DUP);
	ck_assert_uint_eq(oc[1], SK_STORE_CONFLICT);
	ck_assert_uint_eq(oc[2], SK_STORE_NEW);
	ck_assert_uint_eq(oc[3], SK_STORE_DUP);
	ck_assert_uint_eq(oc[4], SK_STORE_CONFLICT);
	ck_assert_uint_eq(oc[5], SK_STORE_CONFLICT);
	ck_assert_uint_eq(s.orders_new, 1);
	ck_assert_uint_eq(s.orders_dup, 2);
	ck_assert_uint_eq(s.orders_refused, 2);

	/* Nothing was overwritten. */
	struct sk_store_line l[2];
	unsigned n;
	ck_assert_int_eq(sk_store_order_get(st, 11, l, 2, &n), 0);
	ck_assert_uint_eq(l[0].rec.user, 2);
	ck_assert_int_eq(sk_store_order_get(st, 12, l, 2, &n), 0);
	ck_assert_uint_eq(l[1].rec.qty, 1);
	ck_assert_int_eq(l[0].stored_ns, 2000 * MS);

	struct sk_store_ledger led;
	ck_assert_int_eq(sk_store_activity_get(st, 1, NULL, &led), -ENOENT);
	ck_assert_uint_eq(led.sold, 5);
	ck_assert_uint_eq(led.lines, 3);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/*
 * An id of the layout before issue 26 item 13 (unix second << 32 | lcore 6 |
 * seq 26) that a new-layout run minting later reproduces bit for bit: the
 * store must not take the new sale for a replay of the old order, even with
 * the same user, item, quantity and price (only its sale time differs).
 */
START_TEST(old_layout_id_reused_later)
{
	struct sk_store *st = open_test("oldlayout");
	const uint32_t old_run = 1764547200; /* 2025-12-01T00:00:00Z, a multiple of 4 */
	const uint64_t old = (uint64_t)old_run << 32 | 0u << 26 | 5;
	/* The run started at 2037-12-23T18:00:00Z, standalone, lcore 0, seq 5. */
	const uint64_t later = sk_order_id_make(SK_ORDER_EPOCH_BASE + old_run / 4, 0, 0, 5);
	struct sk_order_rec r = rec(old, 7, 1, 1), again;
	struct sk_store_put_stats s;
	struct sk_store_line l;
	uint8_t oc;
	unsigned n;

	ck_assert_uint_eq(later, old);
	ck_assert_uint_eq(sk_order_id_epoch(later), 2145204000u);
	put_ok(st, &r, 1, &s);
	ck_assert_uint_eq(s.orders_new, 1);
	/* The crash replay of the same record stays a duplicate. */
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 15 * MIN, 9000 * MS, &oc, &s), 0);
	ck_assert_uint_eq(oc, SK_STORE_DUP);
	/* The later sale with the same id: refused, the old order untouched. */
	again = r;
	again.time_ns = r.time_ns + 12 * 365 * 24 * 3600 * INT64_C(1000000000);
	ck_assert_int_eq(sk_store_put_orders(st, &again, 1, 15 * MIN, 9000 * MS, &oc, &s), 0);
	ck_assert_uint_eq(oc, SK_STORE_CONFLICT);
	ck_assert_uint_eq(s.orders_refused, 1);
	ck_assert_int_eq(sk_store_order_get(st, old, &l, 1, &n), 0);
	ck_assert_int_eq(l.rec.time_ns, r.time_ns);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(invalid_records_skipped)
{
	struct sk_store *st = open_test("invalid");
	struct sk_order_rec r[16];
	const uint32_t items[3] = {1, 2, 3};
	uint8_t oc[16];
	struct sk_store_put_stats s;
	size_t n = 0;

	r[n++] = rec(1, 1, 1, 1); /* 0: good */
	r[n++] = rec(0, 1, 1, 1); /* 1: id 0 */
	r[n++] = rec(2, 0, 1, 1); /* 2: user 0 */
	r[n++] = rec(3, 1, 0, 1); /* 3: item 0 */
	r[n++] = rec(4, 1, 1, 0); /* 4: qty 0 */
	r[n] = rec(5, 1, 1, 1);	  /* 5: returned already */
	r[n++].returned = 1;
	cart(&r[n], 6, 2, items, 3); /* 6,7: incomplete cart (2 of 3 lines) */
	n += 2;
	cart(&r[n], 7, 3, items, 2); /* 8,9: same item twice */
	r[n + 1].item = 1;
	n += 2;
	cart(&r[n], 8, 4, items, 2); /* 10,11: other user on line 1 */
	r[n + 1].user = 5;
	n += 2;
	r[n] = rec(9, 6, 1, 1); /* 12: line 1 without line 0 */
	r[n].line = 1, r[n++].nlines = 2;
	r[n++] = rec(10, 7, 2, 1); /* 13: good */
	ck_assert_int_eq(sk_store_put_orders(st, r, n, 15 * MIN, 0, oc, &s), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(oc[i] == ((i == 0 || i == 13) ? SK_STORE_NEW : SK_STORE_INVALID),
			      "record %zu: %s", i, sk_store_outcome_name(oc[i]));
	ck_assert_uint_eq(s.orders_new, 2);
	ck_assert_uint_eq(s.orders_refused, 9);

	struct sk_store_info info;
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.order_lines, 2);
	ck_assert_str_eq(sk_store_outcome_name(SK_STORE_INVALID), "invalid");
	ck_assert_str_eq(sk_store_outcome_name(99), "?");
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(index_contents)
{
	struct sk_store *st = open_test("index");
	struct sk_order_rec r[8];
	const uint32_t items[2] = {2, 1};
	struct holdings h = {0};

	r[0] = rec(0x10, 100, 1, 2);
	r[1] = rec(0x11, 100, 1, 1); /* same user, second order: limit > 1 */
	r[2] = rec(0x12, 200, 1, 1);
	r[3] = rec(0x13, 50, 2, 4);
	cart(&r[4], 0x14, 300, items, 2);
	r[6] = rec(0x15, 1, 3, 1);
	put_ok(st, r, 7, NULL);

	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &h), 0);
	ck_assert_uint_eq(h.n, 6);
	/* (item, user) order. */
	const struct {
		uint32_t item;
		uint64_t user, units;
		uint32_t orders;
		uint64_t last;
	} want[] = {{1, 100, 3, 2, 0x11}, {1, 200, 1, 1, 0x12}, {1, 300, 1, 1, 0x14},
		    {2, 50, 4, 1, 0x13},  {2, 300, 1, 1, 0x14}, {3, 1, 1, 1, 0x15}};
	for (unsigned i = 0; i < h.n; i++) {
		ck_assert_uint_eq(h.h[i].item, want[i].item);
		ck_assert_uint_eq(h.h[i].user, want[i].user);
		ck_assert_uint_eq(h.h[i].units, want[i].units);
		ck_assert_uint_eq(h.h[i].orders, want[i].orders);
		ck_assert_uint_eq(h.h[i].last_order, want[i].last);
	}

	/* One item only. */
	h.n = 0;
	ck_assert_int_eq(sk_store_holdings_foreach(st, 2, collect_holding, &h), 0);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(h.h[0].user, 50);
	h.n = 0;
	ck_assert_int_eq(sk_store_holdings_foreach(st, 4, collect_holding, &h), 0);
	ck_assert_uint_eq(h.n, 0);

	/* Cancelling drops the holding (the user may buy again); paying keeps it. */
	ck_assert_int_eq(
		sk_store_order_move(st, 0x14, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 5, NULL), 0);
	ck_assert_int_eq(sk_store_order_move(st, 0x10, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 5, NULL),
			 0);
	h.n = 0;
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &h), 0);
	ck_assert_uint_eq(h.n, 4);
	ck_assert_uint_eq(h.h[0].units, 3);
	ck_assert_uint_eq(h.h[1].user, 200);
	ck_assert_uint_eq(h.h[2].user, 50);

	struct sk_store_ledger led;
	sk_store_activity_get(st, 1, NULL, &led);
	ck_assert_uint_eq(led.sold, 5);
	ck_assert_uint_eq(led.returned, 1);
	ck_assert_uint_eq(led.paid, 2);
	ck_assert_uint_eq(sk_store_ledger_live(&led), 4);

	/* A callback's non-zero value stops the walk and comes back. */
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding_stop, NULL), 7);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(replay_after_reopen)
{
	const char *dir = store_dir("replay");
	struct sk_store *st = open_at(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r[6];
	struct sk_store_put_stats s;
	struct holdings before = {0}, after = {0};

	for (unsigned i = 0; i < 6; i++)
		r[i] = rec(0x50 + i, 1000 + i, 1 + i % 2, (uint16_t)(1 + i % 3));
	put_ok(st, r, 6, NULL);
	ck_assert_int_eq(sk_store_order_move(st, 0x50, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, NULL),
			 0);
	ck_assert_int_eq(
		sk_store_order_move(st, 0x51, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 1, NULL), 0);
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &before), 0);
	sk_store_close(st);

	/* What recovery reads after a restart is what was committed ... */
	st = open_at(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &after), 0);
	ck_assert_uint_eq(after.n, 5);
	ck_assert_mem_eq(before.h, after.h, sizeof(before.h[0]) * before.n);
	ck_assert_uint_eq(state_of(st, 0x50), SK_ORDER_PAID);
	ck_assert_uint_eq(state_of(st, 0x51), SK_ORDER_CANCELLED);

	/* ... and replaying the batch (a drain that restarts from a staged
	 * copy) neither duplicates nor resurrects the cancelled order. */
	put_ok(st, r, 6, &s);
	ck_assert_uint_eq(s.orders_dup, 6);
	ck_assert_uint_eq(s.orders_new, 0);
	ck_assert_uint_eq(state_of(st, 0x51), SK_ORDER_CANCELLED);
	after.n = 0;
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &after), 0);
	ck_assert_uint_eq(after.n, 5);

	/* Live units per item: the sum of the holdings equals the ledger. */
	for (uint32_t item = 1; item <= 2; item++) {
		struct sk_store_ledger led;
		uint64_t sum = 0;
		for (unsigned i = 0; i < after.n; i++)
			sum += after.h[i].item == item ? after.h[i].units : 0;
		sk_store_activity_get(st, item, NULL, &led);
		ck_assert_uint_eq(sk_store_ledger_live(&led), sum);
	}
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* ----------------------------------------------------------- state machine */

/* expected_move - what moving an order in state @cur from @from to @to gives. */
static int
expected_move(unsigned cur, unsigned from, unsigned to)
{
	if (!sk_order_transition_ok(from, to) || to == SK_ORDER_REFUNDED)
		return -EINVAL; /* refunds: sk_store_payment_apply() */
	return from == cur ? 0 : -EALREADY;
}

START_TEST(state_machine_table)
{
	struct sk_store *st = open_test("states");
	const unsigned start[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED};
	uint64_t id = 1, events = 0;

	for (unsigned b = 0; b < SK_ARRAY_SIZE(start); b++) {
		for (unsigned from = 0; from <= 6; from++) {
			for (unsigned to = 0; to <= 6; to++, id++) {
				struct sk_order_rec r = rec(id, id, 1, 1);
				put_ok(st, &r, 1, NULL);
				events++;
				if (start[b] != SK_ORDER_CONFIRMED) {
					ck_assert_int_eq(sk_store_order_move(st, id,
									     SK_ORDER_CONFIRMED,
									     start[b], 1, NULL),
							 0);
					events++;
				}
				unsigned cur = 99;
				int rc = sk_store_order_move(st, id, from, to, 2, &cur);
				int want = expected_move(start[b], from, to);
				ck_assert_msg(rc == want, "%s: %u -> %u gave %d, want %d",
					      sk_order_status_name(start[b]), from, to, rc, want);
				ck_assert_uint_eq(state_of(st, id), want == 0 ? to : start[b]);
				if (want != -EINVAL)
					ck_assert_uint_eq(cur, start[b]);
				events += want == 0;
			}
		}
	}
	/* Valid transition, unknown order. */
	ck_assert_int_eq(
		sk_store_order_move(st, 1u << 30, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 3, NULL),
		-ENOENT);

	struct sk_store_info info;
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.events, events);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

struct racer {
	struct sk_store *st;
	unsigned to;
	uint64_t first, n;
	unsigned wins, lost, errors;
};

static void *
race(void *arg)
{
	struct racer *r = arg;

	for (uint64_t i = 0; i < r->n; i++) {
		unsigned cur;
		int rc = sk_store_order_move(r->st, r->first + i, SK_ORDER_CONFIRMED, r->to, 5,
					     &cur);
		if (rc == 0)
			r->wins++;
		else if (rc == -EALREADY && cur != SK_ORDER_CONFIRMED && cur != r->to)
			r->lost++;
		else
			r->errors++;
	}
	return NULL;
}

START_TEST(pay_cancel_race_one_winner)
{
	struct sk_store *st = open_test("race");
	struct sk_order_rec r[2] = {rec(1, 1, 1, 1), rec(2, 2, 1, 1)};
	unsigned cur;

	put_ok(st, r, 2, NULL);
	/* Pay first, then the timeout: the cancel loses and learns why. */
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, &cur), 0);
	ck_assert_int_eq(
		sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 2, &cur),
		-EALREADY);
	ck_assert_uint_eq(cur, SK_ORDER_PAID);
	/* A retried pay finds its own result: current == to. */
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 3, &cur),
			 -EALREADY);
	ck_assert_uint_eq(cur, SK_ORDER_PAID);
	/* Timeout first, then a late payment: the 409 case. */
	ck_assert_int_eq(
		sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 1, &cur), 0);
	ck_assert_int_eq(sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 2, &cur),
			 -EALREADY);
	ck_assert_uint_eq(cur, SK_ORDER_CANCELLED);

	/* Two threads on one handle race on every one of 300 orders. */
	enum { N = 300 };
	struct sk_order_rec *many = calloc(N, sizeof(*many));
	ck_assert_ptr_nonnull(many);
	for (unsigned i = 0; i < N; i++)
		many[i] = rec(100 + i, 100 + i, 2, 1);
	put_ok(st, many, N, NULL);
	struct racer pay = {.st = st, .to = SK_ORDER_PAID, .first = 100, .n = N};
	struct racer cancel = {.st = st, .to = SK_ORDER_CANCELLED, .first = 100, .n = N};
	pthread_t t1, t2;
	ck_assert_int_eq(pthread_create(&t1, NULL, race, &pay), 0);
	ck_assert_int_eq(pthread_create(&t2, NULL, race, &cancel), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	ck_assert_uint_eq(pay.errors + cancel.errors, 0);
	ck_assert_uint_eq(pay.wins + cancel.wins, N);
	ck_assert_uint_eq(pay.wins, cancel.lost);
	ck_assert_uint_eq(cancel.wins, pay.lost);
	unsigned paid = 0;
	for (unsigned i = 0; i < N; i++)
		paid += state_of(st, 100 + i) == SK_ORDER_PAID;
	ck_assert_uint_eq(paid, pay.wins);
	struct sk_store_ledger led;
	sk_store_activity_get(st, 2, NULL, &led);
	ck_assert_uint_eq(led.lines_paid, pay.wins);
	ck_assert_uint_eq(led.lines_cancelled, cancel.wins);
	ck_assert_uint_eq(led.returned, cancel.wins);
	assert_consistent(st);
	free(many);
	sk_store_close(st);
}
END_TEST

/* --------------------------------------------------------------- deadlines */

static int
cancel_each(int64_t when, uint64_t order, void *arg)
{
	struct sk_store *st = arg;

	(void)when;
	/* A write inside a read walk: allowed by MDB_NOTLS. */
	return sk_store_order_move(st, order, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 9, NULL);
}

START_TEST(deadlines_order_and_removal)
{
	struct sk_store *st = open_test("deadlines");
	struct sk_store_activity a = activity(2, 100, 5);
	struct sk_order_rec r[6];
	const uint32_t items[2] = {1, 2};
	struct deadlines d = {0};
	const int64_t S = 1000 * MS;

	a.pay_timeout_ns = 5 * MIN;
	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	r[0] = rec(1, 1, 1, 1), r[0].time_ns = 100 * S; /* default 15 min */
	r[1] = rec(2, 2, 2, 1), r[1].time_ns = 200 * S; /* item 2: 5 min */
	r[2] = rec(3, 3, 2, 1), r[2].time_ns = 50 * S;
	cart(&r[3], 4, 4, items, 2); /* the earlier of 15 and 5 min */
	r[3].time_ns = r[4].time_ns = 300 * S;
	r[5] = rec(5, 5, 1, 1), r[5].time_ns = 100 * S; /* same deadline as order 1 */
	put_ok(st, r, 6, NULL);

	const uint64_t order_all[] = {3, 2, 4, 1, 5};
	const int64_t when_all[] = {350 * S, 500 * S, 600 * S, 1000 * S, 1000 * S};
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 5);
	for (unsigned i = 0; i < d.n; i++) {
		ck_assert_uint_eq(d.order[i], order_all[i]);
		ck_assert_int_eq(d.when[i], when_all[i]);
	}
	d.n = 0;
	ck_assert_int_eq(sk_store_deadlines_foreach(st, 600 * S, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 3);
	d.n = 0;
	ck_assert_int_eq(sk_store_deadlines_foreach(st, 349 * S, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 0);

	/* Paid and cancelled orders leave the wheel. */
	ck_assert_int_eq(sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, NULL), 0);
	ck_assert_int_eq(
		sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 1, NULL), 0);
	d.n = 0;
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_uint_eq(d.order[0], 3);
	ck_assert_uint_eq(d.order[1], 4);
	ck_assert_uint_eq(d.order[2], 5);

	/* The timeout wheel after a restart: cancel everything that is due. */
	sk_store_close(st);
	st = open_test("deadlines");
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, cancel_each, st), 0);
	d.n = 0;
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(state_of(st, 4), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(state_of(st, 2), SK_ORDER_PAID);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* ------------------------------------------------------------------ events */

START_TEST(event_log_sequence)
{
	const char *dir = store_dir("events");
	struct sk_store *st = open_at(dir, SK_STORE_NOSYNC, 0);
	struct sk_store_activity a = activity(1, 10, 2);
	struct sk_order_rec r[3] = {rec(1, 1, 1, 1), rec(2, 2, 1, 2), rec(3, 3, 1, 1)};
	struct events c = {0};

	ck_assert_int_eq(sk_store_activity_put(st, &a, 10), 0);
	put_ok(st, r, 3, NULL);
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 20, NULL),
			 0);
	ck_assert_int_eq(
		sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 30, NULL), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 77, 5, 40), 0);
	ck_assert_int_eq(sk_store_activity_close(st, 1, 50), 0);
	struct sk_store_event failed = {
		.type = SK_STORE_EV_FAILED, .item = 1, .order = 9, .user = 9, .units = 1};
	ck_assert_int_eq(sk_store_event_append(st, &failed), 0);
	ck_assert_uint_eq(failed.seq, 9);
	struct sk_store_event bad = {.type = 0};
	ck_assert_int_eq(sk_store_event_append(st, &bad), -EINVAL);
	bad.type = SK_STORE_EV_PAY_REJECTED + 1;
	ck_assert_int_eq(sk_store_event_append(st, &bad), -EINVAL);

	const uint8_t types[] = {
		SK_STORE_EV_ACTIVITY,  SK_STORE_EV_CONFIRMED, SK_STORE_EV_CONFIRMED,
		SK_STORE_EV_CONFIRMED, SK_STORE_EV_PAID,      SK_STORE_EV_CANCELLED,
		SK_STORE_EV_RESTOCKED, SK_STORE_EV_CLOSED,    SK_STORE_EV_FAILED};
	ck_assert_int_eq(sk_store_events_foreach(st, 0, collect_event, &c), 0);
	ck_assert_uint_eq(c.n, SK_ARRAY_SIZE(types));
	for (unsigned i = 0; i < c.n; i++) {
		ck_assert_uint_eq(c.ev[i].seq, i + 1);
		ck_assert_msg(c.ev[i].type == types[i], "event %u: %s", i + 1,
			      sk_store_event_name(c.ev[i].type));
	}
	/* The activity event carries the definition it stored; others none. */
	ck_assert(c.ev[0].def.has_def);
	ck_assert_uint_eq(c.ev[0].def.per_user_limit, 2);
	ck_assert_uint_eq(c.ev[0].def.price, 999);
	ck_assert_int_eq(c.ev[0].def.end_ns, INT64_MAX);
	ck_assert_str_eq(c.ev[0].def.name, "item-1");
	ck_assert(!c.ev[1].def.has_def && !c.ev[6].def.has_def && !c.ev[7].def.has_def);
	ck_assert_uint_eq(c.ev[2].order, 2);
	ck_assert_uint_eq(c.ev[2].units, 2);
	ck_assert_uint_eq(c.ev[2].user, 2);
	ck_assert_uint_eq(c.ev[2].nlines, 1);
	ck_assert_int_eq(c.ev[5].time_ns, 30);
	ck_assert_uint_eq(c.ev[6].units, 5);
	ck_assert_str_eq(sk_store_event_name(SK_STORE_EV_RESTOCKED), "restocked");
	ck_assert_str_eq(sk_store_event_name(0), "?");

	/* From the middle, and stopped by the callback. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	ck_assert_int_eq(sk_store_events_foreach(st, 5, collect_event, &c), 42);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_uint_eq(c.ev[0].seq, 5);

	/* Trim what was exported; sequences are never reused, even across a
	 * reopen with the log emptied. */
	uint64_t removed;
	ck_assert_int_eq(sk_store_events_trim(st, 4, &removed), 0);
	ck_assert_uint_eq(removed, 3);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(sk_store_events_foreach(st, 0, collect_event, &c), 0);
	ck_assert_uint_eq(c.ev[0].seq, 4);
	ck_assert_int_eq(sk_store_events_trim(st, 100, &removed), 0);
	ck_assert_uint_eq(removed, 6);
	sk_store_close(st);
	st = open_at(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec more = rec(10, 10, 2, 1);
	struct sk_store_put_stats s;
	put_ok(st, &more, 1, &s);
	ck_assert_uint_eq(s.event_first, 10);
	ck_assert_uint_eq(s.event_last, 10);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(cursor_persistence)
{
	const char *dir = store_dir("cursors");
	struct sk_store *st = open_at(dir, 0, 0);
	char longname[SK_STORE_CURSOR_NAME_MAX + 2];
	uint64_t v = 1;

	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), -ENOENT);
	ck_assert_int_eq(sk_store_cursor_set(st, "kafka.orders", 42), 0);
	ck_assert_int_eq(sk_store_cursor_set(st, "kafka.events", UINT64_MAX), 0);
	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), 0);
	ck_assert_uint_eq(v, 42);
	sk_store_close(st);

	st = open_at(dir, 0, 0);
	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.events", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(sk_store_cursor_set(st, "kafka.orders", 43), 0);
	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), 0);
	ck_assert_uint_eq(v, 43);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(sk_store_cursor_set(st, longname, 1), -EINVAL);
	ck_assert_int_eq(sk_store_cursor_get(st, longname, &v), -EINVAL);
	longname[SK_STORE_CURSOR_NAME_MAX] = '\0';
	ck_assert_int_eq(sk_store_cursor_set(st, longname, 1), 0);
	ck_assert_int_eq(sk_store_cursor_set(st, "", 1), -EINVAL);
	ck_assert_int_eq(sk_store_cursor_get(st, NULL, &v), -EINVAL);
	sk_store_close(st);
}
END_TEST

/* -------------------------------------------------------------- activities */

struct act_list {
	uint32_t item[8];
	uint64_t live[8];
	unsigned n;
};

static int
collect_activity(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct act_list *c = arg;

	ck_assert_uint_lt(c->n, 8);
	c->item[c->n] = a->item;
	c->live[c->n++] = sk_store_ledger_live(l);
	return 0;
}

START_TEST(activities_idempotent)
{
	struct sk_store *st = open_test("activities");
	struct sk_store_activity a = activity(5, 100, 1), got, b;
	struct sk_store_ledger led;

	ck_assert_int_eq(sk_store_activity_get(st, 5, &got, &led), -ENOENT);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 10), 0);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 11), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_get(st, 5, &got, &led), 0);
	ck_assert_str_eq(got.name, "item-5");
	ck_assert_uint_eq(got.total, 100);
	ck_assert_uint_eq(got.per_user_limit, 1);
	ck_assert_int_eq(got.end_ns, INT64_MAX);
	ck_assert_int_eq(got.created_ns, 10);
	ck_assert_int_eq(got.updated_ns, 10);
	ck_assert_int_eq(got.closed_ns, 0);
	ck_assert_uint_eq(led.sold, 0);

	b = a;
	b.price = 1234;
	b.added = 999; /* ignored */
	ck_assert_int_eq(sk_store_activity_put(st, &b, 20), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 5, &got, NULL), 0);
	ck_assert_uint_eq(got.price, 1234);
	ck_assert_uint_eq(got.added, 0);
	ck_assert_int_eq(got.created_ns, 10);
	ck_assert_int_eq(got.updated_ns, 20);

	/* Bad definitions. */
	b = a, b.item = 0;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), -EINVAL);
	b = a, b.per_user_limit = 0;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), -EINVAL);
	b = a, b.end_ns = b.start_ns;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), -EINVAL);
	b = a, b.pay_timeout_ns = -1;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), -EINVAL);
	b = a, memset(b.name, 'n', sizeof(b.name));
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), -EINVAL);
	b.name[SK_STORE_NAME_MAX] = '\0';
	b.item = 6;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 1), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 6, &got, NULL), 0);
	ck_assert_uint_eq(strlen(got.name), SK_STORE_NAME_MAX);

	/* Restocks, once per id. */
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 1, 10, 30), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 1, 10, 31), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 1, 11, 31), -EEXIST);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 2, 5, 32), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 3, 0, 32), -EINVAL);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 0, 1, 32), -EINVAL);
	ck_assert_int_eq(sk_store_activity_restock(st, 8, 3, 1, 32), -ENOENT);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 4, UINT64_MAX, 32), -EOVERFLOW);
	ck_assert_int_eq(sk_store_activity_get(st, 5, &got, NULL), 0);
	ck_assert_uint_eq(got.added, 15);
	ck_assert_uint_eq(got.total, 100);

	/* Lowering the total below what live orders hold is refused. */
	struct sk_order_rec r[30];
	for (unsigned i = 0; i < 30; i++)
		r[i] = rec(100 + i, 100 + i, 5, 1);
	put_ok(st, r, 30, NULL);
	b = a, b.price = 1234, b.total = 14; /* 14 + 15 < 30 */
	ck_assert_int_eq(sk_store_activity_put(st, &b, 40), -ERANGE);
	b.total = 15;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 40), 0);

	/* Listing, in item order, with the ledgers preheat needs. */
	struct sk_store_activity c3 = activity(3, 1, 1);
	ck_assert_int_eq(sk_store_activity_put(st, &c3, 50), 0);
	struct act_list l = {0};
	ck_assert_int_eq(sk_store_activity_foreach(st, collect_activity, &l), 0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.item[0], 3);
	ck_assert_uint_eq(l.item[1], 5);
	ck_assert_uint_eq(l.item[2], 6);
	ck_assert_uint_eq(l.live[1], 30);

	/* Closing is final and idempotent. */
	ck_assert_int_eq(sk_store_activity_close(st, 5, 60), 0);
	ck_assert_int_eq(sk_store_activity_close(st, 5, 61), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_close(st, 99, 61), -ENOENT);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 62), -EPERM);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 9, 1, 62), -EPERM);
	ck_assert_int_eq(sk_store_activity_restock(st, 5, 1, 10, 62), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_get(st, 5, &got, NULL), 0);
	ck_assert_int_eq(got.closed_ns, 60);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(guards_refuse_oversell_and_overlimit)
{
	struct sk_store *st = open_test("guards");
	struct sk_store_activity a = activity(1, 5, 2);
	struct sk_order_rec r[4];
	const uint32_t items[2] = {1, 9};
	uint8_t oc[4];
	struct holdings h = {0};

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	r[0] = rec(1, 1, 1, 2);
	r[1] = rec(2, 1, 1, 1); /* user 1 would hold 3 > 2 */
	r[2] = rec(3, 2, 1, 2);
	r[3] = rec(4, 3, 1, 1); /* live 5 = total */
	ck_assert_int_eq(sk_store_put_orders(st, r, 4, 0, 1, oc, NULL), 0);
	ck_assert_uint_eq(oc[0], SK_STORE_NEW);
	ck_assert_uint_eq(oc[1], SK_STORE_OVERLIMIT);
	ck_assert_uint_eq(oc[2], SK_STORE_NEW);
	ck_assert_uint_eq(oc[3], SK_STORE_NEW);

	/* Sold out: a single order, and a cart whose other item is unguarded. */
	r[0] = rec(5, 4, 1, 1);
	cart(&r[1], 6, 5, items, 2);
	ck_assert_int_eq(sk_store_put_orders(st, r, 3, 0, 1, oc, NULL), 0);
	ck_assert_uint_eq(oc[0], SK_STORE_OVERSELL);
	ck_assert_uint_eq(oc[1], SK_STORE_OVERSELL);
	ck_assert_uint_eq(oc[2], SK_STORE_OVERSELL);
	ck_assert_int_eq(sk_store_holdings_foreach(st, 9, collect_holding, &h), 0);
	ck_assert_uint_eq(h.n, 0);

	/* A cancel frees units and the user's share; a restock adds units;
	 * earlier orders of the same batch count. */
	ck_assert_int_eq(
		sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 2, NULL), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 1, 1, 3), 0);
	r[0] = rec(7, 1, 1, 2);
	r[1] = rec(8, 6, 1, 1);
	r[2] = rec(9, 7, 1, 1);
	ck_assert_int_eq(sk_store_put_orders(st, r, 3, 0, 1, oc, NULL), 0);
	ck_assert_uint_eq(oc[0], SK_STORE_NEW);
	ck_assert_uint_eq(oc[1], SK_STORE_NEW);
	ck_assert_uint_eq(oc[2], SK_STORE_OVERSELL);

	struct sk_store_activity got;
	struct sk_store_ledger led;
	ck_assert_int_eq(sk_store_activity_get(st, 1, &got, &led), 0);
	ck_assert_uint_eq(sk_store_ledger_live(&led), got.total + got.added);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* -------------------------------------------------------------- big and bad */

START_TEST(batch_of_10000_in_one_txn)
{
	enum { N = 10000 };
	struct sk_store *st = open_at(store_dir("big"), 0, 0); /* durable */
	struct sk_order_rec *r = calloc(N, sizeof(*r));
	struct sk_store_info before, after;
	struct sk_store_put_stats s;

	ck_assert_ptr_nonnull(r);
	for (unsigned i = 0; i < N; i++)
		r[i] = rec(((uint64_t)0x5eed << 32) | (i * 7919u % N + 1), 1 + i, 1 + i % 8,
			   (uint16_t)(1 + i % 3));
	ck_assert_int_eq(sk_store_info(st, &before), 0);
	put_ok(st, r, N, &s);
	ck_assert_int_eq(sk_store_info(st, &after), 0);
	ck_assert_uint_eq(after.last_txn, before.last_txn + 1);
	ck_assert_uint_eq(s.orders_new, N);
	ck_assert_uint_eq(s.event_last - s.event_first + 1, N);
	ck_assert_uint_eq(after.order_lines, N);
	ck_assert_uint_eq(after.holdings_entries, N);
	ck_assert_uint_eq(after.deadlines, N);
	assert_consistent(st);

	put_ok(st, r, N, &s);
	ck_assert_uint_eq(s.orders_dup, N);
	ck_assert_uint_eq(s.orders_new, 0);
	free(r);
	sk_store_close(st);
}
END_TEST

enum { CRASH_BATCH = 2000 };

static uint64_t
crash_id(uint32_t batch, uint32_t i)
{
	return (uint64_t)(batch + 1) << 32 | (i + 1);
}

/* crash_child - write batches for ever, reporting each commit on @fd. */
static void
crash_child(const char *dir, int fd)
{
	struct sk_store *st;
	struct sk_order_rec *r = calloc(CRASH_BATCH, sizeof(*r));

	if (r == NULL || sk_store_open(&st, dir, NULL, NULL, 0) != 0)
		_exit(2);
	for (uint32_t b = 0; b < 10000; b++) {
		for (uint32_t i = 0; i < CRASH_BATCH; i++)
			r[i] = rec(crash_id(b, i), (uint64_t)b * CRASH_BATCH + i + 1, 1 + i % 4, 1);
		if (sk_store_put_orders(st, r, CRASH_BATCH, 15 * MIN, b, NULL, NULL) != 0)
			_exit(3);
		if (write(fd, &b, sizeof(b)) != sizeof(b))
			_exit(4);
	}
	_exit(0);
}

static unsigned
batch_present(struct sk_store *st, uint32_t b)
{
	struct sk_store_line l;
	unsigned n, present = 0;

	for (uint32_t i = 0; i < CRASH_BATCH; i++)
		present += sk_store_order_get(st, crash_id(b, i), &l, 1, &n) == 0;
	return present;
}

START_TEST(kill9_keeps_whole_batches)
{
	unsigned seed = 20240601;

	for (int round = 0; round < 8; round++) {
		char dir[PATH_MAX + 64];
		int p[2];

		snprintf(dir, sizeof(dir), "%s/crash-%d", base_dir, round);
		ck_assert_int_eq(pipe(p), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(p[0]);
			crash_child(dir, p[1]);
		}
		close(p[1]);
		/* Let 1..3 batches commit, then kill at a random instant, most
		 * likely while the next transaction is being built or synced. */
		uint32_t b, reported = 0;
		while (reported < 1u + (unsigned)round % 3) {
			ck_assert_int_eq(read(p[0], &b, sizeof(b)), sizeof(b));
			reported = b + 1;
		}
		usleep((useconds_t)(rand_r(&seed) % 20000));
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(p[0], &b, sizeof(b)) == sizeof(b))
			reported = b + 1;
		close(p[0]);

		struct sk_store *st = open_at(dir, 0, 0);
		unsigned full = 0;
		for (uint32_t k = 0; k <= reported + 1; k++) {
			unsigned n = batch_present(st, k);
			ck_assert_msg(n == 0 || n == CRASH_BATCH, "round %d batch %u: %u orders",
				      round, k, n);
			if (k < reported)
				ck_assert_uint_eq(n, CRASH_BATCH);
			if (k > reported)
				ck_assert_uint_eq(n, 0);
			full += n == CRASH_BATCH;
		}
		struct sk_store_info info;
		ck_assert_int_eq(sk_store_info(st, &info), 0);
		ck_assert_uint_eq(info.order_lines, (uint64_t)full * CRASH_BATCH);
		ck_assert_uint_eq(info.event_next, (uint64_t)full * CRASH_BATCH + 1);
		assert_consistent(st);
		/* The writer lock of the killed process is usable again. */
		struct sk_order_rec one = rec(1, 1, 1, 1);
		put_ok(st, &one, 1, NULL);
		sk_store_close(st);
	}
}
END_TEST

START_TEST(map_full_reported_cleanly)
{
	enum { B = 50 };
	const char *dir = store_dir("full");
	struct sk_store *st = open_at(dir, SK_STORE_NOSYNC, 256 * 1024);
	struct sk_order_rec r[B];
	unsigned ok = 0;
	int rc = 0;

	for (uint32_t b = 0; b < 10000; b++) {
		for (uint32_t i = 0; i < B; i++)
			r[i] = rec((uint64_t)b * B + i + 1, (uint64_t)b * B + i + 1, 1, 1);
		rc = sk_store_put_orders(st, r, B, 15 * MIN, 1, NULL, NULL);
		if (rc != 0)
			break;
		ok++;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_gt(ok, 0);
	struct sk_store_info info;
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.order_lines, (uint64_t)ok * B); /* no part of the failed batch */
	assert_consistent(st);
	struct sk_store_line l;
	unsigned n;
	ck_assert_int_eq(sk_store_order_get(st, r[0].id, &l, 1, &n), -ENOENT);
	sk_store_close(st);

	/* Reopened with a larger map, the same batch goes in. */
	st = open_at(dir, SK_STORE_NOSYNC, 16 << 20);
	struct sk_store_put_stats s;
	put_ok(st, r, B, &s);
	ck_assert_uint_eq(s.orders_new, B);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(read_only_handle)
{
	const char *dir = store_dir("ro");
	struct sk_store *st = open_at(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r = rec(1, 1, 1, 1);

	put_ok(st, &r, 1, NULL);
	ck_assert_int_eq(sk_store_cursor_set(st, "c", 5), 0);
	sk_store_close(st);

	st = open_at(dir, SK_STORE_RDONLY, 0);
	uint64_t v;
	ck_assert_uint_eq(state_of(st, 1), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_cursor_get(st, "c", &v), 0);
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, 0, NULL, NULL), -EACCES);
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, NULL),
			 -EACCES);
	ck_assert_int_eq(sk_store_cursor_set(st, "c", 6), -EACCES);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* Delete the by_user entries of (item, user) behind the store's back. */
static void
drop_holding(const char *dir, uint32_t item, uint64_t user)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t k[12];

	for (int i = 0; i < 4; i++)
		k[i] = (uint8_t)(item >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		k[4 + i] = (uint8_t)(user >> (56 - 8 * i));
	MDB_val key = {.mv_size = sizeof(k), .mv_data = k};
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 16), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "by_user", MDB_DUPSORT | MDB_DUPFIXED, &dbi), 0);
	ck_assert_int_eq(mdb_del(txn, dbi, &key, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

START_TEST(verify_detects_damage)
{
	const char *dir = store_dir("damage");
	struct sk_store *st = open_at(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r[2] = {rec(1, 10, 3, 1), rec(2, 20, 3, 1)};
	char err[SK_STORE_ERR_MAX];

	put_ok(st, r, 2, NULL);
	assert_consistent(st);
	sk_store_close(st);
	drop_holding(dir, 3, 20);
	st = open_at(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_verify(st, err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "by_user") != NULL, "%s", err);
	sk_store_close(st);
}
END_TEST

/* --------------------------------------------------------------- payments */

/* open_conf - the store of test @name (no sync) with @c's other settings. */
static struct sk_store *
open_conf(const char *name, const struct sk_store_conf *c)
{
	struct sk_store_conf conf = *c;
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = NULL;

	conf.flags |= SK_STORE_NOSYNC;
	int rc = sk_store_open(&st, store_dir(name), &conf, err, sizeof(err));
	ck_assert_msg(rc == 0, "open %s: %d %s", name, rc, err);
	return st;
}

/* put_cart - order @id of @user: one line per item of @items, @qty units each. */
static void
put_cart(struct sk_store *st, uint64_t id, uint64_t user, const uint32_t *items, unsigned n,
	 uint16_t qty)
{
	struct sk_order_rec r[8];

	cart(r, id, user, items, n);
	for (unsigned j = 0; j < n; j++)
		r[j].qty = qty;
	put_ok(st, r, n, NULL);
}

static struct sk_store_pay_result
apply(struct sk_store *st, const char *req, uint64_t order, uint8_t kind, uint32_t item,
      uint32_t units, int want_rc)
{
	struct sk_store_payment p = {
		.request = req, .order = order, .kind = kind, .item = item, .units = units};
	struct sk_store_pay_result res;
	int rc = sk_store_payment_apply(st, &p, 5000 * MS, &res);

	ck_assert_msg(rc == want_rc, "%s: rc %d, want %d", req, rc, want_rc);
	return res;
}

static struct sk_store_line
line_of(struct sk_store *st, uint64_t id, unsigned j)
{
	struct sk_store_line l[8];
	unsigned n;

	ck_assert_int_eq(sk_store_order_get(st, id, l, 8, &n), 0);
	ck_assert_uint_lt(j, n);
	return l[j];
}

/* held - the live units of @user in @item (by_user). */
static uint64_t
held(struct sk_store *st, uint32_t item, uint64_t user)
{
	struct holdings c = {.n = 0};

	ck_assert_int_eq(sk_store_holdings_foreach(st, item, collect_holding, &c), 0);
	for (unsigned i = 0; i < c.n; i++)
		if (c.h[i].user == user)
			return c.h[i].units;
	return 0;
}

static struct sk_store_ledger
ledger_of(struct sk_store *st, uint32_t item)
{
	struct sk_store_ledger l;

	(void)sk_store_activity_get(st, item, NULL, &l);
	return l;
}

/* last_event - the last event of the log (of at most 64). */
static struct sk_store_event
last_event(struct sk_store *st)
{
	static struct events c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(sk_store_events_foreach(st, 1, collect_event, &c), 0);
	ck_assert_uint_gt(c.n, 0);
	return c.ev[c.n - 1];
}

START_TEST(paid_once_by_request)
{
	struct sk_store *st = open_test("paid");
	const uint32_t items[] = {7};
	struct sk_store_pay_result r;
	struct sk_store_info info;

	put_cart(st, 1, 10, items, 1, 2);
	r = apply(st, "pay-1", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert(!r.duplicate);
	ck_assert_uint_eq(r.state, SK_ORDER_PAID);
	ck_assert_uint_eq(r.units, 2);
	struct sk_store_event ev = last_event(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_PAID);
	ck_assert_str_eq(ev.request, "pay-1");
	ck_assert_uint_eq(ev.seq, r.event_seq);
	ck_assert_uint_eq(ledger_of(st, 7).paid, 2);

	/* Redelivery: the first outcome, nothing new. */
	sk_store_info(st, &info);
	uint64_t events = info.event_next;
	r = apply(st, "pay-1", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(r.time_ns, 5000 * MS);
	sk_store_info(st, &info);
	ck_assert_uint_eq(info.event_next, events);
	ck_assert_uint_eq(ledger_of(st, 7).paid, 2);

	/* Another request for the same order: already paid, recorded. */
	r = apply(st, "pay-2", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_ALREADY);
	ck_assert(!r.duplicate);
	ck_assert_int_eq(sk_store_payment_get(st, "pay-2", &r), 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_ALREADY);

	/* The same id for another order or kind: refused, nothing changes. */
	put_cart(st, 2, 11, items, 1, 1);
	r = apply(st, "pay-1", 2, SK_STORE_PAY_PAID, 0, 0, -EEXIST);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	apply(st, "pay-1", 1, SK_STORE_PAY_REFUND, 0, 0, -EEXIST);
	ck_assert_uint_eq(line_of(st, 2, 0).state, SK_ORDER_CONFIRMED);

	/* Unknown order: nothing recorded; bad ids and kinds refused. */
	apply(st, "pay-3", 99, SK_STORE_PAY_PAID, 0, 0, -ENOENT);
	ck_assert_int_eq(sk_store_payment_get(st, "pay-3", &r), -ENOENT);
	apply(st, "", 2, SK_STORE_PAY_PAID, 0, 0, -EINVAL);
	apply(st, "has blank", 2, SK_STORE_PAY_PAID, 0, 0, -EINVAL);
	apply(st, "quote\"", 2, SK_STORE_PAY_PAID, 0, 0, -EINVAL);
	apply(st, "x", 2, 3, 0, 0, -EINVAL);
	char big[SK_STORE_REQUEST_MAX + 2];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	apply(st, big, 2, SK_STORE_PAY_PAID, 0, 0, -EINVAL);
	big[SK_STORE_REQUEST_MAX] = '\0';
	r = apply(st, big, 2, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(paid_after_cancel_is_a_conflict)
{
	struct sk_store *st = open_test("conflict");
	const uint32_t items[] = {7, 8};

	put_cart(st, 1, 10, items, 2, 1);
	ck_assert_int_eq(
		sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 3, NULL), 0);
	struct sk_store_pay_result r = apply(st, "late", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_CONFLICT);
	ck_assert_uint_eq(r.state, SK_ORDER_CANCELLED);
	struct sk_store_event ev = last_event(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_PAY_CONFLICT);
	ck_assert_uint_eq(ev.order, 1);
	ck_assert_uint_eq(ev.user, 10);
	ck_assert_uint_eq(ev.item, 7);
	ck_assert_uint_eq(ev.units, 2);
	ck_assert_str_eq(ev.request, "late");
	ck_assert_str_eq(sk_store_event_name(ev.type), "pay_conflict");
	/* No unit taken back from the pool's new buyers. */
	ck_assert_uint_eq(ledger_of(st, 7).returned, 1);
	ck_assert_uint_eq(ledger_of(st, 7).paid, 0);
	ck_assert_uint_eq(line_of(st, 1, 0).state, SK_ORDER_CANCELLED);
	/* Redelivered: the conflict once. */
	uint64_t seq = ev.seq;
	r = apply(st, "late", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_CONFLICT);
	ck_assert_uint_eq(last_event(st).seq, seq);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* ----------------------------------------------------------------- refund */

START_TEST(refund_partial_then_rest)
{
	struct sk_store *st = open_test("refund");
	const uint32_t items[] = {7};
	struct sk_store_pay_result r;

	put_cart(st, 1, 10, items, 1, 3);
	/* Not paid yet: refused, recorded. */
	r = apply(st, "r0", 1, SK_STORE_PAY_REFUND, 0, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_STATE);
	ck_assert_uint_eq(r.nlines, 0);
	ck_assert_uint_eq(line_of(st, 1, 0).rec.returned, 0);
	apply(st, "p", 1, SK_STORE_PAY_PAID, 0, 0, 0);

	r = apply(st, "r1", 1, SK_STORE_PAY_REFUND, 0, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(r.state, SK_ORDER_PAID);
	ck_assert_uint_eq(r.units, 1);
	ck_assert_uint_eq(r.nlines, 1);
	ck_assert_uint_eq(r.lines[0].units, 1);
	ck_assert_uint_eq(r.lines[0].rec.returned, 0); /* as before the refund */
	struct sk_store_line l = line_of(st, 1, 0);
	ck_assert_uint_eq(l.state, SK_ORDER_PAID);
	ck_assert_uint_eq(l.refunded, 1);
	ck_assert_uint_eq(l.rec.returned, 1);
	ck_assert_uint_eq(held(st, 7, 10), 2);
	ck_assert_uint_eq(ledger_of(st, 7).returned, 1);
	ck_assert_uint_eq(sk_store_ledger_live(&(struct sk_store_ledger){.sold = 3, .returned = 1}),
			  2);
	struct sk_store_event ev = last_event(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_REFUNDED);
	ck_assert_uint_eq(ev.units, 1);
	ck_assert_uint_eq(ev.item, 7);
	ck_assert_str_eq(ev.request, "r1");
	assert_consistent(st);

	/* Redelivered: once. */
	r = apply(st, "r1", 1, SK_STORE_PAY_REFUND, 0, 1, 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(r.nlines, 0);
	ck_assert_uint_eq(line_of(st, 1, 0).refunded, 1);

	/* More than remain: refused, nothing changes. */
	r = apply(st, "r2", 1, SK_STORE_PAY_REFUND, 0, 3, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_TOO_MANY);
	ck_assert_uint_eq(line_of(st, 1, 0).refunded, 1);
	ck_assert_uint_eq(held(st, 7, 10), 2);
	r = apply(st, "r2", 1, SK_STORE_PAY_REFUND, 0, 3, 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_TOO_MANY);

	/* The rest (no units): refunded. */
	r = apply(st, "r3", 1, SK_STORE_PAY_REFUND, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(r.units, 2);
	ck_assert_uint_eq(r.state, SK_ORDER_REFUNDED);
	l = line_of(st, 1, 0);
	ck_assert_uint_eq(l.state, SK_ORDER_REFUNDED);
	ck_assert_uint_eq(l.refunded, 3);
	ck_assert_uint_eq(l.rec.returned, 3);
	ck_assert_uint_eq(held(st, 7, 10), 0);
	struct sk_store_ledger led = ledger_of(st, 7);
	ck_assert_uint_eq(led.returned, 3);
	ck_assert_uint_eq(sk_store_ledger_live(&led), 0);
	ck_assert_uint_eq(led.paid, 3);
	assert_consistent(st);

	/* Nothing left: a refund is refused, a paid is "already". */
	r = apply(st, "r4", 1, SK_STORE_PAY_REFUND, 0, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_STATE);
	r = apply(st, "p2", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_ALREADY);
	/* refunded is final: no move out of it. */
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_REFUNDED, SK_ORDER_CANCELLED, 9, NULL),
			 -EINVAL);
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_PAID, SK_ORDER_REFUNDED, 9, NULL),
			 -EINVAL);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

START_TEST(refund_lines_of_a_cart)
{
	struct sk_store *st = open_test("cart");
	const uint32_t items[] = {7, 8, 9};
	struct sk_store_pay_result r;

	put_cart(st, 1, 10, items, 3, 2);
	apply(st, "p", 1, SK_STORE_PAY_PAID, 0, 0, 0);
	/* Units of a cart without its item, or an item it lacks. */
	r = apply(st, "a", 1, SK_STORE_PAY_REFUND, 0, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_NO_ITEM);
	r = apply(st, "b", 1, SK_STORE_PAY_REFUND, 5, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_NO_ITEM);

	r = apply(st, "c", 1, SK_STORE_PAY_REFUND, 8, 0, 0); /* all of line 1 */
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(r.units, 2);
	ck_assert_uint_eq(r.nlines, 1);
	ck_assert_uint_eq(r.lines[0].rec.item, 8);
	ck_assert_uint_eq(line_of(st, 1, 1).refunded, 2);
	ck_assert_uint_eq(line_of(st, 1, 0).refunded, 0);
	ck_assert_uint_eq(held(st, 8, 10), 0);
	ck_assert_uint_eq(held(st, 7, 10), 2);
	r = apply(st, "d", 1, SK_STORE_PAY_REFUND, 8, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_TOO_MANY);
	r = apply(st, "e", 1, SK_STORE_PAY_REFUND, 9, 1, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	assert_consistent(st);

	/* Everything left of every line: one event per line. */
	struct sk_store_info info;
	sk_store_info(st, &info);
	r = apply(st, "f", 1, SK_STORE_PAY_REFUND, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(r.units, 3);
	ck_assert_uint_eq(r.nlines, 2);
	ck_assert_uint_eq(r.lines[0].rec.item, 7);
	ck_assert_uint_eq(r.lines[0].units, 2);
	ck_assert_uint_eq(r.lines[1].rec.item, 9);
	ck_assert_uint_eq(r.lines[1].units, 1);
	ck_assert_uint_eq(r.lines[1].rec.returned, 1);
	ck_assert_uint_eq(r.state, SK_ORDER_REFUNDED);
	ck_assert_uint_eq(r.event_seq, info.event_next);
	ck_assert_uint_eq(last_event(st).seq, info.event_next + 1);
	for (unsigned j = 0; j < 3; j++)
		ck_assert_uint_eq(line_of(st, 1, j).state, SK_ORDER_REFUNDED);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* ------------------------------------------------------ the request table */

START_TEST(request_table_bounded)
{
	struct sk_store_conf conf = {.requests_max = 4, .requests_ttl_ns = 100 * MS};
	struct sk_store *st = open_conf("bound", &conf);
	const uint32_t items[] = {7};
	struct sk_store_pay_result r;
	struct sk_store_info info;
	char req[16];

	put_cart(st, 1, 10, items, 1, 1);
	for (int i = 0; i < 10; i++) {
		struct sk_store_payment p = {
			.request = req, .order = 1, .kind = SK_STORE_PAY_REFUND, .units = 1};
		snprintf(req, sizeof(req), "q%d", i);
		ck_assert_int_eq(sk_store_payment_apply(st, &p, 5000 * MS + i, &r), 0);
		ck_assert_uint_eq(r.outcome, SK_STORE_PAY_STATE);
		sk_store_info(st, &info);
		ck_assert_uint_le(info.requests, 4);
	}
	ck_assert_uint_eq(info.requests, 4);
	ck_assert_int_eq(sk_store_payment_get(st, "q5", &r), -ENOENT);
	ck_assert_int_eq(sk_store_payment_get(st, "q6", &r), 0);
	ck_assert_int_eq(sk_store_payment_get(st, "q9", &r), 0);

	/* By age: a payment a second later drops every older entry it may. */
	struct sk_store_payment p = {.request = "late", .order = 1, .kind = SK_STORE_PAY_PAID};
	ck_assert_int_eq(sk_store_payment_apply(st, &p, 6000 * MS, &r), 0);
	sk_store_info(st, &info);
	ck_assert_uint_eq(info.requests, 1);
	ck_assert_int_eq(sk_store_payment_get(st, "q9", &r), -ENOENT);
	ck_assert_int_eq(sk_store_payment_get(st, "late", &r), 0);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

/* ------------------------------------------------------------- schema 1 */

/* make_schema1 - turn the store at @dir into what a schema 1 build wrote. */
static void
make_schema1(const char *dir)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;

	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 16), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "requests", 0, &dbi), 0);
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "requests_by_time", 0, &dbi), 0);
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "user_orders", 0, &dbi), 0); /* schema 3 */
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "state_orders", 0, &dbi), 0);
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	stamp_schema(dir, 1, 0);
}

START_TEST(schema1_store_opens_and_upgrades)
{
	const char *dir = store_dir("old");
	struct sk_store *st = open_test("old");
	const uint32_t items[] = {7};
	struct sk_store_pay_result r;
	struct sk_store_info info;

	/* A cancelled line: schema 1 wrote returned as a u32 at offset 36,
	 * the bytes schema 2 reads as refunded 0, returned qty. */
	put_cart(st, 1, 10, items, 1, 2);
	put_cart(st, 2, 11, items, 1, 1);
	ck_assert_int_eq(
		sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 3, NULL), 0);
	sk_store_close(st);
	make_schema1(dir);

	/* Read-only (seckillctl beside an old control plane): opens as is. */
	st = open_at(dir, SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, 1);
	ck_assert_uint_eq(info.requests, 0);
	ck_assert_int_eq(sk_store_payment_get(st, "x", &r), -ENOENT);
	apply(st, "x", 2, SK_STORE_PAY_PAID, 0, 0, -EACCES);
	struct sk_store_line l = line_of(st, 1, 0);
	ck_assert_uint_eq(l.rec.returned, 2);
	ck_assert_uint_eq(l.refunded, 0);
	assert_consistent(st);
	sk_store_close(st);

	/* Writable: upgraded to this schema, payments work. */
	st = open_test("old");
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	r = apply(st, "x", 2, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	assert_consistent(st);
	sk_store_close(st);
}
END_TEST

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("basics");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_test(tc, open_creates_and_reopens);
	tcase_add_test(tc, open_bad_arguments);
	tcase_add_test(tc, schema_version_checked);
	tcase_add_test(tc, insert_and_read_back);
	tcase_add_test(tc, idempotent_reinsert);
	tcase_add_test(tc, old_layout_id_reused_later);
	tcase_add_test(tc, invalid_records_skipped);
	tcase_add_test(tc, index_contents);
	tcase_add_test(tc, replay_after_reopen);
	tcase_add_test(tc, cursor_persistence);
	tcase_add_test(tc, read_only_handle);
	tcase_add_test(tc, verify_detects_damage);
	suite_add_tcase(s, tc);

	tc = tcase_create("orders");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, state_machine_table);
	tcase_add_test(tc, pay_cancel_race_one_winner);
	tcase_add_test(tc, deadlines_order_and_removal);
	tcase_add_test(tc, event_log_sequence);
	tcase_add_test(tc, activities_idempotent);
	tcase_add_test(tc, guards_refuse_oversell_and_overlimit);
	suite_add_tcase(s, tc);

	tc = tcase_create("payments");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, paid_once_by_request);
	tcase_add_test(tc, paid_after_cancel_is_a_conflict);
	tcase_add_test(tc, refund_partial_then_rest);
	tcase_add_test(tc, refund_lines_of_a_cart);
	tcase_add_test(tc, request_table_bounded);
	tcase_add_test(tc, schema1_store_opens_and_upgrades);
	suite_add_tcase(s, tc);

	tc = tcase_create("durability");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, batch_of_10000_in_one_txn);
	tcase_add_test(tc, kill9_keeps_whole_batches);
	tcase_add_test(tc, map_full_reported_cleanly);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(store_suite)
