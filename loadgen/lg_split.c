/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_split.c - the loadgen's work split over its stacks (see lg_split.h).
 */
#include <errno.h>

#include "sk_common.h"

#include "lg_split.h"

/* too_few - @p total of @p what cannot give each of @p n stacks one. */
static int
too_few(const char *what, uint64_t total, unsigned n, char *err, size_t errlen)
{
	sk_set_err(err, errlen, "%s: %llu cannot be split over %u lcores (at least one each)", what,
		   (unsigned long long)total, n);
	return -EINVAL;
}

int
lg_split(const struct lg_opts *o, unsigned n, unsigned i, struct lg_opts *out, uint32_t *tok_off,
	 char *err, size_t errlen)
{
	uint32_t nports = (uint32_t)o->sport_max - o->sport_min + 1u, myports;

	*out = *o;
	*tok_off = 0;
	if (n == 1)
		return 0;
	if (n == 0 || n > LG_STACKS_MAX || i >= n) {
		sk_set_err(err, errlen, "lcores: %u stacks, not in 1..%u", n, LG_STACKS_MAX);
		return -EINVAL;
	}
	if (o->attack != LG_ATTACK_NONE) {
		sk_set_err(err, errlen,
			   "--attack runs on one lcore (give the EAL -l with one "
			   "lcore; %u given)",
			   n);
		return -EINVAL;
	}
	if (o->conns < n)
		return too_few("--conns", o->conns, n, err, errlen);
	if (o->requests != 0 && o->requests < n)
		return too_few("--requests", o->requests, n, err, errlen);
	if (o->inflight_max != 0 && o->inflight_max < n)
		return too_few("--inflight", o->inflight_max, n, err, errlen);
	if (nports < n)
		return too_few("--sports", nports, n, err, errlen);
	if ((o->mix[LG_REQ_BUY] != 0 || o->mix[LG_REQ_CART] != 0) && o->users < n)
		return too_few("--users", o->users, n, err, errlen);
	if (o->mix[LG_REQ_BUY_JWT] != 0 && o->tokens < n)
		return too_few("--tokens", o->tokens, n, err, errlen);
	/* stack 0 has the most connections and the most ports: check them all
	 * anyway, the message names the stack's own figures */
	for (unsigned s = 0; s < n; s++) {
		uint64_t conns = lg_split_share(o->conns, n, s);
		uint64_t ports = lg_split_share(nports, n, s);

		if (conns > (uint64_t)o->client_count * ports) {
			sk_set_err(err, errlen,
				   "--conns: %llu connections of lcore %u need more than %u "
				   "addresses x %llu ports (its share of the source ports)",
				   (unsigned long long)conns, s, o->client_count,
				   (unsigned long long)ports);
			return -EINVAL;
		}
	}

	out->conns = (uint32_t)lg_split_share(o->conns, n, i);
	out->requests = lg_split_share(o->requests, n, i);
	out->inflight_max = lg_split_share(o->inflight_max, n, i);
	out->rate = o->rate / n;
	out->rate_from = o->rate_from / n;
	myports = (uint32_t)lg_split_share(nports, n, i);
	out->sport_min = (uint16_t)(o->sport_min + lg_split_off(nports, n, i));
	out->sport_max = (uint16_t)(out->sport_min + myports - 1u);
	if (o->users >= n) {
		out->user_base = o->user_base + lg_split_off(o->users, n, i);
		out->users = lg_split_share(o->users, n, i);
	}
	if (o->tokens >= n) {
		*tok_off = (uint32_t)lg_split_off(o->tokens, n, i);
		out->tokens = (uint32_t)lg_split_share(o->tokens, n, i);
	}
	out->seed = o->seed + i;
	return 0;
}
