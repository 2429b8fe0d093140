/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The dataplane's network stack: Ethernet, ARP, IPv4, ICMP echo, IPv6 with
 * neighbour discovery and ICMPv6 echo, and a TCP server (IPv4), one
 * independent instance per lcore.
 *
 * Shape of use (one lcore, run-to-completion):
 *
 * @code
 *   struct sk_net_conf conf;
 *   sk_net_conf_defaults(&conf);
 *   conf.ip = SK_IPV4(198, 18, 0, 1); ... conf.port_id = port; conf.tx_queue = q;
 *   struct sk_net_lcore *net = sk_net_lcore_create(&conf, lcore, pool, socket, &ops, app);
 *   for (;;) {
 *           n = rte_eth_rx_burst(port, q, pkts, 32);
 *           now = rte_rdtsc();
 *           sk_net_rx(net, pkts, n, now);   // owns the mbufs from here on
 *           sk_net_timers(net, now);        // cheap when nothing is due
 *           ...app work, sk_tcp_resume() of parked connections...
 *           sk_net_tx_flush(net);           // EVERY pass: ACKs, replies, resumes
 *   }
 * @endcode
 *
 * TCP is passive-open only (one listening port) with SYN cookies: no state
 * exists for a connection until the client's final handshake ACK carries a
 * valid cookie, so a SYN flood costs no memory. Connections live in a
 * fixed-size table allocated at create time; each has a bounded receive
 * buffer and a bounded retransmission (send) buffer, both fixed-size areas
 * carved out at create time. Every connection is on the per-lcore timer wheel
 * in every state. See docs/tcp.md for the state diagram and what the stack
 * deliberately does not do (no SACK, no window scaling, no timestamps, no
 * active open, no IP fragment reassembly, no IP options).
 *
 * Byte order: every IPv4 address and port in this API is in HOST byte order
 * (SK_IPV4(198, 18, 0, 1)). Prefer SK_IPV4 to DPDK's RTE_IPV4: the latter
 * shifts an int left by 24, which UBSan reports for a >= 128.
 *
 * Threading: an sk_net_lcore and all its connections belong to the lcore
 * that created them; no function here may be called concurrently on the same
 * sk_net_lcore (or its connections) from two threads. Different lcores share
 * nothing and need no synchronisation. Nothing on the packet path allocates
 * memory (mbufs come from the mempool's per-lcore cache), takes a lock or
 * makes a system call, and every loop is bounded.
 *
 * Callback rules (struct sk_net_app_ops):
 *  - on_open(app, c): a connection was established. The per-connection area
 *    sk_tcp_app_data(c) is zeroed before the call.
 *  - on_data(app, c, data, len): @data is ALL unconsumed in-order bytes of
 *    the connection, contiguous. Return how many leading bytes were consumed
 *    (0..len); the rest stays buffered and is offered again, followed by any
 *    newer bytes, at the next call. The buffer is bounded
 *    (sk_net_conf.rcv_buf_size): when it is full the advertised window is
 *    zero and the peer stops sending. The app may "park" a request by not
 *    consuming it; on_data is then called again only when new bytes arrive
 *    or after sk_tcp_resume(c) (then even with len == 0: an app that keeps
 *    bytes of its own, a TLS layer's plaintext, is called). Parked
 *    connections cost nothing per poll
 *    pass. on_data is also called once with whatever is buffered (possibly
 *    len == 0) when the peer's FIN arrives; sk_tcp_peer_closed(c) is then
 *    true, and the app should answer and call sk_tcp_close().
 *  - on_timeout(app, c) (optional): the deadline the app set with
 *    sk_tcp_set_deadline() passed (called from sk_net_timers). The app
 *    answers (e.g. 408) and closes or aborts @c. Without on_timeout the
 *    stack resets the connection.
 *  - on_close(app, c): called exactly once for every connection that got
 *    on_open, when the app can no longer use it (peer reset, retransmission
 *    cap, idle timeout, after sk_tcp_abort(), or once a graceful close has
 *    finished). It is never called from inside an sk_tcp_* call made by the
 *    app: closures are reported from the stack's own entry points
 *    (sk_net_rx, sk_net_timers, sk_net_tx_flush). After on_close returns,
 *    @c and its app area may be reused for another connection.
 *  - Callbacks may call sk_tcp_send/close/abort/resume on any connection of
 *    the same lcore, but must not call sk_net_rx/timers/tx_flush/lcore_free.
 */
#ifndef SK_NET_H
#define SK_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sk_addr.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sk_net_lcore;
struct sk_tcp_conn;

/** IPv4 address a.b.c.d in host byte order (no signed shift, unlike RTE_IPV4). */
#define SK_IPV4(a, b, c, d)                                                                        \
	((uint32_t)((((uint32_t)(a)&0xff) << 24) | (((uint32_t)(b)&0xff) << 16) |                  \
		    (((uint32_t)(c)&0xff) << 8) | ((uint32_t)(d)&0xff)))

/** Length of the SYN-cookie secret (SipHash-2-4 key). */
#define SK_NET_COOKIE_SECRET_LEN 16

/** Smallest per-connection app area sk_tcp_app_data() guarantees. */
#define SK_TCP_APP_DATA_MIN 128

/**
 * TX hook: same contract as rte_eth_tx_burst(): takes ownership of the first
 * N mbufs it returns the count of; the stack frees the rest. Used by tests,
 * the fuzzer and the software dispatcher instead of the NIC.
 */
typedef uint16_t (*sk_net_tx_fn)(void *ctx, struct rte_mbuf **pkts, uint16_t n);

/**
 * Configuration of one lcore's stack. Fill with sk_net_conf_defaults() and
 * override; sk_net_lcore_create() copies it. Addresses in host byte order.
 */
struct sk_net_conf {
	/* --- addressing --- */
	uint32_t ip;		   /**< our IPv4 address (required, != 0) */
	uint32_t ip_count;	   /**< addresses ip .. ip + ip_count - 1 are all ours (ARP, IPv4,
				      sk_tcp_connect sources): a load generator's crowd of clients;
				      1..65536, inside the subnet (default 1) */
	uint8_t prefix_len;	   /**< subnet prefix length, 0..32 (default 24) */
	uint32_t gateway;	   /**< default gateway, 0 = none; resolved by ARP */
	uint8_t ip6[16];	   /**< our IPv6 address, network byte order; all zero = no IPv6
				      (frames of type 0x86DD are then dropped as drop_ethertype).
				      Global unicast; the link-local address is derived from
				      the MAC (sk_net_ipv6_link_local()) */
	uint8_t prefix6_len;	   /**< its prefix length, 1..128 (default 64) */
	struct rte_ether_addr mac; /**< our MAC (required, unicast) */
	uint16_t port_id;	   /**< DPDK port for rte_eth_tx_burst */
	uint16_t tx_queue;	   /**< TX queue of this lcore on port_id */
	uint16_t tcp_port;	   /**< listening TCP port, 0 = none: a client only (default 80) */
	uint16_t tcp_port2;	   /**< a second listening port (the dataplane's HTTPS one), 0 =
				      none (default); the app tells them apart by
				      sk_tcp_local_port() */

	/* --- capacity --- */
	uint32_t max_conns; /**< connection table size per lcore (default 4096), incl. TIME_WAIT */
	uint32_t max_conns_per_ip; /**< connections of one client address per lcore, TIME_WAIT
				      excluded, 0 = no cap (default 1024) */
	uint8_t ip6_prefix;	   /**< max_conns_per_ip counts an IPv6 client by this prefix of its
				      address (sk_addr_key()), 1..64 (default 64): a longer one
				      would let a host escape the cap by rotating addresses */
	uint16_t mss;		   /**< our MSS, 88..9000 (default 1460 = MTU 1500) */
	uint32_t rcv_buf_size;	   /**< per-conn receive buffer, 1..65535 (default 10240) */
	uint32_t snd_buf_size;	   /**< per-conn unacked-send buffer, >= 64 (default 8192) */
	uint32_t app_data_size;	   /**< per-conn app area, >= SK_TCP_APP_DATA_MIN (default 256) */
	uint16_t
		tx_burst_max; /**< TX queue depth before an internal flush, 1..1024 (default 256) */

	/* --- TCP timers (milliseconds) --- */
	uint32_t rto_initial_ms;  /**< RTO before any RTT sample (default 1000, RFC 6298) */
	uint32_t rto_min_ms;	  /**< lower bound of the RTO (default 200) */
	uint32_t rto_max_ms;	  /**< upper bound after backoff (default 8000) */
	uint8_t max_retries;	  /**< retransmissions of one segment before RST (default 6) */
	uint32_t idle_timeout_ms; /**< keep-alive idle timeout (default 60000) */
	uint32_t idle_new_ms;	  /**< idle timeout of a connection that has not completed a request
				     (no sk_tcp_mark_used() yet); idle_timeout_ms if that is
				     shorter (default 10000) */
	uint32_t time_wait_ms;	  /**< TIME_WAIT duration (default 2000: short on purpose) */
	uint32_t time_wait_max; /**< TIME_WAIT entries per lcore; oldest recycled (default 1024) */
	uint32_t challenge_ack_per_s;	/**< RFC 5961 challenge ACKs per second per lcore, on
					   average: each second's limit is drawn at random from
					   [n/2, 3n/2] (default 100) */
	uint32_t challenge_ack_conn_ms; /**< at most one challenge ACK per connection per this
					   many ms (default 500) */
	uint32_t timer_tick_us;		/**< timer wheel tick (default 1000) */
	uint32_t timer_slots;		/**< wheel slots, power of two (default 4096) */
	uint32_t timer_budget; /**< max timer entries visited per sk_net_timers() (default 4096) */
	uint32_t cookie_period_s; /**< SYN-cookie time slot; a cookie lives 1..2 slots (default 64)
				   */
	uint8_t cookie_secret[SK_NET_COOKIE_SECRET_LEN]; /**< keyed-hash secret; set it per boot */

	/* --- port capabilities (set by the port code) --- */
	bool tx_ip_cksum_offload;  /**< NIC computes the IPv4 header checksum */
	bool tx_tcp_cksum_offload; /**< NIC computes the TCP checksum */
	/* RX checksums: mbuf ol_flags GOOD/BAD are honoured; otherwise software. */

	/* --- testing / dispatch --- */
	uint64_t tsc_hz;    /**< TSC frequency, 0 = rte_get_tsc_hz() */
	sk_net_tx_fn tx_fn; /**< NULL = rte_eth_tx_burst(port_id, tx_queue, ...) */
	void *tx_ctx;	    /**< first argument of tx_fn */
};

/**
 * Application callbacks; see "Callback rules" in the file comment.
 * on_open, on_data and on_close must be non-NULL; on_timeout may be NULL.
 */
struct sk_net_app_ops {
	void (*on_open)(void *app, struct sk_tcp_conn *c);
	size_t (*on_data)(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len);
	void (*on_close)(void *app, struct sk_tcp_conn *c);
	void (*on_timeout)(void *app, struct sk_tcp_conn *c); /**< optional, may be NULL */
};

/**
 * Counters of one lcore's stack. Monotonic unless marked "gauge". Every drop
 * and refusal has its own counter.
 */
struct sk_net_stats {
	/* link / network layer */
	uint64_t rx_pkts;	  /**< frames handed to sk_net_rx */
	uint64_t rx_bytes;	  /**< their bytes */
	uint64_t tx_pkts;	  /**< frames accepted by the NIC (or tx_fn) */
	uint64_t tx_bytes;	  /**< their bytes */
	uint64_t tx_dropped;	  /**< frames the NIC refused (freed) */
	uint64_t tx_nombuf;	  /**< segments not sent: mempool empty */
	uint64_t drop_short;	  /**< truncated Ethernet/ARP/IP/ICMP/TCP header */
	uint64_t drop_ethertype;  /**< neither IPv4, ARP nor (when configured) IPv6; VLAN-tagged */
	uint64_t drop_not_us;	  /**< unicast MAC or IPv4 destination not ours */
	uint64_t drop_nonlinear;  /**< multi-segment mbuf (not supported) */
	uint64_t drop_ip_version; /**< IPv4 version != 4 or IHL < 5 */
	uint64_t drop_ip_cksum;	  /**< bad IPv4 header checksum */
	uint64_t drop_ip_len;	  /**< total length inconsistent with the frame */
	uint64_t drop_ip_options; /**< IHL > 5 (options are not supported) */
	uint64_t drop_ip_frag;	  /**< fragment (MF set or offset != 0) */
	uint64_t drop_ip_proto;	  /**< neither ICMP nor TCP */
	uint64_t drop_ip_src;	  /**< source is broadcast/multicast/zero/ours */
	/* IPv6 */
	uint64_t ip6_rx;	   /**< IPv6 frames to our MAC or a multicast MAC */
	uint64_t ip6_drop_bad;	   /**< version != 6, payload length inconsistent with the frame */
	uint64_t ip6_drop_not_us;  /**< destination neither ours, our solicited-node nor ff02::1 */
	uint64_t ip6_drop_src;	   /**< source multicast, loopback or ours */
	uint64_t ip6_drop_frag;	   /**< a fragment header (no reassembly) */
	uint64_t ip6_drop_ext;	   /**< extension headers: more than 8, beyond the packet, a
				      hop-by-hop not first, a routing header with segments left,
				      an unknown option that asks for a discard */
	uint64_t ip6_drop_proto;   /**< upper layer other than ICMPv6 */
	uint64_t icmp6_drop_cksum; /**< bad ICMPv6 checksum (pseudo-header included) */
	uint64_t icmp6_drop_other; /**< ICMPv6 types we ignore (RS, RA, redirect, errors...) */
	uint64_t icmp6_echo_rx;	   /**< echo requests received */
	uint64_t icmp6_echo_tx;	   /**< echo replies sent */
	/* Neighbour discovery (RFC 4861) */
	uint64_t nd_ns_rx;	/**< neighbour solicitations for one of our addresses */
	uint64_t nd_na_tx;	/**< advertisements sent (answers to them) */
	uint64_t nd_na_rx;	/**< advertisements received (valid) */
	uint64_t nd_ns_tx;	/**< solicitations sent (sk_net_nd_lookup() misses) */
	uint64_t nd_ns_limited; /**< solicitations not sent: the per-second cap */
	uint64_t nd_not_ours;	/**< NS/NA for an address that is not ours to answer/learn */
	uint64_t nd_drop_hop;	/**< NS/NA with a hop limit other than 255 */
	uint64_t nd_drop_bad;	/**< malformed NS/NA: short, code, multicast target, options */
	uint64_t nd_learnt;	/**< neighbour cache entries written (learnt or updated) */
	/* ARP */
	uint64_t arp_rx;	 /**< ARP frames received */
	uint64_t arp_reply_tx;	 /**< replies sent to requests for our IP */
	uint64_t arp_request_tx; /**< requests sent (gateway resolution) */
	uint64_t arp_drop;	 /**< malformed or not for us */
	/* ICMP */
	uint64_t icmp_echo_rx;	  /**< echo requests received */
	uint64_t icmp_echo_tx;	  /**< echo replies sent */
	uint64_t icmp_drop_cksum; /**< bad ICMP checksum */
	uint64_t icmp_drop_other; /**< ICMP types we ignore */
	/* TCP input */
	uint64_t tcp_rx;	   /**< TCP segments passing IP checks */
	uint64_t tcp_drop_cksum;   /**< bad TCP checksum */
	uint64_t tcp_drop_hdr;	   /**< bad data offset / flag combination */
	uint64_t tcp_drop_port;	   /**< not our listening port (RST sent unless RST) */
	uint64_t tcp_syn_rx;	   /**< SYNs to the listening port */
	uint64_t tcp_synack_tx;	   /**< SYN-ACKs sent (cookies) */
	uint64_t tcp_cookie_ok;	   /**< handshake ACKs with a valid cookie */
	uint64_t tcp_cookie_bad;   /**< ACKs for no connection with a bad cookie (RST sent) */
	uint64_t tcp_conn_full;	   /**< valid cookie but the table was full of used connections */
	uint64_t tcp_conn_evicted; /**< connections without a request reset to make room */
	uint64_t tcp_conn_per_ip;  /**< valid cookie but max_conns_per_ip reached (RST sent) */
	uint64_t tcp_conn_opened;  /**< connections established */
	uint64_t tcp_conn_closed;  /**< connections released (any reason) */
	uint64_t tcp_conns;	   /**< gauge: connections in the table (incl. TIME_WAIT) */
	uint64_t tcp_time_wait;	   /**< gauge: connections in TIME_WAIT */
	uint64_t tcp_tw_recycled;  /**< TIME_WAIT entries recycled before expiry */
	uint64_t tcp_rx_data;	   /**< in-order payload bytes accepted */
	uint64_t tcp_ooo_drop;	   /**< out-of-order segments dropped (dup ACK sent) */
	uint64_t tcp_win_trim;	   /**< segments trimmed at the right window edge */
	uint64_t tcp_unacceptable; /**< segments outside the window (ACK sent) */
	uint64_t tcp_ack_invalid;  /**< ACK of unsent data or too old (ACK sent / dropped) */
	uint64_t tcp_data_after_close; /**< bytes discarded after sk_tcp_close() */
	uint64_t tcp_zwp_rx;	       /**< zero-window probes answered */
	/* TCP output / timers */
	uint64_t tcp_tx_segs;	   /**< segments built (data, ACK, FIN, RST, SYN-ACK) */
	uint64_t tcp_tx_data;	   /**< payload bytes sent (incl. retransmissions) */
	uint64_t tcp_retransmits;  /**< RTO-driven retransmissions */
	uint64_t tcp_zwp_tx;	   /**< zero-window probes sent */
	uint64_t tcp_rto_reset;	   /**< connections reset after max_retries */
	uint64_t tcp_idle_timeout; /**< connections closed by the idle timer (both kinds) */
	uint64_t tcp_idle_new;	   /**< ... of them without a request (idle_new_ms) */
	uint64_t tcp_app_timeout;  /**< app deadlines (sk_tcp_set_deadline) that passed */
	uint64_t tcp_rst_tx;	   /**< RSTs sent */
	uint64_t tcp_rst_rx;	   /**< RSTs that reset a connection (SEQ == RCV.NXT) */
	uint64_t
		tcp_rst_ignored; /**< RSTs outside the window, for no connection, or in TIME_WAIT */
	uint64_t tcp_challenge_ack;	     /**< RFC 5961 challenge ACKs sent */
	uint64_t tcp_challenge_limited;	     /**< challenge ACKs suppressed by the lcore's limit */
	uint64_t tcp_challenge_conn_limited; /**< ... by the per-connection limit */
	/* TCP active open (sk_tcp_connect) */
	uint64_t tcp_connect;	      /**< active opens started */
	uint64_t tcp_connect_ok;      /**< ... established (SYN-ACK received) */
	uint64_t tcp_connect_refused; /**< ... answered with an RST */
	uint64_t tcp_connect_timeout; /**< ... SYN unanswered after max_retries */
	uint64_t tcp_syn_retransmits; /**< SYNs sent again */
	uint64_t timer_expired;	      /**< timer entries fired */
};

/**
 * Fill @conf with the documented defaults. ip, mac and cookie_secret are left
 * zero: the caller must set them (use a random secret per boot).
 *
 * @param conf  [out] configuration to fill; must not be NULL.
 */
void sk_net_conf_defaults(struct sk_net_conf *conf);

/**
 * Create the stack state of one lcore: connection table, buffers, timer
 * wheel, ARP cache, TX queue. Allocates with rte_zmalloc_socket(); call at
 * start-up only.
 *
 * @param conf    configuration (copied); validated.
 * @param lcore   lcore id (recorded for logs/stats; no affinity is checked).
 * @param pool    mempool for the frames the stack builds (SYN-ACK, ACK,
 *                data, RST, ARP requests); mbuf data room must hold
 *                RTE_PKTMBUF_HEADROOM + 54 + mss bytes.
 * @param socket  NUMA socket for the allocations (SOCKET_ID_ANY allowed).
 * @param ops     application callbacks (copied; all three non-NULL).
 * @param app     opaque first argument of every callback.
 * @return the new lcore stack, or NULL with rte_errno set to:
 *   - EINVAL: a NULL argument, or a conf value out of its documented range;
 *   - ENOMEM: the allocation failed (size overflow included).
 */
struct sk_net_lcore *sk_net_lcore_create(const struct sk_net_conf *conf, unsigned lcore,
					 struct rte_mempool *pool, int socket,
					 const struct sk_net_app_ops *ops, void *app);

/**
 * Free an lcore stack: frees queued TX mbufs and all memory. Connections are
 * dropped silently (no RST, no on_close). NULL is a no-op. The owning lcore
 * must have stopped using it.
 *
 * @param net  lcore stack to free (may be NULL).
 */
void sk_net_lcore_free(struct sk_net_lcore *net);

/**
 * Process received frames. Takes ownership of all @n mbufs (each is freed or
 * reused for a reply). Replies (ARP, ICMP, RST, SYN-ACK) are queued for
 * transmission; ACKs and data are generated at sk_net_tx_flush(). Calls the
 * app callbacks. Frames must be single-segment (others are dropped).
 *
 * @param net      lcore stack.
 * @param pkts     received frames (Ethernet).
 * @param n        number of frames.
 * @param now_tsc  current TSC (rte_rdtsc()); must not go backwards.
 */
void sk_net_rx(struct sk_net_lcore *net, struct rte_mbuf **pkts, uint16_t n, uint64_t now_tsc);

/**
 * Run the timer wheel up to @now_tsc: retransmissions (RTO with exponential
 * backoff, reset after max_retries), zero-window probes, idle timeouts,
 * TIME_WAIT expiry, gateway ARP resolution. Work per call is bounded by
 * conf.timer_budget; what is left is done by the next call.
 *
 * @param net      lcore stack.
 * @param now_tsc  current TSC; must not go backwards.
 */
void sk_net_timers(struct sk_net_lcore *net, uint64_t now_tsc);

/**
 * End of a poll pass: calls on_data for connections resumed with
 * sk_tcp_resume(), builds the pending ACK/data/FIN segments of every
 * connection that has output, reports closed connections (on_close), then
 * sends all queued frames with rte_eth_tx_burst() (or conf.tx_fn) and frees
 * what the NIC refused (counted in stats.tx_dropped). Call it at the end of
 * EVERY poll pass, even when nothing was received.
 *
 * @param net  lcore stack.
 * @return number of frames the NIC accepted.
 */
uint16_t sk_net_tx_flush(struct sk_net_lcore *net);

/**
 * Symmetric flow hash of a frame: the same value for both directions of a
 * TCP or UDP flow over IPv4 or IPv6 (endpoints are ordered before hashing;
 * IPv6 hop-by-hop, routing and destination-options headers are stepped
 * over). For the software dispatch when a port has a single RX queue.
 * Returns 0 for ARP, ICMP, ICMPv6 (and so neighbour discovery), other
 * ethertypes, fragments and truncated frames (so they all go to one lcore).
 * Pure, thread safe, does not touch the mbuf.
 *
 * @param m  a received frame (only its first segment is read).
 * @return the hash; 0 for frames without a TCP/UDP flow.
 */
uint32_t sk_net_flow_hash(const struct rte_mbuf *m);

/**
 * Counters of an lcore stack. The pointer stays valid until
 * sk_net_lcore_free(). Other threads (telemetry) may read it; values are
 * plain uint64_t written by the owning lcore, so a reader sees each counter
 * atomically on 64-bit targets but not a consistent snapshot.
 *
 * @param net  lcore stack.
 * @return its counters (never NULL).
 */
const struct sk_net_stats *sk_net_lcore_stats(const struct sk_net_lcore *net);

/**
 * Look up the ARP cache of an lcore stack (learnt from ARP requests for our
 * address and from replies, e.g. the gateway's).
 *
 * @param net  lcore stack.
 * @param ip   IPv4 address (host order).
 * @param mac  [out] the MAC if found.
 * @return 0 if found, -ENOENT if not (yet) known.
 */
int sk_net_arp_lookup(const struct sk_net_lcore *net, uint32_t ip, struct rte_ether_addr *mac);

/**
 * Look up the neighbour cache (IPv6) of an lcore stack: 64 entries,
 * direct-mapped, learnt from solicitations for our addresses (their source
 * link-layer option) and from advertisements answering ours. An entry is
 * trusted for 60 s after it was learnt. On a miss (or a stale entry) a
 * neighbour solicitation is sent to @ip6's solicited-node multicast group,
 * at most one per address per second and at most 100 per second in all
 * (nd_ns_limited); the answer fills the cache for a later call. Not for
 * the app's callbacks of another lcore: same thread rules as sk_net_rx().
 *
 * @param net  lcore stack.
 * @param ip6  IPv6 address, network byte order (16 bytes).
 * @param mac  [out] the MAC if found (may be NULL).
 * @return 0 if found, -ENOENT if not (yet) known, -EINVAL if the stack has
 *   no IPv6 address or @ip6 is multicast or unspecified.
 */
int sk_net_nd_lookup(struct sk_net_lcore *net, const uint8_t ip6[16], struct rte_ether_addr *mac);

/**
 * The link-local address fe80::/64 with the modified EUI-64 interface
 * identifier of @mac (RFC 4291 appendix A): the address the stack answers
 * neighbour discovery on, beside conf.ip6. Pure.
 *
 * @param mac  the port's MAC.
 * @param ll   [out] 16 bytes, network byte order.
 */
void sk_net_ipv6_link_local(const struct rte_ether_addr *mac, uint8_t ll[16]);

/**
 * Queue @len bytes to send on @c. The bytes are copied into the
 * connection's send buffer and kept until ACKed (for retransmission); they
 * are segmented and sent at the next sk_net_tx_flush(). All-or-nothing.
 *
 * @param c     connection (app-owned: between on_open and on_close).
 * @param data  bytes to send (copied; the caller keeps ownership).
 * @param len   number of bytes.
 * @return 0 on success, or:
 *   - -EINVAL: NULL data with len > 0;
 *   - -EMSGSIZE: @len exceeds conf.snd_buf_size (can never fit);
 *   - -ENOBUFS: not enough free space now (unacked data fills the buffer);
 *   - -ENOTCONN: the connection is closing or closed (sk_tcp_close() or
 *     sk_tcp_abort() was called, or it was reset and on_close is pending).
 */
int sk_tcp_send(struct sk_tcp_conn *c, const void *data, size_t len);

/**
 * Graceful close: a FIN is sent after all queued data. Bytes that arrive
 * afterwards are ACKed and discarded (on_data is not called any more).
 * on_close follows once the close completes (or fails). Idempotent.
 *
 * @param c  connection.
 */
void sk_tcp_close(struct sk_tcp_conn *c);

/**
 * Abortive close: sends an RST now, drops unsent/unacked data and removes
 * the connection from the table. on_close is reported later, from the
 * stack's next entry point. Idempotent.
 *
 * @param c  connection; the app must not use it after on_close.
 */
void sk_tcp_abort(struct sk_tcp_conn *c);

/**
 * Ask for on_data to be called again for @c at the next sk_net_tx_flush(),
 * with whatever is buffered, also nothing (used after a parked request can
 * be answered, or when the app holds bytes of its own).
 * Costs O(1); no-op if @c is closed. Idempotent until then.
 *
 * @param c  connection.
 */
void sk_tcp_resume(struct sk_tcp_conn *c);

/**
 * Active open (the client side, for a load generator): a connection from
 * our address @lip, port @lport, to @rip:@rport, whose next hop is @dmac
 * (the peer or the gateway; see sk_net_arp_lookup()). The SYN, with our MSS,
 * goes out at the next sk_net_tx_flush() and is sent again with RTO backoff
 * (conf.rto_initial_ms, doubling, up to conf.max_retries times).
 *
 * The connection is returned at once, in SYN_SENT, and belongs to the app
 * from this moment as if on_open had been called: on_open is NOT called for
 * an active open; its app area is zeroed. The app may sk_tcp_send() its
 * request right away: the bytes wait in the send buffer and leave with (or
 * right after) the ACK that completes the handshake. on_data and on_close
 * follow as for any connection; on_close also ends a connection that never
 * got established (refused by an RST: tcp_connect_refused; no answer:
 * tcp_connect_timeout). An active open is never evicted and never counted
 * against max_conns_per_ip. Its clock is the stack's: the time of the last
 * sk_net_rx() or sk_net_timers() call, so call it in a poll pass, after
 * those.
 *
 * @param net    lcore stack.
 * @param lip    our source address, one of conf.ip .. conf.ip + ip_count - 1.
 * @param lport  source port, != 0 and neither listening port; the caller picks
 *               ports so that 4-tuples do not repeat while in use.
 * @param rip    peer address (host order).
 * @param rport  peer port, != 0.
 * @param dmac   next hop's MAC (copied).
 * @return the connection, or NULL with rte_errno set: EINVAL (an argument
 *   out of range), EADDRINUSE (the 4-tuple is in the table, TIME_WAIT
 *   included), ENOSPC (no free slot: the table is full).
 */
struct sk_tcp_conn *sk_tcp_connect(struct sk_net_lcore *net, uint32_t lip, uint16_t lport,
				   uint32_t rip, uint16_t rport, const struct rte_ether_addr *dmac);

/**
 * sk_tcp_connect() over IPv6: from @lip6 (our global or link-local address,
 * conf.ip6 set) to @rip6 (16 bytes each, network order, copied), with our
 * IPv6 MSS (conf.mss - 20). @dmac comes from sk_net_nd_lookup() (on -ENOENT
 * the caller tries again later, as with ARP).
 * @return the connection, or NULL with rte_errno set: EINVAL (no IPv6 on
 *   the port, @lip6 not ours, @rip6 ours, multicast or unspecified, a port
 *   or pointer out of range), EADDRINUSE, ENOSPC (as sk_tcp_connect()).
 */
struct sk_tcp_conn *sk_tcp_connect6(struct sk_net_lcore *net, const uint8_t lip6[16],
				    uint16_t lport, const uint8_t rip6[16], uint16_t rport,
				    const struct rte_ether_addr *dmac);

/** sk_tcp_established - @return true once @c's handshake completed (false in SYN_SENT). */
bool sk_tcp_established(const struct sk_tcp_conn *c);

/** sk_tcp_local_ip - @return the local IPv4 address of @c (host order). */
uint32_t sk_tcp_local_ip(const struct sk_tcp_conn *c);

/** sk_tcp_local_port - @return the local TCP port of @c (host order). */
uint16_t sk_tcp_local_port(const struct sk_tcp_conn *c);

/**
 * Set (or with @ms == 0 clear) the app deadline of @c: @ms milliseconds from
 * the current tick, when ops.on_timeout is called (or, without it, the
 * connection is reset; counted tcp_app_timeout). One deadline per
 * connection: a new call replaces the old one. Used for the request-head
 * and body deadlines of the HTTP app. O(1); no-op on a closed connection.
 *
 * @param c   connection.
 * @param ms  milliseconds from now, 0 = no deadline.
 */
void sk_tcp_set_deadline(struct sk_tcp_conn *c, uint32_t ms);

/**
 * Tell the stack that @c carried a complete request: from now on it idles
 * out after conf.idle_timeout_ms instead of conf.idle_new_ms, and it is no
 * longer a candidate for eviction. Until then, when the table is full, the
 * oldest such "new" connection is reset to make room for a new one
 * (tcp_conn_evicted): a crowd of connections that never ask anything cannot
 * keep others out. O(1), idempotent.
 *
 * @param c  connection.
 */
void sk_tcp_mark_used(struct sk_tcp_conn *c);

/**
 * The connection's app area: conf.app_data_size (>= 128) bytes, 16-byte
 * aligned, zeroed before on_open, owned by the app until on_close returns.
 *
 * @param c  connection.
 * @return the area (never NULL).
 */
void *sk_tcp_app_data(struct sk_tcp_conn *c);

/**
 * sk_tcp_remote_ip - @return the remote IPv4 address of @c (host order);
 * 0 for a connection over IPv6 (use sk_tcp_remote_addr()).
 */
uint32_t sk_tcp_remote_ip(const struct sk_tcp_conn *c);

/**
 * sk_tcp_remote_addr - the remote address of @c, of either family: IPv4
 * (bytes[0..3]) or IPv6, as struct sk_addr holds them (addr/sk_addr.h).
 * The per-address limits should key on sk_addr_key() of it.
 * @param[out] out  the address. Never fails. Same thread as sk_net_rx().
 */
void sk_tcp_remote_addr(const struct sk_tcp_conn *c, struct sk_addr *out);

/**
 * sk_tcp_local_addr - the local address of @c (one of ours), of either
 * family, as sk_tcp_remote_addr(). Never fails.
 */
void sk_tcp_local_addr(const struct sk_tcp_conn *c, struct sk_addr *out);

/** sk_tcp_remote_port - @return the remote TCP port of @c (host order). */
uint16_t sk_tcp_remote_port(const struct sk_tcp_conn *c);

/** sk_tcp_peer_closed - @return true once the peer's FIN on @c was received. */
bool sk_tcp_peer_closed(const struct sk_tcp_conn *c);

/**
 * sk_tcp_send_space - @return the free bytes in @c's send buffer now (the
 * largest sk_tcp_send() that would succeed); 0 once the connection is closing.
 */
size_t sk_tcp_send_space(const struct sk_tcp_conn *c);

/** sk_tcp_lcore - @return the lcore stack that owns @c. */
struct sk_net_lcore *sk_tcp_lcore(const struct sk_tcp_conn *c);

#ifdef __cplusplus
}
#endif

#endif /* SK_NET_H */
