/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The one check of a file that holds a secret or chooses trust (a token, a
 * password, keys, a Kafka client's settings): a regular file, owned by this
 * user or root, and closed to the group and others. Whoever may change such
 * a file, or read it, holds what it guards. Header-only; thread-safe (fstat
 * and geteuid only); for start-up and reload paths.
 */
#ifndef SK_SECRET_FILE_H
#define SK_SECRET_FILE_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/** The group and other bits a secret file must not have (chmod 600). */
#define SK_SECRET_DENY_ALL ((mode_t)(S_IRWXG | S_IRWXO))
/** Only the group and other write bits: a file that chooses trust, secret-free. */
#define SK_SECRET_DENY_WRITE ((mode_t)(S_IWGRP | S_IWOTH))

/**
 * sk_secret_file_check - whether open file @p fd may hold a secret: a
 * regular file, owned by the effective user or root, none of @p deny's
 * mode bits set. On failure @p why gets one line for the caller to prefix
 * with the file's name and option (no secret in it), e.g. "owned by uid
 * 1001, neither this user nor root (chown it)", "mode 0640: readable or
 * writable by group or others (chmod 600)".
 * @param fd    an open descriptor of the file (not closed here)
 * @param deny  SK_SECRET_DENY_ALL or SK_SECRET_DENY_WRITE (any mode bits)
 * @param sb    if not NULL, the file's fstat() on return (also on failure,
 *              but for -errno of fstat itself)
 * @param why   the reason, or NULL; @p cap bytes, always NUL-ended if cap > 0
 * @return 0; -EINVAL if not a regular file; -EPERM if owned by another user
 *         or open to the group or others; -errno of fstat().
 */
static inline int
sk_secret_file_check(int fd, mode_t deny, struct stat *sb, char *why, size_t cap)
{
	struct stat st;
	char dummy[1];

	if (why == NULL || cap == 0)
		why = dummy, cap = sizeof(dummy);
	if (fstat(fd, &st) != 0) {
		int rc = -errno;

		snprintf(why, cap, "%s", strerror(-rc));
		return rc;
	}
	if (sb != NULL)
		*sb = st;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, cap, "not a regular file");
		return -EINVAL;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(why, cap, "owned by uid %u, neither this user nor root (chown it)",
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & deny) != 0) {
		snprintf(why, cap, "mode %04o: %s by group or others (chmod 600)",
			 (unsigned)(st.st_mode & 07777),
			 (deny & (S_IRGRP | S_IROTH)) != 0 ? "readable or writable" : "writable");
		return -EPERM;
	}
	return 0;
}

#endif /* SK_SECRET_FILE_H */
