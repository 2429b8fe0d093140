/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_tls_io.c - the record path of one connection: a BIO over the TCP
 * connection's buffers (reads take ciphertext from the bytes on_data was
 * given, writes append to the send buffer), the handshake, decryption into
 * the plaintext buffer, encryption of answers, close_notify.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/err.h>

#include "sk_tls_impl.h"

/* ------------------------------------------------------------------------ */
/* The BIO over the TCP buffers                                              */
/* ------------------------------------------------------------------------ */

static int
bio_read(BIO *b, char *buf, int n)
{
	struct sk_tls_conn *t = BIO_get_data(b);
	size_t avail = t->in_len - t->in_used, k;

	BIO_clear_retry_flags(b);
	if (avail == 0 || n <= 0) {
		BIO_set_retry_read(b);
		return -1;
	}
	k = avail < (size_t)n ? avail : (size_t)n;
	memcpy(buf, t->in + t->in_used, k);
	t->in_used += k;
	t->stats->bytes_in += k;
	return (int)k;
}

static int
bio_write(BIO *b, const char *buf, int n)
{
	struct sk_tls_conn *t = BIO_get_data(b);
	size_t space = sk_tcp_send_space(t->tcp), k;

	BIO_clear_retry_flags(b);
	if (n <= 0)
		return 0;
	if (space == 0) {
		BIO_set_retry_write(b);
		return -1;
	}
	k = space < (size_t)n ? space : (size_t)n;
	if (sk_tcp_send(t->tcp, buf, k) != 0)
		return -1; /* the connection cannot send any more: an error */
	t->stats->bytes_out += k;
	return (int)k;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b, (void)num, (void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *bio_meth;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static void
bio_meth_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sk_tcp");

	if (m == NULL || BIO_meth_set_read(m, bio_read) != 1 ||
	    BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_ctrl(m, bio_ctrl) != 1 ||
	    BIO_meth_set_create(m, bio_create) != 1) {
		BIO_meth_free(m);
		return;
	}
	bio_meth = m;
}

BIO_METHOD *
sk_tls_bio_method(void)
{
	pthread_once(&bio_once, bio_meth_init);
	return bio_meth;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

/* conn_init - @ssl on @tcp in @t, through a BIO of our own. */
static int
conn_init(struct sk_tls_conn *t, SSL *ssl, struct sk_tcp_conn *tcp)
{
	BIO_METHOD *m = sk_tls_bio_method();
	BIO *b = m != NULL ? BIO_new(m) : NULL;

	if (b == NULL) {
		SSL_free(ssl);
		ERR_clear_error();
		return -ENOMEM;
	}
	BIO_set_data(b, t);
	SSL_set_bio(ssl, b, b);
	SSL_set_app_data(ssl, t);
	t->ssl = ssl;
	t->tcp = tcp;
	t->state = SK_TLS_HANDSHAKE;
	return 0;
}

int
sk_tls_accept(struct sk_tls_lcore *tl, struct sk_tls_conn *t, struct sk_tcp_conn *tcp)
{
	SSL *ssl;
	int rc;

	if (tl->stats->hs_inflight >= tl->certs->max_handshakes) {
		tl->stats->hs_limited++;
		return -EBUSY;
	}
	ssl = SSL_new(tl->ctx[0]);
	if (ssl == NULL) {
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_accept_state(ssl);
	t->tl = tl;
	t->id = ++tl->next_id;
	t->stats = tl->stats;
	rc = conn_init(t, ssl, tcp);
	if (rc != 0)
		return rc;
	tl->stats->hs_started++;
	tl->stats->hs_inflight++;
	return 0;
}

int
sk_tls_connect(SSL_CTX *ctx, struct sk_tls_conn *t, struct sk_tcp_conn *tcp, const char *sni,
	       SSL_SESSION *session, struct sk_tls_stats *stats, uint8_t *buf, uint32_t cap)
{
	SSL *ssl = SSL_new(ctx);
	int rc;

	if (ssl == NULL || (sni != NULL && SSL_set_tlsext_host_name(ssl, sni) != 1) ||
	    (session != NULL && SSL_set_session(ssl, session) != 1)) {
		SSL_free(ssl);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_connect_state(ssl);
	t->tl = NULL;
	t->stats = stats;
	t->plain = buf;
	t->plain_cap = cap;
	rc = conn_init(t, ssl, tcp);
	if (rc != 0)
		return rc;
	stats->hs_started++;
	stats->hs_inflight++;
	(void)SSL_do_handshake(ssl); /* the ClientHello; the answer comes in sk_tls_input() */
	ERR_clear_error();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                     */
/* ------------------------------------------------------------------------ */

/* handshake_done - count the handshake of @t by kind, version and suite. */
static void
handshake_done(struct sk_tls_conn *t)
{
	struct sk_tls_stats *s = t->stats;
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);
	int nid = c != NULL ? SSL_CIPHER_get_cipher_nid(c) : NID_undef;

	t->state = SK_TLS_OPEN;
	t->resumed = SSL_session_reused(t->ssl) != 0;
	s->hs_inflight--;
	if (t->resumed)
		s->hs_resumed++;
	else
		s->hs_full++;
	if (SSL_version(t->ssl) == TLS1_3_VERSION)
		s->tls13++;
	else
		s->tls12++;
	if (nid == NID_aes_128_gcm)
		s->suite[SK_TLS_SUITE_AES128_GCM]++;
	else if (nid == NID_aes_256_gcm)
		s->suite[SK_TLS_SUITE_AES256_GCM]++;
	else if (nid == NID_chacha20_poly1305)
		s->suite[SK_TLS_SUITE_CHACHA20]++;
	if (SSL_get_early_data_status(t->ssl) == SSL_EARLY_DATA_REJECTED)
		s->early_data++;
}

/* failed - a fatal error on @t: whatever alert OpenSSL made is queued. */
static enum sk_tls_result
failed(struct sk_tls_conn *t)
{
	if (t->state == SK_TLS_HANDSHAKE) {
		t->stats->hs_failed++;
		t->stats->hs_inflight--;
	}
	t->state = SK_TLS_CLOSED;
	ERR_clear_error();
	return SK_TLS_FAIL;
}

/* read_plain - decrypt into the plaintext buffer while it has room. */
static enum sk_tls_result
read_plain(struct sk_tls_conn *t)
{
	for (;;) {
		int n, e;

		if (t->plain == NULL) {
			t->plain = sk_tls_buf_get(t->tl); /* only a server has none */
			if (t->plain == NULL) {
				t->blocked = 1;
				return SK_TLS_AGAIN;
			}
			t->plain_cap = t->tl->certs->buffer_size;
		}
		if (t->plain_len == t->plain_cap) {
			t->blocked = 1;
			return SK_TLS_AGAIN;
		}
		n = SSL_read(t->ssl, t->plain + t->plain_len, (int)(t->plain_cap - t->plain_len));
		if (n > 0) {
			t->plain_len += (uint32_t)n;
			continue;
		}
		e = SSL_get_error(t->ssl, n);
		if (t->renegotiating)
			return failed(t);
		if (e == SSL_ERROR_WANT_READ)
			return SK_TLS_AGAIN;
		if (e == SSL_ERROR_WANT_WRITE) {
			t->blocked = 1;
			return SK_TLS_AGAIN;
		}
		if (e == SSL_ERROR_ZERO_RETURN) {
			t->peer_closed = 1;
			t->stats->closed_notify++;
			return SK_TLS_EOF;
		}
		return failed(t);
	}
}

enum sk_tls_result
sk_tls_input(struct sk_tls_conn *t, const uint8_t *data, size_t len, size_t *used)
{
	enum sk_tls_result r = SK_TLS_AGAIN;

	*used = 0;
	if (t->state == SK_TLS_CLOSED || t->ssl == NULL)
		return t->peer_closed ? SK_TLS_EOF : SK_TLS_FAIL;
	if (t->tl != NULL)
		sk_tls_touch(t);
	t->in = data;
	t->in_len = len;
	t->in_used = 0;
	t->blocked = 0;
	if (t->state == SK_TLS_HANDSHAKE) {
		int n = SSL_do_handshake(t->ssl);

		if (n == 1) {
			handshake_done(t);
		} else {
			int e = SSL_get_error(t->ssl, n);

			if (e == SSL_ERROR_WANT_WRITE)
				t->blocked = 1;
			else if (e != SSL_ERROR_WANT_READ)
				r = failed(t);
		}
	}
	if (t->state == SK_TLS_OPEN && !t->peer_closed)
		r = read_plain(t);
	if (t->in_used < t->in_len)
		t->blocked = 1;
	*used = t->in_used;
	t->in = NULL;
	t->in_len = t->in_used = 0;
	if (r == SK_TLS_AGAIN && t->plain_len != 0)
		r = SK_TLS_DATA;
	if (t->tl != NULL && t->plain != NULL && t->plain_len == 0) {
		sk_tls_buf_put(t->tl, t->plain);
		t->plain = NULL;
	}
	return r;
}

void
sk_tls_expired(struct sk_tls_conn *t)
{
	if (t->ssl == NULL || t->state != SK_TLS_HANDSHAKE)
		return;
	t->stats->hs_timeout++;
	t->stats->hs_inflight--;
	t->state = SK_TLS_CLOSED;
}

void
sk_tls_ip_refused(struct sk_tls_lcore *tl)
{
	tl->stats->hs_ip_refused++;
}

bool
sk_tls_want_resume(const struct sk_tls_conn *t)
{
	/* SSL_pending(): decrypted bytes not read yet. Not SSL_has_pending(),
	 * which is also true for a partial record: a client that stops in
	 * the middle of one would have the lcore resume it every pass. */
	if (t->ssl == NULL)
		return false;
	/* A handshake flight larger than the TCP send space waits for ACKs
	 * to make room: nothing else would call the connection again. */
	if (t->state == SK_TLS_HANDSHAKE)
		return t->blocked;
	return t->state == SK_TLS_OPEN && (t->blocked || SSL_pending(t->ssl) > 0);
}

void
sk_tls_consume(struct sk_tls_conn *t, size_t n)
{
	if (n == 0)
		return;
	if (n >= t->plain_len) {
		t->plain_len = 0;
	} else {
		t->plain_len -= (uint32_t)n;
		memmove(t->plain, t->plain + n, t->plain_len);
	}
	if (t->plain_len == 0 && t->tl != NULL && t->plain != NULL) {
		sk_tls_buf_put(t->tl, t->plain);
		t->plain = NULL;
	}
}

/* ------------------------------------------------------------------------ */
/* Output and closing                                                        */
/* ------------------------------------------------------------------------ */

size_t
sk_tls_send_space(const struct sk_tls_conn *t)
{
	size_t space = sk_tcp_send_space(t->tcp);
	size_t over = SK_TLS_RECORD_OVERHEAD * (space / SSL3_RT_MAX_PLAIN_LENGTH + 1);

	return space > over ? space - over : 0;
}

int
sk_tls_send(struct sk_tls_conn *t, const void *data, size_t len)
{
	int n;

	if (t->state != SK_TLS_OPEN)
		return -ENOTCONN;
	if (len == 0)
		return 0;
	if (len > sk_tls_send_space(t))
		return -ENOBUFS;
	if (t->tl != NULL)
		sk_tls_touch(t);
	n = SSL_write(t->ssl, data, (int)len);
	if (n != (int)len) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

void
sk_tls_shutdown(struct sk_tls_conn *t)
{
	if (t->ssl == NULL || t->state != SK_TLS_OPEN)
		return;
	t->state = SK_TLS_CLOSED;
	(void)SSL_shutdown(t->ssl); /* close_notify; the peer's is not waited for */
	ERR_clear_error();
}

void
sk_tls_release(struct sk_tls_conn *t)
{
	if (t->ssl != NULL) {
		if (t->state == SK_TLS_HANDSHAKE)
			t->stats->hs_inflight--;
		SSL_free(t->ssl);
	}
	if (t->tl != NULL && t->plain != NULL)
		sk_tls_buf_put(t->tl, t->plain);
	memset(t, 0, sizeof(*t));
}

SSL_SESSION *
sk_tls_session(const struct sk_tls_conn *t)
{
	if (t->ssl == NULL || t->state == SK_TLS_HANDSHAKE)
		return NULL;
	return SSL_get1_session(t->ssl);
}
