/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_app_sse.c - GET /v1/orders/{id}/events: the order events stream
 * (Server-Sent Events) of the order's own user, pushed from the status
 * table (sk_app_impl.h, docs/api.md).
 *
 * A stream is a parked connection: the request stays unconsumed (so no
 * pipelined request behind it is answered into the stream), the route's
 * state is its slot in the lcore's stream table (park_state::sse_slot1),
 * and sk_app_poll() pushes from a bounded slice of the table per pass.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "sk_app_impl.h"
#include "sk_order.h"
#include "sk_sse.h"

/** The keep-alive period of a stream. */
#define SSE_KEEPALIVE_MS 15000

/* The 429 of a stream refused by a cap (the lcore's or the user's). */
static const char busy_body[] = "{\"status\":\"busy\"}";

int
sk_app_sse_create(struct sk_app *app, uint32_t max, uint32_t per_user, int socket)
{
	size_t len = sk_sse_table_size(max);
	void *mem;

	if (len == 0 || per_user == 0)
		return -EINVAL;
	mem = rte_zmalloc_socket("sk_app_sse", len, RTE_CACHE_LINE_SIZE, socket);
	if (mem == NULL)
		return -ENOMEM;
	app->sse =
		sk_sse_table_init(mem, len, max, per_user, app->tsc_hz / 1000 * SSE_KEEPALIVE_MS);
	if (app->sse == NULL) {
		rte_free(mem);
		return -EINVAL;
	}
	app->sse->stats = &app->stats.sse;
	app->sse_every_tsc = app->tsc_hz / 1000000 * SK_APP_SSE_SCAN_US;
	app->sse_due_tsc = 0;
	return 0;
}

/* sse_write - @len bytes of the stream on @ac (through TLS on a TLS
 * connection); not a response: not counted by status. */
static int
sse_write(struct sk_app_conn *ac, const void *data, size_t len)
{
	return ac->tls != NULL ? sk_tls_send(ac->tls, data, len) : sk_tcp_send(ac->conn, data, len);
}

/* sse_end - the stream of @ac is over: free its slot, FIN after what is queued. */
static void
sse_end(struct sk_app *app, struct sk_app_conn *ac)
{
	struct park_state *ps = (struct park_state *)ac->route_data;

	if (ps->sse_slot1 != 0) {
		sk_sse_table_close(app->sse, ps->sse_slot1 - 1);
		ps->sse_slot1 = 0;
	}
	sk_app_close(ac, 0);
}

void
sk_app_sse_closed(struct sk_app *app, struct sk_app_conn *ac)
{
	struct park_state *ps = (struct park_state *)ac->route_data;

	if (ps->sse_slot1 != 0) {
		sk_sse_table_close(app->sse, ps->sse_slot1 - 1);
		ps->sse_slot1 = 0;
	}
}

enum sk_app_verdict
sk_app_sse_route(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
		 const char *arg, size_t arg_len)
{
	struct park_state *ps = (struct park_state *)ac->route_data;
	char buf[SK_SSE_HEAD_LEN + SK_SSE_EVENT_MAX];
	struct sk_seckill_follow f;
	struct sk_seckill_reply r;
	uint32_t slot;
	unsigned st;
	size_t n;
	int rc;

	if (ac->parked) { /* more bytes, or the peer's FIN, on an open stream */
		if (sk_tcp_peer_closed(ac->conn) && ac->state == CONN_OPEN)
			sse_end(app, ac);
		return SK_APP_PARK;
	}
	if (app->sse == NULL) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_NOT_FOUND);
		return SK_APP_DONE;
	}
	if (req->method != SK_HTTP_METHOD_GET) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_METHOD);
		return SK_APP_DONE;
	}
	if (sk_seckill_follow(app->seckill, arg, arg_len, req, sk_app_client(app, ac), app->now_ns,
			      app->now_tsc, &f, &r) == 0) {
		sk_app_seckill_reply(app, ac, req, &r);
		return SK_APP_DONE;
	}
	st = f.status == SK_ORDER_NONE ? SK_SSE_SETTLED : f.status;
	if (!sk_sse_final(st)) {
		rc = sk_sse_table_open(app->sse, ac, f.user, f.order, st, app->now_tsc, &slot);
		if (rc != 0) {
			struct sk_http_response resp = {
				.status = 429,
				.retry_after = 1,
				.body = busy_body,
				.body_len = sizeof(busy_body) - 1,
			};

			sk_app_reply(app, ac, req, &resp);
			return SK_APP_DONE;
		}
		ps->sse_slot1 = slot + 1;
	}
	memcpy(buf, SK_SSE_HEAD, SK_SSE_HEAD_LEN);
	n = SK_SSE_HEAD_LEN + sk_sse_event(buf + SK_SSE_HEAD_LEN, f.order, sk_sse_status_name(st));
	/* The send space of a handler call holds it (SK_APP_REPLY_MAX). */
	sk_app_send(app, ac, buf, n, 200);
	app->stats.sse.events++;
	if (sk_sse_final(st)) {
		app->stats.sse.finished++;
		sse_end(app, ac);
	}
	/* Parked for good: the request stays in the buffer until the close. */
	return SK_APP_PARK;
}

/* sse_send - sk_sse_send_fn of the app: -EAGAIN while a slow reader's
 * send space is short (its event waits, the status stays). */
static int
sse_send(void *arg, void *conn, const void *data, size_t len)
{
	struct sk_app *app = arg;
	struct sk_app_conn *ac = conn;

	if (sk_app_send_space(ac) < len)
		return -EAGAIN;
	if (sse_write(ac, data, len) != 0) {
		app->stats.send_errors++;
		return -ENOTCONN;
	}
	return 0;
}

/* sse_final - sk_sse_end_fn of the app: the stream sent its final event. */
static void
sse_final(void *arg, void *conn, uint32_t slot)
{
	(void)slot;
	sse_end(arg, conn);
}

void
sk_app_sse_poll(struct sk_app *app)
{
	if (app->now_tsc < app->sse_due_tsc)
		return;
	app->sse_due_tsc = app->now_tsc + app->sse_every_tsc;
	sk_sse_table_poll(app->sse, &app->seckill->buy.status, SK_SSE_SCAN_MAX, app->now_tsc,
			  sse_send, sse_final, app);
}
