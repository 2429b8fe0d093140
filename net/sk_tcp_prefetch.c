/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tcp_prefetch.c - a received burst made ready before it is processed:
 * every cache line its segments' connections will touch is prefetched,
 * and the hash bucket found for each frame is kept for its lookup.
 *
 * At one request per frame with a thousand connections, each frame meets
 * a connection out of the cache; prefetching a burst's worth at once makes
 * the misses overlap instead of stalling one after the other.
 */
#include <stddef.h>

#include <netinet/in.h>

#include <rte_prefetch.h>

#include "sk_net_priv.h"

/* bucket_of - the hash bucket the TCP segment in @m would be looked up
 * in, or NULL if @m is not a plain IPv4/TCP frame; *@len: the bytes after
 * the IPv4 header (a hint: nothing here is validated beyond what reading
 * the tuple needs). */
static inline struct sk_tcp_conn *const *
bucket_of(const struct sk_net_lcore *net, const struct rte_mbuf *m, uint32_t *len)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) + sizeof(*th) ||
	    eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || ip->version_ihl != 0x45 ||
	    ip->next_proto_id != IPPROTO_TCP)
		return NULL;
	*len = rte_be_to_cpu_16(ip->total_length);
	return &net->buckets[sk_tcp_conn_hash(net, rte_be_to_cpu_32(ip->src_addr),
					      rte_be_to_cpu_16(th->src_port),
					      rte_be_to_cpu_32(ip->dst_addr),
					      rte_be_to_cpu_16(th->dst_port)) &
			     net->bucket_mask];
}

/* prefetch_span - the cache lines of [@p, @p + @len), at most @max of them. */
static inline void
prefetch_span(const uint8_t *p, uint32_t len, unsigned max, bool write)
{
	const uint8_t *end = p + len;

	p = RTE_PTR_ALIGN_FLOOR(p, RTE_CACHE_LINE_SIZE);
	for (unsigned i = 0; i < max && p < end; i++, p += RTE_CACHE_LINE_SIZE) {
		if (write)
			rte_prefetch0_write(p);
		else
			rte_prefetch0(p);
	}
}

void
sk_tcp_rx_prefetch(struct sk_net_lcore *net, struct rte_mbuf *const *pkts, uint16_t n)
{
	struct sk_tcp_conn *const *bucket[SK_TCP_PREFETCH_MAX];
	struct sk_tcp_conn *conn[SK_TCP_PREFETCH_MAX];
	uint32_t len[SK_TCP_PREFETCH_MAX];
	uint16_t k = RTE_MIN(n, SK_TCP_PREFETCH_MAX);
	uint32_t app_len = RTE_MIN(net->conf.app_data_size, SK_TCP_PREFETCH_APP);

	/* Three rounds over the burst, each waiting for what the one before
	 * asked for while the other frames' requests are in flight: the
	 * buckets, the connections, then their buffers. */
	for (uint16_t i = 0; i < k; i++) {
		bucket[i] = bucket_of(net, pkts[i], &len[i]);
		if (bucket[i] != NULL)
			rte_prefetch0(bucket[i]);
		net->rx_hint_m[i] = pkts[i];
		net->rx_hint_b[i] = bucket[i];
	}
	net->rx_hint_n = k;
	for (uint16_t i = 0; i < k; i++) {
		conn[i] = bucket[i] != NULL ? *bucket[i] : NULL;
		if (conn[i] != NULL)
			for (size_t off = 0; off < offsetof(struct sk_tcp_conn, rip6);
			     off += RTE_CACHE_LINE_SIZE)
				rte_prefetch0((const uint8_t *)conn[i] + off);
	}
	for (uint16_t i = 0; i < k; i++) {
		const struct sk_tcp_conn *c = conn[i];
		uint32_t tail;

		if (c == NULL)
			continue;
		/* snd_head < snd_buf_size and snd_len <= it: one subtraction */
		tail = c->snd_head + c->snd_len;
		if (tail >= net->conf.snd_buf_size)
			tail -= net->conf.snd_buf_size;
		/* Every line each one will touch: the app's state, where the
		 * payload lands (its length, less the TCP header, is at most
		 * what follows the IP header), where an answer will be
		 * written (the send ring's free space from its tail). */
		prefetch_span(c->app_data, app_len, 4, false);
		prefetch_span(c->rcv_buf + c->rcv_len,
			      RTE_MIN(len[i] - (uint32_t)sizeof(struct rte_ipv4_hdr),
				      net->conf.rcv_buf_size - c->rcv_len),
			      4, true);
		prefetch_span(
			c->snd_buf + tail,
			RTE_MIN(net->conf.snd_buf_size - c->snd_len, net->conf.snd_buf_size - tail),
			SK_TCP_PREFETCH_SND / RTE_CACHE_LINE_SIZE, true);
	}
}

struct sk_tcp_conn *
sk_tcp_conn_lookup_rx(struct sk_net_lcore *net, const struct rte_mbuf *m, uint32_t rip,
		      uint16_t rport, uint32_t lip, uint16_t lport)
{
	uint16_t i = net->rx_cur;
	struct sk_tcp_conn *c;

	if (i >= net->rx_hint_n || net->rx_hint_m[i] != m || net->rx_hint_b[i] == NULL)
		return sk_tcp_conn_lookup(net, rip, rport, lip, lport);
	for (c = *net->rx_hint_b[i]; c != NULL; c = c->hnext)
		if (c->rip == rip && c->rport == rport && c->lport == lport && c->lip == lip)
			return c;
	return NULL;
}
