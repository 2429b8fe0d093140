/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdkafka settings from a properties file (sk_kafka_conf.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_kafka_conf.h"
#include "sk_secret_file.h"
#include "sk_text.h"

#define LINE_MAX_LEN 4095

struct prop {
	char *key, *value;
	int line;
};

struct sk_kafka_props {
	char path[512];
	size_t n;
	struct prop p[SK_KAFKA_PROPS_MAX];
};

/* Keys no file may set, whatever the program: its own option gives the
 * brokers; plugins and interceptors load code; the log queue would take
 * the lines away from the log callback (sk_logfmt_kafka). */
static const char *const refused_always[] = {
	"bootstrap.servers", "metadata.broker.list", "plugin.library.paths", "log.queue", NULL,
};

/* librdkafka's aliases (CONFIGURATION.md): both names set one property. */
static const char *const aliases[][2] = {
	{"bootstrap.servers", "metadata.broker.list"},
	{"linger.ms", "queue.buffering.max.ms"},
	{"retries", "message.send.max.retries"},
	{"delivery.timeout.ms", "message.timeout.ms"},
	{"acks", "request.required.acks"},
	{"max.in.flight", "max.in.flight.requests.per.connection"},
	{"enable.auto.commit", "auto.commit.enable"},
	{"sasl.mechanisms", "sasl.mechanism"},
};

/* canon - one name per property: the second of an alias pair. */
static const char *
canon(const char *k)
{
	for (size_t i = 0; i < SK_ARRAY_SIZE(aliases); i++)
		if (strcmp(k, aliases[i][0]) == 0)
			return aliases[i][1];
	return k;
}

static bool
same_prop(const char *a, const char *b)
{
	return strcmp(canon(a), canon(b)) == 0;
}

/* is_secret - whether @k's value is a secret: the file must be private. */
static bool
is_secret(const char *k)
{
	return strstr(k, "password") != NULL || strstr(k, "secret") != NULL ||
	       strcmp(k, "ssl.key.pem") == 0 || strcmp(k, "sasl.oauthbearer.config") == 0;
}

size_t
sk_kafka_props_count(const struct sk_kafka_props *p)
{
	return p != NULL ? p->n : 0;
}

void
sk_kafka_props_free(struct sk_kafka_props *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		explicit_bzero(p->p[i].value, strlen(p->p[i].value));
		free(p->p[i].value);
		free(p->p[i].key);
	}
	explicit_bzero(p, sizeof(*p));
	free(p);
}

/* add_line - one line (@s, NUL-terminated) of the file into @p. */
static int
add_line(struct sk_kafka_props *p, char *s, int line, char *err, size_t errlen)
{
	char *eq, *k, *v;

	s = sk_trim(s);
	if (*s == '\0' || *s == '#' || *s == '!')
		return 0;
	eq = strchr(s, '=');
	if (eq == NULL) {
		sk_set_err(err, errlen, "%s:%d: expected key=value", p->path, line);
		return -EINVAL;
	}
	*eq = '\0';
	k = sk_trim(s);
	v = sk_trim(eq + 1);
	if (*k == '\0') {
		sk_set_err(err, errlen, "%s:%d: empty key", p->path, line);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n; i++)
		if (same_prop(p->p[i].key, k)) {
			sk_set_err(err, errlen, "%s:%d: %s: set twice (line %d)", p->path, line, k,
				   p->p[i].line);
			return -EINVAL;
		}
	if (p->n == SK_KAFKA_PROPS_MAX) {
		sk_set_err(err, errlen, "%s:%d: more than %d keys", p->path, line,
			   SK_KAFKA_PROPS_MAX);
		return -E2BIG;
	}
	struct prop *q = &p->p[p->n];
	q->key = strdup(k);
	q->value = strdup(v);
	q->line = line;
	if (q->key == NULL || q->value == NULL) {
		free(q->key);
		free(q->value);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

/* check - every key against librdkafka, on a scratch configuration. */
static int
check(const struct sk_kafka_props *p, char *err, size_t errlen)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	char e[256];
	int rc = 0;

	if (c == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < p->n && rc == 0; i++)
		if (rd_kafka_conf_set(c, p->p[i].key, p->p[i].value, e, sizeof(e)) !=
		    RD_KAFKA_CONF_OK) {
			sk_set_err(err, errlen, "%s:%d: %s: %s", p->path, p->p[i].line, p->p[i].key,
				   e);
			rc = -EINVAL;
		}
	rd_kafka_conf_destroy(c);
	return rc;
}

/* read_all - the lines of @f into @p. */
static int
read_all(struct sk_kafka_props *p, FILE *f, char *err, size_t errlen)
{
	char buf[LINE_MAX_LEN + 2];
	int line = 0, rc = 0;

	while (rc == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		size_t n = strlen(buf);

		line++;
		if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(f)) {
			sk_set_err(err, errlen, "%s:%d: line longer than %d bytes", p->path, line,
				   LINE_MAX_LEN);
			rc = -E2BIG;
		} else {
			rc = add_line(p, buf, line, err, errlen);
		}
	}
	if (rc == 0 && ferror(f)) {
		rc = -EIO;
		sk_set_err(err, errlen, "%s: read error", p->path);
	}
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

int
sk_kafka_props_load(struct sk_kafka_props **out, const char *path, char *err, size_t errlen)
{
	struct sk_kafka_props *p;
	struct stat sb = {0};
	char why[128];
	FILE *f;
	int rc;

	if (path == NULL || strlen(path) >= sizeof(p->path)) {
		sk_set_err(err, errlen, "kafka config: no file, or a path too long");
		return -EINVAL;
	}
	f = fopen(path, "re");
	if (f == NULL) {
		rc = -errno;
		sk_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	snprintf(p->path, sizeof(p->path), "%s", path);
	rc = read_all(p, f, err, errlen);
	/* Whoever may change the file chooses the TLS trust, the SASL login
	 * and the protocol of every client: only this user or root may. */
	if (rc == 0) {
		rc = sk_secret_file_check(fileno(f), SK_SECRET_DENY_WRITE, &sb, why, sizeof(why));
		if (rc != 0)
			sk_set_err(err, errlen, "%s: %s", path, why);
	}
	fclose(f);
	for (size_t i = 0; rc == 0 && i < p->n; i++)
		if (is_secret(p->p[i].key) && (sb.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
			sk_set_err(err, errlen,
				   "%s:%d: %s is a secret, and the file is open to group or "
				   "others (mode %03o): chmod 600 it",
				   path, p->p[i].line, p->p[i].key, (unsigned)(sb.st_mode & 0777));
			rc = -EPERM;
		}
	if (rc == 0)
		rc = check(p, err, errlen);
	if (rc != 0) {
		sk_kafka_props_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* refused - why a file may not set @k (a static string), or NULL. */
static const char *
refused(const char *k, const struct sk_kafka_kv *own, size_t nown, const char *const *reserved)
{
	for (const char *const *r = refused_always; *r != NULL; r++)
		if (same_prop(k, *r))
			return "set by the program's own options, or unsafe";
	if (strncmp(k, "plugin.", 7) == 0 || strncmp(k, "interceptor.", 12) == 0 ||
	    strcmp(k, "ssl.engine.location") == 0 || strcmp(k, "ssl.providers") == 0)
		return "loads code";
	if (strcmp(k, "sasl.kerberos.kinit.cmd") == 0)
		return "runs a command";
	for (size_t i = 0; i < nown; i++)
		if (same_prop(k, own[i].key))
			return "the program sets it itself";
	for (const char *const *r = reserved; r != NULL && *r != NULL; r++)
		if (same_prop(k, *r))
			return "the program relies on its value";
	return NULL;
}

int
sk_kafka_conf_build(rd_kafka_conf_t *conf, const struct sk_kafka_kv *own, size_t nown,
		    const char *const *reserved, const struct sk_kafka_props *props, char *err,
		    size_t errlen)
{
	char e[256];

	for (size_t i = 0; props != NULL && i < props->n; i++) {
		const struct prop *q = &props->p[i];
		const char *why = refused(q->key, own, nown, reserved);

		if (why != NULL) {
			sk_set_err(err, errlen, "%s:%d: %s: refused (%s)", props->path, q->line,
				   q->key, why);
			return -EINVAL;
		}
		if (rd_kafka_conf_set(conf, q->key, q->value, e, sizeof(e)) != RD_KAFKA_CONF_OK) {
			sk_set_err(err, errlen, "%s:%d: %s: %s", props->path, q->line, q->key, e);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < nown; i++)
		if (rd_kafka_conf_set(conf, own[i].key, own[i].value, e, sizeof(e)) !=
		    RD_KAFKA_CONF_OK) {
			sk_set_err(err, errlen, "%s = %s: %s", own[i].key, own[i].value, e);
			return -EINVAL;
		}
	return 0;
}
