/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_stacks.c - one load per EAL lcore: created, launched, summed (see
 * lg_stacks.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "sk_common.h"

#include "lg_split.h"
#include "lg_stacks.h"

int
lg_stacks_check(const struct lg_opts *o, unsigned n, char *err, size_t errlen)
{
	struct lg_opts share;
	uint32_t tok_off;

	for (unsigned i = 0; i < n; i++) {
		int rc = lg_split(o, n, i, &share, &tok_off, err, errlen);

		if (rc != 0)
			return rc;
	}
	return 0;
}

int
lg_stacks_create(struct lg_stacks *st, const struct lg_opts *o, const struct lg_port *port,
		 const struct lg_tokens *tokens, atomic_bool *stop, char *err, size_t errlen)
{
	unsigned n = rte_lcore_count(), i = 1, lcore;
	int rc;

	memset(st, 0, sizeof(*st));
	st->s = calloc(n, sizeof(*st->s));
	if (st->s == NULL) {
		sk_set_err(err, errlen, "out of memory (%u stacks)", n);
		return -ENOMEM;
	}
	st->n = n;
	/* stack 0 on the main lcore, then the workers in the EAL's order */
	st->s[0].lcore = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (i < n)
			st->s[i++].lcore = lcore;
	}
	for (i = 0; i < n; i++) {
		struct lg_stack *s = &st->s[i];
		uint32_t tok_off;
		struct lg_load_env env;

		rc = lg_split(o, n, i, &s->o, &tok_off, err, errlen);
		if (rc != 0)
			goto err;
		if (tokens->n != 0)
			s->tokens = (struct lg_tokens){
				.buf = tokens->buf + (size_t)tok_off * LG_TOKEN_STRIDE,
				.len = tokens->len + tok_off,
				.n = s->o.tokens,
			};
		if (n > 1)
			snprintf(s->tag, sizeof(s->tag), "lcore=%u ", s->lcore);
		s->stop = stop;
		env = (struct lg_load_env){
			.port_id = port->port_id,
			.queue = (uint16_t)i,
			.lcore = s->lcore,
			.tag = s->tag,
			.pool = port->pool,
			.mac = port->mac,
			.socket = port->socket,
			.tx_ip_cksum = port->tx_ip_cksum,
			.tx_tcp_cksum = port->tx_tcp_cksum,
			.tokens = &s->tokens,
			.stop = stop,
		};
		s->load = lg_load_create(&s->o, &env, err, errlen);
		if (s->load == NULL) {
			rc = -EIO;
			goto err;
		}
	}
	return 0;
err:
	lg_stacks_free(st);
	return rc;
}

/* stack_main - one stack's run, on its lcore. A stack that cannot run
 * (no link, no ARP answer) stops the others: the run has failed. */
static int
stack_main(void *arg)
{
	struct lg_stack *s = arg;

	s->rc = lg_load_run(s->load, s->err, sizeof(s->err));
	if (s->rc != 0)
		atomic_store(s->stop, true);
	return 0;
}

int
lg_stacks_run(struct lg_stacks *st, char *err, size_t errlen)
{
	int rc = 0;

	for (unsigned i = 1; i < st->n; i++) {
		rc = rte_eal_remote_launch(stack_main, &st->s[i], st->s[i].lcore);
		if (rc != 0) {
			st->s[i].rc = rc;
			snprintf(st->s[i].err, sizeof(st->s[i].err), "cannot launch: %s",
				 strerror(-rc));
			atomic_store(st->s[i].stop, true);
		}
	}
	stack_main(&st->s[0]);
	rte_eal_mp_wait_lcore();
	for (unsigned i = 0; i < st->n; i++) {
		if (st->s[i].rc == 0)
			continue;
		if (st->n > 1)
			sk_set_err(err, errlen, "lcore %u: %s", st->s[i].lcore, st->s[i].err);
		else
			sk_set_err(err, errlen, "%s", st->s[i].err);
		return st->s[i].rc;
	}
	return rc;
}

void
lg_stacks_report(const struct lg_stacks *st, struct lg_stats *sum, struct lg_tcp_errors *tcp,
		 struct lg_run_info *run, struct lg_lcore_report *lc)
{
	memset(tcp, 0, sizeof(*tcp));
	for (unsigned i = 0; i < st->n; i++) {
		const struct lg_stats *s = lg_load_stats(st->s[i].load);
		struct lg_tcp_errors t;
		struct lg_run_info r;

		lg_load_tcp(st->s[i].load, &t);
		lg_load_info(st->s[i].load, &r);
		if (i == 0) {
			lg_stats_init(sum, s->tsc_hz, s->start_tsc);
			*run = r;
		} else {
			run->seconds = RTE_MAX(run->seconds, r.seconds);
			run->inflight += r.inflight;
			run->backlog_max += r.backlog_max;
		}
		lg_stats_merge(sum, s);
		lg_tcp_errors_add(tcp, &t);
		lc[i] = (struct lg_lcore_report){
			.lcore = st->s[i].lcore,
			.queue = i,
			.sent = lg_stats_sum(s->sent, LG_REQ__COUNT),
			.answered = lg_stats_sum(s->answered, LG_REQ__COUNT),
			.errors = lg_stats_errors(s, &t),
			.seconds = r.seconds,
		};
	}
	run->lcores = lc;
	run->nlcores = st->n;
}

void
lg_stacks_free(struct lg_stacks *st)
{
	for (unsigned i = 0; st->s != NULL && i < st->n; i++)
		lg_load_free(st->s[i].load);
	free(st->s);
	memset(st, 0, sizeof(*st));
}
