/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery of sold units and holdings from the order store (sk_recover.h).
 */
#include <errno.h>

#include "sk_recover.h"
#include "sk_store_impl.h"

struct recover_ctx {
	struct sk_dedup dedup;
	struct sk_recover_stats stats;
	int err;
};

static int
restore_holding(const struct sk_store_holding *h, void *arg)
{
	struct recover_ctx *c = arg;

	if (h->units > UINT32_MAX / 2) {
		c->err = -ERANGE;
		return 1;
	}
	if (sk_dedup_restore(&c->dedup, h->user, (uint32_t)h->units, h->last_order) != 0) {
		c->err = -ENOSPC;
		return 1;
	}
	c->stats.units += h->units;
	c->stats.users++;
	return 0;
}

int
sk_recover_item(struct sk_store *st, struct sk_shm *shm, struct sk_item *it,
		struct sk_recover_stats *out)
{
	struct recover_ctx c = {0};

	if (sk_stock_sold(it) != 0 || atomic_load(&it->returned) != 0)
		return -EBUSY;
	sk_shm_dedup(shm, it, &c.dedup);
	int rc = sk_store_holdings_foreach(st, it->id, restore_holding, &c);
	if (rc != 0)
		return c.err != 0 ? c.err : (rc < 0 ? rc : -EIO);

	uint64_t pool = atomic_load(&it->pool);
	if (c.stats.units > pool)
		return -ERANGE;
	/* Single-threaded here: plain stores keep the invariant exact. */
	atomic_store(&it->pool, pool - c.stats.units);
	atomic_store(&it->bucket[0].sold, atomic_load(&it->bucket[0].sold) + c.stats.units);
	if (pool == c.stats.units)
		atomic_store(&it->sold_out, 1);
	if (out != NULL)
		*out = c.stats;
	return 0;
}

int
sk_recover_marks(struct sk_store *st, unsigned member, uint64_t *marks, uint32_t max, uint32_t *n,
		 bool *more)
{
	uint8_t k[ORDER_KEY_LEN];
	struct walk wk;
	uint32_t got = 0;

	*n = 0;
	*more = false;
	int rc = store_walk_open(&wk, st, NULL, st->orders);
	if (rc != 0)
		return store_walk_end(&wk, rc);
	/* From the newest key: each group's first key seen is its highest id;
	 * then seek below the group's seq 0 for the next one down. */
	for (bool at = store_walk_get(&wk, MDB_LAST); at;) {
		if (wk.key.mv_size < 8)
			return store_walk_end(&wk, -EIO);
		uint64_t id = get_be64(wk.key.mv_data);
		if (sk_order_id_member(id) == member) {
			if (got == max) {
				*more = true;
				break;
			}
			marks[got++] = id;
		}
		order_key(k, id & ~(uint64_t)(SK_ORDER_SEQ_MAX - 1), 0);
		at = store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)) &&
		     store_walk_get(&wk, MDB_PREV);
	}
	rc = store_walk_end(&wk, 0);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < got / 2; i++) { /* ascending */
		uint64_t t = marks[i];
		marks[i] = marks[got - 1 - i];
		marks[got - 1 - i] = t;
	}
	*n = got;
	return 0;
}
