/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_apply.c - the SQL of seckill-mysql-writer: one function per message
 * type, the per-message savepoint (applied, duplicate, parked, refused),
 * the parked table, and the batch transaction.
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

#define X(...) mw_db_exec(a->db, __VA_ARGS__)

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
	MYSQL_RES *res =
		mw_db_query(a->db, "SELECT state FROM orders WHERE id = %" PRIu64, m->order);
	MYSQL_ROW row;
	char what[64];

	if (res == NULL)
		return ST_DBERR;
	row = mysql_fetch_row(res);
	if (row == NULL) {
		mysql_free_result(res);
		return ST_PARK_ORDER;
	}
	snprintf(what, sizeof(what), "the order is %s", row[0] ? row[0] : "?");
	mysql_free_result(res);
	return refuse(a, m, MW_M_STATE_CONFLICT, what);
}

/* The longest single statement the formatters below write, bytes. */
#define STMT_MAX 1024

/* quoted - @s as a quoted SQL string, or NULL when empty, into @out. */
static char *
quoted(struct mw_apply *a, const char *s, char *out)
{
	if (s[0] == '\0')
		return strcpy(out, "NULL");
	out[0] = '\'';
	mw_db_escape(a->db, out + 1, s);
	return strcat(out, "'");
}

/* fmt_order - the INSERT of a confirmed order's row. */
static void
fmt_order(struct mw_apply *a, const struct mw_msg *m, int64_t now, char *q)
{
	char ip[2 * sizeof(m->client_ip) + 3];

	snprintf(q, STMT_MAX,
		 "INSERT INTO orders (id, user_id, state, units, nlines, client_ip, sold_ns, "
		 "confirmed_ns, updated_ns, seq, written_ns) VALUES (%" PRIu64 ", %" PRIu64
		 ", 'confirmed', %" PRIu64 ", %u, %s, %" PRId64 ", %" PRId64 ", %" PRId64
		 ", %" PRIu64 ", %" PRId64 ")",
		 m->order, m->user, m->units, m->nlines, quoted(a, m->client_ip, ip), m->sold_ns,
		 m->time_ns, m->time_ns, m->seq, now);
}

/* fmt_line - the INSERT of line @i (no row if its item is not written). */
static void
fmt_line(const struct mw_msg *m, unsigned i, char *q)
{
	const struct mw_msg_line *l = &m->lines[i];

	snprintf(q, STMT_MAX,
		 "INSERT INTO order_lines (order_id, line, item_id, user_id, qty, price, "
		 "one_per_user) SELECT %" PRIu64 ", %u, id, %" PRIu64 ", %u, %" PRIu64
		 ", per_user_limit = 1 FROM items WHERE id = %" PRIu32,
		 m->order, l->line, m->user, l->qty, l->price, l->item);
}

/*
 * fmt_guard - the stock guard of line @i: the seeds' "total + added -
 * removed - sold + returned >= n", with no subtraction (the columns are
 * unsigned).
 */
static void
fmt_guard(const struct mw_msg *m, unsigned i, char *q)
{
	const struct mw_msg_line *l = &m->lines[i];

	snprintf(q, STMT_MAX,
		 "UPDATE items SET sold = sold + %u WHERE id = %" PRIu32
		 " AND total + added + returned >= sold + removed + %u",
		 l->qty, l->item, l->qty);
}

/* fmt_event - the INSERT IGNORE of the message's order_events row. */
static void
fmt_event(struct mw_apply *a, const struct mw_msg *m, char *q)
{
	char order[24] = "NULL", req[2 * MW_MSG_REQUEST_MAX + 3];

	if (m->order != 0)
		snprintf(order, sizeof(order), "%" PRIu64, m->order);
	snprintf(q, STMT_MAX,
		 "INSERT IGNORE INTO order_events (seq, type, order_id, user_id, item_id, units, "
		 "time_ns, request, outcome) VALUES (%" PRIu64 ", '%s', %s, %" PRIu64 ", %" PRIu32
		 ", %" PRIu64 ", %" PRId64 ", %s, '%s')",
		 m->seq, mw_msg_type_name(m->type), order, m->user, m->item, m->units, m->time_ns,
		 quoted(a, m->request, req),
		 m->type == MW_MSG_PAY_CONFLICT ? "conflict" : "applied");
}

/*
 * step_confirmed - the order row, then per line: the line (per-user guard:
 * the unique key), the stock guard on its item.
 */
static int
step_confirmed(struct mw_apply *a, const struct mw_msg *m, int64_t now)
{
	char q[STMT_MAX];
	int64_t r;

	fmt_order(a, m, now, q);
	r = X("%s", q);
	if (r < 0)
		return a->db->err == ER_DUP_ENTRY
			       ? refuse(a, m, MW_M_ORDER_CONFLICT, "id written with another seq")
			       : ST_DBERR;
	for (unsigned i = 0; i < m->nlines; i++) {
		fmt_line(m, i, q);
		r = X("%s", q);
		if (r < 0)
			return a->db->err == ER_DUP_ENTRY ? ST_PARK_USER : ST_DBERR;
		if (r == 0)
			return ST_PARK_ITEM;
		fmt_guard(m, i, q);
		r = X("%s", q);
		if (r <= 0)
			return r < 0 ? ST_DBERR : ST_PARK_STOCK;
	}
	return ST_OK;
}

/*
 * confirmed_fast - a confirmed order in one round trip: the savepoint, its
 * event row, the order, each line and its guard as one multi-statement.
 * Returns 1 when every statement wrote its row (applied); 0 when anything
 * else happened (rolled back to the savepoint: the statement-by-statement
 * path then tells what); -1 on an error worth retrying the batch for.
 */
static int
confirmed_fast(struct mw_apply *a, const struct mw_msg *m, int64_t now)
{
	int want = 3 + 2 * (int)m->nlines, n, i;
	size_t cap = (size_t)want * (STMT_MAX + 1), off;
	int64_t rows[3 + 2 * MW_MSG_MAX_LINES];
	char *q = malloc(cap);

	if (q == NULL)
		return 0;
	off = (size_t)snprintf(q, cap, "SAVEPOINT msg;");
	fmt_event(a, m, q + off);
	off += strlen(q + off);
	q[off++] = ';';
	fmt_order(a, m, now, q + off);
	off += strlen(q + off);
	for (unsigned l = 0; l < m->nlines; l++) {
		q[off++] = ';';
		fmt_line(m, l, q + off);
		off += strlen(q + off);
		q[off++] = ';';
		fmt_guard(m, l, q + off);
		off += strlen(q + off);
	}
	n = mw_db_multi(a->db, rows, want, "%s", q);
	free(q);
	for (i = 1; n == want && i < want && rows[i] == 1; i++)
		;
	if (n == want && i == want)
		return 1;
	/* a duplicate (a guard, a conflict) or refused data: the slow path
	 * tells which; anything else stalls the batch */
	if (n < want && a->db->err != ER_DUP_ENTRY && !mw_db_message_error(a->db->err))
		return -1;
	return X("ROLLBACK TO SAVEPOINT msg") < 0 ? -1 : 0;
}

/*
 * step_move - confirmed -> @to (paid or cancelled), then @set on the
 * order's lines joined with their items (the units paid or returned).
 */
static int
step_move(struct mw_apply *a, const struct mw_msg *m, const char *to, const char *set)
{
	int64_t r = X("UPDATE orders SET state = '%s', updated_ns = %" PRId64 " WHERE id = %" PRIu64
		      " AND state = 'confirmed'",
		      to, m->time_ns, m->order);

	if (r <= 0)
		return r < 0 ? ST_DBERR : order_state(a, m);
	r = X("UPDATE items i JOIN order_lines l ON l.item_id = i.id SET %s WHERE l.order_id = "
	      "%" PRIu64,
	      set, m->order);
	return r < 0 ? ST_DBERR : ST_OK;
}

/*
 * step_refunded - m->units of the order's line of m->item refunded: only
 * from paid or partially refunded, never above the line's units.
 */
static int
step_refunded(struct mw_apply *a, const struct mw_msg *m)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	int64_t r;
	int rc;

	r = X("UPDATE order_lines SET live = (refunded + %" PRIu64 " < qty), refunded = refunded + "
	      "%" PRIu64 " WHERE order_id = %" PRIu64 " AND item_id = %" PRIu32
	      " AND refunded + %" PRIu64 " <= qty AND (SELECT state FROM orders WHERE id = %" PRIu64
	      ") IN ('paid', 'partially_refunded')",
	      m->units, m->units, m->order, m->item, m->units, m->order);
	if (r < 0)
		return ST_DBERR;
	if (r == 0) {
		res = mw_db_query(a->db,
				  "SELECT o.state, l.qty, l.refunded FROM orders o LEFT JOIN "
				  "order_lines l ON l.order_id = o.id AND l.item_id = %" PRIu32
				  " WHERE o.id = %" PRIu64,
				  m->item, m->order);
		if (res == NULL)
			return ST_DBERR;
		row = mysql_fetch_row(res);
		if (row == NULL)
			rc = ST_PARK_ORDER;
		else if (row[1] == NULL)
			rc = refuse(a, m, MW_M_REFUND_REFUSED, "no line of that item");
		else if (strcmp(row[0], "paid") != 0 && strcmp(row[0], "partially_refunded") != 0)
			rc = refuse(a, m, MW_M_STATE_CONFLICT, "the order is not paid");
		else
			rc = refuse(a, m, MW_M_REFUND_REFUSED, "more units than the line has left");
		mysql_free_result(res);
		return rc;
	}
	if (X("UPDATE items SET returned = returned + %" PRIu64 " WHERE id = %" PRIu32, m->units,
	      m->item) < 0 ||
	    X("UPDATE orders SET updated_ns = %" PRId64 ", state = IF((SELECT SUM(qty - refunded) "
	      "FROM order_lines WHERE order_id = %" PRIu64
	      ") = 0, 'refunded', 'partially_refunded') WHERE id = %" PRIu64,
	      m->time_ns, m->order, m->order) < 0)
		return ST_DBERR;
	return ST_OK;
}

/* step_activity - create the item, or change what the event carries. */
static int
step_activity(struct mw_apply *a, const struct mw_msg *m)
{
	char name[2 * MW_MSG_NAME_MAX + 3] = "NULL", price[24] = "NULL", start[24] = "NULL",
					end[24] = "NULL";

	if (m->has_name) {
		name[0] = '\'';
		mw_db_escape(a->db, name + 1, m->name);
		strcat(name, "'");
	}
	if (m->has_price)
		snprintf(price, sizeof(price), "%" PRIu64, m->price);
	if (m->has_start)
		snprintf(start, sizeof(start), "%" PRId64, m->start_ns);
	if (m->has_end)
		snprintf(end, sizeof(end), "%" PRId64, m->end_ns);
	return X("INSERT INTO items (id, total, per_user_limit, name, price, start_ns, end_ns, "
		 "updated_ns) VALUES (%" PRIu32 ", %" PRIu64 ", %" PRIu32
		 ", %s, %s, %s, %s, %" PRId64 ") ON DUPLICATE KEY UPDATE total = VALUES(total), "
		 "per_user_limit = %s, name = COALESCE(VALUES(name), name), price = "
		 "COALESCE(VALUES(price), price), start_ns = COALESCE(VALUES(start_ns), start_ns), "
		 "end_ns = COALESCE(VALUES(end_ns), end_ns), updated_ns = VALUES(updated_ns)",
		 m->item, m->units, m->has_limit ? m->limit : a->default_limit, name, price, start,
		 end, m->time_ns, m->has_limit ? "VALUES(per_user_limit)" : "per_user_limit") < 0
		       ? ST_DBERR
		       : ST_OK;
}

/* step - the message's own statements (after its order_events row). */
static int
step(struct mw_apply *a, const struct mw_msg *m, int64_t now)
{
	int64_t r;

	switch (m->type) {
	case MW_MSG_CONFIRMED:
		return step_confirmed(a, m, now);
	case MW_MSG_PAID:
		return step_move(a, m, "paid", "i.paid = i.paid + l.qty");
	case MW_MSG_CANCELLED: /* every line's units back, the lines not live */
		return step_move(a, m, "cancelled",
				 "i.returned = i.returned + l.qty - l.refunded, l.live = 0");
	case MW_MSG_REFUNDED:
		return step_refunded(a, m);
	case MW_MSG_ACTIVITY:
		return step_activity(a, m);
	case MW_MSG_RESTOCKED:
		r = X("UPDATE items SET added = added + %" PRIu64 ", updated_ns = %" PRId64
		      " WHERE id = %" PRIu32,
		      m->units, m->time_ns, m->item);
		return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
	case MW_MSG_CLOSED:
		r = X("UPDATE items SET closed_ns = %" PRId64 ", updated_ns = %" PRId64
		      " WHERE id = %" PRIu32,
		      m->time_ns, m->time_ns, m->item);
		return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
	case MW_MSG_REMOVED: /* unsold units back: the stock guard counts them */
		r = X("UPDATE items SET removed = removed + %" PRIu64 ", updated_ns = %" PRId64
		      " WHERE id = %" PRIu32,
		      m->units, m->time_ns, m->item);
		return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
	case MW_MSG_PAUSED:
	case MW_MSG_RESUMED:
		if (m->type == MW_MSG_PAUSED)
			r = X("UPDATE items SET paused_ns = %" PRId64 ", updated_ns = %" PRId64
			      " WHERE id = %" PRIu32,
			      m->time_ns, m->time_ns, m->item);
		else
			r = X("UPDATE items SET paused_ns = NULL, updated_ns = %" PRId64
			      " WHERE id = %" PRIu32,
			      m->time_ns, m->item);
		return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
	case MW_MSG_EXTENDED:
		r = X("UPDATE items SET end_ns = %" PRId64 ", updated_ns = %" PRId64
		      " WHERE id = %" PRIu32,
		      m->end_ns, m->time_ns, m->item);
		return r < 0 ? ST_DBERR : r == 0 ? ST_PARK_ITEM : ST_OK;
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
	char q[STMT_MAX];

	fmt_event(a, m, q);
	return X("%s", q);
}

/* event_seen - whether @m's order_events row exists: 1, 0, -1 on error. */
static int64_t
event_seen(struct mw_apply *a, const struct mw_msg *m)
{
	MYSQL_RES *res =
		mw_db_query(a->db, "SELECT 1 FROM order_events WHERE seq = %" PRIu64, m->seq);
	int64_t seen;

	if (res == NULL)
		return -1;
	seen = mysql_fetch_row(res) != NULL;
	mysql_free_result(res);
	return seen;
}

/* caught_up - whether a guard's refusal is final now (asked once a batch). */
static bool
caught_up(struct mw_apply *a)
{
	if (a->caught_up_now < 0)
		a->caught_up_now = a->caught_up == NULL || a->caught_up(a->caught_up_arg);
	return a->caught_up_now == 1;
}

/* order_sql - the message's order id as SQL into @buf (NULL: item events). */
static const char *
order_sql(const struct mw_msg *m, char buf[24])
{
	if (m->order == 0)
		return "NULL";
	snprintf(buf, 24, "%" PRIu64, m->order);
	return buf;
}

/*
 * behind - the order barrier (mw_db_parked_ahead(): an order waits behind
 * an earlier parked order, an order's event behind any earlier parked row
 * of that order, final too): ST_PARK_BEHIND, else ST_OK (ST_DBERR on
 * error). Costs one indexed query per message, only while something is
 * parked.
 */
static int
behind(struct mw_apply *a, const struct mw_msg *m)
{
	bool order = m->type == MW_MSG_CONFIRMED;
	int rc;

	if (a->parked_rows == 0 || (!order && m->order == 0))
		return ST_OK;
	rc = mw_db_parked_ahead(a->db, order, m->order, m->seq);
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
	char *esc, order[24];
	int64_t r;

	if (again) {
		r = X("UPDATE parked SET reason = '%s', refused = refused OR %d, final = %d WHERE "
		      "seq = %" PRIu64 " AND (reason <> '%s' OR refused < %d OR final < %d)",
		      park_reason[st], refused, final, m->seq, park_reason[st], refused, final);
	} else {
		esc = malloc(2 * len + 1);
		if (esc == NULL)
			return -ENOMEM;
		mysql_real_escape_string(a->db->my, esc, val, (unsigned long)len);
		r = X("INSERT IGNORE INTO parked (seq, reason, payload, refused, final, parked_ns, "
		      "type, order_id) VALUES (%" PRIu64 ", '%s', '%s', %d, %d, %" PRId64
		      ", '%s', %s)",
		      m->seq, park_reason[st], esc, refused, final, now_ns(),
		      mw_msg_type_name(m->type), order_sql(m, order));
		free(esc);
	}
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
	if (m->type == MW_MSG_CONFIRMED) {
		rc = confirmed_fast(a, m, now);
		if (rc < 0)
			goto dberr;
		if (rc == 1)
			return applied(a, m, parked);
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
		if (X("UPDATE order_events SET outcome = 'refused' WHERE seq = %" PRIu64, m->seq) <
		    0)
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
				if (X("DELETE FROM parked WHERE seq = %s", row[0]) < 0)
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
	for (size_t i = 0; i < n; i++) {
		int rc = apply_one(a, in[i].val, in[i].len, false);

		if (rc < 0)
			goto fail;
		moved |= rc == OUT_APPLIED;
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
