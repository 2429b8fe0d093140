/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_addr.c - IPv4/IPv6 addresses: strict text parsing and RFC 5952
 * formatting, prefixes, trusted-prefix lists, the limiter key.
 *
 * The parsers take a pointer and a length and never read past it; every
 * loop is bounded by that length (or by the list's size).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_addr.h"

/* The longest address text: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255". */
#define ADDR_TEXT_MAX	(SK_ADDR_STRLEN - 1)
#define PREFIX_TEXT_MAX (SK_PREFIX_STRLEN - 1)

static const uint8_t v4mapped_head[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static const char *const error_names[SK_ADDR_ERROR_MAX] = {
	[SK_ADDR_OK] = "no error",
	[SK_ADDR_EEMPTY] = "empty",
	[SK_ADDR_ETOOLONG] = "too long for an address",
	[SK_ADDR_ESYNTAX] = "not an IP address (a character or separator out of place)",
	[SK_ADDR_ERANGE] = "an IPv4 octet above 255 or an IPv6 group of more than 4 digits",
	[SK_ADDR_ELEADING0] = "an IPv4 octet with a leading zero",
	[SK_ADDR_ECOUNT] = "wrong number of IPv4 octets or IPv6 groups",
	[SK_ADDR_EZONE] = "an IPv6 zone index is not allowed",
	[SK_ADDR_EPREFIX] = "bad prefix length",
	[SK_ADDR_EHOSTBITS] = "bits set beyond the prefix length",
	[SK_ADDR_EFULL] = "too many prefixes",
};

const char *
sk_addr_strerror(enum sk_addr_error err)
{
	if ((unsigned)err >= SK_ADDR_ERROR_MAX)
		return "invalid error code";
	return error_names[err];
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* parse_v4 - exactly the @len bytes at @s as a dotted quad into @out. */
static enum sk_addr_error
parse_v4(const char *s, size_t len, uint8_t out[4])
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		size_t start = i;
		unsigned v = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (i - start < 3)
				v = v * 10 + (unsigned)(s[i] - '0');
			i++;
		}
		if (i == start)
			return SK_ADDR_ESYNTAX;
		if (i - start > 3 || v > 255)
			return SK_ADDR_ERANGE;
		if (i - start > 1 && s[start] == '0')
			return SK_ADDR_ELEADING0;
		out[part] = (uint8_t)v;
		if (i == len)
			return part == 3 ? SK_ADDR_OK : SK_ADDR_ECOUNT;
		if (s[i] != '.')
			return SK_ADDR_ESYNTAX;
		if (part == 3)
			return SK_ADDR_ECOUNT;
		i++;
	}
	return SK_ADDR_ECOUNT; /* not reached: the loop returns */
}

/* parse_v6 - exactly the @len bytes at @s as RFC 4291 text into @out. */
static enum sk_addr_error
parse_v6(const char *s, size_t len, uint8_t out[16])
{
	uint16_t g[8];
	int n = 0, gap = -1; /* groups read; where "::" stands, in groups */
	size_t i = 0;

	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		gap = 0;
		i = 2;
	}
	while (i < len) {
		size_t start = i;
		unsigned v = 0;
		int d;

		while (i < len && (d = hex_value(s[i])) >= 0) {
			if (i - start < 4)
				v = v << 4 | (unsigned)d;
			i++;
		}
		if (i < len && s[i] == '.' && i > start) {
			/* the dotted IPv4 tail: the last 32 bits */
			uint8_t b[4];
			enum sk_addr_error e = parse_v4(s + start, len - start, b);

			if (e != SK_ADDR_OK)
				return e;
			if (n > 6)
				return SK_ADDR_ECOUNT;
			g[n++] = (uint16_t)(b[0] << 8 | b[1]);
			g[n++] = (uint16_t)(b[2] << 8 | b[3]);
			i = len;
			break;
		}
		if (i == start)
			return SK_ADDR_ESYNTAX;
		if (i - start > 4)
			return SK_ADDR_ERANGE;
		if (n == 8)
			return SK_ADDR_ECOUNT;
		g[n++] = (uint16_t)v;
		if (i == len)
			break;
		if (s[i] != ':')
			return SK_ADDR_ESYNTAX;
		i++;
		if (i < len && s[i] == ':') {
			if (gap >= 0)
				return SK_ADDR_ESYNTAX; /* a second "::" */
			gap = n;
			i++;
		} else if (i == len) {
			return SK_ADDR_ESYNTAX; /* a trailing single ':' */
		}
	}
	if (gap < 0 && n != 8)
		return SK_ADDR_ECOUNT;
	if (gap >= 0 && n > 7)
		return SK_ADDR_ECOUNT; /* "::" must stand for one group at least */

	int zeros = 8 - n;
	for (int k = 0, src = 0; k < 8; k++) {
		uint16_t w = 0;

		if (gap >= 0 && k >= gap && k < gap + zeros)
			w = 0;
		else
			w = g[src++];
		out[2 * k] = (uint8_t)(w >> 8);
		out[2 * k + 1] = (uint8_t)w;
	}
	return SK_ADDR_OK;
}

enum sk_addr_error
sk_addr_parse(const char *s, size_t len, struct sk_addr *out)
{
	enum sk_addr_error e;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return SK_ADDR_EEMPTY;
	if (len > ADDR_TEXT_MAX)
		return SK_ADDR_ETOOLONG;
	if (memchr(s, ':', len) != NULL) {
		if (memchr(s, '%', len) != NULL)
			return SK_ADDR_EZONE;
		e = parse_v6(s, len, out->bytes);
		if (e == SK_ADDR_OK)
			out->family = SK_ADDR_V6;
	} else {
		e = parse_v4(s, len, out->bytes);
		if (e == SK_ADDR_OK)
			out->family = SK_ADDR_V4;
	}
	if (e != SK_ADDR_OK)
		memset(out, 0, sizeof(*out));
	return e;
}

bool
sk_addr_port_parse(const char *s, size_t len, uint16_t *out)
{
	uint32_t v = 0;

	if (len == 0 || len > 5 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Formatting                                                                */
/* ------------------------------------------------------------------------ */

/* copy_out - @tmp (@n bytes) with a NUL into @buf, or -ENOSPC. */
static int
copy_out(const char *tmp, int n, char *buf, size_t cap)
{
	if (n < 0 || (size_t)n >= cap) {
		if (cap > 0)
			buf[0] = '\0';
		return -ENOSPC;
	}
	memcpy(buf, tmp, (size_t)n);
	buf[n] = '\0';
	return n;
}

static int
format_v4(const uint8_t b[4], char *p)
{
	return sprintf(p, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

static int
format_v6(const uint8_t b[16], char *p)
{
	int best = -1, best_len = 1, n = 0;

	if (memcmp(b, v4mapped_head, sizeof(v4mapped_head)) == 0) {
		n = sprintf(p, "::ffff:");
		return n + format_v4(b + 12, p + n);
	}
	for (int k = 0; k < 8;) {
		int run = 0;

		while (k + run < 8 && b[2 * (k + run)] == 0 && b[2 * (k + run) + 1] == 0)
			run++;
		if (run > best_len) {
			best = k;
			best_len = run;
		}
		k += run > 0 ? run : 1;
	}
	for (int k = 0; k < 8; k++) {
		if (k == best) {
			n += sprintf(p + n, "::");
			k += best_len - 1;
			continue;
		}
		if (k > 0 && k != best + best_len)
			p[n++] = ':';
		n += sprintf(p + n, "%x", (unsigned)(b[2 * k] << 8 | b[2 * k + 1]));
	}
	p[n] = '\0';
	return n;
}

int
sk_addr_format(const struct sk_addr *a, char *buf, size_t cap)
{
	char tmp[SK_ADDR_STRLEN + 8];
	int n;

	if (a->family == SK_ADDR_V4)
		n = format_v4(a->bytes, tmp);
	else if (a->family == SK_ADDR_V6)
		n = format_v6(a->bytes, tmp);
	else
		return -EINVAL;
	return copy_out(tmp, n, buf, cap);
}

/* ------------------------------------------------------------------------ */
/* Addresses                                                                 */
/* ------------------------------------------------------------------------ */

struct sk_addr
sk_addr_from_v4(uint32_t be)
{
	struct sk_addr a = {.family = SK_ADDR_V4};

	memcpy(a.bytes, &be, 4);
	return a;
}

struct sk_addr
sk_addr_from_v6(const uint8_t b[16])
{
	struct sk_addr a = {.family = SK_ADDR_V6};

	memcpy(a.bytes, b, 16);
	return a;
}

bool
sk_addr_eq(const struct sk_addr *a, const struct sk_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

bool
sk_addr_is_v4mapped(const struct sk_addr *a)
{
	return a->family == SK_ADDR_V6 &&
	       memcmp(a->bytes, v4mapped_head, sizeof(v4mapped_head)) == 0;
}

struct sk_addr
sk_addr_unmap(const struct sk_addr *a)
{
	struct sk_addr r = *a;

	if (sk_addr_is_v4mapped(a)) {
		memset(&r, 0, sizeof(r));
		r.family = SK_ADDR_V4;
		memcpy(r.bytes, a->bytes + 12, 4);
	}
	return r;
}

/* mask_from - clear every bit of @b (@nbytes bytes) from bit @bits on. */
static void
mask_from(uint8_t *b, size_t nbytes, unsigned bits)
{
	for (size_t i = 0; i < nbytes; i++) {
		if (bits >= 8 * (i + 1))
			continue;
		unsigned keep = bits > 8 * i ? bits - 8 * (unsigned)i : 0;

		b[i] &= (uint8_t)(0xff00u >> keep);
	}
}

struct sk_addr
sk_addr_key(const struct sk_addr *a, unsigned v6_prefix)
{
	struct sk_addr k = sk_addr_unmap(a);

	if (k.family == SK_ADDR_V6)
		mask_from(k.bytes, 16, v6_prefix > 128 ? 128 : v6_prefix);
	else if (k.family != SK_ADDR_V4)
		memset(&k, 0, sizeof(k));
	return k;
}

/* ------------------------------------------------------------------------ */
/* Prefixes                                                                  */
/* ------------------------------------------------------------------------ */

static unsigned
family_bits(uint8_t family)
{
	return family == SK_ADDR_V4 ? 32 : family == SK_ADDR_V6 ? 128 : 0;
}

enum sk_addr_error
sk_prefix_parse(const char *s, size_t len, struct sk_prefix *out)
{
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	enum sk_addr_error e;
	unsigned plen = 0;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return SK_ADDR_EEMPTY;
	if (len > PREFIX_TEXT_MAX)
		return SK_ADDR_ETOOLONG;
	e = sk_addr_parse(s, alen, &out->addr);
	if (e != SK_ADDR_OK)
		return e;
	if (slash == NULL) {
		plen = family_bits(out->addr.family);
	} else {
		const char *d = slash + 1;
		size_t dl = len - alen - 1;

		if (dl == 0 || dl > 3 || (dl > 1 && d[0] == '0'))
			goto bad_len;
		for (size_t i = 0; i < dl; i++) {
			if (d[i] < '0' || d[i] > '9')
				goto bad_len;
			plen = plen * 10 + (unsigned)(d[i] - '0');
		}
		if (plen > family_bits(out->addr.family))
			goto bad_len;
	}
	struct sk_addr masked = out->addr;

	mask_from(masked.bytes, sizeof(masked.bytes), plen);
	if (!sk_addr_eq(&masked, &out->addr)) {
		memset(out, 0, sizeof(*out));
		return SK_ADDR_EHOSTBITS;
	}
	out->len = (uint8_t)plen;
	if (plen >= 96 && sk_addr_is_v4mapped(&out->addr)) {
		out->addr = sk_addr_unmap(&out->addr);
		out->len = (uint8_t)(plen - 96);
	}
	return SK_ADDR_OK;

bad_len:
	memset(out, 0, sizeof(*out));
	return SK_ADDR_EPREFIX;
}

int
sk_prefix_format(const struct sk_prefix *p, char *buf, size_t cap)
{
	char tmp[SK_PREFIX_STRLEN + 8];
	int n;

	if (p->len > family_bits(p->addr.family))
		return -EINVAL;
	n = sk_addr_format(&p->addr, tmp, sizeof(tmp));
	if (n < 0)
		return n;
	n += sprintf(tmp + n, "/%u", p->len);
	return copy_out(tmp, n, buf, cap);
}

bool
sk_prefix_contains(const struct sk_prefix *p, const struct sk_addr *a)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (a->family != p->addr.family || a->family == SK_ADDR_NONE ||
	    p->len > family_bits(p->addr.family))
		return false;
	if (memcmp(a->bytes, p->addr.bytes, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t m = (uint8_t)(0xff00u >> rest);

	return (a->bytes[full] & m) == (p->addr.bytes[full] & m);
}

/* ------------------------------------------------------------------------ */
/* Prefix lists                                                              */
/* ------------------------------------------------------------------------ */

static bool
is_list_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

enum sk_addr_error
sk_prefix_list_parse(const char *s, struct sk_prefix_list *out, struct sk_prefix_list_error *where)
{
	size_t len = strlen(s), i = 0;
	uint32_t index = 0;

	out->n = 0;
	if (where != NULL)
		memset(where, 0, sizeof(*where));
	while (i < len) {
		size_t start;
		enum sk_addr_error e;

		while (i < len && is_list_sep(s[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && !is_list_sep(s[i]))
			i++;
		index++;
		if (out->n == SK_PREFIX_LIST_MAX)
			e = SK_ADDR_EFULL;
		else
			e = sk_prefix_parse(s + start, i - start, &out->p[out->n]);
		if (e != SK_ADDR_OK) {
			out->n = 0;
			if (where != NULL) {
				where->err = e;
				where->index = index;
				where->offset = (uint32_t)start;
				where->len = (uint32_t)(i - start);
			}
			return e;
		}
		out->n++;
	}
	return SK_ADDR_OK;
}

int
sk_prefix_list_strerror(const char *s, const struct sk_prefix_list_error *where, char *buf,
			size_t cap)
{
	size_t slen = strlen(s);
	size_t off = where->offset < slen ? where->offset : slen;
	size_t n = where->len < slen - off ? where->len : slen - off;
	int shown = n > 60 ? 60 : (int)n;

	return snprintf(buf, cap, "entry %u \"%.*s%s\": %s", where->index, shown, s + off,
			n > 60 ? "..." : "", sk_addr_strerror(where->err));
}

bool
sk_prefix_list_contains(const struct sk_prefix_list *l, const struct sk_addr *a)
{
	uint32_t n = l->n < SK_PREFIX_LIST_MAX ? l->n : SK_PREFIX_LIST_MAX;

	for (uint32_t i = 0; i < n; i++)
		if (sk_prefix_contains(&l->p[i], a))
			return true;
	return false;
}
