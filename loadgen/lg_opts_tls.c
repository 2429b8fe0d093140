/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_opts_tls.c - the TLS options of seckill-loadgen (lg_opts.h): --tls and
 * --tls-resume are flags of lg_opts.c's table; --tls-version and --sni are
 * parsed here, and the checks that tie them to --tls.
 */
#include <errno.h>
#include <string.h>

#include "sk_common.h"

#include "lg_opts.h"

/* Longest DNS name (RFC 1035), as SNI carries it. */
#define LG_SNI_MAX 253

/* sni_ok - @v is a host name: labels of letters, digits and '-' (1..63
 * bytes, no '-' at either end), separated by single dots. */
static bool
sni_ok(const char *v)
{
	size_t n = strlen(v), label = 0;

	if (n == 0 || n > LG_SNI_MAX)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char ch = v[i];

		if (ch == '.' || ch == '\0') {
			if (label == 0 || label > 63 || v[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || (ch == '-' && label > 0)))
			return false;
		label++;
	}
	return true;
}

int
lg_opts_tls(struct lg_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	if (strcmp(name, "tls-version") == 0) {
		if (strcmp(v, "1.2") == 0) {
			o->tls_version = 12;
		} else if (strcmp(v, "1.3") == 0) {
			o->tls_version = 13;
		} else {
			sk_set_err(err, errlen, "--%s: '%s' is neither 1.2 nor 1.3", name, v);
			return -EINVAL;
		}
		return 0;
	}
	if (!sni_ok(v)) {
		sk_set_err(err, errlen, "--%s: '%s' is not a host name", name, v);
		return -EINVAL;
	}
	o->sni = v;
	return 0;
}

int
lg_opts_tls_check(struct lg_opts *o, char *err, size_t errlen)
{
	const char *lone = o->tls_resume	 ? "tls-resume"
			   : o->tls_version != 0 ? "tls-version"
			   : o->sni != NULL	 ? "sni"
						 : NULL;

	if (!o->tls) {
		if (lone != NULL) {
			sk_set_err(err, errlen, "--%s: needs --tls", lone);
			return -EINVAL;
		}
		return 0;
	}
	if (!o->server_port_given)
		o->server_port = 443;
	return 0;
}
