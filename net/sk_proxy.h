/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The PROXY protocol (HAProxy's, versions 1 and 2): the header an L4 load
 * balancer sends first on a connection to say which client it relays. A
 * resumable parser in plain C (no DPDK): it keeps a few bytes of state,
 * allocates nothing, copies nothing and makes no system call.
 *
 * Parser model
 * ------------
 * As for the HTTP parser (sk_http.h): call sk_proxy_parse() with the buffer
 * that starts at the first byte the connection received and every byte
 * received so far, each time more arrive. The parser examines only what it
 * has not seen yet (its position is an offset, so the buffer may move
 * between calls) and answers:
 *   - SK_PROXY_NEED_MORE: no verdict yet, call again with more bytes;
 *   - SK_PROXY_DONE: a whole header, @c out->len bytes long; the bytes after
 *     it (HTTP, TLS) belong to the client and are not consumed;
 *   - an error (sk_proxy_result_is_error()): refuse the connection.
 * Errors are reported as early as the bytes allow: the first byte that
 * cannot start either signature is SK_PROXY_EBADSIG at once, so a client
 * that sends plain HTTP to a PROXY listener is refused at its first byte.
 * A prefix of the input never gives another verdict than the whole.
 * After DONE or an error the parser keeps its result: a later call returns
 * it again (and refills @c out from the same bytes, given again) until
 * sk_proxy_parser_init().
 *
 * Version 1: "PROXY TCP4 src dst sport dport\r\n" (or TCP6), or
 * "PROXY UNKNOWN" + anything + "\r\n"; at most 107 bytes with the CRLF;
 * single spaces; addresses as sk_addr_parse() reads them and of the family
 * named; ports decimal 0..65535 without leading zeros.
 * Version 2: the 12-byte signature, version 2 and a command (LOCAL or
 * PROXY), the family and transport, a big-endian length, the addresses and
 * ports, then TLVs. TLVs are walked, never read: each must fit inside the
 * declared length. A declared length above the parser's bound
 * (SK_PROXY_V2_LEN_MAX_DEFAULT unless set) is refused before its bytes
 * arrive. Only TCP over IPv4 or IPv6 is taken as a client address: UDP and
 * AF_UNIX are refused (this server speaks TCP), AF_UNSPEC is UNKNOWN.
 *
 * Addresses come out canonical (sk_addr_unmap(): a v4-mapped IPv6 address
 * from a dual-stack proxy is the IPv4 client it stands for).
 *
 * Thread-safety: a parser belongs to one connection; nothing here is
 * shared or global.
 */
#ifndef SK_PROXY_H
#define SK_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sk_addr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The longest version 1 header, with its CRLF (the protocol's own limit). */
#define SK_PROXY_V1_MAX 107
/** The fixed part of a version 2 header: signature, command, family, length. */
#define SK_PROXY_V2_HEAD 16
/** The default bound on a version 2 header's declared length (after the 16
 *  fixed bytes): the addresses and room for the TLVs of common proxies. */
#define SK_PROXY_V2_LEN_MAX_DEFAULT 512
/** The smallest bound accepted: an IPv6 address block (36 bytes). */
#define SK_PROXY_V2_LEN_MAX_MIN 36

/** What sk_proxy_parse() says. */
enum sk_proxy_result {
	SK_PROXY_NEED_MORE = 0, /**< no verdict yet: more bytes are needed */
	SK_PROXY_DONE,		/**< a whole header: see struct sk_proxy_header */
	SK_PROXY_EBADSIG,	/**< neither "PROXY " nor the version 2 signature */
	SK_PROXY_EVERSION,	/**< v2: the version nibble is not 2 */
	SK_PROXY_ECOMMAND,	/**< v2: the command is neither LOCAL nor PROXY */
	SK_PROXY_EFAMILY,	/**< v1: not TCP4/TCP6/UNKNOWN; v2: an unknown family or
				     transport, or PROXY over UDP or AF_UNIX */
	SK_PROXY_ETRUNCATED,	/**< v2: the declared length is shorter than the addresses */
	SK_PROXY_ETOOLONG,	/**< v1: no CRLF within 107 bytes; v2: the declared length
				     is above the bound */
	SK_PROXY_ESYNTAX,	/**< v1: a missing, extra or empty field, a double space, a
				     CR without LF or an LF without CR */
	SK_PROXY_EADDR,		/**< v1: an address that does not parse or is not of the
				     family named */
	SK_PROXY_EPORT,		/**< v1: a port not decimal 0..65535, or with a leading zero */
	SK_PROXY_ETLV,		/**< v2: a TLV that runs past the declared length */
	SK_PROXY_RESULT_MAX
};

/** What a header says about the connection. */
enum sk_proxy_kind {
	SK_PROXY_PROXIED = 0, /**< relayed: src/dst are the client and the address it
				   reached */
	SK_PROXY_LOCAL,	      /**< v2 LOCAL: the proxy's own connection (a health check);
				   use the connection's own addresses */
	SK_PROXY_UNKNOWN,     /**< v1 UNKNOWN, v2 PROXY over AF_UNSPEC: the proxy does
				   not know; use the connection's own addresses */
};

/** A parsed header (filled on SK_PROXY_DONE, zeroed otherwise). */
struct sk_proxy_header {
	uint32_t len;	    /**< bytes of the header: what follows is the client's */
	uint8_t version;    /**< 1 or 2 */
	uint8_t kind;	    /**< enum sk_proxy_kind */
	uint16_t src_port;  /**< host order; 0 unless SK_PROXY_PROXIED */
	uint16_t dst_port;  /**< host order; 0 unless SK_PROXY_PROXIED */
	struct sk_addr src; /**< the client; SK_ADDR_NONE unless SK_PROXY_PROXIED */
	struct sk_addr dst; /**< the address it connected to; idem */
};

/** Parser state, one per connection (8 bytes, no pointer). */
struct sk_proxy_parser {
	uint32_t seen;	     /**< bytes examined; the header's length once DONE */
	uint16_t v2_len_max; /**< bound on a v2 declared length */
	uint8_t version;     /**< 0 until the first byte, then 1 or 2 */
	uint8_t result;	     /**< SK_PROXY_NEED_MORE, or the result it keeps */
};

/**
 * sk_proxy_parser_init - make @p p ready for a new connection.
 * @param v2_len_max  bound on a version 2 header's declared length: 0 for
 *                    SK_PROXY_V2_LEN_MAX_DEFAULT; values below
 *                    SK_PROXY_V2_LEN_MAX_MIN count as that minimum
 */
void sk_proxy_parser_init(struct sk_proxy_parser *p, uint16_t v2_len_max);

/**
 * sk_proxy_parse - read the PROXY header at the start of @p buf.
 * @param buf  every byte the connection received so far, from its first;
 *             only @p len bytes are read, never more
 * @param[out] out  the header on SK_PROXY_DONE; zeroed otherwise
 * @return SK_PROXY_NEED_MORE, SK_PROXY_DONE, or one of the errors of enum
 *         sk_proxy_result (each named there). After DONE, a call with fewer
 *         than @c out->len bytes returns SK_PROXY_NEED_MORE.
 */
enum sk_proxy_result sk_proxy_parse(struct sk_proxy_parser *p, const uint8_t *buf, size_t len,
				    struct sk_proxy_header *out);

/** sk_proxy_result_is_error - true for every result but NEED_MORE and DONE. */
static inline bool
sk_proxy_result_is_error(enum sk_proxy_result r)
{
	return r != SK_PROXY_NEED_MORE && r != SK_PROXY_DONE;
}

/**
 * sk_proxy_strerror - a short English phrase for @p r (for logs and
 * counters' help).
 * @return a static string; "invalid result" for an unknown value.
 */
const char *sk_proxy_strerror(enum sk_proxy_result r);

#ifdef __cplusplus
}
#endif

#endif /* SK_PROXY_H */
