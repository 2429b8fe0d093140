/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_fs.c - scratch folders (see sk_test_fs.h).
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

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
