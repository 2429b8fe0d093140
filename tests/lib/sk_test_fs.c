/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_fs.c - scratch folders (see sk_test_fs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_test_fs.h"

int
sk_test_tmpdir(char *dir, size_t cap, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	int n = snprintf(dir, cap, "%s/%s-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp",
			 tag);

	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return mkdtemp(dir) != NULL ? 0 : -errno;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
sk_test_rmtree(const char *path)
{
	int rc = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	return rc != 0 && errno == ENOENT ? 0 : rc;
}

int
sk_test_write_file(const char *path, const char *text, unsigned mode)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = 0;

	if (fd < 0)
		return -errno;
	errno = 0;
	if (fchmod(fd, (mode_t)mode) != 0 || write(fd, text, len) != (ssize_t)len)
		rc = errno != 0 ? -errno : -EIO;
	close(fd);
	return rc;
}
