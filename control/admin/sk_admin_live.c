/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live settings routes (docs/api.md, docs/operations.md):
 *   GET  /v1/live          generation, when, what; limits, log level, deny
 *                          list sizes; each lcore's generation and counters
 *   POST /v1/live/limits   {"user_rate":5, ...}: any of the rate keys
 *   POST /v1/live/log      {"level":"debug"}
 *   POST /v1/live/deny     {"users_file":PATH} and/or {"prefixes_file":PATH}
 *                          (each replaces its list), or {"clear":true}
 *   POST /v1/live/keys     {"add":KID,"file":PATH}, {"sign":KID},
 *                          {"default":KID|null}, {"remove":KID} (or several)
 * Key bytes come from files the control plane reads (mode 0600), never from
 * the request, and are never logged: the log says which kid changed.
 * A change is refused whole: 400 {"error":..., "key":...} names the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sk_admin_impl.h"
#include "sk_deny.h"
#include "sk_live_ctl.h"
#include "sk_logfmt.h"
#include "sk_secret_file.h"

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

/*
 * A route's reading of its body: fill the edit's argument from @j (kept
 * alive until the change is made), or return -EINVAL with the member
 * refused in *@bad and why in *@msg.
 */
typedef int (*parse_fn)(json_t *j, void *arg, const char **bad, const char **msg);

/*
 * post_change - the one path of every POST /v1/live/...: the body read by
 * @parse into @arg, the change made by @edit (its description read from
 * @what once the edit wrote it), answered.
 */
static int
post_change(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r,
	    parse_fn parse, void *arg, enum sk_live_kind kind, sk_live_edit_fn edit,
	    const char *what)
{
	char err[512] = "";
	const char *bad = NULL, *msg = NULL;
	int rc = 0;
	json_t *j = adm_parse_body(body, len, r, &rc);

	if (j == NULL)
		return rc;
	if (parse(j, arg, &bad, &msg) != 0) {
		rc = refused(r, 400, bad, msg);
	} else {
		int64_t gen =
			sk_control_live_change(ctl, kind, what, edit, arg, &bad, err, sizeof(err));

		rc = answer(r, gen, bad, err);
	}
	json_decref(j);
	return rc;
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
	json_t *keys = json_array();
	for (int i = 0; keys != NULL && i < SK_TOKEN_RING_MAX; i++)
		if (s->keys.k[i].kid_len != 0)
			json_array_append_new(
				keys, json_pack("{s:s,s:b,s:b}", "kid", s->keys.k[i].kid, "default",
						i == s->keys.dflt, "sign", i == s->keys.sign));
	json_t *j =
		json_pack("{s:I,s:I,s:s,s:o,s:s,s:{s:I,s:I,s:I},s:o,s:o}", "generation",
			  (json_int_t)s->gen, "when_ns", (json_int_t)s->when_ns, "what", s->what,
			  "limits", limits_json(&s->limits), "log_level",
			  sk_logfmt_level_name((enum sk_log_level)s->log_level), "deny", "users",
			  (json_int_t)s->deny_users, "prefixes", (json_int_t)s->deny_prefixes,
			  "capacity", (json_int_t)z->deny_cap, "keys", keys, "lcores", lcores);
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

static int
parse_limits(json_t *j, void *arg, const char **bad, const char **msg)
{
	(void)bad;
	(void)msg;
	((struct limits_arg *)arg)->body = j; /* checked key by key by the edit */
	return 0;
}

int
adm_post_live_limits(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct limits_arg a = {0};

	return post_change(ctl, body, len, r, parse_limits, &a, SK_LIVE_LIMITS, edit_limits,
			   a.what);
}

/* ------------------------------------------------------------------ log */

struct log_arg {
	uint32_t level;
	char what[48];
};

static int
edit_log(struct sk_live_zone *z, struct sk_live_settings *s, void *arg, const char **key, char *err,
	 size_t errlen)
{
	(void)z;
	(void)key;
	(void)err;
	(void)errlen;
	s->log_level = ((const struct log_arg *)arg)->level;
	return 0;
}

static int
parse_log(json_t *j, void *arg, const char **bad, const char **msg)
{
	struct log_arg *a = arg;
	const char *name = json_string_value(json_object_get(j, "level"));
	enum sk_log_level lv;

	if (name == NULL || sk_logfmt_level_parse(name, &lv) != 0) {
		*bad = "level";
		*msg = "level: one of debug, info, notice, warn, error, crit";
		return -EINVAL;
	}
	a->level = (uint32_t)lv;
	snprintf(a->what, sizeof(a->what), "log_level=%s", sk_logfmt_level_name(lv));
	return 0;
}

int
adm_post_live_log(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct log_arg a = {0};

	return post_change(ctl, body, len, r, parse_log, &a, SK_LIVE_LOG, edit_log, a.what);
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

static int
parse_deny(json_t *j, void *arg, const char **bad, const char **msg)
{
	struct deny_arg *a = arg;
	const char *k;
	json_t *v;

	json_object_foreach(j, k, v)
	{
		if (strcmp(k, "users_file") == 0 && json_is_string(v) &&
		    json_string_value(v)[0] == '/') {
			a->users_file = json_string_value(v);
		} else if (strcmp(k, "prefixes_file") == 0 && json_is_string(v) &&
			   json_string_value(v)[0] == '/') {
			a->prefixes_file = json_string_value(v);
		} else if (strcmp(k, "clear") == 0 && json_is_boolean(v)) {
			a->clear = json_is_true(v);
		} else {
			*bad = k;
			*msg = "deny: users_file and prefixes_file (absolute paths) or clear "
			       "(true)";
			return -EINVAL;
		}
	}
	if (a->clear == (a->users_file != NULL || a->prefixes_file != NULL)) {
		*bad = "clear";
		*msg = "deny: a file to load, or clear, not both";
		return -EINVAL;
	}
	return 0;
}

int
adm_post_live_deny(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct deny_arg a = {0};

	return post_change(ctl, body, len, r, parse_deny, &a, SK_LIVE_DENY, edit_deny, a.what);
}

/* ----------------------------------------------------------------- keys */

/** Largest key file read (as the dataplane's secret file). */
#define KEY_FILE_MAX 4096

struct keys_arg {
	const char *add, *file, *sign, *dflt, *remove;
	bool dflt_none;
	char what[SK_LIVE_WHAT_MAX];
};

/* read_key - the secret of key file @path (one trailing newline dropped):
 * a regular file of this user or root, mode 0600, 32..KEY_FILE_MAX bytes. */
static int
read_key(const char *path, uint8_t *buf, size_t *len, char *err, size_t errlen)
{
	char why[160];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	ssize_t n;

	if (fd < 0) {
		sk_set_err(err, errlen, "file: cannot open %s: %s", path, strerror(errno));
		return -ENOENT;
	}
	rc = sk_secret_file_check(fd, SK_SECRET_DENY_ALL, NULL, why, sizeof(why));
	if (rc != 0) {
		close(fd);
		sk_set_err(err, errlen, "file: %s: %s", path, why);
		return -EACCES;
	}
	n = read(fd, buf, KEY_FILE_MAX + 1);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n < SK_TOKEN_SECRET_MIN || n > KEY_FILE_MAX) {
		sk_set_err(err, errlen, "file: %s: a key is %d to %d bytes", path,
			   SK_TOKEN_SECRET_MIN, KEY_FILE_MAX);
		return -EINVAL;
	}
	*len = (size_t)n;
	return 0;
}

/* slot_of - the slot of key id @kid in @r, or -1 with a 400 reason. */
static int
slot_of(const struct sk_token_ring *r, const char *kid, const char *what, const char **key,
	char *err, size_t errlen)
{
	int i = sk_token_ring_find(r, kid, strlen(kid));

	if (i < 0) {
		*key = what;
		sk_set_err(err, errlen, "%s: no key '%s'", what, kid);
	}
	return i;
}

static int
edit_keys(struct sk_live_zone *z, struct sk_live_settings *s, void *arg, const char **key,
	  char *err, size_t errlen)
{
	static uint8_t secret[KEY_FILE_MAX + 1]; /* under the live lock; wiped */
	struct keys_arg *a = arg;
	struct sk_token_ring *r = &s->keys;
	size_t len = 0, n = 0;
	int i, rc;

	(void)z;
	if (a->add != NULL) {
		if (sk_token_ring_find(r, a->add, strlen(a->add)) >= 0) {
			*key = "add";
			sk_set_err(err, errlen, "add: key '%s' exists (remove it first)", a->add);
			return -EINVAL;
		}
		for (i = 0; i < SK_TOKEN_RING_MAX && r->k[i].kid_len != 0; i++)
			;
		if (i == SK_TOKEN_RING_MAX) {
			*key = "add";
			sk_set_err(err, errlen, "add: %d keys already", SK_TOKEN_RING_MAX);
			return -ENOSPC;
		}
		rc = read_key(a->file, secret, &len, err, errlen);
		if (rc == 0 &&
		    sk_token_key_init(r->k[i].key, sizeof(r->k[i].key), secret, len) == NULL)
			rc = -EINVAL;
		explicit_bzero(secret, sizeof(secret));
		if (rc != 0) {
			*key = "file";
			return rc;
		}
		snprintf(r->k[i].kid, sizeof(r->k[i].kid), "%s", a->add);
		r->k[i].kid_len = (uint8_t)strlen(a->add);
		r->n++;
		n += (size_t)snprintf(a->what + n, sizeof(a->what) - n, "add=%s ", a->add);
	}
	if (a->dflt != NULL || a->dflt_none) {
		i = a->dflt_none ? -1 : slot_of(r, a->dflt, "default", key, err, errlen);
		if (i < 0 && !a->dflt_none)
			return -EINVAL;
		r->dflt = i;
		n += (size_t)snprintf(a->what + n, sizeof(a->what) - n, "default=%s ",
				      a->dflt_none ? "none" : a->dflt);
	}
	if (a->sign != NULL) {
		if ((i = slot_of(r, a->sign, "sign", key, err, errlen)) < 0)
			return -EINVAL;
		r->sign = i;
		n += (size_t)snprintf(a->what + n, sizeof(a->what) - n, "sign=%s ", a->sign);
	}
	if (a->remove != NULL) {
		if ((i = slot_of(r, a->remove, "remove", key, err, errlen)) < 0)
			return -EINVAL;
		if (r->n == 1 || i == r->sign) {
			*key = "remove";
			sk_set_err(err, errlen, "remove: '%s' is the %s", a->remove,
				   r->n == 1 ? "last key"
					     : "signing key (sign with another first)");
			return -EINVAL;
		}
		explicit_bzero(&r->k[i], sizeof(r->k[i]));
		r->n--;
		if (r->dflt == i)
			r->dflt = -1;
		n += (size_t)snprintf(a->what + n, sizeof(a->what) - n, "remove=%s ", a->remove);
	}
	if (n > 0)
		a->what[n - 1] = '\0';
	return 0;
}

/* kid_arg - member @k of a keys body: a key id string (or, for default, null). */
static bool
kid_arg(json_t *v)
{
	const char *s = json_string_value(v);

	return s != NULL && s[0] != '\0' && strlen(s) <= SK_TOKEN_KID_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       strlen(s);
}

static int
parse_keys(json_t *j, void *arg, const char **bad, const char **msg)
{
	struct keys_arg *a = arg;
	const char *k;
	json_t *v;

	json_object_foreach(j, k, v)
	{
		const char **slot = strcmp(k, "add") == 0	? &a->add
				    : strcmp(k, "sign") == 0	? &a->sign
				    : strcmp(k, "default") == 0 ? &a->dflt
				    : strcmp(k, "remove") == 0	? &a->remove
								: NULL;

		if (strcmp(k, "file") == 0 && json_is_string(v) && json_string_value(v)[0] == '/') {
			a->file = json_string_value(v);
		} else if (slot == &a->dflt && json_is_null(v)) {
			a->dflt_none = true;
		} else if (slot != NULL && kid_arg(v)) {
			*slot = json_string_value(v);
		} else {
			*bad = k;
			*msg = "keys: add (a kid) with file (an absolute path), sign, default (a "
			       "kid "
			       "or null), remove";
			return -EINVAL;
		}
	}
	if ((a->add != NULL) != (a->file != NULL) ||
	    (a->add == NULL && a->sign == NULL && a->dflt == NULL && !a->dflt_none &&
	     a->remove == NULL)) {
		*bad = a->add != NULL ? "file" : "add";
		*msg = "keys: add needs file (and file needs add)";
		return -EINVAL;
	}
	return 0;
}

int
adm_post_live_keys(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct keys_arg a = {0};

	return post_change(ctl, body, len, r, parse_keys, &a, SK_LIVE_KEYS, edit_keys, a.what);
}
