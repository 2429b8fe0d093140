/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the per-activity archive (storage/sk_store_archive.h) and
 * the sliced trim of the event log, each in its own store under a
 * temporary directory:
 *
 *   archive:  an ended, settled activity's orders leave the store (orders,
 *             by_user, index entries) and are found in the archive with
 *             every field; listings of the item come from the archive;
 *             payments of them are refused as unknown; the ledger (what
 *             reconcile and preheat read) is unchanged, other items too;
 *   refusals: not over, not settled (a confirmed order), not exported, a
 *             cart, archived already;
 *   crashes:  the store closed after the export (nothing archived, exported
 *             again), and after k purge slices (listings neither lose nor
 *             repeat an order; the purge goes on after the reopen);
 *   trim:     only events below the bound go, in slices of at most max.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_recover.h"
#include "sk_store.h"
#include "sk_store_archive.h"
#include "sk_store_payments.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_store.h"

#define MS   ((int64_t)1000000)
#define S    (1000 * MS)
#define ITEM 7
#define KEEP 8 /* another item, never archived */
#define N    40
/* After the end of the activity of ITEM plus the grace. */
#define LATER (SK_TEST_STORE_NOW_NS + 3600 * S)

static struct sk_order_rec
rec(uint64_t id, uint64_t user, uint32_t item, uint16_t qty)
{
	return (struct sk_order_rec){.id = id,
				     .user = user,
				     .price = 100 + id,
				     .time_ns = 1000 * MS + (int64_t)id,
				     .item = item,
				     .client = {.family = id % 2 ? SK_ADDR_V4 : SK_ADDR_V6,
						.bytes = {198, 18, 0, (uint8_t)id}},
				     .qty = qty,
				     .nlines = 1};
}

static void
activity(struct sk_store *st, uint32_t item, int64_t end_ns)
{
	struct sk_store_activity a = {.item = item,
				      .per_user_limit = 5,
				      .total = 1000,
				      .price = 100,
				      .start_ns = 1,
				      .end_ns = end_ns};
	snprintf(a.name, sizeof(a.name), "sale %u", item);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
}

/*
 * fill - N orders of ITEM (ids 1..N, two units each for even ids) and two of
 * KEEP; ITEM's orders settled by id: paid, cancelled, paid then refunded in
 * full, paid then refunded in part, unless @leave_one (order 1 stays
 * confirmed).
 */
static void
fill(struct sk_store *st, bool leave_one)
{
	struct sk_order_rec r[N + 2];
	char req[32];

	activity(st, ITEM, SK_TEST_STORE_NOW_NS + 60 * S);
	activity(st, KEEP, INT64_MAX);
	for (unsigned i = 0; i < N; i++)
		r[i] = rec(i + 1, 100 + i, ITEM, i % 2 ? 1 : 2);
	r[N] = rec(1000, 1, KEEP, 1);
	r[N + 1] = rec(1001, 2, KEEP, 1);
	sk_test_store_put(st, r, N + 2, NULL, NULL);
	for (uint64_t id = leave_one ? 2 : 1; id <= N; id++) {
		unsigned to = id % 4 == 1 ? SK_ORDER_CANCELLED : SK_ORDER_PAID;
		ck_assert_int_eq(sk_store_order_move(st, id, SK_ORDER_CONFIRMED, to, 5, NULL), 0);
		if (id % 4 == 3 || (id % 4 == 0)) {
			struct sk_store_pay_result res;
			snprintf(req, sizeof(req), "refund-%llu", (unsigned long long)id);
			struct sk_store_payment p = {.request = req,
						     .order = id,
						     .kind = SK_STORE_PAY_REFUND,
						     .units = id % 4 == 0 ? 1 : 0};
			ck_assert_int_eq(sk_store_payment_apply(st, &p, 6, &res), 0);
		}
	}
	ck_assert_int_eq(sk_store_order_move(st, 1000, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 5, NULL),
			 0);
}

struct seen {
	uint64_t ids[N + 8];
	unsigned n;
};

static int
seen_cb(const struct sk_store_line *lines, unsigned n, void *arg)
{
	struct seen *s = arg;

	ck_assert_uint_eq(n, 1);
	ck_assert_uint_lt(s->n, N + 8);
	s->ids[s->n++] = lines[0].rec.id;
	return 0;
}

/* listed - every order of ITEM in @state (0: every state, walked by user) through pages of 7. */
static unsigned
listed(struct sk_store *st, struct seen *s)
{
	static const uint8_t states[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED,
					 SK_ORDER_REFUNDED};
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(states); i++) {
		struct sk_store_order_query q = {.item = ITEM, .state = states[i], .limit = 7};
		bool more = true;
		while (more) {
			unsigned before = s->n;
			ck_assert_int_eq(sk_store_orders_find(st, &q, seen_cb, s, &more), 0);
			if (s->n > before)
				q.after = s->ids[s->n - 1];
		}
	}
	/* No id twice. */
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned j = i + 1; j < s->n; j++)
			ck_assert_msg(s->ids[i] != s->ids[j], "order %llu listed twice",
				      (unsigned long long)s->ids[i]);
	return s->n;
}

/* A digest of the holdings recovery rebuilds a dedup set from. */
struct hsum {
	uint64_t n, units, users, last;
};

static int
hsum_cb(const struct sk_store_holding *h, void *arg)
{
	struct hsum *s = arg;

	s->n++;
	s->units += h->units;
	s->users += h->user;
	s->last += h->last_order;
	return 0;
}

static struct hsum
holdings(struct sk_store *st, uint32_t item)
{
	struct hsum s = {0};

	ck_assert_int_eq(sk_store_holdings_foreach(st, item, hsum_cb, &s), 0);
	return s;
}

static void
line_eq(const struct sk_store_line *a, const struct sk_store_line *b)
{
	ck_assert_uint_eq(a->rec.id, b->rec.id);
	ck_assert_uint_eq(a->rec.user, b->rec.user);
	ck_assert_uint_eq(a->rec.price, b->rec.price);
	ck_assert_int_eq(a->rec.time_ns, b->rec.time_ns);
	ck_assert_uint_eq(a->rec.item, b->rec.item);
	ck_assert_uint_eq(a->rec.returned, b->rec.returned);
	ck_assert_uint_eq(a->rec.qty, b->rec.qty);
	ck_assert_uint_eq(a->rec.line, b->rec.line);
	ck_assert_uint_eq(a->rec.nlines, b->rec.nlines);
	ck_assert_mem_eq(&a->rec.client, &b->rec.client, sizeof(a->rec.client));
	ck_assert_uint_eq(a->state, b->state);
	ck_assert_uint_eq(a->refunded, b->refunded);
	ck_assert_int_eq(a->deadline_ns, b->deadline_ns);
	ck_assert_int_eq(a->stored_ns, b->stored_ns);
	ck_assert_int_eq(a->updated_ns, b->updated_ns);
}

static int
last_event(const struct sk_store_event *ev, void *arg)
{
	*(struct sk_store_event *)arg = *ev;
	return 0;
}

static int
first_event(const struct sk_store_event *ev, void *arg)
{
	*(struct sk_store_event *)arg = *ev;
	return 1;
}

/*
 * cart - the lines of order @id of @user over @items (distinct), qty 1 each.
 */
static void
cart(struct sk_order_rec *out, uint64_t id, uint64_t user, const uint32_t *items, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		out[j] = rec(id, user, items[j], 1);
		out[j].line = (uint8_t)j;
		out[j].nlines = (uint8_t)n;
	}
}

/* archive - export and mark ITEM; the snapshot's counts checked. */
static void
archive(struct sk_store *st)
{
	struct sk_store_archive_snap snap;
	char why[128];

	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, why, sizeof(why)), 0);
	ck_assert_uint_eq(snap.orders, N);
	ck_assert_uint_eq(snap.first_id, 1);
	ck_assert_uint_eq(snap.last_id, N);
	ck_assert_int_eq(sk_store_archive_mark(st, &snap, LATER), 0);
}

START_TEST(archive_moves_every_order)
{
	struct sk_store *st = sk_test_store_open_test("a");
	struct sk_store_line before[N], l[2];
	struct sk_store_ledger led0, led1, keep0, keep1;
	struct sk_store_info i0, i1;
	struct seen s;
	unsigned n;
	uint64_t purged, total = 0;
	int rc;

	fill(st, false);
	for (uint64_t id = 1; id <= N; id++)
		ck_assert_int_eq(sk_store_order_get(st, id, &before[id - 1], 1, &n), 0);
	ck_assert_int_eq(sk_store_activity_get(st, ITEM, NULL, &led0), 0);
	ck_assert_int_eq(sk_store_activity_get(st, KEEP, NULL, &keep0), 0);
	ck_assert_int_eq(sk_store_info(st, &i0), 0);
	ck_assert_uint_eq(listed(st, &s), N);
	struct hsum keep_h0 = holdings(st, KEEP), item_h0 = holdings(st, ITEM);
	ck_assert_uint_gt(item_h0.units, 0); /* the paid orders hold units */

	archive(st);
	/* Listed from the archive at once, each order once. */
	ck_assert_uint_eq(listed(st, &s), N);
	while ((rc = sk_store_archive_purge(st, ITEM, 16, &purged)) == 1)
		total += purged;
	ck_assert_int_eq(rc, 0);
	total += purged;
	ck_assert_uint_eq(total, N);

	struct sk_store_archive_info ai;
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &ai), 0);
	ck_assert_uint_eq(ai.state, SK_STORE_ARCHIVE_DONE);
	ck_assert_uint_eq(ai.orders, N);
	ck_assert_int_eq(sk_store_archive_get(st, KEEP, &ai), -ENOENT);

	for (uint64_t id = 1; id <= N; id++) {
		ck_assert_int_eq(sk_store_order_get(st, id, l, 2, &n), -ENOENT);
		ck_assert_int_eq(sk_store_archive_order_get(st, id, l, 2, &n), 0);
		ck_assert_uint_eq(n, 1);
		line_eq(&l[0], &before[id - 1]);
	}
	ck_assert_int_eq(sk_store_archive_order_get(st, N + 1, l, 2, &n), -ENOENT);
	ck_assert_int_eq(sk_store_archive_order_get(st, 1000, l, 2, &n), -ENOENT);
	ck_assert_uint_eq(listed(st, &s), N);
	struct sk_store_order_query q = {.item = ITEM, .user = 103, .limit = 5};
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(sk_store_orders_find(st, &q, seen_cb, &s, NULL), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.ids[0], 4);

	/* The entries are freed; the ledgers and the other item are as they were. */
	ck_assert_int_eq(sk_store_info(st, &i1), 0);
	ck_assert_uint_eq(i1.order_lines, i0.order_lines - N);
	ck_assert_uint_lt(i1.holdings_entries, i0.holdings_entries);
	ck_assert_uint_eq(i1.holdings_entries, 2); /* orders 1000 and 1001 */
	ck_assert_int_eq(sk_store_activity_get(st, ITEM, NULL, &led1), 0);
	ck_assert_mem_eq(&led0, &led1, sizeof(led0));
	ck_assert_int_eq(sk_store_activity_get(st, KEEP, NULL, &keep1), 0);
	ck_assert_mem_eq(&keep0, &keep1, sizeof(keep0));
	ck_assert_int_eq(sk_store_order_get(st, 1001, l, 2, &n), 0);
	sk_test_store_verify(st);
	/* Recovery: the other item's holdings as before; the archived one, a
	 * closed activity the rebuild does not load, holds none. */
	struct hsum keep_h1 = holdings(st, KEEP), item_h1 = holdings(st, ITEM);
	ck_assert_mem_eq(&keep_h0, &keep_h1, sizeof(keep_h0));
	ck_assert_uint_eq(item_h1.n, 0);

	/* Closed, announced, refused a second time, payments unknown. */
	struct sk_store_activity a;
	ck_assert_int_eq(sk_store_activity_get(st, ITEM, &a, NULL), 0);
	ck_assert_int_ne(a.closed_ns, 0);
	struct sk_store_archive_snap snap;
	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, NULL, 0), -EALREADY);
	struct sk_store_pay_result res;
	struct sk_store_payment p = {
		.request = "late-refund", .order = 2, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_store_payment_apply(st, &p, 7, &res), -ENOENT);
	struct sk_store_event last = {0};
	ck_assert_int_eq(sk_store_events_foreach(st, 1, last_event, &last), 0);
	ck_assert_uint_eq(last.type, SK_STORE_EV_ACTIVITY_ARCHIVED);
	ck_assert_str_eq(sk_store_event_name(last.type), "activity_archived");
	ck_assert_uint_eq(last.item, ITEM);
	ck_assert_uint_eq(last.units, N);
	sk_store_close(st);

	/* Reopened: the same. */
	st = sk_test_store_open_test("a");
	ck_assert_int_eq(sk_store_archive_order_get(st, 17, l, 2, &n), 0);
	line_eq(&l[0], &before[16]);
	ck_assert_uint_eq(listed(st, &s), N);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(archive_refusals)
{
	struct sk_store *st = sk_test_store_open_test("r");
	struct sk_store_archive_snap snap;
	struct sk_store_line l;
	struct sk_order_rec c[2];
	char why[128];
	unsigned n;

	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, why, sizeof(why)),
			 -ENOENT);
	fill(st, true);
	/* Not over: before its end plus the grace. */
	ck_assert_int_eq(sk_store_archive_export(st, ITEM, SK_TEST_STORE_NOW_NS + 62 * S, 0, &snap,
						 why, sizeof(why)),
			 -EINPROGRESS);
	ck_assert_ptr_nonnull(strstr(why, "not over"));
	ck_assert_int_eq(sk_store_archive_export(st, KEEP, LATER, 0, &snap, why, sizeof(why)),
			 -EINPROGRESS);
	/* Not settled: order 1 is confirmed. */
	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, why, sizeof(why)),
			 -EBUSY);
	ck_assert_ptr_nonnull(strstr(why, "not settled"));
	ck_assert_int_eq(sk_store_order_move(st, 1, SK_ORDER_CONFIRMED, SK_ORDER_PAID, 5, NULL), 0);
	/* Not exported: the exporter is behind the item's last event. */
	struct sk_store_event last = {0};
	ck_assert_int_eq(sk_store_events_foreach(st, 1, last_event, &last), 0);
	ck_assert_int_eq(
		sk_store_archive_export(st, ITEM, LATER, last.seq, &snap, why, sizeof(why)),
		-EBUSY);
	ck_assert_ptr_nonnull(strstr(why, "not exported"));
	/* A changed order between export and mark: export again. */
	ck_assert_int_eq(
		sk_store_archive_export(st, ITEM, LATER, last.seq + 1, &snap, why, sizeof(why)), 0);
	struct sk_store_pay_result res;
	struct sk_store_payment p = {.request = "r-2", .order = 2, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_store_payment_apply(st, &p, 6, &res), 0);
	ck_assert_int_eq(sk_store_archive_mark(st, &snap, LATER), -EAGAIN);
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &(struct sk_store_archive_info){0}),
			 -ENOENT);
	ck_assert_int_eq(sk_store_order_get(st, 2, &l, 1, &n), 0);
	ck_assert_uint_eq(l.state, SK_ORDER_REFUNDED);
	/* A cart of ITEM and KEEP. */
	cart(c, 77, 9, (const uint32_t[]){ITEM, KEEP}, 2);
	sk_test_store_put(st, c, 2, NULL, NULL);
	ck_assert_int_eq(
		sk_store_order_move(st, 77, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED, 5, NULL), 0);
	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, why, sizeof(why)),
			 -EBUSY);
	ck_assert_ptr_nonnull(strstr(why, "cart"));
	ck_assert_int_eq(sk_store_archive_purge(st, ITEM, 10, NULL), -ENOENT);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(archive_survives_crashes)
{
	struct sk_store *st = sk_test_store_open_test("c");
	struct sk_store_archive_snap snap;
	struct sk_store_line l;
	struct seen s;
	uint64_t purged;
	unsigned n;

	fill(st, false);
	/* Crash after the export: a file without its record is no archive. */
	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, NULL, 0), 0);
	sk_store_close(st);
	st = sk_test_store_open_test("c");
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &(struct sk_store_archive_info){0}),
			 -ENOENT);
	ck_assert_int_eq(sk_store_archive_order_get(st, 3, &l, 1, &n), -ENOENT);
	ck_assert_uint_eq(listed(st, &s), N);

	/* Crash after k = 2 slices of 5. */
	archive(st);
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(sk_store_archive_purge(st, ITEM, 5, &purged), 1);
		ck_assert_uint_eq(purged, 5);
	}
	sk_store_close(st);
	st = sk_test_store_open_test("c");
	sk_test_store_verify(st);
	ck_assert_uint_eq(listed(st, &s), N); /* none lost, none twice */
	ck_assert_int_eq(sk_store_order_get(st, 5, &l, 1, &n), -ENOENT);
	ck_assert_int_eq(sk_store_order_get(st, N, &l, 1, &n), 0); /* not purged yet */
	ck_assert_int_eq(sk_store_archive_order_get(st, 5, &l, 1, &n), 0);
	struct sk_store_archive_info ai;
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &ai), 0);
	ck_assert_uint_eq(ai.state, SK_STORE_ARCHIVE_PURGING);
	/* The purge goes on where it stopped. */
	ck_assert_int_eq(sk_store_archive_purge(st, ITEM, 1000, &purged), 0);
	ck_assert_uint_eq(purged, N - 10);
	ck_assert_int_eq(sk_store_archive_purge(st, ITEM, 1000, &purged), 0);
	ck_assert_uint_eq(purged, 0);
	ck_assert_int_eq(sk_store_order_get(st, N, &l, 1, &n), -ENOENT);
	ck_assert_uint_eq(listed(st, &s), N);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

/*
 * An archive that purges the highest order of an (epoch, lcore) group
 * leaves its mark: after a restart a poll of that order must read
 * "stored" (settled), not "never placed, buy again" (sk_recover_marks()).
 */
START_TEST(archive_keeps_marks)
{
	struct sk_store *st = sk_test_store_open_test("m");
	const uint32_t epoch = SK_ORDER_EPOCH_BASE + 1000;
	struct sk_order_rec r[] = {
		rec(sk_order_id_make(epoch, 0, 0, 1), 1, KEEP, 1),
		rec(sk_order_id_make(epoch, 0, 0, 2), 2, KEEP, 1),
		rec(sk_order_id_make(epoch, 0, 0, 3), 3, ITEM, 1),
		rec(sk_order_id_make(epoch, 0, 0, 4), 4, ITEM, 1), /* lcore 0's highest */
		rec(sk_order_id_make(epoch, 0, 1, 5), 5, ITEM, 1), /* lcore 1's only */
	};
	struct sk_store_archive_snap snap;
	uint64_t marks[4], purged;
	uint32_t n;
	bool more;

	activity(st, ITEM, SK_TEST_STORE_NOW_NS + 60 * S);
	activity(st, KEEP, INT64_MAX);
	sk_test_store_put(st, r, SK_ARRAY_SIZE(r), NULL, NULL);
	for (size_t i = 2; i < SK_ARRAY_SIZE(r); i++)
		ck_assert_int_eq(sk_store_order_move(st, r[i].id, SK_ORDER_CONFIRMED, SK_ORDER_PAID,
						     5, NULL),
				 0);
	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(marks[0], r[3].id);
	ck_assert_uint_eq(marks[1], r[4].id);

	ck_assert_int_eq(sk_store_archive_export(st, ITEM, LATER, 0, &snap, NULL, 0), 0);
	ck_assert_int_eq(sk_store_archive_mark(st, &snap, LATER), 0);
	ck_assert_int_eq(sk_store_archive_purge(st, ITEM, 1000, &purged), 0);
	ck_assert_uint_eq(purged, 3);
	sk_store_close(st);
	st = sk_test_store_open_test("m");
	more = true;
	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 2); /* the same marks as before the archive */
	ck_assert(!more);
	ck_assert_uint_eq(marks[0], r[3].id);
	ck_assert_uint_eq(marks[1], r[4].id);
	/* The newest group first when they do not all fit. */
	ck_assert_int_eq(sk_recover_marks(st, 0, marks, 1, &n, &more), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(more);
	ck_assert_uint_eq(marks[0], r[4].id);
	ck_assert_int_eq(sk_recover_marks(st, 3, marks, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 0); /* another member's: none */
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

static int
count_event(const struct sk_store_event *ev, void *arg)
{
	uint64_t *c = arg;

	(void)ev;
	(*c)++;
	return 0;
}

START_TEST(trim_in_slices)
{
	struct sk_store *st = sk_test_store_open_test("t");
	uint64_t removed, count = 0;

	fill(st, false); /* some 70 events */
	ck_assert_int_eq(sk_store_events_foreach(st, 1, count_event, &count), 0);
	ck_assert_uint_gt(count, 30);
	ck_assert_int_eq(sk_store_events_trim_max(st, 20, 0, &removed), -EINVAL);
	ck_assert_int_eq(sk_store_events_trim_max(st, 20, 8, &removed), 0);
	ck_assert_uint_eq(removed, 8);
	ck_assert_int_eq(sk_store_events_trim_max(st, 20, 8, &removed), 0);
	ck_assert_uint_eq(removed, 8);
	ck_assert_int_eq(sk_store_events_trim_max(st, 20, 8, &removed), 0);
	ck_assert_uint_eq(removed, 3); /* 1..19 */
	ck_assert_int_eq(sk_store_events_trim_max(st, 20, 8, &removed), 0);
	ck_assert_uint_eq(removed, 0);
	uint64_t left = 0;
	struct sk_store_event first = {0};
	ck_assert_int_eq(sk_store_events_foreach(st, 1, count_event, &left), 0);
	ck_assert_uint_eq(left, count - 19);
	ck_assert_int_eq(sk_store_events_foreach(st, 1, first_event, &first), 1);
	ck_assert_uint_eq(first.seq, 20);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

static Suite *
archive_suite(void)
{
	Suite *s = suite_create("store-archive");
	TCase *tc = tcase_create("archive");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, archive_moves_every_order);
	tcase_add_test(tc, archive_refusals);
	tcase_add_test(tc, archive_survives_crashes);
	tcase_add_test(tc, archive_keeps_marks);
	tcase_add_test(tc, trim_in_slices);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(archive_suite)
