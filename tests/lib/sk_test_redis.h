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

#endif /* SK_TEST_REDIS_H */
