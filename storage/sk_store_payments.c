/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payments and refunds in the store (sk_store.h): sk_store_payment_apply()
 * moves an order (confirmed -> paid; units of a paid order refunded, paid
 * -> refunded at the last one) and records (request id -> outcome) in the
 * same transaction, so a message delivered twice is applied once; the
 * request table is bounded by count and age (docs/storage.md, "requests").
 */
#include <errno.h>
#include <string.h>

#include "sk_store_impl.h"

/* Oldest request entries dropped per payment at most, beyond the bounds. */
#define REQUEST_TRIM_STEP 8

/* A recorded request: the `requests` value (docs/storage.md). */
struct req_rec {
	int64_t time_ns;
	uint64_t order, event_seq;
	uint32_t ask_units, ask_item, units;
	uint8_t kind, outcome, state;
};

static void
req_enc(uint8_t v[REQUEST_VAL_LEN], const struct req_rec *r)
{
	memset(v, 0, REQUEST_VAL_LEN);
	put_be64(v + 0, (uint64_t)r->time_ns);
	put_be64(v + 8, r->order);
	put_be64(v + 16, r->event_seq);
	put_be32(v + 24, r->ask_units);
	put_be32(v + 28, r->ask_item);
	put_be32(v + 32, r->units);
	v[36] = r->kind;
	v[37] = r->outcome;
	v[38] = r->state;
}

static void
req_dec(struct req_rec *r, const uint8_t *v)
{
	r->time_ns = (int64_t)get_be64(v + 0);
	r->order = get_be64(v + 8);
	r->event_seq = get_be64(v + 16);
	r->ask_units = get_be32(v + 24);
	r->ask_item = get_be32(v + 28);
	r->units = get_be32(v + 32);
	r->kind = v[36];
	r->outcome = v[37];
	r->state = v[38];
}

/*
 * req_len - the length of request id @r, or 0 if it is not a valid one:
 * 1..SK_STORE_REQUEST_MAX bytes of printable ASCII but '"' and '\\' (so the
 * exporter writes it into JSON as it is).
 */
static size_t
req_len(const char *r)
{
	size_t n = r != NULL ? strnlen(r, SK_STORE_REQUEST_MAX + 1) : 0;

	if (n > SK_STORE_REQUEST_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (r[i] <= ' ' || r[i] > '~' || r[i] == '"' || r[i] == '\\')
			return 0;
	return n;
}

static void
result_of(struct sk_store_pay_result *res, const struct req_rec *r)
{
	memset(res, 0, sizeof(*res));
	res->outcome = r->outcome;
	res->state = r->state;
	res->duplicate = true;
	res->units = r->units;
	res->time_ns = r->time_ns;
	res->event_seq = r->event_seq;
}

/* req_find - the record of request @req (@len bytes) in @txn: 0, -ENOENT, -EIO. */
static int
req_find(struct sk_store *st, MDB_txn *txn, const char *req, size_t len, struct req_rec *r)
{
	MDB_val key = mval(req, len), data;
	int rc = mdb_get(txn, st->requests, &key, &data);

	if (rc != 0)
		return store_lmdb_err(rc);
	if (data.mv_size != REQUEST_VAL_LEN)
		return -EIO;
	req_dec(r, data.mv_data);
	return 0;
}

/*
 * req_trim - delete up to REQUEST_TRIM_STEP of the oldest requests while
 * the table holds more than its bound or they are older than its age.
 */
static int
req_trim(struct sk_store *st, MDB_txn *txn, int64_t now_ns)
{
	struct walk wk;
	MDB_stat ms;
	int rc = store_lmdb_err(mdb_stat(txn, st->requests, &ms));
	uint64_t count = ms.ms_entries;

	if (rc != 0)
		return rc;
	store_walk_open(&wk, st, txn, st->requests_by_time);
	for (unsigned i = 0; i < REQUEST_TRIM_STEP && store_walk_get(&wk, MDB_FIRST); i++) {
		if (wk.key.mv_size <= 8 || wk.key.mv_size > REQTIME_KEY_MAX) {
			rc = -EIO;
			break;
		}
		int64_t t = (int64_t)get_be64(wk.key.mv_data);
		if (count <= st->requests_max && now_ns - t <= st->requests_ttl_ns)
			break;
		MDB_val rk = mval((const uint8_t *)wk.key.mv_data + 8, wk.key.mv_size - 8);
		rc = mdb_del(txn, st->requests, &rk, NULL);
		if (rc == 0 || rc == MDB_NOTFOUND)
			rc = mdb_cursor_del(wk.cur, 0);
		if ((rc = store_lmdb_err(rc)) != 0)
			break;
		count--;
	}
	return store_walk_end(&wk, rc);
}

/* req_put - record request @req (@len bytes) as @r, and trim the table. */
static int
req_put(struct sk_store *st, MDB_txn *txn, const char *req, size_t len, const struct req_rec *r)
{
	uint8_t v[REQUEST_VAL_LEN], k[REQTIME_KEY_MAX];
	MDB_val key = mval(req, len), data = mval(v, sizeof(v));
	int rc;

	req_enc(v, r);
	rc = store_lmdb_err(mdb_put(txn, st->requests, &key, &data, MDB_NOOVERWRITE));
	if (rc != 0)
		return rc;
	put_be64(k, (uint64_t)r->time_ns);
	memcpy(k + 8, req, len);
	key = mval(k, 8 + len), data = mval(NULL, 0);
	rc = store_lmdb_err(mdb_put(txn, st->requests_by_time, &key, &data, 0));
	return rc != 0 ? rc : req_trim(st, txn, r->time_ns);
}

/* An order being changed: its lines, read in the payment's transaction. */
struct porder {
	struct sk_store_line l[SK_STORE_PAY_LINES];
	unsigned n;
	uint8_t state0; /* the state read: the index entries' */
	bool changed[SK_STORE_PAY_LINES];
};

static int
order_read(struct sk_store *st, MDB_txn *txn, uint64_t id, struct porder *o)
{
	struct walk wk;
	int rc = store_walk_open(&wk, st, txn, st->orders);

	o->n = 0;
	for (unsigned j = 0; rc == 0; j++) {
		struct sk_store_line l;
		rc = store_cart_line(&wk, id, j, &l);
		if (rc == 0 && store_archived(st, txn, l.rec.item))
			rc = -ENOENT; /* archived: as unknown as a purged order */
		if (rc != 0)
			break;
		if (l.rec.nlines > SK_STORE_PAY_LINES) {
			rc = -E2BIG;
			break;
		}
		o->l[o->n] = l;
		o->state0 = o->l[0].state;
		o->changed[o->n++] = false;
		if (o->n >= l.rec.nlines)
			break;
	}
	return store_walk_end(&wk, rc);
}

static int
order_write(struct sk_store *st, MDB_txn *txn, const struct porder *o)
{
	uint8_t k[ORDER_KEY_LEN], v[ORDER_VAL_LEN];

	for (unsigned j = 0; j < o->n; j++) {
		if (!o->changed[j])
			continue;
		order_key(k, o->l[j].rec.id, o->l[j].rec.line);
		store_order_enc(v, &o->l[j]);
		MDB_val key = mval(k, sizeof(k)), data = mval(v, sizeof(v));
		int rc = store_lmdb_err(mdb_put(txn, st->orders, &key, &data, 0));
		if (rc == 0)
			rc = store_index_move(st, txn, &o->l[j], o->state0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void
order_state(struct porder *o, unsigned state, int64_t now_ns)
{
	for (unsigned j = 0; j < o->n; j++) {
		o->l[j].state = (uint8_t)state;
		o->l[j].updated_ns = now_ns;
		o->changed[j] = true;
	}
}

static uint32_t
order_units(const struct porder *o)
{
	uint32_t u = 0;

	for (unsigned j = 0; j < o->n; j++)
		u += o->l[j].rec.qty;
	return u;
}

static int
order_event(struct sk_store *st, struct wtxn *w, const struct porder *o, unsigned j, uint8_t type,
	    uint64_t units, const char *req, int64_t now_ns)
{
	struct sk_store_event ev = {.type = type,
				    .nlines = o->l[0].rec.nlines,
				    .item = o->l[j].rec.item,
				    .order = o->l[0].rec.id,
				    .user = o->l[0].rec.user,
				    .units = units,
				    .time_ns = now_ns};

	memcpy(ev.request, req, req_len(req) + 1);
	return store_event_add(st, w, &ev);
}

/* pay - the paid message: confirmed -> paid, or the outcome that refuses it. */
static int
pay(struct sk_store *st, struct wtxn *w, struct porder *o, const char *req, int64_t now_ns,
    struct req_rec *r)
{
	int rc;

	switch (o->l[0].state) {
	case SK_ORDER_CONFIRMED:
		for (unsigned j = 0; j < o->n; j++) {
			struct sk_store_ledger led;
			rc = store_ledger_load(st, w->txn, o->l[j].rec.item, &led, NULL);
			if (rc != 0)
				return rc;
			led.paid += o->l[j].rec.qty;
			led.lines_paid++;
			rc = store_ledger_store(st, w->txn, o->l[j].rec.item, &led);
			if (rc != 0)
				return rc;
		}
		rc = store_deadline_del(st, w->txn, o->l[0].deadline_ns, o->l[0].rec.id);
		if (rc != 0)
			return rc;
		order_state(o, SK_ORDER_PAID, now_ns);
		r->outcome = SK_STORE_PAY_DONE;
		r->units = order_units(o);
		return order_event(st, w, o, 0, SK_STORE_EV_PAID, r->units, req, now_ns);
	case SK_ORDER_CANCELLED:
		/* The timeout won: the units may be another buyer's now. */
		r->outcome = SK_STORE_PAY_CONFLICT;
		r->units = order_units(o);
		return order_event(st, w, o, 0, SK_STORE_EV_PAY_CONFLICT, r->units, req, now_ns);
	case SK_ORDER_PAID:
	case SK_ORDER_REFUNDED:
		r->outcome = SK_STORE_PAY_ALREADY;
		return 0;
	default:
		r->outcome = SK_STORE_PAY_STATE;
		return 0;
	}
}

/* refund_line - @units of line @j refunded: line, by_user, ledger, event. */
static int
refund_line(struct sk_store *st, struct wtxn *w, struct porder *o, unsigned j, uint32_t units,
	    const char *req, int64_t now_ns, struct sk_store_pay_result *res)
{
	struct sk_store_line *l = &o->l[j];
	struct sk_store_ledger led;
	uint32_t old_live = l->rec.qty - l->rec.returned;
	int rc;

	res->lines[res->nlines].rec = l->rec;
	res->lines[res->nlines++].units = units;
	l->rec.returned += units;
	l->refunded = (uint16_t)(l->refunded + units);
	l->updated_ns = now_ns;
	o->changed[j] = true;
	rc = store_byuser_set(st, w->txn, l, old_live);
	if (rc == 0)
		rc = store_ledger_load(st, w->txn, l->rec.item, &led, NULL);
	if (rc != 0)
		return rc;
	led.returned += units;
	rc = store_ledger_store(st, w->txn, l->rec.item, &led);
	if (rc != 0)
		return rc;
	return order_event(st, w, o, j, SK_STORE_EV_REFUNDED, units, req, now_ns);
}

/*
 * refund - the refund message: the units of one line, or everything left of
 * every line, or the outcome that refuses it (nothing changed).
 */
static int
refund(struct sk_store *st, struct wtxn *w, struct porder *o, const struct sk_store_payment *p,
       int64_t now_ns, struct req_rec *r, struct sk_store_pay_result *res)
{
	unsigned first = 0, last = o->n;
	int rc;

	if (o->l[0].state != SK_ORDER_PAID) {
		r->outcome = SK_STORE_PAY_STATE;
		return 0;
	}
	if (p->item != 0) {
		for (first = 0; first < o->n && o->l[first].rec.item != p->item; first++)
			;
		last = first + 1;
	} else if (p->units != 0 && o->n > 1) {
		first = o->n; /* units of a cart: which line? */
	}
	if (first >= o->n) {
		r->outcome = SK_STORE_PAY_NO_ITEM;
		return 0;
	}
	uint32_t left = 0;
	for (unsigned j = first; j < last; j++)
		left += o->l[j].rec.qty - o->l[j].rec.returned;
	if (left == 0 || p->units > left) {
		r->outcome = SK_STORE_PAY_TOO_MANY;
		return 0;
	}
	for (unsigned j = first; j < last; j++) {
		uint32_t u = o->l[j].rec.qty - o->l[j].rec.returned;
		if (p->units != 0)
			u = p->units;
		if (u == 0)
			continue;
		rc = refund_line(st, w, o, j, u, p->request, now_ns, res);
		if (rc != 0)
			return rc;
		r->units += u;
	}
	bool all = true;
	for (unsigned j = 0; j < o->n; j++)
		all = all && o->l[j].rec.returned == o->l[j].rec.qty;
	if (all)
		order_state(o, SK_ORDER_REFUNDED, now_ns);
	r->outcome = SK_STORE_PAY_DONE;
	return 0;
}

int
sk_store_payment_apply(struct sk_store *st, const struct sk_store_payment *p, int64_t now_ns,
		       struct sk_store_pay_result *res)
{
	struct porder o;
	struct req_rec r, old;
	struct wtxn w;
	size_t len = p != NULL ? req_len(p->request) : 0;
	int rc;

	memset(res, 0, sizeof(*res));
	if (len == 0 || (p->kind != SK_STORE_PAY_PAID && p->kind != SK_STORE_PAY_REFUND))
		return -EINVAL;
	if ((st->flags & SK_STORE_RDONLY) || !st->has_requests)
		return -EACCES;
	r = (struct req_rec){.time_ns = now_ns,
			     .order = p->order,
			     .kind = p->kind,
			     .ask_item = p->kind == SK_STORE_PAY_REFUND ? p->item : 0,
			     .ask_units = p->kind == SK_STORE_PAY_REFUND ? p->units : 0};
	rc = store_wtxn_begin(st, &w);
	if (rc != 0)
		return rc;
	rc = req_find(st, w.txn, p->request, len, &old);
	if (rc == 0) {
		result_of(res, &old);
		rc = old.order != r.order || old.kind != r.kind || old.ask_item != r.ask_item ||
				     old.ask_units != r.ask_units
			     ? -EEXIST
			     : 0;
		goto out;
	}
	if (rc == -ENOENT)
		rc = order_read(st, w.txn, p->order, &o);
	if (rc != 0)
		goto out;
	if (p->kind == SK_STORE_PAY_PAID)
		rc = pay(st, &w, &o, p->request, now_ns, &r);
	else
		rc = refund(st, &w, &o, p, now_ns, &r, res);
	r.state = o.l[0].state;
	r.event_seq = w.seq_first;
	if (rc == 0)
		rc = order_write(st, w.txn, &o);
	if (rc == 0)
		rc = req_put(st, w.txn, p->request, len, &r);
	if (rc == 0)
		rc = store_wtxn_commit(st, &w);
	if (rc != 0) {
		res->nlines = 0;
		goto out;
	}
	res->outcome = r.outcome;
	res->state = r.state;
	res->units = r.units;
	res->time_ns = now_ns;
	res->event_seq = r.event_seq;
	return 0;
out:
	store_wtxn_abort(&w);
	return rc;
}

int
sk_store_payment_get(struct sk_store *st, const char *request, struct sk_store_pay_result *res)
{
	size_t len = req_len(request);
	struct req_rec r;
	MDB_txn *txn;
	int rc;

	memset(res, 0, sizeof(*res));
	if (len == 0)
		return -EINVAL;
	if (!st->has_requests)
		return -ENOENT;
	rc = store_rtxn_begin(st, &txn);
	if (rc != 0)
		return rc;
	rc = req_find(st, txn, request, len, &r);
	store_rtxn_end(st, txn);
	if (rc == 0)
		result_of(res, &r);
	return rc;
}

bool
sk_store_request_ok(const char *request)
{
	return req_len(request) != 0;
}

const char *
sk_store_pay_outcome_name(unsigned outcome)
{
	static const char *const names[] = {
		[SK_STORE_PAY_DONE] = "done",	      [SK_STORE_PAY_ALREADY] = "already",
		[SK_STORE_PAY_CONFLICT] = "conflict", [SK_STORE_PAY_STATE] = "state",
		[SK_STORE_PAY_TOO_MANY] = "too_many", [SK_STORE_PAY_NO_ITEM] = "no_item",
	};
	return outcome < SK_ARRAY_SIZE(names) ? names[outcome] : "?";
}
