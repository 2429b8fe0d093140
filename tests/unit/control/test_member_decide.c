/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cluster member's rule (sk_member_decide(), pure): one
 * row per case, what a tick measured and a view of the pool in, the
 * decision out. Three tables: the step on a fresh view; whether the pool is
 * read first (on the last view); and the rest of the decision (sizes,
 * sync, the claim, the demand, when the slot may go).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sk_member_impl.h"
#include "sk_test.h"

#define NOW_MS 1764000000000LL

struct row {
	const char *name;
	struct sk_member_tick t;
	struct sk_cpool_view v;
	enum sk_member_act want;
};

/* A member selling, below low water. */
#define SELLING .selling = true, .low_water = true, .wall_ms = NOW_MS

static const struct row rows[] = {
	{"nothing to do: above low water",
	 {.unsold = 9, .selling = true, .ask = true},
	 {.free = 50, .epoch = 1},
	 SK_MEMBER_NOTHING},
	{"lease: low water, the pool has units",
	 {SELLING, .dry_due = true, .ask = true, .unsold = 0},
	 {.free = 50},
	 SK_MEMBER_LEASE},
	{"no lease: no reason (rate 0, not the first)",
	 {SELLING, .dry_due = true},
	 {.free = 50},
	 SK_MEMBER_NOTHING},
	{"no lease while stopping: nothing here, pool has units",
	 {SELLING, .dry_due = true, .ask = true, .stopping = true},
	 {.free = 50},
	 SK_MEMBER_NOTHING},
	{"demand asks an empty pool",
	 {SELLING, .dry_due = true, .ask = true, .demand = true},
	 {.free = 0},
	 SK_MEMBER_LEASE},
	{"demand, not due: dry report not due either",
	 {SELLING, .ask = true, .demand = true},
	 {.free = 0},
	 SK_MEMBER_NOTHING},
	{"empty here and in the pool: dry",
	 {SELLING, .dry_due = true},
	 {.free = 0},
	 SK_MEMBER_REPORT_DRY},
	{"empty, already sold out: nothing",
	 {SELLING, .dry_due = true},
	 {.free = 0, .sold_out = true},
	 SK_MEMBER_NOTHING},
	{"units here while sold out: reopen",
	 {.unsold = 3, .selling = true},
	 {.free = 0, .sold_out = true},
	 SK_MEMBER_REPORT_UNITS},
	{"idle: every unit back",
	 {SELLING, .dry_due = true, .ask = true, .unsold = 5, .idle = true},
	 {.free = 0, .sold_out = true},
	 SK_MEMBER_GIVE_ALL},
	{"not selling (paused, over): every unit back",
	 {.unsold = 5, .over = true},
	 {.free = 9},
	 SK_MEMBER_GIVE_ALL},
	{"stopping: every unit back",
	 {SELLING, .dry_due = true, .ask = true, .unsold = 1, .stopping = true},
	 {.free = 9},
	 SK_MEMBER_GIVE_ALL},
	{"a recent want, quiet here: half back",
	 {.unsold = 8, .selling = true, .quiet = true, .wall_ms = NOW_MS},
	 {.free = 0, .want_ms = NOW_MS - 1999},
	 SK_MEMBER_GIVE_HALF},
	{"a want too old: kept",
	 {.unsold = 8, .selling = true, .quiet = true, .wall_ms = NOW_MS},
	 {.free = 0, .want_ms = NOW_MS - 2000},
	 SK_MEMBER_NOTHING},
	{"a want, but selling here: kept",
	 {.unsold = 8, .selling = true, .quiet = false, .wall_ms = NOW_MS},
	 {.free = 0, .want_ms = NOW_MS - 10},
	 SK_MEMBER_NOTHING},
	{"a want, one unit: kept",
	 {.unsold = 1, .selling = true, .quiet = true, .wall_ms = NOW_MS},
	 {.free = 0, .want_ms = NOW_MS - 10},
	 SK_MEMBER_NOTHING},
	{"over, all sold, holds units: its dry report",
	 {.over = true, .held = 7, .dry_epoch = 0},
	 {.free = 20, .epoch = 3},
	 SK_MEMBER_REPORT_OVER},
	{"over, reported at this epoch: nothing",
	 {.over = true, .held = 7, .dry_epoch = 3},
	 {.free = 20, .epoch = 3},
	 SK_MEMBER_NOTHING},
	{"over, reported before a fence: again",
	 {.over = true, .held = 7, .dry_epoch = 2},
	 {.free = 20, .epoch = 3},
	 SK_MEMBER_REPORT_OVER},
	{"over, holds nothing: nothing",
	 {.over = true, .held = 0},
	 {.free = 20, .epoch = 3},
	 SK_MEMBER_NOTHING},
};

/* The step on a fresh view, nothing pending, the number claimed. */
START_TEST(table)
{
	const struct row *r = &rows[_i];
	struct sk_member_tick t = r->t;

	t.claimed = true;
	struct sk_member_decision d = sk_member_decide(&t, &r->v, true);
	ck_assert_msg(!d.read, "%s: a fresh view is not read again", r->name);
	ck_assert_msg(d.act == r->want, "%s: got %d, want %d", r->name, d.act, r->want);
}
END_TEST

/* Whether the pool is read first: the last view, @age old (-1: never). */
struct read_row {
	const char *name;
	struct sk_member_tick t;
	struct sk_cpool_view v;
	bool read;
	enum sk_member_act act; /* when not read: the step (only a give-back) */
};

#define SEC  INT64_C(1000000000)
#define SEEN .view_age_ns = SEC / 10, .claimed = true

static const struct read_row read_rows[] = {
	{"never read: read",
	 {.view_age_ns = -1, .unsold = 9, .selling = true},
	 {0},
	 true,
	 SK_MEMBER_NOTHING},
	{"dirty (an own op, a message): read",
	 {SEEN, .dirty = true, .unsold = 9, .selling = true},
	 {.free = 9},
	 true,
	 SK_MEMBER_NOTHING},
	{"fenced: read",
	 {SEEN, .unsold = 9, .selling = true},
	 {.fenced = true},
	 true,
	 SK_MEMBER_NOTHING},
	{"a period old: read",
	 {.view_age_ns = SEC, .unsold = 9, .selling = true},
	 {.free = 9},
	 true,
	 SK_MEMBER_NOTHING},
	{"just under a period, above low water: not read",
	 {.view_age_ns = SEC - 1, .unsold = 9, .selling = true, .ask = true},
	 {.free = 9},
	 false,
	 SK_MEMBER_NOTHING},
	{"over, nothing held: 10 s period",
	 {.view_age_ns = 9 * SEC, .over = true},
	 {.free = 9, .epoch = 1},
	 false,
	 SK_MEMBER_NOTHING},
	{"over, nothing held, 10 s old: read",
	 {.view_age_ns = 10 * SEC, .over = true},
	 {.free = 9, .epoch = 1},
	 true,
	 SK_MEMBER_NOTHING},
	{"over, an op pending: the 1 s period",
	 {.view_age_ns = 2 * SEC, .over = true, .pending = true},
	 {.free = 9, .epoch = 1},
	 true,
	 SK_MEMBER_NOTHING},
	{"over, holds units (reported): the 1 s period",
	 {.view_age_ns = 2 * SEC, .over = true, .held = 3, .dry_epoch = 1},
	 {.free = 9, .epoch = 1},
	 true,
	 SK_MEMBER_NOTHING},
	{"low water with a reason, the last view had units: read to lease",
	 {SEEN, SELLING, .ask = true, .unsold = 0},
	 {.free = 50},
	 true,
	 SK_MEMBER_NOTHING},
	{"low water, no reason: not read",
	 {SEEN, SELLING, .unsold = 0, .dry_due = false},
	 {.free = 50},
	 false,
	 SK_MEMBER_NOTHING},
	{"nothing here, none in the pool, dry due: read to report dry",
	 {SEEN, SELLING, .dry_due = true},
	 {.free = 0},
	 true,
	 SK_MEMBER_NOTHING},
	{"nothing here, dry reported a moment ago: not read",
	 {SEEN, SELLING, .dry_due = false},
	 {.free = 0},
	 false,
	 SK_MEMBER_NOTHING},
	{"units here, the last view sold out: read to reopen",
	 {SEEN, .unsold = 4, .selling = true},
	 {.sold_out = true},
	 true,
	 SK_MEMBER_NOTHING},
	{"over, holds units, not reported at this epoch: read to report",
	 {SEEN, .over = true, .held = 2, .dry_epoch = 0},
	 {.free = 9, .epoch = 4},
	 true,
	 SK_MEMBER_NOTHING},
	{"a want, quiet here: not read for it (answered on a later read)",
	 {SEEN, .unsold = 8, .selling = true, .quiet = true, .wall_ms = NOW_MS},
	 {.free = 0, .want_ms = NOW_MS - 10},
	 false,
	 SK_MEMBER_NOTHING},
	{"idle with units: given back without a read",
	 {SEEN, .unsold = 5, .selling = true, .idle = true},
	 {.free = 9},
	 false,
	 SK_MEMBER_GIVE_ALL},
	{"stopping with units: given back without a read",
	 {SEEN, .unsold = 5, .selling = true, .stopping = true},
	 {.free = 9},
	 false,
	 SK_MEMBER_GIVE_ALL},
	{"stopping, an op pending: nothing (resent first)",
	 {SEEN, .unsold = 5, .selling = true, .stopping = true, .pending = true},
	 {.free = 9},
	 false,
	 SK_MEMBER_NOTHING},
};

START_TEST(reads)
{
	const struct read_row *r = &read_rows[_i];
	struct sk_member_decision d = sk_member_decide(&r->t, &r->v, false);

	ck_assert_msg(d.read == r->read, "%s: read %d, want %d", r->name, d.read, r->read);
	if (!d.read)
		ck_assert_msg(d.act == r->act, "%s: act %d, want %d", r->name, d.act, r->act);
	ck_assert_msg(d.done == SK_MEMBER_KEEP, "%s: no slot goes on a view not read", r->name);
}
END_TEST

/* The rest of a decision on a fresh view. */
struct more_row {
	const char *name;
	struct sk_member_tick t;
	struct sk_cpool_view v;
	struct sk_member_decision want; /* .why compared as a string when set */
};

static const struct more_row more_rows[] = {
	{"give all: the units and why",
	 {.unsold = 7, .selling = true, .idle = true},
	 {.free = 1},
	 {.spend_demand = true, .act = SK_MEMBER_GIVE_ALL, .units = 7, .why = "idle"}},
	{"give all when not selling",
	 {.unsold = 7},
	 {.free = 1},
	 {.spend_demand = true, .act = SK_MEMBER_GIVE_ALL, .units = 7, .why = "not selling here"}},
	{"give half rounds down",
	 {.unsold = 7, .selling = true, .quiet = true, .wall_ms = NOW_MS},
	 {.want_ms = NOW_MS - 5},
	 {.spend_demand = true,
	  .act = SK_MEMBER_GIVE_HALF,
	  .units = 3,
	  .why = "another member is dry"}},
	{"lease: 2 s of the rate + 1",
	 {SELLING, .claimed = true, .ask = true, .rate = 10, .nmembers = 2},
	 {.free = 1000},
	 {.spend_demand = true, .act = SK_MEMBER_LEASE, .units = 21}},
	{"lease: at most free / (2 * members)",
	 {SELLING, .claimed = true, .ask = true, .rate = 1000, .nmembers = 2},
	 {.free = 100},
	 {.spend_demand = true, .act = SK_MEMBER_LEASE, .units = 25}},
	{"lease: the first (no rate) takes the share",
	 {SELLING, .claimed = true, .ask = true, .nmembers = 4},
	 {.free = 80},
	 {.spend_demand = true, .act = SK_MEMBER_LEASE, .units = 10}},
	{"lease: at least 1 (demand on an empty pool)",
	 {SELLING, .claimed = true, .ask = true, .demand = true, .dry_due = true, .nmembers = 3},
	 {.free = 0},
	 {.spend_demand = true, .act = SK_MEMBER_LEASE, .units = 1}},
	{"no lease before the number is claimed",
	 {SELLING, .claimed = false, .ask = true, .nmembers = 1},
	 {.free = 80},
	 {.spend_demand = true, .act = SK_MEMBER_NOTHING}},
	{"reopen: the units here",
	 {.unsold = 4, .selling = true},
	 {.sold_out = true},
	 {.spend_demand = true, .act = SK_MEMBER_REPORT_UNITS, .units = 4}},
	{"fenced, nothing pending: sync with the word",
	 {.unsold = 4, .selling = true, .held = 4},
	 {.fenced = true, .epoch = 2},
	 {.sync = true, .sync_word = true}},
	{"fenced, a lease pending: sync without the word",
	 {.unsold = 4, .selling = true, .pending = true},
	 {.fenced = true, .epoch = 2},
	 {.sync = true}},
	{"fenced, a give-back refused as FENCED: the word",
	 {.unsold = 4, .selling = true, .pending = true, .pending_fenced = true},
	 {.fenced = true, .epoch = 2},
	 {.sync = true, .sync_word = true}},
	{"an op pending: nothing, the demand kept",
	 {SELLING, .claimed = true, .ask = true, .demand = true, .pending = true},
	 {.free = 50},
	 {0}},
	{"over, all sold, nothing held: done",
	 {.over = true},
	 {.free = 3, .epoch = 1},
	 {.spend_demand = true, .done = SK_MEMBER_DONE}},
	{"over, holds units, reported at this epoch: done",
	 {.over = true, .held = 3, .dry_epoch = 1},
	 {.free = 3, .epoch = 1},
	 {.spend_demand = true, .done = SK_MEMBER_DONE}},
	{"over, holds units, not reported: done once reported",
	 {.over = true, .held = 3},
	 {.free = 3, .epoch = 1},
	 {.spend_demand = true, .act = SK_MEMBER_REPORT_OVER, .done = SK_MEMBER_DONE_IF_REPORTED}},
	{"over, dry due on an empty pool: its dry report, done once taken",
	 {.over = true, .held = 3, .dry_due = true},
	 {.free = 0, .epoch = 1},
	 {.spend_demand = true, .act = SK_MEMBER_REPORT_DRY, .done = SK_MEMBER_DONE_IF_REPORTED}},
	{"over, units the store still counts unsold: kept",
	 {.over = true, .unsold_durable = 1},
	 {.free = 3, .epoch = 1},
	 {.spend_demand = true}},
	{"over, stopping: kept (the slot goes with the member)",
	 {.over = true, .stopping = true},
	 {.free = 3, .epoch = 1},
	 {.spend_demand = true}},
	{"over, fenced: kept",
	 {.over = true},
	 {.fenced = true, .epoch = 1},
	 {.sync = true, .sync_word = true}},
};

START_TEST(more)
{
	const struct more_row *r = &more_rows[_i];
	struct sk_member_decision d = sk_member_decide(&r->t, &r->v, true);
	const struct sk_member_decision *w = &r->want;

	ck_assert_msg(!d.read, "%s: read", r->name);
	ck_assert_msg(d.act == w->act, "%s: act %d, want %d", r->name, d.act, w->act);
	ck_assert_msg(d.units == w->units, "%s: units %llu, want %llu", r->name,
		      (unsigned long long)d.units, (unsigned long long)w->units);
	ck_assert_msg(d.sync == w->sync && d.sync_word == w->sync_word,
		      "%s: sync %d/%d, want %d/%d", r->name, d.sync, d.sync_word, w->sync,
		      w->sync_word);
	ck_assert_msg(d.spend_demand == w->spend_demand, "%s: spend_demand %d", r->name,
		      d.spend_demand);
	ck_assert_msg(d.done == w->done, "%s: done %d, want %d", r->name, d.done, w->done);
	if (w->why != NULL)
		ck_assert_msg(d.why != NULL && strcmp(d.why, w->why) == 0, "%s: why %s", r->name,
			      d.why);
}
END_TEST

static Suite *
decide_suite(void)
{
	Suite *s = suite_create("member-decide");
	TCase *tc = tcase_create("rule");

	tcase_add_loop_test(tc, table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_loop_test(tc, reads, 0, (int)(sizeof(read_rows) / sizeof(read_rows[0])));
	tcase_add_loop_test(tc, more, 0, (int)(sizeof(more_rows) / sizeof(more_rows[0])));
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(decide_suite)
