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
sk_prom_histogram(struct sk_prom *p, const char *name, const char *help, const uint64_t *count,
		  const uint64_t *bounds_ns, unsigned n, uint64_t sum_ns)
{
	uint64_t cum = 0;

	sk_prom_head(p, name, "histogram", help);
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
