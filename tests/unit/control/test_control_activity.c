/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, activities: preheat records and loads, ended sales skipped and sold-out loaded,
 * add / close / restock, the admin activity routes (tcase "activities" of the suite in
 * test_control.c).
 */
#include "test_control.h"

/* stored_order - an order of an earlier run for @item, put in the store directly. */
static void
stored_order(uint32_t item, uint64_t user, uint32_t seq)
{
	struct sk_order_rec r = {.id = sk_order_id_make(EPOCH - 100, 0, 0, seq),
				 .user = user,
				 .price = 500,
				 .time_ns = T0,
				 .item = item,
				 .qty = 1,
				 .nlines = 1};

	ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), &r, 1, 0, T0, NULL, NULL), 0);
}

START_TEST(preheat_records_and_loads)
{
	struct sk_store *st = sk_control_store(F.ctl);
	struct sk_store_activity a = activity(2, 5), got;
	struct sk_control_preheat_info pi;
	struct sk_item *cfg = add_item(1, 10, 1), *it;

	/* item 2: stored with a restock and two live orders of an earlier run */
	ck_assert_int_eq(sk_store_activity_put(st, &a, T0), 0);
	ck_assert_int_eq(sk_store_activity_restock(st, 2, 77, 3, T0), 0);
	stored_order(2, 700, 1);
	stored_order(2, 701, 2);

	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.recorded, 1); /* item 1 of the "config" */
	ck_assert_uint_eq(pi.loaded, 1);
	ck_assert_uint_eq(pi.synced, 0);
	ck_assert_uint_eq(pi.failed, 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &got, NULL), 0);
	ck_assert_uint_eq(got.total, 10);
	ck_assert_uint_eq(got.price, cfg->price);

	it = sk_shm_item_find(F.arena.shm, 2);
	ck_assert_ptr_nonnull(it);
	ck_assert_uint_eq(it->total, 5);
	ck_assert_uint_eq(atomic_load(&it->added), 3);
	ck_assert_uint_eq(sk_stock_remaining(it), 6); /* 5 + 3 - 2 live */
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 700, it)), "duplicate");
	buy(1, 702, it);
	ck_assert_int_eq(drain_now(NULL), 1);
	assert_books(it);

	/* a second pass changes nothing */
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.recorded + pi.loaded + pi.synced + pi.failed, 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);

	/* a restock and a close made in the store alone reach the arena */
	ck_assert_int_eq(sk_store_activity_restock(st, 2, 78, 4, T0), 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 9);
	ck_assert_int_eq(sk_store_activity_close(st, 2, T0), 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_CLOSED);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 703, it)), "closed");
	assert_books(it);
	ck_assert_uint_eq(stats().activities_recorded, 1);
	ck_assert_uint_eq(stats().activities_loaded, 1);
	ck_assert_uint_eq(stats().units_restocked, 4);
}
END_TEST

START_TEST(preheat_skips_ended_loads_sold_out)
{
	struct sk_store *st = sk_control_store(F.ctl);
	struct sk_store_activity ended = activity(3, 5), small = activity(4, 2);
	struct sk_control_preheat_info pi;

	ended.end_ns = T0 + S;
	ck_assert_int_eq(sk_store_activity_put(st, &ended, T0), 0);
	ck_assert_int_eq(sk_store_activity_put(st, &small, T0), 0);
	stored_order(4, 800, 1);
	stored_order(4, 801, 2);
	/* a lost restock: the store holds orders beyond the stock it knows */
	small.total = 1;
	ck_assert_int_eq(sk_store_activity_put(st, &small, T0), -ERANGE);

	ck_assert_int_eq(sk_control_preheat(F.ctl, T0 + 2 * S, true, &pi), 0);
	ck_assert_uint_eq(pi.loaded, 1); /* item 4, sold out */
	ck_assert_ptr_null(sk_shm_item_find(F.arena.shm, 3));
	ck_assert(sk_stock_is_sold_out(sk_shm_item_find(F.arena.shm, 4)));
	ck_assert_uint_eq(pi.failed, 0); /* nothing to log */
}
END_TEST

START_TEST(activity_add_close_restock)
{
	struct sk_store_activity a = activity(5, 3), b;
	struct sk_item *it;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 5);
	ck_assert_ptr_nonnull(it);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_UNCHANGED);
	b = a, b.total = 4;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_CONFLICT);
	b = a, b.end_ns = T0 - S, b.start_ns = T0 - 2 * S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_INVALID);
	b = a, b.total = 0;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_INVALID);

	for (uint64_t u = 1; u <= 3; u++)
		buy(u % NLCORES, u, it);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 4, it)), "sold_out");
	ck_assert_int_eq(drain_now(NULL), 3);

	/* restock: once per id, the units reach the pool, a sold-out item reopens */
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 2, T0), SK_ACTIVITY_DONE);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 2, T0), SK_ACTIVITY_UNCHANGED);
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 1, 3, T0), SK_ACTIVITY_CONFLICT);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 0, 3, T0), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 2, 0, T0), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 9, 2, 1, T0), SK_ACTIVITY_UNKNOWN);
	b = activity(8, 1), b.end_ns = T0 + S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 8, 1, 1, T0 + S), SK_ACTIVITY_ENDED);
	ck_assert_str_eq(sk_activity_result_name(SK_ACTIVITY_ENDED), "ended");
	buy(0, 4, it);
	ck_assert_int_eq(drain_now(NULL), 1);
	assert_books(it);

	/* close: for good */
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 5, T0), SK_ACTIVITY_DONE);
	ck_assert_str_eq(sk_buy_status_name(buy_one(0, 5, it)), "closed");
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 5, T0), SK_ACTIVITY_UNCHANGED);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 5, 3, 1, T0), SK_ACTIVITY_CLOSED);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_CLOSED);
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 9, T0), SK_ACTIVITY_UNKNOWN);
	assert_books(it);

	/* an item of the dataplane's config: close and restock record it first */
	struct sk_item *cfg = add_item(6, 2, 1);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 6, 1, 5, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(sk_stock_remaining(cfg), 7);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 6, 2, SK_STOCK_MAX_UNITS, T0),
			 SK_ACTIVITY_INVALID); /* more than the engine holds: nothing stored */
	ck_assert_uint_eq(sk_stock_remaining(cfg), 7);
	assert_books(cfg);

	/* no room: nothing is stored */
	for (uint32_t id = 10; sk_shm_item_find(F.arena.shm, 17) == NULL; id++) {
		b = activity(id, 1);
		ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_DONE);
		if (atomic_load(&F.arena.shm->nitems) == F.arena.shm->max_items)
			break;
	}
	b = activity(99, 1);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_NO_ROOM);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 99, NULL, NULL), -ENOENT);
	ck_assert_str_eq(sk_activity_result_name(SK_ACTIVITY_NO_ROOM), "no_room");
	ck_assert_str_eq(sk_activity_result_name(-EIO), "error");
}
END_TEST

START_TEST(admin_activity_routes)
{
	char body[512];
	json_t *j;

	snprintf(body, sizeof(body),
		 "{\"item\":7,\"name\":\"phone\",\"total\":4,\"price\":199900,"
		 "\"per_user_limit\":2,\"start_ns\":%lld,\"end_ns\":null,\"pay_timeout_ns\":%lld}",
		 (long long)(T0 + 60 * S), (long long)(5 * 60 * S));
	j = handle_body("POST", "/v1/activities", body, 201);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "done");
	ck_assert(json_is_true(json_object_get(j, "in_arena")));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 4);
	json_t *act = json_object_get(j, "activity");
	ck_assert_str_eq(json_string_value(json_object_get(act, "name")), "phone");
	ck_assert_int_eq(json_integer_value(json_object_get(act, "pay_timeout_ns")), 5 * 60 * S);
	ck_assert_int_eq(json_integer_value(json_object_get(act, "end_ns")), INT64_MAX);
	json_decref(j);
	j = handle_body("POST", "/v1/activities", body, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities",
			      "{\"item\":7,\"total\":5,\"name\":\"phone\"}", 409),
		  "another definition");

	/* bad input: each names what is wrong, nothing is stored */
	error_has(handle_body("POST", "/v1/activities", NULL, 400), "body is required");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,", 400), "body:");
	error_has(handle_body("POST", "/v1/activities", "[1]", 400), "not a JSON object");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8}", 400), "total: required");
	error_has(handle_body("POST", "/v1/activities", "{\"total\":8}", 400), "item: required");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"totl\":2}", 400),
		  "totl: unknown field");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":-1}", 400),
		  "total: must be an integer");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"price\":\"x\"}",
			      400),
		  "price: must be an integer");
	error_has(handle_body("POST", "/v1/activities",
			      "{\"item\":8,\"total\":1,\"start_ns\":10,\"end_ns\":5}", 400),
		  "end: must be after start");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"item\":9}", 400),
		  "body:");
	error_has(handle_body("POST", "/v1/activities", "{\"item\":8,\"total\":1,\"name\":7}", 400),
		  "name: must be a string");
	error_has(handle_body("GET", "/v1/activities/8", NULL, 404), "unknown activity");

	/* no start: "now" at creation, the stored start on a retry (not a conflict) */
	j = handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2}", 201);
	json_decref(j);
	usleep(2000);
	j = handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities", "{\"item\":9,\"total\":2,\"start_ns\":5}",
			      409),
		  "another definition");

	j = handle_body("GET", "/v1/activities", NULL, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "activities")), 2);
	json_decref(j);

	/* restock and close */
	j = handle_body("POST", "/v1/activities/7/restock", "{\"units\":3,\"restock_id\":42}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "done");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 7);
	json_decref(j);
	j = handle_body("POST", "/v1/activities/7/restock", "{\"units\":3,\"restock_id\":42}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 7);
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":4,\"restock_id\":42}",
			      409),
		  "restock_id was used before");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":4}", 400),
		  "restock_id: required");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"restock_id\":4}", 400),
		  "units: required");
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":0,\"restock_id\":4}",
			      400),
		  "units: must be an integer 1..");
	error_has(handle_body("POST", "/v1/activities/8/restock", "{\"units\":1,\"restock_id\":4}",
			      404),
		  "unknown activity");
	j = handle_body("POST", "/v1/activities/7/close", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "closed");
	ck_assert(json_is_true(json_object_get(json_object_get(j, "activity"), "closed")));
	json_decref(j);
	j = handle_body("POST", "/v1/activities/7/close", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities/7/restock", "{\"units\":1,\"restock_id\":5}",
			      409),
		  "closed");
	error_has(handle_body("POST", "/v1/activities/8/close", NULL, 404), "unknown activity");
	error_has(handle_body("GET", "/v1/activities/7/close", NULL, 405), "method not allowed");
	error_has(handle_body("PUT", "/v1/activities", NULL, 405), "method not allowed");
	error_has(handle_body("GET", "/v1/activities/x", NULL, 400), "bad item id");
}
END_TEST

/* The buyer flags: stored, shown, in the arena item, a changed flag is another definition. */
START_TEST(activity_buyer_flags)
{
	struct sk_store_activity got;
	json_t *j;

	j = handle_body("POST", "/v1/activities",
			"{\"item\":11,\"total\":3,\"gate\":true,\"reserved_only\":true}", 201);
	json_t *act = json_object_get(j, "activity");
	ck_assert(json_is_true(json_object_get(act, "gate")));
	ck_assert(json_is_true(json_object_get(act, "reserved_only")));
	json_decref(j);
	j = handle_body("POST", "/v1/activities", "{\"item\":12,\"total\":3,\"gate\":true}", 201);
	ck_assert(json_is_false(json_object_get(json_object_get(j, "activity"), "reserved_only")));
	json_decref(j);

	struct sk_item *it = sk_shm_item_find(F.arena.shm, 11);
	ck_assert_ptr_nonnull(it);
	ck_assert_uint_eq(it->gate, 1);
	ck_assert_uint_eq(it->reserved_only, 1);
	it = sk_shm_item_find(F.arena.shm, 12);
	ck_assert_uint_eq(it->gate, 1);
	ck_assert_uint_eq(it->reserved_only, 0);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 11, &got, NULL), 0);
	ck_assert(got.gate && got.reserved_only);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 12, &got, NULL), 0);
	ck_assert(got.gate && !got.reserved_only);

	/* the same definition is unchanged; dropping a flag is another definition */
	j = handle_body("POST", "/v1/activities", "{\"item\":12,\"total\":3,\"gate\":true}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	error_has(handle_body("POST", "/v1/activities", "{\"item\":12,\"total\":3}", 409),
		  "another definition");
	error_has(
		handle_body("POST", "/v1/activities", "{\"item\":13,\"total\":3,\"gate\":1}", 400),
		"gate: must be true or false");
	error_has(handle_body("POST", "/v1/activities",
			      "{\"item\":13,\"total\":3,\"reserved_only\":\"yes\"}", 400),
		  "reserved_only: must be true or false");
}
END_TEST

void
test_control_add_activity(Suite *s)
{
	TCase *tc;

	tc = tcase_create("activities");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, preheat_records_and_loads);
	tcase_add_test(tc, preheat_skips_ended_loads_sold_out);
	tcase_add_test(tc, activity_add_close_restock);
	tcase_add_test(tc, admin_activity_routes);
	tcase_add_test(tc, activity_buyer_flags);
	suite_add_tcase(s, tc);
}
