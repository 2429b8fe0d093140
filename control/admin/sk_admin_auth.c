/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's bearer token (see sk_admin.h, docs/control.md "Access"):
 * the token file read at start, and the Authorization header of each TCP
 * request checked against it.
 *
 * Only the SHA-256 of the token is kept. A request's token is hashed too
 * and the two digests compared with CRYPTO_memcmp(): the time taken depends
 * neither on where the first wrong byte is nor on the token's length.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "sk_admin_impl.h"
#include "sk_secret_file.h"

/* b64token_char - RFC 6750's token68 alphabet, '=' aside (only at the end). */
static bool
b64token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

/* token_ok - @s[0..@n) is a b64token of SK_ADMIN_TOKEN_MIN..SK_ADMIN_TOKEN_MAX bytes. */
static bool
token_ok(const char *s, size_t n)
{
	size_t i = 0;

	if (n < SK_ADMIN_TOKEN_MIN || n > SK_ADMIN_TOKEN_MAX)
		return false;
	while (i < n && b64token_char((unsigned char)s[i]))
		i++;
	if (i == 0)
		return false;
	while (i < n && s[i] == '=')
		i++;
	return i == n;
}

int
adm_token_load(const char *path, uint8_t digest[ADM_TOKEN_DIGEST], char *err, size_t errlen)
{
	char buf[SK_ADMIN_TOKEN_MAX + 3]; /* the token, "\r\n", one byte more: too long */
	char why[128];
	ssize_t n;
	size_t len;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		sk_set_err(err, errlen, "admin: --admin-token-file %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why));
	if (rc != 0) {
		sk_set_err(err, errlen, "admin: --admin-token-file %s: %s", path, why);
		close(fd);
		return rc;
	}
	len = 0;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (rc == 0) {
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		if (len > 0 && buf[len - 1] == '\r')
			len--;
		if (!token_ok(buf, len))
			rc = -EINVAL;
	}
	if (rc == 0)
		SHA256((const unsigned char *)buf, len, digest);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc == -EINVAL)
		sk_set_err(err, errlen,
			   "admin: --admin-token-file %s: want one line of %d..%d characters "
			   "[A-Za-z0-9-._~+/], then '=' only (e.g. head -c 32 /dev/urandom | "
			   "base64)",
			   path, SK_ADMIN_TOKEN_MIN, SK_ADMIN_TOKEN_MAX);
	else if (rc != 0)
		sk_set_err(err, errlen, "admin: --admin-token-file %s: %s", path, strerror(-rc));
	return rc;
}

enum adm_auth
adm_token_check(const uint8_t digest[ADM_TOKEN_DIGEST], const char *authorization)
{
	uint8_t got[ADM_TOKEN_DIGEST];
	const char *t;
	size_t n;
	int diff;

	if (authorization == NULL)
		return ADM_AUTH_MISSING;
	if (strncasecmp(authorization, "Bearer ", 7) != 0)
		return ADM_AUTH_MALFORMED;
	t = authorization + 7;
	while (*t == ' ')
		t++;
	n = strlen(t);
	while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
		n--;
	if (n == 0 || n > SK_ADMIN_TOKEN_MAX)
		return ADM_AUTH_WRONG;
	SHA256((const unsigned char *)t, n, got);
	diff = CRYPTO_memcmp(got, digest, ADM_TOKEN_DIGEST);
	OPENSSL_cleanse(got, sizeof(got));
	return diff == 0 ? ADM_AUTH_OK : ADM_AUTH_WRONG;
}
