/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Counters, latency histograms and reports of seckill-loadgen: the progress
 * line (stderr, once a second), the final summary (stderr) and the JSON
 * object of --json (stdout).
 *
 * Latencies are kept in nanoseconds in the project's log-linear histogram
 * (tools/crowd/crowd_hist.h: exact to 0.8 %; one helper for the latency
 * buckets of every client): one for the whole run, one for the current
 * second. Recording costs one 128-bit multiply and two bucket increments.
 *
 * Thread-safety: a struct lg_stats belongs to the lcore that runs the load;
 * nothing here locks or allocates. The report functions write with stdio:
 * call them once a second or at the end, never per request.
 */
#ifndef LG_STATS_H
#define LG_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "crowd_hist.h"
#include "lg_hostile.h"
#include "lg_http.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Lowest and highest status code counted one by one. */
#define LG_STATUS_MIN 100
#define LG_STATUS_MAX 599

/** What the TCP stack counted (sk_net_lcore_stats()), as the report shows it. */
struct lg_tcp_errors {
	uint64_t resets;	  /**< connections reset by the peer (tcp_rst_rx) */
	uint64_t retransmits;	  /**< data/FIN retransmissions (tcp_retransmits) */
	uint64_t syn_retransmits; /**< SYNs sent again (tcp_syn_retransmits) */
	uint64_t timeouts;	  /**< tcp_rto_reset + tcp_connect_timeout + tcp_idle_timeout */
	uint64_t refused;	  /**< tcp_connect_refused */
	uint64_t tx_dropped;	  /**< frames the NIC refused (after waiting for room) */
	uint64_t tx_waits;	  /**< bursts that found the TX ring full and waited */
	uint64_t tx_nombuf;	  /**< segments not built: mempool empty */
};

/** The client's TLS handshakes (--tls). */
struct lg_tls_counts {
	uint64_t full;		  /**< handshakes done with a full key exchange */
	uint64_t resumed;	  /**< ... resumed from the client slot's session */
	uint64_t failed;	  /**< connections that ended before their handshake did
				       (a fatal alert, a reset, a timeout), not closed by us */
	uint64_t tls12, tls13;	  /**< handshakes done, by version */
	uint64_t alerts_received; /**< alerts the server sent, close_notify left out */
};

/** Counters of one run. All monotonic. */
struct lg_stats {
	uint64_t sent[LG_REQ__COUNT];		 /**< requests queued on a connection */
	uint64_t answered[LG_REQ__COUNT];	 /**< complete responses, by request kind */
	uint64_t status[LG_STATUS_MAX + 1];	 /**< responses by status code */
	uint64_t cart_status[LG_STATUS_MAX + 1]; /**< ... of the carts (LG_REQ_CART) */
	uint64_t wins_confirmed; /**< buys answered 200 (confirmed, or a winner's retry) */
	uint64_t wins_queued;	 /**< buys answered 202 (queued) */
	uint64_t parse_errors[SK_HTTP_CLIENT__COUNT]; /**< malformed responses (connection dropped)
						       */
	uint64_t lost;		  /**< requests whose connection closed before the answer */
	uint64_t send_errors;	  /**< sk_tcp_send() refusals (request not sent) */
	uint64_t connects;	  /**< sk_tcp_connect() calls that returned a connection */
	uint64_t connect_errors;  /**< sk_tcp_connect() failures (table full, tuple busy) */
	uint64_t established;	  /**< connections whose handshake completed */
	uint64_t closed;	  /**< connections reported closed (on_close) */
	uint64_t failed;	  /**< ... of them never established */
	uint64_t early_close;	  /**< keep-alive connections the server closed with work left */
	uint64_t busy_tsc;	  /**< TSC cycles of loop passes that did work */
	struct lg_tls_counts tls; /**< --tls: the handshakes */
	struct sk_crowd_hist lat; /**< latency of every answer, ns */
	struct sk_crowd_hist lat_sec; /**< ... of the answers of the current second */
	/* the previous progress line, for per-second rates */
	uint64_t prev_answered;
	uint64_t prev_connects;
	uint64_t prev_errors;
	uint64_t prev_tsc;
	uint64_t start_tsc;
	uint64_t tsc_hz;
	uint64_t ns_mult; /**< ns = tsc * ns_mult >> 32 */
};

/** lg_stats_init - zero @p s, set the clock (@p tsc_hz > 0) and the start time. */
void lg_stats_init(struct lg_stats *s, uint64_t tsc_hz, uint64_t start_tsc);

/**
 * lg_stats_answer - count one complete response.
 * @param s        the counters.
 * @param k        the kind of the request it answers.
 * @param status   its status code (100..599).
 * @param lat_tsc  TSC cycles from sending the request to the last byte.
 */
static inline void
lg_stats_answer(struct lg_stats *s, enum lg_req_kind k, uint16_t status, uint64_t lat_tsc)
{
	uint64_t ns = (uint64_t)(((unsigned __int128)lat_tsc * s->ns_mult) >> 32);

	s->answered[k]++;
	s->status[status <= LG_STATUS_MAX ? status : 0]++;
	if (k == LG_REQ_CART)
		s->cart_status[status <= LG_STATUS_MAX ? status : 0]++;
	if (lg_req_is_buy(k)) {
		s->wins_confirmed += status == 200;
		s->wins_queued += status == 202;
	}
	sk_crowd_hist_add(&s->lat, ns);
	sk_crowd_hist_add(&s->lat_sec, ns);
}

/** lg_stats_sum - the sum of @p n counters at @p v. */
uint64_t lg_stats_sum(const uint64_t *v, unsigned n);

/** lg_stats_errors - every error counted so far: parse, lost, send, connect,
 * failed and early-closed connections, failed TLS handshakes, plus @p tcp's resets, timeouts and
 * refusals (@p tcp may be NULL). */
uint64_t lg_stats_errors(const struct lg_stats *s, const struct lg_tcp_errors *tcp);

/**
 * lg_stats_progress - write one progress line for the time since the
 * previous one ("t=3.0s rps=… cps=… p50=…us p99=…us errors=… inflight=…")
 * to @p out and start a new second. @p tag (NULL or "" for none) starts
 * the line: "lcore=2 " when several stacks print theirs. One fprintf() call:
 * the lines of several lcores do not mix.
 */
void lg_stats_progress(struct lg_stats *s, uint64_t now_tsc, uint64_t inflight,
		       const struct lg_tcp_errors *tcp, const char *tag, FILE *out);

/**
 * lg_stats_merge - add the counters and the run's latency histogram of
 * @p src to @p dst (the sum over the lcores; p50/p99 then come from the
 * merged histogram). The per-second part (lat_sec, prev_*) and the clock of
 * @p dst are left as they are. Both belong to the caller: call it once the
 * lcores that own them stopped.
 */
void lg_stats_merge(struct lg_stats *dst, const struct lg_stats *src);

/** lg_tcp_errors_add - add @p src's counters to @p dst. */
void lg_tcp_errors_add(struct lg_tcp_errors *dst, const struct lg_tcp_errors *src);

/** One stack's figures in the report ("lcores" of the JSON). */
struct lg_lcore_report {
	unsigned lcore;	   /**< the EAL lcore it ran on */
	unsigned queue;	   /**< its RX/TX queue pair */
	uint64_t sent;	   /**< requests sent */
	uint64_t answered; /**< complete answers */
	uint64_t errors;   /**< lg_stats_errors() of its stats and stack */
	double seconds;	   /**< its load phase (its rps is answered / seconds) */
};

/** What the report says about the run beyond the counters. */
struct lg_run_info {
	double seconds;	      /**< length of the load phase (rates are per this) */
	uint64_t inflight;    /**< requests still unanswered at the end */
	uint64_t backlog_max; /**< open loop: largest number of due, unsent requests */
	const char *mode;     /**< "closed", "open-rate", "open-cps" */
	bool short_conns;     /**< one request per connection */
	bool legit;	      /**< legitimate clients ran (no --attack, or --mix) */
	bool tls;	      /**< --tls: the reports show the handshakes */
	const struct lg_attack_stats *attack; /**< --attack: its counters, else NULL */
	struct lg_attack_info attack_info;    /**< --attack: what it was (legit_* filled here) */
	const struct lg_lcore_report *lcores; /**< one per stack, or NULL: no "lcores" */
	unsigned nlcores;		      /**< entries at lcores */
};

/** lg_stats_summary - the human summary, several lines, to @p out. */
void lg_stats_summary(const struct lg_stats *s, const struct lg_tcp_errors *tcp,
		      const struct lg_run_info *run, FILE *out);

/**
 * lg_stats_json - one JSON object with the run's figures, one line, to @p
 * out (docs/loadgen.md lists the fields). "all_answered" is true when every
 * request sent got a complete answer. With @p run->lcores, the object ends
 * with "lcores": [{"lcore", "queue", "sent", "answered", "rps", "errors"}].
 */
void lg_stats_json(const struct lg_stats *s, const struct lg_tcp_errors *tcp,
		   const struct lg_run_info *run, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* LG_STATS_H */
