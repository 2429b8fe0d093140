/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_cksum.h - the Internet checksum (RFC 1071), eight bytes at a time.
 *
 * DPDK's rte_raw_cksum() adds one 16-bit word per step: a 200-byte
 * request or answer costs about 100 dependent additions, twice per
 * request at one request per frame (the segment in, the segment out),
 * and was the largest single cost of the TCP path in the depth-1 profile
 * (docs/benchmarks.md). These helpers add 64-bit words, split in two
 * 32-bit halves into a 64-bit accumulator (no carry to track: 2^32 words
 * fit), and fold at the end. The one's complement sum does not depend on
 * the order or the grouping of its 16-bit words, so every result is the
 * same as DPDK's (test_net_parts.c checks them against each other).
 *
 * All functions are pure, inline and thread-safe; they read only the
 * bytes given and never fail.
 */
#ifndef SK_CKSUM_H
#define SK_CKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

/**
 * sk_cksum_add - @sum plus the 16-bit words of @len bytes at @buf.
 *
 * @param sum  a partial sum (0 to start, or a value this function returned)
 * @param buf  the bytes; any alignment
 * @param len  their count; an odd last byte counts as the first byte of a
 *             zero-padded word, as in RFC 1071 (the caller's data must
 *             start on a word boundary of the checksummed message)
 * @return a partial sum for sk_cksum_add() or sk_cksum_fold(); not folded
 */
static inline uint64_t
sk_cksum_add(uint64_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t s1 = 0, a, b;

	for (; len >= 16; p += 16, len -= 16) {
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		sum += (a & 0xffffffff) + (a >> 32);
		s1 += (b & 0xffffffff) + (b >> 32);
	}
	if (len >= 8) {
		memcpy(&a, p, 8);
		sum += (a & 0xffffffff) + (a >> 32);
		p += 8;
		len -= 8;
	}
	/* The tail in fixed-size pieces (a variable-size memcpy is a libc
	 * call); each piece starts on a word boundary, so parity holds. */
	if (len & 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		s1 += w;
		p += 4;
	}
	if (len & 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		s1 += w;
		p += 2;
	}
	if (len & 1) {
		const uint8_t pad[2] = {p[0], 0}; /* the first byte of a zero-padded word */
		uint16_t w;

		memcpy(&w, pad, 2);
		s1 += w;
	}
	return sum + s1;
}

/**
 * sk_cksum_fold - the 16-bit one's complement sum of the partial @sum, not
 * complemented (rte_raw_cksum()'s value: 0 only for a sum of zero words).
 */
static inline uint16_t
sk_cksum_fold(uint64_t sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/** sk_cksum_raw - rte_raw_cksum(@buf, @len): the folded, not complemented sum. */
static inline uint16_t
sk_cksum_raw(const void *buf, size_t len)
{
	return sk_cksum_fold(sk_cksum_add(0, buf, len));
}

/**
 * sk_cksum_ipv4_hdr - the header checksum to store in @ip (its
 * hdr_checksum field must be 0), as rte_ipv4_cksum() gives it; IHL 5.
 */
static inline uint16_t
sk_cksum_ipv4_hdr(const struct rte_ipv4_hdr *ip)
{
	uint16_t s = sk_cksum_raw(ip, sizeof(*ip));

	return s == 0xffff ? s : (uint16_t)~s;
}

/**
 * sk_cksum_ipv4_l4 - the folded, not complemented sum of the IPv4
 * pseudo-header of @ip (addresses, protocol, @l4_len) and the @l4_len
 * bytes of the segment at @l4. A received segment is intact when it is
 * 0xffff (rte_ipv4_udptcp_cksum_verify()); the checksum to send is its
 * complement, computed with the checksum field 0 (rte_ipv4_udptcp_cksum()
 * for TCP).
 */
static inline uint16_t
sk_cksum_ipv4_l4(const struct rte_ipv4_hdr *ip, const void *l4, uint32_t l4_len)
{
	uint64_t sum = (uint64_t)ip->src_addr + ip->dst_addr +
		       rte_cpu_to_be_16((uint16_t)ip->next_proto_id) +
		       rte_cpu_to_be_16((uint16_t)l4_len);

	return sk_cksum_fold(sk_cksum_add(sum, l4, l4_len));
}

/**
 * sk_cksum_ipv4_fields - sk_cksum_ipv4_hdr() of the header sk_ipv4_fill()
 * writes (IHL 5, TOS 0, ID 0, DF, TTL 64), from the values: reading back
 * a header just stored field by field stalls on store-to-load forwarding.
 *
 * @param src, dst  the addresses, host order
 * @param proto     the protocol
 * @param total     the total length (header included)
 * @return the checksum field, network order
 */
static inline uint16_t
sk_cksum_ipv4_fields(uint32_t src, uint32_t dst, uint8_t proto, uint16_t total)
{
	/* The words in host order; the sum of swapped words is the swapped sum. */
	uint16_t s = sk_cksum_fold(0x4500u + total + 0x4000u + (64u << 8 | proto) + (src >> 16) +
				   (src & 0xffff) + (dst >> 16) + (dst & 0xffff));

	return rte_cpu_to_be_16(s == 0xffff ? s : (uint16_t)~s);
}

#endif /* SK_CKSUM_H */
