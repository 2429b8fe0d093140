/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The cluster pool: one member's client of the Redis side of docs/cluster.md
 * (the global pool of an item, the members' leases, fencing after a Redis
 * that lost writes, the sold-out flag and its broadcast).
 *
 * Every state change is one atomic Lua script (EVALSHA; the scripts are
 * loaded at connect and again after a NOSCRIPT). Every key of item I
 * carries the hash tag {I}, so one item lives on one Redis Cluster slot.
 * Redis Cluster: the configured address is one node (any master); a call
 * on an item follows the MOVED and ASK redirections it gets (at most 5 per
 * call) and remembers each slot's node, so the next call on the item goes
 * straight there. A node that fails sends its slots back to the configured
 * one, which redirects to the new master. The client remembers at most 16
 * nodes: one that failed and that no slot points to is forgotten, and a
 * new one when 16 are known takes the place of the least useful (a
 * cluster whose nodes come and go over months keeps working). The
 * sold-out channel works as is: Redis Cluster delivers a PUBLISH to the
 * subscribers of every node.
 *
 * This module talks to Redis only: what the member holds durably (its
 * LMDB) is the caller's, who must record an op as pending before calling
 * sk_cpool_lease() / sk_cpool_giveback() and resend it with the same
 * @p seq after a crash (the scripts replay the recorded result).
 *
 * Thread-safety: a struct sk_cpool is one blocking Redis connection; use
 * it from one thread at a time. Calls block for at most the configured
 * timeout. Not for the dataplane.
 *
 * Every call on an item but sk_cpool_init() returns -ENOENT when the item
 * has no pool (sk_cpool_init() first); lease, give back, sync and dry also
 * when this member is not one of the item's members.
 *
 * Errors shared by every call on a connection:
 *   -ENOTCONN  Redis is down or the connection broke; the op may or may not
 *              have been applied (resend it with the same seq once up);
 *              the next call reconnects, not more often than the backoff
 *              (100 ms doubling to 5 s) allows.
 *              A Redis that refuses the AUTH, whose maxmemory-policy is
 *              not noeviction, or whose INFO has no master_replid is
 *              treated as down too (the words in sk_cpool_errstr();
 *              sk_cpool_check() tells them apart at start)
 *   -ETIMEDOUT no answer within the timeout (same meaning as -ENOTCONN)
 *   -EPROTO    Redis answered something this module does not understand
 *              (also: more than 5 redirections; a script that cannot
 *              fence, "NOFENCE": INFO replication has no master_replid)
 *   -ENOMEM    out of memory
 *
 * Redis AUTH: with a password file in the config, every connection (the
 * client's to each Redis Cluster node, the subscriber's, and each
 * reconnection) sends AUTH [user] password first. The password is read
 * from the file at open, kept in memory only (wiped at close), never put
 * in an error text.
 */
#ifndef SK_CPOOL_H
#define SK_CPOOL_H

#include <stdbool.h>
#include <stdint.h>

/** Longest member id (chars, [a-z0-9_-]). */
#define SK_CPOOL_MEMBER_MAX 32
/** Most members in one cluster. */
#define SK_CPOOL_MEMBERS_MAX 16
/** Most units of one item (2^53: the scripts' Lua numbers are doubles). */
#define SK_CPOOL_UNITS_MAX (UINT64_C(1) << 53)

/** Hash slots of a Redis Cluster. */
#define SK_CPOOL_SLOTS 16384

/** How to reach Redis, and who we are. */
struct sk_cpool_config {
	const char *host;      /**< e.g. "127.0.0.1"; ignored if unix_path is set */
	int port;	       /**< TCP port */
	const char *unix_path; /**< unix socket path, or NULL */
	const char *prefix;    /**< key prefix, NULL = "seckill" */
	const char *member;    /**< this member's id (copied) */
	int timeout_ms;	       /**< per call, > 0 */
	/** A file holding the Redis password (sk_cpool_check() says what it
	 *  may be), read at open; NULL = no AUTH. */
	const char *password_file;
	/** The Redis ACL user (AUTH user password), 1..64 printable chars
	 *  without a blank; NULL = the default user (AUTH password). Needs
	 *  password_file. */
	const char *user;
};

struct sk_cpool;

/** The Redis side of one item (sk_cpool_view()). */
struct sk_cpool_view {
	uint64_t total;	  /**< units of the sale */
	uint64_t free;	  /**< units not leased */
	uint64_t epoch;	  /**< fencing epoch */
	bool fenced;	  /**< no grant until every member synced @c epoch */
	bool sold_out;	  /**< sold out everywhere */
	uint64_t version; /**< sold-out version (+1 on each flip) */
	int64_t want_ms;  /**< last "dry, give back" call (ms), 0 if none */
	uint32_t members; /**< entries used in the arrays below */
	uint32_t active;  /**< member[0..active) are the members; the rest were
			       forgotten (their units still counted in held[]) */
	char member[SK_CPOOL_MEMBERS_MAX][SK_CPOOL_MEMBER_MAX + 1];
	uint64_t held[SK_CPOOL_MEMBERS_MAX];   /**< leases by member */
	uint64_t synced[SK_CPOOL_MEMBERS_MAX]; /**< epoch of each member's last sync */
};

/**
 * sk_cpool_member_valid - true if @p id is 1..SK_CPOOL_MEMBER_MAX chars of
 * [a-z0-9_-]. Pure.
 */
bool sk_cpool_member_valid(const char *id);

/**
 * sk_cpool_slot - the Redis Cluster hash slot of item @p item's keys: the
 * CRC16 (XMODEM) of its hash tag, the decimal item id, mod SK_CPOOL_SLOTS
 * (what CLUSTER KEYSLOT says of "seckill:{<item>}:pool"). Pure.
 */
uint16_t sk_cpool_slot(uint32_t item);

/**
 * sk_cpool_key_slot - the Redis Cluster hash slot of key @p key (a C
 * string): CRC16 of its hash tag (what is between the first '{' and the
 * next '}', if not empty), else of the whole key, mod SK_CPOOL_SLOTS. Pure.
 */
uint16_t sk_cpool_key_slot(const char *key);

/**
 * sk_cpool_check - what a member does at start: read @p cfg's password
 * file, connect once to its address, AUTH, and check this Redis: its
 * maxmemory-policy must be noeviction (CONFIG GET maxmemory-policy; where
 * CONFIG is disabled, renamed or not allowed to the user: INFO memory's
 * maxmemory_policy), because an evicted ops hash would let a resent give
 * back be applied twice (an oversell); its INFO replication must have a
 * master_replid (the fencing's boot id, new at each restart and
 * promotion). Blocks for at most a few times the timeout. Thread-safe.
 *
 * The password file: a regular file that neither its group nor others may
 * read or write (chmod 600 or 400; owner any), holding the password (1..512
 * bytes, no NUL/CR/LF) and at most one trailing newline.
 *
 * @param err  [out] on error one line naming the cause (the file, Redis'
 *             words, the policy found; never the password); may be NULL
 * @return 0; -EINVAL (@p cfg, see sk_cpool_open(), or the password file's
 *         contents); -ENOENT, -EACCES... (the password file cannot be
 *         read); -EPERM (the password file is open to group or others, or
 *         Redis' maxmemory-policy is not noeviction or cannot be read);
 *         -EKEYREJECTED (Redis refused the AUTH, or needs one and none was
 *         configured); -EPROTO (INFO has no master_replid);
 *         -ENOTCONN/-ETIMEDOUT (Redis did not answer: nothing known);
 *         -ENOMEM.
 */
int sk_cpool_check(const struct sk_cpool_config *cfg, char *err, size_t errlen);

/**
 * sk_cpool_open - a client for @p cfg. Does not need Redis to be up: the
 * first call connects (AUTH, the checks of sk_cpool_check(), and the
 * scripts loaded); reads the password file now.
 * @param out  [out] the client, owned by the caller (sk_cpool_close())
 * @return 0, -EINVAL (bad member id, no host/port/unix path, timeout <= 0,
 *         a prefix that is empty, over 64 chars, or holds a brace, a blank
 *         or a control character, a bad user, a user without a password
 *         file), -ENOMEM, or the password file's errors (sk_cpool_check()).
 */
int sk_cpool_open(struct sk_cpool **out, const struct sk_cpool_config *cfg);

/** sk_cpool_close - disconnect and free @p p (NULL is fine). */
void sk_cpool_close(struct sk_cpool *p);

/** sk_cpool_up - true if the last call reached Redis. */
bool sk_cpool_up(const struct sk_cpool *p);

/**
 * sk_cpool_calls - the commands @p p has sent to Redis since it was opened
 * (scripts, their SCRIPT LOADs at each connect, ASKING; a command resent
 * after a redirection or a broken connection counts again): the cost of a
 * member's policy in Redis round trips. Same thread rules as every call.
 */
uint64_t sk_cpool_calls(const struct sk_cpool *p);

/**
 * sk_cpool_errstr - the text of the last error of @p p (Redis' or the
 * script's words, e.g. "lease: STALE op 3 of a is below its last op 5"), ""
 * after a call that succeeded. Valid until the next call on @p p; for a
 * log line.
 */
const char *sk_cpool_errstr(const struct sk_cpool *p);

/**
 * sk_cpool_init - create item @p item's pool with @p total units if Redis
 * lacks it (fenced at epoch 1: every member syncs before the first grant),
 * and (re)add @p members. Idempotent.
 * @return 0, -EEXIST (the pool exists with another total), -EINVAL (0
 *         members, more than SK_CPOOL_MEMBERS_MAX, a bad id, total 0 or
 *         above SK_CPOOL_UNITS_MAX), or a shared error.
 */
int sk_cpool_init(struct sk_cpool *p, uint32_t item, uint64_t total, const char *const *members,
		  uint32_t n);

/** A member forgotten from an item, and the units it held then. */
struct sk_cpool_forgotten {
	const char *id; /**< a valid member id */
	uint64_t held;	/**< at most SK_CPOOL_UNITS_MAX */
};

/**
 * sk_cpool_init_forgotten - sk_cpool_init(), and the @p nf members of
 * @p forgotten (what this member's LMDB keeps of each sk_cpool_forget())
 * stay forgotten: a pool created now counts their units in its leases
 * (a pool made again after Redis lost everything still counts them as
 * gone); none of them is added to the members; one that a fenced pool
 * still has as a member (Redis came back from before the forget) is
 * forgotten again, and the rebuild tried. Redis also never re-adds a
 * member it counts as forgotten (in the leases, not a member), whoever
 * names it. Idempotent.
 * @return as sk_cpool_init(); -EINVAL also for a bad forgotten id, more
 *         than SK_CPOOL_MEMBERS_MAX of them, or a held above
 *         SK_CPOOL_UNITS_MAX.
 */
int sk_cpool_init_forgotten(struct sk_cpool *p, uint32_t item, uint64_t total,
			    const char *const *members, uint32_t n,
			    const struct sk_cpool_forgotten *forgotten, uint32_t nf);

/**
 * sk_cpool_lease - op @p seq of this member: lease up to @p want units.
 * @param granted  [out] units granted (0: the pool is empty; the script then
 *                 asked the others to give back)
 * @return 0 (also when the op was applied before: the recorded result is
 *         replayed, even while fenced), -EAGAIN (fenced: nothing applied;
 *         sync first), -ESTALE (@p seq is lower than this member's last op),
 *         -EEXIST (@p seq was used by another op kind or size), -ENOENT (no
 *         pool, or not a member), -EINVAL (@p want or @p seq 0), or a
 *         shared error. @p want above SK_CPOOL_UNITS_MAX counts as that.
 */
int sk_cpool_lease(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t want,
		   uint64_t *granted);

/**
 * sk_cpool_giveback - op @p seq of this member: give @p units back to the
 * pool (they must already be off local sale). Reopens a sold-out item
 * (flag cleared, version + 1, published).
 * @return 0 (applied now or before), -EAGAIN (fenced), -ESTALE, -EEXIST,
 *         -ENOENT, -ERANGE (more than the member holds: nothing applied),
 *         -EINVAL, or a shared error.
 */
int sk_cpool_giveback(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t units);

/**
 * sk_cpool_sync - while fenced at @p epoch: this member holds @p held units
 * (its durable word, pending give-backs included). When every member has
 * synced @p epoch the pool is rebuilt (free = total - sum held) and unfenced.
 * A sync of the current epoch while not fenced changes nothing (0,
 * unfenced). A fence also voids every dry report (Redis may have lost
 * one): after its sync, a member whose local stock is empty reports it
 * again with sk_cpool_dry() (the item is not declared sold out until every
 * member with a lease has).
 * @param unfenced  [out] true if the item is not fenced after the call
 * @return 0, -ESTALE (@p epoch is not the current one: read the view and
 *         sync again), -EOVERFLOW (the members hold more than total, or
 *         @p held is above SK_CPOOL_UNITS_MAX: the item stays fenced; an
 *         alarm; the marks stay, and the next sync, restock or forget
 *         tries the rebuild again),
 *         -ENOENT, or a shared error.
 */
int sk_cpool_sync(struct sk_cpool *p, uint32_t item, uint64_t epoch, uint64_t held, bool *unfenced);

/**
 * sk_cpool_dry - this member has @p local_units unsold units of @p item
 * (called when its local stock runs out, when units come back, and after
 * each sync). Sets the sold-out flag (publish) once the pool is empty, not
 * fenced, and every member holding a lease reported 0 since its last grant;
 * clears it (publish) when units are back (@p local_units > 0, or a give
 * back). A lease of g > 0 voids the member's dry report.
 * @param sold_out  [out] the flag after the call; may be NULL
 * @param version   [out] its version; may be NULL
 * @return 0, -ENOENT, or a shared error.
 */
int sk_cpool_dry(struct sk_cpool *p, uint32_t item, uint64_t local_units, bool *sold_out,
		 uint64_t *version);

/**
 * sk_cpool_view - read item @p item's pool (for seckillctl and the
 * member's own decisions). Fences the item first if Redis restarted.
 * member[] lists the members, then anyone else still counted in the
 * leases (a forgotten member: its units stay counted), so that
 * total == free + sum(held) when not fenced.
 * @return 0, -ENOENT, -ENOSPC (more than SK_CPOOL_MEMBERS_MAX members), or
 *         a shared error.
 */
int sk_cpool_view(struct sk_cpool *p, uint32_t item, struct sk_cpool_view *v);

/**
 * sk_cpool_forget - the operator declares member @p member gone for good,
 * holding @p held units (its last word): counts as its sync for the
 * current epoch, and it is removed from the members; its lease becomes
 * @p held (those units stay counted). Not fenced, free changes by the
 * difference between its lease and @p held.
 * @return 0, -ENOENT (no pool or no such member), -EINVAL (a bad id),
 *         -EOVERFLOW (not fenced: free would go below 0, nothing applied;
 *         fenced: applied, but the members hold more than total and the
 *         item stays fenced), or a shared error.
 */
int sk_cpool_forget(struct sk_cpool *p, uint32_t item, const char *member, uint64_t held);

/**
 * sk_cpool_restock - the operator adds @p units to item @p item's sale
 * (request @p request_id, any member may send it): total and free grow
 * (only total while fenced, and the rebuild is tried at once: a pool
 * fenced because the members held more than the total is unfenced by a
 * restock that covers the difference, once every member synced), a sold-out
 * item reopens (published). The pool's base total, which sk_cpool_init()
 * compares, stays. Only Redis keeps it: a Redis that loses the write
 * loses the units (never sells them twice); the same request sent again
 * then applies it again.
 * @param repeat  [out] true if @p request_id was applied before (nothing
 *                changed); may be NULL
 * @return 0, -EEXIST (@p request_id was used with other units), -EINVAL
 *         (@p units or @p request_id 0, @p units above
 *         SK_CPOOL_UNITS_MAX), -EOVERFLOW (the total would go above
 *         SK_CPOOL_UNITS_MAX: nothing applied), -ENOENT (no pool), or a
 *         shared error.
 */
int sk_cpool_restock(struct sk_cpool *p, uint32_t item, uint64_t request_id, uint64_t units,
		     bool *repeat);

/**
 * sk_cpool_get_units - read key @p key (any key, e.g. the "stock:{sku}" a
 * shop keeps its stock in; on Redis Cluster, on the node of its slot) as a
 * count of units: a decimal integer 1..SK_CPOOL_UNITS_MAX.
 * @param units  [out] the count
 * @return 0, -ENOENT (no such key), -EINVAL (@p key empty, or its value is
 *         not such a count: *@p units untouched), -EPROTO (not a string,
 *         e.g. a hash: the WRONGTYPE text in sk_cpool_errstr()), or a
 *         shared error.
 */
int sk_cpool_get_units(struct sk_cpool *p, const char *key, uint64_t *units);

/** What Redis says of a member's number (sk_cpool_claim()). */
struct sk_cpool_claim {
	bool fresh; /**< claimed by this call (false: held already, or refused) */
	/** The member that held the number asked before the call, "" if none. */
	char holder[SK_CPOOL_MEMBER_MAX + 1];
	uint32_t held; /**< the number this member held before the call, 0 if none */
};

/**
 * sk_cpool_claim - this member claims @p number, the member number its
 * order ids carry (its position in the members' list, 1..
 * SK_CPOOL_MEMBERS_MAX), in the hash "<prefix>:member_numbers" (fields
 * "number:<n>" -> id and "member:<id>" -> n), in one script: written when
 * neither is taken, nothing written when both already say so (a restart:
 * idempotent), refused when @p number is another member's or this member
 * holds another number (two members would mint the same order ids). The
 * key has no hash tag: on Redis Cluster it lives on the node of its own
 * slot, reached like any key (MOVED/ASK followed). A Redis that lost the
 * hash (FLUSHALL, a failover that lost the write) forgets the claims: the
 * caller claims again after a reconnect, a fence or a lost pool.
 * @param out  [out] what Redis held before (on 0 and on -EEXIST); may be NULL
 * @return 0 (claimed now or before), -EEXIST (refused, nothing written: the
 *         words, naming both ids and the number, in sk_cpool_errstr()),
 *         -EINVAL (@p number 0 or above SK_CPOOL_MEMBERS_MAX), or a shared
 *         error.
 */
int sk_cpool_claim(struct sk_cpool *p, uint32_t number, struct sk_cpool_claim *out);

/** What a message of the channels says (cluster/lua/common.lua). */
enum sk_cpool_event_kind {
	/** <prefix>:soldout: the item's sold-out flag flipped (version +1). */
	SK_CPOOL_EV_FLAG,
	/** <prefix>:pool: the item's free units crossed zero (emptied, or
	 *  units again), or a member asked and got none (want). A hint for
	 *  the members to look again: the keys stay the truth
	 *  (sk_cpool_view()). */
	SK_CPOOL_EV_POOL,
};

/** One message of the channels. */
struct sk_cpool_event {
	enum sk_cpool_event_kind kind;
	uint32_t item;
	bool sold_out;	  /**< FLAG: the new flag */
	uint64_t version; /**< FLAG: its version */
	uint64_t free;	  /**< POOL: the pool's free units */
	bool want;	  /**< POOL: a member asked for units and got none */
	/** Redis's clock when it was sent (TIME, us since the epoch); 0 if
	 *  the message did not carry it. Against the receiver's
	 *  CLOCK_REALTIME it gives the delivery delay (same host, or clocks
	 *  kept in step). */
	int64_t at_us;
};

struct sk_cpool_sub;

/**
 * sk_cpool_sub_open - a subscriber of the sold-out and the pool channel
 * (its own connection, for one thread). Connects on the first poll (AUTH
 * and the checks of sk_cpool_check() at each connect).
 * @return 0, -EINVAL, -ENOMEM, or the password file's errors.
 */
int sk_cpool_sub_open(struct sk_cpool_sub **out, const struct sk_cpool_config *cfg);

/** sk_cpool_sub_close - disconnect and free (NULL is fine). */
void sk_cpool_sub_close(struct sk_cpool_sub *s);

/** sk_cpool_sub_errstr - like sk_cpool_errstr(), for the subscriber. */
const char *sk_cpool_sub_errstr(const struct sk_cpool_sub *s);

/**
 * sk_cpool_sub_poll - wait up to @p timeout_ms for broadcasts and call
 * @p cb for each (in order of arrival); returns as soon as some were
 * delivered. After a (re)connect the caller must read the state keys
 * again (a broadcast sent while down is lost; the keys are not):
 * @p resubscribed tells it, and the call returns right after subscribing.
 * While down it waits for the backoff (within @p timeout_ms) before it
 * reconnects, so a loop of polls does not spin. A message on the channels
 * that is not one of this module's is skipped.
 * @param resubscribed  [out] may be NULL
 * @return the number of events delivered (>= 0), or a shared error (the
 *         next poll reconnects within the backoff).
 */
int sk_cpool_sub_poll(struct sk_cpool_sub *s, int timeout_ms,
		      void (*cb)(const struct sk_cpool_event *ev, void *arg), void *arg,
		      bool *resubscribed);

#endif /* SK_CPOOL_H */
