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
 *   one lcore against N  the same hot paths (sold-out answer, stock take,
 *                        a whole sale, full buy on one item, on one item per
 *                        lcore) on 1, 2, 4 ... N threads pinned to CPUs 0..N-1
 *                        (--threads N, default 2): cycles per operation of
 *                        each thread (--lcores: only these)
 * Each figure is the median of 5 runs. --json prints one JSON object.
 */
#include <errno.h>
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
				.status_bits = SK_ORDER_SEQ_BITS,
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

/* ------------------------------------------------ one lcore against N */

/*
 * The same hot path on one thread, then on N threads pinned to CPUs
 * 0..N-1 (lcores 0..N-1 of one arena of N lcores). Each thread times its
 * own loop by its CPU time (time spent descheduled by the other load of a
 * shared machine is not counted), in TSC cycles. Where nothing is shared,
 * the cycles per operation of a thread among N equal those of the thread
 * alone; a line that bounces between the cores shows as the difference.
 */
enum lc_case {
	LC_SOLDOUT,  /* item lookup, flag, holder lookup, outcome counter */
	LC_TAKE,     /* sk_stock_take of 1 unit, one item for every thread */
	LC_SALE,     /* the same, a whole sale: pool, refills, steals, sold out */
	LC_BUY_ONE,  /* sk_buy, one item for every thread */
	LC_BUY_EACH, /* sk_buy, one item per thread */
	LC__COUNT,
};

static const char *const lc_names[LC__COUNT] = {
	[LC_SOLDOUT] = "sold_out",
	[LC_TAKE] = "take_one_item",
	[LC_SALE] = "take_whole_sale",
	[LC_BUY_ONE] = "buy_one_item",
	[LC_BUY_EACH] = "buy_item_per_lcore",
};

static const char *const lc_what[LC__COUNT] = {
	[LC_SOLDOUT] = "sold-out answer (find+flag+holder+stat)",
	[LC_TAKE] = "stock take, one item",
	[LC_SALE] = "stock take, a whole sale to sold out",
	[LC_BUY_ONE] = "full buy, one item",
	[LC_BUY_EACH] = "full buy, one item per lcore",
};

#define LC_MAX	    16	  /* threads */
#define LC_HOLDERS  1000u /* users who hold the sold-out item */
#define LC_CROWD    1024u /* distinct refused users, cycled (a power of two) */
#define LC_SALE_PER 1000u /* units of the whole sale per thread */

struct lc_thread {
	struct sk_buy_lcore buy; /* first: cache-aligned */
	struct sk_shm *shm;
	struct sk_item *it;
	enum lc_case kase;
	uint64_t n;    /* operations to run (LC_SALE: until sold out) */
	uint64_t done; /* operations that succeeded */
	double cycles; /* the thread's CPU time, in TSC cycles */
	pthread_barrier_t *bar;
} sk_cache_aligned;

static void
lc_drain(struct rte_ring *ring)
{
	struct sk_order_rec out[512];

	while (rte_ring_sc_dequeue_burst_elem(ring, out, sizeof(out[0]), 512, NULL) != 0)
		;
}

/* lc_op - one operation of @t's case (the @i-th); false when a sale ended. */
static inline bool
lc_op(struct lc_thread *t, uint64_t i)
{
	unsigned lcore = t->buy.lcore;
	uint64_t user = ((uint64_t)(lcore + 1) << 40) + i + 1, order;

	switch (t->kase) {
	case LC_SOLDOUT: {
		/* what the route reads and writes for a refused non-holder */
		struct sk_item *it = sk_shm_item_find(t->shm, t->it->id);
		struct sk_dedup d;
		if (sk_unlikely(!sk_stock_is_sold_out(it)))
			abort();
		sk_shm_dedup(t->shm, it, &d);
		user = ((uint64_t)(lcore + 1) << 40) + (i & (LC_CROWD - 1));
		if (sk_unlikely(sk_dedup_lookup(&d, user, NULL, NULL) != -ENOENT))
			abort();
		sk_shm_stat_add(&sk_shm_lstats(t->shm, lcore)->buy_outcome[SK_SECKILL_SOLD_OUT], 1);
		return true;
	}
	case LC_TAKE:
		if (sk_unlikely(sk_stock_take(t->it, lcore, 1) != SK_STOCK_OK))
			abort();
		return true;
	case LC_SALE: {
		int rc = sk_stock_take(t->it, lcore, 1);
		if (rc == SK_STOCK_BUSY)
			return true; /* lost the races of a round: try again */
		if (sk_unlikely(rc != SK_STOCK_OK && rc != SK_STOCK_SOLD_OUT))
			abort();
		t->done += rc == SK_STOCK_OK;
		return rc == SK_STOCK_OK;
	}
	default: {
		struct sk_buy_req r = {.user = user};
		struct sk_buy_line l = {.item = t->it, .qty = 1};
		if (sk_unlikely(sk_buy(&t->buy, &r, &l, 1, &order) != SK_BUY_OK))
			abort();
		if ((i & 511) == 511)
			lc_drain(t->buy.ring);
		return true;
	}
	}
}

static void *
lc_thread_main(void *p)
{
	struct lc_thread *t = p;

	bench_pin((int)t->buy.lcore);
	pthread_barrier_wait(t->bar);
	double t0 = bench_cpu_s();
	for (uint64_t i = 0; i < t->n && lc_op(t, i); i++)
		;
	t->cycles = (bench_cpu_s() - t0) * (double)rte_get_tsc_hz();
	if (t->kase != LC_SALE)
		t->done = t->n;
	return NULL;
}

static uint64_t
lc_pow2(uint64_t v)
{
	uint64_t p = SK_SHM_DEDUP_MIN;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * lc_run - case @k on @nt threads: @n operations each (the buys: @n in all,
 * so that every dedup slice is filled alike); the threads' CPU cycles over
 * the operations that succeeded.
 */
static double
lc_run(enum lc_case k, unsigned nt, uint64_t n, struct rte_ring *const *rings)
{
	bool buy = k == LC_BUY_ONE || k == LC_BUY_EACH;
	unsigned nitems = k == LC_BUY_EACH ? nt : 1, bits = 10;
	uint64_t per = buy ? n / nt : n, slice = SK_SHM_DEDUP_MIN;
	struct lc_thread t[LC_MAX];
	struct sk_item *items[LC_MAX];
	pthread_t tid[LC_MAX];
	pthread_barrier_t bar;
	double cycles = 0, done = 0;

	if (buy)
		slice = lc_pow2(8 * (k == LC_BUY_ONE ? n : per)); /* at most 1/8 full */
	else if (k == LC_SOLDOUT)
		slice = lc_pow2(8 * LC_HOLDERS); /* as the control plane sizes it */
	while (buy && (UINT64_C(1) << bits) < per + 2)
		bits++;
	struct sk_shm_conf c = {.nlcores = nt,
				.max_items = nitems,
				.dedup_slots = slice * nitems,
				.status_bits = bits,
				.epoch = (uint32_t)time(NULL)};
	size_t sz = sk_shm_size(&c);
	void *mem = bench_huge_alloc(sz, NULL);
	struct sk_shm *shm = mem != NULL ? sk_shm_init(mem, sz, &c) : NULL;

	if (shm == NULL)
		abort();
	for (unsigned i = 0; i < nitems; i++) {
		uint64_t total = k == LC_SOLDOUT ? 0 : UINT64_C(1) << 40;
		items[i] = add_item(shm, 1 + i, k == LC_SALE ? LC_SALE_PER * nt : total, slice);
	}
	if (k == LC_SOLDOUT) {
		struct sk_dedup d;
		sk_shm_dedup(shm, items[0], &d);
		for (uint64_t u = 1; u <= LC_HOLDERS; u++)
			if (sk_dedup_restore(&d, u * 131, 1, u) != 0)
				abort();
	}
	pthread_barrier_init(&bar, NULL, nt + 1);
	for (unsigned i = 0; i < nt; i++) {
		t[i] = (struct lc_thread){.shm = shm, .kase = k, .n = per, .bar = &bar};
		t[i].it = items[k == LC_BUY_EACH ? i : 0];
		if (k == LC_SALE)
			t[i].n = UINT64_MAX;
		sk_buy_lcore_init(&t[i].buy, shm, i, rings[i]);
		pthread_create(&tid[i], NULL, lc_thread_main, &t[i]);
	}
	pthread_barrier_wait(&bar);
	for (unsigned i = 0; i < nt; i++) {
		pthread_join(tid[i], NULL);
		lc_drain(rings[i]);
		cycles += t[i].cycles;
		done += (double)t[i].done;
	}
	if (k == LC_SALE && (done != (double)LC_SALE_PER * nt || !sk_stock_check(items[0])))
		abort();
	pthread_barrier_destroy(&bar);
	free(shm);
	return cycles / done;
}

/*
 * bench_lcores - the side-by-side table on 1, 2, 4 ... @maxt threads (or
 * its JSON members, after a comma).
 */
static void
bench_lcores(struct rte_ring *const *rings, unsigned maxt, double scale, bool json)
{
	const uint64_t n[LC__COUNT] = {
		[LC_SOLDOUT] = (uint64_t)(20e6 * scale),
		[LC_TAKE] = (uint64_t)(20e6 * scale),
		[LC_SALE] = 0,
		[LC_BUY_ONE] = (uint64_t)(2.5e5 * scale),
		[LC_BUY_EACH] = (uint64_t)(2.5e5 * scale),
	};
	unsigned nts[8], ncol = 0, sale_runs = 200;
	double cyc[LC__COUNT][8][RUNS];

	for (unsigned x = 1; x < maxt; x *= 2)
		nts[ncol++] = x;
	nts[ncol++] = maxt;
	for (int r = 0; r < RUNS; r++)
		for (unsigned k = 0; k < LC__COUNT; k++)
			for (unsigned j = 0; j < ncol; j++) {
				double s = 0;
				/* a sale is short: the mean of many */
				for (unsigned q = 0; q < (k == LC_SALE ? sale_runs : 1); q++)
					s += lc_run(k, nts[j], n[k], rings);
				cyc[k][j][r] = k == LC_SALE ? s / sale_runs : s;
			}
	if (!json) {
		printf("one lcore against %u: cycles per operation of each thread (CPU time), "
		       "median of %d runs\n  %-40s",
		       maxt, RUNS, "threads:");
		for (unsigned j = 0; j < ncol; j++)
			printf(" %7u", nts[j]);
		printf("   %u/1\n", maxt);
	}
	for (unsigned k = 0; k < LC__COUNT; k++) {
		double m[8];
		for (unsigned j = 0; j < ncol; j++)
			m[j] = bench_median(cyc[k][j], RUNS);
		if (json) {
			for (unsigned j = 0; j < ncol; j++)
				printf(",\"%s_cycles_%ut\":%.1f", lc_names[k], nts[j], m[j]);
			continue;
		}
		printf("  %-40s", lc_what[k]);
		for (unsigned j = 0; j < ncol; j++)
			printf(" %7.1f", m[j]);
		printf("  %5.2f\n", m[ncol - 1] / m[0]);
	}
}

/* ------------------------------------------------------------ main */

static void
usage(const char *prog)
{
	printf("usage: %s [--json] [--scale F] [--lcores] [--threads N]\n"
	       "  --json       print one JSON object instead of the table\n"
	       "  --scale F    multiply the operation counts by F (default 1)\n"
	       "  --lcores     only the side-by-side runs on 1, 2, 4 ... N threads\n"
	       "  --threads N  most threads of those runs, on CPUs 0..N-1 (default 2,\n"
	       "               at most %d and the CPUs this program may use)\n",
	       prog, LC_MAX);
}

/* bench_single - the one-thread table (or the first JSON members). */
static void
bench_single(struct rte_ring *ring, double scale, bool json)
{
	const uint64_t n_take = (uint64_t)(50e6 * scale), n_rej = (uint64_t)(200e6 * scale);
	const uint64_t n_dedup = (uint64_t)(5e5 * scale), n_full = (uint64_t)(5e5 * scale);
	double take1[RUNS], take2[RUNS], rej[RUNS], rej_buy[RUNS], dedup[RUNS], full[RUNS];

	bench_pin(1);
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
		printf(",\"buy_ops_per_sec_1t\":%.0f,\"soldout_reject_ops_per_sec_1t\":%.0f,"
		       "\"dedup_insert_ops_per_sec_1t\":%.0f,\"buy_ops_per_sec_2t\":%.0f,"
		       "\"full_buy_ops_per_sec_1t\":%.0f,\"soldout_sk_buy_ops_per_sec_1t\":%.0f",
		       m_take1, m_rej, m_dedup, m_take2, m_full, m_rej_buy);
		return;
	}
	printf("  %-34s %12.1f M/s  %6.1f cycles\n", "buy (stock take), 1 thread", m_take1 / 1e6,
	       ghz * 1e9 / m_take1);
	printf("  %-34s %12.1f M/s\n", "buy (stock take), 2 threads", m_take2 / 1e6);
	printf("  %-34s %12.1f M/s  %6.1f cycles\n", "sold-out rejection (find + flag)",
	       m_rej / 1e6, ghz * 1e9 / m_rej);
	printf("  %-34s %12.1f M/s  %6.1f cycles\n", "sold-out rejection (sk_buy)", m_rej_buy / 1e6,
	       ghz * 1e9 / m_rej_buy);
	printf("  %-34s %12.1f M/s  %6.1f cycles\n", "dedup insert (new user)", m_dedup / 1e6,
	       ghz * 1e9 / m_dedup);
	printf("  %-34s %12.1f M/s  %6.1f cycles\n", "full buy (dedup+stock+ring)", m_full / 1e6,
	       ghz * 1e9 / m_full);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},   {"scale", required_argument, NULL, 's'},
		{"lcores", no_argument, NULL, 'l'}, {"threads", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},   {NULL, 0, NULL, 0},
	};
	bool json = false, lcores_only = false;
	double scale = 1.0, threads = 2;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's') {
			if (!bench_opt_range("scale", optarg, 0, 100, &scale))
				return 2;
		} else if (c == 'l') {
			lcores_only = true;
		} else if (c == 't') {
			if (!bench_opt_range("threads", optarg, 1, LC_MAX, &threads))
				return 2;
		} else if ((rc = bench_opt_common(c, &json, usage, argv[0])) >= 0) {
			return rc;
		}
	}

	cpu_set_t cpus;
	unsigned maxt = (unsigned)threads;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || (double)maxt != threads ||
	    CPU_COUNT(&cpus) < (int)maxt) {
		fprintf(stderr, "error: --threads must be a whole number of usable CPUs\n");
		return 2;
	}
	if (sk_test_eal_init("stock-bench") != 0) {
		fprintf(stderr, "error: EAL init failed\n");
		return 1;
	}
	struct rte_ring *rings[LC_MAX];
	for (unsigned i = 0; i < maxt; i++) {
		rings[i] = sk_order_ring_create(i, 1024, SOCKET_ID_ANY);
		if (rings[i] == NULL) {
			fprintf(stderr, "error: cannot create the order rings\n");
			return 1;
		}
	}

	double ghz = (double)rte_get_tsc_hz() / 1e9;
	if (json)
		printf("{\"tsc_ghz\":%.3f,\"runs\":%d", ghz, RUNS);
	else
		printf("seckill-stock-bench: median of %d runs, TSC %.3f GHz\n", RUNS, ghz);
	if (!lcores_only)
		bench_single(rings[0], scale, json);
	bench_lcores(rings, maxt, scale, json);
	if (json)
		printf("}\n");
	for (unsigned i = 0; i < maxt; i++)
		rte_ring_free(rings[i]);
	sk_test_eal_cleanup();
	return 0;
}
