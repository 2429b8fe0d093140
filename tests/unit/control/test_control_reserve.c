/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reservation sets through the control plane (sk_reserve_ctl.h) and the
 * admin API (POST/GET /v1/activities/{id}/reservations, "reserved" in an
 * activity): added in memory and in the store, duplicates counted once, a
 * bad line refused whole naming it, full sets refused 507 with nothing
 * added, the sets rebuilt from the store after a restart of either
 * process, emptied by an archive; the guard's one text/plain route.
 */
#include "sk_reserve.h"
#include "sk_reserve_ctl.h"
#include "sk_store_reserve.h"
#include "test_control.h"

#define ITEM 21

/* A reservation block in plain memory, the dataplane's stand-in. */
static void *zmem;

static struct sk_reserve_zone *
zone_new(size_t heap)
{
	size_t size = sk_reserve_size(heap);

	free(zmem);
	zmem = aligned_alloc(SK_CACHE_LINE, size);
	ck_assert_ptr_nonnull(zmem);
	struct sk_reserve_zone *z = sk_reserve_init(zmem, size, NLCORES);
	ck_assert_ptr_nonnull(z);
	return z;
}

static void
setup(void)
{
	fx_setup();
	zmem = NULL;
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, zone_new(1 << 20)), 0);
	struct sk_store_activity a = activity(ITEM, 10);
	a.reserved_only = true;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
}

static void
teardown(void)
{
	fx_teardown();
	free(zmem);
	zmem = NULL;
}

static uint64_t
jget(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	ck_assert_msg(json_is_integer(v), "no integer %s", key);
	return (uint64_t)json_integer_value(v);
}

static uint64_t
stored(uint32_t item)
{
	uint64_t n;

	ck_assert_int_eq(sk_store_reserve_count(sk_control_store(F.ctl), item, &n), 0);
	return n;
}

START_TEST(post_get_show)
{
	struct sk_reserve_zone *z = sk_control_reserve(F.ctl);
	json_t *j;

	j = handle_body("POST", "/v1/activities/21/reservations", "7\n8\r\n9\n\n7\n", 200);
	ck_assert_uint_eq(jget(j, "item"), ITEM);
	ck_assert_uint_eq(jget(j, "added"), 3);
	ck_assert_uint_eq(jget(j, "reserved"), 3);
	json_decref(j);
	j = handle_body("POST", "/v1/activities/21/reservations", "9\n18446744073709551615", 200);
	ck_assert_uint_eq(jget(j, "added"), 1);
	ck_assert_uint_eq(jget(j, "reserved"), 4);
	json_decref(j);
	ck_assert(sk_reserve_has(z, ITEM, 8));
	ck_assert(sk_reserve_has(z, ITEM, UINT64_MAX));
	ck_assert(!sk_reserve_has(z, ITEM, 10));
	ck_assert_uint_eq(stored(ITEM), 4);

	j = handle_body("GET", "/v1/activities/21/reservations", NULL, 200);
	ck_assert_uint_eq(jget(j, "reserved"), 4);
	json_decref(j);
	j = handle_body("GET", "/v1/activities/21", NULL, 200);
	ck_assert_uint_eq(jget(j, "reserved"), 4);
	json_decref(j);

	/* A bad line: named, nothing added (the good lines before it neither). */
	static const struct {
		const char *body;
		const char *line;
	} bad[] = {
		{"11\n12\nx\n", "line 3:"},	  {"0\n", "line 1:"},
		{"11\n-5\n", "line 2:"},	  {"11\n 12\n", "line 2:"},
		{"13\n\n14 \n", "line 3:"},	  {"18446744073709551616\n", "line 1:"},
		{"1\n2\n3\n4\n5\n+6", "line 6:"},
	};
	for (size_t i = 0; i < SK_ARRAY_SIZE(bad); i++)
		error_has(handle_body("POST", "/v1/activities/21/reservations", bad[i].body, 400),
			  bad[i].line);
	ck_assert(!sk_reserve_has(z, ITEM, 11));
	ck_assert_uint_eq(stored(ITEM), 4);
	ck_assert_uint_eq(sk_reserve_count(z, ITEM), 4);

	error_has(handle_body("POST", "/v1/activities/99/reservations", "5\n", 404), "unknown");
	error_has(handle_body("GET", "/v1/activities/99/reservations", NULL, 404), "unknown");
	error_has(handle_body("PUT", "/v1/activities/21/reservations", "5\n", 405), "not allowed");
}
END_TEST

/* Full: 507 naming the setting, nothing added in memory or in the store. */
START_TEST(full_refused)
{
	char body[8 * 1024];
	size_t at = 0;
	json_t *j;

	ck_assert_int_eq(sk_control_reserve_set(F.ctl, zone_new(SK_RESERVE_SLOTS_MIN * 8)), 0);
	j = handle_body("POST", "/v1/activities/21/reservations", "1\n2\n", 200);
	json_decref(j);
	for (unsigned u = 100; u < 200; u++)
		at += (size_t)snprintf(body + at, sizeof(body) - at, "%u\n", u);
	error_has(handle_body("POST", "/v1/activities/21/reservations", body, 507),
		  "seckill.reserve_mb");
	ck_assert_uint_eq(stored(ITEM), 2);
	ck_assert_uint_eq(sk_reserve_count(sk_control_reserve(F.ctl), ITEM), 2);
	ck_assert(!sk_reserve_has(sk_control_reserve(F.ctl), ITEM, 100));
}
END_TEST

/* Restarts: a new empty block (dataplane) is filled from the store; a
 * block with an id the store lacks (control plane died between the two
 * writes) is rebuilt as the store says. */
START_TEST(sync_after_restart)
{
	struct sk_reserve_zone *z;
	const uint64_t extra = 4242;
	json_t *j;

	j = handle_body("POST", "/v1/activities/21/reservations", "1\n2\n3\n", 200);
	json_decref(j);

	/* The dataplane restarted: an empty block, then the control plane's start. */
	ctl_restart();
	z = zone_new(1 << 20);
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, z), 0);
	ck_assert_uint_eq(sk_reserve_count(z, ITEM), 0);
	ck_assert_int_eq(sk_control_reserve_sync(F.ctl, 0), 0);
	ck_assert_uint_eq(sk_reserve_count(z, ITEM), 3);
	ck_assert(sk_reserve_has(z, ITEM, 2));
	j = handle_body("GET", "/v1/activities/21", NULL, 200);
	ck_assert_uint_eq(jget(j, "reserved"), 3);
	json_decref(j);

	/* Only the control plane restarted: the block kept, one id too many. */
	ck_assert_int_eq(sk_reserve_add(z, ITEM, &extra, 1, NULL), 0);
	ck_assert_int_eq(sk_reserve_add(z, ITEM + 1, &extra, 1, NULL), 0); /* not in the store */
	for (uint32_t l = 0; l < NLCORES; l++)
		sk_reserve_ack(z, l, atomic_load(&z->gen));
	ctl_restart();
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, z), 0);
	ck_assert_int_eq(sk_control_reserve_sync(F.ctl, 0), 0);
	ck_assert_uint_eq(sk_reserve_count(z, ITEM), 3);
	ck_assert(!sk_reserve_has(z, ITEM, extra));
	ck_assert(sk_reserve_has(z, ITEM, 3));
	ck_assert_uint_eq(sk_reserve_count(z, ITEM + 1), 0);
}
END_TEST

/* An lcore that never moves on: a growth waits, then 503 with nothing added. */
START_TEST(lcore_stuck)
{
	char body[4096];
	size_t at = 0;
	json_t *j;

	/* Room for one table of 64 ids and one of 200 (at a third full), not more. */
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, zone_new((64 + 600 + 8) * 8)), 0);
	j = handle_body("POST", "/v1/activities/21/reservations", "1\n", 200);
	json_decref(j);
	for (unsigned u = 100; u < 300; u++)
		at += (size_t)snprintf(body + at, sizeof(body) - at, "%u\n", u);
	j = handle_body("POST", "/v1/activities/21/reservations", body, 200); /* grows */
	json_decref(j);
	at = 0;
	for (unsigned u = 300; u < 500; u++)
		at += (size_t)snprintf(body + at, sizeof(body) - at, "%u\n", u);
	/* The next growth needs the first table's space, retired: the lcores
	 * (nobody acknowledges here) still hold it. */
	error_has(handle_body("POST", "/v1/activities/21/reservations", body, 503), "retry");
	ck_assert_uint_eq(stored(ITEM), 201);
	for (uint32_t l = 0; l < NLCORES; l++)
		sk_reserve_ack(sk_control_reserve(F.ctl), l,
			       atomic_load(&sk_control_reserve(F.ctl)->gen));
	error_has(handle_body("POST", "/v1/activities/21/reservations", body, 507), "reserve_mb");
}
END_TEST

START_TEST(drop_on_archive)
{
	json_t *j = handle_body("POST", "/v1/activities/21/reservations", "1\n2\n", 200);

	json_decref(j);
	ck_assert_int_eq(sk_control_reserve_drop(F.ctl, ITEM), 0);
	ck_assert_uint_eq(stored(ITEM), 0);
	ck_assert_uint_eq(sk_reserve_count(sk_control_reserve(F.ctl), ITEM), 0);
	ck_assert(!sk_reserve_has(sk_control_reserve(F.ctl), ITEM, 1));
	ck_assert_int_eq(sk_control_reserve_drop(F.ctl, ITEM), SK_STORE_UNCHANGED);
}
END_TEST

/* No block (seckill.reserve_mb = 0): additions refused, counts from the store. */
START_TEST(no_block)
{
	ctl_restart();
	error_has(handle_body("POST", "/v1/activities/21/reservations", "1\n", 503), "reserve_mb");
	json_t *j = handle_body("GET", "/v1/activities/21/reservations", NULL, 200);
	ck_assert_uint_eq(jget(j, "reserved"), 0);
	json_decref(j);
}
END_TEST

/* seckillctl activity reserve: many batches, repeats, a bad file, show. */
START_TEST(seckillctl_reserve)
{
	enum { N = 40000 };
	static char out[8192];
	char sock[PATH_MAX + 32], file[PATH_MAX + 32], bad[PATH_MAX + 32], err[SK_CONTROL_ERR_MAX];
	struct sk_admin *adm;
	FILE *f;

	if (seckillctl_path == NULL)
		return;
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, zone_new(8u << 20)), 0);
	snprintf(sock, sizeof(sock), "%s/admin.sock", F.dir);
	snprintf(file, sizeof(file), "%s/ids.txt", F.dir);
	snprintf(bad, sizeof(bad), "%s/bad.txt", F.dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned u = 1; u <= N; u++)
		fprintf(f, "%u%s\n", 1000000 + u, u % 1000 == 0 ? "\r" : "");
	fprintf(f, "\n1000001\n"); /* an empty line, a repeat */
	fclose(f);
	ck_assert_int_eq(sk_test_write_file(bad, "5\n6\nseven\n", 0600), 0);
	struct sk_admin_conf ac = {.socket_path = sock};
	ck_assert_int_eq(sk_admin_start(&adm, F.ctl, &ac, err, sizeof(err)), 0);

	const char *const ok[] = {"--socket", sock, "activity", "reserve", "21", file, NULL};
	ck_assert_int_eq(sk_test_exec(F.dir, seckillctl_path, ok, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "40000 added, 40000 reserved") != NULL, "%s", out);
	ck_assert_int_eq(sk_test_exec(F.dir, seckillctl_path, ok, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "0 added, 40000 reserved") != NULL, "%s", out);
	ck_assert_uint_eq(stored(ITEM), N);
	ck_assert(sk_reserve_has(sk_control_reserve(F.ctl), ITEM, 1000000 + N));

	const char *const no[] = {"--socket", sock, "activity", "reserve", "21", bad, NULL};
	ck_assert_int_eq(sk_test_exec(F.dir, seckillctl_path, no, out, sizeof(out)), 2);
	ck_assert(!sk_reserve_has(sk_control_reserve(F.ctl), ITEM, 5));
	const char *const unknown[] = {"--socket", sock, "activity", "reserve", "99", file, NULL};
	ck_assert_int_eq(sk_test_exec(F.dir, seckillctl_path, unknown, out, sizeof(out)), 4);
	const char *const show[] = {"--socket", sock, "activity", "show", "21", NULL};
	ck_assert_int_eq(sk_test_exec(F.dir, seckillctl_path, show, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "reserved         40000 users") != NULL, "%s", out);
	sk_admin_stop(adm);
}
END_TEST

/* The one text/plain route: without Origin only, POST only, that path only. */
START_TEST(guard_text_route)
{
	static const struct {
		const char *method, *url, *origin, *ctype;
		unsigned want;
	} t[] = {
		{"POST", "/v1/activities/7/reservations", NULL, "text/plain", 0},
		{"POST", "/v1/activities/7/reservations", NULL, "text/plain; charset=utf-8", 0},
		{"POST", "/v1/activities/7/reservations", NULL, "application/json", 0},
		{"POST", "/v1/activities/7/reservations", "http://127.0.0.1:8081", "text/plain",
		 415},
		{"POST", "/v1/activities/7/reservations", NULL, "text/plainx", 415},
		{"POST", "/v1/activities/7/reservations", NULL, NULL, 415},
		{"PUT", "/v1/activities/7/reservations", NULL, "text/plain", 415},
		{"POST", "/v1/activities//reservations", NULL, "text/plain", 415},
		{"POST", "/v1/activities/7/reservations/", NULL, "text/plain", 415},
		{"POST", "/v1/activities/7/close", NULL, "text/plain", 415},
		{"POST", "/v1/activities", NULL, "text/plain", 415},
	};

	for (size_t i = 0; i < SK_ARRAY_SIZE(t); i++) {
		const char *why = NULL;
		unsigned got = sk_admin_guard(t[i].method, t[i].url, "127.0.0.1:8081", t[i].origin,
					      t[i].ctype, &why);

		ck_assert_msg(got == t[i].want, "row %zu: %u, want %u", i, got, t[i].want);
	}
}
END_TEST

/* A store of 256 KiB that cannot take 60,000 ids the block can: the
 * add fails, and the block goes back to what LMDB holds - no user may buy
 * who would not be reserved after a restart. */
static void
setup_small_map(void)
{
	fx_setup_with(0, 256 * 1024);
	zmem = NULL;
	ck_assert_int_eq(sk_control_reserve_set(F.ctl, zone_new(4 << 20)), 0);
	struct sk_store_activity a = activity(ITEM, 10);
	a.reserved_only = true;
	ck_assert_int_eq(sk_control_activity_add(F.ctl, &a, T0), SK_ACTIVITY_DONE);
}

START_TEST(store_refusal_undone)
{
	enum { N = 60000 };
	uint64_t *ids = malloc(N * sizeof(*ids)), added = 0, total = 0;
	const uint64_t few[] = {7, 8};
	char err[128];

	ck_assert_ptr_nonnull(ids);
	ck_assert_int_eq(
		sk_control_reserve_add(F.ctl, ITEM, few, 2, &added, &total, err, sizeof(err)), 0);
	for (size_t i = 0; i < N; i++)
		ids[i] = 1000 + i;
	ck_assert_int_ne(
		sk_control_reserve_add(F.ctl, ITEM, ids, N, &added, &total, err, sizeof(err)), 0);
	ck_assert_uint_eq(stored(ITEM), 2);
	ck_assert_uint_eq(sk_reserve_count(zmem, ITEM), 2);
	ck_assert(sk_reserve_has(zmem, ITEM, 7));
	ck_assert(!sk_reserve_has(zmem, ITEM, 1000));
	ck_assert(!sk_reserve_has(zmem, ITEM, 1000 + N - 1));
	free(ids);
}
END_TEST

void
test_control_add_reserve(Suite *s)
{
	TCase *tc = tcase_create("reservations");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, post_get_show);
	tcase_add_test(tc, full_refused);
	tcase_add_test(tc, sync_after_restart);
	tcase_add_test(tc, lcore_stuck);
	tcase_add_test(tc, drop_on_archive);
	tcase_add_test(tc, no_block);
	tcase_add_test(tc, guard_text_route);
	tcase_add_test(tc, seckillctl_reserve);
	suite_add_tcase(s, tc);
	tc = tcase_create("reservations_small_map");
	tcase_add_checked_fixture(tc, setup_small_map, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, store_refusal_undone);
	suite_add_tcase(s, tc);
}
