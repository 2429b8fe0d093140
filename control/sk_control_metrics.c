/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's counters and its /metrics text (see sk_control.h
 * and docs/monitoring.md): sk_control_stats, sk_control_metrics, the
 * per-item gauges, the dataplane's request metrics appended through
 * sk_dpmetrics, and the reconcile's through sk_control_reconcile_metrics.
 *
 * Every family is a row of a table (sk_prom.h): control_rows here, and one
 * table in each other writer. sk_control_metrics_list() lists them all, the
 * list the tests hold docs/monitoring.md and the alert rules to.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ring.h>

#include "sk_control.h"
#include "sk_admin.h"
#include "sk_control_impl.h"
#include "sk_exporter.h"
#include "sk_member.h"
#include "sk_dpmetrics.h"
#include "sk_prom.h"
#include "sk_reconcile.h"

const uint64_t sk_control_lat_bounds_ns[SK_CONTROL_LAT_BUCKETS] = {
	50000,	   100000,     200000,	   500000,     1000000,	  2000000,
	5000000,   10000000,   20000000,   50000000,   100000000, 200000000,
	500000000, 1000000000, 2000000000, 5000000000, 0, /* +Inf */
};

_Static_assert(sizeof(struct sk_control_stats) % sizeof(uint64_t) == 0,
	       "sk_control_stats must hold uint64_t fields only");

void
sk_control_stats(const struct sk_control *ctl, struct sk_control_stats *out)
{
	const uint64_t *src = (const uint64_t *)&ctl->st;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ----------------------------------------------------------------- metrics */

/*
 * The snapshot the table reads: everything is gathered first (counters,
 * order counts, the per-item lines, the store's sizes), then written.
 */
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

struct snap {
	struct sk_control *ctl;
	struct sk_control_stats s;
	uint64_t counts[SK_ORDER_STATUS_COUNT];
	uint64_t used_bytes, map_size, order_lines, deadlines, events, readers;
	uint64_t disk_free, map_max;
	uint64_t up, epoch;
	/* per item family: its sample lines less the name, from one walk of the items */
	char *buf[IM_N];
	size_t len[IM_N];
};

struct item_lines {
	FILE *f[IM_N];
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
		fprintf(il->f[k], "{item=\"%" PRIu32 "\"} %" PRIu64 "\n", it->id, v[k]);
	}
	return 0;
}

/* snap_items - the lines of every item family into sn->buf (freed by snap_free). */
static int
snap_items(struct snap *sn)
{
	struct item_lines il = {0};
	int rc = 0;

	for (unsigned k = 0; k < IM_N && rc == 0; k++) {
		il.f[k] = open_memstream(&sn->buf[k], &sn->len[k]);
		if (il.f[k] == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = sk_control_items_foreach(sn->ctl, item_metric_cb, &il);
	for (unsigned k = 0; k < IM_N; k++)
		if (il.f[k] != NULL && fclose(il.f[k]) != 0 && rc == 0)
			rc = -ENOMEM;
	return rc;
}

static void
snap_free(struct snap *sn)
{
	for (unsigned k = 0; k < IM_N; k++)
		free(sn->buf[k]);
}

/*
 * dataplane_up - 1 while the process that owns the arena lives: for an
 * attached control plane, whether the DPDK primary still holds the lock
 * of its runtime config file (released by the kernel when it dies, kill -9
 * included); an arena given by pointer belongs to this process.
 */
static uint64_t
dataplane_up(const struct sk_control *ctl)
{
	return !ctl->attached || rte_eal_primary_proc_alive(NULL) == 1;
}

static int
snap_take(struct sk_control *ctl, struct snap *sn)
{
	struct sk_store_info si;
	int rc;

	sn->ctl = ctl;
	sk_control_stats(ctl, &sn->s);
	sk_control_order_counts(ctl, sn->counts);
	rc = snap_items(sn);
	if (rc == 0)
		rc = sk_store_info(ctl->store, &si);
	if (rc != 0)
		return rc;
	sn->used_bytes = si.used_bytes;
	sn->map_size = si.map_size;
	sn->order_lines = si.order_lines;
	sn->deadlines = si.deadlines;
	sn->events = si.events;
	sn->readers = si.readers;
	struct sk_store_map_info mi;
	if (sk_store_map_info(ctl->store, &mi) == 0)
		sn->disk_free = mi.disk_free;
	sn->map_max = ctl->map_pol.max_size;
	sn->up = dataplane_up(ctl);
	sn->epoch = ctl->status.epoch;
	return 0;
}

/* ------------------------------------------------- writers of labelled rows */

static void
emit_pay_requests(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;

	for (int r = 0; r <= SK_CONTROL_PAY_UNKNOWN; r++)
		sk_prom_printf(p, "%s{result=\"%s\"} %" PRIu64 "\n", m->name,
			       sk_control_pay_result_name(r), sn->s.pay[r]);
	sk_prom_printf(p, "%s{result=\"error\"} %" PRIu64 "\n", m->name, sn->s.pay_errors);
}

static void
emit_payments(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;

	for (int k = 0; k < 2; k++)
		for (unsigned o = 0; o < SK_CONTROL_PM_COUNT; o++)
			sk_prom_printf(p, "%s{kind=\"%s\",outcome=\"%s\"} %" PRIu64 "\n", m->name,
				       k ? "refund" : "paid", sk_control_pm_outcome_name(o),
				       sn->s.payments[k][o]);
}

static void
emit_rejected(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;

	for (unsigned r = SK_STORE_REJ_UNSIGNED; r <= SK_STORE_REJ_STALE; r++)
		sk_prom_printf(p, "%s{reason=\"%s\"} %" PRIu64 "\n", m->name,
			       sk_store_pay_reject_name(r), sn->s.payments_rejected[r]);
}

enum { RING_DEPTH, RING_CAPACITY, RING_SETTLED };

static void
emit_rings(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;
	const struct sk_control *ctl = sn->ctl;

	for (unsigned l = 0; l < ctl->nrings; l++) {
		unsigned v = m->arg == RING_DEPTH ? sk_control_ring_depth(ctl, l)
			     : m->arg == RING_CAPACITY
				     ? rte_ring_get_capacity(ctl->ring[l])
				     : sk_order_id_seq(sk_shm_settled(ctl->shm, l));

		sk_prom_printf(p, "%s{lcore=\"%u\"} %u\n", m->name, l, v);
	}
}

static void
emit_orders(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;

	for (unsigned st = SK_ORDER_QUEUED; st < SK_ORDER_STATUS_COUNT; st++)
		sk_prom_printf(p, "%s{state=\"%s\"} %" PRIu64 "\n", m->name,
			       sk_order_status_name(st), sn->counts[st]);
}

static void
emit_items(struct sk_prom *p, const struct sk_prom_metric *m, const void *arg)
{
	const struct snap *sn = arg;
	const char *line = sn->buf[m->arg], *end;

	for (; line != NULL && *line != '\0'; line = end + 1) {
		end = strchr(line, '\n');
		sk_prom_printf(p, "%s%.*s\n", m->name, (int)(end - line), line);
	}
}

/* ------------------------------------------------------------------- table */

#define C(n, h, f) SK_PROM_AT(SK_PROM_COUNTER, n, h, struct snap, f)
#define G(n, h, f) SK_PROM_AT(SK_PROM_GAUGE, n, h, struct snap, f)
#define E(n, t, l, h, fn, a)                                                                       \
	{                                                                                          \
		.name = (n), .type = (t), .labels = (l), .help = (h), .emit = (fn), .arg = (a)     \
	}

static const struct sk_prom_metric control_rows[] = {
	C("seckill_orders_committed_total",
	  "Orders made durable in LMDB and confirmed by this control plane.", s.orders_committed),
	C("seckill_units_committed_total", "Units of the committed orders.", s.units_committed),
	C("seckill_commit_batches_total", "Group commits (LMDB write transactions).", s.batches),
	C("seckill_drain_records_total", "Order records removed from the rings.", s.records),
	C("seckill_orders_replayed_total",
	  "Orders found already stored when drained (replay after a crash).", s.orders_dup),
	C("seckill_orders_failed_total", "Orders the store refused: failed, units returned.",
	  s.orders_failed),
	C("seckill_drain_errors_total",
	  "Drains that failed on a store error (records left queued).", s.store_errors),
	C("seckill_commit_splits_total", "Batches split because too large for one transaction.",
	  s.batch_splits),
	C("seckill_orders_cancelled_total", "Orders cancelled at their payment deadline.",
	  s.cancels),
	C("seckill_orders_cancelled_foreign_total", "Cancelled orders of an earlier dataplane run.",
	  s.cancels_foreign),
	C("seckill_units_returned_total", "Units given back to the pool by cancels and failures.",
	  s.units_returned),
	C("seckill_orders_paid_total", "Orders paid.", s.pay[SK_CONTROL_PAY_DONE]),
	E("seckill_pay_requests_total", SK_PROM_COUNTER, "result", "Pay calls by result.",
	  emit_pay_requests, 0),
	E("seckill_payments_total", SK_PROM_COUNTER, "kind,outcome",
	  "Payment messages (seckill.payments and the admin refund) by kind and outcome.",
	  emit_payments, 0),
	C("seckill_payments_duplicates_total",
	  "Payment messages whose request id was seen before (first outcome kept).",
	  s.payments_dup),
	C("seckill_payments_malformed_total", "Payment messages that could not be read: skipped.",
	  s.payments_malformed),
	E("seckill_payments_rejected_total", SK_PROM_COUNTER, "reason",
	  "seckill.payments messages refused unapplied (signature), by reason.", emit_rejected, 0),
	C("seckill_payments_errors_total",
	  "Payment messages that failed on a store error (retried).", s.payments_errors),
	C("seckill_units_refunded_total", "Units back on sale from refunds.", s.units_refunded),
	C("seckill_orders_repaired_total", "Orders brought in line with the store after a crash.",
	  s.repaired),
	C("seckill_control_anomalies_total",
	  "Disagreements between arena and store that could not be repaired.", s.anomalies),
	C("seckill_activities_created_total", "Activities created through the admin API.",
	  s.activities_created),
	C("seckill_activities_recorded_total",
	  "Items of the dataplane's config stored as activities.", s.activities_recorded),
	C("seckill_activities_loaded_total", "Activities put on sale in the item table by preheat.",
	  s.activities_loaded),
	C("seckill_activities_closed_total", "Activities closed.", s.activities_closed),
	C("seckill_units_restocked_total", "Units added to items by restocks.", s.units_restocked),
	C("seckill_activities_archived_total", "Activities whose orders were archived.",
	  s.activities_archived),
	C("seckill_orders_archived_total", "Archived orders deleted from the store.",
	  s.orders_archived),
	C("seckill_store_events_trimmed_total", "Events trimmed from the store's event log.",
	  s.events_trimmed),
	C("seckill_retention_errors_total",
	  "Retention steps (purge, trim, policy) that failed on an error (retried).",
	  s.retention_errors),
	C("seckill_preheat_errors_total",
	  "Attempts to put an activity on sale that the item table refused.", s.preheat_errors),
	C("seckill_preheat_passes_total",
	  "Preheat passes (the store's activities into the item table, every second).",
	  s.preheat_passes),
	{.name = "seckill_commit_seconds",
	 .type = SK_PROM_HISTOGRAM,
	 .help = "Latency of one group commit (durable LMDB write transaction).",
	 .off = offsetof(struct snap, s.commit_bucket),
	 .bounds_ns = sk_control_lat_bounds_ns,
	 .nbuckets = SK_CONTROL_LAT_BUCKETS,
	 .sum_off = offsetof(struct snap, s.commit_ns_sum)},
	E("seckill_ring_depth", SK_PROM_GAUGE, "lcore",
	  "Order records waiting in each lcore's ring.", emit_rings, RING_DEPTH),
	E("seckill_ring_capacity", SK_PROM_GAUGE, "lcore",
	  "Order records each lcore's ring can hold (buys answer 429 busy when full).", emit_rings,
	  RING_CAPACITY),
	E("seckill_settled_seq", SK_PROM_GAUGE, "lcore",
	  "Sequence (in its epoch) of the first order of each lcore not yet settled.", emit_rings,
	  RING_SETTLED),
	E("seckill_orders", SK_PROM_GAUGE, "state",
	  "Orders in the status table (the last ones of each lcore) by status.", emit_orders, 0),
	E("seckill_stock_initial", SK_PROM_GAUGE, "item", "Units put on sale at preheat (arena).",
	  emit_items, IM_TOTAL),
	E("seckill_stock_added", SK_PROM_GAUGE, "item", "Units added by restocks (arena).",
	  emit_items, IM_ADDED),
	E("seckill_stock_remaining", SK_PROM_GAUGE, "item",
	  "Units not yet sold: pool + buckets (arena).", emit_items, IM_REMAINING),
	E("seckill_stock_sold", SK_PROM_GAUGE, "item",
	  "Units sold by every lcore, before returns (arena).", emit_items, IM_SOLD),
	E("seckill_stock_returned", SK_PROM_GAUGE, "item",
	  "Units given back: timeouts, failures (arena).", emit_items, IM_RETURNED),
	E("seckill_item_sold_out", SK_PROM_GAUGE, "item", "1 while the item's sold-out flag is up.",
	  emit_items, IM_SOLD_OUT),
	E("seckill_store_live_units", SK_PROM_GAUGE, "item", "Units held by live orders in LMDB.",
	  emit_items, IM_LIVE),
	E("seckill_store_paid_units", SK_PROM_GAUGE, "item", "Units of paid order lines in LMDB.",
	  emit_items, IM_PAID),
	G("seckill_store_used_bytes", "Bytes of the LMDB map in use.", used_bytes),
	G("seckill_store_map_bytes", "Bytes the LMDB map may grow to.", map_size),
	G("seckill_store_map_max_bytes",
	  "The largest the map may grow to online (--map-max-mb); 0: no cap but the disk.",
	  map_max),
	G("seckill_store_disk_free_bytes", "Free bytes of the store's file system (statvfs).",
	  disk_free),
	C("seckill_store_map_grows_total", "Online grows of the LMDB map.", s.map_grows),
	C("seckill_store_map_grow_busy_total",
	  "Grows put off because store calls stayed open (retried).", s.map_grow_busy),
	C("seckill_store_map_grow_errors_total", "Grows LMDB or the file system refused.",
	  s.map_grow_errors),
	{.name = "seckill_store_map_grow_pause_seconds",
	 .type = SK_PROM_GAUGE,
	 .help = "How long the last grow paused group commits.",
	 .off = offsetof(struct snap, s.map_grow_pause_ns),
	 .decimals = 6},
	G("seckill_store_map_capped",
	  "1 while the map is past its grow threshold with no room left to grow.", s.map_capped),
	G("seckill_store_order_lines", "Order lines in LMDB.", order_lines),
	G("seckill_store_deadlines", "Unpaid orders waiting for their deadline.", deadlines),
	G("seckill_store_events", "Events in the log (not yet trimmed).", events),
	G("seckill_store_readers", "LMDB reader slots in use.", readers),
	G("seckill_dataplane_up", "1 while the dataplane (the DPDK primary process) is alive.", up),
	G("seckill_dataplane_epoch", "Order-id epoch of the attached dataplane run.", epoch),
	{.name = "seckill_last_commit_timestamp_seconds",
	 .type = SK_PROM_GAUGE,
	 .help = "Wall clock of the last group commit.",
	 .off = offsetof(struct snap, s.last_commit_ns),
	 .decimals = 3},
};

static const struct sk_prom_table control_table = SK_PROM_TABLE(control_rows);

int
sk_control_metrics(struct sk_control *ctl, FILE *out)
{
	struct sk_prom m = {out, 0};
	struct snap sn = {0};
	int rc;

	rc = snap_take(ctl, &sn);
	if (rc == 0)
		sk_prom_write(&m, &control_table, &sn);
	snap_free(&sn);
	if (rc != 0)
		return rc;
	if (m.err == 0)
		m.err = sk_control_reconcile_metrics(ctl, out);
	if (m.err == 0)
		m.err = sk_dpmetrics_write(ctl->shm, out);
	if (m.err == 0 && ctl->extra_metrics != NULL)
		m.err = ctl->extra_metrics(ctl->extra_arg, out);
	if (m.err == 0 && ctl->member != NULL)
		m.err = sk_member_metrics(ctl->member, out);
	if (fflush(out) != 0)
		m.err = -EIO;
	return m.err;
}

int
sk_control_metrics_list(FILE *out)
{
	const struct sk_prom_table *t[] = {
		&control_table,	     &sk_control_reconcile_table,
		&sk_dpmetrics_table, &sk_exporter_table,
		&sk_member_table,    &sk_admin_table,
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]) && rc == 0; i++)
		rc = sk_prom_list(out, t[i]);
	if (rc == 0 && fflush(out) != 0)
		rc = -EIO;
	return rc;
}

void
sk_control_metrics_extra(struct sk_control *ctl, sk_control_metrics_fn fn, void *arg)
{
	ctl->extra_metrics = fn;
	ctl->extra_arg = arg;
}
