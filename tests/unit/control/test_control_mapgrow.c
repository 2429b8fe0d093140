/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_control_mapgrow.c - the store's map grown online by the control
 * plane (sk_control_map_check(), sk_store_map.h): a sale that fills a small
 * map many times over keeps every order; a reader thread across the grows;
 * a grow against an open snapshot and a walk's callback that reads on;
 * another process whose map is outgrown (MDB_MAP_RESIZED); the cap; the
 * policy as a table.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "test_control.h"
#include "sk_store_map.h"

#define KIB	    1024u
#define SMALL_MAP   (256 * KIB)
#define SALE_ORDERS 4000u /* 2000 per lcore: well inside 2^status_bits */
#define ROUND	    500u  /* buys between drains: half a ring */

/* map_size - the store's map now. */
static uint64_t
map_size(void)
{
	struct sk_store_map_info mi;

	ck_assert_int_eq(sk_store_map_info(sk_control_store(F.ctl), &mi), 0);
	return mi.map_size;
}

/* sale - @n one-unit buys of @it by distinct users, drained every ROUND. */
static void
sale(struct sk_item *it, uint64_t *ids, unsigned n)
{
	for (unsigned done = 0; done < n;) {
		for (unsigned u = 0; u < ROUND && done < n; u++, done++)
			ids[done] = buy(done % NLCORES, 1 + done, it);
		for (int k = 0; k < 100 && (rte_ring_count(F.arena.ring[0]) ||
					    rte_ring_count(F.arena.ring[1]));
		     k++)
			ck_assert_int_ge(drain_now(NULL), 0);
		ck_assert_uint_eq(rte_ring_count(F.arena.ring[0]) + rte_ring_count(F.arena.ring[1]),
				  0);
	}
}

/* assert_all_confirmed - every order of ids[0..n) confirmed in the arena and the store. */
static void
assert_all_confirmed(const uint64_t *ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ck_assert_msg(store_state(ids[i]) == SK_ORDER_CONFIRMED, "order %u: store %u", i,
			      store_state(ids[i]));
		ck_assert_msg(arena_state(ids[i]) == SK_ORDER_CONFIRMED, "order %u: arena %u", i,
			      arena_state(ids[i]));
	}
}

static void
fx_setup_grow(void)
{
	fx_setup_with(64, SMALL_MAP);
}

START_TEST(sale_grows_small_map)
{
	static uint64_t ids[SALE_ORDERS];
	struct sk_item *it = add_item(1, SALE_ORDERS, 1);

	sale(it, ids, SALE_ORDERS);
	struct sk_control_stats s = stats();
	ck_assert_uint_eq(s.orders_failed, 0); /* no winner met a full map */
	ck_assert_uint_eq(s.orders_committed, SALE_ORDERS);
	ck_assert_uint_ge(s.map_grows, 3); /* 256 KiB -> at least 2 MiB */
	ck_assert_uint_eq(s.map_grow_errors, 0);
	ck_assert_uint_eq(s.map_capped, 0);
	ck_assert_uint_ge(map_size(), 8 * SMALL_MAP);
	ck_assert_uint_lt(s.map_grow_pause_ns, 1000000000u);
	assert_all_confirmed(ids, SALE_ORDERS);
	assert_books(it);
	assert_store_ok();

	/* The metrics say so. */
	char *m = metrics_text();
	assert_metrics_parse(m);
	ck_assert_ptr_nonnull(strstr(m, "\nseckill_store_map_grows_total "));
	ck_assert_ptr_nonnull(strstr(m, "\nseckill_store_disk_free_bytes "));
	ck_assert_ptr_nonnull(strstr(m, "\nseckill_store_map_capped 0\n"));
	free(m);

	/* Intact after a reopen with the small map configured again: the map
	 * starts at the data in use and grows at once. */
	ctl_restart();
	ck_assert_uint_gt(map_size(), SMALL_MAP);
	ck_assert_uint_eq(stats().map_grows, 1);
	assert_all_confirmed(ids, SALE_ORDERS);
	assert_store_ok();
}
END_TEST

/* A thread reading the store in a loop while the drain grows the map. */
struct reader {
	struct sk_store *st;
	uint64_t id; /* an order committed before the thread starts */
	atomic_bool stop;
	uint64_t reads, errors;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	struct sk_store_line l[SK_STORE_MAX_LINES];
	struct sk_store_info si;
	unsigned n;

	/* Bounded: the test stops it after its sale; 10M reads at most. */
	for (unsigned i = 0; i < 10000000 && !atomic_load(&r->stop); i++) {
		if (sk_store_order_get(r->st, r->id, l, SK_STORE_MAX_LINES, &n) != 0 || n != 1 ||
		    l[0].rec.user != 1)
			r->errors++;
		if (i % 16 == 0 && sk_store_info(r->st, &si) != 0)
			r->errors++;
		r->reads++;
	}
	return NULL;
}

START_TEST(reader_across_grows)
{
	static uint64_t ids[SALE_ORDERS];
	struct sk_item *it = add_item(1, SALE_ORDERS, 1);
	/* Static, and joined before any assertion can leave the test. */
	static struct reader r;
	pthread_t t;
	unsigned drains = 0, left = 0;
	int drain_err = 0;

	ids[0] = buy(0, 1, it);
	ck_assert_int_eq(drain_now(NULL), 1);
	r = (struct reader){.st = sk_control_store(F.ctl), .id = ids[0]};
	ck_assert_int_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	for (unsigned done = 1; done < SALE_ORDERS;) {
		for (unsigned u = 0; u < ROUND && done < SALE_ORDERS; u++, done++)
			ids[done] = buy(done % NLCORES, 1 + done, it);
		for (int k = 0;
		     k < 100 && drain_err >= 0 &&
		     (left = rte_ring_count(F.arena.ring[0]) + rte_ring_count(F.arena.ring[1])) > 0;
		     k++, drains++)
			drain_err = drain_now(NULL);
		if (drain_err < 0 || left > 0)
			break;
	}
	atomic_store(&r.stop, true);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_ge(drain_err, 0);
	ck_assert_uint_eq(rte_ring_count(F.arena.ring[0]) + rte_ring_count(F.arena.ring[1]), 0);

	struct sk_control_stats s = stats();
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_gt(r.reads, 0);
	ck_assert_uint_ge(s.map_grows, 3); /* a stream of reads does not starve a grow */
	ck_assert_uint_eq(s.orders_failed, 0);
	assert_all_confirmed(ids, SALE_ORDERS);
	assert_store_ok();
}
END_TEST

/*
 * Another process (seckillctl, the dataplane's rebuild) opened the store
 * read-only with the small map before the sale: once the data outgrew its
 * map, its next read adopts the new size (MDB_MAP_RESIZED) and succeeds.
 */
START_TEST(other_process_adopts_grown_map)
{
	static uint64_t ids[SALE_ORDERS];
	struct sk_item *it = add_item(1, SALE_ORDERS, 1);
	int up[2], go[2];
	char c;

	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sk_store_conf sc = {.map_size = SMALL_MAP, .flags = SK_STORE_RDONLY};
		struct sk_store *st;
		struct sk_store_line l[SK_STORE_MAX_LINES];
		struct sk_store_info si;
		uint64_t last;
		unsigned n;
		int rc = sk_store_open(&st, F.store, &sc, NULL, 0);

		if (write(up[1], "r", 1) != 1 || rc != 0)
			_exit(2);
		if (read(go[0], &last, sizeof(last)) != sizeof(last))
			_exit(3);
		rc = sk_store_order_get(st, last, l, SK_STORE_MAX_LINES, &n);
		if (rc == 0)
			rc = sk_store_info(st, &si);
		if (rc == 0 && si.map_size <= SMALL_MAP)
			rc = -ERANGE;
		sk_store_close(st);
		_exit(rc == 0 ? 0 : 4);
	}
	ck_assert_int_eq(read(up[0], &c, 1), 1);
	sale(it, ids, SALE_ORDERS);
	ck_assert_uint_ge(stats().map_grows, 3);
	ck_assert_int_eq(write(go[1], &ids[SALE_ORDERS - 1], sizeof(ids[0])), sizeof(ids[0]));
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	for (int i = 0; i < 2; i++) {
		close(up[i]);
		close(go[i]);
	}
}
END_TEST

/*
 * A walk in another thread holds a read snapshot: a grow waits for it and
 * gives up (-EBUSY) when it lasts; while a grow waits, the walk's callback
 * still reads the store (a thread inside a store call passes the gate, it
 * must not wait for a grow that waits for it); once the walk ends, the
 * grow is done.
 */
struct walker {
	struct sk_store *st;
	uint64_t id;
	atomic_int phase; /* 1: inside the walk; 2: a grow is called; 3: leave */
	unsigned nested_reads, nested_errors;
};

/* now_ns - CLOCK_MONOTONIC. */
static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * S + ts.tv_nsec;
}

static int
walker_cb(const struct sk_store_event *ev, void *arg)
{
	struct walker *w = arg;
	struct sk_store_line l[SK_STORE_MAX_LINES];
	unsigned n;

	(void)ev;
	atomic_store(&w->phase, 1);
	/*
	 * Once the grow is called (it closes the gate at once, then waits up
	 * to 30 s for this walk), read on for 50 ms and at least 1,000 reads:
	 * each must go through. Bounded: 10M rounds at most.
	 */
	int64_t since = 0;
	for (unsigned i = 0; i < 10000000 && atomic_load(&w->phase) != 3; i++) {
		if (atomic_load(&w->phase) == 2) {
			since = since != 0 ? since : now_ns();
			if (sk_store_order_get(w->st, w->id, l, SK_STORE_MAX_LINES, &n) != 0)
				w->nested_errors++;
			if (++w->nested_reads >= 1000 && now_ns() - since > 50000000)
				break; /* read through the closed gate: leave the walk */
		}
		sched_yield();
	}
	return 1; /* one event is enough */
}

static void *
walker_main(void *arg)
{
	struct walker *w = arg;

	sk_store_events_foreach(w->st, 1, walker_cb, w);
	return NULL;
}

struct grower {
	struct walker *w;
	struct sk_store *st;
	uint64_t size;
	int rc;
};

static void *
grower_main(void *arg)
{
	struct grower *g = arg;

	atomic_store(&g->w->phase, 2);
	g->rc = sk_store_map_grow(g->st, g->size, 30 * S, NULL);
	return NULL;
}

START_TEST(grow_waits_for_open_reads)
{
	struct sk_item *it = add_item(1, 10, 1);
	static struct walker w;
	static struct grower g;
	pthread_t tw, tg;
	uint64_t before = map_size();

	w = (struct walker){.st = sk_control_store(F.ctl), .id = buy(0, 1, it)};
	ck_assert_int_eq(drain_now(NULL), 1);
	ck_assert_int_eq(pthread_create(&tw, NULL, walker_main, &w), 0);
	for (unsigned i = 0; i < 10000000 && atomic_load(&w.phase) != 1; i++)
		sched_yield();
	/* The snapshot stays open: a grow that waits 10 ms gives up. */
	int first = sk_store_map_grow(w.st, 2 * before, 10000000, NULL);
	g = (struct grower){.w = &w, .st = w.st, .size = 2 * before};
	bool started = first == -EBUSY && pthread_create(&tg, NULL, grower_main, &g) == 0;
	if (!started)
		atomic_store(&w.phase, 3);
	ck_assert_int_eq(pthread_join(tw, NULL), 0);
	ck_assert_int_eq(first, -EBUSY);
	ck_assert(started);
	ck_assert_int_eq(pthread_join(tg, NULL), 0);
	ck_assert_int_eq(g.rc, 0);
	ck_assert_uint_ge(w.nested_reads, 1000);
	ck_assert_uint_eq(w.nested_errors, 0);
	ck_assert_uint_eq(map_size(), 2 * before);
	assert_store_ok();
}
END_TEST

/* A cap above the start: the map grows up to it, then full is full. */
START_TEST(cap_stops_growth)
{
	static uint64_t ids[SALE_ORDERS];
	struct sk_item *it = add_item(1, SALE_ORDERS, 1);
	unsigned confirmed = 0, failed = 0;

	sk_control_close(F.ctl);
	F.conf.map_grow.max_size = 2 * SMALL_MAP;
	ctl_open();
	sale(it, ids, SALE_ORDERS);
	count_confirmed_failed(ids, SALE_ORDERS, &confirmed, &failed);
	ck_assert_uint_gt(confirmed, 0);
	ck_assert_uint_gt(failed, 0); /* the old behaviour: failed, units back */
	ck_assert_uint_eq(map_size(), 2 * SMALL_MAP);
	ck_assert_uint_eq(stats().map_grows, 1);
	ck_assert_uint_eq(stats().map_capped, 1);
	ck_assert_int_eq(sk_control_map_check(F.ctl), -ENOSPC);
	ck_assert_uint_eq(sk_stock_remaining(it), SALE_ORDERS - confirmed);
	assert_books(it);
	assert_store_ok();
}
END_TEST

/* The policy (sk_store_map_target()) as a table. */
START_TEST(map_target_table)
{
	const uint64_t M = 1u << 20, G = 1u << 30;
	static const struct {
		uint32_t pct;
		uint64_t step, max;
		uint64_t map, used, disk;
		uint64_t want;
	} t[] = {
		{0, 0, 0, 100, 79, 1000, 0},	 /* below the default 80 % */
		{0, 0, 0, 100, 80, 1000, 200},	 /* at it: doubled */
		{90, 0, 0, 100, 85, 1000, 0},	 /* below 90 % */
		{50, 0, 0, 100, 50, 1000, 200},	 /* at 50 % */
		{0, 30, 0, 100, 90, 1000, 130},	 /* a step */
		{0, 0, 150, 100, 90, 1000, 150}, /* capped by the max */
		{0, 0, 100, 100, 90, 1000, 0},	 /* the max reached */
		{0, 0, 0, 100, 90, 60, 150},	 /* capped by the disk: used + free */
		{0, 0, 0, 100, 90, 5, 0},	 /* no room on the disk */
		{0, 0, 0, 0, 0, 1000, 0},	 /* no map */
		{0, 0, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0}, /* no overflow */
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sk_store_map_policy p = {
			.grow_at_pct = t[i].pct, .step = t[i].step * M, .max_size = t[i].max * M};
		struct sk_store_map_info mi = {.map_size = t[i].map * M,
					       .used_bytes = t[i].used * M,
					       .disk_free = t[i].disk * M,
					       .page_size = 4096};
		if (t[i].map == UINT64_MAX)
			mi = (struct sk_store_map_info){.map_size = UINT64_MAX - 4095,
							.used_bytes = UINT64_MAX - 4095,
							.disk_free = UINT64_MAX,
							.page_size = 4096};
		ck_assert_msg(sk_store_map_target(&p, &mi) == t[i].want * M, "row %zu: %" PRIu64, i,
			      sk_store_map_target(&p, &mi));
	}
	/* Rounded down to whole pages; NULL policy = the defaults. */
	struct sk_store_map_info mi = {
		.map_size = 10 * M, .used_bytes = 9 * M, .disk_free = G + 100, .page_size = 4096};
	ck_assert_uint_eq(sk_store_map_target(NULL, &mi), 20 * M);
	mi.disk_free = 5 * M + 100;
	ck_assert_uint_eq(sk_store_map_target(NULL, &mi), 14 * M);
}
END_TEST

void
test_control_add_mapgrow(Suite *s)
{
	TCase *tc = tcase_create("map_grow");

	tcase_add_checked_fixture(tc, fx_setup_grow, fx_teardown);
	tcase_add_test(tc, sale_grows_small_map);
	tcase_add_test(tc, reader_across_grows);
	tcase_add_test(tc, other_process_adopts_grown_map);
	tcase_add_test(tc, grow_waits_for_open_reads);
	tcase_add_test(tc, cap_stops_growth);
	tcase_add_test(tc, map_target_table);
	suite_add_tcase(s, tc);
}
