/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus text format writer (sk_prom.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>

#include "sk_prom.h"

void
sk_prom_printf(struct sk_prom *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vfprintf(p->f, fmt, ap) < 0)
		p->err = -EIO;
	va_end(ap);
}

void
sk_prom_head(struct sk_prom *p, const char *name, const char *type, const char *help)
{
	sk_prom_printf(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
sk_prom_counter(struct sk_prom *p, const char *name, const char *help, uint64_t v)
{
	sk_prom_head(p, name, "counter", help);
	sk_prom_printf(p, "%s %" PRIu64 "\n", name, v);
}

void
sk_prom_gauge(struct sk_prom *p, const char *name, const char *help, uint64_t v)
{
	sk_prom_head(p, name, "gauge", help);
	sk_prom_printf(p, "%s %" PRIu64 "\n", name, v);
}

void
sk_prom_histogram_samples(struct sk_prom *p, const char *name, const uint64_t *count,
			  const uint64_t *bounds_ns, unsigned n, uint64_t sum_ns)
{
	uint64_t cum = 0;

	for (unsigned b = 0; b < n; b++) {
		cum += count[b];
		if (b + 1 < n)
			sk_prom_printf(p, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name,
				       (double)bounds_ns[b] / 1e9, cum);
		else
			sk_prom_printf(p, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, cum);
	}
	sk_prom_printf(p, "%s_sum %.9f\n", name, (double)sum_ns / 1e9);
	sk_prom_printf(p, "%s_count %" PRIu64 "\n", name, cum);
}

void
sk_prom_histogram(struct sk_prom *p, const char *name, const char *help, const uint64_t *count,
		  const uint64_t *bounds_ns, unsigned n, uint64_t sum_ns)
{
	sk_prom_head(p, name, "histogram", help);
	sk_prom_histogram_samples(p, name, count, bounds_ns, n, sum_ns);
}

/* ------------------------------------------------------------------ tables */

const char *
sk_prom_type_name(enum sk_prom_type t)
{
	switch (t) {
	case SK_PROM_COUNTER:
		return "counter";
	case SK_PROM_GAUGE:
		return "gauge";
	case SK_PROM_HISTOGRAM:
		return "histogram";
	}
	return "untyped";
}

/* at - the uint64_t at byte offset @off of @snap (relaxed atomic load). */
static uint64_t
at(const void *snap, size_t off)
{
	return __atomic_load_n((const uint64_t *)((const char *)snap + off), __ATOMIC_RELAXED);
}

/* sample - one sample line: name, {label="value"} if any, the value. */
static void
sample(struct sk_prom *p, const struct sk_prom_metric *m, const char *value, uint64_t v)
{
	if (value != NULL)
		sk_prom_printf(p, "%s{%s=\"%s\"}", m->name, m->labels, value);
	else
		sk_prom_printf(p, "%s", m->name);
	if (m->decimals > 0)
		sk_prom_printf(p, " %.*f\n", (int)m->decimals, (double)v / 1e9);
	else
		sk_prom_printf(p, " %" PRIu64 "\n", v);
}

void
sk_prom_write(struct sk_prom *p, const struct sk_prom_table *t, const void *snap)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct sk_prom_metric *m = &t->rows[i];

		sk_prom_head(p, m->name, sk_prom_type_name(m->type), m->help);
		if (m->emit != NULL) {
			m->emit(p, m, snap);
		} else if (m->type == SK_PROM_HISTOGRAM) {
			uint64_t count[SK_PROM_BUCKETS_MAX];
			unsigned n = m->nbuckets < SK_PROM_BUCKETS_MAX ? m->nbuckets
								       : SK_PROM_BUCKETS_MAX;

			for (unsigned b = 0; b < n; b++)
				count[b] = at(snap, m->off + b * sizeof(uint64_t));
			sk_prom_histogram_samples(p, m->name, count, m->bounds_ns, n,
						  at(snap, m->sum_off));
		} else if (m->values != NULL) {
			for (size_t k = 0; m->values[k] != NULL; k++)
				sample(p, m, m->values[k], at(snap, m->off + k * sizeof(uint64_t)));
		} else {
			sample(p, m, NULL, at(snap, m->off));
		}
	}
}

int
sk_prom_list(FILE *out, const struct sk_prom_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct sk_prom_metric *m = &t->rows[i];

		if (fprintf(out, "%s %s %s\n", m->name, sk_prom_type_name(m->type),
			    m->labels != NULL && *m->labels ? m->labels : "-") < 0)
			return -EIO;
	}
	return 0;
}
