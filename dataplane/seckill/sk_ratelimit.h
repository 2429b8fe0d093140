/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Rate limits for the buy path: token buckets on TSC time, one set per lcore.
 *
 * Three limits are checked for each request, all owned by the lcore that
 * handles it (plain fields, no atomics: the limiter of an lcore is touched
 * by that lcore only):
 *
 *  - global:   all buy requests of this lcore;
 *  - per item: one bucket per item slot;
 *  - per IP:   a fixed-memory, 4-way set-associative table of small buckets
 *              keyed by the client's IPv4 address.
 *
 * Each bucket is a GCRA ("virtual scheduling") token bucket: one 64-bit
 * "theoretical arrival time" per bucket; a request conforms if it arrives no
 * earlier than tat - (burst - 1) * interval, and then tat moves on by one
 * interval (= hz / rate cycles). This is exactly a token bucket of capacity
 * `burst` refilled at `rate` per second, with the bucket full at start.
 *
 * A request passes only if it conforms to all three limits, and only then is
 * it charged: a refused request costs no tokens anywhere. It is counted
 * under the first limit that refused it, in the order IP, item, global
 * (struct sk_ratelimit_stats). The Retry-After is the longest wait of the
 * limits that refused.
 *
 * Before or after authentication: the buy path decides a request in two
 * halves so that a flood of forged tokens is refused before its HMACs are
 * computed. sk_ratelimit_admit(), before the token is verified, checks all
 * three limits and charges the per-IP one only; sk_ratelimit_commit(), once
 * the buyer is authenticated, charges the item and global ones (it cannot
 * fail: nothing ran on this lcore in between). So an address pays for every
 * request it sends, forged or not, while the shared item and global buckets
 * are paid for by authenticated buyers only: forged tokens sent from many
 * addresses cannot drain them and starve honest buyers, yet once they are
 * drained every request is refused before its HMAC. sk_ratelimit_check()
 * is both halves at once.
 *
 * Sharing across lcores: the global and per-item rates and bursts given in
 * struct sk_ratelimit_config are for the whole appliance and are divided by
 * n_lcores (rounded up, burst at least 1), since RSS spreads many clients
 * evenly. The per-IP values are NOT divided: one client's connections may all
 * land on one lcore. A client spreading connections over k lcores can thus get
 * up to k times the per-IP rate.
 *
 * Per-IP table collisions: an address maps to one set of 4 entries (hash with
 * a seed chosen at init). A new address takes an empty entry, else an idle
 * one (bucket full again: forgetting it loses nothing). An entry that still
 * owes (bucket not yet full again) is never taken over: were it evicted, its
 * address would come back with a full bucket, and a few addresses of one set
 * taking turns would evict each other and never be limited at all. When all
 * 4 entries owe, the new address is decided by the set's overflow bucket,
 * one bucket of the per-IP shape shared by every address of that set that
 * found no entry (counted in ip_overflow), until an entry is idle again.
 *
 * The trade-off, for a flash sale: a flood cannot escape - a set passes at
 * most 5 times the per-IP rate (4 entries and the overflow bucket) however
 * many addresses take turns in it - while an honest newcomer is never
 * locked out for good: an entry falls idle once its address has paid its
 * debt (burst / rate seconds at most after its last request), and until
 * then the newcomer shares the overflow bucket's rate. Only a newcomer
 * whose set is held by 5 or more flooding addresses waits for the flood to
 * end; a crowd larger than the table is held to 5 x ip_rate per set and
 * second (plus the bursts) rather than let through. Memory is fixed at
 * init: 16 bytes per entry (a set of 4 and its overflow bucket are one
 * cache line).
 *
 * Time is the caller's TSC reading (rte_rdtsc()) and frequency
 * (rte_get_tsc_hz()), passed in, so tests can simulate time.
 *
 * Thread-safety: one struct sk_ratelimit per lcore; every function on it must
 * be called by its owning lcore, or while that lcore is not running. Stats
 * may be read by another thread (64-bit aligned loads; values may be a few
 * requests stale).
 */
#ifndef SK_RATELIMIT_H
#define SK_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest burst accepted for any bucket. */
#define SK_RL_BURST_MAX 1000000000ULL

/** Largest number of per-IP entries (16 bytes each: 1 GiB). */
#define SK_RL_IP_SLOTS_MAX (1u << 26)

/** Largest number of item slots. */
#define SK_RL_ITEMS_MAX (1u << 20)

/** Largest Retry-After sk_ratelimit_retry_after() returns, seconds. */
#define SK_RL_RETRY_AFTER_MAX 3600u

/** Item slot meaning "this request concerns no item": item limit skipped. */
#define SK_RL_NO_ITEM UINT32_MAX

/**
 * One GCRA token bucket. All-zero is valid and means "unlimited". Plain
 * fields: owned by one lcore.
 */
struct sk_rl_bucket {
	uint64_t tat;	    /**< theoretical arrival time, TSC cycles */
	uint64_t interval;  /**< cycles per request (hz / rate); 0 = unlimited */
	uint64_t tolerance; /**< (burst - 1) * interval */
};

/** Why a request was refused (or SK_RL_PASS). */
enum sk_rl_verdict {
	SK_RL_PASS = 0,	      /**< conforms to every limit; charged */
	SK_RL_REFUSED_IP,     /**< the client address is over its rate */
	SK_RL_REFUSED_ITEM,   /**< the item is over its rate */
	SK_RL_REFUSED_GLOBAL, /**< this lcore is over the global rate */
	SK_RL_REFUSED_USER,   /**< the user is over its attempts on the item */
	SK_RL__COUNT
};

/** Counters of one lcore's limiter. */
struct sk_ratelimit_stats {
	uint64_t passed;		/**< requests admitted (sk_ratelimit_admit(),
					     sk_ratelimit_check(), sk_ratelimit_ip_take()) */
	uint64_t refused[SK_RL__COUNT]; /**< refusals by verdict ([SK_RL_PASS] unused) */
	uint64_t ip_overflow;		/**< per-IP decisions made by a set's overflow
					     bucket (every entry of the set owed) */
	uint64_t user_evicted;		/**< per-user entries taken over while they
					     still owed (every entry of the set owed) */
	uint64_t reconfigured;		/**< sk_ratelimit_reconfigure() calls */
};

/**
 * Limiter settings. Rates are requests per second, 0 meaning "no limit";
 * a burst of 0 is taken as 1. See the file comment for how global and item
 * values are divided among lcores.
 */
struct sk_ratelimit_config {
	uint64_t hz;	       /**< TSC frequency, cycles per second (> 0) */
	uint64_t global_rate;  /**< whole appliance, all items */
	uint64_t global_burst; /**< whole appliance */
	uint64_t item_rate;    /**< default for each item, whole appliance */
	uint64_t item_burst;   /**< default for each item, whole appliance */
	uint64_t ip_rate;      /**< per client address, per lcore */
	uint64_t ip_burst;     /**< per client address, per lcore */
	uint64_t seed;	       /**< per-IP hash seed (pick it at random) */
	uint32_t n_items;      /**< item slots 0..n_items-1 (<= SK_RL_ITEMS_MAX) */
	uint32_t ip_slots;     /**< per-IP entries: 0 (per-IP limit off) or a power
				    of two in 4..SK_RL_IP_SLOTS_MAX */
	uint32_t n_lcores;     /**< lcores sharing global/item limits, >= 1 */
	uint64_t user_rate;    /**< attempts/s of one user on one item, per lcore */
	uint64_t user_burst;   /**< its burst */
	uint32_t user_slots;   /**< per-user entries: 0 (per-user limit off for
				    good) or a power of two in 4..SK_RL_IP_SLOTS_MAX */
};

/**
 * The limits alone, as a live change gives them (sk_ratelimit_reconfigure()):
 * same meaning as in struct sk_ratelimit_config.
 */
struct sk_ratelimit_limits {
	uint64_t global_rate, global_burst, item_rate, item_burst;
	uint64_t ip_rate, ip_burst, user_rate, user_burst;
};

/** Per-lcore limiter (opaque). */
struct sk_ratelimit;

/**
 * sk_ratelimit_config_defaults - fill @p cfg with the defaults: global and
 * item limits off, 20 requests/s per IP with a burst of 40, 16384 per-IP
 * entries (256 KiB), 10 attempts/s per user and item with a burst of 20,
 * 65536 per-user entries (1 MiB), 1 lcore, no items. The caller still sets
 * hz, seed, n_items and n_lcores.
 */
void sk_ratelimit_config_defaults(struct sk_ratelimit_config *cfg);

/**
 * sk_rl_bucket_init - set a bucket to @p rate per second with @p burst,
 * full (the first @p burst requests pass at once).
 *
 * @param b
 *   The bucket.
 * @param rate
 *   Requests per second; 0 = unlimited.
 * @param burst
 *   Bucket capacity; 0 is taken as 1.
 * @param hz
 *   TSC frequency.
 * @return
 *   0, or -EINVAL if @p hz is 0 or @p burst > SK_RL_BURST_MAX.
 */
int sk_rl_bucket_init(struct sk_rl_bucket *b, uint64_t rate, uint64_t burst, uint64_t hz);

/**
 * sk_rl_bucket_wait - 0 if a request at @p now conforms to @p b, else the
 * number of cycles until it would. Does not charge.
 */
static inline uint64_t
sk_rl_bucket_wait(const struct sk_rl_bucket *b, uint64_t now)
{
	uint64_t t = b->tat > now ? b->tat : now;

	if (b->interval == 0 || t - now <= b->tolerance)
		return 0;
	return t - now - b->tolerance;
}

/** sk_rl_bucket_charge - account one request at @p now (call after a 0 wait). */
static inline void
sk_rl_bucket_charge(struct sk_rl_bucket *b, uint64_t now)
{
	if (b->interval != 0)
		b->tat = (b->tat > now ? b->tat : now) + b->interval;
}

/**
 * sk_rl_bucket_take - charge one request if it conforms.
 * @return true if it passed, false if refused (@p wait, if not NULL, then
 * receives the cycles to wait).
 */
static inline bool
sk_rl_bucket_take(struct sk_rl_bucket *b, uint64_t now, uint64_t *wait)
{
	uint64_t w = sk_rl_bucket_wait(b, now);

	if (w != 0) {
		if (wait != NULL)
			*wait = w;
		return false;
	}
	sk_rl_bucket_charge(b, now);
	return true;
}

/**
 * sk_ratelimit_memsize - bytes needed for a limiter with @p cfg.
 * @return
 *   The size (a multiple of 64), or -EINVAL if @p cfg is invalid (hz 0,
 *   n_lcores 0, n_items or ip_slots out of range, a burst too large).
 */
ssize_t sk_ratelimit_memsize(const struct sk_ratelimit_config *cfg);

/**
 * sk_ratelimit_init - lay out a limiter in caller-provided memory (e.g.
 * rte_zmalloc_socket() on the lcore's socket). All buckets start full.
 *
 * @param mem
 *   At least sk_ratelimit_memsize(cfg) bytes, 64-byte aligned; the caller
 *   keeps ownership and must keep it alive while the limiter is used.
 * @param size
 *   Size of @p mem.
 * @param cfg
 *   Settings; copied.
 * @return
 *   The limiter (== @p mem) or NULL with errno set: EINVAL (bad cfg,
 *   misaligned @p mem), ENOSPC (@p size too small).
 */
struct sk_ratelimit *sk_ratelimit_init(void *mem, size_t size,
				       const struct sk_ratelimit_config *cfg);

/**
 * sk_ratelimit_create - allocate (aligned_alloc) and init a limiter.
 * @param cfg
 *   Settings.
 * @param[out] out
 *   The limiter; free with sk_ratelimit_free().
 * @return
 *   0, -EINVAL (bad cfg) or -ENOMEM.
 */
int sk_ratelimit_create(const struct sk_ratelimit_config *cfg, struct sk_ratelimit **out);

/** sk_ratelimit_free - free a limiter from sk_ratelimit_create(); NULL ok. */
void sk_ratelimit_free(struct sk_ratelimit *rl);

/**
 * sk_ratelimit_item_set - give item slot @p slot its own limit (whole
 * appliance values, divided among n_lcores like the defaults). The bucket
 * starts full. Call on every lcore's limiter.
 *
 * @return
 *   0, or -EINVAL (@p slot >= n_items, @p burst too large).
 */
int sk_ratelimit_item_set(struct sk_ratelimit *rl, uint32_t slot, uint64_t rate, uint64_t burst);

/**
 * sk_ratelimit_admit - decide one request before its sender is known to be
 * who it claims (before the token's HMAC): against all three limits, but
 * charge the per-IP one only. Follow a pass with sk_ratelimit_commit() once
 * the request is authenticated, or with nothing if it is not (the address
 * keeps paying for it; the item and global buckets do not). Fast path: no
 * allocation, no lock, one cache line of the per-IP table, at most 4
 * entries probed.
 *
 * @param rl
 *   This lcore's limiter.
 * @param item_slot
 *   The item's slot (< n_items), or SK_RL_NO_ITEM. A slot out of range is a
 *   caller bug: it asserts in debug builds and skips the item limit otherwise.
 * @param ip
 *   The client's IPv4 address (any byte order, used consistently).
 * @param now
 *   TSC now.
 * @param[out] wait
 *   If not NULL and the request is refused, the cycles until it could pass
 *   (for Retry-After, see sk_ratelimit_retry_after()).
 * @return
 *   SK_RL_PASS (the per-IP bucket was charged, counted in passed), or the
 *   refusal reason (counted; nothing charged).
 */
enum sk_rl_verdict sk_ratelimit_admit(struct sk_ratelimit *rl, uint32_t item_slot, uint32_t ip,
				      uint64_t now, uint64_t *wait);

/**
 * sk_ratelimit_commit - charge the item and global limits for a request
 * that sk_ratelimit_admit() passed and that turned out authentic.
 *
 * Precondition: the same @p item_slot and @p now as the admit, and no other
 * call on @p rl in between; then both buckets still conform and the charge
 * cannot fail (asserted in debug builds). Never fails, counts nothing.
 */
void sk_ratelimit_commit(struct sk_ratelimit *rl, uint32_t item_slot, uint64_t now);

/**
 * sk_ratelimit_item_admit - the item limit alone, decided but not charged:
 * for the further items of a request that sk_ratelimit_admit() passed on
 * its first (a cart). Charge it with sk_ratelimit_item_commit() once the
 * request is authentic, before any other call on @p rl.
 * @return SK_RL_PASS, or SK_RL_REFUSED_ITEM (counted; @p wait, if not
 *         NULL, receives the cycles until it could pass). A slot out of
 *         range passes (asserted in debug builds).
 */
enum sk_rl_verdict sk_ratelimit_item_admit(struct sk_ratelimit *rl, uint32_t item_slot,
					   uint64_t now, uint64_t *wait);

/**
 * sk_ratelimit_item_commit - charge the item limit of @p item_slot for a
 * request that sk_ratelimit_item_admit() passed at @p now. Never fails,
 * counts nothing.
 */
void sk_ratelimit_item_commit(struct sk_ratelimit *rl, uint32_t item_slot, uint64_t now);

/**
 * sk_ratelimit_ip_take - the per-IP limit alone: charge @p ip at @p now if
 * it conforms. For requests that are not buys but still cost an HMAC (a
 * sold-out holder's retry); the item and global limits are not looked at.
 * With the per-IP limit off, always passes. Same fast path as
 * sk_ratelimit_admit().
 *
 * @return
 *   SK_RL_PASS (charged, counted in passed) or SK_RL_REFUSED_IP (counted;
 *   @p wait, if not NULL, receives the cycles until it could pass).
 */
enum sk_rl_verdict sk_ratelimit_ip_take(struct sk_ratelimit *rl, uint32_t ip, uint64_t now,
					uint64_t *wait);

/**
 * sk_ratelimit_check - decide one request and charge all three limits if it
 * passes: sk_ratelimit_admit() then sk_ratelimit_commit(). For callers that
 * have nothing to verify in between. Parameters and fast path as for
 * sk_ratelimit_admit().
 *
 * @return
 *   SK_RL_PASS (the request was charged to all three), or the refusal reason
 *   (counted; nothing charged).
 */
enum sk_rl_verdict sk_ratelimit_check(struct sk_ratelimit *rl, uint32_t item_slot, uint32_t ip,
				      uint64_t now, uint64_t *wait);

/**
 * sk_ratelimit_user_take - the per-user attempt limit: charge one attempt
 * of @p user on item slot @p item_slot at @p now if it conforms. Keyed on
 * (user, item); a 4-way set of a fixed table per lcore, one cache line.
 * A new key takes an empty or idle entry of its set; when all 4 still owe,
 * the one that owes least is taken over (counted in user_evicted): that
 * user's debt is forgotten, the price of a fixed table (see
 * docs/tokens.md). With the limit off (rate 0 or no table) always passes.
 * No allocation, no lock.
 * @return SK_RL_PASS (charged), or SK_RL_REFUSED_USER (counted; @p wait,
 *         if not NULL, receives the cycles until it could pass).
 */
enum sk_rl_verdict sk_ratelimit_user_take(struct sk_ratelimit *rl, uint64_t user,
					  uint32_t item_slot, uint64_t now, uint64_t *wait);

/**
 * sk_ratelimit_reconfigure - a live change of the rates and bursts: every
 * bucket gets its new shape and keeps its state (its tat), so a client
 * that owed still owes, and a limit turned on starts full. The per-IP and
 * per-user limits can be turned on only if their tables were made
 * (ip_slots, user_slots non-zero at init). Per-item limits set with
 * sk_ratelimit_item_set() are replaced by the new default. Owning lcore
 * only, between requests.
 * @return 0, or -EINVAL (a burst above SK_RL_BURST_MAX; nothing changed).
 */
int sk_ratelimit_reconfigure(struct sk_ratelimit *rl, const struct sk_ratelimit_limits *l);

/**
 * sk_ratelimit_stats_get - this limiter's counters (live; read-only for the
 * caller; valid as long as the limiter).
 */
const struct sk_ratelimit_stats *sk_ratelimit_stats_get(const struct sk_ratelimit *rl);

/**
 * sk_ratelimit_retry_after - seconds for a Retry-After header: @p wait
 * cycles rounded up, at least 1, at most SK_RL_RETRY_AFTER_MAX.
 */
uint32_t sk_ratelimit_retry_after(uint64_t wait, uint64_t hz);

#ifdef __cplusplus
}
#endif

#endif /* SK_RATELIMIT_H */
