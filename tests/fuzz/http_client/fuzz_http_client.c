/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_http_client.c - libFuzzer target for the clients' response parser
 * (sk_http_client.h).
 *
 * The first input byte seeds the piece sizes; the rest is a stream of
 * responses. Beyond "does not crash" (ASan/UBSan catch overreads: every call
 * sees an exact-size heap copy of what has arrived), it checks the parser's
 * contract:
 *   - a DONE response lies inside the input: head_len + content_len == len,
 *     len <= input, content_len <= BODY_MAX, head_len <= HEAD_MAX, status
 *     100..599;
 *   - feeding the stream in pieces (sizes drawn from the input) gives the
 *     same answers, one after the other, as one shot per answer;
 *   - a prefix never contradicts the whole: a DONE or an error on a prefix
 *     is the result on the whole input too, and an error sticks.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_http_client.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #cond, __LINE__);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Answers followed in one stream; more are not looked at. */
#define MAX_ANSWERS 16

/* parse_copy - sk_http_client_parse() over an exact-size copy of @p[0, n). */
static enum sk_http_client_result
parse_copy(struct sk_http_client_resp *r, const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	enum sk_http_client_result e;

	if (c == NULL)
		abort();
	memcpy(c, p, n);
	e = sk_http_client_parse(r, c, n);
	free(c);
	return e;
}

static void
check_done(const struct sk_http_client_resp *r, size_t n)
{
	CHECK(r->len <= n);
	CHECK(r->off == r->len);
	CHECK((uint64_t)r->head_len + r->content_len == r->len);
	CHECK(r->head_len <= SK_HTTP_CLIENT_HEAD_MAX);
	CHECK(r->content_len <= SK_HTTP_CLIENT_BODY_MAX);
	CHECK(r->status >= 100 && r->status <= 599);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sk_http_client_resp one[MAX_ANSWERS], r;
	enum sk_http_client_result last = SK_HTTP_CLIENT_AGAIN;
	uint32_t seed;
	size_t start = 0, have = 0;
	int n = 0, m = 0;

	if (size == 0)
		return 0;
	seed = data[0] * 2654435761u + 1;
	data++;
	size--;

	/* one shot per answer, consuming each */
	while (n < MAX_ANSWERS && start < size) {
		sk_http_client_reset(&one[n]);
		last = parse_copy(&one[n], data + start, size - start);
		if (last != SK_HTTP_CLIENT_DONE)
			break;
		check_done(&one[n], size - start);
		/* DONE sticks */
		r = one[n];
		CHECK(parse_copy(&r, data + start, size - start) == SK_HTTP_CLIENT_DONE);
		CHECK(memcmp(&r, &one[n], sizeof(r)) == 0);
		start += one[n++].len;
	}
	if (last >= SK_HTTP_CLIENT_E_STATUS) {
		r = one[n];
		CHECK(parse_copy(&r, data + start, size - start) == last);
	}

	/* the same stream in pieces, consumed as a socket reader does */
	start = 0;
	sk_http_client_reset(&r);
	while (have < size && m <= n && m < MAX_ANSWERS) {
		enum sk_http_client_result e;

		seed = seed * 1103515245u + 12345u;
		have += 1 + (seed >> 16) % 64;
		if (have > size)
			have = size;
		while (m < MAX_ANSWERS) {
			e = parse_copy(&r, data + start, have - start);
			if (e == SK_HTTP_CLIENT_AGAIN)
				break;
			if (e != SK_HTTP_CLIENT_DONE) {
				/* the error of the whole, found on a prefix */
				CHECK(m == n && e == last);
				return 0;
			}
			CHECK(m < n);
			CHECK(r.len == one[m].len && r.status == one[m].status &&
			      r.close == one[m].close && r.head_len == one[m].head_len &&
			      r.has_retry_after == one[m].has_retry_after &&
			      r.retry_after == one[m].retry_after);
			start += r.len;
			m++;
			sk_http_client_reset(&r);
			if (start == have)
				break;
		}
	}
	if (m < MAX_ANSWERS && have == size)
		CHECK(m == n);
	return 0;
}
