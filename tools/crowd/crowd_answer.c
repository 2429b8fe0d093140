/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_answer.c - what an answer means: the order-id map, wins, duplicates
 * and limit answers recorded per user, the --wait-start pause, poll and item
 * answers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_common.h"

#include "crowd.h"

/* --wait-start: at most this many waits, each at least 1 ms, plus a margin. */
#define WAIT_CYCLES_MAX 1000u
#define WAIT_MARGIN_NS	(1000000ull)
/* Without "starts_in_ms" in a 425, wait this long. */
#define WAIT_DEFAULT_NS (100 * 1000000ull)

int
crowd_order_map_init(struct order_map *m, size_t cap)
{
	m->keys = calloc(cap, sizeof(*m->keys));
	m->users = calloc(cap, sizeof(*m->users));
	m->cap = cap;
	m->n = 0;
	return m->keys != NULL && m->users != NULL ? 0 : -ENOMEM;
}

void
crowd_order_map_free(struct order_map *m)
{
	free(m->keys);
	free(m->users);
	memset(m, 0, sizeof(*m));
}

static size_t
order_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/*
 * order_map_put - remember that order @id went to user @u. Returns 1 if @id
 * was new, 0 if it was known for the same user, -1 if it was known for
 * another user, -ENOMEM if the map could not grow (the id is then not kept).
 */
static int
order_map_put(struct order_map *m, uint64_t id, uint32_t u)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct order_map g;
		if (crowd_order_map_init(&g, m->cap * 2) != 0) {
			crowd_order_map_free(&g);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (m->keys[i] == 0)
				continue;
			size_t j = order_hash(m->keys[i], g.cap);
			while (g.keys[j] != 0)
				j = (j + 1) & (g.cap - 1);
			g.keys[j] = m->keys[i];
			g.users[j] = m->users[i];
		}
		g.n = m->n;
		crowd_order_map_free(m);
		*m = g;
	}
	size_t j = order_hash(id, m->cap);
	while (m->keys[j] != 0) {
		if (m->keys[j] == id)
			return m->users[j] == u ? 0 : -1;
		j = (j + 1) & (m->cap - 1);
	}
	m->keys[j] = id;
	m->users[j] = u;
	m->n++;
	return 1;
}
/* record_order - user @u was given order @id by an answer of kind @flag. */
static void
record_order(struct crowd *cw, uint32_t u, uint64_t id, uint16_t flag)
{
	uint16_t *f = &cw->uflags[u];
	uint64_t *mine = &cw->order[u];

	if (flag == UF_WIN && (*f & UF_WIN) && !(*f & UF_WON_TWICE)) {
		*f |= UF_WON_TWICE;
		cw->st.users_won_twice++;
	}
	if (*mine == 0) {
		*mine = id;
	} else if (*mine != id) {
		if (!(*f & UF_TWO_ORDERS)) {
			*f |= UF_TWO_ORDERS;
			cw->st.users_two_orders++;
		}
		/* a duplicate that disagrees with a win, in either arrival order */
		if ((flag == UF_DUP && (*f & UF_WIN)) || (flag == UF_WIN && (*f & UF_DUP)))
			cw->st.dup_mismatch++;
	}
	*f |= flag;
	int r = order_map_put(&cw->omap, id, u);
	if (r == -1)
		cw->st.orders_shared++;
	else if (r == -ENOMEM && cw->fatal == NULL)
		cw->fatal = "out of memory for the order map";
}

/* wait_start - a 425 arrived under --wait-start: pause the crowd, resend @u later. */
static void
wait_start(struct crowd *cw, const struct sk_crowd_body *b, uint32_t u, uint64_t now)
{
	uint64_t ms = b->has_starts_in_ms ? b->starts_in_ms : WAIT_DEFAULT_NS / 1000000;
	uint64_t go;

	/* at most one buy per connection is in flight, so requeue never overflows */
	SK_ASSERT(cw->requeue_n < cw->o.conns);
	cw->requeue[cw->requeue_n++] = u;
	cw->st.deferred++;
	if (ms > 3600u * 1000u)
		ms = 3601u * 1000u;
	go = now + ms * 1000000ull + WAIT_MARGIN_NS;
	if (go <= cw->go_ns)
		return;
	if (go > cw->deadline) {
		snprintf(cw->note, sizeof(cw->note),
			 "item %" PRIu64 " starts in %" PRIu64 " ms, after --max-seconds",
			 cw->o.item, ms);
		cw->timebound = true;
		return;
	}
	if (cw->go_ns == 0) {
		if (++cw->wait_cycles > WAIT_CYCLES_MAX) {
			cw->fatal = "still not started after 1000 waits";
			return;
		}
		cw->st.waits++;
		cw->t_pause = now;
	}
	cw->go_ns = go;
}

void
crowd_answer_buy(struct crowd *cw, struct conn *c, const struct sk_http_client_resp *r,
		 const char *body, uint64_t now)
{
	struct sk_crowd_body b;
	uint32_t u = c->user;

	sk_crowd_hist_add(&cw->lat, now - c->start_ns);
	cw->st.answered++;
	cw->t_last_buy = now;
	cw->st.http[r->status]++;
	if (r->has_retry_after) {
		cw->st.retry_after++;
		if (r->retry_after > cw->st.retry_after_max)
			cw->st.retry_after_max = r->retry_after;
	}
	if (sk_crowd_body_scan(body, r->content_len, &b) != 0) {
		cw->st.err_protocol++;
		return;
	}
	cw->st.status[b.status]++;
	if (crowd_is_cart(cw, u))
		cw->st.cart_status[b.status]++;
	if (b.status == SK_CROWD_ST_GATE && r->status == 403)
		cw->uflags[u] |= UF_GATE;
	else if (b.status == SK_CROWD_ST_SOLD_OUT && r->status == 410)
		cw->uflags[u] |= UF_SOLD_OUT;
	else if (!(b.status == SK_CROWD_ST_QUEUED || b.status == SK_CROWD_ST_CONFIRMED ||
		   b.status == SK_CROWD_ST_PAID ||
		   /* under --wait-start a 425 is a deferral: the attempt goes again */
		   (b.status == SK_CROWD_ST_NOT_STARTED && r->status == 425 && cw->o.wait_start)))
		cw->uflags[u] |= UF_OTHER;
	switch (b.status) {
	case SK_CROWD_ST_QUEUED:
	case SK_CROWD_ST_CONFIRMED:
	case SK_CROWD_ST_PAID:
		if (r->status != 200 && r->status != 202)
			break;
		if (!b.has_order) {
			cw->st.win_no_order++;
			cw->st.err_protocol++;
			break;
		}
		if (b.duplicate) {
			cw->st.duplicates++;
			record_order(cw, u, b.order, UF_DUP);
		} else {
			cw->st.fresh_wins++;
			record_order(cw, u, b.order, UF_WIN);
		}
		break;
	case SK_CROWD_ST_LIMIT:
		if (b.has_order)
			record_order(cw, u, b.order, UF_LIMIT);
		break;
	case SK_CROWD_ST_DUPLICATE: /* a cart naming an item the user holds, in that order */
		if (r->status == 409 && b.has_order) {
			cw->st.duplicates++;
			record_order(cw, u, b.order, UF_DUP);
		}
		break;
	case SK_CROWD_ST_NOT_RESERVED:
		cw->uflags[u] |= UF_NOT_RESERVED;
		break;
	case SK_CROWD_ST_NOT_STARTED:
		if (cw->o.wait_start && r->status == 425)
			wait_start(cw, &b, u, now);
		break;
	default:
		break;
	}
}

void
crowd_answer_poll(struct crowd *cw, struct conn *c, const struct sk_http_client_resp *r,
		  const char *body)
{
	struct sk_crowd_body b;

	if (r->status == 404) {
		cw->st.polls_missing++;
		return;
	}
	if (r->status != 200 || sk_crowd_body_scan(body, r->content_len, &b) != 0 || !b.has_order ||
	    b.order != cw->order[c->user]) {
		cw->st.polls_bad++;
		return;
	}
	switch (b.status) {
	case SK_CROWD_ST_QUEUED:
	case SK_CROWD_ST_CONFIRMED:
	case SK_CROWD_ST_PAID:
	case SK_CROWD_ST_CANCELLED:
	case SK_CROWD_ST_FAILED:
		cw->st.polls_ok++;
		cw->st.poll_status[b.status]++;
		break;
	default:
		cw->st.polls_bad++;
		break;
	}
}

void
crowd_answer_item(struct crowd *cw, const struct sk_http_client_resp *r, const char *body)
{
	struct sk_crowd_body b;

	cw->st.item_http = r->status;
	if (r->status == 200 && sk_crowd_body_scan(body, r->content_len, &b) == 0) {
		cw->st.item_has_remaining = b.has_remaining;
		cw->st.item_remaining = b.remaining;
		if (b.has_state)
			memcpy(cw->st.item_state, b.state, sizeof(b.state));
	}
}
