/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The per-lcore run-to-completion loop of the dataplane.
 *
 * One pass: set the app's clock and let it do its time-driven work
 * (sk_app_poll); for every port, take a burst from the NIC queue this lcore
 * owns (or from its software-dispatch ring) and give it to the lcore's TCP
 * stack for that port (which calls HTTP and the routes through sk_app); run
 * the timers; flush TX on every port. A
 * pass that moved no packet counts as idle, any other as busy; the cycles
 * of both are counted, so busy cycles per request can be read from the
 * telemetry under load.
 *
 * The loop ends when the stop flag (set by the SIGINT/SIGTERM handler) is
 * seen; the lcore then resets its connections and flushes the RSTs.
 *
 * Thread-safety: a struct sk_lcore is written only by its lcore once
 * launched; sk_lcore_stats() may be read by any thread.
 */
#ifndef SK_LCORE_H
#define SK_LCORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sk_app.h"
#include "sk_common.h"
#include "sk_config.h"
#include "sk_dispatch.h"
#include "sk_net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest RX burst. */
#define SK_LCORE_BURST_MAX 256

/** Loop counters of one lcore. */
struct sk_lcore_stats {
	uint64_t rx_pkts;      /**< frames taken from NIC queues and dispatch rings */
	uint64_t tx_pkts;      /**< frames handed to the NIC (or to the owner's ring) */
	uint64_t passes;       /**< loop passes */
	uint64_t busy_passes;  /**< passes that moved at least one frame */
	uint64_t busy_tsc;     /**< TSC cycles of busy passes */
	uint64_t idle_tsc;     /**< TSC cycles of idle passes (sleeps included) */
	uint64_t sleeps;       /**< idle sleeps taken (idle_sleep_us) */
	uint64_t pmd_tsc;      /**< TSC cycles inside rte_eth_rx/tx_burst (part of busy/idle):
				    large for net_tap, whose bursts are system calls */
	uint64_t busy_pmd_tsc; /**< the part of pmd_tsc spent in busy passes: busy_tsc -
				    busy_pmd_tsc is the dataplane's own work */
} sk_cache_aligned;

/** One port as seen by one lcore. */
struct sk_lcore_port {
	struct sk_net_lcore *net;     /**< this lcore's TCP stack on the port */
	struct sk_dispatch *disp;     /**< dispatch mode: the port's dispatch, else NULL */
	uint16_t port_id;	      /**< DPDK port */
	uint16_t queue;		      /**< RX/TX queue polled when poll_nic */
	bool poll_nic;		      /**< this lcore polls the NIC queue */
	struct sk_lcore_stats *stats; /**< the owning lcore's counters (for sk_lcore_tx) */
};

/** State of one lcore: built by main, then owned by the lcore. */
struct sk_lcore {
	unsigned lcore_id;	 /**< EAL lcore id */
	unsigned index;		 /**< 0..nb_lcores-1 (queue / dispatch index) */
	uint16_t burst;		 /**< RX burst size */
	uint16_t nb_ports;	 /**< entries of @c port */
	uint32_t idle_sleep_us;	 /**< 0: never sleep */
	uint64_t idle_after_tsc; /**< sleep only after this long without work */
	const atomic_bool *stop; /**< set by the signal handler */
	struct sk_app *app;	 /**< the lcore's application glue */
	struct sk_lcore_port port[SK_CONFIG_MAX_PORTS];
	struct sk_lcore_stats stats;
};

/**
 * sk_lcore_tx - the sk_net_conf.tx_fn of a port the lcore transmits on
 * directly: rte_eth_tx_burst() on (port_id, queue) of the struct
 * sk_lcore_port @p ctx, with the cycles counted in pmd_tsc. Same contract as
 * rte_eth_tx_burst().
 */
uint16_t sk_lcore_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n);

/**
 * sk_lcore_main - the loop; an lcore_function_t for rte_eal_remote_launch()
 * (the main lcore calls it directly). Returns 0 after the stop flag was seen
 * and the lcore's connections were reset.
 * @param arg  a struct sk_lcore
 */
int sk_lcore_main(void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SK_LCORE_H */
