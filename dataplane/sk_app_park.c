/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_app_park.c - ack = durable: the FIFO of winners parked until their
 * order is in LMDB (the lcore's settled mark passes it) or the wait runs
 * out (sk_app_impl.h).
 */
#include "sk_app_impl.h"
#include "sk_order.h"

/* sk_app_park_push - put the winner of @order on @ac at the FIFO's tail; false if full. */
bool
sk_app_park_push(struct sk_app *app, struct sk_app_conn *ac, uint64_t order, bool duplicate)
{
	struct park_state *ps = (struct park_state *)ac->route_data;
	struct park_entry *e;

	if (sk_unlikely(app->park_count == app->park_cap))
		return false;
	e = &app->parks[(app->park_head + app->park_count) % app->park_cap];
	e->ac = ac;
	e->order = order;
	e->tsc = app->now_tsc;
	app->park_count++;
	ps->order = order;
	ps->t0 = app->now_tsc;
	ps->due = 0;
	ps->settled = 0;
	ps->duplicate = duplicate;
	app->stats.durable_parked++;
	return true;
}

/*
 * sk_app_park_poll - resume the parked winners that are due: the head's order
 * settled (its sequence is below the lcore's settled mark) or its wait ran
 * out. Both grow along the FIFO, so the loop stops at the first entry not
 * due; bounded by the FIFO's length. Stale entries (the connection closed,
 * or its area now serves another connection) are dropped.
 */
void
sk_app_park_poll(struct sk_app *app)
{
	const struct sk_buy_lcore *b = &app->seckill->buy;
	uint64_t settled = sk_shm_settled(b->shm, b->lcore);

	for (uint32_t n = app->park_count; n > 0; n--) {
		struct park_entry *e = &app->parks[app->park_head];
		struct park_state *ps = (struct park_state *)e->ac->route_data;
		unsigned owner = sk_order_id_lcore(e->order);
		/*
		 * An order settles on the mark of the lcore that sold it. A
		 * winner's retry can arrive on another lcore (RSS, software
		 * dispatch): its entry is judged by the seller's mark. Such an
		 * entry is rare and settles with the same group commit as
		 * ours, so keeping the FIFO's head-only check costs at most a
		 * short wait behind it.
		 */
		bool done =
			e->order < (owner == b->lcore ? settled : sk_shm_settled(b->shm, owner));

		if (!done && app->now_tsc - e->tsc < app->ack_wait_tsc)
			break;
		app->park_head = (app->park_head + 1) % app->park_cap;
		app->park_count--;
		if (ps->order != e->order || ps->due) {
			app->stats.durable_stale++;
			continue;
		}
		ps->due = 1;
		ps->settled = done;
		sk_tcp_resume(e->ac->conn);
	}
}
