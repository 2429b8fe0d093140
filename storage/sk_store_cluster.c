/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lease journal of a cluster activity (sk_store_cluster.h): one record
 * per item under (item, ITEM_TAG_CLUSTER), next to its definition, written
 * in the same transaction as the restock or removal that carries its units;
 * its forgotten members under (item, ITEM_TAG_CLUSTER, 1).
 */
#include <errno.h>

#include "sk_stock.h"
#include "sk_store_cluster.h"
#include "sk_store_impl.h"

#define JOURNAL_VAL_LEN 56 /* next seq, pending kind, seq, units, granted, given back, ops */
#define FORGOT_ID	1  /* the key id of the forgotten members (the journal's: 0) */
#define FORGOT_LEN	(1 + SK_STORE_MEMBER_ID_MAX + 8) /* id length, id (0-padded), held */

static void
journal_key(uint8_t k[RESTOCK_KEY_LEN], uint32_t item)
{
	item_key(k, item, ITEM_TAG_CLUSTER, 0);
}

/* journal_load - the journal of @item in @txn (zero, next_seq 1, if none). */
static int
journal_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_cluster *c)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	journal_key(k, item);
	key = mval(k, RESTOCK_KEY_LEN);
	memset(c, 0, sizeof(*c));
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc == MDB_NOTFOUND) {
		c->next_seq = 1;
		return 0;
	}
	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size != JOURNAL_VAL_LEN)
		return -EIO;
	const uint8_t *v = data.mv_data;
	c->next_seq = get_be64(v);
	c->pending_kind = (uint8_t)get_be64(v + 8);
	c->pending_seq = get_be64(v + 16);
	c->pending_units = get_be64(v + 24);
	c->granted = get_be64(v + 32);
	c->given_back = get_be64(v + 40);
	c->ops = get_be64(v + 48);
	if (c->next_seq == 0 || c->pending_kind > SK_STORE_CLUSTER_GIVEBACK ||
	    c->given_back > c->granted)
		return -EIO;
	return 0;
}

static int
journal_store(struct sk_store *st, MDB_txn *txn, uint32_t item, const struct sk_store_cluster *c)
{
	uint8_t k[RESTOCK_KEY_LEN], v[JOURNAL_VAL_LEN];

	journal_key(k, item);
	put_be64(v, c->next_seq);
	put_be64(v + 8, c->pending_kind);
	put_be64(v + 16, c->pending_seq);
	put_be64(v + 24, c->pending_units);
	put_be64(v + 32, c->granted);
	put_be64(v + 40, c->given_back);
	put_be64(v + 48, c->ops);
	MDB_val key = mval(k, RESTOCK_KEY_LEN), data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

/* load - the cluster activity of @item and its journal: 0, -ENOENT, -EINVAL. */
static int
load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_activity *a,
     struct sk_store_cluster *c)
{
	int rc = store_act_load(st, txn, item, a);

	if (rc == 0 && !a->cluster)
		rc = -EINVAL;
	return rc != 0 ? rc : journal_load(st, txn, item, c);
}

int
sk_store_cluster_get(struct sk_store *st, uint32_t item, struct sk_store_cluster *c)
{
	struct sk_store_activity a;
	MDB_txn *txn;
	int rc = store_rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = load(st, txn, item, &a, c);
	store_rtxn_end(st, txn);
	return rc;
}

/*
 * end_check - whether op @seq of @kind can end: 0 (it is the pending one),
 * SK_STORE_UNCHANGED (it ended before), -ESTALE.
 */
static int
end_check(const struct sk_store_cluster *c, uint8_t kind, uint64_t seq)
{
	if (c->pending_kind == kind && c->pending_seq == seq)
		return 0;
	if (seq != 0 && seq < c->next_seq && c->pending_seq != seq)
		return SK_STORE_UNCHANGED;
	return -ESTALE;
}

/* pend - make op @kind of @units the pending one; its number in @seq. */
static void
pend(struct sk_store_cluster *c, uint8_t kind, uint64_t units, uint64_t *seq)
{
	c->pending_kind = kind;
	c->pending_seq = c->next_seq++;
	c->pending_units = units;
	*seq = c->pending_seq;
}

static void
unpend(struct sk_store_cluster *c)
{
	c->pending_kind = SK_STORE_CLUSTER_NONE;
	c->pending_seq = c->pending_units = 0;
	c->ops++;
}

int
sk_store_cluster_lease_begin(struct sk_store *st, uint32_t item, uint64_t want, int64_t now_ns,
			     uint64_t *seq)
{
	struct sk_store_activity a;
	struct sk_store_cluster c;
	struct wtxn w;
	int rc;

	if (want == 0 || want > SK_STOCK_MAX_UNITS)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = load(st, w.txn, item, &a, &c);
	if (rc == 0 && a.closed_ns != 0)
		rc = -EPERM;
	if (rc == 0 && c.pending_kind != SK_STORE_CLUSTER_NONE)
		rc = -EBUSY;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	(void)now_ns;
	pend(&c, SK_STORE_CLUSTER_LEASE, want, seq);
	return store_wtxn_end(st, &w, journal_store(st, w.txn, item, &c), NULL);
}

int
sk_store_cluster_lease_end(struct sk_store *st, uint32_t item, uint64_t seq, uint64_t granted,
			   int64_t now_ns)
{
	struct sk_store_activity a;
	struct sk_store_cluster c;
	struct wtxn w;
	int rc = store_wtxn_begin(st, &w);

	if (rc != 0)
		return rc;
	rc = load(st, w.txn, item, &a, &c);
	if (rc == 0)
		rc = end_check(&c, SK_STORE_CLUSTER_LEASE, seq);
	if (rc == 0 && granted > c.pending_units)
		rc = -ERANGE;
	if (rc == 0 && (a.added + granted > SK_STOCK_MAX_UNITS || c.granted + granted < granted))
		rc = -EOVERFLOW;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	unpend(&c);
	c.granted += granted;
	rc = journal_store(st, w.txn, item, &c);
	if (granted == 0)
		return store_wtxn_end(st, &w, rc, NULL);
	a.added += granted;
	a.updated_ns = now_ns;
	if (rc == 0)
		rc = store_act_store(st, w.txn, &a);
	if (rc == 0)
		rc = store_stock_record_put(st, w.txn, item, ITEM_TAG_RESTOCK,
					    SK_STORE_CLUSTER_ID(seq), granted, now_ns);
	struct sk_store_event ev = {
		.type = SK_STORE_EV_RESTOCKED, .item = item, .units = granted, .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
}

int
sk_store_cluster_giveback_begin(struct sk_store *st, uint32_t item, uint64_t units, int64_t now_ns,
				uint64_t *seq)
{
	struct sk_store_activity a;
	struct sk_store_ledger led;
	struct sk_store_cluster c;
	uint64_t unsold;
	struct wtxn w;
	int rc;

	if (units == 0 || units > SK_STOCK_MAX_UNITS)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = load(st, w.txn, item, &a, &c);
	if (rc == 0 && c.pending_kind != SK_STORE_CLUSTER_NONE)
		rc = -EBUSY;
	if (rc == 0)
		rc = store_ledger_load(st, w.txn, item, &led, NULL);
	if (rc == 0 && (store_act_unsold(&a, &led, &unsold) != 0 || unsold < units))
		rc = -ERANGE;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	pend(&c, SK_STORE_CLUSTER_GIVEBACK, units, seq);
	a.removed += units;
	a.updated_ns = now_ns;
	rc = journal_store(st, w.txn, item, &c);
	if (rc == 0)
		rc = store_act_store(st, w.txn, &a);
	if (rc == 0)
		rc = store_stock_record_put(st, w.txn, item, ITEM_TAG_REMOVAL,
					    SK_STORE_CLUSTER_ID(*seq), units, now_ns);
	struct sk_store_event ev = {
		.type = SK_STORE_EV_REMOVED, .item = item, .units = units, .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
}

int
sk_store_cluster_giveback_end(struct sk_store *st, uint32_t item, uint64_t seq, int64_t now_ns)
{
	struct sk_store_activity a;
	struct sk_store_cluster c;
	struct wtxn w;
	int rc = store_wtxn_begin(st, &w);

	(void)now_ns;
	if (rc != 0)
		return rc;
	rc = load(st, w.txn, item, &a, &c);
	if (rc == 0)
		rc = end_check(&c, SK_STORE_CLUSTER_GIVEBACK, seq);
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	c.given_back += c.pending_units;
	unpend(&c);
	return store_wtxn_end(st, &w, journal_store(st, w.txn, item, &c), NULL);
}

/* ----------------------------------------------------- forgotten members */

static int
forgotten_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_forgotten *f)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, ITEM_TAG_CLUSTER, FORGOT_ID);
	key = mval(k, RESTOCK_KEY_LEN);
	memset(f, 0, sizeof(*f));
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size % FORGOT_LEN != 0 || data.mv_size / FORGOT_LEN > SK_STORE_FORGOTTEN_MAX)
		return -EIO;
	const uint8_t *v = data.mv_data;
	f->n = (uint32_t)(data.mv_size / FORGOT_LEN);
	for (uint32_t i = 0; i < f->n; i++, v += FORGOT_LEN) {
		if (v[0] == 0 || v[0] > SK_STORE_MEMBER_ID_MAX)
			return -EIO;
		memcpy(f->m[i].id, v + 1, v[0]);
		f->m[i].id[v[0]] = '\0';
		f->m[i].held = get_be64(v + 1 + SK_STORE_MEMBER_ID_MAX);
	}
	return 0;
}

int
sk_store_cluster_forgotten_get(struct sk_store *st, uint32_t item, struct sk_store_forgotten *f)
{
	struct sk_store_activity a;
	struct sk_store_cluster c;
	MDB_txn *txn;
	int rc = store_rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = load(st, txn, item, &a, &c);
	if (rc == 0)
		rc = forgotten_load(st, txn, item, f);
	store_rtxn_end(st, txn);
	return rc;
}

int
sk_store_cluster_forget(struct sk_store *st, uint32_t item, const char *id, uint64_t held)
{
	uint8_t k[RESTOCK_KEY_LEN], v[SK_STORE_FORGOTTEN_MAX * FORGOT_LEN];
	struct sk_store_forgotten f;
	struct sk_store_activity a;
	struct sk_store_cluster c;
	size_t len = id != NULL ? strlen(id) : 0;
	struct wtxn w;
	int rc;

	if (len == 0 || len > SK_STORE_MEMBER_ID_MAX)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = load(st, w.txn, item, &a, &c);
	if (rc == 0)
		rc = forgotten_load(st, w.txn, item, &f);
	for (uint32_t i = 0; rc == 0 && i < f.n; i++)
		if (strcmp(f.m[i].id, id) == 0)
			rc = f.m[i].held == held ? SK_STORE_UNCHANGED : -EEXIST;
	if (rc == 0 && f.n == SK_STORE_FORGOTTEN_MAX)
		rc = -ENOSPC;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	memcpy(f.m[f.n].id, id, len + 1);
	f.m[f.n++].held = held;
	memset(v, 0, sizeof(v));
	for (uint32_t i = 0; i < f.n; i++) {
		uint8_t *e = v + i * FORGOT_LEN;

		e[0] = (uint8_t)strlen(f.m[i].id);
		memcpy(e + 1, f.m[i].id, e[0]);
		put_be64(e + 1 + SK_STORE_MEMBER_ID_MAX, f.m[i].held);
	}
	item_key(k, item, ITEM_TAG_CLUSTER, FORGOT_ID);
	MDB_val key = mval(k, RESTOCK_KEY_LEN), data = mval(v, f.n * FORGOT_LEN);
	return store_wtxn_end(st, &w, store_lmdb_err(mdb_put(w.txn, st->items, &key, &data, 0)),
			      NULL);
}
