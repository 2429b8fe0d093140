/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_dispatch.c - software RSS for single-queue ports (see sk_dispatch.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "sk_dispatch.h"
#include "sk_net.h"

/* Most frames handled by one sk_dispatch_split() call. */
#define SPLIT_MAX 512

struct sk_dispatch_lcore {
	struct rte_ring *rx; /* owner -> this lcore */
	struct rte_ring *tx; /* this lcore -> owner (NULL for the owner) */
	struct sk_dispatch *d;
	unsigned self;
	struct sk_dispatch_stats stats;
} sk_cache_aligned;

struct sk_dispatch {
	uint16_t port_id;
	unsigned owner;
	unsigned nb_lcores;
	struct rte_mempool *pool;
	struct sk_dispatch_lcore lc[];
};

/* lcore_of - the lcore that owns flow hash @h: multiply-shift, uniform and
 * without a division. */
static inline unsigned
lcore_of(const struct sk_dispatch *d, uint32_t h)
{
	return (unsigned)(((uint64_t)h * d->nb_lcores) >> 32);
}

static bool
is_arp_reply(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_arp_hdr *arp;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*arp) ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return false;
	arp = (const struct rte_arp_hdr *)(eth + 1);
	return arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
}

/* is_nd_advert - an ICMPv6 neighbour advertisement (no extension headers, as ND sends it). */
static bool
is_nd_advert(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eth + 1);

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) + 4 ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) || ip->proto != IPPROTO_ICMPV6)
		return false;
	return ((const uint8_t *)(ip + 1))[0] == 136; /* ND_NEIGHBOR_ADVERT */
}

struct sk_dispatch *
sk_dispatch_create(uint16_t port_id, unsigned owner, unsigned nb_lcores, unsigned ring_size,
		   int socket, struct rte_mempool *pool)
{
	struct sk_dispatch *d;
	char name[RTE_RING_NAMESIZE];
	size_t size;

	if (nb_lcores < 2 || nb_lcores > RTE_MAX_LCORE || owner >= nb_lcores ||
	    !sk_is_pow2(ring_size) || pool == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	size = sizeof(*d) + nb_lcores * sizeof(d->lc[0]);
	d = rte_zmalloc_socket("sk_dispatch", size, RTE_CACHE_LINE_SIZE, socket);
	if (d == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	d->port_id = port_id;
	d->owner = owner;
	d->nb_lcores = nb_lcores;
	d->pool = pool;
	for (unsigned i = 0; i < nb_lcores; i++) {
		struct sk_dispatch_lcore *lc = &d->lc[i];

		lc->d = d;
		lc->self = i;
		/* The owner's rx ring only carries copies of ARP replies. */
		snprintf(name, sizeof(name), "skd_rx_p%u_%u", port_id, i);
		lc->rx = rte_ring_create(name, ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (lc->rx == NULL)
			goto err;
		if (i == owner)
			continue;
		snprintf(name, sizeof(name), "skd_tx_p%u_%u", port_id, i);
		lc->tx = rte_ring_create(name, ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (lc->tx == NULL)
			goto err;
	}
	return d;
err : {
	int e = rte_errno;

	sk_dispatch_free(d);
	rte_errno = e;
}
	return NULL;
}

static void
ring_drain_free(struct rte_ring *r)
{
	void *objs[64];
	unsigned n;

	if (r == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(r, objs, SK_ARRAY_SIZE(objs), NULL)) > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
	rte_ring_free(r);
}

void
sk_dispatch_free(struct sk_dispatch *d)
{
	if (d == NULL)
		return;
	for (unsigned i = 0; i < d->nb_lcores; i++) {
		ring_drain_free(d->lc[i].rx);
		ring_drain_free(d->lc[i].tx);
	}
	rte_free(d);
}

/* send_to - enqueue @n frames on lcore @k's rx ring; free the rest. */
static void
send_to(struct sk_dispatch *d, unsigned k, struct rte_mbuf **pkts, unsigned n)
{
	struct sk_dispatch_stats *st = &d->lc[d->owner].stats;
	unsigned sent;

	if (n == 0)
		return;
	sent = rte_ring_enqueue_burst(d->lc[k].rx, (void **)pkts, n, NULL);
	st->rx_out += sent;
	if (sk_unlikely(sent < n)) {
		st->rx_out_drop += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

/* copy_arp_reply - a copy of @m for every lcore but @dst, which gets @m
 * itself (the owner's copy goes through its own rx ring). */
static void
copy_arp_reply(struct sk_dispatch *d, const struct rte_mbuf *m, unsigned dst)
{
	for (unsigned k = 0; k < d->nb_lcores; k++) {
		struct rte_mbuf *c;

		if (k == dst)
			continue;
		c = rte_pktmbuf_copy(m, d->pool, 0, UINT32_MAX);
		if (c == NULL) {
			d->lc[d->owner].stats.arp_copy_fail++;
			continue;
		}
		send_to(d, k, &c, 1);
	}
}

uint16_t
sk_dispatch_split(struct sk_dispatch *d, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t dst[SPLIT_MAX];
	struct rte_mbuf *out[SPLIT_MAX];
	uint16_t keep = 0;

	SK_DEBUG_ASSERT(n <= SPLIT_MAX);
	for (uint16_t i = 0; i < n; i++) {
		uint32_t h = sk_net_flow_hash(pkts[i]);

		dst[i] = (uint16_t)lcore_of(d, h);
		/* Hash 0: not TCP/UDP, e.g. ARP or ND; ARP replies and neighbour
		 * advertisements go to every stack, so every cache resolves. */
		if (sk_unlikely(h == 0 && (is_arp_reply(pkts[i]) || is_nd_advert(pkts[i]))))
			copy_arp_reply(d, pkts[i], dst[i]);
	}
	/* O(n * lcores): small bursts and few lcores; cheaper than per-frame enqueues. */
	for (unsigned k = 0; k < d->nb_lcores; k++) {
		unsigned m = 0;

		if (k == d->owner)
			continue;
		for (uint16_t i = 0; i < n; i++)
			if (dst[i] == k)
				out[m++] = pkts[i];
		send_to(d, k, out, m);
	}
	for (uint16_t i = 0; i < n; i++)
		if (dst[i] == d->owner)
			pkts[keep++] = pkts[i];
	return keep;
}

uint16_t
sk_dispatch_dequeue(struct sk_dispatch *d, unsigned self, struct rte_mbuf **pkts, uint16_t max)
{
	struct sk_dispatch_lcore *lc = &d->lc[self];
	unsigned n;

	if (lc->rx == NULL)
		return 0;
	n = rte_ring_dequeue_burst(lc->rx, (void **)pkts, max, NULL);
	lc->stats.rx_in += n;
	return (uint16_t)n;
}

uint16_t
sk_dispatch_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sk_dispatch_lcore *lc = ctx;
	unsigned sent;

	sent = rte_ring_enqueue_burst(lc->tx, (void **)pkts, n, NULL);
	lc->stats.tx_in_drop += n - sent;
	return (uint16_t)sent;
}

void *
sk_dispatch_tx_ctx(struct sk_dispatch *d, unsigned self)
{
	return &d->lc[self];
}

uint16_t
sk_dispatch_tx_drain(struct sk_dispatch *d, struct rte_mbuf **scratch, uint16_t budget)
{
	struct sk_dispatch_stats *st = &d->lc[d->owner].stats;
	uint16_t total = 0;

	for (unsigned k = 0; k < d->nb_lcores; k++) {
		unsigned n;
		uint16_t sent;

		if (k == d->owner)
			continue;
		n = rte_ring_dequeue_burst(d->lc[k].tx, (void **)scratch, budget, NULL);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(d->port_id, 0, scratch, (uint16_t)n);
		st->tx_out += sent;
		if (sk_unlikely(sent < n)) {
			st->tx_out_drop += n - sent;
			rte_pktmbuf_free_bulk(scratch + sent, n - sent);
		}
		total += sent;
	}
	return total;
}

unsigned
sk_dispatch_owner(const struct sk_dispatch *d)
{
	return d->owner;
}

const struct sk_dispatch_stats *
sk_dispatch_stats(const struct sk_dispatch *d, unsigned self)
{
	return &d->lc[self].stats;
}
