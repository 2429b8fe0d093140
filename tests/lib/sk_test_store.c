/* SPDX-License-Identifier: BSD-3-Clause */
/* The LMDB store fixture of the store tests (sk_test_store.h). */
#include "sk_test_store.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sk_test_fs.h"

static char base_dir[PATH_MAX];

void
sk_test_store_setup(void)
{
	int rc = sk_test_tmpdir(base_dir, sizeof(base_dir), "sk-store-test");

	if (rc != 0) {
		fprintf(stderr, "sk_test_tmpdir: %s\n", strerror(-rc));
		abort();
	}
}

void
sk_test_store_teardown(void)
{
	sk_test_rmtree(base_dir);
}

const char *
sk_test_store_dir(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", base_dir, name);
	return path;
}

struct sk_store *
sk_test_store_open(const char *dir, unsigned flags, uint64_t map_size)
{
	struct sk_store_conf conf = {.map_size = map_size, .flags = flags};
	char err[SK_STORE_ERR_MAX];
	struct sk_store *st = NULL;
	int rc = sk_store_open(&st, dir, &conf, err, sizeof(err));

	ck_assert_msg(rc == 0, "open %s: %d %s", dir, rc, err);
	return st;
}

struct sk_store *
sk_test_store_open_test(const char *name)
{
	return sk_test_store_open(sk_test_store_dir(name), SK_STORE_NOSYNC, 0);
}

void
sk_test_store_verify(struct sk_store *st)
{
	char err[SK_STORE_ERR_MAX];
	int rc = sk_store_verify(st, err, sizeof(err));

	ck_assert_msg(rc == 0, "verify: %d %s", rc, err);
}

void
sk_test_store_put(struct sk_store *st, const struct sk_order_rec *r, size_t n, uint8_t *outcomes,
		  struct sk_store_put_stats *stats)
{
	int rc = sk_store_put_orders(st, r, n, SK_TEST_STORE_TIMEOUT_NS, SK_TEST_STORE_NOW_NS,
				     outcomes, stats);

	ck_assert_msg(rc == 0, "put %zu records: %d", n, rc);
}
