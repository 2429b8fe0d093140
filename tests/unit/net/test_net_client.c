/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_client.c - the client side of the stack (sk_tcp_connect), for
 * the load generator: the SYN and its retransmission with backoff, the
 * SYN-ACK that establishes (the queued request leaving with the ACK), a
 * refused connection, a timed-out one, argument errors, and two stacks
 * wired back to back - a client with several addresses against a server -
 * exchanging requests over short connections until both tables are empty,
 * over IPv4 and over IPv6 (the next hop found by neighbour discovery).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_tcp.h>

#include "net_harness.h"
#include "sk_common.h"

#define ACK RTE_TCP_ACK_FLAG
#define SYN RTE_TCP_SYN_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

#define LPORT 50000
#define PEER  H_CLI_IP /* the server our stack connects to, port 80 */

static struct h_env E;

static const struct sk_net_stats *
st(void)
{
	return sk_net_lcore_stats(E.net);
}

/* peer - a frame from the server we connect to, to our LPORT. */
static struct rte_mbuf *
peer(uint32_t seq, uint32_t ack, uint8_t flags, const void *data, uint32_t len, uint16_t mss)
{
	return h_tcp_from(&E, PEER, 80, LPORT, seq, ack, flags, 65535, data, len, mss);
}

/* syn_of - the one captured frame is our SYN; returns its ISS. */
static uint32_t
syn_of(void)
{
	struct h_pkt p;

	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert(p.ip_ok && p.l4_ok);
	ck_assert_uint_eq(p.flags, SYN);
	ck_assert_uint_eq(p.mss, 1460);
	ck_assert_uint_eq(p.sip, H_SRV_IP);
	ck_assert_uint_eq(p.sport, LPORT);
	ck_assert_uint_eq(p.dip, PEER);
	ck_assert_uint_eq(p.dport, 80);
	ck_assert(rte_is_same_ether_addr(&p.dst, &h_cli_mac));
	return p.seq;
}

START_TEST(connect_request_reply_close)
{
	static const char req[] = "GET /healthz HTTP/1.1\r\n\r\n";
	static const char rsp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_flush(&E); /* the stack's clock: connect uses the time of the last pass */
	h_clear(&E);
	struct sk_tcp_conn *c = sk_tcp_connect(E.net, H_SRV_IP, LPORT, PEER, 80, &h_cli_mac);
	ck_assert_ptr_nonnull(c);
	ck_assert(!sk_tcp_established(c));
	ck_assert_uint_eq(sk_tcp_local_port(c), LPORT);
	ck_assert_uint_eq(sk_tcp_local_ip(c), H_SRV_IP);
	/* The request may be queued before the handshake. */
	ck_assert_int_eq(sk_tcp_send(c, req, sizeof(req) - 1), 0);
	h_flush(&E);
	uint32_t iss = syn_of(); /* the SYN only: no data before the SYN-ACK */
	ck_assert_int_eq(E.app.opened, 0);

	/* SYN-ACK (MSS 1400): established, the request leaves with the ACK. */
	h_clear(&E);
	h_rx(&E, peer(7000, iss + 1, SYN | ACK, NULL, 0, 1400));
	ck_assert(sk_tcp_established(c));
	ck_assert_uint_eq(st()->tcp_connect_ok, 1);
	ck_assert_uint_ge(h_ntx(&E), 1);
	ck_assert(h_parse(&E, h_ntx(&E) - 1, &p));
	ck_assert_uint_eq(p.ack, 7001);
	ck_assert_uint_eq(p.seq, iss + 1);
	ck_assert_uint_eq(p.len, sizeof(req) - 1);
	ck_assert(memcmp(p.data, req, p.len) == 0);
	ck_assert_int_eq(E.app.opened, 0); /* no on_open for an active open */

	/* The answer is delivered; then we close, the peer closes too. */
	h_clear(&E);
	h_rx(&E, peer(7001, iss + 1 + p.len, ACK | PSH, rsp, sizeof(rsp) - 1, 0));
	ck_assert_uint_eq(E.app.rx_len, sizeof(rsp) - 1);
	ck_assert(memcmp(E.app.rx, rsp, E.app.rx_len) == 0);
	sk_tcp_close(c);
	h_clear(&E);
	h_flush(&E);
	ck_assert(h_parse(&E, h_ntx(&E) - 1, &p));
	ck_assert(p.flags & FIN);
	uint32_t rcv = 7001 + sizeof(rsp) - 1;
	h_rx(&E, peer(rcv, p.seq + 1, ACK | FIN, NULL, 0, 0));
	ck_assert_uint_eq(st()->tcp_time_wait, 1);
	ck_assert_int_eq(E.app.closed, 1);
	h_advance(&E, 2100);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	h_stop(&E);
}
END_TEST

START_TEST(syn_retransmit_then_timeout)
{
	h_conf(&E);
	E.conf.max_retries = 3;
	h_start(&E);
	h_flush(&E);
	h_clear(&E);
	ck_assert_ptr_nonnull(sk_tcp_connect(E.net, H_SRV_IP, LPORT, PEER, 80, &h_cli_mac));
	h_flush(&E);
	uint32_t iss = syn_of();
	/* Backoff from rto_initial_ms (1000): SYNs again at 1 s, 3 s, 7 s. */
	static const unsigned at[] = {1000, 3000, 7000};
	uint64_t t = 0;
	for (unsigned i = 0; i < SK_ARRAY_SIZE(at); i++) {
		h_clear(&E);
		h_advance(&E, at[i] - t - 1);
		ck_assert_uint_eq(h_ntx(&E), 0);
		h_advance(&E, 1);
		ck_assert_uint_eq(syn_of(), iss); /* the same SYN */
		t = at[i];
	}
	ck_assert_uint_eq(st()->tcp_syn_retransmits, 3);
	/* No answer to the last one (8 s): given up, on_close. */
	h_advance(&E, 8000);
	ck_assert_uint_eq(st()->tcp_connect_timeout, 1);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	h_stop(&E);
}
END_TEST

START_TEST(refused_and_bad_acks)
{
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_flush(&E);
	h_clear(&E);
	ck_assert_ptr_nonnull(sk_tcp_connect(E.net, H_SRV_IP, LPORT, PEER, 80, &h_cli_mac));
	h_flush(&E);
	uint32_t iss = syn_of();
	/* An ACK of something else: we answer with an RST (seq = its ack). */
	h_clear(&E);
	h_rx(&E, peer(1, iss + 77, SYN | ACK, NULL, 0, 1460));
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert_uint_eq(p.flags, RST);
	ck_assert_uint_eq(p.seq, iss + 77);
	/* An RST that does not acknowledge our SYN is ignored. */
	h_clear(&E);
	h_rx(&E, peer(1, iss + 5, RST | ACK, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->tcp_conns, 1);
	/* A bare SYN (simultaneous open) is not supported: dropped. */
	h_rx(&E, peer(1, 0, SYN, NULL, 0, 1460));
	ck_assert_uint_eq(st()->tcp_conns, 1);
	/* The RST that acknowledges it: refused. */
	h_rx(&E, peer(0, iss + 1, RST | ACK, NULL, 0, 0));
	ck_assert_uint_eq(st()->tcp_connect_refused, 1);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	h_stop(&E);
}
END_TEST

START_TEST(connect_errors)
{
	const uint32_t FAR = SK_IPV4(198, 18, 0, 200);

	h_conf(&E);
	E.conf.max_conns = 2;
	E.conf.ip_count = 4;
	h_start(&E);
	h_flush(&E);
	/* Table: arguments -> errno. */
	static const struct {
		uint32_t lip;
		uint16_t lport;
		uint32_t rip;
		uint16_t rport;
		int err;
	} t[] = {
		{H_SRV_IP + 4, LPORT, FAR, 80, EINVAL},	     /* not one of ours */
		{H_SRV_IP, 0, FAR, 80, EINVAL},		     /* port 0 */
		{H_SRV_IP, H_PORT, FAR, 80, EINVAL},	     /* our listening port */
		{H_SRV_IP, LPORT, FAR, 0, EINVAL},	     /* peer port 0 */
		{H_SRV_IP, LPORT, H_SRV_IP + 2, 80, EINVAL}, /* ourselves */
	};
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		rte_errno = 0;
		ck_assert_ptr_null(sk_tcp_connect(E.net, t[i].lip, t[i].lport, t[i].rip, t[i].rport,
						  &h_cli_mac));
		ck_assert_int_eq(rte_errno, t[i].err);
	}
	ck_assert_ptr_nonnull(sk_tcp_connect(E.net, H_SRV_IP + 3, LPORT, FAR, 80, &h_cli_mac));
	ck_assert_ptr_null(sk_tcp_connect(E.net, H_SRV_IP + 3, LPORT, FAR, 80, &h_cli_mac));
	ck_assert_int_eq(rte_errno, EADDRINUSE);
	ck_assert_ptr_nonnull(sk_tcp_connect(E.net, H_SRV_IP + 3, LPORT + 1, FAR, 80, &h_cli_mac));
	ck_assert_ptr_null(sk_tcp_connect(E.net, H_SRV_IP + 3, LPORT + 2, FAR, 80, &h_cli_mac));
	ck_assert_int_eq(rte_errno, ENOSPC);
	ck_assert_uint_eq(st()->tcp_connect, 2);
	h_stop(&E);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Two stacks back to back                                                  */

#define WIRE_MAX 4096

struct wire {
	struct rte_mbuf *q[WIRE_MAX];
	unsigned n;
};

struct side {
	struct sk_net_lcore *net;
	struct wire out;
	int opened, closed, requests, answers;
	bool server;
};

static uint16_t
wire_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct wire *w = ctx;
	uint16_t i;

	for (i = 0; i < n && w->n < WIRE_MAX; i++)
		w->q[w->n++] = pkts[i];
	return i;
}

static void
side_open(void *app, struct sk_tcp_conn *c)
{
	(void)c;
	((struct side *)app)->opened++;
}

/* The server answers each "ping" with "pong" and closes; the client closes on the server's FIN. */
static size_t
side_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct side *s = app;

	if (s->server) {
		if (len >= 4) {
			ck_assert(memcmp(data, "ping", 4) == 0);
			s->requests++;
			ck_assert_int_eq(sk_tcp_send(c, "pong", 4), 0);
			sk_tcp_close(c);
			return len;
		}
		return 0;
	}
	if (len >= 4) {
		ck_assert(memcmp(data, "pong", 4) == 0);
		s->answers++;
	}
	if (sk_tcp_peer_closed(c))
		sk_tcp_close(c);
	return len;
}

static void
side_close(void *app, struct sk_tcp_conn *c)
{
	(void)c;
	((struct side *)app)->closed++;
}

static const struct sk_net_app_ops side_ops = {side_open, side_data, side_close, NULL};

static struct sk_net_lcore *
side_create(struct side *s, uint32_t ip, uint32_t ip_count, uint16_t port, const uint8_t mac_last,
	    const uint8_t *ip6)
{
	struct sk_net_conf conf;

	sk_net_conf_defaults(&conf);
	if (ip6 != NULL) {
		memcpy(conf.ip6, ip6, 16);
		conf.prefix6_len = 64;
	}
	conf.ip = ip;
	conf.ip_count = ip_count;
	conf.tcp_port = port;
	conf.mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, mac_last}};
	conf.max_conns = 64;
	conf.timer_slots = 256;
	conf.tsc_hz = H_HZ;
	conf.tx_fn = wire_tx;
	conf.tx_ctx = &s->out;
	if (!s->server)
		conf.gateway = H_SRV_IP; /* resolve the server by ARP */
	for (int i = 0; i < SK_NET_COOKIE_SECRET_LEN; i++)
		conf.cookie_secret[i] = (uint8_t)(mac_last + i);
	s->net = sk_net_lcore_create(&conf, 0, h_pool(), SOCKET_ID_ANY, &side_ops, s);
	ck_assert_ptr_nonnull(s->net);
	return s->net;
}

/* pump - step both stacks at @now until nothing is in flight (bounded). */
static void
pump(struct side *a, struct side *b, uint64_t now)
{
	for (int round = 0; round < 1000; round++) {
		struct wire wa = a->out, wb = b->out;

		a->out.n = 0;
		b->out.n = 0;
		sk_net_rx(b->net, wa.q, (uint16_t)wa.n, now);
		sk_net_rx(a->net, wb.q, (uint16_t)wb.n, now);
		sk_net_timers(a->net, now);
		sk_net_timers(b->net, now);
		sk_net_tx_flush(a->net);
		sk_net_tx_flush(b->net);
		if (a->out.n == 0 && b->out.n == 0)
			return;
	}
	ck_abort_msg("the two stacks never went quiet");
}

/*
 * two_stacks_end - after @n exchanges: each side saw all of them, the
 * server's TIME_WAITs end (it closed first), nothing was retransmitted, and
 * no mbuf leaked (@avail0: the pool before the test). Frees both stacks.
 */
static void
two_stacks_end(struct side *cli, struct side *srv, int n, uint64_t now, unsigned avail0)
{
	ck_assert_int_eq(srv->requests, n);
	ck_assert_int_eq(cli->answers, n);
	ck_assert_int_eq(cli->closed, n);
	ck_assert_int_eq(cli->opened, 0);
	ck_assert_int_eq(srv->opened, n);
	ck_assert_uint_eq(sk_net_lcore_stats(cli->net)->tcp_connect_ok, (unsigned)n);
	ck_assert_uint_eq(sk_net_lcore_stats(cli->net)->tcp_conns, 0);
	for (int ms = 0; ms < 2100; ms++) {
		now += H_MS;
		pump(cli, srv, now);
	}
	ck_assert_int_eq(srv->closed, n);
	ck_assert_uint_eq(sk_net_lcore_stats(srv->net)->tcp_conns, 0);
	ck_assert_uint_eq(sk_net_lcore_stats(cli->net)->tcp_retransmits, 0);
	ck_assert_uint_eq(sk_net_lcore_stats(srv->net)->tcp_retransmits, 0);
	sk_net_lcore_free(cli->net);
	sk_net_lcore_free(srv->net);
	ck_assert_uint_eq(rte_mempool_avail_count(h_pool()), avail0);
}

START_TEST(two_stacks_short_connections)
{
	static struct side cli, srv;
	const uint32_t cli_ip = SK_IPV4(198, 18, 0, 100);
	struct rte_ether_addr srv_mac;
	uint64_t now = 1000000ull * H_MS;
	unsigned avail0 = rte_mempool_avail_count(h_pool());

	memset(&cli, 0, sizeof(cli));
	memset(&srv, 0, sizeof(srv));
	srv.server = true;
	side_create(&srv, H_SRV_IP, 1, 80, 1, NULL);
	side_create(&cli, cli_ip, 4, 0, 2, NULL);
	/* The client ARPs its gateway (the server) first. */
	pump(&cli, &srv, now);
	ck_assert_int_eq(sk_net_arp_lookup(cli.net, H_SRV_IP, &srv_mac), 0);
	/* 40 short connections from 4 addresses, 10 at a time. */
	for (int wave = 0; wave < 4; wave++) {
		for (int i = 0; i < 10; i++) {
			int k = wave * 10 + i;
			struct sk_tcp_conn *c =
				sk_tcp_connect(cli.net, cli_ip + (uint32_t)(k % 4),
					       (uint16_t)(40000 + k), H_SRV_IP, 80, &srv_mac);

			ck_assert_ptr_nonnull(c);
			ck_assert_int_eq(sk_tcp_send(c, "ping", 4), 0);
		}
		now += H_MS;
		pump(&cli, &srv, now);
	}
	two_stacks_end(&cli, &srv, 40, now, avail0);
}
END_TEST

START_TEST(two_stacks_ipv6)
{
	static const uint8_t srv6[16] = {0x20, 0x01, 0, 2, [15] = 1};
	static const uint8_t cli6[16] = {0x20, 0x01, 0, 2, [15] = 0x64};
	static struct side cli, srv;
	struct rte_ether_addr srv_mac;
	uint64_t now = 1000000ull * H_MS;
	unsigned avail0 = rte_mempool_avail_count(h_pool());

	memset(&cli, 0, sizeof(cli));
	memset(&srv, 0, sizeof(srv));
	srv.server = true;
	side_create(&srv, H_SRV_IP, 1, 80, 1, srv6);
	side_create(&cli, SK_IPV4(198, 18, 0, 100), 1, 0, 2, cli6);
	/* The first lookup misses and solicits; the advertisement resolves it. */
	pump(&cli, &srv, now);
	ck_assert_int_eq(sk_net_nd_lookup(cli.net, srv6, &srv_mac), -ENOENT);
	sk_net_tx_flush(cli.net);
	pump(&cli, &srv, now);
	ck_assert_int_eq(sk_net_nd_lookup(cli.net, srv6, &srv_mac), 0);
	ck_assert_uint_eq(srv_mac.addr_bytes[5], 1);
	ck_assert_ptr_null(sk_tcp_connect6(cli.net, srv6, 40000, srv6, 80, &srv_mac));
	ck_assert_int_eq(rte_errno, EINVAL);
	for (int wave = 0; wave < 2; wave++) {
		for (int i = 0; i < 10; i++) {
			int k = wave * 10 + i;
			struct sk_tcp_conn *c = sk_tcp_connect6(
				cli.net, cli6, (uint16_t)(40000 + k), srv6, 80, &srv_mac);
			struct sk_addr a;

			ck_assert_ptr_nonnull(c);
			sk_tcp_remote_addr(c, &a);
			ck_assert_uint_eq(a.family, SK_ADDR_V6);
			ck_assert(memcmp(a.bytes, srv6, 16) == 0);
			ck_assert_int_eq(sk_tcp_send(c, "ping", 4), 0);
		}
		now += H_MS;
		pump(&cli, &srv, now);
	}
	ck_assert_uint_eq(sk_net_lcore_stats(srv.net)->tcp_cookie_ok, 20);
	ck_assert_uint_eq(sk_net_lcore_stats(srv.net)->tcp_drop_cksum, 0);
	two_stacks_end(&cli, &srv, 20, now, avail0);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("net_client");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, connect_request_reply_close);
	tcase_add_test(tc, syn_retransmit_then_timeout);
	tcase_add_test(tc, refused_and_bad_acks);
	tcase_add_test(tc, connect_errors);
	tcase_add_test(tc, two_stacks_short_connections);
	tcase_add_test(tc, two_stacks_ipv6);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], client_suite());
}
