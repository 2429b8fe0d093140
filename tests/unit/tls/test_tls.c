/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tls.c - tls/ over two TCP stacks back to back (sk_test_tls.h): full
 * handshakes of both versions and an echo, the record path with the
 * ciphertext split at every byte (application records and the
 * ClientHello), a message larger than the plaintext buffer, resumption on
 * another lcore and with an unknown ticket key, the ticket-key rotation,
 * SNI and the key type, ALPN h2 refused, garbage and an oversized record,
 * the handshake cap, and the checks of the certificate loader.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <openssl/x509.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "sk_test.h"
#include "sk_test_eal.h"
#include "sk_test_fs.h"
#include "sk_test_tls.h"

static struct rte_mempool *pool;
static char dir[PATH_MAX];
static char ec_crt[PATH_MAX], ec_key[PATH_MAX];	  /* shop.test, P-256 */
static char rsa_crt[PATH_MAX], rsa_key[PATH_MAX]; /* shop.test, RSA 2048 */
static char oth_crt[PATH_MAX], oth_key[PATH_MAX]; /* other.test, P-256 */
static struct sk_test_tls_pair P;
static struct sk_tls_certs *certs; /* of the running test */
static unsigned avail0;		   /* free mbufs before it */

/* load - certificates for @conf's pairs; asserted to load. */
static struct sk_tls_certs *
load(struct sk_tls_conf *conf)
{
	struct sk_tls_certs *c = NULL;
	char err[SK_TLS_ERR_MAX] = "";
	int rc = sk_tls_certs_load(conf, &c, err, sizeof(err));

	ck_assert_msg(rc == 0, "sk_tls_certs_load: %d %s", rc, err);
	return c;
}

/* conf_ec - the defaults with the P-256 pair of shop.test. */
static void
conf_ec(struct sk_tls_conf *conf)
{
	sk_tls_conf_defaults(conf);
	conf->cert[0] = ec_crt;
	conf->key[0] = ec_key;
	conf->n_certs = 1;
	conf->buffer_size = 1024;
}

static const struct sk_tls_stats *
srv(void)
{
	return sk_tls_lcore_stats(P.tl);
}

/* send_pump - the client sends @s as one record; both stacks run. */
static void
send_pump(struct sk_tcp_conn *c, const char *s)
{
	ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), s, strlen(s)), 0);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
}

/* pair_end - close @c from the client (close_notify, FIN), run, and check
 * that nothing is left: no handshake in progress, no buffer held, no mbuf. */
static void
pair_end(struct sk_tcp_conn *c)
{
	if (c != NULL) {
		sk_tls_shutdown(sk_test_tls_cli(c));
		sk_tcp_close(c);
		for (int i = 0; i < 3000; i++)
			ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	}
	ck_assert_uint_eq(srv()->hs_inflight, 0);
	ck_assert_uint_eq(srv()->buffers_used, 0);
	sk_test_tls_pair_free(&P);
	sk_tls_certs_free(certs);
	ck_assert_uint_eq(rte_mempool_avail_count(pool), avail0);
}

/* begin - the pair on @p conf's certificates, the client offering TLS 1.3
 * only (@p tls13), 1.2 only (@p tls12) or both. */
static void
begin(const struct sk_tls_conf *conf, bool tls13, bool tls12)
{
	avail0 = rte_mempool_avail_count(pool);
	certs = load((struct sk_tls_conf *)conf);
	ck_assert_int_eq(sk_test_tls_pair_init(&P, pool, certs, tls13, tls12), 0);
}

/* begin_ec - begin() with conf_ec()'s certificate. */
static void
begin_ec(bool tls13, bool tls12)
{
	struct sk_tls_conf conf;

	conf_ec(&conf);
	begin(&conf, tls13, tls12);
}

/* connect_ok - a client connection from @p port, asserted. */
static struct sk_tcp_conn *
connect_ok(uint16_t port)
{
	struct sk_tcp_conn *c = sk_test_tls_connect(&P, port);

	ck_assert_ptr_nonnull(c);
	return c;
}

/* ------------------------------------------------------------------------ */
/* Handshakes and the echo                                                   */
/* ------------------------------------------------------------------------ */

/* handshake_echo - @version only: a full handshake, one echo, a clean close. */
static void
handshake_echo(bool tls13)
{
	struct sk_tcp_conn *c;

	begin_ec(tls13, !tls13);
	c = connect_ok(40000);
	ck_assert_uint_eq(srv()->hs_full, 1);
	ck_assert_uint_eq(P.cstats.hs_full, 1);
	ck_assert_uint_eq(tls13 ? srv()->tls13 : srv()->tls12, 1);
	ck_assert_uint_eq(srv()->suite[SK_TLS_SUITE_AES128_GCM], 1);
	send_pump(c, "ping");
	ck_assert_uint_eq(P.got_len, 4);
	ck_assert_mem_eq(P.got, "ping", 4);
	ck_assert_uint_eq(P.cgot_len, 9);
	ck_assert_mem_eq(P.cgot, "echo:ping", 9);
	ck_assert_uint_ge(srv()->records_in, 3);
	ck_assert_uint_ge(srv()->bytes_out, 400);
	pair_end(c);
	/* The client's close_notify was read; the server answered with its own. */
	ck_assert_int_eq(P.srv_eof, 1);
}

START_TEST(handshake_echo_tls13)
{
	handshake_echo(true);
}
END_TEST

START_TEST(handshake_echo_tls12)
{
	handshake_echo(false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The record path, split at every byte                                      */
/* ------------------------------------------------------------------------ */

/*
 * records_split - two records sent at once reach the server's TLS in chunks
 * of k bytes (the rest waits in TCP), for every k from 1 to both records'
 * length: the plaintext is whole and in order every time.
 */
static void
records_split(bool tls13)
{
	struct sk_tcp_conn *c;
	uint64_t before;
	size_t total;

	begin_ec(tls13, !tls13);
	P.echo = false;
	c = connect_ok(40001);
	before = P.cstats.bytes_out;
	ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), "first-record", 12), 0);
	ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), "second-record-xyz", 17), 0);
	total = (size_t)(P.cstats.bytes_out - before);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	ck_assert_uint_eq(P.got_len, 29);
	for (size_t k = 1; k <= total; k++) {
		P.got_len = 0;
		P.feed_max = k;
		ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), "first-record", 12), 0);
		ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), "second-record-xyz", 17), 0);
		ck_assert_int_eq(sk_test_tls_pump(&P), 0);
		ck_assert_msg(P.got_len == 29, "split at %zu: %zu bytes", k, P.got_len);
		ck_assert_mem_eq(P.got, "first-recordsecond-record-xyz", 29);
	}
	ck_assert_int_eq(P.srv_fail, 0);
	P.feed_max = SIZE_MAX;
	pair_end(c);
}

START_TEST(records_split_tls13)
{
	records_split(true);
}
END_TEST

START_TEST(records_split_tls12)
{
	records_split(false);
}
END_TEST

/* The handshake itself fed in chunks of k bytes (ClientHello split). */
START_TEST(handshake_split)
{
	static const size_t ks[] = {1, 2, 4, 5, 6, 7, 9, 64, 200};

	begin_ec(false, false);
	for (size_t i = 0; i < SK_ARRAY_SIZE(ks); i++) {
		struct sk_tcp_conn *c;

		P.feed_max = ks[i];
		P.got_len = P.cgot_len = 0;
		c = sk_test_tls_connect(&P, (uint16_t)(41000 + i));
		ck_assert_ptr_nonnull(c);
		ck_assert_uint_eq(srv()->hs_full, i + 1);
		send_pump(c, "hello");
		ck_assert_uint_eq(P.got_len, 5);
		ck_assert_uint_eq(P.cgot_len, 10);
		sk_tls_shutdown(sk_test_tls_cli(c));
		sk_tcp_close(c);
		ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	}
	P.feed_max = SIZE_MAX;
	pair_end(NULL);
}
END_TEST

/*
 * A connection idle for SK_TLS_IDLE_MS gives its record buffers back (a
 * busy one keeps them), and works as before on its next request.
 */
START_TEST(idle_buffers_released)
{
	struct sk_tcp_conn *c;

	begin_ec(true, false);
	c = connect_ok(40003);
	send_pump(c, "a");
	ck_assert_uint_eq(srv()->idle_released, 0);
	/* The stacks' time is 1 GHz; the idle period is SK_TLS_IDLE_MS of the
	 * real TSC: pump (1 ms a round) through two of those, at most. */
	for (int ms = 0; ms < 4 * SK_TLS_IDLE_MS * (int)(rte_get_tsc_hz() / 1000000000 + 1) &&
			 srv()->idle_released == 0;
	     ms++)
		ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	ck_assert_uint_eq(srv()->idle_released, 1);
	send_pump(c, "b");
	ck_assert_uint_eq(P.got_len, 2);
	ck_assert_mem_eq(P.cgot, "echo:aecho:b", 12);
	pair_end(c);
}
END_TEST

/*
 * A server flight larger than the TCP send buffer (the RSA pair's, into
 * 512 bytes): OpenSSL waits for room, and the connection is resumed until
 * the client's ACKs make it, instead of stalling until the deadline.
 */
START_TEST(flight_larger_than_send_buffer)
{
	struct sk_tls_conf conf;
	struct sk_tcp_conn *c;

	conf_ec(&conf);
	conf.cert[0] = rsa_crt;
	conf.key[0] = rsa_key;
	avail0 = rte_mempool_avail_count(pool);
	certs = load(&conf);
	ck_assert_int_eq(sk_test_tls_pair_init_snd(&P, pool, certs, 512), 0);
	c = connect_ok(40004);
	ck_assert_uint_eq(srv()->hs_full, 1);
	send_pump(c, "after");
	ck_assert_uint_eq(P.got_len, 5);
	ck_assert_uint_eq(P.cgot_len, 10);
	pair_end(c);
}
END_TEST

/* A record larger than the plaintext buffer (1 KiB) arrives whole, in order. */
START_TEST(larger_than_buffer)
{
	struct sk_tcp_conn *c;
	char msg[3000];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (char)('a' + i % 26);
	begin_ec(true, false);
	P.echo = false;
	c = connect_ok(40002);
	ck_assert_int_eq(sk_tls_send(sk_test_tls_cli(c), msg, sizeof(msg)), 0);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	ck_assert_uint_eq(P.got_len, sizeof(msg));
	ck_assert_mem_eq(P.got, msg, sizeof(msg));
	pair_end(c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Resumption and the ticket keys                                            */
/* ------------------------------------------------------------------------ */

/*
 * resume_on - a full handshake on the pair's lcore, then a connection to
 * @other (another lcore of the same or other certificates) offering the
 * session: resumed when @expect_resumed.
 */
static void
resume_on(bool tls13, struct sk_tls_certs *other_certs, bool expect_resumed)
{
	struct sk_tls_lcore *first, *other;
	struct sk_tcp_conn *c;
	SSL_SESSION *sess;

	begin_ec(tls13, !tls13);
	c = connect_ok(40010);
	send_pump(c, "one"); /* TLS 1.3: the ticket arrives after the handshake */
	sess = sk_tls_session(sk_test_tls_cli(c));
	ck_assert_ptr_nonnull(sess);
	ck_assert_uint_eq(srv()->tickets_issued, 1);
	sk_tls_shutdown(sk_test_tls_cli(c));
	sk_tcp_close(c);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	/* The next connection lands on another lcore. */
	first = P.tl;
	other = sk_tls_lcore_create(other_certs != NULL ? other_certs : certs, SOCKET_ID_ANY, NULL);
	ck_assert_ptr_nonnull(other);
	P.tl = other;
	P.session = sess;
	c = connect_ok(40011);
	ck_assert_int_eq(sk_tls_is_resumed(sk_test_tls_cli(c)), expect_resumed);
	ck_assert_uint_eq(srv()->hs_resumed, expect_resumed ? 1 : 0);
	ck_assert_uint_eq(srv()->hs_full, expect_resumed ? 0 : 1);
	if (!expect_resumed)
		ck_assert_uint_ge(srv()->tickets_rejected, tls13 ? 0 : 1);
	send_pump(c, "two");
	ck_assert_uint_eq(P.got_len, 6);
	SSL_SESSION_free(sess);
	/* TLS 1.3: a resumption hands out the next ticket (the other lcore's
	 * first); TLS 1.2 keeps its ticket. */
	if (expect_resumed)
		ck_assert_uint_eq(srv()->tickets_issued, (tls13 ? 1 : 0));
	if (expect_resumed) {
		/* The resumed connection's own ticket resumes the next one (a
		 * TLS 1.3 client uses each ticket once). */
		sess = sk_tls_session(sk_test_tls_cli(c));
		ck_assert_ptr_nonnull(sess);
		P.session = sess;
		c = sk_test_tls_connect(&P, 40012);
		ck_assert_ptr_nonnull(c);
		ck_assert(sk_tls_is_resumed(sk_test_tls_cli(c)));
		ck_assert_uint_eq(srv()->hs_resumed, 2);
		SSL_SESSION_free(sess);
	}
	P.session = NULL;
	pair_end(c);
	sk_tls_lcore_free(first);
	sk_tls_certs_free(other_certs);
}

START_TEST(resume_other_lcore_tls13)
{
	resume_on(true, NULL, true);
}
END_TEST

START_TEST(resume_other_lcore_tls12)
{
	resume_on(false, NULL, true);
}
END_TEST

/* Another secret (another run without a ticket file): a full handshake. */
START_TEST(resume_unknown_key)
{
	struct sk_tls_conf conf;

	conf_ec(&conf);
	resume_on(true, load(&conf), false);
}
END_TEST

START_TEST(ticket_rotation)
{
	struct sk_tls_ticket_keys a, b, c;
	const uint64_t t0 = 1800000000; /* a period boundary is not needed */
	uint8_t old_name[16];
	bool renew;

	memset(&a, 0, sizeof(a));
	memcpy(a.secret, "0123456789abcdef0123456789abcdef", 32);
	a.secret_len = 32;
	a.rotate_s = 3600;
	b = a;
	c = a;
	c.secret[0] ^= 1;
	/* Two lcores with one secret make the same keys. */
	sk_tls_ticket_keys_at(&a, t0);
	sk_tls_ticket_keys_at(&b, t0 + 1);
	sk_tls_ticket_keys_at(&c, t0);
	ck_assert_uint_eq(a.cur.period, t0 / 3600);
	ck_assert_mem_eq(a.cur.name, b.cur.name, 16);
	ck_assert_mem_eq(a.cur.aes_key, b.cur.aes_key, 32);
	ck_assert_mem_eq(a.cur.hmac_key, b.cur.hmac_key, 32);
	ck_assert(memcmp(a.cur.name, c.cur.name, 16) != 0);
	ck_assert(memcmp(a.cur.aes_key, c.cur.aes_key, 32) != 0);
	ck_assert(memcmp(a.cur.name, a.prev.name, 16) != 0);
	ck_assert_ptr_eq(sk_tls_ticket_key_find(&a, a.cur.name, &renew), &a.cur);
	ck_assert(!renew);
	ck_assert_ptr_null(sk_tls_ticket_key_find(&a, c.cur.name, &renew));
	/* One period later the old key still decrypts, and asks for a renewal. */
	memcpy(old_name, a.cur.name, 16);
	sk_tls_ticket_keys_at(&a, t0 + 3600);
	ck_assert_uint_eq(a.cur.period, t0 / 3600 + 1);
	ck_assert_ptr_eq(sk_tls_ticket_key_find(&a, old_name, &renew), &a.prev);
	ck_assert(renew);
	/* ... the same as an lcore that jumped straight there. */
	sk_tls_ticket_keys_at(&b, t0 + 3600);
	ck_assert_mem_eq(a.prev.name, b.prev.name, 16);
	ck_assert_mem_eq(a.prev.aes_key, b.prev.aes_key, 32);
	/* Two periods later it is gone. */
	sk_tls_ticket_keys_at(&a, t0 + 7200);
	ck_assert_ptr_null(sk_tls_ticket_key_find(&a, old_name, &renew));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* SNI, key types, ALPN                                                      */
/* ------------------------------------------------------------------------ */

/* peer_cn - the CN of the certificate the server showed @c; its key type. */
static void
peer_cert(struct sk_tcp_conn *c, char *cn, size_t len, int *type)
{
	X509 *x = SSL_get1_peer_certificate(sk_test_tls_cli(c)->ssl);

	ck_assert_ptr_nonnull(x);
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, (int)len);
	*type = EVP_PKEY_get_base_id(X509_get0_pubkey(x));
	X509_free(x);
}

START_TEST(sni_and_key_type)
{
	struct sk_tls_conf conf;
	struct sk_tcp_conn *c;
	char cn[64];
	int type;

	conf_ec(&conf);
	conf.cert[1] = oth_crt;
	conf.key[1] = oth_key;
	conf.cert[2] = rsa_crt;
	conf.key[2] = rsa_key;
	conf.n_certs = 3;
	begin(&conf, false, false);
	P.sni = "OTHER.test";
	c = sk_test_tls_connect(&P, 40020);
	peer_cert(c, cn, sizeof(cn), &type);
	ck_assert_str_eq(cn, "other.test");
	ck_assert_int_eq(type, EVP_PKEY_EC);
	P.sni = "nobody.test"; /* no match: the default, no alert */
	c = sk_test_tls_connect(&P, 40021);
	peer_cert(c, cn, sizeof(cn), &type);
	ck_assert_str_eq(cn, "shop.test");
	ck_assert_int_eq(type, EVP_PKEY_EC);
	/* A client that signs with RSA only gets the RSA certificate of the name. */
	ck_assert_int_eq(SSL_CTX_set1_sigalgs_list(P.cctx, "rsa_pss_rsae_sha256:RSA+SHA256"), 1);
	P.sni = "shop.test";
	c = sk_test_tls_connect(&P, 40022);
	peer_cert(c, cn, sizeof(cn), &type);
	ck_assert_str_eq(cn, "shop.test");
	ck_assert_int_eq(type, EVP_PKEY_RSA);
	ck_assert_uint_eq(srv()->hs_full, 3);
	ck_assert_uint_eq(srv()->hs_failed, 0);
	pair_end(NULL);
}
END_TEST

START_TEST(alpn_h2_only_refused)
{
	static const unsigned char h2[] = "\x02h2";

	begin_ec(true, false);
	ck_assert_int_eq(SSL_CTX_set_alpn_protos(P.cctx, h2, sizeof(h2) - 1), 0);
	sk_test_tls_connect(&P, 40030);
	ck_assert_int_eq(P.srv_fail, 1);
	ck_assert_uint_eq(srv()->hs_failed, 1);
	ck_assert_uint_eq(srv()->alerts_sent[SK_TLS_ALERT_no_application_protocol], 1);
	ck_assert_uint_eq(P.cstats.alerts_received[SK_TLS_ALERT_no_application_protocol], 1);
	pair_end(NULL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Hostile peers                                                             */
/* ------------------------------------------------------------------------ */

/* raw - a raw client connection that sends @len bytes of @data. */
static struct sk_tcp_conn *
raw(uint16_t port, const void *data, size_t len)
{
	struct sk_tcp_conn *c;

	P.cli_raw = true;
	c = sk_test_tls_connect(&P, port);
	ck_assert_ptr_nonnull(c);
	if (len != 0)
		ck_assert_int_eq(sk_tcp_send(c, data, len), 0);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	return c;
}

START_TEST(garbage_oversized_truncated)
{
	/* A handshake record announcing 2^15 bytes: over the limit of 2^14. */
	static const uint8_t big[] = {0x16, 0x03, 0x01, 0x80, 0x00, 0x01, 0x00};
	static const char http[] = "GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n";
	uint64_t alerts = 0;
	struct sk_tcp_conn *c;

	begin_ec(false, false);
	raw(40040, http, sizeof(http) - 1);
	ck_assert_int_eq(P.srv_fail, 1);
	raw(40041, big, sizeof(big));
	ck_assert_int_eq(P.srv_fail, 2);
	for (unsigned k = 0; k < SK_TLS_ALERT_SLOTS; k++)
		alerts += srv()->alerts_sent[k];
	ck_assert_uint_ge(alerts, 1);
	ck_assert_uint_eq(srv()->hs_failed, 2);
	/* Three bytes of a header, then the client leaves: released. */
	c = raw(40042, big, 3);
	ck_assert_uint_eq(srv()->hs_inflight, 1);
	sk_tcp_close(c);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	ck_assert_uint_eq(srv()->hs_inflight, 0);
	pair_end(NULL);
}
END_TEST

/*
 * A connection that stops in the middle of a record (two bytes of a header
 * after the handshake) is not resumed every pass: the stacks go quiet.
 */
START_TEST(partial_record_is_quiet)
{
	struct sk_tcp_conn *c;

	begin_ec(true, false);
	c = connect_ok(40045);
	send_pump(c, "whole");
	ck_assert_uint_eq(P.got_len, 5);
	ck_assert_int_eq(sk_tcp_send(c, "\x17\x03", 2), 0);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	ck_assert_uint_eq(P.got_len, 5);
	ck_assert_int_eq(P.srv_fail, 0);
	pair_end(c);
}
END_TEST

START_TEST(handshake_cap)
{
	struct sk_tls_conf conf;
	struct sk_tcp_conn *first, *second;

	conf_ec(&conf);
	conf.max_handshakes = 2;
	begin(&conf, false, false);
	first = raw(40050, NULL, 0);
	second = raw(40051, NULL, 0);
	ck_assert_uint_eq(srv()->hs_inflight, 2);
	raw(40052, NULL, 0); /* reset before any crypto */
	ck_assert_uint_eq(srv()->hs_limited, 1);
	ck_assert_uint_eq(srv()->hs_started, 2);
	ck_assert_uint_eq(srv()->hs_inflight, 2);
	/* A TLS client still gets in once one of them is gone. */
	sk_tcp_close(first);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	P.cli_raw = false;
	ck_assert_ptr_nonnull(sk_test_tls_connect(&P, 40053));
	ck_assert_uint_eq(srv()->hs_full, 1);
	sk_tcp_close(second);
	ck_assert_int_eq(sk_test_tls_pump(&P), 0);
	pair_end(NULL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The loader's checks                                                       */
/* ------------------------------------------------------------------------ */

/* refused - loading @conf fails with @rc and an error that has @what. */
static void
refused(const struct sk_tls_conf *conf, int rc, const char *what)
{
	struct sk_tls_certs *c = NULL;
	char err[SK_TLS_ERR_MAX] = "";

	ck_assert_int_eq(sk_tls_certs_load(conf, &c, err, sizeof(err)), rc);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, what) != NULL, "'%s' lacks '%s'", err, what);
}

START_TEST(loader_refusals)
{
	static const char *const shop[] = {"shop.test"};
	char crt[PATH_MAX], key[PATH_MAX], path[PATH_MAX + 16];
	struct sk_tls_conf conf;

	conf_ec(&conf);
	conf.key[0] = rsa_key;
	refused(&conf, -EINVAL, "does not match the certificate of tls.cert");
	conf_ec(&conf);
	conf.cert[0] = "/nonexistent/cert.pem";
	refused(&conf, -ENOENT, "tls.cert: /nonexistent/cert.pem");
	conf_ec(&conf);
	conf.key[0] = ec_crt; /* a certificate where the key should be */
	refused(&conf, -EINVAL, "tls.key: ");
	ck_assert_int_eq(
		sk_test_tls_cert(dir, "old", SK_TEST_KEY_EC256, shop, 1, -10, -1, crt, key), 0);
	conf_ec(&conf);
	conf.cert[0] = crt;
	conf.key[0] = key;
	refused(&conf, -EINVAL, "expired");
	ck_assert_int_eq(
		sk_test_tls_cert(dir, "weak", SK_TEST_KEY_RSA1024, shop, 1, 0, 2, crt, key), 0);
	conf.cert[0] = crt;
	conf.key[0] = key;
	refused(&conf, -EINVAL, "at least 2048");
	ck_assert_int_eq(sk_test_tls_cert(dir, "p384", SK_TEST_KEY_EC384, shop, 1, 0, 2, crt, key),
			 0);
	conf.cert[0] = crt;
	conf.key[0] = key;
	refused(&conf, -EINVAL, "P-256");
	/* Two pairs of one key type for the same names. */
	conf_ec(&conf);
	conf.cert[1] = ec_crt;
	conf.key[1] = ec_key;
	conf.n_certs = 2;
	refused(&conf, -EINVAL, "same names and key type");
	conf_ec(&conf);
	conf.ciphersuites = "TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256";
	refused(&conf, -EINVAL, "'TLS_AES_128_CCM_SHA256'");
	conf_ec(&conf);
	conf.min_version = TLS1_1_VERSION;
	refused(&conf, -EINVAL, "tls.min_version");
	/* The ticket secret: too short, then open to others. */
	snprintf(path, sizeof(path), "%s/ticket.key", dir);
	ck_assert_int_eq(sk_test_write_file(path, "short", 0600), 0);
	conf_ec(&conf);
	conf.ticket_key_file = path;
	refused(&conf, -EINVAL, "tls.ticket_key_file");
	ck_assert_int_eq(sk_test_write_file(path, "0123456789abcdef0123456789abcdef+", 0644), 0);
	refused(&conf, -EPERM, "chmod 600");
	ck_assert_int_eq(sk_test_write_file(path, "0123456789abcdef0123456789abcdef+", 0600), 0);
	sk_tls_certs_free(load(&conf));
}
END_TEST

static Suite *
tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, handshake_echo_tls13);
	tcase_add_test(tc, handshake_echo_tls12);
	tcase_add_test(tc, records_split_tls13);
	tcase_add_test(tc, records_split_tls12);
	tcase_add_test(tc, handshake_split);
	tcase_add_test(tc, larger_than_buffer);
	tcase_add_test(tc, idle_buffers_released);
	tcase_add_test(tc, flight_larger_than_send_buffer);
	tcase_add_test(tc, resume_other_lcore_tls13);
	tcase_add_test(tc, resume_other_lcore_tls12);
	tcase_add_test(tc, resume_unknown_key);
	tcase_add_test(tc, ticket_rotation);
	tcase_add_test(tc, sni_and_key_type);
	tcase_add_test(tc, alpn_h2_only_refused);
	tcase_add_test(tc, garbage_oversized_truncated);
	tcase_add_test(tc, partial_record_is_quiet);
	tcase_add_test(tc, handshake_cap);
	tcase_add_test(tc, loader_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static const char *const shop[] = {"shop.test"}, *const other[] = {"other.test"};
	int rc;

	if (sk_test_eal_init("test_tls") != 0 || sk_test_tmpdir(dir, sizeof(dir), "tls") != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("tls_pool", 4095, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	if (pool == NULL ||
	    sk_test_tls_cert(dir, "ec", SK_TEST_KEY_EC256, shop, 1, 0, 2, ec_crt, ec_key) != 0 ||
	    sk_test_tls_cert(dir, "rsa", SK_TEST_KEY_RSA2048, shop, 1, 0, 2, rsa_crt, rsa_key) !=
		    0 ||
	    sk_test_tls_cert(dir, "other", SK_TEST_KEY_EC256, other, 1, 0, 2, oth_crt, oth_key) !=
		    0)
		return 1;
	rc = sk_test_run(tls_suite(), true);
	rte_mempool_free(pool);
	sk_test_rmtree(dir);
	sk_test_eal_cleanup();
	return rc;
}
