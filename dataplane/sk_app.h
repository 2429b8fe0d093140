/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The application glue of one lcore: TCP callbacks (sk_net_app_ops) ->
 * HTTP parser -> route table -> response, with keep-alive, pipelining,
 * HTTP/1.0, "Expect: 100-continue" and parking.
 *
 * Routes
 * ------
 * The route table is an array of struct sk_app_route in sk_app.c, matched
 * in order against the request path (the target before '?'): an exact
 * route matches the whole path, a prefix route matches a path that starts
 * with its text and passes the rest as @c arg ("/v1/items/" + "42"). A path
 * that matches no route gets 404; a path whose routes all refuse the method
 * gets 405. The routes (docs/api.md):
 *
 *   GET|HEAD /healthz            200 {"status":"ok"}
 *   POST     /v1/seckill/{item}  sk_seckill_buy()
 *   POST     /v1/cart            sk_cart_buy() (dataplane/seckill/sk_cart.h)
 *   GET|HEAD /v1/orders/{id}     sk_seckill_order()
 *   GET      /v1/orders/{id}/events  the order's events stream (sk_app_sse.c)
 *   GET|HEAD /v1/items/{item}    sk_seckill_item()
 *
 * The seckill answers (struct sk_seckill_reply) go out either as a canned
 * response in the connection's variant or as status + JSON body +
 * Retry-After through sk_app_reply().
 *
 * Clock
 * -----
 * Handlers read the time from the app, never from the system: sk_app_poll(),
 * called at the start of every poll pass, sets the pass's TSC and derives the
 * wall clock from it (ns = base + TSC delta / hz), re-reading
 * clock_gettime(CLOCK_REALTIME) (a vDSO call) once a second per lcore, so
 * NTP corrections are followed within a second and no request pays a
 * system call.
 *
 * Winners and ack = durable
 * -------------------------
 * With ack = queued a winner gets 202 {"status":"queued","order":"<id>"} at
 * once. With ack = durable (sk_app_conf::ack_durable) route_buy parks the
 * winner's connection (and a retry's whose order of this run is queued) (SK_APP_PARK) and appends
 * {connection, order id, park TSC} to a per-lcore FIFO (a fixed ring of sk_app_conf::park_slots
 * entries); the order id also goes into the connection's route_data.
 * sk_app_poll() pops the FIFO head while its order sequence is below
 * sk_shm_settled() (the control plane's "every order below this sequence is
 * settled") or its ack_wait_ms ran out, and sk_tcp_resume()s it. On one
 * lcore sequences and park times both grow along the FIFO, so nothing is
 * scanned: one comparison per pass when nothing is due. The handler, called
 * again with ac->parked, answers sk_seckill_settled_reply(): 200 confirmed,
 * 202 queued (wait over) or 503 failed. An entry whose connection closed or
 * was reused (route_data no longer holds its order id) is dropped. When the
 * FIFO is full (more parked winners than slots: only with connections
 * closed and reused within the wait) the winner is answered at once from
 * the status table (counted durable_park_full).
 *
 * A handler answers with sk_app_reply() or sk_app_reply_canned() and
 * returns SK_APP_DONE; or it returns SK_APP_PARK without answering to keep
 * the request (and every pipelined request behind it) waiting, e.g. for the
 * group commit of an order. The request's bytes stay in the TCP receive
 * buffer; the parser keeps its DONE result. Later, sk_tcp_resume() on the
 * connection makes the stack call on_data again: the handler is called
 * again for the same request with sk_app_conn::parked set, and answers or
 * parks again. A parked connection costs nothing per poll pass; whoever
 * parks it must resume it (and may keep its own state in
 * sk_app_conn::route_data).
 *
 * Every handler call is guaranteed SK_APP_REPLY_MAX bytes of TCP send
 * space, so one reply never fails for lack of room and a handler with side
 * effects (a buy) never has to be repeated. When the space is short,
 * processing stops and resumes at the next poll pass.
 *
 * Client address
 * --------------
 * The client of a buy (its per-IP rate limit key and its order record's
 * address) is the TCP peer, whose keys are taken once when the connection
 * opens (sk_app_conn::client), unless sk_app_conf::client says otherwise
 * (sk_client.h):
 *   - PROXY listener: a connection starts in the PROXY state; its bytes go
 *     to sk_client_proxy() (the parser's 8 bytes in route_data) until a
 *     verdict. A refusal closes the connection (counted proxy_*); else the
 *     header's bytes are consumed, the client is kept in
 *     sk_app_conn::client for every request of the connection, and HTTP
 *     starts on the bytes behind the header (on the HTTPS port TLS does,
 *     admitted by the per-IP limit of that client). The header must complete
 *     within head_timeout_ms, else the connection is reset.
 *   - forwarded header: route_buy reads the request head's X-Forwarded-For
 *     or Forwarded lines (sk_client_forwarded(); the peer is the PROXY
 *     client when both are on) and counts forwarded_*. With both on, an
 *     IPv6 PROXY client is kept by its keys only, so its forwarded header
 *     is not read (the IPv6 client is the client).
 *
 * Counters
 * --------
 * struct sk_app_stats (sk_app_stats()) holds the app's private counters.
 * Responses by HTTP status and the buy latency histogram live in the
 * lcore's stats block of the arena (struct sk_shm_lcore_stats,
 * sk_app_lcore_stats()), where the control plane reads them for /metrics;
 * without a seckill lcore (no arena) the block is the app's own. A buy's
 * latency runs from the TSC of the poll pass that handled its request (the
 * pass's RX burst) to the moment its answer was written to the connection
 * (rte_rdtsc()); for a parked winner that is when its parked answer (200
 * confirmed, 202 queued, 503 failed) is written. Only the answers of POST
 * /v1/seckill/{item} and POST /v1/cart are timed.
 *
 * Thread-safety: one struct sk_app per lcore, used only by that lcore (its
 * callbacks run inside that lcore's sk_net_* calls). sk_app_stats() and
 * sk_app_lcore_stats() may be read from any thread.
 */
#ifndef SK_APP_H
#define SK_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_client.h"
#include "sk_common.h"
#include "sk_http.h"
#include "sk_net.h"
#include "sk_seckill.h"
#include "sk_sse_table.h"
#include "sk_tls.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sk_app;

/** Largest reply a handler may send (head + body); send space reserved. */
#define SK_APP_REPLY_MAX 1024

/** Most requests answered in one on_data call (the rest: next pass). */
#define SK_APP_PIPELINE_MAX 64

/** HTTP statuses counted one by one; everything else is "other". */
/* clang-format off */
#define SK_APP_STATUS_LIST(X) \
	X(100) \
	X(200) \
	X(202) \
	X(308) \
	X(400) \
	X(401) \
	X(403) \
	X(404) \
	X(405) \
	X(408) \
	X(409) \
	X(410) \
	X(411) \
	X(413) \
	X(414) \
	X(425) \
	X(429) \
	X(431) \
	X(500) \
	X(501) \
	X(503) \
	X(505)
/* clang-format on */

enum sk_app_status_slot {
#define SK_APP_SLOT(code) SK_APP_S##code,
	SK_APP_STATUS_LIST(SK_APP_SLOT)
#undef SK_APP_SLOT
		SK_APP_S_OTHER,
	SK_APP_STATUS_SLOTS
};

/** sk_app_status_code - the HTTP status of slot @p slot (0 for "other"). */
uint16_t sk_app_status_code(unsigned slot);

/**
 * Counters of one lcore's app; monotonic unless marked gauge. Responses by
 * status: sk_app_lcore_stats()->http_status[slot].
 */
struct sk_app_stats {
	uint64_t requests;	  /**< requests answered (complete ones) */
	uint64_t responses;	  /**< responses sent, 100 Continue included */
	uint64_t parse_errors;	  /**< requests refused by the parser */
	uint64_t conns_opened;	  /**< on_open calls */
	uint64_t conns_closed;	  /**< on_close calls */
	uint64_t conns_open;	  /**< gauge: open connections */
	uint64_t parked;	  /**< gauge: connections parked now */
	uint64_t send_blocked;	  /**< on_data stopped: send space short */
	uint64_t send_errors;	  /**< sk_tcp_send() failures (should stay 0) */
	uint64_t pipeline_yield;  /**< on_data stopped after SK_APP_PIPELINE_MAX */
	uint64_t request_timeout; /**< 408: a request head or body not complete in time */
	uint64_t aborted;	  /**< connections reset at shutdown */
	uint64_t redirects;	  /**< 308 answers of the plain port (tls.plain = redirect) */
	/* ack = durable */
	uint64_t durable_parked;       /**< winners parked for the group commit */
	uint64_t durable_settled;      /**< ... answered because their order settled */
	uint64_t durable_timeout;      /**< ... answered because ack_wait_ms ran out */
	uint64_t durable_200;	       /**< ... of those, answered 200 confirmed */
	uint64_t durable_stale;	       /**< FIFO entries dropped: connection gone */
	uint64_t durable_park_full;    /**< winners answered at once: FIFO full */
	struct sk_client_stats client; /**< the client behind a proxy ("Client address") */
	struct sk_sse_stats sse;       /**< order events streams (sk_app_sse.c) */
} sk_cache_aligned;

/**
 * The per-connection app state, in the connection's app area
 * (sk_tcp_app_data()); zeroed by the stack before on_open.
 */
struct sk_app_conn {
	struct sk_http_parser http;	 /**< request parser (one cache line) */
	struct sk_tcp_conn *conn;	 /**< the connection this area belongs to */
	struct sk_app_conn *prev, *next; /**< list of open connections of the lcore */
	uint32_t requests;		 /**< requests answered on this connection */
	uint8_t state;			 /**< private: open / closing */
	bool parked;			 /**< a handler parked the current request */
	bool continue_sent;		 /**< 100 Continue sent for the current request */
	uint8_t deadline;		 /**< private: the request deadline armed (head/body) */
	bool tls_port; /**< private: to the HTTPS port (TLS after any PROXY header) */
	uint8_t route_data[24]
		__attribute__((aligned(8))); /**< for the handler that parks;
						  before a PROXY header: its parser */
	struct sk_client_id
		client; /**< the connection's client keys: its peer's, or the PROXY header's */
	struct sk_tls_conn *tls; /**< a connection to the HTTPS port: its TLS, in the app
				      area behind this struct (SK_APP_CONN_TLS_AREA); else NULL */
};

/** The app area a connection needs when TLS is on: sk_app_conn, then its TLS. */
#define SK_APP_CONN_TLS_OFF  ((sizeof(struct sk_app_conn) + 63) & ~(size_t)63)
#define SK_APP_CONN_TLS_AREA (SK_APP_CONN_TLS_OFF + sizeof(struct sk_tls_conn))

/* Above SK_TCP_APP_DATA_MIN since the client holds an IPv6 address: the
 * dataplane's config raises app_data_size to fit (sk_dp_config.c); the
 * default area (256 B) holds it as it is. */
_Static_assert(sizeof(struct sk_app_conn) <= 256, "sk_app_conn must fit the default app area");

/** What a route handler did with a request. */
enum sk_app_verdict {
	SK_APP_DONE = 0, /**< answered (sk_app_reply*()); consume the request */
	SK_APP_PARK,	 /**< not answered yet; call me again after sk_tcp_resume() */
};

/**
 * A route handler.
 * @param app  the lcore's app
 * @param ac   the connection (ac->parked: this is a call after a resume)
 * @param req  the request (pointers valid during the call only)
 * @param arg  for prefix routes, the path after the prefix (not NUL-terminated)
 * @param arg_len  bytes of @p arg
 */
typedef enum sk_app_verdict (*sk_app_handler_fn)(struct sk_app *app, struct sk_app_conn *ac,
						 const struct sk_http_request *req, const char *arg,
						 size_t arg_len);

/** One row of the route table. */
struct sk_app_route {
	const char *path;     /**< exact path, or prefix when @c prefix */
	uint16_t path_len;    /**< strlen(path) */
	bool prefix;	      /**< match paths starting with @c path; rest is the arg */
	uint8_t methods;      /**< bit (1 << enum sk_http_method) per allowed method */
	sk_app_handler_fn fn; /**< the handler */
};

/** Settings of an lcore's app. */
struct sk_app_conf {
	struct sk_http_limits limits;	  /**< parser limits (zero: defaults) */
	unsigned lcore_id;		  /**< for logs */
	int socket;			  /**< NUMA socket for the allocation */
	struct sk_seckill_lcore *seckill; /**< the lcore's buy path, not owned; NULL: the
					       seckill routes answer 404 */
	bool ack_durable;		  /**< park winners until their order settled */
	uint32_t ack_wait_ms;		  /**< ack_durable: longest park, then 202 (> 0) */
	uint32_t park_slots;		  /**< ack_durable: FIFO entries (> 0), e.g. the
					       lcore's connections (max_conns x ports) */
	uint32_t sse_max;	  /**< open order events streams at most (0: the route answers 404;
				       needs @c seckill) */
	uint32_t sse_per_user;	  /**< ... of one user (>= 1 when sse_max > 0) */
	uint32_t head_timeout_ms; /**< a request head must be complete this long after its
				       first bytes arrived, else 408 and close; 0 = no limit */
	uint32_t body_timeout_ms; /**< ... and its body this long after the head; 0 = none */
	const struct sk_client_conf *client; /**< PROXY header, forwarded header and the
						  proxies trusted (copied); NULL: neither */
	struct sk_tls_lcore *tls;	     /**< TLS of the HTTPS port, not owned; NULL: no HTTPS.
						  The stack's app areas must then hold
						  SK_APP_CONN_TLS_AREA bytes */
	uint16_t tls_port;		     /**< the HTTPS port: connections to it speak TLS */
	bool plain_redirect;		     /**< every request on another port gets 308 to https */
};

/**
 * sk_app_create - the app of one lcore.
 * @param conf  settings; conf->seckill must outlive the app
 * @return the app, or NULL with rte_errno = EINVAL (limits out of range;
 *   ack_durable with park_slots or ack_wait_ms 0; sse_max above 2^24 or
 *   sse_per_user 0 with sse_max set; a client proxy or
 *   forwarded value above 2) or ENOMEM.
 */
struct sk_app *sk_app_create(const struct sk_app_conf *conf);

/** sk_app_free - free @p app (NULL: no-op). Its connections must be gone. */
void sk_app_free(struct sk_app *app);

/** sk_app_ops - the callbacks to give sk_net_lcore_create() with @c app. */
const struct sk_net_app_ops *sk_app_ops(void);

/**
 * sk_app_poll - at the start of every poll pass: sets the app's clock for
 * the requests of the pass (see "Clock") and does the time-driven work
 * (parked winners, with ack = durable). Cheap when there is nothing to do:
 * one division, and one clock_gettime() (vDSO) a second.
 * @param app      the lcore's app
 * @param now_tsc  rte_rdtsc() at the start of the pass
 */
void sk_app_poll(struct sk_app *app, uint64_t now_tsc);

/**
 * sk_app_now_ns - the wall clock of the current pass, ns since the epoch
 * (what the handlers use).
 */
int64_t sk_app_now_ns(const struct sk_app *app);

/**
 * sk_app_abort_all - reset (RST) every open connection of the lcore, at
 * shutdown. The on_close calls follow from the next sk_net_tx_flush().
 * @return the number of connections reset.
 */
unsigned sk_app_abort_all(struct sk_app *app);

/**
 * sk_app_reply - write response @p r for @p req on @p ac (status counted,
 * connection handling taken from @p req unless @p r->conn says close).
 * @return 0, -ENOSPC if the response is larger than SK_APP_REPLY_MAX,
 *   -EINVAL from sk_http_response_write(), or an error of sk_tcp_send().
 */
int sk_app_reply(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req,
		 struct sk_http_response *r);

/**
 * sk_app_reply_canned - send canned response @p id for @p req (HEAD gets
 * the head only).
 * @return 0, -EINVAL for a bad @p id, or an error of sk_tcp_send().
 */
int sk_app_reply_canned(struct sk_app *app, struct sk_app_conn *ac,
			const struct sk_http_request *req, enum sk_http_canned_id id);

/** sk_app_stats - counters of @p app; valid until sk_app_free(). */
const struct sk_app_stats *sk_app_stats(const struct sk_app *app);

/**
 * sk_app_lcore_stats - the stats block @p app counts responses by status
 * (slot k of enum sk_app_status_slot: http_status[k], http_code[k]) and buy
 * latencies in: the arena's block of its seckill lcore, or the app's own
 * (valid until sk_app_free()). Read its fields with sk_shm_stat_read().
 */
const struct sk_shm_lcore_stats *sk_app_lcore_stats(const struct sk_app *app);

#ifdef __cplusplus
}
#endif

#endif /* SK_APP_H */
