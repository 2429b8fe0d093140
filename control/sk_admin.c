/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin REST API (see sk_admin.h): routing and JSON bodies
 * (sk_admin_handle), then the libmicrohttpd glue and the listeners.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "sk_activity.h"
#include "sk_admin.h"

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_PROM "text/plain; version=0.0.4; charset=utf-8"

struct sk_admin {
	struct sk_control *ctl;
	struct MHD_Daemon *tcp;
	struct MHD_Daemon *unix_d;
	char *socket_path; /* created by us: unlinked at stop */
	uint16_t port;
	unsigned pay_wait_ms;
};

/* ------------------------------------------------------------------ replies */

/* reply_json - set @r from @j (consumed). */
static int
reply_json(struct sk_admin_reply *r, unsigned status, json_t *j)
{
	if (j == NULL)
		return -ENOMEM;
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s == NULL)
		return -ENOMEM;
	size_t len = strlen(s);
	char *body = malloc(len + 2);
	if (body == NULL) {
		free(s);
		return -ENOMEM;
	}
	memcpy(body, s, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	free(s);
	r->status = status;
	r->content_type = CT_JSON;
	r->body = body;
	r->len = len + 1;
	return 0;
}

static int
reply_error(struct sk_admin_reply *r, unsigned status, const char *msg)
{
	return reply_json(r, status, json_pack("{s:s}", "error", msg));
}

static int
reply_text(struct sk_admin_reply *r, unsigned status, const char *ct, const char *text)
{
	r->body = strdup(text);
	if (r->body == NULL)
		return -ENOMEM;
	r->status = status;
	r->content_type = ct;
	r->len = strlen(text);
	return 0;
}

static json_t *
jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* id_string - the decimal text of an order id, as the dataplane prints it. */
static json_t *
id_string(uint64_t id)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, id);
	return json_string(buf);
}

/* ----------------------------------------------------------------- orders */

static json_t *
order_json(struct sk_control *ctl, const struct sk_store_line *l, unsigned n)
{
	const struct sk_order_rec *r0 = &l[0].rec;
	unsigned arena = sk_control_order_status(ctl, r0->id);
	char ip[INET_ADDRSTRLEN] = "";
	struct in_addr a = {.s_addr = r0->client_ip};
	uint64_t units = 0;
	json_t *lines = json_array();

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	for (unsigned i = 0; i < n && lines != NULL; i++) {
		units += l[i].rec.qty;
		json_array_append_new(lines,
				      json_pack("{s:i,s:o,s:i,s:o,s:i}", "line", (int)l[i].rec.line,
						"item", jint(l[i].rec.item), "qty",
						(int)l[i].rec.qty, "price", jint(l[i].rec.price),
						"returned", (int)l[i].rec.returned));
	}
	return json_pack(
		"{s:o,s:s,s:o,s:o,s:o,s:s,s:I,s:I,s:I,s:I,s:o,s:o}", "order", id_string(r0->id),
		"status", sk_order_status_name(l[0].state), "arena_status",
		arena == SK_ORDER_NONE ? json_null() : json_string(sk_order_status_name(arena)),
		"user", jint(r0->user), "units", jint(units), "client_ip", ip, "time_ns",
		(json_int_t)r0->time_ns, "deadline_ns", (json_int_t)l[0].deadline_ns, "stored_ns",
		(json_int_t)l[0].stored_ns, "updated_ns", (json_int_t)l[0].updated_ns, "in_store",
		json_true(), "lines", lines != NULL ? lines : json_null());
}

static int
get_order(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_store_line *lines = calloc(SK_STORE_MAX_LINES, sizeof(*lines));
	unsigned n = 0;
	int rc;

	if (lines == NULL)
		return -ENOMEM;
	rc = sk_store_order_get(sk_control_store(ctl), id, lines, SK_STORE_MAX_LINES, &n);
	if (rc == 0) {
		rc = reply_json(r, 200, order_json(ctl, lines, n));
	} else if (rc == -ENOENT) {
		unsigned st = sk_control_order_status(ctl, id);
		if (st == SK_ORDER_QUEUED || st == SK_ORDER_FAILED)
			rc = reply_json(r, 200,
					json_pack("{s:o,s:s,s:s,s:b}", "order", id_string(id),
						  "status", sk_order_status_name(st),
						  "arena_status", sk_order_status_name(st),
						  "in_store", 0));
		else
			rc = reply_json(r, 404,
					json_pack("{s:o,s:s}", "order", id_string(id), "error",
						  "unknown order"));
	} else {
		char msg[128];
		snprintf(msg, sizeof(msg), "store: %s", strerror(-rc));
		rc = reply_error(r, 503, msg);
	}
	free(lines);
	return rc;
}

static int
pay_order(struct sk_control *ctl, uint64_t id, unsigned wait_ms, struct sk_admin_reply *r)
{
	int res = sk_control_pay(ctl, id, sk_clock_ns(CLOCK_REALTIME), wait_ms);

	switch (res) {
	case SK_CONTROL_PAY_DONE:
		return reply_json(r, 200,
				  json_pack("{s:o,s:s}", "order", id_string(id), "status", "paid"));
	case SK_CONTROL_PAY_ALREADY:
		return reply_json(r, 200,
				  json_pack("{s:o,s:s,s:b}", "order", id_string(id), "status",
					    "paid", "already", 1));
	case SK_CONTROL_PAY_CANCELLED:
	case SK_CONTROL_PAY_FAILED:
		return reply_json(
			r, 409,
			json_pack("{s:o,s:s}", "order", id_string(id), "status",
				  res == SK_CONTROL_PAY_CANCELLED ? "cancelled" : "failed"));
	case SK_CONTROL_PAY_QUEUED:
		r->retry_after = 1;
		return reply_json(
			r, 409, json_pack("{s:o,s:s}", "order", id_string(id), "status", "queued"));
	case SK_CONTROL_PAY_UNKNOWN:
		return reply_json(
			r, 404,
			json_pack("{s:o,s:s}", "order", id_string(id), "error", "unknown order"));
	default: {
		char msg[128];
		snprintf(msg, sizeof(msg), "store: %s", strerror(-res));
		return reply_error(r, 503, msg);
	}
	}
}

/* ------------------------------------------------------------------ items */

static const char *
item_state_name(uint32_t s)
{
	switch (s) {
	case SK_ITEM_ACTIVE:
		return "active";
	case SK_ITEM_CLOSED:
		return "closed";
	default:
		return "free";
	}
}

static json_t *
item_json(const struct sk_control_item *it)
{
	json_t *o = json_object(), *act = json_null();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "item", jint(it->id));
	json_object_set_new(o, "in_arena", json_boolean(it->in_arena));
	if (it->in_arena) {
		json_object_set_new(o, "state", json_string(item_state_name(it->state)));
		json_object_set_new(o, "sold_out", json_boolean(it->sold_out));
		json_object_set_new(o, "total", jint(it->total));
		json_object_set_new(o, "added", jint(it->added));
		json_object_set_new(o, "remaining", jint(it->remaining));
		json_object_set_new(o, "sold", jint(it->sold));
		json_object_set_new(o, "returned", jint(it->returned));
		json_object_set_new(o, "price", jint(it->price));
		json_object_set_new(o, "per_user_limit", jint(it->per_user_limit));
		json_object_set_new(o, "start_ns", json_integer(it->start_ns));
		json_object_set_new(o, "end_ns", json_integer(it->end_ns));
	}
	if (it->has_activity) {
		const struct sk_store_activity *a = &it->activity;
		act = json_pack("{s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:b}", "name", a->name, "total",
				jint(a->total), "added", jint(a->added), "price", jint(a->price),
				"per_user_limit", jint(a->per_user_limit), "start_ns",
				(json_int_t)a->start_ns, "end_ns", (json_int_t)a->end_ns,
				"pay_timeout_ns", (json_int_t)a->pay_timeout_ns, "closed",
				a->closed_ns != 0);
	}
	json_object_set_new(o, "activity", act != NULL ? act : json_null());
	const struct sk_store_ledger *l = &it->ledger;
	json_object_set_new(o, "ledger",
			    json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "sold", jint(l->sold),
				      "returned", jint(l->returned), "paid", jint(l->paid), "live",
				      jint(sk_store_ledger_live(l)), "lines", jint(l->lines),
				      "lines_paid", jint(l->lines_paid), "lines_cancelled",
				      jint(l->lines_cancelled)));
	return o;
}

static int
item_append(const struct sk_control_item *it, void *arg)
{
	json_t *o = item_json(it);

	if (o == NULL || json_array_append_new(arg, o) != 0)
		return -ENOMEM;
	return 0;
}

static int
get_items(struct sk_control *ctl, struct sk_admin_reply *r)
{
	json_t *arr = json_array();

	if (arr == NULL)
		return -ENOMEM;
	int rc = sk_control_items_foreach(ctl, item_append, arr);
	if (rc == -ENOMEM) {
		json_decref(arr);
		return rc;
	}
	if (rc != 0) {
		json_decref(arr);
		return reply_error(r, 503, "store error");
	}
	return reply_json(r, 200, json_pack("{s:o}", "items", arr));
}

static int
get_item(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	int rc = id > UINT32_MAX ? -ENOENT : sk_control_item_get(ctl, (uint32_t)id, &it);

	if (rc == -ENOENT)
		return reply_error(r, 404, "unknown item");
	if (rc != 0)
		return reply_error(r, 503, "store error");
	return reply_json(r, 200, item_json(&it));
}

/* ------------------------------------------------------------- activities */

static int
activity_append(const struct sk_control_item *it, void *arg)
{
	return it->has_activity ? item_append(it, arg) : 0;
}

static int
get_activities(struct sk_control *ctl, struct sk_admin_reply *r)
{
	json_t *arr = json_array();

	if (arr == NULL)
		return -ENOMEM;
	int rc = sk_control_items_foreach(ctl, activity_append, arr);
	if (rc != 0) {
		json_decref(arr);
		return rc == -ENOMEM ? rc : reply_error(r, 503, "store error");
	}
	return reply_json(r, 200, json_pack("{s:o}", "activities", arr));
}

static int
get_activity(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	int rc = id > UINT32_MAX ? -ENOENT : sk_control_item_get(ctl, (uint32_t)id, &it);

	if (rc == -ENOENT || (rc == 0 && !it.has_activity))
		return reply_error(r, 404, "unknown activity");
	if (rc != 0)
		return reply_error(r, 503, "store error");
	return reply_json(r, 200, item_json(&it));
}

/*
 * parse_body - the JSON object of a request body into @out; on failure a
 * 400 reply naming what is wrong. @return the object (caller decrefs) or
 * NULL with @r set (or -ENOMEM in *rc).
 */
static json_t *
parse_body(const char *body, size_t len, struct sk_admin_reply *r, int *rc)
{
	json_error_t e;
	json_t *j;

	*rc = 0;
	if (body == NULL || len == 0) {
		*rc = reply_error(r, 400, "a JSON object body is required");
		return NULL;
	}
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
	if (j == NULL || !json_is_object(j)) {
		char msg[200];

		snprintf(msg, sizeof(msg), "body: %s", j == NULL ? e.text : "not a JSON object");
		json_decref(j);
		*rc = reply_error(r, 400, msg);
		return NULL;
	}
	return j;
}

/*
 * get_u64 - member @key of @o as an integer in [lo, hi]: 1 found, 0 absent
 * (or null when @null_ok), -1 wrong (400 set in @r).
 */
static int
get_u64(json_t *o, const char *key, uint64_t lo, uint64_t hi, bool null_ok, uint64_t *v,
	struct sk_admin_reply *r, int *rc)
{
	json_t *m = json_object_get(o, key);
	char msg[160];

	if (m == NULL || (null_ok && json_is_null(m)))
		return 0;
	if (json_is_integer(m) && json_integer_value(m) >= 0 &&
	    (uint64_t)json_integer_value(m) >= lo && (uint64_t)json_integer_value(m) <= hi) {
		*v = (uint64_t)json_integer_value(m);
		return 1;
	}
	snprintf(msg, sizeof(msg), "%s: must be an integer %" PRIu64 "..%" PRIu64, key, lo, hi);
	*rc = reply_error(r, 400, msg);
	return -1;
}

static const char *const activity_keys[] = {
	"item", "name", "total", "price", "per_user_limit", "start_ns", "end_ns", "pay_timeout_ns",
};

/* activity_from_json - a new activity from a request body (defaults filled). */
static bool
activity_from_json(json_t *o, struct sk_store_activity *a, struct sk_admin_reply *r, int *rc)
{
	const char *key;
	json_t *m;
	uint64_t v;
	int64_t now = sk_clock_ns(CLOCK_REALTIME);

	json_object_foreach(o, key, m)
	{
		bool known = false;

		for (size_t i = 0; i < SK_ARRAY_SIZE(activity_keys); i++)
			known |= strcmp(key, activity_keys[i]) == 0;
		if (!known) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			*rc = reply_error(r, 400, msg);
			return false;
		}
	}
	memset(a, 0, sizeof(*a));
	a->per_user_limit = 1;
	a->start_ns = now;
	a->end_ns = INT64_MAX;
	int got = get_u64(o, "item", 1, UINT32_MAX, false, &v, r, rc);
	if (got == 0)
		*rc = reply_error(r, 400, "item: required, 1..4294967295");
	if (got != 1)
		return false;
	a->item = (uint32_t)v;
	got = get_u64(o, "total", 1, SK_STOCK_MAX_UNITS, false, &a->total, r, rc);
	if (got == 0)
		*rc = reply_error(r, 400, "total: required, 1..2^48");
	if (got != 1)
		return false;
	if (get_u64(o, "price", 0, INT64_MAX, false, &a->price, r, rc) < 0)
		return false;
	if (get_u64(o, "per_user_limit", 1, SK_STOCK_MAX_QTY, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "per_user_limit") != NULL)
		a->per_user_limit = (uint32_t)v;
	if (get_u64(o, "start_ns", 0, INT64_MAX, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "start_ns") != NULL)
		a->start_ns = (int64_t)v;
	got = get_u64(o, "end_ns", 1, INT64_MAX, true, &v, r, rc);
	if (got < 0)
		return false;
	if (got == 1)
		a->end_ns = (int64_t)v;
	if (get_u64(o, "pay_timeout_ns", 0, INT64_MAX, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "pay_timeout_ns") != NULL)
		a->pay_timeout_ns = (int64_t)v;
	m = json_object_get(o, "name");
	if (m != NULL && !json_is_string(m)) {
		*rc = reply_error(r, 400, "name: must be a string");
		return false;
	}
	if (m != NULL) {
		if (json_string_length(m) > SK_STORE_NAME_MAX ||
		    strlen(json_string_value(m)) != json_string_length(m)) {
			*rc = reply_error(r, 400, "name: at most 64 bytes, no NUL");
			return false;
		}
		memcpy(a->name, json_string_value(m), json_string_length(m));
	}
	const char *why;
	if (!sk_activity_valid(a, now, &why)) {
		*rc = reply_error(r, 400, why);
		return false;
	}
	return true;
}

/*
 * activity_reply - the answer of a change to activity @id: its item object
 * with "result", or an error status for the other outcomes.
 */
static int
activity_reply(struct sk_control *ctl, uint64_t id, int res, unsigned done_status,
	       const char *conflict, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	char msg[160];
	int rc;

	switch (res) {
	case SK_ACTIVITY_DONE:
	case SK_ACTIVITY_UNCHANGED:
		rc = sk_control_item_get(ctl, (uint32_t)id, &it);
		if (rc != 0)
			return reply_error(r, 503, "store error");
		json_t *o = item_json(&it);
		if (o == NULL)
			return -ENOMEM;
		json_object_set_new(o, "result", json_string(sk_activity_result_name(res)));
		return reply_json(r, res == SK_ACTIVITY_DONE ? done_status : 200, o);
	case SK_ACTIVITY_CONFLICT:
		return reply_error(r, 409, conflict);
	case SK_ACTIVITY_CLOSED:
		return reply_error(r, 409, "the activity is closed");
	case SK_ACTIVITY_ENDED:
		return reply_error(r, 409, "the sale has ended: restocked units could never sell");
	case SK_ACTIVITY_UNKNOWN:
		return reply_error(r, 404, "unknown activity");
	case SK_ACTIVITY_NO_ROOM:
		return reply_error(r, 507,
				   "no room in the item table (seckill.max_items or "
				   "seckill.dedup_slots of the dataplane)");
	case SK_ACTIVITY_INVALID:
		return reply_error(r, 400, "invalid: the item would exceed 2^48 units");
	default:
		snprintf(msg, sizeof(msg), "store: %s", strerror(-res));
		return reply_error(r, 503, msg);
	}
}

static int
post_activity(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct sk_store_activity a;
	int rc;
	json_t *o = parse_body(body, len, r, &rc);

	if (o == NULL)
		return rc;
	bool ok = activity_from_json(o, &a, r, &rc);
	bool start_given = json_object_get(o, "start_ns") != NULL;
	json_decref(o);
	if (!ok)
		return rc;
	/*
	 * No start means "open now": for an activity that exists already that
	 * is its start, so that a retried request without one is the same
	 * definition rather than a conflict of a few microseconds.
	 */
	struct sk_store_activity cur;
	if (!start_given && sk_store_activity_get(sk_control_store(ctl), a.item, &cur, NULL) == 0)
		a.start_ns = cur.start_ns;
	return activity_reply(ctl, a.item,
			      sk_control_activity_add(ctl, &a, sk_clock_ns(CLOCK_REALTIME)), 201,
			      "the activity exists with another definition (an activity does "
			      "not change: restock it, or close it and use a new item id)",
			      r);
}

static int
post_close(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	if (id > UINT32_MAX)
		return reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id, sk_control_activity_close(ctl, (uint32_t)id, sk_clock_ns(CLOCK_REALTIME)),
		200, "", r);
}

static int
post_restock(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
	     struct sk_admin_reply *r)
{
	uint64_t units = 0, rid = 0;
	const char *key;
	json_t *m;
	int rc;
	json_t *o = parse_body(body, len, r, &rc);

	if (o == NULL)
		return rc;
	json_object_foreach(o, key, m)
	{
		if (strcmp(key, "units") != 0 && strcmp(key, "restock_id") != 0) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			json_decref(o);
			return reply_error(r, 400, msg);
		}
	}
	int gu = get_u64(o, "units", 1, SK_STOCK_MAX_UNITS, false, &units, r, &rc);
	int gi = gu == 1 ? get_u64(o, "restock_id", 1, INT64_MAX, false, &rid, r, &rc) : 0;
	json_decref(o);
	if (gu < 0 || gi < 0)
		return rc;
	if (gu == 0)
		return reply_error(r, 400, "units: required, 1..2^48");
	if (gi == 0)
		return reply_error(r, 400,
				   "restock_id: required, 1..2^63-1 (names the restock so that "
				   "a retry is applied once)");
	if (id > UINT32_MAX)
		return reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id,
		sk_control_stock_add(ctl, (uint32_t)id, rid, units, sk_clock_ns(CLOCK_REALTIME)),
		200, "restock_id was used before with another number of units", r);
}

/* ---------------------------------------------------------------- metrics */

static int
get_metrics(struct sk_control *ctl, struct sk_admin_reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return -ENOMEM;
	int rc = sk_control_metrics(ctl, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc != 0) {
		free(buf);
		return rc == -ENOMEM ? rc : reply_error(r, 503, "metrics unavailable");
	}
	r->status = 200;
	r->content_type = CT_PROM;
	r->body = buf;
	r->len = len;
	return 0;
}

/* ---------------------------------------------------------------- routing */

/*
 * parse_id - a decimal id of 1..20 digits at @s, ending at @end or '/';
 * sets *rest to what follows. 0 if malformed, zero or out of range.
 */
static uint64_t
parse_id(const char *s, const char **rest)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 20 || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return 0;
	}
	if (i == 0 || (s[i] != '\0' && s[i] != '/'))
		return 0;
	*rest = s + i;
	return v;
}

static bool
is_get(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static int
not_allowed(struct sk_admin_reply *r, const char *allow)
{
	r->allow = allow;
	return reply_error(r, 405, "method not allowed");
}

static int
route(struct sk_control *ctl, const char *method, const char *path, const char *body,
      size_t body_len, unsigned wait_ms, struct sk_admin_reply *r)
{
	const char *rest = NULL;
	uint64_t id;

	if (strcmp(path, "/healthz") == 0)
		return is_get(method) ? reply_text(r, 200, CT_TEXT, "ok\n")
				      : not_allowed(r, "GET, HEAD");
	if (strcmp(path, "/metrics") == 0)
		return is_get(method) ? get_metrics(ctl, r) : not_allowed(r, "GET, HEAD");
	if (strcmp(path, "/v1/items") == 0 || strcmp(path, "/v1/items/") == 0)
		return is_get(method) ? get_items(ctl, r) : not_allowed(r, "GET, HEAD");
	if (strncmp(path, "/v1/items/", 10) == 0) {
		id = parse_id(path + 10, &rest);
		if (id == 0 || *rest != '\0')
			return reply_error(r, id == 0 ? 400 : 404,
					   id == 0 ? "bad item id" : "not found");
		return is_get(method) ? get_item(ctl, id, r) : not_allowed(r, "GET, HEAD");
	}
	if (strcmp(path, "/v1/activities") == 0 || strcmp(path, "/v1/activities/") == 0) {
		if (is_get(method))
			return get_activities(ctl, r);
		return strcmp(method, "POST") == 0 ? post_activity(ctl, body, body_len, r)
						   : not_allowed(r, "GET, HEAD, POST");
	}
	if (strncmp(path, "/v1/activities/", 15) == 0) {
		id = parse_id(path + 15, &rest);
		if (id == 0)
			return reply_error(r, 400, "bad item id");
		if (*rest == '\0')
			return is_get(method) ? get_activity(ctl, id, r)
					      : not_allowed(r, "GET, HEAD");
		if (strcmp(rest, "/close") == 0)
			return strcmp(method, "POST") == 0 ? post_close(ctl, id, r)
							   : not_allowed(r, "POST");
		if (strcmp(rest, "/restock") == 0)
			return strcmp(method, "POST") == 0
				       ? post_restock(ctl, id, body, body_len, r)
				       : not_allowed(r, "POST");
	}
	if (strncmp(path, "/v1/orders/", 11) == 0) {
		id = parse_id(path + 11, &rest);
		if (id == 0)
			return reply_error(r, 400, "bad order id");
		if (*rest == '\0')
			return is_get(method) ? get_order(ctl, id, r) : not_allowed(r, "GET, HEAD");
		if (strcmp(rest, "/pay") == 0)
			return strcmp(method, "POST") == 0 ? pay_order(ctl, id, wait_ms, r)
							   : not_allowed(r, "POST");
	}
	return reply_error(r, 404, "not found");
}

int
sk_admin_handle(struct sk_control *ctl, const char *method, const char *path, const char *body,
		size_t body_len, unsigned pay_wait_ms, struct sk_admin_reply *r)
{
	char p[512];
	size_t n = strcspn(path, "?");

	memset(r, 0, sizeof(*r));
	if (n >= sizeof(p))
		return reply_error(r, 414, "uri too long");
	memcpy(p, path, n);
	p[n] = '\0';
	return route(ctl, method, p, body, body_len, pay_wait_ms, r);
}

/* ------------------------------------------------------- libmicrohttpd glue */

/* A request being received: its body, up to SK_ADMIN_BODY_MAX bytes. */
struct req_state {
	size_t len;
	bool too_big;
	char body[SK_ADMIN_BODY_MAX];
};

static void
on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	free(*req_cls);
	*req_cls = NULL;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct sk_admin *a = cls;
	struct req_state *rs = *req_cls;
	struct sk_admin_reply r;
	int rc;

	(void)version;
	if (rs == NULL) { /* headers only: the body follows */
		rs = malloc(sizeof(*rs));
		if (rs == NULL)
			return MHD_NO;
		rs->len = 0;
		rs->too_big = false;
		*req_cls = rs;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (rs->len + *upload_data_size > sizeof(rs->body))
			rs->too_big = true;
		else
			memcpy(rs->body + rs->len, upload_data, *upload_data_size);
		if (!rs->too_big)
			rs->len += *upload_data_size;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rs->too_big) {
		memset(&r, 0, sizeof(r));
		rc = reply_error(&r, 413, "body larger than 16 KiB");
	} else {
		rc = sk_admin_handle(a->ctl, method, url, rs->body, rs->len, a->pay_wait_ms, &r);
	}
	if (rc != 0)
		return MHD_NO; /* out of memory: drop the connection */

	struct MHD_Response *resp =
		MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(r.body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r.allow != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r.allow);
	if (r.retry_after != 0) {
		char v[16];
		snprintf(v, sizeof(v), "%u", r.retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
	}
	enum MHD_Result ret = MHD_queue_response(c, r.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static struct MHD_Daemon *
start_daemon(struct sk_admin *a, const struct sockaddr *sa, int listen_fd)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;

	if (listen_fd >= 0)
		return MHD_start_daemon(flags, 0, NULL, NULL, on_request, a,
					MHD_OPTION_LISTEN_SOCKET, listen_fd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
					MHD_OPTION_CONNECTION_LIMIT, 64U,
					MHD_OPTION_CONNECTION_TIMEOUT, 30U, MHD_OPTION_END);
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, a, MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				MHD_OPTION_CONNECTION_LIMIT, 64U, MHD_OPTION_CONNECTION_TIMEOUT,
				30U, MHD_OPTION_END);
}

/* tcp_in_use - whether something accepts on 127.0.0.1:@port. */
static bool
tcp_in_use(uint16_t port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool used = fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;

	if (fd >= 0)
		close(fd);
	return used;
}

/* unix_listen - a listening unix socket at @path (stale one replaced), or -errno. */
static int
unix_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat sb;
	int fd, rc;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		sk_set_err(err, errlen, "admin: socket path too long: %s", path);
		return -EINVAL;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			sk_set_err(err, errlen, "admin: %s exists and is not a socket", path);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			close(fd);
			sk_set_err(err, errlen, "admin: %s is in use by a running process", path);
			return -EADDRINUSE;
		}
		if (fd >= 0)
			close(fd);
		unlink(path); /* stale: its server is gone */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto err;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 64) != 0) {
		rc = -errno;
		close(fd);
		unlink(path);
		goto err;
	}
	return fd;
err:
	sk_set_err(err, errlen, "admin: unix socket %s: %s", path, strerror(-rc));
	return rc;
}

int
sk_admin_start(struct sk_admin **out, struct sk_control *ctl, const struct sk_admin_conf *conf,
	       char *err, size_t errlen)
{
	struct sk_admin *a = NULL;
	int rc = -EINVAL, fd = -1;

	if (out == NULL || ctl == NULL || conf == NULL ||
	    (!conf->tcp && conf->socket_path == NULL)) {
		sk_set_err(err, errlen, "admin: no listener configured");
		goto err;
	}
	rc = -ENOMEM;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		goto err;
	a->ctl = ctl;
	a->pay_wait_ms = conf->pay_wait_ms ? conf->pay_wait_ms : SK_ADMIN_PAY_WAIT_MS_DEFAULT;

	if (conf->tcp) {
		struct sockaddr_in sin = {.sin_family = AF_INET,
					  .sin_port = htons(conf->port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		a->tcp = start_daemon(a, (struct sockaddr *)&sin, -1);
		if (a->tcp == NULL) {
			rc = conf->port != 0 && tcp_in_use(conf->port) ? -EADDRINUSE : -EIO;
			sk_set_err(err, errlen, "admin: cannot listen on 127.0.0.1:%u%s",
				   conf->port, rc == -EADDRINUSE ? ": address in use" : "");
			goto err;
		}
		const union MHD_DaemonInfo *di =
			MHD_get_daemon_info(a->tcp, MHD_DAEMON_INFO_BIND_PORT);
		a->port = di != NULL ? di->port : conf->port;
	}
	if (conf->socket_path != NULL) {
		fd = unix_listen(conf->socket_path, err, errlen);
		if (fd < 0) {
			rc = fd;
			goto err;
		}
		a->socket_path = strdup(conf->socket_path);
		if (a->socket_path == NULL) {
			close(fd);
			unlink(conf->socket_path);
			sk_set_err(err, errlen, "admin: out of memory");
			goto err;
		}
		a->unix_d = start_daemon(a, NULL, fd);
		if (a->unix_d == NULL) {
			close(fd);
			rc = -EIO;
			sk_set_err(err, errlen, "admin: cannot serve on %s", conf->socket_path);
			goto err;
		}
	}
	*out = a;
	return 0;
err:
	sk_admin_stop(a);
	return rc;
}

uint16_t
sk_admin_port(const struct sk_admin *a)
{
	return a->tcp != NULL ? a->port : 0;
}

void
sk_admin_stop(struct sk_admin *a)
{
	if (a == NULL)
		return;
	if (a->tcp != NULL)
		MHD_stop_daemon(a->tcp);
	if (a->unix_d != NULL)
		MHD_stop_daemon(a->unix_d); /* closes the listening socket */
	if (a->socket_path != NULL) {
		unlink(a->socket_path);
		free(a->socket_path);
	}
	free(a);
}
