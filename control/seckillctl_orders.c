/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's order commands: order show ID, order pay ID
 * (GET /v1/orders/{id}, POST /v1/orders/{id}/pay).
 */
#include <stdio.h>

#include <jansson.h>

#include "seckillctl.h"
#include "seckillctl_client.h"

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
	printf("%-11s %s\n", "user", jstr(j, "user"));
	printf("%-11s %lld\n", "units", jnum(j, "units"));
	printf("%-11s %s\n", "client ip", jstr(j, "client_ip"));
	print_time("sold at", jnum(j, "time_ns"));
	print_time("stored at", jnum(j, "stored_ns"));
	print_time("updated at", jnum(j, "updated_ns"));
	print_time("deadline", jnum(j, "deadline_ns"));
	printf("lines:\n  %-5s %-10s %-6s %-12s %s\n", "LINE", "ITEM", "QTY", "PRICE", "RETURNED");
	size_t i;
	json_t *l;
	json_array_foreach(json_object_get(j, "lines"), i, l)
		printf("  %-5lld %-10lld %-6lld %-12lld %lld\n", jnum(l, "line"), jnum(l, "item"),
		       jnum(l, "qty"), jnum(l, "price"), jnum(l, "returned"));
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
