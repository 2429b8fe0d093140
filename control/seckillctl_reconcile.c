/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's checks of the counters: metrics (GET /metrics as served) and
 * reconcile (each item's arena counters against each other and LMDB, by
 * the rule of sk_reconcile.h).
 */
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "seckillctl.h"
#include "seckillctl_client.h"
#include "sk_reconcile.h"

#define RECONCILE_RUNS 3

int
cmd_metrics(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	return api(c, "GET", "/metrics", NULL, "metrics", BODY_PRINT, NULL);
}

/*
 * check_items - the reconcile rule (sk_reconcile_item(), nothing in flight)
 * over @items; a JSON report, *bad = mismatches.
 */
static json_t *
check_items(const json_t *items, unsigned *bad)
{
	json_t *rep = json_array(), *it;
	size_t i;

	*bad = 0;
	json_array_foreach(items, i, it)
	{
		const json_t *l = json_object_get(it, "ledger");
		bool arena = json_is_true(json_object_get(it, "in_arena"));
		long long total = jnum(it, "total"), added = jnum(it, "added"),
			  removed = jnum(it, "removed"), rem = jnum(it, "remaining"),
			  sold = jnum(it, "sold"), ret = jnum(it, "returned"),
			  live = jnum(l, "live");
		const json_t *a = json_object_get(it, "activity");
		struct sk_reconcile_in in = {.total = (uint64_t)total,
					     .added = (uint64_t)added,
					     .removed = (uint64_t)removed,
					     .remaining = (uint64_t)rem,
					     .sold = (uint64_t)sold,
					     .returned = (uint64_t)ret,
					     .live = (uint64_t)live};
		struct sk_reconcile_out out;

		sk_reconcile_item(&in, &out);
		bool stock_ok = !arena || out.stock_ok;
		bool store_ok = !arena || out.store_ok;
		/* restocks and removals: the arena follows the store's activity */
		bool act_ok = !arena || !json_is_object(a) ||
			      (jnum(a, "added") == added && jnum(a, "removed") == removed);

		if (!stock_ok || !store_ok || !act_ok)
			(*bad)++;
		json_array_append_new(
			rep,
			json_pack("{s:I,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:b}",
				  "item", jnum(it, "item"), "in_arena", arena, "total", total,
				  "added", added, "removed", removed, "remaining", rem, "sold",
				  sold, "returned", ret, "lmdb_live", live, "lmdb_added",
				  jnum(a, "added"), "lmdb_removed", jnum(a, "removed"), "stock_ok",
				  stock_ok, "store_ok", store_ok, "activity_ok", act_ok));
	}
	return rep;
}

int
cmd_reconcile(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	json_t *j = NULL, *rep = NULL, *it;
	unsigned bad = 0;
	size_t i;

	for (int run = 0; run < RECONCILE_RUNS; run++) {
		if (run > 0) {
			struct timespec ts = {0, 300 * 1000000};
			nanosleep(&ts, NULL);
		}
		json_decref(j);
		json_decref(rep);
		int ex = api(c, "GET", "/v1/items", NULL, "items", BODY_PARSE, &j);
		if (ex != EX_OK)
			return ex;
		rep = check_items(json_object_get(j, "items"), &bad);
		if (bad == 0)
			break;
	}
	if (c->json) {
		json_t *o = json_pack("{s:b,s:I,s:O}", "ok", bad == 0, "mismatches",
				      (json_int_t)bad, "items", rep);
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		json_array_foreach(rep, i, it)
		{
			long long sold = jnum(it, "sold"), ret = jnum(it, "returned");
			if (!json_is_true(json_object_get(it, "in_arena"))) {
				printf("item %lld: not in the arena (store only), LMDB live %lld\n",
				       jnum(it, "item"), jnum(it, "lmdb_live"));
				continue;
			}
			printf("item %lld: total %lld + added %lld - removed %lld == remaining "
			       "%lld + sold %lld - returned %lld: %s\n",
			       jnum(it, "item"), jnum(it, "total"), jnum(it, "added"),
			       jnum(it, "removed"), jnum(it, "remaining"), sold, ret,
			       json_is_true(json_object_get(it, "stock_ok")) ? "ok" : "MISMATCH");
			printf("item %lld: LMDB live %lld == sold - returned %lld: %s\n",
			       jnum(it, "item"), jnum(it, "lmdb_live"), sold - ret,
			       json_is_true(json_object_get(it, "store_ok")) ? "ok" : "MISMATCH");
			printf("item %lld: added %lld, removed %lld == the LMDB activity's %lld, "
			       "%lld: %s\n",
			       jnum(it, "item"), jnum(it, "added"), jnum(it, "removed"),
			       jnum(it, "lmdb_added"), jnum(it, "lmdb_removed"),
			       json_is_true(json_object_get(it, "activity_ok")) ? "ok"
										: "MISMATCH");
		}
		printf("reconcile: %s (%zu items)\n", bad == 0 ? "ok" : "MISMATCH",
		       json_array_size(rep));
	}
	json_decref(j);
	json_decref(rep);
	return bad == 0 ? EX_OK : EX_ERR;
}
