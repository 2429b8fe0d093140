/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_store_reserve.c - reservation sets in the order store
 * (sk_store_reserve.h): the `reservations` database, (item) -> sorted
 * duplicate user ids.
 */
#include "sk_store_reserve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_store_impl.h"

int
store_reserve_open(struct sk_store *st, MDB_txn *txn, bool rdonly)
{
	int rc = mdb_dbi_open(txn, "reservations",
			      MDB_DUPSORT | MDB_DUPFIXED | (rdonly ? 0 : MDB_CREATE),
			      &st->reservations);

	st->has_reserve = rc == 0;
	return rc == MDB_NOTFOUND && rdonly ? 0 : store_lmdb_err(rc);
}

int
sk_store_reserve_add(struct sk_store *st, uint32_t item, const uint64_t *users, size_t n,
		     uint64_t *added)
{
	uint8_t k[4], v[8];
	uint64_t got = 0;
	struct wtxn w;
	int rc = 0;

	if (added != NULL)
		*added = 0;
	if (item == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (users[i] == 0)
			return -EINVAL;
	if (!st->has_reserve)
		return -EACCES;
	if (n == 0)
		return 0;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	put_be32(k, item);
	for (size_t i = 0; i < n && rc == 0; i++) {
		MDB_val key = mval(k, sizeof(k)), val = mval(v, sizeof(v));

		put_be64(v, users[i]);
		rc = mdb_put(w.txn, st->reservations, &key, &val, MDB_NODUPDATA);
		if (rc == MDB_KEYEXIST)
			rc = 0;
		else if (rc == 0)
			got++;
		rc = store_lmdb_err(rc);
	}
	rc = store_wtxn_end(st, &w, rc, NULL);
	if (rc == 0 && added != NULL)
		*added = got;
	return rc;
}

/* seek - @wk at item @item's first id; false when it has none. */
static bool
seek(struct walk *wk, uint32_t item)
{
	uint8_t k[4];

	put_be32(k, item);
	return store_walk_seek(wk, MDB_SET, k, sizeof(k));
}

int
sk_store_reserve_count(struct sk_store *st, uint32_t item, uint64_t *count)
{
	struct walk wk;
	size_t c = 0;

	*count = 0;
	if (!st->has_reserve)
		return 0;
	store_walk_open(&wk, st, NULL, st->reservations);
	if (seek(&wk, item)) {
		int rc = mdb_cursor_count(wk.cur, &c);
		if (rc != 0)
			wk.rc = store_lmdb_err(rc);
		else
			*count = c;
	}
	return store_walk_end(&wk, 0);
}

int
sk_store_reserve_read(struct sk_store *st, uint32_t item, uint64_t **users, size_t *n)
{
	struct walk wk;
	size_t c = 0;
	size_t got = 0;
	uint64_t *u = NULL;
	int rc = 0;

	*users = NULL;
	*n = 0;
	if (!st->has_reserve)
		return 0;
	store_walk_open(&wk, st, NULL, st->reservations);
	if (!seek(&wk, item))
		return store_walk_end(&wk, 0);
	rc = store_lmdb_err(mdb_cursor_count(wk.cur, &c));
	if (rc == 0 && (u = malloc((c != 0 ? c : 1) * sizeof(*u))) == NULL)
		rc = -ENOMEM;
	/* DUPFIXED: a page of ids per call. */
	for (bool at = rc == 0 && store_walk_get(&wk, MDB_GET_MULTIPLE); at;
	     at = store_walk_get(&wk, MDB_NEXT_MULTIPLE)) {
		const uint8_t *p = wk.data.mv_data;
		for (size_t i = 0; i + 8 <= wk.data.mv_size && got < c; i += 8)
			u[got++] = get_be64(p + i);
	}
	rc = store_walk_end(&wk, rc);
	if (rc != 0) {
		free(u);
		return rc;
	}
	*users = u;
	*n = got;
	return 0;
}

int
sk_store_reserve_foreach(struct sk_store *st, sk_store_reserve_cb cb, void *arg)
{
	struct walk wk;
	int rc = 0;

	if (!st->has_reserve)
		return 0;
	store_walk_open(&wk, st, NULL, st->reservations);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at;
	     at = store_walk_get(&wk, MDB_NEXT_NODUP)) {
		size_t c = 0;

		if (wk.key.mv_size != 4)
			continue;
		rc = store_lmdb_err(mdb_cursor_count(wk.cur, &c));
		if (rc == 0)
			rc = cb(get_be32(wk.key.mv_data), c, arg);
		if (rc != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}

int
sk_store_reserve_drop(struct sk_store *st, uint32_t item)
{
	uint8_t k[4];
	struct wtxn w;
	int rc;

	if (!st->has_reserve)
		return (st->flags & SK_STORE_RDONLY) ? -EACCES : SK_STORE_UNCHANGED;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	put_be32(k, item);
	MDB_val key = mval(k, sizeof(k));
	rc = mdb_del(w.txn, st->reservations, &key, NULL);
	if (rc == MDB_NOTFOUND) {
		store_wtxn_abort(&w);
		return SK_STORE_UNCHANGED;
	}
	return store_wtxn_end(st, &w, store_lmdb_err(rc), NULL);
}
