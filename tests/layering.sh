#!/bin/sh
# fusec's structure, checked on the objects the build makes: each folder of
# fusec/ is a stage of its pipeline and calls only the stages before it.
#
#   sh tests/layering.sh OBJ...     checks the objects (build/rel/FOLDER/x.o)
#   sh tests/layering.sh --self-test   shows that the checker fails on a bad graph
#   sh tests/layering.sh --lengths FILE...  no function longer than 120 lines
#
# From `nm`: file A calls file B when A's object uses a symbol B's defines.
# Each such call must go down the order below (a folder may call itself),
# cuda/ and host/ are siblings that never call each other, no circle of
# files may hold more than 2 of them, and only the driver (main.c, the
# artifact writer and the planner itself) may call the planner's entry
# points. Prints one line per violation and "layering: ok (N files, M calls)"
# or exits 1.
set -u

# the folder of an object: build/rel/cuda/kern_row.o -> cuda; the parser
# that re2c and lemon make is the front end's; runtime/sha256.c is the
# runtime's, below every folder
folder() {
	case $1 in
	*/lexer.o | */grammar.o) echo front ;;
	*/sha256.o) echo runtime ;;
	*/main.o) echo main ;;
	*) basename "$(dirname "$1")" ;;
	esac
}

# reads "FILE FOLDER def|use SYMBOL" lines; checks the rules
check() {
	awk '
	BEGIN {
		n = split("runtime core front plan emit cuda host artifact main", order, " ")
		for (i = 1; i <= n; i++) rank[order[i]] = i
		rank["host"] = rank["cuda"] # siblings
		driver["main"] = driver["artifact"] = driver["plan"] = 1
		entry["plan_build"] = entry["plan_fusion"] = 1
		bad = 0
	}
	{
		dir[$1] = $2
		if (!($1 in id)) { id[$1] = ++nf; name[nf] = $1 }
		if ($3 == "def") def[$4] = $1
		else { nu++; ufile[nu] = $1; usym[nu] = $4 }
	}
	function fail(msg) { print "layering: " msg; bad = 1 }
	END {
		for (k = 1; k <= nu; k++) {
			a = ufile[k]; s = usym[k]
			if (!(s in def) || def[s] == a) continue
			b = def[s]; fa = dir[a]; fb = dir[b]
			if (!(fa in rank)) { fail(a " is in no known folder (" fa ")"); continue }
			if (!(fb in rank)) { fail(b " is in no known folder (" fb ")"); continue }
			if (s in entry && !(fa in driver)) fail(a " (" fa "/) calls the planner'"'"'s " s ": writers print the plan they are given")
			if (fa != fb && rank[fb] >= rank[fa]) fail(a " (" fa "/) calls " s " of " b " (" fb "/), a folder at or above its own")
			if (!((a, b) in edge)) { edge[a, b] = 1; ncalls++ }
		}
		# circles: reach[i, j] after the transitive closure (Warshall)
		for (i = 1; i <= nf; i++) for (j = 1; j <= nf; j++) reach[i, j] = (name[i], name[j]) in edge
		for (k = 1; k <= nf; k++) for (i = 1; i <= nf; i++) if (reach[i, k]) for (j = 1; j <= nf; j++) if (reach[k, j]) reach[i, j] = 1
		for (i = 1; i <= nf; i++) {
			if (done[i] || !reach[i, i]) continue
			members = name[i]; size = 1; done[i] = 1
			for (j = i + 1; j <= nf; j++)
				if (reach[i, j] && reach[j, i]) { members = members " " name[j]; size++; done[j] = 1 }
			if (size > 2) fail("a circle of " size " files: " members)
		}
		if (!bad) printf "layering: ok (%d files, %d calls between them)\n", nf, ncalls
		exit bad
	}'
}

# functions of more than 120 lines (a definition starts at column 0 with
# its brace on the next line, and ends at the first "}" at column 0)
lengths() {
	awk '/^[A-Za-z].*\)$/ { sig = $0; if ((getline line) > 0 && line == "{") { start = FNR; name = sig } ; next }
	     /^}/ && name != "" { n = FNR - start + 1; if (n > 120) { printf "layering: %s: %d lines: %s\n", FILENAME, n, name; bad = 1 } name = "" }
	     END { exit bad }' "$@"
}

if [ "${1:-}" = --lengths ]; then
	shift
	lengths "$@"
	exit
fi

if [ "${1:-}" = --self-test ]; then
	long=$(mktemp) || exit 2
	{ echo "int f(void)"; echo "{"; i=0; while [ $i -lt 120 ]; do echo "	;"; i=$((i + 1)); done; echo "}"; } >"$long"
	if lengths "$long" >/dev/null; then rm -f "$long"; echo "layering self-test: a 122-line function was accepted"; exit 1; fi
	rm -f "$long"
	# a sound graph passes; an upward call, a sibling call, a circle of 3 and
	# a writer calling the planner each fail
	ok='m main use f
c core def f
m main def main
p plan use f
p plan def plan_build
a artifact use plan_build
a artifact def g'
	printf '%s\n' "$ok" | check >/dev/null || { echo "layering self-test: a sound graph was refused"; exit 1; }
	for bad in 'c core use plan_build' 'x cuda use hf
h host def hf' 'x cuda use g
y cuda def g
y cuda use h
z cuda def h
z cuda use i
x cuda def i' 'x cuda use plan_build'; do
		if printf '%s\n%s\n' "$ok" "$bad" | check >/dev/null; then
			echo "layering self-test: not refused: $bad"
			exit 1
		fi
	done
	echo "layering self-test: ok"
	exit 0
fi

[ $# -gt 0 ] || { echo "usage: sh tests/layering.sh OBJ... | --self-test" >&2; exit 2; }
for o in "$@"; do
	[ -f "$o" ] || { echo "layering: $o is missing (build it first)" >&2; exit 2; }
	d=$(folder "$o")
	nm "$o" | awk -v f="$o" -v d="$d" '
		NF == 3 && $2 ~ /^[TDBRC]$/ { print f, d, "def", $3 }
		NF == 2 && $1 == "U" { print f, d, "use", $2 }'
done | check
