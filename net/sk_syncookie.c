/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_syncookie.c - SYN cookies keyed with SipHash-2-4 (see sk_syncookie.h).
 *
 * SipHash (Aumasson & Bernstein, 2012) is written out here because no
 * packaged library offers it; it is ~30 lines and checked against the
 * reference test vector in tests/unit/net.
 */
#include <string.h>

#include "sk_syncookie.h"

const uint16_t sk_syncookie_mss_table[8] = {256, 536, 1024, 1220, 1360, 1440, 1460, 8960};

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

static uint64_t
load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint64_t
sk_siphash24(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	uint64_t b = (uint64_t)len << 56;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t m = load_le64(p + i);

		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)p[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void
sk_syncookie_init(struct sk_syncookie *sc, const uint8_t secret[16], uint64_t period_tsc)
{
	sc->k0 = load_le64(secret);
	sc->k1 = load_le64(secret + 8);
	sc->period_tsc = period_tsc ? period_tsc : 1;
}

static uint32_t
cookie_mac(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f, uint64_t t,
	   unsigned mss_idx)
{
	uint64_t m[7];
	size_t n = 3;

	m[0] = ((uint64_t)f->saddr << 32) | f->daddr;
	m[1] = ((uint64_t)f->sport << 48) | ((uint64_t)f->dport << 32) | f->client_isn;
	m[2] = (t << 3) | mss_idx;
	if (f->saddr6 != NULL) { /* IPv6: both addresses whole */
		memcpy(&m[3], f->saddr6, 16);
		memcpy(&m[5], f->daddr6, 16);
		n = 7;
	}
	return (uint32_t)sk_siphash24(sc->k0, sc->k1, m, n * sizeof(m[0])) & 0x07ffffffu;
}

static uint32_t
cookie_build(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f, uint64_t t,
	     unsigned mss_idx)
{
	return (cookie_mac(sc, f, t, mss_idx) << 5) | (uint32_t)((t & 3) << 3) | mss_idx;
}

uint32_t
sk_syncookie_make(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f,
		  uint16_t client_mss, uint64_t now_tsc, uint16_t *mss_out)
{
	unsigned idx = 0;

	for (unsigned i = 1; i < 8; i++)
		if (sk_syncookie_mss_table[i] <= client_mss)
			idx = i;
	if (mss_out != NULL)
		*mss_out = sk_syncookie_mss_table[idx];
	return cookie_build(sc, f, now_tsc / sc->period_tsc, idx);
}

bool
sk_syncookie_check(const struct sk_syncookie *sc, const struct sk_syncookie_flow *f,
		   uint32_t cookie, uint64_t now_tsc, uint16_t *mss_out)
{
	uint64_t now_t = now_tsc / sc->period_tsc;
	unsigned idx = cookie & 7;
	unsigned tlow = (cookie >> 3) & 3;

	for (uint64_t age = 0; age < 2 && age <= now_t; age++) {
		uint64_t t = now_t - age;

		if ((t & 3) != tlow)
			continue;
		if (cookie_build(sc, f, t, idx) == cookie) {
			if (mss_out != NULL)
				*mss_out = sk_syncookie_mss_table[idx];
			return true;
		}
	}
	return false;
}
