/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the cluster member's rule (sk_member_decide(), pure): one
 * row per case, what a tick measured and a view of the pool in, the step
 * out; and which steps need the pool read first.
 */
#include <check.h>
#include <stdio.h>

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

START_TEST(table)
{
	const struct row *r = &rows[_i];

	ck_assert_msg(sk_member_decide(&r->t, &r->v) == r->want, "%s: got %d, want %d", r->name,
		      sk_member_decide(&r->t, &r->v), r->want);
}
END_TEST

START_TEST(reads)
{
	ck_assert(!sk_member_act_reads(SK_MEMBER_NOTHING));
	ck_assert(!sk_member_act_reads(SK_MEMBER_GIVE_ALL));  /* needs no pool */
	ck_assert(!sk_member_act_reads(SK_MEMBER_GIVE_HALF)); /* answered on a read made anyway */
	ck_assert(sk_member_act_reads(SK_MEMBER_LEASE));
	ck_assert(sk_member_act_reads(SK_MEMBER_REPORT_DRY));
	ck_assert(sk_member_act_reads(SK_MEMBER_REPORT_UNITS));
	ck_assert(sk_member_act_reads(SK_MEMBER_REPORT_OVER));
}
END_TEST

static Suite *
decide_suite(void)
{
	Suite *s = suite_create("member-decide");
	TCase *tc = tcase_create("rule");

	tcase_add_loop_test(tc, table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, reads);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(decide_suite)
