/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_admin_reserve.c - the reservation sets of an activity:
 *   POST /v1/activities/{id}/reservations  text/plain, one decimal user id
 *        per line -> {"item":ID,"added":N,"reserved":TOTAL}
 *   GET  /v1/activities/{id}/reservations  -> {"item":ID,"reserved":TOTAL}
 * A bad line refuses the whole body (400 naming the line, nothing added);
 * full sets refuse it 507, nothing added (sk_reserve_ctl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_admin_impl.h"
#include "sk_control.h"
#include "sk_parse.h"
#include "sk_reserve_ctl.h"
#include "sk_store.h"

/* user_id - @len bytes at @s, a decimal 1..UINT64_MAX without sign or
 * blanks (a trailing '\r' allowed), into *@v: sk_parse_u64()'s rule. */
static bool
user_id(const char *s, size_t len, uint64_t *v)
{
	char d[SK_U64_DEC_MAX + 1];

	if (len != 0 && s[len - 1] == '\r')
		len--;
	if (len == 0 || len > SK_U64_DEC_MAX)
		return false;
	memcpy(d, s, len);
	d[len] = '\0';
	return sk_parse_u64(d, 1, UINT64_MAX, v);
}

/* parse - the ids of @body into @ids (room for @len / 2 + 1); their count,
 * or -1 with the 1-based number of the first bad line in *@bad. Empty lines
 * are skipped (a final newline, blank lines between batches). */
static long
parse(const char *body, size_t len, uint64_t *ids, size_t *bad)
{
	size_t n = 0, line = 0;

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(body + at, '\n', len - at);
		size_t end = nl != NULL ? (size_t)(nl - body) : len;
		size_t l = end - at;

		line++;
		if (!(l == 0 || (l == 1 && body[at] == '\r')) &&
		    !user_id(body + at, l, &ids[n++])) {
			*bad = line;
			return -1;
		}
		at = end + 1;
	}
	return (long)n;
}

/* known - 0 when activity @id exists, else the reply sent. */
static int
known(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r, bool *ok)
{
	int rc = id > UINT32_MAX
			 ? -ENOENT
			 : sk_store_activity_get(sk_control_store(ctl), (uint32_t)id, NULL, NULL);

	*ok = rc == 0;
	if (rc == -ENOENT)
		return adm_reply_error(r, 404, "unknown activity");
	return rc == 0 ? 0 : adm_reply_error(r, 503, "store error");
}

int
adm_get_reservations(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	uint64_t total = 0;
	bool ok;
	int rc = known(ctl, id, r, &ok);

	if (!ok)
		return rc;
	if (sk_control_reserve_total(ctl, (uint32_t)id, &total) != 0)
		return adm_reply_error(r, 503, "store error");
	return adm_reply_json(
		r, 200, json_pack("{s:o,s:o}", "item", adm_jint(id), "reserved", adm_jint(total)));
}

int
adm_post_reservations(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		      struct sk_admin_reply *r)
{
	uint64_t *ids, added, total;
	char err[160], msg[200];
	size_t bad = 0;
	bool ok;
	int rc = known(ctl, id, r, &ok);

	if (!ok)
		return rc;
	ids = malloc((len / 2 + 1) * sizeof(*ids));
	if (ids == NULL)
		return -ENOMEM;
	long n = parse(body, len, ids, &bad);
	if (n < 0) {
		free(ids);
		snprintf(msg, sizeof(msg),
			 "line %zu: not a user id (decimal 1..18446744073709551615); nothing added",
			 bad);
		return adm_reply_error(r, 400, msg);
	}
	rc = sk_control_reserve_add(ctl, (uint32_t)id, ids, (size_t)n, &added, &total, err,
				    sizeof(err));
	free(ids);
	switch (rc) {
	case 0:
		return adm_reply_json(r, 200,
				      json_pack("{s:o,s:o,s:o}", "item", adm_jint(id), "added",
						adm_jint(added), "reserved", adm_jint(total)));
	case -ENOSPC:
		snprintf(msg, sizeof(msg), "%s; nothing added", err);
		return adm_reply_error(r, 507, msg);
	case -EBUSY:
		r->retry_after = 1;
		snprintf(msg, sizeof(msg), "%s; nothing added, retry", err);
		return adm_reply_error(r, 503, msg);
	case -ENODEV:
		return adm_reply_error(r, 503, err);
	case -EINVAL:
		return adm_reply_error(r, 400, err);
	default:
		snprintf(msg, sizeof(msg), "reservations: %s", err);
		return adm_reply_error(r, 503, msg);
	}
}
