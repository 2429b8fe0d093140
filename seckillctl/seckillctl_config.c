/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl config check FILE: the configuration file read by the same
 * loader as the daemons (config/sk_config.h), so the errors are theirs
 * word for word. No daemon is contacted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sk_config.h"
#include "sk_log.h"
#include "seckillctl.h"

/* The names --for takes, as the daemons' programs are called. */
static const struct {
	const char *name;
	unsigned bit;
} daemons[] = {
	{"dataplane", SK_CONFIG_DATAPLANE},
	{"control", SK_CONFIG_CONTROL},
	{"mysql-writer", SK_CONFIG_MYSQL_WRITER},
};

/* parse_for - "control,mysql-writer" into a mask; 0 if a name is unknown. */
static unsigned
parse_for(const char *v)
{
	unsigned mask = 0;

	while (*v != '\0') {
		size_t n = strcspn(v, ","), i;

		for (i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++)
			if (strlen(daemons[i].name) == n && strncmp(v, daemons[i].name, n) == 0)
				break;
		if (i == sizeof(daemons) / sizeof(daemons[0]))
			return 0;
		mask |= daemons[i].bit;
		v += n;
		if (*v == ',' && *++v == '\0')
			return 0;
	}
	return mask;
}

int
cmd_config_check(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	unsigned mask = SK_CONFIG_ALL;
	char err[SK_CONFIG_ERR_MAX] = "";
	struct sk_config *cfg;
	int rc;

	if (c->opt[O_FOR] != NULL && (mask = parse_for(c->opt[O_FOR])) == 0)
		return usage_error(cmd->help, "config check: bad --for '%s'", c->opt[O_FOR]);
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL) {
		sk_log(PROG, "out of memory");
		return EX_ERR;
	}
	rc = sk_config_load_for(cfg, args[0], mask, err, sizeof(err));
	if (rc == 0 && cfg->store_alias)
		sk_log(PROG, "%s: seckill.store is deprecated: name the store in [store] path",
		       args[0]);
	free(cfg);
	if (c->json) {
		json_t *j = json_pack("{s:s, s:b}", "file", args[0], "ok", rc == 0);

		if (j != NULL && rc != 0)
			json_object_set_new(j, "error", json_string(err));
		if (j == NULL || json_dumpf(j, stdout, JSON_COMPACT) != 0) {
			json_decref(j);
			sk_log(PROG, "out of memory");
			return EX_ERR;
		}
		json_decref(j);
		fputc('\n', stdout);
	} else if (rc == 0) {
		printf("%s: ok\n", args[0]);
	}
	if (rc != 0) {
		if (!c->json)
			sk_log(PROG, "%s", err);
		return EX_ERR;
	}
	return EX_OK;
}
