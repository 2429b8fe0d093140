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
 * Every line it writes is a logfmt log line on stderr (sk_logfmt.h,
 * docs/logs.md), DPDK's own included; --help alone prints plain text on
 * stdout. Exit status: 0 after a clean stop, 1 on a start-up error (one
 * level=error line naming the config key), 2 on a usage error.
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
#include "sk_logfmt.h"
#include "sk_net.h"
#include "sk_port.h"
#include "sk_preheat.h"
#include "sk_seckill.h"
#include "sk_shm.h"
#include "sk_dataplane.h"
#include "sk_telemetry.h"

/* Set by the signal handler; the lcores read it once per pass. */
static atomic_bool stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, true);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [EAL options] -- --config FILE [--log-level LEVEL]\n"
		   "  --config FILE      INI configuration (see config/seckill.ini)\n"
		   "  --log-level LEVEL  debug, info (default), notice, warn, error or crit:\n"
		   "                     the lowest level of the log lines written (docs/logs.md)\n"
		   "  --help             this text\n");
}

/*
 * parse_app_args - the options after "--" (--log-level takes effect at
 * once). Returns 0, 1 for --help, or -EINVAL after an error line.
 */
static int
parse_app_args(int argc, char **argv, const char **config)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"log-level", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum sk_log_level lv;
	int i, opt;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	if (i == argc) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"missing '-- --config FILE' (see -- --help)\"");
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
		case 'L':
			if (sk_logfmt_level_parse(optarg, &lv) != 0) {
				sk_logf(SK_LOG_ERROR, "usage",
					"option=--log-level value=%s msg=\"not a level: debug, "
					"info, "
					"notice, warn, error or crit\"",
					optarg);
				argv[i] = (char *)"--";
				return -EINVAL;
			}
			sk_logfmt_set_level(lv);
			break;
		case 'h':
			argv[i] = (char *)"--";
			return 1;
		default:
			sk_logf(SK_LOG_ERROR, "usage",
				"option=%s msg=\"unknown or incomplete option (see -- --help)\"",
				argv[i + optind - 1]);
			argv[i] = (char *)"--";
			return -EINVAL;
		}
	}
	if (optind < argc - i) {
		sk_logf(SK_LOG_ERROR, "usage", "arg=%s msg=\"unexpected argument (see -- --help)\"",
			argv[i + optind]);
		argv[i] = (char *)"--";
		return -EINVAL;
	}
	argv[i] = (char *)"--";
	if (*config == NULL) {
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"missing --config FILE (see -- --help)\"");
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
/* Run                                                                       */
/* ------------------------------------------------------------------------ */

/* log_ready - one "port" line per port, then the "ready" line. */
static void
log_ready(const struct dataplane *dp)
{
	for (uint16_t i = 0; i < dp->cfg.nb_ports; i++) {
		const struct sk_port *p = &dp->ports[i];
		const struct sk_config_port *pc = &dp->cfg.ports[i];
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
		sk_logf(SK_LOG_INFO, "port",
			"port=%u device=%s mac=%s addr=%u.%u.%u.%u/%u mode=%s queues=%u", i,
			p->name, mac, pc->addr >> 24, (pc->addr >> 16) & 255, (pc->addr >> 8) & 255,
			pc->addr & 255, pc->prefix, sk_port_mode_name(p->mode), p->nb_rxq);
	}
	if (dp->tls_certs != NULL)
		sk_logf(SK_LOG_INFO, "tls",
			"port=%u certs=%u min_version=%s plain=%s max_handshakes=%u buffers=%u",
			dp->cfg.tls_port, dp->cfg.tls_cert.n,
			dp->cfg.tls_min_version == 1 ? "1.3" : "1.2",
			dp->cfg.tls_plain == SK_CONFIG_PLAIN_OFF	? "off"
			: dp->cfg.tls_plain == SK_CONFIG_PLAIN_REDIRECT ? "redirect"
									: "serve",
			dp->cfg.tls_max_handshakes, dp->cfg.tls_buffers);
	sk_logf(SK_LOG_NOTICE, "ready",
		"lcores=%u ports=%u mbufs=%u mbuf_idle=%u items=%u auth=%s ack=%s", dp->nb_lcores,
		dp->cfg.nb_ports, dp->pool->size, rte_mempool_in_use_count(dp->pool),
		atomic_load(&dp->shm->nitems), dp->cfg.auth ? "on" : "off",
		dp->cfg.ack == SK_CONFIG_ACK_DURABLE ? "durable" : "queued");
}

static int
run(struct dataplane *dp)
{
	struct sk_telemetry_src tsrc;
	unsigned i;
	int rc;

	rc = sk_dp_setup(dp);
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
	tsrc.tls = dp->tls_certs != NULL ? dp->tls : NULL;
	rc = sk_telemetry_start(&tsrc);
	if (rc != 0)
		sk_logf(SK_LOG_WARN, "telemetry", "msg=\"telemetry commands unavailable\" err=%s",
			rte_strerror(-rc));

	log_ready(dp);

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
		sk_logf(queued > 0 ? SK_LOG_WARN : SK_LOG_NOTICE, "shutdown",
			"msg=stopped requests=%" PRIu64 " connections_reset=%" PRIu64
			" orders=%" PRIu64 " orders_undrained=%" PRIu64,
			req, conns, won, queued);
	}
	return 0;
}

/*
 * eal_args - the EAL's argument vector: @argv itself, or, when the config
 * names the lcores ([dataplane] lcores) and the command line does not,
 * a copy with "-l LCORES" put in front (*out then differs from @argv and is
 * the caller's to free). 0 or -ENOMEM.
 */
static int
eal_args(struct dataplane *dp, int argc, char **argv, char ***out, int *out_argc)
{
	char **v;

	*out = argv;
	*out_argc = argc;
	if (dp->cfg.lcores[0] == '\0')
		return 0;
	if (eal_has_lcores(argc, argv)) {
		sk_logf(SK_LOG_NOTICE, "config",
			"key=dataplane.lcores msg=\"ignored: the EAL options set the lcores\"");
		return 0;
	}
	v = calloc((size_t)argc + 3, sizeof(*v));
	if (v == NULL)
		return sk_dp_fail(dp, -ENOMEM, "out of memory");
	v[0] = argv[0];
	v[1] = (char *)"-l";
	v[2] = dp->cfg.lcores;
	memcpy(v + 3, argv + 1, sizeof(*argv) * (size_t)(argc - 1));
	*out = v;
	*out_argc = argc + 2;
	return 0;
}

int
main(int argc, char **argv)
{
	const char *config = NULL;
	struct dataplane *dp;
	struct sigaction sa;
	char **eal_argv = argv;
	int rc, eal_argc = argc;
	const char *phase = "config";
	bool eal_up = false;

	sk_logfmt_init(PROG);
	rc = parse_app_args(argc, argv, &config);
	if (rc != 0) {
		if (rc > 0)
			usage(stdout);
		return rc > 0 ? 0 : 2;
	}
	dp = calloc(1, sizeof(*dp));
	if (dp == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=\"out of memory\"");
		return 1;
	}
	dp->stop = &stop_flag;
	rc = sk_config_load(&dp->cfg, config, dp->err, sizeof(dp->err));
	if (rc == 0 && dp->cfg.store_alias)
		sk_logf(SK_LOG_NOTICE, "config",
			"key=seckill.store msg=\"deprecated: name the store in [store] path, "
			"which every daemon reads\"");
	if (rc == 0) {
		dp->start_ns = sk_clock_ns(CLOCK_REALTIME);
		rc = sk_dp_load_token_key(dp);
	}
	if (rc != 0)
		goto out;
	/* Before the EAL: a signal during set-up still ends in a clean stop. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = eal_args(dp, argc, argv, &eal_argv, &eal_argc);
	if (rc != 0)
		goto out;
	phase = "startup";
	rc = sk_logfmt_dpdk();
	if (rc != 0) {
		rc = sk_dp_fail(dp, rc, "cannot route DPDK's log lines: %s", strerror(-rc));
		goto out;
	}
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		rc = sk_dp_fail(dp, -rte_errno, "EAL initialisation failed: %s",
				rte_strerror(rte_errno));
		goto out;
	}
	eal_up = true;
	rc = run(dp);

out:
	/* The one teardown: whatever was built, from nothing to everything. */
	sk_dp_free(dp);
	if (eal_up)
		rte_eal_cleanup();
	/* the reason last, after the teardown's own lines */
	if (rc != 0)
		sk_logf(SK_LOG_ERROR, phase, "err=%s", dp->err);
	if (eal_argv != argv)
		free(eal_argv);
	free(dp);
	return rc == 0 ? 0 : 1;
}
