/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's activity commands: activity add/list/show/close and stock
 * add (POST /v1/activities, GET /v1/activities[/{id}],
 * POST /v1/activities/{id}/close and /restock).
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
#include "seckillctl.h"
#include "seckillctl_client.h"

/* parse_u64 - decimal @s in [lo, hi]. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * parse_time - a TIME of the command line as ns since the epoch: "now",
 * "+N[smhd]", unix seconds, or "YYYY-MM-DDTHH:MM:SSZ"; "never" when
 * @never_ok (INT64_MAX).
 */
static bool
parse_time(const char *s, int64_t now_ns, bool never_ok, int64_t *out)
{
	const int64_t S = 1000000000;
	uint64_t v;

	if (strcmp(s, "now") == 0) {
		*out = now_ns;
		return true;
	}
	if (never_ok && strcmp(s, "never") == 0) {
		*out = INT64_MAX;
		return true;
	}
	if (s[0] == '+') {
		char num[24];
		size_t n = strlen(s + 1);
		int64_t unit = S;

		if (n == 0 || n >= sizeof(num))
			return false;
		memcpy(num, s + 1, n + 1);
		switch (num[n - 1]) {
		case 'd':
			unit *= 24;
			/* fall through */
		case 'h':
			unit *= 60;
			/* fall through */
		case 'm':
			unit *= 60;
			/* fall through */
		case 's':
			num[n - 1] = '\0';
			break;
		default:
			break;
		}
		if (!parse_u64(num, 0, (uint64_t)(INT64_MAX - now_ns) / (uint64_t)unit, &v))
			return false;
		*out = now_ns + (int64_t)v * unit;
		return true;
	}
	if (parse_u64(s, 0, (uint64_t)(INT64_MAX / S) - 1, &v)) {
		*out = (int64_t)v * S;
		return true;
	}
	struct tm tm = {0};
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end == NULL || *end != '\0')
		return false;
	time_t t = timegm(&tm);
	if (t < 0)
		return false;
	*out = (int64_t)t * S;
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
	uint64_t id, total, price = 0, limit = 1, pay = 0;
	json_t *j;

	if (!parse_u64(id_s, 1, UINT32_MAX, &id))
		return usage_error(cmd->help, "activity add: bad item ID '%s'", id_s);
	if (o[O_TOTAL] == NULL)
		return usage_error(cmd->help, "activity add: --total is required");
	if (!parse_u64(o[O_TOTAL], 1, UINT64_C(1) << 48, &total))
		return usage_error(cmd->help, "--total: '%s' is not 1..2^48", o[O_TOTAL]);
	if (o[O_PRICE] != NULL && !parse_u64(o[O_PRICE], 0, INT64_MAX, &price))
		return usage_error(cmd->help, "--price: '%s' is not a number of minor units",
				   o[O_PRICE]);
	if (o[O_LIMIT] != NULL && !parse_u64(o[O_LIMIT], 1, 1000, &limit))
		return usage_error(cmd->help, "--limit: '%s' is not 1..1000", o[O_LIMIT]);
	if (o[O_PAY_TIMEOUT] != NULL &&
	    !parse_u64(o[O_PAY_TIMEOUT], 0, INT64_MAX / 1000000000, &pay))
		return usage_error(cmd->help, "--pay-timeout: '%s' is not a number of seconds",
				   o[O_PAY_TIMEOUT]);
	if (o[O_START] != NULL && !parse_time(o[O_START], now, false, &start))
		return usage_error(cmd->help, "--start: '%s' is not a TIME", o[O_START]);
	if (o[O_END] != NULL && !parse_time(o[O_END], now, true, &end))
		return usage_error(cmd->help, "--end: '%s' is not a TIME", o[O_END]);
	if (end <= start)
		return usage_error(cmd->help, "--end: must be after --start");
	if (o[O_NAME] != NULL && strlen(o[O_NAME]) > 64)
		return usage_error(cmd->help, "--name: at most 64 bytes");

	json_t *body = json_pack("{s:I,s:I,s:I,s:I,s:I,s:s}", "item", (json_int_t)id, "total",
				 (json_int_t)total, "price", (json_int_t)price, "per_user_limit",
				 (json_int_t)limit, "pay_timeout_ns", (json_int_t)pay * 1000000000,
				 "name", o[O_NAME] != NULL ? o[O_NAME] : "");
	/* Without --start the daemon opens the sale now, or keeps the start of
	 * the activity if it exists: a rerun is then the same definition. */
	if (body != NULL && o[O_START] != NULL)
		json_object_set_new(body, "start_ns", json_integer(start));
	if (body != NULL && end != INT64_MAX)
		json_object_set_new(body, "end_ns", json_integer(end));
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

int
cmd_activity_list(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	json_t *j, *it;
	size_t i;
	int ex = api(c, "GET", "/v1/activities", NULL, "activities", answer_use(c), &j);

	(void)cmd, (void)args;
	if (ex != EX_OK || c->json)
		return ex;
	printf("%-8s %-20s %-7s %-10s %-8s %-10s %-10s %-10s %-10s %s\n", "ITEM", "NAME", "STATE",
	       "TOTAL", "ADDED", "REMAINING", "PRICE", "LMDB_LIVE", "LMDB_PAID", "STARTS");
	json_array_foreach(json_object_get(j, "activities"), i, it)
	{
		const json_t *a = json_object_get(it, "activity"),
			     *l = json_object_get(it, "ledger");
		bool arena = json_is_true(json_object_get(it, "in_arena"));
		const char *state = json_is_true(json_object_get(a, "closed"))	    ? "closed"
				    : !arena					    ? "stored"
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
	json_decref(j);
	return EX_OK;
}

int
cmd_activity_show(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	(void)cmd;
	return show_one(c, "/v1/activities/", "activity", args[0]);
}

int
cmd_activity_close(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/activities/", id, "/close", "activity");
	json_t *j;
	int ex = api(c, "POST", t.path, NULL, t.what, answer_use(c), &j);

	(void)cmd;
	if (ex != EX_OK || c->json)
		return ex;
	printf("activity %s: %s\n", id, result_word(j, "closed"));
	json_decref(j);
	return EX_OK;
}

int
cmd_stock_add(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *units_s = args[1];
	uint64_t units, rid;
	json_t *j;

	if (!parse_u64(units_s, 1, UINT64_C(1) << 48, &units))
		return usage_error(cmd->help, "stock add: UNITS '%s' is not 1..2^48", units_s);
	if (c->opt[O_REQUEST_ID] != NULL) {
		if (!parse_u64(c->opt[O_REQUEST_ID], 1, INT64_MAX, &rid))
			return usage_error(cmd->help, "--request-id: '%s' is not 1..2^63-1",
					   c->opt[O_REQUEST_ID]);
	} else {
		do {
			if (getrandom(&rid, sizeof(rid), 0) != (ssize_t)sizeof(rid)) {
				sk_log(PROG, "no random request id: %s", strerror(errno));
				return EX_ERR;
			}
			rid &= INT64_MAX; /* JSON integers are signed */
		} while (rid == 0);
	}
	struct target t = target_of("/v1/activities/", id, "/restock", "stock add");
	int ex = api(
		c, "POST", t.path,
		json_pack("{s:I,s:I}", "units", (json_int_t)units, "restock_id", (json_int_t)rid),
		t.what, answer_use(c), &j);
	if (ex == EX_UNREACHABLE || (ex == EX_ERR && c->opt[O_REQUEST_ID] == NULL))
		sk_log(PROG,
		       "the restock may or may not have been applied: rerun with --request-id "
		       "%" PRIu64 " to apply it exactly once",
		       rid);
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
