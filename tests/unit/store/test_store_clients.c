/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The buyer's address in the order store: an order line keeps a client of
 * either family (schema 4), and a store written with the schema 3 layout
 * (64-byte lines, an IPv4 client at offset 28) is read as it is when opened
 * read-only and rewritten in place, counted, when opened for writing.
 */
#include <inttypes.h>

#include "test_store.h"

static const struct sk_addr v6 = {.family = SK_ADDR_V6,
				  .bytes = {0x20, 0x01, 0x0d, 0xb8, [14] = 0xbe, [15] = 0xef}};

/* client_of - the client of order @id's line 0. */
static struct sk_addr
client_of(struct sk_store *st, uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	int rc = sk_store_order_get(st, id, l, SK_STORE_MAX_LINES, &n);

	ck_assert_msg(rc == 0, "order %" PRIu64 ": %d", id, rc);
	return l[0].rec.client;
}

/* v4 - 198.18.0.@last. */
static struct sk_addr
v4(uint8_t last)
{
	return (struct sk_addr){.family = SK_ADDR_V4, .bytes = {198, 18, 0, last}};
}

START_TEST(client_either_family_round_trip)
{
	struct sk_store *st = sk_test_store_open_test("clients");
	struct sk_order_rec r[3] = {rec(1, 10, 1, 1), rec(2, 11, 1, 1), rec(3, 12, 1, 1)};
	struct sk_addr none = {0}, got;

	r[0].client = v4(7);
	r[1].client = v6;
	r[2].client = none;
	ck_assert_int_eq(sk_store_put_orders(st, r, 3, 0, 1, NULL, NULL), 0);
	got = client_of(st, 1);
	ck_assert(sk_addr_eq(&got, &r[0].client));
	got = client_of(st, 2);
	ck_assert(sk_addr_eq(&got, &v6));
	got = client_of(st, 3);
	ck_assert_uint_eq(got.family, SK_ADDR_NONE);
	/* A state change rewrites the line: the client stays. */
	ck_assert_int_eq(
		sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 3, NULL), 0);
	got = client_of(st, 2);
	ck_assert(sk_addr_eq(&got, &v6));
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

/* `orders` of a store read with LMDB itself, under the store's feet. */
struct raw {
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cur;
};

/* raw_open - the environment at @dir, a transaction, a cursor on `orders`. */
static void
raw_open(struct raw *r, const char *dir, unsigned flags)
{
	ck_assert_int_eq(mdb_env_create(&r->env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(r->env, 16), 0);
	ck_assert_int_eq(mdb_env_open(r->env, dir, flags, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(r->env, NULL, flags, &r->txn), 0);
	ck_assert_int_eq(mdb_dbi_open(r->txn, "orders", 0, &r->dbi), 0);
	ck_assert_int_eq(mdb_cursor_open(r->txn, r->dbi, &r->cur), 0);
}

/*
 * make_schema3_lines - rewrite every order line of the store at @dir in the
 * schema 1-3 layout: the first 64 bytes, the IPv4 client at offset 28 (0
 * for none), and stamp it 3.0. Returns the lines rewritten.
 */
static unsigned
make_schema3_lines(const char *dir)
{
	/* Copied out first, then put: no cursor moves over rewritten lines. */
	uint8_t keys[16][9], vals[16][64];
	struct raw r;
	MDB_val k, d;
	unsigned n = 0;

	raw_open(&r, dir, 0);
	for (int rc = mdb_cursor_get(r.cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(r.cur, &k, &d, MDB_NEXT)) {
		const uint8_t *v = d.mv_data;

		ck_assert_uint_lt(n, 16);
		ck_assert_uint_eq(k.mv_size, 9);
		ck_assert_uint_eq(d.mv_size, 84);
		ck_assert_uint_ne(v[64], SK_ADDR_V6); /* schema 3 could not hold it */
		memcpy(keys[n], k.mv_data, 9);
		memcpy(vals[n], v, 64);
		memset(vals[n] + 28, 0, 4);
		if (v[64] == SK_ADDR_V4)
			memcpy(vals[n] + 28, v + 68, 4);
		n++;
	}
	mdb_cursor_close(r.cur);
	for (unsigned i = 0; i < n; i++) {
		k = (MDB_val){.mv_size = 9, .mv_data = keys[i]};
		d = (MDB_val){.mv_size = 64, .mv_data = vals[i]};
		ck_assert_int_eq(mdb_put(r.txn, r.dbi, &k, &d, 0), 0);
	}
	ck_assert_int_eq(mdb_txn_commit(r.txn), 0);
	mdb_env_close(r.env);
	stamp_schema(dir, 3, 0);
	return n;
}

/* order_val_sizes - how many order lines of the store at @dir are @size bytes. */
static unsigned
order_val_sizes(const char *dir, size_t size)
{
	struct raw r;
	MDB_val k, d;
	unsigned n = 0;

	raw_open(&r, dir, MDB_RDONLY);
	for (int rc = mdb_cursor_get(r.cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(r.cur, &k, &d, MDB_NEXT))
		n += d.mv_size == size;
	mdb_cursor_close(r.cur);
	mdb_txn_abort(r.txn);
	mdb_env_close(r.env);
	return n;
}

/* assert_old_clients - orders 1..3 have client 198.18.0.<id>, order 4 none. */
static void
assert_old_clients(struct sk_store *st)
{
	struct sk_addr got;

	for (uint8_t id = 1; id <= 3; id++) {
		struct sk_addr want = v4(id);

		got = client_of(st, id);
		ck_assert_msg(sk_addr_eq(&got, &want), "order %u", id);
	}
	got = client_of(st, 4);
	ck_assert_uint_eq(got.family, SK_ADDR_NONE);
}

START_TEST(schema3_lines_read_then_upgraded)
{
	const char *dir = sk_test_store_dir("old3");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	const uint32_t items[] = {1, 2};
	struct sk_order_rec r[4];
	struct sk_store_info info;
	struct sk_store_line l[SK_STORE_MAX_LINES];
	struct sk_addr got, none = {0};
	unsigned n;

	/* Orders 1..3: IPv4 clients (a 2-line cart among them); 4: none. */
	cart(r, 1, 10, items, 2);
	r[0].client = r[1].client = v4(1);
	r[2] = rec(2, 11, 1, 1);
	r[2].client = v4(2);
	r[3] = rec(3, 12, 2, 1);
	r[3].client = v4(3);
	ck_assert_int_eq(sk_store_put_orders(st, r, 4, 0, 1, NULL, NULL), 0);
	r[0] = rec(4, 13, 1, 1);
	r[0].client = none;
	ck_assert_int_eq(sk_store_put_orders(st, r, 1, 0, 1, NULL, NULL), 0);
	ck_assert_int_eq(sk_store_order_move(st, 2, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 3, NULL), 0);
	sk_store_close(st);
	ck_assert_uint_eq(make_schema3_lines(dir), 5);

	/* Read-only: schema 3 as it is; every line keeps its IPv4 client. */
	st = sk_test_store_open(dir, SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, 3);
	ck_assert_uint_eq(info.upgraded_from, 0);
	assert_old_clients(st);
	sk_test_store_verify(st);
	sk_store_close(st);
	ck_assert_uint_eq(order_val_sizes(dir, 64), 5);

	/* Writable: every line rewritten in the open's transaction, counted. */
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	ck_assert_uint_eq(info.upgraded_from, 3);
	ck_assert_uint_eq(info.upgraded_lines, 5);
	assert_old_clients(st);
	ck_assert_int_eq(sk_store_order_get(st, 1, l, SK_STORE_MAX_LINES, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(l[1].rec.item, 2);
	ck_assert_uint_eq(state_of(st, 2), SK_ORDER_PAID);
	/* New orders: the new layout, an IPv6 client kept. */
	r[0] = rec(5, 14, 1, 1);
	r[0].client = v6;
	ck_assert_int_eq(sk_store_put_orders(st, r, 1, 0, 1, NULL, NULL), 0);
	got = client_of(st, 5);
	ck_assert(sk_addr_eq(&got, &v6));
	sk_test_store_verify(st);
	sk_store_close(st);
	ck_assert_uint_eq(order_val_sizes(dir, 64), 0);
	ck_assert_uint_eq(order_val_sizes(dir, 84), 6);

	/* Once upgraded, a reopen has nothing to do. */
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.upgraded_from, 0);
	ck_assert_uint_eq(info.upgraded_lines, 0);
	sk_store_close(st);
}
END_TEST

void
test_store_add_clients(Suite *s)
{
	TCase *tc = tcase_create("clients");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_add_test(tc, client_either_family_round_trip);
	tcase_add_test(tc, schema3_lines_read_then_upgraded);
	suite_add_tcase(s, tc);
}
