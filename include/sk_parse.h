/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one strict parser family for numbers and times written by people: the
 * configuration file, the command lines of every program, the tools.
 *
 * One rule everywhere: the whole string is the value. No leading or trailing
 * blanks, no '+' sign, no empty string, no hex or octal, no overflow; a value
 * outside the caller's range is refused like a malformed one. (strtol alone
 * accepts " +5", "5abc" with a check forgotten, and wraps "-1" to
 * UINT64_MAX through strtoull.)
 *
 * Header-only; nothing here allocates, takes a lock or keeps state, so every
 * function is thread-safe. For slow paths: option parsing, config loading,
 * the admin API's arguments.
 */
#ifndef SK_PARSE_H
#define SK_PARSE_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/**
 * sk_parse_u64 - @p s as a decimal unsigned integer in [@p lo, @p hi].
 * Digits only ("0", "42"); leading zeros are accepted ("007" is 7).
 * @param s    NUL-terminated text, or NULL (refused)
 * @param out  set only on success
 * @return true on success; false if @p s is NULL, empty, has any character
 *         other than a digit, overflows 64 bits, or is outside the range.
 */
static inline bool
sk_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
			return false;
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/**
 * sk_parse_id - @p s as an id of the admin API's paths and queries: a
 * decimal 1..@p max with no leading zero ("7", never "07" or "0"), so that
 * one id has one spelling.
 * @param out  set only on success; may be NULL (a check only)
 * @return true on success; false as sk_parse_u64(), or on a leading zero.
 */
static inline bool
sk_parse_id(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (s == NULL || s[0] == '0' || !sk_parse_u64(s, 1, max, &v))
		return false;
	if (out != NULL)
		*out = v;
	return true;
}

/**
 * sk_parse_u32 - sk_parse_u64() into a uint32_t; @p hi is at most UINT32_MAX.
 * @return as sk_parse_u64()
 */
static inline bool
sk_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;

	if (!sk_parse_u64(s, lo, hi, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/**
 * sk_parse_i64 - @p s as a decimal signed integer in [@p lo, @p hi]: an
 * optional '-' then digits ("-0" is 0). No '+'.
 * @return true on success; false for NULL, empty, a lone '-', any other
 *         character, overflow, or a value outside the range.
 */
static inline bool
sk_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	bool neg = s != NULL && *s == '-';
	uint64_t mag;
	int64_t v;

	if (!sk_parse_u64(neg ? s + 1 : s, 0, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &mag))
		return false;
	v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/**
 * sk_parse_double - @p s as a finite decimal number in [@p lo, @p hi]:
 * digits with an optional fraction and exponent ("2", "0.5", ".5", "1e3"),
 * with a leading '-' only. No blanks, no '+', no "inf"/"nan", no hex.
 * Uses strtod(), so the decimal point is the C locale's (programs here
 * never call setlocale()).
 * @return true on success; false for NULL, empty, malformed, out of the
 *         double range, or outside [@p lo, @p hi].
 */
static inline bool
sk_parse_double(const char *s, double lo, double hi, double *out)
{
	const char *p = s;
	char *end;
	double v;

	if (p == NULL)
		return false;
	if (*p == '-')
		p++;
	if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')))
		return false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/** What a TIME written by a person means; see sk_parse_time(). */
enum sk_time_kind {
	SK_TIME_ABS,   /**< @c s is unix seconds */
	SK_TIME_REL,   /**< @c s is seconds from "now" (the caller's now) */
	SK_TIME_NEVER, /**< "never": no end */
};

/** A parsed TIME; resolve with sk_time_resolve_ns(). */
struct sk_time {
	enum sk_time_kind kind;
	int64_t s; /**< seconds, >= 0; 0 for SK_TIME_NEVER */
};

/** The largest second count of a TIME: its nanoseconds fit an int64_t. */
#define SK_TIME_S_MAX (INT64_MAX / 1000000000 - 1)

/** sk_parse_time() flag: accept "never". */
#define SK_TIME_NEVER_OK 1u

/**
 * sk_parse_time - a TIME as written in the config and on the command lines:
 *   - "now"                    relative, +0
 *   - "+N" or "+N[smhd]"       relative: N seconds (minutes, hours, days)
 *   - "N"                      absolute: unix seconds (N >= 1)
 *   - "YYYY-MM-DDTHH:MM:SSZ"   absolute: UTC, ISO 8601
 *   - "never"                  only with SK_TIME_NEVER_OK
 * @param flags  0 or SK_TIME_NEVER_OK
 * @param out    set only on success
 * @return true on success; false for anything else, or a value whose
 *         seconds exceed SK_TIME_S_MAX.
 */
static inline bool
sk_parse_time(const char *s, unsigned flags, struct sk_time *out)
{
	uint64_t v;

	if (s == NULL)
		return false;
	if (strcmp(s, "now") == 0) {
		*out = (struct sk_time){SK_TIME_REL, 0};
		return true;
	}
	if ((flags & SK_TIME_NEVER_OK) != 0 && strcmp(s, "never") == 0) {
		*out = (struct sk_time){SK_TIME_NEVER, 0};
		return true;
	}
	if (s[0] == '+') {
		char num[24];
		size_t n = strlen(s + 1);
		uint64_t unit = 1;

		if (n == 0 || n >= sizeof(num))
			return false;
		memcpy(num, s + 1, n + 1);
		switch (num[n - 1]) {
		case 'd':
			unit = 86400;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'm':
			unit = 60;
			break;
		case 's':
			break;
		default:
			unit = 0; /* no suffix */
			break;
		}
		if (unit != 0)
			num[n - 1] = '\0';
		else
			unit = 1;
		if (!sk_parse_u64(num, 0, (uint64_t)SK_TIME_S_MAX / unit, &v))
			return false;
		*out = (struct sk_time){SK_TIME_REL, (int64_t)(v * unit)};
		return true;
	}
	if (s[0] >= '0' && s[0] <= '9' && strchr(s, '-') == NULL) {
		if (!sk_parse_u64(s, 1, (uint64_t)SK_TIME_S_MAX, &v))
			return false;
		*out = (struct sk_time){SK_TIME_ABS, (int64_t)v};
		return true;
	}
	struct tm tm = {0};
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end == NULL || *end != '\0' || strlen(s) != 20)
		return false;
	time_t t = timegm(&tm);
	if (t <= 0)
		return false;
	*out = (struct sk_time){SK_TIME_ABS, (int64_t)t};
	return true;
}

/**
 * sk_time_resolve_ns - @p t in ns since the epoch, relative times counted
 * from @p now_ns; "never" is INT64_MAX. Saturates at INT64_MAX.
 */
static inline int64_t
sk_time_resolve_ns(const struct sk_time *t, int64_t now_ns)
{
	int64_t ns;

	if (t->kind == SK_TIME_NEVER)
		return INT64_MAX;
	ns = t->s * 1000000000;
	if (t->kind == SK_TIME_ABS)
		return ns;
	return __builtin_add_overflow(now_ns, ns, &ns) ? INT64_MAX : ns;
}

#endif /* SK_PARSE_H */
