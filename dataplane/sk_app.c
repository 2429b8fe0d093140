/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_app.c - TCP callbacks -> HTTP parser -> route table -> response.
 *
 * Sections: route table and handlers; replies; the TCP callbacks; clock
 * and life cycle. The durable ack's FIFO of parked winners is
 * sk_app_park.c; what both share is sk_app_impl.h.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "sk_app_impl.h"
#include "sk_cart.h"
#include "sk_logfmt.h"
#include "sk_order.h"

/* 408: the answer to a request that was not complete in time (then close). */
#define BODY_408 "{\"status\":\"request_timeout\"}"
static const char resp_408[] = "HTTP/1.1 408 Request Timeout\r\n"
			       "Content-Type: application/json\r\n"
			       "Content-Length: 28\r\n"
			       "Connection: close\r\n\r\n" BODY_408;
_Static_assert(sizeof(BODY_408) - 1 == 28, "Content-Length of the 408 answer");
_Static_assert(sizeof(struct sk_proxy_parser) <= sizeof(((struct sk_app_conn *)0)->route_data),
	       "the PROXY parser must fit route_data");
_Static_assert(SK_APP_STATUS_SLOTS <= SK_SHM_HTTP_SLOTS,
	       "the status slots must fit the arena's stats block (sk_shm.h)");

#define M(m) ((uint8_t)(1u << SK_HTTP_METHOD_##m))

/* ------------------------------------------------------------------------ */
/* Route table and handlers                                                  */
/* ------------------------------------------------------------------------ */

/* route_healthz - GET|HEAD /healthz: the appliance is up. */
static enum sk_app_verdict
route_healthz(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	      const char *arg, size_t arg_len)
{
	(void)arg;
	(void)arg_len;
	sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_HEALTHZ);
	return SK_APP_DONE;
}

/* sk_app_seckill_reply - send @r (canned in the connection's variant, or
 * status + JSON body + Retry-After). */
void
sk_app_seckill_reply(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
		     const struct sk_seckill_reply *r)
{
	struct sk_http_response resp = {
		.status = r->status,
		.retry_after = r->retry_after,
		.body = r->body,
		.body_len = r->body_len,
	};

	if (r->canned >= 0)
		sk_app_reply_canned(app, ac, req, (enum sk_http_canned_id)r->canned);
	else
		sk_app_reply(app, ac, req, &resp);
}

/* buy_timed - count a buy answered now whose request was taken at TSC @t0. */
static inline void
buy_timed(struct sk_app *app, uint64_t t0)
{
	uint64_t now = rte_rdtsc();
	uint64_t d = now > t0 ? now - t0 : 0;

	sk_shm_lat_observe(app->ls, (uint64_t)(((unsigned __int128)d * app->ns_mult) >> 32));
}

/* app_peer - the TCP peer of @ac, of either family (an IPv6 peer keys the
 * per-IP limit on its prefix, /64 by default: sk_client_rl_key()). */
static inline struct sk_addr
app_peer(const struct sk_app_conn *ac)
{
	struct sk_addr a;

	sk_tcp_remote_addr(ac->conn, &a);
	return a;
}

/* sk_app_client - the client of the request on @ac ("Client address" in
 * sk_app.h): the connection's (its peer's keys, taken once at open, or the
 * PROXY header's), unless a forwarded header is to be judged. */
struct sk_client_id
sk_app_client(struct sk_app *app, struct sk_app_conn *ac)
{
	struct sk_addr peer;

	if (app->client.forwarded == 0)
		return ac->client;
	if (app->client.proxy != 0) {
		if (ac->client.addr.family == SK_ADDR_NONE)
			return ac->client;
		peer = ac->client.addr;
	} else {
		peer = app_peer(ac);
	}
	return sk_client_request(&app->client, &app->stats.client, &peer, app->head, app->head_len);
}

/*
 * buy_or_cart - POST /v1/seckill/{item} (route_buy), or POST /v1/cart
 * (route_cart) with @cart. With ack = durable a winner (or the
 * duplicate of a queued order of this run) is parked
 * (SK_APP_PARK) until sk_app_poll() finds its order settled or its wait
 * over; the call after the resume answers from the status table and does
 * not buy again. A call while parked but not yet due (more bytes arrived on
 * the connection) parks again.
 */
static enum sk_app_verdict
buy_or_cart(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	    const char *arg, size_t arg_len, bool cart)
{
	struct park_state *ps = (struct park_state *)ac->route_data;
	struct sk_seckill_reply r;
	enum sk_seckill_outcome o;

	if (sk_unlikely(app->seckill == NULL)) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_NOT_FOUND);
		buy_timed(app, app->now_tsc);
		return SK_APP_DONE;
	}
	if (ac->parked && ps->order != 0) {
		if (!ps->due)
			return SK_APP_PARK;
		sk_seckill_settled_reply(app->seckill, ps->order, ps->duplicate, &r);
		if (ps->settled)
			app->stats.durable_settled++;
		else
			app->stats.durable_timeout++;
		if (r.status == 200)
			app->stats.durable_200++;
		ps->order = 0;
		sk_app_seckill_reply(app, ac, req, &r);
		buy_timed(app, ps->t0);
		return SK_APP_DONE;
	}
	if (cart)
		o = sk_cart_buy(app->seckill, req, sk_app_client(app, ac), app->now_ns,
				app->now_tsc, &r);
	else
		o = sk_seckill_buy_from(app->seckill, arg, arg_len, req, sk_app_client(app, ac),
					app->now_ns, app->now_tsc, &r);
	/* A winner, or a retry of one whose order is still queued (in the status table). */
	if (app->durable && r.order != 0 &&
	    (o == SK_SECKILL_WON || (o == SK_SECKILL_DUPLICATE && r.status == 202))) {
		if (sk_app_park_push(app, ac, r.order, o == SK_SECKILL_DUPLICATE))
			return SK_APP_PARK;
		/* More winners waiting than connections (reused ones): answer now. */
		app->stats.durable_park_full++;
		sk_seckill_settled_reply(app->seckill, r.order, o == SK_SECKILL_DUPLICATE, &r);
	}
	sk_app_seckill_reply(app, ac, req, &r);
	buy_timed(app, app->now_tsc);
	return SK_APP_DONE;
}

static enum sk_app_verdict
route_buy(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	  const char *arg, size_t arg_len)
{
	return buy_or_cart(app, ac, req, arg, arg_len, false);
}

/* route_cart - POST /v1/cart: a buy of several lines (sk_cart.h), parked as a buy. */
static enum sk_app_verdict
route_cart(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	   const char *arg, size_t arg_len)
{
	return buy_or_cart(app, ac, req, arg, arg_len, true);
}

/* route_order - GET|HEAD /v1/orders/{id}: from the status table; GET
 * /v1/orders/{id}/events: its events stream (sk_app_sse.c). */
static enum sk_app_verdict
route_order(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	    const char *arg, size_t arg_len)
{
	static const char events[] = "/events";
	struct sk_seckill_reply r;

	if (sk_unlikely(app->seckill == NULL)) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_NOT_FOUND);
		return SK_APP_DONE;
	}
	if (arg_len > sizeof(events) - 1 &&
	    memcmp(arg + arg_len - (sizeof(events) - 1), events, sizeof(events) - 1) == 0)
		return sk_app_sse_route(app, ac, req, arg, arg_len - (sizeof(events) - 1));
	sk_seckill_order(app->seckill, arg, arg_len, &r);
	sk_app_seckill_reply(app, ac, req, &r);
	return SK_APP_DONE;
}

/* route_item - GET|HEAD /v1/items/{item}: state and units left, all lcores. */
static enum sk_app_verdict
route_item(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	   const char *arg, size_t arg_len)
{
	struct sk_seckill_reply r;

	if (sk_unlikely(app->seckill == NULL)) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_NOT_FOUND);
		return SK_APP_DONE;
	}
	sk_seckill_item(app->seckill, arg, arg_len, app->now_ns, &r);
	sk_app_seckill_reply(app, ac, req, &r);
	return SK_APP_DONE;
}

#define ROUTE_EXACT(p, m, f)                                                                       \
	{                                                                                          \
		p, sizeof(p) - 1, false, m, f                                                      \
	}
#define ROUTE_PREFIX(p, m, f)                                                                      \
	{                                                                                          \
		p, sizeof(p) - 1, true, m, f                                                       \
	}

/* Matched in order; first match by path wins. The buy comes first: it is
 * the request of the flash-sale crowd. */
static const struct sk_app_route routes[] = {
	ROUTE_PREFIX("/v1/seckill/", M(POST), route_buy),
	ROUTE_EXACT("/v1/cart", M(POST), route_cart),
	ROUTE_PREFIX("/v1/orders/", M(GET) | M(HEAD), route_order),
	ROUTE_PREFIX("/v1/items/", M(GET) | M(HEAD), route_item),
	ROUTE_EXACT("/healthz", M(GET) | M(HEAD), route_healthz),
};

/* app_route - dispatch @req to its handler, or answer 404/405 here. */
static enum sk_app_verdict
app_route(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req)
{
	const char *path = req->target;
	size_t len = req->path_len;
	bool path_known = false;

	if (sk_unlikely(app->plain_redirect) && ac->tls == NULL) {
		sk_app_redirect(app, ac, req);
		return SK_APP_DONE;
	}
	for (size_t i = 0; i < SK_ARRAY_SIZE(routes); i++) {
		const struct sk_app_route *r = &routes[i];

		if (r->prefix ? (len <= r->path_len || memcmp(path, r->path, r->path_len) != 0)
			      : (len != r->path_len || memcmp(path, r->path, len) != 0))
			continue;
		path_known = true;
		if ((r->methods & (1u << req->method)) == 0)
			continue;
		return r->fn(app, ac, req, path + r->path_len, len - r->path_len);
	}
	sk_app_reply_canned(app, ac, req,
			    path_known ? SK_HTTP_CANNED_METHOD : SK_HTTP_CANNED_NOT_FOUND);
	return SK_APP_DONE;
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */
/* ------------------------------------------------------------------------ */

static const uint16_t status_codes[SK_APP_STATUS_SLOTS] = {
#define SK_APP_CODE(code) [SK_APP_S##code] = code,
	SK_APP_STATUS_LIST(SK_APP_CODE)
#undef SK_APP_CODE
};

uint16_t
sk_app_status_code(unsigned slot)
{
	return slot < SK_APP_STATUS_SLOTS ? status_codes[slot] : 0;
}

static unsigned
status_slot(unsigned code)
{
	switch (code) {
#define SK_APP_CASE(c)                                                                             \
	case c:                                                                                    \
		return SK_APP_S##c;
		SK_APP_STATUS_LIST(SK_APP_CASE)
#undef SK_APP_CASE
	default:
		return SK_APP_S_OTHER;
	}
}

/* sk_app_send - queue @len bytes of a response with status @status. */
int
sk_app_send(struct sk_app *app, struct sk_app_conn *ac, const void *data, size_t len,
	    unsigned status)
{
	int rc = ac->tls != NULL ? sk_tls_send(ac->tls, data, len)
				 : sk_tcp_send(ac->conn, data, len);

	if (sk_unlikely(rc != 0)) {
		app->stats.send_errors++;
		return rc;
	}
	app->stats.responses++;
	sk_shm_stat_add(&app->ls->http_status[status_slot(status)], 1);
	return 0;
}

/* canned_status - the status code in a canned response's status line. */
static unsigned
canned_status(const struct sk_http_canned *c)
{
	const char *d = c->data + sizeof("HTTP/1.1 ") - 1;

	return (unsigned)(d[0] - '0') * 100 + (unsigned)(d[1] - '0') * 10 + (unsigned)(d[2] - '0');
}

int
sk_app_reply_canned(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
		    enum sk_http_canned_id id)
{
	const struct sk_http_canned *c = sk_http_canned_get(id, sk_http_request_conn(req));

	if (c == NULL)
		return -EINVAL;
	return sk_app_send(app, ac, c->data,
			   req->method == SK_HTTP_METHOD_HEAD ? c->head_len : c->len,
			   canned_status(c));
}

int
sk_app_reply(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
	     struct sk_http_response *r)
{
	int n;

	if (r->conn != SK_HTTP_CONN_CLOSE)
		r->conn = (uint8_t)sk_http_request_conn(req);
	r->no_body = req->method == SK_HTTP_METHOD_HEAD;
	n = sk_http_response_write(app->reply, sizeof(app->reply), r);
	if (n < 0)
		return n;
	return sk_app_send(app, ac, app->reply, (size_t)n, r->status);
}

/* ------------------------------------------------------------------------ */
/* TCP callbacks                                                             */
/* ------------------------------------------------------------------------ */

static void
conn_list_del(struct sk_app *app, struct sk_app_conn *ac)
{
	if (ac->prev != NULL)
		ac->prev->next = ac->next;
	else if (app->conns == ac)
		app->conns = ac->next;
	if (ac->next != NULL)
		ac->next->prev = ac->prev;
	ac->prev = ac->next = NULL;
}

static void
app_on_open(void *arg, struct sk_tcp_conn *c)
{
	struct sk_app *app = arg;
	struct sk_app_conn *ac = sk_tcp_app_data(c);

	/* The limits were validated at create time: init cannot fail here. */
	sk_http_parser_init(&ac->http, &app->limits);
	ac->conn = c;
	if (app->client.proxy != 0) {
		ac->state = CONN_PROXY;
		sk_proxy_parser_init((struct sk_proxy_parser *)ac->route_data, 0);
	} else {
		/* the keys of the peer, once per connection (an IPv6 peer's
		 * hashed /64 would cost every request otherwise) */
		struct sk_addr peer = app_peer(ac);

		ac->client = sk_client_id_of(&peer, app->client.ip6_prefix);
	}
	ac->next = app->conns;
	if (app->conns != NULL)
		app->conns->prev = ac;
	app->conns = ac;
	app->stats.conns_opened++;
	app->stats.conns_open++;
	if (app->tls != NULL && sk_tcp_local_port(c) == app->tls_port) {
		ac->tls_port = true;
		/* Behind a PROXY balancer TLS starts after the header: the
		 * per-IP limit must see the client it names. */
		if (ac->state != CONN_PROXY)
			sk_app_tls_open(app, ac);
	}
}

size_t
sk_app_close(struct sk_app_conn *ac, size_t len)
{
	ac->state = CONN_CLOSING;
	if (ac->tls != NULL)
		sk_tls_shutdown(ac->tls); /* close_notify before the FIN */
	sk_tcp_close(ac->conn);
	return len;
}

/*
 * app_deadline - arm the request deadline @kind (DL_HEAD: the head started
 * arriving; DL_BODY: the head is complete, the body is not) unless it is
 * armed already. A slow client (slowloris) gets 408 when it passes.
 */
static void
app_deadline(struct sk_app *app, struct sk_app_conn *ac, uint8_t kind)
{
	uint32_t ms = kind == DL_HEAD ? app->head_timeout_ms : app->body_timeout_ms;

	if (ac->deadline == kind || ms == 0)
		return;
	ac->deadline = kind;
	sk_tcp_set_deadline(ac->conn, ms);
}

/* app_blocked - stop here and come back at the next pass (send space short). */
static void
app_blocked(struct sk_app *app, struct sk_app_conn *ac)
{
	app->stats.send_blocked++;
	sk_tcp_resume(ac->conn);
}

/* app_proxy - a connection before its PROXY header: the header's length once
 * taken (then CONN_OPEN), 0 while more bytes are needed, -1: refuse it. */
static long
app_proxy(struct sk_app *app, struct sk_app_conn *ac, const uint8_t *data, size_t len)
{
	struct sk_proxy_parser *pp = (struct sk_proxy_parser *)ac->route_data;
	struct sk_addr peer = app_peer(ac), client;
	uint32_t hdr_len;
	enum sk_client_verdict v =
		sk_client_proxy(&app->client, pp, &peer, data, len, &client, &hdr_len);

	if (v == SK_CLIENT_AGAIN) {
		app_deadline(app, ac, DL_HEAD);
		return 0;
	}
	sk_client_proxy_count(&app->stats.client, v);
	if (sk_client_refused(v))
		return -1;
	memset(ac->route_data, 0, sizeof(ac->route_data));
	ac->client = sk_client_id_of(&client, app->client.ip6_prefix);
	ac->state = CONN_OPEN;
	if (ac->deadline != DL_NONE) { /* HTTP arms its own */
		ac->deadline = DL_NONE;
		sk_tcp_set_deadline(ac->conn, 0);
	}
	return (long)hdr_len;
}

size_t
sk_app_http(struct sk_app *app, struct sk_app_conn *ac, const uint8_t *data, size_t len,
	    size_t used, bool *want_more)
{
	struct sk_tcp_conn *c = ac->conn;

	*want_more = false;
	for (unsigned n = 0;; n++) {
		struct sk_http_request req;
		enum sk_http_result r;

		if (sk_unlikely(n == SK_APP_PIPELINE_MAX)) {
			app->stats.pipeline_yield++;
			sk_tcp_resume(c);
			return used;
		}
		if (sk_unlikely(sk_app_send_space(ac) < SK_APP_REPLY_MAX)) {
			app_blocked(app, ac);
			return used;
		}
		r = sk_http_parse(&ac->http, data + used, len - used, &req);
		if (r == SK_HTTP_AGAIN) {
			if (len > used) /* a head has begun */
				app_deadline(app, ac, DL_HEAD);
			break;
		}
		if (r == SK_HTTP_HEAD) {
			if (req.expect_continue && !ac->continue_sent) {
				ac->continue_sent = true;
				sk_app_send(app, ac, SK_HTTP_100_CONTINUE, SK_HTTP_100_CONTINUE_LEN,
					    100);
			}
			app_deadline(app, ac, DL_BODY);
			break;
		}
		if (sk_unlikely(sk_http_result_is_error(r))) {
			const struct sk_http_canned *e = sk_http_canned_error(r);

			app->stats.parse_errors++;
			if (e != NULL)
				sk_app_send(app, ac, e->data, e->len, canned_status(e));
			return sk_app_close(ac, len);
		}
		/* SK_HTTP_DONE: a whole request, however slowly it came. */
		if (ac->deadline != DL_NONE) {
			ac->deadline = DL_NONE;
			sk_tcp_set_deadline(c, 0);
		}
		if (ac->requests == 0)
			sk_tcp_mark_used(c); /* no longer an idle newcomer to evict */
		app->head = (const char *)data + used;
		app->head_len = req.head_len;
		if (app_route(app, ac, &req) == SK_APP_PARK) {
			if (!ac->parked) {
				ac->parked = true;
				app->stats.parked++;
			}
			return used;
		}
		if (ac->parked) {
			ac->parked = false;
			app->stats.parked--;
		}
		app->stats.requests++;
		ac->requests++;
		ac->continue_sent = false;
		used += req.len;
		sk_http_parser_reset(&ac->http);
		if (!req.keep_alive)
			return sk_app_close(ac, len);
	}
	*want_more = true;
	return used;
}

/*
 * app_on_data - answer every complete request in @data, in order. Returns
 * the bytes of the requests answered; a parked or incomplete request stays
 * in the buffer. Bounded: at most SK_APP_PIPELINE_MAX requests per call.
 * A TLS connection's bytes go through sk_app_tls_data() first.
 */
static size_t
app_on_data(void *arg, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct sk_app *app = arg;
	struct sk_app_conn *ac = sk_tcp_app_data(c);
	size_t used = 0;
	bool want_more;

	if (sk_unlikely(ac->state == CONN_CLOSING))
		return len;
	if (ac->tls != NULL)
		return sk_app_tls_data(app, ac, data, len);
	if (sk_unlikely(ac->state == CONN_PROXY)) {
		long h = app_proxy(app, ac, data, len);

		if (h < 0)
			return sk_app_close(ac, len);
		if (ac->state == CONN_PROXY) /* more bytes to come, unless none will */
			return sk_tcp_peer_closed(c) ? sk_app_close(ac, len) : 0;
		used = (size_t)h;
		if (ac->tls_port) { /* the TLS records behind the header */
			sk_app_tls_open(app, ac);
			if (ac->tls == NULL) /* refused before its handshake: reset */
				return len;
			return used + sk_app_tls_data(app, ac, data + used, len - used);
		}
	}
	used = sk_app_http(app, ac, data, len, used, &want_more);
	if (want_more && sk_tcp_peer_closed(c))
		return sk_app_close(ac, len);
	return used;
}

static void
app_on_close(void *arg, struct sk_tcp_conn *c)
{
	struct sk_app *app = arg;
	struct sk_app_conn *ac = sk_tcp_app_data(c);

	conn_list_del(app, ac);
	if (ac->parked)
		app->stats.parked--;
	if (ac->tls != NULL)
		sk_tls_release(ac->tls);
	sk_app_sse_closed(app, ac);
	/* Its FIFO entry, if any, is now stale; a reused area starts zeroed. */
	((struct park_state *)ac->route_data)->order = 0;
	app->stats.conns_closed++;
	app->stats.conns_open--;
}

/* app_on_timeout - a request head or body was not complete in time: 408, close. */
static void
app_on_timeout(void *arg, struct sk_tcp_conn *c)
{
	struct sk_app *app = arg;
	struct sk_app_conn *ac = sk_tcp_app_data(c);

	if (ac->deadline == DL_HANDSHAKE) { /* the TLS handshake did not finish in time */
		ac->deadline = DL_NONE;
		sk_tls_expired(ac->tls);
		sk_tcp_abort(c);
		return;
	}
	ac->deadline = DL_NONE;
	if (ac->state == CONN_CLOSING || ac->state == CONN_PROXY) { /* no HTTP yet: no 408 */
		sk_tcp_abort(c);
		return;
	}
	app->stats.request_timeout++;
	sk_app_send(app, ac, resp_408, sizeof(resp_408) - 1, 408);
	sk_app_close(ac, 0);
}

static const struct sk_net_app_ops app_ops = {
	.on_open = app_on_open,
	.on_data = app_on_data,
	.on_close = app_on_close,
	.on_timeout = app_on_timeout,
};

const struct sk_net_app_ops *
sk_app_ops(void)
{
	return &app_ops;
}

/* ------------------------------------------------------------------------ */
/* Clock and life cycle                                                      */
/* ------------------------------------------------------------------------ */

/* clock_sync - read the wall clock (vDSO: no system call with a TSC
 * clocksource) and remember the TSC it goes with. */
static void
clock_sync(struct sk_app *app, uint64_t now_tsc)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	app->clock_tsc = now_tsc;
	app->clock_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	app->now_tsc = now_tsc;
	app->now_ns = app->clock_ns;
}

/* app_stats_init - count in @ls: publish the status code of every slot. */
static void
app_stats_init(struct sk_app *app, struct sk_shm_lcore_stats *ls)
{
	app->ls = ls;
	for (unsigned k = 0; k < SK_APP_STATUS_SLOTS; k++)
		__atomic_store_n(&ls->http_code[k], status_codes[k], __ATOMIC_RELAXED);
	__atomic_store_n(&ls->http_slots, SK_APP_STATUS_SLOTS, __ATOMIC_RELEASE);
}

struct sk_app *
sk_app_create(const struct sk_app_conf *conf)
{
	struct sk_http_parser probe;
	struct sk_app *app;

	if (conf == NULL || sk_http_parser_init(&probe, &conf->limits) != 0 ||
	    (conf->client != NULL && (conf->client->proxy > 2 || conf->client->forwarded > 2))) {
		rte_errno = EINVAL;
		return NULL;
	}
	app = rte_zmalloc_socket("sk_app", sizeof(*app), RTE_CACHE_LINE_SIZE, conf->socket);
	if (app == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	app->limits = conf->limits;
	app->head_timeout_ms = conf->head_timeout_ms;
	app->body_timeout_ms = conf->body_timeout_ms;
	app->lcore_id = conf->lcore_id;
	app->seckill = conf->seckill;
	if (conf->client != NULL)
		app->client = *conf->client;
	app->tls = conf->tls;
	app->tls_port = conf->tls_port;
	app->plain_redirect = conf->plain_redirect && conf->tls != NULL;
	app->tsc_hz = rte_get_tsc_hz();
	/* (1e9 << 32) fits 64 bits; the product is taken in 128 (buy_timed). */
	app->ns_mult = (UINT64_C(1000000000) << 32) / app->tsc_hz;
	app_stats_init(app, conf->seckill != NULL ? conf->seckill->astats : &app->own_ls);
	if (conf->ack_durable && conf->seckill != NULL) {
		if (conf->park_slots == 0 || conf->ack_wait_ms == 0) {
			rte_free(app);
			rte_errno = EINVAL;
			return NULL;
		}
		app->parks = rte_zmalloc_socket("sk_app_parks",
						(size_t)conf->park_slots * sizeof(*app->parks),
						RTE_CACHE_LINE_SIZE, conf->socket);
		if (app->parks == NULL) {
			rte_free(app);
			rte_errno = ENOMEM;
			return NULL;
		}
		app->durable = true;
		app->park_cap = conf->park_slots;
		app->ack_wait_tsc = app->tsc_hz / 1000 * conf->ack_wait_ms;
	}
	if (conf->sse_max != 0 && conf->seckill != NULL) {
		int rc = sk_app_sse_create(app, conf->sse_max, conf->sse_per_user, conf->socket);

		if (rc != 0) {
			rte_free(app->parks);
			rte_free(app);
			rte_errno = -rc;
			return NULL;
		}
	}
	clock_sync(app, rte_rdtsc());
	return app;
}

void
sk_app_free(struct sk_app *app)
{
	if (app == NULL)
		return;
	rte_free(app->parks);
	rte_free(app->sse);
	rte_free(app);
}

void
sk_app_poll(struct sk_app *app, uint64_t now_tsc)
{
	uint64_t d = now_tsc - app->clock_tsc;

	/* d < tsc_hz here, so d * 1e9 fits 64 bits up to an 18 GHz TSC. */
	if (sk_unlikely(d >= app->tsc_hz || now_tsc < app->clock_tsc)) {
		clock_sync(app, now_tsc);
	} else {
		app->now_tsc = now_tsc;
		app->now_ns = app->clock_ns + (int64_t)(d * UINT64_C(1000000000) / app->tsc_hz);
	}
	if (app->park_count != 0)
		sk_app_park_poll(app);
	if (app->sse != NULL && app->sse->n != 0)
		sk_app_sse_poll(app);
	if (app->tls != NULL)
		sk_tls_lcore_poll(app->tls, now_tsc);
	/* Live settings: one load per pass; a change is applied here, between bursts. */
	if (app->seckill != NULL && sk_unlikely(sk_seckill_live_poll(app->seckill) != 0))
		sk_logfmt_set_level((enum sk_log_level)app->seckill->log_level);
}

int64_t
sk_app_now_ns(const struct sk_app *app)
{
	return app->now_ns;
}

unsigned
sk_app_abort_all(struct sk_app *app)
{
	unsigned n = 0;

	/* sk_tcp_abort() never calls on_close itself, so the list is stable. */
	for (struct sk_app_conn *ac = app->conns; ac != NULL; ac = ac->next) {
		sk_tcp_abort(ac->conn);
		n++;
	}
	app->stats.aborted += n;
	return n;
}

const struct sk_app_stats *
sk_app_stats(const struct sk_app *app)
{
	return &app->stats;
}

const struct sk_shm_lcore_stats *
sk_app_lcore_stats(const struct sk_app *app)
{
	return app->ls;
}
