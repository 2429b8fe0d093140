/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reserve.c - reservation sets: layout and attach, insert, bulk load,
 * lookup hit and miss, duplicates, memory per user, a full heap and a full
 * directory, space reused only once every lcore moved on, and a reader
 * thread looking up while the writer grows the table under it; the
 * lookup's prefetch harmless on any input.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_reserve.h"
#include "sk_test.h"

static struct sk_reserve_zone *
make_zone(size_t heap, uint32_t nlcores, void **mem)
{
	size_t size = sk_reserve_size(heap);

	ck_assert_uint_gt(size, 0);
	*mem = aligned_alloc(SK_CACHE_LINE, size);
	ck_assert_ptr_nonnull(*mem);
	struct sk_reserve_zone *z = sk_reserve_init(*mem, size, nlcores);
	ck_assert_ptr_nonnull(z);
	return z;
}

/* user_id - the @i-th id of a fixed, scattered sequence (never 0). */
static uint64_t
user_id(uint64_t i)
{
	return sk_reserve_mix(i + 1) | 1;
}

/* ack_all - every lcore runs on the published generation. */
static void
ack_all(struct sk_reserve_zone *z)
{
	uint64_t g = atomic_load(&z->gen);

	for (uint32_t i = 0; i < z->nlcores; i++)
		sk_reserve_ack(z, i, g);
}

START_TEST(test_init_and_attach)
{
	void *mem;
	struct sk_reserve_zone *z = make_zone(1 << 16, 2, &mem);
	char err[128];

	ck_assert_ptr_eq(sk_reserve_attach(mem, z->size, err, sizeof(err)), z);
	ck_assert_ptr_null(sk_reserve_attach(mem, 64, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "too small"));
	z->version++;
	ck_assert_ptr_null(sk_reserve_attach(mem, z->size, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "version"));
	z->version--;
	ck_assert_ptr_null(sk_reserve_init(mem, z->size, 0));
	ck_assert_ptr_null(sk_reserve_init(mem, z->size, SK_RESERVE_LCORES_MAX + 1));
	ck_assert_ptr_null(sk_reserve_init(mem, 64, 1));
	ck_assert_uint_eq(sk_reserve_free_bytes(z), 1 << 16);
	free(mem);
}
END_TEST

START_TEST(test_insert_lookup_duplicates)
{
	void *mem;
	struct sk_reserve_zone *z = make_zone(1 << 20, 1, &mem);
	const uint64_t a[] = {7, 9, 11, 7, 9}; /* repeats within one batch */
	const uint64_t b[] = {9, 13};	       /* one known, one new */
	const uint64_t zero[] = {5, 0};
	uint64_t added;

	ck_assert(!sk_reserve_has(z, 1, 7)); /* no set at all */
	ck_assert_int_eq(sk_reserve_add(z, 1, a, SK_ARRAY_SIZE(a), &added), 0);
	ck_assert_uint_eq(added, 3);
	ck_assert_int_eq(sk_reserve_add(z, 1, b, SK_ARRAY_SIZE(b), &added), 0);
	ck_assert_uint_eq(added, 1);
	ck_assert_int_eq(sk_reserve_add(z, 1, a, SK_ARRAY_SIZE(a), &added), 0);
	ck_assert_uint_eq(added, 0);
	ck_assert_uint_eq(sk_reserve_count(z, 1), 4);
	for (size_t i = 0; i < SK_ARRAY_SIZE(a); i++)
		ck_assert(sk_reserve_has(z, 1, a[i]));
	ck_assert(sk_reserve_has(z, 1, 13));
	ck_assert(!sk_reserve_has(z, 1, 8));
	ck_assert(!sk_reserve_has(z, 1, 0));
	ck_assert(!sk_reserve_has(z, 2, 7)); /* another item */
	ck_assert_uint_eq(sk_reserve_count(z, 2), 0);
	/* A user id 0 refuses the batch whole. */
	ck_assert_int_eq(sk_reserve_add(z, 1, zero, 2, &added), -EINVAL);
	ck_assert(!sk_reserve_has(z, 1, 5));
	ck_assert_uint_eq(sk_reserve_count(z, 1), 4);
	free(mem);
}
END_TEST

/* Many batches: the table grows; every id stays found, none invented. */
START_TEST(test_growth_and_memory)
{
	enum { N = 200000, BATCH = 1000 };
	void *mem;
	struct sk_reserve_zone *z = make_zone(64u << 20, 1, &mem);
	uint64_t *ids = malloc(N * sizeof(*ids)), added, total = 0;

	ck_assert_ptr_nonnull(ids);
	for (uint64_t i = 0; i < N; i++)
		ids[i] = user_id(i);
	for (size_t off = 0; off < N; off += BATCH) {
		ck_assert_int_eq(sk_reserve_add(z, 42, ids + off, BATCH, &added), 0);
		total += added;
		ack_all(z); /* the lcore moved on: old tables may be reused */
	}
	ck_assert_uint_eq(total, N);
	ck_assert_uint_eq(sk_reserve_count(z, 42), N);
	for (uint64_t i = 0; i < N; i++)
		ck_assert(sk_reserve_has(z, 42, ids[i]));
	for (uint64_t i = N; i < 2 * N; i++)
		ck_assert(!sk_reserve_has(z, 42, user_id(i)));
	/* Grown at a third full, filled up to a half: 16..24 bytes per user. */
	uint64_t bytes = sk_reserve_table_bytes(z, 42);
	ck_assert_uint_le(bytes, 24 * (uint64_t)N + 64);
	ck_assert_uint_ge(bytes, 16 * (uint64_t)N);
	/* Loaded whole: 16 bytes per user (a cache line of rounding). */
	ck_assert_int_eq(sk_reserve_load(z, 42, ids, N), 0);
	ck_assert_uint_le(sk_reserve_table_bytes(z, 42), 16 * (uint64_t)N + 64);
	ck_assert_uint_eq(sk_reserve_count(z, 42), N);
	for (uint64_t i = 0; i < N; i += 7)
		ck_assert(sk_reserve_has(z, 42, ids[i]));
	ack_all(z);
	sk_reserve_reclaim(z);
	/* Everything but the loaded table is back in the heap, in one piece. */
	ck_assert_uint_eq(sk_reserve_free_bytes(z) + sk_reserve_table_bytes(z, 42), 64u << 20);
	ck_assert_uint_le(z->nfree, 2);
	free(ids);
	free(mem);
}
END_TEST

START_TEST(test_load_replaces_and_empties)
{
	void *mem;
	struct sk_reserve_zone *z = make_zone(1 << 20, 1, &mem);
	const uint64_t a[] = {1, 2, 3}, b[] = {4, 4, 5};

	ck_assert_int_eq(sk_reserve_load(z, 9, a, 3), 0);
	ck_assert_int_eq(sk_reserve_load(z, 9, b, 3), 0);
	ck_assert_uint_eq(sk_reserve_count(z, 9), 2);
	ck_assert(!sk_reserve_has(z, 9, 1));
	ck_assert(sk_reserve_has(z, 9, 4) && sk_reserve_has(z, 9, 5));
	ck_assert_int_eq(sk_reserve_load(z, 9, NULL, 0), 0);
	ck_assert_uint_eq(sk_reserve_count(z, 9), 0);
	ck_assert(!sk_reserve_has(z, 9, 4));
	ck_assert_int_eq(sk_reserve_load(z, 10, NULL, 0), 0); /* never had a set */
	free(mem);
}
END_TEST

/*
 * sk_reserve_prefetch() on any input - an unknown item, user 0, an item
 * whose set was emptied, users in and out of a set - changes no byte of
 * the block and no answer, and the first slot it names is in the table.
 */
START_TEST(test_prefetch_harmless)
{
	void *mem;
	struct sk_reserve_zone *z = make_zone(1 << 20, 1, &mem);
	uint64_t ids[500];

	for (uint64_t i = 0; i < 500; i++)
		ids[i] = user_id(i);
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, 500), 0);
	ck_assert_int_eq(sk_reserve_load(z, 4, ids, 2), 0);
	ck_assert_int_eq(sk_reserve_load(z, 4, NULL, 0), 0); /* an empty set */
	ack_all(z);

	void *copy = malloc(z->size);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, z, z->size);
	const uint32_t items[] = {0, 3, 4, 5, UINT32_MAX};
	const uint64_t users[] = {0, 1, ids[0], ids[499], user_id(500), UINT64_MAX};
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		for (size_t j = 0; j < sizeof(users) / sizeof(users[0]); j++) {
			sk_reserve_prefetch(z, items[i], users[j]);
			ck_assert_int_eq(sk_reserve_has(z, items[i], users[j]),
					 items[i] == 3 && (j == 2 || j == 3));
		}
	for (uint64_t i = 0; i < 2000; i++) {
		uint64_t slots = 0, at = 0;
		const struct sk_reserve_dirent *d = sk_reserve_dir_find(z, 3);

		ck_assert_ptr_nonnull(d);
		ck_assert_ptr_nonnull(sk_reserve_first(z, d, user_id(i), &slots, &at));
		ck_assert_uint_lt(at, slots);
		sk_reserve_prefetch(z, 3, user_id(i));
		ck_assert_int_eq(sk_reserve_has(z, 3, user_id(i)), i < 500);
	}
	ck_assert_ptr_null(
		sk_reserve_first(z, sk_reserve_dir_find(z, 4), 1, &(uint64_t){0}, &(uint64_t){0}));
	ck_assert_int_eq(memcmp(copy, z, z->size), 0);
	free(copy);
	free(mem);
}
END_TEST

/* The old table is reused only once every lcore acknowledged. */
START_TEST(test_reuse_waits_for_lcores)
{
	enum { N = 3000 };
	void *mem;
	/* Room for two tables of N at half full, not for three. */
	struct sk_reserve_zone *z = make_zone(N * 3 * 8 + N * 8, 2, &mem);
	uint64_t ids[N];

	for (uint64_t i = 0; i < N; i++)
		ids[i] = user_id(i);
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, N), 0);
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, N), 0); /* beside the first */
	/* A third table fits only in the first's space, still retired. */
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, N), -EAGAIN);
	ck_assert(!sk_reserve_quiescent(z));
	sk_reserve_ack(z, 0, atomic_load(&z->gen));
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, N), -EAGAIN); /* lcore 1 has not */
	sk_reserve_ack(z, 1, atomic_load(&z->gen));
	ck_assert(sk_reserve_quiescent(z));
	ck_assert_int_eq(sk_reserve_load(z, 3, ids, N), 0);
	ck_assert(sk_reserve_has(z, 3, ids[N - 1]));
	free(mem);
}
END_TEST

/* A writer killed mid-change: a table allocated, never published, and a
 * count not updated. The next writer's recovery leaks nothing, reuses the
 * space only once the lcores moved on, and recounts the sets. */
START_TEST(test_recover)
{
	enum { N = 1000 };
	void *mem;
	struct sk_reserve_zone *z = make_zone(1 << 20, 2, &mem);
	uint64_t ids[N];

	for (uint64_t i = 0; i < N; i++)
		ids[i] = user_id(i);
	ck_assert_int_eq(sk_reserve_load(z, 4, ids, N), 0);
	ck_assert_int_eq(sk_reserve_load(z, 5, ids, 10), 0);
	ck_assert_int_eq(sk_reserve_load(z, 4, ids, N / 2), 0); /* the old table retired */
	/* The dead writer's traces: free space taken, a count wrong. */
	z->nfree = 0;
	z->free[0].len = 0;
	struct sk_reserve_dirent *d = (struct sk_reserve_dirent *)sk_reserve_dir_find(z, 5);
	d->users = 3;
	uint64_t g = atomic_load(&z->gen);
	sk_reserve_recover(z);
	ck_assert_uint_eq(atomic_load(&z->gen), g + 1);
	ck_assert_uint_eq(sk_reserve_count(z, 5), 10);
	ck_assert_uint_eq(sk_reserve_count(z, 4), N / 2);
	ck_assert_uint_eq(z->items, 2);
	ck_assert_uint_eq(sk_reserve_free_bytes(z), 0); /* all retired: lcores may read it */
	ck_assert_uint_eq(sk_reserve_reclaim(z) + sk_reserve_table_bytes(z, 4) +
				  sk_reserve_table_bytes(z, 5),
			  1 << 20);
	sk_reserve_ack(z, 0, g + 1);
	sk_reserve_ack(z, 1, g + 1);
	ck_assert_uint_eq(sk_reserve_reclaim(z), 0);
	ck_assert_uint_eq(sk_reserve_free_bytes(z) + sk_reserve_table_bytes(z, 4) +
				  sk_reserve_table_bytes(z, 5),
			  1 << 20);
	for (uint64_t i = 0; i < N / 2; i++)
		ck_assert(sk_reserve_has(z, 4, ids[i]));
	ck_assert(sk_reserve_has(z, 5, ids[9]));
	ck_assert_int_eq(sk_reserve_load(z, 6, ids, N), 0); /* the heap works again */
	ck_assert(sk_reserve_has(z, 6, ids[N - 1]));
	free(mem);
}
END_TEST

START_TEST(test_full)
{
	void *mem;
	struct sk_reserve_zone *z = make_zone(SK_RESERVE_SLOTS_MIN * 8 * 4, 1, &mem);
	uint64_t ids[200], added = 99;

	for (uint64_t i = 0; i < 200; i++)
		ids[i] = i + 1;
	/* 200 ids need 600 slots: more than the heap's 256. Nothing added. */
	ck_assert_int_eq(sk_reserve_add(z, 1, ids, 200, &added), -ENOSPC);
	ck_assert_uint_eq(added, 0);
	ck_assert_uint_eq(sk_reserve_count(z, 1), 0);
	ck_assert(!sk_reserve_has(z, 1, 1));
	free(mem);

	/* The directory: SK_RESERVE_ITEMS_MAX items, then -ENOSPC. */
	z = make_zone(0, 1, &mem);
	for (uint32_t i = 0; i < SK_RESERVE_ITEMS_MAX; i++)
		ck_assert_int_eq(sk_reserve_load(z, i + 1000, NULL, 0), 0); /* no entry made */
	ck_assert_uint_eq(z->items, 0);
	free(mem);
	z = make_zone(SK_RESERVE_ITEMS_MAX * SK_RESERVE_SLOTS_MIN * 8, 1, &mem);
	for (uint32_t i = 0; i < SK_RESERVE_ITEMS_MAX; i++)
		ck_assert_int_eq(sk_reserve_add(z, i + 1000, ids, 1, NULL), 0);
	ck_assert_int_eq(sk_reserve_add(z, 7, ids, 1, NULL), -ENOSPC);
	for (uint32_t i = 0; i < SK_RESERVE_ITEMS_MAX; i++)
		ck_assert(sk_reserve_has(z, i + 1000, ids[0]));
	free(mem);
}
END_TEST

/* A reader looks up known ids while the writer grows the set batch after
 * batch: it never misses one it was told is in, never sees a stranger. */
struct reader {
	struct sk_reserve_zone *z;
	_Atomic uint64_t known; /* ids 0..known-1 are in the set */
	_Atomic bool stop;
	uint64_t checks, errors;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t mine = 1, x = 1;

	while (!atomic_load(&r->stop)) {
		uint64_t g = sk_reserve_changed(r->z, mine);
		if (g != 0) {
			mine = g;
			sk_reserve_ack(r->z, 0, g);
		}
		uint64_t k = atomic_load_explicit(&r->known, memory_order_acquire);
		for (int i = 0; i < 64 && k != 0; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			r->errors += !sk_reserve_has(r->z, 5, user_id((x >> 20) % k));
			r->errors += sk_reserve_has(r->z, 5, user_id(1000000 + (x >> 20) % 1000));
			r->checks += 2;
		}
	}
	return NULL;
}

START_TEST(test_growth_while_reading)
{
	enum { N = 100000, BATCH = 500 };
	void *mem;
	struct sk_reserve_zone *z = make_zone(16u << 20, 1, &mem);
	struct reader r = {.z = z};
	uint64_t ids[BATCH];
	pthread_t t;
	int rc;

	ck_assert_int_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	for (uint64_t off = 0; off < N; off += BATCH) {
		for (uint64_t i = 0; i < BATCH; i++)
			ids[i] = user_id(off + i);
		/* -EAGAIN: the reader still holds the old table; bounded wait. */
		for (int tries = 0;
		     (rc = sk_reserve_add(z, 5, ids, BATCH, NULL)) == -EAGAIN && tries < 1000000;
		     tries++)
			sched_yield();
		ck_assert_int_eq(rc, 0);
		atomic_store_explicit(&r.known, off + BATCH, memory_order_release);
	}
	for (int tries = 0; atomic_load(&r.checks) < 100000 && tries < 10000000; tries++)
		sched_yield();
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	ck_assert_uint_gt(r.checks, 0);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(sk_reserve_count(z, 5), N);
	free(mem);
}
END_TEST

static Suite *
reserve_suite(void)
{
	Suite *s = suite_create("reserve");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_init_and_attach);
	tcase_add_test(tc, test_insert_lookup_duplicates);
	tcase_add_test(tc, test_growth_and_memory);
	tcase_add_test(tc, test_load_replaces_and_empties);
	tcase_add_test(tc, test_prefetch_harmless);
	tcase_add_test(tc, test_reuse_waits_for_lcores);
	tcase_add_test(tc, test_recover);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_growth_while_reading);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(reserve_suite)
