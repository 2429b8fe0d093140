/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery of sold units and holdings from the order store (sk_recover.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* mark_cmp - ascending order ids, for qsort. */
static int
mark_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* group_of - an id's (epoch, member, lcore) group: the id with seq 0. */
static uint64_t
group_of(uint64_t id)
{
	return id & ~(uint64_t)(SK_ORDER_SEQ_MAX - 1);
}

/*
 * orders_marks - the newest @max groups' highest ids of member @member in
 * `orders`, newest first; *more when older groups were left out.
 */
static int
orders_marks(struct sk_store *st, unsigned member, uint64_t *marks, uint32_t max, uint32_t *n,
	     bool *more)
{
	uint8_t k[ORDER_KEY_LEN];
	struct walk wk;
	uint32_t got = 0;

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
		order_key(k, group_of(id), 0);
		at = store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)) &&
		     store_walk_get(&wk, MDB_PREV);
	}
	*n = got;
	return store_walk_end(&wk, 0);
}

/*
 * archived_marks - append to @all (grown with realloc) the marks that
 * archives left in `meta` (store_mark_raise()) for member @member.
 */
static int
archived_marks(struct sk_store *st, unsigned member, uint64_t **all, size_t *n, size_t *cap)
{
	struct walk wk;
	int rc = store_walk_open(&wk, st, NULL, st->meta);

	for (bool at = rc == 0 &&
		       store_walk_seek(&wk, MDB_SET_RANGE, META_MARK_PREFIX, META_MARK_PREFIX_LEN);
	     at; at = store_walk_get(&wk, MDB_NEXT)) {
		if (wk.key.mv_size < META_MARK_PREFIX_LEN ||
		    memcmp(wk.key.mv_data, META_MARK_PREFIX, META_MARK_PREFIX_LEN) != 0)
			break;
		if (wk.key.mv_size != META_MARK_KEY_LEN || wk.data.mv_size != 8)
			return store_walk_end(&wk, -EIO);
		uint64_t id = get_be64(wk.data.mv_data);
		if (sk_order_id_member(id) != member)
			continue;
		if (*n == *cap) {
			size_t c = *cap * 2 + 64;
			uint64_t *p = realloc(*all, c * sizeof(**all));
			if (p == NULL)
				return store_walk_end(&wk, -ENOMEM);
			*all = p;
			*cap = c;
		}
		(*all)[(*n)++] = id;
	}
	return store_walk_end(&wk, 0);
}

int
sk_recover_marks(struct sk_store *st, unsigned member, uint64_t *marks, uint32_t max, uint32_t *n,
		 bool *more)
{
	size_t cap = (size_t)max + 64, got = 0;
	uint32_t in_orders = 0;
	uint64_t *all = malloc(cap * sizeof(*all));

	*n = 0;
	*more = false;
	if (all == NULL)
		return -ENOMEM;
	int rc = orders_marks(st, member, all, max, &in_orders, more);
	got = in_orders;
	if (rc == 0)
		rc = archived_marks(st, member, &all, &got, &cap);
	if (rc != 0) {
		free(all);
		return rc;
	}
	/* One mark per group, the highest; then the newest @max groups. */
	qsort(all, got, sizeof(*all), mark_cmp);
	size_t w = 0;
	for (size_t i = 0; i < got; i++) {
		if (w > 0 && group_of(all[w - 1]) == group_of(all[i]))
			w--; /* ascending: the later one is the higher */
		all[w++] = all[i];
	}
	size_t from = w > max ? w - max : 0;
	if (from > 0)
		*more = true;
	memcpy(marks, all + from, (w - from) * sizeof(*marks));
	*n = (uint32_t)(w - from);
	free(all);
	return 0;
}
