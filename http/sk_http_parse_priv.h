/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_parse_priv.h - private to the request parser: what its two files
 * share. sk_http_parse.c is the byte-level state machine (request line,
 * field line syntax, end of head, body wait); sk_http_fields.c gives the
 * few fields the appliance reads their meaning, once per complete field
 * line. Not for other folders: sk_http.h is the interface.
 *
 * The character class table (sk_http_cclass.h, shared with the clients'
 * response parser) and its helpers are static inline so that the per-byte
 * loops of the state machine stay free of calls.
 */
#ifndef SK_HTTP_PARSE_PRIV_H
#define SK_HTTP_PARSE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_http.h"
#include "sk_http_cclass.h"

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
	F_CTYPE = 1 << 11,    /* a Content-Type was seen: ctype_off/len */
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
