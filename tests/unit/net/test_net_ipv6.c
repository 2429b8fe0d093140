/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_ipv6.c - IPv6, ICMPv6 and neighbour discovery with crafted
 * frames: NS -> NA with the right fields and checksum (to our address, our
 * link-local, from "::"), echo -> reply (to a group too, through extension
 * headers), every refusal counted, the neighbour cache (learning, aging,
 * solicitations sent and rate-limited), conf checks. Checksums here come
 * from a plain reference sum, not from the stack's code.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>

#include "net_harness.h"
#include "sk_common.h"

static struct h_env E;

/* Addresses: 2001:2::/48 (RFC 5180) and the EUI-64 link-locals of the MACs. */
static const uint8_t SRV6[16] = {0x20, 0x01, 0, 2, [15] = 1};
static const uint8_t CLI6[16] = {0x20, 0x01, 0, 2, [15] = 2};
static const uint8_t OTHER6[16] = {0x20, 0x01, 0, 2, [15] = 9};
static const uint8_t SRV_LL[16] = {0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 1};
static const uint8_t CLI_LL[16] = {0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 2};
static const uint8_t SRV_SN[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 1};
static const uint8_t ALL_NODES[16] = {0xff, 0x02, [15] = 1};
static const uint8_t UNSPEC[16];
static const struct rte_ether_addr SRV_SN_MAC = {{0x33, 0x33, 0xff, 0, 0, 1}};
static const struct rte_ether_addr ALL_NODES_MAC = {{0x33, 0x33, 0, 0, 0, 1}};

enum { NH_HOP = 0, NH_UDP = 17, NH_RT = 43, NH_FRAG = 44, NH_ICMP6 = 58, NH_DST = 60 };

static const struct sk_net_stats *
st(void)
{
	return sk_net_lcore_stats(E.net);
}

/* A frame to the stack; the ICMPv6 checksum is filled in. */
struct f6 {
	const struct rte_ether_addr *dmac; /* NULL: the server's */
	const uint8_t *src, *dst;
	uint8_t hop;
	const uint8_t *ext; /* extension headers (their first type in nh0) */
	uint32_t ext_len;
	uint8_t nh0;
	const uint8_t *msg; /* ICMPv6 message (checksum field overwritten) */
	uint32_t len;
};

static struct rte_mbuf *
mk6(const struct f6 *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool());
	uint32_t total = 14 + 40 + f->ext_len + f->len;
	uint8_t *p, *msg;
	uint16_t ck;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)total);
	ck_assert_ptr_nonnull(p);
	memcpy(p, (f->dmac ? f->dmac : &h_srv_mac)->addr_bytes, 6);
	memcpy(p + 6, h_cli_mac.addr_bytes, 6);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	memset(p + 15, 0, 3);
	p[18] = (uint8_t)((f->ext_len + f->len) >> 8);
	p[19] = (uint8_t)(f->ext_len + f->len);
	p[20] = f->ext_len ? f->nh0 : NH_ICMP6;
	p[21] = f->hop;
	memcpy(p + 22, f->src, 16);
	memcpy(p + 38, f->dst, 16);
	if (f->ext_len)
		memcpy(p + 54, f->ext, f->ext_len);
	msg = p + 54 + f->ext_len;
	memcpy(msg, f->msg, f->len);
	msg[2] = msg[3] = 0;
	ck = h_cksum6(f->src, f->dst, NH_ICMP6, msg, f->len);
	msg[2] = (uint8_t)(ck >> 8);
	msg[3] = (uint8_t)ck;
	return m;
}

/* echo request id 0x4242 seq 7 with @plen payload bytes into @buf; returns its length. */
static uint32_t
echo_msg(uint8_t *buf, uint32_t plen)
{
	static const uint8_t head[8] = {128, 0, 0, 0, 0x42, 0x42, 0, 7};

	memcpy(buf, head, 8);
	for (uint32_t i = 0; i < plen; i++)
		buf[8 + i] = (uint8_t)(i * 7 + 3);
	return 8 + plen;
}

/* nd_msg - an NS (type 135) or NA (136) for @target, with a link-layer option for @mac. */
static uint32_t
nd_msg(uint8_t *buf, uint8_t type, uint8_t flags, const uint8_t *target,
       const struct rte_ether_addr *mac)
{
	memset(buf, 0, 32);
	buf[0] = type;
	buf[4] = flags;
	memcpy(buf + 8, target, 16);
	if (mac == NULL)
		return 24;
	buf[24] = type == 135 ? 1 : 2;
	buf[25] = 1;
	memcpy(buf + 26, mac->addr_bytes, 6);
	return 32;
}

/* rx_nd - feed an NS (135) or NA (136), hop limit 255, from @src to @dst via @dmac. */
static void
rx_nd(const struct rte_ether_addr *dmac, const uint8_t *src, const uint8_t *dst, uint8_t type,
      uint8_t flags, const uint8_t *target, const struct rte_ether_addr *lla)
{
	uint8_t msg[32];

	h_rx(&E, mk6(&(struct f6){.dmac = dmac,
				  .src = src,
				  .dst = dst,
				  .hop = 255,
				  .msg = msg,
				  .len = nd_msg(msg, type, flags, target, lla)}));
}

/* What the stack sent, parsed. */
struct p6 {
	struct rte_ether_addr dmac, smac;
	uint8_t src[16], dst[16];
	uint8_t hop, nh;
	uint32_t len; /* ICMPv6 message length (payload length) */
	const uint8_t *msg;
	bool ck_ok;
};

static void
parse6(unsigned i, struct p6 *p)
{
	struct h_pkt hp;
	const uint8_t *f;

	ck_assert(h_parse(&E, i, &hp));
	ck_assert_uint_eq(hp.ethertype, RTE_ETHER_TYPE_IPV6);
	f = rte_pktmbuf_mtod(hp.m, const uint8_t *);
	p->dmac = hp.dst;
	p->smac = hp.src;
	ck_assert_uint_eq(f[14] >> 4, 6);
	p->len = (uint32_t)(f[18] << 8 | f[19]);
	p->nh = f[20];
	p->hop = f[21];
	memcpy(p->src, f + 22, 16);
	memcpy(p->dst, f + 38, 16);
	p->msg = f + 54;
	ck_assert_uint_eq(rte_pktmbuf_data_len(hp.m), 54 + p->len);
	p->ck_ok = h_cksum6(p->src, p->dst, NH_ICMP6, p->msg, p->len) == 0;
}

static void
start6(void)
{
	h_conf(&E);
	memcpy(E.conf.ip6, SRV6, 16);
	h_start(&E);
}

START_TEST(ns_answered_with_na)
{
	static const struct {
		const uint8_t *src, *dst, *target;
		const struct rte_ether_addr *dmac;
	} t[] = {
		{CLI6, SRV_SN, SRV6, &SRV_SN_MAC},     /* resolution, to the group */
		{CLI6, SRV6, SRV6, NULL},	       /* unreachability check, unicast */
		{CLI_LL, SRV_SN, SRV_LL, &SRV_SN_MAC}, /* our link-local */
	};
	uint8_t msg[64];
	struct p6 p;

	start6();
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		uint32_t n = nd_msg(msg, 135, 0, t[i].target, &h_cli_mac);

		h_clear(&E);
		h_rx(&E, mk6(&(struct f6){.dmac = t[i].dmac,
					  .src = t[i].src,
					  .dst = t[i].dst,
					  .hop = 255,
					  .msg = msg,
					  .len = n}));
		ck_assert_msg(h_ntx(&E) == 1, "case %u not answered", i);
		parse6(0, &p);
		ck_assert(rte_is_same_ether_addr(&p.dmac, &h_cli_mac));
		ck_assert(rte_is_same_ether_addr(&p.smac, &h_srv_mac));
		ck_assert_mem_eq(p.src, t[i].target, 16);
		ck_assert_mem_eq(p.dst, t[i].src, 16);
		ck_assert_uint_eq(p.hop, 255);
		ck_assert_uint_eq(p.nh, NH_ICMP6);
		ck_assert_uint_eq(p.len, 32);
		ck_assert(p.ck_ok);
		ck_assert_uint_eq(p.msg[0], 136);
		ck_assert_uint_eq(p.msg[1], 0);
		ck_assert_uint_eq(p.msg[4], 0x60); /* solicited, override; not a router */
		ck_assert_mem_eq(p.msg + 8, t[i].target, 16);
		ck_assert_uint_eq(p.msg[24], 2); /* target link-layer address */
		ck_assert_uint_eq(p.msg[25], 1);
		ck_assert_mem_eq(p.msg + 26, h_srv_mac.addr_bytes, 6);
	}
	ck_assert_uint_eq(st()->nd_ns_rx, 3);
	ck_assert_uint_eq(st()->nd_na_tx, 3);
	/* The sender was learnt from its source link-layer option. */
	struct rte_ether_addr mac;
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, &mac), 0);
	ck_assert(rte_is_same_ether_addr(&mac, &h_cli_mac));
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI_LL, &mac), 0);

	/* Duplicate address detection for our address (from "::"): defended to all nodes. */
	h_clear(&E);
	rx_nd(&SRV_SN_MAC, UNSPEC, SRV_SN, 135, 0, SRV6, NULL);
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse6(0, &p);
	ck_assert(rte_is_same_ether_addr(&p.dmac, &ALL_NODES_MAC));
	ck_assert_mem_eq(p.dst, ALL_NODES, 16);
	ck_assert_uint_eq(p.msg[4], 0x20); /* override only: nobody asked us */
	ck_assert(p.ck_ok);
	/* The same but with a source link-layer option: malformed. */
	h_clear(&E);
	rx_nd(&SRV_SN_MAC, UNSPEC, SRV_SN, 135, 0, SRV6, &h_cli_mac);
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->nd_drop_bad, 1);
	h_stop(&E);
}
END_TEST

START_TEST(echo_answered)
{
	static const uint32_t sizes[] = {0, 1, 56, 57, 1232};
	static uint8_t msg[1300];
	struct p6 p;

	start6();
	for (unsigned i = 0; i < SK_ARRAY_SIZE(sizes); i++) {
		uint32_t n = echo_msg(msg, sizes[i]);

		h_clear(&E);
		h_rx(&E,
		     mk6(&(struct f6){.src = CLI6, .dst = SRV6, .hop = 3, .msg = msg, .len = n}));
		ck_assert_uint_eq(h_ntx(&E), 1);
		parse6(0, &p);
		ck_assert(rte_is_same_ether_addr(&p.dmac, &h_cli_mac));
		ck_assert_mem_eq(p.src, SRV6, 16);
		ck_assert_mem_eq(p.dst, CLI6, 16);
		ck_assert_uint_eq(p.hop, 64);
		ck_assert_uint_eq(p.len, n);
		ck_assert(p.ck_ok);
		ck_assert_uint_eq(p.msg[0], 129);
		ck_assert_mem_eq(p.msg + 4, msg + 4, n - 4); /* id, seq, payload */
	}
	ck_assert_uint_eq(st()->icmp6_echo_rx, SK_ARRAY_SIZE(sizes));
	ck_assert_uint_eq(st()->icmp6_echo_tx, SK_ARRAY_SIZE(sizes));

	/* To all nodes from a link-local: answered from our link-local. */
	uint32_t n = echo_msg(msg, 10);
	h_clear(&E);
	h_rx(&E, mk6(&(struct f6){.dmac = &ALL_NODES_MAC,
				  .src = CLI_LL,
				  .dst = ALL_NODES,
				  .hop = 1,
				  .msg = msg,
				  .len = n}));
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse6(0, &p);
	ck_assert_mem_eq(p.src, SRV_LL, 16);
	ck_assert(p.ck_ok);

	/* Through 8 extension headers (the most walked): the reply carries none. */
	uint8_t ext[8 * 8];
	for (int k = 0; k < 8; k++) {
		uint8_t *h = ext + 8 * k;

		h[0] = k == 7 ? NH_ICMP6 : NH_DST; /* next header */
		h[1] = 0;			   /* 8 bytes */
		h[2] = 1;			   /* PadN, 4 bytes */
		h[3] = 4;
		memset(h + 4, 0, 4);
	}
	ext[0] = NH_DST; /* the first is a hop-by-hop (nh0), the rest dst options */
	h_clear(&E);
	h_rx(&E, mk6(&(struct f6){.src = CLI6,
				  .dst = SRV6,
				  .hop = 9,
				  .ext = ext,
				  .ext_len = 64,
				  .nh0 = NH_HOP,
				  .msg = msg,
				  .len = n}));
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse6(0, &p);
	ck_assert_uint_eq(p.nh, NH_ICMP6);
	ck_assert_uint_eq(p.len, n);
	ck_assert(p.ck_ok);
	ck_assert_mem_eq(p.msg + 4, msg + 4, n - 4);
	h_stop(&E);
}
END_TEST

/* Refusals: each case builds a frame, expects no answer and one counter up. */
enum bad6 {
	B_CKSUM,
	B_SHORT,
	B_VERSION,
	B_PLEN_BIG,
	B_FRAG,
	B_EXT_9,
	B_EXT_PAST,
	B_HOP_NOT_FIRST,
	B_ROUTING_LEFT,
	B_OPT_DISCARD,
	B_NOT_US,
	B_GROUP_NOT_US,
	B_SRC_MCAST,
	B_UDP,
	B_ETH_DST,
	B_ND_HOP,
	B_ND_OPT_ZERO,
	B_ND_NOT_OURS,
	B_ND_MCAST_TARGET,
	B_NA_SOLICITED_MCAST,
	B_RA,
	B__COUNT
};

static uint64_t
counter(enum bad6 b)
{
	const struct sk_net_stats *s = st();

	switch (b) {
	case B_CKSUM:
		return s->icmp6_drop_cksum;
	case B_SHORT:
		return s->drop_short;
	case B_VERSION:
	case B_PLEN_BIG:
		return s->ip6_drop_bad;
	case B_FRAG:
		return s->ip6_drop_frag;
	case B_EXT_9:
	case B_EXT_PAST:
	case B_HOP_NOT_FIRST:
	case B_ROUTING_LEFT:
	case B_OPT_DISCARD:
		return s->ip6_drop_ext;
	case B_NOT_US:
	case B_GROUP_NOT_US:
		return s->ip6_drop_not_us;
	case B_SRC_MCAST:
		return s->ip6_drop_src;
	case B_UDP:
		return s->ip6_drop_proto;
	case B_ETH_DST:
		return s->drop_not_us;
	case B_ND_HOP:
		return s->nd_drop_hop;
	case B_ND_OPT_ZERO:
	case B_ND_MCAST_TARGET:
	case B_NA_SOLICITED_MCAST:
		return s->nd_drop_bad;
	case B_ND_NOT_OURS:
		return s->nd_not_ours;
	case B_RA:
		return s->icmp6_drop_other;
	case B__COUNT:
		break;
	}
	return 0;
}

/* Extension-header chains to refuse: the first header's type, the bytes. */
static const struct {
	enum bad6 b;
	uint8_t nh0, len;
	uint8_t bytes[16];
} bad_ext[] = {
	{B_FRAG, NH_FRAG, 8, {NH_ICMP6, 0, 0, 1}},		 /* offset 0, more fragments */
	{B_EXT_PAST, NH_DST, 8, {NH_ICMP6, 20}},		 /* claims 168 bytes */
	{B_HOP_NOT_FIRST, NH_DST, 16, {NH_HOP, [8] = NH_ICMP6}}, /* hop-by-hop second */
	{B_ROUTING_LEFT, NH_RT, 8, {NH_ICMP6, 0, 4, 1}},	 /* type 4, 1 segment left */
	{B_OPT_DISCARD, NH_DST, 8, {NH_ICMP6, 0, 0x80, 4}},	 /* option 0x80: "discard" */
};

static struct rte_mbuf *
mk_bad(enum bad6 b)
{
	static const struct rte_ether_addr other_mac = {{0x02, 0, 0, 0, 0, 0x77}};
	static const uint8_t other_sn[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 9};
	uint8_t msg[64], ext[80];
	struct f6 f = {.src = CLI6, .dst = SRV6, .hop = 64, .msg = msg, .len = echo_msg(msg, 4)};
	struct rte_mbuf *m;
	uint8_t *p;

	memset(ext, 0, sizeof(ext));
	for (unsigned i = 0; i < SK_ARRAY_SIZE(bad_ext); i++)
		if (bad_ext[i].b == b) {
			memcpy(ext, bad_ext[i].bytes, sizeof(bad_ext[i].bytes));
			f.nh0 = bad_ext[i].nh0;
			f.ext = ext;
			f.ext_len = bad_ext[i].len;
		}
	switch (b) {
	case B_EXT_9:
		for (int k = 0; k < 9; k++)
			ext[8 * k] = k == 8 ? NH_ICMP6 : NH_DST;
		f.nh0 = NH_DST;
		f.ext = ext;
		f.ext_len = 72;
		break;
	case B_NOT_US:
		f.dst = OTHER6;
		break;
	case B_GROUP_NOT_US:
		f.dst = other_sn;
		f.dmac = &SRV_SN_MAC;
		break;
	case B_SRC_MCAST:
		f.src = ALL_NODES;
		break;
	case B_ETH_DST:
		f.dmac = &other_mac;
		break;
	case B_ND_HOP:
	case B_ND_OPT_ZERO:
		f.hop = b == B_ND_HOP ? 64 : 255;
		f.len = nd_msg(msg, 135, 0, SRV6, &h_cli_mac);
		if (b == B_ND_OPT_ZERO)
			msg[25] = 0;
		break;
	case B_ND_NOT_OURS:
		f.hop = 255;
		f.len = nd_msg(msg, 135, 0, OTHER6, &h_cli_mac);
		break;
	case B_ND_MCAST_TARGET:
		f.hop = 255;
		f.len = nd_msg(msg, 135, 0, ALL_NODES, &h_cli_mac);
		break;
	case B_NA_SOLICITED_MCAST:
		f.hop = 255;
		f.dst = ALL_NODES;
		f.dmac = &ALL_NODES_MAC;
		f.len = nd_msg(msg, 136, 0x40, CLI6, &h_cli_mac);
		break;
	case B_RA:
		f.hop = 255;
		msg[0] = 134;
		f.len = 16;
		break;
	default:
		break;
	}
	m = mk6(&f);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	switch (b) {
	case B_CKSUM:
		p[54 + 9] ^= 1;
		break;
	case B_SHORT:
		rte_pktmbuf_trim(m, rte_pktmbuf_data_len(m) - 30);
		break;
	case B_VERSION:
		p[14] = 0x40;
		break;
	case B_PLEN_BIG:
		p[18] = 0x05;
		break;
	case B_UDP:
		p[20] = NH_UDP;
		break;
	default:
		break;
	}
	return m;
}

START_TEST(drops_counted)
{
	start6();
	for (unsigned i = 0; i < B__COUNT; i++) {
		uint64_t before = counter((enum bad6)i);

		h_clear(&E);
		h_rx(&E, mk_bad((enum bad6)i));
		ck_assert_msg(h_ntx(&E) == 0, "case %u answered", i);
		ck_assert_msg(counter((enum bad6)i) == before + 1, "case %u not counted", i);
	}
	ck_assert_uint_eq(st()->icmp6_echo_rx, 0);
	ck_assert_uint_eq(st()->nd_ns_rx, 0);
	/* An unsolicited NA about a neighbour we do not know teaches nothing. */
	uint8_t msg[32];
	rx_nd(NULL, CLI6, SRV6, 136, 0x20, CLI6, &h_cli_mac);
	ck_assert_uint_eq(st()->nd_na_rx, 1);
	ck_assert_uint_eq(st()->nd_learnt, 0);
	h_stop(&E);

	/* Without an IPv6 address the stack ignores IPv6 altogether. */
	h_conf(&E);
	h_start(&E);
	h_rx(&E,
	     mk6(&(struct f6){
		     .src = CLI6, .dst = SRV6, .hop = 64, .msg = msg, .len = echo_msg(msg, 4)}));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->drop_ethertype, 1);
	ck_assert_uint_eq(st()->ip6_rx, 0);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, NULL), -EINVAL);
	h_stop(&E);
}
END_TEST

START_TEST(cache_learns_and_ages)
{
	static const struct rte_ether_addr new_mac = {{0x02, 0, 0, 0, 0, 0x22}};
	static const struct rte_ether_addr cli_sn_mac = {{0x33, 0x33, 0xff, 0, 0, 2}};
	static const uint8_t cli_sn[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 2};
	struct rte_ether_addr mac;
	struct p6 p;

	start6();
	ck_assert_int_eq(sk_net_nd_lookup(E.net, ALL_NODES, NULL), -EINVAL);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, UNSPEC, NULL), -EINVAL);
	rx_nd(&SRV_SN_MAC, CLI6, SRV_SN, 135, 0, SRV6, &h_cli_mac);
	ck_assert_uint_eq(st()->nd_learnt, 1);
	h_clear(&E);
	h_advance(&E, 59000);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, &mac), 0);
	ck_assert(rte_is_same_ether_addr(&mac, &h_cli_mac));
	/* 60 s after it was learnt: stale, solicited again. */
	h_advance(&E, 1000);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, &mac), -ENOENT);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse6(0, &p);
	ck_assert(rte_is_same_ether_addr(&p.dmac, &cli_sn_mac));
	ck_assert_mem_eq(p.src, SRV6, 16);
	ck_assert_mem_eq(p.dst, cli_sn, 16);
	ck_assert_uint_eq(p.hop, 255);
	ck_assert(p.ck_ok);
	ck_assert_uint_eq(p.msg[0], 135);
	ck_assert_mem_eq(p.msg + 8, CLI6, 16);
	ck_assert_uint_eq(p.msg[24], 1); /* source link-layer address */
	ck_assert_mem_eq(p.msg + 26, h_srv_mac.addr_bytes, 6);
	/* Asked again at once: no second solicitation; a second later, one. */
	h_clear(&E);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, NULL), -ENOENT);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_advance(&E, 1000);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, NULL), -ENOENT);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert_uint_eq(st()->nd_ns_tx, 2);
	/* The answer (solicited NA, a new MAC) fills the entry. */
	rx_nd(NULL, CLI6, SRV6, 136, 0x60, CLI6, &new_mac);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI6, &mac), 0);
	ck_assert(rte_is_same_ether_addr(&mac, &new_mac));
	/* A link-local neighbour is solicited from our link-local address. */
	h_clear(&E);
	ck_assert_int_eq(sk_net_nd_lookup(E.net, CLI_LL, NULL), -ENOENT);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse6(0, &p);
	ck_assert_mem_eq(p.src, SRV_LL, 16);
	/* Many misses in one second: at most 100 solicitations. */
	h_clear(&E);
	uint64_t sent0 = st()->nd_ns_tx;
	for (unsigned i = 0; i < 150; i++) {
		uint8_t a[16] = {0x20, 0x01, 0, 2, 0, 1, [14] = (uint8_t)(i >> 8), (uint8_t)i};

		ck_assert_int_eq(sk_net_nd_lookup(E.net, a, NULL), -ENOENT);
		h_clear(&E);
	}
	ck_assert_uint_le(st()->nd_ns_tx - sent0, 100);
	ck_assert_uint_eq(st()->nd_ns_tx - sent0 + st()->nd_ns_limited, 150);
	ck_assert_uint_ge(st()->nd_ns_limited, 50);
	h_stop(&E);
}
END_TEST

START_TEST(create_rejects_bad_ip6)
{
	static const uint8_t ll[16] = {0xfe, 0x80, [15] = 1};
	struct sk_net_app_ops ops = {(void *)1, (void *)1, (void *)1, NULL};
	uint8_t ll_out[16];

	for (int i = 0; i < 4; i++) {
		struct sk_net_conf c;

		h_conf(&E);
		c = E.conf;
		memcpy(c.ip6, SRV6, 16);
		switch (i) {
		case 0:
			memcpy(c.ip6, ALL_NODES, 16);
			break;
		case 1:
			memcpy(c.ip6, ll, 16);
			break;
		case 2:
			c.prefix6_len = 0;
			break;
		case 3:
			c.prefix6_len = 129;
			break;
		}
		ck_assert_ptr_null(sk_net_lcore_create(&c, 0, h_pool(), SOCKET_ID_ANY, &ops, NULL));
		ck_assert_int_eq(rte_errno, EINVAL);
	}
	/* The EUI-64 link-local (RFC 4291 appendix A): the U/L bit flipped, ff:fe inserted. */
	static const struct rte_ether_addr m = {{0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc}};
	static const uint8_t want[16] = {0xfe, 0x80, [8] = 0x02, 0x1b, 0x21,
					 0xff, 0xfe, 0xaa,	 0xbb, 0xcc};
	sk_net_ipv6_link_local(&m, ll_out);
	ck_assert_mem_eq(ll_out, want, 16);
	/* The flow hash puts IPv6 on one lcore (hash 0), as ARP. */
	uint8_t msg[16];
	struct rte_mbuf *f = mk6(&(struct f6){
		.src = CLI6, .dst = SRV6, .hop = 1, .msg = msg, .len = echo_msg(msg, 4)});
	ck_assert_uint_eq(sk_net_flow_hash(f), 0);
	rte_pktmbuf_free(f);
}
END_TEST

static Suite *
ipv6_suite(void)
{
	Suite *s = suite_create("net_ipv6");
	TCase *tc = tcase_create("ipv6");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ns_answered_with_na);
	tcase_add_test(tc, echo_answered);
	tcase_add_test(tc, drops_counted);
	tcase_add_test(tc, cache_learns_and_ages);
	tcase_add_test(tc, create_rejects_bad_ip6);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], ipv6_suite());
}
