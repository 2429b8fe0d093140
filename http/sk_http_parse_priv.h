/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_parse_priv.h - private to the request parser: what its two files
 * share. sk_http_parse.c is the byte-level state machine (request line,
 * field line syntax, end of head, body wait); sk_http_fields.c gives the
 * few fields the appliance reads their meaning, once per complete field
 * line. Not for other folders: sk_http.h is the interface.
 *
 * The character class table and its helpers are static inline here so that
 * the per-byte loops of the state machine stay free of calls.
 */
#ifndef SK_HTTP_PARSE_PRIV_H
#define SK_HTTP_PARSE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_http.h"

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

/* ------------------------------------------------------------------------ */
/* State and flags (struct sk_http_parser::state, ::flags)                   */
/* ------------------------------------------------------------------------ */

enum {
	ST_START = 0, /* before the request line; empty lines are skipped */
	ST_START_LF,  /* CR of an empty line seen */
	ST_METHOD,    /* in the method token */
	ST_TARGET0,   /* first byte of the target */
	ST_SCHEME,    /* absolute-form: in "http://" or "https://" */
	ST_AUTHORITY, /* absolute-form: in host[:port] */
	ST_TARGET,    /* in the path and query */
	ST_VERSION,   /* in "HTTP/x.y" or its CR/LF */
	ST_RL_LF,     /* CR after the version seen */
	ST_FIELD,     /* at the start of a field line (or of the final CRLF) */
	ST_NAME,      /* in a field name */
	ST_VALUE,     /* after the colon: OWS, value, OWS */
	ST_FIELD_LF,  /* CR after a field value seen */
	ST_HEAD_LF,   /* CR of the final empty line seen */
	ST_BODY,      /* head complete, waiting for the body */
	ST_FINAL,     /* result is final (DONE or an error); see p->result */
};

enum {
	F_HOST = 1 << 0,
	F_AUTH = 1 << 1,
	F_UID = 1 << 2,
	F_CL = 1 << 3,
	F_TE = 1 << 4,
	F_TE_CHUNKED = 1 << 5, /* last transfer coding seen is "chunked" */
	F_CLOSE = 1 << 6,
	F_KEEPALIVE = 1 << 7,
	F_EXPECT = 1 << 8,
	F_QUERY = 1 << 9,     /* a '?' was seen: path_len is set */
	F_ABSOLUTE = 1 << 10, /* absolute-form target: host_off/len is its authority */
};

/*
 * sk_http_field_line - interpret the complete field line [p->line, vend) of
 * @buf: name up to p->colon, value after it (OWS trimmed). Only the fields
 * the appliance cares about are looked at (Host, Expect, X-User-Id,
 * Connection, Authorization, Content-Length, Transfer-Encoding); the state
 * machine already checked every byte's syntax. Records offsets and flags in
 * @p. Returns SK_HTTP_DONE, or the refusal: SK_HTTP_E_HOST,
 * SK_HTTP_E_DUPLICATE, SK_HTTP_E_FRAMING.
 */
enum sk_http_result sk_http_field_line(struct sk_http_parser *p, const uint8_t *buf, size_t vend);

#endif /* SK_HTTP_PARSE_PRIV_H */
