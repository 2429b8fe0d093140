/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Store tests, orders: the state machine (every from/to pair, pay racing cancel), deadlines, the
 * event log, activities, the oversell and per-user guards (tcase "orders" of the suite in
 * test_store.c).
 */
#include "test_store.h"

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

static int
collect_deadline(int64_t when, uint64_t order, void *arg)
{
	struct deadlines *c = arg;

	ck_assert_uint_lt(c->n, SK_ARRAY_SIZE(c->when));
	c->when[c->n] = when;
	c->order[c->n++] = order;
	return 0;
}

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
	struct sk_store *st = sk_test_store_open_test("states");
	const unsigned start[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED};
	uint64_t id = 1, events = 0;

	for (unsigned b = 0; b < SK_ARRAY_SIZE(start); b++) {
		for (unsigned from = 0; from <= 6; from++) {
			for (unsigned to = 0; to <= 6; to++, id++) {
				struct sk_order_rec r = rec(id, id, 1, 1);
				sk_test_store_put(st, &r, 1, NULL, NULL);
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
	sk_test_store_verify(st);
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
	struct sk_store *st = sk_test_store_open_test("race");
	struct sk_order_rec r[2] = {rec(1, 1, 1, 1), rec(2, 2, 1, 1)};
	unsigned cur;

	sk_test_store_put(st, r, 2, NULL, NULL);
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
	sk_test_store_put(st, many, N, NULL, NULL);
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
	sk_test_store_verify(st);
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
	struct sk_store *st = sk_test_store_open_test("deadlines");
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
	sk_test_store_put(st, r, 6, NULL, NULL);

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
	st = sk_test_store_open_test("deadlines");
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, cancel_each, st), 0);
	d.n = 0;
	ck_assert_int_eq(sk_store_deadlines_foreach(st, INT64_MAX, collect_deadline, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(state_of(st, 4), SK_ORDER_CANCELLED);
	ck_assert_uint_eq(state_of(st, 2), SK_ORDER_PAID);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

/* ------------------------------------------------------------------ events */

START_TEST(event_log_sequence)
{
	const char *dir = sk_test_store_dir("events");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_store_activity a = activity(1, 10, 2);
	struct sk_order_rec r[3] = {rec(1, 1, 1, 1), rec(2, 2, 1, 2), rec(3, 3, 1, 1)};
	struct events c = {0};

	ck_assert_int_eq(sk_store_activity_put(st, &a, 10), 0);
	sk_test_store_put(st, r, 3, NULL, NULL);
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
	bad.type = SK_STORE_EV_LIVE + 1;
	ck_assert_int_eq(sk_store_event_append(st, &bad), -EINVAL);
	ck_assert_str_eq(sk_store_event_name(SK_STORE_EV_LIVE), "live");

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
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 0);
	struct sk_order_rec more = rec(10, 10, 2, 1);
	struct sk_store_put_stats s;
	sk_test_store_put(st, &more, 1, NULL, &s);
	ck_assert_uint_eq(s.event_first, 10);
	ck_assert_uint_eq(s.event_last, 10);
	sk_test_store_verify(st);
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
	struct sk_store *st = sk_test_store_open_test("activities");
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
	sk_test_store_put(st, r, 30, NULL, NULL);
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(guards_refuse_oversell_and_overlimit)
{
	struct sk_store *st = sk_test_store_open_test("guards");
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
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

void
test_store_add_orders(Suite *s)
{
	TCase *tc;

	tc = tcase_create("orders");
	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, state_machine_table);
	tcase_add_test(tc, pay_cancel_race_one_winner);
	tcase_add_test(tc, deadlines_order_and_removal);
	tcase_add_test(tc, event_log_sequence);
	tcase_add_test(tc, activities_idempotent);
	tcase_add_test(tc, guards_refuse_oversell_and_overlimit);
	suite_add_tcase(s, tc);
}
