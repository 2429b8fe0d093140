/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_dp_config.c - seckill-dataplane's configuration translated into the
 * modules' settings: the TCP stack's (net_conf), the rules between [tcp]
 * and [http] (check_limits), the token key (load_token_key) and the rate
 * limiter's (ratelimit_conf), who the client is (client_conf). Also sk_dp_fail(), the start-up
 * error formatter.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "sk_dataplane.h"

int
sk_dp_fail(struct dataplane *dp, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dp->err, sizeof(dp->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* sk_dp_net_conf - the TCP stack settings of lcore @lc on port @p. */
void
sk_dp_net_conf(const struct dataplane *dp, const struct sk_port *p, struct sk_lcore *lc,
	       struct sk_net_conf *nc)
{
	const struct sk_config *cfg = &dp->cfg;
	const struct sk_config_port *pc = &cfg->ports[p->index];

	sk_net_conf_defaults(nc);
	nc->ip = pc->addr;
	nc->prefix_len = pc->prefix;
	nc->gateway = pc->gateway;
	if (pc->has_addr6) {
		memcpy(nc->ip6, pc->addr6, sizeof(nc->ip6));
		nc->prefix6_len = pc->prefix6;
	}
	nc->mac = p->mac;
	nc->port_id = p->port_id;
	nc->tx_queue = p->mode == SK_PORT_DISPATCH ? 0 : (uint16_t)lc->index;
#define OVERRIDE(field, key)                                                                       \
	do {                                                                                       \
		if (cfg->key != 0)                                                                 \
			nc->field = cfg->key;                                                      \
	} while (0)
	OVERRIDE(tcp_port, tcp_port);
	if (cfg->tls) {
		nc->tcp_port2 = cfg->tls_port;
		if (cfg->tls_plain == SK_CONFIG_PLAIN_OFF)
			nc->tcp_port = 0;
		if (nc->app_data_size < SK_APP_CONN_TLS_AREA)
			nc->app_data_size = SK_APP_CONN_TLS_AREA;
	}
	OVERRIDE(max_conns, max_conns);
	OVERRIDE(mss, mss);
	OVERRIDE(rcv_buf_size, rcv_buf_size);
	OVERRIDE(snd_buf_size, snd_buf_size);
	OVERRIDE(rto_initial_ms, rto_initial_ms);
	OVERRIDE(rto_min_ms, rto_min_ms);
	OVERRIDE(rto_max_ms, rto_max_ms);
	OVERRIDE(idle_timeout_ms, idle_timeout_ms);
	OVERRIDE(idle_new_ms, idle_new_ms);
	OVERRIDE(time_wait_ms, time_wait_ms);
	OVERRIDE(time_wait_max, time_wait_max);
	OVERRIDE(challenge_ack_per_s, challenge_ack_per_s);
#undef OVERRIDE
	nc->max_conns_per_ip = cfg->max_conns_per_ip; /* 0 is a value: no cap */
	nc->ip6_prefix = (uint8_t)cfg->ip6_prefix;
	/* 0 is a value: no per-connection limit */
	nc->challenge_ack_conn_ms = cfg->challenge_ack_conn_ms;
	if (cfg->max_retries != 0)
		nc->max_retries = (uint8_t)cfg->max_retries;
	if (nc->app_data_size < sizeof(struct sk_app_conn))
		nc->app_data_size = sizeof(struct sk_app_conn);
	nc->tx_burst_max = RTE_MAX(nc->tx_burst_max, cfg->burst);
	nc->tx_ip_cksum_offload = p->tx_ip_cksum;
	nc->tx_tcp_cksum_offload = p->tx_tcp_cksum;
	memcpy(nc->cookie_secret, dp->secret, sizeof(nc->cookie_secret));
	if (p->mode == SK_PORT_DISPATCH && lc->index != p->owner) {
		nc->tx_fn = sk_dispatch_tx;
		nc->tx_ctx = sk_dispatch_tx_ctx(dp->disp[p->index], lc->index);
	} else {
		nc->tx_fn = sk_lcore_tx; /* rte_eth_tx_burst, timed */
		nc->tx_ctx = (void *)&lc->port[p->index];
	}
}

/* sk_dp_check_limits - rules between [tcp] and [http] that need both modules'
 * defaults; the config loader cannot see those. */
int
sk_dp_check_limits(struct dataplane *dp)
{
	struct sk_net_conf nc;
	uint32_t head_max = dp->cfg.head_max ? dp->cfg.head_max : SK_HTTP_HEAD_MAX_DEFAULT;
	uint32_t body_max = dp->cfg.body_max ? dp->cfg.body_max : SK_HTTP_BODY_MAX_DEFAULT;
	uint32_t rcv, snd;

	sk_net_conf_defaults(&nc);
	rcv = dp->cfg.rcv_buf_size ? dp->cfg.rcv_buf_size : nc.rcv_buf_size;
	snd = dp->cfg.snd_buf_size ? dp->cfg.snd_buf_size : nc.snd_buf_size;
	if (rcv <= head_max)
		return sk_dp_fail(dp, -EINVAL,
				  "tcp.rcv_buf_size: %u must exceed http.head_max (%u) so that an "
				  "oversized head is seen and refused",
				  rcv, head_max);
	/* A request is taken whole from the receive buffer: the largest one must fit. */
	if ((uint64_t)head_max + body_max > rcv)
		return sk_dp_fail(dp, -EINVAL,
				  "tcp.rcv_buf_size: %u is less than http.head_max + http.body_max "
				  "(%u + %u): the largest request allowed could never complete",
				  rcv, head_max, body_max);
	if (snd < SK_APP_REPLY_MAX)
		return sk_dp_fail(dp, -EINVAL, "tcp.snd_buf_size: %u is less than one reply (%u)",
				  snd, SK_APP_REPLY_MAX);
	return 0;
}

/*
 * sk_dp_load_token_key - before the EAL: the HMAC key from seckill.secret_file.
 * With auth on and no secret (allowed only without items) the key is random:
 * nobody can mint a token, so every token is refused, as it should be.
 */
int
sk_dp_load_token_key(struct dataplane *dp)
{
	static uint8_t secret[SK_CONFIG_TOKEN_SECRET_MAX];
	size_t len = SK_CONFIG_TOKEN_SECRET_MIN;
	int rc;

	if (!dp->cfg.auth)
		return 0;
	if (dp->cfg.secret_file[0] != '\0') {
		rc = sk_config_read_secret(dp->cfg.secret_file, secret, &len, dp->err,
					   sizeof(dp->err));
		if (rc != 0)
			return rc;
	} else if (getrandom(secret, len, 0) != (ssize_t)len) {
		return sk_dp_fail(dp, -errno, "seckill.secret_file: none, and no random key: %s",
				  strerror(errno));
	}
	rc = sk_token_key_create(secret, len, &dp->token_key);
	explicit_bzero(secret, sizeof(secret)); /* the key keeps only HMAC midstates */
	if (rc != 0)
		return sk_dp_fail(dp, rc, "seckill.secret_file: cannot make the token key: %s",
				  strerror(-rc));
	return 0;
}

/* sk_dp_client_conf - [proxy]: the enums of sk_config.h are the values of
 * struct sk_client_conf (none 0, v1/xff 1, v2/forwarded 2). */
void
sk_dp_client_conf(const struct dataplane *dp, struct sk_client_conf *cc)
{
	_Static_assert(SK_CONFIG_PROXY_V1 == 1 && SK_CONFIG_PROXY_V2 == 2 &&
			       SK_CONFIG_FWD_XFF == 1 && SK_CONFIG_FWD_FORWARDED == 2,
		       "[proxy] values are sk_client_conf values");
	cc->proxy = dp->cfg.proxy_protocol;
	cc->forwarded = dp->cfg.forwarded;
	cc->trusted = dp->cfg.trusted;
	cc->ip6_prefix = (uint8_t)dp->cfg.ip6_prefix;
}

/* sk_dp_ratelimit_conf - the limiter settings (always a limiter: the
 * per-user limit is on by default, and a live change may turn any on). */
void
sk_dp_ratelimit_conf(const struct dataplane *dp, struct sk_ratelimit_config *rc)
{
	const struct sk_config *cfg = &dp->cfg;

	sk_ratelimit_config_defaults(rc);
	rc->hz = rte_get_tsc_hz();
	rc->seed = rte_rand();
	rc->n_items = cfg->max_items;
	rc->n_lcores = dp->nb_lcores;
	/* A burst of 0 is one second's worth. */
	rc->global_rate = cfg->global_rate;
	rc->global_burst = cfg->global_burst ? cfg->global_burst : cfg->global_rate;
	rc->item_rate = cfg->item_rate;
	rc->item_burst = cfg->item_burst ? cfg->item_burst : cfg->item_rate;
	rc->ip_rate = cfg->ip_rate;
	rc->ip_burst = cfg->ip_burst ? cfg->ip_burst : cfg->ip_rate;
	/* The tables are made even with their limit off: a live change may
	 * turn it on (docs/operations.md). */
	rc->ip_slots = cfg->ip_slots;
	rc->user_rate = cfg->user_rate;
	rc->user_burst = cfg->user_burst ? cfg->user_burst : cfg->user_rate;
	rc->user_slots = cfg->user_slots;
}

int
sk_dp_load_tls(struct dataplane *dp)
{
	const struct sk_config *cfg = &dp->cfg;
	struct sk_tls_conf tc;
	char err[SK_TLS_ERR_MAX];
	struct sk_net_conf nc;
	int rc;

	if (!cfg->tls)
		return 0;
	sk_net_conf_defaults(&nc);
	sk_tls_conf_defaults(&tc);
	for (uint32_t i = 0; i < cfg->tls_cert.n; i++) {
		tc.cert[i] = cfg->tls_cert.path[i];
		tc.key[i] = cfg->tls_key.path[i];
	}
	tc.n_certs = cfg->tls_cert.n;
	tc.ticket_key_file = cfg->tls_ticket_key_file;
	tc.ticket_rotate_s = cfg->tls_ticket_rotate_s;
	tc.min_version = cfg->tls_min_version == 1 ? TLS1_3_VERSION : TLS1_2_VERSION;
	tc.ciphersuites = cfg->tls_ciphersuites;
	tc.handshake_timeout_ms = cfg->tls_handshake_timeout_ms;
	tc.max_handshakes = cfg->tls_max_handshakes;
	tc.buffers = cfg->tls_buffers;
	/* A request is taken whole from the plaintext buffer, as from TCP's. */
	tc.buffer_size = cfg->rcv_buf_size ? cfg->rcv_buf_size : nc.rcv_buf_size;
	/* every connection of the lcore may be a TLS one (each port's table) */
	tc.max_conns = (cfg->max_conns ? cfg->max_conns : nc.max_conns) * cfg->nb_ports;
	rc = sk_tls_certs_load(&tc, &dp->tls_certs, err, sizeof(err));
	if (rc != 0)
		return sk_dp_fail(dp, rc, "%s", err);
	return 0;
}
