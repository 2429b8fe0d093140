/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_app_impl.h - private to the app (sk_app.c, sk_app_park.c,
 * sk_app_sse.c): the app's state, the durable ack's FIFO of parked winners
 * and the order events streams. One lcore owns an
 * app: nothing here is shared between threads.
 */
#ifndef SK_APP_IMPL_H
#define SK_APP_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_app.h"
#include "sk_shm.h"
#include "sk_tls.h"

/* CONN_PROXY: a PROXY listener's connection waiting for its header. */
enum { CONN_OPEN = 0, CONN_CLOSING, CONN_PROXY };

/* Which deadline a connection has armed (sk_app_conn::deadline). */
enum { DL_NONE = 0, DL_HEAD, DL_BODY, DL_HANDSHAKE };

/*
 * A parked winner (ack = durable). The FIFO holds them in the order they
 * won, which on one lcore is also order-sequence order and park-time order:
 * the head is always the first one due.
 */
struct park_entry {
	struct sk_app_conn *ac; /* may have closed or been reused: check park_state */
	uint64_t order;		/* the order id, also in the connection's route_data */
	uint64_t tsc;		/* when it parked */
};

/* What a parked buy keeps in sk_app_conn::route_data. */
struct park_state {
	uint64_t order;	   /* 0: nothing parked by the buy route */
	uint64_t t0;	   /* TSC of the pass that took the request (its latency) */
	uint8_t due;	   /* set by sk_app_poll() when it resumes the connection */
	uint8_t settled;   /* ... because the order settled (else: the wait ran out) */
	uint8_t duplicate; /* a winner's retry: the answer says "duplicate":true */
	/* An order events stream's slot in app->sse, plus 1 (0: none;
	 * sk_app_sse.c). Written by that route only, never by the buy's. */
	uint32_t sse_slot1;
};

_Static_assert(sizeof(struct park_state) <= sizeof(((struct sk_app_conn *)0)->route_data),
	       "park_state must fit route_data");

struct sk_app {
	struct sk_app_stats stats;	  /* first: written on every request */
	struct sk_app_conn *conns;	  /* open connections (list head) */
	struct sk_seckill_lcore *seckill; /* the buy path of this lcore; NULL: none */
	uint64_t now_tsc;		  /* TSC of the current pass */
	int64_t now_ns;			  /* wall clock of the current pass */
	uint64_t clock_tsc;		  /* TSC of the last clock_gettime() ... */
	int64_t clock_ns;		  /* ... and what it said */
	uint64_t tsc_hz;
	uint64_t ns_mult;	       /* ns = TSC cycles * ns_mult >> 32 */
	struct sk_shm_lcore_stats *ls; /* responses by status, buy latency */
	struct sk_http_limits limits;
	uint32_t head_timeout_ms; /* request deadlines (0: none) */
	uint32_t body_timeout_ms;
	unsigned lcore_id;
	struct sk_client_conf client; /* PROXY / forwarded header (zero: neither) */
	struct sk_tls_lcore *tls;     /* the HTTPS listener's TLS; NULL: none */
	uint16_t tls_port;	      /* its port */
	bool plain_redirect;	      /* the plain port answers 308 to https */
	const char *head;	      /* the head of the request being routed ... */
	size_t head_len;	      /* ... for the forwarded header */
	/* ack = durable: the FIFO of parked winners (a ring of park_cap). */
	bool durable;
	uint64_t ack_wait_tsc;	  /* longest park */
	struct park_entry *parks; /* rte_zmalloc'd, park_cap entries; NULL: ack = queued */
	uint32_t park_cap, park_head, park_count;
	struct sk_sse_table *sse;	  /* order events streams; rte_zmalloc'd; NULL: none */
	uint64_t sse_due_tsc;		  /* the streams' next scan (sk_app_sse_poll()) */
	uint64_t sse_every_tsc;		  /* ... at most once per SK_APP_SSE_SCAN_US */
	char reply[SK_APP_REPLY_MAX];	  /* scratch for sk_app_reply() */
	struct sk_shm_lcore_stats own_ls; /* ls without a seckill lcore (no arena) */
} sk_cache_aligned;

/**
 * sk_app_send - queue @p len bytes of a response with status @p status on
 * @p ac (through TLS on a TLS connection), counted.
 * @return 0, or the error of sk_tcp_send() / sk_tls_send() (counted).
 */
int sk_app_send(struct sk_app *app, struct sk_app_conn *ac, const void *data, size_t len,
		unsigned status);

/** sk_app_send_space - the bytes a response may have on @p ac now. */
static inline size_t
sk_app_send_space(const struct sk_app_conn *ac)
{
	return ac->tls != NULL ? sk_tls_send_space(ac->tls) : sk_tcp_send_space(ac->conn);
}

/** sk_app_close - stop reading @p ac: close_notify (TLS), then FIN after
 * the queued responses. Returns @p len (what on_data consumes). */
size_t sk_app_close(struct sk_app_conn *ac, size_t len);

/**
 * sk_app_http - answer every complete request in @p data from offset
 * @p used on, in order; the offset after the requests answered. Sets
 * *@p want_more when it stopped for lack of bytes (not parked, not
 * yielded, not closing). Bounded by SK_APP_PIPELINE_MAX requests.
 */
size_t sk_app_http(struct sk_app *app, struct sk_app_conn *ac, const uint8_t *data, size_t len,
		   size_t used, bool *want_more);

/**
 * sk_app_tls_open - on_open of a connection to the HTTPS port: the per-IP
 * limiter, the handshake cap, the handshake deadline (sk_app_tls.c).
 * Resets the connection when one of them refuses.
 */
void sk_app_tls_open(struct sk_app *app, struct sk_app_conn *ac);

/** sk_app_tls_data - on_data of a TLS connection: records in, requests
 * answered, the ciphertext consumed returned. */
size_t sk_app_tls_data(struct sk_app *app, struct sk_app_conn *ac, const uint8_t *data, size_t len);

/**
 * sk_app_redirect - the plain port's answer when TLS takes the requests:
 * 308 to the https:// URL of the same host and target (400 without a Host).
 */
void sk_app_redirect(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req);

/**
 * sk_app_park_push - put the winner of @p order on @p ac at the FIFO's
 * tail, its state in ac->route_data (struct park_state).
 * @return false if the FIFO is full (nothing changed).
 */
bool sk_app_park_push(struct sk_app *app, struct sk_app_conn *ac, uint64_t order, bool duplicate);

/**
 * sk_app_park_poll - resume the parked winners that are due (settled, or
 * their wait ran out); bounded by the FIFO's length.
 */
void sk_app_park_poll(struct sk_app *app);

/**
 * sk_app_seckill_reply - send the seckill answer @p r (canned in the
 * connection's variant, or status + JSON body + Retry-After).
 */
void sk_app_seckill_reply(struct sk_app *app, struct sk_app_conn *ac,
			  const struct sk_http_request *req, const struct sk_seckill_reply *r);

/** sk_app_client - the client of the request on @p ac ("Client address" in sk_app.h). */
struct sk_client_id sk_app_client(struct sk_app *app, struct sk_app_conn *ac);

/**
 * sk_app_sse_create - the table of @p max order events streams, @p per_user
 * of one user (sk_app_sse.c), counted in app->stats.sse.
 * @return 0 or -ENOMEM, -EINVAL.
 */
int sk_app_sse_create(struct sk_app *app, uint32_t max, uint32_t per_user, int socket);

/**
 * sk_app_sse_route - GET /v1/orders/{id}/events (@p arg: "{id}"): the
 * checks of sk_seckill_follow(), the caps, then 200 text/event-stream with
 * the order's status now; the connection stays parked (SK_APP_PARK) until
 * the stream ends: a final status, or the peer's FIN.
 */
enum sk_app_verdict sk_app_sse_route(struct sk_app *app, struct sk_app_conn *ac,
				     const struct sk_http_request *req, const char *arg,
				     size_t arg_len);

/**
 * The streams are scanned at most once per this many microseconds: a
 * status change is news on a human scale, and each scan reads the status
 * windows the selling lcores write on every buy (a cache line moved
 * between cores per read), so scanning on every pass of a busy lcore
 * would tax every buy of the appliance. 64 streams per 100 us: 100k
 * streams in about 0.16 s.
 */
#define SK_APP_SSE_SCAN_US 100

/**
 * sk_app_sse_poll - push what a bounded slice of the open streams
 * (SK_SSE_SCAN_MAX) has due: a status change, a final status (then
 * close), a keep-alive comment. Does nothing before the scan is due
 * (SK_APP_SSE_SCAN_US after the last one).
 */
void sk_app_sse_poll(struct sk_app *app);

/** sk_app_sse_closed - on_close of @p ac: free its stream, if it has one. */
void sk_app_sse_closed(struct sk_app *app, struct sk_app_conn *ac);

#endif /* SK_APP_IMPL_H */
