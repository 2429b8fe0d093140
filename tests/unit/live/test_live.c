/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_live.c - the live settings block (generations, validation naming
 * the key, the spare slot and deny buffer reused only once every lcore
 * moved on, a reader thread switching under a writer) and the deny lists
 * (users, IPv4/IPv6 prefixes of several lengths, 1M entries, the file
 * format, full lists).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_deny.h"
#include "sk_live.h"
#include "sk_test.h"

static struct sk_live_settings
first_settings(void)
{
	struct sk_live_settings s = {
		.limits = {.ip_rate = 20, .ip_burst = 40, .user_rate = 10, .user_burst = 20},
		.log_level = 1,
	};
	return s;
}

/* cache_alloc - @size bytes (> 0), cache-line aligned; free(). */
static void *
cache_alloc(size_t size)
{
	ck_assert_uint_gt(size, 0);
	void *mem = aligned_alloc(SK_CACHE_LINE, sk_align_up(size, SK_CACHE_LINE));
	ck_assert_ptr_nonnull(mem);
	return mem;
}

static struct sk_live_zone *
make_zone(uint32_t nlcores, uint32_t deny_cap, void **mem)
{
	size_t size = sk_live_size(deny_cap);
	struct sk_live_settings f = first_settings();

	*mem = cache_alloc(size);
	struct sk_live_zone *z = sk_live_init(*mem, size, nlcores, deny_cap, &f);
	ck_assert_ptr_nonnull(z);
	return z;
}

/* ------------------------------------------------------------ generations */

START_TEST(test_init_and_attach)
{
	void *mem;
	struct sk_live_zone *z = make_zone(4, 1024, &mem);
	char err[128];

	ck_assert_uint_eq(atomic_load(&z->gen), 1);
	ck_assert_uint_eq(sk_live_current(z)->gen, 1);
	ck_assert(sk_live_quiescent(z));
	ck_assert_ptr_eq(sk_live_attach(mem, z->size, err, sizeof(err)), z);
	ck_assert_ptr_null(sk_live_attach(mem, 64, err, sizeof(err)));
	z->magic ^= 1;
	ck_assert_ptr_null(sk_live_attach(mem, z->size, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "version"));
	free(mem);
}
END_TEST

static const struct {
	size_t off; /* offset of the uint64/uint32 field to spoil */
	bool u32;
	const char *key;
} bad_cases[] = {
	{offsetof(struct sk_live_settings, limits.global_rate), false, "global_rate"},
	{offsetof(struct sk_live_settings, limits.global_burst), false, "global_burst"},
	{offsetof(struct sk_live_settings, limits.item_rate), false, "item_rate"},
	{offsetof(struct sk_live_settings, limits.item_burst), false, "item_burst"},
	{offsetof(struct sk_live_settings, limits.ip_rate), false, "ip_rate"},
	{offsetof(struct sk_live_settings, limits.ip_burst), false, "ip_burst"},
	{offsetof(struct sk_live_settings, limits.user_rate), false, "user_rate"},
	{offsetof(struct sk_live_settings, limits.user_burst), false, "user_burst"},
	{offsetof(struct sk_live_settings, log_level), true, "log_level"},
	{offsetof(struct sk_live_settings, deny_buf), true, "deny_buf"},
	{offsetof(struct sk_live_settings, keys.n), true, "keys"}, /* 1000 keys, none there */
};

/* A bad change is refused whole, naming its key; nothing is published. */
START_TEST(test_bad_change_names_key)
{
	void *mem;
	struct sk_live_zone *z = make_zone(2, 0, &mem);
	struct sk_live_settings *s = sk_live_begin(z);
	const char *key = NULL;

	ck_assert_ptr_nonnull(s);
	s->limits.user_rate = 99; /* a good change beside the bad one */
	if (bad_cases[_i].u32)
		*(uint32_t *)((char *)s + bad_cases[_i].off) = 1000;
	else
		*(uint64_t *)((char *)s + bad_cases[_i].off) = SK_LIVE_RATE_MAX + 1;
	ck_assert_int_eq(sk_live_publish(z, s, "limits", 5, &key), -EINVAL);
	ck_assert_str_eq(key, bad_cases[_i].key);
	ck_assert_uint_eq(atomic_load(&z->gen), 1);
	ck_assert_uint_eq(sk_live_current(z)->limits.user_rate, 10);
	free(mem);
}
END_TEST

/* Publish, lcores switch, the spare is reusable only once all switched. */
START_TEST(test_generations_and_quiescence)
{
	void *mem;
	struct sk_live_zone *z = make_zone(3, 0, &mem);
	struct sk_live_settings *s = sk_live_begin(z);
	uint64_t mine[3] = {1, 1, 1};

	s->limits.user_rate = 5;
	ck_assert_int_eq(sk_live_publish(z, s, "limits", 1000, NULL), 2);
	ck_assert_str_eq(sk_live_current(z)->what, "limits");
	ck_assert_int_eq(sk_live_current(z)->when_ns, 1000);
	/* Nobody switched yet: the next change must wait. */
	ck_assert(!sk_live_quiescent(z));
	errno = 0;
	ck_assert_ptr_null(sk_live_begin(z));
	ck_assert_int_eq(errno, EBUSY);
	for (uint32_t l = 0; l < 3; l++) {
		uint64_t g = sk_live_changed(z, mine[l]);

		ck_assert_uint_eq(g, 2);
		ck_assert_uint_eq(sk_live_slot(z, g)->limits.user_rate, 5);
		mine[l] = g;
		sk_live_ack(z, l, g);
		ck_assert(l == 2 ? sk_live_quiescent(z) : !sk_live_quiescent(z));
		ck_assert_uint_eq(sk_live_changed(z, mine[l]), 0);
	}
	s = sk_live_begin(z);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->limits.user_rate, 5); /* a copy of the current */
	free(mem);
}
END_TEST

/* A reader thread applies every generation a writer publishes; it never
 * sees a slot being written (each slot's fields agree with its gen). */
struct reader {
	struct sk_live_zone *z;
	atomic_bool stop;
	uint64_t seen, torn;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t mine = 1;

	while (!atomic_load(&r->stop)) {
		uint64_t g = sk_live_changed(r->z, mine);

		if (g == 0)
			continue;
		const struct sk_live_settings *s = sk_live_slot(r->z, g);
		for (int i = 0; i < 100; i++)
			if (s->gen != g || s->limits.user_rate != g ||
			    s->limits.user_burst != 2 * g)
				r->torn++;
		mine = g;
		r->seen++;
		sk_live_ack(r->z, 0, g);
	}
	return NULL;
}

START_TEST(test_reader_never_sees_a_write)
{
	void *mem;
	struct sk_live_zone *z = make_zone(1, 0, &mem);
	struct reader r = {.z = z};
	pthread_t t;
	uint64_t published = 1;
	int64_t end = sk_clock_ns(CLOCK_MONOTONIC) + 60 * 1000000000LL; /* a bound, not a guess */

	ck_assert_int_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	while (published < 2000 && sk_clock_ns(CLOCK_MONOTONIC) < end) {
		struct sk_live_settings *s = sk_live_begin(z);

		if (s == NULL) {
			sched_yield(); /* the reader has not switched yet: let it run */
			continue;
		}
		s->limits.user_rate = published + 1;
		s->limits.user_burst = 2 * (published + 1);
		ck_assert_int_eq(sk_live_publish(z, s, "limits", 0, NULL), (int64_t)published + 1);
		published++;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	ck_assert_uint_eq(published, 2000);
	ck_assert_uint_eq(r.torn, 0);
	ck_assert_uint_gt(r.seen, 0);
	free(mem);
}
END_TEST

/* ------------------------------------------------------------ deny lists */

static struct sk_deny *
make_deny(uint32_t cap, void **mem)
{
	size_t size = sk_deny_size(cap);

	*mem = cache_alloc(size);
	struct sk_deny *d = sk_deny_init(*mem, size, cap);
	ck_assert_ptr_nonnull(d);
	return d;
}

static struct sk_prefix
pfx(const char *s)
{
	struct sk_prefix p;

	ck_assert_int_eq(sk_prefix_parse(s, strlen(s), &p), SK_ADDR_OK);
	return p;
}

static struct sk_addr
addr(const char *s)
{
	struct sk_addr a;

	ck_assert_int_eq(sk_addr_parse(s, strlen(s), &a), SK_ADDR_OK);
	return a;
}

static const struct {
	const char *addr;
	bool denied;
} addr_cases[] = {
	{"198.18.7.9", true}, /* in 198.18.7.0/24 */
	{"198.18.8.9", false},
	{"198.19.200.1", true}, /* in 198.19.0.0/16 */
	{"198.20.0.1", false},
	{"203.0.113.5", true}, /* the /32 */
	{"203.0.113.6", false},
	{"20.1.2.3", true}, /* in 20.0.0.0/8 */
	{"21.0.0.0", false},
	{"2001:2::1", false},
	{"2001:2:0:5::77", true},      /* in 2001:2:0:5::/64 */
	{"2001:2:ff00::1", true},      /* in 2001:2:ff00::/40 */
	{"2001:2:ff01::1", true},      /* also in it (/40) */
	{"2001:2:1:0:0:0:0:42", true}, /* the /128 */
	{"2001:2:1:0:0:0:0:43", false},
};

START_TEST(test_deny_prefixes)
{
	void *mem;
	struct sk_deny *d = make_deny(64, &mem);
	static const char *const list[] = {"198.18.7.0/24",   "198.19.0.0/16",	 "203.0.113.5",
					   "20.0.0.0/8",      "2001:2:0:5::/64", "2001:2:ff00::/40",
					   "2001:2:1::42/128"};

	ck_assert(sk_deny_empty(d));
	for (size_t i = 0; i < SK_ARRAY_SIZE(list); i++) {
		struct sk_prefix p = pfx(list[i]);

		ck_assert_int_eq(sk_deny_add_prefix(d, &p), 0);
		ck_assert_int_eq(sk_deny_add_prefix(d, &p), 0); /* twice is once */
	}
	ck_assert_uint_eq(d->n_v4, 4);
	ck_assert_uint_eq(d->n_v6, 3);
	ck_assert_uint_eq(d->n_v4_lens, 4);
	ck_assert_uint_eq(d->v4_lens[0], 32); /* longest first */
	for (size_t i = 0; i < SK_ARRAY_SIZE(addr_cases); i++) {
		struct sk_addr a = addr(addr_cases[i].addr);

		ck_assert_msg(sk_deny_addr(d, &a) == addr_cases[i].denied, "%s",
			      addr_cases[i].addr);
	}
	sk_deny_clear_prefixes(d);
	struct sk_addr a = addr("20.1.2.3");
	ck_assert(!sk_deny_addr(d, &a));
	free(mem);
}
END_TEST

START_TEST(test_deny_users_full)
{
	void *mem;
	struct sk_deny *d = make_deny(100, &mem);

	for (uint64_t u = 1; u <= 100; u++)
		ck_assert_int_eq(sk_deny_add_user(d, u * 7919), 0);
	ck_assert_int_eq(sk_deny_add_user(d, 7919), 0); /* already there */
	ck_assert_int_eq(sk_deny_add_user(d, 1), -ENOSPC);
	ck_assert_int_eq(sk_deny_add_user(d, 0), -EINVAL);
	for (uint64_t u = 1; u <= 1000; u++)
		ck_assert(sk_deny_user(d, u) == (u % 7919 == 0 && u / 7919 <= 100));
	ck_assert(sk_deny_user(d, 7919 * 100));
	sk_deny_clear_users(d);
	ck_assert(!sk_deny_user(d, 7919));
	free(mem);
}
END_TEST

/* 1M users and 1M IPv4 + 1M IPv6 prefixes: every one found, strangers not. */
START_TEST(test_deny_million)
{
	const uint32_t n = 1u << 20;
	void *mem;
	struct sk_deny *d = make_deny(n, &mem);
	struct sk_prefix p = {.addr = {.family = SK_ADDR_V4}, .len = 32};
	struct sk_prefix q = {.addr = {.family = SK_ADDR_V6}, .len = 128};

	for (uint64_t u = 1; u <= n; u++)
		ck_assert_int_eq(sk_deny_add_user(d, u * 0x9e3779b97f4a7c15ULL | 1), 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ip = 0x14000000u + i;

		p.addr.bytes[0] = (uint8_t)(ip >> 24);
		p.addr.bytes[1] = (uint8_t)(ip >> 16);
		p.addr.bytes[2] = (uint8_t)(ip >> 8);
		p.addr.bytes[3] = (uint8_t)ip;
		ck_assert_int_eq(sk_deny_add_prefix(d, &p), 0);
		q.addr.bytes[0] = 0x20;
		q.addr.bytes[1] = 0x01;
		q.addr.bytes[3] = 0x02;
		memcpy(q.addr.bytes + 12, &i, 4);
		ck_assert_int_eq(sk_deny_add_prefix(d, &q), 0);
	}
	ck_assert_uint_eq(d->n_users, n);
	ck_assert_int_eq(sk_deny_add_user(d, 3), -ENOSPC);
	for (uint64_t u = 1; u <= n; u += 97) {
		ck_assert(sk_deny_user(d, u * 0x9e3779b97f4a7c15ULL | 1));
		ck_assert(!sk_deny_user(d, u * 0x9e3779b97f4a7c15ULL + 2 * (u & 1 ? 1 : 2)));
	}
	struct sk_addr a = {.family = SK_ADDR_V4, .bytes = {20, 15, 255, 255}};
	ck_assert(sk_deny_addr(d, &a)); /* 20.0.0.0 + 2^20 - 1 */
	a.bytes[1] = 16;
	a.bytes[2] = 0;
	a.bytes[3] = 0;
	ck_assert(!sk_deny_addr(d, &a));
	a = q.addr; /* the last IPv6 one */
	ck_assert(sk_deny_addr(d, &a));
	a.bytes[15] ^= 0x80;
	ck_assert(!sk_deny_addr(d, &a));
	free(mem);
}
END_TEST

START_TEST(test_deny_load_file)
{
	void *mem;
	struct sk_deny *d = make_deny(16, &mem);
	char good[] = "# users\n42\n  77  \n\n18446744073709551615\n";
	char bad[] = "42\n0042\n";
	char pgood[] = "198.18.0.0/15\n2001:2::/48\n# done\n";
	char pbad[] = "198.18.0.1/15\n"; /* host bits set */
	unsigned long line = 0;
	FILE *f;

	f = fmemopen(good, strlen(good), "r");
	ck_assert_int_eq(sk_deny_load(d, f, false, &line), 3);
	fclose(f);
	ck_assert(sk_deny_user(d, 77));
	ck_assert(sk_deny_user(d, UINT64_MAX));
	f = fmemopen(bad, strlen(bad), "r");
	ck_assert_int_eq(sk_deny_load(d, f, false, &line), -EINVAL);
	ck_assert_uint_eq(line, 2);
	fclose(f);
	f = fmemopen(pgood, strlen(pgood), "r");
	ck_assert_int_eq(sk_deny_load(d, f, true, &line), 2);
	fclose(f);
	struct sk_addr a = addr("198.19.1.1");
	ck_assert(sk_deny_addr(d, &a));
	f = fmemopen(pbad, strlen(pbad), "r");
	ck_assert_int_eq(sk_deny_load(d, f, true, &line), -EINVAL);
	ck_assert_uint_eq(line, 1);
	fclose(f);
	free(mem);
}
END_TEST

/* The spare deny buffer: built while the lcores read the other, swapped
 * by a generation, and the old one free again only after all moved on. */
START_TEST(test_deny_swap)
{
	void *mem;
	struct sk_live_zone *z = make_zone(2, 1024, &mem);
	struct sk_live_settings *s = sk_live_begin(z);
	uint32_t spare = 1 - sk_live_current(z)->deny_buf;
	struct sk_deny *d = sk_live_deny_buf(z, spare);
	const struct sk_deny *old = sk_live_deny_buf(z, sk_live_current(z)->deny_buf);

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(sk_deny_copy(d, old), 0);
	ck_assert_int_eq(sk_deny_add_user(d, 5), 0);
	s->deny_buf = spare;
	s->deny_users = d->n_users;
	ck_assert_int_eq(sk_live_publish(z, s, "deny", 0, NULL), 2);
	ck_assert(!sk_deny_user(old, 5)); /* a late reader still sees the old list */
	const struct sk_live_settings *now = sk_live_slot(z, 2);
	ck_assert(sk_deny_user(sk_live_deny_buf(z, now->deny_buf), 5));
	ck_assert_ptr_null(sk_live_begin(z)); /* the old buffer is still in use */
	sk_live_ack(z, 0, 2);
	sk_live_ack(z, 1, 2);
	ck_assert_ptr_nonnull(sk_live_begin(z));
	free(mem);
}
END_TEST

static Suite *
live_suite(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_init_and_attach);
	tcase_add_loop_test(tc, test_bad_change_names_key, 0, (int)SK_ARRAY_SIZE(bad_cases));
	tcase_add_test(tc, test_generations_and_quiescence);
	tcase_add_test(tc, test_reader_never_sees_a_write);
	tcase_add_test(tc, test_deny_prefixes);
	tcase_add_test(tc, test_deny_users_full);
	tcase_add_test(tc, test_deny_million);
	tcase_add_test(tc, test_deny_load_file);
	tcase_add_test(tc, test_deny_swap);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(live_suite)
