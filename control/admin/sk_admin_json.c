/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's replies and JSON helpers (see sk_admin_impl.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sk_admin_impl.h"

/* ------------------------------------------------------------------ replies */

/* adm_reply_json - set @r from @j (consumed). */
int
adm_reply_json(struct sk_admin_reply *r, unsigned status, json_t *j)
{
	if (j == NULL)
		return -ENOMEM;
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s == NULL)
		return -ENOMEM;
	size_t len = strlen(s);
	char *body = malloc(len + 2);
	if (body == NULL) {
		free(s);
		return -ENOMEM;
	}
	memcpy(body, s, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	free(s);
	r->status = status;
	r->content_type = CT_JSON;
	r->body = body;
	r->len = len + 1;
	return 0;
}

int
adm_reply_error(struct sk_admin_reply *r, unsigned status, const char *msg)
{
	return adm_reply_json(r, status, json_pack("{s:s}", "error", msg));
}

int
adm_reply_text(struct sk_admin_reply *r, unsigned status, const char *ct, const char *text)
{
	r->body = strdup(text);
	if (r->body == NULL)
		return -ENOMEM;
	r->status = status;
	r->content_type = ct;
	r->len = strlen(text);
	return 0;
}

/*
 * adm_jint - for counts, prices, item ids: values the API bounds far below
 * INT64_MAX (json_int_t is signed). A 64-bit id goes through adm_id_string().
 */
json_t *
adm_jint(uint64_t v)
{
	SK_DEBUG_ASSERT(v <= INT64_MAX);
	return json_integer((json_int_t)v);
}

/*
 * adm_id_string - the decimal text of a 64-bit id (an order's, a user's), as
 * the dataplane writes order ids: a string, so that no JSON reader rounds it.
 */
json_t *
adm_id_string(uint64_t id)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, id);
	return json_string(buf);
}

/*
 * adm_parse_body - the JSON object of a request body; on failure a
 * 400 reply naming what is wrong. @return the object (caller decrefs) or
 * NULL with @r set (or -ENOMEM in *rc).
 */
json_t *
adm_parse_body(const char *body, size_t len, struct sk_admin_reply *r, int *rc)
{
	json_error_t e;
	json_t *j;

	*rc = 0;
	if (body == NULL || len == 0) {
		*rc = adm_reply_error(r, 400, "a JSON object body is required");
		return NULL;
	}
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
	if (j == NULL || !json_is_object(j)) {
		char msg[200];

		snprintf(msg, sizeof(msg), "body: %s", j == NULL ? e.text : "not a JSON object");
		json_decref(j);
		*rc = adm_reply_error(r, 400, msg);
		return NULL;
	}
	return j;
}

/*
 * adm_get_u64 - member @key of @o as an integer in [lo, hi]: 1 found, 0 absent
 * (or null when @null_ok), -1 wrong (400 set in @r).
 */
int
adm_get_u64(json_t *o, const char *key, uint64_t lo, uint64_t hi, bool null_ok, uint64_t *v,
	    struct sk_admin_reply *r, int *rc)
{
	json_t *m = json_object_get(o, key);
	char msg[160];

	if (m == NULL || (null_ok && json_is_null(m)))
		return 0;
	if (json_is_integer(m) && json_integer_value(m) >= 0 &&
	    (uint64_t)json_integer_value(m) >= lo && (uint64_t)json_integer_value(m) <= hi) {
		*v = (uint64_t)json_integer_value(m);
		return 1;
	}
	snprintf(msg, sizeof(msg), "%s: must be an integer %" PRIu64 "..%" PRIu64, key, lo, hi);
	*rc = adm_reply_error(r, 400, msg);
	return -1;
}
