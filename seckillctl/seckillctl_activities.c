/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's activity commands: activity add/list/show/close/pause/
 * resume/extend and stock add/remove (POST /v1/activities, GET
 * /v1/activities[/{id}], POST /v1/activities/{id}/close, /pause, /resume,
 * /extend, /restock and /remove).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <jansson.h>

#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"
#include "seckillctl.h"
#include "seckillctl_client.h"

/*
 * time_arg - a TIME of the command line (sk_parse_time: now, +N[smhd], unix
 * seconds, YYYY-MM-DDTHH:MM:SSZ; "never" with SK_TIME_NEVER_OK, INT64_MAX)
 * as ns since the epoch, relative ones from @now_ns.
 */
static bool
time_arg(const char *s, int64_t now_ns, unsigned flags, int64_t *out)
{
	struct sk_time t;

	if (!sk_parse_time(s, flags, &t))
		return false;
	*out = sk_time_resolve_ns(&t, now_ns);
	return true;
}

/* result_word - "created", "closed", ... for the "result" of an answer. */
static const char *
result_word(const json_t *j, const char *done)
{
	return strcmp(jstr(j, "result"), "done") == 0 ? done : "unchanged (done before)";
}

int
cmd_activity_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *const *o = c->opt, *id_s = args[0];
	int64_t now = sk_clock_ns(CLOCK_REALTIME), start = now, end = INT64_MAX;
	uint64_t id, total = 0, price = 0, limit = 1, pay = 0;
	json_t *j;

	if (!sk_parse_u64(id_s, 1, UINT32_MAX, &id))
		return usage_error(cmd->help, "activity add: bad item ID '%s'", id_s);
	if ((o[O_TOTAL] == NULL) == (o[O_TOTAL_FROM] == NULL))
		return usage_error(cmd->help, "activity add: give --total N or --total-from KEY");
	if (o[O_TOTAL] != NULL && !sk_parse_u64(o[O_TOTAL], 1, UINT64_C(1) << 48, &total))
		return usage_error(cmd->help, "--total: '%s' is not 1..2^48", o[O_TOTAL]);
	if (o[O_TOTAL_FROM] != NULL &&
	    (o[O_TOTAL_FROM][0] == '\0' || strlen(o[O_TOTAL_FROM]) > 256))
		return usage_error(cmd->help, "--total-from: a Redis key of 1..256 bytes");
	if (o[O_PRICE] != NULL && !sk_parse_u64(o[O_PRICE], 0, INT64_MAX, &price))
		return usage_error(cmd->help, "--price: '%s' is not a number of minor units",
				   o[O_PRICE]);
	if (o[O_LIMIT] != NULL && !sk_parse_u64(o[O_LIMIT], 1, 1000, &limit))
		return usage_error(cmd->help, "--limit: '%s' is not 1..1000", o[O_LIMIT]);
	if (o[O_PAY_TIMEOUT] != NULL &&
	    !sk_parse_u64(o[O_PAY_TIMEOUT], 0, INT64_MAX / 1000000000, &pay))
		return usage_error(cmd->help, "--pay-timeout: '%s' is not a number of seconds",
				   o[O_PAY_TIMEOUT]);
	if (o[O_START] != NULL && !time_arg(o[O_START], now, 0, &start))
		return usage_error(cmd->help, "--start: '%s' is not a TIME", o[O_START]);
	if (o[O_END] != NULL && !time_arg(o[O_END], now, SK_TIME_NEVER_OK, &end))
		return usage_error(cmd->help, "--end: '%s' is not a TIME", o[O_END]);
	if (end <= start)
		return usage_error(cmd->help, "--end: must be after --start");
	if (o[O_NAME] != NULL && strlen(o[O_NAME]) > 64)
		return usage_error(cmd->help, "--name: at most 64 bytes");

	json_t *body =
		json_pack("{s:I,s:I,s:I,s:I,s:s}", "item", (json_int_t)id, "price",
			  (json_int_t)price, "per_user_limit", (json_int_t)limit, "pay_timeout_ns",
			  (json_int_t)pay * 1000000000, "name", o[O_NAME] != NULL ? o[O_NAME] : "");
	if (body != NULL)
		json_object_set_new(body, o[O_TOTAL] != NULL ? "total" : "total_from",
				    o[O_TOTAL] != NULL ? json_integer((json_int_t)total)
						       : json_string(o[O_TOTAL_FROM]));
	/* Without --start the daemon opens the sale now, or keeps the start of
	 * the activity if it exists: a rerun is then the same definition. */
	if (body != NULL && o[O_START] != NULL)
		json_object_set_new(body, "start_ns", json_integer(start));
	if (body != NULL && end != INT64_MAX)
		json_object_set_new(body, "end_ns", json_integer(end));
	if (body != NULL && o[O_CLUSTER] != NULL)
		json_object_set_new(body, "cluster", json_true());
	if (body != NULL && o[O_GATE] != NULL)
		json_object_set_new(body, "gate", json_true());
	if (body != NULL && o[O_RESERVED] != NULL)
		json_object_set_new(body, "reserved_only", json_true());
	char what[64];
	snprintf(what, sizeof(what), "activity %s", id_s);
	int ex = api(c, "POST", "/v1/activities", body, what, answer_use(c), &j);
	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id_s, result_word(j, "created, on sale"));
	print_item(j);
	json_decref(j);
	return EX_OK;
}

/* print_activity_row - one line of activity list: the activity object @it. */
static void
print_activity_row(const json_t *it)
{
	const json_t *a = json_object_get(it, "activity"), *l = json_object_get(it, "ledger");
	bool arena = json_is_true(json_object_get(it, "in_arena"));
	const char *state = json_is_true(json_object_get(a, "closed"))	    ? "closed"
			    : !arena					    ? "stored"
			    : json_is_true(json_object_get(a, "paused"))    ? "paused"
			    : json_is_true(json_object_get(it, "sold_out")) ? "soldout"
									    : "on_sale";
	char rem[24] = "-", starts[32];
	time_t t = (time_t)(jnum(a, "start_ns") / 1000000000);
	struct tm tm;

	if (arena)
		snprintf(rem, sizeof(rem), "%lld", jnum(it, "remaining"));
	gmtime_r(&t, &tm);
	strftime(starts, sizeof(starts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%-8lld %-20.20s %-7s %-10lld %-8lld %-10s %-10lld %-10lld %-10lld %s\n",
	       jnum(it, "item"), jstr(a, "name")[0] ? jstr(a, "name") : "-", state,
	       jnum(a, "total"), jnum(a, "added"), rem, jnum(a, "price"), jnum(l, "live"),
	       jnum(l, "paid"), starts);
}

int
cmd_activity_list(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	/* The columns of print_activity_row(). */
	return show_list(c, "/v1/activities", "activities",
			 "ITEM     NAME                 STATE   TOTAL      ADDED    REMAINING  "
			 "PRICE      LMDB_LIVE  LMDB_PAID  STARTS\n",
			 print_activity_row);
}

int
cmd_activity_show(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	return show_one(c, "/v1/activities/", "activity", args[0]);
}

/*
 * activity_post - POST /v1/activities/@id@suffix without a body. EX_OK with
 * the answer in *j for the caller to print and free; any other exit status,
 * or EX_OK with --json (printed already), leaves *j NULL.
 */
static int
activity_post(const struct ctl *c, const char *id, const char *suffix, json_t **j)
{
	struct target t = target_of("/v1/activities/", id, suffix, "activity");
	int ex = api(c, "POST", t.path, NULL, t.what, answer_use(c), j);

	if (ex != EX_OK || c->json)
		*j = NULL;
	return ex;
}

int
cmd_activity_close(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	json_t *j;
	int ex = activity_post(c, args[0], "/close", &j);

	if (j == NULL)
		return ex;
	printf("activity %s: %s\n", args[0], result_word(j, "closed"));
	json_decref(j);
	return EX_OK;
}

int
cmd_activity_archive(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	json_t *j;
	int ex = activity_post(c, args[0], "/archive", &j);

	if (j == NULL)
		return ex;
	printf("activity %s: archived, %lld orders (they leave the store in slices)\n", args[0],
	       jnum(json_object_get(j, "archive"), "orders"));
	json_decref(j);
	return EX_OK;
}

int
cmd_activity_pause(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0];
	bool pause = strcmp(cmd->sub, "pause") == 0;
	struct target t =
		target_of("/v1/activities/", id, pause ? "/pause" : "/resume", "activity");
	json_t *j;
	int ex = api(c, "POST", t.path, NULL, t.what, answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id,
	       result_word(j, pause ? "paused: buys are answered 503 \"paused\""
				    : "resumed: selling again"));
	json_decref(j);
	return EX_OK;
}

int
cmd_activity_extend(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *end_s = c->opt[O_END];
	int64_t end;
	json_t *j;

	if (end_s == NULL)
		return usage_error(cmd->help, "activity extend: --end is required");
	if (!time_arg(end_s, sk_clock_ns(CLOCK_REALTIME), SK_TIME_NEVER_OK, &end) || end <= 0)
		return usage_error(cmd->help, "--end: '%s' is not a TIME", end_s);
	struct target t = target_of("/v1/activities/", id, "/extend", "activity");
	json_t *body = json_object();
	if (body != NULL)
		json_object_set_new(body, "end_ns",
				    end == INT64_MAX ? json_null() : json_integer(end));
	int ex = api(c, "POST", t.path, body, t.what, answer_use(c), &j);
	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id, result_word(j, "extended"));
	if (end == INT64_MAX)
		printf("%-11s never\n", "ends");
	else
		print_time("ends", end);
	json_decref(j);
	return EX_OK;
}

/*
 * stock_request_id - the --request-id of a stock change, or a random one
 * (printed when the answer is lost); EX_OK, or an exit code on bad input.
 */
static int
stock_request_id(const struct ctl *c, const struct ctl_cmd *cmd, uint64_t *rid)
{
	if (c->opt[O_REQUEST_ID] != NULL) {
		if (!sk_parse_u64(c->opt[O_REQUEST_ID], 1, INT64_MAX, rid))
			return usage_error(cmd->help, "--request-id: '%s' is not 1..2^63-1",
					   c->opt[O_REQUEST_ID]);
		return EX_OK;
	}
	do {
		if (getrandom(rid, sizeof(*rid), 0) != (ssize_t)sizeof(*rid)) {
			sk_log(PROG, "no random request id: %s", strerror(errno));
			return EX_ERR;
		}
		*rid &= INT64_MAX; /* JSON integers are signed */
	} while (*rid == 0);
	return EX_OK;
}

/* stock_lost - after a call whose answer may be lost: how to apply it once. */
static void
stock_lost(const struct ctl *c, int ex, const char *what, uint64_t rid)
{
	if (ex == EX_UNREACHABLE || (ex == EX_ERR && c->opt[O_REQUEST_ID] == NULL))
		sk_log(PROG,
		       "the %s may or may not have been applied: rerun with --request-id "
		       "%" PRIu64 " to apply it exactly once",
		       what, rid);
}

int
cmd_stock_remove(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *units_s = args[1];
	uint64_t units, rid;
	json_t *j;
	int ex;

	if (!sk_parse_u64(units_s, 1, UINT64_C(1) << 48, &units))
		return usage_error(cmd->help, "stock remove: UNITS '%s' is not 1..2^48", units_s);
	ex = stock_request_id(c, cmd, &rid);
	if (ex != EX_OK)
		return ex;
	struct target t = target_of("/v1/activities/", id, "/remove", "stock remove");
	ex = api(c, "POST", t.path,
		 json_pack("{s:I,s:I}", "units", (json_int_t)units, "request_id", (json_int_t)rid),
		 t.what, c->json ? BODY_PRINT_ALL : BODY_PARSE, &j);
	stock_lost(c, ex, "removal", rid);
	if (ex != EX_OK || c->json)
		return ex;
	const json_t *a = json_object_get(j, "activity");
	printf("item %s: %s, %" PRIu64 " units (request id %" PRIu64
	       "); now total %lld + added %lld - removed %lld",
	       id, result_word(j, "removed"), units, rid, jnum(a, "total"), jnum(a, "added"),
	       jnum(a, "removed"));
	if (json_is_true(json_object_get(j, "in_arena")))
		printf(", remaining %lld\n", jnum(j, "remaining"));
	else
		printf(" (not on sale in the dataplane)\n");
	json_decref(j);
	return EX_OK;
}

int
cmd_stock_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *units_s = args[1];
	uint64_t units, rid;
	json_t *j;

	if (!sk_parse_u64(units_s, 1, UINT64_C(1) << 48, &units))
		return usage_error(cmd->help, "stock add: UNITS '%s' is not 1..2^48", units_s);
	int ex = stock_request_id(c, cmd, &rid);
	if (ex != EX_OK)
		return ex;
	struct target t = target_of("/v1/activities/", id, "/restock", "stock add");
	ex = api(c, "POST", t.path,
		 json_pack("{s:I,s:I}", "units", (json_int_t)units, "restock_id", (json_int_t)rid),
		 t.what, answer_use(c), &j);
	stock_lost(c, ex, "restock", rid);
	if (ex != EX_OK || c->json)
		return ex;
	const json_t *a = json_object_get(j, "activity");
	printf("item %s: %s, %" PRIu64 " units (request id %" PRIu64
	       "); now total %lld + added %lld",
	       id, result_word(j, "restocked"), units, rid, jnum(a, "total"), jnum(a, "added"));
	if (json_is_true(json_object_get(j, "in_arena")))
		printf(", remaining %lld\n", jnum(j, "remaining"));
	else
		printf(" (not on sale in the dataplane: closed or ended)\n");
	json_decref(j);
	return EX_OK;
}

/* ------------------------------------------------------ activity reserve */

/* The largest batch sent: below the admin API's body limit (16384 bytes,
 * SK_ADMIN_BODY_MAX of control/admin/sk_admin.h). */
#define RESERVE_BATCH 16000

/* The ids of a file, one "ID\n" after another, checked. */
struct id_text {
	char *buf;
	size_t len, cap, ids;
};

/* read_ids - every line of @f into @t; EX_OK, EX_USAGE naming the first
 * bad line of @name, or EX_ERR (no memory, read error). */
static int
read_ids(FILE *f, const char *name, struct id_text *t)
{
	char *line = NULL;
	size_t cap = 0, no = 0;
	ssize_t n;
	int ex = EX_OK;

	while ((n = getline(&line, &cap, f)) > 0) {
		uint64_t v;

		no++;
		if (line[n - 1] == '\n')
			n--;
		if (n != 0 && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		if (n != 0 && !sk_parse_u64(line, 1, UINT64_MAX, &v)) {
			sk_log(PROG,
			       "%s:%zu: not a user id (decimal 1..18446744073709551615); "
			       "nothing sent",
			       name, no);
			ex = EX_USAGE;
			break;
		}
		if (n == 0) /* an empty line */
			continue;
		if (t->len + (size_t)n + 2 > t->cap) {
			size_t nc = t->cap != 0 ? t->cap * 2 : 1 << 16;
			char *nb = realloc(t->buf, nc);
			if (nb == NULL) {
				sk_log(PROG, "out of memory");
				ex = EX_ERR;
				break;
			}
			t->buf = nb;
			t->cap = nc;
		}
		memcpy(t->buf + t->len, line, (size_t)n);
		t->len += (size_t)n;
		t->buf[t->len++] = '\n';
		t->ids++;
	}
	if (ex == EX_OK && ferror(f)) {
		sk_log(PROG, "%s: %s", name, strerror(errno));
		ex = EX_ERR;
	}
	free(line);
	return ex;
}

/* send_batches - POST @t in batches cut at line ends; the ids added in
 * *@added, the last answer in *@last (NULL on failure). */
static int
send_batches(const struct ctl *c, const char *id, struct id_text *t, uint64_t *added, json_t **last)
{
	struct target tg = target_of("/v1/activities/", id, "/reservations", "activity");
	size_t at = 0;
	int ex = EX_OK;

	*added = 0;
	*last = NULL;
	while (at < t->len && ex == EX_OK) {
		size_t end = at + RESERVE_BATCH < t->len ? at + RESERVE_BATCH : t->len;
		while (end < t->len && t->buf[end - 1] != '\n')
			end--;
		/* NUL-ended in place: the next batch's first byte, kept aside
		 * (the last batch ends on its last newline). */
		bool tail = end == t->len;
		size_t cut = tail ? t->len - 1 : end;
		char keep = t->buf[cut];
		t->buf[cut] = '\0';
		json_decref(*last);
		ex = api_text(c, tg.path, t->buf + at, tg.what, BODY_PARSE, last);
		t->buf[cut] = keep;
		if (ex == EX_OK)
			*added += (uint64_t)jnum(*last, "added");
		at = end;
	}
	if (ex != EX_OK && *added != 0)
		sk_log(PROG, "activity %s: %" PRIu64 " ids were added before the failure", id,
		       *added);
	return ex;
}

int
cmd_activity_reserve(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	bool std = strcmp(args[1], "-") == 0;
	FILE *f = std ? stdin : fopen(args[1], "r");
	struct id_text t = {0};
	uint64_t added = 0;
	json_t *last = NULL;
	int ex;

	if (f == NULL) {
		sk_log(PROG, "%s: %s", args[1], strerror(errno));
		return EX_USAGE;
	}
	ex = read_ids(f, std ? "stdin" : args[1], &t);
	if (!std)
		fclose(f);
	if (ex == EX_OK && t.ids == 0) {
		/* Nothing to add: the set's total as it is. */
		struct target tg =
			target_of("/v1/activities/", args[0], "/reservations", "activity");
		ex = api(c, "GET", tg.path, NULL, tg.what, BODY_PARSE, &last);
	} else if (ex == EX_OK) {
		ex = send_batches(c, args[0], &t, &added, &last);
	}
	free(t.buf);
	if (ex == EX_OK && c->json) {
		json_object_set_new(last, "added", json_integer((json_int_t)added));
		char *s = json_dumps(last, JSON_COMPACT);
		if (s != NULL)
			printf("%s\n", s);
		free(s);
	} else if (ex == EX_OK) {
		printf("activity %s: %" PRIu64 " added, %lld reserved\n", args[0], added,
		       jnum(last, "reserved"));
	}
	json_decref(last);
	return ex;
}
