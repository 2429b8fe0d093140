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
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * sk_test_guard_end - map at least @p size writable bytes followed by one
 * PROT_NONE page, for inputs that must end right before it: a read past
 * their end is then a SIGSEGV. Never unmapped (it lives as long as the test
 * program). Fails the test (ck_assert) if the mapping fails.
 * @return the first byte of the guard page.
 */
uint8_t *sk_test_guard_end(size_t size);

/**
 * sk_test_guarded - copy @p len bytes of @p s (may overlap) to end right at
 * @p end (from sk_test_guard_end(), @p len at most its size).
 * @return the copy.
 */
static inline void *
sk_test_guarded(uint8_t *end, const void *s, size_t len)
{
	return memmove(end - len, s, len);
}

/**
 * sk_test_exec - run the program @p path with the arguments @p args
 * (NULL-terminated, at most 30, argv[0] is @p path), its stdout captured
 * into @p out (NUL-terminated, cut at @p outlen - 1 bytes) through a
 * temporary file in the folder @p dir, its stderr to /dev/null. Waits for
 * it. Fails the test (ck_assert) if it cannot start or does not exit.
 * @return its exit status (127: it could not be executed).
 */
int sk_test_exec(const char *dir, const char *path, const char *const *args, char *out,
		 size_t outlen);

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
