/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --kafka-config (kafkaconf/sk_kafka_conf.h): a properties file's settings
 * reach the rd_kafka_conf_t (read back with rd_kafka_conf_dump(), since
 * librdkafka 2.0's mock cluster has no SASL to log in to), and every bad
 * file is refused with its path, line and reason, never a secret's value.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_kafka_conf.h"
#include "sk_test.h"
#include "sk_test_fs.h"

static char dir[256], path[512];

static void
setup(void)
{
	ck_assert_int_eq(sk_test_tmpdir(dir, sizeof(dir), "sk-kafka-conf"), 0);
	snprintf(path, sizeof(path), "%s/kafka.properties", dir);
}

static void
teardown(void)
{
	sk_test_rmtree(dir);
}

/* write_file - @text into the file at @path, mode @mode. */
static void
write_file(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* dump_has - whether @c's dump (global and default topic) holds @k = @v. */
static int
dump_has(rd_kafka_conf_t *c, const char *k, const char *v)
{
	size_t n;
	const char **d = rd_kafka_conf_dump(c, &n);
	int found = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		if (strcmp(d[i], k) == 0 && strcmp(d[i + 1], v) == 0)
			found = 1;
	rd_kafka_conf_dump_free(d, n);
	return found;
}

static const struct sk_kafka_kv own[] = {
	{"bootstrap.servers", "127.0.0.1:9092"},
	{"group.id", "seckill-control"},
	{"enable.auto.commit", "false"},
	{"message.timeout.ms", "0"},
};
static const char *const reserved[] = {"isolation.level", NULL};

START_TEST(sasl_plain_passed_through)
{
	struct sk_kafka_props *p = NULL;
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	char err[SK_KAFKA_CONF_ERR_MAX] = "";

	write_file("# the shop's cluster\n"
		   "\n"
		   "security.protocol = SASL_PLAINTEXT\n"
		   "  ! another comment\n"
		   "sasl.mechanism=PLAIN\n"
		   "sasl.username=seckill\n"
		   "sasl.password = hunter2 has spaces\n"
		   "ssl.endpoint.identification.algorithm=none\r\n",
		   0600);
	ck_assert_int_eq(sk_kafka_props_load(&p, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(sk_kafka_props_count(p), 5);
	ck_assert_int_eq(
		sk_kafka_conf_build(c, own, SK_ARRAY_SIZE(own), reserved, p, err, sizeof(err)), 0);
	ck_assert(dump_has(c, "security.protocol", "sasl_plaintext"));
	ck_assert(dump_has(c, "sasl.mechanisms", "PLAIN"));
	ck_assert(dump_has(c, "sasl.username", "seckill"));
	ck_assert(dump_has(c, "sasl.password", "hunter2 has spaces"));
	ck_assert(dump_has(c, "ssl.endpoint.identification.algorithm", "none"));
	/* the program's own settings are there too */
	ck_assert(dump_has(c, "group.id", "seckill-control"));
	ck_assert(dump_has(c, "enable.auto.commit", "false"));
	rd_kafka_conf_destroy(c);
	sk_kafka_props_free(p);

	/* no file: only the program's own */
	c = rd_kafka_conf_new();
	ck_assert_int_eq(
		sk_kafka_conf_build(c, own, SK_ARRAY_SIZE(own), NULL, NULL, err, sizeof(err)), 0);
	ck_assert(dump_has(c, "security.protocol", "plaintext"));
	rd_kafka_conf_destroy(c);
}
END_TEST

/* Bad files: each refused at load, naming the file, the line and why. */
static const struct {
	const char *text;
	mode_t mode;
	int rc;
	const char *want; /* after "PATH" */
} bad_files[] = {
	{"a.b\n", 0600, -EINVAL, ":1: expected key=value"},
	{"# x\n=1\n", 0600, -EINVAL, ":2: empty key"},
	{"# x\n\nno.such.property=1\n", 0600, -EINVAL,
	 ":3: no.such.property: No such configuration property"},
	{"security.protocol=bogus\n", 0600, -EINVAL, ":1: security.protocol: Invalid value"},
	{"linger.ms=5\nqueue.buffering.max.ms=6\n", 0600, -EINVAL,
	 ":2: queue.buffering.max.ms: set twice (line 1)"},
	{"sasl.password=hunter2\n", 0640, -EPERM,
	 ":1: sasl.password is a secret, and the file is open to group or others (mode 640)"},
	{"ssl.key.password=hunter2\n", 0604, -EPERM, ":1: ssl.key.password is a secret"},
	/* no secret, but whoever may write it picks the TLS trust and the login */
	{"linger.ms=5\n", 0620, -EPERM, ": mode 0620: writable by group or others (chmod 600)"},
	{"ssl.ca.location=/tmp/ca.pem\n", 0602, -EPERM, ": mode 0602: writable by group or others"},
};

START_TEST(bad_file_refused)
{
	struct sk_kafka_props *p = NULL;
	char err[SK_KAFKA_CONF_ERR_MAX] = "", want[1024];

	write_file(bad_files[_i].text, bad_files[_i].mode);
	ck_assert_int_eq(sk_kafka_props_load(&p, path, err, sizeof(err)), bad_files[_i].rc);
	ck_assert_ptr_null(p);
	snprintf(want, sizeof(want), "%s%s", path, bad_files[_i].want);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "case %d: '%s' is not '%s...'", _i,
		      err, want);
	ck_assert_ptr_null(strstr(err, "hunter2"));
}
END_TEST

/* Keys the program owns or relies on, their aliases, and the brokers. */
static const struct {
	const char *text;
	const char *want;
} refused_keys[] = {
	{"enable.auto.commit=true\n", ":1: enable.auto.commit: refused (the program sets it"},
	{"# x\ngroup.id=other\n", ":2: group.id: refused (the program sets it itself)"},
	{"delivery.timeout.ms=100\n", ":1: delivery.timeout.ms: refused (the program sets it"},
	{"isolation.level=read_uncommitted\n", ":1: isolation.level: refused (the program relies"},
	{"metadata.broker.list=127.0.0.1:1\n", ":1: metadata.broker.list: refused"},
	{"bootstrap.servers=127.0.0.1:1\n", ":1: bootstrap.servers: refused"},
	{"log.queue=true\n", ":1: log.queue: refused"},
	{"ssl.engine.location=/tmp/e.so\n", ":1: ssl.engine.location: refused (loads code)"},
	{"ssl.providers=legacy\n", ":1: ssl.providers: refused (loads code)"},
	{"sasl.kerberos.kinit.cmd=touch /tmp/x\n",
	 ":1: sasl.kerberos.kinit.cmd: refused (runs a command)"},
};

START_TEST(program_keys_refused)
{
	struct sk_kafka_props *p = NULL;
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	char err[SK_KAFKA_CONF_ERR_MAX] = "", want[1024];

	write_file(refused_keys[_i].text, 0644);
	ck_assert_int_eq(sk_kafka_props_load(&p, path, err, sizeof(err)), 0);
	ck_assert_int_eq(
		sk_kafka_conf_build(c, own, SK_ARRAY_SIZE(own), reserved, p, err, sizeof(err)),
		-EINVAL);
	snprintf(want, sizeof(want), "%s%s", path, refused_keys[_i].want);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "case %d: '%s' is not '%s...'", _i,
		      err, want);
	rd_kafka_conf_destroy(c);
	sk_kafka_props_free(p);
}
END_TEST

/* A file of another user (as root only: chown needs it) is refused. */
START_TEST(other_owner_refused)
{
	struct sk_kafka_props *p = NULL;
	char err[SK_KAFKA_CONF_ERR_MAX] = "";

	if (geteuid() != 0)
		return;
	write_file("linger.ms=5\n", 0600);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	ck_assert_int_eq(sk_kafka_props_load(&p, path, err, sizeof(err)), -EPERM);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(err, "owned by uid 65534, neither this user nor root"));
}
END_TEST

START_TEST(missing_file)
{
	struct sk_kafka_props *p = NULL;
	char err[SK_KAFKA_CONF_ERR_MAX] = "";

	ck_assert_int_eq(sk_kafka_props_load(&p, path, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("kafka_conf");
	TCase *tc = tcase_create("props");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sasl_plain_passed_through);
	tcase_add_loop_test(tc, bad_file_refused, 0, (int)SK_ARRAY_SIZE(bad_files));
	tcase_add_loop_test(tc, program_keys_refused, 0, (int)SK_ARRAY_SIZE(refused_keys));
	tcase_add_test(tc, other_owner_refused);
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(suite)
