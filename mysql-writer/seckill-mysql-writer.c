/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-mysql-writer.c - main: the table of subcommands (run, migrate,
 * verify), the run loop (poll a batch, apply it in one transaction, retry
 * it through a MariaDB outage, commit the offsets), signals. Its log lines
 * are logfmt lines on stderr (sk_logfmt.h, docs/logs.md); --help, the
 * migrate line and verify's report go to stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mysqld_error.h>

#include "sk_logfmt.h"

#include "mw_apply.h"
#include "mw_db.h"
#include "mw_kafka.h"
#include "mw_metrics.h"
#include "mw_opts.h"
#include "mw_verify.h"

static volatile sig_atomic_t stop_sig;
static time_t end_time; /* --max-seconds: when to stop; 0 = never */

static void
on_signal(int sig)
{
	stop_sig = sig;
}

/* stopping - a stop signal came, or --max-seconds is over. */
static bool
stopping(void)
{
	return stop_sig || (end_time != 0 && time(NULL) >= end_time);
}

/* nap_ms - sleep @ms milliseconds, in 100 ms slices, until stopping(). */
static void
nap_ms(unsigned ms)
{
	for (unsigned t = 0; t < ms && !stopping(); t += 100) {
		struct timespec ts = {0, (ms - t < 100 ? ms - t : 100) * 1000000L};

		nanosleep(&ts, NULL);
	}
}

/*
 * connect_retry - connect and apply the schema, retrying with a backoff
 * (0.1 s doubling to 5 s) until it works or stopping(). 0 or -EINTR.
 */
static int
connect_retry(struct mw_db *db, const struct mw_db_conf *conf, struct mw_metrics *mt)
{
	unsigned backoff = 100, tries = 0;

	mw_metrics_set(mt, MW_M_DB_UP, 0);
	while (!stopping()) {
		if (mw_db_connect(db, conf) == 0 && mw_db_apply_schema(db, mw_db_schema_sql) == 0) {
			mw_metrics_add(mt, MW_M_DB_CONNECTS, 1);
			mw_metrics_set(mt, MW_M_DB_UP, 1);
			if (tries > 0)
				sk_logf(SK_LOG_NOTICE, "mysql", "msg=\"connected again\" tries=%u",
					tries);
			return 0;
		}
		if (tries++ % 10 == 0)
			sk_logf(SK_LOG_WARN, "mysql",
				"msg=\"cannot connect: retrying\" err=%s errno=%u retry_ms=%u",
				db->errmsg, db->err, backoff);
		mw_db_close(db);
		nap_ms(backoff);
		backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
	}
	return -EINTR;
}

/*
 * apply_retry - apply one batch until it commits (0) or stopping()
 * (-EINTR: the batch is dropped uncommitted, its offsets stay). Any SQL
 * error but a message's own data stalls here: the batch is rolled back and
 * applied again, after a backoff (0.1 s doubling to 5 s; a deadlock or a
 * lock wait timeout retries once at once), on a new connection when
 * mw_db_reconnect() says so. Logged at most once a second, counted
 * (seckill_mysql_batch_retries_total), seckill_mysql_stalled is 1 meanwhile.
 */
static int
apply_retry(struct mw_apply *a, const struct mw_db_conf *conf, struct mw_metrics *mt,
	    const struct mw_input *in, size_t n)
{
	unsigned backoff = 100, tries = 0;
	time_t logged = 0;

	while (!stopping()) {
		unsigned err;

		if (mw_apply_batch(a, in, n) == 0) {
			if (tries > 0) {
				mw_metrics_set(mt, MW_M_STALLED, 0);
				sk_logf(SK_LOG_NOTICE, "mysql",
					"msg=\"batch committed after retries\" batch=%zu tries=%u",
					n, tries);
			}
			return 0;
		}
		err = a->db->err;
		tries++;
		mw_metrics_set(mt, MW_M_STALLED, 1);
		mw_metrics_add(mt, MW_M_BATCH_RETRIES, 1);
		if (time(NULL) != logged) {
			logged = time(NULL);
			sk_logf(SK_LOG_WARN, "mysql",
				"msg=\"batch rolled back: retrying\" batch=%zu err=%s errno=%u "
				"tries=%u retry_ms=%u",
				n, a->db->errmsg, err, tries, backoff);
		}
		if (mw_db_reconnect(err) && connect_retry(a->db, conf, mt) != 0)
			break;
		if (tries > 1 || (err != ER_LOCK_DEADLOCK && err != ER_LOCK_WAIT_TIMEOUT)) {
			nap_ms(backoff);
			backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
		}
	}
	return -EINTR;
}

/* caught_up - mw_caught_up_fn over the consumer. */
static bool
caught_up(void *k)
{
	return mw_kafka_caught_up(k, 2000);
}

/* cmd_run - the writer. */
static int
cmd_run(const struct mw_opts *o)
{
	struct mw_kafka_conf kc = {o->bootstrap,    o->group, o->orders_topic,
				   o->events_topic, MW_PROG,  o->kafka_props};
	size_t cap = o->batch_max;
	rd_kafka_message_t **msgs = calloc(cap, sizeof(*msgs));
	struct mw_input *in = calloc(cap, sizeof(*in));
	struct mw_metrics *mt = calloc(1, sizeof(*mt));
	struct mw_apply *a = calloc(1, sizeof(*a));
	struct mw_kafka *k = NULL;
	struct mw_db db = {0};
	struct mw_db_conf dc;
	time_t idle = 0;
	char err[512];
	int rc = 1;

	end_time = o->max_seconds ? time(NULL) + (time_t)o->max_seconds : 0;
	mw_opts_db(o, &dc);
	if (msgs == NULL || in == NULL || mt == NULL || a == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=\"out of memory\"");
		goto out;
	}
	if (o->metrics_port != 0 && mw_metrics_serve(mt, o->metrics_port) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"metrics: cannot listen\" addr=127.0.0.1:%u",
			o->metrics_port);
		goto out;
	}
	if (connect_retry(&db, &dc, mt) != 0)
		goto out_ok;
	if (mw_kafka_open(&k, &kc, mt, err, sizeof(err)) != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
		goto out;
	}
	mw_apply_init(a, &db, mt, o->default_limit, o->park_final_s, MW_PROG, caught_up, k);
	sk_logf(SK_LOG_NOTICE, "ready",
		"msg=consuming orders_topic=%s events_topic=%s kafka=%s group=%s database=%s",
		o->orders_topic, o->events_topic, o->bootstrap, o->group, o->database);
	while (!stopping()) {
		size_t n = mw_kafka_poll(k, msgs, cap, 200);

		if (n == 0) {
			/* parked messages: retried every second while idle, so
			 * that a refusal is seen once everything was consumed;
			 * and those of an earlier run, or of a retry its budget
			 * stopped, even before anything new arrives */
			if ((a->unpark_pending ||
			     __atomic_load_n(&mt->v[MW_M_PARKED_NOW], __ATOMIC_RELAXED) > 0) &&
			    time(NULL) != idle) {
				idle = time(NULL);
				apply_retry(a, &dc, mt, NULL, 0);
			}
			continue;
		}
		for (size_t i = 0; i < n; i++)
			in[i] = (struct mw_input){msgs[i]->payload, msgs[i]->len};
		if (apply_retry(a, &dc, mt, in, n) == 0)
			mw_kafka_commit(k, msgs, n);
		for (size_t i = 0; i < n; i++)
			rd_kafka_message_destroy(msgs[i]);
	}
out_ok:
	rc = 0;
	sk_logf(SK_LOG_NOTICE, "shutdown", "msg=stopping signal=%d why=%s", (int)stop_sig,
		stop_sig ? "signal" : "max-seconds");
out:
	mw_kafka_close(k);
	if (a != NULL && a->db != NULL)
		mw_apply_fini(a);
	mw_db_close(&db);
	if (mt != NULL)
		mw_metrics_stop(mt);
	free(a);
	free(mt);
	free(in);
	free(msgs);
	sk_kafka_props_free(o->kafka_props);
	return rc;
}

/*
 * open_db - connect @db as @o says and apply the schema; logs the error
 * (as @cmd) and returns -1 when either fails.
 */
static int
open_db(struct mw_db *db, struct mw_db_conf *dc, const struct mw_opts *o, const char *cmd)
{
	mw_opts_db(o, dc);
	if (mw_db_connect(db, dc) == 0 && mw_db_apply_schema(db, mw_db_schema_sql) == 0)
		return 0;
	sk_logf(SK_LOG_ERROR, "mysql", "cmd=%s err=%s errno=%u", cmd, db->errmsg, db->err);
	mw_db_close(db);
	return -1;
}

/* cmd_migrate - apply the schema once. */
static int
cmd_migrate(const struct mw_opts *o)
{
	struct mw_db db = {0};
	struct mw_db_conf dc;

	if (open_db(&db, &dc, o, "migrate") != 0)
		return 1;
	printf("schema applied to database %s\n", o->database);
	mw_db_close(&db);
	return 0;
}

/* cmd_verify - LMDB against MariaDB. */
static int
cmd_verify(const struct mw_opts *o)
{
	struct mw_db db = {0};
	struct mw_db_conf dc;
	int rc;

	if (open_db(&db, &dc, o, "verify") != 0)
		return 1;
	rc = mw_verify(&db, o->store, o->json, o->max_diffs, stdout);
	mw_db_close(&db);
	return rc == 0 ? 0 : 1;
}

static const struct {
	const char *name;
	int (*fn)(const struct mw_opts *o);
} commands[] = {
	{"run", cmd_run},
	{"migrate", cmd_migrate},
	{"verify", cmd_verify},
};

int
main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	const char *cmd = "run";
	struct mw_opts o;
	int rc, shift = 0;

	sk_logfmt_init(MW_PROG);
	if (argc > 1 && argv[1][0] != '-')
		cmd = argv[1], shift = 1;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		rc = mw_opts_parse(&o, cmd, argc - shift, argv + shift);
		if (rc != 0)
			return rc > 0 ? 0 : 2;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		setvbuf(stdout, NULL, _IOLBF, 0);
		return commands[i].fn(&o);
	}
	sk_logf(SK_LOG_ERROR, "usage", "cmd=%s msg=\"unknown subcommand (see --help)\"", cmd);
	return 2;
}
