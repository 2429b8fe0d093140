/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live settings routes (docs/api.md, docs/operations.md):
 *   GET  /v1/live          generation, when, what; limits, log level, deny
 *                          list sizes; each lcore's generation and counters
 *   POST /v1/live/limits   {"user_rate":5, ...}: any of the rate keys
 *   POST /v1/live/log      {"level":"debug"}
 *   POST /v1/live/deny     {"users_file":PATH} and/or {"prefixes_file":PATH}
 *                          (each replaces its list), or {"clear":true}
 * A change is refused whole: 400 {"error":..., "key":...} names the key.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sk_admin_impl.h"
#include "sk_deny.h"
#include "sk_live_ctl.h"
#include "sk_logfmt.h"

/* refused - 400 naming @key. */
static int
refused(struct sk_admin_reply *r, unsigned status, const char *key, const char *msg)
{
	json_t *j = json_pack("{s:s}", "error", msg);

	if (j != NULL && key != NULL)
		json_object_set_new(j, "key", json_string(key));
	return adm_reply_json(r, status, j);
}

/* answer - the reply to sk_control_live_change()'s result. */
static int
answer(struct sk_admin_reply *r, int64_t gen, const char *key, const char *err)
{
	if (gen > 0)
		return adm_reply_json(r, 200, json_pack("{s:I}", "generation", (json_int_t)gen));
	if (gen == -EINVAL || gen == -ENOENT || gen == -EACCES || gen == -ENOSPC)
		return refused(r, 400, key, err);
	return refused(r, 503, NULL, err);
}

/* --------------------------------------------------------------- status */

static json_t *
limits_json(const struct sk_live_limits *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "global_rate",
			 (json_int_t)l->global_rate, "global_burst", (json_int_t)l->global_burst,
			 "item_rate", (json_int_t)l->item_rate, "item_burst",
			 (json_int_t)l->item_burst, "ip_rate", (json_int_t)l->ip_rate, "ip_burst",
			 (json_int_t)l->ip_burst, "user_rate", (json_int_t)l->user_rate,
			 "user_burst", (json_int_t)l->user_burst);
}

int
adm_get_live(struct sk_control *ctl, struct sk_admin_reply *r)
{
	struct sk_live_zone *z = sk_control_live(ctl);

	if (z == NULL)
		return refused(r, 503, NULL, "live changes unavailable: no live settings block");
	const struct sk_live_settings *s = sk_live_current(z);
	json_t *lcores = json_array();
	for (uint32_t i = 0; lcores != NULL && i < z->nlcores; i++)
		json_array_append_new(
			lcores, json_pack("{s:I,s:I,s:I}", "generation",
					  (json_int_t)atomic_load_explicit(&z->lcore[i].gen,
									   memory_order_relaxed),
					  "denied", (json_int_t)z->lcore[i].denied, "user_limited",
					  (json_int_t)z->lcore[i].user_limited));
	json_t *j =
		json_pack("{s:I,s:I,s:s,s:o,s:s,s:{s:I,s:I,s:I},s:o}", "generation",
			  (json_int_t)s->gen, "when_ns", (json_int_t)s->when_ns, "what", s->what,
			  "limits", limits_json(&s->limits), "log_level",
			  sk_logfmt_level_name((enum sk_log_level)s->log_level), "deny", "users",
			  (json_int_t)s->deny_users, "prefixes", (json_int_t)s->deny_prefixes,
			  "capacity", (json_int_t)z->deny_cap, "lcores", lcores);
	return adm_reply_json(r, 200, j);
}

/* --------------------------------------------------------------- limits */

static const struct {
	const char *key;
	size_t off;
} limit_keys[] = {
#define LK(k)                                                                                      \
	{                                                                                          \
#k, offsetof(struct sk_live_limits, k)                                             \
	}
	LK(global_rate), LK(global_burst), LK(item_rate), LK(item_burst),
	LK(ip_rate),	 LK(ip_burst),	   LK(user_rate), LK(user_burst),
#undef LK
};

struct limits_arg {
	json_t *body;
	char what[SK_LIVE_WHAT_MAX];
};

static int
edit_limits(struct sk_live_zone *z, struct sk_live_settings *s, void *arg, const char **key,
	    char *err, size_t errlen)
{
	struct limits_arg *a = arg;
	const char *k;
	json_t *v;
	size_t n = 0;

	(void)z;
	json_object_foreach(a->body, k, v)
	{
		size_t i = 0;

		while (i < SK_ARRAY_SIZE(limit_keys) && strcmp(limit_keys[i].key, k) != 0)
			i++;
		if (i == SK_ARRAY_SIZE(limit_keys)) {
			*key = k;
			sk_set_err(err, errlen, "%s: not a live limit", k);
			return -EINVAL;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (uint64_t)json_integer_value(v) > SK_LIVE_RATE_MAX) {
			*key = limit_keys[i].key;
			sk_set_err(err, errlen, "%s: must be an integer 0..%llu", k,
				   (unsigned long long)SK_LIVE_RATE_MAX);
			return -EINVAL;
		}
		*(uint64_t *)((char *)&s->limits + limit_keys[i].off) =
			(uint64_t)json_integer_value(v);
		n += (size_t)snprintf(a->what + n, n < sizeof(a->what) ? sizeof(a->what) - n : 0,
				      "%s%s=%" PRId64, n ? " " : "", k,
				      (int64_t)json_integer_value(v));
	}
	if (json_object_size(a->body) == 0) {
		sk_set_err(err, errlen, "no limit given");
		return -EINVAL;
	}
	return 0;
}

int
adm_post_live_limits(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct limits_arg a = {0};
	char err[256] = "";
	const char *key = NULL;
	int rc = 0;

	a.body = adm_parse_body(body, len, r, &rc);
	if (a.body == NULL)
		return rc;
	/* The change's description names the keys: the edit writes it into
	 * a.what, read once the edit is done. */
	int64_t gen = sk_control_live_change(ctl, SK_LIVE_LIMITS, a.what, edit_limits, &a, &key,
					     err, sizeof(err));
	json_decref(a.body);
	return answer(r, gen, key, err);
}

/* ------------------------------------------------------------------ log */

static int
edit_log(struct sk_live_zone *z, struct sk_live_settings *s, void *arg, const char **key, char *err,
	 size_t errlen)
{
	(void)z;
	(void)key;
	(void)err;
	(void)errlen;
	s->log_level = *(const uint32_t *)arg;
	return 0;
}

int
adm_post_live_log(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	char err[256] = "", what[48];
	const char *key = NULL, *name;
	enum sk_log_level lv;
	int rc = 0;
	json_t *j = adm_parse_body(body, len, r, &rc);

	if (j == NULL)
		return rc;
	name = json_string_value(json_object_get(j, "level"));
	if (name == NULL || sk_logfmt_level_parse(name, &lv) != 0) {
		json_decref(j);
		return refused(r, 400, "level",
			       "level: one of debug, info, notice, warn, error, crit");
	}
	json_decref(j);
	uint32_t level = (uint32_t)lv;
	snprintf(what, sizeof(what), "log_level=%s", sk_logfmt_level_name(lv));
	int64_t gen = sk_control_live_change(ctl, SK_LIVE_LOG, what, edit_log, &level, &key, err,
					     sizeof(err));
	return answer(r, gen, key, err);
}

/* ----------------------------------------------------------------- deny */

struct deny_arg {
	const char *users_file, *prefixes_file;
	bool clear;
	char what[SK_LIVE_WHAT_MAX]; /* written by the edit */
};

/* load - replace one list of @d by the file @path. */
static int
load(struct sk_deny *d, const char *path, bool prefixes, const char **key, char *err, size_t errlen)
{
	const char *k = prefixes ? "prefixes_file" : "users_file";
	unsigned long line = 0;
	FILE *f = fopen(path, "re");
	long n;

	if (f == NULL) {
		*key = k;
		sk_set_err(err, errlen, "%s: cannot open %s: %s", k, path, strerror(errno));
		return -ENOENT;
	}
	if (prefixes)
		sk_deny_clear_prefixes(d);
	else
		sk_deny_clear_users(d);
	n = sk_deny_load(d, f, prefixes, &line);
	fclose(f);
	if (n < 0) {
		*key = k;
		sk_set_err(err, errlen, "%s: %s line %lu: %s", k, path, line,
			   n == -ENOSPC ? "more entries than seckill.deny_max"
			   : n == -EIO	? "read error"
					: (prefixes ? "not a prefix (address[/len], host bits 0)"
						    : "not a user id (decimal 1..2^64-1)"));
		return n == -EIO ? -EINVAL : (int)n;
	}
	return 0;
}

static int
edit_deny(struct sk_live_zone *z, struct sk_live_settings *s, void *arg, const char **key,
	  char *err, size_t errlen)
{
	struct deny_arg *a = arg;
	uint32_t spare = 1 - s->deny_buf;
	struct sk_deny *d = sk_live_deny_buf(z, spare);
	int rc;

	if (d == NULL) {
		*key = "deny";
		sk_set_err(err, errlen, "deny lists are off (seckill.deny_max = 0)");
		return -EINVAL;
	}
	/* The spare is free (every lcore left it): start from the current lists. */
	if (a->clear) {
		sk_deny_clear_users(d);
		sk_deny_clear_prefixes(d);
	} else {
		rc = sk_deny_copy(d, sk_live_deny_buf(z, s->deny_buf));
		if (rc == 0 && a->users_file != NULL)
			rc = load(d, a->users_file, false, key, err, errlen);
		if (rc == 0 && a->prefixes_file != NULL)
			rc = load(d, a->prefixes_file, true, key, err, errlen);
		if (rc != 0)
			return rc;
	}
	s->deny_buf = spare;
	s->deny_users = d->n_users;
	s->deny_prefixes = d->n_v4 + d->n_v6;
	snprintf(a->what, sizeof(a->what), "deny %s users=%" PRIu64 " prefixes=%" PRIu64,
		 a->clear ? "clear" : "load", s->deny_users, s->deny_prefixes);
	return 0;
}

int
adm_post_live_deny(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct deny_arg a = {0};
	char err[512] = "";
	const char *key = NULL, *k;
	json_t *v;
	int rc = 0;
	json_t *j = adm_parse_body(body, len, r, &rc);

	if (j == NULL)
		return rc;
	json_object_foreach(j, k, v)
	{
		if (strcmp(k, "users_file") == 0 && json_is_string(v) &&
		    json_string_value(v)[0] == '/') {
			a.users_file = json_string_value(v);
		} else if (strcmp(k, "prefixes_file") == 0 && json_is_string(v) &&
			   json_string_value(v)[0] == '/') {
			a.prefixes_file = json_string_value(v);
		} else if (strcmp(k, "clear") == 0 && json_is_boolean(v)) {
			a.clear = json_is_true(v);
		} else {
			rc = refused(r, 400, k,
				     "deny: users_file and prefixes_file (absolute paths) or "
				     "clear (true)");
			json_decref(j);
			return rc;
		}
	}
	if (a.clear == (a.users_file != NULL || a.prefixes_file != NULL)) {
		json_decref(j);
		return refused(r, 400, "clear", "deny: a file to load, or clear, not both");
	}
	int64_t gen = sk_control_live_change(ctl, SK_LIVE_DENY, a.what, edit_deny, &a, &key, err,
					     sizeof(err));
	json_decref(j);
	return answer(r, gen, key, err);
}
