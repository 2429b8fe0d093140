/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of what makes a Redis fit for the cluster pool (sk_cpool.h:
 * sk_cpool_check() and every connect) against a real redis-server started
 * by each test on a unix socket in a temporary folder (sk_test_redis.h):
 * the password file's rules; AUTH with a password and with an ACL user on
 * the client's link and on the subscriber's, and again after a reconnect;
 * a wrong password refused at start, naming the file; a maxmemory-policy
 * other than noeviction refused (CONFIG GET, and INFO where CONFIG is
 * renamed away); a new master_replid (a promotion) fences the pool; and
 * the whole of it through TLS, a local stunnel on each side.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "sk_cpool.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_redis.h"

#define ITEM	   7u
#define TOTAL	   10u
#define TIMEOUT_MS 3000
#define WAIT_MS	   15000

static char base[PATH_MAX], dir[PATH_MAX], pwfile[PATH_MAX + 16];
static struct sk_test_redis rs;
static const char *const ab[] = {"a", "b"};
/* The password of the test's own connections once Redis asks for one. */
static const char *admin_pass;

static void
base_setup(void)
{
	ck_assert_int_eq(sk_test_tmpdir(base, sizeof(base), "sk-cpool-auth"), 0);
}

static void
base_teardown(void)
{
	sk_test_rmtree(base);
}

/* start: a fresh folder and a redis-server in it, with @extra arguments. */
static void
start(const char *const *extra)
{
	int n = snprintf(dir, sizeof(dir), "%s/t-XXXXXX", base);

	ck_assert(n > 0 && (size_t)n < sizeof(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(sk_test_redis_start_args(&rs, dir, extra), 0);
	snprintf(pwfile, sizeof(pwfile), "%s/redis.pass", dir);
	admin_pass = NULL;
}

static void
setup(void)
{
	start(NULL);
}

static void
teardown(void)
{
	sk_test_redis_stop(&rs, SIGKILL);
	sk_test_rmtree(dir);
}

/* write_file: @text into @path, mode @mode. */
static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* redis: a command of the test's own (words split on blanks) on a fresh
 * connection, AUTH admin_pass first if set; its reply as text. */
static void
redis(char *out, size_t cap, const char *fmt, ...)
{
	struct timeval tv = {.tv_sec = 3};
	redisContext *c = redisConnectUnixWithTimeout(rs.sock, tv);
	redisReply *r;
	va_list ap;

	ck_assert(c != NULL && c->err == 0);
	if (admin_pass != NULL) {
		r = redisCommand(c, "AUTH %s", admin_pass);
		ck_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
		freeReplyObject(r);
	}
	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	ck_assert_ptr_nonnull(r);
	sk_test_redis_reply_str(r, out, cap);
	freeReplyObject(r);
	redisFree(c);
}

static struct sk_cpool_config
cfg_of(const char *member, const char *user, const char *file)
{
	return (struct sk_cpool_config){.unix_path = rs.sock,
					.member = member,
					.timeout_ms = TIMEOUT_MS,
					.user = user,
					.password_file = file};
}

/* ops: init, both members' syncs, a lease that empties the pool and both
 * members' dry reports: the item sold out (a broadcast). */
static void
ops(const struct sk_cpool_config *ca, const struct sk_cpool_config *cb)
{
	struct sk_cpool *a, *b;
	uint64_t g;
	bool unf, so;

	ck_assert_int_eq(sk_cpool_open(&a, ca), 0);
	ck_assert_int_eq(sk_cpool_open(&b, cb), 0);
	ck_assert_msg(sk_cpool_init(a, ITEM, TOTAL, ab, 2) == 0, "%s", sk_cpool_errstr(a));
	ck_assert_int_eq(sk_cpool_sync(a, ITEM, 1, 0, &unf), 0);
	ck_assert_int_eq(sk_cpool_sync(b, ITEM, 1, 0, &unf), 0);
	ck_assert(unf);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 1, TOTAL, &g), 0);
	ck_assert_uint_eq(g, TOTAL);
	ck_assert_int_eq(sk_cpool_dry(b, ITEM, 0, &so, NULL), 0);
	ck_assert_int_eq(sk_cpool_dry(a, ITEM, 0, &so, NULL), 0);
	ck_assert(so);
	sk_cpool_close(a);
	sk_cpool_close(b);
}

struct seen {
	int flags;
	bool sold_out;
};

static void
on_event(const struct sk_cpool_event *ev, void *arg)
{
	struct seen *s = arg;

	if (ev->kind == SK_CPOOL_EV_FLAG && ev->item == ITEM) {
		s->flags++;
		s->sold_out = ev->sold_out;
	}
}

/* subscribed: poll @s until it subscribed (bounded); its last return. */
static int
subscribe(struct sk_cpool_sub *s)
{
	long long end = sk_test_redis_now_ms() + 3000;
	struct seen none = {0};
	bool resub = false;
	int rc;

	do {
		rc = sk_cpool_sub_poll(s, 200, on_event, &none, &resub);
	} while (!resub && sk_test_redis_now_ms() < end);
	return resub ? 0 : rc;
}

/* wait_flag: poll @s until a sold-out broadcast arrived (bounded). */
static struct seen
wait_flag(struct sk_cpool_sub *s)
{
	long long end = sk_test_redis_now_ms() + WAIT_MS;
	struct seen e = {0};

	while (e.flags == 0 && sk_test_redis_now_ms() < end)
		(void)sk_cpool_sub_poll(s, 200, on_event, &e, NULL);
	return e;
}

/* --------------------------------------------------- the password file */

START_TEST(password_file_rules)
{
	struct sk_cpool_config c = cfg_of("a", NULL, pwfile);
	char err[512], missing[PATH_MAX + 16];
	struct sk_cpool *p;

	/* Open to the group or to others: refused, the file named. */
	write_file(pwfile, "s3cret\n", 0640);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, pwfile) != NULL && strstr(err, "chmod 600") != NULL, "%s", err);
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EPERM);
	write_file(pwfile, "s3cret\n", 0604);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EPERM);
	/* Empty, or a line break inside. */
	write_file(pwfile, "\n", 0600);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "empty") != NULL, "%s", err);
	write_file(pwfile, "one\ntwo\n", 0600);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "one") == NULL, "the secret in the error: %s", err);
	/* Missing. */
	snprintf(missing, sizeof(missing), "%s/nope", dir);
	c.password_file = missing;
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, missing) != NULL, "%s", err);
	/* A user needs a password file; a user name with a blank is refused. */
	c = cfg_of("a", "seckill", NULL);
	ck_assert_int_eq(sk_cpool_open(&p, &c), -EINVAL);
	write_file(pwfile, "s3cret", 0400);
	c = cfg_of("a", "sec kill", pwfile);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EINVAL);
	/* 0400, no newline, and Redis without a password: AUTH refused. */
	c = cfg_of("a", NULL, pwfile);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EKEYREJECTED);
}
END_TEST

/* ------------------------------------------------------------- AUTH */

START_TEST(auth_password)
{
	struct sk_cpool_config good = cfg_of("a", NULL, pwfile), goodb = cfg_of("b", NULL, pwfile);
	struct sk_cpool_config none = cfg_of("a", NULL, NULL);
	char err[512], out[256], wrong[PATH_MAX + 16];
	struct sk_cpool_sub *anon, *sub;
	struct sk_cpool *p;
	struct seen e;

	redis(out, sizeof(out), "CONFIG SET requirepass s3cret-pw");
	admin_pass = "s3cret-pw";
	write_file(pwfile, "s3cret-pw\n", 0600);
	ck_assert_msg(sk_cpool_check(&good, err, sizeof(err)) == 0, "%s", err);
	/* No password: refused at start, and a call finds Redis unusable. */
	ck_assert_int_eq(sk_cpool_check(&none, err, sizeof(err)), -EKEYREJECTED);
	ck_assert_msg(strstr(err, "needs AUTH") != NULL, "%s", err);
	ck_assert_int_eq(sk_cpool_open(&p, &none), 0);
	ck_assert_int_eq(sk_cpool_init(p, ITEM, TOTAL, ab, 2), -ENOTCONN);
	sk_cpool_close(p);
	/* A wrong password: refused at start; the words name the file, never
	 * the password. */
	snprintf(wrong, sizeof(wrong), "%s/wrong.pass", dir);
	write_file(wrong, "not-it\n", 0600);
	good.password_file = wrong;
	ck_assert_int_eq(sk_cpool_check(&good, err, sizeof(err)), -EKEYREJECTED);
	ck_assert_msg(strstr(err, wrong) != NULL && strstr(err, "not-it") == NULL, "%s", err);
	good.password_file = pwfile;
	/* Both links: the subscriber without AUTH never subscribes; with it
	 * the broadcast of the sale that sells out arrives. */
	ck_assert_int_eq(sk_cpool_sub_open(&anon, &none), 0);
	ck_assert_int_eq(sk_cpool_sub_open(&sub, &good), 0);
	ck_assert_int_lt(subscribe(anon), 0);
	ck_assert_msg(strstr(sk_cpool_sub_errstr(anon), "needs AUTH") != NULL, "%s",
		      sk_cpool_sub_errstr(anon));
	ck_assert_msg(subscribe(sub) == 0, "%s", sk_cpool_sub_errstr(sub));
	ops(&good, &goodb);
	e = wait_flag(sub);
	ck_assert(e.flags == 1 && e.sold_out);
	/* Reconnections AUTH again: every client link killed by Redis. */
	redis(out, sizeof(out), "CLIENT KILL TYPE pubsub");
	ck_assert_int_eq(sk_cpool_open(&p, &good), 0);
	ck_assert_int_eq(sk_cpool_init(p, ITEM + 1, TOTAL, ab, 2), 0);
	redis(out, sizeof(out), "CLIENT KILL TYPE normal");
	ck_assert_msg(sk_cpool_init(p, ITEM + 1, TOTAL, ab, 2) == 0, "%s", sk_cpool_errstr(p));
	ck_assert_msg(subscribe(sub) == 0, "%s", sk_cpool_sub_errstr(sub));
	sk_cpool_close(p);
	sk_cpool_sub_close(anon);
	sk_cpool_sub_close(sub);
}
END_TEST

/* An ACL user with only what the member needs (docs/cluster.md); the
 * default user has another password. */
START_TEST(auth_acl_user)
{
	struct sk_cpool_config ca = cfg_of("a", "seckill", pwfile);
	struct sk_cpool_config cb = cfg_of("b", "seckill", pwfile);
	struct sk_cpool_config other = cfg_of("a", "nobody", pwfile);
	char err[512], out[256];
	struct sk_cpool_sub *sub;
	struct seen e;

	redis(out, sizeof(out),
	      "ACL SETUSER seckill on >acl-pw ~seckill:* ~stock:* &seckill:* +@read +@write "
	      "+@scripting +@pubsub +@connection +info +config|get +asking +time");
	ck_assert_str_eq(out, "OK");
	redis(out, sizeof(out), "CONFIG SET requirepass admin-pw");
	admin_pass = "admin-pw";
	write_file(pwfile, "acl-pw\n", 0600);
	ck_assert_msg(sk_cpool_check(&ca, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sk_cpool_check(&other, err, sizeof(err)), -EKEYREJECTED);
	ck_assert_msg(strstr(err, "as nobody") != NULL && strstr(err, pwfile) != NULL, "%s", err);
	ck_assert_int_eq(sk_cpool_sub_open(&sub, &ca), 0);
	ck_assert_msg(subscribe(sub) == 0, "%s", sk_cpool_sub_errstr(sub));
	ops(&ca, &cb);
	e = wait_flag(sub);
	ck_assert(e.flags == 1 && e.sold_out);
	sk_cpool_sub_close(sub);
	/* Without +config|get the policy is read from INFO. */
	redis(out, sizeof(out), "ACL SETUSER seckill -config|get");
	ck_assert_msg(sk_cpool_check(&ca, err, sizeof(err)) == 0, "%s", err);
	redis(out, sizeof(out), "CONFIG SET maxmemory-policy volatile-ttl");
	ck_assert_int_eq(sk_cpool_check(&ca, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "volatile-ttl") != NULL, "%s", err);
}
END_TEST

/* ------------------------------------------------------- noeviction */

START_TEST(eviction_refused)
{
	struct sk_cpool_config c = cfg_of("a", NULL, NULL);
	char err[512], out[256];
	struct sk_cpool *p;
	struct sk_cpool_sub *s;

	ck_assert_msg(sk_cpool_check(&c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sk_cpool_open(&p, &c), 0);
	ck_assert_int_eq(sk_cpool_init(p, ITEM, TOTAL, ab, 2), 0);
	redis(out, sizeof(out), "CONFIG SET maxmemory-policy allkeys-lru");
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "maxmemory-policy is allkeys-lru, not noeviction") != NULL, "%s",
		      err);
	/* A reconnect refuses it too: no call goes through. */
	redis(out, sizeof(out), "CLIENT KILL TYPE normal");
	ck_assert_int_eq(sk_cpool_init(p, ITEM, TOTAL, ab, 2), -ENOTCONN);
	ck_assert_msg(strstr(sk_cpool_errstr(p), "allkeys-lru") != NULL, "%s", sk_cpool_errstr(p));
	ck_assert_int_eq(sk_cpool_sub_open(&s, &c), 0);
	ck_assert_int_lt(subscribe(s), 0);
	sk_cpool_sub_close(s);
	sk_cpool_close(p);
}
END_TEST

/* CONFIG renamed away: the policy comes from INFO memory. */
START_TEST(eviction_from_info)
{
	static const char *const lru[] = {"--rename-command",	"CONFIG",      "",
					  "--maxmemory-policy", "allkeys-lfu", NULL};
	struct sk_cpool_config c;
	char err[512];

	teardown();
	start(lru);
	c = cfg_of("a", NULL, NULL);
	ck_assert_int_eq(sk_cpool_check(&c, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "allkeys-lfu") != NULL, "%s", err);
}
END_TEST

/* -------------------------------------------------------- fencing */

/* A new replication id (what a promotion gives, the process and its
 * run_id unchanged): the pool is fenced. */
START_TEST(replid_fences)
{
	struct sk_cpool_config ca = cfg_of("a", NULL, NULL), cb = cfg_of("b", NULL, NULL);
	struct sk_cpool_view v;
	struct sk_cpool *a;
	char out[256];
	uint64_t g;

	ops(&ca, &cb);
	ck_assert_int_eq(sk_cpool_open(&a, &ca), 0);
	ck_assert_int_eq(sk_cpool_view(a, ITEM, &v), 0);
	ck_assert(!v.fenced && v.epoch == 1);
	redis(out, sizeof(out), "DEBUG CHANGE-REPL-ID");
	ck_assert_msg(strcmp(out, "OK") == 0, "%s", out);
	ck_assert_int_eq(sk_cpool_view(a, ITEM, &v), 0);
	ck_assert(v.fenced);
	ck_assert_uint_eq(v.epoch, 2);
	ck_assert_int_eq(sk_cpool_lease(a, ITEM, 2, 1, &g), -EAGAIN);
	sk_cpool_close(a);
}
END_TEST

static void
debug_setup(void)
{
	static const char *const dbg[] = {"--enable-debug-command", "local", NULL};

	start(dbg);
}

/* ------------------------------------------------------------- TLS */

/* free_port: a TCP port of 127.0.0.1 free now. */
static int
free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* run: @argv (a program on PATH) to its end, its output to @log; its
 * exit status, or -1. */
static int
run(const char *const *argv, const char *log)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The member -> stunnel (client, 127.0.0.1:P1) -> TLS -> stunnel (server,
 * 127.0.0.1:P2, a self-signed certificate) -> redis-server (unix socket):
 * docs/cluster.md "TLS". AUTH goes through it, both links work, and P2
 * speaks TLS only. */
START_TEST(tls_stunnel)
{
	char cert[PATH_MAX + 16], key[PATH_MAX + 16], conf[PATH_MAX + 16], log[PATH_MAX + 16];
	char text[4096 + 4 * PATH_MAX], err[512], out[256];
	int p1 = free_port(), p2 = free_port(), rc = -1;
	struct sk_cpool_config ca, cb;
	struct sk_cpool_sub *sub;
	struct seen e;
	long long end;
	pid_t pid;

	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(conf, sizeof(conf), "%s/stunnel.conf", dir);
	snprintf(log, sizeof(log), "%s/stunnel.log", dir);
	const char *req[] = {"openssl",
			     "req",
			     "-x509",
			     "-newkey",
			     "ec",
			     "-pkeyopt",
			     "ec_paramgen_curve:prime256v1",
			     "-nodes",
			     "-keyout",
			     key,
			     "-out",
			     cert,
			     "-days",
			     "1",
			     "-subj",
			     "/CN=localhost",
			     NULL};
	ck_assert_msg(run(req, log) == 0, "openssl req failed: see %s", log);
	snprintf(text, sizeof(text),
		 "foreground = yes\npid =\noutput = %s\n"
		 "[member-side]\nclient = yes\naccept = 127.0.0.1:%d\nconnect = 127.0.0.1:%d\n"
		 "verifyPeer = yes\nCAfile = %s\n"
		 "[redis-side]\naccept = 127.0.0.1:%d\ncert = %s\nkey = %s\nconnect = %s\n",
		 log, p1, p2, cert, p2, cert, key, rs.sock);
	write_file(conf, text, 0600);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execlp("stunnel", "stunnel", conf, (char *)NULL);
		_exit(127);
	}
	redis(out, sizeof(out), "CONFIG SET requirepass tls-pw");
	admin_pass = "tls-pw";
	write_file(pwfile, "tls-pw\n", 0600);
	ca = (struct sk_cpool_config){.host = "127.0.0.1",
				      .port = p1,
				      .member = "a",
				      .timeout_ms = TIMEOUT_MS,
				      .password_file = pwfile};
	cb = ca;
	cb.member = "b";
	/* stunnel listens once it has read its certificate: bounded wait. */
	end = sk_test_redis_now_ms() + WAIT_MS;
	while (sk_test_redis_now_ms() < end && (rc = sk_cpool_check(&ca, err, sizeof(err))) != 0 &&
	       waitpid(pid, NULL, WNOHANG) == 0)
		poll(NULL, 0, 50);
	ck_assert_msg(rc == 0, "through stunnel: %d %s (see %s)", rc, err, log);
	ck_assert_int_eq(sk_cpool_sub_open(&sub, &ca), 0);
	ck_assert_msg(subscribe(sub) == 0, "%s", sk_cpool_sub_errstr(sub));
	ops(&ca, &cb);
	e = wait_flag(sub);
	ck_assert(e.flags == 1 && e.sold_out);
	sk_cpool_sub_close(sub);
	/* The Redis side of the tunnel speaks TLS only: plain Redis gets no
	 * PONG there. */
	{
		struct timeval tv = {.tv_sec = 1};
		redisContext *c = redisConnectWithTimeout("127.0.0.1", p2, tv);
		redisReply *r = NULL;

		ck_assert_ptr_nonnull(c);
		if (c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK)
			r = redisCommand(c, "PING");
		ck_assert(r == NULL || r->type != REDIS_REPLY_STATUS);
		if (r != NULL)
			freeReplyObject(r);
		redisFree(c);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("cpool_auth");
	TCase *tc = tcase_create("auth");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, password_file_rules);
	tcase_add_test(tc, auth_password);
	tcase_add_test(tc, auth_acl_user);
	tcase_add_test(tc, eviction_refused);
	tcase_add_test(tc, eviction_from_info);
	tcase_add_test(tc, tls_stunnel);
	suite_add_tcase(s, tc);
	tc = tcase_create("fence");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, debug_setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, replid_fences);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
