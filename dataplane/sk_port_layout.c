/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_port_layout.c - the queue layout of a port (see sk_port_layout.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_common.h"
#include "sk_port_layout.h"

/* Drivers whose peer picks the queue of every frame it sends. */
static const char *const peer_steered[] = {"net_memif"};

bool
sk_port_peer_steered(const char *driver)
{
	if (driver == NULL)
		return false;
	for (size_t i = 0; i < SK_ARRAY_SIZE(peer_steered); i++)
		if (strcmp(driver, peer_steered[i]) == 0)
			return true;
	return false;
}

int
sk_port_choose_layout(const struct sk_config_port *pc, uint16_t index, unsigned nb_lcores,
		      const struct sk_port_caps *caps, struct sk_port_layout *out, char *err,
		      size_t errlen)
{
	bool enough = caps->max_rx_queues >= nb_lcores && caps->max_tx_queues >= nb_lcores;
	bool can_rss = pc->rss && enough && caps->reta_size > 0 &&
		       (caps->flow_type_rss_offloads & SK_PORT_RSS_HF) != 0;
	struct sk_port_layout l = {.mode = SK_PORT_DIRECT, .nb_rxq = 1, .nb_txq = 1};

	if (pc->rx_queues > 1 && pc->rx_queues != nb_lcores) {
		snprintf(err, errlen,
			 "port%u.rx_queues: must be auto, 1 or the number of lcores (%u)", index,
			 nb_lcores);
		return -EINVAL;
	}
	if (pc->rx_queues > 1 && !enough) {
		snprintf(err, errlen, "port%u.rx_queues: %s has at most %u RX / %u TX queues",
			 index, caps->driver != NULL ? caps->driver : "the device",
			 caps->max_rx_queues, caps->max_tx_queues);
		return -EINVAL;
	}
	if (nb_lcores > 1) {
		if (pc->rx_queues == 1)
			l.mode = SK_PORT_DISPATCH;
		else if (can_rss)
			l.mode = SK_PORT_RSS;
		else if (pc->rx_queues == nb_lcores ||
			 (enough && sk_port_peer_steered(caps->driver)))
			l.mode = SK_PORT_SPREAD;
		else
			l.mode = SK_PORT_DISPATCH;
	}
	if (l.mode == SK_PORT_RSS || l.mode == SK_PORT_SPREAD)
		l.nb_rxq = l.nb_txq = (uint16_t)nb_lcores;
	if (l.mode == SK_PORT_DISPATCH)
		l.owner = (uint16_t)(index % nb_lcores);
	*out = l;
	return 0;
}

const char *
sk_port_mode_name(enum sk_port_mode mode)
{
	switch (mode) {
	case SK_PORT_DIRECT:
		return "direct";
	case SK_PORT_RSS:
		return "rss";
	case SK_PORT_SPREAD:
		return "spread";
	case SK_PORT_DISPATCH:
		return "dispatch";
	}
	return "?";
}
