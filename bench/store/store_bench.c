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
 *
 * --preheat N also measures recovery at dataplane start: a store under --dir
 * holding N live one-unit orders of N distinct users for one item (built
 * with MDB_NOSYNC commits: building is not measured), with the item's
 * activity (total N + PREHEAT_MARGIN), is opened read-only as the dataplane
 * does, and sk_preheat_item() puts the item into a fresh arena in plain
 * memory (2 MiB transparent huge pages asked for, like the dataplane's
 * hugepage memzone), PREHEAT_REPS times (medians). Alone, for the split of
 * the cost: sk_store_holdings_foreach() (the LMDB walk) and
 * sk_shm_item_prepare() (laying out the item, zeroing its dedup slice); the
 * rest is the dedup restores. One more run comes first, after data.mdb was
 * dropped from the page cache (posix_fadvise(DONTNEED); the share still
 * resident is printed): a restart after a reboot rather than after kill -9.
 * Every run is checked: N units and N users restored, remaining ==
 * PREHEAT_MARGIN, sk_stock_check(), and a sample of users holding one unit
 * under their own order id (and a non-buyer holding nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sk_preheat.h"
#include "sk_store.h"

static const unsigned batch_sizes[] = {1, 16, 128, 1024};
#define NSIZES (sizeof(batch_sizes) / sizeof(batch_sizes[0]))
#define NITEMS 4

/* --preheat: the item, its units beyond the orders, runs, bounds. */
#define PREHEAT_ITEM	   7
#define PREHEAT_MARGIN	   1000
#define PREHEAT_REPS	   5
#define PREHEAT_MAX	   10000000
#define PREHEAT_BATCH	   65536
#define PREHEAT_LCORES	   2
#define PREHEAT_SAMPLES	   1000
#define PREHEAT_ARENA_MIN  (UINT64_C(1) << 22) /* config/seckill.ini's seckill.dedup_slots */
#define PREHEAT_STATUS_BIT 10

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

/*
 * store_temp - a new store in a fresh directory "<base>/<name>-XXXXXX"
 * (its path in @dir). 0, or a negative errno: @dir[0] is '\0' when no
 * directory was made, else the directory exists and is the caller's to
 * remove. The error is printed.
 */
static int
store_temp(const char *base, const char *name, const struct sk_store_conf *conf, char *dir,
	   size_t dirlen, struct sk_store **st)
{
	char err[SK_STORE_ERR_MAX];
	int rc;

	snprintf(dir, dirlen, "%s/%s-XXXXXX", base, name);
	if (mkdtemp(dir) == NULL) {
		rc = -errno;
		fprintf(stderr, "error: mkdtemp in %s: %s\n", base, strerror(-rc));
		dir[0] = '\0';
		return rc;
	}
	rc = sk_store_open(st, dir, conf, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "error: %s\n", err);
	return rc;
}
/* run_one - one batch size in a fresh store under @base. */
static int
run_one(const char *base, unsigned batch, double seconds, uint64_t max_orders, bool nosync,
	struct result *res)
{
	char dir[PATH_MAX];
	struct sk_store_conf conf = {.map_size = UINT64_C(8) << 30,
				     .flags = nosync ? SK_STORE_NOSYNC : 0};
	struct sk_store *st = NULL;
	struct sk_order_rec *recs = NULL;
	double *lat = NULL;
	size_t lat_cap = 1 << 16, nlat = 0;
	int rc;

	rc = store_temp(base, "sk-store-bench", &conf, dir, sizeof(dir), &st);
	if (rc != 0) {
		if (dir[0] == '\0')
			return rc; /* no directory to remove */
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
				.id = sk_order_id_make(epoch, 0, lc, (uint32_t)seq[lc]++),
				.user = n + 1,
				.price = 9900,
				.time_ns = wall_ns(),
				.item = 1 + (uint32_t)(n % NITEMS),
				.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
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

/* ------------------------------------------------------------- --preheat */

/* Medians (and spread) of one measured step, ms. */
struct step {
	double med_ms, min_ms, max_ms;
};

struct preheat_result {
	uint64_t orders, total, remaining, dedup_slice, store_bytes;
	double build_s, open_ms, init_ms, cpu_ms, load1;
	double cold_ms, cold_resident; /* first run after data.mdb left the page cache */
	struct step whole, walk, prepare;
	unsigned samples;
};

/* preheat_user - the buyer of order @i: a bijection, never 0, not sequential. */
static uint64_t
preheat_user(uint64_t i)
{
	return (i + 1) * UINT64_C(0x9e3779b97f4a7c15);
}

/* preheat_order - the id of order @i: lcores 0 and 1 in turn, as two lcores sell. */
static uint64_t
preheat_order(uint32_t epoch, uint64_t i)
{
	return sk_order_id_make(epoch, 0, (unsigned)(i % PREHEAT_LCORES),
				(uint32_t)(i / PREHEAT_LCORES));
}

static uint64_t
pow2_ge(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static struct step
step_of(double *ms, size_t n)
{
	bench_sort(ms, n);
	return (struct step){.med_ms = bench_pct(ms, n, 50), .min_ms = ms[0], .max_ms = ms[n - 1]};
}

/* preheat_build - N orders of item PREHEAT_ITEM, one per user, into @st. */
static int
preheat_build(struct sk_store *st, uint64_t n, uint32_t epoch)
{
	size_t batch = PREHEAT_BATCH;
	struct sk_order_rec *recs = calloc(batch, sizeof(*recs));
	int rc = 0;

	if (recs == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < n;) {
		size_t k = n - i < batch ? (size_t)(n - i) : batch;
		int64_t now = wall_ns();

		for (size_t j = 0; j < k; j++)
			recs[j] = (struct sk_order_rec){
				.id = preheat_order(epoch, i + j),
				.user = preheat_user(i + j),
				.price = 9900,
				.time_ns = now,
				.item = PREHEAT_ITEM,
				.client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				.qty = 1,
				.nlines = 1};
		struct sk_store_put_stats s;
		rc = sk_store_put_orders(st, recs, k, 15 * 60 * INT64_C(1000000000), now, NULL, &s);
		if (rc == -E2BIG && batch > 1024) {
			batch /= 2; /* too many dirty pages for one transaction */
			continue;
		}
		if (rc != 0) {
			fprintf(stderr, "error: preheat: put_orders: %s\n", strerror(-rc));
			break;
		}
		if (s.orders_new != k) {
			fprintf(stderr, "error: preheat: %u of %zu orders stored\n", s.orders_new,
				k);
			rc = -EIO;
			break;
		}
		i += k;
	}
	free(recs);
	return rc;
}

/*
 * drop_cache - write back @dir/data.mdb and ask the kernel to drop it from
 * the page cache (nothing may map it). @return the share of its pages still
 * resident afterwards (mincore()), or -1 if that could not be seen.
 */
static double
drop_cache(const char *dir)
{
	char path[PATH_MAX + 16];
	struct stat sb;
	double resident = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) == 0 && sb.st_size > 0 && fdatasync(fd) == 0 &&
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) {
		size_t pg = (size_t)sysconf(_SC_PAGESIZE), npg = ((size_t)sb.st_size + pg - 1) / pg;
		unsigned char *vec = malloc(npg);
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);

		if (vec != NULL && m != MAP_FAILED && mincore(m, (size_t)sb.st_size, vec) == 0) {
			size_t in = 0;
			for (size_t i = 0; i < npg; i++)
				in += vec[i] & 1;
			resident = (double)in / (double)npg;
		}
		if (m != MAP_FAILED)
			munmap(m, (size_t)sb.st_size);
		free(vec);
	}
	close(fd);
	return resident;
}

/* Callback of the walk alone: count, as recovery would restore. */
struct walk_count {
	uint64_t users, units;
};

static int
walk_count(const struct sk_store_holding *h, void *arg)
{
	struct walk_count *w = arg;

	w->users++;
	w->units += h->units;
	return 0;
}

/*
 * preheat_check - item @it after sk_preheat_item(): @n units and users
 * restored, PREHEAT_MARGIN left, the accounting invariant, and the sampled
 * users holding one unit under their own order. Prints what is wrong.
 */
static bool
preheat_check(const struct sk_shm *shm, const struct sk_item *it, const struct sk_recover_stats *rs,
	      uint64_t n, uint32_t epoch, unsigned *samples)
{
	struct sk_dedup d;
	uint32_t units;
	uint64_t order;

	if (rs->units != n || rs->users != n) {
		fprintf(stderr, "error: preheat restored %llu units of %llu users, not %llu\n",
			(unsigned long long)rs->units, (unsigned long long)rs->users,
			(unsigned long long)n);
		return false;
	}
	if (sk_shm_item_find(shm, PREHEAT_ITEM) != it) {
		fprintf(stderr, "error: preheat: item %u not published\n", PREHEAT_ITEM);
		return false;
	}
	if (sk_stock_remaining(it) != PREHEAT_MARGIN || !sk_stock_check(it) ||
	    sk_stock_is_sold_out(it)) {
		fprintf(stderr,
			"error: preheat: remaining %llu (want %u), sk_stock_check %s, sold out "
			"%d\n",
			(unsigned long long)sk_stock_remaining(it), PREHEAT_MARGIN,
			sk_stock_check(it) ? "ok" : "FAILED", sk_stock_is_sold_out(it));
		return false;
	}
	sk_shm_dedup(shm, it, &d);
	uint64_t step = n > PREHEAT_SAMPLES ? n / PREHEAT_SAMPLES : 1;
	*samples = 0;
	for (uint64_t i = 0; i < n; i += step) {
		uint64_t k = i + step >= n ? n - 1 : i; /* the last order is sampled too */

		if (sk_dedup_lookup(&d, preheat_user(k), &units, &order) != 0 || units != 1 ||
		    order != preheat_order(epoch, k)) {
			fprintf(stderr,
				"error: preheat: user of order %llu: units %u, order %#llx (want "
				"1, %#llx)\n",
				(unsigned long long)k, units, (unsigned long long)order,
				(unsigned long long)preheat_order(epoch, k));
			return false;
		}
		++*samples;
	}
	if (sk_dedup_lookup(&d, preheat_user(n), NULL, NULL) != -ENOENT) {
		fprintf(stderr, "error: preheat: a user without an order holds something\n");
		return false;
	}
	return true;
}

/*
 * run_preheat - the --preheat figure: a store of @n live orders under @base,
 * preheated PREHEAT_REPS times into a fresh arena.
 */
static int
run_preheat(const char *base, uint64_t n, struct preheat_result *res)
{
	char dir[PATH_MAX], err[SK_STORE_ERR_MAX];
	const uint64_t total = n + PREHEAT_MARGIN;
	struct sk_store_conf conf = {.map_size = (UINT64_C(1) << 30) + n * 1024,
				     .flags = SK_STORE_NOSYNC};
	struct sk_store *st = NULL;
	void *mem = NULL;
	double whole[PREHEAT_REPS], cpu[PREHEAT_REPS], walk[PREHEAT_REPS], prep[PREHEAT_REPS],
		init[PREHEAT_REPS];
	int rc;

	memset(res, 0, sizeof(*res));
	rc = store_temp(base, "sk-preheat-bench", &conf, dir, sizeof(dir), &st);
	if (rc != 0) {
		if (dir[0] == '\0')
			return rc; /* no directory to remove */
		goto out;
	}

	/* The sale: its activity first (so the store's oversell guard runs), then N winners. */
	struct sk_store_activity a = {.item = PREHEAT_ITEM,
				      .per_user_limit = 1,
				      .total = total,
				      .price = 9900,
				      .end_ns = INT64_MAX};
	snprintf(a.name, sizeof(a.name), "preheat bench");
	rc = sk_store_activity_put(st, &a, wall_ns());
	if (rc < 0) {
		fprintf(stderr, "error: preheat: activity_put: %s\n", strerror(-rc));
		goto out;
	}
	const uint32_t epoch = (uint32_t)time(NULL);
	double t = bench_now_s();
	rc = preheat_build(st, n, epoch);
	if (rc != 0)
		goto out;
	res->build_s = bench_now_s() - t;
	struct sk_store_info info;
	rc = sk_store_info(st, &info);
	if (rc != 0)
		goto out;
	res->store_bytes = info.used_bytes;
	sk_store_close(st);
	st = NULL;
	res->cold_resident = drop_cache(dir);

	/* As the dataplane at start: the store read-only, the activity as stored. */
	conf.flags = SK_STORE_RDONLY;
	t = bench_now_s();
	rc = sk_store_open(&st, dir, &conf, err, sizeof(err));
	res->open_ms = (bench_now_s() - t) * 1e3;
	if (rc != 0) {
		fprintf(stderr, "error: %s\n", err);
		goto out;
	}
	rc = sk_store_activity_get(st, PREHEAT_ITEM, &a, NULL);
	if (rc != 0) {
		fprintf(stderr, "error: preheat: activity_get: %s\n", strerror(-rc));
		goto out;
	}

	/*
	 * The arena: config/seckill.ini's seckill.dedup_slots, or 2N rounded
	 * up if larger; the item's slice automatic (item.N.dedup_slots = 0):
	 * 8 x total, at most what the arena has.
	 */
	const struct sk_shm_conf sc = {.nlcores = PREHEAT_LCORES,
				       .max_items = 4,
				       .dedup_slots = pow2_ge(2 * n) > PREHEAT_ARENA_MIN
							      ? pow2_ge(2 * n)
							      : PREHEAT_ARENA_MIN,
				       .status_bits = PREHEAT_STATUS_BIT,
				       .epoch = epoch};
	size_t size = sk_shm_size(&sc);
	mem = bench_huge_alloc(size, NULL);
	if (mem == NULL) {
		fprintf(stderr, "error: preheat: no arena of %zu bytes\n", size);
		rc = -ENOMEM;
		goto out;
	}

	/* r == -1: the cold run (data.mdb not in the page cache), not in the medians */
	for (int r = -1; r < PREHEAT_REPS; r++) {
		struct sk_recover_stats rs;
		struct sk_item *it = NULL;
		struct sk_shm *shm;
		double ms;

		/* the whole step, as setup_items() runs it */
		t = bench_now_s();
		shm = sk_shm_init(mem, size, &sc);
		ms = (bench_now_s() - t) * 1e3;
		if (shm == NULL) {
			rc = -EINVAL;
			goto out;
		}
		double c0 = bench_cpu_s();
		t = bench_now_s();
		rc = sk_preheat_item(st, shm, &a, 0, 0, &it, &rs);
		if (r < 0) {
			res->cold_ms = (bench_now_s() - t) * 1e3;
		} else {
			whole[r] = (bench_now_s() - t) * 1e3;
			cpu[r] = (bench_cpu_s() - c0) * 1e3;
			init[r] = ms;
		}
		if (rc != 0) {
			fprintf(stderr, "error: preheat: sk_preheat_item: %s\n", strerror(-rc));
			goto out;
		}
		if (!preheat_check(shm, it, &rs, n, epoch, &res->samples)) {
			rc = -EBADMSG;
			goto out;
		}
		res->remaining = sk_stock_remaining(it);
		res->dedup_slice = it->dedup_mask + 1;
		if (r < 0)
			continue;

		/* the LMDB walk alone */
		struct walk_count w = {0};
		t = bench_now_s();
		rc = sk_store_holdings_foreach(st, PREHEAT_ITEM, walk_count, &w);
		walk[r] = (bench_now_s() - t) * 1e3;
		if (rc != 0 || w.users != n || w.units != n) {
			fprintf(stderr, "error: preheat: walk: rc %d, %llu users, %llu units\n", rc,
				(unsigned long long)w.users, (unsigned long long)w.units);
			rc = rc != 0 ? rc : -EBADMSG;
			goto out;
		}

		/* laying out the item alone (zeroes its dedup slice), on a fresh arena */
		struct sk_stock_conf ic;
		sk_preheat_conf(&a, 0, &ic);
		shm = sk_shm_init(mem, size, &sc);
		t = bench_now_s();
		rc = sk_shm_item_prepare(shm, &ic, 0, &it);
		prep[r] = (bench_now_s() - t) * 1e3;
		if (rc != 0) {
			fprintf(stderr, "error: preheat: sk_shm_item_prepare: %s\n", strerror(-rc));
			goto out;
		}
	}
	res->orders = n;
	res->total = total;
	res->whole = step_of(whole, PREHEAT_REPS);
	res->cpu_ms = bench_median(cpu, PREHEAT_REPS);
	res->walk = step_of(walk, PREHEAT_REPS);
	res->prepare = step_of(prep, PREHEAT_REPS);
	res->init_ms = bench_median(init, PREHEAT_REPS);
	if (getloadavg(&res->load1, 1) != 1)
		res->load1 = -1;
out:
	sk_store_close(st);
	free(mem);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}

static void
print_preheat(const struct preheat_result *p, const char *base, const char *fs, bool json)
{
	const double restore = p->whole.med_ms - p->walk.med_ms - p->prepare.med_ms;
	const double per = 1e6 / (double)p->orders; /* ms -> ns per order */

	if (json) {
		printf("\"preheat\":{\"orders\":%llu,\"total\":%llu,\"remaining\":%llu,"
		       "\"lcores\":%u,\"dedup_slice\":%llu,\"store_bytes\":%llu,"
		       "\"build_s\":%.3f,\"reps\":%u,\"open_ms\":%.3f,\"arena_init_ms\":%.3f,"
		       "\"preheat_ms\":%.3f,\"preheat_min_ms\":%.3f,\"preheat_max_ms\":%.3f,"
		       "\"preheat_cpu_ms\":%.3f,\"walk_ms\":%.3f,\"prepare_ms\":%.3f,"
		       "\"restore_ms\":%.3f,\"preheat_ns_per_order\":%.1f,"
		       "\"walk_ns_per_order\":%.1f,\"cold_preheat_ms\":%.3f,"
		       "\"cold_resident\":%.3f,\"samples_checked\":%u,\"checked\":true,"
		       "\"load1\":%.2f}",
		       (unsigned long long)p->orders, (unsigned long long)p->total,
		       (unsigned long long)p->remaining, PREHEAT_LCORES,
		       (unsigned long long)p->dedup_slice, (unsigned long long)p->store_bytes,
		       p->build_s, PREHEAT_REPS, p->open_ms, p->init_ms, p->whole.med_ms,
		       p->whole.min_ms, p->whole.max_ms, p->cpu_ms, p->walk.med_ms,
		       p->prepare.med_ms, restore, p->whole.med_ms * per, p->walk.med_ms * per,
		       p->cold_ms, p->cold_resident, p->samples, p->load1);
		return;
	}
	printf("\npreheat from LMDB: %llu live orders of %llu users, item total %llu; "
	       "store %.1f MiB in %s (%s), built in %.1f s (MDB_NOSYNC, not measured)\n",
	       (unsigned long long)p->orders, (unsigned long long)p->orders,
	       (unsigned long long)p->total, (double)p->store_bytes / 1048576.0, base, fs,
	       p->build_s);
	printf("arena in plain memory (MADV_HUGEPAGE): %u lcores, dedup slice %llu slots (%.0f "
	       "MiB); "
	       "median of %u fresh arenas; load average %.2f\n",
	       PREHEAT_LCORES, (unsigned long long)p->dedup_slice,
	       (double)p->dedup_slice * sizeof(struct sk_dedup_slot) / 1048576.0, PREHEAT_REPS,
	       p->load1);
	printf("  %-44s %10s %10s %10s %10s\n", "step", "median ms", "min ms", "max ms",
	       "ns/order");
	printf("  %-44s %10.1f %10.1f %10.1f %10.1f\n", "sk_preheat_item (the whole recovery)",
	       p->whole.med_ms, p->whole.min_ms, p->whole.max_ms, p->whole.med_ms * per);
	printf("  %-44s %10.1f %10.1f %10.1f %10.1f\n", "  sk_store_holdings_foreach (LMDB walk)",
	       p->walk.med_ms, p->walk.min_ms, p->walk.max_ms, p->walk.med_ms * per);
	printf("  %-44s %10.1f %10.1f %10.1f %10.1f\n", "  sk_shm_item_prepare (zeroes the slice)",
	       p->prepare.med_ms, p->prepare.min_ms, p->prepare.max_ms, p->prepare.med_ms * per);
	printf("  %-44s %10.1f %10s %10s %10.1f\n", "  dedup restores + rest (the difference)",
	       restore, "", "", restore * per);
	printf("  %-44s %10.1f\n", "sk_preheat_item, CPU time", p->cpu_ms);
	printf("  %-44s %10.1f %32.1f\n", "sk_preheat_item, data.mdb not in page cache", p->cold_ms,
	       p->cold_ms * per);
	printf("  %-44s %10.1f\n", "sk_store_open read-only (once)", p->open_ms);
	printf("  %-44s %10.1f\n", "sk_shm_init (zeroes the arena, not above)", p->init_ms);
	if (p->cold_resident >= 0)
		printf("cold run: %.0f %% of data.mdb still in the page cache after dropping it "
		       "(a VM's host may cache the disk too)\n",
		       p->cold_resident * 100);
	printf("check: every run restored %llu units of %llu users, remaining %llu == margin, "
	       "sk_stock_check ok, %u sampled users hold 1 unit under their order, a "
	       "non-buyer nothing\n",
	       (unsigned long long)p->orders, (unsigned long long)p->orders,
	       (unsigned long long)p->remaining, p->samples);
}

static void
usage(const char *prog)
{
	printf("usage: %s [--dir DIR] [--seconds S] [--max-orders N] [--nosync] [--preheat N] "
	       "[--json]\n"
	       "  --dir DIR         where to create the stores (default /tmp)\n"
	       "  --seconds S       time per batch size (default 2)\n"
	       "  --max-orders N    orders per batch size at most (default 2000000)\n"
	       "  --nosync          MDB_NOSYNC: not durable, for comparison only\n"
	       "  --preheat N       also time recovery at start (sk_preheat_item()) from a\n"
	       "                    store of N live orders, 1..10000000 (default: off)\n"
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
		{"preheat", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *base = "/tmp";
	double seconds = 2.0;
	uint64_t max_orders = 2000000, preheat = 0;
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
			if (!sk_parse_u64(optarg, 1024, UINT64_MAX, &max_orders)) {
				fprintf(stderr, "error: --max-orders must be >= 1024\n");
				return 2;
			}
			break;
		case 'n':
			nosync = true;
			break;
		case 'p':
			if (!sk_parse_u64(optarg, 1, PREHEAT_MAX, &preheat)) {
				fprintf(stderr, "error: --preheat must be in [1, %u]\n",
					PREHEAT_MAX);
				return 2;
			}
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
	struct preheat_result pre;
	if (preheat != 0 && run_preheat(base, preheat, &pre) != 0)
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
		printf("]");
		if (preheat != 0) {
			printf(",");
			print_preheat(&pre, base, fs, true);
		}
		printf("}\n");
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
	if (preheat != 0)
		print_preheat(&pre, base, fs, false);
	return 0;
}
