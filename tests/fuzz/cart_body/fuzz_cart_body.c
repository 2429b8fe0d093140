/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_cart_body.c - libFuzzer target for the cart body reader
 * (http/sk_cart_body.h).
 *
 * Input: the body, as an exact-size heap copy (an overread is an ASan
 * report). Checked on every input:
 *   - the result is 0 or -EINVAL, the same when asked twice;
 *   - a cart has 1..16 lines, distinct items >= 1, qty 1..1000;
 *   - a refusal names a line in -1..16 and a detail without '"' or '\';
 *   - a cart written back in the canonical form reads back the same, and
 *     with one byte more than whitespace after it is refused.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_cart_body.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (line %d)\n", #cond, __LINE__);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* canonical - @b written as {"lines":[{"item":N,"qty":N},...]}; its length. */
static size_t
canonical(const struct sk_cart_body *b, char *out, size_t cap)
{
	int n = snprintf(out, cap, "{\"lines\":[");

	for (unsigned i = 0; i < b->n; i++)
		n += snprintf(out + n, cap - (size_t)n, "%s{\"item\":%u,\"qty\":%u}", i ? "," : "",
			      b->lines[i].item, b->lines[i].qty);
	n += snprintf(out + n, cap - (size_t)n, "]}");
	CHECK(n > 0 && (size_t)n < cap);
	return (size_t)n;
}

static void
same(const struct sk_cart_body *a, const struct sk_cart_body *b)
{
	CHECK(a->n == b->n);
	CHECK(memcmp(a->lines, b->lines, a->n * sizeof(a->lines[0])) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sk_cart_body b, again;
	struct sk_cart_error e = {0}, e2 = {0};
	uint8_t *copy = malloc(size ? size : 1);

	CHECK(copy != NULL);
	memcpy(copy, data, size);
	int rc = sk_cart_body_parse(copy, size, &b, &e);

	CHECK(rc == 0 || rc == -EINVAL);
	CHECK(sk_cart_body_parse(copy, size, &again, &e2) == rc);
	free(copy);
	if (rc != 0) {
		CHECK(e.line >= -1 && e.line <= SK_CART_LINES_MAX);
		CHECK(e.detail != NULL && strpbrk(e.detail, "\"\\") == NULL);
		CHECK(e2.line == e.line && e2.detail == e.detail);
		return 0;
	}
	same(&b, &again);
	CHECK(b.n >= 1 && b.n <= SK_CART_LINES_MAX);
	for (unsigned i = 0; i < b.n; i++) {
		CHECK(b.lines[i].item >= 1);
		CHECK(b.lines[i].qty >= 1 && b.lines[i].qty <= SK_CART_QTY_MAX);
		for (unsigned j = 0; j < i; j++)
			CHECK(b.lines[j].item != b.lines[i].item);
	}

	/* the canonical form reads back the same; one byte more is refused */
	char text[SK_CART_LINES_MAX * 40 + 32];
	size_t n = canonical(&b, text, sizeof(text) - 1);
	uint8_t *c = malloc(n + 1);

	CHECK(c != NULL);
	memcpy(c, text, n);
	CHECK(sk_cart_body_parse(c, n, &again, &e2) == 0);
	same(&b, &again);
	c[n] = 'x';
	CHECK(sk_cart_body_parse(c, n + 1, &again, &e2) == -EINVAL && e2.line == -1);
	free(c);
	return 0;
}
