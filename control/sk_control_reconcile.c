/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's periodic reconcile (sk_reconcile.h): snapshots of
 * the items between two peeks of the order rings, the rule of
 * sk_reconcile_item() with the orders in flight as its bounds, results
 * confirmed over time, and their metrics.
 *
 * Sections: state, in flight, the run, metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_control.h"
#include "sk_control_impl.h"
#include "sk_prom.h"
#include "sk_reconcile.h"

/* ------------------------------------------------------------------ state */

enum { CHECK_STOCK, CHECK_STORE, CHECKS };

static const char *const check_name[CHECKS] = {"stock", "store"};

/* What the runs found for one item slot of the arena. */
struct rec_slot {
	uint32_t id;		  /* item id; 0: never checked */
	bool suspect[CHECKS];	  /* failing since first_ns */
	bool reported[CHECKS];	  /* failing for SK_RECONCILE_CONFIRM_NS at least */
	int64_t first_ns[CHECKS]; /* wall clock of the first failing run */
	int64_t diff[CHECKS];	  /* the last failing run's difference */
};

enum { RUN_OK, RUN_MISMATCH, RUN_PARTIAL, RUN_RESULTS };

/* the result label of runs[], NULL-terminated (a table row's values) */
static const char *const run_name[RUN_RESULTS + 1] = {"ok", "mismatch", "partial", NULL};

struct ctl_reconcile {
	/* Guards what the metrics read: slot[], runs[], last_ns. */
	pthread_mutex_t mu;
	bool mutex_ok;
	uint32_t nslots; /* shm->max_items */
	uint32_t cursor; /* first slot of the next run */
	struct rec_slot *slot;
	/* Main thread only (scratch of one run). */
	uint64_t *lo, *hi;	      /* per slot: units in flight, first and second peek */
	uint32_t *pending;	      /* slots still to check in this run */
	struct sk_reconcile_in *fig;  /* their figures, by index in pending[] */
	struct sk_reconcile_out *out; /* per slot: its verdict in this run */
	uint64_t runs[RUN_RESULTS];
	int64_t last_ns;
};

int
ctl_reconcile_init(struct sk_control *ctl)
{
	struct ctl_reconcile *rs = calloc(1, sizeof(*rs));
	uint32_t n = ctl->shm->max_items;

	if (rs == NULL)
		return -ENOMEM;
	rs->nslots = n;
	rs->slot = calloc(n, sizeof(*rs->slot));
	rs->lo = calloc(n, sizeof(*rs->lo));
	rs->hi = calloc(n, sizeof(*rs->hi));
	rs->out = calloc(n, sizeof(*rs->out));
	rs->pending = calloc(SK_RECONCILE_ITEMS_PER_RUN, sizeof(*rs->pending));
	rs->fig = calloc(SK_RECONCILE_ITEMS_PER_RUN, sizeof(*rs->fig));
	ctl->rec = rs;
	if (rs->slot == NULL || rs->lo == NULL || rs->hi == NULL || rs->out == NULL ||
	    rs->pending == NULL || rs->fig == NULL || pthread_mutex_init(&rs->mu, NULL) != 0) {
		ctl_reconcile_free(ctl);
		return -ENOMEM;
	}
	rs->mutex_ok = true;
	return 0;
}

void
ctl_reconcile_free(struct sk_control *ctl)
{
	struct ctl_reconcile *rs = ctl->rec;

	if (rs == NULL)
		return;
	if (rs->mutex_ok)
		pthread_mutex_destroy(&rs->mu);
	free(rs->slot);
	free(rs->lo);
	free(rs->hi);
	free(rs->out);
	free(rs->pending);
	free(rs->fig);
	free(rs);
	ctl->rec = NULL;
}

/* -------------------------------------------------------------- in flight */

/* slot_of - the arena slot of item @id, or UINT32_MAX if the arena lacks it. */
static uint32_t
slot_of(const struct sk_shm *shm, uint32_t id)
{
	const struct sk_item *it = sk_shm_item_find(shm, id);

	return it != NULL ? (uint32_t)(it - sk_shm_item_at(shm, 0)) : UINT32_MAX;
}

/*
 * inflight - units per item slot (the first @n) of the orders waiting in
 * the rings whose status is still queued: sold by the dataplane, not yet
 * in the store. A record whose order is failed (a predecessor gave its
 * units back) or confirmed (committed before a crash, in the store) is not
 * in flight. Peeks without consuming (finish(0)): only the rings' consumer
 * may call this, between drains. Returns false if a ring held more than a
 * drain's share (the units are then a lower bound).
 */
static bool
inflight(struct sk_control *ctl, uint64_t *units, uint32_t n)
{
	bool whole = true;

	memset(units, 0, n * sizeof(*units));
	for (unsigned l = 0; l < ctl->nrings; l++) {
		unsigned left = 0;
		unsigned got = rte_ring_dequeue_burst_elem_start(
			ctl->ring[l], ctl->buf, sizeof(*ctl->buf), ctl->quota, &left);

		for (unsigned i = 0; i < got; i++) {
			const struct sk_order_rec *r = &ctl->buf[i];
			uint32_t s;

			if (sk_status_get(&ctl->status, r->id) != SK_ORDER_QUEUED)
				continue;
			s = slot_of(ctl->shm, r->item);
			if (s < n)
				units[s] += r->qty;
		}
		rte_ring_dequeue_elem_finish(ctl->ring[l], 0);
		if (left > 0)
			whole = false;
	}
	return whole;
}

/* ---------------------------------------------------------------- the run */

/*
 * snapshot - one snapshot of the slots in rs->pending[0, *np): peek, read
 * each item, peek again, apply the rule. Slots that add up leave pending[];
 * *np becomes what is left. *partial is set if the second peek did not see
 * every record. Under ctl->wlock.
 */
static int
snapshot(struct sk_control *ctl, struct ctl_reconcile *rs, uint32_t n, uint32_t *np, bool *partial)
{
	struct sk_control_item ci;
	uint32_t left = 0;
	bool whole;

	inflight(ctl, rs->lo, n);
	for (uint32_t j = 0; j < *np; j++) {
		uint32_t s = rs->pending[j];
		int rc = sk_control_item_get(ctl, sk_shm_item_at(ctl->shm, s)->id, &ci);

		if (rc != 0)
			return rc;
		rs->fig[j] = (struct sk_reconcile_in){.total = ci.total,
						      .added = ci.added,
						      .removed = ci.removed,
						      .remaining = ci.remaining,
						      .sold = ci.sold,
						      .returned = ci.returned,
						      .live = sk_store_ledger_live(&ci.ledger),
						      .inflight_min = rs->lo[s]};
	}
	whole = inflight(ctl, rs->hi, n);
	*partial |= !whole;
	for (uint32_t j = 0; j < *np; j++) {
		uint32_t s = rs->pending[j];

		rs->fig[j].inflight_max = whole ? rs->hi[s] : UINT64_MAX;
		sk_reconcile_item(&rs->fig[j], &rs->out[s]);
		if (!rs->out[s].stock_ok || !rs->out[s].store_ok)
			rs->pending[left++] = s;
	}
	*np = left;
	return 0;
}

/*
 * judge - fold this run's verdict of slot @s (item @id) into what the runs
 * found: a check failing for SK_RECONCILE_CONFIRM_NS is reported, one that
 * passes is cleared. Under rs->mu.
 */
static void
judge(struct ctl_reconcile *rs, uint32_t s, uint32_t id, int64_t now_ns, uint32_t *suspect)
{
	struct rec_slot *sl = &rs->slot[s];
	const struct sk_reconcile_out *o = &rs->out[s];
	const bool ok[CHECKS] = {o->stock_ok, o->store_ok};
	const int64_t diff[CHECKS] = {o->stock_diff, o->store_diff};

	sl->id = id;
	if (!ok[CHECK_STOCK] || !ok[CHECK_STORE])
		(*suspect)++;
	for (unsigned k = 0; k < CHECKS; k++) {
		if (ok[k]) {
			sl->suspect[k] = sl->reported[k] = false;
			sl->diff[k] = 0;
			continue;
		}
		if (!sl->suspect[k]) {
			sl->suspect[k] = true;
			sl->first_ns[k] = now_ns;
		}
		sl->diff[k] = diff[k];
		if (now_ns - sl->first_ns[k] >= SK_RECONCILE_CONFIRM_NS)
			sl->reported[k] = true;
	}
}

int
sk_control_reconcile(struct sk_control *ctl, int64_t now_ns, struct sk_reconcile_info *info)
{
	struct ctl_reconcile *rs = ctl->rec;
	struct sk_reconcile_info ri = {0};
	uint32_t n = atomic_load(&ctl->shm->nitems), count, np, mism = 0;
	int rc = 0;

	if (info != NULL)
		*info = ri;
	if (rs == NULL)
		return -ENOMEM;
	if (n > rs->nslots)
		n = rs->nslots;
	count = n < SK_RECONCILE_ITEMS_PER_RUN ? n : SK_RECONCILE_ITEMS_PER_RUN;
	if (rs->cursor >= n)
		rs->cursor = 0;
	for (uint32_t j = 0; j < count; j++)
		rs->pending[j] = (rs->cursor + j) % n;
	np = count;

	lock(ctl);
	for (unsigned a = 0; a < SK_RECONCILE_ATTEMPTS && np > 0 && rc == 0; a++)
		rc = snapshot(ctl, rs, n, &np, &ri.partial);
	unlock(ctl);
	if (rc != 0)
		return rc;

	pthread_mutex_lock(&rs->mu);
	for (uint32_t j = 0; j < count; j++) {
		uint32_t s = (rs->cursor + j) % n;
		judge(rs, s, sk_shm_item_at(ctl->shm, s)->id, now_ns, &ri.suspect);
	}
	for (uint32_t s = 0; s < n; s++)
		if (rs->slot[s].reported[CHECK_STOCK] || rs->slot[s].reported[CHECK_STORE])
			mism++;
	rs->runs[mism > 0 ? RUN_MISMATCH : ri.partial ? RUN_PARTIAL : RUN_OK]++;
	rs->last_ns = now_ns;
	pthread_mutex_unlock(&rs->mu);

	rs->cursor = n > 0 ? (rs->cursor + count) % n : 0;
	ri.items = count;
	ri.mismatches = mism;
	if (info != NULL)
		*info = ri;
	return 0;
}

/* ---------------------------------------------------------------- metrics */

/* The table's snapshot is struct ctl_reconcile itself, read under its lock. */

static void
emit_mismatch(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct ctl_reconcile *rs = arg;

	for (uint32_t s = 0; s < rs->nslots; s++)
		if (rs->slot[s].id != 0)
			sk_prom_printf(p, "%s{item=\"%" PRIu32 "\"} %d\n", m->name, rs->slot[s].id,
				       rs->slot[s].reported[CHECK_STOCK] ||
					       rs->slot[s].reported[CHECK_STORE]);
}

static void
emit_difference(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct ctl_reconcile *rs = arg;

	for (uint32_t s = 0; s < rs->nslots; s++)
		for (unsigned k = 0; k < CHECKS && rs->slot[s].id != 0; k++)
			sk_prom_printf(p, "%s{item=\"%" PRIu32 "\",check=\"%s\"} %" PRId64 "\n",
				       m->name, rs->slot[s].id, check_name[k],
				       rs->slot[s].reported[k] ? rs->slot[s].diff[k] : 0);
}

static const struct sk_prom_metric reconcile_rows[] = {
	{.name = "seckill_reconcile_mismatch",
	 .type = SK_PROM_GAUGE,
	 .labels = "item",
	 .help = "1 while the periodic reconcile reports the item: its arena counters do not "
		 "add up, or disagree with LMDB beyond the orders in flight, for 1 s or more.",
	 .emit = emit_mismatch},
	{.name = "seckill_reconcile_difference_units",
	 .type = SK_PROM_GAUGE,
	 .labels = "item,check",
	 .help = "Units of a reported mismatch (0 otherwise): stock = total + added - removed - "
		 "(remaining + sold - returned); store = sold - returned - LMDB live units "
		 "beyond the orders in flight.",
	 .emit = emit_difference},
	{.name = "seckill_reconcile_runs_total",
	 .type = SK_PROM_COUNTER,
	 .labels = "result",
	 .help = "Periodic reconcile runs by result (partial: a ring held more than one "
		 "drain's share, the store check had a lower bound only).",
	 .off = offsetof(struct ctl_reconcile, runs),
	 .values = run_name},
	{.name = "seckill_reconcile_last_run_timestamp_seconds",
	 .type = SK_PROM_GAUGE,
	 .help = "Wall clock of the last periodic reconcile run (0: none yet).",
	 .off = offsetof(struct ctl_reconcile, last_ns),
	 .decimals = 3},
};

const struct sk_prom_table sk_control_reconcile_table = SK_PROM_TABLE(reconcile_rows);

int
sk_control_reconcile_metrics(struct sk_control *ctl, FILE *out)
{
	struct ctl_reconcile *rs = ctl->rec;
	struct sk_prom p = {out, 0};

	if (rs == NULL)
		return 0;
	pthread_mutex_lock(&rs->mu);
	sk_prom_write(&p, &sk_control_reconcile_table, rs);
	pthread_mutex_unlock(&rs->mu);
	return p.err;
}
