/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_pick.h - what the next request of seckill-loadgen is: its kind (the
 * mix), its user or token (in turn or at random), and how many requests the
 * open-loop curve wants by a given time. Pure functions of the options and
 * a small state; no DPDK, so tests/unit/loadgen reaches them.
 */
#ifndef LG_PICK_H
#define LG_PICK_H

#include <stdint.h>

#include "lg_http.h"
#include "lg_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The picking state of one run; owned by the caller, one thread. */
struct lg_pick {
	const struct lg_opts *o;
	uint64_t rng;	    /**< xorshift64* state, never 0 */
	uint64_t user_next; /**< next user in turn (index from user_base) */
	uint32_t tok_next;  /**< next token in turn */
	uint32_t mix_total; /**< sum of the mix's weights (>= 1) */
};

/**
 * lg_pick_init - a state for @p o (kept by pointer: it must outlive @p p),
 * seeded from o->seed. The mix must have a weight > 0 (lg_opts ensures it).
 */
void lg_pick_init(struct lg_pick *p, const struct lg_opts *o);

/** lg_rng_next - xorshift64*: the next 64 bits of the generator whose
 * state (never 0) is @p state; the loadgen's fixed-seed source of mixes,
 * users and attack bytes. */
static inline uint64_t
lg_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/** lg_pick_rng - the next 64 random bits (fixed by the seed). */
static inline uint64_t
lg_pick_rng(struct lg_pick *p)
{
	return lg_rng_next(&p->rng);
}

/** lg_pick_kind - a request kind drawn by the mix's weights. */
static inline enum lg_req_kind
lg_pick_kind(struct lg_pick *p)
{
	uint32_t r = p->mix_total == 1 ? 0 : (uint32_t)(lg_pick_rng(p) % p->mix_total);
	int k;

	for (k = 0; k < LG_REQ__COUNT - 1; k++) {
		if (r < p->o->mix[k])
			break;
		r -= p->o->mix[k];
	}
	return (enum lg_req_kind)k;
}

/** lg_pick_user - the user of an X-User-Id buy: user_base .. user_base +
 * users - 1, in turn (wrapping) or at random (--user-pick). */
static inline uint64_t
lg_pick_user(struct lg_pick *p)
{
	if (p->o->user_pick == LG_USER_RANDOM)
		return p->o->user_base + lg_pick_rng(p) % p->o->users;
	if (p->user_next == p->o->users)
		p->user_next = 0;
	return p->o->user_base + p->user_next++;
}

/** lg_pick_token - the index of a JWT buy's token in a pool of @p n (> 0). */
static inline uint32_t
lg_pick_token(struct lg_pick *p, uint32_t n)
{
	if (p->o->user_pick == LG_USER_RANDOM)
		return (uint32_t)(lg_pick_rng(p) % n);
	if (p->tok_next >= n)
		p->tok_next = 0;
	return p->tok_next++;
}

/**
 * lg_pick_due - how many requests (or, with --cps, connections) the open
 * loop's curve wants by @p t seconds into the load: the integral of the
 * rate, constant, a step (rate_from until step_s, then rate) or a ramp
 * (rate_from to rate linearly over ramp_s, then rate).
 */
double lg_pick_due(const struct lg_opts *o, double t);

#ifdef __cplusplus
}
#endif

#endif /* LG_PICK_H */
