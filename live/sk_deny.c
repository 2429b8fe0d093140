/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_deny.c - deny lists: build, load from a file, prefix lookup (see
 * sk_deny.h; the user lookup is inline there).
 */
#include "sk_deny.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_parse.h"

/* The IPv4 map: 2 bits per /24 (MAP_COVERED, MAP_LONGER), 4 per byte. */
#define MAP_BYTES   ((size_t)1 << 22)
#define MAP_COVERED 1u
#define MAP_LONGER  2u

/* slots - table slots for @cap entries: a power of two >= 2 x cap. */
static uint64_t
slots(uint32_t cap)
{
	uint64_t n = 2;

	while (n < 2 * (uint64_t)cap)
		n <<= 1;
	return n;
}

size_t
sk_deny_size(uint32_t cap)
{
	if (cap == 0 || cap > SK_DENY_CAP_MAX)
		return 0;
	uint64_t n = slots(cap);
	return sk_align_up(sizeof(struct sk_deny), SK_CACHE_LINE) + n * 8 * 3 +
	       n * sizeof(struct sk_deny_v6) + MAP_BYTES;
}

static uint64_t *
users(struct sk_deny *d)
{
	return (uint64_t *)((char *)d + d->users_off);
}

static uint64_t *
v4(struct sk_deny *d)
{
	return (uint64_t *)((char *)d + d->v4_off);
}

static struct sk_deny_v6 *
v6(struct sk_deny *d)
{
	return (struct sk_deny_v6 *)((char *)d + d->v6_off);
}

static uint64_t *
v48(struct sk_deny *d)
{
	return (uint64_t *)((char *)d + d->v48_off);
}

static uint8_t *
map(struct sk_deny *d)
{
	return (uint8_t *)d + d->map_off;
}

/* map_get - the 2 bits of /24 number @n (address >> 8). */
static inline unsigned
map_get(const struct sk_deny *d, uint32_t n)
{
	return ((const uint8_t *)d + d->map_off)[n >> 2] >> ((n & 3) * 2) & 3u;
}

static void
map_set(struct sk_deny *d, uint32_t n, unsigned bits)
{
	map(d)[n >> 2] |= (uint8_t)(bits << ((n & 3) * 2));
}

/* key48 - the /48 set's key of @hi (never 0). */
static inline uint64_t
key48(uint64_t hi)
{
	return (hi >> 16) + 1;
}

struct sk_deny *
sk_deny_init(void *mem, size_t size, uint32_t cap)
{
	struct sk_deny *d = mem;
	size_t need = sk_deny_size(cap);

	if (mem == NULL || need == 0 || size < need || ((uintptr_t)mem & 7) != 0)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->cap = cap;
	d->mask = (uint32_t)(slots(cap) - 1);
	d->users_off = sk_align_up(sizeof(*d), SK_CACHE_LINE);
	d->v4_off = d->users_off + slots(cap) * 8;
	d->v6_off = d->v4_off + slots(cap) * 8;
	d->v48_off = d->v6_off + slots(cap) * sizeof(struct sk_deny_v6);
	d->map_off = d->v48_off + slots(cap) * 8;
	sk_deny_clear_users(d);
	sk_deny_clear_prefixes(d);
	return d;
}

void
sk_deny_clear_users(struct sk_deny *d)
{
	memset(users(d), 0, ((size_t)d->mask + 1) * 8);
	d->n_users = 0;
}

void
sk_deny_clear_prefixes(struct sk_deny *d)
{
	memset(v4(d), 0, ((size_t)d->mask + 1) * 8);
	memset(v6(d), 0, ((size_t)d->mask + 1) * sizeof(struct sk_deny_v6));
	memset(v48(d), 0, ((size_t)d->mask + 1) * 8);
	memset(map(d), 0, MAP_BYTES);
	d->n_v4 = d->n_v6 = 0;
	d->n_v4_lens = d->n_v6_lens = 0;
}

int
sk_deny_copy(struct sk_deny *dst, const struct sk_deny *src)
{
	if (dst->cap != src->cap)
		return -EINVAL;
	memcpy(dst, src, sk_deny_size(src->cap));
	return 0;
}

/*
 * u64_slot - where key @k (non-zero) is in the table @t of @mask + 1 slots,
 * or the empty slot it would take (the load is at most 1/2: one exists).
 */
static inline const uint64_t *
u64_slot(const uint64_t *t, uint32_t mask, uint64_t k)
{
	for (uint64_t i = sk_deny_mix(k);; i++) {
		const uint64_t *s = &t[i & mask];

		if (*s == k || *s == 0)
			return s;
	}
}

/*
 * u64_add - put @k in @t unless there: 1 added, 0 there already,
 * -ENOSPC when @n entries already fill @cap.
 */
static int
u64_add(uint64_t *t, uint32_t mask, uint64_t k, uint64_t n, uint64_t cap)
{
	uint64_t *s = (uint64_t *)u64_slot(t, mask, k);

	if (*s == k)
		return 0;
	if (n >= cap)
		return -ENOSPC;
	*s = k;
	return 1;
}

int
sk_deny_add_user(struct sk_deny *d, uint64_t user)
{
	int rc;

	if (user == 0)
		return -EINVAL;
	rc = u64_add(users(d), d->mask, user, d->n_users, d->cap);
	if (rc > 0)
		d->n_users++;
	return rc < 0 ? rc : 0;
}

/* add_len - record prefix length @len in @lens (longest first). */
static void
add_len(uint8_t *lens, uint8_t *n, uint8_t len)
{
	uint8_t i = 0;

	while (i < *n && lens[i] > len)
		i++;
	if (i < *n && lens[i] == len)
		return;
	memmove(lens + i + 1, lens + i, *n - i);
	lens[i] = len;
	(*n)++;
}

/* v4_key - the IPv4 table's key of @addr (host order) masked to @len. */
static inline uint64_t
v4_key(uint32_t addr, unsigned len)
{
	uint32_t m = len == 0 ? 0 : ~0u << (32 - len);

	return (uint64_t)(addr & m) << 8 | len | 1ULL << 40;
}

/* v6_mask - @hi/@lo masked to @len. */
static inline void
v6_mask(uint64_t *hi, uint64_t *lo, unsigned len)
{
	if (len <= 64) {
		*hi &= len == 0 ? 0 : ~0ULL << (64 - len);
		*lo = 0;
	} else {
		*lo &= len == 128 ? ~0ULL : ~0ULL << (128 - len);
	}
}

static inline uint64_t
v6_hash(uint64_t hi, uint64_t lo, unsigned len)
{
	return sk_deny_mix(hi ^ sk_deny_mix(lo ^ len));
}

static inline uint32_t
be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t
be64(const uint8_t *b)
{
	return (uint64_t)be32(b) << 32 | be32(b + 4);
}

/* map_prefix - mark the /24s of IPv4 prefix @addr/@len in the map. */
static void
map_prefix(struct sk_deny *d, uint32_t addr, unsigned len)
{
	if (len > 24) {
		map_set(d, addr >> 8, MAP_LONGER);
		return;
	}
	uint32_t first = (addr >> 8) & (len == 0 ? 0 : ~0u << (24 - len)) & 0xffffffu;
	uint64_t count = (uint64_t)1 << (24 - len);

	for (uint64_t i = 0; i < count; i++)
		map_set(d, first + (uint32_t)i, MAP_COVERED);
}

/* set48_add - put the /48 of @hi in the set (at most one per prefix: fits). */
static void
set48_add(struct sk_deny *d, uint64_t hi)
{
	u64_add(v48(d), d->mask, key48(hi), 0, 1);
}

static inline bool
set48_has(const struct sk_deny *d, uint64_t hi)
{
	const uint64_t *t = (const uint64_t *)((const char *)d + d->v48_off);

	return *u64_slot(t, d->mask, key48(hi)) != 0;
}

int
sk_deny_add_prefix(struct sk_deny *d, const struct sk_prefix *p)
{
	if (p->addr.family == SK_ADDR_V4 && p->len <= 32) {
		int rc = u64_add(v4(d), d->mask, v4_key(be32(p->addr.bytes), p->len), d->n_v4,
				 d->cap);

		if (rc <= 0)
			return rc;
		d->n_v4++;
		add_len(d->v4_lens, &d->n_v4_lens, p->len);
		map_prefix(d, be32(p->addr.bytes), p->len);
		return 0;
	}
	if (p->addr.family == SK_ADDR_V6 && p->len <= 128) {
		uint64_t hi = be64(p->addr.bytes), lo = be64(p->addr.bytes + 8);
		struct sk_deny_v6 *t = v6(d);

		v6_mask(&hi, &lo, p->len);
		for (uint64_t i = v6_hash(hi, lo, p->len);; i++) {
			struct sk_deny_v6 *s = &t[i & d->mask];

			if (s->meta == (p->len | 1u << 8) && s->hi == hi && s->lo == lo)
				return 0;
			if (s->meta == 0) {
				if (d->n_v6 >= d->cap)
					return -ENOSPC;
				*s = (struct sk_deny_v6){hi, lo, p->len | 1u << 8};
				d->n_v6++;
				add_len(d->v6_lens, &d->n_v6_lens, p->len);
				if (p->len >= 48)
					set48_add(d, hi);
				return 0;
			}
		}
	}
	return -EINVAL;
}

/* v4_has - true if the IPv4 table holds key @k. */
static inline bool
v4_has(const struct sk_deny *d, uint64_t k)
{
	return *u64_slot((const uint64_t *)((const char *)d + d->v4_off), d->mask, k) != 0;
}

static inline bool
v6_has(const struct sk_deny *d, uint64_t hi, uint64_t lo, unsigned len)
{
	const struct sk_deny_v6 *t = (const struct sk_deny_v6 *)((const char *)d + d->v6_off);

	for (uint64_t i = v6_hash(hi, lo, len);; i++) {
		const struct sk_deny_v6 *s = &t[i & d->mask];

		if (s->meta == (len | 1u << 8) && s->hi == hi && s->lo == lo)
			return true;
		if (s->meta == 0)
			return false;
	}
}

bool
sk_deny_addr(const struct sk_deny *d, const struct sk_addr *a)
{
	if (a->family == SK_ADDR_V4) {
		if (d->n_v4 == 0)
			return false;
		uint32_t ip = be32(a->bytes);
		unsigned m = map_get(d, ip >> 8);
		if (m & MAP_COVERED)
			return true;
		if (!(m & MAP_LONGER))
			return false;
		/* lengths above 24 come first (longest first) */
		for (unsigned i = 0; i < d->n_v4_lens && d->v4_lens[i] > 24; i++)
			if (v4_has(d, v4_key(ip, d->v4_lens[i])))
				return true;
		return false;
	}
	if (a->family != SK_ADDR_V6 || d->n_v6 == 0)
		return false;
	uint64_t h0 = be64(a->bytes), l0 = be64(a->bytes + 8);
	unsigned i = 0;
	bool in48 = set48_has(d, h0);
	/* lengths of 48 and more (longest first) only when the /48 holds one */
	for (; i < d->n_v6_lens && d->v6_lens[i] >= 48; i++) {
		uint64_t hi = h0, lo = l0;

		if (!in48)
			continue;
		v6_mask(&hi, &lo, d->v6_lens[i]);
		if (v6_has(d, hi, lo, d->v6_lens[i]))
			return true;
	}
	for (; i < d->n_v6_lens; i++) {
		uint64_t hi = h0, lo = l0;

		v6_mask(&hi, &lo, d->v6_lens[i]);
		if (v6_has(d, hi, lo, d->v6_lens[i]))
			return true;
	}
	return false;
}

/* trim - @s without blanks around; *n its length. */
static const char *
trim(const char *s, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)*s))
		s++, (*n)--;
	while (*n > 0 && isspace((unsigned char)s[*n - 1]))
		(*n)--;
	return s;
}

/* parse_user - strict decimal 1..UINT64_MAX, no leading zero. */
static bool
parse_user(const char *s, size_t n, uint64_t *v)
{
	char buf[21];

	if (n == 0 || n >= sizeof(buf) || s[0] == '0')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)buf[i]))
			return false;
	return sk_parse_u64(buf, 1, UINT64_MAX, v);
}

long
sk_deny_load(struct sk_deny *d, FILE *f, bool prefixes, unsigned long *line)
{
	char buf[256];
	unsigned long ln = 0;
	long n = 0;

	while (fgets(buf, sizeof(buf), f) != NULL) {
		size_t len = strlen(buf);
		const char *s;
		int rc;

		ln++;
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n')
			goto bad; /* no entry is that long */
		s = trim(buf, &len);
		if (len == 0 || s[0] == '#')
			continue;
		if (prefixes) {
			struct sk_prefix p;

			if (sk_prefix_parse(s, len, &p) != SK_ADDR_OK)
				goto bad;
			rc = sk_deny_add_prefix(d, &p);
		} else {
			uint64_t u;

			if (!parse_user(s, len, &u))
				goto bad;
			rc = sk_deny_add_user(d, u);
		}
		if (rc != 0) {
			*line = ln;
			return rc;
		}
		n++;
	}
	if (ferror(f)) {
		*line = ln;
		return -EIO;
	}
	return n;
bad:
	*line = ln;
	return -EINVAL;
}
