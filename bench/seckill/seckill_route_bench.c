/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-route-bench: what the sold-out answer of POST /v1/seckill/{item}
 * costs at route level (sk_seckill_buy(), no network), now that a holder's
 * retry is recognised (sold_out_holder() in sk_seckill.c).
 *
 *   seckill-route-bench [--seconds S] [--runs R] [--cpu N] [--json]
 *
 * Set-up: one lcore's struct sk_seckill_lcore on an arena in plain memory
 * (2 MiB pages where the kernel gives them), EAL in --no-huge mode for the
 * order ring (tests/lib/sk_test_eal.h: own --file-prefix, runtime folder
 * removed at exit). One item of 1,000 units, per-user limit 1, automatic
 * dedup slice (8,192 slots, as the control plane creates it), sold out
 * through the route itself by 1,000 distinct users (X-User-Id), orders
 * moved to "confirmed" as the control plane would. Then, per call of
 * sk_seckill_buy() on the sold-out item, each over a crowd of 1,024
 * prepared requests (distinct users, tokens packed in one buffer):
 *
 *   sold_out_user_id  auth off, X-User-Id of a non-holder       → 410
 *   sold_out_jwt      auth on, valid JWT of a non-holder        → 410
 *                     (peek at sub + dedup lookup)
 *   holder_jwt        auth on, valid JWT of a holder            → duplicate
 *                     (peek + lookup + full verification + JSON answer)
 *   sold_out_no_auth  auth on, no Authorization                 → 410
 *                     (flag only: close to the route before the holder check)
 *   holder_user_id    auth off, X-User-Id of a holder           → duplicate
 *                     (lookup + JSON answer, no token)
 * and, on a second item still on sale, a flood of forged tokens (a wrong
 * but canonical signature: each costs a full HMAC to refuse) from one
 * client address:
 *   forged_jwt        auth on, no rate limit                    → 401
 *                     (the whole verification, HMAC included)
 *   forged_jwt_ip_rl  auth on, ip_rate 20/s, burst 40, spent    → 429
 *                     (refused by the per-IP limit before any HMAC;
 *                     the TSC passed is frozen, so the bucket never refills)
 * and the gate check (on two items of 2,000 units still on sale, each bought
 * once by the 1,000 holders, with tokens carrying the gate claim of the item):
 *   dup_jwt_claim     auth on, holder's JWT with the claim, item
 *                     without the gate flag                     → duplicate
 *   dup_jwt_gate      the same on an item with the flag: the claim
 *                     is checked, and passes                    → duplicate
 *   gate_pair_on/off  dup_jwt_gate on one item whose flag is set and
 *                     cleared batch by batch (1,024 calls each, in turn),
 *                     so the machine's load hits both alike; gate_pair_diff
 *                     is the median of the pairs' differences: the cost
 *                     of the check itself
 *   gate_refused_jwt  a non-holder's JWT without the claim on the
 *                     gated item (after the HMAC)               → 403 gate
 * and the reservation check, the same way (an item of 2,000 units bought
 * once by the 1,000 holders, every holder in its reservation set of
 * RESERVED users, ~1M, loaded whole as the control plane does):
 *   reserved_pair_on/off  the holders' JWTs (duplicate) with the item's
 *                     reserved_only flag set and cleared batch by batch;
 *                     before each batch the table lines of its 1,024 users
 *                     are flushed from the cache, as in a crowd of millions
 *                     of distinct users where each line is cold;
 *                     reserved_pair_diff is the median of the differences
 *   reserved_uid_on/off/diff  the same with auth off, the holders'
 *                     X-User-Id (no HMAC between the prefetch and the
 *                     check to hide the miss behind)
 * and for reference, on the sold_out_jwt tokens:
 *   token_verify      sk_token_verify() alone
 *   token_peek_user   sk_token_peek_user() alone
 *   dedup_lookup      sk_dedup_lookup() of a non-holder alone
 *
 * Every outcome is checked once before timing and counted during it; a
 * wrong outcome aborts the program. Each run times every case in turn for
 * S / R seconds (cases side by side under the same machine load); the
 * figures are the medians over R runs of ns (CLOCK_MONOTONIC) and TSC
 * cycles per call. Pinned to one CPU (--cpu, default: where the EAL put
 * the main thread). --json prints one JSON object.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "bench_util.h"
#include "sk_seckill.h"
#include "sk_test_eal.h"

#define ITEM	  1001u
#define ITEM_STR  "1001"
#define ITEM2	  1002u /* on sale: the forged-token cases */
#define ITEM2_STR "1002"
#define ITEM3	  1003u /* on sale, no gate flag: the claim read, not checked */
#define ITEM3_STR "1003"
#define ITEM4	  1004u /* on sale, gate flag: the claim checked */
#define ITEM4_STR "1004"
#define ITEM5	  1005u /* on sale, reserved_only: the reservation check */
#define ITEM5_STR "1005"
#define RESERVED  (1u << 20) /* users in ITEM5's set */
#define UNITS	  1000u
#define CROWD	  1024u /* requests per case, a power of two */
#define RUNS_MAX  50
#define CLIENT_IP 0x020012c6u
#define SECRET	  "bench-secret-0123456789-abcdefghijklmnop"

/* holders and non-holders: distinct ids of the same length (10 digits) */
#define HOLDER(i)     (UINT64_C(4200000000) + (uint64_t)(i)*131)
#define NON_HOLDER(i) (UINT64_C(5200000000) + (uint64_t)(i)*97)

enum kind {
	K_ROUTE, /* sk_seckill_buy() */
	K_VERIFY,
	K_PEEK,
	K_LOOKUP,
};

struct bcase {
	const char *name;
	const char *what;
	enum kind kind;
	struct sk_seckill_lcore *lc;	  /* K_ROUTE */
	const char *item;		  /* K_ROUTE: the path argument (NULL: ITEM) */
	const struct sk_http_request *rq; /* CROWD requests */
	int want;			  /* outcome, or return value */
	double ns[RUNS_MAX], cyc[RUNS_MAX];
	double m_ns, m_cyc;
};

#define CASE(n, w, k, l, r, o)                                                                     \
	{                                                                                          \
		.name = (n), .what = (w), .kind = (k), .lc = (l), .rq = (r), .want = (o)           \
	}
#define CASE_AT(n, w, l, it, r, o)                                                                 \
	{                                                                                          \
		.name = (n), .what = (w), .kind = K_ROUTE, .lc = (l), .item = (it), .rq = (r),     \
		.want = (o)                                                                        \
	}
#define CASE_ITEM2(n, w, l, r, o) CASE_AT(n, w, l, ITEM2_STR, r, o)

static struct {
	struct sk_shm *shm;
	struct sk_item *it;
	struct rte_ring *ring;
	struct sk_token_key *key;
	struct sk_seckill_conf conf_off, conf_on;
	struct sk_seckill_lcore lc_off, lc_on, lc_rl;
	struct sk_ratelimit *rl;
	struct sk_dedup dedup;
	struct sk_reserve_zone *reserve;
	int64_t now_ns;
	uint64_t sink;
	uint64_t wrong;
} B;

static void
die(const char *msg)
{
	fprintf(stderr, "seckill-route-bench: %s\n", msg);
	exit(1);
}

static struct sk_shm *
new_arena(void)
{
	struct sk_shm_conf c = {.nlcores = 1,
				.max_items = 8,
				.dedup_slots = UINT64_C(1) << 16,
				.status_bits = 12,
				.epoch = (uint32_t)time(NULL)};
	size_t sz = sk_shm_size(&c);
	void *mem = bench_huge_alloc(sz, NULL);

	return mem != NULL ? sk_shm_init(mem, sz, &c) : NULL;
}

/* user_id_reqs - CROWD requests with "X-User-Id: <id(i)>" (strings in @buf). */
static void
user_id_reqs(struct sk_http_request *rq, char *buf, size_t cap, uint64_t (*id)(unsigned))
{
	size_t off = 0;

	for (unsigned i = 0; i < CROWD; i++) {
		int n = snprintf(buf + off, cap - off, "%" PRIu64, id(i));

		if (n <= 0 || (size_t)n >= cap - off)
			die("user id buffer too small");
		rq[i] = (struct sk_http_request){.method = SK_HTTP_METHOD_POST,
						 .version = 11,
						 .keep_alive = true,
						 .user_id = buf + off,
						 .user_id_len = (uint16_t)n};
		off += (size_t)n + 1;
	}
}

/* token_reqs - CROWD requests with "Authorization: Bearer <JWT of id(i)>",
 * the tokens as a crowd's would be: sub, item, (gate if @gate,) iat, nbf, exp. */
static void
token_reqs(struct sk_http_request *rq, char *buf, size_t cap, uint64_t (*id)(unsigned),
	   uint32_t item, bool gate)
{
	int64_t now_s = B.now_ns / 1000000000;
	size_t off = 0, len;

	for (unsigned i = 0; i < CROWD; i++) {
		struct sk_token_claims cl = {.user = id(i),
					     .item = item,
					     .has_item = true,
					     .gate = item,
					     .has_gate = gate,
					     .iat = now_s - 60,
					     .has_iat = true,
					     .nbf = now_s - 65,
					     .has_nbf = true,
					     .exp = now_s + 3600};

		if (cap - off < SK_TOKEN_MAX_LEN + 8)
			die("token buffer too small");
		memcpy(buf + off, "Bearer ", 7);
		if (sk_token_mint(B.key, &cl, buf + off + 7, cap - off - 7, &len) != 0)
			die("cannot mint a token");
		rq[i] = (struct sk_http_request){.method = SK_HTTP_METHOD_POST,
						 .version = 11,
						 .keep_alive = true,
						 .authorization = buf + off,
						 .authorization_len = (uint16_t)(len + 7)};
		off += len + 8;
	}
}

static uint64_t
holder_id(unsigned i)
{
	return HOLDER(i % UNITS); /* 1,000 holders: 24 of them twice */
}

static uint64_t
non_holder_id(unsigned i)
{
	return NON_HOLDER(i);
}

/* forge - change the first signature character of each token of @rq: still
 * canonical base64url (its 6 bits are all used), so refusing it costs the
 * whole verification, HMAC included. */
static void
forge(struct sk_http_request *rq)
{
	for (unsigned i = 0; i < CROWD; i++) {
		char *sig = memrchr(rq[i].authorization, '.', rq[i].authorization_len);

		if (sig == NULL)
			die("a minted token has no signature");
		sig[1] = sig[1] == 'A' ? 'B' : 'A';
	}
}

/* sell_out - 1,000 distinct users buy one unit each through the route, then
 * one more is refused and the item reads sold out. */
static void
sell_out(const struct sk_http_request *holders)
{
	struct sk_seckill_reply out;
	struct sk_order_rec rec;
	struct sk_http_request late;
	char late_id[24];

	for (unsigned i = 0; i < UNITS; i++) {
		if (sk_seckill_buy(&B.lc_off, ITEM_STR, strlen(ITEM_STR), &holders[i], CLIENT_IP,
				   B.now_ns, rte_rdtsc(), &out) != SK_SECKILL_WON)
			die("a buy before the sell-out did not win");
		if (rte_ring_sc_dequeue_elem(B.ring, &rec, sizeof(rec)) != 0 ||
		    rec.user != HOLDER(i))
			die("no order record for a winner");
		/* what the control plane does once the order is durable */
		if (sk_status_move(&B.lc_off.buy.status, rec.id, SK_ORDER_QUEUED,
				   SK_ORDER_CONFIRMED) != 0)
			die("cannot confirm an order");
	}
	snprintf(late_id, sizeof(late_id), "%" PRIu64, NON_HOLDER(CROWD));
	late = (struct sk_http_request){.method = SK_HTTP_METHOD_POST,
					.version = 11,
					.user_id = late_id,
					.user_id_len = (uint16_t)strlen(late_id)};
	if (sk_seckill_buy(&B.lc_off, ITEM_STR, strlen(ITEM_STR), &late, CLIENT_IP, B.now_ns,
			   rte_rdtsc(), &out) != SK_SECKILL_SOLD_OUT ||
	    !sk_stock_is_sold_out(B.it) || sk_stock_remaining(B.it) != 0)
		die("the item is not sold out after 1,000 winners");
}

/* buy_once - each holder of @rq (1,000 distinct users; the 24 repeated ones
 * get their order back) buys @item once through the route. */
static void
buy_once(const struct sk_http_request *rq, const char *item)
{
	struct sk_seckill_reply out;
	struct sk_order_rec rec;

	for (unsigned i = 0; i < CROWD; i++) {
		enum sk_seckill_outcome o = sk_seckill_buy(&B.lc_on, item, strlen(item), &rq[i],
							   CLIENT_IP, B.now_ns, rte_rdtsc(), &out);

		if (o != (i < UNITS ? SK_SECKILL_WON : SK_SECKILL_DUPLICATE))
			die("a holder's first buy of a gate item did not win");
		if (o == SK_SECKILL_WON && rte_ring_sc_dequeue_elem(B.ring, &rec, sizeof(rec)) != 0)
			die("no order record for a gate item's winner");
	}
}

/* Batch pairs of a flag pair (flag on, flag off), at most. */
#define PAIRS_MAX 65536

/* A flag pair's figures: cycles per call, flag on and off, and on - off. */
struct pair {
	double on, off, diff;
};

/* flush_lines - evict the first table line of ITEM5's set each holder's
 * lookup reads (a crowd of millions: every lookup's line is cold). */
static void
flush_lines(void)
{
	const struct sk_reserve_dirent *d = sk_reserve_dir_find(B.reserve, ITEM5);
	uint64_t slots = 0, at = 0;

	for (unsigned i = 0; i < CROWD; i++) {
		const _Atomic uint64_t *s = sk_reserve_first(B.reserve, d, HOLDER(i), &slots, &at);

		if (s != NULL)
			_mm_clflush((const void *)&s[at]);
	}
	_mm_mfence();
}

/*
 * flag_pair - the same holder requests @rq on item @item with its flag
 * @flag (a byte of the item: gate, reserved_only) set and cleared in turn,
 * a batch of CROWD calls each, for about @seconds (@cold: the set's lines
 * flushed before each batch, untimed). The flag is left set.
 */
static struct pair
flag_pair(struct sk_seckill_lcore *lc, uint8_t *flag, const char *item,
	  const struct sk_http_request *rq, bool cold, double seconds)
{
	static double c_on[PAIRS_MAX], c_off[PAIRS_MAX], d[PAIRS_MAX];
	struct sk_seckill_reply out;
	double t0 = bench_now_s();
	size_t n = 0;

	while (n < PAIRS_MAX && bench_now_s() - t0 < seconds) {
		for (int f = 1; f >= 0; f--) {
			uint64_t c0, c1;

			*flag = (uint8_t)f;
			if (cold)
				flush_lines();
			c0 = rte_rdtsc();
			for (unsigned i = 0; i < CROWD; i++)
				if (sk_seckill_buy(lc, item, strlen(item), &rq[i], CLIENT_IP,
						   B.now_ns, 0, &out) != SK_SECKILL_DUPLICATE)
					B.wrong++;
			c1 = rte_rdtsc();
			(f ? c_on : c_off)[n] = (double)(c1 - c0) / CROWD;
		}
		d[n] = c_on[n] - c_off[n];
		n++;
	}
	*flag = 1;
	return (struct pair){bench_median(c_on, n), bench_median(c_off, n), bench_median(d, n)};
}

/* print_pair - a flag pair's three lines: @p's on, off and difference. */
static void
print_pair(const char *name, struct pair p, const char *on, const char *what)
{
	static const char *const sfx[3] = {"_on", "_off", "_diff"};
	const double v[3] = {p.on, p.off, p.diff};
	char n[32], w[128];

	for (int k = 0; k < 3; k++) {
		snprintf(n, sizeof(n), "%s%s", name, sfx[k]);
		snprintf(w, sizeof(w), "%s%s",
			 k == 0	  ? on
			 : k == 1 ? "the same requests, same item, flag cleared"
				  : "median of the pairs' on - off: ",
			 k == 2 ? what : "");
		printf("  %-18s %9s %9.1f %8s  %s\n", n, "", v[k], "", w);
	}
}

/* json_pair - a flag pair's three JSON members. */
static void
json_pair(const char *name, struct pair p)
{
	printf(",\"%s_on_cycles\":%.1f,\"%s_off_cycles\":%.1f,\"%s_diff_cycles\":%.1f", name, p.on,
	       name, p.off, name, p.diff);
}

/* reserve_set - ITEM5's set: the CROWD holders and RESERVED - CROWD others,
 * loaded whole; the lcores B.lc_on and B.lc_off read it. */
static void
reserve_set(void)
{
	size_t size = sk_reserve_size((uint64_t)RESERVED * 48);
	uint64_t *ids = malloc(RESERVED * sizeof(*ids));

	B.reserve = sk_reserve_init(bench_huge_alloc(size, NULL), size, 1);
	if (ids == NULL || B.reserve == NULL)
		die("out of memory (reservation set)");
	for (unsigned i = 0; i < RESERVED; i++)
		ids[i] = i < CROWD ? HOLDER(i) : UINT64_C(6200000000) + i;
	if (sk_reserve_load(B.reserve, ITEM5, ids, RESERVED) != 0 ||
	    sk_seckill_reserve_attach(&B.lc_on, B.reserve) != 0 ||
	    sk_seckill_reserve_attach(&B.lc_off, B.reserve) != 0)
		die("cannot load the reservation set");
	free(ids);
}

/* one - one call of case @c on request @i; returns its outcome. */
static inline int
one(struct bcase *c, unsigned i)
{
	const struct sk_http_request *r = &c->rq[i];
	struct sk_seckill_reply out;
	uint64_t user = 0, order = 0;
	uint32_t units = 0;
	int o;

	switch (c->kind) {
	case K_ROUTE:
		if (c->item == NULL)
			o = (int)sk_seckill_buy(c->lc, ITEM_STR, sizeof(ITEM_STR) - 1, r, CLIENT_IP,
						B.now_ns, 0, &out);
		else
			o = (int)sk_seckill_buy(c->lc, c->item, strlen(c->item), r, CLIENT_IP,
						B.now_ns, 0, &out);
		B.sink += out.status;
		return o;
	case K_VERIFY:
		o = (int)sk_token_verify(B.key, r->authorization + 7, r->authorization_len - 7u,
					 ITEM, B.now_ns / 1000000000, 5, &user);
		break;
	case K_PEEK:
		o = sk_token_peek_user(r->authorization + 7, r->authorization_len - 7u, &user);
		break;
	case K_LOOKUP:
	default:
		o = sk_dedup_lookup(&B.dedup, NON_HOLDER(i), &units, &order);
		break;
	}
	B.sink += user + units + order;
	return o;
}

/* check - every request of @c once: the expected outcome (also a warm-up). */
static void
check(struct bcase *c)
{
	for (unsigned i = 0; i < CROWD; i++) {
		int o = one(c, i);

		if (o != c->want) {
			fprintf(stderr,
				"seckill-route-bench: %s: request %u gave %d (%s), want %d\n",
				c->name, i, o,
				c->kind == K_ROUTE ? sk_seckill_outcome_name((unsigned)o) : "-",
				c->want);
			exit(1);
		}
	}
}

/* timed - calls of @c over the crowd for about @seconds: run @r's figures. */
static void
timed(struct bcase *c, double seconds, int r)
{
	uint64_t calls = 0, wrong = 0, c0, c1;
	double t0 = bench_now_s(), t1;

	c0 = rte_rdtsc();
	do {
		for (unsigned i = 0; i < CROWD; i++)
			wrong += one(c, i) != c->want;
		calls += CROWD;
		t1 = bench_now_s();
	} while (t1 - t0 < seconds);
	c1 = rte_rdtsc();
	B.wrong += wrong;
	c->ns[r] = (t1 - t0) * 1e9 / (double)calls;
	c->cyc[r] = (double)(c1 - c0) / (double)calls;
}

static void
usage(const char *prog)
{
	printf("usage: %s [--seconds S] [--runs R] [--cpu N] [--json]\n"
	       "  --seconds S  time per case over all runs (default 2, at most 60)\n"
	       "  --runs R     runs, the figures are their medians (default 5, at most %d)\n"
	       "  --cpu N      pin to CPU N (default: the CPU the EAL put us on)\n"
	       "  --json       print one JSON object instead of the table\n",
	       prog, RUNS_MAX);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'}, {"runs", required_argument, NULL, 'r'},
		{"cpu", required_argument, NULL, 'c'},	   {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},	   {NULL, 0, NULL, 0},
	};
	static struct sk_http_request rq_holder_uid[CROWD], rq_other_uid[CROWD];
	static struct sk_http_request rq_holder_jwt[CROWD], rq_other_jwt[CROWD], rq_none[CROWD];
	static struct sk_http_request rq_forged[CROWD];
	static struct sk_http_request rq_claim3[CROWD], rq_claim4[CROWD], rq_nogate4[CROWD];
	static struct sk_http_request rq_res5[CROWD];
	static char buf_holder_uid[CROWD * 24], buf_other_uid[CROWD * 24];
	char *buf_holder_jwt, *buf_other_jwt, *buf_forged, *buf_claim3, *buf_claim4, *buf_nogate4;
	char *buf_res5;
	size_t tok_cap = (size_t)CROWD * 320;
	double seconds = 2, runs_d = 5, cpu_d = -1, load[3] = {0, 0, 0};
	bool json = false;
	int opt, rc, runs, cpu;
	struct sk_item *it4 = NULL, *it5 = NULL;
	struct pair gate, res, res_uid;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 's') {
			if (!bench_opt_range("seconds", optarg, 0, 60, &seconds))
				return 2;
		} else if (opt == 'r') {
			if (!bench_opt_range("runs", optarg, 0, RUNS_MAX, &runs_d))
				return 2;
		} else if (opt == 'c') {
			if (!bench_opt_range("cpu", optarg, -1, CPU_SETSIZE - 1, &cpu_d))
				return 2;
		} else if ((rc = bench_opt_common(opt, &json, usage, argv[0])) >= 0) {
			return rc;
		}
	}
	runs = (int)runs_d;
	if (runs < 1) {
		fprintf(stderr, "error: --runs must be a whole number >= 1\n");
		return 2;
	}

	if (sk_test_eal_init("seckill-route-bench") != 0)
		die("EAL init failed");
	cpu = cpu_d >= 0 ? (int)cpu_d : sched_getcpu();
	if (bench_pin(cpu) != 0)
		fprintf(stderr, "seckill-route-bench: cannot pin to CPU %d\n", cpu);

	/* ------------------------------------------------------- set-up */
	B.now_ns = bench_clock_ns(CLOCK_REALTIME);
	B.shm = new_arena();
	B.ring = sk_order_ring_create(0, 1024, SOCKET_ID_ANY);
	buf_holder_jwt = malloc(tok_cap);
	buf_other_jwt = malloc(tok_cap);
	buf_forged = malloc(tok_cap);
	buf_claim3 = malloc(tok_cap);
	buf_claim4 = malloc(tok_cap);
	buf_nogate4 = malloc(tok_cap);
	buf_res5 = malloc(tok_cap);
	if (B.shm == NULL || B.ring == NULL || buf_holder_jwt == NULL || buf_other_jwt == NULL ||
	    buf_forged == NULL || buf_claim3 == NULL || buf_claim4 == NULL || buf_nogate4 == NULL ||
	    buf_res5 == NULL)
		die("out of memory (arena, order ring or token buffers)");
	if (sk_token_key_create(SECRET, strlen(SECRET), &B.key) != 0)
		die("cannot create the token key");
	B.conf_off = (struct sk_seckill_conf){.auth = false, .token_skew_s = 5, .key = B.key};
	B.conf_on = (struct sk_seckill_conf){.auth = true, .token_skew_s = 5, .key = B.key};
	if (sk_seckill_lcore_init(&B.lc_off, B.shm, 0, B.ring, &B.conf_off, NULL,
				  rte_get_tsc_hz()) != 0 ||
	    sk_seckill_lcore_init(&B.lc_on, B.shm, 0, B.ring, &B.conf_on, NULL, rte_get_tsc_hz()) !=
		    0)
		die("sk_seckill_lcore_init failed");

	/* the per-IP limit an operator would set (docs/operations.md) */
	struct sk_ratelimit_config rlc;

	sk_ratelimit_config_defaults(&rlc);
	rlc.hz = rte_get_tsc_hz();
	rlc.seed = 0x5eed;
	rlc.n_items = 4;
	rlc.ip_rate = 20;
	rlc.ip_burst = 40;
	if (sk_ratelimit_create(&rlc, &B.rl) != 0 ||
	    sk_seckill_lcore_init(&B.lc_rl, B.shm, 0, B.ring, &B.conf_on, B.rl, rte_get_tsc_hz()) !=
		    0)
		die("cannot set up the rate-limited lcore");

	struct sk_stock_conf sc = {.id = ITEM,
				   .per_user_limit = 1,
				   .start_ns = B.now_ns - 1000000000LL,
				   .end_ns = INT64_MAX,
				   .price = 1,
				   .total = UNITS};
	if (sk_shm_item_add(B.shm, &sc, 0, &B.it) != 0) /* 0: automatic slice */
		die("cannot add the item");
	sk_shm_dedup(B.shm, B.it, &B.dedup);
	sc.id = ITEM2;
	if (sk_shm_item_add(B.shm, &sc, 0, NULL) != 0)
		die("cannot add the second item");
	sc.total = 2 * UNITS; /* stays on sale after every holder bought once */
	sc.id = ITEM3;
	if (sk_shm_item_add(B.shm, &sc, 0, NULL) != 0)
		die("cannot add the third item");
	sc.id = ITEM4;
	sc.gate = true;
	if (sk_shm_item_add(B.shm, &sc, 0, &it4) != 0)
		die("cannot add the gated item");
	sc.id = ITEM5;
	sc.gate = false;
	sc.reserved_only = true;
	if (sk_shm_item_add(B.shm, &sc, 0, &it5) != 0)
		die("cannot add the reserved item");

	user_id_reqs(rq_holder_uid, buf_holder_uid, sizeof(buf_holder_uid), holder_id);
	user_id_reqs(rq_other_uid, buf_other_uid, sizeof(buf_other_uid), non_holder_id);
	token_reqs(rq_holder_jwt, buf_holder_jwt, tok_cap, holder_id, ITEM, false);
	token_reqs(rq_other_jwt, buf_other_jwt, tok_cap, non_holder_id, ITEM, false);
	token_reqs(rq_forged, buf_forged, tok_cap, non_holder_id, ITEM2, false);
	token_reqs(rq_claim3, buf_claim3, tok_cap, holder_id, ITEM3, true);
	token_reqs(rq_claim4, buf_claim4, tok_cap, holder_id, ITEM4, true);
	token_reqs(rq_nogate4, buf_nogate4, tok_cap, non_holder_id, ITEM4, false);
	token_reqs(rq_res5, buf_res5, tok_cap, holder_id, ITEM5, false);
	forge(rq_forged);
	for (unsigned i = 0; i < CROWD; i++)
		rq_none[i] = (struct sk_http_request){
			.method = SK_HTTP_METHOD_POST, .version = 11, .keep_alive = true};
	sell_out(rq_holder_uid);
	buy_once(rq_claim3, ITEM3_STR);
	buy_once(rq_claim4, ITEM4_STR);
	reserve_set();
	buy_once(rq_res5, ITEM5_STR);

	struct bcase cases[] = {
		CASE("sold_out_user_id", "sold out, auth off, X-User-Id of a non-holder", K_ROUTE,
		     &B.lc_off, rq_other_uid, SK_SECKILL_SOLD_OUT),
		CASE("sold_out_jwt", "sold out, auth on, JWT of a non-holder", K_ROUTE, &B.lc_on,
		     rq_other_jwt, SK_SECKILL_SOLD_OUT),
		CASE("holder_jwt", "sold out, auth on, JWT of a holder (duplicate)", K_ROUTE,
		     &B.lc_on, rq_holder_jwt, SK_SECKILL_DUPLICATE),
		CASE("sold_out_no_auth", "sold out, auth on, no Authorization", K_ROUTE, &B.lc_on,
		     rq_none, SK_SECKILL_SOLD_OUT),
		CASE("holder_user_id", "sold out, auth off, X-User-Id of a holder (duplicate)",
		     K_ROUTE, &B.lc_off, rq_holder_uid, SK_SECKILL_DUPLICATE),
		CASE("token_verify", "sk_token_verify() alone (non-holder JWT)", K_VERIFY, NULL,
		     rq_other_jwt, SK_TOKEN_OK),
		CASE("token_peek_user", "sk_token_peek_user() alone (non-holder JWT)", K_PEEK, NULL,
		     rq_other_jwt, 0),
		CASE("dedup_lookup", "sk_dedup_lookup() alone (non-holder)", K_LOOKUP, NULL,
		     rq_other_uid, -ENOENT),
		CASE_ITEM2("forged_jwt", "on sale, forged JWT, no rate limit (401 after the HMAC)",
			   &B.lc_on, rq_forged, SK_SECKILL_UNAUTHORIZED),
		CASE_ITEM2("forged_jwt_ip_rl",
			   "on sale, forged JWT, ip_rate on, burst spent (429, no HMAC)", &B.lc_rl,
			   rq_forged, SK_SECKILL_RATE_LIMITED),
		CASE_AT("dup_jwt_claim", "on sale, holder's JWT with the gate claim, no gate flag",
			&B.lc_on, ITEM3_STR, rq_claim3, SK_SECKILL_DUPLICATE),
		CASE_AT("dup_jwt_gate", "on sale, holder's JWT with the gate claim, gate flag",
			&B.lc_on, ITEM4_STR, rq_claim4, SK_SECKILL_DUPLICATE),
		CASE_AT("gate_refused_jwt", "on sale, gate flag, JWT without the claim (403 gate)",
			&B.lc_on, ITEM4_STR, rq_nogate4, SK_SECKILL_GATE),
	};
	const size_t ncases = sizeof(cases) / sizeof(cases[0]);
	struct sk_seckill_reply spent;

	/* spend the address's burst (40 forged tokens verified, refused 401) */
	for (unsigned i = 0; i < rlc.ip_burst; i++)
		if (sk_seckill_buy(&B.lc_rl, ITEM2_STR, sizeof(ITEM2_STR) - 1, &rq_forged[i],
				   CLIENT_IP, B.now_ns, 0, &spent) != SK_SECKILL_UNAUTHORIZED)
			die("a forged token within the burst was not refused 401");

	for (size_t k = 0; k < ncases; k++)
		check(&cases[k]);
	if (B.lc_rl.stats.token_verifies != rlc.ip_burst)
		die("the rate-limited lcore verified more tokens than the burst");

	/* -------------------------------------------------------- timing */
	for (int r = 0; r < runs; r++)
		for (size_t k = 0; k < ncases; k++)
			timed(&cases[k], seconds / runs, r);
	gate = flag_pair(&B.lc_on, &it4->gate, ITEM4_STR, rq_claim4, false, seconds);
	res = flag_pair(&B.lc_on, &it5->reserved_only, ITEM5_STR, rq_res5, true, seconds);
	res_uid =
		flag_pair(&B.lc_off, &it5->reserved_only, ITEM5_STR, rq_holder_uid, true, seconds);
	if (B.wrong != 0)
		die("a timed call gave an unexpected outcome");
	if (B.lc_rl.stats.token_verifies != rlc.ip_burst)
		die("a token was verified after the burst was spent");
	for (size_t k = 0; k < ncases; k++) {
		cases[k].m_ns = bench_median(cases[k].ns, (size_t)runs);
		cases[k].m_cyc = bench_median(cases[k].cyc, (size_t)runs);
	}
	if (getloadavg(load, 3) < 0)
		load[0] = -1;

	double ghz = (double)rte_get_tsc_hz() / 1e9;
	size_t tok_len = rq_other_jwt[0].authorization_len - 7u;
	uint64_t slots = B.dedup.mask + 1;

	if (json) {
		printf("{\"bench\":\"seckill_route\",\"tsc_ghz\":%.3f,\"cpu\":%d,\"runs\":%d,"
		       "\"seconds_per_case\":%.2f,\"loadavg_1m\":%.2f,\"units\":%u,"
		       "\"dedup_slots\":%" PRIu64 ",\"crowd\":%u,\"token_len\":%zu",
		       ghz, cpu, runs, seconds, load[0], UNITS, slots, CROWD, tok_len);
		for (size_t k = 0; k < ncases; k++)
			printf(",\"%s_ns\":%.1f,\"%s_cycles\":%.1f", cases[k].name, cases[k].m_ns,
			       cases[k].name, cases[k].m_cyc);
		json_pair("gate_pair", gate);
		json_pair("reserved_pair", res);
		json_pair("reserved_uid", res_uid);
		printf(",\"reserved_users\":%u}\n", RESERVED);
	} else {
		printf("seckill-route-bench: item of %u units sold out by %u users, dedup slice "
		       "%" PRIu64 " slots,\n"
		       "  %u requests per case, token %zu bytes; CPU %d, TSC %.3f GHz, "
		       "median of %d runs of %.2f s per case, load average %.2f\n",
		       UNITS, UNITS, slots, CROWD, tok_len, cpu, ghz, runs, seconds / runs,
		       load[0]);
		printf("  %-18s %9s %9s %8s  %s\n", "case", "ns/call", "cycles", "x no_auth",
		       "what");
		for (size_t k = 0; k < ncases; k++)
			printf("  %-18s %9.1f %9.1f %8.1f  %s\n", cases[k].name, cases[k].m_ns,
			       cases[k].m_cyc, cases[k].m_cyc / cases[3].m_cyc, cases[k].what);
		print_pair("gate_pair", gate,
			   "dup_jwt_gate, flag set (batches in turn with the next)",
			   "the gate check");
		print_pair("reserved_pair", res,
			   "holder's JWT, reserved_only set, set of 1M users, lines cold",
			   "the reservation check");
		print_pair("reserved_uid", res_uid, "the same, auth off, X-User-Id of the holders",
			   "no token");
	}
	rte_ring_free(B.ring);
	sk_token_key_free(B.key);
	free(buf_holder_jwt);
	free(buf_other_jwt);
	free(buf_forged);
	free(buf_claim3);
	free(buf_claim4);
	free(buf_nogate4);
	free(buf_res5);
	sk_ratelimit_free(B.rl);
	free(B.shm);
	sk_test_eal_cleanup();
	return B.sink == 42 ? 3 : 0; /* keep the sink alive */
}
