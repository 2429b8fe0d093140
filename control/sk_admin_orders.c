/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's order routes: GET /v1/orders/{id}, POST /v1/orders/{id}/pay.
 */
#include <arpa/inet.h>
#include <errno.h>
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
	uint64_t units = 0;
	json_t *lines = json_array();

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	for (unsigned i = 0; i < n && lines != NULL; i++) {
		units += l[i].rec.qty;
		json_array_append_new(
			lines,
			json_pack("{s:i,s:o,s:i,s:o,s:i}", "line", (int)l[i].rec.line, "item",
				  adm_jint(l[i].rec.item), "qty", (int)l[i].rec.qty, "price",
				  adm_jint(l[i].rec.price), "returned", (int)l[i].rec.returned));
	}
	return json_pack(
		"{s:o,s:s,s:o,s:o,s:o,s:s,s:I,s:I,s:I,s:I,s:o,s:o}", "order", adm_id_string(r0->id),
		"status", sk_order_status_name(l[0].state), "arena_status",
		arena == SK_ORDER_NONE ? json_null() : json_string(sk_order_status_name(arena)),
		"user", adm_id_string(r0->user), "units", adm_jint(units), "client_ip", ip,
		"time_ns", (json_int_t)r0->time_ns, "deadline_ns", (json_int_t)l[0].deadline_ns,
		"stored_ns", (json_int_t)l[0].stored_ns, "updated_ns", (json_int_t)l[0].updated_ns,
		"in_store", json_true(), "lines", lines != NULL ? lines : json_null());
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
