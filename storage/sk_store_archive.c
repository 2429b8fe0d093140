/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-activity archive (sk_store_archive.h): the export of an item's
 * orders to its file, the record that makes the file the item's orders,
 * and the purge of those orders from the store in slices. The file format
 * and its reads are in sk_store_archive_file.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_store_archive.h"
#include "sk_store_impl.h"

#define WHY(...) (why != NULL ? snprintf(why, whylen, __VA_ARGS__) : 0)

/* ------------------------------------------------------------- the record */

static void
archive_enc(uint8_t v[ARCHIVE_VAL_LEN], const struct sk_store_archive_info *a)
{
	memset(v, 0, ARCHIVE_VAL_LEN);
	v[0] = a->state;
	put_be64(v + 8, a->orders);
	put_be64(v + 16, a->first_id);
	put_be64(v + 24, a->last_id);
	put_be64(v + 32, (uint64_t)a->archived_ns);
}

static int
archive_dec(struct sk_store_archive_info *a, uint32_t item, const MDB_val *d)
{
	const uint8_t *v = d->mv_data;

	if (d->mv_size != ARCHIVE_VAL_LEN ||
	    (v[0] != SK_STORE_ARCHIVE_PURGING && v[0] != SK_STORE_ARCHIVE_DONE))
		return -EIO;
	*a = (struct sk_store_archive_info){.item = item,
					    .state = v[0],
					    .orders = get_be64(v + 8),
					    .first_id = get_be64(v + 16),
					    .last_id = get_be64(v + 24),
					    .archived_ns = (int64_t)get_be64(v + 32)};
	return 0;
}

static int
archive_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_archive_info *a)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, ITEM_TAG_ARCHIVE, 0);
	key = mval(k, ITEM_KEY_LEN);
	int rc = store_lmdb_err(mdb_get(txn, st->items, &key, &data));

	return rc != 0 ? rc : archive_dec(a, item, &data); /* -ENOENT: none */
}

static int
archive_store(struct sk_store *st, MDB_txn *txn, const struct sk_store_archive_info *a)
{
	uint8_t k[RESTOCK_KEY_LEN], v[ARCHIVE_VAL_LEN];

	item_key(k, a->item, ITEM_TAG_ARCHIVE, 0);
	archive_enc(v, a);
	MDB_val key = mval(k, ITEM_KEY_LEN), data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

bool
store_archived(struct sk_store *st, MDB_txn *txn, uint32_t item)
{
	struct sk_store_archive_info a;

	return archive_load(st, txn, item, &a) == 0;
}

int
sk_store_archive_get(struct sk_store *st, uint32_t item, struct sk_store_archive_info *info)
{
	MDB_txn *txn;
	int rc = store_rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = archive_load(st, txn, item, info);
	mdb_txn_abort(txn);
	return rc;
}

int
sk_store_archive_foreach(struct sk_store *st, sk_store_archive_cb cb, void *arg)
{
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, NULL, st->items);
	for (bool at = store_walk_get(&wk, MDB_FIRST); at; at = store_walk_get(&wk, MDB_NEXT)) {
		const uint8_t *kp = wk.key.mv_data;
		struct sk_store_archive_info a;

		if (wk.key.mv_size != ITEM_KEY_LEN || kp[4] != ITEM_TAG_ARCHIVE)
			continue;
		rc = archive_dec(&a, get_be32(kp), &wk.data);
		if (rc == 0)
			rc = cb(&a, arg);
		if (rc != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}

int
sk_store_archive_path(struct sk_store *st, uint32_t item, char *buf, size_t cap)
{
	const char *dir = NULL;

	if (mdb_env_get_path(st->env, &dir) != 0 || dir == NULL)
		return -EIO;
	int n = snprintf(buf, cap, "%s/" SK_STORE_ARCHIVE_DIR "/item-%" PRIu32 ".jsonl", dir, item);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* ------------------------------------------------------------- the export */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* An id array that grows by doubling. */
struct ids {
	uint64_t *v;
	size_t n, cap;
};

static int
ids_add(struct ids *a, uint64_t id)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		uint64_t *v = realloc(a->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = id;
	return 0;
}

/* has_prefix - whether the walk is at a key of @len bytes starting with @k[0..plen). */
static bool
has_prefix(const struct walk *wk, const uint8_t *k, size_t plen, size_t len)
{
	return wk->key.mv_size == len && memcmp(wk->key.mv_data, k, plen) == 0;
}

/* any_confirmed - whether the item has a confirmed order (state_orders). */
static int
any_confirmed(struct sk_store *st, MDB_txn *txn, uint32_t item, uint64_t *id)
{
	uint8_t k[STATEIDX_KEY_LEN];
	struct walk wk;

	stateidx_key(k, item, SK_ORDER_CONFIRMED, 0);
	store_walk_open(&wk, st, txn, st->state_orders);
	bool at = store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)) &&
		  has_prefix(&wk, k, STATEIDX_KEY_LEN - 8, STATEIDX_KEY_LEN);
	if (at)
		*id = get_be64((const uint8_t *)wk.key.mv_data + 5);
	int rc = store_walk_end(&wk, 0);
	return rc != 0 ? rc : at;
}

struct unexported {
	uint32_t item;
	uint64_t seq;
};

static int
unexported_cb(const struct sk_store_event *ev, void *arg)
{
	struct unexported *u = arg;

	if (ev->item != u->item)
		return 0;
	u->seq = ev->seq;
	return 1;
}

/* collect - the ids of the item's orders (user_orders), sorted; -EBUSY on a cart line. */
static int
collect(struct sk_store *st, MDB_txn *txn, uint32_t item, struct ids *ids, char *why, size_t whylen)
{
	uint8_t k[USERIDX_KEY_LEN];
	struct walk wk;
	int rc = 0;

	useridx_key(k, item, 0, 0);
	store_walk_open(&wk, st, txn, st->user_orders);
	for (bool at = store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k));
	     at && has_prefix(&wk, k, 4, USERIDX_KEY_LEN); at = store_walk_get(&wk, MDB_NEXT)) {
		uint64_t id = get_be64((const uint8_t *)wk.key.mv_data + 12);

		if (wk.data.mv_size != IDX_VAL_LEN || *(const uint8_t *)wk.data.mv_data != 0) {
			WHY("order %#" PRIx64 " is a cart (lines of several items)", id);
			rc = -EBUSY;
			break;
		}
		rc = ids_add(ids, id);
		if (rc != 0)
			break;
	}
	rc = store_walk_end(&wk, rc);
	if (rc == 0)
		qsort(ids->v, ids->n, sizeof(*ids->v), cmp_u64);
	return rc;
}

/* fsync_dir - make a rename or a creation in @dir durable. */
static int
fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* write_file - every order of @ids into the archive file of @item, durably. */
static int
write_file(struct sk_store *st, MDB_txn *txn, uint32_t item, const struct ids *ids, uint64_t *bytes,
	   char *why, size_t whylen)
{
	char path[4096], tmp[4096 + 8], dir[4096];
	struct walk wk;
	int rc = sk_store_archive_path(st, item, path, sizeof(path));

	if (rc != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (mkdir(dir, 0700) == 0) {
		/* The folder's own entry, durable before any file in it counts. */
		char parent[4096];
		snprintf(parent, sizeof(parent), "%s", dir);
		*strrchr(parent, '/') = '\0';
		rc = fsync_dir(parent);
		if (rc != 0)
			return rc;
	} else if (errno != EEXIST) {
		return -errno;
	}
	/* A name of its own: two exports of one item never share a file. */
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (f == NULL) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	store_walk_open(&wk, st, txn, st->orders);
	for (size_t i = 0; rc == 0 && i < ids->n; i++) {
		struct sk_store_line l;

		rc = store_cart_line(&wk, ids->v[i], 0, &l);
		if (rc == -ENOENT)
			rc = -EIO; /* indexed, so it must exist */
		if (rc == 0 && l.rec.nlines != 1) {
			WHY("order %#" PRIx64 " is a cart (lines of several items)", l.rec.id);
			rc = -EBUSY;
		}
		if (rc == 0)
			rc = archive_line_write(f, &l);
	}
	rc = store_walk_end(&wk, rc);
	if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		rc = -errno;
	if (rc == 0)
		*bytes = (uint64_t)ftell(f);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0)
		rc = fsync_dir(dir);
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* over - whether @a ended (or closed) at least the grace before @now_ns. */
static bool
over(const struct sk_store_activity *a, int64_t now_ns)
{
	int64_t end = a->end_ns;

	if (a->closed_ns != 0 && a->closed_ns < end)
		end = a->closed_ns;
	return end <= now_ns - SK_STORE_ARCHIVE_GRACE_NS;
}

int
sk_store_archive_export(struct sk_store *st, uint32_t item, int64_t now_ns, uint64_t exported_below,
			struct sk_store_archive_snap *snap, char *why, size_t whylen)
{
	struct sk_store_activity a;
	struct sk_store_archive_info info;
	struct ids ids = {0};
	MDB_txn *txn;
	uint64_t id = 0;
	int rc;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (item == 0 || snap == NULL)
		return -EINVAL;
	if (st->flags & SK_STORE_RDONLY)
		return -EACCES;
	if (!st->has_index)
		return -ENOTSUP;
	memset(snap, 0, sizeof(*snap));
	snap->item = item;
	rc = store_rtxn_begin(st, &txn);
	if (rc != 0)
		return rc;
	rc = store_act_load(st, txn, item, &a);
	if (rc == 0 && archive_load(st, txn, item, &info) == 0)
		rc = -EALREADY;
	if (rc == 0 && !over(&a, now_ns)) {
		if (a.end_ns == INT64_MAX && a.closed_ns == 0)
			WHY("the activity is not over: it has no end (close it first)");
		else
			WHY("the activity is not over: archivable %d s after its end or close",
			    (int)(SK_STORE_ARCHIVE_GRACE_NS / 1000000000));
		rc = -EINPROGRESS;
	}
	if (rc == 0) {
		rc = any_confirmed(st, txn, item, &id);
		if (rc == 1) {
			WHY("not settled: order %#" PRIx64 " is confirmed and awaits payment", id);
			rc = -EBUSY;
		}
	}
	if (rc == 0 && exported_below != 0) {
		/* Walks only the events not yet exported: a short tail. */
		struct unexported u = {.item = item};
		rc = sk_store_events_foreach(st, exported_below, unexported_cb, &u);
		if (rc == 1) {
			WHY("not exported: event %" PRIu64 " of the item is not in Kafka yet",
			    u.seq);
			rc = -EBUSY;
		}
	}
	if (rc == 0)
		rc = store_ledger_load(st, txn, item, &snap->ledger, NULL);
	if (rc == 0)
		rc = collect(st, txn, item, &ids, why, whylen);
	if (rc == 0)
		rc = write_file(st, txn, item, &ids, &snap->file_bytes, why, whylen);
	if (rc == 0) {
		snap->orders = ids.n;
		snap->first_id = ids.n ? ids.v[0] : 0;
		snap->last_id = ids.n ? ids.v[ids.n - 1] : 0;
	}
	mdb_txn_abort(txn);
	free(ids.v);
	return rc;
}

int
sk_store_archive_mark(struct sk_store *st, const struct sk_store_archive_snap *snap, int64_t now_ns)
{
	struct sk_store_activity a;
	struct sk_store_archive_info info;
	struct sk_store_ledger led;
	struct wtxn w;
	int rc;

	if (snap == NULL || snap->item == 0)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = store_act_load(st, w.txn, snap->item, &a);
	if (rc == 0 && archive_load(st, w.txn, snap->item, &info) == 0)
		rc = -EALREADY;
	if (rc == 0)
		rc = store_ledger_load(st, w.txn, snap->item, &led, NULL);
	if (rc == 0 && memcmp(&led, &snap->ledger, sizeof(led)) != 0)
		rc = -EAGAIN;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc;
	}
	info = (struct sk_store_archive_info){.item = snap->item,
					      .state = SK_STORE_ARCHIVE_PURGING,
					      .orders = snap->orders,
					      .first_id = snap->first_id,
					      .last_id = snap->last_id,
					      .archived_ns = now_ns};
	rc = archive_store(st, w.txn, &info);
	if (rc == 0 && a.closed_ns == 0) {
		a.closed_ns = now_ns > 0 ? now_ns : 1;
		a.updated_ns = now_ns;
		rc = store_act_store(st, w.txn, &a);
	}
	struct sk_store_event ev = {.type = SK_STORE_EV_ACTIVITY_ARCHIVED,
				    .item = snap->item,
				    .units = snap->orders,
				    .time_ns = now_ns};
	return store_wtxn_end(st, &w, rc, &ev);
}

/* ---------------------------------------------------------------- purge */

int
store_mark_raise(struct sk_store *st, MDB_txn *txn, uint64_t id)
{
	uint8_t k[META_MARK_KEY_LEN], v[8];
	MDB_val key = mval(k, sizeof(k)), data;

	memcpy(k, META_MARK_PREFIX, META_MARK_PREFIX_LEN);
	put_be64(k + META_MARK_PREFIX_LEN, id & ~(uint64_t)(SK_ORDER_SEQ_MAX - 1));
	int rc = mdb_get(txn, st->meta, &key, &data);
	if (rc == 0 && data.mv_size == 8 && get_be64(data.mv_data) >= id)
		return 0;
	if (rc != 0 && rc != MDB_NOTFOUND)
		return store_lmdb_err(rc);
	put_be64(v, id);
	data = mval(v, sizeof(v));
	return store_lmdb_err(mdb_put(txn, st->meta, &key, &data, 0));
}

/* purge_one - delete the order line indexed at the walk (on user_orders) and its entries. */
static int
purge_one(struct sk_store *st, struct walk *ix)
{
	uint8_t k[STATEIDX_KEY_LEN > ORDER_KEY_LEN ? STATEIDX_KEY_LEN : ORDER_KEY_LEN];
	uint64_t id = get_be64((const uint8_t *)ix->key.mv_data + 12);
	uint8_t line = ix->data.mv_size == IDX_VAL_LEN ? *(const uint8_t *)ix->data.mv_data : 0;
	MDB_val key, data;
	struct sk_store_line l;

	order_key(k, id, line);
	key = mval(k, ORDER_KEY_LEN);
	int rc = mdb_get(ix->txn, st->orders, &key, &data);
	if (rc == 0) {
		if (!order_val_ok(data.mv_size))
			return -EIO;
		store_order_dec(&l, id, line, data.mv_data, data.mv_size);
		rc = mdb_del(ix->txn, st->orders, &key, NULL);
		/* A poll of this id after a restart must still read "stored"
		 * (sk_recover_marks()), not "lost". */
		if (rc == 0)
			rc = store_mark_raise(st, ix->txn, id);
		uint32_t live = l.rec.returned < l.rec.qty ? l.rec.qty - l.rec.returned : 0;
		if (rc == 0 && live > 0) {
			/* The dedup entry goes; the ledger keeps the units (reconcile). */
			l.rec.returned = l.rec.qty;
			rc = store_byuser_set(st, ix->txn, &l, live);
		}
		if (rc == 0)
			rc = store_deadline_del(st, ix->txn, l.deadline_ns, id);
		if (rc == 0 && st->has_index) {
			stateidx_key(k, l.rec.item, l.state, id);
			key = mval(k, STATEIDX_KEY_LEN);
			rc = mdb_del(ix->txn, st->state_orders, &key, NULL);
			if (rc == MDB_NOTFOUND)
				rc = 0;
		}
	} else if (rc == MDB_NOTFOUND) {
		rc = 0;
	}
	if (rc == 0)
		rc = mdb_cursor_del(ix->cur, 0);
	return store_lmdb_err(rc);
}

int
sk_store_archive_purge(struct sk_store *st, uint32_t item, uint32_t max, uint64_t *purged)
{
	uint8_t k[USERIDX_KEY_LEN];
	struct sk_store_archive_info info;
	struct walk wk;
	struct wtxn w;
	uint32_t n = 0;
	bool left = false;
	int rc;

	if (purged != NULL)
		*purged = 0;
	if (max == 0)
		return -EINVAL;
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = archive_load(st, w.txn, item, &info);
	if (rc == 0 && info.state == SK_STORE_ARCHIVE_DONE)
		rc = SK_STORE_UNCHANGED;
	if (rc != 0) {
		store_wtxn_abort(&w);
		return rc == SK_STORE_UNCHANGED ? 0 : rc;
	}
	useridx_key(k, item, 0, 0);
	store_walk_open(&wk, st, w.txn, st->user_orders);
	/* The item's first entry each round: the delete moved the cursor. */
	while (rc == 0 && store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)) &&
	       has_prefix(&wk, k, 4, USERIDX_KEY_LEN)) {
		if (n == max) {
			left = true;
			break;
		}
		rc = purge_one(st, &wk);
		n++;
	}
	rc = store_walk_end(&wk, rc);
	if (rc == 0 && !left) {
		info.state = SK_STORE_ARCHIVE_DONE;
		rc = archive_store(st, w.txn, &info);
	}
	if (rc == 0)
		rc = store_wtxn_commit(st, &w);
	store_wtxn_abort(&w);
	if (rc == 0 && purged != NULL)
		*purged = n;
	return rc != 0 ? rc : left;
}
