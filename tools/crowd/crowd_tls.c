/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_tls.c - --tls: OpenSSL straight on the crowd's non-blocking kernel
 * sockets (SSL_set_fd). A WANT_READ or WANT_WRITE of OpenSSL becomes the
 * connection's epoll interest; the handshake is a state of the connection
 * (CS_HANDSHAKE) between the TCP connect and the first request. With
 * --tls-resume each connection keeps the last session the server gave it
 * (a TLS 1.3 ticket arrives after the handshake, hence the new-session
 * callback) and offers it when it reconnects.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "sk_log.h"

#include "crowd.h"

/* ALPN: HTTP/1.1 only, in the wire format (length, name). */
static const unsigned char alpn_http11[] = "\x08http/1.1";

/* new_session - keep the session the server just gave @ssl on its connection. */
static int
new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct conn *c = SSL_get_app_data(ssl);

	if (c == NULL)
		return 0;
	if (c->sess != NULL)
		SSL_SESSION_free(c->sess);
	c->sess = sess;
	return 1; /* the reference is ours now */
}

/* verify_name - with --cacert, the name (--sni) or else the address to check. */
static int
verify_name(const struct opts *o, X509_VERIFY_PARAM *vp)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&o->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&o->addr;

	if (o->sni != NULL)
		return X509_VERIFY_PARAM_set1_host(vp, o->sni, 0);
	if (o->addr.ss_family == AF_INET)
		return X509_VERIFY_PARAM_set1_ip(vp, (const unsigned char *)&a4->sin_addr, 4);
	return X509_VERIFY_PARAM_set1_ip(vp, (const unsigned char *)&a6->sin6_addr, 16);
}

int
crowd_tls_init(struct crowd *cw)
{
	const struct opts *o = &cw->o;
	SSL_CTX *ctx;
	int minv = o->tls_version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION;
	int maxv = o->tls_version == 12 ? TLS1_2_VERSION : TLS1_3_VERSION;

	if (!o->tls)
		return 0;
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		sk_log(PROG, "--tls: cannot create an OpenSSL context");
		return EXIT_RUNTIME;
	}
	cw->tls_ctx = ctx;
	if (SSL_CTX_set_min_proto_version(ctx, minv) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, maxv) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof(alpn_http11) - 1) != 0) {
		sk_log(PROG, "--tls: cannot set the versions or ALPN");
		return EXIT_RUNTIME;
	}
	/* A FIN without close_notify ends the stream like close_notify does:
	 * the HTTP framing (Content-Length) says whether an answer was cut. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
	if (o->tls_resume) {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
							    SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(ctx, new_session);
	} else {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	}
	if (o->cacert != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, o->cacert, NULL) != 1) {
			unsigned long e = ERR_get_error();
			sk_log(PROG, "--cacert %s: %s", o->cacert,
			       e ? ERR_reason_error_string(e) : "cannot load");
			ERR_clear_error();
			return EXIT_USAGE;
		}
		if (verify_name(o, SSL_CTX_get0_param(ctx)) != 1) {
			sk_log(PROG, "--cacert: cannot set the name to verify");
			return EXIT_RUNTIME;
		}
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	} else {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	}
	return 0;
}

void
crowd_tls_fini(struct crowd *cw)
{
	for (uint32_t i = 0; cw->conns != NULL && i < cw->o.conns; i++) {
		crowd_tls_close(&cw->conns[i], false);
		if (cw->conns[i].sess != NULL)
			SSL_SESSION_free(cw->conns[i].sess);
		cw->conns[i].sess = NULL;
	}
	SSL_CTX_free(cw->tls_ctx);
	cw->tls_ctx = NULL;
}

/*
 * tls_error - the reason of the last OpenSSL error of @c, in @buf; with
 * @verify (--cacert), a refused certificate first. (Without verification
 * the result of the chain check is kept too, but did not matter.)
 */
static const char *
tls_error(const struct conn *c, bool verify, int err, char *buf, size_t cap)
{
	unsigned long e = ERR_get_error();
	long v = verify && c->ssl != NULL ? SSL_get_verify_result(c->ssl) : X509_V_OK;

	if (v != X509_V_OK)
		snprintf(buf, cap, "certificate: %s", X509_verify_cert_error_string(v));
	else if (e != 0)
		snprintf(buf, cap, "%s", ERR_reason_error_string(e));
	else if (err == SSL_ERROR_SYSCALL && errno != 0)
		snprintf(buf, cap, "%s", strerror(errno));
	else
		snprintf(buf, cap, "the server closed the connection");
	ERR_clear_error();
	return buf;
}

void
crowd_tls_start(struct crowd *cw, struct conn *c, uint64_t now)
{
	SSL *ssl = SSL_new(cw->tls_ctx);

	if (ssl == NULL || SSL_set_fd(ssl, c->fd) != 1 ||
	    (cw->o.sni != NULL && SSL_set_tlsext_host_name(ssl, cw->o.sni) != 1)) {
		SSL_free(ssl);
		ERR_clear_error();
		cw->st.tls_failed++;
		crowd_conn_setup_failed(cw, c, "cannot create a TLS connection", now);
		return;
	}
	SSL_set_app_data(ssl, c);
	SSL_set_connect_state(ssl);
	c->tls_offered = false;
	if (c->sess != NULL) {
		/* an unusable session (expired, other version) just means a full
		 * handshake; the server's next ticket replaces it */
		c->tls_offered =
			SSL_SESSION_is_resumable(c->sess) && SSL_set_session(ssl, c->sess) == 1;
		ERR_clear_error();
	}
	c->ssl = ssl;
	c->tls_out = false;
	c->state = CS_HANDSHAKE;
	crowd_tls_handshake(cw, c, now);
}

void
crowd_tls_handshake(struct crowd *cw, struct conn *c, uint64_t now)
{
	char why[200], msg[96];
	int rc, err;

	ERR_clear_error();
	rc = SSL_do_handshake(c->ssl);
	if (rc == 1) {
		cw->st.tls_offered += c->tls_offered;
		if (SSL_session_reused(c->ssl))
			cw->st.tls_resumed++;
		else
			cw->st.tls_full++;
		if (SSL_version(c->ssl) == TLS1_3_VERSION)
			cw->st.tls13++;
		else
			cw->st.tls12++;
		c->tls_out = false;
		crowd_conn_ready(cw, c, now);
		return;
	}
	err = SSL_get_error(c->ssl, rc);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
		crowd_conn_want_out(cw, c, err == SSL_ERROR_WANT_WRITE);
		return;
	}
	cw->st.tls_failed++;
	snprintf(why, sizeof(why), "TLS handshake with %s: %s", cw->o.host,
		 tls_error(c, cw->o.cacert != NULL, err, msg, sizeof(msg)));
	crowd_conn_setup_failed(cw, c, why, now);
}

/* tls_result - SSL_read()/SSL_write() result @rc on @c in recv()/send() terms. */
static ssize_t
tls_result(struct conn *c, int rc)
{
	int err;

	if (rc > 0)
		return rc;
	err = SSL_get_error(c->ssl, rc);
	c->tls_out = err == SSL_ERROR_WANT_WRITE;
	switch (err) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (errno == 0)
			return 0;
		return -1;
	default:
		ERR_clear_error();
		errno = EPROTO;
		return -1;
	}
}

ssize_t
crowd_tls_send(struct conn *c, const void *buf, size_t len)
{
	ERR_clear_error();
	errno = 0;
	return tls_result(c, SSL_write(c->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len));
}

ssize_t
crowd_tls_recv(struct conn *c, void *buf, size_t cap)
{
	ERR_clear_error();
	errno = 0;
	return tls_result(c, SSL_read(c->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap));
}

bool
crowd_tls_pending(const struct conn *c)
{
	return c->ssl != NULL && SSL_pending(c->ssl) > 0;
}

void
crowd_tls_close(struct conn *c, bool graceful)
{
	if (c->ssl == NULL)
		return;
	if (graceful && SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl);
	SSL_free(c->ssl);
	ERR_clear_error();
	c->ssl = NULL;
	c->tls_out = false;
}
