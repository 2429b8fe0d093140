/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * How the frames of one port reach the lcores: the choice of queue layout
 * from the [portN] section, the lcore count and what the PMD offers. Pure
 * logic (no EAL, no device), so that every port kind can be tested.
 *
 * Every lcore owns one TCP stack per port, so all segments of a flow must
 * reach the lcore that owns the connection. Four layouts:
 *  - direct: a single lcore; one queue pair.
 *  - rss: one queue pair per lcore; the NIC hashes the 4-tuple with the
 *    symmetric Toeplitz key into a redirection table (the real-NIC path).
 *  - spread: one queue pair per lcore, no hashing by us: the other side of
 *    the port keeps each flow on one queue (a memif peer sends a flow on
 *    the queue its own lcore owns; the kernel picks a multi-queue tap's
 *    queue per flow). The lcore that receives a flow owns it; no hand-off.
 *  - dispatch: one RX/TX queue pair polled by one lcore (the owner), which
 *    spreads the frames over the lcores in software (sk_dispatch.h).
 *
 * rx_queues = auto picks rss when the PMD has a redirection table, the
 * TCP/IPv4 hash and a queue pair per lcore; else spread when the PMD is
 * steered by its peer (net_memif) and has a queue pair per lcore; else
 * dispatch. rx_queues = 1 forces dispatch; rx_queues = <lcores> forces one
 * queue pair per lcore: rss if allowed (rss = on) and possible, else spread,
 * on the operator's word that the device keeps each flow on one queue.
 *
 * Thread-safety: no state; callable from any thread.
 */
#ifndef SK_PORT_LAYOUT_H
#define SK_PORT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>

#include "sk_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** RSS hash functions the rss layout needs (TCP/IPv4 4-tuple, IPv4 2-tuple): one is enough. */
#define SK_PORT_RSS_HF (RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_IPV4)

/** The queue layout of a port (see the file comment). */
enum sk_port_mode {
	SK_PORT_DIRECT = 0, /**< one lcore, one queue pair */
	SK_PORT_RSS,	    /**< a queue pair per lcore, NIC RSS with the symmetric key */
	SK_PORT_SPREAD,	    /**< a queue pair per lcore, the peer keeps a flow on one queue */
	SK_PORT_DISPATCH,   /**< one queue pair, software dispatch to the lcores */
};

/** What the PMD offers, from rte_eth_dev_info (the fields the choice reads). */
struct sk_port_caps {
	const char *driver;		 /**< driver name ("net_memif", "net_ice", ...) */
	uint16_t max_rx_queues;		 /**< dev_info.max_rx_queues */
	uint16_t max_tx_queues;		 /**< dev_info.max_tx_queues */
	uint16_t reta_size;		 /**< dev_info.reta_size; 0: no redirection table */
	uint64_t flow_type_rss_offloads; /**< dev_info.flow_type_rss_offloads */
};

/** The choice for one port. */
struct sk_port_layout {
	enum sk_port_mode mode;
	uint16_t nb_rxq; /**< RX queues to configure */
	uint16_t nb_txq; /**< TX queues to configure (same as nb_rxq) */
	uint16_t owner;	 /**< dispatch: lcore index polling queue 0 (N of portN mod lcores) */
};

/**
 * sk_port_peer_steered - true if the driver's other side, not a hash of
 * ours, picks the queue of every frame and keeps a flow on one queue
 * (net_memif: the peer sends on a queue of its choosing).
 * @param driver  driver name; NULL gives false
 */
bool sk_port_peer_steered(const char *driver);

/**
 * sk_port_choose_layout - the layout of port @p index.
 * @param[in]  pc         the [portN] section (rx_queues, rss)
 * @param[in]  index      N of [portN] (messages, dispatch owner)
 * @param[in]  nb_lcores  lcores running the loop, >= 1
 * @param[in]  caps       what the PMD offers
 * @param[out] out        the layout, written on success only
 * @param[out] err        one-line message naming the key, on error
 * @param[in]  errlen     bytes at @p err
 * @return 0, or -EINVAL when the configured layout is impossible:
 *   rx_queues neither auto, 1 nor the lcore count, or rx_queues = lcores on
 *   a PMD with fewer RX or TX queues than lcores.
 */
int sk_port_choose_layout(const struct sk_config_port *pc, uint16_t index, unsigned nb_lcores,
			  const struct sk_port_caps *caps, struct sk_port_layout *out, char *err,
			  size_t errlen);

/** sk_port_mode_name - "direct", "rss", "spread" or "dispatch". */
const char *sk_port_mode_name(enum sk_port_mode mode);

#ifdef __cplusplus
}
#endif

#endif /* SK_PORT_LAYOUT_H */
