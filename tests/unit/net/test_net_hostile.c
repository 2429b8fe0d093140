/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_net_hostile.c - what one client, or an idle crowd, can do to the
 * connection table, driven with crafted frames: pure ACKs do not keep a
 * connection alive, a connection without a request idles out sooner and is
 * evicted first when the table is full, one address cannot take more than
 * max_conns_per_ip slots, app deadlines fire, challenge ACKs are limited per
 * connection, and a segment with a bad ACK cannot redirect our replies.
 */
#include <check.h>
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

/*
 * connect_from - a full handshake from @ip:@port; returns the frame count
 * the final ACK produced (0 = accepted quietly, 1 = an RST came back).
 */
static unsigned
connect_from(uint32_t ip, uint16_t port)
{
	struct h_pkt p;
	uint32_t isn = 0x20000000u + port * 31u;

	h_clear(&E);
	h_rx(&E, h_tcp_from(&E, ip, port, H_PORT, isn, 0, SYN, 65535, NULL, 0, 1460));
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert_uint_eq(p.flags, SYN | ACK);
	h_clear(&E);
	h_rx(&E, h_tcp_from(&E, ip, port, H_PORT, isn + 1, p.seq + 1, ACK, 65535, NULL, 0, 0));
	return h_ntx(&E);
}

/* An idle connection's peer sends only ACKs (duplicates, window probes): it idles out anyway. */
START_TEST(pure_acks_do_not_refresh_idle)
{
	h_conf(&E);
	E.conf.idle_timeout_ms = 300;
	h_start(&E);
	sk_tcp_mark_used(h_connect(&E, 41000));
	h_send(&E, "a", 1); /* progress at t = 0 */
	for (int i = 0; i < 5; i++) {
		h_advance(&E, 50);
		h_rx(&E, h_tcp(&E, E.snd, E.rcvd, ACK, 65535, NULL, 0, 0)); /* no progress */
	}
	h_clear(&E);
	h_advance(&E, 60); /* t = 310 ms */
	ck_assert_uint_eq(st()->tcp_idle_timeout, 1);
	ck_assert_uint_ge(h_ntx(&E), 1);
	h_stop(&E);
}
END_TEST

/* A connection without a request idles out after idle_new_ms; a used one after idle_timeout_ms. */
START_TEST(idle_new_connection)
{
	h_conf(&E);
	E.conf.idle_timeout_ms = 5000;
	E.conf.idle_new_ms = 100;
	h_start(&E);
	struct sk_tcp_conn *used = h_connect(&E, 42000);
	sk_tcp_mark_used(used);
	h_connect(&E, 42001); /* never asks anything */
	h_clear(&E);
	h_advance(&E, 99);
	ck_assert_uint_eq(st()->tcp_idle_timeout, 0);
	h_advance(&E, 2);
	ck_assert_uint_eq(st()->tcp_idle_timeout, 1);
	ck_assert_uint_eq(st()->tcp_idle_new, 1);
	h_advance(&E, 1000);
	/* The new one, FIN sent and silent, was reset after one more idle_new_ms;
	 * the used one is still open. */
	ck_assert_uint_eq(st()->tcp_idle_new, 2);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conns, 1);
	h_advance(&E, 3900); /* t = 5001: the used one idles out too, politely */
	ck_assert_uint_eq(st()->tcp_idle_timeout, 3);
	ck_assert_uint_eq(st()->tcp_idle_new, 2);
	h_stop(&E);
}
END_TEST

/* rst_to - the one frame captured is an RST to client port @port. */
static void
rst_to(uint16_t port)
{
	struct h_pkt p;

	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert(p.flags & RST);
	ck_assert_uint_eq(p.dport, port);
}

/* Full table: the oldest connection that never completed a request makes room. */
START_TEST(full_table_evicts_oldest_new)
{
	h_conf(&E);
	E.conf.max_conns = 3;
	h_start(&E);
	h_connect(&E, 43000);			/* new, oldest */
	h_connect(&E, 43001);			/* new */
	sk_tcp_mark_used(h_connect(&E, 43002)); /* carried a request */
	/* A fourth client gets in: 43000 is reset, its on_close reported at once. */
	ck_assert_uint_eq(connect_from(H_CLI_IP, 43003), 1);
	rst_to(43000);
	struct sk_tcp_conn *c3 = E.app.conn;
	ck_assert_int_eq(E.app.opened, 4);
	ck_assert_int_eq(E.app.closed, 1);
	ck_assert_uint_eq(st()->tcp_conn_evicted, 1);
	ck_assert_uint_eq(st()->tcp_conns, 3);
	/* Next: 43001 goes. */
	ck_assert_uint_eq(connect_from(H_CLI_IP, 43004), 1);
	rst_to(43001);
	struct sk_tcp_conn *c4 = E.app.conn;
	ck_assert_uint_eq(st()->tcp_conn_evicted, 2);
	/* Once every connection carried a request, a newcomer is dropped quietly. */
	sk_tcp_mark_used(c3);
	sk_tcp_mark_used(c4);
	ck_assert_uint_eq(connect_from(H_CLI_IP, 43005), 0);
	ck_assert_uint_eq(st()->tcp_conn_full, 1);
	ck_assert_uint_eq(st()->tcp_conn_evicted, 2);
	ck_assert_int_eq(E.app.opened, 5);
	h_stop(&E);
}
END_TEST

/* One address holds at most max_conns_per_ip connections; TIME_WAIT does not count. */
START_TEST(per_address_cap)
{
	const uint32_t other = SK_IPV4(198, 18, 7, 9);

	h_conf(&E);
	E.conf.max_conns_per_ip = 2;
	h_start(&E);
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44000), 0);
	struct sk_tcp_conn *a = E.app.conn;
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44001), 0);
	/* The third from the same address: refused with an RST, no state. */
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44002), 1);
	rst_to(44002);
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 1);
	ck_assert_int_eq(E.app.opened, 2);
	/* Another address is not affected. */
	ck_assert_uint_eq(connect_from(other, 44003), 0);
	ck_assert_int_eq(E.app.opened, 3);
	/* One of the first two ends: the address may connect again. */
	sk_tcp_abort(a);
	h_flush(&E);
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44004), 0);
	ck_assert_int_eq(E.app.opened, 4);
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44005), 1);
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 2);
	/* A connection in TIME_WAIT no longer counts (we close first, the peer FINs). */
	struct sk_tcp_conn *b = E.app.conn; /* 44004 */
	struct h_pkt p;
	sk_tcp_close(b);
	h_clear(&E);
	h_flush(&E);
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert(p.flags & FIN);
	h_rx(&E, h_tcp_from(&E, H_CLI_IP, 44004, H_PORT, p.ack, p.seq + 1, ACK | FIN, 65535, NULL,
			    0, 0));
	ck_assert_uint_eq(st()->tcp_time_wait, 1);
	ck_assert_uint_eq(connect_from(H_CLI_IP, 44006), 0);
	ck_assert_int_eq(E.app.opened, 5);
	h_stop(&E);
}
END_TEST

/* Many addresses come and go: the per-address table stays exact (backward-shift deletion). */
START_TEST(per_address_table_churn)
{
	struct sk_tcp_conn *held[12];
	uint64_t x = 12345;

	h_conf(&E);
	E.conf.max_conns = 16;
	E.conf.max_conns_per_ip = 1;
	h_start(&E);
	for (int round = 0; round < 40; round++) {
		int n = 0;

		for (int i = 0; i < 12; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t ip = SK_IPV4(198, 18, 1 + (x >> 60), 1 + i);

			ck_assert_uint_eq(connect_from(ip, (uint16_t)(45000 + round * 16 + i)), 0);
			held[n++] = E.app.conn;
			/* The same address again is refused while its connection lives. */
			ck_assert_uint_eq(connect_from(ip, (uint16_t)(46000 + i)), 1);
		}
		for (int i = 0; i < n; i++)
			sk_tcp_abort(held[i]);
		h_flush(&E);
		ck_assert_uint_eq(st()->tcp_conns, 0);
	}
	ck_assert_uint_eq(st()->tcp_conn_per_ip, 40 * 12);
	h_stop(&E);
}
END_TEST

/* An app deadline without on_timeout resets the connection on time. */
START_TEST(app_deadline)
{
	h_conf(&E);
	h_start(&E);
	struct sk_tcp_conn *c = h_connect(&E, 47000);
	sk_tcp_mark_used(c);
	sk_tcp_set_deadline(c, 50);
	h_clear(&E);
	h_advance(&E, 49);
	ck_assert_uint_eq(st()->tcp_app_timeout, 0);
	h_advance(&E, 2);
	ck_assert_uint_eq(st()->tcp_app_timeout, 1);
	ck_assert_int_eq(E.app.closed, 1);
	rst_to(47000);
	/* A cleared deadline does not fire. */
	c = h_connect(&E, 47001);
	sk_tcp_set_deadline(c, 50);
	sk_tcp_set_deadline(c, 0);
	h_advance(&E, 200);
	ck_assert_uint_eq(st()->tcp_app_timeout, 1);
	ck_assert_int_eq(E.app.closed, 1);
	h_stop(&E);
}
END_TEST

/* Challenge ACKs: one per connection per challenge_ack_conn_ms, whatever the lcore's budget. */
START_TEST(challenge_ack_per_connection)
{
	h_conf(&E);
	E.conf.challenge_ack_per_s = 1000;
	E.conf.challenge_ack_conn_ms = 500;
	h_start(&E);
	h_connect(&E, 48000);
	h_send(&E, "abc", 3);
	h_clear(&E);
	for (int i = 0; i < 10; i++)
		h_rx(&E, h_tcp(&E, E.snd + 5, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert_uint_eq(st()->tcp_challenge_ack, 1);
	ck_assert_uint_eq(st()->tcp_challenge_conn_limited, 9);
	/* Another connection has its own allowance. */
	h_connect(&E, 48001);
	h_clear(&E);
	h_rx(&E, h_tcp(&E, E.snd + 5, 0, RST, 0, NULL, 0, 0));
	ck_assert_uint_eq(h_ntx(&E), 1);
	/* After the interval, the first may be challenged again. */
	h_advance(&E, 500);
	E.cport = 48000;
	h_clear(&E);
	h_rx(&E, h_tcp_from(&E, H_CLI_IP, 48000, H_PORT, 0x10000000u + 48000 * 7919u + 9, 0, RST, 0,
			    NULL, 0, 0));
	ck_assert_uint_eq(st()->tcp_challenge_ack, 3);
	h_stop(&E);
}
END_TEST

/* A segment whose ACK is invalid cannot move where our replies go. */
START_TEST(bad_ack_does_not_redirect)
{
	static const struct rte_ether_addr evil = {{0x02, 0xee, 0xee, 0xee, 0xee, 0xee}};
	struct h_pkt p;

	h_conf(&E);
	h_start(&E);
	h_connect(&E, 49000);
	/* ACK of data never sent, from another MAC: answered, but to the real peer. */
	struct rte_mbuf *m = h_tcp(&E, E.snd, E.rcvd + 1000, ACK, 65535, NULL, 0, 0);
	rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr = evil;
	h_clear(&E);
	h_rx(&E, m);
	ck_assert_uint_eq(st()->tcp_ack_invalid, 1);
	ck_assert_uint_eq(h_ntx(&E), 1);
	ck_assert(h_parse(&E, 0, &p));
	ck_assert(rte_is_same_ether_addr(&p.dst, &h_cli_mac));
	/* Data from the same MAC with a valid ACK is still answered normally. */
	h_send(&E, "x", 1);
	h_stop(&E);
}
END_TEST

static Suite *
hostile_suite(void)
{
	Suite *s = suite_create("net_hostile");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pure_acks_do_not_refresh_idle);
	tcase_add_test(tc, idle_new_connection);
	tcase_add_test(tc, full_table_evicts_oldest_new);
	tcase_add_test(tc, per_address_cap);
	tcase_add_test(tc, per_address_table_churn);
	tcase_add_test(tc, app_deadline);
	tcase_add_test(tc, challenge_ack_per_connection);
	tcase_add_test(tc, bad_ack_does_not_redirect);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	(void)argc;
	return h_run(argv[0], hostile_suite());
}
