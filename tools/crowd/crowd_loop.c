/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowd_loop.c - the crowd's epoll loop: phases (buys, polls, the item
 * read), the periodic scan for timeouts and reconnects, the time bound.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "crowd.h"

/* How often timeouts and reconnects are looked at. */
#define SCAN_NS (20 * 1000000ull)
/* epoll_wait batch. */
#define EVENTS_MAX 256

/* phase_advance - move to the next phase once the current one is drained. */
static void
phase_advance(struct crowd *cw, uint64_t now)
{
	bool moved = false;

	for (;;) {
		if (cw->inflight != 0)
			break;
		if (cw->phase == PH_BUY &&
		    (cw->cursor < cw->o.attempts || cw->requeue_n > 0 || cw->go_ns != 0))
			break;
		if (cw->phase == PH_POLL && cw->poll_cursor < cw->poll_n)
			break;
		if (cw->phase == PH_ITEM && !cw->item_sent)
			break;
		if (cw->phase == PH_DONE)
			break;
		cw->phase++;
		moved = true;
		if (cw->phase == PH_POLL) {
			if (!cw->o.poll)
				continue;
			uint64_t n = 0;
			for (uint64_t u = 0; u < cw->o.users; u++)
				n += cw->order[u] != 0;
			cw->poll_users = malloc((n ? n : 1) * sizeof(*cw->poll_users));
			if (cw->poll_users == NULL) {
				cw->fatal = "out of memory for the polls";
				return;
			}
			for (uint64_t u = 0; u < cw->o.users; u++) {
				if (cw->order[u] != 0)
					cw->poll_users[cw->poll_n++] = (uint32_t)u;
			}
		}
	}
	if (moved) {
		for (uint32_t i = 0; i < cw->o.conns; i++)
			crowd_conn_dispatch(cw, &cw->conns[i], now);
	}
}

/* scan - timeouts, reconnects and the end of a --wait-start pause. */
static void
scan(struct crowd *cw, uint64_t now)
{
	uint64_t tmo = (uint64_t)cw->o.timeout_ms * 1000000ull;
	bool go = false;
	char why[160];

	if (cw->go_ns != 0 && now >= cw->go_ns) {
		cw->st.waited_ns += now - cw->t_pause;
		cw->go_ns = 0;
		cw->t_go = 0; /* the measured phase starts now */
		go = true;
	}
	for (uint32_t i = 0; i < cw->o.conns && cw->fatal == NULL; i++) {
		struct conn *c = &cw->conns[i];
		switch (c->state) {
		case CS_BUSY:
			if (now - c->start_ns > tmo)
				crowd_conn_fail(cw, c, &cw->st.err_timeout, now);
			break;
		case CS_CONNECTING:
			if (now - c->start_ns > tmo)
				crowd_conn_fail(cw, c, &cw->st.err_connect, now);
			break;
		case CS_HANDSHAKE:
			/* connected but no handshake: the first such ends the run
			 * (a plain HTTP server, say) */
			if (now - c->start_ns > tmo) {
				cw->st.tls_failed++;
				snprintf(why, sizeof(why),
					 "TLS handshake with %s: no answer within --timeout-ms",
					 cw->o.host);
				crowd_conn_setup_failed(cw, c, why, now);
			}
			break;
		case CS_CLOSED:
			if (cw->phase != PH_DONE && now >= c->retry_ns)
				crowd_conn_open(cw, c, now);
			break;
		default:
			if (go)
				crowd_conn_dispatch(cw, c, now);
			break;
		}
	}
}

/* crowd_run - the event loop, until every phase is done or the run must stop. */
void
crowd_run(struct crowd *cw)
{
	struct epoll_event evs[EVENTS_MAX];
	uint64_t now = now_ns(), last_scan = now;

	for (uint32_t i = 0; i < cw->o.conns; i++)
		crowd_conn_open(cw, &cw->conns[i], now);
	while (cw->phase != PH_DONE && cw->fatal == NULL && !cw->timebound && !crowd_interrupted) {
		now = now_ns();
		if (now >= cw->deadline) {
			snprintf(cw->note, sizeof(cw->note), "stopped by --max-seconds %g",
				 cw->o.max_seconds);
			cw->timebound = true;
			break;
		}
		uint64_t wake = last_scan + SCAN_NS;
		if (cw->go_ns != 0 && cw->go_ns < wake)
			wake = cw->go_ns;
		if (cw->deadline < wake)
			wake = cw->deadline;
		int tmo = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		int n = epoll_wait(cw->epfd, evs, EVENTS_MAX, tmo);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(cw->fatal_buf, sizeof(cw->fatal_buf), "epoll_wait: %s",
				 strerror(errno));
			cw->fatal = cw->fatal_buf;
			break;
		}
		/* one clock read per event: a latency must not include the time spent
		 * on the events before it in the batch */
		for (int i = 0; i < n; i++) {
			now = now_ns();
			crowd_conn_event(cw, &cw->conns[evs[i].data.u32], evs[i].events, now);
		}
		now = now_ns();
		if (now - last_scan >= SCAN_NS || (cw->go_ns != 0 && now >= cw->go_ns)) {
			scan(cw, now);
			last_scan = now;
		}
		phase_advance(cw, now);
	}
	if (crowd_interrupted && cw->note[0] == '\0')
		snprintf(cw->note, sizeof(cw->note), "interrupted");
	for (uint32_t i = 0; i < cw->o.conns; i++) {
		struct conn *c = &cw->conns[i];
		if (c->fd >= 0) {
			if (c->state == CS_BUSY)
				crowd_job_lost(cw, c);
			crowd_conn_close(cw, c, true, 0);
		}
	}
}
