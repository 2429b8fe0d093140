/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the order events streams: the stream table (caps per lcore
 * and per user, the per-user counts against a reference under a fixed-seed
 * random open/close sequence, the bounded round-robin scan, what a stream
 * sends next: event, final event, keep-alive) and the poll that pushes
 * (sk_sse_table_poll()) over a status table in plain memory. Plain C, no
 * EAL. Who may follow an order: test_order_poll.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_sse.h"
#include "sk_sse_table.h"
#include "sk_test.h"

#define EPOCH 1764000002u
#define KA    15000ULL /* keep-alive period, TSC cycles, for the table tests */

/* table - a table of @max streams, @per_user of one user, in @mem (freed by the caller). */
static struct sk_sse_table *
table(uint32_t max, uint32_t per_user, void **mem)
{
	size_t len = sk_sse_table_size(max);

	ck_assert_uint_gt(len, 0);
	*mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
	ck_assert_ptr_nonnull(*mem);
	memset(*mem, 0xa5, len); /* init must not rely on zeroed memory */
	struct sk_sse_table *t = sk_sse_table_init(*mem, len, max, per_user, KA);
	ck_assert_ptr_nonnull(t);
	return t;
}

START_TEST(init_refuses)
{
	char mem[64] __attribute__((aligned(8)));

	ck_assert_uint_eq(sk_sse_table_size(0), 0);
	ck_assert_uint_eq(sk_sse_table_size((1u << 24) + 1), 0);
	ck_assert_ptr_null(sk_sse_table_init(mem, sizeof(mem), 4, 1, KA)); /* too short */
	void *m;
	struct sk_sse_table *t = table(4, 1, &m);
	ck_assert_ptr_null(sk_sse_table_init(m, sk_sse_table_size(4), 4, 0, KA));
	ck_assert_ptr_null(sk_sse_table_init(m, sk_sse_table_size(4), 4, 1, 0));
	(void)t;
	free(m);
}
END_TEST

/* The lcore's cap and the user's cap; a close gives the room back. */
START_TEST(caps)
{
	void *m;
	struct sk_sse_table *t = table(3, 2, &m);
	uint32_t a, b, c, d;

	ck_assert_int_eq(sk_sse_table_open(t, &a, 7, 100, SK_ORDER_QUEUED, 0, &a), 0);
	ck_assert_int_eq(sk_sse_table_open(t, &b, 7, 101, SK_ORDER_QUEUED, 0, &b), 0);
	ck_assert_int_eq(sk_sse_table_open(t, &c, 7, 102, SK_ORDER_QUEUED, 0, &c), -EUSERS);
	ck_assert_uint_eq(t->stats->refused_user, 1);
	ck_assert_uint_eq(sk_sse_table_user_count(t, 7), 2);
	ck_assert_int_eq(sk_sse_table_open(t, &c, 8, 103, SK_ORDER_QUEUED, 0, &c), 0);
	ck_assert_int_eq(sk_sse_table_open(t, &d, 9, 104, SK_ORDER_QUEUED, 0, &d), -EBUSY);
	ck_assert_uint_eq(t->stats->refused_max, 1);
	ck_assert_uint_eq(t->stats->open, 3);
	sk_sse_table_close(t, a);
	ck_assert_uint_eq(sk_sse_table_user_count(t, 7), 1);
	ck_assert_int_eq(sk_sse_table_open(t, &d, 9, 104, SK_ORDER_QUEUED, 0, &d), 0);
	ck_assert_uint_eq(t->s[d].order, 104);
	ck_assert_uint_eq(t->s[d].user, 9);
	ck_assert_uint_eq(t->stats->opened, 4);
	free(m);
}
END_TEST

/* Random opens and closes (fixed seed) of users that collide in a small
 * user table: every count matches a reference, the open slots are exactly
 * the ones the scan hands out. */
START_TEST(counts_random)
{
	enum { MAX = 64, USERS = 40, STEPS = 20000 };
	void *m;
	struct sk_sse_table *t = table(MAX, 3, &m);
	uint32_t ref[USERS + 1] = {0}, slot_user[MAX], open[MAX], nopen = 0;
	unsigned seed = 12345;

	for (int step = 0; step < STEPS; step++) {
		if (nopen > 0 && (rand_r(&seed) % 2 == 0 || nopen == MAX)) {
			uint32_t k = (uint32_t)rand_r(&seed) % nopen, sl = open[k];

			sk_sse_table_close(t, sl);
			ref[slot_user[sl]]--;
			open[k] = open[--nopen];
		} else {
			uint64_t u = 1 + (uint64_t)rand_r(&seed) % USERS;
			uint32_t sl;
			int rc =
				sk_sse_table_open(t, NULL, u * 1000003, 1, SK_ORDER_QUEUED, 0, &sl);

			if (ref[u] == 3) {
				ck_assert_int_eq(rc, -EUSERS);
				continue;
			}
			ck_assert_int_eq(rc, 0);
			ref[u]++;
			slot_user[sl] = (uint32_t)u;
			open[nopen++] = sl;
		}
		if (step % 97 == 0)
			for (uint64_t u = 1; u <= USERS; u++)
				ck_assert_uint_eq(sk_sse_table_user_count(t, u * 1000003), ref[u]);
	}
	ck_assert_uint_eq(t->n, nopen);
	/* one full round of scans sees every open slot exactly once */
	uint8_t seen[MAX] = {0};
	uint32_t out[SK_SSE_SCAN_MAX], got = 0;
	t->cursor = 0;
	while (got < nopen) {
		uint32_t k = sk_sse_table_scan(t, 16, out);
		ck_assert_uint_le(k, 16);
		for (uint32_t i = 0; i < k && got < nopen; i++, got++)
			seen[out[i]]++;
	}
	for (uint32_t i = 0; i < nopen; i++)
		ck_assert_uint_eq(seen[open[i]], 1);
	free(m);
}
END_TEST

/* The scan is bounded per call and round robin. */
START_TEST(scan_bounded)
{
	void *m;
	struct sk_sse_table *t = table(1000, 1000, &m);
	uint32_t sl, out[SK_SSE_SCAN_MAX];

	ck_assert_uint_eq(sk_sse_table_scan(t, 64, out), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(sk_sse_table_open(t, NULL, 5, 1, SK_ORDER_QUEUED, 0, &sl), 0);
	ck_assert_uint_eq(sk_sse_table_scan(t, 1000, out), SK_SSE_SCAN_MAX);
	uint32_t first = out[0];
	for (int i = 0; i < 1000 / SK_SSE_SCAN_MAX; i++)
		sk_sse_table_scan(t, SK_SSE_SCAN_MAX, out);
	/* 1000 = 15 * 64 + 40: the 16th call wrapped after 40 */
	ck_assert_uint_eq(out[40], first);
	free(m);
}
END_TEST

/* What a stream sends: the change, the final status then close, keep-alive when due. */
START_TEST(step)
{
	void *m;
	struct sk_sse_table *t = table(4, 4, &m);
	uint32_t sl;
	unsigned send = 99;

	ck_assert_int_eq(sk_sse_table_open(t, NULL, 5, 77, SK_ORDER_QUEUED, 1000, &sl), 0);
	struct sk_sse_stream *s = &t->s[sl];
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_QUEUED, 1000 + KA - 1, &send), SK_SSE_ACT_NOTHING);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_QUEUED, 1000 + KA, &send), SK_SSE_ACT_KEEPALIVE);
	sk_sse_table_sent(t, sl, SK_SSE_ACT_KEEPALIVE, 0, 1000 + KA);
	ck_assert_uint_eq(t->stats->keepalives, 1);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_QUEUED, 1000 + 2 * KA - 1, &send),
			 SK_SSE_ACT_NOTHING);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_CONFIRMED, 1001 + KA, &send), SK_SSE_ACT_EVENT);
	ck_assert_uint_eq(send, SK_ORDER_CONFIRMED);
	sk_sse_table_sent(t, sl, SK_SSE_ACT_EVENT, send, 1001 + KA);
	ck_assert_uint_eq(s->last, SK_ORDER_CONFIRMED);
	ck_assert_uint_eq(s->ka_due, 1001 + 2 * KA); /* an event postpones the keep-alive */
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_CONFIRMED, 1002 + KA, &send), SK_SSE_ACT_NOTHING);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_PAID, 1002 + KA, &send), SK_SSE_ACT_LAST);
	ck_assert_uint_eq(send, SK_ORDER_PAID);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_CANCELLED, 0, &send), SK_SSE_ACT_LAST);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_FAILED, 0, &send), SK_SSE_ACT_LAST);
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_REFUNDED, 0, &send), SK_SSE_ACT_LAST);
	/* gone from the status table: settled, final */
	ck_assert_int_eq(sk_sse_step(s, SK_ORDER_NONE, 0, &send), SK_SSE_ACT_LAST);
	ck_assert_uint_eq(send, SK_SSE_SETTLED);
	sk_sse_table_sent(t, sl, SK_SSE_ACT_LAST, send, 0);
	ck_assert_uint_eq(t->stats->events, 2);
	ck_assert_uint_eq(t->stats->finished, 1);
	ck_assert(!sk_sse_final(SK_ORDER_QUEUED) && !sk_sse_final(SK_ORDER_CONFIRMED));
	ck_assert_str_eq(sk_sse_status_name(SK_SSE_SETTLED), "settled");
	ck_assert_str_eq(sk_sse_status_name(SK_ORDER_PAID), "paid");
	ck_assert_ptr_null(sk_sse_status_name(SK_ORDER_NONE));
	free(m);
}
END_TEST

/* A status table of one lcore in plain memory: 2^10 slots, ids seq 1..100 of EPOCH. */
static struct {
	_Atomic uint8_t bytes[1024];
	_Atomic uint32_t users[1024];
	struct sk_status_window win;
	struct sk_status st;
	char out[4][512]; /* what each connection (0..3) was sent */
	size_t len[4];
	int room[4];	   /* sends each connection still takes (-1: any) */
	uint32_t ended[4]; /* end calls per connection */
} P;

static void
plain_status(void)
{
	memset(&P, 0, sizeof(P));
	P.win.seq_bits = SK_ORDER_SEQ_BITS;
	atomic_store(&P.win.oldest, sk_order_id_make(EPOCH, 0, 0, 1));
	atomic_store(&P.win.next, sk_order_id_make(EPOCH, 0, 0, 101));
	P.st = (struct sk_status){.base = P.bytes,
				  .users = P.users,
				  .win = &P.win,
				  .nlcores = 1,
				  .bits = 10,
				  .epoch = EPOCH};
	for (int i = 0; i < 4; i++)
		P.room[i] = -1;
}

static int
p_send(void *arg, void *conn, const void *data, size_t len)
{
	uintptr_t c = (uintptr_t)conn;

	(void)arg;
	if (P.room[c] == 0)
		return -EAGAIN;
	if (P.room[c] > 0)
		P.room[c]--;
	ck_assert_uint_le(P.len[c] + len, sizeof(P.out[c]));
	memcpy(P.out[c] + P.len[c], data, len);
	P.len[c] += len;
	return 0;
}

static void
p_end(void *arg, void *conn, uint32_t slot)
{
	struct sk_sse_table *t = arg;

	P.ended[(uintptr_t)conn]++;
	sk_sse_table_close(t, slot); /* as the app: free the slot, close the connection */
}

/* The poll pushes each change once, waits for room, ends a stream on its final status. */
START_TEST(poll_pushes)
{
	void *m;
	struct sk_sse_table *t = table(8, 8, &m);
	uint64_t id[3];
	uint32_t sl;

	plain_status();
	for (uintptr_t c = 0; c < 3; c++) {
		id[c] = sk_order_id_make(EPOCH, 0, 0, 1 + (uint32_t)c);
		atomic_store(&P.bytes[1 + c], SK_ORDER_QUEUED);
		ck_assert_int_eq(sk_sse_table_open(t, (void *)c, 5, id[c], SK_ORDER_QUEUED, 0, &sl),
				 0);
	}
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, 1, p_send, p_end, t), 0);
	atomic_store(&P.bytes[1], SK_ORDER_CONFIRMED);
	atomic_store(&P.bytes[2], SK_ORDER_PAID);
	P.room[0] = 0; /* connection 0 has no room now */
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, 2, p_send, p_end, t), 1);
	ck_assert_uint_eq(P.ended[1], 1);
	ck_assert_uint_eq(t->n, 2);
	char want[160];
	snprintf(want, sizeof(want),
		 "event: status\ndata: {\"order\":\"%llu\",\"status\":\"paid\"}\n\n",
		 (unsigned long long)id[1]);
	ck_assert_uint_eq(P.len[1], strlen(want));
	ck_assert_int_eq(memcmp(P.out[1], want, P.len[1]), 0);
	ck_assert_uint_eq(P.len[0], 0);
	P.room[0] = -1; /* room again: the event goes at the next turn, once */
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, 3, p_send, p_end, t), 1);
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, 4, p_send, p_end, t), 0);
	snprintf(want, sizeof(want),
		 "event: status\ndata: {\"order\":\"%llu\",\"status\":\"confirmed\"}\n\n",
		 (unsigned long long)id[0]);
	ck_assert_uint_eq(P.len[0], strlen(want));
	ck_assert_int_eq(memcmp(P.out[0], want, P.len[0]), 0);
	/* the order leaves the table (slot reused): settled, final */
	atomic_store(&P.win.oldest, sk_order_id_make(EPOCH, 0, 0, 3));
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, 5, p_send, p_end, t), 1);
	ck_assert_uint_eq(P.ended[0], 1);
	ck_assert_ptr_nonnull(strstr(P.out[0], "\"status\":\"settled\"}\n\n"));
	/* the last one's keep-alive once due */
	ck_assert_uint_eq(sk_sse_table_poll(t, &P.st, 64, KA, p_send, p_end, t), 1);
	ck_assert_uint_eq(P.len[2], SK_SSE_KEEPALIVE_LEN);
	ck_assert_int_eq(memcmp(P.out[2], ": ka\n\n", SK_SSE_KEEPALIVE_LEN), 0);
	ck_assert_uint_eq(t->stats->events, 3);
	ck_assert_uint_eq(t->stats->keepalives, 1);
	ck_assert_uint_eq(t->stats->finished, 2);
	ck_assert_uint_eq(t->stats->open, 1);
	free(m);
}
END_TEST

static Suite *
sse_table_suite(void)
{
	Suite *s = suite_create("sse_table");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, init_refuses);
	tcase_add_test(tc, caps);
	tcase_add_test(tc, counts_random);
	tcase_add_test(tc, scan_bounded);
	tcase_add_test(tc, step);
	tcase_add_test(tc, poll_pushes);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(sse_table_suite)
