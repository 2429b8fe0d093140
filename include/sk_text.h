/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Small text helpers every module needs once: hex digits and bytes, and the
 * blanks around a line. Header-only; nothing here allocates, takes a lock or
 * keeps state, so every function is thread-safe.
 */
#ifndef SK_TEXT_H
#define SK_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Which hex digits sk_hex_digit() and sk_hex_decode() take. */
enum sk_hex_case {
	SK_HEX_ANY_CASE = 0, /**< 0-9, a-f and A-F */
	SK_HEX_LOWER,	     /**< 0-9 and a-f only (a canonical form, e.g. a MAC tag) */
};

/**
 * sk_hex_digit - the value of hex digit @p c.
 * @return 0..15, or -1 if @p c is not a hex digit of @p cs.
 */
static inline int
sk_hex_digit(char c, enum sk_hex_case cs)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (cs == SK_HEX_ANY_CASE && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * sk_hex_decode - the @p n bytes written as the 2 * @p n hex digits at
 * @p s into @p out. Reads exactly 2 * @p n characters (stops at the first
 * that is not a digit, so a NUL ends it safely); what follows is the
 * caller's to check.
 * @return true on success; false if a character is not a hex digit of
 *         @p cs (@p out then holds a prefix).
 */
static inline bool
sk_hex_decode(const char *s, size_t n, uint8_t *out, enum sk_hex_case cs)
{
	for (size_t i = 0; i < n; i++) {
		int hi = sk_hex_digit(s[2 * i], cs);
		int lo = hi < 0 ? -1 : sk_hex_digit(s[2 * i + 1], cs);

		if (lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/**
 * sk_trim - @p s without its leading blanks (space, tab) and, cut in place,
 * its trailing ones (space, tab, CR, LF).
 * @param s  a NUL-terminated string the caller may write
 * @return a pointer into @p s
 */
static inline char *
sk_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

#endif /* SK_TEXT_H */
