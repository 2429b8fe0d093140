/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_tcp6.c - TCP over IPv6 with crafted frames: the SYN-cookie
 * handshake (SYN-ACK fields, MSS option of an IPv6 MTU, hop limit, a cookie
 * bound to the IPv6 addresses), data, ACK and FIN both ways, the RFC 5961 RST
 * rules, bad checksums dropped, max_conns_per_ip counted per /64, the public
 * address accessors, an IPv4 and an IPv6 connection on the same ports side by
 * side, and the symmetric flow hash of IPv6. Checksums here come from a
 * plain reference sum, not from the stack's code.
 */
#include <check.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_harness.h"
#include "sk_common.h"

static struct h_env E;

/* 2001:2::/48 (RFC 5180): the server, clients in one /64, one in another. */
static const uint8_t SRV6[16] = {0x20, 0x01, 0, 2, [15] = 1};
static const uint8_t CLI6[16] = {0x20, 0x01, 0, 2, [15] = 2};
static const uint8_t CLI6_B[16] = {0x20, 0x01, 0, 2, [8] = 0x12, [15] = 3}; /* same /64 */
static const uint8_t CLI6_C[16] = {0x20, 0x01, 0, 2, [8] = 0x7f, [15] = 4}; /* same /64 */
static const uint8_t CLI6_D[16] = {0x20, 0x01, 0, 2,	   0,
				   0,	 0,    2, [15] = 2}; /* 2001:2:0:2::2, another /64 */
/* 2001:2:0:1::2, another /64 of CLI6's /56; 2001:2:0:100::2, another /56 */
static const uint8_t CLI6_F[16] = {0x20, 0x01, 0, 2, [7] = 1, [15] = 2};
static const uint8_t CLI6_E[16] = {0x20, 0x01, 0, 2, [6] = 1, [15] = 2};
static const uint8_t SRV6_OTHER[16] = {0x20, 0x01, 0, 2, [15] = 0x99}; /* not ours */

static const struct sk_net_stats *
st(void)
{
	return sk_net_lcore_stats(E.net);
}

/* A TCP segment from a client to the server. */
struct s6 {
	const uint8_t *src, *dst; /* dst NULL: SRV6 */
	uint16_t sport, dport;	  /* dport 0: H_PORT */
	uint32_t seq, ack;
	uint8_t flags;
	const void *data;
	uint32_t len;
	uint16_t mss; /* option, 0 = none */
	bool bad_cksum;
};

static struct rte_mbuf *
mk(const struct s6 *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool());
	uint32_t hl = s->mss ? 24 : 20, l4 = hl + s->len;
	const uint8_t *dst = s->dst ? s->dst : SRV6;
	uint8_t *p, *th;
	uint16_t ck;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(54 + l4));
	ck_assert_ptr_nonnull(p);
	memset(p, 0, 54 + l4);
	memcpy(p, h_srv_mac.addr_bytes, 6);
	memcpy(p + 6, h_cli_mac.addr_bytes, 6);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	p[18] = (uint8_t)(l4 >> 8);
	p[19] = (uint8_t)l4;
	p[20] = IPPROTO_TCP;
	p[21] = 64;
	memcpy(p + 22, s->src, 16);
	memcpy(p + 38, dst, 16);
	th = p + 54;
	th[0] = (uint8_t)(s->sport >> 8);
	th[1] = (uint8_t)s->sport;
	th[2] = (uint8_t)((s->dport ? s->dport : H_PORT) >> 8);
	th[3] = (uint8_t)(s->dport ? s->dport : H_PORT);
	for (int i = 0; i < 4; i++) {
		th[4 + i] = (uint8_t)(s->seq >> (24 - 8 * i));
		th[8 + i] = (uint8_t)(s->ack >> (24 - 8 * i));
	}
	th[12] = (uint8_t)((hl / 4) << 4);
	th[13] = s->flags;
	th[14] = 0xff;
	th[15] = 0xff;
	if (s->mss) {
		th[20] = 2;
		th[21] = 4;
		th[22] = (uint8_t)(s->mss >> 8);
		th[23] = (uint8_t)s->mss;
	}
	if (s->len)
		memcpy(th + hl, s->data, s->len);
	ck = h_cksum6(s->src, dst, IPPROTO_TCP, th, l4);
	if (s->bad_cksum)
		ck ^= 0x0101;
	th[16] = (uint8_t)(ck >> 8);
	th[17] = (uint8_t)ck;
	return m;
}

/* What the stack sent, parsed. */
struct p6 {
	struct rte_ether_addr dmac;
	uint8_t src[16], dst[16];
	uint8_t hop;
	uint16_t sport, dport, mss;
	uint32_t seq, ack;
	uint8_t flags;
	const uint8_t *data;
	uint32_t len;
};

static void
parse(unsigned i, struct p6 *p)
{
	const uint8_t *f, *th;
	uint32_t l4, hl;

	ck_assert_uint_lt(i, E.ntx);
	f = rte_pktmbuf_mtod(E.tx[i], const uint8_t *);
	ck_assert_uint_eq(f[12] << 8 | f[13], RTE_ETHER_TYPE_IPV6);
	ck_assert_uint_eq(f[14] >> 4, 6);
	ck_assert_uint_eq(f[20], IPPROTO_TCP);
	memcpy(p->dmac.addr_bytes, f, 6);
	l4 = (uint32_t)(f[18] << 8 | f[19]);
	ck_assert_uint_eq(rte_pktmbuf_data_len(E.tx[i]), 54 + l4);
	p->hop = f[21];
	memcpy(p->src, f + 22, 16);
	memcpy(p->dst, f + 38, 16);
	th = f + 54;
	ck_assert_uint_eq(h_cksum6(p->src, p->dst, IPPROTO_TCP, th, l4), 0);
	p->sport = (uint16_t)(th[0] << 8 | th[1]);
	p->dport = (uint16_t)(th[2] << 8 | th[3]);
	p->seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	p->ack = (uint32_t)th[8] << 24 | (uint32_t)th[9] << 16 | (uint32_t)th[10] << 8 | th[11];
	hl = (uint32_t)(th[12] >> 4) * 4;
	p->flags = th[13];
	p->mss = hl == 24 && th[20] == 2 ? (uint16_t)(th[22] << 8 | th[23]) : 0;
	p->data = th + hl;
	p->len = l4 - hl;
}

static void
start6(void)
{
	h_conf(&E);
	memcpy(E.conf.ip6, SRV6, 16);
	E.conf.prefix6_len = 64;
}

/* The client side of one IPv6 connection. */
struct cli {
	const uint8_t *ip;
	uint16_t port;
	uint32_t snd; /* next client seq */
	uint32_t rcv; /* next server seq */
};

/* seg - a segment of @c's connection: its next seq, acking all it got. */
static void
seg(const struct cli *c, uint8_t flags, const void *data, uint32_t len, bool bad_cksum)
{
	h_rx(&E, mk(&(struct s6){.src = c->ip,
				 .sport = c->port,
				 .seq = c->snd,
				 .ack = c->rcv,
				 .flags = flags,
				 .data = data,
				 .len = len,
				 .bad_cksum = bad_cksum}));
}

/* syn - send a SYN from @c; returns the SYN-ACK's cookie (its seq). */
static uint32_t
syn(struct cli *c)
{
	struct p6 p;

	c->snd = 0x30000000u + c->port;
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = c->ip,
				 .sport = c->port,
				 .seq = c->snd,
				 .flags = RTE_TCP_SYN_FLAG,
				 .mss = 1440}));
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse(0, &p);
	ck_assert_uint_eq(p.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	ck_assert_uint_eq(p.ack, c->snd + 1);
	c->snd++;
	c->rcv = p.seq + 1;
	return p.seq;
}

/* connect6 - the whole handshake from @c; true if the server opened it (no reply). */
static bool
connect6(struct cli *c)
{
	int opened = E.app.opened;

	syn(c);
	h_clear(&E);
	seg(c, RTE_TCP_ACK_FLAG, NULL, 0, false);
	return E.app.opened == opened + 1 && h_ntx(&E) == 0;
}

START_TEST(handshake_with_cookie)
{
	struct cli c = {CLI6, 40000, 0, 0};
	struct sk_addr a, want = {.family = SK_ADDR_V6};
	struct p6 p;

	start6();
	h_start(&E);
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .sport = 40000,
				 .seq = 0x30000000u + 40000,
				 .flags = RTE_TCP_SYN_FLAG,
				 .mss = 1440}));
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse(0, &p);
	ck_assert(memcmp(p.src, SRV6, 16) == 0 && memcmp(p.dst, CLI6, 16) == 0);
	ck_assert(rte_is_same_ether_addr(&p.dmac, &h_cli_mac));
	ck_assert_uint_eq(p.hop, 64);
	ck_assert_uint_eq(p.sport, H_PORT);
	ck_assert_uint_eq(p.dport, 40000);
	ck_assert_uint_eq(p.mss, E.conf.mss - 20); /* MTU - 60 */
	ck_assert_uint_eq(st()->tcp_synack_tx, 1);

	/* The cookie is bound to the addresses: the same ACK from another
	 * address of the /64, or to another of our addresses, fails. */
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6_B,
				 .sport = 40000,
				 .seq = 0x30000000u + 40001,
				 .ack = p.seq + 1,
				 .flags = RTE_TCP_ACK_FLAG}));
	ck_assert_uint_eq(st()->tcp_cookie_bad, 1);
	ck_assert_int_eq(E.app.opened, 0);
	ck_assert_uint_eq(h_ntx(&E), 1); /* an RST */
	parse(0, &p);
	ck_assert_uint_eq(p.flags, RTE_TCP_RST_FLAG);

	ck_assert(connect6(&c));
	ck_assert_uint_eq(st()->tcp_cookie_ok, 1);
	sk_tcp_remote_addr(E.app.conn, &a);
	memcpy(want.bytes, CLI6, 16);
	ck_assert(memcmp(&a, &want, sizeof(a)) == 0);
	sk_tcp_local_addr(E.app.conn, &a);
	memcpy(want.bytes, SRV6, 16);
	ck_assert(memcmp(&a, &want, sizeof(a)) == 0);
	ck_assert_uint_eq(sk_tcp_remote_ip(E.app.conn), 0);
	ck_assert_uint_eq(sk_tcp_remote_port(E.app.conn), 40000);
	h_stop(&E);
}
END_TEST

START_TEST(data_ack_fin)
{
	struct cli c = {CLI6, 40001, 0, 0};
	static const char req[] = "GET /healthz HTTP/1.1\r\n\r\n";
	struct p6 p;

	start6();
	h_start(&E);
	E.app.reply = "HTTP/1.1 200 OK\r\n\r\n";
	E.app.close_on_fin = true;
	ck_assert(connect6(&c));
	h_clear(&E);
	seg(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, req, sizeof(req) - 1, false);
	c.snd += sizeof(req) - 1;
	ck_assert_uint_eq(E.app.rx_len, sizeof(req) - 1);
	ck_assert(memcmp(E.app.rx, req, sizeof(req) - 1) == 0);
	ck_assert_uint_eq(h_ntx(&E), 1); /* the reply, carrying the ACK */
	parse(0, &p);
	ck_assert_uint_eq(p.ack, c.snd);
	ck_assert_uint_eq(p.seq, c.rcv);
	ck_assert_uint_eq(p.len, strlen(E.app.reply));
	ck_assert(memcmp(p.data, E.app.reply, p.len) == 0);
	c.rcv += p.len;

	/* ACK and FIN from the client: the app closes, our FIN goes out. */
	h_clear(&E);
	seg(&c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, NULL, 0, false);
	c.snd++;
	ck_assert_int_eq(E.app.fin_calls, 1);
	ck_assert_uint_ge(h_ntx(&E), 1);
	parse(h_ntx(&E) - 1, &p);
	ck_assert(p.flags & RTE_TCP_FIN_FLAG);
	ck_assert_uint_eq(p.ack, c.snd);
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .sport = c.port,
				 .seq = c.snd,
				 .ack = p.seq + 1,
				 .flags = RTE_TCP_ACK_FLAG}));
	h_advance(&E, 1);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	h_stop(&E);
}
END_TEST

START_TEST(rst_rules)
{
	struct cli c = {CLI6, 40002, 0, 0};
	struct p6 p;

	start6();
	h_start(&E);
	ck_assert(connect6(&c));
	/* In the window but not RCV.NXT: a challenge ACK, the connection stays. */
	h_clear(&E);
	h_rx(&E,
	     mk(&(struct s6){
		     .src = CLI6, .sport = c.port, .seq = c.snd + 100, .flags = RTE_TCP_RST_FLAG}));
	ck_assert_uint_eq(st()->tcp_challenge_ack, 1);
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse(0, &p);
	ck_assert_uint_eq(p.flags, RTE_TCP_ACK_FLAG);
	ck_assert_uint_eq(p.ack, c.snd);
	ck_assert(memcmp(p.dst, CLI6, 16) == 0);
	ck_assert_int_eq(E.app.closed, 0);
	/* Outside the window: ignored. */
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .sport = c.port,
				 .seq = c.snd - 70000,
				 .flags = RTE_TCP_RST_FLAG}));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->tcp_rst_ignored, 1);
	/* A SYN on the connection: challenge ACK (the per-connection limit holds it). */
	h_advance(&E, 1000);
	h_clear(&E);
	h_rx(&E,
	     mk(&(struct s6){
		     .src = CLI6, .sport = c.port, .seq = c.snd + 5, .flags = RTE_TCP_SYN_FLAG}));
	ck_assert_uint_eq(st()->tcp_challenge_ack, 2);
	/* Exactly RCV.NXT: reset. */
	h_rx(&E, mk(&(struct s6){
			 .src = CLI6, .sport = c.port, .seq = c.snd, .flags = RTE_TCP_RST_FLAG}));
	ck_assert_uint_eq(st()->tcp_rst_rx, 1);
	h_advance(&E, 1);
	ck_assert_int_eq(E.app.closed, 1);
	/* Now nothing matches: a segment with ACK earns an RST with SEQ = its ACK. */
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .sport = c.port,
				 .seq = c.snd,
				 .ack = 0x1234,
				 .flags = RTE_TCP_ACK_FLAG,
				 .dport = 81}));
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse(0, &p);
	ck_assert_uint_eq(p.flags, RTE_TCP_RST_FLAG);
	ck_assert_uint_eq(p.seq, 0x1234);
	ck_assert_uint_eq(p.sport, 81);
	h_stop(&E);
}
END_TEST

START_TEST(bad_segments_dropped)
{
	struct cli c = {CLI6, 40003, 0, 0};
	uint64_t ck0;

	start6();
	h_start(&E);
	ck0 = st()->tcp_drop_cksum;
	h_clear(&E);
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .sport = 40003,
				 .seq = 1,
				 .flags = RTE_TCP_SYN_FLAG,
				 .bad_cksum = true}));
	ck_assert_uint_eq(st()->tcp_drop_cksum, ck0 + 1);
	ck_assert_uint_eq(h_ntx(&E), 0);
	/* To an address of the prefix that is not ours: dropped by IPv6. */
	h_rx(&E, mk(&(struct s6){.src = CLI6,
				 .dst = SRV6_OTHER,
				 .sport = 40003,
				 .seq = 1,
				 .flags = RTE_TCP_SYN_FLAG}));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->tcp_syn_rx, 0);
	/* A data segment with a bad checksum on a live connection: no ACK, no data. */
	ck_assert(connect6(&c));
	h_clear(&E);
	seg(&c, RTE_TCP_ACK_FLAG, "xy", 2, true);
	ck_assert_uint_eq(st()->tcp_drop_cksum, ck0 + 2);
	ck_assert_uint_eq(E.app.rx_len, 0);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_stop(&E);
}
END_TEST

START_TEST(cap_per_64)
{
	struct cli a = {CLI6, 41000, 0, 0}, b = {CLI6_B, 41001, 0, 0}, c = {CLI6_C, 41002, 0, 0},
		   d = {CLI6_D, 41003, 0, 0}, a2 = {CLI6, 41004, 0, 0};
	struct p6 p;

	start6();
	E.conf.max_conns_per_ip = 2;
	h_start(&E);
	ck_assert(connect6(&a));
	ck_assert(connect6(&b));
	/* A third address of the same /64: refused with an RST. */
	syn(&c);
	h_clear(&E);
	seg(&c, RTE_TCP_ACK_FLAG, NULL, 0, false);
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 1);
	ck_assert_uint_eq(h_ntx(&E), 1);
	parse(0, &p);
	ck_assert(p.flags & RTE_TCP_RST_FLAG);
	ck_assert_int_eq(E.app.opened, 2);
	/* Another /64 has its own count. */
	ck_assert(connect6(&d));
	/* A connection of the first /64 ends (RST): its address may open one again. */
	h_rx(&E, mk(&(struct s6){
			 .src = b.ip, .sport = b.port, .seq = b.snd, .flags = RTE_TCP_RST_FLAG}));
	h_advance(&E, 1);
	ck_assert(connect6(&a2));
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 1);
	h_stop(&E);
}
END_TEST

/* ip6_prefix 56: two /64s of one /56 share the cap; another /56 does not. */
START_TEST(cap_per_prefix)
{
	struct cli a = {CLI6, 41100, 0, 0}, d = {CLI6_F, 41101, 0, 0}, c = {CLI6_C, 41102, 0, 0},
		   e = {CLI6_E, 41103, 0, 0};

	start6();
	E.conf.max_conns_per_ip = 2;
	E.conf.ip6_prefix = 56;
	h_start(&E);
	ck_assert(connect6(&a));
	ck_assert(connect6(&d));
	syn(&c);
	h_clear(&E);
	seg(&c, RTE_TCP_ACK_FLAG, NULL, 0, false);
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 1);
	ck_assert_int_eq(E.app.opened, 2);
	ck_assert(connect6(&e));
	ck_assert_int_eq(E.app.opened, 3);
	h_stop(&E);
}
END_TEST

START_TEST(v4_and_v6_side_by_side)
{
	struct cli c = {CLI6, 40010, 0, 0};
	struct sk_tcp_conn *c4, *c6;
	struct sk_addr a;

	start6();
	h_start(&E);
	c4 = h_connect(&E, 40010);
	ck_assert(connect6(&c));
	c6 = E.app.conn;
	ck_assert_ptr_ne(c4, c6);
	sk_tcp_remote_addr(c4, &a);
	ck_assert_uint_eq(a.family, SK_ADDR_V4);
	ck_assert_uint_eq(sk_tcp_remote_ip(c4), H_CLI_IP);
	/* Data on each reaches its own connection. */
	h_send(&E, "four", 4);
	seg(&c, RTE_TCP_ACK_FLAG, "six", 3, false);
	ck_assert_uint_eq(E.app.rx_len, 7);
	ck_assert(memcmp(E.app.rx, "foursix", 7) == 0);
	ck_assert_uint_eq(st()->tcp_conns, 2);
	h_stop(&E);
}
END_TEST

START_TEST(flow_hash_v6)
{
	struct rte_mbuf *fwd, *rev, *icmp;
	uint8_t *f;

	start6();
	h_start(&E);
	fwd = mk(&(struct s6){.src = CLI6, .sport = 40020, .seq = 1, .flags = RTE_TCP_SYN_FLAG});
	/* The reverse direction: swap addresses and ports. */
	rev = mk(&(struct s6){.src = SRV6,
			      .dst = CLI6,
			      .sport = H_PORT,
			      .dport = 40020,
			      .seq = 1,
			      .flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG});
	ck_assert_uint_ne(sk_net_flow_hash(fwd), 0);
	ck_assert_uint_eq(sk_net_flow_hash(fwd), sk_net_flow_hash(rev));
	/* Another client port: (almost surely) another hash. */
	icmp = mk(&(struct s6){.src = CLI6, .sport = 40021, .seq = 1, .flags = RTE_TCP_SYN_FLAG});
	ck_assert_uint_ne(sk_net_flow_hash(fwd), sk_net_flow_hash(icmp));
	/* ICMPv6 (neighbour discovery): 0, as ARP. */
	f = rte_pktmbuf_mtod(icmp, uint8_t *);
	f[20] = 58;
	ck_assert_uint_eq(sk_net_flow_hash(icmp), 0);
	rte_pktmbuf_free(fwd);
	rte_pktmbuf_free(rev);
	rte_pktmbuf_free(icmp);
	h_stop(&E);
}
END_TEST

static Suite *
tcp6_suite(void)
{
	Suite *s = suite_create("net_tcp6");
	TCase *tc = tcase_create("tcp6");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, handshake_with_cookie);
	tcase_add_test(tc, data_ack_fin);
	tcase_add_test(tc, rst_rules);
	tcase_add_test(tc, bad_segments_dropped);
	tcase_add_test(tc, cap_per_64);
	tcase_add_test(tc, cap_per_prefix);
	tcase_add_test(tc, v4_and_v6_side_by_side);
	tcase_add_test(tc, flow_hash_v6);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], tcp6_suite());
}
