/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_load_impl.h - private to lg_load.c (the connections, the loops, the
 * run) and lg_load_setup.c (create, free, reports): the load's state and
 * what the two files share. Not a public interface: lg_load.h is.
 */
#ifndef LG_LOAD_IMPL_H
#define LG_LOAD_IMPL_H

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "lg_attack.h"
#include "lg_load.h"
#include "lg_pick.h"
#include "lg_tls.h"

#define LG_TX_WAIT_US	 200 /* bound on the wait for room in the TX ring */
#define LG_WON_RING	 256 /* order ids of recent wins, for order polls */
#define LG_TIME_WAIT_MAX 1024

_Static_assert((LG_DEPTH_MAX & (LG_DEPTH_MAX - 1)) == 0, "in-flight ring: a power of two");

/* Per connection, in its app area (zeroed by sk_tcp_connect()). */
struct lg_conn {
	uint64_t id;	   /* > 0 while the connection is ours; 0 once closed */
	uint32_t live_idx; /* its index in lg_load.live */
	uint16_t inflight; /* requests sent, not yet answered */
	uint16_t head;	   /* in-flight ring: the oldest request */
	uint8_t queued;	   /* in the ready ring */
	uint8_t closing;   /* sk_tcp_close()/abort() called: no more requests */
	uint8_t got_data;  /* the server answered something (so: established) */
	uint8_t pending;   /* --tls --short: its request waits for the handshake */
	uint64_t open_tsc; /* --tls --short: when it opened (its request's latency starts) */
	struct sk_http_client_resp resp;
	uint8_t kind[LG_DEPTH_MAX];	 /* in-flight ring: request kinds */
	uint64_t sent_tsc[LG_DEPTH_MAX]; /* in-flight ring: send times */
	struct lg_tls_conn tls;		 /* --tls */
};

/* An entry of the ready ring; stale once the connection's id changed. */
struct lg_ready {
	struct sk_tcp_conn *c;
	uint64_t id;
};

enum lg_phase { PH_LOAD, PH_DRAIN, PH_CLOSE, PH_DONE };

struct lg_load {
	struct lg_stats stats;
	const struct lg_opts *o;
	struct lg_load_env env;
	struct sk_net_lcore *net;
	struct lg_attack *attack; /* --attack, or NULL */
	struct lg_tls *tls;	  /* --tls, or NULL */
	bool legit;		  /* legitimate clients run (no --attack, or --mix) */
	struct lg_req_tmpl tmpl;
	struct rte_ether_addr server_mac;
	uint64_t now; /* TSC of the current pass */
	uint64_t hz;
	uint64_t load_start, load_end, drain_end, close_end, run_end;
	enum lg_phase phase;
	bool aborted;
	uint64_t next_id;
	/* live connections (swap-remove) */
	struct sk_tcp_conn **live;
	uint32_t nlive, live_cap;
	/* ready ring: connections that can take a request */
	struct lg_ready *ready;
	uint32_t ready_mask, ready_head, ready_tail;
	/* requests and connections */
	uint64_t sent;	   /* requests sent in all */
	uint64_t inflight; /* ... not answered yet */
	uint64_t pending;  /* --tls --short: requests waiting for their handshake */
	uint64_t attempts; /* --cps: connection attempts so far */
	uint64_t backlog_max;
	uint32_t ip_idx, port_off, nports;
	uint32_t rcv_cap;
	struct lg_pick pick;
	uint32_t nwon;
	uint64_t tx_wait_tsc; /* LG_TX_WAIT_US in TSC ticks */
	uint64_t tx_waits;    /* bursts that waited for room */
	uint64_t won[LG_WON_RING];
	struct lg_resp_memo memo; /* the last answer, whole: most are the same */
	char req[LG_REQ_MAX];
};

/** The stack's callbacks of the load (lg_load.c). */
extern const struct sk_net_app_ops lg_load_ops;

/** lg_load_tx - the stack's TX function: waits for room in the TX ring at
 * most LG_TX_WAIT_US (lg_load.c). */
uint16_t lg_load_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n);

#endif /* LG_LOAD_IMPL_H */
