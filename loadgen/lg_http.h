/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * HTTP/1.1 for seckill-loadgen: request templates and a resumable,
 * zero-copy response parser.
 *
 * Requests
 * --------
 * Every request kind the load generator sends (docs/api.md) is rendered once,
 * at start-up, into a template: the fixed bytes before the one variable field
 * (user id, token, order id) and the fixed bytes after it. lg_req_build()
 * then writes a request with two memcpy()s and one number, no formatting.
 *
 * Responses
 * ---------
 * The TCP stack (sk_net.h) keeps every unconsumed byte of a connection in
 * one contiguous buffer and offers it again, followed by the newer bytes, at
 * the next on_data. The parser relies on that: it keeps in struct lg_resp how
 * far it has scanned and its state there, and resumes from that offset, so
 * no byte is scanned twice and nothing is copied. When a response is
 * complete, it lies whole at the start of the buffer (head and body), the
 * caller reads what it wants through offsets and consumes lg_resp.len bytes.
 *
 * What is accepted: `HTTP/1.0` or `HTTP/1.1`, a three-digit status, an
 * optional reason; header fields `token ":" OWS value OWS` ending in CRLF
 * (a bare LF, a control byte, obs-fold or an empty name is an error). The
 * body length is Content-Length (copies must agree); 1xx, 204 and 304 have
 * no body; Transfer-Encoding and a missing Content-Length are refused (the
 * front door never sends either). `Connection: close` (a token of the
 * field's comma list, any case) and HTTP/1.0 without `keep-alive` set
 * lg_resp.close.
 *
 * Thread-safety: nothing here locks, allocates or makes a system call; a
 * template set is read-only after lg_req_tmpl_init(); a struct lg_resp
 * belongs to one connection.
 */
#ifndef LG_HTTP_H
#define LG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest response head accepted (status line, fields, final CRLF). */
#define LG_RESP_HEAD_MAX 8192
/** Longest response body accepted (the front door's are < 200 bytes). */
#define LG_RESP_BODY_MAX 4096

/* ------------------------------------------------------------ requests */

/** The request kinds (docs/api.md). Dense, for counters and mixes. */
enum lg_req_kind {
	LG_REQ_BUY = 0, /**< POST /v1/seckill/{item}, X-User-Id: {user} */
	LG_REQ_BUY_JWT, /**< POST /v1/seckill/{item}, Authorization: Bearer {token} */
	LG_REQ_ORDER,	/**< GET /v1/orders/{order} */
	LG_REQ_ITEM,	/**< GET /v1/items/{item} */
	LG_REQ_HEALTHZ, /**< GET /healthz */
	LG_REQ__COUNT
};

/** lg_req_kind_str - the name of @p k in --mix and in the JSON ("buy_jwt"). */
const char *lg_req_kind_str(enum lg_req_kind k);

/**
 * lg_req_kind_parse - the kind named @p name (@p len bytes).
 * @return the kind, or -1 if no kind has that name.
 */
int lg_req_kind_parse(const char *name, size_t len);

/** Room for the fixed parts of one template. */
#define LG_TMPL_PART_MAX 256
/** Longest request lg_req_build() writes (a 1024-byte token fits). */
#define LG_REQ_MAX 2048

/** One pre-rendered request: head | variable | tail [| "Connection: close"] | CRLF. */
struct lg_tmpl {
	char head[LG_TMPL_PART_MAX]; /**< request line and fields before the variable */
	char tail[LG_TMPL_PART_MAX]; /**< bytes after it, up to the last field's CRLF */
	uint16_t head_len;
	uint16_t tail_len;
	bool has_var; /**< false: nothing between head and tail */
};

/** The templates of every kind, for one server and item. */
struct lg_req_tmpl {
	struct lg_tmpl kind[LG_REQ__COUNT];
};

/**
 * lg_req_tmpl_init - render the templates.
 *
 * @param t     [out] the template set.
 * @param host  Host header value (e.g. "198.18.0.1" or "198.18.0.1:8080");
 *              printable ASCII without blanks.
 * @param item  the item id of buys and item reads.
 * @return 0, or -EINVAL (NULL or bad @p host), -ENAMETOOLONG (@p host makes
 *   a template longer than LG_TMPL_PART_MAX).
 */
int lg_req_tmpl_init(struct lg_req_tmpl *t, const char *host, uint64_t item);

/**
 * lg_req_build - write one request of kind @p k into @p out.
 *
 * @param t      the templates.
 * @param k      the kind.
 * @param num    the user id (LG_REQ_BUY) or order id (LG_REQ_ORDER);
 *               ignored by the other kinds.
 * @param tok    the token of LG_REQ_BUY_JWT (@p tok_len bytes, not
 *               NUL-terminated); ignored by the other kinds.
 * @param tok_len  its length.
 * @param close  add `Connection: close` (the last request of a connection).
 * @param out    [out] buffer of at least LG_REQ_MAX bytes.
 * @return the request length (> 0), or 0 if @p tok_len is too long.
 */
size_t lg_req_build(const struct lg_req_tmpl *t, enum lg_req_kind k, uint64_t num, const char *tok,
		    size_t tok_len, bool close, char *out);

/* ----------------------------------------------------------- responses */

/** Result of lg_resp_parse(); the errors are dense from 2 on. */
enum lg_resp_result {
	LG_RESP_DONE = 0,    /**< a complete response lies at the buffer start */
	LG_RESP_AGAIN,	     /**< a valid prefix: call again with more bytes */
	LG_RESP_E_STATUS,    /**< bad status line */
	LG_RESP_E_FIELD,     /**< bad header field line */
	LG_RESP_E_LENGTH,    /**< missing, malformed or conflicting Content-Length */
	LG_RESP_E_CHUNKED,   /**< Transfer-Encoding present (not supported) */
	LG_RESP_E_TOO_LARGE, /**< head > LG_RESP_HEAD_MAX or body > LG_RESP_BODY_MAX */
	LG_RESP__COUNT
};

/** lg_resp_result_str - short stable name of @p r ("done", "again", "status", ...). */
const char *lg_resp_result_str(enum lg_resp_result r);

/**
 * Parse state and result of one response. An all-zero struct is a parser at
 * the first byte of a response (lg_resp_reset() makes one). 28 bytes, meant
 * to live in the connection's app area.
 */
struct lg_resp {
	uint32_t off;		/**< bytes of the buffer scanned so far */
	uint32_t head_len;	/**< on DONE: bytes of the head (the body starts here) */
	uint32_t content_len;	/**< Content-Length (body length on DONE) */
	uint32_t len;		/**< on DONE: head + body, the bytes to consume */
	uint32_t acc;		/**< internal: the Content-Length being read */
	uint16_t status;	/**< status code 100..599 once the status line is read */
	uint8_t state;		/**< internal */
	uint8_t sub;		/**< internal: position inside the current token */
	uint8_t field;		/**< internal: which field is being read */
	uint8_t minor : 1;	/**< HTTP/1.minor */
	uint8_t close : 1;	/**< the server closes the connection after this response */
	uint8_t has_len : 1;	/**< a Content-Length was seen */
	uint8_t keep_alive : 1; /**< internal: Connection: keep-alive seen */
	uint8_t tok_bad : 1;	/**< internal: the current Connection token matches nothing */
};

/** lg_resp_reset - make @p r a parser at the first byte of the next response. */
static inline void
lg_resp_reset(struct lg_resp *r)
{
	*r = (struct lg_resp){0};
}

/**
 * lg_resp_parse - scan the response at the start of @p buf from where the
 * previous call on @p r stopped.
 *
 * @param r    parser state (see lg_resp_reset()); updated.
 * @param buf  the unconsumed bytes of the connection, starting with the
 *             response's first byte; the first r->off bytes must be the ones
 *             the previous calls saw. Need not be NUL-terminated.
 * @param len  bytes in @p buf (may include later responses: they are not read).
 * @return LG_RESP_DONE (r->len bytes form the response; r->status,
 *   r->close, r->head_len and r->content_len are set), LG_RESP_AGAIN (every
 *   byte was a valid prefix: call again once more bytes arrived), or the
 *   first error found (the connection is beyond repair: drop it). After an
 *   error, further calls return the same error.
 */
enum lg_resp_result lg_resp_parse(struct lg_resp *r, const uint8_t *buf, size_t len);

/** Bytes of the response lg_resp_memo keeps (a canned answer fits). */
#define LG_RESP_MEMO_MAX 256

/**
 * The last response parsed from its first byte, kept whole with its parse:
 * a flash-sale server sends the same answer again and again (sold out,
 * healthz, busy), and a response whose bytes are those is that response.
 * One per loadgen (not per connection); zero it to start.
 */
struct lg_resp_memo {
	uint32_t len;	       /**< bytes kept, 0 = none */
	struct lg_resp result; /**< the parse of those bytes (state DONE) */
	uint8_t bytes[LG_RESP_MEMO_MAX];
	uint64_t hits, misses; /**< lookups that matched / were parsed */
};

/**
 * lg_resp_parse_memo - lg_resp_parse(), but a response that starts at a
 * fresh parser (r->off == 0) and repeats @p m's bytes exactly is answered
 * from @p m with one memcmp; a response parsed whole from a fresh parser
 * (and short enough) becomes @p m's. Same results, same errors as
 * lg_resp_parse() (a hit is only ever a response that parsed DONE before).
 */
enum lg_resp_result lg_resp_parse_memo(struct lg_resp_memo *m, struct lg_resp *r,
				       const uint8_t *buf, size_t len);

/**
 * lg_resp_order - the order id of a buy answer's body (`"order":"<u64>"`),
 * found by a plain scan of @p body.
 * @return the id, or 0 if the body has none.
 */
uint64_t lg_resp_order(const uint8_t *body, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LG_HTTP_H */
