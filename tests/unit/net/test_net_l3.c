/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_l3.c - Ethernet, ARP, IPv4 and ICMP with crafted frames: ARP
 * replies (the very first request included), gateway resolution, ICMP echo
 * with a correct checksum, every IPv4 refusal counted, the symmetric flow
 * hash, TCP checksums summed from the send ring (wrapped at odd offsets),
 * and the answer sent in its request's mbuf.
 */
#include <check.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_errno.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_harness.h"
#include "sk_common.h"

static struct h_env E;

static const struct sk_net_stats *
st(void)
{
	return sk_net_lcore_stats(E.net);
}

static struct rte_mbuf *
mk_arp(uint16_t op, const struct rte_ether_addr *eth_dst, const struct rte_ether_addr *sha,
       uint32_t sip, uint32_t tip)
{
	struct sk_frame_ends e = {.src_mac = *sha, .dst_mac = *eth_dst, .sip = sip, .dip = tip};
	struct rte_mbuf *m = sk_frame_arp(h_pool(), &e, op);

	ck_assert_ptr_nonnull(m);
	return m;
}

static const struct rte_ether_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

START_TEST(arp_first_request)
{
	struct h_pkt p;
	const struct rte_arp_hdr *arp;

	h_conf(&E);
	h_start(&E);
	/* The very first frame the stack ever sees is an ARP request: answered. */
	h_rx(&E, mk_arp(RTE_ARP_OP_REQUEST, &bcast, &h_cli_mac, H_CLI_IP, H_SRV_IP));
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert_uint_eq(p.ethertype, RTE_ETHER_TYPE_ARP);
	ck_assert(rte_is_same_ether_addr(&p.dst, &h_cli_mac));
	ck_assert(rte_is_same_ether_addr(&p.src, &h_srv_mac));
	arp = rte_pktmbuf_mtod_offset(p.m, const struct rte_arp_hdr *, 14);
	ck_assert_uint_eq(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY);
	ck_assert(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &h_srv_mac));
	ck_assert_uint_eq(rte_be_to_cpu_32(arp->arp_data.arp_sip), H_SRV_IP);
	ck_assert(rte_is_same_ether_addr(&arp->arp_data.arp_tha, &h_cli_mac));
	ck_assert_uint_eq(rte_be_to_cpu_32(arp->arp_data.arp_tip), H_CLI_IP);
	ck_assert_uint_eq(st()->arp_reply_tx, 1);
	/* The requester was learnt. */
	struct rte_ether_addr mac;
	ck_assert_int_eq(sk_net_arp_lookup(E.net, H_CLI_IP, &mac), 0);
	ck_assert(rte_is_same_ether_addr(&mac, &h_cli_mac));

	/* Table: requests that must not be answered. */
	static const struct rte_ether_addr other = {{0x02, 0, 0, 0, 0, 0x99}};
	static const struct {
		uint16_t op;
		const struct rte_ether_addr *dst;
		uint32_t sip, tip;
	} t[] = {
		{RTE_ARP_OP_REQUEST, &bcast, H_CLI_IP, SK_IPV4(198, 18, 0, 77)}, /* not us */
		{RTE_ARP_OP_REQUEST, &other, H_CLI_IP, H_SRV_IP},   /* unicast to someone else */
		{RTE_ARP_OP_REQUEST, &bcast, H_SRV_IP, H_SRV_IP},   /* gratuitous / conflict */
		{RTE_ARP_OP_REPLY, &h_srv_mac, H_CLI_IP, H_SRV_IP}, /* a reply: learn only */
	};
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		h_clear(&E);
		h_rx(&E, mk_arp(t[i].op, t[i].dst, &h_cli_mac, t[i].sip, t[i].tip));
		ck_assert_uint_eq(h_ntx(&E), 0);
	}
	/* Truncated ARP. */
	struct rte_mbuf *m = mk_arp(RTE_ARP_OP_REQUEST, &bcast, &h_cli_mac, H_CLI_IP, H_SRV_IP);
	rte_pktmbuf_trim(m, 60 - 30);
	h_rx(&E, m);
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->drop_short, 1);
	h_stop(&E);
}
END_TEST

START_TEST(arp_gateway)
{
	struct h_pkt p;
	const struct rte_arp_hdr *arp;
	static const struct rte_ether_addr gw_mac = {{0x02, 0, 0, 0, 0, 0xfe}};

	h_conf(&E);
	E.conf.gateway = H_GW_IP;
	h_start(&E);
	ck_assert_int_eq(sk_net_arp_lookup(E.net, H_GW_IP, NULL), -ENOENT);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert(rte_is_broadcast_ether_addr(&p.dst));
	arp = rte_pktmbuf_mtod_offset(p.m, const struct rte_arp_hdr *, 14);
	ck_assert_uint_eq(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REQUEST);
	ck_assert_uint_eq(rte_be_to_cpu_32(arp->arp_data.arp_tip), H_GW_IP);
	ck_assert_uint_eq(rte_be_to_cpu_32(arp->arp_data.arp_sip), H_SRV_IP);
	/* No answer: retried after a second. */
	h_clear(&E);
	h_advance(&E, 999);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_advance(&E, 2);
	ck_assert_uint_eq(h_ntx(&E), 1);
	/* The reply resolves it; then only a slow refresh. */
	h_clear(&E);
	h_rx(&E, mk_arp(RTE_ARP_OP_REPLY, &h_srv_mac, &gw_mac, H_GW_IP, H_SRV_IP));
	struct rte_ether_addr mac;
	ck_assert_int_eq(sk_net_arp_lookup(E.net, H_GW_IP, &mac), 0);
	ck_assert(rte_is_same_ether_addr(&mac, &gw_mac));
	h_advance(&E, 5000);
	ck_assert_uint_eq(h_ntx(&E), 1); /* the retry already armed; then 60 s */
	ck_assert_uint_eq(st()->arp_request_tx, 3);
	h_stop(&E);
}
END_TEST

static struct rte_mbuf *
mk_icmp(uint8_t type, const void *payload, uint16_t plen)
{
	struct sk_frame_ends e = h_ends(H_CLI_IP);
	struct rte_mbuf *m = sk_frame_icmp(h_pool(), &e, type, 0x4242, 7, payload, plen);
	struct rte_ipv4_hdr *ip;

	ck_assert_ptr_nonnull(m);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = 3;
	sk_frame_ipv4_fix(m);
	return m;
}

START_TEST(icmp_echo)
{
	struct h_pkt p;
	/* Table of payload sizes: odd, even, empty, large. */
	static const uint16_t sizes[] = {0, 1, 56, 57, 1400};
	static uint8_t payload[1400];

	for (unsigned i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	h_conf(&E);
	h_start(&E);
	for (unsigned i = 0; i < SK_ARRAY_SIZE(sizes); i++) {
		h_clear(&E);
		h_rx(&E, mk_icmp(RTE_IP_ICMP_ECHO_REQUEST, payload, sizes[i]));
		ck_assert_uint_eq(h_ntx(&E), 1);
		ck_assert(h_parse(&E, 0, &p));
		ck_assert(p.ip_ok);
		ck_assert(p.l4_ok);
		ck_assert_uint_eq(p.proto, IPPROTO_ICMP);
		ck_assert_uint_eq(p.sip, H_SRV_IP);
		ck_assert_uint_eq(p.dip, H_CLI_IP);
		ck_assert(rte_is_same_ether_addr(&p.dst, &h_cli_mac));
		ck_assert_uint_eq(p.len, 8u + sizes[i]);
		ck_assert_uint_eq(p.data[0], RTE_IP_ICMP_ECHO_REPLY);
		ck_assert_mem_eq(p.data + 4, "\x42\x42\x00\x07", 4);
		ck_assert_mem_eq(p.data + 8, payload, sizes[i]);
	}
	ck_assert_uint_eq(st()->icmp_echo_tx, SK_ARRAY_SIZE(sizes));
	/* Bad checksum, and a type we ignore. */
	h_clear(&E);
	struct rte_mbuf *m = mk_icmp(RTE_IP_ICMP_ECHO_REQUEST, payload, 10);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 8)[3] ^= 1;
	h_rx(&E, m);
	h_rx(&E, mk_icmp(RTE_IP_ICMP_ECHO_REPLY, payload, 10));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->icmp_drop_cksum, 1);
	ck_assert_uint_eq(st()->icmp_drop_other, 1);
	h_stop(&E);
}
END_TEST

/* IPv4 refusals: mangle a valid SYN, expect a drop and its counter. */
enum mangle {
	M_CKSUM,
	M_MF,
	M_OFFSET,
	M_OPTIONS,
	M_VERSION,
	M_IHL4,
	M_TOTLEN_BIG,
	M_TOTLEN_SMALL,
	M_DST,
	M_SRC_BCAST,
	M_SRC_SELF,
	M_PROTO_UDP,
	M_ETH_TYPE,
	M_ETH_DST,
	M_SHORT_ETH,
	M_SHORT_IP,
};

static size_t
stat_of(const struct sk_net_stats *s, enum mangle k)
{
	switch (k) {
	case M_CKSUM:
		return s->drop_ip_cksum;
	case M_MF:
	case M_OFFSET:
		return s->drop_ip_frag;
	case M_OPTIONS:
		return s->drop_ip_options;
	case M_VERSION:
	case M_IHL4:
		return s->drop_ip_version;
	case M_TOTLEN_BIG:
	case M_TOTLEN_SMALL:
		return s->drop_ip_len;
	case M_DST:
	case M_ETH_DST:
		return s->drop_not_us;
	case M_SRC_BCAST:
	case M_SRC_SELF:
		return s->drop_ip_src;
	case M_PROTO_UDP:
		return s->drop_ip_proto;
	case M_ETH_TYPE:
		return s->drop_ethertype;
	case M_SHORT_ETH:
	case M_SHORT_IP:
		return s->drop_short;
	}
	return 0;
}

START_TEST(ipv4_drops)
{
	static const enum mangle t[] = {M_CKSUM,    M_MF,	 M_OFFSET,     M_OPTIONS,
					M_VERSION,  M_IHL4,	 M_TOTLEN_BIG, M_TOTLEN_SMALL,
					M_DST,	    M_SRC_BCAST, M_SRC_SELF,   M_PROTO_UDP,
					M_ETH_TYPE, M_ETH_DST,	 M_SHORT_ETH,  M_SHORT_IP};

	h_conf(&E);
	h_start(&E);
	E.cport = 40000;
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		struct rte_mbuf *m = h_tcp(&E, 1, 0, RTE_TCP_SYN_FLAG, 65535, NULL, 0, 1460);
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
		bool fix = true;
		size_t before = stat_of(st(), t[i]);

		switch (t[i]) {
		case M_CKSUM:
			ip->hdr_checksum ^= 1;
			fix = false;
			break;
		case M_MF:
			ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
			break;
		case M_OFFSET:
			ip->fragment_offset = rte_cpu_to_be_16(3);
			break;
		case M_OPTIONS:
			ip->version_ihl = 0x46;
			break;
		case M_VERSION:
			ip->version_ihl = 0x65;
			break;
		case M_IHL4:
			ip->version_ihl = 0x44;
			break;
		case M_TOTLEN_BIG:
			ip->total_length = rte_cpu_to_be_16(1000);
			break;
		case M_TOTLEN_SMALL:
			ip->total_length = rte_cpu_to_be_16(19);
			break;
		case M_DST:
			ip->dst_addr = rte_cpu_to_be_32(SK_IPV4(198, 18, 0, 9));
			break;
		case M_SRC_BCAST:
			ip->src_addr = rte_cpu_to_be_32(SK_IPV4(198, 18, 0, 255));
			break;
		case M_SRC_SELF:
			ip->src_addr = rte_cpu_to_be_32(H_SRV_IP);
			break;
		case M_PROTO_UDP:
			ip->next_proto_id = IPPROTO_UDP;
			break;
		case M_ETH_TYPE:
			eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
			break;
		case M_ETH_DST:
			eth->dst_addr.addr_bytes[5] ^= 0x10;
			break;
		case M_SHORT_ETH:
			rte_pktmbuf_trim(m, rte_pktmbuf_data_len(m) - 10);
			break;
		case M_SHORT_IP:
			rte_pktmbuf_trim(m, rte_pktmbuf_data_len(m) - 20);
			break;
		}
		if (fix)
			sk_frame_ipv4_fix(m);
		h_clear(&E);
		h_rx(&E, m);
		ck_assert_msg(h_ntx(&E) == 0, "case %u answered", i);
		ck_assert_msg(stat_of(st(), t[i]) == before + 1, "case %u not counted", i);
	}
	ck_assert_uint_eq(st()->tcp_syn_rx, 0);
	/* The unmangled SYN, with Ethernet padding, is answered. */
	struct rte_mbuf *m = h_tcp(&E, 1, 0, RTE_TCP_SYN_FLAG, 65535, NULL, 0, 1460);
	memset(rte_pktmbuf_append(m, 6), 0xee, 6);
	h_rx(&E, m);
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert_uint_eq(st()->tcp_syn_rx, 1);
	h_stop(&E);
}
END_TEST

START_TEST(flow_hash_symmetric)
{
	h_conf(&E);
	/* Fixed seed LCG: 200 random 4-tuples, both directions hash alike. */
	uint64_t x = 12345;
	unsigned distinct = 0;
	uint32_t first = 0;

	for (int i = 0; i < 200; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t a = (uint32_t)(x >> 32), b = (uint32_t)x;
		uint16_t pa = (uint16_t)(x >> 16), pb = (uint16_t)(x >> 40);
		struct rte_mbuf *f =
			h_tcp_from(&E, a, pa, pb, 1, 2, RTE_TCP_ACK_FLAG, 1, NULL, 0, 0);
		struct rte_mbuf *r =
			h_tcp_from(&E, b, pb, pa, 1, 2, RTE_TCP_ACK_FLAG, 1, NULL, 0, 0);
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(f, struct rte_ipv4_hdr *, 14);

		ip->dst_addr = rte_cpu_to_be_32(b);
		ip = rte_pktmbuf_mtod_offset(r, struct rte_ipv4_hdr *, 14);
		ip->dst_addr = rte_cpu_to_be_32(a);
		ck_assert_uint_eq(sk_net_flow_hash(f), sk_net_flow_hash(r));
		if (i == 0)
			first = sk_net_flow_hash(f);
		else if (sk_net_flow_hash(f) != first)
			distinct++;
		rte_pktmbuf_free(f);
		rte_pktmbuf_free(r);
	}
	ck_assert_uint_gt(distinct, 190);
	struct rte_mbuf *m = mk_arp(RTE_ARP_OP_REQUEST, &bcast, &h_cli_mac, H_CLI_IP, H_SRV_IP);
	ck_assert_uint_eq(sk_net_flow_hash(m), 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(create_rejects_bad_conf)
{
	/* Table of single bad fields: create must fail with EINVAL. */
	for (int i = 0; i < 8; i++) {
		struct sk_net_conf c;
		struct sk_net_app_ops ops = {(void *)1, (void *)1, (void *)1, NULL};

		h_conf(&E);
		c = E.conf;
		switch (i) {
		case 0:
			c.ip = 0;
			break;
		case 1:
			memset(&c.mac, 0, sizeof(c.mac));
			break;
		case 2:
			c.timer_slots = 1000;
			break;
		case 3:
			c.mss = 10;
			break;
		case 4:
			c.rto_min_ms = 5000;
			break;
		case 5:
			c.app_data_size = 64;
			break;
		case 6:
			c.rcv_buf_size = 70000;
			break;
		case 7:
			ops.on_data = NULL;
			break;
		}
		ck_assert_ptr_null(sk_net_lcore_create(&c, 0, h_pool(), SOCKET_ID_ANY, &ops, NULL));
		ck_assert_int_eq(rte_errno, EINVAL);
	}
}
END_TEST

static uint16_t
refuse_all(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	(void)ctx;
	(void)pkts;
	(void)n;
	return 0;
}

START_TEST(tx_refused_and_offload)
{
	struct h_pkt p;

	/* Frames the NIC refuses are freed and counted (h_stop checks the pool). */
	h_conf(&E);
	E.conf.tx_fn = refuse_all;
	h_start(&E);
	for (int i = 0; i < 3; i++)
		h_rx(&E, mk_arp(RTE_ARP_OP_REQUEST, &bcast, &h_cli_mac, H_CLI_IP, H_SRV_IP));
	ck_assert_uint_eq(st()->tx_dropped, 3);
	ck_assert_uint_eq(st()->tx_pkts, 0);
	h_stop(&E);

	/* With offload: flags and lengths for the NIC, pseudo-header sum in the TCP field. */
	h_conf(&E);
	E.conf.tx_ip_cksum_offload = true;
	E.conf.tx_tcp_cksum_offload = true;
	h_start(&E);
	E.cport = 4444;
	h_rx(&E, h_tcp(&E, 1, 0, RTE_TCP_SYN_FLAG, 65535, NULL, 0, 1460));
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert_uint_eq(p.m->ol_flags & (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
					   RTE_MBUF_F_TX_TCP_CKSUM),
			  RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM);
	ck_assert_uint_eq(p.m->l2_len, 14);
	ck_assert_uint_eq(p.m->l3_len, 20);
	ck_assert_uint_eq(p.m->l4_len, 24);
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(p.m, const struct rte_ipv4_hdr *, 14);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
	ck_assert_uint_eq(ip->hdr_checksum, 0);
	ck_assert_uint_eq(th->cksum, rte_ipv4_phdr_cksum(ip, p.m->ol_flags));
	h_stop(&E);
}
END_TEST

/* The TCP checksum is summed from the send ring, not read back from the
 * frame: responses of every length 1..600 (fixed seed) walk the 4 KiB ring
 * round several times, so payloads wrap at odd and even offsets; every
 * segment must carry valid checksums and the bytes sent. */
START_TEST(tcp_cksum_ring_wrap)
{
	static uint8_t msg[600];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned wraps_odd = 0;
	uint32_t ring = 0;

	h_conf(&E);
	h_start(&E);
	h_connect(&E, 5555);
	for (unsigned round = 0; round < 200; round++) {
		uint32_t len = 1 + (uint32_t)(round * 7919u % 600), got = 0;
		struct h_pkt p;

		for (uint32_t i = 0; i < len; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			msg[i] = (uint8_t)(x >> 56);
		}
		if (ring + len > E.conf.snd_buf_size && ((E.conf.snd_buf_size - ring) & 1))
			wraps_odd++;
		ring = (ring + len) % E.conf.snd_buf_size;
		h_clear(&E);
		ck_assert_int_eq(sk_tcp_send(E.app.conn, msg, len), 0);
		h_flush(&E);
		for (unsigned k = 0; k < h_ntx(&E); k++) {
			ck_assert(h_parse(&E, k, &p));
			ck_assert(p.ip_ok && p.l4_ok);
			ck_assert_uint_le(got + p.len, len);
			ck_assert_mem_eq(p.data, msg + got, p.len);
			got += p.len;
		}
		ck_assert_uint_eq(got, len);
		h_ack_all(&E);
	}
	ck_assert_uint_gt(wraps_odd, 0);
	h_stop(&E);
}
END_TEST

/* A received frame the stack is done with carries a segment of the same
 * pass: the answer goes out in its request's mbuf. Not a frame someone else
 * still holds (refcnt 2): that one is left to its holder. No mbuf is lost
 * either way (h_stop counts the pool). */
START_TEST(answer_in_request_mbuf)
{
	static const char req[] = "GET / HTTP/1.1\r\n\r\n";
	struct rte_mbuf *m;
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_connect(&E, 6000);
	E.app.reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	for (int held = 0; held < 2; held++) {
		h_clear(&E);
		m = h_tcp(&E, E.snd, E.rcvd, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, 65535, req,
			  sizeof(req) - 1, 0);
		if (held)
			rte_mbuf_refcnt_update(m, 1);
		h_rx(&E, m);
		E.snd += sizeof(req) - 1;
		ck_assert_uint_eq(h_ntx(&E), 1);
		ck_assert(h_parse(&E, 0, &p));
		ck_assert(p.ip_ok && p.l4_ok);
		ck_assert_uint_eq(p.len, strlen(E.app.reply));
		ck_assert_uint_eq(p.ack, E.snd);
		if (held) {
			ck_assert_ptr_ne(p.m, m);
			ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
			rte_pktmbuf_free(m);
		} else {
			ck_assert_ptr_eq(p.m, m);
		}
	}
	h_stop(&E);
}
END_TEST

static Suite *
l3_suite(void)
{
	Suite *s = suite_create("net_l3");
	TCase *tc = tcase_create("l3");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, arp_first_request);
	tcase_add_test(tc, arp_gateway);
	tcase_add_test(tc, icmp_echo);
	tcase_add_test(tc, ipv4_drops);
	tcase_add_test(tc, flow_hash_symmetric);
	tcase_add_test(tc, create_rejects_bad_conf);
	tcase_add_test(tc, tx_refused_and_offload);
	tcase_add_test(tc, tcp_cksum_ring_wrap);
	tcase_add_test(tc, answer_in_request_mbuf);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], l3_suite());
}
