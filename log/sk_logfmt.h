/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The daemons' logger: one line per event on stderr, logfmt (key=value),
 * with levels, the same for every daemon (seckill-dataplane, seckill-control,
 * seckill-mysql-writer, seckill-loadgen). docs/logs.md is the operator's
 * side: the keys, the levels, the events, journald.
 *
 *   ts=2026-11-26T23:40:01.123Z level=warn prog=seckill-control event=drain msg="store busy"
 * err="No space left on device"
 *
 * A line is built by sk_logf() from a format whose literal text is the keys
 * and whose conversions are the values: sk_logf(SK_LOG_WARN, "drain",
 * "msg=\"store busy\" err=%s", strerror(e)). The logger formats each value
 * on its own and quotes and escapes it when needed (a space, a quote, '=',
 * a backslash, a control character, an empty value), so a caller cannot
 * break a line with a nasty value. In the format, tokens are separated by
 * one space; a token is KEY=VALUE where VALUE is either bare text with
 * conversions (no space: "item=%u", "units=%u/%u") or double-quoted text
 * with conversions ("msg=\"item %u is sold out\""; no quote inside).
 * Keys are [A-Za-z0-9_.-] (anything else becomes '_').
 *
 * When stderr is the journal (JOURNAL_STREAM names stderr's device and
 * inode, systemd.exec(5)), a line starts with the syslog priority "<N>"
 * (journald's SyslogLevelPrefix) and has no ts= (journald stamps lines);
 * otherwise it starts with ts= (UTC, milliseconds).
 *
 * Lines are at most SK_LOGFMT_LINE_MAX bytes, newline included: a longer
 * one is cut at a whole escape and its quote closed, and ends with
 * "truncated=true". Each line is one write(2) (atomic on a pipe: the line
 * is below PIPE_BUF), so lines of two threads never interleave.
 *
 * Threading: sk_logfmt_init() and sk_logfmt_dpdk() run once in main()
 * before any thread starts; sk_logf(), sk_logfmt_set_level() and
 * sk_logfmt_enabled() are thread-safe. Not for the fast path: a line costs
 * a formatting pass and a system call (the lcores' per-packet code never
 * logs).
 */
#ifndef SK_LOGFMT_H
#define SK_LOGFMT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The longest line, newline included (below PIPE_BUF: one atomic write). */
#define SK_LOGFMT_LINE_MAX 2048

/** Levels, lowest first; the names are those of level=. */
enum sk_log_level {
	SK_LOG_DEBUG = 0, /**< "debug": details for a developer */
	SK_LOG_INFO,	  /**< "info": normal events (a batch exported, a rebalance) */
	SK_LOG_NOTICE,	  /**< "notice": milestones (ready, attached, stopped) */
	SK_LOG_WARN,	  /**< "warn": something failed and is retried or skipped */
	SK_LOG_ERROR,	  /**< "error": refused config, a start-up failure, lost work */
	SK_LOG_CRIT,	  /**< "crit": the daemon cannot go on */
};

/** The style of a rendered line (sk_logfmt_render()). */
struct sk_logfmt_style {
	const char *prog; /**< prog= value */
	bool journal;	  /**< "<N>" prefix and no ts= */
	int64_t ts_ns;	  /**< wall-clock time for ts= (ns since the epoch) */
};

/**
 * sk_logfmt_init - set the program name (prog=) and look whether stderr is
 * the journal (JOURNAL_STREAM). The level starts at info. Call once, in
 * main(), before any thread; again in a test. @p prog is copied (63 bytes
 * kept).
 */
void sk_logfmt_init(const char *prog);

/**
 * sk_logfmt_level_parse - the level named @p s ("debug", "info", "notice",
 * "warn" or "warning", "error" or "err", "crit") into @p lv.
 * @return 0, or -EINVAL for anything else (NULL included); @p lv untouched.
 */
int sk_logfmt_level_parse(const char *s, enum sk_log_level *lv);

/** sk_logfmt_level_name - "debug" ... "crit"; "?" for a value out of range. */
const char *sk_logfmt_level_name(enum sk_log_level lv);

/**
 * sk_logfmt_set_level - write only lines of level @p lv and above from now
 * on (the --log-level option). Thread-safe (a relaxed atomic store).
 */
void sk_logfmt_set_level(enum sk_log_level lv);

/** sk_logfmt_enabled - true if a line of level @p lv would be written. */
bool sk_logfmt_enabled(enum sk_log_level lv);

/**
 * sk_logfmt_from_syslog - our level of a syslog priority (0 emerg .. 7
 * debug), for librdkafka's and libmicrohttpd's log callbacks: 0..2 crit,
 * 3 error, 4 warn, 5 notice, 6 info, 7 and above debug.
 */
enum sk_log_level sk_logfmt_from_syslog(int pri);

/**
 * sk_logf - write one line of level @p lv about @p event (event=, a word an
 * operator greps: "ready", "drain", "kafka" ...) with the keys and values
 * of @p fmt (see the file comment) on stderr, unless the level is filtered
 * out. Never fails: a write error is ignored (there is nowhere to report
 * it); an overlong line is cut. Thread-safe.
 */
void sk_logf(enum sk_log_level lv, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** sk_vlogf - sk_logf() with a va_list. */
void sk_vlogf(enum sk_log_level lv, const char *event, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/**
 * sk_logfmt_render - the line sk_logf() would write, in @p buf (@p cap
 * bytes, at least 128; at most SK_LOGFMT_LINE_MAX are used), newline
 * included, NUL-terminated, with the style @p st instead of the process's.
 * No filter. For the unit tests and the re-emitters.
 * @return the line's length without the NUL, 0 if @p cap < 128.
 */
size_t sk_logfmt_render(char *buf, size_t cap, const struct sk_logfmt_style *st,
			enum sk_log_level lv, const char *event, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/**
 * sk_logfmt_dpdk - route DPDK's own log lines (EAL, PMDs) through this
 * logger: each line becomes "event=dpdk msg=...", its level from
 * rte_log_cur_msg_loglevel() (emerg..crit: crit, err: error, warning: warn,
 * notice, info, debug). Call once, after sk_logfmt_init() and before
 * rte_eal_init() (so that the EAL's first lines go through it too).
 * Thread-safe afterwards (DPDK writes under the stream's lock).
 * @return 0, or -errno of fopencookie() or rte_openlog_stream().
 */
int sk_logfmt_dpdk(void);

struct rd_kafka_conf_s; /* rd_kafka_conf_t of <librdkafka/rdkafka.h> */

/**
 * sk_logfmt_kafka - have the librdkafka client made from @p conf log
 * through this logger ("event=kafka client=NAME facility=FAC msg=..." at
 * the level of librdkafka's syslog level) instead of its own stderr lines.
 * Call before rd_kafka_new(). In the library sk_logfmt_kafka (links
 * librdkafka); the callback runs on librdkafka's threads: thread-safe.
 */
void sk_logfmt_kafka(struct rd_kafka_conf_s *conf);

#endif /* SK_LOGFMT_H */
