/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_db.h - seckill-mysql-writer's MariaDB connection: connect (unix socket
 * or host:port), the schema of mysql-writer/schema.sql, formatted queries
 * of constant SQL (the statements with data are mw_stmt.h's), and which
 * errors are worth a retry.
 *
 * Thread-safety: a struct mw_db belongs to one thread (libmariadb's rule
 * for a MYSQL handle).
 */
#ifndef MW_DB_H
#define MW_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

/** Where and as whom to connect. Strings are borrowed, never freed here. */
struct mw_db_conf {
	const char *socket;   /**< unix socket path; NULL = use host/port */
	const char *host;     /**< with socket NULL: the address, e.g. 127.0.0.1 */
	unsigned port;	      /**< with socket NULL: the TCP port */
	const char *user;     /**< account */
	const char *password; /**< NULL = none */
	const char *database; /**< created if missing, then used */
};

/** A connection. All-zero is "not connected". */
struct mw_db {
	MYSQL *my;		       /**< NULL when not connected */
	const struct mw_db_conf *conf; /**< borrowed */
	unsigned gen;		       /**< counts the connections made: prepared
					    statements of another one are void */
	unsigned err;		       /**< mysql_errno() of the last failed call */
	char errmsg[512];	       /**< its message */
};

/** The schema applied at start-up (mysql-writer/schema.sql, built in). */
extern const char mw_db_schema_sql[];

/**
 * mw_db_connect - connect @p db with @p conf (autocommit off, READ
 * COMMITTED, utf8mb4, affected rows = rows matched), create the database
 * if missing and use it. Closes a previous connection of @p db first.
 * @return 0, or -EIO with db->err and db->errmsg set.
 */
int mw_db_connect(struct mw_db *db, const struct mw_db_conf *conf);

/** mw_db_close - close the connection, if any. @p db may be reused. */
void mw_db_close(struct mw_db *db);

/**
 * mw_db_exec - run one statement made from @p fmt (printf; strings in it
 * must have gone through mw_db_escape()).
 * @return rows affected (matched, for UPDATE) >= 0, or -1 with db->err and
 *         db->errmsg set. A result set, if any, is read and dropped.
 */
int64_t mw_db_exec(struct mw_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * mw_db_query - run a query made from @p fmt and return its whole result.
 * @return the result (free it with mysql_free_result()), or NULL with
 *         db->err set (db->err is 0 when the statement returned no rows
 *         set at all).
 */
MYSQL_RES *mw_db_query(struct mw_db *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * mw_db_escape - @p s escaped for a quoted SQL string into @p out (at
 * least 2 * strlen(s) + 1 bytes). Needs a connection.
 * @return @p out
 */
char *mw_db_escape(struct mw_db *db, char *out, const char *s);

/**
 * mw_db_apply_schema - run every statement of @p sql (split at ";" ending a
 * line; pieces with only comments and blanks are skipped).
 * @return 0, or -EIO (db->err set; statements before it ran).
 */
int mw_db_apply_schema(struct mw_db *db, const char *sql);

/**
 * mw_db_next_statement - the next statement of @p sql from *@p pos: sets
 * *@p start and *@p len to it (";" excluded) and moves *@p pos past it.
 * Skips pieces that hold only blanks and "--" comments. Pure.
 * @return true if one was found, false at the end.
 */
bool mw_db_next_statement(const char *sql, size_t *pos, size_t *start, size_t *len);

/**
 * mw_db_count_parked - count the rows of the parked table into @p n (2 +
 * @p nreasons values): n[0] every row, n[1] the final ones, n[2 + i] those
 * of reason @p reasons[i] (a row of another reason counts in n[0] only).
 * Runs in the connection's transaction.
 * @return 0, or -EIO with db->err set.
 */
int mw_db_count_parked(struct mw_db *db, const char *const *reasons, unsigned nreasons, int64_t *n);

/** What the writer does with a message, by what went wrong with it. */
enum mw_db_verdict {
	MW_DB_SKIP,	/**< it cannot be decoded: logged, counted, skipped */
	MW_DB_PARK_SQL, /**< a statement failed on the message's own data:
			     parked for good with reason "sql" */
	MW_DB_STALL,	/**< any other SQL error, or a message of another
			     version (a newer exporter: upgrade the writer):
			     the batch is rolled back and applied again (with
			     a backoff) until it commits; the offsets never
			     move past it */
};

/**
 * mw_db_message_error - whether error @p err is a property of the message
 * itself, so that applying it again can never succeed: a value the column
 * refuses (1048 NULL in a NOT NULL column, 1264 out of range, 1292 and
 * 1366 a wrong value, 1406 too long, 1690 an out-of-range result) or a
 * CHECK constraint the row breaks (4025). Every other error, known or not,
 * is not (docs/mysql.md, "Faults"). Pure.
 */
bool mw_db_message_error(unsigned err);

/**
 * mw_db_verdict - the writer's rule for a message: @p decode_rc is
 * mw_msg_decode()'s return (-EPROTO, another "v": MW_DB_STALL, never
 * skipped; any other non-zero: MW_DB_SKIP), @p err the
 * mysql_errno() of the statement that failed on it (MW_DB_PARK_SQL when
 * mw_db_message_error(), else MW_DB_STALL). Pure.
 */
enum mw_db_verdict mw_db_verdict(int decode_rc, unsigned err);

/**
 * mw_db_retryable - whether a batch that failed with @p err must be rolled
 * back and applied again: every error but mw_db_message_error()'s (the
 * server or the connection away, a lost race, a full disk or table, out of
 * memory, read-only, an error this writer does not know ...). Pure.
 */
bool mw_db_retryable(unsigned err);

/**
 * mw_db_reconnect - whether, after error @p err, the connection is made
 * anew (and the schema applied again) before the retry: client errors
 * (2000-2999), server shutdown, killed connection, too many connections,
 * a missing table (the schema makes it again). Other errors retry on the
 * same connection after the rollback. Pure.
 */
bool mw_db_reconnect(unsigned err);

#endif /* MW_DB_H */
