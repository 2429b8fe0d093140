/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The engine's buy and cancel: dedup, stock, order id, status and ring put
 * together so that a unit is sold exactly once and every sale reaches the
 * control plane.
 *
 * A buy of one or more lines (a cart), on lcore c:
 *
 *   1. sold-out fast refusal (one load per line);
 *   2. per line, in item-id order: reserve in the user's dedup slot, then
 *      take the units (sk_stock_take); any failure rolls back the lines
 *      already done (untake + dedup abort);
 *   3. one order id (epoch | member | c | seq); status QUEUED in the slot
 *      seq & (2^status_bits - 1), once the order that held that slot is
 *      settled (else BUSY, checked before step 2); one record per line
 *      enqueued all-or-nothing on c's ring. A full ring undoes everything
 *      and answers BUSY: a sale is never lost. When c's sequence is used
 *      up, c moves to an epoch of its own (max(now, epoch + 1)) and starts
 *      again at seq 0: a run sells for ever;
 *   4. the dedup slots record the order id.
 *
 * Cancel (control plane): status CAS to CANCELLED (first writer wins), then
 * each line's units go back to the pool and the user's holding drops.
 *
 * Refund (control plane, after the order store recorded it): N units of one
 * line of a paid order go back to the pool and out of the user's holding
 * (sk_buy_refund()).
 *
 * Thread-safety: a struct sk_buy_lcore belongs to one thread (its lcore);
 * different lcores run sk_buy() concurrently on the same items without
 * locks. sk_buy_cancel() may run on any thread, concurrently with buys.
 */
#ifndef SK_BUY_H
#define SK_BUY_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_order.h"
#include "sk_shm.h"

/** Most lines in one cart. */
#define SK_BUY_MAX_LINES 16

/** Outcome of a buy, one per answer the front door gives. */
enum sk_buy_status {
	SK_BUY_OK = 0,	  /**< sold: order id set */
	SK_BUY_DUPLICATE, /**< limit-1 item already won by this user: that order id */
	SK_BUY_LIMIT,	  /**< the user holds the per-user limit already */
	SK_BUY_SOLD_OUT,  /**< no unit left */
	SK_BUY_SHORT,	  /**< fewer units left than asked */
	SK_BUY_BUSY,	  /**< transient: user's other buy in flight, ring full, status slot
			       not settled yet, races */
	SK_BUY_FULL,	  /**< dedup slice exhausted, or order ids past 2058 */
	SK_BUY_CLOSED,	  /**< item closed by an operator */
	SK_BUY_INVALID,	  /**< bad request: user 0, qty 0 or too large, too many lines */
	SK_BUY_PAUSED,	  /**< item paused by an operator (resumed later) */
	SK_BUY_STATUS_MAX
};

/** One line of a buy. */
struct sk_buy_line {
	struct sk_item *item;
	uint32_t qty;
};

/** The buyer. */
struct sk_buy_req {
	uint64_t user;	       /**< authenticated user id, non-zero */
	struct sk_addr client; /**< the buyer's address (either family), or SK_ADDR_NONE */
	int64_t now_ns;	       /**< wall clock */
};

/** Per-lcore engine state; one cache-aligned struct per lcore. */
struct sk_buy_lcore {
	struct sk_shm *shm;
	struct rte_ring *ring;		 /**< this lcore's order ring (SP side) */
	struct sk_status status;	 /**< view of the status table */
	struct sk_status_window *win;	 /**< this lcore's window (arena) */
	const _Atomic uint64_t *settled; /**< this lcore's settled id (arena) */
	unsigned lcore;			 /**< bucket index and order-id lcore field */
	uint32_t seq_shift;		 /**< log2 of the sequences per epoch (win->seq_bits) */
	uint32_t epochs[2];		 /**< epoch of generation g at [g & 1] */
	uint64_t next_pos;		 /**< position of the next order: gen << seq_shift | seq */
	uint64_t oldest_pos;		 /**< position of the oldest order holding a slot */
	uint32_t next_epoch;		 /**< the epoch after this one, once picked; else 0 */
	uint64_t count[SK_BUY_STATUS_MAX]; /**< outcomes, for telemetry */
} sk_cache_aligned;

_Static_assert(_Alignof(struct sk_buy_lcore) >= SK_CACHE_LINE,
	       "lcores' engine states must not share a cache line");

/**
 * sk_buy_lcore_init - prepare lcore @p lcore's engine state.
 * @param ring  the lcore's order ring (sk_order_ring_create()); not owned
 * @return 0, or -EINVAL if @p lcore >= shm->nlcores, @p ring is NULL or the
 *         window's seq_bits is below the status bits or above SK_ORDER_SEQ_BITS.
 */
int sk_buy_lcore_init(struct sk_buy_lcore *lc, struct sk_shm *shm, unsigned lcore,
		      struct rte_ring *ring);

/**
 * sk_buy - sell @p lines to @p req->user, all or nothing.
 *
 * @param lc      the calling lcore's state
 * @param req     the buyer
 * @param lines   1..SK_BUY_MAX_LINES lines with distinct items; reordered
 *                in place by item id
 * @param n       number of lines
 * @param order   [out] the order id for SK_BUY_OK, the earlier order's id
 *                for SK_BUY_DUPLICATE and SK_BUY_LIMIT (0 if none)
 * @return an enum sk_buy_status; never blocks, allocates or locks.
 */
enum sk_buy_status sk_buy(struct sk_buy_lcore *lc, const struct sk_buy_req *req,
			  struct sk_buy_line *lines, unsigned n, uint64_t *order);

/**
 * sk_buy_lines - sk_buy() that also names the line a refusal is about (a
 * cart's answer names its item).
 * @param at  [out] for a refusal caused by one line (SK_BUY_DUPLICATE,
 *            SK_BUY_LIMIT, SK_BUY_SOLD_OUT, SK_BUY_SHORT, SK_BUY_CLOSED,
 *            SK_BUY_PAUSED, and SK_BUY_INVALID for a bad qty or a repeated
 *            item) its index in @p lines as they stand on return; @p n for
 *            every other outcome
 * @return as sk_buy(); same contract otherwise.
 */
enum sk_buy_status sk_buy_lines(struct sk_buy_lcore *lc, const struct sk_buy_req *req,
				struct sk_buy_line *lines, unsigned n, uint64_t *order,
				unsigned *at);

/**
 * sk_buy_cancel - cancel an order and give its units back (payment timeout,
 * refund, or an order that could not be stored).
 *
 * @param shm    the arena
 * @param recs   every line of the order (same id). Each line's @c returned
 *               counts the units already given back for this cancel and is
 *               updated: pass 0 for a fresh cancel (records read back from
 *               the order store after a cancel say returned == qty, which
 *               would return nothing). Only the caller that wins the status
 *               CAS returns anything, so a reset to 0 is always safe.
 * @param n      number of lines
 * @param to     SK_ORDER_CANCELLED or SK_ORDER_FAILED
 * @return 0 (units returned), -EALREADY (the order is not queued/confirmed:
 *         already paid, cancelled or failed - nothing changed), -ENOENT (not
 *         in the status table now: an order of an earlier run, or a settled
 *         one whose slot was reused - only the store can cancel it; or an
 *         item is unknown), -EINVAL (bad @p to or lines that disagree).
 *
 * Thread-safety: callers that move orders out of QUEUED (the control
 * plane's drain, payment and repair) must hold one lock among them.
 */
int sk_buy_cancel(struct sk_shm *shm, struct sk_order_rec *recs, unsigned n, unsigned to);

/**
 * sk_buy_refund - give back @p units of one line of a paid order (a refund):
 * the units return to the item's pool (sk_stock_return(), which clears the
 * sold-out flag) and the user's holding in the dedup set drops by as much,
 * so a user refunded down to nothing may buy a limit-1 item again. Works
 * for orders of any dataplane run (the item is found by id; the status
 * table is not touched: the caller moves paid -> refunded with
 * sk_status_move() when the last unit is refunded).
 *
 * Exactly once is the caller's business: unlike a cancel there is no
 * status CAS to elect one returner, so the caller returns the units only
 * after the order store recorded the refund (store first, under the control
 * plane's write lock), once per recorded refund.
 *
 * @param shm    the arena
 * @param rec    the order line; rec->returned counts the units of this
 *               line already given back and is updated on success
 * @param units  units to give back now, >= 1
 * @return 0 (returned), -ENOENT (the item is not in the arena: nothing
 *         changed; its next preheat counts the units from the store),
 *         -ERANGE (rec->returned + @p units > rec->qty: refused, nothing
 *         changed), -EINVAL (@p units 0 or user 0).
 */
int sk_buy_refund(struct sk_shm *shm, struct sk_order_rec *rec, uint32_t units);

/** sk_buy_status_name - short name of a buy outcome ("ok", "sold_out", ...). */
const char *sk_buy_status_name(unsigned status);

#endif /* SK_BUY_H */
