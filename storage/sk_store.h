/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The order store: the one module through which the control plane touches
 * LMDB. It keeps, in one LMDB environment (a directory holding data.mdb and
 * lock.mdb):
 *
 *   - meta       schema version, event sequence counter
 *   - orders     (order id, line) -> record, state, deadline, timestamps
 *   - by_user    (item, user) -> live orders and their units (dedup rebuild)
 *   - items      activity definitions, per-item ledger, applied restocks
 *   - events     append-only log (seq -> event), what the Kafka exporter reads
 *   - cursors    named positions (e.g. the Kafka export cursor)
 *   - deadlines  (deadline, order id) of unpaid orders (payment timeouts)
 *   - requests, requests_by_time  payment request id -> outcome (exactly once)
 *   - user_orders, state_orders   every order line by (item, user) and by
 *                (item, state): the admin API's order queries
 *   - reservations  item -> the user ids of its reservation set
 *                (sk_store_reserve.h)
 *
 * Every key and value is laid out byte by byte in docs/storage.md; all
 * integers are big-endian so LMDB's byte order is numeric order.
 *
 * Durability: by default every write call returns only after
 * mdb_txn_commit() has synced the data and meta pages (no MDB_NOSYNC,
 * no MDB_NOMETASYNC), so a 200 sent after sk_store_put_orders() means "on
 * disk", even across a power loss. A commit is atomic: after kill -9 at any
 * instant a reopened store holds exactly the committed calls, never part
 * of one.
 *
 * Orders enter the store already confirmed (the store never holds a queued
 * order: being in the store is what "confirmed" means). Afterwards they move
 * only by compare-and-set along sk_order_transition_ok(): confirmed -> paid
 * or cancelled, paid -> refunded (sk_store_payment_apply(): units of a paid
 * order refunded, in parts or all at once). Cancelled and refunded are
 * final.
 *
 * Return values: 0 on success, SK_STORE_UNCHANGED (1) where a call is an
 * idempotent repeat that changed nothing, or a negative errno. Errors every
 * function may return besides its own: -EIO (LMDB reported corruption or a
 * panic), -EAGAIN (reader table full, or another process grew the map and
 * this one could not adopt the new size: a walk of this thread, or other
 * threads' calls for 100 ms, kept transactions open; retry), -ENOMEM, and
 * other negative errnos from the filesystem.
 * Writes on a store opened SK_STORE_RDONLY fail with -EACCES. A failed
 * write call has written nothing.
 *
 * Thread-safety: one struct sk_store may be shared by every thread of a
 * process. Each call runs its own LMDB transaction: writers are serialised
 * by LMDB (a write call waits for the one in progress), readers run
 * concurrently with them and see the last commit. The environment is opened
 * with MDB_NOTLS, so a callback of a *_foreach() may call any other function
 * of the store, writes included (its walk keeps the snapshot it started
 * with). A grow of the map (sk_store_map.h) holds new calls back for its
 * few milliseconds. Several processes may open one store (e.g. seckillctl
 * read-only beside the control plane); one whose map another process
 * outgrew adopts the new size at its next call. A handle must not be used in a child after
 * fork(); open the store in the child instead. sk_store_close() must not
 * race any other call on the same handle.
 */
#ifndef SK_STORE_H
#define SK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_order.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Schema this build writes. A store of major SK_STORE_SCHEMA_MAJOR_OLDEST
 * up to SK_STORE_SCHEMA_MAJOR is opened (an older one is upgraded in place
 * when opened for writing: schema 2 added the refunded state, the refunded
 * count of an order line and the request databases, all readable from a
 * schema 1 store's bytes; schema 3 the order indexes, built from `orders`
 * at the upgrade, and the removed units and pause of an activity; schema 4
 * an order line's client of either family, every line rewritten at the
 * upgrade, a schema 1-3 line read as it is when read-only); any other
 * major is refused. Builds of an older schema refuse a newer store
 * with their "another major" message: they would neither keep the indexes
 * nor honour a removal or a pause.
 */
#define SK_STORE_SCHEMA_MAJOR	     4
#define SK_STORE_SCHEMA_MINOR	     1 /* 1: reservations (sk_store_reserve.h) */
#define SK_STORE_SCHEMA_MAJOR_OLDEST 1

/** Default LMDB map size (the most the data file may grow to): 1 GiB. */
#define SK_STORE_MAP_SIZE_DEFAULT (UINT64_C(1) << 30)

/** Longest activity name, bytes (NUL excluded). */
#define SK_STORE_NAME_MAX 64
/** Longest cursor name, bytes (NUL excluded). */
#define SK_STORE_CURSOR_NAME_MAX 64
/** Most lines of one order (struct sk_order_rec.nlines is one byte). */
#define SK_STORE_MAX_LINES 255
/** Longest payment request id, bytes (NUL excluded). */
#define SK_STORE_REQUEST_MAX 64
/** Default bound of the request table: entries kept (the oldest go first). */
#define SK_STORE_REQUESTS_MAX_DEFAULT 1000000
/** Default bound of the request table: age of an entry, ns (7 days). */
#define SK_STORE_REQUESTS_TTL_DEFAULT_NS (INT64_C(7) * 86400 * 1000000000)
/** Most lines a payment call handles (sk_store_pay_result.lines). */
#define SK_STORE_PAY_LINES 16
/** Size of an error-message buffer that never truncates. */
#define SK_STORE_ERR_MAX 512

/** Returned by idempotent calls that found nothing to change. */
#define SK_STORE_UNCHANGED 1

/** An open store. Opaque. */
struct sk_store;

/** Flags of struct sk_store_conf. */
enum sk_store_flags {
	/** Open for reading only (tools beside a running control plane). */
	SK_STORE_RDONLY = 1u << 0,
	/**
	 * MDB_NOSYNC: commits survive kill -9 (the page cache holds them) but
	 * not a power loss or kernel crash. For tests and benchmarks only: a
	 * 200 answered after such a commit would not mean "on disk".
	 */
	SK_STORE_NOSYNC = 1u << 1,
};

/** Parameters of sk_store_open(). All-zero means the defaults. */
struct sk_store_conf {
	/**
	 * Largest size the data file may reach, bytes; 0 = default. Rounded up
	 * by LMDB to a page multiple. A full map makes writes fail with
	 * -ENOSPC (nothing written); reopen with a larger size to continue.
	 */
	uint64_t map_size;
	unsigned flags; /**< enum sk_store_flags */
	unsigned mode;	/**< permissions of created files; 0 = 0600 */
	/**
	 * Bounds of the payment request table (sk_store_payment_apply()):
	 * entries kept, 0 = SK_STORE_REQUESTS_MAX_DEFAULT; age, ns, 0 =
	 * SK_STORE_REQUESTS_TTL_DEFAULT_NS. Each payment deletes up to 8 of
	 * the oldest entries beyond either bound, in its own transaction.
	 */
	uint64_t requests_max;
	int64_t requests_ttl_ns;
};

/**
 * sk_store_open - open the store in directory @p dir, creating the directory
 * (mode 0700) and an empty store of this schema if there is none yet.
 *
 * Clears the reader slots left by dead processes (mdb_reader_check()), so a
 * killed reader does not pin pages forever.
 *
 * @param[out] out     the store; set only on success
 * @param[in]  dir     directory of the store
 * @param[in]  conf    parameters; NULL = defaults
 * @param[out] err     on error, a one-line NUL-terminated description naming
 *                     @p dir; may be NULL
 * @param[in]  errlen  bytes at @p err (SK_STORE_ERR_MAX never truncates)
 * @return 0 on success, or
 *   -EPROTO  the directory holds a store of another schema major version,
 *            an LMDB environment that is not a seckill store, a damaged
 *            meta record, or an LMDB file of an incompatible LMDB version,
 *   -ENOENT  SK_STORE_RDONLY and there is no store at @p dir,
 *   -EINVAL  @p dir is NULL or empty, or @p conf has unknown flags,
 *   -ENOSPC  the map is too small even for an empty store,
 *   or another negative errno from the filesystem (-EACCES, -ENOTDIR ...).
 */
int sk_store_open(struct sk_store **out, const char *dir, const struct sk_store_conf *conf,
		  char *err, size_t errlen);

/**
 * sk_store_close - close @p st and free it. No call on @p st may be in
 * progress or follow. NULL is ignored.
 */
void sk_store_close(struct sk_store *st);

/* ------------------------------------------------------------------ orders */

/** One stored order line. */
struct sk_store_line {
	struct sk_order_rec rec; /**< as committed; rec.returned = units returned
				      (cancelled: all; paid: the refunded ones) */
	uint8_t state;		 /**< enum sk_order_status: confirmed, paid, cancelled
				      or refunded */
	uint16_t refunded;	 /**< units of this line refunded (<= rec.qty) */
	int64_t deadline_ns;	 /**< payment deadline (wall clock); 0 = none */
	int64_t stored_ns;	 /**< when it was committed (caller's clock) */
	int64_t updated_ns;	 /**< last state change (= stored_ns if none) */
};

/** What sk_store_put_orders() did with one record (its @p outcome array). */
enum sk_store_outcome {
	SK_STORE_NEW = 0,   /**< stored now, confirmed */
	SK_STORE_DUP,	    /**< already stored with the same lines: skipped */
	SK_STORE_CONFLICT,  /**< id stored with other lines (user, item, qty,
				 price or sale time differ): skipped, nothing
				 overwritten */
	SK_STORE_INVALID,   /**< malformed record or incomplete cart: skipped */
	SK_STORE_OVERSELL,  /**< would take the item's live units above
				 total + added: refused */
	SK_STORE_OVERLIMIT, /**< would take the user's units of the item above
				 the per-user limit: refused */
};

/** Counts of one sk_store_put_orders() call. */
struct sk_store_put_stats {
	uint32_t orders_new;	 /**< orders stored now */
	uint32_t lines_new;	 /**< their lines */
	uint64_t units_new;	 /**< their units */
	uint32_t orders_dup;	 /**< orders already stored (SK_STORE_DUP) */
	uint32_t orders_refused; /**< CONFLICT, INVALID, OVERSELL or OVERLIMIT */
	uint64_t event_first;	 /**< seq of the first event appended; 0 if none */
	uint64_t event_last;	 /**< seq of the last event appended; 0 if none */
};

/**
 * sk_store_put_orders - store a batch of orders in one durable write
 * transaction (group commit) and mark them confirmed.
 *
 * For each new order it writes every line to `orders` (state confirmed),
 * one `by_user` entry per line, one `deadlines` entry if the order has a
 * deadline, adds its units to each item's ledger and appends one
 * SK_STORE_EV_CONFIRMED event. The call is idempotent: an order already
 * stored is skipped and counted, never duplicated; replaying a batch after
 * a crash is safe.
 *
 * The lines of one order must be adjacent and complete: line 0..nlines-1 in
 * that order, with the same id, user and nlines, distinct items, qty >= 1,
 * returned 0, and non-zero id, user and item. Otherwise every record of that
 * order is SK_STORE_INVALID (a cart is never stored in part).
 *
 * As a last line of defence against overselling, an order is refused
 * (every line SK_STORE_OVERSELL or SK_STORE_OVERLIMIT) if any of its items
 * has an activity in the store and the order would take the item's live
 * units above total + added, or the user's live units of the item above the
 * per-user limit. A refused order was sold by the dataplane against the
 * store's word: the caller fails it and returns its units.
 *
 * Payment deadline of an order: the earliest over its lines of
 * rec.time_ns + timeout, where timeout is the item's activity pay_timeout_ns
 * if set, else @p default_timeout_ns; lines whose timeout is <= 0 impose
 * none, and an order without any has no deadline.
 *
 * @param st                  the store
 * @param recs                @p n order records as the dataplane made them
 * @param n                   number of records; 0 commits nothing
 * @param default_timeout_ns  payment timeout of items without their own;
 *                            <= 0: none
 * @param now_ns              commit time to record (wall clock)
 * @param outcome             [out] @p n entries, enum sk_store_outcome per
 *                            record; may be NULL
 * @param stats               [out] counts; may be NULL
 * @return 0 once the batch is durable (refused orders included in
 *         @p outcome), or -ENOSPC (map full), -E2BIG (the batch does not fit
 *         in one transaction: split it), -EINVAL (@p recs NULL with n > 0),
 *         -EACCES (read-only store); on error nothing was written and
 *         @p outcome / @p stats are unspecified.
 */
int sk_store_put_orders(struct sk_store *st, const struct sk_order_rec *recs, size_t n,
			int64_t default_timeout_ns, int64_t now_ns, uint8_t *outcome,
			struct sk_store_put_stats *stats);

/**
 * sk_store_order_move - compare-and-set the state of a stored order from
 * @p from to @p to, in one durable write transaction: the first writer
 * wins, a second one finds the state changed.
 *
 * Moving to cancelled marks every line's units returned, removes the
 * order's `by_user` entries (so its user may buy again) and adds the units
 * to the items' returned counters. Moving to paid or cancelled removes the
 * order's deadline. Each move appends one event (SK_STORE_EV_PAID or
 * SK_STORE_EV_CANCELLED). Write the move here first and only then release
 * the units in the item table (sk_buy_cancel()): a crash in between leaves
 * units released on restart, never sold twice.
 *
 * @param st       the store
 * @param id       order id
 * @param from     expected current state
 * @param to       new state; sk_order_transition_ok(from, to) must hold
 * @param now_ns   time of the change (wall clock), recorded
 * @param current  [out] the state found (on success @p from, on -EALREADY
 *                 the state that won); may be NULL
 * @return 0 (moved), -EALREADY (the order is not in @p from: another writer
 *         moved it first; when *current == @p to an identical call already
 *         succeeded, answer it as a success), -ENOENT (no such order),
 *         -EINVAL (transition not allowed, e.g. out of a final state, or
 *         into queued, or paid -> refunded: refunds go through
 *         sk_store_payment_apply()), -ENOSPC, -EACCES.
 */
int sk_store_order_move(struct sk_store *st, uint64_t id, unsigned from, unsigned to,
			int64_t now_ns, unsigned *current);

/**
 * sk_store_order_get - every line of order @p id.
 * @param lines   [out] @p max entries, filled with lines 0..nlines-1
 * @param max     entries at @p lines
 * @param nlines  [out] lines of the order (also on -ENOSPC)
 * @return 0, -ENOENT (no such order), -ENOSPC (@p max too small).
 */
int sk_store_order_get(struct sk_store *st, uint64_t id, struct sk_store_line *lines, unsigned max,
		       unsigned *nlines);

/** Live units of one user for one item (orders confirmed or paid). */
struct sk_store_holding {
	uint32_t item;
	uint64_t user;
	uint64_t units;	     /**< sum of qty over the live orders */
	uint32_t orders;     /**< live orders */
	uint64_t last_order; /**< the largest of their ids (the latest order) */
};

/**
 * Callback of sk_store_holdings_foreach(). @p h is valid during the call
 * only. Return 0 to go on; any other value stops the walk and is returned.
 */
typedef int (*sk_store_holding_cb)(const struct sk_store_holding *h, void *arg);

/**
 * sk_store_holdings_foreach - every (item, user) holding live units, in
 * (item, user) order: what recovery rebuilds the dedup set from. The sum of
 * units per item is the item's live units.
 * @param item  only this item; 0 = every item
 * @return 0 after the last holding, the callback's non-zero value, or an
 *         error.
 */
int sk_store_holdings_foreach(struct sk_store *st, uint32_t item, sk_store_holding_cb cb,
			      void *arg);

/**
 * Callback of sk_store_deadlines_foreach(). Return 0 to go on; any other
 * value stops the walk and is returned.
 */
typedef int (*sk_store_deadline_cb)(int64_t deadline_ns, uint64_t order, void *arg);

/**
 * sk_store_deadlines_foreach - the pending payment deadlines <= @p upto_ns,
 * earliest first (ties by order id): what the timeout wheel reloads after a
 * restart. Only confirmed (unpaid) orders have one.
 * @return 0 after the last one, the callback's non-zero value, or an error.
 */
int sk_store_deadlines_foreach(struct sk_store *st, int64_t upto_ns, sk_store_deadline_cb cb,
			       void *arg);

/* ------------------------------------------------------------ order queries */

/** Most orders one sk_store_orders_find() call may return. */
#define SK_STORE_FIND_MAX 1000

/** What sk_store_orders_find() looks for. */
struct sk_store_order_query {
	uint32_t item;	/**< orders with a line of this item; non-zero */
	uint64_t user;	/**< only this buyer's; 0 = any (then @c state is needed) */
	uint8_t state;	/**< only orders in this state (confirmed, paid, cancelled,
			     refunded: enum sk_order_status); 0 = any (then @c user
			     is needed) */
	uint64_t after; /**< only orders with a larger id (the cursor: the last id of
			     the page before); 0 = from the first */
	uint32_t limit; /**< most orders given to the callback, 1..SK_STORE_FIND_MAX */
};

/**
 * Callback of sk_store_orders_find(): every line of one order (a cart holds
 * other items' lines too), valid during the call only. Return 0 to go on;
 * any other value stops the walk and is returned.
 */
typedef int (*sk_store_order_cb)(const struct sk_store_line *lines, unsigned n, void *arg);

/**
 * sk_store_orders_find - the orders of one item by buyer, or by state, in
 * ascending order id (ids grow with the dataplane run, then lcore, then
 * sequence: a stable order, not a clock), at most @c q->limit of them, in
 * one read snapshot.
 *
 * Read from the indexes `user_orders` (item, user, order id) and
 * `state_orders` (item, state, order id), which hold every order line the
 * store has ever taken and follow its state changes, so the cost is
 * O(log n + limit) however large the sale; with both @c user and @c state
 * the buyer's orders of the item are walked and filtered (a buyer has few).
 *
 * @param st    the store
 * @param q     the query
 * @param cb    called once per order
 * @param arg   passed to @p cb
 * @param more  [out] true when more orders match after the last one given
 *              (ask again with @c after = its id); may be NULL
 * @return 0, the callback's non-zero value, -EINVAL (item 0, neither user
 *         nor state, a state the store never holds, limit 0 or above
 *         SK_STORE_FIND_MAX), -ENOTSUP (a store of schema 1 or 2 opened
 *         read-only: it has no indexes until a writer upgrades it), -EIO
 *         (an index entry without its order), or an error.
 */
int sk_store_orders_find(struct sk_store *st, const struct sk_store_order_query *q,
			 sk_store_order_cb cb, void *arg, bool *more);

/* Payments and refunds: sk_store_payments.h. */

/* ------------------------------------------------------------------ events */

/** Kinds of events. The numbers are stored: never renumber. */
enum sk_store_event_type {
	SK_STORE_EV_CONFIRMED = 1,     /**< order stored (sk_store_put_orders) */
	SK_STORE_EV_PAID = 2,	       /**< order paid */
	SK_STORE_EV_CANCELLED = 3,     /**< order cancelled, units returned */
	SK_STORE_EV_FAILED = 4,	       /**< order never stored (sk_store_event_append) */
	SK_STORE_EV_RESTOCKED = 5,     /**< units added to an activity */
	SK_STORE_EV_ACTIVITY = 6,      /**< activity created or changed */
	SK_STORE_EV_CLOSED = 7,	       /**< activity closed */
	SK_STORE_EV_REFUNDED = 8,      /**< units of one line of a paid order refunded
					    (item = the line's item, units = refunded now) */
	SK_STORE_EV_PAY_CONFLICT = 9,  /**< a payment for an order cancelled first:
					    the payment service must refund it */
	SK_STORE_EV_REMOVED = 10,      /**< unsold units taken back from an activity
					    (units = removed now) */
	SK_STORE_EV_PAUSED = 11,       /**< activity paused: buys refused until resumed */
	SK_STORE_EV_RESUMED = 12,      /**< activity selling again */
	SK_STORE_EV_EXTENDED = 13,     /**< activity's end moved later: the event
					    carries the definition with the new end */
	SK_STORE_EV_PAY_REJECTED = 14, /**< a seckill.payments message refused for its
					    signature: item = partition, units = offset,
					    nlines = enum sk_store_pay_reject, nothing else */
	/** the orders of an activity moved to its archive (sk_store_archive.h):
	 *  item = the activity's item, units = orders archived */
	SK_STORE_EV_ACTIVITY_ARCHIVED = 15,
	SK_STORE_EV_LIVE = 16, /**< a live setting changed (admin API): units = the
				    new generation, request = what changed
				    ("limits", "deny", "keys", "log"), nothing else */
};

/** Why a payment message was refused (PAY_REJECTED's nlines): the numbers of
 *  enum sk_paysig_verdict (token/sk_paysig.h). Stored: never renumber. */
enum sk_store_pay_reject {
	SK_STORE_REJ_UNSIGNED = 1,    /**< no signature header */
	SK_STORE_REJ_BAD_HEADER = 2,  /**< the header is not KID:T:HEX */
	SK_STORE_REJ_UNKNOWN_KID = 3, /**< a key id not configured */
	SK_STORE_REJ_BAD_MAC = 4,     /**< the signature does not match */
	SK_STORE_REJ_STALE = 5,	      /**< signed before the request table's max age */
};

/** sk_store_pay_reject_name - "unsigned", "bad_header", "unknown_kid", "bad_mac",
 *  "stale"; "?" for others. */
const char *sk_store_pay_reject_name(unsigned reason);

/** One event of the log. */
struct sk_store_event {
	uint64_t seq;	 /**< position in the log, from 1, strictly increasing */
	uint8_t type;	 /**< enum sk_store_event_type */
	uint8_t nlines;	 /**< order events: lines of the order */
	uint32_t item;	 /**< order events: item of line 0; activity events: the item */
	uint64_t order;	 /**< order events: order id; else 0 */
	uint64_t user;	 /**< order events: buyer; else 0 */
	uint64_t units;	 /**< order events: units of all lines; restock: units added;
			      removed: units taken back;
			      refunded: units of the line refunded now */
	int64_t time_ns; /**< when (caller's clock) */
	/** payment request id that made the event ("" if none), NUL-terminated */
	char request[SK_STORE_REQUEST_MAX + 1];
	/**
	 * Activity and extended events: the definition this change stored,
	 * so that readers downstream (the MySQL writer) need not guess it.
	 * has_def is false on every other event and on activity events
	 * stored before it existed.
	 */
	struct sk_store_event_def {
		bool has_def;			  /**< the fields below are set */
		uint32_t per_user_limit;	  /**< units one user may hold */
		uint64_t price;			  /**< minor units */
		int64_t start_ns;		  /**< sale opens (wall clock) */
		int64_t end_ns;			  /**< sale ends; INT64_MAX = never */
		char name[SK_STORE_NAME_MAX + 1]; /**< NUL-terminated */
	} def;
};

/**
 * Callback of sk_store_events_foreach(). @p ev is valid during the call
 * only. Return 0 to go on; any other value stops the walk and is returned.
 */
typedef int (*sk_store_event_cb)(const struct sk_store_event *ev, void *arg);

/**
 * sk_store_events_foreach - events with seq >= @p from_seq, in order.
 * @return 0 after the last one, the callback's non-zero value, or an error.
 */
int sk_store_events_foreach(struct sk_store *st, uint64_t from_seq, sk_store_event_cb cb,
			    void *arg);

/**
 * sk_store_event_append - append an event the store does not make itself
 * (SK_STORE_EV_FAILED for an order that could not be stored), durably.
 * @param ev  the event; ev->seq is set on success, ev->type must be a known
 *            type, ev->request "" or a valid request id
 *            (sk_store_request_ok())
 * @return 0, -EINVAL (unknown type, bad request id), -ENOSPC, -EACCES.
 */
int sk_store_event_append(struct sk_store *st, struct sk_store_event *ev);

/**
 * sk_store_events_trim - delete the events with seq < @p below_seq (ones
 * every reader has consumed: below the export cursor). Sequence numbers are
 * never reused.
 * @param removed  [out] events deleted; may be NULL
 * @return 0, -ENOSPC, -EACCES.
 */
int sk_store_events_trim(struct sk_store *st, uint64_t below_seq, uint64_t *removed);

/**
 * sk_store_events_trim_max - sk_store_events_trim() of at most @p max of
 * the oldest events, in one short transaction: a long log is trimmed in
 * slices, calling it again while *removed == @p max.
 * @return 0, -EINVAL (@p max 0), -ENOSPC, -EACCES.
 */
int sk_store_events_trim_max(struct sk_store *st, uint64_t below_seq, uint64_t max,
			     uint64_t *removed);

/* -------------------------------------------------------------- activities */

/** A sale: one item on sale, as operators define it. */
struct sk_store_activity {
	uint32_t item;		 /**< item id, non-zero */
	uint32_t per_user_limit; /**< units one user may hold, >= 1 */
	uint64_t total;		 /**< units put on sale */
	uint64_t added;		 /**< units added by restocks (read-only: put ignores it) */
	uint64_t removed;	 /**< unsold units taken back by removals (read-only) */
	uint64_t price;		 /**< minor units */
	int64_t start_ns;	 /**< sale opens (wall clock) */
	int64_t end_ns;		 /**< sale ends, > start_ns; INT64_MAX = never */
	int64_t pay_timeout_ns;	 /**< payment timeout; 0 = the control plane's default */
	int64_t created_ns;	 /**< read-only: first put */
	int64_t updated_ns;	 /**< read-only: last change */
	int64_t closed_ns;	 /**< read-only: when closed; 0 = open */
	int64_t paused_ns;	 /**< read-only: when paused; 0 = selling (not paused) */
	bool cluster;		 /**< sold by several appliances (docs/cluster.md): @c total is the
				      global total in Redis, and this appliance sells only the units
				      it leased (recorded as restocks) and did not give back (removals) */
	bool gate;		 /**< buyers need the item's gate claim in their token (403 gate) */
	bool reserved_only;	 /**< only users in the item's reservation set may buy
				      (403 not_reserved) */
	char name[SK_STORE_NAME_MAX + 1]; /**< NUL-terminated */
};

/** An item's ledger: counters kept in the same transactions as the orders. */
struct sk_store_ledger {
	uint64_t sold;		  /**< units of every order line ever stored */
	uint64_t returned;	  /**< units given back: cancelled lines and refunds */
	uint64_t paid;		  /**< units of paid lines */
	uint64_t lines;		  /**< order lines stored */
	uint64_t lines_paid;	  /**< ... of which paid */
	uint64_t lines_cancelled; /**< ... of which cancelled */
};

/** sk_store_ledger_live - units held by live orders: sold - returned. */
static inline uint64_t
sk_store_ledger_live(const struct sk_store_ledger *l)
{
	return l->sold - l->returned;
}

/**
 * sk_store_activity_base - the units the definition itself puts on sale
 * here: @c total, or 0 for a cluster activity (whose units all come from
 * leases). Pure.
 */
static inline uint64_t
sk_store_activity_base(const struct sk_store_activity *a)
{
	return a->cluster ? 0 : a->total;
}

/**
 * sk_store_activity_units - the units an activity puts on sale over its
 * life: base + added - removed (never below 0; base is total, or 0 for a
 * cluster activity). Sellable now: this minus
 * sk_store_ledger_live(). Pure.
 */
static inline uint64_t
sk_store_activity_units(const struct sk_store_activity *a)
{
	uint64_t u = sk_store_activity_base(a) + a->added;

	return u > a->removed ? u - a->removed : 0;
}

/**
 * sk_store_activity_same - @p x and @p y define the same activity:
 * everything an operator sets (item, name, total, price, per-user limit,
 * start, end, payment timeout, the gate and reserved-only flags) is equal. Restocked and removed
 * units, timestamps, the pause and the closed mark are not compared (an extend changes the end: the
 * definition before it is then another one). The one home of this rule (the store's "unchanged"
 * answer, the control plane's idempotent add). Pure; thread-safe.
 */
static inline bool
sk_store_activity_same(const struct sk_store_activity *x, const struct sk_store_activity *y)
{
	return x->item == y->item && x->per_user_limit == y->per_user_limit &&
	       x->total == y->total && x->cluster == y->cluster && x->gate == y->gate &&
	       x->reserved_only == y->reserved_only && x->price == y->price &&
	       x->start_ns == y->start_ns && x->end_ns == y->end_ns &&
	       x->pay_timeout_ns == y->pay_timeout_ns && strcmp(x->name, y->name) == 0;
}

/**
 * sk_store_activity_put - create the activity of @p a->item, or change its
 * definition (name, total, price, per-user limit, start/end, payment
 * timeout). Restocked and removed units, timestamps, the pause and the
 * closed mark are kept. Appends SK_STORE_EV_ACTIVITY when something
 * changed.
 * @param a       the definition; a->added, a->removed, a->paused_ns and the
 *                timestamps are ignored
 * @param now_ns  time of the change (wall clock)
 * @return 0 (created or changed), SK_STORE_UNCHANGED (identical definition
 *         already stored), -EINVAL (item 0, limit 0, end <= start, negative
 *         timeout, name not NUL-terminated within SK_STORE_NAME_MAX + 1),
 *         -EPERM (the activity is closed), -ERANGE (total + added - removed
 *         would be below the units live orders already hold), -EEXIST (the
 *         activity exists, and @p a->cluster differs), -ENOSPC, -EACCES.
 */
int sk_store_activity_put(struct sk_store *st, const struct sk_store_activity *a, int64_t now_ns);

/**
 * sk_store_activity_get - the activity of @p item and its ledger.
 * @param a       [out] the definition; may be NULL
 * @param ledger  [out] the ledger (all zero before the first order); may be
 *                NULL
 * @return 0, -ENOENT (no activity for @p item; @p ledger is still filled).
 */
int sk_store_activity_get(struct sk_store *st, uint32_t item, struct sk_store_activity *a,
			  struct sk_store_ledger *ledger);

/**
 * Callback of sk_store_activity_foreach(). Both pointers are valid during
 * the call only. Return 0 to go on; any other value stops the walk.
 */
typedef int (*sk_store_activity_cb)(const struct sk_store_activity *a,
				    const struct sk_store_ledger *ledger, void *arg);

/**
 * sk_store_activity_foreach - every activity (closed ones included) with
 * its ledger, in item order: what preheat loads. Sellable units of an open
 * activity are sk_store_activity_units(a) - sk_store_ledger_live(ledger).
 * @return 0 after the last one, the callback's non-zero value, or an error.
 */
int sk_store_activity_foreach(struct sk_store *st, sk_store_activity_cb cb, void *arg);

/**
 * sk_store_activity_close - close the activity of @p item for good (no more
 * sales, restocks or changes; its orders stay). Appends SK_STORE_EV_CLOSED.
 * @return 0, SK_STORE_UNCHANGED (already closed), -ENOENT, -ENOSPC, -EACCES.
 */
int sk_store_activity_close(struct sk_store *st, uint32_t item, int64_t now_ns);

/**
 * sk_store_activity_restock - add @p units to the activity of @p item
 * (added += units), once per @p restock_id: the caller names each restock
 * (admin request id) so that a retried request is not applied twice.
 * Restocks and removals share the ids of an item: an id names one stock
 * change. Appends SK_STORE_EV_RESTOCKED.
 * @return 0 (applied), SK_STORE_UNCHANGED (@p restock_id already applied
 *         with the same units), -EEXIST (@p restock_id applied with other
 *         units, or by a removal), -ENOENT (no activity), -EPERM (closed),
 *         -EINVAL (@p units or @p restock_id 0), -EOVERFLOW (total + added
 *         would overflow), -ENOSPC, -EACCES.
 */
int sk_store_activity_restock(struct sk_store *st, uint32_t item, uint64_t restock_id,
			      uint64_t units, int64_t now_ns);

/**
 * sk_store_activity_removal - the units removal @p request_id of @p item
 * took back, if it was applied: what a caller checks before it takes units
 * out of the item table (sk_store_activity_remove() records them after).
 * @param units  [out] its units (set on 0)
 * @return 0 (applied), -ENOENT (never applied), -EEXIST (@p request_id
 *         names a restock of the item), or an error.
 */
int sk_store_activity_removal(struct sk_store *st, uint32_t item, uint64_t request_id,
			      uint64_t *units);

/**
 * sk_store_activity_remove - take @p units unsold units back from the
 * activity of @p item (removed += units), once per @p request_id (shared
 * with the restock ids of the item). Only unsold units go: the call is
 * refused when total + added - removed - units would fall below the units
 * live orders hold. The store cannot see units sold but not yet committed
 * (queued in the dataplane): the caller takes the units out of the item
 * table first (sk_stock_remove(), which only finds unsold ones) and records
 * them here after. Appends SK_STORE_EV_REMOVED.
 * @return 0 (applied), SK_STORE_UNCHANGED (@p request_id already applied
 *         with the same units), -EEXIST (@p request_id applied with other
 *         units, or by a restock), -ENOENT (no activity), -EPERM (closed),
 *         -EINVAL (@p units or @p request_id 0), -ERANGE (fewer than
 *         @p units unsold), -ENOSPC, -EACCES.
 */
int sk_store_activity_remove(struct sk_store *st, uint32_t item, uint64_t request_id,
			     uint64_t units, int64_t now_ns);

/**
 * sk_store_activity_pause - pause (@p paused true) or resume the activity
 * of @p item: while paused_ns is set the item table refuses every buy
 * (the dataplane answers "paused"); orders, payments and deadlines go on.
 * Appends SK_STORE_EV_PAUSED or SK_STORE_EV_RESUMED.
 * @return 0 (changed), SK_STORE_UNCHANGED (already paused, or already
 *         selling), -ENOENT (no activity), -EPERM (closed), -ENOSPC,
 *         -EACCES.
 */
int sk_store_activity_pause(struct sk_store *st, uint32_t item, bool paused, int64_t now_ns);

/**
 * sk_store_activity_extend - move the end of the activity of @p item to
 * @p end_ns, later than the current one (INT64_MAX = never). Appends
 * SK_STORE_EV_EXTENDED (units = @p end_ns). Whether the sale has ended
 * already is the caller's rule (it knows the clock).
 * @return 0 (moved), SK_STORE_UNCHANGED (the end is @p end_ns already),
 *         -ERANGE (@p end_ns is before the current end: an end only moves
 *         later), -EINVAL (@p end_ns <= 0), -ENOENT (no activity), -EPERM
 *         (closed), -ENOSPC, -EACCES.
 */
int sk_store_activity_extend(struct sk_store *st, uint32_t item, int64_t end_ns, int64_t now_ns);

/* ----------------------------------------------------------------- cursors */

/**
 * sk_store_cursor_get - the value of cursor @p name.
 * @return 0, -ENOENT (never set), -EINVAL (name empty or longer than
 *         SK_STORE_CURSOR_NAME_MAX).
 */
int sk_store_cursor_get(struct sk_store *st, const char *name, uint64_t *value);

/**
 * sk_store_cursor_set - set cursor @p name to @p value, durably.
 * @return 0, -EINVAL (bad name), -ENOSPC, -EACCES.
 */
int sk_store_cursor_set(struct sk_store *st, const char *name, uint64_t value);

/* ------------------------------------------------------------ housekeeping */

/** Sizes and counters, for /metrics and seckillctl. */
struct sk_store_info {
	uint32_t schema_major, schema_minor;
	uint32_t page_size;  /**< bytes */
	uint64_t map_size;   /**< bytes the data file may reach */
	uint64_t used_bytes; /**< bytes in use (last page + 1) x page size */
	uint32_t readers;    /**< reader slots in use */
	uint64_t last_txn;   /**< id of the last committed write transaction */
	uint64_t order_lines, holdings_entries, item_entries, events, cursors, deadlines;
	uint64_t requests;   /**< entries of the payment request table */
	uint64_t event_next; /**< seq the next event will get */
	/** The schema major the open of this handle upgraded in place (0: none). */
	uint32_t upgraded_from;
	/** Order lines that upgrade rewrote to schema 4's layout (0: none). */
	uint64_t upgraded_lines;
};

/** sk_store_info - fill @p info. @return 0 or an error. */
int sk_store_info(struct sk_store *st, struct sk_store_info *info);

/**
 * sk_store_verify - check the store's invariants in one read snapshot:
 * every order complete and in one state; every live line has its `by_user`
 * entry and no other entry exists; each item's ledger live units equal the
 * sum of its holdings; every confirmed order with a deadline has its
 * `deadlines` entry and no other entry exists; events are below the next
 * sequence. O(size of the store): for tests and reconcile.
 * @param err     [out] on -EBADMSG, the first discrepancy; may be NULL
 * @return 0 (consistent), -EBADMSG (inconsistent), or an error.
 */
int sk_store_verify(struct sk_store *st, char *err, size_t errlen);

/** sk_store_outcome_name - "new", "dup", ...; "?" for unknown values. */
const char *sk_store_outcome_name(unsigned outcome);

/** sk_store_event_name - "confirmed", "restocked", ...; "?" for unknown values. */
const char *sk_store_event_name(unsigned type);

#ifdef __cplusplus
}
#endif

#endif /* SK_STORE_H */
