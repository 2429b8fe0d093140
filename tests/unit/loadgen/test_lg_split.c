/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_split - seckill-loadgen's work over N stacks (lg_split.h): every
 * total (connections, requests, --inflight, source ports, users, tokens)
 * is cut into shares that add up to it, the remainder on stack 0, the
 * ranges disjoint and contiguous; the rates divided; one stack is the
 * options unchanged; what cannot be split is a usage error naming the
 * option; and a stack's picks (users, tokens) stay in its own range.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_pick.h"
#include "lg_split.h"
#include "sk_test.h"

/* parse - the options of @p args (a NULL-terminated list after argv[0]). */
static struct lg_opts
parse(const char *const *args)
{
	char *argv[64] = {(char *)"lg"};
	struct lg_opts o;
	char err[256] = "";
	int argc = 1;

	for (; args[argc - 1] != NULL; argc++)
		argv[argc] = (char *)args[argc - 1];
	lg_opts_defaults(&o);
	ck_assert_msg(lg_opts_parse(&o, argc, argv, err, sizeof(err)) == 0, "%s", err);
	return o;
}

START_TEST(one_stack_is_the_options)
{
	struct lg_opts o = parse((const char *const[]){"--server", "198.18.0.1", "--conns", "7",
						       "--requests", "9", NULL});
	struct lg_opts out;
	uint32_t off = 99;
	char err[256];

	ck_assert_int_eq(lg_split(&o, 1, 0, &out, &off, err, sizeof(err)), 0);
	ck_assert_int_eq(memcmp(&o, &out, sizeof(o)), 0);
	ck_assert_uint_eq(off, 0);
}
END_TEST

START_TEST(shares_three_stacks)
{
	struct lg_opts o = parse((const char *const[]){"--server",
						       "198.18.0.1",
						       "--conns",
						       "10",
						       "--requests",
						       "1001",
						       "--inflight",
						       "8",
						       "--users",
						       "1000",
						       "--user-base",
						       "5",
						       "--tokens",
						       "2000",
						       "--mix",
						       "buy=1,buy_jwt=1",
						       "--secret-file",
						       "/nonexistent",
						       "--rate",
						       "300",
						       "--rate-from",
						       "30",
						       "--step",
						       "1",
						       "--sports",
						       "2000-2099",
						       "--seed",
						       "7",
						       NULL});
	static const struct {
		uint32_t conns;
		uint64_t requests, inflight;
		uint16_t sport_min, sport_max;
		uint64_t user_base, users;
		uint32_t tok_off, tokens;
	} want[3] = {
		{4, 335, 4, 2000, 2033, 5, 334, 0, 668},
		{3, 333, 2, 2034, 2066, 339, 333, 668, 666},
		{3, 333, 2, 2067, 2099, 672, 333, 1334, 666},
	};
	char err[256];

	for (unsigned i = 0; i < 3; i++) {
		struct lg_opts out;
		uint32_t off;

		ck_assert_msg(lg_split(&o, 3, i, &out, &off, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(out.conns, want[i].conns);
		ck_assert_uint_eq(out.requests, want[i].requests);
		ck_assert_uint_eq(out.inflight_max, want[i].inflight);
		ck_assert_uint_eq(out.sport_min, want[i].sport_min);
		ck_assert_uint_eq(out.sport_max, want[i].sport_max);
		ck_assert_uint_eq(out.user_base, want[i].user_base);
		ck_assert_uint_eq(out.users, want[i].users);
		ck_assert_uint_eq(off, want[i].tok_off);
		ck_assert_uint_eq(out.tokens, want[i].tokens);
		ck_assert(out.rate == 100.0 && out.rate_from == 10.0);
		ck_assert(out.step_s == 1.0 && out.shape == LG_SHAPE_RATE);
		ck_assert_uint_eq(out.seed, 7 + i);
		ck_assert_uint_eq(out.client_count, o.client_count);
	}
}
END_TEST

/* Any N, any total: the shares add up, the ranges follow each other. */
START_TEST(shares_add_up)
{
	static const uint64_t totals[] = {1, 2, 3, 7, 8, 64, 1000, 64512, 1000001};
	unsigned n = (unsigned)_i + 1;

	for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++) {
		uint64_t sum = 0;

		if (totals[t] < n)
			continue;
		for (unsigned i = 0; i < n; i++) {
			uint64_t share = lg_split_share(totals[t], n, i);

			ck_assert_uint_eq(lg_split_off(totals[t], n, i), sum);
			ck_assert_uint_ge(share, totals[t] / n);
			if (i > 0)
				ck_assert_uint_eq(share, totals[t] / n);
			sum += share;
		}
		ck_assert_uint_eq(sum, totals[t]);
	}
}
END_TEST

/* The default 1024..65535 source ports over 8 stacks: disjoint, all used. */
START_TEST(ports_disjoint)
{
	struct lg_opts o = parse((const char *const[]){"--server", "198.18.0.1", NULL});
	uint32_t next = o.sport_min;
	char err[256];

	for (unsigned i = 0; i < 8; i++) {
		struct lg_opts out;
		uint32_t off;

		ck_assert_int_eq(lg_split(&o, 8, i, &out, &off, err, sizeof(err)), 0);
		ck_assert_uint_eq(out.sport_min, next);
		ck_assert_uint_ge(out.sport_max, out.sport_min);
		next = out.sport_max + 1u;
	}
	ck_assert_uint_eq(next, 65536);
}
END_TEST

static const struct {
	const char *args[16];
	unsigned n;
	const char *msg;
} errs[] = {{{"--conns", "3", NULL}, 4, "--conns: 3 cannot be split over 4 lcores"},
	    {{"--requests", "1", NULL}, 2, "--requests: 1 cannot be split over 2 lcores"},
	    {{"--inflight", "2", NULL}, 3, "--inflight: 2 cannot be split over 3 lcores"},
	    {{"--users", "1", NULL}, 2, "--users: 1 cannot be split over 2 lcores"},
	    {{"--mix", "buy_jwt=1", "--secret-file", "/x", "--tokens", "3", NULL},
	     4,
	     "--tokens: 3 cannot be split over 4 lcores"},
	    {{"--sports", "5000-5002", "--conns", "4", NULL}, 4, "--sports: 3 cannot be split"},
	    {{"--sports", "5000-5005", "--clients", "198.18.1.1/32", "--conns", "5", NULL},
	     3,
	     "--conns: 3 connections of lcore 0 need more than 1 addresses x 2 ports"},
	    {{"--attack", "synflood", NULL}, 2, "--attack runs on one lcore"}};

START_TEST(cannot_split)
{
	const char *args[20] = {"--server", "198.18.0.1"};
	struct lg_opts o, out;
	uint32_t off;
	char err[256] = "";
	int rc = 0;

	for (int a = 0; errs[_i].args[a] != NULL; a++)
		args[2 + a] = errs[_i].args[a];
	o = parse(args);
	for (unsigned i = 0; i < errs[_i].n && rc == 0; i++)
		rc = lg_split(&o, errs[_i].n, i, &out, &off, err, sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(err, errs[_i].msg) != NULL, "%s", err);
	/* one stack takes them all */
	ck_assert_int_eq(lg_split(&o, 1, 0, &out, &off, err, sizeof(err)), 0);
}
END_TEST

/* Too few users matters only when the mix has X-User-Id buys. */
START_TEST(users_only_for_buys)
{
	struct lg_opts o = parse((const char *const[]){"--server", "198.18.0.1", "--users", "1",
						       "--mix", "healthz=1", NULL});
	struct lg_opts out;
	uint32_t off;
	char err[256];

	ck_assert_int_eq(lg_split(&o, 2, 1, &out, &off, err, sizeof(err)), 0);
}
END_TEST

/* A stack's users and tokens, in turn or at random, stay in its range. */
START_TEST(picks_stay_in_the_share)
{
	const char *pick = _i == 0 ? "seq" : "random";
	struct lg_opts o =
		parse((const char *const[]){"--server", "198.18.0.1", "--users", "100", "--tokens",
					    "50", "--user-pick", pick, NULL});
	uint8_t seen[101] = {0};
	char err[256];

	for (unsigned i = 0; i < 4; i++) {
		struct lg_opts out;
		struct lg_pick p;
		uint32_t off;

		ck_assert_int_eq(lg_split(&o, 4, i, &out, &off, err, sizeof(err)), 0);
		lg_pick_init(&p, &out);
		for (int d = 0; d < 1000; d++) {
			uint64_t u = lg_pick_user(&p);
			uint32_t t = off + lg_pick_token(&p, out.tokens);

			ck_assert(u >= out.user_base && u < out.user_base + out.users);
			ck_assert(t >= lg_split_off(50, 4, i) &&
				  t < lg_split_off(50, 4, i) + lg_split_share(50, 4, i));
			ck_assert_msg(seen[u] == 0 || seen[u] == i + 1, "user %llu on two stacks",
				      (unsigned long long)u);
			seen[u] = (uint8_t)(i + 1);
		}
	}
	for (unsigned u = 1; u <= 100; u++)
		ck_assert_msg(seen[u] != 0, "user %u never picked", u);
}
END_TEST

static Suite *
lg_split_suite(void)
{
	Suite *s = suite_create("lg_split");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, one_stack_is_the_options);
	tcase_add_test(tc, shares_three_stacks);
	tcase_add_loop_test(tc, shares_add_up, 0, 8);
	tcase_add_test(tc, ports_disjoint);
	tcase_add_loop_test(tc, cannot_split, 0, (int)(sizeof(errs) / sizeof(errs[0])));
	tcase_add_test(tc, users_only_for_buys);
	tcase_add_loop_test(tc, picks_stay_in_the_share, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(lg_split_suite)
