/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-cpool-bench: the cluster pool's Redis round trips (docs/cluster.md).
 *
 *   broadcast  the sold-out broadcast latency: from just before the
 *              sk_cpool_dry() that flips the flag to the subscriber's
 *              callback in another thread (its own connection, as a
 *              member's control plane has it), and the same for the
 *              reopen (sk_cpool_giveback() to callback); --rounds rounds
 *              of one unit leased, reported dry (sold out), given back
 *              (reopened); p50/p99/max of each, and of the dry() call alone
 *   lease      the lease script's round trip: --leases calls of
 *              sk_cpool_lease() of one unit each on an item of 10^12 units;
 *              ops/s, p50/p99/max
 *
 * A redis-server is started for the run on a unix socket in a temporary
 * folder (appendonly yes, appendfsync everysec, as the tests and the docs
 * say) and stopped by its PID; --unix PATH uses a running one instead (its
 * keys under the prefix "skbench" are overwritten); --redis-cluster starts
 * a Redis Cluster of three masters on 127.0.0.1 instead (sk_test_redis.h):
 * the client and the subscriber know node 0, the items' slots are wherever
 * CRC16 puts them (redirections learnt on the first call; a broadcast from
 * another master crosses the cluster bus). Every round's outcome
 * is checked (flag, version, the event's item, flag and version); a lost
 * event (no callback within 2 s) fails the run. --json prints one JSON
 * object.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "sk_cpool.h"
#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define ITEM_FLIP  1u
#define ITEM_LEASE 2u
#define EVENT_WAIT 2 /* s */

struct sub_state {
	struct sk_cpool_sub *sub;
	sem_t got;
	atomic_bool stop;
	int64_t at_ns; /* callback time of the last event */
	struct sk_cpool_event ev;
	int errors;
};

static void
on_event(const struct sk_cpool_event *ev, void *arg)
{
	struct sub_state *st = arg;

	st->at_ns = bench_clock_ns(CLOCK_MONOTONIC);
	st->ev = *ev;
	sem_post(&st->got);
}

static void *
sub_loop(void *arg)
{
	struct sub_state *st = arg;

	/* Bounded by the stop flag: the main thread sets it at the end. */
	while (!atomic_load(&st->stop)) {
		if (sk_cpool_sub_poll(st->sub, 100, on_event, st, NULL) < 0)
			st->errors++;
	}
	return NULL;
}

/* wait_event: the next callback (false after EVENT_WAIT s). */
static bool
wait_event(struct sub_state *st)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += EVENT_WAIT;
	while (sem_timedwait(&st->got, &ts) != 0) {
		if (errno != EINTR)
			return false;
	}
	return true;
}

struct stats {
	double p50, p99, max;
};

static struct stats
stats_of(double *v, size_t n)
{
	bench_sort(v, n);
	return (struct stats){bench_pct(v, n, 50), bench_pct(v, n, 99), v[n - 1]};
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--rounds N] [--leases N] [--unix PATH | --redis-cluster] [--json]\n"
		"  --rounds N   sold-out/reopen rounds (default 300, at most 100000)\n"
		"  --leases N   lease calls timed (default 20000, at most 10000000)\n"
		"  --unix PATH  a running redis-server's unix socket (default: start one)\n"
		"  --redis-cluster  start a 3-master Redis Cluster on 127.0.0.1 instead\n",
		prog);
}

static int
fail(const char *what, int rc, const struct sk_cpool *p)
{
	fprintf(stderr, "seckill-cpool-bench: %s: %s (%s)\n", what, strerror(-rc),
		p != NULL ? sk_cpool_errstr(p) : "");
	return 1;
}

/* flips: the broadcast rounds; fills the samples (ms). */
static int
flips(struct sk_cpool *p, struct sub_state *st, unsigned rounds, double *so_ms, double *re_ms,
      double *dry_ms)
{
	const char *const members[] = {"a"};
	uint64_t seq = 0, g, ver;
	bool so, unf;
	int rc;

	rc = sk_cpool_init(p, ITEM_FLIP, 1, members, 1);
	if (rc == 0)
		rc = sk_cpool_sync(p, ITEM_FLIP, 1, 0, &unf);
	if (rc != 0)
		return fail("init item 1", rc, p);
	for (unsigned i = 0; i < rounds; i++) {
		int64_t t0, t1;

		rc = sk_cpool_lease(p, ITEM_FLIP, ++seq, 1, &g);
		if (rc != 0 || g != 1)
			return fail("lease", rc != 0 ? rc : -EPROTO, p);
		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		rc = sk_cpool_dry(p, ITEM_FLIP, 0, &so, &ver);
		t1 = bench_clock_ns(CLOCK_MONOTONIC);
		if (rc != 0 || !so || ver != 2 * i + 1)
			return fail("dry: no flip", rc != 0 ? rc : -EPROTO, p);
		if (!wait_event(st) || st->ev.item != ITEM_FLIP || !st->ev.sold_out ||
		    st->ev.version != ver)
			return fail("sold-out event lost or wrong", -EPROTO, NULL);
		so_ms[i] = (double)(st->at_ns - t0) / 1e6;
		dry_ms[i] = (double)(t1 - t0) / 1e6;
		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		rc = sk_cpool_giveback(p, ITEM_FLIP, ++seq, 1);
		if (rc != 0)
			return fail("giveback", rc, p);
		if (!wait_event(st) || st->ev.sold_out || st->ev.version != ver + 1)
			return fail("reopen event lost or wrong", -EPROTO, NULL);
		re_ms[i] = (double)(st->at_ns - t0) / 1e6;
	}
	return 0;
}

/* leases: the lease round trips (ms); *secs the wall time. */
static int
leases(struct sk_cpool *p, unsigned n, double *ms, double *secs)
{
	const char *const members[] = {"a"};
	double start;
	uint64_t g;
	bool unf;
	int rc;

	rc = sk_cpool_init(p, ITEM_LEASE, UINT64_C(1000000000000), members, 1);
	if (rc == 0)
		rc = sk_cpool_sync(p, ITEM_LEASE, 1, 0, &unf);
	if (rc != 0)
		return fail("init item 2", rc, p);
	start = bench_now_s();
	for (unsigned i = 0; i < n; i++) {
		int64_t t0 = bench_clock_ns(CLOCK_MONOTONIC);

		rc = sk_cpool_lease(p, ITEM_LEASE, i + 1, 1, &g);
		if (rc != 0 || g != 1)
			return fail("lease", rc != 0 ? rc : -EPROTO, p);
		ms[i] = (double)(bench_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	}
	*secs = bench_now_s() - start;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"rounds", required_argument, NULL, 'r'},
					     {"leases", required_argument, NULL, 'l'},
					     {"unix", required_argument, NULL, 'u'},
					     {"json", no_argument, NULL, 'j'},
					     {"redis-cluster", no_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct sk_test_redis rs = {0};
	struct sk_test_rcluster rcl = {0};
	char where[PATH_MAX + 32];
	struct sk_cpool_config cfg = {.member = "a", .prefix = "skbench", .timeout_ms = 2000};
	struct sub_state st = {0};
	struct sk_cpool *p = NULL;
	double rounds_d = 300, leases_d = 20000, secs = 0, *so, *re, *dry, *ls;
	char dir[PATH_MAX] = "";
	const char *unix_path = NULL;
	bool json = false, resub = false, rcluster = false;
	unsigned rounds, nleases;
	pthread_t th;
	int opt, rc = 1;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'r') {
			if (!bench_opt_range("rounds", optarg, 0, 100000, &rounds_d))
				return 2;
		} else if (opt == 'l') {
			if (!bench_opt_range("leases", optarg, 0, 10000000, &leases_d))
				return 2;
		} else if (opt == 'u') {
			unix_path = optarg;
		} else if (opt == 'c') {
			rcluster = true;
		} else {
			int st_ = bench_opt_common(opt, &json, usage, argv[0]);

			if (st_ >= 0)
				return st_;
		}
	}
	rounds = (unsigned)rounds_d;
	nleases = (unsigned)leases_d;
	so = calloc(rounds, sizeof(*so));
	re = calloc(rounds, sizeof(*re));
	dry = calloc(rounds, sizeof(*dry));
	ls = calloc(nleases, sizeof(*ls));
	if (so == NULL || re == NULL || dry == NULL || ls == NULL) {
		fprintf(stderr, "seckill-cpool-bench: out of memory\n");
		return 1;
	}
	if (rcluster && unix_path != NULL) {
		fprintf(stderr, "seckill-cpool-bench: --unix or --redis-cluster, not both\n");
		goto out;
	}
	if (rcluster) {
		if (sk_test_tmpdir(dir, sizeof(dir), "sk-cpool-bench") != 0 ||
		    sk_test_rcluster_start(&rcl, dir, 3) != 0) {
			fprintf(stderr, "seckill-cpool-bench: cannot start a Redis Cluster in %s\n",
				dir);
			goto out;
		}
		cfg.host = "127.0.0.1";
		cfg.port = rcl.port[0];
		snprintf(where, sizeof(where), "Redis Cluster, 3 masters, client at 127.0.0.1:%d",
			 rcl.port[0]);
	} else {
		if (unix_path == NULL) {
			if (sk_test_tmpdir(dir, sizeof(dir), "sk-cpool-bench") != 0 ||
			    sk_test_redis_start(&rs, dir) != 0) {
				fprintf(stderr,
					"seckill-cpool-bench: cannot start redis-server in %s\n",
					dir);
				goto out;
			}
			unix_path = rs.sock;
		}
		cfg.unix_path = unix_path;
		snprintf(where, sizeof(where), "%s", unix_path);
	}
	if (sk_cpool_open(&p, &cfg) != 0 || sk_cpool_sub_open(&st.sub, &cfg) != 0) {
		fprintf(stderr, "seckill-cpool-bench: cannot open the client\n");
		goto out;
	}
	/* A clean slate for our prefix: the scripts' keys of both items. */
	{
		struct sk_cpool_view v;

		if (sk_cpool_view(p, ITEM_FLIP, &v) != -ENOENT ||
		    sk_cpool_view(p, ITEM_LEASE, &v) != -ENOENT) {
			fprintf(stderr,
				"seckill-cpool-bench: keys skbench:{1}/{2} exist at %s "
				"(or Redis is down): use an empty Redis\n",
				where);
			goto out;
		}
	}
	if (sk_cpool_sub_poll(st.sub, 1000, on_event, &st, &resub) < 0 || !resub) {
		fprintf(stderr, "seckill-cpool-bench: cannot subscribe: %s\n",
			sk_cpool_sub_errstr(st.sub));
		goto out;
	}
	sem_init(&st.got, 0, 0);
	if (pthread_create(&th, NULL, sub_loop, &st) != 0)
		goto out;
	rc = flips(p, &st, rounds, so, re, dry);
	atomic_store(&st.stop, true);
	pthread_join(th, NULL);
	if (rc == 0)
		rc = leases(p, nleases, ls, &secs);
	if (rc == 0) {
		struct stats s1 = stats_of(so, rounds), s2 = stats_of(re, rounds),
			     s3 = stats_of(dry, rounds), s4 = stats_of(ls, nleases);
		double ops = nleases / secs;

		if (json) {
			printf("{\"rounds\":%u,\"soldout_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%."
			       "3f},"
			       "\"reopen_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
			       "\"dry_call_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
			       "\"leases\":%u,\"lease_ops_per_sec\":%.0f,"
			       "\"lease_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}}\n",
			       rounds, s1.p50, s1.p99, s1.max, s2.p50, s2.p99, s2.max, s3.p50,
			       s3.p99, s3.max, nleases, ops, s4.p50, s4.p99, s4.max);
		} else {
			printf("redis: %s%s\n", where,
			       dir[0] != '\0' ? " (started for the run)" : "");
			printf("sold-out broadcast, dry() -> callback, %u rounds: p50 %.3f ms  p99 "
			       "%.3f ms  max %.3f ms\n",
			       rounds, s1.p50, s1.p99, s1.max);
			printf("reopen broadcast, giveback() -> callback:        p50 %.3f ms  p99 "
			       "%.3f ms  max %.3f ms\n",
			       s2.p50, s2.p99, s2.max);
			printf("the dry() call alone:                            p50 %.3f ms  p99 "
			       "%.3f ms  max %.3f ms\n",
			       s3.p50, s3.p99, s3.max);
			printf("lease round trip, %u calls: %.0f ops/s  p50 %.3f ms  p99 %.3f ms  "
			       "max %.3f ms\n",
			       nleases, ops, s4.p50, s4.p99, s4.max);
		}
		if (st.errors != 0)
			fprintf(stderr, "seckill-cpool-bench: %d subscriber errors\n", st.errors);
	}
out:
	sk_cpool_sub_close(st.sub);
	sk_cpool_close(p);
	sk_test_redis_stop(&rs, SIGTERM);
	sk_test_rcluster_stop(&rcl);
	if (dir[0] != '\0')
		sk_test_rmtree(dir);
	free(so);
	free(re);
	free(dry);
	free(ls);
	return rc;
}
