/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_icmp.c - ICMP echo: a request becomes its own reply, in the same mbuf
 * (no allocation). Other ICMP types are counted and dropped; the stack does
 * no path-MTU discovery, so it has no use for them.
 */
#include <rte_icmp.h>

#include "sk_net_priv.h"

void
sk_icmp_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint32_t len = rte_be_to_cpu_16(ip->total_length) - sizeof(*ip);
	struct rte_ether_addr mac;
	rte_be32_t a;
	uint16_t ck;

	if (len < sizeof(*icmp)) {
		net->stats.drop_short++;
		goto drop;
	}
	if (sk_cksum_raw(icmp, len) != 0xffff) {
		net->stats.icmp_drop_cksum++;
		goto drop;
	}
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0) {
		net->stats.icmp_drop_other++;
		goto drop;
	}
	net->stats.icmp_echo_rx++;

	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	ck = (uint16_t)~sk_cksum_raw(icmp, len);
	icmp->icmp_cksum = ck;

	a = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = a;
	ip->time_to_live = 64;
	ip->fragment_offset = 0;
	sk_ipv4_finish(net, m, ip);

	mac = eth->src_addr;
	eth->dst_addr = mac;
	eth->src_addr = net->conf.mac;
	net->stats.icmp_echo_tx++;
	sk_net_tx_enqueue(net, m);
	return;
drop:
	rte_pktmbuf_free(m);
}
