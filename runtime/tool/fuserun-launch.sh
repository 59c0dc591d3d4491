#!/bin/sh
# fuserun-launch: starts N processes of a command on this host, one a GPU,
# as a job of one process per GPU (runtime/README.md, "One process per GPU").
#
#   fuserun-launch [-n N] [--world W --first R] [--grace S] [--] COMMAND [ARG...]
#
# Process i gets RANK=R+i, LOCAL_RANK=i, WORLD_SIZE=W, LOCAL_WORLD_SIZE=N
# (torchrun's names; W defaults to N, R to 0) and FUSERUN_NCCL_ID_FILE: a
# fresh path in a temporary directory, removed at the end, unless the
# environment names one (several hosts: a path on a file system they share,
# the launcher run on each with its --first) or gives the id itself in
# FUSERUN_NCCL_ID. Rank 0 writes the NCCL unique
# id there and the others wait for it (libfuserun's fz_group_join).
#
# When a process fails (a non-zero exit or a signal) the launcher names it
# ("rank 1 (pid 4242) was killed by signal KILL"), gives the others --grace
# seconds (default 60; FUSERUN_LAUNCH_GRACE) to end on their own, their
# waits for a peer being bounded, then stops them (TERM, then KILL). Every
# failed rank is named at the end. Exit status: 0 when every process exited
# 0, else the first failure's (128 + the signal for a signal).
me=fuserun-launch
n=1 world= first=0 grace=${FUSERUN_LAUNCH_GRACE:-60}
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--world) world=$2; shift 2 ;;
	--first) first=$2; shift 2 ;;
	--grace) grace=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "$me: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
world=${world:-$n}
for v in "$n" "$world" "$first" "$grace"; do
	case $v in ''|*[!0-9]*) echo "$me: -n, --world, --first and --grace take numbers (got '$v')" >&2; exit 2 ;; esac
done
if [ $# = 0 ] || [ "$n" -lt 1 ] || [ $((first + n)) -gt "$world" ]; then
	echo "usage: $me [-n N] [--world W --first R] [--grace S] [--] COMMAND [ARG...]  (R + N <= W, N >= 1)" >&2
	exit 2
fi

tmp=
if [ -z "$FUSERUN_NCCL_ID_FILE" ] && [ -z "$FUSERUN_NCCL_ID" ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuserun-launch.XXXXXX") || exit 2
	FUSERUN_NCCL_ID_FILE=$tmp/nccl.id
fi
[ -n "$FUSERUN_NCCL_ID_FILE" ] && export FUSERUN_NCCL_ID_FILE

pids=
# stopped from outside: take the ranks along (a non-interactive shell's
# background processes ignore SIGINT)
trap 'for p in $pids; do kill -TERM "$p" 2>/dev/null; done; [ -n "$tmp" ] && rm -rf "$tmp"; exit 130' INT TERM
i=0
while [ $i -lt "$n" ]; do
	RANK=$((first + i)) LOCAL_RANK=$i WORLD_SIZE=$world LOCAL_WORLD_SIZE=$n "$@" &
	pids="$pids $!"
	i=$((i + 1))
done

# alive: running, not a zombie (an exited child not yet waited for)
alive() {
	[ -r /proc/$1/stat ] || { kill -0 "$1" 2>/dev/null; return; }
	s=$(sed 's/.*) \(.\).*/\1/' /proc/$1/stat 2>/dev/null)
	[ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}
describe() { # rank pid status
	if [ "$3" -gt 128 ]; then
		echo "rank $1 (pid $2) was killed by signal $(kill -l $(($3 - 128)) 2>/dev/null || echo $(($3 - 128)))"
	else
		echo "rank $1 (pid $2) exited with status $3"
	fi
}

# each pass waits for the ranks that have ended; of those, one killed by a
# signal is named first (its peers then fail because of it)
status=0 left=$n deadline= failed=
while [ "$left" -gt 0 ]; do
	i=0 new=
	for p in $pids; do
		r=$((first + i)) i=$((i + 1))
		case " $done " in *" $p "*) continue ;; esac
		alive "$p" && continue
		wait "$p"; st=$?
		done="$done $p" left=$((left - 1))
		[ "$st" = 0 ] && continue
		if [ "$st" -gt 128 ]; then new="$st $r $p
$new"; else new="$new
$st $r $p"; fi
	done
	for line in $(printf '%s\n' "$new" | sed '/^$/d; s/ /:/g'); do
		st=${line%%:*} rest=${line#*:}
		msg=$(describe "${rest%%:*}" "${rest#*:}" "$st")
		failed="$failed
$me: $msg"
		if [ "$status" = 0 ]; then
			status=$st
			echo "$me: $msg; the other ranks have ${grace}s to end" >&2
			deadline=$(($(date +%s) + grace))
		fi
	done
	[ "$left" = 0 ] && break
	if [ -n "$deadline" ] && [ "$(date +%s)" -ge "$deadline" ]; then
		for p in $pids; do case " $done " in *" $p "*) ;; *) kill -TERM "$p" 2>/dev/null ;; esac; done
		sleep 2
		for p in $pids; do case " $done " in *" $p "*) ;; *) kill -KILL "$p" 2>/dev/null ;; esac; done
		deadline=
	fi
	sleep 0.1
done
[ -n "$failed" ] && printf '%s\n' "$failed" | sed 1d >&2
[ -n "$tmp" ] && rm -rf "$tmp"
exit "$status"
