/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckill-control: the control plane process. A DPDK secondary of the
 * dataplane: attach to its arena and order rings, open the order store,
 * serve the admin API, then loop: drain (group commit), payment deadlines,
 * retention (archive purge, event-log trim, keep-days policy), heartbeat,
 * the periodic reconcile (sk_reconcile.h), and a short sleep
 * when idle (this is not a dataplane core).
 *
 *   seckill-control [EAL options] -- --store DIR [options]
 *
 * --proc-type=secondary is added to the EAL options when missing. SIGINT or
 * SIGTERM: commit what is waiting, stop the admin API, close the store,
 * exit 0. Every line it writes is a logfmt log line on stderr (sk_logfmt.h,
 * docs/logs.md), DPDK's and librdkafka's included; --help alone prints
 * plain text on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "control_opts.h"
#include "sk_activity.h"
#include "sk_logfmt.h"
#include "sk_parse.h"
#include "sk_admin.h"
#include "sk_exporter.h"
#include "sk_payments_consumer.h"
#include "sk_paysig.h"
#include "sk_control.h"
#include "sk_member.h"
#include "sk_reconcile.h"

#define MS INT64_C(1000000)
#define S  INT64_C(1000000000)

/* How often the deadlines are scanned, and how long the loop sleeps. */
#define EXPIRE_EVERY_NS	   (100 * MS)
#define PREHEAT_EVERY_NS   S
#define RECONCILE_EVERY_NS (5 * S)
#define MAP_CHECK_EVERY_NS S
#define SLEEP_LINGER_NS	   (50 * 1000)
#define SLEEP_BUSY_NS	   (100 * 1000)
#define SLEEP_IDLE_NS	   (1 * MS)
#define IDLE_AFTER_NS	   (1 * S)
#define ERROR_SLEEP_NS	   (10 * MS)
#define ATTACH_WAIT_NS	   (10 * S)

static volatile sig_atomic_t stop_requested;

/*
 * member_conf - the cluster member's settings of @o into @p mc and its
 * number into @p number (0: standalone, without --redis): 0, or -1 with
 * the reason logged. Before the attach: the arena's member must match.
 */
static int
member_conf(struct opts *o, struct sk_member_conf *mc, uint32_t *number)
{
	int rc;

	*mc = (struct sk_member_conf){.redis = {.member = o->member,
						.timeout_ms = 1000,
						.user = o->redis_user,
						.password_file = o->redis_pass_file},
				      .idle_ns = o->idle_ms * 1000000};
	*number = 0;
	if (o->redis == NULL)
		return 0;
	if (sk_member_parse_redis(o->redis, &mc->redis) != 0) {
		sk_logf(SK_LOG_ERROR, "usage",
			"value=%s msg=\"bad value for --redis: HOST:PORT or unix:PATH (see "
			"--help)\"",
			o->redis);
		return -1;
	}
	rc = sk_member_parse_members(o->members, mc);
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "usage", "msg=\"bad value for --cluster-members\" err=%s",
			rc == -E2BIG
				? "more than 16 members"
				: "ids of [a-z0-9_-], 1..32 chars, comma-separated, no repeat");
		return -1;
	}
	*number = sk_member_number(mc);
	if (*number == 0) {
		sk_logf(SK_LOG_ERROR, "usage",
			"msg=\"--cluster-member is not one of --cluster-members\"");
		return -1;
	}
	return 0;
}

/*
 * member_check - before the attach, the Redis of @p mc (nothing without
 * --redis): AUTH, noeviction, master_replid, then this member's number
 * claimed (sk_member_claim()): a number another member holds is refused
 * here, before this control plane takes an order. A Redis that does not
 * answer yet is tried again by the member, which leases nothing before
 * its claim. 0, or -1 logged.
 */
static int
member_check(const struct opts *o, const struct sk_member_conf *mc)
{
	char err[512];
	int rc;

	if (o->redis == NULL)
		return 0;
	rc = sk_cpool_check(&mc->redis, err, sizeof(err));
	if (rc == 0) {
		rc = sk_member_claim(mc, err, sizeof(err));
		if (rc == -EEXIST) {
			sk_logf(SK_LOG_ERROR, "startup",
				"member=%s number=%u msg=\"member number refused: give every "
				"member the same --cluster-members in the same order\" err=\"%s\"",
				o->member, sk_member_number(mc), err);
			return -1;
		}
	}
	if (rc == -ENOTCONN || rc == -ETIMEDOUT) {
		sk_logf(SK_LOG_WARN, "cluster",
			"msg=\"Redis does not answer at start: the member keeps trying, and "
			"leases nothing before its number is claimed\" err=\"%s\"",
			err);
	} else if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"msg=\"Redis refused for the cluster pool\" err=\"%s\"", err);
		return -1;
	}
	return 0;
}

/* member_start - the cluster member of @p mc (nothing without --redis): 0, or -1 logged. */
static int
member_start(struct sk_member **out, struct sk_control *ctl, const struct opts *o,
	     const struct sk_member_conf *mc)
{
	int rc;

	if (o->redis == NULL)
		return 0;
	rc = sk_member_start(out, ctl, mc);
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"cannot start the cluster member\" err=%s",
			rc == -EINVAL ? "--cluster-member is not one of --cluster-members"
				      : strerror(-rc));
		return -1;
	}
	if (mc->redis.unix_path != NULL)
		sk_logf(SK_LOG_INFO, "cluster", "member=%s number=%u members=%u redis=unix:%s",
			o->member, sk_member_number(mc), mc->nmembers, mc->redis.unix_path);
	else
		sk_logf(SK_LOG_INFO, "cluster", "member=%s number=%u members=%u redis=%s:%d",
			o->member, sk_member_number(mc), mc->nmembers, mc->redis.host,
			mc->redis.port);
	return 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void
sleep_ns(int64_t ns)
{
	struct timespec ts = {.tv_sec = ns / S, .tv_nsec = ns % S};

	nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

/*
 * lock_dataplane - one control plane per dataplane: an exclusive flock on a
 * file in the EAL runtime directory of this --file-prefix. The rings are
 * single-consumer and attach resets their consumer heads, which is safe only
 * if no other control plane is draining them. The kernel drops the lock when
 * the process dies, kill -9 included. Returns the fd (kept open), or -1.
 */
static int
lock_dataplane(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/seckill-control.lock", rte_eal_get_runtime_dir());
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		sk_logf(SK_LOG_ERROR, "startup", "path=%s msg=\"cannot open the lock file\" err=%s",
			path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"path=%s msg=\"another seckill-control is attached to this dataplane\"",
			path);
		close(fd);
		return -1;
	}
	return fd;
}

/* attach - sk_control_attach(), waiting a little for the dataplane to publish its rings. */
static int
attach(struct sk_control **ctl, const struct sk_control_conf *conf)
{
	char err[SK_CONTROL_ERR_MAX];
	int64_t until = sk_clock_ns(CLOCK_MONOTONIC) + ATTACH_WAIT_NS;
	int rc;

	while ((rc = sk_control_attach(ctl, conf, err, sizeof(err))) == -ENOENT &&
	       sk_clock_ns(CLOCK_MONOTONIC) < until && !stop_requested)
		sleep_ns(100 * MS);
	if (rc != 0)
		sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
	return rc;
}

/* records_waiting - whether a batch is filling up (the drain is lingering). */
static bool
records_waiting(const struct sk_control *ctl)
{
	for (unsigned l = 0; l < sk_control_nrings(ctl); l++)
		if (sk_control_ring_depth(ctl, l) > 0)
			return true;
	return false;
}

/*
 * preheat - bring the arena's items in line with the store's activities
 * (sk_control_preheat()): at start, then every second, so an activity
 * whose arena step a crash interrupted is finished. Logs what changed.
 */
static void
preheat(struct sk_control *ctl, int64_t now)
{
	struct sk_control_preheat_info pi;
	int rc = sk_control_preheat(ctl, now, true, &pi);

	if (rc != 0)
		sk_logf(SK_LOG_WARN, "preheat", "msg=\"store error (retried in 1 s)\" err=%s",
			strerror(-rc));
	else if (pi.recorded + pi.loaded + pi.synced > 0)
		sk_logf(SK_LOG_INFO, "preheat",
			"recorded=%" PRIu32 " loaded=%" PRIu32 " synced=%" PRIu32
			" msg=\"config items recorded as activities, activities put on sale, "
			"items restocked or closed\"",
			pi.recorded, pi.loaded, pi.synced);
}

/* export_metrics - the exporter's part of /metrics (sk_control_metrics_extra()). */
static int
export_metrics(void *arg, FILE *out)
{
	return sk_exporter_metrics(arg, out);
}

/*
 * reconcile - one periodic reconcile run (seckill_reconcile_* metrics);
 * logs when the number of items reported changes, and store errors.
 */
static void
reconcile(struct sk_control *ctl, int64_t now, uint32_t *reported)
{
	struct sk_reconcile_info ri;
	int rc = sk_control_reconcile(ctl, now, &ri);

	if (rc != 0) {
		sk_logf(SK_LOG_WARN, "reconcile", "err=%s retry_s=%d", strerror(-rc),
			(int)(RECONCILE_EVERY_NS / S));
		return;
	}
	if (ri.mismatches != *reported)
		sk_logf(ri.mismatches > 0 ? SK_LOG_ERROR : SK_LOG_NOTICE, "reconcile",
			"mismatches=%" PRIu32 " msg=%s", ri.mismatches,
			ri.mismatches > 0 ? "items do not add up (seckillctl reconcile; "
					    "docs/monitoring.md)"
					  : "every item adds up again");
	*reported = ri.mismatches;
}

/* run - the main loop, until a signal. */
static int
run(struct sk_control *ctl)
{
	int64_t last_expire = 0, last_busy = sk_clock_ns(CLOCK_MONOTONIC), last_err_log = 0;
	int64_t last_preheat = sk_clock_ns(CLOCK_MONOTONIC), last_reconcile = 0;
	int64_t last_map = 0;
	uint32_t reported = 0;
	int rc;

	while (!stop_requested) {
		int64_t now = sk_clock_ns(CLOCK_REALTIME), mono = sk_clock_ns(CLOCK_MONOTONIC);
		bool busy = false, failed = false;

		rc = sk_control_drain(ctl, now, 0, NULL);
		if (rc > 0)
			busy = true;
		failed |= rc < 0;
		if (rc < 0 && mono - last_err_log > S) {
			sk_logf(SK_LOG_WARN, "drain", "msg=\"orders stay queued; retrying\" err=%s",
				strerror(-rc));
			last_err_log = mono;
		}
		if (mono - last_expire >= EXPIRE_EVERY_NS) {
			last_expire = mono;
			rc = sk_control_expire(ctl, now);
			if (rc > 0)
				busy = true;
			if (rc < 0 && mono - last_err_log > S) {
				sk_logf(SK_LOG_WARN, "expire",
					"msg=\"payment deadlines: retrying\" err=%s",
					strerror(-rc));
				last_err_log = mono;
			}
			failed |= rc < 0;
		}
		if (mono - last_preheat >= PREHEAT_EVERY_NS) {
			last_preheat = mono;
			preheat(ctl, now);
		}
		if (last_reconcile == 0 || mono - last_reconcile >= RECONCILE_EVERY_NS) {
			last_reconcile = mono;
			reconcile(ctl, now, &reported);
		}
		/* The drain checks the map after each commit; this covers the
		 * other writes (deadlines, payments, admin). */
		if (mono - last_map >= MAP_CHECK_EVERY_NS) {
			last_map = mono;
			(void)sk_control_map_check(ctl);
		}
		rc = sk_control_retention(ctl, now);
		if (rc > 0)
			busy = true;
		if (rc < 0 && mono - last_err_log > S) {
			sk_logf(SK_LOG_WARN, "retention",
				"msg=\"archive purge, trim or policy: retrying\" err=%s",
				strerror(-rc));
			last_err_log = mono;
		}
		sk_control_heartbeat(ctl, now);

		if (busy)
			last_busy = mono;
		if (failed)
			sleep_ns(ERROR_SLEEP_NS);
		else if (!busy)
			sleep_ns(records_waiting(ctl)		    ? SLEEP_LINGER_NS
				 : mono - last_busy > IDLE_AFTER_NS ? SLEEP_IDLE_NS
								    : SLEEP_BUSY_NS);
	}
	/* Commit what is waiting so the parked winners get their answer. */
	rc = sk_control_drain(ctl, sk_clock_ns(CLOCK_REALTIME), SK_CONTROL_DRAIN_NOW, NULL);
	if (rc < 0)
		sk_logf(SK_LOG_ERROR, "drain",
			"msg=\"final drain failed: orders stay queued for the next control "
			"plane\" err=%s",
			strerror(-rc));
	return 0;
}

/* eal_args - argv[0..n) plus --proc-type=secondary if missing; NULL on ENOMEM. */
static char **
eal_args(char **argv, int n, int *eal_argc)
{
	static char secondary[] = "--proc-type=secondary";
	bool has = false;
	char **v = calloc((size_t)n + 2, sizeof(*v));

	if (v == NULL)
		return NULL;
	for (int i = 0; i < n; i++) {
		v[i] = argv[i];
		if (strncmp(argv[i], "--proc-type", 11) == 0)
			has = true;
	}
	*eal_argc = n;
	if (!has)
		v[(*eal_argc)++] = secondary;
	return v;
}

int
main(int argc, char **argv)
{
	struct sk_control *ctl = NULL;
	struct sk_admin *admin = NULL;
	struct sk_exporter *exporter = NULL;
	struct sk_payments *payments = NULL;
	struct sk_paysig_keys *pay_keys = NULL;
	struct sk_member *member = NULL;
	struct sk_kafka_props *kprops = NULL;
	struct sk_member_conf mc;
	uint32_t member_number;
	char **ev = NULL;
	struct opts o;
	int dd = argc, eal_argc, rc, status = EXIT_FAILURE, lock_fd = -1;
	bool eal_up = false;

	sk_logfmt_init(PROG);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	/* Without "--" every argument is an application option. */
	int app_first = dd < argc ? dd : 0;
	rc = control_parse_opts(argc - app_first, argv + app_first, &o);
	if (rc != 0)
		return rc > 0 ? EXIT_SUCCESS : 2;
	if (member_conf(&o, &mc, &member_number) != 0)
		return 2;
	if (o.kafka_config != NULL) {
		char err[SK_KAFKA_CONF_ERR_MAX];

		if (sk_kafka_props_load(&kprops, o.kafka_config, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "config", "option=--kafka-config err=\"%s\"", err);
			return 2;
		}
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ev = eal_args(argv, dd < argc ? dd : 1, &eal_argc);
	if (ev == NULL) {
		sk_logf(SK_LOG_ERROR, "startup", "err=\"out of memory\"");
		goto out;
	}
	rc = sk_logfmt_dpdk();
	if (rc != 0) {
		sk_logf(SK_LOG_ERROR, "startup", "msg=\"cannot route DPDK's log lines\" err=%s",
			strerror(-rc));
		goto out;
	}
	if (rte_eal_init(eal_argc, ev) < 0) {
		sk_logf(SK_LOG_ERROR, "startup",
			"msg=\"EAL init failed (is the dataplane running with this "
			"--file-prefix?)\" err=%s",
			rte_strerror(rte_errno));
		goto out;
	}
	eal_up = true;
	lock_fd = lock_dataplane();
	if (lock_fd < 0)
		goto out;

	struct sk_control_conf cc = {
		.store_dir = o.store,
		.store_map_size = o.map_mb << 20,
		.store_flags = o.nosync ? SK_STORE_NOSYNC : 0,
		.pay_timeout_ns = o.pay_timeout_s > 0 ? o.pay_timeout_s * S : -1,
		.batch_max = o.batch_max,
		.batch_linger_ns = o.batch_us * 1000,
		.requests_ttl_ns = o.pay_requests_age_s * S,
		.member = member_number,
		.map_grow = {.grow_at_pct = o.map_grow_at,
			     .step = o.map_step_mb << 20,
			     .max_size = o.map_max_mb << 20},
		.retention_keep_days = o.retention_keep_days,
		.events_exported = o.kafka != NULL,
	};
	if (member_check(&o, &mc) != 0 || attach(&ctl, &cc) != 0)
		goto out;
	struct sk_store_info si;
	if (sk_store_info(sk_control_store(ctl), &si) == 0 && si.upgraded_from != 0)
		sk_logf(SK_LOG_INFO, "store",
			"msg=\"store upgraded in place\" from_schema=%u to_schema=%u "
			"order_lines_rewritten=%" PRIu64,
			si.upgraded_from, si.schema_major, si.upgraded_lines);
	if (o.kafka != NULL) {
		char err[SK_EXPORT_ERR_MAX];
		struct sk_export_conf kc = {.bootstrap = o.kafka,
					    .orders_topic = o.kafka_orders,
					    .events_topic = o.kafka_events,
					    .props = kprops};
		if (sk_exporter_start(&exporter, sk_control_store(ctl), &kc, err, sizeof(err)) !=
		    0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
		sk_control_metrics_extra(ctl, export_metrics, exporter);
		if (sk_paysig_keys_load(o.pay_key_file, &pay_keys, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "option=--payments-key-file err=\"%s\"",
				err);
			goto out;
		}
		struct sk_payments_conf pc = {.bootstrap = o.kafka,
					      .topic = o.kafka_payments,
					      .group = o.kafka_group,
					      .member = o.member,
					      .props = kprops,
					      .keys = pay_keys,
					      .max_age_ns = o.pay_requests_age_s * S};
		if (sk_payments_start(&payments, ctl, &pc, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
	}

	/* Before the admin API: it reads the member. */
	if (member_start(&member, ctl, &o, &mc) != 0)
		goto out;
	if (o.admin_port != 0 || o.admin_socket != NULL) {
		char err[SK_CONTROL_ERR_MAX];
		struct sk_admin_conf ac = {.tcp = o.admin_port != 0,
					   .port = (uint16_t)o.admin_port,
					   .token_file = o.admin_token_file,
					   .socket_path = o.admin_socket};
		if (sk_admin_start(&admin, ctl, &ac, err, sizeof(err)) != 0) {
			sk_logf(SK_LOG_ERROR, "startup", "err=%s", err);
			goto out;
		}
	}
	char where[64] = "off";
	if (o.admin_port != 0)
		snprintf(where, sizeof(where), "127.0.0.1:%u", o.admin_port);
	sk_logf(SK_LOG_NOTICE, "ready",
		"msg=attached lcores=%u epoch=%" PRIu32 " member=%" PRIu32
		" store=%s admin=%s admin_socket=%s kafka=%s",
		sk_control_nrings(ctl), sk_control_shm(ctl)->epoch, member_number, o.store, where,
		o.admin_socket != NULL ? o.admin_socket : "off", o.kafka != NULL ? o.kafka : "off");

	preheat(ctl, sk_clock_ns(CLOCK_REALTIME));
	status = run(ctl) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

	struct sk_control_stats s;
	sk_control_stats(ctl, &s);
	sk_logf(SK_LOG_NOTICE, "shutdown",
		"msg=stopped committed=%" PRIu64 " batches=%" PRIu64 " failed=%" PRIu64
		" cancelled=%" PRIu64 " paid=%" PRIu64,
		s.orders_committed, s.batches, s.orders_failed, s.cancels,
		s.pay[SK_CONTROL_PAY_DONE]);
out:
	sk_payments_stop(payments);
	sk_paysig_keys_free(pay_keys);
	sk_admin_stop(admin);
	/* Unsold cluster units back to the pool while the dataplane runs
	 * (bounded), then the member goes. */
	sk_member_stop(member, 3 * S);
	/* What the final drain committed goes out too (bounded). */
	sk_exporter_stop(exporter, 5000);
	sk_control_close(ctl);
	sk_kafka_props_free(kprops);
	if (lock_fd >= 0)
		close(lock_fd);
	if (eal_up)
		rte_eal_cleanup();
	free(ev);
	return status;
}
