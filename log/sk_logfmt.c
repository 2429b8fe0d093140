/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_logfmt.c - the daemons' logfmt logger (sk_logfmt.h): the format walk
 * (keys literal, values formatted one by one), logfmt quoting, the cut of
 * long lines, the journald prefix, one write per line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sk_logfmt.h"

#define TRUNC_TAIL " truncated=true\n"
/* one value before quoting: the longest a line can hold anyway */
#define VALUE_MAX SK_LOGFMT_LINE_MAX

static const char *const level_names[] = {"debug", "info", "notice", "warn", "error", "crit"};
/* syslog priorities of the levels, for journald's "<N>" prefix */
static const int level_pri[] = {7, 6, 5, 4, 3, 2};

/* The process's logger: written by sk_logfmt_init() before any thread. */
static struct {
	char prog[64];
	bool journal;
	int level; /* relaxed atomic */
} lg = {"seckill", false, SK_LOG_INFO};

/* ------------------------------------------------------------------------ */
/* Levels                                                                    */
/* ------------------------------------------------------------------------ */

void
sk_logfmt_init(const char *prog)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;

	snprintf(lg.prog, sizeof(lg.prog), "%s", prog != NULL ? prog : "seckill");
	lg.journal = js != NULL && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
		     fstat(STDERR_FILENO, &sb) == 0 && (unsigned long long)sb.st_dev == dev &&
		     (unsigned long long)sb.st_ino == ino;
	__atomic_store_n(&lg.level, SK_LOG_INFO, __ATOMIC_RELAXED);
}

int
sk_logfmt_level_parse(const char *s, enum sk_log_level *lv)
{
	static const struct {
		const char *name;
		enum sk_log_level lv;
	} alias[] = {{"warning", SK_LOG_WARN}, {"err", SK_LOG_ERROR}};

	if (s == NULL)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcasecmp(s, level_names[i]) == 0) {
			*lv = (enum sk_log_level)i;
			return 0;
		}
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcasecmp(s, alias[i].name) == 0) {
			*lv = alias[i].lv;
			return 0;
		}
	return -EINVAL;
}

const char *
sk_logfmt_level_name(enum sk_log_level lv)
{
	return (unsigned)lv <= SK_LOG_CRIT ? level_names[lv] : "?";
}

void
sk_logfmt_set_level(enum sk_log_level lv)
{
	__atomic_store_n(&lg.level, (int)lv, __ATOMIC_RELAXED);
}

bool
sk_logfmt_enabled(enum sk_log_level lv)
{
	return (int)lv >= __atomic_load_n(&lg.level, __ATOMIC_RELAXED);
}

enum sk_log_level
sk_logfmt_from_syslog(int pri)
{
	if (pri <= 2)
		return SK_LOG_CRIT;
	if (pri >= 7)
		return SK_LOG_DEBUG;
	return (enum sk_log_level)(SK_LOG_CRIT - (pri - 2));
}

/* ------------------------------------------------------------------------ */
/* Values: one printf conversion at a time                                  */
/* ------------------------------------------------------------------------ */

/*
 * conv_one - format the conversion @p spec (NUL-terminated, "%...X") with
 * the next arguments of @p ap into @p o (@p cap bytes). Returns the bytes
 * written (cut at cap - 1).
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static size_t
conv_one(char *o, size_t cap, const char *spec, bool star_w, bool star_p, const char *len,
	 char conv, va_list *ap)
{
	int w = 0, p = 0, n = -1;

	if (star_w)
		w = va_arg(*ap, int);
	if (star_p)
		p = va_arg(*ap, int);
#define EMIT(T, A)                                                                                 \
	do {                                                                                       \
		T v_ = (T)va_arg(*ap, A);                                                          \
		if (star_w && star_p)                                                              \
			n = snprintf(o, cap, spec, w, p, v_);                                      \
		else if (star_w)                                                                   \
			n = snprintf(o, cap, spec, w, v_);                                         \
		else if (star_p)                                                                   \
			n = snprintf(o, cap, spec, p, v_);                                         \
		else                                                                               \
			n = snprintf(o, cap, spec, v_);                                            \
	} while (0)
	switch (conv) {
	case 'd':
	case 'i':
		if (strcmp(len, "l") == 0)
			EMIT(long, long);
		else if (strcmp(len, "ll") == 0)
			EMIT(long long, long long);
		else if (strcmp(len, "z") == 0)
			EMIT(ssize_t, ssize_t);
		else if (strcmp(len, "j") == 0)
			EMIT(intmax_t, intmax_t);
		else if (strcmp(len, "t") == 0)
			EMIT(ptrdiff_t, ptrdiff_t);
		else
			EMIT(int, int);
		break;
	case 'u':
	case 'o':
	case 'x':
	case 'X':
		if (strcmp(len, "l") == 0)
			EMIT(unsigned long, unsigned long);
		else if (strcmp(len, "ll") == 0)
			EMIT(unsigned long long, unsigned long long);
		else if (strcmp(len, "z") == 0)
			EMIT(size_t, size_t);
		else if (strcmp(len, "j") == 0)
			EMIT(uintmax_t, uintmax_t);
		else if (strcmp(len, "t") == 0)
			EMIT(ptrdiff_t, ptrdiff_t);
		else
			EMIT(unsigned, unsigned);
		break;
	case 'c':
		EMIT(int, int);
		break;
	case 'p':
		EMIT(void *, void *);
		break;
	case 's': {
		const char *s = va_arg(*ap, const char *);

		if (s == NULL)
			s = "(null)";
		if (star_w && star_p)
			n = snprintf(o, cap, spec, w, p, s);
		else if (star_w)
			n = snprintf(o, cap, spec, w, s);
		else if (star_p)
			n = snprintf(o, cap, spec, p, s);
		else
			n = snprintf(o, cap, spec, s);
		break;
	}
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
	case 'a':
	case 'A':
		if (strcmp(len, "L") == 0)
			EMIT(long double, long double);
		else
			EMIT(double, double);
		break;
	default:
		n = 0; /* %n and unknown conversions write nothing */
		break;
	}
#undef EMIT
	if (n < 0)
		return 0;
	return (size_t)n < cap ? (size_t)n : cap - 1;
}
#pragma GCC diagnostic pop

/*
 * value_fmt - the raw value of the value format @p f (@p flen bytes: text
 * and conversions) into @p o (@p cap bytes, NUL-terminated). Returns its
 * length.
 */
static size_t
value_fmt(char *o, size_t cap, const char *f, size_t flen, va_list *ap)
{
	size_t n = 0, i = 0;

	while (i < flen && n + 1 < cap) {
		char spec[32], len[3] = "";
		bool star_w = false, star_p = false;
		size_t s = i, k = 0;

		if (f[i] != '%') {
			o[n++] = f[i++];
			continue;
		}
		if (i + 1 < flen && f[i + 1] == '%') {
			o[n++] = '%';
			i += 2;
			continue;
		}
		i++;
		while (i < flen && strchr("-+ #0'", f[i]) != NULL)
			i++;
		if (i < flen && f[i] == '*') {
			star_w = true;
			i++;
		}
		while (i < flen && f[i] >= '0' && f[i] <= '9')
			i++;
		if (i < flen && f[i] == '.') {
			i++;
			if (i < flen && f[i] == '*') {
				star_p = true;
				i++;
			}
			while (i < flen && f[i] >= '0' && f[i] <= '9')
				i++;
		}
		while (i < flen && k < 2 && strchr("hlzjtLq", f[i]) != NULL)
			len[k++] = f[i++];
		len[k] = '\0';
		if (i >= flen || i - s + 2 > sizeof(spec))
			break; /* a broken conversion ends the value */
		memcpy(spec, f + s, i - s + 1);
		spec[i - s + 1] = '\0';
		n += conv_one(o + n, cap - n, spec, star_w, star_p, len, f[i], ap);
		i++;
	}
	o[n] = '\0';
	return n;
}

/* ------------------------------------------------------------------------ */
/* Quoting                                                                   */
/* ------------------------------------------------------------------------ */

/* bare_ok - true if byte @p c may stand in an unquoted value */
static bool
bare_ok(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != '"' && c != '=' && c != '\\';
}

/* utf8_len - the length of the valid UTF-8 sequence at @p s (@p n bytes left), 0 if invalid */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/*
 * esc_unit - the quoted form of the character at @p s (@p n bytes left) in
 * @p u (at least 8 bytes); *@p used gets the input bytes it stands for.
 * Returns its length.
 */
static size_t
esc_unit(const unsigned char *s, size_t n, char *u, size_t *used)
{
	size_t l;

	*used = 1;
	switch (s[0]) {
	case '"':
		return (size_t)snprintf(u, 8, "\\\"");
	case '\\':
		return (size_t)snprintf(u, 8, "\\\\");
	case '\n':
		return (size_t)snprintf(u, 8, "\\n");
	case '\r':
		return (size_t)snprintf(u, 8, "\\r");
	case '\t':
		return (size_t)snprintf(u, 8, "\\t");
	default:
		break;
	}
	if (s[0] < ' ' || s[0] == 0x7f)
		return (size_t)snprintf(u, 8, "\\u%04x", s[0]);
	if (s[0] < 0x80) {
		u[0] = (char)s[0];
		return 1;
	}
	l = utf8_len(s, n);
	if (l == 0)
		return (size_t)snprintf(u, 8, "\\ufffd"); /* not UTF-8: the replacement */
	memcpy(u, s, l);
	*used = l;
	return l;
}

/* A line under construction: buf[0..end) is the limit before the tail. */
struct line {
	char *buf;
	size_t len, end;
	bool cut;
	bool sep; /* a key needs a space before it */
};

static void
put_raw(struct line *l, const char *s, size_t n)
{
	if (l->cut)
		return;
	if (n > l->end - l->len) {
		n = l->end - l->len;
		l->cut = true;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* put_key - " key=" with the key's odd characters as '_'; false if it did not fit */
static bool
put_key(struct line *l, const char *k, size_t kn)
{
	if (l->cut)
		return false;
	if (l->len + kn + 2 > l->end) {
		l->cut = true;
		return false;
	}
	if (l->sep)
		l->buf[l->len++] = ' ';
	l->sep = true;
	for (size_t i = 0; i < kn; i++) {
		char c = k[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';

		l->buf[l->len++] = ok ? c : '_';
	}
	if (kn == 0)
		l->buf[l->len++] = '_';
	l->buf[l->len++] = '=';
	return true;
}

/* put_value - @p v (@p n bytes) bare or quoted; a value that does not fit is cut */
static void
put_value(struct line *l, const char *v, size_t n)
{
	const unsigned char *s = (const unsigned char *)v;
	bool quote = n == 0;

	for (size_t i = 0; i < n && !quote; i++)
		quote = !bare_ok(s[i]);
	if (!quote) {
		put_raw(l, v, n);
		return;
	}
	if (l->cut || l->len + 2 > l->end) {
		l->cut = true;
		return;
	}
	l->buf[l->len++] = '"';
	for (size_t i = 0; i < n;) {
		char u[8];
		size_t used, ul = esc_unit(s + i, n - i, u, &used);

		if (l->len + ul + 1 > l->end) {
			l->cut = true; /* cut at a whole escape, the quote closed below */
			break;
		}
		memcpy(l->buf + l->len, u, ul);
		l->len += ul;
		i += used;
	}
	l->buf[l->len++] = '"';
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                     */
/* ------------------------------------------------------------------------ */

/* put_fields - the tokens of @p fmt (see sk_logfmt.h) with their values */
static void
put_fields(struct line *l, const char *fmt, va_list *ap)
{
	static __thread char val[VALUE_MAX];
	const char *p = fmt;

	while (*p != '\0' && !l->cut) {
		const char *k, *vf;
		size_t kn, vn, n;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		k = p;
		while (*p != '\0' && *p != '=' && *p != ' ')
			p++;
		kn = (size_t)(p - k);
		if (*p != '=') { /* a bare key: logfmt's "true" */
			if (put_key(l, k, kn))
				l->len--; /* no '=' */
			continue;
		}
		p++;
		if (*p == '"') {
			vf = ++p;
			while (*p != '\0' && *p != '"')
				p++;
			vn = (size_t)(p - vf);
			if (*p == '"')
				p++;
		} else {
			vf = p;
			while (*p != '\0' && *p != ' ')
				p++;
			vn = (size_t)(p - vf);
		}
		n = value_fmt(val, sizeof(val), vf, vn, ap);
		if (put_key(l, k, kn))
			put_value(l, val, n);
	}
}

size_t
sk_logfmt_render(char *buf, size_t cap, const struct sk_logfmt_style *st, enum sk_log_level lv,
		 const char *event, const char *fmt, va_list ap)
{
	struct line l = {.buf = buf};
	const char *name = sk_logfmt_level_name(lv);
	char head[64];
	va_list aq;

	if (cap < 128)
		return 0;
	if (cap > SK_LOGFMT_LINE_MAX + 1)
		cap = SK_LOGFMT_LINE_MAX + 1;
	l.end = cap - 1 - (sizeof(TRUNC_TAIL) - 1);
	if ((unsigned)lv > SK_LOG_CRIT)
		lv = SK_LOG_ERROR;
	if (st->journal) {
		int n = snprintf(head, sizeof(head), "<%d>", level_pri[lv]);

		put_raw(&l, head, (size_t)n);
	} else {
		time_t secs = (time_t)(st->ts_ns / 1000000000);
		struct tm tm;
		size_t n;

		gmtime_r(&secs, &tm);
		n = strftime(head, sizeof(head), "ts=%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(head + n, sizeof(head) - n, ".%03dZ",
				      (int)(st->ts_ns / 1000000 % 1000));
		put_raw(&l, head, n);
		l.sep = true;
	}
	if (put_key(&l, "level", 5))
		put_value(&l, name, strlen(name));
	if (put_key(&l, "prog", 4))
		put_value(&l, st->prog, strlen(st->prog));
	if (put_key(&l, "event", 5))
		put_value(&l, event != NULL ? event : "", event != NULL ? strlen(event) : 0);
	va_copy(aq, ap);
	put_fields(&l, fmt, &aq);
	va_end(aq);
	if (l.cut) {
		memcpy(buf + l.len, TRUNC_TAIL, sizeof(TRUNC_TAIL) - 1);
		l.len += sizeof(TRUNC_TAIL) - 1;
	} else {
		buf[l.len++] = '\n';
	}
	buf[l.len] = '\0';
	return l.len;
}

void
sk_vlogf(enum sk_log_level lv, const char *event, const char *fmt, va_list ap)
{
	struct sk_logfmt_style st = {.prog = lg.prog, .journal = lg.journal};
	char buf[SK_LOGFMT_LINE_MAX + 1];
	struct timespec ts;
	size_t n, off = 0;
	int saved = errno;

	if (!sk_logfmt_enabled(lv))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	st.ts_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	n = sk_logfmt_render(buf, sizeof(buf), &st, lv, event, fmt, ap);
	for (int tries = 0; off < n && tries < 8; tries++) {
		ssize_t w = write(STDERR_FILENO, buf + off, n - off);

		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EINTR && errno != EAGAIN)
			break;
	}
	errno = saved;
}

void
sk_logf(enum sk_log_level lv, const char *event, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sk_vlogf(lv, event, fmt, ap);
	va_end(ap);
}
