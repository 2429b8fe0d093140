/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * HTTP/1.1 for seckill-loadgen: request templates, and what it adds to the
 * clients' response parser (sk_http_client.h).
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
 * the next on_data: the model of the clients' resumable, zero-copy parser
 * (sk_http_client.h), which the loadgen uses as it is. Here: the memo of the
 * last answer in front of it, and the order id of a buy answer.
 *
 * Thread-safety: nothing here locks, allocates or makes a system call; a
 * template set is read-only after lg_req_tmpl_init(); a memo belongs to one
 * loadgen (one lcore).
 */
#ifndef LG_HTTP_H
#define LG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowd_mix.h"
#include "sk_http_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ requests */

/** The request kinds (docs/api.md). Dense, for counters and mixes. */
enum lg_req_kind {
	LG_REQ_BUY = 0, /**< POST /v1/seckill/{item}, X-User-Id: {user} */
	LG_REQ_BUY_JWT, /**< POST /v1/seckill/{item}, Authorization: Bearer {token} */
	LG_REQ_ORDER,	/**< GET /v1/orders/{order} */
	LG_REQ_ITEM,	/**< GET /v1/items/{item} */
	LG_REQ_HEALTHZ, /**< GET /healthz */
	LG_REQ_CART,	/**< POST /v1/cart, X-User-Id: {user}, a cart of items item.. */
	LG_REQ__COUNT
};

/** lg_req_is_buy - whether @p k buys (a single item or a cart): its wins count. */
static inline bool
lg_req_is_buy(enum lg_req_kind k)
{
	return k == LG_REQ_BUY || k == LG_REQ_BUY_JWT || k == LG_REQ_CART;
}

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
	char cart_body[SK_CROWD_CART_BODY_MAX]; /**< LG_REQ_CART's body, after the CRLF */
	uint16_t cart_body_len;
};

/**
 * lg_req_tmpl_init - render the templates.
 *
 * @param t     [out] the template set.
 * @param host  Host header value (e.g. "198.18.0.1" or "198.18.0.1:8080");
 *              printable ASCII without blanks.
 * @param item  the item id of buys and item reads, the first item of a cart.
 * @param cart_lines  lines of a cart: items item .. item + cart_lines - 1,
 *              qty 1 each; 1..SK_CROWD_CART_LINES_MAX.
 * @return 0 (with no cart template, cart_body_len 0, when @p item is 0,
 *   @p cart_lines out of range or the items pass UINT32_MAX), or -EINVAL
 *   (NULL or bad @p host), -ENAMETOOLONG (@p host makes a template longer
 *   than LG_TMPL_PART_MAX).
 */
int lg_req_tmpl_init(struct lg_req_tmpl *t, const char *host, uint64_t item, unsigned cart_lines);

/**
 * lg_req_build - write one request of kind @p k into @p out.
 *
 * @param t      the templates.
 * @param k      the kind.
 * @param num    the user id (LG_REQ_BUY, LG_REQ_CART) or order id (LG_REQ_ORDER);
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

/** Bytes of the response lg_resp_memo keeps (a canned answer fits). */
#define LG_RESP_MEMO_MAX 256

/**
 * The last response parsed from its first byte, kept whole with its parse:
 * a flash-sale server sends the same answer again and again (sold out,
 * healthz, busy), and a response whose bytes are those is that response.
 * One per loadgen (not per connection); zero it to start.
 */
struct lg_resp_memo {
	uint32_t len;			   /**< bytes kept, 0 = none */
	struct sk_http_client_resp result; /**< the parse of those bytes (state DONE) */
	uint8_t bytes[LG_RESP_MEMO_MAX];
	uint64_t hits, misses; /**< lookups that matched / were parsed */
};

/**
 * lg_resp_parse_memo - sk_http_client_parse(), but a response that starts
 * at a fresh parser (r->off == 0) and repeats @p m's bytes exactly is
 * answered from @p m with one memcmp; a response parsed whole from a fresh
 * parser (and short enough) becomes @p m's. Same results, same errors as
 * sk_http_client_parse() (a hit is only ever a response that parsed DONE
 * before).
 */
enum sk_http_client_result lg_resp_parse_memo(struct lg_resp_memo *m, struct sk_http_client_resp *r,
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
