/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The hostile modes of seckill-loadgen on the port (--attack; the frames,
 * counters and reports are in lg_hostile.h):
 *
 *  - synflood: raw SYNs built as mbufs and sent with the port's TX (no
 *    connection, no stack), from random addresses of --attack-from and
 *    random ports of --sports, with keyed ISNs; the SYN-ACKs that answer
 *    them are recognised before any stack sees them, counted and dropped
 *    (as a spoofed host that does not exist would: no RST goes back);
 *  - holders: --attackers connections, opened once each, that say nothing,
 *    or with --drip-ms send one header byte every MS ms;
 *  - garbage: --attackers connections at a time that send 512 random bytes
 *    (--seed) each; each one closed is replaced until the load ends.
 *
 * holders and garbage run on a second instance of the project's TCP stack
 * that owns the --attack-from addresses, so that the legitimate clients'
 * stack and its counters see none of the attack. lg_load.c calls these
 * from its poll pass; everything here belongs to that one lcore.
 */
#ifndef LG_ATTACK_H
#define LG_ATTACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "lg_hostile.h"
#include "lg_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lg_attack;
struct lg_load_env;

/**
 * lg_attack_create - the attack's state (and its stack for holders or
 * garbage). @return it, or NULL with a message in @p err.
 */
struct lg_attack *lg_attack_create(const struct lg_opts *o, const struct lg_load_env *env,
				   char *err, size_t errlen);

/** lg_attack_free - free it. NULL is a no-op. */
void lg_attack_free(struct lg_attack *a);

/** lg_attack_start - the load phase runs from @p start to @p end (TSC);
 * the server's MAC is @p server_mac. */
void lg_attack_start(struct lg_attack *a, const struct rte_ether_addr *server_mac, uint64_t start,
		     uint64_t end);

/**
 * lg_attack_rx - take the received frames that are the attack's (for its
 * addresses) out of @p pkts: the flood's SYN-ACKs are counted and freed,
 * the rest goes to the attack's stack. @return the number of frames left at
 * the start of @p pkts, in order, for the legitimate stack.
 */
uint16_t lg_attack_rx(struct lg_attack *a, struct rte_mbuf **pkts, uint16_t n, uint64_t now);

/** lg_attack_poll - timers, then the attack's work for this pass while
 * @p load (SYNs, opens, drips). @return the work done. */
unsigned lg_attack_poll(struct lg_attack *a, uint64_t now, bool load);

/** lg_attack_flush - the attack stack's output. @return frames sent. */
unsigned lg_attack_flush(struct lg_attack *a);

/** lg_attack_end - the load is over: count what is held, close it all
 * (FIN; RST with @p abort). */
void lg_attack_end(struct lg_attack *a, bool abort);

/** lg_attack_live - attack connections not closed yet. */
uint32_t lg_attack_live(const struct lg_attack *a);

/** lg_attack_stats - the counters. */
const struct lg_attack_stats *lg_attack_stats(const struct lg_attack *a);

/** lg_attack_progress - one progress line of the attack to @p out. */
void lg_attack_progress(const struct lg_attack *a, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* LG_ATTACK_H */
