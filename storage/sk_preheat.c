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
	if (a->added > SK_STOCK_MAX_UNITS || a->total + a->added > SK_STOCK_MAX_UNITS)
		return -EOVERFLOW;
	/*
	 * Laid out with every unit (so automatic dedup sizing counts restocked
	 * ones too), then split into total and added as the store has them:
	 * the item is unseen, and the invariant total + added == pool holds.
	 */
	sc.total = a->total + a->added;
	rc = sk_shm_item_prepare(shm, &sc, dedup, &it);
	if (rc != 0)
		return rc;
	it->total = a->total;
	atomic_store(&it->added, a->added);
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

int
sk_preheat_sync(struct sk_item *it, const struct sk_store_activity *a, struct sk_preheat_sync *out)
{
	struct sk_preheat_sync s = {0};
	uint64_t have = atomic_load(&it->added);

	if (it->id != a->item)
		return -EINVAL;
	if (have > a->added)
		return -ERANGE;
	if (have < a->added) {
		int rc = sk_stock_add(it, a->added - have);

		if (rc != 0)
			return rc;
		s.added = a->added - have;
	}
	if (a->closed_ns != 0 && atomic_load(&it->state) != SK_ITEM_CLOSED) {
		atomic_store(&it->state, SK_ITEM_CLOSED);
		s.closed = true;
	}
	if (out != NULL)
		*out = s;
	return 0;
}
