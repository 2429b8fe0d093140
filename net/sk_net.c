/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_net.c - the lcore stack object: configuration, creation, the three
 * per-poll-pass entry points (rx, timers, tx flush), the TX queue, stats and
 * the symmetric flow hash. Protocol work lives in the sk_<proto>.c files.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "sk_net_priv.h"

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */

void
sk_net_conf_defaults(struct sk_net_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->prefix_len = 24;
	conf->prefix6_len = 64;
	conf->tcp_port = 80;
	conf->max_conns = 4096;
	conf->mss = 1460;
	conf->rcv_buf_size = 10240;
	conf->snd_buf_size = 8192;
	conf->app_data_size = 256;
	conf->tx_burst_max = 256;
	conf->rto_initial_ms = 1000;
	conf->rto_min_ms = 200;
	conf->rto_max_ms = 8000;
	conf->max_retries = 6;
	conf->idle_timeout_ms = 60000;
	conf->idle_new_ms = 10000;
	conf->ip_count = 1;
	conf->max_conns_per_ip = 1024;
	conf->ip6_prefix = 64;
	conf->challenge_ack_conn_ms = 500;
	conf->time_wait_ms = 2000;
	conf->time_wait_max = 1024;
	conf->challenge_ack_per_s = 100;
	conf->timer_tick_us = 1000;
	conf->timer_slots = 4096;
	conf->timer_budget = 4096;
	conf->cookie_period_s = 64;
}

/* ip6_unset - true if @c has no IPv6 address. */
static bool
ip6_unset(const struct sk_net_conf *c)
{
	static const uint8_t zero[16];

	return memcmp(c->ip6, zero, sizeof(zero)) == 0;
}

/* ip6_valid - the per-address prefix 1..64, and no IPv6 or a global unicast
 * address with a prefix 1..128. */
static bool
ip6_valid(const struct sk_net_conf *c)
{
	if (c->ip6_prefix < 1 || c->ip6_prefix > 64)
		return false;
	if (ip6_unset(c))
		return true;
	return c->prefix6_len >= 1 && c->prefix6_len <= 128 && c->ip6[0] != 0xff &&
	       !sk_ipv6_is_link_local(c->ip6);
}

static bool
conf_valid(const struct sk_net_conf *c)
{
	return c->ip != 0 && ip6_valid(c) && c->prefix_len <= 32 &&
	       rte_is_valid_assigned_ether_addr(&c->mac) && c->ip_count >= 1 &&
	       c->ip_count <= 65536 && (uint64_t)c->ip + c->ip_count - 1 <= UINT32_MAX &&
	       c->max_conns >= 1 && c->max_conns <= (1u << 24) && c->mss >= 88 && c->mss <= 9000 &&
	       c->rcv_buf_size >= 1 && c->rcv_buf_size <= 65535 && c->snd_buf_size >= 64 &&
	       c->snd_buf_size <= (1u << 24) && c->app_data_size >= SK_TCP_APP_DATA_MIN &&
	       c->app_data_size <= 65536 && c->tx_burst_max >= 1 && c->tx_burst_max <= 1024 &&
	       c->rto_min_ms >= 1 && c->rto_min_ms <= c->rto_max_ms &&
	       c->rto_initial_ms >= c->rto_min_ms && c->rto_initial_ms <= c->rto_max_ms &&
	       c->rto_max_ms <= 600000 && c->max_retries >= 1 && c->idle_timeout_ms >= 1 &&
	       c->idle_new_ms >= 1 && c->time_wait_ms >= 1 && c->challenge_ack_per_s >= 1 &&
	       c->timer_tick_us >= 1 && c->timer_tick_us <= 1000000 && sk_is_pow2(c->timer_slots) &&
	       c->timer_slots <= (1u << 22) && c->timer_budget >= 16 && c->cookie_period_s >= 1 &&
	       c->cookie_period_s <= 3600;
}

uint32_t
sk_net_ms_to_ticks(const struct sk_net_lcore *net, uint32_t ms)
{
	uint64_t t = (uint64_t)ms * 1000 / net->conf.timer_tick_us;

	if (t == 0)
		t = 1;
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* ------------------------------------------------------------------------ */
/* Create / free                                                            */

static void *
zalloc_array(const char *what, size_t n, size_t size, int socket)
{
	size_t bytes;

	if (!sk_mul_size(n, size, &bytes))
		return NULL;
	return rte_zmalloc_socket(what, bytes, RTE_CACHE_LINE_SIZE, socket);
}

struct sk_net_lcore *
sk_net_lcore_create(const struct sk_net_conf *conf, unsigned lcore, struct rte_mempool *pool,
		    int socket, const struct sk_net_app_ops *ops, void *app)
{
	struct sk_net_lcore *net;
	struct sk_timer *slots = NULL;
	uint64_t hz;
	uint32_t nb = 1;
	size_t app_sz;

	if (conf == NULL || pool == NULL || ops == NULL || ops->on_open == NULL ||
	    ops->on_data == NULL || ops->on_close == NULL || !conf_valid(conf)) {
		rte_errno = EINVAL;
		return NULL;
	}
	net = rte_zmalloc_socket("sk_net", sizeof(*net) + conf->tx_burst_max * sizeof(void *),
				 RTE_CACHE_LINE_SIZE, socket);
	if (net == NULL)
		goto nomem;
	net->conf = *conf;
	net->ops = *ops;
	net->app = app;
	net->pool = pool;
	net->lcore = lcore;

	hz = conf->tsc_hz ? conf->tsc_hz : rte_get_tsc_hz();
	net->tick_tsc = hz / 1000000 * conf->timer_tick_us;
	if (net->tick_tsc == 0)
		net->tick_tsc = 1;
	net->rto_init = sk_net_ms_to_ticks(net, conf->rto_initial_ms);
	net->rto_min = sk_net_ms_to_ticks(net, conf->rto_min_ms);
	net->rto_max = sk_net_ms_to_ticks(net, conf->rto_max_ms);
	net->idle_ticks = sk_net_ms_to_ticks(net, conf->idle_timeout_ms);
	net->idle_new_ticks =
		sk_net_ms_to_ticks(net, RTE_MIN(conf->idle_new_ms, conf->idle_timeout_ms));
	net->chal_conn_ticks = conf->challenge_ack_conn_ms
				       ? sk_net_ms_to_ticks(net, conf->challenge_ack_conn_ms)
				       : 0;
	net->tw_ticks = sk_net_ms_to_ticks(net, conf->time_wait_ms);
	net->netmask = conf->prefix_len == 0 ? 0 : ~0u << (32 - conf->prefix_len);
	net->has_ip6 = !ip6_unset(conf);
	sk_net_ipv6_link_local(&conf->mac, net->ll6);
	sk_nd_init(net);
	sk_syncookie_init(&net->cookie, conf->cookie_secret, hz * conf->cookie_period_s);
	net->hash_seed = (uint32_t)(net->cookie.k0 ^ (net->cookie.k1 >> 32)) ^ lcore;
	net->rng = (net->cookie.k0 ^ rte_rdtsc()) | 1; /* xorshift64: never 0 */

	while (nb < conf->max_conns * 2 && nb < (1u << 25))
		nb <<= 1;
	net->bucket_mask = nb - 1;
	app_sz = sk_align_up(conf->app_data_size, 16);
	net->conns =
		zalloc_array("sk_net_conns", conf->max_conns, sizeof(struct sk_tcp_conn), socket);
	net->buckets = zalloc_array("sk_net_buckets", nb, sizeof(void *), socket);
	net->rcv_mem = zalloc_array("sk_net_rcv", conf->max_conns, conf->rcv_buf_size, socket);
	net->snd_mem = zalloc_array("sk_net_snd", conf->max_conns, conf->snd_buf_size, socket);
	net->app_mem = zalloc_array("sk_net_app", conf->max_conns, app_sz, socket);
	slots = zalloc_array("sk_net_wheel", conf->timer_slots, sizeof(struct sk_timer), socket);
	net->peers = sk_tcp_peer_table(conf, socket, &net->peer_mask);
	if (net->conns == NULL || net->buckets == NULL || net->rcv_mem == NULL ||
	    net->snd_mem == NULL || net->app_mem == NULL || slots == NULL ||
	    (conf->max_conns_per_ip != 0 && net->peers == NULL))
		goto nomem;
	if (sk_timer_wheel_init(&net->wheel, slots, conf->timer_slots) != 0)
		goto nomem;

	TAILQ_INIT(&net->outq);
	TAILQ_INIT(&net->resumeq);
	TAILQ_INIT(&net->closeq);
	TAILQ_INIT(&net->twq);
	TAILQ_INIT(&net->freshq);
	/* Free list in index order: slot 0 is handed out first. */
	for (uint32_t i = conf->max_conns; i-- > 0;) {
		struct sk_tcp_conn *c = &net->conns[i];

		c->net = net;
		c->rcv_buf = net->rcv_mem + (size_t)i * conf->rcv_buf_size;
		c->snd_buf = net->snd_mem + (size_t)i * conf->snd_buf_size;
		c->app_data = net->app_mem + (size_t)i * app_sz;
		c->timer.kind = SK_TIMER_CONN;
		c->hnext = net->free_list;
		net->free_list = c;
	}
	net->arp_timer.kind = SK_TIMER_ARP;
	if (conf->gateway != 0)
		sk_timer_wheel_arm(&net->wheel, &net->arp_timer, 0);
	return net;

nomem:
	if (net != NULL) {
		rte_free(net->conns);
		rte_free(net->buckets);
		rte_free(net->rcv_mem);
		rte_free(net->snd_mem);
		rte_free(net->app_mem);
		rte_free(net->peers);
		rte_free(net);
	}
	rte_free(slots);
	rte_errno = ENOMEM;
	return NULL;
}

void
sk_net_lcore_free(struct sk_net_lcore *net)
{
	if (net == NULL)
		return;
	rte_pktmbuf_free_bulk(net->txq, net->txn);
	sk_net_spare_return(net);
	rte_free(net->wheel.slots);
	rte_free(net->conns);
	rte_free(net->buckets);
	rte_free(net->rcv_mem);
	rte_free(net->snd_mem);
	rte_free(net->app_mem);
	rte_free(net->peers);
	rte_free(net);
}

/* ------------------------------------------------------------------------ */
/* TX queue                                                                 */

uint16_t
sk_net_tx_burst(struct sk_net_lcore *net)
{
	uint16_t n = net->txn, sent;
	uint64_t bytes = 0;

	if (n == 0)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(net->txq[i]);
	if (net->conf.tx_fn != NULL)
		sent = net->conf.tx_fn(net->conf.tx_ctx, net->txq, n);
	else
		sent = rte_eth_tx_burst(net->conf.port_id, net->conf.tx_queue, net->txq, n);
	if (sent > n)
		sent = n;
	for (uint16_t i = sent; i < n; i++)
		bytes -= rte_pktmbuf_pkt_len(net->txq[i]);
	if (sent < n) {
		/* The NIC refused them: they are ours, free them here. */
		rte_pktmbuf_free_bulk(&net->txq[sent], n - sent);
		net->stats.tx_dropped += n - sent;
	}
	net->stats.tx_pkts += sent;
	net->stats.tx_bytes += bytes;
	net->txn = 0;
	return sent;
}

void
sk_net_spare_return(struct sk_net_lcore *net)
{
	if (net->spare_n == 0)
		return;
	/* Each one passed sk_net_rx_done's checks: a raw put is allowed. */
	rte_mempool_put_bulk(net->pool, (void **)net->spare, net->spare_n);
	net->spare_n = 0;
}

/* ------------------------------------------------------------------------ */
/* Poll-pass entry points                                                   */

static inline void
set_now(struct sk_net_lcore *net, uint64_t now_tsc)
{
	if (now_tsc > net->now_tsc) {
		net->now_tsc = now_tsc;
		net->now_tick = now_tsc / net->tick_tsc;
	}
}

void
sk_net_rx(struct sk_net_lcore *net, struct rte_mbuf **pkts, uint16_t n, uint64_t now_tsc)
{
	set_now(net, now_tsc);
	sk_tcp_rx_prefetch(net, pkts, n);
	for (uint16_t i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		net->stats.rx_pkts++;
		net->stats.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
		net->rx_cur = i;
		sk_eth_input(net, pkts[i]);
	}
	net->rx_hint_n = 0; /* the mbufs may come back as other frames */
	sk_tcp_conn_run_closes(net);
}

static void
timer_fire(void *ctx, struct sk_timer *t)
{
	struct sk_net_lcore *net = ctx;

	net->stats.timer_expired++;
	if (t->kind == SK_TIMER_CONN)
		sk_tcp_on_timer((struct sk_tcp_conn *)t); /* timer is the first member */
	else if (t->kind == SK_TIMER_ARP)
		sk_arp_on_timer(net);
}

void
sk_net_timers(struct sk_net_lcore *net, uint64_t now_tsc)
{
	set_now(net, now_tsc);
	sk_timer_wheel_advance(&net->wheel, net->now_tick, net->conf.timer_budget, timer_fire, net);
	sk_tcp_conn_run_closes(net);
}

uint16_t
sk_net_tx_flush(struct sk_net_lcore *net)
{
	uint16_t sent;

	sk_tcp_conn_run_resumes(net);
	sk_tcp_conn_run_closes(net);
	sk_tcp_conn_run_output(net);
	sent = sk_net_tx_burst(net);
	sk_net_spare_return(net);
	return sent;
}

const struct sk_net_stats *
sk_net_lcore_stats(const struct sk_net_lcore *net)
{
	return &net->stats;
}

/* ------------------------------------------------------------------------ */
/* Symmetric flow hash                                                      */

/*
 * flow_hash6 - the symmetric hash of a TCP or UDP datagram over IPv6: both
 * addresses and ports, ordered so both directions hash alike. Hop-by-hop,
 * routing and destination-options headers are stepped over (at most 8, as
 * sk_ipv6_input does), so a segment with them goes where its connection
 * is. Anything else (ICMPv6 and so ND, fragments) hashes 0, as ARP does.
 */
static uint32_t
flow_hash6(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv6_hdr *ip =
		(const struct rte_ipv6_hdr *)(f + sizeof(struct rte_ether_hdr));
	uint32_t len = rte_pktmbuf_data_len(m), o = sizeof(struct rte_ether_hdr) + sizeof(*ip);
	uint8_t nh = ip->proto;
	uint32_t k[9];
	const uint8_t *a = ip->src_addr, *b = ip->dst_addr;
	uint16_t pa, pb;
	int d;

	for (unsigned n = 0; n < 8 && (nh == 0 || nh == 43 || nh == 60); n++) {
		if (o + 8 > len)
			return 0;
		nh = f[o];
		o += ((uint32_t)f[o + 1] + 1) * 8;
	}
	if ((nh != IPPROTO_TCP && nh != IPPROTO_UDP) || o + 4 > len)
		return 0;
	pa = (uint16_t)(f[o] << 8 | f[o + 1]);
	pb = (uint16_t)(f[o + 2] << 8 | f[o + 3]);
	d = memcmp(a, b, 16);
	if (d > 0 || (d == 0 && pa > pb)) {
		const uint8_t *t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
	}
	memcpy(k, a, 16);
	memcpy(k + 4, b, 16);
	k[8] = ((uint32_t)pa << 16) | pb;
	return rte_jhash_32b(k, 9, nh);
}

uint32_t
sk_net_flow_hash(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	uint32_t a, b, ports = 0, len = rte_pktmbuf_data_len(m);
	uint16_t pa = 0, pb = 0;
	unsigned ihl;

	if (len < sizeof(*eth) + sizeof(*ip))
		return 0;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) &&
		    len >= sizeof(*eth) + sizeof(struct rte_ipv6_hdr))
			return flow_hash6(m);
		return 0;
	}
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	ihl = (ip->version_ihl & 0xf) * 4u;
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    (ip->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return 0;
	a = rte_be_to_cpu_32(ip->src_addr);
	b = rte_be_to_cpu_32(ip->dst_addr);
	if ((ip->next_proto_id == IPPROTO_TCP || ip->next_proto_id == IPPROTO_UDP) &&
	    len >= sizeof(*eth) + ihl + 4) {
		const uint8_t *l4 = (const uint8_t *)ip + ihl;

		pa = (uint16_t)(l4[0] << 8 | l4[1]);
		pb = (uint16_t)(l4[2] << 8 | l4[3]);
	}
	/* Order the endpoints so both directions hash alike. */
	if (a > b || (a == b && pa > pb)) {
		uint32_t t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
	}
	ports = ((uint32_t)pa << 16) | pb;
	return rte_jhash_3words(a, b, ports, ip->next_proto_id);
}
