/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tls_lcore.c - one lcore's server side: an SSL_CTX per certificate
 * group with the policy of sk_tls.h, and the callbacks every handshake
 * goes through (SNI, ALPN, session tickets, counting alerts and records),
 * the pool of plaintext buffers, and the client context of the load
 * generator (same policy, same counting).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "sk_tls_impl.h"

/* ------------------------------------------------------------------------ */
/* Names of the counters                                                     */
/* ------------------------------------------------------------------------ */

static const char *const alert_names[SK_TLS_ALERT_SLOTS] = {
#define SK_TLS_ALERT_NAME(name, code) [SK_TLS_ALERT_##name] = #name,
	SK_TLS_ALERT_LIST(SK_TLS_ALERT_NAME)
#undef SK_TLS_ALERT_NAME
		[SK_TLS_ALERT_OTHER] = "other",
};

const char *
sk_tls_alert_name(unsigned slot)
{
	return alert_names[slot < SK_TLS_ALERT_SLOTS ? slot : SK_TLS_ALERT_OTHER];
}

unsigned
sk_tls_alert_slot(uint8_t code)
{
	switch (code) {
#define SK_TLS_ALERT_CASE(name, c)                                                                 \
	case c:                                                                                    \
		return SK_TLS_ALERT_##name;
		SK_TLS_ALERT_LIST(SK_TLS_ALERT_CASE)
#undef SK_TLS_ALERT_CASE
	default:
		return SK_TLS_ALERT_OTHER;
	}
}

/* ------------------------------------------------------------------------ */
/* Counting callbacks (server and client)                                    */
/* ------------------------------------------------------------------------ */

void
sk_tls_info_cb(const SSL *ssl, int where, int ret)
{
	struct sk_tls_conn *t = SSL_get_app_data(ssl);

	if (t == NULL)
		return;
	if (where & SSL_CB_ALERT) {
		unsigned slot = sk_tls_alert_slot((uint8_t)(ret & 0xff));

		if (where & SSL_CB_WRITE)
			t->stats->alerts_sent[slot]++;
		else
			t->stats->alerts_received[slot]++;
	} else if ((where & SSL_CB_HANDSHAKE_START) && t->state == SK_TLS_OPEN &&
		   SSL_version(ssl) <= TLS1_2_VERSION) {
		/* A ClientHello after the handshake: OpenSSL refuses it
		 * (SSL_OP_NO_RENEGOTIATION); the connection is closed. */
		t->stats->renegotiations++;
		t->renegotiating = 1;
	}
}

void
sk_tls_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
	      void *arg)
{
	struct sk_tls_conn *t = SSL_get_app_data(ssl);

	(void)version, (void)buf, (void)len, (void)arg;
	if (t == NULL || content_type != SSL3_RT_HEADER)
		return;
	if (write_p)
		t->stats->records_out++;
	else
		t->stats->records_in++;
}

/* ------------------------------------------------------------------------ */
/* Server callbacks                                                          */
/* ------------------------------------------------------------------------ */

/* sni_cb - switch to the group whose names cover the client's server name;
 * no match (or no name): the default group, never an alert. */
static int
sni_cb(SSL *ssl, int *alert, void *arg)
{
	struct sk_tls_lcore *tl = arg;
	const struct sk_tls_certs *c = tl->certs;
	const char *host = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	unsigned wild = 0;

	(void)alert;
	if (host == NULL || c->n_groups < 2)
		return SSL_TLSEXT_ERR_OK;
	for (unsigned g = 0; g < c->n_groups; g++) {
		const struct sk_tls_pair *p = &c->pairs[c->group_first[g]];

		for (unsigned i = 0; i < p->n_names; i++) {
			if (!sk_tls_name_match(p->names[i], host))
				continue;
			if (p->names[i][0] != '*') {
				if (g != 0)
					SSL_set_SSL_CTX(ssl, tl->ctx[g]);
				return SSL_TLSEXT_ERR_OK;
			}
			if (wild == 0)
				wild = g + 1;
		}
	}
	if (wild > 1)
		SSL_set_SSL_CTX(ssl, tl->ctx[wild - 1]);
	return SSL_TLSEXT_ERR_OK;
}

/* alpn_cb - http/1.1 if offered; an offer without it is refused with the
 * no_application_protocol alert. */
static int
alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	unsigned inlen, void *arg)
{
	static const unsigned char h11[] = "http/1.1";

	(void)ssl, (void)arg;
	for (unsigned i = 0; i < inlen;) {
		unsigned n = in[i];

		if (i + 1 + n > inlen)
			break;
		if (n == sizeof(h11) - 1 && memcmp(in + i + 1, h11, n) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* ticket_cb - encrypt a new ticket with this period's key, or find the key
 * of an offered one (1: good, 2: good but renew it, 0: unknown: full
 * handshake). */
static int
ticket_cb(SSL *ssl, unsigned char name[16], unsigned char *iv, EVP_CIPHER_CTX *cctx,
	  EVP_MAC_CTX *hctx, int enc)
{
	struct sk_tls_conn *t = SSL_get_app_data(ssl);
	struct sk_tls_lcore *tl = t->tl;
	const struct sk_tls_ticket_key *k;
	OSSL_PARAM params[3];
	bool renew = false;

	sk_tls_ticket_keys_at(&tl->keys, (uint64_t)time(NULL));
	if (enc) {
		k = &tl->keys.cur;
		memcpy(name, k->name, sizeof(k->name));
		if (RAND_bytes(iv, 16) != 1 ||
		    EVP_EncryptInit_ex(cctx, tl->aes, NULL, k->aes_key, iv) != 1)
			return -1;
		tl->stats->tickets_issued++;
	} else {
		k = sk_tls_ticket_key_find(&tl->keys, name, &renew);
		if (k == NULL) {
			tl->stats->tickets_rejected++;
			return 0;
		}
		if (EVP_DecryptInit_ex(cctx, tl->aes, NULL, k->aes_key, iv) != 1)
			return -1;
	}
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)k->hmac_key,
						      sizeof(k->hmac_key));
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
	params[2] = OSSL_PARAM_construct_end();
	if (EVP_MAC_CTX_set_params(hctx, params) != 1)
		return -1;
	/* TLS 1.3 clients use a ticket once (RFC 8446, C.4): a resumption
	 * must hand out the next one, or every other reconnect is a full
	 * handshake. A TLS 1.2 ticket is renewed only when its key ages. */
	return renew || (!enc && SSL_version(ssl) == TLS1_3_VERSION) ? 2 : 1;
}

/* ctx_policy - what every context, server and client, shares. */
static int
ctx_policy(SSL_CTX *ctx, int min_version, int max_version, const char *suites)
{
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
					 SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_info_callback(ctx, sk_tls_info_cb);
	SSL_CTX_set_msg_callback(ctx, sk_tls_msg_cb);
	return SSL_CTX_set_min_proto_version(ctx, min_version) == 1 &&
			       SSL_CTX_set_max_proto_version(ctx, max_version) == 1 &&
			       SSL_CTX_set_cipher_list(ctx, SK_TLS12_CIPHERS) == 1 &&
			       SSL_CTX_set_ciphersuites(ctx, suites) == 1 &&
			       SSL_CTX_set1_groups_list(ctx, SK_TLS_GROUPS) == 1
		       ? 0
		       : -1;
}

/* server_ctx - the context of certificate group @g on @tl. */
static SSL_CTX *
server_ctx(struct sk_tls_lcore *tl, unsigned g)
{
	const struct sk_tls_certs *c = tl->certs;
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	static const unsigned char sid_ctx[] = "seckill";

	if (ctx == NULL || ctx_policy(ctx, c->min_version, TLS1_3_VERSION, c->suites) != 0 ||
	    SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1) != 1)
		goto fail;
	/* Record buffers: kept while busy, freed when idle (sk_tls_lcore_poll());
	 * answers are small, so the write buffer is 4 KiB, not 16. */
	SSL_CTX_set_max_send_fragment(ctx, 4096);
	/* Stateless tickets only; none allows early data. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 1);
	SSL_CTX_set_timeout(ctx, (long)c->keys.rotate_s);
	SSL_CTX_set_max_early_data(ctx, 0);
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_cb);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
	SSL_CTX_set_tlsext_servername_callback(ctx, sni_cb);
	SSL_CTX_set_tlsext_servername_arg(ctx, tl);
	for (unsigned i = 0; i < c->n_pairs; i++) {
		const struct sk_tls_pair *p = &c->pairs[i];

		if (p->group == g &&
		    SSL_CTX_use_cert_and_key(ctx, p->cert, p->key, p->chain, 1) != 1)
			goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return NULL;
}

SSL_CTX *
sk_tls_client_ctx(bool tls13_only, bool tls12_only)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	static const unsigned char alpn[] = "\x08http/1.1";

	if (ctx == NULL ||
	    ctx_policy(ctx, tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION,
		       tls12_only ? TLS1_2_VERSION : TLS1_3_VERSION, SK_TLS13_SUITES) != 0 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) != 0) {
		SSL_CTX_free(ctx);
		ERR_clear_error();
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS); /* a load generator's many connections */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
	return ctx;
}

/* ------------------------------------------------------------------------ */
/* Life cycle and the buffer pool                                            */
/* ------------------------------------------------------------------------ */

struct sk_tls_lcore *
sk_tls_lcore_create(const struct sk_tls_certs *certs, int socket, struct sk_tls_stats *stats)
{
	struct sk_tls_lcore *tl;
	size_t pool_bytes;

	if (certs == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	tl = rte_zmalloc_socket("sk_tls", sizeof(*tl), RTE_CACHE_LINE_SIZE, socket);
	if (tl == NULL)
		goto nomem;
	tl->stats = stats != NULL ? stats : &tl->own_stats;
	tl->certs = certs;
	tl->keys = certs->keys;
	pool_bytes = (size_t)certs->buffers * certs->buffer_size;
	tl->pool = rte_malloc_socket("sk_tls_pool", pool_bytes, RTE_CACHE_LINE_SIZE, socket);
	tl->free = rte_malloc_socket("sk_tls_free", certs->buffers * sizeof(*tl->free),
				     RTE_CACHE_LINE_SIZE, socket);
	tl->aes = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	tl->idle_cap = certs->max_conns;
	tl->idle = rte_malloc_socket("sk_tls_idle", (size_t)tl->idle_cap * sizeof(*tl->idle),
				     RTE_CACHE_LINE_SIZE, socket);
	tl->idle_tsc = rte_get_tsc_hz() / 1000 * SK_TLS_IDLE_MS;
	if (tl->pool == NULL || tl->free == NULL || tl->aes == NULL || tl->idle == NULL)
		goto nomem;
	for (uint32_t i = 0; i < certs->buffers; i++)
		tl->free[i] = tl->pool + (size_t)i * certs->buffer_size;
	tl->n_free = certs->buffers;
	for (unsigned g = 0; g < certs->n_groups; g++) {
		tl->ctx[g] = server_ctx(tl, g);
		if (tl->ctx[g] == NULL) {
			sk_tls_lcore_free(tl);
			rte_errno = EINVAL;
			return NULL;
		}
	}
	return tl;
nomem:
	sk_tls_lcore_free(tl);
	rte_errno = ENOMEM;
	return NULL;
}

void
sk_tls_lcore_free(struct sk_tls_lcore *tl)
{
	if (tl == NULL)
		return;
	for (unsigned g = 0; g < SK_TLS_CERTS_MAX; g++)
		SSL_CTX_free(tl->ctx[g]);
	EVP_CIPHER_free(tl->aes);
	OPENSSL_cleanse(&tl->keys, sizeof(tl->keys));
	rte_free(tl->idle);
	rte_free(tl->free);
	rte_free(tl->pool);
	rte_free(tl);
}

const struct sk_tls_stats *
sk_tls_lcore_stats(const struct sk_tls_lcore *tl)
{
	return tl->stats;
}

uint32_t
sk_tls_handshake_timeout_ms(const struct sk_tls_lcore *tl)
{
	return tl->certs->handshake_timeout_ms;
}

/* ------------------------------------------------------------------------ */
/* The idle ring                                                             */
/* ------------------------------------------------------------------------ */

/* idle_push - @p t at the ring's tail, due for a look at @p now + idle. */
static void
idle_push(struct sk_tls_lcore *tl, struct sk_tls_conn *t)
{
	if (sk_unlikely(tl->idle_count == tl->idle_cap)) {
		SSL_free_buffers(t->ssl); /* no room to wait: give them back now */
		return;
	}
	tl->idle[(tl->idle_head + tl->idle_count++) % tl->idle_cap] =
		(struct sk_tls_idle){.t = t, .id = t->id, .tsc = tl->now_tsc};
	t->hot = 1;
}

void
sk_tls_touch(struct sk_tls_conn *t)
{
	t->last_tsc = t->tl->now_tsc;
	if (!t->hot)
		idle_push(t->tl, t);
}

void
sk_tls_lcore_poll(struct sk_tls_lcore *tl, uint64_t now_tsc)
{
	tl->now_tsc = now_tsc;
	for (unsigned n = 0; n < SK_TLS_IDLE_BATCH && tl->idle_count != 0; n++) {
		struct sk_tls_idle e = tl->idle[tl->idle_head];
		struct sk_tls_conn *t = e.t;

		if (now_tsc - e.tsc < tl->idle_tsc)
			break; /* the head is the oldest entry: nothing is due */
		tl->idle_head = (tl->idle_head + 1) % tl->idle_cap;
		tl->idle_count--;
		if (t->id != e.id || t->ssl == NULL)
			continue; /* closed (and maybe reused) since */
		t->hot = 0;
		if (now_tsc - t->last_tsc >= tl->idle_tsc) {
			if (SSL_free_buffers(t->ssl) == 1)
				tl->stats->idle_released++;
		} else {
			idle_push(tl, t); /* busy since: look again one period on */
		}
	}
}

uint8_t *
sk_tls_buf_get(struct sk_tls_lcore *tl)
{
	if (sk_unlikely(tl->n_free == 0)) {
		tl->stats->buffer_wait++;
		return NULL;
	}
	tl->stats->buffers_used++;
	return tl->free[--tl->n_free];
}

void
sk_tls_buf_put(struct sk_tls_lcore *tl, uint8_t *buf)
{
	tl->stats->buffers_used--;
	tl->free[tl->n_free++] = buf;
}
