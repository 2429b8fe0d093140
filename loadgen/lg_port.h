/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one port of seckill-loadgen: one RX/TX queue pair per stack (EAL
 * lcore) on any DPDK port the EAL probed (net_memif in client role, a real
 * NIC, ...), one mbuf pool for them all, and the capabilities the TCP stack
 * can use (checksum offload).
 *
 * No RSS: stack i sends on TX queue i and reads RX queue i, so a flow stays
 * on its stack only where the peer answers on the queue it received on (a
 * multi-queue memif peer such as seckill-dataplane does). The dataplane's
 * port code does more (RSS, RETA, hot-plug from a config); the loadgen needs
 * none of it.
 *
 * Set-up only, on the main lcore; nothing here is on the packet path.
 */
#ifndef LG_PORT_H
#define LG_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An open port. An all-zero struct with port_id UINT16_MAX is "none". */
struct lg_port {
	uint16_t port_id;
	int socket;
	struct rte_mempool *pool; /**< owned: freed by lg_port_close() */
	struct rte_ether_addr mac;
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[32];    /**< the PMD's name ("net_memif") */
	uint16_t nb_queues; /**< RX/TX queue pairs configured */
	bool tx_ip_cksum;   /**< the NIC fills IPv4 header checksums */
	bool tx_tcp_cksum;  /**< the NIC fills TCP checksums */
	bool started;
};

/**
 * lg_port_open - configure and start port @p port_id with @p nb_queues RX/TX
 * queue pairs (queue i for stack i) and a pool of @p nb_mbufs mbufs.
 *
 * @return 0, or a negative errno with a one-line message in @p err:
 *   -ENODEV (no such port), -EINVAL (the PMD has fewer queues than
 *   @p nb_queues, or @p nb_queues is 0), or the errno of the ethdev/mempool
 *   call that failed. On failure, whatever was set up is undone.
 */
int lg_port_open(uint16_t port_id, uint16_t nb_queues, uint32_t nb_mbufs, struct lg_port *port,
		 char *err, size_t errlen);

/**
 * lg_port_wait_link - wait (polling every 10 ms) until the link is up, at
 * most @p ms milliseconds (a memif client is up once the server took it).
 * @return 0 once up, -ETIMEDOUT otherwise.
 */
int lg_port_wait_link(const struct lg_port *port, uint32_t ms);

/** lg_port_close - stop and close the port, free the pool. Idempotent. */
void lg_port_close(struct lg_port *port);

#ifdef __cplusplus
}
#endif

#endif /* LG_PORT_H */
