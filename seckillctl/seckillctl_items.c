/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's item commands: items, item ID (GET /v1/items[/{id}]), and
 * how an item object of the API is printed (also by the activity commands).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "seckillctl.h"
#include "seckillctl_client.h"

static void
print_item_row(const json_t *it)
{
	const json_t *l = json_object_get(it, "ledger");

	if (!json_is_true(json_object_get(it, "in_arena"))) {
		printf("%-8lld %-8s %-8s %-10s %-8s %-10s %-10s %-9s %-10lld %lld\n",
		       jnum(it, "item"), "store", "-", "-", "-", "-", "-", "-", jnum(l, "live"),
		       jnum(l, "paid"));
		return;
	}
	printf("%-8lld %-8s %-8s %-10lld %-8lld %-10lld %-10lld %-9lld %-10lld %lld\n",
	       jnum(it, "item"), jstr(it, "state"),
	       json_is_true(json_object_get(it, "sold_out")) ? "yes" : "no", jnum(it, "total"),
	       jnum(it, "added"), jnum(it, "remaining"), jnum(it, "sold"), jnum(it, "returned"),
	       jnum(l, "live"), jnum(l, "paid"));
}

int
show_list(const struct ctl *c, const char *path, const char *key, const char *header,
	  void (*row)(const json_t *it))
{
	json_t *j, *it;
	size_t i;
	int ex = api(c, "GET", path, NULL, key, answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	fputs(header, stdout);
	json_array_foreach(json_object_get(j, key), i, it) row(it);
	json_decref(j);
	return EX_OK;
}

int
cmd_items(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	/* The columns of print_item_row(). */
	return show_list(c, "/v1/items", "items",
			 "ITEM     STATE    SOLD_OUT TOTAL      ADDED    REMAINING  SOLD       "
			 "RETURNED  LMDB_LIVE  LMDB_PAID\n",
			 print_item_row);
}

/* print_item - one item object of the API (GET /v1/items/ID, /v1/activities/ID). */
void
print_item(const json_t *j)
{
	printf("%-16s %lld\n", "item", jnum(j, "item"));
	if (json_is_true(json_object_get(j, "in_arena"))) {
		static const char *const keys[] = {"total",	"added",	 "removed",
						   "remaining", "sold",		 "returned",
						   "price",	"per_user_limit"};
		printf("%-16s %s\n", "state", jstr(j, "state"));
		printf("%-16s %s\n", "sold out",
		       json_is_true(json_object_get(j, "sold_out")) ? "yes" : "no");
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			printf("%-16s %lld\n", keys[k], jnum(j, keys[k]));
		print_time("starts", jnum(j, "start_ns"));
		if (jnum(j, "end_ns") != INT64_MAX)
			print_time("ends", jnum(j, "end_ns"));
	} else {
		printf("%-16s %s\n", "state", "not in the arena (store only)");
	}
	const json_t *a = json_object_get(j, "activity");
	if (json_is_object(a)) {
		printf("activity         \"%s\" total %lld added %lld removed %lld limit %lld%s\n",
		       jstr(a, "name"), jnum(a, "total"), jnum(a, "added"), jnum(a, "removed"),
		       jnum(a, "per_user_limit"),
		       json_is_true(json_object_get(a, "closed"))   ? " (closed)"
		       : json_is_true(json_object_get(a, "paused")) ? " (paused)"
								    : "");
		if (json_is_true(json_object_get(a, "gate")) ||
		    json_is_true(json_object_get(a, "reserved_only")))
			printf("%-16s %s%s\n", "buyers",
			       json_is_true(json_object_get(a, "gate")) ? "gate claim required "
									: "",
			       json_is_true(json_object_get(a, "reserved_only")) ? "reserved only"
										 : "");
		if (json_is_integer(json_object_get(j, "reserved")) &&
		    (json_is_true(json_object_get(a, "reserved_only")) || jnum(j, "reserved") > 0))
			printf("%-16s %lld users\n", "reserved", jnum(j, "reserved"));
		if (jnum(a, "pay_timeout_ns") > 0)
			printf("%-16s %lld s\n", "pay timeout",
			       jnum(a, "pay_timeout_ns") / 1000000000);
	}
	const json_t *l = json_object_get(j, "ledger");
	printf("ledger           sold %lld returned %lld live %lld paid %lld lines %lld\n",
	       jnum(l, "sold"), jnum(l, "returned"), jnum(l, "live"), jnum(l, "paid"),
	       jnum(l, "lines"));
	const json_t *ar = json_object_get(j, "archive");
	if (json_is_object(ar)) {
		printf("%-16s yes, %lld orders (%s)\n", "archived", jnum(ar, "orders"),
		       strcmp(jstr(ar, "state"), "done") == 0 ? "done" : "leaving the store");
		print_time("archived at", jnum(ar, "archived_ns"));
	} else if (json_is_null(ar)) {
		printf("%-16s no\n", "archived");
	}
}

/* show_one - GET @prefix@id (an item or an activity) and print it. */
int
show_one(const struct ctl *c, const char *prefix, const char *kind, const char *id)
{
	struct target t = target_of(prefix, id, "", kind);
	json_t *j;
	int ex = api(c, "GET", t.path, NULL, t.what, answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	print_item(j);
	json_decref(j);
	return EX_OK;
}

int
cmd_item(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	return show_one(c, "/v1/items/", "item", args[0]);
}
