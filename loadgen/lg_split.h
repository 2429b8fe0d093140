/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The work of seckill-loadgen split over its stacks (one per EAL lcore):
 * each stack gets a disjoint share of the connections, the request budget,
 * the rates, the source ports, the users and the pre-minted tokens, so that
 * no two stacks share a 4-tuple or a user. A total is cut into N shares of
 * total / N, the remainder going to the first stack.
 *
 * Pure functions of the options; no DPDK, so tests/unit/loadgen reaches
 * them. Thread-safety: none needed (no state); called once at start-up.
 */
#ifndef LG_SPLIT_H
#define LG_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "lg_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most stacks (EAL lcores) one loadgen runs. */
#define LG_STACKS_MAX 128u

/** lg_split_share - the share of stack @p i of @p n (> 0) in @p total:
 * total / n, plus total % n for stack 0. */
static inline uint64_t
lg_split_share(uint64_t total, unsigned n, unsigned i)
{
	return total / n + (i == 0 ? total % n : 0);
}

/** lg_split_off - where the share of stack @p i of @p n starts in
 * 0 .. @p total - 1 (the shares follow each other in stack order). */
static inline uint64_t
lg_split_off(uint64_t total, unsigned n, unsigned i)
{
	return i == 0 ? 0 : total / n * i + total % n;
}

/**
 * lg_split - the options of stack @p i of @p n: a copy of @p o with its
 * share of --conns, --requests, --inflight, --rate/--cps (and --rate-from),
 * the source ports (sport_min..sport_max), the X-User-Id users (user_base,
 * users) and the tokens (tokens; its first token's index in the pool in
 * @p tok_off), and seed + i. With @p n == 1 the copy is @p o itself (and
 * *@p tok_off is 0).
 *
 * @param o        the parsed options (lg_opts_parse() succeeded).
 * @param n        the number of stacks, 1..LG_STACKS_MAX.
 * @param i        the stack, 0..n-1.
 * @param out      its options (kept by its load: must outlive it).
 * @param tok_off  the index of its first token in the minted pool.
 * @return 0, or -EINVAL with a one-line message in @p err when a total
 *   cannot be split (fewer connections, requests, users, tokens, source
 *   ports or --inflight than stacks; connections more than a stack's
 *   addresses x ports hold) or a mode runs on one lcore only (--attack).
 *   The message is the same for every @p i: checking i = 0..n-1 in turn
 *   stops at the first that fails.
 */
int lg_split(const struct lg_opts *o, unsigned n, unsigned i, struct lg_opts *out,
	     uint32_t *tok_off, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* LG_SPLIT_H */
