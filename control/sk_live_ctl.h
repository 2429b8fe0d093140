/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's side of the live settings (live/sk_live.h): it is
 * the one writer. A change is made whole or not at all: the edit works on
 * a copy (the spare slot, the spare deny buffer), the result is checked,
 * then published by one generation. Each published change is logged (one
 * line, no secret) and appended to the store's event log as an event of
 * type SK_STORE_EV_LIVE (exported like every event).
 *
 * Thread-safety: every function may be called from any thread (the admin
 * API's); changes are serialised by a mutex of their own, never the store
 * write lock while they wait for the lcores.
 */
#ifndef SK_LIVE_CTL_H
#define SK_LIVE_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "sk_control.h"
#include "sk_live.h"

/** What a change is about (the event's request field, the log's what=). */
enum sk_live_kind {
	SK_LIVE_LIMITS = 1, /**< rate limits, per-user limit */
	SK_LIVE_DENY,	    /**< deny lists */
	SK_LIVE_KEYS,	    /**< token keys */
	SK_LIVE_LOG,	    /**< log level */
};

/** Longest the writer waits for every lcore to run on the current generation, ms. */
#define SK_LIVE_CTL_WAIT_MS 2000

/**
 * The edit of one change: change @p s (a copy of the current settings in
 * the spare slot) and, for deny lists, the spare deny buffer of @p z.
 * Return 0, or a negative errno with the bad key in *@p key and a reason
 * in @p err (nothing is published).
 */
typedef int (*sk_live_edit_fn)(struct sk_live_zone *z, struct sk_live_settings *s, void *arg,
			       const char **key, char *err, size_t errlen);

/**
 * sk_control_live_attach - find the dataplane's live block (DPDK
 * secondary). Its absence is not an error: the live routes then answer
 * that live changes are unavailable.
 * @return 0 (found), -ENOENT (none), -EPROTO (not a block of this version).
 */
int sk_control_live_attach(struct sk_control *ctl, char *err, size_t errlen);

/**
 * sk_control_live_set - use @p z (a block in this process: tests, the
 * in-process control plane). Call before any other thread uses @p ctl.
 * @return 0, or -ENOMEM (the mutex).
 */
int sk_control_live_set(struct sk_control *ctl, struct sk_live_zone *z);

/** sk_control_live - the block, or NULL when none is attached. */
struct sk_live_zone *sk_control_live(const struct sk_control *ctl);

/**
 * sk_control_live_change - make one change: wait (at most
 * SK_LIVE_CTL_WAIT_MS) until every lcore runs on the current generation,
 * run @p edit on a copy, check it, publish it, log it and record its event.
 * @param what  a short description for the log and status (no secret)
 * @param key   [out] on -EINVAL, the key refused
 * @return the new generation (> 0), or -ENODEV (no block), -EBUSY (an
 *         lcore did not move on in time: nothing changed, retry), -EINVAL
 *         (refused; @p key and @p err say why), or the edit's error. A
 *         failure to record the event after publishing is logged, not
 *         returned: the change is in effect.
 */
int64_t sk_control_live_change(struct sk_control *ctl, enum sk_live_kind kind, const char *what,
			       sk_live_edit_fn edit, void *arg, const char **key, char *err,
			       size_t errlen);

/** sk_live_kind_name - "limits", "deny", "keys", "log"; "?" otherwise. */
const char *sk_live_kind_name(enum sk_live_kind kind);

#endif /* SK_LIVE_CTL_H */
