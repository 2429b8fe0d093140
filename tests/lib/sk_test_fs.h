/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_fs.h - scratch folders for tests and benchmarks: a fresh folder
 * under $TMPDIR, removal of a whole tree, and a small file of a given mode. Plain C: no Check, no
 * DPDK. Any thread.
 */
#ifndef SK_TEST_FS_H
#define SK_TEST_FS_H

#include <stddef.h>

/**
 * sk_test_tmpdir - create a fresh folder "$TMPDIR/@p tag-XXXXXX" (/tmp when
 * TMPDIR is unset or empty) and write its path to @p dir.
 * @param dir  [out] the path, @p cap bytes
 * @return 0, or a negative errno (-ENAMETOOLONG, or mkdtemp()'s).
 */
int sk_test_tmpdir(char *dir, size_t cap, const char *tag);

/**
 * sk_test_rmtree - remove @p path and everything below it, symbolic links
 * not followed. A missing @p path is not an error.
 * @return 0, or -1 if something could not be removed (errno set).
 */
int sk_test_rmtree(const char *path);

/**
 * sk_test_write_file - create (or truncate) @p path with mode @p mode
 * exactly (fchmod after open, whatever the umask) and write the string
 * @p text into it: a token or key file of a test.
 * @return 0, or a negative errno of open/write/fchmod.
 */
int sk_test_write_file(const char *path, const char *text, unsigned mode);

#endif /* SK_TEST_FS_H */
