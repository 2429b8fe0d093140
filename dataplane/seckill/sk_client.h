/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Who the client is: the decisions the app makes about a connection or a
 * request behind a load balancer (PROXY protocol) or an HTTP proxy / CDN
 * (X-Forwarded-For, Forwarded), and the keys the buy path then uses. Plain
 * C over addr/, net/sk_proxy.h and http/sk_forwarded.h: no DPDK, no
 * allocation, no system call, no state beyond what the caller passes.
 *
 * PROXY listener (sk_client_proxy())
 * ----------------------------------
 * With a protocol set, the first bytes of every connection are read by
 * the PROXY parser before HTTP:
 *   - a trusted peer must send a header of the configured version: a
 *     relayed one gives the client (SK_CLIENT_OK); LOCAL and UNKNOWN keep
 *     the peer (SK_CLIENT_LOCAL: a health check of the proxy itself); none
 *     is SK_CLIENT_MISSING, a malformed one or one of the other version
 *     SK_CLIENT_BAD;
 *   - an untrusted peer that starts a header (its first bytes match a
 *     signature) is SK_CLIENT_UNTRUSTED: someone forges a client address;
 *   - an untrusted peer that sends anything else is served as itself
 *     (SK_CLIENT_DIRECT): it claims nothing, and monitoring may reach the
 *     port directly.
 * The caller refuses (closes) the three refusals and counts every verdict.
 *
 * Forwarded headers (sk_client_forwarded())
 * -----------------------------------------
 * The request head is scanned for the configured field's lines (at most
 * SK_CLIENT_FWD_LINES_MAX; more is SK_FWD_GARBAGE) and handed to
 * sk_forwarded_client() with the peer (the PROXY client when both are on).
 *
 * Keys (sk_client_rl_key(), sk_client_id_of())
 * --------------------------------------------
 * The per-IP rate limit keys on 32 bits: an IPv4 client is its address
 * (network order, as before); an IPv6 client is a 32-bit hash of its prefix
 * (sk_addr_key(addr, conf.ip6_prefix), /64 by default), so every address of
 * one prefix shares a bucket. An IPv6 key may equal an IPv4 address: those
 * two then share a bucket, as two addresses of one set already share its
 * overflow bucket. The order record keeps the client's address as it is,
 * of either family.
 *
 * Thread-safety: every function only reads its inputs (and writes @p out
 * and the caller's parser); safe from any thread on its own values.
 */
#ifndef SK_CLIENT_H
#define SK_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "sk_addr.h"
#include "sk_forwarded.h"
#include "sk_proxy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most field lines of the forwarded header read per request. */
#define SK_CLIENT_FWD_LINES_MAX 8

/** Who the client is: the [proxy] settings, as the app keeps them. */
struct sk_client_conf {
	uint8_t proxy;		       /**< 0 none, 1 PROXY v1, 2 PROXY v2 */
	uint8_t forwarded;	       /**< 0 none, 1 X-Forwarded-For, 2 Forwarded */
	struct sk_prefix_list trusted; /**< the proxies believed */
	uint8_t ip6_prefix;	       /**< ip_rate keys an IPv6 client on this prefix of its
					  address, 32..64 (the config's tcp.ip6_prefix) */
};

/** The verdict on a connection's first bytes (sk_client_proxy()). */
enum sk_client_verdict {
	SK_CLIENT_AGAIN = 0, /**< no verdict yet: call again with more bytes */
	SK_CLIENT_OK,	     /**< trusted peer, relayed: @c client is the client */
	SK_CLIENT_LOCAL,     /**< trusted peer, LOCAL or UNKNOWN: the peer is the client */
	SK_CLIENT_DIRECT,    /**< untrusted peer, no header: the peer is the client */
	SK_CLIENT_UNTRUSTED, /**< refuse: an untrusted peer sends a header */
	SK_CLIENT_MISSING,   /**< refuse: a trusted peer sends no header */
	SK_CLIENT_BAD,	     /**< refuse: a malformed header, or of the other version */
	SK_CLIENT_VERDICT_MAX
};

/** sk_client_refused - true for the verdicts that close the connection. */
static inline int
sk_client_refused(enum sk_client_verdict v)
{
	return v == SK_CLIENT_UNTRUSTED || v == SK_CLIENT_MISSING || v == SK_CLIENT_BAD;
}

/**
 * sk_client_proxy - decide a PROXY listener's connection from its first
 * bytes (see the file comment).
 * @param conf  the settings; conf->proxy must be 1 or 2
 * @param p     the connection's parser, sk_proxy_parser_init()ed at open
 * @param peer  the TCP peer
 * @param buf   every byte the connection received so far, from its first
 * @param len   bytes at @p buf
 * @param[out] client   on OK, LOCAL and DIRECT the client's address
 * @param[out] hdr_len  on OK and LOCAL the header's length (bytes to drop
 *                      before HTTP); 0 otherwise
 * @return one of enum sk_client_verdict (each described there).
 */
enum sk_client_verdict sk_client_proxy(const struct sk_client_conf *conf, struct sk_proxy_parser *p,
				       const struct sk_addr *peer, const uint8_t *buf, size_t len,
				       struct sk_addr *client, uint32_t *hdr_len);

/**
 * sk_client_forwarded - the client of one request from its forwarded
 * header lines (conf->forwarded must be 1 or 2).
 * @param head      the request head, from its first byte (request line)
 * @param head_len  its length (the parser's head_len)
 * @param peer      the TCP peer, or the client of the PROXY header
 * @param[out] client  the address to use, whatever the result
 * @return what sk_forwarded_client() said; SK_FWD_GARBAGE as well for more
 *         than SK_CLIENT_FWD_LINES_MAX field lines (then @p client is
 *         @p peer).
 */
enum sk_fwd_result sk_client_forwarded(const struct sk_client_conf *conf, const char *head,
				       size_t head_len, const struct sk_addr *peer,
				       struct sk_addr *client);

/** What the buy path keeps of a client: 24 bytes, for the connection's state. */
struct sk_client_id {
	struct sk_addr addr; /**< the client's address: what the order records */
	uint32_t key;	     /**< the per-IP rate limit key: sk_client_rl_key() */
};

/** sk_client_id_of - both keys of @p a; @p v6_prefix as for sk_client_rl_key(). */
static inline struct sk_client_id sk_client_id_of(const struct sk_addr *a, unsigned v6_prefix);

/**
 * sk_client_rl_key - the per-IP rate limit key of @p a: an IPv4 address
 * in network order, an IPv6 client's first @p v6_prefix bits
 * (sk_addr_key(), 64 in the default configuration) hashed to 32 bits
 * (FNV-1a), 0 for SK_ADDR_NONE.
 */
uint32_t sk_client_rl_key(const struct sk_addr *a, unsigned v6_prefix);

static inline struct sk_client_id
sk_client_id_of(const struct sk_addr *a, unsigned v6_prefix)
{
	struct sk_client_id id = {.addr = *a, .key = sk_client_rl_key(a, v6_prefix)};

	return id;
}

/** Counters of the decisions (monotonic; owned by one lcore, read by any). */
struct sk_client_stats {
	uint64_t proxy_ok;		  /**< PROXY headers taken: a relayed client */
	uint64_t proxy_local;		  /**< ... LOCAL or UNKNOWN: the peer kept */
	uint64_t proxy_direct;		  /**< untrusted peers served as themselves (no header) */
	uint64_t proxy_refused_untrusted; /**< refused: an untrusted peer sent a header */
	uint64_t proxy_missing;		  /**< refused: a trusted peer sent no header */
	uint64_t proxy_bad;		  /**< refused: a malformed header, or the other version */
	uint64_t forwarded_used;	  /**< requests whose client came from the header */
	uint64_t forwarded_ignored;	  /**< ... whose header came from an untrusted peer */
	uint64_t forwarded_bad;		  /**< ... whose header did not parse or had too many
					       hops: the peer was used */
};

/** sk_client_proxy_count - count verdict @p v (AGAIN: nothing) in @p st. */
void sk_client_proxy_count(struct sk_client_stats *st, enum sk_client_verdict v);

/**
 * sk_client_request - the keys of a request's client: @p peer's, or with
 * conf->forwarded on, those of sk_client_forwarded() (the result counted
 * in @p st: forwarded_used for CLIENT and OPAQUE, forwarded_ignored,
 * forwarded_bad for GARBAGE and TOO_MANY; PEER is not counted).
 * @param peer  the TCP peer, or the PROXY header's client
 */
struct sk_client_id sk_client_request(const struct sk_client_conf *conf, struct sk_client_stats *st,
				      const struct sk_addr *peer, const char *head,
				      size_t head_len);

/** sk_client_verdict_name - a short name for @p v (logs); "invalid" if unknown. */
const char *sk_client_verdict_name(enum sk_client_verdict v);

#ifdef __cplusplus
}
#endif

#endif /* SK_CLIENT_H */
