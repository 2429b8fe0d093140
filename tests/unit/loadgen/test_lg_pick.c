/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_pick - what seckill-loadgen's next request is: the mix's weights
 * (counted over a fixed-seed run), users and tokens in turn (wrapping) and
 * at random (in range, all reached), the seed (same seed, same run), and
 * the open loop's curve (constant, step, ramp: exact integrals).
 */
#include <check.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "lg_pick.h"
#include "sk_test.h"

static struct lg_opts
opts(void)
{
	struct lg_opts o;

	lg_opts_defaults(&o);
	return o;
}

START_TEST(mix_follows_weights)
{
	struct lg_opts o = opts();
	struct lg_pick p;
	unsigned n[LG_REQ__COUNT] = {0};
	const unsigned draws = 200000;

	memset(o.mix, 0, sizeof(o.mix));
	o.mix[LG_REQ_BUY] = 8;
	o.mix[LG_REQ_ORDER] = 1;
	o.mix[LG_REQ_HEALTHZ] = 1;
	lg_pick_init(&p, &o);
	ck_assert_uint_eq(p.mix_total, 10);
	for (unsigned i = 0; i < draws; i++)
		n[lg_pick_kind(&p)]++;
	/* 80 % / 10 % / 10 %, within 1 % of the draws (about 6 sigma) */
	ck_assert_uint_le(abs((int)n[LG_REQ_BUY] - (int)(draws * 8 / 10)), draws / 100);
	ck_assert_uint_le(abs((int)n[LG_REQ_ORDER] - (int)(draws / 10)), draws / 100);
	ck_assert_uint_le(abs((int)n[LG_REQ_HEALTHZ] - (int)(draws / 10)), draws / 100);
	ck_assert_uint_eq(n[LG_REQ_BUY_JWT], 0);
	ck_assert_uint_eq(n[LG_REQ_ITEM], 0);
}
END_TEST

START_TEST(single_kind_draws_nothing)
{
	struct lg_opts o = opts();
	struct lg_pick p;

	memset(o.mix, 0, sizeof(o.mix));
	o.mix[LG_REQ_HEALTHZ] = 1;
	lg_pick_init(&p, &o);
	uint64_t rng = p.rng;
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(lg_pick_kind(&p), LG_REQ_HEALTHZ);
	ck_assert_uint_eq(p.rng, rng); /* one kind: the generator is left alone */
}
END_TEST

START_TEST(users_in_turn_wrap)
{
	struct lg_opts o = opts();
	struct lg_pick p;

	o.user_pick = LG_USER_SEQ;
	o.user_base = 1000;
	o.users = 3;
	lg_pick_init(&p, &o);
	const uint64_t want[] = {1000, 1001, 1002, 1000, 1001, 1002, 1000};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_uint_eq(lg_pick_user(&p), want[i]);
}
END_TEST

START_TEST(users_at_random_in_range)
{
	struct lg_opts o = opts();
	struct lg_pick p;
	unsigned seen[16] = {0};

	o.user_pick = LG_USER_RANDOM;
	o.user_base = 50;
	o.users = 16;
	lg_pick_init(&p, &o);
	for (int i = 0; i < 16000; i++) {
		uint64_t u = lg_pick_user(&p);

		ck_assert_uint_ge(u, 50);
		ck_assert_uint_lt(u, 66);
		seen[u - 50]++;
	}
	for (int i = 0; i < 16; i++) /* 1,000 expected each */
		ck_assert_uint_gt(seen[i], 800);
}
END_TEST

START_TEST(tokens_in_turn_and_at_random)
{
	struct lg_opts o = opts();
	struct lg_pick p;

	o.user_pick = LG_USER_SEQ;
	lg_pick_init(&p, &o);
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_uint_eq(lg_pick_token(&p, 4), i % 4);
	/* a smaller pool than the position reached starts over */
	ck_assert_uint_eq(lg_pick_token(&p, 2), 0);

	o.user_pick = LG_USER_RANDOM;
	lg_pick_init(&p, &o);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_lt(lg_pick_token(&p, 7), 7);
}
END_TEST

START_TEST(seed_fixes_the_run)
{
	struct lg_opts o = opts();
	struct lg_pick a, b, c;
	int same = 0;

	o.seed = 42;
	lg_pick_init(&a, &o);
	lg_pick_init(&b, &o);
	o.seed = 43;
	lg_pick_init(&c, &o);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = lg_pick_rng(&a);

		ck_assert_uint_eq(x, lg_pick_rng(&b));
		same += x == lg_pick_rng(&c);
	}
	ck_assert_int_eq(same, 0);
}
END_TEST

START_TEST(curve_integrals)
{
	struct lg_opts o = opts();

	o.rate = 1000;
	o.rate_from = 0;
	o.step_s = 0;
	o.ramp_s = 0;
	ck_assert_double_eq_tol(lg_pick_due(&o, 2.5), 2500, 1e-9);

	/* step: 100/s for 2 s, then 1,000/s */
	o.rate_from = 100;
	o.step_s = 2;
	ck_assert_double_eq_tol(lg_pick_due(&o, 1), 100, 1e-9);
	ck_assert_double_eq_tol(lg_pick_due(&o, 3), 200 + 1000, 1e-9);

	/* ramp: 100/s to 1,000/s over 4 s (mean 550/s), then 1,000/s */
	o.step_s = 0;
	o.ramp_s = 4;
	ck_assert_double_eq_tol(lg_pick_due(&o, 0), 0, 1e-9);
	ck_assert_double_eq_tol(lg_pick_due(&o, 2), 100 * 2 + 900 * 4 / 8.0, 1e-9); /* 650 */
	ck_assert_double_eq_tol(lg_pick_due(&o, 4), 2200, 1e-9);
	ck_assert_double_eq_tol(lg_pick_due(&o, 5), 3200, 1e-9);
}
END_TEST

static Suite *
lg_pick_suite(void)
{
	Suite *s = suite_create("lg_pick");
	TCase *tc = tcase_create("pick");

	tcase_add_test(tc, mix_follows_weights);
	tcase_add_test(tc, single_kind_draws_nothing);
	tcase_add_test(tc, users_in_turn_wrap);
	tcase_add_test(tc, users_at_random_in_range);
	tcase_add_test(tc, tokens_in_turn_and_at_random);
	tcase_add_test(tc, seed_fixes_the_run);
	tcase_add_test(tc, curve_integrals);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(lg_pick_suite)
