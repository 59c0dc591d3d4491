#!/bin/sh
# make check's corpus group: every chain of bench/corpus/ keeps the contract of
# bench/corpus/README.md, without a GPU or torch:
#   1. NAME.fuse passes fusec --check with nothing on stderr, and --emit=ir
#      shows exactly one fusion, named NAME;
#   2. NAME.py exists;
#   3. (python3) harness.py --dry-run, reading the spec with fusec --emit=ir
#      and NAME.py with torch stubbed: the '# family:' line, SIZES and CHECK
#      binding exactly the spec's size names (positive integers, CHECK small),
#      torch_fn defined, the outputs; and it prints what it would time;
#   4. (python3) the dry run says no to a chain that breaks the contract (a
#      copy with a size missing from SIZES, one without torch_fn).
# Prints "FAIL name: why" lines and "corpus: N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
FUSEC=${FUSEC:-bin/fusec}
T=$(mktemp -d "${TMPDIR:-/tmp}/corpus-test.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; [ -s "$T/err" ] && sed -n '1,10s/^/    /p' "$T/err"; : >"$T/err"; }
: >"$T/err"
if [ ! -x "$FUSEC" ]; then echo "FAIL corpus/fusec: $FUSEC is not an executable (make bin/fusec)"; echo "corpus: 0 passed, 1 failed"; exit 1; fi
n_fuse=0
for f in bench/corpus/*.fuse; do
	[ -e "$f" ] || continue
	n_fuse=$((n_fuse + 1))
	n=$(basename "$f" .fuse)
	if ! "$FUSEC" --check "$f" 2>"$T/err" || [ -s "$T/err" ]; then bad "corpus/$n" "fusec --check fails or warns"; continue; fi
	if ! "$FUSEC" --emit=ir "$f" >"$T/ir" 2>"$T/err"; then bad "corpus/$n" "fusec --emit=ir fails"; continue; fi
	fus=$(grep '^fusion ' "$T/ir" | tr '\n' ' ')
	if [ "$fus" != "fusion $n " ]; then bad "corpus/$n" "expected exactly 'fusion $n', found '$fus'"; continue; fi
	if [ ! -f "bench/corpus/$n.py" ]; then bad "corpus/$n" "no bench/corpus/$n.py"; continue; fi
	ok
done
[ $n_fuse -ge 20 ] && ok || bad "corpus/count" "$n_fuse chains in bench/corpus, expected at least 20"
for f in bench/corpus/*.py; do
	case $f in */harness.py|*/table.py|*/randchain.py) continue ;; esac
	[ -f "${f%.py}.fuse" ] && ok || bad "corpus/$(basename "$f")" "no ${f%.py}.fuse beside it"
done
if command -v python3 >/dev/null 2>&1; then
	# the dry run reads the specs with fusec under test (no gen/ manifests)
	if python3 bench/corpus/harness.py --dry-run --gen "$T/none" --fusec "$FUSEC" >"$T/dry" 2>"$T/err" &&
		grep -q "^corpus dry run: $n_fuse chains, 0 break the contract\$" "$T/dry"; then ok
	else
		grep ' error ' "$T/dry" >>"$T/err"
		bad "corpus/contract" "harness.py --dry-run: a chain breaks the contract"
	fi
	# the random chain generator: a fixed seed's chains keep the contract
	# and pass fusec --check, and the same seed writes the same bytes
	mkdir -p "$T/rc" "$T/rc2"
	cp bench/corpus/harness.py "$T/rc/"
	python3 bench/corpus/randchain.py --seed 7 --count 24 --out "$T/rc" >/dev/null 2>"$T/err" &&
		python3 bench/corpus/randchain.py --seed 7 --count 24 --out "$T/rc2" >/dev/null 2>>"$T/err" || bad "corpus/randchain" "randchain.py fails"
	nrc=0 rcbad=
	for f in "$T"/rc/rc_7_*.fuse; do
		[ -e "$f" ] || continue
		nrc=$((nrc + 1))
		"$FUSEC" --check "$f" >/dev/null 2>"$T/err" && [ ! -s "$T/err" ] || rcbad="$rcbad $(basename "$f")"
		cmp -s "$f" "$T/rc2/$(basename "$f")" && cmp -s "${f%.fuse}.py" "$T/rc2/$(basename "${f%.fuse}").py" || rcbad="$rcbad $(basename "$f")(not reproducible)"
	done
	[ $nrc = 24 ] && [ -z "$rcbad" ] && ok || bad "corpus/randchain" "$nrc chains; failing fusec --check or not reproducible:$rcbad"
	if python3 "$T/rc/harness.py" --dry-run --gen "$T/none" --fusec "$FUSEC" >"$T/dry" 2>"$T/err" &&
		grep -q '^corpus dry run: 24 chains, 0 break the contract$' "$T/dry"; then ok
	else
		grep ' error ' "$T/dry" >>"$T/err"
		bad "corpus/randchain contract" "harness.py --dry-run on randchain.py's chains"
	fi
	# table.py on made-up results: ours against compile, and against the best
	# peer (here the eager chain's CUDA graph), each ratio and its geomean
	mkdir -p "$T/tab"
	printf 'relu_mask time N=1000\n' >"$T/tab/plan.txt"
	printf 'relu_mask N=1000 PASS x fused=0.0100ms unfused=0.0200ms launches=1/2 copy=3.0TB/s\n' >"$T/tab/ours.txt"
	printf '{"copy_bw": 3e12, "device": "x", "torch": "y"}\n{"chain": "relu_mask", "sizes": {"N": 1000}, "bytes": 1e6, "eager_ms": 0.02, "graph_ms": 0.009, "compile_ms": 0.0125}\n' >"$T/tab/peers.jsonl"
	if python3 bench/corpus/table.py "$T/tab" >"$T/tab/t.md" 2>"$T/err" &&
		grep -q '| 0.0200 | 0.0090 | 0.0125 | 0.80 | graph | 1.11 |' "$T/tab/t.md" &&
		grep -q '^geomean ours/best peer .*: 1.111 over 1 chain-sizes$' "$T/tab/t.md"; then ok
	else
		tail -5 "$T/tab/t.md" >>"$T/err"
		bad "corpus/table.py" "the best peer (graph) and its ratio are not in the table"
	fi
	for s in bench/corpus/table.py bench/corpus/harness.py bench/corpus/randchain.py; do
		python3 -m py_compile "$s" 2>"$T/err" && ok || bad "corpus/$s" "does not compile"
	done
	# the check itself must say no: a chain with a size missing from SIZES, one without torch_fn
	mkdir -p "$T/c"
	cp bench/corpus/harness.py "$T/c/"
	one=$(ls bench/corpus/*.fuse | head -n 1)
	n=$(basename "$one" .fuse)
	cp "$one" "$T/c/"
	"$FUSEC" --emit=ir "$one" | sed -n 's/^  sizes: \([A-Za-z_0-9]*\).*/\1/p' >"$T/size"
	size=$(cat "$T/size")
	printf 'SIZES = [dict()]\nCHECK = [dict(%s=1)]\n\n\ndef torch_fn(inp):\n    return ()\n' "$size" >"$T/c/$n.py"
	python3 "$T/c/harness.py" --dry-run --gen "$T/none" --fusec "$FUSEC" >"$T/dry" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "^$n error SIZES entry" "$T/dry" && ok || { cp "$T/dry" "$T/err"; bad "corpus/self-test SIZES" "the dry run accepts SIZES without $size (exit $rc)"; }
	printf 'SIZES = [dict(%s=1)]\nCHECK = [dict(%s=1)]\n' "$size" "$size" >"$T/c/$n.py"
	python3 "$T/c/harness.py" --dry-run --gen "$T/none" --fusec "$FUSEC" >"$T/dry" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "^$n error no torch_fn" "$T/dry" && ok || { cp "$T/dry" "$T/err"; bad "corpus/self-test torch_fn" "the dry run accepts a chain without torch_fn (exit $rc)"; }
else
	echo "corpus: python3 not found: the contract's python checks skipped"
fi
sh -n bench/corpus/run.sh 2>"$T/err" && sh -n bench/corpus/build.sh 2>>"$T/err" && ok || bad "corpus/scripts" "sh -n fails on run.sh or build.sh"
echo "corpus: $pass passed, $fail failed"
[ $fail = 0 ]
