/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * sk_test_metrics.h - a check of a /metrics text against the metric table
 * it was written from, as a daemon lists it ("name type labels" lines,
 * labels comma separated or "-": sk_control_metrics_list(),
 * mw_metrics_list()). Header only; Check assertions.
 */
#ifndef SK_TEST_METRICS_H
#define SK_TEST_METRICS_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * sk_test_metrics_list - a daemon's list (@p list_fn: sk_control_metrics_list,
 * mw_metrics_list) into *@p list, malloc'd: the caller frees it.
 */
static inline void
sk_test_metrics_list(int (*list_fn)(FILE *out), char **list)
{
	size_t len = 0;
	FILE *f = open_memstream(list, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(list_fn(f), 0);
	fclose(f);
}

/* count - occurrences of @needle in @hay. */
static inline unsigned
sk_test_metrics_count(const char *hay, const char *needle)
{
	unsigned n = 0;
	size_t off = 0;
	const char *p;

	while ((p = strstr(hay + off, needle)) != NULL) {
		off = (size_t)(p - hay) + 1;
		n++;
	}
	return n;
}

/* family_of - the listed family a sample name belongs to (histogram suffixes
 * stripped), its line in @list copied to @row; false if none. */
static inline bool
sk_test_metrics_family(const char *list, const char *sample, char *row, size_t rowlen)
{
	static const char *const suffix[] = {"", "_bucket", "_sum", "_count"};
	char name[128], type[16], labels[128];

	for (const char *l = list; *l != '\0'; l = strchr(l, '\n') + 1) {
		if (sscanf(l, "%127s %15s %127s", name, type, labels) != 3)
			return false;
		for (unsigned k = 0; k < (strcmp(type, "histogram") == 0 ? 4u : 1u); k++) {
			char full[160];

			snprintf(full, sizeof(full), "%s%s", name, suffix[k]);
			if (strcmp(full, sample) == 0) {
				snprintf(row, rowlen, "%s %s %s", name, type, labels);
				return true;
			}
		}
	}
	return false;
}

/**
 * sk_test_metrics_check - assert that every family of @p list is in
 * @p text exactly once with its HELP and TYPE lines (a family for which
 * @p optional returns true may be absent instead), that every TYPE line
 * and every sample of @p text belongs to a listed family, and that every
 * label of a sample is one the family lists (le of histograms aside).
 * @return how many families of @p list @p text has.
 */
static inline unsigned
sk_test_metrics_check(const char *list, const char *text, bool (*optional)(const char *name))
{
	char *copy = strdup(text), *save = NULL;
	unsigned found = 0;

	ck_assert_ptr_nonnull(copy);
	for (const char *l = list; *l != '\0'; l = strchr(l, '\n') + 1) {
		char name[128], type[16], help[160], want[192];
		unsigned nh, nt;

		ck_assert_int_eq(sscanf(l, "%127s %15s", name, type), 2);
		snprintf(help, sizeof(help), "# HELP %s ", name);
		snprintf(want, sizeof(want), "# TYPE %s %s\n", name, type);
		nh = sk_test_metrics_count(text, help);
		nt = sk_test_metrics_count(text, want);
		if (nh == 0 && nt == 0 && optional != NULL && optional(name))
			continue;
		ck_assert_msg(nh == 1 && nt == 1, "%s: %u HELP, %u '%.*s' lines, want 1", name, nh,
			      nt, (int)strlen(want) - 1, want);
		found++;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char sample[160], row[300], *lab;
		size_t n = strcspn(line, "{ ");

		if (strncmp(line, "# HELP ", 7) == 0)
			continue;
		if (strncmp(line, "# TYPE ", 7) == 0) {
			line += 7;
			n = strcspn(line, " ");
		}
		ck_assert_uint_lt(n, sizeof(sample));
		memcpy(sample, line, n);
		sample[n] = '\0';
		ck_assert_msg(sk_test_metrics_family(list, sample, row, sizeof(row)),
			      "'%s' is in no table", line);
		for (lab = line[n] == '{' ? line + n + 1 : NULL; lab != NULL && *lab != '}';) {
			size_t m = strcspn(lab, "=");
			char key[64];

			ck_assert_uint_lt(m, sizeof(key));
			memcpy(key, lab, m);
			key[m] = '\0';
			ck_assert_msg(strcmp(key, "le") == 0 ||
					      strstr(strrchr(row, ' '), key) != NULL,
				      "%s: label %s not in its row '%s'", sample, key, row);
			lab = strchr(strchr(lab + m + 2, '"') + 1, ',');
			lab = lab != NULL && lab < strchr(line, '}') ? lab + 1 : NULL;
		}
	}
	free(copy);
	return found;
}

#endif /* SK_TEST_METRICS_H */
