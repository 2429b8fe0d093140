/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_mix.c - the clients' request mix (crowd_mix.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sk_common.h"

#include "crowd_mix.h"

/* number - a decimal in [lo, hi] at *@s, up to @end; *@s moves past it. */
static bool
number(const char **s, const char *end, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;
	const char *p = *s;

	if (p == end || *p < '0' || *p > '9')
		return false;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p++ - '0');
		if (v > hi)
			return false;
	}
	if (v < lo)
		return false;
	*s = p;
	*out = (uint32_t)v;
	return true;
}

int
sk_crowd_mix_parse(const char *s, struct sk_crowd_mix *m)
{
	struct sk_crowd_mix r = {.cart_lines = SK_CROWD_CART_LINES_DEFAULT};
	const char *end = s + strlen(s);

	if (strncmp(s, "cart=", 5) != 0)
		return -EINVAL;
	s += 5;
	if (!number(&s, end, 0, 100, &r.cart_pct))
		return -EINVAL;
	if (s != end) {
		if (strncmp(s, ",lines=", 7) != 0)
			return -EINVAL;
		s += 7;
		if (!number(&s, end, 1, SK_CROWD_CART_LINES_MAX, &r.cart_lines) || s != end)
			return -EINVAL;
	}
	*m = r;
	return 0;
}

bool
sk_crowd_mix_is_cart(const struct sk_crowd_mix *m, uint64_t seed, uint64_t key)
{
	/* splitmix64's finaliser of seed and key */
	uint64_t z = seed ^ (key * 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z % 100 < m->cart_pct;
}

size_t
sk_crowd_cart_body(char *out, size_t cap, uint64_t first, unsigned lines)
{
	size_t n = 0;
	int w;

	if (lines == 0 || lines > SK_CROWD_CART_LINES_MAX || first == 0 || first > UINT32_MAX ||
	    lines - 1 > UINT32_MAX - first)
		return 0;
	w = snprintf(out, cap, "{\"lines\":[");
	for (unsigned i = 0; w > 0 && (size_t)w < cap - n && i < lines; i++) {
		n += (size_t)w;
		w = snprintf(out + n, cap - n, "%s{\"item\":%llu,\"qty\":1}", i ? "," : "",
			     (unsigned long long)(first + i));
	}
	if (w <= 0 || (size_t)w >= cap - n)
		return 0;
	n += (size_t)w;
	w = snprintf(out + n, cap - n, "]}");
	if (w <= 0 || (size_t)w >= cap - n)
		return 0;
	return n + (size_t)w;
}
