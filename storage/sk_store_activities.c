/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Activities in the store (sk_store.h): the `items` database, which holds
 * each item's definition, its ledger and its applied restocks. Put, get,
 * the list preheat loads, close and restock; the ledger and definition
 * loaders the orders and verify code share.
 */
#include <errno.h>
#include <string.h>

#include "sk_store_impl.h"

/* ------------------------------------------------- ledgers and definitions */

int
store_ledger_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_ledger *l,
		  bool *found)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, ITEM_TAG_LEDGER, 0);
	key = mval(k, ITEM_KEY_LEN);
	memset(l, 0, sizeof(*l));
	if (found != NULL)
		*found = false;
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size != LEDGER_VAL_LEN)
		return -EIO;
	store_ledger_dec(l, data.mv_data);
	if (found != NULL)
		*found = true;
	return 0;
}

int
store_ledger_store(struct sk_store *st, MDB_txn *txn, uint32_t item,
		   const struct sk_store_ledger *l)
{
	uint8_t k[RESTOCK_KEY_LEN], v[LEDGER_VAL_LEN];

	item_key(k, item, ITEM_TAG_LEDGER, 0);
	store_ledger_enc(v, l);
	MDB_val key = mval(k, ITEM_KEY_LEN), data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

int
store_act_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_activity *a)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, ITEM_TAG_DEF, 0);
	key = mval(k, ITEM_KEY_LEN);
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size != ACT_VAL_LEN)
		return -EIO;
	store_act_dec(a, item, data.mv_data);
	return 0;
}

int
store_act_store(struct sk_store *st, MDB_txn *txn, const struct sk_store_activity *a)
{
	uint8_t k[RESTOCK_KEY_LEN], v[ACT_VAL_LEN];

	item_key(k, a->item, ITEM_TAG_DEF, 0);
	store_act_enc(v, a);
	MDB_val key = mval(k, ITEM_KEY_LEN), data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

/* -------------------------------------------------------------- activities */

static bool
act_valid(const struct sk_store_activity *a)
{
	return a->item != 0 && a->per_user_limit >= 1 && a->end_ns > a->start_ns &&
	       a->pay_timeout_ns >= 0 && memchr(a->name, '\0', sizeof(a->name)) != NULL;
}

int
sk_store_activity_put(struct sk_store *st, const struct sk_store_activity *a, int64_t now_ns)
{
	struct sk_store_activity cur;
	struct sk_store_ledger led;
	struct wtxn w;
	int rc;

	if (a == NULL || !act_valid(a))
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, a->item, &cur);
	if (rc == -ENOENT) {
		cur = *a;
		cur.added = 0;
		cur.created_ns = now_ns;
		cur.closed_ns = 0;
		rc = 0;
	} else if (rc == 0) {
		if (cur.closed_ns != 0) {
			rc = -EPERM;
			goto out;
		}
		if (sk_store_activity_same(&cur, a)) {
			rc = SK_STORE_UNCHANGED;
			goto out;
		}
		cur.per_user_limit = a->per_user_limit;
		cur.total = a->total;
		cur.price = a->price;
		cur.start_ns = a->start_ns;
		cur.end_ns = a->end_ns;
		cur.pay_timeout_ns = a->pay_timeout_ns;
		memcpy(cur.name, a->name, sizeof(cur.name));
	}
	if (rc != 0)
		goto out;
	cur.updated_ns = now_ns;
	rc = store_ledger_load(st, w.txn, a->item, &led, NULL);
	if (rc != 0)
		goto out;
	uint64_t cap;
	if (__builtin_add_overflow(cur.total, cur.added, &cap)) {
		rc = -EOVERFLOW;
		goto out;
	}
	if (cap < sk_store_ledger_live(&led)) {
		rc = -ERANGE;
		goto out;
	}
	rc = store_act_store(st, w.txn, &cur);
	struct sk_store_event ev = {.type = SK_STORE_EV_ACTIVITY,
				    .item = a->item,
				    .units = cur.total,
				    .time_ns = now_ns,
				    .def = {.has_def = true,
					    .per_user_limit = cur.per_user_limit,
					    .price = cur.price,
					    .start_ns = cur.start_ns,
					    .end_ns = cur.end_ns}};
	memcpy(ev.def.name, cur.name, sizeof(ev.def.name));
	return store_wtxn_end(st, &w, rc, &ev);
out:
	store_wtxn_abort(&w);
	return rc;
}

int
sk_store_activity_get(struct sk_store *st, uint32_t item, struct sk_store_activity *a,
		      struct sk_store_ledger *ledger)
{
	struct sk_store_activity tmp;
	MDB_txn *txn;
	int rc = store_rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = store_act_load(st, txn, item, a != NULL ? a : &tmp);
	if ((rc == 0 || rc == -ENOENT) && ledger != NULL) {
		int lr = store_ledger_load(st, txn, item, ledger, NULL);
		if (lr != 0)
			rc = lr;
	}
	mdb_txn_abort(txn);
	return rc;
}

int
sk_store_activity_foreach(struct sk_store *st, sk_store_activity_cb cb, void *arg)
{
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, NULL, st->items);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		const uint8_t *kp = wk.key.mv_data;
		if (wk.key.mv_size != ITEM_KEY_LEN || kp[4] != ITEM_TAG_DEF)
			continue;
		if (wk.data.mv_size != ACT_VAL_LEN) {
			rc = -EIO;
			break;
		}
		struct sk_store_activity a;
		struct sk_store_ledger led;
		uint32_t item = get_be32(kp);
		store_act_dec(&a, item, wk.data.mv_data);
		rc = store_ledger_load(st, wk.txn, item, &led, NULL);
		if (rc == 0)
			rc = cb(&a, &led, arg);
		if (rc != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}

int
sk_store_activity_close(struct sk_store *st, uint32_t item, int64_t now_ns)
{
	struct sk_store_activity a;
	struct wtxn w;
	int rc = store_wtxn_begin(st, &w);

	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, item, &a);
	if (rc != 0)
		goto out;
	if (a.closed_ns != 0) {
		rc = SK_STORE_UNCHANGED;
		goto out;
	}
	a.closed_ns = now_ns > 0 ? now_ns : 1;
	a.updated_ns = now_ns;
	rc = store_act_store(st, w.txn, &a);
	struct sk_store_event ev = {.type = SK_STORE_EV_CLOSED, .item = item, .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
out:
	store_wtxn_abort(&w);
	return rc;
}

int
sk_store_activity_restock(struct sk_store *st, uint32_t item, uint64_t restock_id, uint64_t units,
			  int64_t now_ns)
{
	uint8_t k[RESTOCK_KEY_LEN], v[RESTOCK_VAL_LEN];
	struct sk_store_activity a;
	struct wtxn w;
	MDB_val key, data;
	int rc;

	if (units == 0 || restock_id == 0)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, item, &a);
	if (rc != 0)
		goto out;
	item_key(k, item, ITEM_TAG_RESTOCK, restock_id);
	key = mval(k, RESTOCK_KEY_LEN);
	rc = mdb_get(w.txn, st->items, &key, &data);
	if (rc == 0) {
		if (data.mv_size != RESTOCK_VAL_LEN)
			rc = -EIO;
		else
			rc = get_be64(data.mv_data) == units ? SK_STORE_UNCHANGED : -EEXIST;
		goto out;
	}
	if (rc != MDB_NOTFOUND) {
		rc = store_lmdb_err(rc);
		goto out;
	}
	if (a.closed_ns != 0) {
		rc = -EPERM;
		goto out;
	}
	uint64_t added, cap;
	if (__builtin_add_overflow(a.added, units, &added) ||
	    __builtin_add_overflow(a.total, added, &cap)) {
		rc = -EOVERFLOW;
		goto out;
	}
	a.added = added;
	a.updated_ns = now_ns;
	rc = store_act_store(st, w.txn, &a);
	if (rc != 0)
		goto out;
	put_be64(v, units);
	put_be64(v + 8, (uint64_t)now_ns);
	data = mval(v, sizeof(v));
	rc = store_lmdb_err(mdb_put(w.txn, st->items, &key, &data, 0));
	struct sk_store_event ev = {
		.type = SK_STORE_EV_RESTOCKED, .item = item, .units = units, .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
out:
	store_wtxn_abort(&w);
	return rc;
}
