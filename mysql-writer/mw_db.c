/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_db.c - the MariaDB connection of seckill-mysql-writer: connect, run
 * formatted statements, apply the schema, classify errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysqld_error.h>

#include "mw_db.h"

/* fail - keep the handle's error in @db. */
static void
fail(struct mw_db *db)
{
	db->err = db->my != NULL ? mysql_errno(db->my) : CR_OUT_OF_MEMORY;
	snprintf(db->errmsg, sizeof(db->errmsg), "%s",
		 db->my != NULL ? mysql_error(db->my) : "out of memory");
}

void
mw_db_close(struct mw_db *db)
{
	if (db->my != NULL)
		mysql_close(db->my);
	db->my = NULL;
}

int
mw_db_connect(struct mw_db *db, const struct mw_db_conf *conf)
{
	unsigned timeout = 5, rw_timeout = 30;
	char esc[2 * 64 + 1];

	mw_db_close(db);
	db->conf = conf;
	db->gen++;
	db->my = mysql_init(NULL);
	if (db->my == NULL) {
		fail(db);
		return -EIO;
	}
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(db->my, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
	mysql_options(db->my, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(db->my, conf->socket ? NULL : conf->host, conf->user, conf->password,
			       NULL, conf->socket ? 0 : conf->port, conf->socket,
			       CLIENT_FOUND_ROWS) == NULL)
		goto err;
	if (strlen(conf->database) > 64) {
		db->err = ER_WRONG_DB_NAME;
		snprintf(db->errmsg, sizeof(db->errmsg), "database name longer than 64 bytes");
		mw_db_close(db);
		return -EIO;
	}
	mw_db_escape(db, esc, conf->database);
	if (mw_db_exec(db, "CREATE DATABASE IF NOT EXISTS `%s`", esc) < 0 ||
	    mysql_select_db(db->my, conf->database) != 0 ||
	    mw_db_exec(db, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") < 0 ||
	    mysql_autocommit(db->my, 0) != 0)
		goto err;
	return 0;
err:
	fail(db);
	mw_db_close(db);
	return -EIO;
}

/* vexec - mysql_real_query() of the formatted statement. */
static int
vexec(struct mw_db *db, const char *fmt, va_list ap)
{
	char stack[4096], *q = stack;
	va_list ap2;
	int n, rc;

	if (db->my == NULL) {
		db->err = CR_SERVER_GONE_ERROR;
		snprintf(db->errmsg, sizeof(db->errmsg), "not connected");
		return -1;
	}
	va_copy(ap2, ap);
	n = vsnprintf(stack, sizeof(stack), fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(stack)) {
		q = malloc((size_t)n + 1);
		if (q == NULL) {
			va_end(ap2);
			db->err = CR_OUT_OF_MEMORY;
			snprintf(db->errmsg, sizeof(db->errmsg), "out of memory");
			return -1;
		}
		vsnprintf(q, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	rc = mysql_real_query(db->my, q, (unsigned long)n);
	if (q != stack)
		free(q);
	if (rc != 0) {
		fail(db);
		return -1;
	}
	return 0;
}

/*
 * vrun - run the statement and read its result: *@res the rows (NULL if
 * none), or -1 with the error kept.
 */
static int
vrun(struct mw_db *db, MYSQL_RES **res, const char *fmt, va_list ap)
{
	*res = NULL;
	if (vexec(db, fmt, ap) != 0)
		return -1;
	*res = mysql_store_result(db->my);
	if (*res == NULL && mysql_field_count(db->my) != 0) {
		fail(db);
		return -1;
	}
	return 0;
}

int64_t
mw_db_exec(struct mw_db *db, const char *fmt, ...)
{
	MYSQL_RES *res;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vrun(db, &res, fmt, ap);
	va_end(ap);
	if (rc != 0)
		return -1;
	if (res != NULL) {
		mysql_free_result(res);
		return 0;
	}
	return (int64_t)mysql_affected_rows(db->my);
}

MYSQL_RES *
mw_db_query(struct mw_db *db, const char *fmt, ...)
{
	MYSQL_RES *res;
	va_list ap;

	va_start(ap, fmt);
	if (vrun(db, &res, fmt, ap) == 0 && res == NULL)
		db->err = 0; /* a statement without rows */
	va_end(ap);
	return res;
}

char *
mw_db_escape(struct mw_db *db, char *out, const char *s)
{
	mysql_real_escape_string(db->my, out, s, (unsigned long)strlen(s));
	return out;
}

/* only_comments - whether @s[0..n) holds only blanks and "--" comments. */
static bool
only_comments(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++;
		} else if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			while (i < n && s[i] != '\n')
				i++;
		} else {
			return false;
		}
	}
	return true;
}

bool
mw_db_next_statement(const char *sql, size_t *pos, size_t *start, size_t *len)
{
	size_t total = strlen(sql);

	while (*pos < total) {
		size_t b = *pos, e = b;

		for (;;) {
			const char *semi = strchr(sql + e, ';');

			if (semi == NULL) {
				e = total;
				*pos = total;
				break;
			}
			e = (size_t)(semi - sql);
			if (semi[1] == '\n' || semi[1] == '\0' ||
			    (semi[1] == '\r' && semi[2] == '\n')) {
				*pos = e + 1;
				break;
			}
			e++;
		}
		if (!only_comments(sql + b, e - b)) {
			*start = b;
			*len = e - b;
			return true;
		}
	}
	return false;
}

int
mw_db_apply_schema(struct mw_db *db, const char *sql)
{
	size_t pos = 0, start, len;

	while (mw_db_next_statement(sql, &pos, &start, &len))
		if (mw_db_exec(db, "%.*s", (int)len, sql + start) < 0)
			return -EIO;
	return mw_db_exec(db, "COMMIT") < 0 ? -EIO : 0;
}

bool
mw_db_message_error(unsigned err)
{
	switch (err) {
	case ER_BAD_NULL_ERROR:			 /* 1048: NULL into a NOT NULL column */
	case ER_WARN_DATA_OUT_OF_RANGE:		 /* 1264: a value beyond its column */
	case ER_TRUNCATED_WRONG_VALUE:		 /* 1292: a value of the wrong kind */
	case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: /* 1366: e.g. a string not utf8mb4 */
	case ER_DATA_TOO_LONG:			 /* 1406: a string longer than its column */
	case ER_DATA_OUT_OF_RANGE:		 /* 1690: sold + units beyond BIGINT */
	case ER_CONSTRAINT_FAILED:		 /* 4025: a CHECK constraint the row breaks */
		return true;
	default:
		return false;
	}
}

enum mw_db_verdict
mw_db_verdict(int decode_rc, unsigned err)
{
	if (decode_rc == -EPROTO)
		return MW_DB_STALL; /* a newer exporter's: upgrade the writer */
	if (decode_rc != 0)
		return MW_DB_SKIP;
	return mw_db_message_error(err) ? MW_DB_PARK_SQL : MW_DB_STALL;
}

bool
mw_db_retryable(unsigned err)
{
	return !mw_db_message_error(err);
}

bool
mw_db_reconnect(unsigned err)
{
	switch (err) {
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
	case ER_CON_COUNT_ERROR:
	case ER_NO_SUCH_TABLE:
		return true;
	default:
		return err >= 2000 && err <= 2999;
	}
}

int
mw_db_count_parked(struct mw_db *db, const char *const *reasons, unsigned nreasons, int64_t *n)
{
	MYSQL_RES *res = mw_db_query(
		db, "SELECT reason, final, COUNT(*) FROM parked GROUP BY reason, final");
	MYSQL_ROW row;

	if (res == NULL)
		return -EIO;
	memset(n, 0, sizeof(*n) * (2 + nreasons));
	while ((row = mysql_fetch_row(res)) != NULL) {
		int64_t c = strtoll(row[2], NULL, 10);

		n[0] += c;
		n[1] += row[1][0] != '0' ? c : 0;
		for (unsigned i = 0; i < nreasons; i++)
			if (strcmp(row[0], reasons[i]) == 0)
				n[2 + i] += c;
	}
	mysql_free_result(res);
	return 0;
}
