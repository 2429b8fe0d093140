/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_forwarded.c - libFuzzer target for the X-Forwarded-For / Forwarded
 * rules (http/sk_forwarded.h).
 *
 * Input: byte 0 picks the header (bit 0: Forwarded) and the peer (bits 1-2:
 * trusted IPv4, trusted IPv6, untrusted, trusted v4-mapped); the rest is the
 * field lines, split at '\n' (at most 8). Each line is an exact-size heap
 * copy, so an overread is an ASan report. Checked on every input:
 *   - the result is a known one, the hops within SK_FWD_HOPS_MAX, the
 *     answer the same when asked twice;
 *   - the address given is the peer's for PEER, IGNORED, GARBAGE and
 *     TOO_MANY; a trusted hop for OPAQUE; a canonical address for CLIENT;
 *     headers are ignored exactly when the peer is untrusted;
 *   - split feeding equals whole feeding: the lines joined into one with
 *     ',' give the same answer (for Forwarded, when no '"' could join
 *     quoted strings across lines);
 *   - what lies left of an untrusted client is never read: one more line
 *     of junk in front changes nothing.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_forwarded.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #cond, __LINE__);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define NVAL 8

static struct sk_prefix_list trusted;
static struct sk_addr peers[4];

static void
init_once(void)
{
	static const char *const text[4] = {"198.18.0.1", "2001:2::1", "198.18.1.99",
					    "::ffff:198.18.0.1"};

	if (trusted.n > 0)
		return;
	CHECK(sk_prefix_list_parse("198.18.0.0/24, 2001:2::/48", &trusted, NULL) == SK_ADDR_OK);
	for (int i = 0; i < 4; i++)
		CHECK(sk_addr_parse(text[i], strlen(text[i]), &peers[i]) == SK_ADDR_OK);
}

static bool
same(const struct sk_fwd_client *a, const struct sk_fwd_client *b)
{
	return sk_addr_eq(&a->addr, &b->addr) && a->port == b->port;
}

static void
run(enum sk_fwd_kind kind, const struct sk_addr *peer, struct sk_fwd_value *v, size_t n,
    const uint8_t *data, size_t size)
{
	struct sk_fwd_client out, again;
	struct sk_addr pc = sk_addr_unmap(peer);
	bool peer_trusted = sk_prefix_list_contains(&trusted, &pc);
	enum sk_fwd_result r = sk_forwarded_client(kind, v, n, peer, &trusted, &out);

	CHECK((unsigned)r < SK_FWD_RESULT_MAX);
	CHECK(out.hops <= SK_FWD_HOPS_MAX);
	CHECK(sk_forwarded_client(kind, v, n, peer, &trusted, &again) == r);
	CHECK(same(&out, &again) && out.hops == again.hops);
	CHECK((r == SK_FWD_IGNORED) == (!peer_trusted && n > 0));
	switch (r) {
	case SK_FWD_PEER:
	case SK_FWD_IGNORED:
	case SK_FWD_GARBAGE:
	case SK_FWD_TOO_MANY:
		CHECK(sk_addr_eq(&out.addr, &pc) && out.port == 0);
		break;
	case SK_FWD_OPAQUE:
		CHECK(sk_prefix_list_contains(&trusted, &out.addr) && out.port == 0);
		CHECK(out.hops >= 1);
		break;
	case SK_FWD_CLIENT:
		CHECK(out.hops >= 1);
		CHECK(out.addr.family == SK_ADDR_V4 || out.addr.family == SK_ADDR_V6);
		CHECK(!sk_addr_is_v4mapped(&out.addr));
		break;
	default:
		CHECK(0);
	}
	if (r == SK_FWD_TOO_MANY)
		CHECK(out.hops == SK_FWD_HOPS_MAX);

	/* the lines joined with ',' into one */
	if (n > 1 && (kind == SK_FWD_XFF || memchr(data, '"', size) == NULL)) {
		size_t total = 0;

		for (size_t i = 0; i < n; i++)
			total += v[i].len + (i > 0);
		char *joined = malloc(total + 1);
		size_t at = 0;

		CHECK(joined != NULL);
		for (size_t i = 0; i < n; i++) {
			if (i > 0)
				joined[at++] = ',';
			memcpy(joined + at, v[i].p, v[i].len);
			at += v[i].len;
		}
		struct sk_fwd_value one = {joined, total};
		struct sk_fwd_client j;

		CHECK(sk_forwarded_client(kind, &one, 1, peer, &trusted, &j) == r);
		CHECK(same(&out, &j) && out.hops == j.hops);
		free(joined);
	}

	/* junk in front of an untrusted client is never read */
	if (r == SK_FWD_CLIENT && !sk_prefix_list_contains(&trusted, &out.addr) && n < NVAL) {
		static const char junk[] = "for=\"x\\";
		struct sk_fwd_value w[NVAL + 1];
		struct sk_fwd_client j;

		w[0].len = sizeof(junk) - 1;
		w[0].p = malloc(w[0].len);
		CHECK(w[0].p != NULL);
		memcpy((char *)w[0].p, junk, w[0].len);
		memcpy(w + 1, v, n * sizeof(*v));
		CHECK(sk_forwarded_client(kind, w, n + 1, peer, &trusted, &j) == r);
		CHECK(same(&out, &j) && out.hops == j.hops);
		free((char *)w[0].p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sk_fwd_value v[NVAL];
	size_t n = 0, start = 1;

	init_once();
	if (size == 0)
		return 0;
	enum sk_fwd_kind kind = (data[0] & 1) ? SK_FWD_FORWARDED : SK_FWD_XFF;
	const struct sk_addr *peer = &peers[(data[0] >> 1) & 3];

	if (size == 1) { /* no field line at all */
		run(kind, peer, v, 0, data + 1, 0);
		return 0;
	}
	for (size_t i = 1; i <= size && n < NVAL; i++) {
		if (i < size && data[i] != '\n')
			continue;
		size_t len = i - start;
		char *copy = malloc(len ? len : 1);

		if (copy == NULL)
			break;
		memcpy(copy, data + start, len);
		v[n].p = copy;
		v[n].len = len;
		n++;
		start = i + 1;
	}
	run(kind, peer, v, n, data + 1, size - 1);
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].p);
	return 0;
}
