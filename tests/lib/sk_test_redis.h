/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_redis.h - a real redis-server for tests and benchmarks: started
 * in a folder of the caller's on a unix socket only (--port 0: no TCP),
 * with an append-only file (appendonly yes, appendfsync everysec), and
 * stopped by its PID. No Check, no DPDK; links hiredis (to wait for PING).
 *
 * For one thread. The server gets PR_SET_PDEATHSIG = SIGKILL, so it does
 * not outlive the process that started it (a test that failed half-way).
 */
#ifndef SK_TEST_REDIS_H
#define SK_TEST_REDIS_H

#include <limits.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/** One redis-server; all-zero = not started. */
struct sk_test_redis {
	pid_t pid;	    /**< 0 when not running */
	char dir[PATH_MAX]; /**< its --dir (the AOF is in dir/appendonlydir) */
	char sock[108];	    /**< its unix socket: dir/redis.sock */
};

/**
 * sk_test_redis_start - start redis-server in @p dir (existing; reuses
 * the AOF found there) and wait until it answers PING (at most 20 s).
 * @return 0, -ENAMETOOLONG (the socket path does not fit), -ETIMEDOUT (no
 *         PONG in time: the server is killed), or another negative errno
 *         (fork(), the server exited: see dir/redis.log).
 */
int sk_test_redis_start(struct sk_test_redis *r, const char *dir);

/**
 * sk_test_redis_start_args - sk_test_redis_start() with more arguments
 * for redis-server after the usual ones (e.g. "--enable-debug-command",
 * "local"): @p extra, NULL-ended, at most 16 (NULL: none). Same returns,
 * and -E2BIG for more than 16.
 */
int sk_test_redis_start_args(struct sk_test_redis *r, const char *dir, const char *const *extra);

/**
 * sk_test_redis_stop - send @p sig (SIGKILL: a crash, SIGTERM: a clean
 * shutdown) and reap it; after 20 s without exit, SIGKILL. Does nothing if
 * it is not running. Returns 0, or a negative errno.
 */
int sk_test_redis_stop(struct sk_test_redis *r, int sig);

/**
 * sk_test_redis_copy_aof - copy the folder @p from_dir/appendonlydir to
 * @p to_dir/appendonlydir (replacing it): to restart a server from an
 * older copy of its AOF. Returns 0, or -1.
 */
int sk_test_redis_copy_aof(const char *from_dir, const char *to_dir);

/**
 * sk_test_redis_reply_str - @p r as text into @p out: "" for nil, an
 * integer in decimal, a string, status or error as it is, else "type N".
 */
void sk_test_redis_reply_str(const redisReply *r, char *out, size_t cap);

/** sk_test_redis_now_ms - CLOCK_MONOTONIC in ms. */
long long sk_test_redis_now_ms(void);

/** Most masters of a test Redis Cluster. */
#define SK_TEST_RCLUSTER_MAX 3

/**
 * A Redis Cluster of masters without replicas (AOF, appendfsync everysec,
 * like the single test server), all on 127.0.0.1 (TCP, each
 * node on a free port P and its cluster bus on P + 10000), each node in a
 * folder of its own (dir/n0, dir/n1, ...: nodes.conf, redis.log), made
 * with `redis-cli --cluster create` (log: dir/create.log). All-zero = not
 * started.
 */
struct sk_test_rcluster {
	unsigned n;			   /**< nodes */
	pid_t pid[SK_TEST_RCLUSTER_MAX];   /**< 0 when not running */
	int port[SK_TEST_RCLUSTER_MAX];	   /**< client ports */
	char id[SK_TEST_RCLUSTER_MAX][41]; /**< node ids (CLUSTER MYID) */
};

/**
 * sk_test_rcluster_start - start @p n (1..SK_TEST_RCLUSTER_MAX) masters in
 * @p dir (existing), join them with the 16384 slots shared out, and wait
 * until every node says cluster_state:ok (at most 60 s in all).
 * @return 0, -EINVAL (@p n), -EADDRINUSE (no free port pair found),
 *         -ETIMEDOUT, -ECHILD (a server or redis-cli failed: see the logs),
 *         or another negative errno. On error nothing is left running.
 */
int sk_test_rcluster_start(struct sk_test_rcluster *c, const char *dir, unsigned n);

/**
 * sk_test_rcluster_node - a connection to node @p i (1 s timeouts), owned
 * by the caller (redisFree()), or NULL.
 */
redisContext *sk_test_rcluster_node(const struct sk_test_rcluster *c, unsigned i);

/**
 * sk_test_rcluster_owner - the index of the node that serves hash slot
 * @p slot (asked of node 0: CLUSTER SLOTS), or -1.
 */
int sk_test_rcluster_owner(const struct sk_test_rcluster *c, unsigned slot);

/** sk_test_rcluster_stop - SIGKILL every node and reap it. */
void sk_test_rcluster_stop(struct sk_test_rcluster *c);

#endif /* SK_TEST_REDIS_H */
