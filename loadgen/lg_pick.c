/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_pick.c - seeding and the open loop's curve (see lg_pick.h).
 */
#include "lg_pick.h"

void
lg_pick_init(struct lg_pick *p, const struct lg_opts *o)
{
	p->o = o;
	p->rng = o->seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
	if (p->rng == 0)
		p->rng = 1;
	p->user_next = 0;
	p->tok_next = 0;
	p->mix_total = 0;
	for (int k = 0; k < LG_REQ__COUNT; k++)
		p->mix_total += o->mix[k];
	if (p->mix_total == 0)
		p->mix_total = 1;
}

double
lg_pick_due(const struct lg_opts *o, double t)
{
	double r0 = o->rate_from, r = o->rate, T;

	if (o->step_s > 0) {
		T = o->step_s;
		return t < T ? r0 * t : r0 * T + r * (t - T);
	}
	if (o->ramp_s > 0) {
		T = o->ramp_s;
		if (t < T)
			return r0 * t + (r - r0) * t * t / (2 * T);
		return r0 * T + (r - r0) * T / 2 + r * (t - T);
	}
	return r * t;
}
