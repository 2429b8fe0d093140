/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_frame.h - frames a client sends, built into mbufs with valid
 * checksums: Ethernet + IPv4 with room for any L4, TCP segments (payload,
 * MSS option), ICMP messages and ARP. Shared by the stack's test harness
 * (tests/unit/net) and the TCP input fuzzer (tests/fuzz/tcp_input), so that
 * both send the stack the same frames.
 *
 * Nothing here asserts: a builder returns NULL when the pool is empty or
 * the frame does not fit one mbuf, and the caller decides. Any thread.
 */
#ifndef SK_TEST_FRAME_H
#define SK_TEST_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

/** Who sends a frame to whom. */
struct sk_frame_ends {
	struct rte_ether_addr src_mac; /**< Ethernet source (the client) */
	struct rte_ether_addr dst_mac; /**< Ethernet destination */
	uint32_t sip;		       /**< IPv4 source, host byte order */
	uint32_t dip;		       /**< IPv4 destination, host byte order */
};

/** One TCP segment; fields in host byte order. */
struct sk_frame_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;	  /**< RTE_TCP_*_FLAG bits */
	uint16_t win;	  /**< window, unscaled */
	bool has_mss;	  /**< send an MSS option (also when @c mss is 0) */
	uint16_t mss;	  /**< its value */
	const void *data; /**< payload, @c len bytes (may be NULL when len is 0) */
	uint32_t len;
};

/**
 * sk_frame_ipv4 - an Ethernet + IPv4 frame from @p mp with @p l4_len bytes
 * of room after the IPv4 header (not initialised): version 4, no options,
 * TTL 64, id 0, header checksum set.
 * @param l4  [out] where the L4 header goes
 * @return the mbuf (the caller owns it), or NULL.
 */
struct rte_mbuf *sk_frame_ipv4(struct rte_mempool *mp, const struct sk_frame_ends *e, uint8_t proto,
			       uint32_t l4_len, void **l4);

/**
 * sk_frame_ipv4_fix - recompute the IPv4 header checksum of the Ethernet
 * frame @p m, after a test changed a header field.
 */
void sk_frame_ipv4_fix(struct rte_mbuf *m);

/**
 * sk_frame_tcp - an Ethernet + IPv4 + TCP frame from @p mp carrying @p t,
 * both checksums valid.
 * @return the mbuf (the caller owns it), or NULL.
 */
struct rte_mbuf *sk_frame_tcp(struct rte_mempool *mp, const struct sk_frame_ends *e,
			      const struct sk_frame_tcp *t);

/**
 * sk_frame_icmp - an ICMP message of @p type (code 0) with identifier
 * @p ident, sequence @p seq (host byte order) and @p plen bytes of
 * @p payload, both checksums valid.
 * @return the mbuf (the caller owns it), or NULL.
 */
struct rte_mbuf *sk_frame_icmp(struct rte_mempool *mp, const struct sk_frame_ends *e, uint8_t type,
			       uint16_t ident, uint16_t seq, const void *payload, uint16_t plen);

/**
 * sk_frame_arp - an ARP packet, opcode @p op (RTE_ARP_OP_*), sender
 * e->src_mac / e->sip, target e->dip (target MAC zero), sent to
 * e->dst_mac; padded with zeros to the 60-byte minimum frame.
 * @return the mbuf (the caller owns it), or NULL.
 */
struct rte_mbuf *sk_frame_arp(struct rte_mempool *mp, const struct sk_frame_ends *e, uint16_t op);

#endif /* SK_TEST_FRAME_H */
