/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-store-bench: LMDB orders committed per second with group commit.
 *
 * For batch sizes 1, 16, 128 and 1024 it writes single-line orders (unique
 * users, 4 items with activities, so the oversell guards run) through
 * sk_store_put_orders() into a fresh store under --dir, with durable
 * commits (each call returns after fsync) unless --nosync, and prints:
 *
 *   orders/s      orders stored / wall time of the run
 *   commits/s     sk_store_put_orders() calls per second
 *   p50, p99      latency of one call (= one write transaction), ms
 *   bytes/order   data file in use / orders stored (for sizing the map)
 *
 * Each batch size runs for --seconds (default 2) or until --max-orders
 * (default 2,000,000), whichever comes first. The filesystem type of --dir
 * is printed because it decides the figures: on tmpfs an fsync costs
 * nothing. --json prints one JSON object.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>

#include "bench_util.h"
#include "sk_store.h"

static const unsigned batch_sizes[] = {1, 16, 128, 1024};
#define NSIZES (sizeof(batch_sizes) / sizeof(batch_sizes[0]))
#define NITEMS 4

struct result {
	unsigned batch;
	uint64_t orders, commits;
	double seconds, p50_ms, p99_ms, max_ms;
	double bytes_per_order;
};

/* wall_ns - the time stamp of orders and activities. */
static int64_t
wall_ns(void)
{
	return bench_clock_ns(CLOCK_REALTIME);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

static const char *
fs_name(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) != 0)
		return "unknown";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53:
		return "ext4";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0x01021994:
		return "tmpfs";
	case 0x794C7630:
		return "overlayfs";
	default:
		return "other";
	}
}

/* run_one - one batch size in a fresh store under @base. */
static int
run_one(const char *base, unsigned batch, double seconds, uint64_t max_orders, bool nosync,
	struct result *res)
{
	char dir[PATH_MAX], err[SK_STORE_ERR_MAX];
	struct sk_store_conf conf = {.map_size = UINT64_C(8) << 30,
				     .flags = nosync ? SK_STORE_NOSYNC : 0};
	struct sk_store *st = NULL;
	struct sk_order_rec *recs = NULL;
	double *lat = NULL;
	size_t lat_cap = 1 << 16, nlat = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/sk-store-bench-XXXXXX", base);
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "error: mkdtemp in %s: %s\n", base, strerror(errno));
		return -errno;
	}
	rc = sk_store_open(&st, dir, &conf, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "error: %s\n", err);
		goto out;
	}
	recs = calloc(batch, sizeof(*recs));
	lat = malloc(lat_cap * sizeof(*lat));
	if (recs == NULL || lat == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t item = 1; item <= NITEMS; item++) {
		struct sk_store_activity a = {.item = item,
					      .per_user_limit = 1,
					      .total = UINT64_C(1) << 40,
					      .price = 9900,
					      .end_ns = INT64_MAX};
		snprintf(a.name, sizeof(a.name), "bench item %u", item);
		rc = sk_store_activity_put(st, &a, wall_ns());
		if (rc < 0)
			goto out;
	}

	const uint32_t epoch = (uint32_t)time(NULL);
	uint64_t n = 0, seq[4] = {0};
	double t0 = bench_now_s(), t;
	do {
		for (unsigned i = 0; i < batch; i++, n++) {
			unsigned lc = (unsigned)(n % 4);
			recs[i] = (struct sk_order_rec){
				.id = sk_order_id_make(epoch, lc, (uint32_t)seq[lc]++),
				.user = n + 1,
				.price = 9900,
				.time_ns = wall_ns(),
				.item = 1 + (uint32_t)(n % NITEMS),
				.client_ip = 0x0100007f,
				.qty = 1,
				.nlines = 1};
		}
		struct sk_store_put_stats s;
		double c0 = bench_now_s();
		rc = sk_store_put_orders(st, recs, batch, 15 * 60 * INT64_C(1000000000), wall_ns(),
					 NULL, &s);
		t = bench_now_s();
		if (rc != 0) {
			fprintf(stderr, "error: put_orders: %s\n", strerror(-rc));
			goto out;
		}
		if (s.orders_new != batch) {
			fprintf(stderr, "error: %u of %u orders stored\n", s.orders_new, batch);
			rc = -EIO;
			goto out;
		}
		if (nlat == lat_cap) {
			double *nl = realloc(lat, 2 * lat_cap * sizeof(*lat));
			if (nl == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			lat = nl, lat_cap *= 2;
		}
		lat[nlat++] = (t - c0) * 1e3;
	} while (t - t0 < seconds && n + batch <= max_orders);

	struct sk_store_info info;
	rc = sk_store_info(st, &info);
	if (rc != 0)
		goto out;
	bench_sort(lat, nlat);
	*res = (struct result){.batch = batch,
			       .orders = n,
			       .commits = nlat,
			       .seconds = t - t0,
			       .p50_ms = bench_pct(lat, nlat, 50),
			       .p99_ms = bench_pct(lat, nlat, 99),
			       .max_ms = bench_pct(lat, nlat, 100),
			       .bytes_per_order = (double)info.used_bytes / (double)n};
out:
	sk_store_close(st);
	free(recs);
	free(lat);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}

static void
usage(const char *prog)
{
	printf("usage: %s [--dir DIR] [--seconds S] [--max-orders N] [--nosync] [--json]\n"
	       "  --dir DIR         where to create the stores (default /tmp)\n"
	       "  --seconds S       time per batch size (default 2)\n"
	       "  --max-orders N    orders per batch size at most (default 2000000)\n"
	       "  --nosync          MDB_NOSYNC: not durable, for comparison only\n"
	       "  --json            print one JSON object instead of the table\n",
	       prog);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dir", required_argument, NULL, 'd'},
		{"seconds", required_argument, NULL, 's'},
		{"max-orders", required_argument, NULL, 'm'},
		{"nosync", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *base = "/tmp";
	double seconds = 2.0;
	uint64_t max_orders = 2000000;
	bool json = false, nosync = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			base = optarg;
			break;
		case 's':
			if (!bench_opt_range("seconds", optarg, 0, 3600, &seconds))
				return 2;
			break;
		case 'm':
			max_orders = strtoull(optarg, NULL, 10);
			if (max_orders < 1024) {
				fprintf(stderr, "error: --max-orders must be >= 1024\n");
				return 2;
			}
			break;
		case 'n':
			nosync = true;
			break;
		default:
			rc = bench_opt_common(c, &json, usage, argv[0]);
			if (rc >= 0)
				return rc;
		}
	}

	struct result res[NSIZES];
	for (size_t i = 0; i < NSIZES; i++)
		if (run_one(base, batch_sizes[i], seconds, max_orders, nosync, &res[i]) != 0)
			return 1;

	const char *fs = fs_name(base);
	if (json) {
		printf("{\"dir\":\"%s\",\"fs\":\"%s\",\"durable\":%s,\"runs\":[", base, fs,
		       nosync ? "false" : "true");
		for (size_t i = 0; i < NSIZES; i++)
			printf("%s{\"batch\":%u,\"orders\":%llu,\"commits\":%llu,\"seconds\":%.3f,"
			       "\"orders_per_sec\":%.0f,\"commits_per_sec\":%.1f,"
			       "\"commit_p50_ms\":%.3f,\"commit_p99_ms\":%.3f,\"commit_max_ms\":%."
			       "3f,"
			       "\"bytes_per_order\":%.0f}",
			       i ? "," : "", res[i].batch, (unsigned long long)res[i].orders,
			       (unsigned long long)res[i].commits, res[i].seconds,
			       (double)res[i].orders / res[i].seconds,
			       (double)res[i].commits / res[i].seconds, res[i].p50_ms,
			       res[i].p99_ms, res[i].max_ms, res[i].bytes_per_order);
		printf("]}\n");
		return 0;
	}
	printf("seckill-store-bench: %s (%s), %s commits, %.1f s per batch size\n", base, fs,
	       nosync ? "MDB_NOSYNC (not durable)" : "durable (fsync)", seconds);
	printf("  %6s %12s %11s %10s %10s %10s %12s\n", "batch", "orders/s", "commits/s", "p50 ms",
	       "p99 ms", "max ms", "bytes/order");
	for (size_t i = 0; i < NSIZES; i++)
		printf("  %6u %12.0f %11.1f %10.3f %10.3f %10.3f %12.0f\n", res[i].batch,
		       (double)res[i].orders / res[i].seconds,
		       (double)res[i].commits / res[i].seconds, res[i].p50_ms, res[i].p99_ms,
		       res[i].max_ms, res[i].bytes_per_order);
	return 0;
}
