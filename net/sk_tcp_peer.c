/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tcp_peer.c - connections per client address, for conf.max_conns_per_ip:
 * one client (or one NAT) cannot take the whole connection table.
 *
 * An open-addressing table (linear probing, backward-shift deletion, no
 * tombstones) of {address, connections}, with at least twice as many
 * entries as the connection table has slots: at most max_conns addresses
 * are present at once, so the load stays at or under one half and probes
 * stay short. Keys are hashed with the lcore's secret seed, so a client
 * cannot choose addresses that collide. A connection counts from its
 * creation until it leaves the table or enters TIME_WAIT (a client that
 * makes many short connections is not held back by its TIME_WAITs).
 */
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "sk_net_priv.h"

struct sk_tcp_peer *
sk_tcp_peer_table(const struct sk_net_conf *conf, int socket, uint32_t *mask)
{
	uint32_t n = 4;

	*mask = 0;
	if (conf->max_conns_per_ip == 0)
		return NULL;
	while (n < conf->max_conns * 2 && n < (1u << 26))
		n <<= 1;
	*mask = n - 1;
	return rte_zmalloc_socket("sk_net_peers", (size_t)n * sizeof(struct sk_tcp_peer),
				  RTE_CACHE_LINE_SIZE, socket);
}

static inline uint32_t
peer_home(const struct sk_net_lcore *net, uint32_t ip)
{
	return rte_jhash_1word(ip, net->hash_seed) & net->peer_mask;
}

/* peer_find - the entry of @ip, or the empty entry where it would go. */
static struct sk_tcp_peer *
peer_find(const struct sk_net_lcore *net, uint32_t ip)
{
	uint32_t i = peer_home(net, ip);

	/* Bounded: the table is never more than half full. */
	for (uint32_t n = 0; n <= net->peer_mask; n++, i = (i + 1) & net->peer_mask) {
		struct sk_tcp_peer *p = &net->peers[i];

		if (p->ip == ip || p->ip == 0)
			return p;
	}
	SK_ASSERT(0);
	return NULL;
}

bool
sk_tcp_peer_admit(const struct sk_net_lcore *net, uint32_t ip)
{
	if (net->peers == NULL)
		return true;
	return peer_find(net, ip)->conns < net->conf.max_conns_per_ip;
}

void
sk_tcp_peer_add(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	struct sk_tcp_peer *p;

	if (net->peers == NULL || (c->flags & SK_TCPF_PEER_COUNTED))
		return;
	p = peer_find(net, c->rip);
	p->ip = c->rip;
	p->conns++;
	c->flags |= SK_TCPF_PEER_COUNTED;
}

void
sk_tcp_peer_remove(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	struct sk_tcp_peer *p;
	uint32_t i, j, mask = net->peer_mask;

	if (!(c->flags & SK_TCPF_PEER_COUNTED))
		return;
	c->flags &= ~SK_TCPF_PEER_COUNTED;
	p = peer_find(net, c->rip);
	SK_ASSERT(p->ip == c->rip && p->conns > 0);
	if (--p->conns > 0)
		return;
	/* Backward-shift deletion: pull later entries of the run into the hole. */
	i = (uint32_t)(p - net->peers);
	for (j = (i + 1) & mask; net->peers[j].ip != 0; j = (j + 1) & mask) {
		uint32_t home = peer_home(net, net->peers[j].ip);

		/* Entry j may move to i only if its home is not in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		net->peers[i] = net->peers[j];
		i = j;
	}
	net->peers[i].ip = 0;
	net->peers[i].conns = 0;
}
