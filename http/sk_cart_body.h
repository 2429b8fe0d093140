/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The body of POST /v1/cart: a strict, bounded JSON reader for exactly
 *
 *   {"lines":[{"item":N,"qty":N}, ...]}
 *
 * and nothing else. It reads the bytes once, front to back, allocates
 * nothing, copies nothing but the numbers, and needs no NUL terminator.
 *
 * Accepted:
 *   - JSON whitespace (space, tab, CR, LF) anywhere between tokens;
 *   - one member "lines" in the envelope: an array of 1..SK_CART_LINES_MAX
 *     line objects;
 *   - per line exactly the members "item" and "qty", in either order, each
 *     once: unsigned decimal integers without sign, fraction, exponent or
 *     leading zero; item 1..UINT32_MAX, qty 1..SK_CART_QTY_MAX;
 *   - distinct items (the second line naming an item is the one at fault).
 * Refused: anything else - other members, escapes in member names,
 * strings or nulls as numbers, trailing bytes after the envelope.
 *
 * Every refusal names where it happened (struct sk_cart_error): the
 * 0-based index of the line object it is in, or -1 for the envelope, and a
 * short static detail meant for the 400 answer (plain ASCII, no quote or
 * backslash, so it can be put in a JSON string as it is).
 *
 * Thread-safety: pure function of its input; any thread.
 */
#ifndef SK_CART_BODY_H
#define SK_CART_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Most lines in one cart. */
#define SK_CART_LINES_MAX 16
/** Largest quantity of one line. */
#define SK_CART_QTY_MAX 1000

/** One line of a cart as sent. */
struct sk_cart_line {
	uint32_t item; /**< item id, >= 1 */
	uint32_t qty;  /**< units, 1..SK_CART_QTY_MAX */
};

/** A parsed cart: lines in the order sent. */
struct sk_cart_body {
	unsigned n; /**< 1..SK_CART_LINES_MAX on success */
	struct sk_cart_line lines[SK_CART_LINES_MAX];
};

/** Where and why a body was refused. */
struct sk_cart_error {
	int line;	    /**< 0-based line index, or -1: the envelope */
	const char *detail; /**< static string, see the file comment */
};

/**
 * sk_cart_body_parse - read a cart body.
 * @param[in]  buf  the body bytes (not NUL-terminated; only @p len are read)
 * @param[in]  len  body length
 * @param[out] out  the lines, filled on success (partially on failure)
 * @param[out] err  on failure, where and why; untouched on success
 * @return 0, or -EINVAL (the body is not a valid cart: see @p err).
 */
int sk_cart_body_parse(const uint8_t *buf, size_t len, struct sk_cart_body *out,
		       struct sk_cart_error *err);

/**
 * sk_cart_content_type_ok - whether a Content-Type value names JSON:
 * "application/json" in any case, optionally followed by OWS and
 * ";"-separated parameters (e.g. "; charset=utf-8"), which are not read.
 * @param v    the field value, OWS trimmed (NULL when absent: false)
 * @param len  its length
 */
bool sk_cart_content_type_ok(const char *v, size_t len);

#endif /* SK_CART_BODY_H */
