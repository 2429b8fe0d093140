/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * bench_util.h - what the benchmark programs share: clocks, medians and
 * percentiles, CPU pinning, and option handling.
 *
 * Header only (static inline): the benchmarks are separate programs, each
 * one .c file, and include this from bench/. Nothing here allocates or
 * keeps state; every function may be called from any thread.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "sk_parse.h"

/* ---------------------------------------------------------------- clocks */

/**
 * bench_clock_s - clock @id in seconds.
 * @param id  CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID for
 *            the calling thread's CPU time.
 */
static inline double
bench_clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** bench_now_s - CLOCK_MONOTONIC in seconds: what run times are measured with. */
static inline double
bench_now_s(void)
{
	return bench_clock_s(CLOCK_MONOTONIC);
}

/** bench_cpu_s - CPU time of the calling thread in seconds. */
static inline double
bench_cpu_s(void)
{
	return bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/** bench_clock_ns - clock @id in nanoseconds (CLOCK_REALTIME: a timestamp). */
static inline int64_t
bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ------------------------------------------------------------ statistics */

/* bench_cmp_double - qsort() order of doubles, ascending. */
static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/** bench_sort - sort the @n samples of @v in place, ascending. */
static inline void
bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
}

/**
 * bench_pct - the @pct percentile of @n sorted samples: v[n * pct / 100],
 * the last one where that falls past the end. @n must be at least 1.
 */
static inline double
bench_pct(const double *v, size_t n, unsigned pct)
{
	size_t i = n * pct / 100;

	return v[i < n ? i : n - 1];
}

/** bench_median - sort the @n samples of @v (n >= 1) and return v[n / 2]. */
static inline double
bench_median(double *v, size_t n)
{
	bench_sort(v, n);
	return bench_pct(v, n, 50);
}

/* --------------------------------------------------------------- pinning */

/**
 * bench_pin - run the calling thread on CPU @cpu only.
 * @return 0, or an errno value of pthread_setaffinity_np() (the thread
 *         then runs where it ran before; figures are only less stable).
 */
static inline int
bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* --------------------------------------------------------------- options */

/**
 * bench_opt_range - the value of option --@name: @arg read by
 * sk_parse_double() (a plain decimal number, nothing after it), which must
 * lie in (@lo, @hi]. Otherwise prints "error: --NAME must be in (LO, HI]"
 * to stderr.
 * @return true with *out set, or false (the program exits with status 2).
 */
static inline bool
bench_opt_range(const char *name, const char *arg, double lo, double hi, double *out)
{
	double v;

	if (!sk_parse_double(arg, lo, hi, &v) || v <= lo) {
		fprintf(stderr, "error: --%s must be in (%g, %g]\n", name, lo, hi);
		return false;
	}
	*out = v;
	return true;
}

/**
 * bench_opt_common - the options every getopt_long() loop here shares,
 * given what it returned in @opt: 'j' (--json) sets *json; 'h' (--help)
 * and anything unknown print @usage(@prog), which picks its own stream.
 * @return -1 to go on, else the exit status: 0 after --help, 2 otherwise.
 */
static inline int
bench_opt_common(int opt, bool *json, void (*usage)(const char *prog), const char *prog)
{
	switch (opt) {
	case 'j':
		*json = true;
		return -1;
	case 'h':
		usage(prog);
		return 0;
	default:
		usage(prog);
		return 2;
	}
}

/**
 * bench_huge_alloc - @p len bytes rounded up to 2 MiB, 2 MiB aligned, with
 * transparent huge pages asked for: the arena in plain memory behaves like
 * the dataplane's hugepage memzone. Free with free().
 * @param len    bytes wanted
 * @param[out] got  bytes allocated (len rounded up); may be NULL
 * @return the memory (not zeroed), or NULL (len 0 or out of memory).
 */
static inline void *
bench_huge_alloc(size_t len, size_t *got)
{
	const size_t huge = (size_t)2 << 20;
	size_t n = (len + huge - 1) & ~(huge - 1);
	void *mem = len != 0 ? aligned_alloc(huge, n) : NULL;

	if (mem != NULL)
		madvise(mem, n, MADV_HUGEPAGE);
	if (got != NULL)
		*got = n;
	return mem;
}

#endif /* BENCH_UTIL_H */
