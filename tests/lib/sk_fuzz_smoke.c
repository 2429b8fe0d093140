/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_fuzz_smoke.c - main() of a fuzzer's smoke test in the normal build: it
 * links the target's LLVMFuzzerTestOneInput() (and LLVMFuzzerInitialize(),
 * if the target has one) without libFuzzer and feeds it, in order:
 *
 *   - the empty input, and every one-byte input;
 *   - every file of the seed folders (or files) given as arguments, sorted
 *     by name, each as a whole and cut in half.
 *
 * Every input is an exact-size heap copy, so that under ASan an overread by
 * one byte is a report. The test passes when every call returns 0; a crash,
 * an abort (the targets' own invariant checks) or a sanitizer report fails
 * it, and the last "input:" line on stderr names the input. A run of the
 * seeds, not a search: new inputs are libFuzzer's job (-Dfuzz=true).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned inputs;

/* feed - one exact-size copy of @data to the target; what the target returned. */
static int
feed(const char *what, const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len != 0 ? len : 1);
	int rc;

	if (copy == NULL)
		return -ENOMEM;
	if (len != 0)
		memcpy(copy, data, len);
	fprintf(stderr, "input: %s (%zu bytes)\n", what, len);
	rc = LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	inputs++;
	if (rc != 0)
		fprintf(stderr, "error: %s: the target returned %d\n", what, rc);
	return rc;
}

/* read_file - the bytes of @path into *@out (malloc'ed). 0 or -errno. */
static int
read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return -errno;
	for (;;) {
		if (n == cap) {
			uint8_t *b = realloc(buf, cap = cap * 2 + 4096);

			if (b == NULL) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	int err = ferror(f) ? -EIO : 0;

	fclose(f);
	if (err != 0) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* run_file - @path whole and its first half. 0, or the first failure. */
static int
run_file(const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc = read_file(path, &data, &len);

	if (rc != 0) {
		fprintf(stderr, "error: %s: %s\n", path, strerror(-rc));
		return rc;
	}
	rc = feed(path, data, len);
	if (rc == 0 && len > 1)
		rc = feed("(the first half of it)", data, len / 2);
	free(data);
	return rc;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* run_path - a seed file, or every file of a seed folder. */
static int
run_path(const char *path)
{
	struct dirent **names;
	struct stat sb;
	int n, rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(sb.st_mode))
		return run_file(path);
	n = scandir(path, &names, not_hidden, by_name);
	if (n < 0) {
		fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (n == 0) {
		fprintf(stderr, "error: %s: no seed inputs\n", path);
		rc = -ENOENT;
	}
	for (int i = 0; i < n; i++) {
		char file[PATH_MAX];

		if (rc == 0) {
			snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
			rc = run_file(file);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	uint8_t byte;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SEED-DIR-OR-FILE...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize != NULL && LLVMFuzzerInitialize(&argc, &argv) != 0) {
		fprintf(stderr, "error: LLVMFuzzerInitialize failed\n");
		return 1;
	}
	rc = feed("(empty)", NULL, 0);
	for (unsigned b = 0; rc == 0 && b < 256; b++) {
		byte = (uint8_t)b;
		rc = feed("(one byte)", &byte, 1);
	}
	for (int i = 1; rc == 0 && i < argc; i++)
		rc = run_path(argv[i]);
	if (rc != 0)
		return 1;
	printf("%u inputs, every one returned 0\n", inputs);
	return 0;
}
