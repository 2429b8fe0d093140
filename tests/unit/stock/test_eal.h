/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the Check tests of the engine: EAL start-up for tests that need
 * rte_ring (no hugepages, no PCI, a file prefix unique to the process, quiet
 * logs) and the runner boilerplate.
 */
#ifndef SK_TEST_EAL_H
#define SK_TEST_EAL_H

#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

static char sk_test_runtime_dir[PATH_MAX];

static int
sk_test_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the EAL runtime folder of our own --file-prefix (design §8). */
static void
sk_test_remove_runtime_dir(void)
{
	if (strstr(sk_test_runtime_dir, "-sk-test-") != NULL)
		nftw(sk_test_runtime_dir, sk_test_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static inline int
sk_test_eal_init(const char *name)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s-sk-test-%d", name, (int)getpid());
	char *argv[] = {(char *)name,	 "--no-huge",	"--no-pci", "-m",
			"256",		 "--no-shconf", prefix,	    "--log-level=lib.eal:error",
			"--no-telemetry"};
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));

	if (rte_eal_init(argc, argv) < 0)
		return -1;
	snprintf(sk_test_runtime_dir, sizeof(sk_test_runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(sk_test_remove_runtime_dir);
	return 0;
}

/*
 * sk_test_run - run @s and exit with its verdict. With @eal, the EAL is
 * started first (named @name) and the tests run in this process (rings
 * live in EAL memory that a forked child must not share).
 */
static inline int
sk_test_run(Suite *s, const char *name, bool eal)
{
	if (eal && sk_test_eal_init(name) != 0) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(s);
	if (eal)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (eal)
		rte_eal_cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* SK_TEST_EAL_H */
