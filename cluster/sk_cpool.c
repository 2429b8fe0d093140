/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_cpool.c - one member's client of the cluster pool (docs/cluster.md):
 * the scripts loaded at connect (SCRIPT LOAD) and called with EVALSHA
 * (loaded again after a NOSCRIPT), their replies parsed, their errors
 * mapped to the errnos of sk_cpool.h.
 *
 * Every script gets the same seven keys of the item and the same first
 * three arguments (key prefix, item, member): see cluster/lua/common.lua.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_cpool_impl.h"

#define NKEYS	 7
#define KEY_MAX	 (SK_CPOOL_PREFIX_MAX + 32)
#define ARGS_MAX (3 + NKEYS + 3 + 2 + 2 * SK_CPOOL_MEMBERS_MAX)

/* Most redirections followed by one call (a slot being migrated: an ASK,
 * then a MOVED once it is done, with room for a failover meanwhile). */
#define REDIRECTS_MAX 5

struct sk_cpool {
	struct sk_cpool_route rt;   /**< node 0: the configured address */
	struct sk_cpool_link *last; /**< the node of the last call */
	uint64_t calls;		    /**< commands sent */
	char prefix[SK_CPOOL_PREFIX_MAX + 1];
	char member[SK_CPOOL_MEMBER_MAX + 1];
	char sha[SK_CPOOL_NSCRIPTS][41]; /**< SHA1 of each script: the same on every node */
};

/* ------------------------------------------------------------ lifecycle */

int
sk_cpool_open(struct sk_cpool **out, const struct sk_cpool_config *cfg)
{
	struct sk_cpool *p;
	int rc;

	*out = NULL;
	rc = sk_cpool_config_check(cfg);
	if (rc != 0)
		return rc;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	rc = sk_cpool_route_init(&p->rt, cfg);
	if (rc != 0) {
		sk_cpool_close(p);
		return rc;
	}
	p->last = &p->rt.node[0];
	snprintf(p->prefix, sizeof(p->prefix), "%s", cfg->prefix != NULL ? cfg->prefix : "seckill");
	snprintf(p->member, sizeof(p->member), "%s", cfg->member);
	*out = p;
	return 0;
}

void
sk_cpool_close(struct sk_cpool *p)
{
	if (p == NULL)
		return;
	sk_cpool_route_fini(&p->rt);
	free(p);
}

bool
sk_cpool_up(const struct sk_cpool *p)
{
	return p->last->up;
}

const char *
sk_cpool_errstr(const struct sk_cpool *p)
{
	return p->last->err;
}

uint64_t
sk_cpool_calls(const struct sk_cpool *p)
{
	return p->calls;
}

/* --------------------------------------------------------- the scripts */

/* load: SCRIPT LOAD script @i on node @l, keep its SHA1. */
static int
load(struct sk_cpool *p, struct sk_cpool_link *l, enum sk_cpool_script i)
{
	redisReply *r = redisCommand(l->c, "SCRIPT LOAD %s", sk_cpool_lua[i]);
	int e = errno;

	p->calls++;
	if (r == NULL)
		return sk_cpool_link_fail(l, e);
	if (r->type != REDIS_REPLY_STRING || r->len != 40) {
		sk_cpool_link_seterr(l, "SCRIPT LOAD %s: %s", sk_cpool_lua_names[i],
				     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		freeReplyObject(r);
		return sk_cpool_link_fail(l, 0);
	}
	memcpy(p->sha[i], r->str, 40);
	p->sha[i][40] = '\0';
	freeReplyObject(r);
	return 0;
}

/* ensure: node @l connected with every script loaded (1 if connected just
 * now, 0 if it was), or why not. */
static int
ensure(struct sk_cpool *p, struct sk_cpool_link *l)
{
	int rc = sk_cpool_link_connect(l);

	if (rc <= 0)
		return rc;
	for (int i = 0; i < SK_CPOOL_NSCRIPTS; i++) {
		rc = load(p, l, (enum sk_cpool_script)i);
		if (rc != 0)
			return rc;
	}
	sk_cpool_link_ok(l);
	return 1;
}

/* asking: ASKING on node @l, so that it serves the next command for a
 * slot it is importing. 0 or a shared error. */
static int
asking(struct sk_cpool *p, struct sk_cpool_link *l)
{
	redisReply *r = redisCommand(l->c, "ASKING");
	int e = errno, rc = 0;

	p->calls++;
	if (r == NULL)
		return sk_cpool_link_fail(l, e);
	if (r->type != REDIS_REPLY_STATUS) {
		sk_cpool_link_seterr(l, "ASKING: %s",
				     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		rc = -EPROTO;
	}
	freeReplyObject(r);
	return rc;
}

/* The first word of a script's error, and its errno. */
static const struct {
	const char *word;
	int err;
} errmap[] = {
	{"FENCED", -EAGAIN},	 {"STALE", -ESTALE},	{"EPOCH", -ESTALE},
	{"SEQ", -EEXIST},	 {"TOTAL", -EEXIST},	{"NOPOOL", -ENOENT},
	{"NOMEMBER", -ENOENT},	 {"HELD", -ERANGE},	{"OVERSOLD", -EOVERFLOW},
	{"LOADING", -ENOTCONN},	 {"BUSY", -ENOTCONN},	{"MASTERDOWN", -ENOTCONN},
	{"OOM", -ENOMEM},	 {"LIMIT", -EOVERFLOW}, {"CLUSTERDOWN", -ENOTCONN},
	{"TRYAGAIN", -ENOTCONN},
};

static int
map_error(const char *s)
{
	for (size_t i = 0; i < sizeof(errmap) / sizeof(errmap[0]); i++) {
		size_t n = strlen(errmap[i].word);

		if (strncmp(s, errmap[i].word, n) == 0 && (s[n] == ' ' || s[n] == '\0'))
			return errmap[i].err;
	}
	return -EPROTO;
}

/*
 * send_locked: @argv (@argc words) to the node serving @slot, SIGPIPE held
 * back by the caller. @s is the script of an EVALSHA (argv[1] its SHA1:
 * loaded again after a NOSCRIPT), or SK_CPOOL_NSCRIPTS for another
 * command. On 0 *@out is the reply (freeReplyObject()); an error reply is
 * mapped (its text kept for sk_cpool_errstr()).
 */
static int
send_locked(struct sk_cpool *p, enum sk_cpool_script s, uint16_t slot, int argc, const char **argv,
	    redisReply **out)
{
	const char *what = s < SK_CPOOL_NSCRIPTS ? sk_cpool_lua_names[s] : argv[0];
	struct sk_cpool_link *l = sk_cpool_route_link(&p->rt, slot);
	redisReply *r = NULL;
	bool fresh, stale_retried = false, noscript_retried = false, ask_next = false;
	int rc, redirects = 0;

	*out = NULL;
	p->last = l;
	rc = ensure(p, l);
	if (rc < 0) {
		sk_cpool_route_lost(&p->rt, slot);
		return rc;
	}
	fresh = rc == 1;
	/*
	 * Bounded: a connection that sat idle and broke (Redis restarted
	 * meanwhile) is made again at once, once, ignoring the backoff (not
	 * after a timeout: that would double the wait); a NOSCRIPT (SCRIPT
	 * FLUSH, a failover) loads the script again, once; a MOVED or an ASK
	 * (Redis Cluster) sends it to the node named, REDIRECTS_MAX times at
	 * most. Either way the command is resent: every script is idempotent,
	 * a redirected command was not run, and the others only read.
	 */
	for (int attempt = 0; attempt < 3 + REDIRECTS_MAX; attempt++) {
		bool ask = false;
		int e;

		if (ask_next && (rc = asking(p, l)) != 0)
			return rc;
		if (s < SK_CPOOL_NSCRIPTS)
			argv[1] = p->sha[s];
		r = redisCommandArgv(l->c, argc, argv, NULL);
		e = errno;
		p->calls++;
		if (r == NULL) {
			rc = sk_cpool_link_fail(l, e);
			if (fresh || rc == -ETIMEDOUT || stale_retried) {
				sk_cpool_route_lost(&p->rt, slot);
				return rc;
			}
			stale_retried = true;
			l->next_try_ms = 0;
			l->backoff_ms = SK_CPOOL_BACKOFF_MIN_MS;
			rc = ensure(p, l);
			if (rc < 0) {
				sk_cpool_route_lost(&p->rt, slot);
				return rc;
			}
			fresh = true;
			continue;
		}
		if (r->type != REDIS_REPLY_ERROR)
			break;
		if (s < SK_CPOOL_NSCRIPTS && !noscript_retried &&
		    strncmp(r->str, "NOSCRIPT", 8) == 0) {
			noscript_retried = true;
			freeReplyObject(r);
			r = NULL;
			rc = load(p, l, s);
			if (rc != 0)
				return rc;
			continue;
		}
		struct sk_cpool_link *to = NULL;
		rc = sk_cpool_route_redirect(&p->rt, r->str, l, &to, &ask);
		if (rc == 0)
			break;
		if (rc < 0 || ++redirects > REDIRECTS_MAX) {
			sk_cpool_link_seterr(l, "%s: %s%s", what, r->str,
					     rc < 0 ? " (cannot follow)"
						    : " (too many redirections)");
			freeReplyObject(r);
			return -EPROTO;
		}
		freeReplyObject(r);
		r = NULL;
		l = to;
		p->last = l;
		ask_next = ask;
		rc = ensure(p, l);
		if (rc < 0)
			return rc;
		fresh = rc == 1;
	}
	if (r == NULL) {
		sk_cpool_link_seterr(l, "%s: no answer after %d redirections", what, redirects);
		return -EPROTO;
	}
	sk_cpool_link_ok(l);
	if (r->type == REDIS_REPLY_ERROR) {
		rc = map_error(r->str);
		sk_cpool_link_seterr(l, "%s: %s", what, r->str);
		freeReplyObject(r);
		return rc;
	}
	l->err[0] = '\0';
	*out = r;
	return 0;
}

/*
 * eval: run script @s on item @item with @nextra more arguments (see
 * send_locked() for @out and the errors).
 */
static int
eval(struct sk_cpool *p, enum sk_cpool_script s, uint32_t item, const char *const *extra,
     int nextra, redisReply **out)
{
	char keys[NKEYS][KEY_MAX], item_s[16];
	static const char *const suffix[] = {"pool", "leases", "ops", "synced", "members"};
	const char *argv[ARGS_MAX];
	struct sk_cpool_nopipe np;
	int argc = 0, rc;

	*out = NULL;
	if (nextra < 0 || 3 + NKEYS + 3 + nextra > ARGS_MAX)
		return -EINVAL;
	for (int i = 0; i < 5; i++)
		snprintf(keys[i], KEY_MAX, "%s:{%" PRIu32 "}:%s", p->prefix, item, suffix[i]);
	snprintf(keys[5], KEY_MAX, "%s:soldout:{%" PRIu32 "}", p->prefix, item);
	snprintf(keys[6], KEY_MAX, "%s:{%" PRIu32 "}:dry", p->prefix, item);
	snprintf(item_s, sizeof(item_s), "%" PRIu32, item);
	argv[argc++] = "EVALSHA";
	argv[argc++] = NULL; /* the SHA1, set by send_locked() */
	argv[argc++] = "7";
	for (int i = 0; i < NKEYS; i++)
		argv[argc++] = keys[i];
	argv[argc++] = p->prefix; /* the scripts name the channels from it */
	argv[argc++] = item_s;
	argv[argc++] = p->member;
	for (int i = 0; i < nextra; i++)
		argv[argc++] = extra[i];
	sk_cpool_nopipe_begin(&np);
	rc = send_locked(p, s, sk_cpool_slot(item), argc, argv, out);
	sk_cpool_nopipe_end(&np);
	return rc;
}

/* int_reply: the script's integer reply (>= 0), or -EPROTO. */
static int
int_reply(struct sk_cpool *p, redisReply *r, uint64_t *v)
{
	int rc = 0;

	if (r->type == REDIS_REPLY_INTEGER && r->integer >= 0) {
		*v = (uint64_t)r->integer;
	} else {
		sk_cpool_link_seterr(p->last, "unexpected reply type %d", r->type);
		rc = -EPROTO;
	}
	freeReplyObject(r);
	return rc;
}

/* eval_int: eval() of a script whose reply is an integer >= 0, into *@v. */
static int
eval_int(struct sk_cpool *p, enum sk_cpool_script s, uint32_t item, const char *const *extra,
	 int nextra, uint64_t *v)
{
	redisReply *r;
	int rc = eval(p, s, item, extra, nextra, &r);

	return rc != 0 ? rc : int_reply(p, r, v);
}

static void
u64s(char *buf, size_t cap, uint64_t v)
{
	snprintf(buf, cap, "%" PRIu64, v);
}

/* ------------------------------------------------------------ the calls */

int
sk_cpool_init(struct sk_cpool *p, uint32_t item, uint64_t total, const char *const *members,
	      uint32_t n)
{
	return sk_cpool_init_forgotten(p, item, total, members, n, NULL, 0);
}

int
sk_cpool_init_forgotten(struct sk_cpool *p, uint32_t item, uint64_t total,
			const char *const *members, uint32_t n,
			const struct sk_cpool_forgotten *forgotten, uint32_t nf)
{
	const char *extra[1 + 2 * SK_CPOOL_MEMBERS_MAX];
	char total_s[24], forgot_s[SK_CPOOL_MEMBERS_MAX][SK_CPOOL_MEMBER_MAX + 24];
	uint64_t created;

	if (n == 0 || n > SK_CPOOL_MEMBERS_MAX || nf > SK_CPOOL_MEMBERS_MAX || total == 0 ||
	    total > SK_CPOOL_UNITS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (!sk_cpool_member_valid(members[i]))
			return -EINVAL;
		extra[1 + i] = members[i];
	}
	/* "id=held": no member id holds a '=' (init.lua tells them apart). */
	for (uint32_t i = 0; i < nf; i++) {
		if (!sk_cpool_member_valid(forgotten[i].id) ||
		    forgotten[i].held > SK_CPOOL_UNITS_MAX)
			return -EINVAL;
		snprintf(forgot_s[i], sizeof(forgot_s[i]), "%s=%" PRIu64, forgotten[i].id,
			 forgotten[i].held);
		extra[1 + n + i] = forgot_s[i];
	}
	u64s(total_s, sizeof(total_s), total);
	extra[0] = total_s;
	return eval_int(p, SK_CPOOL_INIT, item, extra, (int)(1 + n + nf), &created);
}

/* op: a lease or a give back (the same idempotency in the scripts). */
static int
op(struct sk_cpool *p, enum sk_cpool_script s, uint32_t item, uint64_t seq, uint64_t units,
   uint64_t *result)
{
	char seq_s[24], units_s[24];
	const char *extra[2] = {seq_s, units_s};

	u64s(seq_s, sizeof(seq_s), seq);
	u64s(units_s, sizeof(units_s), units);
	return eval_int(p, s, item, extra, 2, result);
}

int
sk_cpool_lease(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t want, uint64_t *granted)
{
	*granted = 0;
	if (seq == 0 || want == 0)
		return -EINVAL;
	if (want > SK_CPOOL_UNITS_MAX)
		want = SK_CPOOL_UNITS_MAX;
	return op(p, SK_CPOOL_LEASE, item, seq, want, granted);
}

int
sk_cpool_giveback(struct sk_cpool *p, uint32_t item, uint64_t seq, uint64_t units)
{
	uint64_t back;

	if (seq == 0 || units == 0)
		return -EINVAL;
	if (units > SK_CPOOL_UNITS_MAX)
		return -ERANGE; /* nobody holds that many */
	return op(p, SK_CPOOL_GIVEBACK, item, seq, units, &back);
}

int
sk_cpool_sync(struct sk_cpool *p, uint32_t item, uint64_t epoch, uint64_t held, bool *unfenced)
{
	char epoch_s[24], held_s[24];
	const char *extra[2] = {epoch_s, held_s};
	uint64_t v;
	int rc;

	*unfenced = false;
	if (held > SK_CPOOL_UNITS_MAX)
		return -EOVERFLOW;
	u64s(epoch_s, sizeof(epoch_s), epoch);
	u64s(held_s, sizeof(held_s), held);
	rc = eval_int(p, SK_CPOOL_SYNC, item, extra, 2, &v);
	*unfenced = rc == 0 && v == 1;
	return rc;
}

int
sk_cpool_dry(struct sk_cpool *p, uint32_t item, uint64_t local_units, bool *sold_out,
	     uint64_t *version)
{
	char units_s[24];
	const char *extra[1] = {units_s};
	redisReply *r;
	int rc;

	u64s(units_s, sizeof(units_s), local_units);
	rc = eval(p, SK_CPOOL_DRY, item, extra, 1, &r);
	if (rc != 0)
		return rc;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER || r->element[1]->integer < 0) {
		sk_cpool_link_seterr(p->last, "dry: unexpected reply");
		freeReplyObject(r);
		return -EPROTO;
	}
	if (sold_out != NULL)
		*sold_out = r->element[0]->integer == 1;
	if (version != NULL)
		*version = (uint64_t)r->element[1]->integer;
	freeReplyObject(r);
	return 0;
}

int
sk_cpool_forget(struct sk_cpool *p, uint32_t item, const char *member, uint64_t held)
{
	char held_s[24];
	const char *extra[2] = {member, held_s};
	uint64_t v;

	if (!sk_cpool_member_valid(member))
		return -EINVAL;
	if (held > SK_CPOOL_UNITS_MAX)
		return -EOVERFLOW;
	u64s(held_s, sizeof(held_s), held);
	return eval_int(p, SK_CPOOL_FORGET, item, extra, 2, &v);
}

/* -------------------------------------------------------------- the view */

/* str_u64: a decimal string element (NIL: 0) into @v; false if neither. */
static bool
str_u64(const redisReply *e, uint64_t *v)
{
	char *end;

	if (e->type == REDIS_REPLY_NIL) {
		*v = 0;
		return true;
	}
	if (e->type != REDIS_REPLY_STRING || e->len == 0 || e->len > 20 || e->str[0] == '-')
		return false;
	errno = 0;
	*v = strtoull(e->str, &end, 10);
	return errno == 0 && *end == '\0';
}

/* view_slot: the index of @name in @v's member arrays, added if new. */
static int
view_slot(struct sk_cpool_view *v, const redisReply *name)
{
	if (name->type != REDIS_REPLY_STRING || name->len == 0 || name->len > SK_CPOOL_MEMBER_MAX)
		return -EPROTO;
	for (uint32_t i = 0; i < v->members; i++) {
		if (strcmp(v->member[i], name->str) == 0)
			return (int)i;
	}
	if (v->members == SK_CPOOL_MEMBERS_MAX)
		return -ENOSPC;
	memcpy(v->member[v->members], name->str, name->len + 1);
	return (int)v->members++;
}

static int
view_parse(const redisReply *r, struct sk_cpool_view *v)
{
	uint64_t f[7];
	const redisReply *pool, *mem, *leases, *synced;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 4)
		return -EPROTO;
	pool = r->element[0];
	mem = r->element[1];
	leases = r->element[2];
	synced = r->element[3];
	if (pool->type != REDIS_REPLY_ARRAY || pool->elements != 7 ||
	    mem->type != REDIS_REPLY_ARRAY || leases->type != REDIS_REPLY_ARRAY ||
	    leases->elements % 2 != 0 || synced->type != REDIS_REPLY_ARRAY ||
	    synced->elements % 2 != 0)
		return -EPROTO;
	for (int i = 0; i < 7; i++) {
		if (!str_u64(pool->element[i], &f[i]))
			return -EPROTO;
	}
	*v = (struct sk_cpool_view){.total = f[0],
				    .free = f[1],
				    .epoch = f[2],
				    .fenced = f[3] != 0,
				    .sold_out = f[4] != 0,
				    .version = f[5],
				    .want_ms = (int64_t)f[6]};
	/* The members first, then whoever else still holds a lease (forgotten). */
	for (size_t i = 0; i < mem->elements; i++) {
		int k = view_slot(v, mem->element[i]);

		if (k < 0)
			return k;
	}
	v->active = v->members;
	for (size_t i = 0; i < leases->elements; i += 2) {
		int k = view_slot(v, leases->element[i]);

		if (k < 0)
			return k;
		if (!str_u64(leases->element[i + 1], &v->held[k]))
			return -EPROTO;
	}
	for (size_t i = 0; i < synced->elements; i += 2) {
		int k = view_slot(v, synced->element[i]);

		if (k < 0)
			return k;
		if (!str_u64(synced->element[i + 1], &v->synced[k]))
			return -EPROTO;
	}
	return 0;
}

int
sk_cpool_restock(struct sk_cpool *p, uint32_t item, uint64_t request_id, uint64_t units,
		 bool *repeat)
{
	char id_s[24], units_s[24];
	const char *extra[] = {id_s, units_s};
	uint64_t applied;
	int rc;

	if (request_id == 0 || units == 0 || units > SK_CPOOL_UNITS_MAX)
		return -EINVAL;
	u64s(id_s, sizeof(id_s), request_id);
	u64s(units_s, sizeof(units_s), units);
	rc = eval_int(p, SK_CPOOL_RESTOCK, item, extra, 2, &applied);
	if (rc == 0 && repeat != NULL)
		*repeat = applied == 0;
	return rc;
}

int
sk_cpool_get_units(struct sk_cpool *p, const char *key, uint64_t *units)
{
	const char *argv[] = {"GET", key};
	struct sk_cpool_nopipe np;
	unsigned long long v;
	redisReply *r;
	char *end;
	int rc;

	if (key == NULL || key[0] == '\0')
		return -EINVAL;
	sk_cpool_nopipe_begin(&np);
	rc = send_locked(p, SK_CPOOL_NSCRIPTS, sk_cpool_key_slot(key), 2, argv, &r);
	sk_cpool_nopipe_end(&np);
	if (rc != 0)
		return rc;
	if (r->type == REDIS_REPLY_NIL) {
		rc = -ENOENT;
	} else if (r->type != REDIS_REPLY_STRING) {
		sk_cpool_link_seterr(p->last, "GET %s: unexpected reply type %d", key, r->type);
		rc = -EPROTO;
	} else {
		errno = 0;
		v = strtoull(r->str, &end, 10);
		if (r->str[0] < '1' || r->str[0] > '9' || errno != 0 || *end != '\0' ||
		    v > SK_CPOOL_UNITS_MAX) {
			sk_cpool_link_seterr(p->last, "GET %s: \"%.32s\" is not a count of units",
					     key, r->str);
			rc = -EINVAL;
		} else {
			*units = v;
		}
	}
	freeReplyObject(r);
	return rc;
}

int
sk_cpool_view(struct sk_cpool *p, uint32_t item, struct sk_cpool_view *v)
{
	redisReply *r;
	int rc;

	memset(v, 0, sizeof(*v));
	rc = eval(p, SK_CPOOL_VIEW, item, NULL, 0, &r);
	if (rc != 0)
		return rc;
	rc = view_parse(r, v);
	if (rc == -EPROTO)
		sk_cpool_link_seterr(p->last, "view: unexpected reply");
	else if (rc == -ENOSPC)
		sk_cpool_link_seterr(p->last, "view: more than %d members", SK_CPOOL_MEMBERS_MAX);
	freeReplyObject(r);
	return rc;
}

/* ------------------------------------------------------- member numbers */

/* claim_parse: the claim script's {status, holder, held} into @c; the
 * status (-1, 0, 1), or -EPROTO. */
static int
claim_parse(const redisReply *r, struct sk_cpool_claim *c)
{
	const redisReply *st, *holder, *held;
	char *end;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
		return -EPROTO;
	st = r->element[0];
	holder = r->element[1];
	held = r->element[2];
	if (st->type != REDIS_REPLY_INTEGER || st->integer < -1 || st->integer > 1 ||
	    holder->type != REDIS_REPLY_STRING || holder->len > SK_CPOOL_MEMBER_MAX ||
	    held->type != REDIS_REPLY_STRING || held->len > 2)
		return -EPROTO;
	memcpy(c->holder, holder->str, holder->len + 1);
	c->held = 0;
	if (held->len > 0) {
		unsigned long v = strtoul(held->str, &end, 10);

		if (*end != '\0' || v == 0 || v > SK_CPOOL_MEMBERS_MAX)
			return -EPROTO;
		c->held = (uint32_t)v;
	}
	c->fresh = st->integer == 1;
	return (int)st->integer;
}

int
sk_cpool_claim(struct sk_cpool *p, uint32_t number, struct sk_cpool_claim *out)
{
	char key[KEY_MAX], n_s[16];
	const char *argv[] = {"EVALSHA", NULL, "1", key, p->prefix, "0", p->member, n_s};
	struct sk_cpool_claim c = {0};
	struct sk_cpool_nopipe np;
	redisReply *r;
	int rc;

	if (out != NULL)
		*out = c;
	if (number == 0 || number > SK_CPOOL_MEMBERS_MAX)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s:member_numbers", p->prefix);
	snprintf(n_s, sizeof(n_s), "%" PRIu32, number);
	sk_cpool_nopipe_begin(&np);
	rc = send_locked(p, SK_CPOOL_CLAIM, sk_cpool_key_slot(key), 8, argv, &r);
	sk_cpool_nopipe_end(&np);
	if (rc != 0)
		return rc;
	rc = claim_parse(r, &c);
	freeReplyObject(r);
	if (rc == -EPROTO) {
		sk_cpool_link_seterr(p->last, "claim: unexpected reply");
		return rc;
	}
	if (out != NULL)
		*out = c;
	if (rc >= 0)
		return 0;
	if (c.holder[0] != '\0' && strcmp(c.holder, p->member) != 0)
		sk_cpool_link_seterr(p->last,
				     "member %s cannot take number %" PRIu32
				     ": member %s holds it in %s (two members would mint the "
				     "same order ids)",
				     p->member, number, c.holder, key);
	else
		sk_cpool_link_seterr(p->last,
				     "member %s cannot take number %" PRIu32
				     ": it holds number %" PRIu32
				     " in %s (its --cluster-members changed order)",
				     p->member, number, c.held, key);
	return -EEXIST;
}
