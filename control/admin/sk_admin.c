/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin REST API (see sk_admin.h): routing (sk_admin_handle), /healthz and
 * /metrics. The routes live in sk_admin_orders.c, sk_admin_items.c and
 * sk_admin_activities.c; the HTTP server in sk_admin_http.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_admin_impl.h"
#include "sk_parse.h"

/* ---------------------------------------------------------------- metrics */

static int
get_metrics(struct sk_control *ctl, struct sk_admin_reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return -ENOMEM;
	int rc = sk_control_metrics(ctl, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc != 0) {
		free(buf);
		return rc == -ENOMEM ? rc : adm_reply_error(r, 503, "metrics unavailable");
	}
	r->status = 200;
	r->content_type = CT_PROM;
	r->body = buf;
	r->len = len;
	return 0;
}

/* ---------------------------------------------------------------- routing */

/*
 * parse_id - a decimal id 1..2^64-1 at @s, in the dataplane's strict form
 * (digits only, no leading zero), ending at the end or '/'; sets *rest to
 * what follows. 0 if malformed, zero or out of range.
 */
static uint64_t
parse_id(const char *s, const char **rest)
{
	char digits[21]; /* UINT64_MAX has 20 */
	size_t n = strcspn(s, "/");
	uint64_t v;

	if (n == 0 || n >= sizeof(digits) || s[0] == '0')
		return 0;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (!sk_parse_u64(digits, 1, UINT64_MAX, &v))
		return 0;
	*rest = s + n;
	return v;
}

static bool
is_get(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static int
not_allowed(struct sk_admin_reply *r, const char *allow)
{
	r->allow = allow;
	return adm_reply_error(r, 405, "method not allowed");
}

static int
route(struct sk_control *ctl, const char *method, const char *path, const char *query,
      const char *body, size_t body_len, unsigned wait_ms, struct sk_admin_reply *r)
{
	const char *rest = NULL;
	uint64_t id;

	if (strcmp(path, "/healthz") == 0)
		return is_get(method) ? adm_reply_text(r, 200, CT_TEXT, "ok\n")
				      : not_allowed(r, "GET, HEAD");
	if (strcmp(path, "/metrics") == 0)
		return is_get(method) ? get_metrics(ctl, r) : not_allowed(r, "GET, HEAD");
	if (strcmp(path, "/dashboard") == 0 || strncmp(path, "/dashboard/", 11) == 0)
		return adm_dashboard(path + 10, is_get(method), r);
	if (strcmp(path, "/v1/items") == 0 || strcmp(path, "/v1/items/") == 0)
		return is_get(method) ? adm_get_items(ctl, r) : not_allowed(r, "GET, HEAD");
	if (strncmp(path, "/v1/items/", 10) == 0) {
		id = parse_id(path + 10, &rest);
		if (id == 0 || *rest != '\0')
			return adm_reply_error(r, id == 0 ? 400 : 404,
					       id == 0 ? "bad item id" : "not found");
		return is_get(method) ? adm_get_item(ctl, id, r) : not_allowed(r, "GET, HEAD");
	}
	if (strcmp(path, "/v1/activities") == 0 || strcmp(path, "/v1/activities/") == 0) {
		if (is_get(method))
			return adm_get_activities(ctl, r);
		return strcmp(method, "POST") == 0 ? adm_post_activity(ctl, body, body_len, r)
						   : not_allowed(r, "GET, HEAD, POST");
	}
	if (strncmp(path, "/v1/activities/", 15) == 0) {
		id = parse_id(path + 15, &rest);
		if (id == 0)
			return adm_reply_error(r, 400, "bad item id");
		if (*rest == '\0')
			return is_get(method) ? adm_get_activity(ctl, id, r)
					      : not_allowed(r, "GET, HEAD");
		if (strcmp(rest, "/close") == 0)
			return strcmp(method, "POST") == 0 ? adm_post_close(ctl, id, r)
							   : not_allowed(r, "POST");
		if (strcmp(rest, "/restock") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_post_restock(ctl, id, body, body_len, r)
				       : not_allowed(r, "POST");
		if (strcmp(rest, "/remove") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_post_remove(ctl, id, body, body_len, r)
				       : not_allowed(r, "POST");
		if (strcmp(rest, "/pause") == 0 || strcmp(rest, "/resume") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_post_pause(ctl, id, rest[1] == 'p', r)
				       : not_allowed(r, "POST");
		if (strcmp(rest, "/archive") == 0)
			return strcmp(method, "POST") == 0 ? adm_post_archive(ctl, id, r)
							   : not_allowed(r, "POST");
		if (strcmp(rest, "/reservations") == 0) {
			if (is_get(method))
				return adm_get_reservations(ctl, id, r);
			return strcmp(method, "POST") == 0
				       ? adm_post_reservations(ctl, id, body, body_len, r)
				       : not_allowed(r, "GET, HEAD, POST");
		}
		if (strcmp(rest, "/extend") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_post_extend(ctl, id, body, body_len, r)
				       : not_allowed(r, "POST");
	}
	if (strncmp(path, "/v1/cluster/items/", 18) == 0) {
		id = parse_id(path + 18, &rest);
		if (id == 0)
			return adm_reply_error(r, 400, "bad item id");
		if (strcmp(rest, "/forget") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_post_cluster_forget(ctl, id, body, body_len, r)
				       : not_allowed(r, "POST");
		if (*rest != '\0')
			return adm_reply_error(r, 404, "not found");
		return is_get(method) ? adm_get_cluster_item(ctl, id, r)
				      : not_allowed(r, "GET, HEAD");
	}
	if (strcmp(path, "/v1/live") == 0)
		return is_get(method) ? adm_get_live(ctl, r) : not_allowed(r, "GET, HEAD");
	if (strncmp(path, "/v1/live/", 9) == 0) {
		static const struct {
			const char *name;
			int (*post)(struct sk_control *, const char *, size_t,
				    struct sk_admin_reply *);
		} live[] = {{"limits", adm_post_live_limits},
			    {"log", adm_post_live_log},
			    {"deny", adm_post_live_deny},
			    {"keys", adm_post_live_keys}};

		for (size_t i = 0; i < SK_ARRAY_SIZE(live); i++)
			if (strcmp(path + 9, live[i].name) == 0)
				return strcmp(method, "POST") == 0
					       ? live[i].post(ctl, body, body_len, r)
					       : not_allowed(r, "POST");
	}
	if (strcmp(path, "/v1/orders") == 0 || strcmp(path, "/v1/orders/") == 0)
		return is_get(method) ? adm_get_orders(ctl, query, r) : not_allowed(r, "GET, HEAD");
	if (strncmp(path, "/v1/orders/", 11) == 0) {
		id = parse_id(path + 11, &rest);
		if (id == 0)
			return adm_reply_error(r, 400, "bad order id");
		if (*rest == '\0')
			return is_get(method) ? adm_get_order(ctl, id, r)
					      : not_allowed(r, "GET, HEAD");
		if (strcmp(rest, "/pay") == 0)
			return strcmp(method, "POST") == 0 ? adm_pay_order(ctl, id, wait_ms, r)
							   : not_allowed(r, "POST");
		if (strcmp(rest, "/refund") == 0)
			return strcmp(method, "POST") == 0
				       ? adm_refund_order(ctl, id, body, body_len, wait_ms, r)
				       : not_allowed(r, "POST");
	}
	return adm_reply_error(r, 404, "not found");
}

int
sk_admin_handle(struct sk_control *ctl, const char *method, const char *path, const char *body,
		size_t body_len, unsigned pay_wait_ms, struct sk_admin_reply *r)
{
	char p[SK_ADMIN_QUERY_MAX];
	size_t n = strcspn(path, "?");
	const char *query = path[n] == '?' ? path + n + 1 : "";

	memset(r, 0, sizeof(*r));
	if (n >= sizeof(p) || strlen(query) >= SK_ADMIN_QUERY_MAX)
		return adm_reply_error(r, 414, "uri too long");
	memcpy(p, path, n);
	p[n] = '\0';
	return route(ctl, method, p, query, body, body_len, pay_wait_ms, r);
}
