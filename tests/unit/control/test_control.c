/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the control plane (control/sk_control.h, sk_admin.h) and of
 * the seckillctl binary, in one process with the EAL in --no-huge mode: an
 * arena in plain memory, real rte_rings, buys through sk_buy(), and an LMDB
 * store in a temporary directory per test.
 *
 *   drain:     every sold order lands in LMDB, confirmed, settled advanced;
 *              carts never split; the linger timer; the attach-by-name layer
 *   crashes:   replay after commit (before finish, with and without status
 *              moves), the consumer-head reset (peek without finish), repair
 *              of a cancel or pay the arena missed
 *   refusals:  oversell guard and a full map -> failed, units returned
 *   deadlines: exactly the units come back and a second wave buys exactly
 *              them; orders of an earlier run; pay racing the timeout (one
 *              winner per order); pay of a cancelled / failed / queued order
 *   views:     metrics text parses; every admin route and status; seckillctl
 *              over TCP and a unix socket, exit codes, reconcile
 *
 * argv[1] is the seckillctl binary.
 *
 * This file: the fixture, the helpers the topic files share (test_control.h) and
 * the suite; the tests are in test_control_{drain,crash,deadline,pay,activity,views}.c.
 */
#include "test_control.h"

const char *seckillctl_path;

struct fx F;

void
ctl_open(void)
{
	char err[SK_CONTROL_ERR_MAX];
	int rc = sk_control_init(&F.ctl, F.arena.shm, F.arena.ring, NLCORES, &F.conf, err,
				 sizeof(err));

	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
}

void
ctl_restart(void)
{
	sk_control_close(F.ctl);
	F.ctl = NULL;
	ctl_open();
}

void
fx_setup_with(uint32_t batch_max, uint64_t map_size)
{
	struct sk_shm_conf c = {.nlcores = NLCORES,
				.max_items = 8,
				.dedup_slots = 16384,
				.status_bits = 12,
				.epoch = EPOCH};

	memset(&F, 0, sizeof(F));
	sk_test_arena_init(&F.arena, &c);
	sk_test_arena_rings(&F.arena, RING_SZ);
	ck_assert_int_eq(sk_test_tmpdir(F.dir, sizeof(F.dir), "sk-control-test"), 0);
	snprintf(F.store, sizeof(F.store), "%s/store", F.dir);
	F.conf = (struct sk_control_conf){.store_dir = F.store,
					  .store_flags = SK_STORE_NOSYNC,
					  .store_map_size = map_size,
					  .pay_timeout_ns = TIMEOUT,
					  .batch_max = batch_max};
	ctl_open();
}

void
fx_setup(void)
{
	fx_setup_with(0, 0);
}

void
fx_teardown(void)
{
	sk_control_close(F.ctl);
	sk_test_arena_fini(&F.arena);
	sk_test_rmtree(F.dir);
}

struct sk_item *
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

enum sk_buy_status
buy_lines(unsigned lcore, uint64_t user, struct sk_buy_line *l, unsigned n, uint64_t *order)
{
	struct sk_buy_req r = {.user = user,
			       .client = {.family = SK_ADDR_V4, .bytes = {198, 18, 0, 2}},
			       .now_ns = T0};

	return sk_buy(&F.arena.lc[lcore], &r, l, n, order);
}

enum sk_buy_status
buy_one(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;

	return buy_lines(lcore, user, &l, 1, &id);
}

uint64_t
buy(unsigned lcore, uint64_t user, struct sk_item *it)
{
	struct sk_buy_line l = {.item = it, .qty = 1};
	uint64_t id;
	enum sk_buy_status s = buy_lines(lcore, user, &l, 1, &id);

	ck_assert_msg(s == SK_BUY_OK, "buy user %lu: %s", (unsigned long)user,
		      sk_buy_status_name(s));
	return id;
}

int
drain_now(struct sk_control_drain_info *di)
{
	return sk_control_drain(F.ctl, T0 + S, SK_CONTROL_DRAIN_NOW, di);
}

unsigned
store_state(uint64_t id)
{
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;
	int rc = sk_store_order_get(sk_control_store(F.ctl), id, l, SK_STORE_MAX_LINES, &n);

	return rc == 0 ? l[0].state : SK_ORDER_NONE;
}

unsigned
arena_state(uint64_t id)
{
	return sk_control_order_status(F.ctl, id);
}

void
count_confirmed_failed(const uint64_t *ids, unsigned n, unsigned *confirmed, unsigned *failed)
{
	*confirmed = *failed = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned a = arena_state(ids[i]), s = store_state(ids[i]);
		if (a == SK_ORDER_CONFIRMED && s == SK_ORDER_CONFIRMED)
			(*confirmed)++;
		else if (a == SK_ORDER_FAILED && s == SK_ORDER_NONE)
			(*failed)++;
		else
			ck_abort_msg("order %u: arena %u store %u", i, a, s);
	}
}

void
assert_store_ok(void)
{
	char err[SK_STORE_ERR_MAX];
	int rc = sk_store_verify(sk_control_store(F.ctl), err, sizeof(err));

	ck_assert_msg(rc == 0, "store verify: %d %s", rc, err);
}

void
assert_books(struct sk_item *it)
{
	struct sk_control_item ci;

	ck_assert(sk_stock_check(it));
	ck_assert_int_eq(sk_control_item_get(F.ctl, it->id, &ci), 0);
	ck_assert_uint_eq(ci.total + ci.added, ci.remaining + ci.sold - ci.returned);
	ck_assert_uint_eq(sk_store_ledger_live(&ci.ledger), ci.sold - ci.returned);
}

struct sk_control_stats
stats(void)
{
	struct sk_control_stats s;

	sk_control_stats(F.ctl, &s);
	return s;
}

#define RACE_ORDERS 300

struct payer {
	const uint64_t *ids;
	bool by_message;       /* seckill.payments messages, not sk_control_pay() */
	bool won[RACE_ORDERS]; /* the payment came first */
};

static void *
pay_thread(void *arg)
{
	struct payer *p = arg;

	for (unsigned i = 0; i < RACE_ORDERS; i++) {
		if (!p->by_message) {
			int res = sk_control_pay(F.ctl, p->ids[i], T0 + TIMEOUT, 0);
			ck_assert(res == SK_CONTROL_PAY_DONE || res == SK_CONTROL_PAY_CANCELLED);
			p->won[i] = res == SK_CONTROL_PAY_DONE;
			continue;
		}
		char buf[160];
		struct sk_control_pm_result r;
		snprintf(buf, sizeof(buf),
			 "{\"v\":1,\"request\":\"race-%u\",\"order\":\"%llu\",\"kind\":\"paid\"}",
			 i, (unsigned long long)p->ids[i]);
		ck_assert_int_eq(sk_payments_handle(F.ctl, buf, strlen(buf), T0 + TIMEOUT, &r),
				 SK_PAYMENTS_APPLIED);
		/* A payment that lost is a conflict: no unit taken back. */
		ck_assert(r.outcome == SK_CONTROL_PM_DONE || r.outcome == SK_CONTROL_PM_CONFLICT);
		p->won[i] = r.outcome == SK_CONTROL_PM_DONE;
	}
	return NULL;
}

void
race_timeout(bool by_message)
{
	struct sk_item *it = add_item(1, RACE_ORDERS, 1);
	static uint64_t ids[RACE_ORDERS];
	static struct payer p;
	pthread_t t;
	unsigned paid = 0, cancelled = 0;
	int expired = 0, rc;

	for (unsigned u = 0; u < RACE_ORDERS; u++)
		ids[u] = buy(u % NLCORES, 1 + u, it);
	ck_assert_int_eq(drain_now(NULL), RACE_ORDERS);
	sk_control_close(F.ctl);
	F.conf.expire_max = 7; /* many small passes interleave with the payer */
	ctl_open();

	p.ids = ids;
	p.by_message = by_message;
	ck_assert_int_eq(pthread_create(&t, NULL, pay_thread, &p), 0);
	while ((rc = sk_control_expire(F.ctl, T0 + TIMEOUT)) > 0)
		expired += rc;
	ck_assert_int_eq(rc, 0);
	pthread_join(t, NULL);
	expired += sk_control_expire(F.ctl, T0 + TIMEOUT);

	for (unsigned i = 0; i < RACE_ORDERS; i++) {
		unsigned s = store_state(ids[i]);
		ck_assert_uint_eq(arena_state(ids[i]), s);
		ck_assert_uint_eq(s, p.won[i] ? SK_ORDER_PAID : SK_ORDER_CANCELLED);
		paid += p.won[i];
		cancelled += !p.won[i];
	}
	ck_assert_uint_eq(paid + cancelled, RACE_ORDERS);
	ck_assert_int_eq(expired, (int)cancelled);
	ck_assert_uint_eq(sk_stock_remaining(it), cancelled);
	if (by_message)
		ck_assert_uint_eq(stats().payments[0][SK_CONTROL_PM_CONFLICT], cancelled);
	ck_assert_uint_eq(stats().anomalies, 0);
	assert_books(it);
	assert_store_ok();
}

/* One sample line: name{label="v",...} value */
static const char metric_re[] =
	"^[a-zA-Z_:][a-zA-Z0-9_:]*"
	"(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\")*\\})?"
	" (-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?|\\+Inf|-Inf|NaN)$";

char *
metrics_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sk_control_metrics(F.ctl, f), 0);
	fclose(f);
	return buf;
}

void
assert_metrics_parse(const char *text)
{
	regex_t re;
	char *copy = strdup(text), *save = NULL, *types[128];
	unsigned ntypes = 0, samples = 0;

	ck_assert_int_eq(regcomp(&re, metric_re, REG_EXTENDED | REG_NOSUB), 0);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0)
			continue;
		if (strncmp(line, "# TYPE ", 7) == 0) {
			for (unsigned i = 0; i < ntypes; i++)
				ck_assert_msg(strcmp(types[i], line) != 0, "TYPE twice: %s", line);
			ck_assert_uint_lt(ntypes, 128);
			types[ntypes++] = line;
			continue;
		}
		ck_assert_msg(regexec(&re, line, 0, NULL, 0) == 0, "bad metric line: '%s'", line);
		samples++;
	}
	ck_assert_uint_gt(samples, 20);
	regfree(&re);
	free(copy);
}

struct sk_store_activity
activity(uint32_t id, uint64_t total)
{
	struct sk_store_activity a = {.item = id,
				      .per_user_limit = 1,
				      .total = total,
				      .price = 500,
				      .start_ns = T0,
				      .end_ns = INT64_MAX};

	snprintf(a.name, sizeof(a.name), "sale %u", id);
	return a;
}

json_t *
handle_body(const char *method, const char *path, const char *body, unsigned want_status)
{
	struct sk_admin_reply r;
	json_error_t e;

	ck_assert_int_eq(sk_admin_handle(F.ctl, method, path, body, body ? strlen(body) : 0, 0, &r),
			 0);
	ck_assert_msg(r.status == want_status, "%s %s %s: %u, want %u: %s", method, path,
		      body ? body : "", r.status, want_status, r.body);
	json_t *j = json_loads(r.body, 0, &e);
	free(r.body);
	ck_assert_ptr_nonnull(j);
	return j;
}

void
error_has(json_t *j, const char *s)
{
	const char *e = json_string_value(json_object_get(j, "error"));

	ck_assert_msg(e != NULL && strstr(e, s) != NULL, "error %s lacks %s", e ? e : "(none)", s);
	json_decref(j);
}

static Suite *
control_suite(void)
{
	Suite *s = suite_create("control");
	test_control_add_drain(s);
	test_control_add_crash(s);
	test_control_add_deadline(s);
	test_control_add_pay(s);
	test_control_add_activity(s);
	test_control_add_views(s);
	test_control_add_mapgrow(s);
	test_control_add_retention(s);
	test_control_add_reserve(s);
	return s;
}

int
main(int argc, char **argv)
{
	seckillctl_path = argc > 1 ? argv[1] : NULL;
	return sk_test_eal_main(control_suite(), "test_control");
}
