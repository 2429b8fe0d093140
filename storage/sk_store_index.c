/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order indexes (sk_store.h, docs/storage.md): `user_orders` (item,
 * user, order id) and `state_orders` (item, state, order id), each -> the
 * line of the order that holds the item. Every order line the store ever
 * took has one entry in each; a state change moves the line's state entry
 * in the transaction that makes it. The upgrade of an older store builds
 * them from `orders`; sk_store_orders_find() reads them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_store_archive.h"
#include "sk_store_impl.h"

/* state_stored - a state an order can have in the store. */
static bool
state_stored(unsigned s)
{
	return s == SK_ORDER_CONFIRMED || s == SK_ORDER_PAID || s == SK_ORDER_CANCELLED ||
	       s == SK_ORDER_REFUNDED;
}

static int
state_put(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l, unsigned state)
{
	uint8_t k[STATEIDX_KEY_LEN], v = l->rec.line;

	stateidx_key(k, l->rec.item, (uint8_t)state, l->rec.id);
	MDB_val key = mval(k, sizeof(k)), data = mval(&v, IDX_VAL_LEN);
	return store_lmdb_err(mdb_put(txn, st->state_orders, &key, &data, 0));
}

int
store_index_add(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l)
{
	uint8_t k[USERIDX_KEY_LEN], v = l->rec.line;

	if (!st->has_index)
		return 0;
	useridx_key(k, l->rec.item, l->rec.user, l->rec.id);
	MDB_val key = mval(k, sizeof(k)), data = mval(&v, IDX_VAL_LEN);
	int rc = store_lmdb_err(mdb_put(txn, st->user_orders, &key, &data, 0));
	return rc != 0 ? rc : state_put(st, txn, l, l->state);
}

int
store_index_move(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l, unsigned from)
{
	uint8_t k[STATEIDX_KEY_LEN];

	if (!st->has_index || from == l->state)
		return 0;
	stateidx_key(k, l->rec.item, (uint8_t)from, l->rec.id);
	MDB_val key = mval(k, sizeof(k));
	int rc = mdb_del(txn, st->state_orders, &key, NULL);
	if (rc != 0 && rc != MDB_NOTFOUND) /* a missing entry: sk_store_verify() says so */
		return store_lmdb_err(rc);
	return state_put(st, txn, l, l->state);
}

int
store_orders_each(struct sk_store *st, MDB_txn *txn, store_line_fn fn)
{
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, txn, st->orders);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		struct sk_store_line l;

		if (wk.key.mv_size != ORDER_KEY_LEN || !order_val_ok(wk.data.mv_size)) {
			rc = -EIO;
			break;
		}
		store_order_dec(&l, get_be64(wk.key.mv_data), ((uint8_t *)wk.key.mv_data)[8],
				wk.data.mv_data, wk.data.mv_size);
		rc = fn(st, &wk, &l);
		if (rc != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}

static int
index_line(struct sk_store *st, struct walk *wk, const struct sk_store_line *l)
{
	return store_index_add(st, wk->txn, l);
}

int
store_index_build(struct sk_store *st, MDB_txn *txn)
{
	return store_orders_each(st, txn, index_line);
}

/* ------------------------------------------------------------------- query */

/* order_lines - every line of order @id into @lines (SK_STORE_MAX_LINES). */
static int
order_lines(struct walk *ord, uint64_t id, struct sk_store_line *lines, unsigned *n)
{
	*n = 0;
	for (unsigned j = 0;; j++) {
		int rc = store_cart_line(ord, id, j, &lines[j]);

		if (rc != 0)
			return rc == -ENOENT ? -EIO : rc; /* indexed, so it must exist */
		if (j + 1 >= lines[0].rec.nlines) {
			*n = j + 1;
			return 0;
		}
	}
}

int
sk_store_orders_find(struct sk_store *st, const struct sk_store_order_query *q,
		     sk_store_order_cb cb, void *arg, bool *more)
{
	uint8_t k[USERIDX_KEY_LEN];
	struct walk ix = {0}, ord = {0};
	struct sk_store_line *lines = NULL;
	size_t plen;
	uint32_t given = 0;
	int rc;

	if (more != NULL)
		*more = false;
	if (q == NULL || cb == NULL || q->item == 0 || (q->user == 0 && q->state == 0) ||
	    (q->state != 0 && !state_stored(q->state)) || q->limit == 0 ||
	    q->limit > SK_STORE_FIND_MAX)
		return -EINVAL;
	if (!st->has_index)
		return -ENOTSUP;
	rc = sk_store_archive_find(st, q, cb, arg, more);
	if (rc != -ENOENT)
		return rc; /* archived: the file alone, never the orders left to purge */
	if (q->after == UINT64_MAX)
		return 0; /* no id is larger */
	lines = malloc(SK_STORE_MAX_LINES * sizeof(*lines));
	if (lines == NULL)
		return -ENOMEM;
	if (q->user != 0) {
		useridx_key(k, q->item, q->user, q->after + 1);
		plen = USERIDX_KEY_LEN - 8;
		rc = store_walk_open(&ix, st, NULL, st->user_orders);
	} else {
		stateidx_key(k, q->item, q->state, q->after + 1);
		plen = STATEIDX_KEY_LEN - 8;
		rc = store_walk_open(&ix, st, NULL, st->state_orders);
	}
	if (rc == 0)
		rc = store_walk_open(&ord, st, ix.txn, st->orders);
	for (bool at = rc == 0 && store_walk_seek(&ix, MDB_SET_RANGE, k, plen + 8); at;
	     at = store_walk_get(&ix, MDB_NEXT)) {
		unsigned n;

		if (ix.key.mv_size != plen + 8 || memcmp(ix.key.mv_data, k, plen) != 0)
			break; /* past the item's (and user's or state's) entries */
		rc = order_lines(&ord, get_be64((const uint8_t *)ix.key.mv_data + plen), lines, &n);
		if (rc != 0)
			break;
		if (q->state != 0 && lines[0].state != q->state)
			continue; /* by user and state: filtered here */
		if (given == q->limit) {
			if (more != NULL)
				*more = true;
			break;
		}
		rc = cb(lines, n, arg);
		if (rc != 0)
			break;
		given++;
	}
	rc = store_walk_end(&ord, rc);
	rc = store_walk_end(&ix, rc);
	free(lines);
	return rc;
}
