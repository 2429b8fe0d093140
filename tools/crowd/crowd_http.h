/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Client side of the front door's HTTP API, as seckill-crowd needs it: a
 * small strict JSON scanner for the answer bodies (design §4).
 *
 * The responses around the bodies are parsed by the clients' resumable
 * parser (sk_http_client.h), shared with seckill-loadgen.
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
	SK_CROWD_ST_DUPLICATE,	  /**< a cart naming an item the user holds (409) */
	SK_CROWD_ST_SHORT,	  /**< a cart line asking more than is left */
	SK_CROWD_ST_GATE,	  /**< 403: the item requires the token's gate claim */
	SK_CROWD_ST_NOT_RESERVED, /**< 403: the item sells to its reserved users only */
	SK_CROWD_ST_OTHER,	  /**< a string not listed above */
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
