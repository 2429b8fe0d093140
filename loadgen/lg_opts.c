/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_opts.c - the command line of seckill-loadgen (see lg_opts.h): value
 * parsers, the option table, the checks across options.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_logfmt.h"
#include "sk_parse.h"

#include "lg_opts.h"

void
lg_opts_defaults(struct lg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->server_port = 80;
	/* client_count 0: the server's next /24, chosen in check() */
	o->sport_min = 1024;
	o->sport_max = 65535;
	o->item = 1;
	o->mix[LG_REQ_BUY] = 1;
	o->cart_lines = SK_CROWD_CART_LINES_DEFAULT;
	o->users = 1000000;
	o->user_base = 1;
	o->order_id = 1;
	o->tokens = 1000;
	o->log_level = SK_LOG_INFO;
	o->token_ttl_s = 3600;
	o->conns = 64;
	o->depth = 1;
	o->duration_s = 10;
	o->drain_ms = 3000;
	o->wait_ms = 10000;
	o->seed = 1;
	o->attackers = 64;
	o->attack_rate = 1000;
}

const char *
lg_ip_str(uint32_t ip, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
	return buf;
}

const char *
lg_server_str(const struct lg_opts *o, bool bracket, char buf[LG_ADDR_STRLEN])
{
	char a[INET6_ADDRSTRLEN];

	if (!o->v6)
		return lg_ip_str(o->server_ip, buf);
	if (inet_ntop(AF_INET6, o->server_ip6, a, sizeof(a)) == NULL)
		snprintf(a, sizeof(a), "?");
	snprintf(buf, LG_ADDR_STRLEN, bracket ? "[%s]" : "%s", a);
	return buf;
}

/* ------------------------------------------------------------------------ */
/* Value parsers                                                             */
/* ------------------------------------------------------------------------ */

/*
 * dec - @s[0..@len) as a decimal in [@min, @max] (sk_parse_u64()), with one
 * rule more: no leading zero, so that "010" is not read as ten here and as
 * eight by inet_aton().
 */
static int
dec(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
	char buf[SK_U64_DEC_MAX + 1];

	if (len == 0 || len >= sizeof(buf) || (len > 1 && s[0] == '0'))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return sk_parse_u64(buf, min, max, out) ? 0 : -EINVAL;
}

/* parse_ip - dotted quad of @len bytes, host order. */
static int
parse_ip(const char *s, size_t len, uint32_t *out)
{
	uint32_t ip = 0;
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		size_t start = i;
		uint64_t v;

		while (i < len && s[i] != '.')
			i++;
		if (dec(s + start, i - start, 0, 255, &v) != 0)
			return -EINVAL;
		ip = ip << 8 | (uint32_t)v;
		if (part < 3) {
			if (i == len)
				return -EINVAL;
			i++;
		}
	}
	if (i != len)
		return -EINVAL;
	*out = ip;
	return 0;
}

/* parse_ip6 - IPv6 text of @len bytes (inet_pton: RFC 4291 forms), network order. */
static int
parse_ip6(const char *s, size_t len, uint8_t out[16])
{
	char buf[INET6_ADDRSTRLEN];

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return inet_pton(AF_INET6, buf, out) == 1 ? 0 : -EINVAL;
}

/* in_test_net6 - @a is in 2001:2::/48 (RFC 5180, benchmarking). */
static bool
in_test_net6(const uint8_t a[16])
{
	static const uint8_t net[6] = {0x20, 0x01, 0x00, 0x02, 0x00, 0x00};

	return memcmp(a, net, sizeof(net)) == 0;
}

/* in_test_net - @ip is in 198.18.0.0/15 (RFC 2544, benchmarking). */
static bool
in_test_net(uint32_t ip)
{
	return (ip & 0xfffe0000u) == 0xc6120000u;
}

/* ------------------------------------------------------------------------ */
/* The options                                                               */
/* ------------------------------------------------------------------------ */

typedef int (*opt_fn)(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen);

/* num - @v as an integer in [@min, @max], or a message naming @name. */
static int
num(const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out, char *err,
    size_t errlen)
{
	if (dec(v, strlen(v), min, max, out) != 0) {
		sk_set_err(err, errlen, "--%s: '%s' is not an integer in %llu..%llu", name, v,
			   (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

/* real - @v as a finite number in [@min, @max]. */
static int
real(const char *name, const char *v, double min, double max, double *out, char *err, size_t errlen)
{
	double d;

	if (!sk_parse_double(v, min, max, &d)) {
		sk_set_err(err, errlen, "--%s: '%s' is not a number in %g..%g", name, v, min, max);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

#define NUM_OPT(fn, field, min, max)                                                               \
	static int fn(struct lg_opts *o, const char *name, const char *v, char *err,               \
		      size_t errlen)                                                               \
	{                                                                                          \
		uint64_t x;                                                                        \
		int rc = num(name, v, (min), (max), &x, err, errlen);                              \
		if (rc == 0)                                                                       \
			o->field = (__typeof__(o->field))x;                                        \
		return rc;                                                                         \
	}

#define REAL_OPT(fn, field, min, max)                                                              \
	static int fn(struct lg_opts *o, const char *name, const char *v, char *err,               \
		      size_t errlen)                                                               \
	{                                                                                          \
		return real(name, v, (min), (max), &o->field, err, errlen);                        \
	}

NUM_OPT(opt_port, port_id, 0, UINT16_MAX - 1)
NUM_OPT(opt_item, item, 0, UINT64_MAX)
NUM_OPT(opt_users, users, 1, UINT64_MAX)
NUM_OPT(opt_cart_lines, cart_lines, 1, SK_CROWD_CART_LINES_MAX)
NUM_OPT(opt_user_base, user_base, 1, UINT64_MAX)
NUM_OPT(opt_order_id, order_id, 1, UINT64_MAX)
NUM_OPT(opt_tokens, tokens, 1, LG_TOKENS_MAX)
NUM_OPT(opt_token_ttl, token_ttl_s, 1, 86400 * 365)
NUM_OPT(opt_gate, gate_pct, 0, 100)
NUM_OPT(opt_conns, conns, 1, LG_CONNS_MAX)
NUM_OPT(opt_depth, depth, 1, LG_DEPTH_MAX)
NUM_OPT(opt_inflight, inflight_max, 1, (uint64_t)LG_CONNS_MAX *LG_DEPTH_MAX)
NUM_OPT(opt_requests, requests, 1, UINT64_MAX)
NUM_OPT(opt_drain, drain_ms, 0, 600000)
NUM_OPT(opt_wait, wait_ms, 1, 600000)
NUM_OPT(opt_seed, seed, 0, UINT64_MAX)
NUM_OPT(opt_attackers, attackers, 1, LG_ATTACKERS_MAX)
NUM_OPT(opt_drip, drip_ms, 1, 60000)
REAL_OPT(opt_attack_rate, attack_rate, 0.001, LG_ATTACK_RATE_MAX)
REAL_OPT(opt_rate_from, rate_from, 0, 1e9)
REAL_OPT(opt_step, step_s, 0, 86400)
REAL_OPT(opt_ramp, ramp_s, 0.001, 86400)
REAL_OPT(opt_duration, duration_s, 0.001, 86400)

static int
opt_rate(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	if (o->shape != LG_SHAPE_CLOSED) {
		sk_set_err(err, errlen, "--%s: give only one of --rate and --cps", name);
		return -EINVAL;
	}
	o->shape = strcmp(name, "cps") == 0 ? LG_SHAPE_CPS : LG_SHAPE_RATE;
	return real(name, v, 0.001, 1e9, &o->rate, err, errlen);
}

/* server6 - @v as [IPV6]:PORT, [IPV6] or IPV6. */
static int
server6(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	const char *addr = v, *end = v + strlen(v);
	uint64_t port = 80;

	if (v[0] == '[') {
		const char *close = strchr(v, ']');

		if (close == NULL ||
		    (close[1] != '\0' && (close[1] != ':' || dec(close + 2, strlen(close + 2), 1,
								 65535, &port) != 0))) {
			sk_set_err(err, errlen, "--%s: '%s' is not [IPV6]:PORT", name, v);
			return -EINVAL;
		}
		addr = v + 1;
		end = close;
	}
	if (parse_ip6(addr, (size_t)(end - addr), o->server_ip6) != 0) {
		sk_set_err(err, errlen, "--%s: '%.*s' is not an IPv6 address", name,
			   (int)(end - addr), addr);
		return -EINVAL;
	}
	if (!in_test_net6(o->server_ip6)) {
		sk_set_err(err, errlen, "--%s: %.*s is outside 2001:2::/48", name,
			   (int)(end - addr), addr);
		return -EINVAL;
	}
	o->v6 = true;
	o->server_ip = 0;
	o->server_port = (uint16_t)port;
	o->server_port_given = v[0] == '[' && *end == ']' && end[1] != '\0';
	return 0;
}

static int
opt_server(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':');
	size_t iplen = colon != NULL ? (size_t)(colon - v) : strlen(v);
	uint64_t port = 80;

	if (v[0] == '[' || (colon != NULL && strchr(colon + 1, ':') != NULL))
		return server6(o, name, v, err, errlen);
	if (parse_ip(v, iplen, &o->server_ip) != 0 ||
	    (colon != NULL && dec(colon + 1, strlen(colon + 1), 1, 65535, &port) != 0)) {
		sk_set_err(err, errlen, "--%s: '%s' is not A.B.C.D[:PORT]", name, v);
		return -EINVAL;
	}
	if (!in_test_net(o->server_ip)) {
		sk_set_err(err, errlen, "--%s: %.*s is outside 198.18.0.0/15", name, (int)iplen, v);
		return -EINVAL;
	}
	o->v6 = false;
	o->server_port = (uint16_t)port;
	o->server_port_given = colon != NULL;
	return 0;
}

/* block - @v as A.B.C.D/N: its hosts at @first, their number at @count. */
static int
block(const char *name, const char *v, uint32_t *first, uint32_t *count, char *err, size_t errlen)
{
	const char *slash = strchr(v, '/');
	uint64_t bits;
	uint32_t ip, mask;

	if (slash == NULL || parse_ip(v, (size_t)(slash - v), &ip) != 0 ||
	    dec(slash + 1, strlen(slash + 1), 0, 32, &bits) != 0) {
		sk_set_err(err, errlen, "--%s: '%s' is not A.B.C.D/N", name, v);
		return -EINVAL;
	}
	mask = bits == 0 ? 0 : ~0u << (32 - bits);
	if ((ip & ~mask) != 0) {
		sk_set_err(err, errlen, "--%s: %s has host bits set", name, v);
		return -EINVAL;
	}
	if (bits < 16) {
		sk_set_err(err, errlen, "--%s: %s: at most %u addresses (a /16)", name, v,
			   LG_CLIENTS_MAX);
		return -EINVAL;
	}
	if (!in_test_net(ip)) {
		sk_set_err(err, errlen, "--%s: %s is outside 198.18.0.0/15", name, v);
		return -EINVAL;
	}
	*count = bits >= 31 ? (uint32_t)(1u << (32 - bits)) : (uint32_t)(1u << (32 - bits)) - 2;
	*first = bits >= 31 ? ip : ip + 1; /* a block's network/broadcast: not hosts */
	return 0;
}

static int
opt_clients(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	if (strchr(v, ':') != NULL) { /* IPv6: one address (the stack has one) */
		if (parse_ip6(v, strlen(v), o->client_ip6) != 0) {
			sk_set_err(err, errlen, "--%s: '%s' is not one IPv6 address", name, v);
			return -EINVAL;
		}
		if (!in_test_net6(o->client_ip6)) {
			sk_set_err(err, errlen, "--%s: %s is outside 2001:2::/48", name, v);
			return -EINVAL;
		}
		o->client_ip = 0;
		o->client_count = 0;
		return 0;
	}
	memset(o->client_ip6, 0, sizeof(o->client_ip6));
	return block(name, v, &o->client_ip, &o->client_count, err, errlen);
}

static int
opt_attack_from(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	return block(name, v, &o->attack_ip, &o->attack_count, err, errlen);
}

static int
opt_attack(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	int a = lg_attack_parse(v);

	if (a < 0) {
		sk_set_err(err, errlen, "--%s: '%s' is not synflood, holders or garbage", name, v);
		return -EINVAL;
	}
	o->attack = (enum lg_attack_mode)a;
	return 0;
}

static int
opt_sports(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	const char *dash = strchr(v, '-');
	uint64_t lo, hi;

	if (dash == NULL || dec(v, (size_t)(dash - v), 1, 65535, &lo) != 0 ||
	    dec(dash + 1, strlen(dash + 1), 1, 65535, &hi) != 0 || lo > hi) {
		sk_set_err(err, errlen, "--%s: '%s' is not MIN-MAX within 1-65535", name, v);
		return -EINVAL;
	}
	o->sport_min = (uint16_t)lo;
	o->sport_max = (uint16_t)hi;
	return 0;
}

static int
opt_mix(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	const char *p = v;
	uint32_t mix[LG_REQ__COUNT] = {0};
	uint64_t total = 0;

	for (;;) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		uint64_t w;
		int k;

		eq = memchr(p, '=', len);
		k = eq != NULL ? lg_req_kind_parse(p, (size_t)(eq - p)) : -1;
		if (eq == NULL || k < 0 ||
		    dec(eq + 1, len - (size_t)(eq + 1 - p), 0, 1000000, &w) != 0 || mix[k] != 0) {
			sk_set_err(err, errlen,
				   "--%s: '%.*s' is not KIND=WEIGHT (KIND buy, buy_jwt, order, "
				   "item, healthz or cart, once each; WEIGHT 0..1000000)",
				   name, (int)len, p);
			return -EINVAL;
		}
		mix[k] = (uint32_t)w;
		total += w;
		if (end == NULL)
			break;
		p = end + 1;
	}
	if (total == 0) {
		sk_set_err(err, errlen, "--%s: '%s': every weight is 0", name, v);
		return -EINVAL;
	}
	memcpy(o->mix, mix, sizeof(mix));
	o->mix_given = true;
	return 0;
}

static int
opt_user_pick(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "seq") == 0) {
		o->user_pick = LG_USER_SEQ;
	} else if (strcmp(v, "random") == 0) {
		o->user_pick = LG_USER_RANDOM;
	} else {
		sk_set_err(err, errlen, "--%s: '%s' is neither seq nor random", name, v);
		return -EINVAL;
	}
	return 0;
}

static int
opt_secret(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	(void)name, (void)err, (void)errlen;
	o->secret_file = v;
	return 0;
}

static int
opt_flag(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	(void)v, (void)err, (void)errlen;
	if (strcmp(name, "short") == 0)
		o->short_conns = true;
	else if (strcmp(name, "json") == 0)
		o->json = true;
	else if (strcmp(name, "quiet") == 0)
		o->quiet = true;
	else if (strcmp(name, "tls") == 0)
		o->tls = true;
	else if (strcmp(name, "tls-resume") == 0)
		o->tls_resume = true;
	return 0;
}

static int
opt_log_level(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	enum sk_log_level lv;

	if (sk_logfmt_level_parse(v, &lv) != 0) {
		sk_set_err(err, errlen,
			   "--%s: '%s' is not debug, info, notice, warn, error or crit", name, v);
		return -EINVAL;
	}
	o->log_level = (int)lv;
	return 0;
}

static const struct opt_def {
	const char *name;
	bool has_arg;
	opt_fn fn;
} opt_table[] = {
	{"server", true, opt_server},
	{"clients", true, opt_clients},
	{"sports", true, opt_sports},
	{"port", true, opt_port},
	{"mix", true, opt_mix},
	{"item", true, opt_item},
	{"cart-lines", true, opt_cart_lines},
	{"users", true, opt_users},
	{"user-base", true, opt_user_base},
	{"user-pick", true, opt_user_pick},
	{"order-id", true, opt_order_id},
	{"secret-file", true, opt_secret},
	{"tokens", true, opt_tokens},
	{"token-ttl", true, opt_token_ttl},
	{"gate", true, opt_gate},
	{"conns", true, opt_conns},
	{"depth", true, opt_depth},
	{"inflight", true, opt_inflight},
	{"short", false, opt_flag},
	{"rate", true, opt_rate},
	{"cps", true, opt_rate},
	{"rate-from", true, opt_rate_from},
	{"step", true, opt_step},
	{"ramp", true, opt_ramp},
	{"duration", true, opt_duration},
	{"requests", true, opt_requests},
	{"drain-ms", true, opt_drain},
	{"wait-ms", true, opt_wait},
	{"seed", true, opt_seed},
	{"attack", true, opt_attack},
	{"attack-from", true, opt_attack_from},
	{"attack-rate", true, opt_attack_rate},
	{"attackers", true, opt_attackers},
	{"drip-ms", true, opt_drip},
	{"tls", false, opt_flag},
	{"tls-resume", false, opt_flag},
	{"tls-version", true, lg_opts_tls},
	{"sni", true, lg_opts_tls},
	{"json", false, opt_flag},
	{"quiet", false, opt_flag},
	{"log-level", true, opt_log_level},
};

/* ------------------------------------------------------------------------ */
/* Checks across options                                                     */
/* ------------------------------------------------------------------------ */

/* common_prefix - the length of the longest common prefix of @a and @b. */
static uint8_t
common_prefix(uint32_t a, uint32_t b)
{
	return a == b ? 32 : (uint8_t)__builtin_clz(a ^ b);
}

/* What was given, for the checks across options. */
struct seen {
	bool step, ramp, from;
	bool attack_from, attack_rate, attackers, drip;
};

/*
 * subnet - the stack's subnet for a server and a block of client
 * addresses: the longest prefix that holds the server and every client,
 * without a client on its network/broadcast address.
 */
static int
subnet(uint32_t server, uint32_t first, uint32_t count, const char *what, const char *srv_what,
       uint8_t *prefix, char *err, size_t errlen)
{
	uint32_t last = first + count - 1, net, bcast, mask;
	uint8_t p;

	if (server >= first && server <= last) {
		sk_set_err(err, errlen, "%s: the server's address is one of %s", srv_what, what);
		return -EINVAL;
	}
	p = common_prefix(server, first);
	if (common_prefix(server, last) < p)
		p = common_prefix(server, last);
	mask = p == 0 ? 0 : ~0u << (32 - p);
	net = server & mask;
	bcast = net | ~mask;
	if (p >= 31 || first == net || last == bcast) {
		sk_set_err(err, errlen,
			   "%s: the smallest subnet holding the server and the clients "
			   "(/%u) has them on its network or broadcast address",
			   what, p);
		return -EINVAL;
	}
	*prefix = p;
	return 0;
}

/* check_attack - the hostile mode's options, together. */
static int
check_attack(struct lg_opts *o, const struct seen *seen, char *err, size_t errlen)
{
	const char *lone = seen->attack_from   ? "attack-from"
			   : seen->attack_rate ? "attack-rate"
			   : seen->attackers   ? "attackers"
			   : seen->drip	       ? "drip-ms"
					       : NULL;
	uint32_t clast = o->client_ip + o->client_count - 1;
	int rc;

	if (o->attack == LG_ATTACK_NONE) {
		if (lone != NULL) {
			sk_set_err(err, errlen, "--%s: needs --attack", lone);
			return -EINVAL;
		}
		return 0;
	}
	if (seen->drip && o->attack != LG_ATTACK_HOLDERS) {
		sk_set_err(err, errlen, "--drip-ms: only with --attack holders");
		return -EINVAL;
	}
	if (seen->attackers && o->attack == LG_ATTACK_SYNFLOOD) {
		sk_set_err(err, errlen, "--attackers: --attack synflood opens no connection");
		return -EINVAL;
	}
	if (o->attack_count == 0) { /* default: the /24 after the clients' last address */
		uint32_t net24 = (clast & 0xffffff00u) + 0x100u;

		if ((o->server_ip & 0xffffff00u) == net24)
			net24 += 0x100u;
		if (!in_test_net(net24)) {
			sk_set_err(err, errlen,
				   "--attack-from: no /24 after --clients inside 198.18.0.0/15; "
				   "give --attack-from");
			return -EINVAL;
		}
		o->attack_ip = net24 + 1;
		o->attack_count = 254;
	}
	if (o->attack_ip <= clast && o->client_ip <= o->attack_ip + o->attack_count - 1) {
		sk_set_err(err, errlen, "--attack-from: overlaps --clients");
		return -EINVAL;
	}
	rc = subnet(o->server_ip, o->attack_ip, o->attack_count, "--attack-from", "--attack-from",
		    &o->attack_prefix, err, errlen);
	if (rc != 0)
		return rc;
	if (o->attack != LG_ATTACK_SYNFLOOD &&
	    (uint64_t)o->attackers >
		    (uint64_t)o->attack_count * (o->sport_max - o->sport_min + 1u)) {
		sk_set_err(err, errlen,
			   "--attackers: %u connections need more than %u addresses x %u ports",
			   o->attackers, o->attack_count, o->sport_max - o->sport_min + 1u);
		return -EINVAL;
	}
	return 0;
}

/* ip6_unset - @a is :: (no address given). */
static bool
ip6_unset(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

/*
 * check6 - an IPv6 server and its one client address: in the server's /64
 * (the stack's prefix), not the server's. The stack still needs an IPv4
 * address of its own: 198.18.0.1/24, which nothing is sent to or from.
 */
static int
check6(struct lg_opts *o, char *err, size_t errlen)
{
	if (o->client_count != 0) {
		sk_set_err(err, errlen, "--clients: an IPv4 block with an IPv6 --server");
		return -EINVAL;
	}
	if (o->attack != LG_ATTACK_NONE) {
		sk_set_err(err, errlen, "--attack: over IPv4 only");
		return -EINVAL;
	}
	if (ip6_unset(o->client_ip6)) { /* default: the server's /64, ::100 (or ::101) */
		memcpy(o->client_ip6, o->server_ip6, 8);
		memset(o->client_ip6 + 8, 0, 8);
		o->client_ip6[14] = 0x01;
		if (memcmp(o->client_ip6, o->server_ip6, 16) == 0)
			o->client_ip6[15] = 0x01;
	}
	if (memcmp(o->client_ip6, o->server_ip6, 8) != 0) {
		sk_set_err(err, errlen, "--clients: not in the server's /64");
		return -EINVAL;
	}
	if (memcmp(o->client_ip6, o->server_ip6, 16) == 0) {
		sk_set_err(err, errlen, "--clients: the server's address");
		return -EINVAL;
	}
	o->client_ip = 0xc6120001u; /* 198.18.0.1 */
	o->client_count = 1;
	o->prefix_len = 24;
	return 0;
}

/* check4 - an IPv4 server and its clients (by default the next /24). */
static int
check4(struct lg_opts *o, char *err, size_t errlen)
{
	if (o->server_ip == 0) {
		sk_set_err(err, errlen, "--server is required");
		return -EINVAL;
	}
	if (!ip6_unset(o->client_ip6)) {
		sk_set_err(err, errlen, "--clients: an IPv6 address with an IPv4 --server");
		return -EINVAL;
	}
	if (o->client_count == 0) { /* default: the hosts of the server's next /24 */
		uint32_t net24 = (o->server_ip & 0xffffff00u) + 0x100u;

		if (!in_test_net(net24))
			net24 = (o->server_ip & 0xffffff00u) - 0x100u;
		o->client_ip = net24 + 1;
		o->client_count = 254;
	}
	return subnet(o->server_ip, o->client_ip, o->client_count, "--clients", "--server",
		      &o->prefix_len, err, errlen);
}

static int
check(struct lg_opts *o, const struct seen *seen, char *err, size_t errlen)
{
	int rc = o->v6 ? check6(o, err, errlen) : check4(o, err, errlen);

	if (rc == 0)
		rc = lg_opts_tls_check(o, err, errlen);
	if (rc != 0)
		return rc;
	if (o->short_conns && o->depth > 1) {
		sk_set_err(err, errlen, "--depth: a short connection carries one request");
		return -EINVAL;
	}
	if (o->shape == LG_SHAPE_CPS)
		o->short_conns = true;
	if ((seen->step || seen->ramp || seen->from) && o->shape == LG_SHAPE_CLOSED) {
		sk_set_err(err, errlen, "--%s: needs --rate or --cps",
			   seen->step	? "step"
			   : seen->ramp ? "ramp"
					: "rate-from");
		return -EINVAL;
	}
	if (seen->step && seen->ramp) {
		sk_set_err(err, errlen, "--step: give only one of --step and --ramp");
		return -EINVAL;
	}
	if (o->users - 1 > UINT64_MAX - o->user_base) {
		sk_set_err(err, errlen,
			   "--users: user-base + users - 1 exceeds 18446744073709551615");
		return -EINVAL;
	}
	if (o->mix[LG_REQ_CART] != 0 &&
	    (o->item == 0 || o->item > UINT32_MAX || o->cart_lines - 1 > UINT32_MAX - o->item)) {
		sk_set_err(err, errlen, "--mix: a cart of items %" PRIu64 "..+%u names no item ids",
			   o->item, o->cart_lines - 1);
		return -EINVAL;
	}
	if (o->mix[LG_REQ_BUY_JWT] != 0 && o->secret_file == NULL) {
		sk_set_err(err, errlen, "--mix: buy_jwt needs --secret-file");
		return -EINVAL;
	}
	if ((uint64_t)o->conns > (uint64_t)o->client_count * (o->sport_max - o->sport_min + 1u)) {
		sk_set_err(err, errlen,
			   "--conns: %u connections need more than %u addresses x %u ports",
			   o->conns, o->client_count, o->sport_max - o->sport_min + 1u);
		return -EINVAL;
	}
	return check_attack(o, seen, err, errlen);
}

int
lg_opts_parse(struct lg_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	struct seen seen = {0};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		const struct opt_def *d = NULL;
		size_t nlen;
		int rc;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			return 1;
		if (strncmp(a, "--", 2) != 0) {
			sk_set_err(err, errlen, "'%s': not an option (options start with --)", a);
			return -EINVAL;
		}
		a += 2;
		eq = strchr(a, '=');
		nlen = eq != NULL ? (size_t)(eq - a) : strlen(a);
		for (size_t j = 0; j < SK_ARRAY_SIZE(opt_table); j++)
			if (strlen(opt_table[j].name) == nlen &&
			    memcmp(opt_table[j].name, a, nlen) == 0)
				d = &opt_table[j];
		if (d == NULL) {
			sk_set_err(err, errlen, "--%.*s: unknown option (see --help)", (int)nlen,
				   a);
			return -EINVAL;
		}
		if (d->has_arg) {
			if (eq != NULL)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				sk_set_err(err, errlen, "--%s: needs a value", d->name);
				return -EINVAL;
			}
		} else if (eq != NULL) {
			sk_set_err(err, errlen, "--%s: takes no value", d->name);
			return -EINVAL;
		}
		rc = d->fn(o, d->name, val, err, errlen);
		if (rc != 0)
			return rc;
		seen.step |= d->fn == opt_step;
		seen.ramp |= d->fn == opt_ramp;
		seen.from |= d->fn == opt_rate_from;
		seen.attack_from |= d->fn == opt_attack_from;
		seen.attack_rate |= d->fn == opt_attack_rate;
		seen.attackers |= d->fn == opt_attackers;
		seen.drip |= d->fn == opt_drip;
	}
	return check(o, &seen, err, errlen);
}
