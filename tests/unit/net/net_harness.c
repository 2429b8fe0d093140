/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_harness.c - see net_harness.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "net_harness.h"
#include "sk_test.h"
#include "sk_test_eal.h"
#include "sk_test_frame.h"

const struct rte_ether_addr h_srv_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
const struct rte_ether_addr h_cli_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};

#define POOL_SIZE 4095

static struct rte_mempool *g_pool;

void
h_eal_init(const char *argv0)
{
	if (sk_test_eal_init(argv0) != 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		exit(1);
	}
	g_pool = rte_pktmbuf_pool_create("h_pool", POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 SOCKET_ID_ANY);
	if (g_pool == NULL) {
		fprintf(stderr, "mempool create failed\n");
		exit(1);
	}
}

void
h_eal_cleanup(void)
{
	rte_mempool_free(g_pool);
	g_pool = NULL;
	sk_test_eal_cleanup();
}

struct rte_mempool *
h_pool(void)
{
	return g_pool;
}

/* ------------------------------------------------------------------------ */
/* App                                                                      */

static void
app_open(void *app, struct sk_tcp_conn *c)
{
	struct h_app *a = app;

	a->opened++;
	a->conn = c;
}

static size_t
app_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct h_app *a = app;
	size_t n = len < a->consume_max ? len : a->consume_max;

	a->data_calls++;
	a->last_offered = len;
	if (sk_tcp_peer_closed(c))
		a->fin_calls++;
	if (a->rx_len + n <= sizeof(a->rx)) {
		memcpy(a->rx + a->rx_len, data, n);
		a->rx_len += n;
	}
	if (n > 0 && a->reply != NULL) {
		ck_assert_int_eq(sk_tcp_send(c, a->reply, strlen(a->reply)), 0);
		if (a->close_after_reply)
			sk_tcp_close(c);
	}
	if (a->close_on_fin && sk_tcp_peer_closed(c))
		sk_tcp_close(c);
	return n;
}

static void
app_close(void *app, struct sk_tcp_conn *c)
{
	struct h_app *a = app;

	a->closed++;
	if (a->conn == c)
		a->conn = NULL;
}

static const struct sk_net_app_ops h_ops = {app_open, app_data, app_close, NULL};

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */

static uint16_t
h_txfn(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct h_env *e = ctx;
	uint16_t i;

	for (i = 0; i < n && e->ntx < H_TX_MAX; i++)
		e->tx[e->ntx++] = pkts[i];
	return i;
}

void
h_conf(struct h_env *e)
{
	memset(e, 0, sizeof(*e));
	e->pool = g_pool;
	e->pool_avail0 = rte_mempool_avail_count(g_pool);
	sk_net_conf_defaults(&e->conf);
	e->conf.ip = H_SRV_IP;
	e->conf.mac = h_srv_mac;
	e->conf.tcp_port = H_PORT;
	e->conf.max_conns = 16;
	e->conf.rcv_buf_size = 2048;
	e->conf.snd_buf_size = 4096;
	e->conf.time_wait_max = 8;
	e->conf.timer_slots = 256;
	e->conf.tsc_hz = H_HZ;
	for (int i = 0; i < SK_NET_COOKIE_SECRET_LEN; i++)
		e->conf.cookie_secret[i] = (uint8_t)(0x40 + i);
	e->conf.tx_fn = h_txfn;
	e->conf.tx_ctx = e;
	e->app.consume_max = SIZE_MAX;
	e->now = 1000000ull * H_MS; /* 1000 s after boot */
}

void
h_start(struct h_env *e)
{
	e->net = sk_net_lcore_create(&e->conf, 0, e->pool, SOCKET_ID_ANY, &h_ops, &e->app);
	ck_assert_ptr_nonnull(e->net);
}

void
h_clear(struct h_env *e)
{
	h_track(e); /* remember what the server sent before dropping the frames */
	for (unsigned i = 0; i < e->ntx; i++)
		rte_pktmbuf_free(e->tx[i]);
	e->ntx = 0;
}

void
h_stop(struct h_env *e)
{
	h_clear(e);
	sk_net_lcore_free(e->net);
	e->net = NULL;
	ck_assert_uint_eq(rte_mempool_avail_count(e->pool), e->pool_avail0);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */

struct sk_frame_ends
h_ends(uint32_t sip)
{
	return (struct sk_frame_ends){
		.src_mac = h_cli_mac, .dst_mac = h_srv_mac, .sip = sip, .dip = H_SRV_IP};
}

struct rte_mbuf *
h_tcp_from(struct h_env *e, uint32_t sip, uint16_t sport, uint16_t dport, uint32_t seq,
	   uint32_t ack, uint8_t flags, uint16_t win, const void *data, uint32_t len,
	   uint16_t mss_opt)
{
	struct sk_frame_ends ends = h_ends(sip);
	struct sk_frame_tcp t = {.sport = sport,
				 .dport = dport,
				 .seq = seq,
				 .ack = ack,
				 .flags = flags,
				 .win = win,
				 .has_mss = mss_opt != 0,
				 .mss = mss_opt,
				 .data = data,
				 .len = len};
	struct rte_mbuf *m = sk_frame_tcp(e->pool, &ends, &t);

	ck_assert_ptr_nonnull(m);
	return m;
}

struct rte_mbuf *
h_tcp(struct h_env *e, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win, const void *data,
      uint32_t len, uint16_t mss_opt)
{
	return h_tcp_from(e, H_CLI_IP, e->cport, H_PORT, seq, ack, flags, win, data, len, mss_opt);
}

void
h_flush(struct h_env *e)
{
	sk_net_timers(e->net, e->now);
	sk_net_tx_flush(e->net);
}

void
h_rx(struct h_env *e, struct rte_mbuf *m)
{
	sk_net_rx(e->net, &m, 1, e->now);
	sk_net_tx_flush(e->net);
}

void
h_advance(struct h_env *e, uint64_t ms)
{
	for (uint64_t i = 0; i < ms; i++) {
		e->now += H_MS;
		h_flush(e);
	}
}

unsigned
h_ntx(const struct h_env *e)
{
	return e->ntx;
}

bool
h_parse(const struct h_env *e, unsigned i, struct h_pkt *p)
{
	struct rte_mbuf *m;
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;

	if (i >= e->ntx)
		return false;
	memset(p, 0, sizeof(*p));
	m = e->tx[i];
	p->m = m;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	p->dst = eth->dst_addr;
	p->src = eth->src_addr;
	p->ethertype = rte_be_to_cpu_16(eth->ether_type);
	if (p->ethertype != RTE_ETHER_TYPE_IPV4)
		return true;
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	p->ip_ok = rte_raw_cksum(ip, sizeof(*ip)) == 0xffff;
	p->sip = rte_be_to_cpu_32(ip->src_addr);
	p->dip = rte_be_to_cpu_32(ip->dst_addr);
	p->proto = ip->next_proto_id;
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), 14 + rte_be_to_cpu_16(ip->total_length));
	if (p->proto == IPPROTO_TCP) {
		const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
		uint32_t doff = (th->data_off >> 4) * 4u;

		p->l4_ok = rte_ipv4_udptcp_cksum_verify(ip, th) == 0;
		p->sport = rte_be_to_cpu_16(th->src_port);
		p->dport = rte_be_to_cpu_16(th->dst_port);
		p->seq = rte_be_to_cpu_32(th->sent_seq);
		p->ack = rte_be_to_cpu_32(th->recv_ack);
		p->flags = th->tcp_flags;
		p->win = rte_be_to_cpu_16(th->rx_win);
		if (doff >= 24 && ((const uint8_t *)(th + 1))[0] == 2) {
			const uint8_t *o = (const uint8_t *)(th + 1);

			p->mss = (uint16_t)(o[2] << 8 | o[3]);
		}
		p->data = (const uint8_t *)th + doff;
		p->len = rte_be_to_cpu_16(ip->total_length) - 20 - doff;
	} else if (p->proto == IPPROTO_ICMP) {
		uint32_t l = rte_be_to_cpu_16(ip->total_length) - 20;

		p->l4_ok = rte_raw_cksum(ip + 1, l) == 0xffff;
		p->data = (const uint8_t *)(ip + 1);
		p->len = l;
	}
	return true;
}

void
h_track(struct h_env *e)
{
	struct h_pkt p;

	for (unsigned i = 0; i < e->ntx; i++) {
		if (!h_parse(e, i, &p) || p.proto != IPPROTO_TCP || p.dport != e->cport)
			continue;
		uint32_t end = p.seq + p.len + ((p.flags & RTE_TCP_FIN_FLAG) ? 1 : 0);

		if ((int32_t)(end - e->rcvd) > 0)
			e->rcvd = end;
	}
}

struct sk_tcp_conn *
h_connect(struct h_env *e, uint16_t cport)
{
	struct h_pkt p;
	int opened = e->app.opened;

	e->cport = cport;
	e->cisn = 0x10000000u + cport * 7919u;
	h_clear(e);
	h_rx(e, h_tcp(e, e->cisn, 0, RTE_TCP_SYN_FLAG, 65535, NULL, 0, 1460));
	ck_assert_uint_eq(h_ntx(e), 1);
	ck_assert(h_parse(e, 0, &p));
	ck_assert_uint_eq(p.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	e->srv = p.seq + 1;
	e->rcvd = e->srv;
	e->snd = e->cisn + 1;
	h_clear(e);
	h_rx(e, h_tcp(e, e->snd, e->srv, RTE_TCP_ACK_FLAG, 65535, NULL, 0, 0));
	ck_assert_int_eq(e->app.opened, opened + 1);
	ck_assert_uint_eq(h_ntx(e), 0);
	return e->app.conn;
}

void
h_send(struct h_env *e, const void *data, uint32_t len)
{
	h_rx(e,
	     h_tcp(e, e->snd, e->rcvd, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, 65535, data, len, 0));
	e->snd += len;
	h_track(e);
}

void
h_ack_all(struct h_env *e)
{
	h_track(e);
	h_rx(e, h_tcp(e, e->snd, e->rcvd, RTE_TCP_ACK_FLAG, 65535, NULL, 0, 0));
}

uint16_t
h_cksum6(const uint8_t *src, const uint8_t *dst, uint8_t nh, const uint8_t *msg, uint32_t len)
{
	uint32_t sum = 0;

	for (int i = 0; i < 16; i += 2)
		sum += (uint32_t)(src[i] << 8 | src[i + 1]) + (uint32_t)(dst[i] << 8 | dst[i + 1]);
	sum += (len >> 16) + (len & 0xffff) + nh;
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(msg[i] << 8 | msg[i + 1]);
	if (len & 1)
		sum += (uint32_t)msg[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int
h_run(const char *argv0, Suite *suite)
{
	int rc;

	h_eal_init(argv0);
	rc = sk_test_run(suite, true);
	h_eal_cleanup();
	return rc;
}
