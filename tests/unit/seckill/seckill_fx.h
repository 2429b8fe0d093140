/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill_fx.h - the fixture of the seckill route tests (test_seckill.c,
 * test_cart.c): one lcore's arena and order ring, a token key, the
 * identity settings, and a rate limiter when asked; a clock fixed at NOW.
 * Header-only, for the tests' main thread.
 */
#ifndef SECKILL_FX_H
#define SECKILL_FX_H

#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "sk_seckill.h"
#include "sk_test_arena.h"

#define EPOCH  1764000002u
#define NOW_S  1800000000LL
#define NOW_NS (NOW_S * 1000000000LL)
#define HZ     1000000000ULL
#define SECRET "a-test-secret-of-32-bytes-length"

struct seckill_fx {
	struct sk_test_arena arena; /* one lcore, its order ring */
	struct sk_token_key *key;
	struct sk_seckill_conf conf;
	struct sk_seckill_lcore lc;
	struct sk_ratelimit *rl;
};

/* seckill_fx_limits - the limiter settings of the tests: the defaults at
 * HZ, 8 item slots, one lcore, 1 request/s per address with a burst of 3. */
static inline struct sk_ratelimit_config
seckill_fx_limits(void)
{
	struct sk_ratelimit_config rc;

	sk_ratelimit_config_defaults(&rc);
	rc.hz = HZ;
	rc.n_items = 8;
	rc.n_lcores = 1;
	rc.ip_rate = 1;
	rc.ip_burst = 3;
	return rc;
}

/* seckill_fx_setup - set @f up: auth on or off, a limiter of @rc (NULL:
 * none). No item yet: seckill_fx_item(). */
static inline void
seckill_fx_setup(struct seckill_fx *f, bool auth, const struct sk_ratelimit_config *rc)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 8,
				.dedup_slots = 8192,
				.status_bits = 12,
				.epoch = EPOCH};

	sk_test_arena_init(&f->arena, &c);
	sk_test_arena_rings(&f->arena, 1024);
	ck_assert_int_eq(sk_token_key_create(SECRET, strlen(SECRET), &f->key), 0);
	f->conf = (struct sk_seckill_conf){.auth = auth, .token_skew_s = 5, .key = f->key};
	f->rl = NULL;
	if (rc != NULL)
		ck_assert_int_eq(sk_ratelimit_create(rc, &f->rl), 0);
	ck_assert_int_eq(sk_seckill_lcore_init(&f->lc, f->arena.shm, 0, f->arena.ring[0], &f->conf,
					       f->rl, HZ),
			 0);
}

/* seckill_fx_item - add item @id: @total units, @limit per user, sale window
 * [@start, @end) in wall-clock ns, price 500. */
static inline struct sk_item *
seckill_fx_item(struct seckill_fx *f, uint32_t id, uint64_t total, uint32_t limit, int64_t start,
		int64_t end)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = limit,
				  .start_ns = start,
				  .end_ns = end,
				  .price = 500,
				  .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(f->arena.shm, &c, 0, &it), 0);
	return it;
}

/* seckill_fx_teardown - free what seckill_fx_setup() made. */
static inline void
seckill_fx_teardown(struct seckill_fx *f)
{
	sk_token_key_free(f->key);
	sk_ratelimit_free(f->rl);
	sk_test_arena_fini(&f->arena);
}

#endif /* SECKILL_FX_H */
