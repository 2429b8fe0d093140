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
};

struct key {
	const char *name;
	enum key_type type;
	size_t off; /* into struct sk_config, struct sk_config_port or struct sk_config_item */
	uint64_t min, max; /* KEY_CHOICE: min is the index in sk_config_choices */
};

/* The values of each KEY_CHOICE key (NULL-terminated lists), by key::min. */
enum { CHOICE_PROXY, CHOICE_FORWARDED, CHOICE_PLAIN, CHOICE_TLS_VERSION, CHOICE_MAX };
extern const char *const *const sk_config_choices[CHOICE_MAX];

#define CFG(field)  offsetof(struct sk_config, field)
#define PORT(field) offsetof(struct sk_config_port, field)
#define ITEM(field) offsetof(struct sk_config_item, field)

enum section_id {
	SEC_DATAPLANE,
	SEC_TCP,
	SEC_HTTP,
	SEC_SECKILL,
	SEC_CLUSTER,
	SEC_PROXY,
	SEC_TLS,
	SEC_PORT0,
	SEC_ITEM = SEC_PORT0 + SK_CONFIG_MAX_PORTS, /* every [item.<id>]: see cur_item */
	SEC_MAX
};

/* Longest accepted line, comments included. */
#define LINE_MAX_LEN 512

struct load_ctx {
	struct sk_config *cfg;
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
