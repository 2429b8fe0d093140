/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The stacks of seckill-loadgen: one struct lg_load per EAL lcore, the
 * main lcore's included. Stack i runs on the i-th lcore of the EAL's list
 * (stack 0 on the main lcore), polls RX queue i and sends on TX queue i of
 * the one port, with its share of the work (lg_split.h): its own options,
 * its own range of the pre-minted tokens (a view into the one pool). They
 * share nothing writable; the reports sum them once they all stopped.
 *
 * Thread-safety: create, run, report and free on the main lcore;
 * lg_stacks_run() launches the workers and waits for them.
 */
#ifndef LG_STACKS_H
#define LG_STACKS_H

#include <stdatomic.h>
#include <stddef.h>

#include "lg_load.h"
#include "lg_opts.h"
#include "lg_port.h"
#include "lg_stats.h"
#include "lg_tokens.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One stack: its options, its tokens, its load and how its run ended. */
struct lg_stack {
	struct lg_opts o;	 /**< its share of the options (lg_split()) */
	struct lg_tokens tokens; /**< a view into the minted pool: never freed */
	struct lg_load *load;	 /**< owned */
	unsigned lcore;		 /**< the EAL lcore that runs it */
	char tag[24];		 /**< "lcore=L " with several stacks, "" with one */
	atomic_bool *stop;	 /**< set when this stack could not run: the others end */
	int rc;			 /**< lg_load_run()'s result */
	char err[256];		 /**< ... its message */
};

/** The stacks of a run. All zero is "none". */
struct lg_stacks {
	struct lg_stack *s; /**< n stacks (calloc'd) */
	unsigned n;
};

/**
 * lg_stacks_check - whether @p o splits over @p n stacks (lg_split() for
 * each): a usage error otherwise.
 * @return 0, or -EINVAL with lg_split()'s message in @p err.
 */
int lg_stacks_check(const struct lg_opts *o, unsigned n, char *err, size_t errlen);

/**
 * lg_stacks_create - one stack per EAL lcore (rte_lcore_count()) on
 * @p port (opened with that many queue pairs), with @p tokens (kept: it
 * must outlive the stacks) and the @p stop flag (a signal's, read by every
 * stack; set by a stack that failed).
 * @return 0, or a negative errno with a message in @p err: lg_split()'s
 *   (-EINVAL), -ENOMEM, or lg_load_create()'s failure (-EIO). On failure
 *   nothing is left allocated.
 */
int lg_stacks_create(struct lg_stacks *st, const struct lg_opts *o, const struct lg_port *port,
		     const struct lg_tokens *tokens, atomic_bool *stop, char *err, size_t errlen);

/**
 * lg_stacks_run - run every stack, each on its lcore (stack 0 on the
 * calling main lcore), and wait until all are done.
 * @return 0 if every stack went through its phases; otherwise the first
 *   failing stack's lg_load_run() error (-ETIMEDOUT: no link or no ARP
 *   answer), its message in @p err prefixed with its lcore.
 */
int lg_stacks_run(struct lg_stacks *st, char *err, size_t errlen);

/**
 * lg_stacks_report - the figures of all stacks summed: the counters and
 * the merged latency histogram into @p sum, the stacks' TCP counters into
 * @p tcp, the run into @p run (seconds: the longest load phase; inflight
 * and backlog_max: summed) with one @p lc entry per stack (st->n of them,
 * caller's array, pointed to by @p run).
 */
void lg_stacks_report(const struct lg_stacks *st, struct lg_stats *sum, struct lg_tcp_errors *tcp,
		      struct lg_run_info *run, struct lg_lcore_report *lc);

/** lg_stacks_free - free the loads and the array. Idempotent. */
void lg_stacks_free(struct lg_stacks *st);

#ifdef __cplusplus
}
#endif

#endif /* LG_STACKS_H */
