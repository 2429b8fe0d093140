/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common.c - the shared rules of include/sk_common.h: the histogram
 * bucket search and the decimal writer of the fast path.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "sk_common.h"
#include "sk_test.h"

START_TEST(bucket_edges)
{
	static const uint64_t bounds[] = {10, 20, 50};

	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 0), 0);
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 10), 0); /* bounds are inclusive */
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 11), 1);
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 20), 1);
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 50), 2);
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, 51), 3); /* +Inf */
	ck_assert_uint_eq(sk_bucket_of(bounds, 3, UINT64_MAX), 3);
	ck_assert_uint_eq(sk_bucket_of(bounds, 0, 5), 0); /* only +Inf */
}
END_TEST

START_TEST(u64_dec_matches_printf)
{
	static const uint64_t v[] = {0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, UINT64_MAX};

	for (size_t i = 0; i < SK_ARRAY_SIZE(v); i++) {
		char got[SK_U64_DEC_MAX + 1], want[32];
		size_t n = sk_u64_dec(got, v[i]);

		got[n] = '\0';
		snprintf(want, sizeof(want), "%" PRIu64, v[i]);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

static Suite *
common_suite(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bucket_edges);
	tcase_add_test(tc, u64_dec_matches_printf);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(common_suite)
