/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sse-bench: what the order events streams cost one lcore (no EAL, no
 * network), GET /v1/orders/{id}/events:
 *
 *   sse-bench [--streams N] [--sndbuf B] [--seconds S] [--runs R] [--cpu N] [--json]
 *
 * N streams (default 100,000) open in one lcore's stream table, each
 * following its own order in a status table of one lcore in plain memory
 * (2^17 slots for the default), through sk_sse_table_poll() - the code the
 * dataplane runs each pass - with a send that copies the bytes into the
 * stream's own buffer of B bytes (default 1,024: the per-connection send
 * buffer a 100k-stream lcore would be given), as sk_tcp_send() copies into
 * the connection's. Not included: building the TCP segment and handing it
 * to the NIC at the pass's flush, which every answer pays.
 *
 *   push       every order changes status (queued <-> confirmed, as the
 *              control plane's confirm), then turns of SK_SSE_SCAN_MAX
 *              streams until each pushed its event: cycles per event
 *              (the scan, the status read, the event built, the copy)
 *   idle_scan  nothing changed, nothing due: cycles per stream looked at
 *   keepalive  every stream's keep-alive due: cycles per comment sent
 *
 * Memory: sk_sse_table_size(N) / N bytes per stream of the table; the
 * status table's user tag adds 4 bytes per status slot. Figures are medians
 * over R runs of TSC cycles. --json prints one JSON object.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "bench_util.h"
#include "sk_common.h"
#include "sk_sse_table.h" /* and sk_order.h: the status table */

#define EPOCH 1764000002u

static struct {
	struct sk_sse_table *t;
	size_t table_bytes;
	struct sk_status st;
	struct sk_status_window win;
	char *bufs; /* streams x sndbuf: each stream's send buffer */
	uint32_t *off;
	uint32_t sndbuf;
	uint32_t n;
	uint64_t sent_bytes;
} B;

/* bench_send - the send of the bench: copy into the stream's buffer, as a ring. */
static int
bench_send(void *arg, void *conn, const void *data, size_t len)
{
	uint32_t i = (uint32_t)(uintptr_t)conn;
	uint32_t o = B.off[i];

	(void)arg;
	if (o + len > B.sndbuf)
		o = 0;
	memcpy(B.bufs + (size_t)i * B.sndbuf + o, data, len);
	B.off[i] = o + (uint32_t)len;
	B.sent_bytes += len;
	return 0;
}

static void
bench_end(void *arg, void *conn, uint32_t slot)
{
	(void)arg;
	(void)conn;
	(void)slot;
	abort(); /* no final status in this bench */
}

static int
setup(uint32_t n, uint32_t sndbuf)
{
	uint32_t bits = 10;

	while ((UINT32_C(1) << bits) < n + 2)
		bits++;
	B.n = n;
	B.sndbuf = sndbuf;
	B.st.nlcores = 1;
	B.st.bits = bits;
	B.st.epoch = EPOCH;
	B.st.base = bench_huge_alloc((size_t)1 << bits, NULL);
	B.st.users = bench_huge_alloc(sizeof(uint32_t) << bits, NULL);
	B.st.win = &B.win;
	B.win.seq_bits = SK_ORDER_SEQ_BITS;
	atomic_store(&B.win.oldest, sk_order_id_make(EPOCH, 0, 0, 1));
	atomic_store(&B.win.next, sk_order_id_make(EPOCH, 0, 0, n + 1));
	B.table_bytes = sk_sse_table_size(n);
	void *mem = bench_huge_alloc(B.table_bytes, NULL);
	B.bufs = bench_huge_alloc((size_t)n * sndbuf, NULL);
	B.off = calloc(n, sizeof(*B.off));
	if (B.st.base == NULL || B.st.users == NULL || mem == NULL || B.bufs == NULL ||
	    B.off == NULL)
		return -ENOMEM;
	memset(B.bufs, 0, (size_t)n * sndbuf); /* fault the pages in */
	B.t = sk_sse_table_init(mem, B.table_bytes, n, 1, UINT64_C(1) << 62);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = sk_order_id_make(EPOCH, 0, 0, i + 1);
		uint32_t slot;

		atomic_store(&B.st.base[i + 1], SK_ORDER_QUEUED);
		atomic_store(&B.st.users[i + 1], sk_status_user_tag(1000 + i));
		if (sk_sse_table_open(B.t, (void *)(uintptr_t)i, 1000 + i, id, SK_ORDER_QUEUED, 0,
				      &slot) != 0)
			return -EINVAL;
	}
	return 0;
}

/* turns - poll turns until @want sends; the cycles they took. */
static uint64_t
turns(uint64_t want, uint64_t now)
{
	uint64_t got = 0, t0 = __rdtsc();

	while (got < want)
		got += sk_sse_table_poll(B.t, &B.st, SK_SSE_SCAN_MAX, now, bench_send, bench_end,
					 NULL);
	return __rdtsc() - t0;
}

/* run_push - every order flips status, every stream pushes: cycles per event. */
static double
run_push(void)
{
	static uint8_t to = SK_ORDER_QUEUED; /* what the streams sent last */

	to = to == SK_ORDER_QUEUED ? SK_ORDER_CONFIRMED : SK_ORDER_QUEUED;

	for (uint32_t i = 0; i < B.n; i++)
		atomic_store_explicit(&B.st.base[i + 1], to, memory_order_relaxed);
	return (double)turns(B.n, 1) / B.n;
}

/* run_idle - one full round of turns with nothing to send: cycles per stream. */
static double
run_idle(void)
{
	uint64_t t0 = __rdtsc(), got = 0;

	for (uint32_t k = 0; k < (B.n + SK_SSE_SCAN_MAX - 1) / SK_SSE_SCAN_MAX; k++)
		got += sk_sse_table_poll(B.t, &B.st, SK_SSE_SCAN_MAX, 1, bench_send, bench_end,
					 NULL);
	if (got != 0)
		abort();
	return (double)(__rdtsc() - t0) / B.n;
}

/* run_keepalive - every keep-alive due: cycles per comment. */
static double
run_keepalive(void)
{
	for (uint32_t i = 0; i < B.n; i++)
		B.t->s[i].ka_due = 0;
	double c = (double)turns(B.n, 2) / B.n;
	for (uint32_t i = 0; i < B.n; i++)
		B.t->s[i].ka_due = UINT64_C(1) << 62;
	return c;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"streams", required_argument, NULL, 'n'},
					     {"sndbuf", required_argument, NULL, 'b'},
					     {"runs", required_argument, NULL, 'r'},
					     {"seconds", required_argument, NULL, 's'},
					     {"cpu", required_argument, NULL, 'c'},
					     {"json", no_argument, NULL, 'j'},
					     {NULL, 0, NULL, 0}};
	uint32_t n = 100000, sndbuf = 1024, runs = 5;
	int cpu = -1, opt;
	bool json = false;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			n = (uint32_t)atoi(optarg);
			break;
		case 'b':
			sndbuf = (uint32_t)atoi(optarg);
			break;
		case 'r':
			runs = (uint32_t)atoi(optarg);
			break;
		case 's': /* accepted for bench.sh's uniform options; runs decide */
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			fprintf(stderr, "usage: sse-bench [--streams N] [--sndbuf B] [--runs R] "
					"[--cpu N] [--json]\n");
			return 2;
		}
	}
	if (n == 0 || n > (1u << 22) || sndbuf < 256 || runs == 0 || runs > 99) {
		fprintf(stderr, "sse-bench: bad --streams, --sndbuf or --runs\n");
		return 2;
	}
	if (cpu >= 0 && bench_pin(cpu) != 0)
		return 1;
	if (setup(n, sndbuf) != 0) {
		fprintf(stderr, "sse-bench: out of memory for %u streams\n", n);
		return 1;
	}
	double push[99], idle[99], ka[99];
	run_push(); /* warm: every stream's lines touched once */
	for (uint32_t r = 0; r < runs; r++) {
		push[r] = run_push();
		idle[r] = run_idle();
		ka[r] = run_keepalive();
	}
	double per_stream = (double)B.table_bytes / n;
	if (json)
		printf("{\"streams\":%u,\"sndbuf\":%u,\"table_bytes\":%zu,\"table_bytes_per_"
		       "stream\":"
		       "%.1f,\"push_cycles\":%.1f,\"idle_scan_cycles\":%.1f,\"keepalive_cycles\":"
		       "%.1f}\n",
		       n, sndbuf, B.table_bytes, per_stream, bench_median(push, runs),
		       bench_median(idle, runs), bench_median(ka, runs));
	else
		printf("%u streams, send buffer %u B: table %zu bytes (%.1f per stream)\n"
		       "TSC cycles, median of %u runs: push %.1f per event, idle scan %.1f per "
		       "stream, keep-alive %.1f per comment\n",
		       n, sndbuf, B.table_bytes, per_stream, runs, bench_median(push, runs),
		       bench_median(idle, runs), bench_median(ka, runs));
	return B.sent_bytes == 0;
}
