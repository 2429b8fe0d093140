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
	SK_CPOOL_CLAIM,
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
/** Longest Redis password (bytes) and ACL user name (chars). */
#define SK_CPOOL_PASSWORD_MAX 512
#define SK_CPOOL_USER_MAX     64
/** Room to read a password file into: the password, CR LF, one more byte. */
#define SK_CPOOL_PASSWORD_BUF (SK_CPOOL_PASSWORD_MAX + 3)

/** One Redis connection and when it may be tried again. */
struct sk_cpool_link {
	redisContext *c;     /**< NULL while down */
	char *host;	     /**< owned copy, or NULL */
	char *unix_path;     /**< owned copy, or NULL */
	int port;	     /**< TCP port */
	int timeout_ms;	     /**< connect and per-call timeout */
	int backoff_ms;	     /**< the next delay after a failure */
	int64_t next_try_ms; /**< no connect before this (monotonic ms) */
	bool up;	     /**< the last call reached Redis */
	/** Why the last connect was refused after Redis answered: 0, or
	 *  -EKEYREJECTED, -EPERM, -EPROTO (sk_cpool_check()). */
	int refused;
	char *user;		    /**< ACL user (owned), NULL = AUTH <password> */
	char *pass;		    /**< password (owned, wiped), NULL = no AUTH */
	size_t passlen;		    /**< bytes at pass */
	char *pass_file;	    /**< where it came from (owned), for errors */
	char err[SK_CPOOL_ERR_MAX]; /**< the last error, "" if none */
};

/** Nodes of a Redis Cluster one client talks to (the configured one included). */
#define SK_CPOOL_NODES_MAX 16

/**
 * The nodes a client knows and which one serves each hash slot, as last
 * learnt from a MOVED. Node 0 is the configured address; a slot not learnt
 * (or lost, sk_cpool_route_lost()) is asked of node 0, which redirects.
 * The table ages: a node that failed and that no slot points to any more
 * is freed (its entry reused), and a new node when the table is full
 * takes the place of another (sk_cpool_route_redirect()), so a cluster
 * whose nodes come and go never runs out of entries. A free entry i > 0
 * has neither host nor unix_path.
 */
struct sk_cpool_route {
	struct sk_cpool_link node[SK_CPOOL_NODES_MAX];
	unsigned nnodes;
	uint8_t slot_node[SK_CPOOL_SLOTS]; /**< index into node[] */
	uint64_t clock;			   /**< + 1 at each use of a node */
	uint64_t used[SK_CPOOL_NODES_MAX]; /**< clock at each node's last use */
};

/**
 * sk_cpool_route_init - node 0 from @p cfg's address and AUTH (its
 * password file read now: sk_cpool_link_init_cfg()). 0, -ENOMEM, or
 * sk_cpool_read_password()'s errors.
 */
int sk_cpool_route_init(struct sk_cpool_route *rt, const struct sk_cpool_config *cfg);

/** sk_cpool_route_fini - disconnect every node and free them. */
void sk_cpool_route_fini(struct sk_cpool_route *rt);

/** sk_cpool_route_link - the node to ask first for @p slot (marked used). */
struct sk_cpool_link *sk_cpool_route_link(struct sk_cpool_route *rt, uint16_t slot);

/**
 * sk_cpool_route_lost - the node of @p slot failed: ask node 0 next time
 * (after a failover it redirects to the new master). If that node is down
 * and no other slot points to it, it is freed (its last error text stays
 * readable until its entry is reused by a redirection).
 */
void sk_cpool_route_lost(struct sk_cpool_route *rt, uint16_t slot);

/**
 * sk_cpool_route_redirect - if @p err (an error reply) is a Redis Cluster
 * redirection ("MOVED <slot> <host>:<port>" or "ASK ..."), the node to
 * send the command to (added, down, if new) in *@p to, and *@p ask true for
 * an ASK (send ASKING first; the slot's route is not changed) or false for
 * a MOVED (the slot's route now points to it). @p from is the node that
 * answered (an empty host means its host); it stays in the table.
 * A new node takes a free entry; when there is none (SK_CPOOL_NODES_MAX
 * nodes), it takes the place of another node but node 0 and @p from: a
 * down one that no slot points to, else one that no slot points to, else a
 * down one, else the one the fewest slots point to (among equals, the one
 * used least recently); that node is disconnected and its slots are sent
 * back to node 0.
 * @return 1 (a redirection), 0 (another error), -EPROTO (a redirection
 *         this module cannot parse or follow), -ENOMEM.
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
 * sk_cpool_read_password - the Redis password in file @p path: its bytes
 * minus one trailing newline ("\n" or "\r\n"), 1..SK_CPOOL_PASSWORD_MAX,
 * no NUL, CR or LF inside. The file must be a regular file that neither
 * its group nor others may read or write (chmod 600 or 400).
 * @param buf     SK_CPOOL_PASSWORD_BUF bytes: the password, NUL-ended;
 *                wiped on error; the caller wipes it after use
 * @param len     [out] the password's bytes
 * @param err     on error, one line naming the file and the problem (never
 *                its contents); may be NULL
 * @return 0, -errno of open()/fstat()/read() (-ENOENT, -EACCES, -EIO...),
 *         -EPERM (group or others may access it, or not a regular file),
 *         -EINVAL (empty, too long, or a NUL, CR or LF inside).
 */
int sk_cpool_read_password(const char *path, char *buf, size_t *len, char *err, size_t errlen);

/**
 * sk_cpool_link_auth - @p l will AUTH with @p user (NULL: the default
 * user) and the @p len bytes at @p pass (copied; wiped on fini), read from
 * @p file (copied, for error texts). 0 or -ENOMEM.
 */
int sk_cpool_link_auth(struct sk_cpool_link *l, const char *user, const char *pass, size_t len,
		       const char *file);

/**
 * sk_cpool_link_init_cfg - sk_cpool_link_init() of @p cfg's address, then
 * sk_cpool_link_auth() of its user and the password read from its
 * password file (if set). 0, -ENOMEM, -EINVAL (a bad user name), or
 * sk_cpool_read_password()'s errors (words in @p err; may be NULL). On
 * error the link is finished.
 */
int sk_cpool_link_init_cfg(struct sk_cpool_link *l, const struct sk_cpool_config *cfg, char *err,
			   size_t errlen);

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
 * sk_cpool_link_connect - connect if down and the backoff allows it; on a
 * new connection: AUTH (if the link has a password), then the checks of
 * this Redis: its maxmemory-policy is noeviction (CONFIG GET, else INFO's
 * maxmemory_policy) and INFO has a master_replid (the fencing's boot id).
 * A refusal there drops the connection like a failed connect, its reason
 * in l->refused and the words in l->err.
 * @return 1 if connected by this call (the caller loads what it needs and
 *         calls sk_cpool_link_ok() or sk_cpool_link_fail()), 0 if it was up,
 *         -ENOTCONN (in backoff, the connect failed, or Redis was refused:
 *         backoff doubled), -ETIMEDOUT (no answer to the checks in time:
 *         backoff doubled), -ENOMEM.
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
