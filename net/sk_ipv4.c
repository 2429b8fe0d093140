/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_ipv4.c - IPv4 input checks and header building.
 *
 * Input accepts only plain datagrams for our address: version 4, no options
 * (IHL 5), a valid header checksum (verified in software unless the NIC
 * flagged it), a total length the frame really holds, no fragment. Each
 * refusal has its counter. Options and fragments are dropped without reading
 * them, so no malformed option can be misparsed.
 */
#include "sk_net_priv.h"

static bool
src_is_bogus(const struct sk_net_lcore *net, uint32_t src)
{
	uint32_t bcast = net->conf.ip | ~net->netmask;

	return src == 0 || src == UINT32_MAX || (src >> 28) == 0xe || (src >> 28) == 0xf ||
	       (src >> 24) == 127 || sk_net_is_ours(net, src) ||
	       (net->conf.prefix_len < 31 && src == bcast);
}

void
sk_ipv4_input(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip;
	uint32_t avail = rte_pktmbuf_data_len(m) - sizeof(struct rte_ether_hdr);
	uint32_t total;
	uint64_t ck;

	if (avail < sizeof(*ip)) {
		net->stats.drop_short++;
		goto drop;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	if ((ip->version_ihl >> 4) != 4 || (ip->version_ihl & 0xf) < 5) {
		net->stats.drop_ip_version++;
		goto drop;
	}
	if ((ip->version_ihl & 0xf) != 5) {
		net->stats.drop_ip_options++;
		goto drop;
	}
	ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	if (ck == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
	    (ck != RTE_MBUF_F_RX_IP_CKSUM_GOOD && sk_cksum_raw(ip, sizeof(*ip)) != 0xffff)) {
		net->stats.drop_ip_cksum++;
		goto drop;
	}
	total = rte_be_to_cpu_16(ip->total_length);
	if (total < sizeof(*ip) || total > avail) {
		net->stats.drop_ip_len++;
		goto drop;
	}
	if (ip->fragment_offset &
	    rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) {
		net->stats.drop_ip_frag++;
		goto drop;
	}
	if (!sk_net_is_ours(net, rte_be_to_cpu_32(ip->dst_addr))) {
		net->stats.drop_not_us++;
		goto drop;
	}
	if (src_is_bogus(net, rte_be_to_cpu_32(ip->src_addr))) {
		net->stats.drop_ip_src++;
		goto drop;
	}
	/* Drop Ethernet padding so lengths below come from the IP header. */
	if (total < avail)
		rte_pktmbuf_trim(m, (uint16_t)(avail - total));

	switch (ip->next_proto_id) {
	case IPPROTO_TCP:
		sk_tcp_input(net, m, ip);
		return;
	case IPPROTO_ICMP:
		sk_icmp_input(net, m, ip);
		return;
	default:
		net->stats.drop_ip_proto++;
		break;
	}
drop:
	rte_pktmbuf_free(m);
}

void
sk_ipv4_fill(struct rte_ipv4_hdr *ip, uint32_t src, uint32_t dst, uint8_t proto, uint16_t l4_len)
{
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4_len));
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->hdr_checksum = sk_cksum_ipv4_fields(src, dst, proto, (uint16_t)(sizeof(*ip) + l4_len));
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
}

void
sk_ipv4_tx_flags(const struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = sizeof(*ip);
	m->ol_flags = RTE_MBUF_F_TX_IPV4;
	if (net->conf.tx_ip_cksum_offload) {
		ip->hdr_checksum = 0; /* the NIC's to fill */
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	}
}

void
sk_ipv4_finish(const struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	ip->hdr_checksum = sk_cksum_ipv4_hdr(ip);
	sk_ipv4_tx_flags(net, m, ip);
}
