/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_conn.c - the crowd's connections: open (non-blocking, TCP_NODELAY),
 * build and send a request, read and parse answers, fail and back off.
 * With --tls the bytes go through crowd_tls.c (conn_send, conn_recv) and a
 * handshake sits between the connect and the first request.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_common.h"

#include "crowd.h"

/* Reconnect backoff after an error: 10 ms doubling to 1 s. */
#define BACKOFF_MIN_NS (10 * 1000000ull)
#define BACKOFF_MAX_NS (1000 * 1000000ull)

static void
put_lit(char *p, size_t *len, const char *s)
{
	size_t n = strlen(s);

	memcpy(p + *len, s, n);
	*len += n;
}

static uint64_t
backoff_ns(uint8_t fails)
{
	uint64_t d = BACKOFF_MIN_NS << (fails < 7 ? fails : 7);

	return d < BACKOFF_MAX_NS ? d : BACKOFF_MAX_NS;
}

/*
 * crowd_conn_close - close @c; with @rst, abort it (RST) so that no TIME_WAIT is
 * left behind on our side. A job in flight must have been accounted for.
 */
void
crowd_conn_close(struct crowd *cw, struct conn *c, bool rst, uint64_t retry_ns)
{
	crowd_tls_close(c, !rst);
	if (c->fd >= 0) {
		if (rst) {
			struct linger l = {.l_onoff = 1, .l_linger = 0};
			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		}
		close(c->fd);
	}
	if (c->state == CS_BUSY)
		cw->inflight--;
	c->fd = -1;
	c->state = CS_CLOSED;
	c->kind = JOB_NONE;
	c->want_out = false;
	c->in_len = c->out_len = c->out_off = 0;
	sk_http_client_reset(&c->resp);
	c->retry_ns = retry_ns;
}

/* crowd_job_lost - the job in flight on @c will get no answer; count it. */
void
crowd_job_lost(struct crowd *cw, struct conn *c)
{
	if (c->state != CS_BUSY)
		return;
	switch (c->kind) {
	case JOB_BUY:
		cw->st.lost++;
		break;
	case JOB_POLL:
		cw->st.polls_bad++;
		break;
	default:
		break;
	}
}

/* crowd_conn_fail - an error on @c: count it (@counter), drop the job, back off. */
void
crowd_conn_fail(struct crowd *cw, struct conn *c, uint64_t *counter, uint64_t now)
{
	(*counter)++;
	crowd_job_lost(cw, c);
	if (c->fails < UINT8_MAX)
		c->fails++;
	crowd_conn_close(cw, c, true, now + backoff_ns(c->fails));
}

/* crowd_conn_setup_failed - @c could not be set up (@why): a connect error. */
void
crowd_conn_setup_failed(struct crowd *cw, struct conn *c, const char *why, uint64_t now)
{
	if (!cw->ever_connected) {
		snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "%s", why);
		cw->fatal = cw->fatal_buf;
	}
	crowd_conn_fail(cw, c, &cw->st.err_connect, now);
}

/* connect_failed - connecting @c failed with @err. */
static void
connect_failed(struct crowd *cw, struct conn *c, int err, uint64_t now)
{
	char why[160];

	snprintf(why, sizeof(why), "connect to %s: %s", cw->o.host, strerror(err));
	crowd_conn_setup_failed(cw, c, why, now);
}

void
crowd_conn_open(struct crowd *cw, struct conn *c, uint64_t now)
{
	int fd = socket(cw->o.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		cw->st.err_connect++;
		if (c->fails < UINT8_MAX)
			c->fails++;
		c->retry_ns = now + backoff_ns(c->fails);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->start_ns = now;
	c->in_len = c->out_len = c->out_off = 0;
	sk_http_client_reset(&c->resp);
	c->answers = 0;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
				 .data.u32 = (uint32_t)(c - cw->conns)};
	if (epoll_ctl(cw->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		crowd_conn_fail(cw, c, &cw->st.err_connect, now);
		return;
	}
	c->want_out = true;
	if (connect(fd, (const struct sockaddr *)&cw->o.addr, cw->o.addr_len) != 0 &&
	    errno != EINPROGRESS) {
		connect_failed(cw, c, errno, now);
		return;
	}
	c->state = CS_CONNECTING;
}

void
crowd_conn_want_out(struct crowd *cw, struct conn *c, bool want)
{
	if (c->want_out == want)
		return;
	struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0),
				 .data.u32 = (uint32_t)(c - cw->conns)};
	if (epoll_ctl(cw->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->want_out = want;
}

/* conn_connected - finish a non-blocking connect on @c. */
static void
conn_connected(struct crowd *cw, struct conn *c, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0) {
		connect_failed(cw, c, err, now);
		return;
	}
	if (cw->tls_ctx != NULL)
		crowd_tls_start(cw, c, now);
	else
		crowd_conn_ready(cw, c, now);
}

/* crowd_conn_ready - @c is connected (and its handshake done): give it a job. */
void
crowd_conn_ready(struct crowd *cw, struct conn *c, uint64_t now)
{
	cw->ever_connected = true;
	cw->st.connects++;
	c->state = CS_IDLE;
	crowd_conn_want_out(cw, c, false);
	crowd_conn_dispatch(cw, c, now);
}

/* conn_send, conn_recv - send() and recv() on @c, through TLS with --tls. */
static ssize_t
conn_send(struct conn *c, const void *buf, size_t len)
{
	if (c->ssl != NULL)
		return crowd_tls_send(c, buf, len);
	return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static ssize_t
conn_recv(struct conn *c, void *buf, size_t cap)
{
	if (c->ssl != NULL)
		return crowd_tls_recv(c, buf, cap);
	return recv(c->fd, buf, cap, 0);
}

/* conn_flush - write what is left of the request on @c; false if @c failed. */
static bool
conn_flush(struct crowd *cw, struct conn *c, uint64_t now)
{
	while (c->out_off < c->out_len) {
		ssize_t n = conn_send(c, c->out + c->out_off, c->out_len - c->out_off);
		if (n > 0) {
			c->out_off += (uint32_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* TLS may have to read first (then EPOLLIN comes) */
			crowd_conn_want_out(cw, c, c->ssl == NULL || c->tls_out);
			return true;
		}
		crowd_conn_fail(
			cw, c, n < 0 && errno == EPROTO ? &cw->st.err_protocol : &cw->st.err_socket,
			now);
		return false;
	}
	crowd_conn_want_out(cw, c, false);
	return true;
}

/* crowd_build_identity - the X-User-Id or Authorization line for user index @u;
 * a cart's token has no item claim. */
bool
crowd_build_identity(struct crowd *cw, char *p, size_t *len, uint32_t u, bool cart)
{
	uint64_t user = cw->o.user_base + u;

	if (cw->key == NULL) {
		put_lit(p, len, "X-User-Id: ");
		*len += sk_u64_dec(p + *len, user);
		put_lit(p, len, "\r\n");
		return true;
	}
	struct sk_token_claims cl = {.user = user,
				     .item = cw->o.item,
				     .has_item = !cart,
				     .gate = cw->o.item,
				     .has_gate = crowd_user_has_gate(&cw->o, u),
				     .exp = cw->token_exp};
	size_t tlen;
	put_lit(p, len, "Authorization: Bearer ");
	if (sk_token_mint(cw->key, &cl, p + *len, CONN_OUT_CAP - *len - 64, &tlen) != 0)
		return false;
	*len += tlen;
	put_lit(p, len, "\r\n");
	return true;
}

/* next_job - the next job of the current phase, or JOB_NONE. */
static enum job_kind
next_job(struct crowd *cw, uint32_t *user)
{
	switch (cw->phase) {
	case PH_BUY:
		if (cw->go_ns != 0)
			return JOB_NONE;
		if (cw->requeue_n > 0) {
			*user = cw->requeue[--cw->requeue_n];
			return JOB_BUY;
		}
		if (cw->cursor < cw->o.attempts) {
			*user = cw->sched[cw->cursor++];
			return JOB_BUY;
		}
		return JOB_NONE;
	case PH_POLL:
		if (cw->poll_cursor < cw->poll_n) {
			*user = cw->poll_users[cw->poll_cursor++];
			return JOB_POLL;
		}
		return JOB_NONE;
	case PH_ITEM:
		if (!cw->item_sent) {
			cw->item_sent = true;
			*user = 0;
			return JOB_ITEM;
		}
		return JOB_NONE;
	default:
		return JOB_NONE;
	}
}

/* crowd_conn_dispatch - give idle @c the next job and send it. */
void
crowd_conn_dispatch(struct crowd *cw, struct conn *c, uint64_t now)
{
	uint32_t u = 0;
	enum job_kind k;
	size_t len = 0;
	char *p = c->out;
	bool cart = false;

	if (c->state != CS_IDLE)
		return;
	k = next_job(cw, &u);
	if (k == JOB_NONE)
		return;
	switch (k) {
	case JOB_BUY:
		cart = crowd_is_cart(cw, u);
		memcpy(p, cart ? cw->cart_head : cw->buy_head,
		       cart ? cw->cart_head_len : cw->buy_head_len);
		len = cart ? cw->cart_head_len : cw->buy_head_len;
		break;
	case JOB_POLL:
		put_lit(p, &len, "GET /v1/orders/");
		len += sk_u64_dec(p + len, cw->order[u]);
		put_lit(p, &len, " HTTP/1.1\r\nHost: ");
		put_lit(p, &len, cw->o.host);
		put_lit(p, &len, "\r\n");
		break;
	default:
		put_lit(p, &len, "GET /v1/items/");
		len += sk_u64_dec(p + len, cw->o.item);
		put_lit(p, &len, " HTTP/1.1\r\nHost: ");
		put_lit(p, &len, cw->o.host);
		put_lit(p, &len, "\r\n\r\n");
		break;
	}
	if (k != JOB_ITEM) {
		if (!crowd_build_identity(cw, p, &len, u, cart)) {
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "cannot mint a token");
			cw->fatal = cw->fatal_buf;
			return;
		}
		if (cart) {
			memcpy(p + len, cw->cart_tail, cw->cart_tail_len);
			len += cw->cart_tail_len;
		} else {
			put_lit(p, &len, k == JOB_BUY ? "Content-Length: 0\r\n\r\n" : "\r\n");
		}
	}
	c->out_len = (uint32_t)len;
	c->out_off = 0;
	c->kind = (uint8_t)k;
	c->user = u;
	c->state = CS_BUSY;
	c->start_ns = now;
	cw->inflight++;
	if (k == JOB_BUY) {
		cw->st.sent++;
		cw->st.carts_sent += cart;
		if (cw->t_go == 0) {
			cw->t_go = now;
			cw->n_go = cw->st.answered;
		}
	} else if (k == JOB_POLL) {
		cw->st.polls_sent++;
	}
	conn_flush(cw, c, now);
}

/* conn_read - read and handle what arrived on @c. */
static void
conn_read(struct crowd *cw, struct conn *c, uint64_t now)
{
	ssize_t n;

	if (c->in_len >= CONN_IN_CAP) {
		crowd_conn_fail(cw, c, &cw->st.err_protocol, now);
		return;
	}
	n = conn_recv(c, c->in + c->in_len, CONN_IN_CAP - c->in_len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
			/* TLS: a read that must write first waits for EPOLLOUT */
			if (c->ssl != NULL && (c->tls_out || c->out_off >= c->out_len))
				crowd_conn_want_out(cw, c, c->tls_out);
			return;
		}
		crowd_conn_fail(cw, c, errno == EPROTO ? &cw->st.err_protocol : &cw->st.err_socket,
				now);
		return;
	}
	if (n == 0) {
		if (c->state == CS_BUSY) {
			crowd_conn_fail(cw, c, &cw->st.err_closed, now);
		} else if (c->in_len > 0) {
			crowd_conn_fail(cw, c, &cw->st.err_protocol, now);
		} else {
			/* keep-alive idle close: not an error, but a close right after
			 * accept must not turn into a busy reconnect loop */
			cw->st.idle_closes++;
			if (c->answers == 0 && c->fails < UINT8_MAX)
				c->fails++;
			crowd_conn_close(cw, c, false,
					 c->answers == 0 ? now + backoff_ns(c->fails) : now);
		}
		return;
	}
	c->in_len += (uint32_t)n;

	size_t used = 0;
	while (used < c->in_len) {
		const char *msg = c->in + used;
		enum sk_http_client_result pr =
			sk_http_client_parse(&c->resp, msg, c->in_len - used);
		if (pr == SK_HTTP_CLIENT_AGAIN)
			break;
		struct sk_http_client_resp r = c->resp;
		if (pr != SK_HTTP_CLIENT_DONE || (r.status >= 200 && c->state != CS_BUSY)) {
			crowd_conn_fail(cw, c, &cw->st.err_protocol, now);
			return;
		}
		sk_http_client_reset(&c->resp);
		used += r.len;
		if (r.status < 200)
			continue; /* interim answer */
		const char *body = msg + r.head_len;
		switch (c->kind) {
		case JOB_BUY:
			crowd_answer_buy(cw, c, &r, body, now);
			break;
		case JOB_POLL:
			crowd_answer_poll(cw, c, &r, body);
			break;
		default:
			crowd_answer_item(cw, &r, body);
			break;
		}
		c->answers++;
		c->fails = 0;
		c->state = CS_IDLE;
		c->kind = JOB_NONE;
		cw->inflight--;
		bool recycle = cw->o.conn_requests != 0 && c->answers >= cw->o.conn_requests;
		if (r.close || recycle) {
			if (used < c->in_len) {
				crowd_conn_fail(cw, c, &cw->st.err_protocol, now);
				return;
			}
			cw->st.reconnects++;
			crowd_conn_close(cw, c, false, now);
			crowd_conn_open(cw, c, now);
			return;
		}
	}
	if (used > 0) {
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= (uint32_t)used;
	}
	crowd_conn_dispatch(cw, c, now);
}

void
crowd_conn_event(struct crowd *cw, struct conn *c, uint32_t ev, uint64_t now)
{
	if (c->state == CS_CONNECTING) {
		if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			conn_connected(cw, c, now);
		return;
	}
	if (c->state == CS_HANDSHAKE) {
		crowd_tls_handshake(cw, c, now);
		return;
	}
	if (c->state == CS_CLOSED)
		return;
	if (c->ssl != NULL) {
		/* either direction may be what OpenSSL waits for: try both; bytes
		 * decrypted but not yet taken are read at once (bounded) */
		if (c->out_off < c->out_len && !conn_flush(cw, c, now))
			return;
		conn_read(cw, c, now);
		for (int i = 0; i < 4 && c->state >= CS_IDLE && crowd_tls_pending(c); i++)
			conn_read(cw, c, now);
		return;
	}
	if ((ev & EPOLLOUT) && c->out_off < c->out_len && !conn_flush(cw, c, now))
		return;
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
		conn_read(cw, c, now);
}
