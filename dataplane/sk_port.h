/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Port setup of the dataplane: find or hot-plug the device of a [portN]
 * section, choose its queue layout, program RSS, start and stop it.
 *
 * Queue layout
 * ------------
 * Every lcore owns one TCP stack per port, so all segments of a flow must
 * reach the same lcore:
 *  - RSS mode: the port gets one RX and one TX queue per lcore; lcore i polls
 *    RX queue i and sends on TX queue i. The hash key is the symmetric
 *    Toeplitz key (0x6d5a repeated), so both directions of a flow hash alike,
 *    and the redirection table (RETA) is written and read back.
 *  - Dispatch mode: the port has one RX and one TX queue, owned by one lcore
 *    (sk_port::owner); sk_dispatch spreads the frames over the lcores by
 *    sk_net_flow_hash() and funnels their replies back (sk_dispatch.h).
 * rx_queues = auto picks RSS when the PMD has a RETA, enough queues and the
 * TCP/IPv4 hash; otherwise dispatch. A port with a single lcore is always
 * "direct" (RSS mode with one queue).
 *
 * Every function here runs on the main lcore at start-up or shutdown, never
 * on the fast path. Errors are returned as negative errno with a one-line
 * message that names the config key ("port0.rx_queues: ...").
 */
#ifndef SK_PORT_H
#define SK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

#include "sk_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of the symmetric RSS key written to ports whose PMD reports none. */
#define SK_PORT_RSS_KEY_LEN 40

/** What was decided and set up for one configured port. */
struct sk_port {
	uint16_t index;		   /**< N of [portN] */
	uint16_t port_id;	   /**< DPDK port id */
	int socket;		   /**< NUMA socket of the device (>= 0) */
	uint16_t nb_rxq;	   /**< RX queues configured */
	uint16_t nb_txq;	   /**< TX queues configured */
	uint16_t owner;		   /**< dispatch mode: lcore index polling queue 0 */
	bool dispatch;		   /**< one queue + software dispatch */
	bool rss;		   /**< RSS with the symmetric key is programmed */
	bool hotplugged;	   /**< we probed the device: detach it at the end */
	bool started;		   /**< rte_eth_dev_start() succeeded */
	bool tx_ip_cksum;	   /**< TX IPv4 header checksum offloaded */
	bool tx_tcp_cksum;	   /**< TX TCP checksum offloaded */
	bool rx_cksum;		   /**< RX checksums verified by the NIC */
	uint16_t rx_desc, tx_desc; /**< descriptors per queue (after adjustment) */
	struct rte_ether_addr mac; /**< the port's MAC once set up */
	char name[64];		   /**< DPDK device name */
};

/**
 * sk_port_probe - find the device of @p pc (already probed by the EAL with
 * -a/--vdev, or hot-plugged here with rte_dev_probe()) and decide its
 * queue layout for @p nb_lcores lcores.
 * @param[in]  pc         the [portN] section
 * @param[in]  index      N
 * @param[in]  nb_lcores  lcores running the loop (>= 1)
 * @param[out] port       filled: ids, socket, layout; nothing configured yet
 * @param[out] err        one-line message on error
 * @param[in]  errlen     bytes at @p err
 * @return 0, or -ENODEV (device not found / probe failed), -EINVAL (layout
 *   impossible: e.g. rx_queues above the PMD's limit or not equal to the
 *   lcore count), or another negative errno from ethdev.
 */
int sk_port_probe(const struct sk_config_port *pc, uint16_t index, unsigned nb_lcores,
		  struct sk_port *port, char *err, size_t errlen);

/**
 * sk_port_mbufs_needed - mbufs the queues of @p port hold when idle
 * (descriptors of all RX and TX queues).
 */
uint32_t sk_port_mbufs_needed(const struct sk_port *port);

/**
 * sk_port_start - configure @p port (offloads, RSS key, queues, MAC, RETA)
 * and start it.
 * @param[in]     pc      the [portN] section
 * @param[in,out] port    from sk_port_probe(); started on success
 * @param[in]     pool    mempool for the RX queues
 * @param[out]    err     one-line message on error
 * @param[in]     errlen  bytes at @p err
 * @return 0, or a negative errno from ethdev (-EINVAL, -ENOTSUP, -ENOMEM,
 *   -EIO ...); a half-configured port is left stopped.
 */
int sk_port_start(const struct sk_config_port *pc, struct sk_port *port, struct rte_mempool *pool,
		  char *err, size_t errlen);

/**
 * sk_port_close - stop and close @p port, and detach its device if it was
 * hot-plugged. Safe on a port that was only probed, or not even that
 * (port_id == UINT16_MAX).
 */
void sk_port_close(struct sk_port *port);

#ifdef __cplusplus
}
#endif

#endif /* SK_PORT_H */
