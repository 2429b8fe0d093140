/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_port_layout.c - which queue layout each kind of port gets
 * (sk_port_choose_layout): a NIC with RSS, a multi-queue memif (no RSS, the
 * peer steers), single-queue tap and af_packet, and the configured
 * overrides and their errors.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "sk_port_layout.h"
#include "sk_test.h"

/* What the PMDs report (rte_eth_dev_info) in DPDK 22.11. */
static const struct sk_port_caps nic = {.driver = "net_ice",
					.max_rx_queues = 64,
					.max_tx_queues = 64,
					.reta_size = 512,
					.flow_type_rss_offloads =
						RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_IPV4};
static const struct sk_port_caps memif = {
	.driver = "net_memif", .max_rx_queues = 255, .max_tx_queues = 255};
static const struct sk_port_caps tap = {
	.driver = "net_tap", .max_rx_queues = 16, .max_tx_queues = 16};
static const struct sk_port_caps afpacket = {
	.driver = "net_af_packet", .max_rx_queues = 1, .max_tx_queues = 1};

static struct sk_config_port
port_conf(uint16_t rx_queues, bool rss)
{
	struct sk_config_port pc;

	memset(&pc, 0, sizeof(pc));
	pc.rx_queues = rx_queues; /* 0: auto */
	pc.rss = rss;
	return pc;
}

/* layout - the choice for port @index, asserting success. */
static struct sk_port_layout
layout(const struct sk_port_caps *caps, uint16_t rx_queues, bool rss, uint16_t index,
       unsigned lcores)
{
	struct sk_config_port pc = port_conf(rx_queues, rss);
	struct sk_port_layout l;
	char err[256] = "";

	ck_assert_msg(sk_port_choose_layout(&pc, index, lcores, caps, &l, err, sizeof(err)) == 0,
		      "%s: %s", caps->driver, err);
	return l;
}

static void
assert_layout(struct sk_port_layout l, enum sk_port_mode mode, uint16_t queues)
{
	ck_assert_str_eq(sk_port_mode_name(l.mode), sk_port_mode_name(mode));
	ck_assert_uint_eq(l.nb_rxq, queues);
	ck_assert_uint_eq(l.nb_txq, queues);
}

START_TEST(rss_nic)
{
	assert_layout(layout(&nic, 0, true, 0, 4), SK_PORT_RSS, 4);
	assert_layout(layout(&nic, 4, true, 0, 4), SK_PORT_RSS, 4);
	assert_layout(layout(&nic, 0, true, 0, 1), SK_PORT_DIRECT, 1);
	/* rss = off: the NIC does not steer by itself, so dispatch... */
	assert_layout(layout(&nic, 0, false, 0, 4), SK_PORT_DISPATCH, 1);
	/* ... unless the operator says the device keeps flows on one queue */
	assert_layout(layout(&nic, 4, false, 0, 4), SK_PORT_SPREAD, 4);
	assert_layout(layout(&nic, 1, true, 0, 4), SK_PORT_DISPATCH, 1);
}
END_TEST

START_TEST(rss_nic_short_of_queues)
{
	struct sk_port_caps small = nic;
	struct sk_config_port pc = port_conf(8, true);
	struct sk_port_layout l = {.mode = SK_PORT_RSS, .nb_rxq = 99};
	char err[256] = "";

	small.max_rx_queues = 4;
	assert_layout(layout(&small, 0, true, 0, 8), SK_PORT_DISPATCH, 1);
	ck_assert_int_eq(sk_port_choose_layout(&pc, 2, 8, &small, &l, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "port2.rx_queues: net_ice has at most 4 RX / 64 TX queues");
	ck_assert_uint_eq(l.nb_rxq, 99); /* untouched on error */
}
END_TEST

START_TEST(rss_without_tcp_hash)
{
	struct sk_port_caps nohash = nic;

	nohash.flow_type_rss_offloads = RTE_ETH_RSS_L2_PAYLOAD;
	assert_layout(layout(&nohash, 0, true, 0, 2), SK_PORT_DISPATCH, 1);
	assert_layout(layout(&nohash, 2, true, 0, 2), SK_PORT_SPREAD, 2);
	nohash = nic;
	nohash.reta_size = 0;
	assert_layout(layout(&nohash, 0, true, 0, 2), SK_PORT_DISPATCH, 1);
}
END_TEST

START_TEST(memif_multi_queue)
{
	/* no RSS, but the peer keeps a flow on one queue: a pair per lcore */
	for (unsigned n = 2; n <= 16; n *= 2)
		assert_layout(layout(&memif, 0, true, 0, n), SK_PORT_SPREAD, (uint16_t)n);
	assert_layout(layout(&memif, 0, false, 0, 2), SK_PORT_SPREAD, 2);
	assert_layout(layout(&memif, 0, true, 0, 1), SK_PORT_DIRECT, 1);
	/* rx_queues = 1 still forces the software dispatch */
	assert_layout(layout(&memif, 1, true, 0, 2), SK_PORT_DISPATCH, 1);
}
END_TEST

START_TEST(memif_short_of_queues)
{
	struct sk_port_caps two = memif;

	two.max_rx_queues = two.max_tx_queues = 2;
	assert_layout(layout(&two, 0, true, 0, 4), SK_PORT_DISPATCH, 1);
}
END_TEST

START_TEST(single_queue_kinds)
{
	/* tap and af_packet keep the dispatch: the kernel side is not ours */
	assert_layout(layout(&tap, 0, true, 0, 2), SK_PORT_DISPATCH, 1);
	assert_layout(layout(&afpacket, 0, true, 0, 2), SK_PORT_DISPATCH, 1);
	assert_layout(layout(&afpacket, 0, true, 0, 1), SK_PORT_DIRECT, 1);
	/* a multi-queue tap when asked: the kernel picks a queue per flow */
	assert_layout(layout(&tap, 2, true, 0, 2), SK_PORT_SPREAD, 2);
}
END_TEST

START_TEST(af_packet_forced_queues)
{
	struct sk_config_port pc = port_conf(2, true);
	struct sk_port_layout l;
	char err[256] = "";

	ck_assert_int_eq(sk_port_choose_layout(&pc, 0, 2, &afpacket, &l, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "port0.rx_queues: net_af_packet has at most 1 RX / 1 TX queues");
}
END_TEST

START_TEST(rx_queues_not_lcores)
{
	struct sk_config_port pc = port_conf(3, true);
	struct sk_port_layout l;
	char err[256] = "";

	ck_assert_int_eq(sk_port_choose_layout(&pc, 1, 2, &nic, &l, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "port1.rx_queues: must be auto, 1 or the number of lcores (2)");
	pc.rx_queues = 2;
	ck_assert_int_eq(sk_port_choose_layout(&pc, 0, 1, &nic, &l, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "port0.rx_queues: must be auto, 1 or the number of lcores (1)");
}
END_TEST

START_TEST(dispatch_owner)
{
	/* port N is owned by lcore N mod lcores: ports spread their owners */
	ck_assert_uint_eq(layout(&tap, 0, true, 0, 4).owner, 0);
	ck_assert_uint_eq(layout(&tap, 0, true, 5, 4).owner, 1);
	ck_assert_uint_eq(layout(&tap, 0, true, 15, 4).owner, 3);
	ck_assert_uint_eq(layout(&memif, 0, true, 5, 4).owner, 0); /* spread: no owner */
}
END_TEST

START_TEST(names)
{
	ck_assert(sk_port_peer_steered("net_memif"));
	ck_assert(!sk_port_peer_steered("net_tap"));
	ck_assert(!sk_port_peer_steered("net_memif2"));
	ck_assert(!sk_port_peer_steered(NULL));
	ck_assert_str_eq(sk_port_mode_name(SK_PORT_DIRECT), "direct");
	ck_assert_str_eq(sk_port_mode_name(SK_PORT_RSS), "rss");
	ck_assert_str_eq(sk_port_mode_name(SK_PORT_SPREAD), "spread");
	ck_assert_str_eq(sk_port_mode_name(SK_PORT_DISPATCH), "dispatch");
}
END_TEST

static Suite *
port_layout_suite(void)
{
	Suite *s = suite_create("port_layout");
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, rss_nic);
	tcase_add_test(tc, rss_nic_short_of_queues);
	tcase_add_test(tc, rss_without_tcp_hash);
	tcase_add_test(tc, memif_multi_queue);
	tcase_add_test(tc, memif_short_of_queues);
	tcase_add_test(tc, single_queue_kinds);
	tcase_add_test(tc, af_packet_forced_queues);
	tcase_add_test(tc, rx_queues_not_lcores);
	tcase_add_test(tc, dispatch_owner);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(port_layout_suite)
