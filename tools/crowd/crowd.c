/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-crowd - a flash-sale crowd in one process.
 *
 * N users press "buy" on one item through C keep-alive connections; a subset
 * of them retries several times. The run is one epoll loop over non-blocking
 * kernel sockets, one request in flight per connection. Every answer is
 * parsed (crowd_http.h), counted, and checked against what the front door
 * promises (design §1, §4): one order per user, duplicates that carry the
 * won order, order ids never shared, winners == units, every order pollable.
 *
 *   seckill-crowd --server IP [--port N] [--item ID] [--users N] [--attempts N]
 *                 [--conns N] [--poll] [--expect-units N] [--json FILE] ...
 *
 * Exit status: 0 every check passed; 1 a check failed; 2 usage error;
 * 3 could not run (no connection ever, resource or file error); 4 the time
 * bound (or SIGINT) stopped the run before every attempt was answered and no
 * check failed otherwise. docs/crowd.md has the details.
 *
 * The file is split in sections: options, schedule, users and orders,
 * connections, answers, the loop, the report.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sk_common.h"

#include "crowd_hist.h"
#include "crowd_http.h"
#include "sk_config.h"
#include "sk_token.h"

#define EXIT_CHECK     1
#define EXIT_USAGE     2
#define EXIT_RUNTIME   3
#define EXIT_TIMEBOUND 4

#define CONNS_MAX    20000u
#define USERS_MAX    100000000ull
#define ATTEMPTS_MAX 200000000ull
/* Tokens live for this long (s): longer than any run (--max-seconds <= 3600). */
#define TOKEN_TTL_S 600
_Static_assert(SK_CONFIG_TOKEN_SECRET_MIN == 32 && SK_CONFIG_TOKEN_SECRET_MAX == 4096,
	       "the --secret-file messages name these limits");
/* Receive buffer: one whole answer fits, head and body at their limits. */
#define CONN_IN_CAP  (SK_CROWD_HEAD_MAX + SK_CROWD_BODY_MAX)
#define CONN_OUT_CAP (SK_TOKEN_MAX_LEN + 512)
/* How often timeouts and reconnects are looked at. */
#define SCAN_NS (20 * 1000000ull)
/* Reconnect backoff after an error: 10 ms doubling to 1 s. */
#define BACKOFF_MIN_NS (10 * 1000000ull)
#define BACKOFF_MAX_NS (1000 * 1000000ull)
/* --wait-start: at most this many waits, each at least 1 ms, plus a margin. */
#define WAIT_CYCLES_MAX 1000u
#define WAIT_MARGIN_NS	(1000000ull)
/* Without "starts_in_ms" in a 425, wait this long. */
#define WAIT_DEFAULT_NS (100 * 1000000ull)
/* epoll_wait batch. */
#define EVENTS_MAX 256

static const char usage[] =
	"usage: seckill-crowd --server IP [--port N] [--item ID] [--users N] [--user-base N]\n"
	"                     [--attempts N] [--retriers FRACTION] [--seed N] [--conns N]\n"
	"                     [--wait-start] [--secret-file FILE] [--timeout-ms N]\n"
	"                     [--max-seconds S] [--poll] [--expect-units N] [--json FILE]\n"
	"                     [--orders FILE] [--cpu N]\n"
	"\n"
	"Simulate a flash-sale crowd against POST /v1/seckill/{item} and check the answers.\n"
	"\n"
	"  --server IP          front door address, IPv4 or IPv6 literal (required)\n"
	"  --port N             TCP port (default 80)\n"
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
	"  --timeout-ms N       per-request and connect timeout (default 10000)\n"
	"  --max-seconds S      hard bound on the whole run (default 60)\n"
	"  --poll               at the end, GET /v1/orders/{id} for every winner\n"
	"  --expect-units N     check that the number of winners is N\n"
	"  --json FILE          write the summary as one JSON object (\"-\": stdout)\n"
	"  --orders FILE        write \"user order\" lines for every winner\n"
	"  --cpu N              pin the process to CPU N\n"
	"  -h, --help           this help\n"
	"\n"
	"Exit status: 0 all checks passed, 1 a check failed, 2 usage, 3 could not run,\n"
	"4 stopped by --max-seconds or SIGINT before every attempt was answered.\n";

/* ================================================================ options */

struct opts {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char host[64]; /* Host header value: "ip:port" or "[ip6]:port" */
	uint64_t item;
	uint64_t users;
	uint64_t user_base;
	uint64_t attempts;
	uint64_t seed;
	uint64_t expect_units;
	double retriers;
	double max_seconds;
	uint32_t conns;
	uint32_t timeout_ms;
	uint16_t port;
	int cpu;
	bool has_attempts;
	bool has_expect;
	bool wait_start;
	bool poll;
	const char *server;
	const char *secret_file;
	const char *json;
	const char *orders;
};

/* parse_u64 - strict decimal in [lo, hi]; false on junk, sign or range. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return false;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return false;
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* parse_double - strict finite decimal in [lo, hi]. */
static bool
parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (*s == '\0' || *s == ' ' || *s == '+')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* bad_arg - print a one-line complaint about option @name; returns EXIT_USAGE. */
static int
bad_arg(const char *name, const char *val, const char *what)
{
	fprintf(stderr, "seckill-crowd: --%s: '%s' is not %s\n", name, val, what);
	return EXIT_USAGE;
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
	{'p', 1, 65535, "a port (1..65535)", OPT_FIELD(port), 0},
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

/* parse_opts - fill @o from argv; 0, or an exit status after printing why. */
static int
parse_opts(int argc, char **argv, struct opts *o)
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
	o->conns = 64;
	o->timeout_ms = 10000;
	o->cpu = -1;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", lopts, &idx)) != -1) {
		const struct int_opt *io = int_opt_of(opt);
		if (io != NULL) {
			uint64_t v;
			if (!parse_u64(optarg, io->lo, io->hi, &v))
				return bad_arg(lopts[idx].name, optarg, io->what);
			int_opt_store(o, io, v);
			continue;
		}
		switch (opt) {
		case 'r':
			if (!parse_double(optarg, 0.0, 1.0, &o->retriers))
				return bad_arg("retriers", optarg, "a fraction (0..1)");
			break;
		case 'm':
			if (!parse_double(optarg, 0.001, 3600.0, &o->max_seconds))
				return bad_arg("max-seconds", optarg, "a duration (0.001..3600 s)");
			break;
		case 'S':
			o->server = optarg;
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
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			fprintf(stderr,
				"seckill-crowd: '%s': unknown option or missing value (try "
				"--help)\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "seckill-crowd: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->server == NULL) {
		fprintf(stderr, "seckill-crowd: --server is required (try --help)\n");
		return EXIT_USAGE;
	}
	if (o->user_base - 1 > UINT64_MAX - o->users) {
		fprintf(stderr, "seckill-crowd: --user-base + --users overflows a user id\n");
		return EXIT_USAGE;
	}
	if (!o->has_attempts)
		o->attempts = o->users;
	if (o->attempts < o->users) {
		fprintf(stderr,
			"seckill-crowd: --attempts %" PRIu64 " < --users %" PRIu64
			": every user tries at least once\n",
			o->attempts, o->users);
		return EXIT_USAGE;
	}
	if (o->attempts > o->users && (uint64_t)llround(o->retriers * (double)o->users) == 0) {
		fprintf(stderr, "seckill-crowd: --attempts > --users needs --retriers > 0 "
				"(at least one retrying user)\n");
		return EXIT_USAGE;
	}

	struct sockaddr_in *a4 = (struct sockaddr_in *)&o->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&o->addr;
	if (inet_pton(AF_INET, o->server, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(o->port);
		o->addr_len = sizeof(*a4);
		snprintf(o->host, sizeof(o->host), "%s:%u", o->server, o->port);
	} else if (inet_pton(AF_INET6, o->server, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(o->port);
		o->addr_len = sizeof(*a6);
		snprintf(o->host, sizeof(o->host), "[%s]:%u", o->server, o->port);
	} else {
		return bad_arg("server", o->server, "an IPv4 or IPv6 address");
	}
	return 0;
}

/* ================================================================ schedule */

/* splitmix64: seeds well from any 64-bit value, passes BigCrush. */
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* rng_below - uniform in [0, n), n <= 2^32 (multiply-shift; bias < 2^-32). */
static uint32_t
rng_below(uint64_t *s, uint64_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

/*
 * schedule_build - the order of the buy attempts: every user index once, plus
 * (attempts - users) retries spread evenly over a random subset of retriers,
 * all shuffled with @seed. Returns the array (attempts entries) or NULL;
 * *retriers receives the number of users that retry.
 */
static uint32_t *
schedule_build(const struct opts *o, uint64_t *retriers)
{
	uint64_t n = o->attempts, u = o->users, extra = n - u, s = o->seed;
	uint64_t r = (uint64_t)llround(o->retriers * (double)u);
	uint32_t *a = malloc(n * sizeof(*a));

	if (a == NULL)
		return NULL;
	if (r > extra)
		r = extra;
	for (uint64_t i = 0; i < u; i++)
		a[i] = (uint32_t)i;
	/* a partial Fisher-Yates picks the r retriers into a[0..r) */
	for (uint64_t i = 0; i < r; i++) {
		uint64_t j = i + rng_below(&s, u - i);
		uint32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	for (uint64_t k = 0; k < extra; k++)
		a[u + k] = a[k % r];
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = rng_below(&s, i + 1);
		uint32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	*retriers = r;
	return a;
}

/* ================================================================ users and orders */

/* Per-user flags (one byte each, next to the first order id seen). */
enum {
	UF_WIN = 1u << 0,	 /* got a fresh (non-duplicate) win */
	UF_DUP = 1u << 1,	 /* got a duplicate answer */
	UF_LIMIT = 1u << 2,	 /* got a 409 limit with an order id */
	UF_WON_TWICE = 1u << 3,	 /* second fresh win seen (counted once) */
	UF_TWO_ORDERS = 1u << 4, /* a second, different order id seen (counted once) */
};

/* Order id -> user index, open addressing with linear probing; key 0 = empty. */
struct order_map {
	uint64_t *keys;
	uint32_t *users;
	size_t cap; /* power of two */
	size_t n;
};

static int
order_map_init(struct order_map *m, size_t cap)
{
	m->keys = calloc(cap, sizeof(*m->keys));
	m->users = calloc(cap, sizeof(*m->users));
	m->cap = cap;
	m->n = 0;
	return m->keys != NULL && m->users != NULL ? 0 : -ENOMEM;
}

static void
order_map_free(struct order_map *m)
{
	free(m->keys);
	free(m->users);
	memset(m, 0, sizeof(*m));
}

static size_t
order_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/*
 * order_map_put - remember that order @id went to user @u. Returns 1 if @id
 * was new, 0 if it was known for the same user, -1 if it was known for
 * another user, -ENOMEM if the map could not grow (the id is then not kept).
 */
static int
order_map_put(struct order_map *m, uint64_t id, uint32_t u)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct order_map g;
		if (order_map_init(&g, m->cap * 2) != 0) {
			order_map_free(&g);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (m->keys[i] == 0)
				continue;
			size_t j = order_hash(m->keys[i], g.cap);
			while (g.keys[j] != 0)
				j = (j + 1) & (g.cap - 1);
			g.keys[j] = m->keys[i];
			g.users[j] = m->users[i];
		}
		g.n = m->n;
		order_map_free(m);
		*m = g;
	}
	size_t j = order_hash(id, m->cap);
	while (m->keys[j] != 0) {
		if (m->keys[j] == id)
			return m->users[j] == u ? 0 : -1;
		j = (j + 1) & (m->cap - 1);
	}
	m->keys[j] = id;
	m->users[j] = u;
	m->n++;
	return 1;
}

/* ================================================================ run state */

enum job_kind { JOB_NONE = 0, JOB_BUY, JOB_POLL, JOB_ITEM };

enum conn_state { CS_CLOSED = 0, CS_CONNECTING, CS_IDLE, CS_BUSY };

enum phase { PH_BUY = 0, PH_POLL, PH_ITEM, PH_DONE };

struct conn {
	int fd;
	uint8_t state;	   /* enum conn_state */
	uint8_t kind;	   /* enum job_kind in flight (CS_BUSY) */
	uint8_t fails;	   /* consecutive failures, for the backoff */
	bool want_out;	   /* EPOLLOUT armed */
	uint32_t user;	   /* user index of the job in flight */
	uint32_t out_off;  /* bytes of out[] written */
	uint32_t out_len;  /* bytes of out[] to write */
	uint32_t in_len;   /* bytes in in[] */
	uint32_t answers;  /* answers read on this connection */
	uint64_t start_ns; /* CS_BUSY: request start; CS_CONNECTING: connect start */
	uint64_t retry_ns; /* CS_CLOSED: reconnect not before */
	char out[CONN_OUT_CAP];
	char in[CONN_IN_CAP];
};

/* Everything counted about the run; all zero at the start. */
struct stats {
	uint64_t sent;	    /* buy requests sent (re-sends after a 425 included) */
	uint64_t answered;  /* buy answers parsed (425s that were re-sent included) */
	uint64_t deferred;  /* 425 answers whose attempt --wait-start sent again */
	uint64_t lost;	    /* buy requests without answer (errors, timeouts) */
	uint64_t http[600]; /* buy answers by HTTP status */
	uint64_t status[SK_CROWD_ST__COUNT]; /* buy answers by body "status" */
	uint64_t fresh_wins;		     /* non-duplicate wins (answers) */
	uint64_t duplicates;		     /* answers with "duplicate":true */
	uint64_t retry_after;		     /* answers with Retry-After */
	uint64_t retry_after_max;
	uint64_t err_connect;  /* connect failed or timed out */
	uint64_t err_socket;   /* reset or other error on an open connection */
	uint64_t err_closed;   /* closed by the server with a request in flight */
	uint64_t err_timeout;  /* request timeouts */
	uint64_t err_protocol; /* unparsable answer, bad body, unsolicited bytes */
	uint64_t connects;     /* connections established */
	uint64_t reconnects;   /* reconnects after Connection: close */
	uint64_t idle_closes;  /* closed by the server while idle */
	uint64_t users_won_twice;
	uint64_t users_two_orders;
	uint64_t dup_mismatch;	/* duplicate answers whose id differs from the win's */
	uint64_t orders_shared; /* order ids also given to another user */
	uint64_t win_no_order;	/* a win without an order id (also a protocol error) */
	uint64_t waits;		/* --wait-start pauses */
	uint64_t waited_ns;
	uint64_t polls_sent;
	uint64_t polls_ok;
	uint64_t polls_missing; /* 404 */
	uint64_t polls_bad;	/* other status, bad body, wrong order, lost */
	uint64_t poll_status[SK_CROWD_ST__COUNT];
	int item_http; /* GET /v1/items answer, 0 if none */
	bool item_has_remaining;
	uint64_t item_remaining;
	char item_state[16];
};

struct crowd {
	struct opts o;
	int epfd;
	struct sk_token_key *key;
	int64_t token_exp;
	uint64_t retriers;
	/* schedule */
	uint32_t *sched;
	uint64_t cursor;
	uint32_t *requeue; /* buy jobs to send again after a --wait-start pause */
	uint32_t requeue_n;
	/* users */
	uint64_t *order; /* first order id seen per user, 0 = none */
	uint8_t *uflags;
	struct order_map omap;
	/* polls */
	uint32_t *poll_users;
	uint64_t poll_n;
	uint64_t poll_cursor;
	bool item_sent;
	/* connections */
	struct conn *conns;
	uint32_t inflight;
	bool ever_connected;
	/* time */
	enum phase phase;
	uint64_t t_start;    /* process start of the run */
	uint64_t deadline;   /* t_start + max-seconds */
	uint64_t go_ns;	     /* paused until (0: not paused) */
	uint64_t t_go;	     /* start of the measured buy phase */
	uint64_t n_go;	     /* answers counted before t_go */
	uint64_t t_last_buy; /* last buy answer */
	uint64_t t_pause;    /* start of the current --wait-start pause */
	uint64_t wait_cycles;
	/* outcome */
	const char *fatal; /* why the run could not go on (exit 3), or NULL */
	char fatal_buf[160];
	char note[160]; /* why the time bound stopped the run early, or "" */
	bool timebound; /* stopped by --max-seconds */
	struct stats st;
	struct sk_crowd_hist lat;
	/* precomputed request heads */
	char buy_head[192];
	size_t buy_head_len;
};

static volatile sig_atomic_t interrupted;

static void
on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* put_u64 - write @v in decimal at @p; returns the number of bytes. */
static size_t
put_u64(char *p, uint64_t v)
{
	char t[20];
	size_t n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

static void
put_lit(char *p, size_t *len, const char *s)
{
	size_t n = strlen(s);

	memcpy(p + *len, s, n);
	*len += n;
}

/* ================================================================ connections */

static void conn_dispatch(struct crowd *cw, struct conn *c, uint64_t now);

static uint64_t
backoff_ns(uint8_t fails)
{
	uint64_t d = BACKOFF_MIN_NS << (fails < 7 ? fails : 7);

	return d < BACKOFF_MAX_NS ? d : BACKOFF_MAX_NS;
}

/*
 * conn_close - close @c; with @rst, abort it (RST) so that no TIME_WAIT is
 * left behind on our side. A job in flight must have been accounted for.
 */
static void
conn_close(struct crowd *cw, struct conn *c, bool rst, uint64_t retry_ns)
{
	if (c->fd >= 0) {
		if (rst) {
			struct linger l = {.l_onoff = 1, .l_linger = 0};
			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		}
		close(c->fd);
	}
	if (c->state == CS_BUSY)
		cw->inflight--;
	c->fd = -1;
	c->state = CS_CLOSED;
	c->kind = JOB_NONE;
	c->want_out = false;
	c->in_len = c->out_len = c->out_off = 0;
	c->retry_ns = retry_ns;
}

/* job_lost - the job in flight on @c will get no answer; count it. */
static void
job_lost(struct crowd *cw, struct conn *c)
{
	if (c->state != CS_BUSY)
		return;
	switch (c->kind) {
	case JOB_BUY:
		cw->st.lost++;
		break;
	case JOB_POLL:
		cw->st.polls_bad++;
		break;
	default:
		break;
	}
}

/* conn_fail - an error on @c: count it (@counter), drop the job, back off. */
static void
conn_fail(struct crowd *cw, struct conn *c, uint64_t *counter, uint64_t now)
{
	(*counter)++;
	job_lost(cw, c);
	if (c->fails < UINT8_MAX)
		c->fails++;
	conn_close(cw, c, true, now + backoff_ns(c->fails));
}

static void
conn_open(struct crowd *cw, struct conn *c, uint64_t now)
{
	int fd = socket(cw->o.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		cw->st.err_connect++;
		if (c->fails < UINT8_MAX)
			c->fails++;
		c->retry_ns = now + backoff_ns(c->fails);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->start_ns = now;
	c->in_len = c->out_len = c->out_off = 0;
	c->answers = 0;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
				 .data.u32 = (uint32_t)(c - cw->conns)};
	if (epoll_ctl(cw->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		conn_fail(cw, c, &cw->st.err_connect, now);
		return;
	}
	c->want_out = true;
	if (connect(fd, (const struct sockaddr *)&cw->o.addr, cw->o.addr_len) != 0 &&
	    errno != EINPROGRESS) {
		int err = errno;
		if (!cw->ever_connected) {
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "connect to %s: %s",
				 cw->o.host, strerror(err));
			cw->fatal = cw->fatal_buf;
		}
		conn_fail(cw, c, &cw->st.err_connect, now);
		return;
	}
	c->state = CS_CONNECTING;
}

static void
set_out(struct crowd *cw, struct conn *c, bool want)
{
	if (c->want_out == want)
		return;
	struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0),
				 .data.u32 = (uint32_t)(c - cw->conns)};
	if (epoll_ctl(cw->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->want_out = want;
}

/* conn_connected - finish a non-blocking connect on @c. */
static void
conn_connected(struct crowd *cw, struct conn *c, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0) {
		if (!cw->ever_connected) {
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "connect to %s: %s",
				 cw->o.host, strerror(err));
			cw->fatal = cw->fatal_buf;
		}
		conn_fail(cw, c, &cw->st.err_connect, now);
		return;
	}
	cw->ever_connected = true;
	cw->st.connects++;
	c->state = CS_IDLE;
	set_out(cw, c, false);
	conn_dispatch(cw, c, now);
}

/* conn_flush - write what is left of the request on @c; false if @c failed. */
static bool
conn_flush(struct crowd *cw, struct conn *c, uint64_t now)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (uint32_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_out(cw, c, true);
			return true;
		}
		conn_fail(cw, c, &cw->st.err_socket, now);
		return false;
	}
	set_out(cw, c, false);
	return true;
}

/* build_identity - the X-User-Id or Authorization line for user index @u. */
static bool
build_identity(struct crowd *cw, char *p, size_t *len, uint32_t u)
{
	uint64_t user = cw->o.user_base + u;

	if (cw->key == NULL) {
		put_lit(p, len, "X-User-Id: ");
		*len += put_u64(p + *len, user);
		put_lit(p, len, "\r\n");
		return true;
	}
	struct sk_token_claims cl = {
		.user = user, .item = cw->o.item, .exp = cw->token_exp, .has_item = true};
	size_t tlen;
	put_lit(p, len, "Authorization: Bearer ");
	if (sk_token_mint(cw->key, &cl, p + *len, CONN_OUT_CAP - *len - 64, &tlen) != 0)
		return false;
	*len += tlen;
	put_lit(p, len, "\r\n");
	return true;
}

/* next_job - the next job of the current phase, or JOB_NONE. */
static enum job_kind
next_job(struct crowd *cw, uint32_t *user)
{
	switch (cw->phase) {
	case PH_BUY:
		if (cw->go_ns != 0)
			return JOB_NONE;
		if (cw->requeue_n > 0) {
			*user = cw->requeue[--cw->requeue_n];
			return JOB_BUY;
		}
		if (cw->cursor < cw->o.attempts) {
			*user = cw->sched[cw->cursor++];
			return JOB_BUY;
		}
		return JOB_NONE;
	case PH_POLL:
		if (cw->poll_cursor < cw->poll_n) {
			*user = cw->poll_users[cw->poll_cursor++];
			return JOB_POLL;
		}
		return JOB_NONE;
	case PH_ITEM:
		if (!cw->item_sent) {
			cw->item_sent = true;
			*user = 0;
			return JOB_ITEM;
		}
		return JOB_NONE;
	default:
		return JOB_NONE;
	}
}

/* conn_dispatch - give idle @c the next job and send it. */
static void
conn_dispatch(struct crowd *cw, struct conn *c, uint64_t now)
{
	uint32_t u = 0;
	enum job_kind k;
	size_t len = 0;
	char *p = c->out;

	if (c->state != CS_IDLE)
		return;
	k = next_job(cw, &u);
	if (k == JOB_NONE)
		return;
	switch (k) {
	case JOB_BUY:
		memcpy(p, cw->buy_head, cw->buy_head_len);
		len = cw->buy_head_len;
		break;
	case JOB_POLL:
		put_lit(p, &len, "GET /v1/orders/");
		len += put_u64(p + len, cw->order[u]);
		put_lit(p, &len, " HTTP/1.1\r\nHost: ");
		put_lit(p, &len, cw->o.host);
		put_lit(p, &len, "\r\n");
		break;
	default:
		put_lit(p, &len, "GET /v1/items/");
		len += put_u64(p + len, cw->o.item);
		put_lit(p, &len, " HTTP/1.1\r\nHost: ");
		put_lit(p, &len, cw->o.host);
		put_lit(p, &len, "\r\n\r\n");
		break;
	}
	if (k != JOB_ITEM) {
		if (!build_identity(cw, p, &len, u)) {
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "cannot mint a token");
			cw->fatal = cw->fatal_buf;
			return;
		}
		put_lit(p, &len, k == JOB_BUY ? "Content-Length: 0\r\n\r\n" : "\r\n");
	}
	c->out_len = (uint32_t)len;
	c->out_off = 0;
	c->kind = (uint8_t)k;
	c->user = u;
	c->state = CS_BUSY;
	c->start_ns = now;
	cw->inflight++;
	if (k == JOB_BUY) {
		cw->st.sent++;
		if (cw->t_go == 0) {
			cw->t_go = now;
			cw->n_go = cw->st.answered;
		}
	} else if (k == JOB_POLL) {
		cw->st.polls_sent++;
	}
	conn_flush(cw, c, now);
}

/* ================================================================ answers */

/* record_order - user @u was given order @id by an answer of kind @flag. */
static void
record_order(struct crowd *cw, uint32_t u, uint64_t id, uint8_t flag)
{
	uint8_t *f = &cw->uflags[u];
	uint64_t *mine = &cw->order[u];

	if (flag == UF_WIN && (*f & UF_WIN) && !(*f & UF_WON_TWICE)) {
		*f |= UF_WON_TWICE;
		cw->st.users_won_twice++;
	}
	if (*mine == 0) {
		*mine = id;
	} else if (*mine != id) {
		if (!(*f & UF_TWO_ORDERS)) {
			*f |= UF_TWO_ORDERS;
			cw->st.users_two_orders++;
		}
		/* a duplicate that disagrees with a win, in either arrival order */
		if ((flag == UF_DUP && (*f & UF_WIN)) || (flag == UF_WIN && (*f & UF_DUP)))
			cw->st.dup_mismatch++;
	}
	*f |= flag;
	int r = order_map_put(&cw->omap, id, u);
	if (r == -1)
		cw->st.orders_shared++;
	else if (r == -ENOMEM && cw->fatal == NULL)
		cw->fatal = "out of memory for the order map";
}

/* wait_start - a 425 arrived under --wait-start: pause the crowd, resend @u later. */
static void
wait_start(struct crowd *cw, const struct sk_crowd_body *b, uint32_t u, uint64_t now)
{
	uint64_t ms = b->has_starts_in_ms ? b->starts_in_ms : WAIT_DEFAULT_NS / 1000000;
	uint64_t go;

	/* at most one buy per connection is in flight, so requeue never overflows */
	SK_ASSERT(cw->requeue_n < cw->o.conns);
	cw->requeue[cw->requeue_n++] = u;
	cw->st.deferred++;
	if (ms > 3600u * 1000u)
		ms = 3601u * 1000u;
	go = now + ms * 1000000ull + WAIT_MARGIN_NS;
	if (go <= cw->go_ns)
		return;
	if (go > cw->deadline) {
		snprintf(cw->note, sizeof(cw->note),
			 "item %" PRIu64 " starts in %" PRIu64 " ms, after --max-seconds",
			 cw->o.item, ms);
		cw->timebound = true;
		return;
	}
	if (cw->go_ns == 0) {
		if (++cw->wait_cycles > WAIT_CYCLES_MAX) {
			cw->fatal = "still not started after 1000 waits";
			return;
		}
		cw->st.waits++;
		cw->t_pause = now;
	}
	cw->go_ns = go;
}

static void
answer_buy(struct crowd *cw, struct conn *c, const struct sk_crowd_resp *r, uint64_t now)
{
	struct sk_crowd_body b;
	uint32_t u = c->user;

	sk_crowd_hist_add(&cw->lat, now - c->start_ns);
	cw->st.answered++;
	cw->t_last_buy = now;
	cw->st.http[r->status]++;
	if (r->has_retry_after) {
		cw->st.retry_after++;
		if (r->retry_after > cw->st.retry_after_max)
			cw->st.retry_after_max = r->retry_after;
	}
	if (sk_crowd_body_scan(r->body, r->body_len, &b) != 0) {
		cw->st.err_protocol++;
		return;
	}
	cw->st.status[b.status]++;
	switch (b.status) {
	case SK_CROWD_ST_QUEUED:
	case SK_CROWD_ST_CONFIRMED:
	case SK_CROWD_ST_PAID:
		if (r->status != 200 && r->status != 202)
			break;
		if (!b.has_order) {
			cw->st.win_no_order++;
			cw->st.err_protocol++;
			break;
		}
		if (b.duplicate) {
			cw->st.duplicates++;
			record_order(cw, u, b.order, UF_DUP);
		} else {
			cw->st.fresh_wins++;
			record_order(cw, u, b.order, UF_WIN);
		}
		break;
	case SK_CROWD_ST_LIMIT:
		if (b.has_order)
			record_order(cw, u, b.order, UF_LIMIT);
		break;
	case SK_CROWD_ST_NOT_STARTED:
		if (cw->o.wait_start && r->status == 425)
			wait_start(cw, &b, u, now);
		break;
	default:
		break;
	}
}

static void
answer_poll(struct crowd *cw, struct conn *c, const struct sk_crowd_resp *r)
{
	struct sk_crowd_body b;

	if (r->status == 404) {
		cw->st.polls_missing++;
		return;
	}
	if (r->status != 200 || sk_crowd_body_scan(r->body, r->body_len, &b) != 0 || !b.has_order ||
	    b.order != cw->order[c->user]) {
		cw->st.polls_bad++;
		return;
	}
	switch (b.status) {
	case SK_CROWD_ST_QUEUED:
	case SK_CROWD_ST_CONFIRMED:
	case SK_CROWD_ST_PAID:
	case SK_CROWD_ST_CANCELLED:
	case SK_CROWD_ST_FAILED:
		cw->st.polls_ok++;
		cw->st.poll_status[b.status]++;
		break;
	default:
		cw->st.polls_bad++;
		break;
	}
}

static void
answer_item(struct crowd *cw, const struct sk_crowd_resp *r)
{
	struct sk_crowd_body b;

	cw->st.item_http = r->status;
	if (r->status == 200 && sk_crowd_body_scan(r->body, r->body_len, &b) == 0) {
		cw->st.item_has_remaining = b.has_remaining;
		cw->st.item_remaining = b.remaining;
		if (b.has_state)
			memcpy(cw->st.item_state, b.state, sizeof(b.state));
	}
}

/* conn_read - read and handle what arrived on @c. */
static void
conn_read(struct crowd *cw, struct conn *c, uint64_t now)
{
	ssize_t n;

	if (c->in_len >= CONN_IN_CAP) {
		conn_fail(cw, c, &cw->st.err_protocol, now);
		return;
	}
	n = recv(c->fd, c->in + c->in_len, CONN_IN_CAP - c->in_len, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		conn_fail(cw, c, &cw->st.err_socket, now);
		return;
	}
	if (n == 0) {
		if (c->state == CS_BUSY) {
			conn_fail(cw, c, &cw->st.err_closed, now);
		} else if (c->in_len > 0) {
			conn_fail(cw, c, &cw->st.err_protocol, now);
		} else {
			/* keep-alive idle close: not an error, but a close right after
			 * accept must not turn into a busy reconnect loop */
			cw->st.idle_closes++;
			if (c->answers == 0 && c->fails < UINT8_MAX)
				c->fails++;
			conn_close(cw, c, false,
				   c->answers == 0 ? now + backoff_ns(c->fails) : now);
		}
		return;
	}
	c->in_len += (uint32_t)n;

	size_t used = 0;
	while (used < c->in_len) {
		struct sk_crowd_resp r;
		enum sk_crowd_parse pr = sk_crowd_resp_parse(c->in + used, c->in_len - used, &r);
		if (pr == SK_CROWD_PARSE_AGAIN)
			break;
		if (pr != SK_CROWD_PARSE_OK || (r.status >= 200 && c->state != CS_BUSY)) {
			conn_fail(cw, c, &cw->st.err_protocol, now);
			return;
		}
		used += r.len;
		if (r.status < 200)
			continue; /* interim answer */
		switch (c->kind) {
		case JOB_BUY:
			answer_buy(cw, c, &r, now);
			break;
		case JOB_POLL:
			answer_poll(cw, c, &r);
			break;
		default:
			answer_item(cw, &r);
			break;
		}
		c->answers++;
		c->fails = 0;
		c->state = CS_IDLE;
		c->kind = JOB_NONE;
		cw->inflight--;
		if (r.close) {
			if (used < c->in_len) {
				conn_fail(cw, c, &cw->st.err_protocol, now);
				return;
			}
			cw->st.reconnects++;
			conn_close(cw, c, false, now);
			conn_open(cw, c, now);
			return;
		}
	}
	if (used > 0) {
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= (uint32_t)used;
	}
	conn_dispatch(cw, c, now);
}

/* ================================================================ the loop */

/* phase_advance - move to the next phase once the current one is drained. */
static void
phase_advance(struct crowd *cw, uint64_t now)
{
	bool moved = false;

	for (;;) {
		if (cw->inflight != 0)
			break;
		if (cw->phase == PH_BUY &&
		    (cw->cursor < cw->o.attempts || cw->requeue_n > 0 || cw->go_ns != 0))
			break;
		if (cw->phase == PH_POLL && cw->poll_cursor < cw->poll_n)
			break;
		if (cw->phase == PH_ITEM && !cw->item_sent)
			break;
		if (cw->phase == PH_DONE)
			break;
		cw->phase++;
		moved = true;
		if (cw->phase == PH_POLL) {
			if (!cw->o.poll)
				continue;
			uint64_t n = 0;
			for (uint64_t u = 0; u < cw->o.users; u++)
				n += cw->order[u] != 0;
			cw->poll_users = malloc((n ? n : 1) * sizeof(*cw->poll_users));
			if (cw->poll_users == NULL) {
				cw->fatal = "out of memory for the polls";
				return;
			}
			for (uint64_t u = 0; u < cw->o.users; u++) {
				if (cw->order[u] != 0)
					cw->poll_users[cw->poll_n++] = (uint32_t)u;
			}
		}
	}
	if (moved) {
		for (uint32_t i = 0; i < cw->o.conns; i++)
			conn_dispatch(cw, &cw->conns[i], now);
	}
}

/* scan - timeouts, reconnects and the end of a --wait-start pause. */
static void
scan(struct crowd *cw, uint64_t now)
{
	uint64_t tmo = (uint64_t)cw->o.timeout_ms * 1000000ull;
	bool go = false;

	if (cw->go_ns != 0 && now >= cw->go_ns) {
		cw->st.waited_ns += now - cw->t_pause;
		cw->go_ns = 0;
		cw->t_go = 0; /* the measured phase starts now */
		go = true;
	}
	for (uint32_t i = 0; i < cw->o.conns && cw->fatal == NULL; i++) {
		struct conn *c = &cw->conns[i];
		switch (c->state) {
		case CS_BUSY:
			if (now - c->start_ns > tmo)
				conn_fail(cw, c, &cw->st.err_timeout, now);
			break;
		case CS_CONNECTING:
			if (now - c->start_ns > tmo)
				conn_fail(cw, c, &cw->st.err_connect, now);
			break;
		case CS_CLOSED:
			if (cw->phase != PH_DONE && now >= c->retry_ns)
				conn_open(cw, c, now);
			break;
		default:
			if (go)
				conn_dispatch(cw, c, now);
			break;
		}
	}
}

static void
conn_event(struct crowd *cw, struct conn *c, uint32_t ev, uint64_t now)
{
	if (c->state == CS_CONNECTING) {
		if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			conn_connected(cw, c, now);
		return;
	}
	if (c->state == CS_CLOSED)
		return;
	if ((ev & EPOLLOUT) && c->out_off < c->out_len && !conn_flush(cw, c, now))
		return;
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
		conn_read(cw, c, now);
}

/* run - the event loop, until every phase is done or the run must stop. */
static void
run(struct crowd *cw)
{
	struct epoll_event evs[EVENTS_MAX];
	uint64_t now = now_ns(), last_scan = now;

	for (uint32_t i = 0; i < cw->o.conns; i++)
		conn_open(cw, &cw->conns[i], now);
	while (cw->phase != PH_DONE && cw->fatal == NULL && !cw->timebound && !interrupted) {
		now = now_ns();
		if (now >= cw->deadline) {
			snprintf(cw->note, sizeof(cw->note), "stopped by --max-seconds %g",
				 cw->o.max_seconds);
			cw->timebound = true;
			break;
		}
		uint64_t wake = last_scan + SCAN_NS;
		if (cw->go_ns != 0 && cw->go_ns < wake)
			wake = cw->go_ns;
		if (cw->deadline < wake)
			wake = cw->deadline;
		int tmo = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		int n = epoll_wait(cw->epfd, evs, EVENTS_MAX, tmo);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "epoll_wait: %s",
				 strerror(errno));
			cw->fatal = cw->fatal_buf;
			break;
		}
		/* one clock read per event: a latency must not include the time spent
		 * on the events before it in the batch */
		for (int i = 0; i < n; i++) {
			now = now_ns();
			conn_event(cw, &cw->conns[evs[i].data.u32], evs[i].events, now);
		}
		now = now_ns();
		if (now - last_scan >= SCAN_NS || (cw->go_ns != 0 && now >= cw->go_ns)) {
			scan(cw, now);
			last_scan = now;
		}
		phase_advance(cw, now);
	}
	if (interrupted && cw->note[0] == '\0')
		snprintf(cw->note, sizeof(cw->note), "interrupted");
	for (uint32_t i = 0; i < cw->o.conns; i++) {
		struct conn *c = &cw->conns[i];
		if (c->fd >= 0) {
			if (c->state == CS_BUSY)
				job_lost(cw, c);
			conn_close(cw, c, true, 0);
		}
	}
}

/* ================================================================ report */

struct check {
	const char *name; /* JSON key */
	int ok;		  /* 1 ok, 0 failed, -1 not applicable */
	char text[160];	  /* human form */
};

enum {
	CK_UNITS = 0,
	CK_ONE_ORDER,
	CK_DUPS,
	CK_UNIQUE,
	CK_POLLS,
	CK_ERRORS,
	CK_ANSWERED,
	CK__COUNT
};

struct summary {
	uint64_t winners;     /* users holding an order id */
	uint64_t won_earlier; /* holders without a fresh win in this run */
	uint64_t errors;
	double secs;   /* measured buy phase */
	double rps;    /* answers per second over the measured phase */
	double waited; /* seconds paused by --wait-start */
	struct check ck[CK__COUNT];
	int exit;
};

static void
summarize(const struct crowd *cw, struct summary *s)
{
	const struct stats *st = &cw->st;

	memset(s, 0, sizeof(*s));
	for (uint64_t u = 0; u < cw->o.users; u++) {
		if (cw->order[u] == 0)
			continue;
		s->winners++;
		if (!(cw->uflags[u] & UF_WIN))
			s->won_earlier++;
	}
	s->errors = st->err_connect + st->err_socket + st->err_closed + st->err_timeout +
		    st->err_protocol;
	if (cw->t_go != 0 && cw->t_last_buy > cw->t_go) {
		s->secs = (double)(cw->t_last_buy - cw->t_go) / 1e9;
		s->rps = (double)(st->answered - cw->n_go) / s->secs;
	}
	s->waited = (double)st->waited_ns / 1e9;

	struct check *ck = s->ck;
	ck[CK_UNITS] = (struct check){"winners_eq_units", -1, ""};
	if (cw->o.has_expect) {
		ck[CK_UNITS].ok = s->winners == cw->o.expect_units;
		if (ck[CK_UNITS].ok)
			snprintf(ck[CK_UNITS].text, sizeof(ck[0].text),
				 "winners == units (%" PRIu64 ")", cw->o.expect_units);
		else
			snprintf(ck[CK_UNITS].text, sizeof(ck[0].text),
				 "winners == units (%" PRIu64 "): %" PRIu64 " winners",
				 cw->o.expect_units, s->winners);
	}
	ck[CK_ONE_ORDER] = (struct check){
		"one_order_per_user", st->users_two_orders == 0 && st->users_won_twice == 0, ""};
	snprintf(ck[CK_ONE_ORDER].text, sizeof(ck[0].text),
		 ck[CK_ONE_ORDER].ok ? "no user won twice"
				     : "no user won twice: %" PRIu64 " users with two order ids, "
				       "%" PRIu64 " won twice",
		 st->users_two_orders, st->users_won_twice);
	ck[CK_DUPS] = (struct check){"duplicates_match", st->dup_mismatch == 0, ""};
	snprintf(ck[CK_DUPS].text, sizeof(ck[0].text),
		 ck[CK_DUPS].ok ? "duplicates carry the won order"
				: "duplicates carry the won order: %" PRIu64 " do not",
		 st->dup_mismatch);
	ck[CK_UNIQUE] = (struct check){"orders_unique", st->orders_shared == 0, ""};
	snprintf(ck[CK_UNIQUE].text, sizeof(ck[0].text),
		 ck[CK_UNIQUE].ok ? "orders unique"
				  : "orders unique: %" PRIu64 " answers gave another user's order",
		 st->orders_shared);
	ck[CK_POLLS] = (struct check){"polls_ok", -1, ""};
	if (cw->o.poll) {
		/* a run stopped early fails here only for answers that were wrong */
		bool complete = cw->phase > PH_POLL;
		ck[CK_POLLS].ok = st->polls_missing == 0 && st->polls_bad == 0 &&
				  (!complete || st->polls_ok == s->winners);
		size_t l = (size_t)snprintf(ck[CK_POLLS].text, sizeof(ck[0].text),
					    "polls %" PRIu64 "/%" PRIu64, st->polls_ok, s->winners);
		for (unsigned k = 0; k < SK_CROWD_ST__COUNT && l < sizeof(ck[0].text); k++) {
			if (st->poll_status[k] != 0)
				l += (size_t)snprintf(ck[CK_POLLS].text + l, sizeof(ck[0].text) - l,
						      " %s %" PRIu64,
						      sk_crowd_status_str((enum sk_crowd_status)k),
						      st->poll_status[k]);
		}
		if (l < sizeof(ck[0].text) && (st->polls_missing || st->polls_bad))
			snprintf(ck[CK_POLLS].text + l, sizeof(ck[0].text) - l,
				 ", %" PRIu64 " missing, %" PRIu64 " bad", st->polls_missing,
				 st->polls_bad);
	}
	ck[CK_ERRORS] = (struct check){"no_errors", s->errors == 0, ""};
	snprintf(ck[CK_ERRORS].text, sizeof(ck[0].text), "errors %" PRIu64, s->errors);
	uint64_t done = st->answered - st->deferred;
	ck[CK_ANSWERED] =
		(struct check){"all_answered", done == cw->o.attempts && cw->phase == PH_DONE, ""};
	snprintf(ck[CK_ANSWERED].text, sizeof(ck[0].text), "answered %" PRIu64 "/%" PRIu64 "%s",
		 done, cw->o.attempts,
		 cw->timebound ? " (time bound)" : (interrupted ? " (interrupted)" : ""));

	bool failed = false;
	for (int i = 0; i < CK_ANSWERED; i++)
		failed |= ck[i].ok == 0;
	if (cw->fatal != NULL)
		s->exit = EXIT_RUNTIME;
	else if (failed)
		s->exit = EXIT_CHECK;
	else if (!ck[CK_ANSWERED].ok)
		s->exit = EXIT_TIMEBOUND;
	else
		s->exit = 0;
}

/* thousands - @v with thousands separators ("28,500"), in a static buffer. */
static const char *
thousands(double v, char *buf, size_t cap)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%.0f", v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < cap; i++) {
		buf[o++] = t[i];
		int left = n - 1 - i;
		if (left > 0 && left % 3 == 0 && t[i] != '-')
			buf[o++] = ',';
	}
	buf[o] = '\0';
	return buf;
}

static const char *
lat_str(uint64_t ns, char *buf, size_t cap)
{
	if (ns < 1000000)
		snprintf(buf, cap, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, cap, "%.2f ms", (double)ns / 1e6);
	return buf;
}

static void
report_text(const struct crowd *cw, const struct summary *s)
{
	const struct stats *st = &cw->st;
	const struct sk_crowd_hist *h = &cw->lat;
	char a[32], b[32], c[32], d[32], e[32];

	printf("seckill-crowd: %s item %" PRIu64 ", %u conns, seed %" PRIu64 ", %s\n", cw->o.host,
	       cw->o.item, cw->o.conns, cw->o.seed, cw->key ? "JWT" : "X-User-Id");
	printf("attempts %" PRIu64, st->sent - st->deferred);
	if (st->sent - st->deferred != cw->o.attempts)
		printf(" of %" PRIu64, cw->o.attempts);
	printf(" (%" PRIu64 " users, %" PRIu64 " retrying) in %.2f s, %s req/s", cw->o.users,
	       cw->retriers, s->secs, thousands(s->rps, a, sizeof(a)));
	if (s->waited > 0)
		printf(" (after %.2f s waiting for the start)", s->waited);
	printf("; p50 %s p90 %s p99 %s p99.9 %s max %s\n",
	       lat_str(sk_crowd_hist_quantile(h, 0.5), a, sizeof(a)),
	       lat_str(sk_crowd_hist_quantile(h, 0.9), b, sizeof(b)),
	       lat_str(sk_crowd_hist_quantile(h, 0.99), c, sizeof(c)),
	       lat_str(sk_crowd_hist_quantile(h, 0.999), d, sizeof(d)),
	       lat_str(h->count ? h->max : 0, e, sizeof(e)));

	printf("winners %" PRIu64, s->winners);
	if (s->won_earlier)
		printf(" (%" PRIu64 " from an earlier run)", s->won_earlier);
	for (unsigned k = SK_CROWD_ST_QUEUED; k < SK_CROWD_ST__COUNT; k++) {
		uint64_t v = st->status[k];
		if (k == SK_CROWD_ST_QUEUED || k == SK_CROWD_ST_CONFIRMED || k == SK_CROWD_ST_PAID)
			continue;
		if (v != 0)
			printf(" | %s %" PRIu64, sk_crowd_status_str((enum sk_crowd_status)k), v);
	}
	printf(" | duplicate %" PRIu64 " | errors %" PRIu64 "\n", st->duplicates, s->errors);
	printf("http");
	for (unsigned k = 100; k < 600; k++) {
		if (st->http[k] != 0)
			printf(" %u:%" PRIu64, k, st->http[k]);
	}
	if (st->answered == 0)
		printf(" (no answer)");
	printf(" | wins %" PRIu64 " | reconnects %" PRIu64 " | idle closes %" PRIu64,
	       st->fresh_wins, st->reconnects, st->idle_closes);
	if (st->retry_after)
		printf(" | Retry-After %" PRIu64 " (max %" PRIu64 " s)", st->retry_after,
		       st->retry_after_max);
	printf("\n");
	if (s->errors)
		printf("errors: connect %" PRIu64 " socket %" PRIu64 " closed %" PRIu64
		       " timeout %" PRIu64 " protocol %" PRIu64 " (lost attempts %" PRIu64 ")\n",
		       st->err_connect, st->err_socket, st->err_closed, st->err_timeout,
		       st->err_protocol, st->lost);
	if (st->item_http != 0) {
		printf("item %" PRIu64 ": HTTP %d", cw->o.item, st->item_http);
		if (st->item_state[0] != '\0')
			printf(", state %s", st->item_state);
		if (st->item_has_remaining)
			printf(", remaining %" PRIu64, st->item_remaining);
		printf("\n");
	}
	printf("check:");
	bool first = true;
	for (int i = 0; i < CK__COUNT; i++) {
		if (s->ck[i].ok < 0)
			continue;
		printf("%s %s %s", first ? "" : ";", s->ck[i].text, s->ck[i].ok ? "OK" : "FAIL");
		first = false;
	}
	printf("\n");
	fflush(stdout);
}

static void
json_counts(FILE *f, const char *name, const uint64_t *v, unsigned from, unsigned to, bool st)
{
	bool first = true;

	fprintf(f, "\"%s\":{", name);
	for (unsigned k = from; k < to; k++) {
		if (v[k] == 0)
			continue;
		if (st)
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",",
				sk_crowd_status_str((enum sk_crowd_status)k), v[k]);
		else
			fprintf(f, "%s\"%u\":%" PRIu64, first ? "" : ",", k, v[k]);
		first = false;
	}
	fprintf(f, "}");
}

/* report_json - the summary as one JSON object on one line; 0 or -1. */
static int
report_json(const struct crowd *cw, const struct summary *s, FILE *f)
{
	const struct stats *st = &cw->st;
	const struct sk_crowd_hist *h = &cw->lat;

	fprintf(f,
		"{\"server\":\"%s\",\"item\":%" PRIu64 ",\"users\":%" PRIu64
		",\"user_base\":%" PRIu64 ",\"retriers\":%" PRIu64 ",\"attempts\":%" PRIu64
		",\"conns\":%u,\"seed\":%" PRIu64 ",\"auth\":%s",
		cw->o.host, cw->o.item, cw->o.users, cw->o.user_base, cw->retriers, cw->o.attempts,
		cw->o.conns, cw->o.seed, cw->key ? "true" : "false");
	fprintf(f,
		",\"sent\":%" PRIu64 ",\"answered\":%" PRIu64 ",\"deferred\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"duration_s\":%.6f,\"waited_s\":%.6f,\"rps\":%.1f",
		st->sent, st->answered, st->deferred, st->lost, s->secs, s->waited, s->rps);
	fprintf(f,
		",\"latency_ns\":{\"count\":%" PRIu64 ",\"min\":%" PRIu64 ",\"mean\":%" PRIu64
		",\"p50\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64
		",\"max\":%" PRIu64 "}",
		h->count, h->count ? h->min : 0, h->count ? h->sum / h->count : 0,
		sk_crowd_hist_quantile(h, 0.5), sk_crowd_hist_quantile(h, 0.9),
		sk_crowd_hist_quantile(h, 0.99), sk_crowd_hist_quantile(h, 0.999), h->max);
	fprintf(f, ",");
	json_counts(f, "http", st->http, 100, 600, false);
	fprintf(f, ",");
	json_counts(f, "status", st->status, 0, SK_CROWD_ST__COUNT, true);
	fprintf(f,
		",\"winners\":%" PRIu64 ",\"fresh_wins\":%" PRIu64 ",\"won_earlier\":%" PRIu64
		",\"duplicates\":%" PRIu64 ",\"retry_after\":{\"count\":%" PRIu64
		",\"max_s\":%" PRIu64 "}",
		s->winners, st->fresh_wins, s->won_earlier, st->duplicates, st->retry_after,
		st->retry_after_max);
	fprintf(f,
		",\"errors\":{\"total\":%" PRIu64 ",\"connect\":%" PRIu64 ",\"socket\":%" PRIu64
		",\"closed\":%" PRIu64 ",\"timeout\":%" PRIu64 ",\"protocol\":%" PRIu64
		",\"win_without_order\":%" PRIu64 "}",
		s->errors, st->err_connect, st->err_socket, st->err_closed, st->err_timeout,
		st->err_protocol, st->win_no_order);
	fprintf(f,
		",\"connects\":%" PRIu64 ",\"reconnects\":%" PRIu64 ",\"idle_closes\":%" PRIu64
		",\"waits\":%" PRIu64,
		st->connects, st->reconnects, st->idle_closes, st->waits);
	fprintf(f,
		",\"violations\":{\"users_two_orders\":%" PRIu64 ",\"users_won_twice\":%" PRIu64
		",\"dup_mismatch\":%" PRIu64 ",\"orders_shared\":%" PRIu64 "}",
		st->users_two_orders, st->users_won_twice, st->dup_mismatch, st->orders_shared);
	if (cw->o.poll) {
		fprintf(f,
			",\"polls\":{\"sent\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"missing\":%" PRIu64
			",\"bad\":%" PRIu64 ",",
			st->polls_sent, st->polls_ok, st->polls_missing, st->polls_bad);
		json_counts(f, "status", st->poll_status, 0, SK_CROWD_ST__COUNT, true);
		fprintf(f, "}");
	} else {
		fprintf(f, ",\"polls\":null");
	}
	if (st->item_http != 0) {
		fprintf(f, ",\"item_read\":{\"http\":%d,\"state\":", st->item_http);
		if (st->item_state[0] != '\0') {
			/* the scanner kept raw bytes: write only plain ones */
			fputc('"', f);
			for (const char *p = st->item_state; *p != '\0'; p++)
				fputc((*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') ? *p
											   : '?',
				      f);
			fputc('"', f);
		} else {
			fprintf(f, "null");
		}
		if (st->item_has_remaining)
			fprintf(f, ",\"remaining\":%" PRIu64 "}", st->item_remaining);
		else
			fprintf(f, ",\"remaining\":null}");
	} else {
		fprintf(f, ",\"item_read\":null");
	}
	fprintf(f, ",\"checks\":{");
	for (int i = 0; i < CK__COUNT; i++)
		fprintf(f, "%s\"%s\":%s", i ? "," : "", s->ck[i].name,
			s->ck[i].ok < 0 ? "null" : (s->ck[i].ok ? "true" : "false"));
	fprintf(f, "},\"timebound\":%s,\"ok\":%s,\"exit\":%d}\n", cw->timebound ? "true" : "false",
		s->exit == 0 ? "true" : "false", s->exit);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

static int
write_orders(const struct crowd *cw, FILE *f)
{
	for (uint64_t u = 0; u < cw->o.users; u++) {
		if (cw->order[u] != 0)
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", cw->o.user_base + u, cw->order[u]);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* ================================================================ main */

/* open_out - open an output file early, so a bad path fails before the load. */
static FILE *
open_out(const char *path, const char *opt)
{
	FILE *f;

	if (path == NULL)
		return NULL;
	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (f == NULL)
		fprintf(stderr, "seckill-crowd: --%s %s: %s\n", opt, path, strerror(errno));
	return f;
}

static int
setup(struct crowd *cw)
{
	struct opts *o = &cw->o;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)o->conns + 32) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur < (rlim_t)o->conns + 32 || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			fprintf(stderr,
				"seckill-crowd: --conns %u needs %u file descriptors, the "
				"limit is %llu\n",
				o->conns, o->conns + 32, (unsigned long long)rl.rlim_max);
			return EXIT_USAGE;
		}
	}
	if (o->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			fprintf(stderr, "seckill-crowd: --cpu %d: %s\n", o->cpu, strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (o->secret_file != NULL) {
		static uint8_t secret[SK_CONFIG_TOKEN_SECRET_MAX];
		size_t len = 0;
		int rc = sk_config_read_secret(o->secret_file, secret, &len, NULL, 0);
		if (rc == 0)
			rc = sk_token_key_create(secret, len, &cw->key);
		memset(secret, 0, sizeof(secret));
		if (rc != 0) {
			fprintf(stderr, "seckill-crowd: --secret-file %s: %s\n", o->secret_file,
				rc == -EINVAL  ? "secret shorter than 32 bytes"
				: rc == -EFBIG ? "longer than 4096 bytes"
				: rc == -EIO   ? "read error"
					       : strerror(-rc));
			return EXIT_USAGE;
		}
		cw->token_exp = (int64_t)time(NULL) + TOKEN_TTL_S;
	}

	cw->sched = schedule_build(o, &cw->retriers);
	cw->order = calloc(o->users, sizeof(*cw->order));
	cw->uflags = calloc(o->users, sizeof(*cw->uflags));
	cw->requeue = calloc(o->conns, sizeof(*cw->requeue));
	cw->conns = calloc(o->conns, sizeof(*cw->conns));
	if (cw->sched == NULL || cw->order == NULL || cw->uflags == NULL || cw->requeue == NULL ||
	    cw->conns == NULL || order_map_init(&cw->omap, 1024) != 0) {
		fprintf(stderr,
			"seckill-crowd: out of memory for %" PRIu64 " users, %" PRIu64
			" attempts\n",
			o->users, o->attempts);
		return EXIT_RUNTIME;
	}
	for (uint32_t i = 0; i < o->conns; i++)
		cw->conns[i].fd = -1;
	cw->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cw->epfd < 0) {
		fprintf(stderr, "seckill-crowd: epoll_create1: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	cw->buy_head_len = (size_t)snprintf(cw->buy_head, sizeof(cw->buy_head),
					    "POST /v1/seckill/%" PRIu64 " HTTP/1.1\r\nHost: %s\r\n",
					    o->item, o->host);
	sk_crowd_hist_init(&cw->lat);
	cw->t_start = now_ns();
	cw->deadline = cw->t_start + (uint64_t)(o->max_seconds * 1e9);
	return 0;
}

static void
teardown(struct crowd *cw)
{
	if (cw->epfd > 0)
		close(cw->epfd);
	sk_token_key_free(cw->key);
	free(cw->sched);
	free(cw->order);
	free(cw->uflags);
	free(cw->requeue);
	free(cw->conns);
	free(cw->poll_users);
	order_map_free(&cw->omap);
}

int
main(int argc, char **argv)
{
	static struct crowd cw; /* large: the histogram and the connection table */
	struct summary s;
	FILE *json = NULL, *orders = NULL;
	int rc;

	rc = parse_opts(argc, argv, &cw.o);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	cw.epfd = -1;
	if (cw.o.json != NULL && (json = open_out(cw.o.json, "json")) == NULL)
		return EXIT_USAGE;
	if (cw.o.orders != NULL && (orders = open_out(cw.o.orders, "orders")) == NULL)
		return EXIT_USAGE;
	rc = setup(&cw);
	if (rc != 0) {
		teardown(&cw);
		return rc;
	}

	struct sigaction sa = {.sa_handler = on_sigint};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	run(&cw);

	if (cw.fatal != NULL)
		fprintf(stderr, "seckill-crowd: %s\n", cw.fatal);
	else if (cw.note[0] != '\0')
		fprintf(stderr, "seckill-crowd: %s\n", cw.note);
	summarize(&cw, &s);
	report_text(&cw, &s);
	if (json != NULL && report_json(&cw, &s, json) != 0) {
		fprintf(stderr, "seckill-crowd: --json %s: write error\n", cw.o.json);
		if (s.exit == 0)
			s.exit = EXIT_RUNTIME;
	}
	if (orders != NULL && write_orders(&cw, orders) != 0) {
		fprintf(stderr, "seckill-crowd: --orders %s: write error\n", cw.o.orders);
		if (s.exit == 0)
			s.exit = EXIT_RUNTIME;
	}
	if (json != NULL && json != stdout)
		fclose(json);
	if (orders != NULL && orders != stdout)
		fclose(orders);
	teardown(&cw);
	return s.exit;
}
