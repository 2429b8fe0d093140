/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test.c - the Check runner (see sk_test.h).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "sk_test.h"

uint8_t *
sk_test_guard_end(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = (size + page - 1) / page + 1;
	uint8_t *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(mprotect(p + (pages - 1) * page, page, PROT_NONE), 0);
	return p + (pages - 1) * page;
}

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
