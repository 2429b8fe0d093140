/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-map-grow-bench - how long an online grow of the LMDB map
 * (sk_store_map_grow()) pauses the group commits, for a few sizes of data.
 *
 *   seckill-map-grow-bench [--sizes MB,MB,...] [--grows N]
 *
 * For each size: a new store in a temporary directory under $TMPDIR (/tmp
 * when unset: put it on the disk to measure) with a map of 1.25 x the size, filled with one-line
 * orders until 80 % of it is used (not durable: the fill is not what is measured); then, with a
 * thread reading orders in a loop (as the admin API does), N grows that each double the map. The
 * drain is blocked for exactly the call: the pause printed is its wall time (the wait for the reads
 * in progress plus the remap); "held" is the part new store calls waited. The target is 20 ms
 * (docs/benchmarks.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "sk_store.h"
#include "sk_store_map.h"
#include "sk_test_fs.h"

#define MS	     1e6
#define ITEM	     7u
#define BATCH	     1024u
#define MAX_SIZES    8
#define MAX_GROWS    32
#define PAY_TIMEOUT  (15 * 60 * INT64_C(1000000000))
#define EPOCH	     1764000000u
#define READER_LOOPS 100000000u /* bound of the reader thread's loop */

struct reader {
	struct sk_store *st;
	uint64_t orders; /* ids 0..orders-1 exist */
	atomic_bool stop;
	uint64_t reads, errors;
};

static uint64_t
order_id(uint64_t i)
{
	return sk_order_id_make(EPOCH, 0, (unsigned)(i % 2), (uint32_t)(i / 2));
}

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	struct sk_store_line l[SK_STORE_MAX_LINES];
	uint64_t x = 88172645463325252ull;
	unsigned n;

	for (unsigned i = 0; i < READER_LOOPS && !atomic_load(&r->stop); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (sk_store_order_get(r->st, order_id(x % r->orders), l, SK_STORE_MAX_LINES, &n) !=
		    0)
			r->errors++;
		r->reads++;
	}
	return NULL;
}

/* fill - one-line orders into @st until 80 % of its map is used; their count. */
static int
fill(struct sk_store *st, uint64_t *count)
{
	struct sk_order_rec *recs = calloc(BATCH, sizeof(*recs));
	struct sk_store_map_info mi;
	uint64_t i = 0;
	int rc = 0;

	if (recs == NULL)
		return -ENOMEM;
	for (;;) {
		rc = sk_store_map_info(st, &mi);
		if (rc != 0 || mi.used_bytes * 10 >= mi.map_size * 8)
			break;
		int64_t now = bench_clock_ns(CLOCK_REALTIME);
		for (unsigned j = 0; j < BATCH; j++)
			recs[j] = (struct sk_order_rec){
				.id = order_id(i + j),
				.user = (i + j + 1) * UINT64_C(0x9e3779b97f4a7c15),
				.price = 9900,
				.time_ns = now,
				.item = ITEM,
				.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				.qty = 1,
				.nlines = 1};
		rc = sk_store_put_orders(st, recs, BATCH, PAY_TIMEOUT, now, NULL, NULL);
		if (rc != 0)
			break;
		i += BATCH;
	}
	free(recs);
	*count = i;
	return rc;
}

/* run_size - one store of @mb MiB of data, @grows grows; prints one line. */
static int
run_size(uint64_t mb, unsigned grows)
{
	char dir[4096];
	uint64_t map = mb * 5 / 4 << 20;
	struct sk_store_conf conf = {.map_size = map, .flags = SK_STORE_NOSYNC};
	struct sk_store_activity a = {.item = ITEM,
				      .total = UINT64_C(1) << 40,
				      .price = 9900,
				      .end_ns = INT64_MAX,
				      .per_user_limit = 1};
	struct sk_store *st = NULL;
	struct reader r = {0};
	pthread_t t;
	double pause[MAX_GROWS], held[MAX_GROWS];
	char err[SK_STORE_ERR_MAX];
	int rc;

	rc = sk_test_tmpdir(dir, sizeof(dir), "seckill-map-grow-bench");
	if (rc != 0)
		return rc;
	rc = sk_store_open(&st, dir, &conf, err, sizeof(err));
	if (rc == 0)
		rc = sk_store_activity_put(st, &a, bench_clock_ns(CLOCK_REALTIME)) < 0 ? -EIO : 0;
	if (rc == 0)
		rc = fill(st, &r.orders);
	if (rc != 0 || r.orders == 0) {
		fprintf(stderr, "error: %" PRIu64 " MiB: %s\n", mb,
			rc ? strerror(-rc) : "no order");
		goto out;
	}
	r.st = st;
	if (pthread_create(&t, NULL, reader_main, &r) != 0) {
		rc = -EAGAIN;
		goto out;
	}
	for (unsigned g = 0; g < grows && rc == 0; g++) {
		struct sk_store_map_info mi;
		int64_t held_ns = 0;

		usleep(20000); /* the reader runs between the grows */
		rc = sk_store_map_info(st, &mi);
		double t0 = bench_now_s();
		if (rc == 0)
			rc = sk_store_map_grow(st, mi.map_size * 2, 1000000000, &held_ns);
		pause[g] = (bench_now_s() - t0) * 1e3;
		held[g] = (double)held_ns / MS;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	if (rc != 0) {
		fprintf(stderr, "error: grow: %s\n", strerror(-rc));
		goto out;
	}
	struct sk_store_map_info mi;
	sk_store_map_info(st, &mi);
	bench_sort(pause, grows);
	bench_sort(held, grows);
	printf("%8" PRIu64 " %10" PRIu64 " %10.1f %10.3f %10.3f %10.3f %10" PRIu64 " %7" PRIu64
	       "\n",
	       mb, r.orders, (double)mi.used_bytes / (1 << 20), bench_pct(pause, grows, 50),
	       pause[grows - 1], held[grows - 1], r.reads, r.errors);
out:
	sk_store_close(st);
	sk_test_rmtree(dir);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {{"sizes", required_argument, NULL, 's'},
					   {"grows", required_argument, NULL, 'g'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	uint64_t sizes[MAX_SIZES] = {16, 64, 256};
	unsigned nsizes = 3, grows = 5;
	int64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			nsizes = 0;
			for (char *p = strtok(optarg, ","); p != NULL && nsizes < MAX_SIZES;
			     p = strtok(NULL, ","))
				if (sk_parse_i64(p, 1, 1 << 20, &v))
					sizes[nsizes++] = (uint64_t)v;
			break;
		case 'g':
			if (!sk_parse_i64(optarg, 1, MAX_GROWS, &v))
				goto usage;
			grows = (unsigned)v;
			break;
		default:
			goto usage;
		}
	}
	if (nsizes == 0)
		goto usage;
	printf("# online map grow (doubling), %u grows per size, one reader thread\n", grows);
	printf("# %6s %10s %10s %10s %10s %10s %10s %7s\n", "data_mb", "orders", "used_mb",
	       "pause_p50", "pause_max", "held_max", "reads", "errors");
	printf("# %6s %10s %10s %10s %10s %10s %10s %7s\n", "", "", "", "ms", "ms", "ms", "", "");
	for (unsigned i = 0; i < nsizes; i++)
		if (run_size(sizes[i], grows) != 0)
			return 1;
	return 0;
usage:
	fprintf(stderr, "usage: %s [--sizes MB,MB,...] [--grows N (1..%d)]\n", argv[0], MAX_GROWS);
	return 2;
}
