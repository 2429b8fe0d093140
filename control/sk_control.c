/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's core (see sk_control.h): attach, the drain (group
 * commit), payment deadlines, pay, crash repair, and the views behind the
 * admin API and /metrics.
 *
 * Sections: helpers, arena moves, the drain, deadlines and pay, attach and
 * repair, views, metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_control_impl.h"
#include "sk_prom.h"
#include "sk_dpmetrics.h"

#define MS INT64_C(1000000)

const uint64_t sk_control_lat_bounds_ns[SK_CONTROL_LAT_BUCKETS] = {
	50000,	   100000,     200000,	   500000,     1000000,	  2000000,
	5000000,   10000000,   20000000,   50000000,   100000000, 200000000,
	500000000, 1000000000, 2000000000, 5000000000, 0, /* +Inf */
};

_Static_assert(sizeof(struct sk_control_stats) % sizeof(uint64_t) == 0,
	       "sk_control_stats must hold uint64_t fields only");

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

/* ------------------------------------------------------------ arena moves */

/*
 * ctl_status_sync - walk @id's status forward to @target (confirmed or paid):
 * queued -> confirmed -> paid, each step a CAS that another writer may
 * have made first. Returns 0 once the status is @target, -ENOENT if @id is
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
		else if (cur == SK_ORDER_CONFIRMED && target == SK_ORDER_PAID)
			next = SK_ORDER_PAID;
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
		rc = ctl_status_sync(ctl, id, lines[0].state);
		break;
	case SK_ORDER_CANCELLED:
		if (before != SK_ORDER_CANCELLED)
			ctl_release_cancelled(ctl, lines, n);
		break;
	default:
		rc = -EALREADY;
	}
	if (rc != 0 && rc != -ENOENT)
		stat_add(&ctl->st.anomalies, 1);
	return sk_status_get(&ctl->status, id) != before;
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
			sk_shm_settle(ctl->shm, l, sk_order_id_seq(last->id) + 1);
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

/* ------------------------------------------------------ deadlines and pay */

static int
collect_expiry(int64_t deadline_ns, uint64_t order, void *arg)
{
	struct sk_control *ctl = ((void **)arg)[0];
	uint32_t *n = ((void **)arg)[1];

	ctl->exp[*n] = (struct expiry){deadline_ns, order};
	return ++*n >= ctl->expire_max ? 1 : 0;
}

/* cancel_expired - cancel order @id if it is still unpaid. 1 if cancelled now. */
static int
cancel_expired(struct sk_control *ctl, uint64_t id, int64_t now_ns)
{
	unsigned nl = 0, cur;
	int rc;

	lock(ctl);
	rc = sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES, &nl);
	if (rc == 0 && ctl->lines[0].state == SK_ORDER_CONFIRMED)
		rc = sk_store_order_move(ctl->store, id, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED,
					 now_ns, &cur);
	else if (rc == 0 || rc == -ENOENT)
		rc = -EALREADY; /* a deadline must not outlive its confirmed order */
	if (rc == 0) {
		ctl_release_cancelled(ctl, ctl->lines, nl);
		stat_add(&ctl->st.cancels, 1);
		if (sk_status_slot(&ctl->status, id) == NULL)
			stat_add(&ctl->st.cancels_foreign, 1);
	}
	unlock(ctl);
	if (rc == -EALREADY)
		return 0; /* paid (or cancelled) first */
	return rc == 0 ? 1 : rc;
}

int
sk_control_expire(struct sk_control *ctl, int64_t now_ns)
{
	uint32_t n = 0;
	void *arg[2] = {ctl, &n};
	int rc = sk_store_deadlines_foreach(ctl->store, now_ns, collect_expiry, arg);
	int done = 0;

	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		rc = cancel_expired(ctl, ctl->exp[i].id, now_ns);
		if (rc < 0)
			return done > 0 ? done : rc;
		done += rc;
	}
	return done;
}

static const char *const pay_names[] = {
	[SK_CONTROL_PAY_DONE] = "paid",		  [SK_CONTROL_PAY_ALREADY] = "already_paid",
	[SK_CONTROL_PAY_CANCELLED] = "cancelled", [SK_CONTROL_PAY_FAILED] = "failed",
	[SK_CONTROL_PAY_QUEUED] = "queued",	  [SK_CONTROL_PAY_UNKNOWN] = "unknown",
};

const char *
sk_control_pay_result_name(int result)
{
	return result >= 0 && (size_t)result < SK_ARRAY_SIZE(pay_names) ? pay_names[result]
									: "error";
}

/* pay_once - one attempt under the lock: an enum sk_control_pay_result or an error. */
static int
pay_once(struct sk_control *ctl, uint64_t id, int64_t now_ns)
{
	unsigned cur = 0, nl = 0;
	int rc, res;

	lock(ctl);
	rc = sk_store_order_move(ctl->store, id, SK_ORDER_CONFIRMED, SK_ORDER_PAID, now_ns, &cur);
	if (rc == 0) {
		res = SK_CONTROL_PAY_DONE;
		if (ctl_status_sync(ctl, id, SK_ORDER_PAID) == -EALREADY)
			stat_add(&ctl->st.anomalies, 1);
	} else if (rc == -EALREADY) {
		res = cur == SK_ORDER_PAID ? SK_CONTROL_PAY_ALREADY : SK_CONTROL_PAY_CANCELLED;
		/* Repair an arena a crashed predecessor left behind the store. */
		if (sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES, &nl) == 0 &&
		    ctl_sync_from_store(ctl, ctl->lines, nl))
			stat_add(&ctl->st.repaired, 1);
	} else if (rc == -ENOENT) {
		switch (sk_status_get(&ctl->status, id)) {
		case SK_ORDER_QUEUED:
			res = SK_CONTROL_PAY_QUEUED;
			break;
		case SK_ORDER_FAILED:
			res = SK_CONTROL_PAY_FAILED;
			break;
		default:
			res = SK_CONTROL_PAY_UNKNOWN;
		}
	} else {
		res = rc;
	}
	unlock(ctl);
	return res;
}

int
sk_control_pay(struct sk_control *ctl, uint64_t id, int64_t now_ns, unsigned wait_ms)
{
	int res = pay_once(ctl, id, now_ns);

	/* Queued: the drain usually confirms within a few ms. Wait outside the lock. */
	for (unsigned w = 0; res == SK_CONTROL_PAY_QUEUED && w < wait_ms; w++) {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
		if (sk_status_get(&ctl->status, id) != SK_ORDER_QUEUED)
			res = pay_once(ctl, id, now_ns + (int64_t)(w + 1) * MS);
	}
	if (res < 0)
		stat_add(&ctl->st.pay_errors, 1);
	else
		stat_add(&ctl->st.pay[res], 1);
	return res;
}

void
sk_control_heartbeat(struct sk_control *ctl, int64_t now_ns)
{
	atomic_store_explicit(&ctl->shm->progress[0].heartbeat_ns, (uint64_t)now_ns,
			      memory_order_relaxed);
}

/* ------------------------------------------------------- attach and repair */

/*
 * reset_heads - undo the peek of a control plane that died between
 * dequeue_start and dequeue_finish: its consumer head is ahead of the
 * tail, and a new peek would start at the head and skip those records.
 * finish(0) sets head = tail (rte_ring_peek_elem_pvt.h). Correct only
 * because this process is the rings' single consumer: no other consumer
 * can own the gap between head and tail.
 */
static void
reset_heads(struct sk_control *ctl)
{
	for (unsigned l = 0; l < ctl->nrings; l++)
		rte_ring_dequeue_elem_finish(ctl->ring[l], 0);
}

/*
 * repair - orders of this run below their lcore's settled sequence whose
 * status says confirmed are checked against the store: one cancelled (or
 * paid) there by a predecessor that died before the arena move is brought
 * in line (units returned for a cancel). Orders at or above settled are
 * still in the rings and are handled by the next drain (replay).
 */
static int
repair(struct sk_control *ctl)
{
	for (unsigned l = 0; l < ctl->nrings; l++) {
		uint32_t settled = sk_shm_settled(ctl->shm, l);
		uint32_t lim = UINT32_C(1) << ctl->status.bits;

		for (uint32_t seq = 1; seq < settled && seq < lim; seq++) {
			uint64_t id = sk_order_id_make(ctl->status.epoch, l, seq);
			unsigned nl = 0;

			if (sk_status_get(&ctl->status, id) != SK_ORDER_CONFIRMED)
				continue;
			int rc = sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES,
						    &nl);
			if (rc == -ENOENT) {
				stat_add(&ctl->st.anomalies, 1);
				continue;
			}
			if (rc != 0)
				return rc;
			if (ctl->lines[0].state != SK_ORDER_CONFIRMED &&
			    ctl_sync_from_store(ctl, ctl->lines, nl))
				stat_add(&ctl->st.repaired, 1);
		}
	}
	return 0;
}

/* ctl_free - free @ctl and whatever of it was set up. */
static void
ctl_free(struct sk_control *ctl)
{
	if (ctl == NULL)
		return;
	sk_store_close(ctl->store);
	if (ctl->mutex_ok)
		pthread_mutex_destroy(&ctl->wlock);
	free(ctl->buf);
	free(ctl->cbuf);
	free(ctl->outcome);
	free(ctl->exp);
	free(ctl);
}

int
sk_control_init(struct sk_control **out, struct sk_shm *shm, struct rte_ring *const *rings,
		unsigned nrings, const struct sk_control_conf *conf, char *err, size_t errlen)
{
	char serr[SK_STORE_ERR_MAX];
	struct sk_control *ctl = NULL;
	uint32_t batch;
	int rc = -EINVAL;

	if (out == NULL || shm == NULL || rings == NULL || conf == NULL ||
	    conf->store_dir == NULL || conf->store_dir[0] == '\0') {
		sk_set_err(err, errlen, "control: missing arena, rings or store directory");
		goto err;
	}
	if (nrings != shm->nlcores || nrings == 0 || nrings > SK_MAX_LCORES) {
		sk_set_err(err, errlen, "control: %u rings for an arena of %u lcores", nrings,
			   shm->nlcores);
		goto err;
	}
	for (unsigned l = 0; l < nrings; l++)
		if (rings[l] == NULL || rte_ring_get_cons_sync_type(rings[l]) != RTE_RING_SYNC_ST) {
			sk_set_err(err, errlen,
				   "control: ring of lcore %u missing or not single-consumer", l);
			goto err;
		}
	batch = conf->batch_max ? conf->batch_max : SK_CONTROL_BATCH_MAX_DEFAULT;
	if (batch > (UINT32_C(1) << 24) || conf->batch_linger_ns < 0) {
		sk_set_err(err, errlen,
			   "control: batch of %" PRIu32 " records or linger out of range", batch);
		goto err;
	}

	rc = -ENOMEM;
	ctl = calloc(1, sizeof(*ctl));
	if (ctl == NULL)
		goto err;
	ctl->shm = shm;
	sk_shm_status(shm, &ctl->status);
	ctl->nrings = nrings;
	memcpy(ctl->ring, rings, nrings * sizeof(rings[0]));
	ctl->quota = batch / nrings;
	if (ctl->quota < SK_BUY_MAX_LINES)
		ctl->quota = SK_BUY_MAX_LINES;
	ctl->pay_timeout_ns = conf->pay_timeout_ns == 0	 ? SK_CONTROL_PAY_TIMEOUT_DEFAULT_NS
			      : conf->pay_timeout_ns < 0 ? 0
							 : conf->pay_timeout_ns;
	ctl->linger_ns = conf->batch_linger_ns;
	ctl->expire_max = conf->expire_max ? conf->expire_max : SK_CONTROL_EXPIRE_MAX_DEFAULT;
	size_t nbuf = (size_t)ctl->quota * nrings;
	ctl->buf = calloc(nbuf, sizeof(*ctl->buf));
	ctl->cbuf = calloc(nbuf, sizeof(*ctl->cbuf));
	ctl->outcome = calloc(nbuf, 1);
	ctl->exp = calloc(ctl->expire_max, sizeof(*ctl->exp));
	if (ctl->buf == NULL || ctl->cbuf == NULL || ctl->outcome == NULL || ctl->exp == NULL ||
	    pthread_mutex_init(&ctl->wlock, NULL) != 0) {
		sk_set_err(err, errlen, "control: out of memory");
		goto err;
	}
	ctl->mutex_ok = true;

	struct sk_store_conf sc = {.map_size = conf->store_map_size, .flags = conf->store_flags};
	rc = sk_store_open(&ctl->store, conf->store_dir, &sc, serr, sizeof(serr));
	if (rc != 0) {
		sk_set_err(err, errlen, "%s", serr);
		goto err;
	}

	reset_heads(ctl);
	lock(ctl);
	rc = repair(ctl);
	unlock(ctl);
	if (rc != 0) {
		sk_set_err(err, errlen, "control: repair at attach: %s", strerror(-rc));
		goto err;
	}
	*out = ctl;
	return 0;

err:
	ctl_free(ctl);
	return rc;
}

int
sk_control_attach(struct sk_control **out, const struct sk_control_conf *conf, char *err,
		  size_t errlen)
{
	struct rte_ring *rings[SK_MAX_LCORES];
	const struct rte_memzone *mz = rte_memzone_lookup(SK_SHM_MEMZONE);

	if (mz == NULL) {
		sk_set_err(err, errlen,
			   "control: no memzone '%s': is the dataplane running with the same "
			   "--file-prefix?",
			   SK_SHM_MEMZONE);
		return -ENOENT;
	}
	struct sk_shm *shm = sk_shm_attach(mz->addr, mz->len);
	if (shm == NULL || shm->nlcores == 0 || shm->nlcores > SK_MAX_LCORES) {
		sk_set_err(err, errlen,
			   "control: memzone '%s' is not an arena of this build's layout",
			   SK_SHM_MEMZONE);
		return -EPROTO;
	}
	for (unsigned l = 0; l < shm->nlcores; l++) {
		rings[l] = sk_order_ring_lookup(l);
		if (rings[l] == NULL) {
			sk_set_err(err, errlen, "control: no order ring 'sk_orders_%u' (%s)", l,
				   rte_strerror(rte_errno));
			return -ENOENT;
		}
	}
	return sk_control_init(out, shm, rings, shm->nlcores, conf, err, errlen);
}

void
sk_control_close(struct sk_control *ctl)
{
	ctl_free(ctl);
}

/* ------------------------------------------------------------------- views */

struct sk_shm *
sk_control_shm(const struct sk_control *ctl)
{
	return ctl->shm;
}

struct sk_store *
sk_control_store(const struct sk_control *ctl)
{
	return ctl->store;
}

unsigned
sk_control_nrings(const struct sk_control *ctl)
{
	return ctl->nrings;
}

unsigned
sk_control_ring_depth(const struct sk_control *ctl, unsigned lcore)
{
	return lcore < ctl->nrings ? rte_ring_count(ctl->ring[lcore]) : 0;
}

unsigned
sk_control_order_status(const struct sk_control *ctl, uint64_t id)
{
	return sk_status_get(&ctl->status, id);
}

void
sk_control_order_counts(const struct sk_control *ctl, uint64_t counts[SK_ORDER_FAILED + 1])
{
	uint32_t lim = UINT32_C(1) << ctl->status.bits;

	memset(counts, 0, (SK_ORDER_FAILED + 1) * sizeof(counts[0]));
	for (unsigned l = 0; l < ctl->nrings; l++) {
		const _Atomic uint8_t *b = ctl->status.base + ((size_t)l << ctl->status.bits);
		uint32_t settled = sk_shm_settled(ctl->shm, l), seq;

		if (settled > lim)
			settled = lim;
		for (seq = 0; seq < settled; seq++) {
			uint8_t v = atomic_load_explicit(&b[seq], memory_order_relaxed);
			if (v <= SK_ORDER_FAILED)
				counts[v]++;
		}
		/* Past settled: the orders still queued, up to the first unused sequence. */
		for (seq = settled > 1 ? settled : 1; seq < lim; seq++) {
			uint8_t v = atomic_load_explicit(&b[seq], memory_order_relaxed);
			if (v == SK_ORDER_NONE)
				break;
			if (v <= SK_ORDER_FAILED)
				counts[v]++;
		}
	}
	counts[SK_ORDER_NONE] = 0;
}

static void
item_from_arena(struct sk_control_item *out, const struct sk_item *it)
{
	out->in_arena = true;
	out->state = atomic_load(&((struct sk_item *)it)->state);
	out->sold_out = sk_stock_is_sold_out(it);
	out->per_user_limit = it->per_user_limit;
	out->start_ns = it->start_ns;
	out->end_ns = it->end_ns;
	out->price = it->price;
	out->total = it->total;
	out->added = atomic_load(&((struct sk_item *)it)->added);
	out->returned = atomic_load(&((struct sk_item *)it)->returned);
	out->remaining = sk_stock_remaining(it);
	out->sold = 0;
	for (uint32_t c = 0; c < it->nlcores; c++)
		out->sold += atomic_load(&((struct sk_item *)it)->bucket[c].sold);
}

static int
item_fill(struct sk_control *ctl, uint32_t id, const struct sk_item *it,
	  struct sk_control_item *out)
{
	memset(out, 0, sizeof(*out));
	out->id = id;
	if (it != NULL)
		item_from_arena(out, it);
	int rc = sk_store_activity_get(ctl->store, id, &out->activity, &out->ledger);
	if (rc == 0)
		out->has_activity = true;
	else if (rc != -ENOENT)
		return rc;
	return 0;
}

int
sk_control_item_get(struct sk_control *ctl, uint32_t id, struct sk_control_item *out)
{
	const struct sk_item *it = id != 0 ? sk_shm_item_find(ctl->shm, id) : NULL;
	int rc = item_fill(ctl, id, it, out);

	if (rc != 0)
		return rc;
	return out->in_arena || out->has_activity ? 0 : -ENOENT;
}

struct foreach_ctx {
	struct sk_control *ctl;
	sk_control_item_cb cb;
	void *arg;
};

static int
store_only_item(const struct sk_store_activity *a, const struct sk_store_ledger *ledger, void *arg)
{
	struct foreach_ctx *fc = arg;
	struct sk_control_item ci = {.id = a->item, .has_activity = true};

	if (sk_shm_item_find(fc->ctl->shm, a->item) != NULL)
		return 0;
	ci.activity = *a;
	ci.ledger = *ledger;
	return fc->cb(&ci, fc->arg);
}

int
sk_control_items_foreach(struct sk_control *ctl, sk_control_item_cb cb, void *arg)
{
	struct foreach_ctx fc = {ctl, cb, arg};
	struct sk_control_item ci;
	const struct sk_item *it;

	for (uint32_t i = 0; (it = sk_shm_item_at(ctl->shm, i)) != NULL; i++) {
		int rc = item_fill(ctl, it->id, it, &ci);
		if (rc == 0)
			rc = cb(&ci, arg);
		if (rc != 0)
			return rc;
	}
	return sk_store_activity_foreach(ctl->store, store_only_item, &fc);
}

void
sk_control_stats(const struct sk_control *ctl, struct sk_control_stats *out)
{
	const uint64_t *src = (const uint64_t *)&ctl->st;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ----------------------------------------------------------------- metrics */

/* One family per item metric: items are walked once, lines kept per family. */
enum {
	IM_TOTAL,
	IM_ADDED,
	IM_REMAINING,
	IM_SOLD,
	IM_RETURNED,
	IM_SOLD_OUT,
	IM_LIVE,
	IM_PAID,
	IM_N
};

static const struct {
	const char *name, *help;
} item_metrics[IM_N] = {
	[IM_TOTAL] = {"seckill_stock_total", "Units put on sale at preheat (arena)."},
	[IM_ADDED] = {"seckill_stock_added", "Units added by restocks (arena)."},
	[IM_REMAINING] = {"seckill_stock_remaining", "Units not yet sold: pool + buckets (arena)."},
	[IM_SOLD] = {"seckill_stock_sold", "Units sold by every lcore, before returns (arena)."},
	[IM_RETURNED] = {"seckill_stock_returned", "Units given back: timeouts, failures (arena)."},
	[IM_SOLD_OUT] = {"seckill_item_sold_out", "1 while the item's sold-out flag is up."},
	[IM_LIVE] = {"seckill_store_live_units", "Units held by live orders in LMDB."},
	[IM_PAID] = {"seckill_store_paid_units", "Units of paid order lines in LMDB."},
};

struct item_lines {
	FILE *f[IM_N];
	char *buf[IM_N];
	size_t len[IM_N];
};

static int
item_metric_cb(const struct sk_control_item *it, void *arg)
{
	struct item_lines *il = arg;
	uint64_t v[IM_N] = {
		[IM_TOTAL] = it->total,
		[IM_ADDED] = it->added,
		[IM_REMAINING] = it->remaining,
		[IM_SOLD] = it->sold,
		[IM_RETURNED] = it->returned,
		[IM_SOLD_OUT] = it->sold_out,
		[IM_LIVE] = sk_store_ledger_live(&it->ledger),
		[IM_PAID] = it->ledger.paid,
	};

	for (unsigned k = 0; k < IM_N; k++) {
		if (k < IM_LIVE && !it->in_arena)
			continue;
		fprintf(il->f[k], "%s{item=\"%" PRIu32 "\"} %" PRIu64 "\n", item_metrics[k].name,
			it->id, v[k]);
	}
	return 0;
}

static int
metrics_items(struct sk_control *ctl, struct sk_prom *m)
{
	struct item_lines il = {0};
	int rc = 0;

	for (unsigned k = 0; k < IM_N && rc == 0; k++) {
		il.f[k] = open_memstream(&il.buf[k], &il.len[k]);
		if (il.f[k] == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = sk_control_items_foreach(ctl, item_metric_cb, &il);
	for (unsigned k = 0; k < IM_N; k++) {
		if (il.f[k] == NULL)
			continue;
		if (fclose(il.f[k]) != 0 && rc == 0)
			rc = -ENOMEM;
		if (rc == 0) {
			sk_prom_head(m, item_metrics[k].name, "gauge", item_metrics[k].help);
			sk_prom_printf(m, "%s", il.buf[k]);
		}
		free(il.buf[k]);
	}
	return rc;
}

int
sk_control_metrics(struct sk_control *ctl, FILE *out)
{
	struct sk_prom m = {out, 0};
	struct sk_control_stats s;
	uint64_t counts[SK_ORDER_FAILED + 1];
	struct sk_store_info si;
	int rc;

	sk_control_stats(ctl, &s);
	sk_prom_counter(&m, "seckill_orders_committed_total",
			"Orders made durable in LMDB and confirmed by this control plane.",
			s.orders_committed);
	sk_prom_counter(&m, "seckill_units_committed_total", "Units of the committed orders.",
			s.units_committed);
	sk_prom_counter(&m, "seckill_commit_batches_total",
			"Group commits (LMDB write transactions).", s.batches);
	sk_prom_counter(&m, "seckill_drain_records_total", "Order records removed from the rings.",
			s.records);
	sk_prom_counter(&m, "seckill_orders_replayed_total",
			"Orders found already stored when drained (replay after a crash).",
			s.orders_dup);
	sk_prom_counter(&m, "seckill_orders_failed_total",
			"Orders the store refused: failed, units returned.", s.orders_failed);
	sk_prom_counter(&m, "seckill_drain_errors_total",
			"Drains that failed on a store error (records left queued).",
			s.store_errors);
	sk_prom_counter(&m, "seckill_commit_splits_total",
			"Batches split because too large for one transaction.", s.batch_splits);
	sk_prom_counter(&m, "seckill_orders_cancelled_total",
			"Orders cancelled at their payment deadline.", s.cancels);
	sk_prom_counter(&m, "seckill_orders_cancelled_foreign_total",
			"Cancelled orders of an earlier dataplane run.", s.cancels_foreign);
	sk_prom_counter(&m, "seckill_units_returned_total",
			"Units given back to the pool by cancels and failures.", s.units_returned);
	sk_prom_counter(&m, "seckill_orders_paid_total", "Orders paid.",
			s.pay[SK_CONTROL_PAY_DONE]);
	sk_prom_head(&m, "seckill_pay_requests_total", "counter", "Pay calls by result.");
	for (int r = 0; r <= SK_CONTROL_PAY_UNKNOWN; r++)
		sk_prom_printf(&m, "seckill_pay_requests_total{result=\"%s\"} %" PRIu64 "\n",
			       sk_control_pay_result_name(r), s.pay[r]);
	sk_prom_printf(&m, "seckill_pay_requests_total{result=\"error\"} %" PRIu64 "\n",
		       s.pay_errors);
	sk_prom_counter(&m, "seckill_orders_repaired_total",
			"Orders brought in line with the store after a crash.", s.repaired);
	sk_prom_counter(&m, "seckill_control_anomalies_total",
			"Disagreements between arena and store that could not be repaired.",
			s.anomalies);
	sk_prom_counter(&m, "seckill_activities_created_total",
			"Activities created through the admin API.", s.activities_created);
	sk_prom_counter(&m, "seckill_activities_recorded_total",
			"Items of the dataplane's config stored as activities.",
			s.activities_recorded);
	sk_prom_counter(&m, "seckill_activities_loaded_total",
			"Activities put on sale in the item table by preheat.",
			s.activities_loaded);
	sk_prom_counter(&m, "seckill_activities_closed_total", "Activities closed.",
			s.activities_closed);
	sk_prom_counter(&m, "seckill_units_restocked_total", "Units added to items by restocks.",
			s.units_restocked);
	sk_prom_counter(&m, "seckill_preheat_errors_total",
			"Attempts to put an activity on sale that the item table refused.",
			s.preheat_errors);

	sk_prom_histogram(&m, "seckill_commit_seconds",
			  "Latency of one group commit (durable LMDB write transaction).",
			  s.commit_bucket, sk_control_lat_bounds_ns, SK_CONTROL_LAT_BUCKETS,
			  s.commit_ns_sum);

	sk_prom_head(&m, "seckill_ring_depth", "gauge",
		     "Order records waiting in each lcore's ring.");
	for (unsigned l = 0; l < ctl->nrings; l++)
		sk_prom_printf(&m, "seckill_ring_depth{lcore=\"%u\"} %u\n", l,
			       sk_control_ring_depth(ctl, l));
	sk_prom_head(&m, "seckill_settled_seq", "gauge",
		     "First order sequence of each lcore not yet settled.");
	for (unsigned l = 0; l < ctl->nrings; l++)
		sk_prom_printf(&m, "seckill_settled_seq{lcore=\"%u\"} %" PRIu32 "\n", l,
			       sk_shm_settled(ctl->shm, l));

	sk_control_order_counts(ctl, counts);
	sk_prom_head(&m, "seckill_orders", "gauge", "Orders of this dataplane run by status.");
	for (unsigned st = SK_ORDER_QUEUED; st <= SK_ORDER_FAILED; st++)
		sk_prom_printf(&m, "seckill_orders{state=\"%s\"} %" PRIu64 "\n",
			       sk_order_status_name(st), counts[st]);

	rc = metrics_items(ctl, &m);
	if (rc != 0)
		return rc;

	rc = sk_store_info(ctl->store, &si);
	if (rc != 0)
		return rc;
	sk_prom_gauge(&m, "seckill_store_used_bytes", "Bytes of the LMDB map in use.",
		      si.used_bytes);
	sk_prom_gauge(&m, "seckill_store_map_bytes", "Bytes the LMDB map may grow to.",
		      si.map_size);
	sk_prom_gauge(&m, "seckill_store_order_lines", "Order lines in LMDB.", si.order_lines);
	sk_prom_gauge(&m, "seckill_store_deadlines", "Unpaid orders waiting for their deadline.",
		      si.deadlines);
	sk_prom_gauge(&m, "seckill_store_events", "Events in the log (not yet trimmed).",
		      si.events);
	sk_prom_gauge(&m, "seckill_store_readers", "LMDB reader slots in use.", si.readers);
	sk_prom_gauge(&m, "seckill_dataplane_epoch",
		      "Order-id epoch of the attached dataplane run.", ctl->status.epoch);
	sk_prom_head(&m, "seckill_last_commit_timestamp_seconds", "gauge",
		     "Wall clock of the last group commit.");
	sk_prom_printf(&m, "seckill_last_commit_timestamp_seconds %.3f\n",
		       (double)s.last_commit_ns / 1e9);
	if (m.err == 0)
		m.err = sk_dpmetrics_write(ctl->shm, out);
	if (m.err == 0 && ctl->extra_metrics != NULL)
		m.err = ctl->extra_metrics(ctl->extra_arg, out);
	if (fflush(out) != 0)
		m.err = -EIO;
	return m.err;
}

void
sk_control_metrics_extra(struct sk_control *ctl, sk_control_metrics_fn fn, void *arg)
{
	ctl->extra_metrics = fn;
	ctl->extra_arg = arg;
}
