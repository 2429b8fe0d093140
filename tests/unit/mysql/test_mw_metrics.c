/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-mysql-writer's metrics table (mw_metrics.c): every family of the
 * list is written once with its HELP and TYPE lines, every value of
 * struct mw_metrics is written exactly once, and the text fits the 8 KiB
 * buffer of /metrics; a buffer too small cuts whole lines only.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_metrics.h"
#include "sk_test.h"
#include "sk_test_metrics.h"

START_TEST(test_every_row_once)
{
	struct mw_metrics mt = {0};
	char text[8192], want[64], *list = NULL;
	size_t n;

	sk_test_metrics_list(mw_metrics_list, &list);
	/* distinct values: each must show up in exactly one sample */
	for (unsigned i = 0; i < MW_M_N; i++)
		mt.v[i] = 7001 + i;
	mt.v[MW_M_LAST_LAG_NS] = 1234567000; /* written in seconds */
	n = mw_metrics_format(&mt, text, sizeof(text));
	ck_assert_uint_lt(n, sizeof(text) - 1);
	ck_assert_uint_eq(strlen(text), n);
	ck_assert_uint_eq(sk_test_metrics_check(list, text, NULL),
			  sk_test_metrics_count(list, "\n"));
	for (unsigned i = 0; i < MW_M_N; i++) {
		if (i == MW_M_LAST_LAG_NS)
			snprintf(want, sizeof(want), "seckill_mysql_last_lag_seconds 1.234567\n");
		else
			snprintf(want, sizeof(want), " %u\n", 7001 + i);
		ck_assert_msg(sk_test_metrics_count(text, want) == 1, "value %u: '%s' %u times", i,
			      want, sk_test_metrics_count(text, want));
	}
	ck_assert_ptr_nonnull(strstr(text, "seckill_mysql_parked_rows{reason=\"sql\"} "));
	ck_assert_ptr_nonnull(
		strstr(text, "seckill_mysql_messages_total{result=\"applied\"} 7001\n"));
	free(list);
}
END_TEST

START_TEST(test_cut_whole_lines)
{
	struct mw_metrics mt = {0};
	char full[8192], part[8192];
	size_t n = mw_metrics_format(&mt, full, sizeof(full));

	for (size_t len = 1; len < n; len += 13) {
		size_t m = mw_metrics_format(&mt, part, len);

		ck_assert_uint_lt(m, len);
		ck_assert_uint_eq(strlen(part), m);
		ck_assert_int_eq(memcmp(part, full, m), 0);
		ck_assert_msg(m == 0 || part[m - 1] == '\n', "cut inside a line at %zu", len);
	}
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("mw_metrics");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_every_row_once);
	tcase_add_test(tc, test_cut_whole_lines);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
