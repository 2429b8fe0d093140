/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_tcp_input.c - libFuzzer target for the stack's input path.
 *
 * One input is a script run against a fresh sk_net_lcore (small limits so
 * that full tables, zero windows, TIME_WAIT caps and rate limits are
 * reachable). Byte 0 picks configuration bits; then records:
 *
 *   op 0  raw frame: len16, bytes       (anything at all, straight to sk_net_rx)
 *   op 1  TCP segment for flow f (0..7) built with valid checksums: flags,
 *         seq delta, ack mode (cookie+1 / what the server sent / delta),
 *         window, payload; optionally MSS option and a corrupt byte
 *   op 2  time passes (ms, or seconds), timers run
 *   op 3  app action on flow f: send, close, abort, resume, change consume mode
 *   op 4  ARP request / ICMP echo with valid checksums
 *   op 5  a burst of several segments in one sk_net_rx call
 *
 * The harness learns the cookies and sequence numbers from the frames the
 * stack transmits (conf.tx_fn), so scripted clients can complete handshakes
 * and reach every TCP state. Checked: no crash or sanitizer report, no mbuf
 * leak (pool count restored after each input), on_close exactly once per
 * on_open and never for an unknown connection, on_data within the buffer
 * bound, and well-formed, correctly checksummed output frames.
 *
 * The frames come from tests/lib/sk_test_frame.h, the builders the stack's
 * unit tests use; the normal build runs the seed corpus through this file
 * too (tests/fuzz/tcp_input/meson.build, fuzz_tcp_input_seeds).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "sk_net.h"
#include "sk_test_eal.h"
#include "sk_test_frame.h"

#define NFLOW	 8
#define MAXCONN	 4
#define SRV_IP	 SK_IPV4(198, 18, 0, 1)
#define CLI_IP	 SK_IPV4(198, 18, 1, 0)
#define HZ	 1000000000ull
#define POOLSIZE 2047

#define FZ_CHECK(c)                                                                                \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "fuzz check failed: %s (line %d)\n", #c, __LINE__);        \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static const struct rte_ether_addr srv_mac = {{0x02, 0, 0, 0, 0, 1}};
static const struct rte_ether_addr cli_mac = {{0x02, 0, 0, 0, 0, 2}};

static struct rte_mempool *pool;

struct flow {
	uint32_t isn;	 /* client ISN */
	uint32_t snd;	 /* client next seq */
	uint32_t cookie; /* from the last SYN-ACK */
	uint32_t rcvd;	 /* highest server seq end seen */
	struct sk_tcp_conn *conn;
	bool resumed; /* sk_tcp_resume() since its last on_data: an empty call is allowed */
};

/* Connections closed by the stack whose on_close is still to come (it is
 * deferred to the next entry point): a new connection of the same 4-tuple
 * may open meanwhile - a new handshake after an abort - and that is fine. */
#define MAXZOMBIE 16

struct fz {
	struct flow fl[NFLOW];
	struct sk_tcp_conn *zombie[MAXZOMBIE];
	int nzombie;
	int opened, closed;
	int consume_mode; /* 0 all, 1 none, 2 half, 3 one byte */
	uint32_t rcv_buf;
	uint64_t now;
	struct sk_net_lcore *net;
};

static int
flow_of_port(uint16_t port)
{
	return port >= 1000 && port < 1000 + NFLOW ? port - 1000 : -1;
}

static int
flow_of_conn(struct fz *z, struct sk_tcp_conn *c)
{
	for (int i = 0; i < NFLOW; i++)
		if (z->fl[i].conn == c)
			return i;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* App                                                                      */

static void
on_open(void *app, struct sk_tcp_conn *c)
{
	struct fz *z = app;
	int f = flow_of_port(sk_tcp_remote_port(c));

	FZ_CHECK(f >= 0);
	FZ_CHECK(flow_of_conn(z, c) < 0); /* a live conn is never handed out twice */
	for (int i = 0; i < z->nzombie; i++)
		FZ_CHECK(z->zombie[i] != c); /* nor a slot before its on_close */
	if (z->fl[f].conn != NULL) {
		/* The old connection of this tuple must be dead, awaiting on_close:
		 * it gets no more on_data (checked there), only its on_close. */
		FZ_CHECK(z->nzombie < MAXZOMBIE);
		z->zombie[z->nzombie++] = z->fl[f].conn;
	}
	z->fl[f].conn = c;
	z->fl[f].resumed = false;
	z->opened++;
	/* The app area is zeroed and at least 128 bytes. */
	const uint8_t *a = sk_tcp_app_data(c);
	for (int i = 0; i < SK_TCP_APP_DATA_MIN; i++)
		FZ_CHECK(a[i] == 0);
	memset(sk_tcp_app_data(c), 0xa5, SK_TCP_APP_DATA_MIN);
}

static size_t
on_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct fz *z = app;
	volatile uint8_t sink = 0;

	FZ_CHECK(flow_of_conn(z, c) >= 0);
	FZ_CHECK(len <= z->rcv_buf);
	FZ_CHECK(sk_tcp_lcore(c) == z->net);
	FZ_CHECK(sk_tcp_remote_ip(c) == CLI_IP || sk_tcp_remote_ip(c) == CLI_IP + 1);
	FZ_CHECK(sk_tcp_send_space(c) <= 4096);
	/* empty calls announce a FIN, or follow a resume (the app may hold
	 * bytes of its own) */
	if (len == 0)
		FZ_CHECK(sk_tcp_peer_closed(c) || z->fl[flow_of_conn(z, c)].resumed);
	z->fl[flow_of_conn(z, c)].resumed = false;
	FZ_CHECK(len == 0 || data != NULL);
	for (size_t i = 0; i < len; i++) /* every byte readable (ASan) */
		sink ^= data[i];
	(void)sink;
	if (len >= 2 && data[0] == 'R') /* "R": answer, like an HTTP request */
		sk_tcp_send(c, "HTTP/1.1 200 OK\r\n\r\n", 19);
	if (len >= 2 && data[0] == 'C')
		sk_tcp_close(c);
	if (len >= 2 && data[0] == 'A') {
		sk_tcp_abort(c);
		return 0;
	}
	switch (z->consume_mode) {
	case 1:
		return 0;
	case 2:
		return len / 2;
	case 3:
		return len ? 1 : 0;
	default:
		return len;
	}
}

static void
on_close(void *app, struct sk_tcp_conn *c)
{
	struct fz *z = app;
	int f = flow_of_conn(z, c);

	z->closed++;
	if (f >= 0) {
		z->fl[f].conn = NULL;
		return;
	}
	for (int i = 0; i < z->nzombie; i++)
		if (z->zombie[i] == c) {
			z->zombie[i] = z->zombie[--z->nzombie];
			return;
		}
	FZ_CHECK(!"on_close for an unknown connection"); /* exactly once, known ones only */
}

static const struct sk_net_app_ops ops = {on_open, on_data, on_close, NULL};

/* ------------------------------------------------------------------------ */
/* TX capture: check frames, learn cookies and sequence numbers, free.      */

static uint16_t
tx_fn(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct fz *z = ctx;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

		FZ_CHECK(rte_pktmbuf_data_len(m) >= sizeof(*eth));
		FZ_CHECK(rte_is_same_ether_addr(&eth->src_addr, &srv_mac));
		if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
			const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
			uint32_t tl = rte_be_to_cpu_16(ip->total_length);

			FZ_CHECK(rte_pktmbuf_data_len(m) == sizeof(*eth) + tl);
			FZ_CHECK(rte_be_to_cpu_32(ip->src_addr) == SRV_IP);
			if (!(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM))
				FZ_CHECK(rte_raw_cksum(ip, sizeof(*ip)) == 0xffff);
			if (ip->next_proto_id == IPPROTO_TCP) {
				const struct rte_tcp_hdr *th = (const void *)(ip + 1);
				uint32_t doff = (th->data_off >> 4) * 4u;
				uint32_t len = tl - 20 - doff;
				int f = flow_of_port(rte_be_to_cpu_16(th->dst_port));
				uint32_t seq = rte_be_to_cpu_32(th->sent_seq);

				if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM))
					FZ_CHECK(rte_ipv4_udptcp_cksum_verify(ip, th) == 0);
				FZ_CHECK(len <= 1460);
				if (f >= 0) {
					struct flow *fl = &z->fl[f];
					uint32_t end = seq + len +
						       ((th->tcp_flags &
							 (RTE_TCP_FIN_FLAG | RTE_TCP_SYN_FLAG))
								? 1
								: 0);

					if ((th->tcp_flags & RTE_TCP_SYN_FLAG) != 0) {
						fl->cookie = seq;
						fl->rcvd = end;
					} else if ((int32_t)(end - fl->rcvd) > 0) {
						fl->rcvd = end;
					}
				}
			}
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Frame builders                                                           */

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint8_t
rd8(struct rd *r)
{
	if (r->n == 0)
		return 0;
	r->n--;
	return *r->p++;
}

static uint16_t
rd16(struct rd *r)
{
	uint16_t v = rd8(r);

	return (uint16_t)(v << 8 | rd8(r));
}

/* ends - a frame from client address @sip to the server. */
static struct sk_frame_ends
ends(uint32_t sip)
{
	return (struct sk_frame_ends){
		.src_mac = cli_mac, .dst_mac = srv_mac, .sip = sip, .dip = SRV_IP};
}

static struct rte_mbuf *
mk_seg(struct fz *z, struct rd *r)
{
	uint8_t b0 = rd8(r);
	int f = b0 & (NFLOW - 1);
	struct flow *fl = &z->fl[f];
	uint8_t flags = rd8(r) & 0x3f;
	int16_t sdelta = (int16_t)rd16(r);
	uint8_t amode = rd8(r);
	uint16_t win = rd16(r);
	uint8_t plen = rd8(r);
	bool mss = b0 & 0x08, corrupt = b0 & 0x10;
	uint8_t payload[UINT8_MAX];
	uint32_t seq, ack;
	struct rte_mbuf *m;

	if (flags & RTE_TCP_SYN_FLAG) {
		if (!(flags & RTE_TCP_ACK_FLAG) && sdelta == 0) {
			fl->isn = 0x1000u * (uint32_t)(f + 1) + (uint32_t)(z->now >> 20);
			fl->snd = fl->isn + 1;
		}
		seq = fl->isn + (uint32_t)(sdelta == 0 ? 0 : sdelta);
	} else {
		seq = fl->snd + (uint32_t)(int32_t)sdelta;
	}
	switch (amode & 3) {
	case 0:
		ack = fl->cookie + 1;
		break;
	case 1:
		ack = fl->rcvd;
		break;
	default:
		ack = fl->rcvd + (uint32_t)(int32_t)(int8_t)(amode >> 2) * 97u;
		break;
	}
	/* Two client IPs, eight ports: flows share addresses as in real life. */
	struct sk_frame_ends e = ends(CLI_IP + (uint32_t)(f & 1));
	struct sk_frame_tcp t = {.sport = (uint16_t)(1000 + f),
				 .dport = (b0 & 0x20) ? 81 : 80,
				 .seq = seq,
				 .ack = ack,
				 .flags = flags,
				 .win = win,
				 .data = payload,
				 .len = plen};
	t.has_mss = mss;
	t.mss = mss ? rd16(r) : 0;
	for (unsigned i = 0; i < plen; i++)
		payload[i] = r->n ? rd8(r) : (uint8_t)i;
	m = sk_frame_tcp(pool, &e, &t);
	if (m == NULL)
		return NULL;
	if (corrupt) {
		uint16_t off = rd16(r) % rte_pktmbuf_data_len(m);

		rte_pktmbuf_mtod(m, uint8_t *)[off] ^= (uint8_t)(rd8(r) | 1);
	}
	/* Advance the client's idea of its sequence for in-order data/FIN. */
	if (!(flags & (RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG)) && sdelta == 0)
		fl->snd += plen + ((flags & RTE_TCP_FIN_FLAG) ? 1 : 0);
	return m;
}

static struct rte_mbuf *
mk_raw(struct rd *r)
{
	uint16_t len = rd16(r) % 1600;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	for (uint16_t i = 0; i < len; i++)
		p[i] = rd8(r);
	/* Aim most raw frames at our MAC so they pass the Ethernet check. */
	if (len >= 6 && (len & 1))
		memcpy(p, &srv_mac, 6);
	return m;
}

static struct rte_mbuf *
mk_arp_icmp(struct rd *r)
{
	uint8_t kind = rd8(r);

	if (kind & 1) {
		struct sk_frame_ends e = {
			.src_mac = cli_mac,
			.dst_mac = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
			.sip = (kind & 4) ? SK_IPV4(198, 18, 0, 254) : CLI_IP,
			.dip = SRV_IP,
		};

		return sk_frame_arp(pool, &e, (kind & 2) ? RTE_ARP_OP_REPLY : RTE_ARP_OP_REQUEST);
	} else {
		struct sk_frame_ends e = ends(CLI_IP);
		uint8_t plen = rd8(r), payload[UINT8_MAX];
		uint8_t type = (kind & 2) ? RTE_IP_ICMP_ECHO_REQUEST : rd8(r);

		for (unsigned i = 0; i < plen; i++)
			payload[i] = rd8(r);
		return sk_frame_icmp(pool, &e, type, 0, 0, payload, plen);
	}
}

/* ------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	if (sk_test_eal_init((*argv)[0]) != 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz_pool", POOLSIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz z;
	struct sk_net_conf conf;
	struct rd r = {data, size};
	unsigned avail0 = rte_mempool_avail_count(pool);
	uint8_t cfg = rd8(&r);

	memset(&z, 0, sizeof(z));
	z.now = 1000ull * HZ;
	sk_net_conf_defaults(&conf);
	conf.ip = SRV_IP;
	conf.mac = srv_mac;
	conf.max_conns = MAXCONN;
	conf.rcv_buf_size = (cfg & 1) ? 300 : 10240;
	conf.snd_buf_size = (cfg & 2) ? 64 : 4096;
	conf.time_wait_max = 2;
	conf.time_wait_ms = 500;
	conf.challenge_ack_per_s = 3;
	conf.rto_initial_ms = 50;
	conf.rto_min_ms = 10;
	conf.rto_max_ms = 400;
	conf.max_retries = 3;
	conf.idle_timeout_ms = 2000;
	conf.timer_slots = 64;
	conf.timer_budget = 16;
	conf.tx_burst_max = 4;
	conf.gateway = (cfg & 4) ? SK_IPV4(198, 18, 0, 254) : 0;
	conf.tx_ip_cksum_offload = cfg & 8;
	conf.tx_tcp_cksum_offload = cfg & 16;
	conf.mss = (cfg & 32) ? 536 : 1460;
	conf.tsc_hz = HZ;
	memset(conf.cookie_secret, 0x5c, sizeof(conf.cookie_secret));
	conf.tx_fn = tx_fn;
	conf.tx_ctx = &z;
	z.rcv_buf = conf.rcv_buf_size;
	z.net = sk_net_lcore_create(&conf, 0, pool, SOCKET_ID_ANY, &ops, &z);
	FZ_CHECK(z.net != NULL);

	for (int steps = 0; r.n > 0 && steps < 256; steps++) {
		uint8_t op = rd8(&r);
		struct rte_mbuf *burst[8];
		uint16_t nb = 0;

		switch (op % 6) {
		case 0:
			burst[nb] = mk_raw(&r);
			nb += burst[nb] != NULL;
			break;
		case 1:
			burst[nb] = mk_seg(&z, &r);
			nb += burst[nb] != NULL;
			break;
		case 2: {
			uint8_t t = rd8(&r);

			z.now += (t & 0x80) ? (uint64_t)(t & 0x7f) * HZ : (uint64_t)t * (HZ / 1000);
			sk_net_timers(z.net, z.now);
			break;
		}
		case 3: {
			uint8_t a = rd8(&r);
			struct sk_tcp_conn *c = z.fl[a & (NFLOW - 1)].conn;

			if (c == NULL)
				break;
			switch ((a >> 3) & 7) {
			case 0:
			case 1: {
				static const uint8_t resp[200] = {'x'};
				int rc = sk_tcp_send(c, resp, (size_t)(a >> 6) * 60 + 1);

				FZ_CHECK(rc == 0 || rc == -ENOBUFS || rc == -ENOTCONN ||
					 rc == -EMSGSIZE);
				break;
			}
			case 2:
				sk_tcp_close(c);
				break;
			case 3:
				sk_tcp_abort(c);
				break;
			case 4:
			case 5:
				z.fl[a & (NFLOW - 1)].resumed = true;
				sk_tcp_resume(c);
				break;
			default:
				z.consume_mode = a >> 6;
				break;
			}
			break;
		}
		case 4:
			burst[nb] = mk_arp_icmp(&r);
			nb += burst[nb] != NULL;
			break;
		case 5: {
			uint8_t k = (rd8(&r) % 7) + 1;

			for (uint8_t i = 0; i < k; i++) {
				burst[nb] = mk_seg(&z, &r);
				nb += burst[nb] != NULL;
			}
			break;
		}
		}
		for (uint16_t i = 0; i < nb; i++)
			(void)sk_net_flow_hash(burst[i]); /* must not read out of bounds */
		if (nb)
			sk_net_rx(z.net, burst, nb, z.now);
		sk_net_tx_flush(z.net);
		FZ_CHECK(sk_net_lcore_stats(z.net)->tcp_conns <= MAXCONN);
		FZ_CHECK(z.opened - z.closed >= 0 && z.opened - z.closed <= MAXCONN);
	}
	/* Let every timer run out: everything must close, nothing may leak. */
	for (int i = 0; i < 40; i++) {
		z.now += HZ / 2;
		sk_net_timers(z.net, z.now);
		sk_net_tx_flush(z.net);
	}
	FZ_CHECK(z.opened == z.closed);
	FZ_CHECK(sk_net_lcore_stats(z.net)->tcp_conns == 0);
	sk_net_lcore_free(z.net);
	FZ_CHECK(rte_mempool_avail_count(pool) == avail0);
	return 0;
}
