/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Store tests, durability: a 10,000-order batch in one transaction, kill -9 in the middle of writes
 * keeps whole batches, a full map reported cleanly (tcase "durability" of the suite in
 * test_store.c).
 */
#include "test_store.h"

/* -------------------------------------------------------------- big and bad */

START_TEST(batch_of_10000_in_one_txn)
{
	enum { N = 10000 };
	struct sk_store *st = sk_test_store_open(sk_test_store_dir("big"), 0, 0); /* durable */
	struct sk_order_rec *r = calloc(N, sizeof(*r));
	struct sk_store_info before, after;
	struct sk_store_put_stats s;

	ck_assert_ptr_nonnull(r);
	for (unsigned i = 0; i < N; i++)
		r[i] = rec(((uint64_t)0x5eed << 32) | (i * 7919u % N + 1), 1 + i, 1 + i % 8,
			   (uint16_t)(1 + i % 3));
	ck_assert_int_eq(sk_store_info(st, &before), 0);
	sk_test_store_put(st, r, N, NULL, &s);
	ck_assert_int_eq(sk_store_info(st, &after), 0);
	ck_assert_uint_eq(after.last_txn, before.last_txn + 1);
	ck_assert_uint_eq(s.orders_new, N);
	ck_assert_uint_eq(s.event_last - s.event_first + 1, N);
	ck_assert_uint_eq(after.order_lines, N);
	ck_assert_uint_eq(after.holdings_entries, N);
	ck_assert_uint_eq(after.deadlines, N);
	sk_test_store_verify(st);

	sk_test_store_put(st, r, N, NULL, &s);
	ck_assert_uint_eq(s.orders_dup, N);
	ck_assert_uint_eq(s.orders_new, 0);
	free(r);
	sk_store_close(st);
}
END_TEST

enum { CRASH_BATCH = 2000 };

static uint64_t
crash_id(uint32_t batch, uint32_t i)
{
	return (uint64_t)(batch + 1) << 32 | (i + 1);
}

/* crash_child - write batches for ever, reporting each commit on @fd. */
static void
crash_child(const char *dir, int fd)
{
	struct sk_store *st;
	struct sk_order_rec *r = calloc(CRASH_BATCH, sizeof(*r));

	if (r == NULL || sk_store_open(&st, dir, NULL, NULL, 0) != 0)
		_exit(2);
	for (uint32_t b = 0; b < 10000; b++) {
		for (uint32_t i = 0; i < CRASH_BATCH; i++)
			r[i] = rec(crash_id(b, i), (uint64_t)b * CRASH_BATCH + i + 1, 1 + i % 4, 1);
		if (sk_store_put_orders(st, r, CRASH_BATCH, 15 * MIN, b, NULL, NULL) != 0)
			_exit(3);
		if (write(fd, &b, sizeof(b)) != sizeof(b))
			_exit(4);
	}
	_exit(0);
}

static unsigned
batch_present(struct sk_store *st, uint32_t b)
{
	struct sk_store_line l;
	unsigned n, present = 0;

	for (uint32_t i = 0; i < CRASH_BATCH; i++)
		present += sk_store_order_get(st, crash_id(b, i), &l, 1, &n) == 0;
	return present;
}

START_TEST(kill9_keeps_whole_batches)
{
	unsigned seed = 20240601;

	for (int round = 0; round < 8; round++) {
		char dir[PATH_MAX + 64], name[32];
		int p[2];

		snprintf(name, sizeof(name), "crash-%d", round);
		snprintf(dir, sizeof(dir), "%s", sk_test_store_dir(name));
		ck_assert_int_eq(pipe(p), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(p[0]);
			crash_child(dir, p[1]);
		}
		close(p[1]);
		/* Let 1..3 batches commit, then kill at a random instant, most
		 * likely while the next transaction is being built or synced. */
		uint32_t b, reported = 0;
		while (reported < 1u + (unsigned)round % 3) {
			ck_assert_int_eq(read(p[0], &b, sizeof(b)), sizeof(b));
			reported = b + 1;
		}
		usleep((useconds_t)(rand_r(&seed) % 20000));
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(p[0], &b, sizeof(b)) == sizeof(b))
			reported = b + 1;
		close(p[0]);

		struct sk_store *st = sk_test_store_open(dir, 0, 0);
		unsigned full = 0;
		for (uint32_t k = 0; k <= reported + 1; k++) {
			unsigned n = batch_present(st, k);
			ck_assert_msg(n == 0 || n == CRASH_BATCH, "round %d batch %u: %u orders",
				      round, k, n);
			if (k < reported)
				ck_assert_uint_eq(n, CRASH_BATCH);
			if (k > reported)
				ck_assert_uint_eq(n, 0);
			full += n == CRASH_BATCH;
		}
		struct sk_store_info info;
		ck_assert_int_eq(sk_store_info(st, &info), 0);
		ck_assert_uint_eq(info.order_lines, (uint64_t)full * CRASH_BATCH);
		ck_assert_uint_eq(info.event_next, (uint64_t)full * CRASH_BATCH + 1);
		sk_test_store_verify(st);
		/* The writer lock of the killed process is usable again. */
		struct sk_order_rec one = rec(1, 1, 1, 1);
		sk_test_store_put(st, &one, 1, NULL, NULL);
		sk_store_close(st);
	}
}
END_TEST

START_TEST(map_full_reported_cleanly)
{
	enum { B = 50 };
	const char *dir = sk_test_store_dir("full");
	struct sk_store *st = sk_test_store_open(dir, SK_STORE_NOSYNC, 256 * 1024);
	struct sk_order_rec r[B];
	unsigned ok = 0;
	int rc = 0;

	for (uint32_t b = 0; b < 10000; b++) {
		for (uint32_t i = 0; i < B; i++)
			r[i] = rec((uint64_t)b * B + i + 1, (uint64_t)b * B + i + 1, 1, 1);
		rc = sk_store_put_orders(st, r, B, 15 * MIN, 1, NULL, NULL);
		if (rc != 0)
			break;
		ok++;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_gt(ok, 0);
	struct sk_store_info info;
	ck_assert_int_eq(sk_store_info(st, &info), 0);
	ck_assert_uint_eq(info.order_lines, (uint64_t)ok * B); /* no part of the failed batch */
	sk_test_store_verify(st);
	struct sk_store_line l;
	unsigned n;
	ck_assert_int_eq(sk_store_order_get(st, r[0].id, &l, 1, &n), -ENOENT);
	sk_store_close(st);

	/* Reopened with a larger map, the same batch goes in. */
	st = sk_test_store_open(dir, SK_STORE_NOSYNC, 16 << 20);
	struct sk_store_put_stats s;
	sk_test_store_put(st, r, B, NULL, &s);
	ck_assert_uint_eq(s.orders_new, B);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

void
test_store_add_durability(Suite *s)
{
	TCase *tc;

	tc = tcase_create("durability");
	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, batch_of_10000_in_one_txn);
	tcase_add_test(tc, kill9_keeps_whole_batches);
	tcase_add_test(tc, map_full_reported_cleanly);
	suite_add_tcase(s, tc);
}
