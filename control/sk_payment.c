/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payment (see sk_control.h and docs/control.md "Payment deadlines",
 * "Payments and refunds"): the deadline pass that cancels unpaid orders
 * (sk_control_expire), the pay call behind POST /v1/orders/{id}/pay
 * (sk_control_pay), and the payment messages of seckill.payments and the
 * admin API's refund (sk_control_payment).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "sk_buy.h"
#include "sk_control.h"
#include "sk_control_impl.h"

#define MS INT64_C(1000000)

/* ------------------------------------------------------ deadlines and pay */

static int
collect_expiry(int64_t deadline_ns, uint64_t order, void *arg)
{
	struct sk_control *ctl = ((void **)arg)[0];
	uint32_t *n = ((void **)arg)[1];

	ctl->exp[*n] = (struct expiry){deadline_ns, order};
	return ++*n >= ctl->expire_max ? 1 : 0;
}

/* cancel_expired - cancel order @id if it is still unpaid. 1 if cancelled now. */
static int
cancel_expired(struct sk_control *ctl, uint64_t id, int64_t now_ns)
{
	unsigned nl = 0, cur;
	int rc;

	lock(ctl);
	rc = sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES, &nl);
	if (rc == 0 && ctl->lines[0].state == SK_ORDER_CONFIRMED)
		rc = sk_store_order_move(ctl->store, id, SK_ORDER_CONFIRMED, SK_ORDER_CANCELLED,
					 now_ns, &cur);
	else if (rc == 0 || rc == -ENOENT)
		rc = -EALREADY; /* a deadline must not outlive its confirmed order */
	if (rc == 0) {
		ctl_release_cancelled(ctl, ctl->lines, nl);
		stat_add(&ctl->st.cancels, 1);
		if (sk_status_slot(&ctl->status, id) == NULL)
			stat_add(&ctl->st.cancels_foreign, 1);
	}
	unlock(ctl);
	if (rc == -EALREADY)
		return 0; /* paid (or cancelled) first */
	return rc == 0 ? 1 : rc;
}

int
sk_control_expire(struct sk_control *ctl, int64_t now_ns)
{
	uint32_t n = 0;
	void *arg[2] = {ctl, &n};
	int rc = sk_store_deadlines_foreach(ctl->store, now_ns, collect_expiry, arg);
	int done = 0;

	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		rc = cancel_expired(ctl, ctl->exp[i].id, now_ns);
		if (rc < 0)
			return done > 0 ? done : rc;
		done += rc;
	}
	return done;
}

static const char *const pay_names[] = {
	[SK_CONTROL_PAY_DONE] = "paid",		  [SK_CONTROL_PAY_ALREADY] = "already_paid",
	[SK_CONTROL_PAY_CANCELLED] = "cancelled", [SK_CONTROL_PAY_FAILED] = "failed",
	[SK_CONTROL_PAY_QUEUED] = "queued",	  [SK_CONTROL_PAY_UNKNOWN] = "unknown",
};

const char *
sk_control_pay_result_name(int result)
{
	return result >= 0 && (size_t)result < SK_ARRAY_SIZE(pay_names) ? pay_names[result]
									: "error";
}

/* pay_once - one attempt under the lock: an enum sk_control_pay_result or an error. */
static int
pay_once(struct sk_control *ctl, uint64_t id, int64_t now_ns)
{
	unsigned cur = 0, nl = 0;
	int rc, res;

	lock(ctl);
	rc = sk_store_order_move(ctl->store, id, SK_ORDER_CONFIRMED, SK_ORDER_PAID, now_ns, &cur);
	if (rc == 0) {
		res = SK_CONTROL_PAY_DONE;
		if (ctl_status_sync(ctl, id, SK_ORDER_PAID) == -EALREADY)
			stat_add(&ctl->st.anomalies, 1);
	} else if (rc == -EALREADY) {
		res = cur == SK_ORDER_PAID ? SK_CONTROL_PAY_ALREADY : SK_CONTROL_PAY_CANCELLED;
		/* Repair an arena a crashed predecessor left behind the store. */
		if (sk_store_order_get(ctl->store, id, ctl->lines, SK_STORE_MAX_LINES, &nl) == 0 &&
		    ctl_sync_from_store(ctl, ctl->lines, nl))
			stat_add(&ctl->st.repaired, 1);
	} else if (rc == -ENOENT) {
		switch (sk_status_get(&ctl->status, id)) {
		case SK_ORDER_QUEUED:
			res = SK_CONTROL_PAY_QUEUED;
			break;
		case SK_ORDER_FAILED:
			res = SK_CONTROL_PAY_FAILED;
			break;
		default:
			res = SK_CONTROL_PAY_UNKNOWN;
		}
	} else {
		res = rc;
	}
	unlock(ctl);
	return res;
}

int
sk_control_pay(struct sk_control *ctl, uint64_t id, int64_t now_ns, unsigned wait_ms)
{
	int res = pay_once(ctl, id, now_ns);

	/* Queued: the drain usually confirms within a few ms. Wait outside the lock. */
	for (unsigned w = 0; res == SK_CONTROL_PAY_QUEUED && w < wait_ms; w++) {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
		if (sk_status_get(&ctl->status, id) != SK_ORDER_QUEUED)
			res = pay_once(ctl, id, now_ns + (int64_t)(w + 1) * MS);
	}
	if (res < 0)
		stat_add(&ctl->st.pay_errors, 1);
	else
		stat_add(&ctl->st.pay[res], 1);
	return res;
}

/* ------------------------------------------------------ payment messages */

static const char *const pm_names[] = {
	[SK_CONTROL_PM_DONE] = "done",	       [SK_CONTROL_PM_ALREADY] = "already",
	[SK_CONTROL_PM_CONFLICT] = "conflict", [SK_CONTROL_PM_STATE] = "state",
	[SK_CONTROL_PM_TOO_MANY] = "too_many", [SK_CONTROL_PM_NO_ITEM] = "no_item",
	[SK_CONTROL_PM_UNKNOWN] = "unknown",   [SK_CONTROL_PM_QUEUED] = "queued",
	[SK_CONTROL_PM_FAILED] = "failed",     [SK_CONTROL_PM_REUSED] = "reused",
};

const char *
sk_control_pm_outcome_name(unsigned outcome)
{
	return outcome < SK_ARRAY_SIZE(pm_names) ? pm_names[outcome] : "error";
}

void
sk_control_payment_malformed(struct sk_control *ctl)
{
	stat_add(&ctl->st.payments_malformed, 1);
}

int
sk_control_payment_rejected(struct sk_control *ctl, int32_t partition, int64_t offset,
			    unsigned reason, int64_t now_ns)
{
	struct sk_store_event ev = {.type = SK_STORE_EV_PAY_REJECTED,
				    .nlines = (uint8_t)reason,
				    .item = (uint32_t)partition,
				    .units = (uint64_t)offset,
				    .time_ns = now_ns};
	int rc;

	if (reason < SK_STORE_REJ_UNSIGNED || reason > SK_STORE_REJ_STALE || partition < 0 ||
	    offset < 0)
		return -EINVAL;
	lock(ctl);
	rc = sk_store_event_append(ctl->store, &ev);
	unlock(ctl);
	if (rc == 0)
		stat_add(&ctl->st.payments_rejected[reason], 1);
	return rc;
}

/* refund_arena - the lines the store refunded now go back on sale. */
static void
refund_arena(struct sk_control *ctl, const struct sk_store_pay_result *res, uint64_t id)
{
	for (unsigned i = 0; i < res->nlines; i++) {
		struct sk_order_rec rec = res->lines[i].rec;
		int rc = sk_buy_refund(ctl->shm, &rec, res->lines[i].units);

		if (rc == 0)
			stat_add(&ctl->st.units_refunded, res->lines[i].units);
		else if (rc != -ENOENT) /* -ENOENT: the item is not on sale here */
			stat_add(&ctl->st.anomalies, 1);
	}
	if (res->state == SK_ORDER_REFUNDED &&
	    ctl_status_sync(ctl, id, SK_ORDER_REFUNDED) == -EALREADY)
		stat_add(&ctl->st.anomalies, 1);
}

/* payment_once - one attempt under the lock; 0 with @out set, or an error. */
static int
payment_once(struct sk_control *ctl, const struct sk_control_payment *p, int64_t now_ns,
	     struct sk_control_pm_result *out)
{
	struct sk_store_payment sp = {.request = p->request,
				      .order = p->order,
				      .kind = p->kind,
				      .item = p->item,
				      .units = p->units};
	struct sk_store_pay_result res;
	int rc;

	lock(ctl);
	rc = sk_store_payment_apply(ctl->store, &sp, now_ns, &res);
	if (rc == 0 || rc == -EEXIST) {
		*out = (struct sk_control_pm_result){.outcome = rc == 0 ? res.outcome
									: SK_CONTROL_PM_REUSED,
						     .duplicate = rc == 0 && res.duplicate,
						     .state = res.state,
						     .units = res.units};
		if (rc == 0 && !res.duplicate && res.outcome == SK_STORE_PAY_DONE) {
			if (p->kind == SK_STORE_PAY_REFUND)
				refund_arena(ctl, &res, p->order);
			else if (ctl_status_sync(ctl, p->order, SK_ORDER_PAID) == -EALREADY)
				stat_add(&ctl->st.anomalies, 1);
		}
		rc = 0;
	} else if (rc == -ENOENT) {
		unsigned st = sk_status_get(&ctl->status, p->order);
		*out = (struct sk_control_pm_result){
			.outcome = st == SK_ORDER_QUEUED   ? SK_CONTROL_PM_QUEUED
				   : st == SK_ORDER_FAILED ? SK_CONTROL_PM_FAILED
							   : SK_CONTROL_PM_UNKNOWN,
			.state = (uint8_t)st};
		rc = 0;
	}
	unlock(ctl);
	return rc;
}

int
sk_control_payment(struct sk_control *ctl, const struct sk_control_payment *p, int64_t now_ns,
		   unsigned wait_ms, struct sk_control_pm_result *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!sk_store_request_ok(p->request) ||
	    (p->kind != SK_STORE_PAY_PAID && p->kind != SK_STORE_PAY_REFUND)) {
		stat_add(&ctl->st.payments_malformed, 1);
		return -EINVAL;
	}
	rc = payment_once(ctl, p, now_ns, out);
	/* Queued: the drain usually confirms within a few ms. Wait outside the lock. */
	for (unsigned w = 0; rc == 0 && out->outcome == SK_CONTROL_PM_QUEUED && w < wait_ms; w++) {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
		if (sk_status_get(&ctl->status, p->order) != SK_ORDER_QUEUED)
			rc = payment_once(ctl, p, now_ns + (int64_t)(w + 1) * MS, out);
	}
	if (rc != 0) {
		stat_add(&ctl->st.payments_errors, 1);
		return rc;
	}
	/* A repeat is counted once, as a repeat: the outcomes count messages
	 * that did something (or were refused) the first time. */
	if (out->duplicate)
		stat_add(&ctl->st.payments_dup, 1);
	else
		stat_add(&ctl->st.payments[p->kind == SK_STORE_PAY_REFUND][out->outcome], 1);
	return 0;
}
