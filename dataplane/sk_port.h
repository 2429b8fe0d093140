/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Port setup of the dataplane: find or hot-plug the device of a [portN]
 * section, choose its queue layout, program RSS, start and stop it.
 *
 * The queue layout (direct, rss, spread or dispatch) is chosen by
 * sk_port_choose_layout() (sk_port_layout.h); here it is applied: RSS with
 * the symmetric Toeplitz key (0x6d5a repeated) and a redirection table
 * written and read back, or plain queue pairs, or one pair and software
 * dispatch (sk_dispatch.h).
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
#include "sk_port_layout.h"

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
	enum sk_port_mode mode;	   /**< the queue layout (rss: the symmetric key is programmed) */
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
 *   impossible: see sk_port_choose_layout()), or another negative errno
 *   from ethdev.
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
