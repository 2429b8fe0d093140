/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token.c - JWT HS256 verification and minting for the buy path.
 *
 * Sections: HMAC key, base64url, strict JSON scanner, claims, verify, mint.
 * Everything after the key section works on the caller's bytes and on stack
 * buffers bounded by SK_TOKEN_MAX_LEN: no allocation, no lock, no syscall.
 */

/*
 * OpenSSL 3 marks the low-level SHA256_Init/Update/Final deprecated in favour
 * of EVP. EVP cannot do what HMAC with precomputed states needs without
 * allocating: resuming from a saved midstate means EVP_MD_CTX_copy_ex(),
 * whose provider dupctx() mallocs on every call, and EVP_MAC re-derives the
 * pads per message. The low-level functions still exist in every OpenSSL 3
 * build that does not define OPENSSL_NO_DEPRECATED_3_0 (Debian's does not),
 * use the same assembly (SHA-NI when present) and a SHA256_CTX is a plain
 * struct we can copy. So silence the deprecation for this file only.
 * bench/token measures the difference against the one-shot HMAC().
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "sk_token.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "sk_common.h"

#if defined(OPENSSL_NO_DEPRECATED_3_0)
#error "sk_token needs the low-level SHA256 functions (OpenSSL built without deprecated API)"
#endif

#define SK_HMAC_BLOCK 64 /* SHA-256 block size */
#define SK_MAC_LEN    32 /* SHA-256 output size */

/* Longest decoded segment: 3/4 of the longest token. */
#define SK_SEG_MAX ((SK_TOKEN_MAX_LEN / 4 + 1) * 3)

/* Longest payload sk_token_mint() writes: 5 claims of at most ~30 bytes. */
#define SK_MINT_PAYLOAD_MAX 192

/* ------------------------------------------------------------------------
 * HMAC key: SHA-256 states after absorbing K^ipad and K^opad.
 */

struct sk_token_key {
	SHA256_CTX inner; /* state after (K ^ ipad), one block absorbed */
	SHA256_CTX outer; /* state after (K ^ opad), one block absorbed */
};

int
sk_token_key_create(const void *secret, size_t len, struct sk_token_key **out)
{
	uint8_t k[SK_HMAC_BLOCK], pad[SK_HMAC_BLOCK];
	struct sk_token_key *key;
	size_t i;

	if (secret == NULL || out == NULL || len < SK_TOKEN_SECRET_MIN)
		return -EINVAL;
	key = calloc(1, sizeof(*key));
	if (key == NULL)
		return -ENOMEM;

	memset(k, 0, sizeof(k));
	if (len > SK_HMAC_BLOCK)
		SHA256(secret, len, k);
	else
		memcpy(k, secret, len);

	for (i = 0; i < SK_HMAC_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	SHA256_Init(&key->inner);
	SHA256_Update(&key->inner, pad, sizeof(pad));
	for (i = 0; i < SK_HMAC_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	SHA256_Init(&key->outer);
	SHA256_Update(&key->outer, pad, sizeof(pad));

	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
	*out = key;
	return 0;
}

void
sk_token_key_free(struct sk_token_key *key)
{
	if (key == NULL)
		return;
	OPENSSL_cleanse(key, sizeof(*key));
	free(key);
}

/* sk_hmac - HMAC-SHA256 of @msg with @key into @mac; copies the states. */
static void
sk_hmac(const struct sk_token_key *key, const void *msg, size_t len, uint8_t mac[SK_MAC_LEN])
{
	uint8_t ih[SK_MAC_LEN];
	SHA256_CTX c;

	c = key->inner;
	SHA256_Update(&c, msg, len);
	SHA256_Final(ih, &c);
	c = key->outer;
	SHA256_Update(&c, ih, sizeof(ih));
	SHA256_Final(mac, &c);
}

/* ------------------------------------------------------------------------
 * base64url (RFC 4648 §5), unpadded, canonical only.
 */

static const char b64url_alphabet[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Decoding table: value + 1, 0 for bytes outside the alphabet. */
#define B64(c, v) [c] = (v) + 1
static const uint8_t b64url_dec[256] = {
	B64('A', 0),  B64('B', 1),  B64('C', 2),  B64('D', 3),	B64('E', 4),  B64('F', 5),
	B64('G', 6),  B64('H', 7),  B64('I', 8),  B64('J', 9),	B64('K', 10), B64('L', 11),
	B64('M', 12), B64('N', 13), B64('O', 14), B64('P', 15), B64('Q', 16), B64('R', 17),
	B64('S', 18), B64('T', 19), B64('U', 20), B64('V', 21), B64('W', 22), B64('X', 23),
	B64('Y', 24), B64('Z', 25), B64('a', 26), B64('b', 27), B64('c', 28), B64('d', 29),
	B64('e', 30), B64('f', 31), B64('g', 32), B64('h', 33), B64('i', 34), B64('j', 35),
	B64('k', 36), B64('l', 37), B64('m', 38), B64('n', 39), B64('o', 40), B64('p', 41),
	B64('q', 42), B64('r', 43), B64('s', 44), B64('t', 45), B64('u', 46), B64('v', 47),
	B64('w', 48), B64('x', 49), B64('y', 50), B64('z', 51), B64('0', 52), B64('1', 53),
	B64('2', 54), B64('3', 55), B64('4', 56), B64('5', 57), B64('6', 58), B64('7', 59),
	B64('8', 60), B64('9', 61), B64('-', 62), B64('_', 63),
};
#undef B64

/*
 * b64url_decode - decode @n chars of @in into @out (capacity @cap).
 * Refuses padding, any byte outside the alphabet, a length of 1 mod 4 and
 * non-zero unused bits in the last char (so each byte string has exactly one
 * accepted encoding). Returns the decoded length, or -1.
 */
static ssize_t
b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	const uint8_t *s = (const uint8_t *)in;
	size_t full = n / 4, rest = n % 4, i, o = 0;
	uint32_t a, b, c, d;

	if (rest == 1 || full * 3 + (rest ? rest - 1 : 0) > cap)
		return -1;
	for (i = 0; i < full; i++, s += 4) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		c = b64url_dec[s[2]];
		d = b64url_dec[s[3]];
		if (sk_unlikely(!a || !b || !c || !d))
			return -1;
		a = (a - 1) << 18 | (b - 1) << 12 | (c - 1) << 6 | (d - 1);
		out[o++] = (uint8_t)(a >> 16);
		out[o++] = (uint8_t)(a >> 8);
		out[o++] = (uint8_t)a;
	}
	if (rest == 2) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		if (!a || !b || ((b - 1) & 0x0f))
			return -1;
		out[o++] = (uint8_t)((a - 1) << 2 | (b - 1) >> 4);
	} else if (rest == 3) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		c = b64url_dec[s[2]];
		if (!a || !b || !c || ((c - 1) & 0x03))
			return -1;
		a = (a - 1) << 12 | (b - 1) << 6 | (c - 1);
		out[o++] = (uint8_t)(a >> 10);
		out[o++] = (uint8_t)(a >> 2);
	}
	return (ssize_t)o;
}

/* b64url_encoded_len - chars needed for @n bytes, unpadded. */
static size_t
b64url_encoded_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

/* b64url_encode - encode @n bytes into @out (room checked by the caller). */
static size_t
b64url_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
		out[o++] = b64url_alphabet[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
	} else if (n - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
	}
	return o;
}

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
is_hex(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
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
				if (!is_hex(j->p[k]))
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

/* check_header - the decoded JOSE header; SK_TOKEN_OK, _E_HEADER or _E_ALG. */
static enum sk_token_status
check_header(const uint8_t *h, size_t n)
{
	struct sk_js j = {h, h + n};
	struct sk_js_tok key, v;
	bool empty, first = true, alg_ok = false;
	unsigned seen = 0, bit;
	int r;

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

/* What check_payload() found. */
struct sk_claims_seen {
	uint64_t sub, item;
	int64_t exp, nbf;
	bool has_sub, bad_sub, has_item, has_exp, has_nbf;
};

enum { C_SUB = 1, C_ITEM = 2, C_EXP = 4, C_NBF = 8 };

/* check_payload - scan the claims; SK_TOKEN_OK or SK_TOKEN_E_MALFORMED. */
static enum sk_token_status
check_payload(const uint8_t *p, size_t n, struct sk_claims_seen *c)
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

/* ------------------------------------------------------------------------
 * Verify.
 */

enum sk_token_status
sk_token_verify(const struct sk_token_key *key, const char *tok, size_t len, uint64_t item,
		int64_t now, uint32_t skew, uint64_t *user)
{
	uint8_t hdr[SK_SEG_MAX], pay[SK_SEG_MAX], sig[SK_SEG_MAX], mac[SK_MAC_LEN];
	const char *d1, *d2;
	ssize_t hn, pn, sn;
	size_t sig_len;
	struct sk_claims_seen c;
	enum sk_token_status st;

	SK_DEBUG_ASSERT(key != NULL && user != NULL);
	if (len > SK_TOKEN_MAX_LEN)
		return SK_TOKEN_E_TOO_LONG;
	if (tok == NULL || len == 0)
		return SK_TOKEN_E_MALFORMED;

	/* Shape: h "." p "." s, h and p non-empty (s may be empty: alg none). */
	d1 = memchr(tok, '.', len);
	if (d1 == NULL || d1 == tok)
		return SK_TOKEN_E_MALFORMED;
	d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
	if (d2 == NULL || d2 == d1 + 1)
		return SK_TOKEN_E_MALFORMED;
	sig_len = len - (size_t)(d2 + 1 - tok);
	if (memchr(d2 + 1, '.', sig_len) != NULL)
		return SK_TOKEN_E_MALFORMED;

	hn = b64url_decode(tok, (size_t)(d1 - tok), hdr, sizeof(hdr));
	pn = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), pay, sizeof(pay));
	sn = b64url_decode(d2 + 1, sig_len, sig, sizeof(sig));
	if (hn < 0 || pn < 0 || sn < 0)
		return SK_TOKEN_E_BASE64;

	st = check_header(hdr, (size_t)hn);
	if (st != SK_TOKEN_OK)
		return st;

	if (sn != SK_MAC_LEN)
		return SK_TOKEN_E_SIGNATURE;
	sk_hmac(key, tok, (size_t)(d2 - tok), mac);
	if (CRYPTO_memcmp(mac, sig, SK_MAC_LEN) != 0)
		return SK_TOKEN_E_SIGNATURE;

	memset(&c, 0, sizeof(c));
	st = check_payload(pay, (size_t)pn, &c);
	if (st != SK_TOKEN_OK)
		return st;
	if (!c.has_sub)
		return SK_TOKEN_E_NO_SUB;
	if (c.bad_sub)
		return SK_TOKEN_E_BAD_SUB;
	if (!c.has_exp)
		return SK_TOKEN_E_NO_EXP;
	if (skew > SK_TOKEN_SKEW_MAX)
		skew = SK_TOKEN_SKEW_MAX;
	/* exp, nbf <= SK_TOKEN_TIME_MAX: neither side can overflow. */
	if (now >= c.exp + (int64_t)skew)
		return SK_TOKEN_E_EXPIRED;
	if (c.has_nbf && now < c.nbf - (int64_t)skew)
		return SK_TOKEN_E_NOT_YET_VALID;
	if (c.has_item && c.item != item)
		return SK_TOKEN_E_WRONG_ITEM;
	*user = c.sub;
	return SK_TOKEN_OK;
}

/* ------------------------------------------------------------------------
 * Mint.
 */

/* base64url of {"alg":"HS256","typ":"JWT"} */
static const char mint_header[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= SK_TOKEN_TIME_MAX;
}

int
sk_token_mint(const struct sk_token_key *key, const struct sk_token_claims *claims, char *out,
	      size_t cap, size_t *len)
{
	char payload[SK_MINT_PAYLOAD_MAX];
	uint8_t mac[SK_MAC_LEN];
	size_t hl = sizeof(mint_header) - 1, pl, need, o;
	int n;

	if (out != NULL && cap > 0)
		out[0] = '\0';
	if (key == NULL || claims == NULL || out == NULL || claims->user == 0 ||
	    !time_ok(claims->exp) || (claims->has_nbf && !time_ok(claims->nbf)) ||
	    (claims->has_iat && !time_ok(claims->iat)))
		return -EINVAL;

	n = snprintf(payload, sizeof(payload), "{\"sub\":\"%" PRIu64 "\"", claims->user);
	if (claims->has_item)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"item\":%" PRIu64,
			      claims->item);
	if (claims->has_iat)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"iat\":%" PRId64,
			      claims->iat);
	if (claims->has_nbf)
		n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"nbf\":%" PRId64,
			      claims->nbf);
	n += snprintf(payload + n, sizeof(payload) - (size_t)n, ",\"exp\":%" PRId64 "}",
		      claims->exp);
	SK_ASSERT(n > 0 && (size_t)n < sizeof(payload));
	pl = (size_t)n;

	need = hl + 1 + b64url_encoded_len(pl) + 1 + b64url_encoded_len(SK_MAC_LEN);
	if (need + 1 > cap)
		return -ENOSPC;

	memcpy(out, mint_header, hl);
	o = hl;
	out[o++] = '.';
	o += b64url_encode((const uint8_t *)payload, pl, out + o);
	sk_hmac(key, out, o, mac);
	out[o++] = '.';
	o += b64url_encode(mac, SK_MAC_LEN, out + o);
	SK_ASSERT(o == need);
	out[o] = '\0';
	if (len != NULL)
		*len = o;
	return 0;
}

/*
 * peek_sub_first - the fast path of sk_token_peek_user() for a payload that
 * starts with the "sub" claim as sk_token_mint() writes it
 * ({"sub":"<digits>",...): decode only the first 40 characters (30 bytes,
 * enough for the longest id and its quote). 0 and @user, or -1 when the
 * payload is not of that shape (the caller then parses it all).
 */
static int
peek_sub_first(const char *p, size_t n, uint64_t *user)
{
	static const char prefix[] = "{\"sub\":\"";
	uint8_t b[30];
	size_t k = (n < 40 ? n : 40) & ~(size_t)3;
	ssize_t got = k >= 12 ? b64url_decode(p, k, b, sizeof(b)) : -1;
	const uint8_t *q;

	if (got < (ssize_t)sizeof(prefix) || memcmp(b, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	q = memchr(b + sizeof(prefix) - 1, '"', (size_t)got - (sizeof(prefix) - 1));
	if (q == NULL)
		return -1;
	return sk_token_user_id_parse((const char *)b + sizeof(prefix) - 1,
				      (size_t)(q - b) - (sizeof(prefix) - 1), user) == 0
		       ? 0
		       : -1;
}

int
sk_token_peek_user(const char *tok, size_t len, uint64_t *user)
{
	uint8_t pay[SK_SEG_MAX];
	struct sk_claims_seen c;
	const char *d1, *d2;
	ssize_t pn;

	if (tok == NULL || len == 0 || len > SK_TOKEN_MAX_LEN)
		return -EINVAL;
	d1 = memchr(tok, '.', len);
	if (d1 == NULL)
		return -EINVAL;
	if (peek_sub_first(d1 + 1, len - (size_t)(d1 + 1 - tok), user) == 0)
		return 0;
	d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
	if (d2 == NULL || d2 == d1 + 1)
		return -EINVAL;
	pn = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), pay, sizeof(pay));
	if (pn < 0)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	if (check_payload(pay, (size_t)pn, &c) != SK_TOKEN_OK || !c.has_sub || c.bad_sub)
		return -EINVAL;
	*user = c.sub;
	return 0;
}

const char *
sk_token_status_str(enum sk_token_status st)
{
	static const char *const names[SK_TOKEN__COUNT] = {
		[SK_TOKEN_OK] = "ok",
		[SK_TOKEN_E_TOO_LONG] = "too_long",
		[SK_TOKEN_E_MALFORMED] = "malformed",
		[SK_TOKEN_E_BASE64] = "bad_base64",
		[SK_TOKEN_E_HEADER] = "bad_header",
		[SK_TOKEN_E_ALG] = "bad_alg",
		[SK_TOKEN_E_SIGNATURE] = "bad_signature",
		[SK_TOKEN_E_EXPIRED] = "expired",
		[SK_TOKEN_E_NOT_YET_VALID] = "not_yet_valid",
		[SK_TOKEN_E_WRONG_ITEM] = "wrong_item",
		[SK_TOKEN_E_NO_SUB] = "missing_sub",
		[SK_TOKEN_E_BAD_SUB] = "bad_sub",
		[SK_TOKEN_E_NO_EXP] = "missing_exp",
	};

	if ((unsigned)st >= SK_TOKEN__COUNT)
		return "unknown";
	return names[st];
}
