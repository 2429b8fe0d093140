/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test.h - the Check runner that every unit test's main() is. No DPDK
 * here: a suite that needs the EAL uses sk_test_eal_main.h.
 *
 * For the test program's main thread.
 */
#ifndef SK_TEST_H
#define SK_TEST_H

#include <stdbool.h>
#include <stdlib.h>

#include <check.h>

/**
 * sk_test_run - run every test of @p s and report as Check does.
 * @param s       the suite; freed with its runner
 * @param nofork  run the tests in this process (for state a forked child
 *                must not share, such as EAL memory); false leaves the
 *                choice to Check (a child per test, unless CK_FORK=no)
 * @return the exit status: EXIT_SUCCESS when every test passed.
 */
int sk_test_run(Suite *s, bool nofork);

/**
 * SK_TEST_MAIN - define main() as "run the suite that @p suite_fn()
 * builds", each test in a child of its own.
 */
#define SK_TEST_MAIN(suite_fn)                                                                     \
	int main(void)                                                                             \
	{                                                                                          \
		return sk_test_run(suite_fn(), false);                                             \
	}

#endif /* SK_TEST_H */
