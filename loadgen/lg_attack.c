/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_attack.c - the hostile modes of seckill-loadgen on the port (see
 * lg_attack.h): the SYN flood's raw frames, the holders' and garbage
 * connections on their own stack, how each connection ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "sk_common.h"

#include "lg_attack.h"
#include "lg_load.h"
#include "lg_pick.h"

#define LA_SYN_PER_PASS	 256  /* raw SYNs per poll pass at most */
#define LA_OPEN_PER_PASS 64   /* hostile connections opened per pass at most */
#define LA_DRIP_PER_PASS 1024 /* drip bytes per pass at most */
#define LA_CONNECT_TRIES 8
#define LA_RX_MAX	 1024 /* frames per lg_attack_rx() call (the RX burst is 32) */
#define LA_GARBAGE_BYTES 512
#define LA_TIME_WAIT_MAX 1024
#define LA_REFUSED_MS	 1000 /* an RST this soon, before any answer: "refused" */
#define LA_DRIP_PREFIX	 "GET /healthz HTTP/1.1\r\nHost: loadgen\r\nX-Drip: "

/* Per connection, in its app area. */
struct la_conn {
	uint64_t id; /* > 0 while ours */
	uint32_t live_idx;
	uint32_t drip_pos;  /* bytes dripped so far */
	uint8_t closing;    /* close/abort called */
	uint8_t got_data;   /* an answer byte came */
	uint8_t server_end; /* the server closed it (FIN, or an answer with close) */
	uint8_t ours;	    /* the loadgen closed it (end of run, bad answer) */
	uint64_t t_open;
	struct sk_http_client_resp resp;
};

struct la_drip {
	struct sk_tcp_conn *c;
	uint64_t id;
	uint64_t due;
};

struct lg_attack {
	struct lg_attack_stats st;
	const struct lg_opts *o;
	struct lg_load_env env;
	struct sk_net_lcore *net; /* holders/garbage */
	struct rte_ether_addr server_mac;
	uint64_t hz, now, start, end;
	bool running;
	uint64_t attempts; /* SYNs or connections the rate curve was paid */
	uint64_t key, rng, next_id;
	uint32_t ip_idx, port_off, nports;
	uint64_t rst_claimed, synref_claimed;
	struct sk_tcp_conn **live;
	uint32_t nlive;
	struct la_drip *fifo;
	uint32_t fmask, fhead, ftail;
	struct rte_mbuf *fwd[LA_RX_MAX];
	uint8_t garbage[LA_GARBAGE_BYTES];
};

static inline struct la_conn *
conn_of(struct sk_tcp_conn *c)
{
	return sk_tcp_app_data(c);
}

static uint64_t
tsc_ns(const struct lg_attack *a, uint64_t tsc)
{
	return (uint64_t)((unsigned __int128)tsc * 1000000000u / a->hz);
}

/* ------------------------------------------------------------------------ */
/* SYN flood                                                                 */
/* ------------------------------------------------------------------------ */

static unsigned
syn_burst(struct lg_attack *a, unsigned n)
{
	struct rte_mbuf *m[LA_SYN_PER_PASS];
	struct lg_syn s;
	uint16_t tx;

	if (rte_pktmbuf_alloc_bulk(a->env.pool, m, n) != 0) {
		a->st.syn_nombuf += n;
		a->attempts += n;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	memcpy(s.src_mac, a->env.mac.addr_bytes, 6);
	memcpy(s.dst_mac, a->server_mac.addr_bytes, 6);
	s.dst_ip = a->o->server_ip;
	s.dst_port = a->o->server_port;
	s.mss = 1460;
	s.window = 65535;
	for (unsigned i = 0; i < n; i++) {
		uint64_t r = lg_rng_next(&a->rng);
		size_t len;

		s.src_ip = a->o->attack_ip + (uint32_t)(r % a->o->attack_count);
		s.src_port = (uint16_t)(a->o->sport_min + (uint32_t)((r >> 32) % a->nports));
		s.seq = lg_syn_iss(a->key, s.src_ip, s.src_port);
		s.ip_id = (uint16_t)(r >> 16);
		len = lg_syn_build(rte_pktmbuf_mtod(m[i], uint8_t *), rte_pktmbuf_tailroom(m[i]),
				   &s);
		m[i]->data_len = (uint16_t)len;
		m[i]->pkt_len = (uint32_t)len;
	}
	tx = rte_eth_tx_burst(a->env.port_id, 0, m, (uint16_t)n);
	if (tx < n)
		rte_pktmbuf_free_bulk(m + tx, n - tx);
	a->st.syn_sent += tx;
	a->st.syn_dropped += n - tx;
	a->attempts += n;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Holders and garbage                                                       */
/* ------------------------------------------------------------------------ */

static void
drip_push(struct lg_attack *a, struct sk_tcp_conn *c, uint64_t due)
{
	if (a->ftail - a->fhead > a->fmask) /* cannot happen: one entry per connection */
		return;
	a->fifo[a->ftail++ & a->fmask] = (struct la_drip){c, conn_of(c)->id, due};
}

/* drip_one - the next byte of an endless request head. */
static void
drip_one(struct lg_attack *a, struct sk_tcp_conn *c, struct la_conn *ac)
{
	static const char prefix[] = LA_DRIP_PREFIX;
	char b = ac->drip_pos < sizeof(prefix) - 1 ? prefix[ac->drip_pos] : 'a';

	if (sk_tcp_send(c, &b, 1) == 0) {
		ac->drip_pos++;
		a->st.bytes_sent++;
	}
}

static void
conn_close(struct sk_tcp_conn *c, struct la_conn *ac)
{
	ac->closing = 1;
	sk_tcp_close(c);
}

static bool
conn_open(struct lg_attack *a)
{
	const struct lg_opts *o = a->o;
	struct sk_tcp_conn *c = NULL;
	struct la_conn *ac;

	for (int t = 0; t < LA_CONNECT_TRIES && c == NULL; t++) {
		uint32_t ip = o->attack_ip + a->ip_idx;
		uint16_t port = (uint16_t)(o->sport_min + a->port_off);

		if (++a->ip_idx == o->attack_count) {
			a->ip_idx = 0;
			if (++a->port_off == a->nports)
				a->port_off = 0;
		}
		c = sk_tcp_connect(a->net, ip, port, o->server_ip, o->server_port, &a->server_mac);
		if (c == NULL && rte_errno != EADDRINUSE)
			break;
	}
	if (c == NULL) {
		a->st.connect_errors++;
		return false;
	}
	ac = conn_of(c);
	ac->id = ++a->next_id;
	ac->t_open = a->now;
	ac->live_idx = a->nlive;
	a->live[a->nlive++] = c;
	if (a->nlive > a->st.live_max)
		a->st.live_max = a->nlive;
	a->st.opened++;
	if (o->attack == LG_ATTACK_GARBAGE) {
		for (size_t i = 0; i < sizeof(a->garbage); i += 8) {
			uint64_t r = lg_rng_next(&a->rng);

			memcpy(a->garbage + i, &r, 8);
		}
		if (sk_tcp_send(c, a->garbage, sizeof(a->garbage)) == 0)
			a->st.bytes_sent += sizeof(a->garbage);
	} else if (o->drip_ms != 0) {
		drip_one(a, c, ac); /* leaves with the handshake's ACK */
		drip_push(a, c, a->now + o->drip_ms * a->hz / 1000);
	}
	return true;
}

static unsigned
drips(struct lg_attack *a)
{
	unsigned done = 0;

	while (a->fhead != a->ftail && done < LA_DRIP_PER_PASS) {
		struct la_drip e = a->fifo[a->fhead & a->fmask];
		struct la_conn *ac;

		if (e.due > a->now)
			break;
		a->fhead++;
		ac = conn_of(e.c);
		if (ac->id != e.id || ac->closing)
			continue;
		drip_one(a, e.c, ac);
		drip_push(a, e.c, e.due + a->o->drip_ms * a->hz / 1000);
		done++;
	}
	return done;
}

/* ------------------------------------------------------------------------ */
/* The attack stack's callbacks                                              */
/* ------------------------------------------------------------------------ */

static void
la_on_open(void *app, struct sk_tcp_conn *c)
{
	(void)app;
	sk_tcp_abort(c); /* no listener: cannot happen */
}

static size_t
la_on_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct lg_attack *a = app;
	struct la_conn *ac = conn_of(c);
	size_t used = 0;

	if (ac->id == 0 || ac->closing)
		return len;
	ac->got_data |= len > 0;
	while (used < len) {
		enum sk_http_client_result r =
			sk_http_client_parse(&ac->resp, data + used, len - used);

		if (r == SK_HTTP_CLIENT_AGAIN)
			break;
		if (r != SK_HTTP_CLIENT_DONE) {
			a->st.unparsed++;
			ac->ours = 1;
			conn_close(c, ac);
			return len;
		}
		a->st.answered++;
		a->st.status[ac->resp.status < 600 ? ac->resp.status : 0]++;
		if (ac->resp.status == 408)
			sk_crowd_hist_add(&a->st.t408, tsc_ns(a, a->now - ac->t_open));
		used += ac->resp.len;
		if (ac->resp.close) {
			ac->server_end = 1;
			conn_close(c, ac);
			return len;
		}
		sk_http_client_reset(&ac->resp);
	}
	if (sk_tcp_peer_closed(c)) {
		ac->server_end = 1;
		conn_close(c, ac);
		return len;
	}
	return used;
}

static void
la_on_close(void *app, struct sk_tcp_conn *c)
{
	struct lg_attack *a = app;
	struct la_conn *ac = conn_of(c);
	const struct sk_net_stats *ns = sk_net_lcore_stats(a->net);
	struct sk_tcp_conn *last;
	enum lg_end end;

	if (ac->id == 0)
		return;
	/* The stack says a connection ended, not why: its counters of RSTs
	 * (on an established connection, or to the SYN) not yet matched to a
	 * close tell a reset from a timeout of our own stack. */
	if (ac->server_end) {
		end = LG_END_FIN;
	} else if (ac->ours) {
		end = LG_END_OURS;
	} else if (ns->tcp_rst_rx > a->rst_claimed) {
		a->rst_claimed++;
		end = !ac->got_data && a->now - ac->t_open < LA_REFUSED_MS * a->hz / 1000
			      ? LG_END_REFUSED
			      : LG_END_RESET;
	} else if (ns->tcp_connect_refused > a->synref_claimed) {
		a->synref_claimed++;
		end = LG_END_SYN_REFUSED;
	} else {
		end = LG_END_TIMEOUT;
	}
	a->st.ended[end]++;
	sk_crowd_hist_add(&a->st.life, tsc_ns(a, a->now - ac->t_open));
	last = a->live[--a->nlive];
	a->live[ac->live_idx] = last;
	conn_of(last)->live_idx = ac->live_idx;
	ac->id = 0;
}

/* ------------------------------------------------------------------------ */
/* The pass                                                                  */
/* ------------------------------------------------------------------------ */

uint16_t
lg_attack_rx(struct lg_attack *a, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	const struct lg_opts *o = a->o;
	uint16_t keep = 0, nf = 0;

	a->now = now;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t dst = lg_frame_dst_ip(f, m->data_len);

		if (dst - o->attack_ip >= o->attack_count) {
			pkts[keep++] = m;
		} else if (a->net != NULL && nf < LA_RX_MAX) {
			a->fwd[nf++] = m;
		} else {
			if (lg_synack_match(f, m->data_len, o->server_ip, o->server_port,
					    o->attack_ip, o->attack_count, a->key))
				a->st.synack_seen++;
			else
				a->st.other_rx++;
			rte_pktmbuf_free(m);
		}
	}
	if (nf > 0)
		sk_net_rx(a->net, a->fwd, nf, now);
	return keep;
}

unsigned
lg_attack_poll(struct lg_attack *a, uint64_t now, bool load)
{
	const struct lg_opts *o = a->o;
	unsigned done = 0;
	double t, want;

	a->now = now;
	if (a->net != NULL)
		sk_net_timers(a->net, now);
	if (!load || !a->running || now >= a->end) {
		if (a->net != NULL && a->fhead != a->ftail && a->running)
			done += drips(a);
		return done;
	}
	t = (double)(now - a->start) / (double)a->hz;
	want = o->attack_rate * t - (double)a->attempts;
	if (o->attack == LG_ATTACK_SYNFLOOD) {
		if (want >= 1)
			done += syn_burst(a, want > LA_SYN_PER_PASS ? LA_SYN_PER_PASS
								    : (unsigned)want);
		return done;
	}
	for (unsigned i = 0; want >= 1 && i < LA_OPEN_PER_PASS; i++) {
		if (o->attack == LG_ATTACK_HOLDERS ? a->st.opened >= o->attackers
						   : a->nlive >= o->attackers)
			break;
		a->attempts++;
		want -= 1;
		done += conn_open(a);
	}
	done += drips(a);
	return done;
}

unsigned
lg_attack_flush(struct lg_attack *a)
{
	return a->net != NULL ? sk_net_tx_flush(a->net) : 0;
}

void
lg_attack_end(struct lg_attack *a, bool abort)
{
	if (a->running) {
		a->running = false;
		a->st.held_at_end = a->nlive;
	}
	for (uint32_t i = 0; i < a->nlive; i++) {
		struct sk_tcp_conn *c = a->live[i];
		struct la_conn *ac = conn_of(c);

		if (abort) {
			ac->ours |= !ac->server_end;
			sk_tcp_abort(c);
		} else if (!ac->closing) {
			ac->ours = 1;
			conn_close(c, ac);
		}
	}
}

uint32_t
lg_attack_live(const struct lg_attack *a)
{
	return a->nlive;
}

const struct lg_attack_stats *
lg_attack_stats(const struct lg_attack *a)
{
	return &a->st;
}

void
lg_attack_progress(const struct lg_attack *a, FILE *out)
{
	const struct lg_attack_stats *s = &a->st;

	if (a->o->attack == LG_ATTACK_SYNFLOOD)
		fprintf(out,
			"  attack synflood: syn=%" PRIu64 " synack=%" PRIu64 " dropped=%" PRIu64
			"\n",
			s->syn_sent, s->synack_seen, s->syn_dropped + s->syn_nombuf);
	else
		fprintf(out,
			"  attack %s: opened=%" PRIu64 " open=%u answered=%" PRIu64 " fin=%" PRIu64
			" refused=%" PRIu64 " reset=%" PRIu64 "\n",
			lg_attack_str(a->o->attack), s->opened, a->nlive, s->answered,
			s->ended[LG_END_FIN], s->ended[LG_END_REFUSED], s->ended[LG_END_RESET]);
	fflush(out);
}

/* ------------------------------------------------------------------------ */
/* Create, free                                                              */
/* ------------------------------------------------------------------------ */

void
lg_attack_start(struct lg_attack *a, const struct rte_ether_addr *server_mac, uint64_t start,
		uint64_t end)
{
	a->server_mac = *server_mac;
	a->start = start;
	a->end = end;
	a->now = start;
	a->running = true;
}

struct lg_attack *
lg_attack_create(const struct lg_opts *o, const struct lg_load_env *env, char *err, size_t errlen)
{
	static const struct sk_net_app_ops ops = {
		.on_open = la_on_open,
		.on_data = la_on_data,
		.on_close = la_on_close,
	};
	struct sk_net_conf conf;
	struct lg_attack *a;
	uint32_t ring = 1;
	char ip[16];
	double life_ms;

	a = rte_zmalloc_socket("lg_attack", sizeof(*a), RTE_CACHE_LINE_SIZE, env->socket);
	if (a == NULL) {
		sk_set_err(err, errlen, "out of memory (attack state)");
		return NULL;
	}
	a->o = o;
	a->env = *env;
	a->hz = rte_get_tsc_hz();
	lg_attack_stats_init(&a->st);
	a->nports = (uint32_t)o->sport_max - o->sport_min + 1;
	a->port_off = (uint32_t)(rte_rand() % a->nports);
	a->key = rte_rand();
	a->rng = (o->seed + 1) * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL;
	if (a->rng == 0)
		a->rng = 1;
	if (o->attack == LG_ATTACK_SYNFLOOD)
		return a;

	while (ring <= 2 * (uint64_t)o->attackers)
		ring <<= 1;
	a->fmask = ring - 1;
	a->live = rte_zmalloc_socket("lg_attack_live", sizeof(*a->live) * o->attackers, 0,
				     env->socket);
	a->fifo = rte_zmalloc_socket("lg_attack_drip", sizeof(*a->fifo) * ring, 0, env->socket);
	if (a->live == NULL || a->fifo == NULL) {
		sk_set_err(err, errlen, "out of memory (%u attack connections)", o->attackers);
		goto err;
	}
	sk_net_conf_defaults(&conf);
	conf.ip = o->attack_ip;
	conf.ip_count = o->attack_count;
	conf.prefix_len = o->attack_prefix;
	conf.gateway = 0; /* the server's MAC comes from the legitimate stack */
	conf.mac = env->mac;
	conf.port_id = env->port_id;
	conf.tx_queue = 0;
	conf.tcp_port = 0;
	conf.max_conns = o->attackers + LA_TIME_WAIT_MAX + 64;
	conf.time_wait_max = LA_TIME_WAIT_MAX;
	conf.max_conns_per_ip = 0;
	conf.rcv_buf_size = 4096;
	conf.snd_buf_size = 4096;
	conf.app_data_size = (uint32_t)RTE_MAX(sk_align_up(sizeof(struct la_conn), 64),
					       (size_t)SK_TCP_APP_DATA_MIN);
	/* Our own stack must not end the holders: they idle on purpose. */
	life_ms = o->duration_s * 1000.0 + o->drain_ms + 60000.0;
	conf.idle_timeout_ms = (uint32_t)RTE_MIN(life_ms, 4e9);
	conf.idle_new_ms = conf.idle_timeout_ms;
	conf.tx_ip_cksum_offload = env->tx_ip_cksum;
	conf.tx_tcp_cksum_offload = env->tx_tcp_cksum;
	for (size_t i = 0; i < sizeof(conf.cookie_secret); i++)
		conf.cookie_secret[i] = (uint8_t)rte_rand();
	a->net = sk_net_lcore_create(&conf, rte_lcore_id(), env->pool, env->socket, &ops, a);
	if (a->net == NULL) {
		sk_set_err(err, errlen, "attack TCP stack (%u connections, %s + %u, /%u): %s",
			   conf.max_conns, lg_ip_str(o->attack_ip, ip), o->attack_count,
			   o->attack_prefix, rte_strerror(rte_errno));
		goto err;
	}
	return a;
err:
	lg_attack_free(a);
	return NULL;
}

void
lg_attack_free(struct lg_attack *a)
{
	if (a == NULL)
		return;
	sk_net_lcore_free(a->net);
	rte_free(a->live);
	rte_free(a->fifo);
	rte_free(a);
}
