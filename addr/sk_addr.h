/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * IP addresses of either family, prefixes, a list of trusted prefixes, and
 * the key under which the per-address limits count an address.
 *
 * Representation
 * --------------
 * struct sk_addr holds IPv4 and IPv6 in one 17-byte value: @c family, then
 * the address in network byte order in @c bytes. An IPv4 address is stored
 * plainly in bytes[0..3] with bytes[4..15] zero (not as a v4-mapped IPv6
 * address), so two equal addresses are equal bytes and the struct can be
 * hashed or compared with memcmp(). An all-zero struct is "no address"
 * (SK_ADDR_NONE).
 *
 * A v4-mapped IPv6 address (::ffff:198.18.0.1) is an IPv6 address to
 * sk_addr_parse(), which keeps what was written. Code that takes an address
 * from the network or from a header (the PROXY protocol parser, the
 * Forwarded parser) makes it canonical with sk_addr_unmap(), so that a client
 * seen through a dual-stack socket has the same address, trust and limiter
 * key as when seen over IPv4. sk_prefix_contains() compares families as they
 * are: an IPv4 prefix never contains an IPv6 address, mapped or not.
 *
 * Parsing is strict (inet_pton-like, on a pointer and a length, no NUL
 * needed): IPv4 is four decimal octets without leading zeros; IPv6 is the
 * RFC 4291 text form (hex groups of 1-4 digits, at most one "::", an
 * optional dotted IPv4 tail), without zone index and without brackets.
 * Formatting writes the RFC 5952 canonical text.
 *
 * Thread-safety and cost: nothing here allocates, locks, keeps state or
 * makes a system call; every loop is bounded by the input length or by
 * SK_PREFIX_LIST_MAX. Every function is safe to call from any thread on
 * values that thread owns or only reads.
 */
#ifndef SK_ADDR_H
#define SK_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Address families of struct sk_addr (the IP version number). */
enum sk_addr_family {
	SK_ADDR_NONE = 0, /**< no address (an all-zero struct) */
	SK_ADDR_V4 = 4,	  /**< IPv4: bytes[0..3], the rest zero */
	SK_ADDR_V6 = 6,	  /**< IPv6: bytes[0..15] */
};

/** An IPv4 or IPv6 address, network byte order. */
struct sk_addr {
	uint8_t family;	   /**< enum sk_addr_family */
	uint8_t bytes[16]; /**< the address; unused bytes are zero */
};

/** A prefix: an address and how many of its leading bits count. */
struct sk_prefix {
	struct sk_addr addr; /**< bits beyond @c len are zero */
	uint8_t len;	     /**< 0..32 (IPv4) or 0..128 (IPv6) */
};

/** Room for the longest text form with its NUL (as INET6_ADDRSTRLEN). */
#define SK_ADDR_STRLEN 46
/** Room for the longest prefix text ("addr/128") with its NUL. */
#define SK_PREFIX_STRLEN (SK_ADDR_STRLEN + 4)
/** The most prefixes a struct sk_prefix_list holds. */
#define SK_PREFIX_LIST_MAX 64
/** The default IPv6 prefix length of the limiter key (one host owns a /64). */
#define SK_ADDR_KEY_V6_PREFIX_DEFAULT 64

/** A bounded list of prefixes (e.g. the proxies an operator trusts). */
struct sk_prefix_list {
	uint32_t n;				/**< prefixes in use, 0..SK_PREFIX_LIST_MAX */
	struct sk_prefix p[SK_PREFIX_LIST_MAX]; /**< in the order written */
};

/**
 * Why a parse failed. 0 is success; every other value is a distinct reason,
 * named in words by sk_addr_strerror().
 */
enum sk_addr_error {
	SK_ADDR_OK = 0,
	SK_ADDR_EEMPTY,	   /**< nothing to parse */
	SK_ADDR_ETOOLONG,  /**< longer than any address (or prefix) text */
	SK_ADDR_ESYNTAX,   /**< a character or separator out of place */
	SK_ADDR_ERANGE,	   /**< an IPv4 octet above 255, an IPv6 group of 5+ digits */
	SK_ADDR_ELEADING0, /**< an IPv4 octet with a leading zero (octal to some parsers) */
	SK_ADDR_ECOUNT,	   /**< not 4 octets; not 8 groups; "::" standing for nothing */
	SK_ADDR_EZONE,	   /**< an IPv6 zone index ("%eth0"): not an address on the wire */
	SK_ADDR_EPREFIX,   /**< prefix length missing, not decimal, or too long for the family */
	SK_ADDR_EHOSTBITS, /**< bits set beyond the prefix length (write 198.18.0.0/15) */
	SK_ADDR_EFULL,	   /**< more than SK_PREFIX_LIST_MAX prefixes */
	SK_ADDR_ERROR_MAX
};

/**
 * sk_addr_strerror - a short English phrase for @p err.
 * @return a static string ("invalid error code" for an unknown value).
 */
const char *sk_addr_strerror(enum sk_addr_error err);

/* ------------------------------------------------------------------------ */
/* Addresses                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * sk_addr_parse - read the IPv4 or IPv6 address written in the @p len bytes
 * at @p s (no NUL needed, none read). The family is chosen by the text: a
 * ':' makes it IPv6.
 * @param[out] out  the address; zeroed (SK_ADDR_NONE) on failure
 * @return SK_ADDR_OK, or SK_ADDR_EEMPTY, SK_ADDR_ETOOLONG, SK_ADDR_ESYNTAX,
 *         SK_ADDR_ERANGE, SK_ADDR_ELEADING0, SK_ADDR_ECOUNT, SK_ADDR_EZONE.
 */
enum sk_addr_error sk_addr_parse(const char *s, size_t len, struct sk_addr *out);

/**
 * sk_addr_format - write @p a as text with a NUL: dotted quad for IPv4, the
 * RFC 5952 form for IPv6 (lower case, the longest run of two or more zero
 * groups as "::", the leftmost of equal runs; ::ffff:a.b.c.d for a
 * v4-mapped address).
 * @param cap  size of @p buf; SK_ADDR_STRLEN is always enough
 * @return the length written (without the NUL), -EINVAL if @p a has no
 *         valid family, -ENOSPC if @p cap is too small (then @p buf holds
 *         an empty string when @p cap > 0).
 */
int sk_addr_format(const struct sk_addr *a, char *buf, size_t cap);

/**
 * sk_addr_port_parse - read a port, decimal 0..65535 without leading zeros
 * ("0" itself is fine), from exactly the @p len bytes at @p s.
 * @param[out] out  the port; untouched on failure
 * @return true on success, false for anything else (empty, a non-digit,
 *         a leading zero, above 65535).
 */
bool sk_addr_port_parse(const char *s, size_t len, uint16_t *out);

/**
 * sk_addr_from_v4 - the IPv4 address @p be (network byte order, as in an
 * IPv4 header).
 */
struct sk_addr sk_addr_from_v4(uint32_t be);

/** sk_addr_from_v6 - the IPv6 address in the 16 bytes at @p b. */
struct sk_addr sk_addr_from_v6(const uint8_t b[16]);

/** sk_addr_eq - true if @p a and @p b are the same family and address. */
bool sk_addr_eq(const struct sk_addr *a, const struct sk_addr *b);

/** sk_addr_is_v4mapped - true if @p a is an IPv6 address in ::ffff:0:0/96. */
bool sk_addr_is_v4mapped(const struct sk_addr *a);

/**
 * sk_addr_unmap - the canonical form of @p a: the IPv4 address if @p a is
 * v4-mapped IPv6, else @p a unchanged.
 */
struct sk_addr sk_addr_unmap(const struct sk_addr *a);

/**
 * sk_addr_key - the key under which the per-address limits count @p a:
 * IPv4 whole; IPv6 with the bits beyond @p v6_prefix cleared, so every
 * address of one /64 (by default) shares a key and rotating addresses
 * inside it gains nothing. A v4-mapped address is unmapped first (else
 * every such client would share one IPv6 /64 key).
 * @param v6_prefix  IPv6 prefix length, 0..128 (above 128 counts as 128;
 *                   0 puts every IPv6 client under one key)
 * @return the key, an address of the same family (SK_ADDR_NONE for none)
 */
struct sk_addr sk_addr_key(const struct sk_addr *a, unsigned v6_prefix);

/* ------------------------------------------------------------------------ */
/* Prefixes                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * sk_prefix_parse - read "address/length" or a bare address (a /32 or
 * /128) from the @p len bytes at @p s. The length is decimal without
 * leading zeros. A v4-mapped IPv6 prefix of length 96 or more is stored as
 * the IPv4 prefix it covers (::ffff:198.18.0.0/111 is 198.18.0.0/15), so
 * that it matches the canonical addresses of sk_addr_unmap().
 * @param[out] out  the prefix; zeroed on failure
 * @return SK_ADDR_OK, any error of sk_addr_parse() for the address part,
 *         SK_ADDR_EPREFIX (length missing after '/', not decimal, above 32
 *         or 128), SK_ADDR_EHOSTBITS (address bits set beyond the length).
 */
enum sk_addr_error sk_prefix_parse(const char *s, size_t len, struct sk_prefix *out);

/**
 * sk_prefix_format - write @p p as "address/length" with a NUL.
 * @return the length written, -EINVAL for a bad family or length, -ENOSPC
 *         if @p cap is too small (SK_PREFIX_STRLEN is always enough).
 */
int sk_prefix_format(const struct sk_prefix *p, char *buf, size_t cap);

/**
 * sk_prefix_contains - true if @p a lies in @p p. Families must match: an
 * IPv4 prefix never contains an IPv6 address and the reverse; /0 contains
 * every address of its family. SK_ADDR_NONE is in no prefix.
 */
bool sk_prefix_contains(const struct sk_prefix *p, const struct sk_addr *a);

/* ------------------------------------------------------------------------ */
/* Prefix lists                                                              */
/* ------------------------------------------------------------------------ */

/** Where a list failed to parse, for a message that names the bad entry. */
struct sk_prefix_list_error {
	enum sk_addr_error err; /**< why */
	uint32_t index;		/**< the entry's number, 1-based */
	uint32_t offset;	/**< its first byte in the input */
	uint32_t len;		/**< its length */
};

/**
 * sk_prefix_list_parse - read a list of prefixes separated by commas and/or
 * blanks (space, tab), e.g. "198.18.0.0/15, 2001:2::/48". An empty or blank
 * string is an empty list (nothing trusted). Duplicates are kept.
 * @param s    NUL-terminated text (a config value)
 * @param[out] out  the list; on failure, empty
 * @param[out] where  may be NULL; on failure the bad entry (for a full list,
 *             the first entry that did not fit)
 * @return SK_ADDR_OK, SK_ADDR_ETOOLONG for an entry longer than any prefix,
 *         SK_ADDR_EFULL, or the error of sk_prefix_parse() for the entry.
 */
enum sk_addr_error sk_prefix_list_parse(const char *s, struct sk_prefix_list *out,
					struct sk_prefix_list_error *where);

/**
 * sk_prefix_list_strerror - write a message naming the entry of @p where in
 * @p s, e.g. "entry 2 \"198.18.0.1/15\": bits set beyond the prefix length".
 * @param s  the text given to sk_prefix_list_parse()
 * @return the length of the message, which is cut to fit @p cap (like
 *         snprintf; the entry is quoted as written, up to 60 bytes)
 */
int sk_prefix_list_strerror(const char *s, const struct sk_prefix_list_error *where, char *buf,
			    size_t cap);

/**
 * sk_prefix_list_contains - true if @p a lies in one of the prefixes of
 * @p l (sk_prefix_contains() rules). O(n), n <= SK_PREFIX_LIST_MAX: a few
 * hundred cycles at worst, once per connection or request.
 */
bool sk_prefix_list_contains(const struct sk_prefix_list *l, const struct sk_addr *a);

#ifdef __cplusplus
}
#endif

#endif /* SK_ADDR_H */
