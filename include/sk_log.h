/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one message helper of the programs' slow paths: "PROG: message", one
 * line on stderr (journald keeps a line per event). The daemons' setup
 * errors, the CLIs' refusals and the tools' complaints all go through here,
 * so that every program words its lines the same way.
 *
 * Header-only. Each call is one stdio write of a formatted line; stderr is
 * locked by stdio for the call, so it is thread-safe. Not for the fast path.
 */
#ifndef SK_LOG_H
#define SK_LOG_H

#include <stdarg.h>
#include <stdio.h>

/**
 * sk_vlog - "@p prog: " then @p fmt with @p ap, then a newline, on stderr,
 * as one write (so lines of two threads never interleave). A message longer
 * than 1 KiB is cut.
 */
static inline void sk_vlog(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static inline void
sk_vlog(const char *prog, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", prog, line);
}

/** sk_log - sk_vlog() with arguments. */
static inline void sk_log(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void
sk_log(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlog(prog, fmt, ap);
	va_end(ap);
}

#endif /* SK_LOG_H */
