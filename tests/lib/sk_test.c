/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test.c - the Check runner (see sk_test.h).
 */
#include "sk_test.h"

int
sk_test_run(Suite *s, bool nofork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (nofork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
