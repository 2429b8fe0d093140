/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LMDB order store (sk_store.h): open/close and the schema check, LMDB
 * errors as errnos, write and read transactions, walks (a cursor over one
 * database), the per-call item table, and sk_store_info(). The calls
 * themselves live in sk_store_orders.c, sk_store_activities.c,
 * sk_store_events.c and sk_store_verify.c; what they share is
 * sk_store_impl.h. Layout of every key and value: docs/storage.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sk_store_impl.h"

static const char SCHEMA_MAGIC[4] = {'S', 'K', 'S', 'T'};

/* ------------------------------------------------------------------ errors */

int
store_lmdb_err(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_MAP_FULL:
		return -ENOSPC;
	case MDB_TXN_FULL:
	case MDB_CURSOR_FULL:
		return -E2BIG;
	case MDB_READERS_FULL:
	case MDB_MAP_RESIZED:
		return -EAGAIN;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_VERSION_MISMATCH:
	case MDB_INVALID:
	case MDB_INCOMPATIBLE:
		return -EPROTO;
	default:
		/* MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_PANIC, MDB_BAD_*,
		 * MDB_KEYEXIST where the store's invariants exclude it. */
		if (rc >= MDB_KEYEXIST && rc <= MDB_LAST_ERRCODE)
			return -EIO;
		return rc > 0 ? -rc : rc; /* an errno, or already a negative one */
	}
}

/* ------------------------------------------------------------ the map lock */

/* The map locks (of any store) this thread holds shared. */
static __thread unsigned map_depth;

void
store_map_shared(struct sk_store *st)
{
	/* A grow waiting for the open transactions lets no new one in, but
	 * on a thread that holds one already (a walk's callback): that one
	 * must not wait for a grow that waits for it. */
	if (map_depth == 0 && __atomic_load_n(&st->grow_pending, __ATOMIC_ACQUIRE)) {
		SK_ASSERT(pthread_mutex_lock(&st->grow_gate) == 0);
		SK_ASSERT(pthread_mutex_unlock(&st->grow_gate) == 0);
	}
	SK_ASSERT(pthread_rwlock_rdlock(&st->maplock) == 0);
	map_depth++;
}

void
store_map_unshare(struct sk_store *st)
{
	map_depth--;
	SK_ASSERT(pthread_rwlock_unlock(&st->maplock) == 0);
}

/*
 * map_adopt - another process grew the map beyond ours (MDB_MAP_RESIZED):
 * take its size, which needs no transaction of this process open: waits
 * up to 100 ms for those of other threads, none on a thread that holds
 * one itself (a walk's callback). 0, or -EAGAIN (the caller retries).
 */
static int
map_adopt(struct sk_store *st)
{
	struct timespec until = store_deadline(100000000);

	if ((map_depth > 0
		     ? pthread_rwlock_trywrlock(&st->maplock)
		     : pthread_rwlock_clockwrlock(&st->maplock, CLOCK_MONOTONIC, &until)) != 0)
		return -EAGAIN;
	int rc = mdb_env_set_mapsize(st->env, 0);
	SK_ASSERT(pthread_rwlock_unlock(&st->maplock) == 0);
	return store_lmdb_err(rc);
}

/*
 * txn_begin - mdb_txn_begin() with the map lock held shared (dropped on
 * error); a map another process grew is adopted and the begin retried.
 */
static int
txn_begin(struct sk_store *st, unsigned flags, MDB_txn **txn)
{
	for (int tries = 0;; tries++) {
		store_map_shared(st);
		int rc = mdb_txn_begin(st->env, NULL, flags, txn);
		if (rc == 0)
			return 0;
		*txn = NULL;
		store_map_unshare(st);
		if (rc != MDB_MAP_RESIZED || tries == 2)
			return store_lmdb_err(rc);
		rc = map_adopt(st);
		if (rc != 0)
			return rc;
	}
}

/* ------------------------------------------------ errors and transactions */

int
store_wtxn_begin(struct sk_store *st, struct wtxn *w)
{
	memset(w, 0, sizeof(*w));
	int rc = txn_begin(st, 0, &w->txn);
	if (rc == 0)
		w->st = st;
	return rc;
}

/* wtxn_done - the write transaction is gone: drop its map lock. */
static void
wtxn_done(struct wtxn *w)
{
	w->txn = NULL;
	if (w->st != NULL)
		store_map_unshare(w->st);
	w->st = NULL;
}

void
store_wtxn_abort(struct wtxn *w)
{
	if (w->txn != NULL)
		mdb_txn_abort(w->txn);
	if (w->txn != NULL || w->st != NULL)
		wtxn_done(w);
}

int
store_wtxn_commit(struct sk_store *st, struct wtxn *w)
{
	int rc = 0;

	if (w->seq_last != 0) {
		uint8_t v[8];
		MDB_val k = mval(META_EVENT_NEXT, sizeof(META_EVENT_NEXT) - 1), d = mval(v, 8);

		put_be64(v, w->seq_next);
		rc = mdb_put(w->txn, st->meta, &k, &d, 0);
	}
	if (rc == 0)
		rc = mdb_txn_commit(w->txn);
	else
		mdb_txn_abort(w->txn);
	wtxn_done(w);
	return store_lmdb_err(rc);
}

int
store_meta_get_u64(struct sk_store *st, MDB_txn *txn, const char *name, uint64_t *out)
{
	MDB_val k = mval(name, strlen(name)), d;
	int rc = mdb_get(txn, st->meta, &k, &d);

	if (rc != 0)
		return store_lmdb_err(rc);
	if (d.mv_size != 8)
		return -EIO;
	*out = get_be64(d.mv_data);
	return 0;
}

int
store_wtxn_end(struct sk_store *st, struct wtxn *w, int rc, struct sk_store_event *ev)
{
	if (rc == 0 && ev != NULL)
		rc = store_event_add(st, w, ev);
	if (rc == 0)
		rc = store_wtxn_commit(st, w);
	store_wtxn_abort(w);
	return rc;
}

int
store_rtxn_begin(struct sk_store *st, MDB_txn **txn)
{
	return txn_begin(st, MDB_RDONLY, txn);
}

void
store_rtxn_end(struct sk_store *st, MDB_txn *txn)
{
	if (txn == NULL)
		return;
	mdb_txn_abort(txn);
	store_map_unshare(st);
}

int
store_walk_open(struct walk *w, struct sk_store *st, MDB_txn *txn, MDB_dbi dbi)
{
	memset(w, 0, sizeof(*w));
	w->st = st;
	if (txn == NULL) {
		w->rc = store_rtxn_begin(st, &w->own);
		if (w->rc != 0) {
			w->own = NULL;
			return w->rc;
		}
		txn = w->own;
	}
	w->txn = txn;
	w->rc = store_lmdb_err(mdb_cursor_open(txn, dbi, &w->cur));
	if (w->rc != 0)
		w->cur = NULL;
	return w->rc;
}

/* walk_move - mdb_cursor_get() by @op with @key; the first error sticks. */
static bool
walk_move(struct walk *w, MDB_val *key, MDB_cursor_op op)
{
	if (w->rc != 0 || w->cur == NULL)
		return false;
	int rc = mdb_cursor_get(w->cur, key, &w->data, op);
	if (rc != 0 && rc != MDB_NOTFOUND)
		w->rc = store_lmdb_err(rc);
	return rc == 0;
}

bool
store_walk_get(struct walk *w, MDB_cursor_op op)
{
	return walk_move(w, &w->key, op);
}

bool
store_walk_seek(struct walk *w, MDB_cursor_op op, const void *k, size_t len)
{
	MDB_val key = mval(k, len);
	if (!walk_move(w, &key, op == MDB_SET ? MDB_SET_KEY : op))
		return false;
	w->key = key;
	return true;
}

int
store_walk_end(struct walk *w, int rc)
{
	if (w->cur != NULL)
		mdb_cursor_close(w->cur);
	if (w->own != NULL)
		store_rtxn_end(w->st, w->own);
	w->cur = NULL;
	w->own = NULL;
	w->txn = NULL;
	return rc != 0 ? rc : w->rc;
}

int
store_itab_init(struct itab *t, size_t cap)
{
	t->e = calloc(cap, sizeof(*t->e));
	t->mask = cap - 1;
	t->used = 0;
	return t->e != NULL ? 0 : -ENOMEM;
}

static struct item_ent *
itab_slot(struct item_ent *e, size_t mask, uint32_t item)
{
	size_t i = (item * UINT32_C(0x9E3779B1)) & mask;

	while (e[i].item != 0 && e[i].item != item)
		i = (i + 1) & mask;
	return &e[i];
}

struct item_ent *
store_itab_get(struct itab *t, uint32_t item, bool *fresh)
{
	struct item_ent *s = itab_slot(t->e, t->mask, item);

	*fresh = false;
	if (s->item == item)
		return s;
	if ((t->used + 1) * 2 > t->mask + 1) {
		size_t cap = (t->mask + 1) * 2;
		struct item_ent *ne = calloc(cap, sizeof(*ne));
		if (ne == NULL)
			return NULL;
		for (size_t i = 0; i <= t->mask; i++)
			if (t->e[i].item != 0)
				*itab_slot(ne, cap - 1, t->e[i].item) = t->e[i];
		free(t->e);
		t->e = ne;
		t->mask = cap - 1;
		s = itab_slot(t->e, t->mask, item);
	}
	s->item = item;
	t->used++;
	*fresh = true;
	return s;
}

/* ------------------------------------------------------------- open/close */

/* The named databases; @since: the schema major that added it. */
static const struct {
	const char *name;
	size_t off;
	unsigned flags;
	uint32_t since;
} db_list[] = {
	{"orders", offsetof(struct sk_store, orders), 0, 1},
	{"by_user", offsetof(struct sk_store, by_user), MDB_DUPSORT | MDB_DUPFIXED, 1},
	{"items", offsetof(struct sk_store, items), 0, 1},
	{"events", offsetof(struct sk_store, events), 0, 1},
	{"cursors", offsetof(struct sk_store, cursors), 0, 1},
	{"deadlines", offsetof(struct sk_store, deadlines), 0, 1},
	{"requests", offsetof(struct sk_store, requests), 0, 2},
	{"requests_by_time", offsetof(struct sk_store, requests_by_time), 0, 2},
	{"user_orders", offsetof(struct sk_store, user_orders), 0, 3},
	{"state_orders", offsetof(struct sk_store, state_orders), 0, 3},
};

static int
meta_put(struct sk_store *st, MDB_txn *txn, const char *name, const void *v, size_t len)
{
	MDB_val k = mval(name, strlen(name)), d = mval(v, len);

	return store_lmdb_err(mdb_put(txn, st->meta, &k, &d, 0));
}

static int
schema_write(struct sk_store *st, MDB_txn *txn)
{
	uint8_t v[SCHEMA_VAL_LEN];

	memcpy(v, SCHEMA_MAGIC, 4);
	put_be32(v + 4, SK_STORE_SCHEMA_MAJOR);
	put_be32(v + 8, SK_STORE_SCHEMA_MINOR);
	return meta_put(st, txn, META_SCHEMA, v, sizeof(v));
}

/* store_create - lay out an empty store in the (empty) environment. */
static int
store_create(struct sk_store *st, MDB_txn *txn, const char *dir, char *err, size_t errlen)
{
	uint8_t v[8];
	int rc = store_lmdb_err(mdb_dbi_open(txn, "meta", MDB_CREATE, &st->meta));

	for (size_t i = 0; rc == 0 && i < SK_ARRAY_SIZE(db_list); i++)
		rc = store_lmdb_err(mdb_dbi_open(txn, db_list[i].name,
						 MDB_CREATE | db_list[i].flags,
						 (MDB_dbi *)((char *)st + db_list[i].off)));
	if (rc == 0)
		rc = store_reserve_open(st, txn, false);
	if (rc == 0)
		rc = schema_write(st, txn);
	st->has_requests = st->has_index = rc == 0;
	put_be64(v, 1);
	if (rc == 0)
		rc = meta_put(st, txn, META_EVENT_NEXT, v, 8);
	put_be64(v, (uint64_t)sk_clock_ns(CLOCK_REALTIME));
	if (rc == 0)
		rc = meta_put(st, txn, META_CREATED, v, 8);
	if (rc != 0)
		sk_set_err(err, errlen, "%s: cannot create the store: %s", dir, strerror(-rc));
	return rc;
}

/*
 * orders_upgrade - rewrite every order line of the schema 1-3 layout
 * (64 bytes, an IPv4 client) in schema 4's (84 bytes, a client of either
 * family), in @txn; the count in st->upgraded_lines. One pass over
 * `orders`; a line already in the new layout is left alone.
 */
static int
upgrade_line(struct sk_store *st, struct walk *wk, const struct sk_store_line *l)
{
	uint8_t k[ORDER_KEY_LEN], v[ORDER_VAL_LEN];

	if (wk->data.mv_size == ORDER_VAL_LEN)
		return 0;
	store_order_enc(v, l);
	/* A put of another size through the cursor (MDB_CURRENT) is a delete
	 * and an insert that can lose the cursor's place: put by key, then
	 * seek back to it. */
	memcpy(k, wk->key.mv_data, sizeof(k));
	MDB_val key = mval(k, sizeof(k)), data = mval(v, sizeof(v));
	int rc = store_lmdb_err(mdb_put(wk->txn, st->orders, &key, &data, 0));
	if (rc != 0)
		return rc;
	st->upgraded_lines++;
	if (!store_walk_seek(wk, MDB_SET_KEY, k, sizeof(k)))
		return wk->rc != 0 ? wk->rc : -EIO;
	return 0;
}

static int
orders_upgrade(struct sk_store *st, MDB_txn *txn)
{
	return store_orders_each(st, txn, upgrade_line);
}

/*
 * schema_setup - open the databases of an existing store after checking its
 * schema; create them if the environment is empty (and writable).
 */
static int
schema_setup(struct sk_store *st, const char *dir, char *err, size_t errlen)
{
	bool rdonly = st->flags & SK_STORE_RDONLY;
	MDB_txn *txn;
	MDB_val k, d;
	int rc = store_lmdb_err(mdb_txn_begin(st->env, NULL, rdonly ? MDB_RDONLY : 0, &txn));

	if (rc != 0) {
		sk_set_err(err, errlen, "%s: cannot begin a transaction: %s", dir, strerror(-rc));
		return rc;
	}
	rc = mdb_dbi_open(txn, "meta", 0, &st->meta);
	if (rc == MDB_NOTFOUND) {
		MDB_dbi main_dbi;
		MDB_stat ms;
		rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
		if (rc == 0)
			rc = mdb_stat(txn, main_dbi, &ms);
		rc = store_lmdb_err(rc);
		if (rc != 0) {
			sk_set_err(err, errlen, "%s: %s", dir, strerror(-rc));
		} else if (ms.ms_entries != 0) {
			sk_set_err(err, errlen,
				   "%s: not a seckill store (LMDB environment without meta)", dir);
			rc = -EPROTO;
		} else if (rdonly) {
			sk_set_err(err, errlen, "%s: empty environment, no store yet", dir);
			rc = -ENOENT;
		} else {
			rc = store_create(st, txn, dir, err, errlen);
		}
		goto out;
	}
	if (rc != 0) {
		rc = store_lmdb_err(rc);
		sk_set_err(err, errlen, "%s: cannot open meta: %s", dir, strerror(-rc));
		goto out;
	}

	k = mval(META_SCHEMA, sizeof(META_SCHEMA) - 1);
	rc = mdb_get(txn, st->meta, &k, &d);
	if (rc != 0 || d.mv_size != SCHEMA_VAL_LEN || memcmp(d.mv_data, SCHEMA_MAGIC, 4) != 0) {
		sk_set_err(err, errlen,
			   "%s: not a seckill store (missing or damaged schema record)", dir);
		rc = -EPROTO;
		goto out;
	}
	uint32_t major = get_be32((const uint8_t *)d.mv_data + 4);
	uint32_t minor = get_be32((const uint8_t *)d.mv_data + 8);
	if (major < SK_STORE_SCHEMA_MAJOR_OLDEST || major > SK_STORE_SCHEMA_MAJOR) {
		sk_set_err(err, errlen,
			   "%s: store schema %u.%u, this build reads schemas %u.x to %u.x: "
			   "migrate the store or run a matching build",
			   dir, major, minor, SK_STORE_SCHEMA_MAJOR_OLDEST, SK_STORE_SCHEMA_MAJOR);
		rc = -EPROTO;
		goto out;
	}
	/* An older major lacks the databases added since: created when
	 * writable (the upgrade), else left out (read-only: nothing uses them). */
	bool upgrade = major < SK_STORE_SCHEMA_MAJOR;
	st->has_requests = major >= 2 || !rdonly;
	st->has_index = major >= 3 || !rdonly;
	for (size_t i = 0; i < SK_ARRAY_SIZE(db_list); i++) {
		bool added = db_list[i].since > major;
		if (added && rdonly)
			continue;
		rc = mdb_dbi_open(txn, db_list[i].name, db_list[i].flags | (added ? MDB_CREATE : 0),
				  (MDB_dbi *)((char *)st + db_list[i].off));
		if (rc != 0) {
			sk_set_err(err, errlen, "%s: damaged store: database %s: %s", dir,
				   db_list[i].name, mdb_strerror(rc));
			rc = rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE ? -EPROTO
									  : store_lmdb_err(rc);
			goto out;
		}
	}
	rc = store_reserve_open(st, txn, rdonly);
	if (rc != 0) {
		sk_set_err(err, errlen, "%s: damaged store: database reservations: %s", dir,
			   strerror(-rc));
		goto out;
	}
	/* Minor versions only add; an older minor, or an older major whose
	 * bytes this build reads as they are, is upgraded by stamping ours. */
	uint32_t ours = SK_STORE_SCHEMA_MINOR; /* a variable: no "always false" at 0 */
	if (!rdonly && major < 3) {
		/* Schema 3's indexes cover every order stored before. */
		rc = store_index_build(st, txn);
		if (rc != 0) {
			sk_set_err(err, errlen,
				   "%s: cannot index the orders (upgrade to schema %u): %s", dir,
				   SK_STORE_SCHEMA_MAJOR, strerror(-rc));
			goto out;
		}
	}
	if (!rdonly && major < 4) {
		/* Schema 4's order lines hold a client of either family. */
		rc = orders_upgrade(st, txn);
		if (rc != 0) {
			sk_set_err(err, errlen,
				   "%s: cannot rewrite the order lines (upgrade to schema %u): %s",
				   dir, SK_STORE_SCHEMA_MAJOR, strerror(-rc));
			goto out;
		}
	}
	if (!rdonly && upgrade)
		st->upgraded_from = major;
	if (!rdonly && (upgrade || minor < ours))
		rc = schema_write(st, txn);
out:
	if (rc == 0) {
		rc = store_lmdb_err(mdb_txn_commit(txn));
		if (rc != 0)
			sk_set_err(err, errlen, "%s: cannot commit: %s", dir, strerror(-rc));
	} else {
		mdb_txn_abort(txn);
	}
	return rc;
}

int
sk_store_open(struct sk_store **out, const char *dir, const struct sk_store_conf *conf, char *err,
	      size_t errlen)
{
	static const struct sk_store_conf defaults = {0};
	struct sk_store *st = NULL;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (conf == NULL)
		conf = &defaults;
	if (out == NULL || dir == NULL || dir[0] == '\0' ||
	    (conf->flags & ~(unsigned)(SK_STORE_RDONLY | SK_STORE_NOSYNC)) != 0) {
		sk_set_err(err, errlen, "sk_store_open: invalid arguments");
		return -EINVAL;
	}
	bool rdonly = conf->flags & SK_STORE_RDONLY;

	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		rc = -ENOMEM;
		sk_set_err(err, errlen, "%s: out of memory", dir);
		goto err;
	}
	st->flags = conf->flags;
	pthread_rwlockattr_t ra;
	if (pthread_rwlockattr_init(&ra) != 0) {
		rc = -ENOMEM;
		sk_set_err(err, errlen, "%s: out of memory", dir);
		goto err;
	}
	/* A recursive shared hold must not wait behind a waiting grow. */
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_READER_NP);
	st->maplock_ok = pthread_rwlock_init(&st->maplock, &ra) == 0;
	pthread_rwlockattr_destroy(&ra);
	if (st->maplock_ok && pthread_mutex_init(&st->grow_gate, NULL) != 0) {
		pthread_rwlock_destroy(&st->maplock);
		st->maplock_ok = false;
	}
	if (!st->maplock_ok) {
		rc = -ENOMEM;
		sk_set_err(err, errlen, "%s: out of memory", dir);
		goto err;
	}
	st->requests_max =
		conf->requests_max != 0 ? conf->requests_max : SK_STORE_REQUESTS_MAX_DEFAULT;
	st->requests_ttl_ns = conf->requests_ttl_ns > 0 ? conf->requests_ttl_ns
							: SK_STORE_REQUESTS_TTL_DEFAULT_NS;
	if (!rdonly && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		sk_set_err(err, errlen, "%s: cannot create the directory: %s", dir,
			   strerror(errno));
		goto err;
	}
	rc = mdb_env_create(&st->env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(st->env,
					2 + SK_ARRAY_SIZE(db_list)); /* meta, reservations */
	if (rc == 0)
		rc = mdb_env_set_mapsize(st->env, conf->map_size != 0 ? conf->map_size
								      : SK_STORE_MAP_SIZE_DEFAULT);
	if (rc != 0) {
		rc = store_lmdb_err(rc);
		sk_set_err(err, errlen, "%s: cannot set up LMDB: %s", dir, strerror(-rc));
		goto err;
	}
	/*
	 * MDB_NOTLS: reader slots belong to transactions, not threads, so a
	 * foreach callback may open further transactions on the same thread.
	 * No MDB_NOSYNC / MDB_NOMETASYNC unless asked: a commit is on disk.
	 */
	unsigned flags = MDB_NOTLS;
	if (rdonly)
		flags |= MDB_RDONLY;
	if (conf->flags & SK_STORE_NOSYNC)
		flags |= MDB_NOSYNC;
	rc = mdb_env_open(st->env, dir, flags, conf->mode != 0 ? (mdb_mode_t)conf->mode : 0600);
	if (rc != 0) {
		sk_set_err(err, errlen, "%s: cannot open the LMDB environment: %s", dir,
			   mdb_strerror(rc));
		rc = store_lmdb_err(rc);
		goto err;
	}
	int dead;
	mdb_reader_check(st->env, &dead);

	rc = schema_setup(st, dir, err, errlen);
	if (rc != 0)
		goto err;
	*out = st;
	return 0;
err:
	sk_store_close(st);
	return rc;
}

void
sk_store_close(struct sk_store *st)
{
	if (st == NULL)
		return;
	if (st->env != NULL)
		mdb_env_close(st->env);
	if (st->maplock_ok) {
		pthread_rwlock_destroy(&st->maplock);
		pthread_mutex_destroy(&st->grow_gate);
	}
	free(st);
}

/* ------------------------------------------------------------ housekeeping */

int
sk_store_info(struct sk_store *st, struct sk_store_info *info)
{
	MDB_envinfo ei;
	MDB_stat ms;
	MDB_txn *txn;
	MDB_val key, data;
	int rc;

	memset(info, 0, sizeof(*info));
	store_map_shared(st);
	rc = store_lmdb_err(mdb_env_info(st->env, &ei));
	if (rc == 0)
		rc = store_lmdb_err(mdb_env_stat(st->env, &ms));
	store_map_unshare(st);
	if (rc != 0)
		return rc;
	info->page_size = ms.ms_psize;
	info->map_size = ei.me_mapsize;
	info->used_bytes = ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize;
	info->readers = ei.me_numreaders;
	info->upgraded_from = st->upgraded_from;
	info->upgraded_lines = st->upgraded_lines;
	info->last_txn = ei.me_last_txnid;

	rc = store_rtxn_begin(st, &txn);
	if (rc != 0)
		return rc;
	const struct {
		MDB_dbi dbi;
		uint64_t *out;
	} dbs[] = {
		{st->orders, &info->order_lines}, {st->by_user, &info->holdings_entries},
		{st->items, &info->item_entries}, {st->events, &info->events},
		{st->cursors, &info->cursors},	  {st->deadlines, &info->deadlines},
	};
	for (size_t i = 0; rc == 0 && i < SK_ARRAY_SIZE(dbs); i++) {
		rc = store_lmdb_err(mdb_stat(txn, dbs[i].dbi, &ms));
		*dbs[i].out = ms.ms_entries;
	}
	if (rc == 0 && st->has_requests) {
		rc = store_lmdb_err(mdb_stat(txn, st->requests, &ms));
		info->requests = ms.ms_entries;
	}
	if (rc == 0)
		rc = store_meta_get_u64(st, txn, META_EVENT_NEXT, &info->event_next);
	key = mval(META_SCHEMA, sizeof(META_SCHEMA) - 1);
	if (rc == 0 && mdb_get(txn, st->meta, &key, &data) == 0 && data.mv_size == SCHEMA_VAL_LEN) {
		info->schema_major = get_be32((const uint8_t *)data.mv_data + 4);
		info->schema_minor = get_be32((const uint8_t *)data.mv_data + 8);
	}
	store_rtxn_end(st, txn);
	return rc;
}
