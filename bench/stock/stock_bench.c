/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-stock-bench: how fast the stock engine decides.
 *
 * Prints, for a release build on this machine:
 *   buy (stock take)     sk_stock_take of 1 unit, 1 thread, own bucket
 *   buy (stock take) 2t  the same on 2 threads, 2 lcores, one item
 *   sold-out rejection   item lookup by id + sold-out flag: the dataplane's
 *                        first check, the 99% answer (and sk_buy on a
 *                        sold-out item, for comparison)
 *   dedup insert         sk_dedup_acquire + commit of a new user into a
 *                        2^20-slot slice (a 100,000-unit sale), half filled
 *   full buy             sk_buy: dedup + stock + order id + status + ring
 *                        (ring drained every 512 buys, drain time included)
 * Each figure is the median of 5 runs. --json prints one JSON object.
 */
#include <getopt.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "bench_util.h"
#include "sk_buy.h"
#include "sk_test_eal.h"

#define RUNS 5

static struct sk_shm *
new_arena(uint32_t nlcores, uint64_t dedup_slots)
{
	struct sk_shm_conf c = {.nlcores = nlcores,
				.max_items = 4,
				.dedup_slots = dedup_slots,
				.status_bits = 24,
				.epoch = (uint32_t)time(NULL)};
	size_t sz = sk_shm_size(&c);
	void *mem = bench_huge_alloc(sz, NULL);

	return mem != NULL ? sk_shm_init(mem, sz, &c) : NULL;
}

static struct sk_item *
add_item(struct sk_shm *shm, uint32_t id, uint64_t total, uint64_t dedup)
{
	struct sk_stock_conf c = {
		.id = id, .per_user_limit = 1, .end_ns = INT64_MAX, .price = 1, .total = total};
	struct sk_item *it = NULL;

	if (sk_shm_item_add(shm, &c, dedup, &it) != 0) {
		fprintf(stderr, "item %u: cannot add\n", id);
		exit(1);
	}
	return it;
}

/* ------------------------------------------------------------ measures */

static double
bench_take_1t(uint64_t n)
{
	struct sk_shm *shm = new_arena(2, SK_SHM_DEDUP_MIN * 4);
	struct sk_item *it = add_item(shm, 1, UINT64_C(1) << 40, SK_SHM_DEDUP_MIN);
	double t0 = bench_now_s();

	for (uint64_t i = 0; i < n; i++)
		if (sk_unlikely(sk_stock_take(it, 0, 1) != SK_STOCK_OK))
			abort();
	double dt = bench_now_s() - t0;
	free(shm);
	return (double)n / dt;
}

struct take_arg {
	struct sk_item *it;
	unsigned lcore;
	uint64_t n;
	pthread_barrier_t *bar;
};

static void *
take_thread(void *p)
{
	struct take_arg *a = p;

	bench_pin((int)a->lcore);
	pthread_barrier_wait(a->bar);
	for (uint64_t i = 0; i < a->n; i++)
		if (sk_unlikely(sk_stock_take(a->it, a->lcore, 1) != SK_STOCK_OK))
			abort();
	return NULL;
}

static double
bench_take_2t(uint64_t n)
{
	struct sk_shm *shm = new_arena(2, SK_SHM_DEDUP_MIN * 4);
	struct sk_item *it = add_item(shm, 1, UINT64_C(1) << 40, SK_SHM_DEDUP_MIN);
	pthread_barrier_t bar;
	pthread_t t[2];
	struct take_arg a[2];

	pthread_barrier_init(&bar, NULL, 3);
	for (unsigned i = 0; i < 2; i++) {
		a[i] = (struct take_arg){.it = it, .lcore = i, .n = n, .bar = &bar};
		pthread_create(&t[i], NULL, take_thread, &a[i]);
	}
	pthread_barrier_wait(&bar);
	double t0 = bench_now_s();
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	double dt = bench_now_s() - t0;
	pthread_barrier_destroy(&bar);
	free(shm);
	return 2.0 * (double)n / dt;
}

static double
bench_soldout(struct rte_ring *ring, uint64_t n)
{
	struct sk_shm *shm = new_arena(1, SK_SHM_DEDUP_MIN * 4);
	struct sk_item *it = add_item(shm, 1, 0, SK_SHM_DEDUP_MIN);
	struct sk_buy_lcore lc;
	uint64_t order, refused = 0;

	sk_buy_lcore_init(&lc, shm, 0, ring);
	double t0 = bench_now_s();
	for (uint64_t i = 0; i < n; i++) {
		struct sk_buy_req r = {.user = i + 1};
		struct sk_buy_line l = {.item = it, .qty = 1};
		refused += sk_buy(&lc, &r, &l, 1, &order) == SK_BUY_SOLD_OUT;
	}
	double dt = bench_now_s() - t0;
	if (refused != n)
		abort();
	free(shm);
	return (double)n / dt;
}

/* The dataplane's first check: find the item by id, read its flag. */
static double
bench_soldout_fast(uint64_t n)
{
	struct sk_shm *shm = new_arena(1, SK_SHM_DEDUP_MIN * 4);
	uint64_t refused = 0;

	add_item(shm, 1, 0, SK_SHM_DEDUP_MIN);
	add_item(shm, 2, 0, SK_SHM_DEDUP_MIN);
	double t0 = bench_now_s();
	for (uint64_t i = 0; i < n; i++) {
		const struct sk_item *it = sk_shm_item_find(shm, 1 + (uint32_t)(i & 1));
		refused += sk_stock_is_sold_out(it);
	}
	double dt = bench_now_s() - t0;
	if (refused != n)
		abort();
	free(shm);
	return (double)n / dt;
}

static double
bench_dedup(uint64_t n)
{
	/* a 100,000-unit sale: slice of 2^20 slots, half filled */
	struct sk_shm *shm = new_arena(1, UINT64_C(1) << 20);
	struct sk_item *it = add_item(shm, 1, 1, UINT64_C(1) << 20);
	struct sk_dedup d;
	struct sk_dedup_slot *slot;
	uint64_t order;

	sk_shm_dedup(shm, it, &d);
	double t0 = bench_now_s();
	for (uint64_t i = 0; i < n; i++) {
		if (sk_unlikely(sk_dedup_acquire(&d, i + 1, 1, 1, &slot, &order) != SK_DEDUP_OK))
			abort();
		sk_dedup_commit(slot, 1, i + 1);
	}
	double dt = bench_now_s() - t0;
	free(shm);
	return (double)n / dt;
}

static double
bench_full_buy(struct rte_ring *ring, uint64_t n)
{
	struct sk_shm *shm = new_arena(1, UINT64_C(1) << 20);
	struct sk_item *it = add_item(shm, 1, UINT64_C(1) << 40, UINT64_C(1) << 20);
	struct sk_buy_lcore lc;
	struct sk_order_rec out[512];
	uint64_t order;

	sk_buy_lcore_init(&lc, shm, 0, ring);
	double t0 = bench_now_s();
	for (uint64_t i = 0; i < n; i++) {
		struct sk_buy_req r = {.user = i + 1};
		struct sk_buy_line l = {.item = it, .qty = 1};
		if (sk_unlikely(sk_buy(&lc, &r, &l, 1, &order) != SK_BUY_OK))
			abort();
		if ((i & 511) == 511)
			while (rte_ring_sc_dequeue_burst_elem(ring, out, sizeof(out[0]), 512, NULL))
				;
	}
	double dt = bench_now_s() - t0;
	while (rte_ring_sc_dequeue_burst_elem(ring, out, sizeof(out[0]), 512, NULL))
		;
	free(shm);
	return (double)n / dt;
}

/* ------------------------------------------------------------ main */

static void
usage(const char *prog)
{
	printf("usage: %s [--json] [--scale F]\n"
	       "  --json     print one JSON object instead of the table\n"
	       "  --scale F  multiply the operation counts by F (default 1)\n",
	       prog);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"scale", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false;
	double scale = 1.0;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's') {
			if (!bench_opt_range("scale", optarg, 0, 100, &scale))
				return 2;
		} else if ((rc = bench_opt_common(c, &json, usage, argv[0])) >= 0) {
			return rc;
		}
	}

	if (sk_test_eal_init("stock-bench") != 0) {
		fprintf(stderr, "error: EAL init failed\n");
		return 1;
	}
	struct rte_ring *ring = sk_order_ring_create(0, 1024, SOCKET_ID_ANY);
	if (ring == NULL) {
		fprintf(stderr, "error: cannot create the order ring\n");
		return 1;
	}
	bench_pin(1);

	const uint64_t n_take = (uint64_t)(50e6 * scale), n_rej = (uint64_t)(200e6 * scale);
	const uint64_t n_dedup = (uint64_t)(5e5 * scale), n_full = (uint64_t)(5e5 * scale);
	double take1[RUNS], take2[RUNS], rej[RUNS], rej_buy[RUNS], dedup[RUNS], full[RUNS];
	for (int r = 0; r < RUNS; r++) {
		take1[r] = bench_take_1t(n_take);
		take2[r] = bench_take_2t(n_take / 2);
		rej[r] = bench_soldout_fast(n_rej);
		rej_buy[r] = bench_soldout(ring, n_rej / 4);
		dedup[r] = bench_dedup(n_dedup);
		full[r] = bench_full_buy(ring, n_full);
	}
	double m_take1 = bench_median(take1, RUNS), m_take2 = bench_median(take2, RUNS);
	double m_rej = bench_median(rej, RUNS), m_dedup = bench_median(dedup, RUNS);
	double m_rej_buy = bench_median(rej_buy, RUNS);
	double m_full = bench_median(full, RUNS);
	double ghz = (double)rte_get_tsc_hz() / 1e9;

	if (json) {
		printf("{\"buy_ops_per_sec_1t\":%.0f,\"soldout_reject_ops_per_sec_1t\":%.0f,"
		       "\"dedup_insert_ops_per_sec_1t\":%.0f,\"buy_ops_per_sec_2t\":%.0f,"
		       "\"full_buy_ops_per_sec_1t\":%.0f,\"soldout_sk_buy_ops_per_sec_1t\":%.0f,"
		       "\"tsc_ghz\":%.3f,\"runs\":%d}\n",
		       m_take1, m_rej, m_dedup, m_take2, m_full, m_rej_buy, ghz, RUNS);
	} else {
		printf("seckill-stock-bench: median of %d runs, TSC %.3f GHz\n", RUNS, ghz);
		printf("  %-34s %12.1f M/s  %6.1f cycles\n", "buy (stock take), 1 thread",
		       m_take1 / 1e6, ghz * 1e9 / m_take1);
		printf("  %-34s %12.1f M/s\n", "buy (stock take), 2 threads", m_take2 / 1e6);
		printf("  %-34s %12.1f M/s  %6.1f cycles\n", "sold-out rejection (find + flag)",
		       m_rej / 1e6, ghz * 1e9 / m_rej);
		printf("  %-34s %12.1f M/s  %6.1f cycles\n", "sold-out rejection (sk_buy)",
		       m_rej_buy / 1e6, ghz * 1e9 / m_rej_buy);
		printf("  %-34s %12.1f M/s  %6.1f cycles\n", "dedup insert (new user)",
		       m_dedup / 1e6, ghz * 1e9 / m_dedup);
		printf("  %-34s %12.1f M/s  %6.1f cycles\n", "full buy (dedup+stock+ring)",
		       m_full / 1e6, ghz * 1e9 / m_full);
	}
	rte_ring_free(ring);
	sk_test_eal_cleanup();
	return 0;
}
