/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's guard (sk_admin_guard in sk_admin.h): which requests may
 * reach the routes at all, from their Host, Origin and Content-Type.
 *
 * The listeners are local, but a browser on the host is local too: a page
 * of any site can make it send requests to 127.0.0.1. Three rules keep
 * such requests out, each enough for one attack:
 *
 *   Host          DNS rebinding: the attacker's name, rebound to 127.0.0.1,
 *                 lets its page read our answers; that name is in Host.
 *   Origin        cross-site requests: a browser names the page's origin on
 *                 every POST (and on cross-origin fetches); ours is
 *                 http://<Host>.
 *   Content-Type  a form or a fetch without preflight can only send
 *                 urlencoded, multipart or text/plain bodies (or none);
 *                 application/json needs a CORS preflight, which the API
 *                 never grants.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "sk_admin_impl.h"

/* prefix_ci - length of @name if @s starts with it (ASCII case-insensitive), else 0. */
static size_t
prefix_ci(const char *s, const char *name)
{
	size_t n = strlen(name);

	return strncasecmp(s, name, n) == 0 ? n : 0;
}

/* port_ok - @s is empty, or ':' and a port 1..65535 in 1..5 digits, nothing after. */
static bool
port_ok(const char *s)
{
	unsigned v = 0;
	size_t i;

	if (*s == '\0')
		return true;
	if (*s++ != ':')
		return false;
	for (i = 0; s[i] >= '0' && s[i] <= '9' && i < 5; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	return i > 0 && s[i] == '\0' && v >= 1 && v <= 65535;
}

/* host_ok - @host is 127.0.0.1, localhost or [::1], with an optional port. */
static bool
host_ok(const char *host)
{
	static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};

	for (size_t i = 0; i < SK_ARRAY_SIZE(names); i++) {
		size_t n = prefix_ci(host, names[i]);

		if (n != 0 && port_ok(host + n))
			return true;
	}
	return false;
}

/* media_is - the media type of @ct is @type (parameters allowed). */
static bool
media_is(const char *ct, const char *type)
{
	size_t n = prefix_ci(ct, type);

	if (n == 0)
		return false;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

/* takes_text - @url is a route whose body is plain text: a list of ids. */
static bool
takes_text(const char *url)
{
	static const char pre[] = "/v1/activities/", post[] = "/reservations";
	size_t n = sizeof(pre) - 1, d = 0;

	if (url == NULL || strncmp(url, pre, n) != 0)
		return false;
	while (url[n + d] >= '0' && url[n + d] <= '9')
		d++;
	return d != 0 && strcmp(url + n + d, post) == 0;
}

/* changes_state - @m is a method that changes things (of those our routes take: POST). */
static bool
changes_state(const char *m)
{
	return strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0 ||
	       strcmp(m, "DELETE") == 0;
}

unsigned
sk_admin_guard(const char *method, const char *url, const char *host, const char *origin,
	       const char *content_type, const char **why)
{
	size_t n;

	if (host == NULL || !host_ok(host)) {
		*why = "Host must be 127.0.0.1, localhost or [::1] (with an optional port)";
		return 421;
	}
	if (origin != NULL &&
	    ((n = prefix_ci(origin, "http://")) == 0 || strcasecmp(origin + n, host) != 0)) {
		*why = "cross-origin request refused (Origin is not this API's own)";
		return 403;
	}
	if (changes_state(method) && (content_type == NULL || !media_is(content_type, CT_JSON)) &&
	    !(origin == NULL && content_type != NULL && media_is(content_type, "text/plain") &&
	      strcmp(method, "POST") == 0 && takes_text(url))) {
		*why = "Content-Type must be application/json";
		return 415;
	}
	return 0;
}
