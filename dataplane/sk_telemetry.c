/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_telemetry.c - /seckill/stats and /seckill/net (see sk_telemetry.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "sk_telemetry.h"

/* Every counter of struct sk_net_stats, by name, for /seckill/net. */
/* clang-format off */
#define NET_STATS(X) \
	X(rx_pkts) \
	X(rx_bytes) \
	X(tx_pkts) \
	X(tx_bytes) \
	X(tx_dropped) \
	X(tx_nombuf) \
	X(drop_short) \
	X(drop_ethertype) \
	X(drop_not_us) \
	X(drop_nonlinear) \
	X(drop_ip_version) \
	X(drop_ip_len) \
	X(drop_ip_options) \
	X(drop_ip_frag) \
	X(drop_ip_proto) \
	X(drop_ip_src) \
	X(ip6_rx) \
	X(ip6_drop_bad) \
	X(ip6_drop_not_us) \
	X(ip6_drop_src) \
	X(ip6_drop_frag) \
	X(ip6_drop_ext) \
	X(ip6_drop_proto) \
	X(icmp6_drop_cksum) \
	X(icmp6_drop_other) \
	X(icmp6_echo_rx) \
	X(icmp6_echo_tx) \
	X(nd_ns_rx) \
	X(nd_na_tx) \
	X(nd_na_rx) \
	X(nd_ns_tx) \
	X(nd_ns_limited) \
	X(nd_not_ours) \
	X(nd_drop_hop) \
	X(nd_drop_bad) \
	X(nd_learnt) \
	X(arp_rx) \
	X(arp_reply_tx) \
	X(arp_request_tx) \
	X(arp_drop) \
	X(icmp_echo_tx) \
	X(icmp_drop_cksum) \
	X(icmp_drop_other) \
	X(tcp_rx) \
	X(tcp_drop_cksum) \
	X(tcp_drop_hdr) \
	X(tcp_drop_port) \
	X(tcp_synack_tx) \
	X(tcp_cookie_ok) \
	X(tcp_cookie_bad) \
	X(tcp_conn_full) \
	X(tcp_conn_evicted) \
	X(tcp_conn_per_ip) \
	X(tcp_conn_opened) \
	X(tcp_conn_closed) \
	X(tcp_time_wait) \
	X(tcp_tw_recycled) \
	X(tcp_rx_data) \
	X(tcp_ooo_drop) \
	X(tcp_win_trim) \
	X(tcp_unacceptable) \
	X(tcp_data_after_close) \
	X(tcp_zwp_rx) \
	X(tcp_tx_segs) \
	X(tcp_tx_data) \
	X(tcp_zwp_tx) \
	X(tcp_rto_reset) \
	X(tcp_idle_timeout) \
	X(tcp_idle_new) \
	X(tcp_app_timeout) \
	X(tcp_rst_rx) \
	X(tcp_rst_ignored) \
	X(tcp_challenge_ack) \
	X(tcp_challenge_limited) \
	X(tcp_challenge_conn_limited) \
	X(timer_expired)
/* clang-format on */

/* The per-lcore summary of /seckill/stats; summed into "total". */
struct summary {
	uint64_t rx_pkts, tx_pkts, rx_drops, rx_ignored, tx_drops;
	uint64_t conns_open, tcp_conns, tcp_time_wait;
	uint64_t requests, responses, parse_errors, request_timeout, parked, send_blocked;
	uint64_t durable_parked, durable_settled, durable_timeout, durable_200, durable_stale,
		durable_park_full;
	uint64_t sse_open, sse_opened, sse_events, sse_keepalives, sse_refused_max,
		sse_refused_user, sse_finished;
	uint64_t proxy_ok, proxy_local, proxy_direct, proxy_refused_untrusted, proxy_missing,
		proxy_bad, forwarded_used, forwarded_ignored, forwarded_bad;
	uint64_t http[SK_APP_STATUS_SLOTS];
	uint64_t tcp_syn, tcp_syncookies_sent, tcp_cookie_ok, tcp_cookie_bad, tcp_conn_full;
	uint64_t tcp_retransmits, tcp_rst_tx, tcp_rst_rx, tcp_idle_timeout, tcp_rto_reset;
	uint64_t icmp_echo, arp_rx;
	uint64_t dispatch_out, dispatch_drops;
	uint64_t busy_tsc, idle_tsc, pmd_tsc, busy_pmd_tsc, passes, busy_passes, sleeps;
	/* the buy path */
	uint64_t buy[SK_SECKILL__COUNT];
	uint64_t token[SK_TOKEN__COUNT];
	uint64_t rl_passed, rl_refused[SK_RL__COUNT], rl_ip_overflow, token_verifies;
	uint64_t engine[SK_BUY_STATUS_MAX];
	uint64_t order_polls, item_reads, orders_queued;
};

static struct {
	pthread_mutex_t lock;
	bool registered;
	bool alive;
	struct sk_telemetry_src src;
} tel = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* sum_lcore - add lcore @i's counters to @s. Caller holds tel.lock. */
static void
sum_lcore(unsigned i, struct summary *s)
{
	const struct sk_lcore *lc = tel.src.lcores[i];
	const struct sk_app_stats *as = sk_app_stats(lc->app);
	const struct sk_shm_lcore_stats *ls = sk_app_lcore_stats(lc->app);

	for (unsigned p = 0; p < lc->nb_ports; p++) {
		const struct sk_net_stats *n = sk_net_lcore_stats(lc->port[p].net);

		s->rx_pkts += n->rx_pkts;
		s->tx_pkts += n->tx_pkts;
		s->rx_ignored += n->drop_ethertype + n->drop_not_us + n->ip6_drop_not_us +
				 n->nd_not_ours + n->icmp6_drop_other;
		s->rx_drops +=
			n->drop_short + n->drop_nonlinear + n->drop_ip_version + n->drop_ip_cksum +
			n->drop_ip_len + n->drop_ip_options + n->drop_ip_frag + n->drop_ip_proto +
			n->drop_ip_src + n->arp_drop + n->icmp_drop_cksum + n->tcp_drop_cksum +
			n->tcp_drop_hdr + n->tcp_conn_full + n->tcp_ooo_drop + n->ip6_drop_bad +
			n->ip6_drop_src + n->ip6_drop_frag + n->ip6_drop_ext + n->ip6_drop_proto +
			n->icmp6_drop_cksum + n->nd_drop_hop + n->nd_drop_bad;
		s->tx_drops += n->tx_dropped + n->tx_nombuf;
		s->tcp_conns += n->tcp_conns;
		s->tcp_time_wait += n->tcp_time_wait;
		s->tcp_syn += n->tcp_syn_rx;
		s->tcp_syncookies_sent += n->tcp_synack_tx;
		s->tcp_cookie_ok += n->tcp_cookie_ok;
		s->tcp_cookie_bad += n->tcp_cookie_bad;
		s->tcp_conn_full += n->tcp_conn_full;
		s->tcp_retransmits += n->tcp_retransmits;
		s->tcp_rst_tx += n->tcp_rst_tx;
		s->tcp_rst_rx += n->tcp_rst_rx;
		s->tcp_idle_timeout += n->tcp_idle_timeout;
		s->tcp_rto_reset += n->tcp_rto_reset;
		s->icmp_echo += n->icmp_echo_rx;
		s->arp_rx += n->arp_rx;
		if (tel.src.disp[p] != NULL) {
			const struct sk_dispatch_stats *d = sk_dispatch_stats(tel.src.disp[p], i);

			s->dispatch_out += d->rx_out;
			s->dispatch_drops += d->rx_out_drop + d->arp_copy_fail;
			s->rx_drops += d->rx_out_drop;
			s->tx_drops += d->tx_in_drop + d->tx_out_drop;
		}
	}
	s->conns_open += as->conns_open;
	s->requests += as->requests;
	s->responses += as->responses;
	s->parse_errors += as->parse_errors;
	s->request_timeout += as->request_timeout;
	s->parked += as->parked;
	s->send_blocked += as->send_blocked;
	s->durable_parked += as->durable_parked;
	s->durable_settled += as->durable_settled;
	s->durable_timeout += as->durable_timeout;
	s->durable_200 += as->durable_200;
	s->durable_stale += as->durable_stale;
	s->durable_park_full += as->durable_park_full;
	s->sse_open += as->sse.open;
	s->sse_opened += as->sse.opened;
	s->sse_events += as->sse.events;
	s->sse_keepalives += as->sse.keepalives;
	s->sse_refused_max += as->sse.refused_max;
	s->sse_refused_user += as->sse.refused_user;
	s->sse_finished += as->sse.finished;
	s->proxy_ok += as->client.proxy_ok;
	s->proxy_local += as->client.proxy_local;
	s->proxy_direct += as->client.proxy_direct;
	s->proxy_refused_untrusted += as->client.proxy_refused_untrusted;
	s->proxy_missing += as->client.proxy_missing;
	s->proxy_bad += as->client.proxy_bad;
	s->forwarded_used += as->client.forwarded_used;
	s->forwarded_ignored += as->client.forwarded_ignored;
	s->forwarded_bad += as->client.forwarded_bad;
	/* the same numbers as the control plane's /metrics: the arena's block */
	for (unsigned k = 0; k < SK_APP_STATUS_SLOTS; k++)
		s->http[k] += sk_shm_stat_read(&ls->http_status[k]);
	s->busy_tsc += lc->stats.busy_tsc;
	s->idle_tsc += lc->stats.idle_tsc;
	s->pmd_tsc += lc->stats.pmd_tsc;
	s->busy_pmd_tsc += lc->stats.busy_pmd_tsc;
	s->passes += lc->stats.passes;
	s->busy_passes += lc->stats.busy_passes;
	s->sleeps += lc->stats.sleeps;
	if (tel.src.seckill != NULL && tel.src.seckill[i] != NULL) {
		const struct sk_seckill_lcore *sk = tel.src.seckill[i];

		for (unsigned k = 0; k < SK_SECKILL__COUNT; k++)
			s->buy[k] += sk_shm_stat_read(&sk->astats->buy_outcome[k]);
		for (unsigned k = 0; k < SK_TOKEN__COUNT; k++)
			s->token[k] += sk->stats.token[k];
		s->token_verifies += sk->stats.token_verifies;
		for (unsigned k = 0; k < SK_BUY_STATUS_MAX; k++)
			s->engine[k] += sk->buy.count[k];
		s->order_polls += sk_shm_stat_read(&sk->astats->order_polls);
		s->item_reads += sk_shm_stat_read(&sk->astats->item_reads);
		s->orders_queued += rte_ring_count(sk->buy.ring);
		if (sk->rl != NULL) {
			const struct sk_ratelimit_stats *r = sk_ratelimit_stats_get(sk->rl);

			s->rl_passed += r->passed;
			for (unsigned k = 0; k < SK_RL__COUNT; k++)
				s->rl_refused[k] += r->refused[k];
			s->rl_ip_overflow += r->ip_overflow;
		}
	}
}

/* summary_fill - start @d as a flat dict of every counter of @s. */
static void
summary_fill(struct rte_tel_data *d, const struct summary *s)
{
	char name[32];

	rte_tel_data_start_dict(d);
#define U64(f) rte_tel_data_add_dict_u64(d, #f, s->f)
	U64(rx_pkts);
	U64(tx_pkts);
	U64(rx_drops);
	U64(rx_ignored);
	U64(tx_drops);
	U64(conns_open);
	U64(tcp_conns);
	U64(tcp_time_wait);
	U64(requests);
	U64(responses);
	U64(parse_errors);
	U64(request_timeout);
	U64(parked);
	U64(send_blocked);
	U64(durable_parked);
	U64(durable_settled);
	U64(durable_timeout);
	U64(durable_200);
	U64(durable_stale);
	U64(durable_park_full);
	U64(sse_open);
	U64(sse_opened);
	U64(sse_events);
	U64(sse_keepalives);
	U64(sse_refused_max);
	U64(sse_refused_user);
	U64(sse_finished);
	U64(proxy_ok);
	U64(proxy_local);
	U64(proxy_direct);
	U64(proxy_refused_untrusted);
	U64(proxy_missing);
	U64(proxy_bad);
	U64(forwarded_used);
	U64(forwarded_ignored);
	U64(forwarded_bad);
	for (unsigned k = 0; k < SK_APP_STATUS_SLOTS; k++) {
		uint16_t code = sk_app_status_code(k);

		if (code != 0)
			snprintf(name, sizeof(name), "http_%u", code);
		else
			snprintf(name, sizeof(name), "http_other");
		rte_tel_data_add_dict_u64(d, name, s->http[k]);
	}
	U64(tcp_syn);
	U64(tcp_syncookies_sent);
	U64(tcp_cookie_ok);
	U64(tcp_cookie_bad);
	U64(tcp_conn_full);
	U64(tcp_retransmits);
	U64(tcp_rst_tx);
	U64(tcp_rst_rx);
	U64(tcp_idle_timeout);
	U64(tcp_rto_reset);
	U64(icmp_echo);
	U64(arp_rx);
	U64(dispatch_out);
	U64(dispatch_drops);
	U64(busy_tsc);
	U64(idle_tsc);
	U64(pmd_tsc);
	U64(busy_pmd_tsc);
	U64(passes);
	U64(busy_passes);
	U64(sleeps);
	for (unsigned k = 0; k < SK_SECKILL__COUNT; k++) {
		snprintf(name, sizeof(name), "buy_%s", sk_seckill_outcome_name(k));
		rte_tel_data_add_dict_u64(d, name, s->buy[k]);
	}
	for (unsigned k = 0; k < SK_TOKEN__COUNT; k++) {
		snprintf(name, sizeof(name), "token_%s", sk_token_status_str(k));
		rte_tel_data_add_dict_u64(d, name, s->token[k]);
	}
	U64(rl_passed);
	rte_tel_data_add_dict_u64(d, "rl_refused_ip", s->rl_refused[SK_RL_REFUSED_IP]);
	rte_tel_data_add_dict_u64(d, "rl_refused_item", s->rl_refused[SK_RL_REFUSED_ITEM]);
	rte_tel_data_add_dict_u64(d, "rl_refused_global", s->rl_refused[SK_RL_REFUSED_GLOBAL]);
	rte_tel_data_add_dict_u64(d, "rl_refused_user", s->rl_refused[SK_RL_REFUSED_USER]);
	U64(rl_ip_overflow);
	U64(token_verifies);
	for (unsigned k = 0; k < SK_BUY_STATUS_MAX; k++) {
		snprintf(name, sizeof(name), "engine_%s", sk_buy_status_name(k));
		rte_tel_data_add_dict_u64(d, name, s->engine[k]);
	}
	U64(order_polls);
	U64(item_reads);
	U64(orders_queued);
#undef U64
}

/* summary_dict - @s as a flat telemetry dict ("total" of /seckill/stats). */
static struct rte_tel_data *
summary_dict(const struct summary *s)
{
	struct rte_tel_data *d = rte_tel_data_alloc();

	if (d != NULL)
		summary_fill(d, s);
	return d;
}

/* item_dict - one item's stock as a telemetry dict. */
static struct rte_tel_data *
item_dict(const struct sk_item *it)
{
	struct rte_tel_data *d = rte_tel_data_alloc();

	if (d == NULL)
		return NULL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", it->id);
	rte_tel_data_add_dict_u64(d, "total", it->total);
	rte_tel_data_add_dict_u64(d, "remaining", sk_stock_remaining(it));
	rte_tel_data_add_dict_u64(d, "sold", sk_stock_sold(it));
	rte_tel_data_add_dict_u64(d, "sold_out", sk_stock_is_sold_out(it));
	rte_tel_data_add_dict_u64(d, "returned", atomic_load(&it->returned));
	return d;
}

/* add_items - "item<id>" dicts for the first @max items into @d. Caller
 * holds tel.lock. Returns 0 or a negative errno. */
static int
add_items(struct rte_tel_data *d, uint32_t max)
{
	uint32_t n;
	char name[32];

	if (tel.src.shm == NULL)
		return 0;
	n = atomic_load(&((struct sk_shm *)tel.src.shm)->nitems);
	rte_tel_data_add_dict_u64(d, "items", n);
	for (uint32_t i = 0; i < n && i < max; i++) {
		const struct sk_item *it = sk_shm_item_at(tel.src.shm, i);
		struct rte_tel_data *c = it ? item_dict(it) : NULL;

		if (c == NULL)
			return -ENOMEM;
		snprintf(name, sizeof(name), "item%u", it->id);
		if (rte_tel_data_add_dict_container(d, name, c, 0) != 0) {
			rte_tel_data_free(c);
			return -ENOSPC;
		}
	}
	return 0;
}

/* lcore_dict - the per-lcore section of /seckill/stats: the counters an
 * operator compares across lcores (the load and its cost), so that 32
 * lcores fit the telemetry's 16 KiB answer beside "total"; every counter of
 * one lcore is /seckill/lcore,<index>. */
static struct rte_tel_data *
lcore_dict(const struct summary *s)
{
	struct rte_tel_data *d = rte_tel_data_alloc();

	if (d == NULL)
		return NULL;
	rte_tel_data_start_dict(d);
#define U64(f) rte_tel_data_add_dict_u64(d, #f, s->f)
	U64(rx_pkts);
	U64(tx_pkts);
	U64(rx_drops);
	U64(tx_drops);
	U64(conns_open);
	U64(tcp_conns);
	U64(requests);
	U64(responses);
	U64(arp_rx);
	U64(dispatch_out);
	U64(dispatch_drops);
	U64(busy_tsc);
	U64(idle_tsc);
	U64(busy_pmd_tsc);
	U64(passes);
	U64(busy_passes);
	U64(sleeps);
	U64(orders_queued);
#undef U64
	rte_tel_data_add_dict_u64(d, "buy_won", s->buy[SK_SECKILL_WON]);
	rte_tel_data_add_dict_u64(d, "buy_sold_out", s->buy[SK_SECKILL_SOLD_OUT]);
	return d;
}

/* add_container - @c (NULL: allocation failed) into @d as @name; frees it on failure. */
static int
add_container(struct rte_tel_data *d, const char *name, struct rte_tel_data *c)
{
	if (c == NULL)
		return -ENOMEM;
	if (rte_tel_data_add_dict_container(d, name, c, 0) != 0) {
		rte_tel_data_free(c);
		return -ENOSPC;
	}
	return 0;
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct summary total;
	char name[32];
	unsigned listed;
	int rc = 0;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	if (!tel.alive) {
		rte_tel_data_add_dict_string(d, "state", "stopped");
		goto out;
	}
	rte_tel_data_add_dict_string(d, "state", "running");
	rte_tel_data_add_dict_u64(d, "lcores", tel.src.nb_lcores);
	rte_tel_data_add_dict_u64(d, "tsc_hz", tel.src.tsc_hz);
	rte_tel_data_add_dict_u64(d, "uptime_s",
				  (rte_rdtsc() - tel.src.start_tsc) / tel.src.tsc_hz);
	rte_tel_data_add_dict_u64(d, "mbuf_total", tel.src.pool->size);
	rte_tel_data_add_dict_u64(d, "mbuf_in_use", rte_mempool_in_use_count(tel.src.pool));
	rte_tel_data_add_dict_u64(d, "mbuf_idle", tel.src.mbuf_idle);

	/* "total" before the lcores: the answer is capped at 16 KiB, and what
	 * does not fit is left out, never the sum */
	memset(&total, 0, sizeof(total));
	for (unsigned i = 0; i < tel.src.nb_lcores; i++)
		sum_lcore(i, &total);
	rc = add_container(d, "total", summary_dict(&total));
	if (rc != 0)
		goto out;
	listed = RTE_MIN(tel.src.nb_lcores, (unsigned)SK_TELEMETRY_LCORES_LISTED);
	rte_tel_data_add_dict_u64(d, "lcores_listed", listed);
	for (unsigned i = 0; i < listed; i++) {
		struct summary s;

		memset(&s, 0, sizeof(s));
		sum_lcore(i, &s);
		snprintf(name, sizeof(name), "lcore%u", tel.src.lcores[i]->lcore_id);
		rc = add_container(d, name, lcore_dict(&s));
		if (rc != 0)
			goto out;
	}
	rc = add_items(d, SK_TELEMETRY_ITEMS_MAX);
out:
	pthread_mutex_unlock(&tel.lock);
	return rc;
}

/* cmd_items - /seckill/items: every item (the dict holds at most 255). */
static int
cmd_items(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc = 0;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	if (!tel.alive)
		rte_tel_data_add_dict_string(d, "state", "stopped");
	else
		rc = add_items(d, RTE_TEL_MAX_DICT_ENTRIES - 1);
	pthread_mutex_unlock(&tel.lock);
	return rc;
}

/* cmd_lcore - /seckill/lcore,<lcore index>: every counter of one lcore. */
static int
cmd_lcore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct summary s;
	unsigned li = 0;
	int rc = 0;

	(void)cmd;
	if (params == NULL || sscanf(params, "%u", &li) != 1)
		return -EINVAL;
	pthread_mutex_lock(&tel.lock);
	if (!tel.alive) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "state", "stopped");
	} else if (li >= tel.src.nb_lcores) {
		rc = -EINVAL;
	} else {
		memset(&s, 0, sizeof(s));
		sum_lcore(li, &s);
		summary_fill(d, &s);
		rte_tel_data_add_dict_u64(d, "lcore", tel.src.lcores[li]->lcore_id);
	}
	pthread_mutex_unlock(&tel.lock);
	return rc;
}

/* cmd_net - /seckill/net,<lcore index>[,<port index>] */
static int
cmd_net(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned li = 0, pi = 0;
	int rc = 0;

	(void)cmd;
	if (params != NULL && *params != '\0' && sscanf(params, "%u,%u", &li, &pi) < 1)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	if (!tel.alive) {
		rte_tel_data_add_dict_string(d, "state", "stopped");
		goto out;
	}
	if (li >= tel.src.nb_lcores || pi >= tel.src.lcores[li]->nb_ports) {
		rc = -EINVAL;
		goto out;
	}
	{
		const struct sk_net_stats *n = sk_net_lcore_stats(tel.src.lcores[li]->port[pi].net);

		rte_tel_data_add_dict_u64(d, "lcore", tel.src.lcores[li]->lcore_id);
		rte_tel_data_add_dict_u64(d, "port", pi);
#define NET_U64(f) rte_tel_data_add_dict_u64(d, #f, n->f);
		NET_STATS(NET_U64)
#undef NET_U64
	}
out:
	pthread_mutex_unlock(&tel.lock);
	return rc;
}

/* Every scalar counter of struct sk_tls_stats, by name, for /seckill/tls. */
/* clang-format off */
#define TLS_STATS(X) \
	X(hs_started) X(hs_full) X(hs_resumed) X(hs_failed) X(hs_timeout) X(hs_limited) \
	X(hs_ip_refused) X(hs_inflight) X(tls12) X(tls13) X(tickets_issued) \
	X(tickets_rejected) X(renegotiations) X(early_data) X(bytes_in) X(bytes_out) \
	X(records_in) X(records_out) X(closed_notify) X(buffer_wait) X(buffers_used) \
	X(idle_released)
/* clang-format on */

/* add_tls - the TLS counters of every lcore, summed, into @d. */
static void
add_tls(struct rte_tel_data *d)
{
	static const char *const suites[SK_TLS_SUITE_SLOTS] = {
		[SK_TLS_SUITE_AES128_GCM] = "suite_aes128_gcm",
		[SK_TLS_SUITE_AES256_GCM] = "suite_aes256_gcm",
		[SK_TLS_SUITE_CHACHA20] = "suite_chacha20",
	};
	struct sk_tls_stats sum;
	char name[64];

	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < tel.src.nb_lcores; i++) {
		const struct sk_tls_stats *s = sk_tls_lcore_stats(tel.src.tls[i]);

#define TLS_SUM(f) sum.f += __atomic_load_n(&s->f, __ATOMIC_RELAXED);
		TLS_STATS(TLS_SUM)
#undef TLS_SUM
		for (unsigned k = 0; k < SK_TLS_SUITE_SLOTS; k++)
			sum.suite[k] += __atomic_load_n(&s->suite[k], __ATOMIC_RELAXED);
		for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++) {
			sum.alerts_sent[k] += __atomic_load_n(&s->alerts_sent[k], __ATOMIC_RELAXED);
			sum.alerts_received[k] +=
				__atomic_load_n(&s->alerts_received[k], __ATOMIC_RELAXED);
		}
	}
#define TLS_U64(f) rte_tel_data_add_dict_u64(d, #f, sum.f);
	TLS_STATS(TLS_U64)
#undef TLS_U64
	for (unsigned k = 0; k < SK_TLS_SUITE_SLOTS; k++)
		rte_tel_data_add_dict_u64(d, suites[k], sum.suite[k]);
	for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++) {
		snprintf(name, sizeof(name), "alert_sent_%s", sk_tls_alert_name(k));
		rte_tel_data_add_dict_u64(d, name, sum.alerts_sent[k]);
		snprintf(name, sizeof(name), "alert_received_%s", sk_tls_alert_name(k));
		rte_tel_data_add_dict_u64(d, name, sum.alerts_received[k]);
	}
}

/* cmd_tls - /seckill/tls: the TLS counters, summed over the lcores. */
static int
cmd_tls(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	if (!tel.alive)
		rte_tel_data_add_dict_string(d, "state", "stopped");
	else if (tel.src.tls == NULL || tel.src.tls[0] == NULL)
		rte_tel_data_add_dict_string(d, "tls", "off");
	else
		add_tls(d);
	pthread_mutex_unlock(&tel.lock);
	return 0;
}

int
sk_telemetry_start(const struct sk_telemetry_src *src)
{
	int rc;

	pthread_mutex_lock(&tel.lock);
	tel.src = *src;
	tel.alive = true;
	pthread_mutex_unlock(&tel.lock);
	if (tel.registered)
		return 0;
	rc = rte_telemetry_register_cmd(
		"/seckill/stats", cmd_stats,
		"Dataplane counters per lcore and in total. No parameters.");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/seckill/items", cmd_items,
						"Stock of every item: remaining, sold, sold_out. "
						"No parameters.");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/seckill/lcore", cmd_lcore,
						"Every counter of one lcore (the fields of "
						"/seckill/stats' total). Parameters: lcore index");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/seckill/net", cmd_net,
						"Every TCP/IP counter of one lcore's stack. "
						"Parameters: lcore index[,port]");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/seckill/tls", cmd_tls,
						"TLS counters summed over the lcores: handshakes, "
						"alerts, versions, suites, bytes. No parameters.");
	if (rc != 0) {
		sk_telemetry_stop();
		return rc;
	}
	tel.registered = true;
	return 0;
}

void
sk_telemetry_stop(void)
{
	pthread_mutex_lock(&tel.lock);
	tel.alive = false;
	pthread_mutex_unlock(&tel.lock);
}
