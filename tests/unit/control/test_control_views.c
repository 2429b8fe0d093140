/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control tests, views: the metrics text parses; every admin route and status; the export thread
 * and its metrics; seckillctl over TCP and a unix socket, exit codes, reconcile (tcase "views" of
 * the suite in test_control.c).
 */
#include "test_control.h"
#include "sk_test_metrics.h"

START_TEST(metrics_text_parses)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it);

	buy(1, 2, it);
	buy(1, 3, it);
	ck_assert_int_eq(sk_control_drain(F.ctl, T0, SK_CONTROL_DRAIN_NOW, NULL), 3);
	ck_assert_int_eq(sk_control_pay(F.ctl, a, T0, 0), SK_CONTROL_PAY_DONE);
	buy(0, 4, it); /* one left queued */

	char *m = metrics_text();
	assert_metrics_parse(m);
	static const char *const want[] = {
		"seckill_orders_committed_total 3\n",
		"seckill_commit_seconds_bucket{le=\"+Inf\"} 1\n",
		"seckill_commit_seconds_count 1\n",
		"seckill_ring_depth{lcore=\"0\"} 1\n",
		"seckill_ring_depth{lcore=\"1\"} 0\n",
		"seckill_orders{state=\"queued\"} 1\n",
		"seckill_orders{state=\"confirmed\"} 2\n",
		"seckill_orders{state=\"paid\"} 1\n",
		"seckill_stock_remaining{item=\"1\"} 6\n",
		"seckill_stock_sold{item=\"1\"} 4\n",
		"seckill_store_live_units{item=\"1\"} 3\n",
		"seckill_pay_requests_total{result=\"paid\"} 1\n",
		"# TYPE seckill_commit_seconds histogram\n",
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(want); i++)
		ck_assert_msg(strstr(m, want[i]) != NULL, "missing: %s", want[i]);
	free(m);
}
END_TEST

static json_t *
handle(const char *method, const char *path, unsigned want_status, struct sk_admin_reply *out)
{
	struct sk_admin_reply r;
	json_error_t e;

	ck_assert_int_eq(sk_admin_handle(F.ctl, method, path, NULL, 0, 0, &r), 0);
	ck_assert_msg(r.status == want_status, "%s %s: %u, want %u: %s", method, path, r.status,
		      want_status, r.body);
	ck_assert_uint_eq(strlen(r.body), r.len);
	json_t *j =
		strcmp(r.content_type, "application/json") == 0 ? json_loads(r.body, 0, &e) : NULL;
	if (out != NULL)
		*out = r;
	else
		free(r.body);
	return j;
}

START_TEST(admin_routes)
{
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it), q;
	struct sk_admin_reply r;
	char path[96];
	json_t *j;

	ck_assert_int_eq(drain_now(NULL), 2);
	q = buy(0, 3, it);

	handle("GET", "/healthz", 200, &r);
	ck_assert_str_eq(r.body, "ok\n");
	free(r.body);
	json_decref(handle("POST", "/healthz", 405, &r));
	ck_assert_str_eq(r.allow, "GET, HEAD");
	free(r.body);
	json_decref(handle("GET", "/nope", 404, NULL));

	snprintf(path, sizeof(path), "/v1/orders/%lu", (unsigned long)a);
	j = handle("GET", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "confirmed");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "deadline_ns")), T0 + TIMEOUT);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "lines")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "client_ip")), "198.18.0.2");
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)a);
	j = handle("POST", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "paid");
	ck_assert_ptr_null(json_object_get(j, "already"));
	json_decref(j);
	j = handle("POST", path, 200, NULL);
	ck_assert(json_is_true(json_object_get(j, "already")));
	json_decref(j);
	json_decref(handle("GET", path, 405, NULL));

	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 1);
	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)b);
	j = handle("POST", path, 409, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "cancelled");
	json_decref(j);

	snprintf(path, sizeof(path), "/v1/orders/%lu", (unsigned long)q);
	j = handle("GET", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "queued");
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/orders/%lu/pay", (unsigned long)q);
	j = handle("POST", path, 409, &r);
	ck_assert_uint_eq(r.retry_after, 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "queued");
	free(r.body);
	json_decref(j);

	json_decref(handle("GET", "/v1/orders/77", 404, NULL));
	json_decref(handle("POST", "/v1/orders/77/pay", 404, NULL));
	json_decref(handle("GET", "/v1/orders/abc", 400, NULL));
	json_decref(handle("GET", "/v1/orders/99999999999999999999999", 400, NULL));
	json_decref(handle("GET", "/v1/orders/0", 400, NULL));

	j = handle("GET", "/v1/items", 200, NULL);
	json_t *items = json_object_get(j, "items");
	ck_assert_uint_eq(json_array_size(items), 1);
	json_t *i0 = json_array_get(items, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "remaining")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "sold")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(i0, "returned")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(i0, "ledger"), "live")),
			 1);
	json_decref(j);
	j = handle("GET", "/v1/items/1?x=y", 200, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "item")), 1);
	json_decref(j);
	json_decref(handle("GET", "/v1/items/2", 404, NULL));
	json_decref(handle("GET", "/v1/items/x", 400, NULL));

	handle("GET", "/metrics", 200, &r);
	ck_assert_ptr_nonnull(strstr(r.body, "seckill_orders_committed_total 2\n"));
	ck_assert_ptr_nonnull(strstr(r.content_type, "version=0.0.4"));
	free(r.body);
}
END_TEST

/* The buyer's address of either family reaches the order's "client_ip". */
START_TEST(admin_order_client_v6)
{
	struct sk_item *it = add_item(1, 10, 1);
	struct sk_buy_req r = {
		.user = 4,
		.client = {.family = SK_ADDR_V6, .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = 9}},
		.now_ns = T0};
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;
	char path[96];

	ck_assert_int_eq(sk_buy(&F.arena.lc[0], &r, &l, 1, &id), SK_BUY_OK);
	ck_assert_int_eq(drain_now(NULL), 1);
	snprintf(path, sizeof(path), "/v1/orders/%lu", (unsigned long)id);
	json_t *j = handle("GET", path, 200, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(j, "client_ip")), "2001:db8::9");
	json_decref(j);
}
END_TEST

/* ----------------------------------------------------------------- export */

static int
exporter_metrics(void *arg, FILE *out)
{
	return sk_exporter_metrics(arg, out);
}

/* in_table - whether @name is a family of table @t. */
static bool
in_table(const struct sk_prom_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].name, name) == 0)
			return true;
	return false;
}

/* Families absent from sk_control_metrics() without a member and the admin server. */
static bool
member_or_admin(const char *name)
{
	return in_table(&sk_member_table, name) || in_table(&sk_admin_table, name);
}

/* ... without a member and the Kafka exporter. */
static bool
member_or_export(const char *name)
{
	return in_table(&sk_member_table, name) || in_table(&sk_exporter_table, name);
}

/* The export thread over the control plane's store, to a mock Kafka cluster. */
START_TEST(export_thread_and_metrics)
{
	char e[256], err[SK_EXPORT_ERR_MAX];
	rd_kafka_conf_t *kc = rd_kafka_conf_new();
	rd_kafka_t *mrk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, e, sizeof(e));
	ck_assert_ptr_nonnull(mrk);
	rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 1);
	ck_assert_ptr_nonnull(mc);
	struct sk_export_conf c = {.bootstrap = rd_kafka_mock_cluster_bootstraps(mc)};
	struct sk_exporter *x;
	struct sk_item *it = add_item(1, 10, 1);
	struct sk_admin_reply r;

	for (uint64_t u = 1; u <= 5; u++)
		buy((unsigned)(u % NLCORES), u, it);
	ck_assert_int_eq(drain_now(NULL), 5);
	ck_assert_int_eq(sk_exporter_start(&x, sk_control_store(F.ctl), &c, err, sizeof(err)), 0);
	sk_control_metrics_extra(F.ctl, exporter_metrics, x);

	bool done = false;
	for (int i = 0; i < 500 && !done; i++) { /* 5 s at most */
		handle("GET", "/metrics", 200, &r);
		done = strstr(r.body, "seckill_export_delivered_total 5\n") != NULL &&
		       strstr(r.body, "seckill_export_backlog 0\n") != NULL;
		free(r.body);
		usleep(10000);
	}
	ck_assert_msg(done, "the export did not deliver the 5 orders");
	/* every row of the tables once, with HELP and TYPE: all but the member's
	 * and the admin server's, which this control plane does not have */
	char *list = NULL;
	sk_test_metrics_list(sk_control_metrics_list, &list);
	handle("GET", "/metrics", 200, &r);
	ck_assert_uint_eq(sk_test_metrics_check(list, r.body, member_or_admin),
			  sk_test_metrics_count(list, "\n") - sk_member_table.n - sk_admin_table.n);
	free(r.body);
	free(list);
	sk_control_metrics_extra(F.ctl, NULL, NULL);
	/* a stop right after a commit still exports it */
	for (uint64_t u = 6; u <= 8; u++)
		buy(0, u, it);
	ck_assert_int_eq(drain_now(NULL), 3);
	sk_exporter_stop(x, 5000);

	uint64_t cursor = 0;
	ck_assert_int_eq(sk_store_cursor_get(sk_control_store(F.ctl), SK_EXPORT_CURSOR, &cursor),
			 0);
	ck_assert_uint_eq(cursor, 8);
	handle("GET", "/metrics", 200, &r);
	ck_assert_ptr_null(strstr(r.body, "seckill_export_")); /* hook removed */
	free(r.body);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(mrk);
}
END_TEST

/* --------------------------------------------------------------- seckillctl */

/* run_cli - seckillctl @args (NULL-terminated); its exit code, stdout in @out. */
static int
run_cli(char *out, size_t outlen, const char *const *args)
{
	return sk_test_exec(F.dir, seckillctl_path, args, out, outlen);
}

#define CLI(...) run_cli(out, sizeof(out), (const char *const[]){__VA_ARGS__, NULL})

START_TEST(seckillctl_against_admin)
{
	static char out[65536];
	struct sk_item *it = add_item(1, 10, 1);
	uint64_t a = buy(0, 1, it), b = buy(1, 2, it);
	char port[16], sock[PATH_MAX + 32], ida[24], idb[24];
	struct sk_admin *adm;
	char err[SK_CONTROL_ERR_MAX];

	ck_assert_int_eq(drain_now(NULL), 2);
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT - S), 0);
	char tok[PATH_MAX + 32], bad_tok[PATH_MAX + 32];

	snprintf(sock, sizeof(sock), "%s/admin.sock", F.dir);
	snprintf(tok, sizeof(tok), "%s/admin.token", F.dir);
	snprintf(bad_tok, sizeof(bad_tok), "%s/other.token", F.dir);
	ck_assert_int_eq(sk_test_write_file(tok, "Y3RsLXRlc3QtdG9rZW4tMDEyMzQ1Njc4OQ==\n", 0600),
			 0);
	ck_assert_int_eq(
		sk_test_write_file(bad_tok, "Y3RsLXRlc3QtdG9rZW4tMDEyMzQ1Njc4OA==\n", 0600), 0);
	struct sk_admin_conf ac = {.tcp = true, .port = 0, .token_file = tok, .socket_path = sock};
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), 0);
	ck_assert_uint_ne(sk_admin_port(adm), 0);
	snprintf(port, sizeof(port), "%u", sk_admin_port(adm));
	snprintf(ida, sizeof(ida), "%lu", (unsigned long)a);
	snprintf(idb, sizeof(idb), "%lu", (unsigned long)b);

	/* A second server on the same socket is refused. */
	struct sk_admin *adm2;
	struct sk_admin_conf ac2 = {.socket_path = sock};
	ck_assert_int_eq(sk_admin_start(&adm2, F.ctl, &ac2, err, sizeof(err)), -EADDRINUSE);

	/* TCP: the token from --token-file or the file $SECKILLCTL_TOKEN_FILE names */
	ck_assert_int_eq(unsetenv("SECKILLCTL_TOKEN_FILE"), 0);
	ck_assert_int_eq(CLI("--port", port, "items"), 1); /* 401 */
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 1);
	ck_assert_int_eq(CLI("--port", port, "--token-file", bad_tok, "order", "pay", ida), 1);
	ck_assert_int_eq(sk_admin_unauthorized(adm), 3);
	ck_assert_int_eq(CLI("--port", port, "--token-file", sock, "items"),
			 2); /* no token in it */
	ck_assert_int_eq(CLI("--port", port, "--token-file", "/nonexistent/t", "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "--token-file", tok, "items"), 0);
	ck_assert_int_eq(CLI("--port", port, "--token-file=", "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "--socket", sock, "items"), 2);
	ck_assert_int_eq(CLI("--port", port, "metrics"), 0); /* open to scrapers */
	ck_assert_ptr_nonnull(strstr(out, "seckill_admin_unauthorized_total 3\n"));
	char *list = NULL;
	sk_test_metrics_list(sk_control_metrics_list, &list);
	ck_assert_uint_eq(sk_test_metrics_check(list, out, member_or_export),
			  sk_test_metrics_count(list, "\n") - sk_member_table.n -
				  sk_exporter_table.n);
	ck_assert_ptr_nonnull(strstr(out, "# TYPE seckill_admin_unauthorized_total counter\n"));
	free(list);
	ck_assert_int_eq(setenv("SECKILLCTL_TOKEN_FILE", tok, 1), 0);
	ck_assert_int_eq(CLI("--port", port, "items"), 0);
	ck_assert_ptr_nonnull(strstr(out, "REMAINING"));
	ck_assert_int_eq(CLI("--port", port, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "confirmed"));
	ck_assert_int_eq(CLI("--port", port, "--json", "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"status\":\"confirmed\""));
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "paid"));
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "already"));
	ck_assert_int_eq(sk_control_expire(F.ctl, T0 + TIMEOUT), 1);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", idb), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "show", "4242"), 4);
	ck_assert_int_eq(CLI("--port", port, "item", "1"), 0);
	ck_assert_int_eq(CLI("--port", port, "item", "2"), 4);
	ck_assert_int_eq(CLI("--port", port, "metrics"), 0);
	ck_assert_ptr_nonnull(strstr(out, "seckill_orders_committed_total 2\n"));
	ck_assert_int_eq(CLI("--socket", sock, "items"), 0);
	ck_assert_int_eq(CLI("--socket", sock, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "paid"));

	/* order refund: refused for the cancelled order, done once per request id */
	ck_assert_int_eq(CLI("--port", port, "order", "refund", idb), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--units", "2"), 5);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--units", "x"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", ida, "--units", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "refund", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--request R"));
	ck_assert_int_eq(CLI("--port", port, "order", "refund", ida, "--request", "cli-1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "1 units refunded, now refunded (request cli-1)"));
	ck_assert_int_eq(
		CLI("--port", port, "--json", "order", "refund", ida, "--request", "cli-1"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"duplicate\":true"));
	ck_assert_int_eq(CLI("--port", port, "order", "show", ida), 0);
	ck_assert_ptr_nonnull(strstr(out, "refunded (arena: refunded)"));
	ck_assert_ptr_nonnull(strstr(out, "REFUNDED"));

	ck_assert_int_eq(CLI("--port", port, "reconcile"), 0);
	ck_assert_ptr_nonnull(strstr(out, "reconcile: ok"));
	ck_assert_int_eq(CLI("--port", port, "--json", "reconcile"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"ok\": true"));
	atomic_fetch_add(&it->returned, 1); /* break the books */
	ck_assert_int_eq(CLI("--port", port, "reconcile"), 1);
	ck_assert_ptr_nonnull(strstr(out, "MISMATCH"));
	atomic_fetch_sub(&it->returned, 1);

	/* activities: add (idempotent), list, show, restock (once per id), close */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "30", "--total", "5", "--price",
			     "1999", "--name", "phone", "--start", "+1h", "--end", "never"),
			 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 30: created"));
	ck_assert_ptr_nonnull(strstr(out, "remaining        5"));
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "30", "--total", "5", "--price",
			     "1999", "--name", "phone", "--start", "+1h"),
			 5); /* another start: a conflict */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "31", "--total=2",
			     "--start=2030-01-01T00:00:00Z", "--end=1924992000", "--limit", "2"),
			 0);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "31", "--total=2",
			     "--start=2030-01-01T00:00:00Z", "--end=1924992000", "--limit", "2"),
			 0);
	ck_assert_int_eq(CLI("--port", port, "--json", "activity", "show", "31"), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"start_ns\":1893456000000000000"));
	ck_assert_int_eq(CLI("--port", port, "activity", "list"), 0);
	ck_assert_ptr_nonnull(strstr(out, "phone"));
	ck_assert_ptr_nonnull(strstr(out, "on_sale"));
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "7", "--request-id", "9"), 0);
	ck_assert_ptr_nonnull(strstr(out, "restocked, 7 units (request id 9)"));
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "7", "--request-id", "9"), 0);
	ck_assert_ptr_nonnull(strstr(out, "unchanged"));
	ck_assert_uint_eq(sk_stock_remaining(sk_shm_item_find(F.arena.shm, 30)), 12);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "8", "--request-id", "9"), 5);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1"), 0); /* random id */
	ck_assert_uint_eq(sk_stock_remaining(sk_shm_item_find(F.arena.shm, 30)), 13);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "77", "1"), 4);
	/* a rerun without --start is the same definition */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "33", "--total", "2"), 0);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "33", "--total", "2"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 33: unchanged"));
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "30"), 0);
	ck_assert_ptr_nonnull(strstr(out, "activity 30: closed"));
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "30"), 0);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1"), 5);
	ck_assert_int_eq(CLI("--port", port, "activity", "show", "77"), 4);
	ck_assert_int_eq(CLI("--port", port, "activity", "close", "77"), 4);
	/* bad input never reaches the daemon (exit 2) */
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "32"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "32", "--total", "0"), 2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--start", "tomorrow"),
		2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--end", "now"), 2);
	ck_assert_int_eq(
		CLI("--port", port, "activity", "add", "32", "--total", "1", "--limit", "1001"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "list", "--total", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "x"), 2);
	ck_assert_int_eq(CLI("--port", port, "stock", "add", "30", "1", "--total", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "frob", "1"), 2);
	ck_assert_int_eq(CLI("--port", port, "activity", "add", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: seckillctl activity add ID --total N"));
	ck_assert_int_eq(CLI("stock", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "--request-id"));
	ck_assert_int_eq(sk_store_activity_get(sk_control_store(F.ctl), 32, NULL, NULL), -ENOENT);

	/* usage errors and help */
	ck_assert_int_eq(CLI("--port", port), 2);
	ck_assert_int_eq(CLI("--port", port, "frobnicate"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay"), 2);
	ck_assert_int_eq(CLI("--port", port, "order", "pay", "12x"), 2);
	ck_assert_int_eq(CLI("--port", "0", "items"), 2);
	ck_assert_int_eq(CLI("--bogus", "items"), 2);
	ck_assert_int_eq(CLI("order", "pay", "--help"), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: seckillctl order pay ID"));
	ck_assert_int_eq(CLI("reconcile", "--help"), 0);
	ck_assert_int_eq(CLI("--help"), 0);

	sk_admin_stop(adm);
	ck_assert_int_ne(access(sock, F_OK), 0); /* removed */
	ck_assert_int_eq(CLI("--port", port, "items"), 3);
	ck_assert_int_eq(CLI("--socket", sock, "items"), 3);
}
END_TEST

void
test_control_add_views(Suite *s)
{
	TCase *tc;

	tc = tcase_create("views");
	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, metrics_text_parses);
	tcase_add_test(tc, admin_routes);
	tcase_add_test(tc, admin_order_client_v6);
	tcase_add_test(tc, export_thread_and_metrics);
	if (seckillctl_path != NULL)
		tcase_add_test(tc, seckillctl_against_admin);
	suite_add_tcase(s, tc);
}
