/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Small helpers shared by every module: branch hints, cache-line size,
 * the two tiers of assertions, and overflow-checked size arithmetic.
 *
 * Header-only; nothing here allocates or takes a lock.
 */
#ifndef SK_COMMON_H
#define SK_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif /* SK_COMMON_H */
