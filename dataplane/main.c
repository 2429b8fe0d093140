/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - seckill-dataplane: the front door of the appliance.
 *
 *   seckill-dataplane [EAL options] -- --config FILE
 *
 * Reads the config and the token secret (before the EAL starts, so a bad
 * file costs nothing), starts the EAL, lays out the seckill arena (items,
 * dedup set, status table) in a memzone with one order ring and one rate
 * limiter per lcore, probes and starts the ports, builds one TCP stack + app
 * per lcore and port, registers the telemetry commands, then runs the loop on
 * every lcore - the main lcore included: with "-l 1" the whole dataplane is
 * one thread on core 1, and the EAL's control threads (interrupts,
 * telemetry) run on the cores left out of -l. SIGINT/SIGTERM stop the loops;
 * every lcore resets its connections, then the ports are stopped and all
 * memory (memzones included) is released before exit.
 *
 * Exit status: 0 after a clean stop, 1 on a start-up error (one line on
 * stderr naming the config key), 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "sk_app.h"
#include "sk_common.h"
#include "sk_config.h"
#include "sk_dispatch.h"
#include "sk_http.h"
#include "sk_lcore.h"
#include "sk_net.h"
#include "sk_port.h"
#include "sk_preheat.h"
#include "sk_seckill.h"
#include "sk_shm.h"
#include "sk_telemetry.h"

#define PROG "seckill-dataplane"

/* Set by the signal handler; the lcores read it once per pass. */
static atomic_bool stop_flag;

/* Everything the dataplane built; torn down in reverse by dataplane_free(). */
struct dataplane {
	struct sk_config cfg;
	unsigned nb_lcores;
	unsigned lcore_ids[RTE_MAX_LCORE];
	struct sk_port ports[SK_CONFIG_MAX_PORTS];
	uint16_t nb_ports_probed;
	struct rte_mempool *pool;
	struct sk_dispatch *disp[SK_CONFIG_MAX_PORTS];
	struct sk_lcore *lcores[RTE_MAX_LCORE];
	uint8_t secret[SK_NET_COOKIE_SECRET_LEN];
	char err[SK_CONFIG_ERR_MAX];

	/* The buy path (seckill): one arena, per-lcore rings and limiters. */
	int64_t start_ns;		  /* wall clock at start: epoch and "+N" times */
	struct sk_token_key *token_key;	  /* NULL when auth is off */
	struct sk_seckill_conf sk_conf;	  /* shared by the lcores, read-only */
	const struct rte_memzone *shm_mz; /* the arena (SK_SHM_MEMZONE) */
	struct sk_shm *shm;
	struct rte_ring *orders[RTE_MAX_LCORE];		 /* per lcore index */
	struct sk_ratelimit *rl[RTE_MAX_LCORE];		 /* rte_zmalloc'd; NULL: no limits */
	struct sk_seckill_lcore *seckill[RTE_MAX_LCORE]; /* rte_zmalloc'd */
};

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, true);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [EAL options] -- --config FILE\n"
		   "  --config FILE  INI configuration (see config/seckill.ini)\n"
		   "  --help         this text\n");
}

/* parse_app_args - the options after "--". Returns 0, 1 for --help, or -EINVAL. */
static int
parse_app_args(int argc, char **argv, const char **config)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int i, opt;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	if (i == argc) {
		fprintf(stderr, PROG ": missing '-- --config FILE'\n");
		return -EINVAL;
	}
	argv[i] = argv[0]; /* getopt wants a program name first */
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc - i, argv + i, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			*config = optarg;
			break;
		case 'h':
			argv[i] = (char *)"--";
			return 1;
		default:
			fprintf(stderr, PROG ": unknown or incomplete option '%s'\n",
				argv[i + optind - 1]);
			argv[i] = (char *)"--";
			return -EINVAL;
		}
	}
	if (optind < argc - i) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[i + optind]);
		argv[i] = (char *)"--";
		return -EINVAL;
	}
	argv[i] = (char *)"--";
	if (*config == NULL) {
		fprintf(stderr, PROG ": missing --config FILE\n");
		return -EINVAL;
	}
	return 0;
}

/* eal_has_lcores - true if the EAL options (before "--") choose the lcores. */
static bool
eal_has_lcores(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], "-l", 2) == 0 || strncmp(argv[i], "-c", 2) == 0 ||
		    strncmp(argv[i], "--lcores", 8) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                    */
/* ------------------------------------------------------------------------ */

static int fail(struct dataplane *dp, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct dataplane *dp, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dp->err, sizeof(dp->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* net_conf - the TCP stack settings of lcore @lc on port @p. */
static void
net_conf(const struct dataplane *dp, const struct sk_port *p, struct sk_lcore *lc,
	 struct sk_net_conf *nc)
{
	const struct sk_config *cfg = &dp->cfg;
	const struct sk_config_port *pc = &cfg->ports[p->index];

	sk_net_conf_defaults(nc);
	nc->ip = pc->addr;
	nc->prefix_len = pc->prefix;
	nc->gateway = pc->gateway;
	nc->mac = p->mac;
	nc->port_id = p->port_id;
	nc->tx_queue = p->dispatch ? 0 : (uint16_t)lc->index;
#define OVERRIDE(field, key)                                                                       \
	do {                                                                                       \
		if (cfg->key != 0)                                                                 \
			nc->field = cfg->key;                                                      \
	} while (0)
	OVERRIDE(tcp_port, tcp_port);
	OVERRIDE(max_conns, max_conns);
	OVERRIDE(mss, mss);
	OVERRIDE(rcv_buf_size, rcv_buf_size);
	OVERRIDE(snd_buf_size, snd_buf_size);
	OVERRIDE(rto_initial_ms, rto_initial_ms);
	OVERRIDE(rto_min_ms, rto_min_ms);
	OVERRIDE(rto_max_ms, rto_max_ms);
	OVERRIDE(idle_timeout_ms, idle_timeout_ms);
	OVERRIDE(time_wait_ms, time_wait_ms);
	OVERRIDE(time_wait_max, time_wait_max);
#undef OVERRIDE
	if (cfg->max_retries != 0)
		nc->max_retries = (uint8_t)cfg->max_retries;
	if (nc->app_data_size < sizeof(struct sk_app_conn))
		nc->app_data_size = sizeof(struct sk_app_conn);
	nc->tx_burst_max = RTE_MAX(nc->tx_burst_max, cfg->burst);
	nc->tx_ip_cksum_offload = p->tx_ip_cksum;
	nc->tx_tcp_cksum_offload = p->tx_tcp_cksum;
	memcpy(nc->cookie_secret, dp->secret, sizeof(nc->cookie_secret));
	if (p->dispatch && lc->index != p->owner) {
		nc->tx_fn = sk_dispatch_tx;
		nc->tx_ctx = sk_dispatch_tx_ctx(dp->disp[p->index], lc->index);
	} else {
		nc->tx_fn = sk_lcore_tx; /* rte_eth_tx_burst, timed */
		nc->tx_ctx = (void *)&lc->port[p->index];
	}
}

/* check_limits - rules between [tcp] and [http] that need both modules'
 * defaults; the config loader cannot see those. */
static int
check_limits(struct dataplane *dp)
{
	struct sk_net_conf nc;
	uint32_t head_max = dp->cfg.head_max ? dp->cfg.head_max : SK_HTTP_HEAD_MAX_DEFAULT;
	uint32_t rcv, snd;

	sk_net_conf_defaults(&nc);
	rcv = dp->cfg.rcv_buf_size ? dp->cfg.rcv_buf_size : nc.rcv_buf_size;
	snd = dp->cfg.snd_buf_size ? dp->cfg.snd_buf_size : nc.snd_buf_size;
	if (rcv <= head_max)
		return fail(dp, -EINVAL,
			    "tcp.rcv_buf_size: %u must exceed http.head_max (%u) so that an "
			    "oversized head is seen and refused",
			    rcv, head_max);
	if (snd < SK_APP_REPLY_MAX)
		return fail(dp, -EINVAL, "tcp.snd_buf_size: %u is less than one reply (%u)", snd,
			    SK_APP_REPLY_MAX);
	return 0;
}

/*
 * load_token_key - before the EAL: the HMAC key from seckill.secret_file.
 * With auth on and no secret (allowed only without items) the key is random:
 * nobody can mint a token, so every token is refused, as it should be.
 */
static int
load_token_key(struct dataplane *dp)
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
		return fail(dp, -errno, "seckill.secret_file: none, and no random key: %s",
			    strerror(errno));
	}
	rc = sk_token_key_create(secret, len, &dp->token_key);
	explicit_bzero(secret, sizeof(secret)); /* the key keeps only HMAC midstates */
	if (rc != 0)
		return fail(dp, rc, "seckill.secret_file: cannot make the token key: %s",
			    strerror(-rc));
	return 0;
}

/* ratelimit_conf - the limiter settings; false if every limit is off. */
static bool
ratelimit_conf(const struct dataplane *dp, struct sk_ratelimit_config *rc)
{
	const struct sk_config *cfg = &dp->cfg;

	if (cfg->global_rate == 0 && cfg->item_rate == 0 && cfg->ip_rate == 0)
		return false;
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
	rc->ip_slots = cfg->ip_rate ? cfg->ip_slots : 0;
	return true;
}

/*
 * activity_from_config - config item @ci as a store activity, its window
 * made absolute (relative times count from the process start).
 */
static int
activity_from_config(struct dataplane *dp, const struct sk_config_item *ci,
		     struct sk_store_activity *a)
{
	memset(a, 0, sizeof(*a));
	a->item = ci->id;
	a->per_user_limit = ci->per_user_limit;
	a->total = ci->total;
	a->price = ci->price;
	snprintf(a->name, sizeof(a->name), "%s", ci->name);
	if (sk_config_item_window(ci, dp->start_ns, &a->start_ns, &a->end_ns) != 0)
		return fail(dp, -EINVAL,
			    "item.%" PRIu32 ".end: must be after item.%" PRIu32
			    ".start (one is relative to the start, the other absolute)",
			    ci->id, ci->id);
	return 0;
}

/* config_differs - what of config item @ci the stored activity @a overrides. */
static void
config_differs(const struct sk_config_item *ci, const struct sk_store_activity *cfg,
	       const struct sk_store_activity *a)
{
	char what[160] = "";
	size_t n = 0;

#define DIFF(cond, name)                                                                           \
	do {                                                                                       \
		if ((cond) && n < sizeof(what))                                                    \
			n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s", n ? ", " : "",   \
					      name);                                               \
	} while (0)
	DIFF(a->total != cfg->total, "total");
	DIFF(a->price != cfg->price, "price");
	DIFF(a->per_user_limit != cfg->per_user_limit, "per_user_limit");
	DIFF(!ci->start.relative && a->start_ns != cfg->start_ns, "start");
	DIFF(!ci->end.relative && a->end_ns != cfg->end_ns, "end");
#undef DIFF
	if (n > 0)
		printf(PROG ": item.%" PRIu32
			    ": the store's activity differs from the config (%s): "
			    "the store wins; change a running sale through the admin API\n",
		       ci->id, what);
}

/* What setup_items() restored, for its summary line. */
struct setup_ctx {
	struct dataplane *dp;
	struct sk_store *st;
	uint32_t items;
	uint64_t units, users;
	int rc;
};

/* preheat_one - activity @a into the arena (sk_preheat_item()), errors named. */
static int
preheat_one(struct setup_ctx *c, const struct sk_store_activity *a, uint64_t dedup,
	    uint32_t batch_max)
{
	struct dataplane *dp = c->dp;
	struct sk_recover_stats rs = {0};
	int rc = sk_preheat_item(c->st, dp->shm, a, dedup, batch_max, NULL, &rs);

	if (rc == -ENOSPC && atomic_load(&dp->shm->nitems) >= dp->shm->max_items)
		return fail(dp, rc,
			    "seckill.max_items: no room for item %" PRIu32 " (%" PRIu32 " items)",
			    a->item, dp->shm->max_items);
	if (rc == -ENOSPC)
		return fail(dp, rc,
			    "item.%" PRIu32 ".dedup_slots: no room left in seckill.dedup_slots "
			    "(%" PRIu64 " of %" PRIu64 " used) for the item or its holdings",
			    a->item, (uint64_t)atomic_load(&dp->shm->dedup_used),
			    dp->shm->dedup_slots);
	if (rc == -ERANGE)
		return fail(dp, rc,
			    "item.%" PRIu32 ".total: %" PRIu64 " + %" PRIu64 " restocked is less "
			    "than the live units the store %s holds: refusing to oversell",
			    a->item, a->total, a->added, dp->cfg.store);
	if (rc != 0)
		return fail(dp, rc, "item.%" PRIu32 ": refused by the stock engine: %s", a->item,
			    strerror(-rc));
	c->items++;
	c->units += rs.units;
	c->users += rs.users;
	return 0;
}

/* preheat_stored - callback: an open activity of the store not in the config. */
static int
preheat_stored(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct setup_ctx *c = arg;

	(void)l;
	if (a->closed_ns != 0 || a->end_ns <= c->dp->start_ns ||
	    sk_shm_item_find(c->dp->shm, a->item) != NULL)
		return 0;
	c->rc = preheat_one(c, a, 0, 0);
	return c->rc != 0;
}

/*
 * setup_items - preheat at start: the sale's items into the fresh arena
 * before any lcore sells (and before the order rings exist, so the control
 * plane cannot attach yet). Without [seckill] store: the config's items,
 * every unit on sale. With a store (the control plane's LMDB, opened
 * read-only and closed again; the control plane may be writing it): the
 * store's activities are the truth - an [item.N] the store knows is loaded
 * as the store has it (restocks included; a closed one is not loaded), one
 * it does not know yet comes from the config (the control plane records
 * it), and every other open activity of the store is loaded too - each
 * with total + restocked - live units and its winners' holdings
 * (sk_preheat_item()).
 */
static int
setup_items(struct dataplane *dp)
{
	const struct sk_store_conf scf = {.flags = SK_STORE_RDONLY};
	struct setup_ctx c = {.dp = dp};
	char err[SK_CONFIG_ERR_MAX];
	int rc = 0;

	if (dp->cfg.store[0] != '\0') {
		rc = sk_store_open(&c.st, dp->cfg.store, &scf, err, sizeof(err));
		if (rc == -ENOENT)
			printf(PROG ": recovery: no store at %s yet, nothing to restore\n",
			       dp->cfg.store);
		else if (rc != 0)
			return fail(dp, rc, "seckill.store: %s: cannot open it read-only: %s",
				    dp->cfg.store, err);
		rc = 0;
	}
	for (uint32_t i = 0; i < dp->cfg.nb_items && rc == 0; i++) {
		const struct sk_config_item *ci = &dp->cfg.items[i];
		struct sk_store_activity cfg, stored;
		const struct sk_store_activity *a = &cfg;

		rc = activity_from_config(dp, ci, &cfg);
		if (rc != 0)
			break;
		if (c.st != NULL && sk_store_activity_get(c.st, ci->id, &stored, NULL) == 0) {
			if (stored.closed_ns != 0) {
				printf(PROG ": item.%" PRIu32
					    ": closed in the store: not on sale\n",
				       ci->id);
				continue;
			}
			config_differs(ci, &cfg, &stored);
			a = &stored;
		}
		rc = preheat_one(&c, a, ci->dedup_slots, ci->batch_max);
	}
	if (rc == 0 && c.st != NULL) {
		rc = sk_store_activity_foreach(c.st, preheat_stored, &c);
		if (c.rc != 0)
			rc = c.rc;
		else if (rc != 0)
			rc = fail(dp, rc, "seckill.store: %s: cannot read its activities: %s",
				  dp->cfg.store, strerror(-rc));
	}
	if (c.st != NULL) {
		sk_store_close(c.st);
		if (rc == 0)
			printf(PROG ": recovery: store %s: %" PRIu64 " live units of %" PRIu64
				    " holdings restored over %" PRIu32 " items\n",
			       dp->cfg.store, c.units, c.users, c.items);
	}
	return rc;
}

/*
 * setup_seckill - the arena memzone, the items, one order ring, rate
 * limiter and struct sk_seckill_lcore per lcore. Everything made here is
 * released by dataplane_free(), also after a failure half-way.
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
	};
	struct sk_ratelimit_config rlc;
	bool limits = ratelimit_conf(dp, &rlc);
	ssize_t rl_size = 0;
	size_t size;
	int rc;

	if (dp->nb_lcores > SK_MAX_LCORES)
		return fail(dp, -EINVAL, "dataplane.lcores: %u lcores, the stock engine has %d",
			    dp->nb_lcores, SK_MAX_LCORES);
	size = sk_shm_size(&sc);
	if (size == 0)
		return fail(dp, -EINVAL, "seckill.dedup_slots: the arena size overflows");
	dp->shm_mz = rte_memzone_reserve_aligned(SK_SHM_MEMZONE, size, (int)rte_socket_id(), 0,
						 SK_CACHE_LINE);
	if (dp->shm_mz == NULL)
		return fail(dp, -rte_errno,
			    "seckill.dedup_slots: cannot reserve the %zu MiB arena (max_items, "
			    "dedup_slots, status_bits): %s",
			    size >> 20, rte_strerror(rte_errno));
	dp->shm = sk_shm_init(dp->shm_mz->addr, dp->shm_mz->len, &sc);
	if (dp->shm == NULL)
		return fail(dp, -EINVAL, "seckill.max_items: the arena refuses its layout");
	rc = setup_items(dp);
	if (rc != 0)
		return rc;

	dp->sk_conf.auth = cfg->auth;
	dp->sk_conf.token_skew_s = cfg->token_skew_s;
	dp->sk_conf.key = dp->token_key;
	if (limits) {
		rl_size = sk_ratelimit_memsize(&rlc);
		if (rl_size < 0)
			return fail(dp, -EINVAL,
				    "seckill.global_rate: the rate limiter refuses these limits");
	}
	for (unsigned i = 0; i < dp->nb_lcores; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->lcore_ids[i]);

		dp->orders[i] = sk_order_ring_create(i, cfg->order_ring, socket);
		if (dp->orders[i] == NULL)
			return fail(dp, -rte_errno,
				    "seckill.order_ring: cannot create the ring of %u records of "
				    "lcore %u: %s",
				    cfg->order_ring, dp->lcore_ids[i], rte_strerror(rte_errno));
		if (limits) {
			void *mem = rte_zmalloc_socket("sk_ratelimit", (size_t)rl_size,
						       RTE_CACHE_LINE_SIZE, socket);

			if (mem == NULL)
				return fail(dp, -ENOMEM,
					    "seckill.ip_slots: lcore %u: no memory for a %zd-byte "
					    "rate limiter",
					    dp->lcore_ids[i], rl_size);
			dp->rl[i] = sk_ratelimit_init(mem, (size_t)rl_size, &rlc);
			if (dp->rl[i] == NULL) {
				rte_free(mem);
				return fail(dp, -EINVAL,
					    "seckill.global_rate: the rate limiter refuses these "
					    "limits");
			}
		}
		dp->seckill[i] = rte_zmalloc_socket("sk_seckill", sizeof(*dp->seckill[i]),
						    RTE_CACHE_LINE_SIZE, socket);
		if (dp->seckill[i] == NULL)
			return fail(dp, -ENOMEM, "lcore %u: out of memory", dp->lcore_ids[i]);
		rc = sk_seckill_lcore_init(dp->seckill[i], dp->shm, i, dp->orders[i], &dp->sk_conf,
					   dp->rl[i], rte_get_tsc_hz());
		if (rc != 0)
			return fail(dp, rc,
				    "seckill.auth: lcore %u: the buy path refuses its "
				    "settings",
				    dp->lcore_ids[i]);
	}
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
		return fail(dp, -EINVAL,
			    "dataplane.mbufs: %u is too small: queues and caches hold %" PRIu64
			    " at idle",
			    cfg->mbufs, need);

	mss = cfg->mss ? cfg->mss : 1460;
	room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM, (uint32_t)mss + 128u);
	dp->pool = rte_pktmbuf_pool_create("sk_mbuf", cfg->mbufs, cfg->mbuf_cache, 0,
					   (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
					   dp->ports[0].socket);
	if (dp->pool == NULL)
		return fail(dp, -rte_errno, "dataplane.mbufs: cannot create a pool of %u mbufs: %s",
			    cfg->mbufs, rte_strerror(rte_errno));

	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		struct sk_port *p = &dp->ports[i];

		rc = sk_port_start(&cfg->ports[i], p, dp->pool, dp->err, sizeof(dp->err));
		if (rc != 0)
			return rc;
		if (p->dispatch) {
			dp->disp[i] = sk_dispatch_create(p->port_id, p->owner, dp->nb_lcores,
							 cfg->dispatch_ring, p->socket, dp->pool);
			if (dp->disp[i] == NULL)
				return fail(dp, -rte_errno,
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

	sk_net_conf_defaults(&net_defaults);

	for (unsigned i = 0; i < dp->nb_lcores; i++) {
		unsigned id = dp->lcore_ids[i];
		int socket = (int)rte_lcore_to_socket_id(id);
		struct sk_lcore *lc;

		lc = rte_zmalloc_socket("sk_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE, socket);
		if (lc == NULL)
			return fail(dp, -ENOMEM, "lcore %u: out of memory", id);
		dp->lcores[i] = lc;
		lc->lcore_id = id;
		lc->index = i;
		lc->burst = cfg->burst;
		lc->idle_sleep_us = cfg->idle_sleep_us;
		lc->idle_after_tsc = rte_get_tsc_hz() / 1000000 * cfg->idle_after_us;
		lc->stop = &stop_flag;
		ac.lcore_id = id;
		ac.socket = socket;
		ac.seckill = dp->seckill[i];
		ac.ack_durable = cfg->ack == SK_CONFIG_ACK_DURABLE;
		ac.ack_wait_ms = cfg->ack_wait_ms;
		/* One parked request per connection; twice that for connections
		 * closed and reused within the wait. */
		ac.park_slots = 2 * (cfg->max_conns ? cfg->max_conns : net_defaults.max_conns) *
				cfg->nb_ports;
		lc->app = sk_app_create(&ac);
		if (lc->app == NULL)
			return fail(dp, -rte_errno,
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
			lp->poll_nic = !port->dispatch || port->owner == i;
			lp->queue = port->dispatch ? 0 : (uint16_t)i;
			lp->stats = &lc->stats;
			net_conf(dp, port, lc, &nc);
			lp->net = sk_net_lcore_create(&nc, id, dp->pool, socket, sk_app_ops(),
						      lc->app);
			if (lp->net == NULL)
				return fail(
					dp, -rte_errno,
					"tcp: the TCP stack refuses the [tcp] settings of port%u "
					"on lcore %u: %s",
					p, id, rte_strerror(rte_errno));
			lc->nb_ports = p + 1;
		}
	}
	return 0;
}

static void
dataplane_free(struct dataplane *dp)
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
	rte_memzone_free(dp->shm_mz);
	dp->shm_mz = NULL;
	dp->shm = NULL;
	sk_token_key_free(dp->token_key);
	dp->token_key = NULL;
}

/* ------------------------------------------------------------------------ */
/* Run                                                                       */
/* ------------------------------------------------------------------------ */

static void
print_ready(const struct dataplane *dp)
{
	printf(PROG ": ready lcores=%u", dp->nb_lcores);
	for (uint16_t i = 0; i < dp->cfg.nb_ports; i++) {
		const struct sk_port *p = &dp->ports[i];
		const struct sk_config_port *pc = &dp->cfg.ports[i];
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
		printf(" port%u=%s mac=%s addr=%u.%u.%u.%u/%u mode=%s queues=%u", i, p->name, mac,
		       pc->addr >> 24, (pc->addr >> 16) & 255, (pc->addr >> 8) & 255,
		       pc->addr & 255, pc->prefix,
		       p->dispatch     ? "dispatch"
		       : p->rss	       ? "rss"
		       : p->nb_rxq > 1 ? "spread"
				       : "direct",
		       p->nb_rxq);
	}
	printf(" mbufs=%u mbuf_idle=%u items=%u auth=%s ack=%s\n", dp->pool->size,
	       rte_mempool_in_use_count(dp->pool), atomic_load(&dp->shm->nitems),
	       dp->cfg.auth ? "on" : "off",
	       dp->cfg.ack == SK_CONFIG_ACK_DURABLE ? "durable" : "queued");
	fflush(stdout);
}

static int
run(struct dataplane *dp)
{
	struct sk_telemetry_src tsrc;
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
		return fail(dp, -errno, "tcp.syncookie_secret: no random secret: %s",
			    strerror(errno));
	rc = check_limits(dp);
	if (rc == 0)
		rc = setup_seckill(dp);
	if (rc == 0)
		rc = setup_ports_and_pool(dp);
	if (rc == 0)
		rc = setup_lcores(dp);
	if (rc != 0)
		return rc;

	memset(&tsrc, 0, sizeof(tsrc));
	tsrc.nb_lcores = dp->nb_lcores;
	tsrc.lcores = dp->lcores;
	tsrc.nb_ports = dp->cfg.nb_ports;
	memcpy(tsrc.disp, dp->disp, sizeof(tsrc.disp));
	tsrc.pool = dp->pool;
	tsrc.mbuf_idle = rte_mempool_in_use_count(dp->pool);
	tsrc.tsc_hz = rte_get_tsc_hz();
	tsrc.start_tsc = rte_rdtsc();
	tsrc.seckill = dp->seckill;
	tsrc.shm = dp->shm;
	rc = sk_telemetry_start(&tsrc);
	if (rc != 0)
		fprintf(stderr, PROG ": warning: telemetry commands unavailable: %s\n",
			rte_strerror(-rc));

	print_ready(dp);

	for (i = 1; i < dp->nb_lcores; i++)
		rte_eal_remote_launch(sk_lcore_main, dp->lcores[i], dp->lcore_ids[i]);
	sk_lcore_main(dp->lcores[0]); /* the main lcore is lcore index 0 */
	rte_eal_mp_wait_lcore();

	/* Lcores are gone: push out the RSTs still queued for dispatch owners. */
	for (unsigned p = 0; p < dp->cfg.nb_ports; p++) {
		struct rte_mbuf *scratch[SK_LCORE_BURST_MAX];

		if (dp->disp[p] != NULL)
			sk_dispatch_tx_drain(dp->disp[p], scratch, SK_LCORE_BURST_MAX);
	}
	{
		uint64_t req = 0, conns = 0, won = 0, queued = 0;

		for (i = 0; i < dp->nb_lcores; i++) {
			req += sk_app_stats(dp->lcores[i]->app)->requests;
			conns += sk_app_stats(dp->lcores[i]->app)->aborted;
			won += sk_shm_stat_read(
				&sk_shm_lstats(dp->shm, i)->buy_outcome[SK_SECKILL_WON]);
			queued += rte_ring_count(dp->orders[i]);
		}
		/* Without a control plane the orders stay in the rings: say so. */
		printf(PROG ": stopped requests=%" PRIu64 " connections_reset=%" PRIu64
			    " orders=%" PRIu64 " orders_undrained=%" PRIu64 "\n",
		       req, conns, won, queued);
		fflush(stdout);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *config = NULL;
	struct dataplane *dp;
	struct sigaction sa;
	int rc, status = 1;

	rc = parse_app_args(argc, argv, &config);
	if (rc != 0) {
		usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : 2;
	}
	dp = calloc(1, sizeof(*dp));
	if (dp == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	rc = sk_config_load(&dp->cfg, config, dp->err, sizeof(dp->err));
	if (rc == 0) {
		dp->start_ns = sk_clock_ns(CLOCK_REALTIME);
		rc = load_token_key(dp);
	}
	if (rc != 0) {
		fprintf(stderr, PROG ": %s\n", dp->err);
		sk_token_key_free(dp->token_key);
		free(dp);
		return 1;
	}
	/* Before the EAL: a signal during set-up still ends in a clean stop. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* [dataplane] lcores stands in for -l when the command line has none. */
	char **eal_argv = argv;
	int eal_argc = argc;
	char *lopt[] = {(char *)"-l", dp->cfg.lcores};

	if (dp->cfg.lcores[0] != '\0') {
		if (eal_has_lcores(argc, argv)) {
			fprintf(stderr, PROG ": note: dataplane.lcores ignored, the EAL options "
					     "set the lcores\n");
		} else {
			eal_argv = calloc((size_t)argc + 3, sizeof(*eal_argv));
			if (eal_argv == NULL) {
				fprintf(stderr, PROG ": out of memory\n");
				sk_token_key_free(dp->token_key);
				free(dp);
				return 1;
			}
			eal_argv[0] = argv[0];
			eal_argv[1] = lopt[0];
			eal_argv[2] = lopt[1];
			memcpy(eal_argv + 3, argv + 1, sizeof(*argv) * (size_t)(argc - 1));
			eal_argc = argc + 2;
		}
	}
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, PROG ": EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		if (eal_argv != argv)
			free(eal_argv);
		sk_token_key_free(dp->token_key);
		free(dp);
		return 1;
	}
	rc = run(dp);
	if (rc != 0)
		fprintf(stderr, PROG ": %s\n", dp->err);
	else
		status = 0;
	dataplane_free(dp);
	rte_eal_cleanup();
	if (eal_argv != argv)
		free(eal_argv);
	free(dp);
	return status;
}
