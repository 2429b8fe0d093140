#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Model-check the stock protocol (tests/model/stock.pml) and the cluster
# protocol (tests/model/cluster.pml, docs/cluster-model.md) with SPIN.
#
#   tests/model/run.sh            real model, mutants, coverage, findings
#   tests/model/run.sh --model stock|cluster   only that model's checks
#   tests/model/run.sh --deep     also the larger configurations (minutes)
#   tests/model/run.sh --trail N  re-run check N and print its counterexample
#                                 as the sequence of shared-memory steps
#   tests/model/run.sh --list     list the checks
#
# Kinds of check:
#   real     the protocol as in sk_stock.c: must finish with 0 errors
#   mutant   the protocol with one guard removed: must report >= 1 error
#   cover    a behaviour the real model must be able to reach (>= 1 "error")
#   finding  a stronger property (some the code does not have), an
#            experiment, or a guard shown not to be needed for P2 - see
#            docs/stock-model.md, "Findings"; printed for information only
#
# One line per check; exit status 1 if a real check has an error (or did not
# finish), or a mutant or coverage check finds nothing; 77 if spin is not
# installed. Generated files live in a temporary directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=$here/stock.pml
deep=0
trail=
list=0
only=

while (($# > 0)); do
	case $1 in
	--deep) deep=1 ;;
	--trail)
		trail=${2:?--trail needs a check name}
		shift
		;;
	--list) list=1 ;;
	--model)
		only=${2:?--model needs stock or cluster}
		shift
		;;
	-h | --help)
		sed -n '3,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"
		exit 0
		;;
	*)
		echo "run.sh: unknown argument: $1" >&2
		exit 2
		;;
	esac
	shift
done

# ---- the checks: kind name options spin-defines... ----
# options: "-" or a comma-separated list of ./pan options (-w25: a larger
# hash table), O2 (compile the verifier with -O2: worth it only for long
# runs, as pan.c takes seconds to optimise) and COLLAPSE (compile with
# -DCOLLAPSE: state compression, less memory, slower).
checks=()
cur=stock
add() { if [[ -z $only || $only == "$cur" ]]; then checks+=("$cur $*"); fi; }

# The real protocol. "base": 2 cores, 2 units, core 0 buys 2 then 1, core 1
# buys 1, one return; with a monitor process so deadlocks are reported too.
add real base - -DMONITOR_PROC
add real multi - -DNMULTI=2 -DNSINGLE=2
add real three-cores -w25,O2 -DNC=3 -DNSINGLE0=0
add real untake-weak-restock - -DUNTAKE -DWEAK -DNADD=1
add real exact-batch - -DEXACT_BATCH -DTOTAL=4
add real last-unit - -DTOTAL=1 -DNMULTI=2 -DNSINGLE0=0
# ... and its sold-out answers are linearizable (finding 1, fixed).
add real linear-soldout - -DNMULTI=2 -DLINEAR_SOLDOUT
# ... and sold - returned never reads above the stock (finding 3, fixed).
add real literal-sold - -DLITERAL_SOLD
add real linear-soldout-last-unit - -DTOTAL=1 -DNMULTI=2 -DNSINGLE0=0 -DLINEAR_SOLDOUT
if ((deep)); then
	add real three-cores-weak -w26,O2,COLLAPSE -DNC=3 -DNSINGLE0=0 -DWEAK
	add real multi-untake-restock -w26,O2,COLLAPSE -DNMULTI=2 -DNSINGLE=2 -DUNTAKE -DNADD=1
fi

# Mutants: each removes one guard of the protocol.
for m in NO_TRANSIT NO_RESCAN NO_CREDIT_CLEAR NO_RETURN_CLEAR TRANSIT_FIRST; do
	add mutant "$m" - -DNMULTI=2 "-D$m"
	if ((deep)); then
		add mutant "$m-3" -w25,O2 -DNC=3 -DNSINGLE0=0 "-D$m"
	fi
done

# Coverage: every event marked in stock.pml (EV_*) is reachable.
events=$(sed -n 's/^#define EV_COUNT \([0-9]*\).*/\1/p' "$model")
for ((n = 1; n <= events; n++)); do
	ev=$(sed -n "s/^#define \(EV_[A-Z_]*\)[[:space:]]*${n}[[:space:]].*/\1/p" "$model")
	add cover "$ev" - -DNMULTI=2 "-DCOVER=$n"
done

# Findings (docs/stock-model.md): stronger properties - the C code fails
# LINEAR_REFUSED; the order before the fix of finding 1
# (OLD_ORDER) fails LINEAR_SOLDOUT -, and the two guards that stranding does
# not need (P5 off).
add finding LINEAR_SOLDOUT-old-order - -DTOTAL=1 -DNMULTI=2 -DNSINGLE0=0 -DLINEAR_SOLDOUT -DOLD_ORDER
add finding LINEAR_REFUSED - -DTOTAL=1 -DNMULTI=2 -DNSINGLE0=0 -DNRET=0 -DROUNDS=4 -DLINEAR_REFUSED
add finding LINEAR_SHORT - -DNMULTI=2 -DLINEAR_SHORT
add finding NO_TRANSIT-P2 - -DNMULTI=2 -DNSINGLE=2 -DNO_TRANSIT -DNO_ANSWER_CHECK
add finding TRANSIT_FIRST-P2 O2 -DNMULTI=2 -DNSINGLE=2 -DTRANSIT_FIRST -DNO_ANSWER_CHECK
if ((deep)); then
	add finding LINEAR_SOLDOUT-old-order-3 -w25,O2 -DNC=3 -DNSINGLE0=0 -DLINEAR_SOLDOUT -DOLD_ORDER
	add real linear-soldout-3 -w25,O2,COLLAPSE -DNC=3 -DNSINGLE0=0 -DLINEAR_SOLDOUT
	add finding NO_TRANSIT-P2-3 -w26,O2,COLLAPSE -DNC=3 -DNSINGLE0=0 -DNO_TRANSIT -DNO_ANSWER_CHECK
	add finding TRANSIT_FIRST-P2-3 -w26,O2,COLLAPSE -DNC=3 -DNSINGLE0=0 -DTRANSIT_FIRST -DNO_ANSWER_CHECK
fi

# ---- the cluster model (cluster.pml, docs/cluster-model.md) ----
cur=cluster
model=$here/cluster.pml
# base: 2 members, 2 units, returns, sold out and reopen, want -> give back
add real c-base - -DNCRASH=0 -DNRESTART=0
# a member's kill -9 and restart (replay of its pending op)
add real c-crash - -DNCRASH=1 -DNRESTART=0
# a Redis restart that loses writes: fence, resend, sync, rebuild
add real c-restart - -DNCRASH=0 -DNRESTART=1 -DNRET=0 -DNB=0 -DNOPS=2
add real c-start-fenced - -DNCRASH=0 -DNRESTART=0 -DSTART_FENCED
if ((deep)); then
	add real c-restart-1unit -w25,COLLAPSE -DNCRASH=0 -DNRESTART=1 -DTOTAL=1 -DNRET=0 -DNB=0 -DNOPS=2
	add real c-restart-returns -w26,COLLAPSE -DNCRASH=0 -DNRESTART=1 -DNRET=1 -DNB=0 -DNOPS=2
	add real c-three -w26,COLLAPSE -DM=3 -DNCRASH=0 -DNRESTART=0 -DNOPS=2
fi
c_restart=(-DNCRASH=0 -DNRESTART=1 -DNRET=0 -DNB=0 -DNOPS=2)
for m in NO_FENCE GB_NOT_HELD NO_RECOMPUTE; do
	add mutant "$m" - "${c_restart[@]}" "-D$m"
done
add mutant NO_REPLAY - -DNCRASH=1 -DNRESTART=0 -DNO_REPLAY
add mutant DRY_SELF - -DNCRASH=0 -DNRESTART=0 -DDRY_SELF
add mutant NO_GRANT_UNDRY - -DNCRASH=0 -DNRESTART=0 -DNO_GRANT_UNDRY
add mutant NO_REPLY_FLAG - -DNCRASH=0 -DNRESTART=0 -DNO_REPLY_FLAG
# Coverage: events 1, 4, 5 need a crash or a restart; see cluster.pml EV_*.
events=$(sed -n 's/^#define EV_COUNT \([0-9]*\).*/\1/p' "$model")
for ((n = 1; n <= events; n++)); do
	ev=$(sed -n "s/^#define \(EV_[A-Z_]*\)[[:space:]]*${n}[[:space:]].*/\1/p" "$model")
	case $ev in
	EV_REPLAY) add cover "c-$ev" - -DNCRASH=1 -DNRESTART=0 "-DCOVER=$n" ;;
	EV_RETURN_REOPEN | EV_WANT_GB | EV_WANT_SERVED) add cover "c-$ev" - -DNCRASH=0 -DNRESTART=0 "-DCOVER=$n" ;;
	*) add cover "c-$ev" - "${c_restart[@]}" "-DCOVER=$n" ;;
	esac
done
# Findings (docs/cluster-model.md): guards the small configurations do not
# show to be needed, and the doc's first version.
for m in DOC_V1 NO_FENCE_DRY_CLEAR NO_REREPORT SYNC_FIRST SUB_VERSION NO_RECON_VIEW; do
	add finding "$m" - "${c_restart[@]}" "-D$m"
done

if ((list)); then
	printf '%s\n' "${checks[@]}"
	exit 0
fi

if ! command -v spin >/dev/null 2>&1; then
	echo "run.sh: spin is not installed (Debian: apt-get install spin); skipping" >&2
	exit 77
fi
cc=${CC:-}
if [[ -z $cc ]]; then
	for c in gcc cc clang; do
		if command -v "$c" >/dev/null 2>&1; then
			cc=$c
			break
		fi
	done
fi
if [[ -z $cc ]]; then
	echo "run.sh: no C compiler found for the SPIN verifier" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/model.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# label DIR: the name of the property that failed - the l_NAME term of the
# assertion (pan prints it) or of the never claim's guard (from the replay)
label() {
	local dir=$1 l
	l=$(grep -m 1 'assertion violated' "$dir/pan.out" | grep -o 'l_[A-Za-z0-9_]*' | head -n 1 || true)
	if [[ -z $l ]] && grep -q 'claim' "$dir/pan.out"; then
		(cd "$dir" && spin -t "${defs[@]}" "$mdl.pml" >trail.out 2>&1) || true
		l=$(grep 'Never claim moves to line' "$dir/trail.out" | grep -o 'l_[A-Za-z0-9_]*' |
			tail -n 1 || true)
	fi
	echo "${l#l_}"
}

# condense DIR NC: the counterexample as shared-memory steps, one a line
condense() {
	local dir=$1 nc=$2
	(cd "$dir" && spin -t -p -g -l "${defs[@]}" stock.pml 2>&1) | awk -v nc="$nc" '
	function flush(   out, k, sep) {
		if (key == "" || !shared) { key = ""; return }
		out = ""
		for (k = 1; k <= ns; k++) out = out (k > 1 ? "; " : "") st[k]
		sep = "   ->"
		for (k in now)
			if (!(k in prev) || now[k] != prev[k]) {
				out = out sep " " k "=" now[k]; sep = ","; prev[k] = now[k]
			}
		for (k in loc) { out = out sep " " k "=" loc[k]; sep = "," }
		printf "%5d  %-8s %s\n", step, who, out
		key = ""
	}
	/^[ \t]*[0-9]+:[ \t]+proc[ \t]/ {
		s = $1; sub(":", "", s); pid = $3
		k2 = s "," pid
		if (k2 != key) {
			flush()
			key = k2; step = s + 0; ns = 0; shared = 0
			delete loc; delete pending
			who = (pid < nc) ? "core" pid : (pid == nc ? "control" : "")
		}
		t = $0; sub(/^[^[]*\[/, "", t); sub(/\][ \t]*$/, "", t)
		if (who != "" && t !~ /^assert\(/ && t ~ /(pool|bucket|transit|sold_out|sold|returned|added)/ &&
		    t !~ /^(hand|pend|retg|addg|untg|busy|late|inwin|zero|lowq|wok|qg|tk|rin|bad_)/) {
			shared = 1; st[++ns] = t
			if (t ~ /^[a-z]+ = /) { split(t, a, " "); pending[a[1]] = 1 }
		}
		next
	}
	/^\t\t[a-z_]+(\[[0-9]+\])? = / {
		split($0, a, " = "); n = a[1]; gsub(/[ \t]/, "", n)
		if (n ~ /^(pool|bucket\[[0-9]+\]|transit|sold_out|sold|returned|added)$/) now[n] = a[2]
		next
	}
	/^\t\t[a-z]+\([0-9]+\):[a-z]+ = / {
		split($0, a, " = "); n = a[1]; gsub(/[ \t]/, "", n); sub(/^.*:/, "", n)
		if ((n in pending) && n ~ /^(v|p|e|r)$/) { loc[n] = a[2]; delete pending[n] }
		next
	}
	/assertion violated|Never claim moves to line [0-9]+[ \t]*\[\(!/ { flush(); print "       " $0 }
	END { flush() }'
}

# steps DIR: a cluster.pml counterexample, one line per atomic step: the
# process and the first statements that change something
steps() {
	(cd "$1" && spin -t -p "${defs[@]}" cluster.pml 2>&1) | awk '
	/^ *[0-9]+:[ \t]+proc/ {
		s = $1
		if (s != last) { if (line != "") print line; line = sprintf("%6s %-14s", $1, $4); last = s; n = 0 }
		t = $0; sub(/^[^[]*\[/, "", t); sub(/\][ \t]*$/, "", t)
		if (n < 5 && t !~ /^(else|goto|skip|\.\(goto\))/) { line = line " | " t; n++ }
		next
	}
	/assertion violated|Never claim moves/ { if (line != "") print line; line = ""; print "       " $0 }
	END { if (line != "") print line }'
}

failures=0
printf '%-8s %-24s %-8s %12s %9s %8s  %s\n' kind check verdict states time memory note

for spec in "${checks[@]}"; do
	read -r mdl kind name panopts rest <<<"$spec"
	read -r -a defs <<<"$rest"
	[[ -n $trail && $name != "$trail" ]] && continue

	dir=$work/$kind-$name
	mkdir -p "$dir"
	cp "$here/$mdl.pml" "$dir/$mdl.pml"
	pan_args=(-m100000)
	cflags=(-O0 -w -DSAFETY -DMEMLIM=2048)
	if [[ $panopts != - ]]; then
		IFS=, read -r -a opts <<<"$panopts"
		for o in "${opts[@]}"; do
			case $o in
			O2) cflags[0]=-O2 ;;
			COLLAPSE) cflags+=(-DCOLLAPSE) ;;
			*) pan_args+=("$o") ;;
			esac
		done
	fi
	[[ $kind == real ]] || pan_args+=(-E) # stop at the first error, no deadlock noise

	if ! (cd "$dir" && spin -a "${defs[@]}" "$mdl.pml" >spin.out 2>&1); then
		printf '%-8s %-24s %-8s %s\n' "$kind" "$name" FAIL "spin -a failed: $(head -n 3 "$dir/spin.out" | tr '\n' ' ')"
		failures=$((failures + 1))
		continue
	fi
	if ! (cd "$dir" && "$cc" "${cflags[@]}" -o pan pan.c >cc.out 2>&1); then
		printf '%-8s %-24s %-8s %s\n' "$kind" "$name" FAIL "$cc failed: $(head -n 3 "$dir/cc.out" | tr '\n' ' ')"
		failures=$((failures + 1))
		continue
	fi
	t0=$(date +%s.%N)
	(cd "$dir" && ./pan "${pan_args[@]}" >pan.out 2>&1) || true
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1fs", b - a }')
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out" | head -n 1)
	states=$(sed -n 's/^[[:space:]]*\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.out" | head -n 1)
	mem=$(sed -n 's/^[[:space:]]*\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p' "$dir/pan.out" | head -n 1)
	mem=${mem:+${mem%.*}MB}
	complete=1
	if [[ -z $errors ]] || grep -q 'max search depth too small\|Search not completed\|out of memory\|memory limit' "$dir/pan.out"; then
		complete=0
	fi
	errors=${errors:-?}

	note=
	if [[ $errors != 0 && $errors != \? && $kind != cover ]]; then
		note="violates $(label "$dir")"
	fi

	case $kind in
	real)
		if ((complete)) && [[ $errors == 0 ]]; then
			verdict=ok
		else
			verdict=FAIL
			failures=$((failures + 1))
			((complete)) || note="search incomplete: $(grep -m 1 'too small\|not completed\|memory' "$dir/pan.out" || echo 'pan failed')"
		fi
		;;
	mutant | cover)
		if [[ $errors != 0 && $errors != \? ]]; then
			verdict=ok
			[[ $kind == cover ]] && note=reached
		else
			verdict=FAIL
			failures=$((failures + 1))
			note=$([[ $kind == mutant ]] && echo "no counterexample" || echo "unreachable")
		fi
		;;
	finding)
		verdict=info
		[[ -n $note ]] || note="holds"
		;;
	esac
	printf '%-8s %-24s %-8s %12s %9s %8s  %s\n' "$kind" "$name" "$verdict" "${states:-?}" "$secs" "${mem:-?}" "$note"

	if [[ -n $trail ]]; then
		if [[ $errors == 0 || $errors == \? ]]; then
			echo "(no counterexample to show)"
		else
			if [[ $mdl == stock ]]; then
				nc=2
				for d in "${defs[@]}"; do [[ $d == -DNC=* ]] && nc=${d#-DNC=}; done
				echo "counterexample of $name ($rest), shared-memory steps:"
				condense "$dir" "$nc"
			else
				echo "counterexample of $name ($rest), one line per atomic step:"
				steps "$dir"
			fi
		fi
	fi
done

if [[ -n $trail && ${#checks[@]} -gt 0 ]] && ! printf '%s\n' "${checks[@]}" | awk '{ print $3 }' | grep -qx -- "$trail"; then
	echo "run.sh: no check named $trail (see --list)" >&2
	exit 2
fi
if ((failures)); then
	echo "run.sh: $failures check(s) failed" >&2
	exit 1
fi
echo "run.sh: all checks passed"
