/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_port.c - a queue pair per stack on one DPDK port (see lg_port.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "sk_common.h"

#include "lg_port.h"

#define LG_RX_DESC	1024
#define LG_TX_DESC	1024
#define LG_MBUF_CACHE	256
#define LG_LINK_POLL_MS 10

int
lg_port_open(uint16_t port_id, uint16_t nb_queues, uint32_t nb_mbufs, struct lg_port *port,
	     char *err, size_t errlen)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_rxconf rxconf;
	struct rte_eth_txconf txconf;
	uint16_t nb_rxd = LG_RX_DESC, nb_txd = LG_TX_DESC;
	int rc;

	memset(port, 0, sizeof(*port));
	port->port_id = UINT16_MAX;
	if (!rte_eth_dev_is_valid_port(port_id)) {
		sk_set_err(err, errlen,
			   "port %u: no such port (%u probed; give --vdev or a PCI "
			   "device to the EAL)",
			   port_id, rte_eth_dev_count_avail());
		return -ENODEV;
	}
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0) {
		sk_set_err(err, errlen, "port %u: no device info: %s", port_id, rte_strerror(-rc));
		return rc;
	}
	port->port_id = port_id;
	rte_eth_dev_get_name_by_port(port_id, port->name);
	snprintf(port->driver, sizeof(port->driver), "%s",
		 info.driver_name != NULL ? info.driver_name : "?");
	if (nb_queues == 0 || info.max_rx_queues < nb_queues || info.max_tx_queues < nb_queues) {
		sk_set_err(err, errlen,
			   "port %u (%s, %s): %u lcores need %u RX/TX queue pairs, the PMD has "
			   "%u RX and %u TX queues at most",
			   port_id, port->name, port->driver, nb_queues, nb_queues,
			   info.max_rx_queues, info.max_tx_queues);
		port->port_id = UINT16_MAX; /* nothing to close yet */
		return -EINVAL;
	}
	port->nb_queues = nb_queues;
	port->socket = rte_eth_dev_socket_id(port_id);
	if (port->socket < 0)
		port->socket = 0;
	port->tx_ip_cksum = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
	port->tx_tcp_cksum = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) != 0;

	port->pool = rte_pktmbuf_pool_create("lg_mbuf", nb_mbufs, LG_MBUF_CACHE, 0,
					     RTE_MBUF_DEFAULT_BUF_SIZE, port->socket);
	if (port->pool == NULL) {
		rc = -rte_errno;
		sk_set_err(err, errlen, "port %u: mbuf pool of %u: %s", port_id, nb_mbufs,
			   rte_strerror(rte_errno));
		goto err;
	}
	memset(&conf, 0, sizeof(conf));
	if (port->tx_ip_cksum)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	if (port->tx_tcp_cksum)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	rc = rte_eth_dev_configure(port_id, nb_queues, nb_queues, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (rc != 0) {
		sk_set_err(err, errlen, "port %u (%s): configure failed: %s", port_id, port->name,
			   rte_strerror(-rc));
		goto err;
	}
	rxconf = info.default_rxconf;
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	for (uint16_t q = 0; q < nb_queues && rc == 0; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nb_rxd, (unsigned)port->socket, &rxconf,
					    port->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port_id, q, nb_txd, (unsigned)port->socket,
						    &txconf);
		if (rc != 0)
			sk_set_err(err, errlen, "port %u (%s): queue %u setup failed: %s", port_id,
				   port->name, q, rte_strerror(-rc));
	}
	if (rc != 0)
		goto err;
	rc = rte_eth_dev_start(port_id);
	if (rc != 0) {
		sk_set_err(err, errlen, "port %u (%s): start failed: %s", port_id, port->name,
			   rte_strerror(-rc));
		goto err;
	}
	port->started = true;
	rc = rte_eth_macaddr_get(port_id, &port->mac);
	if (rc != 0) {
		sk_set_err(err, errlen, "port %u (%s): no MAC address: %s", port_id, port->name,
			   rte_strerror(-rc));
		goto err;
	}
	if (!rte_is_valid_assigned_ether_addr(&port->mac)) {
		/* a PMD without an address of its own (net_ring, net_null): a
		 * random locally administered one, which the stack requires */
		rte_eth_random_addr(port->mac.addr_bytes);
		(void)rte_eth_dev_default_mac_addr_set(port_id, &port->mac);
	}
	return 0;
err:
	lg_port_close(port);
	return rc < 0 ? rc : -EIO;
}

int
lg_port_wait_link(const struct lg_port *port, uint32_t ms)
{
	for (uint32_t waited = 0;; waited += LG_LINK_POLL_MS) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(port->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		if (waited >= ms)
			return -ETIMEDOUT;
		rte_delay_us_sleep(LG_LINK_POLL_MS * 1000);
	}
}

void
lg_port_close(struct lg_port *port)
{
	if (port->port_id != UINT16_MAX && rte_eth_dev_is_valid_port(port->port_id)) {
		if (port->started)
			rte_eth_dev_stop(port->port_id);
		rte_eth_dev_close(port->port_id);
	}
	port->started = false;
	port->port_id = UINT16_MAX;
	rte_mempool_free(port->pool);
	port->pool = NULL;
}
