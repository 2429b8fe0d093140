/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config.c - the INI loader: a table of files with the error each must
 * produce (or the values it must set), plus a few whole-struct checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sk_common.h"
#include "sk_config.h"

#define PORT0 "[port0]\ndevice = net_tap0,iface=sk0\naddress = 198.18.0.1/24\n"

/* write_tmp - @text into a fresh temporary file; returns its path (static). */
static const char *
write_tmp(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/sk_config_test_XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static int
load_text(const char *text, struct sk_config *cfg, char *err, size_t errlen)
{
	const char *path = write_tmp(text);
	int rc = sk_config_load(cfg, path, err, errlen);

	unlink(path);
	return rc;
}

/* ---------------------------------------------------------------- bad files */

struct bad_case {
	const char *text;
	const char *needle; /* must appear in the one-line error */
};

static const struct bad_case bad_cases[] = {
	{"", "port0.device: no port configured"},
	{"[dataplane]\nmbufs = 4096\n", "no port configured"},
	{"mbufs = 1\n" PORT0, ":1: mbufs: key outside any [section]"},
	{PORT0 "[bogus]\nx = 1\n", ":4: unknown section [bogus]"},
	{PORT0 "[bogus]\n", ":4: unknown section [bogus]"},
	{PORT0 "[port4]\ndevice = x\n", ":4: unknown section [port4]"},
	{PORT0 "[port0\n", ":4: expected '[section]'"},
	{PORT0 "[tcp]\nmsss = 1460\n", ":5: tcp.msss: unknown key"},
	{PORT0 "[tcp]\nmss 1460\n", ":5: expected 'key = value'"},
	{PORT0 "[tcp]\nmss = 80\n", ":5: tcp.mss: 80 is out of range 536..9000"},
	{PORT0 "[tcp]\nmss = 90000\n", "tcp.mss: 90000 is out of range"},
	{PORT0 "[tcp]\nmss = -1\n", "tcp.mss: '-1' is not a decimal number"},
	{PORT0 "[tcp]\nmss = 1460x\n", "tcp.mss: '1460x' is not a decimal number"},
	{PORT0 "[tcp]\nmss = 99999999999999999999999\n", "is not a decimal number"},
	{PORT0 "[tcp]\nmss =\n", ":5: tcp.mss: empty value"},
	{PORT0 "[tcp]\nmss = 1460\nmss = 1400\n", ":6: tcp.mss: set twice"},
	{PORT0 "[tcp]\nmss = 1460\n  mss = 1400\n", ":6: tcp.mss: set twice"},
	{PORT0 "[tcp]\nsyncookie_secret = 0011\n", "tcp.syncookie_secret: expected 32 hex digits"},
	{PORT0 "[tcp]\nrto_min_ms = 500\nrto_max_ms = 100\n",
	 "tcp.rto_min_ms: above tcp.rto_max_ms"},
	{PORT0 "[dataplane]\nlcores = 1-\n", ":5: dataplane.lcores: '1-' is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = 3-1\n", "dataplane.lcores: '3-1' is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = 1,,2\n", "is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = 2000\n",
	 "is not an lcore list like 1 or 1-3,6 (ids 0..1023)"},
	{PORT0 "[dataplane]\nlcores = a\n", "is not an lcore list"},
	{PORT0 "[dataplane]\ndispatch_ring = 1000\n",
	 ":5: dataplane.dispatch_ring: 1000 is not a power of two"},
	{PORT0 "[dataplane]\nmbufs = 511\nmbuf_cache = 512\n",
	 "dataplane.mbuf_cache: 512 is more than dataplane.mbufs / 1.5"},
	{PORT0 "[http]\nhead_max = 100\ntarget_max = 90\n", "http.target_max: must be at most"},
	{"[port0]\naddress = 198.18.0.1/24\n", "port0.device: required"},
	{"[port0]\ndevice = net_tap0\n", "port0.address: required"},
	{"[port0]\ndevice = net tap0\n", ":2: port0.device: 'net tap0' is not a device"},
	{"[port0]\ndevice = net_tap0\naddress = 198.18.0.1\n",
	 ":3: port0.address: '198.18.0.1' is not A.B.C.D/prefix"},
	{"[port0]\ndevice = net_tap0\naddress = 198.18.0.300/24\n", "is not A.B.C.D/prefix"},
	{"[port0]\ndevice = net_tap0\naddress = 198.18.0.1/33\n",
	 "port0.address: prefix /33 is out of range 1..32"},
	{"[port0]\ndevice = net_tap0\naddress = 198.18.0.0/24\n",
	 "port0.address: 198.18.0.0 is the network or broadcast address of /24"},
	{"[port0]\ndevice = net_tap0\naddress = 198.18.0.255/24\n", "network or broadcast"},
	{"[port0]\ndevice = net_tap0\naddress = 224.0.0.1/24\n", "is not a unicast host address"},
	{"[port0]\ndevice = net_tap0\naddress = 127.0.0.1/8\n", "is not a unicast host address"},
	{PORT0 "gateway = 10.0.0.1\n", "port0.gateway: not a neighbour inside port0.address"},
	{PORT0 "gateway = 198.18.0.1\n", "port0.gateway: not a neighbour"},
	{PORT0 "gateway = 198.18.0\n", ":4: port0.gateway: '198.18.0' is not an IPv4 address"},
	{PORT0 "mac = 01:00:00:00:00:01\n", "port0.mac: 01:00:00:00:00:01 is not a unicast MAC"},
	{PORT0 "mac = 00:00:00:00:00:00\n", "is not a unicast MAC"},
	{PORT0 "mac = 02:00:00:00:00\n", ":4: port0.mac: '02:00:00:00:00' is not a MAC"},
	{PORT0 "mac = 02:00:00:00:00:0g\n", "is not a MAC"},
	{PORT0 "rx_queues = none\n", "port0.rx_queues: 'none' is not a decimal number or 'auto'"},
	{PORT0 "rx_queues = 0\n", "port0.rx_queues: 0 is out of range 1..128"},
	{PORT0 "rss = maybe\n", ":4: port0.rss: 'maybe' is not on/off"},
	{PORT0 "[port2]\ndevice = net_tap2\naddress = 198.18.2.1/24\n",
	 "port2: ports must be numbered from port0 without gaps"},
	{PORT0 "[port1]\ndevice = net_tap0,iface=x\naddress = 198.18.2.1/24\n",
	 "port1.device: same device as port0"},
	{PORT0 "[port1]\ndevice = net_tap1\naddress = 198.18.0.1/24\n",
	 "port1.address: same address as port0"},
};

START_TEST(test_bad_file)
{
	const struct bad_case *bc = &bad_cases[_i];
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX];
	int rc;

	memset(err, 0, sizeof(err));
	rc = load_text(bc->text, &cfg, err, sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(err, bc->needle) != NULL, "case %d: error '%s' lacks '%s'", _i, err,
		      bc->needle);
	ck_assert_msg(strchr(err, '\n') == NULL, "case %d: error is not one line", _i);
	ck_assert_msg(strncmp(err, "/tmp/sk_config_test_", 20) == 0, "case %d: no file in '%s'", _i,
		      err);
}
END_TEST

/* -------------------------------------------------------------- good files */

START_TEST(test_missing_file)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX];

	ck_assert_int_eq(sk_config_load(&cfg, "/nonexistent/sk.ini", err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/sk.ini: "));
	/* NULL err is allowed */
	ck_assert_int_eq(sk_config_load(&cfg, "/nonexistent/sk.ini", NULL, 0), -ENOENT);
}
END_TEST

START_TEST(test_long_line)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX];
	char text[2048];

	snprintf(text, sizeof(text), PORT0 "[tcp]\nmss = 1460 # %01000d\n", 0);
	ck_assert_int_eq(load_text(text, &cfg, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":5: line longer than"));
}
END_TEST

START_TEST(test_defaults_only_port)
{
	struct sk_config cfg, def;
	char err[SK_CONFIG_ERR_MAX];

	ck_assert_int_eq(load_text(PORT0, &cfg, err, sizeof(err)), 0);
	sk_config_defaults(&def);
	ck_assert_uint_eq(cfg.nb_ports, 1);
	ck_assert_str_eq(cfg.ports[0].device, "net_tap0,iface=sk0");
	ck_assert_uint_eq(cfg.ports[0].addr, 0xc6120001u);
	ck_assert_uint_eq(cfg.ports[0].prefix, 24);
	ck_assert_uint_eq(cfg.ports[0].gateway, 0);
	ck_assert(!cfg.ports[0].has_mac);
	ck_assert_uint_eq(cfg.ports[0].rx_queues, 0);
	ck_assert_uint_eq(cfg.ports[0].rx_desc, def.ports[0].rx_desc);
	ck_assert(cfg.ports[0].rss);
	ck_assert_uint_eq(cfg.mbufs, def.mbufs);
	ck_assert_str_eq(cfg.lcores, "");
	ck_assert_uint_eq(cfg.burst, def.burst);
	/* absent tcp/http keys stay 0: "the module's default" */
	ck_assert_uint_eq(cfg.max_conns, 0);
	ck_assert_uint_eq(cfg.mss, 0);
	ck_assert_uint_eq(cfg.head_max, 0);
	ck_assert(!cfg.has_syncookie_secret);
}
END_TEST

static const char full_text[] = "# a full file, with every kind of value\n"
				"; semicolon comments too\n"
				"[dataplane]\n"
				"lcores = 1-3,6\n"
				"  mbufs = 32767     # indented, inline comment\n"
				"mbuf_cache=128\n"
				"burst = 64 ; inline semicolon comment\n"
				"dispatch_ring = 2048\n"
				"idle_sleep_us = 50\n"
				"idle_after_us = 2000\n"
				"\n"
				"[port0]\n"
				"device = 0000:03:00.0\n"
				"address = 10.1.2.3/16\n"
				"gateway = 10.1.0.1\n"
				"mac = 02:AB:cd:00:00:01\n"
				"rx_queues = 4\n"
				"rx_desc = 2048\n"
				"tx_desc = 512\n"
				"rss = off\n"
				"checksum_offload = no\n"
				"[port1]\n"
				"device = net_memif0,role=server,socket=/run/sk.sock\n"
				"address = 198.18.1.1/32\n"
				"rx_queues = auto\n"
				"[tcp]\n"
				"port = 8080\n"
				"max_conns = 100000\n"
				"mss = 1400\n"
				"rcv_buf_size = 16384\n"
				"snd_buf_size = 4096\n"
				"rto_initial_ms = 500\n"
				"rto_min_ms = 100\n"
				"rto_max_ms = 4000\n"
				"max_retries = 5\n"
				"idle_timeout_ms = 30000\n"
				"time_wait_ms = 1000\n"
				"time_wait_max = 2048\n"
				"syncookie_secret = 000102030405060708090a0b0c0d0E0F\n"
				"[http]\n"
				"head_max = 4096\n"
				"target_max = 1024\n"
				"body_max = 0\n"
				"fields_max = 32\n";

START_TEST(test_full_file)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX] = "";
	static const uint8_t mac[6] = {0x02, 0xab, 0xcd, 0, 0, 1};
	char name[64];
	int rc;

	rc = load_text(full_text, &cfg, err, sizeof(err));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert_str_eq(cfg.lcores, "1-3,6");
	ck_assert_uint_eq(cfg.mbufs, 32767);
	ck_assert_uint_eq(cfg.mbuf_cache, 128);
	ck_assert_uint_eq(cfg.burst, 64);
	ck_assert_uint_eq(cfg.dispatch_ring, 2048);
	ck_assert_uint_eq(cfg.idle_sleep_us, 50);
	ck_assert_uint_eq(cfg.idle_after_us, 2000);
	ck_assert_uint_eq(cfg.nb_ports, 2);

	ck_assert_str_eq(cfg.ports[0].device, "0000:03:00.0");
	ck_assert_uint_eq(cfg.ports[0].addr, 0x0a010203u);
	ck_assert_uint_eq(cfg.ports[0].prefix, 16);
	ck_assert_uint_eq(cfg.ports[0].gateway, 0x0a010001u);
	ck_assert(cfg.ports[0].has_mac);
	ck_assert_mem_eq(cfg.ports[0].mac, mac, 6);
	ck_assert_uint_eq(cfg.ports[0].rx_queues, 4);
	ck_assert_uint_eq(cfg.ports[0].rx_desc, 2048);
	ck_assert_uint_eq(cfg.ports[0].tx_desc, 512);
	ck_assert(!cfg.ports[0].rss);
	ck_assert(!cfg.ports[0].csum_offload);
	ck_assert_int_eq(sk_config_port_name(&cfg.ports[0], name, sizeof(name)), 0);
	ck_assert_str_eq(name, "0000:03:00.0");

	ck_assert_str_eq(cfg.ports[1].device, "net_memif0,role=server,socket=/run/sk.sock");
	ck_assert_uint_eq(cfg.ports[1].prefix, 32);
	ck_assert_uint_eq(cfg.ports[1].rx_queues, 0);
	ck_assert(cfg.ports[1].rss);
	ck_assert_int_eq(sk_config_port_name(&cfg.ports[1], name, sizeof(name)), 0);
	ck_assert_str_eq(name, "net_memif0");
	ck_assert_int_eq(sk_config_port_name(&cfg.ports[1], name, 5), -ENOSPC);

	ck_assert_uint_eq(cfg.tcp_port, 8080);
	ck_assert_uint_eq(cfg.max_conns, 100000);
	ck_assert_uint_eq(cfg.mss, 1400);
	ck_assert_uint_eq(cfg.rcv_buf_size, 16384);
	ck_assert_uint_eq(cfg.snd_buf_size, 4096);
	ck_assert_uint_eq(cfg.rto_initial_ms, 500);
	ck_assert_uint_eq(cfg.rto_min_ms, 100);
	ck_assert_uint_eq(cfg.rto_max_ms, 4000);
	ck_assert_uint_eq(cfg.max_retries, 5);
	ck_assert_uint_eq(cfg.idle_timeout_ms, 30000);
	ck_assert_uint_eq(cfg.time_wait_ms, 1000);
	ck_assert_uint_eq(cfg.time_wait_max, 2048);
	ck_assert(cfg.has_syncookie_secret);
	for (int i = 0; i < SK_CONFIG_SECRET_LEN; i++)
		ck_assert_uint_eq(cfg.syncookie_secret[i], i);

	ck_assert_uint_eq(cfg.head_max, 4096);
	ck_assert_uint_eq(cfg.target_max, 1024);
	ck_assert_uint_eq(cfg.body_max, 0);
	ck_assert_uint_eq(cfg.fields_max, 32);
}
END_TEST

/* Every shipped example must load (the path comes from meson). */
START_TEST(test_examples)
{
	static const char *const files[] = {"sandbox.ini", "seckill.ini"};
	const char *dir = getenv("SK_CONFIG_DIR");
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX] = "";
	char path[1024];

	ck_assert_ptr_nonnull(dir);
	for (size_t i = 0; i < SK_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		ck_assert_msg(sk_config_load(&cfg, path, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_ge(cfg.nb_ports, 1);
	}
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");

	tcase_add_loop_test(tc, test_bad_file, 0, (int)SK_ARRAY_SIZE(bad_cases));
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_defaults_only_port);
	tcase_add_test(tc, test_full_file);
	tcase_add_test(tc, test_examples);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
