/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LMDB order store. Layout of every key and value: docs/storage.md.
 * All integers are big-endian on disk so that LMDB's memcmp order is the
 * numeric order (orders by id, deadlines by time, events by sequence).
 *
 * Sections: encoding, errors and transactions, open/close, orders,
 * reads, events, activities, cursors, housekeeping.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lmdb.h>

#include "sk_store.h"

/* Tags of the `items` keys: (item, tag [, restock id]). */
#define ITEM_TAG_DEF	 0
#define ITEM_TAG_LEDGER	 1
#define ITEM_TAG_RESTOCK 2

#define ORDER_KEY_LEN	 9 /* id, line */
#define ORDER_VAL_LEN	 64
#define BYUSER_KEY_LEN	 12 /* item, user */
#define BYUSER_VAL_LEN	 12 /* order id, qty */
#define ITEM_KEY_LEN	 5  /* item, tag */
#define RESTOCK_KEY_LEN	 13 /* item, tag, restock id */
#define RESTOCK_VAL_LEN	 16 /* units, time */
#define ACT_VAL_LEN	 144
#define LEDGER_VAL_LEN	 48
#define EVENT_KEY_LEN	 8
#define EVENT_VAL_LEN	 40
#define DEADLINE_KEY_LEN 16 /* deadline, order id */
#define SCHEMA_VAL_LEN	 12 /* "SKST", major, minor */

static const char SCHEMA_MAGIC[4] = {'S', 'K', 'S', 'T'};
static const char META_SCHEMA[] = "schema";
static const char META_EVENT_NEXT[] = "events.next";
static const char META_CREATED[] = "created";

struct sk_store {
	MDB_env *env;
	unsigned flags;
	MDB_dbi meta, orders, by_user, items, events, cursors, deadlines;
};

/* ---------------------------------------------------------------- encoding */

static inline void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline void
put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
get_be32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t
get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static inline MDB_val
mval(const void *p, size_t len)
{
	return (MDB_val){.mv_size = len, .mv_data = (void *)p};
}

static void
order_key(uint8_t k[ORDER_KEY_LEN], uint64_t id, uint8_t line)
{
	put_be64(k, id);
	k[8] = line;
}

static void
order_enc(uint8_t v[ORDER_VAL_LEN], const struct sk_store_line *l)
{
	const struct sk_order_rec *r = &l->rec;

	put_be64(v + 0, r->user);
	put_be64(v + 8, r->price);
	put_be64(v + 16, (uint64_t)r->time_ns);
	put_be32(v + 24, r->item);
	memcpy(v + 28, &r->client_ip, 4); /* already network order */
	put_be16(v + 32, r->qty);
	v[34] = r->nlines;
	v[35] = l->state;
	put_be32(v + 36, r->returned);
	put_be64(v + 40, (uint64_t)l->deadline_ns);
	put_be64(v + 48, (uint64_t)l->stored_ns);
	put_be64(v + 56, (uint64_t)l->updated_ns);
}

static void
order_dec(struct sk_store_line *l, uint64_t id, uint8_t line, const uint8_t *v)
{
	struct sk_order_rec *r = &l->rec;

	memset(l, 0, sizeof(*l));
	r->id = id;
	r->line = line;
	r->user = get_be64(v + 0);
	r->price = get_be64(v + 8);
	r->time_ns = (int64_t)get_be64(v + 16);
	r->item = get_be32(v + 24);
	memcpy(&r->client_ip, v + 28, 4);
	r->qty = get_be16(v + 32);
	r->nlines = v[34];
	l->state = v[35];
	r->returned = get_be32(v + 36);
	l->deadline_ns = (int64_t)get_be64(v + 40);
	l->stored_ns = (int64_t)get_be64(v + 48);
	l->updated_ns = (int64_t)get_be64(v + 56);
}

static void
byuser_key(uint8_t k[BYUSER_KEY_LEN], uint32_t item, uint64_t user)
{
	put_be32(k, item);
	put_be64(k + 4, user);
}

static void
byuser_val(uint8_t v[BYUSER_VAL_LEN], uint64_t id, uint32_t qty)
{
	put_be64(v, id);
	put_be32(v + 8, qty);
}

static void
item_key(uint8_t k[RESTOCK_KEY_LEN], uint32_t item, uint8_t tag, uint64_t restock_id)
{
	put_be32(k, item);
	k[4] = tag;
	put_be64(k + 5, restock_id);
}

static void
deadline_key(uint8_t k[DEADLINE_KEY_LEN], int64_t deadline_ns, uint64_t id)
{
	put_be64(k, (uint64_t)deadline_ns);
	put_be64(k + 8, id);
}

static void
ledger_enc(uint8_t v[LEDGER_VAL_LEN], const struct sk_store_ledger *l)
{
	put_be64(v + 0, l->sold);
	put_be64(v + 8, l->returned);
	put_be64(v + 16, l->paid);
	put_be64(v + 24, l->lines);
	put_be64(v + 32, l->lines_paid);
	put_be64(v + 40, l->lines_cancelled);
}

static void
ledger_dec(struct sk_store_ledger *l, const uint8_t *v)
{
	l->sold = get_be64(v + 0);
	l->returned = get_be64(v + 8);
	l->paid = get_be64(v + 16);
	l->lines = get_be64(v + 24);
	l->lines_paid = get_be64(v + 32);
	l->lines_cancelled = get_be64(v + 40);
}

static void
act_enc(uint8_t v[ACT_VAL_LEN], const struct sk_store_activity *a)
{
	size_t nlen = strnlen(a->name, SK_STORE_NAME_MAX);

	memset(v, 0, ACT_VAL_LEN);
	put_be64(v + 0, a->total);
	put_be64(v + 8, a->added);
	put_be64(v + 16, a->price);
	put_be64(v + 24, (uint64_t)a->start_ns);
	put_be64(v + 32, (uint64_t)a->end_ns);
	put_be64(v + 40, (uint64_t)a->pay_timeout_ns);
	put_be64(v + 48, (uint64_t)a->created_ns);
	put_be64(v + 56, (uint64_t)a->updated_ns);
	put_be64(v + 64, (uint64_t)a->closed_ns);
	put_be32(v + 72, a->per_user_limit);
	v[76] = (uint8_t)nlen;
	memcpy(v + 80, a->name, nlen);
}

static void
act_dec(struct sk_store_activity *a, uint32_t item, const uint8_t *v)
{
	memset(a, 0, sizeof(*a));
	a->item = item;
	a->total = get_be64(v + 0);
	a->added = get_be64(v + 8);
	a->price = get_be64(v + 16);
	a->start_ns = (int64_t)get_be64(v + 24);
	a->end_ns = (int64_t)get_be64(v + 32);
	a->pay_timeout_ns = (int64_t)get_be64(v + 40);
	a->created_ns = (int64_t)get_be64(v + 48);
	a->updated_ns = (int64_t)get_be64(v + 56);
	a->closed_ns = (int64_t)get_be64(v + 64);
	a->per_user_limit = get_be32(v + 72);
	size_t nlen = v[76] <= SK_STORE_NAME_MAX ? v[76] : SK_STORE_NAME_MAX;
	memcpy(a->name, v + 80, nlen);
	a->name[nlen] = '\0';
}

static void
event_enc(uint8_t v[EVENT_VAL_LEN], const struct sk_store_event *ev)
{
	v[0] = ev->type;
	v[1] = ev->nlines;
	v[2] = 0;
	v[3] = 0;
	put_be32(v + 4, ev->item);
	put_be64(v + 8, ev->order);
	put_be64(v + 16, ev->user);
	put_be64(v + 24, ev->units);
	put_be64(v + 32, (uint64_t)ev->time_ns);
}

static void
event_dec(struct sk_store_event *ev, uint64_t seq, const uint8_t *v)
{
	ev->seq = seq;
	ev->type = v[0];
	ev->nlines = v[1];
	ev->item = get_be32(v + 4);
	ev->order = get_be64(v + 8);
	ev->user = get_be64(v + 16);
	ev->units = get_be64(v + 24);
	ev->time_ns = (int64_t)get_be64(v + 32);
}

/* ------------------------------------------------ errors and transactions */

/* lmdb_err - an LMDB or system error code as a negative errno. */
static int
lmdb_err(int rc)
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

/*
 * A write transaction and the event sequence it appends with. The counter
 * lives in `meta` so that trimming the log never lets a sequence number be
 * reused; it is loaded on the first event and written back at commit.
 */
struct wtxn {
	MDB_txn *txn;
	uint64_t seq_next; /* 0: not loaded */
	uint64_t seq_first, seq_last;
};

static int
wtxn_begin(struct sk_store *st, struct wtxn *w)
{
	memset(w, 0, sizeof(*w));
	return lmdb_err(mdb_txn_begin(st->env, NULL, 0, &w->txn));
}

static void
wtxn_abort(struct wtxn *w)
{
	if (w->txn != NULL)
		mdb_txn_abort(w->txn);
	w->txn = NULL;
}

/* wtxn_commit - write the event counter back and commit (durably). */
static int
wtxn_commit(struct sk_store *st, struct wtxn *w)
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
	w->txn = NULL;
	return lmdb_err(rc);
}

static int
meta_get_u64(struct sk_store *st, MDB_txn *txn, const char *name, uint64_t *out)
{
	MDB_val k = mval(name, strlen(name)), d;
	int rc = mdb_get(txn, st->meta, &k, &d);

	if (rc != 0)
		return lmdb_err(rc);
	if (d.mv_size != 8)
		return -EIO;
	*out = get_be64(d.mv_data);
	return 0;
}

/* event_add - append @ev with the next sequence number (set in ev->seq). */
static int
event_add(struct sk_store *st, struct wtxn *w, struct sk_store_event *ev)
{
	uint8_t k[EVENT_KEY_LEN], v[EVENT_VAL_LEN];

	if (w->seq_next == 0) {
		int rc = meta_get_u64(st, w->txn, META_EVENT_NEXT, &w->seq_next);
		if (rc != 0)
			return rc == -ENOENT ? -EIO : rc;
	}
	ev->seq = w->seq_next;
	put_be64(k, ev->seq);
	event_enc(v, ev);
	MDB_val key = mval(k, sizeof(k)), data = mval(v, sizeof(v));
	int rc = mdb_put(w->txn, st->events, &key, &data, MDB_APPEND);
	if (rc != 0)
		return rc == MDB_KEYEXIST ? -EIO : lmdb_err(rc);
	if (w->seq_first == 0)
		w->seq_first = ev->seq;
	w->seq_last = ev->seq;
	w->seq_next++;
	return 0;
}

/*
 * wtxn_end - finish a write: if @rc is 0, append @ev (unless NULL) and
 * commit; the transaction is gone after the call either way. Returns @rc,
 * else the failure of the append or the commit, else 0.
 */
static int
wtxn_end(struct sk_store *st, struct wtxn *w, int rc, struct sk_store_event *ev)
{
	if (rc == 0 && ev != NULL)
		rc = event_add(st, w, ev);
	if (rc == 0)
		rc = wtxn_commit(st, w);
	wtxn_abort(w);
	return rc;
}

static int
rtxn_begin(struct sk_store *st, MDB_txn **txn)
{
	return lmdb_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn));
}

/*
 * A walk: one cursor over one database, in key order. walk_open() opens it
 * in @txn, or in a read transaction of its own when @txn is NULL;
 * walk_get() moves it and is true at a record (key and data set), false
 * past the end or on an error. The first error sticks in rc: every later
 * move is false. walk_end() closes what the walk opened. An all-zero walk
 * is a closed one, safe to end.
 */
struct walk {
	MDB_txn *txn; /* the transaction the cursor lives in */
	MDB_txn *own; /* txn when the walk began it, else NULL */
	MDB_cursor *cur;
	MDB_val key, data;
	int rc; /* 0, or the first error as a negative errno */
};

/* walk_open - open @w on @dbi; returns w->rc (0 or an error). */
static int
walk_open(struct walk *w, struct sk_store *st, MDB_txn *txn, MDB_dbi dbi)
{
	memset(w, 0, sizeof(*w));
	if (txn == NULL) {
		w->rc = rtxn_begin(st, &w->own);
		if (w->rc != 0) {
			w->own = NULL;
			return w->rc;
		}
		txn = w->own;
	}
	w->txn = txn;
	w->rc = lmdb_err(mdb_cursor_open(txn, dbi, &w->cur));
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
		w->rc = lmdb_err(rc);
	return rc == 0;
}

/* walk_get - move by @op from the walk's current record; true at a record. */
static bool
walk_get(struct walk *w, MDB_cursor_op op)
{
	return walk_move(w, &w->key, op);
}

/*
 * walk_seek - position by @op (MDB_SET, MDB_SET_KEY, MDB_SET_RANGE,
 * MDB_FIRST) from the @len bytes of key @k; true at a record. w->key is
 * then LMDB's copy of the key, never @k: MDB_SET is done as MDB_SET_KEY,
 * so the walk holds no pointer into the caller's frame.
 */
static bool
walk_seek(struct walk *w, MDB_cursor_op op, const void *k, size_t len)
{
	MDB_val key = mval(k, len);
	if (!walk_move(w, &key, op == MDB_SET ? MDB_SET_KEY : op))
		return false;
	w->key = key;
	return true;
}

/*
 * walk_end - close the cursor and abort the walk's own transaction (its
 * records are invalid from here). Returns @rc if non-zero, else the walk's
 * error, else 0. May be called again.
 */
static int
walk_end(struct walk *w, int rc)
{
	if (w->cur != NULL)
		mdb_cursor_close(w->cur);
	if (w->own != NULL)
		mdb_txn_abort(w->own);
	w->cur = NULL;
	w->own = NULL;
	w->txn = NULL;
	return rc != 0 ? rc : w->rc;
}

/*
 * A small open-addressing table of items touched by one call: their
 * activity limits and ledger, loaded on first touch, written back once at
 * the end (put_orders), or per-item sums (verify). Grows at half load.
 */
struct item_ent {
	uint32_t item; /* 0: empty slot */
	uint32_t limit;
	bool has_act, dirty, has_ledger;
	uint64_t cap; /* total + added */
	int64_t timeout_ns;
	struct sk_store_ledger l;
	uint64_t sum; /* verify: live units seen in by_user */
};

struct itab {
	struct item_ent *e;
	size_t mask, used;
};

static int
itab_init(struct itab *t, size_t cap)
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

/* itab_get - the entry of @item, created empty (*fresh set) if absent. */
static struct item_ent *
itab_get(struct itab *t, uint32_t item, bool *fresh)
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

static int
ledger_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_ledger *l,
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
		return lmdb_err(rc);
	if (data.mv_size != LEDGER_VAL_LEN)
		return -EIO;
	ledger_dec(l, data.mv_data);
	if (found != NULL)
		*found = true;
	return 0;
}

static int
ledger_store(struct sk_store *st, MDB_txn *txn, uint32_t item, const struct sk_store_ledger *l)
{
	uint8_t k[RESTOCK_KEY_LEN], v[LEDGER_VAL_LEN];

	item_key(k, item, ITEM_TAG_LEDGER, 0);
	ledger_enc(v, l);
	MDB_val key = mval(k, ITEM_KEY_LEN), data = mval(v, sizeof(v));
	return lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

/* act_load - the activity of @item; -ENOENT if none. */
static int
act_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_activity *a)
{
	uint8_t k[RESTOCK_KEY_LEN];
	MDB_val key, data;

	item_key(k, item, ITEM_TAG_DEF, 0);
	key = mval(k, ITEM_KEY_LEN);
	int rc = mdb_get(txn, st->items, &key, &data);
	if (rc != 0)
		return lmdb_err(rc);
	if (data.mv_size != ACT_VAL_LEN)
		return -EIO;
	act_dec(a, item, data.mv_data);
	return 0;
}

static int
act_store(struct sk_store *st, MDB_txn *txn, const struct sk_store_activity *a)
{
	uint8_t k[RESTOCK_KEY_LEN], v[ACT_VAL_LEN];

	item_key(k, a->item, ITEM_TAG_DEF, 0);
	act_enc(v, a);
	MDB_val key = mval(k, ITEM_KEY_LEN), data = mval(v, sizeof(v));
	return lmdb_err(mdb_put(txn, st->items, &key, &data, 0));
}

/* ------------------------------------------------------------- open/close */

static const struct {
	const char *name;
	size_t off;
	unsigned flags;
} db_list[] = {
	{"orders", offsetof(struct sk_store, orders), 0},
	{"by_user", offsetof(struct sk_store, by_user), MDB_DUPSORT | MDB_DUPFIXED},
	{"items", offsetof(struct sk_store, items), 0},
	{"events", offsetof(struct sk_store, events), 0},
	{"cursors", offsetof(struct sk_store, cursors), 0},
	{"deadlines", offsetof(struct sk_store, deadlines), 0},
};

static int
meta_put(struct sk_store *st, MDB_txn *txn, const char *name, const void *v, size_t len)
{
	MDB_val k = mval(name, strlen(name)), d = mval(v, len);

	return lmdb_err(mdb_put(txn, st->meta, &k, &d, 0));
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
	int rc = lmdb_err(mdb_dbi_open(txn, "meta", MDB_CREATE, &st->meta));

	for (size_t i = 0; rc == 0 && i < SK_ARRAY_SIZE(db_list); i++)
		rc = lmdb_err(mdb_dbi_open(txn, db_list[i].name, MDB_CREATE | db_list[i].flags,
					   (MDB_dbi *)((char *)st + db_list[i].off)));
	if (rc == 0)
		rc = schema_write(st, txn);
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
 * schema_setup - open the databases of an existing store after checking its
 * schema; create them if the environment is empty (and writable).
 */
static int
schema_setup(struct sk_store *st, const char *dir, char *err, size_t errlen)
{
	bool rdonly = st->flags & SK_STORE_RDONLY;
	MDB_txn *txn;
	MDB_val k, d;
	int rc = lmdb_err(mdb_txn_begin(st->env, NULL, rdonly ? MDB_RDONLY : 0, &txn));

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
		rc = lmdb_err(rc);
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
		rc = lmdb_err(rc);
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
	if (major != SK_STORE_SCHEMA_MAJOR) {
		sk_set_err(err, errlen,
			   "%s: store schema %u.%u, this build reads schema %u.x: "
			   "migrate the store or run a matching build",
			   dir, major, minor, SK_STORE_SCHEMA_MAJOR);
		rc = -EPROTO;
		goto out;
	}
	for (size_t i = 0; i < SK_ARRAY_SIZE(db_list); i++) {
		rc = mdb_dbi_open(txn, db_list[i].name, db_list[i].flags,
				  (MDB_dbi *)((char *)st + db_list[i].off));
		if (rc != 0) {
			sk_set_err(err, errlen, "%s: damaged store: database %s: %s", dir,
				   db_list[i].name, mdb_strerror(rc));
			rc = rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE ? -EPROTO : lmdb_err(rc);
			goto out;
		}
	}
	/* Minor versions only add; an older minor is upgraded by stamping ours. */
	uint32_t ours = SK_STORE_SCHEMA_MINOR; /* a variable: no "always false" at 0 */
	if (!rdonly && minor < ours)
		rc = schema_write(st, txn);
out:
	if (rc == 0) {
		rc = lmdb_err(mdb_txn_commit(txn));
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
	if (!rdonly && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		sk_set_err(err, errlen, "%s: cannot create the directory: %s", dir,
			   strerror(errno));
		goto err;
	}
	rc = mdb_env_create(&st->env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(st->env, 1 + SK_ARRAY_SIZE(db_list));
	if (rc == 0)
		rc = mdb_env_set_mapsize(st->env, conf->map_size != 0 ? conf->map_size
								      : SK_STORE_MAP_SIZE_DEFAULT);
	if (rc != 0) {
		rc = lmdb_err(rc);
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
		rc = lmdb_err(rc);
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
	if (st != NULL && st->env != NULL)
		mdb_env_close(st->env);
	free(st);
	return rc;
}

void
sk_store_close(struct sk_store *st)
{
	if (st == NULL)
		return;
	mdb_env_close(st->env);
	free(st);
}

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
			return lmdb_err(rc);
		if (data.mv_size != ORDER_VAL_LEN)
			return -EIO;
		struct sk_store_line l;
		order_dec(&l, r[j].id, r[j].line, data.mv_data);
		if (l.rec.user != r[j].user || l.rec.item != r[j].item || l.rec.qty != r[j].qty ||
		    l.rec.price != r[j].price || l.rec.nlines != r[j].nlines) {
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
	for (bool at = walk_seek(bu, MDB_SET, k, sizeof(k)); at; at = walk_get(bu, MDB_NEXT_DUP)) {
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
	struct item_ent *e = itab_get(t, item, &fresh);

	if (e == NULL)
		return -ENOMEM;
	*out = e;
	if (!fresh)
		return 0;
	struct sk_store_activity a;
	int rc = act_load(st, txn, item, &a);
	if (rc == 0) {
		e->has_act = true;
		e->limit = a.per_user_limit;
		e->cap = a.total + a.added;
		e->timeout_ns = a.pay_timeout_ns;
	} else if (rc != -ENOENT) {
		return rc;
	}
	return ledger_load(st, txn, item, &e->l, NULL);
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
		order_enc(v, &l);
		key = mval(k, ORDER_KEY_LEN), data = mval(v, ORDER_VAL_LEN);
		rc = mdb_put(w->txn, st->orders, &key, &data, MDB_NOOVERWRITE);
		if (rc != 0)
			return rc == MDB_KEYEXIST ? -EIO : lmdb_err(rc);

		byuser_key(k, r[j].item, r[j].user);
		byuser_val(v, r[j].id, r[j].qty);
		key = mval(k, BYUSER_KEY_LEN), data = mval(v, BYUSER_VAL_LEN);
		rc = mdb_put(w->txn, st->by_user, &key, &data, MDB_NODUPDATA);
		if (rc != 0)
			return rc == MDB_KEYEXIST ? -EIO : lmdb_err(rc);

		bool fresh;
		struct item_ent *e = itab_get(t, r[j].item, &fresh);
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
			return lmdb_err(rc);
	}
	struct sk_store_event ev = {.type = SK_STORE_EV_CONFIRMED,
				    .nlines = r[0].nlines,
				    .item = r[0].item,
				    .order = r[0].id,
				    .user = r[0].user,
				    .units = *units,
				    .time_ns = now_ns};
	return event_add(st, w, &ev);
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
	rc = itab_init(&t, 16);
	if (rc != 0)
		goto out;
	rc = wtxn_begin(st, &w);
	if (rc != 0)
		goto out;
	rc = walk_open(&bu, st, w.txn, st->by_user);
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
			rc = ledger_store(st, w.txn, t.e[i].item, &t.e[i].l);
	if (rc != 0)
		goto out;
	walk_end(&bu, 0);
	s.event_first = w.seq_first;
	s.event_last = w.seq_last;
	rc = wtxn_commit(st, &w);
	if (rc == 0 && stats != NULL)
		*stats = s;
out:
	walk_end(&bu, rc);
	wtxn_abort(&w);
	free(t.e);
	return rc;
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

/* line_move - apply a state change to one line's by_user entry and ledger. */
static int
line_move(struct sk_store *st, MDB_txn *txn, struct sk_store_line *l, unsigned to)
{
	struct sk_store_ledger led;
	int rc = ledger_load(st, txn, l->rec.item, &led, NULL);

	if (rc != 0)
		return rc;
	if (to == SK_ORDER_CANCELLED || to == SK_ORDER_FAILED) {
		uint8_t k[BYUSER_KEY_LEN], v[BYUSER_VAL_LEN];
		byuser_key(k, l->rec.item, l->rec.user);
		byuser_val(v, l->rec.id, l->rec.qty);
		MDB_val key = mval(k, sizeof(k)), data = mval(v, sizeof(v));
		rc = mdb_del(txn, st->by_user, &key, &data);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return lmdb_err(rc);
		led.returned += l->rec.qty - l->rec.returned;
		led.lines_cancelled++;
		l->rec.returned = l->rec.qty;
	} else if (to == SK_ORDER_PAID) {
		led.paid += l->rec.qty;
		led.lines_paid++;
	}
	return ledger_store(st, txn, l->rec.item, &led);
}

/*
 * cart_line - line @j of order @id into @l, the walk on it: line 0 is looked
 * up, every next one must follow in `orders`. Returns 0, -ENOENT (no line
 * 0), -EIO (a line missing or out of place) or an error.
 */
static int
cart_line(struct walk *wk, uint64_t id, unsigned j, struct sk_store_line *l)
{
	uint8_t k[ORDER_KEY_LEN];
	bool at;

	if (j == 0) {
		order_key(k, id, 0);
		at = walk_seek(wk, MDB_SET_KEY, k, sizeof(k));
	} else {
		at = walk_get(wk, MDB_NEXT);
	}
	if (!at)
		return wk->rc != 0 ? wk->rc : j == 0 ? -ENOENT : -EIO;
	if (wk->key.mv_size != ORDER_KEY_LEN || wk->data.mv_size != ORDER_VAL_LEN ||
	    get_be64(wk->key.mv_data) != id || ((uint8_t *)wk->key.mv_data)[8] != j)
		return -EIO;
	order_dec(l, id, (uint8_t)j, wk->data.mv_data);
	return 0;
}

int
sk_store_order_move(struct sk_store *st, uint64_t id, unsigned from, unsigned to, int64_t now_ns,
		    unsigned *current)
{
	uint8_t k[DEADLINE_KEY_LEN], v[ORDER_VAL_LEN];
	struct sk_store_line l, first = {0};
	struct wtxn w;
	struct walk wk;
	MDB_val key, data;
	uint64_t units = 0;
	int rc;

	if (!sk_order_transition_ok(from, to))
		return -EINVAL;
	rc = wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	walk_open(&wk, st, w.txn, st->orders);
	for (unsigned j = 0;; j++) {
		rc = cart_line(&wk, id, j, &l);
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
		order_enc(v, &l);
		data = mval(v, ORDER_VAL_LEN);
		rc = lmdb_err(mdb_cursor_put(wk.cur, &wk.key, &data, MDB_CURRENT));
		if (rc != 0)
			break;
		units += l.rec.qty;
		if (j + 1 >= first.rec.nlines)
			break;
	}
	rc = walk_end(&wk, rc);
	if (rc != 0)
		goto out;
	if (first.deadline_ns != 0 && to != SK_ORDER_CONFIRMED) {
		deadline_key(k, first.deadline_ns, id);
		key = mval(k, DEADLINE_KEY_LEN);
		rc = mdb_del(w.txn, st->deadlines, &key, NULL);
		rc = rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
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
	return wtxn_end(st, &w, 0, &ev);
out:
	wtxn_abort(&w);
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
	int rc = walk_open(&wk, st, NULL, st->orders);

	if (rc != 0)
		return walk_end(&wk, rc);
	for (unsigned j = 0;; j++) {
		rc = cart_line(&wk, id, j, &l);
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
	return walk_end(&wk, rc);
}

int
sk_store_holdings_foreach(struct sk_store *st, uint32_t item, sk_store_holding_cb cb, void *arg)
{
	uint8_t k[BYUSER_KEY_LEN];
	struct walk wk;
	int rc = 0;

	walk_open(&wk, st, NULL, st->by_user);
	byuser_key(k, item, 0);
	bool at = walk_seek(&wk, item != 0 ? MDB_SET_RANGE : MDB_FIRST, k, sizeof(k));
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
		for (; at; at = walk_get(&wk, MDB_NEXT_DUP)) {
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
		at = walk_get(&wk, MDB_NEXT_NODUP);
	}
	return walk_end(&wk, rc);
}

int
sk_store_deadlines_foreach(struct sk_store *st, int64_t upto_ns, sk_store_deadline_cb cb, void *arg)
{
	struct walk wk;
	int rc = 0;

	walk_open(&wk, st, NULL, st->deadlines);
	for (bool at = walk_get(&wk, MDB_FIRST); at; at = walk_get(&wk, MDB_NEXT)) {
		if (wk.key.mv_size != DEADLINE_KEY_LEN) {
			rc = -EIO;
			break;
		}
		int64_t d = (int64_t)get_be64(wk.key.mv_data);
		if (d > upto_ns ||
		    (rc = cb(d, get_be64((const uint8_t *)wk.key.mv_data + 8), arg)) != 0)
			break;
	}
	return walk_end(&wk, rc);
}

/* ------------------------------------------------------------------ events */

int
sk_store_events_foreach(struct sk_store *st, uint64_t from_seq, sk_store_event_cb cb, void *arg)
{
	uint8_t k[EVENT_KEY_LEN];
	struct walk wk;
	int rc = 0;

	walk_open(&wk, st, NULL, st->events);
	put_be64(k, from_seq);
	for (bool at = walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)); at;
	     at = walk_get(&wk, MDB_NEXT)) {
		struct sk_store_event ev;
		if (wk.key.mv_size != EVENT_KEY_LEN || wk.data.mv_size != EVENT_VAL_LEN) {
			rc = -EIO;
			break;
		}
		event_dec(&ev, get_be64(wk.key.mv_data), wk.data.mv_data);
		rc = cb(&ev, arg);
		if (rc != 0)
			break;
	}
	return walk_end(&wk, rc);
}

int
sk_store_event_append(struct sk_store *st, struct sk_store_event *ev)
{
	struct wtxn w;

	if (ev == NULL || ev->type < SK_STORE_EV_CONFIRMED || ev->type > SK_STORE_EV_CLOSED)
		return -EINVAL;
	int rc = wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	struct sk_store_event e = *ev;
	rc = wtxn_end(st, &w, 0, &e);
	if (rc == 0)
		ev->seq = e.seq;
	return rc;
}

int
sk_store_events_trim(struct sk_store *st, uint64_t below_seq, uint64_t *removed)
{
	struct wtxn w;
	struct walk wk;
	uint64_t count = 0;
	int rc = wtxn_begin(st, &w);

	if (removed != NULL)
		*removed = 0;
	if (rc != 0)
		return rc;
	walk_open(&wk, st, w.txn, st->events);
	/* The oldest event each round: O(log n) per delete, obviously right. */
	while (walk_get(&wk, MDB_FIRST) && wk.key.mv_size == EVENT_KEY_LEN &&
	       get_be64(wk.key.mv_data) < below_seq) {
		rc = lmdb_err(mdb_cursor_del(wk.cur, 0));
		if (rc != 0)
			break;
		count++;
	}
	rc = walk_end(&wk, rc);
	if (rc == 0 && count != 0)
		rc = wtxn_commit(st, &w);
	if (rc == 0 && removed != NULL)
		*removed = count;
	wtxn_abort(&w);
	return rc;
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
	rc = wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = act_load(st, w.txn, a->item, &cur);
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
	rc = ledger_load(st, w.txn, a->item, &led, NULL);
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
	rc = act_store(st, w.txn, &cur);
	struct sk_store_event ev = {.type = SK_STORE_EV_ACTIVITY,
				    .item = a->item,
				    .units = cur.total,
				    .time_ns = now_ns};
	return wtxn_end(st, &w, rc, &ev);
out:
	wtxn_abort(&w);
	return rc;
}

int
sk_store_activity_get(struct sk_store *st, uint32_t item, struct sk_store_activity *a,
		      struct sk_store_ledger *ledger)
{
	struct sk_store_activity tmp;
	MDB_txn *txn;
	int rc = rtxn_begin(st, &txn);

	if (rc != 0)
		return rc;
	rc = act_load(st, txn, item, a != NULL ? a : &tmp);
	if ((rc == 0 || rc == -ENOENT) && ledger != NULL) {
		int lr = ledger_load(st, txn, item, ledger, NULL);
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

	walk_open(&wk, st, NULL, st->items);
	for (bool at = walk_get(&wk, MDB_FIRST); at; at = walk_get(&wk, MDB_NEXT)) {
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
		act_dec(&a, item, wk.data.mv_data);
		rc = ledger_load(st, wk.txn, item, &led, NULL);
		if (rc == 0)
			rc = cb(&a, &led, arg);
		if (rc != 0)
			break;
	}
	return walk_end(&wk, rc);
}

int
sk_store_activity_close(struct sk_store *st, uint32_t item, int64_t now_ns)
{
	struct sk_store_activity a;
	struct wtxn w;
	int rc = wtxn_begin(st, &w);

	if (rc != 0)
		return rc;
	rc = act_load(st, w.txn, item, &a);
	if (rc != 0)
		goto out;
	if (a.closed_ns != 0) {
		rc = SK_STORE_UNCHANGED;
		goto out;
	}
	a.closed_ns = now_ns > 0 ? now_ns : 1;
	a.updated_ns = now_ns;
	rc = act_store(st, w.txn, &a);
	struct sk_store_event ev = {.type = SK_STORE_EV_CLOSED, .item = item, .time_ns = now_ns};
	return wtxn_end(st, &w, rc, &ev);
out:
	wtxn_abort(&w);
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
	rc = wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = act_load(st, w.txn, item, &a);
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
		rc = lmdb_err(rc);
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
	rc = act_store(st, w.txn, &a);
	if (rc != 0)
		goto out;
	put_be64(v, units);
	put_be64(v + 8, (uint64_t)now_ns);
	data = mval(v, sizeof(v));
	rc = lmdb_err(mdb_put(w.txn, st->items, &key, &data, 0));
	struct sk_store_event ev = {
		.type = SK_STORE_EV_RESTOCKED, .item = item, .units = units, .time_ns = now_ns};
	return wtxn_end(st, &w, rc, &ev);
out:
	wtxn_abort(&w);
	return rc;
}

/* ----------------------------------------------------------------- cursors */

static bool
cursor_name_ok(const char *name)
{
	return name != NULL && name[0] != '\0' &&
	       strnlen(name, SK_STORE_CURSOR_NAME_MAX + 1) <= SK_STORE_CURSOR_NAME_MAX;
}

int
sk_store_cursor_get(struct sk_store *st, const char *name, uint64_t *value)
{
	MDB_txn *txn;
	MDB_val key, data;

	if (!cursor_name_ok(name) || value == NULL)
		return -EINVAL;
	int rc = rtxn_begin(st, &txn);
	if (rc != 0)
		return rc;
	key = mval(name, strlen(name));
	rc = lmdb_err(mdb_get(txn, st->cursors, &key, &data));
	if (rc == 0 && data.mv_size != 8)
		rc = -EIO;
	if (rc == 0)
		*value = get_be64(data.mv_data);
	mdb_txn_abort(txn);
	return rc;
}

int
sk_store_cursor_set(struct sk_store *st, const char *name, uint64_t value)
{
	uint8_t v[8];
	struct wtxn w;

	if (!cursor_name_ok(name))
		return -EINVAL;
	int rc = wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	put_be64(v, value);
	MDB_val key = mval(name, strlen(name)), data = mval(v, sizeof(v));
	return wtxn_end(st, &w, lmdb_err(mdb_put(w.txn, st->cursors, &key, &data, 0)), NULL);
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
	rc = lmdb_err(mdb_env_info(st->env, &ei));
	if (rc == 0)
		rc = lmdb_err(mdb_env_stat(st->env, &ms));
	if (rc != 0)
		return rc;
	info->page_size = ms.ms_psize;
	info->map_size = ei.me_mapsize;
	info->used_bytes = ((uint64_t)ei.me_last_pgno + 1) * ms.ms_psize;
	info->readers = ei.me_numreaders;
	info->last_txn = ei.me_last_txnid;

	rc = rtxn_begin(st, &txn);
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
		rc = lmdb_err(mdb_stat(txn, dbs[i].dbi, &ms));
		*dbs[i].out = ms.ms_entries;
	}
	if (rc == 0)
		rc = meta_get_u64(st, txn, META_EVENT_NEXT, &info->event_next);
	key = mval(META_SCHEMA, sizeof(META_SCHEMA) - 1);
	if (rc == 0 && mdb_get(txn, st->meta, &key, &data) == 0 && data.mv_size == SCHEMA_VAL_LEN) {
		info->schema_major = get_be32((const uint8_t *)data.mv_data + 4);
		info->schema_minor = get_be32((const uint8_t *)data.mv_data + 8);
	}
	mdb_txn_abort(txn);
	return rc;
}

#define VERIFY_FAIL(...)                                                                           \
	do {                                                                                       \
		sk_set_err(err, errlen, __VA_ARGS__);                                              \
		rc = -EBADMSG;                                                                     \
		goto out;                                                                          \
	} while (0)

/* verify_orders - walk `orders`: complete carts, their by_user and deadlines. */
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
	rc = walk_open(&wk, st, txn, st->orders);
	if (rc == 0)
		rc = walk_open(&bu, st, txn, st->by_user);
	if (rc != 0)
		goto out;
	unsigned expect = 0;
	for (bool at = walk_get(&wk, MDB_FIRST); at; at = walk_get(&wk, MDB_NEXT)) {
		if (wk.key.mv_size != ORDER_KEY_LEN || wk.data.mv_size != ORDER_VAL_LEN)
			VERIFY_FAIL("orders: bad key or value size");
		uint64_t id = get_be64(wk.key.mv_data);
		uint8_t line = ((uint8_t *)wk.key.mv_data)[8];
		order_dec(&l, id, line, wk.data.mv_data);
		if (line != expect || (line > 0 && id != first.rec.id))
			VERIFY_FAIL("orders: order %#" PRIx64 " line %u out of place", id, line);
		if (line == 0)
			first = l;
		else if (l.state != first.state || l.rec.nlines != first.rec.nlines ||
			 l.rec.user != first.rec.user || l.deadline_ns != first.deadline_ns)
			VERIFY_FAIL("orders: order %#" PRIx64 " lines disagree", id);
		if (l.state != SK_ORDER_CONFIRMED && l.state != SK_ORDER_PAID &&
		    l.state != SK_ORDER_CANCELLED)
			VERIFY_FAIL("orders: order %#" PRIx64 " in state %u", id, l.state);
		expect = line + 1u >= l.rec.nlines ? 0 : line + 1u;

		bool live = l.state != SK_ORDER_CANCELLED;
		if (l.rec.returned != (live ? 0 : l.rec.qty))
			VERIFY_FAIL("orders: order %#" PRIx64 " returned %u of %u", id,
				    l.rec.returned, l.rec.qty);
		byuser_key(k, l.rec.item, l.rec.user);
		byuser_val(v, id, l.rec.qty);
		bk = mval(k, BYUSER_KEY_LEN), bd = mval(v, BYUSER_VAL_LEN);
		int br = mdb_cursor_get(bu.cur, &bk, &bd, MDB_GET_BOTH);
		if (br != 0 && br != MDB_NOTFOUND) {
			rc = lmdb_err(br);
			goto out;
		}
		if (live != (br == 0))
			VERIFY_FAIL("by_user: order %#" PRIx64 " (%s) %s", id,
				    sk_order_status_name(l.state),
				    live ? "missing" : "still present");
		if (live) {
			bool fresh;
			struct item_ent *e = itab_get(t, l.rec.item, &fresh);
			if (e == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			e->sum += l.rec.qty;
			(*live_lines)++;
		}
		if (line == 0 && l.deadline_ns != 0) {
			deadline_key(k, l.deadline_ns, id);
			bk = mval(k, DEADLINE_KEY_LEN);
			int dr = mdb_get(txn, st->deadlines, &bk, &bd);
			if (dr != 0 && dr != MDB_NOTFOUND) {
				rc = lmdb_err(dr);
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
	rc = walk_end(&bu, rc);
	return walk_end(&wk, rc);
}

int
sk_store_verify(struct sk_store *st, char *err, size_t errlen)
{
	struct itab t = {0};
	MDB_txn *txn = NULL;
	MDB_stat ms;
	uint64_t live_lines, with_deadline, next, last = 0;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	rc = itab_init(&t, 64);
	if (rc == 0)
		rc = rtxn_begin(st, &txn);
	if (rc == 0)
		rc = verify_orders(st, txn, &t, &live_lines, &with_deadline, err, errlen);
	if (rc != 0)
		goto out;
	rc = lmdb_err(mdb_stat(txn, st->by_user, &ms));
	if (rc != 0)
		goto out;
	if (ms.ms_entries != live_lines)
		VERIFY_FAIL("by_user: %zu entries for %" PRIu64 " live lines",
			    (size_t)ms.ms_entries, live_lines);
	rc = lmdb_err(mdb_stat(txn, st->deadlines, &ms));
	if (rc != 0)
		goto out;
	if (ms.ms_entries != with_deadline)
		VERIFY_FAIL("deadlines: %zu entries for %" PRIu64 " unpaid orders",
			    (size_t)ms.ms_entries, with_deadline);

	/* Every ledger against the live units counted above. */
	struct walk wk;
	walk_open(&wk, st, txn, st->items);
	for (bool at = walk_get(&wk, MDB_FIRST); at; at = walk_get(&wk, MDB_NEXT)) {
		const uint8_t *kp = wk.key.mv_data;
		if (wk.key.mv_size != ITEM_KEY_LEN || kp[4] != ITEM_TAG_LEDGER)
			continue;
		bool fresh;
		struct item_ent *e = itab_get(&t, get_be32(kp), &fresh);
		if (e == NULL) {
			rc = -ENOMEM;
			break;
		}
		if (wk.data.mv_size != LEDGER_VAL_LEN) {
			rc = -EIO;
			break;
		}
		ledger_dec(&e->l, wk.data.mv_data);
		e->has_ledger = true;
	}
	rc = walk_end(&wk, rc);
	if (rc != 0)
		goto out;
	for (size_t i = 0; i <= t.mask; i++) {
		const struct item_ent *e = &t.e[i];
		if (e->item == 0)
			continue;
		if (e->l.returned > e->l.sold || sk_store_ledger_live(&e->l) != e->sum)
			VERIFY_FAIL("items: item %u ledger live %" PRIu64 ", orders hold %" PRIu64,
				    e->item, sk_store_ledger_live(&e->l), e->sum);
	}

	rc = meta_get_u64(st, txn, META_EVENT_NEXT, &next);
	if (rc != 0)
		goto out;
	walk_open(&wk, st, txn, st->events);
	if (walk_get(&wk, MDB_LAST) && wk.key.mv_size == EVENT_KEY_LEN)
		last = get_be64(wk.key.mv_data);
	rc = walk_end(&wk, 0);
	if (rc != 0)
		goto out;
	if (next == 0 || last >= next)
		VERIFY_FAIL("events: last seq %" PRIu64 ", next %" PRIu64, last, next);
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
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

const char *
sk_store_event_name(unsigned type)
{
	static const char *const names[] = {
		[SK_STORE_EV_CONFIRMED] = "confirmed", [SK_STORE_EV_PAID] = "paid",
		[SK_STORE_EV_CANCELLED] = "cancelled", [SK_STORE_EV_FAILED] = "failed",
		[SK_STORE_EV_RESTOCKED] = "restocked", [SK_STORE_EV_ACTIVITY] = "activity",
		[SK_STORE_EV_CLOSED] = "closed",
	};
	return type < SK_ARRAY_SIZE(names) && names[type] != NULL ? names[type] : "?";
}
