/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kafka_client.c - librdkafka handles for seckill-kafka: configuration
 * pairs, the loopback connect guard, bounded destruction.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "sk_log.h"

#include "kafka.h"
#include "sk_kafka_conf.h"

/*
 * loopback_connect_cb - librdkafka's connect callback: connects @sockfd only
 * when @addr is 127.0.0.1, whatever address a broker advertised. Returns 0
 * or an errno, as librdkafka expects (the socket is non-blocking, so
 * EINPROGRESS is success).
 */
static int
loopback_connect_cb(int sockfd, const struct sockaddr *addr, int addrlen, const char *id,
		    void *opaque)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

	(void)opaque;
	if (addr->sa_family != AF_INET || (size_t)addrlen < sizeof(*sin) ||
	    sin->sin_addr.s_addr != htonl(INADDR_LOOPBACK)) {
		sk_log(PROG, "refusing to connect to %s: only 127.0.0.1 is allowed", id);
		return EACCES;
	}
	if (connect(sockfd, addr, (socklen_t)addrlen) == -1 && errno != EINPROGRESS)
		return errno;
	return 0;
}

/*
 * conf_setv - sets the @kv pairs (name, value, ..., NULL) on @conf. 0, or -1
 * (reported) after destroying @conf.
 */
static int
conf_setv(rd_kafka_conf_t *conf, const char *const *kv)
{
	char errstr[256];

	for (; *kv; kv += 2) {
		if (rd_kafka_conf_set(conf, kv[0], kv[1], errstr, sizeof(errstr))) {
			sk_log(PROG, "%s", errstr);
			rd_kafka_conf_destroy(conf);
			return -1;
		}
	}
	return 0;
}

/*
 * kafka_new - a @type handle of @conf with the @kv pairs of conf_setv() set.
 * Takes @conf over, also on failure. NULL (reported) on failure.
 */
rd_kafka_t *
kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *const *kv)
{
	char errstr[256];
	rd_kafka_t *rk;

	if (conf_setv(conf, kv))
		return NULL;
	rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
	if (!rk) {
		sk_log(PROG, "rd_kafka_new: %s", errstr);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

/*
 * kafka_client_new - kafka_new() for a client of @bootstrap (already checked)
 * named @client_id, with the loopback guard installed, and the properties of
 * the file @config (NULL: none) set first.
 */
rd_kafka_t *
kafka_client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, const char *bootstrap,
		 const char *client_id, const char *const *kv, const char *config)
{
	/* broker.address.family: the loopback guard knows IPv4 only. */
	struct sk_kafka_kv own[16] = {{"bootstrap.servers", bootstrap},
				      {"client.id", client_id},
				      {"broker.address.family", "v4"}};
	size_t n = 3;
	struct sk_kafka_props *props = NULL;
	char err[SK_KAFKA_CONF_ERR_MAX];
	int rc = 0;

	for (; *kv != NULL && n < SK_ARRAY_SIZE(own); kv += 2)
		own[n++] = (struct sk_kafka_kv){kv[0], kv[1]};
	SK_ASSERT(*kv == NULL);
	if (config != NULL)
		rc = sk_kafka_props_load(&props, config, err, sizeof(err));
	if (rc == 0)
		rc = sk_kafka_conf_build(conf, own, n, NULL, props, err, sizeof(err));
	sk_kafka_props_free(props);
	if (rc != 0) {
		sk_log(PROG, "--kafka-config: %s", err);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_conf_set_connect_cb(conf, loopback_connect_cb);
	return kafka_new(type, conf, (const char *const[]){NULL});
}

/* kafka_client_destroy - destroys @rk and waits (bounded) for its threads. */
void
kafka_client_destroy(rd_kafka_t *rk)
{
	rd_kafka_destroy(rk);
	if (rd_kafka_wait_destroyed(5000) == -1)
		sk_log(PROG, "librdkafka threads still running after 5 s");
}
