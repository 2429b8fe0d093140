/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_test_tls.c - the TLS fixture (sk_test_tls.h): run-time certificates
 * and two stacks back to back with tls/ on both ends.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include "sk_test_tls.h"

#define HZ     1000000000ull
#define MS     (HZ / 1000)
#define SRV_IP SK_IPV4(198, 18, 0, 1)
#define CLI_IP SK_IPV4(198, 18, 0, 100)

/* ------------------------------------------------------------------------ */
/* Certificates                                                              */
/* ------------------------------------------------------------------------ */

static EVP_PKEY *
make_key(enum sk_test_key kind)
{
	switch (kind) {
	case SK_TEST_KEY_EC256:
		return EVP_EC_gen("P-256");
	case SK_TEST_KEY_EC384:
		return EVP_EC_gen("P-384");
	case SK_TEST_KEY_RSA2048:
		return EVP_RSA_gen(2048);
	case SK_TEST_KEY_RSA1024:
		return EVP_RSA_gen(1024);
	}
	return NULL;
}

/* write_pem - @p path (mode 600) from the PEM writer @p fn of @p obj. */
static int
write_pem(const char *path, int (*fn)(BIO *, void *), void *obj)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	BIO *b;
	int ok;

	if (fd < 0)
		return -1;
	close(fd);
	b = BIO_new_file(path, "w");
	if (b == NULL)
		return -1;
	ok = fn(b, obj);
	BIO_free(b);
	return ok == 1 ? 0 : -1;
}

static int
pem_cert(BIO *b, void *x)
{
	return PEM_write_bio_X509(b, x);
}

static int
pem_key(BIO *b, void *k)
{
	return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

int
sk_test_tls_cert(const char *dir, const char *base, enum sk_test_key kind, const char *const *names,
		 unsigned n_names, int from_days, int to_days, char *cert, char *key)
{
	EVP_PKEY *pk = make_key(kind);
	X509 *x = X509_new();
	char san[1024] = "";
	X509_EXTENSION *ext = NULL;
	int rc = -1;

	snprintf(cert, PATH_MAX, "%s/%s.pem", dir, base);
	snprintf(key, PATH_MAX, "%s/%s.key", dir, base);
	if (pk == NULL || x == NULL || n_names == 0)
		goto out;
	for (unsigned i = 0; i < n_names; i++)
		snprintf(san + strlen(san), sizeof(san) - strlen(san), "%sDNS:%s", i ? "," : "",
			 names[i]);
	ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);
	if (ext == NULL || X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set(X509_get_serialNumber(x), 1) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), (long)from_days * 86400) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), (long)to_days * 86400) == NULL ||
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				       (const unsigned char *)names[0], -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(x)) != 1 ||
	    X509_add_ext(x, ext, -1) != 1 || X509_set_pubkey(x, pk) != 1 ||
	    X509_sign(x, pk, EVP_sha256()) == 0)
		goto out;
	if (write_pem(cert, pem_cert, x) != 0 || write_pem(key, pem_key, pk) != 0)
		goto out;
	rc = 0;
out:
	X509_EXTENSION_free(ext);
	X509_free(x);
	EVP_PKEY_free(pk);
	if (rc != 0)
		fprintf(stderr, "sk_test_tls_cert: cannot make %s\n", cert);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* The two ends                                                              */
/* ------------------------------------------------------------------------ */

/* live_add, live_del - track @c among @e's open connections. */
static void
live_add(struct sk_test_tls_end *e, struct sk_tcp_conn *c)
{
	for (unsigned i = 0; i < SK_TEST_TLS_CONNS; i++)
		if (e->live[i] == NULL) {
			e->live[i] = c;
			return;
		}
}

static void
live_del(struct sk_test_tls_end *e, struct sk_tcp_conn *c)
{
	for (unsigned i = 0; i < SK_TEST_TLS_CONNS; i++)
		if (e->live[i] == c)
			e->live[i] = NULL;
}

static uint16_t
wire_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sk_test_tls_wire *w = ctx;
	uint16_t i;

	for (i = 0; i < n && w->n < SK_TEST_TLS_WIRE; i++)
		w->q[w->n++] = pkts[i];
	return i;
}

static void
end_open(void *app, struct sk_tcp_conn *c)
{
	struct sk_test_tls_end *e = app;
	struct sk_test_tls_pair *p = e->pair;
	struct sk_test_tls_conn *tc = sk_tcp_app_data(c);

	e->opened++; /* the server's only: an active open gets no on_open */
	live_add(e, c);
	if (sk_tls_accept(p->tl, &tc->tls, c) != 0)
		sk_tcp_abort(c);
}

/* srv_data - feed at most feed_max bytes; gather and echo the plaintext. */
static size_t
srv_data(struct sk_test_tls_pair *p, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct sk_tls_conn *t = &((struct sk_test_tls_conn *)sk_tcp_app_data(c))->tls;
	size_t feed = len < p->feed_max ? len : p->feed_max, used, plen;
	enum sk_tls_result r = sk_tls_input(t, data, feed, &used);
	const uint8_t *plain = sk_tls_plain(t, &plen);

	if (r == SK_TLS_FAIL) {
		p->srv_fail++;
		sk_tcp_close(c);
		return len;
	}
	if (plen != 0) {
		char reply[600];
		size_t n = plen < 512 ? plen : 512;

		if (p->got_len + plen <= sizeof(p->got)) {
			memcpy(p->got + p->got_len, plain, plen);
			p->got_len += plen;
		}
		memcpy(reply, "echo:", 5);
		memcpy(reply + 5, plain, n);
		if (p->echo && sk_tls_send(t, reply, 5 + n) != 0)
			fprintf(stderr, "srv_data: sk_tls_send failed\n");
		sk_tls_consume(t, plen);
	}
	if (r == SK_TLS_EOF) {
		p->srv_eof++;
		sk_tls_shutdown(t);
		sk_tcp_close(c);
		return len;
	}
	if (sk_tcp_peer_closed(c)) { /* an unfinished handshake or a raw peer left */
		sk_tcp_close(c);
		return len;
	}
	if (used < len || sk_tls_want_resume(t)) {
		p->resumes++;
		sk_tcp_resume(c);
	}
	return used;
}

static size_t
cli_data(struct sk_test_tls_pair *p, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct sk_tls_conn *t = &((struct sk_test_tls_conn *)sk_tcp_app_data(c))->tls;
	size_t used, plen;
	enum sk_tls_result r;
	const uint8_t *plain;

	if (p->cli_raw) {
		if (sk_tcp_peer_closed(c))
			sk_tcp_close(c);
		return len;
	}
	r = sk_tls_input(t, data, len, &used);
	plain = sk_tls_plain(t, &plen);
	if (plen != 0 && p->cgot_len + plen <= sizeof(p->cgot)) {
		memcpy(p->cgot + p->cgot_len, plain, plen);
		p->cgot_len += plen;
	}
	sk_tls_consume(t, plen);
	if (r == SK_TLS_FAIL || r == SK_TLS_EOF) {
		if (r == SK_TLS_FAIL)
			p->cli_fail++;
		else
			p->cli_eof++;
		sk_tcp_close(c);
		return len;
	}
	if (sk_tcp_peer_closed(c))
		sk_tcp_close(c);
	if (used < len || sk_tls_want_resume(t)) {
		p->resumes++;
		sk_tcp_resume(c);
	}
	return used;
}

static size_t
end_data(void *app, struct sk_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct sk_test_tls_end *e = app;

	return e->server ? srv_data(e->pair, c, data, len) : cli_data(e->pair, c, data, len);
}

static void
end_close(void *app, struct sk_tcp_conn *c)
{
	struct sk_test_tls_end *e = app;

	e->closed++;
	live_del(e, c);
	sk_tls_release(&((struct sk_test_tls_conn *)sk_tcp_app_data(c))->tls);
}

static const struct sk_net_app_ops end_ops = {end_open, end_data, end_close, NULL};

static int
end_create(struct sk_test_tls_pair *p, struct sk_test_tls_end *e, bool server,
	   struct rte_mempool *pool)
{
	struct sk_net_conf conf;

	sk_net_conf_defaults(&conf);
	e->server = server;
	e->pair = p;
	conf.ip = server ? SRV_IP : CLI_IP;
	conf.tcp_port = server ? 443 : 0;
	conf.mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, server ? 1 : 2}};
	conf.max_conns = SK_TEST_TLS_CONNS;
	conf.timer_slots = 256;
	conf.tsc_hz = HZ;
	conf.snd_buf_size = server ? p->srv_snd_buf : 16384;
	conf.app_data_size = sizeof(struct sk_test_tls_conn);
	conf.tx_fn = wire_tx;
	conf.tx_ctx = &e->out;
	if (!server)
		conf.gateway = SRV_IP;
	for (int i = 0; i < SK_NET_COOKIE_SECRET_LEN; i++)
		conf.cookie_secret[i] = (uint8_t)(i + (server ? 1 : 2));
	e->net = sk_net_lcore_create(&conf, 0, pool, SOCKET_ID_ANY, &end_ops, e);
	return e->net != NULL ? 0 : -1;
}

int
sk_test_tls_pump(struct sk_test_tls_pair *p)
{
	for (int round = 0; round < 1000; round++) {
		struct sk_test_tls_wire a = p->cli.out, b = p->srv.out;
		unsigned resumes = p->resumes;

		p->now += MS;
		p->cli.out.n = 0;
		p->srv.out.n = 0;
		sk_net_rx(p->srv.net, a.q, (uint16_t)a.n, p->now);
		sk_net_rx(p->cli.net, b.q, (uint16_t)b.n, p->now);
		sk_net_timers(p->cli.net, p->now);
		sk_net_timers(p->srv.net, p->now);
		sk_tls_lcore_poll(p->tl, p->now);
		sk_net_tx_flush(p->cli.net);
		sk_net_tx_flush(p->srv.net);
		if (p->cli.out.n == 0 && p->srv.out.n == 0 && p->resumes == resumes)
			return 0;
	}
	fprintf(stderr, "sk_test_tls_pump: the two stacks never went quiet\n");
	return -1;
}

/* pair_init - the pair, the server's send buffer @p snd bytes. */
static int
pair_init(struct sk_test_tls_pair *p, struct rte_mempool *pool, const struct sk_tls_certs *certs,
	  bool tls13_only, bool tls12_only, uint32_t snd)
{
	memset(p, 0, sizeof(*p));
	p->srv_snd_buf = snd;
	p->now = 1000000ull * MS;
	p->feed_max = SIZE_MAX;
	p->echo = true;
	p->tl = sk_tls_lcore_create(certs, SOCKET_ID_ANY, NULL);
	p->cctx = sk_tls_client_ctx(tls13_only, tls12_only);
	if (p->tl == NULL || p->cctx == NULL || end_create(p, &p->srv, true, pool) != 0 ||
	    end_create(p, &p->cli, false, pool) != 0)
		return -1;
	/* The client resolves its gateway, the server, first. */
	if (sk_test_tls_pump(p) != 0 || sk_net_arp_lookup(p->cli.net, SRV_IP, &p->srv_mac) != 0) {
		fprintf(stderr, "sk_test_tls_pair_init: the server is not resolved\n");
		return -1;
	}
	return 0;
}

int
sk_test_tls_pair_init(struct sk_test_tls_pair *p, struct rte_mempool *pool,
		      const struct sk_tls_certs *certs, bool tls13_only, bool tls12_only)
{
	return pair_init(p, pool, certs, tls13_only, tls12_only, 16384);
}

int
sk_test_tls_pair_init_snd(struct sk_test_tls_pair *p, struct rte_mempool *pool,
			  const struct sk_tls_certs *certs, uint32_t srv_snd_buf)
{
	return pair_init(p, pool, certs, false, false, srv_snd_buf);
}

struct sk_tcp_conn *
sk_test_tls_connect(struct sk_test_tls_pair *p, uint16_t port)
{
	struct sk_tcp_conn *c = sk_tcp_connect(p->cli.net, CLI_IP, port, SRV_IP, 443, &p->srv_mac);
	struct sk_test_tls_conn *tc;

	if (c == NULL)
		return NULL;
	tc = sk_tcp_app_data(c);
	live_add(&p->cli, c);
	/* The ClientHello is queued now and leaves with the handshake's ACK. */
	if (!p->cli_raw && sk_tls_connect(p->cctx, &tc->tls, c, p->sni, p->session, &p->cstats,
					  tc->plain, sizeof(tc->plain)) != 0)
		return NULL;
	if (sk_test_tls_pump(p) != 0)
		return NULL;
	p->last_cli = c;
	return c;
}

struct sk_tls_conn *
sk_test_tls_cli(struct sk_tcp_conn *c)
{
	return &((struct sk_test_tls_conn *)sk_tcp_app_data(c))->tls;
}

void
sk_test_tls_pair_free(struct sk_test_tls_pair *p)
{
	if (p->srv.net != NULL && p->cli.net != NULL) {
		for (unsigned i = 0; i < SK_TEST_TLS_CONNS; i++) {
			if (p->cli.live[i] != NULL)
				sk_tcp_abort(p->cli.live[i]);
			if (p->srv.live[i] != NULL)
				sk_tcp_abort(p->srv.live[i]);
		}
		(void)sk_test_tls_pump(p);
	}
	for (unsigned i = 0; i < p->cli.out.n; i++)
		rte_pktmbuf_free(p->cli.out.q[i]);
	for (unsigned i = 0; i < p->srv.out.n; i++)
		rte_pktmbuf_free(p->srv.out.q[i]);
	p->cli.out.n = p->srv.out.n = 0;
	sk_net_lcore_free(p->cli.net);
	sk_net_lcore_free(p->srv.net);
	sk_tls_lcore_free(p->tl);
	SSL_CTX_free(p->cctx);
	p->cli.net = p->srv.net = NULL;
	p->tl = NULL;
	p->cctx = NULL;
}
