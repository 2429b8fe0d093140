/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lg_tls.c - the TLS client side of seckill-loadgen (see lg_tls.h): the
 * client slots, their plaintext buffers and sessions, the handshake counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <rte_malloc.h>

#include "sk_common.h"

#include "lg_tls.h"

struct lg_tls {
	struct sk_tls_stats stats; /* tls/ counts the client's handshakes, records, alerts */
	SSL_CTX *ctx;
	const char *sni;
	bool resume;
	uint32_t buf_size;
	uint32_t nslots;
	uint8_t *bufs;		/* nslots x buf_size: calloc'd, mapped on first use */
	SSL_SESSION **sessions; /* per slot: the session to resume, or NULL */
	uint32_t *free;		/* stack of free slots */
	uint32_t nfree;
	uint64_t failed; /* handshakes that never completed (lg_tls_closed()) */
};

struct lg_tls *
lg_tls_create(const struct lg_opts *o, uint32_t buf_size, int socket, char *err, size_t errlen)
{
	struct lg_tls *lt;

	lt = rte_zmalloc_socket("lg_tls", sizeof(*lt), RTE_CACHE_LINE_SIZE, socket);
	if (lt == NULL) {
		sk_set_err(err, errlen, "out of memory (TLS state)");
		return NULL;
	}
	lt->sni = o->sni;
	lt->resume = o->tls_resume;
	lt->buf_size = buf_size;
	lt->nslots = o->conns;
	lt->ctx = sk_tls_client_ctx(o->tls_version == 13, o->tls_version == 12);
	if (lt->ctx == NULL) {
		sk_set_err(err, errlen, "TLS client context: %s",
			   ERR_reason_error_string(ERR_get_error()));
		goto err;
	}
	/* A run of 10^6 connections reserves gigabytes here: calloc maps the
	 * pages of the slots that are used, hugepages would pin all of them. */
	lt->bufs = calloc(lt->nslots, buf_size);
	lt->sessions = calloc(lt->nslots, sizeof(*lt->sessions));
	lt->free = malloc(sizeof(*lt->free) * lt->nslots);
	if (lt->bufs == NULL || lt->sessions == NULL || lt->free == NULL) {
		sk_set_err(err, errlen, "out of memory (%u TLS slots of %u bytes)", lt->nslots,
			   buf_size);
		goto err;
	}
	/* slot 0 on top: the first connections take the low slots */
	for (uint32_t i = 0; i < lt->nslots; i++)
		lt->free[i] = lt->nslots - 1 - i;
	lt->nfree = lt->nslots;
	return lt;
err:
	lg_tls_free(lt);
	return NULL;
}

void
lg_tls_free(struct lg_tls *lt)
{
	if (lt == NULL)
		return;
	for (uint32_t i = 0; lt->sessions != NULL && i < lt->nslots; i++)
		SSL_SESSION_free(lt->sessions[i]);
	free(lt->sessions);
	free(lt->free);
	free(lt->bufs);
	SSL_CTX_free(lt->ctx);
	rte_free(lt);
}

/*
 * offer - what a connection of @slot offers to resume: a copy of the slot's
 * session, or NULL. OpenSSL's TLS 1.3 client uses a session once (RFC
 * 8446, C.4: a ticket should not be reused) and marks it not resumable
 * when the resumed connection ends; the server, stateless, takes the same
 * ticket again. The copy is what gets used up, so every later connection
 * of the slot resumes from its first handshake's ticket, in TLS 1.2 and
 * 1.3 alike. One allocation per connection, beside SSL_new()'s.
 */
static SSL_SESSION *
offer(const struct lg_tls *lt, uint32_t slot)
{
	SSL_SESSION *s = lt->resume ? lt->sessions[slot] : NULL;

	return s != NULL ? SSL_SESSION_dup(s) : NULL;
}

int
lg_tls_open(struct lg_tls *lt, struct lg_tls_conn *tc, struct sk_tcp_conn *tcp)
{
	SSL_SESSION *sess;
	uint32_t slot;
	int rc;

	if (lt->nfree == 0)
		return -ENOSPC;
	slot = lt->free[--lt->nfree];
	sess = offer(lt, slot);
	rc = sk_tls_connect(lt->ctx, &tc->t, tcp, lt->sni, sess, &lt->stats,
			    lt->bufs + (size_t)slot * lt->buf_size, lt->buf_size);
	SSL_SESSION_free(sess); /* the SSL holds its own reference */
	if (rc != 0) {
		sk_tls_release(&tc->t);
		lt->free[lt->nfree++] = slot;
		return rc;
	}
	tc->slot = slot;
	tc->active = 1;
	return 0;
}

enum sk_tls_result
lg_tls_input(struct lg_tls *lt, struct lg_tls_conn *tc, const uint8_t *data, size_t len,
	     size_t *used, bool *opened)
{
	uint64_t done = lt->stats.hs_full + lt->stats.hs_resumed;
	enum sk_tls_result r = sk_tls_input(&tc->t, data, len, used);

	/* tls/ counted it if the handshake completed in this call */
	*opened = lt->stats.hs_full + lt->stats.hs_resumed != done;
	tc->hs_done |= *opened;
	if (r == SK_TLS_FAIL)
		tc->failed = 1;
	return r;
}

/* keep_session - the slot's session for resumption: this connection's,
 * unless it resumed the one the slot holds (its first handshake's). */
static void
keep_session(struct lg_tls *lt, struct lg_tls_conn *tc)
{
	SSL_SESSION **kept = &lt->sessions[tc->slot], *s;

	if (*kept != NULL && sk_tls_is_resumed(&tc->t))
		return;
	s = sk_tls_session(&tc->t);
	if (s == NULL)
		return;
	if (!SSL_SESSION_is_resumable(s)) { /* TLS 1.3: no ticket came */
		SSL_SESSION_free(s);
		return;
	}
	SSL_SESSION_free(*kept);
	*kept = s;
}

void
lg_tls_closed(struct lg_tls *lt, struct lg_tls_conn *tc, bool ours)
{
	if (!tc->active)
		return;
	if (!tc->hs_done && (tc->failed || !ours))
		lt->failed++;
	if (lt->resume && tc->hs_done)
		keep_session(lt, tc);
	sk_tls_release(&tc->t);
	lt->free[lt->nfree++] = tc->slot;
	memset(tc, 0, sizeof(*tc));
}

void
lg_tls_counts(const struct lg_tls *lt, struct lg_tls_counts *out)
{
	*out = (struct lg_tls_counts){
		.full = lt->stats.hs_full,
		.resumed = lt->stats.hs_resumed,
		.failed = lt->failed,
		.tls12 = lt->stats.tls12,
		.tls13 = lt->stats.tls13,
	};
	for (unsigned i = 1; i < SK_TLS_ALERT_SLOTS; i++) /* slot 0: close_notify */
		out->alerts_received += lt->stats.alerts_received[i];
}
