/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cpool_route.c - which Redis node serves an item (docs/cluster.md,
 * "Redis Cluster"): the hash slot of the item's keys (CRC16 of the hash
 * tag, as the Redis Cluster specification defines it), and the nodes a
 * client has learnt from the MOVED and ASK redirections it was given.
 *
 * A plain Redis never redirects: every item then stays on node 0, the
 * configured address, and nothing here costs more than a table lookup.
 *
 * The table of nodes ages (a cluster's nodes come and go over its life):
 * a node that failed and that no slot points to any more is freed, and a
 * new node when all SK_CPOOL_NODES_MAX entries are taken replaces the
 * least useful one. Both scan the slot table (16 KiB), only on a failure
 * or a redirection to an unknown node.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_cpool_impl.h"

/* crc16: CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum
 * of the Redis Cluster key-to-slot mapping; crc16("123456789") == 0x31c3. */
static uint16_t
crc16(const char *s, size_t n)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)((uint8_t)s[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (crc & 0x8000) != 0 ? (uint16_t)((crc << 1) ^ 0x1021)
						  : (uint16_t)(crc << 1);
	}
	return crc;
}

uint16_t
sk_cpool_key_slot(const char *key)
{
	size_t n = strlen(key);
	const char *open = memchr(key, '{', n);

	/* The hash tag: what is between the first { and the next }, if not
	 * empty; else the whole key. */
	if (open != NULL) {
		const char *close = memchr(open + 1, '}', n - (size_t)(open + 1 - key));

		if (close != NULL && close > open + 1)
			return (uint16_t)(crc16(open + 1, (size_t)(close - open - 1)) %
					  SK_CPOOL_SLOTS);
	}
	return (uint16_t)(crc16(key, n) % SK_CPOOL_SLOTS);
}

uint16_t
sk_cpool_slot(uint32_t item)
{
	char tag[16];

	snprintf(tag, sizeof(tag), "{%" PRIu32 "}", item);
	return sk_cpool_key_slot(tag);
}

int
sk_cpool_route_init(struct sk_cpool_route *rt, const struct sk_cpool_config *cfg)
{
	memset(rt, 0, sizeof(*rt));
	rt->nnodes = 1;
	return sk_cpool_link_init_cfg(&rt->node[0], cfg, NULL, 0);
}

void
sk_cpool_route_fini(struct sk_cpool_route *rt)
{
	for (unsigned i = 0; i < rt->nnodes; i++)
		sk_cpool_link_fini(&rt->node[i]);
	rt->nnodes = 0;
}

struct sk_cpool_link *
sk_cpool_route_link(struct sk_cpool_route *rt, uint16_t slot)
{
	unsigned i = rt->slot_node[slot % SK_CPOOL_SLOTS];

	rt->used[i] = ++rt->clock;
	return &rt->node[i];
}

/* in_use: entry @i holds a node (node 0 always does). */
static bool
in_use(const struct sk_cpool_route *rt, unsigned i)
{
	return rt->node[i].host != NULL || rt->node[i].unix_path != NULL;
}

/* node_free: disconnect node @i (> 0) and free its entry; its last error
 * text stays (the caller may still read it: sk_cpool_errstr()). */
static void
node_free(struct sk_cpool_route *rt, unsigned i)
{
	char err[SK_CPOOL_ERR_MAX];

	memcpy(err, rt->node[i].err, sizeof(err));
	sk_cpool_link_fini(&rt->node[i]);
	memcpy(rt->node[i].err, err, sizeof(err));
}

void
sk_cpool_route_lost(struct sk_cpool_route *rt, uint16_t slot)
{
	unsigned i = rt->slot_node[slot % SK_CPOOL_SLOTS];

	rt->slot_node[slot % SK_CPOOL_SLOTS] = 0;
	/* A node that failed and that no slot points to any more: gone. */
	if (i != 0 && in_use(rt, i) && rt->node[i].c == NULL &&
	    memchr(rt->slot_node, (int)i, SK_CPOOL_SLOTS) == NULL)
		node_free(rt, i);
}

/* evict: the entry of the least useful node but 0 and @keep, freed, its
 * slots sent back to node 0 (see sk_cpool_route_redirect()). */
static unsigned
evict(struct sk_cpool_route *rt, unsigned keep)
{
	unsigned refs[SK_CPOOL_NODES_MAX] = {0}, best = 0;
	int best_rank = -1;

	for (unsigned s = 0; s < SK_CPOOL_SLOTS; s++)
		refs[rt->slot_node[s]]++;
	for (unsigned i = 1; i < rt->nnodes; i++) {
		/* rank: unreferenced first, then down; then the fewest
		 * slots, then the least recently used. */
		int rank = (refs[i] == 0 ? 2 : 0) + (rt->node[i].c == NULL ? 1 : 0);

		if (i == keep)
			continue;
		if (rank > best_rank || (rank == best_rank && (refs[i] < refs[best] ||
							       (refs[i] == refs[best] &&
								rt->used[i] < rt->used[best])))) {
			best = i;
			best_rank = rank;
		}
	}
	if (refs[best] > 0)
		for (unsigned s = 0; s < SK_CPOOL_SLOTS; s++)
			if (rt->slot_node[s] == best)
				rt->slot_node[s] = 0;
	sk_cpool_link_fini(&rt->node[best]);
	return best;
}

/* node: the index of the node at @host:@port, added (down) if new (in a
 * free entry, else in an evicted one's: never node 0 or @keep); -ENOMEM. */
static int
node(struct sk_cpool_route *rt, const char *host, int port, unsigned keep)
{
	struct sk_cpool_link *first = &rt->node[0], *l;
	unsigned i, free_i = SK_CPOOL_NODES_MAX;
	int rc;

	for (i = 0; i < rt->nnodes; i++) {
		if (rt->node[i].host != NULL && rt->node[i].port == port &&
		    strcmp(rt->node[i].host, host) == 0) {
			rt->used[i] = ++rt->clock;
			return (int)i;
		}
		if (i > 0 && !in_use(rt, i) && free_i == SK_CPOOL_NODES_MAX)
			free_i = i;
	}
	if (free_i == SK_CPOOL_NODES_MAX)
		free_i = rt->nnodes < SK_CPOOL_NODES_MAX ? rt->nnodes++ : evict(rt, keep);
	l = &rt->node[free_i];
	rc = sk_cpool_link_init(l, host, NULL, port, first->timeout_ms);
	if (rc == 0 && first->pass != NULL)
		rc = sk_cpool_link_auth(l, first->user, first->pass, first->passlen,
					first->pass_file);
	if (rc != 0) {
		sk_cpool_link_fini(l); /* a free entry again */
		return rc;
	}
	rt->used[free_i] = ++rt->clock;
	return (int)free_i;
}

int
sk_cpool_route_redirect(struct sk_cpool_route *rt, const char *err,
			const struct sk_cpool_link *from, struct sk_cpool_link **to, bool *ask)
{
	char host[256], *colon, *end;
	unsigned long slot, port;
	const char *p;
	int i;

	if (strncmp(err, "MOVED ", 6) == 0) {
		*ask = false;
		p = err + 6;
	} else if (strncmp(err, "ASK ", 4) == 0) {
		*ask = true;
		p = err + 4;
	} else {
		return 0;
	}
	/* "<slot> <host>:<port>"; an empty host is the node that answered. */
	errno = 0;
	slot = strtoul(p, &end, 10);
	if (errno != 0 || end == p || *end != ' ' || slot >= SK_CPOOL_SLOTS)
		return -EPROTO;
	if (snprintf(host, sizeof(host), "%s", end + 1) >= (int)sizeof(host))
		return -EPROTO;
	colon = strrchr(host, ':');
	if (colon == NULL)
		return -EPROTO;
	*colon = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || port == 0 || port > 65535)
		return -EPROTO;
	if (host[0] == '\0') {
		if (from->host == NULL)
			return -EPROTO; /* a unix socket cannot name the host */
		snprintf(host, sizeof(host), "%s", from->host);
	}
	/* @from is one of ours (sk_cpool.c): its entry stays. */
	uintptr_t f = (uintptr_t)from, base = (uintptr_t)rt->node;
	unsigned keep = f >= base && f < base + sizeof(rt->node)
				? (unsigned)((f - base) / sizeof(rt->node[0]))
				: 0;
	i = node(rt, host, (int)port, keep);
	if (i < 0)
		return i;
	if (!*ask)
		rt->slot_node[slot] = (uint8_t)i;
	*to = &rt->node[i];
	return 1;
}
