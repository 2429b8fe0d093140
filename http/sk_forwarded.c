/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_forwarded.c - the client address from X-Forwarded-For / Forwarded,
 * walking from the trusted peer leftwards (sk_forwarded.h).
 *
 * Elements are found from the right end of each value: for Forwarded the
 * backward scan knows quoted strings (a '"' closes a string unless an odd
 * run of backslashes precedes it), so a comma inside a quoted value does
 * not split an element. Each element found is then read forwards, strictly.
 * What lies left of the client is never scanned.
 */
#include <string.h>
#include <strings.h>

#include "sk_forwarded.h"
#include "sk_http_cclass.h"

/* The longest for= value kept once unquoted: "[" IPv6 "]:" port, with room. */
#define NODE_MAX 64

static const char *const result_names[SK_FWD_RESULT_MAX] = {
	[SK_FWD_CLIENT] = "client from the header",
	[SK_FWD_PEER] = "no forwarded address: the peer",
	[SK_FWD_IGNORED] = "header from an untrusted peer ignored",
	[SK_FWD_OPAQUE] = "client hidden (unknown or obfuscated)",
	[SK_FWD_GARBAGE] = "malformed forwarded header",
	[SK_FWD_TOO_MANY] = "too many forwarded hops",
};

const char *
sk_forwarded_strerror(enum sk_fwd_result r)
{
	if ((unsigned)r >= SK_FWD_RESULT_MAX)
		return "invalid result";
	return result_names[r];
}

/* What one element says. */
enum node_type {
	NODE_ADDR,    /* an address (and maybe a port) */
	NODE_OPAQUE,  /* unknown, obfuscated, or no for= */
	NODE_GARBAGE, /* does not parse */
};

struct node {
	struct sk_addr addr;
	uint16_t port;
};

static bool
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static bool
is_tchar(char c)
{
	return cclass[(uint8_t)c] & C_TCHAR;
}

/* ci_eq - the @n bytes at @s are @lit in any case (ASCII). */
static bool
ci_eq(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && strncasecmp(s, lit, n) == 0;
}

/* is_obf - "_" 1*(ALPHA / DIGIT / "." / "_" / "-"), RFC 7239 obfnode. */
static bool
is_obf(const char *s, size_t n)
{
	if (n < 2 || s[0] != '_')
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* parse_port - a port (sk_addr_port_parse()), or an obfuscated one (0)
 * when @obf. */
static bool
parse_port(const char *s, size_t n, bool obf, uint16_t *out)
{
	*out = 0;
	if (obf && is_obf(s, n))
		return true;
	return sk_addr_port_parse(s, n, out);
}

/*
 * parse_node - an address with an optional port: IPv4[:port],
 * [IPv6][:port], "unknown"; with @xff a bare IPv6 too, else (Forwarded)
 * obfuscated nodes and ports.
 */
static enum node_type
parse_node(const char *s, size_t n, bool xff, struct node *out)
{
	const char *a = s, *port = NULL;
	size_t alen = n, plen = 0;
	uint8_t family = SK_ADDR_V4;

	if (ci_eq(s, n, "unknown") || (!xff && is_obf(s, n)))
		return NODE_OPAQUE;
	if (n > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (close == NULL)
			return NODE_GARBAGE;
		a = s + 1;
		alen = (size_t)(close - a);
		family = SK_ADDR_V6;
		if (close + 1 < s + n) {
			if (close[1] != ':')
				return NODE_GARBAGE;
			port = close + 2;
			plen = (size_t)(s + n - port);
		}
	} else {
		const char *colon = memchr(s, ':', n);

		if (colon != NULL && xff && memchr(colon + 1, ':', (size_t)(s + n - colon - 1))) {
			family = SK_ADDR_V6; /* a bare IPv6 address */
		} else if (colon != NULL) {
			alen = (size_t)(colon - s);
			port = colon + 1;
			plen = (size_t)(s + n - port);
			/* "unknown:port", "_obf:port": a node that names no address */
			if (ci_eq(s, alen, "unknown") || (!xff && is_obf(s, alen)))
				return parse_port(port, plen, !xff, &out->port) ? NODE_OPAQUE
										: NODE_GARBAGE;
		}
	}
	if (sk_addr_parse(a, alen, &out->addr) != SK_ADDR_OK || out->addr.family != family)
		return NODE_GARBAGE;
	if (port != NULL && !parse_port(port, plen, !xff, &out->port))
		return NODE_GARBAGE;
	out->addr = sk_addr_unmap(&out->addr);
	return NODE_ADDR;
}

/*
 * parse_forwarded_element - one Forwarded element s[0..n), OWS trimmed:
 * pairs separated by ';', each name=value (token or quoted-string); the
 * node of its for= pair.
 */
static enum node_type
parse_forwarded_element(const char *s, size_t n, struct node *out)
{
	char node[NODE_MAX];
	size_t node_len = 0, i = 0;
	bool have_for = false;

	while (i < n) {
		size_t name, name_len, vlen = 0;
		bool is_for;

		while (i < n && is_ows(s[i]))
			i++;
		if (i == n)
			break;
		if (s[i] == ';') {
			i++;
			continue;
		}
		name = i;
		while (i < n && is_tchar(s[i]))
			i++;
		name_len = i - name;
		if (name_len == 0 || i == n || s[i] != '=')
			return NODE_GARBAGE;
		i++;
		is_for = ci_eq(s + name, name_len, "for");
		if (is_for && have_for)
			return NODE_GARBAGE; /* at most once per element */
		if (i < n && s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++) {
				char c = s[i];

				if (c == '\\') {
					if (++i == n)
						return NODE_GARBAGE;
					c = s[i];
				}
				if (!(cclass[(uint8_t)c] & C_VALUE))
					return NODE_GARBAGE;
				if (is_for && vlen == NODE_MAX)
					return NODE_GARBAGE;
				if (is_for)
					node[vlen] = c;
				vlen++;
			}
			if (i == n)
				return NODE_GARBAGE; /* unterminated */
			i++;
		} else {
			size_t v = i;

			while (i < n && is_tchar(s[i]))
				i++;
			vlen = i - v;
			if (vlen == 0 || (is_for && vlen > NODE_MAX))
				return NODE_GARBAGE;
			if (is_for)
				memcpy(node, s + v, vlen);
		}
		if (is_for) {
			have_for = true;
			node_len = vlen;
		}
		while (i < n && is_ows(s[i]))
			i++;
		if (i < n && s[i] != ';')
			return NODE_GARBAGE;
	}
	if (!have_for)
		return NODE_OPAQUE;
	return parse_node(node, node_len, false, out);
}

/*
 * element_start - where the element that ends at @end (exclusive) begins:
 * after the nearest ',' to its left that is outside a quoted string (when
 * @quotes), or 0.
 */
static size_t
element_start(const char *v, size_t end, bool quotes)
{
	bool in_quotes = false;
	size_t i;

	for (i = end; i > 0; i--) {
		char c = v[i - 1];

		if (quotes && c == '"') {
			size_t bs = 0;

			while (bs < i - 1 && v[i - 2 - bs] == '\\')
				bs++;
			if (!in_quotes)
				in_quotes = true;
			else if (bs % 2 == 0)
				in_quotes = false;
		} else if (c == ',' && !in_quotes) {
			break;
		}
	}
	return i;
}

enum sk_fwd_result
sk_forwarded_client(enum sk_fwd_kind kind, const struct sk_fwd_value *values, size_t nvalues,
		    const struct sk_addr *peer, const struct sk_prefix_list *trusted,
		    struct sk_fwd_client *out)
{
	bool xff = kind == SK_FWD_XFF;
	struct sk_addr peer_c = sk_addr_unmap(peer);
	struct sk_addr last = peer_c; /* the nearest trusted hop so far */

	memset(out, 0, sizeof(*out));
	out->addr = peer_c;
	if (!sk_prefix_list_contains(trusted, &peer_c))
		return nvalues > 0 ? SK_FWD_IGNORED : SK_FWD_PEER;
	for (size_t vi = nvalues; vi-- > 0;) {
		const char *v = values[vi].p;
		size_t end = values[vi].len;

		for (;;) {
			size_t start = element_start(v, end, !xff), s = start, e = end;
			struct node node = {0};
			enum node_type t;

			while (s < e && is_ows(v[s]))
				s++;
			while (e > s && is_ows(v[e - 1]))
				e--;
			if (s < e) {
				if (out->hops == SK_FWD_HOPS_MAX) {
					out->addr = peer_c;
					out->port = 0;
					return SK_FWD_TOO_MANY;
				}
				out->hops++;
				t = xff ? parse_node(v + s, e - s, true, &node)
					: parse_forwarded_element(v + s, e - s, &node);
				if (t == NODE_GARBAGE) {
					out->addr = peer_c;
					out->port = 0;
					return SK_FWD_GARBAGE;
				}
				if (t == NODE_OPAQUE) {
					out->addr = last;
					out->port = 0;
					return SK_FWD_OPAQUE;
				}
				out->addr = node.addr;
				out->port = node.port;
				if (!sk_prefix_list_contains(trusted, &node.addr))
					return SK_FWD_CLIENT;
				last = node.addr;
			}
			if (start == 0)
				break;
			end = start - 1; /* before the ',' */
		}
	}
	/* every element trusted: the leftmost is the client */
	return out->hops > 0 ? SK_FWD_CLIENT : SK_FWD_PEER;
}
