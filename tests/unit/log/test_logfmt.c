/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_logfmt.c - the daemons' logger (log/sk_logfmt.h): every line is
 * valid logfmt whatever the values (spaces, quotes, '=', backslashes,
 * control bytes, bad UTF-8, empty), the level filter, the journald prefix
 * (JOURNAL_STREAM naming stderr), the cut of long lines.
 *
 * The lines are checked by a small logfmt parser written here: it returns
 * the key/value pairs and fails on anything a logfmt reader would not take
 * back (an unclosed quote, a bare value with a quote or '=', a control
 * byte, a duplicate key, an unknown escape).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "sk_logfmt.h"
#include "sk_test.h"

#define MAXKV 32

struct kv {
	char k[64];
	char v[SK_LOGFMT_LINE_MAX];
};

/*
 * parse - the pairs of @p line (one line, its newline included) into @p kv.
 * Returns their number, or -1 if the line is not valid logfmt.
 */
static int
parse(const char *line, struct kv *kv)
{
	const char *p = line;
	int n = 0;
	size_t len = strlen(line);

	if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) != NULL)
		return -1;
	while (*p != '\n') {
		size_t k = 0, v = 0;

		if (n == MAXKV)
			return -1;
		while (*p != '=' && *p != ' ' && *p != '\n') {
			char c = *p++;

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-') ||
			    k + 1 >= sizeof(kv[n].k))
				return -1;
			kv[n].k[k++] = c;
		}
		kv[n].k[k] = '\0';
		if (k == 0)
			return -1;
		if (*p == '=') {
			p++;
			if (*p == '"') {
				for (p++; *p != '"'; p++) {
					unsigned char c = (unsigned char)*p;

					if (c < ' ' || c == 0x7f)
						return -1;
					if (c == '\\') {
						p++;
						if (*p == 'n')
							c = '\n';
						else if (*p == 't')
							c = '\t';
						else if (*p == 'r')
							c = '\r';
						else if (*p == '"' || *p == '\\')
							c = (unsigned char)*p;
						else if (*p == 'u' && strlen(p) > 5) {
							p += 4; /* \uXXXX: kept as '?' */
							c = '?';
						} else
							return -1;
					}
					kv[n].v[v++] = (char)c;
				}
				p++;
			} else {
				while (*p != ' ' && *p != '\n') {
					unsigned char c = (unsigned char)*p++;

					if (c <= ' ' || c == '"' || c == '=' || c == 0x7f)
						return -1;
					kv[n].v[v++] = (char)c;
				}
			}
		}
		kv[n].v[v] = '\0';
		for (int i = 0; i < n; i++)
			if (strcmp(kv[i].k, kv[n].k) == 0)
				return -1;
		n++;
		if (*p == ' ')
			p++;
		else if (*p != '\n')
			return -1;
	}
	return n;
}

/* get - the value of @p key among @p n pairs, NULL if absent */
static const char *
get(const struct kv *kv, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (strcmp(kv[i].k, key) == 0)
			return kv[i].v;
	return NULL;
}

static const struct sk_logfmt_style plain = {
	.prog = "seckill-test", .ts_ns = 1795736401123456789LL, /* 2026-11-26T23:40:01.123Z */
};

static size_t render(char *buf, size_t cap, const struct sk_logfmt_style *st, enum sk_log_level lv,
		     const char *event, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static size_t
render(char *buf, size_t cap, const struct sk_logfmt_style *st, enum sk_log_level lv,
       const char *event, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = sk_logfmt_render(buf, cap, st, lv, event, fmt, ap);
	va_end(ap);
	return n;
}

static struct kv kv[MAXKV];

START_TEST(the_example_line)
{
	char buf[SK_LOGFMT_LINE_MAX + 1];
	int n;

	render(buf, sizeof(buf), &plain, SK_LOG_WARN, "drain",
	       "msg=\"store busy; orders stay queued\" err=%s", strerror(ENOSPC));
	ck_assert_str_eq(
		buf, "ts=2026-11-26T23:40:01.123Z level=warn prog=seckill-test event=drain "
		     "msg=\"store busy; orders stay queued\" err=\"No space left on device\"\n");
	n = parse(buf, kv);
	ck_assert_int_eq(n, 6);
	ck_assert_str_eq(get(kv, n, "err"), "No space left on device");
}
END_TEST

/* Values of every kind come back as they went in (control bytes as '?'). */
START_TEST(nasty_values_round_trip)
{
	static const struct {
		const char *in, *back, *raw;
	} t[] = {
		{"plain", "plain", "v=plain"},
		{"", "", "v=\"\""},
		{"a b", "a b", "v=\"a b\""},
		{"a=b", "a=b", "v=\"a=b\""},
		{"say \"hi\"", "say \"hi\"", "v=\"say \\\"hi\\\"\""},
		{"c:\\dir", "c:\\dir", "v=\"c:\\\\dir\""},
		{"two\nlines", "two\nlines", "v=\"two\\nlines\""},
		{"tab\there", "tab\there", "v=\"tab\\there\""},
		{"cr\r", "cr\r", "v=\"cr\\r\""},
		{"esc\x1b[31m", "esc?[31m", "v=\"esc\\u001b[31m\""},
		{"del\x7f", "del?", "v=\"del\\u007f\""},
		{"caf\xc3\xa9", "caf\xc3\xa9", "v=\"caf\xc3\xa9\""},
		{"bad\xff", "bad?", "v=\"bad\\ufffd\""},
		{"half\xc3", "half?", "v=\"half\\ufffd\""},
		{"k=v k2=v2", "k=v k2=v2", "v=\"k=v k2=v2\""},
		{"level=crit", "level=crit", "v=\"level=crit\""},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[SK_LOGFMT_LINE_MAX + 1];
		int n;

		render(buf, sizeof(buf), &plain, SK_LOG_INFO, "x", "v=%s", t[i].in);
		n = parse(buf, kv);
		ck_assert_msg(n == 5, "case %zu: not logfmt: %s", i, buf);
		ck_assert_msg(strcmp(get(kv, n, "v"), t[i].back) == 0, "case %zu: got '%s'", i,
			      get(kv, n, "v"));
		ck_assert_msg(strstr(buf, t[i].raw) != NULL, "case %zu: '%s' not in %s", i,
			      t[i].raw, buf);
		/* the level and prog the caller did not set stay ours */
		ck_assert_str_eq(get(kv, n, "level"), "info");
	}
}
END_TEST

/* Conversions: numbers, widths, '*', several in one value, a quoted literal. */
START_TEST(conversions)
{
	char buf[SK_LOGFMT_LINE_MAX + 1];
	const char *volatile nul = NULL; /* hidden from the compiler's %s check */
	int n;

	render(buf, sizeof(buf), &plain, SK_LOG_NOTICE, "ready",
	       "item=%u units=%u/%lu order=%llu neg=%d z=%zu hex=%#x pad=%05d w=%*d "
	       "s=%.*s f=%.2f pct=100%% msg=\"item %u of %s\" nul=%s flag",
	       7u, 3u, 10ul, 18446744073709551615ull, -5, (size_t)42, 255u, 42, 4, 9, 3, "abcdef",
	       1.5, 12u, "a b", nul);
	n = parse(buf, kv);
	ck_assert_msg(n > 0, "not logfmt: %s", buf);
	ck_assert_str_eq(get(kv, n, "item"), "7");
	ck_assert_str_eq(get(kv, n, "units"), "3/10");
	ck_assert_str_eq(get(kv, n, "order"), "18446744073709551615");
	ck_assert_str_eq(get(kv, n, "neg"), "-5");
	ck_assert_str_eq(get(kv, n, "z"), "42");
	ck_assert_str_eq(get(kv, n, "hex"), "0xff");
	ck_assert_str_eq(get(kv, n, "pad"), "00042");
	ck_assert_str_eq(get(kv, n, "w"), "   9");
	ck_assert_str_eq(get(kv, n, "s"), "abc");
	ck_assert_str_eq(get(kv, n, "f"), "1.50");
	ck_assert_str_eq(get(kv, n, "pct"), "100%");
	ck_assert_str_eq(get(kv, n, "msg"), "item 12 of a b");
	ck_assert_str_eq(get(kv, n, "nul"), "(null)");
	ck_assert_ptr_nonnull(get(kv, n, "flag"));
	ck_assert_str_eq(get(kv, n, "event"), "ready");
}
END_TEST

/* Odd keys and an event with a space still give a valid line. */
START_TEST(odd_keys_and_event)
{
	char buf[SK_LOGFMT_LINE_MAX + 1];
	int n;

	render(buf, sizeof(buf), &plain, SK_LOG_INFO, "two words", "k\"ey=1 =2 a:b=3");
	n = parse(buf, kv);
	ck_assert_msg(n == 7, "not logfmt: %s", buf);
	ck_assert_str_eq(get(kv, n, "event"), "two words");
	ck_assert_str_eq(get(kv, n, "k_ey"), "1");
	ck_assert_str_eq(get(kv, n, "_"), "2");
	ck_assert_str_eq(get(kv, n, "a_b"), "3");
}
END_TEST

/* A line too long is cut at a whole escape, its quote closed, and says so. */
START_TEST(long_lines_are_cut_valid)
{
	static char big[3 * SK_LOGFMT_LINE_MAX];
	static const char *const fill[] = {"a", " ", "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xff"};

	for (size_t f = 0; f < sizeof(fill) / sizeof(fill[0]); f++) {
		for (size_t cap = 128; cap <= SK_LOGFMT_LINE_MAX + 1; cap += 61) {
			char buf[SK_LOGFMT_LINE_MAX + 1];
			size_t len = 0, l, fl = strlen(fill[f]);
			int n;

			while (len + fl < sizeof(big) - 1) {
				memcpy(big + len, fill[f], fl);
				len += fl;
			}
			big[len] = '\0';
			l = render(buf, cap, &plain, SK_LOG_ERROR, "cut", "a=1 big=%s after=2",
				   big);
			ck_assert_uint_eq(l, strlen(buf));
			ck_assert_uint_le(l, cap - 1);
			ck_assert_uint_le(l, SK_LOGFMT_LINE_MAX);
			n = parse(buf, kv);
			ck_assert_msg(n > 0, "fill %zu cap %zu: not logfmt: %s", f, cap, buf);
			ck_assert_str_eq(get(kv, n, "truncated"), "true");
			ck_assert_ptr_null(get(kv, n, "after"));
			ck_assert_str_eq(get(kv, n, "level"), "error");
		}
	}
	/* a line that fits is not marked */
	{
		char buf[SK_LOGFMT_LINE_MAX + 1];

		render(buf, sizeof(buf), &plain, SK_LOG_ERROR, "cut", "a=%s", "short");
		ck_assert_ptr_null(strstr(buf, "truncated"));
	}
}
END_TEST

START_TEST(journal_style)
{
	static const struct {
		enum sk_log_level lv;
		const char *pri;
	} t[] = {{SK_LOG_DEBUG, "<7>"}, {SK_LOG_INFO, "<6>"},  {SK_LOG_NOTICE, "<5>"},
		 {SK_LOG_WARN, "<4>"},	{SK_LOG_ERROR, "<3>"}, {SK_LOG_CRIT, "<2>"}};
	struct sk_logfmt_style st = plain;

	st.journal = true;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[SK_LOGFMT_LINE_MAX + 1];
		int n;

		render(buf, sizeof(buf), &st, t[i].lv, "e", "x=%d", 1);
		ck_assert_msg(strncmp(buf, t[i].pri, 3) == 0, "%s", buf);
		ck_assert_ptr_null(strstr(buf, "ts="));
		n = parse(buf + 3, kv);
		ck_assert_int_eq(n, 4);
		ck_assert_str_eq(get(kv, n, "level"), sk_logfmt_level_name(t[i].lv));
	}
}
END_TEST

START_TEST(levels_parse)
{
	enum sk_log_level lv = SK_LOG_CRIT;

	ck_assert_int_eq(sk_logfmt_level_parse("debug", &lv), 0);
	ck_assert_int_eq(lv, SK_LOG_DEBUG);
	ck_assert_int_eq(sk_logfmt_level_parse("WARNING", &lv), 0);
	ck_assert_int_eq(lv, SK_LOG_WARN);
	ck_assert_int_eq(sk_logfmt_level_parse("err", &lv), 0);
	ck_assert_int_eq(lv, SK_LOG_ERROR);
	ck_assert_int_eq(sk_logfmt_level_parse("notice", &lv), 0);
	ck_assert_int_eq(lv, SK_LOG_NOTICE);
	ck_assert_int_eq(sk_logfmt_level_parse("loud", &lv), -EINVAL);
	ck_assert_int_eq(sk_logfmt_level_parse("", &lv), -EINVAL);
	ck_assert_int_eq(sk_logfmt_level_parse(NULL, &lv), -EINVAL);
	ck_assert_int_eq(lv, SK_LOG_NOTICE);
	ck_assert_int_eq(sk_logfmt_from_syslog(0), SK_LOG_CRIT);
	ck_assert_int_eq(sk_logfmt_from_syslog(3), SK_LOG_ERROR);
	ck_assert_int_eq(sk_logfmt_from_syslog(4), SK_LOG_WARN);
	ck_assert_int_eq(sk_logfmt_from_syslog(5), SK_LOG_NOTICE);
	ck_assert_int_eq(sk_logfmt_from_syslog(6), SK_LOG_INFO);
	ck_assert_int_eq(sk_logfmt_from_syslog(7), SK_LOG_DEBUG);
}
END_TEST

/*
 * capture - run sk_logf() lines with stderr on a pipe, JOURNAL_STREAM set to
 * the pipe's dev:ino if @p journal (or to another file's), the level @p lv;
 * the bytes written in @p out.
 */
static size_t
capture(bool journal, enum sk_log_level lv, char *out, size_t cap)
{
	int p[2], saved = dup(STDERR_FILENO);
	struct stat sb;
	char js[64];
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(fstat(journal ? STDERR_FILENO : saved, &sb), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	sk_logfmt_init("seckill-cap");
	sk_logfmt_set_level(lv);
	sk_logf(SK_LOG_DEBUG, "d", "n=%d", 1);
	sk_logf(SK_LOG_INFO, "i", "n=%d", 2);
	sk_logf(SK_LOG_NOTICE, "nt", "n=%d", 3);
	sk_logf(SK_LOG_WARN, "w", "n=%d", 4);
	sk_logf(SK_LOG_ERROR, "e", "n=%d", 5);
	sk_logf(SK_LOG_CRIT, "c", "n=%d", 6);
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], out, cap - 1);
	close(p[0]);
	unsetenv("JOURNAL_STREAM");
	ck_assert_int_ge(n, 0);
	out[n] = '\0';
	return (size_t)n;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

START_TEST(filter_and_journal_detection)
{
	static char out[8192];

	capture(false, SK_LOG_INFO, out, sizeof(out));
	ck_assert_int_eq(count_lines(out), 5);
	ck_assert_ptr_null(strstr(out, "event=d "));
	ck_assert_msg(strncmp(out, "ts=", 3) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "level=info prog=seckill-cap event=i n=2\n"));

	capture(false, SK_LOG_WARN, out, sizeof(out));
	ck_assert_int_eq(count_lines(out), 3);
	ck_assert_ptr_null(strstr(out, "event=nt"));
	ck_assert_ptr_nonnull(strstr(out, "event=w n=4"));

	capture(true, SK_LOG_DEBUG, out, sizeof(out));
	ck_assert_int_eq(count_lines(out), 6);
	ck_assert_ptr_null(strstr(out, "ts="));
	ck_assert_msg(strncmp(out, "<7>level=debug prog=seckill-cap event=d n=1\n<6>", 47) == 0,
		      "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "\n<2>level=crit prog=seckill-cap event=c n=6\n"));

	capture(true, SK_LOG_CRIT, out, sizeof(out));
	ck_assert_str_eq(out, "<2>level=crit prog=seckill-cap event=c n=6\n");
}
END_TEST

static Suite *
logfmt_suite(void)
{
	Suite *s = suite_create("logfmt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, the_example_line);
	tcase_add_test(tc, nasty_values_round_trip);
	tcase_add_test(tc, conversions);
	tcase_add_test(tc, odd_keys_and_event);
	tcase_add_test(tc, long_lines_are_cut_valid);
	tcase_add_test(tc, journal_style);
	tcase_add_test(tc, levels_parse);
	tcase_add_test(tc, filter_and_journal_detection);
	suite_add_tcase(s, tc);
	return s;
}

SK_TEST_MAIN(logfmt_suite)
