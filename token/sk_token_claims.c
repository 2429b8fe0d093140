/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token_claims.c - what the tokens say: a strict JSON scanner (just
 * enough to find a few members of one object), the JOSE header check
 * (alg, typ, crit), the claims scan (sub, item, exp, nbf, gate) and the strict
 * user id parser also used for X-User-Id. Works on decoded bytes the
 * caller owns; no allocation, cost linear in the input.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "sk_token.h"
#include "sk_token_priv.h"
#include "sk_text.h"

/* ------------------------------------------------------------------------
 * Strict JSON scanner (RFC 8259 grammar), just enough to find a few members
 * of one object. Every step consumes at least one byte, and nesting is
 * bounded by SK_TOKEN_MAX_DEPTH, so the cost is linear in the input.
 */

struct sk_js {
	const uint8_t *p;   /* next byte */
	const uint8_t *end; /* one past the last byte */
};

/* A scanned string or number: bytes between the quotes, or the number text. */
struct sk_js_tok {
	const uint8_t *s;
	size_t len;
	bool escaped; /* string contained at least one backslash escape */
};

static void
js_ws(struct sk_js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool
js_peek(const struct sk_js *j, uint8_t c)
{
	return j->p < j->end && *j->p == c;
}

static bool
is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* js_string - scan a string starting at '"'; false if invalid. */
static bool
js_string(struct sk_js *j, struct sk_js_tok *t)
{
	int k;

	if (!js_peek(j, '"'))
		return false;
	j->p++;
	t->s = j->p;
	t->escaped = false;
	while (j->p < j->end) {
		uint8_t c = *j->p;

		if (c == '"') {
			t->len = (size_t)(j->p - t->s);
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\') {
			j->p++;
			continue;
		}
		t->escaped = true;
		if (j->end - j->p < 2)
			return false;
		c = j->p[1];
		j->p += 2;
		if (c == 'u') {
			if (j->end - j->p < 4)
				return false;
			for (k = 0; k < 4; k++)
				if (sk_hex_digit((char)j->p[k], SK_HEX_ANY_CASE) < 0)
					return false;
			j->p += 4;
		} else if (!strchr("\"\\/bfnrt", c) || c == 0) {
			return false;
		}
	}
	return false;
}

/* js_number - scan a JSON number; false if invalid. */
static bool
js_number(struct sk_js *j, struct sk_js_tok *t)
{
	const uint8_t *p = j->p, *e = j->end;

	t->s = p;
	t->escaped = false;
	if (p < e && *p == '-')
		p++;
	if (p >= e || !is_digit(*p))
		return false;
	if (*p == '0') {
		p++;
	} else {
		while (p < e && is_digit(*p))
			p++;
	}
	if (p < e && *p == '.') {
		p++;
		if (p >= e || !is_digit(*p))
			return false;
		while (p < e && is_digit(*p))
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || !is_digit(*p))
			return false;
		while (p < e && is_digit(*p))
			p++;
	}
	t->len = (size_t)(p - t->s);
	j->p = p;
	return true;
}

static bool
js_literal(struct sk_js *j, const char *lit, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
		return false;
	j->p += n;
	return true;
}

/* js_skip - skip any value (after whitespace); depth bounds nesting. */
static bool
js_skip(struct sk_js *j, unsigned depth)
{
	struct sk_js_tok t;
	uint8_t open, close;

	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '"':
		return js_string(j, &t);
	case 't':
		return js_literal(j, "true", 4);
	case 'f':
		return js_literal(j, "false", 5);
	case 'n':
		return js_literal(j, "null", 4);
	case '{':
	case '[':
		break;
	default:
		return js_number(j, &t);
	}
	if (depth > SK_TOKEN_MAX_DEPTH)
		return false;
	open = *j->p++;
	close = open == '{' ? '}' : ']';
	js_ws(j);
	if (js_peek(j, close)) {
		j->p++;
		return true;
	}
	for (;;) {
		if (open == '{') {
			if (!js_string(j, &t))
				return false;
			js_ws(j);
			if (!js_peek(j, ':'))
				return false;
			j->p++;
			js_ws(j);
		}
		if (!js_skip(j, depth + 1))
			return false;
		js_ws(j);
		if (js_peek(j, close)) {
			j->p++;
			return true;
		}
		if (!js_peek(j, ','))
			return false;
		j->p++;
		js_ws(j);
	}
}

/*
 * Object walk: js_obj_begin() enters the top-level object; js_obj_next()
 * returns 1 with the next key (the scanner then sits on its value, which the
 * caller must consume with js_value() or js_skip()), 0 at the closing brace
 * (after checking only whitespace follows), -1 on a syntax error.
 */
static bool
js_obj_begin(struct sk_js *j, bool *empty)
{
	js_ws(j);
	if (!js_peek(j, '{'))
		return false;
	j->p++;
	js_ws(j);
	*empty = js_peek(j, '}');
	return true;
}

static int
js_obj_next(struct sk_js *j, bool first, struct sk_js_tok *key)
{
	js_ws(j);
	if (!first) {
		if (js_peek(j, '}')) {
			j->p++;
			js_ws(j);
			return j->p == j->end ? 0 : -1;
		}
		if (!js_peek(j, ','))
			return -1;
		j->p++;
		js_ws(j);
	}
	if (!js_string(j, key))
		return -1;
	js_ws(j);
	if (!js_peek(j, ':'))
		return -1;
	j->p++;
	js_ws(j);
	return 1;
}

static bool
js_obj_end_empty(struct sk_js *j)
{
	j->p++; /* the '}' seen by js_obj_begin() */
	js_ws(j);
	return j->p == j->end;
}

/* tok_is - key @t is exactly the ASCII name @name (escaped keys never are). */
static bool
tok_is(const struct sk_js_tok *t, const char *name, size_t n)
{
	return !t->escaped && t->len == n && memcmp(t->s, name, n) == 0;
}

#define TOK_IS(t, lit) tok_is((t), (lit), sizeof(lit) - 1)

/* ------------------------------------------------------------------------
 * Claims.
 */

/* parse_u64 - strict decimal (no sign, no leading zero); 0 / -EINVAL / -ERANGE. */
static int
parse_u64(const uint8_t *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!is_digit(s[i]))
			return -EINVAL;
	if (s[0] == '0' && len > 1)
		return -EINVAL;
	if (len > 20)
		return -ERANGE;
	for (i = 0; i < len; i++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return -ERANGE;
	}
	*out = v;
	return 0;
}

int
sk_token_user_id_parse(const char *s, size_t len, uint64_t *user)
{
	uint64_t v;
	int rc;

	if (s == NULL || user == NULL)
		return -EINVAL;
	rc = parse_u64((const uint8_t *)s, len, &v);
	if (rc < 0)
		return rc;
	if (v == 0)
		return -EINVAL;
	*user = v;
	return 0;
}

/*
 * id_value - a u64 claim written as a decimal string or a JSON integer.
 * Consumes the value; returns 0, -EINVAL (bad syntax for this claim: the
 * JSON is still valid), or -EPROTO (not valid JSON at all).
 */
static int
id_value(struct sk_js *j, uint64_t *out)
{
	struct sk_js_tok t;

	if (js_peek(j, '"')) {
		if (!js_string(j, &t))
			return -EPROTO;
	} else if (j->p < j->end && (*j->p == '-' || is_digit(*j->p))) {
		if (!js_number(j, &t))
			return -EPROTO;
	} else {
		return js_skip(j, 1) ? -EINVAL : -EPROTO;
	}
	if (t.escaped)
		return -EINVAL;
	return parse_u64(t.s, t.len, out) == 0 ? 0 : -EINVAL;
}

/*
 * gate_value - the gate claim: a JSON string of a decimal item id,
 * 1..UINT64_MAX, no escape. Consumes the value; 0 or -EINVAL (whatever
 * else, valid JSON or not: the caller refuses the token either way).
 */
static int
gate_value(struct sk_js *j, uint64_t *out)
{
	struct sk_js_tok t;
	uint64_t v;

	if (!js_string(j, &t) || t.escaped || parse_u64(t.s, t.len, &v) != 0 || v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * time_value - a NumericDate: non-negative JSON number without exponent, at
 * most SK_TOKEN_TIME_MAX. Fractions are allowed; @round_up says whether a
 * fraction rounds up (nbf: never early) or down (exp: never late).
 * Returns 0, -EINVAL (valid JSON, unusable here) or -EPROTO (invalid JSON).
 */
static int
time_value(struct sk_js *j, bool round_up, int64_t *out)
{
	struct sk_js_tok t;
	size_t i, n;
	int64_t v = 0;
	bool frac = false;

	if (j->p >= j->end || !(*j->p == '-' || is_digit(*j->p)))
		return js_skip(j, 1) ? -EINVAL : -EPROTO;
	if (!js_number(j, &t))
		return -EPROTO;
	for (n = 0; n < t.len && is_digit(t.s[n]); n++)
		;
	if (n == 0 || n > 12)
		return -EINVAL; /* negative, or beyond SK_TOKEN_TIME_MAX */
	for (i = n; i < t.len; i++) {
		if (t.s[i] == 'e' || t.s[i] == 'E')
			return -EINVAL;
		if (is_digit(t.s[i]) && t.s[i] != '0')
			frac = true;
	}
	for (i = 0; i < n; i++)
		v = v * 10 + (t.s[i] - '0');
	if (frac && round_up)
		v++;
	if (v > SK_TOKEN_TIME_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* kid_ok - a key id: 1..SK_TOKEN_KID_MAX of [A-Za-z0-9._-], no escape. */
static bool
kid_ok(const struct sk_js_tok *v)
{
	if (v->escaped || v->len == 0 || v->len > SK_TOKEN_KID_MAX)
		return false;
	for (size_t i = 0; i < v->len; i++) {
		uint8_t c = v->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

enum sk_token_status
sk_token_check_header(const uint8_t *h, size_t n, const uint8_t **kid, size_t *kid_len)
{
	struct sk_js j = {h, h + n};
	struct sk_js_tok key, v;
	bool empty, first = true, alg_ok = false;
	unsigned seen = 0, bit;
	int r;

	*kid = NULL;
	*kid_len = 0;

	if (!js_obj_begin(&j, &empty))
		return SK_TOKEN_E_HEADER;
	if (empty)
		return js_obj_end_empty(&j) ? SK_TOKEN_E_ALG : SK_TOKEN_E_HEADER;
	while ((r = js_obj_next(&j, first, &key)) == 1) {
		first = false;
		if (key.escaped)
			return SK_TOKEN_E_HEADER;
		if (TOK_IS(&key, "alg")) {
			bit = 1;
			if (js_peek(&j, '"')) {
				if (!js_string(&j, &v))
					return SK_TOKEN_E_HEADER;
				alg_ok = TOK_IS(&v, "HS256");
			} else if (!js_skip(&j, 1)) {
				return SK_TOKEN_E_HEADER;
			}
		} else if (TOK_IS(&key, "typ")) {
			bit = 2;
			if (!js_string(&j, &v) || v.escaped || v.len != 3 ||
			    strncasecmp((const char *)v.s, "JWT", 3) != 0)
				return SK_TOKEN_E_HEADER;
		} else if (TOK_IS(&key, "kid")) {
			/* Any value is accepted here (a single key ignores it); one
			 * that is no key id matches no key of a ring (length 0). */
			bit = 4;
			*kid = h;
			if (js_peek(&j, '"')) {
				if (!js_string(&j, &v))
					return SK_TOKEN_E_HEADER;
				if (kid_ok(&v)) {
					*kid = v.s;
					*kid_len = v.len;
				}
			} else if (!js_skip(&j, 1)) {
				return SK_TOKEN_E_HEADER;
			}
		} else if (TOK_IS(&key, "crit")) {
			return SK_TOKEN_E_HEADER;
		} else {
			bit = 0;
			if (!js_skip(&j, 1))
				return SK_TOKEN_E_HEADER;
		}
		if (seen & bit)
			return SK_TOKEN_E_HEADER;
		seen |= bit;
	}
	if (r < 0)
		return SK_TOKEN_E_HEADER;
	return alg_ok ? SK_TOKEN_OK : SK_TOKEN_E_ALG;
}

enum { C_SUB = 1, C_ITEM = 2, C_EXP = 4, C_NBF = 8, C_GATE = 16 };

enum sk_token_status
sk_token_check_payload(const uint8_t *p, size_t n, struct sk_claims_seen *c)
{
	struct sk_js j = {p, p + n};
	struct sk_js_tok key;
	bool empty, first = true;
	unsigned seen = 0, bit;
	int r, rc;

	if (!js_obj_begin(&j, &empty))
		return SK_TOKEN_E_MALFORMED;
	if (empty)
		return js_obj_end_empty(&j) ? SK_TOKEN_OK : SK_TOKEN_E_MALFORMED;
	while ((r = js_obj_next(&j, first, &key)) == 1) {
		first = false;
		if (key.escaped)
			return SK_TOKEN_E_MALFORMED;
		if (TOK_IS(&key, "sub")) {
			bit = C_SUB;
			rc = id_value(&j, &c->sub);
			if (rc == -EPROTO)
				return SK_TOKEN_E_MALFORMED;
			c->has_sub = true;
			c->bad_sub = rc != 0 || c->sub == 0;
		} else if (TOK_IS(&key, "item")) {
			bit = C_ITEM;
			if (id_value(&j, &c->item) != 0)
				return SK_TOKEN_E_MALFORMED;
			c->has_item = true;
		} else if (TOK_IS(&key, "exp")) {
			bit = C_EXP;
			if (time_value(&j, false, &c->exp) != 0)
				return SK_TOKEN_E_MALFORMED;
			c->has_exp = true;
		} else if (TOK_IS(&key, "nbf")) {
			bit = C_NBF;
			if (time_value(&j, true, &c->nbf) != 0)
				return SK_TOKEN_E_MALFORMED;
			c->has_nbf = true;
		} else if (TOK_IS(&key, "gate")) {
			bit = C_GATE;
			if (gate_value(&j, &c->gate) != 0)
				return SK_TOKEN_E_MALFORMED;
			c->has_gate = true;
		} else {
			bit = 0;
			if (!js_skip(&j, 1))
				return SK_TOKEN_E_MALFORMED;
		}
		if (seen & bit)
			return SK_TOKEN_E_MALFORMED;
		seen |= bit;
	}
	return r < 0 ? SK_TOKEN_E_MALFORMED : SK_TOKEN_OK;
}
