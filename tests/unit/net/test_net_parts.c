/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_parts.c - the stack's building blocks without EAL: SipHash-2-4
 * against the reference vectors, SYN-cookie encode/check, and the timer
 * wheel (every entry fires once, not early, within its tick; budget bound),
 * and the word-at-a-time checksums against DPDK's.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <rte_tcp.h>

#include "sk_cksum.h"
#include "sk_common.h"
#include "sk_net_priv.h"
#include "sk_syncookie.h"
#include "sk_timer_wheel.h"
#include "sk_test.h"

START_TEST(siphash_vectors)
{
	/* From the SipHash paper / reference implementation (vectors.h), key 00..0f. */
	static const struct {
		size_t len;
		uint64_t out;
	} t[] = {{0, 0x726fdb47dd0e0e31ull},  {1, 0x74f839c593dc67fdull},
		 {7, 0xab0200f58b01d137ull},  {8, 0x93f5f5799a932462ull},
		 {15, 0xa129ca6149be45e5ull}, {63, 0x958a324ceb064572ull}};
	uint8_t key[16], msg[64];

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	uint64_t k0, k1;
	memcpy(&k0, key, 8); /* little-endian host */
	memcpy(&k1, key + 8, 8);
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++)
		ck_assert_uint_eq(sk_siphash24(k0, k1, msg, t[i].len), t[i].out);
}
END_TEST

START_TEST(syncookie_roundtrip)
{
	struct sk_syncookie sc;
	uint8_t secret[16];
	const uint64_t period = 64000;
	uint64_t x = 99;

	for (int i = 0; i < 16; i++)
		secret[i] = (uint8_t)(i * 31 + 1);
	sk_syncookie_init(&sc, secret, period);
	/* Table of client MSS -> encoded MSS. */
	static const struct {
		uint16_t in, out;
	} mss[] = {{100, 256},	 {256, 256},   {535, 256},   {536, 536},    {1460, 1460},
		   {1459, 1440}, {1500, 1460}, {8960, 8960}, {65535, 8960}, {1220, 1220}};
	for (int i = 0; i < 2000; i++) {
		struct sk_syncookie_flow f = {0}, g;
		uint16_t m_in = mss[i % SK_ARRAY_SIZE(mss)].in, m_out, m_chk;
		uint64_t now;
		uint32_t ck;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		f.saddr = (uint32_t)(x >> 32);
		f.daddr = 0xc6120001;
		f.sport = (uint16_t)x;
		f.dport = 80;
		f.client_isn = (uint32_t)(x >> 7);
		now = (x >> 20) % (1ull << 40);
		ck = sk_syncookie_make(&sc, &f, m_in, now, &m_out);
		ck_assert_uint_eq(m_out, mss[i % SK_ARRAY_SIZE(mss)].out);
		/* Same inputs, same slot: same cookie (retransmitted SYN). */
		ck_assert_uint_eq(sk_syncookie_make(&sc, &f, m_in, now, NULL), ck);
		ck_assert(sk_syncookie_check(&sc, &f, ck, now, &m_chk));
		ck_assert_uint_eq(m_chk, m_out);
		/* Valid through the next slot, not the one after. */
		ck_assert(sk_syncookie_check(&sc, &f, ck, (now / period + 1) * period + 5, NULL));
		ck_assert(!sk_syncookie_check(&sc, &f, ck, (now / period + 2) * period, NULL));
		/* Any change of flow, ISN or cookie bits fails. */
		g = f;
		g.sport++;
		ck_assert(!sk_syncookie_check(&sc, &g, ck, now, NULL));
		g = f;
		g.saddr ^= 1;
		ck_assert(!sk_syncookie_check(&sc, &g, ck, now, NULL));
		g = f;
		g.client_isn++;
		ck_assert(!sk_syncookie_check(&sc, &g, ck, now, NULL));
		ck_assert(!sk_syncookie_check(&sc, &f, ck ^ (1u << (i % 32)), now, NULL));
	}
	/* A different secret rejects. */
	struct sk_syncookie other;
	struct sk_syncookie_flow f = {1, 2, 3, 4, 5, NULL, NULL};
	secret[0] ^= 1;
	sk_syncookie_init(&other, secret, period);
	uint32_t ck = sk_syncookie_make(&sc, &f, 1460, 1000000, NULL);
	ck_assert(!sk_syncookie_check(&other, &f, ck, 1000000, NULL));
}
END_TEST

/* Timer wheel */

#define NT 3000

struct ent {
	struct sk_timer t;
	uint64_t due;
	uint64_t fired_at;
	int fires;
	int rearm; /* re-arm this many times */
	int want;  /* expected number of fires */
};

struct wctx {
	uint64_t now;
	struct sk_timer_wheel *w;
	struct ent *e;
};

static void
fire(void *ctx, struct sk_timer *t)
{
	struct wctx *c = ctx;
	struct ent *e = (struct ent *)t;

	ck_assert(!sk_timer_armed(t));
	ck_assert_uint_le(e->due, c->now); /* never early */
	e->fires++;
	e->fired_at = c->now;
	if (e->rearm > 0) {
		e->rearm--;
		e->due = c->now + 1 + (e->due % 700);
		sk_timer_wheel_arm(c->w, t, e->due);
	}
}

START_TEST(wheel_random)
{
	static struct sk_timer slots[64];
	static struct ent ents[NT];
	struct sk_timer_wheel w;
	struct wctx c = {.w = &w, .e = ents};
	uint64_t x = 7;
	int expected = 0, total = 0;

	ck_assert_int_eq(sk_timer_wheel_init(&w, slots, 63), -22);
	ck_assert_int_eq(sk_timer_wheel_init(&w, slots, 64), 0);
	c.now = 5000;
	memset(ents, 0, sizeof(ents));
	for (int i = 0; i < NT; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ents[i].due = c.now + 1 + (x >> 33) % 2000; /* many revolutions of 64 */
		ents[i].rearm = (int)((x >> 20) % 3);
		ents[i].want = 1 + ents[i].rearm;
		expected += 1 + ents[i].rearm;
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	}
	/* Cancel every 10th; move every 7th later. */
	for (int i = 0; i < NT; i += 10) {
		sk_timer_wheel_cancel(&w, &ents[i].t);
		sk_timer_wheel_cancel(&w, &ents[i].t);
		expected -= 1 + ents[i].rearm;
	}
	for (int i = 3; i < NT; i += 7) {
		if (i % 10 == 0)
			continue;
		ents[i].due += 333;
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	}
	/* Advance with irregular steps (including gaps longer than a revolution). */
	for (int step = 0; step < 4000 && c.now < 20000; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		c.now += (step % 50 == 0) ? 150 : (x >> 40) % 4;
		total += (int)sk_timer_wheel_advance(&w, c.now, 1u << 30, fire, &c);
	}
	/* Drain to the end. */
	c.now += 5000;
	total += (int)sk_timer_wheel_advance(&w, c.now, 1u << 30, fire, &c);
	ck_assert_int_eq(total, expected);
	for (int i = 0; i < NT; i++) {
		if (i % 10 == 0) {
			ck_assert_int_eq(ents[i].fires, 0);
			continue;
		}
		ck_assert_int_eq(ents[i].fires, ents[i].want);
		ck_assert_int_eq(ents[i].rearm, 0);
		ck_assert(!sk_timer_armed(&ents[i].t));
	}
	ck_assert_uint_eq(w.armed, 0);
}
END_TEST

START_TEST(wheel_prompt_and_budget)
{
	static struct sk_timer slots[256];
	static struct ent ents[500];
	struct sk_timer_wheel w;
	struct wctx c = {.w = &w, .e = ents};

	sk_timer_wheel_init(&w, slots, 256);
	memset(ents, 0, sizeof(ents));
	c.now = 100000;
	sk_timer_wheel_advance(&w, c.now, 1000, fire, &c);
	/* Fired within the tick it is due when advanced every tick. */
	for (int i = 0; i < 100; i++) {
		ents[i].due = c.now + 1 + (uint64_t)i * 37 % 900;
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	}
	for (int k = 0; k < 1000; k++) {
		c.now++;
		sk_timer_wheel_advance(&w, c.now, 1000, fire, &c);
	}
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(ents[i].fires, 1);
		ck_assert_uint_eq(ents[i].fired_at, ents[i].due);
	}
	/* Budget: 500 entries due at once, budget 64 per call -> at most 64 per call. */
	for (int i = 0; i < 500; i++) {
		ents[i].fires = 0;
		ents[i].due = c.now + 1;
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	}
	c.now += 1;
	int calls = 0, fired = 0;
	while (fired < 500 && calls < 100) {
		uint32_t n = sk_timer_wheel_advance(&w, c.now, 64, fire, &c);

		ck_assert_uint_le(n, 64);
		fired += (int)n;
		calls++;
	}
	ck_assert_int_eq(fired, 500);
	ck_assert_int_ge(calls, 8);
	/* An entry armed in the past fires at the next advance. */
	ents[0].due = 0;
	sk_timer_wheel_arm(&w, &ents[0].t, 5);
	c.now++;
	ck_assert_uint_eq(sk_timer_wheel_advance(&w, c.now, 64, fire, &c), 1);
}
END_TEST

/*
 * More not-yet-due entries in one slot than the budget: the entries due
 * earlier in that slot still fire on their tick. With one level, such a
 * slot was walked budget entries at a time and never left, so timers fired
 * once per revolution at best (a crowd that opened its connections in the
 * same tick stalls everyone's timers).
 */
START_TEST(wheel_crowded_slot)
{
	static struct sk_timer slots[64];
	static struct ent ents[400];
	struct sk_timer_wheel w;
	struct wctx c = {.w = &w, .e = ents};
	const uint32_t budget = 16;
	const uint64_t base = 70000;

	ck_assert_int_eq(sk_timer_wheel_init(&w, slots, 64), 0);
	memset(ents, 0, sizeof(ents));
	c.now = base;
	sk_timer_wheel_advance(&w, c.now, budget, fire, &c);
	/* 398 entries three revolutions ahead, all in the slot of base + 5 ... */
	for (int i = 0; i < 398; i++) {
		ents[i].due = base + 3 * 64 + 5;
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	}
	/* ... then two due soon, one in that slot and one in the next. */
	ents[398].due = base + 5;
	sk_timer_wheel_arm(&w, &ents[398].t, ents[398].due);
	ents[399].due = base + 6;
	sk_timer_wheel_arm(&w, &ents[399].t, ents[399].due);
	for (int k = 0; k < 3 * 64 + 40; k++) {
		c.now++;
		sk_timer_wheel_advance(&w, c.now, budget, fire, &c);
	}
	ck_assert_int_eq(ents[398].fires, 1);
	ck_assert_uint_eq(ents[398].fired_at, base + 5);
	ck_assert_int_eq(ents[399].fires, 1);
	ck_assert_uint_eq(ents[399].fired_at, base + 6);
	/* The crowd fires on its tick too, budget entries per call (398 / 16 calls). */
	for (int i = 0; i < 398; i++) {
		ck_assert_int_eq(ents[i].fires, 1);
		ck_assert_uint_le(ents[i].fired_at, base + 3 * 64 + 5 + 398 / budget + 1);
	}
	ck_assert_uint_eq(w.armed, 0);
}
END_TEST

/* Entries further ahead than the far level spans still fire on their tick. */
START_TEST(wheel_beyond_far_level)
{
	static struct sk_timer slots[16];
	static struct ent ents[3];
	struct sk_timer_wheel w;
	struct wctx c = {.w = &w, .e = ents};
	const uint64_t span = 16ull * SK_TIMER_FAR_SLOTS;

	ck_assert_int_eq(sk_timer_wheel_init(&w, slots, 16), 0);
	memset(ents, 0, sizeof(ents));
	c.now = 1000;
	sk_timer_wheel_advance(&w, c.now, 64, fire, &c);
	ents[0].due = c.now + 3;
	ents[1].due = c.now + span + 7; /* same far slot as a nearer revolution */
	ents[2].due = c.now + 2 * span + 40;
	for (int i = 0; i < 3; i++)
		sk_timer_wheel_arm(&w, &ents[i].t, ents[i].due);
	for (uint64_t k = 0; k < 2 * span + 64; k++) {
		c.now++;
		sk_timer_wheel_advance(&w, c.now, 64, fire, &c);
	}
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ents[i].fires, 1);
		ck_assert_uint_eq(ents[i].fired_at, ents[i].due);
	}
}
END_TEST

/* The checksums of sk_cksum.h give DPDK's values bit for bit: every length
 * 0..600 at every alignment 0..7, random bytes (fixed seed), all-zero and
 * all-one buffers (the 0 / 0xffff edges), and IPv4 TCP segments checked
 * both ways (sender's value, receiver's verdict, one flipped bit). */
START_TEST(cksum_matches_dpdk)
{
	static uint8_t buf[640 + 8];
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (unsigned fill = 0; fill < 3; fill++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			buf[i] = fill == 0 ? (uint8_t)(x >> 56) : fill == 1 ? 0 : 0xff;
		}
		for (size_t off = 0; off < 8; off++)
			for (size_t len = 0; len <= 600; len++)
				ck_assert_uint_eq(sk_cksum_raw(buf + off, len),
						  rte_raw_cksum(buf + off, len));
	}
	for (unsigned round = 0; round < 2000; round++) {
		uint8_t frame[20 + 600] __rte_aligned(8);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)frame;
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
		uint32_t l4;

		for (size_t i = 0; i < sizeof(frame); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			frame[i] = (uint8_t)(x >> 56);
		}
		l4 = 20 + (uint32_t)(x % 581);
		ip->version_ihl = 0x45;
		ip->next_proto_id = IPPROTO_TCP;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + l4));
		ip->hdr_checksum = 0;
		ck_assert_uint_eq(sk_cksum_ipv4_hdr(ip), rte_ipv4_cksum(ip));
		/* the header sk_ipv4_fill() writes, summed from its values */
		sk_ipv4_fill(ip, (uint32_t)(x >> 32), (uint32_t)x, (uint8_t)(x >> 13),
			     (uint16_t)l4);
		uint16_t filled = ip->hdr_checksum;
		ip->hdr_checksum = 0;
		ck_assert_uint_eq(filled, rte_ipv4_cksum(ip));
		ip->next_proto_id = IPPROTO_TCP;
		th->cksum = 0;
		ck_assert_uint_eq((uint16_t)~sk_cksum_ipv4_l4(ip, th, l4),
				  rte_ipv4_udptcp_cksum(ip, th));
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
		ck_assert_uint_eq(sk_cksum_ipv4_l4(ip, th, l4), 0xffff);
		ck_assert_int_eq(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
		frame[20 + x % l4] ^= (uint8_t)(1u << (x >> 8) % 8);
		ck_assert_uint_ne(sk_cksum_ipv4_l4(ip, th, l4), 0xffff);
		ck_assert_int_ne(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
	}
}
END_TEST

static Suite *
parts_suite(void)
{
	Suite *s = suite_create("net_parts");
	TCase *tc = tcase_create("parts");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, siphash_vectors);
	tcase_add_test(tc, syncookie_roundtrip);
	tcase_add_test(tc, wheel_random);
	tcase_add_test(tc, wheel_prompt_and_budget);
	tcase_add_test(tc, wheel_crowded_slot);
	tcase_add_test(tc, wheel_beyond_far_level);
	tcase_add_test(tc, cksum_matches_dpdk);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(parts_suite)
