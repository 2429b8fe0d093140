/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tcp_out.c - TCP output and the connection timer.
 *
 * Segment building: every frame is a fresh mbuf from the lcore's pool
 * (Ethernet + IPv4 or IPv6 + TCP [+ MSS option] + payload copied from the
 * send ring), checksummed in software unless the port offloads it.
 *
 * Sending: sk_tcp_output() sends what the peer's window allows from snd_nxt,
 * then the FIN once all data is out; it piggybacks the owed ACK, or sends a
 * pure ACK. Retransmission is go-back-N from snd_una when the RTO fires
 * (responses are a few segments at most). The RTO follows RFC 6298 (SRTT /
 * RTTVAR, Karn's rule, exponential backoff up to rto_max); after
 * max_retries consecutive expiries the connection is reset. With a zero
 * peer window the same timer sends one-byte zero-window probes.
 *
 * Timer: one wheel entry per connection, armed for the earliest of its RTO,
 * idle and TIME_WAIT deadlines; see sk_tcp_on_timer().
 */
#include <string.h>

#include "sk_net_priv.h"

#define TCP_HDR_LEN   20
#define TCP_MSS_OPT   4
#define SEGS_PER_CALL 64 /* bound on segments per output call */

/* The two ends of a segment: IPv4 addresses, or IPv6 ones when sip6 is not NULL. */
struct tcp_ends {
	uint32_t sip, dip;
	const uint8_t *sip6, *dip6;
	uint16_t sport, dport;
};

static inline struct tcp_ends
conn_ends(const struct sk_tcp_conn *c)
{
	struct tcp_ends e = {c->lip, c->rip, NULL, NULL, c->lport, c->rport};

	if (c->flags & SK_TCPF_V6) {
		e.sip6 = c->lip6;
		e.dip6 = c->rip6;
	}
	return e;
}

/* tcp_l3 - the Ethernet and IP headers of a segment of @l4 bytes; returns its TCP header. */
static struct rte_tcp_hdr *
tcp_l3(struct sk_net_lcore *net, struct rte_mbuf *m, const struct rte_ether_addr *dmac,
       const struct tcp_ends *e, uint32_t l4)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip;

	if (e->sip6 != NULL) {
		sk_ipv6_fill(net, m, e->sip6, e->dip6, dmac, IPPROTO_TCP, 64, (uint16_t)l4);
		return (struct rte_tcp_hdr *)((uint8_t *)(eth + 1) + sizeof(struct rte_ipv6_hdr));
	}
	eth->dst_addr = *dmac;
	eth->src_addr = net->conf.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	sk_ipv4_fill(ip, e->sip, e->dip, IPPROTO_TCP, (uint16_t)l4);
	return (struct rte_tcp_hdr *)(ip + 1);
}

/*
 * Checksums are summed from the values and from the send ring, never read
 * back from the frame: a header just stored field by field and read again
 * as 8-byte words stalls on store-to-load forwarding, and the payload
 * copy is as fresh. Every sum below is of 16-bit words as they lie in the
 * frame (network order), so a big-endian field adds as its stored value.
 */

/* phdr_sum - the pseudo-header of a TCP segment of @l4 bytes between @e. */
static inline uint64_t
phdr_sum(const struct tcp_ends *e, uint32_t l4)
{
	if (e->sip6 != NULL) /* RFC 8200 §8.1: 32-bit length, 24 zero bits, next header */
		return sk_cksum_add(sk_cksum_add(0, e->sip6, 16), e->dip6, 16) +
		       rte_cpu_to_be_32(l4) + rte_cpu_to_be_32(IPPROTO_TCP);
	return (uint64_t)rte_cpu_to_be_32(e->sip) + rte_cpu_to_be_32(e->dip) +
	       rte_cpu_to_be_16(IPPROTO_TCP) + rte_cpu_to_be_16((uint16_t)l4);
}

/* ring_sum - the sum of @len bytes of @c's send ring from offset @pos, of
 * which @first lie before the ring's end; the rest starts at offset @first
 * of the payload: an odd offset swaps its bytes (RFC 1071). */
static inline uint64_t
ring_sum(const struct sk_tcp_conn *c, uint32_t pos, uint32_t first, uint32_t len)
{
	uint64_t s = sk_cksum_add(0, c->snd_buf + pos, first);
	uint16_t rest;

	if (first == len)
		return s;
	rest = sk_cksum_fold(sk_cksum_add(0, c->snd_buf, len - first));
	return s + ((first & 1) ? rte_bswap16(rest) : rest);
}

/* tcp_offload - the TCP checksum offload fields of @m (the NIC sums the
 * segment from the pseudo-header sum in the checksum field). */
static void
tcp_offload(struct rte_mbuf *m, const struct tcp_ends *e, struct rte_tcp_hdr *th, uint32_t hdr_len)
{
	m->l4_len = (uint8_t)hdr_len;
	if (e->sip6 != NULL) {
		m->ol_flags |= RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = rte_ipv6_phdr_cksum((struct rte_ipv6_hdr *)th - 1, m->ol_flags);
	} else {
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = rte_ipv4_phdr_cksum((struct rte_ipv4_hdr *)th - 1, m->ol_flags);
	}
}

/*
 * Build one segment between the ends @e, to @dmac, and queue it. Payload,
 * if any, comes from @c's send ring at offset @off from snd_una.
 */
static bool
tcp_xmit(struct sk_net_lcore *net, const struct rte_ether_addr *dmac, const struct tcp_ends *e,
	 uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win, uint16_t mss_opt,
	 const struct sk_tcp_conn *c, uint32_t off, uint32_t len)
{
	uint32_t optlen = mss_opt ? TCP_MSS_OPT : 0;
	uint32_t l4 = TCP_HDR_LEN + optlen + len;
	uint32_t l3 = e->sip6 != NULL ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
	uint8_t doff = (uint8_t)(((TCP_HDR_LEN + optlen) / 4) << 4);
	struct rte_mbuf *m = sk_net_mbuf_get(net);
	struct rte_ether_hdr *eth;
	struct rte_tcp_hdr *th;
	uint64_t sum;
	uint8_t *p;

	if (m == NULL) {
		net->stats.tx_nombuf++;
		return false;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eth) + l3 + l4));
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		net->stats.tx_nombuf++;
		return false;
	}
	th = tcp_l3(net, m, dmac, e, l4);
	th->src_port = rte_cpu_to_be_16(e->sport);
	th->dst_port = rte_cpu_to_be_16(e->dport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = doff;
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(win);
	th->cksum = 0;
	th->tcp_urp = 0;
	sum = (uint64_t)rte_cpu_to_be_16(e->sport) + rte_cpu_to_be_16(e->dport) +
	      rte_cpu_to_be_32(seq) + rte_cpu_to_be_32(ack) +
	      rte_cpu_to_be_16((uint16_t)(doff << 8 | flags)) + rte_cpu_to_be_16(win);
	p = (uint8_t *)(th + 1);
	if (mss_opt) {
		p[0] = 2; /* kind MSS */
		p[1] = 4;
		p[2] = (uint8_t)(mss_opt >> 8);
		p[3] = (uint8_t)mss_opt;
		p += TCP_MSS_OPT;
		sum += rte_cpu_to_be_16(0x0204) + rte_cpu_to_be_16(mss_opt);
	}
	if (len) {
		uint32_t size = net->conf.snd_buf_size;
		uint32_t pos = (c->snd_head + off) % size;
		uint32_t first = RTE_MIN(len, size - pos);

		memcpy(p, c->snd_buf + pos, first);
		if (first < len)
			memcpy(p + first, c->snd_buf, len - first);
		sum += ring_sum(c, pos, first, len);
	}
	if (e->sip6 == NULL)
		sk_ipv4_tx_flags(net, m, (struct rte_ipv4_hdr *)th - 1);
	if (net->conf.tx_tcp_cksum_offload)
		tcp_offload(m, e, th, TCP_HDR_LEN + optlen);
	else
		th->cksum = (uint16_t)~sk_cksum_fold(sum + phdr_sum(e, l4));
	net->stats.tcp_tx_segs++;
	net->stats.tcp_tx_data += len;
	sk_net_tx_enqueue(net, m);
	return true;
}

void
sk_tcp_send_raw(struct sk_net_lcore *net, const struct rte_ether_addr *dmac, uint32_t sip,
		uint16_t sport, uint32_t dip, uint16_t dport, const uint8_t *sip6,
		const uint8_t *dip6, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t mss_opt)
{
	struct tcp_ends e = {sip, dip, sip6, dip6, sport, dport};
	uint16_t win = 0;

	if (flags & RTE_TCP_SYN_FLAG)
		win = (uint16_t)RTE_MIN(net->conf.rcv_buf_size, 65535u);
	tcp_xmit(net, dmac, &e, seq, ack, flags, win, mss_opt, NULL, 0, 0);
}

static bool
conn_xmit(struct sk_tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t off, uint32_t len)
{
	uint32_t wnd = sk_tcp_rcv_wnd(c);
	struct tcp_ends e = conn_ends(c);

	if (!tcp_xmit(c->net, &c->rmac, &e, seq, c->rcv_nxt, flags, (uint16_t)wnd, 0, c, off, len))
		return false;
	c->rcv_adv_wnd = wnd;
	c->flags &= ~SK_TCPF_ACK_NOW;
	return true;
}

void
sk_tcp_send_ack(struct sk_tcp_conn *c)
{
	conn_xmit(c, c->snd_nxt, RTE_TCP_ACK_FLAG, 0, 0);
}

void
sk_tcp_send_rst_conn(struct sk_tcp_conn *c)
{
	struct tcp_ends e = conn_ends(c);

	if (c->state == SK_TCP_SYN_SENT) /* no ACK to give: RFC 9293 RST for SYN-SENT */
		tcp_xmit(c->net, &c->rmac, &e, c->snd_una, 0, RTE_TCP_RST_FLAG, 0, 0, NULL, 0, 0);
	else
		tcp_xmit(c->net, &c->rmac, &e, c->snd_max, c->rcv_nxt,
			 RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, 0, NULL, 0, 0);
}

static void
rto_arm(struct sk_tcp_conn *c)
{
	c->flags |= SK_TCPF_RTO_ARMED;
	c->rto_deadline = c->net->now_tick + c->rto;
}

/*
 * syn_output - SYN_SENT: our SYN (ISS = snd_una - 1, our MSS), the first
 * time or, with @force, again (the RTO fired); nothing else goes out
 * before the SYN-ACK.
 */
static void
syn_output(struct sk_tcp_conn *c, bool force)
{
	struct sk_net_lcore *net = c->net;
	uint16_t win = (uint16_t)RTE_MIN(net->conf.rcv_buf_size, 65535u);
	struct tcp_ends e = conn_ends(c);

	if ((c->flags & SK_TCPF_SYN_OUT) && !force)
		return;
	if (!tcp_xmit(net, &c->rmac, &e, c->snd_una - 1, 0, RTE_TCP_SYN_FLAG, win,
		      sk_tcp_our_mss(c), c, 0, 0))
		return; /* no mbuf: the RTO tries again */
	if (c->flags & SK_TCPF_SYN_OUT)
		net->stats.tcp_syn_retransmits++;
	c->flags |= SK_TCPF_SYN_OUT;
	c->rcv_adv_wnd = win;
	if (!(c->flags & SK_TCPF_RTO_ARMED) || force)
		rto_arm(c);
	sk_tcp_conn_timer_update(c);
}

void
sk_tcp_output(struct sk_tcp_conn *c, bool force)
{
	struct sk_net_lcore *net = c->net;
	uint32_t data_end, avail = 0;
	bool sent = false;
	unsigned i;

	if (c->state == SK_TCP_CLOSED)
		return;
	if (c->state == SK_TCP_TIME_WAIT) {
		if (c->flags & SK_TCPF_ACK_NOW)
			sk_tcp_send_ack(c);
		return;
	}
	if (c->state == SK_TCP_SYN_SENT) {
		syn_output(c, force);
		return;
	}
	data_end = c->snd_una + c->snd_len;
	for (i = 0; i < SEGS_PER_CALL; i++) {
		uint32_t wend = c->snd_una + c->snd_wnd;
		uint32_t usable = sk_seq_lt(c->snd_nxt, wend) ? wend - c->snd_nxt : 0;
		uint32_t n;
		bool probe = false, fin;
		uint8_t flags = RTE_TCP_ACK_FLAG;

		avail = sk_seq_lt(c->snd_nxt, data_end) ? data_end - c->snd_nxt : 0;
		n = RTE_MIN(RTE_MIN(avail, usable), (uint32_t)c->mss);
		if (force && !sent && n == 0 && avail > 0) {
			n = 1; /* zero-window probe: one byte of real data */
			probe = true;
		}
		fin = (c->flags & SK_TCPF_FIN_QUEUED) && !(c->flags & SK_TCPF_FIN_ACKED) &&
		      c->snd_nxt + n == data_end;
		if (n == 0 && !fin)
			break;
		if (n)
			flags |= RTE_TCP_PSH_FLAG;
		if (fin)
			flags |= RTE_TCP_FIN_FLAG;
		if (!conn_xmit(c, c->snd_nxt, flags, c->snd_nxt - c->snd_una, n))
			break;
		if (n && !(c->flags & SK_TCPF_RTT_ACTIVE) && c->snd_nxt == c->snd_max) {
			c->flags |= SK_TCPF_RTT_ACTIVE;
			c->rtt_seq = c->snd_nxt + n;
			c->rtt_start = net->now_tick;
		}
		c->snd_nxt += n + (fin ? 1 : 0);
		if (sk_seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		sent = true;
		if (probe)
			net->stats.tcp_zwp_tx++;
		if (fin) {
			c->flags |= SK_TCPF_FIN_SENT;
			c->fin_seq = data_end;
			if (c->state == SK_TCP_ESTABLISHED)
				c->state = SK_TCP_FIN_WAIT_1;
			else if (c->state == SK_TCP_CLOSE_WAIT)
				c->state = SK_TCP_LAST_ACK;
		}
		if (probe || fin)
			break;
	}
	if (!sent && (c->flags & SK_TCPF_ACK_NOW))
		sk_tcp_send_ack(c);

	/* RTO for data/FIN in flight, or persist for data held back by a zero window. */
	avail = sk_seq_lt(c->snd_nxt, data_end) ? data_end - c->snd_nxt : 0;
	if (c->snd_una != c->snd_max || avail > 0) {
		if (!(c->flags & SK_TCPF_RTO_ARMED))
			rto_arm(c);
	} else {
		c->flags &= ~SK_TCPF_RTO_ARMED;
	}
	if (i == SEGS_PER_CALL)
		sk_tcp_conn_want_output(c); /* more than SEGS_PER_CALL: next flush */
	sk_tcp_conn_timer_update(c);
}

/* The RTO (or persist timer) expired. */
static void
tcp_rto_expired(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	uint32_t data_end = c->snd_una + c->snd_len;

	c->flags &= ~SK_TCPF_RTO_ARMED;
	if (c->snd_una == c->snd_max && !sk_seq_lt(c->snd_nxt, data_end))
		return; /* nothing outstanding any more */
	if (++c->retries > net->conf.max_retries) {
		net->stats.tcp_rto_reset++;
		net->stats.tcp_rst_tx++;
		sk_tcp_send_rst_conn(c);
		sk_tcp_conn_destroy(c);
		return;
	}
	c->rto = RTE_MIN(c->rto * 2, net->rto_max);
	c->flags &= ~SK_TCPF_RTT_ACTIVE; /* Karn: no sample from a retransmission */
	if (c->snd_una != c->snd_max)
		net->stats.tcp_retransmits++;
	c->snd_nxt = c->snd_una;
	rto_arm(c);
	sk_tcp_output(c, true);
}

void
sk_tcp_on_timer(struct sk_tcp_conn *c)
{
	struct sk_net_lcore *net = c->net;
	uint64_t now = net->now_tick;

	if (c->state == SK_TCP_TIME_WAIT) {
		if (now >= c->tw_deadline)
			sk_tcp_conn_destroy(c);
		else
			sk_tcp_conn_timer_update(c);
		return;
	}
	if (c->state == SK_TCP_SYN_SENT && (c->flags & SK_TCPF_RTO_ARMED) &&
	    now >= c->rto_deadline) {
		c->flags &= ~SK_TCPF_RTO_ARMED;
		if (++c->retries > net->conf.max_retries) {
			net->stats.tcp_connect_timeout++;
			sk_tcp_conn_destroy(c);
			return;
		}
		c->rto = RTE_MIN(c->rto * 2, net->rto_max);
		syn_output(c, true);
		if (!(c->flags & SK_TCPF_RTO_ARMED))
			rto_arm(c); /* the SYN could not be built: try again later */
	}
	if ((c->flags & SK_TCPF_RTO_ARMED) && now >= c->rto_deadline) {
		tcp_rto_expired(c);
		if (c->state == SK_TCP_CLOSED)
			return;
	}
	if ((c->flags & SK_TCPF_DEADLINE) && now >= c->app_deadline) {
		c->flags &= ~SK_TCPF_DEADLINE;
		net->stats.tcp_app_timeout++;
		if (net->ops.on_timeout != NULL && (c->flags & SK_TCPF_APP_OPEN) &&
		    !(c->flags & SK_TCPF_APP_CLOSED)) {
			net->ops.on_timeout(net->app, c);
		} else {
			net->stats.tcp_rst_tx++;
			sk_tcp_send_rst_conn(c);
			sk_tcp_conn_destroy(c);
		}
		if (c->state == SK_TCP_CLOSED || c->state == SK_TCP_TIME_WAIT)
			return;
	}
	if (now >= sk_tcp_conn_idle_deadline(c)) {
		net->stats.tcp_idle_timeout++;
		if (c->flags & SK_TCPF_IN_FRESHQ)
			net->stats.tcp_idle_new++;
		if (c->state == SK_TCP_ESTABLISHED && !(c->flags & SK_TCPF_APP_CLOSED)) {
			/* Idle keep-alive connection: close it politely (FIN at the flush). */
			c->last_rx = now;
			sk_tcp_close(c);
		} else {
			/* Half-closed or closing and silent: reset. */
			net->stats.tcp_rst_tx++;
			sk_tcp_send_rst_conn(c);
			sk_tcp_conn_destroy(c);
			return;
		}
	}
	sk_tcp_conn_timer_update(c);
}
