/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_redis_cluster.c - a Redis Cluster of masters on 127.0.0.1 for
 * the tests of the cluster pool (sk_test_redis.h): redis-server
 * --cluster-enabled yes per node, joined by `redis-cli --cluster create`,
 * stopped by PID.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sk_test_redis.h"

#define WAIT_MS 60000
#define STEP_MS 20
/* Client ports are tried in [PORT_LO, PORT_HI); the bus is port + 10000. */
#define PORT_LO 21000
#define PORT_HI 29000

/* bindable: true if 127.0.0.1:@port is free now. */
static bool
bindable(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	bool ok;

	if (fd < 0)
		return false;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* free_port: a port P with P and P + 10000 free and unlike @taken[0..n). */
static int
free_port(const int *taken, unsigned n)
{
	unsigned seed = (unsigned)getpid() ^ (unsigned)sk_test_redis_now_ms();

	for (int tries = 0; tries < 200; tries++) {
		int p = PORT_LO + (int)(rand_r(&seed) % (PORT_HI - PORT_LO));
		bool used = false;

		for (unsigned i = 0; i < n; i++)
			used |= taken[i] == p;
		if (!used && bindable(p) && bindable(p + 10000))
			return p;
	}
	return -EADDRINUSE;
}

redisContext *
sk_test_rcluster_node(const struct sk_test_rcluster *c, unsigned i)
{
	struct timeval tv = {.tv_sec = 1};
	redisContext *rc;

	if (i >= c->n)
		return NULL;
	rc = redisConnectWithTimeout("127.0.0.1", c->port[i], tv);
	if (rc == NULL)
		return NULL;
	if (rc->err != 0 || redisSetTimeout(rc, tv) != REDIS_OK) {
		redisFree(rc);
		return NULL;
	}
	return rc;
}

/* reply_has: node @i answers @cmd with a string (or status) holding @what;
 * its text copied to @out (if not NULL) on success. */
static bool
reply_has(const struct sk_test_rcluster *c, unsigned i, const char *cmd, const char *what,
	  char *out, size_t cap)
{
	redisContext *rc = sk_test_rcluster_node(c, i);
	redisReply *r;
	bool ok = false;

	if (rc == NULL)
		return false;
	r = redisCommand(rc, cmd);
	if (r != NULL && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
	    strstr(r->str, what) != NULL) {
		ok = true;
		if (out != NULL)
			snprintf(out, cap, "%s", r->str);
	}
	if (r != NULL)
		freeReplyObject(r);
	redisFree(rc);
	return ok;
}

/* spawn: fork and exec @argv with stdout and stderr to @log; the child
 * dies with us. The pid, or a negative errno. */
static pid_t
spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		FILE *f = freopen(log, "a", stdout);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (f == NULL || dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int
node_start(struct sk_test_rcluster *c, unsigned i, const char *dir)
{
	char ndir[PATH_MAX], log[PATH_MAX + 16], port[16];
	int n = snprintf(ndir, sizeof(ndir), "%s/n%u", dir, i);

	if (n < 0 || (size_t)n >= sizeof(ndir))
		return -ENAMETOOLONG;
	if (mkdir(ndir, 0700) != 0 && errno != EEXIST)
		return -errno;
	snprintf(log, sizeof(log), "%s/redis.log", ndir);
	snprintf(port, sizeof(port), "%d", c->port[i]);
	char *const argv[] = {"redis-server",
			      "--port",
			      port,
			      "--bind",
			      "127.0.0.1",
			      "--cluster-enabled",
			      "yes",
			      "--cluster-config-file",
			      "nodes.conf",
			      "--cluster-node-timeout",
			      "5000",
			      "--dir",
			      ndir,
			      "--save",
			      "",
			      "--appendonly",
			      "yes",
			      "--appendfsync",
			      "everysec",
			      "--daemonize",
			      "no",
			      "--logfile",
			      log,
			      NULL};
	pid_t pid = spawn(argv, log);

	if (pid < 0)
		return (int)pid;
	c->pid[i] = pid;
	return 0;
}

/* wait_all: until @ok(c, i) holds for every node, every server alive. */
static int
wait_all(struct sk_test_rcluster *c, long long end,
	 bool (*ok)(struct sk_test_rcluster *c, unsigned i))
{
	for (unsigned i = 0; i < c->n;) {
		int st;

		if (waitpid(c->pid[i], &st, WNOHANG) == c->pid[i]) {
			c->pid[i] = 0;
			return -ECHILD;
		}
		if (ok(c, i)) {
			i++;
			continue;
		}
		if (sk_test_redis_now_ms() >= end)
			return -ETIMEDOUT;
		poll(NULL, 0, STEP_MS);
	}
	return 0;
}

static bool
is_up(struct sk_test_rcluster *c, unsigned i)
{
	return reply_has(c, i, "CLUSTER MYID", "", c->id[i], sizeof(c->id[i])) &&
	       strlen(c->id[i]) == 40;
}

static bool
is_ok(struct sk_test_rcluster *c, unsigned i)
{
	return reply_has(c, i, "CLUSTER INFO", "cluster_state:ok", NULL, 0);
}

/* create: redis-cli --cluster create, bounded by timeout(1); 0 if it
 * exited 0. */
static int
create(struct sk_test_rcluster *c, const char *dir)
{
	char addr[SK_TEST_RCLUSTER_MAX][32], log[PATH_MAX + 16];
	char *argv[8 + SK_TEST_RCLUSTER_MAX];
	int argc = 0, st;
	pid_t pid;

	argv[argc++] = "timeout";
	argv[argc++] = "60";
	argv[argc++] = "redis-cli";
	argv[argc++] = "--cluster";
	argv[argc++] = "create";
	for (unsigned i = 0; i < c->n; i++) {
		snprintf(addr[i], sizeof(addr[i]), "127.0.0.1:%d", c->port[i]);
		argv[argc++] = addr[i];
	}
	argv[argc++] = "--cluster-yes";
	argv[argc] = NULL;
	snprintf(log, sizeof(log), "%s/create.log", dir);
	pid = spawn(argv, log);
	if (pid < 0)
		return (int)pid;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -ECHILD;
	return 0;
}

int
sk_test_rcluster_start(struct sk_test_rcluster *c, const char *dir, unsigned n)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (n == 0 || n > SK_TEST_RCLUSTER_MAX)
		return -EINVAL;
	c->n = n;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		c->port[i] = free_port(c->port, i);
		rc = c->port[i] < 0 ? c->port[i] : node_start(c, i, dir);
	}
	if (rc == 0)
		rc = wait_all(c, end, is_up);
	if (rc == 0)
		rc = create(c, dir);
	if (rc == 0)
		rc = wait_all(c, end, is_ok);
	if (rc != 0)
		sk_test_rcluster_stop(c);
	return rc;
}

int
sk_test_rcluster_owner(const struct sk_test_rcluster *c, unsigned slot)
{
	redisContext *rc = sk_test_rcluster_node(c, 0);
	redisReply *r;
	int owner = -1;

	if (rc == NULL)
		return -1;
	r = redisCommand(rc, "CLUSTER SLOTS");
	/* [[from, to, [host, port, id], ...], ...] */
	for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
		redisReply *e = r->element[i];

		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2)
			continue;
		if ((long long)slot < e->element[0]->integer ||
		    (long long)slot > e->element[1]->integer)
			continue;
		for (unsigned k = 0; k < c->n; k++)
			if (e->element[2]->element[1]->integer == c->port[k])
				owner = (int)k;
	}
	if (r != NULL)
		freeReplyObject(r);
	redisFree(rc);
	return owner;
}

void
sk_test_rcluster_stop(struct sk_test_rcluster *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		int st;

		if (c->pid[i] <= 0)
			continue;
		kill(c->pid[i], SIGKILL);
		while (waitpid(c->pid[i], &st, 0) < 0 && errno == EINTR)
			;
		c->pid[i] = 0;
	}
}
