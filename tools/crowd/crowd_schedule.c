/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_schedule.c - the order of the buy attempts: every user once, the
 * retriers' extra attempts, all shuffled by --seed (splitmix64, Fisher-Yates).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_log.h"

#include "crowd.h"

/* splitmix64: seeds well from any 64-bit value, passes BigCrush. */
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* rng_below - uniform in [0, n), n <= 2^32 (multiply-shift; bias < 2^-32). */
static uint32_t
rng_below(uint64_t *s, uint64_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

/*
 * crowd_schedule_build - the order of the buy attempts: every user index once, plus
 * (attempts - users) retries spread evenly over a random subset of retriers,
 * all shuffled with @seed. Returns the array (attempts entries) or NULL;
 * *retriers receives the number of users that retry.
 */
uint32_t *
crowd_schedule_build(const struct opts *o, uint64_t *retriers)
{
	uint64_t n = o->attempts, u = o->users, extra = n - u, s = o->seed;
	uint64_t r = (uint64_t)llround(o->retriers * (double)u);
	uint32_t *a = malloc(n * sizeof(*a));

	if (a == NULL)
		return NULL;
	if (r > extra)
		r = extra;
	for (uint64_t i = 0; i < u; i++)
		a[i] = (uint32_t)i;
	/* a partial Fisher-Yates picks the r retriers into a[0..r) */
	for (uint64_t i = 0; i < r; i++) {
		uint64_t j = i + rng_below(&s, u - i);
		uint32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	for (uint64_t k = 0; k < extra; k++)
		a[u + k] = a[k % r];
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = rng_below(&s, i + 1);
		uint32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	*retriers = r;
	return a;
}

bool
crowd_reserved(const struct opts *o, uint64_t u)
{
	uint64_t s = o->seed ^ (o->user_base + u) * 0xd6e8feb86659fd93ull;

	if (o->reserved < 0)
		return true;
	return (double)(rng_next(&s) >> 11) * 0x1p-53 * 100.0 < o->reserved;
}

int
crowd_reserved_write(const struct opts *o)
{
	FILE *f = fopen(o->reserved_file, "w");
	uint64_t n = 0;

	if (f == NULL) {
		sk_log(PROG, "--reserved-file %s: %s", o->reserved_file, strerror(errno));
		return EXIT_RUNTIME;
	}
	for (uint64_t u = 0; u < o->users; u++)
		if (crowd_reserved(o, u)) {
			fprintf(f, "%" PRIu64 "\n", o->user_base + u);
			n++;
		}
	if (fclose(f) != 0) {
		sk_log(PROG, "--reserved-file %s: write error", o->reserved_file);
		return EXIT_RUNTIME;
	}
	sk_log(PROG, "%" PRIu64 " of %" PRIu64 " users reserved, in %s", n, o->users,
	       o->reserved_file);
	return 0;
}
