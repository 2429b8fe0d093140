/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_frame.c - client frame builders (see sk_test_frame.h).
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "sk_test_frame.h"

#define ETH_LEN	     14
#define IP_LEN	     20
#define TCP_LEN	     20
#define ICMP_LEN     8
#define ETH_MIN_LEN  60 /* without the FCS */
#define TCP_OPT_MSS  2
#define TCP_MSS_SIZE 4

/* frame - an mbuf of @len bytes from @mp, or NULL. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (m == NULL)
		return NULL;
	if (len > UINT16_MAX || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

struct rte_mbuf *
sk_frame_ipv4(struct rte_mempool *mp, const struct sk_frame_ends *e, uint8_t proto, uint32_t l4_len,
	      void **l4)
{
	struct rte_mbuf *m =
		l4_len <= UINT16_MAX - IP_LEN ? frame(mp, ETH_LEN + IP_LEN + l4_len) : NULL;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;

	if (m == NULL)
		return NULL;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eth->dst_addr = e->dst_mac;
	eth->src_addr = e->src_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(IP_LEN + l4_len));
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(e->sip);
	ip->dst_addr = rte_cpu_to_be_32(e->dip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	*l4 = ip + 1;
	return m;
}

void
sk_frame_ipv4_fix(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, ETH_LEN);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

struct rte_mbuf *
sk_frame_tcp(struct rte_mempool *mp, const struct sk_frame_ends *e, const struct sk_frame_tcp *t)
{
	uint32_t optlen = t->has_mss ? TCP_MSS_SIZE : 0;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m;
	uint8_t *o;

	if (t->len > UINT16_MAX)
		return NULL;
	m = sk_frame_ipv4(mp, e, IPPROTO_TCP, TCP_LEN + optlen + t->len, (void **)&th);
	if (m == NULL)
		return NULL;
	memset(th, 0, sizeof(*th));
	th->src_port = rte_cpu_to_be_16(t->sport);
	th->dst_port = rte_cpu_to_be_16(t->dport);
	th->sent_seq = rte_cpu_to_be_32(t->seq);
	th->recv_ack = rte_cpu_to_be_32(t->ack);
	th->data_off = (uint8_t)(((TCP_LEN + optlen) / 4) << 4);
	th->tcp_flags = t->flags;
	th->rx_win = rte_cpu_to_be_16(t->win);
	o = (uint8_t *)(th + 1);
	if (optlen != 0) {
		o[0] = TCP_OPT_MSS;
		o[1] = TCP_MSS_SIZE;
		o[2] = (uint8_t)(t->mss >> 8);
		o[3] = (uint8_t)t->mss;
	}
	if (t->len != 0)
		memcpy(o + optlen, t->data, t->len);
	th->cksum = rte_ipv4_udptcp_cksum(
		rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, ETH_LEN), th);
	return m;
}

struct rte_mbuf *
sk_frame_icmp(struct rte_mempool *mp, const struct sk_frame_ends *e, uint8_t type, uint16_t ident,
	      uint16_t seq, const void *payload, uint16_t plen)
{
	struct rte_icmp_hdr *ic;
	struct rte_mbuf *m = sk_frame_ipv4(mp, e, IPPROTO_ICMP, ICMP_LEN + plen, (void **)&ic);

	if (m == NULL)
		return NULL;
	ic->icmp_type = type;
	ic->icmp_code = 0;
	ic->icmp_cksum = 0;
	ic->icmp_ident = rte_cpu_to_be_16(ident);
	ic->icmp_seq_nb = rte_cpu_to_be_16(seq);
	if (plen != 0)
		memcpy(ic + 1, payload, plen);
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, ICMP_LEN + plen);
	return m;
}

struct rte_mbuf *
sk_frame_arp(struct rte_mempool *mp, const struct sk_frame_ends *e, uint16_t op)
{
	struct rte_mbuf *m = frame(mp, ETH_MIN_LEN);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return NULL;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(eth, 0, ETH_MIN_LEN);
	eth->dst_addr = e->dst_mac;
	eth->src_addr = e->src_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)(eth + 1);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = e->src_mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(e->sip);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(e->dip);
	return m;
}
