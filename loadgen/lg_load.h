/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The load of seckill-loadgen: client connections on the project's TCP
 * stack (sk_tcp_connect(), net/sk_net.h), the requests they carry,
 * the closed and open loops, and the run loop of one stack. The loadgen
 * runs one struct lg_load per EAL lcore, each on its own queue pair and
 * its own share of the work (lg_split.h); they share nothing writable.
 *
 * Model
 * -----
 * A connection that can take one more request (fewer than --depth in
 * flight, not closing) sits once in the *ready ring*. Each poll pass pops
 * from it: in the closed loop as many as are ready, in the open loop as many
 * as are due by the rate curve (--rate, with --step or --ramp). Connections
 * are opened until --conns are live (closed loop, keep-alive or --short) or
 * as the --cps curve says. A short connection carries one request with
 * `Connection: close` and is closed once answered. Every answer is parsed
 * in place (lg_http.h) in on_data and counted (lg_stats.h).
 *
 * A run has phases: wait (link up, the server's MAC by ARP, bounded by
 * --wait-ms), load (until --duration or --requests), drain (no new request;
 * until every request is answered or --drain-ms), close (FIN on every live
 * connection, bounded), done.
 *
 * Thread-safety: a struct lg_load and its stack belong to the one lcore
 * that runs lg_load_run() (env.lcore; created and freed on the main lcore
 * before and after); the poll loop takes no lock, makes no system call but
 * the once-a-second progress line, and allocates nothing.
 */
#ifndef LG_LOAD_H
#define LG_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "lg_http.h"
#include "lg_opts.h"
#include "lg_stats.h"
#include "lg_tokens.h"
#include "sk_net.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lg_load;

/** What lg_load_create() needs besides the options. */
struct lg_load_env {
	uint16_t port_id;
	uint16_t queue;	 /**< the RX and TX queue of this stack */
	unsigned lcore;	 /**< the EAL lcore that runs it */
	const char *tag; /**< starts its progress lines ("lcore=1 "), or NULL */
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	int socket;
	bool tx_ip_cksum;
	bool tx_tcp_cksum;
	const struct lg_tokens *tokens; /**< its share of the pool (a view: lg_split());
					     may be empty when the mix has no buy_jwt */
	const atomic_bool *stop;	/**< set by a signal handler: end the load now */
};

/**
 * lg_load_create - the load state and its TCP stack (client mode: no
 * listener, addresses --clients, the server as the gateway so that the
 * stack resolves its MAC). @p o (the stack's share: lg_split()) and
 * @p env's pointers are kept: they must outlive the state.
 *
 * @return the state, or NULL with a message in @p err.
 */
struct lg_load *lg_load_create(const struct lg_opts *o, const struct lg_load_env *env, char *err,
			       size_t errlen);

/** lg_load_free - free the state and its stack. NULL is a no-op. */
void lg_load_free(struct lg_load *l);

/**
 * lg_load_run - run the phases on the calling lcore until done.
 * @return 0 once the run went through its phases (its figures may still
 *   show errors), -ETIMEDOUT if the link or the server's MAC did not come
 *   within --wait-ms (message in @p err).
 */
int lg_load_run(struct lg_load *l, char *err, size_t errlen);

/** lg_load_stats - the counters (valid until lg_load_free()). */
const struct lg_stats *lg_load_stats(const struct lg_load *l);

/** lg_load_tcp - the stack's counters, as the reports show them. */
void lg_load_tcp(const struct lg_load *l, struct lg_tcp_errors *out);

/** lg_load_info - what the report says about the run (phases, backlog). */
void lg_load_info(const struct lg_load *l, struct lg_run_info *out);

#ifdef __cplusplus
}
#endif

#endif /* LG_LOAD_H */
