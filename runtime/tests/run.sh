#!/bin/sh
# The runtime's CPU tests (no GPU needed): the sanitized test program, then
# fuserun, the examples and the library against no driver and a fake one.
# Run from the repository root after `make check-runtime`'s prerequisites
# are built (make check-runtime does both). Prints one line per check that
# fails (all with -v) and "runtime: P passed, F failed"; exits 1 on failures.
B=${RT_BUILD:-build/rt}
FUSERUN=${FUSERUN:-$B/fuserun-san}
FAKE=$(pwd)/$B/libfakecuda.so
NOCUDA=$(pwd)/$B/libnocuda.so
T=$B/tmp
VERBOSE=0
[ "$1" = -v ] && VERBOSE=1
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
unset FUSERUN_LIBCUDA FAKECUDA_CC FAKECUDA_FAIL FAKECUDA_FAIL_AT FAKECUDA_FAIL_CODE FAKECUDA_DEVICES FAKECUDA_STUB

. "$(dirname "$0")/lib.sh" # ok, bad, expect, tally

# 1. the test program (verification, checks, comparisons, fake driver, leaks)
rm -rf "$T" && mkdir -p "$T"
# an artifact with a fits line (issue 27), for test_fits.c
bin/fusec -o "$T/fits_src" tests/ref/lang/domain_gather.fuse >"$T/fits_src.log" 2>&1 || cat "$T/fits_src.log"
tally $B/test_runtime generated "$FAKE" "$NOCUDA" "$T"
# the generic call (fz_call, the manifest's recipe) against every shipped
# fusion's typed launchers, without a GPU and on the fake driver
mkdir -p "$T/call"
tally $B/test_call generated "$FAKE" "$T/call"

# 2. fuserun list: every artifact, text and JSON; refusals
for m in generated/*.manifest; do
	expect "fuserun list $m" 0 "verified" -- $FUSERUN list "$m"
	if command -v python3 >/dev/null 2>&1; then
		if $FUSERUN list "$m" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["kernels"] and d["plan"] and d["targets"]' 2>/dev/null
		then ok "fuserun list --json $m"; else bad "fuserun list --json $m: not the JSON expected"; fi
	fi
done
expect "fuserun list by fusion name" 0 "fusion softmax, verified" -- $FUSERUN list softmax
expect "fuserun list shows what each integer input holds" 0 "row_ptr .*by input  values 0..S nondecreasing" -- $FUSERUN list spike_burst
if command -v python3 >/dev/null 2>&1; then
	if $FUSERUN list spike_burst --json | python3 -c '
import json, sys
d = {p["name"]: p for p in json.load(sys.stdin)["parameters"]}
assert d["row_ptr"]["values"] == "0..S" and d["row_ptr"]["nondecreasing"] and not d["row_ptr"]["nonzero"]
assert d["fired"]["values"] == "0..NP1-2" and "values" not in d["w"]' 2>/dev/null
	then ok "fuserun list --json: values lines"; else bad "fuserun list --json: values lines"; fi
fi
expect "fuserun list refuses a damaged artifact" 1 "truncated or edited" -- $FUSERUN list $T/truncated_ptx/kl_divergence.manifest
expect "fuserun list refuses a missing artifact" 1 "No such file" -- $FUSERUN list $T/none.manifest
expect "fuserun list of an unknown fusion names where it looked" 1 "generated/no_such_fusion.manifest: No such file" -- $FUSERUN list no_such_fusion
expect "fuserun list refuses --size, which it would ignore" 2 "fuserun: list takes no --size" -- $FUSERUN list softmax --size R=5,C=7
expect "fuserun list refuses sizes, which it would ignore" 2 "fuserun: list takes no sizes" -- $FUSERUN list softmax R=5
expect "fuserun validate refuses --reps, which it would ignore" 2 "fuserun: validate takes no --reps" -- $FUSERUN validate softmax --size R=5,C=7 --reps 3
# a manifest under another fusion's name: renamed, or copied over it
mkdir -p $T/renamed && cp generated/relu.* generated/relu_ref.c $T/renamed/ && mv $T/renamed/relu.manifest $T/renamed/softmax.manifest
expect "fuserun list refuses a manifest renamed" 1 "softmax.manifest: the manifest of fusion relu, whose name is relu.manifest" -- \
	$FUSERUN list $T/renamed/softmax.manifest
# bytes that are not ASCII in a manifest's free text (plan lines), re-hashed:
# --json stays valid JSON (\u escapes, U+FFFD for bytes not UTF-8), text
# mode writes no control byte (C1 raw or as UTF-8) to the terminal
if command -v python3 >/dev/null 2>&1; then
	mkdir -p $T/bytes && cp generated/relu.* generated/relu_ref.c $T/bytes/
	python3 - $T/bytes/relu.manifest <<'EOF2'
import hashlib, sys
p = sys.argv[1]
t = open(p, 'rb').read()
body = t[:t.rindex(b'manifest-sha256 ')]
body += b'plan csi \x9b[31m stray \xff e-acute \xc3\xa9 nel \xc2\x85 smile \xf0\x9f\x98\x80 quote " back \\ end\n'
open(p, 'wb').write(body + b'manifest-sha256 ' + hashlib.sha256(body).hexdigest().encode() + b'\n')
EOF2
	if $FUSERUN list $T/bytes/relu.manifest --json | python3 -c '
import json, sys
d = json.loads(sys.stdin.buffer.read().decode("ascii"))
assert d["plan"][-1] == "csi \ufffd[31m stray \ufffd e-acute \u00e9 nel \u0085 smile \U0001F600 quote \" back \\ end", d["plan"][-1]' 2>$T/bytes/py.log
	then ok "fuserun list --json: plan bytes outside ASCII escaped (valid JSON, ASCII only)"
	else bad "fuserun list --json: plan bytes outside ASCII escaped (valid JSON, ASCII only)" "$(cat $T/bytes/py.log)"; fi
	if $FUSERUN list $T/bytes/relu.manifest | python3 -c '
import sys, unicodedata
s = sys.stdin.buffer.read().decode("utf-8")
bad = [hex(ord(c)) for c in s if unicodedata.category(c) == "Cc" and c != "\n"]
assert not bad, bad
assert "csi \\x9b[31m stray \\xff e-acute \u00e9 nel \\xc2\\x85 smile \U0001F600 quote \" back \\ end" in s, s' 2>$T/bytes/py.log
	then ok "fuserun list: no control byte reaches the terminal (C1 and stray bytes as \\xNN, UTF-8 kept)"
	else bad "fuserun list: no control byte reaches the terminal (C1 and stray bytes as \\xNN, UTF-8 kept)" "$(cat $T/bytes/py.log)"; fi
fi
expect "fuserun validate refuses a damaged artifact, without a GPU" 2 "artifact refused" -- \
	env FUSERUN_LIBCUDA=/nonexistent $FUSERUN validate $T/truncated_ptx/kl_divergence.manifest --size N=10

# 3. usage errors
expect "fuserun: no command" 2 "usage" -- $FUSERUN
expect "fuserun --help lists --version" 0 "fuserun --help | --version" -- $FUSERUN --help
expect "fuserun --help: a refused artifact is exit 2 for validate" 0 "2 a usage error, a refused" -- $FUSERUN --help
expect "fuserun: unknown command" 2 "unknown command" -- $FUSERUN frobnicate generated/relu.manifest
expect "fuserun: size not given" 2 "size N of kl_divergence not given" -- $FUSERUN validate kl_divergence
expect "fuserun: unknown size" 2 "has no size Q" -- $FUSERUN validate kl_divergence --size N=10 --size Q=3
expect "fuserun: malformed size" 2 "'N=ten' is not a number" -- $FUSERUN validate kl_divergence --size N=ten
expect "fuserun: bad reps" 2 "reps '0' is not a number from 1" -- $FUSERUN bench kl_divergence --size N=10 --reps 0
# strict numbers: nothing on the command line changes a value silently
expect "fuserun: a 20-digit size" 2 "not a number from 1 to 2^62" -- $FUSERUN validate kl_divergence --size N=99999999999999999999
expect "fuserun: a size given twice" 2 "size N given twice" -- $FUSERUN validate kl_divergence --size N=5,N=7
expect "fuserun: a size given twice in two options" 2 "size N given twice" -- $FUSERUN validate kl_divergence --size N=5 --size N=7
expect "fuserun: a negative size" 2 "not a number" -- $FUSERUN validate kl_divergence --size N=-5
expect "fuserun: a size with a suffix" 2 "not a number" -- $FUSERUN validate kl_divergence --size N=5k
expect "fuserun: --size ending in a comma" 2 "ends with a comma" -- $FUSERUN validate kl_divergence --size N=5,
expect "fuserun: --device 4294967296" 2 "device '4294967296' is not a number from 0 to 1023" -- $FUSERUN validate kl_divergence --size N=5 --device 4294967296
expect "fuserun: --reps 4294967297" 2 "reps '4294967297' is not a number" -- $FUSERUN bench kl_divergence --size N=5 --reps 4294967297
expect "fuserun: --seed beyond 64 bits" 2 "seed '18446744073709551616'" -- $FUSERUN validate kl_divergence --size N=5 --seed 18446744073709551616
expect "fuserun: --seed in hex" 2 "seed '0x10'" -- $FUSERUN validate kl_divergence --size N=5 --seed 0x10
expect "fuserun: --reps twice" 2 "reps given twice" -- $FUSERUN bench kl_divergence --size N=5 --reps 3 --reps 4
expect "fuserun: --reps without a value" 2 "reps needs a value" -- $FUSERUN bench kl_divergence --size N=5 --reps
expect "fuserun: a second artifact" 2 "a second artifact" -- $FUSERUN list kl_divergence relu
long=$(i=0; while [ $i -lt 30 ]; do printf 'ABCDEFGHIJKLMNOPQRSTUVWXY%02d=1,' $i; i=$((i + 1)); done)
expect "fuserun: a --size list past 511 bytes is read whole" 2 "has no size ZLAST" -- $FUSERUN validate kl_divergence --size "${long}N=5,ZLAST=1"

# 4. no driver: exit 2 and a message, for fuserun and the examples
for cmd in validate bench; do
	expect "fuserun $cmd without a driver" 2 "no usable GPU: cannot load the CUDA driver library /nonexistent" -- \
		env FUSERUN_LIBCUDA=/nonexistent $FUSERUN $cmd kl_divergence --size N=1000
done
expect "fuserun bench --devices without a driver" 2 "no usable GPU: 1 device from 0: cannot load the CUDA driver library /nonexistent" -- \
	env FUSERUN_LIBCUDA=/nonexistent $FUSERUN bench relu --size N=1000 --devices 2
expect "fuserun validate with a library that is no driver" 2 "lacks .* Driver API functions" -- \
	env FUSERUN_LIBCUDA="$NOCUDA" $FUSERUN validate relu --size N=10
expect "fuserun validate with no device" 2 "CUDA_ERROR_NO_DEVICE" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_DEVICES=0 $FUSERUN validate relu --size N=10
expect "fuserun validate on a device before 8.0" 2 "compute capability 7.5" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_CC=75 $FUSERUN validate relu --size N=10
for ex in active_inference spiking; do
	expect "$ex without a driver" 2 "no GPU to run on" -- env FUSERUN_LIBCUDA=/nonexistent bin/$ex
done

# 5. any artifact, anywhere, no rebuild: fuserun compiles its header and reference
U=$T/user
mkdir -p $U
cat > $U/user_axpy.fuse <<'EOF2'
# a user's own chain, outside specs/
fusion user_axpy(x: f32[N], y: f32[N], a: f32) -> (z: f32[N]) {
    stage s { z(i) = a * x(i) + y(i) }
}
EOF2
mkdir -p $U/tmp
if [ -x bin/fusec ] && bin/fusec -o $U/gen $U/user_axpy.fuse >$U/fusec.log 2>&1; then
	expect "fuserun list a user's artifact" 0 "fusion user_axpy, verified" -- $FUSERUN list $U/gen/user_axpy.manifest
	expect "fuserun validate a user's artifact (no rebuild; the fake runs no kernel)" 1 "z .*MISMATCH" -- \
		env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/gen/user_axpy.manifest --size N=1000 --seed 3
	expect "fuserun bench a user's artifact: % of the copy floor" 0 'fused  *[0-9][0-9]*  .*[0-9]%$' -- \
		env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/gen/user_axpy.manifest --size N=1000 --reps 3
	expect "fuserun validate without a C compiler" 2 "no C compiler: cannot run '/nonexistent/cc'" -- \
		env FUSERUN_LIBCUDA="$FAKE" FUSERUN_CC=/nonexistent/cc $FUSERUN validate $U/gen/user_axpy.manifest --size N=10
	cp $U/gen/user_axpy_ref.c $U/ref.keep
	printf 'garbage' >> $U/gen/user_axpy_ref.c
	expect "fuserun validate refuses a reference edited after generation" 2 "artifact refused" -- \
		env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/gen/user_axpy.manifest --size N=10
	cp $U/ref.keep $U/gen/user_axpy_ref.c
	[ -z "$(ls -A $U/tmp)" ] && ok "fuserun leaves no temporary folder" || bad "fuserun leaves no temporary folder" "$(ls -A $U/tmp)"
	# in-place outputs (role inout) and domains, as fusec writes them
	if bin/fusec -o $U/sgd tests/ref/lang/sgd_inplace.fuse >$U/fusec.log 2>&1; then
		expect "fuserun list shows inout parameters" 0 "w .*inout" -- $FUSERUN list $U/sgd/sgd_inplace.manifest
		expect "fuserun validate an in-place spec (the fake leaves w as it was uploaded)" 1 "w .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/sgd/sgd_inplace.manifest --size N=1000 --seed 3
	else
		bad "fusec compiles tests/ref/lang/sgd_inplace.fuse" "$(cat $U/fusec.log)"
	fi
	# derived dimensions, every form fusec writes: C/2, (C+1)/2, N-1, N/K
	cat > $U/derived.fuse <<'EOF2'
fusion dd_odd(X: f32[R,C]) -> (y: f32[R]) {
    stage evens            { p(r,c) = X(r, 2*c) }
    stage sums [reduction] { y(r) +=! p(r,c) }
}
fusion dd_diff(x: f32[N]) -> (y: f32) {
    stage d                { p(i) = x(i + 1) - x(i) }
    stage sums [reduction] { y +=! p(i) * p(i) }
}
fusion dd_blocks(x: f32[N], S: f32[K]) -> (y: f32) {
    stage d                { p(i, c) = x(i*K + c) * S(c) }
    stage sums [reduction] { y +=! p(i, c) }
}
EOF2
	if bin/fusec -o $U/dd $U/derived.fuse examples/newcomers/pair_sum.fuse >$U/fusec.log 2>&1; then
		for d in "pair_sum R,C/2" "dd_odd R,(C+1)/2" "dd_diff N-1" "dd_blocks N/K,K"; do
			n=${d% *} shape=${d#* }
			expect "fuserun list $n: a derived dimension $shape" 0 "p .*temp .*\\[$shape\\]" -- $FUSERUN list $U/dd/$n.manifest
		done
		# the fake runs no kernel: MISMATCH (exit 1) says the case was built, sized and run
		for sz in R=1,C=1 R=3,C=2 R=37,C=1001; do
			expect "fuserun validate pair_sum at $sz (temp R,C/2)" 1 "y .*MISMATCH" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/dd/pair_sum.manifest --size $sz --seed 5
		done
		expect "fuserun validate dd_diff at N=1 (temp N-1 of 0 elements)" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/dd/dd_diff.manifest --size N=1 --seed 5
		expect "fuserun validate dd_blocks at N=10,K=3 (temp N/K,K)" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/dd/dd_blocks.manifest --size N=10,K=3 --seed 5
		expect "fuserun validate dd_odd: sizes whose tensor passes 2^62 bytes" 2 "X: more than 2^62 bytes" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/dd/dd_odd.manifest --size R=1,C=4611686018427387904
		expect "fuserun bench pair_sum: % of the copy floor" 0 'fused  *[0-9][0-9]*  .*[0-9]%$' -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/dd/pair_sum.manifest --size R=5,C=9 --reps 3
	else
		bad "fusec compiles specs with derived dimensions" "$(cat $U/fusec.log)"
	fi
	# NaN: a NaN reference (log of inputs its domain makes negative) fails,
	# even against an output never written (NaN poison: the fake runs nothing)
	printf 'fusion nan_ref(x: f32[N] in [-2, -1]) -> (y: f32[N]) {\n    stage s { y(i) = log(x(i)) }\n}\n' > $U/nan_ref.fuse
	if bin/fusec -o $U/nan $U/nan_ref.fuse >$U/fusec.log 2>&1; then
		expect "fuserun validate: a NaN reference fails against a NaN (unwritten) output" 1 "y .*MISMATCH.*reference is NaN" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/nan/nan_ref.manifest --size N=100 --seed 3
		# the GPU validator (tests/gpu/validate.c) linked against the fake
		# driver: its comparison must fail both (it passed NaN against NaN)
		for v in "nan_ref $U/nan" "user_axpy $U/gen"; do
			n=${v% *} d=${v#* }
			if OPT=-O1 sh tests/gpu/build_driver.sh $n $d $U/v_$n -L$B -l:libfakecuda.so -Wl,-rpath,$(pwd)/$B >$U/cc.log 2>&1
			then expect "tests/gpu/validate.c fails $n's unwritten output" 1 "$n .*FAIL fused_err/tol=inf *unfused_err/tol=inf" -- $U/v_$n --dir $d N=100 --seed 3 --reps 1
			else bad "tests/gpu/validate.c builds for $n against the fake driver" "$(cat $U/cc.log)"; fi
		done
	else
		bad "fusec compiles nan_ref" "$(cat $U/fusec.log)"
	fi
	# integer division: a reference that traps is a refusal saying why, never
	# fuserun's crash (a divisor domain that holds 0; a literal / 0, which the
	# C compiler makes a trap)
	printf 'fusion idiv_dom(a: i32[N] in [0, 9], b: i32[N] in [0, 3]) -> (y: i32[N]) {\n    stage s { y(i) = a(i) / b(i) }\n}\n' > $U/idiv.fuse
	printf 'fusion idiv_zero(a: i32[N]) -> (y: i32[N]) {\n    stage s { y(i) = a(i) / 0 }\n}\n' >> $U/idiv.fuse
	if bin/fusec -o $U/idiv $U/idiv.fuse >$U/fusec.log 2>&1; then
		expect "fuserun validate: a divisor domain holding 0 (SIGFPE in the reference) is refused" 2 \
			"reference of idiv_dom failed: it crashed (SIGFPE: an integer division by zero" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/idiv/idiv_dom.manifest --size N=1000 --seed 3
		expect "fuserun validate: a division by the constant 0 (a trap in the reference) is refused" 2 \
			"idiv_zero.*crashed (SIG" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/idiv/idiv_zero.manifest --size N=10 --seed 3
	else
		bad "fusec compiles integer divisions" "$(cat $U/fusec.log)"
	fi
	# integer inputs without a domain: values the reference accepts, found
	# by trying ranges on it; never by the fusion's name (fuserun computed
	# spike_burst's CSR from sizes it looked up by name: S / N with N absent
	# was SIGFPE) and never 0..99 blindly (a bad gather into N = 50, a
	# division by zero at N = 1000)
	sed -e 's/\bN\b/M/g' -e 's/NP1/MP1/g' specs/spike_burst.fuse | grep -v '^pipeline' > $U/spike_burst.fuse
	sed -e 's/spike_burst(/lif_step(/' specs/spike_burst.fuse | grep -v '^pipeline' > $U/lif_step.fuse
	printf 'fusion idiv_free(a: i32[N], b: i32[N]) -> (y: i32[N]) {\n    stage s { y(i) = a(i) / b(i) }\n}\n' > $U/idiv_free.fuse
	if bin/fusec -o $U/sb $U/spike_burst.fuse >$U/fusec.log 2>&1 && bin/fusec -o $U/lif $U/lif_step.fuse >>$U/fusec.log 2>&1 &&
		bin/fusec -o $U/idiv $U/idiv_free.fuse >>$U/fusec.log 2>&1; then
		expect "fuserun validate: a fusion named spike_burst without a size N (was SIGFPE)" 1 "spikes .*MISMATCH (as a set)" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/sb/spike_burst.manifest --size M=1009,MP1=1010,S=10090,F=10
		expect "fuserun validate: spike_burst under another name (was a bad gather into N = 50)" 1 "spikes .*MISMATCH (as a set)" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/lif/lif_step.manifest --size N=50,NP1=51,S=500,F=5 --seed 3
		expect "fuserun validate: integer divisors without a domain get no 0 (was SIGFPE)" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/idiv/idiv_free.manifest --size N=1000 --seed 3
		expect "fuserun bench: integer divisors without a domain get no 0" 0 "speed-up over unfused" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/idiv/idiv_free.manifest --size N=1000 --reps 3
	else
		bad "fusec compiles specs with integer inputs without a domain" "$(cat $U/fusec.log)"
	fi
	# integer inputs from the manifest's values lines (fusec: what each must
	# hold): a shifted gather x(g(i) - 5) needs g in 5..N+4, which no range
	# the search tries (0..m-1, 1..m-1) holds; a divisor beside a gather
	# x(g(i) + 2) / d(i) gets d nonzero over all of i32 (no SIGFPE at N=1000)
	printf 'fusion gather_shift(g: i32[M], x: f32[N]) -> (y: f32[M]) {\n    stage s { y(i) = x(g(i) - 5) }\n}\n' > $U/vals.fuse
	printf 'fusion idiv_gather(g: i32[M], d: i32[M], x: i32[N] in [0, 9]) -> (y: i32[M]) {\n    stage s { y(i) = x(g(i) + 2) / d(i) }\n}\n' >> $U/vals.fuse
	if bin/fusec -o $U/vals $U/vals.fuse >$U/fusec.log 2>&1; then
		expect "fuserun list shows a values line" 0 "g .*by input  values 5..N+4" -- $FUSERUN list $U/vals/gather_shift.manifest
		expect "fuserun validate: a shifted gather x(g(i) - 5) from its values line (the search found none)" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/vals/gather_shift.manifest --size M=1000,N=7 --seed 3
		expect "fuserun bench: a shifted gather x(g(i) - 5) from its values line" 0 "speed-up over unfused" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/vals/gather_shift.manifest --size M=1000,N=7 --reps 3
		expect "fuserun validate: an integer divisor from its values line (nonzero), beside a gather, N=1000" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/vals/idiv_gather.manifest --size M=1000,N=1000 --seed 3
	else
		bad "fusec compiles specs whose integer inputs get values lines" "$(cat $U/fusec.log)"
	fi
	# a divisor is never drawn -1 while its line holds another value: the
	# most negative i32 divided by -1 overflows (SIGFPE in the reference; the
	# draw was refused, although d = 1 is valid): values d -1..1 nonzero
	printf 'fusion idiv_min(a: i32[N] in [-2147483648, -2147483648], d: i32[N], g: i32[3]) -> (y: i32[N]) {\n    stage s { y(i) = a(i) / d(i) + g(d(i) + 1) }\n}\n' > $U/imin.fuse
	if bin/fusec -o $U/imin $U/imin.fuse >$U/fusec.log 2>&1; then
		expect "fusec: a divisor subscripting g(d(i) + 1) of 3 gets values -1..1 nonzero" 0 "d .*values -1..1 nonzero" -- \
			$FUSERUN list $U/imin/idiv_min.manifest
		expect "fuserun validate: a divisor beside the most negative i32 is never -1 (was SIGFPE, refused)" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/imin/idiv_min.manifest --size N=1000 --seed 3
	else
		bad "fusec compiles a divisor beside the most negative i32" "$(cat $U/fusec.log)"
	fi
	# a gather domain past its dimension (0..99 into N = 4) is never launched
	# on: since issue 27 fusec writes `fits g N>=100` and the sizes are
	# refused before any input is drawn, by bench as by validate
	printf 'fusion gather_dom(g: i32[M] in [0, 99], x: f32[N]) -> (y: f32[M]) {\n    stage s { y(i) = x(g(i)) }\n}\n' > $U/gather_dom.fuse
	if bin/fusec -o $U/gd $U/gather_dom.fuse >$U/fusec.log 2>&1; then
		for cmd in validate "bench --reps 3"; do
			expect "fuserun ${cmd%% *} refuses sizes a gather's domain does not fit, launching nothing" 2 \
				"input g's domain 0..99 subscripts a dimension N, which must be at least 100: N is 4 at these sizes" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel $FUSERUN $cmd $U/gd/gather_dom.manifest --size M=100,N=4
		done
		expect "fuserun bench runs on a gather domain that fits its dimension" 0 "speed-up over unfused" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/gd/gather_dom.manifest --size M=100,N=100 --reps 3
	else
		bad "fusec compiles a gather with a domain" "$(cat $U/fusec.log)"
	fi
	# issue 27 (the spec fuzzer's seed 63417, reduced): malloc in [1, 5]
	# subscripts cos: f32[N], so N must be at least 6 (its fits line): N = 5
	# refused through the header's launchers and the recipe, nothing launched;
	# N = 6 launched (the fake runs no kernel: MISMATCH). A temp's derived
	# dimension too: h(g(i)) with h over (N+1)/2 and g in [0, 3] needs N >= 7.
	printf 'fusion fits_half(g: i32[M] in [0, 3], x: f32[N]) -> (y: f32[M]) {\n    stage a { h(j) = x(2*j) }\n    stage b { y(i) = h(g(i)) }\n}\n' > $U/fits_half.fuse
	if bin/fusec -o $U/fits tests/ref/lang/domain_gather.fuse $U/fits_half.fuse >$U/fusec.log 2>&1; then
		for how in "" "--recipe "; do
			expect "fuserun validate ${how}at N = 5: below malloc's domain 1..5 refused, nothing launched" 2 \
				"fuserun: input malloc's domain 1..5 subscripts a dimension N, which must be at least 6: N is 5 at these sizes" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel $FUSERUN validate $how$U/fits/domain_gather.manifest --size P=3,N=5
			expect "fuserun validate ${how}at N = 6: fits malloc's domain 1..5, launched" 1 "y .*MISMATCH" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $how$U/fits/domain_gather.manifest --size P=3,N=6
		done
		expect "fuserun bench refuses N = 5 for malloc's domain 1..5" 2 "which must be at least 6: N is 5" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel $FUSERUN bench $U/fits/domain_gather.manifest --size P=3,N=5 --reps 3
		expect "fuserun bench runs N = 6 for malloc's domain 1..5" 0 "speed-up over unfused" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench $U/fits/domain_gather.manifest --size P=3,N=6 --reps 3
		expect "fuserun validate: a derived dimension (N+1)/2 below g's domain refused" 2 \
			"input g's domain 0..3 subscripts a dimension (N+1)/2, which must be at least 4: (N+1)/2 is 3 at these sizes" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel $FUSERUN validate $U/fits/fits_half.manifest --size M=10,N=6
		expect "fuserun validate: (N+1)/2 = 4 fits g's domain, launched" 1 "y .*MISMATCH" -- \
			env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate $U/fits/fits_half.manifest --size M=10,N=7
		expect "fuserun list names the sizes a fits line asks for" 0 "  malloc needs N >= 6" -- $FUSERUN list $U/fits/domain_gather.manifest
		expect "fuserun list: a derived dimension's fits line" 0 "  g needs (N+1)/2 >= 4" -- $FUSERUN list $U/fits/fits_half.manifest
		expect "fuserun list --json: the fits lines" 0 '"fits": \[{"input": "g", "dim": "(N+1)/2", "least": 4}\]' -- $FUSERUN list --json $U/fits/fits_half.manifest
	else
		bad "fusec compiles specs whose inputs' domains subscript a dimension (fits lines)" "$(cat $U/fusec.log)"
	fi
	# domains the element type cannot hold (fusec refuses them since issue
	# 27: the manifests are edited and re-hashed here): refused by name and
	# range before anything else (no GPU needed), never drawn
	printf 'fusion dom_i32(x: i32[N] in [0, 3e9]) -> (y: i32[N]) {\n    stage s { y(i) = x(i) + 1 }\n}\n' > $U/dombad.fuse
	expect "fusec refuses an i32 domain past i32" 1 "is outside what i32 holds" -- bin/fusec --check $U/dombad.fuse
	printf 'fusion dom_i32(x: i32[N] in [0, 3]) -> (y: i32[N]) {\n    stage s { y(i) = x(i) + 1 }\n}\n' > $U/dom.fuse
	printf 'fusion dom_f16(x: f16[N] in [0, 1]) -> (y: f32[N]) {\n    stage s { y(i) = x(i) * 2.0 }\n}\n' >> $U/dom.fuse
	rehash() { # FILE FROM TO: a domain edited, the manifest's hash made again
		sed "s/domain=$2 /domain=$3 /; s/domain=$2\$/domain=$3/; /^manifest-sha256 /d" "$1" > "$1.tmp"
		printf 'manifest-sha256 %s\n' "$(sha256sum < "$1.tmp" | cut -c1-64)" >> "$1.tmp" && mv "$1.tmp" "$1"
	}
	if bin/fusec -o $U/dom $U/dom.fuse >$U/fusec.log 2>&1 && rehash $U/dom/dom_i32.manifest 0.0..3.0 0..3000000000 &&
	   rehash $U/dom/dom_f16.manifest 0.0..1.0 0..1000000; then
		for cmd in validate bench; do
			expect "fuserun $cmd refuses an i32 domain past i32, without a GPU" 2 \
				"fuserun: x: domain 0..3000000000 is outside i32 (-2147483648..2147483647)" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA=/nonexistent $FUSERUN $cmd $U/dom/dom_i32.manifest --size N=10
			expect "fuserun $cmd refuses an f16 domain past f16 (inputs would be infinite)" 2 \
				"fuserun: x: domain 0..1000000 is outside f16 (-65504..65504)" -- \
				env TMPDIR=$U/tmp FUSERUN_LIBCUDA="$FAKE" $FUSERUN $cmd $U/dom/dom_f16.manifest --size N=10
		done
	else
		bad "fusec compiles specs with domains past their types" "$(cat $U/fusec.log)"
	fi
	# a reader while fusec rewrites the artifact set (atomic writes): during a
	# byte-identical regeneration every read verifies; while the set changes
	# (a.fuse and b.fuse alternately), a read verifies one whole set (its spec
	# and PTX hash agree) or is refused with an integrity error, never a mix
	C=$U/conc
	mkdir -p $C/a $C/b
	printf 'fusion conc(x: f32[N]) -> (z: f32[N]) {\n    stage s { z(i) = x(i) * 2.0 }\n}\n' > $C/a/conc.fuse
	sed 's/2\.0/3.0/' $C/a/conc.fuse > $C/b/conc.fuse
	bin/fusec -o $C/ga $C/a/conc.fuse && bin/fusec -o $C/gb $C/b/conc.fuse && bin/fusec -o $C/gen $C/a/conc.fuse
	# a set as fuserun list shows it: the first 16 hex digits of each target's hash
	ha=$(sed -n 's/^target [^ ]* [^ ]* \([0-9a-f]\{16\}\).*$/\1/p' $C/ga/conc.manifest | tr '\n' ' ')
	hb=$(sed -n 's/^target [^ ]* [^ ]* \([0-9a-f]\{16\}\).*$/\1/p' $C/gb/conc.manifest | tr '\n' ' ')
	for phase in identical changing; do
		rm -f $C/done $C/wfail
		(
			i=0
			while [ $i -lt 6 ]; do
				bin/fusec -o $C/gen $C/a/conc.fuse || echo a >> $C/wfail
				[ $phase = changing ] && { bin/fusec -o $C/gen $C/b/conc.fuse || echo b >> $C/wfail; }
				i=$((i + 1))
			done
			: > $C/done
		) &
		reads=0 whole=0 refused=0 wrong=
		while [ ! -f $C/done ]; do
			out=$($FUSERUN list $C/gen/conc.manifest 2>&1)
			rc=$?
			reads=$((reads + 1))
			h=$(printf '%s\n' "$out" | sed -n 's/^  sm_[0-9a]* .*sha256 \([0-9a-f]*\)\.\.\.$/\1/p' | tr '\n' ' ')
			if [ $rc = 0 ] && { [ "$h" = "$ha" ] || { [ $phase = changing ] && [ "$h" = "$hb" ]; }; }; then whole=$((whole + 1))
			elif [ $rc = 1 ] && [ $phase = changing ] && printf '%s' "$out" | grep -q "truncated or edited"; then refused=$((refused + 1))
			else wrong="exit $rc: $out"; fi
		done
		wait
		if [ -z "$wrong" ] && [ ! -f $C/wfail ] && [ $whole -ge 2 ]; then ok "a reader during a $phase regeneration: $whole of $reads reads whole ($refused refused)"
		else bad "a reader during a $phase regeneration ($whole of $reads reads whole, $refused refused)" "$wrong$(cat $C/wfail 2>/dev/null)"; fi
	done
else
	bad "fusec compiles a user's spec for fuserun" "$(cat $U/fusec.log 2>/dev/null)"
fi

# 6. the fake driver runs no kernels: validate must see the poisoned outputs
expect "fuserun validate catches outputs never written" 1 "MISMATCH" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate kl_divergence --size N=1000 --seed 1
expect "fuserun validate catches an unwritten compacted list" 1 "spikes .*MISMATCH (as a set)" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate spike_burst --size N=1009,NP1=1010,S=10090,F=10
expect "fuserun validate --json" 1 '"ok": false' -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate softmax --size R=3,C=5 --json
# no contract by name (spike_burst's NP1 = N + 1): the runtime cannot know
# it, and finds inputs the reference accepts at any sizes
expect "fuserun validate spike_burst at NP1 = N: inputs its reference accepts" 1 "spikes .*MISMATCH (as a set)" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate spike_burst --size N=100,NP1=100,S=1000,F=10 --seed 3
# --recipe: the op lists from the manifest's launch recipe (what fz_call runs), no header
expect "fuserun validate --recipe runs both variants from the manifest" 1 "unfused  *kl  *f32.*MISMATCH" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN validate kl_divergence --size N=1000 --seed 1 --recipe
expect "fuserun bench --recipe: attention's entry point by head size, from the manifest" 0 "speed-up over unfused" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench attention --size B=2,T=64,D=64,S=64 --reps 3 --recipe
expect "fuserun bench --recipe refuses --devices" 2 "--recipe and --devices" -- $FUSERUN bench relu --size N=5 --recipe --devices 2
expect "fuserun list takes no --recipe" 2 "list takes no --recipe" -- $FUSERUN list relu --recipe
expect "fuserun bench runs both variants" 0 "speed-up over unfused" -- \
	env FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench spike_burst --size N=1009,NP1=1010,S=10090,F=10 --reps 100
if command -v python3 >/dev/null 2>&1; then
	if env FUSERUN_LIBCUDA="$FAKE" $FUSERUN bench gemv_axpby_sum --size M=64,N=32 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert 1 <= d["fused"]["launches"] <= d["unfused"]["launches"] and d["reps"] == 100 and d["warmups"] == 10
assert d["bytes"] == 4 * (64 * 32 + 32 + 64 + 64 + 1)' 2>/dev/null
	then ok "fuserun bench --json"; else bad "fuserun bench --json: not the JSON expected"; fi
fi
expect "fuserun reports a failing launch" 2 "cuLaunchKernel(op 0, relu_f0): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel $FUSERUN validate relu --size N=10
expect "a CUDA error by its name and text" 2 "cuLaunchKernel(op 0, relu_f0): CUDA_ERROR_INVALID_HANDLE: invalid resource handle" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel FAKECUDA_FAIL_CODE=400 $FUSERUN validate relu --size N=10
expect "a CUDA error the driver cannot name: its number" 2 "cuLaunchKernel(op 0, relu_f0): CUresult 12345: (no description)" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuLaunchKernel FAKECUDA_FAIL_CODE=12345 $FUSERUN validate relu --size N=10
expect "fuserun reports a failing JIT" 2 "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX" -- \
	env FUSERUN_LIBCUDA="$FAKE" FAKECUDA_FAIL=cuModuleLoadDataEx $FUSERUN bench relu --size N=10
# (kernels do not run on the fake: the counts are whatever the memory held, which spiking must catch or survive)
out=$(env FUSERUN_LIBCUDA="$FAKE" bin/spiking generated 2000 5 2>&1)
status=$?
if [ $status -le 1 ] && printf '%s' "$out" | grep -q "spiking network on Fake GPU" && printf '%s' "$out" | grep -q -e "^ok: " -e "out of range"
then ok "spiking runs its bursts through the library"; else bad "spiking runs its bursts through the library (exit $status)" "$out"; fi
expect "active_inference runs its chain through the library" 1 "did not decrease" -- \
	env FUSERUN_LIBCUDA="$FAKE" bin/active_inference generated 64 3

# 7. the library: no printing, exiting or aborting; libcuda not linked; only fz_* exported
if command -v nm >/dev/null 2>&1; then
	u=$(nm -u lib/libfuserun.a 2>/dev/null | awk '{print $NF}' | grep -E '^(exit|_exit|abort|printf|fprintf|vfprintf|puts|fputs|fputc|putchar|perror|fwrite|stderr|stdout|cu[A-Z].*)$' | sort -u | tr '\n' ' ')
	[ -z "$u" ] && ok "libfuserun.a calls no exit/abort/stdio output and links no cu* symbol" || bad "libfuserun.a uses: $u"
	x=$(nm -D --defined-only lib/libfuserun.so | awk '$2 == "T" || $2 == "D" || $2 == "B" {print $3}' | grep -v '^fz_' | tr '\n' ' ')
	[ -z "$x" ] && ok "libfuserun.so exports only fz_*" || bad "libfuserun.so also exports: $x"
fi
if command -v readelf >/dev/null 2>&1; then
	readelf -d lib/libfuserun.so bin/fuserun | grep NEEDED | grep -q libcuda && bad "libcuda is linked" || ok "libcuda is not linked, only loaded"
fi

echo "runtime: $pass passed, $fail failed"
[ $fail = 0 ]
