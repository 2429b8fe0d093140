/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drain (sk_control_drain, see sk_control.h and docs/control.md "The
 * drain"): peek the order rings, commit one durable batch to the store,
 * move the statuses from the store's outcome, settle, and only then
 * consume the records from the rings.
 *
 * Sections: helpers, the drain.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_control_impl.h"

/* ------------------------------------------------------------------ helpers */

/* cart_end - index one past the cart starting at recs[i]. */
static size_t
cart_end(const struct sk_order_rec *recs, size_t i, size_t n)
{
	return i + sk_order_cart_len(recs + i, n - i);
}

static void
record_latency(struct sk_control *ctl, int64_t ns, int64_t now_ns)
{
	unsigned b = sk_bucket_of(sk_control_lat_bounds_ns, SK_CONTROL_LAT_BUCKETS - 1,
				  ns < 0 ? 0 : (uint64_t)ns);

	stat_add(&ctl->st.commit_bucket[b], 1);
	stat_add(&ctl->st.commit_ns_sum, (uint64_t)ns);
	stat_add(&ctl->st.commit_count, 1);
	__atomic_store_n(&ctl->st.last_commit_ns, (uint64_t)now_ns, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- the drain */

/* fail_cart - the store refused the cart: failed, units back, event logged. */
static void
fail_cart(struct sk_control *ctl, const struct sk_order_rec *recs, unsigned n, int64_t now_ns)
{
	bool first = sk_status_get(&ctl->status, recs[0].id) != SK_ORDER_FAILED;

	if (!ctl_arena_cancel(ctl, recs, n, SK_ORDER_FAILED) || !first)
		return;
	stat_add(&ctl->st.orders_failed, 1);

	struct sk_store_event ev = {.type = SK_STORE_EV_FAILED,
				    .nlines = recs[0].nlines,
				    .item = recs[0].item,
				    .order = recs[0].id,
				    .user = recs[0].user,
				    .units = ctl_lines_units(recs, n),
				    .time_ns = now_ns};
	/* Best effort: the failure is already final in the arena. */
	(void)sk_store_event_append(ctl->store, &ev);
}

/* dup_cart - the store already holds the order: follow its stored state. */
static int
dup_cart(struct sk_control *ctl, uint64_t id)
{
	unsigned nl = 0;
	int rc = sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES, &nl);

	if (rc == -ENOENT) {
		stat_add(&ctl->st.anomalies, 1);
		return 0;
	}
	if (rc != 0)
		return rc;
	stat_add(&ctl->st.orders_dup, 1);
	if (ctl_sync_from_store(ctl, ctl->lines, nl) && ctl->lines[0].state != SK_ORDER_CONFIRMED)
		stat_add(&ctl->st.repaired, 1);
	return 0;
}

/* apply - act on the store's outcome for each cart of recs[0..n). */
static int
apply(struct sk_control *ctl, const struct sk_order_rec *recs, const uint8_t *outcome, size_t n,
      int64_t now_ns, struct sk_control_drain_info *info)
{
	for (size_t i = 0, j; i < n; i = j) {
		j = cart_end(recs, i, n);
		unsigned len = (unsigned)(j - i);
		int rc;

		switch (outcome[i]) {
		case SK_STORE_NEW:
			stat_add(&ctl->st.orders_committed, 1);
			stat_add(&ctl->st.units_committed, ctl_lines_units(recs + i, len));
			info->orders_new++;
			if (ctl_status_sync(ctl, recs[i].id, SK_ORDER_CONFIRMED) != 0)
				stat_add(&ctl->st.anomalies, 1);
			break;
		case SK_STORE_DUP:
			info->orders_dup++;
			rc = dup_cart(ctl, recs[i].id);
			if (rc != 0)
				return rc;
			break;
		default: /* CONFLICT, INVALID, OVERSELL, OVERLIMIT */
			info->orders_failed++;
			fail_cart(ctl, recs + i, len, now_ns);
		}
	}
	return 0;
}

/*
 * map_full - the store cannot take the batch at all (map full): every
 * order it does not already hold fails, so its buyer gets an answer and its
 * units go back. An order it holds (a replay) is not failed: that would
 * return units of a stored, live order.
 */
static int
map_full(struct sk_control *ctl, const struct sk_order_rec *recs, size_t n, int64_t now_ns,
	 struct sk_control_drain_info *info)
{
	for (size_t i = 0, j; i < n; i = j) {
		unsigned nl;
		j = cart_end(recs, i, n);
		int rc = sk_store_order_get(ctl->store, recs[i].id, ctl->lines, SK_STORE_MAX_LINES,
					    &nl);

		if (rc == 0) {
			info->orders_dup++;
			rc = dup_cart(ctl, recs[i].id);
		} else if (rc == -ENOENT) {
			info->orders_failed++;
			fail_cart(ctl, recs + i, (unsigned)(j - i), now_ns);
			rc = 0;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * commit - one durable put of cbuf[off, off + n), then the status moves.
 * A batch too large for one transaction is split at a cart boundary; each
 * half is its own durable commit (replaying a committed half is harmless).
 */
static int
commit(struct sk_control *ctl, size_t off, size_t n, int64_t now_ns,
       struct sk_control_drain_info *info)
{
	const struct sk_order_rec *recs = ctl->cbuf + off;
	uint8_t *outcome = ctl->outcome + off;
	int64_t t0 = sk_clock_ns(CLOCK_MONOTONIC);
	int rc = sk_store_put_orders(ctl->store, recs, n, ctl->pay_timeout_ns, now_ns, outcome,
				     NULL);

	/* A full map the checks did not grow in time (a batch larger than
	 * the room left): grow it now, between two commits, and retry once. */
	if (rc == -ENOSPC && ctl_map_grow(ctl, true) == 1)
		rc = sk_store_put_orders(ctl->store, recs, n, ctl->pay_timeout_ns, now_ns, outcome,
					 NULL);
	if (rc == 0) {
		record_latency(ctl, sk_clock_ns(CLOCK_MONOTONIC) - t0, now_ns);
		stat_add(&ctl->st.batches, 1);
		return apply(ctl, recs, outcome, n, now_ns, info);
	}
	if (rc == -ENOSPC)
		return map_full(ctl, recs, n, now_ns, info);
	if (rc != -E2BIG)
		return rc;

	size_t mid = 0;
	for (size_t i = 0; i < n; i = cart_end(recs, i, n))
		if (i > 0 && (mid == 0 || i <= n / 2))
			mid = i;
	if (mid == 0) { /* one cart too large for any transaction */
		info->orders_failed++;
		fail_cart(ctl, recs, (unsigned)n, now_ns);
		return 0;
	}
	stat_add(&ctl->st.batch_splits, 1);
	rc = commit(ctl, off, mid, now_ns, info);
	return rc != 0 ? rc : commit(ctl, off + mid, n - mid, now_ns, info);
}

/*
 * peek_ring - peek lcore @l's waiting records into buf without removing
 * them, and decide how many this drain consumes: whole carts only. A peek
 * cut short by the quota may end inside a cart; that cart stays for the
 * next drain. The dataplane enqueues a cart all at once, so a peek that got
 * everything never ends inside one (if it does, the records are malformed
 * and the store will refuse them rather than block the ring).
 */
static void
peek_ring(struct sk_control *ctl, unsigned l, unsigned off)
{
	struct seg *s = &ctl->seg[l];
	struct sk_order_rec *r = ctl->buf + off;

	s->off = off;
	s->got = rte_ring_dequeue_burst_elem_start(ctl->ring[l], r, sizeof(*r), ctl->quota, NULL);
	s->keep = s->got;
	if (s->got == ctl->quota) {
		const struct sk_order_rec *last = &r[s->got - 1];
		if (last->line + 1u < last->nlines && last->line < s->got)
			s->keep = s->got - last->line - 1u;
		if (s->keep == 0)
			s->keep = s->got;
	}
}

/*
 * compact - copy the carts to commit from buf to cbuf, leaving out orders
 * that must not reach the store: ones a predecessor already failed (their
 * units are back in the pool; storing them now would sell those units
 * twice) and ones that are not of this run's status table (not made by
 * this dataplane: counted as anomalies and dropped). Returns the records
 * in cbuf.
 */
static size_t
compact(struct sk_control *ctl)
{
	size_t n = 0;

	for (unsigned l = 0; l < ctl->nrings; l++) {
		const struct sk_order_rec *r = ctl->buf + ctl->seg[l].off;
		size_t keep = ctl->seg[l].keep;

		for (size_t i = 0, j; i < keep; i = j) {
			j = cart_end(r, i, keep);
			_Atomic uint8_t *s = sk_status_slot(&ctl->status, r[i].id);
			if (s == NULL) {
				stat_add(&ctl->st.anomalies, 1);
				continue;
			}
			if (atomic_load(s) == SK_ORDER_FAILED)
				continue;
			memcpy(ctl->cbuf + n, r + i, (j - i) * sizeof(*r));
			n += j - i;
		}
	}
	return n;
}

/* waiting - records in the rings; *full if one ring holds a whole quota. */
static unsigned
waiting(const struct sk_control *ctl, bool *full)
{
	unsigned total = 0;

	*full = false;
	for (unsigned l = 0; l < ctl->nrings; l++) {
		unsigned c = rte_ring_count(ctl->ring[l]);
		total += c;
		if (c >= ctl->quota)
			*full = true;
	}
	return total;
}

int
sk_control_drain(struct sk_control *ctl, int64_t now_ns, unsigned flags,
		 struct sk_control_drain_info *info)
{
	struct sk_control_drain_info di = {0};
	bool full;
	unsigned pending = waiting(ctl, &full), off = 0;
	int rc;

	if (info != NULL)
		*info = di;
	if (pending == 0) {
		ctl->first_seen_ns = 0;
		return 0;
	}
	if (ctl->first_seen_ns == 0)
		ctl->first_seen_ns = now_ns;
	if (!(flags & SK_CONTROL_DRAIN_NOW) && !full && pending < ctl->quota * ctl->nrings &&
	    now_ns - ctl->first_seen_ns < ctl->linger_ns)
		return 0;
	int64_t seen = ctl->first_seen_ns;
	ctl->first_seen_ns = 0;

	for (unsigned l = 0; l < ctl->nrings; l++) {
		peek_ring(ctl, l, off);
		off += ctl->seg[l].got;
	}
	size_t n = compact(ctl);

	lock(ctl);
	rc = n > 0 ? commit(ctl, 0, n, now_ns, &di) : 0;
	if (rc == 0 && n > 0)
		(void)ctl_map_grow(ctl, false); /* between this commit and the next */
	unlock(ctl);

	if (rc != 0) {
		/* Nothing removed: the records stay queued for the next call. */
		for (unsigned l = 0; l < ctl->nrings; l++)
			rte_ring_dequeue_elem_finish(ctl->ring[l], 0);
		stat_add(&ctl->st.store_errors, 1);
		ctl->first_seen_ns = seen;
		return rc;
	}
	for (unsigned l = 0; l < ctl->nrings; l++) {
		const struct seg *s = &ctl->seg[l];
		if (s->keep > 0) {
			const struct sk_order_rec *last = &ctl->buf[s->off + s->keep - 1];
			sk_shm_settle(ctl->shm, l, last->id + 1);
			di.records += s->keep;
		}
		rte_ring_dequeue_elem_finish(ctl->ring[l], s->keep);
	}
	stat_add(&ctl->st.records, di.records);
	/* Records left behind (a share or cart cut) have waited since @seen already. */
	if (waiting(ctl, &full) > 0)
		ctl->first_seen_ns = seen;
	if (info != NULL)
		*info = di;
	return (int)di.records;
}
