/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * SYN cookies: the server's initial sequence number encodes everything
 * needed to accept the final handshake ACK without keeping state.
 *
 * Layout of the 32-bit cookie (the ISN we send in the SYN-ACK):
 *
 *   31                               5 4   3 2    0
 *  +----------------------------------+-----+------+
 *  |  MAC (27 bits)                   | t&3 | mss  |
 *  +----------------------------------+-----+------+
 *
 * MAC = SipHash-2-4(secret, saddr, daddr, sport, dport, client ISN, t, mss)
 * truncated to 27 bits, where t is the time slot (now / period). A cookie is
 * accepted during its slot and the next one, so it lives 1..2 periods. The
 * same SYN in the same slot yields the same cookie: a retransmitted SYN gets
 * an identical SYN-ACK. mss indexes sk_syncookie_mss_table[].
 *
 * Pure functions of their arguments; thread safe.
 */
#ifndef SK_SYNCOOKIE_H
#define SK_SYNCOOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** MSS values a cookie can carry (index 0..7), ascending. */
extern const uint16_t sk_syncookie_mss_table[8];

struct sk_syncookie {
	uint64_t k0, k1;     /**< SipHash key (from the 16-byte secret, little endian) */
	uint64_t period_tsc; /**< slot length in TSC cycles, > 0 */
};

/** The 4-tuple and client ISN a cookie is bound to (host order). */
struct sk_syncookie_flow {
	uint32_t saddr, daddr; /**< client, server (IPv4; 0 over IPv6) */
	uint16_t sport, dport; /**< client, server */
	uint32_t client_isn;   /**< the SYN's sequence number */
	/** Over IPv6: client, server (16 bytes each, network order); NULL over IPv4. */
	const uint8_t *saddr6, *daddr6;
};

/** Initialise @sc from a 16-byte @secret and a slot length. */
void sk_syncookie_init(struct sk_syncookie *sc, const uint8_t secret[16], uint64_t period_tsc);

/**
 * Make the cookie for @f. @client_mss is the SYN's MSS option (536 when
 * absent); the largest table entry <= it is encoded (entry 0 if smaller).
 * @param mss_out  [out] the MSS encoded.
 * @return the cookie (our ISN).
 */
uint32_t sk_syncookie_make(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f,
			   uint16_t client_mss, uint64_t now_tsc, uint16_t *mss_out);

/**
 * Check @cookie (the final ACK's ack - 1) for @f (client_isn = seq - 1).
 * @param mss_out  [out] the MSS encoded, on success.
 * @return true if the cookie was made for @f in the current or previous slot.
 */
bool sk_syncookie_check(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f,
			uint32_t cookie, uint64_t now_tsc, uint16_t *mss_out);

/** SipHash-2-4 of @len bytes with key (k0, k1); exposed for its test vector. */
uint64_t sk_siphash24(uint64_t k0, uint64_t k1, const void *data, size_t len);

#endif /* SK_SYNCOOKIE_H */
