/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPIN model of the stock protocol of stock/sk_stock.c:
 * sk_stock_take (fast path, nothing_to_gather, gather, grab, refill_batch, everything_empty,
 * declare_sold_out), clear_sold_out, sk_stock_return, sk_stock_add,
 * sk_stock_untake, and the hot-path sold-out check of sk_buy().
 *
 * One Promela step = one atomic operation of the C code: a load, a store, a
 * CAS (success or failure), a fetch-add. Purely local computation is folded
 * into the step next to it (atomic { ... } holds exactly one shared access).
 * Every atomic is sequentially consistent, as in the C code.
 *
 * docs/stock-model.md says what is modelled, what is abstracted, the
 * properties and the mutants; tests/model/run.sh runs every configuration.
 *
 * Parameters (spin -DNAME=value):
 *   NC       cores (buckets), 2 or 3                          default 2
 *   TOTAL    units at preheat                                 default 2
 *   NMULTI   2-unit buys by core 0 (before its 1-unit buys)   default 1
 *   NSINGLE0 1-unit buys by core 0                            default 1
 *   NSINGLE  buys by each other core                          default 1
 *   QTY1     units of each of those buys                      default 1
 *   NRET     units the control plane returns (sk_stock_return) default 1
 *   NADD     units the control plane restocks (sk_stock_add)   default 0
 *   ROUNDS   slow-path rounds (C: SK_STOCK_ROUNDS = 8)         default 2
 *   TRIES    CAS tries per counter (C: SK_STOCK_CAS_TRIES = 64) default 2
 * Options:
 *   UNTAKE       a successful buy may be rolled back (sk_stock_untake)
 *   WEAK         atomic_compare_exchange_weak may fail spuriously
 *   EXACT_BATCH  refill_batch() exactly as written; default: any batch in
 *                [min(need, pool), pool], a superset of what it returns
 *   NO_LIVENESS  do not check P4
 *   MONITOR_PROC check the every-step properties with a monitor process
 *                instead of a never claim (twice the states, but pan then
 *                also reports deadlocks - invalid end states)
 *   NO_ANSWER_CHECK  do not check P5
 * Stronger properties (the doc, "Findings"; the C code fails the ones
 * marked *; LINEAR_SOLDOUT only with OLD_ORDER):
 *   LITERAL_SOLD*   sold - returned <= total + added on the C counters at
 *                   every step
 *   LINEAR_SOLDOUT* a declared sold-out answer,
 *   LINEAR_SHORT    a SHORT answer,
 *   LINEAR_REFUSED* a hot-path refusal is linearizable: at some instant of
 *                   the call the stock was at zero (below the quantity, for
 *                   SHORT), counting every concurrent buy that succeeds as
 *                   already done - a prophecy: an attempt guesses at its
 *                   start whether it will succeed, a wrong guess is pruned
 *                   at its end, the verdict is asserted at the end
 *   OLD_ORDER       the code before finding 1 was fixed: gather() cleared
 *                   the flag after fsub(&transit), and declare_sold_out()
 *                   answered sold out without a last load of the flag (the
 *                   C code now clears before leaving transit and answers
 *                   sold out only if the flag still reads 1)
 * Mutants (each must produce a counterexample):
 *   NO_TRANSIT       everything_empty() does not read transit
 *   NO_RESCAN        declare_sold_out() does not scan again after the store
 *   NO_CREDIT_CLEAR  gather() does not clear the flag after a credit
 *   NO_RETURN_CLEAR  sk_stock_return() does not clear the flag
 *   TRANSIT_FIRST    everything_empty() reads transit before pool, buckets
 */

#ifndef NC
#define NC 2
#endif
#ifndef TOTAL
#define TOTAL 2
#endif
#ifndef NMULTI
#define NMULTI 1
#endif
#ifndef NSINGLE0
#define NSINGLE0 1
#endif
#ifndef NSINGLE
#define NSINGLE 1
#endif
#ifndef QTY1
#define QTY1 1
#endif
#ifndef NRET
#define NRET 1
#endif
#ifndef NADD
#define NADD 0
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef TRIES
#define TRIES 2
#endif

/* No unit counter can exceed every unit there ever is; a byte that wrapped
 * below zero reads >= 128 and fails the range checks. */
#define MAXU (TOTAL + NADD + NRET)

/* Result of a buy attempt (last[c]). */
#define R_NONE 0
#define R_OK 1
#define R_REFUSED 2 /* sk_buy(): sk_stock_is_sold_out() read 1 */
#define R_SOLDOUT 3 /* sk_stock_take(): declare_sold_out() returned true */
#define R_SHORT 4
#define R_BUSY 5
#define R_UNTAKEN 6 /* took the units, then gave them back (sk_stock_untake) */

/* ---- struct sk_item ---- */
byte pool = TOTAL;
byte bucket[NC]; /* bucket[c].avail */
byte transit;
bit sold_out;	/* 0 at preheat: TOTAL > 0 */
byte sold;	/* sum of bucket[c].sold; each is owner-written (one step) */
byte returned;
byte added;

/* ---- ghosts: written next to the protocol's steps, never read by it ---- */
byte hand[NC]; /* units core c holds privately inside gather() */
byte pend[NC]; /* units core c took for a successful buy, before sold_add() */
byte retg;     /* units returned, counted at the pool add */
byte addg;     /* units restocked, counted at the pool add */
byte untg;     /* units untaken to a bucket, before sold_add(-q) */
byte busy;     /* processes inside an operation */
byte ndone;    /* processes that have finished */
byte last[NC]; /* result of each core's latest buy attempt */
bit late[NC];  /* that attempt started after the control plane finished */
bit ret_done;  /* the control plane has finished */
/*
 * Names for the assertions: always 0 and outside the state vector (hidden);
 * "assert(X || l_NAME)" makes pan and spin print the property's name with
 * the failed expression, which run.sh reports.
 */
hidden byte l_P1_every_step, l_P3_every_step, l_P1_quiescent, l_P2_quiescent;
hidden byte l_P1_end, l_P2_end, l_P4_end, l_P5_answer, l_model_sanity;
hidden byte l_LINEAR_SOLDOUT, l_LINEAR_SHORT, l_LINEAR_REFUSED;
#if defined(LINEAR_SOLDOUT) || defined(LINEAR_SHORT) || defined(LINEAR_REFUSED)
#define LINEAR
#ifdef UNTAKE
#error "LINEAR_* checks do not support UNTAKE"
#endif
bit inwin[NC]; /* core c is inside a buy attempt */
bit wok[NC];   /* ... which it guessed will succeed */
byte qg[NC];   /* ... of qg[c] units */
byte tk[NC];   /* ... and has taken tk[c] units out of pool and buckets */
bit zero[NC];  /* EFF was < 1 at some instant of the attempt */
bit lowq[NC];  /* EFF was < qg[c] at some instant of the attempt */
byte rin;      /* units of returns and restocks in progress */
bit bad_soldout, bad_short, bad_refused;
#endif

#if NC == 2
#define SUMB (bucket[0] + bucket[1])
#define SUMH (hand[0] + hand[1])
#define SUMP (pend[0] + pend[1])
#define BOUNDED(a) (a[0] <= MAXU && a[1] <= MAXU)
#define REFUSED(c) ((last[c] == R_REFUSED || last[c] == R_SOLDOUT) && late[c])
#define ALL_REFUSED (REFUSED(0) && REFUSED(1))
#elif NC == 3
#define SUMB (bucket[0] + bucket[1] + bucket[2])
#define SUMH (hand[0] + hand[1] + hand[2])
#define SUMP (pend[0] + pend[1] + pend[2])
#define BOUNDED(a) (a[0] <= MAXU && a[1] <= MAXU && a[2] <= MAXU)
#define REFUSED(c) ((last[c] == R_REFUSED || last[c] == R_SOLDOUT) && late[c])
#define ALL_REFUSED (REFUSED(0) && REFUSED(1) && REFUSED(2))
#else
#error "NC must be 2 or 3"
#endif

/* Units not sold: in the pool, in a bucket, or in a core's hands. */
#define STOCK (pool + SUMB + SUMH)

/* P1, every step, with the ghosts: every unit is in exactly one place. */
#define CONSERVED_GHOST (TOTAL + addg + retg + untg == STOCK + SUMP + sold)
/* P1, quiescent points, C counters only: the invariant of sk_stock.h. */
#define CONSERVED (TOTAL + added + returned == pool + SUMB + sold)
/* P2, quiescent points and the end: no unit is stranded behind the flag. */
#define NOT_STRANDED (!sold_out || (pool == 0 && SUMB == 0))
/* P3, every step: units sold and not given back never exceed the stock. */
#define NO_OVERSELL (sold + SUMP <= TOTAL + addg + retg + untg)
/* Ranges: no counter went below zero (wrapped) or past every unit. */
#define IN_RANGE (pool <= MAXU && transit <= NC && BOUNDED(bucket) && BOUNDED(hand) && \
		  BOUNDED(pend) && sold <= 2 * MAXU && untg <= MAXU && returned <= NRET && \
		  added <= NADD)
#ifdef LITERAL_SOLD
#define LITERAL (sold <= TOTAL + added + returned)
#else
#define LITERAL true
#endif

/*
 * LINEAR_* ghosts. EFF: the units an answer may count on - pool, buckets,
 * the hands of attempts that will fail - minus what the attempts in
 * progress that will succeed still have to take, minus returns and
 * restocks not yet finished (all of these may be ordered either side of
 * the answer). A take or credit by a succeeding attempt leaves EFF as it
 * is, so EFF only falls when such an attempt starts (ZSTART).
 */
#ifdef LINEAR
#define HANDF(c) (wok[c] -> 0 : hand[c])
#define OWE(c) (inwin[c] && wok[c] -> qg[c] - tk[c] : 0)
#if NC == 2
#define EFF (pool + SUMB + HANDF(0) + HANDF(1) - OWE(0) - OWE(1) - rin)
#define ZALL(x) x(0); x(1)
#else
#define EFF (pool + SUMB + HANDF(0) + HANDF(1) + HANDF(2) - OWE(0) - OWE(1) - OWE(2) - rin)
#define ZALL(x) x(0); x(1); x(2)
#endif
#define ZONE(d) zero[d] = (zero[d] || inwin[d] && EFF < 1); \
		lowq[d] = (lowq[d] || inwin[d] && EFF < qg[d])
#define ZSTART if :: wok[c] = 1 :: wok[c] = 0 fi; \
	       inwin[c] = 1; qg[c] = q; tk[c] = 0; ZALL(ZONE);
#define ZGUARD (wok[c] == (res == R_OK));
#define ZEND inwin[c] = 0; wok[c] = 0; qg[c] = 0; zero[c] = 0; lowq[c] = 0;
#define TK(x) tk[c] = tk[c] + (x);
#define TKM(x) tk[c] = tk[c] - (x);
#define RIN rin++;
#define RIN_END rin--;
#define ZANSWER bad_soldout = (bad_soldout || !zero[c]);
#else
#define ZSTART
#define ZGUARD
#define ZEND
#define TK(x)
#define TKM(x)
#define RIN
#define RIN_END
#define ZANSWER
#endif


/*
 * Coverage: with -DCOVER=n, reaching event n is an assertion failure, so
 * run.sh can show that every interesting behaviour is reachable (the real
 * model's "0 errors" is not vacuous). Without COVER the marks are empty.
 */
#ifdef COVER
#define REACHED(n) assert(COVER != n);
#else
#define REACHED(n)
#endif
#define EV_FAST_OK 1	  /* fast path CAS took from the own bucket */
#define EV_FAST_LOST 2	  /* fast path CAS failed */
#define EV_GRAB_LOST 3	  /* a grab CAS failed and reloaded */
#define EV_POOL_LOST 4	  /* a pool CAS failed */
#define EV_LEFTOVER 5	  /* a refill's leftover credited to the own bucket */
#define EV_STEAL 6	  /* units stolen from another core's bucket */
#define EV_GIVEBACK 7	  /* a short gather gave its units back */
#define EV_SHORT 8	  /* a buy answered SHORT */
#define EV_HELD 9	  /* a scan read transit != 0 after empty pool/buckets */
#define EV_SOLDOUT 10	  /* a buy answered SOLD_OUT (declared) */
#define EV_RESCAN_CLEAR 11 /* the re-scan found units and lowered the flag */
#define EV_CREDIT_CLEAR 12 /* a credit lowered the flag */
#define EV_RETURN_CLEAR 13 /* a return lowered the flag */
#define EV_REFUSED 14	  /* the hot path refused (flag set) */
#define EV_BUSY 15	  /* a buy answered BUSY */
#define EV_RETURN 16	  /* a unit was returned */
#define EV_STRANDED_FLAG 17 /* a declaration stood (flag 1) at the end */
#define EV_COUNT 17

/* ---- building blocks ---- */

/* clear_sold_out(): a load, then - if it read 1 - a store. ev: coverage. */
inline clear_sold_out(ev)
{
	if
	:: sold_out -> atomic { sold_out = 0; REACHED(ev) }
	:: else
	fi
}

/*
 * P5, checked at the instant a sold-out answer is decided (the scan's last
 * load): no core holds units privately - what the transit counter is for.
 */
#ifdef NO_ANSWER_CHECK
#define ANSWER_OK true
#else
#define ANSWER_OK (SUMH == 0)
#endif
/* held: P5 failed at the deciding load; asserted when the answer is given */
#define P5CHECK assert(!held || l_P5_answer); held = 0;

/*
 * everything_empty(): one load each of pool, bucket[0..NC-1], transit, in
 * that order, stopping at the first non-zero. ans: this scan decides a
 * SOLD_OUT answer.
 */
inline everything_empty(ans)
{
#ifdef TRANSIT_FIRST
	e = (transit == 0);
	if
	:: e -> e = (pool == 0)
	:: else
	fi;
#else
	e = (pool == 0);
#endif
	do
	:: atomic { e && i < NC -> e = (bucket[i] == 0); i++;
#if defined(NO_TRANSIT) || defined(TRANSIT_FIRST)
		if
		:: ans && e && i == NC -> held = !ANSWER_OK
		:: else
		fi
#endif
	   }
	:: atomic { else -> i = 0; break }
	od;
#if !defined(NO_TRANSIT) && !defined(TRANSIT_FIRST)
	if
	:: atomic { e -> e = (transit == 0);
#ifdef COVER
		    if
		    :: !e -> REACHED(EV_HELD)
		    :: else
		    fi;
#endif
		    if
		    :: ans && e -> held = !ANSWER_OK
		    :: else
		    fi }
	:: else
	fi
#endif
}

/*
 * grab(&bucket[idx], want) after its first load (v = bucket[idx]): the CAS
 * loop; a failed CAS reloads v, as atomic_compare_exchange does. What is
 * taken goes to the caller's hand.
 */
inline grab_cas(idx, want)
{
	tries = 0;
	do
	:: atomic { v != 0 && tries < TRIES && bucket[idx] == v ->
		t = (v < want -> v : want);
		bucket[idx] = v - t; hand[c] = hand[c] + t; got = got + t; TK(t)
#ifdef COVER
		if
		:: idx != c -> REACHED(EV_STEAL)
		:: else
		fi;
#endif
		t = 0; v = 0; tries = 0; break }
	:: atomic { v != 0 && tries < TRIES && bucket[idx] != v -> v = bucket[idx]; tries++;
		REACHED(EV_GRAB_LOST) }
#ifdef WEAK
	:: atomic { v != 0 && tries < TRIES && bucket[idx] == v -> tries++ }
#endif
	:: atomic { v == 0 || tries >= TRIES -> v = 0; tries = 0; break }
	od
}

/*
 * gather(), after its first step (fadd(&transit, 1)): own bucket, pool,
 * other buckets, give back if short, fsub(&transit, 1), clear if credited.
 * got: units gathered (q on success).
 */
inline gather_rest()
{
	/* grab(&mine->avail, qty) */
	v = bucket[c];
	grab_cas(c, q);

	/* the pool: load, batch, CAS; the leftover goes to the own bucket */
	k = 0;
	do
	:: atomic { got < q && k < TRIES -> p = pool; k++ }
		if
		:: atomic { p == 0 -> p = 0; break }
		:: atomic { p != 0 ->
#ifdef EXACT_BATCH
			b = p / (2 * NC);
			b = (b < q - got -> q - got : b);
			b = (b < p -> b : p);
#else
			/* any batch from min(need, p) up to p */
			b = (q - got < p -> q - got : p);
			do
			:: b < p -> b++
			:: break
			od;
#endif
			if
			:: pool == p ->	/* CAS succeeds */
				pool = p - b; hand[c] = hand[c] + b; TK(b)
				u = (b < q - got -> b : q - got);
				got = got + u; b = b - u
			:: pool != p -> b = 0; REACHED(EV_POOL_LOST)
#ifdef WEAK
			:: pool == p -> b = 0
#endif
			fi;
			p = 0; u = 0 }
			/* b: the leftover of this refill */
			if
			:: atomic { b > 0 -> bucket[c] = bucket[c] + b; hand[c] = hand[c] - b; TKM(b)
				    b = 0; credited = 1; REACHED(EV_LEFTOVER) }
			:: else
			fi
		fi
	:: atomic { else -> k = 0; break }
	od;

	/* steal from the other buckets, one pass */
	k = 1;
	do
	:: atomic { got < q && k < NC -> v = bucket[(c + k) % NC] }
		grab_cas((c + k) % NC, q - got);
		k++
	:: atomic { else -> k = 0; break }
	od;

	/* short: what was gathered goes back to the own bucket */
	if
	:: atomic { got < q && got > 0 -> bucket[c] = bucket[c] + got; hand[c] = hand[c] - got; TKM(got)
		    credited = 1; REACHED(EV_GIVEBACK) }
	:: else
	fi;

#if !defined(OLD_ORDER) && !defined(NO_CREDIT_CLEAR)
	/* the credit clears the flag before leaving transit (sk_stock.c) */
	if
	:: atomic { credited -> credited = 0 }; clear_sold_out(EV_CREDIT_CLEAR)
	:: else
	fi;
#endif
	/* fsub(&transit, 1); what is still in hand now is the buy's (got == q) */
	atomic { assert(hand[c] == 0 || hand[c] == q || l_model_sanity);
		 transit--; pend[c] = hand[c]; hand[c] = 0 };
#if !defined(NO_CREDIT_CLEAR) && defined(OLD_ORDER)
	if
	:: atomic { credited -> credited = 0 }; clear_sold_out(EV_CREDIT_CLEAR)
	:: else
	fi;
#endif
	credited = 0
}

/* declare_sold_out(); res becomes R_SOLDOUT if the item stays sold out. */
inline declare_sold_out()
{
#ifdef NO_RESCAN
	everything_empty(1);
	if
	:: atomic { e -> e = 0; sold_out = 1; res = R_SOLDOUT; P5CHECK ZANSWER REACHED(EV_SOLDOUT) }
	:: else
	fi
#else
	everything_empty(0);
	if
	:: atomic { e -> e = 0; sold_out = 1 }
#ifndef OLD_ORDER
		/* sold out only if the flag survived the re-scan (sk_stock.c) */
		everything_empty(1);
		if
		:: atomic { e && sold_out -> e = 0; res = R_SOLDOUT; P5CHECK ZANSWER REACHED(EV_SOLDOUT) }
		:: atomic { e && !sold_out -> e = 0; held = 0 }
		:: else -> atomic { sold_out = 0; REACHED(EV_RESCAN_CLEAR) }
		fi
#else
		everything_empty(1);
		if
		:: atomic { e -> e = 0; res = R_SOLDOUT; P5CHECK ZANSWER REACHED(EV_SOLDOUT) }
		:: else -> atomic { sold_out = 0; REACHED(EV_RESCAN_CLEAR) }
		fi
#endif
	:: else
	fi
#endif
}

/* sk_buy()'s hot-path check, then sk_stock_take(c, q). */
inline buy()
{
	atomic { busy++; late[c] = ret_done; e = sold_out; ZSTART };
	if
	:: atomic { e -> e = 0; res = R_REFUSED; REACHED(EV_REFUSED)
#ifdef LINEAR_REFUSED
		    bad_refused = (bad_refused || !zero[c])
#endif
	   }
	:: atomic { else -> v = bucket[c] }	/* fast path: ld(&mine->avail) */
		if
		:: atomic { v >= q && bucket[c] == v ->	/* CAS succeeds */
			bucket[c] = v - q; pend[c] = q; res = R_OK; v = 0; TK(q) REACHED(EV_FAST_OK) }
		:: atomic { v >= q && bucket[c] != v -> v = 0; REACHED(EV_FAST_LOST) }
#ifdef WEAK
		:: atomic { v >= q && bucket[c] == v -> v = 0 }
#endif
		:: atomic { v < q -> v = 0 }
		fi;
		/* slow path: bounded rounds */
		do
		:: atomic { res != R_NONE -> round = 0; break }
		:: atomic { res == R_NONE && round >= ROUNDS -> res = R_BUSY; round = 0; REACHED(EV_BUSY) break }
		:: atomic { res == R_NONE && round < ROUNDS -> round++; e = (pool == 0) }
			/* nothing_to_gather(): the buckets, one load each */
			do
			:: atomic { e && i < NC -> e = (bucket[i] == 0); i++ }
			:: atomic { else -> i = 0; break }
			od;
			if
			:: atomic { e -> e = 0 }	/* empty-handed: stay out of transit */
				declare_sold_out()
			:: atomic { else -> transit++ }
			gather_rest();
			if
			:: atomic { got == q -> got = 0; res = R_OK }
			:: atomic { got > 0 && got < q -> got = 0; r = pool }
				/* sk_stock_remaining(it) < qty */
				do
				:: atomic { i < NC -> r = r + bucket[i]; i++ }
				:: atomic { else -> i = 0; res = (r < q -> R_SHORT : R_NONE); r = 0;
#ifdef COVER
					    if
					    :: res == R_SHORT -> REACHED(EV_SHORT)
					    :: else
					    fi;
#endif
#ifdef LINEAR_SHORT
					    bad_short = (bad_short || res == R_SHORT && !lowq[c]);
#endif
					    break }
				od
			:: got == 0 -> declare_sold_out()
			fi
			fi
		od;
		if
		:: res == R_OK ->
			atomic { sold = sold + q; pend[c] = 0 };	/* sold_add() */
#ifdef UNTAKE
			/* a later step of the buy failed: sk_stock_untake() */
			if
			:: atomic { bucket[c] = bucket[c] + q; untg = untg + q };
				atomic { sold = sold - q; untg = untg - q };
				clear_sold_out(0);
				res = R_UNTAKEN
			:: skip
			fi
#endif
		:: else
		fi
	fi;
	atomic { ZGUARD last[c] = res; res = R_NONE; busy--; ZEND }
}

active [NC] proctype core()
{
	byte c = _pid;
	byte q, n, v, t, p, b, u, got, i, k, round, r, res, tries;
	bit credited, e, held;

	do
	:: atomic { c == 0 && n < NMULTI -> q = 2; n++ }; buy()
	:: atomic { c == 0 && n >= NMULTI && n < NMULTI + NSINGLE0 -> q = 1; n++ }; buy()
	:: atomic { c != 0 && n < NSINGLE -> q = QTY1; n++ }; buy()
	:: atomic { else -> q = 0; n = 0; ndone++; break }
	od
}

/*
 * The control plane: returns sold units (sk_stock_return: returned, then
 * pool, then clear the flag) and restocks (sk_stock_add: added, then
 * pool, then clear). It may stop at any point.
 */
active proctype control()
{
	byte nr, na;

	do
	:: atomic { nr < NRET && sold > retg + untg -> busy++; returned++; nr++ }
		atomic { pool++; retg++; RIN; REACHED(EV_RETURN) }
#ifndef NO_RETURN_CLEAR
		clear_sold_out(EV_RETURN_CLEAR);
#endif
		atomic { RIN_END busy-- }
	:: atomic { na < NADD -> busy++; added++; na++ }
		atomic { pool++; addg++; RIN };
		clear_sold_out(0);
		atomic { RIN_END busy-- }
	:: atomic { true -> nr = 0; na = 0; ret_done = 1; ndone++; break }
	od
}

/*
 * Every reachable state: P1 (with the ghosts), P3, the ranges; and at
 * quiescent points (no operation in progress) P1 on the C counters and P2.
 */
#ifdef MONITOR_PROC
/* As a process: keeps pan's invalid-end-state (deadlock) check, doubles the
 * states. */
active proctype monitor()
{
	atomic {
		assert(CONSERVED_GHOST && IN_RANGE || l_P1_every_step);
		assert(NO_OVERSELL && LITERAL || l_P3_every_step);
		assert(busy > 0 || CONSERVED && transit == 0 || l_P1_quiescent);
		assert(busy > 0 || NOT_STRANDED || l_P2_quiescent)
	}
}
#else
/* As a never claim, [] (all of them): checked after every step. */
never {
	do
	:: !(CONSERVED_GHOST && IN_RANGE || l_P1_every_step) -> break
	:: !(NO_OVERSELL && LITERAL || l_P3_every_step) -> break
	:: !(busy > 0 || CONSERVED && transit == 0 || l_P1_quiescent) -> break
	:: !(busy > 0 || NOT_STRANDED || l_P2_quiescent) -> break
	:: else
	od
}
#endif

/*
 * At the end: P1, P2 and P4 (liveness-lite). P4: if every core was refused
 * (flag, or declared sold out) on its last attempt, and that attempt began
 * after the control plane had finished, no unit is left unsold.
 */
active proctype final()
{
	ndone == NC + 1;
	atomic {
		assert(CONSERVED && transit == 0 && SUMH == 0 && SUMP == 0 || l_P1_end);
		assert(NOT_STRANDED || l_P2_end);
#ifndef NO_LIVENESS
		assert(!ALL_REFUSED || pool == 0 && SUMB == 0 || l_P4_end);
#endif
#ifdef LINEAR_SOLDOUT
		assert(!bad_soldout || l_LINEAR_SOLDOUT);
#endif
#ifdef LINEAR_SHORT
		assert(!bad_short || l_LINEAR_SHORT);
#endif
#ifdef LINEAR_REFUSED
		assert(!bad_refused || l_LINEAR_REFUSED);
#endif
#ifdef COVER
		if
		:: sold_out -> REACHED(EV_STRANDED_FLAG)
		:: else
		fi
#endif
	}
}
