/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_sse_table.c - the open order-event streams of one lcore
 * (sk_sse_table.h): slots kept dense by a permutation, a per-user count in
 * an open-addressed table (linear probing, backward-shift deletion).
 */
#include <errno.h>
#include <string.h>

#include "sk_common.h"
#include "sk_sse.h"
#include "sk_sse_table.h"

#define SSE_MAX_STREAMS (UINT32_C(1) << 24)

const char *
sk_sse_status_name(unsigned status)
{
	if (status == SK_SSE_SETTLED)
		return "settled";
	return status > SK_ORDER_NONE && status < SK_ORDER_STATUS_COUNT
		       ? sk_order_status_name(status)
		       : NULL;
}

bool
sk_sse_final(unsigned status)
{
	return status == SK_ORDER_PAID || status == SK_ORDER_CANCELLED ||
	       status == SK_ORDER_FAILED || status == SK_ORDER_REFUNDED || status == SK_SSE_SETTLED;
}

/* users_len - user entries of a table of @max streams: a power of two >= 2 * max. */
static uint32_t
users_len(uint32_t max)
{
	uint32_t u = 2;

	while (u < 2 * max)
		u <<= 1;
	return u;
}

size_t
sk_sse_table_size(uint32_t max)
{
	if (max == 0 || max > SSE_MAX_STREAMS)
		return 0;
	return sk_align_up(sizeof(struct sk_sse_table), 8) +
	       (size_t)max * sizeof(struct sk_sse_stream) + (size_t)max * 2 * sizeof(uint32_t) +
	       (size_t)users_len(max) * sizeof(struct sk_sse_user);
}

struct sk_sse_table *
sk_sse_table_init(void *mem, size_t len, uint32_t max, uint32_t per_user, uint64_t ka_tsc)
{
	size_t need = sk_sse_table_size(max);
	struct sk_sse_table *t = mem;
	uint8_t *p;

	if (need == 0 || mem == NULL || len < need || ((uintptr_t)mem & 7) != 0 || per_user == 0 ||
	    ka_tsc == 0)
		return NULL;
	memset(mem, 0, need);
	p = (uint8_t *)mem + sk_align_up(sizeof(*t), 8);
	t->max = max;
	t->per_user = per_user;
	t->ka_tsc = ka_tsc;
	t->stats = &t->own;
	t->umask = users_len(max) - 1;
	t->s = (struct sk_sse_stream *)p;
	p += (size_t)max * sizeof(struct sk_sse_stream);
	t->users = (struct sk_sse_user *)p;
	p += (size_t)(t->umask + 1) * sizeof(struct sk_sse_user);
	t->perm = (uint32_t *)p;
	t->pos = t->perm + max;
	for (uint32_t i = 0; i < max; i++)
		t->perm[i] = t->pos[i] = i;
	return t;
}

/* user_home - the home entry of @user (Fibonacci hashing). */
static inline uint32_t
user_home(const struct sk_sse_table *t, uint64_t user)
{
	return (uint32_t)((user * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & t->umask;
}

/* user_find - the entry of @user, or of the empty entry where it would go.
 * Bounded: the table is at most half full, so an empty entry exists. */
static uint32_t
user_find(const struct sk_sse_table *t, uint64_t user)
{
	uint32_t i = user_home(t, user);

	while (t->users[i].user != 0 && t->users[i].user != user)
		i = (i + 1) & t->umask;
	return i;
}

uint32_t
sk_sse_table_user_count(const struct sk_sse_table *t, uint64_t user)
{
	return user == 0 ? 0 : t->users[user_find(t, user)].count;
}

/* user_drop - one stream less for @user; its entry goes when none is left
 * (backward shift: the entries after it that could sit earlier move up). */
static void
user_drop(struct sk_sse_table *t, uint64_t user)
{
	uint32_t i = user_find(t, user), j = i;

	if (t->users[i].user == 0 || --t->users[i].count != 0)
		return;
	for (;;) {
		t->users[i].user = 0;
		t->users[i].count = 0;
		for (;;) {
			j = (j + 1) & t->umask;
			if (t->users[j].user == 0)
				return;
			uint32_t h = user_home(t, t->users[j].user);
			/* j's entry may move to i unless its home lies in (i, j] */
			if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
				break;
		}
		t->users[i] = t->users[j];
		i = j;
	}
}

int
sk_sse_table_open(struct sk_sse_table *t, void *conn, uint64_t user, uint64_t order,
		  unsigned status, uint64_t now_tsc, uint32_t *slot)
{
	uint32_t u, sl;

	if (t->n == t->max) {
		t->stats->refused_max++;
		return -EBUSY;
	}
	u = user_find(t, user);
	if (t->users[u].count >= t->per_user) {
		t->stats->refused_user++;
		return -EUSERS;
	}
	t->users[u].user = user;
	t->users[u].count++;
	sl = t->perm[t->n++];
	t->s[sl] = (struct sk_sse_stream){
		.conn = conn,
		.order = order,
		.user = user,
		.ka_due = now_tsc + t->ka_tsc,
		.last = (uint8_t)status,
	};
	t->stats->opened++;
	t->stats->open++;
	*slot = sl;
	return 0;
}

void
sk_sse_table_close(struct sk_sse_table *t, uint32_t slot)
{
	uint32_t i = t->pos[slot], last;

	SK_ASSERT(slot < t->max && i < t->n);
	last = t->perm[--t->n];
	t->perm[i] = last;
	t->pos[last] = i;
	t->perm[t->n] = slot;
	t->pos[slot] = t->n;
	user_drop(t, t->s[slot].user);
	t->s[slot].conn = NULL;
	t->stats->open--;
}

uint32_t
sk_sse_table_scan(struct sk_sse_table *t, uint32_t budget, uint32_t *out)
{
	uint32_t k = 0;

	if (budget > SK_SSE_SCAN_MAX)
		budget = SK_SSE_SCAN_MAX;
	if (budget > t->n)
		budget = t->n;
	while (k < budget) {
		if (t->cursor >= t->n)
			t->cursor = 0;
		out[k++] = t->perm[t->cursor++];
	}
	return k;
}

enum sk_sse_action
sk_sse_step(const struct sk_sse_stream *s, unsigned status, uint64_t now_tsc, unsigned *send_status)
{
	if (status == SK_ORDER_NONE)
		status = SK_SSE_SETTLED;
	if (status != s->last) {
		*send_status = status;
		return sk_sse_final(status) ? SK_SSE_ACT_LAST : SK_SSE_ACT_EVENT;
	}
	return (int64_t)(now_tsc - s->ka_due) >= 0 ? SK_SSE_ACT_KEEPALIVE : SK_SSE_ACT_NOTHING;
}

void
sk_sse_table_sent(struct sk_sse_table *t, uint32_t slot, enum sk_sse_action action, unsigned status,
		  uint64_t now_tsc)
{
	struct sk_sse_stream *s = &t->s[slot];

	s->ka_due = now_tsc + t->ka_tsc;
	if (action == SK_SSE_ACT_KEEPALIVE) {
		t->stats->keepalives++;
		return;
	}
	if (action == SK_SSE_ACT_NOTHING)
		return;
	s->last = (uint8_t)status;
	t->stats->events++;
	if (action == SK_SSE_ACT_LAST)
		t->stats->finished++;
}

uint32_t
sk_sse_table_poll(struct sk_sse_table *t, const struct sk_status *st, uint32_t budget,
		  uint64_t now_tsc, sk_sse_send_fn send, sk_sse_end_fn end, void *arg)
{
	uint32_t slots[SK_SSE_SCAN_MAX], sent = 0;
	uint32_t k = sk_sse_table_scan(t, budget, slots);

	for (uint32_t i = 0; i < k; i++) {
		struct sk_sse_stream *s = &t->s[slots[i]];
		char ev[SK_SSE_EVENT_MAX];
		unsigned status = 0;
		enum sk_sse_action a =
			sk_sse_step(s, sk_status_get(st, s->order), now_tsc, &status);
		int rc;

		if (a == SK_SSE_ACT_NOTHING)
			continue;
		if (a == SK_SSE_ACT_KEEPALIVE)
			rc = send(arg, s->conn, SK_SSE_KEEPALIVE, SK_SSE_KEEPALIVE_LEN);
		else
			rc = send(arg, s->conn, ev,
				  sk_sse_event(ev, s->order, sk_sse_status_name(status)));
		if (rc != 0)
			continue; /* no room (next turn), or closing (its close frees the slot) */
		sk_sse_table_sent(t, slots[i], a, status, now_tsc);
		sent++;
		if (a == SK_SSE_ACT_LAST)
			end(arg, s->conn, slots[i]);
	}
	return sent;
}
