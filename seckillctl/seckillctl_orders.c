/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's order commands: order show ID, order pay ID, order refund ID
 * (GET /v1/orders/{id}, POST /v1/orders/{id}/pay, POST /v1/orders/{id}/refund)
 * and orders (GET /v1/orders?item=...).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <jansson.h>

#include "seckillctl.h"
#include "seckillctl_client.h"
#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"

int
cmd_order_show(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/orders/", id, "", "order");
	json_t *j;
	int ex = api(c, "GET", t.path, NULL, t.what, answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	printf("%-11s %s\n", "order", jstr(j, "order"));
	if (!json_is_true(json_object_get(j, "in_store"))) {
		printf("%-11s %s (not in the store)\n", "status", jstr(j, "status"));
		json_decref(j);
		return EX_OK;
	}
	printf("%-11s %s (arena: %s)\n", "status", jstr(j, "status"), jstr(j, "arena_status"));
	if (json_is_true(json_object_get(j, "archived")))
		printf("%-11s %s\n", "archived", "yes (answered from the activity's archive)");
	printf("%-11s %s\n", "user", jstr(j, "user"));
	printf("%-11s %lld", "units", jnum(j, "units"));
	if (jnum(j, "refunded_units") > 0)
		printf(" (%lld refunded%s)", jnum(j, "refunded_units"),
		       json_is_true(json_object_get(j, "partially_refunded")) ? ": partially" : "");
	printf("\n");
	printf("%-11s %s\n", "client ip", jstr(j, "client_ip"));
	print_time("sold at", jnum(j, "time_ns"));
	print_time("stored at", jnum(j, "stored_ns"));
	print_time("updated at", jnum(j, "updated_ns"));
	print_time("deadline", jnum(j, "deadline_ns"));
	printf("lines:\n  %-5s %-10s %-6s %-12s %-9s %s\n", "LINE", "ITEM", "QTY", "PRICE",
	       "RETURNED", "REFUNDED");
	size_t i;
	json_t *l;
	json_array_foreach(json_object_get(j, "lines"), i, l) printf(
		"  %-5lld %-10lld %-6lld %-12lld %-9lld %lld\n", jnum(l, "line"), jnum(l, "item"),
		jnum(l, "qty"), jnum(l, "price"), jnum(l, "returned"), jnum(l, "refunded"));
	json_decref(j);
	return EX_OK;
}

int
cmd_order_pay(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	const char *id = args[0];
	struct target t = target_of("/v1/orders/", id, "/pay", "order");
	json_t *j;
	int ex = api(c, "POST", t.path, NULL, t.what, c->json ? BODY_PRINT_ALL : BODY_PARSE, &j);

	if (ex != EX_OK || c->json)
		return ex;
	printf("order %s: paid%s\n", id,
	       json_is_true(json_object_get(j, "already")) ? " (already)" : "");
	json_decref(j);
	return EX_OK;
}

int
cmd_order_refund(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *id = args[0], *units_s = c->opt[O_UNITS], *item_s = c->opt[O_ITEM];
	char req[80];
	uint32_t units = 0, item = 0;
	uint64_t rnd;
	json_t *j;

	if (units_s != NULL && !sk_parse_u32(units_s, 1, UINT32_MAX, &units))
		return usage_error(cmd->help, "--units: '%s' is not 1..2^32-1", units_s);
	if (item_s != NULL && !sk_parse_u32(item_s, 1, UINT32_MAX, &item))
		return usage_error(cmd->help, "--item: '%s' is not an item id", item_s);
	if (c->opt[O_REQUEST] != NULL) {
		snprintf(req, sizeof(req), "%s", c->opt[O_REQUEST]);
	} else {
		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			sk_log(PROG, "no random request id: %s", strerror(errno));
			return EX_ERR;
		}
		snprintf(req, sizeof(req), "ctl-%016" PRIx64, rnd);
	}
	json_t *body = json_pack("{s:s}", "request", req);
	if (body != NULL && units != 0)
		json_object_set_new(body, "units", json_integer(units));
	if (body != NULL && item != 0)
		json_object_set_new(body, "item", json_integer(item));
	struct target t = target_of("/v1/orders/", id, "/refund", "order");
	int ex = api(c, "POST", t.path, body, t.what, c->json ? BODY_PRINT_ALL : BODY_PARSE, &j);
	if (ex == EX_UNREACHABLE || (ex == EX_ERR && c->opt[O_REQUEST] == NULL))
		sk_log(PROG,
		       "the refund may or may not have been applied: rerun with --request %s to "
		       "apply it exactly once",
		       req);
	if (ex != EX_OK || c->json)
		return ex;
	printf("order %s: %lld units refunded%s, now %s (request %s)\n", id, jnum(j, "units"),
	       json_is_true(json_object_get(j, "duplicate")) ? " (before)" : "", jstr(j, "status"),
	       req);
	json_decref(j);
	return EX_OK;
}

/* print_order_row - one line of orders: the order object @o. */
static void
print_order_row(const json_t *o)
{
	char sold[32] = "-", lines[64] = "", *p = lines;
	long long ns = jnum(o, "time_ns");
	const json_t *l;
	size_t i;

	if (ns > 0) {
		time_t t = (time_t)(ns / 1000000000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(sold, sizeof(sold), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	json_array_foreach(json_object_get(o, "lines"), i, l)
	{
		size_t left = sizeof(lines) - (size_t)(p - lines);
		int n = snprintf(p, left, "%s%lldx%lld", i ? "," : "", jnum(l, "item"),
				 jnum(l, "qty"));
		if (n < 0 || (size_t)n >= left)
			break;
		p += n;
	}
	printf("%-20s %-20s %-10s %-6lld %-8lld %-20s %s\n", jstr(o, "order"), jstr(o, "user"),
	       jstr(o, "status"), jnum(o, "units"), jnum(o, "refunded_units"), sold, lines);
}

int
cmd_orders(const struct ctl *c, const struct ctl_cmd *cmd, char **args CTL_UNUSED)
{
	const char *const *o = c->opt;
	static const char *const states[] = {"confirmed", "paid", "cancelled", "refunded"};
	char path[256];
	uint64_t limit;
	json_t *j, *it;
	size_t i;
	bool state_ok = o[O_STATE] == NULL;

	if (o[O_ITEM] == NULL)
		return usage_error(cmd->help, "orders: --item is required");
	if (!sk_parse_id(o[O_ITEM], UINT32_MAX, NULL))
		return usage_error(cmd->help, "--item: '%s' is not an item id 1..4294967295",
				   o[O_ITEM]);
	if (o[O_USER] == NULL && o[O_STATE] == NULL)
		return usage_error(cmd->help, "orders: give --user or --state (or both)");
	if (o[O_USER] != NULL && !sk_parse_id(o[O_USER], UINT64_MAX, NULL))
		return usage_error(cmd->help, "--user: '%s' is not a user id 1..2^64-1", o[O_USER]);
	for (size_t k = 0; !state_ok && k < SK_ARRAY_SIZE(states); k++)
		state_ok = strcmp(o[O_STATE], states[k]) == 0;
	if (!state_ok)
		return usage_error(
			cmd->help,
			"--state: '%s' is not one of confirmed, paid, cancelled, refunded",
			o[O_STATE]);
	if (o[O_LIMIT] != NULL &&
	    (o[O_LIMIT][0] == '0' || !sk_parse_u64(o[O_LIMIT], 1, 1000, &limit)))
		return usage_error(cmd->help, "--limit: '%s' is not 1..1000", o[O_LIMIT]);
	if (o[O_AFTER] != NULL && !sk_parse_id(o[O_AFTER], UINT64_MAX, NULL))
		return usage_error(cmd->help, "--after: '%s' is not an order id", o[O_AFTER]);

	/* Every value is digits or a state name: nothing to escape. */
	snprintf(path, sizeof(path), "/v1/orders?item=%s%s%s%s%s%s%s%s%s", o[O_ITEM],
		 o[O_USER] != NULL ? "&user=" : "", o[O_USER] != NULL ? o[O_USER] : "",
		 o[O_STATE] != NULL ? "&state=" : "", o[O_STATE] != NULL ? o[O_STATE] : "",
		 o[O_LIMIT] != NULL ? "&limit=" : "", o[O_LIMIT] != NULL ? o[O_LIMIT] : "",
		 o[O_AFTER] != NULL ? "&after=" : "", o[O_AFTER] != NULL ? o[O_AFTER] : "");
	int ex = api(c, "GET", path, NULL, "orders", answer_use(c), &j);
	if (ex != EX_OK || c->json)
		return ex;
	printf("%-20s %-20s %-10s %-6s %-8s %-20s %s\n", "ORDER", "USER", "STATE", "UNITS",
	       "REFUNDED", "SOLD", "LINES (ITEMxQTY)");
	json_array_foreach(json_object_get(j, "orders"), i, it) print_order_row(it);
	if (json_is_true(
		    json_object_get(json_array_get(json_object_get(j, "orders"), 0), "archived")))
		printf("(the activity is archived: answered from its archive)\n");
	if (json_is_true(json_object_get(j, "more")))
		printf("%lld orders; more: rerun with --after %s\n", jnum(j, "count"),
		       jstr(j, "next"));
	else
		printf("%lld orders\n", jnum(j, "count"));
	json_decref(j);
	return EX_OK;
}
