/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_stmt.c - the statement table of seckill-mysql-writer and what
 * prepares, binds and executes its entries (mw_stmt.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>

#include "mw_stmt.h"

/*
 * One statement: its SQL, the kinds of its parameters ('u' unsigned, 'i'
 * signed, 's' string; one per "?"), whether it may take many rows at once
 * (array binding: an INSERT of one row per execution).
 */
struct def {
	const char *name;
	const char *sql;
	const char *kinds;
	bool bulk;
};

#define ITEM_SET(col) "UPDATE items SET " col ", updated_ns = ? WHERE id = ?"

static const struct def defs[MW_S_N] = {
	[MW_S_EVENT] =
		{"event",
		 "INSERT IGNORE INTO order_events (seq, type, order_id, user_id, item_id, units, "
		 "time_ns, request, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 "usuuuuiss", true},
	[MW_S_ORDER] =
		{"order",
		 "INSERT INTO orders (id, user_id, state, units, nlines, client_ip, sold_ns, "
		 "confirmed_ns, updated_ns, seq, written_ns) VALUES (?, ?, 'confirmed', ?, ?, ?, "
		 "?, ?, ?, ?, ?)",
		 "uuuusiiiui", true},
	[MW_S_LINE] =
		{"line",
		 "INSERT INTO order_lines (order_id, line, item_id, user_id, qty, price, "
		 "one_per_user) SELECT ?, ?, id, ?, ?, ?, per_user_limit = 1 FROM items WHERE "
		 "id = ?",
		 "uuuuuu", false},
	[MW_S_LINES] = {"lines",
			"INSERT INTO order_lines (order_id, line, item_id, user_id, qty, price, "
			"one_per_user) VALUES (?, ?, ?, ?, ?, ?, ?)",
			"uuuuuuu", true},
	/* the seeds' "total + added - removed - sold + returned >= n", with no
	 * subtraction (the columns are unsigned) */
	[MW_S_GUARD] =
		{"guard",
		 "UPDATE items SET sold = sold + ? WHERE id = ? AND total + added + returned >= "
		 "sold + removed + ?",
		 "uuu", false},
	[MW_S_ITEM_LIMIT] = {"item_limit", "SELECT per_user_limit FROM items WHERE id = ?", "u",
			     false},
	[MW_S_ORDER_STATE] = {"order_state", "SELECT state FROM orders WHERE id = ?", "u", false},
	[MW_S_PAY] = {"pay",
		      "UPDATE orders SET state = 'paid', updated_ns = ? WHERE id = ? AND state = "
		      "'confirmed'",
		      "iu", false},
	[MW_S_PAY_LINES] = {"pay_lines",
			    "UPDATE items i JOIN order_lines l ON l.item_id = i.id SET i.paid = "
			    "i.paid + l.qty WHERE l.order_id = ?",
			    "u", false},
	[MW_S_CANCEL] = {"cancel",
			 "UPDATE orders SET state = 'cancelled', updated_ns = ? WHERE id = ? AND "
			 "state = 'confirmed'",
			 "iu", false},
	[MW_S_CANCEL_LINES] = {"cancel_lines",
			       "UPDATE items i JOIN order_lines l ON l.item_id = i.id SET "
			       "i.returned = i.returned + l.qty - l.refunded, l.live = 0 WHERE "
			       "l.order_id = ?",
			       "u", false},
	[MW_S_REFUND] =
		{"refund",
		 "UPDATE order_lines SET live = (refunded + ? < qty), refunded = refunded + "
		 "? WHERE order_id = ? AND item_id = ? AND refunded + ? <= qty AND (SELECT "
		 "state FROM orders WHERE id = ?) IN ('paid', 'partially_refunded')",
		 "uuuuuu", false},
	[MW_S_REFUND_WHY] = {"refund_why",
			     "SELECT o.state, l.qty, l.refunded FROM orders o LEFT JOIN "
			     "order_lines l ON l.order_id = o.id AND l.item_id = ? WHERE o.id = ?",
			     "uu", false},
	[MW_S_REFUND_ITEM] = {"refund_item",
			      "UPDATE items SET returned = returned + ? WHERE id = ?", "uu", false},
	[MW_S_REFUND_ORDER] = {"refund_order",
			       "UPDATE orders SET updated_ns = ?, state = IF((SELECT SUM(qty - "
			       "refunded) FROM order_lines WHERE order_id = ?) = 0, 'refunded', "
			       "'partially_refunded') WHERE id = ?",
			       "iuu", false},
	/* the limit is kept when the event carries none (the last "?": 0) */
	[MW_S_ACTIVITY] =
		{"activity",
		 "INSERT INTO items (id, total, per_user_limit, name, price, start_ns, "
		 "end_ns, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY "
		 "UPDATE total = VALUES(total), per_user_limit = IF(?, "
		 "VALUES(per_user_limit), per_user_limit), name = COALESCE(VALUES(name), "
		 "name), price = COALESCE(VALUES(price), price), start_ns = "
		 "COALESCE(VALUES(start_ns), start_ns), end_ns = COALESCE(VALUES(end_ns), "
		 "end_ns), updated_ns = VALUES(updated_ns)",
		 "uuusuiiiu", false},
	[MW_S_RESTOCK] = {"restock", ITEM_SET("added = added + ?"), "uiu", false},
	[MW_S_CLOSE] = {"close", ITEM_SET("closed_ns = ?"), "iiu", false},
	[MW_S_REMOVE] = {"remove", ITEM_SET("removed = removed + ?"), "uiu", false},
	[MW_S_PAUSE] = {"pause", ITEM_SET("paused_ns = ?"), "iiu", false},
	[MW_S_RESUME] = {"resume", ITEM_SET("paused_ns = NULL"), "iu", false},
	[MW_S_EXTEND] = {"extend", ITEM_SET("end_ns = ?"), "iiu", false},
	[MW_S_REFUSED] = {"refused", "UPDATE order_events SET outcome = 'refused' WHERE seq = ?",
			  "u", false},
	[MW_S_EVENT_SEEN] = {"event_seen", "SELECT 1 FROM order_events WHERE seq = ?", "u", false},
	[MW_S_AHEAD_ORDER] = {"ahead_order",
			      "SELECT 1 FROM parked WHERE type = 'confirmed' AND refused = 0 AND "
			      "seq < ? LIMIT 1",
			      "u", false},
	[MW_S_AHEAD_EVENT] = {"ahead_event",
			      "SELECT 1 FROM parked WHERE order_id = ? AND seq < ? LIMIT 1", "uu",
			      false},
	[MW_S_PARK] =
		{"park",
		 "INSERT IGNORE INTO parked (seq, reason, payload, refused, final, parked_ns, "
		 "type, order_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		 "ussuuisu", false},
	/* only when something changes: 0 rows says "parked before, as it is" */
	[MW_S_REPARK] =
		{"repark",
		 "UPDATE parked SET reason = ?, refused = refused OR ?, final = ? WHERE seq "
		 "= ? AND (reason <> ? OR refused < ? OR final < ?)",
		 "suuusuu", false},
	[MW_S_UNPARK] = {"unpark", "DELETE FROM parked WHERE seq = ?", "u", false},
};

struct mw_val
mw_s(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return (struct mw_val){.null = 1};
	return (struct mw_val){.s = s, .len = (unsigned long)strlen(s)};
}

void
mw_stmts_init(struct mw_stmts *st, struct mw_db *db)
{
	memset(st->h, 0, sizeof(st->h));
	st->db = db;
	st->gen = db->gen;
}

void
mw_stmts_free(struct mw_stmts *st)
{
	/* a handle of a closed connection only frees its memory */
	for (unsigned i = 0; i < MW_S_N; i++)
		if (st->h[i] != NULL)
			mysql_stmt_close(st->h[i]);
	memset(st->h, 0, sizeof(st->h));
}

const char *
mw_stmt_sql(enum mw_stmt_id id)
{
	return defs[id].sql;
}

const char *
mw_stmt_kinds(enum mw_stmt_id id)
{
	return defs[id].kinds;
}

unsigned
mw_stmt_params(enum mw_stmt_id id)
{
	return (unsigned)strlen(defs[id].kinds);
}

/* fail - keep @s's error (or the connection's) in the db. */
static void
fail(struct mw_stmts *st, MYSQL_STMT *s)
{
	struct mw_db *db = st->db;

	if (s != NULL && mysql_stmt_errno(s) != 0) {
		db->err = mysql_stmt_errno(s);
		snprintf(db->errmsg, sizeof(db->errmsg), "%s", mysql_stmt_error(s));
	} else if (db->my != NULL) {
		db->err = mysql_errno(db->my) ? mysql_errno(db->my) : CR_UNKNOWN_ERROR;
		snprintf(db->errmsg, sizeof(db->errmsg), "%s", mysql_error(db->my));
	} else {
		db->err = CR_SERVER_GONE_ERROR;
		snprintf(db->errmsg, sizeof(db->errmsg), "not connected");
	}
}

/*
 * handle - statement @id prepared on this connection (the handles of an
 * earlier connection are dropped first); NULL on error.
 */
static MYSQL_STMT *
handle(struct mw_stmts *st, enum mw_stmt_id id)
{
	const char *q = defs[id].sql;
	MYSQL_STMT *s;

	if (st->gen != st->db->gen) {
		mw_stmts_free(st);
		st->gen = st->db->gen;
	}
	if (st->h[id] != NULL)
		return st->h[id];
	if (st->db->my == NULL || (s = mysql_stmt_init(st->db->my)) == NULL) {
		fail(st, NULL);
		return NULL;
	}
	if (mysql_stmt_prepare(s, q, (unsigned long)strlen(q)) != 0) {
		fail(st, s);
		mysql_stmt_close(s);
		return NULL;
	}
	st->h[id] = s;
	return s;
}

/* bind_one - @b for value @v of kind @k (a single execution). */
static void
bind_one(MYSQL_BIND *b, char k, const struct mw_val *v)
{
	memset(b, 0, sizeof(*b));
	if (v->null) {
		b->buffer_type = MYSQL_TYPE_NULL;
	} else if (k == 's') {
		b->buffer_type = MYSQL_TYPE_STRING;
		b->buffer = (void *)v->s;
		b->buffer_length = v->len;
		b->length = (unsigned long *)&v->len;
	} else {
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = (void *)&v->n;
		b->is_unsigned = k == 'u';
	}
}

/* run - bind the values @v to @s and execute it. 0 or -1. */
static int
run(struct mw_stmts *st, MYSQL_STMT *s, enum mw_stmt_id id, const struct mw_val *v)
{
	const char *kinds = defs[id].kinds;

	for (unsigned p = 0; kinds[p] != '\0'; p++)
		bind_one(&st->bind[p], kinds[p], &v[p]);
	if (mysql_stmt_bind_param(s, st->bind) != 0 || mysql_stmt_execute(s) != 0) {
		fail(st, s);
		return -1;
	}
	return 0;
}

int64_t
mw_stmt_exec(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v)
{
	MYSQL_STMT *s = handle(st, id);

	if (s == NULL || run(st, s, id, v) != 0)
		return -1;
	return (int64_t)mysql_stmt_affected_rows(s);
}

/*
 * row_cb - the array binding's callback: row @row of the values into
 * @bind (the driver reads each parameter's buffer, length and indicator).
 */
static my_bool
row_cb(void *data, MYSQL_BIND *bind, unsigned int row)
{
	struct mw_stmts *st = data;
	const struct mw_val *v = st->rows + (size_t)row * st->np;

	for (unsigned p = 0; p < st->np; p++) {
		bind[p].u.indicator = (char *)&v[p].null; /* STMT_INDICATOR_NULL is 1 */
		if (bind[p].buffer_type == MYSQL_TYPE_STRING) {
			bind[p].buffer = (void *)v[p].s;
			bind[p].buffer_length = v[p].len;
			bind[p].length = (unsigned long *)&v[p].len;
		} else {
			bind[p].buffer = (void *)&v[p].n;
		}
	}
	return 0;
}

int64_t
mw_stmt_exec_rows(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v, size_t nrows)
{
	const char *kinds = defs[id].kinds;
	MYSQL_STMT *s = handle(st, id);
	unsigned size = (unsigned)nrows;
	int64_t rc;

	if (nrows == 0)
		return 0;
	if (!defs[id].bulk || nrows > UINT32_MAX) {
		st->db->err = CR_UNKNOWN_ERROR;
		snprintf(st->db->errmsg, sizeof(st->db->errmsg), "%s: not a bulk statement",
			 defs[id].name);
		return -1;
	}
	if (s == NULL)
		return -1;
	st->rows = v;
	st->np = (unsigned)strlen(kinds);
	memset(st->bind, 0, sizeof(MYSQL_BIND) * st->np);
	for (unsigned p = 0; p < st->np; p++) {
		st->bind[p].buffer_type = kinds[p] == 's' ? MYSQL_TYPE_STRING : MYSQL_TYPE_LONGLONG;
		st->bind[p].is_unsigned = kinds[p] == 'u';
	}
	if (mysql_stmt_attr_set(s, STMT_ATTR_ARRAY_SIZE, &size) != 0 ||
	    mysql_stmt_attr_set(s, STMT_ATTR_CB_USER_DATA, st) != 0 ||
	    mysql_stmt_attr_set(s, STMT_ATTR_CB_PARAM, (const void *)row_cb) != 0 ||
	    mysql_stmt_bind_param(s, st->bind) != 0 || mysql_stmt_execute(s) != 0) {
		fail(st, s);
		rc = -1;
	} else {
		rc = (int64_t)mysql_stmt_affected_rows(s);
	}
	/* the same handle serves single executions too */
	size = 0;
	mysql_stmt_attr_set(s, STMT_ATTR_ARRAY_SIZE, &size);
	mysql_stmt_attr_set(s, STMT_ATTR_CB_PARAM, NULL);
	return rc;
}

int
mw_stmt_row(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v,
	    char (*out)[MW_STMT_COL], unsigned ncols)
{
	MYSQL_STMT *s = handle(st, id);
	MYSQL_BIND res[4];
	unsigned long len[4];
	my_bool null[4], trunc[4];
	int rc;

	if (ncols > 4)
		ncols = 4;
	if (s == NULL || run(st, s, id, v) != 0)
		return -1;
	memset(res, 0, sizeof(res));
	for (unsigned c = 0; c < ncols; c++) {
		res[c].buffer_type = MYSQL_TYPE_STRING;
		res[c].buffer = out[c];
		res[c].buffer_length = MW_STMT_COL;
		res[c].length = &len[c];
		res[c].is_null = &null[c];
		res[c].error = &trunc[c];
	}
	if (mysql_stmt_bind_result(s, res) != 0 || mysql_stmt_store_result(s) != 0) {
		fail(st, s);
		mysql_stmt_free_result(s);
		return -1;
	}
	rc = mysql_stmt_fetch(s);
	mysql_stmt_free_result(s);
	if (rc == MYSQL_NO_DATA)
		return 0;
	if (rc == 1) {
		fail(st, s);
		return -1;
	}
	for (unsigned c = 0; c < ncols; c++)
		if (null[c] || trunc[c] || len[c] >= MW_STMT_COL)
			out[c][0] = '\0';
	return 1;
}
