/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_eal_main.h - the main() of a Check suite that needs the EAL: the
 * runner (sk_test.h) around the EAL fixture (sk_test_eal.h). Header only;
 * link test_lib_dep and test_eal_dep.
 */
#ifndef SK_TEST_EAL_MAIN_H
#define SK_TEST_EAL_MAIN_H

#include <stdio.h>
#include <stdlib.h>

#include "sk_test.h"
#include "sk_test_eal.h"

/**
 * sk_test_eal_main - start the EAL (named @p name), run @p s in this
 * process (rings live in EAL memory that a forked child must not share;
 * each test frees what it made), clean the EAL up.
 * @return the exit status: EXIT_SUCCESS when every test passed.
 */
static inline int
sk_test_eal_main(Suite *s, const char *name)
{
	int rc;

	if (sk_test_eal_init(name) != 0) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return EXIT_FAILURE;
	}
	rc = sk_test_run(s, true);
	sk_test_eal_cleanup();
	return rc;
}

/** SK_TEST_EAL_MAIN - define main() as sk_test_eal_main(@p suite_fn(), @p name). */
#define SK_TEST_EAL_MAIN(suite_fn, name)                                                           \
	int main(void)                                                                             \
	{                                                                                          \
		return sk_test_eal_main(suite_fn(), name);                                         \
	}

#endif /* SK_TEST_EAL_MAIN_H */
