/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A writer of the Prometheus text exposition format (version 0.0.4): the
 * HELP/TYPE header of a family, counters, gauges and histograms, onto a
 * stdio stream, remembering the first write error so that a caller checks
 * once at the end.
 *
 * Thread-safety: a struct sk_prom is used by one thread at a time; the
 * functions hold no state of their own.
 */
#ifndef SK_PROM_H
#define SK_PROM_H

#include <stdint.h>
#include <stdio.h>

/** An output in progress. Fill @c f, zero @c err. */
struct sk_prom {
	FILE *f; /**< where to write; not owned */
	int err; /**< 0, or -EIO once a write failed (later writes are still tried) */
};

/** sk_prom_printf - free text (sample lines with labels). Sets p->err on failure. */
void sk_prom_printf(struct sk_prom *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** sk_prom_head - "# HELP name help" and "# TYPE name type". */
void sk_prom_head(struct sk_prom *p, const char *name, const char *type, const char *help);

/** sk_prom_counter - a whole counter family with one unlabelled sample. */
void sk_prom_counter(struct sk_prom *p, const char *name, const char *help, uint64_t v);

/** sk_prom_gauge - a whole gauge family with one unlabelled sample. */
void sk_prom_gauge(struct sk_prom *p, const char *name, const char *help, uint64_t v);

/**
 * sk_prom_histogram - a whole histogram family in seconds.
 * @param p          the output
 * @param name       family name (…_seconds)
 * @param help       HELP text
 * @param count      @p n counts, one per bucket (not cumulative); the last
 *                   bucket is the unbounded one
 * @param bounds_ns  upper bounds of the first n - 1 buckets, ns, increasing
 * @param n          buckets, >= 1
 * @param sum_ns     sum of the observations, ns
 * The cumulative _bucket lines end with le="+Inf"; _count is that total.
 */
void sk_prom_histogram(struct sk_prom *p, const char *name, const char *help, const uint64_t *count,
		       const uint64_t *bounds_ns, unsigned n, uint64_t sum_ns);

#endif /* SK_PROM_H */
