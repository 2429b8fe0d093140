/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bringing the arena in line with the store (see sk_control_impl.h): the
 * status moves and unit returns that follow a store write or a store read,
 * shared by the drain (sk_drain.c), payment (sk_payment.c) and the repair
 * at attach (sk_control.c). Called under ctl->wlock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_control_impl.h"

/* ------------------------------------------------------------ arena moves */

/*
 * ctl_status_sync - walk @id's status forward to @target (confirmed, paid
 * or refunded): queued -> confirmed -> paid -> refunded, each step a CAS
 * that another writer may have made first. Returns 0 once the status is @target, -ENOENT if @id is
 * not in the table (another run), -EALREADY if the status is elsewhere
 * (none, failed, cancelled, or paid when confirmed is wanted).
 */
int
ctl_status_sync(struct sk_control *ctl, uint64_t id, unsigned target)
{
	if (sk_status_slot(&ctl->status, id) == NULL)
		return -ENOENT;
	for (;;) {
		unsigned cur = sk_status_get(&ctl->status, id), next;

		if (cur == target)
			return 0;
		if (cur == SK_ORDER_QUEUED)
			next = SK_ORDER_CONFIRMED;
		else if (cur == SK_ORDER_CONFIRMED && target != SK_ORDER_CONFIRMED)
			next = SK_ORDER_PAID;
		else if (cur == SK_ORDER_PAID && target == SK_ORDER_REFUNDED)
			next = SK_ORDER_REFUNDED;
		else
			return -EALREADY;
		(void)sk_status_move(&ctl->status, id, cur, next);
	}
}

uint64_t
ctl_lines_units(const struct sk_order_rec *recs, unsigned n)
{
	uint64_t u = 0;

	for (unsigned i = 0; i < n; i++)
		u += recs[i].qty;
	return u;
}

/*
 * ctl_arena_cancel - end an order of this run in the arena: status -> @to
 * (cancelled or failed) and its units back (sk_buy_cancel). The records'
 * returned counters are reset first: only the winner of the status CAS
 * returns anything, and it returns everything. Returns true if the order
 * ends in @to (now or before), false on an anomaly (counted).
 */
bool
ctl_arena_cancel(struct sk_control *ctl, const struct sk_order_rec *in, unsigned n, unsigned to)
{
	struct sk_order_rec recs[SK_BUY_MAX_LINES];
	int rc = -EINVAL;

	if (n >= 1 && n <= SK_BUY_MAX_LINES) {
		for (unsigned i = 0; i < n; i++) {
			recs[i] = in[i];
			recs[i].returned = 0;
		}
		rc = sk_buy_cancel(ctl->shm, recs, n, to);
	}
	if (rc == 0) {
		stat_add(&ctl->st.units_returned, ctl_lines_units(recs, n));
		return true;
	}
	if (rc == -EALREADY && sk_status_get(&ctl->status, in[0].id) == to)
		return true; /* a predecessor did it (replay after a crash) */
	if (rc != -EALREADY && to == SK_ORDER_FAILED)
		/* Malformed cart or unknown item: units cannot be returned
		 * safely, but the parked buyer must get an answer. */
		(void)sk_status_move(&ctl->status, in[0].id, SK_ORDER_QUEUED, SK_ORDER_FAILED);
	stat_add(&ctl->st.anomalies, 1);
	return false;
}

/*
 * foreign_return - units of a cancelled order of an earlier dataplane run
 * go back to the items found by id, and the user's holding (rebuilt from
 * the store by recovery) is released. Items absent from the arena get
 * nothing: the store no longer counts the order live, and preheat counts
 * sellable units from the store.
 */
static void
foreign_return(struct sk_control *ctl, const struct sk_store_line *lines, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct sk_order_rec *r = &lines[i].rec;
		struct sk_item *it = sk_shm_item_find(ctl->shm, r->item);
		uint32_t returned = 0;
		struct sk_dedup d;

		if (it == NULL || r->qty == 0)
			continue;
		if (sk_stock_return(it, &returned, r->qty, r->qty) != 0) {
			stat_add(&ctl->st.anomalies, 1);
			continue;
		}
		stat_add(&ctl->st.units_returned, r->qty);
		sk_shm_dedup(ctl->shm, it, &d);
		(void)sk_dedup_release(&d, r->user, r->qty);
	}
}

/*
 * ctl_release_cancelled - the store has just cancelled (or holds cancelled) the
 * order in @lines: give its units back in the arena.
 */
void
ctl_release_cancelled(struct sk_control *ctl, const struct sk_store_line *lines, unsigned n)
{
	struct sk_order_rec recs[SK_BUY_MAX_LINES];
	uint64_t id = lines[0].rec.id;

	if (sk_status_slot(&ctl->status, id) == NULL) {
		foreign_return(ctl, lines, n);
		return;
	}
	if (n > SK_BUY_MAX_LINES) {
		stat_add(&ctl->st.anomalies, 1);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		recs[i] = lines[i].rec;
	(void)ctl_arena_cancel(ctl, recs, n, SK_ORDER_CANCELLED);
}

/*
 * ctl_sync_from_store - bring the arena in line with the stored order @lines
 * (a replay after a crash, or the repair at attach). Returns true if
 * something had to change.
 */
bool
ctl_sync_from_store(struct sk_control *ctl, const struct sk_store_line *lines, unsigned n)
{
	uint64_t id = lines[0].rec.id;
	unsigned before = sk_status_get(&ctl->status, id);
	int rc = 0;

	switch (lines[0].state) {
	case SK_ORDER_CONFIRMED:
	case SK_ORDER_PAID:
	case SK_ORDER_REFUNDED: /* units of a lost refund: back at the next rebuild */
		rc = ctl_status_sync(ctl, id, lines[0].state);
		break;
	case SK_ORDER_CANCELLED:
		/* Only this run's status byte tells whether the arena has the
		 * units back. An order of an earlier run (no slot: any order
		 * stored before a restart or an upgrade) got them when it was
		 * cancelled, or is not counted by recovery: giving them again
		 * at every late pay or repeat would sell them twice. */
		if (sk_status_slot(&ctl->status, id) != NULL && before != SK_ORDER_CANCELLED)
			ctl_release_cancelled(ctl, lines, n);
		break;
	default:
		rc = -EALREADY;
	}
	if (rc != 0 && rc != -ENOENT)
		stat_add(&ctl->st.anomalies, 1);
	return sk_status_get(&ctl->status, id) != before;
}
