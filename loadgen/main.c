/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-loadgen - HTTP/1.1 load at packet rate over the project's TCP
 * stack, on one DPDK port and one lcore (design §2, issue 9).
 *
 *   seckill-loadgen -l 0 --file-prefix lg --no-pci \
 *       --vdev net_memif0,role=client,socket=/run/seckill-sbx/memif.sock \
 *       -- --server 198.18.0.1 --conns 64 --depth 4 --duration 5 --json
 *
 * main() checks the options (before the EAL: a usage error costs no
 * hugepage), starts the EAL and the port, mints the tokens, runs the load
 * (lg_load.c) and prints the reports (lg_stats.c). docs/loadgen.md is the
 * manual. Its log lines (errors, DPDK's lines) are logfmt lines on stderr
 * (sk_logfmt.h, docs/logs.md); the progress lines and the reports keep
 * their own form.
 *
 * Exit status: 0 every request answered and no error; 1 errors or
 * unanswered requests; 2 usage; 3 could not run (EAL, port, link, ARP).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "sk_logfmt.h"

#include "lg_load.h"
#include "lg_opts.h"
#include "lg_port.h"
#include "lg_stats.h"
#include "lg_tokens.h"

#define EXIT_ERRORS  1
#define EXIT_USAGE   2
#define EXIT_RUNTIME 3

/* Enough for the RX/TX rings (1024 each), the stack's TX queue and the
 * mempool cache, with room for the frames in flight. */
#define LG_MBUFS 16383

static atomic_bool stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, true);
}

/* split_args - the index of "--" in @argv (argc if none). */
static int
split_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

int
main(int argc, char **argv)
{
	static struct lg_opts o;
	struct lg_tokens tokens = {0};
	struct lg_port port = {.port_id = UINT16_MAX};
	struct lg_load *load = NULL;
	struct lg_load_env env;
	struct lg_tcp_errors tcp;
	struct lg_run_info run;
	char err[256];
	int dash = split_args(argc, argv), rc, status = EXIT_RUNTIME;

	sk_logfmt_init("seckill-loadgen");
	lg_opts_defaults(&o);
	/* the loadgen's options: argv[dash] plays argv[0] */
	rc = lg_opts_parse(&o, argc - dash, argv + dash, err, sizeof(err));
	if (rc == 1) {
		fputs(lg_opts_usage, stdout);
		return 0;
	}
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "usage", "err=%s", err);
		return EXIT_USAGE;
	}
	sk_logfmt_set_level((enum sk_log_level)o.log_level);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	rc = sk_logfmt_dpdk();
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"cannot route DPDK's log lines\" err=%s",
			strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = rte_eal_init(dash, argv);
	if (rc < 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"EAL init failed\" err=%s",
			rte_strerror(rte_errno));
		return EXIT_RUNTIME;
	}
	if (rte_lcore_count() > 1)
		sk_logf(SK_LOG_NOTICE, "startup",
			"lcores=%u main_lcore=%u msg=\"the load runs on the main lcore only\"",
			rte_lcore_count(), rte_lcore_id());
	if (o.mix[LG_REQ_BUY_JWT] != 0 &&
	    lg_tokens_mint(&tokens, o.secret_file, o.tokens, o.user_base, o.item, o.token_ttl_s,
			   err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (lg_port_open(o.port_id, LG_MBUFS, &port, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (lg_port_wait_link(&port, o.wait_ms) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "port=%u device=%s wait_ms=%u msg=\"link down\"",
			port.port_id, port.name, o.wait_ms);
		goto out;
	}
	env = (struct lg_load_env){
		.port_id = port.port_id,
		.pool = port.pool,
		.mac = port.mac,
		.socket = port.socket,
		.tx_ip_cksum = port.tx_ip_cksum,
		.tx_tcp_cksum = port.tx_tcp_cksum,
		.tokens = &tokens,
		.stop = &stop_flag,
	};
	load = lg_load_create(&o, &env, err, sizeof(err));
	if (load == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (lg_load_run(load, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	lg_load_tcp(load, &tcp);
	lg_load_info(load, &run);
	lg_stats_summary(lg_load_stats(load), &tcp, &run, stderr);
	if (o.json)
		lg_stats_json(lg_load_stats(load), &tcp, &run, stdout);
	{
		const struct lg_stats *s = lg_load_stats(load);
		uint64_t sent = lg_stats_sum(s->sent, LG_REQ__COUNT);
		uint64_t answered = lg_stats_sum(s->answered, LG_REQ__COUNT);

		/* an attack is reported, not judged: the legitimate clients are */
		status = !run.legit || (lg_stats_errors(s, &tcp) == 0 && sent == answered &&
					sent > 0)
				 ? 0
				 : EXIT_ERRORS;
	}
out:
	lg_load_free(load);
	lg_port_close(&port);
	lg_tokens_free(&tokens);
	rte_eal_cleanup();
	return status;
}
