/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_ratelimit.c - per-lcore GCRA token buckets: global, per item, per IP.
 *
 * Memory layout of one limiter (one block, 64-byte aligned):
 *   struct sk_ratelimit | item buckets[n_items] | IP sets[ip_slots / 4]
 *   | user sets[user_slots / 4]
 * Each IP set is one cache line of 4 entries and the set's overflow bucket,
 * each user set one cache line of 4 (key, tat) entries, so a lookup touches
 * one line.
 */
#include "sk_ratelimit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"

#define SK_RL_WAYS 4

/*
 * One set of the per-IP table, one cache line: 4 entries (an address and
 * its bucket's tat) and the set's shared overflow bucket, which decides for
 * addresses that find every entry of the set still owing (see the header).
 */
struct sk_rl_ip_set {
	uint64_t tat[SK_RL_WAYS];  /* bucket of entry w */
	uint32_t addr[SK_RL_WAYS]; /* address of entry w, if bit w of used */
	uint64_t over_tat;	   /* the overflow bucket */
	uint32_t used;		   /* bit w: entry w holds an address */
	uint32_t pad;
} sk_cache_aligned;

_Static_assert(sizeof(struct sk_rl_ip_set) == SK_CACHE_LINE, "one set, one cache line");

/* One set of the per-user table: 4 entries, key 0 = empty. */
struct sk_rl_user_set {
	uint64_t key[SK_RL_WAYS]; /* hash of (user, item), never 0 */
	uint64_t tat[SK_RL_WAYS];
} sk_cache_aligned;

_Static_assert(sizeof(struct sk_rl_user_set) == SK_CACHE_LINE, "one set, one cache line");

struct sk_ratelimit {
	struct sk_ratelimit_stats stats; /* written on every request */
	struct sk_rl_bucket global;	 /* this lcore's share of the global limit */
	uint64_t ip_interval;		 /* per-IP bucket shape, shared by entries */
	uint64_t ip_tolerance;
	uint64_t seed;		      /* per-IP hash seed */
	uint64_t hz;		      /* for sk_ratelimit_item_set() */
	struct sk_rl_bucket *items;   /* n_items buckets, right after this struct */
	struct sk_rl_ip_set *sets;    /* ip_slots / 4 sets, after the items; NULL if off */
	struct sk_rl_user_set *users; /* user_slots / 4 sets, after the IP sets; NULL: none */
	uint64_t user_interval;	      /* per-user bucket shape; interval 0 = limit off */
	uint64_t user_tolerance;
	uint32_t n_items;
	uint32_t set_mask;  /* number of IP sets - 1 */
	uint32_t user_mask; /* number of user sets - 1 */
	uint32_t n_lcores;
} sk_cache_aligned;

void
sk_ratelimit_config_defaults(struct sk_ratelimit_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ip_rate = 20;
	cfg->ip_burst = 40;
	cfg->ip_slots = 16384;
	cfg->user_rate = 10;
	cfg->user_burst = 20;
	cfg->user_slots = 65536;
	cfg->n_lcores = 1;
}

/* div_up - @a / @b rounded up (b > 0). */
static uint64_t
div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

int
sk_rl_bucket_init(struct sk_rl_bucket *b, uint64_t rate, uint64_t burst, uint64_t hz)
{
	uint64_t interval, tol;

	if (b == NULL || hz == 0 || burst > SK_RL_BURST_MAX)
		return -EINVAL;
	if (burst == 0)
		burst = 1;
	if (rate == 0) {
		interval = 0;
		tol = 0;
	} else {
		interval = hz / rate;
		if (interval == 0)
			interval = 1; /* faster than the TSC: one request per cycle */
		if (__builtin_mul_overflow(burst - 1, interval, &tol))
			return -EINVAL;
	}
	b->tat = 0;
	b->interval = interval;
	b->tolerance = tol;
	return 0;
}

/* share - this lcore's part of an appliance-wide rate or burst. */
static uint64_t
share(uint64_t v, uint32_t n_lcores)
{
	return v == 0 ? 0 : div_up(v, n_lcores);
}

/* bucket_init_shared - a bucket with the appliance-wide values divided. */
static int
bucket_init_shared(struct sk_rl_bucket *b, uint64_t rate, uint64_t burst, uint64_t hz,
		   uint32_t n_lcores)
{
	if (burst > SK_RL_BURST_MAX)
		return -EINVAL;
	return sk_rl_bucket_init(b, share(rate, n_lcores), share(burst, n_lcores), hz);
}

/* layout - offsets of the item array and IP sets; false if cfg is invalid. */
static bool
slots_ok(uint32_t n)
{
	return n == 0 || (sk_is_pow2(n) && n >= SK_RL_WAYS && n <= SK_RL_IP_SLOTS_MAX);
}

static bool
layout(const struct sk_ratelimit_config *cfg, size_t *items_off, size_t *sets_off, size_t *total)
{
	size_t items_bytes, sets_bytes;

	if (cfg == NULL || cfg->hz == 0 || cfg->n_lcores == 0 || cfg->n_items > SK_RL_ITEMS_MAX ||
	    cfg->global_burst > SK_RL_BURST_MAX || cfg->item_burst > SK_RL_BURST_MAX ||
	    cfg->ip_burst > SK_RL_BURST_MAX || cfg->user_burst > SK_RL_BURST_MAX)
		return false;
	if (!slots_ok(cfg->ip_slots) || !slots_ok(cfg->user_slots))
		return false;
	/* Bounded above: neither product nor sum can overflow size_t. */
	items_bytes =
		sk_align_up((size_t)cfg->n_items * sizeof(struct sk_rl_bucket), SK_CACHE_LINE);
	sets_bytes = (size_t)(cfg->ip_slots / SK_RL_WAYS) * sizeof(struct sk_rl_ip_set);
	*items_off = sizeof(struct sk_ratelimit);
	*sets_off = *items_off + items_bytes;
	*total = *sets_off + sets_bytes +
		 (size_t)(cfg->user_slots / SK_RL_WAYS) * sizeof(struct sk_rl_user_set);
	return true;
}

ssize_t
sk_ratelimit_memsize(const struct sk_ratelimit_config *cfg)
{
	size_t io, so, total;

	if (!layout(cfg, &io, &so, &total))
		return -EINVAL;
	return (ssize_t)total;
}

struct sk_ratelimit *
sk_ratelimit_init(void *mem, size_t size, const struct sk_ratelimit_config *cfg)
{
	struct sk_rl_bucket tmp;
	struct sk_ratelimit *rl = mem;
	size_t io, so, total;
	uint32_t i;

	if (mem == NULL || ((uintptr_t)mem & (SK_CACHE_LINE - 1)) != 0 ||
	    !layout(cfg, &io, &so, &total)) {
		errno = EINVAL;
		return NULL;
	}
	if (size < total) {
		errno = ENOSPC;
		return NULL;
	}
	memset(mem, 0, total);
	rl->hz = cfg->hz;
	rl->n_lcores = cfg->n_lcores;
	rl->seed = cfg->seed;
	rl->n_items = cfg->n_items;
	rl->items = (struct sk_rl_bucket *)((char *)mem + io);
	if (bucket_init_shared(&rl->global, cfg->global_rate, cfg->global_burst, cfg->hz,
			       cfg->n_lcores) != 0 ||
	    bucket_init_shared(&tmp, cfg->item_rate, cfg->item_burst, cfg->hz, cfg->n_lcores) !=
		    0 ||
	    sk_rl_bucket_init(&tmp, cfg->ip_rate, cfg->ip_burst, cfg->hz) != 0 ||
	    sk_rl_bucket_init(&tmp, cfg->user_rate, cfg->user_burst, cfg->hz) != 0) {
		errno = EINVAL;
		return NULL;
	}
	bucket_init_shared(&tmp, cfg->item_rate, cfg->item_burst, cfg->hz, cfg->n_lcores);
	for (i = 0; i < cfg->n_items; i++)
		rl->items[i] = tmp;
	sk_rl_bucket_init(&tmp, cfg->ip_rate, cfg->ip_burst, cfg->hz);
	rl->ip_interval = tmp.interval;
	rl->ip_tolerance = tmp.tolerance;
	if (cfg->ip_slots != 0) {
		rl->sets = (struct sk_rl_ip_set *)((char *)mem + so);
		rl->set_mask = cfg->ip_slots / SK_RL_WAYS - 1;
	}
	sk_rl_bucket_init(&tmp, cfg->user_rate, cfg->user_burst, cfg->hz);
	rl->user_interval = tmp.interval;
	rl->user_tolerance = tmp.tolerance;
	if (cfg->user_slots != 0) {
		rl->users = (struct sk_rl_user_set *)((char *)mem + so +
						      (size_t)(cfg->ip_slots / SK_RL_WAYS) *
							      sizeof(struct sk_rl_ip_set));
		rl->user_mask = cfg->user_slots / SK_RL_WAYS - 1;
	}
	return rl;
}

int
sk_ratelimit_create(const struct sk_ratelimit_config *cfg, struct sk_ratelimit **out)
{
	ssize_t sz = sk_ratelimit_memsize(cfg);
	void *mem;

	if (sz < 0 || out == NULL)
		return -EINVAL;
	mem = aligned_alloc(SK_CACHE_LINE, (size_t)sz);
	if (mem == NULL)
		return -ENOMEM;
	*out = sk_ratelimit_init(mem, (size_t)sz, cfg);
	if (*out == NULL) {
		free(mem);
		return -EINVAL;
	}
	return 0;
}

void
sk_ratelimit_free(struct sk_ratelimit *rl)
{
	free(rl);
}

int
sk_ratelimit_item_set(struct sk_ratelimit *rl, uint32_t slot, uint64_t rate, uint64_t burst)
{
	if (rl == NULL || slot >= rl->n_items)
		return -EINVAL;
	return bucket_init_shared(&rl->items[slot], rate, burst, rl->hz, rl->n_lcores);
}

/* ip_hash - set index for @ip (splitmix64 finaliser over ip ^ seed). */
static inline uint32_t
ip_hash(const struct sk_ratelimit *rl, uint32_t ip)
{
	uint64_t z = (uint64_t)ip ^ rl->seed;

	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (uint32_t)(z >> 32) & rl->set_mask;
}

/*
 * ip_bucket - the tat of @ip's bucket: its entry's; else an entry it takes
 * over, empty or idle (bucket full again: its address loses nothing); else,
 * every entry still owing, the set's overflow bucket. An entry that owes is
 * never taken: evicting it would hand its address a full bucket again.
 */
static inline uint64_t *
ip_bucket(struct sk_ratelimit *rl, uint32_t ip, uint64_t now)
{
	struct sk_rl_ip_set *set = &rl->sets[ip_hash(rl, ip)];
	int w;

	for (w = 0; w < SK_RL_WAYS; w++)
		if ((set->used & (1u << w)) != 0 && set->addr[w] == ip)
			return &set->tat[w];
	for (w = 0; w < SK_RL_WAYS; w++)
		if ((set->used & (1u << w)) == 0 || set->tat[w] <= now) {
			set->used |= 1u << w;
			set->addr[w] = ip;
			set->tat[w] = 0;
			return &set->tat[w];
		}
	rl->stats.ip_overflow++;
	return &set->over_tat;
}

/* ip_wait - like sk_rl_bucket_wait() for a per-IP tat (shared shape). */
static inline uint64_t
ip_wait(const struct sk_ratelimit *rl, uint64_t tat, uint64_t now)
{
	uint64_t t = tat > now ? tat : now;

	return t - now <= rl->ip_tolerance ? 0 : t - now - rl->ip_tolerance;
}

/* ip_charge - like sk_rl_bucket_charge() for a per-IP tat. */
static inline void
ip_charge(const struct sk_ratelimit *rl, uint64_t *tat, uint64_t now)
{
	*tat = (*tat > now ? *tat : now) + rl->ip_interval;
}

/* refuse - count a refusal under @v and report @wait. */
static inline enum sk_rl_verdict
refuse(struct sk_ratelimit *rl, enum sk_rl_verdict v, uint64_t w, uint64_t *wait)
{
	rl->stats.refused[v]++;
	if (wait != NULL)
		*wait = w;
	return v;
}

enum sk_rl_verdict
sk_ratelimit_admit(struct sk_ratelimit *rl, uint32_t item_slot, uint32_t ip, uint64_t now,
		   uint64_t *wait)
{
	enum sk_rl_verdict v = SK_RL_PASS;
	uint64_t *ipt = NULL;
	uint64_t w, wmax = 0;

	SK_DEBUG_ASSERT(item_slot == SK_RL_NO_ITEM || item_slot < rl->n_items);
	if (rl->sets != NULL && rl->ip_interval != 0) {
		ipt = ip_bucket(rl, ip, now);
		w = ip_wait(rl, *ipt, now);
		if (w != 0) {
			v = SK_RL_REFUSED_IP;
			wmax = w;
		}
	}
	if (item_slot < rl->n_items) {
		w = sk_rl_bucket_wait(&rl->items[item_slot], now);
		if (w != 0) {
			if (v == SK_RL_PASS)
				v = SK_RL_REFUSED_ITEM;
			wmax = w > wmax ? w : wmax;
		}
	}
	w = sk_rl_bucket_wait(&rl->global, now);
	if (w != 0) {
		if (v == SK_RL_PASS)
			v = SK_RL_REFUSED_GLOBAL;
		wmax = w > wmax ? w : wmax;
	}
	if (v != SK_RL_PASS)
		return refuse(rl, v, wmax, wait);
	if (ipt != NULL)
		ip_charge(rl, ipt, now);
	rl->stats.passed++;
	return SK_RL_PASS;
}

void
sk_ratelimit_commit(struct sk_ratelimit *rl, uint32_t item_slot, uint64_t now)
{
	SK_DEBUG_ASSERT(item_slot == SK_RL_NO_ITEM || item_slot < rl->n_items);
	if (item_slot < rl->n_items) {
		SK_DEBUG_ASSERT(sk_rl_bucket_wait(&rl->items[item_slot], now) == 0);
		sk_rl_bucket_charge(&rl->items[item_slot], now);
	}
	SK_DEBUG_ASSERT(sk_rl_bucket_wait(&rl->global, now) == 0);
	sk_rl_bucket_charge(&rl->global, now);
}

enum sk_rl_verdict
sk_ratelimit_item_admit(struct sk_ratelimit *rl, uint32_t item_slot, uint64_t now, uint64_t *wait)
{
	uint64_t w;

	SK_DEBUG_ASSERT(item_slot < rl->n_items);
	if (item_slot >= rl->n_items || (w = sk_rl_bucket_wait(&rl->items[item_slot], now)) == 0)
		return SK_RL_PASS;
	return refuse(rl, SK_RL_REFUSED_ITEM, w, wait);
}

void
sk_ratelimit_item_commit(struct sk_ratelimit *rl, uint32_t item_slot, uint64_t now)
{
	SK_DEBUG_ASSERT(item_slot < rl->n_items);
	if (item_slot < rl->n_items)
		sk_rl_bucket_charge(&rl->items[item_slot], now);
}

enum sk_rl_verdict
sk_ratelimit_check(struct sk_ratelimit *rl, uint32_t item_slot, uint32_t ip, uint64_t now,
		   uint64_t *wait)
{
	enum sk_rl_verdict v = sk_ratelimit_admit(rl, item_slot, ip, now, wait);

	if (v == SK_RL_PASS)
		sk_ratelimit_commit(rl, item_slot, now);
	return v;
}

enum sk_rl_verdict
sk_ratelimit_ip_take(struct sk_ratelimit *rl, uint32_t ip, uint64_t now, uint64_t *wait)
{
	uint64_t *ipt, w;

	if (rl->sets == NULL || rl->ip_interval == 0) {
		rl->stats.passed++;
		return SK_RL_PASS;
	}
	ipt = ip_bucket(rl, ip, now);
	w = ip_wait(rl, *ipt, now);
	if (w != 0)
		return refuse(rl, SK_RL_REFUSED_IP, w, wait);
	ip_charge(rl, ipt, now);
	rl->stats.passed++;
	return SK_RL_PASS;
}

/* user_key - the per-user table's key of (@user, @item): never 0. */
static inline uint64_t
user_key(const struct sk_ratelimit *rl, uint64_t user, uint32_t item)
{
	uint64_t z = user * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)item << 1 | 1) ^ rl->seed;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z != 0 ? z : 1;
}

/*
 * user_bucket - the tat of key @k: its entry; else an empty or idle one;
 * else the entry that owes least (its user's debt is forgotten).
 */
static inline uint64_t *
user_bucket(struct sk_ratelimit *rl, uint64_t k, uint64_t now)
{
	struct sk_rl_user_set *set = &rl->users[(k >> 32) & rl->user_mask];
	int w, least = 0;

	for (w = 0; w < SK_RL_WAYS; w++)
		if (set->key[w] == k)
			return &set->tat[w];
	for (w = 0; w < SK_RL_WAYS; w++) {
		if (set->key[w] == 0 || set->tat[w] <= now)
			goto take;
		if (set->tat[w] < set->tat[least])
			least = w;
	}
	w = least;
	rl->stats.user_evicted++;
take:
	set->key[w] = k;
	set->tat[w] = 0;
	return &set->tat[w];
}

enum sk_rl_verdict
sk_ratelimit_user_take(struct sk_ratelimit *rl, uint64_t user, uint32_t item_slot, uint64_t now,
		       uint64_t *wait)
{
	uint64_t *tat, t;

	if (rl->users == NULL || rl->user_interval == 0)
		return SK_RL_PASS;
	tat = user_bucket(rl, user_key(rl, user, item_slot), now);
	t = *tat > now ? *tat : now;
	if (t - now > rl->user_tolerance)
		return refuse(rl, SK_RL_REFUSED_USER, t - now - rl->user_tolerance, wait);
	*tat = t + rl->user_interval;
	return SK_RL_PASS;
}

/* reshape - @b gets the shape of @rate/@burst and keeps its tat. */
static void
reshape(struct sk_rl_bucket *b, const struct sk_rl_bucket *shape)
{
	b->interval = shape->interval;
	b->tolerance = shape->tolerance;
}

int
sk_ratelimit_reconfigure(struct sk_ratelimit *rl, const struct sk_ratelimit_limits *l)
{
	struct sk_rl_bucket g, it, ip, us;

	if (bucket_init_shared(&g, l->global_rate, l->global_burst, rl->hz, rl->n_lcores) != 0 ||
	    bucket_init_shared(&it, l->item_rate, l->item_burst, rl->hz, rl->n_lcores) != 0 ||
	    sk_rl_bucket_init(&ip, l->ip_rate, l->ip_burst, rl->hz) != 0 ||
	    sk_rl_bucket_init(&us, l->user_rate, l->user_burst, rl->hz) != 0)
		return -EINVAL;
	reshape(&rl->global, &g);
	for (uint32_t i = 0; i < rl->n_items; i++)
		reshape(&rl->items[i], &it);
	rl->ip_interval = ip.interval;
	rl->ip_tolerance = ip.tolerance;
	rl->user_interval = us.interval;
	rl->user_tolerance = us.tolerance;
	rl->stats.reconfigured++;
	return 0;
}

const struct sk_ratelimit_stats *
sk_ratelimit_stats_get(const struct sk_ratelimit *rl)
{
	return &rl->stats;
}

uint32_t
sk_ratelimit_retry_after(uint64_t wait, uint64_t hz)
{
	uint64_t s;

	if (hz == 0)
		return 1;
	s = div_up(wait, hz);
	if (s < 1)
		return 1;
	return s > SK_RL_RETRY_AFTER_MAX ? SK_RL_RETRY_AFTER_MAX : (uint32_t)s;
}
