/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to storage/: what the files of the order store share. Nothing
 * outside storage/ includes this; the API is sk_store.h.
 *
 *   sk_store.c             open/close, schema, LMDB errors, write and read
 *                          transactions, walks, the item table, sk_store_info()
 *   sk_store_codec.c       values on disk: order lines, ledgers, activities,
 *                          events (keys are built inline below)
 *   sk_store_orders.c      orders: put, state moves, get, holdings, deadlines
 *   sk_store_index.c       the order indexes (user_orders, state_orders) and
 *                          sk_store_orders_find()
 *   sk_store_activities.c  activities, ledgers and restocks (the `items` db)
 *   sk_store_events.c      the event log and the cursors kept on it
 *   sk_store_payments.c    payments and refunds, exactly once by request id
 *   sk_store_verify.c      sk_store_verify()
 *
 * Layout of every key and value: docs/storage.md. All integers are
 * big-endian on disk so that LMDB's memcmp order is the numeric order
 * (orders by id, deadlines by time, events by sequence).
 *
 * Functions shared across these files are named store_*: not API, but
 * global symbols of the library, so they carry a prefix. Errors are
 * negative errnos as in sk_store.h. Thread-safety: as the API; everything
 * here works inside the caller's transaction and keeps no state of its own.
 */
#ifndef SK_STORE_IMPL_H
#define SK_STORE_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <lmdb.h>

#include "sk_store.h"
#include "sk_store_payments.h"

/* Tags of the `items` keys: (item, tag [, restock id]). */
#define ITEM_TAG_DEF	 0
#define ITEM_TAG_LEDGER	 1
#define ITEM_TAG_RESTOCK 2
#define ITEM_TAG_REMOVAL 3 /* schema 3 */
#define ITEM_TAG_CLUSTER 4 /* the lease journal of a cluster activity */
#define ITEM_TAG_ARCHIVE 5 /* the archive record (sk_store_archive.h) */

#define ORDER_KEY_LEN	  9   /* id, line */
#define ORDER_VAL_LEN	  84  /* schema 4: the client of either family at 64 */
#define ORDER_VAL_LEN_V1  64  /* schema 1-3: an IPv4 client at 28 */
#define BYUSER_KEY_LEN	  12  /* item, user */
#define BYUSER_VAL_LEN	  12  /* order id, qty */
#define ITEM_KEY_LEN	  5   /* item, tag */
#define RESTOCK_KEY_LEN	  13  /* item, tag, restock id */
#define RESTOCK_VAL_LEN	  16  /* units, time */
#define ACT_VAL_LEN	  160 /* schema 3: removed, paused after schema 2's 144 */
#define ACT_VAL_LEN_V2	  144
#define ACT_FLAG_CLUSTER  0x01 /* v[77] (zero in older stores): a cluster activity */
#define ACT_FLAG_GATE	  0x02 /* v[77]: the gate claim is required */
#define ACT_FLAG_RESERVED 0x04 /* v[77]: reserved users only */
#define LEDGER_VAL_LEN	  48
#define ARCHIVE_VAL_LEN	  40 /* state (+7 zero), orders, first id, last id, time */
#define EVENT_KEY_LEN	  8
#define EVENT_VAL_LEN	  40   /* without the request id (v[2] bytes after it) */
#define EVENT_DEF_LEN	  29   /* limit, price, start, end, name length; then the name */
#define EVENT_DEF_FLAG	  0x01 /* v[3]: an activity definition follows the request id */
#define EVENT_VAL_MAX	  (EVENT_VAL_LEN + SK_STORE_REQUEST_MAX + EVENT_DEF_LEN + SK_STORE_NAME_MAX)
#define REQUEST_VAL_LEN	  40
#define REQTIME_KEY_MAX	  (8 + SK_STORE_REQUEST_MAX) /* time, request id */
#define DEADLINE_KEY_LEN  16			     /* deadline, order id */
#define SCHEMA_VAL_LEN	  12			     /* "SKST", major, minor */
#define USERIDX_KEY_LEN	  20			     /* item, user, order id */
#define STATEIDX_KEY_LEN  13			     /* item, state, order id */
#define IDX_VAL_LEN	  1			     /* the line of the order holding the item */

/* Keys of `meta` (ASCII, no NUL). */
#define META_SCHEMA	"schema"
#define META_EVENT_NEXT "events.next"
/*
 * "orders.mark." + a group's first id (epoch | member | lcore | seq 0, 8
 * bytes big-endian) -> the highest order id of that group ever purged by
 * an archive (8 bytes): the high-water mark that sk_recover_marks() reads
 * when the group's orders are no longer in `orders`.
 */
#define META_MARK_PREFIX     "orders.mark."
#define META_MARK_PREFIX_LEN (sizeof(META_MARK_PREFIX) - 1)
#define META_MARK_KEY_LEN    (META_MARK_PREFIX_LEN + 8)

/* store_mark_raise - raise the persisted high-water mark of @id's group to
 * @id (no change when it is higher already), in write txn @txn. */
int store_mark_raise(struct sk_store *st, MDB_txn *txn, uint64_t id);
#define META_CREATED "created"

struct sk_store {
	MDB_env *env;
	unsigned flags;
	MDB_dbi meta, orders, by_user, items, events, cursors, deadlines;
	MDB_dbi requests, requests_by_time; /* schema 2; see has_requests */
	MDB_dbi user_orders, state_orders;  /* schema 3; see has_index */
	MDB_dbi reservations;		    /* schema 4.1; see has_reserve */
	bool has_reserve;		    /* false: a store before 4.1 opened read-only */
	bool has_requests;		    /* false: a schema 1 store opened read-only */
	bool has_index;			    /* false: a schema 1-2 store opened read-only */
	uint32_t upgraded_from;		    /* the schema major this open upgraded (0: none) */
	uint64_t upgraded_lines;	    /* order lines that upgrade rewrote */
	uint64_t requests_max;		    /* bounds of the request table */
	int64_t requests_ttl_ns;
	/*
	 * The map's users against its resize (sk_store_map.c): every
	 * transaction, read or write, holds it shared from begin to end, and
	 * mdb_env_info()/mdb_env_stat() too; mdb_env_set_mapsize() holds it
	 * exclusive, because it unmaps the memory the transactions read.
	 * Readers are preferred (a walk's callback begins another transaction
	 * on the same thread: a recursive shared hold must never wait); a grow
	 * that waits closes the gate to the threads that hold none yet
	 * (grow_pending set, grow_gate held), so a stream of reads cannot
	 * starve it.
	 */
	pthread_rwlock_t maplock;
	pthread_mutex_t grow_gate;
	int grow_pending; /* atomic: 1 while a grow holds grow_gate */
	bool maplock_ok;
};

/* store_deadline - CLOCK_MONOTONIC @ns from now, for the clocked lock waits. */
static inline struct timespec
store_deadline(int64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ns / 1000000000;
	t.tv_nsec += ns % 1000000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

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

static inline void
order_key(uint8_t k[ORDER_KEY_LEN], uint64_t id, uint8_t line)
{
	put_be64(k, id);
	k[8] = line;
}

static inline void
byuser_key(uint8_t k[BYUSER_KEY_LEN], uint32_t item, uint64_t user)
{
	put_be32(k, item);
	put_be64(k + 4, user);
}

static inline void
byuser_val(uint8_t v[BYUSER_VAL_LEN], uint64_t id, uint32_t qty)
{
	put_be64(v, id);
	put_be32(v + 8, qty);
}

static inline void
item_key(uint8_t k[RESTOCK_KEY_LEN], uint32_t item, uint8_t tag, uint64_t restock_id)
{
	put_be32(k, item);
	k[4] = tag;
	put_be64(k + 5, restock_id);
}

static inline void
useridx_key(uint8_t k[USERIDX_KEY_LEN], uint32_t item, uint64_t user, uint64_t id)
{
	put_be32(k, item);
	put_be64(k + 4, user);
	put_be64(k + 12, id);
}

static inline void
stateidx_key(uint8_t k[STATEIDX_KEY_LEN], uint32_t item, uint8_t state, uint64_t id)
{
	put_be32(k, item);
	k[4] = state;
	put_be64(k + 5, id);
}

static inline void
deadline_key(uint8_t k[DEADLINE_KEY_LEN], int64_t deadline_ns, uint64_t id)
{
	put_be64(k, (uint64_t)deadline_ns);
	put_be64(k + 8, id);
}

/* ------------------------------------------------ values (sk_store_codec.c) */

/*
 * The fixed-size values of docs/storage.md, "Layout". Each *_enc() fills
 * every byte of @v from the struct; each *_dec() fills the whole struct
 * from @v (which the caller has checked is *_VAL_LEN bytes) and the parts
 * that live in the key (@id, @line, @item, @seq). Pure; thread-safe.
 */
void store_order_enc(uint8_t v[ORDER_VAL_LEN], const struct sk_store_line *l);
/*
 * store_order_dec - decode the @len bytes at @v, of either layout (check
 * with order_val_ok() first): a schema 1-3 line's IPv4 client, 0 read as
 * none; a schema 4 line's client of either family.
 */
void store_order_dec(struct sk_store_line *l, uint64_t id, uint8_t line, const uint8_t *v,
		     size_t len);
/* order_val_ok - true if @len is the length of an order line of either layout. */
static inline bool
order_val_ok(size_t len)
{
	return len == ORDER_VAL_LEN || len == ORDER_VAL_LEN_V1;
}
void store_ledger_enc(uint8_t v[LEDGER_VAL_LEN], const struct sk_store_ledger *l);
void store_ledger_dec(struct sk_store_ledger *l, const uint8_t *v);
/* store_act_enc - the name is cut at SK_STORE_NAME_MAX bytes, zero padded. */
void store_act_enc(uint8_t v[ACT_VAL_LEN], const struct sk_store_activity *a);
/* store_act_dec - a definition of @len bytes (schema 3, or 2 without removed
 * units and pause); -EIO for another length. */
int store_act_dec(struct sk_store_activity *a, uint32_t item, const uint8_t *v, size_t len);
/* store_event_enc - returns the value's length (EVENT_VAL_LEN + request). */
size_t store_event_enc(uint8_t v[EVENT_VAL_MAX], const struct sk_store_event *ev);
/* store_event_dec - @len bytes at @v; -EIO if they are not an event. */
int store_event_dec(struct sk_store_event *ev, uint64_t seq, const uint8_t *v, size_t len);

/* -------------------------------------- errors and transactions (sk_store.c) */

/* store_lmdb_err - an LMDB or system error code as a negative errno (0 stays 0). */
int store_lmdb_err(int rc);

/*
 * A write transaction and the event sequence it appends with. The counter
 * lives in `meta` so that trimming the log never lets a sequence number be
 * reused; it is loaded on the first event and written back at commit.
 */
struct wtxn {
	MDB_txn *txn;
	struct sk_store *st; /* set by store_wtxn_begin(): the map lock's owner */
	uint64_t seq_next;   /* 0: not loaded */
	uint64_t seq_first, seq_last;
};

/* store_wtxn_begin - begin the write transaction of @w (waits for the writer lock). */
int store_wtxn_begin(struct sk_store *st, struct wtxn *w);
/* store_wtxn_abort - drop what @w wrote, if it is still open; safe to repeat. */
void store_wtxn_abort(struct wtxn *w);
/*
 * store_wtxn_commit - write the event counter back and commit (durably).
 * The transaction is gone after the call, committed or not.
 */
int store_wtxn_commit(struct sk_store *st, struct wtxn *w);
/*
 * store_wtxn_end - finish a write: if @rc is 0, append @ev (unless NULL)
 * and commit; the transaction is gone after the call either way. Returns
 * @rc, else the failure of the append or the commit, else 0.
 */
int store_wtxn_end(struct sk_store *st, struct wtxn *w, int rc, struct sk_store_event *ev);
/*
 * store_rtxn_begin - a read snapshot, the map lock held shared; the caller
 * ends it with store_rtxn_end(), never mdb_txn_abort(). *txn is NULL on error.
 */
int store_rtxn_begin(struct sk_store *st, MDB_txn **txn);
/* store_rtxn_end - abort the snapshot @txn (NULL: nothing) and drop its map lock. */
void store_rtxn_end(struct sk_store *st, MDB_txn *txn);
/*
 * store_map_shared / store_map_unshare - hold / drop the map lock shared
 * around a use of the map outside a transaction (mdb_env_info(), ...).
 */
void store_map_shared(struct sk_store *st);
void store_map_unshare(struct sk_store *st);
/* store_meta_get_u64 - the u64 of `meta` key @name; -ENOENT, or -EIO if not 8 bytes. */
int store_meta_get_u64(struct sk_store *st, MDB_txn *txn, const char *name, uint64_t *out);

/*
 * A walk: one cursor over one database, in key order. store_walk_open()
 * opens it in @txn, or in a read transaction of its own when @txn is NULL;
 * store_walk_get() moves it and is true at a record (key and data set),
 * false past the end or on an error. The first error sticks in rc: every
 * later move is false. store_walk_end() closes what the walk opened. An
 * all-zero walk is a closed one, safe to end.
 */
struct walk {
	struct sk_store *st;
	MDB_txn *txn; /* the transaction the cursor lives in */
	MDB_txn *own; /* txn when the walk began it, else NULL */
	MDB_cursor *cur;
	MDB_val key, data;
	int rc; /* 0, or the first error as a negative errno */
};

/* store_walk_open - open @w on @dbi; returns w->rc (0 or an error). */
int store_walk_open(struct walk *w, struct sk_store *st, MDB_txn *txn, MDB_dbi dbi);
/* store_walk_get - move by @op from the walk's current record; true at a record. */
bool store_walk_get(struct walk *w, MDB_cursor_op op);
/*
 * store_walk_seek - position by @op (MDB_SET, MDB_SET_KEY, MDB_SET_RANGE,
 * MDB_FIRST) from the @len bytes of key @k; true at a record. w->key is
 * then LMDB's copy of the key, never @k: MDB_SET is done as MDB_SET_KEY,
 * so the walk holds no pointer into the caller's frame.
 */
bool store_walk_seek(struct walk *w, MDB_cursor_op op, const void *k, size_t len);
/*
 * store_walk_end - close the cursor and abort the walk's own transaction
 * (its records are invalid from here). Returns @rc if non-zero, else the
 * walk's error, else 0. May be called again.
 */
int store_walk_end(struct walk *w, int rc);

/*
 * A small open-addressing table of items touched by one call: their
 * activity limits and ledger, loaded on first touch, written back once at
 * the end (put_orders), or per-item sums (verify). Grows at half load.
 * The caller owns t->e and frees it.
 */
struct item_ent {
	uint32_t item; /* 0: empty slot */
	uint32_t limit;
	bool has_act, dirty, has_ledger;
	uint64_t cap; /* total + added - removed */
	int64_t timeout_ns;
	struct sk_store_ledger l;
	uint64_t sum;  /* verify: live units seen in by_user */
	bool archived; /* verify: the item has an archive record */
};

struct itab {
	struct item_ent *e;
	size_t mask, used;
};

/* store_itab_init - an empty table of @cap slots (a power of two); -ENOMEM. */
int store_itab_init(struct itab *t, size_t cap);
/*
 * store_itab_get - the entry of @item, created empty (*fresh set) if
 * absent; NULL when growing the table failed (out of memory).
 */
struct item_ent *store_itab_get(struct itab *t, uint32_t item, bool *fresh);

/* --------------------------------------------- orders (sk_store_orders.c) */

/*
 * store_cart_line - line @j of order @id into @l, the walk on it: line 0 is
 * looked up, every next one must follow in `orders`. Returns 0, -ENOENT (no
 * line 0), -EIO (a line missing or out of place) or an error.
 */
int store_cart_line(struct walk *wk, uint64_t id, unsigned j, struct sk_store_line *l);
/*
 * store_byuser_set - the `by_user` entry of line @l: the one for @old_live
 * units deleted (if > 0), one for the line's live units (qty - returned)
 * put (if > 0).
 */
int store_byuser_set(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l,
		     uint32_t old_live);
/* store_deadline_del - delete the deadline of order @id (if any). */
int store_deadline_del(struct sk_store *st, MDB_txn *txn, int64_t deadline_ns, uint64_t id);

/* ------------------------------------------- order indexes (sk_store_index.c) */

/*
 * store_index_add - the `user_orders` and `state_orders` entries of the new
 * order line @l (state l->state). Nothing on a store without the indexes.
 */
int store_index_add(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l);
/*
 * store_index_move - line @l changed state from @from to l->state: its
 * `state_orders` entry follows. Nothing when the state is the same.
 */
int store_index_move(struct sk_store *st, MDB_txn *txn, const struct sk_store_line *l,
		     unsigned from);
/* A function called on one order line by store_orders_each(); non-zero stops it. */
typedef int (*store_line_fn)(struct sk_store *st, struct walk *wk, const struct sk_store_line *l);
/*
 * store_orders_each - call @fn on every line of `orders` in @txn, in key
 * order, decoded from either layout; the walk is on the line (@fn may put
 * and seek it back). Returns 0, -EIO (a malformed key or value), or @fn's
 * or LMDB's error.
 */
int store_orders_each(struct sk_store *st, MDB_txn *txn, store_line_fn fn);
/*
 * store_index_build - fill `user_orders` and `state_orders` from `orders`
 * (the upgrade of a store of schema 1 or 2, in the open's transaction).
 */
int store_index_build(struct sk_store *st, MDB_txn *txn);

/* ------------------------------------------------ events (sk_store_events.c) */

/*
 * store_event_add - append @ev in @w with the next sequence number (set in
 * ev->seq); the counter is written back by store_wtxn_commit().
 */
int store_event_add(struct sk_store *st, struct wtxn *w, struct sk_store_event *ev);

/* ---------------------------------- activities, ledgers (sk_store_activities.c) */

/*
 * store_ledger_load - the ledger of @item in @txn, all zero when it has
 * none (*found false; @found may be NULL); -EIO on a value of the wrong size.
 */
int store_ledger_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_ledger *l,
		      bool *found);
/* store_ledger_store - write the ledger of @item in @txn. */
int store_ledger_store(struct sk_store *st, MDB_txn *txn, uint32_t item,
		       const struct sk_store_ledger *l);
/* store_act_load - the activity of @item; -ENOENT if none, -EIO if damaged. */
/* store_reserve_open - open (create when writable) the reservations
 * database in @txn; absent from a read-only older store: has_reserve false. */
int store_reserve_open(struct sk_store *st, MDB_txn *txn, bool rdonly);

int store_act_load(struct sk_store *st, MDB_txn *txn, uint32_t item, struct sk_store_activity *a);
/* store_act_store - write the definition of a->item in @txn. */
int store_act_store(struct sk_store *st, MDB_txn *txn, const struct sk_store_activity *a);
/*
 * store_stock_record_put - record stock change @id of @item (restock or
 * removal, by @tag) of @units in @txn (the caller checked @id is unused):
 * 0 or an LMDB error.
 */
int store_stock_record_put(struct sk_store *st, MDB_txn *txn, uint32_t item, uint8_t tag,
			   uint64_t id, uint64_t units, int64_t now_ns);
/*
 * store_act_unsold - the units of @a that no live order holds
 * (base + added - removed - live): 0, or -ERANGE when the live orders hold
 * more (a damaged ledger).
 */
int store_act_unsold(const struct sk_store_activity *a, const struct sk_store_ledger *led,
		     uint64_t *unsold);

/* --------------------------------------------- archive (sk_store_archive.c) */

/*
 * store_archived - whether @item has an archive record in @txn (its orders
 * are read from the archive file; payments treat them as unknown).
 */
bool store_archived(struct sk_store *st, MDB_txn *txn, uint32_t item);
/*
 * archive_line_write - order line @l as one JSON line of an archive file
 * (sk_store_archive_file.c): 0, or -EIO when @f refused it.
 */
int archive_line_write(FILE *f, const struct sk_store_line *l);

#endif /* SK_STORE_IMPL_H */
