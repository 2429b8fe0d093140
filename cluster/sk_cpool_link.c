/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cpool_link.c - one Redis connection of the cluster pool with its
 * reconnect backoff (100 ms doubling to 5 s), shared by the client
 * (sk_cpool.c) and the subscriber (sk_cpool_sub.c); the config checks.
 *
 * Nothing here sleeps: a connect is tried only when the backoff allows it,
 * otherwise the caller gets -ENOTCONN at once.
 *
 * Each new connection is made fit before use: AUTH (the password read
 * from its file at open), then the maxmemory-policy (noeviction only) and
 * the master_replid the scripts fence with (sk_cpool_check()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sk_cpool_impl.h"
#include "sk_secret_file.h"

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
	if (cfg->user != NULL) {
		size_t n = strlen(cfg->user);

		/* AUTH needs a password; the name goes into error texts. */
		if (n == 0 || n > SK_CPOOL_USER_MAX || cfg->password_file == NULL)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)cfg->user[i] <= ' ' ||
			    (unsigned char)cfg->user[i] >= 0x7f)
				return -EINVAL;
	}
	if (cfg->password_file != NULL && cfg->password_file[0] == '\0')
		return -EINVAL;
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
	if (l->pass != NULL)
		explicit_bzero(l->pass, l->passlen);
	free(l->pass);
	free(l->user);
	free(l->pass_file);
	memset(l, 0, sizeof(*l));
}

/* seterr_file: "<what>: <path>: <why>" into @err (if any). */
static void
seterr_file(char *err, size_t errlen, const char *path, const char *why)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "Redis password file %s: %s", path, why);
}

int
sk_cpool_read_password(const char *path, char *buf, size_t *len, char *err, size_t errlen)
{
	char why[128];
	ssize_t n;
	size_t got = 0;
	int fd, rc = 0;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		seterr_file(err, errlen, path, strerror(-rc));
		return rc;
	}
	rc = sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why));
	if (rc != 0) {
		seterr_file(err, errlen, path, why);
		if (rc == -EINVAL)
			rc = -EPERM; /* not a regular file: refused like an open one */
	}
	/* The longest password, its CR LF and one byte more: too long. */
	while (rc == 0 && got < SK_CPOOL_PASSWORD_BUF) {
		n = read(fd, buf + got, SK_CPOOL_PASSWORD_BUF - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			seterr_file(err, errlen, path, strerror(-rc));
		} else if (n == 0) {
			break;
		}
		got += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	if (rc == 0 && got > 0 && buf[got - 1] == '\n') {
		got--;
		if (got > 0 && buf[got - 1] == '\r')
			got--;
	}
	if (rc == 0 && (got == 0 || got > SK_CPOOL_PASSWORD_MAX)) {
		rc = -EINVAL;
		seterr_file(err, errlen, path,
			    got == 0 ? "empty" : "longer than 512 bytes (one line is read)");
	}
	if (rc == 0 && (memchr(buf, '\0', got) != NULL || memchr(buf, '\n', got) != NULL ||
			memchr(buf, '\r', got) != NULL)) {
		rc = -EINVAL;
		seterr_file(err, errlen, path, "holds a NUL, CR or LF inside the password");
	}
	if (rc != 0) {
		explicit_bzero(buf, SK_CPOOL_PASSWORD_BUF);
		return rc;
	}
	buf[got] = '\0';
	*len = got;
	return 0;
}

int
sk_cpool_link_auth(struct sk_cpool_link *l, const char *user, const char *pass, size_t len,
		   const char *file)
{
	l->pass = malloc(len + 1);
	l->user = user != NULL ? strdup(user) : NULL;
	l->pass_file = strdup(file != NULL ? file : "?");
	if (l->pass == NULL || (user != NULL && l->user == NULL) || l->pass_file == NULL)
		return -ENOMEM;
	memcpy(l->pass, pass, len);
	l->pass[len] = '\0';
	l->passlen = len;
	return 0;
}

int
sk_cpool_link_init_cfg(struct sk_cpool_link *l, const struct sk_cpool_config *cfg, char *err,
		       size_t errlen)
{
	char pass[SK_CPOOL_PASSWORD_BUF];
	size_t len;
	int rc;

	rc = sk_cpool_link_init(l, cfg->host, cfg->unix_path, cfg->port, cfg->timeout_ms);
	if (rc == 0 && cfg->password_file != NULL) {
		rc = sk_cpool_read_password(cfg->password_file, pass, &len, err, errlen);
		if (rc == 0)
			rc = sk_cpool_link_auth(l, cfg->user, pass, len, cfg->password_file);
		explicit_bzero(pass, sizeof(pass));
	}
	if (rc != 0)
		sk_cpool_link_fini(l);
	return rc;
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

/* where: the link's address, for error texts. */
static const char *
where(const struct sk_cpool_link *l, char *buf, size_t cap)
{
	if (l->unix_path != NULL)
		snprintf(buf, cap, "unix:%s", l->unix_path);
	else
		snprintf(buf, cap, "%s:%d", l->host, l->port);
	return buf;
}

/* info_field: the value of "<name>:" in INFO text @info into @out
 * (to the end of its line); false if absent. */
static bool
info_field(const char *info, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);

	for (const char *p = info; p != NULL && *p != '\0';) {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (len > n && strncmp(p, name, n) == 0 && p[n] == ':') {
			size_t v = len - n - 1;

			while (v > 0 && (p[n + v] == '\r' || p[n + v] == ' '))
				v--;
			if (v == 0 || v >= cap)
				return false;
			memcpy(out, p + n + 1, v);
			out[v] = '\0';
			return true;
		}
		p = eol != NULL ? eol + 1 : NULL;
	}
	return false;
}

/* io_err: a command got no reply: -ETIMEDOUT (the socket timeout fired)
 * or -EIO. Call right after hiredis failed (errno). */
static int
io_err(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -EIO;
}

/* needs_auth: @r is Redis' "authenticate first" (no password configured). */
static bool
needs_auth(const redisReply *r)
{
	return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0;
}

/* auth: AUTH [user] password on the new connection. 0, -EKEYREJECTED
 * (words in l->err), or -EIO / -ETIMEDOUT (the connection failed). */
static int
auth(struct sk_cpool_link *l, const char *at)
{
	const char *argv[3] = {"AUTH"};
	size_t lens[3] = {4};
	int argc = 1, rc = 0;
	redisReply *r;

	if (l->user != NULL) {
		argv[argc] = l->user;
		lens[argc++] = strlen(l->user);
	}
	argv[argc] = l->pass;
	lens[argc++] = l->passlen;
	r = redisCommandArgv(l->c, argc, argv, lens);
	if (r == NULL)
		return io_err();
	if (r->type == REDIS_REPLY_ERROR) {
		sk_cpool_link_seterr(l, "redis %s: AUTH%s%s with the password of %s refused: %s",
				     at, l->user != NULL ? " as " : "",
				     l->user != NULL ? l->user : "", l->pass_file, r->str);
		rc = -EKEYREJECTED;
	}
	freeReplyObject(r);
	return rc;
}

/*
 * fit: the checks of a new connection (sk_cpool_check()): AUTH, the
 * maxmemory-policy, the master_replid. 0, -EKEYREJECTED, -EPERM, -EPROTO
 * (words in l->err), or -EIO / -ETIMEDOUT (the connection failed).
 */
static int
fit(struct sk_cpool_link *l)
{
	char at[160], policy[64] = "", replid[64], why[96] = "";
	redisReply *r;
	int rc;

	where(l, at, sizeof(at));
	if (l->pass != NULL && (rc = auth(l, at)) != 0)
		return rc;
	r = redisCommand(l->c, "CONFIG GET maxmemory-policy");
	if (r == NULL)
		return io_err();
	if (needs_auth(r)) {
		sk_cpool_link_seterr(l, "redis %s needs AUTH: no password file is configured", at);
		freeReplyObject(r);
		return -EKEYREJECTED;
	}
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[1]->type == REDIS_REPLY_STRING && r->element[1]->len < sizeof(policy))
		snprintf(policy, sizeof(policy), "%s", r->element[1]->str);
	else /* disabled, renamed, or not the user's: INFO says it too */
		snprintf(why, sizeof(why), "%.80s",
			 r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
	freeReplyObject(r);
	r = redisCommand(l->c, "INFO");
	if (r == NULL)
		return io_err();
	rc = 0;
	if (r->type != REDIS_REPLY_STRING) {
		sk_cpool_link_seterr(l, "redis %s: INFO: %s", at,
				     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		rc = needs_auth(r) ? -EKEYREJECTED : -EPERM;
	} else if (policy[0] == '\0' &&
		   !info_field(r->str, "maxmemory_policy", policy, sizeof(policy))) {
		sk_cpool_link_seterr(l,
				     "redis %s: cannot read its maxmemory-policy (CONFIG GET: %s; "
				     "INFO memory has no maxmemory_policy): refused, it must be "
				     "noeviction",
				     at, why);
		rc = -EPERM;
	} else if (strcmp(policy, "noeviction") != 0) {
		sk_cpool_link_seterr(
			l,
			"redis %s: maxmemory-policy is %s, not noeviction: an evicted "
			"pool key would let a resent give-back apply twice (oversell); "
			"set maxmemory-policy noeviction",
			at, policy);
		rc = -EPERM;
	} else if (!info_field(r->str, "master_replid", replid, sizeof(replid))) {
		sk_cpool_link_seterr(l,
				     "redis %s: INFO replication has no master_replid: the pool "
				     "cannot be fenced after a restart or failover; refused",
				     at);
		rc = -EPROTO;
	}
	freeReplyObject(r);
	return rc;
}

int
sk_cpool_link_connect(struct sk_cpool_link *l)
{
	struct timeval tv = ms_tv(l->timeout_ms);
	redisContext *c;
	int rc;

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
	l->refused = 0;
	rc = fit(l);
	if (rc == -EIO || rc == -ETIMEDOUT) {
		char at[160];

		sk_cpool_link_seterr(l, "redis %s: %s", where(l, at, sizeof(at)),
				     rc == -ETIMEDOUT	    ? "timed out"
				     : c->errstr[0] != '\0' ? c->errstr
							    : "connection lost");
	}
	if (rc != 0) {
		l->refused = rc == -EIO || rc == -ETIMEDOUT ? 0 : rc;
		redisFree(c);
		l->c = NULL;
		backoff(l);
		return rc == -ETIMEDOUT ? rc : -ENOTCONN;
	}
	return 1;
}

int
sk_cpool_check(const struct sk_cpool_config *cfg, char *err, size_t errlen)
{
	struct sk_cpool_link l;
	struct sk_cpool_nopipe np;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	rc = sk_cpool_config_check(cfg);
	if (rc != 0) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "bad Redis settings (address, member, user)");
		return rc;
	}
	rc = sk_cpool_link_init_cfg(&l, cfg, err, errlen);
	if (rc != 0)
		return rc;
	sk_cpool_nopipe_begin(&np);
	rc = sk_cpool_link_connect(&l);
	sk_cpool_nopipe_end(&np);
	if (rc < 0 && l.refused != 0)
		rc = l.refused;
	if (rc < 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", l.err);
	sk_cpool_link_fini(&l);
	return rc < 0 ? rc : 0;
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
