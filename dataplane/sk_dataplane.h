/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Private to seckill-dataplane's start-up: the struct that holds everything
 * the process built, and the set-up steps that live outside main.c
 * (sk_dp_config.c: the config translated into the modules' settings;
 * sk_dp_items.c: the items and their recovery from the store;
 * sk_dp_setup.c: the arena, ports, pool and lcores, and the teardown of
 * all of it). Every step returns 0 or a negative errno with one line naming
 * the config key in dp->err (sk_dp_fail()). Used by the main thread only,
 * before the lcores start (sk_dp_free(): after they stopped).
 */
#ifndef SK_DATAPLANE_H
#define SK_DATAPLANE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_lcore.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "sk_app.h"
#include "sk_common.h"
#include "sk_config.h"
#include "sk_dispatch.h"
#include "sk_http.h"
#include "sk_live.h"
#include "sk_reserve.h"
#include "sk_lcore.h"
#include "sk_net.h"
#include "sk_port.h"
#include "sk_preheat.h"
#include "sk_ratelimit.h"
#include "sk_seckill.h"
#include "sk_shm.h"
#include "sk_tls.h"

#define PROG "seckill-dataplane"

/* Everything the dataplane built; torn down in reverse by sk_dp_free(). */
struct dataplane {
	struct sk_config cfg;
	atomic_bool *stop; /* set by the signal handler; every lcore polls it */
	unsigned nb_lcores;
	unsigned lcore_ids[RTE_MAX_LCORE];
	struct sk_port ports[SK_CONFIG_MAX_PORTS];
	uint16_t nb_ports_probed;
	struct rte_mempool *pool;
	struct sk_dispatch *disp[SK_CONFIG_MAX_PORTS];
	struct sk_lcore *lcores[RTE_MAX_LCORE];
	uint8_t secret[SK_NET_COOKIE_SECRET_LEN];
	char err[SK_CONFIG_ERR_MAX];

	/* The buy path (seckill): one arena, per-lcore rings and limiters. */
	int64_t start_ns;		  /* wall clock at start: epoch and "+N" times */
	struct sk_token_key *token_key;	  /* NULL when auth is off */
	struct sk_seckill_conf sk_conf;	  /* shared by the lcores, read-only */
	const struct rte_memzone *shm_mz; /* the arena (SK_SHM_MEMZONE) */
	struct sk_shm *shm;
	struct rte_ring *orders[RTE_MAX_LCORE];		 /* per lcore index */
	struct sk_ratelimit *rl[RTE_MAX_LCORE];		 /* rte_zmalloc'd; NULL: no limits */
	struct sk_seckill_lcore *seckill[RTE_MAX_LCORE]; /* rte_zmalloc'd */
	struct sk_tls_certs *tls_certs;			 /* [tls]; NULL: no HTTPS */
	struct sk_tls_lcore *tls[RTE_MAX_LCORE];	 /* per lcore index */
	const struct rte_memzone *live_mz;		 /* live settings (SK_LIVE_MEMZONE) */
	struct sk_live_zone *live;
	const struct rte_memzone *reserve_mz; /* reservation sets (SK_RESERVE_MEMZONE) */
	struct sk_reserve_zone *reserve;
};

/** sk_dp_fail - format the start-up error into dp->err; returns @rc. */
int sk_dp_fail(struct dataplane *dp, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** sk_dp_net_conf - the TCP stack settings of lcore @lc on port @p (config + defaults). */
void sk_dp_net_conf(const struct dataplane *dp, const struct sk_port *p, struct sk_lcore *lc,
		    struct sk_net_conf *nc);

/**
 * sk_dp_check_limits - the rules between [tcp] and [http] that need both modules'
 * defaults (the config loader cannot see those). 0 or -EINVAL.
 */
int sk_dp_check_limits(struct dataplane *dp);

/**
 * sk_dp_load_token_key - before the EAL: the HMAC key from seckill.secret_file
 * (random when auth is on without a secret and without items). 0 or a
 * negative errno.
 */
int sk_dp_load_token_key(struct dataplane *dp);

/** sk_dp_client_conf - the [proxy] settings as the app takes them (sk_client.h). */
void sk_dp_client_conf(const struct dataplane *dp, struct sk_client_conf *cc);

/** sk_dp_load_tls - read and check [tls]'s files (dp->tls_certs); 0 or a
 * negative errno with dp->err naming the key and the file. */
int sk_dp_load_tls(struct dataplane *dp);

/**
 * sk_dp_ratelimit_conf - the limiter settings. Every lcore has a limiter:
 * the per-user limit is on by default, and a live change may turn any
 * limit on (its table is made at start).
 */
void sk_dp_ratelimit_conf(const struct dataplane *dp, struct sk_ratelimit_config *rc);

/**
 * sk_dp_setup_live - the live settings memzone (SK_LIVE_MEMZONE) with the
 * config's limits as generation 1, deny buffers of seckill.deny_max
 * entries; every lcore's buy path follows it. 0 or a negative errno.
 */
int sk_dp_setup_live(struct dataplane *dp);

/**
 * sk_dp_setup_reserve - the reservation sets' memzone (SK_RESERVE_MEMZONE)
 * with a heap of seckill.reserve_mb MiB, empty (the control plane loads the
 * sets from the store); every lcore's buy path reads it. Without it
 * (reserve_mb 0) a reserved_only item refuses every buyer. 0 or a negative
 * errno.
 */
int sk_dp_setup_reserve(struct dataplane *dp);

/**
 * sk_dp_setup_items - the config's items and, with a store, every open stored
 * activity, each with its sold units and winners restored from LMDB. 0 or
 * a negative errno.
 */
int sk_dp_setup_items(struct dataplane *dp);

/**
 * sk_dp_store_marks - the earlier runs' high-water marks from the store
 * (sk_recover_marks(): up to @p max, ascending; @p more if older ones were
 * left out); none without a store. The store is opened read-only and
 * closed again. 0 or a negative errno (dp->err says why).
 */
int sk_dp_store_marks(struct dataplane *dp, uint64_t *marks, uint32_t max, uint32_t *n, bool *more);

/**
 * sk_dp_setup - once the EAL runs: the lcores (the main lcore is index 0),
 * the SYN cookie secret, the [tcp]/[http] rules, then the arena and the buy
 * path, the ports and the mbuf pool, one TCP stack and app per lcore and
 * port. 0 or a negative errno (dp->err says why); what was built before a
 * failure stays in @dp for sk_dp_free().
 */
int sk_dp_setup(struct dataplane *dp);

/**
 * sk_dp_free - release everything @dp holds, in reverse order of set-up:
 * the one teardown, after a clean stop, after a failed set-up and before
 * the EAL started alike (every release accepts what was never made). The
 * lcores must have stopped. @dp itself and its config are not freed.
 */
void sk_dp_free(struct dataplane *dp);

#endif /* SK_DATAPLANE_H */
