/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_dp_setup.c - seckill-dataplane's set-up once the EAL runs, and its
 * teardown: the arena memzone, the items, one order ring, rate limiter and
 * buy context per lcore (setup_seckill); the ports and the mbuf pool
 * (setup_ports_and_pool); one TCP stack and app per lcore and port
 * (setup_lcores). sk_dp_free() releases all of it in reverse, after a
 * clean stop and after a failure half-way alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "sk_dataplane.h"
#include "sk_logfmt.h"
#include "sk_telemetry.h"

/* The TLS counters live in the arena, where the control plane reads them. */
_Static_assert(sizeof(struct sk_tls_stats) <= sizeof(((struct sk_shm_lcore_stats *)0)->tls),
	       "struct sk_tls_stats must fit the TLS area of the arena's stats block");
_Static_assert(_Alignof(struct sk_tls_stats) <= SK_CACHE_LINE,
	       "the TLS area is aligned to a cache line only");

/*
 * setup_seckill - the arena memzone, the items, one order ring, rate
 * limiter and struct sk_seckill_lcore per lcore. Everything made here is
 * released by sk_dp_free(), also after a failure half-way.
 */
static int
setup_seckill(struct dataplane *dp)
{
	const struct sk_config *cfg = &dp->cfg;
	struct sk_shm_conf sc = {
		.nlcores = dp->nb_lcores,
		.max_items = cfg->max_items,
		.dedup_slots = cfg->dedup_slots,
		.status_bits = cfg->status_bits,
		.epoch = (uint32_t)(dp->start_ns / 1000000000),
		.member = cfg->member_id,
	};
	struct sk_ratelimit_config rlc;
	ssize_t rl_size;
	size_t size;
	int rc;

	if (dp->nb_lcores > SK_MAX_LCORES)
		return sk_dp_fail(dp, -EINVAL,
				  "dataplane.lcores: %u lcores, the stock engine has %d",
				  dp->nb_lcores, SK_MAX_LCORES);
	/* Ids stay unique across runs: start above every epoch in the store
	 * (an lcore of an earlier run may have rolled ahead of the clock). */
	uint64_t marks[SK_SHM_MARKS]; /* 8 KiB, start-up only */
	uint32_t nmarks = 0;
	bool more = false;
	rc = sk_dp_store_marks(dp, marks, SK_SHM_MARKS, &nmarks, &more);
	if (rc != 0)
		return rc;
	if (nmarks > 0 && sk_order_id_epoch(marks[nmarks - 1]) >= sc.epoch)
		sc.epoch = sk_order_id_epoch(marks[nmarks - 1]) + 1;
	if (!sk_order_epoch_valid(sc.epoch))
		return sk_dp_fail(dp, -EINVAL,
				  "the clock (%" PRIu32 " s) is outside the order ids' "
				  "epochs (2024-01-01 + 2^30 s)",
				  sc.epoch);
	size = sk_shm_size(&sc);
	if (size == 0)
		return sk_dp_fail(dp, -EINVAL, "seckill.dedup_slots: the arena size overflows");
	dp->shm_mz = rte_memzone_reserve_aligned(SK_SHM_MEMZONE, size, (int)rte_socket_id(), 0,
						 SK_CACHE_LINE);
	if (dp->shm_mz == NULL)
		return sk_dp_fail(
			dp, -rte_errno,
			"seckill.dedup_slots: cannot reserve the %zu MiB arena (max_items, "
			"dedup_slots, status_bits): %s",
			size >> 20, rte_strerror(rte_errno));
	dp->shm = sk_shm_init(dp->shm_mz->addr, dp->shm_mz->len, &sc);
	if (dp->shm == NULL)
		return sk_dp_fail(dp, -EINVAL, "seckill.max_items: the arena refuses its layout");
	if (sk_shm_set_marks(dp->shm, marks, nmarks, more) != 0)
		return sk_dp_fail(dp, -EIO, "seckill.store: %s: its order ids are out of order",
				  cfg->store);
	rc = sk_dp_setup_items(dp);
	if (rc != 0)
		return rc;

	dp->sk_conf.auth = cfg->auth;
	dp->sk_conf.token_skew_s = cfg->token_skew_s;
	dp->sk_conf.key = dp->token_key;
	sk_dp_ratelimit_conf(dp, &rlc);
	rl_size = sk_ratelimit_memsize(&rlc);
	if (rl_size < 0)
		return sk_dp_fail(dp, -EINVAL,
				  "seckill.global_rate: the rate limiter refuses these limits");
	for (unsigned i = 0; i < dp->nb_lcores; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->lcore_ids[i]);

		dp->orders[i] = sk_order_ring_create(i, cfg->order_ring, socket);
		if (dp->orders[i] == NULL)
			return sk_dp_fail(
				dp, -rte_errno,
				"seckill.order_ring: cannot create the ring of %u records of "
				"lcore %u: %s",
				cfg->order_ring, dp->lcore_ids[i], rte_strerror(rte_errno));
		void *mem = rte_zmalloc_socket("sk_ratelimit", (size_t)rl_size, RTE_CACHE_LINE_SIZE,
					       socket);

		if (mem == NULL)
			return sk_dp_fail(dp, -ENOMEM,
					  "seckill.ip_slots: lcore %u: no memory for a %zd-byte "
					  "rate limiter",
					  dp->lcore_ids[i], rl_size);
		dp->rl[i] = sk_ratelimit_init(mem, (size_t)rl_size, &rlc);
		if (dp->rl[i] == NULL) {
			rte_free(mem);
			return sk_dp_fail(
				dp, -EINVAL,
				"seckill.global_rate: the rate limiter refuses these limits");
		}
		dp->seckill[i] = rte_zmalloc_socket("sk_seckill", sizeof(*dp->seckill[i]),
						    RTE_CACHE_LINE_SIZE, socket);
		if (dp->seckill[i] == NULL)
			return sk_dp_fail(dp, -ENOMEM, "lcore %u: out of memory", dp->lcore_ids[i]);
		rc = sk_seckill_lcore_init(dp->seckill[i], dp->shm, i, dp->orders[i], &dp->sk_conf,
					   dp->rl[i], rte_get_tsc_hz());
		if (rc != 0)
			return sk_dp_fail(dp, rc,
					  "seckill.auth: lcore %u: the buy path refuses its "
					  "settings",
					  dp->lcore_ids[i]);
	}
	return 0;
}

/* log_level_now - the lowest level the log writes now. */
static uint32_t
log_level_now(void)
{
	uint32_t lv = SK_LOG_DEBUG;

	while (lv < SK_LOG_CRIT && !sk_logfmt_enabled((enum sk_log_level)lv))
		lv++;
	return lv;
}

int
sk_dp_setup_live(struct dataplane *dp)
{
	const struct sk_config *cfg = &dp->cfg;
	struct sk_live_settings first = {
		.limits = {cfg->global_rate, cfg->global_burst, cfg->item_rate, cfg->item_burst,
			   cfg->ip_rate, cfg->ip_burst, cfg->user_rate, cfg->user_burst},
		.log_level = log_level_now(),
		.when_ns = dp->start_ns,
	};
	size_t size = sk_live_size(cfg->deny_max);

	snprintf(first.what, sizeof(first.what), "start");
	if (size == 0)
		return sk_dp_fail(dp, -EINVAL, "seckill.deny_max: %u is too large", cfg->deny_max);
	dp->live_mz = rte_memzone_reserve_aligned(SK_LIVE_MEMZONE, size, (int)rte_socket_id(), 0,
						  SK_CACHE_LINE);
	if (dp->live_mz == NULL)
		return sk_dp_fail(dp, -rte_errno,
				  "seckill.deny_max: cannot reserve the %zu MiB live settings "
				  "block: %s",
				  size >> 20, rte_strerror(rte_errno));
	/* The key of seckill.secret_file is the ring's "default": tokens
	 * without a kid, and those with kid "default", verify with it. */
	first.keys.dflt = first.keys.sign = -1;
	if (dp->token_key != NULL) {
		struct sk_token_ring_key *k = &first.keys.k[0];

		snprintf(k->kid, sizeof(k->kid), "%s", SK_LIVE_KID_DEFAULT);
		k->kid_len = (uint8_t)strlen(k->kid);
		sk_token_key_copy(k->key, sizeof(k->key), dp->token_key);
		first.keys.n = 1;
		first.keys.dflt = first.keys.sign = 0;
	}
	dp->live = sk_live_init(dp->live_mz->addr, dp->live_mz->len, dp->nb_lcores, cfg->deny_max,
				&first);
	explicit_bzero(&first, sizeof(first)); /* it held the key */
	if (dp->live == NULL)
		return sk_dp_fail(dp, -EINVAL,
				  "seckill.user_rate: the live settings refuse "
				  "the [seckill] limits");
	for (unsigned i = 0; i < dp->nb_lcores; i++)
		if (sk_seckill_live_attach(dp->seckill[i], dp->live) != 0)
			return sk_dp_fail(dp, -EINVAL, "lcore %u: cannot follow the live settings",
					  dp->lcore_ids[i]);
	return 0;
}

int
sk_dp_setup_reserve(struct dataplane *dp)
{
	size_t size = sk_reserve_size((uint64_t)dp->cfg.reserve_mb << 20);

	if (dp->cfg.reserve_mb == 0)
		return 0;
	if (size == 0)
		return sk_dp_fail(dp, -EINVAL, "seckill.reserve_mb: %u is too large",
				  dp->cfg.reserve_mb);
	dp->reserve_mz = rte_memzone_reserve_aligned(SK_RESERVE_MEMZONE, size, (int)rte_socket_id(),
						     0, SK_CACHE_LINE);
	if (dp->reserve_mz == NULL)
		return sk_dp_fail(dp, -rte_errno,
				  "seckill.reserve_mb: cannot reserve the %zu MiB reservation "
				  "sets: %s",
				  size >> 20, rte_strerror(rte_errno));
	dp->reserve = sk_reserve_init(dp->reserve_mz->addr, dp->reserve_mz->len, dp->nb_lcores);
	if (dp->reserve == NULL)
		return sk_dp_fail(dp, -EINVAL, "seckill.reserve_mb: cannot lay out the sets");
	for (unsigned i = 0; i < dp->nb_lcores; i++)
		if (sk_seckill_reserve_attach(dp->seckill[i], dp->reserve) != 0)
			return sk_dp_fail(dp, -EINVAL, "lcore %u: cannot read the reservation sets",
					  dp->lcore_ids[i]);
	return 0;
}

static int
setup_ports_and_pool(struct dataplane *dp)
{
	const struct sk_config *cfg = &dp->cfg;
	uint64_t need = 0;
	uint32_t room;
	uint16_t mss;
	int rc;

	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		rc = sk_port_probe(&cfg->ports[i], i, dp->nb_lcores, &dp->ports[i], dp->err,
				   sizeof(dp->err));
		if (rc != 0)
			return rc;
		dp->nb_ports_probed = i + 1;
		need += sk_port_mbufs_needed(&dp->ports[i]);
	}
	/* Caches can hold 1.5x their size; each lcore keeps a few bursts in flight. */
	need += (uint64_t)dp->nb_lcores * (cfg->mbuf_cache * 3 / 2 + 4u * cfg->burst);
	if (need > cfg->mbufs)
		return sk_dp_fail(
			dp, -EINVAL,
			"dataplane.mbufs: %u is too small: queues and caches hold %" PRIu64
			" at idle",
			cfg->mbufs, need);

	mss = cfg->mss ? cfg->mss : 1460;
	room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM, (uint32_t)mss + 128u);
	dp->pool = rte_pktmbuf_pool_create("sk_mbuf", cfg->mbufs, cfg->mbuf_cache, 0,
					   (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
					   dp->ports[0].socket);
	if (dp->pool == NULL)
		return sk_dp_fail(dp, -rte_errno,
				  "dataplane.mbufs: cannot create a pool of %u mbufs: %s",
				  cfg->mbufs, rte_strerror(rte_errno));

	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		struct sk_port *p = &dp->ports[i];

		rc = sk_port_start(&cfg->ports[i], p, dp->pool, dp->err, sizeof(dp->err));
		if (rc != 0)
			return rc;
		if (p->mode == SK_PORT_DISPATCH) {
			dp->disp[i] = sk_dispatch_create(p->port_id, p->owner, dp->nb_lcores,
							 cfg->dispatch_ring, p->socket, dp->pool);
			if (dp->disp[i] == NULL)
				return sk_dp_fail(
					dp, -rte_errno,
					"dataplane.dispatch_ring: port%u: cannot create the "
					"dispatch rings: %s",
					i, rte_strerror(rte_errno));
		}
	}
	return 0;
}

static int
setup_lcores(struct dataplane *dp)
{
	const struct sk_config *cfg = &dp->cfg;
	struct sk_app_conf ac = {
		.limits = {cfg->head_max, cfg->target_max, cfg->body_max, cfg->fields_max},
	};
	struct sk_net_conf net_defaults;
	struct sk_client_conf client;

	sk_net_conf_defaults(&net_defaults);
	sk_dp_client_conf(dp, &client);
	ac.client = &client;

	for (unsigned i = 0; i < dp->nb_lcores; i++) {
		unsigned id = dp->lcore_ids[i];
		int socket = (int)rte_lcore_to_socket_id(id);
		struct sk_lcore *lc;

		lc = rte_zmalloc_socket("sk_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE, socket);
		if (lc == NULL)
			return sk_dp_fail(dp, -ENOMEM, "lcore %u: out of memory", id);
		dp->lcores[i] = lc;
		lc->lcore_id = id;
		lc->index = i;
		lc->burst = cfg->burst;
		lc->idle_sleep_us = cfg->idle_sleep_us;
		lc->idle_after_tsc = rte_get_tsc_hz() / 1000000 * cfg->idle_after_us;
		lc->stop = dp->stop;
		ac.lcore_id = id;
		ac.socket = socket;
		ac.seckill = dp->seckill[i];
		if (dp->tls_certs != NULL) {
			dp->tls[i] = sk_tls_lcore_create(
				dp->tls_certs, socket,
				(struct sk_tls_stats *)sk_shm_lstats(dp->shm, i)->tls);
			if (dp->tls[i] == NULL)
				return sk_dp_fail(dp, -rte_errno,
						  "tls: lcore %u: cannot set up TLS: %s", id,
						  rte_strerror(rte_errno));
			ac.tls = dp->tls[i];
			ac.tls_port = cfg->tls_port;
			ac.plain_redirect = cfg->tls_plain == SK_CONFIG_PLAIN_REDIRECT;
		}
		ac.ack_durable = cfg->ack == SK_CONFIG_ACK_DURABLE;
		ac.ack_wait_ms = cfg->ack_wait_ms;
		ac.sse_max = cfg->sse_max;
		ac.sse_per_user = cfg->sse_per_user;
		ac.head_timeout_ms = cfg->head_timeout_ms;
		ac.body_timeout_ms = cfg->body_timeout_ms;
		/* One parked request per connection; twice that for connections
		 * closed and reused within the wait. */
		ac.park_slots = 2 * (cfg->max_conns ? cfg->max_conns : net_defaults.max_conns) *
				cfg->nb_ports;
		lc->app = sk_app_create(&ac);
		if (lc->app == NULL)
			return sk_dp_fail(
				dp, -rte_errno,
				rte_errno == EINVAL
					? "http.head_max: the HTTP limits are out of range"
					: "lcore %u: cannot create the app: out of memory",
				id);
		for (uint16_t p = 0; p < cfg->nb_ports; p++) {
			const struct sk_port *port = &dp->ports[p];
			struct sk_lcore_port *lp = &lc->port[p];
			struct sk_net_conf nc;

			lp->port_id = port->port_id;
			lp->disp = dp->disp[p];
			lp->poll_nic = port->mode != SK_PORT_DISPATCH || port->owner == i;
			lp->queue = port->mode == SK_PORT_DISPATCH ? 0 : (uint16_t)i;
			lp->stats = &lc->stats;
			sk_dp_net_conf(dp, port, lc, &nc);
			lp->net = sk_net_lcore_create(&nc, id, dp->pool, socket, sk_app_ops(),
						      lc->app);
			if (lp->net == NULL)
				return sk_dp_fail(
					dp, -rte_errno,
					"tcp: the TCP stack refuses the [tcp] settings of port%u "
					"on lcore %u: %s",
					p, id, rte_strerror(rte_errno));
			lc->nb_ports = p + 1;
		}
	}
	return 0;
}

int
sk_dp_setup(struct dataplane *dp)
{
	unsigned id, i = 0;
	int rc;

	/* Index 0 is the main lcore, which runs its loop on this thread. */
	dp->lcore_ids[i++] = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(id)
	{
		dp->lcore_ids[i++] = id;
	}
	dp->nb_lcores = i;
	if (dp->cfg.has_syncookie_secret)
		memcpy(dp->secret, dp->cfg.syncookie_secret, sizeof(dp->secret));
	else if (getrandom(dp->secret, sizeof(dp->secret), 0) != (ssize_t)sizeof(dp->secret))
		return sk_dp_fail(dp, -errno, "tcp.syncookie_secret: no random secret: %s",
				  strerror(errno));
	rc = sk_dp_check_limits(dp);
	if (rc == 0)
		rc = sk_dp_load_tls(dp);
	if (rc == 0)
		rc = setup_seckill(dp);
	if (rc == 0)
		rc = sk_dp_setup_live(dp);
	if (rc == 0)
		rc = setup_ports_and_pool(dp);
	/* After the ports: a port's or the pool's mistake is the one to
	 * report, not the memory of a block that no sale may use. */
	if (rc == 0)
		rc = sk_dp_setup_reserve(dp);
	if (rc == 0)
		rc = setup_lcores(dp);
	return rc;
}

void
sk_dp_free(struct dataplane *dp)
{
	sk_telemetry_stop();
	for (unsigned i = 0; i < dp->nb_lcores; i++) {
		struct sk_lcore *lc = dp->lcores[i];

		if (lc == NULL)
			continue;
		for (unsigned p = 0; p < lc->nb_ports; p++)
			sk_net_lcore_free(lc->port[p].net);
		sk_app_free(lc->app);
		rte_free(lc);
		dp->lcores[i] = NULL;
	}
	for (unsigned i = 0; i < RTE_MAX_LCORE; i++) {
		sk_tls_lcore_free(dp->tls[i]);
		dp->tls[i] = NULL;
	}
	sk_tls_certs_free(dp->tls_certs);
	dp->tls_certs = NULL;
	for (unsigned p = 0; p < SK_CONFIG_MAX_PORTS; p++) {
		sk_dispatch_free(dp->disp[p]);
		dp->disp[p] = NULL;
	}
	for (unsigned p = 0; p < dp->nb_ports_probed; p++)
		sk_port_close(&dp->ports[p]);
	rte_mempool_free(dp->pool);
	dp->pool = NULL;
	for (unsigned i = 0; i < RTE_MAX_LCORE; i++) {
		rte_free(dp->seckill[i]);
		rte_free(dp->rl[i]); /* the limiter is its own memory (sk_ratelimit_init) */
		rte_ring_free(dp->orders[i]);
		dp->seckill[i] = NULL;
		dp->rl[i] = NULL;
		dp->orders[i] = NULL;
	}
	if (dp->live != NULL) /* its slots hold the token keys */
		explicit_bzero(dp->live->slot, sizeof(dp->live->slot));
	if (dp->live_mz != NULL)
		rte_memzone_free(dp->live_mz);
	dp->live_mz = NULL;
	dp->live = NULL;
	if (dp->reserve_mz != NULL)
		rte_memzone_free(dp->reserve_mz);
	dp->reserve_mz = NULL;
	dp->reserve = NULL;
	if (dp->shm_mz != NULL)
		rte_memzone_free(dp->shm_mz);
	dp->shm_mz = NULL;
	dp->shm = NULL;
	sk_token_key_free(dp->token_key);
	dp->token_key = NULL;
}
