/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_hist.c - log-linear histogram: bucket index from the position of the
 * top bit and the SUB_BITS bits below it.
 */
#include <math.h>
#include <string.h>

#include "crowd_hist.h"

#define SUB  SK_CROWD_HIST_SUB_BITS
#define MASK ((1u << SUB) - 1)

void
sk_crowd_hist_init(struct sk_crowd_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned
sk_crowd_hist_index(uint64_t v)
{
	if (v < (1u << SUB))
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* SUB..63 */
	unsigned g = e - SUB + 1;			 /* group 1..64-SUB */
	return (g << SUB) + (unsigned)((v >> (e - SUB)) & MASK);
}

uint64_t
sk_crowd_hist_bucket_high(unsigned idx)
{
	if (idx < (1u << SUB))
		return idx;
	unsigned g = idx >> SUB;
	uint64_t low = ((uint64_t)(1u << SUB) + (idx & MASK)) << (g - 1);
	return low + ((1ull << (g - 1)) - 1);
}

void
sk_crowd_hist_add(struct sk_crowd_hist *h, uint64_t v)
{
	h->bucket[sk_crowd_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

uint64_t
sk_crowd_hist_quantile(const struct sk_crowd_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	if (!(q > 0.0))
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	double r = ceil(q * (double)h->count);
	uint64_t rank = r < 1.0 ? 1 : (r >= (double)h->count ? h->count : (uint64_t)r);
	uint64_t seen = 0;

	for (unsigned i = 0; i < SK_CROWD_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t v = sk_crowd_hist_bucket_high(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}
