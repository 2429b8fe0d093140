/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Log-linear latency histogram of seckill-crowd (the HdrHistogram layout,
 * reduced to what a load client needs).
 *
 * Values (nanoseconds, any u64) below 2^SK_CROWD_HIST_SUB_BITS are counted
 * exactly; above, every power-of-two range [2^e, 2^(e+1)) is split into
 * 2^SK_CROWD_HIST_SUB_BITS equal buckets, so a bucket is at most 1/128 of its
 * values wide: quantiles are exact to within 0.8 %. min, max, count and sum
 * are exact.
 *
 * An all-zero struct is NOT a valid empty histogram (min must start at
 * UINT64_MAX): call sk_crowd_hist_init(). The struct is ~58 KiB; it belongs to
 * one thread, nothing here locks or allocates.
 */
#ifndef SK_CROWD_HIST_H
#define SK_CROWD_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Linear sub-buckets per power of two, as a bit count. */
#define SK_CROWD_HIST_SUB_BITS 7
/** Number of buckets: exact ones, then one group per exponent up to 63. */
#define SK_CROWD_HIST_BUCKETS ((64 - SK_CROWD_HIST_SUB_BITS + 1) << SK_CROWD_HIST_SUB_BITS)

struct sk_crowd_hist {
	uint64_t count; /**< values added */
	uint64_t min;	/**< smallest value, UINT64_MAX when empty */
	uint64_t max;	/**< largest value, 0 when empty */
	uint64_t sum;	/**< sum of values (wraps after 584 years of nanoseconds) */
	uint64_t bucket[SK_CROWD_HIST_BUCKETS];
};

/** sk_crowd_hist_init - make @p h an empty histogram. */
void sk_crowd_hist_init(struct sk_crowd_hist *h);

/** sk_crowd_hist_add - count one value @p v. O(1). */
void sk_crowd_hist_add(struct sk_crowd_hist *h, uint64_t v);

/**
 * sk_crowd_hist_quantile - the value at quantile @p q.
 *
 * @param h
 *   The histogram.
 * @param q
 *   0.0..1.0 (clamped); 0.5 is the median, 0.999 the 99.9th percentile.
 * @return
 *   The highest value of the bucket holding the ceil(q * count)-th smallest
 *   value (at least the 1st), clamped to [min, max]; 0 if @p h is empty.
 *   O(SK_CROWD_HIST_BUCKETS).
 */
uint64_t sk_crowd_hist_quantile(const struct sk_crowd_hist *h, double q);

/** sk_crowd_hist_index - the bucket of @p v (exposed for tests). */
unsigned sk_crowd_hist_index(uint64_t v);

/** sk_crowd_hist_bucket_high - the largest value that falls in bucket @p idx. */
uint64_t sk_crowd_hist_bucket_high(unsigned idx);

#ifdef __cplusplus
}
#endif

#endif /* SK_CROWD_HIST_H */
