/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_http.c - the JSON body scanner of seckill-crowd (the responses
 * around the bodies are parsed by sk_http_client.h). It walks the bytes
 * once, front to back, and stops at the first byte that cannot belong to a
 * valid body.
 */
#include <errno.h>
#include <string.h>

#include "crowd_http.h"

static inline bool
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* parse_dec - all of [s, s+len) as a decimal u64 (1..20 digits, no sign). */
static bool
parse_dec(const unsigned char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]) || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	*out = v;
	return true;
}

/* ------------------------------------------------------------ statuses */

static const char *const status_names[SK_CROWD_ST__COUNT] = {
	[SK_CROWD_ST_NONE] = "none",
	[SK_CROWD_ST_QUEUED] = "queued",
	[SK_CROWD_ST_CONFIRMED] = "confirmed",
	[SK_CROWD_ST_PAID] = "paid",
	[SK_CROWD_ST_CANCELLED] = "cancelled",
	[SK_CROWD_ST_FAILED] = "failed",
	[SK_CROWD_ST_LIMIT] = "limit",
	[SK_CROWD_ST_SOLD_OUT] = "sold_out",
	[SK_CROWD_ST_NOT_STARTED] = "not_started",
	[SK_CROWD_ST_ENDED] = "ended",
	[SK_CROWD_ST_BUSY] = "busy",
	[SK_CROWD_ST_UNAVAILABLE] = "unavailable",
	[SK_CROWD_ST_UNAUTHORIZED] = "unauthorized",
	[SK_CROWD_ST_NOT_FOUND] = "not_found",
	[SK_CROWD_ST_BAD_REQUEST] = "bad_request",
	[SK_CROWD_ST_DUPLICATE] = "duplicate",
	[SK_CROWD_ST_SHORT] = "short",
	[SK_CROWD_ST_GATE] = "gate",
	[SK_CROWD_ST_NOT_RESERVED] = "not_reserved",
	[SK_CROWD_ST_OTHER] = "other",
};

const char *
sk_crowd_status_str(enum sk_crowd_status st)
{
	return (unsigned)st < SK_CROWD_ST__COUNT ? status_names[st] : "unknown";
}

static enum sk_crowd_status
status_lookup(const unsigned char *s, size_t len)
{
	for (unsigned st = SK_CROWD_ST_QUEUED; st < SK_CROWD_ST_OTHER; st++) {
		const char *n = status_names[st];
		if (strlen(n) == len && memcmp(n, s, len) == 0)
			return (enum sk_crowd_status)st;
	}
	return SK_CROWD_ST_OTHER;
}

/* ------------------------------------------------------------ JSON */

/* Deepest nesting of arrays/objects accepted in a body (the object is 1). */
#define BODY_MAX_DEPTH 8

struct scan {
	const unsigned char *p;
	const unsigned char *end;
};

static void
skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool
eat(struct scan *s, unsigned char c)
{
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static bool
is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * scan_string - a JSON string at s->p; [*b, *b + *len) is its raw content
 * (between the quotes, escapes not decoded), *escaped tells if it has any.
 */
static bool
scan_string(struct scan *s, const unsigned char **b, size_t *len, bool *escaped)
{
	if (!eat(s, '"'))
		return false;
	*b = s->p;
	*escaped = false;
	while (s->p < s->end) {
		unsigned char c = *s->p++;
		if (c == '"') {
			*len = (size_t)(s->p - 1 - *b);
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		*escaped = true;
		if (s->p >= s->end)
			return false;
		c = *s->p++;
		if (c == 'u') {
			for (int k = 0; k < 4; k++) {
				if (s->p >= s->end || !is_hex(*s->p))
					return false;
				s->p++;
			}
		} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
			return false;
		}
	}
	return false;
}

/*
 * scan_number - a JSON number at s->p; *is_u64 and *val give it as a u64 when it
 * is a non-negative integer without fraction or exponent that fits.
 */
static bool
scan_number(struct scan *s, bool *is_u64, uint64_t *val)
{
	const unsigned char *b = s->p;
	bool neg = eat(s, '-'), frac = false;

	if (s->p >= s->end || !is_digit(*s->p))
		return false;
	if (*s->p == '0') {
		s->p++;
	} else {
		while (s->p < s->end && is_digit(*s->p))
			s->p++;
	}
	const unsigned char *int_end = s->p;
	if (eat(s, '.')) {
		frac = true;
		if (s->p >= s->end || !is_digit(*s->p))
			return false;
		while (s->p < s->end && is_digit(*s->p))
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		frac = true;
		s->p++;
		if (!eat(s, '+'))
			eat(s, '-');
		if (s->p >= s->end || !is_digit(*s->p))
			return false;
		while (s->p < s->end && is_digit(*s->p))
			s->p++;
	}
	*is_u64 = !neg && !frac && parse_dec(b, (size_t)(int_end - b), val);
	return true;
}

static bool
scan_literal(struct scan *s, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
		return false;
	s->p += n;
	return true;
}

/* scan_value - validate and skip any JSON value; @depth counts open containers. */
static bool
scan_value(struct scan *s, int depth)
{
	const unsigned char *b;
	size_t len;
	bool esc, isu;
	uint64_t v;

	skip_ws(s);
	if (s->p >= s->end)
		return false;
	switch (*s->p) {
	case '"':
		return scan_string(s, &b, &len, &esc);
	case 't':
		return scan_literal(s, "true");
	case 'f':
		return scan_literal(s, "false");
	case 'n':
		return scan_literal(s, "null");
	case '[':
	case '{': {
		bool obj = *s->p == '{';
		unsigned char close = obj ? '}' : ']';
		if (depth + 1 > BODY_MAX_DEPTH)
			return false;
		s->p++;
		skip_ws(s);
		if (eat(s, close))
			return true;
		for (;;) {
			if (obj) {
				skip_ws(s);
				if (!scan_string(s, &b, &len, &esc))
					return false;
				skip_ws(s);
				if (!eat(s, ':'))
					return false;
			}
			if (!scan_value(s, depth + 1))
				return false;
			skip_ws(s);
			if (eat(s, close))
				return true;
			if (!eat(s, ','))
				return false;
		}
	}
	default:
		return scan_number(s, &isu, &v);
	}
}

/* Known members, one bit each, to refuse a member given twice. */
enum {
	M_STATUS = 1u << 0,
	M_ORDER = 1u << 1,
	M_DUPLICATE = 1u << 2,
	M_STARTS = 1u << 3,
	M_REMAINING = 1u << 4,
	M_ITEM = 1u << 5,
	M_STATE = 1u << 6,
};

/* key_is - the raw member name [b, b+len) is exactly @lit. */
static bool
key_is(const unsigned char *b, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(b, lit, len) == 0;
}

/* scan_uint - a member value that must be a u64: integer, or (order ids) a
 * decimal string without leading zeros. */
static bool
scan_uint(struct scan *s, bool string_ok, uint64_t *out)
{
	bool isu, esc;

	if (s->p < s->end && *s->p == '"') {
		const unsigned char *b;
		size_t len;
		if (!string_ok || !scan_string(s, &b, &len, &esc) || esc || len == 0 ||
		    (len > 1 && b[0] == '0'))
			return false;
		return parse_dec(b, len, out);
	}
	return scan_number(s, &isu, out) && isu;
}

int
sk_crowd_body_scan(const char *str, size_t len, struct sk_crowd_body *out)
{
	struct scan s = {(const unsigned char *)str, (const unsigned char *)str + len};
	unsigned seen = 0;

	memset(out, 0, sizeof(*out));
	skip_ws(&s);
	if (!eat(&s, '{'))
		return -EINVAL;
	skip_ws(&s);
	if (!eat(&s, '}')) {
		for (;;) {
			const unsigned char *k, *vb;
			size_t klen, vlen;
			bool kesc, vesc;
			unsigned bit = 0;

			skip_ws(&s);
			if (!scan_string(&s, &k, &klen, &kesc))
				return -EINVAL;
			skip_ws(&s);
			if (!eat(&s, ':'))
				return -EINVAL;
			skip_ws(&s);
			if (kesc) {
				if (!scan_value(&s, 1))
					return -EINVAL;
			} else if (key_is(k, klen, "status")) {
				bit = M_STATUS;
				if (!scan_string(&s, &vb, &vlen, &vesc))
					return -EINVAL;
				out->status = vesc ? SK_CROWD_ST_OTHER : status_lookup(vb, vlen);
			} else if (key_is(k, klen, "state")) {
				bit = M_STATE;
				if (!scan_string(&s, &vb, &vlen, &vesc))
					return -EINVAL;
				size_t n = vlen < sizeof(out->state) - 1 ? vlen
									 : sizeof(out->state) - 1;
				memcpy(out->state, vb, n);
				out->state[n] = '\0';
				out->has_state = true;
			} else if (key_is(k, klen, "order")) {
				bit = M_ORDER;
				if (!scan_uint(&s, true, &out->order) || out->order == 0)
					return -EINVAL;
				out->has_order = true;
			} else if (key_is(k, klen, "duplicate")) {
				bit = M_DUPLICATE;
				if (scan_literal(&s, "true"))
					out->duplicate = true;
				else if (!scan_literal(&s, "false"))
					return -EINVAL;
			} else if (key_is(k, klen, "starts_in_ms")) {
				bit = M_STARTS;
				if (!scan_uint(&s, false, &out->starts_in_ms))
					return -EINVAL;
				out->has_starts_in_ms = true;
			} else if (key_is(k, klen, "remaining")) {
				bit = M_REMAINING;
				if (!scan_uint(&s, false, &out->remaining))
					return -EINVAL;
				out->has_remaining = true;
			} else if (key_is(k, klen, "item")) {
				bit = M_ITEM;
				if (!scan_uint(&s, false, &out->item))
					return -EINVAL;
				out->has_item = true;
			} else if (!scan_value(&s, 1)) {
				return -EINVAL;
			}
			if (bit != 0) {
				if (seen & bit)
					return -EINVAL;
				seen |= bit;
			}
			skip_ws(&s);
			if (eat(&s, '}'))
				break;
			if (!eat(&s, ','))
				return -EINVAL;
		}
	}
	skip_ws(&s);
	return s.p == s.end ? 0 : -EINVAL;
}
