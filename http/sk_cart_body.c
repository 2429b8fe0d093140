/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cart_body.c - the strict reader of a cart body (sk_cart_body.h): one
 * pass over the bytes with a cursor, no recursion, no allocation.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sk_cart_body.h"

/* A cursor over the body; line is the line object being read, or -1. */
struct cur {
	const uint8_t *p, *end;
	int line;
	const char *detail; /* the first refusal; NULL while all is well */
};

/* fail - note the first refusal at the current line; always false. */
static bool
fail(struct cur *c, const char *detail)
{
	if (c->detail == NULL)
		c->detail = detail;
	return false;
}

static void
ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

/* expect - skip whitespace, then take the byte @ch (else refuse: @detail). */
static bool
expect(struct cur *c, uint8_t ch, const char *detail)
{
	ws(c);
	if (c->p == c->end)
		return fail(c, "unexpected end of body");
	if (*c->p != ch)
		return fail(c, detail);
	c->p++;
	return true;
}

/* peek - skip whitespace; the next byte, or -1 at the end. */
static int
peek(struct cur *c)
{
	ws(c);
	return c->p < c->end ? *c->p : -1;
}

/*
 * key - a member name: a plain string (no escape) read as it is; then the
 * colon. *@k / *@n point at its bytes.
 */
static bool
key(struct cur *c, const uint8_t **k, size_t *n)
{
	if (!expect(c, '"', "expected a member name"))
		return false;
	const uint8_t *s = c->p;

	while (c->p < c->end && *c->p != '"') {
		if (*c->p == '\\' || *c->p < 0x20)
			return fail(c, "unknown member");
		c->p++;
	}
	if (c->p == c->end)
		return fail(c, "unexpected end of body");
	*k = s;
	*n = (size_t)(c->p - s);
	c->p++;
	return expect(c, ':', "expected a colon");
}

/* is_key - whether the name [k, k+n) is the literal @lit. */
static bool
is_key(const uint8_t *k, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(k, lit, n) == 0;
}

/*
 * number - an unsigned decimal integer in [lo, hi]; @range is the detail
 * of a value out of it, @bad the one of something that is no such integer.
 */
static bool
number(struct cur *c, uint64_t lo, uint64_t hi, uint32_t *out, const char *bad, const char *range)
{
	uint64_t v = 0;
	unsigned digits = 0;

	ws(c);
	if (c->p == c->end)
		return fail(c, "unexpected end of body");
	if (*c->p < '0' || *c->p > '9')
		return fail(c, bad);
	if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
		return fail(c, bad); /* leading zero */
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (++digits <= 20)
			v = v * 10 + (uint64_t)(*c->p - '0');
		c->p++;
	}
	if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'))
		return fail(c, bad);
	/* more than 10 digits is above UINT32_MAX, whatever they say */
	if (digits > 10 || v < lo || v > hi)
		return fail(c, range);
	*out = (uint32_t)v;
	return true;
}

/* line - one line object, its members in either order, each once. */
static bool
line(struct cur *c, struct sk_cart_line *l)
{
	bool have_item = false, have_qty = false;

	if (!expect(c, '{', "expected a line object"))
		return false;
	if (peek(c) == '}')
		return fail(c, "missing item");
	for (;;) {
		const uint8_t *k;
		size_t n;

		if (!key(c, &k, &n))
			return false;
		if (is_key(k, n, "item")) {
			if (have_item)
				return fail(c, "item given twice");
			if (!number(c, 1, UINT32_MAX, &l->item, "item is not an unsigned integer",
				    "item out of range 1..4294967295"))
				return false;
			have_item = true;
		} else if (is_key(k, n, "qty")) {
			if (have_qty)
				return fail(c, "qty given twice");
			if (!number(c, 1, SK_CART_QTY_MAX, &l->qty,
				    "qty is not an unsigned integer", "qty out of range 1..1000"))
				return false;
			have_qty = true;
		} else {
			return fail(c, "unknown member");
		}
		int ch = peek(c);
		if (ch == ',') {
			c->p++;
			continue;
		}
		if (!expect(c, '}', "expected a comma or the end of the line"))
			return false;
		break;
	}
	if (!have_item)
		return fail(c, "missing item");
	if (!have_qty)
		return fail(c, "missing qty");
	return true;
}

/* lines - the array; duplicates refused at their second line. */
static bool
lines(struct cur *c, struct sk_cart_body *out)
{
	if (!expect(c, '[', "lines is not an array"))
		return false;
	if (peek(c) == ']') {
		c->p++;
		return fail(c, "no lines");
	}
	for (;;) {
		struct sk_cart_line l;

		if (out->n == SK_CART_LINES_MAX) {
			c->line = (int)out->n;
			return fail(c, "too many lines (at most 16)");
		}
		c->line = (int)out->n;
		if (!line(c, &l))
			return false;
		for (unsigned i = 0; i < out->n; i++)
			if (out->lines[i].item == l.item)
				return fail(c, "duplicate item");
		out->lines[out->n++] = l;
		c->line = -1;
		int ch = peek(c);
		if (ch == ',') {
			c->p++;
			continue;
		}
		return expect(c, ']', "expected a comma or the end of lines");
	}
}

int
sk_cart_body_parse(const uint8_t *buf, size_t len, struct sk_cart_body *out,
		   struct sk_cart_error *err)
{
	struct cur c = {.p = buf, .end = buf + len, .line = -1};
	const uint8_t *k;
	size_t n;
	bool ok;

	out->n = 0;
	if (buf == NULL)
		c.end = c.p;
	ok = expect(&c, '{', "body is not a JSON object");
	if (ok && peek(&c) == '}')
		ok = fail(&c, "missing lines");
	ok = ok && key(&c, &k, &n);
	if (ok && !is_key(k, n, "lines"))
		ok = fail(&c, "unknown member");
	ok = ok && lines(&c, out) && expect(&c, '}', "expected the end of the object");
	if (ok) {
		ws(&c);
		if (c.p != c.end)
			ok = fail(&c, "bytes after the object");
	}
	if (ok)
		return 0;
	err->line = c.line;
	err->detail = c.detail;
	return -EINVAL;
}

bool
sk_cart_content_type_ok(const char *v, size_t len)
{
	static const char json[] = "application/json";
	size_t n = sizeof(json) - 1;

	if (v == NULL || len < n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = v[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch != json[i])
			return false;
	}
	while (n < len && (v[n] == ' ' || v[n] == '\t'))
		n++;
	return n == len || v[n] == ';';
}
