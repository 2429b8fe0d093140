/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, payments: the seckill.payments messages and their outcomes
 * (paid, redelivered, paid again ...), a payment racing the timeout, a refund
 * repaired at attach, the admin refund route (tcase "payments" of the suite
 * in test_control.c).
 */
#include "test_control.h"

/* The same with seckill.payments messages: paid, or a conflict. */
START_TEST(payment_races_timeout)
{
	race_timeout(true);
}
END_TEST

/* ------------------------------------------------------------------- runner */

/* ---------------------------------------------------------------- payments */

/* msg - apply one hand-made seckill.payments message; its verdict. */
static int
msg(const char *json, struct sk_control_pm_result *res)
{
	return sk_payments_handle(F.ctl, json, strlen(json), T0 + 2 * S, res);
}

/* msg_ok - apply a message that must be read; its outcome. */
static unsigned
msg_ok(const char *fmt, uint64_t order, struct sk_control_pm_result *res)
{
	char buf[256];
	struct sk_control_pm_result r;

	snprintf(buf, sizeof(buf), fmt, (unsigned long long)order);
	ck_assert_int_eq(msg(buf, &r), SK_PAYMENTS_APPLIED);
	if (res != NULL)
		*res = r;
	return r.outcome;
}

START_TEST(payment_messages)
{
	struct sk_item *one = add_item(1, 2, 1);  /* limit 1 */
	struct sk_item *many = add_item(2, 5, 5); /* limit 5 */
	struct sk_buy_line l = {.item = many, .qty = 4};
	struct sk_control_pm_result r;
	uint64_t a = buy(0, 10, one), b, c = buy(1, 11, one);

	ck_assert_int_eq(buy_lines(0, 12, &l, 1, &b), SK_BUY_OK);
	ck_assert_int_eq(drain_now(NULL), 3);

	/* paid, its redelivery, a second payment of the same order */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"p-a\",\"order\":\"%llu\",\"kind\":\"paid\"}", a, &r),
		SK_CONTROL_PM_DONE);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_PAID);
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"p-a\",\"order\":\"%llu\",\"kind\":\"paid\"}", a, &r),
		SK_CONTROL_PM_DONE);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(msg_ok("{\"kind\":\"paid\",\"order\":%llu,\"request\":\"p-a2\",\"v\":1,"
				 "\"extra\":[1]}",
				 a, NULL),
			  SK_CONTROL_PM_ALREADY);
	msg_ok("{\"v\":1,\"request\":\"p-b\",\"order\":\"%llu\",\"kind\":\"paid\"}", b, NULL);

	/* refund of an unpaid order: refused, nothing moves */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-c\",\"order\":\"%llu\",\"kind\":\"refund\"}", c,
		       NULL),
		SK_CONTROL_PM_STATE);
	ck_assert_uint_eq(arena_state(c), SK_ORDER_CONFIRMED);

	/* limit 1, refunded in full: the unit is back and the buyer may buy again */
	ck_assert_int_eq(buy_one(0, 13, one), SK_BUY_SOLD_OUT);
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-a\",\"order\":\"%llu\",\"kind\":\"refund\"}", a,
		       &r),
		SK_CONTROL_PM_DONE);
	ck_assert_uint_eq(r.units, 1);
	ck_assert_uint_eq(r.state, SK_ORDER_REFUNDED);
	ck_assert_uint_eq(arena_state(a), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(store_state(a), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(sk_stock_remaining(one), 1);
	assert_books(one);
	/* redelivered: the unit goes back once */
	ck_assert_uint_eq(
		msg_ok("{\"v\":1,\"request\":\"r-a\",\"order\":\"%llu\",\"kind\":\"refund\"}", a,
		       &r),
		SK_CONTROL_PM_DONE);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(sk_stock_remaining(one), 1);
	uint64_t again;
	struct sk_buy_line l1 = {.item = one, .qty = 1};
	ck_assert_int_eq(buy_lines(1, 10, &l1, 1, &again), SK_BUY_OK);
	ck_assert_uint_ne(again, a);
	ck_assert_int_eq(buy_one(0, 13, one), SK_BUY_SOLD_OUT);

	/* partial refunds of 4 units: 1, too many (4), 3, and an id reused */
	static const struct {
		const char *req;
		unsigned units, item, outcome, status;
		uint64_t remaining;
	} steps[] = {
		{"r-b1", 1, 0, SK_CONTROL_PM_DONE, SK_ORDER_PAID, 2},
		{"r-b2", 4, 2, SK_CONTROL_PM_TOO_MANY, SK_ORDER_PAID, 2},
		{"r-b3", 3, 2, SK_CONTROL_PM_DONE, SK_ORDER_REFUNDED, 5},
		{"r-b3", 2, 2, SK_CONTROL_PM_REUSED, SK_ORDER_REFUNDED, 5},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(steps); i++) {
		char fmt[160];
		snprintf(fmt, sizeof(fmt),
			 "{\"v\":1,\"request\":\"%s\",\"order\":\"%%llu\",\"kind\":\"refund\","
			 "\"units\":%u%s}",
			 steps[i].req, steps[i].units, steps[i].item ? ",\"item\":2" : "");
		ck_assert_msg(msg_ok(fmt, b, NULL) == steps[i].outcome, "step %zu", i);
		ck_assert_uint_eq(arena_state(b), steps[i].status);
		ck_assert_uint_eq(sk_stock_remaining(many), steps[i].remaining);
	}
	assert_books(many);
	/* unknown order: nothing recorded */
	ck_assert_uint_eq(msg_ok("{\"v\":1,\"request\":\"u\",\"order\":\"%llu\",\"kind\":\"paid\"}",
				 sk_order_id_make(EPOCH, 0, 0, 999), NULL),
			  SK_CONTROL_PM_UNKNOWN);

	/* malformed: skipped, counted, never applied */
	static const char *const bad[] = {
		"",
		"not json",
		"[1]",
		"{\"v\":2,\"request\":\"m\",\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"order\":\"1\",\"kind\":\"refund\"}", /* a refund needs its id */
		"{\"v\":1,\"request\":\"\",\"order\":\"1\",\"kind\":\"refund\"}",
		"{\"v\":1,\"request\":null,\"order\":\"1\",\"kind\":\"refund\",\"units\":1}",
		"{\"v\":1,\"request\":\"has space\",\"order\":\"1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"x1\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"0\",\"kind\":\"paid\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"gift\"}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"refund\",\"units\":0}",
		"{\"v\":1,\"request\":\"m\",\"order\":\"1\",\"kind\":\"refund\",\"item\":\"2\"}",
		"{\"v\":1,\"request\":\"m\",\"request\":\"n\",\"order\":\"1\",\"kind\":\"paid\"}",
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++)
		ck_assert_msg(msg(bad[i], &r) == SK_PAYMENTS_MALFORMED, "%s", bad[i]);
	ck_assert_int_eq(sk_payments_handle(F.ctl, NULL, 0, T0, &r), SK_PAYMENTS_MALFORMED);

	struct sk_control_stats s = stats();
	ck_assert_uint_eq(s.payments_malformed, SK_ARRAY_SIZE(bad) + 1);
	ck_assert_uint_eq(s.payments[0][SK_CONTROL_PM_DONE], 2);
	ck_assert_uint_eq(s.payments[1][SK_CONTROL_PM_DONE], 3);
	ck_assert_uint_eq(s.payments[1][SK_CONTROL_PM_TOO_MANY], 1);
	ck_assert_uint_eq(s.payments_dup, 2); /* p-a, r-a */
	ck_assert_uint_eq(s.units_refunded, 5);
	ck_assert_uint_eq(s.anomalies, 0);
	char *m = metrics_text();
	ck_assert_ptr_nonnull(
		strstr(m, "seckill_payments_total{kind=\"refund\",outcome=\"done\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(m, "seckill_payments_malformed_total 16\n"));
	ck_assert_ptr_nonnull(strstr(m, "seckill_orders{state=\"refunded\"} 2\n"));
	assert_metrics_parse(m);
	free(m);
	assert_store_ok();
}
END_TEST

/* A refund the store made but the arena never followed (a crash between). */
START_TEST(refund_repaired_at_attach)
{
	struct sk_item *it = add_item(1, 4, 1);
	uint64_t id = buy(0, 7, it);
	struct sk_store_pay_result res;

	ck_assert_int_eq(drain_now(NULL), 1);
	ck_assert_int_eq(sk_control_pay(F.ctl, id, T0 + S, 0), SK_CONTROL_PAY_DONE);
	struct sk_store_payment p = {.request = "lost", .order = id, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_store_payment_apply(sk_control_store(F.ctl), &p, T0 + 2 * S, &res), 0);
	ck_assert_uint_eq(res.outcome, SK_STORE_PAY_DONE);
	ck_assert_uint_eq(arena_state(id), SK_ORDER_PAID);
	ctl_restart();
	ck_assert_uint_eq(arena_state(id), SK_ORDER_REFUNDED);
	ck_assert_uint_eq(stats().repaired, 1);
	/* Unsold until a rebuild: not on sale, never sold twice. */
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert(sk_stock_check(it));
	ck_assert_uint_eq(stats().anomalies, 0);
	/* The message redelivered to the new control plane changes nothing. */
	struct sk_control_pm_result r;
	struct sk_control_payment cp = {
		.request = "lost", .order = id, .kind = SK_STORE_PAY_REFUND};
	ck_assert_int_eq(sk_control_payment(F.ctl, &cp, T0 + 3 * S, 0, &r), 0);
	ck_assert(r.duplicate);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	assert_store_ok();
}
END_TEST

START_TEST(admin_refund_route)
{
	struct sk_item *it = add_item(2, 5, 5);
	struct sk_buy_line l = {.item = it, .qty = 3};
	char path[96], body[160];
	uint64_t id;
	json_t *j;

	ck_assert_int_eq(buy_lines(0, 12, &l, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(drain_now(NULL), 1);
	snprintf(path, sizeof(path), "/v1/orders/%llu/refund", (unsigned long long)id);
	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-0\"}",
			409); /* not paid yet */
	ck_assert_str_eq(json_string_value(json_object_get(j, "outcome")), "state");
	json_decref(j);
	ck_assert_int_eq(sk_control_pay(F.ctl, id, T0 + S, 0), SK_CONTROL_PAY_DONE);

	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\"}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "units")), 1);
	ck_assert(json_is_false(json_object_get(j, "duplicate")));
	json_decref(j);
	j = handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\"}", 200); /* retried */
	ck_assert(json_is_true(json_object_get(j, "duplicate")));
	json_decref(j);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	error_has(handle_body("POST", path, "{\"units\":5,\"request\":\"adm-5\"}", 409),
		  "more units");
	/* no request id: refused, nothing refunded (a retry would refund again) */
	error_has(handle_body("POST", path, "{\"units\":1}", 400), "request: required");
	error_has(handle_body("POST", path, NULL, 400), "request: required");
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	error_has(handle_body("POST", path, "{\"units\":1,\"request\":\"adm-1\",\"item\":3}", 409),
		  "another refund");
	error_has(handle_body("POST", path, "{\"units\":0}", 400), "units");
	error_has(handle_body("POST", path, "{\"units\":1,\"request\":\"a b\"}", 400), "request");
	error_has(handle_body("POST", path, "{\"unit\":1}", 400), "unknown field");
	error_has(handle_body("POST", path, "[]", 400), "body");
	error_has(handle_body("GET", path, NULL, 405), "method");
	snprintf(body, sizeof(body), "/v1/orders/%llu/refund",
		 (unsigned long long)sk_order_id_make(EPOCH, 0, 0, 999));
	error_has(handle_body("POST", body, "{\"request\":\"adm-x\"}", 404), "unknown order");

	/* the rest, without units: refunded */
	j = handle_body("POST", path, "{\"request\":\"adm-2\"}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "refunded");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "units")), 2);
	json_decref(j);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	snprintf(path, sizeof(path), "/v1/orders/%llu", (unsigned long long)id);
	j = handle_body("GET", path, NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "refunded");
	ck_assert_str_eq(json_string_value(json_object_get(j, "arena_status")), "refunded");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "refunded_units")), 3);
	json_t *l0 = json_array_get(json_object_get(j, "lines"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(l0, "refunded")), 3);
	json_decref(j);
	assert_books(it);
	assert_store_ok();
}
END_TEST

void
test_control_add_pay(Suite *s)
{
	TCase *tc;

	tc = tcase_create("payments");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, payment_messages);
	tcase_add_test(tc, payment_races_timeout);
	tcase_add_test(tc, refund_repaired_at_attach);
	tcase_add_test(tc, admin_refund_route);
	suite_add_tcase(s, tc);
}
