/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's checks of the counters: metrics (GET /metrics as served),
 * reconcile (each item's arena counters against each other and LMDB, by
 * the rule of sk_reconcile.h; a cluster item's Redis pool against its
 * members' leases) and cluster show.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "seckillctl.h"
#include "seckillctl_client.h"
#include "sk_parse.h"
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

/* cluster_json - GET /v1/cluster/items/@item (NULL with *ex set on failure). */
static json_t *
cluster_json(const struct ctl *c, long long item, int *ex)
{
	char path[64];
	json_t *j = NULL;

	snprintf(path, sizeof(path), "/v1/cluster/items/%lld", item);
	*ex = api(c, "GET", path, NULL, "cluster item", BODY_PARSE, &j);
	return *ex == EX_OK ? j : NULL;
}

/* check_word - "ok", "MISMATCH" or "not checked (...)" of a check (true/false/null). */
static const char *
check_word(const json_t *v, const char *why_null)
{
	return json_is_true(v) ? "ok" : json_is_false(v) ? "MISMATCH" : why_null;
}

/*
 * check_cluster - the two checks of each cluster item of @items (the
 * member's /v1/cluster/items/{id}); their report in @rep, *bad += failures.
 * A check the member cannot make now (fenced, an op in flight) is not a
 * failure. Exit status of a failed call, else EX_OK.
 */
static int
check_cluster(const struct ctl *c, const json_t *items, json_t *rep, unsigned *bad)
{
	const json_t *it;
	size_t i;
	int ex = EX_OK;

	json_array_foreach(items, i, it)
	{
		const json_t *a = json_object_get(it, "activity");
		if (!json_is_true(json_object_get(a, "cluster")))
			continue;
		json_t *j = cluster_json(c, jnum(it, "item"), &ex);
		if (j == NULL)
			return ex;
		const json_t *ck = json_object_get(j, "checks");
		if (json_is_false(json_object_get(ck, "pool_sum")) ||
		    json_is_false(json_object_get(ck, "member_held")))
			(*bad)++;
		json_array_append_new(rep, j);
	}
	return EX_OK;
}

static void
print_cluster(const json_t *j)
{
	const json_t *p = json_object_get(j, "pool"), *l, *ck = json_object_get(j, "checks");
	long long sum = 0;
	size_t i;

	json_array_foreach(json_object_get(p, "leases"), i, l) sum += jnum(l, "held");
	printf("item %lld: cluster pool total %lld == free %lld + leases %lld: %s\n",
	       jnum(j, "item"), jnum(p, "total"), jnum(p, "free"), sum,
	       check_word(json_object_get(ck, "pool_sum"), "not checked (fenced)"));
	printf("item %lld: member %s's lease == its LMDB's %lld: %s\n", jnum(j, "item"),
	       jstr(j, "member"), jnum(j, "held"),
	       check_word(json_object_get(ck, "member_held"),
			  "not checked (fenced, or an op in flight)"));
}

int
cmd_cluster_forget(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	const char *const *o = c->opt;
	uint64_t held;
	long long item;
	char path[80];
	json_t *j = NULL;

	if (sscanf(args[0], "%lld", &item) != 1)
		return EX_USAGE;
	if (o[O_MEMBER] == NULL || o[O_HELD] == NULL)
		return usage_error(cmd->help, "forget needs --member M and --held N");
	if (!sk_parse_u64(o[O_HELD], 0, UINT64_C(1) << 53, &held))
		return usage_error(cmd->help, "--held: '%s' is not 0..2^53", o[O_HELD]);
	json_t *body = json_pack("{s:s,s:I}", "member", o[O_MEMBER], "held", (json_int_t)held);
	snprintf(path, sizeof(path), "/v1/cluster/items/%lld/forget", item);
	int ex = api(c, "POST", path, body, "cluster forget", answer_use(c), &j);
	if (ex != EX_OK || c->json)
		return ex;
	printf("item %lld: member %s forgotten, holding %llu units\n", item, o[O_MEMBER],
	       (unsigned long long)held);
	json_decref(j);
	return EX_OK;
}

int
cmd_cluster_show(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	const json_t *p, *l, *pend;
	long long item;
	size_t i;
	int ex;

	if (sscanf(args[0], "%lld", &item) != 1)
		return EX_USAGE;
	if (c->json) {
		char path[64];
		snprintf(path, sizeof(path), "/v1/cluster/items/%lld", item);
		return api(c, "GET", path, NULL, "cluster item", BODY_PRINT, NULL);
	}
	json_t *j = cluster_json(c, item, &ex);
	if (j == NULL)
		return ex;
	p = json_object_get(j, "pool");
	pend = json_object_get(j, "pending");
	printf("item             %lld\n", item);
	printf("member           %s (redis %s)\n", jstr(j, "member"),
	       json_is_true(json_object_get(j, "redis_up")) ? "up" : "DOWN");
	printf("pool             total %lld, free %lld, epoch %lld%s\n", jnum(p, "total"),
	       jnum(p, "free"), jnum(p, "epoch"),
	       json_is_true(json_object_get(p, "fenced")) ? ", FENCED (waiting for syncs)" : "");
	printf("sold out         %s (version %lld)\n",
	       json_is_true(json_object_get(p, "sold_out")) ? "yes, everywhere" : "no",
	       jnum(p, "version"));
	printf("read             %lld ms ago\n", jnum(p, "read_ms_ago"));
	printf("%-16s %-12s %s\n", "MEMBER", "HELD", "SYNCED EPOCH");
	json_array_foreach(json_object_get(p, "leases"), i, l)
		printf("%-16s %-12lld %lld\n", jstr(l, "member"), jnum(l, "held"),
		       jnum(l, "synced_epoch"));
	printf("held here (LMDB) %lld\n", jnum(j, "held"));
	if (json_is_object(pend))
		printf("pending op       %s %lld of %lld units\n", jstr(pend, "kind"),
		       jnum(pend, "seq"), jnum(pend, "units"));
	print_cluster(j);
	json_decref(j);
	return EX_OK;
}

int
cmd_reconcile(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	json_t *j = NULL, *rep = NULL, *clu = NULL, *it;
	unsigned bad = 0;
	size_t i;
	int ex;

	for (int run = 0; run < RECONCILE_RUNS; run++) {
		if (run > 0) {
			struct timespec ts = {0, 300 * 1000000};
			nanosleep(&ts, NULL);
		}
		json_decref(j);
		json_decref(rep);
		ex = api(c, "GET", "/v1/items", NULL, "items", BODY_PARSE, &j);
		if (ex != EX_OK)
			return ex;
		rep = check_items(json_object_get(j, "items"), &bad);
		json_decref(clu);
		clu = json_array();
		if (clu == NULL)
			return EX_ERR;
		ex = check_cluster(c, json_object_get(j, "items"), clu, &bad);
		if (ex != EX_OK) {
			json_decref(j);
			json_decref(rep);
			json_decref(clu);
			return ex;
		}
		if (bad == 0)
			break;
	}
	if (c->json) {
		json_t *o = json_pack("{s:b,s:I,s:O,s:O}", "ok", bad == 0, "mismatches",
				      (json_int_t)bad, "items", rep, "cluster", clu);
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
		json_array_foreach(clu, i, it) print_cluster(it);
		printf("reconcile: %s (%zu items)\n", bad == 0 ? "ok" : "MISMATCH",
		       json_array_size(rep));
	}
	json_decref(j);
	json_decref(rep);
	json_decref(clu);
	return bad == 0 ? EX_OK : EX_ERR;
}
