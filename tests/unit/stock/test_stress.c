/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concurrency stress of the stock engine, built so that it cannot pass by
 * luck: T buyer threads (2, and 8 oversubscribed on a 2-core machine) race
 * 1,000,000 buy attempts from 200,000 users - a fifth of them retrying many
 * times, some buying 2-3 units, some buying two-item carts - for 10,000 units
 * over 3 items, while they cancel each other's orders and a control thread
 * drains the order rings and confirms orders (racing the cancels on the
 * status bytes). Afterwards every unit, order and user is accounted for.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sk_buy.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"

#define ATTEMPTS     1000000u
#define USERS	     200000u
#define RETRIERS     (USERS / 5)
#define NITEMS	     3
#define MAX_THREADS  8
#define MAX_WON	     32768u /* orders one thread can win */
#define MAX_RECS     (1u << 18)
#define MAX_CANCELS  2000u /* per thread */
#define CANCEL_EVERY 128u  /* attempts between two cancels */
#define RING_SIZE    65536u
#define EPOCH	     1764000001u
#define SEED	     0x5eed5eedULL

static const struct {
	uint32_t id, limit;
	uint64_t total;
} item_def[NITEMS] = {{101, 1, 5000}, {102, 3, 3000}, {103, 5, 2000}};

struct won {
	struct sk_order_rec rec[2];
	unsigned n;
};

struct buyer {
	pthread_t tid;
	unsigned idx;
	struct sk_buy_lcore *lc; /* S.arena.lc[idx] */
	struct won *won;
	_Atomic uint32_t nwon; /* published to the other threads */
	uint64_t outcome[SK_BUY_STATUS_MAX];
	uint64_t cancelled_units[NITEMS];
	uint32_t cancels;
	uint32_t errors;
} sk_cache_aligned;

static struct {
	unsigned nthreads;
	struct sk_test_arena arena; /* one lcore, ring and buy context per thread */
	struct sk_item *item[NITEMS];
	struct buyer buyer[MAX_THREADS];
	struct sk_order_rec *recs; /* drained by the control thread */
	uint32_t nrecs;
	_Atomic unsigned running;
	pthread_barrier_t start;
	uint64_t confirmed;
} S;

static inline uint64_t
rnd(uint64_t *s)
{
	/* xorshift64*: fixed seeds make failures reproducible */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static int
item_index(uint32_t id)
{
	for (int i = 0; i < NITEMS; i++)
		if (item_def[i].id == id)
			return i;
	return -1;
}

/* Cancel a random published order of another buyer (they may race). */
static void
cancel_someone(struct buyer *b, uint64_t *seed)
{
	struct buyer *v = &S.buyer[(b->idx + 1 + rnd(seed) % (S.nthreads - 1)) % S.nthreads];
	uint32_t n = atomic_load_explicit(&v->nwon, memory_order_acquire);

	if (n == 0)
		return;
	struct won w = v->won[rnd(seed) % n];
	int rc = sk_buy_cancel(S.arena.shm, w.rec, w.n, SK_ORDER_CANCELLED);
	if (rc == 0) {
		for (unsigned i = 0; i < w.n; i++) {
			if (w.rec[i].returned != w.rec[i].qty)
				b->errors++;
			b->cancelled_units[item_index(w.rec[i].item)] += w.rec[i].qty;
		}
		b->cancels++;
	} else if (rc != -EALREADY) {
		b->errors++;
	}
}

static void *
buyer_main(void *arg)
{
	struct buyer *b = arg;
	uint64_t seed = SEED + b->idx * UINT64_C(0x9e3779b97f4a7c15);
	uint32_t attempts = ATTEMPTS / S.nthreads + (b->idx < ATTEMPTS % S.nthreads);

	pthread_barrier_wait(&S.start);

	for (uint32_t a = 0; a < attempts; a++) {
		uint64_t r = rnd(&seed);
		struct sk_buy_req req = {
			.user = (r & 1) ? 1 + (r >> 8) % RETRIERS
					: 1 + RETRIERS + (r >> 8) % (USERS - RETRIERS),
			.client = {.family = SK_ADDR_V6,
				   .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = (uint8_t)r}},
			.now_ns = (int64_t)a,
		};
		struct sk_buy_line lines[2];
		unsigned n = 1;
		uint64_t order;

		r = rnd(&seed);
		lines[0].item = S.item[r % NITEMS];
		lines[0].qty = (r >> 8) % 8 == 0 ? 2 + (r >> 16) % 2 : 1;
		if ((r >> 24) % 20 == 0) { /* 5 % two-item carts */
			lines[0].qty = 1;
			lines[1].item = S.item[(r % NITEMS + 1 + (r >> 32) % 2) % NITEMS];
			lines[1].qty = 1;
			n = 2;
		}

		enum sk_buy_status s = sk_buy(b->lc, &req, lines, n, &order);
		b->outcome[s]++;
		if (s == SK_BUY_OK) {
			uint32_t k = atomic_load_explicit(&b->nwon, memory_order_relaxed);
			struct won *w = &b->won[k];
			w->n = n;
			for (unsigned i = 0; i < n; i++)
				w->rec[i] = (struct sk_order_rec){.id = order,
								  .user = req.user,
								  .item = lines[i].item->id,
								  .qty = (uint16_t)lines[i].qty,
								  .line = (uint8_t)i,
								  .nlines = (uint8_t)n};
			atomic_store_explicit(&b->nwon, k + 1, memory_order_release);
			if (k + 1 >= MAX_WON)
				break;
		} else if ((s == SK_BUY_DUPLICATE || s == SK_BUY_LIMIT) && order == 0 &&
			   s == SK_BUY_DUPLICATE) {
			b->errors++; /* a duplicate answer must carry the winner's order */
		} else if (s == SK_BUY_INVALID || s == SK_BUY_FULL) {
			b->errors++;
		}
		/* Returns all through the sale: the sold-out flag is raised and
		 * cleared many times while buyers race on it. */
		if (a % CANCEL_EVERY == CANCEL_EVERY - 1 && b->cancels < MAX_CANCELS)
			cancel_someone(b, &seed);
	}
	return NULL;
}

/* The control plane's part: drain every ring, confirm queued orders. */
static unsigned
drain_all(void)
{
	struct sk_status st;
	unsigned got = 0;

	sk_shm_status(S.arena.shm, &st);
	for (unsigned t = 0; t < S.nthreads; t++) {
		struct sk_order_rec *dst = &S.recs[S.nrecs];
		unsigned n = rte_ring_sc_dequeue_burst_elem(S.arena.ring[t], dst, sizeof(*dst), 256,
							    NULL);
		for (unsigned i = 0; i < n; i++)
			if (dst[i].line == 0 && sk_status_move(&st, dst[i].id, SK_ORDER_QUEUED,
							       SK_ORDER_CONFIRMED) == 0)
				S.confirmed++;
		S.nrecs += n;
		got += n;
		SK_ASSERT(S.nrecs + 256 < MAX_RECS);
	}
	return got;
}

static void *
control_main(void *arg)
{
	(void)arg;
	while (atomic_load(&S.running))
		drain_all();
	while (drain_all() > 0)
		;
	return NULL;
}

static int
cmp_rec_id(const void *a, const void *b)
{
	const struct sk_order_rec *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (int)x->line - (int)y->line;
}

static int
cmp_rec_user(const void *a, const void *b)
{
	const struct sk_order_rec *x = a, *y = b;

	if (x->item != y->item)
		return x->item < y->item ? -1 : 1;
	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	return 0;
}

static void
setup(unsigned nthreads)
{
	struct sk_shm_conf c = {.nlcores = nthreads,
				.max_items = NITEMS,
				.dedup_slots = 3u << 19,
				.status_bits = 16,
				.epoch = EPOCH};

	memset(&S, 0, sizeof(S));
	S.nthreads = nthreads;
	sk_test_arena_init(&S.arena, &c);
	sk_test_arena_rings(&S.arena, RING_SIZE);
	for (int i = 0; i < NITEMS; i++) {
		struct sk_stock_conf ic = {.id = item_def[i].id,
					   .per_user_limit = item_def[i].limit,
					   .end_ns = INT64_MAX,
					   .price = 100,
					   .total = item_def[i].total,
					   /* small batches: more refills and steals */
					   .batch_max = 16};
		ck_assert_int_eq(sk_shm_item_add(S.arena.shm, &ic, 1u << 19, &S.item[i]), 0);
	}
	for (unsigned t = 0; t < nthreads; t++) {
		S.buyer[t].lc = &S.arena.lc[t];
		S.buyer[t].idx = t;
		S.buyer[t].won = calloc(MAX_WON, sizeof(struct won));
		ck_assert_ptr_nonnull(S.buyer[t].won);
	}
	S.recs = calloc(MAX_RECS, sizeof(*S.recs));
	ck_assert_ptr_nonnull(S.recs);
}

static void
teardown(void)
{
	for (unsigned t = 0; t < S.nthreads; t++)
		free(S.buyer[t].won);
	free(S.recs);
	sk_test_arena_fini(&S.arena);
}

static void
run_stress(unsigned nthreads)
{
	pthread_t ctl;

	setup(nthreads);
	atomic_store(&S.running, 1);
	ck_assert_int_eq(pthread_barrier_init(&S.start, NULL, nthreads), 0);
	ck_assert_int_eq(pthread_create(&ctl, NULL, control_main, NULL), 0);
	for (unsigned t = 0; t < nthreads; t++)
		ck_assert_int_eq(pthread_create(&S.buyer[t].tid, NULL, buyer_main, &S.buyer[t]), 0);
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(S.buyer[t].tid, NULL);
	atomic_store(&S.running, 0);
	pthread_join(ctl, NULL);
	pthread_barrier_destroy(&S.start);

	/* 1. every attempt has exactly one outcome; no impossible ones */
	uint64_t outcomes = 0, ok = 0, cancels = 0;
	if (getenv("SK_STRESS_VERBOSE"))
		for (unsigned t = 0; t < nthreads; t++)
			fprintf(stderr,
				"thread %u: ok %lu sold_out %lu dup %lu limit %lu busy %lu short "
				"%lu cancels %u\n",
				t, S.buyer[t].outcome[SK_BUY_OK],
				S.buyer[t].outcome[SK_BUY_SOLD_OUT],
				S.buyer[t].outcome[SK_BUY_DUPLICATE],
				S.buyer[t].outcome[SK_BUY_LIMIT], S.buyer[t].outcome[SK_BUY_BUSY],
				S.buyer[t].outcome[SK_BUY_SHORT], S.buyer[t].cancels);
	uint64_t cancelled[NITEMS] = {0};
	for (unsigned t = 0; t < nthreads; t++) {
		struct buyer *b = &S.buyer[t];
		ck_assert_uint_eq(b->errors, 0);
		for (int s = 0; s < SK_BUY_STATUS_MAX; s++)
			outcomes += b->outcome[s];
		ok += b->outcome[SK_BUY_OK];
		cancels += b->cancels;
		for (int i = 0; i < NITEMS; i++)
			cancelled[i] += b->cancelled_units[i];
	}
	ck_assert_uint_eq(outcomes, ATTEMPTS);
	ck_assert_uint_gt(cancels, 1000);

	/* 2. every order id unique, found exactly once, all lines present */
	qsort(S.recs, S.nrecs, sizeof(*S.recs), cmp_rec_id);
	uint64_t ids = 0;
	for (uint32_t i = 0; i < S.nrecs; i++) {
		const struct sk_order_rec *r = &S.recs[i];
		if (r->line == 0) {
			ids++;
			ck_assert(i == 0 || S.recs[i - 1].id != r->id);
			for (unsigned l = 1; l < r->nlines; l++)
				ck_assert(i + l < S.nrecs && S.recs[i + l].id == r->id &&
					  S.recs[i + l].line == l);
		}
	}
	ck_assert_uint_eq(ids, ok);

	/* 3. status table: confirmed or cancelled, nothing lost or extra */
	struct sk_status st;
	sk_shm_status(S.arena.shm, &st);
	uint64_t live[NITEMS] = {0}, dead[NITEMS] = {0}, ncancelled = 0;
	for (uint32_t i = 0; i < S.nrecs; i++) {
		unsigned s = sk_status_get(&st, S.recs[i].id);
		int k = item_index(S.recs[i].item);
		ck_assert(s == SK_ORDER_CONFIRMED || s == SK_ORDER_CANCELLED);
		if (s == SK_ORDER_CANCELLED) {
			dead[k] += S.recs[i].qty;
			ncancelled += S.recs[i].line == 0;
		} else {
			live[k] += S.recs[i].qty;
		}
	}
	ck_assert_uint_eq(ncancelled, cancels);
	/* each order confirmed at most once; only cancelled ones may have
	 * skipped it (cancelled while still queued) */
	ck_assert_uint_le(S.confirmed, ids);
	ck_assert_uint_ge(S.confirmed, ids - ncancelled);
	uint64_t nonzero = 0;
	for (size_t i = 0; i < ((size_t)st.nlcores << st.bits); i++)
		nonzero += atomic_load(&st.base[i]) != SK_ORDER_NONE;
	ck_assert_uint_eq(nonzero, ids);

	/* returned units were sold again */
	uint64_t all = 0, total = 0;
	for (int k = 0; k < NITEMS; k++)
		all += live[k] + dead[k], total += item_def[k].total;
	ck_assert_uint_gt(all, total);

	/* 4. units: sold - returned equals what the rings and status say */
	for (int k = 0; k < NITEMS; k++) {
		struct sk_item *it = S.item[k];
		ck_assert_uint_eq(sk_stock_sold(it), live[k]);
		ck_assert_uint_eq(atomic_load(&it->returned), dead[k]);
		ck_assert_uint_eq(dead[k], cancelled[k]);
		ck_assert(sk_stock_check(it));
		ck_assert_uint_eq(it->total, live[k] + sk_stock_remaining(it));
	}

	/* 5. no user above its limit; the dedup set agrees with the orders */
	qsort(S.recs, S.nrecs, sizeof(*S.recs), cmp_rec_user);
	for (uint32_t i = 0; i < S.nrecs;) {
		uint32_t j = i;
		uint64_t held = 0;
		for (; j < S.nrecs && cmp_rec_user(&S.recs[i], &S.recs[j]) == 0; j++)
			if (sk_status_get(&st, S.recs[j].id) != SK_ORDER_CANCELLED)
				held += S.recs[j].qty;
		int k = item_index(S.recs[i].item);
		ck_assert_uint_le(held, item_def[k].limit);
		struct sk_dedup d;
		uint32_t units;
		sk_shm_dedup(S.arena.shm, S.item[k], &d);
		ck_assert_int_eq(sk_dedup_lookup(&d, S.recs[i].user, &units, NULL), 0);
		ck_assert_uint_eq(units, held);
		i = j;
	}

	/* 6. what is left sells to the last unit, then - only then - sold out */
	for (int k = 0; k < NITEMS; k++) {
		struct sk_item *it = S.item[k];
		uint64_t left = sk_stock_remaining(it), bought = 0;
		for (uint64_t u = 0; u < left + 1; u++) {
			struct sk_buy_req req = {.user = 10000000 + u};
			struct sk_buy_line l = {.item = it, .qty = 1};
			uint64_t order;
			enum sk_buy_status s =
				sk_buy(S.buyer[u % nthreads].lc, &req, &l, 1, &order);
			if (s == SK_BUY_OK)
				bought++;
			else
				ck_assert_int_eq(s, SK_BUY_SOLD_OUT);
		}
		ck_assert_uint_eq(bought, left);
		ck_assert(sk_stock_is_sold_out(it));
		ck_assert_uint_eq(sk_stock_remaining(it), 0);
		ck_assert_uint_eq(sk_stock_sold(it), it->total);
		ck_assert(sk_stock_check(it));
	}
	teardown();
}

/*
 * Sell-out rounds: the race that strands units (a refill between its pool
 * CAS and its bucket credit while another core scans) has a tiny window, so
 * hit it many times: each round restocks a few units, every thread takes
 * until it is refused, and then the item must be empty whenever the flag is
 * up - and must be flagged, since everyone was refused.
 */
#define ROUNDS 3000

static struct {
	struct sk_item *it;
	unsigned nthreads;
	pthread_barrier_t bar;
	_Atomic uint64_t taken;
	uint64_t stranded, unflagged, bad_invariant;
} R;

static void *
round_main(void *arg)
{
	unsigned lcore = (unsigned)(uintptr_t)arg;
	uint64_t seed = SEED ^ lcore;

	for (int round = 0; round < ROUNDS; round++) {
		if (lcore == 0)
			SK_ASSERT(sk_stock_add(R.it, 1 + rnd(&seed) % (4 * R.nthreads)) == 0);
		pthread_barrier_wait(&R.bar);
		for (int i = 0; i < 1000; i++) {
			/* as sk_buy: the flag refuses before any take */
			if (sk_stock_is_sold_out(R.it))
				break;
			int rc = sk_stock_take(R.it, lcore, 1);
			if (rc == SK_STOCK_OK)
				atomic_fetch_add(&R.taken, 1);
			else if (rc == SK_STOCK_SOLD_OUT)
				break;
		}
		pthread_barrier_wait(&R.bar);
		if (lcore == 0) {
			bool flag = sk_stock_is_sold_out(R.it);
			uint64_t left = sk_stock_remaining(R.it);
			R.stranded += flag && left != 0;
			R.unflagged += !flag && left == 0;
			R.bad_invariant += !sk_stock_check(R.it);
			if (left != 0) /* sell the stranded units so the next round starts clean */
				while (sk_stock_take(R.it, 0, 1) == SK_STOCK_OK)
					atomic_fetch_add(&R.taken, 1);
		}
		pthread_barrier_wait(&R.bar);
	}
	return NULL;
}

static void
run_rounds(unsigned nthreads)
{
	struct sk_stock_conf c = {.id = 9,
				  .per_user_limit = 1,
				  .end_ns = INT64_MAX,
				  .total = 0,
				  .nlcores = nthreads,
				  .batch_max = 4};
	pthread_t tid[MAX_THREADS];

	memset(&R, 0, sizeof(R));
	R.nthreads = nthreads;
	R.it = aligned_alloc(SK_CACHE_LINE, sizeof(*R.it));
	ck_assert_int_eq(sk_stock_init(R.it, &c), 0);
	ck_assert_int_eq(pthread_barrier_init(&R.bar, NULL, nthreads), 0);
	for (unsigned t = 0; t < nthreads; t++)
		ck_assert_int_eq(pthread_create(&tid[t], NULL, round_main, (void *)(uintptr_t)t),
				 0);
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	pthread_barrier_destroy(&R.bar);

	ck_assert_uint_eq(R.stranded, 0);
	ck_assert_uint_eq(R.unflagged, 0);
	ck_assert_uint_eq(R.bad_invariant, 0);
	ck_assert_uint_eq(atomic_load(&R.taken), atomic_load(&R.it->added));
	free(R.it);
}

START_TEST(sellout_rounds_2_threads)
{
	run_rounds(2);
}
END_TEST

START_TEST(sellout_rounds_8_threads)
{
	run_rounds(8);
}
END_TEST

START_TEST(stress_2_threads)
{
	run_stress(2);
}
END_TEST

START_TEST(stress_8_threads)
{
	run_stress(8);
}
END_TEST

static Suite *
stress_suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("stress");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, stress_2_threads);
	tcase_add_test(tc, stress_8_threads);
	tcase_add_test(tc, sellout_rounds_2_threads);
	tcase_add_test(tc, sellout_rounds_8_threads);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(stress_suite, "test-stress")
