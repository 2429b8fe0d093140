/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the order store's day-2 calls (storage/sk_store.h), each in
 * its own store under a temporary directory:
 *
 *   queries:  sk_store_orders_find() by (item, user) and (item, state),
 *             across carts, pays, cancels and refunds; pages with "after"
 *             and "more"; every bad query refused; the indexes checked by
 *             sk_store_verify() and against a full scan;
 *   upgrade:  a schema 2 store (no indexes, 144-byte activities) read as it
 *             is, then upgraded in place with its orders indexed;
 *   removal:  unsold units taken back once per request id (ids shared with
 *             restocks), never units live orders hold, the guards of
 *             put_orders and activity_put with removed units;
 *   pause, extend: changes, repeats, refusals, events, persistence.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "sk_store.h"
#include "sk_store_payments.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_store.h"

#define MS  ((int64_t)1000000)
#define MIN (60 * 1000 * MS)

static struct sk_order_rec
rec(uint64_t id, uint64_t user, uint32_t item, uint16_t qty)
{
	return (struct sk_order_rec){.id = id,
				     .user = user,
				     .price = 100,
				     .time_ns = 1000 * MS + (int64_t)id,
				     .item = item,
				     .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				     .qty = qty,
				     .nlines = 1};
}

static void
put(struct sk_store *st, const struct sk_order_rec *r, size_t n)
{
	uint8_t oc[16];

	ck_assert_uint_le(n, sizeof(oc));
	sk_test_store_put(st, r, n, oc, NULL);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(oc[i] == SK_STORE_NEW, "record %zu: %s", i,
			      sk_store_outcome_name(oc[i]));
}

static void
put_one(struct sk_store *st, uint64_t id, uint64_t user, uint32_t item, uint16_t qty)
{
	struct sk_order_rec r = rec(id, user, item, qty);

	put(st, &r, 1);
}

static struct sk_store_activity
activity(uint32_t item, uint64_t total, uint32_t limit)
{
	struct sk_store_activity a = {
		.item = item, .per_user_limit = limit, .total = total, .end_ns = INT64_MAX};

	snprintf(a.name, sizeof(a.name), "item-%u", item);
	return a;
}

static void
pay(struct sk_store *st, uint64_t id)
{
	ck_assert_int_eq(sk_store_order_move(st, id, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 5, NULL),
			 0);
}

static void
cancel(struct sk_store *st, uint64_t id)
{
	ck_assert_int_eq(
		sk_store_order_move(st, id, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 5, NULL), 0);
}

/* refund - @units of order @id (0: everything left), request @req. */
static void
refund(struct sk_store *st, uint64_t id, uint32_t units, const char *req)
{
	struct sk_store_payment p = {
		.request = req, .order = id, .kind = SK_STORE_PAY_REFUND, .units = units};
	struct sk_store_pay_result r;

	ck_assert_int_eq(sk_store_payment_apply(st, &p, 6, &r), 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
}

/* What sk_store_orders_find() gave: the ids, states and line counts. */
struct found {
	uint64_t id[SK_STORE_FIND_MAX + 1];
	uint8_t state[SK_STORE_FIND_MAX + 1];
	unsigned nlines[SK_STORE_FIND_MAX + 1];
	unsigned n;
	unsigned stop_after; /* 0: never */
};

static int
collect(const struct sk_store_line *lines, unsigned n, void *arg)
{
	struct found *f = arg;

	ck_assert_uint_lt(f->n, SK_ARRAY_SIZE(f->id));
	ck_assert_uint_eq(n, lines[0].rec.nlines);
	for (unsigned j = 0; j < n; j++) {
		ck_assert_uint_eq(lines[j].rec.id, lines[0].rec.id);
		ck_assert_uint_eq(lines[j].rec.line, j);
		ck_assert_uint_eq(lines[j].state, lines[0].state);
	}
	f->id[f->n] = lines[0].rec.id;
	f->state[f->n] = lines[0].state;
	f->nlines[f->n++] = n;
	return f->stop_after != 0 && f->n == f->stop_after ? 9 : 0;
}

/* find - the orders @q finds (asserts success); *more as the call says. */
static struct found
find(struct sk_store *st, struct sk_store_order_query q, bool *more)
{
	struct found f = {0};
	bool m;

	ck_assert_int_eq(sk_store_orders_find(st, &q, collect, &f, &m), 0);
	for (unsigned i = 1; i < f.n; i++)
		ck_assert_uint_gt(f.id[i], f.id[i - 1]); /* ascending ids */
	if (more != NULL)
		*more = m;
	return f;
}

static void
assert_ids(const struct found *f, const uint64_t *ids, unsigned n)
{
	ck_assert_uint_eq(f->n, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(f->id[i] == ids[i], "order %u: %lu, expected %lu", i,
			      (unsigned long)f->id[i], (unsigned long)ids[i]);
}

/* ------------------------------------------------------------------ queries */

START_TEST(find_by_user_and_state)
{
	struct sk_store *st = sk_test_store_open_test("find");
	struct sk_store_activity a = activity(1, 100, 5);
	bool more;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	/* Item 1: user 7 buys orders 10, 30, 50; user 8 buys 20, 40. Item 2:
	 * user 7 buys 60. Order 70 is a cart of items 2 and 1 for user 9. */
	put_one(st, 30, 7, 1, 1);
	put_one(st, 10, 7, 1, 2);
	put_one(st, 20, 8, 1, 1);
	put_one(st, 50, 7, 1, 1);
	put_one(st, 40, 8, 1, 1);
	put_one(st, 60, 7, 2, 1);
	struct sk_order_rec c[2] = {rec(70, 9, 2, 1), rec(70, 9, 1, 1)};
	c[0].nlines = c[1].nlines = 2;
	c[1].line = 1;
	put(st, c, 2);
	sk_test_store_verify(st);

	struct found f =
		find(st, (struct sk_store_order_query){.item = 1, .user = 7, .limit = 10}, &more);
	assert_ids(&f, (const uint64_t[]){10, 30, 50}, 3);
	ck_assert(!more);
	f = find(st, (struct sk_store_order_query){.item = 2, .user = 7, .limit = 10}, NULL);
	assert_ids(&f, (const uint64_t[]){60}, 1);
	f = find(st, (struct sk_store_order_query){.item = 1, .user = 9, .limit = 10}, NULL);
	assert_ids(&f, (const uint64_t[]){70}, 1);
	ck_assert_uint_eq(f.nlines[0], 2); /* the whole cart */
	f = find(st, (struct sk_store_order_query){.item = 3, .user = 7, .limit = 10}, NULL);
	ck_assert_uint_eq(f.n, 0);
	f = find(st, (struct sk_store_order_query){.item = 1, .user = 6, .limit = 10}, NULL);
	ck_assert_uint_eq(f.n, 0);

	/* Every state moves its entries: pay 10 and 70, cancel 20, refund 40
	 * after paying it (all of it: refunded), refund 1 of 2 units of 10
	 * (still paid). */
	pay(st, 10);
	pay(st, 70);
	cancel(st, 20);
	pay(st, 40);
	refund(st, 40, 0, "r40");
	refund(st, 10, 1, "r10");
	sk_test_store_verify(st);
	f = find(st,
		 (struct sk_store_order_query){.item = 1, .state = SK_ORDER_CONFIRMED, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){30, 50}, 2);
	f = find(st, (struct sk_store_order_query){.item = 1, .state = SK_ORDER_PAID, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){10, 70}, 2);
	f = find(st,
		 (struct sk_store_order_query){.item = 1, .state = SK_ORDER_CANCELLED, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){20}, 1);
	f = find(st,
		 (struct sk_store_order_query){.item = 1, .state = SK_ORDER_REFUNDED, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){40}, 1);
	f = find(st, (struct sk_store_order_query){.item = 2, .state = SK_ORDER_PAID, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){70}, 1);
	/* A user's orders keep every state; user and state together filter. */
	f = find(st, (struct sk_store_order_query){.item = 1, .user = 8, .limit = 10}, NULL);
	assert_ids(&f, (const uint64_t[]){20, 40}, 2);
	ck_assert_uint_eq(f.state[0], SK_ORDER_CANCELLED);
	ck_assert_uint_eq(f.state[1], SK_ORDER_REFUNDED);
	f = find(st,
		 (struct sk_store_order_query){
			 .item = 1, .user = 7, .state = SK_ORDER_CONFIRMED, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){30, 50}, 2);
	f = find(st,
		 (struct sk_store_order_query){
			 .item = 1, .user = 7, .state = SK_ORDER_CONFIRMED, .limit = 1},
		 &more);
	assert_ids(&f, (const uint64_t[]){30}, 1);
	ck_assert(more);

	/* A reopened store reads the same. */
	sk_store_close(st);
	st = sk_test_store_open(sk_test_store_dir("find"), SK_STORE_RDONLY, 0);
	f = find(st, (struct sk_store_order_query){.item = 1, .user = 7, .limit = 10}, NULL);
	assert_ids(&f, (const uint64_t[]){10, 30, 50}, 3);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(find_pages_and_refusals)
{
	struct sk_store *st = sk_test_store_open_test("pages");
	struct sk_order_rec r[16];
	bool more;

	/* 48 orders of users 1..3, ids 1000 + 7k (not in user order). */
	for (unsigned k = 0; k < 48; k += 16) {
		for (unsigned i = 0; i < 16; i++)
			r[i] = rec(1000 + 7 * (k + i), 1 + (k + i) % 3, 5, 1);
		put(st, r, 16);
	}
	/* Pages of 10 by state: 5 pages, "more" on all but the last, each
	 * continuing after the last id of the one before. */
	uint64_t after = 0, seen = 0;
	for (unsigned page = 0; page < 5; page++) {
		struct found f = find(st,
				      (struct sk_store_order_query){.item = 5,
								    .state = SK_ORDER_CONFIRMED,
								    .after = after,
								    .limit = 10},
				      &more);
		ck_assert_uint_eq(f.n, page < 4 ? 10 : 8);
		ck_assert(more == (page < 4));
		for (unsigned i = 0; i < f.n; i++)
			ck_assert_uint_eq(f.id[i], 1000 + 7 * (seen + i));
		seen += f.n;
		after = f.id[f.n - 1];
	}
	ck_assert_uint_eq(seen, 48);
	/* Exactly a page left: no "more". */
	struct found f = find(st,
			      (struct sk_store_order_query){.item = 5,
							    .state = SK_ORDER_CONFIRMED,
							    .after = 1000 + 7 * 37,
							    .limit = 10},
			      &more);
	ck_assert_uint_eq(f.n, 10);
	ck_assert(!more);
	/* By user: user 2 has orders k = 1, 4, 7 ...: 16 of them. */
	f = find(st,
		 (struct sk_store_order_query){.item = 5, .user = 2, .after = 1007, .limit = 20},
		 &more);
	ck_assert_uint_eq(f.n, 15);
	ck_assert_uint_eq(f.id[0], 1000 + 7 * 4);
	ck_assert(!more);
	f = find(st,
		 (struct sk_store_order_query){
			 .item = 5, .user = 2, .after = UINT64_MAX, .limit = 5},
		 &more);
	ck_assert_uint_eq(f.n, 0);
	ck_assert(!more);
	/* The largest page, and the callback's stop. */
	f = find(st,
		 (struct sk_store_order_query){
			 .item = 5, .state = SK_ORDER_CONFIRMED, .limit = SK_STORE_FIND_MAX},
		 &more);
	ck_assert_uint_eq(f.n, 48);
	struct found g = {.stop_after = 3};
	struct sk_store_order_query q = {.item = 5, .user = 1, .limit = 10};
	ck_assert_int_eq(sk_store_orders_find(st, &q, collect, &g, NULL), 9);
	ck_assert_uint_eq(g.n, 3);

	/* Refused: every malformed query. */
	const struct sk_store_order_query bad[] = {
		{.item = 0, .user = 1, .limit = 1},
		{.item = 5, .limit = 1},
		{.item = 5, .user = 1, .limit = 0},
		{.item = 5, .user = 1, .limit = SK_STORE_FIND_MAX + 1},
		{.item = 5, .state = SK_ORDER_QUEUED, .limit = 1},
		{.item = 5, .state = SK_ORDER_FAILED, .limit = 1},
		{.item = 5, .state = SK_ORDER_NONE + 200, .limit = 1},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++)
		ck_assert_msg(sk_store_orders_find(st, &bad[i], collect, &g, &more) == -EINVAL,
			      "query %zu", i);
	ck_assert_int_eq(sk_store_orders_find(st, NULL, collect, &g, &more), -EINVAL);
	ck_assert_int_eq(sk_store_orders_find(st, &q, NULL, NULL, &more), -EINVAL);
	sk_store_close(st);
}
END_TEST

/* ---------------------------------------------------------------- upgrade */

/*
 * make_schema2 - turn the store at @dir into what a schema 2 build wrote:
 * no order indexes, activity definitions of 144 bytes, stamp 2.0.
 */
static void
make_schema2(const char *dir)
{
	uint8_t v[12] = {'S', 'K', 'S', 'T', 0, 0, 0, 2, 0, 0, 0, 0};
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cur;
	MDB_val k, d;

	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 16), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "user_orders", 0, &dbi), 0);
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "state_orders", 0, &dbi), 0);
	ck_assert_int_eq(mdb_drop(txn, dbi, 1), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "items", 0, &dbi), 0);
	ck_assert_int_eq(mdb_cursor_open(txn, dbi, &cur), 0);
	unsigned defs = 0;
	for (int rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
		if (k.mv_size != 5 || ((uint8_t *)k.mv_data)[4] != 0)
			continue;
		uint8_t old[144];
		ck_assert_uint_eq(d.mv_size, 160);
		memcpy(old, d.mv_data, sizeof(old));
		MDB_val nd = {.mv_size = sizeof(old), .mv_data = old};
		ck_assert_int_eq(mdb_cursor_put(cur, &k, &nd, MDB_CURRENT), 0);
		defs++;
	}
	mdb_cursor_close(cur);
	ck_assert_uint_gt(defs, 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	k = (MDB_val){.mv_size = 6, .mv_data = "schema"};
	d = (MDB_val){.mv_size = sizeof(v), .mv_data = v};
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &d, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

START_TEST(schema2_store_read_then_upgraded)
{
	const char *dir = sk_test_store_dir("old");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_store_activity a = activity(1, 10, 1);
	struct sk_store_info info;
	struct found f;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 5, 4, 2), 0);
	for (uint64_t id = 1; id <= 6; id++)
		put_one(st, id, 100 + id, 1, 1);
	pay(st, 2);
	cancel(st, 3);
	sk_store_close(st);
	make_schema2(dir);

	/* Read-only: as it is; no indexes to query. */
	st = sk_test_store_open(dir, SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, 2);
	struct sk_store_order_query q = {.item = 1, .user = 101, .limit = 5};
	ck_assert_int_eq(sk_store_orders_find(st, &q, collect, &f, NULL), -ENOTSUP);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.total, 10);
	ck_assert_uint_eq(a.added, 4);
	ck_assert_uint_eq(a.removed, 0);
	ck_assert_int_eq(a.paused_ns, 0);
	sk_test_store_verify(st);
	sk_store_close(st);

	/* Writable: upgraded in place, every order indexed. */
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	sk_test_store_verify(st);
	f = find(st,
		 (struct sk_store_order_query){.item = 1, .state = SK_ORDER_CONFIRMED, .limit = 10},
		 NULL);
	assert_ids(&f, (const uint64_t[]){1, 4, 5, 6}, 4);
	f = find(st, (struct sk_store_order_query){.item = 1, .user = 103, .limit = 10}, NULL);
	assert_ids(&f, (const uint64_t[]){3}, 1);
	ck_assert_uint_eq(f.state[0], SK_ORDER_CANCELLED);
	/* A 144-byte definition is rewritten whole on its next change. */
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 6, 2, 3), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.removed, 2);
	ck_assert_uint_eq(a.added, 4);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

/* ----------------------------------------------------------- stock changes */

/* Collects the last event of the log. */
static int
keep_event(const struct sk_store_event *ev, void *arg)
{
	*(struct sk_store_event *)arg = *ev;
	return 0;
}

static struct sk_store_event
latest(struct sk_store *st)
{
	struct sk_store_event ev = {0};

	ck_assert_int_eq(sk_store_events_foreach(st, 0, keep_event, &ev), 0);
	ck_assert_uint_ne(ev.seq, 0);
	return ev;
}

START_TEST(remove_only_unsold_once)
{
	struct sk_store *st = sk_test_store_open_test("remove");
	struct sk_store_activity a = activity(1, 10, 3);
	uint64_t units;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	/* 6 of 10 live: 4 unsold. */
	put_one(st, 1, 11, 1, 3);
	put_one(st, 2, 12, 1, 3);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 77, 5, 2), -ERANGE);
	ck_assert_int_eq(sk_store_activity_removal(st, 1, 77, &units), -ENOENT);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 77, 3, 2), 0);
	struct sk_store_event ev = latest(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_REMOVED);
	ck_assert_str_eq(sk_store_event_name(ev.type), "removed");
	ck_assert_uint_eq(ev.item, 1);
	ck_assert_uint_eq(ev.units, 3);
	ck_assert_uint_eq(ev.order, 0);
	ck_assert_int_eq(sk_store_activity_removal(st, 1, 77, &units), 0);
	ck_assert_uint_eq(units, 3);
	/* Exactly once: the same request again changes nothing, another
	 * number of units under its id is a conflict. */
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 77, 3, 3), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 77, 1, 3), -EEXIST);
	ck_assert_uint_eq(latest(st).seq, ev.seq);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.removed, 3);
	ck_assert_uint_eq(sk_store_activity_units(&a), 7);
	/* One unit is left unsold: 2 is too many, and the guard of
	 * put_orders now stops at 7 live units. */
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 78, 2, 4), -ERANGE);
	struct sk_order_rec r[2] = {rec(3, 13, 1, 1), rec(4, 14, 1, 1)};
	uint8_t oc[2];
	ck_assert_int_eq(sk_store_put_orders(st, r, 2, 0, 5, oc, NULL), 0);
	ck_assert_uint_eq(oc[0], SK_STORE_NEW);
	ck_assert_uint_eq(oc[1], SK_STORE_OVERSELL);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 78, 1, 4), -ERANGE);
	/* A cancel frees 3: they may go, and activity_put may not bring the
	 * total below live + removed. */
	cancel(st, 1);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 78, 3, 6), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.removed, 6);
	struct sk_store_activity b = a;
	b.total = 9; /* 9 - 6 = 3 < 4 live */
	ck_assert_int_eq(sk_store_activity_put(st, &b, 7), -ERANGE);
	b.total = 11;
	ck_assert_int_eq(sk_store_activity_put(st, &b, 7), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.removed, 6); /* a put keeps the removed units */
	ck_assert_uint_eq(sk_store_activity_units(&a), 5);

	/* Ids are shared with restocks, both ways. */
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 77, 3, 8), -EEXIST);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 90, 2, 8), 0);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 90, 2, 8), -EEXIST);
	ck_assert_int_eq(sk_store_activity_removal(st, 1, 90, &units), -EEXIST);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, 90, 2, 8), SK_STORE_UNCHANGED);
	/* ... per item: another item's id 77 is free. */
	a = activity(2, 5, 1);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 8), 0);
	ck_assert_int_eq(sk_store_activity_remove(st, 2, 77, 5, 8), 0);
	ck_assert_int_eq(sk_store_activity_get(st, 2, &a, NULL), 0);
	ck_assert_uint_eq(sk_store_activity_units(&a), 0);

	/* Refusals. */
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 0, 1, 9), -EINVAL);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 91, 0, 9), -EINVAL);
	ck_assert_int_eq(sk_store_activity_remove(st, 3, 91, 1, 9), -ENOENT);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 91, UINT64_MAX, 9), -ERANGE);
	ck_assert_int_eq(sk_store_activity_close(st, 1, 10), 0);
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 91, 1, 11), -EPERM);
	/* ... but a repeat of an applied one is still answered. */
	ck_assert_int_eq(sk_store_activity_remove(st, 1, 78, 3, 11), SK_STORE_UNCHANGED);
	sk_test_store_verify(st);

	/* Durable across a reopen. */
	sk_store_close(st);
	st = sk_test_store_open(sk_test_store_dir("remove"), SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &a, NULL), 0);
	ck_assert_uint_eq(a.removed, 6);
	ck_assert_int_eq(sk_store_activity_removal(st, 1, 78, &units), 0);
	ck_assert_uint_eq(units, 3);
	sk_store_close(st);
}
END_TEST

START_TEST(pause_and_extend)
{
	struct sk_store *st = sk_test_store_open_test("pause");
	struct sk_store_activity a = activity(1, 10, 1), cur;

	a.end_ns = 1000;
	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, false, 2), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, true, 3), 0);
	ck_assert_uint_eq(latest(st).type, SK_STORE_EV_PAUSED);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, true, 4), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &cur, NULL), 0);
	ck_assert_int_eq(cur.paused_ns, 3);
	/* Paused is no part of the definition: the same add is unchanged. */
	ck_assert(sk_store_activity_same(&cur, &a));
	ck_assert_int_eq(sk_store_activity_put(st, &a, 5), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, false, 6), 0);
	struct sk_store_event ev = latest(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_RESUMED);
	ck_assert_str_eq(sk_store_event_name(ev.type), "resumed");
	ck_assert_int_eq(sk_store_activity_get(st, 1, &cur, NULL), 0);
	ck_assert_int_eq(cur.paused_ns, 0);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, true, 7), 0);

	/* Extend: only later; the same end again is unchanged. */
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 999, 8), -ERANGE);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 1000, 8), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 0, 8), -EINVAL);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 5000, 8), 0);
	ev = latest(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_EXTENDED);
	ck_assert_str_eq(sk_store_event_name(ev.type), "extended");
	ck_assert(ev.def.has_def);
	ck_assert_int_eq(ev.def.end_ns, 5000);
	ck_assert_uint_eq(ev.def.per_user_limit, 1);
	ck_assert_str_eq(ev.def.name, "item-1");
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 5000, 9), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, INT64_MAX, 9), 0);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, 6000, 9), -ERANGE);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &cur, NULL), 0);
	ck_assert_int_eq(cur.end_ns, INT64_MAX);
	ck_assert_int_eq(cur.paused_ns, 7); /* an extend keeps the pause */
	/* The definition changed: the old add is now another one. */
	ck_assert(!sk_store_activity_same(&cur, &a));
	ck_assert_int_eq(sk_store_activity_extend(st, 2, 6000, 9), -ENOENT);
	ck_assert_int_eq(sk_store_activity_pause(st, 2, true, 9), -ENOENT);

	/* Closed: nothing changes any more. */
	ck_assert_int_eq(sk_store_activity_close(st, 1, 10), 0);
	ck_assert_int_eq(sk_store_activity_pause(st, 1, false, 11), -EPERM);
	ck_assert_int_eq(sk_store_activity_extend(st, 1, INT64_MAX, 11), -EPERM);
	ck_assert_uint_eq(latest(st).type, SK_STORE_EV_CLOSED);
	sk_test_store_verify(st);
	sk_store_close(st);

	st = sk_test_store_open(sk_test_store_dir("pause"), SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &cur, NULL), 0);
	ck_assert_int_eq(cur.paused_ns, 7);
	ck_assert_int_eq(cur.end_ns, INT64_MAX);
	ck_assert_int_ne(cur.closed_ns, 0);
	sk_store_close(st);
}
END_TEST

static Suite *
day2_suite(void)
{
	Suite *s = suite_create("store-day2");
	TCase *tc = tcase_create("queries");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, find_by_user_and_state);
	tcase_add_test(tc, find_pages_and_refusals);
	tcase_add_test(tc, schema2_store_read_then_upgraded);
	suite_add_tcase(s, tc);

	tc = tcase_create("activities");
	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, remove_only_unsold_once);
	tcase_add_test(tc, pause_and_extend);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(day2_suite)
