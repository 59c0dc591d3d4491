#!/bin/sh
# CPU-side tests of fusec's code generator and of the committed artifacts:
#   a. ptxas assembles every generated/*.sm_XX.ptx: no spills, no stack frame,
#      registers within budget (64 a kernel; a pipeline's or an attention entry point's, the register file over
#      the threads its launch bounds put on an SM; 128 for matmul-mode kernels; 168
#      for tensor-core tile kernels: 384 threads, one block an SM), sm_90a too
#   b. the float64 references (generated/NAME_ref.c) against hand-worked values,
#      under ASan/UBSan (tests/ref/test_NAME.c, test_NAME__CASE.c), and those of
#      the language's test specs (tests/ref/lang/NAME.fuse, test_NAME.c)
#   c. golden checks of generated CUDA, headers, manifests, PTX and --explain
#      (tests/codegen/*.fuse; a spec whose PTX is checked has it through ptxas too)
#   d. make check-generated: the artifacts regenerate byte for byte
#   e. runtime/fuserun.h's launch helpers (op struct, grid and row-group
#      functions) are the ones every generated header carries
# Run from the repository root. FUSEC (default bin/fusec), CC (cc), CUDA_HOME
# (/usr/local/cuda), REG_BUDGET (64), REG_BUDGET_MATMUL (128). Prints a line per
# failure; VERBOSE=1 also prints passes. ptxas's figures: build/tests/ptx/usage.txt.
set -u
FUSEC=${FUSEC:-bin/fusec}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PTXAS=$CUDA_HOME/bin/ptxas
REG_BUDGET=${REG_BUDGET:-64}               # registers a kernel may use
REG_BUDGET_MATMUL=${REG_BUDGET_MATMUL:-128} # ... a matmul-mode kernel (per the manifest)
REG_BUDGET_TILE=${REG_BUDGET_TILE:-168}     # ... a tile-mode kernel: 65536 registers / 384 threads
B=build/tests
CG=build/cg
pass=0
fail=0

ok() { pass=$((pass + 1)); [ "${VERBOSE:-0}" = 1 ] && echo "ok   $1"; return 0; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

if [ ! -f tests/cpu_artifacts.sh ] || [ ! -d generated ]; then
	echo "cpu_artifacts: run from the repository root" >&2
	exit 2
fi
mkdir -p "$B/ptx" "$B/ref" "$CG" || exit 2

# ---------------------------------------------------------------- matcher
# filecheck PREFIX CHECKFILE INPUT: LLVM's FileCheck (Debian llvm-14-tools;
# .ci/run installs it) with the PREFIX directives of CHECKFILE, "# PREFIX:"
# comments: PREFIX, -NEXT, -SAME, -NOT, -EMPTY, {{regex}}. Prints the first
# failure; exit status 0 when every check holds.
FILECHECK=${FILECHECK:-$(command -v FileCheck || command -v FileCheck-14 || echo /usr/lib/llvm-14/bin/FileCheck)}
filecheck() {
	if [ ! -x "$FILECHECK" ]; then
		echo "LLVM FileCheck not found (apt-get install llvm-14-tools, or set FILECHECK)"
		return 1
	fi
	"$FILECHECK" --check-prefix="$1" --input-file="$3" "$2" 2>&1 | sed -n '1,6p' | tr '\n' ' '
	"$FILECHECK" --check-prefix="$1" --input-file="$3" "$2" >/dev/null 2>&1
}

# The matcher must be able to fail: a good check file passes, broken ones fail.
ST=$B/filecheck-self
mkdir -p "$ST"
printf 'alpha one\nbeta two\ngamma three\ndelta four\n' > "$ST/input"
selftest() { # name expected-status checks...
	name=$1 want=$2
	shift 2
	printf '%s\n' "$@" > "$ST/$name.chk"
	out=$(filecheck CHECK "$ST/$name.chk" "$ST/input" 2>&1)
	got=$?
	[ $got -ne 0 ] && got=1
	if [ "$got" = "$want" ]; then ok "filecheck self-test $name"
	elif [ "$want" = 0 ]; then no "filecheck self-test $name" "good checks failed: $out"
	else no "filecheck self-test $name" "a wrong check passed"; fi
}
selftest good 0 '# CHECK: alpha' '# CHECK-NEXT: two' '# CHECK-NOT: alpha' '# CHECK: delta' '# CHECK-NOT: epsilon'
selftest missing 1 '# CHECK: alpha' '# CHECK: epsilon'
selftest order 1 '# CHECK: gamma' '# CHECK: beta'
selftest next 1 '# CHECK: alpha' '# CHECK-NEXT: gamma'
selftest not-between 1 '# CHECK: alpha' '# CHECK-NOT: beta' '# CHECK: gamma'
selftest not-at-end 1 '# CHECK: beta' '# CHECK-NOT: four'
selftest empty 1 '# nothing to check here'

# ---------------------------------------------------------------- a. ptxas
if [ ! -x "$PTXAS" ]; then
	no "ptxas" "$PTXAS not found: the CUDA toolkit is required (set CUDA_HOME)"
else
	: > "$B/ptx/usage.txt"
	for ptx in generated/*.sm_80.ptx generated/*.sm_90.ptx generated/*.sm_90a.ptx; do
		[ -e "$ptx" ] || { no "ptxas" "no $ptx"; continue; }
		base=$(basename "$ptx" .ptx)   # NAME.sm_XX
		arch=${base##*.}
		name=${base%.*}
		t="ptxas $base"
		if ! "$PTXAS" -arch="$arch" -v "$ptx" -o "$B/ptx/$base.cubin" > "$B/ptx/$base.log" 2>&1; then
			no "$t" "ptxas failed: $(grep -m1 -i error "$B/ptx/$base.log")"
			continue
		fi
		# budgets from the manifest's kernel modes; the report against them
		why=$(awk -v ARCH="$arch" -v USAGE="$B/ptx/usage.txt" -v BUDGET="$REG_BUDGET" -v MMBUDGET="$REG_BUDGET_MATMUL" -v TBUDGET="$REG_BUDGET_TILE" '
			FILENAME ~ /manifest$/ { if ($1 == "kernel") mode[$3] = $4; if ($1 == "pipeline") mode[$2] = "pipeline"; next }
			# launch bounds, from the PTX: the budget of a pipeline or an attention entry point
			FILENAME ~ /ptx$/ {
				if ($0 ~ /\.entry /) { e = $0; sub(/.*\.entry /, "", e); sub(/\(.*/, "", e) }
				else if ($1 == ".maxntid") nt[e] = $2 + 0
				else if ($1 == ".minnctapersm") mb[e] = $2 + 0
				next
			}
			/Compiling entry function/ {
				k = $0; sub(/.*function \047/, "", k); sub(/\047.*/, "", k); cur = k; seen[k] = 1; next
			}
			/Function properties for/ { f = $0; sub(/.*properties for /, "", f); next }
			/bytes stack frame/ {
				if ($1 + 0) print f ": " $1 " bytes stack frame"
				if ($5 + 0) print f ": " $5 " bytes spill stores"
				if ($9 + 0) print f ": " $9 " bytes spill loads"
				st[f] = $1; ss[f] = $5; sl[f] = $9
				next
			}
			/Used [0-9]+ registers/ {
				r = $0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); r += 0
				if (!(cur in mode)) { print cur ": not a kernel of the manifest"; next }
				budget = mode[cur] == "matmul" ? MMBUDGET : mode[cur] == "tile" ? TBUDGET : BUDGET
				# a pipeline and an attention entry point: the register file over the threads
				# an SM holds at its launch bounds (the schedule chose them)
				if ((mode[cur] == "pipeline" || mode[cur] == "attention") && nt[cur] * mb[cur] > 0 && int(65536 / (nt[cur] * mb[cur])) > budget)
					budget = int(65536 / (nt[cur] * mb[cur]))
				if (r > budget) print cur ": " r " registers (budget " budget ")"
				printf "%s %s %s %d %d %d/%d\n", cur, ARCH, mode[cur], r, st[cur], ss[cur], sl[cur] >> USAGE
				next
			}
			/ptxas (warning|error)/ { print "ptxas says: " $0 }
			END { for (k in mode) if (!(k in seen)) print k ": in the manifest, not in the PTX" }
		' "generated/$name.manifest" "$ptx" "$B/ptx/$base.log")
		if [ -n "$why" ]; then no "$t" "$(printf '%s' "$why" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"; else ok "$t"; fi
	done
	# Blackwell (sm_100, sm_120): not in generated/ and not run on one yet;
	# every spec's PTX for them must assemble (spills are allowed, and counted)
	rm -rf "$B/bw" && mkdir -p "$B/bw"
	if ! "$FUSEC" -o "$B/bw" --arch=sm_100,sm_120 specs/*.fuse >"$B/bw/fusec.log" 2>&1; then
		no "ptxas sm_100 sm_120" "fusec --arch=sm_100,sm_120 failed: $(head -n 3 "$B/bw/fusec.log" | tr '\n' ' ')"
	else
		bad= spills=0 n=0
		for ptx in "$B"/bw/*.ptx; do
			arch=${ptx##*.sm_}; arch=sm_${arch%.ptx}; n=$((n + 1))
			"$PTXAS" -arch="$arch" -v "$ptx" -o /dev/null >"$B/bw/log" 2>&1 || bad="$bad $(basename "$ptx"): $(grep -m1 -i error "$B/bw/log")"
			grep -q '[1-9][0-9]* bytes spill stores' "$B/bw/log" && spills=$((spills + 1))
		done
		[ "$n" -gt 0 ] || bad=" no PTX written"
		if [ -z "$bad" ]; then ok "ptxas sm_100 sm_120: $n PTX files assemble ($spills with spills)"
		else no "ptxas sm_100 sm_120" "ptxas refused:$bad"; fi
		# the tensor-core kernels (tiles, attention) take the mma.sync path
		# there: wgmma and setmaxnreg are sm_90a's only (mma_common.cuh,
		# tile_gemm.cuh, attn.cuh choose on __CUDA_ARCH_FEAT_SM90_ALL)
		bad= ntc=0
		for ptx in generated/*.sm_90a.ptx; do
			grep -q 'wgmma' "$ptx" || continue
			base=$(basename "$ptx" .sm_90a.ptx)
			for a in sm_100 sm_120; do
				ntc=$((ntc + 1))
				grep -q -e 'wgmma' -e 'setmaxnreg' "$B/bw/$base.$a.ptx" && bad="$bad $base.$a.ptx: wgmma or setmaxnreg;"
				grep -q 'mma.sync' "$B/bw/$base.$a.ptx" || bad="$bad $base.$a.ptx: no mma.sync;"
			done
		done
		[ "$ntc" -gt 0 ] || bad=" no wgmma kernel in generated/*.sm_90a.ptx to compare"
		if [ -z "$bad" ]; then ok "sm_100 sm_120: the $ntc tensor-core PTX files use mma.sync, not wgmma"
		else no "sm_100 sm_120: tensor-core kernels on mma.sync" "$bad"; fi
	fi
fi

# ---------------------------------------------------------------- b. references
for spec in specs/*.fuse; do
	name=$(basename "$spec" .fuse)
	[ -f "tests/ref/test_$name.c" ] || no "ref $name" "no tests/ref/test_$name.c for specs/$name.fuse"
done
for src in tests/ref/test_*.c; do
	[ -e "$src" ] || break
	test=$(basename "$src" .c)
	name=${test#test_}
	name=${name%%__*}       # test_NAME__CASE.c tests NAME too
	t="ref $test"
	if [ ! -f "generated/${name}_ref.c" ]; then no "$t" "no generated/${name}_ref.c"; continue; fi
	if ! $CC -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -g \
		-Igenerated "$src" "generated/${name}_ref.c" -lm -o "$B/ref/$test" > "$B/ref/$test.log" 2>&1; then
		no "$t" "does not compile: $(grep -m1 'error' "$B/ref/$test.log")"
		continue
	fi
	if ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0} "$B/ref/$test" > "$B/ref/$test.log" 2>&1; then
		ok "$t"
	else
		log=$B/ref/$test.log
		why=$(grep -m1 'SUMMARY' "$log" || grep -m1 'runtime error' "$log" || grep -m1 '^  ' "$log")
		no "$t" "${why:-exit status nonzero} (see $B/ref/$test.log)"
	fi
done

# The language's own reference tests: tests/ref/lang/NAME.fuse compiled here,
# its float64 reference run by tests/ref/lang/test_NAME.c.
mkdir -p "$B/lang"
for spec in tests/ref/lang/*.fuse; do
	[ -e "$spec" ] || break
	name=$(basename "$spec" .fuse)
	t="ref lang/$name"
	if ! "$FUSEC" -o "$B/lang" "$spec" > "$B/lang/$name.log" 2>&1; then
		no "$t" "fusec failed: $(head -n1 "$B/lang/$name.log")"
		continue
	fi
	if ! $CC -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -g \
		-I"$B/lang" "tests/ref/lang/test_$name.c" "$B/lang/${name}_ref.c" -lm -o "$B/lang/test_$name" > "$B/lang/$name.log" 2>&1; then
		no "$t" "does not compile: $(grep -m1 'error' "$B/lang/$name.log")"
		continue
	fi
	if ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0} "$B/lang/test_$name" > "$B/lang/$name.log" 2>&1; then ok "$t"
	else no "$t" "$(head -n3 "$B/lang/$name.log" | tr '\n' ' ')"; fi
	if grep -q '^# MANIFEST' "$spec"; then
		if why=$(filecheck MANIFEST "$spec" "$B/lang/$name.manifest"); then ok "manifest lang/$name"; else no "manifest lang/$name" "$why"; fi
	fi
done

# ---------------------------------------------------------------- c. golden
for spec in tests/codegen/*.fuse; do
	[ -e "$spec" ] || break
	name=$(basename "$spec" .fuse)
	if grep -q '^[[:space:]]*#[[:space:]]*\(CHECK\|HEADER\|REF\|MANIFEST\|PTX\|PTX80\)\(-[A-Z]*\)\{0,1\}:' "$spec"; then
		rm -f "$CG/$name.cu" "$CG/$name.h" "$CG/$name.manifest" "$CG/$name".sm_*.ptx
		"$FUSEC" -o "$CG" "$spec" > "$CG/$name.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			why=$(grep -m1 '): error' "$CG/$name.log" || head -n1 "$CG/$name.log")
			no "codegen $name" "fusec -o $spec failed (exit $rc): ${why:-no message} (see $CG/$name.log)"
		else
			for pf in CHECK HEADER REF MANIFEST PTX PTX80; do
				grep -q "^[[:space:]]*#[[:space:]]*$pf\(-[A-Z]*\)\{0,1\}:" "$spec" || continue
				f=$CG/$name.cu
				[ $pf = HEADER ] && f=$CG/$name.h
				[ $pf = MANIFEST ] && f=$CG/$name.manifest
				[ $pf = REF ] && f=${CG}/${name}_ref.c
				[ $pf = PTX ] && f=$CG/$name.sm_90a.ptx
				[ $pf = PTX80 ] && f=$CG/$name.sm_80.ptx
				if why=$(filecheck $pf "$spec" "$f"); then ok "codegen $(basename "$f")"; else no "codegen $(basename "$f")" "$why"; fi
			done
			# a spec whose PTX is checked: each of its targets' PTX assembles, as
			# generated/'s do (a.): no stack frame, no spills
			if grep -q '^[[:space:]]*#[[:space:]]*PTX[0-9]*\(-[A-Z]*\)\{0,1\}:' "$spec"; then
				for ptx in "$CG/$name".sm_*.ptx; do
					base=$(basename "$ptx" .ptx)
					arch=${base##*.}
					if ! "$PTXAS" -arch="$arch" -v "$ptx" -o /dev/null > "$CG/$base.ptxas" 2>&1; then
						no "ptxas codegen $base" "$(grep -m1 -i error "$CG/$base.ptxas")"
					elif grep -q '[1-9][0-9]* bytes \(stack frame\|spill\)' "$CG/$base.ptxas"; then
						no "ptxas codegen $base" "$(grep -m1 '[1-9][0-9]* bytes \(stack frame\|spill\)' "$CG/$base.ptxas")"
					else ok "ptxas codegen $base"; fi
				done
			fi
		fi
	fi
	if grep -q '^[[:space:]]*#[[:space:]]*EXPLAIN\(-[A-Z]*\)\{0,1\}:' "$spec"; then
		if ! "$FUSEC" --explain "$spec" > "$CG/$name.explain" 2> "$CG/$name.explain.err"; then
			no "explain $name" "fusec --explain failed: $(head -n1 "$CG/$name.explain.err")"
		elif why=$(filecheck EXPLAIN "$spec" "$CG/$name.explain"); then
			ok "explain $name"
		else
			no "explain $name" "$why"
		fi
	fi
done

# ---------------------------------------------------------------- d. regeneration
if out=$(make -s check-generated 2>&1); then
	ok "check-generated"
else
	no "check-generated" "$(printf '%s' "$out" | head -n 5 | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
fi
# make check regenerates generated/ before it gets here, so the comparison
# above is of fresh bytes with fresh bytes: what was committed must be them
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	if [ -z "$(git status --porcelain -- generated/)" ]; then
		ok "generated/ as committed"
	else
		no "generated/ as committed" "regeneration changed: $(git status --porcelain -- generated/ | head -n 4 | tr '\n' ' ')(commit them)"
	fi
fi

# ---------------------------------------------------------------- e. launch helpers
# runtime/fuserun.h defines the op struct and the launch-geometry helpers
# first (FZ_OP_DEFINED), so an artifact's header compiled by fuserun uses
# fuserun.h's copy: it must be the generated one, or fuserun launches a
# kernel with a geometry the kernel does not expect (a row kernel's group)
for h in generated/*.h; do
	if [ "$(sed -n '/^#ifndef FZ_OP_DEFINED/,/^#endif/p' runtime/fuserun.h)" = "$(sed -n '/^#ifndef FZ_OP_DEFINED/,/^#endif/p' "$h")" ]; then
		ok "launch helpers $h"
	else
		no "launch helpers $h" "its FZ_OP_DEFINED block differs from runtime/fuserun.h's"
	fi
done

# every generated header compiles warning-free (-Wall -Wextra -Werror) in C
# and in C++, by each compiler there is: an application includes it in its
# own code (clang++ warned by default on `gx && gy` with gy the constant 1,
# -Wconstant-logical-operand, in every shipped header; issue 27)
hdr=$B/headers
mkdir -p "$hdr"
{ echo '#include "fuserun.h"'; for h in generated/*.h; do echo "#include \"$(basename "$h")\""; done; } > "$hdr/all.c"
cp "$hdr/all.c" "$hdr/all.cc"
for cc in "$CC -std=c11" "clang -std=c11" "c++ -std=c++17" "clang++ -std=c++17"; do
	set -- $cc
	command -v "$1" >/dev/null 2>&1 || continue
	src=$hdr/all.c
	case $1 in *++) src=$hdr/all.cc ;; esac
	if out=$($cc -fsyntax-only -Wall -Wextra -Werror -Iruntime -Igenerated "$src" 2>&1); then ok "headers: $cc"
	else no "headers: $cc -Wall -Wextra -Werror" "$(printf '%s' "$out" | grep -m2 -e error -e warning | tr '\n' ' ')"; fi
done

echo "cpu_artifacts: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
