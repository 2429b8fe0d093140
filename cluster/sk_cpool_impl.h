/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_cpool_impl.h - what the files of cluster/ share and nobody else sees:
 * the embedded scripts (generated from cluster/lua/ by embed_lua.py), and
 * one Redis connection with its reconnect backoff (sk_cpool_link), used by
 * the client (sk_cpool.c) and the subscriber (sk_cpool_sub.c).
 *
 * Thread-safety: a link is one thread's, like the handle that owns it.
 */
#ifndef SK_CPOOL_IMPL_H
#define SK_CPOOL_IMPL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "sk_cpool.h"

/** The scripts, in the order cluster/meson.build gives them to embed_lua.py. */
enum sk_cpool_script {
	SK_CPOOL_INIT,
	SK_CPOOL_LEASE,
	SK_CPOOL_GIVEBACK,
	SK_CPOOL_SYNC,
	SK_CPOOL_DRY,
	SK_CPOOL_VIEW,
	SK_CPOOL_FORGET,
	SK_CPOOL_RESTOCK,
	SK_CPOOL_NSCRIPTS
};

/** Each script's Lua source: cluster/lua/common.lua + cluster/lua/<name>.lua. */
extern const char *const sk_cpool_lua[SK_CPOOL_NSCRIPTS];
/** Each script's name ("lease", ...), for error texts. */
extern const char *const sk_cpool_lua_names[SK_CPOOL_NSCRIPTS];

/** First and last delay between failed connects (ms). */
#define SK_CPOOL_BACKOFF_MIN_MS 100
#define SK_CPOOL_BACKOFF_MAX_MS 5000
/** Longest key prefix. */
#define SK_CPOOL_PREFIX_MAX 64
/** Room for the last error text (sk_cpool_errstr()). */
#define SK_CPOOL_ERR_MAX 256

/** One Redis connection and when it may be tried again. */
struct sk_cpool_link {
	redisContext *c;	    /**< NULL while down */
	char *host;		    /**< owned copy, or NULL */
	char *unix_path;	    /**< owned copy, or NULL */
	int port;		    /**< TCP port */
	int timeout_ms;		    /**< connect and per-call timeout */
	int backoff_ms;		    /**< the next delay after a failure */
	int64_t next_try_ms;	    /**< no connect before this (monotonic ms) */
	bool up;		    /**< the last call reached Redis */
	char err[SK_CPOOL_ERR_MAX]; /**< the last error, "" if none */
};

/** Nodes of a Redis Cluster one client talks to (the configured one included). */
#define SK_CPOOL_NODES_MAX 16

/**
 * The nodes a client knows and which one serves each hash slot, as last
 * learnt from a MOVED. Node 0 is the configured address; a slot not learnt
 * (or lost, sk_cpool_route_lost()) is asked of node 0, which redirects.
 */
struct sk_cpool_route {
	struct sk_cpool_link node[SK_CPOOL_NODES_MAX];
	unsigned nnodes;
	uint8_t slot_node[SK_CPOOL_SLOTS]; /**< index into node[] */
};

/** sk_cpool_route_init - node 0 from @p cfg's address. 0 or -ENOMEM. */
int sk_cpool_route_init(struct sk_cpool_route *rt, const struct sk_cpool_config *cfg);

/** sk_cpool_route_fini - disconnect every node and free them. */
void sk_cpool_route_fini(struct sk_cpool_route *rt);

/** sk_cpool_route_link - the node to ask first for @p slot. */
struct sk_cpool_link *sk_cpool_route_link(struct sk_cpool_route *rt, uint16_t slot);

/**
 * sk_cpool_route_lost - the node of @p slot failed: ask node 0 next time
 * (after a failover it redirects to the new master).
 */
void sk_cpool_route_lost(struct sk_cpool_route *rt, uint16_t slot);

/**
 * sk_cpool_route_redirect - if @p err (an error reply) is a Redis Cluster
 * redirection ("MOVED <slot> <host>:<port>" or "ASK ..."), the node to
 * send the command to (added, down, if new) in *@p to, and *@p ask true for
 * an ASK (send ASKING first; the slot's route is not changed) or false for
 * a MOVED (the slot's route now points to it). @p from is the node that
 * answered (an empty host means its host).
 * @return 1 (a redirection), 0 (another error), -EPROTO (a redirection
 *         this module cannot parse or follow), -ENOSPC (more than
 *         SK_CPOOL_NODES_MAX nodes), -ENOMEM.
 */
int sk_cpool_route_redirect(struct sk_cpool_route *rt, const char *err,
			    const struct sk_cpool_link *from, struct sk_cpool_link **to, bool *ask);

/** sk_cpool_now_ms - CLOCK_MONOTONIC in ms. */
int64_t sk_cpool_now_ms(void);

/**
 * sk_cpool_config_check - -EINVAL if @p cfg is not usable (no member or a
 * bad one, no unix path and no host/port, timeout <= 0, a prefix that is
 * empty, too long or holds a brace, a blank or a control character), else 0.
 */
int sk_cpool_config_check(const struct sk_cpool_config *cfg);

/**
 * sk_cpool_link_init - a link (down) to @p unix_path if set and not empty,
 * else to @p host : @p port (both copied), with @p timeout_ms per connect
 * and per call. 0 or -ENOMEM.
 */
int sk_cpool_link_init(struct sk_cpool_link *l, const char *host, const char *unix_path, int port,
		       int timeout_ms);

/** sk_cpool_link_fini - disconnect and free the copies. */
void sk_cpool_link_fini(struct sk_cpool_link *l);

/**
 * sk_cpool_link_connect - connect if down and the backoff allows it.
 * @return 1 if connected by this call (the caller loads what it needs and
 *         calls sk_cpool_link_ok() or sk_cpool_link_fail()), 0 if it was up,
 *         -ENOTCONN (in backoff, or the connect failed: backoff doubled),
 *         -ENOMEM.
 */
int sk_cpool_link_connect(struct sk_cpool_link *l);

/** sk_cpool_link_ok - a call reached Redis: up, backoff back to its minimum. */
void sk_cpool_link_ok(struct sk_cpool_link *l);

/**
 * sk_cpool_link_fail - the connection broke or timed out (hiredis' error in
 * its context, or a reply this module cannot use): drop it, schedule the
 * next try, keep the error text.
 * @param err_no  errno right after hiredis failed (EAGAIN: the socket
 *                timeout fired), or 0
 * @return -ETIMEDOUT for a timeout, else -ENOTCONN.
 */
int sk_cpool_link_fail(struct sk_cpool_link *l, int err_no);

/**
 * struct sk_cpool_nopipe - SIGPIPE held back in the calling thread while
 * hiredis writes (it uses write(), not MSG_NOSIGNAL): a Redis that died
 * must not kill the member with SIGPIPE. A SIGPIPE raised meanwhile is
 * consumed; one that was pending before is left alone.
 */
struct sk_cpool_nopipe {
	sigset_t old;
	bool pending;
};

/** sk_cpool_nopipe_begin - block SIGPIPE in this thread. */
void sk_cpool_nopipe_begin(struct sk_cpool_nopipe *np);

/** sk_cpool_nopipe_end - consume our SIGPIPE, restore the mask. */
void sk_cpool_nopipe_end(struct sk_cpool_nopipe *np);

/** sk_cpool_link_seterr - keep printf-style error text in @p l->err. */
void sk_cpool_link_seterr(struct sk_cpool_link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* SK_CPOOL_IMPL_H */
