/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-archive-bench: archiving one activity's orders
 * (storage/sk_store_archive.h), the way the control plane does it.
 *
 * A fresh store under --dir gets one ended activity with --orders
 * single-line orders of distinct users (default 1,000,000), all settled
 * (3 of 4 paid, 1 of 4 cancelled), and a second activity with a few live
 * orders. Building is not measured (MDB_NOSYNC commits). The store is then
 * reopened with durable commits and archived:
 *
 *   export   the file written from one read snapshot (no writer held)
 *   mark     the one write transaction that records the archive
 *   purge    the orders deleted, --slice orders per write transaction
 *
 * It prints the seconds of each step and of the whole, the longest single
 * write transaction (mark or one purge slice: how long the drain would
 * wait at most), the archive file's size per order, and the map in use
 * before and after. Every order is checked gone from the store, a sample
 * found in the archive, and sk_store_verify() passes. --json prints one
 * JSON object.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sk_store.h"
#include "sk_store_archive.h"

#define ITEM	  1
#define OTHER	  2
#define BUILD_TXN 20000 /* orders per put while building */
#define S_NS	  INT64_C(1000000000)

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--dir DIR] [--orders N] [--slice N] [--json]\n"
		"  --dir DIR    where the store is built (default /tmp; removed after)\n"
		"  --orders N   orders of the archived activity (default 1000000)\n"
		"  --slice N    orders per purge transaction (default 4096)\n",
		prog);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

static void
die(const char *what, int rc)
{
	fprintf(stderr, "archive-bench: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

static struct sk_store *
open_store(const char *dir, unsigned flags)
{
	struct sk_store_conf conf = {.map_size = UINT64_C(8) << 30, .flags = flags};
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st;
	int rc = sk_store_open(&st, dir, &conf, err, sizeof(err));

	if (rc != 0) {
		fprintf(stderr, "archive-bench: %s\n", err);
		exit(1);
	}
	return st;
}

/* build - the activities and their orders, settled; NOSYNC. */
static void
build(const char *dir, uint64_t n)
{
	struct sk_store *st = open_store(dir, SK_STORE_NOSYNC);
	struct sk_order_rec *r = calloc(BUILD_TXN, sizeof(*r));
	struct sk_store_activity a = {.item = ITEM,
				      .per_user_limit = 1,
				      .total = n,
				      .price = 100,
				      .start_ns = 1,
				      .end_ns = 2 * S_NS,
				      .name = "archived"};
	int rc;

	if (r == NULL)
		die("calloc", ENOMEM);
	rc = sk_store_activity_put(st, &a, 1);
	a.item = OTHER, a.end_ns = INT64_MAX, a.total = 100;
	snprintf(a.name, sizeof(a.name), "kept");
	if (rc == 0)
		rc = sk_store_activity_put(st, &a, 1);
	if (rc != 0)
		die("activity", rc);
	for (uint64_t done = 0; done < n + 10;) {
		size_t k = 0;
		for (; k < BUILD_TXN && done < n + 10; k++, done++)
			r[k] = (struct sk_order_rec){
				.id = done + 1,
				.user = done + 1,
				.price = 100,
				.time_ns = S_NS,
				.item = done < n ? ITEM : OTHER,
				.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				.qty = 1,
				.nlines = 1};
		rc = sk_store_put_orders(st, r, k, 0, S_NS, NULL, NULL);
		if (rc != 0)
			die("put_orders", rc);
	}
	for (uint64_t id = 1; id <= n; id++) {
		rc = sk_store_order_move(st, id, SK_ORDER_CONFIRMED,
					 id % 4 ? SK_ORDER_PAID : SK_ORDER_CANCELLED, S_NS, NULL);
		if (rc != 0)
			die("order_move", rc);
	}
	free(r);
	sk_store_close(st);
	/* The NOSYNC commits left the data dirty in the page cache: flush it
	 * now, or the first durable commit measured would write it all. */
	char path[4400];
	snprintf(path, sizeof(path), "%.4200s/data.mdb", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		die("fsync data.mdb", errno);
	close(fd);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"dir", required_argument, NULL, 'd'},	 {"orders", required_argument, NULL, 'n'},
		{"slice", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},	 {NULL, 0, NULL, 0}};
	const char *base = "/tmp";
	double v, n = 1000000, slice = 4096;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int ex;

		if (opt == 'd') {
			base = optarg;
		} else if (opt == 'n' || opt == 's') {
			if (!bench_opt_range(opt == 'n' ? "orders" : "slice", optarg, 0, 1e8, &v))
				return 2;
			*(opt == 'n' ? &n : &slice) = (double)(uint64_t)v;
		} else if ((ex = bench_opt_common(opt, &json, usage, argv[0])) >= 0) {
			return ex;
		}
	}
	if (n < 1 || slice < 1) {
		usage(argv[0]);
		return 2;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/sk-archive-bench-XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		die("mkdtemp", errno);
	char sdir[4200];
	snprintf(sdir, sizeof(sdir), "%s/store", dir);

	double t0 = bench_now_s();
	build(sdir, (uint64_t)n);
	double build_s = bench_now_s() - t0;

	struct sk_store *st = open_store(sdir, 0);
	struct sk_store_info before, after;
	struct sk_store_archive_snap snap;
	char why[256];
	int rc = sk_store_info(st, &before);
	int64_t now = bench_clock_ns(CLOCK_REALTIME);

	t0 = bench_now_s();
	if (rc == 0)
		rc = sk_store_archive_export(st, ITEM, now, 0, &snap, why, sizeof(why));
	if (rc != 0)
		die(why[0] ? why : "export", rc);
	double t1 = bench_now_s();
	rc = sk_store_archive_mark(st, &snap, now);
	if (rc != 0)
		die("mark", rc);
	double t2 = bench_now_s(), hold_max = t2 - t1, purge_s = 0, slice_max = 0;
	unsigned slices = 0;
	uint64_t purged, total = 0;
	do {
		double s0 = bench_now_s();
		rc = sk_store_archive_purge(st, ITEM, (uint32_t)slice, &purged);
		double d = bench_now_s() - s0;
		purge_s += d;
		if (d > slice_max)
			slice_max = d;
		total += purged;
		slices++;
	} while (rc == 1);
	if (rc != 0)
		die("purge", rc);
	double total_s = bench_now_s() - t0;
	if (slice_max > hold_max)
		hold_max = slice_max;

	/* Checks: every order gone from the store, a sample in the archive. */
	struct sk_store_line l;
	unsigned nl;
	if (total != (uint64_t)n || sk_store_order_get(st, 1, &l, 1, &nl) != -ENOENT ||
	    sk_store_order_get(st, (uint64_t)n, &l, 1, &nl) != -ENOENT)
		die("orders left in the store", EIO);
	for (uint64_t id = 1; id <= (uint64_t)n; id += (uint64_t)n / 97 + 1)
		if (sk_store_archive_order_get(st, id, &l, 1, &nl) != 0 || l.rec.user != id)
			die("an order not in the archive", EIO);
	if (sk_store_verify(st, why, sizeof(why)) != 0)
		die(why, EIO);
	sk_store_info(st, &after);
	sk_store_close(st);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	if (json) {
		printf("{\"orders\":%.0f,\"slice\":%.0f,\"export_s\":%.3f,\"mark_ms\":%.1f,"
		       "\"purge_s\":%.3f,\"slices\":%u,\"slice_max_ms\":%.1f,\"total_s\":%.3f,"
		       "\"max_hold_ms\":%.1f,"
		       "\"file_bytes_per_order\":%.1f,\"used_bytes_before\":%" PRIu64
		       ",\"used_bytes_after\":%" PRIu64 ",\"order_lines_after\":%" PRIu64 "}\n",
		       n, slice, t1 - t0, (t2 - t1) * 1e3, purge_s, slices, slice_max * 1e3,
		       total_s, hold_max * 1e3, (double)snap.file_bytes / n, before.used_bytes,
		       after.used_bytes, after.order_lines);
		return 0;
	}
	printf("archive of %.0f orders (built in %.1f s, not measured), %.0f per purge txn\n", n,
	       build_s, slice);
	printf("  export      %8.3f s  (file %.1f bytes/order, no writer held)\n", t1 - t0,
	       (double)snap.file_bytes / n);
	printf("  mark        %8.1f ms\n", (t2 - t1) * 1e3);
	printf("  purge       %8.3f s  in %u transactions, the longest %.1f ms\n", purge_s, slices,
	       slice_max * 1e3);
	printf("  total       %8.3f s\n", total_s);
	printf("  longest write transaction (drain held) %.1f ms\n", hold_max * 1e3);
	printf("  map in use  %" PRIu64 " MiB before, %" PRIu64
	       " MiB after (pages freed for reuse; the file does not shrink)\n",
	       before.used_bytes >> 20, after.used_bytes >> 20);
	return 0;
}
