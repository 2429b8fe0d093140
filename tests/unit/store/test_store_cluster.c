/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of a cluster activity in the order store and its lease journal
 * (storage/sk_store_cluster.h), each in its own store under a temporary
 * directory:
 *
 *   definition: the cluster mark is kept, compared and never flipped; the
 *               activity's own units are 0 (all come from leases);
 *   leases:     one pending op at a time; a grant is a restock under the
 *               op's id in the same transaction; ends are exactly once;
 *               a refused lease (0 units) leaves no restock;
 *   give-backs: only unsold units, taken off at the begin; held counts a
 *               pending give-back until its end; the put_orders guard;
 *   crash:      a pending op survives a reopen; the store verifies;
 *   forgotten:  members forgotten with their units, kept over a reopen,
 *               idempotent, bounded, refused on a plain activity.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_store.h"
#include "sk_store_cluster.h"
#include "sk_test.h"
#include "sk_test_fs.h"
#include "sk_test_store.h"

#define MS  ((int64_t)1000000)
#define MIN (60 * 1000 * MS)

static struct sk_store_activity
activity(uint32_t item, uint64_t total, bool cluster)
{
	struct sk_store_activity a = {.item = item,
				      .per_user_limit = 5,
				      .total = total,
				      .end_ns = INT64_MAX,
				      .cluster = cluster};

	snprintf(a.name, sizeof(a.name), "item-%u", item);
	return a;
}

/* put - one order @id of @qty units of @item; its outcome. */
static uint8_t
put(struct sk_store *st, uint64_t id, uint32_t item, uint16_t qty)
{
	struct sk_order_rec r = {.id = id,
				 .user = 100 + id,
				 .price = 1,
				 .time_ns = 1000 * MS,
				 .item = item,
				 .qty = qty,
				 .nlines = 1};
	uint8_t oc;

	sk_test_store_put(st, &r, 1, &oc, NULL);
	return oc;
}

static int
keep_event(const struct sk_store_event *ev, void *arg)
{
	*(struct sk_store_event *)arg = *ev;
	return 0;
}

static struct sk_store_event
latest(struct sk_store *st)
{
	struct sk_store_event ev = {0};

	ck_assert_int_eq(sk_store_events_foreach(st, 0, keep_event, &ev), 0);
	return ev;
}

static struct sk_store_cluster
journal(struct sk_store *st, uint32_t item)
{
	struct sk_store_cluster c;

	ck_assert_int_eq(sk_store_cluster_get(st, item, &c), 0);
	return c;
}

static uint64_t
units_of(struct sk_store *st, uint32_t item)
{
	struct sk_store_activity a;

	ck_assert_int_eq(sk_store_activity_get(st, item, &a, NULL), 0);
	return sk_store_activity_units(&a);
}

START_TEST(definition)
{
	struct sk_store *st = sk_test_store_open_test("def");
	struct sk_store_activity a = activity(1, 1000, true), got;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_activity_put(st, &a, 2), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &got, NULL), 0);
	ck_assert(got.cluster);
	ck_assert_uint_eq(got.total, 1000);
	/* Nothing leased yet: nothing to sell here. */
	ck_assert_uint_eq(sk_store_activity_base(&got), 0);
	ck_assert_uint_eq(sk_store_activity_units(&got), 0);
	ck_assert_uint_eq(put(st, 1, 1, 1), SK_STORE_OVERSELL);
	/* The mark is part of the definition and never flips. */
	struct sk_store_activity b = activity(1, 1000, false);
	ck_assert(!sk_store_activity_same(&a, &b));
	ck_assert_int_eq(sk_store_activity_put(st, &b, 3), -EEXIST);
	/* A single-appliance activity has no journal. */
	ck_assert_int_eq(sk_store_activity_put(st, &(struct sk_store_activity){0}, 3), -EINVAL);
	b = activity(2, 10, false);
	ck_assert_int_eq(sk_store_activity_put(st, &b, 3), 0);
	struct sk_store_cluster c;
	uint64_t seq;
	ck_assert_int_eq(sk_store_cluster_get(st, 2, &c), -EINVAL);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 2, 1, 3, &seq), -EINVAL);
	ck_assert_int_eq(sk_store_cluster_get(st, 3, &c), -ENOENT);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 3, 1, 3, &seq), -ENOENT);
	c = journal(st, 1);
	ck_assert_uint_eq(c.next_seq, 1);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_NONE);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 0);
	sk_store_close(st);

	st = sk_test_store_open(sk_test_store_dir("def"), SK_STORE_RDONLY, 0);
	ck_assert_int_eq(sk_store_activity_get(st, 1, &got, NULL), 0);
	ck_assert(got.cluster);
	ck_assert_int_eq(sk_store_activity_get(st, 2, &got, NULL), 0);
	ck_assert(!got.cluster);
	sk_store_close(st);
}
END_TEST

START_TEST(leases)
{
	struct sk_store *st = sk_test_store_open_test("lease");
	struct sk_store_activity a = activity(1, 1000, true);
	uint64_t seq, seq2, units;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 0, 2, &seq), -EINVAL);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 10, 2, &seq), 0);
	ck_assert_uint_eq(seq, 1);
	/* One op at a time. */
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 10, 2, &seq2), -EBUSY);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 1, 2, &seq2), -EBUSY);
	struct sk_store_cluster c = journal(st, 1);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_LEASE);
	ck_assert_uint_eq(c.pending_seq, 1);
	ck_assert_uint_eq(c.pending_units, 10);
	ck_assert_uint_eq(c.next_seq, 2);
	/* Not yet granted: nothing to sell. */
	ck_assert_uint_eq(units_of(st, 1), 0);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 2, 5, 3), -ESTALE);
	ck_assert_int_eq(sk_store_cluster_giveback_end(st, 1, 1, 3), -ESTALE);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 1, 11, 3), -ERANGE);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 1, 7, 3), 0);
	/* The grant is a restock under the op's id, with its event. */
	ck_assert_uint_eq(units_of(st, 1), 7);
	struct sk_store_event ev = latest(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_RESTOCKED);
	ck_assert_uint_eq(ev.units, 7);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, SK_STORE_CLUSTER_ID(1), 7, 4),
			 SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_activity_removal(st, 1, SK_STORE_CLUSTER_ID(1), &units), -EEXIST);
	/* Exactly once. */
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 1, 7, 4), SK_STORE_UNCHANGED);
	ck_assert_uint_eq(units_of(st, 1), 7);
	ck_assert_uint_eq(latest(st).seq, ev.seq);
	c = journal(st, 1);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_NONE);
	ck_assert_uint_eq(c.granted, 7);
	ck_assert_uint_eq(c.ops, 1);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 7);

	/* A refused lease (the pool is empty, or Redis fenced) ends with 0
	 * units: no restock, no event. */
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 4, 5, &seq), 0);
	ck_assert_uint_eq(seq, 2);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 2, 0, 5), 0);
	ck_assert_uint_eq(latest(st).seq, ev.seq);
	ck_assert_int_eq(sk_store_activity_restock(st, 1, SK_STORE_CLUSTER_ID(2), 1, 5), 0);
	c = journal(st, 1);
	ck_assert_uint_eq(c.granted, 7);
	ck_assert_uint_eq(c.ops, 2);
	ck_assert_uint_eq(c.next_seq, 3);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(givebacks)
{
	struct sk_store *st = sk_test_store_open_test("giveback");
	struct sk_store_activity a = activity(1, 1000, true);
	uint64_t seq;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 1, 2, &seq), -ERANGE);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 10, 2, &seq), 0);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, seq, 10, 2), 0);
	ck_assert_uint_eq(put(st, 1, 1, 3), SK_STORE_NEW);
	ck_assert_uint_eq(put(st, 2, 1, 3), SK_STORE_NEW);
	/* 4 unsold: 5 is too many, and nothing changes. */
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 5, 3, &seq), -ERANGE);
	ck_assert_uint_eq(journal(st, 1).next_seq, 2);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 0, 3, &seq), -EINVAL);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 3, 3, &seq), 0);
	ck_assert_uint_eq(seq, 2);
	/* Off sale here at once (a removal with its event) ... */
	ck_assert_uint_eq(units_of(st, 1), 7);
	struct sk_store_event ev = latest(st);
	ck_assert_uint_eq(ev.type, SK_STORE_EV_REMOVED);
	ck_assert_uint_eq(ev.units, 3);
	uint64_t units;
	ck_assert_int_eq(sk_store_activity_removal(st, 1, SK_STORE_CLUSTER_ID(2), &units), 0);
	ck_assert_uint_eq(units, 3);
	ck_assert_uint_eq(put(st, 3, 1, 2), SK_STORE_OVERSELL);
	ck_assert_uint_eq(put(st, 4, 1, 1), SK_STORE_NEW);
	/* ... but still held in Redis's eyes until Redis took them. */
	struct sk_store_cluster c = journal(st, 1);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_GIVEBACK);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 10);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, 2, 1, 4), -ESTALE);
	ck_assert_int_eq(sk_store_cluster_giveback_end(st, 1, 3, 4), -ESTALE);
	ck_assert_int_eq(sk_store_cluster_giveback_end(st, 1, 2, 4), 0);
	ck_assert_int_eq(sk_store_cluster_giveback_end(st, 1, 2, 4), SK_STORE_UNCHANGED);
	c = journal(st, 1);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_NONE);
	ck_assert_uint_eq(c.given_back, 3);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 7);
	ck_assert_uint_eq(units_of(st, 1), 7);

	/* A closed sale takes no lease but gives its unsold units back, and
	 * records the grant of a lease asked before it closed. */
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 5, 5, &seq), 0);
	ck_assert_int_eq(sk_store_activity_close(st, 1, 5), 0);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 1, seq, 5, 6), 0);
	ck_assert_uint_eq(units_of(st, 1), 12);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 1, 5, 6, &seq), -EPERM);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 1, 5, 6, &seq), 0);
	ck_assert_int_eq(sk_store_cluster_giveback_end(st, 1, seq, 6), 0);
	c = journal(st, 1);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 7); /* the 7 units sold */
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(pending_survives)
{
	struct sk_store *st = sk_test_store_open(sk_test_store_dir("crash"), 0, 0);
	struct sk_store_activity a = activity(9, 50, true);
	uint64_t seq;

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_cluster_lease_begin(st, 9, 20, 2, &seq), 0);
	sk_store_close(st);

	/* The control plane died with the lease sent, maybe granted: the
	 * journal still names it, so it is resent with the same number. */
	st = sk_test_store_open(sk_test_store_dir("crash"), 0, 0);
	struct sk_store_cluster c = journal(st, 9);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_LEASE);
	ck_assert_uint_eq(c.pending_seq, seq);
	ck_assert_uint_eq(c.pending_units, 20);
	ck_assert_int_eq(sk_store_cluster_lease_end(st, 9, seq, 20, 3), 0);
	ck_assert_int_eq(sk_store_cluster_giveback_begin(st, 9, 8, 4, &seq), 0);
	sk_store_close(st);

	st = sk_test_store_open(sk_test_store_dir("crash"), 0, 0);
	c = journal(st, 9);
	ck_assert_uint_eq(c.pending_kind, SK_STORE_CLUSTER_GIVEBACK);
	ck_assert_uint_eq(c.pending_units, 8);
	ck_assert_uint_eq(sk_store_cluster_held(&c), 20);
	ck_assert_uint_eq(units_of(st, 9), 12);
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

START_TEST(forgotten)
{
	struct sk_store *st = sk_test_store_open(sk_test_store_dir("forgotten"), 0, 0);
	struct sk_store_activity a = activity(4, 50, true), plain = activity(5, 50, false);
	struct sk_store_forgotten f;
	char id[40];

	ck_assert_int_eq(sk_store_activity_put(st, &a, 1), 0);
	ck_assert_int_eq(sk_store_activity_put(st, &plain, 1), 0);
	ck_assert_int_eq(sk_store_cluster_forgotten_get(st, 4, &f), 0);
	ck_assert_uint_eq(f.n, 0);
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, "b", 17), 0);
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, "b", 17), SK_STORE_UNCHANGED);
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, "b", 18), -EEXIST);
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, "", 1), -EINVAL);
	memset(id, 'x', 33);
	id[33] = '\0';
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, id, 1), -EINVAL);
	id[32] = '\0'; /* the longest id */
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, id, 0), 0);
	ck_assert_int_eq(sk_store_cluster_forget(st, 5, "b", 1), -EINVAL);
	ck_assert_int_eq(sk_store_cluster_forget(st, 6, "b", 1), -ENOENT);
	sk_store_close(st);

	st = sk_test_store_open(sk_test_store_dir("forgotten"), 0, 0);
	ck_assert_int_eq(sk_store_cluster_forgotten_get(st, 4, &f), 0);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_str_eq(f.m[0].id, "b");
	ck_assert_uint_eq(f.m[0].held, 17);
	ck_assert_str_eq(f.m[1].id, id);
	ck_assert_uint_eq(f.m[1].held, 0);
	for (unsigned i = 2; i < SK_STORE_FORGOTTEN_MAX; i++) {
		snprintf(id, sizeof(id), "m%u", i);
		ck_assert_int_eq(sk_store_cluster_forget(st, 4, id, i), 0);
	}
	ck_assert_int_eq(sk_store_cluster_forget(st, 4, "one-more", 1), -ENOSPC);
	ck_assert_int_eq(sk_store_cluster_forgotten_get(st, 4, &f), 0);
	ck_assert_uint_eq(f.n, SK_STORE_FORGOTTEN_MAX);
	ck_assert_uint_eq(f.m[SK_STORE_FORGOTTEN_MAX - 1].held, SK_STORE_FORGOTTEN_MAX - 1);
	ck_assert_uint_eq(journal(st, 4).next_seq, 1); /* the journal is apart */
	sk_test_store_verify(st);
	sk_store_close(st);
}
END_TEST

static Suite *
cluster_suite(void)
{
	Suite *s = suite_create("store-cluster");
	TCase *tc = tcase_create("journal");

	tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, definition);
	tcase_add_test(tc, leases);
	tcase_add_test(tc, givebacks);
	tcase_add_test(tc, pending_survives);
	tcase_add_test(tc, forgotten);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(cluster_suite)
