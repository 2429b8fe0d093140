/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_load_setup.c - seckill-loadgen's load state made and freed (its TCP
 * stack in client mode, the TLS client side, the attack), and what the
 * reports read from it (see lg_load.h; the run is lg_load.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "sk_common.h"

#include "lg_load_impl.h"

/* max_request - the longest request the mix can build. */
static size_t
max_request(const struct lg_load *l)
{
	size_t m = 0, tok = 0;

	for (uint32_t i = 0; l->env.tokens != NULL && i < l->env.tokens->n; i++)
		if (l->env.tokens->len[i] > tok)
			tok = l->env.tokens->len[i];
	for (int k = 0; k < LG_REQ__COUNT; k++) {
		const struct lg_tmpl *t = &l->tmpl.kind[k];
		size_t n = (size_t)t->head_len + t->tail_len + (k == LG_REQ_BUY_JWT ? tok : 20) +
			   sizeof("Connection: close\r\n\r\n") +
			   (k == LG_REQ_CART ? l->tmpl.cart_body_len : 0);

		if (l->o->mix[k] != 0 && n > m)
			m = n;
	}
	return m;
}

struct lg_load *
lg_load_create(const struct lg_opts *o, const struct lg_load_env *env, char *err, size_t errlen)
{
	struct sk_net_conf conf;
	struct lg_load *l;
	char host[64], ip[16], addr[LG_ADDR_STRLEN];
	uint32_t ring = 1;
	size_t snd;
	int rc;

	l = rte_zmalloc_socket("lg_load", sizeof(*l), RTE_CACHE_LINE_SIZE, env->socket);
	if (l == NULL) {
		sk_set_err(err, errlen, "out of memory (load state)");
		return NULL;
	}
	l->o = o;
	l->env = *env;
	l->hz = rte_get_tsc_hz();
	l->legit = o->attack == LG_ATTACK_NONE || o->mix_given;
	l->nports = (uint32_t)o->sport_max - o->sport_min + 1;
	/* A random first source port: back-to-back runs must not meet the
	 * server's leftovers (LAST_ACK, TIME_WAIT) of the previous run's tuples. */
	l->port_off = (uint32_t)(rte_rand() % l->nports);
	lg_pick_init(&l->pick, o);
	l->tx_wait_tsc = l->hz / 1000000 * LG_TX_WAIT_US;
	lg_stats_init(&l->stats, l->hz, rte_rdtsc());
	if (o->server_port == (o->tls ? 443 : 80))
		snprintf(host, sizeof(host), "%s", lg_server_str(o, true, addr));
	else
		snprintf(host, sizeof(host), "%s:%u", lg_server_str(o, true, addr), o->server_port);
	rc = lg_req_tmpl_init(&l->tmpl, host, o->item, o->cart_lines);
	if (rc != 0) {
		sk_set_err(err, errlen, "request templates: %s", strerror(-rc));
		goto err;
	}
	l->live_cap = o->conns;
	while (ring <= 2 * (uint64_t)o->conns) /* twice the live entries: see ready_compact() */
		ring <<= 1;
	l->ready_mask = ring - 1;
	l->live = rte_zmalloc_socket("lg_live", sizeof(*l->live) * l->live_cap, 0, env->socket);
	l->ready = rte_zmalloc_socket("lg_ready", sizeof(*l->ready) * ring, 0, env->socket);
	if (l->live == NULL || l->ready == NULL) {
		sk_set_err(err, errlen, "out of memory (%u connections)", o->conns);
		goto err;
	}

	sk_net_conf_defaults(&conf);
	conf.ip = o->client_ip;
	conf.ip_count = o->client_count;
	conf.prefix_len = o->prefix_len;
	conf.gateway = o->server_ip; /* 0 over IPv6: no ARP then */
	if (o->v6) {
		memcpy(conf.ip6, o->client_ip6, sizeof(conf.ip6));
		conf.prefix6_len = 64;
	}
	conf.mac = env->mac;
	conf.port_id = env->port_id;
	conf.tx_queue = env->queue;
	conf.tx_fn = lg_load_tx;
	conf.tx_ctx = l;
	conf.tcp_port = 0;
	conf.max_conns = o->conns + LG_TIME_WAIT_MAX + 64;
	conf.time_wait_max = LG_TIME_WAIT_MAX;
	conf.max_conns_per_ip = 0;
	l->rcv_cap = RTE_MIN(RTE_MAX(o->depth * 1024u, 4096u), 65535u);
	conf.rcv_buf_size = l->rcv_cap;
	snd = (max_request(l) + (o->tls ? SK_TLS_RECORD_OVERHEAD : 0)) * o->depth;
	conf.snd_buf_size = (uint32_t)RTE_MAX(snd, (size_t)4096);
	conf.app_data_size = (uint32_t)RTE_MAX(sk_align_up(sizeof(struct lg_conn), 64),
					       (size_t)SK_TCP_APP_DATA_MIN);
	conf.tx_ip_cksum_offload = env->tx_ip_cksum;
	conf.tx_tcp_cksum_offload = env->tx_tcp_cksum;
	for (size_t i = 0; i < sizeof(conf.cookie_secret); i++)
		conf.cookie_secret[i] = (uint8_t)rte_rand();
	l->net = sk_net_lcore_create(&conf, env->lcore, env->pool, env->socket, &lg_load_ops, l);
	if (l->net == NULL) {
		sk_set_err(err, errlen, "TCP stack (%u connections, clients %s + %u, /%u): %s",
			   conf.max_conns, lg_ip_str(o->client_ip, ip), o->client_count,
			   o->prefix_len, rte_strerror(rte_errno));
		goto err;
	}
	if (o->tls) {
		l->tls = lg_tls_create(o, l->rcv_cap, env->socket, err, errlen);
		if (l->tls == NULL)
			goto err;
	}
	if (o->attack != LG_ATTACK_NONE) {
		l->attack = lg_attack_create(o, env, err, errlen);
		if (l->attack == NULL)
			goto err;
	}
	return l;
err:
	lg_load_free(l);
	return NULL;
}

void
lg_load_free(struct lg_load *l)
{
	if (l == NULL)
		return;
	lg_attack_free(l->attack);
	/* connections the stack never reported closed: their SSLs and slots */
	for (uint32_t i = 0; l->tls != NULL && i < l->nlive; i++) {
		struct lg_conn *a = sk_tcp_app_data(l->live[i]);

		lg_tls_closed(l->tls, &a->tls, true);
	}
	sk_net_lcore_free(l->net);
	lg_tls_free(l->tls);
	rte_free(l->live);
	rte_free(l->ready);
	rte_free(l);
}

const struct lg_stats *
lg_load_stats(const struct lg_load *l)
{
	return &l->stats;
}

void
lg_load_tcp(const struct lg_load *l, struct lg_tcp_errors *out)
{
	const struct sk_net_stats *s = sk_net_lcore_stats(l->net);

	out->resets = s->tcp_rst_rx;
	out->retransmits = s->tcp_retransmits;
	out->syn_retransmits = s->tcp_syn_retransmits;
	out->timeouts = s->tcp_rto_reset + s->tcp_connect_timeout + s->tcp_idle_timeout;
	out->refused = s->tcp_connect_refused;
	out->tx_dropped = s->tx_dropped;
	out->tx_nombuf = s->tx_nombuf;
	out->tx_waits = l->tx_waits;
}

void
lg_load_info(const struct lg_load *l, struct lg_run_info *out)
{
	uint64_t end = l->run_end != 0 ? l->run_end : l->now;

	out->seconds = (double)(end - l->load_start) / (double)l->hz;
	out->inflight = l->inflight;
	out->backlog_max = l->backlog_max;
	out->mode = l->o->shape == LG_SHAPE_RATE  ? "open-rate"
		    : l->o->shape == LG_SHAPE_CPS ? "open-cps"
						  : "closed";
	out->short_conns = l->o->short_conns;
	out->legit = l->legit;
	out->tls = l->tls != NULL;
	out->attack = l->attack != NULL ? lg_attack_stats(l->attack) : NULL;
	if (l->attack != NULL) {
		const struct lg_opts *o = l->o;

		out->attack_info = (struct lg_attack_info){
			.mode = o->attack,
			.rate = o->attack_rate,
			.attackers = o->attackers,
			.drip_ms = o->drip_ms,
			.from_ip = o->attack_ip,
			.from_count = o->attack_count,
			.seconds =
				(double)(RTE_MIN(end, l->load_end) - l->load_start) / (double)l->hz,
		};
	}
}
