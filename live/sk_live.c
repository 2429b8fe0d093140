/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_live.c - the live settings block: layout, checks, the writer's
 * begin/publish (see sk_live.h). The lcores' side is inline in the header.
 */
#include "sk_live.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_deny.h"

_Static_assert(sizeof(struct sk_live_zone) % SK_CACHE_LINE == 0, "deny buffers start aligned");

size_t
sk_live_size(uint32_t deny_cap)
{
	size_t d = deny_cap == 0 ? 0 : sk_deny_size(deny_cap);

	if (deny_cap != 0 && d == 0)
		return 0;
	return sizeof(struct sk_live_zone) + 2 * sk_align_up(d, SK_CACHE_LINE);
}

/* rate_ok - a rate and its burst in range. */
static bool
rate_ok(uint64_t rate, uint64_t burst, const char **key, const char *rk, const char *bk)
{
	if (rate > SK_LIVE_RATE_MAX) {
		*key = rk;
		return false;
	}
	if (burst > SK_LIVE_RATE_MAX) {
		*key = bk;
		return false;
	}
	return true;
}

/* slot_used - @i is -1 (allowed when @none_ok) or a slot with a key. */
static bool
slot_used(const struct sk_token_ring *r, int32_t i, bool none_ok)
{
	if (i == -1)
		return none_ok;
	return i >= 0 && i < SK_TOKEN_RING_MAX && r->k[i].kid_len != 0;
}

/* ring_ok - counts agree, kids are NUL-ended and distinct, default and
 * signing keys exist (either may be none, -1); an empty ring is fine. */
static bool
ring_ok(const struct sk_token_ring *r)
{
	uint32_t n = 0;

	for (int i = 0; i < SK_TOKEN_RING_MAX; i++) {
		const struct sk_token_ring_key *k = &r->k[i];

		if (k->kid_len == 0)
			continue;
		if (k->kid_len > SK_TOKEN_KID_MAX ||
		    strnlen(k->kid, sizeof(k->kid)) != k->kid_len ||
		    sk_token_ring_find(r, k->kid, k->kid_len) != i)
			return false;
		n++;
	}
	if (n == 0) /* no key (auth off): default and signing slots unused */
		return r->n == 0;
	return n == r->n && slot_used(r, r->dflt, true) && slot_used(r, r->sign, true);
}

int
sk_live_check(const struct sk_live_settings *s, const char **key)
{
	const struct sk_live_limits *l = &s->limits;
	const char *k = NULL;

	if (!rate_ok(l->global_rate, l->global_burst, &k, "global_rate", "global_burst") ||
	    !rate_ok(l->item_rate, l->item_burst, &k, "item_rate", "item_burst") ||
	    !rate_ok(l->ip_rate, l->ip_burst, &k, "ip_rate", "ip_burst") ||
	    !rate_ok(l->user_rate, l->user_burst, &k, "user_rate", "user_burst"))
		goto bad;
	if (s->log_level > SK_LIVE_LOG_MAX) {
		k = "log_level";
		goto bad;
	}
	if (s->deny_buf > 1) {
		k = "deny_buf";
		goto bad;
	}
	if (!ring_ok(&s->keys)) {
		k = "keys";
		goto bad;
	}
	return 0;
bad:
	if (key != NULL)
		*key = k;
	return -EINVAL;
}

struct sk_live_zone *
sk_live_init(void *mem, size_t size, uint32_t nlcores, uint32_t deny_cap,
	     const struct sk_live_settings *first)
{
	struct sk_live_zone *z = mem;
	size_t need = sk_live_size(deny_cap);

	if (mem == NULL || first == NULL || ((uintptr_t)mem & (SK_CACHE_LINE - 1)) != 0 ||
	    need == 0 || size < need || nlcores == 0 || nlcores > SK_LIVE_LCORES_MAX ||
	    sk_live_check(first, NULL) != 0)
		return NULL;
	memset(z, 0, sizeof(*z));
	z->magic = SK_LIVE_MAGIC;
	z->version = SK_LIVE_VERSION;
	z->nlcores = nlcores;
	z->size = need;
	if (deny_cap != 0) {
		z->deny_cap = deny_cap;
		z->deny_size = sk_align_up(sk_deny_size(deny_cap), SK_CACHE_LINE);
		z->deny_off[0] = sizeof(*z);
		z->deny_off[1] = sizeof(*z) + z->deny_size;
		for (uint32_t i = 0; i < 2; i++)
			if (sk_deny_init(sk_live_deny_buf(z, i), z->deny_size, deny_cap) == NULL)
				return NULL;
	}
	z->slot[1] = *first;
	z->slot[1].gen = 1;
	z->slot[1].deny_buf = 0;
	z->slot[1].deny_users = 0;
	z->slot[1].deny_prefixes = 0;
	for (uint32_t i = 0; i < nlcores; i++)
		atomic_store_explicit(&z->lcore[i].gen, 1, memory_order_relaxed);
	atomic_store_explicit(&z->gen, 1, memory_order_release);
	return z;
}

struct sk_live_zone *
sk_live_attach(void *mem, size_t size, char *err, size_t errlen)
{
	struct sk_live_zone *z = mem;

	if (mem == NULL || size < sizeof(*z)) {
		sk_set_err(err, errlen, "live: the block is too small");
		return NULL;
	}
	if (z->magic != SK_LIVE_MAGIC || z->version != SK_LIVE_VERSION) {
		sk_set_err(err, errlen, "live: not a live settings block of version %u",
			   SK_LIVE_VERSION);
		return NULL;
	}
	if (z->size > size || z->nlcores == 0 || z->nlcores > SK_LIVE_LCORES_MAX) {
		sk_set_err(err, errlen, "live: the block's layout does not fit its memory");
		return NULL;
	}
	return z;
}

const struct sk_live_settings *
sk_live_current(const struct sk_live_zone *z)
{
	return sk_live_slot(
		z, atomic_load_explicit(&((struct sk_live_zone *)z)->gen, memory_order_acquire));
}

bool
sk_live_quiescent(const struct sk_live_zone *z)
{
	uint64_t g = atomic_load_explicit(&((struct sk_live_zone *)z)->gen, memory_order_relaxed);

	for (uint32_t i = 0; i < z->nlcores; i++)
		if (atomic_load_explicit(&((struct sk_live_zone *)z)->lcore[i].gen,
					 memory_order_acquire) != g)
			return false;
	return true;
}

struct sk_live_settings *
sk_live_begin(struct sk_live_zone *z)
{
	uint64_t g = atomic_load_explicit(&z->gen, memory_order_relaxed);

	if (!sk_live_quiescent(z)) {
		errno = EBUSY;
		return NULL;
	}
	z->slot[(g + 1) & 1] = z->slot[g & 1];
	return &z->slot[(g + 1) & 1];
}

int64_t
sk_live_publish(struct sk_live_zone *z, struct sk_live_settings *s, const char *what,
		int64_t now_ns, const char **key)
{
	uint64_t g = atomic_load_explicit(&z->gen, memory_order_relaxed);

	SK_ASSERT(s == &z->slot[(g + 1) & 1]);
	if (sk_live_check(s, key) != 0)
		return -EINVAL;
	if (s->deny_buf != sk_live_slot(z, g)->deny_buf && z->deny_size == 0) {
		if (key != NULL)
			*key = "deny_buf";
		return -EINVAL;
	}
	s->gen = g + 1;
	s->when_ns = now_ns;
	snprintf(s->what, sizeof(s->what), "%s", what != NULL ? what : "");
	atomic_store_explicit(&z->gen, g + 1, memory_order_release);
	return (int64_t)(g + 1);
}

void *
sk_live_deny_buf(struct sk_live_zone *z, uint32_t i)
{
	if (z->deny_size == 0 || i > 1)
		return NULL;
	return (char *)z + z->deny_off[i];
}
