/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_http_parser.c - libFuzzer target for the HTTP request parser and the
 * response writer.
 *
 * Beyond "does not crash" (ASan/UBSan catch overreads, the input is an exact
 * size heap copy), it checks the parser's contract on every input, with the
 * default limits and with tiny ones:
 *   - a DONE request lies inside the input (len <= input), its pointers too;
 *   - feeding the input in pieces (sizes drawn from the input) ends with the
 *     same result and the same request as one shot;
 *   - a prefix never contradicts the whole: an error or DONE on a prefix is
 *     the result on the whole input too;
 *   - a pipelined stream is consumed request by request, each one exactly.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_http.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #cond, __LINE__);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static const struct sk_http_limits deflt = {
	.head_max = SK_HTTP_HEAD_MAX_DEFAULT,
	.target_max = SK_HTTP_TARGET_MAX_DEFAULT,
	.body_max = SK_HTTP_BODY_MAX_DEFAULT,
	.fields_max = SK_HTTP_FIELDS_MAX_DEFAULT,
};
static const struct sk_http_limits tiny = {
	.head_max = 96, .target_max = 32, .body_max = 8, .fields_max = 3};

static enum sk_http_result
norm(enum sk_http_result r)
{
	return r == SK_HTTP_HEAD ? SK_HTTP_AGAIN : r;
}

static void
check_inside(const uint8_t *buf, size_t len, const char *p, size_t n)
{
	if (p == NULL) {
		CHECK(n == 0);
		return;
	}
	CHECK((const uint8_t *)p >= buf && (const uint8_t *)p + n <= buf + len);
}

static void
check_request(const uint8_t *buf, size_t len, const struct sk_http_request *q,
	      const struct sk_http_limits *l, bool done)
{
	CHECK(q->head_len <= l->head_max);
	CHECK(q->len == q->head_len + q->body_len);
	CHECK(q->body_len <= l->body_max);
	CHECK(q->head_len <= len);
	if (done) {
		CHECK(q->len <= len);
		CHECK(q->body == buf + q->head_len);
	} else {
		CHECK(q->body == NULL);
	}
	check_inside(buf, q->head_len, q->target, q->target_len);
	CHECK(q->target != NULL && q->target[0] == '/');
	CHECK(q->target_len <= l->target_max);
	CHECK(q->path_len <= q->target_len);
	check_inside(buf, q->head_len, q->host, q->host_len);
	check_inside(buf, q->head_len, q->authorization, q->authorization_len);
	check_inside(buf, q->head_len, q->user_id, q->user_id_len);
	CHECK(q->method >= SK_HTTP_METHOD_GET && q->method <= SK_HTTP_METHOD_POST);
	CHECK(q->version == 10 || q->version == 11);
	CHECK(q->version == 10 || q->host != NULL);
	CHECK(q->nfields <= l->fields_max);
	CHECK(!q->keep_alive_header || (q->keep_alive && q->version == 10));
	CHECK(!q->expect_continue || q->version == 11);
}

static void
same_request(const struct sk_http_request *a, const struct sk_http_request *b)
{
	CHECK(a->target == b->target && a->target_len == b->target_len);
	CHECK(a->path_len == b->path_len);
	CHECK(a->host == b->host && a->host_len == b->host_len);
	CHECK(a->authorization == b->authorization && a->authorization_len == b->authorization_len);
	CHECK(a->user_id == b->user_id && a->user_id_len == b->user_id_len);
	CHECK(a->body == b->body && a->len == b->len && a->head_len == b->head_len);
	CHECK(a->method == b->method && a->version == b->version);
	CHECK(a->keep_alive == b->keep_alive && a->keep_alive_header == b->keep_alive_header);
	CHECK(a->expect_continue == b->expect_continue);
	CHECK(a->has_content_length == b->has_content_length && a->nfields == b->nfields);
}

static void
run(const uint8_t *buf, size_t len, const struct sk_http_limits *l)
{
	struct sk_http_parser p;
	struct sk_http_request one, inc, pre;
	enum sk_http_result r1, r2 = SK_HTTP_AGAIN, rp;
	uint32_t seed = (uint32_t)len * 2654435761u + 1;

	/* one shot */
	CHECK(sk_http_parser_init(&p, l) == 0);
	r1 = sk_http_parse(&p, buf, len, &one);
	CHECK((unsigned)r1 < SK_HTTP_RESULT_MAX);
	if (r1 == SK_HTTP_DONE || r1 == SK_HTTP_HEAD)
		check_request(buf, len, &one, l, r1 == SK_HTTP_DONE);
	/* sticky */
	if (r1 != SK_HTTP_AGAIN && r1 != SK_HTTP_HEAD) {
		struct sk_http_request again;
		CHECK(sk_http_parse(&p, buf, len, &again) == r1);
		if (r1 == SK_HTTP_DONE)
			same_request(&one, &again);
	}

	/* in pieces, sizes from a PRNG seeded by the length */
	sk_http_parser_init(&p, l);
	for (size_t k = 0; k < len;) {
		seed = seed * 1103515245u + 12345u;
		k += 1 + (seed >> 16) % 64;
		if (k > len)
			k = len;
		r2 = sk_http_parse(&p, buf, k, &inc);
		if (r2 != SK_HTTP_AGAIN && r2 != SK_HTTP_HEAD)
			break;
	}
	if (len == 0)
		r2 = sk_http_parse(&p, buf, 0, &inc);
	CHECK(norm(r1) == norm(r2));
	if (r1 == SK_HTTP_DONE)
		same_request(&one, &inc);

	/* a prefix never contradicts the whole */
	if (len > 0) {
		seed = seed * 1103515245u + 12345u;
		size_t k = (seed >> 8) % len;
		sk_http_parser_init(&p, l);
		rp = sk_http_parse(&p, buf, k, &pre);
		if (rp == SK_HTTP_DONE) {
			CHECK(r1 == SK_HTTP_DONE);
			same_request(&one, &pre);
		} else if (sk_http_result_is_error(rp)) {
			CHECK(rp == r1);
		}
	}

	/* the input as a pipelined stream */
	size_t used = 0;
	for (int n = 0; n < 1024 && used < len; n++) {
		struct sk_http_request q;
		enum sk_http_result r;

		sk_http_parser_init(&p, l);
		r = sk_http_parse(&p, buf + used, len - used, &q);
		if (r != SK_HTTP_DONE)
			break;
		check_request(buf + used, len - used, &q, l, true);
		CHECK(q.len > 0 && q.len <= len - used);
		used += q.len;
	}
}

static void
run_writer(const uint8_t *data, size_t len)
{
	uint8_t out[2048];
	struct sk_http_response r = {0};

	if (len < 4)
		return;
	r.status = (uint16_t)(100 + (data[0] | data[1] << 8) % 520);
	r.conn = data[2] % (SK_HTTP_CONN_MAX + 1);
	r.no_body = data[3] & 1;
	r.retry_after = (data[3] & 2) ? data[0] : 0;
	r.body = (const char *)data + 4;
	r.body_len = (len - 4) / 2;
	r.extra = (const char *)data + 4 + r.body_len;
	r.extra_len = (data[3] & 4) ? len - 4 - r.body_len : 0;
	size_t cap = (data[1] * 8u) % sizeof(out);

	int n = sk_http_response_write(out, cap, &r);
	CHECK(n == -ENOSPC || n == -EINVAL || (n > 0 && (size_t)n <= cap));
	if (n > 0)
		CHECK(memcmp(out, "HTTP/1.1 ", 9) == 0);
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
	run(buf, size, &deflt);
	run(buf, size, &tiny);
	run_writer(buf, size);
	free(buf);
	return 0;
}
