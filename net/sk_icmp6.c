/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_icmp6.c - ICMPv6 (RFC 4443): the checksum over the pseudo-header,
 * echo request -> echo reply, and the two neighbour discovery messages
 * (RFC 4861) the stack needs: a neighbour solicitation for one of our
 * addresses is answered with an advertisement (solicited, override, our
 * MAC in the target link-layer option) and its sender is learnt; an
 * advertisement updates the neighbour cache (sk_nd.c). Every reply is
 * built in the request's own mbuf (no allocation). ND messages must carry
 * hop limit 255 (proof they were not routed) and well-formed options; the
 * rest (router solicitations and advertisements, redirects, errors) is
 * counted and dropped: the stack has no router and does no path-MTU
 * discovery.
 */
#include "sk_net_priv.h"

enum {
	ICMP6_ECHO_REQUEST = 128,
	ICMP6_ECHO_REPLY = 129,
	ND_NS = 135,
	ND_NA = 136,
	ND_OPT_SLLA = 1, /* source link-layer address */
	ND_OPT_TLLA = 2, /* target link-layer address */
	ND_NA_ROUTER = 0x80,
	ND_NA_SOLICITED = 0x40,
	ND_NA_OVERRIDE = 0x20,
	ND_HDR_LEN = 24,	    /* type, code, checksum, 4 bytes flags/reserved, target */
	ND_NA_LEN = ND_HDR_LEN + 8, /* with the target link-layer option */
};

static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
static const uint8_t unspecified[16];

uint16_t
sk_icmp6_cksum(const uint8_t *src, const uint8_t *dst, const void *msg, uint32_t len)
{
	return sk_ipv6_l4_cksum(src, dst, IPPROTO_ICMPV6, msg, len);
}

/* set_cksum - fill the checksum of the ICMPv6 message after @ip (payload_len bytes). */
static void
set_cksum(struct rte_ipv6_hdr *ip)
{
	uint8_t *msg = (uint8_t *)(ip + 1);
	uint32_t len = rte_be_to_cpu_16(ip->payload_len);

	msg[2] = 0;
	msg[3] = 0;
	uint16_t ck = sk_icmp6_cksum(ip->src_addr, ip->dst_addr, msg, len);
	memcpy(msg + 2, &ck, 2);
}

/*
 * nd_option - find the link-layer address option of @type in the options
 * @p (@len bytes) of an NS or NA. Returns 1 found (*@mac), 0 not present,
 * -1 malformed (an option of length 0 or running past the message; a
 * link-layer option of the wrong size). At most len / 8 steps.
 */
static int
nd_option(const uint8_t *p, uint32_t len, uint8_t type, const struct rte_ether_addr **mac)
{
	uint32_t i = 0;
	int found = 0;

	while (i < len) {
		uint32_t olen;

		if (i + 2 > len)
			return -1;
		olen = (uint32_t)p[i + 1] * 8;
		if (olen == 0 || i + olen > len)
			return -1;
		if (p[i] == type) {
			if (olen != 8)
				return -1;
			*mac = (const struct rte_ether_addr *)(p + i + 2);
			found = 1;
		}
		i += olen;
	}
	return found;
}

/* nd_reply_na - turn the frame of an NS into our NA for @target, to @dst via @dmac. */
static void
nd_reply_na(struct sk_net_lcore *net, struct rte_mbuf *m, const uint8_t *target, const uint8_t *dst,
	    const struct rte_ether_addr *dmac, bool solicited)
{
	uint16_t have = rte_pktmbuf_data_len(m);
	uint16_t want = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr) + ND_NA_LEN;
	uint8_t t[16];
	struct rte_ipv6_hdr *ip;
	uint8_t *na;

	memcpy(t, target, 16); /* it lives in the NS we are overwriting */
	if (have > want)
		rte_pktmbuf_trim(m, have - want);
	else if (have < want && rte_pktmbuf_append(m, want - have) == NULL) {
		net->stats.tx_nombuf++;
		rte_pktmbuf_free(m);
		return;
	}
	sk_ipv6_fill(net, m, t, dst, dmac, IPPROTO_ICMPV6, 255, ND_NA_LEN);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	na = (uint8_t *)(ip + 1);
	memset(na, 0, ND_HDR_LEN);
	na[0] = ND_NA;
	na[4] = ND_NA_OVERRIDE | (solicited ? ND_NA_SOLICITED : 0);
	memcpy(na + 8, t, 16);
	na[24] = ND_OPT_TLLA;
	na[25] = 1;
	memcpy(na + 26, net->conf.mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	set_cksum(ip);
	net->stats.nd_na_tx++;
	sk_net_tx_enqueue(net, m);
}

/* nd_input - an NS or NA (@msg, @len bytes, checksum verified). Takes @m. */
static void
nd_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip, uint8_t *msg,
	 uint32_t len)
{
	const struct rte_ether_addr *lla = NULL;
	struct rte_ether_addr dmac;
	const uint8_t *target = msg + 8;
	bool is_ns = msg[0] == ND_NS, from_dad;
	int opt;

	if (ip->hop_limits != 255) {
		net->stats.nd_drop_hop++;
		goto drop;
	}
	if (msg[1] != 0 || len < ND_HDR_LEN || target[0] == 0xff)
		goto bad;
	opt = nd_option(msg + ND_HDR_LEN, len - ND_HDR_LEN, is_ns ? ND_OPT_SLLA : ND_OPT_TLLA,
			&lla);
	if (opt < 0)
		goto bad;
	if (!is_ns) {
		/* An NA to a multicast group cannot be solicited (RFC 4861 §7.1.2). */
		if (ip->dst_addr[0] == 0xff && (msg[4] & ND_NA_SOLICITED))
			goto bad;
		if (sk_ipv6_is_ours(net, target)) {
			net->stats.nd_not_ours++; /* someone else claims our address */
			goto drop;
		}
		net->stats.nd_na_rx++;
		if (lla != NULL)
			sk_nd_learn(net, target, lla, false);
		goto drop;
	}
	/* A solicitation from "::" is duplicate address detection: to a
	 * solicited-node group, without a source link-layer option. */
	from_dad = memcmp(ip->src_addr, unspecified, 16) == 0;
	if (from_dad && (ip->dst_addr[0] != 0xff || lla != NULL))
		goto bad;
	if (!sk_ipv6_is_ours(net, target)) {
		net->stats.nd_not_ours++;
		goto drop;
	}
	net->stats.nd_ns_rx++;
	if (from_dad) {
		/* Defend our address: tell all nodes (RFC 4861 §7.2.4). */
		nd_reply_na(net, m, target, all_nodes, NULL, false);
		return;
	}
	if (lla != NULL)
		sk_nd_learn(net, ip->src_addr, lla, true);
	/* To the sender, at the MAC it sent from (its option may be absent). */
	dmac = rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr;
	nd_reply_na(net, m, target, ip->src_addr, &dmac, true);
	return;
bad:
	net->stats.nd_drop_bad++;
drop:
	rte_pktmbuf_free(m);
}

/* echo_reply - turn the echo request @msg (@len bytes, @off after @ip) into its reply. */
static void
echo_reply(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip, uint8_t *msg,
	   uint32_t off, uint32_t len)
{
	struct rte_ether_addr dmac = rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr;
	const uint8_t *src = ip->dst_addr;

	if (memcmp(ip->src_addr, unspecified, 16) == 0) {
		net->stats.ip6_drop_src++;
		rte_pktmbuf_free(m);
		return;
	}
	net->stats.icmp6_echo_rx++;
	/* Asked on a group: answer from the unicast address of the asker's scope. */
	if (src[0] == 0xff)
		src = sk_ipv6_is_link_local(ip->src_addr) ? net->ll6 : net->conf.ip6;
	if (off != 0) {
		/* The reply carries no extension headers: the message moves up. */
		memmove(ip + 1, msg, len);
		rte_pktmbuf_trim(m, (uint16_t)off);
		msg = (uint8_t *)(ip + 1);
	}
	msg[0] = ICMP6_ECHO_REPLY;
	sk_ipv6_fill(net, m, src, ip->src_addr, &dmac, IPPROTO_ICMPV6, 64, (uint16_t)len);
	set_cksum(ip);
	net->stats.icmp6_echo_tx++;
	sk_net_tx_enqueue(net, m);
}

void
sk_icmp6_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip, uint32_t off,
	       uint32_t len)
{
	uint8_t *msg = (uint8_t *)(ip + 1) + off;

	if (len < 8) {
		net->stats.drop_short++;
		goto drop;
	}
	if (sk_icmp6_cksum(ip->src_addr, ip->dst_addr, msg, len) != 0) {
		net->stats.icmp6_drop_cksum++;
		goto drop;
	}
	switch (msg[0]) {
	case ICMP6_ECHO_REQUEST:
		if (msg[1] != 0)
			break;
		echo_reply(net, m, ip, msg, off, len);
		return;
	case ND_NS:
	case ND_NA:
		nd_input(net, m, ip, msg, len);
		return;
	default:
		break;
	}
	net->stats.icmp6_drop_other++;
drop:
	rte_pktmbuf_free(m);
}
