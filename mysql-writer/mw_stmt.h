/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_stmt.h - the prepared statements of seckill-mysql-writer: one static
 * table (name, SQL, parameter kinds) of every statement the writer runs
 * with data in it, prepared on first use on a connection and prepared
 * again after a reconnect (mw_db's generation), values bound from a flat
 * array of struct mw_val; no SQL text is formatted and nothing escaped.
 *
 * The statements marked bulk (INSERTs) also take many rows in one
 * execution with MariaDB's array binding (STMT_ATTR_ARRAY_SIZE, the
 * values handed over row by row through STMT_ATTR_CB_PARAM): one round
 * trip, one statement executed per row without a parse.
 *
 * Thread-safety: a struct mw_stmts belongs to its connection's thread.
 */
#ifndef MW_STMT_H
#define MW_STMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mw_db.h"

/** The statements (the table in mw_stmt.c says each one's SQL). */
enum mw_stmt_id {
	MW_S_EVENT,	   /**< INSERT IGNORE an order_events row (bulk) */
	MW_S_ORDER,	   /**< INSERT a confirmed order (bulk) */
	MW_S_LINE,	   /**< INSERT a line, SELECTing its item */
	MW_S_LINES,	   /**< INSERT lines whose items are known (bulk) */
	MW_S_GUARD,	   /**< the stock guard: sold + qty if it fits */
	MW_S_ITEM_LIMIT,   /**< SELECT an item's per-user limit */
	MW_S_ORDER_STATE,  /**< SELECT an order's state */
	MW_S_PAY,	   /**< confirmed -> paid */
	MW_S_PAY_LINES,	   /**< items.paid += the order's lines */
	MW_S_CANCEL,	   /**< confirmed -> cancelled */
	MW_S_CANCEL_LINES, /**< the order's units back, its lines not live */
	MW_S_REFUND,	   /**< units of a paid line refunded */
	MW_S_REFUND_WHY,   /**< why a refund matched no line */
	MW_S_REFUND_ITEM,  /**< items.returned += units */
	MW_S_REFUND_ORDER, /**< the order's refunded state */
	MW_S_ACTIVITY,	   /**< create or change an item */
	MW_S_RESTOCK,	   /**< items.added += units */
	MW_S_CLOSE,	   /**< items.closed_ns */
	MW_S_REMOVE,	   /**< items.removed += units */
	MW_S_PAUSE,	   /**< items.paused_ns set */
	MW_S_RESUME,	   /**< items.paused_ns NULL */
	MW_S_EXTEND,	   /**< items.end_ns */
	MW_S_REFUSED,	   /**< order_events.outcome = refused */
	MW_S_EVENT_SEEN,   /**< SELECT an order_events row */
	MW_S_AHEAD_ORDER,  /**< SELECT a parked order ahead (the barrier) */
	MW_S_AHEAD_EVENT,  /**< SELECT a parked row of the order ahead */
	MW_S_PARK,	   /**< INSERT IGNORE a parked row */
	MW_S_REPARK,	   /**< a retried parked row's new reason */
	MW_S_UNPARK,	   /**< DELETE an applied parked row */
	MW_S_N
};

/** Most parameters of one row of any statement of the table. */
#define MW_STMT_PARAMS 11
/** Bytes of a column read by mw_stmt_row(), NUL included. */
#define MW_STMT_COL 32

/**
 * One parameter value; its kind (the table's) says which field is read:
 * n for integers (signed ones stored as their two's complement), s and len
 * for strings. null: SQL NULL whatever the kind.
 */
struct mw_val {
	uint64_t n;	   /**< an integer */
	const char *s;	   /**< a string, borrowed until the execution */
	unsigned long len; /**< bytes at s */
	char null;	   /**< 1: NULL */
};

/** mw_u - unsigned integer @p v. */
static inline struct mw_val
mw_u(uint64_t v)
{
	return (struct mw_val){.n = v};
}

/** mw_i - signed integer @p v. */
static inline struct mw_val
mw_i(int64_t v)
{
	return (struct mw_val){.n = (uint64_t)v};
}

/** mw_s - the NUL-terminated string @p s; NULL when it is NULL or empty
 * (the optional fields of a message: client_ip, request). */
struct mw_val mw_s(const char *s);

/** mw_text - the NUL-terminated string @p s (not NULL) as it is: an empty
 * one stays '' (a field the message carries, such as an item's name). */
static inline struct mw_val
mw_text(const char *s)
{
	return (struct mw_val){.s = s, .len = (unsigned long)strlen(s)};
}

/** The statements of one connection. All-zero is not valid: mw_stmts_init(). */
struct mw_stmts {
	struct mw_db *db;		 /**< borrowed */
	unsigned gen;			 /**< db->gen the handles were prepared on */
	MYSQL_STMT *h[MW_S_N];		 /**< by statement; NULL: not prepared */
	MYSQL_BIND bind[MW_STMT_PARAMS]; /**< scratch */
	const struct mw_val *rows;	 /**< array binding: the rows */
	unsigned np;			 /**< array binding: values per row */
};

/** mw_stmts_init - nothing prepared yet; statements of @p db. */
void mw_stmts_init(struct mw_stmts *st, struct mw_db *db);

/** mw_stmts_free - close every handle. @p st may be initialised again. */
void mw_stmts_free(struct mw_stmts *st);

/** mw_stmt_sql - the SQL of statement @p id (static). */
const char *mw_stmt_sql(enum mw_stmt_id id);

/** mw_stmt_kinds - its parameters' kinds, one a "?": u, i or s (static). */
const char *mw_stmt_kinds(enum mw_stmt_id id);

/** mw_stmt_params - how many values one row of statement @p id takes. */
unsigned mw_stmt_params(enum mw_stmt_id id);

/**
 * mw_stmt_exec - execute @p id (not a SELECT) with values @p v (its
 * parameters in order), preparing it first when this connection has not.
 * @return rows affected (matched, for UPDATE) >= 0, or -1 with db->err and
 *         db->errmsg set.
 */
int64_t mw_stmt_exec(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v);

/**
 * mw_stmt_exec_rows - execute bulk statement @p id once for @p nrows rows
 * of values (row-major at @p v, borrowed for the call); on an error the
 * rows before it may have been written (roll back to a savepoint).
 * @return the sum of rows affected, or -1 with db->err set (CR_UNKNOWN_ERROR
 *         for a statement the table does not mark bulk).
 */
int64_t mw_stmt_exec_rows(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v,
			  size_t nrows);

/**
 * mw_stmt_row - run SELECT @p id with values @p v and read its first row:
 * its first @p ncols columns as strings into @p out (NULL and too long
 * values read as "").
 * @return 1 (a row), 0 (no row), or -1 with db->err set.
 */
int mw_stmt_row(struct mw_stmts *st, enum mw_stmt_id id, const struct mw_val *v,
		char (*out)[MW_STMT_COL], unsigned ncols);

#endif /* MW_STMT_H */
