/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_store_verify() (sk_store.h): the store's invariants checked in one
 * read snapshot - complete orders, `by_user` and `deadlines` exactly the
 * live and unpaid orders, ledgers equal to the holdings, events below the
 * next sequence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "sk_store_impl.h"

#define VERIFY_FAIL(...)                                                                           \
	do {                                                                                       \
		sk_set_err(err, errlen, __VA_ARGS__);                                              \
		rc = -EBADMSG;                                                                     \
		goto out;                                                                          \
	} while (0)

/* index_has - whether @dbi holds key @k (@len bytes) with the value @line. */
static int
index_has(MDB_txn *txn, MDB_dbi dbi, const uint8_t *k, size_t len, uint8_t line, bool *has)
{
	MDB_val key = mval(k, len), data;
	int rc = mdb_get(txn, dbi, &key, &data);

	*has = rc == 0 && data.mv_size == IDX_VAL_LEN && *(const uint8_t *)data.mv_data == line;
	return rc == MDB_NOTFOUND ? 0 : store_lmdb_err(rc);
}

/* verify_index - the `user_orders` and `state_orders` entries of line @l. */
static int
verify_index(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l, char *err,
	     size_t errlen)
{
	uint8_t k[USERIDX_KEY_LEN];
	bool has;
	int rc;

	if (!st->has_index)
		return 0;
	useridx_key(k, l->rec.item, l->rec.user, l->rec.id);
	rc = index_has(txn, st->user_orders, k, USERIDX_KEY_LEN, l->rec.line, &has);
	if (rc == 0 && !has)
		VERIFY_FAIL("user_orders: order %#" PRIx64 " line %u missing", l->rec.id,
			    l->rec.line);
	stateidx_key(k, l->rec.item, l->state, l->rec.id);
	if (rc == 0)
		rc = index_has(txn, st->state_orders, k, STATEIDX_KEY_LEN, l->rec.line, &has);
	if (rc == 0 && !has)
		VERIFY_FAIL("state_orders: order %#" PRIx64 " line %u (%s) missing", l->rec.id,
			    l->rec.line, sk_order_status_name(l->state));
out:
	return rc;
}

/* verify_orders - walk `orders`: complete carts, their by_user, deadlines and indexes. */
static int
verify_orders(struct sk_store *st, MDB_txn *txn, struct itab *t, uint64_t *live_lines,
	      uint64_t *with_deadline, char *err, size_t errlen)
{
	uint8_t k[DEADLINE_KEY_LEN], v[BYUSER_VAL_LEN];
	struct walk wk = {0}, bu = {0};
	MDB_val bk, bd;
	struct sk_store_line l, first = {0};
	int rc;

	*live_lines = *with_deadline = 0;
	rc = store_walk_open(&wk, st, txn, st->orders);
	if (rc == 0)
		rc = store_walk_open(&bu, st, txn, st->by_user);
	if (rc != 0)
		goto out;
	unsigned expect = 0;
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		if (wk.key.mv_size != ORDER_KEY_LEN || !order_val_ok(wk.data.mv_size))
			VERIFY_FAIL("orders: bad key or value size");
		uint64_t id = get_be64(wk.key.mv_data);
		uint8_t line = ((uint8_t *)wk.key.mv_data)[8];
		store_order_dec(&l, id, line, wk.data.mv_data, wk.data.mv_size);
		if (line != expect || (line > 0 && id != first.rec.id))
			VERIFY_FAIL("orders: order %#" PRIx64 " line %u out of place", id, line);
		if (line == 0)
			first = l;
		else if (l.state != first.state || l.rec.nlines != first.rec.nlines ||
			 l.rec.user != first.rec.user || l.deadline_ns != first.deadline_ns)
			VERIFY_FAIL("orders: order %#" PRIx64 " lines disagree", id);
		expect = line + 1u >= l.rec.nlines ? 0 : line + 1u;

		/* returned: cancelled all, refunded all, paid the refunded
		 * ones, confirmed none; refunded only out of paid. */
		bool ok = false;
		switch (l.state) {
		case SK_ORDER_CONFIRMED:
			ok = l.rec.returned == 0 && l.refunded == 0;
			break;
		case SK_ORDER_PAID:
			ok = l.rec.returned == l.refunded && l.refunded <= l.rec.qty;
			break;
		case SK_ORDER_CANCELLED:
			ok = l.rec.returned == l.rec.qty && l.refunded == 0;
			break;
		case SK_ORDER_REFUNDED:
			ok = l.rec.returned == l.rec.qty && l.refunded == l.rec.qty;
			break;
		default:
			VERIFY_FAIL("orders: order %#" PRIx64 " in state %u", id, l.state);
		}
		if (!ok)
			VERIFY_FAIL("orders: order %#" PRIx64
				    " (%s) returned %u, refunded %u of %u",
				    id, sk_order_status_name(l.state), l.rec.returned, l.refunded,
				    l.rec.qty);
		rc = verify_index(st, txn, &l, err, errlen);
		if (rc != 0)
			goto out;
		uint32_t left = l.rec.qty - l.rec.returned;
		bool live = left > 0;
		byuser_key(k, l.rec.item, l.rec.user);
		byuser_val(v, id, left);
		bk = mval(k, BYUSER_KEY_LEN), bd = mval(v, BYUSER_VAL_LEN);
		int br = mdb_cursor_get(bu.cur, &bk, &bd, MDB_GET_BOTH);
		if (br != 0 && br != MDB_NOTFOUND) {
			rc = store_lmdb_err(br);
			goto out;
		}
		if (live != (br == 0))
			VERIFY_FAIL("by_user: order %#" PRIx64 " (%s) %s", id,
				    sk_order_status_name(l.state),
				    live ? "missing" : "still present");
		if (live) {
			bool fresh;
			struct item_ent *e = store_itab_get(t, l.rec.item, &fresh);
			if (e == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			e->sum += left;
			(*live_lines)++;
		}
		if (line == 0 && l.deadline_ns != 0) {
			deadline_key(k, l.deadline_ns, id);
			bk = mval(k, DEADLINE_KEY_LEN);
			int dr = mdb_get(txn, st->deadlines, &bk, &bd);
			if (dr != 0 && dr != MDB_NOTFOUND) {
				rc = store_lmdb_err(dr);
				goto out;
			}
			bool want = l.state == SK_ORDER_CONFIRMED;
			if (want != (dr == 0))
				VERIFY_FAIL("deadlines: order %#" PRIx64 " (%s) %s", id,
					    sk_order_status_name(l.state),
					    want ? "missing" : "still present");
			*with_deadline += want;
		}
	}
	if (wk.rc == 0 && expect != 0)
		VERIFY_FAIL("orders: order %#" PRIx64 " incomplete", first.rec.id);
out:
	rc = store_walk_end(&bu, rc);
	return store_walk_end(&wk, rc);
}

int
sk_store_verify(struct sk_store *st, char *err, size_t errlen)
{
	struct itab t = {0};
	MDB_txn *txn = NULL;
	MDB_stat ms, ol;
	uint64_t live_lines, with_deadline, next, last = 0;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	rc = store_itab_init(&t, 64);
	if (rc == 0)
		rc = store_rtxn_begin(st, &txn);
	if (rc == 0)
		rc = verify_orders(st, txn, &t, &live_lines, &with_deadline, err, errlen);
	if (rc != 0)
		goto out;
	rc = store_lmdb_err(mdb_stat(txn, st->by_user, &ms));
	if (rc != 0)
		goto out;
	if (ms.ms_entries != live_lines)
		VERIFY_FAIL("by_user: %zu entries for %" PRIu64 " live lines",
			    (size_t)ms.ms_entries, live_lines);
	rc = store_lmdb_err(mdb_stat(txn, st->deadlines, &ms));
	if (rc != 0)
		goto out;
	if (ms.ms_entries != with_deadline)
		VERIFY_FAIL("deadlines: %zu entries for %" PRIu64 " unpaid orders",
			    (size_t)ms.ms_entries, with_deadline);
	/* Every line's entries exist (above): no others means as many. */
	for (int i = 0; st->has_index && i < 2; i++) {
		rc = store_lmdb_err(mdb_stat(txn, i ? st->state_orders : st->user_orders, &ms));
		if (rc == 0)
			rc = store_lmdb_err(mdb_stat(txn, st->orders, &ol));
		if (rc != 0)
			goto out;
		if (ms.ms_entries != ol.ms_entries)
			VERIFY_FAIL("%s: %zu entries for %zu order lines",
				    i ? "state_orders" : "user_orders", (size_t)ms.ms_entries,
				    (size_t)ol.ms_entries);
	}

	/* Every ledger against the live units counted above. */
	struct walk wk;
	store_walk_open(&wk, st, txn, st->items);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		const uint8_t *kp = wk.key.mv_data;
		if (wk.key.mv_size != ITEM_KEY_LEN ||
		    (kp[4] != ITEM_TAG_LEDGER && kp[4] != ITEM_TAG_ARCHIVE))
			continue;
		bool fresh;
		struct item_ent *e = store_itab_get(&t, get_be32(kp), &fresh);
		if (e == NULL) {
			rc = -ENOMEM;
			break;
		}
		if (kp[4] == ITEM_TAG_ARCHIVE) {
			e->archived = true;
			continue;
		}
		if (wk.data.mv_size != LEDGER_VAL_LEN) {
			rc = -EIO;
			break;
		}
		store_ledger_dec(&e->l, wk.data.mv_data);
		e->has_ledger = true;
	}
	rc = store_walk_end(&wk, rc);
	if (rc != 0)
		goto out;
	for (size_t i = 0; i <= t.mask; i++) {
		const struct item_ent *e = &t.e[i];
		if (e->item == 0)
			continue;
		/* An archived item's orders leave the store, its ledger stays. */
		if (e->l.returned > e->l.sold ||
		    (e->archived ? sk_store_ledger_live(&e->l) < e->sum
				 : sk_store_ledger_live(&e->l) != e->sum))
			VERIFY_FAIL("items: item %u ledger live %" PRIu64 ", orders hold %" PRIu64,
				    e->item, sk_store_ledger_live(&e->l), e->sum);
	}

	rc = store_meta_get_u64(st, txn, META_EVENT_NEXT, &next);
	if (rc != 0)
		goto out;
	store_walk_open(&wk, st, txn, st->events);
	if (store_walk_get(&wk, MDB_LAST) && wk.key.mv_size == EVENT_KEY_LEN)
		last = get_be64(wk.key.mv_data);
	rc = store_walk_end(&wk, 0);
	if (rc != 0)
		goto out;
	if (next == 0 || last >= next)
		VERIFY_FAIL("events: last seq %" PRIu64 ", next %" PRIu64, last, next);
out:
	if (txn != NULL)
		store_rtxn_end(st, txn);
	free(t.e);
	return rc;
}
