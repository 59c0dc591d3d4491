#!/bin/sh
# tests/gpu/run.sh without a GPU (make check's gpurun group): its DRY=1 mode
# prints the commands it would run, so that every spec's sizes are checked
# here, where a mistake costs nothing, rather than found missing in a device
# call ("size M not given"; the _shard specs once had no sizes and were
# silently skipped).
#   1. the dry run of every spec ends "0 failed";
#   2. every spec in specs/ is validated, and every validation names exactly
#      the sizes its manifest declares, each a positive integer;
#   3. a spec with no sizes fails loudly;
#   4. tests/gpu/validate.c, linked against the fake driver, fills each
#      spec's inputs at run.sh's two smaller sizes and the float64 reference
#      accepts them (its index checks refuse a gather or scatter out of
#      range: exit 2); the fake runs no kernel, so the comparison then fails
#      with an infinite error (exit 1), which is what is expected here;
#   5. validate.c draws its inputs as fuserun does, never by a param's name:
#      tests/gpu/byname.fuse's eps, lr and decay (once 1e-5, 0.01 and 0.9)
#      come from (0.5, 1.5), so its reference's sum is at least 1.5 N.
# Prints "FAIL name: why" lines and "gpu_run_dry: N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FAKE=${RT_BUILD:-build/rt}/libfakecuda.so
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-run-dry.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

DRY=1 sh tests/gpu/run.sh >"$T/dry" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^gpu (DRY[^)]*): [0-9]* passed, 0 failed$' "$T/dry"; then ok
else bad "run.sh dry run" "exit $rc: $(grep -v '^+' "$T/dry" | grep -v ': printed, not run' | head -5)"; fi

for f in specs/*.fuse; do
	s=$(basename "$f" .fuse)
	want=$(sed -n 's/^size \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "generated/$s.manifest" | sort | tr '\n' ' ')
	grep "^+ build/gpu/v_$s " "$T/dry" | sed "s|^+ build/gpu/v_$s ||" >"$T/runs"
	if [ ! -s "$T/runs" ]; then bad "run.sh sizes $s" "no validation of $s in the dry run"; continue; fi
	why=
	while read -r line; do
		got=$(for a in $line; do case $a in *=*) echo "${a%%=*}" ;; esac; done | sort | tr '\n' ' ')
		[ "$got" = "$want" ] || { why="'$line' names sizes '$got', the manifest '$want'"; break; }
		for a in $line; do
			case $a in *=*) v=${a#*=}; case $v in '' | *[!0-9]* | 0*) why="'$line': $a is not a positive integer"; break 2 ;; esac ;; esac
		done
	done <"$T/runs"
	if [ -z "$why" ]; then ok; else bad "run.sh sizes $s" "$why"; fi
done

DRY=1 sh tests/gpu/run.sh no_such_spec relu >"$T/nosizes" 2>&1
rc=$?
if [ $rc != 0 ] && grep -q '^FAIL no_such_spec: no sizes in tests/gpu/run.sh' "$T/nosizes" &&
	grep -q '^gpu (DRY[^)]*): [0-9]* passed, 1 failed$' "$T/nosizes" && grep -q '^+ build/gpu/v_relu N=1 ' "$T/nosizes"; then ok
else bad "run.sh fails a spec with no sizes" "exit $rc: $(head -3 "$T/nosizes")"; fi

if [ ! -f "$FAKE" ]; then
	bad "validate.c inputs" "$FAKE is missing (make build/rt/libfakecuda.so)"
else
	for f in specs/*.fuse; do
		s=$(basename "$f" .fuse)
		if ! OPT=-O0 sh tests/gpu/build_driver.sh $s generated "$T/v_$s" -L"$(dirname "$FAKE")" -l:libfakecuda.so \
			-Wl,-rpath,"$(cd "$(dirname "$FAKE")" && pwd)" >"$T/cc.log" 2>&1; then
			bad "validate.c builds for $s" "$(head -5 "$T/cc.log")"
			continue
		fi
		# the dry run's first two validations: the smaller sizes
		grep "^+ build/gpu/v_$s " "$T/dry" | grep -v -e '--misalign' -e '--series' | head -2 | sed "s|^+ build/gpu/v_$s ||; s| --seed [0-9]*||" >"$T/runs"
		why=
		while read -r line; do
			# shellcheck disable=SC2086 # the sizes are separate words
			"$T/v_$s" $line --seed 7 --reps 1 >"$T/out" 2>&1 </dev/null
			rc=$?
			if [ $rc != 1 ] || ! grep -q "^$s .* FAIL fused_err/tol=inf" "$T/out"; then
				why="$line: exit $rc, not the fake's unwritten outputs: $(grep -v '^  ' "$T/out" | head -3)"
				break
			fi
		done <"$T/runs"
		if [ -z "$why" ]; then ok; else bad "validate.c inputs $s" "$why"; fi
	done
fi

FUSEC=${FUSEC:-bin/fusec}
if [ ! -f "$FAKE" ]; then :
elif ! "$FUSEC" -o "$T/bn" --arch=sm_80 tests/gpu/byname.fuse >"$T/bn.log" 2>&1; then
	bad "validate.c inputs by name" "fusec -o tests/gpu/byname.fuse: $(head -3 "$T/bn.log")"
elif ! OPT=-O0 sh tests/gpu/build_driver.sh byname "$T/bn" "$T/v_byname" -L"$(dirname "$FAKE")" -l:libfakecuda.so \
	-Wl,-rpath,"$(cd "$(dirname "$FAKE")" && pwd)" >"$T/cc.log" 2>&1; then
	bad "validate.c inputs by name" "does not build: $(head -5 "$T/cc.log")"
else
	"$T/v_byname" N=4 --dir "$T/bn" --ptx "$T/bn/byname.sm_80.ptx" --seed 7 --reps 1 >"$T/out" 2>&1 </dev/null
	ref=$(sed -n 's/.*(reference \(.*\))$/\1/p' "$T/out")
	if [ -n "$ref" ] && awk -v r="$ref" 'BEGIN { exit !(r >= 6) }'; then ok
	else bad "validate.c inputs by name" "byname's reference is ${ref:-missing} at N=4, not >= 6: eps, lr, decay chosen by name? $(head -3 "$T/out")"; fi
fi

echo "gpu_run_dry: $pass passed, $fail failed"
[ $fail = 0 ]
