/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Retention through the control plane (sk_control_archive(),
 * sk_control_retention(), POST /v1/activities/{id}/archive): an ended,
 * settled sale archived, its orders purged in slices from the main loop's
 * calls while reconcile's figures stay as they were; refusals named; a
 * restart in the middle of the purge picks it up; the order still found
 * by GET /v1/orders/{id} with "archived": true; the event log trimmed only
 * below the exporter's cursor, or to a bounded tail without one.
 */
#include "test_control.h"

#include "sk_store_archive.h"

#define ITEM  5
#define SOLD  6
#define LATER (T0 + 3600 * S)

/* sale - activity ITEM of SOLD units ending at T0 + 10 s, sold out and drained. */
static void
sale(uint64_t ids[SOLD])
{
	struct sk_store_activity a = activity(ITEM, SOLD);
	struct sk_item *it;

	a.per_user_limit = 1;
	a.end_ns = T0 + 10 * S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, ITEM);
	ck_assert_ptr_nonnull(it);
	for (unsigned u = 0; u < SOLD; u++)
		ids[u] = buy(u % NLCORES, u + 1, it);
	ck_assert_int_eq(drain_now(NULL), SOLD);
}

/* retention_until_idle - sk_control_retention() until it has nothing to do (bounded). */
static unsigned
retention_until_idle(void)
{
	unsigned calls = 0;
	int rc;

	while ((rc = sk_control_retention(F.ctl, LATER)) == 1) {
		ck_assert_uint_lt(++calls, 1000);
	}
	ck_assert_int_eq(rc, 0);
	return calls;
}

START_TEST(archive_settled_sale)
{
	struct sk_store *st;
	struct sk_store_activity_ledger_pair {
		struct sk_store_ledger before, after;
	} led;
	struct sk_store_archive_info ai;
	uint64_t ids[SOLD];
	char why[256];
	json_t *j;

	F.conf.archive_slice = 2;
	ctl_restart();
	sale(ids);
	st = sk_control_store(F.ctl);

	/* Not over yet, then not settled: named. */
	ck_assert_int_eq(sk_control_archive(F.ctl, ITEM, T0 + 5 * S, NULL, why, sizeof(why)),
			 -EINPROGRESS);
	error_has(handle_body("POST", "/v1/activities/5/archive", NULL, 409), "not settled");
	for (unsigned u = 0; u < SOLD; u++)
		ck_assert_int_eq(sk_control_pay(F.ctl, ids[u], T0 + S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_int_eq(sk_store_activity_get(st, ITEM, NULL, &led.before), 0);

	/* The admin route archives (the real clock is long past T0 + 10 s). */
	j = handle_body("POST", "/v1/activities/5/archive", NULL, 200);
	ck_assert(json_is_true(json_object_get(j, "archived")));
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(j, "archive"), "orders")), SOLD);
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities/5/archive", NULL, 409), "already");
	error_has(handle_body("POST", "/v1/activities/99/archive", NULL, 404), "unknown");

	/* One slice of 2 per call, then a restart in the middle. */
	ck_assert_int_eq(sk_control_retention(F.ctl, LATER), 1);
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &ai), 0);
	ck_assert_uint_eq(ai.state, SK_STORE_ARCHIVE_PURGING);
	ctl_restart();
	st = sk_control_store(F.ctl);
	ck_assert_uint_ge(retention_until_idle(), 2);
	ck_assert_int_eq(sk_store_archive_get(st, ITEM, &ai), 0);
	ck_assert_uint_eq(ai.state, SK_STORE_ARCHIVE_DONE);
	ck_assert_uint_eq(stats().orders_archived, SOLD - 2); /* this run's share */

	/* Gone from the store, found in the archive, the ledger kept. */
	for (unsigned u = 0; u < SOLD; u++)
		ck_assert_uint_eq(store_state(ids[u]), SK_ORDER_NONE);
	char path[64];
	snprintf(path, sizeof(path), "/v1/orders/%llu", (unsigned long long)ids[3]);
	j = handle_body("GET", path, NULL, 200);
	ck_assert(json_is_true(json_object_get(j, "archived")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
	json_decref(j);
	j = handle_body("GET", "/v1/orders?item=5&state=paid", NULL, 200);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "count")), SOLD);
	json_decref(j);
	j = handle_body("GET", "/v1/activities/5", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "archive"), "state")),
			 "done");
	json_decref(j);
	ck_assert_int_eq(sk_store_activity_get(st, ITEM, NULL, &led.after), 0);
	ck_assert_mem_eq(&led.before, &led.after, sizeof(led.before));
	assert_store_ok();
	assert_books(sk_shm_item_find(F.arena.shm, ITEM));
}
END_TEST

START_TEST(keep_days_policy)
{
	struct sk_store_archive_info ai;
	uint64_t ids[SOLD];
	struct timespec ms = {.tv_nsec = 1000000};
	int rc = -ENOENT;

	F.conf.retention_keep_days = 2;
	ctl_restart();
	sale(ids);
	for (unsigned u = 0; u < SOLD; u++)
		ck_assert_int_eq(sk_control_pay(F.ctl, ids[u], T0 + S, 0), SK_CONTROL_PAY_DONE);
	/* Ended a day ago: kept. */
	ck_assert_int_eq(sk_control_retention(F.ctl, T0 + 86400 * S), 0);
	ck_assert_int_eq(sk_store_archive_get(sk_control_store(F.ctl), ITEM, &ai), -ENOENT);
	/* Three days: the policy's worker archives it, the main loop purges it
	 * (a new control plane: the policy looks once a minute). */
	ctl_restart();
	for (unsigned i = 0; i < 5000; i++) {
		ck_assert_int_ge(sk_control_retention(F.ctl, T0 + 3 * 86400 * S), 0);
		rc = sk_store_archive_get(sk_control_store(F.ctl), ITEM, &ai);
		if (rc == 0 && ai.state == SK_STORE_ARCHIVE_DONE)
			break;
		nanosleep(&ms, NULL); /* the worker runs beside: poll, bounded */
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(ai.state, SK_STORE_ARCHIVE_DONE);
	ck_assert_uint_eq(ai.orders, SOLD);
	ck_assert_uint_eq(stats().activities_archived, 1);
	assert_store_ok();
}
END_TEST

static int
count_ev(const struct sk_store_event *ev, void *arg)
{
	(void)ev;
	(*(uint64_t *)arg)++;
	return 0;
}

static uint64_t
events_in_log(void)
{
	uint64_t n = 0;

	ck_assert_int_eq(sk_store_events_foreach(sk_control_store(F.ctl), 1, count_ev, &n), 0);
	return n;
}

START_TEST(trim_below_every_reader)
{
	uint64_t ids[SOLD];

	/* With an exporter: nothing before its cursor is saved, then below it. */
	F.conf.events_exported = true;
	ctl_restart();
	sale(ids);
	uint64_t all = events_in_log();
	ck_assert_uint_ge(all, SOLD + 1);
	retention_until_idle();
	ck_assert_uint_eq(events_in_log(), all);
	ck_assert_int_eq(sk_store_cursor_set(sk_control_store(F.ctl), "kafka.export", 4), 0);
	ctl_restart(); /* the trim runs once a second: a new control plane runs it now */
	retention_until_idle();
	ck_assert_uint_eq(events_in_log(), all - 4);
	ck_assert_uint_eq(stats().events_trimmed, 4);

	/* Without one: a bounded tail of the last events_keep. */
	F.conf.events_exported = false;
	F.conf.events_keep = 3;
	ctl_restart();
	retention_until_idle();
	ck_assert_uint_eq(events_in_log(), 3);
	assert_store_ok();
	char *m = metrics_text();
	ck_assert_ptr_nonnull(strstr(m, "seckill_store_events_trimmed_total"));
	ck_assert_ptr_nonnull(strstr(m, "seckill_orders_archived_total"));
	free(m);
}
END_TEST

void
test_control_add_retention(Suite *s)
{
	TCase *tc = tcase_create("retention");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, archive_settled_sale);
	tcase_add_test(tc, trim_below_every_reader);
	tcase_add_test(tc, keep_days_policy);
	suite_add_tcase(s, tc);
}
