/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_load.c - client connections, the closed and open loops, and the poll
 * loop of seckill-loadgen (see lg_load.h).
 *
 * Sections: picking (orders; the rest is lg_pick.h), connections and
 * requests, the stack's callbacks (plain and TLS), the loops, phases and the
 * run. The state is in lg_load_impl.h; create, free and the reports in
 * lg_load_setup.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_random.h>

#include "sk_common.h"

#include "lg_load_impl.h"

#define LG_RX_BURST	    32
#define LG_RX_BURSTS	    32	 /* bursts per pass at most: the RX ring's 1024 */
#define LG_CONNECT_PER_PASS 64	 /* active opens per poll pass */
#define LG_ISSUE_PER_PASS   1024 /* requests per poll pass (both loops) */
#define LG_CONNECT_TRIES    8	 /* tuples tried when one is still in use */
#define LG_CLOSE_WAIT_MS    3000 /* bound on the FIN exchanges at the end */
#define LG_ABORT_PASSES	    8	 /* passes to push the RSTs out */
#define LG_TLS_ROUNDS	    256	 /* TLS on_data: input/answer rounds at most */

/* ------------------------------------------------------------------------ */
/* Picking: orders (mix, users and tokens: lg_pick.h)                      */
/* ------------------------------------------------------------------------ */

static inline uint64_t
pick_order(struct lg_load *l)
{
	uint32_t n = l->nwon < LG_WON_RING ? l->nwon : LG_WON_RING;

	return n == 0 ? l->o->order_id : l->won[lg_pick_rng(&l->pick) % n];
}

/* ------------------------------------------------------------------------ */
/* Connections and requests                                                  */
/* ------------------------------------------------------------------------ */

static inline struct lg_conn *
conn_of(struct sk_tcp_conn *c)
{
	return sk_tcp_app_data(c);
}

static inline bool
can_send(const struct lg_load *l)
{
	return l->legit && l->phase == PH_LOAD && l->now < l->load_end &&
	       (l->o->requests == 0 || l->sent + l->pending < l->o->requests) &&
	       (l->o->inflight_max == 0 || l->inflight < l->o->inflight_max);
}

/* ready_compact - drop the stale entries of the ready ring (connections
 * closed while queued). O(ring size); only when the ring is full, and the
 * live entries (one per connection at most) take at most half of it. */
static void
ready_compact(struct lg_load *l)
{
	uint32_t w = l->ready_head;

	for (uint32_t r = l->ready_head; r != l->ready_tail; r++) {
		struct lg_ready e = l->ready[r & l->ready_mask];

		if (conn_of(e.c)->id == e.id)
			l->ready[w++ & l->ready_mask] = e;
	}
	l->ready_tail = w;
}

/* ready_push - queue @c once: it can take one more request. */
static inline void
ready_push(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a)
{
	if (a->queued || a->closing || a->inflight >= l->o->depth || l->o->short_conns ||
	    (l->tls != NULL && !a->tls.hs_done))
		return;
	if (sk_unlikely(l->ready_tail - l->ready_head > l->ready_mask))
		ready_compact(l);
	SK_ASSERT(l->ready_tail - l->ready_head <= l->ready_mask);
	l->ready[l->ready_tail++ & l->ready_mask] = (struct lg_ready){c, a->id};
	a->queued = 1;
}

/* ready_pop - the next connection that can take a request, or NULL. */
static inline struct sk_tcp_conn *
ready_pop(struct lg_load *l)
{
	while (l->ready_head != l->ready_tail) {
		struct lg_ready e = l->ready[l->ready_head++ & l->ready_mask];
		struct lg_conn *a = conn_of(e.c);

		if (a->id != e.id) /* closed since, maybe reused */
			continue;
		a->queued = 0;
		if (!a->closing)
			return e.c;
	}
	return NULL;
}

/* send_one - build and queue one request on @c. Returns false if the
 * stack refused it (send buffer full, connection closing). */
static bool
send_one(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a)
{
	enum lg_req_kind k = lg_pick_kind(&l->pick);
	const char *tok = NULL;
	size_t tok_len = 0, n;
	uint64_t num = 0;
	unsigned slot;
	int rc;

	if (k == LG_REQ_BUY || k == LG_REQ_CART)
		num = lg_pick_user(&l->pick);
	else if (k == LG_REQ_ORDER)
		num = pick_order(l);
	else if (k == LG_REQ_BUY_JWT)
		tok = lg_tokens_get(l->env.tokens, lg_pick_token(&l->pick, l->env.tokens->n),
				    &tok_len);
	n = lg_req_build(&l->tmpl, k, num, tok, tok_len, l->o->short_conns, l->req);
	if (n == 0)
		rc = -EMSGSIZE;
	else
		rc = l->tls != NULL ? sk_tls_send(&a->tls.t, l->req, n) : sk_tcp_send(c, l->req, n);
	if (rc != 0) {
		if (rc != -ENOBUFS)
			l->stats.send_errors++;
		return false;
	}
	slot = (a->head + a->inflight) & (LG_DEPTH_MAX - 1);
	a->kind[slot] = (uint8_t)k;
	a->sent_tsc[slot] = l->now;
	a->inflight++;
	l->inflight++;
	l->sent++;
	l->stats.sent[k]++;
	return true;
}

/* conn_open - one active open from the next free tuple; a short connection
 * carries its request from the start (it leaves with the handshake's ACK). */
static bool
conn_open(struct lg_load *l)
{
	const struct lg_opts *o = l->o;
	struct sk_tcp_conn *c = NULL;
	struct lg_conn *a;

	for (int t = 0; t < LG_CONNECT_TRIES && c == NULL; t++) {
		uint32_t ip = o->client_ip + l->ip_idx;
		uint16_t port = (uint16_t)(o->sport_min + l->port_off);

		/* addresses first, then ports: a crowd of hosts, spread over RSS */
		if (++l->ip_idx == o->client_count) {
			l->ip_idx = 0;
			if (++l->port_off == l->nports)
				l->port_off = 0;
		}
		c = o->v6 ? sk_tcp_connect6(l->net, o->client_ip6, port, o->server_ip6,
					    o->server_port, &l->server_mac)
			  : sk_tcp_connect(l->net, ip, port, o->server_ip, o->server_port,
					   &l->server_mac);
		if (c == NULL && rte_errno != EADDRINUSE)
			break;
	}
	if (c == NULL) {
		l->stats.connect_errors++;
		return false;
	}
	a = conn_of(c);
	a->id = ++l->next_id;
	a->live_idx = l->nlive;
	l->live[l->nlive++] = c;
	l->stats.connects++;
	sk_tcp_mark_used(c);
	if (l->tls != NULL) { /* the ClientHello now; requests once it is done */
		if (lg_tls_open(l->tls, &a->tls, c) != 0) {
			l->stats.connect_errors++;
			a->closing = 1;
			sk_tcp_abort(c);
		} else if (o->short_conns) {
			a->pending = 1;
			a->open_tsc = l->now;
			l->pending++;
		}
		return true;
	}
	if (o->short_conns) {
		if (!send_one(l, c, a)) {
			a->closing = 1;
			sk_tcp_abort(c);
		}
	} else {
		ready_push(l, c, a);
	}
	return true;
}

/* conn_close - graceful close, no more requests on @c (TLS: close_notify
 * first, then the FIN). */
static void
conn_close(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a)
{
	a->closing = 1;
	if (l->tls != NULL)
		sk_tls_shutdown(&a->tls.t); /* nothing before the handshake is done */
	sk_tcp_close(c);
}

/* answered - the response at @buf (parsed in a->resp) answers the oldest
 * request in flight: count it. */
static void
answered(struct lg_load *l, struct lg_conn *a, const uint8_t *buf)
{
	const struct sk_http_client_resp *r = &a->resp;
	enum lg_req_kind k = (enum lg_req_kind)a->kind[a->head];

	lg_stats_answer(&l->stats, k, r->status, l->now - a->sent_tsc[a->head]);
	a->head = (a->head + 1) & (LG_DEPTH_MAX - 1);
	a->inflight--;
	l->inflight--;
	if (lg_req_is_buy(k) && (r->status == 200 || r->status == 202)) {
		uint64_t id = lg_resp_order(buf + r->head_len, r->content_len);

		if (id != 0)
			l->won[l->nwon++ % LG_WON_RING] = id;
	}
}

/* ------------------------------------------------------------------------ */
/* The stack's callbacks                                                     */
/* ------------------------------------------------------------------------ */

/* on_open - passive opens only, and the loadgen listens on no port. */
static void
lg_on_open(void *app, struct sk_tcp_conn *c)
{
	(void)app;
	sk_tcp_abort(c);
}

/* answers - parse and count the answers at @data (@len bytes: every
 * unconsumed byte of @c, or with --tls its plaintext); returns the bytes of
 * the complete answers. An error aborts @c (a->closing set). */
static size_t
answers(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a, const uint8_t *data,
	size_t len)
{
	size_t used = 0;

	while (used < len && !a->closing) {
		enum sk_http_client_result r;

		if (a->inflight == 0) { /* bytes nobody asked for */
			l->stats.parse_errors[SK_HTTP_CLIENT_E_STATUS]++;
			a->closing = 1;
			sk_tcp_abort(c);
			return len;
		}
		r = lg_resp_parse_memo(&l->memo, &a->resp, data + used, len - used);
		if (r == SK_HTTP_CLIENT_AGAIN && len - used >= l->rcv_cap)
			r = SK_HTTP_CLIENT_E_TOO_LARGE; /* would never fit the receive buffer */
		if (r == SK_HTTP_CLIENT_AGAIN)
			break;
		if (r != SK_HTTP_CLIENT_DONE) {
			l->stats.parse_errors[r]++;
			a->closing = 1;
			sk_tcp_abort(c);
			return len;
		}
		answered(l, a, data + used);
		used += a->resp.len;
		if (a->resp.close)
			conn_close(l, c, a);
		sk_http_client_reset(&a->resp);
	}
	return used;
}

/* after_data - the end of on_data: a short connection closes once
 * answered, one the server closed (@peer_closed) is closed too, and one
 * that can take more requests is queued. */
static void
after_data(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a, bool peer_closed)
{
	if (l->o->short_conns && a->inflight == 0 && !a->closing &&
	    (l->tls == NULL || a->tls.hs_done))
		conn_close(l, c, a);
	if (peer_closed && !a->closing) {
		if (l->phase == PH_LOAD)
			l->stats.early_close++;
		conn_close(l, c, a);
	}
	ready_push(l, c, a);
}

/* hs_opened - @c's TLS handshake completed: a short connection sends its
 * one request now, timed from its connect like a plain one's (a keep-alive
 * one joins the ready ring in after_data()). */
static void
hs_opened(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a)
{
	if (!a->pending)
		return;
	a->pending = 0;
	l->pending--;
	if (!can_send(l) || !send_one(l, c, a)) {
		conn_close(l, c, a);
		return;
	}
	a->sent_tsc[(a->head + a->inflight - 1) & (LG_DEPTH_MAX - 1)] = a->open_tsc;
}

/* tls_data - on_data of a TLS connection: the ciphertext at @data through
 * tls/ (sk_tls_input()), the plaintext it gives through answers(), as long
 * as either moves (bounded). Returns the ciphertext taken. */
static size_t
tls_data(struct lg_load *l, struct sk_tcp_conn *c, struct lg_conn *a, const uint8_t *data,
	 size_t len)
{
	bool eof = false;
	size_t off = 0;
	unsigned round;

	for (round = 0; round < LG_TLS_ROUNDS; round++) {
		size_t used = 0, plen, took;
		const uint8_t *p;
		bool opened;
		enum sk_tls_result r =
			lg_tls_input(l->tls, &a->tls, data + off, len - off, &used, &opened);

		off += used;
		if (r == SK_TLS_FAIL) {
			a->closing = 1;
			sk_tcp_close(c); /* the alert tls/ queued, then the FIN */
			return len;
		}
		eof |= r == SK_TLS_EOF;
		if (opened)
			hs_opened(l, c, a);
		p = sk_tls_plain(&a->tls.t, &plen);
		took = answers(l, c, a, p, plen);
		if (a->closing)
			return len;
		if (took > 0)
			sk_tls_consume(&a->tls.t, took);
		if (used == 0 && took == 0)
			break;
	}
	if (round == LG_TLS_ROUNDS && sk_tls_want_resume(&a->tls.t))
		sk_tcp_resume(c); /* the rest at the end of the pass */
	after_data(l, c, a, eof || sk_tcp_peer_closed(c));
	return a->closing ? len : off;
}

static size_t
lg_on_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct lg_load *l = app;
	struct lg_conn *a = conn_of(c);
	size_t used;

	if (a->id == 0)
		return len;
	if (!a->got_data) {
		a->got_data = 1;
		l->stats.established++;
	}
	if (l->tls != NULL)
		return tls_data(l, c, a, data, len);
	used = answers(l, c, a, data, len);
	if (a->closing)
		return len;
	after_data(l, c, a, sk_tcp_peer_closed(c));
	return a->closing ? len : used;
}

static void
lg_on_close(void *app, struct sk_tcp_conn *c)
{
	struct lg_load *l = app;
	struct lg_conn *a = conn_of(c);
	struct sk_tcp_conn *last;

	if (a->id == 0)
		return;
	l->stats.closed++;
	l->stats.failed += !a->got_data;
	l->stats.lost += a->inflight;
	l->inflight -= a->inflight;
	if (l->tls != NULL) {
		l->pending -= a->pending;
		lg_tls_closed(l->tls, &a->tls, a->closing);
	}
	SK_DEBUG_ASSERT(a->live_idx < l->nlive && l->live[a->live_idx] == c);
	last = l->live[--l->nlive];
	l->live[a->live_idx] = last;
	conn_of(last)->live_idx = a->live_idx;
	a->id = 0;
}

/* ------------------------------------------------------------------------ */
/* The loops                                                                 */
/* ------------------------------------------------------------------------ */

/* work - open connections and send requests as the load shape says.
 * Returns the work done (connections opened + requests sent). */
static unsigned
work(struct lg_load *l)
{
	const struct lg_opts *o = l->o;
	double t = RTE_MIN((double)(l->now - l->load_start) / (double)l->hz, o->duration_s);
	double want = 0;
	unsigned done = 0;

	/* open loop: what the curve wanted by now (the end at most) and is not
	 * out yet; a loadgen starved of CPU shows here, even past the end */
	if (o->shape != LG_SHAPE_CLOSED) {
		want = lg_pick_due(o, t) -
		       (double)(o->shape == LG_SHAPE_CPS ? l->attempts : l->sent);
		if (l->phase == PH_LOAD && want > (double)l->backlog_max)
			l->backlog_max = (uint64_t)want;
	}
	if (!can_send(l))
		return 0;
	if (o->shape == LG_SHAPE_CPS) {
		while (want >= 1 && l->nlive < o->conns && done < LG_CONNECT_PER_PASS &&
		       can_send(l)) {
			l->attempts++;
			want -= 1;
			done += conn_open(l);
		}
		return done;
	}
	for (unsigned i = 0; l->nlive < o->conns && i < LG_CONNECT_PER_PASS && can_send(l); i++)
		if (conn_open(l))
			done++;
	if (o->short_conns)
		return done;
	if (o->shape == LG_SHAPE_RATE) {
		for (unsigned i = 0; want >= 1 && i < LG_ISSUE_PER_PASS && can_send(l); i++) {
			struct sk_tcp_conn *c = ready_pop(l);

			if (c == NULL)
				break;
			if (!send_one(l, c, conn_of(c))) {
				ready_push(l, c, conn_of(c)); /* refused for now */
				break;
			}
			done++;
			want -= 1;
			ready_push(l, c, conn_of(c));
		}
		return done;
	}
	/* closed loop: fill the ready connections to their depth, at most
	 * LG_ISSUE_PER_PASS requests a pass (the TX ring's size: thousands of
	 * connections must not send more than the ring takes at once) */
	for (uint32_t n = l->ready_tail - l->ready_head;
	     n > 0 && done < LG_ISSUE_PER_PASS && can_send(l); n--) {
		struct sk_tcp_conn *c = ready_pop(l);
		struct lg_conn *a;

		if (c == NULL)
			break;
		a = conn_of(c);
		while (a->inflight < o->depth && done < LG_ISSUE_PER_PASS && can_send(l) &&
		       send_one(l, c, a))
			done++;
		if (a->inflight < o->depth)
			ready_push(l, c, a); /* refused or capped: the next pass */
	}
	return done;
}

/*
 * tx - the stack's TX function: rte_eth_tx_burst until the ring took every
 * frame, waiting for room at most LG_TX_WAIT_US. A load generator waits
 * rather than drop: a dropped frame becomes a retransmission timeout, and
 * the run would measure the loss (a SYN lost costs a second), not the
 * server. The wait is bounded, so a peer that stopped reading still ends
 * in drops (counted by the stack as tx_dropped).
 */
uint16_t
lg_load_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct lg_load *l = ctx;
	uint16_t sent = rte_eth_tx_burst(l->env.port_id, l->env.queue, pkts, n);
	uint64_t end;

	if (sent == n)
		return sent;
	l->tx_waits++;
	end = rte_rdtsc() + l->tx_wait_tsc;
	do {
		rte_pause();
		sent += rte_eth_tx_burst(l->env.port_id, l->env.queue, pkts + sent,
					 (uint16_t)(n - sent));
	} while (sent < n && rte_rdtsc() < end);
	return sent;
}

/* ------------------------------------------------------------------------ */
/* Phases and the run                                                        */
/* ------------------------------------------------------------------------ */

static uint64_t
ms_tsc(const struct lg_load *l, uint64_t ms)
{
	return ms * l->hz / 1000;
}

/* phase_step - move to the next phase when the current one is over. */
static void
phase_step(struct lg_load *l)
{
	bool stop = l->env.stop != NULL && atomic_load(l->env.stop);

	switch (l->phase) {
	case PH_LOAD:
		if (l->now >= l->load_end || stop ||
		    (l->o->requests != 0 && l->sent >= l->o->requests)) {
			if (l->attack != NULL)
				lg_attack_end(l->attack, false); /* bounded in time */
			l->phase = PH_DRAIN;
			l->drain_end = l->now + ms_tsc(l, l->o->drain_ms);
		}
		break;
	case PH_DRAIN:
		if ((l->inflight == 0 && l->pending == 0) || l->now >= l->drain_end || stop) {
			l->run_end = l->now;
			for (uint32_t i = 0; i < l->nlive; i++)
				conn_close(l, l->live[i], conn_of(l->live[i]));
			l->phase = PH_CLOSE;
			l->close_end = l->now + ms_tsc(l, LG_CLOSE_WAIT_MS);
		}
		break;
	case PH_CLOSE:
		if (l->nlive == 0 && (l->attack == NULL || lg_attack_live(l->attack) == 0)) {
			l->phase = PH_DONE;
		} else if (l->now >= l->close_end && !l->aborted) {
			for (uint32_t i = 0; i < l->nlive; i++)
				sk_tcp_abort(l->live[i]);
			if (l->attack != NULL)
				lg_attack_end(l->attack, true);
			l->aborted = true;
			l->close_end = l->now + ms_tsc(l, 100);
		} else if (l->now >= l->close_end) {
			l->phase = PH_DONE; /* on_close of the aborts came, or never will */
		}
		break;
	case PH_DONE:
		break;
	}
}

/* pass - one poll pass: rx (until the ring is empty, bounded), timers,
 * load work, tx. */
static void
pass(struct lg_load *l, bool load)
{
	struct rte_mbuf *pkts[LG_RX_BURST];
	uint64_t t0 = rte_rdtsc();
	unsigned n;

	l->now = t0;
	/* Drain the RX ring before the timers run: after the process was off
	 * its core for a while, the ACKs waiting in the ring must be seen
	 * before an RTO fires for every connection (spurious retransmissions). */
	n = 0;
	for (unsigned b = 0; b < LG_RX_BURSTS; b++) {
		uint16_t got = rte_eth_rx_burst(l->env.port_id, l->env.queue, pkts, LG_RX_BURST);
		uint16_t ours = got;

		if (got > 0 && l->attack != NULL)
			ours = lg_attack_rx(l->attack, pkts, got, t0);
		if (ours > 0)
			sk_net_rx(l->net, pkts, ours, t0);
		n += got;
		if (got < LG_RX_BURST)
			break;
	}
	sk_net_timers(l->net, t0);
	if (l->attack != NULL)
		n += lg_attack_poll(l->attack, t0, load && l->phase == PH_LOAD);
	if (load)
		n += work(l);
	n += sk_net_tx_flush(l->net);
	if (l->attack != NULL)
		n += lg_attack_flush(l->attack);
	if (n > 0)
		l->stats.busy_tsc += rte_rdtsc() - t0;
}

int
lg_load_run(struct lg_load *l, char *err, size_t errlen)
{
	uint64_t deadline = rte_rdtsc() + ms_tsc(l, l->o->wait_ms), next_progress;
	struct lg_tcp_errors tcp;
	char ip[LG_ADDR_STRLEN];

	/* the server's MAC; a miss sends ND's solicitation (at most one a second) */
	while ((l->o->v6 ? sk_net_nd_lookup(l->net, l->o->server_ip6, &l->server_mac)
			 : sk_net_arp_lookup(l->net, l->o->server_ip, &l->server_mac)) != 0) {
		if (rte_rdtsc() >= deadline || (l->env.stop != NULL && atomic_load(l->env.stop))) {
			sk_set_err(err, errlen, "no %s answer from %s within %u ms",
				   l->o->v6 ? "neighbour" : "ARP", lg_server_str(l->o, false, ip),
				   l->o->wait_ms);
			return -ETIMEDOUT;
		}
		pass(l, false);
	}
	l->now = rte_rdtsc();
	lg_stats_init(&l->stats, l->hz, l->now);
	l->load_start = l->now;
	l->load_end = l->now + (uint64_t)(l->o->duration_s * (double)l->hz);
	next_progress = l->now + l->hz;
	l->phase = PH_LOAD;
	if (l->attack != NULL)
		lg_attack_start(l->attack, &l->server_mac, l->load_start, l->load_end);
	while (l->phase != PH_DONE) {
		pass(l, true);
		phase_step(l);
		if (l->now >= next_progress) {
			next_progress += l->hz;
			if (!l->o->quiet) {
				lg_load_tcp(l, &tcp);
				lg_stats_progress(&l->stats, l->now, l->inflight, &tcp, l->env.tag,
						  stderr);
				if (l->attack != NULL)
					lg_attack_progress(l->attack, stderr);
			}
		}
	}
	/* push out the last ACKs and RSTs */
	for (int i = 0; i < LG_ABORT_PASSES; i++)
		pass(l, false);
	if (l->tls != NULL)
		lg_tls_counts(l->tls, &l->stats.tls);
	return 0;
}

const struct sk_net_app_ops lg_load_ops = {
	.on_open = lg_on_open,
	.on_data = lg_on_data,
	.on_close = lg_on_close,
};
