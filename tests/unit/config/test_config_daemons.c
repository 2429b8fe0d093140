/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config_daemons.c - one file for every daemon: the sections of
 * seckill-control and seckill-mysql-writer, which daemon checks what, the
 * shared [store] path, and the file turned into a daemon's options
 * (sk_config_argv_merge()) with the command line overriding it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sk_common.h"
#include "sk_config.h"
#include "sk_test.h"

#define PORT0 "[port0]\ndevice = net_tap0,iface=sk0\naddress = 198.18.0.1/24\n"
#define DP    SK_CONFIG_DATAPLANE
#define CTL   SK_CONFIG_CONTROL
#define MW    SK_CONFIG_MYSQL_WRITER
#define ALL   SK_CONFIG_ALL

static char tmp_path[64];

/* write_tmp - @text into a fresh temporary file; returns its path (static). */
static const char *
write_tmp(const char *text)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/sk_config_dtest_XXXXXX");
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return tmp_path;
}

/* load - @text read for @daemons into a heap config (the caller frees it). */
static int
load(const char *text, unsigned daemons, struct sk_config **cfg, char *err, size_t errlen)
{
	const char *path = write_tmp(text);
	int rc;

	*cfg = malloc(sizeof(**cfg));
	ck_assert_ptr_nonnull(*cfg);
	rc = sk_config_load_for(*cfg, path, daemons, err, errlen);
	unlink(path);
	return rc;
}

/* ------------------------------------------- every section: a bad value */

struct bad_case {
	unsigned daemons;
	const char *text;
	const char *needle; /* "LINE: section.key: why", in the one-line error */
};

/* One bad value or more per section, the dataplane's included; line 4 is
 * the first after PORT0's three and the section's header. */
static const struct bad_case bad_cases[] = {
	{ALL, PORT0 "[dataplane]\nburst = 0\n", ":5: dataplane.burst: 0 is out of range 1..256"},
	{ALL, PORT0 "rss = maybe\n", ":4: port0.rss: 'maybe' is not on/off"},
	{ALL, PORT0 "[tcp]\nmss = 80\n", ":5: tcp.mss: 80 is out of range 536..9000"},
	{ALL, PORT0 "[http]\nfields_max = 0\n", ":5: http.fields_max: 0 is out of range"},
	{ALL, PORT0 "[seckill]\nack = later\n",
	 ":5: seckill.ack: 'later' is not queued or durable"},
	{ALL, PORT0 "[proxy]\nprotocol = v3\n", ":5: proxy.protocol: 'v3' is not one of none"},
	{ALL, PORT0 "[tls]\nmin_version = 1.1\n", ":5: tls.min_version: '1.1' is not one of"},
	{ALL, PORT0 "[item.7]\ntotal = x\n", ":5: item.7.total: 'x' is not a decimal number"},
	{ALL, PORT0 "[cluster]\nmember_id = 32\n",
	 ":5: cluster.member_id: 32 is out of range 0..31"},
	/* [store] */
	{CTL, "[store]\npath = /a b\n", ":2: store.path: blanks and control characters"},
	{CTL, "[store]\nmap_mb = 0\n", ":2: store.map_mb: 0 is out of range 1..16777216"},
	{CTL, "[retention]\nkeep_days = 36501\n",
	 ":2: retention.keep_days: 36501 is out of range 0..36500"},
	{CTL, "[store]\nmap_grow_at = 100\n", ":2: store.map_grow_at: 100 is out of range 1..99"},
	{CTL, "[store]\nnosync = sometimes\n", ":2: store.nosync: 'sometimes' is not on/off"},
	{CTL, "[store]\nbatch_us = 1000001\n", ":2: store.batch_us: 1000001 is out of range"},
	{CTL, "[store]\nbatch_max = 7\n", ":2: store.batch_max: 7 is out of range 8..16777216"},
	{MW, "[store]\npath = \n", ":2: store.path: empty value"},
	/* [control] */
	{CTL, "[control]\npayment_timeout_s = -1\n",
	 ":2: control.payment_timeout_s: '-1' is not a decimal number"},
	{CTL, "[control]\npayments_key_file = a\tb\n",
	 ":2: control.payments_key_file: blanks and control characters"},
	{CTL, "[control]\npayment_requests_max_age_s = 0\n",
	 ":2: control.payment_requests_max_age_s: 0 is out of range"},
	{CTL, "[control]\nlog_level = loud\n",
	 ":2: control.log_level: 'loud' is not one of debug, info, notice, warn, error, crit"},
	/* [admin] */
	{CTL, "[admin]\nsocket = /run/a b\n", ":2: admin.socket: blanks and control characters"},
	{CTL, "[admin]\nport = 65536\n", ":2: admin.port: 65536 is out of range 0..65535"},
	{CTL, "[admin]\ntoken_file = \n", ":2: admin.token_file: empty value"},
	/* [kafka] */
	{CTL, "[kafka]\nbootstrap = a b\n", ":2: kafka.bootstrap: blanks and control characters"},
	{MW, "[kafka]\nconfig_file = a b\n", ":2: kafka.config_file: blanks and control"},
	{MW, "[kafka]\norders_topic = a\x01b\n", ":2: kafka.orders_topic: blanks and control"},
	{CTL, "[kafka]\nevents_topic = a b\n", ":2: kafka.events_topic: blanks"},
	{CTL, "[kafka]\npayments_topic = \n", ":2: kafka.payments_topic: empty value"},
	{CTL, "[kafka]\npayments_group = x y\n", ":2: kafka.payments_group: blanks"},
	{CTL, "[kafka]\npayments_retention_s = 0\n", ":2: kafka.payments_retention_s: 0 is out"},
	/* [cluster] */
	{CTL, "[cluster]\nredis = a b\n", ":2: cluster.redis: blanks and control characters"},
	{CTL, "[cluster]\nredis_user = a b\n", ":2: cluster.redis_user: blanks"},
	{CTL, "[cluster]\nredis_password_file = a b\n", ":2: cluster.redis_password_file: blanks"},
	{CTL, "[cluster]\nmember = Shop-A\n", ":2: cluster.member: 'Shop-A' is not a member id"},
	{CTL, "[cluster]\nmembers = a,,b\n", ":2: cluster.members: '' is not a member id"},
	{CTL, "[cluster]\nmembers = a,b,\n", ":2: cluster.members: '' is not a member id"},
	{CTL, "[cluster]\nidle_ms = 99\n", ":2: cluster.idle_ms: 99 is out of range"},
	/* [mysql] */
	{MW, "[mysql]\nsocket = a b\n", ":2: mysql.socket: blanks and control characters"},
	{MW, "[mysql]\nhost = a b\n", ":2: mysql.host: blanks and control characters"},
	{MW, "[mysql]\nport = 0\n", ":2: mysql.port: 0 is out of range 1..65535"},
	{MW, "[mysql]\nuser = a b\n", ":2: mysql.user: blanks"},
	{MW, "[mysql]\npassword_file = a b\n", ":2: mysql.password_file: blanks"},
	{MW,
	 "[mysql]\ndatabase = "
	 "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd\n",
	 ":2: mysql.database: longer than 64 characters"},
	{MW, "[mysql]\ngroup = a b\n", ":2: mysql.group: blanks"},
	{MW, "[mysql]\nbatch = 100001\n", ":2: mysql.batch: 100001 is out of range 1..100000"},
	{MW, "[mysql]\nmetrics_port = 70000\n", ":2: mysql.metrics_port: 70000 is out of range"},
	{MW, "[mysql]\ndefault_limit = 0\n", ":2: mysql.default_limit: 0 is out of range"},
	{MW, "[mysql]\npark_final_s = 31536001\n", ":2: mysql.park_final_s: 31536001 is out"},
	{MW, "[mysql]\nlog_level = 3\n", ":2: mysql.log_level: '3' is not one of debug"},
	/* names: refused by every daemon, even in another daemon's section */
	{DP, PORT0 "[mysql]\nprt = 3306\n", ":5: mysql.prt: unknown key"},
	{MW, "[tcp]\nmsss = 1460\n", ":2: tcp.msss: unknown key"},
	{CTL, "[kafka]\nbootstrap = a:1\nbootstrap = b:1\n", ":3: kafka.bootstrap: set twice"},
	{MW, "[admin]\nport = 1\nport = 2\n", ":3: admin.port: set twice"},
	{CTL, "[kafak]\n", ":1: unknown section [kafak]"},
	/* rules between keys */
	{CTL, "[admin]\nport = 8081\n", "admin.token_file: required when admin.port is set"},
	{CTL, "[cluster]\nredis = r:6379\nmember = a\n", "cluster.redis: a cluster member needs"},
	{CTL, "[cluster]\nredis = r:6379\nmember = a\nmembers = a,b\nredis_user = u\n",
	 "cluster.redis_password_file: required with cluster.redis_user"},
	{CTL, "[kafka]\nbootstrap = k:9092\n", "control.payments_key_file: required with kafka"},
	{CTL, "[control]\npayments_key_file = /k\n", "control.payments_key_file: needs kafka"},
	{CTL, "[kafka]\nconfig_file = /p\n", "kafka.config_file: needs kafka.bootstrap"},
	{ALL, PORT0 "[cluster]\nmember_id = 1\nredis = r:1\nmember = b\nmembers = a,b\n",
	 "cluster.member_id: 1, but cluster.member 'b' is number 2 of cluster.members (from 1)"},
	{ALL, PORT0 "[cluster]\nmember_id = 1\nredis = r:1\nmember = c\nmembers = a,b\n",
	 "cluster.members: does not name cluster.member 'c'"},
	{ALL, PORT0 "[store]\npath = /a\n[seckill]\nstore = /a\n",
	 "seckill.store: a deprecated alias of store.path, which is set too"},
	{DP, "[mysql]\nport = 3306\n", "port0.device: no port configured"},
};

START_TEST(test_bad_value)
{
	const struct bad_case *bc = &bad_cases[_i];
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config *cfg;
	int rc;

	rc = load(bc->text, bc->daemons, &cfg, err, sizeof(err));
	free(cfg);
	ck_assert_msg(rc == -EINVAL, "case %d: rc %d, error '%s'", _i, rc, err);
	ck_assert_msg(strstr(err, bc->needle) != NULL, "case %d: error '%s' lacks '%s'", _i, err,
		      bc->needle);
	ck_assert_msg(strncmp(err, "/tmp/sk_config_dtest_", 21) == 0, "case %d: no file: %s", _i,
		      err);
	ck_assert_msg(strchr(err, '\n') == NULL, "case %d: not one line", _i);
}
END_TEST

/* ------------------------------------------------- every key is parsed */

static const char every_key[] =
	"[store]\npath = /var/lib/sk\nmap_mb = 64\nnosync = on\nbatch_us = 200\nbatch_max = 512\n"
	"[control]\npayment_timeout_s = 600\npayments_key_file = /etc/sk/pay.key\n"
	"payment_requests_max_age_s = 700000\nlog_level = notice\n"
	"[admin]\nsocket = none\nport = 8081\ntoken_file = /etc/sk/admin.token\n"
	"[kafka]\nbootstrap = k1:9092,k2:9092\nconfig_file = /etc/sk/kafka.properties\n"
	"orders_topic = o.t\nevents_topic = e.t\npayments_topic = p.t\npayments_group = pg\n"
	"payments_retention_s = 86400\n"
	"[cluster]\nredis = unix:/run/redis.sock\nredis_user = sk\n"
	"redis_password_file = /etc/sk/redis.pw\nmember = shop-a\nmembers = shop-a,shop_b\n"
	"idle_ms = 2500\n"
	"[mysql]\nsocket = /run/mysqld/m.sock\nhost = db.example\nport = 3307\nuser = writer\n"
	"password_file = /etc/sk/my.pw\ndatabase = sk\ngroup = g1\nbatch = 50\n"
	"metrics_port = 9105\ndefault_limit = 2\npark_final_s = 60\nlog_level = warn\n";

START_TEST(test_every_key)
{
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config *cfg;
	const struct sk_config_opts *o;

	ck_assert_msg(load(every_key, CTL | MW, &cfg, err, sizeof(err)) == 0, "%s", err);
	o = &cfg->opts;
	ck_assert_str_eq(cfg->store, "/var/lib/sk");
	ck_assert(!cfg->store_alias);
	ck_assert_str_eq(o->store_map_mb, "64");
	ck_assert_str_eq(o->store_nosync, "on");
	ck_assert_str_eq(o->store_batch_us, "200");
	ck_assert_str_eq(o->store_batch_max, "512");
	ck_assert_str_eq(o->ctl_payment_timeout_s, "600");
	ck_assert_str_eq(o->ctl_payments_key_file, "/etc/sk/pay.key");
	ck_assert_str_eq(o->ctl_payment_requests_age_s, "700000");
	ck_assert_str_eq(o->ctl_log_level, "notice");
	ck_assert_str_eq(o->admin_socket, "none");
	ck_assert_str_eq(o->admin_port, "8081");
	ck_assert_str_eq(o->admin_token_file, "/etc/sk/admin.token");
	ck_assert_str_eq(o->kafka_bootstrap, "k1:9092,k2:9092");
	ck_assert_str_eq(o->kafka_config_file, "/etc/sk/kafka.properties");
	ck_assert_str_eq(o->kafka_orders_topic, "o.t");
	ck_assert_str_eq(o->kafka_events_topic, "e.t");
	ck_assert_str_eq(o->kafka_payments_topic, "p.t");
	ck_assert_str_eq(o->kafka_payments_group, "pg");
	ck_assert_str_eq(o->kafka_payments_retention_s, "86400");
	ck_assert_str_eq(o->cluster_redis, "unix:/run/redis.sock");
	ck_assert_str_eq(o->cluster_redis_user, "sk");
	ck_assert_str_eq(o->cluster_redis_password_file, "/etc/sk/redis.pw");
	ck_assert_str_eq(o->cluster_member, "shop-a");
	ck_assert_str_eq(o->cluster_members, "shop-a,shop_b");
	ck_assert_str_eq(o->cluster_idle_ms, "2500");
	ck_assert_str_eq(o->mysql_socket, "/run/mysqld/m.sock");
	ck_assert_str_eq(o->mysql_host, "db.example");
	ck_assert_str_eq(o->mysql_port, "3307");
	ck_assert_str_eq(o->mysql_user, "writer");
	ck_assert_str_eq(o->mysql_password_file, "/etc/sk/my.pw");
	ck_assert_str_eq(o->mysql_database, "sk");
	ck_assert_str_eq(o->mysql_group, "g1");
	ck_assert_str_eq(o->mysql_batch, "50");
	ck_assert_str_eq(o->mysql_metrics_port, "9105");
	ck_assert_str_eq(o->mysql_default_limit, "2");
	ck_assert_str_eq(o->mysql_park_final_s, "60");
	ck_assert_str_eq(o->mysql_log_level, "warn");
	free(cfg);

	/* the same file with a port: the whole appliance's */
	{
		static const char head[] =
			PORT0 "[seckill]\nsecret_file = /s\n[cluster]\nmember_id = 1\n";
		char *text = malloc(sizeof(every_key) + sizeof(head));

		ck_assert_ptr_nonnull(text);
		snprintf(text, sizeof(every_key) + sizeof(head), "%s%s", head, every_key);
		ck_assert_msg(load(text, ALL, &cfg, err, sizeof(err)) == 0, "%s", err);
		ck_assert_str_eq(cfg->store, "/var/lib/sk");
		ck_assert_uint_eq(cfg->nb_ports, 1);
		free(cfg);
		free(text);
	}
}
END_TEST

/* ------------------------------------- whose values each daemon checks */

struct whose_case {
	unsigned daemons;
	const char *text;
};

/* Files that are good for @daemons although another daemon's value is bad. */
static const struct whose_case whose_cases[] = {
	{CTL, "[port0]\nrx_queues = many\n[tcp]\nmss = 1\n[item.0]\ntotal = x\n"},
	{MW, "[admin]\nport = 99999\n[cluster]\nmember = BAD\n[store]\nmap_mb = 0\n"},
	{DP, PORT0 "[mysql]\nport = 0\n[kafka]\npayments_group = a b\n[admin]\nport = 1\n"},
	{MW, "[kafka]\nbootstrap = k:9092\n"}, /* no payments key: control's rule */
	{CTL | MW, "[seckill]\nack_wait_ms = 0\n[dataplane]\nmbufs = 1\n"},
	/* the member number is checked against the list only with both daemons */
	{CTL, "[cluster]\nmember_id = 1\nredis = r:1\nmember = b\nmembers = a,b\n"},
};

START_TEST(test_whose_values)
{
	const struct whose_case *wc = &whose_cases[_i];
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config *cfg;
	int rc;

	rc = load(wc->text, wc->daemons, &cfg, err, sizeof(err));
	free(cfg);
	ck_assert_msg(rc == 0, "case %d: %s", _i, err);
	/* ... and refused by the whole-file check */
	rc = load(wc->text, ALL, &cfg, err, sizeof(err));
	free(cfg);
	ck_assert_msg(rc == -EINVAL, "case %d: the whole-file check passed", _i);
}
END_TEST

/* ------------------------------------------------ the shared store path */

START_TEST(test_store_shared)
{
	static const unsigned each[] = {DP, CTL, MW, ALL};
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config *cfg;

	for (size_t i = 0; i < SK_ARRAY_SIZE(each); i++) {
		ck_assert_msg(load(PORT0
				   "[seckill]\nsecret_file = /s\n[store]\npath = /srv/orders\n",
				   each[i], &cfg, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(cfg->store, "/srv/orders");
		ck_assert(!cfg->store_alias);
		/* the dataplane's default ack follows the store, wherever it is named */
		if (each[i] & DP)
			ck_assert_int_eq(cfg->ack, SK_CONFIG_ACK_DURABLE);
		free(cfg);
		/* the deprecated alias still works, and says so */
		ck_assert_msg(load(PORT0 "[seckill]\nsecret_file = /s\nstore = /old/orders\n",
				   each[i], &cfg, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(cfg->store, "/old/orders");
		ck_assert(cfg->store_alias);
		free(cfg);
	}
}
END_TEST

/* ------------------------------------------- the file as a command line */

/* merge - sk_config_argv_merge() of @argv (NULL-terminated) for @daemon. */
static int
merge(unsigned daemon, const char *const *argv, struct sk_config_argv **out, char *err,
      size_t errlen)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	return sk_config_argv_merge(argc, (char *const *)argv, daemon, out, err, errlen);
}

/* expect_argv - @m is exactly @want (NULL-terminated). */
static void
expect_argv(const struct sk_config_argv *m, const char *const *want)
{
	int n = 0;

	for (; want[n] != NULL; n++) {
		ck_assert_msg(n < m->argc, "argv[%d] missing, want '%s'", n, want[n]);
		ck_assert_str_eq(m->argv[n], want[n]);
	}
	ck_assert_int_eq(m->argc, n);
	ck_assert_ptr_null(m->argv[n]);
}

static const char merge_file[] = PORT0 "[store]\npath = /srv/o\nnosync = off\nbatch_max = 64\n"
				       "[admin]\nport = 8081\ntoken_file = /t\n"
				       "[kafka]\nbootstrap = k:9092\norders_topic = o.t\n"
				       "[control]\npayments_key_file = /pk\n"
				       "[mysql]\nsocket = /run/m.sock\nport = 3307\n"
				       "[tcp]\nmss = 1400\n";

START_TEST(test_merge_control)
{
	const char *path = write_tmp(merge_file);
	const char *argv[] = {"--", "--config", path, "--admin-port", "9000", NULL};
	const char *want[] = {"--",
			      "--store=/srv/o",
			      "--batch-max=64",
			      "--payments-key-file=/pk",
			      "--admin-port=8081",
			      "--admin-token-file=/t",
			      "--kafka=k:9092",
			      "--kafka-orders-topic=o.t",
			      "--admin-port",
			      "9000",
			      NULL};
	static const struct option lo[] = {{"admin-port", required_argument, NULL, 'p'},
					   {"store", required_argument, NULL, 's'},
					   {"batch-max", required_argument, NULL, 'b'},
					   {"admin-token-file", required_argument, NULL, 't'},
					   {"kafka", required_argument, NULL, 'k'},
					   {"kafka-orders-topic", required_argument, NULL, 'o'},
					   {"payments-key-file", required_argument, NULL, 'y'},
					   {NULL, 0, NULL, 0}};
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config_argv *m;
	const char *port = NULL, *store = NULL;
	int c;

	ck_assert_msg(merge(CTL, argv, &m, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	expect_argv(m, want);
	/* getopt_long keeps the last value: the command line's */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(m->argc, m->argv, "", lo, NULL)) != -1) {
		ck_assert_int_ne(c, '?');
		if (c == 'p')
			port = optarg;
		else if (c == 's')
			store = optarg;
	}
	ck_assert_str_eq(port, "9000");
	ck_assert_str_eq(store, "/srv/o");
	free(m);
}
END_TEST

START_TEST(test_merge_mysql_writer)
{
	const char *path = write_tmp(merge_file);
	char opt[96];
	const char *argv[] = {"run", opt, "--port", "3310", NULL};
	const char *want[] = {"run",
			      "--store=/srv/o",
			      "--bootstrap=k:9092",
			      "--orders-topic=o.t",
			      "--socket=/run/m.sock",
			      "--port=3307",
			      "--port",
			      "3310",
			      NULL};
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config_argv *m;

	snprintf(opt, sizeof(opt), "--config=%s", path);
	ck_assert_msg(merge(MW, argv, &m, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	expect_argv(m, want);
	free(m);
}
END_TEST

START_TEST(test_merge_flags)
{
	const char *path = write_tmp("[store]\npath = /s\nnosync = yes\n");
	const char *argv[] = {"seckill-control", "--config", path, NULL};
	const char *want[] = {"seckill-control", "--store=/s", "--store-nosync", NULL};
	const char *plain[] = {"seckill-control", "--store", "/x", NULL};
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config_argv *m;

	ck_assert_msg(merge(CTL, argv, &m, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	expect_argv(m, want);
	free(m);
	/* no --config: the command line as it is */
	ck_assert_int_eq(merge(CTL, plain, &m, err, sizeof(err)), 0);
	expect_argv(m, plain);
	free(m);
}
END_TEST

START_TEST(test_merge_errors)
{
	const char *twice[] = {"x", "--config", "/a", "--config=/b", NULL};
	const char *bare[] = {"x", "--store", "/s", "--config", NULL};
	const char *empty[] = {"x", "--config=", NULL};
	const char *missing[] = {"x", "--config", "/nonexistent/sk.ini", NULL};
	const char *path = write_tmp("[admin]\nport = 1\n[mysql]\nport = x\n");
	const char *bad[] = {"x", "--config", path, NULL};
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config_argv *m = (void *)1;

	ck_assert_int_eq(merge(CTL, twice, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err, "--config: given twice");
	ck_assert_int_eq(merge(CTL, bare, &m, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--config: needs a FILE");
	ck_assert_int_eq(merge(MW, empty, &m, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(merge(MW, missing, &m, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/sk.ini: No such file"));
	/* the writer refuses its own bad value; control refuses its rule */
	ck_assert_int_eq(merge(MW, bad, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":4: mysql.port: 'x' is not a decimal number"));
	ck_assert_int_eq(merge(CTL, bad, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "admin.token_file: required"));
	ck_assert_int_eq(merge(DP, bad, &m, NULL, 0), -EINVAL); /* not a daemon with options */
	unlink(path);
}
END_TEST

/* The shipped example is good for every daemon and for the whole-file check. */
START_TEST(test_example)
{
	static const unsigned each[] = {DP, CTL, MW, ALL};
	const char *dir = getenv("SK_CONFIG_DIR");
	char err[SK_CONFIG_ERR_MAX] = "", path[1024];
	struct sk_config *cfg = malloc(sizeof(*cfg));

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(cfg);
	snprintf(path, sizeof(path), "%s/seckill.ini", dir);
	for (size_t i = 0; i < SK_ARRAY_SIZE(each); i++) {
		ck_assert_msg(sk_config_load_for(cfg, path, each[i], err, sizeof(err)) == 0, "%s",
			      err);
		ck_assert_str_eq(cfg->store, "/var/lib/seckill/orders");
		ck_assert(!cfg->store_alias);
	}
	free(cfg);
}
END_TEST

static Suite *
config_daemons_suite(void)
{
	Suite *s = suite_create("config_daemons");
	TCase *tc = tcase_create("daemons");

	tcase_add_loop_test(tc, test_bad_value, 0, (int)SK_ARRAY_SIZE(bad_cases));
	tcase_add_test(tc, test_every_key);
	tcase_add_loop_test(tc, test_whose_values, 0, (int)SK_ARRAY_SIZE(whose_cases));
	tcase_add_test(tc, test_store_shared);
	tcase_add_test(tc, test_merge_control);
	tcase_add_test(tc, test_merge_mysql_writer);
	tcase_add_test(tc, test_merge_flags);
	tcase_add_test(tc, test_merge_errors);
	tcase_add_test(tc, test_example);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(config_daemons_suite)
