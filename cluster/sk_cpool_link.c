/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cpool_link.c - one Redis connection of the cluster pool with its
 * reconnect backoff (100 ms doubling to 5 s), shared by the client
 * (sk_cpool.c) and the subscriber (sk_cpool_sub.c); the config checks.
 *
 * Nothing here sleeps: a connect is tried only when the backoff allows it,
 * otherwise the caller gets -ENOTCONN at once.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "sk_cpool_impl.h"

int64_t
sk_cpool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool
sk_cpool_member_valid(const char *id)
{
	size_t n = 0;

	if (id == NULL)
		return false;
	for (; id[n] != '\0'; n++) {
		char ch = id[n];

		if (n >= SK_CPOOL_MEMBER_MAX)
			return false;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
		      ch == '-'))
			return false;
	}
	return n > 0;
}

int
sk_cpool_config_check(const struct sk_cpool_config *cfg)
{
	if (cfg == NULL || !sk_cpool_member_valid(cfg->member) || cfg->timeout_ms <= 0)
		return -EINVAL;
	if (cfg->unix_path == NULL || cfg->unix_path[0] == '\0') {
		if (cfg->host == NULL || cfg->host[0] == '\0' || cfg->port <= 0 ||
		    cfg->port > 65535)
			return -EINVAL;
	}
	if (cfg->prefix != NULL) {
		size_t n = strlen(cfg->prefix);

		if (n == 0 || n > SK_CPOOL_PREFIX_MAX)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)cfg->prefix[i];

			/* A brace would change the hash tag of the keys. */
			if (ch <= ' ' || ch >= 0x7f || ch == '{' || ch == '}')
				return -EINVAL;
		}
	}
	return 0;
}

void
sk_cpool_nopipe_begin(struct sk_cpool_nopipe *np)
{
	sigset_t pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	np->pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &pipe, &np->old);
}

void
sk_cpool_nopipe_end(struct sk_cpool_nopipe *np)
{
	sigset_t pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (!np->pending && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1) {
		struct timespec zero = {0, 0};

		sigtimedwait(&pipe, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &np->old, NULL);
}

void
sk_cpool_link_seterr(struct sk_cpool_link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
}

int
sk_cpool_link_init(struct sk_cpool_link *l, const char *host, const char *unix_path, int port,
		   int timeout_ms)
{
	memset(l, 0, sizeof(*l));
	if (unix_path != NULL && unix_path[0] != '\0') {
		l->unix_path = strdup(unix_path);
		if (l->unix_path == NULL)
			return -ENOMEM;
	} else {
		l->host = strdup(host);
		if (l->host == NULL)
			return -ENOMEM;
	}
	l->port = port;
	l->timeout_ms = timeout_ms;
	l->backoff_ms = SK_CPOOL_BACKOFF_MIN_MS;
	return 0;
}

void
sk_cpool_link_fini(struct sk_cpool_link *l)
{
	if (l->c != NULL)
		redisFree(l->c);
	free(l->host);
	free(l->unix_path);
	memset(l, 0, sizeof(*l));
}

static struct timeval
ms_tv(int ms)
{
	return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

/* backoff: no connect before now + the delay, which doubles up to its cap. */
static void
backoff(struct sk_cpool_link *l)
{
	l->up = false;
	l->next_try_ms = sk_cpool_now_ms() + l->backoff_ms;
	l->backoff_ms *= 2;
	if (l->backoff_ms > SK_CPOOL_BACKOFF_MAX_MS)
		l->backoff_ms = SK_CPOOL_BACKOFF_MAX_MS;
}

int
sk_cpool_link_connect(struct sk_cpool_link *l)
{
	struct timeval tv = ms_tv(l->timeout_ms);
	redisContext *c;

	if (l->c != NULL)
		return 0;
	if (sk_cpool_now_ms() < l->next_try_ms)
		return -ENOTCONN;
	if (l->unix_path != NULL)
		c = redisConnectUnixWithTimeout(l->unix_path, tv);
	else
		c = redisConnectWithTimeout(l->host, l->port, tv);
	if (c == NULL) {
		sk_cpool_link_seterr(l, "connect: out of memory");
		backoff(l);
		return -ENOMEM;
	}
	if (c->err != 0 || redisSetTimeout(c, tv) != REDIS_OK) {
		if (l->unix_path != NULL)
			sk_cpool_link_seterr(l, "connect to %s: %s", l->unix_path, c->errstr);
		else
			sk_cpool_link_seterr(l, "connect to %s:%d: %s", l->host, l->port,
					     c->errstr);
		redisFree(c);
		backoff(l);
		return -ENOTCONN;
	}
	l->c = c;
	return 1;
}

void
sk_cpool_link_ok(struct sk_cpool_link *l)
{
	l->up = true;
	l->backoff_ms = SK_CPOOL_BACKOFF_MIN_MS;
}

int
sk_cpool_link_fail(struct sk_cpool_link *l, int err_no)
{
	bool timeout = err_no == EAGAIN || err_no == EWOULDBLOCK;

	if (l->c != NULL) {
		if (l->c->err != 0)
			sk_cpool_link_seterr(l, "redis: %s", timeout ? "timed out" : l->c->errstr);
		redisFree(l->c);
		l->c = NULL;
	}
	backoff(l);
	return timeout ? -ETIMEDOUT : -ENOTCONN;
}
