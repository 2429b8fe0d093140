/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_cclass.h - private to http/: the byte classes of HTTP/1.1 that
 * the request parser (sk_http_parse.c, sk_http_fields.c) and the clients'
 * response parser (sk_http_client.c) share. Static inline so that the
 * per-byte loops stay free of calls. Not for other folders.
 */
#ifndef SK_HTTP_CCLASS_H
#define SK_HTTP_CCLASS_H

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Character classes                                                         */
/* ------------------------------------------------------------------------ */

enum {
	C_TCHAR = 1 << 0,  /* token character (RFC 9110 5.6.2) */
	C_TARGET = 1 << 1, /* origin-form byte other than '%' (pchar / "/" / "?") */
	C_VALUE = 1 << 2,  /* field-value byte: VCHAR, obs-text, SP, HTAB */
	C_HEX = 1 << 3,	   /* hex digit */
	C_HOST = 1 << 4,   /* Host value byte: reg-name, IP-literal, port */
};

/* Built at compile time with designated initialisers (GNU ranges). */
static const uint8_t cclass[256] = {
	['0' ... '9'] = C_TCHAR | C_TARGET | C_VALUE | C_HEX | C_HOST,
	['A' ... 'F'] = C_TCHAR | C_TARGET | C_VALUE | C_HEX | C_HOST,
	['a' ... 'f'] = C_TCHAR | C_TARGET | C_VALUE | C_HEX | C_HOST,
	['G' ... 'Z'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['g' ... 'z'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	/* tchar-only punctuation */
	['#'] = C_TCHAR | C_VALUE,
	['^'] = C_TCHAR | C_VALUE,
	['`'] = C_TCHAR | C_VALUE,
	['|'] = C_TCHAR | C_VALUE,
	/* unreserved: tchar and target */
	['-'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['.'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['_'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['~'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	/* sub-delims that are also tchar */
	['!'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['$'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['&'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['\''] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['*'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	['+'] = C_TCHAR | C_TARGET | C_VALUE | C_HOST,
	/* '%' is a tchar; in a target it starts an escape (handled apart) */
	['%'] = C_TCHAR | C_VALUE | C_HOST,
	/* sub-delims that are not tchar */
	['('] = C_TARGET | C_VALUE | C_HOST,
	[')'] = C_TARGET | C_VALUE | C_HOST,
	[','] = C_TARGET | C_VALUE | C_HOST,
	[';'] = C_TARGET | C_VALUE | C_HOST,
	['='] = C_TARGET | C_VALUE | C_HOST,
	/* gen-delims allowed in origin-form */
	[':'] = C_TARGET | C_VALUE | C_HOST,
	['@'] = C_TARGET | C_VALUE,
	['/'] = C_TARGET | C_VALUE,
	['?'] = C_TARGET | C_VALUE,
	/* IP-literal brackets (Host only) */
	['['] = C_VALUE | C_HOST,
	[']'] = C_VALUE | C_HOST,
	/* the rest of VCHAR */
	['"'] = C_VALUE,
	['<'] = C_VALUE,
	['>'] = C_VALUE,
	['\\'] = C_VALUE,
	['{'] = C_VALUE,
	['}'] = C_VALUE,
	[' '] = C_VALUE,
	['\t'] = C_VALUE,
	[0x80 ... 0xff] = C_VALUE, /* obs-text */
};

static inline bool
is_class(uint8_t c, unsigned cls)
{
	return (cclass[c] & cls) != 0;
}

static inline uint8_t
lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

#endif /* SK_HTTP_CCLASS_H */
