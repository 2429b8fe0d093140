/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_token_b64.c - base64url (RFC 4648 §5) for the tokens: unpadded, and on
 * decoding the canonical encoding only. Works on the caller's buffers; no
 * allocation.
 */
#include "sk_common.h"
#include "sk_token.h"
#include "sk_token_priv.h"

static const char b64url_alphabet[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Decoding table: value + 1, 0 for bytes outside the alphabet. */
#define B64(c, v) [c] = (v) + 1
static const uint8_t b64url_dec[256] = {
	B64('A', 0),  B64('B', 1),  B64('C', 2),  B64('D', 3),	B64('E', 4),  B64('F', 5),
	B64('G', 6),  B64('H', 7),  B64('I', 8),  B64('J', 9),	B64('K', 10), B64('L', 11),
	B64('M', 12), B64('N', 13), B64('O', 14), B64('P', 15), B64('Q', 16), B64('R', 17),
	B64('S', 18), B64('T', 19), B64('U', 20), B64('V', 21), B64('W', 22), B64('X', 23),
	B64('Y', 24), B64('Z', 25), B64('a', 26), B64('b', 27), B64('c', 28), B64('d', 29),
	B64('e', 30), B64('f', 31), B64('g', 32), B64('h', 33), B64('i', 34), B64('j', 35),
	B64('k', 36), B64('l', 37), B64('m', 38), B64('n', 39), B64('o', 40), B64('p', 41),
	B64('q', 42), B64('r', 43), B64('s', 44), B64('t', 45), B64('u', 46), B64('v', 47),
	B64('w', 48), B64('x', 49), B64('y', 50), B64('z', 51), B64('0', 52), B64('1', 53),
	B64('2', 54), B64('3', 55), B64('4', 56), B64('5', 57), B64('6', 58), B64('7', 59),
	B64('8', 60), B64('9', 61), B64('-', 62), B64('_', 63),
};
#undef B64

ssize_t
sk_token_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	const uint8_t *s = (const uint8_t *)in;
	size_t full = n / 4, rest = n % 4, i, o = 0;
	uint32_t a, b, c, d;

	if (rest == 1 || full * 3 + (rest ? rest - 1 : 0) > cap)
		return -1;
	for (i = 0; i < full; i++, s += 4) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		c = b64url_dec[s[2]];
		d = b64url_dec[s[3]];
		if (sk_unlikely(!a || !b || !c || !d))
			return -1;
		a = (a - 1) << 18 | (b - 1) << 12 | (c - 1) << 6 | (d - 1);
		out[o++] = (uint8_t)(a >> 16);
		out[o++] = (uint8_t)(a >> 8);
		out[o++] = (uint8_t)a;
	}
	if (rest == 2) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		if (!a || !b || ((b - 1) & 0x0f))
			return -1;
		out[o++] = (uint8_t)((a - 1) << 2 | (b - 1) >> 4);
	} else if (rest == 3) {
		a = b64url_dec[s[0]];
		b = b64url_dec[s[1]];
		c = b64url_dec[s[2]];
		if (!a || !b || !c || ((c - 1) & 0x03))
			return -1;
		a = (a - 1) << 12 | (b - 1) << 6 | (c - 1);
		out[o++] = (uint8_t)(a >> 10);
		out[o++] = (uint8_t)(a >> 2);
	}
	return (ssize_t)o;
}

size_t
sk_token_b64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i, o = 0;
	uint32_t v;

	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
		out[o++] = b64url_alphabet[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
	} else if (n - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
	}
	return o;
}
