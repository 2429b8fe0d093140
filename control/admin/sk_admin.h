/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's admin REST API and Prometheus endpoint, served with
 * libmicrohttpd on a unix socket (by default SK_ADMIN_SOCKET_DEFAULT) and/or
 * 127.0.0.1:port.
 *
 * Access (docs/control.md "Access"):
 *  - the unix socket is created with mode 0600 (under a umask, never
 *    chmod'ed after bind): only its owner (and root) may connect, and a
 *    request there needs nothing more;
 *  - TCP needs a bearer token, read at start from a token file (see
 *    sk_admin_start()): every request but GET/HEAD of /healthz, /metrics
 *    and the dashboard's static files (/dashboard...) must carry
 *    "Authorization: Bearer <token>", or is answered 401 with
 *    WWW-Authenticate: Bearer and {"error":...}, counted in
 *    seckill_admin_unauthorized_total and logged (event=admin_auth, at
 *    most once per 10 s per listener; never the token).
 *    /metrics carries aggregate counters only, and is open so that a
 *    scraper needs no credential that could also pay or refund.
 *
 *   GET  /healthz                 200 "ok"
 *   GET  /metrics                 Prometheus text format 0.0.4
 *   GET  /v1/orders?item=I&user=U | ?item=I&state=S [&limit=N&after=ID]
 *                                 orders of an item by buyer or by state,
 *                                 ascending ids, a page at a time
 *   GET  /v1/orders/{id}          the order from the store (every line,
 *                                 state, deadline); a queued or failed order
 *                                 from the status table
 *   POST /v1/orders/{id}/pay      200 paid (also when already paid), 409
 *                                 cancelled / failed / queued, 404 unknown
 *   GET  /v1/items                every item: arena counters + store ledger
 *   GET  /v1/items/{id}           one item
 *   GET  /v1/activities           every item that has an activity (sale)
 *   POST /v1/activities           create one (JSON body); 201, 200 when
 *                                 the same exists, 409 another, 507 no room
 *   GET  /v1/activities/{id}      one
 *   POST /v1/activities/{id}/close    close it for good
 *   POST /v1/activities/{id}/restock  {"units":N,"restock_id":R}
 *   POST /v1/activities/{id}/remove   {"units":N,"request_id":R}: unsold units
 *                                     back, once per id; 409 when fewer are unsold
 *   POST /v1/activities/{id}/pause    buys answered 503 "paused" until /resume
 *   POST /v1/activities/{id}/resume
 *   POST /v1/activities/{id}/extend   {"end_ns":N|null}: a later end
 *   GET  /v1/activities/{id}/reservations  {"item":ID,"reserved":N}
 *   POST /v1/activities/{id}/reservations  text/plain: one user id per line
 *   GET  /dashboard               the live dashboard (HTML; its files at
 *                                 /dashboard/NAME), docs/dashboard.md
 *
 * Bodies are JSON; docs/control.md lists every field and status. 64-bit
 * ids (orders, users) are JSON strings of their decimal digits.
 *
 * A browser on the host can reach 127.0.0.1 too, so before any route every
 * request passes sk_admin_guard(): Host a loopback name, no foreign Origin,
 * and application/json for POST (no form can send it without a CORS
 * preflight, which is never granted).
 *
 * Threading: one libmicrohttpd thread per listener serves requests one at
 * a time. It reads the arena (atomics) and the store (read transactions)
 * freely and writes only through sk_control_pay() and the activity calls
 * (sk_activity.h), which take the control handle's write mutex (see sk_control.h), so it never runs
 * an LMDB write transaction beside the drain's in an unsafe way.
 */
#ifndef SK_ADMIN_H
#define SK_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_control.h"
#include "sk_prom.h"

/** The port docs and examples use for TCP (on 127.0.0.1); TCP is off unless asked for. */
#define SK_ADMIN_PORT_DEFAULT 8081
/** Default unix socket of the admin API (systemd: RuntimeDirectory=seckill). */
#define SK_ADMIN_SOCKET_DEFAULT "/run/seckill/admin.sock"
/** Shortest and longest bearer token of the token file, bytes. */
#define SK_ADMIN_TOKEN_MIN 16
#define SK_ADMIN_TOKEN_MAX 512
/** Default wait of a pay call for a still-queued order, ms. */
#define SK_ADMIN_PAY_WAIT_MS_DEFAULT 100

/** Parameters of sk_admin_start(). */
struct sk_admin_conf {
	bool tcp;		 /**< listen on 127.0.0.1:@c port */
	uint16_t port;		 /**< TCP port; 0 = any free port (see sk_admin_port()) */
	const char *token_file;	 /**< the bearer token of TCP; required with @c tcp */
	const char *socket_path; /**< unix socket to create (mode 0600); NULL = none */
	unsigned pay_wait_ms;	 /**< wait for a queued order to commit; 0 = default */
};

/** A running admin server. Opaque. */
struct sk_admin;

/**
 * sk_admin_start - start serving the admin API of @p ctl.
 *
 * A stale unix socket at @p conf->socket_path (nobody accepting on it) is
 * replaced; a live one is an error. The socket is bound under umask 0177,
 * so it never exists with a wider mode than 0600 (the umask is the
 * process's: a file another thread creates in that instant gets a
 * narrower mode, never a wider one).
 *
 * TCP needs @p conf->token_file: a regular file owned by this user or
 * root, with no permission bit for group or others (0600 or 0400), holding
 * one token of SK_ADMIN_TOKEN_MIN..SK_ADMIN_TOKEN_MAX characters of
 * [A-Za-z0-9-._~+/] then '=' only (RFC 6750's b64token), and one line end
 * at most. It is read once: a new token takes a restart.
 *
 * @param[out] out     the server; set only on success
 * @param[in]  ctl     the control plane; must outlive the server
 * @param[in]  conf    listeners (at least one)
 * @param[out] err     on error, a one-line description; may be NULL
 * @param[in]  errlen  bytes at @p err
 * @return 0, -EINVAL (no listener, socket path too long, TCP without a
 *         token file, a token file that is not a regular file or holds no
 *         valid token), -EPERM (the token file is open to group or others,
 *         or owned by another user), -EADDRINUSE (the port or socket is
 *         taken), -EEXIST (@p socket_path exists and is not a socket),
 *         -ENOMEM, or another negative errno of open(2)/read(2) of the token
 *         file or of socket(2)/bind(2).
 */
int sk_admin_start(struct sk_admin **out, struct sk_control *ctl, const struct sk_admin_conf *conf,
		   char *err, size_t errlen);

/**
 * sk_admin_unauthorized - requests answered 401 on TCP so far (what
 * seckill_admin_unauthorized_total of /metrics shows). Thread-safe.
 */
uint64_t sk_admin_unauthorized(const struct sk_admin *a);

/** The admin API's metrics table: what its /metrics appends to sk_control_metrics(). */
extern const struct sk_prom_table sk_admin_table;

/** sk_admin_port - the TCP port listened on, 0 if none. */
uint16_t sk_admin_port(const struct sk_admin *a);

/**
 * sk_admin_stop - stop the listeners (waiting for the request in progress),
 * remove the unix socket, free @p a. NULL is ignored.
 */
void sk_admin_stop(struct sk_admin *a);

/**
 * sk_admin_guard - whether a request may reach the routes, from its method
 * and headers; the server runs it on every request before reading its body,
 * and answers a refusal with the status returned and {"error":@p why}.
 *
 * The rules, in this order:
 *  1. Host is 127.0.0.1, localhost or [::1] (ASCII case-insensitive), with
 *     an optional port 1..65535 (any: the API may be reached through a
 *     tunnel); otherwise, or without Host, 421 Misdirected Request. Against
 *     DNS rebinding, where the Host is the attacker's name.
 *  2. Origin, when present, is "http://" followed by the Host exactly
 *     (case-insensitive): the API's own origin; otherwise ("null" included)
 *     403. Browsers name the page's origin on every POST and on
 *     cross-origin requests; curl, seckillctl and Prometheus send none.
 *  3. POST, PUT, PATCH and DELETE carry Content-Type application/json
 *     (parameters such as "; charset=utf-8" allowed), also without a body;
 *     otherwise 415. A form or a fetch without preflight cannot. One
 *     exception: a POST to /v1/activities/{id}/reservations may carry
 *     text/plain (its body is a list of ids) when it has no Origin at all -
 *     every current browser names one on a POST, curl and seckillctl none.
 *
 * @param method        request method
 * @param url           the request's path
 * @param host          the Host header; NULL if absent
 * @param origin        the Origin header; NULL if absent
 * @param content_type  the Content-Type header; NULL if absent
 * @param[out] why      on refusal, a static one-line reason
 * @return 0 to serve the request, else 421, 403 or 415. Thread-safe.
 */
unsigned sk_admin_guard(const char *method, const char *url, const char *host, const char *origin,
			const char *content_type, const char **why);

/** An answer of sk_admin_handle(). */
struct sk_admin_reply {
	unsigned status;	  /**< HTTP status */
	const char *content_type; /**< static string */
	char *body;		  /**< malloc'd, NUL-terminated; the caller frees it */
	size_t len;		  /**< bytes of @c body (NUL excluded) */
	const char *allow;	  /**< Allow header for 405; NULL otherwise */
	unsigned retry_after;	  /**< Retry-After seconds; 0 = none */
	/** Cache-Control (static); NULL = "no-store". */
	const char *cache_control;
	/** More headers (static): name, value, name, value, ..., NULL; NULL = none. */
	const char *const *headers;
};

/** Largest request body the server takes (413 beyond). */
#define SK_ADMIN_BODY_MAX 16384
/** Longest path, and longest query string, of a request, bytes (414 beyond). */
#define SK_ADMIN_QUERY_MAX 512

/**
 * sk_admin_handle - answer one request without any HTTP: what the server
 * runs for each request that sk_admin_guard() let through, exposed for
 * tests.
 * @param ctl          the control plane
 * @param method       "GET", "HEAD", "POST", ...
 * @param path         the request target: the path, then "?" and the query
 *                     string (percent-encoded; read by the routes that take
 *                     one, GET /v1/orders, ignored by the others)
 * @param body         the request body (JSON for the POSTs that take one);
 *                     need not be NUL-terminated; NULL if none. Not kept.
 * @param body_len     bytes at @p body
 * @param pay_wait_ms  wait of a pay for a queued order
 * @param r            [out] the reply; r->body must be freed on success
 * @return 0, or -ENOMEM (nothing to free).
 */
int sk_admin_handle(struct sk_control *ctl, const char *method, const char *path, const char *body,
		    size_t body_len, unsigned pay_wait_ms, struct sk_admin_reply *r);

#endif /* SK_ADMIN_H */
