/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the reservation sets in the order store
 * (storage/sk_store_reserve.h), each in its own store under a temporary
 * directory: add with duplicates, count, read back sorted (many pages of
 * ids), the items walk, drop, a reopen keeps them, bad ids write nothing,
 * a read-only handle reads them.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "sk_store.h"
#include "sk_store_reserve.h"
#include "sk_test.h"
#include "sk_test_store.h"

static uint64_t
count(struct sk_store *st, uint32_t item)
{
	uint64_t c = 99;

	ck_assert_int_eq(sk_store_reserve_count(st, item, &c), 0);
	return c;
}

START_TEST(add_count_read)
{
	struct sk_store *st = sk_test_store_open_test("reserve");
	const uint64_t a[] = {30, 10, 20, 10}, b[] = {20, 40}, bad[] = {50, 0};
	uint64_t added, *u;
	size_t n;

	ck_assert_uint_eq(count(st, 1), 0);
	ck_assert_int_eq(sk_store_reserve_add(st, 1, a, 4, &added), 0);
	ck_assert_uint_eq(added, 3);
	ck_assert_int_eq(sk_store_reserve_add(st, 1, b, 2, &added), 0);
	ck_assert_uint_eq(added, 1);
	ck_assert_int_eq(sk_store_reserve_add(st, 1, bad, 2, &added), -EINVAL);
	ck_assert_int_eq(sk_store_reserve_add(st, 0, b, 2, &added), -EINVAL);
	ck_assert_uint_eq(count(st, 1), 4);
	ck_assert_uint_eq(count(st, 2), 0);
	ck_assert_int_eq(sk_store_reserve_read(st, 1, &u, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(u[i], 10 * (i + 1)); /* ascending */
	free(u);
	ck_assert_int_eq(sk_store_reserve_read(st, 2, &u, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(u);
	sk_store_close(st);
}
END_TEST

struct seen {
	uint32_t item[4];
	uint64_t count[4];
	unsigned n;
};

static int
collect(uint32_t item, uint64_t c, void *arg)
{
	struct seen *s = arg;

	ck_assert_uint_lt(s->n, 4);
	s->item[s->n] = item;
	s->count[s->n++] = c;
	return 0;
}

/* 100000 ids over two items: read back whole after a reopen, read-only too. */
START_TEST(many_reopen_drop)
{
	enum { N = 100000 };
	const char *dir = sk_test_store_dir("reserve-many");
	struct sk_store *st = sk_test_store_open(dir, 0, 0);
	uint64_t *ids = malloc(N * sizeof(*ids)), *u, added;
	size_t n;
	struct seen s = {0};

	ck_assert_ptr_nonnull(ids);
	for (uint64_t i = 0; i < N; i++)
		ids[i] = (i * 7919) % N + 1; /* a permutation of 1..N */
	ck_assert_int_eq(sk_store_reserve_add(st, 7, ids, N, &added), 0);
	ck_assert_uint_eq(added, N);
	ck_assert_int_eq(sk_store_reserve_add(st, 3, ids, 10, &added), 0);
	sk_store_close(st);

	st = sk_test_store_open(dir, SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_reserve_read(st, 7, &u, &n), 0);
	ck_assert_uint_eq(n, N);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(u[i], i + 1);
	free(u);
	ck_assert_int_eq(sk_store_reserve_foreach(st, collect, &s), 0);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.item[0], 3);
	ck_assert_uint_eq(s.count[0], 10);
	ck_assert_uint_eq(s.item[1], 7);
	ck_assert_uint_eq(s.count[1], N);
	ck_assert_int_eq(sk_store_reserve_add(st, 7, ids, 1, NULL), -EACCES);
	sk_store_close(st);

	st = sk_test_store_open(dir, 0, 0);
	ck_assert_int_eq(sk_store_reserve_drop(st, 7), 0);
	ck_assert_int_eq(sk_store_reserve_drop(st, 7), SK_STORE_UNCHANGED);
	ck_assert_uint_eq(count(st, 7), 0);
	ck_assert_uint_eq(count(st, 3), 10);
	sk_test_store_verify(st);
	sk_store_close(st);
	free(ids);
}
END_TEST

static Suite *
reserve_suite(void)
{
	Suite *s = suite_create("store-reserve");
	TCase *tc = tcase_create("sets");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, add_count_read);
	tcase_add_test(tc, many_reopen_drop);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(reserve_suite)
