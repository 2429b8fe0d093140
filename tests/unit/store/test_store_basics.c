/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Store tests, basics: open and reopen, bad arguments, schema versions, insert and read back,
 * idempotent replay, invalid records, the indexes, cursors, read-only handles, verify (tcase
 * "basics" of the suite in test_store.c).
 */
#include "test_store.h"

static int
collect_holding_stop(const struct sk_store_holding *h, void *arg)
{
	(void)h, (void)arg;
	return 7;
}

/* ------------------------------------------------------------------ basics */

START_TEST(open_creates_and_reopens)
{
	struct sk_store *st = sk_test_store_open_test("open");
	struct sk_store_info info;

	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	ck_assert_uint_eq(info.schema_minor, SK_STORE_SCHEMA_MINOR);
	ck_assert_uint_eq(info.map_size, SK_STORE_MAP_SIZE_DEFAULT);
	ck_assert_uint_eq(info.order_lines, 0);
	ck_assert_uint_eq(info.event_next, 1);
	sk_test_store_verify(st);
	sk_store_close(st);

	st = sk_test_store_open_test("open");
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
	ck_assert_int_eq(sk_store_open(&st, sk_test_store_dir("bad"), &bad, err, sizeof(err)),
			 -EINVAL);
	/* Read-only where nothing exists. */
	struct sk_store_conf ro = {.flags = SK_STORE_RDONLY};
	ck_assert_int_eq(sk_store_open(&st, sk_test_store_dir("nothing"), &ro, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_null(st);
	/* A regular file where the directory should be. */
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s", sk_test_store_dir("file"));
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_lt(sk_store_open(&st, path, NULL, err, sizeof(err)), 0);
	ck_assert_ptr_null(st);
}
END_TEST

START_TEST(schema_version_checked)
{
	const char *dir = sk_test_store_dir("schema");
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = sk_test_store_open(dir, 0, 0);
	struct sk_order_rec r = rec(1, 1, 1, 1);

	sk_test_store_put(st, &r, 1, NULL, NULL);
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
	st = sk_test_store_open(dir, 0, 0);
	ck_assert_uint_eq(state_of(st, 1), SK_ORDER_CONFIRMED);
	sk_store_close(st);

	/* An LMDB environment that is not ours. */
	const char *other = sk_test_store_dir("not-ours");
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
	struct sk_store *st = sk_test_store_open_test("insert");
	struct sk_order_rec r[5];
	const uint32_t items[3] = {7, 3, 9};
	uint8_t oc[5];
	struct sk_store_put_stats s;

	r[0] = rec(0x100, 11, 5, 2);
	r[1] = rec(0x101, 12, 5, 1);
	cart(&r[2], 0x102, 13, items, 3);
	sk_test_store_put(st, r, 5, oc, &s);
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(idempotent_reinsert)
{
	struct sk_store *st = sk_test_store_open_test("reinsert");
	struct sk_order_rec r[4], again[6];
	const uint32_t items[2] = {1, 2};
	uint8_t oc[6];
	struct sk_store_put_stats s;

	r[0] = rec(10, 1, 1, 1);
	r[1] = rec(11, 2, 1, 3);
	cart(&r[2], 12, 3, items, 2);
	sk_test_store_put(st, r, 4, NULL, &s);
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
	sk_test_store_verify(st);
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
	struct sk_store *st = sk_test_store_open_test("oldlayout");
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
	sk_test_store_put(st, &r, 1, NULL, &s);
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(invalid_records_skipped)
{
	struct sk_store *st = sk_test_store_open_test("invalid");
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(index_contents)
{
	struct sk_store *st = sk_test_store_open_test("index");
	struct sk_order_rec r[8];
	const uint32_t items[2] = {2, 1};
	struct holdings h = {0};

	r[0] = rec(0x10, 100, 1, 2);
	r[1] = rec(0x11, 100, 1, 1); /* same user, second order: limit > 1 */
	r[2] = rec(0x12, 200, 1, 1);
	r[3] = rec(0x13, 50, 2, 4);
	cart(&r[4], 0x14, 300, items, 2);
	r[6] = rec(0x15, 1, 3, 1);
	sk_test_store_put(st, r, 7, NULL, NULL);

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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(replay_after_reopen)
{
	const char *dir = sk_test_store_dir("replay");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r[6];
	struct sk_store_put_stats s;
	struct holdings before = {0}, after = {0};

	for (unsigned i = 0; i < 6; i++)
		r[i] = rec(0x50 + i, 1000 + i, 1 + i % 2, (uint16_t)(1 + i % 3));
	sk_test_store_put(st, r, 6, NULL, NULL);
	ck_assert_int_eq(sk_store_order_move(st, 0x50, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, NULL),
			 0);
	ck_assert_int_eq(
		sk_store_order_move(st, 0x51, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 1, NULL), 0);
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &before), 0);
	sk_store_close(st);

	/* What recovery reads after a restart is what was committed ... */
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_holdings_foreach(st, 0, collect_holding, &after), 0);
	ck_assert_uint_eq(after.n, 5);
	ck_assert_mem_eq(before.h, after.h, sizeof(before.h[0]) * before.n);
	ck_assert_uint_eq(state_of(st, 0x50), SK_ORDER_PAID);
	ck_assert_uint_eq(state_of(st, 0x51), SK_ORDER_CANCELLED);

	/* ... and replaying the batch (a drain that restarts from a staged
	 * copy) neither duplicates nor resurrects the cancelled order. */
	sk_test_store_put(st, r, 6, NULL, &s);
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(cursor_persistence)
{
	const char *dir = sk_test_store_dir("cursors");
	struct sk_store *st = sk_test_store_open(dir, 0, 0);
	char longname[SK_STORE_CURSOR_NAME_MAX + 2];
	uint64_t v = 1;

	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), -ENOENT);
	ck_assert_int_eq(sk_store_cursor_set(st, "kafka.orders", 42), 0);
	ck_assert_int_eq(sk_store_cursor_set(st, "kafka.events", UINT64_MAX), 0);
	ck_assert_int_eq(sk_store_cursor_get(st, "kafka.orders", &v), 0);
	ck_assert_uint_eq(v, 42);
	sk_store_close(st);

	st = sk_test_store_open(dir, 0, 0);
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

START_TEST(read_only_handle)
{
	const char *dir = sk_test_store_dir("ro");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r = rec(1, 1, 1, 1);

	sk_test_store_put(st, &r, 1, NULL, NULL);
	ck_assert_int_eq(sk_store_cursor_set(st, "c", 5), 0);
	sk_store_close(st);

	st = sk_test_store_open(dir, SK_STORE_RDONLY, 0);
	uint64_t v;
	ck_assert_uint_eq(state_of(st, 1), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_cursor_get(st, "c", &v), 0);
	ck_assert_int_eq(sk_store_put_orders(st, &r, 1, 0, 0, NULL, NULL), -EACCES);
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 1, NULL),
			 -EACCES);
	ck_assert_int_eq(sk_store_cursor_set(st, "c", 6), -EACCES);
	sk_test_store_verify(st);
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
	const char *dir = sk_test_store_dir("damage");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec r[2] = {rec(1, 10, 3, 1), rec(2, 20, 3, 1)};
	char err[SK_STORE_ERR_MAX];

	sk_test_store_put(st, r, 2, NULL, NULL);
	sk_test_store_verify(st);
	sk_store_close(st);
	drop_holding(dir, 3, 20);
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_verify(st, err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "by_user") != NULL, "%s", err);
	sk_store_close(st);
}
END_TEST

void
test_store_add_basics(Suite *s)
{
	TCase *tc;

	tc = tcase_create("basics");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
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
}
