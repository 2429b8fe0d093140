/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's counters and its /metrics text (see sk_control.h
 * and docs/monitoring.md): sk_control_stats, sk_control_metrics, the
 * per-item gauges, the dataplane's request metrics appended through
 * sk_dpmetrics, and the reconcile's through sk_control_reconcile_metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_ring.h>

#include "sk_control.h"
#include "sk_control_impl.h"
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
	[IM_TOTAL] = {"seckill_stock_initial", "Units put on sale at preheat (arena)."},
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

int
sk_control_metrics(struct sk_control *ctl, FILE *out)
{
	struct sk_prom m = {out, 0};
	struct sk_control_stats s;
	uint64_t counts[SK_ORDER_STATUS_COUNT];
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
	sk_prom_head(
		&m, "seckill_payments_total", "counter",
		"Payment messages (seckill.payments and the admin refund) by kind and outcome.");
	for (int k = 0; k < 2; k++)
		for (unsigned o = 0; o < SK_CONTROL_PM_COUNT; o++)
			sk_prom_printf(&m,
				       "seckill_payments_total{kind=\"%s\",outcome=\"%s\"} %" PRIu64
				       "\n",
				       k ? "refund" : "paid", sk_control_pm_outcome_name(o),
				       s.payments[k][o]);
	sk_prom_counter(&m, "seckill_payments_duplicates_total",
			"Payment messages whose request id was seen before (first outcome kept).",
			s.payments_dup);
	sk_prom_counter(&m, "seckill_payments_malformed_total",
			"Payment messages that could not be read: skipped.", s.payments_malformed);
	sk_prom_head(&m, "seckill_payments_rejected_total", "counter",
		     "seckill.payments messages refused unapplied (signature), by reason.");
	for (unsigned r = SK_STORE_REJ_UNSIGNED; r <= SK_STORE_REJ_STALE; r++)
		sk_prom_printf(&m, "seckill_payments_rejected_total{reason=\"%s\"} %" PRIu64 "\n",
			       sk_store_pay_reject_name(r), s.payments_rejected[r]);
	sk_prom_counter(&m, "seckill_payments_errors_total",
			"Payment messages that failed on a store error (retried).",
			s.payments_errors);
	sk_prom_counter(&m, "seckill_units_refunded_total", "Units back on sale from refunds.",
			s.units_refunded);
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
	sk_prom_counter(
		&m, "seckill_preheat_passes_total",
		"Preheat passes (the store's activities into the item table, every second).",
		s.preheat_passes);

	sk_prom_histogram(&m, "seckill_commit_seconds",
			  "Latency of one group commit (durable LMDB write transaction).",
			  s.commit_bucket, sk_control_lat_bounds_ns, SK_CONTROL_LAT_BUCKETS,
			  s.commit_ns_sum);

	sk_prom_head(&m, "seckill_ring_depth", "gauge",
		     "Order records waiting in each lcore's ring.");
	for (unsigned l = 0; l < ctl->nrings; l++)
		sk_prom_printf(&m, "seckill_ring_depth{lcore=\"%u\"} %u\n", l,
			       sk_control_ring_depth(ctl, l));
	sk_prom_head(&m, "seckill_ring_capacity", "gauge",
		     "Order records each lcore's ring can hold (buys answer 429 busy when full).");
	for (unsigned l = 0; l < ctl->nrings; l++)
		sk_prom_printf(&m, "seckill_ring_capacity{lcore=\"%u\"} %u\n", l,
			       rte_ring_get_capacity(ctl->ring[l]));
	sk_prom_head(&m, "seckill_settled_seq", "gauge",
		     "First order sequence of each lcore not yet settled.");
	for (unsigned l = 0; l < ctl->nrings; l++)
		sk_prom_printf(&m, "seckill_settled_seq{lcore=\"%u\"} %" PRIu32 "\n", l,
			       sk_shm_settled(ctl->shm, l));

	sk_control_order_counts(ctl, counts);
	sk_prom_head(&m, "seckill_orders", "gauge", "Orders of this dataplane run by status.");
	for (unsigned st = SK_ORDER_QUEUED; st < SK_ORDER_STATUS_COUNT; st++)
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
	sk_prom_gauge(&m, "seckill_dataplane_up",
		      "1 while the dataplane (the DPDK primary process) is alive.",
		      dataplane_up(ctl));
	sk_prom_gauge(&m, "seckill_dataplane_epoch",
		      "Order-id epoch of the attached dataplane run.", ctl->status.epoch);
	sk_prom_head(&m, "seckill_last_commit_timestamp_seconds", "gauge",
		     "Wall clock of the last group commit.");
	sk_prom_printf(&m, "seckill_last_commit_timestamp_seconds %.3f\n",
		       (double)s.last_commit_ns / 1e9);
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

void
sk_control_metrics_extra(struct sk_control *ctl, sk_control_metrics_fn fn, void *arg)
{
	ctl->extra_metrics = fn;
	ctl->extra_arg = arg;
}
