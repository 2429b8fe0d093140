/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_arp.c - ARP: answer requests for our address (the very first one
 * included: the reply is built in the request's own mbuf and queued at
 * once), learn senders into a small direct-mapped cache, and resolve the
 * gateway from a timer (retry every second until known, refresh every
 * minute).
 *
 * The TCP server never needs the cache: it answers each segment to the
 * source MAC of the peer's last segment.
 */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_jhash.h>

#include "sk_net_priv.h"

#define ARP_RETRY_MS   1000
#define ARP_REFRESH_MS 60000

static inline unsigned
arp_slot(uint32_t ip)
{
	return rte_jhash_1word(ip, 0) & (SK_ARP_CACHE_SIZE - 1);
}

static void
arp_learn(struct sk_net_lcore *net, uint32_t ip, const struct rte_ether_addr *mac)
{
	struct sk_arp_entry *e = &net->arp[arp_slot(ip)];

	if (ip == 0 || !rte_is_valid_assigned_ether_addr(mac))
		return;
	e->ip = ip;
	e->mac = *mac;
}

int
sk_net_arp_lookup(const struct sk_net_lcore *net, uint32_t ip, struct rte_ether_addr *mac)
{
	const struct sk_arp_entry *e = &net->arp[arp_slot(ip)];

	if (ip == 0 || e->ip != ip)
		return -ENOENT;
	if (mac != NULL)
		*mac = e->mac;
	return 0;
}

void
sk_arp_input(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	uint32_t sip, tip;
	uint16_t op;

	net->stats.arp_rx++;
	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*arp)) {
		net->stats.drop_short++;
		goto drop;
	}
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		goto bad;
	op = rte_be_to_cpu_16(arp->arp_opcode);
	sip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
	tip = rte_be_to_cpu_32(arp->arp_data.arp_tip);
	if (!sk_net_is_ours(net, tip) || sk_net_is_ours(net, sip))
		goto bad;
	arp_learn(net, sip, &arp->arp_data.arp_sha);
	if (op != RTE_ARP_OP_REQUEST)
		goto drop; /* a reply: learnt above */

	/* Turn the request into the reply in place. */
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	arp->arp_data.arp_tha = arp->arp_data.arp_sha;
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	arp->arp_data.arp_sha = net->conf.mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(tip); /* whichever of ours was asked */
	eth->dst_addr = eth->src_addr;
	eth->src_addr = net->conf.mac;
	m->ol_flags = 0;
	net->stats.arp_reply_tx++;
	sk_net_tx_enqueue(net, m);
	return;
bad:
	net->stats.arp_drop++;
drop:
	rte_pktmbuf_free(m);
}

static void
arp_send_request(struct sk_net_lcore *net, uint32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(net->pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL) {
		net->stats.tx_nombuf++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		net->stats.tx_nombuf++;
		return;
	}
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	eth->src_addr = net->conf.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = net->conf.mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(net->conf.ip);
	memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	net->stats.arp_request_tx++;
	sk_net_tx_enqueue(net, m);
}

void
sk_arp_on_timer(struct sk_net_lcore *net)
{
	uint32_t gw = net->conf.gateway;
	bool known = sk_net_arp_lookup(net, gw, NULL) == 0;

	/* Refresh a known gateway too: its entry may be overwritten or move. */
	arp_send_request(net, gw);
	sk_timer_wheel_arm(&net->wheel, &net->arp_timer,
			   net->now_tick +
				   sk_net_ms_to_ticks(net, known ? ARP_REFRESH_MS : ARP_RETRY_MS));
}
