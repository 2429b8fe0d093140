/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_apply.c - what seckill-mysql-writer does with a message: one function
 * per message type over the prepared statements (mw_stmt.h), the
 * per-message savepoint (applied, duplicate, parked, refused), the parked
 * table, and the batch transaction with its runs of orders (mw_run.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mysqld_error.h>

#include "sk_logfmt.h"

#include "mw_apply.h"

/* What a message's step function found. */
enum step {
	ST_DBERR = -1,	/* SQL failed: a->db->err */
	ST_OK = 0,	/* applied */
	ST_PARK_ORDER,	/* its order is not written yet */
	ST_PARK_ITEM,	/* its item is not written yet */
	ST_PARK_STOCK,	/* the stock guard refused a line */
	ST_PARK_USER,	/* the per-user guard refused a line */
	ST_PARK_BEHIND, /* an earlier message it must follow is parked */
	ST_PARK_SQL,	/* MariaDB refused its data (mw_db_message_error) */
	ST_REFUSE,	/* an anomaly: recorded, nothing changed (a->refuse) */
};

static const char *const park_reason[] = {
	[ST_PARK_ORDER] = "order", [ST_PARK_ITEM] = "item",	[ST_PARK_STOCK] = "stock",
	[ST_PARK_USER] = "user",   [ST_PARK_BEHIND] = "behind", [ST_PARK_SQL] = "sql",
};

/* What apply_one() did with a message. */
enum outcome { OUT_APPLIED, OUT_DUP, OUT_PARKED, OUT_REFUSED, OUT_SKIPPED };

#define X(...)	   mw_db_exec(a->db, __VA_ARGS__)
#define S(id, ...) mw_stmt_exec(&a->st, id, (const struct mw_val[]){__VA_ARGS__})

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
mw_apply_init(struct mw_apply *a, struct mw_db *db, struct mw_metrics *mt, uint32_t default_limit,
	      uint32_t final_after_s, const char *prog, mw_caught_up_fn caught_up,
	      void *caught_up_arg)
{
	memset(a, 0, sizeof(*a));
	a->db = db;
	a->mt = mt;
	a->default_limit = default_limit;
	a->final_after_ns = (int64_t)final_after_s * 1000000000;
	a->prog = prog;
	a->caught_up = caught_up;
	a->caught_up_arg = caught_up_arg;
	a->unpark_pending = true;
	a->count_parked = true;
	a->parked_rows = -1;
	mw_stmts_init(&a->st, db);
}

void
mw_apply_fini(struct mw_apply *a)
{
	mw_stmts_free(&a->st);
}

/*
 * refuse - an anomaly on order @m->order: log it, count it in @metric, and
 * return ST_REFUSE (the caller marks the event row refused).
 */
static int
refuse(struct mw_apply *a, const struct mw_msg *m, enum mw_metric metric, const char *what)
{
	sk_logf(SK_LOG_WARN, "mysql",
		"seq=%" PRIu64 " type=%s order=%" PRIu64 " msg=refused why=%s", m->seq,
		mw_msg_type_name(m->type), m->order, what);
	a->refuse = metric;
	return ST_REFUSE;
}

/*
 * order_state - after a compare-and-set that matched no row: ST_PARK_ORDER
 * when the order is not written yet, else a refused state conflict.
 */
static int
order_state(struct mw_apply *a, const struct mw_msg *m)
{
	char col[1][MW_STMT_COL], what[64];
	int rc = mw_stmt_row(&a->st, MW_S_ORDER_STATE, &(struct mw_val){.n = m->order}, col, 1);

	if (rc <= 0)
		return rc < 0 ? ST_DBERR : ST_PARK_ORDER;
	snprintf(what, sizeof(what), "the order is %s", col[0][0] ? col[0] : "?");
	return refuse(a, m, MW_M_STATE_CONFLICT, what);
}

/*
 * step_confirmed - the order row, then per line: the line (per-user guard:
 * the unique key), the stock guard on its item.
 */
static int
step_confirmed(struct mw_apply *a, const struct mw_msg *m, int64_t now)
{
	struct mw_val v[MW_RUN_ORDER_NP];
	int64_t r;

	mw_run_order_vals(m, m->client_ip, now, v);
	r = mw_stmt_exec(&a->st, MW_S_ORDER, v);
	if (r < 0)
		return a->db->err == ER_DUP_ENTRY
			       ? refuse(a, m, MW_M_ORDER_CONFLICT, "id written with another seq")
			       : ST_DBERR;
	for (unsigned i = 0; i < m->nlines; i++) {
		const struct mw_msg_line *l = &m->lines[i];

		r = S(MW_S_LINE, mw_u(m->order), mw_u(l->line), mw_u(m->user), mw_u(l->qty),
		      mw_u(l->price), mw_u(l->item));
		if (r < 0)
			return a->db->err == ER_DUP_ENTRY ? ST_PARK_USER : ST_DBERR;
		if (r == 0)
			return ST_PARK_ITEM;
		r = S(MW_S_GUARD, mw_u(l->qty), mw_u(l->item), mw_u(l->qty));
		if (r <= 0)
			return r < 0 ? ST_DBERR : ST_PARK_STOCK;
	}
	return ST_OK;
}

/*
 * step_move - confirmed -> paid or cancelled (@to), then @lines on the
 * order's lines joined with their items (the units paid or returned).
 */
static int
step_move(struct mw_apply *a, const struct mw_msg *m, enum mw_stmt_id to, enum mw_stmt_id lines)
{
	int64_t r = S(to, mw_i(m->time_ns), mw_u(m->order));

	if (r <= 0)
		return r < 0 ? ST_DBERR : order_state(a, m);
	r = S(lines, mw_u(m->order));
	return r < 0 ? ST_DBERR : ST_OK;
}

/*
 * step_refunded - m->units of the order's line of m->item refunded: only
 * from paid or partially refunded, never above the line's units.
 */
static int
step_refunded(struct mw_apply *a, const struct mw_msg *m)
{
	char col[3][MW_STMT_COL];
	int64_t r;
	int rc;

	r = S(MW_S_REFUND, mw_u(m->units), mw_u(m->units), mw_u(m->order), mw_u(m->item),
	      mw_u(m->units), mw_u(m->order));
	if (r < 0)
		return ST_DBERR;
	if (r == 0) {
		rc = mw_stmt_row(&a->st, MW_S_REFUND_WHY,
				 (const struct mw_val[]){mw_u(m->item), mw_u(m->order)}, col, 3);
		if (rc <= 0)
			return rc < 0 ? ST_DBERR : ST_PARK_ORDER;
		if (col[1][0] == '\0')
			return refuse(a, m, MW_M_REFUND_REFUSED, "no line of that item");
		if (strcmp(col[0], "paid") != 0 && strcmp(col[0], "partially_refunded") != 0)
			return refuse(a, m, MW_M_STATE_CONFLICT, "the order is not paid");
		return refuse(a, m, MW_M_REFUND_REFUSED, "more units than the line has left");
	}
	if (S(MW_S_REFUND_ITEM, mw_u(m->units), mw_u(m->item)) < 0 ||
	    S(MW_S_REFUND_ORDER, mw_i(m->time_ns), mw_u(m->order), mw_u(m->order)) < 0)
		return ST_DBERR;
	return ST_OK;
}

/* step_activity - create the item, or change what the event carries. */
static int
step_activity(struct mw_apply *a, const struct mw_msg *m)
{
	struct mw_val none = {.null = 1};

	return S(MW_S_ACTIVITY, mw_u(m->item), mw_u(m->units),
		 mw_u(m->has_limit ? m->limit : a->default_limit),
		 m->has_name ? mw_text(m->name) : none, m->has_price ? mw_u(m->price) : none,
		 m->has_start ? mw_i(m->start_ns) : none, m->has_end ? mw_i(m->end_ns) : none,
		 mw_i(m->time_ns), mw_u(m->has_limit)) < 0
		       ? ST_DBERR
		       : ST_OK;
}

/* item_step - an item event's statement: no row is its item not written. */
static int
item_step(int64_t r)
{
	return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
}

/* step - the message's own statements (after its order_events row). */
static int
step(struct mw_apply *a, const struct mw_msg *m, int64_t now)
{
	switch (m->type) {
	case MW_MSG_CONFIRMED:
		return step_confirmed(a, m, now);
	case MW_MSG_PAID:
		return step_move(a, m, MW_S_PAY, MW_S_PAY_LINES);
	case MW_MSG_CANCELLED: /* every line's units back, the lines not live */
		return step_move(a, m, MW_S_CANCEL, MW_S_CANCEL_LINES);
	case MW_MSG_REFUNDED:
		return step_refunded(a, m);
	case MW_MSG_ACTIVITY:
		return step_activity(a, m);
	case MW_MSG_RESTOCKED:
		return item_step(S(MW_S_RESTOCK, mw_u(m->units), mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_CLOSED:
		return item_step(S(MW_S_CLOSE, mw_i(m->time_ns), mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_REMOVED: /* unsold units back: the stock guard counts them */
		return item_step(S(MW_S_REMOVE, mw_u(m->units), mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_PAUSED:
		return item_step(S(MW_S_PAUSE, mw_i(m->time_ns), mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_RESUMED:
		return item_step(S(MW_S_RESUME, mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_EXTENDED:
		return item_step(S(MW_S_EXTEND, mw_i(m->end_ns), mw_i(m->time_ns), mw_u(m->item)));
	case MW_MSG_PAY_CONFLICT:
		sk_logf(SK_LOG_WARN, "mysql",
			"seq=%" PRIu64 " order=%" PRIu64 " user=%" PRIu64
			" request=%s msg=\"payment for a cancelled order recorded\"",
			m->seq, m->order, m->user, m->request);
		a->tally[MW_M_PAY_CONFLICT]++;
		return ST_OK;
	default: /* failed: the event row is all */
		return ST_OK;
	}
}

/* event_row - INSERT IGNORE the message's order_events row: 1 new, 0 seen. */
static int64_t
event_row(struct mw_apply *a, const struct mw_msg *m)
{
	struct mw_val v[MW_RUN_EVENT_NP];

	mw_run_event_vals(m, m->request, v);
	return mw_stmt_exec(&a->st, MW_S_EVENT, v);
}

/* event_seen - whether @m's order_events row exists: 1, 0, -1 on error. */
static int64_t
event_seen(struct mw_apply *a, const struct mw_msg *m)
{
	char col[1][MW_STMT_COL];

	return mw_stmt_row(&a->st, MW_S_EVENT_SEEN, &(struct mw_val){.n = m->seq}, col, 1);
}

/* caught_up - whether a guard's refusal is final now (asked once a batch). */
static bool
caught_up(struct mw_apply *a)
{
	if (a->caught_up_now < 0)
		a->caught_up_now = a->caught_up == NULL || a->caught_up(a->caught_up_arg);
	return a->caught_up_now == 1;
}

/*
 * behind - the order barrier (docs/mysql.md, "Event ordering"): whether
 * the parked table holds a row that @m must wait behind. The appliance
 * sold in seq order, so applied in seq order no guard refuses; parking
 * lets later messages overtake a waiting one, and two overtakings do harm:
 *  - a confirmed order: an earlier parked order that is not refused (a
 *    guard's refusal or a final row holds no other order back), whose unit
 *    or per-user slot it could take;
 *  - an event of an order: any earlier parked row of that order, final or
 *    refused too: a refund applied ahead of its parked paid is refused as
 *    "not paid", and one ahead of a final row would pass it unnoticed; it
 *    waits until the row is applied, or the operator requeues or deletes it.
 * ST_PARK_BEHIND, else ST_OK (ST_DBERR on error). Costs one indexed query
 * per message, only while something is parked.
 */
static int
behind(struct mw_apply *a, const struct mw_msg *m)
{
	bool order = m->type == MW_MSG_CONFIRMED;
	char col[1][MW_STMT_COL];
	int rc;

	if (a->parked_rows == 0 || (!order && m->order == 0))
		return ST_OK;
	if (order)
		rc = mw_stmt_row(&a->st, MW_S_AHEAD_ORDER, &(struct mw_val){.n = m->seq}, col, 1);
	else
		rc = mw_stmt_row(&a->st, MW_S_AHEAD_EVENT,
				 (const struct mw_val[]){mw_u(m->order), mw_u(m->seq)}, col, 1);
	return rc < 0 ? ST_DBERR : rc > 0 ? ST_PARK_BEHIND : ST_OK;
}

/*
 * park - keep message @val in the parked table (once) for reason @st; a
 * message retried from the table (@again: a->row is its row) gets its new
 * reason. A guard's refusal is logged and counted (refused = 1: it holds
 * nothing back, and is still retried) when it is still refused on a retry
 * from the table (after the whole batch, so after any message of the batch
 * that frees it) with every assigned partition consumed; else it counts as
 * a wait. The row is final (parked for good, refused too, never retried
 * again) at once for reason sql, or for reason item when a retry finds it
 * still blocked --park-final-seconds after it was parked, caught up
 * (docs/mysql.md, "Parked for good"); every other reason is retried until
 * what it waits for arrives.
 */
/* The rows parked for good that one batch logs one by one. */
#define FINAL_LOGGED 10

static int
park(struct mw_apply *a, const struct mw_msg *m, const char *val, size_t len, int st, bool again)
{
	bool guard = st == ST_PARK_STOCK || st == ST_PARK_USER;
	int counted = guard && again && !a->row.refused && caught_up(a);
	/* only an item that never comes, or refused data: every other reason
	 * resolves when what it waits for arrives, however late */
	int final = st == ST_PARK_SQL ||
		    (st == ST_PARK_ITEM && again &&
		     now_ns() - a->row.parked_ns >= a->final_after_ns && caught_up(a));
	int refused = counted || final;
	const char *why = park_reason[st];
	int64_t r;

	if (again)
		r = S(MW_S_REPARK, mw_s(why), mw_u(refused), mw_u(final), mw_u(m->seq), mw_s(why),
		      mw_u(refused), mw_u(final));
	else
		r = S(MW_S_PARK, mw_u(m->seq), mw_s(why), (struct mw_val){.s = val, .len = len},
		      mw_u(refused), mw_u(final), mw_i(now_ns()), mw_s(mw_msg_type_name(m->type)),
		      m->order != 0 ? mw_u(m->order) : (struct mw_val){.null = 1});
	if (r <= 0)
		return r < 0 ? -1 : 0; /* parked before, as it is, or a redelivery */
	a->count_parked = true;	       /* a new row, reason or state: the gauges */
	if (!again) {
		a->tally[MW_M_PARKED] += st != ST_PARK_SQL; /* those count as sql_error */
		a->parked_rows = a->parked_rows < 0 ? -1 : a->parked_rows + 1;
		a->tally[MW_M_GUARD_WAITS] += guard && !final;
	}
	if (counted) {
		a->tally[st == ST_PARK_STOCK ? MW_M_GUARD_STOCK : MW_M_GUARD_USER]++;
		sk_logf(SK_LOG_WARN, "mysql",
			"seq=%" PRIu64 " guard=%s order=%" PRIu64 " user=%" PRIu64 " item=%" PRIu32
			" msg=\"refused with every partition consumed: parked\"",
			m->seq, park_reason[st], m->order, m->user, m->item);
	}
	/* logged one by one for the first 10 of a batch, then summed up */
	if (final && a->tally[MW_M_PARKED_FOR_GOOD]++ < FINAL_LOGGED)
		sk_logf(SK_LOG_WARN, "mysql",
			"seq=%" PRIu64 " reason=%s type=%s order=%" PRIu64 " item=%" PRIu32
			" msg=\"parked for good: not retried until an operator requeues it\"",
			m->seq, park_reason[st], mw_msg_type_name(m->type), m->order, m->item);
	return 0;
}

/* applied - count message @m applied (@parked: from the parked table). */
static int
applied(struct mw_apply *a, const struct mw_msg *m, bool parked)
{
	a->tally[MW_M_APPLIED]++;
	a->tally[MW_M_UNPARKED] += parked;
	if (m->type == MW_MSG_CONFIRMED) {
		a->tally[MW_M_ORDERS]++;
		a->last_time_ns = m->time_ns;
	}
	return OUT_APPLIED;
}

/*
 * apply_one - one message in its savepoint. @parked: it comes from the
 * parked table (stays there if still blocked). Returns an enum outcome or
 * -EAGAIN (any SQL error but the message's own data, which parks it with
 * reason sql: the batch must be rolled back and applied again).
 */
static int
apply_one(struct mw_apply *a, const char *val, size_t len, bool parked)
{
	struct mw_msg *m = &a->msg;
	int64_t now = now_ns();
	char why[160];
	int rc = mw_msg_decode(val, len, m, why, sizeof(why));
	bool sp = false; /* the message's savepoint is set */
	int st;

	if (rc == -ENOMSG) {
		a->tally[MW_M_NOT_FOR_DB]++; /* counted, not logged: nothing is lost */
		return OUT_SKIPPED;
	}
	if (rc != 0 && mw_db_verdict(rc, 0) == MW_DB_STALL) { /* another "v": stall */
		a->db->err = 0; /* errno=0 in the log: no SQL error, no reconnect */
		snprintf(a->db->errmsg, sizeof(a->db->errmsg), "%s: upgrade the writer", why);
		return -EAGAIN;
	}
	if (rc != 0) {
		a->tally[rc == -ENOTSUP ? MW_M_UNKNOWN_TYPE : MW_M_MALFORMED]++;
		sk_logf(SK_LOG_WARN, "mysql", "msg=\"message skipped\" why=%s message=%.*s%s", why,
			len > 80 ? 80 : (int)len, val ? val : "", len > 80 ? "..." : "");
		return OUT_SKIPPED;
	}
	st = behind(a, m);
	if (st == ST_DBERR)
		goto dberr;
	if (st == ST_PARK_BEHIND) {
		/* a redelivery of an applied message is a duplicate, not parked */
		rc = (int)event_seen(a, m);
		if (rc < 0)
			goto dberr;
		if (rc == 1) {
			a->tally[MW_M_DUPLICATE]++;
			return OUT_DUP;
		}
		if (park(a, m, val, len, st, parked) < 0)
			goto dberr;
		return OUT_PARKED;
	}
	if (X("SAVEPOINT msg") < 0)
		goto dberr;
	sp = true;
	rc = (int)event_row(a, m);
	if (rc < 0)
		goto dberr;
	if (rc == 0) {
		a->tally[MW_M_DUPLICATE]++;
		return OUT_DUP;
	}
	st = step(a, m, now);
	if (st == ST_DBERR)
		goto dberr;
	if (st == ST_OK)
		return applied(a, m, parked);
	if (st == ST_REFUSE) {
		if (S(MW_S_REFUSED, mw_u(m->seq)) < 0)
			goto dberr;
		a->tally[MW_M_REFUSED]++;
		a->tally[a->refuse]++;
		return OUT_REFUSED;
	}
	if (X("ROLLBACK TO SAVEPOINT msg") < 0 || park(a, m, val, len, st, parked) < 0)
		goto dberr;
	return OUT_PARKED;
dberr:
	/* only the message's own data is parked; anything else stalls */
	if (!sp || mw_db_verdict(0, a->db->err) != MW_DB_PARK_SQL)
		return -EAGAIN;
	sk_logf(SK_LOG_ERROR, "mysql",
		"seq=%" PRIu64 " type=%s order=%" PRIu64 " errno=%u err=%s "
		"msg=\"MariaDB refused the message's data: parked for good (reason sql)\"",
		m->seq, mw_msg_type_name(m->type), m->order, a->db->err, a->db->errmsg);
	a->tally[MW_M_SQL_ERRORS]++;
	if (X("ROLLBACK TO SAVEPOINT msg") < 0 || park(a, m, val, len, ST_PARK_SQL, parked) < 0)
		return -EAGAIN;
	return OUT_PARKED;
}

/* Parked rows read per query, and retried per batch at most. */
#define UNPARK_PAGE   500
#define UNPARK_BUDGET 10000

/*
 * unpark - retry the parked rows that are not final, in seq order from
 * *@cursor (the seq the last batch stopped after; 0: the start), a page of
 * UNPARK_PAGE rows per query, UNPARK_BUDGET rows per batch at most. At the
 * end of the table *@cursor goes back to 0, and when this sweep applied a
 * row another sweep starts from the first row (8 at most: an applied row
 * may free an earlier one). Stopped by the budget, *@cursor stays where it
 * is and the next batch goes on from there. Returns 0 or -EAGAIN.
 */
static int
unpark(struct mw_apply *a, uint64_t *cursor)
{
	unsigned budget = UNPARK_BUDGET, sweeps = 0, progress = 0;

	for (;;) {
		unsigned page = budget < UNPARK_PAGE ? budget : UNPARK_PAGE, rows = 0;
		MYSQL_RES *res =
			mw_db_query(a->db,
				    "SELECT seq, payload, parked_ns, refused FROM parked "
				    "WHERE final = 0 AND seq > %" PRIu64 " ORDER BY seq LIMIT %u",
				    *cursor, page);
		MYSQL_ROW row;
		int rc = 0;

		if (res == NULL)
			return -EAGAIN;
		while (rc >= 0 && (row = mysql_fetch_row(res)) != NULL) {
			unsigned long *lens = mysql_fetch_lengths(res);

			rows++;
			*cursor = strtoull(row[0], NULL, 10);
			a->row.parked_ns = strtoll(row[2], NULL, 10);
			a->row.refused = row[3][0] != '0';
			rc = apply_one(a, row[1], lens[1], true);
			if (rc >= 0 && rc != OUT_PARKED) {
				progress++;
				if (S(MW_S_UNPARK, mw_u(*cursor)) < 0)
					rc = -EAGAIN;
			}
		}
		mysql_free_result(res);
		if (rc < 0)
			return -EAGAIN;
		budget -= rows;
		if (rows == page && budget > 0)
			continue; /* the next page */
		if (rows == page)
			return 0; /* the budget: the next batch goes on */
		*cursor = 0;	  /* the end of the table */
		if (progress == 0 || ++sweeps == 8 || budget == 0)
			return 0;
		progress = 0;
		a->count_parked = true;
	}
}

/* The reasons of the parked table, in the order of the gauges. */
static const char *const gauge_reason[MW_PARK_REASONS] = {"order", "item",   "stock",
							  "user",  "behind", "sql"};

int
mw_apply_batch(struct mw_apply *a, const struct mw_input *in, size_t n)
{
	bool moved = a->unpark_pending || n == 0, counted = false;
	uint64_t cursor = a->unpark_cursor;
	int64_t parked[2 + MW_PARK_REASONS];

	memset(a->tally, 0, sizeof(a->tally));
	a->caught_up_now = -1;
	a->last_time_ns = 0;
	if (X("START TRANSACTION") < 0)
		goto fail;
	/* runs of orders need to know that nothing is parked (the barrier) */
	if (a->parked_rows < 0) {
		if (mw_db_count_parked(a->db, gauge_reason, MW_PARK_REASONS, parked) < 0)
			goto fail;
		a->parked_rows = parked[0];
	}
	for (size_t i = 0, k; i < n; i += k) {
		int rc = 0;

		k = 0;
		if (a->parked_rows == 0)
			rc = mw_run_apply(a, in + i, n - i, &k);
		if (rc < 0)
			goto fail;
		moved |= rc == 1;
		if (rc == 1)
			continue;
		/* one by one: not a run, or a run that did not land whole */
		k = k > 0 ? k : 1;
		for (size_t j = i; j < i + k; j++) {
			rc = apply_one(a, in[j].val, in[j].len, false);
			if (rc < 0)
				goto fail;
			moved |= rc == OUT_APPLIED;
		}
	}
	if (moved && unpark(a, &cursor) < 0)
		goto fail;
	if (a->count_parked) {
		if (mw_db_count_parked(a->db, gauge_reason, MW_PARK_REASONS, parked) < 0)
			goto fail;
		counted = true;
	}
	if (X("COMMIT") < 0)
		goto fail;
	if (a->tally[MW_M_PARKED_FOR_GOOD] > FINAL_LOGGED)
		sk_logf(SK_LOG_WARN, "mysql",
			"parked_for_good=%" PRIu64 " logged=%d msg=\"parked for good in one batch: "
			"SELECT * FROM parked WHERE final = 1\"",
			a->tally[MW_M_PARKED_FOR_GOOD], FINAL_LOGGED);
	a->unpark_cursor = cursor;
	a->unpark_pending = cursor != 0; /* the budget stopped it mid-table */
	if (counted) {
		mw_metrics_set(a->mt, MW_M_PARKED_NOW, (uint64_t)parked[0]);
		mw_metrics_set(a->mt, MW_M_PARKED_FINAL, (uint64_t)parked[1]);
		for (unsigned i = 0; i < MW_PARK_REASONS; i++)
			mw_metrics_set(a->mt, MW_M_PARKED_ORDER + i, (uint64_t)parked[2 + i]);
		a->count_parked = false;
		a->parked_rows = parked[0];
	}
	for (unsigned i = 0; i < MW_M_N; i++)
		if (a->tally[i] != 0)
			mw_metrics_add(a->mt, i, a->tally[i]);
	mw_metrics_add(a->mt, MW_M_BATCHES, 1);
	if (a->last_time_ns != 0)
		mw_metrics_set(
			a->mt, MW_M_LAST_LAG_NS,
			(uint64_t)(now_ns() > a->last_time_ns ? now_ns() - a->last_time_ns : 0));
	return 0;
fail : {
	unsigned err = a->db->err;

	a->parked_rows = -1; /* the rollback may have undone parks or deletes */
	a->count_parked = true;
	char msg[sizeof(a->db->errmsg)];

	memcpy(msg, a->db->errmsg, sizeof(msg));
	X("ROLLBACK"); /* may fail too: the server is away */
	a->db->err = err;
	memcpy(a->db->errmsg, msg, sizeof(msg));
}
	return -EAGAIN;
}
