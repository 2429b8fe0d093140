/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test.c - the Check runner (see sk_test.h).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
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
sk_test_exec(const char *dir, const char *path, const char *const *args, char *out, size_t outlen)
{
	char tmpl[PATH_MAX + 32];
	const char *argv[32];
	int n = 0, status;

	snprintf(tmpl, sizeof(tmpl), "%s/exec-out-XXXXXX", dir);
	int fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	argv[n++] = path;
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(devnull, 2);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ssize_t got = pread(fd, out, outlen - 1, 0);
	out[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(tmpl);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
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
