/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's live changes (docs/operations.md): status, live limits,
 * live log, deny load/show/clear - the admin API's /v1/live routes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sk_common.h"
#include "sk_log.h"
#include "sk_parse.h"
#include "seckillctl.h"
#include "seckillctl_client.h"

/* print_generation - "generation N (WHAT) at TIME". */
static void
print_generation(const json_t *j)
{
	printf("generation     %lld (%s)\n", jnum(j, "generation"), jstr(j, "what"));
	print_time("changed       ", jnum(j, "when_ns"));
}

int
cmd_status(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	static const char *const keys[] = {"global_rate", "global_burst", "item_rate",
					   "item_burst",  "ip_rate",	  "ip_burst",
					   "user_rate",	  "user_burst"};
	json_t *j, *lc;
	size_t i;
	int ex = api(c, "GET", "/v1/live", NULL, "live settings", answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	print_generation(j);
	const json_t *l = json_object_get(j, "limits");
	for (i = 0; i < SK_ARRAY_SIZE(keys); i++)
		printf("%-14s %lld\n", keys[i], jnum(l, keys[i]));
	printf("log_level      %s\n", jstr(j, "log_level"));
	const json_t *d = json_object_get(j, "deny");
	printf("deny           %lld users, %lld prefixes (capacity %lld each)\n", jnum(d, "users"),
	       jnum(d, "prefixes"), jnum(d, "capacity"));
	json_array_foreach(json_object_get(j, "lcores"), i, lc)
		printf("lcore %-8zu generation %lld, denied %lld, user-limited %lld\n", i,
		       jnum(lc, "generation"), jnum(lc, "denied"), jnum(lc, "user_limited"));
	json_decref(j);
	return EX_OK;
}

/* changed - print the generation of a change's answer. */
static int
changed(const struct ctl *c, int ex, json_t *j, const char *what)
{
	if (ex != EX_OK || c->json)
		return ex;
	printf("%s: generation %lld\n", what, jnum(j, "generation"));
	json_decref(j);
	return EX_OK;
}

int
cmd_live_limits(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	json_t *body = json_object(), *j = NULL;

	if (body == NULL)
		return EX_ERR;
	for (size_t i = 0; args[i] != NULL; i++) {
		char key[32];
		const char *eq = strchr(args[i], '=');
		uint64_t v;

		if (eq == NULL || eq == args[i] || (size_t)(eq - args[i]) >= sizeof(key) ||
		    !sk_parse_u64(eq + 1, 0, 1000000000, &v)) {
			json_decref(body);
			return usage_error(cmd->help, "live limits: '%s' is not KEY=N (0..1e9)",
					   args[i]);
		}
		memcpy(key, args[i], (size_t)(eq - args[i]));
		key[eq - args[i]] = '\0';
		json_object_set_new(body, key, json_integer((json_int_t)v));
	}
	int ex = api(c, "POST", "/v1/live/limits", body, "live limits", answer_use(c), &j);

	return changed(c, ex, j, "limits changed");
}

int
cmd_live_log(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args)
{
	json_t *j = NULL;
	int ex = api(c, "POST", "/v1/live/log", json_pack("{s:s}", "level", args[0]), "live log",
		     answer_use(c), &j);

	return changed(c, ex, j, "log level changed");
}

/* absolute - @path made absolute (the control plane opens it). */
static int
absolute(const char *path, char out[PATH_MAX])
{
	if (realpath(path, out) == NULL) {
		sk_log(PROG, "%s: %s", path, strerror(errno));
		return EX_USAGE;
	}
	return EX_OK;
}

int
cmd_deny_load(const struct ctl *c, const struct ctl_cmd *cmd, char **args CTL_UNUSED)
{
	char users[PATH_MAX], prefixes[PATH_MAX];
	json_t *body, *j = NULL;
	int ex;

	if (c->opt[O_USERS] == NULL && c->opt[O_PREFIXES] == NULL)
		return usage_error(cmd->help, "deny load: --users FILE and/or --prefixes FILE");
	body = json_object();
	if (body == NULL)
		return EX_ERR;
	if (c->opt[O_USERS] != NULL) {
		if ((ex = absolute(c->opt[O_USERS], users)) != EX_OK)
			goto err;
		json_object_set_new(body, "users_file", json_string(users));
	}
	if (c->opt[O_PREFIXES] != NULL) {
		if ((ex = absolute(c->opt[O_PREFIXES], prefixes)) != EX_OK)
			goto err;
		json_object_set_new(body, "prefixes_file", json_string(prefixes));
	}
	ex = api(c, "POST", "/v1/live/deny", body, "deny load", answer_use(c), &j);
	return changed(c, ex, j, "deny lists loaded");
err:
	json_decref(body);
	return ex;
}

int
cmd_deny_show(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	json_t *j;
	int ex = api(c, "GET", "/v1/live", NULL, "deny lists", answer_use(c), &j);

	if (ex != EX_OK || c->json)
		return ex;
	const json_t *d = json_object_get(j, "deny");
	printf("users %lld, prefixes %lld (capacity %lld each)\n", jnum(d, "users"),
	       jnum(d, "prefixes"), jnum(d, "capacity"));
	print_generation(j);
	json_decref(j);
	return EX_OK;
}

int
cmd_deny_clear(const struct ctl *c, const struct ctl_cmd *cmd CTL_UNUSED, char **args CTL_UNUSED)
{
	json_t *j = NULL;
	int ex = api(c, "POST", "/v1/live/deny", json_pack("{s:b}", "clear", 1), "deny clear",
		     answer_use(c), &j);

	return changed(c, ex, j, "deny lists cleared");
}

int
cmd_keys(const struct ctl *c, const struct ctl_cmd *cmd, char **args)
{
	char file[PATH_MAX];
	json_t *body = json_object(), *j = NULL;
	int ex;

	if (body == NULL)
		return EX_ERR;
	if (strcmp(cmd->sub, "add") == 0) {
		if (c->opt[O_FILE] == NULL) {
			json_decref(body);
			return usage_error(cmd->help, "keys add: --file FILE is required");
		}
		if ((ex = absolute(c->opt[O_FILE], file)) != EX_OK) {
			json_decref(body);
			return ex;
		}
		json_object_set_new(body, "file", json_string(file));
	}
	json_object_set_new(body, cmd->sub, json_string(args[0]));
	ex = api(c, "POST", "/v1/live/keys", body, "keys", answer_use(c), &j);
	return changed(c, ex, j, "keys changed");
}
