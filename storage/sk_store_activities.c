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
	return store_act_dec(a, item, data.mv_data, data.mv_size);
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
		cur.added = cur.removed = 0;
		cur.created_ns = now_ns;
		cur.closed_ns = cur.paused_ns = 0;
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
		if (cur.cluster != a->cluster) {
			rc = -EEXIST; /* leases are the units of one kind only */
			goto out;
		}
		cur.per_user_limit = a->per_user_limit;
		cur.total = a->total;
		cur.cluster = a->cluster;
		cur.gate = a->gate;
		cur.reserved_only = a->reserved_only;
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
	if (__builtin_add_overflow(sk_store_activity_base(&cur), cur.added, &cap)) {
		rc = -EOVERFLOW;
		goto out;
	}
	if (cap < cur.removed || cap - cur.removed < sk_store_ledger_live(&led)) {
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
	store_rtxn_end(st, txn);
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
		struct sk_store_activity a;
		struct sk_store_ledger led;
		uint32_t item = get_be32(kp);
		rc = store_act_dec(&a, item, wk.data.mv_data, wk.data.mv_size);
		if (rc == 0)
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

/*
 * stock_record - the units of stock change @id of @item recorded under
 * @tag (ITEM_TAG_RESTOCK or ITEM_TAG_REMOVAL): 0, -ENOENT, -EIO or an error.
 */
static int
stock_record(struct sk_store *st, MDB_txn *txn, uint32_t item, uint8_t tag, uint64_t id,
	     uint64_t *units)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, tag, id);
	key = mval(k, RESTOCK_KEY_LEN);
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size != RESTOCK_VAL_LEN)
		return -EIO;
	*units = get_be64(data.mv_data);
	return 0;
}

int
store_stock_record_put(struct sk_store *st, MDB_txn *txn, uint32_t item, uint8_t tag, uint64_t id,
		       uint64_t units, int64_t now_ns)
{
	uint8_t k[RESTOCK_KEY_LEN], v[RESTOCK_VAL_LEN];

	item_key(k, item, tag, id);
	put_be64(v, units);
	put_be64(v + 8, (uint64_t)now_ns);
	MDB_val key = mval(k, RESTOCK_KEY_LEN), data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

int
store_act_unsold(const struct sk_store_activity *a, const struct sk_store_ledger *led,
		 uint64_t *unsold)
{
	uint64_t cap;

	if (__builtin_add_overflow(sk_store_activity_base(a), a->added, &cap) || cap < a->removed ||
	    cap - a->removed < sk_store_ledger_live(led))
		return -ERANGE;
	*unsold = cap - a->removed - sk_store_ledger_live(led);
	return 0;
}

/*
 * stock_change - a restock (@tag ITEM_TAG_RESTOCK: added += @units) or a
 * removal (ITEM_TAG_REMOVAL: removed += @units, only unsold ones), once per
 * @id among both kinds: the definition, the record and one event in one
 * transaction.
 */
static int
stock_change(struct sk_store *st, uint32_t item, uint8_t tag, uint64_t id, uint64_t units,
	     int64_t now_ns)
{
	uint8_t other = tag == ITEM_TAG_RESTOCK ? ITEM_TAG_REMOVAL : ITEM_TAG_RESTOCK;
	struct sk_store_activity a;
	struct sk_store_ledger led;
	struct wtxn w;
	uint64_t had, cap;
	int rc;

	if (units == 0 || id == 0)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, item, &a);
	if (rc != 0)
		goto out;
	rc = stock_record(st, w.txn, item, tag, id, &had);
	if (rc == 0) {
		rc = had == units ? SK_STORE_UNCHANGED : -EEXIST;
		goto out;
	}
	if (rc == -ENOENT) {
		rc = stock_record(st, w.txn, item, other, id, &had);
		rc = rc == 0 ? -EEXIST : rc == -ENOENT ? 0 : rc;
	}
	if (rc == 0 && a.closed_ns != 0)
		rc = -EPERM;
	if (rc == 0 && tag == ITEM_TAG_REMOVAL)
		rc = store_ledger_load(st, w.txn, item, &led, NULL);
	if (rc != 0)
		goto out;
	if (tag == ITEM_TAG_RESTOCK) {
		if (__builtin_add_overflow(a.added, units, &a.added) ||
		    __builtin_add_overflow(sk_store_activity_base(&a), a.added, &cap)) {
			rc = -EOVERFLOW;
			goto out;
		}
	} else {
		/* Only unsold units: what stays must cover the live orders. */
		uint64_t unsold;
		if (store_act_unsold(&a, &led, &unsold) != 0 || unsold < units) {
			rc = -ERANGE;
			goto out;
		}
		a.removed += units;
	}
	a.updated_ns = now_ns;
	rc = store_act_store(st, w.txn, &a);
	if (rc != 0)
		goto out;
	rc = store_stock_record_put(st, w.txn, item, tag, id, units, now_ns);
	struct sk_store_event ev = {.type = tag == ITEM_TAG_RESTOCK ? SK_STORE_EV_RESTOCKED
								    : SK_STORE_EV_REMOVED,
				    .item = item,
				    .units = units,
				    .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
out:
	store_wtxn_abort(&w);
	return rc;
}

int
sk_store_activity_restock(struct sk_store *st, uint32_t item, uint64_t restock_id, uint64_t units,
			  int64_t now_ns)
{
	return stock_change(st, item, ITEM_TAG_RESTOCK, restock_id, units, now_ns);
}

int
sk_store_activity_remove(struct sk_store *st, uint32_t item, uint64_t request_id, uint64_t units,
			 int64_t now_ns)
{
	return stock_change(st, item, ITEM_TAG_REMOVAL, request_id, units, now_ns);
}

int
sk_store_activity_removal(struct sk_store *st, uint32_t item, uint64_t request_id, uint64_t *units)
{
	MDB_txn *txn;
	uint64_t u;
	int rc = store_rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = stock_record(st, txn, item, ITEM_TAG_REMOVAL, request_id, units);
	if (rc == -ENOENT && stock_record(st, txn, item, ITEM_TAG_RESTOCK, request_id, &u) == 0)
		rc = -EEXIST;
	store_rtxn_end(st, txn);
	return rc;
}

/*
 * act_update - load the activity of @item in a write transaction, let
 * @change alter it (returning 0 to store it with one event @ev, or a value
 * that ends the call unchanged: SK_STORE_UNCHANGED or an error), store it.
 * Closed activities are refused (-EPERM) before @change runs.
 */
static int
act_update(struct sk_store *st, uint32_t item, int64_t now_ns,
	   int (*change)(struct sk_store_activity *a, const void *arg, int64_t now_ns,
			 struct sk_store_event *ev),
	   const void *arg)
{
	struct sk_store_activity a;
	struct sk_store_event ev = {.item = item, .time_ns = now_ns};
	struct wtxn w;
	int rc = store_wtxn_begin(st, &w);

	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, item, &a);
	if (rc == 0 && a.closed_ns != 0)
		rc = -EPERM;
	if (rc == 0)
		rc = change(&a, arg, now_ns, &ev);
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	a.updated_ns = now_ns;
	return store_wtxn_end(st, &w, store_act_store(st, w.txn, &a), &ev);
}

static int
pause_change(struct sk_store_activity *a, const void *arg, int64_t now_ns,
	     struct sk_store_event *ev)
{
	bool paused = *(const bool *)arg;

	if (paused == (a->paused_ns != 0))
		return SK_STORE_UNCHANGED;
	a->paused_ns = paused ? (now_ns > 0 ? now_ns : 1) : 0;
	ev->type = paused ? SK_STORE_EV_PAUSED : SK_STORE_EV_RESUMED;
	return 0;
}

int
sk_store_activity_pause(struct sk_store *st, uint32_t item, bool paused, int64_t now_ns)
{
	return act_update(st, item, now_ns, pause_change, &paused);
}

static int
extend_change(struct sk_store_activity *a, const void *arg, int64_t now_ns,
	      struct sk_store_event *ev)
{
	int64_t end = *(const int64_t *)arg;

	(void)now_ns;
	if (end == a->end_ns)
		return SK_STORE_UNCHANGED;
	if (end < a->end_ns)
		return -ERANGE;
	a->end_ns = end;
	ev->type = SK_STORE_EV_EXTENDED;
	ev->def = (struct sk_store_event_def){.has_def = true,
					      .per_user_limit = a->per_user_limit,
					      .price = a->price,
					      .start_ns = a->start_ns,
					      .end_ns = a->end_ns};
	memcpy(ev->def.name, a->name, sizeof(ev->def.name));
	return 0;
}

int
sk_store_activity_extend(struct sk_store *st, uint32_t item, int64_t end_ns, int64_t now_ns)
{
	if (end_ns <= 0)
		return -EINVAL;
	return act_update(st, item, now_ns, extend_change, &end_ns);
}
