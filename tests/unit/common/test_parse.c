/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse.c - the strict parser family of include/sk_parse.h: what each
 * parser takes, and every way the rule "the whole string is the value"
 * refuses the rest.
 */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "sk_parse.h"
#include "sk_test.h"

START_TEST(u64_accepts)
{
	uint64_t v = 1;

	ck_assert(sk_parse_u64("0", 0, UINT64_MAX, &v));
	ck_assert_uint_eq(v, 0);
	ck_assert(sk_parse_u64("007", 0, 10, &v));
	ck_assert_uint_eq(v, 7);
	ck_assert(sk_parse_u64("18446744073709551615", 0, UINT64_MAX, &v));
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert(sk_parse_u64("65535", 1, 65535, &v));
	ck_assert_uint_eq(v, 65535);
}
END_TEST

START_TEST(u64_refuses)
{
	static const char *const bad[] = {
		"",
		" 5",
		"5 ",
		"+5",
		"-1",
		"5x",
		"0x10",
		"1e3",
		"1.0",
		"\t5",
		"5\n",
		"18446744073709551616",
		"99999999999999999999999",
	};
	uint64_t v = 42;

	ck_assert(!sk_parse_u64(NULL, 0, UINT64_MAX, &v));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!sk_parse_u64(bad[i], 0, UINT64_MAX, &v), "accepted \"%s\"", bad[i]);
	ck_assert(!sk_parse_u64("0", 1, 10, &v));
	ck_assert(!sk_parse_u64("11", 1, 10, &v));
	ck_assert_uint_eq(v, 42); /* untouched on failure */
}
END_TEST

/* Ids of the admin API: one spelling each. */
START_TEST(id_form)
{
	static const struct {
		const char *s;
		uint64_t max;
		bool ok;
		uint64_t v;
	} t[] = {
		{"1", 10, true, 1},
		{"10", 10, true, 10},
		{"11", 10, false, 0},
		{"0", 10, false, 0},
		{"07", 10, false, 0},
		{"", 10, false, 0},
		{"+7", 10, false, 0},
		{"7 ", 10, false, 0},
		{"18446744073709551615", UINT64_MAX, true, UINT64_MAX},
		{"18446744073709551616", UINT64_MAX, false, 0},
		{NULL, 10, false, 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 42;

		ck_assert_msg(sk_parse_id(t[i].s, t[i].max, &v) == t[i].ok, "row %zu", i);
		ck_assert_msg(v == (t[i].ok ? t[i].v : 42), "row %zu: out set on failure", i);
		ck_assert(sk_parse_id(t[i].s, t[i].max, NULL) == t[i].ok);
	}
}
END_TEST

START_TEST(u32_range)
{
	uint32_t v = 0;

	ck_assert(sk_parse_u32("4294967295", 0, UINT32_MAX, &v));
	ck_assert_uint_eq(v, UINT32_MAX);
	ck_assert(!sk_parse_u32("4294967296", 0, UINT32_MAX, &v));
}
END_TEST

START_TEST(i64_signs)
{
	int64_t v = 0;

	ck_assert(sk_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v));
	ck_assert_int_eq(v, INT64_MIN);
	ck_assert(sk_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &v));
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert(sk_parse_i64("-0", -1, 1, &v));
	ck_assert_int_eq(v, 0);
	ck_assert(!sk_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64("-", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64("+1", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64("--1", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64(" -1", INT64_MIN, INT64_MAX, &v));
	ck_assert(!sk_parse_i64("-5", -4, 4, &v));
}
END_TEST

START_TEST(double_rules)
{
	static const char *const bad[] = {"",	   " 1",    "1 ", "+1", "inf",	"nan",
					  "0x1p3", "1e999", ".",  "-.", "1.5x", "e5"};
	double v = 0;

	ck_assert(sk_parse_double("2.5", 0, 10, &v));
	ck_assert(v == 2.5);
	ck_assert(sk_parse_double(".5", 0, 10, &v));
	ck_assert(v == 0.5);
	ck_assert(sk_parse_double("1e3", 0, 1e4, &v));
	ck_assert(v == 1000);
	ck_assert(sk_parse_double("-1.25", -2, 0, &v));
	ck_assert(v == -1.25);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!sk_parse_double(bad[i], -1e300, 1e300, &v), "accepted \"%s\"",
			      bad[i]);
	ck_assert(!sk_parse_double("11", 0, 10, &v));
	ck_assert(!sk_parse_double("-1", 0, 10, &v));
}
END_TEST

START_TEST(time_forms)
{
	struct sk_time t;

	ck_assert(sk_parse_time("now", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 0);
	ck_assert(sk_parse_time("+90", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 90);
	ck_assert(sk_parse_time("+90s", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 90);
	ck_assert(sk_parse_time("+5m", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 300);
	ck_assert(sk_parse_time("+2h", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 7200);
	ck_assert(sk_parse_time("+1d", 0, &t));
	ck_assert(t.kind == SK_TIME_REL && t.s == 86400);
	ck_assert(sk_parse_time("1700000000", 0, &t));
	ck_assert(t.kind == SK_TIME_ABS && t.s == 1700000000);
	ck_assert(sk_parse_time("2026-11-26T12:00:00Z", 0, &t));
	ck_assert(t.kind == SK_TIME_ABS && t.s == 1795694400);
	ck_assert(sk_parse_time("never", SK_TIME_NEVER_OK, &t));
	ck_assert(t.kind == SK_TIME_NEVER);
	ck_assert_int_eq(sk_time_resolve_ns(&t, 5), INT64_MAX);
}
END_TEST

START_TEST(time_refuses)
{
	static const char *const bad[] = {
		"",
		"+",
		"+s",
		"+-1",
		"++1",
		"+1w",
		"+1 ",
		" +1",
		"0",
		"-5",
		"never",
		"NOW",
		"2026-11-26",
		"2026-11-26T12:00:00",
		"2026-1-26T12:00:00Z",
		"2026-11-26T12:00:00Zx",
		"+9223372036854775807",
		"9223372036854775807",
		"1.5",
	};
	struct sk_time t;

	ck_assert(!sk_parse_time(NULL, SK_TIME_NEVER_OK, &t));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!sk_parse_time(bad[i], 0, &t), "accepted \"%s\"", bad[i]);
}
END_TEST

START_TEST(time_resolve)
{
	struct sk_time t = {SK_TIME_REL, 10};

	ck_assert_int_eq(sk_time_resolve_ns(&t, 1000), 1000 + INT64_C(10000000000));
	t = (struct sk_time){SK_TIME_ABS, 2};
	ck_assert_int_eq(sk_time_resolve_ns(&t, 1000), INT64_C(2000000000));
	t = (struct sk_time){SK_TIME_REL, SK_TIME_S_MAX};
	ck_assert_int_eq(sk_time_resolve_ns(&t, INT64_MAX - 1), INT64_MAX);
}
END_TEST

static Suite *
parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, u64_accepts);
	tcase_add_test(tc, u64_refuses);
	tcase_add_test(tc, u32_range);
	tcase_add_test(tc, id_form);
	tcase_add_test(tc, i64_signs);
	tcase_add_test(tc, double_rules);
	tcase_add_test(tc, time_forms);
	tcase_add_test(tc, time_refuses);
	tcase_add_test(tc, time_resolve);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(parse_suite)
