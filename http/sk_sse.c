/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_sse.c - Server-Sent Events framing of the order events stream
 * (sk_sse.h).
 */
#include <string.h>

#include "sk_common.h"
#include "sk_sse.h"

size_t
sk_sse_event(char *out, uint64_t order, const char *name)
{
	static const char head[] = "event: status\ndata: {\"order\":\"", mid[] = "\",\"status\":\"",
			  tail[] = "\"}\n\n";
	size_t name_len, n;

	if (name == NULL)
		return 0;
	name_len = strnlen(name, SK_SSE_NAME_MAX + 1);
	if (name_len == 0 || name_len > SK_SSE_NAME_MAX)
		return 0;
	memcpy(out, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	n += sk_u64_dec(out + n, order);
	memcpy(out + n, mid, sizeof(mid) - 1);
	n += sizeof(mid) - 1;
	memcpy(out + n, name, name_len);
	n += name_len;
	memcpy(out + n, tail, sizeof(tail) - 1);
	return n + sizeof(tail) - 1;
}
