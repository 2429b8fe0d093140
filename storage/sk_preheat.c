/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preheat: activities of the order store into the arena (sk_preheat.h).
 */
#include <errno.h>
#include <string.h>

#include "sk_preheat.h"

void
sk_preheat_conf(const struct sk_store_activity *a, uint32_t batch_max, struct sk_stock_conf *out)
{
	memset(out, 0, sizeof(*out));
	out->id = a->item;
	out->per_user_limit = a->per_user_limit;
	out->start_ns = a->start_ns;
	out->end_ns = a->end_ns;
	out->price = a->price;
	out->total = a->total;
	out->batch_max = batch_max;
	out->gate = a->gate;
	out->reserved_only = a->reserved_only;
}

int
sk_preheat_item(struct sk_store *st, struct sk_shm *shm, const struct sk_store_activity *a,
		uint64_t dedup, uint32_t batch_max, struct sk_item **out,
		struct sk_recover_stats *rs)
{
	struct sk_stock_conf sc;
	struct sk_item *it;
	int rc;

	sk_preheat_conf(a, batch_max, &sc);
	uint64_t base = sk_store_activity_base(a);
	if (a->added > SK_STOCK_MAX_UNITS || a->total + a->added > SK_STOCK_MAX_UNITS)
		return -EOVERFLOW;
	if (a->removed > base + a->added)
		return -ERANGE;
	/*
	 * Laid out with every unit (so automatic dedup sizing counts restocked
	 * ones too, and a cluster item's global total: this appliance may sell
	 * all of it), then split into total and added as the store has them:
	 * the item is unseen, and the invariant total + added == pool holds.
	 */
	sc.total = a->total + a->added;
	rc = sk_shm_item_prepare(shm, &sc, dedup, &it);
	if (rc != 0)
		return rc;
	it->total = base;
	it->cluster = a->cluster ? 1 : 0;
	atomic_store(&it->added, a->added);
	/* Unseen, single-threaded: plain stores keep the invariant exact. */
	atomic_store(&it->removed, a->removed);
	atomic_store(&it->pool, base + a->added - a->removed);
	if (base + a->added == a->removed)
		atomic_store(&it->sold_out, 1);
	if (a->paused_ns != 0)
		atomic_store(&it->state, SK_ITEM_PAUSED);
	if (st != NULL) {
		rc = sk_recover_item(st, shm, it, rs);
		if (rc != 0)
			return rc;
	} else if (rs != NULL) {
		memset(rs, 0, sizeof(*rs));
	}
	rc = sk_shm_item_publish(shm, it);
	if (rc == 0 && out != NULL)
		*out = it;
	return rc;
}

/* sync_removed - the item's removed units as the activity has them. */
static int
sync_removed(struct sk_item *it, uint64_t want, struct sk_preheat_sync *s)
{
	uint64_t have = atomic_load(&it->removed);

	if (have > want) {
		int rc = sk_stock_unremove(it, have - want);

		if (rc == 0)
			s->unremoved = have - want;
		return rc;
	}
	if (have < want) {
		int rc = sk_stock_remove(it, want - have, NULL);

		if (rc == SK_STOCK_OK)
			s->removed = want - have;
		return rc == SK_STOCK_OK ? 0 : rc == SK_STOCK_BUSY ? -EBUSY : rc < 0 ? rc : -ERANGE;
	}
	return 0;
}

int
sk_preheat_sync(struct sk_item *it, const struct sk_store_activity *a, struct sk_preheat_sync *out)
{
	struct sk_preheat_sync s = {0};
	uint64_t have = atomic_load(&it->added);
	uint32_t state;
	int rc = 0;

	if (it->id != a->item)
		return -EINVAL;
	state = atomic_load(&it->state);
	if (a->closed_ns != 0 && state != SK_ITEM_CLOSED) {
		atomic_store(&it->state, SK_ITEM_CLOSED);
		s.closed = true;
	} else if (a->closed_ns == 0 && (state == SK_ITEM_PAUSED) != (a->paused_ns != 0) &&
		   sk_stock_pause(it, a->paused_ns != 0) == 0) {
		s.paused = a->paused_ns != 0;
		s.resumed = a->paused_ns == 0;
	}
	if (sk_stock_end_ns(it) != a->end_ns) {
		sk_stock_set_end(it, a->end_ns);
		s.extended = true;
	}
	if (have > a->added) {
		rc = -ERANGE;
	} else if (have < a->added) {
		rc = sk_stock_add(it, a->added - have);
		if (rc == 0)
			s.added = a->added - have;
	}
	if (rc == 0)
		rc = sync_removed(it, a->removed, &s);
	if (out != NULL)
		*out = s;
	return rc;
}
