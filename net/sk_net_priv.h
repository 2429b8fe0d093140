/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Private types of the network stack, shared by the files of net/
 * only: the per-lcore state (struct sk_net_lcore), the connection
 * (struct sk_tcp_conn), sequence arithmetic, and the cross-file entry points
 * (one section per protocol file). Not installed, not for the app.
 */
#ifndef SK_NET_PRIV_H
#define SK_NET_PRIV_H

#include <string.h>
#include <sys/queue.h>

#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_tcp.h>

#include "sk_cksum.h"
#include "sk_common.h"
#include "sk_net.h"
#include "sk_syncookie.h"
#include "sk_timer_wheel.h"

/* ------------------------------------------------------------------------ */
/* Sequence-number arithmetic (RFC 9293 §3.4), modulo 2^32.                 */

static inline bool
sk_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
sk_seq_leq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool
sk_seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool
sk_seq_geq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

/** sk_seq_in - true if lo <= x < hi (modulo 2^32). */
static inline bool
sk_seq_in(uint32_t x, uint32_t lo, uint32_t hi)
{
	return sk_seq_leq(lo, x) && sk_seq_lt(x, hi);
}

/* ------------------------------------------------------------------------ */
/* Connection                                                               */

enum sk_tcp_state {
	SK_TCP_CLOSED = 0, /* slot free or awaiting on_close */
	SK_TCP_ESTABLISHED,
	SK_TCP_CLOSE_WAIT,
	SK_TCP_FIN_WAIT_1,
	SK_TCP_FIN_WAIT_2,
	SK_TCP_CLOSING,
	SK_TCP_LAST_ACK,
	SK_TCP_TIME_WAIT,
	SK_TCP_SYN_SENT, /* active open (sk_tcp_connect): SYN sent, no SYN-ACK yet */
};

enum {
	SK_TCPF_APP_OPEN = 1u << 0,	 /* on_open done, on_close not yet */
	SK_TCPF_APP_CLOSED = 1u << 1,	 /* close requested: no on_data, no send */
	SK_TCPF_FIN_QUEUED = 1u << 2,	 /* send a FIN after the data */
	SK_TCPF_FIN_SENT = 1u << 3,	 /* our FIN went out at least once */
	SK_TCPF_FIN_ACKED = 1u << 4,	 /* our FIN is acknowledged */
	SK_TCPF_PEER_FIN = 1u << 5,	 /* the peer's FIN was received */
	SK_TCPF_FIN_NOTIFY = 1u << 6,	 /* on_data still owes the app the FIN */
	SK_TCPF_ACK_NOW = 1u << 7,	 /* an ACK is owed at the next flush */
	SK_TCPF_RTO_ARMED = 1u << 8,	 /* rto_deadline is meaningful */
	SK_TCPF_RTT_ACTIVE = 1u << 9,	 /* timing one segment (rtt_seq) */
	SK_TCPF_IN_OUTQ = 1u << 10,	 /* on net->outq */
	SK_TCPF_IN_RESUMEQ = 1u << 11,	 /* on net->resumeq */
	SK_TCPF_IN_CLOSEQ = 1u << 12,	 /* on net->closeq */
	SK_TCPF_IN_TWQ = 1u << 13,	 /* on net->twq */
	SK_TCPF_IN_FRESHQ = 1u << 14,	 /* on net->freshq: no complete request yet */
	SK_TCPF_DEADLINE = 1u << 15,	 /* app_deadline is meaningful */
	SK_TCPF_PEER_COUNTED = 1u << 16, /* counted in net->peers (rip) */
	SK_TCPF_SYN_OUT = 1u << 17,	 /* SYN_SENT: our SYN went out at least once */
	SK_TCPF_V6 = 1u << 18,		 /* over IPv6: rip6 / lip6 (rip, lip are 0) */
};

/*
 * One TCP connection. Slots live in net->conns[], allocated at create time;
 * the receive buffer, send ring and app area are fixed slices of three
 * arrays, so a slot never allocates. Hot fields first.
 */
struct sk_tcp_conn {
	struct sk_timer timer;	    /* the one timer of the connection: must be first */
	struct sk_tcp_conn *hnext;  /* hash chain, or free list */
	struct sk_net_lcore *net;   /* owner */
	uint32_t rip, lip;	    /* remote / local IPv4, host order; 0 over IPv6 */
	uint16_t rport, lport;	    /* host order */
	uint8_t state;		    /* enum sk_tcp_state */
	uint16_t mss;		    /* effective send MSS */
	uint32_t flags;		    /* SK_TCPF_* */
	struct rte_ether_addr rmac; /* next hop: source MAC of the peer's last segment */

	/* receive side */
	uint32_t rcv_nxt;     /* next sequence number expected */
	uint32_t rcv_len;     /* bytes buffered in rcv_buf (always from offset 0) */
	uint32_t rcv_adv_wnd; /* window in our last segment */

	/* send side: bytes [snd_una, snd_una + snd_len) sit in the snd ring */
	uint32_t snd_una;     /* oldest unacknowledged */
	uint32_t snd_nxt;     /* next to send (rewinds on RTO) */
	uint32_t snd_max;     /* highest ever sent */
	uint32_t snd_wnd;     /* peer's window */
	uint32_t max_snd_wnd; /* largest window seen (RFC 5961 ACK check) */
	uint32_t snd_wl1;     /* seq of the segment that last updated snd_wnd */
	uint32_t snd_wl2;     /* ack of that segment */
	uint32_t snd_len;     /* data bytes in the ring from snd_una */
	uint32_t snd_head;    /* ring offset of snd_una */
	uint32_t fin_seq;     /* sequence number of our FIN once sent */

	/* timers, in wheel ticks */
	uint64_t last_rx;      /* last acceptable segment (idle timer) */
	uint64_t rto_deadline; /* retransmit / persist deadline if RTO_ARMED */
	uint64_t tw_deadline;  /* TIME_WAIT end */
	uint64_t rtt_start;    /* tick rtt_seq was sent */
	uint64_t app_deadline; /* sk_tcp_set_deadline() if DEADLINE */
	uint64_t chal_tick;    /* last challenge ACK sent (per-connection limit) */
	uint32_t rtt_seq;      /* ACK that completes the RTT sample */
	uint32_t rto;	       /* current RTO (ticks) */
	uint32_t srtt8;	       /* smoothed RTT x8 (ticks), 0 = no sample */
	uint32_t rttvar4;      /* RTT variance x4 (ticks) */
	uint8_t retries;       /* consecutive RTO expiries */

	TAILQ_ENTRY(sk_tcp_conn) outq;	  /* has output at the next flush */
	TAILQ_ENTRY(sk_tcp_conn) resumeq; /* on_data owed (sk_tcp_resume) */
	TAILQ_ENTRY(sk_tcp_conn) closeq;  /* on_close owed / slot to free */
	TAILQ_ENTRY(sk_tcp_conn) twq;	  /* TIME_WAIT, oldest first */
	TAILQ_ENTRY(sk_tcp_conn) freshq;  /* no complete request yet, oldest first */

	uint8_t *rcv_buf; /* conf.rcv_buf_size bytes */
	uint8_t *snd_buf; /* conf.snd_buf_size bytes (ring) */
	void *app_data;	  /* conf.app_data_size bytes */

	/* IPv6 only (SK_TCPF_V6), network order; stale over IPv4. An IPv6
	 * connection has lip 0, which no IPv4 lookup asks for (conf.ip != 0).
	 * Last, so that IPv4 never touches (nor prefetches) their lines. */
	uint8_t rip6[16], lip6[16];
};

TAILQ_HEAD(sk_tcp_conn_list, sk_tcp_conn);

/* ------------------------------------------------------------------------ */
/* Per-lcore state                                                          */

#define SK_ARP_CACHE_SIZE 64 /* direct-mapped, power of two */

struct sk_arp_entry {
	uint32_t ip; /* 0 = empty */
	struct rte_ether_addr mac;
};

#define SK_ND_CACHE_SIZE 64 /* direct-mapped, power of two: as the ARP cache */

enum { SK_ND_EMPTY = 0, SK_ND_INCOMPLETE, SK_ND_REACHABLE };

/* One neighbour (IPv6) cache entry. */
struct sk_nd_entry {
	uint8_t ip[16];		   /* network order */
	struct rte_ether_addr mac; /* valid when REACHABLE */
	uint8_t state;		   /* SK_ND_* */
	uint64_t tick;		   /* REACHABLE: learnt at; INCOMPLETE: last NS sent at */
};

/* What a timer entry belongs to (sk_timer.kind). */
enum { SK_TIMER_CONN = 1, SK_TIMER_ARP = 2 };

/* Received frames kept per pass for the segments sent (a burst's worth). */
#define SK_NET_SPARE_MAX 64
/** Frames of a burst whose connection sk_tcp_rx_prefetch() prefetches. */
#define SK_TCP_PREFETCH_MAX 64

struct sk_net_lcore {
	struct sk_net_conf conf;
	struct sk_net_app_ops ops;
	void *app;
	struct rte_mempool *pool;
	unsigned lcore;

	/* time */
	uint64_t now_tsc;
	uint64_t now_tick;
	uint64_t tick_tsc; /* TSC cycles per wheel tick */
	uint32_t rto_init; /* the conf timeouts converted to ticks */
	uint32_t rto_min;
	uint32_t rto_max;
	uint32_t idle_ticks;
	uint32_t idle_new_ticks;
	uint32_t tw_ticks;
	uint32_t chal_conn_ticks;

	uint32_t netmask; /* host order */
	struct sk_syncookie cookie;
	uint32_t hash_seed;

	/* connection table */
	struct sk_tcp_conn *conns;
	struct sk_tcp_conn **buckets;
	uint32_t bucket_mask;
	struct sk_tcp_conn *free_list;
	uint8_t *rcv_mem;
	uint8_t *snd_mem;
	uint8_t *app_mem;
	struct sk_tcp_conn_list outq;
	struct sk_tcp_conn_list resumeq;
	struct sk_tcp_conn_list closeq;
	struct sk_tcp_conn_list twq;
	struct sk_tcp_conn_list freshq;

	/* connections per client address (max_conns_per_ip), open addressing */
	struct sk_tcp_peer *peers;
	uint32_t peer_mask;

	/* timers */
	struct sk_timer_wheel wheel;
	struct sk_timer arp_timer;

	/* ARP */
	struct sk_arp_entry arp[SK_ARP_CACHE_SIZE];

	/* IPv6: our addresses and the neighbour cache (sk_nd.c) */
	bool has_ip6;		 /* conf.ip6 is set */
	uint8_t ll6[16];	 /* link-local address (EUI-64 of conf.mac) */
	uint32_t nd_reach_ticks; /* how long a learnt entry is trusted */
	uint32_t nd_retry_ticks; /* least time between two NS for one address */
	uint64_t nd_second;	 /* the second nd_ns_count counts in */
	uint32_t nd_ns_count;	 /* NS sent in nd_second (cap: SK_ND_NS_PER_S) */
	struct sk_nd_entry nd[SK_ND_CACHE_SIZE];

	/* RFC 5961 challenge-ACK rate limit: count in the current second, and
	 * this second's limit, drawn at random (the CVE-2016-5696 side channel) */
	uint64_t chal_second;
	uint32_t chal_count;
	uint32_t chal_limit;
	uint64_t rng; /* xorshift64 state */

	struct sk_net_stats stats;

	/* sk_net_rx(): the frame being processed (index in the burst), and
	 * the hash bucket sk_tcp_rx_prefetch() found for each of the first
	 * rx_hint_n frames (sk_tcp_conn_lookup_rx) */
	uint16_t rx_cur;
	uint16_t rx_hint_n;
	const struct rte_mbuf *rx_hint_m[SK_TCP_PREFETCH_MAX];
	struct sk_tcp_conn *const *rx_hint_b[SK_TCP_PREFETCH_MAX];

	/* Received frames done with, kept for the segments of this pass
	 * (sk_net_rx_done, sk_net_mbuf_get); back to the pool at the flush. */
	uint16_t spare_n;
	struct rte_mbuf *spare[SK_NET_SPARE_MAX];

	/* TX queue, flushed by sk_net_tx_flush() or when full */
	uint16_t txn;
	struct rte_mbuf *txq[];
};

/* ------------------------------------------------------------------------ */
/* sk_net.c: TX queue                                                       */

/** Send the TX queue now; returns frames accepted. */
uint16_t sk_net_tx_burst(struct sk_net_lcore *net);

/** Queue @m for transmission; takes ownership. Flushes when the queue is full. */
static inline void
sk_net_tx_enqueue(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	if (net->txn >= net->conf.tx_burst_max)
		sk_net_tx_burst(net);
	net->txq[net->txn++] = m;
}

/**
 * sk_net_rx_done - the stack is done with the received frame @m (it takes
 * ownership): kept as a spare for a segment of this pass when it is a
 * plain mbuf of the lcore's pool that nothing else holds, else freed. At
 * one request per frame every answer then reuses its request's mbuf, hot
 * in the cache, with no trip through the pool.
 */
static inline void
sk_net_rx_done(struct sk_net_lcore *net, struct rte_mbuf *m)
{
	if (net->spare_n < SK_NET_SPARE_MAX && m->pool == net->pool && RTE_MBUF_DIRECT(m) &&
	    m->next == NULL && rte_mbuf_refcnt_read(m) == 1) {
		net->spare[net->spare_n++] = m;
		return;
	}
	rte_pktmbuf_free(m);
}

/** sk_net_mbuf_get - an empty mbuf for a frame to send: a spare, else one
 * from the pool; NULL if the pool is empty. */
static inline struct rte_mbuf *
sk_net_mbuf_get(struct sk_net_lcore *net)
{
	struct rte_mbuf *m;

	if (net->spare_n == 0)
		return rte_pktmbuf_alloc(net->pool);
	m = net->spare[--net->spare_n];
	rte_pktmbuf_reset(m);
	return m;
}

/** Give the spares back to the pool (end of a pass, or free). */
void sk_net_spare_return(struct sk_net_lcore *net);

/** Convert milliseconds to wheel ticks (at least 1). */
uint32_t sk_net_ms_to_ticks(const struct sk_net_lcore *net, uint32_t ms);

/* sk_eth.c */
void sk_eth_input(struct sk_net_lcore *net, struct rte_mbuf *m);

/* sk_arp.c */
void sk_arp_input(struct sk_net_lcore *net, struct rte_mbuf *m);
void sk_arp_on_timer(struct sk_net_lcore *net);

/* sk_ipv4.c */
void sk_ipv4_input(struct sk_net_lcore *net, struct rte_mbuf *m);
/** True if @ip (host order) is one of ours: conf.ip .. conf.ip + ip_count - 1. */
static inline bool
sk_net_is_ours(const struct sk_net_lcore *net, uint32_t ip)
{
	return ip - net->conf.ip < net->conf.ip_count;
}
/**
 * Fill an IPv4 header from @src (one of ours) to @dst (host order), @l4_len
 * payload bytes, its checksum included (computed from the values, not read
 * back); sk_ipv4_tx_flags() then sets the mbuf's offload fields.
 */
void sk_ipv4_fill(struct rte_ipv4_hdr *ip, uint32_t src, uint32_t dst, uint8_t proto,
		  uint16_t l4_len);
/** Set the TX offload fields of @m for the header @ip; with the port's IP
 * checksum offload, zero the header checksum for the NIC to fill. */
void sk_ipv4_tx_flags(const struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip);
/** Recompute the checksum of @ip, a header changed in place, then sk_ipv4_tx_flags(). */
void sk_ipv4_finish(const struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip);

/* sk_ipv6.c */
void sk_ipv6_input(struct sk_net_lcore *net, struct rte_mbuf *m);
/** True if @a (16 bytes, network order) is our global or link-local address. */
static inline bool
sk_ipv6_is_ours(const struct sk_net_lcore *net, const uint8_t *a)
{
	return memcmp(a, net->ll6, 16) == 0 || memcmp(a, net->conf.ip6, 16) == 0;
}
/**
 * The upper-layer checksum over the IPv6 pseudo-header (@src, @dst, @len,
 * next header @proto) and the @len bytes at @msg; the checksum field inside
 * @msg must read 0 (or be verified: then a correct message gives 0).
 */
uint16_t sk_ipv6_l4_cksum(const uint8_t *src, const uint8_t *dst, uint8_t proto, const void *msg,
			  uint32_t len);
/** True if @a is link-local unicast (fe80::/10). */
static inline bool
sk_ipv6_is_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}
/** The solicited-node multicast address ff02::1:ffXX:XXXX of @a. */
void sk_ipv6_solicited(const uint8_t *a, uint8_t out[16]);
/** The Ethernet multicast MAC 33:33:xx:xx:xx:xx of multicast address @a. */
void sk_ipv6_mcast_mac(const uint8_t *a, struct rte_ether_addr *mac);
/**
 * Fill an IPv6 header (no extension headers) and the Ethernet header before
 * it; @dmac NULL derives the multicast MAC from @dst. Sets the mbuf lengths
 * fields for offloads (none is asked for: ICMPv6 is summed in software).
 */
void sk_ipv6_fill(const struct sk_net_lcore *net, struct rte_mbuf *m, const uint8_t *src,
		  const uint8_t *dst, const struct rte_ether_addr *dmac, uint8_t proto,
		  uint8_t hop_limit, uint16_t l4_len);

/* sk_icmp6.c */
/**
 * ICMPv6 input: @ip is the packet's IPv6 header, the message is @len bytes
 * at @off bytes after it (extension headers skipped). Takes ownership of @m.
 */
void sk_icmp6_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip,
		    uint32_t off, uint32_t len);
/** The checksum field value of an ICMPv6 message (its own field read as 0). */
uint16_t sk_icmp6_cksum(const uint8_t *src, const uint8_t *dst, const void *msg, uint32_t len);

/* sk_nd.c: the neighbour cache */
/** Convert the cache's timers to @net's ticks (at create time). */
void sk_nd_init(struct sk_net_lcore *net);
/** Record @ip -> @mac (REACHABLE, now); @create false: only if @ip has an entry. */
void sk_nd_learn(struct sk_net_lcore *net, const uint8_t *ip, const struct rte_ether_addr *mac,
		 bool create);

/* sk_icmp.c */
void sk_icmp_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip);

/* sk_tcp_in.c */
void sk_tcp_input(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv4_hdr *ip);
/**
 * TCP over IPv6: the segment is @len bytes at @off bytes after @ip (extension
 * headers skipped by sk_ipv6_input). Takes ownership of @m.
 */
void sk_tcp_input6(struct sk_net_lcore *net, struct rte_mbuf *m, struct rte_ipv6_hdr *ip,
		   uint32_t off, uint32_t len);
/** Our MSS over IPv6: conf.mss is for IPv4, whose header is 20 bytes shorter. */
static inline uint16_t
sk_tcp_mss6(const struct sk_net_lcore *net)
{
	return (uint16_t)(net->conf.mss - 20);
}
/** Our MSS on connection @c's family. */
static inline uint16_t
sk_tcp_our_mss(const struct sk_tcp_conn *c)
{
	return (c->flags & SK_TCPF_V6) ? sk_tcp_mss6(c->net) : c->net->conf.mss;
}

/* sk_tcp_out.c */
/** Build the pending segments of @c; @force sends one segment even into a zero window. */
void sk_tcp_output(struct sk_tcp_conn *c, bool force);
/** A pure ACK now (challenge ACK, dup ACK, TIME_WAIT). */
void sk_tcp_send_ack(struct sk_tcp_conn *c);
/** RST for connection @c (SEQ = SND.MAX). */
void sk_tcp_send_rst_conn(struct sk_tcp_conn *c);
/** RST or SYN-ACK from @sip:@sport (the segment's destination) for a segment that matched no
 * connection; over IPv6 when @sip6 and @dip6 (network order) are not NULL. */
void sk_tcp_send_raw(struct sk_net_lcore *net, const struct rte_ether_addr *dmac, uint32_t sip,
		     uint16_t sport, uint32_t dip, uint16_t dport, const uint8_t *sip6,
		     const uint8_t *dip6, uint32_t seq, uint32_t ack, uint8_t flags,
		     uint16_t mss_opt);
/** Current receive window of @c (every segment in and out reads it: inline). */
static inline uint32_t
sk_tcp_rcv_wnd(const struct sk_tcp_conn *c)
{
	uint32_t size = c->net->conf.rcv_buf_size;
	uint32_t w = (c->flags & SK_TCPF_APP_CLOSED) ? size : size - c->rcv_len;

	return RTE_MIN(w, 65535u);
}
/** Connection timer fired (kind SK_TIMER_CONN). */
void sk_tcp_on_timer(struct sk_tcp_conn *c);

/* sk_tcp_peer.c: connections per client address */

/**
 * One entry of the per-address table: an IPv4 address, or the prefix of an
 * IPv6 one (sk_addr_key(), conf.ip6_prefix, /64 by default), so that a host
 * cannot escape the cap by rotating addresses inside its prefix. fam 0 = empty.
 */
struct sk_tcp_peer {
	uint64_t key; /* IPv4: the address (host order); IPv6: the first 64 bits of its
			 prefix (conf.ip6_prefix), network order */
	uint32_t conns;
	uint32_t fam; /* 0 (empty), 4 or 6 */
};

/** Allocate the table for @conf (NULL with conf.max_conns_per_ip 0). */
struct sk_tcp_peer *sk_tcp_peer_table(const struct sk_net_conf *conf, int socket, uint32_t *mask);
/** True if one more connection from @ip (or IPv6 @ip6, when not NULL) stays within
 * conf.max_conns_per_ip. */
bool sk_tcp_peer_admit(const struct sk_net_lcore *net, uint32_t ip, const uint8_t *ip6);
/** Count connection @c against its address (sets PEER_COUNTED). */
void sk_tcp_peer_add(struct sk_tcp_conn *c);
/** Uncount @c if it was counted. */
void sk_tcp_peer_remove(struct sk_tcp_conn *c);

/* sk_tcp_conn.c and sk_tcp_prefetch.c */
/** The hash of an IPv4 4-tuple (host order) in the connection table. */
static inline uint32_t
sk_tcp_conn_hash(const struct sk_net_lcore *net, uint32_t rip, uint16_t rport, uint32_t lip,
		 uint16_t lport)
{
	return rte_jhash_3words(rip, lip, ((uint32_t)rport << 16) | lport, net->hash_seed);
}
/** Bytes of a connection's app area, and of its send ring's free space
 * (the answer's room), that sk_tcp_rx_prefetch() prefetches. */
#define SK_TCP_PREFETCH_APP 256u
#define SK_TCP_PREFETCH_SND 192u
/**
 * Prefetch, for the first SK_TCP_PREFETCH_MAX frames of @pkts, the hash
 * bucket, the connection and its receive, send and app areas that
 * sk_tcp_input() is about to touch: with many connections those are cache
 * misses, and a burst's worth of them overlap instead of stalling one after
 * the other. Hints only (frames are not validated, the table may change
 * while the burst is processed; slots are never freed, so a stale hint
 * reads valid memory).
 */
void sk_tcp_rx_prefetch(struct sk_net_lcore *net, struct rte_mbuf *const *pkts, uint16_t n);
/**
 * sk_tcp_conn_lookup_rx - sk_tcp_conn_lookup() for the frame @m being
 * processed by sk_net_rx(): starts from the bucket sk_tcp_rx_prefetch()
 * found for it (the same hash of the same bytes) instead of hashing again.
 */
struct sk_tcp_conn *sk_tcp_conn_lookup_rx(struct sk_net_lcore *net, const struct rte_mbuf *m,
					  uint32_t rip, uint16_t rport, uint32_t lip,
					  uint16_t lport);
struct sk_tcp_conn *sk_tcp_conn_lookup(struct sk_net_lcore *net, uint32_t rip, uint16_t rport,
				       uint32_t lip, uint16_t lport);
/**
 * New ESTABLISHED slot, or NULL. When the table is full it recycles the
 * oldest TIME_WAIT, else resets the oldest connection without a complete
 * request (on_close is reported at once: we are inside sk_net_rx).
 */
struct sk_tcp_conn *sk_tcp_conn_alloc(struct sk_net_lcore *net, uint32_t rip, uint16_t rport,
				      uint32_t lip, uint16_t lport);
/** sk_tcp_conn_lookup() over IPv6 (addresses in network order). */
struct sk_tcp_conn *sk_tcp_conn_lookup6(struct sk_net_lcore *net, const uint8_t *rip6,
					uint16_t rport, const uint8_t *lip6, uint16_t lport);
/** sk_tcp_conn_alloc() over IPv6: the slot has SK_TCPF_V6, rip6 and lip6. */
struct sk_tcp_conn *sk_tcp_conn_alloc6(struct sk_net_lcore *net, const uint8_t *rip6,
				       uint16_t rport, const uint8_t *lip6, uint16_t lport);
/** Remove from table, lists and wheel; report on_close if the app had it; free. */
void sk_tcp_conn_destroy(struct sk_tcp_conn *c);
/** Enter TIME_WAIT (reports on_close, caps the TIME_WAIT population). */
void sk_tcp_conn_time_wait(struct sk_tcp_conn *c);
/** Put @c on the output queue (ACK or data at the next flush). */
void sk_tcp_conn_want_output(struct sk_tcp_conn *c);
/**
 * The tick at which @c idles out: idle_new_ms after the last progress while
 * it has no complete request, idle_timeout_ms after it once it has.
 */
static inline uint64_t
sk_tcp_conn_idle_deadline(const struct sk_tcp_conn *c)
{
	return c->last_rx +
	       ((c->flags & SK_TCPF_IN_FRESHQ) ? c->net->idle_new_ticks : c->net->idle_ticks);
}
/** (Re)arm the connection timer for the earliest of its deadlines. */
void sk_tcp_conn_timer_update(struct sk_tcp_conn *c);
/** Offer buffered bytes (and a pending FIN) to on_data; after a resume
 * (@p resumed) also with none: the app may hold bytes of its own (TLS). */
void sk_tcp_conn_deliver(struct sk_tcp_conn *c, bool resumed);

/** sk_tcp_listening - @p port is one of the listening ports (not 0). */
static inline bool
sk_tcp_listening(const struct sk_net_lcore *net, uint16_t port)
{
	return port != 0 && (port == net->conf.tcp_port || port == net->conf.tcp_port2);
}
/** Drain the resume, close and output queues (see sk_net_tx_flush). */
void sk_tcp_conn_run_resumes(struct sk_net_lcore *net);
void sk_tcp_conn_run_closes(struct sk_net_lcore *net);
void sk_tcp_conn_run_output(struct sk_net_lcore *net);

#endif /* SK_NET_PRIV_H */
