/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_tcp.c - the TCP state machine driven with crafted frames:
 * cookie handshake, bad cookie, data, out-of-order, retransmission with
 * backoff and reset, RST rules with challenge ACKs, FIN both ways,
 * TIME_WAIT cap, zero windows, idle timeout, table full.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <rte_tcp.h>

#include "net_harness.h"
#include "sk_common.h"

#define ACK RTE_TCP_ACK_FLAG
#define SYN RTE_TCP_SYN_FLAG
#define FIN RTE_TCP_FIN_FLAG
#define RST RTE_TCP_RST_FLAG
#define PSH RTE_TCP_PSH_FLAG

static struct h_env E;

static const struct sk_net_stats *
st(void)
{
	return sk_net_lcore_stats(E.net);
}

/* Exactly one frame was sent; parse it. */
static void
one(struct h_pkt *p)
{
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, p));
	ck_assert(p->ip_ok);
	ck_assert(p->l4_ok);
}

/* ------------------------------------------------------------------------ */

START_TEST(handshake_synack)
{
	/* Table: client MSS option -> MSS the server must use (cookie table, capped at ours). */
	static const struct {
		uint16_t client_mss, expect_mss;
	} t[] = {{0, 536}, {1460, 1460}, {1400, 1360}, {9000, 1460}, {600, 536}, {100, 256}};

	h_conf(&E);
	h_start(&E);
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		struct h_pkt p, q;
		uint8_t copy[128];
		uint32_t isn = 0xfffffff0u + i; /* near wraparound on purpose */
		uint16_t port = (uint16_t)(40000 + i);
		uint32_t flen;

		E.cport = port;
		h_clear(&E);
		h_rx(&E, h_tcp(&E, isn, 0, SYN, 65535, NULL, 0, t[i].client_mss));
		one(&p);
		ck_assert_uint_eq(p.flags, SYN | ACK);
		ck_assert_uint_eq(p.ack, isn + 1);
		ck_assert_uint_eq(p.mss, E.conf.mss);
		ck_assert_uint_eq(p.win, E.conf.rcv_buf_size);
		ck_assert_uint_eq(p.sport, H_PORT);
		ck_assert_uint_eq(p.dport, port);
		ck_assert_uint_eq(p.sip, H_SRV_IP);
		ck_assert_uint_eq(p.dip, H_CLI_IP);
		ck_assert(rte_is_same_ether_addr(&p.dst, &h_cli_mac));
		ck_assert(rte_is_same_ether_addr(&p.src, &h_srv_mac));
		flen = rte_pktmbuf_data_len(p.m);
		ck_assert_uint_le(flen, sizeof(copy));
		memcpy(copy, rte_pktmbuf_mtod(p.m, void *), flen);

		/* A retransmitted SYN gets a byte-identical SYN-ACK (a little later). */
		h_clear(&E);
		E.now += 500 * H_MS;
		h_rx(&E, h_tcp(&E, isn, 0, SYN, 65535, NULL, 0, t[i].client_mss));
		one(&q);
		ck_assert_uint_eq(rte_pktmbuf_data_len(q.m), flen);
		ck_assert_mem_eq(rte_pktmbuf_mtod(q.m, void *), copy, flen);
		ck_assert_uint_eq(st()->tcp_conns, i); /* no state before the final ACK */

		/* Final ACK: connection, with the MSS from the cookie. */
		h_clear(&E);
		h_rx(&E, h_tcp(&E, isn + 1, p.seq + 1, ACK, 65535, NULL, 0, 0));
		ck_assert_uint_eq(h_ntx(&E), 0);
		ck_assert_int_eq(E.app.opened, (int)i + 1);
		ck_assert_uint_eq(st()->tcp_conns, i + 1);
		ck_assert_uint_eq(sk_tcp_remote_ip(E.app.conn), H_CLI_IP);
		ck_assert_uint_eq(sk_tcp_remote_port(E.app.conn), port);

		/* The MSS shows in how a large response is cut. */
		static char big[3000];
		memset(big, 'x', sizeof(big));
		ck_assert_int_eq(sk_tcp_send(E.app.conn, big, sizeof(big)), 0);
		h_flush(&E);
		unsigned k = 0; /* skip retransmissions of the earlier connections */
		for (; k < h_ntx(&E); k++) {
			ck_assert(h_parse(&E, k, &q));
			if (q.dport == port)
				break;
		}
		ck_assert_uint_lt(k + 1, h_ntx(&E));
		ck_assert_uint_eq(q.len, t[i].expect_mss);
		ck_assert_uint_eq(q.seq, p.seq + 1);
	}
	ck_assert_uint_eq(st()->tcp_syn_rx, 2 * SK_ARRAY_SIZE(t));
	ck_assert_uint_eq(st()->tcp_cookie_ok, SK_ARRAY_SIZE(t));
	h_stop(&E);
}
END_TEST

START_TEST(handshake_bad_cookie)
{
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	E.cport = 41000;
	h_rx(&E, h_tcp(&E, 1000, 0, SYN, 65535, NULL, 0, 1460));
	one(&p);
	uint32_t cookie = p.seq;

	/* Table of bad final ACKs: wrong ack (cookie), wrong seq (client ISN). */
	static const struct {
		int32_t ack_delta, seq_delta;
	} t[] = {{1, 0}, {-1, 0}, {0x100, 0}, {0, 1}, {0, -1}};
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		uint32_t ack = cookie + 1 + (uint32_t)t[i].ack_delta;

		h_clear(&E);
		h_rx(&E, h_tcp(&E, 1001 + (uint32_t)t[i].seq_delta, ack, ACK, 65535, NULL, 0, 0));
		one(&p);
		ck_assert_uint_eq(p.flags, RST);
		ck_assert_uint_eq(p.seq, ack);
		ck_assert_uint_eq(st()->tcp_conns, 0);
	}
	ck_assert_uint_eq(st()->tcp_cookie_bad, SK_ARRAY_SIZE(t));
	ck_assert_int_eq(E.app.opened, 0);

	/* In the next cookie period the genuine ACK still works (made at 1000 s, slot 960..1024).
	 */
	E.now += 60 * 1000 * H_MS;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 1001, cookie + 1, ACK, 65535, NULL, 0, 0));
	ck_assert_int_eq(E.app.opened, 1);

	/* Two periods later a cookie is stale. */
	E.cport = 41001;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 5000, 0, SYN, 65535, NULL, 0, 1460));
	one(&p);
	cookie = p.seq;
	E.now += 130 * 1000 * H_MS;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 5001, cookie + 1, ACK, 65535, NULL, 0, 0));
	one(&p);
	ck_assert_uint_eq(p.flags, RST);
	ck_assert_int_eq(E.app.opened, 1);
	h_stop(&E);
}
END_TEST

START_TEST(data_in_order)
{
	struct h_pkt p;
	static const char *parts[] = {"GET / HTTP/1.1\r\n", "Host: a\r\n", "\r\n"};
	size_t total = 0;

	h_conf(&E);
	h_start(&E);
	h_connect(&E, 42000);
	for (unsigned i = 0; i < SK_ARRAY_SIZE(parts); i++) {
		h_clear(&E);
		h_send(&E, parts[i], (uint32_t)strlen(parts[i]));
		total += strlen(parts[i]);
		one(&p);
		ck_assert_uint_eq(p.flags, ACK);
		ck_assert_uint_eq(p.ack, E.snd);
		ck_assert_uint_eq(p.win, E.conf.rcv_buf_size);
		ck_assert_uint_eq(p.len, 0);
	}
	ck_assert_uint_eq(E.app.rx_len, total);
	ck_assert_mem_eq(E.app.rx, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", total);
	ck_assert_uint_eq(st()->tcp_rx_data, total);

	/* A response is piggybacked on the ACK of the request. */
	E.app.reply = "HTTP/1.1 200 OK\r\n\r\n";
	h_clear(&E);
	h_send(&E, "x", 1);
	one(&p);
	ck_assert_uint_eq(p.flags, ACK | PSH);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(p.seq, E.srv);
	ck_assert_uint_eq(p.len, strlen(E.app.reply));
	ck_assert_mem_eq(p.data, E.app.reply, p.len);

	/* Overlapping retransmission: only the new bytes are delivered. */
	h_clear(&E);
	E.app.reply = NULL;
	size_t before = E.app.rx_len;
	h_rx(&E, h_tcp(&E, E.snd - 1, E.rcvd, ACK, 65535, "xYZ", 3, 0));
	E.snd += 2;
	ck_assert_uint_eq(E.app.rx_len, before + 2);
	ck_assert_mem_eq(E.app.rx + before, "YZ", 2);
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);

	/* A full duplicate: not delivered, ACKed. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd - 2, E.rcvd, ACK, 65535, "YZ", 2, 0));
	ck_assert_uint_eq(E.app.rx_len, before + 2);
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	h_stop(&E);
}
END_TEST

START_TEST(out_of_order)
{
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_connect(&E, 43000);
	/* Table of future offsets: all dropped and dup-ACKed with the same ACK. */
	static const uint32_t gap[] = {1, 10, 100, 1000};
	for (unsigned i = 0; i < SK_ARRAY_SIZE(gap); i++) {
		h_clear(&E);
		h_rx(&E, h_tcp(&E, E.snd + gap[i], E.rcvd, ACK, 65535, "abc", 3, 0));
		one(&p);
		ck_assert_uint_eq(p.flags, ACK);
		ck_assert_uint_eq(p.ack, E.snd);
		ck_assert_uint_eq(p.len, 0);
	}
	ck_assert_int_eq(E.app.data_calls, 0);
	ck_assert_uint_eq(st()->tcp_ooo_drop, SK_ARRAY_SIZE(gap));
	/* Beyond the window: unacceptable, ACKed. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd + 100000, E.rcvd, ACK, 65535, "abc", 3, 0));
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(st()->tcp_unacceptable, 1);
	/* The missing bytes then arrive in order. */
	h_clear(&E);
	h_send(&E, "0", 1);
	ck_assert_int_eq(E.app.data_calls, 1);
	ck_assert_uint_eq(E.app.rx_len, 1);
	h_stop(&E);
}
END_TEST

START_TEST(retransmit_backoff_reset)
{
	struct h_pkt p;
	uint64_t t0, last;
	uint64_t gaps[16];
	unsigned n = 0;

	h_conf(&E);
	E.conf.rto_initial_ms = 100;
	E.conf.rto_min_ms = 50;
	E.conf.rto_max_ms = 1000;
	E.conf.max_retries = 4;
	h_start(&E);
	h_connect(&E, 44000);
	E.app.reply = "RESPONSE";
	h_clear(&E);
	h_send(&E, "req", 3);
	one(&p);
	ck_assert_uint_eq(p.len, 8);
	uint32_t seq0 = p.seq;
	t0 = last = E.now;
	h_clear(&E);

	/* No ACK: retransmissions at 100, 200, 400, 800 ms gaps, then RST. */
	for (int ms = 0; ms < 5000 && E.app.closed == 0; ms++) {
		h_advance(&E, 1);
		for (unsigned i = 0; i < h_ntx(&E); i++) {
			ck_assert(h_parse(&E, i, &p));
			if (p.flags & RST)
				continue;
			ck_assert_uint_eq(p.seq, seq0);
			ck_assert_uint_eq(p.len, 8);
			ck_assert_mem_eq(p.data, "RESPONSE", 8);
			ck_assert_uint_lt(n, SK_ARRAY_SIZE(gaps));
			gaps[n++] = (E.now - last) / H_MS;
			last = E.now;
		}
		if (E.app.closed == 0)
			h_clear(&E);
	}
	ck_assert_uint_eq(n, 4);
	static const uint64_t expect[] = {100, 200, 400, 800};
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_ge(gaps[i], expect[i]);
		ck_assert_uint_le(gaps[i], expect[i] + 2);
	}
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert(h_parse(&E, h_ntx(&E) - 1, &p));
	ck_assert_uint_eq(p.flags & RST, RST);
	ck_assert_uint_eq(st()->tcp_retransmits, 4);
	ck_assert_uint_eq(st()->tcp_rto_reset, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	ck_assert_uint_gt(E.now - t0, 1500 * H_MS);
	h_stop(&E);
}
END_TEST

START_TEST(ack_stops_retransmit)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.rto_initial_ms = 100;
	E.conf.rto_min_ms = 50;
	h_start(&E);
	struct sk_tcp_conn *c = h_connect(&E, 45000);
	E.app.reply = "R1";
	h_clear(&E);
	h_send(&E, "q", 1);
	one(&p);
	h_clear(&E);
	/* Retransmitted once, then ACKed: nothing more, RTT sampled. */
	h_advance(&E, 101);
	one(&p);
	ck_assert_uint_eq(p.len, 2);
	h_clear(&E);
	h_ack_all(&E);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_advance(&E, 3000);
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(sk_tcp_send_space(c), E.conf.snd_buf_size);
	ck_assert_uint_eq(st()->tcp_retransmits, 1);

	/* Send-buffer limits. */
	static char buf[5000];
	ck_assert_int_eq(sk_tcp_send(c, buf, sizeof(buf)), -EMSGSIZE);
	ck_assert_int_eq(sk_tcp_send(c, buf, 4000), 0);
	ck_assert_int_eq(sk_tcp_send(c, buf, 200), -ENOBUFS);
	ck_assert_int_eq(sk_tcp_send(c, NULL, 1), -EINVAL);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 3); /* 1460 + 1460 + 1080 */
	h_clear(&E);
	h_ack_all(&E);
	ck_assert_int_eq(sk_tcp_send(c, buf, 4096), 0);
	sk_tcp_close(c);
	ck_assert_int_eq(sk_tcp_send(c, buf, 1), -ENOTCONN);
	h_stop(&E);
}
END_TEST

START_TEST(rst_rules)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.challenge_ack_per_s = 20;
	E.conf.challenge_ack_conn_ms = 0; /* the lcore limit alone (see challenge_ack_limits) */
	h_start(&E);
	h_connect(&E, 46000);
	h_send(&E, "abc", 3);
	h_clear(&E);

	/* Table: RST seq offset from RCV.NXT -> expected effect. */
	enum { IGNORE, CHALLENGE };
	static const struct {
		int64_t off;
		int effect;
	} t[] = {{1, CHALLENGE}, {100, CHALLENGE}, {2047, CHALLENGE}, {2048, IGNORE},
		 {-1, IGNORE},	 {-100, IGNORE},   {1 << 20, IGNORE}};
	for (unsigned i = 0; i < SK_ARRAY_SIZE(t); i++) {
		h_clear(&E);
		h_rx(&E, h_tcp(&E, E.snd + (uint32_t)t[i].off, 0, RST, 0, NULL, 0, 0));
		ck_assert_uint_eq(st()->tcp_conns, 1);
		if (t[i].effect == CHALLENGE) {
			one(&p);
			ck_assert_uint_eq(p.flags, ACK);
			ck_assert_uint_eq(p.ack, E.snd);
			ck_assert_uint_eq(p.seq, E.rcvd);
		} else {
			ck_assert_uint_eq(h_ntx(&E), 0);
		}
	}
	ck_assert_uint_eq(st()->tcp_challenge_ack, 3);
	ck_assert_uint_eq(st()->tcp_rst_ignored, 4);

	/* A SYN on an established connection: challenge ACK too. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.cisn, 0, SYN, 65535, NULL, 0, 1460));
	one(&p);
	ck_assert_uint_eq(p.flags, ACK);
	ck_assert_uint_eq(p.ack, E.snd);

	/* Rate limit: 20 per second on average, this second's limit in [10, 30]. */
	E.now += 1000 * H_MS;
	h_clear(&E);
	for (int i = 0; i < 40; i++)
		h_rx(&E, h_tcp(&E, E.snd + 5, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_ge(h_ntx(&E), 10);
	ck_assert_uint_le(h_ntx(&E), 30);
	ck_assert_uint_eq(st()->tcp_challenge_ack + st()->tcp_challenge_limited, 4 + 40);
	/* Next second: allowed again. */
	E.now += 1000 * H_MS;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd + 5, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 1);

	/* The exact RST closes. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	ck_assert_uint_eq(st()->tcp_rst_rx, 1);

	/* RST for no connection: ignored. Data for no connection: RST. */
	h_rx(&E, h_tcp(&E, E.snd, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_rx(&E, h_tcp(&E, E.snd, 12345, ACK, 1000, "zz", 2, 0));
	one(&p);
	ck_assert_uint_eq(p.flags, RST);
	ck_assert_uint_eq(p.seq, 12345);
	h_stop(&E);
}
END_TEST

START_TEST(fin_from_client)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.idle_timeout_ms = 1000;
	h_start(&E);
	h_connect(&E, 47000);
	E.app.reply = "bye";
	E.app.close_on_fin = true;
	/* Request + FIN in one segment: data delivered, then the FIN. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK | FIN, 65535, "req", 3, 0));
	E.snd += 4;
	ck_assert_uint_eq(E.app.rx_len, 3);
	ck_assert_int_eq(E.app.fin_calls, 1);
	/* Server: "bye" + FIN, ACKing the client's FIN. */
	one(&p);
	ck_assert_uint_eq(p.flags, ACK | PSH | FIN);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(p.len, 3);
	ck_assert_int_eq(E.app.closed, 0);
	/* Client ACKs data + FIN: LAST_ACK -> CLOSED, on_close. */
	h_clear(&E);
	h_ack_all(&E);
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);

	/* FIN alone, app does not close: CLOSE_WAIT until the idle timer resets it. */
	E.app.close_on_fin = false;
	E.app.reply = NULL;
	h_connect(&E, 47001);
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK | FIN, 65535, NULL, 0, 0));
	E.snd++;
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_int_eq(E.app.fin_calls, 2);
	ck_assert_uint_eq(E.app.last_offered, 0);
	/* Retransmitted FIN: re-ACKed. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd - 1, E.rcvd, ACK | FIN, 65535, NULL, 0, 0));
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	h_clear(&E);
	h_advance(&E, E.conf.idle_timeout_ms + 5);
	ck_assert_int_eq(E.app.closed, 2);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	one(&p);
	ck_assert_uint_eq(p.flags & RST, RST);
	h_stop(&E);
}
END_TEST

START_TEST(fin_from_server_time_wait)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.time_wait_ms = 500;
	E.conf.time_wait_max = 3;
	h_start(&E);
	/* Table of 5 connections closed by the server; only 3 TIME_WAITs kept. */
	for (unsigned i = 0; i < 5; i++) {
		struct sk_tcp_conn *c = h_connect(&E, (uint16_t)(48000 + i));

		h_clear(&E);
		sk_tcp_close(c);
		h_flush(&E);
		one(&p);
		ck_assert_uint_eq(p.flags, ACK | FIN);
		ck_assert_uint_eq(p.seq, E.srv);
		/* ACK of our FIN: FIN_WAIT_2; then the client's FIN: TIME_WAIT. */
		h_clear(&E);
		h_ack_all(&E);
		ck_assert_uint_eq(h_ntx(&E), 0);
		ck_assert_int_eq(E.app.closed, (int)i);
		h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK | FIN, 65535, NULL, 0, 0));
		E.snd++;
		one(&p);
		ck_assert_uint_eq(p.flags, ACK);
		ck_assert_uint_eq(p.ack, E.snd);
		ck_assert_int_eq(E.app.closed, (int)i + 1);
		ck_assert_uint_le(st()->tcp_time_wait, 3);
	}
	ck_assert_uint_eq(st()->tcp_time_wait, 3);
	ck_assert_uint_eq(st()->tcp_tw_recycled, 2);
	ck_assert_uint_eq(st()->tcp_conns, 3);
	/* The newest TIME_WAIT re-ACKs a retransmitted FIN; RST is ignored. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd - 1, E.rcvd, ACK | FIN, 65535, NULL, 0, 0));
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(st()->tcp_time_wait, 3);
	/* They expire after time_wait_ms. */
	h_advance(&E, 505);
	ck_assert_uint_eq(st()->tcp_time_wait, 0);
	ck_assert_uint_eq(st()->tcp_conns, 0);

	/* Simultaneous close: FIN_WAIT_1 + FIN -> CLOSING -> TIME_WAIT. */
	struct sk_tcp_conn *c = h_connect(&E, 48100);
	h_clear(&E);
	sk_tcp_close(c);
	h_flush(&E);
	one(&p);
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.srv, ACK | FIN, 65535, NULL, 0, 0)); /* not ACKing our FIN */
	E.snd++;
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(st()->tcp_time_wait, 0);
	h_clear(&E);
	h_ack_all(&E);
	ck_assert_uint_eq(st()->tcp_time_wait, 1);
	/* A new SYN on the same 4-tuple recycles the TIME_WAIT. */
	h_rx(&E, h_tcp(&E, E.snd + 100000, 0, SYN, 65535, NULL, 0, 1460));
	one(&p);
	ck_assert_uint_eq(p.flags, SYN | ACK);
	ck_assert_uint_eq(st()->tcp_time_wait, 0);
	h_stop(&E);
}
END_TEST

START_TEST(fin_retransmitted)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.rto_initial_ms = 100;
	E.conf.rto_min_ms = 50;
	E.conf.max_retries = 2;
	h_start(&E);
	struct sk_tcp_conn *c = h_connect(&E, 48500);
	h_clear(&E);
	sk_tcp_close(c);
	h_flush(&E);
	one(&p);
	uint32_t fseq = p.seq;
	h_clear(&E);
	h_advance(&E, 101);
	one(&p);
	ck_assert_uint_eq(p.flags, ACK | FIN);
	ck_assert_uint_eq(p.seq, fseq);
	h_clear(&E);
	h_advance(&E, 1000);
	ck_assert_int_eq(E.app.closed, 1); /* cap reached: reset */
	ck_assert_uint_eq(st()->tcp_rto_reset, 1);
	h_stop(&E);
}
END_TEST

START_TEST(zero_window_receive)
{
	struct h_pkt p;
	static uint8_t blob[2048];

	h_conf(&E);
	E.app.consume_max = 0; /* park: consume nothing */
	h_start(&E);
	struct sk_tcp_conn *c = h_connect(&E, 49000);
	for (unsigned i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 13);
	/* Fill the 2048-byte buffer in two segments; the window shrinks to 0. */
	h_clear(&E);
	h_send(&E, blob, 1000);
	one(&p);
	ck_assert_uint_eq(p.win, 1048);
	ck_assert_uint_eq(E.app.last_offered, 1000);
	h_clear(&E);
	h_send(&E, blob + 1000, 1048);
	one(&p);
	ck_assert_uint_eq(p.win, 0);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(E.app.last_offered, 2048);
	/* Zero-window probe (one byte): answered, byte not taken. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK, 65535, "P", 1, 0));
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	ck_assert_uint_eq(p.win, 0);
	ck_assert_uint_eq(st()->tcp_zwp_rx, 1);
	/* More data beyond the window is not taken either. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd + 1, E.rcvd, ACK, 65535, "QQ", 2, 0));
	one(&p);
	ck_assert_uint_eq(p.ack, E.snd);
	/* Resume: the app now consumes everything; a window update follows. */
	E.app.consume_max = SIZE_MAX;
	int calls = E.app.data_calls;
	h_clear(&E);
	sk_tcp_resume(c);
	sk_tcp_resume(c); /* idempotent */
	h_flush(&E);
	ck_assert_int_eq(E.app.data_calls, calls + 1);
	ck_assert_uint_eq(E.app.rx_len, 2048);
	ck_assert_mem_eq(E.app.rx, blob, 2048);
	one(&p);
	ck_assert_uint_eq(p.win, 2048);
	ck_assert_uint_eq(p.ack, E.snd);
	/* Nothing buffered: a resume still calls on_data, with no bytes (the
	 * app may hold bytes of its own: TLS plaintext). */
	h_clear(&E);
	sk_tcp_resume(c);
	h_flush(&E);
	ck_assert_int_eq(E.app.data_calls, calls + 2);
	ck_assert_uint_eq(E.app.last_offered, 0);
	h_stop(&E);
}
END_TEST

START_TEST(zero_window_send)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.rto_initial_ms = 100;
	E.conf.rto_min_ms = 50;
	E.conf.max_retries = 10;
	h_start(&E);
	struct sk_tcp_conn *c = h_connect(&E, 50000);
	/* The client closes its window. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK, 0, NULL, 0, 0));
	ck_assert_int_eq(sk_tcp_send(c, "hello", 5), 0);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 0);
	/* Persist timer: a one-byte probe of real data. */
	h_advance(&E, 101);
	one(&p);
	ck_assert_uint_eq(p.len, 1);
	ck_assert_uint_eq(p.data[0], 'h');
	ck_assert_uint_eq(p.seq, E.srv);
	ck_assert_uint_eq(st()->tcp_zwp_tx, 1);
	/* Still zero window (probe not accepted): next probe after backoff. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.srv, ACK, 0, NULL, 0, 0));
	h_advance(&E, 150);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_advance(&E, 60);
	one(&p);
	ck_assert_uint_eq(p.len, 1);
	/* Window opens (probe byte accepted): the rest goes out at once. */
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd, E.srv + 1, ACK, 1000, NULL, 0, 0));
	one(&p);
	ck_assert_uint_eq(p.seq, E.srv + 1);
	ck_assert_uint_eq(p.len, 4);
	ck_assert_mem_eq(p.data, "ello", 4);
	h_stop(&E);
}
END_TEST

START_TEST(idle_timeout)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.idle_timeout_ms = 300;
	h_start(&E);
	h_connect(&E, 51000);
	h_clear(&E);
	h_advance(&E, 200);
	h_send(&E, "a", 1); /* activity restarts the idle clock */
	h_clear(&E);
	h_advance(&E, 250);
	ck_assert_uint_eq(h_ntx(&E), 0);
	h_advance(&E, 60);
	one(&p);
	ck_assert_uint_eq(p.flags, ACK | FIN); /* polite close */
	ck_assert_uint_eq(st()->tcp_idle_timeout, 1);
	ck_assert_int_eq(E.app.closed, 0);
	h_clear(&E);
	h_ack_all(&E);
	/* FIN_WAIT_2 and silent: reset after another idle period. */
	h_advance(&E, 310);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 0);
	h_stop(&E);
}
END_TEST

START_TEST(abort_and_table_full)
{
	struct h_pkt p;

	h_conf(&E);
	E.conf.max_conns = 2;
	h_start(&E);
	struct sk_tcp_conn *a = h_connect(&E, 52000);
	sk_tcp_mark_used(a);
	sk_tcp_mark_used(h_connect(&E, 52001));
	/* Third: valid cookie, no slot (both carried requests), silently dropped. */
	E.cport = 52002;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 5, 0, SYN, 65535, NULL, 0, 1460));
	one(&p);
	uint32_t ck = p.seq;
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 6, ck + 1, ACK, 65535, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->tcp_conn_full, 1);
	ck_assert_int_eq(E.app.opened, 2);
	/* Abort one: RST now, on_close at the next entry point, slot reusable. */
	sk_tcp_abort(a);
	sk_tcp_abort(a);
	ck_assert_int_eq(E.app.closed, 0);
	h_flush(&E);
	ck_assert_int_eq(E.app.closed, 1);
	one(&p);
	ck_assert_uint_eq(p.flags, RST | ACK);
	ck_assert_uint_eq(p.dport, 52000);
	h_clear(&E);
	h_rx(&E, h_tcp(&E, 6, ck + 1, ACK, 65535, "hi", 2, 0)); /* handshake ACK with data */
	ck_assert_int_eq(E.app.opened, 3);
	ck_assert_uint_eq(E.app.rx_len, 2);
	h_stop(&E);
}
END_TEST

START_TEST(wrong_port_and_cksum)
{
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_rx(&E, h_tcp_from(&E, H_CLI_IP, 1234, 81, 77, 0, SYN, 65535, NULL, 0, 0));
	one(&p);
	ck_assert_uint_eq(p.flags, RST | ACK);
	ck_assert_uint_eq(p.ack, 78);
	ck_assert_uint_eq(st()->tcp_drop_port, 1);
	h_clear(&E);
	struct rte_mbuf *m = h_tcp_from(&E, H_CLI_IP, 1234, H_PORT, 77, 0, SYN, 65535, NULL, 0, 0);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 16)[0] ^= 0x5a; /* checksum byte */
	h_rx(&E, m);
	ck_assert_uint_eq(h_ntx(&E), 0);
	ck_assert_uint_eq(st()->tcp_drop_cksum, 1);
	h_stop(&E);
}
END_TEST

static Suite *
tcp_suite(void)
{
	Suite *s = suite_create("net_tcp");
	TCase *tc = tcase_create("tcp");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, handshake_synack);
	tcase_add_test(tc, handshake_bad_cookie);
	tcase_add_test(tc, data_in_order);
	tcase_add_test(tc, out_of_order);
	tcase_add_test(tc, retransmit_backoff_reset);
	tcase_add_test(tc, ack_stops_retransmit);
	tcase_add_test(tc, rst_rules);
	tcase_add_test(tc, fin_from_client);
	tcase_add_test(tc, fin_from_server_time_wait);
	tcase_add_test(tc, fin_retransmitted);
	tcase_add_test(tc, zero_window_receive);
	tcase_add_test(tc, zero_window_send);
	tcase_add_test(tc, idle_timeout);
	tcase_add_test(tc, abort_and_table_full);
	tcase_add_test(tc, wrong_port_and_cksum);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], tcp_suite());
}
