/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's HTTP server (see sk_admin.h): libmicrohttpd glue around
 * sk_admin_handle(), the TCP and unix-socket listeners, and the bearer
 * token of TCP (checked after the guard, before any body is read).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "sk_admin_impl.h"
#include "sk_logfmt.h"

/* At most one admin_auth log line per listener per this long. */
#define AUTH_LOG_EVERY_NS (INT64_C(10) * 1000000000)

struct sk_admin;

/* One listener: what its requests need (libmicrohttpd's closure). */
struct listener {
	struct sk_admin *a;
	bool need_token;		  /* TCP: Authorization: Bearer required */
	_Atomic int64_t auth_logged_ns;	  /* last admin_auth line (monotonic) */
	atomic_uint_least64_t auth_quiet; /* 401s not logged since */
};

struct sk_admin {
	struct sk_control *ctl;
	struct MHD_Daemon *tcp;
	struct MHD_Daemon *unix_d;
	char *socket_path; /* created by us: unlinked at stop */
	uint16_t port;
	unsigned pay_wait_ms;
	struct listener on_tcp, on_unix;
	uint8_t token[ADM_TOKEN_DIGEST];    /* SHA-256 of the TCP token */
	atomic_uint_least64_t unauthorized; /* 401s answered */
};

/* ------------------------------------------------------- libmicrohttpd glue */

/* A request being received: its body, up to SK_ADMIN_BODY_MAX bytes. */
struct req_state {
	size_t len;
	bool too_big;
	char body[SK_ADMIN_BODY_MAX];
};

/* The request state of a request the guard refused: its body is dropped. */
static char refused_mark;

static void
on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	if (*req_cls != &refused_mark)
		free(*req_cls);
	*req_cls = NULL;
}

/* queue_reply - send @r (its body handed to libmicrohttpd). */
static enum MHD_Result
queue_reply(struct MHD_Connection *c, struct sk_admin_reply *r)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);

	if (resp == NULL) {
		free(r->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				r->cache_control != NULL ? r->cache_control : "no-store");
	for (const char *const *h = r->headers; h != NULL && h[0] != NULL && h[1] != NULL; h += 2)
		MHD_add_response_header(resp, h[0], h[1]);
	if (r->allow != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
	if (r->retry_after != 0) {
		char v[16];
		snprintf(v, sizeof(v), "%u", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
	}
	enum MHD_Result ret = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * The query string of a request, rebuilt: libmicrohttpd hands the access
 * handler the path alone and the arguments parsed (percent-decoded), so
 * they are written back percent-encoded for sk_admin_handle() to read.
 */
struct query_buf {
	char s[2 * SK_ADMIN_QUERY_MAX]; /* longer ones are refused (414) there */
	size_t len;
};

/* query_put - append @v percent-encoded (all but unreserved bytes). */
static void
query_put(struct query_buf *q, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)v; *p != '\0'; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' ||
			     *p == '~';
		if (q->len + 4 >= sizeof(q->s))
			return; /* too long anyway: cut, and refused as such */
		if (plain) {
			q->s[q->len++] = (char)*p;
		} else {
			q->s[q->len++] = '%';
			q->s[q->len++] = hex[*p >> 4];
			q->s[q->len++] = hex[*p & 15];
		}
	}
	q->s[q->len] = '\0';
}

static enum MHD_Result
query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct query_buf *q = cls;

	(void)kind;
	if (q->len > 0 && q->len + 1 < sizeof(q->s))
		q->s[q->len++] = '&';
	query_put(q, key);
	if (value != NULL && q->len + 1 < sizeof(q->s)) {
		q->s[q->len++] = '=';
		query_put(q, value);
	}
	return MHD_YES;
}

/* The admin API's own metrics: their table and what it reads. */
struct admin_snap {
	uint64_t unauthorized;
};

static const struct sk_prom_metric admin_rows[] = {
	{.name = "seckill_admin_unauthorized_total",
	 .type = SK_PROM_COUNTER,
	 .help = "Admin API requests on TCP answered 401 (no or a wrong bearer token).",
	 .off = offsetof(struct admin_snap, unauthorized)},
};

const struct sk_prom_table sk_admin_table = SK_PROM_TABLE(admin_rows);

/*
 * metrics_append - the admin API's own metrics after the control plane's,
 * in a 200 answer of /metrics @r. 0, or -ENOMEM (@r's body freed).
 */
static int
metrics_append(const struct sk_admin *a, struct sk_admin_reply *r)
{
	struct admin_snap sn = {sk_admin_unauthorized(a)};
	char more[256] = "";
	struct sk_prom p = {NULL, 0};
	size_t n = 0;
	char *nb = NULL;

	if (r->status != 200)
		return 0;
	p.f = fmemopen(more, sizeof(more), "w");
	if (p.f != NULL) {
		sk_prom_write(&p, &sk_admin_table, &sn);
		if (fclose(p.f) == 0 && p.err == 0) {
			n = strlen(more);
			nb = realloc(r->body, r->len + n + 1);
		}
	}
	if (nb == NULL) {
		free(r->body);
		r->body = NULL;
		return -ENOMEM;
	}
	memcpy(nb + r->len, more, n + 1);
	r->body = nb;
	r->len += n;
	return 0;
}

/*
 * handle - sk_admin_handle() on the request's path and its query string
 * (rebuilt, see struct query_buf).
 */
static int
handle(struct sk_admin *a, struct MHD_Connection *c, const char *url, const char *method,
       const struct req_state *rs, struct sk_admin_reply *r)
{
	struct query_buf q = {.len = 0};
	char *target;
	int rc;

	q.s[0] = '\0';
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.len == 0) {
		rc = sk_admin_handle(a->ctl, method, url, rs->body, rs->len, a->pay_wait_ms, r);
		return rc == 0 && strcmp(url, "/metrics") == 0 ? metrics_append(a, r) : rc;
	}
	target = malloc(strlen(url) + q.len + 2);
	if (target == NULL)
		return -ENOMEM;
	sprintf(target, "%s?%s", url, q.s);
	rc = sk_admin_handle(a->ctl, method, target, rs->body, rs->len, a->pay_wait_ms, r);
	free(target);
	return rc;
}

/*
 * guard - sk_admin_guard() on the request's headers: MHD_YES with nothing
 * queued to go on; else the refusal is queued before any body is read (the
 * connection is closed after it) and *refused set.
 */
static enum MHD_Result
guard(struct MHD_Connection *c, const char *method, const char *url, bool *refused)
{
	const char *why;
	struct sk_admin_reply r = {0};
	unsigned st = sk_admin_guard(
		method, url, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN),
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
		&why);

	*refused = st != 0;
	if (st == 0)
		return MHD_YES;
	if (adm_reply_error(&r, st, why) != 0)
		return MHD_NO;
	return queue_reply(c, &r);
}

/* open_route - a GET/HEAD TCP serves without the token: /healthz, /metrics, the dashboard's files.
 */
static bool
open_route(const char *method, const char *url)
{
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return false;
	return strcmp(url, "/healthz") == 0 || strcmp(url, "/metrics") == 0 ||
	       strcmp(url, "/dashboard") == 0 || strncmp(url, "/dashboard/", 11) == 0;
}

/* auth_log - log a 401 (reason @why), at most once per AUTH_LOG_EVERY_NS per listener. */
static void
auth_log(struct listener *l, const char *method, const char *why)
{
	int64_t now = sk_clock_ns(CLOCK_MONOTONIC);
	int64_t last = atomic_load_explicit(&l->auth_logged_ns, memory_order_relaxed);

	if (last != 0 && now - last < AUTH_LOG_EVERY_NS) {
		atomic_fetch_add_explicit(&l->auth_quiet, 1, memory_order_relaxed);
		return;
	}
	if (!atomic_compare_exchange_strong(&l->auth_logged_ns, &last, now)) {
		atomic_fetch_add_explicit(&l->auth_quiet, 1, memory_order_relaxed);
		return;
	}
	sk_logf(SK_LOG_WARN, "admin_auth",
		"port=%u method=%s reason=%s unlogged_before=%" PRIu64
		" msg=\"admin API request refused: 401\"",
		l->a->port, method, why,
		(uint64_t)atomic_exchange_explicit(&l->auth_quiet, 0, memory_order_relaxed));
}

/*
 * authorize - on a listener that needs the token, a request without the
 * right one is answered 401 (queued before any body is read) and *refused
 * set; MHD_YES with nothing queued to go on.
 */
static enum MHD_Result
authorize(struct listener *l, struct MHD_Connection *c, const char *url, const char *method,
	  bool *refused)
{
	static const char *const challenge[] = {"WWW-Authenticate",
						"Bearer realm=\"seckill-admin\"", NULL};
	struct sk_admin_reply r = {0};
	enum adm_auth got;

	*refused = false;
	if (!l->need_token || open_route(method, url))
		return MHD_YES;
	got = adm_token_check(
		l->a->token,
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
	if (got == ADM_AUTH_OK)
		return MHD_YES;
	*refused = true;
	atomic_fetch_add_explicit(&l->a->unauthorized, 1, memory_order_relaxed);
	auth_log(l, method,
		 got == ADM_AUTH_MISSING     ? "missing"
		 : got == ADM_AUTH_MALFORMED ? "not_bearer"
					     : "wrong_token");
	if (adm_reply_error(&r, 401,
			    got == ADM_AUTH_MISSING
				    ? "Authorization: Bearer <token> required (--admin-token-file)"
				    : "bad bearer token") != 0)
		return MHD_NO;
	r.headers = challenge;
	return queue_reply(c, &r);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct listener *l = cls;
	struct sk_admin *a = l->a;
	struct req_state *rs = *req_cls;
	struct sk_admin_reply r;
	int rc;

	(void)version;
	if (rs == (void *)&refused_mark) { /* answered already: drop the body */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rs == NULL) { /* headers only: the body follows */
		bool refused;
		enum MHD_Result g = guard(c, method, url, &refused);

		if (!refused && g == MHD_YES)
			g = authorize(l, c, url, method, &refused);
		if (refused)
			*req_cls = &refused_mark;
		if (refused || g != MHD_YES)
			return g;
		rs = malloc(sizeof(*rs));
		if (rs == NULL)
			return MHD_NO;
		rs->len = 0;
		rs->too_big = false;
		*req_cls = rs;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (rs->len + *upload_data_size > sizeof(rs->body))
			rs->too_big = true;
		else
			memcpy(rs->body + rs->len, upload_data, *upload_data_size);
		if (!rs->too_big)
			rs->len += *upload_data_size;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rs->too_big) {
		memset(&r, 0, sizeof(r));
		rc = adm_reply_error(&r, 413, "body larger than 16 KiB");
	} else {
		rc = handle(a, c, url, method, rs, &r);
	}
	if (rc != 0)
		return MHD_NO; /* out of memory: drop the connection */
	return queue_reply(c, &r);
}

static struct MHD_Daemon *
start_daemon(struct listener *a, const struct sockaddr *sa, int listen_fd)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;

	if (listen_fd >= 0)
		return MHD_start_daemon(flags, 0, NULL, NULL, on_request, a,
					MHD_OPTION_LISTEN_SOCKET, listen_fd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
					MHD_OPTION_CONNECTION_LIMIT, 64U,
					MHD_OPTION_CONNECTION_TIMEOUT, 30U, MHD_OPTION_END);
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, a, MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				MHD_OPTION_CONNECTION_LIMIT, 64U, MHD_OPTION_CONNECTION_TIMEOUT,
				30U, MHD_OPTION_END);
}

/* tcp_in_use - whether something accepts on 127.0.0.1:@port. */
static bool
tcp_in_use(uint16_t port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool used = fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;

	if (fd >= 0)
		close(fd);
	return used;
}

/* unix_listen - a listening unix socket at @path (stale one replaced), or -errno. */
static int
unix_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat sb;
	int fd, rc;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		sk_set_err(err, errlen, "admin: socket path too long: %s", path);
		return -EINVAL;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			sk_set_err(err, errlen, "admin: %s exists and is not a socket", path);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			close(fd);
			sk_set_err(err, errlen, "admin: %s is in use by a running process", path);
			return -EADDRINUSE;
		}
		if (fd >= 0)
			close(fd);
		unlink(path); /* stale: its server is gone */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto err;
	}
	/* Born 0600: a chmod after bind would leave a window with the umask's mode. */
	mode_t old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ? 0 : -errno;
	umask(old);
	if (rc != 0) {
		close(fd);
		goto err;
	}
	if (listen(fd, 64) != 0) {
		rc = -errno;
		close(fd);
		unlink(path);
		goto err;
	}
	return fd;
err:
	sk_set_err(err, errlen, "admin: unix socket %s: %s", path, strerror(-rc));
	return rc;
}

int
sk_admin_start(struct sk_admin **out, struct sk_control *ctl, const struct sk_admin_conf *conf,
	       char *err, size_t errlen)
{
	struct sk_admin *a = NULL;
	int rc = -EINVAL, fd = -1;

	if (out == NULL || ctl == NULL || conf == NULL ||
	    (!conf->tcp && conf->socket_path == NULL)) {
		sk_set_err(err, errlen, "admin: no listener configured");
		goto err;
	}
	rc = -ENOMEM;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		goto err;
	a->ctl = ctl;
	a->pay_wait_ms = conf->pay_wait_ms ? conf->pay_wait_ms : SK_ADMIN_PAY_WAIT_MS_DEFAULT;
	a->on_tcp = (struct listener){.a = a, .need_token = true};
	a->on_unix = (struct listener){.a = a, .need_token = false};

	if (conf->tcp && conf->token_file == NULL) {
		rc = -EINVAL;
		sk_set_err(err, errlen,
			   "admin: TCP (--admin-port) needs --admin-token-file: the bearer token "
			   "its clients must send");
		goto err;
	}
	if (conf->tcp && (rc = adm_token_load(conf->token_file, a->token, err, errlen)) != 0)
		goto err;
	if (conf->tcp) {
		struct sockaddr_in sin = {.sin_family = AF_INET,
					  .sin_port = htons(conf->port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		a->tcp = start_daemon(&a->on_tcp, (struct sockaddr *)&sin, -1);
		if (a->tcp == NULL) {
			rc = conf->port != 0 && tcp_in_use(conf->port) ? -EADDRINUSE : -EIO;
			sk_set_err(err, errlen, "admin: cannot listen on 127.0.0.1:%u%s",
				   conf->port, rc == -EADDRINUSE ? ": address in use" : "");
			goto err;
		}
		const union MHD_DaemonInfo *di =
			MHD_get_daemon_info(a->tcp, MHD_DAEMON_INFO_BIND_PORT);
		a->port = di != NULL ? di->port : conf->port;
	}
	if (conf->socket_path != NULL) {
		fd = unix_listen(conf->socket_path, err, errlen);
		if (fd < 0) {
			rc = fd;
			goto err;
		}
		a->socket_path = strdup(conf->socket_path);
		if (a->socket_path == NULL) {
			close(fd);
			unlink(conf->socket_path);
			sk_set_err(err, errlen, "admin: out of memory");
			goto err;
		}
		a->unix_d = start_daemon(&a->on_unix, NULL, fd);
		if (a->unix_d == NULL) {
			close(fd);
			rc = -EIO;
			sk_set_err(err, errlen, "admin: cannot serve on %s", conf->socket_path);
			goto err;
		}
	}
	*out = a;
	return 0;
err:
	sk_admin_stop(a);
	return rc;
}

uint64_t
sk_admin_unauthorized(const struct sk_admin *a)
{
	return atomic_load_explicit(&a->unauthorized, memory_order_relaxed);
}

uint16_t
sk_admin_port(const struct sk_admin *a)
{
	return a->tcp != NULL ? a->port : 0;
}

void
sk_admin_stop(struct sk_admin *a)
{
	if (a == NULL)
		return;
	if (a->tcp != NULL)
		MHD_stop_daemon(a->tcp);
	if (a->unix_d != NULL)
		MHD_stop_daemon(a->unix_d); /* closes the listening socket */
	if (a->socket_path != NULL) {
		unlink(a->socket_path);
		free(a->socket_path);
	}
	OPENSSL_cleanse(a->token, sizeof(a->token));
	free(a);
}
