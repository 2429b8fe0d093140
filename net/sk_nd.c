/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_nd.c - the neighbour cache of IPv6 (RFC 4861, the part a host that
 * only answers and resolves on one link needs): the IPv6 twin of the ARP
 * cache. 64 entries, direct-mapped (a new address takes its slot, as in
 * the ARP cache), written by sk_icmp6.c from solicitations for our
 * addresses and from advertisements. An entry is trusted for
 * ND_REACHABLE_MS after it was learnt (the ARP gateway refresh period);
 * after that a lookup treats it as missing and solicits again. A lookup
 * miss sends a neighbour solicitation to the solicited-node group, at most
 * once per ND_RETRY_MS per address (the entry waits INCOMPLETE) and at most
 * SK_ND_NS_PER_S in all per lcore, so a caller looking up many addresses
 * cannot make the lcore flood the link.
 *
 * The TCP server will not need the cache (it answers to the source MAC of
 * the peer's last segment); active opens and a future IPv6 gateway will.
 */
#include <errno.h>

#include <rte_jhash.h>

#include "sk_net_priv.h"

#define ND_REACHABLE_MS 60000
#define ND_RETRY_MS	1000
#define SK_ND_NS_PER_S	100

enum { ND_NS = 135, ND_OPT_SLLA = 1, ND_NS_LEN = 24 + 8 };

static inline struct sk_nd_entry *
nd_slot(struct sk_net_lcore *net, const uint8_t *ip)
{
	uint32_t w[4];

	memcpy(w, ip, sizeof(w)); /* @ip may sit in a frame, 2-byte aligned */
	return &net->nd[rte_jhash_32b(w, 4, net->hash_seed) & (SK_ND_CACHE_SIZE - 1)];
}

void
sk_nd_learn(struct sk_net_lcore *net, const uint8_t *ip, const struct rte_ether_addr *mac,
	    bool create)
{
	struct sk_nd_entry *e = nd_slot(net, ip);

	if (!rte_is_valid_assigned_ether_addr(mac))
		return;
	if (!create && (e->state == SK_ND_EMPTY || memcmp(e->ip, ip, 16) != 0))
		return; /* an advertisement nobody asked for, about someone we do not know */
	memcpy(e->ip, ip, 16);
	e->mac = *mac;
	e->state = SK_ND_REACHABLE;
	e->tick = net->now_tick;
	net->stats.nd_learnt++;
}

/* nd_send_ns - a solicitation for @target to its solicited-node group. */
static void
nd_send_ns(struct sk_net_lcore *net, const uint8_t *target)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(net->pool);
	struct rte_ipv6_hdr *ip;
	uint8_t dst[16], *ns;
	uint16_t ck;

	if (m == NULL) {
		net->stats.tx_nombuf++;
		return;
	}
	if (rte_pktmbuf_append(m, sizeof(struct rte_ether_hdr) + sizeof(*ip) + ND_NS_LEN) == NULL) {
		rte_pktmbuf_free(m);
		net->stats.tx_nombuf++;
		return;
	}
	sk_ipv6_solicited(target, dst);
	/* From the address of the target's scope (RFC 4861 §7.2.2). */
	sk_ipv6_fill(net, m, sk_ipv6_is_link_local(target) ? net->ll6 : net->conf.ip6, dst, NULL,
		     IPPROTO_ICMPV6, 255, ND_NS_LEN);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	ns = (uint8_t *)(ip + 1);
	memset(ns, 0, ND_NS_LEN);
	ns[0] = ND_NS;
	memcpy(ns + 8, target, 16);
	ns[24] = ND_OPT_SLLA;
	ns[25] = 1;
	memcpy(ns + 26, net->conf.mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	ck = sk_icmp6_cksum(ip->src_addr, ip->dst_addr, ns, ND_NS_LEN);
	memcpy(ns + 2, &ck, 2);
	net->stats.nd_ns_tx++;
	sk_net_tx_enqueue(net, m);
}

int
sk_net_nd_lookup(struct sk_net_lcore *net, const uint8_t ip6[16], struct rte_ether_addr *mac)
{
	static const uint8_t unspecified[16];
	struct sk_nd_entry *e;
	bool same, fresh;
	uint64_t second;

	if (!net->has_ip6 || ip6[0] == 0xff || memcmp(ip6, unspecified, 16) == 0)
		return -EINVAL;
	e = nd_slot(net, ip6);
	same = e->state != SK_ND_EMPTY && memcmp(e->ip, ip6, 16) == 0;
	fresh = e->state == SK_ND_REACHABLE && net->now_tick - e->tick < net->nd_reach_ticks;
	if (same && fresh) {
		if (mac != NULL)
			*mac = e->mac;
		return 0;
	}
	if (same && e->state == SK_ND_INCOMPLETE && net->now_tick - e->tick < net->nd_retry_ticks)
		return -ENOENT; /* asked less than a second ago */
	second = net->now_tick / sk_net_ms_to_ticks(net, 1000);
	if (second != net->nd_second) {
		net->nd_second = second;
		net->nd_ns_count = 0;
	}
	if (net->nd_ns_count >= SK_ND_NS_PER_S) {
		net->stats.nd_ns_limited++;
		return -ENOENT;
	}
	net->nd_ns_count++;
	/* Wait in the slot unless it holds another neighbour still trusted. */
	if (same || !fresh) {
		memcpy(e->ip, ip6, 16);
		e->state = SK_ND_INCOMPLETE;
		e->tick = net->now_tick;
	}
	nd_send_ns(net, ip6);
	return -ENOENT;
}

/* sk_nd_init - the timers of the cache in @net's ticks. */
void
sk_nd_init(struct sk_net_lcore *net)
{
	net->nd_reach_ticks = sk_net_ms_to_ticks(net, ND_REACHABLE_MS);
	net->nd_retry_ticks = sk_net_ms_to_ticks(net, ND_RETRY_MS);
}
