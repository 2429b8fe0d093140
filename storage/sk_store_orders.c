/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Orders in the store (sk_store.h): sk_store_put_orders() (carts checked,
 * guarded against oversell and written with their by_user entries,
 * deadline, ledgers and event), sk_store_order_move() (the compare-and-set
 * of a state), and the reads: sk_store_order_get(),
 * sk_store_holdings_foreach(), sk_store_deadlines_foreach().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_store_impl.h"

/* ------------------------------------------------------------------ orders */

/*
 * cart_len - records of the order starting at @r: the run of adjacent
 * records with its id whose line is not 0 (a new line 0 starts a new cart,
 * e.g. a replay of the same order within one batch). Sets *valid.
 */
static size_t
cart_len(const struct sk_order_rec *r, size_t left, bool *valid)
{
	size_t len = sk_order_cart_len(r, left);
	bool ok = r[0].id != 0 && r[0].user != 0 && r[0].nlines == len;
	for (size_t j = 0; ok && j < len; j++) {
		const struct sk_order_rec *l = &r[j];
		ok = l->line == j && l->nlines == r[0].nlines && l->user == r[0].user &&
		     l->item != 0 && l->qty != 0 && l->returned == 0;
		for (size_t m = 0; ok && m < j; m++)
			ok = r[m].item != l->item;
	}
	*valid = ok;
	return len;
}

/* cart_stored - NEW if order r[0].id is absent, else DUP or CONFLICT. */
static int
cart_stored(struct sk_store *st, MDB_txn *txn, const struct sk_order_rec *r, size_t len,
	    uint8_t *oc)
{
	uint8_t k[ORDER_KEY_LEN];
	MDB_val key, data;

	*oc = SK_STORE_NEW;
	for (size_t j = 0; j < len; j++) {
		order_key(k, r[j].id, r[j].line);
		key = mval(k, sizeof(k));
		int rc = mdb_get(txn, st->orders, &key, &data);
		if (rc == MDB_NOTFOUND) {
			if (j > 0)
				*oc = SK_STORE_CONFLICT;
			return 0;
		}
		if (rc != 0)
			return store_lmdb_err(rc);
		if (!order_val_ok(data.mv_size))
			return -EIO;
		struct sk_store_line l;
		store_order_dec(&l, r[j].id, r[j].line, data.mv_data, data.mv_size);
		/* A replay carries the very record, sale time included; an id
		 * minted again (an old-layout id reproduced by a later run,
		 * docs/stock.md) differs at least there. */
		if (l.rec.user != r[j].user || l.rec.item != r[j].item || l.rec.qty != r[j].qty ||
		    l.rec.price != r[j].price || l.rec.nlines != r[j].nlines ||
		    l.rec.time_ns != r[j].time_ns) {
			*oc = SK_STORE_CONFLICT;
			return 0;
		}
	}
	*oc = SK_STORE_DUP;
	return 0;
}

/* user_units - units the live orders of @user hold in @item. */
static int
user_units(struct walk *bu, uint32_t item, uint64_t user, uint64_t *units)
{
	uint8_t k[BYUSER_KEY_LEN];

	*units = 0;
	byuser_key(k, item, user);
	for (bool at = store_walk_seek(bu, MDB_SET, k, sizeof(k)); at;
	     at = store_walk_get(bu, MDB_NEXT_DUP)) {
		if (bu->data.mv_size != BYUSER_VAL_LEN)
			return -EIO;
		*units += get_be32((const uint8_t *)bu->data.mv_data + 8);
	}
	return bu->rc;
}

/* item_touch - the batch entry of @item, with its activity and ledger. */
static int
item_touch(struct sk_store *st, MDB_txn *txn, struct itab *t, uint32_t item, struct item_ent **out)
{
	bool fresh;
	struct item_ent *e = store_itab_get(t, item, &fresh);

	if (e == NULL)
		return -ENOMEM;
	*out = e;
	if (!fresh)
		return 0;
	struct sk_store_activity a;
	int rc = store_act_load(st, txn, item, &a);
	if (rc == 0) {
		e->has_act = true;
		e->limit = a.per_user_limit;
		e->cap = sk_store_activity_units(&a);
		e->timeout_ns = a.pay_timeout_ns;
	} else if (rc != -ENOENT) {
		return rc;
	}
	return store_ledger_load(st, txn, item, &e->l, NULL);
}

/*
 * cart_guard - check the cart against its items' activities and compute its
 * deadline. Sets *oc to NEW, OVERSELL or OVERLIMIT.
 */
static int
cart_guard(struct sk_store *st, MDB_txn *txn, struct walk *bu, struct itab *t,
	   const struct sk_order_rec *r, size_t len, int64_t default_timeout_ns, uint8_t *oc,
	   int64_t *deadline)
{
	*oc = SK_STORE_NEW;
	*deadline = 0;
	for (size_t j = 0; j < len; j++) {
		struct item_ent *e;
		int rc = item_touch(st, txn, t, r[j].item, &e);
		if (rc != 0)
			return rc;
		if (e->has_act) {
			uint64_t live = sk_store_ledger_live(&e->l);
			if (live > e->cap || r[j].qty > e->cap - live) {
				*oc = SK_STORE_OVERSELL;
				return 0;
			}
			uint64_t held;
			rc = user_units(bu, r[j].item, r[j].user, &held);
			if (rc != 0)
				return rc;
			if (held + r[j].qty > e->limit) {
				*oc = SK_STORE_OVERLIMIT;
				return 0;
			}
		}
		int64_t to = e->has_act && e->timeout_ns > 0 ? e->timeout_ns : default_timeout_ns;
		if (to > 0) {
			int64_t d;
			if (__builtin_add_overflow(r[j].time_ns, to, &d))
				d = INT64_MAX;
			if (d < 1)
				d = 1;
			if (*deadline == 0 || d < *deadline)
				*deadline = d;
		}
	}
	return 0;
}

/* cart_write - store the lines of a new order and everything that goes with it. */
static int
cart_write(struct sk_store *st, struct wtxn *w, struct itab *t, const struct sk_order_rec *r,
	   size_t len, int64_t deadline, int64_t now_ns, uint64_t *units)
{
	uint8_t k[DEADLINE_KEY_LEN], v[ORDER_VAL_LEN];
	MDB_val key, data;
	int rc;

	*units = 0;
	for (size_t j = 0; j < len; j++) {
		struct sk_store_line l = {.rec = r[j],
					  .state = SK_ORDER_CONFIRMED,
					  .deadline_ns = deadline,
					  .stored_ns = now_ns,
					  .updated_ns = now_ns};
		order_key(k, r[j].id, r[j].line);
		store_order_enc(v, &l);
		key = mval(k, ORDER_KEY_LEN), data = mval(v, ORDER_VAL_LEN);
		rc = mdb_put(w->txn, st->orders, &key, &data, MDB_NOOVERWRITE);
		if (rc != 0)
			return rc == MDB_KEYEXIST ? -EIO : store_lmdb_err(rc);
		rc = store_index_add(st, w->txn, &l);
		if (rc != 0)
			return rc;

		byuser_key(k, r[j].item, r[j].user);
		byuser_val(v, r[j].id, r[j].qty);
		key = mval(k, BYUSER_KEY_LEN), data = mval(v, BYUSER_VAL_LEN);
		rc = mdb_put(w->txn, st->by_user, &key, &data, MDB_NODUPDATA);
		if (rc != 0)
			return rc == MDB_KEYEXIST ? -EIO : store_lmdb_err(rc);

		bool fresh;
		struct item_ent *e = store_itab_get(t, r[j].item, &fresh);
		if (e == NULL)
			return -ENOMEM;
		SK_ASSERT(!fresh); /* touched by cart_guard */
		e->l.sold += r[j].qty;
		e->l.lines++;
		e->dirty = true;
		*units += r[j].qty;
	}
	if (deadline != 0) {
		deadline_key(k, deadline, r[0].id);
		key = mval(k, DEADLINE_KEY_LEN), data = mval(NULL, 0);
		rc = mdb_put(w->txn, st->deadlines, &key, &data, 0);
		if (rc != 0)
			return store_lmdb_err(rc);
	}
	struct sk_store_event ev = {.type = SK_STORE_EV_CONFIRMED,
				    .nlines = r[0].nlines,
				    .item = r[0].item,
				    .order = r[0].id,
				    .user = r[0].user,
				    .units = *units,
				    .time_ns = now_ns};
	return store_event_add(st, w, &ev);
}

int
sk_store_put_orders(struct sk_store *st, const struct sk_order_rec *recs, size_t n,
		    int64_t default_timeout_ns, int64_t now_ns, uint8_t *outcome,
		    struct sk_store_put_stats *stats)
{
	struct sk_store_put_stats s = {0};
	struct itab t = {0};
	struct wtxn w = {0};
	struct walk bu = {0};
	int rc;

	if (stats != NULL)
		*stats = s;
	if (n == 0)
		return 0;
	if (recs == NULL)
		return -EINVAL;
	rc = store_itab_init(&t, 16);
	if (rc != 0)
		goto out;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		goto out;
	rc = store_walk_open(&bu, st, w.txn, st->by_user);
	if (rc != 0)
		goto out;

	for (size_t i = 0, len; i < n; i += len) {
		const struct sk_order_rec *r = recs + i;
		bool valid;
		uint8_t oc = SK_STORE_INVALID;
		int64_t deadline = 0;
		uint64_t units = 0;

		len = cart_len(r, n - i, &valid);
		if (valid)
			rc = cart_stored(st, w.txn, r, len, &oc);
		if (rc == 0 && oc == SK_STORE_NEW)
			rc = cart_guard(st, w.txn, &bu, &t, r, len, default_timeout_ns, &oc,
					&deadline);
		if (rc == 0 && oc == SK_STORE_NEW)
			rc = cart_write(st, &w, &t, r, len, deadline, now_ns, &units);
		if (rc != 0)
			goto out;
		if (outcome != NULL)
			memset(outcome + i, oc, len);
		if (oc == SK_STORE_NEW) {
			s.orders_new++;
			s.lines_new += (uint32_t)len;
			s.units_new += units;
		} else if (oc == SK_STORE_DUP) {
			s.orders_dup++;
		} else {
			s.orders_refused++;
		}
	}
	for (size_t i = 0; i <= t.mask && rc == 0; i++)
		if (t.e[i].item != 0 && t.e[i].dirty)
			rc = store_ledger_store(st, w.txn, t.e[i].item, &t.e[i].l);
	if (rc != 0)
		goto out;
	store_walk_end(&bu, 0);
	s.event_first = w.seq_first;
	s.event_last = w.seq_last;
	rc = store_wtxn_commit(st, &w);
	if (rc == 0 && stats != NULL)
		*stats = s;
out:
	store_walk_end(&bu, rc);
	store_wtxn_abort(&w);
	free(t.e);
	return rc;
}

const char *
sk_store_outcome_name(unsigned outcome)
{
	static const char *const names[] = {
		[SK_STORE_NEW] = "new",		  [SK_STORE_DUP] = "dup",
		[SK_STORE_CONFLICT] = "conflict", [SK_STORE_INVALID] = "invalid",
		[SK_STORE_OVERSELL] = "oversell", [SK_STORE_OVERLIMIT] = "overlimit",
	};
	return outcome < SK_ARRAY_SIZE(names) ? names[outcome] : "?";
}

static uint8_t
event_of_state(unsigned to)
{
	switch (to) {
	case SK_ORDER_PAID:
		return SK_STORE_EV_PAID;
	case SK_ORDER_CANCELLED:
		return SK_STORE_EV_CANCELLED;
	case SK_ORDER_FAILED:
		return SK_STORE_EV_FAILED;
	default:
		return SK_STORE_EV_CONFIRMED;
	}
}

int
store_byuser_set(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l,
		 uint32_t old_live)
{
	uint8_t k[BYUSER_KEY_LEN], v[BYUSER_VAL_LEN];
	uint32_t live = l->rec.returned < l->rec.qty ? l->rec.qty - l->rec.returned : 0;
	MDB_val key, data;
	int rc;

	byuser_key(k, l->rec.item, l->rec.user);
	key = mval(k, sizeof(k));
	if (old_live > 0) {
		byuser_val(v, l->rec.id, old_live);
		data = mval(v, sizeof(v));
		rc = mdb_del(txn, st->by_user, &key, &data);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return store_lmdb_err(rc);
	}
	if (live == 0)
		return 0;
	byuser_val(v, l->rec.id, live);
	data = mval(v, sizeof(v));
	rc = mdb_put(txn, st->by_user, &key, &data, MDB_NODUPDATA);
	return rc == MDB_KEYEXIST ? 0 : store_lmdb_err(rc);
}

int
store_deadline_del(struct sk_store *st, MDB_txn *txn, int64_t deadline_ns, uint64_t id)
{
	uint8_t k[DEADLINE_KEY_LEN];

	if (deadline_ns == 0)
		return 0;
	deadline_key(k, deadline_ns, id);
	MDB_val key = mval(k, DEADLINE_KEY_LEN);
	int rc = mdb_del(txn, st->deadlines, &key, NULL);
	return rc == MDB_NOTFOUND ? 0 : store_lmdb_err(rc);
}

/* line_move - apply a state change to one line's by_user entry and ledger. */
static int
line_move(struct sk_store *st, MDB_txn *txn, struct sk_store_line *l, unsigned to)
{
	struct sk_store_ledger led;
	int rc = store_ledger_load(st, txn, l->rec.item, &led, NULL);

	if (rc != 0)
		return rc;
	if (to == SK_ORDER_CANCELLED || to == SK_ORDER_FAILED) {
		uint32_t old_live = l->rec.qty - l->rec.returned;
		led.returned += old_live;
		led.lines_cancelled++;
		l->rec.returned = l->rec.qty;
		rc = store_byuser_set(st, txn, l, old_live);
		if (rc != 0)
			return rc;
	} else if (to == SK_ORDER_PAID) {
		led.paid += l->rec.qty;
		led.lines_paid++;
	}
	return store_ledger_store(st, txn, l->rec.item, &led);
}

int
store_cart_line(struct walk *wk, uint64_t id, unsigned j, struct sk_store_line *l)
{
	uint8_t k[ORDER_KEY_LEN];
	bool at;

	if (j == 0) {
		order_key(k, id, 0);
		at = store_walk_seek(wk, MDB_SET_KEY, k, sizeof(k));
	} else {
		at = store_walk_get(wk, MDB_NEXT);
	}
	if (!at)
		return wk->rc != 0 ? wk->rc : j == 0 ? -ENOENT : -EIO;
	if (wk->key.mv_size != ORDER_KEY_LEN || !order_val_ok(wk->data.mv_size) ||
	    get_be64(wk->key.mv_data) != id || ((uint8_t *)wk->key.mv_data)[8] != j)
		return -EIO;
	store_order_dec(l, id, (uint8_t)j, wk->data.mv_data, wk->data.mv_size);
	return 0;
}

int
sk_store_order_move(struct sk_store *st, uint64_t id, unsigned from, unsigned to, int64_t now_ns,
		    unsigned *current)
{
	uint8_t v[ORDER_VAL_LEN];
	struct sk_store_line l, first = {0};
	struct wtxn w;
	struct walk wk;
	MDB_val data;
	uint64_t units = 0;
	int rc;

	if (!sk_order_transition_ok(from, to) || to == SK_ORDER_REFUNDED)
		return -EINVAL; /* refunds: sk_store_payment_apply() */
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	store_walk_open(&wk, st, w.txn, st->orders);
	for (unsigned j = 0;; j++) {
		rc = store_cart_line(&wk, id, j, &l);
		if (rc != 0)
			break;
		if (j == 0) {
			first = l;
			if (current != NULL)
				*current = l.state;
			if (l.state != from) {
				rc = -EALREADY;
				break;
			}
		}
		rc = line_move(st, w.txn, &l, to);
		if (rc != 0)
			break;
		l.state = (uint8_t)to;
		l.updated_ns = now_ns;
		rc = store_index_move(st, w.txn, &l, from);
		if (rc != 0)
			break;
		store_order_enc(v, &l);
		data = mval(v, ORDER_VAL_LEN);
		rc = store_lmdb_err(mdb_cursor_put(wk.cur, &wk.key, &data, MDB_CURRENT));
		if (rc != 0)
			break;
		units += l.rec.qty;
		if (j + 1 >= first.rec.nlines)
			break;
	}
	rc = store_walk_end(&wk, rc);
	if (rc != 0)
		goto out;
	if (to != SK_ORDER_CONFIRMED) {
		rc = store_deadline_del(st, w.txn, first.deadline_ns, id);
		if (rc != 0)
			goto out;
	}
	struct sk_store_event ev = {.type = event_of_state(to),
				    .nlines = first.rec.nlines,
				    .item = first.rec.item,
				    .order = id,
				    .user = first.rec.user,
				    .units = units,
				    .time_ns = now_ns};
	return store_wtxn_end(st, &w, 0, &ev);
out:
	store_wtxn_abort(&w);
	return rc;
}

/* ------------------------------------------------------------------- reads */

int
sk_store_order_get(struct sk_store *st, uint64_t id, struct sk_store_line *lines, unsigned max,
		   unsigned *nlines)
{
	struct sk_store_line l;
	struct walk wk;
	unsigned nl = 0;
	int rc = store_walk_open(&wk, st, NULL, st->orders);

	if (rc != 0)
		return store_walk_end(&wk, rc);
	for (unsigned j = 0;; j++) {
		rc = store_cart_line(&wk, id, j, &l);
		if (rc != 0)
			break;
		if (j == 0) {
			nl = l.rec.nlines;
			if (nl > max) {
				rc = -ENOSPC;
				break;
			}
		}
		lines[j] = l;
		if (j + 1 >= nl)
			break;
	}
	if (nlines != NULL)
		*nlines = nl;
	return store_walk_end(&wk, rc);
}

int
sk_store_holdings_foreach(struct sk_store *st, uint32_t item, sk_store_holding_cb cb, void *arg)
{
	uint8_t k[BYUSER_KEY_LEN];
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, NULL, st->by_user);
	byuser_key(k, item, 0);
	bool at = store_walk_seek(&wk, item != 0 ? MDB_SET_RANGE : MDB_FIRST, k, sizeof(k));
	while (at) {
		struct sk_store_holding h = {0};
		if (wk.key.mv_size != BYUSER_KEY_LEN) {
			rc = -EIO;
			break;
		}
		h.item = get_be32(wk.key.mv_data);
		h.user = get_be64((const uint8_t *)wk.key.mv_data + 4);
		if (item != 0 && h.item != item)
			break;
		for (; at; at = store_walk_get(&wk, MDB_NEXT_DUP)) {
			if (wk.data.mv_size != BYUSER_VAL_LEN) {
				rc = -EIO;
				break;
			}
			h.last_order = get_be64(wk.data.mv_data); /* dups ascend by id */
			h.units += get_be32((const uint8_t *)wk.data.mv_data + 8);
			h.orders++;
		}
		if (rc != 0 || wk.rc != 0 || (rc = cb(&h, arg)) != 0)
			break;
		at = store_walk_get(&wk, MDB_NEXT_NODUP);
	}
	return store_walk_end(&wk, rc);
}

int
sk_store_deadlines_foreach(struct sk_store *st, int64_t upto_ns, sk_store_deadline_cb cb, void *arg)
{
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, NULL, st->deadlines);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		if (wk.key.mv_size != DEADLINE_KEY_LEN) {
			rc = -EIO;
			break;
		}
		int64_t d = (int64_t)get_be64(wk.key.mv_data);
		if (d > upto_ns ||
		    (rc = cb(d, get_be64((const uint8_t *)wk.key.mv_data + 8), arg)) != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}
