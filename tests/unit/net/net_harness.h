/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_harness.h - test fixture for the network stack: EAL + mempool, one
 * sk_net_lcore whose TX is captured (conf.tx_fn), a scripted app, client
 * frames (built by tests/lib/sk_test_frame.h, as the TCP fuzzer's are) and
 * a parser for what the stack sent.
 *
 * Time is simulated: tsc_hz = 1 GHz, so 1 ms = 1,000,000 cycles.
 */
#ifndef NET_HARNESS_H
#define NET_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <check.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "sk_net.h"
#include "sk_test_frame.h"

#define H_HZ	  1000000000ull
#define H_MS	  (H_HZ / 1000)
#define H_SRV_IP  SK_IPV4(198, 18, 0, 1)
#define H_CLI_IP  SK_IPV4(198, 18, 0, 2)
#define H_GW_IP	  SK_IPV4(198, 18, 0, 254)
#define H_PORT	  80
#define H_TX_MAX  512
#define H_RX_KEEP 65536

extern const struct rte_ether_addr h_srv_mac, h_cli_mac;

/* What the scripted app saw and how it behaves. */
struct h_app {
	int opened, closed, data_calls, fin_calls;
	struct sk_tcp_conn *conn; /* last opened */
	uint8_t rx[H_RX_KEEP];	  /* consumed bytes, concatenated */
	size_t rx_len;
	size_t last_offered; /* len of the last on_data call */
	size_t consume_max;  /* consume at most this per call (SIZE_MAX: all) */
	const char *reply;   /* sent (once per on_data with data) if set */
	bool close_after_reply;
	bool close_on_fin;
};

/* A frame the stack sent, parsed. */
struct h_pkt {
	struct rte_mbuf *m;
	struct rte_ether_addr dst, src;
	uint16_t ethertype;
	bool ip_ok; /* IPv4 header checksum valid */
	bool l4_ok; /* TCP/ICMP checksum valid */
	uint32_t sip, dip;
	uint8_t proto;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win, mss; /* mss: option value, 0 if absent */
	const uint8_t *data;
	uint32_t len;
};

struct h_env {
	struct rte_mempool *pool;
	unsigned pool_avail0; /* free mbufs before the test: checked for leaks at h_stop */
	struct sk_net_conf conf;
	struct sk_net_lcore *net;
	struct h_app app;
	uint64_t now;
	struct rte_mbuf *tx[H_TX_MAX];
	unsigned ntx;
	/* client side of the test connection */
	uint16_t cport;
	uint32_t cisn; /* client ISN */
	uint32_t snd;  /* client's next seq */
	uint32_t srv;  /* server ISN + 1 (= first server seq) */
	uint32_t rcvd; /* next server seq the client expects */
};

/* Initialise EAL once per process (--no-huge) and create the mbuf pool. */
void h_eal_init(const char *argv0);
struct rte_mempool *h_pool(void);
/* rte_eal_cleanup() and remove this process's /var/run/dpdk/<prefix> folder. */
void h_eal_cleanup(void);

/*
 * h_run - the main() of a stack test program: EAL, the suite run in-process
 * (EAL state is per process; each test frees what it made), EAL clean-up.
 * Returns the exit status (0: every test passed).
 */
int h_run(const char *argv0, Suite *suite);

/* Default conf (small table) for tests; tweak before h_start(). */
void h_conf(struct h_env *e);
void h_start(struct h_env *e);
/* Free TX captures and the stack; asserts no mbuf leaked. */
void h_stop(struct h_env *e);

/* Frames from the client (tests/lib/sk_test_frame.h builds them). */
/* h_ends - client address @sip (MAC h_cli_mac) to the server. */
struct sk_frame_ends h_ends(uint32_t sip);
struct rte_mbuf *h_tcp(struct h_env *e, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
		       const void *data, uint32_t len, uint16_t mss_opt);
struct rte_mbuf *h_tcp_from(struct h_env *e, uint32_t sip, uint16_t sport, uint16_t dport,
			    uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
			    const void *data, uint32_t len, uint16_t mss_opt);
/* Feed one frame at e->now, then flush. */
void h_rx(struct h_env *e, struct rte_mbuf *m);
/* Advance time by @ms (in 1 ms steps, running timers and flushing). */
void h_advance(struct h_env *e, uint64_t ms);
void h_flush(struct h_env *e);

/* Captured frames. */
unsigned h_ntx(const struct h_env *e);
bool h_parse(const struct h_env *e, unsigned i, struct h_pkt *p);
void h_clear(struct h_env *e);

/* Full handshake from port @cport; returns the connection (app.conn). */
struct sk_tcp_conn *h_connect(struct h_env *e, uint16_t cport);
/* Client sends data (ACKing everything received), then flush. */
void h_send(struct h_env *e, const void *data, uint32_t len);
/* Client ACKs everything the server sent so far (seen in captures). */
void h_ack_all(struct h_env *e);
/* Update e->rcvd from captured server segments. */
void h_track(struct h_env *e);

/*
 * h_cksum6 - the upper-layer checksum over the IPv6 pseudo-header (@src,
 * @dst, @len, next header @nh) and @msg, summed the plain way (not with the
 * stack's code): fill a message with it, or check one (a correct one gives 0).
 */
uint16_t h_cksum6(const uint8_t *src, const uint8_t *dst, uint8_t nh, const uint8_t *msg,
		  uint32_t len);

#endif
