/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_opts.c - seckill-crowd's command line: the usage text, the table of
 * integer options, crowd_opts_parse() and the checks across options.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"

#include "crowd.h"

static const char usage[] =
	"usage: seckill-crowd --server ADDR [--port N] [--item ID] [--users N] [--user-base N]\n"
	"                     [--attempts N] [--retriers FRACTION] [--seed N] [--conns N]\n"
	"                     [--wait-start] [--secret-file FILE] [--timeout-ms N]\n"
	"                     [--max-seconds S] [--poll] [--expect-units N] [--json FILE]\n"
	"                     [--orders FILE] [--cpu N] [--conn-requests N] [--gate PCT]\n"
	"                     [--follow PERCENT [--follow-seconds S]]\n"
	"                     [--reserved PCT --reserved-file FILE [--prepare]]\n"
	"                     [--tls [--sni NAME] [--tls-resume] [--cacert FILE]\n"
	"                      [--tls-version 1.2|1.3]] [--mix cart=PCT[,lines=K]]\n"
	"\n"
	"Simulate a flash-sale crowd against POST /v1/seckill/{item} and check the answers.\n"
	"\n"
	"  --server ADDR        front door address (required): an IPv4 or IPv6 literal,\n"
	"                       optionally with a port as in a URL: 198.18.0.1:8080,\n"
	"                       [2001:2::1] or [2001:2::1]:8080\n"
	"  --port N             TCP port (default 80, 443 with --tls; not with a port\n"
	"                       in --server)\n"
	"  --item ID            item to buy (default 1)\n"
	"  --users N            distinct users (default 1000), ids user-base .. user-base+N-1\n"
	"  --user-base N        first user id (default 1)\n"
	"  --attempts N         buy requests in all, >= users (default: users); every user\n"
	"                       tries once, the extra attempts are retries of the retriers\n"
	"  --retriers FRACTION  share of users that retry, 0..1 (default 0.2)\n"
	"  --seed N             seed of the schedule (default 1)\n"
	"  --conns N            concurrent keep-alive connections (default 64, max 20000)\n"
	"  --wait-start         on 425 not_started, pause until starts_in_ms, then go\n"
	"  --secret-file FILE   auth on: send a JWT per user (exp now+600 s, item claim);\n"
	"                       without it, send X-User-Id\n"
	"  --gate PCT           with --secret-file: PCT% of the users (index mod 100 <\n"
	"                       PCT) carry the item's gate claim, the rest lack it;\n"
	"                       checks that no user without it wins and that none\n"
	"                       with it is answered 403 gate\n"
	"  --timeout-ms N       per-request and connect timeout (default 10000)\n"
	"  --max-seconds S      hard bound on the whole run (default 60)\n"
	"  --poll               at the end, GET /v1/orders/{id} for every winner\n"
	"  --expect-units N     check that the number of winners is N\n"
	"  --json FILE          write the summary as one JSON object (\"-\": stdout)\n"
	"  --orders FILE        write \"user order\" lines for every winner\n"
	"  --cpu N              pin the process to CPU N\n"
	"  --conn-requests N    close a connection after N answers and open a new one\n"
	"  --follow PERCENT     after the run, PERCENT of the winners (0..100, drawn with\n"
	"                       --seed, at most --conns) open GET /v1/orders/{id}/events\n"
	"                       and count its events until the server closes it\n"
	"  --follow-seconds S   how long the streams are read (default 5; plain TCP)\n"
	"  --reserved PCT       a reserved_only sale: PCT% of the users (a fixed draw\n"
	"                       from --seed) reserved; checks that every winner is one\n"
	"                       and that none of them is refused not_reserved\n"
	"  --reserved-file FILE write the reserved users' ids there, one per line, before\n"
	"                       the sale (for seckillctl activity reserve)\n"
	"  --prepare            only write --reserved-file, then exit 0 (no sale)\n"
	"  --tls                HTTPS: TLS 1.2 or 1.3, ALPN http/1.1; the certificate\n"
	"                       is not verified unless --cacert\n"
	"  --sni NAME           send NAME as server_name (default: none)\n"
	"  --tls-resume         a connection that reconnects resumes its last session\n"
	"  --cacert FILE        verify the server against the PEM CA file (the name of\n"
	"                       --sni, else the address)\n"
	"  --tls-version V      only TLS 1.2 or only TLS 1.3\n"
	"  --mix cart=PCT[,lines=K]  PCT% of the users buy K-line carts (POST /v1/cart,\n"
	"                       default K 3) of items --item .. --item+K-1, qty 1 each\n"
	"  -h, --help           this help\n"
	"\n"
	"Exit status: 0 all checks passed, 1 a check failed, 2 usage, 3 could not run,\n"
	"4 stopped by --max-seconds or SIGINT before every attempt was answered.\n";

/* bad_arg - print a one-line complaint about option @name; returns EXIT_USAGE. */
static int
bad_arg(const char *name, const char *val, const char *what)
{
	sk_log(PROG, "--%s: '%s' is not %s", name, val, what);
	return EXIT_USAGE;
}

/*
 * sni_ok - whether @s is a DNS host name for server_name: 1..253 bytes of
 * letters, digits, '-' and '.', no empty label (RFC 6066 section 3: no
 * address literal, which the caller cannot tell apart from a name anyway).
 */
static bool
sni_ok(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-') ||
		    ++label > 63)
			return false;
	}
	return label > 0;
}

/* The offset and width of field @f of struct opts. */
#define OPT_FIELD(f) offsetof(struct opts, f), sizeof(((struct opts *)NULL)->f)

/*
 * The integer options: their range, what a value out of it is not, the
 * field it is stored in (2, 4 or 8 bytes wide), and the bool set when it is
 * given (0: none).
 */
static const struct int_opt {
	int key; /* getopt_long() value */
	uint64_t lo, hi;
	const char *what;
	size_t off, size, given;
} int_opts[] = {
	{'p', 1, 65535, "a port (1..65535)", OPT_FIELD(port), offsetof(struct opts, has_port)},
	{'i', 0, UINT32_MAX, "an item id (0..4294967295)", OPT_FIELD(item), 0},
	{'u', 1, USERS_MAX, "a number of users (1..100000000)", OPT_FIELD(users), 0},
	{'b', 1, UINT64_MAX, "a user id (1..2^64-1)", OPT_FIELD(user_base), 0},
	{'a', 1, ATTEMPTS_MAX, "a number of attempts (1..200000000)", OPT_FIELD(attempts),
	 offsetof(struct opts, has_attempts)},
	{'s', 0, UINT64_MAX, "a number", OPT_FIELD(seed), 0},
	{'c', 1, CONNS_MAX, "a number of connections (1..20000)", OPT_FIELD(conns), 0},
	{'t', 1, 3600000, "a timeout (1..3600000 ms)", OPT_FIELD(timeout_ms), 0},
	{'e', 0, USERS_MAX, "a number of units", OPT_FIELD(expect_units),
	 offsetof(struct opts, has_expect)},
	{'C', 0, CPU_SETSIZE - 1, "a CPU number", OPT_FIELD(cpu), 0},
	{'q', 1, UINT32_MAX, "a number of requests (1..4294967295)", OPT_FIELD(conn_requests), 0},
	{'F', 0, 100, "a percentage (0..100)", OPT_FIELD(follow), 0},
	{'g', 0, 100, "a percentage (0..100)", OPT_FIELD(gate_pct),
	 offsetof(struct opts, has_gate)},
};

/* int_opt_of - the entry of option @key in int_opts, or NULL. */
static const struct int_opt *
int_opt_of(int key)
{
	for (size_t i = 0; i < SK_ARRAY_SIZE(int_opts); i++)
		if (int_opts[i].key == key)
			return &int_opts[i];
	return NULL;
}

/* int_opt_store - @v (in the option's range) into its field of @o. */
static void
int_opt_store(struct opts *o, const struct int_opt *io, uint64_t v)
{
	uint8_t *base = (uint8_t *)o;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	SK_ASSERT(io->size == sizeof(v16) || io->size == sizeof(v32) || io->size == sizeof(v));
	if (io->size == sizeof(v16))
		memcpy(base + io->off, &v16, sizeof(v16));
	else if (io->size == sizeof(v32))
		memcpy(base + io->off, &v32, sizeof(v32)); /* uint32_t, or int (cpu) */
	else
		memcpy(base + io->off, &v, sizeof(v));
	if (io->given != 0)
		*(bool *)(base + io->given) = true;
}

/*
 * server_resolve - --server into o->addr, o->port and o->host: "IPv4",
 * "IPv6", "[IPv6]", "IPv4:PORT" or "[IPv6]:PORT" (literals only, no names,
 * no zone). 0, or EXIT_USAGE after printing why.
 */
static int
server_resolve(struct opts *o)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&o->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&o->addr;
	char ip[INET6_ADDRSTRLEN + 1];
	const char *s = o->server, *port = NULL, *end;
	size_t len;
	uint64_t v;

	if (s[0] == '[') { /* URL form: the brackets, then ":PORT" or nothing */
		end = strchr(s, ']');
		if (end == NULL || (end[1] != '\0' && end[1] != ':'))
			return bad_arg("server", s, "an IPv4 or IPv6 address");
		port = end[1] == ':' ? end + 2 : NULL;
		s++;
	} else {
		end = strchr(s, ':');
		/* One colon: IPv4:PORT; more: a bare IPv6 literal. */
		if (end != NULL && strchr(end + 1, ':') == NULL)
			port = end + 1;
		else
			end = s + strlen(s);
	}
	len = (size_t)(end - s);
	if (len == 0 || len >= sizeof(ip))
		return bad_arg("server", o->server, "an IPv4 or IPv6 address");
	memcpy(ip, s, len);
	ip[len] = '\0';
	if (port != NULL) {
		if (!sk_parse_u64(port, 1, 65535, &v))
			return bad_arg("server", o->server, "ADDR:PORT with a port 1..65535");
		if (o->has_port) {
			sk_log(PROG, "--server '%s' names a port: leave out --port", o->server);
			return EXIT_USAGE;
		}
		o->port = (uint16_t)v;
	}
	if (o->server[0] != '[' && inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(o->port);
		o->addr_len = sizeof(*a4);
		snprintf(o->host, sizeof(o->host), "%s:%u", ip, o->port);
	} else if ((o->server[0] == '[' || port == NULL) &&
		   inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(o->port);
		o->addr_len = sizeof(*a6);
		snprintf(o->host, sizeof(o->host), "[%s]:%u", ip, o->port);
	} else {
		return bad_arg("server", o->server, "an IPv4 or IPv6 address");
	}
	return 0;
}

/* crowd_opts_parse - fill @o from argv; 0, or an exit status after printing why. */
int
crowd_opts_parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{"server", required_argument, NULL, 'S'},
		{"port", required_argument, NULL, 'p'},
		{"item", required_argument, NULL, 'i'},
		{"users", required_argument, NULL, 'u'},
		{"user-base", required_argument, NULL, 'b'},
		{"attempts", required_argument, NULL, 'a'},
		{"retriers", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"conns", required_argument, NULL, 'c'},
		{"wait-start", no_argument, NULL, 'w'},
		{"secret-file", required_argument, NULL, 'k'},
		{"timeout-ms", required_argument, NULL, 't'},
		{"max-seconds", required_argument, NULL, 'm'},
		{"poll", no_argument, NULL, 'P'},
		{"expect-units", required_argument, NULL, 'e'},
		{"json", required_argument, NULL, 'j'},
		{"orders", required_argument, NULL, 'o'},
		{"cpu", required_argument, NULL, 'C'},
		{"conn-requests", required_argument, NULL, 'q'},
		{"follow", required_argument, NULL, 'F'},
		{"follow-seconds", required_argument, NULL, 'f'},
		{"gate", required_argument, NULL, 'g'},
		{"tls", no_argument, NULL, 'T'},
		{"sni", required_argument, NULL, 'N'},
		{"tls-resume", no_argument, NULL, 'R'},
		{"cacert", required_argument, NULL, 'A'},
		{"tls-version", required_argument, NULL, 'V'},
		{"mix", required_argument, NULL, 'X'},
		{"reserved", required_argument, NULL, 'Q'},
		{"reserved-file", required_argument, NULL, 'L'},
		{"prepare", no_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt, idx = 0;

	memset(o, 0, sizeof(*o));
	o->port = 80;
	o->item = 1;
	o->users = 1000;
	o->user_base = 1;
	o->seed = 1;
	o->retriers = 0.2;
	o->max_seconds = 60;
	o->follow_seconds = 5;
	o->conns = 64;
	o->timeout_ms = 10000;
	o->cpu = -1;
	o->reserved = -1;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", lopts, &idx)) != -1) {
		const struct int_opt *io = int_opt_of(opt);
		if (io != NULL) {
			uint64_t v;
			if (!sk_parse_u64(optarg, io->lo, io->hi, &v))
				return bad_arg(lopts[idx].name, optarg, io->what);
			int_opt_store(o, io, v);
			continue;
		}
		switch (opt) {
		case 'r':
			if (!sk_parse_double(optarg, 0.0, 1.0, &o->retriers))
				return bad_arg("retriers", optarg, "a fraction (0..1)");
			break;
		case 'm':
			if (!sk_parse_double(optarg, 0.001, 3600.0, &o->max_seconds))
				return bad_arg("max-seconds", optarg, "a duration (0.001..3600 s)");
			break;
		case 'f':
			if (!sk_parse_double(optarg, 0.001, 3600.0, &o->follow_seconds))
				return bad_arg("follow-seconds", optarg,
					       "a duration (0.001..3600 s)");
			break;
		case 'Q':
			if (!sk_parse_double(optarg, 0.0, 100.0, &o->reserved))
				return bad_arg("reserved", optarg, "a percentage (0..100)");
			break;
		case 'L':
			o->reserved_file = optarg;
			break;
		case 'G':
			o->prepare = true;
			break;
		case 'S':
			o->server = optarg;
			break;
		case 'X':
			if (sk_crowd_mix_parse(optarg, &o->mix) != 0)
				return bad_arg("mix", optarg,
					       "cart=PCT[,lines=K] (PCT 0..100, K 1..16)");
			break;
		case 'k':
			o->secret_file = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'o':
			o->orders = optarg;
			break;
		case 'w':
			o->wait_start = true;
			break;
		case 'P':
			o->poll = true;
			break;
		case 'T':
			o->tls = true;
			break;
		case 'R':
			o->tls_resume = true;
			break;
		case 'A':
			o->cacert = optarg;
			break;
		case 'N':
			if (!sni_ok(optarg))
				return bad_arg("sni", optarg, "a host name");
			o->sni = optarg;
			break;
		case 'V':
			if (strcmp(optarg, "1.2") == 0)
				o->tls_version = 12;
			else if (strcmp(optarg, "1.3") == 0)
				o->tls_version = 13;
			else
				return bad_arg("tls-version", optarg, "1.2 or 1.3");
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			sk_log(PROG,
			       "'%s': unknown option or missing value (try "
			       "--help)",
			       argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		sk_log(PROG, "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->server == NULL) {
		sk_log(PROG, "--server is required (try --help)");
		return EXIT_USAGE;
	}
	if (o->user_base - 1 > UINT64_MAX - o->users) {
		sk_log(PROG, "--user-base + --users overflows a user id");
		return EXIT_USAGE;
	}
	if (!o->tls && (o->sni || o->tls_resume || o->cacert || o->tls_version)) {
		sk_log(PROG, "--%s needs --tls",
		       o->sni	       ? "sni"
		       : o->tls_resume ? "tls-resume"
		       : o->cacert     ? "cacert"
				       : "tls-version");
		return EXIT_USAGE;
	}
	if (o->tls && o->follow != 0) {
		sk_log(PROG, "--follow reads plain HTTP: not with --tls");
		return EXIT_USAGE;
	}
	if (o->mix.cart_pct > 0 &&
	    (o->item == 0 || o->item > UINT32_MAX - (o->mix.cart_lines - 1))) {
		sk_log(PROG, "--mix cart: items %" PRIu64 "..+%u are not item ids", o->item,
		       o->mix.cart_lines - 1);
		return EXIT_USAGE;
	}
	if (o->has_gate && (o->secret_file == NULL || o->item == 0)) {
		sk_log(PROG, "--gate needs --secret-file and an --item other than 0 "
			     "(X-User-Id carries no claim)");
		return EXIT_USAGE;
	}
	if ((o->reserved_file != NULL || o->prepare) && o->reserved < 0) {
		sk_log(PROG, "--%s needs --reserved", o->prepare ? "prepare" : "reserved-file");
		return EXIT_USAGE;
	}
	if (o->prepare && o->reserved_file == NULL) {
		sk_log(PROG, "--prepare needs --reserved-file");
		return EXIT_USAGE;
	}
	if (o->tls && !o->has_port)
		o->port = 443; /* a port in --server still wins */
	if (!o->has_attempts)
		o->attempts = o->users;
	if (o->attempts < o->users) {
		sk_log(PROG,
		       "--attempts %" PRIu64 " < --users %" PRIu64
		       ": every user tries at least once",
		       o->attempts, o->users);
		return EXIT_USAGE;
	}
	if (o->attempts > o->users && (uint64_t)llround(o->retriers * (double)o->users) == 0) {
		sk_log(PROG, "--attempts > --users needs --retriers > 0 "
			     "(at least one retrying user)");
		return EXIT_USAGE;
	}
	return server_resolve(o);
}
