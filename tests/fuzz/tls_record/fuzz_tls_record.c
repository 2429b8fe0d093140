/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_tls_record.c - libFuzzer target for the TLS record path of the
 * dataplane's HTTPS port: tls/ on a server stack, fed by a client stack
 * over a wire (tests/lib/sk_test_tls.h), whatever bytes the input says.
 *
 * Byte 0 picks the mode:
 *   bit 0     a real TLS client completes a handshake first (then the
 *             input's bytes follow as raw records inside that connection:
 *             garbage after the handshake, bad MACs, alerts, renegotiation
 *             attempts, oversized records)
 *   bit 1     that client offers TLS 1.2 only (else 1.2 and 1.3)
 *   bits 2-3  how much ciphertext each on_data hands to tls/: all, 1, 5 or
 *             97 bytes (a record split at every such boundary)
 * then chunks: a length byte and that many bytes, each sent as one write
 * on the client's TCP connection and pumped through both stacks.
 *
 * Checked after each input, once the client has gone and the stacks are
 * quiet: no crash or sanitizer report, no handshake left counted in
 * progress, no plaintext buffer held, no mbuf leaked (abort otherwise).
 * The normal build runs the seed corpus through this file
 * (fuzz_tls_record_seeds).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "sk_test_eal.h"
#include "sk_test_fs.h"
#include "sk_test_tls.h"

static struct rte_mempool *pool;
static struct sk_tls_certs *certs;
static struct sk_test_tls_pair P;
static char dir[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
cleanup(void)
{
	sk_tls_certs_free(certs);
	rte_mempool_free(pool);
	sk_test_rmtree(dir);
	sk_test_eal_cleanup();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = {"shop.test"};
	char crt[PATH_MAX], key[PATH_MAX], err[SK_TLS_ERR_MAX];
	struct sk_tls_conf conf;

	(void)argc;
	if (sk_test_eal_init((*argv)[0]) != 0 || sk_test_tmpdir(dir, sizeof(dir), "fuzz_tls") != 0)
		abort();
	pool = rte_pktmbuf_pool_create("fuzz_tls", 4095, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	if (pool == NULL ||
	    sk_test_tls_cert(dir, "ec", SK_TEST_KEY_EC256, names, 1, 0, 2, crt, key) != 0)
		abort();
	sk_tls_conf_defaults(&conf);
	conf.cert[0] = crt;
	conf.key[0] = key;
	conf.n_certs = 1;
	conf.buffer_size = 1024;
	conf.max_handshakes = 4;
	if (sk_tls_certs_load(&conf, &certs, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_tls_record: %s\n", err);
		abort();
	}
	atexit(cleanup);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t feeds[] = {SIZE_MAX, 1, 5, 97};
	unsigned avail0 = rte_mempool_avail_count(pool);
	struct sk_tcp_conn *c;
	uint8_t mode;
	size_t i = 1;

	if (size == 0)
		return 0;
	mode = data[0];
	if (sk_test_tls_pair_init(&P, pool, certs, false, (mode & 2) != 0) != 0)
		abort();
	P.feed_max = feeds[(mode >> 2) & 3];
	P.cli_raw = (mode & 1) == 0;
	c = sk_test_tls_connect(&P, 40000);
	if (c == NULL)
		abort();
	while (i < size && sk_tcp_established(c)) {
		size_t n = data[i++];

		if (n > size - i)
			n = size - i;
		if (n > sk_tcp_send_space(c))
			break;
		if (sk_tcp_send(c, data + i, n) != 0)
			break;
		i += n;
		if (sk_test_tls_pump(&P) != 0)
			abort();
	}
	/* The client leaves; the server's connection must wind down. */
	if (sk_tcp_established(c))
		sk_tcp_close(c);
	for (int ms = 0; ms < 2500; ms += 1)
		if (sk_test_tls_pump(&P) != 0)
			abort();
	if (sk_tls_lcore_stats(P.tl)->buffers_used != 0)
		abort();
	sk_test_tls_pair_free(&P);
	if (rte_mempool_avail_count(pool) != avail0)
		abort();
	return 0;
}
