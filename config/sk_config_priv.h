/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Private to config/: the key tables' types, the load context, and the
 * functions the loader's files share (sk_config.c: tables, line reader,
 * libinih handler, public API; sk_config_value.c: one parser per key
 * type; sk_config_check.c: rules that involve several keys). Not
 * installed.
 */
#ifndef SK_CONFIG_PRIV_H
#define SK_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sk_config.h"

enum key_type {
	KEY_U16,       /* uint16_t, min..max */
	KEY_U32,       /* uint32_t, min..max */
	KEY_U32_POW2,  /* uint32_t power of two, min..max */
	KEY_BOOL,      /* bool: on/off, true/false, yes/no, 1/0 */
	KEY_QUEUES,    /* uint16_t: "auto" (0) or min..max */
	KEY_DEVICE,    /* char[SK_CONFIG_DEVICE_MAX], no blanks */
	KEY_CIDR,      /* port: addr + prefix, "A.B.C.D/P" */
	KEY_IPV4,      /* uint32_t host order, "A.B.C.D" */
	KEY_MAC,       /* port: has_mac + mac[6] */
	KEY_SECRET,    /* config: has_syncookie_secret + 32 bytes in hex */
	KEY_CORELIST,  /* char[SK_CONFIG_LCORES_MAX]: "1", "0-3", "1,3-5", ids min..max */
	KEY_U64,       /* uint64_t, min..max */
	KEY_U32_POW2Z, /* uint32_t: 0, or a power of two in min..max */
	KEY_PATH,      /* char[SK_CONFIG_PATH_MAX], no blanks or control characters */
	KEY_NAME,      /* char[SK_CONFIG_NAME_MAX], printable, no '"' or '\\' (JSON-safe) */
	KEY_ACK,       /* uint8_t enum sk_config_ack: "queued" or "durable" */
	KEY_TIME,      /* struct sk_config_time: "+N", unix seconds; "never" if max != 0 */
	KEY_CIDR6,     /* port: has_addr6 + addr6 + prefix6, "X:X::X/P" */
	KEY_CHOICE,    /* uint8_t: the index of the value in sk_config_choices[min] */
	KEY_PREFIXES,  /* struct sk_prefix_list: prefixes separated by commas or blanks */
	KEY_PATHS,     /* struct sk_config_paths: paths separated by commas or blanks */
	KEY_WORD,      /* char[SK_CONFIG_OPT_MAX]: no blanks or control characters, at most
			  max characters (0: SK_CONFIG_OPT_MAX - 1) */
	KEY_MEMBER,    /* char[SK_CONFIG_OPT_MAX]: a cluster member id, [a-z0-9_-], 1..32 */
	KEY_MEMBERS,   /* char[SK_CONFIG_OPT_MAX]: member ids separated by commas */
};

/* Bits of key::uses beyond the dataplane's default. */
#define USES_DP	 SK_CONFIG_DATAPLANE
#define USES_CTL SK_CONFIG_CONTROL
#define USES_MW	 SK_CONFIG_MYSQL_WRITER

struct key {
	const char *name;
	enum key_type type;
	size_t off; /* into struct sk_config, struct sk_config_port or struct sk_config_item */
	uint64_t min, max; /* KEY_CHOICE: min is the index in sk_config_choices */
	/* The daemons that read the key (enum sk_config_daemon); 0: the dataplane alone. */
	unsigned uses;
	/* Its long option (no "--") in seckill-control / seckill-mysql-writer, or
	 * NULL. A key with either is kept as text at off (char[SK_CONFIG_OPT_MAX]),
	 * its value checked as its type says, and sk_config_argv_merge() hands it
	 * over as that option. */
	const char *ctl, *mw;
};

/* The values of each KEY_CHOICE key (NULL-terminated lists), by key::min. */
enum {
	CHOICE_PROXY,
	CHOICE_FORWARDED,
	CHOICE_PLAIN,
	CHOICE_TLS_VERSION,
	CHOICE_LOG_LEVEL,
	CHOICE_MAX
};
extern const char *const *const sk_config_choices[CHOICE_MAX];

#define CFG(field)  offsetof(struct sk_config, field)
#define PORT(field) offsetof(struct sk_config_port, field)
#define ITEM(field) offsetof(struct sk_config_item, field)
#define OPT(field)  offsetof(struct sk_config, opts.field)

enum section_id {
	SEC_DATAPLANE,
	SEC_TCP,
	SEC_HTTP,
	SEC_SECKILL,
	SEC_CLUSTER,
	SEC_PROXY,
	SEC_TLS,
	SEC_STORE,
	SEC_CONTROL,
	SEC_ADMIN,
	SEC_KAFKA,
	SEC_MYSQL,
	SEC_RETENTION,
	SEC_PORT0,
	SEC_ITEM = SEC_PORT0 + SK_CONFIG_MAX_PORTS, /* every [item.<id>]: see cur_item */
	SEC_MAX
};

/* Longest accepted line, comments included. */
#define LINE_MAX_LEN 512

struct load_ctx {
	struct sk_config *cfg;
	unsigned daemons; /* enum sk_config_daemon: whose values and rules are checked */
	FILE *f;
	const char *path;
	int line;				 /* lines handed to libinih so far */
	bool failed;				 /* an error is recorded below */
	int err_line;				 /* its line; 0: about the whole file */
	int err_code;				 /* its negative errno */
	char msg[SK_CONFIG_ERR_MAX];		 /* "section.key: what is wrong" */
	uint64_t seen[SEC_MAX];			 /* keys already set, per section (not SEC_ITEM) */
	uint64_t item_seen[SK_CONFIG_MAX_ITEMS]; /* keys already set, per item */
	int item_line[SK_CONFIG_MAX_ITEMS];	 /* line of each [item.<id>] */
	int cur_item;				 /* index of the [item.<id>] being read, or -1 */
	char buf[LINE_MAX_LEN + 2];
};

/**
 * sk_config_fail - record the first error of the load (later ones are
 * consequences): @line (0: about the whole file) and the message. Returns
 * 0, which is also what a failing libinih handler returns.
 */
int sk_config_fail(struct load_ctx *ctx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * sk_config_key_seen - true if key @key of section @sec (for SEC_PORT0 and
 * SEC_ITEM: of port / item number @index) was set in the file.
 */
bool sk_config_key_seen(const struct load_ctx *ctx, int sec, int index, const char *key);

/**
 * sk_config_key_uses - the daemons that read key @k (enum sk_config_daemon).
 */
static inline unsigned
sk_config_key_uses(const struct key *k)
{
	return k->uses != 0 ? k->uses : SK_CONFIG_DATAPLANE;
}

/**
 * sk_config_section_name - the name of section @id ("tcp"), or NULL for
 * the numbered ones (SEC_PORT0.., SEC_ITEM) and out of range.
 */
const char *sk_config_section_name(int id);

/**
 * sk_config_section_keys - the key table of section @id (every [portN]
 * shares one, every [item.<id>] another); its length in *@n.
 */
const struct key *sk_config_section_keys(int id, size_t *n);

/**
 * sk_config_set_value - parse @v as key @k of section @sec into @base
 * (struct sk_config, sk_config_port or sk_config_item). Returns 1, or 0
 * with the error recorded.
 */
int sk_config_set_value(struct load_ctx *ctx, const char *sec, const struct key *k, void *base,
			const char *v);

/**
 * sk_config_check - the rules that involve several keys, once the whole
 * file is read; fills what depends on them (nb_ports, the default ack).
 * Returns 1, or 0 with the error recorded.
 */
int sk_config_check(struct load_ctx *ctx);

#endif /* SK_CONFIG_PRIV_H */
