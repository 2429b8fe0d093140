/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API over real HTTP (control/admin/sk_admin.h): a live server on
 * 127.0.0.1, requests written byte for byte on a socket so that every
 * header is the test's choice. EAL in --no-huge mode, an arena in plain
 * memory, real rings, an LMDB store per test.
 *
 *   guard:  a browser on the host cannot reach the API: a foreign Host (DNS
 *           rebinding) is 421, a foreign Origin 403, a POST without
 *           Content-Type application/json (a form) 415; each refused request
 *           changes nothing. Prometheus's and seckillctl's requests pass.
 *   ids:    user ids and order ids above 2^63-1 are shown exactly (decimal
 *           strings) and accepted in paths over their full range; garbage
 *           is 400.
 *   auth:   TCP needs "Authorization: Bearer <token>" of the token file:
 *           none, another scheme, a wrong token of the same length or of
 *           another length is 401 with WWW-Authenticate and a JSON error,
 *           changes nothing, and is counted in /metrics; /healthz, /metrics
 *           and the dashboard's files are open; the unix socket is born
 *           0600 (whatever the umask) and needs no token; TCP does not
 *           start without a token file, nor with one group or others may
 *           read, nor with no valid token in it.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_ring.h>

#include "sk_admin.h"
#include "sk_buy.h"
#include "sk_control.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"

#define EPOCH	 1764000000u
#define S	 INT64_C(1000000000)
#define T0	 ((int64_t)EPOCH * S + 5 * S)
#define NLCORES	 2
#define RESP_MAX 65536
/* The fixture's token (the file holds it and a newline). */
#define TOKEN "c2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/="

static struct {
	struct sk_test_arena arena; /* NLCORES lcores: rings, buy contexts */
	struct sk_control *ctl;
	struct sk_admin *adm;
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
	char host[32]; /* "127.0.0.1:<port>", what Prometheus and seckillctl send */
	char origin[48];
	char token_file[PATH_MAX + 16];
	char sock[PATH_MAX + 16];
	const char *auth; /* the Authorization header http() sends; NULL = none */
	bool via_unix;	  /* http_raw() to the unix socket instead of TCP */
} F;

/* ------------------------------------------------------------------ fixture */

static void
fx_setup(void)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 8,
				.dedup_slots = 16384,
				.status_bits = 12,
				.epoch = EPOCH};
	char err[SK_CONTROL_ERR_MAX];

	memset(&F, 0, sizeof(F));
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, 1024);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-admin-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	struct sk_control_conf cc = {
		.store_dir = F.store, .store_flags = SK_STORE_NOSYNC, .pay_timeout_ns = 60 * S};
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &cc, err, sizeof(err));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);

	snprintf(F.token_file, sizeof(F.token_file), "%s/admin.token", F.dir);
	ck_assert_int_eq(sk_test_write_file(F.token_file, TOKEN "\n", 0600), 0);
	snprintf(F.sock, sizeof(F.sock), "%s/admin.sock", F.dir);
	F.auth = "Bearer " TOKEN;
	struct sk_admin_conf ac = {
		.tcp = true, .port = 0, .token_file = F.token_file, .socket_path = F.sock};
	rc = sk_admin_start(&F.adm, F.ctl, &ac, err, sizeof(err));
	ck_assert_msg(rc == 0, "admin: %d %s", rc, err);
	snprintf(F.host, sizeof(F.host), "127.0.0.1:%u", sk_admin_port(F.adm));
	snprintf(F.origin, sizeof(F.origin), "http://%s", F.host);
}

static void
fx_teardown(void)
{
	sk_admin_stop(F.adm);
	sk_control_close(F.ctl);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

/* ------------------------------------------------------------------ helpers */

/*
 * http_raw - write @req to the admin server and read the whole answer (the
 * request says Connection: close). The status; the answer in @resp.
 */
static unsigned
http_raw(const char *req, size_t req_len, char *resp, size_t cap)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(sk_admin_port(F.adm)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(F.via_unix ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t got = 0;
	unsigned status = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(F.sock), sizeof(sun.sun_path));
	strcpy(sun.sun_path, F.sock);
	if (F.via_unix)
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	else
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	for (size_t off = 0; off < req_len;) {
		ssize_t n = write(fd, req + off, req_len - off);
		if (n <= 0)
			break; /* the server may answer and close before the body */
		off += (size_t)n;
	}
	for (;;) {
		ssize_t n = read(fd, resp + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	resp[got] = '\0';
	ck_assert_msg(sscanf(resp, "HTTP/1.%*d %u", &status) == 1, "no status line: %s", resp);
	return status;
}

/* The last answer of http(), headers and body (valid until the next call). */
static const char *last_resp;

/*
 * http - @method @path with Host @host and Origin @origin (NULL: none),
 * @ctype as Content-Type (NULL: none) and @body (NULL: none). The status;
 * the answer's JSON body in *@out (NULL if not JSON) when @out is given.
 */
static unsigned
http(const char *method, const char *path, const char *host, const char *origin, const char *ctype,
     const char *body, json_t **out)
{
	static char req[8192], resp[RESP_MAX];
	int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\n", method, path);

	if (host != NULL)
		n += snprintf(req + n, sizeof(req) - n, "Host: %s\r\n", host);
	if (origin != NULL)
		n += snprintf(req + n, sizeof(req) - n, "Origin: %s\r\n", origin);
	if (ctype != NULL)
		n += snprintf(req + n, sizeof(req) - n, "Content-Type: %s\r\n", ctype);
	if (F.auth != NULL)
		n += snprintf(req + n, sizeof(req) - n, "Authorization: %s\r\n", F.auth);
	n += snprintf(req + n, sizeof(req) - n,
		      "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		      body != NULL ? strlen(body) : 0, body != NULL ? body : "");
	ck_assert_int_lt(n, sizeof(req));

	unsigned status = http_raw(req, (size_t)n, resp, sizeof(resp));
	last_resp = resp;
	if (out != NULL) {
		const char *b = strstr(resp, "\r\n\r\n");
		json_error_t e;

		*out = b != NULL ? json_loads(b + 4, 0, &e) : NULL;
	}
	return status;
}

/* get - GET @path as Prometheus or seckillctl would (Host 127.0.0.1:port). */
static unsigned
get(const char *path, json_t **out)
{
	return http("GET", path, F.host, NULL, NULL, NULL, out);
}

/*
 * refused - status @got is @want, with a JSON {"error":...} body at *@jp
 * (read here, after the call that set it: argument order is unspecified).
 */
static void
refused(unsigned got, unsigned want, json_t **jp, const char *what)
{
	ck_assert_msg(got == want, "%s: %u, want %u", what, got, want);
	ck_assert_msg(json_is_string(json_object_get(*jp, "error")), "%s: no JSON error", what);
	json_decref(*jp);
}

/* stored_order - an order of run @epoch (its id), confirmed in the store. */
static uint64_t
stored_order(uint32_t epoch, uint32_t item, uint64_t user)
{
	struct sk_order_rec r = {.id = sk_order_id_make(epoch, 0, 0, 1),
				 .user = user,
				 .price = 500,
				 .time_ns = T0,
				 .item = item,
				 .qty = 1,
				 .nlines = 1};

	ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), &r, 1, 0, T0, NULL, NULL), 0);
	return r.id;
}

static unsigned
store_state(uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	return sk_store_order_get(sk_control_store(F.ctl), id, l, SK_STORE_MAX_LINES, &n) == 0
		       ? l[0].state
		       : SK_ORDER_NONE;
}

/* -------------------------------------------------------------------- guard */

/* sk_admin_guard() alone: a table of method, Host, Origin, Content-Type. */
START_TEST(guard_table)
{
	static const struct {
		const char *method, *host, *origin, *ctype;
		unsigned want;
	} t[] = {
		{"GET", "127.0.0.1:8081", NULL, NULL, 0},
		{"GET", "127.0.0.1", NULL, NULL, 0},
		{"GET", "localhost:1", NULL, NULL, 0},
		{"GET", "LOCALHOST", NULL, NULL, 0},
		{"HEAD", "[::1]:65535", NULL, NULL, 0},
		{"GET", NULL, NULL, NULL, 421},
		{"GET", "", NULL, NULL, 421},
		{"GET", "127.0.0.1:0", NULL, NULL, 421},
		{"GET", "127.0.0.1:65536", NULL, NULL, 421},
		{"GET", "127.0.0.1:123456", NULL, NULL, 421},
		{"GET", "127.0.0.1:", NULL, NULL, 421},
		{"GET", "127.0.0.1:80x", NULL, NULL, 421},
		{"GET", "127.0.0.10", NULL, NULL, 421},
		{"GET", "127.0.0.1.nip.io", NULL, NULL, 421},
		{"GET", "localhost.", NULL, NULL, 421},
		{"GET", "localhostx", NULL, NULL, 421},
		{"GET", "xlocalhost", NULL, NULL, 421},
		{"GET", "[::1", NULL, NULL, 421},
		{"GET", "::1", NULL, NULL, 421},
		{"GET", "[0:0:0:0:0:0:0:1]", NULL, NULL, 421},
		{"GET", "evil.example", NULL, NULL, 421},
		{"POST", "evil.example", "http://evil.example", "application/json", 421},
		{"GET", "127.0.0.1:8081", "http://127.0.0.1:8081", NULL, 0},
		{"GET", "localhost:8081", "HTTP://LOCALHOST:8081", NULL, 0},
		{"GET", "127.0.0.1:8081", "http://127.0.0.1:8082", NULL, 403},
		{"GET", "127.0.0.1:8081", "http://127.0.0.1", NULL, 403},
		{"GET", "127.0.0.1:8081", "http://localhost:8081", NULL, 403},
		{"GET", "127.0.0.1:8081", "https://127.0.0.1:8081", NULL, 403},
		{"GET", "127.0.0.1:8081", "http://127.0.0.1:8081/", NULL, 403},
		{"GET", "127.0.0.1:8081", "null", NULL, 403},
		{"GET", "127.0.0.1:8081", "", NULL, 403},
		{"GET", "127.0.0.1:8081", "http://evil.example", NULL, 403},
		{"POST", "127.0.0.1:8081", "http://evil.example", "application/json", 403},
		{"POST", "127.0.0.1:8081", NULL, "application/json", 0},
		{"POST", "127.0.0.1:8081", "http://127.0.0.1:8081", "application/json", 0},
		{"POST", "127.0.0.1:8081", NULL, "application/json;charset=utf-8", 0},
		{"POST", "127.0.0.1:8081", NULL, "APPLICATION/Json \t; charset=utf-8", 0},
		{"POST", "127.0.0.1:8081", NULL, NULL, 415},
		{"POST", "127.0.0.1:8081", NULL, "", 415},
		{"POST", "127.0.0.1:8081", NULL, "application/x-www-form-urlencoded", 415},
		{"POST", "127.0.0.1:8081", NULL, "multipart/form-data; boundary=x", 415},
		{"POST", "127.0.0.1:8081", NULL, "text/plain", 415},
		{"POST", "127.0.0.1:8081", NULL, "text/plain; application/json", 415},
		{"POST", "127.0.0.1:8081", NULL, "application/jsonp", 415},
		{"POST", "127.0.0.1:8081", NULL, "application/json-seq", 415},
		{"POST", "127.0.0.1:8081", NULL, " application/json", 415},
		{"PUT", "127.0.0.1:8081", NULL, "text/plain", 415},
		{"PATCH", "127.0.0.1:8081", NULL, NULL, 415},
		{"DELETE", "127.0.0.1:8081", NULL, NULL, 415},
		{"GET", "127.0.0.1:8081", NULL, "text/plain", 0},
		{"OPTIONS", "127.0.0.1:8081", NULL, NULL, 0}, /* 405 from the routes */
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		const char *why = NULL;
		unsigned got = sk_admin_guard(t[i].method, "/v1/activities", t[i].host, t[i].origin,
					      t[i].ctype, &why);

		ck_assert_msg(got == t[i].want, "row %zu (%s %s %s %s): %u, want %u", i,
			      t[i].method, t[i].host ? t[i].host : "-",
			      t[i].origin ? t[i].origin : "-", t[i].ctype ? t[i].ctype : "-", got,
			      t[i].want);
		ck_assert(got == 0 || (why != NULL && why[0] != '\0'));
	}
}
END_TEST

/* A page of another site, or one rebound to 127.0.0.1, gets nothing. */
START_TEST(foreign_host_refused)
{
	static const char *const bad[] = {
		"evil.example",
		"evil.example:8081",
		"127.0.0.1.evil.example",
		"localhost.evil",
		"127.0.0.2",
		"0.0.0.0",
		"[::1]x",
		"localhost:",
		"localhost:99999",
		"localhost:80:80",
		"127.0.0.1:+80",
		"",
		"[::2]:80",
		"127.1",
		"evil.example@localhost",
	};
	uint64_t id = stored_order(EPOCH, 1, 42);
	char pay[64], body[160];
	json_t *j;

	snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
	snprintf(body, sizeof(body), "{\"item\":5,\"total\":3}");
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		refused(http("GET", "/v1/items", bad[i], NULL, NULL, NULL, &j), 421, &j, bad[i]);
		refused(http("GET", "/metrics", bad[i], NULL, NULL, NULL, &j), 421, &j, bad[i]);
		refused(http("POST", pay, bad[i], NULL, "application/json", NULL, &j), 421, &j,
			bad[i]);
		refused(http("POST", "/v1/activities", bad[i], NULL, "application/json", body, &j),
			421, &j, bad[i]);
	}
	/* HTTP/1.0 may leave Host out; a browser never does, but it is refused too */
	static char resp[RESP_MAX];
	static const char req10[] = "GET /v1/items HTTP/1.0\r\n\r\n";
	ck_assert_uint_eq(http_raw(req10, sizeof(req10) - 1, resp, sizeof(resp)), 421);

	ck_assert_uint_eq(store_state(id), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 5, NULL, NULL), -ENOENT);

	/* the loopback names, any port, any case */
	static const char *const good[] = {"127.0.0.1", "localhost", "LocalHost:8081",
					   "[::1]",	"[::1]:1",   "127.0.0.1:65535"};
	for (size_t i = 0; i < SK_ARRAY_SIZE(good); i++) {
		ck_assert_uint_eq(http("GET", "/v1/items", good[i], NULL, NULL, NULL, NULL), 200);
		ck_assert_uint_eq(http("GET", "/healthz", good[i], NULL, NULL, NULL, NULL), 200);
	}
	ck_assert_uint_eq(get("/metrics", NULL), 200); /* Prometheus */
}
END_TEST

/* A cross-site request carries the page's Origin: refused, even with JSON. */
START_TEST(foreign_origin_refused)
{
	static const char *const bad[] = {
		"http://evil.example",
		"null",
		"",
		"https://127.0.0.1",
		"http://127.0.0.1:1", /* another local site: not this origin */
		"http://localhost",
		"http://127.0.0.1.evil.example",
		"file://",
	};
	uint64_t id = stored_order(EPOCH, 1, 42);
	char pay[64], self[64];
	json_t *j;

	snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		refused(http("POST", pay, F.host, bad[i], "application/json", NULL, &j), 403, &j,
			bad[i]);
		refused(http("POST", "/v1/activities", F.host, bad[i], "application/json",
			     "{\"item\":5,\"total\":3}", &j),
			403, &j, bad[i]);
		refused(http("GET", "/v1/items", F.host, bad[i], NULL, NULL, &j), 403, &j, bad[i]);
	}
	ck_assert_uint_eq(store_state(id), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 5, NULL, NULL), -ENOENT);

	/* a page of the API's own origin (same host and port) is served */
	ck_assert_uint_eq(http("GET", "/v1/items", F.host, F.origin, NULL, NULL, NULL), 200);
	snprintf(self, sizeof(self), "http://localhost:%u", sk_admin_port(F.adm));
	snprintf(pay, sizeof(pay), "localhost:%u", sk_admin_port(F.adm));
	ck_assert_uint_eq(http("GET", "/v1/items", pay, self, NULL, NULL, NULL), 200);
}
END_TEST

/* A form (or a fetch without preflight) cannot post: no JSON type, no change. */
START_TEST(form_post_refused)
{
	static const char *const bad[] = {
		NULL,
		"application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x",
		"text/plain",
		"text/plain; charset=utf-8",
		"application/jsonx",
		"application/json-patch+json",
		"",
	};
	uint64_t id = stored_order(EPOCH, 1, 42);
	char pay[64];
	json_t *j;

	snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		const char *what = bad[i] != NULL ? bad[i] : "(none)";

		refused(http("POST", pay, F.host, NULL, bad[i], "a=b", &j), 415, &j, what);
		refused(http("POST", pay, F.host, NULL, bad[i], NULL, &j), 415, &j, what);
		refused(http("POST", "/v1/activities", F.host, NULL, bad[i],
			     "{\"item\":5,\"total\":3}", &j),
			415, &j, what);
		refused(http("PUT", "/v1/activities", F.host, NULL, bad[i], NULL, &j), 415, &j,
			what);
		refused(http("DELETE", "/v1/activities/5", F.host, NULL, bad[i], NULL, &j), 415, &j,
			what);
	}
	ck_assert_uint_eq(store_state(id), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 5, NULL, NULL), -ENOENT);

	/* JSON passes, with parameters and in any case; GETs need no type */
	ck_assert_uint_eq(http("POST", "/v1/activities", F.host, NULL,
			       "Application/JSON ; charset=utf-8", "{\"item\":5,\"total\":3}",
			       NULL),
			  201);
	ck_assert_uint_eq(http("POST", pay, F.host, F.origin, "application/json", NULL, NULL), 200);
	ck_assert_uint_eq(store_state(id), SK_ORDER_PAID);
	ck_assert_uint_eq(http("GET", "/v1/activities/5", F.host, NULL, "text/plain", NULL, NULL),
			  200);
}
END_TEST

/* ---------------------------------------------------------------------- ids */

static const uint64_t huge_users[] = {UINT64_MAX, UINT64_C(9223372036854775808)};

/* An order id's text in a path, and "user" and "order" shown exactly. */
static void
check_order(uint64_t id, uint64_t user, const char *status)
{
	char path[64], want[24];
	json_t *j;

	snprintf(path, sizeof(path), "/v1/orders/%" PRIu64, id);
	ck_assert_uint_eq(get(path, &j), 200);
	snprintf(want, sizeof(want), "%" PRIu64, id);
	ck_assert_str_eq(json_string_value(json_object_get(j, "order")), want);
	snprintf(want, sizeof(want), "%" PRIu64, user);
	char *u = json_dumps(json_object_get(j, "user"), JSON_ENCODE_ANY);
	ck_assert_msg(json_is_string(json_object_get(j, "user")), "user %s, want \"%s\"",
		      u != NULL ? u : "(none)", want);
	free(u);
	ck_assert_str_eq(json_string_value(json_object_get(j, "user")), want);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), status);
	json_decref(j);
}

/* Users above 2^63-1 bought through the engine, orders of this run. */
START_TEST(huge_user_ids_shown_exactly)
{
	struct sk_stock_conf c = {.id = 1, .per_user_limit = 1, .end_ns = INT64_MAX, .total = 10};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	for (size_t i = 0; i < SK_ARRAY_SIZE(huge_users); i++) {
		struct sk_buy_req r = {.user = huge_users[i],
				       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 1}},
				       .now_ns = T0};
		struct sk_buy_line l = {.item = it, .qty = 1};
		uint64_t id;
		char pay[64];
		json_t *j;

		ck_assert_int_eq(sk_buy(&F.arena.lc[0], &r, &l, 1, &id), SK_BUY_OK);
		ck_assert_int_eq(sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, NULL), 1);
		check_order(id, huge_users[i], "confirmed");
		snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
		ck_assert_uint_eq(http("POST", pay, F.host, NULL, "application/json", NULL, &j),
				  200);
		ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
		json_decref(j);
		check_order(id, huge_users[i], "paid");
	}
}
END_TEST

/* Order ids above 2^63-1 (runs after 2041: the epoch's top bit) in paths; garbage is 400. */
START_TEST(huge_order_ids_in_paths)
{
	uint64_t id = stored_order(SK_ORDER_EPOCH_BASE + (UINT32_C(1) << SK_ORDER_EPOCH_BITS) - 1,
				   2, huge_users[0]);
	char path[64];
	json_t *j;

	ck_assert_uint_gt(id, INT64_MAX);
	check_order(id, huge_users[0], "confirmed");
	snprintf(path, sizeof(path), "/v1/orders/%" PRIu64 "/pay", id);
	ck_assert_uint_eq(http("POST", path, F.host, NULL, "application/json", NULL, &j), 200);
	snprintf(path, sizeof(path), "%" PRIu64, id);
	ck_assert_str_eq(json_string_value(json_object_get(j, "order")), path);
	json_decref(j);
	check_order(id, huge_users[0], "paid");

	/* the full range is an id (unknown here), anything else is 400 */
	ck_assert_uint_eq(get("/v1/orders/18446744073709551615", &j), 404);
	ck_assert_str_eq(json_string_value(json_object_get(j, "order")), "18446744073709551615");
	json_decref(j);
	ck_assert_uint_eq(get("/v1/orders/9223372036854775808", NULL), 404);
	static const char *const bad[] = {
		"/v1/orders/18446744073709551616",
		"/v1/orders/99999999999999999999",
		"/v1/orders/0",
		"/v1/orders/-1",
		"/v1/orders/+1",
		"/v1/orders/0123",
		"/v1/orders/1x",
		"/v1/orders/1%20",
		"/v1/orders/0x10",
		"/v1/orders/",
		"/v1/orders/000000000000000000000001",
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		refused(get(bad[i], &j), 400, &j, bad[i]);
		snprintf(path, sizeof(path), "%s/pay", bad[i]);
		refused(http("POST", path, F.host, NULL, "application/json", NULL, &j), 400, &j,
			path);
	}
}
END_TEST

/* --------------------------------------------------------------------- auth */

/* metric - the value of the unlabelled sample @name in /metrics (asserted present). */
static uint64_t
metric(const char *name)
{
	char want[96];
	const char *at;
	uint64_t v = 0;

	ck_assert_uint_eq(get("/metrics", NULL), 200);
	snprintf(want, sizeof(want), "\n%s ", name);
	at = strstr(last_resp, want);
	ck_assert_msg(at != NULL, "no %s in /metrics", name);
	ck_assert_int_eq(sscanf(at + strlen(want), "%" SCNu64, &v), 1);
	return v;
}

/* unauthorized - status @got is 401 with the challenge and a JSON error at *@jp. */
static void
unauthorized(unsigned got, json_t **jp, const char *what)
{
	refused(got, 401, jp, what);
	ck_assert_msg(strcasestr(last_resp, "\r\nWWW-Authenticate: Bearer") != NULL,
		      "%s: no WWW-Authenticate: Bearer", what);
	ck_assert_msg(strstr(last_resp, TOKEN) == NULL, "%s: the token in the answer", what);
}

/*
 * No token, another scheme, a wrong token of the same length, a prefix, a
 * longer one: 401 on every route that reads or changes, nothing changed,
 * each counted. The right token (scheme in any case) is served.
 */
START_TEST(tcp_needs_the_token)
{
	static const char *const bad[] = {
		NULL,
		"",
		"Basic " TOKEN,
		"Bearer",
		"Bearer ",
		"Bearer d2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/=",	 /* same length, 1st byte */
		"Bearer c2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/A",	 /* same length, last byte */
		"Bearer c2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/",	 /* a prefix */
		"Bearer c2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/==",	 /* one byte more */
		"Bearer c2Vja2lsbC1hZG1pbi10ZXN0LXRva2Vu+/=, x", /* more after it */
		"Bearer x",
		"Bearer" TOKEN,
		TOKEN,
	};
	uint64_t id = stored_order(EPOCH, 1, 42);
	uint64_t before = sk_admin_unauthorized(F.adm);
	char pay[64], order[64];
	json_t *j;

	ck_assert_uint_eq(metric("seckill_admin_unauthorized_total"), before);
	snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
	snprintf(order, sizeof(order), "/v1/orders/%" PRIu64, id);
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		const char *what = bad[i] != NULL ? bad[i] : "(none)";

		F.auth = bad[i];
		unauthorized(http("POST", pay, F.host, NULL, "application/json", NULL, &j), &j,
			     what);
		unauthorized(http("POST", "/v1/activities", F.host, NULL, "application/json",
				  "{\"item\":5,\"total\":3}", &j),
			     &j, what);
		unauthorized(http("POST", "/v1/activities/1/restock", F.host, NULL,
				  "application/json", "{\"units\":1,\"restock_id\":1}", &j),
			     &j, what);
		unauthorized(http("POST", "/v1/cluster/items/1/forget", F.host, NULL,
				  "application/json", "{\"member\":\"b\",\"held\":1}", &j),
			     &j, what);
		unauthorized(get(order, &j), &j, what);
		unauthorized(get("/v1/items", &j), &j, what);
		unauthorized(http("POST", "/metrics", F.host, NULL, "application/json", NULL, &j),
			     &j, what);
	}
	F.auth = "Bearer " TOKEN;
	ck_assert_uint_eq(store_state(id), SK_ORDER_CONFIRMED);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 5, NULL, NULL), -ENOENT);
	ck_assert_uint_eq(sk_admin_unauthorized(F.adm), before + 7 * SK_ARRAY_SIZE(bad));
	ck_assert_uint_eq(metric("seckill_admin_unauthorized_total"),
			  before + 7 * SK_ARRAY_SIZE(bad));

	/* the token: served (the scheme's case is free, RFC 7235) */
	ck_assert_uint_eq(get("/v1/items", NULL), 200);
	F.auth = "bearer  " TOKEN;
	ck_assert_uint_eq(get(order, NULL), 200);
	F.auth = "Bearer " TOKEN;
	ck_assert_uint_eq(http("POST", pay, F.host, NULL, "application/json", NULL, NULL), 200);
	ck_assert_uint_eq(store_state(id), SK_ORDER_PAID);
	ck_assert_uint_eq(http("POST", "/v1/activities", F.host, NULL, "application/json",
			       "{\"item\":5,\"total\":3}", NULL),
			  201);
	ck_assert_uint_eq(sk_admin_unauthorized(F.adm), before + 7 * SK_ARRAY_SIZE(bad));
}
END_TEST

/* /healthz, /metrics (a scraper) and the dashboard's files need no token. */
START_TEST(open_routes)
{
	static const char *const open[] = {"/healthz", "/metrics", "/dashboard", "/dashboard/",
					   "/dashboard/dashboard.js"};

	F.auth = NULL;
	for (size_t i = 0; i < SK_ARRAY_SIZE(open); i++) {
		ck_assert_uint_eq(get(open[i], NULL), 200);
		ck_assert_uint_eq(http("HEAD", open[i], F.host, NULL, NULL, NULL, NULL), 200);
	}
	ck_assert_uint_eq(sk_admin_unauthorized(F.adm), 0);
	F.auth = "Bearer wrong-wrong-wrong-wrong";
	ck_assert_uint_eq(get("/metrics", NULL), 200); /* a stale token of a scraper */
}
END_TEST

/* The unix socket: mode 0600 from birth (umask 0 at start), no token needed. */
START_TEST(unix_socket_0600_no_token)
{
	struct sk_admin *adm;
	struct stat sb;
	char err[SK_CONTROL_ERR_MAX], sock[PATH_MAX + 16];
	mode_t old = umask(0);

	snprintf(sock, sizeof(sock), "%s/other.sock", F.dir);
	struct sk_admin_conf ac = {.socket_path = sock};
	int rc = sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err));
	umask(old);
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_int_eq(lstat(sock, &sb), 0);
	ck_assert(S_ISSOCK(sb.st_mode));
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	ck_assert_uint_eq(sk_admin_port(adm), 0);
	sk_admin_stop(adm);
	ck_assert_int_eq(lstat(sock, &sb), -1);

	/* the fixture's socket, beside TCP */
	ck_assert_int_eq(lstat(F.sock, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	uint64_t id = stored_order(EPOCH, 1, 42);
	char pay[64];
	snprintf(pay, sizeof(pay), "/v1/orders/%" PRIu64 "/pay", id);
	F.via_unix = true;
	F.auth = NULL;
	ck_assert_uint_eq(http("GET", "/v1/items", "localhost", NULL, NULL, NULL, NULL), 200);
	ck_assert_uint_eq(http("POST", pay, "localhost", NULL, "application/json", NULL, NULL),
			  200);
	F.auth = "Bearer nonsense-nonsense-nonsense"; /* ignored there */
	ck_assert_uint_eq(http("GET", "/v1/items", "localhost", NULL, NULL, NULL, NULL), 200);
	F.via_unix = false;
	ck_assert_uint_eq(store_state(id), SK_ORDER_PAID);
	ck_assert_uint_eq(sk_admin_unauthorized(F.adm), 0);
}
END_TEST

/* TCP does not start without a good token file; the error names it. */
START_TEST(tcp_refused_without_token_file)
{
	static const struct {
		const char *text; /* NULL: no such file */
		unsigned mode;
		int want;
	} t[] = {
		{TOKEN "\n", 0640, -EPERM},
		{TOKEN "\n", 0604, -EPERM},
		{TOKEN "\n", 0620, -EPERM},
		{TOKEN "\n", 0644, -EPERM},
		{"", 0600, -EINVAL},
		{"\n", 0600, -EINVAL},
		{"short-token\n", 0600, -EINVAL}, /* < 16 */
		{"has a space in the middle\n", 0600, -EINVAL},
		{TOKEN "\n\n", 0600, -EINVAL},
		{"=" TOKEN "\n", 0600, -EINVAL},
		{TOKEN "=x\n", 0600, -EINVAL},
		{NULL, 0600, -ENOENT},
		{TOKEN "\n", 0600, 0},
		{TOKEN, 0400, 0},
		{TOKEN "\r\n", 0600, 0},
	};
	char err[SK_CONTROL_ERR_MAX], path[PATH_MAX + 32], big[SK_ADMIN_TOKEN_MAX + 2];
	struct sk_admin *adm = NULL;

	/* no file at all */
	struct sk_admin_conf ac = {.tcp = true};
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--admin-token-file"));

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		snprintf(path, sizeof(path), "%s/t%zu", F.dir, i);
		if (t[i].text != NULL)
			ck_assert_int_eq(sk_test_write_file(path, t[i].text, t[i].mode), 0);
		ac.token_file = path;
		err[0] = '\0';
		int rc = sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err));
		ck_assert_msg(rc == t[i].want, "row %zu: %d (%s), want %d", i, rc, err, t[i].want);
		if (rc == 0) {
			sk_admin_stop(adm);
			continue;
		}
		ck_assert_msg(strstr(err, path) != NULL && strstr(err, "--admin-token-file"),
			      "row %zu: %s", i, err);
		ck_assert_ptr_null(strstr(err, TOKEN));
	}
	/* a directory; the longest token, and one byte more */
	ac.token_file = F.dir;
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), -EINVAL);
	memset(big, 'A', SK_ADMIN_TOKEN_MAX);
	big[SK_ADMIN_TOKEN_MAX] = '\0';
	snprintf(path, sizeof(path), "%s/big", F.dir);
	ck_assert_int_eq(sk_test_write_file(path, big, 0600), 0);
	ac.token_file = path;
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), 0);
	sk_admin_stop(adm);
	big[SK_ADMIN_TOKEN_MAX] = 'A';
	big[SK_ADMIN_TOKEN_MAX + 1] = '\0';
	ck_assert_int_eq(sk_test_write_file(path, big, 0600), 0);
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------- runner */

static Suite *
admin_http_suite(void)
{
	Suite *s = suite_create("admin_http");
	TCase *tc;

	tc = tcase_create("guard");
	tcase_add_test(tc, guard_table);
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, foreign_host_refused);
	tcase_add_test(tc, foreign_origin_refused);
	tcase_add_test(tc, form_post_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("ids");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, huge_user_ids_shown_exactly);
	tcase_add_test(tc, huge_order_ids_in_paths);
	suite_add_tcase(s, tc);

	tc = tcase_create("auth");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, tcp_needs_the_token);
	tcase_add_test(tc, open_routes);
	tcase_add_test(tc, unix_socket_0600_no_token);
	tcase_add_test(tc, tcp_refused_without_token_file);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(admin_http_suite, "test_admin_http")
