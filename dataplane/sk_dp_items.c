/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_dp_items.c - seckill-dataplane's items at start-up: the config's
 * [item.<id>] sections and the store's activities, reconciled (the store
 * wins), put into the arena with their sold units and winners restored
 * from LMDB (sk_preheat_item()), so a restart never sells a unit twice.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "sk_dataplane.h"
#include "sk_logfmt.h"

/*
 * activity_from_config - config item @ci as a store activity, its window
 * made absolute (relative times count from the process start).
 */
static int
activity_from_config(struct dataplane *dp, const struct sk_config_item *ci,
		     struct sk_store_activity *a)
{
	memset(a, 0, sizeof(*a));
	a->item = ci->id;
	a->per_user_limit = ci->per_user_limit;
	a->total = ci->total;
	a->price = ci->price;
	a->gate = ci->gate;
	snprintf(a->name, sizeof(a->name), "%s", ci->name);
	if (sk_config_item_window(ci, dp->start_ns, &a->start_ns, &a->end_ns) != 0)
		return sk_dp_fail(dp, -EINVAL,
				  "item.%" PRIu32 ".end: must be after item.%" PRIu32
				  ".start (one is relative to the start, the other absolute)",
				  ci->id, ci->id);
	return 0;
}

/* config_differs - what of config item @ci the stored activity @a overrides. */
static void
config_differs(const struct sk_config_item *ci, const struct sk_store_activity *cfg,
	       const struct sk_store_activity *a)
{
	char what[160] = "";
	size_t n = 0;

#define DIFF(cond, name)                                                                           \
	do {                                                                                       \
		if ((cond) && n < sizeof(what))                                                    \
			n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s", n ? ", " : "",   \
					      name);                                               \
	} while (0)
	DIFF(a->total != cfg->total, "total");
	DIFF(a->price != cfg->price, "price");
	DIFF(a->per_user_limit != cfg->per_user_limit, "per_user_limit");
	DIFF(a->gate != cfg->gate, "gate");
	DIFF(!ci->start.relative && a->start_ns != cfg->start_ns, "start");
	DIFF(!ci->end.relative && a->end_ns != cfg->end_ns, "end");
#undef DIFF
	if (n > 0)
		sk_logf(SK_LOG_WARN, "recovery",
			"item=%" PRIu32 " differs=%s msg=\"the store's activity differs from the "
			"config: the store wins; change a running sale through the admin API\"",
			ci->id, what);
}

/* What sk_dp_setup_items() restored, for its summary line. */
struct setup_ctx {
	struct dataplane *dp;
	struct sk_store *st;
	uint32_t items;
	uint64_t units, users;
	int rc;
};

/* preheat_one - activity @a into the arena (sk_preheat_item()), errors named. */
static int
preheat_one(struct setup_ctx *c, const struct sk_store_activity *a, uint64_t dedup,
	    uint32_t batch_max)
{
	struct dataplane *dp = c->dp;
	struct sk_recover_stats rs = {0};
	int rc = sk_preheat_item(c->st, dp->shm, a, dedup, batch_max, NULL, &rs);

	if (rc == -ENOSPC && atomic_load(&dp->shm->nitems) >= dp->shm->max_items)
		return sk_dp_fail(dp, rc,
				  "seckill.max_items: no room for item %" PRIu32 " (%" PRIu32
				  " items)",
				  a->item, dp->shm->max_items);
	if (rc == -ENOSPC)
		return sk_dp_fail(
			dp, rc,
			"item.%" PRIu32 ".dedup_slots: no room left in seckill.dedup_slots "
			"(%" PRIu64 " of %" PRIu64 " used) for the item or its holdings",
			a->item, (uint64_t)atomic_load(&dp->shm->dedup_used), dp->shm->dedup_slots);
	if (rc == -ERANGE)
		return sk_dp_fail(dp, rc,
				  "item.%" PRIu32 ".total: %" PRIu64 " + %" PRIu64
				  " restocked - %" PRIu64 " removed is less "
				  "than the live units the store %s holds: refusing to oversell",
				  a->item, a->total, a->added, a->removed, dp->cfg.store);
	if (rc != 0)
		return sk_dp_fail(dp, rc, "item.%" PRIu32 ": refused by the stock engine: %s",
				  a->item, strerror(-rc));
	c->items++;
	c->units += rs.units;
	c->users += rs.users;
	return 0;
}

/* preheat_stored - callback: an open activity of the store not in the config. */
static int
preheat_stored(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct setup_ctx *c = arg;

	(void)l;
	if (a->closed_ns != 0 || a->end_ns <= c->dp->start_ns ||
	    sk_shm_item_find(c->dp->shm, a->item) != NULL)
		return 0;
	c->rc = preheat_one(c, a, 0, 0);
	return c->rc != 0;
}

/*
 * sk_dp_setup_items - preheat at start: the sale's items into the fresh arena
 * before any lcore sells (and before the order rings exist, so the control
 * plane cannot attach yet). Without [seckill] store: the config's items,
 * every unit on sale. With a store (the control plane's LMDB, opened
 * read-only and closed again; the control plane may be writing it): the
 * store's activities are the truth - an [item.N] the store knows is loaded
 * as the store has it (restocks included; a closed one is not loaded), one
 * it does not know yet comes from the config (the control plane records
 * it), and every other open activity of the store is loaded too - each
 * with total + restocked - removed - live units, its winners' holdings and
 * its pause (sk_preheat_item()).
 */
int
sk_dp_setup_items(struct dataplane *dp)
{
	const struct sk_store_conf scf = {.flags = SK_STORE_RDONLY};
	struct setup_ctx c = {.dp = dp};
	char err[SK_CONFIG_ERR_MAX];
	int rc = 0;

	if (dp->cfg.store[0] != '\0') {
		rc = sk_store_open(&c.st, dp->cfg.store, &scf, err, sizeof(err));
		if (rc == -ENOENT)
			sk_logf(SK_LOG_NOTICE, "recovery",
				"path=%s msg=\"no store yet, nothing to restore\"", dp->cfg.store);
		else if (rc != 0)
			return sk_dp_fail(dp, rc, "seckill.store: %s: cannot open it read-only: %s",
					  dp->cfg.store, err);
		rc = 0;
	}
	for (uint32_t i = 0; i < dp->cfg.nb_items && rc == 0; i++) {
		const struct sk_config_item *ci = &dp->cfg.items[i];
		struct sk_store_activity cfg, stored;
		const struct sk_store_activity *a = &cfg;

		rc = activity_from_config(dp, ci, &cfg);
		if (rc != 0)
			break;
		if (c.st != NULL && sk_store_activity_get(c.st, ci->id, &stored, NULL) == 0) {
			if (stored.closed_ns != 0) {
				sk_logf(SK_LOG_NOTICE, "recovery",
					"item=%" PRIu32 " msg=\"closed in the store: not on sale\"",
					ci->id);
				continue;
			}
			config_differs(ci, &cfg, &stored);
			a = &stored;
		}
		rc = preheat_one(&c, a, ci->dedup_slots, ci->batch_max);
	}
	if (rc == 0 && c.st != NULL) {
		rc = sk_store_activity_foreach(c.st, preheat_stored, &c);
		if (c.rc != 0)
			rc = c.rc;
		else if (rc != 0)
			rc = sk_dp_fail(dp, rc, "seckill.store: %s: cannot read its activities: %s",
					dp->cfg.store, strerror(-rc));
	}
	if (c.st != NULL) {
		sk_store_close(c.st);
		if (rc == 0)
			sk_logf(SK_LOG_NOTICE, "recovery",
				"path=%s units=%" PRIu64 " holdings=%" PRIu64 " items=%" PRIu32
				" msg=\"live units restored\"",
				dp->cfg.store, c.units, c.users, c.items);
	}
	return rc;
}

int
sk_dp_store_marks(struct dataplane *dp, uint64_t *marks, uint32_t max, uint32_t *n, bool *more)
{
	const struct sk_store_conf scf = {.flags = SK_STORE_RDONLY};
	char err[SK_CONFIG_ERR_MAX];
	struct sk_store *st = NULL;
	int rc;

	*n = 0;
	*more = false;
	if (dp->cfg.store[0] == '\0')
		return 0;
	rc = sk_store_open(&st, dp->cfg.store, &scf, err, sizeof(err));
	if (rc == -ENOENT)
		return 0;
	if (rc != 0)
		return sk_dp_fail(dp, rc, "seckill.store: %s: cannot open it read-only: %s",
				  dp->cfg.store, err);
	rc = sk_recover_marks(st, dp->cfg.member_id, marks, max, n, more);
	sk_store_close(st);
	if (rc != 0)
		return sk_dp_fail(dp, rc, "seckill.store: %s: cannot read its orders: %s",
				  dp->cfg.store, strerror(-rc));
	return 0;
}
