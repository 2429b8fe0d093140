/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_ipv6.c - IPv6 input checks and header building.
 *
 * Input accepts a datagram whose version is 6 and whose payload length the
 * frame really holds (Ethernet padding is trimmed), to one of our addresses
 * (the configured global one, the link-local one), to the solicited-node
 * multicast group of either, or to all-nodes (ff02::1). Extension headers
 * are walked, not trusted: at most SK_IPV6_EXT_MAX of them, each inside the
 * packet; hop-by-hop only first; a routing header only with no segments
 * left (we would have to forward); options inside hop-by-hop and
 * destination-options headers are stepped over one by one and an unknown
 * option whose type asks for a discard (RFC 8200 §4.2) is obeyed. A
 * fragment header drops the datagram: there is no reassembly. Each refusal
 * has its counter. The upper layer is ICMPv6 or TCP.
 */
#include "sk_net_priv.h"

/* Extension headers walked before the upper layer: more is an attack. */
#define SK_IPV6_EXT_MAX 8

enum {
	NH_HOPOPTS = 0,
	NH_ROUTING = 43,
	NH_TCP = 6,
	NH_FRAGMENT = 44,
	NH_ICMPV6 = 58,
	NH_DSTOPTS = 60,
};

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

uint16_t
sk_ipv6_l4_cksum(const uint8_t *src, const uint8_t *dst, uint8_t proto, const void *msg,
		 uint32_t len)
{
	/* Upper-layer length and next header, as RFC 8200 §8.1 lays them out. */
	const rte_be32_t ph[2] = {rte_cpu_to_be_32(len), rte_cpu_to_be_32(proto)};
	uint64_t sum = sk_cksum_add(0, src, 16);

	sum = sk_cksum_add(sum, dst, 16);
	sum = sk_cksum_add(sum, ph, sizeof(ph));
	sum = sk_cksum_add(sum, msg, len);
	return (uint16_t)~sk_cksum_fold(sum);
}

void
sk_ipv6_solicited(const uint8_t *a, uint8_t out[16])
{
	static const uint8_t head[13] = {0xff, 0x02, [11] = 1, [12] = 0xff};

	memcpy(out, head, sizeof(head));
	memcpy(out + 13, a + 13, 3);
}

void
sk_ipv6_mcast_mac(const uint8_t *a, struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], a + 12, 4);
}

void
sk_net_ipv6_link_local(const struct rte_ether_addr *mac, uint8_t ll[16])
{
	const uint8_t *b = mac->addr_bytes;

	memset(ll, 0, 16);
	ll[0] = 0xfe;
	ll[1] = 0x80;
	ll[8] = b[0] ^ 0x02; /* the universal/local bit, inverted */
	ll[9] = b[1];
	ll[10] = b[2];
	ll[11] = 0xff;
	ll[12] = 0xfe;
	ll[13] = b[3];
	ll[14] = b[4];
	ll[15] = b[5];
}

/* dst_is_ours - unicast of ours, all-nodes, or the solicited-node group of one of ours. */
static bool
dst_is_ours(const struct sk_net_lcore *net, const uint8_t *d)
{
	uint8_t sn[16];

	if (d[0] != 0xff)
		return sk_ipv6_is_ours(net, d);
	if (memcmp(d, all_nodes, 16) == 0)
		return true;
	sk_ipv6_solicited(net->ll6, sn);
	if (memcmp(d, sn, 16) == 0)
		return true;
	sk_ipv6_solicited(net->conf.ip6, sn);
	return memcmp(d, sn, 16) == 0;
}

/* src_is_bogus - multicast, loopback (::1) or one of ours ("::" is for ND's DAD). */
static bool
src_is_bogus(const struct sk_net_lcore *net, const uint8_t *s)
{
	static const uint8_t loopback[16] = {[15] = 1};

	return s[0] == 0xff || memcmp(s, loopback, 16) == 0 || sk_ipv6_is_ours(net, s);
}

/*
 * options_ok - the TLV options of a hop-by-hop or destination-options
 * header (@p, @len bytes, the 2-byte header included): each inside the
 * header, and none of unknown type whose top two bits ask for a discard.
 * We know only Pad1 and PadN. Bounded by @len.
 */
static bool
options_ok(const uint8_t *p, uint32_t len)
{
	uint32_t i = 2;

	while (i < len) {
		uint8_t type = p[i];

		if (type == 0) { /* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > len || i + 2 + (uint32_t)p[i + 1] > len)
			return false;
		if (type != 1 && (type >> 6) != 0)
			return false; /* "discard if unrecognised" */
		i += 2 + (uint32_t)p[i + 1];
	}
	return true;
}

/*
 * skip_ext - walk the extension headers after @ip (payload @plen bytes).
 * Returns the upper-layer protocol and sets *@off to its offset after the
 * IPv6 header, or -1 with the drop counted.
 */
static int
skip_ext(struct sk_net_lcore *net, const struct rte_ipv6_hdr *ip, uint32_t plen, uint32_t *off)
{
	const uint8_t *pl = (const uint8_t *)(ip + 1);
	uint8_t nh = ip->proto;
	uint32_t o = 0;

	for (unsigned n = 0; n <= SK_IPV6_EXT_MAX; n++) {
		uint32_t len;

		if (nh == NH_FRAGMENT) {
			net->stats.ip6_drop_frag++;
			return -1;
		}
		if (nh != NH_HOPOPTS && nh != NH_ROUTING && nh != NH_DSTOPTS) {
			*off = o;
			return nh;
		}
		if (n == SK_IPV6_EXT_MAX || (nh == NH_HOPOPTS && n != 0) || o + 8 > plen)
			break;
		len = ((uint32_t)pl[o + 1] + 1) * 8;
		if (o + len > plen)
			break;
		if (nh == NH_ROUTING ? pl[o + 3] != 0 : !options_ok(pl + o, len))
			break; /* segments left: we would be a hop; or a discard option */
		nh = pl[o];
		o += len;
	}
	net->stats.ip6_drop_ext++;
	return -1;
}

void
sk_ipv6_input(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	struct rte_ipv6_hdr *ip;
	uint32_t avail = rte_pktmbuf_data_len(m) - sizeof(struct rte_ether_hdr);
	uint32_t plen, off = 0;
	int proto;

	net->stats.ip6_rx++;
	if (avail < sizeof(*ip)) {
		net->stats.drop_short++;
		goto drop;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	plen = rte_be_to_cpu_16(ip->payload_len);
	/* A zero payload length is a jumbogram's (RFC 2675): not on Ethernet. */
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 || plen == 0 ||
	    plen > avail - sizeof(*ip)) {
		net->stats.ip6_drop_bad++;
		goto drop;
	}
	if (!dst_is_ours(net, ip->dst_addr)) {
		net->stats.ip6_drop_not_us++;
		goto drop;
	}
	if (src_is_bogus(net, ip->src_addr)) {
		net->stats.ip6_drop_src++;
		goto drop;
	}
	/* Drop Ethernet padding so lengths below come from the IP header. */
	if (plen < avail - sizeof(*ip))
		rte_pktmbuf_trim(m, (uint16_t)(avail - sizeof(*ip) - plen));
	proto = skip_ext(net, ip, plen, &off);
	if (proto < 0)
		goto drop;
	if (proto == NH_TCP) {
		sk_tcp_input6(net, m, ip, off, plen - off);
		return;
	}
	if (proto == NH_ICMPV6) {
		sk_icmp6_input(net, m, ip, off, plen - off);
		return;
	}
	net->stats.ip6_drop_proto++;
drop:
	rte_pktmbuf_free(m);
}

void
sk_ipv6_fill(const struct sk_net_lcore *net, struct rte_mbuf *m, const uint8_t *src,
	     const uint8_t *dst, const struct rte_ether_addr *dmac, uint8_t proto,
	     uint8_t hop_limit, uint16_t l4_len)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
	uint8_t s[16], d[16];

	/* Copies first: @src / @dst may point into the frame being rewritten. */
	memcpy(s, src, 16);
	memcpy(d, dst, 16);
	if (dmac != NULL)
		eth->dst_addr = *dmac;
	else
		sk_ipv6_mcast_mac(d, &eth->dst_addr);
	eth->src_addr = net->conf.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(l4_len);
	ip->proto = proto;
	ip->hop_limits = hop_limit;
	memcpy(ip->src_addr, s, 16);
	memcpy(ip->dst_addr, d, 16);
	m->l2_len = sizeof(*eth);
	m->l3_len = sizeof(*ip);
	m->ol_flags = 0;
}
