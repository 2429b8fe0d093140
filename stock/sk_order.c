/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Order ids, the status state machine and the per-lcore order rings.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_order.h"

static const char *const status_names[] = {
	[SK_ORDER_NONE] = "none",	    [SK_ORDER_QUEUED] = "queued",
	[SK_ORDER_CONFIRMED] = "confirmed", [SK_ORDER_PAID] = "paid",
	[SK_ORDER_CANCELLED] = "cancelled", [SK_ORDER_FAILED] = "failed",
	[SK_ORDER_REFUNDED] = "refunded",
};

const char *
sk_order_status_name(unsigned status)
{
	return status < SK_ARRAY_SIZE(status_names) ? status_names[status] : "none";
}

bool
sk_order_transition_ok(unsigned from, unsigned to)
{
	switch (from) {
	case SK_ORDER_QUEUED:
		return to == SK_ORDER_CONFIRMED || to == SK_ORDER_FAILED ||
		       to == SK_ORDER_CANCELLED;
	case SK_ORDER_CONFIRMED:
		return to == SK_ORDER_PAID || to == SK_ORDER_CANCELLED;
	case SK_ORDER_PAID:
		return to == SK_ORDER_REFUNDED;
	default:
		return false;
	}
}

int
sk_status_move(const struct sk_status *st, uint64_t id, unsigned from, unsigned to)
{
	_Atomic uint8_t *s = sk_status_slot(st, id);

	if (s == NULL)
		return -ENOENT;
	if (!sk_order_transition_ok(from, to))
		return -EINVAL;
	uint8_t expect = (uint8_t)from;
	bool moved = atomic_compare_exchange_strong(s, &expect, (uint8_t)to);
	if (!sk_status_still(st, id))
		return -ENOENT; /* reused: the byte is another order's now */
	return moved ? 0 : -EALREADY;
}

static void
ring_name(char *buf, size_t len, unsigned lcore)
{
	snprintf(buf, len, "sk_orders_%u", lcore);
}

struct rte_ring *
sk_order_ring_create(unsigned lcore, unsigned count, int socket)
{
	char name[RTE_RING_NAMESIZE];

	ring_name(name, sizeof(name), lcore);
	return rte_ring_create_elem(name, sizeof(struct sk_order_rec), count, socket,
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
}

struct rte_ring *
sk_order_ring_lookup(unsigned lcore)
{
	char name[RTE_RING_NAMESIZE];

	ring_name(name, sizeof(name), lcore);
	return rte_ring_lookup(name);
}
