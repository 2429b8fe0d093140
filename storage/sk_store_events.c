/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store's event log (sk_store.h): the append every write call makes in
 * its own transaction, the walk the Kafka exporter reads, the appends the
 * store cannot see itself, the trim of the exported prefix, and the named
 * cursors readers keep their position in.
 */
#include <errno.h>
#include <string.h>

#include "sk_store_impl.h"

int
store_event_add(struct sk_store *st, struct wtxn *w, struct sk_store_event *ev)
{
	uint8_t k[EVENT_KEY_LEN], v[EVENT_VAL_MAX];

	if (w->seq_next == 0) {
		int rc = store_meta_get_u64(st, w->txn, META_EVENT_NEXT, &w->seq_next);
		if (rc != 0)
			return rc == -ENOENT ? -EIO : rc;
	}
	ev->seq = w->seq_next;
	put_be64(k, ev->seq);
	size_t len = store_event_enc(v, ev);
	MDB_val key = mval(k, sizeof(k)), data = mval(v, len);
	int rc = mdb_put(w->txn, st->events, &key, &data, MDB_APPEND);
	if (rc != 0)
		return rc == MDB_KEYEXIST ? -EIO : store_lmdb_err(rc);
	if (w->seq_first == 0)
		w->seq_first = ev->seq;
	w->seq_last = ev->seq;
	w->seq_next++;
	return 0;
}

/* ------------------------------------------------------------------ events */

int
sk_store_events_foreach(struct sk_store *st, uint64_t from_seq, sk_store_event_cb cb, void *arg)
{
	uint8_t k[EVENT_KEY_LEN];
	struct walk wk;
	int rc = 0;

	store_walk_open(&wk, st, NULL, st->events);
	put_be64(k, from_seq);
	for (bool at = store_walk_seek(&wk, MDB_SET_RANGE, k, sizeof(k)); at;
	     at = store_walk_get(&wk, MDB_NEXT)) {
		struct sk_store_event ev;
		if (wk.key.mv_size != EVENT_KEY_LEN ||
		    store_event_dec(&ev, get_be64(wk.key.mv_data), wk.data.mv_data,
				    wk.data.mv_size) != 0) {
			rc = -EIO;
			break;
		}
		rc = cb(&ev, arg);
		if (rc != 0)
			break;
	}
	return store_walk_end(&wk, rc);
}

int
sk_store_event_append(struct sk_store *st, struct sk_store_event *ev)
{
	struct wtxn w;

	if (ev == NULL || ev->type < SK_STORE_EV_CONFIRMED || ev->type > SK_STORE_EV_LIVE ||
	    (ev->request[0] != '\0' && !sk_store_request_ok(ev->request)))
		return -EINVAL;
	int rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	struct sk_store_event e = *ev;
	rc = store_wtxn_end(st, &w, 0, &e);
	if (rc == 0)
		ev->seq = e.seq;
	return rc;
}

int
sk_store_events_trim(struct sk_store *st, uint64_t below_seq, uint64_t *removed)
{
	return sk_store_events_trim_max(st, below_seq, UINT64_MAX, removed);
}

int
sk_store_events_trim_max(struct sk_store *st, uint64_t below_seq, uint64_t max, uint64_t *removed)
{
	struct wtxn w;
	struct walk wk;
	uint64_t count = 0;
	int rc = store_wtxn_begin(st, &w);

	if (removed != NULL)
		*removed = 0;
	if (rc != 0)
		return rc;
	if (max == 0) {
		store_wtxn_abort(&w);
		return -EINVAL;
	}
	store_walk_open(&wk, st, w.txn, st->events);
	/* The oldest event each round: O(log n) per delete, obviously right. */
	while (count < max && store_walk_get(&wk, MDB_FIRST) && wk.key.mv_size == EVENT_KEY_LEN &&
	       get_be64(wk.key.mv_data) < below_seq) {
		rc = store_lmdb_err(mdb_cursor_del(wk.cur, 0));
		if (rc != 0)
			break;
		count++;
	}
	rc = store_walk_end(&wk, rc);
	if (rc == 0 && count != 0)
		rc = store_wtxn_commit(st, &w);
	if (rc == 0 && removed != NULL)
		*removed = count;
	store_wtxn_abort(&w);
	return rc;
}

const char *
sk_store_event_name(unsigned type)
{
	static const char *const names[] = {
		[SK_STORE_EV_CONFIRMED] = "confirmed",
		[SK_STORE_EV_PAID] = "paid",
		[SK_STORE_EV_CANCELLED] = "cancelled",
		[SK_STORE_EV_FAILED] = "failed",
		[SK_STORE_EV_RESTOCKED] = "restocked",
		[SK_STORE_EV_ACTIVITY] = "activity",
		[SK_STORE_EV_CLOSED] = "closed",
		[SK_STORE_EV_REFUNDED] = "refunded",
		[SK_STORE_EV_PAY_CONFLICT] = "pay_conflict",
		[SK_STORE_EV_REMOVED] = "removed",
		[SK_STORE_EV_PAUSED] = "paused",
		[SK_STORE_EV_RESUMED] = "resumed",
		[SK_STORE_EV_EXTENDED] = "extended",
		[SK_STORE_EV_PAY_REJECTED] = "pay_rejected",
		[SK_STORE_EV_ACTIVITY_ARCHIVED] = "activity_archived",
		[SK_STORE_EV_LIVE] = "live",
	};
	return type < SK_ARRAY_SIZE(names) && names[type] != NULL ? names[type] : "?";
}

const char *
sk_store_pay_reject_name(unsigned reason)
{
	static const char *const names[] = {
		[SK_STORE_REJ_UNSIGNED] = "unsigned",
		[SK_STORE_REJ_BAD_HEADER] = "bad_header",
		[SK_STORE_REJ_UNKNOWN_KID] = "unknown_kid",
		[SK_STORE_REJ_BAD_MAC] = "bad_mac",
		[SK_STORE_REJ_STALE] = "stale",
	};
	return reason < SK_ARRAY_SIZE(names) && names[reason] != NULL ? names[reason] : "?";
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
	int rc = store_rtxn_begin(st, &txn);
	if (rc != 0)
		return rc;
	key = mval(name, strlen(name));
	rc = store_lmdb_err(mdb_get(txn, st->cursors, &key, &data));
	if (rc == 0 && data.mv_size != 8)
		rc = -EIO;
	if (rc == 0)
		*value = get_be64(data.mv_data);
	store_rtxn_end(st, txn);
	return rc;
}

int
sk_store_cursor_set(struct sk_store *st, const char *name, uint64_t value)
{
	uint8_t v[8];
	struct wtxn w;

	if (!cursor_name_ok(name))
		return -EINVAL;
	int rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	put_be64(v, value);
	MDB_val key = mval(name, strlen(name)), data = mval(v, sizeof(v));
	return store_wtxn_end(st, &w, store_lmdb_err(mdb_put(w.txn, st->cursors, &key, &data, 0)),
			      NULL);
}
