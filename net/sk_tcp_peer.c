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
 * An IPv6 client counts by its prefix, conf.ip6_prefix (/64 by default;
 * sk_addr_key()): one host owns a whole /64, and rotating addresses inside
 * it must not escape the cap.
 */
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "sk_addr.h"
#include "sk_net_priv.h"

/* The key of an address: IPv4 @ip itself, IPv6 @ip6 (not NULL) its first
 * @prefix bits. */
struct peer_key {
	uint64_t key;
	uint32_t fam;
};

static inline struct peer_key
peer_key(uint32_t ip, const uint8_t *ip6, unsigned prefix)
{
	struct peer_key k = {.key = ip, .fam = SK_ADDR_V4};
	struct sk_addr a = {.family = SK_ADDR_V6}, key;

	if (ip6 == NULL)
		return k;
	memcpy(a.bytes, ip6, 16);
	key = sk_addr_key(&a, prefix);
	if (key.family == SK_ADDR_V4) { /* v4-mapped: the IPv4 client it names */
		k.key = (uint32_t)key.bytes[0] << 24 | (uint32_t)key.bytes[1] << 16 |
			(uint32_t)key.bytes[2] << 8 | key.bytes[3];
		return k;
	}
	memcpy(&k.key, key.bytes, 8);
	k.fam = SK_ADDR_V6;
	return k;
}

static inline struct peer_key
conn_key(const struct sk_tcp_conn *c)
{
	return peer_key(c->rip, (c->flags & SK_TCPF_V6) ? c->rip6 : NULL, c->net->conf.ip6_prefix);
}

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
peer_home(const struct sk_net_lcore *net, uint64_t key, uint32_t fam)
{
	uint32_t h = fam == SK_ADDR_V4 ? rte_jhash_1word((uint32_t)key, net->hash_seed)
				       : rte_jhash_2words((uint32_t)key, (uint32_t)(key >> 32),
							  net->hash_seed);

	return h & net->peer_mask;
}

/* peer_find - the entry of @k, or the empty entry where it would go. */
static struct sk_tcp_peer *
peer_find(const struct sk_net_lcore *net, struct peer_key k)
{
	uint32_t i = peer_home(net, k.key, k.fam);

	/* Bounded: the table is never more than half full. */
	for (uint32_t n = 0; n <= net->peer_mask; n++, i = (i + 1) & net->peer_mask) {
		struct sk_tcp_peer *p = &net->peers[i];

		if ((p->key == k.key && p->fam == k.fam) || p->fam == 0)
			return p;
	}
	SK_ASSERT(0);
	return NULL;
}

bool
sk_tcp_peer_admit(const struct sk_net_lcore *net, uint32_t ip, const uint8_t *ip6)
{
	if (net->peers == NULL)
		return true;
	return peer_find(net, peer_key(ip, ip6, net->conf.ip6_prefix))->conns <
	       net->conf.max_conns_per_ip;
}

void
sk_tcp_peer_add(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	struct sk_tcp_peer *p;
	struct peer_key k;

	if (net->peers == NULL || (c->flags & SK_TCPF_PEER_COUNTED))
		return;
	k = conn_key(c);
	p = peer_find(net, k);
	p->key = k.key;
	p->fam = k.fam;
	p->conns++;
	c->flags |= SK_TCPF_PEER_COUNTED;
}

void
sk_tcp_peer_remove(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	struct sk_tcp_peer *p;
	struct peer_key k;
	uint32_t i, j, mask = net->peer_mask;

	if (!(c->flags & SK_TCPF_PEER_COUNTED))
		return;
	c->flags &= ~SK_TCPF_PEER_COUNTED;
	k = conn_key(c);
	p = peer_find(net, k);
	SK_ASSERT(p->key == k.key && p->fam == k.fam && p->conns > 0);
	if (--p->conns > 0)
		return;
	/* Backward-shift deletion: pull later entries of the run into the hole. */
	i = (uint32_t)(p - net->peers);
	for (j = (i + 1) & mask; net->peers[j].fam != 0; j = (j + 1) & mask) {
		uint32_t home = peer_home(net, net->peers[j].key, net->peers[j].fam);

		/* Entry j may move to i only if its home is not in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		net->peers[i] = net->peers[j];
		i = j;
	}
	net->peers[i].key = 0;
	net->peers[i].fam = 0;
	net->peers[i].conns = 0;
}
