/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_metrics.h - seckill-mysql-writer's counters and their Prometheus text,
 * served on 127.0.0.1:PORT/metrics by libmicrohttpd.
 *
 * Thread-safety: the writer's thread adds with mw_metrics_add() / sets with
 * mw_metrics_set(), the HTTP thread reads; every access is a relaxed atomic
 * on one 64-bit word, so a scrape may see one batch half counted, never a
 * torn value.
 */
#ifndef MW_METRICS_H
#define MW_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/**
 * The counters and gauges (the index of each in struct mw_metrics.v). The
 * values of one family (one metric name, several labels) are adjacent, in
 * the order of the family's row in mw_metrics.c's table.
 */
enum mw_metric {
	MW_M_APPLIED,	      /**< messages applied */
	MW_M_DUPLICATE,	      /**< messages whose seq was applied before */
	MW_M_PARKED,	      /**< messages parked (first time only) */
	MW_M_REFUSED,	      /**< anomalies recorded without a state change */
	MW_M_MALFORMED,	      /**< values that are not a valid v1 message */
	MW_M_UNKNOWN_TYPE,    /**< valid JSON of a type this writer does not know */
	MW_M_NOT_FOR_DB,      /**< events with nothing for MariaDB (pay_rejected) */
	MW_M_SQL_ERRORS,      /**< messages whose data MariaDB refused (parked for
				   good, reason sql) */
	MW_M_UNPARKED,	      /**< parked messages applied later */
	MW_M_GUARD_STOCK,     /**< stock guard refused a line (0 rows), caught up */
	MW_M_GUARD_USER,      /**< per-user guard refused a line (unique key), caught up */
	MW_M_GUARD_WAITS,     /**< a guard refused a line while the topics were behind */
	MW_M_REFUND_REFUSED,  /**< refund above the line's units */
	MW_M_STATE_CONFLICT,  /**< event for an order in another state */
	MW_M_ORDER_CONFLICT,  /**< confirmed order id written before with another seq */
	MW_M_PAY_CONFLICT,    /**< pay_conflict events recorded */
	MW_M_ORDERS,	      /**< orders written */
	MW_M_BATCHES,	      /**< transactions committed */
	MW_M_BATCH_RETRIES,   /**< batches rolled back and tried again */
	MW_M_RUNS,	      /**< runs of orders written whole (mw_run.c) */
	MW_M_RUNS_REPLAYED,   /**< runs rolled back and applied one by one */
	MW_M_DB_CONNECTS,     /**< successful (re)connections to MariaDB */
	MW_M_KAFKA_ERRORS,    /**< consumer errors reported (outages ...) */
	MW_M_COMMIT_ERRORS,   /**< offset commits that failed (retried later) */
	MW_M_PARKED_FOR_GOOD, /**< parked rows made final (not retried) */
	MW_M_PARKED_NOW,      /**< gauge: rows in the parked table */
	MW_M_PARKED_FINAL,    /**< gauge: rows in it that are final */
	MW_M_PARKED_ORDER,    /**< gauge: rows of reason order; the next five:
				   item, stock, user, behind, sql (MW_PARK_REASONS) */
	MW_M_PARKED_ITEM,
	MW_M_PARKED_STOCK,
	MW_M_PARKED_USER,
	MW_M_PARKED_BEHIND,
	MW_M_PARKED_SQL,
	MW_M_STALLED,	  /**< gauge: 1 while a batch fails and is retried */
	MW_M_DB_UP,	  /**< gauge: 1 while connected */
	MW_M_LAST_LAG_NS, /**< gauge: commit time - time_ns of the last order */
	MW_M_PARTITIONS,  /**< gauge: partitions assigned to this writer */
	MW_M_N
};

/** The reasons of the parked table, one gauge each from MW_M_PARKED_ORDER. */
#define MW_PARK_REASONS 6

/** The values; all-zero is a valid start. */
struct mw_metrics {
	uint64_t v[MW_M_N];
	void *http; /**< the HTTP daemon, NULL when not serving */
};

/** mw_metrics_add - v[@p m] += @p n (relaxed atomic). */
static inline void
mw_metrics_add(struct mw_metrics *mt, enum mw_metric m, uint64_t n)
{
	__atomic_fetch_add(&mt->v[m], n, __ATOMIC_RELAXED);
}

/** mw_metrics_set - v[@p m] = @p n (relaxed atomic), for gauges. */
static inline void
mw_metrics_set(struct mw_metrics *mt, enum mw_metric m, uint64_t n)
{
	__atomic_store_n(&mt->v[m], n, __ATOMIC_RELAXED);
}

/**
 * mw_metrics_format - the Prometheus text of @p mt into @p buf.
 * @return bytes written (NUL excluded), at most @p len - 1; the text is cut
 *         if @p buf is too small (8 KiB is enough).
 */
size_t mw_metrics_format(const struct mw_metrics *mt, char *buf, size_t len);

/**
 * mw_metrics_list - every family mw_metrics_format() writes, one line each:
 * "name type label" ("-" for none), from the same table. The tests compare
 * it with docs/monitoring.md and the alert rules. Any thread.
 * @return 0, or -EIO if writing to @p out failed.
 */
int mw_metrics_list(FILE *out);

/**
 * mw_metrics_serve - serve GET /metrics on 127.0.0.1:@p port from a thread
 * of libmicrohttpd's. Other paths answer 404.
 * @return 0, or -EADDRINUSE / -EIO when the daemon cannot start.
 */
int mw_metrics_serve(struct mw_metrics *mt, unsigned port);

/** mw_metrics_stop - stop serving (joins the HTTP thread). Idempotent. */
void mw_metrics_stop(struct mw_metrics *mt);

#endif /* MW_METRICS_H */
