/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Retention (sk_control.h, docs/control.md "Retention"): archiving an
 * activity's orders (sk_control_archive()), and the main loop's share
 * (sk_control_retention()): the purge of an archived item's orders in
 * slices, the trim of the event log in slices, and the keep-days policy.
 *
 * Every store write here is a short transaction under ctl->wlock, like the
 * drain's, so the drain runs between two slices. The export of an archive
 * file only reads (one snapshot): the admin thread runs it for an operator,
 * the policy's worker thread for the policy, never the main loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sk_control_impl.h"
#include "sk_export.h"
#include "sk_logfmt.h"
#include "sk_reserve_ctl.h"
#include "sk_store_archive.h"

#define S_NS		INT64_C(1000000000)
#define TRIM_EVERY_NS	S_NS
#define POLICY_EVERY_NS (60 * S_NS)
#define TRIM_SLICE	10000 /* events per trim transaction */
#define POLICY_BATCH	16    /* activities one policy pass archives at most */
#define DAY_NS		(INT64_C(86400) * S_NS)

struct ctl_retention {
	int64_t keep_ns;      /* archive activities over for this long; 0 = policy off */
	uint64_t events_keep; /* without an exporter: events kept */
	bool exporting;	      /* the Kafka exporter reads the log (cursor kafka.export) */
	uint32_t slice;	      /* orders per purge transaction */

	/* Main loop only. */
	uint32_t purge_item;	/* being purged; 0 = none */
	bool trim_more;		/* the last trim slice was full */
	uint64_t trimmed_below; /* every event below this is gone (from 1: none below) */
	int64_t last_trim_ns, last_policy_ns;
	bool rescan; /* look for PURGING records (atomic: the admin thread sets it) */

	/* Serialises whole archives (export + mark) of any item. */
	pthread_mutex_t archive_mu;
	/* The policy's worker: items to archive, the thread, whether it ended. */
	pthread_t worker;
	bool worker_on, worker_done; /* worker_done: atomic */
	uint32_t todo[POLICY_BATCH];
	unsigned ntodo;
	int64_t todo_now_ns;   /* the clock of the pass that chose them */
	uint32_t policy_after; /* the next pass looks at items after this first */
};

int
ctl_retention_init(struct sk_control *ctl, const struct sk_control_conf *conf)
{
	struct ctl_retention *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	if (pthread_mutex_init(&r->archive_mu, NULL) != 0) {
		free(r);
		return -ENOMEM;
	}
	r->keep_ns = conf->retention_keep_days > 0 ? conf->retention_keep_days * DAY_NS : 0;
	r->events_keep =
		conf->events_keep != 0 ? conf->events_keep : SK_CONTROL_EVENTS_KEEP_DEFAULT;
	r->exporting = conf->events_exported;
	r->slice =
		conf->archive_slice != 0 ? conf->archive_slice : SK_CONTROL_ARCHIVE_SLICE_DEFAULT;
	r->rescan = true;
	r->trimmed_below = 1;
	ctl->ret = r;
	return 0;
}

void
ctl_retention_free(struct sk_control *ctl)
{
	struct ctl_retention *r = ctl->ret;

	if (r == NULL)
		return;
	if (r->worker_on)
		pthread_join(r->worker, NULL);
	pthread_mutex_destroy(&r->archive_mu);
	free(r);
	ctl->ret = NULL;
}

/* export_below - the first event the exporter has not sent (0: no exporter). */
static uint64_t
export_below(struct sk_control *ctl)
{
	uint64_t cursor = 0;

	if (!ctl->ret->exporting)
		return 0;
	if (sk_store_cursor_get(ctl->store, SK_EXPORT_CURSOR, &cursor) != 0)
		cursor = 0; /* never saved: nothing sent */
	return cursor + 1;
}

int
sk_control_archive(struct sk_control *ctl, uint32_t item, int64_t now_ns,
		   struct sk_store_archive_info *info, char *why, size_t whylen)
{
	struct ctl_retention *r = ctl->ret;
	struct sk_store_archive_snap snap;
	int rc;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (item == 0)
		return -EINVAL;
	SK_ASSERT(pthread_mutex_lock(&r->archive_mu) == 0);
	rc = sk_store_archive_export(ctl->store, item, now_ns, export_below(ctl), &snap, why,
				     whylen);
	if (rc == 0) {
		lock(ctl);
		rc = sk_store_archive_mark(ctl->store, &snap, now_ns);
		if (rc == 0)
			ctl_activity_resync(ctl, item); /* closed now, if it was not */
		unlock(ctl);
	}
	SK_ASSERT(pthread_mutex_unlock(&r->archive_mu) == 0);
	if (rc == -EAGAIN && why != NULL)
		snprintf(why, whylen, "an order of the activity changed meanwhile: try again");
	if (rc != 0)
		return rc;
	stat_add(&ctl->st.activities_archived, 1);
	/* Its reservation set has no use left: out of the store and memory. */
	int dr = sk_control_reserve_drop(ctl, item);
	if (dr < 0)
		sk_logf(SK_LOG_WARN, "retention",
			"item=%" PRIu32 " msg=\"reservation set kept: %s\"", item, strerror(-dr));
	__atomic_store_n(&r->rescan, true, __ATOMIC_RELEASE);
	sk_logf(SK_LOG_NOTICE, "retention",
		"item=%" PRIu32 " orders=%" PRIu64 " file_bytes=%" PRIu64
		" msg=\"activity archived; its orders leave the store in slices\"",
		item, snap.orders, snap.file_bytes);
	return info != NULL ? sk_store_archive_get(ctl->store, item, info) : 0;
}

/* ----------------------------------------------------------------- purge */

static int
find_purging(const struct sk_store_archive_info *info, void *arg)
{
	if (info->state != SK_STORE_ARCHIVE_PURGING)
		return 0;
	*(uint32_t *)arg = info->item;
	return 1;
}

/* purge - one slice of the item being purged: 1 if it did one, 0 if none, or an error. */
static int
purge(struct sk_control *ctl)
{
	struct ctl_retention *r = ctl->ret;
	uint64_t n = 0;
	int rc;

	if (r->purge_item == 0 && __atomic_exchange_n(&r->rescan, false, __ATOMIC_ACQ_REL)) {
		rc = sk_store_archive_foreach(ctl->store, find_purging, &r->purge_item);
		if (rc < 0) {
			__atomic_store_n(&r->rescan, true, __ATOMIC_RELEASE);
			return rc;
		}
	}
	if (r->purge_item == 0)
		return 0;
	lock(ctl);
	rc = sk_store_archive_purge(ctl->store, r->purge_item, r->slice, &n);
	unlock(ctl);
	stat_add(&ctl->st.orders_archived, n);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		sk_logf(SK_LOG_INFO, "retention",
			"item=%" PRIu32 " msg=\"archived orders purged from the store\"",
			r->purge_item);
		r->purge_item = 0;
		__atomic_store_n(&r->rescan, true, __ATOMIC_RELEASE); /* another one? */
	}
	return 1;
}

/* ------------------------------------------------------------------ trim */

/* rings_empty - no order record waits in any ring (the drain is idle). */
static bool
rings_empty(const struct sk_control *ctl)
{
	for (unsigned l = 0; l < ctl->nrings; l++)
		if (sk_control_ring_depth(ctl, l) > 0)
			return false;
	return true;
}

/*
 * trim - one slice of the events every reader is done with: 1 if some
 * went, 0, or an error. A backlog goes at once while the drain is idle,
 * one slice a second during a sale (its commits come first).
 */
static int
trim(struct sk_control *ctl, int64_t mono)
{
	struct ctl_retention *r = ctl->ret;
	struct sk_store_info si;
	uint64_t below, n = 0;
	int rc;

	if (!(r->trim_more && rings_empty(ctl)) && mono - r->last_trim_ns < TRIM_EVERY_NS)
		return 0;
	r->last_trim_ns = mono;
	r->trim_more = false;
	if (r->exporting) {
		below = export_below(ctl);
	} else {
		rc = sk_store_info(ctl->store, &si);
		if (rc != 0)
			return rc;
		below = si.event_next > r->events_keep ? si.event_next - r->events_keep : 0;
	}
	if (below <= r->trimmed_below)
		return 0; /* nothing new below: no write transaction */
	lock(ctl);
	rc = sk_store_events_trim_max(ctl->store, below, TRIM_SLICE, &n);
	unlock(ctl);
	if (rc != 0)
		return rc;
	stat_add(&ctl->st.events_trimmed, n);
	r->trim_more = n == TRIM_SLICE;
	if (!r->trim_more)
		r->trimmed_below = below;
	return n > 0;
}

/* ---------------------------------------------------------------- policy */

/* One pass of the policy: items in (lo, hi], over before before_ns, not archived. */
struct candidates {
	struct sk_control *ctl;
	int64_t before_ns;
	uint32_t lo, hi;
	uint32_t *items;
	unsigned n;
};

static int
candidate(const struct sk_store_activity *a, const struct sk_store_ledger *led, void *arg)
{
	struct candidates *c = arg;
	struct sk_store_archive_info info;
	int64_t end = a->closed_ns != 0 && a->closed_ns < a->end_ns ? a->closed_ns : a->end_ns;

	(void)led;
	if (a->item <= c->lo || a->item > c->hi)
		return a->item > c->hi; /* in item order: past hi, stop */
	if (end > c->before_ns || sk_store_archive_get(c->ctl->store, a->item, &info) != -ENOENT)
		return 0;
	c->items[c->n++] = a->item;
	return c->n == POLICY_BATCH;
}

static void *
worker(void *arg)
{
	struct sk_control *ctl = arg;
	struct ctl_retention *r = ctl->ret;

	for (unsigned i = 0; i < r->ntodo; i++) {
		char why[256];
		int rc =
			sk_control_archive(ctl, r->todo[i], r->todo_now_ns, NULL, why, sizeof(why));
		if (rc == -EBUSY || rc == -EINPROGRESS || rc == -EAGAIN || rc == -EALREADY)
			sk_logf(SK_LOG_DEBUG, "retention", "item=%" PRIu32 " msg=\"not yet: %s\"",
				r->todo[i], why);
		else if (rc != 0)
			sk_logf(SK_LOG_WARN, "retention",
				"item=%" PRIu32 " msg=\"archive failed\" err=%s", r->todo[i],
				strerror(-rc));
	}
	__atomic_store_n(&r->worker_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* policy - start the worker on the activities over for keep_ns; 0, or an error. */
static int
policy(struct sk_control *ctl, int64_t now_ns, int64_t mono)
{
	struct ctl_retention *r = ctl->ret;

	if (r->keep_ns == 0 ||
	    (r->last_policy_ns != 0 && mono - r->last_policy_ns < POLICY_EVERY_NS))
		return 0;
	if (r->worker_on) {
		if (!__atomic_load_n(&r->worker_done, __ATOMIC_ACQUIRE))
			return 0;
		pthread_join(r->worker, NULL);
		r->worker_on = false;
	}
	r->last_policy_ns = mono;
	/* Round robin from the item after the last pass's: activities that
	 * stay unarchivable (a cart, an order never paid) never starve later
	 * ones. */
	struct candidates c = {.ctl = ctl,
			       .before_ns = now_ns - r->keep_ns,
			       .lo = r->policy_after,
			       .hi = UINT32_MAX,
			       .items = r->todo};
	int rc = sk_store_activity_foreach(ctl->store, candidate, &c);
	if (rc >= 0 && c.n < POLICY_BATCH && c.lo != 0) {
		c.hi = c.lo, c.lo = 0; /* wrap around */
		rc = sk_store_activity_foreach(ctl->store, candidate, &c);
	}
	if (rc < 0)
		return rc;
	r->policy_after = c.n == POLICY_BATCH ? c.items[c.n - 1] : 0;
	r->ntodo = c.n;
	r->todo_now_ns = now_ns;
	if (c.n == 0)
		return 0;
	r->worker_done = false;
	rc = pthread_create(&r->worker, NULL, worker, ctl);
	if (rc != 0)
		return -rc;
	r->worker_on = true;
	return 0;
}

int
sk_control_retention(struct sk_control *ctl, int64_t now_ns)
{
	int64_t mono = sk_clock_ns(CLOCK_MONOTONIC);
	int rc = purge(ctl), busy = rc > 0;

	if (rc >= 0) {
		rc = trim(ctl, mono);
		busy |= rc > 0;
	}
	if (rc >= 0)
		rc = policy(ctl, now_ns, mono);
	if (rc < 0)
		stat_add(&ctl->st.retention_errors, 1);
	return rc < 0 ? rc : busy;
}
