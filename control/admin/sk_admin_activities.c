/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's activity changes: POST /v1/activities, POST
 * /v1/activities/{id}/close, /restock, /remove, /pause, /resume, /extend,
 * /archive.
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
#include "sk_store_archive.h"
#include "sk_control_impl.h"
#include "sk_member.h"

static const char *const activity_keys[] = {
	"item",	  "name",	    "total",   "price",	     "per_user_limit", "start_ns",
	"end_ns", "pay_timeout_ns", "cluster", "total_from", "gate",	       "reserved_only",
};

/* get_flag - the boolean @key of @o into *out (absent: false); false with the 400 made. */
static bool
get_flag(const json_t *o, const char *key, bool *out, struct sk_admin_reply *r, int *rc)
{
	const json_t *m = json_object_get(o, key);
	char msg[96];

	if (m != NULL && !json_is_boolean(m)) {
		snprintf(msg, sizeof(msg), "%s: must be true or false", key);
		*rc = adm_reply_error(r, 400, msg);
		return false;
	}
	*out = m != NULL && json_is_true(m);
	return true;
}

/*
 * total_from_redis - @a's total read from the Redis key named by the
 * request's "total_from" (a shop's stock:{sku}), once, through the cluster
 * member's Redis settings. false with the reply made (*rc its result).
 */
static bool
total_from_redis(struct sk_control *ctl, json_t *m, struct sk_store_activity *a,
		 struct sk_admin_reply *r, int *rc)
{
	char msg[400];
	const char *key = json_string_value(m);
	struct sk_member *mb = ctl->member;
	uint64_t units = 0;

	if (key == NULL || json_string_length(m) == 0 || json_string_length(m) > 256 ||
	    strlen(key) != json_string_length(m)) {
		*rc = adm_reply_error(r, 400, "total_from: a Redis key of 1..256 bytes, no NUL");
		return false;
	}
	if (mb == NULL) {
		*rc = adm_reply_error(r, 409,
				      "total_from: this control plane has no Redis (start it with "
				      "--redis and --cluster-member)");
		return false;
	}
	int e = sk_member_get_units(mb, key, &units, msg, sizeof(msg));
	if (e == -ENOTCONN || e == -ETIMEDOUT || e == -ENOMEM) {
		r->retry_after = 1;
		*rc = adm_reply_error(r, 503, msg);
		return false;
	}
	if (e == 0 && units > SK_STOCK_MAX_UNITS) {
		snprintf(msg, sizeof(msg), "total_from: %.256s holds %" PRIu64 " units, above 2^48",
			 key, units);
		e = -ERANGE;
	}
	if (e != 0) {
		*rc = adm_reply_error(r, 400, msg);
		return false;
	}
	a->total = units;
	return true;
}

/* activity_from_json - a new activity from a request body (defaults filled). */
static bool
activity_from_json(struct sk_control *ctl, json_t *o, struct sk_store_activity *a,
		   struct sk_admin_reply *r, int *rc)
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
	m = json_object_get(o, "total_from");
	if (m != NULL && json_object_get(o, "total") != NULL) {
		*rc = adm_reply_error(r, 400, "total, total_from: give one, not both");
		return false;
	}
	if (m != NULL) {
		if (!total_from_redis(ctl, m, a, r, rc))
			return false;
	} else {
		got = adm_get_u64(o, "total", 1, SK_STOCK_MAX_UNITS, false, &a->total, r, rc);
		if (got == 0)
			*rc = adm_reply_error(r, 400, "total: required, 1..2^48 (or total_from)");
		if (got != 1)
			return false;
	}
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
	if (!get_flag(o, "cluster", &a->cluster, r, rc) || !get_flag(o, "gate", &a->gate, r, rc) ||
	    !get_flag(o, "reserved_only", &a->reserved_only, r, rc))
		return false;
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

/* What a refusal of a change says, where it depends on the change. */
struct refusals {
	const char *conflict; /* SK_ACTIVITY_CONFLICT */
	const char *ended;    /* SK_ACTIVITY_ENDED */
	const char *cluster;  /* SK_ACTIVITY_CLUSTER; NULL: the stock-change wording */
};

/*
 * activity_reply - the answer of a change to activity @id: its item object
 * with "result", or an error status for the other outcomes.
 */
static int
activity_reply(struct sk_control *ctl, uint64_t id, int res, unsigned done_status,
	       const struct refusals *why, struct sk_admin_reply *r)
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
		return adm_reply_error(r, 409, why->conflict);
	case SK_ACTIVITY_CLOSED:
		return adm_reply_error(r, 409, "the activity is closed");
	case SK_ACTIVITY_ENDED:
		return adm_reply_error(r, 409, why->ended);
	case SK_ACTIVITY_BUSY:
		r->retry_after = 1;
		return adm_reply_error(r, 503,
				       "the buyers moved the units faster than the removal could "
				       "gather them: nothing removed, retry");
	case SK_ACTIVITY_REDIS:
		r->retry_after = 1;
		return adm_reply_error(r, 503,
				       "a cluster sale: the Redis pool is not reachable, or no "
				       "member has made it yet: nothing added, retry with the "
				       "same request id");
	case SK_ACTIVITY_CLUSTER:
		return adm_reply_error(
			r, 409,
			why->cluster != NULL
				? why->cluster
				: "a cluster sale: its units live in the Redis pool and "
				  "come here as leases (docs/cluster.md); no removal on one "
				  "appliance (restock adds to the pool)");
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
	bool ok = activity_from_json(ctl, o, &a, r, &rc);
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
	static const struct refusals why = {
		.conflict = "the activity exists with another definition (an activity does not "
			    "change: restock it, or close it and use a new item id)",
		.ended = "the sale has ended",
		.cluster = "cluster: this control plane is not a cluster member (start it with "
			   "--redis and --cluster-member)"};
	return activity_reply(ctl, a.item,
			      sk_control_activity_add(ctl, &a, sk_clock_ns(CLOCK_REALTIME)), 201,
			      &why, r);
}

int
adm_post_close(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	static const struct refusals why = {.conflict = "", .ended = ""};
	return activity_reply(
		ctl, id, sk_control_activity_close(ctl, (uint32_t)id, sk_clock_ns(CLOCK_REALTIME)),
		200, &why, r);
}

/*
 * stock_body - the body {"units":N,"<id_key>":R} of a restock or a
 * removal (both required); 0, or -1 with a 400 in @r (*rc its result).
 */
static int
stock_body(const char *body, size_t len, const char *id_key, const char *what, uint64_t *units,
	   uint64_t *rid, struct sk_admin_reply *r, int *rc)
{
	char msg[160];
	const char *key;
	json_t *m;
	json_t *o = adm_parse_body(body, len, r, rc);

	if (o == NULL)
		return -1;
	json_object_foreach(o, key, m)
	{
		if (strcmp(key, "units") != 0 && strcmp(key, id_key) != 0) {
			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			json_decref(o);
			*rc = adm_reply_error(r, 400, msg);
			return -1;
		}
	}
	int gu = adm_get_u64(o, "units", 1, SK_STOCK_MAX_UNITS, false, units, r, rc);
	int gi = gu == 1 ? adm_get_u64(o, id_key, 1, INT64_MAX, false, rid, r, rc) : 0;
	json_decref(o);
	if (gu < 0 || gi < 0)
		return -1;
	if (gu == 0) {
		*rc = adm_reply_error(r, 400, "units: required, 1..2^48");
		return -1;
	}
	if (gi == 0) {
		snprintf(msg, sizeof(msg),
			 "%s: required, 1..2^63-1 (names the %s so that a retry is applied once)",
			 id_key, what);
		*rc = adm_reply_error(r, 400, msg);
		return -1;
	}
	return 0;
}

int
adm_post_restock(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		 struct sk_admin_reply *r)
{
	static const struct refusals why = {
		.conflict = "restock_id was used before with another number of units, or by a "
			    "removal",
		.ended = "the sale has ended: restocked units could never sell"};
	uint64_t units = 0, rid = 0;
	int rc;

	if (stock_body(body, len, "restock_id", "restock", &units, &rid, r, &rc) != 0)
		return rc;
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id,
		sk_control_stock_add(ctl, (uint32_t)id, rid, units, sk_clock_ns(CLOCK_REALTIME)),
		200, &why, r);
}

int
adm_post_remove(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		struct sk_admin_reply *r)
{
	static const struct refusals why = {
		.conflict = "request_id was used before with another number of units, or by a "
			    "restock",
		.ended = "the sale has ended"};
	uint64_t units = 0, rid = 0, unsold = 0;
	int rc;

	if (stock_body(body, len, "request_id", "removal", &units, &rid, r, &rc) != 0)
		return rc;
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	rc = sk_control_stock_remove(ctl, (uint32_t)id, rid, units, sk_clock_ns(CLOCK_REALTIME),
				     &unsold);
	if (rc == SK_ACTIVITY_SHORT) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "only %" PRIu64 " units are unsold: units sold or in a buyer's hands "
			 "are never removed (nothing removed)",
			 unsold);
		return adm_reply_json(r, 409,
				      json_pack("{s:s,s:o,s:o}", "error", msg, "unsold",
						adm_jint(unsold), "units", adm_jint(units)));
	}
	return activity_reply(ctl, id, rc, 200, &why, r);
}

int
adm_post_pause(struct sk_control *ctl, uint64_t id, bool paused, struct sk_admin_reply *r)
{
	static const struct refusals why = {
		.conflict = "", .ended = "the sale has ended: nothing to pause or resume"};

	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	return activity_reply(
		ctl, id,
		sk_control_activity_pause(ctl, (uint32_t)id, paused, sk_clock_ns(CLOCK_REALTIME)),
		200, &why, r);
}

int
adm_post_extend(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		struct sk_admin_reply *r)
{
	static const struct refusals why = {
		.conflict = "the new end is before the current end: an end only moves later",
		.ended = "the sale has ended: an ended sale is not reopened (create a new "
			 "activity)"};
	const char *key;
	json_t *m;
	uint64_t v = 0;
	int rc;
	json_t *o = adm_parse_body(body, len, r, &rc);

	if (o == NULL)
		return rc;
	json_object_foreach(o, key, m)
	{
		if (strcmp(key, "end_ns") != 0) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%.64s: unknown field", key);
			json_decref(o);
			return adm_reply_error(r, 400, msg);
		}
	}
	bool never = json_is_null(json_object_get(o, "end_ns"));
	int got = adm_get_u64(o, "end_ns", 1, INT64_MAX, true, &v, r, &rc);
	json_decref(o);
	if (got < 0)
		return rc;
	if (got == 0 && !never)
		return adm_reply_error(r, 400,
				       "end_ns: required, ns since the epoch (null: never)");
	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	return activity_reply(ctl, id,
			      sk_control_activity_extend(ctl, (uint32_t)id,
							 never ? INT64_MAX : (int64_t)v,
							 sk_clock_ns(CLOCK_REALTIME)),
			      200, &why, r);
}

/* ---------------------------------------------------------------- archive */

json_t *
adm_archive_json(struct sk_control *ctl, uint32_t item)
{
	struct sk_store_archive_info a;

	if (sk_store_archive_get(sk_control_store(ctl), item, &a) != 0)
		return json_null();
	return json_pack("{s:s,s:o,s:o,s:o,s:I}", "state",
			 a.state == SK_STORE_ARCHIVE_DONE ? "done" : "purging", "orders",
			 adm_jint(a.orders), "first_order", adm_id_string(a.first_id), "last_order",
			 adm_id_string(a.last_id), "archived_ns", (json_int_t)a.archived_ns);
}

int
adm_post_archive(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	char why[256], msg[320];

	if (id > UINT32_MAX)
		return adm_reply_error(r, 404, "unknown activity");
	int rc = sk_control_archive(ctl, (uint32_t)id, sk_clock_ns(CLOCK_REALTIME), NULL, why,
				    sizeof(why));
	switch (rc) {
	case 0:
		return adm_reply_json(r, 200,
				      json_pack("{s:o,s:b,s:o}", "item", adm_jint(id), "archived",
						true, "archive",
						adm_archive_json(ctl, (uint32_t)id)));
	case -ENOENT:
		return adm_reply_error(r, 404, "unknown activity");
	case -EALREADY:
		return adm_reply_error(r, 409, "the activity is archived already");
	case -EINPROGRESS:
	case -EBUSY:
		snprintf(msg, sizeof(msg), "cannot archive yet: %s", why);
		return adm_reply_error(r, 409, msg);
	case -EAGAIN:
		r->retry_after = 1;
		snprintf(msg, sizeof(msg), "cannot archive now: %s", why);
		return adm_reply_error(r, 503, msg);
	default:
		snprintf(msg, sizeof(msg), "archive: %s", strerror(-rc));
		return adm_reply_error(r, 503, msg);
	}
}
