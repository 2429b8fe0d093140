/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A writer of the Prometheus text exposition format (version 0.0.4): the
 * HELP/TYPE header of a family, counters, gauges and histograms, onto a
 * stdio stream, remembering the first write error so that a caller checks
 * once at the end.
 *
 * A daemon's metrics are tables of struct sk_prom_metric, one row per
 * family (name, type, label names, help, where the value is): the same
 * table feeds /metrics (sk_prom_write()) and the list the tests compare
 * with docs/monitoring.md and the alert rules (sk_prom_list()).
 *
 * Thread-safety: a struct sk_prom is used by one thread at a time; the
 * functions hold no state of their own.
 */
#ifndef SK_PROM_H
#define SK_PROM_H

#include <stddef.h>
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

/** sk_prom_histogram_samples - sk_prom_histogram() without the HELP and TYPE lines. */
void sk_prom_histogram_samples(struct sk_prom *p, const char *name, const uint64_t *count,
			       const uint64_t *bounds_ns, unsigned n, uint64_t sum_ns);

/* ------------------------------------------------------------------ tables */

/** The type of a family. */
enum sk_prom_type {
	SK_PROM_COUNTER,
	SK_PROM_GAUGE,
	SK_PROM_HISTOGRAM,
};

/** The most buckets of a histogram row (more are not written). */
#define SK_PROM_BUCKETS_MAX 32

struct sk_prom_metric;

/**
 * A writer of a family's samples (its HELP and TYPE lines are written
 * already), for values that are not a uint64_t at an offset: per lcore,
 * per item, labels named by another table. @p snap is the snapshot given to
 * sk_prom_write(); @p m the row (its @c arg says which of the writer's
 * families). Errors go to p->err.
 */
typedef void (*sk_prom_emit_fn)(struct sk_prom *p, const struct sk_prom_metric *m,
				const void *snap);

/**
 * One family of a metrics table. Where its value comes from, in order:
 * @c emit if set; a histogram's @c nbuckets counts at @c off and its sum
 * (ns) at @c sum_off; the uint64_t at @c off + 8 i for each label value
 * @c values[i]; else the one uint64_t at @c off. Offsets are into the
 * snapshot struct given to sk_prom_write() (offsetof()).
 */
struct sk_prom_metric {
	const char *name;	   /**< family name */
	enum sk_prom_type type;	   /**< counter, gauge or histogram */
	const char *labels;	   /**< its label names, comma separated ("kind,outcome");
				    *  NULL or "" for none (a histogram's le not counted) */
	const char *help;	   /**< HELP text */
	size_t off;		   /**< offset of the value (the first one, the first bucket) */
	const char *const *values; /**< values of the one label, NULL-terminated, or NULL */
	unsigned decimals;	   /**< 0: the integer; else value (ns) / 1e9 with so many */
	sk_prom_emit_fn emit;	   /**< writes the samples itself, or NULL */
	unsigned arg;		   /**< for @c emit */
	const uint64_t *bounds_ns; /**< histogram: bucket bounds (sk_prom_histogram()) */
	unsigned nbuckets;	   /**< histogram: buckets, the +Inf one included, at most
				    *  SK_PROM_BUCKETS_MAX */
	size_t sum_off;		   /**< histogram: offset of the sum of observations (ns) */
};

/** A table: @c n rows. */
struct sk_prom_table {
	const struct sk_prom_metric *rows;
	size_t n;
};

/**
 * SK_PROM_AT - the row of a one-sample family of type @p t (SK_PROM_COUNTER,
 * SK_PROM_GAUGE) named @p n with help @p h, whose value is the uint64_t
 * @p field of the snapshot struct @p snap.
 */
#define SK_PROM_AT(t, n, h, snap, field)                                                           \
	{                                                                                          \
		.name = (n), .type = (t), .help = (h), .off = offsetof(snap, field)                \
	}

/** SK_PROM_TABLE - a struct sk_prom_table of the array @p a. */
#define SK_PROM_TABLE(a)                                                                           \
	{                                                                                          \
		(a), sizeof(a) / sizeof((a)[0])                                                    \
	}

/** sk_prom_type_name - "counter", "gauge" or "histogram". */
const char *sk_prom_type_name(enum sk_prom_type t);

/**
 * sk_prom_write - every family of @p t in order: HELP, TYPE, then its
 * samples, read from @p snap (a struct of the table's owner; only read,
 * each uint64_t with a relaxed atomic load, so it may be live counters).
 * Errors go to p->err (-EIO).
 */
void sk_prom_write(struct sk_prom *p, const struct sk_prom_table *t, const void *snap);

/**
 * sk_prom_list - one line per family of @p t: "name type labels" (labels as
 * in the row, "-" for none), the list the tests compare with the docs.
 * @return 0, or -EIO if writing to @p out failed. Any thread.
 */
int sk_prom_list(FILE *out, const struct sk_prom_table *t);

#endif /* SK_PROM_H */
