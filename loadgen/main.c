/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-loadgen - HTTP/1.1 load at packet rate over the project's TCP
 * stack, on one DPDK port, one stack per EAL lcore (design §2).
 *
 *   seckill-loadgen -l 0 --file-prefix lg --no-pci \
 *       --vdev net_memif0,role=client,socket=/run/seckill-sbx/memif.sock \
 *       -- --server 198.18.0.1 --conns 64 --depth 4 --duration 5 --json
 *
 * main() checks the options (before the EAL: a usage error costs no
 * hugepage; their split over the lcores right after it), starts the EAL and
 * the port (a queue pair per lcore), mints the tokens, runs one load per
 * lcore (lg_stacks.c, lg_load.c) and prints the reports of their sum
 * (lg_stats.c). docs/loadgen.md is the
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
#include "lg_stacks.h"
#include "lg_stats.h"
#include "lg_tokens.h"

#define EXIT_ERRORS  1
#define EXIT_USAGE   2
#define EXIT_RUNTIME 3

/* Per stack: enough for its RX/TX rings (1024 each), the stack's TX queue
 * and the mempool cache, with room for the frames in flight. */
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

/* link_down - the link did not come up: say so, and what a multi-queue
 * memif client needs from its server. */
static void
link_down(const struct lg_port *port, uint32_t wait_ms)
{
	if (port->nb_queues > 1 && strcmp(port->driver, "net_memif") == 0)
		sk_logf(SK_LOG_ERROR, "startup",
			"port=%u device=%s wait_ms=%u queues=%u msg=\"link down: the memif "
			"server must have at least %u queue pairs (seckill-dataplane: one per "
			"dataplane lcore)\"",
			port->port_id, port->name, wait_ms, port->nb_queues, port->nb_queues);
	else
		sk_logf(SK_LOG_ERROR, "startup", "port=%u device=%s wait_ms=%u msg=\"link down\"",
			port->port_id, port->name, wait_ms);
}

int
main(int argc, char **argv)
{
	static struct lg_opts o;
	static struct lg_stats sum;
	struct lg_tokens tokens = {0};
	struct lg_port port = {.port_id = UINT16_MAX};
	struct lg_stacks stacks = {0};
	struct lg_lcore_report *lc = NULL;
	struct lg_tcp_errors tcp;
	struct lg_run_info run;
	char err[256];
	int dash = split_args(argc, argv), rc, status = EXIT_RUNTIME;
	unsigned n;

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
	n = rte_lcore_count();
	if (lg_stacks_check(&o, n, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "usage", "lcores=%u err=%s", n, err);
		status = EXIT_USAGE;
		goto out;
	}
	if (n > 1)
		sk_logf(SK_LOG_NOTICE, "startup",
			"lcores=%u main_lcore=%u msg=\"one stack per lcore, on its own queue "
			"pair\"",
			n, rte_get_main_lcore());
	lc = calloc(n, sizeof(*lc));
	if (lc == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=\"out of memory\"");
		goto out;
	}
	if (o.mix[LG_REQ_BUY_JWT] != 0 &&
	    lg_tokens_mint(&tokens, o.secret_file, o.tokens, o.user_base, o.item, o.token_ttl_s,
			   o.gate_pct, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (lg_port_open(o.port_id, (uint16_t)n, LG_MBUFS * n, &port, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (n > 1 && strcmp(port.driver, "net_memif") != 0)
		sk_logf(SK_LOG_WARN, "startup",
			"driver=%s lcores=%u msg=\"no RSS on the loadgen's port: each stack reads "
			"its own queue, so the peer must answer a flow on the queue it came in on "
			"(a multi-queue memif does)\"",
			port.driver, n);
	if (lg_port_wait_link(&port, o.wait_ms) != 0) {
		link_down(&port, o.wait_ms);
		goto out;
	}
	if (lg_stacks_create(&stacks, &o, &port, &tokens, &stop_flag, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	if (lg_stacks_run(&stacks, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	lg_stacks_report(&stacks, &sum, &tcp, &run, lc);
	lg_stats_summary(&sum, &tcp, &run, stderr);
	if (o.json)
		lg_stats_json(&sum, &tcp, &run, stdout);
	{
		uint64_t sent = lg_stats_sum(sum.sent, LG_REQ__COUNT);
		uint64_t answered = lg_stats_sum(sum.answered, LG_REQ__COUNT);

		/* an attack is reported, not judged: the legitimate clients are */
		status = !run.legit || (lg_stats_errors(&sum, &tcp) == 0 && sent == answered &&
					sent > 0)
				 ? 0
				 : EXIT_ERRORS;
	}
out:
	lg_stacks_free(&stacks);
	lg_port_close(&port);
	lg_tokens_free(&tokens);
	free(lc);
	rte_eal_cleanup();
	return status;
}
