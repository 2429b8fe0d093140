/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tcp_conn.c - the connection table and the connection's life cycle.
 *
 * The table is a fixed array of slots (allocated at create time) indexed by
 * a chained hash of the 4-tuple. Free slots form a stack. A slot leaves the
 * table in three ways: TIME_WAIT expiry or recycling, a reset/abort
 * (sk_tcp_conn_destroy) or the end of LAST_ACK. If the app knew the
 * connection, the slot first goes on the close queue and is freed only
 * after on_close has been called from a stack entry point; so a callback
 * never sees a connection reused under its feet.
 *
 * Also here: the output/resume/close queues, delivery to on_data, and the
 * app-facing sk_tcp_* functions.
 */
#include <errno.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>
#include <rte_jhash.h>

#include "sk_net_priv.h"

/* ------------------------------------------------------------------------ */
/* Hash table                                                               */

struct sk_tcp_conn *
sk_tcp_conn_lookup(struct sk_net_lcore *net, uint32_t rip, uint16_t rport, uint32_t lip,
		   uint16_t lport)
{
	struct sk_tcp_conn *c =
		net->buckets[sk_tcp_conn_hash(net, rip, rport, lip, lport) & net->bucket_mask];

	for (; c != NULL; c = c->hnext)
		if (c->rip == rip && c->rport == rport && c->lport == lport && c->lip == lip)
			return c;
	return NULL;
}

/* conn_hash6 - the hash of an IPv6 4-tuple (IPv4 keeps its three words). */
static inline uint32_t
conn_hash6(const struct sk_net_lcore *net, const uint8_t *rip6, uint16_t rport, const uint8_t *lip6,
	   uint16_t lport)
{
	uint32_t k[9];

	memcpy(k, rip6, 16);
	memcpy(k + 4, lip6, 16);
	k[8] = ((uint32_t)rport << 16) | lport;
	return rte_jhash_32b(k, 9, net->hash_seed);
}

/* conn_bucket - the chain head @c is (or goes) on. */
static inline struct sk_tcp_conn **
conn_bucket(const struct sk_tcp_conn *c)
{
	const struct sk_net_lcore *net = c->net;
	uint32_t h = (c->flags & SK_TCPF_V6)
			     ? conn_hash6(net, c->rip6, c->rport, c->lip6, c->lport)
			     : sk_tcp_conn_hash(net, c->rip, c->rport, c->lip, c->lport);

	return &net->buckets[h & net->bucket_mask];
}

struct sk_tcp_conn *
sk_tcp_conn_lookup6(struct sk_net_lcore *net, const uint8_t *rip6, uint16_t rport,
		    const uint8_t *lip6, uint16_t lport)
{
	struct sk_tcp_conn *c =
		net->buckets[conn_hash6(net, rip6, rport, lip6, lport) & net->bucket_mask];

	for (; c != NULL; c = c->hnext)
		if ((c->flags & SK_TCPF_V6) && c->rport == rport && c->lport == lport &&
		    memcmp(c->rip6, rip6, 16) == 0 && memcmp(c->lip6, lip6, 16) == 0)
			return c;
	return NULL;
}

static void
conn_unhash(struct sk_tcp_conn *c)
{
	struct sk_tcp_conn **pp = conn_bucket(c);

	/* Chains are short: the table has at least twice as many buckets as slots. */
	for (; *pp != NULL; pp = &(*pp)->hnext) {
		if (*pp == c) {
			*pp = c->hnext;
			c->hnext = NULL;
			return;
		}
	}
	SK_DEBUG_ASSERT(0);
}

/* ------------------------------------------------------------------------ */
/* Slot life cycle                                                          */

static void
conn_free_slot(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;

	SK_DEBUG_ASSERT(c->state == SK_TCP_CLOSED && !(c->flags & SK_TCPF_IN_CLOSEQ));
	c->flags = 0;
	c->hnext = net->free_list;
	net->free_list = c;
	net->stats.tcp_conns--;
	net->stats.tcp_conn_closed++;
}

/* Take @c out of the table, the wheel and every queue; state becomes CLOSED. */
static void
conn_detach(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;

	if (c->state == SK_TCP_CLOSED)
		return;
	conn_unhash(c);
	sk_timer_wheel_cancel(&net->wheel, &c->timer);
	if (c->flags & SK_TCPF_IN_OUTQ)
		TAILQ_REMOVE(&net->outq, c, outq);
	if (c->flags & SK_TCPF_IN_RESUMEQ)
		TAILQ_REMOVE(&net->resumeq, c, resumeq);
	if (c->flags & SK_TCPF_IN_TWQ) {
		TAILQ_REMOVE(&net->twq, c, twq);
		net->stats.tcp_time_wait--;
	}
	if (c->flags & SK_TCPF_IN_FRESHQ)
		TAILQ_REMOVE(&net->freshq, c, freshq);
	sk_tcp_peer_remove(c);
	c->flags &= ~(SK_TCPF_IN_OUTQ | SK_TCPF_IN_RESUMEQ | SK_TCPF_IN_TWQ | SK_TCPF_IN_FRESHQ |
		      SK_TCPF_DEADLINE);
	c->state = SK_TCP_CLOSED;
}

static void
conn_queue_close(struct sk_tcp_conn *c)
{
	if (!(c->flags & SK_TCPF_IN_CLOSEQ)) {
		c->flags |= SK_TCPF_IN_CLOSEQ;
		TAILQ_INSERT_TAIL(&c->net->closeq, c, closeq);
	}
}

void
sk_tcp_conn_destroy(struct sk_tcp_conn *c)
{
	if (c->state == SK_TCP_CLOSED)
		return;
	conn_detach(c);
	if (c->flags & (SK_TCPF_APP_OPEN | SK_TCPF_IN_CLOSEQ))
		conn_queue_close(c);
	else
		conn_free_slot(c);
}

/*
 * conn_evict - reset @c, a connection without a complete request, to make
 * room; its slot is free on return. Called from sk_net_rx (the listener),
 * where on_close may be reported: it is, at once.
 */
static void
conn_evict(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;

	net->stats.tcp_conn_evicted++;
	net->stats.tcp_rst_tx++;
	sk_tcp_send_rst_conn(c);
	conn_detach(c);
	if (c->flags & SK_TCPF_IN_CLOSEQ) {
		TAILQ_REMOVE(&net->closeq, c, closeq);
		c->flags &= ~SK_TCPF_IN_CLOSEQ;
	}
	if (c->flags & SK_TCPF_APP_OPEN) {
		c->flags &= ~SK_TCPF_APP_OPEN;
		net->ops.on_close(net->app, c);
	}
	conn_free_slot(c);
}

/*
 * conn_make_room - the table is full: free one slot, the oldest TIME_WAIT
 * first, else the oldest connection that never completed a request. False
 * if every slot holds a connection in use.
 */
static bool
conn_make_room(struct sk_net_lcore *net)
{
	struct sk_tcp_conn *old = TAILQ_FIRST(&net->twq);

	if (old != NULL && !(old->flags & SK_TCPF_IN_CLOSEQ)) {
		net->stats.tcp_tw_recycled++;
		sk_tcp_conn_destroy(old);
		SK_ASSERT(net->free_list == old);
		return true;
	}
	old = TAILQ_FIRST(&net->freshq);
	if (old == NULL)
		return false;
	conn_evict(old);
	return true;
}

/* conn_take - a free slot (making room if needed) with its fields reset, not hashed yet. */
static struct sk_tcp_conn *
conn_take(struct sk_net_lcore *net, uint32_t rip, uint16_t rport, uint32_t lip, uint16_t lport)
{
	struct sk_tcp_conn *c;

	if (net->free_list == NULL && !conn_make_room(net))
		return NULL;
	c = net->free_list;
	net->free_list = c->hnext;

	/* Reset the per-connection fields; the buffers keep their (stale) bytes. */
	c->flags = 0;
	c->rip = rip;
	c->lip = lip;
	c->rport = rport;
	c->lport = lport;
	c->state = SK_TCP_ESTABLISHED;
	c->rcv_len = 0;
	c->snd_len = 0;
	c->snd_head = 0;
	c->retries = 0;
	c->srtt8 = 0;
	c->rttvar4 = 0;
	c->rto = net->rto_init;
	c->last_rx = net->now_tick;
	c->timer.next = NULL;
	c->timer.prev = NULL;
	return c;
}

/* conn_hash_in - put @c (its addresses set) on its chain. */
static struct sk_tcp_conn *
conn_hash_in(struct sk_tcp_conn *c)
{
	struct sk_tcp_conn **bucket = conn_bucket(c);

	c->hnext = *bucket;
	*bucket = c;
	c->net->stats.tcp_conns++;
	c->net->stats.tcp_conn_opened++;
	return c;
}

struct sk_tcp_conn *
sk_tcp_conn_alloc(struct sk_net_lcore *net, uint32_t rip, uint16_t rport, uint32_t lip,
		  uint16_t lport)
{
	struct sk_tcp_conn *c = conn_take(net, rip, rport, lip, lport);

	return c != NULL ? conn_hash_in(c) : NULL;
}

struct sk_tcp_conn *
sk_tcp_conn_alloc6(struct sk_net_lcore *net, const uint8_t *rip6, uint16_t rport,
		   const uint8_t *lip6, uint16_t lport)
{
	struct sk_tcp_conn *c = conn_take(net, 0, rport, 0, lport);

	if (c == NULL)
		return NULL;
	c->flags = SK_TCPF_V6;
	memcpy(c->rip6, rip6, 16);
	memcpy(c->lip6, lip6, 16);
	return conn_hash_in(c);
}

void
sk_tcp_conn_time_wait(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;

	c->state = SK_TCP_TIME_WAIT;
	c->flags &= ~(SK_TCPF_RTO_ARMED | SK_TCPF_DEADLINE);
	if (c->flags & SK_TCPF_IN_FRESHQ) {
		TAILQ_REMOVE(&net->freshq, c, freshq);
		c->flags &= ~SK_TCPF_IN_FRESHQ;
	}
	sk_tcp_peer_remove(c); /* TIME_WAIT does not count against the address */
	c->tw_deadline = net->now_tick + net->tw_ticks;
	c->flags |= SK_TCPF_IN_TWQ;
	TAILQ_INSERT_TAIL(&net->twq, c, twq);
	net->stats.tcp_time_wait++;
	if (c->flags & SK_TCPF_IN_RESUMEQ) {
		TAILQ_REMOVE(&net->resumeq, c, resumeq);
		c->flags &= ~SK_TCPF_IN_RESUMEQ;
	}
	if (c->flags & SK_TCPF_APP_OPEN)
		conn_queue_close(c);
	sk_tcp_conn_timer_update(c);

	/* Cap the population: the oldest goes first (RFC 6191 is not needed for a server). */
	while (net->stats.tcp_time_wait > net->conf.time_wait_max) {
		struct sk_tcp_conn *old = TAILQ_FIRST(&net->twq);

		net->stats.tcp_tw_recycled++;
		sk_tcp_conn_destroy(old);
	}
}

void
sk_tcp_conn_timer_update(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	uint64_t due;

	if (c->state == SK_TCP_CLOSED)
		return;
	if (c->state == SK_TCP_TIME_WAIT) {
		due = c->tw_deadline;
	} else {
		due = sk_tcp_conn_idle_deadline(c);
		if ((c->flags & SK_TCPF_RTO_ARMED) && c->rto_deadline < due)
			due = c->rto_deadline;
		if ((c->flags & SK_TCPF_DEADLINE) && c->app_deadline < due)
			due = c->app_deadline;
	}
	/* Lazy: an entry that fires early re-arms itself for the real deadline. */
	if (!sk_timer_armed(&c->timer) || due < c->timer.expire)
		sk_timer_wheel_arm(&net->wheel, &c->timer, due);
}

/* ------------------------------------------------------------------------ */
/* Queues drained by sk_net_tx_flush                                        */

void
sk_tcp_conn_want_output(struct sk_tcp_conn *c)
{
	if (!(c->flags & SK_TCPF_IN_OUTQ) && c->state != SK_TCP_CLOSED) {
		c->flags |= SK_TCPF_IN_OUTQ;
		TAILQ_INSERT_TAIL(&c->net->outq, c, outq);
	}
}

void
sk_tcp_conn_deliver(struct sk_tcp_conn *c, bool resumed)
{
	struct sk_net_lcore *net = c->net;
	bool fin = c->flags & SK_TCPF_FIN_NOTIFY;
	size_t used;

	if (!(c->flags & SK_TCPF_APP_OPEN) || (c->flags & SK_TCPF_APP_CLOSED)) {
		c->rcv_len = 0;
		return;
	}
	if (c->rcv_len == 0 && !fin && !resumed)
		return;
	c->flags &= ~SK_TCPF_FIN_NOTIFY;
	used = net->ops.on_data(net->app, c, c->rcv_buf, c->rcv_len);
	if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT)
		return; /* aborted (or closed) from the callback */
	if (c->flags & SK_TCPF_APP_CLOSED) {
		c->rcv_len = 0;
		return;
	}
	SK_DEBUG_ASSERT(used <= c->rcv_len);
	if (used > c->rcv_len)
		used = c->rcv_len;
	if (used == 0)
		return;
	c->rcv_len -= (uint32_t)used;
	if (c->rcv_len)
		memmove(c->rcv_buf, c->rcv_buf + used, c->rcv_len);
	/* Window update when the window reopens from (nearly) closed. */
	if (c->rcv_adv_wnd < c->mss &&
	    sk_tcp_rcv_wnd(c) >= RTE_MIN((uint32_t)c->mss, net->conf.rcv_buf_size / 2)) {
		c->flags |= SK_TCPF_ACK_NOW;
		sk_tcp_conn_want_output(c);
	}
}

void
sk_tcp_conn_run_resumes(struct sk_net_lcore *net)
{
	struct sk_tcp_conn_list todo;
	struct sk_tcp_conn *c;

	/* Only those queued before this call: a callback resuming itself waits a pass. */
	TAILQ_INIT(&todo);
	TAILQ_CONCAT(&todo, &net->resumeq, resumeq);
	while ((c = TAILQ_FIRST(&todo)) != NULL) {
		TAILQ_REMOVE(&todo, c, resumeq);
		c->flags &= ~SK_TCPF_IN_RESUMEQ;
		sk_tcp_conn_deliver(c, true);
	}
}

void
sk_tcp_conn_run_closes(struct sk_net_lcore *net)
{
	struct sk_tcp_conn *c;

	while ((c = TAILQ_FIRST(&net->closeq)) != NULL) {
		TAILQ_REMOVE(&net->closeq, c, closeq);
		c->flags &= ~SK_TCPF_IN_CLOSEQ;
		if (c->flags & SK_TCPF_APP_OPEN) {
			c->flags &= ~SK_TCPF_APP_OPEN;
			net->ops.on_close(net->app, c);
		}
		if (c->state == SK_TCP_CLOSED)
			conn_free_slot(c);
	}
}

void
sk_tcp_conn_run_output(struct sk_net_lcore *net)
{
	struct sk_tcp_conn_list todo;
	struct sk_tcp_conn *c;

	TAILQ_INIT(&todo);
	TAILQ_CONCAT(&todo, &net->outq, outq);
	while ((c = TAILQ_FIRST(&todo)) != NULL) {
		TAILQ_REMOVE(&todo, c, outq);
		c->flags &= ~SK_TCPF_IN_OUTQ;
		sk_tcp_output(c, false);
	}
}

/* ------------------------------------------------------------------------ */
/* App API                                                                  */

/* conn_can_send - the app may still queue bytes on @c (SYN_SENT: they wait). */
static inline bool
conn_can_send(const struct sk_tcp_conn *c)
{
	return !(c->flags & (SK_TCPF_APP_CLOSED | SK_TCPF_FIN_QUEUED)) &&
	       (c->state == SK_TCP_ESTABLISHED || c->state == SK_TCP_CLOSE_WAIT ||
		c->state == SK_TCP_SYN_SENT);
}

int
sk_tcp_send(struct sk_tcp_conn *c, const void *data, size_t len)
{
	uint32_t size, tail, first;

	if (!conn_can_send(c) || !(c->flags & SK_TCPF_APP_OPEN))
		return -ENOTCONN;
	if (len == 0)
		return 0;
	if (data == NULL)
		return -EINVAL;
	size = c->net->conf.snd_buf_size;
	if (len > size)
		return -EMSGSIZE;
	if (len > size - c->snd_len)
		return -ENOBUFS;
	tail = (c->snd_head + c->snd_len) % size;
	first = RTE_MIN((uint32_t)len, size - tail);
	memcpy(c->snd_buf + tail, data, first);
	if (first < len)
		memcpy(c->snd_buf, (const uint8_t *)data + first, len - first);
	c->snd_len += (uint32_t)len;
	sk_tcp_conn_want_output(c);
	return 0;
}

void
sk_tcp_close(struct sk_tcp_conn *c)
{
	if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT ||
	    (c->flags & SK_TCPF_APP_CLOSED))
		return;
	c->flags |= SK_TCPF_APP_CLOSED | SK_TCPF_FIN_QUEUED;
	c->flags &= ~SK_TCPF_DEADLINE; /* the app is done with it */
	c->rcv_len = 0;
	if (c->flags & SK_TCPF_IN_RESUMEQ) {
		TAILQ_REMOVE(&c->net->resumeq, c, resumeq);
		c->flags &= ~SK_TCPF_IN_RESUMEQ;
	}
	sk_tcp_conn_want_output(c);
}

void
sk_tcp_abort(struct sk_tcp_conn *c)
{
	if (c->state == SK_TCP_CLOSED)
		return;
	if (c->state != SK_TCP_TIME_WAIT) {
		sk_tcp_send_rst_conn(c);
		c->net->stats.tcp_rst_tx++;
	}
	sk_tcp_conn_destroy(c);
}

void
sk_tcp_resume(struct sk_tcp_conn *c)
{
	if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT ||
	    !(c->flags & SK_TCPF_APP_OPEN) ||
	    (c->flags & (SK_TCPF_APP_CLOSED | SK_TCPF_IN_RESUMEQ)))
		return;
	c->flags |= SK_TCPF_IN_RESUMEQ;
	TAILQ_INSERT_TAIL(&c->net->resumeq, c, resumeq);
}

/* conn_open_active - start the active open of the fresh slot @c (ISS from @tuple). */
static struct sk_tcp_conn *
conn_open_active(struct sk_tcp_conn *c, const void *tuple, size_t tuple_len,
		 const struct rte_ether_addr *dmac)
{
	struct sk_net_lcore *net = c->net;
	/* RFC 6528: a keyed hash of the 4-tuple plus a 4 us clock. */
	uint32_t iss = (uint32_t)sk_siphash24(net->cookie.k0, net->cookie.k1, tuple, tuple_len) +
		       (uint32_t)(net->now_tsc / (net->tick_tsc / 250 + 1));

	net->stats.tcp_connect++;
	c->state = SK_TCP_SYN_SENT;
	c->rmac = *dmac;
	c->mss = sk_tcp_our_mss(c);
	c->rcv_nxt = 0;
	c->rcv_adv_wnd = RTE_MIN(net->conf.rcv_buf_size, 65535u);
	c->snd_una = c->snd_nxt = c->snd_max = iss + 1; /* the SYN is iss */
	c->snd_wnd = c->max_snd_wnd = 0;
	c->chal_tick = 0;
	c->flags = (c->flags & SK_TCPF_V6) | SK_TCPF_APP_OPEN;
	memset(c->app_data, 0, net->conf.app_data_size);
	sk_tcp_conn_want_output(c);
	sk_tcp_conn_timer_update(c);
	return c;
}

/* active_ports_ok - the ports of an active open are in range. */
static inline bool
active_ports_ok(const struct sk_net_lcore *net, uint16_t lport, uint16_t rport)
{
	return lport != 0 && !sk_tcp_listening(net, lport) && rport != 0;
}

struct sk_tcp_conn *
sk_tcp_connect(struct sk_net_lcore *net, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport,
	       const struct rte_ether_addr *dmac)
{
	struct {
		uint32_t lip, rip;
		uint16_t lport, rport;
	} tuple = {lip, rip, lport, rport};
	struct sk_tcp_conn *c;

	if (net == NULL || dmac == NULL || !sk_net_is_ours(net, lip) ||
	    !active_ports_ok(net, lport, rport) || rip == 0 || sk_net_is_ours(net, rip)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (sk_tcp_conn_lookup(net, rip, rport, lip, lport) != NULL) {
		rte_errno = EADDRINUSE;
		return NULL;
	}
	c = sk_tcp_conn_alloc(net, rip, rport, lip, lport);
	if (c == NULL) {
		rte_errno = ENOSPC;
		return NULL;
	}
	return conn_open_active(c, &tuple, sizeof(tuple), dmac);
}

struct sk_tcp_conn *
sk_tcp_connect6(struct sk_net_lcore *net, const uint8_t lip6[16], uint16_t lport,
		const uint8_t rip6[16], uint16_t rport, const struct rte_ether_addr *dmac)
{
	static const uint8_t unspec[16];
	struct {
		uint8_t lip6[16], rip6[16];
		uint16_t lport, rport;
	} tuple;
	struct sk_tcp_conn *c;

	if (net == NULL || dmac == NULL || lip6 == NULL || rip6 == NULL || !net->has_ip6 ||
	    !sk_ipv6_is_ours(net, lip6) || !active_ports_ok(net, lport, rport) || rip6[0] == 0xff ||
	    memcmp(rip6, unspec, 16) == 0 || sk_ipv6_is_ours(net, rip6)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (sk_tcp_conn_lookup6(net, rip6, rport, lip6, lport) != NULL) {
		rte_errno = EADDRINUSE;
		return NULL;
	}
	c = sk_tcp_conn_alloc6(net, rip6, rport, lip6, lport);
	if (c == NULL) {
		rte_errno = ENOSPC;
		return NULL;
	}
	memset(&tuple, 0, sizeof(tuple));
	memcpy(tuple.lip6, lip6, 16);
	memcpy(tuple.rip6, rip6, 16);
	tuple.lport = lport;
	tuple.rport = rport;
	return conn_open_active(c, &tuple, sizeof(tuple), dmac);
}

bool
sk_tcp_established(const struct sk_tcp_conn *c)
{
	return c->state != SK_TCP_SYN_SENT && c->state != SK_TCP_CLOSED;
}

uint32_t
sk_tcp_local_ip(const struct sk_tcp_conn *c)
{
	return c->lip;
}

uint16_t
sk_tcp_local_port(const struct sk_tcp_conn *c)
{
	return c->lport;
}

void
sk_tcp_set_deadline(struct sk_tcp_conn *c, uint32_t ms)
{
	struct sk_net_lcore *net = c->net;

	if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT)
		return;
	if (ms == 0) {
		c->flags &= ~SK_TCPF_DEADLINE; /* lazy: an early firing re-arms */
		return;
	}
	c->flags |= SK_TCPF_DEADLINE;
	c->app_deadline = net->now_tick + sk_net_ms_to_ticks(net, ms);
	sk_tcp_conn_timer_update(c);
}

void
sk_tcp_mark_used(struct sk_tcp_conn *c)
{
	if (!(c->flags & SK_TCPF_IN_FRESHQ))
		return;
	TAILQ_REMOVE(&c->net->freshq, c, freshq);
	c->flags &= ~SK_TCPF_IN_FRESHQ;
}

void *
sk_tcp_app_data(struct sk_tcp_conn *c)
{
	return c->app_data;
}

uint32_t
sk_tcp_remote_ip(const struct sk_tcp_conn *c)
{
	return c->rip;
}

/* conn_addr - @ip (host order), or @ip6 for an IPv6 connection, as a struct sk_addr. */
static void
conn_addr(const struct sk_tcp_conn *c, uint32_t ip, const uint8_t *ip6, struct sk_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (c->flags & SK_TCPF_V6) {
		out->family = SK_ADDR_V6;
		memcpy(out->bytes, ip6, 16);
		return;
	}
	out->family = SK_ADDR_V4;
	out->bytes[0] = (uint8_t)(ip >> 24);
	out->bytes[1] = (uint8_t)(ip >> 16);
	out->bytes[2] = (uint8_t)(ip >> 8);
	out->bytes[3] = (uint8_t)ip;
}

void
sk_tcp_remote_addr(const struct sk_tcp_conn *c, struct sk_addr *out)
{
	conn_addr(c, c->rip, c->rip6, out);
}

void
sk_tcp_local_addr(const struct sk_tcp_conn *c, struct sk_addr *out)
{
	conn_addr(c, c->lip, c->lip6, out);
}

uint16_t
sk_tcp_remote_port(const struct sk_tcp_conn *c)
{
	return c->rport;
}

bool
sk_tcp_peer_closed(const struct sk_tcp_conn *c)
{
	return (c->flags & SK_TCPF_PEER_FIN) != 0;
}

size_t
sk_tcp_send_space(const struct sk_tcp_conn *c)
{
	if (!conn_can_send(c))
		return 0;
	return c->net->conf.snd_buf_size - c->snd_len;
}

struct sk_net_lcore *
sk_tcp_lcore(const struct sk_tcp_conn *c)
{
	return c->net;
}
