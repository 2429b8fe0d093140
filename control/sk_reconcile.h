/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The reconcile: what must hold between an item's counters in the arena
 * and the order store's ledger, in two parts.
 *
 *   - The rule (sk_reconcile_item()): pure arithmetic, no DPDK, no store.
 *     seckillctl reconcile applies it to the admin API's item view, the
 *     control plane to its own snapshot; it is written once, here.
 *
 *       stock:  total + added - removed == remaining + sold - returned
 *       store:  sold - returned - live  lies in [inflight_min, inflight_max]
 *
 *     where live is the store's live units and the in-flight bounds are the
 *     units sold by the dataplane whose orders are not in the store yet
 *     (waiting in the order rings): 0 and 0 at rest.
 *
 *   - The control plane's periodic run (sk_control_reconcile()), behind
 *     the seckill_reconcile_* metrics: on its main thread, between two
 *     drains, it counts the units of the orders waiting in the rings
 *     before and after reading the items, so a sale in progress is not a
 *     mismatch, and reports an item only when it failed in runs at least
 *     SK_RECONCILE_CONFIRM_NS apart (a counter read while a dataplane core
 *     is between two steps of a buy is off for that instant only).
 */
#ifndef SK_RECONCILE_H
#define SK_RECONCILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** A mismatch is reported once it has lasted this long (ns): 1 s. */
#define SK_RECONCILE_CONFIRM_NS INT64_C(1000000000)
/** Most items one sk_control_reconcile() checks; the next run goes on. */
#define SK_RECONCILE_ITEMS_PER_RUN 1024
/** Snapshots one run takes of an item that does not add up before it says so. */
#define SK_RECONCILE_ATTEMPTS 3

/** One item's figures, as the reconcile compares them. */
struct sk_reconcile_in {
	uint64_t total;	       /**< arena: units put on sale at preheat */
	uint64_t added;	       /**< arena: units added by restocks */
	uint64_t remaining;    /**< arena: pool + every bucket */
	uint64_t sold;	       /**< arena: units sold by every lcore, before returns */
	uint64_t returned;     /**< arena: units given back */
	uint64_t live;	       /**< store: units held by live orders */
	uint64_t inflight_min; /**< units sold, not yet in the store: at least */
	uint64_t inflight_max; /**< ... at most (UINT64_MAX: unknown) */
	uint64_t removed;      /**< arena: unsold units taken back by removals (last:
				    the tables of positional figures stay valid) */
};

/** What sk_reconcile_item() found. */
struct sk_reconcile_out {
	/**
	 * total + added - removed - (remaining + sold - returned): 0 when the arena
	 * adds up; > 0 units missing from the arena, < 0 units it invented.
	 */
	int64_t stock_diff;
	/**
	 * sold - returned - live beyond the in-flight bounds: 0 inside them;
	 * > 0 the arena sold more than the store holds (orders missing from
	 * LMDB), < 0 the store holds more than the arena sold.
	 */
	int64_t store_diff;
	bool stock_ok; /**< stock_diff == 0 */
	bool store_ok; /**< store_diff == 0 */
};

/**
 * sk_reconcile_item - apply the rule to @p in. Arithmetic is modulo 2^64
 * read as signed: exact for any counters below 2^62 (the engine caps an
 * item at 2^48 units); beyond that a mismatch is still never read as 0
 * unless the counters agree modulo 2^64.
 * @param in   the figures
 * @param out  [out] the differences and verdicts
 * Pure; thread-safe.
 */
void sk_reconcile_item(const struct sk_reconcile_in *in, struct sk_reconcile_out *out);

/* ------------------------------------------- the control plane's periodic run */

struct sk_control;

/** What one sk_control_reconcile() did. */
struct sk_reconcile_info {
	uint32_t items;	     /**< items checked by this run */
	uint32_t suspect;    /**< ... that did not add up in this run */
	uint32_t mismatches; /**< items reported as mismatched after this run (all items) */
	bool partial;	     /**< a ring held more than one drain's share: the store
				  check had a lower in-flight bound only */
};

/**
 * sk_control_reconcile - one reconcile run over up to
 * SK_RECONCILE_ITEMS_PER_RUN items of the arena (round robin: a later run
 * goes on where this one stopped), under the control plane's write lock
 * (no commit, cancel, payment or restock moves a counter meanwhile).
 *
 * Per item, up to SK_RECONCILE_ATTEMPTS snapshots: peek every ring (units
 * of the orders waiting there whose status is still queued, per item: the
 * lower in-flight bound), read the item (sk_control_item_get()), peek
 * again (the upper bound), apply sk_reconcile_item(). An item that adds up
 * in one snapshot is fine. One that does not in any is suspect; it is
 * reported (seckill_reconcile_mismatch 1) when a run at least
 * SK_RECONCILE_CONFIRM_NS after its first failing run still finds it off,
 * and cleared by the first run that finds it fine. The peeks use the
 * drain's buffer: a ring holding more than one drain's share leaves the
 * upper bound unknown for that run (@c partial).
 *
 * Cost: O(items x lcores) arena loads, one store read per item and
 * snapshot, two ring peeks (at most one drain's batch copied) per
 * snapshot; at most a few ms for 1024 items. The dataplane is never
 * waited for.
 *
 * @param ctl     the control plane
 * @param now_ns  wall clock: the confirmation delay and the last-run time
 * @param info    [out] what the run found; may be NULL
 * @return 0, -ENOMEM (the result table could not be allocated: nothing
 *         checked), or an error of the store (-EIO, -EAGAIN ...: the run
 *         is abandoned, the previous results stay). Main thread only: the
 *         thread that calls sk_control_drain() (the rings' consumer), never
 *         during a drain.
 */
int sk_control_reconcile(struct sk_control *ctl, int64_t now_ns, struct sk_reconcile_info *info);

/**
 * sk_control_reconcile_metrics - the reconcile's families in the
 * Prometheus text format: seckill_reconcile_mismatch{item} (1 reported,
 * 0 fine or only suspect), seckill_reconcile_difference_units{item,check}
 * (the reported difference of check "stock" or "store", 0 unless
 * reported), seckill_reconcile_runs_total{result} (ok, mismatch, partial),
 * seckill_reconcile_last_run_timestamp_seconds (the last run that
 * finished, 0 before the first). Items never checked have no sample.
 * @return 0, or -EIO if writing to @p out failed.
 * Any thread (the admin API's), concurrently with sk_control_reconcile().
 */
int sk_control_reconcile_metrics(struct sk_control *ctl, FILE *out);

#endif /* SK_RECONCILE_H */
