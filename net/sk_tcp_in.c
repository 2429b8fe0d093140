/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tcp_in.c - TCP input: segment checks, the SYN-cookie listener, and the
 * per-state processing of RFC 9293 §3.10.7 with the RFC 5961 hardening.
 *
 * Order of processing for a connection: RST (only SEQ == RCV.NXT resets;
 * another in-window RST earns a rate-limited challenge ACK), SYN (always a
 * challenge ACK), sequence acceptability (unacceptable -> ACK), ACK field
 * (ACK of unsent data -> ACK; too old -> challenge ACK; new -> free the send
 * ring, RTT sample, FIN acknowledged?), window update, then in-order data
 * into the bounded receive buffer (out-of-order -> dropped and dup-ACKed;
 * beyond the window -> trimmed), then FIN. Data is offered to the app with
 * on_data once per segment; ACKs go out at the next sk_net_tx_flush().
 */
#include <string.h>

#include "sk_net_priv.h"

/* A parsed segment (host order). */
struct tcp_seg {
	uint32_t seq, ack;
	uint32_t len; /* payload bytes */
	const uint8_t *data;
	uint16_t win;
	uint16_t mss; /* MSS option, 0 = absent */
	uint8_t flags;
	uint32_t sip, dip;	    /* IPv4; 0 over IPv6 */
	const uint8_t *sip6, *dip6; /* IPv6 (in the frame); NULL over IPv4 */
	uint16_t sport, dport;
	const struct rte_ether_addr *smac;
};

static uint16_t
parse_mss(const uint8_t *opt, unsigned optlen)
{
	unsigned i = 0;

	while (i < optlen) {
		uint8_t kind = opt[i], len;

		if (kind == 0) /* end of list */
			break;
		if (kind == 1) { /* NOP */
			i++;
			continue;
		}
		if (i + 1 >= optlen)
			break;
		len = opt[i + 1];
		if (len < 2 || i + len > optlen)
			break;
		if (kind == 2 && len == 4)
			return (uint16_t)(opt[i + 2] << 8 | opt[i + 3]);
		i += len;
	}
	return 0;
}

static inline uint32_t
seg_seqlen(const struct tcp_seg *s)
{
	return s->len + ((s->flags & RTE_TCP_SYN_FLAG) ? 1 : 0) +
	       ((s->flags & RTE_TCP_FIN_FLAG) ? 1 : 0);
}

/* RST for a segment that matched no connection (RFC 9293 §3.10.7.1). */
static void
reset_for(struct sk_net_lcore *net, const struct tcp_seg *s)
{
	if (s->flags & RTE_TCP_RST_FLAG)
		return;
	net->stats.tcp_rst_tx++;
	if (s->flags & RTE_TCP_ACK_FLAG)
		sk_tcp_send_raw(net, s->smac, s->dip, s->dport, s->sip, s->sport, s->dip6, s->sip6,
				s->ack, 0, RTE_TCP_RST_FLAG, 0);
	else
		sk_tcp_send_raw(net, s->smac, s->dip, s->dport, s->sip, s->sport, s->dip6, s->sip6,
				0, s->seq + seg_seqlen(s), RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0);
}

static inline uint64_t
xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/*
 * RFC 5961 challenge ACK, limited twice (RFC 5961 §7): at most one per
 * connection per conf.challenge_ack_conn_ms, and per lcore at most a limit
 * drawn each second at random from [n/2, 3n/2] (n =
 * conf.challenge_ack_per_s). A fixed global limit is the side channel of
 * CVE-2016-5696: an off-path attacker who exhausts it and counts the
 * challenge ACKs it still sees learns whether a guessed 4-tuple exists.
 */
static void
challenge_ack(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	uint64_t sec = net->now_tick / sk_net_ms_to_ticks(net, 1000);
	uint32_t n = net->conf.challenge_ack_per_s;

	if (net->chal_conn_ticks != 0 && c->chal_tick != 0 &&
	    net->now_tick - c->chal_tick < net->chal_conn_ticks) {
		net->stats.tcp_challenge_conn_limited++;
		return;
	}
	if (sec != net->chal_second) {
		net->chal_second = sec;
		net->chal_count = 0;
		net->chal_limit = n / 2 + (uint32_t)(xorshift64(&net->rng) % (n + 1));
		if (net->chal_limit == 0)
			net->chal_limit = 1;
	}
	if (net->chal_count >= net->chal_limit) {
		net->stats.tcp_challenge_limited++;
		return;
	}
	net->chal_count++;
	c->chal_tick = net->now_tick ? net->now_tick : 1;
	net->stats.tcp_challenge_ack++;
	sk_tcp_send_ack(c);
}

static inline void
ack_soon(struct sk_tcp_conn *c)
{
	c->flags |= SK_TCPF_ACK_NOW;
	sk_tcp_conn_want_output(c);
}

/* ------------------------------------------------------------------------ */
/* Listener: SYN -> cookie SYN-ACK; ACK with a valid cookie -> connection    */

static void tcp_input_conn(struct sk_tcp_conn *c, const struct tcp_seg *s);

static void
tcp_input_listen(struct sk_net_lcore *net, const struct tcp_seg *s)
{
	struct sk_syncookie_flow f = {
		.saddr = s->sip,
		.daddr = s->dip,
		.saddr6 = s->sip6,
		.daddr6 = s->dip6,
		.sport = s->sport,
		.dport = s->dport,
	};
	struct sk_tcp_conn *c;
	uint16_t mss, our_mss = s->sip6 != NULL ? sk_tcp_mss6(net) : net->conf.mss;

	if (s->flags & RTE_TCP_RST_FLAG) {
		net->stats.tcp_rst_ignored++;
		return;
	}
	if (s->flags & RTE_TCP_SYN_FLAG) {
		uint32_t cookie;

		if (s->flags & RTE_TCP_ACK_FLAG) {
			reset_for(net, s); /* a SYN-ACK to a server port */
			return;
		}
		if (s->flags & RTE_TCP_FIN_FLAG) {
			net->stats.tcp_drop_hdr++;
			return;
		}
		net->stats.tcp_syn_rx++;
		f.client_isn = s->seq;
		/* Data on the SYN is ignored (no state to keep it in); the client resends it. */
		cookie = sk_syncookie_make(&net->cookie, &f, s->mss ? s->mss : 536, net->now_tsc,
					   NULL);
		net->stats.tcp_synack_tx++;
		sk_tcp_send_raw(net, s->smac, s->dip, s->dport, s->sip, s->sport, s->dip6, s->sip6,
				cookie, s->seq + 1, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, our_mss);
		return;
	}
	if (!(s->flags & RTE_TCP_ACK_FLAG)) {
		net->stats.tcp_drop_hdr++;
		return;
	}
	f.client_isn = s->seq - 1;
	if (!sk_syncookie_check(&net->cookie, &f, s->ack - 1, net->now_tsc, &mss)) {
		net->stats.tcp_cookie_bad++;
		reset_for(net, s);
		return;
	}
	net->stats.tcp_cookie_ok++;
	if (!sk_tcp_peer_admit(net, s->sip, s->sip6)) {
		/* This address holds its share of the table: refuse, and say so. */
		net->stats.tcp_conn_per_ip++;
		reset_for(net, s);
		return;
	}
	c = s->sip6 != NULL ? sk_tcp_conn_alloc6(net, s->sip6, s->sport, s->dip6, s->dport)
			    : sk_tcp_conn_alloc(net, s->sip, s->sport, s->dip, s->dport);
	if (c == NULL) {
		/* No RST: the client's retransmission may find a free slot. */
		net->stats.tcp_conn_full++;
		return;
	}
	/* A passive open counts against its address and may be evicted until
	 * the app says it carried a request (sk_tcp_mark_used). */
	c->flags |= SK_TCPF_IN_FRESHQ;
	TAILQ_INSERT_TAIL(&net->freshq, c, freshq);
	sk_tcp_peer_add(c);
	c->rmac = *s->smac;
	c->mss = RTE_MIN(mss, our_mss);
	c->rcv_nxt = s->seq;
	c->rcv_adv_wnd = RTE_MIN(net->conf.rcv_buf_size, 65535u);
	c->snd_una = c->snd_nxt = c->snd_max = s->ack;
	c->snd_wnd = c->max_snd_wnd = s->win;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	c->chal_tick = 0;
	c->flags |= SK_TCPF_APP_OPEN; /* IN_FRESHQ and PEER_COUNTED stay */
	memset(c->app_data, 0, net->conf.app_data_size);
	sk_tcp_conn_timer_update(c);
	net->ops.on_open(net->app, c);
	if (c->state != SK_TCP_ESTABLISHED)
		return; /* aborted or closed from on_open */
	/* The handshake ACK may carry data (and even a FIN). */
	if (s->len || (s->flags & RTE_TCP_FIN_FLAG))
		tcp_input_conn(c, s);
}

/* ------------------------------------------------------------------------ */
/* Established and closing states                                           */

static void
rtt_sample(struct sk_tcp_conn *c, uint32_t r)
{
	struct sk_net_lcore *net = c->net;
	uint32_t rto;

	if (r == 0)
		r = 1;
	if (c->srtt8 == 0) {
		c->srtt8 = r << 3;
		c->rttvar4 = r << 1;
	} else {
		int32_t delta = (int32_t)r - (int32_t)(c->srtt8 >> 3);
		int32_t adelta = delta < 0 ? -delta : delta;

		c->srtt8 = (uint32_t)((int32_t)c->srtt8 + delta);
		c->rttvar4 = (uint32_t)((int32_t)c->rttvar4 + adelta - (int32_t)(c->rttvar4 >> 2));
	}
	rto = (c->srtt8 >> 3) + RTE_MAX(1u, c->rttvar4);
	c->rto = RTE_MIN(RTE_MAX(rto, net->rto_min), net->rto_max);
}

/* @ack acknowledges new data (snd_una < ack <= snd_max). */
static void
tcp_ack_new(struct sk_tcp_conn *c, uint32_t ack)
{
	struct sk_net_lcore *net = c->net;
	uint32_t acked = ack - c->snd_una;
	bool fin_acked = false;

	if ((c->flags & SK_TCPF_FIN_SENT) && !(c->flags & SK_TCPF_FIN_ACKED) &&
	    sk_seq_gt(ack, c->fin_seq)) {
		fin_acked = true;
		c->flags |= SK_TCPF_FIN_ACKED;
		acked--;
	}
	if (acked > c->snd_len)
		acked = c->snd_len;
	c->snd_head = (c->snd_head + acked) % net->conf.snd_buf_size;
	c->snd_len -= acked;
	c->snd_una = ack;
	if (sk_seq_lt(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	if ((c->flags & SK_TCPF_RTT_ACTIVE) && sk_seq_geq(ack, c->rtt_seq)) {
		c->flags &= ~SK_TCPF_RTT_ACTIVE;
		rtt_sample(c, (uint32_t)(net->now_tick - c->rtt_start));
	}
	c->retries = 0;
	if (c->snd_una == c->snd_max) {
		c->flags &= ~SK_TCPF_RTO_ARMED;
	} else {
		c->flags |= SK_TCPF_RTO_ARMED;
		c->rto_deadline = net->now_tick + c->rto;
	}
	if (!fin_acked)
		return;
	switch (c->state) {
	case SK_TCP_FIN_WAIT_1:
		c->state = SK_TCP_FIN_WAIT_2;
		break;
	case SK_TCP_CLOSING:
		sk_tcp_conn_time_wait(c);
		break;
	case SK_TCP_LAST_ACK:
		sk_tcp_conn_destroy(c); /* graceful end: on_close is queued */
		break;
	default:
		break;
	}
}

static void
tcp_input_conn(struct sk_tcp_conn *c, const struct tcp_seg *s)
{
	struct sk_net_lcore *net = c->net;
	uint32_t wnd = sk_tcp_rcv_wnd(c);
	uint32_t seglen = seg_seqlen(s);
	uint32_t seq = s->seq, len = s->len;
	const uint8_t *data = s->data;
	bool fin = s->flags & RTE_TCP_FIN_FLAG, ok, deliver = false;

	/* RST (RFC 5961 §3) */
	if (s->flags & RTE_TCP_RST_FLAG) {
		if (seq == c->rcv_nxt) {
			net->stats.tcp_rst_rx++;
			sk_tcp_conn_destroy(c);
		} else if (wnd > 0 && sk_seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd)) {
			challenge_ack(c);
		} else {
			net->stats.tcp_rst_ignored++;
		}
		return;
	}
	/* SYN in a synchronised state (RFC 5961 §4) */
	if (s->flags & RTE_TCP_SYN_FLAG) {
		challenge_ack(c);
		return;
	}
	/* Sequence acceptability (RFC 9293 §3.10.7.4) */
	if (seglen == 0)
		ok = wnd == 0 ? seq == c->rcv_nxt : sk_seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd);
	else if (wnd == 0)
		ok = seq == c->rcv_nxt; /* zero-window probe: take its ACK, trim its byte */
	else
		ok = sk_seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
		     sk_seq_in(seq + seglen - 1, c->rcv_nxt, c->rcv_nxt + wnd);
	if (!ok) {
		net->stats.tcp_unacceptable++;
		ack_soon(c);
		return;
	}
	if (!(s->flags & RTE_TCP_ACK_FLAG)) {
		net->stats.tcp_drop_hdr++;
		return;
	}
	/* ACK (RFC 5961 §5) */
	if (sk_seq_gt(s->ack, c->snd_max)) {
		net->stats.tcp_ack_invalid++;
		ack_soon(c);
		return;
	}
	if (sk_seq_lt(s->ack, c->snd_una - c->max_snd_wnd)) {
		net->stats.tcp_ack_invalid++;
		challenge_ack(c);
		return;
	}
	/*
	 * The segment is acceptable and its ACK valid: only now may it say where
	 * the peer is. Only progress (new data acknowledged, below: new data or
	 * a FIN) postpones the idle timer; pure or duplicate ACKs do not, so a
	 * peer cannot hold a connection open with ACKs alone.
	 */
	c->rmac = *s->smac;
	if (sk_seq_gt(s->ack, c->snd_una)) {
		c->last_rx = net->now_tick;
		tcp_ack_new(c, s->ack);
		if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT)
			return;
	}
	if (sk_seq_lt(c->snd_wl1, seq) || (c->snd_wl1 == seq && sk_seq_leq(c->snd_wl2, s->ack))) {
		c->snd_wnd = s->win;
		c->snd_wl1 = seq;
		c->snd_wl2 = s->ack;
		if (s->win > c->max_snd_wnd)
			c->max_snd_wnd = s->win;
	}
	if (sk_seq_lt(c->snd_nxt, c->snd_una + c->snd_len) ||
	    ((c->flags & SK_TCPF_FIN_QUEUED) && !(c->flags & SK_TCPF_FIN_SENT)))
		sk_tcp_conn_want_output(c);

	/* Data and FIN: only before the peer's FIN. */
	if (c->state != SK_TCP_ESTABLISHED && c->state != SK_TCP_FIN_WAIT_1 &&
	    c->state != SK_TCP_FIN_WAIT_2)
		goto out;
	if (len == 0 && !fin)
		goto out;
	if (sk_seq_lt(seq, c->rcv_nxt)) { /* overlap with what we have */
		uint32_t skip = c->rcv_nxt - seq;

		if (skip > len)
			skip = len;
		data += skip;
		len -= skip;
		seq += skip;
	}
	if (seq != c->rcv_nxt) {
		/* Out of order: no reassembly. Drop, and dup-ACK so the peer resends. */
		net->stats.tcp_ooo_drop++;
		ack_soon(c);
		goto out;
	}
	if (len > wnd) {
		if (wnd == 0)
			net->stats.tcp_zwp_rx++;
		else
			net->stats.tcp_win_trim++;
		len = wnd;
		fin = false; /* the FIN lies beyond what we keep */
		ack_soon(c);
	}
	if (len) {
		if (c->flags & SK_TCPF_APP_CLOSED) {
			net->stats.tcp_data_after_close += len;
		} else {
			memcpy(c->rcv_buf + c->rcv_len, data, len);
			c->rcv_len += len;
			deliver = true;
		}
		c->rcv_nxt += len;
		c->last_rx = net->now_tick;
		net->stats.tcp_rx_data += len;
		ack_soon(c);
	}
	if (fin) {
		c->rcv_nxt++;
		c->last_rx = net->now_tick;
		c->flags |= SK_TCPF_PEER_FIN | SK_TCPF_FIN_NOTIFY;
		ack_soon(c);
		deliver = true;
		if (c->state == SK_TCP_ESTABLISHED) {
			c->state = SK_TCP_CLOSE_WAIT;
		} else if (c->state == SK_TCP_FIN_WAIT_1) {
			c->state = SK_TCP_CLOSING;
		} else {
			sk_tcp_conn_time_wait(c);
			return;
		}
	}
	if (deliver) {
		sk_tcp_conn_deliver(c, false);
		if (c->state == SK_TCP_CLOSED)
			return;
	}
out:
	sk_tcp_conn_timer_update(c);
}

/*
 * tcp_input_syn_sent - a segment for our active open (RFC 9293 §3.10.7.3):
 * a SYN-ACK of our SYN establishes it, an RST that acknowledges our SYN
 * means refused; an ACK of anything else earns an RST; the rest is dropped.
 */
static void
tcp_input_syn_sent(struct sk_tcp_conn *c, const struct tcp_seg *s)
{
	struct sk_net_lcore *net = c->net;
	bool ack_ok = (s->flags & RTE_TCP_ACK_FLAG) && s->ack == c->snd_una;

	if ((s->flags & RTE_TCP_ACK_FLAG) && !ack_ok) {
		if (!(s->flags & RTE_TCP_RST_FLAG))
			reset_for(net, s);
		net->stats.tcp_ack_invalid++;
		return;
	}
	if (s->flags & RTE_TCP_RST_FLAG) {
		if (ack_ok) {
			net->stats.tcp_connect_refused++;
			sk_tcp_conn_destroy(c);
		} else {
			net->stats.tcp_rst_ignored++;
		}
		return;
	}
	if (!(s->flags & RTE_TCP_SYN_FLAG) || !ack_ok) {
		net->stats.tcp_drop_hdr++; /* no simultaneous open */
		return;
	}
	net->stats.tcp_connect_ok++;
	c->state = SK_TCP_ESTABLISHED;
	c->rmac = *s->smac;
	c->mss = RTE_MIN(s->mss ? s->mss : 536, sk_tcp_our_mss(c));
	c->rcv_nxt = s->seq + 1;
	c->snd_nxt = c->snd_max = c->snd_una;
	c->snd_wnd = c->max_snd_wnd = s->win;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	c->retries = 0;
	c->rto = net->rto_init;
	c->flags &= ~SK_TCPF_RTO_ARMED;
	c->last_rx = net->now_tick;
	/* The ACK of the SYN-ACK, with the request if the app queued one. */
	ack_soon(c);
	sk_tcp_conn_timer_update(c);
}

static void
tcp_input_time_wait(struct sk_tcp_conn *c, const struct tcp_seg *s)
{
	struct sk_net_lcore *net = c->net;

	if (s->flags & RTE_TCP_RST_FLAG) {
		net->stats.tcp_rst_ignored++; /* RFC 1337: no TIME_WAIT assassination */
		return;
	}
	if ((s->flags & RTE_TCP_SYN_FLAG) && !(s->flags & RTE_TCP_ACK_FLAG)) {
		/* A new connection on the same 4-tuple: recycle and answer with a cookie. */
		net->stats.tcp_tw_recycled++;
		sk_tcp_conn_destroy(c);
		tcp_input_listen(net, s);
		return;
	}
	if (s->len || (s->flags & RTE_TCP_FIN_FLAG)) {
		/* Typically the peer's FIN again: our last ACK was lost. */
		c->rmac = *s->smac;
		sk_tcp_send_ack(c);
	}
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */

/*
 * tcp_parse - read the segment at @th (@l4len bytes, checksum verified)
 * into @s; the addresses are the caller's. False (counted) if malformed.
 */
static bool
tcp_parse(struct sk_net_lcore *net, const struct rte_mbuf *m, const struct rte_tcp_hdr *th,
	  uint32_t l4len, struct tcp_seg *s)
{
	uint32_t doff = (uint32_t)(th->data_off >> 4) * 4;

	if (doff < sizeof(*th) || doff > l4len) {
		net->stats.tcp_drop_hdr++;
		return false;
	}
	net->stats.tcp_rx++;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->win = rte_be_to_cpu_16(th->rx_win);
	s->flags = th->tcp_flags & (RTE_TCP_FIN_FLAG | RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG |
				    RTE_TCP_PSH_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_URG_FLAG);
	s->data = (const uint8_t *)th + doff;
	s->len = l4len - doff;
	s->mss = (s->flags & RTE_TCP_SYN_FLAG)
			 ? parse_mss((const uint8_t *)(th + 1), doff - sizeof(*th))
			 : 0;
	s->sport = rte_be_to_cpu_16(th->src_port);
	s->dport = rte_be_to_cpu_16(th->dst_port);
	s->smac = &rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->src_addr;
	if (s->sport == 0) {
		net->stats.tcp_drop_hdr++;
		return false;
	}
	return true;
}

/* tcp_dispatch - hand @s to its connection @c's state, or to the listener. */
static void
tcp_dispatch(struct sk_net_lcore *net, struct sk_tcp_conn *c, const struct tcp_seg *s)
{
	if (c == NULL) {
		if (!sk_tcp_listening(net, s->dport)) {
			net->stats.tcp_drop_port++;
			reset_for(net, s);
		} else {
			tcp_input_listen(net, s);
		}
	} else if (c->state == SK_TCP_TIME_WAIT) {
		tcp_input_time_wait(c, s);
	} else if (c->state == SK_TCP_SYN_SENT) {
		tcp_input_syn_sent(c, s);
	} else {
		tcp_input_conn(c, s);
	}
}

void
sk_tcp_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint32_t l4len = rte_be_to_cpu_16(ip->total_length) - (uint32_t)sizeof(*ip);
	uint64_t ck;
	struct tcp_seg s;

	if (l4len < sizeof(*th)) {
		net->stats.drop_short++;
		goto out;
	}
	ck = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	if (ck == RTE_MBUF_F_RX_L4_CKSUM_BAD ||
	    (ck != RTE_MBUF_F_RX_L4_CKSUM_GOOD && sk_cksum_ipv4_l4(ip, th, l4len) != 0xffff)) {
		net->stats.tcp_drop_cksum++;
		goto out;
	}
	if (!tcp_parse(net, m, th, l4len, &s))
		goto out;
	s.sip = rte_be_to_cpu_32(ip->src_addr);
	s.dip = rte_be_to_cpu_32(ip->dst_addr);
	s.sip6 = s.dip6 = NULL;
	tcp_dispatch(net, sk_tcp_conn_lookup_rx(net, m, s.sip, s.sport, s.dip, s.dport), &s);
out:
	sk_net_rx_done(net, m);
}

void
sk_tcp_input6(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip, uint32_t off,
	      uint32_t len)
{
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)(ip + 1) + off);
	uint64_t ck;
	struct tcp_seg s;

	if (len < sizeof(*th)) {
		net->stats.drop_short++;
		goto out;
	}
	/* TCP is unicast: not to a group (sk_ipv6_input let ND's groups in). */
	if (!sk_ipv6_is_ours(net, ip->dst_addr)) {
		net->stats.ip6_drop_not_us++;
		goto out;
	}
	ck = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	if (ck == RTE_MBUF_F_RX_L4_CKSUM_BAD ||
	    (ck != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	     sk_ipv6_l4_cksum(ip->src_addr, ip->dst_addr, IPPROTO_TCP, th, len) != 0)) {
		net->stats.tcp_drop_cksum++;
		goto out;
	}
	if (!tcp_parse(net, m, th, len, &s))
		goto out;
	s.sip = s.dip = 0;
	s.sip6 = ip->src_addr;
	s.dip6 = ip->dst_addr;
	tcp_dispatch(net, sk_tcp_conn_lookup6(net, s.sip6, s.sport, s.dip6, s.dport), &s);
out:
	sk_net_rx_done(net, m);
}
