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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

#include "sk_logfmt.h"

#include "mw_metrics.h"

/*
 * The table: one row per family (name, type, label, help, its first value
 * in struct mw_metrics.v and, for a labelled family, the label's values,
 * one adjacent value each). The rows cover v[] in order, each value once
 * (tests/unit/mysql checks it).
 */
struct mw_family {
	const char *name, *type, *label, *help;
	enum mw_metric first;
	const char *const *values; /* NULL-terminated, or NULL: one sample */
	unsigned decimals;	   /* 0: the integer; else v / 1e9 with so many */
};

static const char *const results[] = {"applied",    "duplicate", "parked",
				      "refused",    "malformed", "unknown_type",
				      "not_for_db", "sql_error", NULL};
static const char *const guards[] = {"stock", "user", NULL};
static const char *const reasons[] = {"order", "item", "stock", "user", "behind", "sql", NULL};

static const struct mw_family families[] = {
	{"seckill_mysql_messages_total", "counter", "result",
	 "Messages by what the writer did with them", MW_M_APPLIED, results, 0},
	{"seckill_mysql_unparked_total", "counter", NULL,
	 "Parked messages applied once what they wait for arrived", MW_M_UNPARKED, NULL, 0},
	{"seckill_mysql_guard_refusals_total", "counter", "guard",
	 "Order lines the SQL guards refused with every partition caught up (parked, logged)",
	 MW_M_GUARD_STOCK, guards, 0},
	{"seckill_mysql_guard_waits_total", "counter", NULL,
	 "Order lines a guard refused before the topics were caught up (parked until the "
	 "restock, cancel or refund arrives)",
	 MW_M_GUARD_WAITS, NULL, 0},
	{"seckill_mysql_refund_refusals_total", "counter", NULL,
	 "Refunds above the units of the line", MW_M_REFUND_REFUSED, NULL, 0},
	{"seckill_mysql_state_conflicts_total", "counter", NULL,
	 "Events for an order in another state than expected", MW_M_STATE_CONFLICT, NULL, 0},
	{"seckill_mysql_order_conflicts_total", "counter", NULL,
	 "Confirmed orders whose id was written with another seq", MW_M_ORDER_CONFLICT, NULL, 0},
	{"seckill_mysql_pay_conflicts_total", "counter", NULL,
	 "Payments for cancelled orders recorded", MW_M_PAY_CONFLICT, NULL, 0},
	{"seckill_mysql_orders_written_total", "counter", NULL, "Orders written", MW_M_ORDERS, NULL,
	 0},
	{"seckill_mysql_batches_total", "counter", NULL,
	 "Transactions committed (one per poll batch)", MW_M_BATCHES, NULL, 0},
	{"seckill_mysql_batch_retries_total", "counter", NULL,
	 "Batches rolled back and tried again", MW_M_BATCH_RETRIES, NULL, 0},
	{"seckill_mysql_runs_total", "counter", NULL,
	 "Runs of consecutive orders written whole by bulk statements", MW_M_RUNS, NULL, 0},
	{"seckill_mysql_runs_replayed_total", "counter", NULL,
	 "Runs that did not land whole, rolled back and applied one by one", MW_M_RUNS_REPLAYED,
	 NULL, 0},
	{"seckill_mysql_db_connects_total", "counter", NULL, "Connections made to MariaDB",
	 MW_M_DB_CONNECTS, NULL, 0},
	{"seckill_mysql_kafka_errors_total", "counter", NULL, "Errors the Kafka consumer reported",
	 MW_M_KAFKA_ERRORS, NULL, 0},
	{"seckill_mysql_offset_commit_errors_total", "counter", NULL,
	 "Offset commits that failed (committed again later)", MW_M_COMMIT_ERRORS, NULL, 0},
	{"seckill_mysql_parked_for_good_total", "counter", NULL,
	 "Parked rows made final: not retried until an operator requeues them",
	 MW_M_PARKED_FOR_GOOD, NULL, 0},
	{"seckill_mysql_parked", "gauge", NULL, "Messages in the parked table (waiting and final)",
	 MW_M_PARKED_NOW, NULL, 0},
	{"seckill_mysql_parked_final", "gauge", NULL,
	 "Rows of the parked table that are final (not retried)", MW_M_PARKED_FINAL, NULL, 0},
	{"seckill_mysql_parked_rows", "gauge", "reason",
	 "Rows of the parked table by reason (waiting and final)", MW_M_PARKED_ORDER, reasons, 0},
	{"seckill_mysql_stalled", "gauge", NULL,
	 "1 while a batch fails with an SQL error and is retried", MW_M_STALLED, NULL, 0},
	{"seckill_mysql_db_up", "gauge", NULL, "1 while connected to MariaDB", MW_M_DB_UP, NULL, 0},
	{"seckill_mysql_last_lag_seconds", "gauge", NULL,
	 "Commit time minus confirmation time of the last order written", MW_M_LAST_LAG_NS, NULL,
	 6},
	{"seckill_mysql_partitions_assigned", "gauge", NULL,
	 "Partitions of both topics the consumer group gave this writer", MW_M_PARTITIONS, NULL, 0},
};

#define NFAMILIES (sizeof(families) / sizeof(families[0]))

/* put - printf at buf + *off; false once the text does not fit. */
static bool __attribute__((format(printf, 4, 5)))
put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off) {
		buf[*off] = '\0';
		return false;
	}
	*off += (size_t)n;
	return true;
}

/* family - the HELP, TYPE and sample lines of @f; false once cut. */
static bool
family(const struct mw_metrics *mt, const struct mw_family *f, char *buf, size_t len, size_t *off)
{
	size_t k = 0;

	if (!put(buf, len, off, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type))
		return false;
	do {
		uint64_t v = __atomic_load_n(&mt->v[f->first + k], __ATOMIC_RELAXED);
		size_t line = *off; /* a line that does not fit is left out whole */
		bool ok;

		if (f->values != NULL)
			ok = put(buf, len, off, "%s{%s=\"%s\"}", f->name, f->label, f->values[k]);
		else
			ok = put(buf, len, off, "%s", f->name);
		if (ok && f->decimals > 0)
			ok = put(buf, len, off, " %.*f\n", (int)f->decimals, (double)v / 1e9);
		else if (ok)
			ok = put(buf, len, off, " %" PRIu64 "\n", v);
		if (!ok) {
			*off = line;
			buf[line] = '\0';
			return false;
		}
	} while (f->values != NULL && f->values[++k] != NULL);
	return true;
}

size_t
mw_metrics_format(const struct mw_metrics *mt, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NFAMILIES; i++)
		if (!family(mt, &families[i], buf, len, &off))
			break;
	return off;
}

int
mw_metrics_list(FILE *out)
{
	for (size_t i = 0; i < NFAMILIES; i++)
		if (fprintf(out, "%s %s %s\n", families[i].name, families[i].type,
			    families[i].label != NULL ? families[i].label : "-") < 0)
			return -EIO;
	return fflush(out) != 0 ? -EIO : 0;
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
