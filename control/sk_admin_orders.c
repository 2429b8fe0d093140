/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's order routes: GET /v1/orders/{id}, POST /v1/orders/{id}/pay,
 * POST /v1/orders/{id}/refund.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "sk_admin_impl.h"

/* ----------------------------------------------------------------- orders */

static json_t *
order_json(struct sk_control *ctl, const struct sk_store_line *l, unsigned n)
{
	const struct sk_order_rec *r0 = &l[0].rec;
	unsigned arena = sk_control_order_status(ctl, r0->id);
	char ip[INET_ADDRSTRLEN] = "";
	struct in_addr a = {.s_addr = r0->client_ip};
	uint64_t units = 0, refunded = 0;
	json_t *lines = json_array();

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
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
		"{s:o,s:s,s:o,s:o,s:o,s:o,s:b,s:s,s:I,s:I,s:I,s:I,s:o,s:o}", "order",
		adm_id_string(r0->id), "status", sk_order_status_name(l[0].state), "arena_status",
		arena == SK_ORDER_NONE ? json_null() : json_string(sk_order_status_name(arena)),
		"user", adm_id_string(r0->user), "units", adm_jint(units), "refunded_units",
		adm_jint(refunded), "partially_refunded",
		l[0].state == SK_ORDER_PAID && refunded > 0, "client_ip", ip, "time_ns",
		(json_int_t)r0->time_ns, "deadline_ns", (json_int_t)l[0].deadline_ns, "stored_ns",
		(json_int_t)l[0].stored_ns, "updated_ns", (json_int_t)l[0].updated_ns, "in_store",
		json_true(), "lines", lines != NULL ? lines : json_null());
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
	if (rc == 0) {
		rc = adm_reply_json(r, 200, order_json(ctl, lines, n));
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
	if (req[0] == '\0') /* no id: this request alone (a retry refunds again) */
		snprintf(req, sizeof(req), "admin-%" PRIu64 "-%" PRId64, id, now);
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
