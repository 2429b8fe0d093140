/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ratelimit.c - sk_ratelimit on simulated TSC time: burst then refusal,
 * refill, sustained rate, all-or-nothing charging, admit/commit halves,
 * per-IP isolation and fixed memory, addresses of one set taking turns (no
 * escape) and newcomers (never locked out), lcore sharing, Retry-After,
 * config validation.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_ratelimit.h"
#include "sk_test.h"

#define HZ  1000000000ULL /* 1 GHz: one cycle per ns */
#define T0  123456789ULL  /* arbitrary start of the simulated clock */
#define SEC HZ

/* ------------------------------------------------------------------------
 * One bucket.
 */

static const struct {
	uint64_t rate, burst;
	unsigned at_once; /* requests at the same instant */
	unsigned want;	  /* how many pass */
} burst_cases[] = {
	{10, 5, 20, 5},
	{10, 1, 5, 1},
	{10, 0, 5, 1}, /* burst 0 taken as 1 */
	{1, 100, 150, 100},
	{1000000, 3, 10, 3},
	{0, 0, 1000, 1000},	   /* rate 0: unlimited */
	{5000000000ULL, 2, 10, 2}, /* rate above hz */
};

START_TEST(test_bucket_burst)
{
	struct sk_rl_bucket b;
	unsigned i, passed = 0;

	ck_assert_int_eq(sk_rl_bucket_init(&b, burst_cases[_i].rate, burst_cases[_i].burst, HZ), 0);
	for (i = 0; i < burst_cases[_i].at_once; i++)
		passed += sk_rl_bucket_take(&b, T0, NULL);
	ck_assert_uint_eq(passed, burst_cases[_i].want);
}
END_TEST

START_TEST(test_bucket_refill)
{
	struct sk_rl_bucket b;
	uint64_t wait = 0, interval = SEC / 10;
	int i;

	ck_assert_int_eq(sk_rl_bucket_init(&b, 10, 5, HZ), 0);
	for (i = 0; i < 5; i++)
		ck_assert(sk_rl_bucket_take(&b, T0, &wait));
	ck_assert(!sk_rl_bucket_take(&b, T0, &wait));
	ck_assert_uint_eq(wait, interval);
	ck_assert_uint_eq(sk_ratelimit_retry_after(wait, HZ), 1);

	/* one interval later: exactly one more */
	ck_assert(!sk_rl_bucket_take(&b, T0 + interval - 1, &wait));
	ck_assert_uint_eq(wait, 1);
	ck_assert(sk_rl_bucket_take(&b, T0 + interval, &wait));
	ck_assert(!sk_rl_bucket_take(&b, T0 + interval, &wait));

	/* a long pause refills to the burst, not beyond */
	for (i = 0; i < 5; i++)
		ck_assert(sk_rl_bucket_take(&b, T0 + 100 * SEC, NULL));
	ck_assert(!sk_rl_bucket_take(&b, T0 + 100 * SEC, NULL));
}
END_TEST

/* Requests every 1 ms for 10 s against 100/s, burst 1: 1000 pass. */
START_TEST(test_bucket_sustained)
{
	struct sk_rl_bucket b;
	unsigned passed = 0, i;

	ck_assert_int_eq(sk_rl_bucket_init(&b, 100, 1, HZ), 0);
	for (i = 0; i < 10000; i++)
		passed += sk_rl_bucket_take(&b, T0 + (uint64_t)i * (SEC / 1000), NULL);
	ck_assert_uint_eq(passed, 1000);
}
END_TEST

START_TEST(test_bucket_init_errors)
{
	struct sk_rl_bucket b;

	ck_assert_int_eq(sk_rl_bucket_init(&b, 10, 1, 0), -EINVAL);
	ck_assert_int_eq(sk_rl_bucket_init(&b, 10, SK_RL_BURST_MAX + 1, HZ), -EINVAL);
	ck_assert_int_eq(sk_rl_bucket_init(NULL, 10, 1, HZ), -EINVAL);
	ck_assert_int_eq(sk_rl_bucket_init(&b, 1, SK_RL_BURST_MAX, UINT64_MAX), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------------
 * The per-lcore limiter.
 */

static struct sk_ratelimit_config
base_cfg(void)
{
	struct sk_ratelimit_config c;

	sk_ratelimit_config_defaults(&c);
	c.hz = HZ;
	c.seed = 0x1234abcd;
	c.n_items = 8;
	return c;
}

static struct sk_ratelimit *
make(const struct sk_ratelimit_config *c)
{
	struct sk_ratelimit *rl = NULL;

	ck_assert_int_eq(sk_ratelimit_create(c, &rl), 0);
	ck_assert_ptr_nonnull(rl);
	return rl;
}

static void
check_totals(const struct sk_ratelimit *rl, uint64_t requests)
{
	const struct sk_ratelimit_stats *s = sk_ratelimit_stats_get(rl);

	ck_assert_uint_eq(s->refused[SK_RL_PASS], 0);
	ck_assert_uint_eq(s->passed + s->refused[SK_RL_REFUSED_IP] +
				  s->refused[SK_RL_REFUSED_ITEM] + s->refused[SK_RL_REFUSED_GLOBAL],
			  requests);
}

START_TEST(test_defaults)
{
	struct sk_ratelimit_config c;

	sk_ratelimit_config_defaults(&c);
	ck_assert_uint_eq(c.global_rate, 0);
	ck_assert_uint_eq(c.item_rate, 0);
	ck_assert_uint_eq(c.ip_rate, 20);
	ck_assert_uint_eq(c.ip_burst, 40);
	ck_assert_uint_eq(c.ip_slots, 16384);
	ck_assert_uint_eq(c.n_lcores, 1);
}
END_TEST

/* Per-IP: a client exhausts its burst; others are unaffected. */
START_TEST(test_ip_isolation)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;
	uint32_t ip;
	int i;

	c.ip_rate = 2;
	c.ip_burst = 3;
	rl = make(&c);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, 0x0a000001, T0, &wait), SK_RL_PASS);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, 0x0a000001, T0, &wait),
				 SK_RL_REFUSED_IP);
	ck_assert_uint_eq(wait, SEC / 2);
	ck_assert_uint_eq(sk_ratelimit_retry_after(wait, HZ), 1);
	/* 50 other clients, each gets its own full burst */
	for (ip = 0x0a000002; ip < 0x0a000002 + 50; ip++)
		for (i = 0; i < 3; i++)
			ck_assert_int_eq(sk_ratelimit_check(rl, 1, ip, T0, NULL), SK_RL_PASS);
	/* refill after half a second: one more for the first client */
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 0x0a000001, T0 + SEC / 2, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 0x0a000001, T0 + SEC / 2, NULL),
			 SK_RL_REFUSED_IP);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_IP], 11);
	check_totals(rl, 3 + 10 + 150 + 2);
	sk_ratelimit_free(rl);
}
END_TEST

/* Global limit; refusals charge nothing (the IP bucket keeps its credit). */
START_TEST(test_global_all_or_nothing)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;
	int i;

	c.global_rate = 1;
	c.global_burst = 2;
	c.ip_rate = 1;
	c.ip_burst = 3;
	rl = make(&c);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 7, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 8, T0, NULL), SK_RL_PASS);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, 7, T0, &wait), SK_RL_REFUSED_GLOBAL);
	ck_assert_uint_eq(wait, SEC);
	/* had the refusals charged IP 7, it would owe ~100 s now */
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 7, T0 + SEC, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 7, T0 + 2 * SEC, NULL), SK_RL_PASS);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_GLOBAL], 100);
	check_totals(rl, 104);
	sk_ratelimit_free(rl);
}
END_TEST

/*
 * The two halves: an admitted request pays its address only; the item and
 * global buckets are paid at commit (authenticated buyers), so admits that
 * are never committed (forged tokens) cannot drain them, while a drained
 * bucket refuses at admit. sk_ratelimit_ip_take() looks at the address only.
 */
START_TEST(test_admit_commit)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;
	uint32_t ip;
	int i;

	c.ip_rate = 1;
	c.ip_burst = 3;
	c.item_rate = 1;
	c.item_burst = 2;
	c.global_rate = 1;
	c.global_burst = 4;
	rl = make(&c);
	/* 100 addresses x 3 admits, none committed: the shared buckets stay full */
	for (ip = 100; ip < 200; ip++) {
		for (i = 0; i < 3; i++)
			ck_assert_int_eq(sk_ratelimit_admit(rl, 0, ip, T0, NULL), SK_RL_PASS);
		ck_assert_int_eq(sk_ratelimit_admit(rl, 0, ip, T0, &wait), SK_RL_REFUSED_IP);
		ck_assert_uint_eq(wait, SEC);
	}
	/* two committed buys drain item 0 (burst 2) */
	for (ip = 1; ip <= 2; ip++) {
		ck_assert_int_eq(sk_ratelimit_admit(rl, 0, ip, T0, NULL), SK_RL_PASS);
		sk_ratelimit_commit(rl, 0, T0);
	}
	ck_assert_int_eq(sk_ratelimit_admit(rl, 0, 3, T0, &wait), SK_RL_REFUSED_ITEM);
	ck_assert_uint_eq(wait, SEC);
	/* refused at admit: address 3 was not charged, its burst is whole */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(sk_ratelimit_admit(rl, 1, 3, T0, NULL), SK_RL_PASS);
	/* two more on item 1 drain the global bucket (burst 4) */
	for (ip = 4; ip <= 5; ip++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 1, ip, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_admit(rl, SK_RL_NO_ITEM, 6, T0, &wait), SK_RL_REFUSED_GLOBAL);
	/* the per-IP limit alone ignores the drained shared buckets */
	ck_assert_int_eq(sk_ratelimit_ip_take(rl, 6, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_ip_take(rl, 100, T0, &wait), SK_RL_REFUSED_IP);
	ck_assert_uint_eq(wait, SEC);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_IP], 101);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_ITEM], 1);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_GLOBAL], 1);
	check_totals(rl, 400 + 2 + 1 + 3 + 2 + 1 + 2);
	sk_ratelimit_free(rl);

	/* per-IP off: ip_take always passes */
	c.ip_slots = 0;
	rl = make(&c);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(sk_ratelimit_ip_take(rl, 7, T0, NULL), SK_RL_PASS);
	sk_ratelimit_free(rl);
}
END_TEST

/* Item limits: default per slot, per-slot override, NO_ITEM skips it. */
START_TEST(test_item_limits)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;
	uint32_t ip = 1;
	int i;

	c.item_rate = 10;
	c.item_burst = 2;
	c.ip_slots = 0; /* per-IP off: only the item limit here */
	rl = make(&c);
	ck_assert_int_eq(sk_ratelimit_item_set(rl, 3, 1, 5), 0);
	ck_assert_int_eq(sk_ratelimit_item_set(rl, 8, 1, 5), -EINVAL);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip++, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip++, T0, &wait), SK_RL_REFUSED_ITEM);
	ck_assert_uint_eq(wait, SEC / 10);
	/* slot 1 has its own bucket */
	ck_assert_int_eq(sk_ratelimit_check(rl, 1, ip++, T0, NULL), SK_RL_PASS);
	/* slot 3 was given burst 5, rate 1 */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 3, ip++, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 3, ip++, T0, &wait), SK_RL_REFUSED_ITEM);
	ck_assert_uint_eq(wait, SEC);
	ck_assert_uint_eq(sk_ratelimit_retry_after(wait, HZ), 1);
	/* no item: no item limit */
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(sk_ratelimit_check(rl, SK_RL_NO_ITEM, ip++, T0, NULL), SK_RL_PASS);
	check_totals(rl, 2 + 1 + 1 + 5 + 1 + 100);
	sk_ratelimit_free(rl);
}
END_TEST

/* A cart's further items: decided without a charge, charged on commit. */
START_TEST(test_item_admit_commit)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;

	c.item_rate = 10;
	c.item_burst = 2;
	c.ip_slots = 0;
	rl = make(&c);
	/* deciding alone charges nothing: as often as asked */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(sk_ratelimit_item_admit(rl, 1, T0, NULL), SK_RL_PASS);
	sk_ratelimit_item_commit(rl, 1, T0);
	sk_ratelimit_item_commit(rl, 1, T0);
	ck_assert_int_eq(sk_ratelimit_item_admit(rl, 1, T0, &wait), SK_RL_REFUSED_ITEM);
	ck_assert_uint_eq(wait, SEC / 10);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->refused[SK_RL_REFUSED_ITEM], 1);
	ck_assert_int_eq(sk_ratelimit_item_admit(rl, 1, T0 + SEC / 10, NULL), SK_RL_PASS);
	/* the other slots and the global bucket were not charged */
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 1, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 1, T0, NULL), SK_RL_PASS);
	sk_ratelimit_free(rl);
}
END_TEST

/* Global and item values are divided among lcores (rounded up); IP is not. */
START_TEST(test_lcore_share)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint64_t wait = 0;
	unsigned passed = 0, i;

	c.n_lcores = 4;
	c.global_rate = 400;
	c.global_burst = 10; /* 3 per lcore */
	c.ip_rate = 1;
	c.ip_burst = 1000;
	rl = make(&c);
	for (i = 0; i < 10; i++)
		passed += sk_ratelimit_check(rl, 0, 99, T0, &wait) == SK_RL_PASS;
	ck_assert_uint_eq(passed, 3);
	ck_assert_uint_eq(wait, SEC / 100); /* 100/s per lcore */
	/* sustained: 1 s of requests every 100 us gives this lcore's 100/s */
	passed = 0;
	for (i = 1; i <= 10000; i++)
		passed += sk_ratelimit_check(rl, 0, 99, T0 + (uint64_t)i * (SEC / 10000), NULL) ==
			  SK_RL_PASS;
	ck_assert_uint_eq(passed, 100);
	sk_ratelimit_free(rl);
}
END_TEST

/*
 * Fixed memory: 16 entries, 100000 distinct addresses at one instant.
 * Nothing grows; the 16 first take the entries, and since those still owe,
 * every later one is decided by its set's shared overflow bucket (burst 1:
 * one more per set). Once the entries are idle, newcomers take them again.
 */
START_TEST(test_ip_table_fixed_memory)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	ssize_t sz, sz_small;
	unsigned passed = 0;
	uint32_t ip;

	c.ip_rate = 1;
	c.ip_burst = 1;
	c.ip_slots = 16;
	c.n_items = 0;
	sz = sk_ratelimit_memsize(&c);
	ck_assert_int_gt(sz, 0);
	c.ip_slots = 4;
	sz_small = sk_ratelimit_memsize(&c);
	ck_assert_int_eq(sz - sz_small, 3 * 64); /* 16 bytes per entry, 4 per line */
	c.ip_slots = 16;
	ck_assert_int_eq(sz % 64, 0);
	rl = make(&c);
	for (ip = 1; ip <= 100000; ip++)
		passed += sk_ratelimit_check(rl, SK_RL_NO_ITEM, ip, T0, NULL) == SK_RL_PASS;
	ck_assert_uint_eq(passed, 16 + 4);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->ip_overflow, 100000 - 16);
	ck_assert_int_eq(sk_ratelimit_memsize(&c), sz);
	/* a second later every bucket is full again: as many newcomers pass */
	passed = 0;
	for (ip = 200001; ip <= 201000; ip++)
		passed += sk_ratelimit_check(rl, SK_RL_NO_ITEM, ip, T0 + SEC, NULL) == SK_RL_PASS;
	ck_assert_uint_eq(passed, 16 + 4);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->ip_overflow, 100000 - 16 + 1000 - 16);
	check_totals(rl, 101000);
	sk_ratelimit_free(rl);
}
END_TEST

/*
 * One set of 4 ways: 4 clients are tracked exactly. Newcomers while all 4
 * owe share the overflow bucket; the 4 keep their debt (an eviction would
 * have handed one of them a full bucket again).
 */
START_TEST(test_ip_table_one_set)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	uint32_t ip;

	c.ip_rate = 1;
	c.ip_burst = 2;
	c.ip_slots = 4;
	rl = make(&c);
	for (ip = 1; ip <= 4; ip++) {
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip, T0, NULL), SK_RL_PASS);
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip, T0, NULL), SK_RL_PASS);
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip, T0, NULL), SK_RL_REFUSED_IP);
	}
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->ip_overflow, 0);
	/* newcomers 5, 6, 7: the overflow bucket's burst of 2, then refused */
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 5, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 6, T0, NULL), SK_RL_PASS);
	ck_assert_int_eq(sk_ratelimit_check(rl, 0, 7, T0, NULL), SK_RL_REFUSED_IP);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->ip_overflow, 3);
	for (ip = 1; ip <= 4; ip++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip, T0 + SEC / 2, NULL),
				 SK_RL_REFUSED_IP);
	/* once idle (2 s later every bucket is full) entries are reused silently */
	for (ip = 6; ip <= 9; ip++)
		ck_assert_int_eq(sk_ratelimit_check(rl, 0, ip, T0 + 3 * SEC, NULL), SK_RL_PASS);
	ck_assert_uint_eq(sk_ratelimit_stats_get(rl)->ip_overflow, 3);
	check_totals(rl, 12 + 3 + 4 + 4);
	sk_ratelimit_free(rl);
}
END_TEST

/*
 * A legitimate newcomer is never locked out for good. Table: @flooders
 * addresses of one set send every ms until @flood_end; the newcomer tries
 * every 100 ms from @first; it must pass by @pass_by (ms after T0). With
 * fewer than 5 flooders the overflow bucket is free for it at once; with 5
 * or more it shares that bucket with the flood until the flood ends, and
 * then waits at most burst / rate for the entries' debt to run out.
 */
static const struct {
	unsigned flooders;
	unsigned flood_end, first, pass_by; /* ms */
} newcomer_cases[] = {
	{0, 0, 100, 100},	 /* empty set */
	{3, 5000, 100, 100},	 /* a free entry */
	{4, 5000, 100, 100},	 /* all 4 owe: the overflow bucket */
	{8, 5000, 100, 8000},	 /* the flood holds the set: after it */
	{32, 5000, 100, 8000},	 /* however many take turns */
	{8, 5000, 6000, 8000},	 /* arriving after the flood */
	{8, 5000, 10000, 10000}, /* long after: at once */
};

START_TEST(test_ip_newcomer_not_locked_out)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	const uint32_t newcomer = 0x0b000001;
	unsigned ms, first_pass = UINT32_MAX, k = 0;

	c.ip_rate = 1;
	c.ip_burst = 2;
	c.ip_slots = 4;
	rl = make(&c);
	for (ms = 0; ms <= 12000 && first_pass == UINT32_MAX; ms++) {
		uint64_t now = T0 + (uint64_t)ms * (SEC / 1000);

		if (newcomer_cases[_i].flooders > 0 && ms < newcomer_cases[_i].flood_end)
			sk_ratelimit_check(rl, SK_RL_NO_ITEM,
					   0x0a000001 + k++ % newcomer_cases[_i].flooders, now,
					   NULL);
		if (ms >= newcomer_cases[_i].first && ms % 100 == 0 &&
		    sk_ratelimit_check(rl, SK_RL_NO_ITEM, newcomer, now, NULL) == SK_RL_PASS)
			first_pass = ms;
	}
	ck_assert_msg(first_pass <= newcomer_cases[_i].pass_by, "newcomer first passed at %u ms",
		      first_pass);
	sk_ratelimit_free(rl);
}
END_TEST

/*
 * Rotation (issue 11): n addresses take turns, one request every 1 ms for
 * 10 s, at 1/s with a burst of 2 each. However they collide, no address
 * passes more than its own bucket allows (burst + rate x time), and a set
 * passes at most its 4 entries' share plus its shared overflow bucket's.
 * With ip_slots = 4 every address collides; with the old "evict the least
 * debt" policy, 5 of them evicted each other and every request passed.
 */
static const struct {
	uint32_t ip_slots;
	unsigned n_addrs;
	uint32_t stride; /* between addresses */
	uint64_t seed;
	unsigned min_each; /* every address passes at least this (0: no bound) */
} rotation_cases[] = {
	{4, 1, 1, 0x1234abcd, 11},   {4, 2, 1, 0x1234abcd, 11},	 {4, 4, 1, 0x1234abcd, 11},
	{4, 5, 1, 0x1234abcd, 0},    {4, 6, 7, 0x99, 0},	 {4, 8, 1, 0x1234abcd, 0},
	{64, 256, 1, 0x1234abcd, 0}, {64, 256, 4099, 0x5eed, 0}, {1024, 4096, 1, 0x77, 0},
};

#define ROT_RATE  1
#define ROT_BURST 2
#define ROT_SECS  10
#define ROT_MAX	  (ROT_BURST + ROT_RATE * ROT_SECS) /* one bucket over the run */

START_TEST(test_ip_rotation_bounded)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl;
	static unsigned passed[4096];
	unsigned n = rotation_cases[_i].n_addrs, total = 0, k;
	uint32_t sets = rotation_cases[_i].ip_slots / 4;

	ck_assert_uint_le(n, SK_ARRAY_SIZE(passed));
	c.ip_rate = ROT_RATE;
	c.ip_burst = ROT_BURST;
	c.ip_slots = rotation_cases[_i].ip_slots;
	c.seed = rotation_cases[_i].seed;
	rl = make(&c);
	memset(passed, 0, sizeof(passed));
	for (k = 0; k < ROT_SECS * 1000u; k++) {
		uint32_t ip = 0x0a000001u + (k % n) * rotation_cases[_i].stride;

		if (sk_ratelimit_check(rl, SK_RL_NO_ITEM, ip, T0 + (uint64_t)k * (SEC / 1000),
				       NULL) == SK_RL_PASS)
			passed[k % n]++;
	}
	for (k = 0; k < n; k++) {
		ck_assert_msg(passed[k] <= ROT_MAX, "address %u passed %u, at most %u", k,
			      passed[k], ROT_MAX);
		ck_assert_uint_ge(passed[k], rotation_cases[_i].min_each);
		total += passed[k];
	}
	ck_assert_uint_le(total, sets * 5 * ROT_MAX);
	check_totals(rl, ROT_SECS * 1000u);
	sk_ratelimit_free(rl);
}
END_TEST

/* Caller-provided memory: alignment and size are checked. */
START_TEST(test_init_memory)
{
	struct sk_ratelimit_config c = base_cfg();
	ssize_t sz = sk_ratelimit_memsize(&c);
	char *mem;

	ck_assert_int_gt(sz, 0);
	mem = aligned_alloc(64, (size_t)sz + 64);
	ck_assert_ptr_nonnull(mem);
	errno = 0;
	ck_assert_ptr_null(sk_ratelimit_init(mem + 8, (size_t)sz, &c));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(sk_ratelimit_init(mem, (size_t)sz - 1, &c));
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_ptr_eq(sk_ratelimit_init(mem, (size_t)sz, &c), (void *)mem);
	ck_assert_int_eq(sk_ratelimit_check((struct sk_ratelimit *)mem, 7, 1, T0, NULL),
			 SK_RL_PASS);
	free(mem);
}
END_TEST

/* Each case breaks one field of a valid config. */
static void
edit_cfg(int which, struct sk_ratelimit_config *c)
{
	switch (which) {
	case 0:
		c->hz = 0;
		break;
	case 1:
		c->n_lcores = 0;
		break;
	case 2:
		c->ip_slots = 3;
		break;
	case 3:
		c->ip_slots = 24;
		break;
	case 4:
		c->ip_slots = 2;
		break;
	case 5:
		c->ip_slots = SK_RL_IP_SLOTS_MAX * 2u;
		break;
	case 6:
		c->n_items = SK_RL_ITEMS_MAX + 1;
		break;
	case 7:
		c->global_burst = SK_RL_BURST_MAX + 1;
		break;
	case 8:
		c->item_burst = SK_RL_BURST_MAX + 1;
		break;
	case 9:
		c->ip_burst = SK_RL_BURST_MAX + 1;
		break;
	default:
		ck_abort();
	}
}

START_TEST(test_bad_config)
{
	struct sk_ratelimit_config c = base_cfg();
	struct sk_ratelimit *rl = NULL;

	edit_cfg(_i, &c);
	ck_assert_int_eq(sk_ratelimit_memsize(&c), -EINVAL);
	ck_assert_int_eq(sk_ratelimit_create(&c, &rl), -EINVAL);
	ck_assert_ptr_null(rl);
}
END_TEST

static const struct {
	uint64_t wait, hz;
	uint32_t want;
} retry_cases[] = {
	{0, HZ, 1},
	{1, HZ, 1},
	{HZ, HZ, 1},
	{HZ + 1, HZ, 2},
	{10 * HZ, HZ, 10},
	{7200 * HZ, HZ, SK_RL_RETRY_AFTER_MAX},
	{UINT64_MAX, HZ, SK_RL_RETRY_AFTER_MAX},
	{5, 0, 1},
};

START_TEST(test_retry_after)
{
	ck_assert_uint_eq(sk_ratelimit_retry_after(retry_cases[_i].wait, retry_cases[_i].hz),
			  retry_cases[_i].want);
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_bucket_burst, 0, (int)SK_ARRAY_SIZE(burst_cases));
	tcase_add_test(tc, test_bucket_refill);
	tcase_add_test(tc, test_bucket_sustained);
	tcase_add_test(tc, test_bucket_init_errors);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_ip_isolation);
	tcase_add_test(tc, test_global_all_or_nothing);
	tcase_add_test(tc, test_admit_commit);
	tcase_add_test(tc, test_item_limits);
	tcase_add_test(tc, test_item_admit_commit);
	tcase_add_test(tc, test_lcore_share);
	tcase_add_test(tc, test_ip_table_fixed_memory);
	tcase_add_test(tc, test_ip_table_one_set);
	tcase_add_loop_test(tc, test_ip_newcomer_not_locked_out, 0,
			    (int)SK_ARRAY_SIZE(newcomer_cases));
	tcase_add_loop_test(tc, test_ip_rotation_bounded, 0, (int)SK_ARRAY_SIZE(rotation_cases));
	tcase_add_test(tc, test_init_memory);
	tcase_add_loop_test(tc, test_bad_config, 0, 10);
	tcase_add_loop_test(tc, test_retry_after, 0, (int)SK_ARRAY_SIZE(retry_cases));
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(ratelimit_suite)
