/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_store.h - the LMDB store fixture of the store tests: one scratch
 * folder per suite (or per test) holding a store per test, opened and
 * verified with Check assertions, and orders put with the deadlines every
 * store test uses. Link test_store_dep (Check, storage).
 *
 * The base folder is process state: for one thread (the test's), set up
 * and torn down as a Check fixture:
 *
 *   tcase_add_unchecked_fixture(tc, sk_test_store_setup, sk_test_store_teardown);
 *   ...
 *   struct sk_store *st = sk_test_store_open_test("insert");
 *   sk_test_store_put(st, recs, n, NULL);
 *   sk_test_store_verify(st);
 *   sk_store_close(st);
 */
#ifndef SK_TEST_STORE_H
#define SK_TEST_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sk_store.h"

/** The default payment timeout and the commit time of the fixture's puts, ns. */
#define SK_TEST_STORE_TIMEOUT_NS (15 * 60 * INT64_C(1000000000))
#define SK_TEST_STORE_NOW_NS	 (2 * INT64_C(1000000000))

/**
 * sk_test_store_setup - make the base folder ("$TMPDIR/sk-store-test-XXXXXX").
 * Aborts the program (with a message on stderr) if it cannot: an
 * unchecked fixture runs outside any test.
 */
void sk_test_store_setup(void);

/** sk_test_store_teardown - remove the base folder and everything in it. */
void sk_test_store_teardown(void);

/**
 * sk_test_store_dir - the path of the store folder @p name under the base
 * folder (not created: sk_store_open() makes it).
 * @return a static buffer, valid until the next call.
 */
const char *sk_test_store_dir(const char *name);

/**
 * sk_test_store_open - sk_store_open() at @p dir with @p flags (enum
 * sk_store_flags) and @p map_size (0: the default); a failed open fails the
 * test with the store's error line.
 * @return the store; the caller closes it (sk_store_close()).
 */
struct sk_store *sk_test_store_open(const char *dir, unsigned flags, uint64_t map_size);

/**
 * sk_test_store_open_test - sk_test_store_open() of sk_test_store_dir(@p
 * name), SK_STORE_NOSYNC, the default map size.
 */
struct sk_store *sk_test_store_open_test(const char *name);

/** sk_test_store_verify - sk_store_verify() passes, or the test fails with its line. */
void sk_test_store_verify(struct sk_store *st);

/**
 * sk_test_store_put - sk_store_put_orders() of @p n records with the
 * fixture's deadline (SK_TEST_STORE_TIMEOUT_NS) at
 * SK_TEST_STORE_NOW_NS; a non-zero return fails the test.
 * @param outcomes  [out] one enum sk_store_outcome per record; may be NULL
 * @param stats     [out] counts of the put; may be NULL
 */
void sk_test_store_put(struct sk_store *st, const struct sk_order_rec *r, size_t n,
		       uint8_t *outcomes, struct sk_store_put_stats *stats);

#endif /* SK_TEST_STORE_H */
