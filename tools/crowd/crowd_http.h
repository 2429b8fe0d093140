/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Client side of the front door's HTTP API, as seckill-crowd needs it: a
 * strict HTTP/1.x response parser and a small strict JSON scanner for the
 * answer bodies (design §4).
 *
 * Parser model
 * ------------
 * sk_crowd_resp_parse() is stateless: the caller keeps the bytes received so
 * far on a connection in one buffer and calls it again, from the first byte
 * of the response, every time more bytes arrive. The answers of the front
 * door are a few hundred bytes at most, so re-scanning a head costs less than
 * keeping parser state would. Nothing is copied: the body is returned as a
 * pointer into the caller's buffer.
 *
 * What is accepted (RFC 9112): `HTTP/1.0` and `HTTP/1.1` status lines with an
 * optional reason phrase; header fields `name: value` with token names and
 * optional whitespace; CRLF line ends only (a bare LF, obs-fold, a control
 * byte or an empty field name is an error). The body length comes from
 * Content-Length (repeated copies must agree). Transfer-Encoding is refused:
 * the front door never chunks, and a client that half-understands chunking is
 * worse than one that refuses it. 1xx, 204 and 304 answers have no body; any
 * other answer without Content-Length is refused as well (a close-delimited
 * body cannot be told apart from a truncated one).
 *
 * Thread-safety: no function here keeps state, allocates, locks or makes a
 * system call; any number of threads may call them at once.
 */
#ifndef SK_CROWD_HTTP_H
#define SK_CROWD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest response head accepted (status line + fields + final CRLF). */
#define SK_CROWD_HEAD_MAX 8192
/** Longest response body accepted (the front door's are < 200 bytes). */
#define SK_CROWD_BODY_MAX 4096

/** Result of sk_crowd_resp_parse(); the errors are dense from 2 on. */
enum sk_crowd_parse {
	SK_CROWD_PARSE_OK = 0,	    /**< one complete response; *out is filled */
	SK_CROWD_PARSE_AGAIN,	    /**< a valid prefix: call again with more bytes */
	SK_CROWD_PARSE_E_STATUS,    /**< bad status line (version, code, reason) */
	SK_CROWD_PARSE_E_FIELD,	    /**< bad header field line (name, bytes, line end) */
	SK_CROWD_PARSE_E_LENGTH,    /**< missing, malformed or conflicting Content-Length */
	SK_CROWD_PARSE_E_CHUNKED,   /**< Transfer-Encoding present (not supported) */
	SK_CROWD_PARSE_E_TOO_LARGE, /**< head > SK_CROWD_HEAD_MAX or body > SK_CROWD_BODY_MAX */
	SK_CROWD_PARSE__COUNT	    /**< number of values above */
};

/** One parsed response; pointers point into the buffer given to the parser. */
struct sk_crowd_resp {
	const char *body;     /**< first body byte (valid even if body_len is 0) */
	size_t body_len;      /**< body length (Content-Length) */
	size_t len;	      /**< bytes of this response: head + body */
	uint32_t retry_after; /**< Retry-After in seconds, if has_retry_after */
	uint16_t status;      /**< status code, 100..599 */
	uint8_t minor;	      /**< HTTP/1.minor: 0 or 1 */
	bool close;	      /**< the server closes the connection after this answer */
	bool has_retry_after; /**< a Retry-After field with delay-seconds was present */
};

/**
 * sk_crowd_resp_parse - parse the response at the start of @p buf.
 *
 * @param buf
 *   Bytes received on the connection, starting at the first byte of the
 *   response; need not be NUL-terminated.
 * @param len
 *   Number of bytes in @p buf (may include bytes of later responses).
 * @param[out] out
 *   On SK_CROWD_PARSE_OK, the response; unspecified otherwise.
 * @return
 *   SK_CROWD_PARSE_OK (out->len bytes form the response; a 1xx interim answer
 *   is returned like any other, the caller skips it), SK_CROWD_PARSE_AGAIN if
 *   @p buf holds a valid but incomplete prefix, or the first error found.
 *   Every prefix of a valid response returns SK_CROWD_PARSE_AGAIN.
 */
enum sk_crowd_parse sk_crowd_resp_parse(const char *buf, size_t len, struct sk_crowd_resp *out);

/** sk_crowd_parse_str - short stable name of a parse result ("ok", "status", ...). */
const char *sk_crowd_parse_str(enum sk_crowd_parse r);

/**
 * The values of the body's "status" field that seckill-crowd tells apart
 * (design §4); everything else is SK_CROWD_ST_OTHER. Dense, for counters.
 */
enum sk_crowd_status {
	SK_CROWD_ST_NONE = 0, /**< no "status" field */
	SK_CROWD_ST_QUEUED,
	SK_CROWD_ST_CONFIRMED,
	SK_CROWD_ST_PAID,
	SK_CROWD_ST_CANCELLED,
	SK_CROWD_ST_FAILED,
	SK_CROWD_ST_LIMIT,
	SK_CROWD_ST_SOLD_OUT,
	SK_CROWD_ST_NOT_STARTED,
	SK_CROWD_ST_ENDED,
	SK_CROWD_ST_BUSY,
	SK_CROWD_ST_UNAVAILABLE,
	SK_CROWD_ST_UNAUTHORIZED,
	SK_CROWD_ST_NOT_FOUND,
	SK_CROWD_ST_BAD_REQUEST,
	SK_CROWD_ST_OTHER, /**< a string not listed above */
	SK_CROWD_ST__COUNT
};

/** sk_crowd_status_str - the JSON spelling of @p st ("sold_out"); "none", "other". */
const char *sk_crowd_status_str(enum sk_crowd_status st);

/**
 * The fields of an answer body seckill-crowd reads. Only top-level members
 * are looked at; other members (and nested values) are validated and skipped.
 * An all-zero struct means "no field seen".
 */
struct sk_crowd_body {
	uint64_t order;		     /**< "order": u64 as a decimal string or integer, > 0 */
	uint64_t starts_in_ms;	     /**< "starts_in_ms": integer >= 0 */
	uint64_t remaining;	     /**< "remaining": integer >= 0 */
	uint64_t item;		     /**< "item": integer >= 0 */
	enum sk_crowd_status status; /**< "status" */
	char state[16];		     /**< "state" of an item, NUL-terminated, truncated to 15 */
	bool has_order;
	bool has_starts_in_ms;
	bool has_remaining;
	bool has_item;
	bool has_state;
	bool duplicate; /**< "duplicate": true */
};

/**
 * sk_crowd_body_scan - check that @p s is one JSON object (RFC 8259, nesting
 * at most 8 deep, optional whitespace around it) and extract its fields.
 *
 * Member names are compared byte for byte (a name written with escapes never
 * matches). A known member with the wrong type ("order":true, "duplicate":1,
 * "order":"12a", "order":"0"), or given twice, is an error; so is any
 * syntax error, including trailing bytes after the object.
 *
 * @param s
 *   The body bytes; need not be NUL-terminated.
 * @param len
 *   Their number.
 * @param[out] out
 *   Filled on success; unspecified on error.
 * @return
 *   0 on success, -EINVAL on any error.
 */
int sk_crowd_body_scan(const char *s, size_t len, struct sk_crowd_body *out);

#ifdef __cplusplus
}
#endif

#endif /* SK_CROWD_HTTP_H */
