/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_proxy.c - libFuzzer target for the PROXY protocol parser
 * (net/sk_proxy.h).
 *
 * Beyond "does not crash" (ASan/UBSan catch overreads: the input is an
 * exact-size heap copy), it checks the parser's contract on every input,
 * with the default v2 bound and with the smallest one:
 *   - a DONE header lies inside the input (len <= input), within the
 *     protocol's limits, with addresses only when PROXIED;
 *   - the result is kept: a second call says the same;
 *   - feeding the input in pieces (sizes drawn from a PRNG seeded by the
 *     length) ends with the same result and header as one shot, and byte
 *     by byte too (the first 256 bytes);
 *   - a prefix never contradicts the whole.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_proxy.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #cond, __LINE__);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void
check_header(const struct sk_proxy_header *h, size_t len, uint16_t bound)
{
	CHECK(h->len > 0 && h->len <= len);
	CHECK(h->version == 1 || h->version == 2);
	if (h->version == 1)
		CHECK(h->len <= SK_PROXY_V1_MAX);
	else
		CHECK(h->len >= SK_PROXY_V2_HEAD && h->len <= SK_PROXY_V2_HEAD + (uint32_t)bound);
	CHECK(h->kind <= SK_PROXY_UNKNOWN);
	if (h->kind == SK_PROXY_PROXIED) {
		CHECK(h->src.family == SK_ADDR_V4 || h->src.family == SK_ADDR_V6);
		CHECK(h->dst.family == SK_ADDR_V4 || h->dst.family == SK_ADDR_V6);
		CHECK(!sk_addr_is_v4mapped(&h->src) && !sk_addr_is_v4mapped(&h->dst));
	} else {
		CHECK(h->src.family == SK_ADDR_NONE && h->dst.family == SK_ADDR_NONE);
		CHECK(h->src_port == 0 && h->dst_port == 0);
	}
}

static void
run(const uint8_t *buf, size_t len, uint16_t bound)
{
	struct sk_proxy_parser p;
	struct sk_proxy_header one, again, inc;
	enum sk_proxy_result r1, r2 = SK_PROXY_NEED_MORE;
	uint32_t seed = (uint32_t)len * 2654435761u + 1;

	sk_proxy_parser_init(&p, bound);
	r1 = sk_proxy_parse(&p, buf, len, &one);
	CHECK((unsigned)r1 < SK_PROXY_RESULT_MAX);
	if (r1 == SK_PROXY_DONE)
		check_header(&one, len, p.v2_len_max);
	else
		CHECK(one.len == 0);
	CHECK(sk_proxy_parse(&p, buf, len, &again) == r1);
	CHECK(memcmp(&one, &again, sizeof(one)) == 0);

	/* in pieces */
	sk_proxy_parser_init(&p, bound);
	for (size_t k = 0; k < len;) {
		seed = seed * 1103515245u + 12345u;
		k += 1 + (seed >> 16) % 24;
		if (k > len)
			k = len;
		r2 = sk_proxy_parse(&p, buf, k, &inc);
		if (r2 != SK_PROXY_NEED_MORE)
			break;
	}
	if (r2 == SK_PROXY_DONE) /* DONE on a prefix: the same with every byte */
		r2 = sk_proxy_parse(&p, buf, len, &inc);
	if (len == 0)
		r2 = sk_proxy_parse(&p, buf, 0, &inc);
	CHECK(r1 == r2);
	if (r1 == SK_PROXY_DONE)
		CHECK(memcmp(&one, &inc, sizeof(one)) == 0);

	/* byte by byte, and every prefix on its own */
	size_t lim = len < 256 ? len : 256;
	enum sk_proxy_result rb = SK_PROXY_NEED_MORE;

	sk_proxy_parser_init(&p, bound);
	for (size_t k = 0; k <= lim && rb == SK_PROXY_NEED_MORE; k++) {
		struct sk_proxy_parser q;
		enum sk_proxy_result rp;

		rb = sk_proxy_parse(&p, buf, k, &inc);
		sk_proxy_parser_init(&q, bound);
		rp = sk_proxy_parse(&q, buf, k, &again);
		CHECK(rp == rb);
		if (rb == SK_PROXY_DONE)
			CHECK(inc.len == k); /* DONE the moment the last byte comes */
	}
	if (rb != SK_PROXY_NEED_MORE) {
		CHECK(rb == r1);
		if (rb == SK_PROXY_DONE)
			CHECK(memcmp(&one, &inc, sizeof(one)) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: one byte of overread is an ASan report */
	uint8_t *buf = malloc(size ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	run(buf, size, 0);
	run(buf, size, SK_PROXY_V2_LEN_MAX_MIN);
	free(buf);
	return 0;
}
