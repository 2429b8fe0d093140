/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the control plane's day-2 commands, in one process with the
 * EAL in --no-huge mode (an arena in plain memory, real rings, buys through
 * sk_buy(), an LMDB store per test), through sk_admin_handle(), a live admin
 * server (real HTTP, the query string rebuilt from libmicrohttpd's
 * arguments) and the seckillctl binary:
 *
 *   orders:  GET /v1/orders?item=I&user=U | state=S [&limit=N&after=ID]:
 *            what each query finds as orders are paid, cancelled, refunded;
 *            pages; every bad parameter a 400 naming it; seckillctl orders
 *            (text, --json, --help, bad input, paging, unreachable);
 *   pause:   store first, then the item's state; kept across a control-plane
 *            restart and a rebuild of the item table; repaired by preheat;
 *            closed, ended, unknown refused;
 *   extend:  only later, "unchanged", never, ended and closed refused; the
 *            item table's end follows;
 *   remove:  only unsold units (queued and confirmed orders keep theirs),
 *            all or nothing, once per request id (shared with restocks),
 *            the store's count for an item the arena lacks, the units given
 *            back when the store never recorded a removal; the books exact
 *            (sk_stock_check, the store's verify, ledger == arena);
 *   routes and seckillctl for the three: statuses, bodies, exit codes.
 *
 * argv[1] is the seckillctl binary.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "sk_activity.h"
#include "sk_admin.h"
#include "sk_buy.h"
#include "sk_control.h"
#include "sk_preheat.h"
#include "sk_test_arena.h"
#include "sk_test_eal_main.h"
#include "sk_test_fs.h"

/* The admin API's bearer token on TCP (a file of the store's folder). */
#define DAY2_TOKEN "ZGF5Mi10ZXN0LXRva2VuLTAxMjM0NTY3"
#define EPOCH	   1764000000u
#define S	   INT64_C(1000000000)
#define T0	   ((int64_t)EPOCH * S + 5 * S) /* sale time of every buy */
#define TIMEOUT	   (60 * S)			/* payment timeout of the fixture */
#define NLCORES	   2

static const char *seckillctl_path;

struct fx {
	struct sk_test_arena arena;
	struct sk_control *ctl;
	struct sk_admin *adm;
	char port[16];
	char dir[PATH_MAX];
	char store[PATH_MAX + 16];
};

static struct fx F;

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
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-day2-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	struct sk_control_conf conf = {
		.store_dir = F.store, .store_flags = SK_STORE_NOSYNC, .pay_timeout_ns = TIMEOUT};
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &conf, err,
				 sizeof(err));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
}

static void
fx_teardown(void)
{
	sk_admin_stop(F.adm);
	sk_control_close(F.ctl);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

/* admin_start - serve the admin API on 127.0.0.1 (any port: F.port). */
static void
admin_start(void)
{
	char err[SK_CONTROL_ERR_MAX], tok[PATH_MAX + 16];

	/* TCP needs a token; seckillctl finds its file in the environment */
	snprintf(tok, sizeof(tok), "%s/admin.token", F.dir);
	ck_assert_int_eq(sk_test_write_file(tok, DAY2_TOKEN "\n", 0600), 0);
	ck_assert_int_eq(setenv("SECKILLCTL_TOKEN_FILE", tok, 1), 0);
	struct sk_admin_conf ac = {.tcp = true, .token_file = tok};
	ck_assert_int_eq(sk_admin_start(&F.adm, F.ctl, &ac, err, sizeof(err)), 0);
	snprintf(F.port, sizeof(F.port), "%u", sk_admin_port(F.adm));
}

/* ------------------------------------------------------------------ helpers */

static struct sk_item *
add_item(uint32_t id, uint64_t total, uint32_t limit)
{
	struct sk_stock_conf c = {.id = id,
				  .per_user_limit = limit,
				  .end_ns = INT64_MAX,
				  .price = 1999,
				  .total = total};
	struct sk_item *it;

	ck_assert_int_eq(sk_shm_item_add(F.arena.shm, &c, 0, &it), 0);
	return it;
}

/* buy - @qty units of @it for @user on @lcore; the order id (asserts success). */
static uint64_t
buy(unsigned lcore, uint64_t user, struct sk_item *it, uint16_t qty)
{
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};
	struct sk_buy_line l = {.item = it, .qty = qty};
	uint64_t id;
	enum sk_buy_status s = sk_buy(&F.arena.lc[lcore], &r, &l, 1, &id);

	ck_assert_msg(s == SK_BUY_OK, "buy user %lu: %s", (unsigned long)user,
		      sk_buy_status_name(s));
	return id;
}

static unsigned
drain_now(void)
{
	int n = sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, NULL);

	ck_assert_int_ge(n, 0);
	return (unsigned)n;
}

/* handle - sk_admin_handle(@method, @path, @body); the JSON answer, its status checked. */
static json_t *
handle(const char *method, const char *path, const char *body, unsigned want_status)
{
	struct sk_admin_reply r;
	json_error_t e;

	ck_assert_int_eq(sk_admin_handle(F.ctl, method, path, body, body ? strlen(body) : 0, 0, &r),
			 0);
	ck_assert_msg(r.status == want_status, "%s %s: %u, want %u: %s", method, path, r.status,
		      want_status, r.body);
	json_t *j = json_loads(r.body, 0, &e);
	free(r.body);
	ck_assert_msg(j != NULL, "%s %s: not JSON", method, path);
	return j;
}

/* error_has - the answer's "error" holds @s; consumes @j. */
static void
error_has(json_t *j, const char *s)
{
	const char *e = json_string_value(json_object_get(j, "error"));

	ck_assert_msg(e != NULL && strstr(e, s) != NULL, "error '%s' lacks '%s'", e ? e : "(none)",
		      s);
	json_decref(j);
}

static uint64_t
id_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	ck_assert_ptr_nonnull(s);
	return strtoull(s, NULL, 10);
}

/* assert_orders - the page @j lists exactly @ids (in order); consumes @j. */
static void
assert_orders(json_t *j, const uint64_t *ids, size_t n)
{
	json_t *arr = json_object_get(j, "orders");

	ck_assert_uint_eq(json_array_size(arr), n);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "count")), (json_int_t)n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(id_of(json_array_get(arr, i), "order"), ids[i]);
	json_decref(j);
}

/* get_orders - GET /v1/orders?@query, 200. */
static json_t *
get_orders(const char *query)
{
	char path[512];

	snprintf(path, sizeof(path), "/v1/orders?%s", query);
	return handle("GET", path, NULL, 200);
}

/* run_cli - seckillctl @args (NULL-terminated); its exit code, stdout in @out. */
static int
run_cli(char *out, size_t outlen, const char *const *args)
{
	return sk_test_exec(F.dir, seckillctl_path, args, out, outlen);
}

#define CLI(...) run_cli(out, sizeof(out), (const char *const[]){__VA_ARGS__, NULL})

/*
 * raw_get - GET @target over a plain TCP connection to the admin server
 * (the query exactly as written); the status, the body in @body.
 */
static unsigned
raw_get(const char *target, char *body, size_t cap)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(F.port)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char req[1024], buf[65536];
	size_t len = 0;
	unsigned status = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " DAY2_TOKEN
			 "\r\nConnection: close\r\n\r\n",
			 target);
	ck_assert_int_eq(write(fd, req, (size_t)n), n);
	for (int i = 0; i < 1000 && len + 1 < sizeof(buf); i++) { /* until the server closes */
		ssize_t got = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = '\0';
	ck_assert_int_eq(sscanf(buf, "HTTP/1.1 %u", &status), 1);
	const char *b = strstr(buf, "\r\n\r\n");
	snprintf(body, cap, "%s", b != NULL ? b + 4 : "");
	return status;
}

/* an activity of @id, @total units, selling from T0 until @end */
static struct sk_store_activity
activity(uint32_t id, uint64_t total, int64_t end)
{
	struct sk_store_activity a = {
		.item = id, .per_user_limit = 1, .total = total, .start_ns = T0, .end_ns = end};

	snprintf(a.name, sizeof(a.name), "sale %u", id);
	return a;
}

static struct sk_store_activity
stored(uint32_t id)
{
	struct sk_store_activity a;

	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), id, &a, NULL), 0);
	return a;
}

/* assert_books - the item's accounting, the store's invariants, ledger vs arena. */
static void
assert_books(struct sk_item *it)
{
	struct sk_store_ledger l;
	struct sk_store_activity a;
	char err[SK_STORE_ERR_MAX];

	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_store_verify(sk_control_store(F.ctl), err, sizeof(err)), 0);
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), it->id, &a, &l), 0);
	ck_assert_uint_eq(sk_store_ledger_live(&l), sk_stock_sold(it));
	ck_assert_uint_eq(a.removed, atomic_load(&it->removed));
	ck_assert_uint_eq(a.added, atomic_load(&it->added));
}

static enum sk_buy_status
try_buy(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;

	return sk_buy(&F.arena.lc[lcore], &r, &l, 1, &id);
}

/* ------------------------------------------------------------------- orders */

/*
 * sale - item 1 (limit 3): users 7 and 8 buy on both lcores, user 9 on
 * item 2; @ids gets the orders of item 1 in id order: 7a 7b 8a (lcore 0),
 * 7c 8b (lcore 1); ids[5] is user 9's order of item 2. All committed.
 */
static void
sale(uint64_t ids[6])
{
	struct sk_item *it = add_item(1, 20, 3), *two = add_item(2, 5, 1);

	ids[0] = buy(0, 7, it, 1);
	ids[1] = buy(0, 7, it, 1);
	ids[2] = buy(0, 8, it, 2);
	ids[3] = buy(1, 7, it, 1);
	ids[4] = buy(1, 8, it, 1);
	ids[5] = buy(0, 9, two, 1);
	ck_assert_int_eq(drain_now(), 6);
}

START_TEST(orders_by_user_and_state)
{
	uint64_t id[6];
	char q[128];

	sale(id);
	assert_orders(get_orders("item=1&user=7"), (const uint64_t[]){id[0], id[1], id[3]}, 3);
	assert_orders(get_orders("item=1&user=8"), (const uint64_t[]){id[2], id[4]}, 2);
	assert_orders(get_orders("item=2&user=9"), (const uint64_t[]){id[5]}, 1);
	assert_orders(get_orders("item=2&user=7"), NULL, 0);
	assert_orders(get_orders("item=3&state=confirmed"), NULL, 0);
	json_t *j = get_orders("item=1&state=confirmed");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "item")), 1);
	ck_assert(json_is_null(json_object_get(j, "user")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "confirmed");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "limit")), 100);
	ck_assert(json_is_false(json_object_get(j, "more")));
	ck_assert(json_is_null(json_object_get(j, "next")));
	/* Each order as GET /v1/orders/{id} shows it. */
	json_t *o = json_array_get(json_object_get(j, "orders"), 2);
	ck_assert_str_eq(json_string_value(json_object_get(o, "user")), "8");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "units")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(o, "arena_status")), "confirmed");
	ck_assert_int_eq(json_array_size(json_object_get(o, "lines")), 1);
	assert_orders(j, id, 5);

	/* States move: pay 7a and 8a, refund 8a in full, the deadline cancels
	 * the rest of the unpaid ones. */
	ck_assert_int_eq(sk_control_pay(F.ctl, id[0], T0 + 2 * S, 0), SK_CONTROL_PAY_DONE);
	ck_assert_int_eq(sk_control_pay(F.ctl, id[2], T0 + 2 * S, 0), SK_CONTROL_PAY_DONE);
	struct sk_control_payment p = {
		.request = "rf-1", .order = id[2], .kind = SK_STORE_PAY_REFUND};
	struct sk_control_pm_result res;
	ck_assert_int_eq(sk_control_payment(F.ctl, &p, T0 + 3 * S, 0, &res), 0);
	ck_assert_uint_eq(res.outcome, SK_CONTROL_PM_DONE);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT + S), 4);
	assert_orders(get_orders("item=1&state=confirmed"), NULL, 0);
	assert_orders(get_orders("item=1&state=paid"), (const uint64_t[]){id[0]}, 1);
	assert_orders(get_orders("item=1&state=refunded"), (const uint64_t[]){id[2]}, 1);
	assert_orders(get_orders("item=1&state=cancelled"), (const uint64_t[]){id[1], id[3], id[4]},
		      3);
	assert_orders(get_orders("item=2&state=cancelled"), (const uint64_t[]){id[5]}, 1);
	/* Buyer and state together, and a user's orders in every state. */
	assert_orders(get_orders("item=1&user=7&state=cancelled"), (const uint64_t[]){id[1], id[3]},
		      2);
	j = get_orders("item=1&user=8");
	o = json_array_get(json_object_get(j, "orders"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "status")), "refunded");
	assert_orders(j, (const uint64_t[]){id[2], id[4]}, 2);

	/* Pages: limit 2, "next" is the cursor. */
	j = get_orders("item=1&state=cancelled&limit=2");
	ck_assert(json_is_true(json_object_get(j, "more")));
	uint64_t next = id_of(j, "next");
	ck_assert_uint_eq(next, id[3]);
	assert_orders(j, (const uint64_t[]){id[1], id[3]}, 2);
	snprintf(q, sizeof(q), "item=1&state=cancelled&limit=2&after=%lu", (unsigned long)next);
	j = get_orders(q);
	ck_assert(json_is_false(json_object_get(j, "more")));
	assert_orders(j, (const uint64_t[]){id[4]}, 1);

	/* A queued order is not in LMDB yet: not listed until it commits. */
	struct sk_item *it = sk_shm_item_find(F.arena.shm, 1);
	uint64_t late = buy(1, 11, it, 1);
	assert_orders(get_orders("item=1&user=11"), NULL, 0);
	ck_assert_int_eq(drain_now(), 1);
	assert_orders(get_orders("item=1&user=11"), (const uint64_t[]){late}, 1);
	/* The query string is percent-decoded; "&&" and a trailing "&" are nothing. */
	assert_orders(get_orders("it%65m=1&&user=%31%31&"), (const uint64_t[]){late}, 1);
}
END_TEST

START_TEST(orders_bad_queries)
{
	static const struct {
		const char *query, *error;
	} bad[] = {
		{"", "item: required"},
		{"user=7", "item: required"},
		{"item=1", "user or state"},
		{"item=0&user=7", "item: must be"},
		{"item=01&user=7", "item: must be"},
		{"item=4294967296&user=7", "item: must be"},
		{"item=x&user=7", "item: must be"},
		{"item=-1&user=7", "item: must be"},
		{"item=1&user=0", "user: must be"},
		{"item=1&user=18446744073709551616", "user: must be"},
		{"item=1&user=7 ", "user: must be"},
		{"item=1&state=queued", "state: one of"},
		{"item=1&state=failed", "state: one of"},
		{"item=1&state=PAID", "state: one of"},
		{"item=1&state=paid&limit=0", "limit: 1..1000"},
		{"item=1&state=paid&limit=1001", "limit: 1..1000"},
		{"item=1&state=paid&limit=01", "limit: 1..1000"},
		{"item=1&state=paid&limit=", "limit: needs a value"},
		{"item=1&state=paid&limit", "limit: needs a value"},
		{"item=1&state=paid&after=abc", "after: an order id"},
		{"item=1&state=paid&after=0", "after: an order id"},
		{"item=1&item=1&state=paid", "item: given twice"},
		{"item=1&state=paid&sort=asc", "sort: unknown parameter"},
		{"item=1&state=paid&%zz=1", "unknown parameter"},
		{"item=1%2&state=paid", "item: malformed"},
		{"item=1%00&state=paid", "item: malformed"},
		{"item=1&user=123456789012345678901234567890123", "user: malformed or too long"},
	};
	char path[512];

	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof(path), "/v1/orders?%s", bad[i].query);
		error_has(handle("GET", path, NULL, 400), bad[i].error);
	}
	error_has(handle("GET", "/v1/orders", NULL, 400), "item: required");
	error_has(handle("POST", "/v1/orders?item=1&state=paid", NULL, 405), "not allowed");
	/* A query longer than the bound is refused whole. */
	char longq[SK_ADMIN_QUERY_MAX + 64];
	memset(longq, 'a', sizeof(longq) - 1);
	longq[sizeof(longq) - 1] = '\0';
	memcpy(longq, "/v1/orders?item=1&x=", 20);
	error_has(handle("GET", longq, NULL, 414), "too long");
	/* Other routes still ignore a query string. */
	json_decref(handle("GET", "/v1/items?whatever=1", NULL, 200));
}
END_TEST

START_TEST(orders_over_http)
{
	char body[65536];
	uint64_t id[6];

	sale(id);
	admin_start();
	/* libmicrohttpd parses the query; the server writes it back for the
	 * route, percent-encoded, repeats and empty values included. */
	ck_assert_uint_eq(raw_get("/v1/orders?it%65m=1&user=8", body, sizeof(body)), 200);
	ck_assert_ptr_nonnull(strstr(body, "\"count\":2"));
	ck_assert_uint_eq(raw_get("/v1/orders?item=1&item=2&user=8", body, sizeof(body)), 400);
	ck_assert_ptr_nonnull(strstr(body, "given twice"));
	ck_assert_uint_eq(raw_get("/v1/orders?item=1&user", body, sizeof(body)), 400);
	ck_assert_ptr_nonnull(strstr(body, "user: needs a value"));
	ck_assert_uint_eq(raw_get("/v1/orders?item=1&state=paid%26user%3D8", body, sizeof(body)),
			  400);
	ck_assert_ptr_nonnull(strstr(body, "state: one of"));
	ck_assert_uint_eq(raw_get("/v1/orders?item=1&state=confirmed&limit=4", body, sizeof(body)),
			  200);
	ck_assert_ptr_nonnull(strstr(body, "\"more\":true"));
}
END_TEST

START_TEST(seckillctl_orders)
{
	static char out[65536];
	uint64_t id[6];
	char next[24], ida[24];

	sale(id);
	admin_start();
	snprintf(ida, sizeof(ida), "%lu", (unsigned long)id[0]);
	ck_assert_int_eq(CLI("--port", F.port, "orders", "--item", "1", "--user", "7"), 0);
	ck_assert_ptr_nonnull(strstr(out, "ORDER"));
	ck_assert_ptr_nonnull(strstr(out, ida));
	ck_assert_ptr_nonnull(strstr(out, "3 orders\n"));
	ck_assert_ptr_nonnull(strstr(out, " 1x1\n"));
	ck_assert_int_eq(CLI("--port", F.port, "orders", "--item", "1", "--state", "confirmed",
			     "--limit", "3"),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "3 orders; more: rerun with --after "));
	snprintf(next, sizeof(next), "%lu", (unsigned long)id[2]);
	ck_assert_ptr_nonnull(strstr(out, next));
	ck_assert_int_eq(CLI("--port", F.port, "orders", "--item", "1", "--state", "confirmed",
			     "--limit", "3", "--after", next),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "2 orders\n"));
	ck_assert_int_eq(CLI("--port", F.port, "--json", "orders", "--item=1", "--user=8"), 0);
	json_error_t e;
	json_t *j = json_loads(out, 0, &e);
	ck_assert_ptr_nonnull(j);
	assert_orders(j, (const uint64_t[]){id[2], id[4]}, 2);
	ck_assert_int_eq(CLI("--port", F.port, "orders", "--item", "5", "--user", "7"), 0);
	ck_assert_ptr_nonnull(strstr(out, "0 orders\n"));

	/* --help anywhere, exit 0; bad input exit 2 before anything is sent. */
	ck_assert_int_eq(CLI("orders", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: seckillctl orders --item I"));
	ck_assert_int_eq(CLI("--help", "orders"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--after ID"));
	static const char *const bad[][8] = {
		{"orders", NULL},
		{"orders", "--user", "7", NULL},
		{"orders", "--item", "1", NULL},
		{"orders", "--item", "0", "--user", "7", NULL},
		{"orders", "--item", "x", "--user", "7", NULL},
		{"orders", "--item", "1", "--user", "07", NULL},
		{"orders", "--item", "1", "--state", "queued", NULL},
		{"orders", "--item", "1", "--state", "paid", "--limit", "0", NULL},
		{"orders", "--item", "1", "--state", "paid", "--limit", "1001", NULL},
		{"orders", "--item", "1", "--state", "paid", "--after", "-1", NULL},
		{"orders", "--item", "1", "--state", "paid", "extra", NULL},
		{"orders", "--item", "1", "--state", "paid", "--units", "3", NULL},
		{"orders", "--item", NULL},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		const char *argv[12] = {"--port", F.port};
		size_t n = 2;
		for (size_t k = 0; bad[i][k] != NULL; k++)
			argv[n++] = bad[i][k];
		argv[n] = NULL;
		ck_assert_msg(run_cli(out, sizeof(out), argv) == 2, "bad input %zu", i);
	}
	/* The daemon away: exit 3. */
	sk_admin_stop(F.adm);
	F.adm = NULL;
	ck_assert_int_eq(CLI("--port", F.port, "orders", "--item", "1", "--user", "7"), 3);
}
END_TEST

/* ----------------------------------------------------------- pause, resume */

START_TEST(pause_and_resume)
{
	struct sk_store_activity a = activity(1, 5, T0 + 100 * S);
	struct sk_item *it;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 1);
	ck_assert_ptr_nonnull(it);
	buy(0, 1, it, 1);

	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, true, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);
	ck_assert_int_ne(stored(1).paused_ns, 0);
	ck_assert_str_eq(sk_buy_status_name(try_buy(1, 2, it)), "paused");
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, true, T0), SK_ACTIVITY_UNCHANGED);
	/* Orders go on while paused: the queued one commits, pays. */
	ck_assert_int_eq(drain_now(), 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 4);

	/* Durable: a new control plane, and a rebuilt item table, keep it. */
	sk_control_close(F.ctl);
	char err[SK_CONTROL_ERR_MAX];
	struct sk_control_conf conf = {
		.store_dir = F.store, .store_flags = SK_STORE_NOSYNC, .pay_timeout_ns = TIMEOUT};
	ck_assert_int_eq(sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &conf, err,
					 sizeof(err)),
			 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, NULL), 0);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);
	struct sk_test_arena fresh;
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 8,
				.dedup_slots = 16384,
				.status_bits = 12,
				.epoch = EPOCH + 1};
	struct sk_item *rebuilt;
	sk_test_arena_init(&fresh, &c);
	a = stored(1);
	ck_assert_int_eq(
		sk_preheat_item(sk_control_store(F.ctl), fresh.shm, &a, 0, 0, &rebuilt, NULL), 0);
	ck_assert_uint_eq(atomic_load(&rebuilt->state), SK_ITEM_PAUSED);
	ck_assert_uint_eq(sk_stock_remaining(rebuilt), 4);
	sk_test_arena_fini(&fresh);

	/* Resume: selling again. */
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, false, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_ACTIVE);
	ck_assert_int_eq(stored(1).paused_ns, 0);
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, false, T0), SK_ACTIVITY_UNCHANGED);
	buy(1, 2, it, 1);

	/* The store ahead of the arena (a crash in between): preheat follows. */
	ck_assert_int_eq(sk_store_activity_pause(sk_control_store(F.ctl), 1, true, T0), 0);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_ACTIVE);
	struct sk_control_preheat_info pi;
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);
	/* ... and "unchanged" repairs it too. */
	atomic_store(&it->state, SK_ITEM_ACTIVE);
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, true, T0), SK_ACTIVITY_UNCHANGED);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);

	/* Refusals: ended, unknown, closed (final: a closed item stays closed). */
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, false, T0 + 100 * S),
			 SK_ACTIVITY_ENDED);
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 9, true, T0), SK_ACTIVITY_UNKNOWN);
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 1, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_CLOSED);
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 1, false, T0), SK_ACTIVITY_CLOSED);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_CLOSED);

	/* An item of the dataplane's config is recorded, then paused. */
	struct sk_item *cfg = add_item(3, 4, 1);
	ck_assert_int_eq(sk_control_activity_pause(F.ctl, 3, true, T0), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(atomic_load(&cfg->state), SK_ITEM_PAUSED);
	ck_assert_int_ne(stored(3).paused_ns, 0);
	ck_assert_int_eq(drain_now(), 1);
	assert_books(it);
}
END_TEST

/* ------------------------------------------------------------------- extend */

START_TEST(extend_only_later)
{
	struct sk_store_activity a = activity(1, 5, T0 + 10 * S);
	struct sk_item *it;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 1);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, T0 + 20 * S, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_stock_end_ns(it), T0 + 20 * S);
	ck_assert_int_eq(stored(1).end_ns, T0 + 20 * S);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, T0 + 20 * S, T0),
			 SK_ACTIVITY_UNCHANGED);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, T0 + 15 * S, T0),
			 SK_ACTIVITY_CONFLICT);
	ck_assert_int_eq(sk_stock_end_ns(it), T0 + 20 * S);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, 0, T0), SK_ACTIVITY_INVALID);
	/* After the old end, before the new one: still selling (not ended). */
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, INT64_MAX, T0 + 15 * S),
			 SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_stock_end_ns(it), INT64_MAX);
	/* The definition changed: the same add is now another one. */
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_CONFLICT);

	/* Ended: stays ended (not reopened), whatever the new end. */
	struct sk_store_activity b = activity(2, 5, T0 + 10 * S);
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &b, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 2, T0 + 60 * S, T0 + 10 * S),
			 SK_ACTIVITY_ENDED);
	ck_assert_int_eq(stored(2).end_ns, T0 + 10 * S);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 9, INT64_MAX, T0), SK_ACTIVITY_UNKNOWN);
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 1, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_activity_extend(F.ctl, 1, INT64_MAX, T0), SK_ACTIVITY_CLOSED);

	/* The store ahead (a crash in between): preheat moves the end. */
	ck_assert_int_eq(sk_store_activity_extend(sk_control_store(F.ctl), 2, T0 + 30 * S, T0), 0);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, NULL), 0);
	ck_assert_int_eq(sk_stock_end_ns(sk_shm_item_find(F.arena.shm, 2)), T0 + 30 * S);
}
END_TEST

/* ------------------------------------------------------------------- remove */

START_TEST(remove_unsold_units)
{
	struct sk_store_activity a = activity(1, 10, INT64_MAX);
	struct sk_item *it;
	uint64_t unsold = 0;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 1);
	/* 3 sold: 2 confirmed, 1 still queued on lcore 1. */
	uint64_t o1 = buy(0, 1, it, 1);
	buy(0, 2, it, 1);
	ck_assert_int_eq(drain_now(), 2);
	uint64_t queued = buy(1, 3, it, 1);
	(void)queued;

	/* 7 unsold: 8 is too many, nothing moves. */
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 100, 8, T0, &unsold), SK_ACTIVITY_SHORT);
	ck_assert_uint_eq(unsold, 7);
	ck_assert_uint_eq(sk_stock_remaining(it), 7);
	ck_assert_uint_eq(stored(1).removed, 0);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 100, 6, T0, NULL), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert_uint_eq(atomic_load(&it->removed), 6);
	ck_assert_uint_eq(stored(1).removed, 6);
	/* Exactly once: the repeat touches nothing, other units conflict,
	 * a restock id is not a removal's. */
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 100, 6, T0, NULL),
			 SK_ACTIVITY_UNCHANGED);
	ck_assert_uint_eq(sk_stock_remaining(it), 1);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 100, 1, T0, NULL), SK_ACTIVITY_CONFLICT);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 1, 100, 6, T0), SK_ACTIVITY_CONFLICT);
	ck_assert_int_eq(sk_control_stock_add(F.ctl, 1, 101, 2, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 101, 2, T0, NULL), SK_ACTIVITY_CONFLICT);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	/* The last unsold units: gone, the flag up at once. */
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 102, 3, T0, NULL), SK_ACTIVITY_DONE);
	ck_assert(sk_stock_is_sold_out(it));
	ck_assert_str_eq(sk_buy_status_name(try_buy(0, 4, it)), "sold_out");
	/* The queued order commits: its unit was never taken. */
	ck_assert_int_eq(drain_now(), 1);
	ck_assert_uint_eq(sk_control_order_status(F.ctl, queued), SK_ORDER_CONFIRMED);
	assert_books(it);

	/* A cancel makes a unit unsold again: removable. */
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT + S), 3);
	ck_assert_uint_eq(sk_stock_remaining(it), 3);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 103, 4, T0, &unsold), SK_ACTIVITY_SHORT);
	ck_assert_uint_eq(unsold, 3);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 103, 3, T0, NULL), SK_ACTIVITY_DONE);
	assert_books(it);
	(void)o1;

	/* Refusals. */
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 0, 1, T0, NULL), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 104, 0, T0, NULL), SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 104, SK_STOCK_MAX_UNITS + 1, T0, NULL),
			 SK_ACTIVITY_INVALID);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 9, 104, 1, T0, NULL), SK_ACTIVITY_UNKNOWN);
	ck_assert_int_eq(sk_control_activity_close(F.ctl, 1, T0), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 104, 1, T0, NULL), SK_ACTIVITY_CLOSED);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 103, 3, T0, NULL),
			 SK_ACTIVITY_UNCHANGED); /* a repeat is still answered */
}
END_TEST

START_TEST(remove_repaired_and_store_only)
{
	struct sk_store_activity a = activity(1, 10, INT64_MAX);
	struct sk_item *it;
	struct sk_control_preheat_info pi;

	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
	it = sk_shm_item_find(F.arena.shm, 1);
	/* A remover that died between the item table and the store: the units
	 * are off sale, the store never heard of it; preheat gives them back. */
	ck_assert_int_eq(sk_stock_remove(it, 4, NULL), SK_STOCK_OK);
	ck_assert_uint_eq(sk_stock_remaining(it), 6);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 1);
	ck_assert_uint_eq(sk_stock_remaining(it), 10);
	ck_assert_uint_eq(atomic_load(&it->removed), 0);
	/* Its retry (same id) applies once. */
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 1, 7, 4, T0, NULL), SK_ACTIVITY_DONE);
	ck_assert_int_eq(sk_control_preheat(F.ctl, T0, false, &pi), 0);
	ck_assert_uint_eq(pi.synced, 0);
	ck_assert_uint_eq(sk_stock_remaining(it), 6);
	assert_books(it);

	/* An activity the arena lacks (ended before this dataplane started):
	 * removed in the store alone, from the store's count. */
	struct sk_store_activity e = activity(5, 8, T0 - S);
	e.start_ns = T0 - 10 * S;
	e.per_user_limit = 2;
	ck_assert_int_eq(sk_store_activity_put(sk_control_store(F.ctl), &e, T0), 0);
	struct sk_order_rec r = {.id = sk_order_id_make(EPOCH - 100, 0, 0, 1),
				 .user = 9,
				 .price = 1,
				 .time_ns = T0 - 5 * S,
				 .item = 5,
				 .qty = 2,
				 .nlines = 1};
	uint8_t oc;
	ck_assert_int_eq(sk_store_put_orders(sk_control_store(F.ctl), &r, 1, 0, T0, &oc, NULL), 0);
	ck_assert_uint_eq(oc, SK_STORE_NEW);
	ck_assert_ptr_null(sk_shm_item_find(F.arena.shm, 5));
	uint64_t unsold = 0;
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 5, 1, 7, T0, &unsold), SK_ACTIVITY_SHORT);
	ck_assert_uint_eq(unsold, 6);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 5, 1, 6, T0, NULL), SK_ACTIVITY_DONE);
	ck_assert_uint_eq(stored(5).removed, 6);
	ck_assert_int_eq(sk_control_stock_remove(F.ctl, 5, 2, 1, T0, &unsold), SK_ACTIVITY_SHORT);
	ck_assert_uint_eq(unsold, 0);
}
END_TEST

/* ------------------------------------------------------- routes, seckillctl */

START_TEST(activity_change_routes)
{
	struct sk_store_activity a = activity(1, 10, T0 + 1000 * S);
	char body[128];
	json_t *j;

	/* now: the routes use the wall clock; the sale runs far beyond it */
	a.start_ns = sk_clock_ns(CLOCK_REALTIME);
	a.end_ns = a.start_ns + 1000 * S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, a.start_ns), SK_ACTIVITY_DONE);
	struct sk_item *it = sk_shm_item_find(F.arena.shm, 1);
	buy(0, 1, it, 1);
	ck_assert_int_eq(drain_now(), 1);

	j = handle("POST", "/v1/activities/1/pause", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "done");
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "paused");
	ck_assert(json_is_true(json_object_get(json_object_get(j, "activity"), "paused")));
	json_decref(j);
	j = handle("POST", "/v1/activities/1/pause", NULL, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	j = handle("POST", "/v1/activities/1/resume", "{}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "active");
	json_decref(j);
	error_has(handle("GET", "/v1/activities/1/pause", NULL, 405), "not allowed");
	error_has(handle("POST", "/v1/activities/9/pause", NULL, 404), "unknown activity");
	error_has(handle("POST", "/v1/activities/x/resume", NULL, 400), "bad item id");

	/* extend */
	snprintf(body, sizeof(body), "{\"end_ns\":%lld}", (long long)(a.end_ns + 60 * S));
	j = handle("POST", "/v1/activities/1/extend", body, 200);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "end_ns")), a.end_ns + 60 * S);
	json_decref(j);
	j = handle("POST", "/v1/activities/1/extend", body, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	snprintf(body, sizeof(body), "{\"end_ns\":%lld}", (long long)a.end_ns);
	error_has(handle("POST", "/v1/activities/1/extend", body, 409), "only moves later");
	j = handle("POST", "/v1/activities/1/extend", "{\"end_ns\":null}", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "end_ns")), INT64_MAX);
	json_decref(j);
	error_has(handle("POST", "/v1/activities/1/extend", "{}", 400), "end_ns: required");
	error_has(handle("POST", "/v1/activities/1/extend", "{\"end_ns\":-5}", 400), "end_ns");
	error_has(handle("POST", "/v1/activities/1/extend", "{\"end_ns\":\"x\"}", 400), "end_ns");
	error_has(handle("POST", "/v1/activities/1/extend", "{\"end\":1}", 400), "unknown field");
	error_has(handle("POST", "/v1/activities/1/extend", NULL, 400), "body");

	/* remove */
	j = handle("POST", "/v1/activities/1/remove", "{\"units\":4,\"request_id\":11}", 200);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "removed")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "remaining")), 5);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(j, "activity"), "removed")), 4);
	json_decref(j);
	j = handle("POST", "/v1/activities/1/remove", "{\"units\":4,\"request_id\":11}", 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "unchanged");
	json_decref(j);
	j = handle("POST", "/v1/activities/1/remove", "{\"units\":6,\"request_id\":12}", 409);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "unsold")), 5);
	error_has(j, "only 5 units are unsold");
	error_has(handle("POST", "/v1/activities/1/remove", "{\"units\":1,\"request_id\":11}", 409),
		  "request_id was used before");
	error_has(handle("POST", "/v1/activities/1/remove", "{\"units\":1}", 400),
		  "request_id: required");
	error_has(handle("POST", "/v1/activities/1/remove", "{\"request_id\":3}", 400),
		  "units: required");
	error_has(handle("POST", "/v1/activities/1/remove", "{\"units\":0,\"request_id\":3}", 400),
		  "units");
	error_has(handle("POST", "/v1/activities/1/remove",
			 "{\"units\":1,\"request_id\":3,\"x\":1}", 400),
		  "x: unknown field");
	error_has(handle("POST", "/v1/activities/9/remove", "{\"units\":1,\"request_id\":3}", 404),
		  "unknown activity");
	j = handle("GET", "/v1/items/1", NULL, 200);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "removed")), 4);
	json_decref(j);
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	assert_books(it);
}
END_TEST

START_TEST(seckillctl_day2_commands)
{
	static char out[65536];
	struct sk_store_activity a = activity(1, 10, 0);
	int64_t now = sk_clock_ns(CLOCK_REALTIME);

	a.start_ns = now;
	a.end_ns = now + 1000 * S;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, now), SK_ACTIVITY_DONE);
	struct sk_item *it = sk_shm_item_find(F.arena.shm, 1);
	admin_start();

	ck_assert_int_eq(CLI("--port", F.port, "activity", "pause", "1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 1: paused"));
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_PAUSED);
	ck_assert_int_eq(CLI("--port", F.port, "activity", "pause", "1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "unchanged"));
	ck_assert_int_eq(CLI("--port", F.port, "activity", "list"), 0);
	ck_assert_ptr_nonnull(strstr(out, " paused "));
	ck_assert_int_eq(CLI("--port", F.port, "--json", "activity", "resume", "1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"state\":\"active\""));
	ck_assert_int_eq(CLI("--port", F.port, "activity", "pause", "2"), 4);

	ck_assert_int_eq(CLI("--port", F.port, "activity", "extend", "1", "--end", "+2h"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 1: extended"));
	ck_assert_int_gt(sk_stock_end_ns(it), now + 7000 * S);
	ck_assert_int_eq(CLI("--port", F.port, "activity", "extend", "1", "--end", "+1h"), 5);
	ck_assert_int_eq(CLI("--port", F.port, "activity", "extend", "1", "--end=never"), 0);
	ck_assert_ptr_nonnull(strstr(out, "never"));
	ck_assert_int_eq(sk_stock_end_ns(it), INT64_MAX);
	ck_assert_int_eq(CLI("--port", F.port, "activity", "extend", "1", "--end", "never"), 0);
	ck_assert_ptr_nonnull(strstr(out, "unchanged"));

	ck_assert_int_eq(CLI("--port", F.port, "stock", "remove", "1", "3", "--request-id", "5"),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "item 1: removed, 3 units (request id 5)"));
	ck_assert_ptr_nonnull(strstr(out, "removed 3, remaining 7"));
	ck_assert_int_eq(CLI("--port", F.port, "stock", "remove", "1", "3", "--request-id", "5"),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "unchanged"));
	ck_assert_int_eq(CLI("--port", F.port, "stock", "remove", "1", "8", "--request-id", "6"),
			 5);
	ck_assert_int_eq(CLI("--port", F.port, "--json", "stock", "remove", "1", "8"), 5);
	ck_assert_ptr_nonnull(strstr(out, "\"unsold\":7"));
	ck_assert_int_eq(CLI("--port", F.port, "stock", "remove", "1", "2"), 0);
	ck_assert_ptr_nonnull(strstr(out, "remaining 5"));
	ck_assert_int_eq(CLI("--port", F.port, "stock", "add", "1", "1", "--request-id", "5"), 5);
	ck_assert_int_eq(CLI("--port", F.port, "stock", "remove", "9", "1"), 4);
	ck_assert_int_eq(CLI("--port", F.port, "reconcile"), 0);
	ck_assert_ptr_nonnull(strstr(out, "total 10 + added 0 - removed 5 == remaining 5"));
	ck_assert_ptr_nonnull(strstr(out, "reconcile: ok"));
	ck_assert_uint_eq(sk_stock_remaining(it), 5);

	/* --help, and bad input exits 2 before anything is sent. */
	ck_assert_int_eq(CLI("activity", "pause", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "503"));
	ck_assert_int_eq(CLI("activity", "extend", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--end TIME"));
	ck_assert_int_eq(CLI("stock", "remove", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "stock remove ID UNITS"));
	static const char *const bad[][8] = {
		{"activity", "pause", NULL},
		{"activity", "pause", "x", NULL},
		{"activity", "resume", "1", "2", NULL},
		{"activity", "pause", "1", "--end", "+1h", NULL},
		{"activity", "extend", "1", NULL},
		{"activity", "extend", "1", "--end", "tomorrow", NULL},
		{"activity", "extend", "1", "--end", "-5", NULL},
		{"activity", "extend", "1", "--end", "+5x", NULL},
		{"stock", "remove", "1", NULL},
		{"stock", "remove", "1", "0", NULL},
		{"stock", "remove", "1", "-1", NULL},
		{"stock", "remove", "1", "x", NULL},
		{"stock", "remove", "1", "1", "--request-id", "0", NULL},
		{"stock", "remove", "1", "1", "--request-id", "9223372036854775808", NULL},
		{"stock", "remove", "1", "1", "--user", "3", NULL},
		{"stock", "take", "1", "1", NULL},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++) {
		const char *argv[12] = {"--port", F.port};
		size_t n = 2;
		for (size_t k = 0; bad[i][k] != NULL; k++)
			argv[n++] = bad[i][k];
		argv[n] = NULL;
		ck_assert_msg(run_cli(out, sizeof(out), argv) == 2, "bad input %zu", i);
	}
	ck_assert_uint_eq(sk_stock_remaining(it), 5);
	ck_assert_uint_eq(atomic_load(&it->state), SK_ITEM_ACTIVE);
}
END_TEST

static Suite *
day2_suite(void)
{
	Suite *s = suite_create("control-day2");
	TCase *tc = tcase_create("orders");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, orders_by_user_and_state);
	tcase_add_test(tc, orders_bad_queries);
	tcase_add_test(tc, orders_over_http);
	if (seckillctl_path != NULL)
		tcase_add_test(tc, seckillctl_orders);
	suite_add_tcase(s, tc);

	tc = tcase_create("activities");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pause_and_resume);
	tcase_add_test(tc, extend_only_later);
	tcase_add_test(tc, remove_unsold_units);
	tcase_add_test(tc, remove_repaired_and_store_only);
	tcase_add_test(tc, activity_change_routes);
	if (seckillctl_path != NULL)
		tcase_add_test(tc, seckillctl_day2_commands);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	seckillctl_path = argc > 1 ? argv[1] : NULL;
	return sk_test_eal_main(day2_suite(), "test_day2");
}
