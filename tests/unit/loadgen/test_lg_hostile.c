/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_hostile - the hostile modes' pure parts: the raw SYN frame (every
 * field as asked, both checksums valid, checked with an independent sum),
 * the keyed ISS and the SYN-ACK test, the destination of a frame, the
 * attack report's JSON (parsed back).
 */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_hostile.h"
#include "sk_test.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* sum16 - the one's complement sum of @len bytes, 32-bit words folded at the
 * end (a second implementation: a whole header sums to 0xffff). */
static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s > 0xffff)
		s = (s >> 16) + (s & 0xffff);
	return s;
}

static struct lg_syn
syn_of(void)
{
	struct lg_syn s = {
		.src_mac = {0x02, 0, 0, 0, 0, 1},
		.dst_mac = {0x02, 0, 0, 0, 0, 2},
		.src_ip = IP(198, 19, 2, 77),
		.dst_ip = IP(198, 19, 0, 1),
		.src_port = 40001,
		.dst_port = 80,
		.seq = 0xdeadbeef,
		.ip_id = 0x1234,
		.mss = 1460,
		.window = 65535,
	};
	return s;
}

START_TEST(test_syn_fields)
{
	struct lg_syn s = syn_of();
	uint8_t f[128];
	const uint8_t *ip = f + 14, *th = ip + 20;

	memset(f, 0xee, sizeof(f));
	ck_assert_uint_eq(lg_syn_build(f, LG_SYN_FRAME_LEN - 1, &s), 0);
	ck_assert_uint_eq(lg_syn_build(f, sizeof(f), &s), LG_SYN_FRAME_LEN);
	ck_assert_uint_eq(LG_SYN_FRAME_LEN, 58);
	ck_assert_mem_eq(f, s.dst_mac, 6);
	ck_assert_mem_eq(f + 6, s.src_mac, 6);
	ck_assert_uint_eq(be16(f + 12), 0x0800);
	/* IPv4 */
	ck_assert_uint_eq(ip[0], 0x45);
	ck_assert_uint_eq(be16(ip + 2), 44);
	ck_assert_uint_eq(be16(ip + 4), 0x1234);
	ck_assert_uint_eq(be16(ip + 6), 0x4000); /* DF, not a fragment */
	ck_assert_uint_eq(ip[8], 64);
	ck_assert_uint_eq(ip[9], 6);
	ck_assert_uint_eq(be32(ip + 12), s.src_ip);
	ck_assert_uint_eq(be32(ip + 16), s.dst_ip);
	/* TCP */
	ck_assert_uint_eq(be16(th), 40001);
	ck_assert_uint_eq(be16(th + 2), 80);
	ck_assert_uint_eq(be32(th + 4), 0xdeadbeef);
	ck_assert_uint_eq(be32(th + 8), 0);
	ck_assert_uint_eq(th[12] >> 4, 6);
	ck_assert_uint_eq(th[13], 0x02); /* SYN only */
	ck_assert_uint_eq(be16(th + 14), 65535);
	ck_assert_uint_eq(be16(th + 18), 0);
	ck_assert_uint_eq(th[20], 2);
	ck_assert_uint_eq(th[21], 4);
	ck_assert_uint_eq(be16(th + 22), 1460);
	ck_assert_uint_eq(f[LG_SYN_FRAME_LEN], 0xee); /* nothing written past the frame */
}
END_TEST

START_TEST(test_syn_checksums)
{
	uint8_t f[LG_SYN_FRAME_LEN];
	uint64_t r = 88172645463325252ULL;

	/* many random SYNs: both checksums verify with the independent sum */
	for (int i = 0; i < 10000; i++) {
		struct lg_syn s = syn_of();
		const uint8_t *ip = f + 14, *th = ip + 20;
		uint32_t pseudo;

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		s.src_ip = IP(198, 18, 0, 0) | (uint32_t)(r & 0x1ffff);
		s.src_port = (uint16_t)(r >> 20);
		s.seq = (uint32_t)(r >> 32);
		s.ip_id = (uint16_t)(r >> 40);
		s.mss = (uint16_t)(r >> 48);
		s.window = (uint16_t)(r >> 8);
		ck_assert_uint_eq(lg_syn_build(f, sizeof(f), &s), LG_SYN_FRAME_LEN);
		ck_assert_uint_eq(sum16(ip, 20, 0), 0xffff);
		pseudo = sum16(ip + 12, 8, 0) + 6 + 24;
		ck_assert_uint_eq(sum16(th, 24, pseudo), 0xffff);
		ck_assert_uint_eq(be16(th), s.src_port);
	}
	/* a known vector: RFC 1071's example words */
	{
		const uint8_t w[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};

		ck_assert_uint_eq(lg_cksum(w, sizeof(w), 0), (uint16_t)~0xddf2u);
	}
}
END_TEST

/* synack - the SYN-ACK the server would send to @s with ack @ack, at @f. */
static size_t
synack(uint8_t *f, const struct lg_syn *s, uint32_t ack, uint8_t flags)
{
	struct lg_syn r = *s;

	memcpy(r.src_mac, s->dst_mac, 6);
	memcpy(r.dst_mac, s->src_mac, 6);
	r.src_ip = s->dst_ip;
	r.dst_ip = s->src_ip;
	r.src_port = s->dst_port;
	r.dst_port = s->src_port;
	r.seq = 12345;
	lg_syn_build(f, LG_SYN_FRAME_LEN, &r);
	f[14 + 20 + 8] = (uint8_t)(ack >> 24);
	f[14 + 20 + 9] = (uint8_t)(ack >> 16);
	f[14 + 20 + 10] = (uint8_t)(ack >> 8);
	f[14 + 20 + 11] = (uint8_t)ack;
	f[14 + 20 + 13] = flags;
	return LG_SYN_FRAME_LEN;
}

START_TEST(test_synack_match)
{
	const uint64_t key = 0x0123456789abcdefULL;
	const uint32_t first = IP(198, 19, 2, 1), count = 254, srv = IP(198, 19, 0, 1);
	struct lg_syn s = syn_of();
	uint8_t f[LG_SYN_FRAME_LEN];
	uint32_t iss;
	size_t n;

	s.seq = iss = lg_syn_iss(key, s.src_ip, s.src_port);
	/* the ISS is keyed and depends on the address and the port */
	ck_assert_uint_ne(iss, lg_syn_iss(key + 1, s.src_ip, s.src_port));
	ck_assert_uint_ne(iss, lg_syn_iss(key, s.src_ip + 1, s.src_port));
	ck_assert_uint_ne(iss, lg_syn_iss(key, s.src_ip, s.src_port + 1));
	ck_assert_uint_eq(iss, lg_syn_iss(key, s.src_ip, s.src_port));

	n = synack(f, &s, iss + 1, 0x12);
	ck_assert(lg_synack_match(f, n, srv, 80, first, count, key));
	ck_assert(!lg_synack_match(f, 14 + 39, srv, 80, first, count, key)); /* truncated */
	ck_assert(!lg_synack_match(f, n, srv, 80, first, count, key + 1));   /* other key */
	ck_assert(!lg_synack_match(f, n, srv + 1, 80, first, count, key));   /* other server */
	ck_assert(!lg_synack_match(f, n, srv, 81, first, count, key));	     /* other port */
	ck_assert(!lg_synack_match(f, n, srv, 80, first + 100, 10, key));    /* not our block */
	n = synack(f, &s, iss, 0x12);					     /* ack off by one */
	ck_assert(!lg_synack_match(f, n, srv, 80, first, count, key));
	n = synack(f, &s, iss + 1, 0x10); /* a plain ACK */
	ck_assert(!lg_synack_match(f, n, srv, 80, first, count, key));
	n = synack(f, &s, iss + 1, 0x16); /* SYN-ACK-RST */
	ck_assert(!lg_synack_match(f, n, srv, 80, first, count, key));
	n = synack(f, &s, iss + 1, 0x12);
	f[12] = 0x86, f[13] = 0xdd; /* not IPv4 */
	ck_assert(!lg_synack_match(f, n, srv, 80, first, count, key));
}
END_TEST

START_TEST(test_frame_dst)
{
	struct lg_syn s = syn_of();
	uint8_t f[64] = {0};

	lg_syn_build(f, sizeof(f), &s);
	ck_assert_uint_eq(lg_frame_dst_ip(f, LG_SYN_FRAME_LEN), s.dst_ip);
	ck_assert_uint_eq(lg_frame_dst_ip(f, 20), 0);
	/* ARP: the target protocol address */
	memset(f, 0, sizeof(f));
	f[12] = 0x08, f[13] = 0x06;
	f[14 + 24] = 198, f[14 + 25] = 19, f[14 + 26] = 2, f[14 + 27] = 9;
	ck_assert_uint_eq(lg_frame_dst_ip(f, 42), IP(198, 19, 2, 9));
	ck_assert_uint_eq(lg_frame_dst_ip(f, 41), 0);
	f[13] = 0x35; /* anything else */
	ck_assert_uint_eq(lg_frame_dst_ip(f, 60), 0);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_int_eq(lg_attack_parse("synflood"), LG_ATTACK_SYNFLOOD);
	ck_assert_int_eq(lg_attack_parse("holders"), LG_ATTACK_HOLDERS);
	ck_assert_int_eq(lg_attack_parse("garbage"), LG_ATTACK_GARBAGE);
	ck_assert_int_eq(lg_attack_parse("none"), -1);
	ck_assert_int_eq(lg_attack_parse("slowloris"), -1);
	ck_assert_str_eq(lg_attack_str(LG_ATTACK_HOLDERS), "holders");
	ck_assert_str_eq(lg_end_str(LG_END_REFUSED), "refused");
	ck_assert_str_eq(lg_end_str(LG_END__COUNT), "?");
}
END_TEST

START_TEST(test_json)
{
	static struct lg_attack_stats s;
	struct lg_attack_info i = {
		.mode = LG_ATTACK_HOLDERS,
		.rate = 500,
		.attackers = 100,
		.from_ip = IP(198, 19, 2, 7),
		.from_count = 1,
		.seconds = 5,
		.legit = true,
		.legit_sent = 1000,
		.legit_answered = 995,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	json_error_t e;
	json_t *root, *a;

	lg_attack_stats_init(&s);
	s.opened = 100;
	s.held_at_end = 64;
	s.ended[LG_END_REFUSED] = 36;
	s.status[408] = 3;
	s.answered = 3;
	sk_crowd_hist_add(&s.life, 2000000000ull);
	sk_crowd_hist_add(&s.t408, 2000000000ull);
	out = open_memstream(&buf, &len);
	fputc('{', out);
	lg_attack_json(&s, &i, out);
	fputc('}', out);
	fclose(out);
	root = json_loads(buf, 0, &e);
	ck_assert_msg(root != NULL, "%s: %s", buf, e.text);
	a = json_object_get(root, "attack");
	ck_assert_str_eq(json_string_value(json_object_get(a, "mode")), "holders");
	ck_assert_str_eq(json_string_value(json_object_get(a, "from")), "198.19.2.7");
	ck_assert_int_eq(json_integer_value(json_object_get(a, "held_at_end")), 64);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(a, "ended"), "refused")), 36);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "status"), "408")),
			 3);
	ck_assert(json_real_value(json_object_get(json_object_get(a, "t408_ms"), "min")) == 2000.0);
	ck_assert(json_real_value(json_object_get(json_object_get(a, "legit"), "success_pct")) ==
		  99.5);
	json_decref(root);
	free(buf);
}
END_TEST

static Suite *
lg_hostile_suite(void)
{
	Suite *s = suite_create("lg_hostile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_syn_fields);
	tcase_add_test(tc, test_syn_checksums);
	tcase_add_test(tc, test_synack_match);
	tcase_add_test(tc, test_frame_dst);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(lg_hostile_suite)
