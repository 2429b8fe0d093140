/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_metrics.c - the Prometheus text of seckill-mysql-writer's counters and
 * the /metrics endpoint (libmicrohttpd, 127.0.0.1 only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

#include "sk_logfmt.h"

#include "mw_metrics.h"

/* One line per value: name, labels, type, help. */
static const struct {
	const char *name, *labels, *type, *help;
} desc[MW_M_N] = {
	[MW_M_APPLIED] = {"seckill_mysql_messages_total", "result=\"applied\"", "counter",
			  "Messages by what the writer did with them"},
	[MW_M_DUPLICATE] = {"seckill_mysql_messages_total", "result=\"duplicate\"", NULL, NULL},
	[MW_M_PARKED] = {"seckill_mysql_messages_total", "result=\"parked\"", NULL, NULL},
	[MW_M_REFUSED] = {"seckill_mysql_messages_total", "result=\"refused\"", NULL, NULL},
	[MW_M_MALFORMED] = {"seckill_mysql_messages_total", "result=\"malformed\"", NULL, NULL},
	[MW_M_UNKNOWN_TYPE] = {"seckill_mysql_messages_total", "result=\"unknown_type\"", NULL,
			       NULL},
	[MW_M_NOT_FOR_DB] = {"seckill_mysql_messages_total", "result=\"not_for_db\"", NULL, NULL},
	[MW_M_SQL_ERRORS] = {"seckill_mysql_messages_total", "result=\"sql_error\"", NULL, NULL},
	[MW_M_UNPARKED] = {"seckill_mysql_unparked_total", "", "counter",
			   "Parked messages applied once what they wait for arrived"},
	[MW_M_GUARD_STOCK] = {"seckill_mysql_guard_refusals_total", "guard=\"stock\"", "counter",
			      "Order lines the SQL guards refused with every partition caught up "
			      "(parked, logged)"},
	[MW_M_GUARD_USER] = {"seckill_mysql_guard_refusals_total", "guard=\"user\"", NULL, NULL},
	[MW_M_GUARD_WAITS] = {"seckill_mysql_guard_waits_total", "", "counter",
			      "Order lines a guard refused before the topics were caught up "
			      "(parked until the restock, cancel or refund arrives)"},
	[MW_M_REFUND_REFUSED] = {"seckill_mysql_refund_refusals_total", "", "counter",
				 "Refunds above the units of the line"},
	[MW_M_STATE_CONFLICT] = {"seckill_mysql_state_conflicts_total", "", "counter",
				 "Events for an order in another state than expected"},
	[MW_M_ORDER_CONFLICT] = {"seckill_mysql_order_conflicts_total", "", "counter",
				 "Confirmed orders whose id was written with another seq"},
	[MW_M_PAY_CONFLICT] = {"seckill_mysql_pay_conflicts_total", "", "counter",
			       "Payments for cancelled orders recorded"},
	[MW_M_ORDERS] = {"seckill_mysql_orders_written_total", "", "counter", "Orders written"},
	[MW_M_BATCHES] = {"seckill_mysql_batches_total", "", "counter",
			  "Transactions committed (one per poll batch)"},
	[MW_M_BATCH_RETRIES] = {"seckill_mysql_batch_retries_total", "", "counter",
				"Batches rolled back and tried again"},
	[MW_M_DB_CONNECTS] = {"seckill_mysql_db_connects_total", "", "counter",
			      "Connections made to MariaDB"},
	[MW_M_KAFKA_ERRORS] = {"seckill_mysql_kafka_errors_total", "", "counter",
			       "Errors the Kafka consumer reported"},
	[MW_M_COMMIT_ERRORS] = {"seckill_mysql_offset_commit_errors_total", "", "counter",
				"Offset commits that failed (committed again later)"},
	[MW_M_PARKED_FOR_GOOD] = {"seckill_mysql_parked_for_good_total", "", "counter",
				  "Parked rows made final: not retried until an operator requeues "
				  "them"},
	[MW_M_PARKED_NOW] = {"seckill_mysql_parked", "", "gauge",
			     "Messages in the parked table (waiting and final)"},
	[MW_M_PARKED_FINAL] = {"seckill_mysql_parked_final", "", "gauge",
			       "Rows of the parked table that are final (not retried)"},
	[MW_M_PARKED_ORDER] = {"seckill_mysql_parked_rows", "reason=\"order\"", "gauge",
			       "Rows of the parked table by reason (waiting and final)"},
	[MW_M_PARKED_ITEM] = {"seckill_mysql_parked_rows", "reason=\"item\"", NULL, NULL},
	[MW_M_PARKED_STOCK] = {"seckill_mysql_parked_rows", "reason=\"stock\"", NULL, NULL},
	[MW_M_PARKED_USER] = {"seckill_mysql_parked_rows", "reason=\"user\"", NULL, NULL},
	[MW_M_PARKED_BEHIND] = {"seckill_mysql_parked_rows", "reason=\"behind\"", NULL, NULL},
	[MW_M_PARKED_SQL] = {"seckill_mysql_parked_rows", "reason=\"sql\"", NULL, NULL},
	[MW_M_STALLED] = {"seckill_mysql_stalled", "", "gauge",
			  "1 while a batch fails with an SQL error and is retried"},
	[MW_M_DB_UP] = {"seckill_mysql_db_up", "", "gauge", "1 while connected to MariaDB"},
	[MW_M_LAST_LAG_NS] = {"seckill_mysql_last_lag_seconds", "", "gauge",
			      "Commit time minus confirmation time of the last order written"},
	[MW_M_PARTITIONS] = {"seckill_mysql_partitions_assigned", "", "gauge",
			     "Partitions of both topics the consumer group gave this writer"},
};

size_t
mw_metrics_format(const struct mw_metrics *mt, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < MW_M_N; i++) {
		uint64_t v = __atomic_load_n(&mt->v[i], __ATOMIC_RELAXED);
		const char *name = desc[i].name, *l = desc[i].labels;
		int n = 0;

		if (desc[i].type != NULL)
			n = snprintf(buf + off, len - off, "# HELP %s %s\n# TYPE %s %s\n", name,
				     desc[i].help, name, desc[i].type);
		if (n < 0 || (size_t)n >= len - off)
			return off;
		off += (size_t)n;
		if (i == MW_M_LAST_LAG_NS)
			n = snprintf(buf + off, len - off, "%s %.6f\n", name, (double)v / 1e9);
		else
			n = snprintf(buf + off, len - off, "%s%s%s%s %" PRIu64 "\n", name,
				     *l ? "{" : "", l, *l ? "}" : "", v);
		if (n < 0 || (size_t)n >= len - off)
			return off;
		off += (size_t)n;
	}
	return off;
}

/* answer - the MHD request handler: /metrics or 404. */
static enum MHD_Result
answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *upload, size_t *upload_len, void **req)
{
	const struct mw_metrics *mt = cls;
	struct MHD_Response *r;
	char body[8192];
	size_t n = 0;
	unsigned status = MHD_HTTP_OK;
	enum MHD_Result ret;

	(void)version, (void)upload, (void)upload_len, (void)req;
	if (strcmp(method, "GET") != 0 || strcmp(url, "/metrics") != 0)
		status = MHD_HTTP_NOT_FOUND;
	else
		n = mw_metrics_format(mt, body, sizeof(body));
	r = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* mhd_log - libmicrohttpd's error lines as log lines (event=metrics). */
static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char m[512];
	size_t n;

	(void)cls;
	vsnprintf(m, sizeof(m), fmt, ap);
	n = strlen(m);
	while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
		m[--n] = '\0';
	sk_logf(SK_LOG_WARN, "metrics", "msg=%s", m);
}

int
mw_metrics_serve(struct mw_metrics *mt, unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	mt->http = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
				    (uint16_t)port, NULL, NULL, answer, mt,
				    /* first, or libmicrohttpd warns at every start */
				    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
				    (struct sockaddr *)&a, MHD_OPTION_END);
	if (mt->http == NULL)
		return errno == EADDRINUSE ? -EADDRINUSE : -EIO;
	return 0;
}

void
mw_metrics_stop(struct mw_metrics *mt)
{
	if (mt->http != NULL)
		MHD_stop_daemon(mt->http);
	mt->http = NULL;
}
