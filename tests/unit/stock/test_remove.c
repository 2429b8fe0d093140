/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the engine's operator calls (stock/sk_stock.h): removal of
 * unsold units (sk_stock_remove / sk_stock_unremove), pause and resume
 * (sk_stock_pause), the end moved later (sk_stock_set_end). Plain memory,
 * no EAL: single-threaded contracts, then buyer threads racing a remover
 * (no unit sold twice or removed twice, none stranded, the accounting
 * exact, the sold-out flag up exactly when nothing is left).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sk_stock.h"
#include "sk_test.h"

static struct sk_item *
new_item(uint64_t total, uint32_t nlcores)
{
	struct sk_item *it = aligned_alloc(SK_CACHE_LINE, sizeof(*it));
	struct sk_stock_conf c = {.id = 7,
				  .per_user_limit = 1,
				  .end_ns = INT64_MAX,
				  .total = total,
				  .nlcores = nlcores};

	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(sk_stock_init(it, &c), 0);
	return it;
}

static uint64_t
removed(const struct sk_item *it)
{
	return atomic_load(&((struct sk_item *)it)->removed);
}

/* ---------------------------------------------------------- single-threaded */

START_TEST(remove_takes_only_unsold)
{
	struct sk_item *it = new_item(20, 2);
	uint64_t unsold = 0;

	/* 3 sold on lcore 0 and 2 on lcore 1: units sit in both buckets. */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(sk_stock_take(it, 1, 1), SK_STOCK_OK);
	ck_assert_uint_gt(atomic_load(&it->bucket[0].avail), 0);
	ck_assert_uint_gt(atomic_load(&it->bucket[1].avail), 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 15);

	/* More than unsold: nothing moves, the count says how many are. */
	ck_assert_int_eq(sk_stock_remove(it, 16, &unsold), SK_STOCK_SHORT);
	ck_assert_uint_eq(unsold, 15);
	ck_assert_uint_eq(sk_stock_remaining(it), 15);
	ck_assert_uint_eq(removed(it), 0);
	ck_assert(sk_stock_check(it));

	/* 14 of 15: the pool and the buckets give them; the sold stay sold. */
	ck_assert_int_eq(sk_stock_remove(it, 14, NULL), SK_STOCK_OK);
	ck_assert_uint_eq(removed(it), 14);
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert_uint_eq(sk_stock_sold(it), 5);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert(sk_stock_check(it));
	/* The last unit sells; the next buyer finds nothing. */
	unsigned who = atomic_load(&it->bucket[0].avail) ? 0 : 1;
	ck_assert_int_eq(sk_stock_take(it, who, 1), SK_STOCK_OK);
	ck_assert_int_eq(sk_stock_take(it, 1 - who, 1), SK_STOCK_SOLD_OUT);
	ck_assert_int_eq(sk_stock_remove(it, 1, &unsold), SK_STOCK_SHORT);
	ck_assert_uint_eq(unsold, 0);

	/* A return makes a unit unsold again: removable; removing the last
	 * raises the flag at once (no buyer needed to find out). */
	uint32_t ret = 0;
	ck_assert_int_eq(sk_stock_return(it, &ret, 1, 1), 0);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_int_eq(sk_stock_remove(it, 1, NULL), SK_STOCK_OK);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_uint_eq(removed(it), 15);
	ck_assert(sk_stock_check(it));

	/* Unremove: the units come back on sale, the flag goes down. */
	ck_assert_int_eq(sk_stock_unremove(it, 16), -ERANGE);
	ck_assert_int_eq(sk_stock_unremove(it, 0), -EINVAL);
	ck_assert_int_eq(sk_stock_unremove(it, 2), 0);
	ck_assert(!sk_stock_is_sold_out(it));
	ck_assert_uint_eq(sk_stock_remaining(it), 2);
	ck_assert_uint_eq(removed(it), 13);
	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_stock_take(it, 0, 1), SK_STOCK_OK);

	/* A restock after a removal adds to what is left. */
	ck_assert_int_eq(sk_stock_add(it, 4), 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	ck_assert(sk_stock_check(it));

	ck_assert_int_eq(sk_stock_remove(it, 0, NULL), -EINVAL);
	ck_assert_int_eq(sk_stock_remove(it, SK_STOCK_MAX_UNITS + 1, NULL), -EINVAL);
	free(it);
}
END_TEST

START_TEST(check_sees_removed)
{
	struct sk_item *it = new_item(10, 1);

	ck_assert_int_eq(sk_stock_remove(it, 4, NULL), SK_STOCK_OK);
	ck_assert(sk_stock_check(it));
	/* Units that vanish without being counted break the books. */
	atomic_fetch_sub(&it->removed, 1);
	ck_assert(!sk_stock_check(it));
	atomic_fetch_add(&it->removed, 1);
	ck_assert(sk_stock_check(it));
	free(it);
}
END_TEST

START_TEST(pause_resume_and_end)
{
	struct sk_item *it = new_item(5, 1);

	ck_assert_int_eq(sk_stock_pause(it, false), 0); /* already selling */
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_ACTIVE);
	ck_assert_int_eq(sk_stock_pause(it, true), 0);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);
	ck_assert_int_eq(sk_stock_pause(it, true), 0);
	/* The stock does not move while paused: the buy path checks the
	 * state first (sk_buy); the engine's units are untouched. */
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	ck_assert_int_eq(sk_stock_pause(it, false), 0);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_ACTIVE);
	/* Closed is final: neither pause nor resume. */
	atomic_store(&it->state, SK_ITEM_CLOSED);
	ck_assert_int_eq(sk_stock_pause(it, true), -EPERM);
	ck_assert_int_eq(sk_stock_pause(it, false), -EPERM);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_CLOSED);

	ck_assert_int_eq(sk_stock_end_ns(it), INT64_MAX);
	sk_stock_set_end(it, 12345);
	ck_assert_int_eq(sk_stock_end_ns(it), 12345);
	free(it);
}
END_TEST

/* ------------------------------------------------------------------- races */

#define BUYERS	  2
#define UNITS	  100000
#define QTY_MAX	  3
#define REM_MAX	  40
#define REM_TRIES 5000000 /* the remover's bound: far more than it needs */

/* pace - a little work between two calls, so that a round outlasts a
 * scheduler time slice and the threads really run side by side. */
static void
pace(void)
{
	for (volatile unsigned i = 0; i < 200; i++)
		;
}

struct race {
	struct sk_item *it;
	pthread_barrier_t go;
	_Atomic int stop;
	uint64_t bought[BUYERS];
	uint64_t removed_ok, unremoved;
	uint64_t ok_answers, short_answers, busy_answers;
};

struct buyer_arg {
	struct race *r;
	unsigned lcore;
};

static void *
buyer(void *arg)
{
	const struct buyer_arg *a = arg;
	struct race *r = a->r;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (a->lcore + 1);

	pthread_barrier_wait(&r->go);
	/* Until the remover has stopped and the item reads sold out; bounded
	 * by a number of fruitless tries after the stop. */
	for (unsigned misses = 0; misses < 1000000;) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t qty = 1 + (uint32_t)((seed >> 33) % QTY_MAX);
		int s = sk_stock_take(r->it, a->lcore, qty);
		bool stopped = atomic_load(&r->stop);

		pace();
		if (s == SK_STOCK_OK)
			r->bought[a->lcore] += qty;
		else if (s == SK_STOCK_SOLD_OUT && stopped)
			break;
		else if (stopped)
			misses++;
	}
	return NULL;
}

static void *
remover(void *arg)
{
	struct race *r = arg;
	uint64_t seed = 42;

	pthread_barrier_wait(&r->go);
	for (unsigned i = 0; i < REM_TRIES && sk_stock_remaining(r->it) > 0; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t n = 1 + (seed >> 33) % REM_MAX;
		int s = sk_stock_remove(r->it, n, NULL);

		pace();
		if (s == SK_STOCK_OK) {
			r->ok_answers++;
			r->removed_ok += n;
			/* now and then a removal the store never took: given back */
			if ((seed >> 20) % 4 == 0 && sk_stock_unremove(r->it, n) == 0) {
				r->removed_ok -= n;
				r->unremoved += n;
			}
		} else if (s == SK_STOCK_SHORT) {
			r->short_answers++;
		} else {
			ck_assert_int_eq(s, SK_STOCK_BUSY);
			r->busy_answers++;
		}
	}
	atomic_store(&r->stop, 1);
	return NULL;
}

START_TEST(buyers_race_a_remover)
{
	uint64_t removals = 0, sales = 0;

	for (unsigned round = 0; round < 10; round++) {
		struct race r = {.it = new_item(UNITS, BUYERS)};
		struct buyer_arg args[BUYERS];
		pthread_t b[BUYERS], rm;

		ck_assert_int_eq(pthread_barrier_init(&r.go, NULL, BUYERS + 1), 0);
		for (unsigned i = 0; i < BUYERS; i++) {
			args[i] = (struct buyer_arg){.r = &r, .lcore = i};
			ck_assert_int_eq(pthread_create(&b[i], NULL, buyer, &args[i]), 0);
		}
		ck_assert_int_eq(pthread_create(&rm, NULL, remover, &r), 0);
		ck_assert_int_eq(pthread_join(rm, NULL), 0);
		for (unsigned i = 0; i < BUYERS; i++)
			ck_assert_int_eq(pthread_join(b[i], NULL), 0);
		pthread_barrier_destroy(&r.go);

		/* Every unit was sold or removed exactly once: none twice, none
		 * left behind a raised flag. */
		uint64_t sold = r.bought[0] + r.bought[1];
		ck_assert_uint_eq(removed(r.it), r.removed_ok);
		ck_assert_uint_eq(sk_stock_sold(r.it), sold);
		ck_assert_uint_eq(sold + r.removed_ok + sk_stock_remaining(r.it), UNITS);
		ck_assert(sk_stock_check(r.it));
		/* The remover ran to the end (nothing left) within its bound;
		 * the buyers stop only at sold out. */
		ck_assert_uint_eq(sk_stock_remaining(r.it), 0);
		ck_assert(sk_stock_is_sold_out(r.it));
		removals += r.ok_answers;
		sales += sold;
		free(r.it);
	}
	/* Both sides did take units while the other ran. */
	ck_assert_uint_gt(removals, 100);
	ck_assert_uint_gt(sales, 1000);
}
END_TEST

static Suite *
remove_suite(void)
{
	Suite *s = suite_create("stock-remove");
	TCase *tc = tcase_create("contracts");

	tcase_add_test(tc, remove_takes_only_unsold);
	tcase_add_test(tc, check_sees_removed);
	tcase_add_test(tc, pause_resume_and_end);
	suite_add_tcase(s, tc);

	tc = tcase_create("races");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, buyers_race_a_remover);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(remove_suite)
