/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lg_opts - seckill-loadgen's command line: a table of good command
 * lines and the fields they set, a table of bad ones and the message each
 * must give; then the binary itself (its path is argv[1]) must exit 2 with
 * that message on stderr before starting the EAL.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lg_opts.h"
#include "lg_tokens.h"
#include "sk_test.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define MAX_ARGS       48

static const char *loadgen_bin;

/* split - @line into words (no quoting) at @argv, argv[0] = "x". */
static int
split(const char *line, char *store, size_t cap, char **argv)
{
	int argc = 0;

	snprintf(store, cap, "%s", line);
	argv[argc++] = "x";
	for (char *t = strtok(store, " "); t != NULL && argc < MAX_ARGS - 1; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return argc;
}

static int
parse(const char *line, struct lg_opts *o, char *err, size_t errlen)
{
	static char store[1024];
	char *argv[MAX_ARGS];
	int argc = split(line, store, sizeof(store), argv);

	lg_opts_defaults(o);
	err[0] = '\0';
	return lg_opts_parse(o, argc, argv, err, errlen);
}

/* ------------------------------------------------------------ good lines */

START_TEST(test_defaults)
{
	struct lg_opts o;
	char err[256];

	ck_assert_int_eq(parse("--server 198.18.0.1", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.server_ip, IP(198, 18, 0, 1));
	ck_assert_uint_eq(o.server_port, 80);
	ck_assert_uint_eq(o.client_ip, IP(198, 18, 1, 1));
	ck_assert_uint_eq(o.client_count, 254);
	ck_assert_uint_eq(o.prefix_len, 23);
	ck_assert_uint_eq(o.conns, 64);
	ck_assert_uint_eq(o.depth, 1);
	ck_assert_uint_eq(o.inflight_max, 0);
	ck_assert_uint_eq(o.mix[LG_REQ_BUY], 1);
	ck_assert_int_eq(o.shape, LG_SHAPE_CLOSED);
	ck_assert(!o.short_conns && !o.json && !o.quiet);
	ck_assert(o.duration_s == 10);
	/* the default clients follow the server: the next /24, else the one before */
	ck_assert_int_eq(parse("--server 198.19.0.1", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.client_ip, IP(198, 19, 1, 1));
	ck_assert_uint_eq(o.prefix_len, 23);
	ck_assert_int_eq(parse("--server 198.19.255.1", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.client_ip, IP(198, 19, 254, 1));
	ck_assert_uint_eq(o.prefix_len, 23);
}
END_TEST

START_TEST(test_good)
{
	struct lg_opts o;
	char err[256];

	ck_assert_int_eq(
		parse("--server=198.18.0.1:8080 --clients 198.18.64.0/18 --sports 2000-2999 "
		      "--mix healthz=1,buy=9,order=0 --depth 32 --conns 1000 --inflight 512 --rate "
		      "5e5 "
		      "--ramp 2.5 --rate-from 10 --requests 1000000 --json --quiet "
		      "--user-pick random --seed 7",
		      &o, err, sizeof(err)),
		0);
	ck_assert_uint_eq(o.server_port, 8080);
	ck_assert_uint_eq(o.client_ip, IP(198, 18, 64, 1));
	ck_assert_uint_eq(o.client_count, 16382);
	ck_assert_uint_eq(o.prefix_len, 17);
	ck_assert_uint_eq(o.sport_min, 2000);
	ck_assert_uint_eq(o.sport_max, 2999);
	ck_assert_uint_eq(o.mix[LG_REQ_HEALTHZ], 1);
	ck_assert_uint_eq(o.mix[LG_REQ_BUY], 9);
	ck_assert_uint_eq(o.mix[LG_REQ_ORDER], 0);
	ck_assert_uint_eq(o.depth, 32);
	ck_assert_uint_eq(o.inflight_max, 512);
	ck_assert_int_eq(o.shape, LG_SHAPE_RATE);
	ck_assert(o.rate == 5e5 && o.ramp_s == 2.5 && o.rate_from == 10);
	ck_assert_uint_eq(o.requests, 1000000);
	ck_assert(o.json && o.quiet);
	ck_assert_int_eq(o.user_pick, LG_USER_RANDOM);
	ck_assert_uint_eq(o.seed, 7);
	ck_assert_uint_eq(o.gate_pct, 0);

	/* --gate: the share of the tokens with the gate claim, index mod 100 */
	ck_assert_int_eq(parse("--server 198.18.0.1 --gate 70", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.gate_pct, 70);
	ck_assert(lg_tokens_gated(69, 70) && !lg_tokens_gated(70, 70) && lg_tokens_gated(100, 70));
	ck_assert(!lg_tokens_gated(0, 0) && lg_tokens_gated(99, 100));

	/* --cps makes the connections short; a /31 and a /32 are all hosts */
	ck_assert_int_eq(parse("--server 198.18.0.1 --cps 1000 --step 1 --clients 198.18.1.0/31",
			       &o, err, sizeof(err)),
			 0);
	ck_assert(o.short_conns);
	ck_assert_int_eq(o.shape, LG_SHAPE_CPS);
	ck_assert_uint_eq(o.client_ip, IP(198, 18, 1, 0));
	ck_assert_uint_eq(o.client_count, 2);
	ck_assert_int_eq(parse("--server 198.18.0.1 --clients 198.18.0.9/32 --conns 1", &o, err,
			       sizeof(err)),
			 0);
	ck_assert_uint_eq(o.client_count, 1);
	ck_assert_uint_eq(o.prefix_len, 28);
	ck_assert_int_eq(parse("--server 198.18.0.1 --user-base 18446744073709551615 --users 1", &o,
			       err, sizeof(err)),
			 0);
	/* hostile modes: the attack's block after the clients' by default */
	ck_assert_int_eq(parse("--server 198.19.0.1 --attack synflood --attack-rate 20000", &o, err,
			       sizeof(err)),
			 0);
	ck_assert_int_eq(o.attack, LG_ATTACK_SYNFLOOD);
	ck_assert(o.attack_rate == 20000 && !o.mix_given);
	ck_assert_uint_eq(o.attack_ip, IP(198, 19, 2, 1));
	ck_assert_uint_eq(o.attack_count, 254);
	ck_assert_uint_eq(o.attack_prefix, 22);
	ck_assert_int_eq(parse("--server 198.19.0.1 --attack holders --attack-from 198.19.2.7/32 "
			       "--attackers 100 --drip-ms 100 --mix healthz=1 --conns 8",
			       &o, err, sizeof(err)),
			 0);
	ck_assert_int_eq(o.attack, LG_ATTACK_HOLDERS);
	ck_assert(o.mix_given);
	ck_assert_uint_eq(o.attack_ip, IP(198, 19, 2, 7));
	ck_assert_uint_eq(o.attack_count, 1);
	ck_assert_uint_eq(o.attackers, 100);
	ck_assert_uint_eq(o.drip_ms, 100);
	ck_assert(o.attack_rate == 1000);
	/* the server's /24 is skipped */
	ck_assert_int_eq(parse("--server 198.18.2.1 --clients 198.18.1.0/24 --attack garbage", &o,
			       err, sizeof(err)),
			 0);
	ck_assert_uint_eq(o.attack_ip, IP(198, 18, 3, 1));
	ck_assert_int_eq(o.attack, LG_ATTACK_GARBAGE);
	ck_assert_uint_eq(o.attackers, 64);
	ck_assert_int_eq(parse("--help", &o, err, sizeof(err)), 1);
	ck_assert_int_eq(parse("--server 198.18.0.1 -h", &o, err, sizeof(err)), 1);
}
END_TEST

/* IPv6: a server, its port, the one client address and the Host text. */
struct good6_case {
	const char *line;
	const char *server, *client, *host;
	uint16_t port;
};

static const struct good6_case good6_cases[] = {
	{"--server 2001:2::1", "2001:2::1", "2001:2::100", "[2001:2::1]", 80},
	{"--server [2001:2::1]:8080", "2001:2::1", "2001:2::100", "[2001:2::1]", 8080},
	{"--server [2001:2::1]", "2001:2::1", "2001:2::100", "[2001:2::1]", 80},
	{"--server 2001:2::100", "2001:2::100", "2001:2::101", "[2001:2::100]", 80},
	{"--server=2001:2:0:7::1 --clients 2001:2:0:7::abcd --conns 1000", "2001:2:0:7::1",
	 "2001:2:0:7::abcd", "[2001:2:0:7::1]", 80},
	{"--server 2001:2::1 --clients 2001:2::9 --sports 1000-1999 --conns 1000", "2001:2::1",
	 "2001:2::9", "[2001:2::1]", 80},
	/* the last --server wins, family included */
	{"--server 198.18.0.1 --server [2001:2::5]:81", "2001:2::5", "2001:2::100", "[2001:2::5]",
	 81},
};

START_TEST(test_good6)
{
	const struct good6_case *c = &good6_cases[_i];
	uint8_t server[16], client[16];
	char err[256], host[LG_ADDR_STRLEN];
	struct lg_opts o;

	ck_assert_msg(parse(c->line, &o, err, sizeof(err)) == 0, "'%s': %s", c->line, err);
	ck_assert(o.v6);
	ck_assert_int_eq(inet_pton(AF_INET6, c->server, server), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, c->client, client), 1);
	ck_assert(memcmp(o.server_ip6, server, 16) == 0);
	ck_assert(memcmp(o.client_ip6, client, 16) == 0);
	ck_assert_uint_eq(o.server_port, c->port);
	ck_assert_str_eq(lg_server_str(&o, true, host), c->host);
	/* the stack's own IPv4 address: one, 198.18.0.1/24 */
	ck_assert_uint_eq(o.client_ip, IP(198, 18, 0, 1));
	ck_assert_uint_eq(o.client_count, 1);
	ck_assert_uint_eq(o.server_ip, 0);
}
END_TEST

/* ------------------------------------------------------------ bad lines */

struct bad_case {
	const char *line;
	const char *msg; /* the whole message */
};

static const struct bad_case bad_cases[] = {
	{"", "--server is required"},
	{"--server", "--server: needs a value"},
	{"--server 198.18.0", "--server: '198.18.0' is not A.B.C.D[:PORT]"},
	{"--server 198.18.0.256", "--server: '198.18.0.256' is not A.B.C.D[:PORT]"},
	{"--server 198.18.0.01", "--server: '198.18.0.01' is not A.B.C.D[:PORT]"},
	{"--server 198.18.0.1:0", "--server: '198.18.0.1:0' is not A.B.C.D[:PORT]"},
	{"--server 198.18.0.1:65536", "--server: '198.18.0.1:65536' is not A.B.C.D[:PORT]"},
	{"--server 198.20.0.1", "--server: 198.20.0.1 is outside 198.18.0.0/15"},
	{"--server 198.18.0.1 --clients 198.18.1.0", "--clients: '198.18.1.0' is not A.B.C.D/N"},
	{"--server 198.18.0.1 --clients 198.18.1.0/33",
	 "--clients: '198.18.1.0/33' is not A.B.C.D/N"},
	{"--server 198.18.0.1 --clients 198.18.1.1/24",
	 "--clients: 198.18.1.1/24 has host bits set"},
	{"--server 198.18.0.1 --clients 198.18.0.0/15",
	 "--clients: 198.18.0.0/15: at most 65536 addresses (a /16)"},
	{"--server 198.18.0.1 --clients 198.17.1.0/24",
	 "--clients: 198.17.1.0/24 is outside 198.18.0.0/15"},
	{"--server 198.18.1.7 --clients 198.18.1.0/24",
	 "--server: the server's address is one of --clients"},
	{"--server 198.18.0.2 --clients 198.18.0.0/31 --conns 2",
	 "--clients: the smallest subnet holding the server and the clients (/30) has them on its "
	 "network or broadcast address"},
	{"--server 198.18.0.1 --depth 0", "--depth: '0' is not an integer in 1..32"},
	{"--server 198.18.0.1 --depth 33", "--depth: '33' is not an integer in 1..32"},
	{"--server 198.18.0.1 --inflight 0", "--inflight: '0' is not an integer in 1..32000000"},
	{"--server 198.18.0.1 --inflight x", "--inflight: 'x' is not an integer in 1..32000000"},
	{"--server 198.18.0.1 --depth 1x", "--depth: '1x' is not an integer in 1..32"},
	{"--server 198.18.0.1 --conns -1", "--conns: '-1' is not an integer in 1..1000000"},
	{"--server 198.18.0.1 --tokens 4000001",
	 "--tokens: '4000001' is not an integer in 1..4000000"},
	{"--server 198.18.0.1 --gate 101", "--gate: '101' is not an integer in 0..100"},
	{"--server 198.18.0.1 --rate 0", "--rate: '0' is not a number in 0.001..1e+09"},
	{"--server 198.18.0.1 --rate nan", "--rate: 'nan' is not a number in 0.001..1e+09"},
	{"--server 198.18.0.1 --rate 1 --cps 1", "--cps: give only one of --rate and --cps"},
	{"--server 198.18.0.1 --step 1", "--step: needs --rate or --cps"},
	{"--server 198.18.0.1 --rate-from 1", "--rate-from: needs --rate or --cps"},
	{"--server 198.18.0.1 --rate 1 --step 1 --ramp 1",
	 "--step: give only one of --step and --ramp"},
	{"--server 198.18.0.1 --duration 0", "--duration: '0' is not a number in 0.001..86400"},
	{"--server 198.18.0.1 --mix buy",
	 "--mix: 'buy' is not KIND=WEIGHT (KIND buy, buy_jwt, order, "
	 "item, healthz or cart, once each; WEIGHT 0..1000000)"},
	{"--server 198.18.0.1 --mix buy=1,sell=1",
	 "--mix: 'sell=1' is not KIND=WEIGHT (KIND buy, buy_jwt, order, item, healthz or cart, "
	 "once each; WEIGHT 0..1000000)"},
	{"--server 198.18.0.1 --mix buy=1,buy=2",
	 "--mix: 'buy=2' is not KIND=WEIGHT (KIND buy, buy_jwt, order, item, healthz or cart, "
	 "once each; WEIGHT 0..1000000)"},
	{"--server 198.18.0.1 --mix buy=0", "--mix: 'buy=0': every weight is 0"},
	{"--server 198.18.0.1 --mix buy_jwt=1", "--mix: buy_jwt needs --secret-file"},
	{"--server 198.18.0.1 --mix cart=1 --item 0",
	 "--mix: a cart of items 0..+2 names no item ids"},
	{"--server 198.18.0.1 --mix cart=1 --item 4294967295 --cart-lines 2",
	 "--mix: a cart of items 4294967295..+1 names no item ids"},
	{"--server 198.18.0.1 --cart-lines 17", "--cart-lines: '17' is not an integer in 1..16"},
	{"--server 198.18.0.1 --user-base 18446744073709551615 --users 2",
	 "--users: user-base + users - 1 exceeds 18446744073709551615"},
	{"--server 198.18.0.1 --user-pick zipf", "--user-pick: 'zipf' is neither seq nor random"},
	{"--server 198.18.0.1 --sports 5-4", "--sports: '5-4' is not MIN-MAX within 1-65535"},
	{"--server 198.18.0.1 --sports 0-4", "--sports: '0-4' is not MIN-MAX within 1-65535"},
	{"--server 198.18.0.1 --short --depth 2",
	 "--depth: a short connection carries one request"},
	{"--server 198.18.0.1 --clients 198.18.1.0/32 --sports 1-2 --conns 3",
	 "--conns: 3 connections need more than 1 addresses x 2 ports"},
	{"--server 198.18.0.1 --attack slowloris",
	 "--attack: 'slowloris' is not synflood, holders or garbage"},
	{"--server 198.18.0.1 --attack-rate 10", "--attack-rate: needs --attack"},
	{"--server 198.18.0.1 --drip-ms 10", "--drip-ms: needs --attack"},
	{"--server 198.18.0.1 --attackers 10", "--attackers: needs --attack"},
	{"--server 198.18.0.1 --attack-from 198.18.5.0/24", "--attack-from: needs --attack"},
	{"--server 198.18.0.1 --attack synflood --attack-rate 0",
	 "--attack-rate: '0' is not a number in 0.001..1e+06"},
	{"--server 198.18.0.1 --attack synflood --attack-rate 2e6",
	 "--attack-rate: '2e6' is not a number in 0.001..1e+06"},
	{"--server 198.18.0.1 --attack holders --attackers 10001",
	 "--attackers: '10001' is not an integer in 1..10000"},
	{"--server 198.18.0.1 --attack holders --drip-ms 0",
	 "--drip-ms: '0' is not an integer in 1..60000"},
	{"--server 198.18.0.1 --attack garbage --drip-ms 10",
	 "--drip-ms: only with --attack holders"},
	{"--server 198.18.0.1 --attack synflood --attackers 10",
	 "--attackers: --attack synflood opens no connection"},
	{"--server 198.18.0.1 --attack synflood --attack-from 198.18.1.0/25",
	 "--attack-from: overlaps --clients"},
	{"--server 198.18.0.1 --attack synflood --attack-from 198.20.0.0/24",
	 "--attack-from: 198.20.0.0/24 is outside 198.18.0.0/15"},
	{"--server 198.18.0.1 --attack holders --attack-from 198.18.0.0/24",
	 "--attack-from: the server's address is one of --attack-from"},
	{"--server 198.19.0.1 --clients 198.19.255.0/24 --attack synflood",
	 "--attack-from: no /24 after --clients inside 198.18.0.0/15; give --attack-from"},
	{"--server 198.18.0.1 --attack holders --attack-from 198.18.9.1/32 --sports 5-6 "
	 "--attackers 3",
	 "--attackers: 3 connections need more than 1 addresses x 2 ports"},
	{"--server [2001:2::1", "--server: '[2001:2::1' is not [IPV6]:PORT"},
	{"--server [2001:2::1]:0", "--server: '[2001:2::1]:0' is not [IPV6]:PORT"},
	{"--server [2001:2::1]80", "--server: '[2001:2::1]80' is not [IPV6]:PORT"},
	{"--server 2001:2::1:80:", "--server: '2001:2::1:80:' is not an IPv6 address"},
	{"--server [2001:2::g]:80", "--server: '2001:2::g' is not an IPv6 address"},
	{"--server [fe80::1%eth0]:80", "--server: 'fe80::1%eth0' is not an IPv6 address"},
	{"--server 2001:db8::1", "--server: 2001:db8::1 is outside 2001:2::/48"},
	{"--server [2001:3::1]:80", "--server: 2001:3::1 is outside 2001:2::/48"},
	{"--server 2001:2::1 --clients 2001:2::100/120",
	 "--clients: '2001:2::100/120' is not one IPv6 address"},
	{"--server 2001:2::1 --clients 2001:db8::100",
	 "--clients: 2001:db8::100 is outside 2001:2::/48"},
	{"--server 2001:2::1 --clients 2001:2:0:1::100", "--clients: not in the server's /64"},
	{"--server 2001:2::1 --clients 2001:2::1", "--clients: the server's address"},
	{"--server 2001:2::1 --clients 198.18.1.0/24",
	 "--clients: an IPv4 block with an IPv6 --server"},
	{"--server 198.18.0.1 --clients 2001:2::100",
	 "--clients: an IPv6 address with an IPv4 --server"},
	{"--server 2001:2::1 --attack synflood", "--attack: over IPv4 only"},
	{"--server 2001:2::1 --attackers 10", "--attackers: needs --attack"},
	{"--server 2001:2::1 --sports 1-2 --conns 3",
	 "--conns: 3 connections need more than 1 addresses x 2 ports"},
	{"--server 198.18.0.1 --tls-resume", "--tls-resume: needs --tls"},
	{"--server 198.18.0.1 --tls-version 1.3", "--tls-version: needs --tls"},
	{"--server 198.18.0.1 --sni shop.test", "--sni: needs --tls"},
	{"--server 198.18.0.1 --tls --tls-version 1.1",
	 "--tls-version: '1.1' is neither 1.2 nor 1.3"},
	{"--server 198.18.0.1 --tls --sni shop..test", "--sni: 'shop..test' is not a host name"},
	{"--server 198.18.0.1 --tls --sni -shop.test", "--sni: '-shop.test' is not a host name"},
	{"--server 198.18.0.1 --tls --sni shop.test.", "--sni: 'shop.test.' is not a host name"},
	{"--server 198.18.0.1 --tls --sni sh_op.test", "--sni: 'sh_op.test' is not a host name"},
	{"--server 198.18.0.1 --tls=yes", "--tls: takes no value"},
	{"--server 198.18.0.1 --frobnicate", "--frobnicate: unknown option (see --help)"},
	{"--server 198.18.0.1 --json=yes", "--json: takes no value"},
	{"--server 198.18.0.1 extra", "'extra': not an option (options start with --)"},
};

START_TEST(test_bad)
{
	const struct bad_case *c = &bad_cases[_i];
	struct lg_opts o;
	char err[256];

	ck_assert_int_eq(parse(c->line, &o, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strcmp(err, c->msg) == 0, "'%s': got '%s'", c->line, err);
}
END_TEST

/* The binary: exit 2 and "seckill-loadgen: <message>" on stderr, before the
 * EAL (no hugepage, no --file-prefix needed). */
START_TEST(test_binary_exit_2)
{
	const struct bad_case *c = &bad_cases[_i];
	static char store[1024];
	char *argv[MAX_ARGS + 4];
	char got[512], want[512];
	int fds[2], st, argc;
	ssize_t n;
	pid_t pid;

	if (loadgen_bin == NULL)
		return;
	/* EAL options that touch nothing, should a bad line ever be accepted */
	argc = split(c->line, store, sizeof(store), argv + 3);
	argv[0] = (char *)loadgen_bin;
	argv[1] = "--in-memory";
	argv[2] = "--no-pci";
	argv[3] = "--";
	argv[argc + 3] = NULL;
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		execv(loadgen_bin, argv);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 2);
	got[n > 0 ? n : 0] = '\0';
	/* one log line (docs/logs.md): ts=... then the error, quoted */
	snprintf(want, sizeof(want), " level=error prog=seckill-loadgen event=usage err=\"%s\"\n",
		 c->msg);
	ck_assert_msg(strncmp(got, "ts=", 3) == 0 && strlen(got) > strlen(want) &&
			      strcmp(got + strlen(got) - strlen(want), want) == 0 &&
			      strchr(got, '\n') == got + strlen(got) - 1,
		      "got '%s'", got);
}
END_TEST

/* --tls and its options: port 443 unless given, versions, SNI. */
START_TEST(test_tls)
{
	struct lg_opts o;
	char err[256];

	ck_assert_int_eq(parse("--server 198.18.0.1", &o, err, sizeof(err)), 0);
	ck_assert(!o.tls && !o.tls_resume && o.tls_version == 0 && o.sni == NULL);
	ck_assert_int_eq(parse("--server 198.18.0.1 --tls", &o, err, sizeof(err)), 0);
	ck_assert(o.tls && !o.tls_resume);
	ck_assert_uint_eq(o.server_port, 443);
	ck_assert_int_eq(parse("--server 198.18.0.1:80 --tls --tls-resume --tls-version 1.2 "
			       "--sni Shop-1.example.test --short",
			       &o, err, sizeof(err)),
			 0);
	ck_assert(o.tls && o.tls_resume && o.short_conns);
	ck_assert_uint_eq(o.server_port, 80);
	ck_assert_int_eq(o.tls_version, 12);
	ck_assert_str_eq(o.sni, "Shop-1.example.test");
	ck_assert_int_eq(parse("--server 2001:2::1 --tls --tls-version 1.3", &o, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(o.server_port, 443);
	ck_assert_int_eq(o.tls_version, 13);
	ck_assert_int_eq(parse("--server [2001:2::1]:8443 --tls", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.server_port, 8443);
	ck_assert_int_eq(parse("--server [2001:2::1] --tls", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.server_port, 443);
	ck_assert_int_eq(parse("--server 198.18.0.1 --tls --sni localhost", &o, err, sizeof(err)),
			 0);
	ck_assert_str_eq(o.sni, "localhost");
}
END_TEST

static Suite *
lg_opts_suite(void)
{
	Suite *s = suite_create("lg_opts");
	TCase *tc = tcase_create("core");
	int nbad = (int)(sizeof(bad_cases) / sizeof(bad_cases[0]));

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_tls);
	tcase_add_loop_test(tc, test_good6, 0, (int)(sizeof(good6_cases) / sizeof(good6_cases[0])));
	tcase_add_loop_test(tc, test_bad, 0, nbad);
	tcase_add_loop_test(tc, test_binary_exit_2, 0, nbad);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	loadgen_bin = argc > 1 ? argv[1] : NULL;
	return sk_test_run(lg_opts_suite(), false);
}
