/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Store tests, payments: paid once per request, paid after cancel, refunds (partial, per line), the
 * bounded request table, the schema 1 upgrade (tcase "payments" of the suite in test_store.c).
 */
#include "test_store.h"

/* --------------------------------------------------------------- payments */

/* open_conf - the store of test @name (no sync) with @c's other settings. */
static struct sk_store *
open_conf(const char *name, const struct sk_store_conf *c)
{
	struct sk_store_conf conf = *c;
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = NULL;

	conf.flags |= SK_STORE_NOSYNC;
	int rc = sk_store_open(&st, sk_test_store_dir(name), &conf, err, sizeof(err));
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
	sk_test_store_put(st, r, n, NULL, NULL);
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
	struct sk_store *st = sk_test_store_open_test("paid");
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(paid_after_cancel_is_a_conflict)
{
	struct sk_store *st = sk_test_store_open_test("conflict");
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

/* ----------------------------------------------------------------- refund */

START_TEST(refund_partial_then_rest)
{
	struct sk_store *st = sk_test_store_open_test("refund");
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
	sk_test_store_verify(st);

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
	sk_test_store_verify(st);

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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(refund_lines_of_a_cart)
{
	struct sk_store *st = sk_test_store_open_test("cart");
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
	sk_test_store_verify(st);

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
	sk_test_store_verify(st);
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
	sk_test_store_verify(st);
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
	const char *dir = sk_test_store_dir("old");
	struct sk_store *st = sk_test_store_open_test("old");
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
	st = sk_test_store_open(dir, SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, 1);
	ck_assert_uint_eq(info.requests, 0);
	ck_assert_int_eq(sk_store_payment_get(st, "x", &r), -ENOENT);
	apply(st, "x", 2, SK_STORE_PAY_PAID, 0, 0, -EACCES);
	struct sk_store_line l = line_of(st, 1, 0);
	ck_assert_uint_eq(l.rec.returned, 2);
	ck_assert_uint_eq(l.refunded, 0);
	sk_test_store_verify(st);
	sk_store_close(st);

	/* Writable: upgraded to this schema, payments work. */
	st = sk_test_store_open_test("old");
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.schema_major, SK_STORE_SCHEMA_MAJOR);
	r = apply(st, "x", 2, SK_STORE_PAY_PAID, 0, 0, 0);
	ck_assert_uint_eq(r.outcome, SK_STORE_PAY_DONE);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

void
test_store_add_payments(Suite *s)
{
	TCase *tc;

	tc = tcase_create("payments");
	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, paid_once_by_request);
	tcase_add_test(tc, paid_after_cancel_is_a_conflict);
	tcase_add_test(tc, refund_partial_then_rest);
	tcase_add_test(tc, refund_lines_of_a_cart);
	tcase_add_test(tc, request_table_bounded);
	tcase_add_test(tc, schema1_store_opens_and_upgrades);
	suite_add_tcase(s, tc);
}
