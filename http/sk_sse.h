/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Server-Sent Events framing (the WHATWG "text/event-stream" format) for
 * the order events stream: the response head, one status event, the
 * keep-alive comment. Byte-exact, allocation-free, no printf: a push is
 * a few memcpy()s.
 *
 * The stream of one order (GET /v1/orders/{id}/events):
 *
 *     HTTP/1.1 200 OK
 *     Content-Type: text/event-stream
 *     Cache-Control: no-store
 *     Connection: close
 *
 *     event: status
 *     data: {"order":"<id>","status":"<name>"}
 *
 *     : ka
 *
 * No Content-Length: the server closes the connection after the last event.
 *
 * Thread-safety: every function is pure (writes only its output buffer).
 */
#ifndef SK_SSE_H
#define SK_SSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The response head of a stream (status line to the blank line). */
#define SK_SSE_HEAD                                                                                \
	"HTTP/1.1 200 OK\r\n"                                                                      \
	"Content-Type: text/event-stream\r\n"                                                      \
	"Cache-Control: no-store\r\n"                                                              \
	"Connection: close\r\n\r\n"
#define SK_SSE_HEAD_LEN (sizeof(SK_SSE_HEAD) - 1)

/** The keep-alive comment (a line starting with ':', ignored by clients). */
#define SK_SSE_KEEPALIVE     ": ka\n\n"
#define SK_SSE_KEEPALIVE_LEN (sizeof(SK_SSE_KEEPALIVE) - 1)

/** Longest status name sk_sse_event() takes (bytes). */
#define SK_SSE_NAME_MAX 16

/** Largest event sk_sse_event() writes: framing + 20 digits + the name. */
#define SK_SSE_EVENT_MAX                                                                           \
	(sizeof("event: status\ndata: {\"order\":\"\",\"status\":\"\"}\n\n") - 1 + 20 +            \
	 SK_SSE_NAME_MAX)

/**
 * sk_sse_event - write the status event of order @p order with status name
 * @p name (e.g. "queued") at @p out.
 * @param out   at least SK_SSE_EVENT_MAX bytes (not NUL-terminated)
 * @param order the order id (written in decimal, as a JSON string)
 * @param name  the status name: 1..SK_SSE_NAME_MAX bytes of [a-z_] (not
 *              escaped; the caller's names are constants)
 * @return the bytes written, or 0 if @p name is NULL, empty or too long.
 */
size_t sk_sse_event(char *out, uint64_t order, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* SK_SSE_H */
