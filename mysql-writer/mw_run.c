/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_run.c - a run of confirmed orders written with multi-row statements
 * (mw_run.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <mysqld_error.h>

#include "mw_apply.h"
#include "mw_run.h"

void
mw_run_event_vals(const struct mw_msg *m, const char *request, struct mw_val *v)
{
	v[0] = mw_u(m->seq);
	v[1] = mw_s(mw_msg_type_name(m->type));
	v[2] = m->order != 0 ? mw_u(m->order) : (struct mw_val){.null = 1};
	v[3] = mw_u(m->user);
	v[4] = mw_u(m->item);
	v[5] = mw_u(m->units);
	v[6] = mw_i(m->time_ns);
	v[7] = mw_s(request);
	v[8] = mw_s(m->type == MW_MSG_PAY_CONFLICT ? "conflict" : "applied");
}

void
mw_run_order_vals(const struct mw_msg *m, const char *ip, int64_t now, struct mw_val *v)
{
	v[0] = mw_u(m->order);
	v[1] = mw_u(m->user);
	v[2] = mw_u(m->units);
	v[3] = mw_u(m->nlines);
	v[4] = mw_s(ip);
	v[5] = mw_i(m->sold_ns);
	v[6] = mw_i(m->time_ns); /* confirmed_ns */
	v[7] = mw_i(m->time_ns); /* updated_ns */
	v[8] = mw_u(m->seq);
	v[9] = mw_i(now); /* written_ns */
}

/* item_slot - @id's index in r->item[], added if new; -1 when full. */
static int
item_slot(struct mw_run *r, uint32_t id)
{
	for (unsigned i = 0; i < r->nitems; i++)
		if (r->item[i].id == id)
			return (int)i;
	if (r->nitems == MW_RUN_ITEMS)
		return -1;
	r->item[r->nitems].id = id;
	r->item[r->nitems].qty = 0;
	return (int)r->nitems++;
}

/*
 * take - add confirmed order @m as the run's order @k, its lines from
 * line *@nl on. Returns false (nothing added) when the run is full.
 */
static bool
take(struct mw_run *r, const struct mw_msg *m, unsigned k, unsigned *nl)
{
	struct timespec ts;
	unsigned nitems = r->nitems;

	if (k == MW_RUN_ORDERS || *nl + m->nlines > MW_RUN_LINES)
		return false;
	for (unsigned i = 0; i < m->nlines; i++) {
		int slot = item_slot(r, m->lines[i].item);

		if (slot < 0) {
			r->nitems = nitems; /* the items this order added */
			return false;
		}
		r->line_item[*nl + i] = (uint16_t)slot;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(r->str[k].ip, m->client_ip, sizeof(r->str[k].ip));
	memcpy(r->str[k].req, m->request, sizeof(r->str[k].req));
	mw_run_event_vals(m, r->str[k].req, &r->ev[k * MW_RUN_EVENT_NP]);
	mw_run_order_vals(m, r->str[k].ip, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
			  &r->ord[k * MW_RUN_ORDER_NP]);
	for (unsigned i = 0; i < m->nlines; i++) {
		const struct mw_msg_line *l = &m->lines[i];
		struct mw_val *v = &r->ln[(*nl + i) * MW_RUN_LINE_NP];

		r->item[r->line_item[*nl + i]].qty += l->qty;
		v[0] = mw_u(m->order);
		v[1] = mw_u(l->line);
		v[2] = mw_u(l->item);
		v[3] = mw_u(m->user);
		v[4] = mw_u(l->qty);
		v[5] = mw_u(l->price);
		/* v[6], one_per_user: once the item's limit is read */
	}
	*nl += m->nlines;
	return true;
}

/*
 * limits - read the per-user limit of every item of the run into its
 * lines. 1 every item is written, 0 one is not, -1 on error.
 */
static int
limits(struct mw_apply *a, struct mw_run *r, unsigned nl)
{
	char col[1][MW_STMT_COL];

	for (unsigned i = 0; i < r->nitems; i++) {
		struct mw_val id = mw_u(r->item[i].id);
		int rc = mw_stmt_row(&a->st, MW_S_ITEM_LIMIT, &id, col, 1);

		if (rc <= 0)
			return rc;
		r->item[i].limit = strcmp(col[0], "1") == 0;
	}
	for (unsigned l = 0; l < nl; l++)
		r->ln[l * MW_RUN_LINE_NP + 6] = mw_u(r->item[r->line_item[l]].limit);
	return 1;
}

/*
 * run_write - the run's statements after its savepoint: 1 every row written,
 * 0 one was not (a duplicate: a seq seen, an order id, a per-user line;
 * a guard; refused data), -1 on any other error.
 */
static int
run_write(struct mw_apply *a, struct mw_run *r, unsigned k, unsigned nl)
{
	int64_t rows;

	if ((rows = mw_stmt_exec_rows(&a->st, MW_S_EVENT, r->ev, k)) != k ||
	    (rows = mw_stmt_exec_rows(&a->st, MW_S_ORDER, r->ord, k)) != k ||
	    (rows = mw_stmt_exec_rows(&a->st, MW_S_LINES, r->ln, nl)) != nl)
		goto short_;
	for (unsigned i = 0; i < r->nitems; i++) {
		struct mw_val g[3] = {mw_u(r->item[i].qty), mw_u(r->item[i].id),
				      mw_u(r->item[i].qty)};

		if ((rows = mw_stmt_exec(&a->st, MW_S_GUARD, g)) != 1)
			goto short_;
	}
	return 1;
short_:
	if (rows >= 0)
		return 0;
	return a->db->err == ER_DUP_ENTRY || mw_db_message_error(a->db->err) ? 0 : -1;
}

int
mw_run_apply(struct mw_apply *a, const struct mw_input *in, size_t n, size_t *taken)
{
	struct mw_run *r = &a->run;
	struct mw_msg *m = &a->msg;
	unsigned k = 0, nl = 0;
	int64_t last = 0;
	int rc;

	r->nitems = 0;
	for (; k < n; k++) {
		if (mw_msg_decode(in[k].val, in[k].len, m, NULL, 0) != 0 ||
		    m->type != MW_MSG_CONFIRMED || !take(r, m, k, &nl))
			break;
		last = m->time_ns;
	}
	*taken = k;
	if (k < 2)
		return 0; /* nothing to gain over one by one */
	rc = limits(a, r, nl);
	if (rc <= 0)
		return rc < 0 ? -EAGAIN : 0;
	if (mw_db_exec(a->db, "SAVEPOINT run") < 0)
		return -EAGAIN;
	rc = run_write(a, r, k, nl);
	if (rc < 0)
		return -EAGAIN;
	if (rc == 0) {
		a->tally[MW_M_RUNS_REPLAYED]++;
		return mw_db_exec(a->db, "ROLLBACK TO SAVEPOINT run") < 0 ? -EAGAIN : 0;
	}
	a->tally[MW_M_RUNS]++;
	a->tally[MW_M_APPLIED] += k;
	a->tally[MW_M_ORDERS] += k;
	a->last_time_ns = last;
	return 1;
}
