/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mysql_msg.c - table-driven tests of seckill-mysql-writer's message
 * decoder (mysql-writer/mw_msg.c), schema splitter (mw_db.c) and statement
 * table (mw_stmt.c).
 *
 * Every input ends right before a PROT_NONE page, so a decoder that reads
 * past the value's length crashes the test. Tables: one valid message of
 * every type with the fields expected; malformed messages with the error
 * expected (-EBADMSG, -EPROTO, -ENOTSUP, -ENOMSG); every truncated prefix of each
 * valid message (never accepted, never a crash); every byte of each valid
 * message replaced by a control byte or a quote.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mw_db.h"
#include "mw_msg.h"
#include "mw_run.h"
#include "mw_stmt.h"
#include "sk_test.h"

#define AREA (64 * 1024)

static char *area;
static size_t page;
static struct mw_msg msg;

static void
setup(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	area = mmap(NULL, AREA + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(area, MAP_FAILED);
	ck_assert_int_eq(mprotect(area + AREA, page, PROT_NONE), 0);
}

static void
teardown(void)
{
	munmap(area, AREA + page);
}

/* decode - @len bytes of @s placed against the guard page, decoded. */
static int
decode(const char *s, size_t len)
{
	char why[256];

	ck_assert_uint_le(len, AREA);
	memmove(area + AREA - len, s, len);
	return mw_msg_decode(area + AREA - len, len, &msg, why, sizeof(why));
}

static const struct valid {
	const char *json;
	enum mw_msg_type type;
	uint64_t seq, order, user, units;
	uint32_t item;
	int64_t time_ns;
} valid[] = {
	{"{\"v\":1,\"seq\":42,\"type\":\"confirmed\",\"order\":\"7580123456789\",\"user\":4711,"
	 "\"units\":3,\"time_ns\":1764000000000000001,\"sold_ns\":1764000000000000000,"
	 "\"client_ip\":\"198.18.0.2\",\"lines\":[{\"line\":0,\"item\":1001,\"qty\":1,"
	 "\"price\":99900},{\"line\":1,\"item\":1002,\"qty\":2,\"price\":5}]}",
	 MW_MSG_CONFIRMED, 42, 7580123456789, 4711, 3, 1001, 1764000000000000001},
	{"{\"v\":1,\"seq\":57,\"type\":\"paid\",\"order\":\"18446744073709551615\",\"user\":4711,"
	 "\"item\":1001,\"units\":1,\"time_ns\":5}",
	 MW_MSG_PAID, 57, UINT64_MAX, 4711, 1, 1001, 5},
	{"{\"v\":1,\"seq\":58,\"type\":\"cancelled\",\"order\":\"9\",\"user\":1,\"item\":2,"
	 "\"units\":1,\"time_ns\":-1}",
	 MW_MSG_CANCELLED, 58, 9, 1, 1, 2, -1},
	{"{\"v\":1,\"seq\":59,\"type\":\"failed\",\"order\":\"9\",\"user\":1,\"item\":2,"
	 "\"units\":1,\"time_ns\":0}",
	 MW_MSG_FAILED, 59, 9, 1, 1, 2, 0},
	{"{\"v\":1,\"seq\":60,\"type\":\"restocked\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":50,\"time_ns\":7}",
	 MW_MSG_RESTOCKED, 60, 0, 0, 50, 1001, 7},
	{"{\"v\":1,\"seq\":61,\"type\":\"activity\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":500,\"time_ns\":8,\"limit\":2,\"price\":99900,\"name\":\"phone \\\"15\\\"\","
	 "\"start_ns\":1,\"end_ns\":2}",
	 MW_MSG_ACTIVITY, 61, 0, 0, 500, 1001, 8},
	{"{\"v\":1,\"seq\":62,\"type\":\"closed\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":0,\"time_ns\":9}",
	 MW_MSG_CLOSED, 62, 0, 0, 0, 1001, 9},
	{"{\"v\":1,\"seq\":63,\"type\":\"refunded\",\"order\":\"9\",\"user\":1,\"item\":2,"
	 "\"units\":2,\"time_ns\":10,\"request\":\"REQ-1\"}",
	 MW_MSG_REFUNDED, 63, 9, 1, 2, 2, 10},
	{"{\"v\":1,\"seq\":64,\"type\":\"pay_conflict\",\"order\":\"9\",\"user\":1,\"item\":2,"
	 "\"units\":1,\"time_ns\":11,\"request\":\"REQ-2\",\"future_field\":[1,2]}",
	 MW_MSG_PAY_CONFLICT, 64, 9, 1, 1, 2, 11},
	{"{\"v\":1,\"seq\":65,\"type\":\"removed\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":7,\"time_ns\":12}",
	 MW_MSG_REMOVED, 65, 0, 0, 7, 1001, 12},
	{"{\"v\":1,\"seq\":66,\"type\":\"paused\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":0,\"time_ns\":13}",
	 MW_MSG_PAUSED, 66, 0, 0, 0, 1001, 13},
	{"{\"v\":1,\"seq\":67,\"type\":\"resumed\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":0,\"time_ns\":14}",
	 MW_MSG_RESUMED, 67, 0, 0, 0, 1001, 14},
	{"{\"v\":1,\"seq\":68,\"type\":\"extended\",\"order\":null,\"user\":0,\"item\":1001,"
	 "\"units\":0,\"time_ns\":15,\"end_ns\":9223372036854775807}",
	 MW_MSG_EXTENDED, 68, 0, 0, 0, 1001, 15},
};

START_TEST(test_valid)
{
	const struct valid *v = &valid[_i];

	ck_assert_int_eq(decode(v->json, strlen(v->json)), 0);
	ck_assert_int_eq(msg.type, v->type);
	ck_assert_uint_eq(msg.seq, v->seq);
	ck_assert_uint_eq(msg.order, v->order);
	ck_assert_uint_eq(msg.user, v->user);
	ck_assert_uint_eq(msg.units, v->units);
	ck_assert_uint_eq(msg.item, v->item);
	ck_assert_int_eq(msg.time_ns, v->time_ns);
	ck_assert_ptr_nonnull(strstr(v->json, mw_msg_type_name(msg.type)));
}
END_TEST

START_TEST(test_fields)
{
	ck_assert_int_eq(decode(valid[0].json, strlen(valid[0].json)), 0);
	ck_assert_uint_eq(msg.nlines, 2);
	ck_assert_uint_eq(msg.lines[1].line, 1);
	ck_assert_uint_eq(msg.lines[1].item, 1002);
	ck_assert_uint_eq(msg.lines[1].qty, 2);
	ck_assert_uint_eq(msg.lines[1].price, 5);
	ck_assert_int_eq(msg.sold_ns, 1764000000000000000);
	ck_assert_str_eq(msg.client_ip, "198.18.0.2");
	/* IPv6, the longest text (45 characters), and none. */
	static const char *const ips[] = {"2001:db8::be:ef",
					  "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", ""};
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
		char buf[1024];
		int n = snprintf(buf, sizeof(buf),
				 "{\"v\":1,\"seq\":1,\"type\":\"confirmed\",\"order\":\"1\","
				 "\"user\":1,\"units\":1,\"time_ns\":1,\"client_ip\":\"%s\","
				 "\"lines\":[{\"line\":0,\"item\":1,\"qty\":1,\"price\":1}]}",
				 ips[i]);
		ck_assert_int_eq(decode(buf, (size_t)n), 0);
		ck_assert_str_eq(msg.client_ip, ips[i]);
	}
	ck_assert_int_eq(decode(valid[5].json, strlen(valid[5].json)), 0);
	ck_assert(msg.has_limit && msg.has_price && msg.has_name && msg.has_start && msg.has_end);
	ck_assert_uint_eq(msg.limit, 2);
	ck_assert_uint_eq(msg.price, 99900);
	ck_assert_str_eq(msg.name, "phone \"15\"");
	ck_assert_int_eq(decode(valid[4].json, strlen(valid[4].json)), 0);
	ck_assert(!msg.has_limit && !msg.has_name);
	ck_assert_int_eq(decode(valid[7].json, strlen(valid[7].json)), 0);
	ck_assert_str_eq(msg.request, "REQ-1");
	ck_assert_str_eq(mw_msg_type_name(0), "?");
	ck_assert_str_eq(mw_msg_type_name(MW_MSG_NTYPES), "?");
	ck_assert_str_eq(mw_msg_type_name(MW_MSG_PAY_CONFLICT), "pay_conflict");
	ck_assert_str_eq(mw_msg_type_name(MW_MSG_EXTENDED), "extended");
	ck_assert_int_eq(decode(valid[12].json, strlen(valid[12].json)), 0);
	ck_assert(msg.has_end);
	ck_assert_int_eq(msg.end_ns, INT64_MAX);
	ck_assert_int_eq(decode(valid[9].json, strlen(valid[9].json)), 0);
	ck_assert(!msg.has_end);
}
END_TEST

#define P     "\"v\":1,\"seq\":5,"
#define EV    ",\"user\":1,\"item\":2,\"units\":1,\"time_ns\":1"
#define LINE0 "{\"line\":0,\"item\":1,\"qty\":1,\"price\":1}"
#define CONF(lines)                                                                                \
	"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"user\":1,\"units\":1,"                     \
	"\"time_ns\":1,\"lines\":" lines "}"

static const struct bad {
	const char *json;
	int rc;
} bad[] = {
	{"", -EBADMSG},
	{"null", -EBADMSG},
	{"[]", -EBADMSG},
	{"\"x\"", -EBADMSG},
	{"{}", -EBADMSG},
	{"{\"v\":2,\"seq\":5,\"type\":\"paid\"}", -EPROTO},
	{"{\"v\":\"1\",\"seq\":5,\"type\":\"paid\"}", -EBADMSG},
	{"{\"v\":1,\"v\":1,\"seq\":5,\"type\":\"paid\",\"order\":\"1\"" EV "}", -EBADMSG},
	{"{\"v\":1,\"seq\":0,\"type\":\"paid\",\"order\":\"1\"" EV "}", -EBADMSG},
	{"{\"v\":1,\"seq\":-1,\"type\":\"paid\",\"order\":\"1\"" EV "}", -EBADMSG},
	{"{\"v\":1,\"seq\":1.5,\"type\":\"paid\",\"order\":\"1\"" EV "}", -EBADMSG},
	{"{\"v\":1,\"seq\":99999999999999999999,\"type\":\"paid\"}", -EBADMSG},
	{"{" P "\"type\":\"refund\",\"order\":\"1\"" EV "}", -ENOTSUP},
	{"{" P "\"type\":\"\"}", -ENOTSUP},
	/* the appliance's audit of a refused payment: known, nothing for MariaDB */
	{"{" P "\"type\":\"pay_rejected\",\"order\":null,\"partition\":0,\"offset\":9,"
	 "\"reason\":\"unsigned\"" EV "}",
	 -ENOMSG},
	/* an activity's orders archived by the appliance: MariaDB keeps its rows */
	{"{" P "\"type\":\"activity_archived\",\"order\":null" EV "}", -ENOMSG},
	/* a live settings change (the generation in units): nothing for MariaDB */
	{"{" P "\"type\":\"live\",\"order\":null,\"request\":\"limits\"" EV "}", -ENOMSG},
	{"{" P "\"type\":7}", -EBADMSG},
	{"{" P "\"order\":\"1\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":null" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":1" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"0\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\" 1\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"+1\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"18446744073709551616\"" EV "}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"item\":2,\"units\":1,\"time_ns\":1}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"user\":-1,\"item\":2,\"units\":1,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"user\":1,\"units\":1,\"time_ns\":1}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"user\":1,\"item\":4294967296,\"units\":1,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"user\":1,\"item\":2,\"time_ns\":1}", -EBADMSG},
	{"{" P "\"type\":\"paid\",\"order\":\"1\",\"user\":1,\"item\":2,\"units\":1}", -EBADMSG},
	{"{" P "\"type\":\"restocked\",\"order\":null,\"user\":0,\"item\":0,\"units\":1,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"refunded\",\"order\":\"1\",\"user\":1,\"item\":2,\"units\":0,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"refunded\",\"order\":\"1\"" EV ",\"request\":5}", -EBADMSG},
	{"{" P "\"type\":\"removed\",\"order\":null,\"user\":0,\"item\":1,\"units\":0,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"removed\",\"order\":null,\"user\":0,\"item\":0,\"units\":1,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"extended\",\"order\":null,\"user\":0,\"item\":1,\"units\":0,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"extended\",\"order\":null,\"user\":0,\"item\":1,\"units\":0,"
	 "\"time_ns\":1,\"end_ns\":0}",
	 -EBADMSG},
	{"{" P "\"type\":\"paused\",\"order\":\"x\",\"user\":0,\"item\":1,\"units\":0,"
	 "\"time_ns\":1}",
	 -EBADMSG},
	{"{" P "\"type\":\"activity\",\"order\":null,\"user\":0,\"item\":1,\"units\":1,"
	 "\"time_ns\":1,\"limit\":0}",
	 -EBADMSG},
	{"{" P "\"type\":\"activity\",\"order\":null,\"user\":0,\"item\":1,\"units\":1,"
	 "\"time_ns\":1,\"name\":\"01234567890123456789012345678901234567890123456789012345678901"
	 "234\"}",
	 -EBADMSG},
	{"{" P "\"type\":\"activity\",\"order\":null,\"user\":0,\"item\":1,\"units\":1,"
	 "\"time_ns\":1,\"name\":\"a\\u0000b\"}",
	 -EBADMSG},
	{CONF("[]"), -EBADMSG},
	{CONF("{}"), -EBADMSG},
	{CONF("[1]"), -EBADMSG},
	{CONF("[{\"line\":1,\"item\":1,\"qty\":1,\"price\":1}]"), -EBADMSG},
	{CONF("[{\"line\":0,\"item\":0,\"qty\":1,\"price\":1}]"), -EBADMSG},
	{CONF("[{\"line\":0,\"item\":1,\"qty\":0,\"price\":1}]"), -EBADMSG},
	{CONF("[{\"line\":0,\"item\":1,\"qty\":1,\"price\":-1}]"), -EBADMSG},
	{CONF("[{\"line\":0,\"item\":1,\"qty\":1}]"), -EBADMSG},
	{CONF("[" LINE0 ",{\"line\":1,\"item\":1,\"qty\":1,\"price\":1}]"), -EBADMSG},
	{"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"user\":1,\"units\":0,\"time_ns\":1,"
	 "\"lines\":[" LINE0 "]}",
	 -EBADMSG},
	{"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"user\":1,\"units\":1,\"time_ns\":1,"
	 "\"client_ip\":\"0123456789abcdef\",\"lines\":[" LINE0 "]}",
	 -EBADMSG},
	{"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"user\":1,\"units\":1,\"time_ns\":1,"
	 "\"client_ip\":\"198.18.0.256\",\"lines\":[" LINE0 "]}",
	 -EBADMSG},
	{"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"user\":1,\"units\":1,\"time_ns\":1,"
	 "\"client_ip\":\"2001:db8::1%eth0\",\"lines\":[" LINE0 "]}",
	 -EBADMSG},
	{"{" P "\"type\":\"confirmed\",\"order\":\"1\",\"units\":1,\"time_ns\":1,"
	 "\"lines\":[" LINE0 "]}",
	 -EBADMSG},
	{CONF("[" LINE0 "]") " trailing", -EBADMSG},
	{"{\"v\":1,\"seq\":5,\"type\":\"paid\",\"order\":\"1\"" EV, -EBADMSG},
	{"{\"v\":1,\"seq\":5,\"type\":\"p\xff\",\"order\":\"1\"" EV "}", -EBADMSG},
};

START_TEST(test_bad)
{
	ck_assert_msg(decode(bad[_i].json, strlen(bad[_i].json)) == bad[_i].rc, "input %d: %s", _i,
		      bad[_i].json);
}
END_TEST

START_TEST(test_bad_sanity)
{
	/* the CONF() frame itself is valid: each bad[] case fails for its own reason */
	const char *ok = CONF("[" LINE0 "]");

	ck_assert_int_eq(decode(ok, strlen(ok)), 0);
	ck_assert_int_eq(mw_msg_decode(NULL, 0, &msg, NULL, 0), -EBADMSG);
}
END_TEST

/* Every prefix of a valid message is refused, without a crash. */
START_TEST(test_prefixes)
{
	const char *s = valid[_i].json;
	size_t n = strlen(s);

	for (size_t k = 0; k < n; k++)
		ck_assert_msg(decode(s, k) != 0, "prefix of %zu bytes accepted: %.*s", k, (int)k,
			      s);
}
END_TEST

/* Every byte replaced by a control byte, a quote or a NUL: never a crash. */
START_TEST(test_mutations)
{
	static const char subst[] = {0, 1, '\n', 0x7f, '"', '\\', '}', (char)0x80};
	char buf[1024];
	size_t n = strlen(valid[_i].json);

	ck_assert_uint_lt(n, sizeof(buf));
	for (size_t k = 0; k < n; k++)
		for (size_t s = 0; s < sizeof(subst); s++) {
			memcpy(buf, valid[_i].json, n);
			buf[k] = subst[s];
			(void)decode(buf, n);
		}
}
END_TEST

START_TEST(test_schema_split)
{
	static const char sql[] = "-- head\n\nCREATE TABLE a (x INT); -- no split here\n"
				  "  ;\n-- only a comment\n;\nINSERT INTO a VALUES (';');\n"
				  "SELECT 1";
	size_t pos = 0, start, len, n = 0;
	const char *want[] = {"-- head\n\nCREATE TABLE a (x INT); -- no split here\n  ",
			      "\nINSERT INTO a VALUES (';')", "\nSELECT 1"};

	while (mw_db_next_statement(sql, &pos, &start, &len)) {
		ck_assert_uint_lt(n, 3);
		ck_assert_uint_eq(len, strlen(want[n]));
		ck_assert(memcmp(sql + start, want[n], len) == 0);
		n++;
	}
	ck_assert_uint_eq(n, 3);
	pos = 0;
	ck_assert(!mw_db_next_statement("-- x\n ;\n", &pos, &start, &len));
	pos = 0;
	n = 0;
	while (mw_db_next_statement(mw_db_schema_sql, &pos, &start, &len))
		n++;
	/* five tables; parked's barrier columns and index, its final column and
	 * two indexes, the UPDATE that retries rows wrongly made final; two
	 * ALTERs of items; the widening of orders.client_ip */
	ck_assert_uint_eq(n, 15);
}
END_TEST

/*
 * The writer's rule for a failed message (issue 26 item 9): any SQL error
 * that is not the message's own data stalls the batch (rolled back, applied
 * again, offsets kept), however unusual; only the message's data parks it
 * (reason sql); only what cannot be decoded is skipped.
 */
static const struct {
	int decode_rc;
	unsigned err;
	enum mw_db_verdict want;
	bool reconnect;
	const char *what;
} verdicts[] = {
	{0, 1114, MW_DB_STALL, false, "table full"},
	{0, 1041, MW_DB_STALL, false, "out of memory (server)"},
	{0, 1047, MW_DB_STALL, false, "unknown command"},
	{0, 1836, MW_DB_STALL, false, "read-only mode"},
	{0, 1290, MW_DB_STALL, false, "read_only (option prevents statement)"},
	{0, 1644, MW_DB_STALL, false, "a trigger's SIGNAL"},
	{0, 1021, MW_DB_STALL, false, "disk full"},
	{0, 1030, MW_DB_STALL, false, "storage engine error"},
	{0, 1062, MW_DB_STALL, false, "duplicate key not handled by a guard"},
	{0, 1064, MW_DB_STALL, false, "syntax (a writer bug)"},
	{0, 1146, MW_DB_STALL, true, "table dropped: the schema makes it again"},
	{0, 2002, MW_DB_STALL, true, "can't connect through the socket"},
	{0, 2006, MW_DB_STALL, true, "server gone"},
	{0, 2013, MW_DB_STALL, true, "lost connection"},
	{0, 1053, MW_DB_STALL, true, "server shutdown"},
	{0, 1927, MW_DB_STALL, true, "connection killed"},
	{0, 1213, MW_DB_STALL, false, "deadlock"},
	{0, 1205, MW_DB_STALL, false, "lock wait timeout"},
	{0, 0, MW_DB_STALL, false, "no error number at all"},
	{0, 65535, MW_DB_STALL, false, "an error this writer never heard of"},
	{0, 1048, MW_DB_PARK_SQL, false, "NULL into NOT NULL"},
	{0, 1264, MW_DB_PARK_SQL, false, "out of range value"},
	{0, 1292, MW_DB_PARK_SQL, false, "truncated wrong value"},
	{0, 1366, MW_DB_PARK_SQL, false, "incorrect string value"},
	{0, 1406, MW_DB_PARK_SQL, false, "data too long"},
	{0, 1690, MW_DB_PARK_SQL, false, "BIGINT UNSIGNED out of range"},
	{0, 4025, MW_DB_PARK_SQL, false, "CHECK constraint failed"},
	{-EINVAL, 0, MW_DB_SKIP, false, "malformed message"},
	{-ENOTSUP, 0, MW_DB_SKIP, false, "unknown type"},
	{-ENOMSG, 0, MW_DB_SKIP, false, "nothing for MariaDB (pay_rejected)"},
	{-EPROTO, 0, MW_DB_STALL, false, "another version: a newer exporter, never skipped"},
	{-EPROTO, 1114, MW_DB_STALL, false, "another version, whatever the error"},
	{-EINVAL, 1114, MW_DB_SKIP, false, "malformed wins over any error"},
};

START_TEST(test_verdict)
{
	unsigned e = verdicts[_i].err;

	ck_assert_msg(mw_db_verdict(verdicts[_i].decode_rc, e) == verdicts[_i].want, "%s (%u)",
		      verdicts[_i].what, e);
	if (verdicts[_i].decode_rc == 0) {
		ck_assert_msg(mw_db_retryable(e) == (verdicts[_i].want == MW_DB_STALL), "%s (%u)",
			      verdicts[_i].what, e);
		ck_assert_msg(mw_db_message_error(e) == (verdicts[_i].want == MW_DB_PARK_SQL),
			      "%s (%u)", verdicts[_i].what, e);
		ck_assert_msg(mw_db_reconnect(e) == verdicts[_i].reconnect, "%s (%u)",
			      verdicts[_i].what, e);
	}
}
END_TEST

/* Real decode results: malformed skips, another version stalls. */
START_TEST(test_verdict_decode)
{
	struct mw_msg *m = malloc(sizeof(*m));
	char why[160];
	const char *bad = "not json";
	const char *v2 = "{\"v\":2,\"seq\":7,\"type\":\"confirmed\"}";

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(mw_db_verdict(mw_msg_decode(bad, strlen(bad), m, why, sizeof(why)), 0),
			 MW_DB_SKIP);
	/* a newer exporter's message stalls the writer: skipped, it is lost */
	ck_assert_int_eq(mw_db_verdict(mw_msg_decode(v2, strlen(v2), m, why, sizeof(why)), 0),
			 MW_DB_STALL);
	free(m);
}
END_TEST

/* The statement table: one kind per "?" (none inside a quoted string). */
START_TEST(test_stmt_table)
{
	const char *q = mw_stmt_sql((enum mw_stmt_id)_i), *k = mw_stmt_kinds((enum mw_stmt_id)_i);
	unsigned marks = 0;
	bool quoted = false;

	ck_assert_ptr_nonnull(q);
	for (; *q != '\0'; q++) {
		quoted ^= *q == '\'';
		marks += !quoted && *q == '?';
	}
	ck_assert_msg(!quoted, "statement %d: a quote left open", _i);
	ck_assert_uint_eq(marks, strlen(k));
	ck_assert_uint_eq(mw_stmt_params((enum mw_stmt_id)_i), marks);
	ck_assert_uint_le(marks, MW_STMT_PARAMS);
	ck_assert_uint_eq(strspn(k, "uis"), strlen(k));
}
END_TEST

/* The rows a run builds match the statements they are bound to. */
START_TEST(test_stmt_run_rows)
{
	struct mw_val v;

	ck_assert_uint_eq(mw_stmt_params(MW_S_EVENT), MW_RUN_EVENT_NP);
	ck_assert_uint_eq(mw_stmt_params(MW_S_ORDER), MW_RUN_ORDER_NP);
	ck_assert_uint_eq(mw_stmt_params(MW_S_LINES), MW_RUN_LINE_NP);
	v = mw_s("");
	ck_assert_int_eq(v.null, 1);
	v = mw_s(NULL);
	ck_assert_int_eq(v.null, 1);
	v = mw_s("abc");
	ck_assert_int_eq(v.null, 0);
	ck_assert_uint_eq(v.len, 3);
	v = mw_text(""); /* a name the event carries, empty: '' and not NULL */
	ck_assert_int_eq(v.null, 0);
	ck_assert_uint_eq(v.len, 0);
	v = mw_i(-5);
	ck_assert_int_eq((int64_t)v.n, -5);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("mysql_msg");
	TCase *tc = tcase_create("decode");
	size_t nv = sizeof(valid) / sizeof(valid[0]);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_valid, 0, (int)nv);
	tcase_add_test(tc, test_fields);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_bad_sanity);
	tcase_add_loop_test(tc, test_prefixes, 0, (int)nv);
	tcase_add_loop_test(tc, test_mutations, 0, (int)nv);
	suite_add_tcase(s, tc);
	tc = tcase_create("db");
	tcase_add_test(tc, test_schema_split);
	tcase_add_loop_test(tc, test_verdict, 0, (int)(sizeof(verdicts) / sizeof(verdicts[0])));
	tcase_add_test(tc, test_verdict_decode);
	tcase_add_loop_test(tc, test_stmt_table, 0, MW_S_N);
	tcase_add_test(tc, test_stmt_run_rows);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
