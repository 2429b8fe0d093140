/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's activity changes: POST /v1/activities, POST
 * /v1/activities/{id}/close, POST /v1/activities/{id}/restock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "sk_activity.h"
#include "sk_admin_impl.h"

static const char *const activity_keys[] = {
	"item", "name", "total", "price", "per_user_limit", "start_ns", "end_ns", "pay_timeout_ns",
};

/* activity_from_json - a new activity from a request body (defaults filled). */
static bool
activity_from_json(json_t *o, struct sk_store_activity *a, struct sk_admin_reply *r, int *rc)
{
	const char *key;
	json_t *m;
	uint64_t v;
	int64_t now = sk_clock_ns(CLOCK_REALTIME);

	json_object_foreach(o, key, m)
	{
		bool known = false;

		for (size_t i = 0; i < SK_ARRAY_SIZE(activity_keys); i++)
			known |= strcmp(key, activity_keys[i]) == 0;
		if (!known) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			*rc = adm_reply_error(r, 400, msg);
			return false;
		}
	}
	memset(a, 0, sizeof(*a));
	a->per_user_limit = 1;
	a->start_ns = now;
	a->end_ns = INT64_MAX;
	int got = adm_get_u64(o, "item", 1, UINT32_MAX, false, &v, r, rc);
	if (got == 0)
		*rc = adm_reply_error(r, 400, "item: required, 1..4294967295");
	if (got != 1)
		return false;
	a->item = (uint32_t)v;
	got = adm_get_u64(o, "total", 1, SK_STOCK_MAX_UNITS, false, &a->total, r, rc);
	if (got == 0)
		*rc = adm_reply_error(r, 400, "total: required, 1..2^48");
	if (got != 1)
		return false;
	if (adm_get_u64(o, "price", 0, INT64_MAX, false, &a->price, r, rc) < 0)
		return false;
	if (adm_get_u64(o, "per_user_limit", 1, SK_STOCK_MAX_QTY, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "per_user_limit") != NULL)
		a->per_user_limit = (uint32_t)v;
	if (adm_get_u64(o, "start_ns", 0, INT64_MAX, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "start_ns") != NULL)
		a->start_ns = (int64_t)v;
	got = adm_get_u64(o, "end_ns", 1, INT64_MAX, true, &v, r, rc);
	if (got < 0)
		return false;
	if (got == 1)
		a->end_ns = (int64_t)v;
	if (adm_get_u64(o, "pay_timeout_ns", 0, INT64_MAX, false, &v, r, rc) < 0)
		return false;
	if (json_object_get(o, "pay_timeout_ns") != NULL)
		a->pay_timeout_ns = (int64_t)v;
	m = json_object_get(o, "name");
	if (m != NULL && !json_is_string(m)) {
		*rc = adm_reply_error(r, 400, "name: must be a string");
		return false;
	}
	if (m != NULL) {
		if (json_string_length(m) > SK_STORE_NAME_MAX ||
		    strlen(json_string_value(m)) != json_string_length(m)) {
			*rc = adm_reply_error(r, 400, "name: at most 64 bytes, no NUL");
			return false;
		}
		memcpy(a->name, json_string_value(m), json_string_length(m));
	}
	const char *why;
	if (!sk_activity_valid(a, now, &why)) {
		*rc = adm_reply_error(r, 400, why);
		return false;
	}
	return true;
}

/*
 * activity_reply - the answer of a change to activity @id: its item object
 * with "result", or an error status for the other outcomes.
 */
static int
activity_reply(struct sk_control *ctl, uint64_t id, int res, unsigned done_status,
	       const char *conflict, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	char msg[160];
	int rc;

	switch (res) {
	case SK_ACTIVITY_DONE:
	case SK_ACTIVITY_UNCHANGED:
		rc = sk_control_item_get(ctl, (uint32_t)id, &it);
		if (rc != 0)
			return adm_reply_error(r, 503, "store error");
		json_t *o = adm_item_json(&it);
		if (o == NULL)
			return -ENOMEM;
		json_object_set_new(o, "result", json_string(sk_activity_result_name(res)));
		return adm_reply_json(r, res == SK_ACTIVITY_DONE ? done_status : 200, o);
	case SK_ACTIVITY_CONFLICT:
		return adm_reply_error(r, 409, conflict);
	case SK_ACTIVITY_CLOSED:
		return adm_reply_error(r, 409, "the activity is closed");
	case SK_ACTIVITY_ENDED:
		return adm_reply_error(r, 409,
				       "the sale has ended: restocked units could never sell");
	case SK_ACTIVITY_UNKNOWN:
		return adm_reply_error(r, 404, "unknown activity");
	case SK_ACTIVITY_NO_ROOM:
		return adm_reply_error(r, 507,
				       "no room in the item table (seckill.max_items or "
				       "seckill.dedup_slots of the dataplane)");
	case SK_ACTIVITY_INVALID:
		return adm_reply_error(r, 400, "invalid: the item would exceed 2^48 units");
	default:
		snprintf(msg, sizeof(msg), "store: %s", strerror(-res));
		return adm_reply_error(r, 503, msg);
	}
}

int
adm_post_activity(struct sk_control *ctl, const char *body, size_t len, struct sk_admin_reply *r)
{
	struct sk_store_activity a;
	int rc;
	json_t *o = adm_parse_body(body, len, r, &rc);

	if (o == NULL)
		return rc;
	bool ok = activity_from_json(o, &a, r, &rc);
	bool start_given = json_object_get(o, "start_ns") != NULL;
	json_decref(o);
	if (!ok)
		return rc;
	/*
	 * No start means "open now": for an activity that exists already that
	 * is its start, so that a retried request without one is the same
	 * definition rather than a conflict of a few microseconds.
	 */
	struct sk_store_activity cur;
	if (!start_given && sk_store_activity_get(sk_control_store(ctl), a.item, &cur, NULL) == 0)
		a.start_ns = cur.start_ns;
	return activity_reply(ctl, a.item,
			      sk_control_activity_add(ctl, &a, sk_clock_ns(CLOCK_REALTIME)), 201,
			      "the activity exists with another definition (an activity does "
			      "not change: restock it, or close it and use a new item id)",
			      r);
}

int
adm_post_close(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id, sk_control_activity_close(ctl, (uint32_t)id, sk_clock_ns(CLOCK_REALTIME)),
		200, "", r);
}

int
adm_post_restock(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		 struct sk_admin_reply *r)
{
	uint64_t units = 0, rid = 0;
	const char *key;
	json_t *m;
	int rc;
	json_t *o = adm_parse_body(body, len, r, &rc);

	if (o == NULL)
		return rc;
	json_object_foreach(o, key, m)
	{
		if (strcmp(key, "units") != 0 && strcmp(key, "restock_id") != 0) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			json_decref(o);
			return adm_reply_error(r, 400, msg);
		}
	}
	int gu = adm_get_u64(o, "units", 1, SK_STOCK_MAX_UNITS, false, &units, r, &rc);
	int gi = gu == 1 ? adm_get_u64(o, "restock_id", 1, INT64_MAX, false, &rid, r, &rc) : 0;
	json_decref(o);
	if (gu < 0 || gi < 0)
		return rc;
	if (gu == 0)
		return adm_reply_error(r, 400, "units: required, 1..2^48");
	if (gi == 0)
		return adm_reply_error(r, 400,
				       "restock_id: required, 1..2^63-1 (names the restock so that "
				       "a retry is applied once)");
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id,
		sk_control_stock_add(ctl, (uint32_t)id, rid, units, sk_clock_ns(CLOCK_REALTIME)),
		200, "restock_id was used before with another number of units", r);
}
