/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's core: what turns the dataplane's queued sales into
 * durable orders, and what ends them (payment or timeout).
 *
 * A struct sk_control ties together the shared arena (sk_shm.h), the
 * per-lcore order rings (sk_order.h) and the LMDB order store (sk_store.h):
 *
 *   - drain (group commit): peek up to a batch of records from every ring
 *     without removing them, write them with one sk_store_put_orders() (one
 *     durable LMDB transaction), move each order queued -> confirmed in the
 *     status table (or -> failed, units returned, when the store refuses
 *     it), advance each lcore's settled sequence, and only then remove the
 *     records from the rings. A crash anywhere leaves the records in their
 *     ring; the next control plane re-reads them and the store skips the
 *     ones it already holds.
 *   - expire: cancel the orders whose payment deadline has passed (store
 *     first, compare-and-set, then the arena: units back to the pool and the
 *     user's dedup holding released).
 *   - pay: confirmed -> paid, store first, then the status table; the first
 *     writer wins against expire.
 *   - payments (sk_control_payment()): paid and refund messages, exactly once
 *     by request id; a refund's units go back to the arena after the store
 *     recorded it.
 *   - views for the admin API and /metrics: orders, items, counters.
 *
 * The arena and rings are reached either by name, as a DPDK secondary
 * process (sk_control_attach()), or by pointer (sk_control_init()), which is
 * what unit tests use with an arena in plain memory.
 *
 * Thread-safety: one thread (the control plane's main loop) calls
 * sk_control_drain() and sk_control_expire(); any thread (the admin API's)
 * may call sk_control_pay() and the read functions concurrently with it.
 * Every store write and the arena moves that follow it run under one mutex
 * private to this handle, so the status table never disagrees with the
 * store as seen by another thread of this process; reads take no lock. The
 * dataplane never takes that mutex: it only sees atomics in the arena.
 * sk_control_close() must not race any other call.
 */
#ifndef SK_CONTROL_H
#define SK_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_order.h"
#include "sk_shm.h"
#include "sk_store.h"
#include "sk_store_map.h"
#include "sk_store_payments.h"

struct rte_ring;

/** Default payment timeout: 15 minutes. */
#define SK_CONTROL_PAY_TIMEOUT_DEFAULT_NS (INT64_C(15) * 60 * 1000000000)
/** Default most records in one group commit (over all rings). */
#define SK_CONTROL_BATCH_MAX_DEFAULT 4096
/** Default most orders cancelled by one sk_control_expire() call. */
#define SK_CONTROL_EXPIRE_MAX_DEFAULT 1024
/** Size of an error-message buffer that never truncates. */
#define SK_CONTROL_ERR_MAX 512
/** Buckets of the commit latency histogram (the last one is +Inf). */
#define SK_CONTROL_LAT_BUCKETS 17

/** Parameters of sk_control_init() / sk_control_attach(). */
struct sk_control_conf {
	const char *store_dir;	 /**< LMDB store directory, required */
	uint64_t store_map_size; /**< bytes; 0 = the store's default */
	unsigned store_flags;	 /**< enum sk_store_flags (SK_STORE_NOSYNC for tests) */
	/**
	 * Payment timeout of an order, counted from its sale time; 0 = the
	 * default (SK_CONTROL_PAY_TIMEOUT_DEFAULT_NS); negative = orders get
	 * no deadline. An item's activity in the store may set its own.
	 */
	int64_t pay_timeout_ns;
	/** Most records in one group commit; 0 = default; at least 8 per ring. */
	uint32_t batch_max;
	/**
	 * Longest wait, from the first record seen, for a batch to fill before
	 * it is committed anyway; 0 = commit whatever is there on every call.
	 */
	int64_t batch_linger_ns;
	/** Most orders cancelled per sk_control_expire() call; 0 = default. */
	uint32_t expire_max;
	/**
	 * How long the store remembers a payment request id (its request
	 * table's max age); 0 = SK_STORE_REQUESTS_TTL_DEFAULT_NS. It must
	 * outlast the payments topic's retention (docs/kafka.md).
	 */
	int64_t requests_ttl_ns;
	/**
	 * This appliance's cluster member number (0: standalone; in a cluster,
	 * the position of --cluster-member in --cluster-members, from 1). The
	 * arena's must be the same: it is in every order id the dataplane mints.
	 */
	uint32_t member;
	/**
	 * When and how much the store's map grows online (sk_store_map.h):
	 * all zero = at 80 % used, doubling, no cap but the file system's
	 * free space. See sk_control_map_check().
	 */
	struct sk_store_map_policy map_grow;
	/**
	 * Retention (docs/control.md, "Retention"): activities over for this
	 * many days are archived (sk_control_archive()) once settled; 0 = off.
	 */
	int64_t retention_keep_days;
	/** The Kafka exporter reads the event log: trim only below its cursor. */
	bool events_exported;
	/** Without an exporter: the events kept; 0 = SK_CONTROL_EVENTS_KEEP_DEFAULT. */
	uint64_t events_keep;
	/** Orders deleted per purge transaction; 0 = SK_CONTROL_ARCHIVE_SLICE_DEFAULT. */
	uint32_t archive_slice;
};

/** Events kept without an exporter (no reader downstream: a bounded tail). */
#define SK_CONTROL_EVENTS_KEEP_DEFAULT 100000
/** Orders of an archived activity deleted per write transaction. */
#define SK_CONTROL_ARCHIVE_SLICE_DEFAULT 4096

/** An open control plane. Opaque. */
struct sk_control;

/**
 * sk_control_init - start a control plane on an arena and its rings given
 * by pointer, and open the store.
 *
 * Before anything else it repairs what a crashed predecessor may have left:
 *
 *   1. each ring's consumer head is set back to its consumer tail. The drain
 *      peeks records (head moves, tail stays) and removes them only after
 *      the commit (tail moves); a process that died in between left head
 *      ahead of tail, and a new peek would start at head and never see those
 *      records. This is safe only because the control plane is the rings'
 *      single consumer and at most one control plane runs per dataplane;
 *   2. every order of this run below its lcore's settled sequence whose
 *      status says confirmed but whose store state says cancelled (or paid)
 *      is brought in line: a predecessor died between the store write and
 *      the arena move, so the cancelled order's units go back now. O(orders
 *      of this run): one store read per confirmed order.
 *
 * @param[out] out     the control plane; set only on success
 * @param[in]  shm     the arena (sk_shm_attach()ed); not owned, must outlive
 *                     the control plane
 * @param[in]  rings   @p nrings order rings, ring i being lcore i's; not
 *                     owned; each must be single-consumer
 * @param[in]  nrings  must equal shm->nlcores
 * @param[in]  conf    parameters (store_dir required)
 * @param[out] err     on error, a one-line description; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, or -EINVAL (NULL argument, @p nrings mismatch, a ring that is
 *         not single-consumer, no store_dir, batch_max too large),
 *         -EXDEV (the arena's member number is not conf->member: the
 *         dataplane's [cluster] member_id does not match this member),
 *         -ENOMEM, or an error of sk_store_open() (-EPROTO, -EACCES, ...).
 */
int sk_control_init(struct sk_control **out, struct sk_shm *shm, struct rte_ring *const *rings,
		    unsigned nrings, const struct sk_control_conf *conf, char *err, size_t errlen);

/**
 * sk_control_attach - as a DPDK secondary process (EAL already initialised):
 * look up the memzone SK_SHM_MEMZONE, check it with sk_shm_attach(), look up
 * lcore i's ring "sk_orders_<i>" for every i < shm->nlcores, then
 * sk_control_init().
 * @param[out] out     the control plane; set only on success
 * @param[in]  conf    parameters, as for sk_control_init()
 * @param[out] err     on error, a one-line description; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, -ENOENT (no memzone or a ring missing: is the dataplane
 *         running with the same --file-prefix?), -EPROTO (the memzone is not
 *         an arena of this build's layout), or an error of sk_control_init().
 */
int sk_control_attach(struct sk_control **out, const struct sk_control_conf *conf, char *err,
		      size_t errlen);

/**
 * sk_control_close - close the store and free @p ctl. Records peeked but not
 * finished cannot exist here (every drain finishes its peeks before it
 * returns). The arena and rings are not touched.
 * @param ctl  the control plane, or NULL (ignored); invalid afterwards. No
 *             other call on it may be in progress (stop the admin API first).
 */
void sk_control_close(struct sk_control *ctl);

/** Flags of sk_control_drain(). */
enum sk_control_drain_flags {
	SK_CONTROL_DRAIN_NOW = 1u << 0, /**< commit now, whatever the linger */
};

/** What one sk_control_drain() did. */
struct sk_control_drain_info {
	uint32_t records;	/**< records removed from the rings */
	uint32_t orders_new;	/**< orders stored now and confirmed */
	uint32_t orders_dup;	/**< orders the store already held (replay) */
	uint32_t orders_failed; /**< orders refused: failed, units returned */
};

/**
 * sk_control_drain - one group commit over every ring.
 *
 * Commits when the records waiting fill a batch, when one ring holds a full
 * per-ring share, when batch_linger_ns has passed since the first of them
 * was seen, or with SK_CONTROL_DRAIN_NOW; otherwise returns 0 and waits for
 * the next call. A cart is never split between two batches.
 *
 * Order of effects: sk_store_put_orders() (durable) -> status moves
 * (queued -> confirmed / failed) -> sk_shm_settle() per lcore -> records
 * removed from the rings. Orders the store refuses (oversell guard, invalid
 * cart, id conflict, map full) become failed and their units go back
 * (sk_buy_cancel(SK_ORDER_FAILED)); an order the store already holds is
 * brought in line with its stored state. A batch too large for one LMDB
 * transaction is split.
 *
 * @param ctl     the control plane
 * @param now_ns  wall clock (the linger timer and the store's commit time)
 * @param flags   enum sk_control_drain_flags
 * @param info    [out] what was done; may be NULL
 * @return records removed from the rings (>= 0), or a negative errno of
 *         the store (-EIO, -EAGAIN, -ENOMEM ...): nothing was removed, the
 *         records stay queued and the next call retries them. Main thread
 *         only.
 */
int sk_control_drain(struct sk_control *ctl, int64_t now_ns, unsigned flags,
		     struct sk_control_drain_info *info);

/**
 * sk_control_expire - cancel the unpaid orders whose payment deadline is
 * <= @p now_ns, earliest first, at most expire_max of them (call again while
 * it returns expire_max).
 *
 * Per order: the store moves confirmed -> cancelled (compare-and-set: a
 * payment that came first wins and the order is left alone), then the
 * units go back. For an order of this dataplane run that is
 * sk_buy_cancel(SK_ORDER_CANCELLED) on the arena (status, pool, dedup). For
 * an order of an earlier run (its epoch differs; it is not in the status
 * table) each line's units go back with sk_stock_return() on the item found
 * by id, and the user's dedup holding is released (recovery rebuilt it from
 * the store); an item absent from the arena gets nothing (the next preheat
 * counts from the store, which no longer holds the order as live).
 *
 * @param ctl     the control plane
 * @param now_ns  wall clock: deadlines up to it are due; recorded as the
 *                time of each cancel
 * @return orders cancelled now (>= 0; an order paid first is skipped, not
 *         counted), or a negative errno of the store (-EIO, -ENOSPC,
 *         -EAGAIN ...) if nothing could be cancelled. Main thread only.
 */
int sk_control_expire(struct sk_control *ctl, int64_t now_ns);

/** Outcomes of sk_control_pay(). */
enum sk_control_pay_result {
	SK_CONTROL_PAY_DONE = 0,  /**< paid now */
	SK_CONTROL_PAY_ALREADY,	  /**< was paid already: an idempotent success */
	SK_CONTROL_PAY_CANCELLED, /**< cancelled (timeout) first: conflict */
	SK_CONTROL_PAY_FAILED,	  /**< never stored (failed): conflict */
	SK_CONTROL_PAY_QUEUED,	  /**< sold but not yet durable: retry shortly */
	SK_CONTROL_PAY_UNKNOWN,	  /**< no such order */
};

/**
 * sk_control_pay - record the payment of order @p id: store confirmed ->
 * paid (compare-and-set, durable), then the status table.
 *
 * An order still queued (in a ring, not yet committed) is waited for up to
 * @p wait_ms milliseconds (polling its status every millisecond, without
 * holding the write mutex), then answered SK_CONTROL_PAY_QUEUED.
 *
 * @param ctl      the control plane
 * @param id       order id
 * @param now_ns   wall clock, recorded as the payment time
 * @param wait_ms  how long to wait for a queued order; 0 = answer at once
 * @return an enum sk_control_pay_result (>= 0), or a negative errno of the
 *         store (-ENOSPC, -EIO, -EAGAIN ...: nothing changed). Any thread.
 */
int sk_control_pay(struct sk_control *ctl, uint64_t id, int64_t now_ns, unsigned wait_ms);

/**
 * sk_control_pay_result_name - "paid", "already_paid", "cancelled", "failed",
 * "queued", "unknown"; "error" for a negative value. Static strings.
 */
const char *sk_control_pay_result_name(int result);

/**
 * Outcomes of sk_control_payment(): the store's (enum sk_store_pay_outcome,
 * same numbers) and those of an order the store does not hold.
 */
enum sk_control_pm_outcome {
	SK_CONTROL_PM_DONE = SK_STORE_PAY_DONE,		/**< paid / refunded now */
	SK_CONTROL_PM_ALREADY = SK_STORE_PAY_ALREADY,	/**< paid already (success) */
	SK_CONTROL_PM_CONFLICT = SK_STORE_PAY_CONFLICT, /**< paid after the cancel won */
	SK_CONTROL_PM_STATE = SK_STORE_PAY_STATE,	/**< wrong state (refund of unpaid) */
	SK_CONTROL_PM_TOO_MANY = SK_STORE_PAY_TOO_MANY, /**< more units than remain */
	SK_CONTROL_PM_NO_ITEM = SK_STORE_PAY_NO_ITEM,	/**< no such line / cart without item */
	SK_CONTROL_PM_UNKNOWN = SK_STORE_PAY_OUTCOMES,	/**< no such order */
	SK_CONTROL_PM_QUEUED,				/**< sold, not yet durable: retry */
	SK_CONTROL_PM_FAILED,				/**< never stored (failed) */
	SK_CONTROL_PM_REUSED, /**< request id already used for another message */
	SK_CONTROL_PM_COUNT
};

/** A payment message (Kafka seckill.payments, or the admin API's refund). */
struct sk_control_payment {
	const char *request; /**< request id (sk_store_request_ok()) */
	uint64_t order;	     /**< order id */
	uint8_t kind;	     /**< enum sk_store_pay_kind */
	uint32_t item;	     /**< refund: the line's item; 0 = the only / every line */
	uint32_t units;	     /**< refund: units; 0 = everything left */
};

/** What sk_control_payment() did. */
struct sk_control_pm_result {
	unsigned outcome; /**< enum sk_control_pm_outcome */
	bool duplicate;	  /**< a repeat of a request applied before: its first outcome
			       (not set for SK_CONTROL_PM_REUSED) */
	uint8_t state;	  /**< the order's state in the store after it (if known) */
	uint32_t units;	  /**< units paid or refunded by the request */
};

/**
 * sk_control_payment - apply a payment message exactly once by its request
 * id (sk_store_payment_apply(): the store records the outcome in the
 * transaction that moves the order), then bring the arena in line:
 *
 *   - paid, done: status confirmed -> paid (like sk_control_pay());
 *   - refund, done: each refunded line's units back to the pool and the
 *     user's dedup holding lowered (sk_buy_refund(), orders of any run;
 *     an item the arena lacks gets nothing, preheat counts from the store);
 *     status paid -> refunded when nothing is left;
 *   - a duplicate changes nothing (the arena followed the first time).
 *
 * Store first, then the arena, under the write mutex: a crash in between
 * leaves the refunded units unsold (not yet back on sale) until the
 * dataplane restarts and rebuilds its item table from the store; never
 * sold twice.
 *
 * An order the store does not hold: queued (waited for up to @p wait_ms
 * like sk_control_pay(), then SK_CONTROL_PM_QUEUED), failed, or unknown;
 * nothing is recorded for it.
 *
 * @param ctl      the control plane
 * @param p        the message (request id checked here)
 * @param now_ns   wall clock, recorded
 * @param wait_ms  how long to wait for a queued order
 * @param out      [out] the outcome
 * @return 0 (outcome in @p out), -EINVAL (bad request id or kind: nothing
 *         done, counted as malformed), or a negative errno of the store
 *         (-ENOSPC, -EIO, -EAGAIN ...: nothing changed; retry). Any thread.
 */
int sk_control_payment(struct sk_control *ctl, const struct sk_control_payment *p, int64_t now_ns,
		       unsigned wait_ms, struct sk_control_pm_result *out);

/**
 * sk_control_payment_malformed - count a payment message that could not be
 * read (bad JSON, fields missing or out of range): for /metrics. Any thread.
 */
void sk_control_payment_malformed(struct sk_control *ctl);

/**
 * sk_control_payment_rejected - a seckill.payments message refused without
 * being applied (its signature: enum sk_store_pay_reject @p reason): counted
 * for /metrics and recorded durably as an SK_STORE_EV_PAY_REJECTED event
 * (partition, offset, reason; nothing of the message itself), which the
 * exporter sends to seckill.events.
 * @return 0, -EINVAL (@p reason unknown, @p partition or @p offset < 0), or
 *         a negative errno of the store (-ENOSPC, -EACCES ...: nothing
 *         recorded nor counted; retry). Any thread.
 */
int sk_control_payment_rejected(struct sk_control *ctl, int32_t partition, int64_t offset,
				unsigned reason, int64_t now_ns);

/**
 * sk_control_pm_outcome_name - "done", "already", "conflict", "state",
 * "too_many", "no_item", "unknown", "queued", "failed", "reused"; "error"
 * for anything else. Static strings.
 */
const char *sk_control_pm_outcome_name(unsigned outcome);

/**
 * sk_control_map_check - grow the store's map if the conf's map_grow policy
 * says so (sk_store_map_target()), under the write lock, so never inside a
 * group commit. The drain runs the same check after each of its commits,
 * and once more when a commit meets a full map (then retried once); this
 * call covers the writes outside the drain (deadlines, payments, admin).
 * Logs each grow (old and new size, pause) and, once, a map that has no
 * room left to grow. Counters in sk_control_stats (map_*).
 * @return 1 if the map grew, 0 if it did not need to, or a negative errno:
 *         -EBUSY (transactions stayed open: retried at the next check),
 *         -ENOSPC (above the threshold, no room: capped by map_grow.max_size
 *         or the disk), or an error of sk_store_map_info() / the grow.
 *         Main thread, not inside a store call.
 */
int sk_control_map_check(struct sk_control *ctl);

/**
 * sk_control_heartbeat - write @p now_ns (wall clock) to
 * shm->progress[0].heartbeat_ns, the dataplane's sign that the control plane
 * is alive. Main thread (one writer).
 */
void sk_control_heartbeat(struct sk_control *ctl, int64_t now_ns);

/* ------------------------------------------------------------------ views */

/** sk_control_shm - the arena. */
struct sk_shm *sk_control_shm(const struct sk_control *ctl);

/** sk_control_store - the store (shared; see sk_store.h for its threading). */
struct sk_store *sk_control_store(const struct sk_control *ctl);

/** sk_control_nrings - rings drained (= shm->nlcores). */
unsigned sk_control_nrings(const struct sk_control *ctl);

/** sk_control_ring_depth - records waiting in lcore @p lcore's ring; 0 if out of range. */
unsigned sk_control_ring_depth(const struct sk_control *ctl, unsigned lcore);

/**
 * sk_control_order_status - the status byte of @p id in the arena
 * (SK_ORDER_NONE if unknown, of another run, or settled and out of the
 * status table).
 */
unsigned sk_control_order_status(const struct sk_control *ctl, uint64_t id);

/**
 * sk_control_order_counts - the orders in the status table (the last
 * 2^status_bits of each lcore) by status: @p counts[s] for each enum
 * sk_order_status s (SK_ORDER_STATUS_COUNT entries; [SK_ORDER_NONE] is 0).
 * A snapshot; costs a scan of one byte per order in the table (about 1 ms
 * per million).
 */
void sk_control_order_counts(const struct sk_control *ctl, uint64_t counts[SK_ORDER_STATUS_COUNT]);

/** An item as the arena and the store see it (sk_control_item_get()). */
struct sk_control_item {
	uint32_t id;
	bool in_arena;	/**< the arena has the item (fields below valid) */
	uint32_t state; /**< enum sk_item_state */
	bool sold_out;	/**< the sold-out flag */
	uint32_t per_user_limit;
	int64_t start_ns, end_ns;
	uint64_t price;
	uint64_t total;	    /**< units put on sale at preheat */
	uint64_t added;	    /**< units added by restocks */
	uint64_t removed;   /**< unsold units taken back by removals */
	uint64_t remaining; /**< pool + every bucket (snapshot) */
	uint64_t sold;	    /**< units sold, all lcores, before returns */
	uint64_t returned;  /**< units given back (timeouts, failures) */
	bool has_activity;  /**< the store has an activity (@c activity valid) */
	struct sk_store_activity activity;
	struct sk_store_ledger ledger; /**< the store's ledger (zero if none) */
};

/**
 * sk_control_item_get - fill @p out for item @p id: arena counters (a
 * snapshot of atomics) and the store's activity and ledger. Any thread.
 * @param ctl  the control plane
 * @param id   item id
 * @param out  [out] the item
 * @return 0, -ENOENT (neither the arena nor the store knows the item), or
 *         an error of the store (-EIO, -EAGAIN ...).
 */
int sk_control_item_get(struct sk_control *ctl, uint32_t id, struct sk_control_item *out);

/**
 * Callback of sk_control_items_foreach(); @p it is valid during the call.
 * Return 0 to go on; any other value stops the walk and is returned.
 */
typedef int (*sk_control_item_cb)(const struct sk_control_item *it, void *arg);

/**
 * sk_control_items_foreach - every item of the arena (in table order), then
 * every item the store has an activity for that the arena lacks
 * (in_arena false). Any thread.
 * @param ctl  the control plane
 * @param cb   called once per item
 * @param arg  passed to @p cb
 * @return 0, the callback's non-zero value, or an error of the store.
 */
int sk_control_items_foreach(struct sk_control *ctl, sk_control_item_cb cb, void *arg);

/** Counters since sk_control_init(); every field is a uint64_t. */
struct sk_control_stats {
	uint64_t batches;	   /**< group commits (successful put_orders calls) */
	uint64_t records;	   /**< records removed from the rings */
	uint64_t orders_committed; /**< orders stored and confirmed */
	uint64_t units_committed;  /**< their units */
	uint64_t orders_dup;	   /**< orders the store already held (replays) */
	uint64_t orders_failed;	   /**< orders refused by the store: failed */
	uint64_t store_errors;	   /**< drains that failed and left records queued */
	uint64_t batch_splits;	   /**< batches split because too large (-E2BIG) */
	uint64_t cancels;	   /**< orders cancelled at their deadline */
	uint64_t cancels_foreign;  /**< ... of which of an earlier dataplane run */
	uint64_t units_returned;   /**< units given back by cancels and failures */
	uint64_t pay[SK_CONTROL_PAY_UNKNOWN + 1]; /**< pay calls by result */
	uint64_t pay_errors;			  /**< pay calls that failed (store error) */
	/** payment messages by kind (0 paid, 1 refund) and outcome, repeats excluded */
	uint64_t payments[2][SK_CONTROL_PM_COUNT];
	uint64_t payments_dup;	     /**< ... of which repeats of a request id */
	uint64_t payments_malformed; /**< messages that could not be read */
	uint64_t payments_errors;    /**< messages that failed on a store error */
	/** seckill.payments messages refused unapplied, by enum sk_store_pay_reject */
	uint64_t payments_rejected[SK_STORE_REJ_STALE + 1];
	uint64_t units_refunded;      /**< units back on sale from refunds */
	uint64_t activities_created;  /**< activities created through the admin API */
	uint64_t activities_recorded; /**< config items stored as activities */
	uint64_t activities_loaded;   /**< activities put on sale in the arena (preheat) */
	uint64_t activities_closed;   /**< activities closed */
	uint64_t units_restocked;     /**< units added to the arena by restocks */
	uint64_t preheat_errors;      /**< activities the arena could not take */
	uint64_t preheat_passes;      /**< sk_control_preheat() passes done */
	uint64_t repaired;	      /**< orders brought in line with the store (crash repair) */
	uint64_t anomalies;	      /**< arena and store disagreed beyond repair (see docs) */
	uint64_t commit_ns_sum;	      /**< total time in put_orders */
	uint64_t commit_count;	      /**< put_orders calls timed */
	uint64_t commit_bucket[SK_CONTROL_LAT_BUCKETS]; /**< per bucket, not cumulative */
	uint64_t last_commit_ns;			/**< wall clock of the last commit */
	uint64_t map_grows;				/**< online grows of the store's map */
	uint64_t map_grow_busy;	      /**< grows put off: transactions stayed open */
	uint64_t map_grow_errors;     /**< grows LMDB or the file system refused */
	uint64_t map_grow_pause_ns;   /**< the last grow's pause of the store calls */
	uint64_t map_capped;	      /**< 1 while above the threshold with no room to grow */
	uint64_t activities_archived; /**< activities archived (sk_control_archive()) */
	uint64_t orders_archived;     /**< archived orders deleted from the store */
	uint64_t events_trimmed;      /**< events trimmed from the log */
	uint64_t retention_errors;    /**< sk_control_retention() calls that failed */
};

/**
 * Upper bounds of the commit latency buckets, ns (log-spaced 1-2-5 from
 * 50 us to 5 s); the last bucket is unbounded and its entry is 0.
 */
extern const uint64_t sk_control_lat_bounds_ns[SK_CONTROL_LAT_BUCKETS];

/**
 * sk_control_stats - a snapshot of the counters into @p out (each field read
 * atomically; the set is not one atomic snapshot). Any thread.
 */
void sk_control_stats(const struct sk_control *ctl, struct sk_control_stats *out);

/**
 * sk_control_metrics - write every metric in the Prometheus text exposition
 * format (version 0.0.4) to @p out: counters, the commit latency histogram,
 * ring depth, capacity and settled sequence per lcore, orders by status,
 * stock per item, the store's ledger per item and its size, whether the
 * dataplane process is alive, the periodic reconcile's results
 * (sk_control_reconcile_metrics()), then the dataplane's request metrics
 * (sk_dpmetrics.h) and the extra writer's. docs/monitoring.md lists them.
 * Any thread.
 * @param ctl  the control plane
 * @param out  where to write (flushed at the end); not closed
 * @return 0, -EIO if writing to @p out failed, -ENOMEM, or an error of the
 *         store (output then incomplete).
 */
int sk_control_metrics(struct sk_control *ctl, FILE *out);

/**
 * sk_control_metrics_list - every metric family seckill-control may serve
 * on /metrics, one line each, "name type labels" (labels comma separated,
 * "-" for none), from the tables its writers walk: this file's, the
 * reconcile's, the dataplane's (sk_dpmetrics.h), the Kafka exporter's, the
 * cluster member's and the admin API's. The tests compare it with
 * docs/monitoring.md and the alert rules. Any thread; no state needed.
 * @return 0, or -EIO if writing to @p out failed.
 */
int sk_control_metrics_list(FILE *out);

/** A writer of more metrics, appended to sk_control_metrics(). */
typedef int (*sk_control_metrics_fn)(void *arg, FILE *out);

/**
 * sk_control_metrics_extra - have sk_control_metrics() also call @p fn
 * (another component's metrics: the Kafka exporter). Call before the admin
 * API starts; @p arg must stay valid until sk_control_close() or a call
 * with @p fn NULL. Not thread-safe against sk_control_metrics().
 */
void sk_control_metrics_extra(struct sk_control *ctl, sk_control_metrics_fn fn, void *arg);

/* --------------------------------------------------------------- retention */

struct sk_store_archive_info;

/**
 * sk_control_archive - archive the orders of the activity of @p item now
 * (sk_store_archive.h): its file is written from a read snapshot (no lock
 * held), then the archive is recorded under the write lock and the item
 * table's item closed. The orders leave the store afterwards, in slices,
 * from sk_control_retention(). With an exporter, every event of the item
 * must have been sent (its cursor past them). Archives are serialised.
 * Thread-safe (the admin API and the policy's worker call it).
 * @param info  [out] the archive record (state PURGING); may be NULL
 * @param why   [out] on -EINPROGRESS, -EBUSY or -EAGAIN, why, NUL-terminated
 * @return 0, -ENOENT (no activity), -EALREADY (archived already),
 *         -EINPROGRESS (not over), -EBUSY (not settled, not exported, or a
 *         cart), -EAGAIN (an order changed meanwhile: try again), -EINVAL
 *         (@p item 0), or a store or file system error.
 */
int sk_control_archive(struct sk_control *ctl, uint32_t item, int64_t now_ns,
		       struct sk_store_archive_info *info, char *why, size_t whylen);

/**
 * sk_control_retention - the main loop's retention work, each step one
 * short write transaction under the write lock: one purge slice of an
 * archived activity (PURGING records are found again after a restart);
 * every second (or at once while the last slice was full and no record
 * waits in the rings) one trim slice
 * of the event log below the exporter's cursor, or, without an exporter,
 * below the last events_keep events; every minute, when
 * retention_keep_days is set, the activities over for that long handed to
 * a worker thread that archives them. Main thread only.
 * @return 1 if it wrote something (call again soon), 0, or an error (retried
 *         on the next call).
 */
int sk_control_retention(struct sk_control *ctl, int64_t now_ns);

#endif /* SK_CONTROL_H */
