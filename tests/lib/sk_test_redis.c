/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_redis.c - a redis-server started and stopped by PID for the
 * tests and benchmarks of the cluster pool (sk_test_redis.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define WAIT_MS 20000
#define STEP_MS 10

long long
sk_test_redis_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* pong: true if the server at @sock answers PING. */
static bool
pong(const char *sock)
{
	struct timeval tv = {.tv_sec = 1};
	redisContext *c = redisConnectUnixWithTimeout(sock, tv);
	redisReply *r;
	bool ok = false;

	if (c == NULL)
		return false;
	if (c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK) {
		r = redisCommand(c, "PING");
		ok = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
		if (r != NULL)
			freeReplyObject(r);
	}
	redisFree(c);
	return ok;
}

int
sk_test_redis_start(struct sk_test_redis *r, const char *dir)
{
	return sk_test_redis_start_args(r, dir, NULL);
}

int
sk_test_redis_start_args(struct sk_test_redis *r, const char *dir, const char *const *extra)
{
	char log[PATH_MAX + 16];
	const char *argv[40];
	long long end;
	pid_t pid;
	int n, argc = 0;

	memset(r, 0, sizeof(*r));
	n = snprintf(r->sock, sizeof(r->sock), "%s/redis.sock", dir);
	if (n < 0 || (size_t)n >= sizeof(r->sock))
		return -ENAMETOOLONG;
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	snprintf(log, sizeof(log), "%s/redis.log", dir);
	{
		const char *base[] = {"redis-server",
				      "--port",
				      "0",
				      "--unixsocket",
				      r->sock,
				      "--unixsocketperm",
				      "700",
				      "--dir",
				      dir,
				      "--appendonly",
				      "yes",
				      "--appendfsync",
				      "everysec",
				      "--save",
				      "",
				      "--daemonize",
				      "no",
				      "--logfile",
				      log};

		for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			argv[argc++] = base[i];
	}
	for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
		if (i == 16)
			return -E2BIG;
		argv[argc++] = extra[i];
	}
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp("redis-server", (char *const *)argv);
		_exit(127);
	}
	r->pid = pid;
	end = sk_test_redis_now_ms() + WAIT_MS;
	while (sk_test_redis_now_ms() < end) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			r->pid = 0;
			return -ECHILD;
		}
		if (pong(r->sock))
			return 0;
		poll(NULL, 0, STEP_MS);
	}
	sk_test_redis_stop(r, SIGKILL);
	return -ETIMEDOUT;
}

int
sk_test_redis_stop(struct sk_test_redis *r, int sig)
{
	long long end;

	if (r->pid <= 0)
		return 0;
	if (kill(r->pid, sig) != 0 && errno != ESRCH)
		return -errno;
	end = sk_test_redis_now_ms() + WAIT_MS;
	for (;;) {
		int st;
		pid_t w = waitpid(r->pid, &st, WNOHANG);

		if (w == r->pid || (w < 0 && errno != EINTR))
			break;
		if (sk_test_redis_now_ms() >= end) {
			kill(r->pid, SIGKILL);
			waitpid(r->pid, &st, 0);
			break;
		}
		poll(NULL, 0, STEP_MS);
	}
	r->pid = 0;
	return 0;
}

int
sk_test_redis_copy_aof(const char *from_dir, const char *to_dir)
{
	char src[PATH_MAX + 16], dst[PATH_MAX + 16];
	pid_t pid;
	int st;

	snprintf(src, sizeof(src), "%s/appendonlydir", from_dir);
	snprintf(dst, sizeof(dst), "%s/appendonlydir", to_dir);
	if (sk_test_rmtree(dst) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("cp", "cp", "-a", src, dst, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

void
sk_test_redis_reply_str(const redisReply *r, char *out, size_t cap)
{
	if (r->type == REDIS_REPLY_INTEGER)
		snprintf(out, cap, "%lld", r->integer);
	else if (r->type == REDIS_REPLY_NIL)
		snprintf(out, cap, "%s", "");
	else if (r->str != NULL)
		snprintf(out, cap, "%s", r->str);
	else
		snprintf(out, cap, "type %d", r->type);
}
