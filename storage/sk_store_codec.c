/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order store's values on disk (sk_store_impl.h): order lines, ledgers,
 * activity definitions and events, encoded big-endian at the offsets of
 * docs/storage.md ("Layout"). Keys are built by the inline helpers of
 * sk_store_impl.h.
 */
#include <errno.h>
#include <string.h>

#include "sk_addr.h"
#include "sk_store_impl.h"

void
store_order_enc(uint8_t v[ORDER_VAL_LEN], const struct sk_store_line *l)
{
	const struct sk_order_rec *r = &l->rec;

	put_be64(v + 0, r->user);
	put_be64(v + 8, r->price);
	put_be64(v + 16, (uint64_t)r->time_ns);
	put_be32(v + 24, r->item);
	memset(v + 28, 0, 4); /* schema 1-3's IPv4 client: now at 64 */
	put_be16(v + 32, r->qty);
	v[34] = r->nlines;
	v[35] = l->state;
	/* Schema 1 wrote returned as a u32 here; it never exceeds qty (u16),
	 * so its high half, now the refunded count, reads as 0. */
	put_be16(v + 36, l->refunded);
	put_be16(v + 38, (uint16_t)r->returned);
	put_be64(v + 40, (uint64_t)l->deadline_ns);
	put_be64(v + 48, (uint64_t)l->stored_ns);
	put_be64(v + 56, (uint64_t)l->updated_ns);
	/* Schema 4: the client, family (0 none, 4, 6) then 16 address bytes
	 * in network order, unused ones zero. */
	memset(v + 64, 0, 4);
	v[64] = r->client.family;
	memcpy(v + 68, r->client.bytes, 16);
}

void
store_order_dec(struct sk_store_line *l, uint64_t id, uint8_t line, const uint8_t *v, size_t len)
{
	struct sk_order_rec *r = &l->rec;

	memset(l, 0, sizeof(*l));
	r->id = id;
	r->line = line;
	r->user = get_be64(v + 0);
	r->price = get_be64(v + 8);
	r->time_ns = (int64_t)get_be64(v + 16);
	r->item = get_be32(v + 24);
	if (len == ORDER_VAL_LEN_V1) {
		uint32_t ip;

		memcpy(&ip, v + 28, 4); /* network order */
		if (ip != 0)
			r->client = sk_addr_from_v4(ip);
	} else if (v[64] == SK_ADDR_V4 || v[64] == SK_ADDR_V6) {
		r->client.family = v[64];
		memcpy(r->client.bytes, v + 68, v[64] == SK_ADDR_V4 ? 4 : 16);
	}
	r->qty = get_be16(v + 32);
	r->nlines = v[34];
	l->state = v[35];
	l->refunded = get_be16(v + 36);
	r->returned = get_be16(v + 38);
	l->deadline_ns = (int64_t)get_be64(v + 40);
	l->stored_ns = (int64_t)get_be64(v + 48);
	l->updated_ns = (int64_t)get_be64(v + 56);
}

void
store_ledger_enc(uint8_t v[LEDGER_VAL_LEN], const struct sk_store_ledger *l)
{
	put_be64(v + 0, l->sold);
	put_be64(v + 8, l->returned);
	put_be64(v + 16, l->paid);
	put_be64(v + 24, l->lines);
	put_be64(v + 32, l->lines_paid);
	put_be64(v + 40, l->lines_cancelled);
}

void
store_ledger_dec(struct sk_store_ledger *l, const uint8_t *v)
{
	l->sold = get_be64(v + 0);
	l->returned = get_be64(v + 8);
	l->paid = get_be64(v + 16);
	l->lines = get_be64(v + 24);
	l->lines_paid = get_be64(v + 32);
	l->lines_cancelled = get_be64(v + 40);
}

void
store_act_enc(uint8_t v[ACT_VAL_LEN], const struct sk_store_activity *a)
{
	size_t nlen = strnlen(a->name, SK_STORE_NAME_MAX);

	memset(v, 0, ACT_VAL_LEN);
	put_be64(v + 0, a->total);
	put_be64(v + 8, a->added);
	put_be64(v + 16, a->price);
	put_be64(v + 24, (uint64_t)a->start_ns);
	put_be64(v + 32, (uint64_t)a->end_ns);
	put_be64(v + 40, (uint64_t)a->pay_timeout_ns);
	put_be64(v + 48, (uint64_t)a->created_ns);
	put_be64(v + 56, (uint64_t)a->updated_ns);
	put_be64(v + 64, (uint64_t)a->closed_ns);
	put_be32(v + 72, a->per_user_limit);
	v[76] = (uint8_t)nlen;
	v[77] = (uint8_t)((a->cluster ? ACT_FLAG_CLUSTER : 0) | (a->gate ? ACT_FLAG_GATE : 0) |
			  (a->reserved_only ? ACT_FLAG_RESERVED : 0));
	memcpy(v + 80, a->name, nlen);
	put_be64(v + 144, a->removed);
	put_be64(v + 152, (uint64_t)a->paused_ns);
}

int
store_act_dec(struct sk_store_activity *a, uint32_t item, const uint8_t *v, size_t len)
{
	if (len != ACT_VAL_LEN && len != ACT_VAL_LEN_V2)
		return -EIO;
	memset(a, 0, sizeof(*a));
	a->item = item;
	a->total = get_be64(v + 0);
	a->added = get_be64(v + 8);
	a->price = get_be64(v + 16);
	a->start_ns = (int64_t)get_be64(v + 24);
	a->end_ns = (int64_t)get_be64(v + 32);
	a->pay_timeout_ns = (int64_t)get_be64(v + 40);
	a->created_ns = (int64_t)get_be64(v + 48);
	a->updated_ns = (int64_t)get_be64(v + 56);
	a->closed_ns = (int64_t)get_be64(v + 64);
	a->per_user_limit = get_be32(v + 72);
	a->cluster = (v[77] & ACT_FLAG_CLUSTER) != 0;
	a->gate = (v[77] & ACT_FLAG_GATE) != 0;
	a->reserved_only = (v[77] & ACT_FLAG_RESERVED) != 0;
	size_t nlen = v[76] <= SK_STORE_NAME_MAX ? v[76] : SK_STORE_NAME_MAX;
	memcpy(a->name, v + 80, nlen);
	a->name[nlen] = '\0';
	if (len == ACT_VAL_LEN) {
		a->removed = get_be64(v + 144);
		a->paused_ns = (int64_t)get_be64(v + 152);
	}
	return 0;
}

size_t
store_event_enc(uint8_t v[EVENT_VAL_MAX], const struct sk_store_event *ev)
{
	size_t rlen = strnlen(ev->request, SK_STORE_REQUEST_MAX);
	const struct sk_store_event_def *d = &ev->def;

	v[0] = ev->type;
	v[1] = ev->nlines;
	v[2] = (uint8_t)rlen;
	v[3] = d->has_def ? EVENT_DEF_FLAG : 0;
	put_be32(v + 4, ev->item);
	put_be64(v + 8, ev->order);
	put_be64(v + 16, ev->user);
	put_be64(v + 24, ev->units);
	put_be64(v + 32, (uint64_t)ev->time_ns);
	memcpy(v + EVENT_VAL_LEN, ev->request, rlen);
	if (!d->has_def)
		return EVENT_VAL_LEN + rlen;

	uint8_t *p = v + EVENT_VAL_LEN + rlen;
	size_t nlen = strnlen(d->name, SK_STORE_NAME_MAX);

	put_be32(p, d->per_user_limit);
	put_be64(p + 4, d->price);
	put_be64(p + 12, (uint64_t)d->start_ns);
	put_be64(p + 20, (uint64_t)d->end_ns);
	p[28] = (uint8_t)nlen;
	memcpy(p + EVENT_DEF_LEN, d->name, nlen);
	return EVENT_VAL_LEN + rlen + EVENT_DEF_LEN + nlen;
}

int
store_event_dec(struct sk_store_event *ev, uint64_t seq, const uint8_t *v, size_t len)
{
	if (len < EVENT_VAL_LEN || v[2] > SK_STORE_REQUEST_MAX || (v[3] & ~EVENT_DEF_FLAG) != 0)
		return -EIO;

	size_t head = EVENT_VAL_LEN + (size_t)v[2];
	const uint8_t *p = v + head;
	struct sk_store_event_def *d = &ev->def;

	memset(d, 0, sizeof(*d));
	if (v[3] & EVENT_DEF_FLAG) {
		if (len < head + EVENT_DEF_LEN || p[28] > SK_STORE_NAME_MAX ||
		    len != head + EVENT_DEF_LEN + p[28])
			return -EIO;
		d->has_def = true;
		d->per_user_limit = get_be32(p);
		d->price = get_be64(p + 4);
		d->start_ns = (int64_t)get_be64(p + 12);
		d->end_ns = (int64_t)get_be64(p + 20);
		memcpy(d->name, p + EVENT_DEF_LEN, p[28]);
		d->name[p[28]] = '\0';
	} else if (len != head) {
		return -EIO;
	}
	memcpy(ev->request, v + EVENT_VAL_LEN, v[2]);
	ev->request[v[2]] = '\0';
	ev->seq = seq;
	ev->type = v[0];
	ev->nlines = v[1];
	ev->item = get_be32(v + 4);
	ev->order = get_be64(v + 8);
	ev->user = get_be64(v + 16);
	ev->units = get_be64(v + 24);
	ev->time_ns = (int64_t)get_be64(v + 32);
	return 0;
}
