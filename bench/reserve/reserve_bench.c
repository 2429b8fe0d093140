/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reserve-bench: what a reservation lookup costs, in TSC cycles, and what a
 * reserved user costs in memory (no EAL, no network):
 *
 *   reserve-bench [--users N] [--runs R] [--cpu N] [--json]
 *
 * One item's set of N users (default 1M), loaded whole (sk_reserve_load():
 * half full, 16 bytes per user) and grown by batches of 1,000 as the admin
 * API adds them (a third to a half full); then sk_reserve_has() over three
 * request streams:
 *
 *   hit    1M random users of the set (a reserved buyer)
 *   miss   1M random users not in it (an unreserved buyer: the 403)
 *   hot    1,024 users repeated (their lines cached)
 *
 * The cost is the loop's TSC cycles divided by the lookups: independent
 * lookups overlap their cache misses as a core overlaps the requests of a
 * burst. Then the buy path's order, one request at a time, over the hit
 * stream: some work that needs the previous answer (WORK rounds of the
 * mixer, over a thousand cycles, standing for the token's HMAC) then the
 * lookup, with and without sk_reserve_prefetch() of the user
 * before the work:
 *
 *   cold        work, lookup (each lookup one miss, not overlapped)
 *   prefetched  prefetch, work, lookup
 *
 * both less the work alone: batches of 2,048 new users, the work alone
 * and the work with the lookups in turn, the median over 256 batches of
 * the difference per lookup. The other figures are medians over R runs.
 * --json prints one JSON object.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "bench_util.h"
#include "sk_common.h"
#include "sk_reserve.h"

#define STREAM (1u << 20)
#define HOT    1024u
#define BATCH  1000u
#define ITEM   7u
#define WORK   160u  /* rounds of the mixer between a prefetch and its lookup */
#define SERIAL 2048u /* users per batch of the serial measure */

static struct {
	struct sk_reserve_zone *z;
	uint64_t *in, *out; /* STREAM users in the set, and not */
	uint64_t sink;
} B;

/* user - the @i-th user id of the set (odd), never 0. */
static uint64_t
user(uint64_t i)
{
	return sk_reserve_mix(i + 1) | 1;
}

static void
setup(uint64_t users)
{
	size_t size = sk_reserve_size(users * 48 + (1u << 20));
	uint64_t s = 99;

	B.z = sk_reserve_init(bench_huge_alloc(size, NULL), size, 1);
	B.in = bench_huge_alloc(STREAM * sizeof(*B.in), NULL);
	B.out = bench_huge_alloc(STREAM * sizeof(*B.out), NULL);
	if (B.z == NULL || B.in == NULL || B.out == NULL) {
		fprintf(stderr, "reserve-bench: out of memory\n");
		exit(1);
	}
	for (uint32_t i = 0; i < STREAM; i++) {
		s = sk_reserve_mix(s + i);
		B.in[i] = user(s % users);
		B.out[i] = (s << 1) | 2; /* even: never in the set */
	}
}

/* grow - the set added by batches of BATCH, as seckillctl does. */
static int
grow(uint64_t users)
{
	uint64_t ids[BATCH];

	for (uint64_t at = 0; at < users; at += BATCH) {
		uint64_t n = users - at < BATCH ? users - at : BATCH;

		for (uint64_t i = 0; i < n; i++)
			ids[i] = user(at + i);
		sk_reserve_ack(B.z, 0, atomic_load(&B.z->gen)); /* the lcore moved on */
		if (sk_reserve_add(B.z, ITEM, ids, n, NULL) != 0)
			return -1;
	}
	sk_reserve_ack(B.z, 0, atomic_load(&B.z->gen));
	sk_reserve_reclaim(B.z);
	return 0;
}

/* load - the set loaded whole, as at the control plane's start. */
static int
load(uint64_t users)
{
	uint64_t *ids = malloc(users * sizeof(*ids));
	int rc;

	if (ids == NULL)
		return -1;
	for (uint64_t i = 0; i < users; i++)
		ids[i] = user(i);
	rc = sk_reserve_load(B.z, ITEM, ids, users);
	free(ids);
	sk_reserve_ack(B.z, 0, atomic_load(&B.z->gen));
	sk_reserve_reclaim(B.z);
	return rc;
}

/* run - @n lookups over the first @span users of @stream; cycles. */
static uint64_t
run(const uint64_t *stream, uint32_t span, uint64_t n)
{
	uint64_t t0 = __rdtsc(), sink = 0;

	for (uint64_t i = 0; i < n; i++)
		sink += sk_reserve_has(B.z, ITEM, stream[i & (span - 1)]);
	B.sink += sink;
	return __rdtsc() - t0;
}

/* serial - @n requests in turn from @u: work that needs the previous
 * answer, then (@look) the lookup, prefetched first if @pre; cycles. */
static uint64_t
serial(const uint64_t *u, uint64_t n, bool look, bool pre)
{
	uint64_t t0 = __rdtsc(), acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (pre)
			sk_reserve_prefetch(B.z, ITEM, u[i]);
		for (uint32_t k = 0; k < WORK; k++)
			acc = sk_reserve_mix(acc + k);
		if (look)
			acc += sk_reserve_has(B.z, ITEM, u[i]);
	}
	B.sink += acc;
	return __rdtsc() - t0;
}

/* measure_serial - cold and prefetched: per batch of SERIAL users (each
 * batch new users, so their lines are cold), the work alone then the work
 * with the lookups; the median over the batches of the difference per
 * lookup. */
static void
measure_serial(double med[2])
{
	static double d[STREAM / SERIAL];
	const uint32_t batches = STREAM / SERIAL / 2;

	for (uint32_t k = 0; k < 2; k++) {
		for (uint32_t b = 0; b < batches; b++) {
			const uint64_t *u = B.in + (k * batches + b) * SERIAL;
			double work = (double)serial(u, SERIAL, false, false);

			d[b] = ((double)serial(u, SERIAL, true, k == 1) - work) / SERIAL;
		}
		med[k] = bench_median(d, batches);
	}
}

/* measure - medians of hit, miss, hot over @runs runs, into @med. */
static void
measure(uint32_t runs, double med[3])
{
	const uint64_t *streams[3] = {B.in, B.out, B.in};
	uint64_t n = 4 * (uint64_t)STREAM;

	for (int k = 0; k < 3; k++) {
		double v[99];

		for (uint32_t r = 0; r < runs; r++)
			v[r] = (double)run(streams[k], k == 2 ? HOT : STREAM, n) / (double)n;
		med[k] = bench_median(v, runs);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"users", required_argument, NULL, 'u'},
					     {"runs", required_argument, NULL, 'r'},
					     {"cpu", required_argument, NULL, 'c'},
					     {"json", no_argument, NULL, 'j'},
					     {NULL, 0, NULL, 0}};
	uint64_t users = 1u << 20;
	uint32_t runs = 3;
	int cpu = -1, opt;
	bool json = false;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			users = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			runs = (uint32_t)atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			fprintf(stderr, "usage: reserve-bench [--users N] [--runs R] [--cpu N] "
					"[--json]\n");
			return 2;
		}
	}
	if (runs == 0 || runs > 99 || users == 0 || users > (1ull << 28)) {
		fprintf(stderr, "reserve-bench: bad --runs or --users (1..2^28)\n");
		return 2;
	}
	if (cpu >= 0 && bench_pin(cpu) != 0)
		return 1;
	setup(users);
	double loaded[3], grown[3], ser[2];
	if (load(users) != 0) {
		fprintf(stderr, "reserve-bench: the set does not fit\n");
		return 1;
	}
	double bl = (double)sk_reserve_table_bytes(B.z, ITEM) / (double)users;
	measure(runs, loaded);
	measure_serial(ser);
	if (sk_reserve_load(B.z, ITEM, NULL, 0) != 0 || grow(users) != 0) {
		fprintf(stderr, "reserve-bench: the grown set does not fit\n");
		return 1;
	}
	double bg = (double)sk_reserve_table_bytes(B.z, ITEM) / (double)users;
	measure(runs, grown);
	if (json) {
		printf("{\"users\":%" PRIu64
		       ",\"loaded\":{\"bytes_per_user\":%.1f,\"hit_cycles\":%.1f,"
		       "\"miss_cycles\":%.1f,\"hot_cycles\":%.1f},\"grown\":{\"bytes_per_user\":%."
		       "1f,"
		       "\"hit_cycles\":%.1f,\"miss_cycles\":%.1f,\"hot_cycles\":%.1f},"
		       "\"serial\":{\"cold_cycles\":%.1f,\"prefetched_cycles\":%.1f}}\n",
		       users, bl, loaded[0], loaded[1], loaded[2], bg, grown[0], grown[1], grown[2],
		       ser[0], ser[1]);
	} else {
		printf("%" PRIu64 " reserved users; TSC cycles per lookup, median of %u runs\n",
		       users, runs);
		printf("%-8s %14s %8s %8s %8s\n", "set", "bytes/user", "hit", "miss", "hot");
		printf("%-8s %14.1f %8.1f %8.1f %8.1f\n", "loaded", bl, loaded[0], loaded[1],
		       loaded[2]);
		printf("%-8s %14.1f %8.1f %8.1f %8.1f\n", "grown", bg, grown[0], grown[1],
		       grown[2]);
		printf("one at a time after %u mixer rounds of work (loaded set, hit "
		       "users):\n%-8s %14s %8.1f\n%-8s %14s %8.1f\n",
		       WORK, "cold", "", ser[0], "prefetched", "", ser[1]);
	}
	return B.sink == UINT64_MAX; /* keep the lookups */
}
