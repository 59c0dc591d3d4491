#!/bin/sh
# The group runtime's CPU tests (no GPU, no NCCL needed): test_group against
# a fake libcuda with several devices and a fake libnccl, sanitized. Run from
# the repository root after make check-runtime's prerequisites are built.
# Prints one line per check that fails (all with -v) and
# "mgpu: P passed, F failed"; exits 1 on failures.
B=${RT_BUILD:-build/rt}
T=$B/tmp-mgpu
VERBOSE=0
[ "$1" = -v ] && VERBOSE=1
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
unset FUSERUN_LIBCUDA FUSERUN_NCCL FAKECUDA_CC FAKECUDA_FAIL FAKECUDA_FAIL_AT FAKECUDA_DEVICES FAKECUDA_STUB \
	FAKENCCL_FAIL FAKENCCL_FAIL_AT FAKENCCL_LOST_AT FAKENCCL_VERSION

ok() { pass=$((pass + 1)); [ $VERBOSE = 1 ] && echo "PASS $1"; return 0; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | head -20 | sed 's/^/    /'; return 0; }

rm -rf "$T" && mkdir -p "$T"
out=$($B/test_group generated "$(pwd)/$B/libfakecuda.so" "$(pwd)/$B/libfakenccl.so" "$(pwd)/$B/libnocuda.so" "$T" 2>&1)
status=$?
p=$(printf '%s\n' "$out" | grep -c '^PASS')
f=$(printf '%s\n' "$out" | grep -c '^FAIL')
pass=$((pass + p)) fail=$((fail + f))
[ $VERBOSE = 1 ] && printf '%s\n' "$out" | grep '^PASS'
printf '%s\n' "$out" | grep '^FAIL'
if [ $status != 0 ] && [ $f = 0 ]; then bad "test_group exited $status (a sanitizer report?)" "$(printf '%s\n' "$out" | grep -v '^PASS' | tail -30)"; fi

# the real libnccl, where the toolkit has one: it loads and has every entry point
# (no GPU needed: only dlopen and ncclGetVersion)
real=$(ls /usr/local/cuda/lib64/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 2>/dev/null | head -1)
if [ -n "$real" ]; then
	out=$(FUSERUN_NCCL=$real FUSERUN_LIBCUDA=$(pwd)/$B/libfakecuda.so FAKECUDA_DEVICES=0 $B/test_group --load-nccl 2>&1)
	printf '%s' "$out" | grep -q "NCCL 2\." && ok "the toolkit's libnccl loads with every entry point" || bad "the toolkit's libnccl ($real) loads" "$out"
fi
rm -rf "$T"
echo "mgpu: $pass passed, $fail failed"
[ $fail = 0 ]
