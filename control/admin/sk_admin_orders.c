/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's order routes: GET /v1/orders/{id}, POST /v1/orders/{id}/pay,
 * POST /v1/orders/{id}/refund.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "sk_addr.h"
#include "sk_admin_impl.h"
#include "sk_parse.h"
#include "sk_store_archive.h"
#include "sk_text.h"

/* ----------------------------------------------------------------- orders */

/* order_json - the JSON of order @l (@n lines); @archived: read from an archive file. */
static json_t *
order_json(struct sk_control *ctl, const struct sk_store_line *l, unsigned n, bool archived)
{
	const struct sk_order_rec *r0 = &l[0].rec;
	unsigned arena = sk_control_order_status(ctl, r0->id);
	char ip[SK_ADDR_STRLEN] = "";
	uint64_t units = 0, refunded = 0;
	json_t *lines = json_array();

	if (sk_addr_format(&r0->client, ip, sizeof(ip)) < 0)
		ip[0] = '\0'; /* no address: "" */
	for (unsigned i = 0; i < n && lines != NULL; i++) {
		units += l[i].rec.qty;
		refunded += l[i].refunded;
		json_array_append_new(
			lines, json_pack("{s:i,s:o,s:i,s:o,s:i,s:i}", "line", (int)l[i].rec.line,
					 "item", adm_jint(l[i].rec.item), "qty", (int)l[i].rec.qty,
					 "price", adm_jint(l[i].rec.price), "returned",
					 (int)l[i].rec.returned, "refunded", (int)l[i].refunded));
	}
	return json_pack(
		"{s:o,s:s,s:o,s:o,s:o,s:o,s:b,s:s,s:I,s:I,s:I,s:I,s:b,s:b,s:o}", "order",
		adm_id_string(r0->id), "status", sk_order_status_name(l[0].state), "arena_status",
		arena == SK_ORDER_NONE ? json_null() : json_string(sk_order_status_name(arena)),
		"user", adm_id_string(r0->user), "units", adm_jint(units), "refunded_units",
		adm_jint(refunded), "partially_refunded",
		l[0].state == SK_ORDER_PAID && refunded > 0, "client_ip", ip, "time_ns",
		(json_int_t)r0->time_ns, "deadline_ns", (json_int_t)l[0].deadline_ns, "stored_ns",
		(json_int_t)l[0].stored_ns, "updated_ns", (json_int_t)l[0].updated_ns, "in_store",
		true, "archived", archived, "lines", lines != NULL ? lines : json_null());
}

/* item_archived - whether the activity of @item is archived (its orders are in its file). */
static bool
item_archived(struct sk_control *ctl, uint32_t item)
{
	struct sk_store_archive_info info;

	return sk_store_archive_get(sk_control_store(ctl), item, &info) == 0;
}

int
adm_get_order(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_store_line *lines = calloc(SK_STORE_MAX_LINES, sizeof(*lines));
	unsigned n = 0;
	int rc;

	if (lines == NULL)
		return -ENOMEM;
	rc = sk_store_order_get(sk_control_store(ctl), id, lines, SK_STORE_MAX_LINES, &n);
	bool archived = rc == 0 && item_archived(ctl, lines[0].rec.item);
	if (rc == -ENOENT) {
		rc = sk_store_archive_order_get(sk_control_store(ctl), id, lines,
						SK_STORE_MAX_LINES, &n);
		archived = rc == 0;
	}
	if (rc == 0) {
		rc = adm_reply_json(r, 200, order_json(ctl, lines, n, archived));
	} else if (rc == -ENOENT) {
		unsigned st = sk_control_order_status(ctl, id);
		if (st == SK_ORDER_QUEUED || st == SK_ORDER_FAILED)
			rc = adm_reply_json(r, 200,
					    json_pack("{s:o,s:s,s:s,s:b}", "order",
						      adm_id_string(id), "status",
						      sk_order_status_name(st), "arena_status",
						      sk_order_status_name(st), "in_store", 0));
		else
			rc = adm_reply_json(r, 404,
					    json_pack("{s:o,s:s}", "order", adm_id_string(id),
						      "error", "unknown order"));
	} else {
		char msg[128];
		snprintf(msg, sizeof(msg), "store: %s", strerror(-rc));
		rc = adm_reply_error(r, 503, msg);
	}
	free(lines);
	return rc;
}

/* ---------------------------------------------------------- order queries */

/* Page size of GET /v1/orders without limit. */
#define ORDERS_LIMIT_DEFAULT 100
/* Longest value of a query parameter, bytes (an id has at most 20 digits). */
#define QUERY_VALUE_MAX 32

/* The parameters of GET /v1/orders, by index. */
enum { QP_ITEM, QP_USER, QP_STATE, QP_LIMIT, QP_AFTER, QP__N };
static const char *const query_keys[QP__N] = {"item", "user", "state", "limit", "after"};

/*
 * pct_decode - [@s, @s + @n) percent-decoded into @out (@cap bytes, NUL
 * ended): false if a % is not followed by two hex digits, a NUL comes out,
 * or it does not fit.
 */
static bool
pct_decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++, o++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			uint8_t b;

			if (i + 2 >= n || !sk_hex_decode(s + i + 1, 1, &b, SK_HEX_ANY_CASE))
				return false;
			c = b;
			i += 2;
		}
		if (c == '\0' || o + 1 >= cap)
			return false;
		out[o] = (char)c;
	}
	out[o] = '\0';
	return true;
}

/*
 * query_params - the parameters of @query (k=v&k=v, percent-encoded) into
 * @v; false with a 400 in @r for an unknown, repeated, empty, malformed or
 * overlong one.
 */
static bool
query_params(const char *query, char v[QP__N][QUERY_VALUE_MAX], bool given[QP__N],
	     struct sk_admin_reply *r, int *rc)
{
	char key[QUERY_VALUE_MAX], msg[160];

	for (const char *p = query; *p != '\0';) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		size_t klen = eq != NULL ? (size_t)(eq - p) : n;
		int k = QP__N;

		if (n == 0) { /* "&&": nothing */
			p++;
			continue;
		}
		if (pct_decode(p, klen, key, sizeof(key)))
			for (k = 0; k < QP__N && strcmp(key, query_keys[k]) != 0; k++)
				;
		if (k == QP__N) {
			snprintf(msg, sizeof(msg),
				 "%.32s: unknown parameter (item, user, state, limit, after)",
				 pct_decode(p, klen, key, sizeof(key)) ? key : "?");
			*rc = adm_reply_error(r, 400, msg);
			return false;
		}
		if (given[k])
			snprintf(msg, sizeof(msg), "%s: given twice", query_keys[k]);
		else if (eq == NULL || eq + 1 == p + n)
			snprintf(msg, sizeof(msg), "%s: needs a value", query_keys[k]);
		else if (!pct_decode(eq + 1, n - klen - 1, v[k], QUERY_VALUE_MAX))
			snprintf(msg, sizeof(msg), "%s: malformed or too long", query_keys[k]);
		else
			msg[0] = '\0';
		if (msg[0] != '\0') {
			*rc = adm_reply_error(r, 400, msg);
			return false;
		}
		given[k] = true;
		p += n;
		if (*p == '&')
			p++;
	}
	return true;
}

/* state_of_name - the stored state named @s, or 0. */
static uint8_t
state_of_name(const char *s)
{
	static const uint8_t states[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED,
					 SK_ORDER_REFUNDED};

	for (size_t i = 0; i < SK_ARRAY_SIZE(states); i++)
		if (strcmp(s, sk_order_status_name(states[i])) == 0)
			return states[i];
	return 0;
}

/* orders_query - the query of GET /v1/orders from its parameters; false with a 400. */
static bool
orders_query(const char *query, struct sk_store_order_query *q, struct sk_admin_reply *r, int *rc)
{
	char v[QP__N][QUERY_VALUE_MAX];
	bool given[QP__N] = {false};
	uint64_t item = 0, limit = ORDERS_LIMIT_DEFAULT;
	const char *bad = NULL;

	if (!query_params(query, v, given, r, rc))
		return false;
	memset(q, 0, sizeof(*q));
	if (!given[QP_ITEM])
		bad = "item: required, an item id 1..4294967295";
	else if (!sk_parse_id(v[QP_ITEM], UINT32_MAX, &item))
		bad = "item: must be an item id 1..4294967295 (decimal, no leading zero)";
	else if (given[QP_USER] && !sk_parse_id(v[QP_USER], UINT64_MAX, &q->user))
		bad = "user: must be a user id 1..18446744073709551615 (decimal, no leading zero)";
	else if (given[QP_STATE] && (q->state = state_of_name(v[QP_STATE])) == 0)
		bad = "state: one of confirmed, paid, cancelled, refunded";
	else if (!given[QP_USER] && !given[QP_STATE])
		bad = "user or state: give at least one with item";
	else if (given[QP_LIMIT] && (v[QP_LIMIT][0] == '0' ||
				     !sk_parse_u64(v[QP_LIMIT], 1, SK_STORE_FIND_MAX, &limit)))
		bad = "limit: 1..1000 orders (default 100)";
	else if (given[QP_AFTER] && !sk_parse_id(v[QP_AFTER], UINT64_MAX, &q->after))
		bad = "after: an order id (the \"next\" of the page before)";
	if (bad != NULL) {
		*rc = adm_reply_error(r, 400, bad);
		return false;
	}
	q->item = (uint32_t)item;
	q->limit = (uint32_t)limit;
	return true;
}

struct orders_page {
	struct sk_control *ctl;
	json_t *arr;
	uint64_t last;
	bool archived; /* the item's orders come from its archive */
};

static int
order_append(const struct sk_store_line *lines, unsigned n, void *arg)
{
	struct orders_page *pg = arg;
	json_t *o = order_json(pg->ctl, lines, n, pg->archived);

	if (o == NULL || json_array_append_new(pg->arr, o) != 0)
		return -ENOMEM;
	pg->last = lines[0].rec.id;
	return 0;
}

int
adm_get_orders(struct sk_control *ctl, const char *query, struct sk_admin_reply *r)
{
	struct sk_store_order_query q;
	struct orders_page pg = {.ctl = ctl, .arr = json_array()};
	bool more = false;
	int rc;

	if (pg.arr == NULL)
		return -ENOMEM;
	if (!orders_query(query, &q, r, &rc)) {
		json_decref(pg.arr);
		return rc;
	}
	pg.archived = item_archived(ctl, q.item);
	rc = sk_store_orders_find(sk_control_store(ctl), &q, order_append, &pg, &more);
	if (rc != 0) {
		char msg[160];

		json_decref(pg.arr);
		if (rc == -ENOMEM)
			return rc;
		snprintf(msg, sizeof(msg), "store: %s",
			 rc == -ENOTSUP ? "no order indexes (a store of schema 1 or 2 opened "
					  "read-only)"
					: strerror(-rc));
		return adm_reply_error(r, 503, msg);
	}
	size_t count = json_array_size(pg.arr);
	return adm_reply_json(
		r, 200,
		json_pack("{s:o,s:o,s:o,s:o,s:o,s:b,s:o,s:o}", "item", adm_jint(q.item), "user",
			  q.user != 0 ? adm_id_string(q.user) : json_null(), "state",
			  q.state != 0 ? json_string(sk_order_status_name(q.state)) : json_null(),
			  "limit", adm_jint(q.limit), "count", adm_jint(count), "more", more,
			  "next", more ? adm_id_string(pg.last) : json_null(), "orders", pg.arr));
}

int
adm_pay_order(struct sk_control *ctl, uint64_t id, unsigned wait_ms, struct sk_admin_reply *r)
{
	int res = sk_control_pay(ctl, id, sk_clock_ns(CLOCK_REALTIME), wait_ms);

	switch (res) {
	case SK_CONTROL_PAY_DONE:
		return adm_reply_json(
			r, 200,
			json_pack("{s:o,s:s}", "order", adm_id_string(id), "status", "paid"));
	case SK_CONTROL_PAY_ALREADY:
		return adm_reply_json(r, 200,
				      json_pack("{s:o,s:s,s:b}", "order", adm_id_string(id),
						"status", "paid", "already", 1));
	case SK_CONTROL_PAY_CANCELLED:
	case SK_CONTROL_PAY_FAILED:
		return adm_reply_json(
			r, 409,
			json_pack("{s:o,s:s}", "order", adm_id_string(id), "status",
				  res == SK_CONTROL_PAY_CANCELLED ? "cancelled" : "failed"));
	case SK_CONTROL_PAY_QUEUED:
		r->retry_after = 1;
		return adm_reply_json(
			r, 409,
			json_pack("{s:o,s:s}", "order", adm_id_string(id), "status", "queued"));
	case SK_CONTROL_PAY_UNKNOWN:
		return adm_reply_json(r, 404,
				      json_pack("{s:o,s:s}", "order", adm_id_string(id), "error",
						"unknown order"));
	default: {
		char msg[128];
		snprintf(msg, sizeof(msg), "store: %s", strerror(-res));
		return adm_reply_error(r, 503, msg);
	}
	}
}

/* refund_request - the optional body {"units", "item", "request"}; 0 or a 400 in @r. */
static int
refund_request(const char *body, size_t len, struct sk_control_payment *p, char *req,
	       struct sk_admin_reply *r, int *rc)
{
	uint64_t units = 0, item = 0;
	const char *key;
	json_t *m;

	*rc = 0;
	if (body == NULL || len == 0)
		return 0;
	json_t *o = adm_parse_body(body, len, r, rc);
	if (o == NULL)
		return -1;
	json_object_foreach(o, key, m)
	{
		if (strcmp(key, "units") != 0 && strcmp(key, "item") != 0 &&
		    strcmp(key, "request") != 0) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			json_decref(o);
			*rc = adm_reply_error(r, 400, msg);
			return -1;
		}
	}
	const char *rq = json_string_value(json_object_get(o, "request"));
	if (json_object_get(o, "request") != NULL && (rq == NULL || !sk_store_request_ok(rq))) {
		json_decref(o);
		*rc = adm_reply_error(r, 400,
				      "request: 1-64 printable characters without blank, '\"' or "
				      "'\\'");
		return -1;
	}
	if (rq != NULL)
		snprintf(req, SK_STORE_REQUEST_MAX + 1, "%s", rq);
	int gu = adm_get_u64(o, "units", 1, UINT32_MAX, false, &units, r, rc);
	int gi = gu >= 0 ? adm_get_u64(o, "item", 1, UINT32_MAX, false, &item, r, rc) : 0;
	json_decref(o);
	if (gu < 0 || gi < 0)
		return -1;
	p->units = (uint32_t)units;
	p->item = (uint32_t)item;
	return 0;
}

/* Status and error text of each refund outcome but done. */
static const struct {
	unsigned status;
	const char *error;
} refund_refusals[SK_CONTROL_PM_COUNT] = {
	[SK_CONTROL_PM_STATE] = {409, "the order is not paid"},
	[SK_CONTROL_PM_TOO_MANY] = {409, "more units than remain to refund"},
	[SK_CONTROL_PM_NO_ITEM] = {409, "no such line: name the item of a cart's line"},
	[SK_CONTROL_PM_UNKNOWN] = {404, "unknown order"},
	[SK_CONTROL_PM_QUEUED] = {409, "the order is not yet durable: retry"},
	[SK_CONTROL_PM_FAILED] = {409, "the order failed"},
	[SK_CONTROL_PM_REUSED] = {409, "request id used before for another refund"},
};

int
adm_refund_order(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		 unsigned wait_ms, struct sk_admin_reply *r)
{
	char req[SK_STORE_REQUEST_MAX + 1] = "";
	struct sk_control_payment p = {.order = id, .kind = SK_STORE_PAY_REFUND, .request = req};
	struct sk_control_pm_result res;
	int64_t now = sk_clock_ns(CLOCK_REALTIME);
	int rc;

	if (refund_request(body, len, &p, req, r, &rc) != 0)
		return rc;
	/* Without an id a retry would refund again: the caller must name one. */
	if (req[0] == '\0')
		return adm_reply_error(r, 400,
				       "request: required (a refund is applied once per request "
				       "id: name one, and reuse it on a retry)");
	rc = sk_control_payment(ctl, &p, now, wait_ms, &res);
	if (rc < 0) {
		char msg[128];
		snprintf(msg, sizeof(msg), "store: %s", strerror(-rc));
		return adm_reply_error(r, rc == -EINVAL ? 400 : 503, msg);
	}
	const char *outcome = sk_control_pm_outcome_name(res.outcome);
	if (res.outcome == SK_CONTROL_PM_DONE)
		return adm_reply_json(
			r, 200,
			json_pack("{s:o,s:s,s:s,s:o,s:s,s:b}", "order", adm_id_string(id), "status",
				  sk_order_status_name(res.state), "outcome", outcome, "units",
				  adm_jint(res.units), "request", req, "duplicate", res.duplicate));
	if (res.outcome == SK_CONTROL_PM_QUEUED)
		r->retry_after = 1;
	unsigned status = refund_refusals[res.outcome].status;
	return adm_reply_json(
		r, status != 0 ? status : 409,
		json_pack("{s:o,s:s,s:s,s:s,s:s,s:b}", "order", adm_id_string(id), "status",
			  sk_order_status_name(res.state), "outcome", outcome, "error",
			  status != 0 ? refund_refusals[res.outcome].error : "refused", "request",
			  req, "duplicate", res.duplicate));
}
