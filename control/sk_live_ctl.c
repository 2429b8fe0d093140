/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_live_ctl.c - the control plane as the writer of the live settings
 * (see sk_live_ctl.h): attach, one change at a time, its log line and its
 * event.
 */
#include "sk_live_ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <rte_memzone.h>

#include "sk_control_impl.h"
#include "sk_logfmt.h"

const char *
sk_live_kind_name(enum sk_live_kind kind)
{
	static const char *const names[] = {
		[SK_LIVE_LIMITS] = "limits",
		[SK_LIVE_DENY] = "deny",
		[SK_LIVE_KEYS] = "keys",
		[SK_LIVE_LOG] = "log",
	};
	return (unsigned)kind < SK_ARRAY_SIZE(names) && names[kind] != NULL ? names[kind] : "?";
}

int
sk_control_live_set(struct sk_control *ctl, struct sk_live_zone *z)
{
	if (pthread_mutex_init(&ctl->live_lock, NULL) != 0)
		return -ENOMEM;
	ctl->live_lock_ok = true;
	ctl->live = z;
	return 0;
}

int
sk_control_live_attach(struct sk_control *ctl, char *err, size_t errlen)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SK_LIVE_MEMZONE);
	struct sk_live_zone *z;

	if (mz == NULL) {
		sk_set_err(err, errlen, "control: no memzone '%s': live changes unavailable",
			   SK_LIVE_MEMZONE);
		return -ENOENT;
	}
	z = sk_live_attach(mz->addr, mz->len, err, errlen);
	if (z == NULL)
		return -EPROTO;
	return sk_control_live_set(ctl, z);
}

struct sk_live_zone *
sk_control_live(const struct sk_control *ctl)
{
	return ctl->live;
}

/* quiescent - every lcore runs on the published generation (sk_control_wait_ms()). */
static bool
quiescent(const void *z)
{
	return sk_live_quiescent(z);
}

/* record - the event of generation @gen (the change is in effect already). */
static void
record(struct sk_control *ctl, enum sk_live_kind kind, uint64_t gen, int64_t now_ns)
{
	struct sk_store_event ev = {.type = SK_STORE_EV_LIVE, .units = gen, .time_ns = now_ns};
	int rc;

	snprintf(ev.request, sizeof(ev.request), "%s", sk_live_kind_name(kind));
	lock(ctl);
	rc = sk_store_event_append(ctl->store, &ev);
	unlock(ctl);
	if (rc != 0)
		sk_logf(SK_LOG_WARN, "live", "gen=%" PRIu64 " msg=\"event not recorded: %s\"", gen,
			strerror(-rc));
}

int64_t
sk_control_live_change(struct sk_control *ctl, enum sk_live_kind kind, const char *what,
		       sk_live_edit_fn edit, void *arg, const char **key, char *err, size_t errlen)
{
	struct sk_live_settings *s;
	int64_t gen, now_ns;
	int rc;

	*key = NULL;
	if (ctl->live == NULL) {
		sk_set_err(err, errlen, "live changes unavailable: no live settings block");
		return -ENODEV;
	}
	pthread_mutex_lock(&ctl->live_lock);
	if (!sk_control_wait_ms(quiescent, ctl->live, SK_LIVE_CTL_WAIT_MS) ||
	    (s = sk_live_begin(ctl->live)) == NULL) {
		pthread_mutex_unlock(&ctl->live_lock);
		sk_set_err(err, errlen, "an lcore has not applied the previous change yet");
		return -EBUSY;
	}
	rc = edit(ctl->live, s, arg, key, err, errlen);
	if (rc != 0) {
		pthread_mutex_unlock(&ctl->live_lock);
		return rc;
	}
	now_ns = sk_clock_ns(CLOCK_REALTIME);
	gen = sk_live_publish(ctl->live, s, what, now_ns, key);
	pthread_mutex_unlock(&ctl->live_lock);
	if (gen < 0) {
		sk_set_err(err, errlen, "%s: out of range", *key != NULL ? *key : "?");
		return gen;
	}
	sk_logf(SK_LOG_NOTICE, "live", "gen=%" PRId64 " kind=%s what=\"%s\"", gen,
		sk_live_kind_name(kind), what);
	record(ctl, kind, (uint64_t)gen, now_ns);
	return gen;
}
