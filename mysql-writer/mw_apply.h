/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_apply.h - what seckill-mysql-writer does with a batch of messages: one
 * MariaDB transaction that applies each message (decoded by mw_msg.h) with
 * the seeds' guards in SQL, parks the ones whose order or item is not
 * there yet, retries the parked ones, and commits. Every statement with
 * data in it is a prepared one (mw_stmt.h); consecutive confirmed orders
 * are written as one run of bulk statements (mw_run.h) and replayed
 * one by one when the run does not land whole.
 *
 * Idempotence: every message carries the seq of the appliance's event log;
 * its order_events row (PRIMARY KEY seq) is inserted first, in the same
 * transaction, so a message seen before changes nothing.
 *
 * Thread-safety: a struct mw_apply belongs to one thread (its connection's).
 */
#ifndef MW_APPLY_H
#define MW_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mw_db.h"
#include "mw_metrics.h"
#include "mw_msg.h"
#include "mw_run.h"
#include "mw_stmt.h"

/** One message of a batch: its Kafka value, borrowed for the call. */
struct mw_input {
	const char *val; /**< the value; NULL for an empty message */
	size_t len;	 /**< bytes at val */
};

/**
 * Whether the writer has consumed every message there is on its partitions
 * (then a guard's refusal is final: nothing on its way can undo it), or
 * false when that cannot be told. Called at most once per batch, only when
 * a guard refuses a line.
 */
typedef bool (*mw_caught_up_fn)(void *arg);

/** The applier. Set it up with mw_apply_init(); the fields are its own. */
struct mw_apply {
	struct mw_db *db;	   /**< connected; borrowed */
	struct mw_metrics *mt;	   /**< where committed counts go; borrowed */
	uint32_t default_limit;	   /**< per-user limit of items whose activity event
					carries none */
	int64_t final_after_ns;	   /**< a row parked for its item still blocked
					this long after, caught up, is final */
	const char *prog;	   /**< name in log lines */
	mw_caught_up_fn caught_up; /**< NULL: a refusal is always final */
	void *caught_up_arg;	   /**< its argument */
	int caught_up_now;	   /**< this batch: -1 not asked yet, 0, 1 */
	bool unpark_pending;	   /**< retry the parked table in the next batch */
	uint64_t unpark_cursor;	   /**< the seq the last retry of the parked table
					stopped after (its budget); 0: the start */
	struct {
		int64_t parked_ns; /**< when it was parked */
		bool refused;	   /**< a guard's refusal was counted */
	} row;			   /**< the parked row being retried */
	bool count_parked;	   /**< recount the parked table before commit */
	int64_t parked_rows;	   /**< rows in the parked table (-1 unknown): the
					order barrier is skipped while it is 0 */
	enum mw_metric refuse;	   /**< the counter of the last refusal */
	int64_t last_time_ns;	   /**< time_ns of the last order of the batch */
	uint64_t tally[MW_M_N];	   /**< this batch's counts, added on commit */
	struct mw_msg msg;	   /**< scratch */
	struct mw_stmts st;	   /**< the prepared statements */
	struct mw_run run;	   /**< scratch of a run of orders */
};

/**
 * mw_apply_init - set @p a up (the parked table is retried by the first
 * batch: messages parked by an earlier run). @p final_after_s: a row
 * parked for its item (reason item) is final (parked for good, not
 * retried) when a retry finds it still blocked that many seconds after it
 * was parked, with the writer caught up; rows of every other reason but
 * sql are retried until what they wait for arrives. @p caught_up may be
 * NULL (always caught up).
 */
void mw_apply_init(struct mw_apply *a, struct mw_db *db, struct mw_metrics *mt,
		   uint32_t default_limit, uint32_t final_after_s, const char *prog,
		   mw_caught_up_fn caught_up, void *caught_up_arg);

/**
 * mw_apply_fini - close the prepared statements of @p a (its connection
 * may be closed already). @p a may be set up again.
 */
void mw_apply_fini(struct mw_apply *a);

/**
 * mw_apply_batch - apply @p n messages in order in one transaction and
 * commit it. Malformed messages and unknown types are logged, counted and
 * skipped; a message of another version ("v", a newer exporter) is not:
 * it fails the batch with -EAGAIN (a->db->err 0, a->db->errmsg says why)
 * until the writer is upgraded; a message whose order or item is not written yet, or that the
 * stock or per-user guard refuses, is parked (kept in the parked table and
 * applied by a later batch once what it waits for arrived); a message whose
 * data MariaDB refuses (mw_db_message_error()) is parked for good with
 * reason sql; anomalies (a state conflict, a refund above the line's
 * units, a confirmed order id seen with another seq) are recorded and
 * counted without a state change. When anything was applied, or @p n is 0
 * (the idle retry), or the last retry stopped mid-table, the parked rows
 * that are not final are retried in seq order from where the last retry
 * stopped, 10,000 at most per batch (until a sweep of the table applies
 * none, 8 sweeps at most). A guard's refusal counts as one (logged with
 * the order id) only when the writer is caught up (@p a->caught_up), else
 * as a wait. The counters and gauges go to the metrics only once the
 * transaction committed. A run of confirmed orders that does not land
 * whole (mw_run.h) is rolled back to its savepoint and applied one by
 * one, so one bad order parks alone and the others land.
 *
 * @return 0 once committed; -EAGAIN when a statement or the commit failed
 *         with any error but the message's own data (the server is away, a
 *         deadlock, a full table, read-only, an unknown error, a message of
 *         another version ...:
 *         a->db->err says which; mw_db_reconnect() whether the connection
 *         must be made anew): everything was rolled back and the same batch
 *         must be applied again.
 */
int mw_apply_batch(struct mw_apply *a, const struct mw_input *in, size_t n);

#endif /* MW_APPLY_H */
