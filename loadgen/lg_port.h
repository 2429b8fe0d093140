/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one port of seckill-loadgen: one RX and one TX queue on any DPDK
 * port the EAL probed (net_memif in client role, a real NIC, ...), its
 * mbuf pool, and the capabilities the TCP stack can use (checksum offload).
 *
 * The dataplane's dataplane/sk_port.c does more (several queues, RSS, RETA,
 * hot-plug from a config); a load generator on one lcore needs none of it.
 *
 * Set-up only, on the main lcore; nothing here is on the packet path.
 */
#ifndef LG_PORT_H
#define LG_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	bool tx_ip_cksum;  /**< the NIC fills IPv4 header checksums */
	bool tx_tcp_cksum; /**< the NIC fills TCP checksums */
	bool started;
};

/**
 * lg_port_open - configure and start port @p port_id with one queue pair
 * and a pool of @p nb_mbufs mbufs.
 *
 * @return 0, or a negative errno with a one-line message in @p err:
 *   -ENODEV (no such port), or the errno of the ethdev/mempool call that
 *   failed. On failure, whatever was set up is undone.
 */
int lg_port_open(uint16_t port_id, uint32_t nb_mbufs, struct lg_port *port, char *err,
		 size_t errlen);

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
