/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Small helpers shared by every module: branch hints, cache-line size,
 * the two tiers of assertions, overflow-checked size arithmetic, and the
 * error-message buffer filler of the slow paths.
 *
 * Header-only; nothing here allocates or takes a lock.
 */
#ifndef SK_COMMON_H
#define SK_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SK_CACHE_LINE 64

/** Align a struct or member on its own cache line. */
#define sk_cache_aligned __attribute__((aligned(SK_CACHE_LINE)))

#define sk_likely(x)   __builtin_expect(!!(x), 1)
#define sk_unlikely(x) __builtin_expect(!!(x), 0)

#define SK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * SK_ASSERT - always-on check for conditions whose failure means memory is
 * already corrupt (a broken invariant of shared state). Prints the place and
 * aborts: continuing would risk overselling.
 */
#define SK_ASSERT(cond)                                                                            \
	do {                                                                                       \
		if (sk_unlikely(!(cond))) {                                                        \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/**
 * SK_DEBUG_ASSERT - hot-path check, compiled in only for debug and sanitizer
 * builds (SK_DEBUG); costs nothing in release builds.
 */
#ifdef SK_DEBUG
#define SK_DEBUG_ASSERT(cond) SK_ASSERT(cond)
#else
#define SK_DEBUG_ASSERT(cond) ((void)0)
#endif

/**
 * sk_mul_size - @a * @b into @out.
 * @return true on success, false if the product overflows size_t.
 */
static inline bool
sk_mul_size(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/**
 * sk_add_size - @a + @b into @out.
 * @return true on success, false if the sum overflows size_t.
 */
static inline bool
sk_add_size(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/** sk_align_up - @v rounded up to @align (a power of two); no overflow check. */
static inline size_t
sk_align_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/** sk_is_pow2 - true if @v is a non-zero power of two. */
static inline bool
sk_is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/**
 * sk_bucket_of - the histogram bucket of @p v: the first b with
 * v <= bounds[b], or @p nbounds (the +Inf bucket) when @p v exceeds them
 * all. @p bounds are inclusive upper bounds in ascending order. At most
 * @p nbounds comparisons (a linear scan: the tables are short, and small
 * values, the common case, stop first). The one home of this rule for every
 * latency histogram. Pure; thread-safe.
 */
static inline unsigned
sk_bucket_of(const uint64_t *bounds, unsigned nbounds, uint64_t v)
{
	unsigned b = 0;

	while (b < nbounds && v > bounds[b])
		b++;
	return b;
}

/** SK_U64_DEC_MAX - the decimal digits of UINT64_MAX. */
#define SK_U64_DEC_MAX 20

/**
 * sk_u64_dec - @p v in decimal, without leading zeros, at @p out (room for
 * SK_U64_DEC_MAX bytes; no NUL written). No printf, no locale: for answers
 * built on the fast path. Thread-safe.
 * @return the digits written (1..SK_U64_DEC_MAX)
 */
static inline size_t
sk_u64_dec(char *out, uint64_t v)
{
	char tmp[SK_U64_DEC_MAX];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	memcpy(out, tmp + i, sizeof(tmp) - i);
	return sizeof(tmp) - i;
}

/**
 * sk_clock_ns - clock @p id (CLOCK_REALTIME for wall time, CLOCK_MONOTONIC
 * for intervals) in ns since its epoch. A vDSO call: for slow paths and the
 * dataplane's once-a-second resync, not per packet. Thread-safe.
 */
static inline int64_t
sk_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/**
 * sk_set_err - format a one-line error message into a caller's buffer (the
 * "char *err, size_t errlen" pair of the set-up and control functions).
 * @param err     the buffer, or NULL (then nothing is written)
 * @param errlen  bytes at @p err; the message is truncated to fit and always
 *                NUL-terminated when errlen > 0
 * @param fmt     printf format
 * Thread-safe; for slow paths only (vsnprintf).
 */
static inline void sk_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void
sk_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#endif /* SK_COMMON_H */
