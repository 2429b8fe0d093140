/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin API's read-only views of items and activities: GET /v1/items[/{id}],
 * GET /v1/activities[/{id}].
 */
#include <errno.h>
#include <stdlib.h>

#include <jansson.h>

#include "sk_admin_impl.h"
#include "sk_reserve_ctl.h"

/* ------------------------------------------------------------------ items */

static const char *
item_state_name(uint32_t s)
{
	switch (s) {
	case SK_ITEM_ACTIVE:
		return "active";
	case SK_ITEM_CLOSED:
		return "closed";
	case SK_ITEM_PAUSED:
		return "paused";
	default:
		return "free";
	}
}

json_t *
adm_item_json(const struct sk_control_item *it)
{
	json_t *o = json_object(), *act = json_null();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "item", adm_jint(it->id));
	json_object_set_new(o, "in_arena", json_boolean(it->in_arena));
	if (it->in_arena) {
		json_object_set_new(o, "state", json_string(item_state_name(it->state)));
		json_object_set_new(o, "sold_out", json_boolean(it->sold_out));
		json_object_set_new(o, "total", adm_jint(it->total));
		json_object_set_new(o, "added", adm_jint(it->added));
		json_object_set_new(o, "removed", adm_jint(it->removed));
		json_object_set_new(o, "remaining", adm_jint(it->remaining));
		json_object_set_new(o, "sold", adm_jint(it->sold));
		json_object_set_new(o, "returned", adm_jint(it->returned));
		json_object_set_new(o, "price", adm_jint(it->price));
		json_object_set_new(o, "per_user_limit", adm_jint(it->per_user_limit));
		json_object_set_new(o, "start_ns", json_integer(it->start_ns));
		json_object_set_new(o, "end_ns", json_integer(it->end_ns));
	}
	if (it->has_activity) {
		const struct sk_store_activity *a = &it->activity;
		act = json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:b,s:b,s:I,s:b}", "name",
				a->name, "total", adm_jint(a->total), "added", adm_jint(a->added),
				"removed", adm_jint(a->removed), "price", adm_jint(a->price),
				"per_user_limit", adm_jint(a->per_user_limit), "start_ns",
				(json_int_t)a->start_ns, "end_ns", (json_int_t)a->end_ns,
				"pay_timeout_ns", (json_int_t)a->pay_timeout_ns, "closed",
				a->closed_ns != 0, "paused", a->paused_ns != 0, "paused_ns",
				(json_int_t)a->paused_ns, "cluster", a->cluster);
		if (act != NULL) {
			json_object_set_new(act, "gate", json_boolean(a->gate));
			json_object_set_new(act, "reserved_only", json_boolean(a->reserved_only));
		}
	}
	json_object_set_new(o, "activity", act != NULL ? act : json_null());
	const struct sk_store_ledger *l = &it->ledger;
	json_object_set_new(o, "ledger",
			    json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "sold", adm_jint(l->sold),
				      "returned", adm_jint(l->returned), "paid", adm_jint(l->paid),
				      "live", adm_jint(sk_store_ledger_live(l)), "lines",
				      adm_jint(l->lines), "lines_paid", adm_jint(l->lines_paid),
				      "lines_cancelled", adm_jint(l->lines_cancelled)));
	return o;
}

static int
item_append(const struct sk_control_item *it, void *arg)
{
	json_t *o = adm_item_json(it);

	if (o == NULL || json_array_append_new(arg, o) != 0)
		return -ENOMEM;
	return 0;
}

int
adm_get_items(struct sk_control *ctl, struct sk_admin_reply *r)
{
	json_t *arr = json_array();

	if (arr == NULL)
		return -ENOMEM;
	int rc = sk_control_items_foreach(ctl, item_append, arr);
	if (rc == -ENOMEM) {
		json_decref(arr);
		return rc;
	}
	if (rc != 0) {
		json_decref(arr);
		return adm_reply_error(r, 503, "store error");
	}
	return adm_reply_json(r, 200, json_pack("{s:o}", "items", arr));
}

int
adm_get_item(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	int rc = id > UINT32_MAX ? -ENOENT : sk_control_item_get(ctl, (uint32_t)id, &it);

	if (rc == -ENOENT)
		return adm_reply_error(r, 404, "unknown item");
	if (rc != 0)
		return adm_reply_error(r, 503, "store error");
	return adm_reply_json(r, 200, adm_item_json(&it));
}

/* ------------------------------------------------------------- activities */

static int
activity_append(const struct sk_control_item *it, void *arg)
{
	return it->has_activity ? item_append(it, arg) : 0;
}

int
adm_get_activities(struct sk_control *ctl, struct sk_admin_reply *r)
{
	json_t *arr = json_array();

	if (arr == NULL)
		return -ENOMEM;
	int rc = sk_control_items_foreach(ctl, activity_append, arr);
	if (rc != 0) {
		json_decref(arr);
		return rc == -ENOMEM ? rc : adm_reply_error(r, 503, "store error");
	}
	return adm_reply_json(r, 200, json_pack("{s:o}", "activities", arr));
}

int
adm_get_activity(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r)
{
	struct sk_control_item it;
	int rc = id > UINT32_MAX ? -ENOENT : sk_control_item_get(ctl, (uint32_t)id, &it);

	if (rc == -ENOENT || (rc == 0 && !it.has_activity))
		return adm_reply_error(r, 404, "unknown activity");
	if (rc != 0)
		return adm_reply_error(r, 503, "store error");
	json_t *o = adm_item_json(&it);
	uint64_t reserved = 0;
	if (o != NULL) {
		json_object_set_new(o, "archive", adm_archive_json(ctl, (uint32_t)id));
		if (sk_control_reserve_total(ctl, (uint32_t)id, &reserved) == 0)
			json_object_set_new(o, "reserved", adm_jint(reserved));
	}
	return adm_reply_json(r, 200, o);
}
