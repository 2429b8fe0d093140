/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_userlimit.c - the per-user attempt limit of sk_ratelimit on
 * simulated TSC time (burst, refill, per item, users apart, a full set,
 * off), and live reconfiguration (shapes change, state kept).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "sk_common.h"
#include "sk_ratelimit.h"
#include "sk_test.h"

#define HZ  1000000000ULL /* 1 GHz: one cycle per ns */
#define T0  987654321ULL
#define SEC HZ

static struct sk_ratelimit *
make(uint64_t rate, uint64_t burst, uint32_t slots)
{
	struct sk_ratelimit_config c;
	struct sk_ratelimit *rl = NULL;

	sk_ratelimit_config_defaults(&c);
	c.hz = HZ;
	c.seed = 42;
	c.n_items = 8;
	c.ip_rate = 0;
	c.user_rate = rate;
	c.user_burst = burst;
	c.user_slots = slots;
	ck_assert_int_eq(sk_ratelimit_create(&c, &rl), 0);
	return rl;
}

/* take_n - attempts of @user on @item at @now; how many passed. */
static unsigned
take_n(struct sk_ratelimit *rl, uint64_t user, uint32_t item, uint64_t now, unsigned n)
{
	unsigned passed = 0;

	for (unsigned i = 0; i < n; i++)
		passed += sk_ratelimit_user_take(rl, user, item, now, NULL) == SK_RL_PASS;
	return passed;
}

START_TEST(test_defaults_on)
{
	struct sk_ratelimit_config c;

	sk_ratelimit_config_defaults(&c);
	ck_assert_uint_eq(c.user_rate, 10);
	ck_assert_uint_eq(c.user_burst, 20);
	ck_assert_uint_eq(c.user_slots, 65536);
}
END_TEST

static const struct {
	uint64_t rate, burst;
	unsigned at_once, want;
} burst_cases[] = {
	{10, 20, 50, 20}, {1, 1, 5, 1}, {10, 0, 5, 1}, {0, 0, 1000, 1000}, /* off */
};

START_TEST(test_burst_then_refused)
{
	struct sk_ratelimit *rl = make(burst_cases[_i].rate, burst_cases[_i].burst, 1024);
	uint64_t wait = 0;

	ck_assert_uint_eq(take_n(rl, 7, 1, T0, burst_cases[_i].at_once), burst_cases[_i].want);
	if (burst_cases[_i].rate != 0) {
		ck_assert_int_eq(sk_ratelimit_user_take(rl, 7, 1, T0, &wait), SK_RL_REFUSED_USER);
		ck_assert_uint_eq(wait, SEC / burst_cases[_i].rate);
		ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_USER],
				  burst_cases[_i].at_once - burst_cases[_i].want + 1);
	}
	sk_ratelimit_free(rl);
}
END_TEST

START_TEST(test_refill_and_sustained)
{
	struct sk_ratelimit *rl = make(10, 20, 1024);
	uint64_t t = T0;
	unsigned passed = 0;

	ck_assert_uint_eq(take_n(rl, 9, 2, t, 100), 20);
	/* 10 s of one attempt every 10 ms: 10/s pass, the rest refused. */
	for (unsigned i = 0; i < 1000; i++, t += SEC / 100)
		passed += take_n(rl, 9, 2, t, 1);
	ck_assert_uint_ge(passed, 99);
	ck_assert_uint_le(passed, 101);
	sk_ratelimit_free(rl);
}
END_TEST

START_TEST(test_users_and_items_apart)
{
	struct sk_ratelimit *rl = make(1, 3, 1024);

	ck_assert_uint_eq(take_n(rl, 1, 0, T0, 10), 3);
	/* Another item of the same user, and another user: full buckets. */
	ck_assert_uint_eq(take_n(rl, 1, 1, T0, 10), 3);
	ck_assert_uint_eq(take_n(rl, 2, 0, T0, 10), 3);
	/* A thousand users once each: none refused. */
	for (uint64_t u = 100; u < 1100; u++)
		ck_assert_uint_eq(take_n(rl, u, 0, T0, 1), 1);
	sk_ratelimit_free(rl);
}
END_TEST

/* A table of one set (4 entries): a fifth owing user takes over the entry
 * that owes least, counted; the table's memory never grows. */
START_TEST(test_full_set_evicts_least_owing)
{
	struct sk_ratelimit *rl = make(1, 2, 4);

	for (uint64_t u = 1; u <= 4; u++)
		ck_assert_uint_eq(take_n(rl, u, 0, T0 + u, 2), 2);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->user_evicted, 0);
	ck_assert_uint_eq(take_n(rl, 5, 0, T0 + 10, 1), 1);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->user_evicted, 1);
	/* Users still in the table stay refused. */
	unsigned refused = 0;
	for (uint64_t u = 2; u <= 4; u++)
		refused += take_n(rl, u, 0, T0 + 20, 1) == 0;
	ck_assert_uint_ge(refused, 2);
	sk_ratelimit_free(rl);
}
END_TEST

/* Idle entries are reused without counting an eviction. */
START_TEST(test_idle_entries_reused)
{
	struct sk_ratelimit *rl = make(10, 1, 4);

	for (uint64_t u = 1; u <= 1000; u++)
		ck_assert_uint_eq(take_n(rl, u, 0, T0 + u * SEC, 1), 1);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->user_evicted, 0);
	sk_ratelimit_free(rl);
}
END_TEST

START_TEST(test_no_table)
{
	struct sk_ratelimit *rl = make(0, 0, 0);
	struct sk_ratelimit_limits l = {.user_rate = 1, .user_burst = 1};

	ck_assert_uint_eq(take_n(rl, 1, 0, T0, 100), 100);
	/* Turned on live without a table: still passes (documented). */
	ck_assert_int_eq(sk_ratelimit_reconfigure(rl, &l), 0);
	ck_assert_uint_eq(take_n(rl, 1, 0, T0, 100), 100);
	sk_ratelimit_free(rl);
}
END_TEST

/* Live change: tighter limits bite at once on the owing user; a looser one
 * lets the same user through; state (what is owed) is kept. */
START_TEST(test_reconfigure_keeps_state)
{
	struct sk_ratelimit *rl = make(10, 20, 1024);
	struct sk_ratelimit_limits l = {.user_rate = 10, .user_burst = 5};
	uint64_t wait = 0;

	ck_assert_uint_eq(take_n(rl, 3, 0, T0, 10), 10);
	ck_assert_int_eq(sk_ratelimit_reconfigure(rl, &l), 0);
	/* It has used 10 of a burst now 5: refused until it paid back. */
	ck_assert_int_eq(sk_ratelimit_user_take(rl, 3, 0, T0, &wait), SK_RL_REFUSED_USER);
	ck_assert_uint_eq(wait, 6 * SEC / 10);
	/* A fresh user gets the new burst of 5. */
	ck_assert_uint_eq(take_n(rl, 4, 0, T0, 10), 5);
	l.user_rate = 0; /* off */
	ck_assert_int_eq(sk_ratelimit_reconfigure(rl, &l), 0);
	ck_assert_uint_eq(take_n(rl, 3, 0, T0, 50), 50);
	l.user_rate = 10;
	l.user_burst = SK_RL_BURST_MAX + 1;
	ck_assert_int_eq(sk_ratelimit_reconfigure(rl, &l), -EINVAL);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->reconfigured, 2);
	sk_ratelimit_free(rl);
}
END_TEST

/* The IP limit turned on live (its table made at init with ip_rate 0). */
START_TEST(test_reconfigure_ip_on)
{
	struct sk_ratelimit_config c;
	struct sk_ratelimit *rl = NULL;
	struct sk_ratelimit_limits l = {.ip_rate = 1, .ip_burst = 2};
	unsigned passed = 0;

	sk_ratelimit_config_defaults(&c);
	c.hz = HZ;
	c.n_items = 4;
	c.ip_rate = 0;
	ck_assert_int_eq(sk_ratelimit_create(&c, &rl), 0);
	for (int i = 0; i < 10; i++)
		passed += sk_ratelimit_check(rl, 0, 0x0a000001, T0, NULL) == SK_RL_PASS;
	ck_assert_uint_eq(passed, 10);
	ck_assert_int_eq(sk_ratelimit_reconfigure(rl, &l), 0);
	passed = 0;
	for (int i = 0; i < 10; i++)
		passed += sk_ratelimit_check(rl, 0, 0x0a000001, T0, NULL) == SK_RL_PASS;
	ck_assert_uint_eq(passed, 2);
	sk_ratelimit_free(rl);
}
END_TEST

START_TEST(test_bad_user_config)
{
	struct sk_ratelimit_config c;
	struct sk_ratelimit *rl = NULL;

	sk_ratelimit_config_defaults(&c);
	c.hz = HZ;
	c.user_slots = _i == 0 ? 3 : (_i == 1 ? 2 : SK_RL_IP_SLOTS_MAX * 2);
	ck_assert_int_eq(sk_ratelimit_create(&c, &rl), -EINVAL);
	c.user_slots = 1024;
	c.user_burst = SK_RL_BURST_MAX + 1;
	ck_assert_int_eq(sk_ratelimit_create(&c, &rl), -EINVAL);
}
END_TEST

static Suite *
userlimit_suite(void)
{
	Suite *s = suite_create("userlimit");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults_on);
	tcase_add_loop_test(tc, test_burst_then_refused, 0, (int)SK_ARRAY_SIZE(burst_cases));
	tcase_add_test(tc, test_refill_and_sustained);
	tcase_add_test(tc, test_users_and_items_apart);
	tcase_add_test(tc, test_full_set_evicts_least_owing);
	tcase_add_test(tc, test_idle_entries_reused);
	tcase_add_test(tc, test_no_table);
	tcase_add_test(tc, test_reconfigure_keeps_state);
	tcase_add_test(tc, test_reconfigure_ip_on);
	tcase_add_loop_test(tc, test_bad_user_config, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(userlimit_suite)
