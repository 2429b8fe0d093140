/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_logfmt_dpdk.c - DPDK's log stream re-emitted as logfmt lines
 * (sk_logfmt_dpdk() in sk_logfmt.h): a fopencookie() stream given to
 * rte_openlog_stream(); each complete line DPDK writes becomes one
 * "event=dpdk msg=..." line at the level of the message being written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <rte_log.h>

#include "sk_logfmt.h"

/*
 * The text of a line not ended yet (DPDK may write one line in several
 * calls). Only the cookie's write touches it, under the FILE's lock.
 */
static struct {
	char buf[SK_LOGFMT_LINE_MAX];
	size_t len;
} pend;

/* dpdk_level - our level of DPDK's RTE_LOG_* (1 emerg .. 8 debug) */
static enum sk_log_level
dpdk_level(int rl)
{
	switch (rl) {
	case RTE_LOG_ERR:
		return SK_LOG_ERROR;
	case RTE_LOG_WARNING:
		return SK_LOG_WARN;
	case RTE_LOG_NOTICE:
		return SK_LOG_NOTICE;
	case RTE_LOG_INFO:
		return SK_LOG_INFO;
	case RTE_LOG_DEBUG:
		return SK_LOG_DEBUG;
	default:
		return rl < (int)RTE_LOG_ERR ? SK_LOG_CRIT : SK_LOG_DEBUG;
	}
}

/* flush_line - the pending text as one line (trailing blanks dropped), if any */
static void
flush_line(enum sk_log_level lv)
{
	while (pend.len > 0 && (pend.buf[pend.len - 1] == ' ' || pend.buf[pend.len - 1] == '\r'))
		pend.len--;
	if (pend.len > 0)
		sk_logf(lv, "dpdk", "msg=%.*s", (int)pend.len, pend.buf);
	pend.len = 0;
}

static ssize_t
cookie_write(void *c, const char *b, size_t n)
{
	enum sk_log_level lv = dpdk_level(rte_log_cur_msg_loglevel());

	(void)c;
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n') {
			flush_line(lv);
			continue;
		}
		if (pend.len == sizeof(pend.buf))
			flush_line(lv); /* an endless line: in pieces */
		pend.buf[pend.len++] = b[i];
	}
	return (ssize_t)n;
}

int
sk_logfmt_dpdk(void)
{
	static const cookie_io_functions_t io = {.write = cookie_write};
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return -errno;
	/* DPDK flushes after each message; a line buffer keeps writes whole */
	setvbuf(f, NULL, _IOLBF, 0);
	if (rte_openlog_stream(f) != 0) {
		fclose(f);
		return -EINVAL;
	}
	return 0;
}
