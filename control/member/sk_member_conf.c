/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_member_conf.c - the cluster member's settings (sk_member.h): the
 * --redis and --cluster-members values, the member's number, and that
 * number's claim in Redis (docs/cluster.md, "Member numbers"): at start
 * (sk_member_claim(), the control plane refuses a taken number), and by
 * the loop before its first lease and again after Redis came back, a
 * fence or a pool made again (sk_member_claim_tick()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sk_logfmt.h"
#include "sk_member_impl.h"

#define S INT64_C(1000000000)

/* A refused claim is tried again this often (the operator may fix it), */
#define CLAIM_RETRY_NS S
/* and one that holds is made again this often (a Redis that lost it). */
#define CLAIM_REFRESH_NS (10 * S)

/* ------------------------------------------------------------- parsing */

int
sk_member_parse_redis(char *s, struct sk_cpool_config *c)
{
	if (strncmp(s, "unix:", 5) == 0) {
		if (s[5] == '\0')
			return -EINVAL;
		c->unix_path = s + 5;
		c->host = NULL;
		return 0;
	}
	char *colon = strrchr(s, ':'), *end;
	if (colon == NULL || colon == s || colon[1] == '\0')
		return -EINVAL;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
		return -EINVAL;
	*colon = '\0';
	c->host = s;
	c->port = (int)port;
	c->unix_path = NULL;
	return 0;
}

int
sk_member_parse_members(char *s, struct sk_member_conf *conf)
{
	char *save = NULL;

	conf->nmembers = 0;
	for (char *id = strtok_r(s, ",", &save); id != NULL; id = strtok_r(NULL, ",", &save)) {
		if (!sk_cpool_member_valid(id))
			return -EINVAL;
		for (uint32_t i = 0; i < conf->nmembers; i++)
			if (strcmp(conf->members[i], id) == 0)
				return -EINVAL;
		if (conf->nmembers == SK_CPOOL_MEMBERS_MAX)
			return -E2BIG;
		conf->members[conf->nmembers++] = id;
	}
	return conf->nmembers > 0 ? 0 : -EINVAL;
}

uint32_t
sk_member_number(const struct sk_member_conf *conf)
{
	for (uint32_t i = 0; conf->redis.member != NULL && i < conf->nmembers; i++)
		if (strcmp(conf->members[i], conf->redis.member) == 0)
			return i + 1;
	return 0;
}

/* ------------------------------------------------------------ the claim */

int
sk_member_claim(const struct sk_member_conf *conf, char *err, size_t errlen)
{
	uint32_t number = sk_member_number(conf);
	struct sk_cpool *p = NULL;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (number == 0)
		return -EINVAL;
	rc = sk_cpool_open(&p, &conf->redis);
	if (rc != 0)
		return rc;
	rc = sk_cpool_claim(p, number, NULL);
	if (rc != 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", sk_cpool_errstr(p));
	sk_cpool_close(p);
	return rc;
}

int
sk_member_claim_tick(struct sk_member *m, int64_t now)
{
	uint32_t number = sk_member_number(&m->conf);
	struct sk_cpool_claim c;
	int rc;

	/* Not claimed (Redis down, a fence, a lost pool): at once; refused:
	 * each retry period; claimed: each refresh period. */
	if ((m->claimed || atomic_load(&m->claim_conflict)) && now < m->claim_next_ns)
		return 0;
	rc = sk_cpool_claim(m->pool, number, &c);
	m->claimed = rc == 0;
	if (rc == 0) {
		m->claim_next_ns = now + CLAIM_REFRESH_NS;
		if (c.fresh || atomic_load(&m->claim_conflict))
			sk_logf(SK_LOG_NOTICE, "cluster",
				"member=%s number=%" PRIu32 " msg=\"member number claimed in "
				"Redis: leasing\"",
				m->conf.redis.member, number);
		atomic_store(&m->claim_conflict, false);
	} else if (rc == -EEXIST) {
		m->claim_next_ns = now + CLAIM_RETRY_NS;
		if (!atomic_exchange(&m->claim_conflict, true)) {
			atomic_fetch_add_explicit(&m->anomalies, 1, memory_order_relaxed);
			sk_logf(SK_LOG_CRIT, "cluster",
				"member=%s number=%" PRIu32 " holder=%s held=%" PRIu32
				" msg=\"another member has this number (or this member another): "
				"their order ids would collide; not leasing until the members "
				"agree (docs/cluster.md)\" err=\"%s\"",
				m->conf.redis.member, number, c.holder[0] ? c.holder : "-", c.held,
				sk_cpool_errstr(m->pool));
		}
	}
	atomic_store(&m->number_claimed, m->claimed);
	return rc;
}
