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
#include "sk_test.h"

#define PORT0 "[port0]\ndevice = net_tap0,iface=sk0\naddress = 198.18.0.1/24\n"
/* PORT0 plus [seckill] without tokens: items need no secret then. */
#define NOAUTH PORT0 "[seckill]\nauth = off\n"
/* NOAUTH is 5 lines: an item section starts on line 6. */
#define ITEM1 NOAUTH "[item.1]\ntotal = 10\n"

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
	{PORT0 "[port16]\ndevice = x\n", ":4: unknown section [port16]"},
	{PORT0 "[port01]\ndevice = x\n", ":4: unknown section [port01]"},
	{PORT0 "[port1x]\ndevice = x\n", ":4: unknown section [port1x]"},
	{PORT0 "[port4]\ndevice = x\naddress = 198.18.4.1/24\n",
	 "port4: ports must be numbered from port0 without gaps"},
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
	{PORT0 "[dataplane]\nlcores = 1,\n", "is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = +1\n", "is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = 1--2\n", "is not an lcore list"},
	{PORT0 "[dataplane]\nlcores = 2000\n",
	 "is not an lcore list like 1 or 1-3,6 (ids 0..1023)"},
	{PORT0 "[dataplane]\nlcores = a\n", "is not an lcore list"},
	{PORT0 "[dataplane]\ndispatch_ring = 1000\n",
	 ":5: dataplane.dispatch_ring: 1000 is not a power of two"},
	{PORT0 "[dataplane]\nmbufs = 511\nmbuf_cache = 512\n",
	 "dataplane.mbuf_cache: 512 is more than dataplane.mbufs / 1.5"},
	{PORT0 "[http]\nhead_max = 100\ntarget_max = 90\n", "http.target_max: must be at most"},
	{PORT0 "[tcp]\nidle_new_ms = 99\n", "tcp.idle_new_ms"},
	{PORT0 "[tcp]\nmax_conns_per_ip = 16777217\n", "tcp.max_conns_per_ip"},
	{PORT0 "[tcp]\nip6_prefix = 31\n", ":5: tcp.ip6_prefix: 31 is out of range 32..64"},
	{PORT0 "[tcp]\nip6_prefix = 65\n", ":5: tcp.ip6_prefix: 65 is out of range 32..64"},
	{PORT0 "[tcp]\nip6_prefix = /64\n", ":5: tcp.ip6_prefix: '/64' is not a decimal number"},
	{PORT0 "[tcp]\nchallenge_ack_per_s = 0\n",
	 ":5: tcp.challenge_ack_per_s: 0 is out of range 1..1000000"},
	{PORT0 "[tcp]\nchallenge_ack_per_s = 1000001\n",
	 "tcp.challenge_ack_per_s: 1000001 is out of range 1..1000000"},
	{PORT0 "[tcp]\nchallenge_ack_per_s = 1e3\n",
	 ":5: tcp.challenge_ack_per_s: '1e3' is not a decimal number"},
	{PORT0 "[tcp]\nchallenge_ack_conn_ms = 3600001\n",
	 ":5: tcp.challenge_ack_conn_ms: 3600001 is out of range 0..3600000"},
	{PORT0 "[tcp]\nchallenge_ack_conn_ms = -1\n",
	 "tcp.challenge_ack_conn_ms: '-1' is not a decimal number"},
	{PORT0 "[tcp]\nchallenge_ack_conn_ms = off\n",
	 "tcp.challenge_ack_conn_ms: 'off' is not a decimal number"},
	{PORT0 "[http]\nhead_timeout_ms = 3600001\n", "http.head_timeout_ms"},
	{PORT0 "[http]\nbody_timeout_ms = -1\n", "http.body_timeout_ms"},
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
	{PORT0 "gateway = 198.19.0.1\n", "port0.gateway: not a neighbour inside port0.address"},
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
	{PORT0 "address6 = 2001:2::1\n", ":4: port0.address6: '2001:2::1' is not X:X::X/prefix"},
	{PORT0 "address6 = 2001:2::g/64\n", "port0.address6: '2001:2::g/64' is not X:X::X/prefix"},
	{PORT0 "address6 = 198.18.0.1/24\n", "port0.address6: '198.18.0.1/24' is not X:X::X"},
	{PORT0 "address6 = 2001:2::1/129\n", "port0.address6: prefix /129 is out of range 1..128"},
	{PORT0 "address6 = 2001:2::1/0\n", "port0.address6: prefix /0 is out of range 1..128"},
	{PORT0 "address6 = 2001:2::1/x\n", "port0.address6: '2001:2::1/x' is not X:X::X/prefix"},
	{PORT0 "address6 = ::/64\n", "port0.address6: :: is not a global unicast address"},
	{PORT0 "address6 = ::1/128\n", "port0.address6: ::1 is not a global unicast address"},
	{PORT0 "address6 = ff02::1/64\n", "port0.address6: ff02::1 is not a global unicast"},
	{PORT0 "address6 = fe80::1/64\n", "port0.address6: fe80::1 is not a global unicast"},
	{PORT0 "address6 = ::ffff:198.18.0.1/96\n", "is not a global unicast address"},
	{PORT0 "address6 = 2001:2::/64\n",
	 "port0.address6: 2001:2:: is the subnet-router anycast address of /64"},
	{PORT0 "address6 = 2001:2::1/64\n[port1]\ndevice = net_tap1\naddress = 198.18.1.1/24\n"
	       "address6 = 2001:2::1/64\n",
	 "port1.address6: same address as port0"},

	/* [seckill] */
	{PORT0 "[seckill]\nauth = maybe\n", ":5: seckill.auth: 'maybe' is not on/off"},
	{PORT0 "[seckill]\nsecret_file = /a b\n",
	 ":5: seckill.secret_file: blanks and control characters are not allowed"},
	{PORT0 "[seckill]\nsecret_file =\n", ":5: seckill.secret_file: empty value"},
	{PORT0 "[seckill]\ntoken_skew_s = 86401\n",
	 ":5: seckill.token_skew_s: 86401 is out of range 0..86400"},
	{PORT0 "[seckill]\nmax_items = 0\n", "seckill.max_items: 0 is out of range 1..65536"},
	{PORT0 "[seckill]\nmax_items = 65537\n", "seckill.max_items: 65537 is out of range"},
	{PORT0 "[seckill]\ndedup_slots = 1023\n",
	 "seckill.dedup_slots: 1023 is out of range 1024..2147483648"},
	{PORT0 "[seckill]\ndedup_slots = 4294967296\n", "seckill.dedup_slots: 4294967296 is out"},
	{PORT0 "[seckill]\nstatus_bits = 9\n", "seckill.status_bits: 9 is out of range 10..23"},
	{PORT0 "[seckill]\nstatus_bits = 24\n", "seckill.status_bits: 24 is out of range"},
	{PORT0 "[cluster]\nmember_id = 32\n", "cluster.member_id: 32 is out of range 0..31"},
	{PORT0 "[seckill]\norder_ring = 65535\n",
	 ":5: seckill.order_ring: 65535 is not a power of two"},
	{PORT0 "[seckill]\norder_ring = 32\n",
	 "seckill.order_ring: 32 is out of range 64..16777216"},
	{PORT0 "[seckill]\nack_wait_ms = 0\n",
	 ":5: seckill.ack_wait_ms: 0 is out of range 1..60000"},
	{PORT0 "[seckill]\nack_wait_ms = 60001\n", "seckill.ack_wait_ms: 60001 is out of range"},
	{PORT0 "[seckill]\nstore = /a b\n", ":5: seckill.store: blanks and control characters"},
	{PORT0 "[seckill]\nstore =\n", ":5: seckill.store: empty value"},
	{PORT0 "[seckill]\nack = queued\nack = durable\n", ":6: seckill.ack: set twice"},
	{PORT0 "[seckill]\nack = later\n", "seckill.ack: 'later' is not queued or durable"},
	{PORT0 "[proxy]\nprotocol = v3\n", ":5: proxy.protocol: 'v3' is not one of none, v1, v2"},
	{PORT0 "[proxy]\nforwarded = x-forwarded-for\n",
	 "proxy.forwarded: 'x-forwarded-for' is not one of none, xff, forwarded"},
	{PORT0 "[proxy]\ntrusted = 198.18.0.1/15\n",
	 ":5: proxy.trusted: entry 1 \"198.18.0.1/15\": "},
	{PORT0 "[proxy]\ntrusted = 198.18.0.0/15 198.18.0.300\n", "proxy.trusted: entry 2 "},
	{PORT0 "[proxy]\nprotocol = v2\n", "proxy.trusted: required when proxy.protocol"},
	{PORT0 "[proxy]\nforwarded = xff\n", "proxy.trusted: required when"},
	{PORT0 "[proxy]\nbogus = 1\n", "proxy.bogus"},
	{PORT0 "[seckill]\nglobal_rate = 1000000001\n",
	 "seckill.global_rate: 1000000001 is out of range 0..1000000000"},
	{PORT0 "[seckill]\nglobal_burst = x\n",
	 "seckill.global_burst: 'x' is not a decimal number"},
	{PORT0 "[seckill]\nitem_rate = -1\n", "seckill.item_rate: '-1' is not a decimal number"},
	{PORT0 "[seckill]\nitem_burst = 1000000001\n", "seckill.item_burst: 1000000001 is out"},
	{PORT0 "[seckill]\nip_rate = 1e3\n", "seckill.ip_rate: '1e3' is not a decimal number"},
	{PORT0 "[seckill]\nip_burst = 1000000001\n", "seckill.ip_burst: 1000000001 is out"},
	{PORT0 "[seckill]\nip_slots = 1000\n", ":5: seckill.ip_slots: 1000 is not a power of two"},
	{PORT0 "[seckill]\nip_slots = 2\n", "seckill.ip_slots: 2 is out of range 0 or 4..67108864"},
	{PORT0 "[seckill]\nip_slots = 134217728\n", "seckill.ip_slots: 134217728 is out of range"},
	{PORT0 "[seckill]\nauth = on\nauth = off\n", ":6: seckill.auth: set twice"},
	{PORT0 "[seckill]\nip_rate = 5\nip_slots = 0\n",
	 "seckill.ip_slots: 0 leaves no room for the per-IP limit that seckill.ip_rate sets"},
	{PORT0 "[seckill]\nuser_slots = 1000\n",
	 ":5: seckill.user_slots: 1000 is not a power of two"},
	{PORT0 "[seckill]\nuser_rate = 2000000000\n",
	 "seckill.user_rate: 2000000000 is out of range"},
	{PORT0 "[seckill]\nuser_slots = 0\n",
	 "seckill.user_slots: 0 leaves no room for the per-user limit that seckill.user_rate sets"},
	{PORT0 "[seckill]\ndeny_max = 4194305\n", "seckill.deny_max: 4194305 is out of range"},
	{PORT0 "[item.1]\ntotal = 1\n",
	 "seckill.secret_file: required when seckill.auth = on and items are configured or come "
	 "from store.path"},
	{PORT0 "[seckill]\nstore = /tmp/sk-store\n",
	 "seckill.secret_file: required when seckill.auth = on and items are configured or come "
	 "from store.path"},
	{PORT0 "[seckill]\nmax_items = 1\nauth = off\n[item.1]\ntotal = 1\n[item.2]\ntotal = 1\n",
	 "seckill.max_items: 1 is less than the 2 [item.<id>] sections"},

	/* [item.<id>] */
	{NOAUTH "[item.0]\ntotal = 1\n",
	 ":6: [item.0]: the item id must be a decimal 1..4294967295"},
	{NOAUTH "[item.4294967296]\n", ":6: [item.4294967296]: the item id must be"},
	{NOAUTH "[item.01]\n", "[item.01]: the item id must be"},
	{NOAUTH "[item.]\n", "[item.]: the item id must be"},
	{NOAUTH "[item.1x]\n", "[item.1x]: the item id must be"},
	{NOAUTH "[item]\n", ":6: unknown section [item]"},
	{ITEM1 "[item.1]\n", ":8: [item.1]: item 1 already defined at line 6"},
	{NOAUTH "[item.7]\nname = x\n", ":6: item.7.total: required"},
	{ITEM1 "total = 11\n", ":8: item.1.total: set twice"},
	{ITEM1 "colour = red\n", ":8: item.1.colour: unknown key"},
	{NOAUTH "[item.1]\ntotal = 281474976710657\n",
	 ":7: item.1.total: 281474976710657 is out of range 0..281474976710656"},
	{ITEM1 "price = 9007199254740993\n",
	 "item.1.price: 9007199254740993 is out of range 0..9007199254740992"},
	{ITEM1 "price = 9.99\n", "item.1.price: '9.99' is not a decimal number"},
	{ITEM1 "per_user_limit = 0\n", "item.1.per_user_limit: 0 is out of range 1..1000000"},
	{ITEM1 "gate = maybe\n", "item.1.gate: 'maybe' is not on/off"},
	{ITEM1 "name = a\"b\n", ":8: item.1.name: control characters, '\"' and '\\' are not"},
	{ITEM1 "name = a\\b\n", "item.1.name: control characters"},
	{ITEM1 "name = "
	       "0123456789012345678901234567890123456789012345678901234567890123\n",
	 "item.1.name: longer than 63 characters"},
	{ITEM1 "start = never\n",
	 ":8: item.1.start: 'never' is not +SECONDS[smhd] (0..315360000 s), unix seconds "
	 "(1..9000000000), YYYY-MM-DDTHH:MM:SSZ"},
	{ITEM1 "start = +1w\n", "item.1.start: '+1w' is not +SECONDS"},
	{ITEM1 "start = +3651d\n", "item.1.start: '+3651d' is not +SECONDS"},
	{ITEM1 "start = 2026-13-01T00:00:00Z\n", "item.1.start: '2026-13-01T00:00:00Z' is not"},
	{ITEM1 "start = 2026-11-26 12:00:00\n", "item.1.start: '2026-11-26 12:00:00' is not"},
	{ITEM1 "start = -5\n", "item.1.start: '-5' is not +SECONDS"},
	{ITEM1 "start = +315360001\n", "item.1.start: '+315360001' is not +SECONDS"},
	{ITEM1 "start = 9000000001\n", "item.1.start: '9000000001' is not"},
	{ITEM1 "start = 0\n", "item.1.start: '0' is not"},
	{ITEM1 "start = + 5\n", "item.1.start: '+ 5' is not"},
	{ITEM1 "end = soon\n", "item.1.end: 'soon' is not +SECONDS[smhd] (0..315360000 s), unix "
			       "seconds (1..9000000000), YYYY-MM-DDTHH:MM:SSZ or never"},
	{ITEM1 "start = +10\nend = +10\n", ":6: item.1.end: must be after item.1.start"},
	{ITEM1 "start = 2000000000\nend = 1999999999\n", "item.1.end: must be after item.1.start"},
	{ITEM1 "end = +0\n", "item.1.end: must be after item.1.start"},
	{ITEM1 "batch_max = 16777217\n", "item.1.batch_max: 16777217 is out of range 0..16777216"},
	{ITEM1 "dedup_slots = 1000\n",
	 ":6: item.1.dedup_slots: 1000 is below the minimum slice of 1024"},
	{NOAUTH "dedup_slots = 2048\n[item.1]\ntotal = 1\ndedup_slots = 4096\n",
	 ":7: item.1.dedup_slots: 4096 is more than seckill.dedup_slots (2048)"},
	{ITEM1 "dedup_slots = 2147483649\n", "item.1.dedup_slots: 2147483649 is out of range"},
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
	ck_assert_uint_eq(cfg.challenge_ack_per_s, 0);
	/* ... except the keys where 0 is a value of its own */
	ck_assert_uint_eq(cfg.max_conns_per_ip, 1024);
	ck_assert_uint_eq(cfg.ip6_prefix, 64);
	ck_assert_uint_eq(cfg.challenge_ack_conn_ms, 500);
	ck_assert_uint_eq(cfg.head_timeout_ms, 10000);
	ck_assert_uint_eq(cfg.body_timeout_ms, 10000);
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
				"address = 198.19.2.3/16\n"
				"address6 = 2001:2:0:7::3/64\n"
				"gateway = 198.19.0.1\n"
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
				"idle_new_ms = 5000\n"
				"max_conns_per_ip = 0\n"
				"ip6_prefix = 56\n"
				"time_wait_ms = 1000\n"
				"time_wait_max = 2048\n"
				"challenge_ack_per_s = 1000\n"
				"challenge_ack_conn_ms = 0\n"
				"syncookie_secret = 000102030405060708090a0b0c0d0E0F\n"
				"[http]\n"
				"head_max = 4096\n"
				"target_max = 1024\n"
				"body_max = 0\n"
				"fields_max = 32\n"
				"head_timeout_ms = 2500\n"
				"body_timeout_ms = 0\n";

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
	ck_assert_uint_eq(cfg.ports[0].addr, 0xc6130203u);
	ck_assert_uint_eq(cfg.ports[0].prefix, 16);
	ck_assert_uint_eq(cfg.ports[0].gateway, 0xc6130001u);
	static const uint8_t a6[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 3};
	ck_assert(cfg.ports[0].has_addr6);
	ck_assert_mem_eq(cfg.ports[0].addr6, a6, 16);
	ck_assert_uint_eq(cfg.ports[0].prefix6, 64);
	ck_assert(!cfg.ports[1].has_addr6);
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
	ck_assert_uint_eq(cfg.idle_new_ms, 5000);
	ck_assert_uint_eq(cfg.max_conns_per_ip, 0); /* 0 is a value: no cap */
	ck_assert_uint_eq(cfg.ip6_prefix, 56);
	ck_assert_uint_eq(cfg.head_timeout_ms, 2500);
	ck_assert_uint_eq(cfg.body_timeout_ms, 0);
	ck_assert_uint_eq(cfg.time_wait_ms, 1000);
	ck_assert_uint_eq(cfg.time_wait_max, 2048);
	ck_assert_uint_eq(cfg.challenge_ack_per_s, 1000);
	ck_assert_uint_eq(cfg.challenge_ack_conn_ms, 0); /* 0 is a value: no per-connection limit */
	ck_assert(cfg.has_syncookie_secret);
	for (int i = 0; i < SK_CONFIG_SECRET_LEN; i++)
		ck_assert_uint_eq(cfg.syncookie_secret[i], i);

	ck_assert_uint_eq(cfg.head_max, 4096);
	ck_assert_uint_eq(cfg.target_max, 1024);
	ck_assert_uint_eq(cfg.body_max, 0);
	ck_assert_uint_eq(cfg.fields_max, 32);
}
END_TEST

static const char seckill_text[] = PORT0 "[seckill]\n"
					 "auth = on\n"
					 "secret_file = /etc/seckill/token.secret\n"
					 "token_skew_s = 30\n"
					 "max_items = 3\n"
					 "dedup_slots = 1048576\n"
					 "status_bits = 20\n"
					 "order_ring = 1024\n"
					 "ack = queued\n"
					 "ack_wait_ms = 250\n"
					 "store = /var/lib/seckill/orders\n"
					 "global_rate = 100000\n"
					 "global_burst = 200000\n"
					 "item_rate = 50000\n"
					 "item_burst = 0\n"
					 "ip_rate = 20\n"
					 "ip_burst = 40\n"
					 "ip_slots = 1024\n"
					 "[cluster]\n"
					 "member_id = 3\n"
					 "[item.1001]\n"
					 "name = phone 15 (black, 256 GB)\n"
					 "total = 1000\n"
					 "price = 99900\n"
					 "per_user_limit = 2\n"
					 "start = +10\n"
					 "end = +1h\n"
					 "batch_max = 64\n"
					 "dedup_slots = 16384\n"
					 "gate = on\n"
					 "[item.4294967295]\n"
					 "total = 0\n"
					 "start = 1800000000\n"
					 "end = 2027-01-15T08:10:00Z\n"
					 "[item.7]\n"
					 "total = 281474976710656\n"
					 "start = 1700000000\n";

START_TEST(test_seckill_file)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX] = "";
	const struct sk_config_item *it;
	int rc;

	rc = load_text(seckill_text, &cfg, err, sizeof(err));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert(cfg.auth);
	ck_assert_str_eq(cfg.secret_file, "/etc/seckill/token.secret");
	ck_assert_uint_eq(cfg.token_skew_s, 30);
	ck_assert_uint_eq(cfg.max_items, 3);
	ck_assert_uint_eq(cfg.dedup_slots, 1048576);
	ck_assert_uint_eq(cfg.status_bits, 20);
	ck_assert_uint_eq(cfg.member_id, 3);
	ck_assert_uint_eq(cfg.order_ring, 1024);
	ck_assert_uint_eq(cfg.ack, SK_CONFIG_ACK_QUEUED); /* said so, despite the store */
	ck_assert_uint_eq(cfg.ack_wait_ms, 250);
	ck_assert_str_eq(cfg.store, "/var/lib/seckill/orders");
	ck_assert_uint_eq(cfg.global_rate, 100000);
	ck_assert_uint_eq(cfg.global_burst, 200000);
	ck_assert_uint_eq(cfg.item_rate, 50000);
	ck_assert_uint_eq(cfg.item_burst, 0);
	ck_assert_uint_eq(cfg.ip_rate, 20);
	ck_assert_uint_eq(cfg.ip_burst, 40);
	ck_assert_uint_eq(cfg.ip_slots, 1024);

	ck_assert_uint_eq(cfg.nb_items, 3);
	it = &cfg.items[0];
	ck_assert_uint_eq(it->id, 1001);
	ck_assert_str_eq(it->name, "phone 15 (black, 256 GB)");
	ck_assert_uint_eq(it->total, 1000);
	ck_assert_uint_eq(it->price, 99900);
	ck_assert_uint_eq(it->per_user_limit, 2);
	ck_assert(it->start.relative && !it->start.never);
	ck_assert_int_eq(it->start.s, 10);
	ck_assert(it->end.relative && !it->end.never);
	ck_assert_int_eq(it->end.s, 3600);
	ck_assert_uint_eq(it->batch_max, 64);
	ck_assert_uint_eq(it->dedup_slots, 16384);
	ck_assert(it->gate);

	it = &cfg.items[1];
	ck_assert_uint_eq(it->id, 4294967295u);
	ck_assert_str_eq(it->name, "");
	ck_assert_uint_eq(it->total, 0);
	ck_assert_uint_eq(it->per_user_limit, 1);
	ck_assert(!it->start.relative);
	ck_assert_int_eq(it->start.s, 1800000000);
	ck_assert(!it->end.relative && !it->end.never);
	ck_assert_int_eq(it->end.s, 1800000600);
	ck_assert_uint_eq(it->batch_max, 0);
	ck_assert_uint_eq(it->dedup_slots, 0);
	ck_assert(!it->gate); /* off by default */

	it = &cfg.items[2];
	ck_assert_uint_eq(it->id, 7);
	ck_assert_uint_eq(it->total, UINT64_C(1) << 48);
	ck_assert(it->end.never);
}
END_TEST

/* [proxy]: the choices and the trusted list; off by default. */
START_TEST(test_proxy_section)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_addr a;
	int rc;

	rc = load_text(PORT0, &cfg, err, sizeof(err));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert_uint_eq(cfg.proxy_protocol, SK_CONFIG_PROXY_NONE);
	ck_assert_uint_eq(cfg.forwarded, SK_CONFIG_FWD_NONE);
	ck_assert_uint_eq(cfg.trusted.n, 0);
	rc = load_text(PORT0 "[proxy]\nprotocol = v2\nforwarded = forwarded\n"
			     "trusted = 198.18.0.0/24, 2001:2::/48\n",
		       &cfg, err, sizeof(err));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert_uint_eq(cfg.proxy_protocol, SK_CONFIG_PROXY_V2);
	ck_assert_uint_eq(cfg.forwarded, SK_CONFIG_FWD_FORWARDED);
	ck_assert_uint_eq(cfg.trusted.n, 2);
	ck_assert_int_eq(sk_addr_parse("198.18.0.9", 10, &a), SK_ADDR_OK);
	ck_assert(sk_prefix_list_contains(&cfg.trusted, &a));
	rc = load_text(PORT0 "[proxy]\nprotocol = v1\nforwarded = xff\ntrusted = 198.18.0.1\n",
		       &cfg, err, sizeof(err));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, err);
	ck_assert_uint_eq(cfg.proxy_protocol, SK_CONFIG_PROXY_V1);
	ck_assert_uint_eq(cfg.forwarded, SK_CONFIG_FWD_XFF);
}
END_TEST

START_TEST(test_seckill_defaults)
{
	struct sk_config cfg;
	char err[SK_CONFIG_ERR_MAX] = "";
	const struct sk_config_item *it;

	ck_assert_int_eq(load_text(PORT0, &cfg, err, sizeof(err)), 0);
	ck_assert(cfg.auth);
	ck_assert_str_eq(cfg.secret_file, "");
	ck_assert_uint_eq(cfg.token_skew_s, 5);
	ck_assert_uint_eq(cfg.max_items, 64);
	ck_assert_uint_eq(cfg.dedup_slots, 4194304);
	ck_assert_uint_eq(cfg.status_bits, 22);
	ck_assert_uint_eq(cfg.member_id, 0);
	ck_assert_uint_eq(cfg.order_ring, 65536);
	ck_assert_uint_eq(cfg.ack, SK_CONFIG_ACK_QUEUED);
	ck_assert_uint_eq(cfg.ack_wait_ms, 500);
	ck_assert_str_eq(cfg.store, "");

	/* ack left out follows the store: durable with one, queued without. */
	ck_assert_int_eq(
		load_text(PORT0 "[seckill]\nauth = off\nstore = /tmp/st\n", &cfg, err, sizeof(err)),
		0);
	ck_assert_uint_eq(cfg.ack, SK_CONFIG_ACK_DURABLE);
	ck_assert_int_eq(load_text(PORT0 "[seckill]\nack = durable\n", &cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.ack, SK_CONFIG_ACK_DURABLE);
	ck_assert_uint_eq(cfg.global_rate, 0);
	ck_assert_uint_eq(cfg.item_rate, 0);
	ck_assert_uint_eq(cfg.ip_rate, 0);
	ck_assert_uint_eq(cfg.ip_slots, 16384);
	ck_assert_uint_eq(cfg.user_rate, 10);
	ck_assert_uint_eq(cfg.user_burst, 20);
	ck_assert_uint_eq(cfg.user_slots, 65536);
	ck_assert_uint_eq(cfg.deny_max, 65536);
	ck_assert_uint_eq(cfg.nb_items, 0);

	/* An item with only its total: limit 1, open from the start, no end. */
	ck_assert_int_eq(load_text(ITEM1, &cfg, err, sizeof(err)), 0);
	ck_assert(!cfg.auth);
	ck_assert_uint_eq(cfg.nb_items, 1);
	it = &cfg.items[0];
	ck_assert_uint_eq(it->id, 1);
	ck_assert_uint_eq(it->total, 10);
	ck_assert_uint_eq(it->price, 0);
	ck_assert_uint_eq(it->per_user_limit, 1);
	ck_assert(it->start.relative && it->start.s == 0);
	ck_assert(it->end.never);

	/* ip_slots 0 is fine while no per-IP rate is set; rates 0 are off. */
	ck_assert_int_eq(
		load_text(PORT0 "[seckill]\nip_slots = 0\nip_rate = 0\n", &cfg, err, sizeof(err)),
		0);
	ck_assert_uint_eq(cfg.ip_slots, 0);

	/* Items in file order, the other sections in between do not matter. */
	ck_assert_int_eq(load_text(NOAUTH "[item.3]\ntotal = 1\n[tcp]\nmss = 1400\n[item.2]\n"
					  "total = 2\n",
				   &cfg, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(cfg.nb_items, 2);
	ck_assert_uint_eq(cfg.items[0].id, 3);
	ck_assert_uint_eq(cfg.items[1].id, 2);
	ck_assert_uint_eq(cfg.items[1].total, 2);
	ck_assert_uint_eq(cfg.mss, 1400);
}
END_TEST

START_TEST(test_item_limit)
{
	/* SK_CONFIG_MAX_ITEMS items load; one more is refused at its line. */
	size_t cap = 64 * (SK_CONFIG_MAX_ITEMS + 1) + 256;
	char *text = malloc(cap);
	struct sk_config *cfg = malloc(sizeof(*cfg));
	char err[SK_CONFIG_ERR_MAX] = "";
	size_t n;

	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(cfg);
	n = (size_t)snprintf(text, cap, "%s", NOAUTH "max_items = 1000\n");
	for (int i = 1; i <= SK_CONFIG_MAX_ITEMS; i++)
		n += (size_t)snprintf(text + n, cap - n, "[item.%d]\ntotal = %d\n", i, i);
	ck_assert_int_eq(load_text(text, cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg->nb_items, SK_CONFIG_MAX_ITEMS);
	ck_assert_uint_eq(cfg->items[SK_CONFIG_MAX_ITEMS - 1].total, SK_CONFIG_MAX_ITEMS);
	snprintf(text + n, cap - n, "[item.%d]\ntotal = 1\n", SK_CONFIG_MAX_ITEMS + 1);
	ck_assert_int_eq(load_text(text, cfg, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "more than 256 items") != NULL, "%s", err);
	free(text);
	free(cfg);
}
END_TEST

START_TEST(test_port_limit)
{
	/* [port0] .. [port15] load, in order; each keeps its own keys. */
	char text[SK_CONFIG_MAX_PORTS * 96 + 64];
	struct sk_config *cfg = malloc(sizeof(*cfg));
	char err[SK_CONFIG_ERR_MAX] = "";
	size_t n = 0;

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(SK_CONFIG_MAX_PORTS, 16);
	for (int i = 0; i < SK_CONFIG_MAX_PORTS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "[port%d]\ndevice = net_memif%d\naddress = 198.18.%d.1/24\n",
				      i, i, i);
	snprintf(text + n, sizeof(text) - n, "[seckill]\nauth = off\n");
	ck_assert_int_eq(load_text(text, cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg->nb_ports, SK_CONFIG_MAX_PORTS);
	ck_assert_str_eq(cfg->ports[15].device, "net_memif15");
	ck_assert_uint_eq(cfg->ports[15].addr, (198u << 24) | (18u << 16) | (15u << 8) | 1u);
	ck_assert_uint_eq(cfg->ports[15].rx_desc, 1024);
	free(cfg);
}
END_TEST

/* The window of an item, relative times counted from the base. */
struct window_case {
	struct sk_config_time start, end;
	int64_t base_ns;
	int rc;
	int64_t start_ns, end_ns;
};

#define S(x) ((int64_t)(x)*1000000000LL)
static const struct window_case window_cases[] = {
	{{0, true, false}, {0, false, true}, S(1700000000), 0, S(1700000000), INT64_MAX},
	{{10, true, false},
	 {70, true, false},
	 S(1700000000) + 5,
	 0,
	 S(1700000010) + 5,
	 S(1700000070) + 5},
	{{1600000000, false, false},
	 {1600000001, false, false},
	 S(1700000000),
	 0,
	 S(1600000000),
	 S(1600000001)},
	/* absolute start, relative end: fine if the end comes later ... */
	{{1700000000, false, false},
	 {5, true, false},
	 S(1700000000),
	 0,
	 S(1700000000),
	 S(1700000005)},
	/* ... refused otherwise (the loader cannot know the base) */
	{{1800000000, false, false}, {5, true, false}, S(1700000000), -EINVAL, 0, 0},
	{{5, true, false}, {1700000004, false, false}, S(1700000000), -EINVAL, 0, 0},
	{{0, true, false},
	 {SK_CONFIG_TIME_ABS_MAX, false, false},
	 S(1700000000),
	 0,
	 S(1700000000),
	 S(SK_CONFIG_TIME_ABS_MAX)},
};

START_TEST(test_item_window)
{
	const struct window_case *wc = &window_cases[_i];
	struct sk_config_item it = {.id = 1, .total = 1, .start = wc->start, .end = wc->end};
	int64_t a = 0, b = 0;

	ck_assert_int_eq(sk_config_item_window(&it, wc->base_ns, &a, &b), wc->rc);
	if (wc->rc == 0) {
		ck_assert_int_eq(a, wc->start_ns);
		ck_assert_int_eq(b, wc->end_ns);
	}
}
END_TEST

/* The token secret file: one trailing newline dropped, >= 32 bytes. */
struct secret_case {
	const char *content;
	size_t content_len;
	int rc;
	size_t len; /* secret bytes kept */
	const char *needle;
};

#define SECRET32 "0123456789abcdef0123456789abcdef"
static const struct secret_case secret_cases[] = {
	{SECRET32, 32, 0, 32, NULL},
	{SECRET32 "\n", 33, 0, 32, NULL},
	{SECRET32 "\r\n", 34, 0, 32, NULL},
	{SECRET32 "\n\n", 34, 0, 33, NULL},   /* only one newline is dropped */
	{"\0\1\2" SECRET32, 35, 0, 35, NULL}, /* any bytes */
	{"0123456789abcdef0123456789abcde\n", 32, -EINVAL, 0, ": 31 bytes, at least 32 are needed"},
	{"", 0, -EINVAL, 0, ": 0 bytes, at least 32"},
};

START_TEST(test_secret_file)
{
	const struct secret_case *sc = &secret_cases[_i];
	static uint8_t buf[SK_CONFIG_TOKEN_SECRET_MAX];
	char path[] = "/tmp/sk_config_secret_XXXXXX";
	char err[SK_CONFIG_ERR_MAX] = "";
	size_t len = 0;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sc->content, sc->content_len), (ssize_t)sc->content_len);
	close(fd);
	ck_assert_int_eq(sk_config_read_secret(path, buf, &len, err, sizeof(err)), sc->rc);
	if (sc->rc == 0) {
		ck_assert_uint_eq(len, sc->len);
		ck_assert_mem_eq(buf, sc->content, len);
	} else {
		ck_assert_msg(strstr(err, sc->needle) != NULL, "'%s' lacks '%s'", err, sc->needle);
		ck_assert_msg(strncmp(err, "seckill.secret_file: /tmp/", 26) == 0, "%s", err);
	}
	unlink(path);
}
END_TEST

START_TEST(test_secret_file_errors)
{
	static uint8_t buf[SK_CONFIG_TOKEN_SECRET_MAX];
	static char big[SK_CONFIG_TOKEN_SECRET_MAX + 1];
	char path[] = "/tmp/sk_config_secret_XXXXXX";
	char err[SK_CONFIG_ERR_MAX] = "";
	size_t len = 0;
	int fd;

	ck_assert_int_eq(sk_config_read_secret("/nonexistent/secret", buf, &len, err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err,
			 "seckill.secret_file: /nonexistent/secret: No such file or directory");

	/* exactly the maximum is fine, one byte more is not */
	memset(big, 'k', sizeof(big));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, big, SK_CONFIG_TOKEN_SECRET_MAX), SK_CONFIG_TOKEN_SECRET_MAX);
	ck_assert_int_eq(sk_config_read_secret(path, buf, &len, NULL, 0), 0);
	ck_assert_uint_eq(len, SK_CONFIG_TOKEN_SECRET_MAX);
	ck_assert_int_eq(write(fd, big, 1), 1);
	close(fd);
	ck_assert_int_eq(sk_config_read_secret(path, buf, &len, err, sizeof(err)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, ": longer than 4096 bytes"));
	unlink(path);
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
	tcase_add_test(tc, test_proxy_section);
	tcase_add_test(tc, test_examples);
	tcase_add_test(tc, test_seckill_file);
	tcase_add_test(tc, test_seckill_defaults);
	tcase_add_test(tc, test_item_limit);
	tcase_add_test(tc, test_port_limit);
	tcase_add_loop_test(tc, test_item_window, 0, (int)SK_ARRAY_SIZE(window_cases));
	tcase_add_loop_test(tc, test_secret_file, 0, (int)SK_ARRAY_SIZE(secret_cases));
	tcase_add_test(tc, test_secret_file_errors);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(config_suite)
