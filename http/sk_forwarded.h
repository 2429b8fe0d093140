/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The client behind HTTP proxies: X-Forwarded-For and Forwarded (RFC 7239)
 * read only as far as the operator's trusted proxies vouch for them.
 *
 * The rule
 * --------
 * Each proxy appends the address it received the request from, so the
 * list reads client, proxy1, proxy2, ... and the TCP peer is the last
 * proxy. Anyone may write anything at the left; only what a trusted proxy
 * appended can be believed. So sk_forwarded_client():
 *   1. ignores the headers when the peer itself is not trusted
 *      (SK_FWD_IGNORED: the peer is the client; callers count these);
 *   2. else walks the elements from the right, over every value in order,
 *      passing each address that is trusted;
 *   3. stops at the first one that is not: that is the client
 *      (SK_FWD_CLIENT);
 *   4. when every element is trusted, the leftmost one is the client
 *      (SK_FWD_CLIENT as well).
 * Elements left of the client are never read, so whatever a client puts
 * there cannot change the answer nor make it an error.
 *
 * Accepted forms (OWS around elements and pairs is skipped; empty list
 * elements are skipped and not counted):
 *   - X-Forwarded-For: IPv4, IPv4:port, IPv6, [IPv6], [IPv6]:port,
 *     "unknown" (any case);
 *   - Forwarded: elements of ';'-separated name=value pairs (token or
 *     quoted-string values, names in any case, each at most once per
 *     element); of these only for= is read, a node: IPv4[:port],
 *     "[IPv6]"[:port] (quoted, as the RFC requires), "unknown", or an
 *     obfuscated identifier ("_" followed by letters, digits, '.', '_',
 *     '-'; obfuscated ports likewise).
 * Ports are decimal 0..65535 without leading zeros (sk_addr_port_parse()).
 * A node that names no address (unknown, obfuscated, an element without
 * for=) is an untrusted hop that hides the client: SK_FWD_OPAQUE, with the
 * trusted hop that saw it as the address to use.
 *
 * Addresses come out canonical (sk_addr_unmap()); the peer is unmapped
 * too before it is checked.
 *
 * Cost and safety: no allocation, no system call, no state; reads never
 * pass the lengths given; at most SK_FWD_HOPS_MAX elements are examined and
 * every scan is bounded by the values' lengths. Thread-safe: the trusted
 * list is only read.
 */
#ifndef SK_FORWARDED_H
#define SK_FORWARDED_H

#include <stddef.h>
#include <stdint.h>

#include "sk_addr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most elements (hops) examined, from the right. */
#define SK_FWD_HOPS_MAX 32

/** Which header the values come from. */
enum sk_fwd_kind {
	SK_FWD_XFF = 0,	  /**< X-Forwarded-For */
	SK_FWD_FORWARDED, /**< Forwarded (RFC 7239) */
};

/** One field line's value, as the HTTP parser found it (not NUL-ended). */
struct sk_fwd_value {
	const char *p;
	size_t len;
};

/** What sk_forwarded_client() decided; out->addr is always set. */
enum sk_fwd_result {
	SK_FWD_CLIENT = 0, /**< out->addr is the client, from the header */
	SK_FWD_PEER,	   /**< no header, or only empty elements: the peer is the client */
	SK_FWD_IGNORED,	   /**< the peer is not trusted: the header was ignored and the
				peer is the client (count it: someone sends it directly) */
	SK_FWD_OPAQUE,	   /**< the first untrusted hop is "unknown", obfuscated or has no
				for=: out->addr is the trusted hop that received from it */
	SK_FWD_GARBAGE,	   /**< an element that had to be read does not parse: out->addr
				is the peer; the request may be refused (400) */
	SK_FWD_TOO_MANY,   /**< SK_FWD_HOPS_MAX trusted hops and still more: out->addr
				is the peer */
	SK_FWD_RESULT_MAX
};

/** The answer of sk_forwarded_client(). */
struct sk_fwd_client {
	struct sk_addr addr; /**< the address to use (see enum sk_fwd_result) */
	uint16_t port;	     /**< its port when the header gave one, else 0 */
	uint8_t hops;	     /**< elements examined (0..SK_FWD_HOPS_MAX) */
};

/**
 * sk_forwarded_client - the client address of a request that came through
 * @p peer with the X-Forwarded-For or Forwarded field lines @p values.
 * @param kind     which header @p values are from
 * @param values   the header's field lines in the order received (a proxy
 *                 that adds a line appends it); may be NULL if @p nvalues is 0
 * @param peer     the TCP peer (or the PROXY protocol's source)
 * @param trusted  the proxies whose headers are believed
 * @param[out] out the address to use, whatever the result
 * @return one of enum sk_fwd_result (each described there).
 */
enum sk_fwd_result sk_forwarded_client(enum sk_fwd_kind kind, const struct sk_fwd_value *values,
				       size_t nvalues, const struct sk_addr *peer,
				       const struct sk_prefix_list *trusted,
				       struct sk_fwd_client *out);

/**
 * sk_forwarded_strerror - a short English phrase for @p r (logs, counters).
 * @return a static string; "invalid result" for an unknown value.
 */
const char *sk_forwarded_strerror(enum sk_fwd_result r);

#ifdef __cplusplus
}
#endif

#endif /* SK_FORWARDED_H */
