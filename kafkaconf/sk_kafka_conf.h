/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * librdkafka settings from a file: how every Kafka client of the appliance
 * (seckill-control's exporter and payments consumer, seckill-mysql-writer,
 * seckill-kafka) takes `security.protocol`, `sasl.*`, `ssl.*` and any other
 * librdkafka property (docs/kafka.md, "Security settings").
 *
 * The file is a Java-style properties file: one `key=value` per line,
 * blanks around key and value ignored, `#` or `!` starting a comment line,
 * blank lines skipped; no escapes and no continuation lines. Secrets stay
 * in the file (never argv, never a log line): no message of this module
 * prints a value.
 *
 * Refused, with "FILE:LINE: ..." and the reason:
 *   - a line without '=', a key set twice, a line over 4095 bytes, more
 *     than SK_KAFKA_PROPS_MAX keys;
 *   - a key the program sets itself or relies on (see sk_kafka_conf_build():
 *     the program's own settings, its @p reserved list, and for every
 *     program bootstrap.servers / metadata.broker.list (the program's own
 *     option), plugin.library.paths, interceptor.*, ssl.engine.location,
 *     ssl.providers (code loading), sasl.kerberos.kinit.cmd (runs a
 *     command), log.queue (the log callback), and the aliases of each);
 *   - a key or value librdkafka refuses (its message is quoted);
 *   - a file writable by group or others, or owned by another user than
 *     the process's or root (whoever may change it picks the TLS trust and
 *     the login of every client);
 *   - a file readable by group or others that holds a secret
 *     (a key containing "password" or "secret", or ssl.key.pem,
 *     sasl.oauthbearer.config): chmod 600 it.
 *
 * Thread-safety: a loaded set is read-only; any thread may apply it.
 */
#ifndef SK_KAFKA_CONF_H
#define SK_KAFKA_CONF_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

/** Most keys in one file. */
#define SK_KAFKA_PROPS_MAX 64
/** Size of an error buffer that never truncates the messages of this module. */
#define SK_KAFKA_CONF_ERR_MAX 768

/** A loaded properties file. Opaque. */
struct sk_kafka_props;

/** One setting of a program's own (sk_kafka_conf_build()). */
struct sk_kafka_kv {
	const char *key;
	const char *value;
};

/**
 * sk_kafka_props_load - read and check the properties file @p path.
 * Checks the syntax, repeats, the secret-file mode (fstat of the opened
 * file) and every key and value against librdkafka (a scratch
 * configuration); the program's own keys are checked later, by
 * sk_kafka_conf_build().
 * @param[out] out  the set, owned by the caller (sk_kafka_props_free());
 *                  set only on success
 * @param[in]  path the file
 * @param[out] err  "PATH:LINE: what is wrong" (LINE omitted for the whole
 *                  file); may be NULL
 * @param      errlen bytes at @p err
 * @return 0, -ENOENT/-EACCES/... (cannot open or read: the errno),
 *         -EPERM (a file writable by group or others or owned by another
 *         user, or a secret in a file readable by group or others),
 *         -EINVAL (a bad line, key or value), -E2BIG (too many keys, or a
 *         line too long), -ENOMEM.
 */
int sk_kafka_props_load(struct sk_kafka_props **out, const char *path, char *err, size_t errlen);

/**
 * sk_kafka_props_free - wipe the values (secrets) and free @p p (NULL is
 * fine).
 */
void sk_kafka_props_free(struct sk_kafka_props *p);

/** sk_kafka_props_count - keys in @p p (0 for NULL). */
size_t sk_kafka_props_count(const struct sk_kafka_props *p);

/**
 * sk_kafka_conf_build - set on @p conf first the file's properties @p props
 * (may be NULL: none), then the program's own settings @p own. A file key
 * that is one of @p own's keys, of @p reserved (NULL-terminated; may be
 * NULL), of the keys refused for every program (see the file comment), or
 * an alias of one of them is refused.
 * @param conf      the configuration being built (not consumed)
 * @param own       @p nown settings of the program
 * @param reserved  further keys the program relies on, NULL-terminated
 * @param props     the file's set, or NULL
 * @param err       "PATH:LINE: KEY: ..." for a file key, "KEY = VALUE: ..."
 *                  for one of @p own (the program's own values are no
 *                  secret); may be NULL
 * @return 0, or -EINVAL (a refused key, or librdkafka refused a value).
 *         @p conf may hold part of the settings on error: destroy it.
 */
int sk_kafka_conf_build(rd_kafka_conf_t *conf, const struct sk_kafka_kv *own, size_t nown,
			const char *const *reserved, const struct sk_kafka_props *props, char *err,
			size_t errlen);

#endif /* SK_KAFKA_CONF_H */
