/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_port.c - find, lay out, configure, start and stop the ports.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "sk_common.h"
#include "sk_port.h"

static int port_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* port_fail - write the one-line message and return @rc (negative errno). */
static int
port_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Probe and layout                                                          */
/* ------------------------------------------------------------------------ */

/* port_find - the port id of device @name, hot-plugging @devargs if the EAL
 * did not probe it. */
static int
port_find(const struct sk_config_port *pc, const char *name, struct sk_port *port)
{
	uint16_t id;
	int rc;

	if (rte_eth_dev_get_port_by_name(name, &id) == 0) {
		port->port_id = id;
		return 0;
	}
	rc = rte_dev_probe(pc->device);
	if (rc < 0)
		return rc;
	port->hotplugged = true;
	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return -ENODEV;
	port->port_id = id;
	return 0;
}

int
sk_port_probe(const struct sk_config_port *pc, uint16_t index, unsigned nb_lcores,
	      struct sk_port *port, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct sk_port_caps caps;
	struct sk_port_layout layout;
	int rc;

	memset(port, 0, sizeof(*port));
	port->index = index;
	port->port_id = UINT16_MAX;
	if (sk_config_port_name(pc, port->name, sizeof(port->name)) != 0)
		return port_fail(err, errlen, -EINVAL, "port%u.device: name too long", index);
	rc = port_find(pc, port->name, port);
	if (rc < 0)
		return port_fail(err, errlen, -ENODEV, "port%u.device: cannot probe '%s': %s",
				 index, pc->device, rte_strerror(-rc));
	rc = rte_eth_dev_info_get(port->port_id, &info);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.device: %s: no device info: %s", index,
				 port->name, rte_strerror(-rc));
	port->socket = rte_eth_dev_socket_id(port->port_id);
	if (port->socket < 0)
		port->socket = 0;

	caps = (struct sk_port_caps){
		.driver = info.driver_name,
		.max_rx_queues = info.max_rx_queues,
		.max_tx_queues = info.max_tx_queues,
		.reta_size = info.reta_size,
		.flow_type_rss_offloads = info.flow_type_rss_offloads,
	};
	rc = sk_port_choose_layout(pc, index, nb_lcores, &caps, &layout, err, errlen);
	if (rc != 0)
		return rc;
	port->mode = layout.mode;
	port->nb_rxq = layout.nb_rxq;
	port->nb_txq = layout.nb_txq;
	port->owner = layout.owner;

	port->rx_desc = pc->rx_desc;
	port->tx_desc = pc->tx_desc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port->port_id, &port->rx_desc, &port->tx_desc);
	if (rc != 0)
		return port_fail(err, errlen, rc,
				 "port%u.rx_desc: %s refuses %u/%u descriptors: %s", index,
				 port->name, pc->rx_desc, pc->tx_desc, rte_strerror(-rc));

	port->tx_ip_cksum =
		pc->csum_offload && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM);
	port->tx_tcp_cksum =
		pc->csum_offload && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM);
	port->rx_cksum = pc->csum_offload &&
			 (info.rx_offload_capa &
			  (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM)) ==
				 (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM);
	return 0;
}

uint32_t
sk_port_mbufs_needed(const struct sk_port *port)
{
	return (uint32_t)port->nb_rxq * port->rx_desc + (uint32_t)port->nb_txq * port->tx_desc;
}

/* ------------------------------------------------------------------------ */
/* Configure and start                                                       */
/* ------------------------------------------------------------------------ */

/* port_program_reta - spread the RETA over the RX queues round-robin, then
 * read it back: a PMD that accepts the update but keeps its own table would
 * send flows to the wrong lcore. */
static int
port_program_reta(struct sk_port *port, uint16_t reta_size, char *err, size_t errlen)
{
	struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	unsigned ngroups = reta_size / RTE_ETH_RETA_GROUP_SIZE;
	int rc;

	if (reta_size == 0 || reta_size > RTE_ETH_RSS_RETA_SIZE_512 ||
	    reta_size % RTE_ETH_RETA_GROUP_SIZE != 0)
		return port_fail(err, errlen, -ENOTSUP, "port%u.rss: %s has an unusable RETA (%u)",
				 port->index, port->name, reta_size);
	memset(reta, 0, sizeof(reta));
	for (unsigned i = 0; i < reta_size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask = UINT64_MAX;
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			(uint16_t)(i % port->nb_rxq);
	}
	rc = rte_eth_dev_rss_reta_update(port->port_id, reta, reta_size);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.rss: %s: RETA update failed: %s",
				 port->index, port->name, rte_strerror(-rc));
	memset(reta, 0, sizeof(reta));
	for (unsigned g = 0; g < ngroups; g++)
		reta[g].mask = UINT64_MAX;
	rc = rte_eth_dev_rss_reta_query(port->port_id, reta, reta_size);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.rss: %s: RETA query failed: %s",
				 port->index, port->name, rte_strerror(-rc));
	for (unsigned i = 0; i < reta_size; i++)
		if (reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] !=
		    i % port->nb_rxq)
			return port_fail(err, errlen, -EIO,
					 "port%u.rss: %s did not keep the RETA (entry %u)",
					 port->index, port->name, i);
	return 0;
}

/*
 * port_ipv6_groups - let the port receive the multicast groups IPv6 needs:
 * all-nodes and the solicited-node groups of the address and of the
 * link-local address (33:33:ff + the last 3 bytes of each; the link-local
 * one's are the MAC's). A NIC filters multicast by default; an exact list
 * first, all-multicast if the PMD has no list. Virtual ports (af_packet,
 * tap, memif) filter nothing and support neither: that is not an error.
 */
static int
port_ipv6_groups(const struct sk_config_port *pc, struct sk_port *port, char *err, size_t errlen)
{
	struct rte_ether_addr mc[3] = {
		{{0x33, 0x33, 0, 0, 0, 1}},
		{{0x33, 0x33, 0xff, pc->addr6[13], pc->addr6[14], pc->addr6[15]}},
		{{0x33, 0x33, 0xff, port->mac.addr_bytes[3], port->mac.addr_bytes[4],
		  port->mac.addr_bytes[5]}},
	};
	int rc;

	if (rte_eth_dev_set_mc_addr_list(port->port_id, mc, RTE_DIM(mc)) == 0)
		return 0;
	rc = rte_eth_allmulticast_enable(port->port_id);
	if (rc != 0 && rc != -ENOTSUP)
		return port_fail(err, errlen, rc,
				 "port%u.address6: %s accepts no IPv6 multicast (needed by "
				 "neighbour discovery): %s",
				 port->index, port->name, rte_strerror(-rc));
	return 0;
}

int
sk_port_start(const struct sk_config_port *pc, struct sk_port *port, struct rte_mempool *pool,
	      char *err, size_t errlen)
{
	uint8_t key[256];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_rxconf rxconf;
	struct rte_eth_txconf txconf;
	uint16_t id = port->port_id;
	int rc;

	rc = rte_eth_dev_info_get(id, &info);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.device: no device info: %s", port->index,
				 rte_strerror(-rc));
	memset(&conf, 0, sizeof(conf));
	if (port->mode == SK_PORT_RSS) {
		size_t klen = info.hash_key_size ? info.hash_key_size : SK_PORT_RSS_KEY_LEN;

		if (klen > sizeof(key))
			return port_fail(err, errlen, -ENOTSUP, "port%u.rss: RSS key of %zu bytes",
					 port->index, klen);
		for (size_t i = 0; i < klen; i++)
			key[i] = (i & 1) ? 0x5a : 0x6d; /* symmetric Toeplitz key */
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = key;
		conf.rx_adv_conf.rss_conf.rss_key_len = (uint8_t)klen;
		conf.rx_adv_conf.rss_conf.rss_hf = SK_PORT_RSS_HF & info.flow_type_rss_offloads;
	}
	if (port->rx_cksum)
		conf.rxmode.offloads |=
			RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	if (port->tx_ip_cksum)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	if (port->tx_tcp_cksum)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;

	rc = rte_eth_dev_configure(id, port->nb_rxq, port->nb_txq, &conf);
	if (rc != 0)
		return port_fail(err, errlen, rc,
				 "port%u.device: %s: configure (%u queues) failed: %s", port->index,
				 port->name, port->nb_rxq, rte_strerror(-rc));

	rxconf = info.default_rxconf;
	rxconf.offloads = conf.rxmode.offloads;
	for (uint16_t q = 0; q < port->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(id, q, port->rx_desc, (unsigned)port->socket, &rxconf,
					    pool);
		if (rc != 0)
			return port_fail(err, errlen, rc,
					 "port%u.rx_desc: RX queue %u setup failed: %s",
					 port->index, q, rte_strerror(-rc));
	}
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	for (uint16_t q = 0; q < port->nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(id, q, port->tx_desc, (unsigned)port->socket, &txconf);
		if (rc != 0)
			return port_fail(err, errlen, rc,
					 "port%u.tx_desc: TX queue %u setup failed: %s",
					 port->index, q, rte_strerror(-rc));
	}
	if (pc->has_mac) {
		struct rte_ether_addr mac;

		memcpy(mac.addr_bytes, pc->mac, RTE_ETHER_ADDR_LEN);
		rc = rte_eth_dev_default_mac_addr_set(id, &mac);
		if (rc != 0)
			return port_fail(err, errlen, rc, "port%u.mac: %s refuses the MAC: %s",
					 port->index, port->name, rte_strerror(-rc));
	}
	rc = rte_eth_dev_start(id);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.device: %s: start failed: %s",
				 port->index, port->name, rte_strerror(-rc));
	port->started = true;
	if (port->mode == SK_PORT_RSS) {
		rc = port_program_reta(port, info.reta_size, err, errlen);
		if (rc != 0)
			return rc;
	}
	rc = rte_eth_macaddr_get(id, &port->mac);
	if (rc != 0)
		return port_fail(err, errlen, rc, "port%u.device: %s: no MAC address: %s",
				 port->index, port->name, rte_strerror(-rc));
	return pc->has_addr6 ? port_ipv6_groups(pc, port, err, errlen) : 0;
}

void
sk_port_close(struct sk_port *port)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;

	if (port->port_id == UINT16_MAX || !rte_eth_dev_is_valid_port(port->port_id))
		return;
	if (port->hotplugged && rte_eth_dev_info_get(port->port_id, &info) == 0 &&
	    info.device != NULL)
		dev = info.device;
	if (port->started) {
		rte_eth_dev_stop(port->port_id);
		port->started = false;
	}
	rte_eth_dev_close(port->port_id);
	if (dev != NULL)
		rte_dev_remove(dev);
	port->port_id = UINT16_MAX;
}
