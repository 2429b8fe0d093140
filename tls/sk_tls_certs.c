/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tls_certs.c - the [tls] section's files, read and checked once at
 * start: certificate chains and keys (type, size, match, validity), their
 * names for SNI and their grouping, the suites and the version, the ticket
 * secret. Every refusal names the [tls] key and the file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "sk_secret_file.h"
#include "sk_tls_impl.h"

void
sk_tls_conf_defaults(struct sk_tls_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->ticket_rotate_s = 3600;
	conf->min_version = TLS1_2_VERSION;
	conf->handshake_timeout_ms = 10000;
	conf->max_handshakes = 1024;
	conf->buffers = 1024;
	conf->buffer_size = 10240;
	conf->max_conns = 4096;
}

/* fail - write the error line and return @rc. */
static int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	ERR_clear_error();
	return rc;
}

/* ssl_reason - the reason of OpenSSL's last error, for the error line. */
static const char *
ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_peek_last_error());

	return r != NULL ? r : "not PEM";
}

bool
sk_tls_name_match(const char *pattern, const char *host)
{
	const char *dot;

	if (strcasecmp(pattern, host) == 0)
		return true;
	if (pattern[0] != '*' || pattern[1] != '.')
		return false;
	dot = strchr(host, '.');
	return dot != NULL && dot != host && strcasecmp(pattern + 1, dot) == 0;
}

/* add_name - keep @p len bytes of @p s as a name of @p p (lower case);
 * names with a NUL, a blank or too long are skipped. */
static void
add_name(struct sk_tls_pair *p, const unsigned char *s, int len)
{
	char *d;

	if (p->n_names == SK_TLS_NAMES_MAX || len <= 0 || len >= SK_TLS_NAME_LEN)
		return;
	d = p->names[p->n_names];
	for (int i = 0; i < len; i++) {
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return;
		d[i] = (char)tolower(s[i]);
	}
	d[len] = '\0';
	p->n_names++;
}

/* pair_names - the certificate's dNSNames, or its CN when it has none. */
static void
pair_names(struct sk_tls_pair *p)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(p->cert, NID_subject_alt_name, NULL, NULL);

	for (int i = 0; gens != NULL && i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);

		if (g->type == GEN_DNS)
			add_name(p, ASN1_STRING_get0_data(g->d.dNSName),
				 ASN1_STRING_length(g->d.dNSName));
	}
	GENERAL_NAMES_free(gens);
	if (p->n_names == 0) {
		X509_NAME *sn = X509_get_subject_name(p->cert);
		int i = X509_NAME_get_index_by_NID(sn, NID_commonName, -1);

		if (i >= 0) {
			ASN1_STRING *cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(sn, i));

			add_name(p, ASN1_STRING_get0_data(cn), ASN1_STRING_length(cn));
		}
	}
}

/* read_cert - the leaf and the chain behind it in @path. */
static int
read_cert(struct sk_tls_pair *p, const char *path, char *err, size_t errlen)
{
	BIO *b = BIO_new_file(path, "r");
	X509 *x;

	if (b == NULL)
		return fail(err, errlen, -ENOENT, "tls.cert: %s: cannot be read (%s)", path,
			    strerror(errno != 0 ? errno : ENOENT));
	p->cert = PEM_read_bio_X509(b, NULL, NULL, NULL);
	if (p->cert == NULL) {
		BIO_free(b);
		return fail(err, errlen, -EINVAL, "tls.cert: %s: no certificate (%s)", path,
			    ssl_reason());
	}
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		if (p->chain == NULL)
			p->chain = sk_X509_new_null();
		if (p->chain == NULL || sk_X509_push(p->chain, x) == 0) {
			X509_free(x);
			BIO_free(b);
			return fail(err, errlen, -ENOMEM, "tls.cert: %s: out of memory", path);
		}
	}
	ERR_clear_error(); /* the end of the file */
	BIO_free(b);
	return 0;
}

/* check_validity - @p p's leaf is within its validity period now. */
static int
check_validity(const struct sk_tls_pair *p, const char *path, char *err, size_t errlen)
{
	if (X509_cmp_current_time(X509_get0_notAfter(p->cert)) <= 0)
		return fail(err, errlen, -EINVAL, "tls.cert: %s: expired", path);
	if (X509_cmp_current_time(X509_get0_notBefore(p->cert)) >= 0)
		return fail(err, errlen, -EINVAL, "tls.cert: %s: not valid yet", path);
	return 0;
}

/* read_key - the private key in @path, of an allowed type, matching the leaf. */
static int
read_key(struct sk_tls_pair *p, const char *path, const char *cert_path, char *err, size_t errlen)
{
	BIO *b = BIO_new_file(path, "r");
	char group[64];

	if (b == NULL)
		return fail(err, errlen, -ENOENT, "tls.key: %s: cannot be read (%s)", path,
			    strerror(errno != 0 ? errno : ENOENT));
	p->key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	if (p->key == NULL)
		return fail(err, errlen, -EINVAL, "tls.key: %s: no private key (%s)", path,
			    ssl_reason());
	p->key_type = EVP_PKEY_get_base_id(p->key);
	if (p->key_type == EVP_PKEY_EC) {
		if (EVP_PKEY_get_group_name(p->key, group, sizeof(group), NULL) != 1 ||
		    (strcmp(group, "prime256v1") != 0 && strcmp(group, "P-256") != 0))
			return fail(err, errlen, -EINVAL,
				    "tls.key: %s: an EC key must be on P-256 (prime256v1)", path);
	} else if (p->key_type == EVP_PKEY_RSA) {
		if (EVP_PKEY_get_bits(p->key) < 2048)
			return fail(err, errlen, -EINVAL,
				    "tls.key: %s: RSA key of %d bits; at least 2048", path,
				    EVP_PKEY_get_bits(p->key));
	} else {
		return fail(err, errlen, -EINVAL, "tls.key: %s: neither ECDSA P-256 nor RSA (%s)",
			    path, OBJ_nid2sn(p->key_type));
	}
	if (X509_check_private_key(p->cert, p->key) != 1)
		return fail(err, errlen, -EINVAL,
			    "tls.key: %s: does not match the certificate of tls.cert %s", path,
			    cert_path);
	return 0;
}

/* same_names - @a and @b claim the same set of names (in the same order). */
static bool
same_names(const struct sk_tls_pair *a, const struct sk_tls_pair *b)
{
	if (a->n_names != b->n_names)
		return false;
	for (unsigned i = 0; i < a->n_names; i++)
		if (strcmp(a->names[i], b->names[i]) != 0)
			return false;
	return true;
}

/* group_pairs - pairs that claim the same names share an SSL_CTX (one of
 * each key type: the client's signature algorithms pick); pair 0's group
 * is the default. */
static int
group_pairs(struct sk_tls_certs *c, const struct sk_tls_conf *conf, char *err, size_t errlen)
{
	for (unsigned i = 0; i < c->n_pairs; i++) {
		struct sk_tls_pair *p = &c->pairs[i];
		unsigned g;

		for (g = 0; g < c->n_groups; g++)
			if (same_names(&c->pairs[c->group_first[g]], p))
				break;
		if (g == c->n_groups)
			c->group_first[c->n_groups++] = i;
		for (unsigned j = 0; j < i; j++)
			if (c->pairs[j].group == g && c->pairs[j].key_type == p->key_type)
				return fail(err, errlen, -EINVAL,
					    "tls.cert: %s: the same names and key type as %s",
					    conf->cert[i], conf->cert[j]);
		p->group = g;
	}
	return 0;
}

/* check_suites - every TLS 1.3 suite of @s is an AEAD one of the policy. */
static int
check_suites(struct sk_tls_certs *c, const char *s, char *err, size_t errlen)
{
	static const char *const allowed[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					      "TLS_CHACHA20_POLY1305_SHA256"};
	const char *p = s;

	if (s == NULL || *s == '\0')
		s = SK_TLS13_SUITES;
	if (strlen(s) >= sizeof(c->suites))
		return fail(err, errlen, -EINVAL, "tls.ciphersuites: too long");
	for (p = s; *p != '\0';) {
		size_t n = strcspn(p, ":");
		bool ok = false;

		for (size_t i = 0; i < SK_ARRAY_SIZE(allowed); i++)
			ok |= n == strlen(allowed[i]) && strncmp(p, allowed[i], n) == 0;
		if (!ok)
			return fail(
				err, errlen, -EINVAL,
				"tls.ciphersuites: '%.*s' is not one of TLS_AES_128_GCM_SHA256, "
				"TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256",
				(int)n, p);
		p += n;
		if (*p == ':')
			p++;
	}
	snprintf(c->suites, sizeof(c->suites), "%s", s);
	return 0;
}

/* read_secret - the ticket secret: @path's bytes (a secret file: mode 600),
 * or random ones for this run when there is no file. */
static int
read_secret(struct sk_tls_ticket_keys *k, const char *path, char *err, size_t errlen)
{
	char why[160];
	ssize_t n;
	int fd, rc;

	if (path == NULL || *path == '\0') {
		k->secret_len = SK_TLS_TICKET_SECRET_MIN;
		if (RAND_bytes(k->secret, (int)k->secret_len) != 1)
			return fail(err, errlen, -EIO, "tls: no random bytes for the ticket key");
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "tls.ticket_key_file: %s: %s", path,
			    strerror(errno));
	rc = sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why));
	if (rc != 0) {
		close(fd);
		return fail(err, errlen, rc, "tls.ticket_key_file: %s: %s", path, why);
	}
	n = read(fd, k->secret, sizeof(k->secret));
	close(fd);
	if (n < 0)
		return fail(err, errlen, -EIO, "tls.ticket_key_file: %s: read error", path);
	if ((size_t)n < SK_TLS_TICKET_SECRET_MIN || (size_t)n >= sizeof(k->secret)) {
		OPENSSL_cleanse(k->secret, sizeof(k->secret));
		return fail(err, errlen, -EINVAL,
			    "tls.ticket_key_file: %s: %zd bytes; %d to %d wanted (e.g. "
			    "openssl rand 48 > FILE)",
			    path, n, SK_TLS_TICKET_SECRET_MIN, SK_TLS_TICKET_SECRET_MAX - 1);
	}
	k->secret_len = (size_t)n;
	return 0;
}

/* check_numbers - the settings that are numbers or a version. */
static int
check_numbers(const struct sk_tls_conf *conf, char *err, size_t errlen)
{
	if (conf->n_certs == 0 || conf->n_certs > SK_TLS_CERTS_MAX)
		return fail(err, errlen, -EINVAL, "tls.cert: 1 to %d certificates, not %u",
			    SK_TLS_CERTS_MAX, conf->n_certs);
	if (conf->min_version != TLS1_2_VERSION && conf->min_version != TLS1_3_VERSION)
		return fail(err, errlen, -EINVAL, "tls.min_version: 1.2 or 1.3");
	if (conf->ticket_rotate_s < 60 || conf->ticket_rotate_s > 7 * 86400)
		return fail(err, errlen, -EINVAL, "tls.ticket_rotate_s: 60 to 604800 seconds");
	if (conf->handshake_timeout_ms < 100 || conf->handshake_timeout_ms > 600000)
		return fail(err, errlen, -EINVAL, "tls.handshake_timeout_ms: 100 to 600000");
	if (conf->max_handshakes == 0 || conf->buffers == 0 || conf->buffer_size < 1024)
		return fail(err, errlen, -EINVAL,
			    "tls.max_handshakes and tls.buffers: at least 1 (buffer_size >= 1024)");
	return 0;
}

int
sk_tls_certs_load(const struct sk_tls_conf *conf, struct sk_tls_certs **out, char *err,
		  size_t errlen)
{
	struct sk_tls_certs *c;
	int rc;

	*out = NULL;
	rc = check_numbers(conf, err, errlen);
	if (rc != 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return fail(err, errlen, -ENOMEM, "tls: out of memory");
	c->min_version = conf->min_version;
	c->handshake_timeout_ms = conf->handshake_timeout_ms;
	c->max_handshakes = conf->max_handshakes;
	c->buffers = conf->buffers;
	c->buffer_size = conf->buffer_size;
	c->max_conns = conf->max_conns != 0 ? conf->max_conns : 4096;
	c->keys.rotate_s = conf->ticket_rotate_s;
	rc = check_suites(c, conf->ciphersuites, err, errlen);
	for (unsigned i = 0; rc == 0 && i < conf->n_certs; i++) {
		struct sk_tls_pair *p = &c->pairs[i];

		c->n_pairs++;
		errno = 0;
		rc = read_cert(p, conf->cert[i], err, errlen);
		if (rc == 0)
			rc = check_validity(p, conf->cert[i], err, errlen);
		if (rc == 0)
			rc = read_key(p, conf->key[i], conf->cert[i], err, errlen);
		if (rc == 0)
			pair_names(p);
	}
	if (rc == 0)
		rc = group_pairs(c, conf, err, errlen);
	if (rc == 0)
		rc = read_secret(&c->keys, conf->ticket_key_file, err, errlen);
	if (rc != 0) {
		sk_tls_certs_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void
sk_tls_certs_free(struct sk_tls_certs *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < c->n_pairs; i++) {
		X509_free(c->pairs[i].cert);
		sk_X509_pop_free(c->pairs[i].chain, X509_free);
		EVP_PKEY_free(c->pairs[i].key);
	}
	OPENSSL_cleanse(&c->keys, sizeof(c->keys));
	free(c);
}
