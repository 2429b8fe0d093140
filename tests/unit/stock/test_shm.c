/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the shared-memory ABI check (sk_shm_abi.h): an arena made
 * in a memzone, as the dataplane makes it, attaches when its layout
 * fingerprint is this build's, and is refused with a message naming both
 * values when it is another build's; the same for the ABI version and the
 * magic. Also the one table of outcome names. Runs with the EAL in
 * --no-huge mode (rte_memzone).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_memzone.h>

#include "sk_shm.h"
#include "sk_test_eal_main.h"

/* An arena of 2 lcores in a memzone; freed by mz_free(). */
static const struct rte_memzone *
mz_arena(struct sk_shm **shm)
{
	struct sk_shm_conf c = {.nlcores = 2,
				.max_items = 4,
				.dedup_slots = 4096,
				.status_bits = 10,
				.epoch = 1764000000u};
	size_t sz = sk_shm_size(&c);
	const struct rte_memzone *mz;

	ck_assert_uint_gt(sz, 0);
	mz = rte_memzone_reserve_aligned("test_shm", sz, SOCKET_ID_ANY, 0, SK_CACHE_LINE);
	ck_assert_ptr_nonnull(mz);
	*shm = sk_shm_init(mz->addr, mz->len, &c);
	ck_assert_ptr_nonnull(*shm);
	return mz;
}

START_TEST(attach_same_build)
{
	struct sk_shm *shm;
	const struct rte_memzone *mz = mz_arena(&shm);
	char err[256] = "untouched";

	ck_assert_uint_eq(shm->fingerprint, sk_shm_abi_fingerprint());
	ck_assert_uint_ne(shm->fingerprint, 0);
	ck_assert_ptr_eq(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)), shm);
	ck_assert_str_eq(err, "untouched");
	ck_assert_int_eq(rte_memzone_free(mz), 0);
}
END_TEST

START_TEST(attach_other_fingerprint)
{
	struct sk_shm *shm;
	const struct rte_memzone *mz = mz_arena(&shm);
	uint64_t mine = sk_shm_abi_fingerprint(), other = mine ^ UINT64_C(0x40);
	char err[256], want[2][40];

	shm->fingerprint = other; /* as a build with another layout would stamp it */
	ck_assert_ptr_null(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)));
	snprintf(want[0], sizeof(want[0]), "0x%016" PRIx64, other);
	snprintf(want[1], sizeof(want[1]), "0x%016" PRIx64, mine);
	ck_assert_msg(strstr(err, want[0]) != NULL, "arena's value missing: %s", err);
	ck_assert_msg(strstr(err, want[1]) != NULL, "own value missing: %s", err);
	ck_assert_msg(strstr(err, "built from another version: rebuild both") != NULL, "%s", err);
	/* no message buffer: still refused */
	ck_assert_ptr_null(sk_shm_attach(mz->addr, mz->len, NULL, 0));
	shm->fingerprint = mine;
	ck_assert_ptr_eq(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)), shm);
	ck_assert_int_eq(rte_memzone_free(mz), 0);
}
END_TEST

START_TEST(attach_other_version_or_magic)
{
	struct sk_shm *shm;
	const struct rte_memzone *mz = mz_arena(&shm);
	char err[256];

	shm->version = SK_SHM_VERSION - 1;
	ck_assert_ptr_null(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)));
	ck_assert_msg(strstr(err, "rebuild both") != NULL, "%s", err);
	shm->version = SK_SHM_VERSION;
	shm->magic ^= 1;
	ck_assert_ptr_null(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)));
	ck_assert_msg(strstr(err, "magic") != NULL, "%s", err);
	shm->magic ^= 1;
	/* a header that fits but an arena that does not */
	ck_assert_ptr_null(sk_shm_attach(mz->addr, shm->size - 1, err, sizeof(err)));
	ck_assert_ptr_null(sk_shm_attach(mz->addr, 8, err, sizeof(err)));
	ck_assert_ptr_eq(sk_shm_attach(mz->addr, mz->len, err, sizeof(err)), shm);
	ck_assert_int_eq(rte_memzone_free(mz), 0);
}
END_TEST

START_TEST(outcome_names)
{
	static const char *const want[SK_SECKILL__COUNT] = {
		"won",		"duplicate",	"limit",	"sold_out",   "not_started",
		"ended",	"unauthorized", "rate_limited", "busy",	      "unavailable",
		"not_found",	"bad_request",	"paused",	"restocking", "gate",
		"not_reserved", "denied",
	};

	for (unsigned k = 0; k < SK_SECKILL__COUNT; k++)
		ck_assert_str_eq(sk_shm_outcome_name(k), want[k]);
	for (unsigned k = SK_SECKILL__COUNT; k <= SK_SHM_OUTCOMES; k++)
		ck_assert_ptr_null(sk_shm_outcome_name(k));
	ck_assert_uint_eq(sk_shm_abi_fingerprint(), sk_shm_abi_fingerprint());
}
END_TEST

static Suite *
shm_suite(void)
{
	Suite *s = suite_create("shm_abi");
	TCase *tc = tcase_create("attach");

	tcase_add_test(tc, attach_same_build);
	tcase_add_test(tc, attach_other_fingerprint);
	tcase_add_test(tc, attach_other_version_or_magic);
	tcase_add_test(tc, outcome_names);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_EAL_MAIN(shm_suite, "test-shm")
