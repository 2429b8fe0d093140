/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the dashboard routes of the admin API (sk_admin_handle on
 * /dashboard and /dashboard/NAME, control/admin/sk_admin_dashboard.c): a table of
 * requests with their status, type and headers; the embedded page links
 * only files that are served; the security headers. The routes need no
 * control plane, so the handle is NULL and there is no EAL.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_admin.h"
#include "sk_test.h"

#define HTML "text/html; charset=utf-8"
#define JS   "text/javascript; charset=utf-8"
#define CSS  "text/css; charset=utf-8"
#define SVG  "image/svg+xml"

/* header - the value of header @name among @r's extra headers, NULL if none. */
static const char *
header(const struct sk_admin_reply *r, const char *name)
{
	for (const char *const *h = r->headers; h != NULL && h[0] != NULL; h += 2)
		if (strcmp(h[0], name) == 0)
			return h[1];
	return NULL;
}

/* answer - sk_admin_handle(NULL, @method, @path) into @r; 0 or its error. */
static int
answer(const char *method, const char *path, struct sk_admin_reply *r)
{
	return sk_admin_handle(NULL, method, path, NULL, 0, 0, r);
}

static const struct {
	const char *method, *path;
	unsigned status;
	const char *type;   /* for 200 */
	const char *starts; /* the body starts so (200) */
} cases[] = {
	{"GET", "/dashboard", 200, HTML, "<!doctype html>"},
	{"GET", "/dashboard/", 200, HTML, "<!doctype html>"},
	{"HEAD", "/dashboard", 200, HTML, "<!doctype html>"},
	{"GET", "/dashboard?window=60", 200, HTML, "<!doctype html>"},
	{"GET", "/dashboard/index.html", 200, HTML, "<!doctype html>"},
	{"GET", "/dashboard/dashboard.js", 200, JS, "// SPDX"},
	{"HEAD", "/dashboard/dashboard.js", 200, JS, "// SPDX"},
	{"GET", "/dashboard/dashboard.css", 200, CSS, "/* SPDX"},
	{"GET", "/dashboard/favicon.svg", 200, SVG, "<svg"},
	{"GET", "/dashboard/nope.js", 404, NULL, NULL},
	{"GET", "/dashboard/../metrics", 404, NULL, NULL},
	{"GET", "/dashboard/./dashboard.js", 404, NULL, NULL},
	{"GET", "/dashboard//dashboard.js", 404, NULL, NULL},
	{"GET", "/dashboard/dashboard.js/", 404, NULL, NULL},
	{"GET", "/dashboard/DASHBOARD.JS", 404, NULL, NULL},
	{"GET", "/dashboard/embed.py", 404, NULL, NULL},
	{"GET", "/dashboardx", 404, NULL, NULL},
	{"GET", "/Dashboard", 404, NULL, NULL},
	{"POST", "/dashboard", 405, NULL, NULL},
	{"PUT", "/dashboard/dashboard.css", 405, NULL, NULL},
	{"DELETE", "/dashboard/", 405, NULL, NULL},
	{"POST", "/dashboard/nope", 404, NULL, NULL},
};

START_TEST(routes)
{
	struct sk_admin_reply r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(answer(cases[i].method, cases[i].path, &r), 0);
		ck_assert_msg(r.status == cases[i].status, "%s %s: %u, want %u", cases[i].method,
			      cases[i].path, r.status, cases[i].status);
		ck_assert_ptr_nonnull(r.body);
		ck_assert_uint_eq(strlen(r.body), r.len); /* NUL-terminated, no NUL inside */
		if (r.status == 200) {
			ck_assert_str_eq(r.content_type, cases[i].type);
			ck_assert_msg(strncmp(r.body, cases[i].starts, strlen(cases[i].starts)) ==
					      0,
				      "%s: body starts %.20s", cases[i].path, r.body);
			ck_assert_str_eq(r.cache_control, "no-cache");
			ck_assert_ptr_nonnull(header(&r, "Content-Security-Policy"));
			ck_assert_str_eq(header(&r, "X-Content-Type-Options"), "nosniff");
			ck_assert_ptr_null(r.allow);
		} else {
			ck_assert_str_eq(r.content_type, "application/json");
			ck_assert_ptr_null(r.headers);
			ck_assert_ptr_null(r.cache_control); /* the API's no-store */
			if (r.status == 405)
				ck_assert_str_eq(r.allow, "GET, HEAD");
		}
		free(r.body);
	}
}
END_TEST

/* The policy allows the page's own origin only: no inline code, no other host. */
START_TEST(policy)
{
	struct sk_admin_reply r;
	static const char *const banned[] = {"unsafe-", "http", "*", "data:", "blob:"};

	ck_assert_int_eq(answer("GET", "/dashboard", &r), 0);
	const char *csp = header(&r, "Content-Security-Policy");
	ck_assert_ptr_nonnull(csp);
	ck_assert_msg(strncmp(csp, "default-src 'self';", 19) == 0, "policy: %s", csp);
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		ck_assert_msg(strstr(csp, banned[i]) == NULL, "policy has %s: %s", banned[i], csp);
	ck_assert_ptr_nonnull(strstr(csp, "frame-ancestors 'none'"));
	ck_assert_str_eq(header(&r, "Referrer-Policy"), "no-referrer");
	free(r.body);
}
END_TEST

/*
 * Every "/dashboard/NAME" the page names (script, style, icon) is served,
 * and the page names no http(s) URL: a file renamed or added without
 * control/meson.build would show here.
 */
START_TEST(page_links_served_files)
{
	struct sk_admin_reply page, r;
	unsigned links = 0;

	ck_assert_int_eq(answer("GET", "/dashboard", &page), 0);
	ck_assert_ptr_null(strstr(page.body, "http://"));
	ck_assert_ptr_null(strstr(page.body, "https://"));
	for (const char *p = page.body; (p = strstr(p, "\"/dashboard/")) != NULL; p++) {
		char path[128];
		size_t n = strcspn(p + 1, "\"");

		ck_assert_uint_lt(n, sizeof(path));
		memcpy(path, p + 1, n);
		path[n] = '\0';
		ck_assert_int_eq(answer("GET", path, &r), 0);
		ck_assert_msg(r.status == 200, "the page links %s: %u", path, r.status);
		free(r.body);
		links++;
	}
	ck_assert_uint_ge(links, 4); /* icon twice, style, script */
	free(page.body);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("dashboard");
	TCase *tc = tcase_create("routes");

	tcase_add_test(tc, routes);
	tcase_add_test(tc, policy);
	tcase_add_test(tc, page_links_served_files);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
