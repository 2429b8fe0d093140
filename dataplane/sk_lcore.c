/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_lcore.c - the run-to-completion loop (see sk_lcore.h).
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "sk_lcore.h"

/* port_rx - one burst from the NIC queue and/or the dispatch ring of @p
 * into the lcore's stack. Returns the frames moved. */
static inline unsigned
port_rx(struct sk_lcore *lc, struct sk_lcore_port *p, struct rte_mbuf **pkts, uint64_t now)
{
	unsigned work = 0;
	uint16_t n;

	if (p->poll_nic) {
		uint64_t t = rte_rdtsc();

		n = rte_eth_rx_burst(p->port_id, p->queue, pkts, lc->burst);
		lc->stats.pmd_tsc += rte_rdtsc() - t;
		work += n;
		if (p->disp != NULL && n > 0)
			n = sk_dispatch_split(p->disp, pkts, n);
		if (n > 0) {
			lc->stats.rx_pkts += n;
			sk_net_rx(p->net, pkts, n, now);
		}
	}
	if (p->disp != NULL) {
		n = sk_dispatch_dequeue(p->disp, lc->index, pkts, lc->burst);
		if (n > 0) {
			work += n;
			lc->stats.rx_pkts += n;
			sk_net_rx(p->net, pkts, n, now);
		}
	}
	return work;
}

/* port_tx - timers, then flush the stack's TX; the owner of a dispatched
 * port also sends what the other lcores queued. Returns the frames sent. */
static inline unsigned
port_tx(struct sk_lcore *lc, struct sk_lcore_port *p, struct rte_mbuf **scratch, uint64_t now)
{
	unsigned sent;

	sk_net_timers(p->net, now);
	sent = sk_net_tx_flush(p->net);
	if (p->disp != NULL && p->poll_nic) {
		uint64_t t = rte_rdtsc();

		sent += sk_dispatch_tx_drain(p->disp, scratch, lc->burst);
		lc->stats.pmd_tsc += rte_rdtsc() - t;
	}
	lc->stats.tx_pkts += sent;
	return sent;
}

uint16_t
sk_lcore_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sk_lcore_port *p = ctx;
	uint64_t t = rte_rdtsc();
	uint16_t sent = rte_eth_tx_burst(p->port_id, p->queue, pkts, n);

	p->stats->pmd_tsc += rte_rdtsc() - t;
	return sent;
}

/* account - count the pass as busy or idle; sleep after a long idle spell. */
static inline void
account(struct sk_lcore *lc, uint64_t t0, uint64_t pmd0, unsigned work, uint64_t *last_work)
{
	uint64_t t1 = rte_rdtsc();

	lc->stats.passes++;
	if (work != 0) {
		lc->stats.busy_passes++;
		lc->stats.busy_tsc += t1 - t0;
		lc->stats.busy_pmd_tsc += lc->stats.pmd_tsc - pmd0;
		*last_work = t1;
		return;
	}
	if (lc->idle_sleep_us != 0 && t1 - *last_work > lc->idle_after_tsc) {
		rte_delay_us_sleep(lc->idle_sleep_us); /* idle only: never under load */
		lc->stats.sleeps++;
		t1 = rte_rdtsc();
	}
	lc->stats.idle_tsc += t1 - t0;
}

/* shutdown - reset every connection and push the RSTs out (a few passes:
 * on_close and dispatch rings need one more flush each). */
static void
shutdown_lcore(struct sk_lcore *lc, struct rte_mbuf **scratch)
{
	sk_app_abort_all(lc->app);
	for (int pass = 0; pass < 3; pass++)
		for (unsigned i = 0; i < lc->nb_ports; i++)
			port_tx(lc, &lc->port[i], scratch, rte_rdtsc());
}

int
sk_lcore_main(void *arg)
{
	struct sk_lcore *lc = arg;
	struct rte_mbuf *pkts[SK_LCORE_BURST_MAX];
	uint64_t last_work = rte_rdtsc();

	while (!atomic_load_explicit(lc->stop, memory_order_relaxed)) {
		uint64_t t0 = rte_rdtsc(), pmd0 = lc->stats.pmd_tsc;
		unsigned work = 0;

		sk_app_poll(lc->app, t0); /* the pass's clock first: handlers read it */
		for (unsigned i = 0; i < lc->nb_ports; i++)
			work += port_rx(lc, &lc->port[i], pkts, t0);
		for (unsigned i = 0; i < lc->nb_ports; i++)
			work += port_tx(lc, &lc->port[i], pkts, t0);
		account(lc, t0, pmd0, work, &last_work);
	}
	shutdown_lcore(lc, pkts);
	return 0;
}
