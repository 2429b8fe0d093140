/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * mw_run.h - a run of confirmed orders written at once: the consecutive
 * confirmed orders of a batch go to MariaDB as three executions of bulk
 * statements (mw_stmt_exec_rows(): their event rows, the orders, the
 * lines) and one stock guard per item
 * with the run's units summed, in a savepoint of the batch's transaction.
 * The run lands only when every statement wrote every row, which is then
 * exactly what applying the orders one by one writes (the guard's sum
 * fits only if every prefix of it fits: sold only grows in a run). Else
 * the savepoint is rolled back and the caller applies the same messages
 * one by one, which tells a duplicate, a guard's refusal, a missing item
 * or refused data apart and parks exactly those (mw_apply.h).
 *
 * Thread-safety: the applier's (one thread).
 */
#ifndef MW_RUN_H
#define MW_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "mw_msg.h"
#include "mw_stmt.h"

/** Most orders, lines and distinct items of one run. */
#define MW_RUN_ORDERS 1024
#define MW_RUN_LINES  4096
#define MW_RUN_ITEMS  64

/** Parameters of an order_events row and of an orders row (the table's). */
#define MW_RUN_EVENT_NP 9
#define MW_RUN_ORDER_NP 10
#define MW_RUN_LINE_NP	7

/** A run's rows, made from the messages. Scratch of the applier. */
struct mw_run {
	struct mw_val ev[MW_RUN_ORDERS * MW_RUN_EVENT_NP];  /**< order_events rows */
	struct mw_val ord[MW_RUN_ORDERS * MW_RUN_ORDER_NP]; /**< orders rows */
	struct mw_val ln[MW_RUN_LINES * MW_RUN_LINE_NP];    /**< order_lines rows */
	struct {
		char ip[sizeof(((struct mw_msg *)0)->client_ip)];
		char req[MW_MSG_REQUEST_MAX + 1];
	} str[MW_RUN_ORDERS]; /**< the strings the rows point at */
	struct {
		uint32_t id;	/**< item */
		uint64_t qty;	/**< units of the run's lines of it */
		uint64_t limit; /**< its per-user limit */
	} item[MW_RUN_ITEMS];
	uint16_t line_item[MW_RUN_LINES]; /**< each line's index in item[] */
	unsigned nitems;		  /**< in item[] */
};

struct mw_apply;
struct mw_input;

/**
 * mw_run_event_vals - the MW_S_EVENT values of message @p m into @p v
 * (MW_RUN_EVENT_NP); @p request is the string to bind (m->request or a
 * copy that outlives @p m).
 */
void mw_run_event_vals(const struct mw_msg *m, const char *request, struct mw_val *v);

/**
 * mw_run_order_vals - the MW_S_ORDER values of confirmed order @p m
 * written at @p now into @p v (MW_RUN_ORDER_NP); @p ip as for
 * mw_run_event_vals().
 */
void mw_run_order_vals(const struct mw_msg *m, const char *ip, int64_t now, struct mw_val *v);

/**
 * mw_run_apply - write the confirmed orders that lead @p in (@p n
 * messages) as one run, when nothing is parked (a->parked_rows 0: no
 * order barrier to ask). Sets *@p taken to how many messages the run
 * holds (0 when @p in does not start with a confirmed order).
 * @return 1 landed (counted in a->tally); 0 not landed: nothing of it is
 *         left (rolled back to the run's savepoint, or never sent: a run
 *         of one, an item not written), apply those *@p taken messages one
 *         by one; -EAGAIN on an error that stalls the batch (a->db->err).
 */
int mw_run_apply(struct mw_apply *a, const struct mw_input *in, size_t n, size_t *taken);

#endif /* MW_RUN_H */
