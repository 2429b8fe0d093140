/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Deny lists: user ids and IPv4/IPv6 prefixes refused 403 before any work
 * in the buy path. One struct sk_deny lives in one caller-given buffer
 * (a deny buffer of the live block, sk_live.h) and holds no pointer, only
 * offsets, so another process can build it and the lcores read it.
 *
 * Layout: open-addressing tables of 2 x cap slots (a power of two),
 * linear probing, load at most 1/2:
 *  - users:  the 64-bit user id itself (0 = empty slot);
 *  - IPv4:   (address << 8 | length | 1 << 40), one table for every length;
 *  - IPv6:   the masked address and its length (24 bytes a slot);
 *  - IPv6 /48s: the /48 of every IPv6 prefix of length 48 or more;
 * and a map of 2 bits per IPv4 /24 (4 MiB): "covered" (a prefix of length
 * 24 or less covers it: denied) and "longer" (a prefix longer than /24 lies
 * in it). So an IPv4 lookup is one read of the map, plus a probe per
 * length above 24 only when its /24 holds such a prefix; an IPv6 lookup is
 * one probe per length below 48 present (rare), then one probe of the /48
 * set, plus a probe per length of 48 or more only when its /48 is listed.
 * The common case of a sale - an address nobody listed - costs one memory
 * read in either family, as a user lookup does. Memory: 4 MiB + 88 bytes
 * per cap, doubled to a power of two (96 MiB for cap = 1M; sk_deny_size()).
 *
 * Thread-safety: built by one thread (sk_deny_init(), sk_deny_add_*(),
 * sk_deny_copy()) while no reader uses it; then read-only, by any number of
 * readers (sk_deny_user(), sk_deny_addr(): no allocation, lock or system
 * call; a bounded number of probes, see above).
 */
#ifndef SK_DENY_H
#define SK_DENY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_addr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most entries of each kind a list may be made for. */
#define SK_DENY_CAP_MAX (1u << 22)

/** One IPv6 slot. */
struct sk_deny_v6 {
	uint64_t hi, lo; /**< the masked address, big-endian halves */
	uint64_t meta;	 /**< length | 1 << 8; 0 = empty slot */
};

/** A deny list (header of its buffer; the tables follow). */
struct sk_deny {
	uint32_t cap;  /**< entries of each kind */
	uint32_t mask; /**< slots per table - 1 */
	uint64_t n_users, n_v4, n_v6;
	uint64_t users_off, v4_off, v6_off; /**< table offsets from this struct */
	uint64_t v48_off, map_off;	    /**< the /48 set and the /24 map */
	uint8_t n_v4_lens, n_v6_lens;	    /**< distinct lengths present */
	uint8_t v4_lens[33];		    /**< the lengths, longest first */
	uint8_t v6_lens[129];
};

/** sk_deny_size - bytes of a list of @p cap entries a kind; 0 if @p cap is 0 or too large. */
size_t sk_deny_size(uint32_t cap);

/**
 * sk_deny_init - an empty list in @p mem (@p size >= sk_deny_size(@p cap),
 * 8-byte aligned).
 * @return the list (== @p mem), or NULL for a bad argument.
 */
struct sk_deny *sk_deny_init(void *mem, size_t size, uint32_t cap);

/** sk_deny_clear_users - empty the user table of @p d. */
void sk_deny_clear_users(struct sk_deny *d);

/** sk_deny_clear_prefixes - empty both prefix tables of @p d. */
void sk_deny_clear_prefixes(struct sk_deny *d);

/**
 * sk_deny_copy - make @p dst (same cap) a copy of @p src.
 * @return 0, or -EINVAL when the caps differ.
 */
int sk_deny_copy(struct sk_deny *dst, const struct sk_deny *src);

/**
 * sk_deny_add_user - deny user @p user (non-zero); adding it twice is fine.
 * @return 0, -EINVAL (0), -ENOSPC (cap entries already).
 */
int sk_deny_add_user(struct sk_deny *d, uint64_t user);

/**
 * sk_deny_add_prefix - deny every address in @p p (host bits zero, as
 * sk_prefix_parse() gives); twice is fine.
 * @return 0, -EINVAL (bad family or length), -ENOSPC (cap prefixes of its
 *         family already).
 */
int sk_deny_add_prefix(struct sk_deny *d, const struct sk_prefix *p);

/**
 * sk_deny_load - add every line of @p f: user ids (@p prefixes false,
 * strict decimal as X-User-Id) or prefixes (address[/len]). Blank lines
 * and lines starting with '#' are skipped; blanks around a value too.
 * @param[out] line  on an error, the line number (1-based)
 * @return the entries read, or -EINVAL (a bad line), -ENOSPC (list full),
 *         -EIO (read error). On an error @p d holds the lines before it.
 */
long sk_deny_load(struct sk_deny *d, FILE *f, bool prefixes, unsigned long *line);

/** sk_deny_mix - the slot hash of a 64-bit key (splitmix64's finaliser). */
static inline uint64_t
sk_deny_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** sk_deny_user - true if @p user is denied. At most one cache miss plus probing. */
static inline bool
sk_deny_user(const struct sk_deny *d, uint64_t user)
{
	if (d->n_users == 0)
		return false;
	const uint64_t *t = (const uint64_t *)((const char *)d + d->users_off);
	for (uint64_t i = sk_deny_mix(user);; i++) {
		uint64_t v = t[i & d->mask];

		if (v == user)
			return true;
		if (v == 0)
			return false;
	}
}

/**
 * sk_deny_addr - true if @p a lies in a denied prefix (an IPv4 address in
 * an IPv4 prefix, an IPv6 address in an IPv6 one; unmap v4-mapped
 * addresses first). One probe per prefix length present.
 */
bool sk_deny_addr(const struct sk_deny *d, const struct sk_addr *a);

/** sk_deny_empty - true if @p d denies nothing (the buy path's one test). */
static inline bool
sk_deny_empty(const struct sk_deny *d)
{
	return d->n_users == 0 && d->n_v4 == 0 && d->n_v6 == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SK_DENY_H */
