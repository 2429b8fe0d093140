/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_verify.c - the verify subcommand: reads the LMDB store read-only and
 * MariaDB, compares them per item and per order, prints the differences.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sk_logfmt.h"
#include "sk_order.h"
#include "sk_store.h"

#include "mw_opts.h"
#include "mw_verify.h"

/* The figures compared per item, in this order. */
enum {
	F_TOTAL,
	F_ADDED,
	F_REMOVED,
	F_SOLD,
	F_RETURNED,
	F_PAID,
	F_CONFIRMED,
	F_LPAID,
	F_CANCELLED,
	F_REFUNDED,
	F_N
};
static const char *const fname[F_N] = {
	"total",	   "added",	 "removed",	    "sold",	      "returned", "paid",
	"lines_confirmed", "lines_paid", "lines_cancelled", "lines_refunded",
};

/*
 * state_name - the state as both sides can compare it: a partial refund
 * leaves an order paid in LMDB, "partially_refunded" in MariaDB.
 */
static const char *
state_name(const char *s)
{
	return !strcmp(s, "partially_refunded") ? "paid" : s;
}

/* state_figure - the lines_* figure of an order state (either side's name). */
static int
state_figure(const char *s)
{
	s = state_name(s);
	return !strcmp(s, "paid")	 ? F_LPAID
	       : !strcmp(s, "cancelled") ? F_CANCELLED
	       : !strcmp(s, "refunded")	 ? F_REFUNDED
					 : F_CONFIRMED;
}

struct vitem {
	uint32_t item;
	bool in_lmdb, in_mysql;
	uint64_t lmdb[F_N], mysql[F_N];
};

struct vorder {
	uint64_t id, user, units;
	char state[20];
};

struct side {
	struct vorder *o;
	size_t n, cap;
};

struct verify {
	struct sk_store *st;
	struct vitem *items;
	size_t nitems;
	struct side lmdb, mysql;
	json_t *diffs;
	unsigned ndiffs, max_diffs;
};

/* item_slot - the entry of @item (added, zeroed, if new); NULL if no memory. */
static struct vitem *
item_slot(struct verify *v, uint32_t item)
{
	struct vitem *n;

	for (size_t i = 0; i < v->nitems; i++)
		if (v->items[i].item == item)
			return &v->items[i];
	n = realloc(v->items, (v->nitems + 1) * sizeof(*n));
	if (n == NULL)
		return NULL;
	v->items = n;
	n = &v->items[v->nitems++];
	memset(n, 0, sizeof(*n));
	n->item = item;
	return n;
}

/* order_add - append to @s; NULL if no memory. */
static struct vorder *
order_add(struct side *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct vorder *o = realloc(s->o, cap * sizeof(*o));

		if (o == NULL)
			return NULL;
		s->o = o;
		s->cap = cap;
	}
	return &s->o[s->n++];
}

static void diff(struct verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* diff - count a difference and keep its text (the first max_diffs). */
static void
diff(struct verify *v, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (v->ndiffs++ >= v->max_diffs)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(v->diffs, json_string(line));
}

static int
on_activity(const struct sk_store_activity *a, const struct sk_store_ledger *l, void *arg)
{
	struct vitem *it = item_slot(arg, a->item);

	if (it == NULL)
		return -ENOMEM;
	it->in_lmdb = true;
	it->lmdb[F_TOTAL] = a->total;
	it->lmdb[F_ADDED] = a->added;
	it->lmdb[F_REMOVED] = a->removed;
	it->lmdb[F_SOLD] = l->sold;
	it->lmdb[F_RETURNED] = l->returned;
	it->lmdb[F_PAID] = l->paid;
	return 0;
}

/* A walk of one item's orders in one state (sk_store_orders_find()). */
struct walk_ctx {
	struct verify *v;
	uint32_t item;
	uint64_t last; /* the last order given: the next page's "after" */
};

/*
 * on_order - one order with its lines' states. A cart is listed under each
 * of its items: it counts once, under its line 0's.
 */
static int
on_order(const struct sk_store_line *lines, unsigned n, void *arg)
{
	struct walk_ctx *c = arg;
	struct verify *v = c->v;
	struct vorder *o;

	c->last = lines[0].rec.id;
	if (lines[0].rec.item != c->item)
		return 0;
	o = order_add(&v->lmdb);
	if (o == NULL)
		return -ENOMEM;
	*o = (struct vorder){.id = lines[0].rec.id, .user = lines[0].rec.user};
	snprintf(o->state, sizeof(o->state), "%s", sk_order_status_name(lines[0].state));
	for (unsigned i = 0; i < n; i++) {
		struct vitem *it = item_slot(v, lines[i].rec.item);

		if (it == NULL)
			return -ENOMEM;
		o->units += lines[i].rec.qty;
		it->lmdb[state_figure(sk_order_status_name(lines[i].state))]++;
	}
	return 0;
}

/*
 * read_orders - every order of every activity, through the order indexes
 * (archived activities' from their archive files): not through the event
 * log, which the control plane trims.
 */
static int
read_orders(struct verify *v)
{
	static const uint8_t states[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED,
					 SK_ORDER_REFUNDED};
	size_t nact = v->nitems; /* on_order may add the items of carts */

	for (size_t i = 0; i < nact; i++) {
		for (size_t s = 0; s < sizeof(states); s++) {
			struct walk_ctx c = {.v = v, .item = v->items[i].item};
			struct sk_store_order_query q = {
				.item = c.item, .state = states[s], .limit = SK_STORE_FIND_MAX};
			bool more = true;

			while (more) {
				int rc = sk_store_orders_find(v->st, &q, on_order, &c, &more);

				if (rc != 0)
					return rc;
				q.after = c.last;
			}
		}
	}
	return 0;
}

/* read_lmdb - activities, ledgers and orders of the store. */
static int
read_lmdb(struct verify *v, const char *dir)
{
	struct sk_store_conf conf = {.flags = SK_STORE_RDONLY};
	char err[SK_STORE_ERR_MAX];
	int rc = sk_store_open(&v->st, dir, &conf, err, sizeof(err));

	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "verify", "err=%s", err);
		return rc;
	}
	rc = sk_store_activity_foreach(v->st, on_activity, v);
	if (rc == 0)
		rc = read_orders(v);
	if (rc != 0)
		sk_logf(SK_LOG_ERROR, "verify", "path=%s msg=\"cannot read the store\" err=%s", dir,
			strerror(-rc));
	return rc;
}

/* u64 - a column as a number (NULL is 0). */
static uint64_t
u64(const char *s)
{
	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* read_mysql - items, lines per state, orders. */
static int
read_mysql(struct verify *v, struct mw_db *db)
{
	MYSQL_RES *res;
	MYSQL_ROW r;

	res = mw_db_query(db, "SELECT id, total, added, removed, sold, returned, paid FROM items");
	if (res == NULL)
		goto err;
	while ((r = mysql_fetch_row(res)) != NULL) {
		struct vitem *it = item_slot(v, (uint32_t)u64(r[0]));

		if (it == NULL)
			break;
		it->in_mysql = true;
		for (int f = F_TOTAL; f <= F_PAID; f++)
			it->mysql[f] = u64(r[1 + f]);
	}
	mysql_free_result(res);
	res = mw_db_query(db,
			  "SELECT l.item_id, o.state, COUNT(*) FROM order_lines l JOIN orders o "
			  "ON o.id = l.order_id GROUP BY l.item_id, o.state");
	if (res == NULL)
		goto err;
	while ((r = mysql_fetch_row(res)) != NULL) {
		struct vitem *it = item_slot(v, (uint32_t)u64(r[0]));
		const char *s = r[1] ? r[1] : "";

		if (it == NULL)
			break;
		it->mysql[state_figure(s)] += u64(r[2]);
	}
	mysql_free_result(res);
	res = mw_db_query(db, "SELECT id, user_id, units, state FROM orders ORDER BY id");
	if (res == NULL)
		goto err;
	while ((r = mysql_fetch_row(res)) != NULL) {
		struct vorder *o = order_add(&v->mysql);

		if (o == NULL)
			break;
		*o = (struct vorder){.id = u64(r[0]), .user = u64(r[1]), .units = u64(r[2])};
		snprintf(o->state, sizeof(o->state), "%s", state_name(r[3] ? r[3] : ""));
	}
	mysql_free_result(res);
	return 0;
err:
	sk_logf(SK_LOG_ERROR, "verify", "msg=\"MariaDB query failed\" err=%s", db->errmsg);
	return -EIO;
}

static int
cmp_order(const void *x, const void *y)
{
	const struct vorder *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* compare_orders - merge the two sorted lists; returns the counts object. */
static json_t *
compare_orders(struct verify *v)
{
	size_t i = 0, j = 0, missing = 0, extra = 0, state = 0, other = 0;
	struct side *l = &v->lmdb, *m = &v->mysql;

	qsort(l->o, l->n, sizeof(*l->o), cmp_order);
	while (i < l->n || j < m->n) {
		if (j == m->n || (i < l->n && l->o[i].id < m->o[j].id)) {
			missing++;
			diff(v, "order %" PRIu64 ": in LMDB (%s), not in MariaDB", l->o[i].id,
			     l->o[i].state);
			i++;
		} else if (i == l->n || m->o[j].id < l->o[i].id) {
			extra++;
			diff(v, "order %" PRIu64 ": in MariaDB (%s), not in LMDB", m->o[j].id,
			     m->o[j].state);
			j++;
		} else {
			if (strcmp(l->o[i].state, m->o[j].state) != 0) {
				state++;
				diff(v, "order %" PRIu64 ": state %s in LMDB, %s in MariaDB",
				     l->o[i].id, l->o[i].state, m->o[j].state);
			}
			if (l->o[i].user != m->o[j].user || l->o[i].units != m->o[j].units) {
				other++;
				diff(v,
				     "order %" PRIu64 ": user/units %" PRIu64 "/%" PRIu64
				     " in LMDB, %" PRIu64 "/%" PRIu64 " in MariaDB",
				     l->o[i].id, l->o[i].user, l->o[i].units, m->o[j].user,
				     m->o[j].units);
			}
			i++, j++;
		}
	}
	return json_pack("{sIsIsIsIsIsI}", "lmdb", (json_int_t)l->n, "mariadb", (json_int_t)m->n,
			 "missing", (json_int_t)missing, "extra", (json_int_t)extra, "state",
			 (json_int_t)state, "other", (json_int_t)other);
}

/* compare_items - per item, every figure; returns the items array. */
static json_t *
compare_items(struct verify *v)
{
	json_t *items = json_array();

	for (size_t i = 0; i < v->nitems; i++) {
		struct vitem *it = &v->items[i];
		json_t *l = json_object(), *m = json_object();
		bool eq = it->in_lmdb == it->in_mysql;

		if (it->in_lmdb != it->in_mysql)
			diff(v, "item %" PRIu32 ": activity only in %s", it->item,
			     it->in_lmdb ? "LMDB" : "MariaDB");
		for (int f = 0; f < F_N; f++) {
			json_object_set_new(l, fname[f], json_integer((json_int_t)it->lmdb[f]));
			json_object_set_new(m, fname[f], json_integer((json_int_t)it->mysql[f]));
			if (it->lmdb[f] != it->mysql[f]) {
				eq = false;
				diff(v,
				     "item %" PRIu32 ": %s %" PRIu64 " in LMDB, %" PRIu64
				     " in MariaDB",
				     it->item, fname[f], it->lmdb[f], it->mysql[f]);
			}
		}
		json_array_append_new(items, json_pack("{sIsososb}", "item", (json_int_t)it->item,
						       "lmdb", l, "mariadb", m, "equal", eq));
	}
	return items;
}

/* parked_rows - rows of the parked table, or -1. */
static int64_t
parked_rows(struct mw_db *db)
{
	MYSQL_RES *res = mw_db_query(db, "SELECT COUNT(*) FROM parked");
	MYSQL_ROW r;
	int64_t n = -1;

	if (res == NULL)
		return -1;
	if ((r = mysql_fetch_row(res)) != NULL)
		n = (int64_t)u64(r[0]);
	mysql_free_result(res);
	return n;
}

/* print_text - the report as lines. */
static void
print_text(json_t *rep, FILE *out)
{
	json_t *it, *orders = json_object_get(rep, "orders"), *d;
	size_t i;

	json_array_foreach(json_object_get(rep, "items"), i, it)
	{
		fprintf(out, "item %" JSON_INTEGER_FORMAT ":",
			json_integer_value(json_object_get(it, "item")));
		for (int f = 0; f < F_N; f++)
			fprintf(out, " %s %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, fname[f],
				json_integer_value(
					json_object_get(json_object_get(it, "lmdb"), fname[f])),
				json_integer_value(
					json_object_get(json_object_get(it, "mariadb"), fname[f])));
		fprintf(out, " (LMDB/MariaDB) %s\n",
			json_is_true(json_object_get(it, "equal")) ? "equal" : "DIFFERENT");
	}
	fprintf(out,
		"orders: LMDB %" JSON_INTEGER_FORMAT ", MariaDB %" JSON_INTEGER_FORMAT
		", missing %" JSON_INTEGER_FORMAT ", extra %" JSON_INTEGER_FORMAT
		", other state %" JSON_INTEGER_FORMAT ", other user/units %" JSON_INTEGER_FORMAT
		"\nparked messages: %" JSON_INTEGER_FORMAT "\n",
		json_integer_value(json_object_get(orders, "lmdb")),
		json_integer_value(json_object_get(orders, "mariadb")),
		json_integer_value(json_object_get(orders, "missing")),
		json_integer_value(json_object_get(orders, "extra")),
		json_integer_value(json_object_get(orders, "state")),
		json_integer_value(json_object_get(orders, "other")),
		json_integer_value(json_object_get(rep, "parked")));
	json_array_foreach(json_object_get(rep, "differences"), i, d)
		fprintf(out, "difference: %s\n", json_string_value(d));
	fprintf(out, "%s\n", json_is_true(json_object_get(rep, "equal")) ? "equal" : "different");
}

int
mw_verify(struct mw_db *db, const char *store_dir, bool json, unsigned max_diffs, FILE *out)
{
	struct verify v = {.max_diffs = max_diffs, .diffs = json_array()};
	json_t *rep = NULL, *orders, *items;
	int64_t parked = 0;
	int rc;

	rc = read_lmdb(&v, store_dir);
	if (rc == 0)
		rc = read_mysql(&v, db);
	if (rc == 0 && (parked = parked_rows(db)) < 0)
		rc = -EIO;
	if (rc != 0)
		goto out;
	items = compare_items(&v);
	orders = compare_orders(&v);
	if (parked > 0)
		diff(&v, "%" PRId64 " messages parked (not applied yet)", parked);
	rep = json_pack("{sbsosososIsI}", "equal", v.ndiffs == 0, "items", items, "orders", orders,
			"differences", v.diffs, "parked", (json_int_t)parked, "ndifferences",
			(json_int_t)v.ndiffs);
	v.diffs = NULL;
	if (json) {
		json_dumpf(rep, out, JSON_INDENT(1) | JSON_SORT_KEYS);
		fputc('\n', out);
	} else {
		print_text(rep, out);
	}
	rc = v.ndiffs == 0 ? 0 : 1;
out:
	json_decref(rep);
	json_decref(v.diffs);
	sk_store_close(v.st);
	free(v.items);
	free(v.lmdb.o);
	free(v.mysql.o);
	return rc;
}
