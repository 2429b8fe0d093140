/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPIN model of the two-level protocol of docs/cluster.md: M appliances
 * ("members") lease units of one item from a global pool in Redis, sell
 * them, give them back, report when they run dry; Redis declares the item
 * sold out everywhere and broadcasts it; a member can crash (kill -9) and
 * Redis can restart having lost its last writes (fencing, sync, rebuild).
 *
 * One Promela step = one atomic action of the real system: a Redis script
 * (a Lua script is atomic), one LMDB write transaction of a member, a buy or
 * a return in a member's dataplane, the subscriber applying a broadcast.
 * A member's local per-lcore layer is one atomic take (tests/model/stock.pml
 * checks that layer).
 *
 * docs/cluster-model.md says what is modelled, what is abstracted, the
 * properties, the mutants and the findings; tests/model/run.sh runs every
 * configuration (cluster checks: --model cluster).
 *
 * Parameters (spin -DNAME=value):
 *   M         members, 2 or 3                                   default 2
 *   TOTAL     units of the sale                                 default 2
 *   WANT      units a lease asks for                            default 1
 *   NOPS      lease + give-back ops per member (the seq bound)  default 3
 *   NB        buys by each member but member 0 (whose crowd
 *             never ends)                                       default 1
 *   NRET      payment timeouts (a sold unit back into the
 *             seller's local stock)                             default 1
 *   NCRASH    member crashes (kill -9 and restart)              default 1
 *   NRESTART  Redis restarts losing the writes after the last
 *             snapshot                                          default 1
 * Options:
 *   START_FENCED  the pool as sk_cpool_init() creates it: fenced at epoch
 *                 1, every member has to sync first
 *   NO_LIVENESS   do not check P4 at quiescence
 * The protocol as docs/cluster.md first wrote it (docs/cluster-model.md,
 * "Findings"); each is one fix taken out:
 *   NO_FENCE_DRY_CLEAR  a fence keeps the members' dry reports
 *   NO_REREPORT         a member does not report its local stock again
 *                       after its sync
 *   NO_RECOMPUTE        the sold-out flag is flipped only by dry (set or
 *                       clear) and give-back (clear), not recomputed by a
 *                       fence, a rebuild or a grant; dry flips even while
 *                       fenced
 *   DOC_V1              all three
 * Mutants (each must produce a counterexample):
 *   NO_FENCE        the scripts never fence after a Redis restart
 *   NO_REPLAY       the scripts do not replay a recorded op
 *   DRY_SELF        dry declares sold out when the pool and the caller are
 *                   empty, whatever the other members reported
 *   GB_NOT_HELD     a member's sync leaves out its pending give-back
 *   SYNC_FIRST      a member syncs before resending its pending give-back
 *   NO_GRANT_UNDRY  a grant does not clear the grantee's dry report
 *   SUB_VERSION     after a reconnect the subscriber keeps its flag unless
 *                   the key's version is higher than the one it has
 *   NO_RECON_VIEW   a member does not read the view after a reconnect (it
 *                   learns of a fence only from a failed op)
 */

#ifndef M
#define M 2
#endif
#ifndef TOTAL
#define TOTAL 2
#endif
#ifndef WANT
#define WANT 1
#endif
#ifndef NOPS
#define NOPS 3
#endif
#ifndef NB
#define NB 1
#endif
#ifndef NRET
#define NRET 1
#endif
#ifndef NCRASH
#define NCRASH 1
#endif
#ifndef NRESTART
#define NRESTART 1
#endif
#ifdef DOC_V1
#define NO_FENCE_DRY_CLEAR
#define NO_REREPORT
#define NO_RECOMPUTE
#endif

#define PK_LEASE 1
#define PK_GB 2
#define RK_OK 1
#define RK_FENCED 2
#define RK_HELD 3

/* ---- Redis: the keys of the item (docs/cluster.md, "Keys") ---- */
#ifdef START_FENCED
#define FENCED0 1
#else
#define FENCED0 0
#endif
byte r_free = TOTAL;
byte r_held[M];	 /* leases: member -> units held */
bit r_fenced = FENCED0;
byte r_epoch = 1;
byte r_boot = 1; /* run id of the Redis that wrote the pool */
bit r_so;	 /* sold_out */
byte r_ver;	 /* sold-out version */
bit r_want;
byte r_oseq[M];	 /* ops: the seq of the member's last op ... */
byte r_ores[M];	 /* ... and its result */
byte r_synced[M]; /* epoch of the member's last sync */
bit r_dry[M];	 /* dry: the member reported 0 local units (since its last grant) */
/* the same, as of the last snapshot (what a restart comes back with) */
byte s_free = TOTAL;
byte s_epoch = 1;
byte s_boot = 1;
byte s_ver;
byte s_held[M];
byte s_oseq[M];
byte s_ores[M];
byte s_synced[M];
bit s_fenced = FENCED0;
bit s_so, s_want;
bit s_dry[M];
byte rid = 1;	/* the run id of the running Redis */
bit dirty;	/* a write since the last snapshot */
bit snapped;	/* the snapshot is taken: only the last one before a restart
		 * matters, so one, at any point, covers every lost suffix */
bit chaos = 1;	/* faults (crashes, restarts) may still happen */

/* ---- broadcast: the last PUBLISH not yet read by each subscriber ---- */
bit ppend[M], pso[M];
byte pver[M];

/* ---- each member: durable (its LMDB) ---- */
byte d_seq[M];	/* last op seq */
byte d_pk[M];	/* pending op: 0, PK_LEASE, PK_GB */
byte d_pu[M];	/* its units */
byte d_held[M]; /* granted - given back (pending give-back included) */
byte stock[M];	/* local unsold units (its local activity) */
byte sold[M], ret[M];
/* ---- volatile (lost in a crash) ---- */
byte rk[M], rv[M]; /* the reply to the pending op, not yet processed */
bit v_fen[M];	   /* knows the item is fenced: must sync */
byte v_ep[M];	   /* ... at this epoch */
bit v_wait[M];	   /* pending give-back refused as fenced: resend after sync */
bit v_got0[M];	   /* last lease granted 0: retry when units are back */
byte v_rep[M];	   /* last dry report: 0 none/unknown, 1 zero, 2 units */
bit v_recon[M] = FENCED0; /* (re)connected: read the view */
bit lflag[M];	   /* the dataplane's sold-out flag */
byte lver[M];	   /* its version */
bit resub[M];	   /* subscriber (re)connected: read the key */

/* ---- ghosts ---- */
byte nops[M];	/* ops used (NOPS each) */
byte g_last[M]; /* last seq Redis granted units for (never rolled back) */
byte ncrash, nrs, nret;
byte nb[M];	/* buys by each crowd but member 0's */
hidden byte l_P1_every_step, l_P1_oversold, l_P2_lease_twice, l_P2_held, l_P2_quiescent;
hidden byte l_P3_quiescent, l_P4_quiescent, l_model_sanity;

#if M == 2
#define FOR_M(x) x(0); x(1)
#define ALLDRY (r_dry[0] && r_dry[1])
#define ALLSYNCED (r_synced[0] == r_epoch && r_synced[1] == r_epoch)
#define SUM(a) (a[0] + a[1])
#define ALL_M(p) (p(0) && p(1))
#elif M == 3
#define FOR_M(x) x(0); x(1); x(2)
#define ALLDRY (r_dry[0] && r_dry[1] && r_dry[2])
#define ALLSYNCED (r_synced[0] == r_epoch && r_synced[1] == r_epoch && r_synced[2] == r_epoch)
#define SUM(a) (a[0] + a[1] + a[2])
#define ALL_M(p) (p(0) && p(1) && p(2))
#else
#error "M must be 2 or 3"
#endif
#define OUT(k) (sold[k] - ret[k])
#define SUMOUT (OUT(0) + OUT(1) + OUT2)
#if M == 3
#define OUT2 OUT(2)
#else
#define OUT2 0
#endif
#define PENDGB(k) (d_pk[k] == PK_GB -> d_pu[k] : 0)

/* Coverage: with -DCOVER=n reaching event n is an assertion failure. */
#ifdef COVER
#define REACHED(n) assert(COVER != n);
#else
#define REACHED(n)
#endif
#define EV_REPLAY 1	     /* a resent op got its recorded result */
#define EV_FENCE 2	     /* a script fenced the item after a restart */
#define EV_LOST_GRANT 3	     /* a restart lost a grant its member had recorded */
#define EV_LEASE_CLOSED 4    /* a pending lease refused as fenced, closed as 0 */
#define EV_GB_PARKED 5	     /* a pending give-back refused as fenced */
#define EV_REBUILD 6	     /* the last sync rebuilt the pool */
#define EV_REBUILD_UNITS 7   /* ... with units held by a member */
#define EV_SOLDOUT 8	     /* the flag was raised */
#define EV_REOPEN 9	     /* the flag was lowered */
#define EV_RETURN_REOPEN 10  /* ... by a dry report after a return */
#define EV_WANT_GB 11	     /* a give-back while want was set */
#define EV_WANT_SERVED 12    /* ... then a member that got 0 was granted units */
#define EV_FENCE_SOLDOUT 13  /* a fence found the flag raised */
#define EV_QUIET_DONE 14     /* quiescent, everything sold, after a rebuild */
#define EV_COUNT 14
bit g_wantgb; /* a give-back happened while want was set */
bit g_rebuilt;

/* ---- Redis scripts (each called inside one atomic block) ---- */

inline publish1(k)
{
	pso[k] = r_so; pver[k] = r_ver; ppend[k] = 1
}
#define PUB(k) publish1(k)

inline flip(to)
{
	r_so = to; r_ver++; FOR_M(PUB);
	if
	:: to -> REACHED(EV_SOLDOUT)
	:: else -> REACHED(EV_REOPEN)
	fi
}

/* The fix: the flag is a function of the pool and the dry reports, so every
 * script that changes one of them recomputes it. */
inline recompute()
{
#ifndef NO_RECOMPUTE
	if
	:: (!r_fenced && r_free == 0 && ALLDRY) != r_so -> flip(1 - r_so)
	:: else
	fi
#else
	skip
#endif
}

#define UNSYNC(k) r_synced[k] = 0
#define UNDRY(k) r_dry[k] = 0
/* Every script first compares the run id (INFO server) with pool.boot. */
inline fence_check()
{
	if
	:: r_boot != rid ->
		r_boot = rid;
#ifndef NO_FENCE
		r_epoch++; r_fenced = 1; FOR_M(UNSYNC);
		REACHED(EV_FENCE)
		if
		:: r_so -> REACHED(EV_FENCE_SOLDOUT)
		:: else
		fi;
#ifndef NO_FENCE_DRY_CLEAR
		FOR_M(UNDRY);
#endif
		recompute();
#endif
		dirty = 1
	:: else
	fi
}

/* lease(I, m, seq, want); the reply goes to rk/rv[m] */
inline sc_lease(m)
{
	fence_check();
	assert(r_oseq[m] <= d_seq[m] || l_model_sanity); /* never ERR stale */
	if
#ifndef NO_REPLAY
	:: r_oseq[m] == d_seq[m] -> rk[m] = RK_OK; rv[m] = r_ores[m]; REACHED(EV_REPLAY)
#endif
	:: else ->
		if
		:: r_fenced -> rk[m] = RK_FENCED; rv[m] = r_epoch
		:: else ->
			g = (d_pu[m] < r_free -> d_pu[m] : r_free);
			r_free = r_free - g; r_held[m] = r_held[m] + g;
			r_oseq[m] = d_seq[m]; r_ores[m] = g;
			if
			:: g == 0 -> r_want = 1
			:: else ->
				assert(g_last[m] != d_seq[m] || l_P2_lease_twice);
				g_last[m] = d_seq[m];
				if
				:: v_got0[m] && g_wantgb -> REACHED(EV_WANT_SERVED)
				:: else
				fi;
#ifndef NO_GRANT_UNDRY
				r_dry[m] = 0;
#endif
				recompute()
			fi;
			rk[m] = RK_OK; rv[m] = g; g = 0; dirty = 1
		fi
	fi
}

/* giveback(I, m, seq, units) */
inline sc_gb(m)
{
	fence_check();
	assert(r_oseq[m] <= d_seq[m] || l_model_sanity);
	if
#ifndef NO_REPLAY
	:: r_oseq[m] == d_seq[m] -> rk[m] = RK_OK; rv[m] = r_ores[m]; REACHED(EV_REPLAY)
#endif
	:: else ->
		if
		:: r_fenced -> rk[m] = RK_FENCED; rv[m] = r_epoch
		:: !r_fenced && r_held[m] < d_pu[m] -> rk[m] = RK_HELD
		:: else ->
			if
			:: r_want -> g_wantgb = 1; REACHED(EV_WANT_GB)
			:: else
			fi;
			r_free = r_free + d_pu[m]; r_held[m] = r_held[m] - d_pu[m];
			r_oseq[m] = d_seq[m]; r_ores[m] = d_pu[m]; r_want = 0;
#ifdef NO_RECOMPUTE
			if
			:: r_so -> flip(0)
			:: else
			fi;
#else
			recompute();
#endif
			rk[m] = RK_OK; rv[m] = d_pu[m]; dirty = 1
		fi
	fi
}

/* sync(I, m, epoch, held), and the member's handling of the reply */
inline sc_sync(m, h)
{
	fence_check();
	if
	:: v_ep[m] != r_epoch -> v_ep[m] = r_epoch /* ERR stale: sync again */
	:: v_ep[m] == r_epoch && !r_fenced -> v_fen[m] = 0; v_wait[m] = 0
	:: else ->
		r_held[m] = h; r_synced[m] = r_epoch;
		if
		:: ALLSYNCED ->
			assert(SUM(r_held) <= TOTAL || l_P1_oversold); /* ERR oversold */
			r_free = TOTAL - SUM(r_held); r_fenced = 0; g_rebuilt = 1;
			REACHED(EV_REBUILD)
			if
			:: SUM(r_held) > 0 -> REACHED(EV_REBUILD_UNITS)
			:: else
			fi;
			recompute()
		:: else
		fi;
		dirty = 1; v_fen[m] = 0; v_wait[m] = 0
	fi;
#ifndef NO_REREPORT
	if
	:: !v_fen[m] -> v_rep[m] = 0 /* report the local stock again */
	:: else
	fi
#endif
}

/* dry(I, m, local_units) */
inline sc_dry(m, n)
{
	fence_check();
	r_dry[m] = (n == 0); dirty = 1;
#ifdef DRY_SELF
	if
	:: !r_so && n == 0 && r_free == 0 && !r_fenced -> flip(1)
	:: else -> recompute()
	fi;
#elif defined(NO_RECOMPUTE)
	if
	:: !r_so && r_free == 0 && ALLDRY -> flip(1)
	:: r_so && n > 0 -> flip(0); REACHED(EV_RETURN_REOPEN)
	:: else
	fi;
#else
	if
	:: n > 0 && r_so -> REACHED(EV_RETURN_REOPEN)
	:: else
	fi;
	recompute();
#endif
	v_rep[m] = (n == 0 -> 1 : 2);
#ifndef NO_REPLY_FLAG
	/* the reply's flag and version go to the dataplane, as a broadcast's */
	if
	:: r_ver >= lver[m] -> lflag[m] = r_so; lver[m] = r_ver
	:: else
	fi;
#endif
	if
	:: r_fenced && !v_fen[m] -> v_fen[m] = 1; v_ep[m] = r_epoch
	:: else
	fi
}

#define SNAP1(k) s_held[k] = r_held[k]; s_oseq[k] = r_oseq[k]; s_ores[k] = r_ores[k]; \
		 s_synced[k] = r_synced[k]; s_dry[k] = r_dry[k]
#define LOAD1(k) r_held[k] = s_held[k]; r_oseq[k] = s_oseq[k]; r_ores[k] = s_ores[k]; \
		 r_synced[k] = s_synced[k]; r_dry[k] = s_dry[k]
#define ZERO1(k) s_held[k] = 0; s_oseq[k] = 0; s_ores[k] = 0; s_synced[k] = 0; s_dry[k] = 0
/* the connections break: the members reconnect, the subscribers resubscribe
 * (an unread PUBLISH is lost) */
#define DISC1(k) v_recon[k] = 1; resub[k] = 1; ppend[k] = 0

/* Redis: a snapshot (appendfsync: what is on disk) at any point, a restart
 * that comes back with it under a new run id (every write after it lost).
 * Stops at any point. */
active proctype redis()
{
	do
	:: atomic { chaos && nrs < NRESTART && dirty && !snapped -> snapped = 1;
		s_free = r_free; s_fenced = r_fenced; s_epoch = r_epoch; s_boot = r_boot;
		s_so = r_so; s_ver = r_ver; s_want = r_want; FOR_M(SNAP1); dirty = 0 }
	:: atomic { chaos && nrs < NRESTART -> nrs++;
#ifdef COVER
		if
		:: TOTAL - s_free < SUM(d_held) -> REACHED(EV_LOST_GRANT)
		:: else
		fi;
#endif
		r_free = s_free; r_fenced = s_fenced; r_epoch = s_epoch; r_boot = s_boot;
		r_so = s_so; r_ver = s_ver; r_want = s_want; FOR_M(LOAD1);
		rid++; dirty = 0; snapped = 0; FOR_M(DISC1);
		if
		:: nrs == NRESTART -> s_free = 0; s_fenced = 0; s_epoch = 0; s_boot = 0; s_so = 0;
			s_ver = 0; s_want = 0; FOR_M(ZERO1)
		:: else
		fi }
	:: atomic { chaos = 0; s_free = 0; s_fenced = 0; s_epoch = 0; s_boot = 0; s_so = 0;
		s_ver = 0; s_want = 0; FOR_M(ZERO1); break }
	od
}

/* A member's control plane: one thread, one call at a time. */
#define IDLE (rk[m] == 0 && (d_pk[m] == 0 || v_wait[m]))
#define NEED_REPORT (v_rep[m] == 0 || stock[m] == 0 && v_rep[m] == 2 || stock[m] > 0 && v_rep[m] == 1)

active [M] proctype member()
{
	byte m = _pid - 1;
	byte n, g;

end_loop:
	do
	/* kill -9 and restart: the LMDB stays, the rest is gone */
	:: atomic { chaos && ncrash < NCRASH -> ncrash++;
		rk[m] = 0; rv[m] = 0; v_fen[m] = 0; v_ep[m] = 0; v_wait[m] = 0; v_got0[m] = 0;
		v_rep[m] = 0; v_recon[m] = 1; lflag[m] = 0; lver[m] = 0; resub[m] = 1; ppend[m] = 0 }
	/* after a (re)connect: read the view (which fences first) */
	:: atomic { v_recon[m] && IDLE -> v_recon[m] = 0;
#ifndef NO_RECON_VIEW
		fence_check();
		if
		:: r_fenced -> v_fen[m] = 1; v_ep[m] = r_epoch
		:: else
		fi
#endif
	   }
	/* send (or resend, after a crash or once unfenced) the pending op */
	:: atomic { d_pk[m] == PK_LEASE && rk[m] == 0 -> sc_lease(m) }
	:: atomic { d_pk[m] == PK_GB && rk[m] == 0 && !v_wait[m] -> sc_gb(m) }
	/* the reply, in one LMDB transaction */
	:: atomic { rk[m] != 0 ->
		if
		:: d_pk[m] == PK_LEASE && rk[m] == RK_OK ->
			d_held[m] = d_held[m] + rv[m]; stock[m] = stock[m] + rv[m];
			v_got0[m] = (rv[m] == 0);
			if
			:: rv[m] > 0 -> v_rep[m] = 2 /* the grant cleared the dry report */
			:: else
			fi;
			d_pk[m] = 0; d_pu[m] = 0
		:: d_pk[m] == PK_LEASE && rk[m] == RK_FENCED ->
			v_fen[m] = 1; v_ep[m] = rv[m]; d_pk[m] = 0; d_pu[m] = 0;
			REACHED(EV_LEASE_CLOSED)
		:: d_pk[m] == PK_GB && rk[m] == RK_OK ->
			d_held[m] = d_held[m] - d_pu[m]; d_pk[m] = 0; d_pu[m] = 0
		:: d_pk[m] == PK_GB && rk[m] == RK_FENCED ->
			v_fen[m] = 1; v_ep[m] = rv[m]; v_wait[m] = 1; REACHED(EV_GB_PARKED)
		:: rk[m] == RK_HELD -> assert(false || l_P2_held)
		fi;
		rk[m] = 0; rv[m] = 0 }
	/* low water (1): lease; after a grant of 0, again once units are back
	 * (the periodic retry, without its no-op rounds) */
	:: atomic { IDLE && d_pk[m] == 0 && !v_fen[m] && nops[m] < NOPS && stock[m] == 0 &&
		    (!v_got0[m] || r_free > 0) ->
		nops[m]++; d_seq[m]++; d_pk[m] = PK_LEASE; d_pu[m] = WANT }
	/* give back (idle: its crowd is gone; or want set: a member got 0),
	 * any part: off local sale first, in the same transaction as the
	 * pending op */
	:: atomic { IDLE && d_pk[m] == 0 && !v_fen[m] && nops[m] < NOPS && stock[m] > 0 &&
		    (m != 0 && nb[m] >= NB || r_want) ->
		nops[m]++; d_seq[m]++; d_pk[m] = PK_GB; n = 1;
		do
		:: n < stock[m] -> n++
		:: break
		od;
		d_pu[m] = n; stock[m] = stock[m] - n; n = 0 }
	/* report the local stock: read it, then call dry */
	:: atomic { IDLE && NEED_REPORT -> n = stock[m] };
		atomic { sc_dry(m, n); n = 0 }
	/* fenced: sync what the LMDB holds (pending give-back included), after
	 * resending the pending op */
	:: atomic { IDLE && v_fen[m] &&
#ifndef SYNC_FIRST
		    (d_pk[m] == 0 || v_wait[m]) ->
#else
		    true ->
#endif
#ifdef GB_NOT_HELD
		g = (d_pk[m] == PK_GB -> d_held[m] - d_pu[m] : d_held[m]);
#else
		g = d_held[m];
#endif
		sc_sync(m, g); g = 0
	   }
	od
}

/* Each member's subscriber: reads the key on (re)connect, then applies
 * broadcasts with a higher version. */
active [M] proctype subscriber()
{
	byte m = _pid - 1 - M;
end_loop:
	do
	:: atomic { resub[m] ->
#ifdef SUB_VERSION
		if
		:: r_ver > lver[m] -> lflag[m] = r_so; lver[m] = r_ver
		:: else
		fi;
#else
		lflag[m] = r_so; lver[m] = r_ver;
#endif
		resub[m] = 0; ppend[m] = 0 }
	:: atomic { ppend[m] && !resub[m] ->
		if
		:: pver[m] > lver[m] -> lflag[m] = pso[m]; lver[m] = pver[m]
		:: else
		fi;
		ppend[m] = 0 }
	od
}

/* Each member's crowd: member 0's never ends, the others buy NB units. A
 * buy is refused while the dataplane's flag is up, and answers 503 busy when
 * the local stock is empty. */
active [M] proctype crowd()
{
	byte m = _pid - 1 - 2 * M;
end_loop:
	do
	:: atomic { (m == 0 || nb[m] < NB) && !lflag[m] && stock[m] > 0 ->
		stock[m]--; sold[m]++; nb[m] = (m == 0 -> 0 : nb[m] + 1) }
	od
}

/* Payment timeouts (the member's control plane): a sold unit back into its
 * seller's local stock; the local return lowers the dataplane's flag
 * (sk_stock_return()), and the member reports its local stock again. */
#define RET1(k) :: atomic { nret < NRET && OUT(k) > 0 -> nret++; ret[k]++; stock[k]++; lflag[k] = 0; \
				    v_rep[k] = 0 }
#if M == 2
#define FOR_RET RET1(0) RET1(1)
#else
#define FOR_RET RET1(0) RET1(1) RET1(2)
#endif
active proctype returns()
{
end_loop:
	do
	FOR_RET
	od
}

/*
 * Every step: P1 (no oversell: the units sold and not returned, plus those
 * on local sale, never exceed the total; a pending give-back is off sale,
 * and may already be in another member's hands) and each member's own
 * accounting (held = on sale + sold - returned + pending give-back).
 */
#define ACCT(k) (stock[k] + OUT(k) + PENDGB(k) == d_held[k])
#define CONSIST(k) (r_held[k] == d_held[k])
#define NOSTRAND(k) (stock[k] == 0)
#define FLAGOK(k) (lflag[k] == r_so)
#define FULLY(k) (nops[k] < NOPS)
never {
	do
	:: !(SUMOUT + SUM(stock) <= TOTAL || l_P1_every_step) -> break
	:: !(ALL_M(ACCT) || l_model_sanity) -> break
	:: else
	od
}

/*
 * Quiescence (timeout: no process can move; faults over, every crowd
 * waiting): P2 Redis agrees with the members; P3 no stranded sold-out, the
 * flag reached every dataplane; P4 everything is sold and declared sold
 * out (unless a member used up its ops).
 */
active proctype quiescent()
{
	timeout ->
	atomic {
		assert(r_boot != rid || r_fenced ||
		       (TOTAL == r_free + SUM(r_held) && ALL_M(CONSIST)) || l_P2_quiescent);
		assert((!r_so || r_free == 0 && ALL_M(NOSTRAND)) && ALL_M(FLAGOK) || l_P3_quiescent);
#ifndef NO_LIVENESS
		assert(!ALL_M(FULLY) || (r_boot == rid && !r_fenced && r_free == 0 &&
					 ALL_M(NOSTRAND) && r_so) || l_P4_quiescent);
#endif
#ifdef COVER
		if
		:: g_rebuilt && r_so && SUMOUT == TOTAL -> REACHED(EV_QUIET_DONE)
		:: else
		fi
#endif
	}
}
