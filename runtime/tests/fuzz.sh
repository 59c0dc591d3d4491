#!/bin/sh
# The manifest fuzzer (runtime/tests/fuzz_manifest.c) for a bounded time:
#   sh runtime/tests/fuzz.sh SECONDS [FUZZER] [extra libFuzzer options...]
# Seeds: every generated manifest without its hash line, behind a mode byte
# that repairs hashes and layout and runs validate (15) and one that does
# not (0). The corpus grows in build/rt/fuzz-corpus; a crash leaves its
# reproducer in build/rt/fuzz-artifacts/. Prints "manifest fuzz: N runs in
# Ss"; exits nonzero on any sanitizer or libFuzzer report.
secs=${1:-20}
fuzzer=${2:-build/rt/fuzz_manifest}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
corpus=build/rt/fuzz-corpus seeds=build/rt/fuzz-seeds
mkdir -p "$corpus" "$seeds" build/rt/fuzz-artifacts
for m in generated/*.manifest; do
	n=$(basename "$m" .manifest)
	{ printf '\017\052'; sed '$d' "$m"; } >"$seeds/$n.15"
	{ printf '\000\000'; cat "$m"; } >"$seeds/$n.0"
	{ printf '\017\003'; sed '$d' "$m" | sed 's/ by=input$/ by=input domain=0.5..2/'; } >"$seeds/$n.domain"
	# derived dimensions as fusec writes them ((N+1)/2, R,C/2; the dictionary has more): none of the shipped manifests has one
	{ printf '\017\004'; sed '$d' "$m" | sed -e 's/^\(temp [^ ]* temp [a-z0-9]*\) \([A-Z][A-Z0-9]*\) /\1 (\2+1)\/2 /' \
		-e 's/^\(temp [^ ]* temp [a-z0-9]*\) \([A-Z][A-Z0-9]*\),\([A-Z][A-Z0-9]*\) /\1 \2,\3\/2 /'; } >"$seeds/$n.derived"
	# fits lines (a dimension an input's domain reaches): the first i32 input given a
	# domain and a fits line over its first dimension, its values line dropped
	if grep -q '^param [^ ]* input i32 [^-]' "$m"; then
		{ printf '\017\005'; sed '$d' "$m" | awk '/^values /{next}
			/^param [^ ]* input i32 [^-]/ && !done {sub(/ by=input$/, " by=input domain=1.0..5.0"); print; split($5, d, ","); print "fits " $2 " " d[1] ">=6"; done=1; next}
			{print}'; } >"$seeds/$n.fits"
	fi
	# values lines (what an integer input holds): ranges at their edges, the flags
	if grep -q '^values ' "$m"; then
		{ printf '\017\052'; sed '$d' "$m" | sed -e 's/^values \([a-z_0-9]*\) .*nondecreasing$/values \1 -2..S nondecreasing nonzero/' \
			-e 's/^values \([a-z_0-9]*\) [^ ]*$/values \1 -2147483648..2147483647 nonzero/'; } >"$seeds/$n.values"
		{ printf '\017\053'; sed '$d' "$m" | sed -e 's/^values \([a-z_0-9]*\) 0\.\./values \1 N-3../'; } >"$seeds/$n.values2"
	fi
done
# inputs that found a defect once: run first, as seeds, every time
cp runtime/tests/fuzz-regress/* "$seeds"/ 2>/dev/null
log=build/rt/fuzz-manifest.log
# the fuzz folder on tmpfs when there is one: every execution writes a manifest
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && TMPDIR=/dev/shm && export TMPDIR
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=10 -close_fd_mask=3 \
	-dict=runtime/tests/fuzz_manifest.dict -artifact_prefix=build/rt/fuzz-artifacts/ "$@" "$corpus" "$seeds" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9][0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
echo "manifest fuzz: ${runs:-?} runs in ${secs}s (corpus of $(find "$corpus" -type f | wc -l) inputs)"
if [ $rc != 0 ] || [ -z "$runs" ]; then
	grep -A 30 -e 'ERROR: ' -e 'runtime error' "$log" | head -40
	tail -5 "$log"
	exit 1
fi
