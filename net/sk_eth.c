/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_eth.c - Ethernet input: checks the frame is for us and demultiplexes
 * ARP, IPv4 and (when the stack has an IPv6 address) IPv6. Everything else
 * (VLAN tags, LLDP...) is counted and freed.
 */
#include "sk_net_priv.h"

void
sk_eth_input(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	uint16_t type;

	if (sk_unlikely(!rte_pktmbuf_is_contiguous(m))) {
		net->stats.drop_nonlinear++;
		goto drop;
	}
	if (sk_unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth))) {
		net->stats.drop_short++;
		goto drop;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_ARP) {
		/* ARP requests are broadcast; replies may be unicast to us. */
		if (!rte_is_broadcast_ether_addr(&eth->dst_addr) &&
		    !rte_is_same_ether_addr(&eth->dst_addr, &net->conf.mac)) {
			net->stats.drop_not_us++;
			goto drop;
		}
		sk_arp_input(net, m);
		return;
	}
	if (type == RTE_ETHER_TYPE_IPV6 && net->has_ip6) {
		/* Our MAC, or a 33:33:... group: sk_ipv6_input() checks which. */
		if (!rte_is_same_ether_addr(&eth->dst_addr, &net->conf.mac) &&
		    (eth->dst_addr.addr_bytes[0] != 0x33 || eth->dst_addr.addr_bytes[1] != 0x33)) {
			net->stats.drop_not_us++;
			goto drop;
		}
		sk_ipv6_input(net, m);
		return;
	}
	if (type != RTE_ETHER_TYPE_IPV4) {
		net->stats.drop_ethertype++;
		goto drop;
	}
	/* IPv4 only to our unicast MAC (a promiscuous tap sees everyone's). */
	if (!rte_is_same_ether_addr(&eth->dst_addr, &net->conf.mac)) {
		net->stats.drop_not_us++;
		goto drop;
	}
	sk_ipv4_input(net, m);
	return;
drop:
	rte_pktmbuf_free(m);
}
