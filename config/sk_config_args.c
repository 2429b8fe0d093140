/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_config_args.c - the configuration file as a daemon's command line
 * (sk_config_argv_merge()): the keys a daemon reads become its long
 * options, placed before the options of the real command line so that
 * those override the file. The key tables of sk_config.c name the options.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sk_common.h"
#include "sk_config_priv.h"

#define CONFIG_OPT "--config"

/* find_config - the index of "--config" or "--config=FILE" in argv[1..argc)
 * and the file in *@file; 0 if none; -1 (with @err) if it is there twice or
 * lacks its file. */
static int
find_config(int argc, char *const *argv, const char **file, char *err, size_t errlen)
{
	size_t n = strlen(CONFIG_OPT);
	int at = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, CONFIG_OPT, n) != 0 || (a[n] != '\0' && a[n] != '='))
			continue;
		if (at != 0) {
			snprintf(err, errlen, "--config: given twice");
			return -1;
		}
		at = i;
		*file = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
		if (*file == NULL || **file == '\0') {
			snprintf(err, errlen, "--config: needs a FILE");
			return -1;
		}
	}
	return at;
}

/* is_on - a boolean key's text (already checked by the loader) is on. */
static bool
is_on(const char *v)
{
	return strcasecmp(v, "on") == 0 || strcasecmp(v, "true") == 0 ||
	       strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0;
}

/*
 * file_args - walk the keys of @cfg that @daemon reads and that are set:
 * count them into *@n and their text's bytes into *@bytes; when @argv is
 * not NULL also write them ("--opt=value\0" at @text) and their pointers.
 */
static void
file_args(const struct sk_config *cfg, unsigned daemon, int *n, size_t *bytes, char **argv,
	  char *text)
{
	*n = 0;
	*bytes = 0;
	for (int id = 0; sk_config_section_name(id) != NULL; id++) {
		size_t nk;
		const struct key *keys = sk_config_section_keys(id, &nk);

		for (size_t i = 0; i < nk; i++) {
			const char *opt = daemon == SK_CONFIG_CONTROL ? keys[i].ctl : keys[i].mw;
			const char *v = (const char *)cfg + keys[i].off;
			bool flag = keys[i].type == KEY_BOOL;
			size_t len;

			if (opt == NULL || v[0] == '\0' || (flag && !is_on(v)))
				continue;
			len = 2 + strlen(opt) + (flag ? 0 : 1 + strlen(v)) + 1;
			if (argv != NULL) {
				argv[*n] = text + *bytes;
				snprintf(argv[*n], len, "--%s%s%s", opt, flag ? "" : "=",
					 flag ? "" : v);
			}
			(*n)++;
			*bytes += len;
		}
	}
}

int
sk_config_argv_merge(int argc, char *const *argv, unsigned daemon, struct sk_config_argv **out,
		     char *err, size_t errlen)
{
	char scratch[SK_CONFIG_ERR_MAX];
	struct sk_config *cfg = NULL;
	struct sk_config_argv *r;
	const char *file = NULL;
	size_t bytes = 0, head;
	int at, nfile = 0, rc, k = 0;
	char *text;

	if (err == NULL || errlen == 0) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	*out = NULL;
	if (argc < 1 || (daemon != SK_CONFIG_CONTROL && daemon != SK_CONFIG_MYSQL_WRITER)) {
		snprintf(err, errlen, "sk_config_argv_merge: bad arguments");
		return -EINVAL;
	}
	at = find_config(argc, argv, &file, err, errlen);
	if (at < 0)
		return -EINVAL;
	if (at > 0) {
		cfg = malloc(sizeof(*cfg));
		if (cfg == NULL) {
			snprintf(err, errlen, "%s: out of memory", file);
			return -ENOMEM;
		}
		rc = sk_config_load_for(cfg, file, daemon, err, errlen);
		if (rc != 0) {
			free(cfg);
			return rc;
		}
		file_args(cfg, daemon, &nfile, &bytes, NULL, NULL);
	}
	/* one allocation: the struct, the pointers, the file's options */
	head = sizeof(*r) + ((size_t)argc + (size_t)nfile + 1) * sizeof(char *);
	r = malloc(head + bytes);
	if (r == NULL) {
		free(cfg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->argv = (char **)(r + 1);
	text = (char *)r + head;
	r->argv[k++] = argv[0];
	if (cfg != NULL) {
		file_args(cfg, daemon, &nfile, &bytes, r->argv + k, text);
		k += nfile;
	}
	for (int i = 1; i < argc; i++) {
		if (at > 0 && i == at) {
			if (strchr(argv[i], '=') == NULL)
				i++; /* "--config FILE": skip FILE too */
			continue;
		}
		r->argv[k++] = argv[i];
	}
	r->argv[k] = NULL;
	r->argc = k;
	free(cfg);
	*out = r;
	return 0;
}
