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
 *
 * This file: the fixture, the helpers the topic files share (test_store.h) and
 * the suite; the tests are in test_store_{basics,orders,payments,durability,clients}.c.
 */
#include "test_store.h"

struct sk_order_rec
rec(uint64_t id, uint64_t user, uint32_t item, uint16_t qty)
{
	return (struct sk_order_rec){.id = id,
				     .user = user,
				     .price = 100 * item,
				     .time_ns = 1000 * MS,
				     .item = item,
				     .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				     .qty = qty,
				     .line = 0,
				     .nlines = 1};
}

void
cart(struct sk_order_rec *out, uint64_t id, uint64_t user, const uint32_t *items, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		out[j] = rec(id, user, items[j], 1);
		out[j].line = (uint8_t)j;
		out[j].nlines = (uint8_t)n;
	}
}

unsigned
state_of(struct sk_store *st, uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	ck_assert_int_eq(sk_store_order_get(st, id, l, SK_STORE_MAX_LINES, &n), 0);
	return l[0].state;
}

int
collect_holding(const struct sk_store_holding *h, void *arg)
{
	struct holdings *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->h));
	c->h[c->n++] = *h;
	return 0;
}

int
collect_event(const struct sk_store_event *ev, void *arg)
{
	struct events *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->ev));
	c->ev[c->n++] = *ev;
	return c->stop_after != 0 && c->n == c->stop_after ? 42 : 0;
}

void
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

static Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	test_store_add_basics(s);
	test_store_add_orders(s);
	test_store_add_payments(s);
	test_store_add_durability(s);
	test_store_add_clients(s);
	return s;
}

SK_TEST_MAIN(store_suite)
