/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The client side of HTTP/1.1: a resumable, zero-copy response parser,
 * shared by seckill-loadgen (bytes from the project's TCP stack over DPDK)
 * and seckill-crowd (bytes from kernel sockets). It knows neither: it reads
 * byte spans, nothing else.
 *
 * Model
 * -----
 * The caller keeps the unconsumed bytes of a connection in one contiguous
 * buffer that starts at the first byte of the response being read, and
 * offers it again, longer, when more bytes arrived (the TCP stack does that
 * by itself; a socket reader appends to its buffer and moves the rest to the
 * front after consuming a response). The parser keeps in struct
 * sk_http_client_resp how far it has scanned and its state there, and
 * resumes from that offset: no byte is scanned twice, nothing is copied.
 * When a response is complete, it lies whole at the start of the buffer:
 * the head is [0, head_len), the body [head_len, len); the caller consumes
 * len bytes and resets the parser for the next response (pipelined
 * responses after it are not read).
 *
 * What is accepted (RFC 9112): `HTTP/1.0` or `HTTP/1.1`, a three-digit
 * status 100..599, an optional reason (the SP before an empty reason may be
 * missing); header fields `token ":" OWS value OWS` ending in CRLF (a bare
 * LF, a control byte, obs-fold or an empty name is an error). The body
 * length is Content-Length (copies must agree); 1xx, 204 and 304 have no
 * body. Transfer-Encoding and a missing Content-Length are refused: the
 * front door never sends either, and a close-delimited body cannot be told
 * from a truncated one. `Connection: close` (a token of the field's comma
 * list, any case) and HTTP/1.0 without `keep-alive` set close.
 * `Retry-After` in delay-seconds is reported; an HTTP-date is ignored.
 *
 * Thread-safety: nothing here locks, allocates or makes a system call; a
 * struct sk_http_client_resp belongs to one connection (one thread).
 */
#ifndef SK_HTTP_CLIENT_H
#define SK_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest response head accepted (status line, fields, final CRLF). */
#define SK_HTTP_CLIENT_HEAD_MAX 8192
/** Longest response body accepted (the front door's are < 200 bytes). */
#define SK_HTTP_CLIENT_BODY_MAX 4096

/** Result of sk_http_client_parse(); the errors are dense from 2 on. */
enum sk_http_client_result {
	SK_HTTP_CLIENT_DONE = 0,    /**< a complete response lies at the buffer start */
	SK_HTTP_CLIENT_AGAIN,	    /**< a valid prefix: call again with more bytes */
	SK_HTTP_CLIENT_E_STATUS,    /**< bad status line (version, code, reason) */
	SK_HTTP_CLIENT_E_FIELD,	    /**< bad header field line (name, bytes, line end) */
	SK_HTTP_CLIENT_E_LENGTH,    /**< missing, malformed or conflicting Content-Length */
	SK_HTTP_CLIENT_E_CHUNKED,   /**< Transfer-Encoding present (not supported) */
	SK_HTTP_CLIENT_E_TOO_LARGE, /**< head > HEAD_MAX or Content-Length > BODY_MAX */
	SK_HTTP_CLIENT__COUNT	    /**< number of values above */
};

/**
 * sk_http_client_result_str - short stable name of @p r ("done", "again",
 * "status", "field", "length", "chunked", "too_large"; "?" if out of range).
 */
const char *sk_http_client_result_str(enum sk_http_client_result r);

/**
 * Parse state and result of one response. An all-zero struct is a parser at
 * the first byte of a response (sk_http_client_reset() makes one). 32
 * bytes, meant to live in the connection's state.
 */
struct sk_http_client_resp {
	uint32_t off;		     /**< bytes of the buffer scanned so far */
	uint32_t head_len;	     /**< on DONE: bytes of the head (the body starts here) */
	uint32_t content_len;	     /**< on DONE: the body length */
	uint32_t len;		     /**< on DONE: head + body, the bytes to consume */
	uint32_t acc;		     /**< internal: the number being read */
	uint32_t retry_after;	     /**< Retry-After seconds (saturated), if has_retry_after */
	uint16_t status;	     /**< status code 100..599 once the status line is read */
	uint8_t state;		     /**< internal */
	uint8_t sub;		     /**< internal: position inside the current token */
	uint8_t field;		     /**< internal: which field is being read */
	uint8_t minor : 1;	     /**< HTTP/1.minor */
	uint8_t close : 1;	     /**< the server closes the connection after this response */
	uint8_t has_len : 1;	     /**< a Content-Length was seen */
	uint8_t has_retry_after : 1; /**< a Retry-After in delay-seconds was seen */
	uint8_t keep_alive : 1;	     /**< internal: Connection: keep-alive seen */
	uint8_t tok_bad : 1;	     /**< internal: the Connection token matches nothing */
};

/** sk_http_client_reset - make @p r a parser at the first byte of the next response. */
static inline void
sk_http_client_reset(struct sk_http_client_resp *r)
{
	*r = (struct sk_http_client_resp){0};
}

/**
 * sk_http_client_parse - scan the response at the start of @p buf from
 * where the previous call on @p r stopped.
 *
 * @param r    parser state (see sk_http_client_reset()); updated.
 * @param buf  the unconsumed bytes of the connection, starting with the
 *             response's first byte; the first r->off bytes must be the ones
 *             the previous calls saw. Need not be NUL-terminated; no byte at
 *             or after buf + len is read.
 * @param len  bytes in @p buf (may include later responses: they are not read).
 * @return SK_HTTP_CLIENT_DONE (r->len bytes form the response; status,
 *   close, head_len, content_len and the Retry-After fields are set; a 1xx
 *   interim answer is returned like any other, the caller skips it),
 *   SK_HTTP_CLIENT_AGAIN (every byte was a valid prefix: call again once more
 *   bytes arrived), or the first error found (the connection is beyond
 *   repair: drop it). After an error, further calls return the same error;
 *   after DONE, the same DONE.
 */
enum sk_http_client_result sk_http_client_parse(struct sk_http_client_resp *r, const void *buf,
						size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SK_HTTP_CLIENT_H */
