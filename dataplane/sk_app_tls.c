/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_app_tls.c - the app's HTTPS side: a connection to the TLS port is
 * admitted (per-IP limiter, handshake cap, handshake deadline), its records
 * go through tls/ into plaintext that sk_app_http() answers as on the plain
 * port, and the plain port's 308 to https when it is set to redirect.
 */
#include <stdio.h>
#include <string.h>

#include "sk_app_impl.h"

void
sk_app_tls_open(struct sk_app *app, struct sk_app_conn *ac)
{
	struct sk_tcp_conn *c = ac->conn;
	struct sk_tls_conn *t = (struct sk_tls_conn *)((uint8_t *)ac + SK_APP_CONN_TLS_OFF);
	struct sk_ratelimit *rl = app->seckill != NULL ? app->seckill->rl : NULL;

	/* The handshake costs a private-key operation: the per-IP limit
	 * refuses a flood before it (a token per new connection). */
	if (rl != NULL &&
	    sk_ratelimit_ip_take(rl, ac->client.key, app->now_tsc, NULL) != SK_RL_PASS) {
		sk_tls_ip_refused(app->tls);
		sk_tcp_abort(c);
		return;
	}
	if (sk_tls_accept(app->tls, t, c) != 0) { /* the cap (counted) or no memory */
		sk_tcp_abort(c);
		return;
	}
	ac->tls = t;
	ac->deadline = DL_HANDSHAKE;
	sk_tcp_set_deadline(c, sk_tls_handshake_timeout_ms(app->tls));
}

size_t
sk_app_tls_data(struct sk_app *app, struct sk_app_conn *ac, const uint8_t *data, size_t len)
{
	struct sk_tcp_conn *c = ac->conn;
	struct sk_tls_conn *t = ac->tls;
	bool handshaking = t->state == SK_TLS_HANDSHAKE, want_more = true;
	size_t used, plen, done = 0;
	const uint8_t *plain;
	enum sk_tls_result r = sk_tls_input(t, data, len, &used);

	if (r == SK_TLS_FAIL) { /* the alert, if any, goes out before the FIN */
		ac->state = CONN_CLOSING;
		sk_tcp_close(c);
		return len;
	}
	if (handshaking && t->state == SK_TLS_OPEN && ac->deadline == DL_HANDSHAKE) {
		ac->deadline = DL_NONE; /* HTTP arms its own */
		sk_tcp_set_deadline(c, 0);
	}
	plain = sk_tls_plain(t, &plen);
	if (plen != 0) {
		done = sk_app_http(app, ac, plain, plen, 0, &want_more);
		if (ac->state == CONN_CLOSING)
			return len;
		sk_tls_consume(t, done);
	}
	if (want_more && (r == SK_TLS_EOF || sk_tcp_peer_closed(c)))
		return sk_app_close(ac, len);
	/* Records wait in TCP or inside OpenSSL, or no buffer was free: come
	 * back next pass, unless this pass made no progress on a parked request
	 * (its resume comes from the park). */
	if (sk_tls_want_resume(t) && (done != 0 || plen == 0))
		sk_tcp_resume(c);
	return used;
}

/* host_name - the host of a Host value without its port ("[::1]:80" ->
 * "[::1]"); its length. */
static size_t
host_name(const char *h, size_t len)
{
	for (size_t i = len; i > 0; i--) {
		if (h[i - 1] == ']')
			return len;
		if (h[i - 1] == ':')
			return i - 1;
	}
	return len;
}

void
sk_app_redirect(struct sk_app *app, struct sk_app_conn *ac, const struct sk_http_request *req)
{
	char loc[SK_APP_REPLY_MAX / 2], port[8] = "";
	struct sk_http_response r = {.status = 308, .body = "{\"status\":\"use_https\"}"};
	size_t hl;
	int n;

	r.body_len = strlen(r.body);
	if (req->host == NULL || req->host_len == 0) {
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_BAD_REQUEST);
		return;
	}
	hl = host_name(req->host, req->host_len);
	if (app->tls_port != 443)
		snprintf(port, sizeof(port), ":%u", app->tls_port);
	n = snprintf(loc, sizeof(loc), "Location: https://%.*s%s%.*s\r\n", (int)hl, req->host, port,
		     (int)req->target_len, req->target);
	if (n < 0 || (size_t)n >= sizeof(loc)) { /* a target too long for a Location */
		sk_app_reply_canned(app, ac, req, SK_HTTP_CANNED_URI_TOO_LONG);
		return;
	}
	r.extra = loc;
	r.extra_len = (size_t)n;
	app->stats.redirects++;
	sk_app_reply(app, ac, req, &r);
}
