/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_follow.c - --follow: after the run, a share of the winners follow
 * their order's events stream (GET /v1/orders/{id}/events, Server-Sent
 * Events) and count what it says until the server closes it. One poll()
 * loop over non-blocking sockets, bounded by --follow-seconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sk_common.h"
#include "sk_log.h"

#include "crowd.h"

/* The state of one stream. */
enum { FS_CONNECTING = 0, FS_SENDING, FS_READING, FS_DONE };

/* Longest line kept (an event's data line is well below it; longer: cut). */
#define LINE_MAX_ 256

struct fstream {
	int fd;
	uint8_t state;
	bool head_done; /* the blank line after the head was read */
	bool final;	/* the last event was a final status */
	int http;	/* status code of the answer, 0 before its first line */
	uint32_t out_off, out_len, line_len;
	char out[CONN_OUT_CAP];
	char line[LINE_MAX_];
};

static const char *const names[FOLLOW_NAMES + 1] = {
	"queued", "confirmed", "paid", "cancelled", "failed", "refunded", "settled", "other",
};

const char *
crowd_follow_name(unsigned k)
{
	return k <= FOLLOW_NAMES ? names[k] : "other";
}

/* draw - whether user index @u (a winner) follows: a hash of seed and user, mod 100. */
static bool
draw(uint64_t seed, uint32_t u, uint32_t percent)
{
	uint64_t z = seed + (uint64_t)u * UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (z ^ (z >> 31)) % 100 < percent;
}

/* on_line - one line of a stream (no line end): the status line, a header,
 * the blank line, or a line of the event stream. */
static void
on_line(struct fstream *s, struct follow_stats *fs)
{
	static const char key[] = "\"status\":\"";
	const char *l = s->line;

	if (s->http == 0) {
		if (s->line_len < 12 || strncmp(l, "HTTP/1.1 ", 9) != 0) {
			s->http = -1;
			return;
		}
		s->http = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
		return;
	}
	if (!s->head_done) {
		s->head_done = s->line_len == 0;
		return;
	}
	if (s->line_len > 0 && l[0] == ':') {
		fs->keepalives++;
		return;
	}
	if (s->line_len < 6 || strncmp(l, "data: ", 6) != 0)
		return;
	const char *p = strstr(l, key);
	unsigned k = FOLLOW_OTHER;

	if (p != NULL) {
		p += sizeof(key) - 1;
		for (unsigned i = 0; i < FOLLOW_NAMES; i++) {
			size_t n = strlen(names[i]);
			if (strncmp(p, names[i], n) == 0 && p[n] == '"') {
				k = i;
				break;
			}
		}
	}
	fs->events++;
	fs->by_name[k]++;
	/* paid, cancelled, failed, refunded, settled end a stream */
	s->final = k >= 2 && k < FOLLOW_NAMES;
}

/* feed - the bytes @b (@n) of stream @s, line by line. */
static void
feed(struct fstream *s, struct follow_stats *fs, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n') {
			if (s->line_len > 0 && s->line[s->line_len - 1] == '\r')
				s->line_len--;
			s->line[s->line_len < LINE_MAX_ ? s->line_len : LINE_MAX_ - 1] = '\0';
			on_line(s, fs);
			s->line_len = 0;
		} else if (s->line_len < LINE_MAX_ - 1) {
			s->line[s->line_len++] = b[i];
		}
	}
}

/* finish - stream @s is over (the server closed it, or @error). */
static void
finish(struct fstream *s, struct follow_stats *fs, bool error)
{
	if (error)
		fs->errors++;
	else if (s->http == 200)
		(*(s->final ? &fs->closed_final : &fs->closed_early))++;
	if (s->http == 200)
		fs->opened++;
	else if (s->http == 429)
		fs->refused++;
	else if (s->http == 404)
		fs->not_found++;
	else if (s->http > 0)
		fs->other_http++;
	close(s->fd);
	s->fd = -1;
	s->state = FS_DONE;
}

/* step - move stream @s on after poll() said @rev. */
static void
step(struct crowd *cw, struct fstream *s, short rev, struct follow_stats *fs)
{
	char buf[4096];
	ssize_t n;

	(void)cw;
	if (s->state == FS_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
			finish(s, fs, true);
			return;
		}
		s->state = FS_SENDING;
	}
	if (s->state == FS_SENDING && (rev & POLLOUT)) {
		n = send(s->fd, s->out + s->out_off, s->out_len - s->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN) {
			finish(s, fs, true);
			return;
		}
		if (n > 0)
			s->out_off += (uint32_t)n;
		if (s->out_off == s->out_len)
			s->state = FS_READING;
		return;
	}
	if (s->state == FS_READING && (rev & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(s->fd, buf, sizeof(buf), 0);
		if (n > 0)
			feed(s, fs, buf, (size_t)n);
		else if (n == 0)
			finish(s, fs, false);
		else if (errno != EAGAIN)
			finish(s, fs, true);
	}
}

/* open_stream - connect @s (non-blocking) and build its request for user @u. */
static bool
open_stream(struct crowd *cw, struct fstream *s, uint32_t u)
{
	size_t len = (size_t)snprintf(s->out, sizeof(s->out),
				      "GET /v1/orders/%" PRIu64 "/events HTTP/1.1\r\nHost: %s\r\n",
				      cw->order[u], cw->o.host);

	if (!crowd_build_identity(cw, s->out, &len, u, false) || len + 3 > sizeof(s->out))
		return false;
	memcpy(s->out + len, "\r\n", 2);
	s->out_len = (uint32_t)len + 2;
	s->fd = socket(cw->o.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return false;
	if (connect(s->fd, (const struct sockaddr *)&cw->o.addr, cw->o.addr_len) != 0 &&
	    errno != EINPROGRESS) {
		close(s->fd);
		s->fd = -1;
		return false;
	}
	return true;
}

int
crowd_follow(struct crowd *cw, struct follow_stats *fs)
{
	uint64_t t0 = now_ns(), end;
	struct fstream *s;
	struct pollfd *pf;
	uint32_t n = 0, live;

	memset(fs, 0, sizeof(*fs));
	for (uint64_t u = 0; u < cw->o.users; u++)
		if (cw->order[u] != 0) {
			fs->winners++;
			if (draw(cw->o.seed, (uint32_t)u, cw->o.follow) &&
			    fs->streams < cw->o.conns)
				fs->streams++;
		}
	if (fs->streams == 0)
		return 0;
	s = calloc(fs->streams, sizeof(*s));
	pf = calloc(fs->streams, sizeof(*pf));
	if (s == NULL || pf == NULL) {
		free(s);
		free(pf);
		sk_log(PROG, "--follow: out of memory for %" PRIu64 " streams", fs->streams);
		return EXIT_RUNTIME;
	}
	for (uint64_t u = 0; u < cw->o.users && n < fs->streams; u++) {
		if (cw->order[u] == 0 || !draw(cw->o.seed, (uint32_t)u, cw->o.follow))
			continue;
		if (!open_stream(cw, &s[n], (uint32_t)u)) {
			s[n].fd = -1;
			s[n].state = FS_DONE;
			fs->errors++;
		}
		n++;
	}
	end = t0 + (uint64_t)(cw->o.follow_seconds * 1e9);
	for (live = n; live > 0 && !crowd_interrupted;) {
		uint64_t now = now_ns();
		uint32_t k = 0;

		if (now >= end)
			break;
		for (uint32_t i = 0; i < n; i++) {
			if (s[i].state == FS_DONE)
				continue;
			pf[k].fd = s[i].fd;
			pf[k].events = s[i].state == FS_READING ? POLLIN : POLLOUT;
			pf[k].revents = 0;
			k++;
		}
		int ms = (int)((end - now) / 1000000) + 1;
		if (poll(pf, k, ms > 100 ? 100 : ms) < 0 && errno != EINTR)
			break;
		k = 0;
		live = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (s[i].state == FS_DONE)
				continue;
			if (pf[k].revents != 0)
				step(cw, &s[i], pf[k].revents, fs);
			k++;
			live += s[i].state != FS_DONE;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		if (s[i].state == FS_DONE)
			continue;
		if (s[i].http == 200) { /* still open: ours to close */
			fs->open_at_end++;
			fs->opened++;
			close(s[i].fd);
		} else { /* no answer in time */
			finish(&s[i], fs, true);
		}
	}
	fs->secs = (double)(now_ns() - t0) / 1e9;
	free(s);
	free(pf);
	return 0;
}
