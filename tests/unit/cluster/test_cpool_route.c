/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the Redis Cluster node table (cluster/sk_cpool_route.c,
 * internal: sk_cpool_impl.h), no Redis needed (the nodes are never
 * connected): more than SK_CPOOL_NODES_MAX node addresses over time keep
 * working, a failed node that no slot points to is freed, and a full table
 * gives up its least useful node (never node 0 nor the one that answered).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_cpool_impl.h"
#include "sk_test.h"

static struct sk_cpool_route rt;

static void
setup(void)
{
	struct sk_cpool_config c = {
		.host = "127.0.0.1", .port = 7000, .member = "a", .timeout_ms = 100};

	ck_assert_int_eq(sk_cpool_route_init(&rt, &c), 0);
}

static void
teardown(void)
{
	sk_cpool_route_fini(&rt);
}

/* moved: a MOVED of @slot to 198.18.<k / 256>.<k % 256>:6379 answered by
 * @from; the node it names. */
static struct sk_cpool_link *
moved(unsigned slot, unsigned k, struct sk_cpool_link *from)
{
	char err[64], host[32];
	struct sk_cpool_link *to = NULL;
	bool ask = true;

	snprintf(host, sizeof(host), "198.18.%u.%u", k / 256, k % 256);
	snprintf(err, sizeof(err), "MOVED %u %s:6379", slot, host);
	ck_assert_int_eq(sk_cpool_route_redirect(&rt, err, from, &to, &ask), 1);
	ck_assert(!ask);
	ck_assert_ptr_nonnull(to);
	ck_assert_str_eq(to->host, host);
	ck_assert_int_eq(to->port, 6379);
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, (uint16_t)slot), to);
	return to;
}

static unsigned
used(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < rt.nnodes; i++)
		n += rt.node[i].host != NULL;
	return n;
}

/* A cluster whose masters move over time: 100 addresses, one slot each;
 * the table never holds more than its 16 and the latest routes hold. */
START_TEST(many_nodes_over_time)
{
	for (unsigned k = 0; k < 100; k++) {
		moved(k, k, &rt.node[0]);
		ck_assert_uint_le(rt.nnodes, SK_CPOOL_NODES_MAX);
	}
	ck_assert_uint_eq(used(), SK_CPOOL_NODES_MAX);
	/* The newest routes are kept; the oldest went back to node 0. */
	ck_assert_str_eq(sk_cpool_route_link(&rt, 99)->host, "198.18.0.99");
	ck_assert_str_eq(sk_cpool_route_link(&rt, 98)->host, "198.18.0.98");
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, 0), &rt.node[0]);
	ck_assert_str_eq(rt.node[0].host, "127.0.0.1");
	ck_assert_int_eq(rt.node[0].port, 7000);
}
END_TEST

/* A node that failed (down) and that no slot points to any more is freed;
 * its entry serves the next new node. */
START_TEST(lost_node_freed)
{
	struct sk_cpool_link *n1 = moved(1, 1, &rt.node[0]);
	unsigned nn;

	moved(2, 1, &rt.node[0]); /* two slots on 198.18.0.1 */
	moved(3, 2, &rt.node[0]);
	nn = rt.nnodes;
	sk_cpool_link_seterr(n1, "redis 198.18.0.1:6379: connection refused");
	sk_cpool_route_lost(&rt, 1);
	ck_assert_str_eq(n1->host, "198.18.0.1"); /* slot 2 still points to it */
	sk_cpool_route_lost(&rt, 2);
	ck_assert_ptr_null(n1->host); /* freed */
	ck_assert_str_eq(n1->err, "redis 198.18.0.1:6379: connection refused");
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, 1), &rt.node[0]);
	ck_assert_ptr_eq(moved(4, 3, &rt.node[0]), n1); /* the free entry */
	ck_assert_uint_eq(rt.nnodes, nn);
}
END_TEST

/* A full table: a down node that no slot points to goes first, then an
 * unreferenced one, then the one with the fewest slots; never node 0 nor
 * the node that answered. */
START_TEST(eviction_order)
{
	struct sk_cpool_link *n[SK_CPOOL_NODES_MAX];
	struct sk_cpool_link *big;

	/* Nodes 1..15: node k serves slots 100k .. 100k + k - 1 (k slots). */
	for (unsigned k = 1; k < SK_CPOOL_NODES_MAX; k++)
		for (unsigned s = 0; s < k; s++)
			n[k] = moved(100 * k + s, k, &rt.node[0]);
	ck_assert_uint_eq(rt.nnodes, SK_CPOOL_NODES_MAX);
	/* Node 1 (1 slot) answered: node 2 (2 slots) goes. */
	big = moved(5000, 200, n[1]);
	ck_assert_ptr_eq(big, n[2]);
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, 200), &rt.node[0]);
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, 100), n[1]);
	/* Node 9 loses its slots (MOVED elsewhere): unreferenced, it goes
	 * before node 1, which has fewer slots. */
	for (unsigned s = 0; s < 9; s++)
		moved(900 + s, 3, &rt.node[0]);
	ck_assert_ptr_eq(moved(6000, 201, &rt.node[0]), n[9]);
	ck_assert_ptr_eq(sk_cpool_route_link(&rt, 100), n[1]);
	ck_assert_str_eq(rt.node[0].host, "127.0.0.1");
}
END_TEST

static Suite *
route_suite(void)
{
	Suite *s = suite_create("cpool_route");
	TCase *t = tcase_create("route");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, many_nodes_over_time);
	tcase_add_test(t, lost_node_freed);
	tcase_add_test(t, eviction_order);
	suite_add_tcase(s, t);
	return s;
}

SK_TEST_MAIN(route_suite)
